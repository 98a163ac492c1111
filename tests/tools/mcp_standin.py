"""mcp_standin - a small MCP server (Streamable HTTP, revision 2025-06-18,
JSON answers) for the tool-node and agent cases; served by httpd.py under
/mcp (and /mcp-auth, which wants "Authorization: Bearer s3cret-token-42").

Its tools, listed four to a page (nextCursor):
  echo {text}                 the text back
  add {a: number, b: number}  "a+b=SUM"
  flags {flag: boolean, count: integer, label: string}
                              "flag=True count=3 label=x": shows the types it got
  json_obj                    text '{"k": 1, "s": "v"}' (a json entry)
  json_list                   text '[{"a": 1}, {"b": 2}]' (two json entries)
  image                       a 1x1 PNG (a file) and the text "an image"
  structured {x: integer}     structuredContent {"y": 2x}; declares outputSchema
  fail                        isError, text "the tool broke"
  slow {seconds: number}      answers after that long
  whoami                      the Authorization header it got
  flaky {token, fails}        isError for its first `fails` calls with token
  args                        the arguments it got, as JSON text

Under /mcp-dify it serves instead the answers Dify's own graph-engine tests
give tool nodes (their MockConfig), for Dify's fixtures as cases:
  mock_search {query}         "mocked search result"
  json_parse {json_string}    structuredContent {"result": the parsed JSON};
                              declares outputSchema
"""
import base64
import json
import threading
import time

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()

TOOLS = [
    {"name": "echo", "description": "Echo the text back",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "add", "description": "Add two numbers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                      "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "flags", "description": "Show the types of its arguments",
     "inputSchema": {"type": "object", "properties": {"flag": {"type": "boolean"},
                                                      "count": {"type": "integer"},
                                                      "label": {"type": "string"}}}},
    {"name": "json_obj", "description": "A JSON object as text",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "json_list", "description": "A JSON list of objects as text",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "image", "description": "A tiny image",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "structured", "description": "Doubles x",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}},
     "outputSchema": {"type": "object", "properties": {"y": {"type": "integer"}}}},
    {"name": "fail", "description": "Always fails",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "slow", "description": "Sleeps",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "whoami", "description": "The Authorization header it got",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "flaky", "description": "Fails its first `fails` calls per token",
     "inputSchema": {"type": "object", "properties": {"token": {"type": "string"},
                                                      "fails": {"type": "integer"}}}},
    {"name": "args", "description": "The arguments it got",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "string"},
                                                      "b": {"type": "string"}}}},
]
DIFY_TOOLS = [
    {"name": "mock_search", "description": "Dify's mocked search",
     "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
    {"name": "json_parse", "description": "Parses JSON text",
     "inputSchema": {"type": "object", "properties": {"json_string": {"type": "string"}},
                     "required": ["json_string"]},
     "outputSchema": {"type": "object", "properties": {"result": {"type": "object"}}}},
]
PAGE = 4
HITS = {}
LOCK = threading.Lock()


def text(t):
    return {"content": [{"type": "text", "text": t}]}


def call(name, args, headers):
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "add":
        if not all(isinstance(args.get(k), (int, float)) for k in ("a", "b")):
            raise ValueError("a and b must be numbers")
        s = args.get("a", 0) + args.get("b", 0)
        return text("%s+%s=%s" % (args.get("a"), args.get("b"), s))
    if name == "flags":
        return text("flag=%r count=%r label=%r" % (args.get("flag"), args.get("count"),
                                                 args.get("label")))
    if name == "json_obj":
        return text('{"k": 1, "s": "v"}')
    if name == "json_list":
        return text('[{"a": 1}, {"b": 2}]')
    if name == "image":
        return {"content": [{"type": "text", "text": "an image"},
                            {"type": "image", "data": PNG, "mimeType": "image/png"}]}
    if name == "structured":
        y = 2 * int(args.get("x", 0))
        return {"content": [{"type": "text", "text": json.dumps({"y": y})}],
                "structuredContent": {"y": y}}
    if name == "fail":
        return {"content": [{"type": "text", "text": "the tool broke"}], "isError": True}
    if name == "slow":
        time.sleep(float(args.get("seconds", 1)))
        return text("done")
    if name == "whoami":
        return text(headers.get("Authorization") or "(none)")
    if name == "args":
        return text(json.dumps(args, sort_keys=True))
    if name == "flaky":
        with LOCK:
            n = HITS[args.get("token", "")] = HITS.get(args.get("token", ""), 0) + 1
        if n <= int(args.get("fails", 0)):
            return {"content": [{"type": "text", "text": "not yet (%d)" % n}], "isError": True}
        return text("ok after %d" % n)
    return None


def call_dify(name, args):
    if name == "mock_search":
        return text("mocked search result")
    if name == "json_parse":
        if args.get("json_string") is None:
            raise ValueError("json_string is missing")
        try:
            v = json.loads(str(args["json_string"]))
        except ValueError as e:
            raise ValueError("json_string is not JSON: %s" % e)
        return {"content": [{"type": "text", "text": json.dumps({"result": v})}],
                "structuredContent": {"result": v}}
    return None


def handle(path, method, headers, body):
    """(status, content_type, body bytes, extra headers) for one request."""
    dify = path.startswith("/mcp-dify")
    tools = DIFY_TOOLS if dify else TOOLS
    if path.startswith("/mcp-auth"):
        if headers.get("Authorization") != "Bearer s3cret-token-42":
            return 401, "application/json", b'{"error": "unauthorized"}', []
    if method == "DELETE":
        return 200, "text/plain", b"", []
    if method != "POST":
        return 405, "text/plain", b"POST only", [("Allow", "POST, DELETE")]
    try:
        msg = json.loads(body or b"null")
    except ValueError:
        return 400, "application/json", json.dumps(
            {"jsonrpc": "2.0", "id": None,
             "error": {"code": -32700, "message": "parse error"}}).encode(), []
    if not isinstance(msg, dict) or "method" not in msg:
        return 400, "text/plain", b"not a JSON-RPC request", []
    if "id" not in msg:  # a notification
        return 202, "text/plain", b"", []
    rid, m, p = msg["id"], msg["method"], msg.get("params") or {}
    result, extra = None, []
    if m == "initialize":
        result = {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "sluice-test-standin", "version": "1.0"}}
        extra = [("Mcp-Session-Id", "standin-session-1")]
    elif m == "ping":
        result = {}
    elif m == "tools/list":
        start = int(p.get("cursor") or 0)
        result = {"tools": tools[start:start + PAGE]}
        if start + PAGE < len(tools):
            result["nextCursor"] = str(start + PAGE)
    elif m == "tools/call":
        try:
            args = p.get("arguments") or {}
            result = (call_dify(p.get("name"), args) if dify
                      else call(p.get("name"), args, headers))
        except ValueError as e:
            return 200, "application/json", json.dumps(
                {"jsonrpc": "2.0", "id": rid,
                 "error": {"code": -32602, "message": "invalid params: %s" % e}}).encode(), []
        if result is None:
            return 200, "application/json", json.dumps(
                {"jsonrpc": "2.0", "id": rid,
                 "error": {"code": -32602, "message": "unknown tool: %s" % p.get("name")}}
            ).encode(), []
    else:
        return 200, "application/json", json.dumps(
            {"jsonrpc": "2.0", "id": rid,
             "error": {"code": -32601, "message": "method not found: %s" % m}}).encode(), []
    return 200, "application/json", json.dumps(
        {"jsonrpc": "2.0", "id": rid, "result": result}).encode(), extra
