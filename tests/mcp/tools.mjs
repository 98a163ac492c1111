// The tools every test server offers, as plain MCP JSON, so that the
// servers built on both SDK generations (modern.mjs, legacy.mjs, stdio.mjs)
// answer alike and tests/unit/mcp.c can expect one set of results.
//
// call(name, args, ctx) returns a CallToolResult; ctx carries
//   signal    aborted when the client cancels
//   progress  async (n) => sends a progress notification (or nothing)
//   headers   the HTTP request's headers ({} on stdio)
//   seen      the server's record of what it observed (served at /_seen)

// A 1x1 PNG and a few bytes of "audio", sent as base64.
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex');
export const AUDIO = Buffer.from('RIFF-sluice-audio-bytes');

const obj = (props = {}, required = []) => ({ type: 'object', properties: props, required });

export const TOOLS = [
  { name: 'echo', description: 'Echoes text', inputSchema: obj({ text: { type: 'string' } }) },
  {
    name: 'args',
    description: 'Returns the arguments it got, as JSON text',
    inputSchema: obj({ a: { type: 'string' }, b: {}, n: { type: 'integer' } }),
  },
  { name: 'json_list', description: 'A JSON list of objects as text', inputSchema: obj() },
  { name: 'mixed_list', description: 'A JSON list of mixed values as text', inputSchema: obj() },
  { name: 'media', description: 'An image and an audio clip', inputSchema: obj() },
  { name: 'resources', description: 'Embedded resources and a link', inputSchema: obj() },
  {
    name: 'weather',
    description: 'Structured output with a declared schema',
    inputSchema: obj({ city: { type: 'string' } }),
    outputSchema: obj({ temp: { type: 'number' }, unit: { type: 'string' } }, ['temp', 'unit']),
  },
  {
    name: 'weather_plain',
    description: 'Structured output without a declared schema',
    inputSchema: obj(),
  },
  { name: 'fail', description: 'Answers with isError', inputSchema: obj() },
  { name: 'sleep', description: 'Sleeps ms milliseconds', inputSchema: obj({ ms: { type: 'integer' } }) },
  { name: 'progress', description: 'Reports progress, then answers', inputSchema: obj() },
  { name: 'big', description: 'Answers with `bytes` bytes of text', inputSchema: obj({ bytes: { type: 'integer' } }) },
  { name: 'whoami', description: 'Tells the Authorization header it got', inputSchema: obj() },
  { name: 'crash', description: 'Kills the server mid-call', inputSchema: obj() },
  {
    name: 'region',
    description: 'A parameter mirrored into a header (2026-07-28 x-mcp-header)',
    inputSchema: obj({ region: { type: 'string', 'x-mcp-header': 'Region' }, q: { type: 'string' } }),
  },
];

// Mirrored headers on a number parameter break the spec's rules: a
// 2026-07-28 HTTP client must leave this tool out of its list.
export const BAD_HEADER_TOOL = {
  name: 'bad_header',
  description: 'An x-mcp-header on a number',
  inputSchema: obj({ x: { type: 'number', 'x-mcp-header': 'X' } }),
};

// Filler tools for pagination tests.
export function filler(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push({ name: `filler_${i}`, description: `filler ${i}`, inputSchema: obj() });
  return out;
}

const text = (t) => ({ content: [{ type: 'text', text: t }] });

export async function call(name, args, ctx) {
  args = args || {};
  switch (name) {
    case 'echo':
      return text(`echo: ${args.text ?? ''}`);
    case 'args':
      return text(JSON.stringify(args));
    case 'json_list':
      return text(' [{"a": 1}, {"b": [2, 3]}] ');
    case 'mixed_list':
      return text('[1, "two", {"three": 3}, null, true, 1.5]');
    case 'media':
      return {
        content: [
          { type: 'text', text: 'a picture' },
          { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' },
          { type: 'audio', data: AUDIO.toString('base64'), mimeType: 'audio/wav' },
        ],
      };
    case 'resources':
      return {
        content: [
          { type: 'resource', resource: { uri: 'file:///notes/readme.txt', mimeType: 'text/plain', text: 'resource text' } },
          { type: 'resource', resource: { uri: 'file:///data/blob.bin', mimeType: 'application/x-demo', blob: Buffer.from('blob bytes').toString('base64') } },
          { type: 'resource_link', uri: 'file:///elsewhere', name: 'elsewhere' },
        ],
      };
    case 'weather':
    case 'weather_plain':
      return { content: [{ type: 'text', text: 'Sunny, 21 C' }], structuredContent: { temp: 21, unit: 'C' } };
    case 'fail':
      return { content: [{ type: 'text', text: 'it broke: no such city' }], isError: true };
    case 'sleep': {
      const ms = args.ms ?? 10000;
      await new Promise((resolve) => {
        const t = setTimeout(resolve, ms);
        ctx.signal?.addEventListener('abort', () => {
          clearTimeout(t);
          ctx.seen.aborted.push(ms);
          resolve();
        });
      });
      return text(`slept ${ms} ms`);
    }
    case 'progress':
      for (let i = 1; i <= 3; i++) {
        await ctx.progress(i);
        await new Promise((r) => setTimeout(r, 5));
      }
      return text('done after progress');
    case 'big':
      return text('x'.repeat(args.bytes ?? 1000));
    case 'whoami':
      return text(`you sent ${ctx.headers.authorization ?? 'nothing'}`);
    case 'crash':
      setTimeout(() => process.exit(3), 20);
      return new Promise(() => {});
    case 'region':
      ctx.seen.region_header = ctx.headers['mcp-param-region'] ?? null;
      return text(`region ${args.region ?? '-'}`);
    default:
      throw Object.assign(new Error(`Unknown tool: ${name}`), { code: -32602 });
  }
}

// --port N (0: any free one) and --port-file F (the port is written there
// once the server listens), as tests/unit/mcp.c starts servers.
export function portArgs(argv = process.argv.slice(2)) {
  const o = { port: 0, portFile: null, flags: new Set(), values: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') o.port = Number(argv[++i]);
    else if (a === '--port-file') o.portFile = argv[++i];
    else if (a.startsWith('--') && a.includes('=')) o.values[a.slice(2, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
    else if (a.startsWith('--')) o.flags.add(a.slice(2));
  }
  return o;
}

export async function listen(server, opts) {
  const fs = await import('node:fs');
  await new Promise((resolve) => server.listen(opts.port, '127.0.0.1', resolve));
  const port = server.address().port;
  if (opts.portFile) {
    fs.writeFileSync(opts.portFile + '.tmp', String(port));
    fs.renameSync(opts.portFile + '.tmp', opts.portFile);
  }
  process.on('SIGTERM', () => process.exit(0));
  return port;
}

export function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function newSeen() {
  return { aborted: [], cancelled: [], initialize: 0, deleted: 0, discover: 0, methods: [], region_header: null, protocol_headers: [] };
}
