// An MCP server at revision 2026-07-28 (stateless), built on
// @modelcontextprotocol/server 2.x, for tests/unit/mcp.c and the bench.
//
//   node modern.mjs --port 0 --port-file F [--page-size=N] [--fillers=N]
//                   [--sse] [--reject-legacy]
//
//   POST /mcp     the MCP endpoint (createMcpHandler)
//   POST /echo    a bare JSON echo, the bench's yardstick
//   GET  /_seen   what the server observed (cancellations, headers)
import http from 'node:http';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { TOOLS, BAD_HEADER_TOOL, filler, call, portArgs, listen, readBody, newSeen } from './tools.mjs';

const opts = portArgs();
const pageSize = Number(opts.values['page-size'] ?? 0);
const all = [...TOOLS, BAD_HEADER_TOOL, ...filler(Number(opts.values.fillers ?? 0))];
const seen = newSeen();

function makeServer(request) {
  const server = new Server({ name: 'sluice-test-modern', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async (req) => {
    const start = Number(req.params?.cursor ?? 0);
    const n = pageSize > 0 ? pageSize : all.length;
    const page = all.slice(start, start + n);
    const next = start + n < all.length ? String(start + n) : undefined;
    return next ? { tools: page, nextCursor: next } : { tools: page };
  });
  server.setRequestHandler('tools/call', async (req, ctx) => {
    const headers = Object.fromEntries(request?.headers ?? []);
    seen.protocol_headers.push(headers['mcp-protocol-version'] ?? null);
    seen.methods.push(`${headers['mcp-method']}:${headers['mcp-name']}`);
    const token = req.params?._meta?.progressToken;
    return call(req.params.name, req.params.arguments, {
      signal: ctx.mcpReq.signal,
      headers,
      seen,
      progress: async (i) => {
        if (token !== undefined)
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } });
      },
    });
  });
  return server;
}

const handler = createMcpHandler((ctx) => makeServer(ctx.requestInfo), {
  legacy: opts.flags.has('reject-legacy') ? 'reject' : 'stateless',
  responseMode: opts.flags.has('sse') ? 'sse' : 'auto',
  onerror: () => {},
});

const srv = http.createServer(async (req, res) => {
  try {
    if (req.url === '/_seen') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(seen));
    }
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (req.url === '/echo') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(body);
    }
    if (body && body.includes('"server/discover"')) seen.discover++;
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers,
      body,
      signal: ac.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) {
        if (res.destroyed) break;
        res.write(chunk);
      }
    }
    res.end();
  } catch (e) {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
srv.keepAliveTimeout = 60000;
await listen(srv, opts);
