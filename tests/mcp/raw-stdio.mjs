// A hand-written 2026-07-28 stdio server with no SDK, one tool `t`, for
// bench/mcp_bench.c; with --echo it is the bench's yardstick instead: each
// line back as it came, read and written the same way.
import readline from 'node:readline';

const echo = process.argv.includes('--echo');
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const result = (id, r) => ({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...r } });

rl.on('line', (line) => {
  if (echo) return process.stdout.write(line + '\n');
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  if (msg.method === 'server/discover') return out(result(msg.id, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } }));
  if (msg.method === 'tools/list')
    return out(result(msg.id, { tools: [{ name: 't', description: 'echo', inputSchema: { type: 'object' } }] }));
  if (msg.method === 'tools/call')
    return out(result(msg.id, { content: [{ type: 'text', text: msg.params?.arguments?.text ?? '' }] }));
  out({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
});
rl.on('close', () => process.exit(0));
