#!/usr/bin/env python3
"""openapi_standin - a small REST API for sluice's OpenAPI tools, served by
httpd.py under /api/... (or alone: openapi_standin.py --port 0 --port-file F).

  /api/spec/NAME          the document tests/tools/openapi/NAME (its servers
                          are relative: /api/v1, resolved against this URL)
  /api/v1/echo/...        JSON: the method, path, query, the headers
                          authorization, x-api-key, x-trace, cookie and
                          content-type, and the body (JSON, form fields or text)
  /api/v1/list            a JSON list: [{"a": 1}, {"b": 2}, 3]
  /api/v1/text            text/plain "plain words"
  /api/v1/image           a 1x1 PNG, as an attachment named dot.png
  /api/v1/status/CODE     that status; the body names the Authorization it got
  /api/v1/huge            12 MiB of text
  /api/v1/redirect        302 to http://10.1.2.3/private
  /api/v1/slow/SECONDS    answers after that long
"""
import argparse
import base64
import json
import os
import threading
import time
import urllib.parse
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAaJPXQAAAABJRU5ErkJggg==")


def parse_body(ctype, body):
    if not body:
        return None
    if ctype.startswith("application/json"):
        return json.loads(body)
    if ctype.startswith("application/x-www-form-urlencoded"):
        return {k: v[0] if len(v) == 1 else v
                for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
    if ctype.startswith("multipart/form-data"):
        msg = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        out = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True)
            if part.get_filename() is None:
                val = data.decode()
            else:  # a file part: what arrived, its first bytes in hex
                val = {"filename": part.get_filename(), "type": part.get_content_type(),
                       "size": len(data), "head": data[:8].hex()}
            if name in out:  # a name given more than once: the values in a list
                out[name] = (out[name] if isinstance(out[name], list) else [out[name]]) + [val]
            else:
                out[name] = val
        return {"multipart": out}
    return body.decode("utf-8", "replace")


def handle(path, method, headers, body):
    """(status, content type, body bytes, extra headers) for one request."""
    url = urllib.parse.urlsplit(path)
    parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
    rest = parts[1:]  # after "api"
    if rest[:1] == ["spec"] and len(rest) == 2 and "/" not in rest[1] and rest[1] != "..":
        try:
            with open(os.path.join(HERE, "openapi", rest[1]), "rb") as f:
                data = f.read()
        except OSError:
            return 404, "text/plain", b"no such spec", []
        ctype = "application/json" if rest[1].endswith(".json") else "application/yaml"
        return 200, ctype, data, []
    if rest[:1] != ["v1"]:
        return 404, "text/plain", b"not here", []
    what = rest[1] if len(rest) > 1 else ""
    if what == "echo":
        q = {k: v[0] if len(v) == 1 else v
             for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        hs = {h: headers.get(h) for h in ("authorization", "x-api-key", "x-trace", "cookie",
                                          "content-type") if headers.get(h) is not None}
        out = {"method": method, "path": url.path, "query": q, "headers": hs,
               "body": parse_body(headers.get("content-type", ""), body)}
        return 200, "application/json", json.dumps(out, sort_keys=True).encode(), []
    if what == "list":
        return 200, "application/json", b'[{"a": 1}, {"b": 2}, 3]', []
    if what == "text":
        return 200, "text/plain; charset=utf-8", b"plain words", []
    if what == "image":
        return 200, "image/png", PNG, [("Content-Disposition", 'attachment; filename="dot.png"')]
    if what == "status" and len(rest) > 2:
        code = int(rest[2])
        return code, "text/plain", ("went wrong, auth was %s" %
                                    headers.get("authorization", "none")).encode(), []
    if what == "huge":
        return 200, "text/plain", b"a" * (12 << 20), []
    if what == "redirect":
        return 302, "text/plain", b"", [("Location", "http://10.1.2.3/private")]
    if what == "slow" and len(rest) > 2:
        time.sleep(float(rest[2]))
        return 200, "text/plain", b"late", []
    return 404, "text/plain", b"no such endpoint", []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        status, ctype, out, extra = handle(self.path, self.command, self.headers, body)
        self.send_response_only(status)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(out)
            except OSError:
                pass

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % server.server_address[1])
        os.rename(tmp, a.port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
