// An MCP stdio server (newline-delimited JSON-RPC on stdin/stdout), run
// inside a sandbox by tests/unit/mcp.c and bench/mcp_bench.c:
//
//   node stdio.mjs            @modelcontextprotocol/server 2.x serveStdio:
//                             2026-07-28, and 2025 after an initialize
//   node stdio.mjs --v1       @modelcontextprotocol/sdk 1.x (initialize only)
//   node stdio.mjs --echo     no MCP: each line back as it came (the bench's
//                             yardstick for a pipe round trip)
//
// What it observes (cancellations) is written to seen.json in its working
// folder (the sandbox's workspace), where the test reads it.
import fs from 'node:fs';
import { TOOLS, call, newSeen } from './tools.mjs';

const v1 = process.argv.includes('--v1');
const seen = newSeen();
const report = () => fs.writeFileSync('seen.json', JSON.stringify(seen));

if (process.argv.includes('--echo')) {
  process.stdin.pipe(process.stdout);
} else if (v1) {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { ListToolsRequestSchema, CallToolRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const server = new Server({ name: 'sluice-test-stdio-v1', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    extra.signal.addEventListener('abort', () => setImmediate(report));
    const r = await call(req.params.name, req.params.arguments, { signal: extra.signal, headers: {}, seen, progress: async () => {} });
    report();
    return r;
  });
  await server.connect(new StdioServerTransport());
} else {
  const { Server } = await import('@modelcontextprotocol/server');
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  serveStdio(() => {
    const server = new Server({ name: 'sluice-test-stdio', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }));
    server.setRequestHandler('tools/call', async (req, ctx) => {
      const signal = ctx.mcpReq.signal;
      signal.addEventListener('abort', () => setImmediate(report));
      const r = await call(req.params.name, req.params.arguments, { signal, headers: {}, seen, progress: async () => {} });
      report();
      return r;
    });
    return server;
  });
}
