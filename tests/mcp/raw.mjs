// A hand-written 2026-07-28 server with no SDK, which behaves or lies as
// its URL asks, for tests/unit/mcp.c (and the bench's lean peer):
//
//   POST /MODE/mcp    server/discover and tools/list answer properly; then
//                     tools/call (or tools/list) does what MODE says
//   POST /echo        a bare JSON echo
//   GET  /MODE/sse    the 2024-11-05 transport's stream, for the endpoint tests
//
// MODE: ok, badjson, wrongid, huge, hang, die, errecho, loop, endless,
// many, nolist, redirect, other-origin (GET /other-origin/sse).
import http from 'node:http';
import { portArgs, listen, readBody } from './tools.mjs';

const opts = portArgs();
const TOOL = { name: 't', description: 'the only tool', inputSchema: { type: 'object', properties: {} } };

function send(res, obj, status = 200) {
  const body = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
const result = (id, r) => ({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...r } });

function onList(mode, msg, res) {
  const cursor = Number(msg.params?.cursor ?? 0);
  if (mode === 'loop') return send(res, result(msg.id, { tools: [{ ...TOOL, name: `t${cursor}` }], nextCursor: String((cursor + 1) % 3) }));
  if (mode === 'endless') return send(res, result(msg.id, { tools: [], nextCursor: String(cursor + 1) }));
  if (mode === 'many') {
    const tools = [];
    for (let i = 0; i < 1500; i++) tools.push({ ...TOOL, name: `t${i}` });
    return send(res, result(msg.id, { tools }));
  }
  if (mode === 'nolist') return send(res, result(msg.id, { nope: [] }));
  return send(res, result(msg.id, { tools: [TOOL] }));
}

function onCall(mode, msg, req, res) {
  switch (mode) {
    case 'badjson':
      return send(res, '{"jsonrpc": "2.0", "id": ' + msg.id + ', "result": {');
    case 'wrongid':
      return send(res, result(msg.id + 1000, { content: [{ type: 'text', text: 'not yours' }] }));
    case 'huge': {
      // streamed, so the client's cap stops it long before the end
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${msg.id},"result":{"content":[{"type":"text","text":"`);
      const chunk = 'y'.repeat(1 << 16);
      let sent = 0;
      const more = () => {
        while (sent < 64 << 20) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        res.end('"}]}}');
      };
      res.on('error', () => {});
      return more();
    }
    case 'hang':
      return; // never answers
    case 'die':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      setTimeout(() => process.exit(3), 30);
      return;
    case 'errecho':
      return send(res, { jsonrpc: '2.0', id: msg.id, error: { code: -32603, message: `bad token ${req.headers.authorization} \u001b[31mred` } });
    case 'redirect':
      res.writeHead(307, { location: 'http://127.0.0.1:9/elsewhere' });
      return res.end();
    case 'sse-junk':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {this is not json\n\n');
      res.write('event: message\ndata: {"jsonrpc":"2.0","id":999999,"result":{}}\n\n');
      res.write('event: message\ndata: {"jsonrpc":"2.0","id":"x1","method":"sampling/createMessage","params":{}}\n\n');
      return res.end(`event: message\ndata: ${JSON.stringify(result(msg.id, { content: [{ type: 'text', text: 'after junk' }] }))}\n\n`);
    default:
      return send(res, result(msg.id, { content: [{ type: 'text', text: 'ok' }] }));
  }
}

const srv = http.createServer(async (req, res) => {
  const parts = req.url.split('/');
  const mode = parts[1];
  if (req.url === '/echo') {
    const body = await readBody(req);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    return res.end(body);
  }
  if (req.method === 'GET' && parts[2] === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const port = srv.address().port;
    const ep = mode === 'other-origin' ? `http://127.0.0.2:${port}/messages` : '/messages';
    return res.write(`event: endpoint\ndata: ${ep}\n\n`);
  }
  if (req.method !== 'POST' || parts[2] !== 'mcp') {
    res.writeHead(404);
    return res.end();
  }
  const body = await readBody(req);
  let msg;
  try {
    msg = JSON.parse(body);
  } catch {
    return send(res, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }, 400);
  }
  if (msg.id === undefined) {
    res.writeHead(202);
    return res.end();
  }
  if (msg.method === 'server/discover')
    return send(res, result(msg.id, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } }));
  if (msg.method === 'tools/list') return onList(mode, msg, res);
  if (msg.method === 'tools/call') return onCall(mode, msg, req, res);
  return send(res, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }, 404);
});
srv.keepAliveTimeout = 60000;
await listen(srv, opts);
