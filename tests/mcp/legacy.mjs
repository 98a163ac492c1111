// MCP servers of the initialize era, built on @modelcontextprotocol/sdk 1.x:
// Streamable HTTP with sessions (2025-11-25 and older) and the 2024-11-05
// HTTP+SSE transport, for tests/unit/mcp.c.
//
//   node legacy.mjs --port 0 --port-file F [--stateless] [--json]
//                   [--version=2025-03-26]
//
//   /mcp              Streamable HTTP (sessions unless --stateless)
//   GET /sse          the old transport's event stream (also at /events, a
//                     path that names no transport); POST /messages
//   GET /_seen        what the server observed (cancellations, sessions)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { ListToolsRequestSchema, CallToolRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS, filler, call, portArgs, listen, readBody, newSeen } from './tools.mjs';

const opts = portArgs();
const seen = newSeen();
const all = [...TOOLS, ...filler(Number(opts.values.fillers ?? 0))];
const pageSize = Number(opts.values['page-size'] ?? 0);
const onlyVersion = opts.values.version;

function makeServer() {
  const server = new Server({ name: 'sluice-test-legacy', version: '1.0.0' }, { capabilities: { tools: {} } });
  if (onlyVersion) {
    // answer initialize with one older version, whatever the client asks
    const orig = server._oninitialize.bind(server);
    server._oninitialize = async (req) => ({ ...(await orig(req)), protocolVersion: onlyVersion });
  }
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const start = Number(req.params?.cursor ?? 0);
    const n = pageSize > 0 ? pageSize : all.length;
    const next = start + n < all.length ? String(start + n) : undefined;
    return next ? { tools: all.slice(start, start + n), nextCursor: next } : { tools: all.slice(start, start + n) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const headers = extra.requestInfo?.headers ?? {};
    seen.protocol_headers.push(headers['mcp-protocol-version'] ?? null);
    const token = req.params?._meta?.progressToken;
    try {
      return await call(req.params.name, req.params.arguments, {
        signal: extra.signal,
        headers,
        seen,
        progress: async (i) => {
          if (token !== undefined)
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3 } });
        },
      });
    } catch (e) {
      throw new McpError(e.code ?? -32603, e.message);
    }
  });
  return server;
}

const sessions = new Map();   // Mcp-Session-Id -> transport
const sse = new Map();        // old transport: sessionId -> transport

function note(body) {
  try {
    const msg = JSON.parse(body);
    if (msg.method === 'notifications/cancelled') seen.cancelled.push(msg.params?.requestId);
    if (msg.method === 'initialize') seen.initialize++;
    if (msg.method) seen.methods.push(msg.method);
    return msg;
  } catch {
    return undefined;
  }
}

const srv = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (url.pathname === '/_seen') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ ...seen, sessions: sessions.size }));
    }
    if ((url.pathname === '/sse' || url.pathname === '/events') && req.method === 'GET') {
      const t = new SSEServerTransport('/messages', res);
      sse.set(t.sessionId, t);
      res.on('close', () => sse.delete(t.sessionId));
      await makeServer().connect(t);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const t = sse.get(url.searchParams.get('sessionId'));
      const text = await readBody(req);
      const body = note(text);
      if (!t) {
        res.writeHead(404);
        return res.end('no such session');
      }
      return await t.handlePostMessage(req, res, body);
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404);
      return res.end('not found');
    }
    const text = req.method === 'POST' ? await readBody(req) : '';
    const body = text ? note(text) : undefined;
    if (req.method === 'DELETE') seen.deleted++;
    if (opts.flags.has('stateless')) {
      if (req.method !== 'POST') {
        res.writeHead(405);
        return res.end();
      }
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opts.flags.has('json') });
      await makeServer().connect(t);
      return await t.handleRequest(req, res, body);
    }
    const sid = req.headers['mcp-session-id'];
    let t = sid ? sessions.get(sid) : undefined;
    if (!t && !sid && body?.method === 'initialize') {
      t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: opts.flags.has('json'),
        onsessioninitialized: (id) => sessions.set(id, t),
      });
      t.onclose = () => t.sessionId && sessions.delete(t.sessionId);
      await makeServer().connect(t);
    }
    if (!t) {
      const lost = Boolean(sid);
      res.writeHead(lost ? 404 : 400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: lost ? -32001 : -32000, message: lost ? 'Session not found' : 'Bad Request: No valid session ID provided' } }));
    }
    await t.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
await listen(srv, opts);
