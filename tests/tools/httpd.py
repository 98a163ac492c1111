#!/usr/bin/env python3
"""httpd - the HTTP server the http-request cases talk to.

usage: httpd.py [PORT]      (0 or nothing: a free port)

Listens on 127.0.0.1 and prints the port as the first line on stdout, then
writes nothing more there (the case runner stops reading).  It exits when
its stdin closes or on SIGTERM/SIGINT, so no server outlives its runner.

Responses are small and deterministic: no Date or Server headers, so a
case can compare the whole `headers` output.  Every endpoint answers every
method (HEAD gets the headers only).

  /method                 the request method
  /header/NAME            the value of request header NAME ("(absent)")
  /headers/A,B            "a: value" lines for the named request headers
  /query                  the raw query string
  /body                   the raw request body; X-Content-Type and
                          X-Content-Length echo the request's headers
  /form                   urlencoded or multipart fields as lines
                          "name=value" / "name=@filename;type;size;content"
  /status/CODE            that status, body "status CODE"
  /delay/SECONDS          answers after SECONDS
  /drip/N/SECONDS         N bytes, one every SECONDS
  /redirect/N             redirects N times (302) then says "redirected"
  /redirect-to?url=U&status=S   one redirect to U with status S (302)
  /bytes/N?type=T         N bytes of "a" with Content-Type T (text/plain)
  /file/NAME?type=T       "FILEDATA" as an attachment named NAME
  /inline?type=T&body=B   B (default "BINARYDATA") with Content-Type T and
                          no Content-Disposition
  /basic-auth/USER/PASS   200 "ok USER" with matching basic auth, else 401
  /bearer/TOKEN           200 with "Authorization: Bearer TOKEN", else 401
  /flaky/N/TOKEN          500 for the first N calls with TOKEN, then 200
  /hits/TOKEN             how many calls /flaky/*/TOKEN got
  /set-headers?k=v&k=v2   a response with those headers (repeats repeat)
  /latin1                 "café" in ISO-8859-1, charset declared
  /gzip                   "hello gzip" gzip-encoded
  /json                   a JSON object, application/json
  /mcp, /mcp-auth         an MCP server (tests/tools/mcp_standin.py)
  /mcp-dify               its tools as Dify's tests mock them
  /api/...                a REST API and its OpenAPI documents
                          (tests/tools/openapi_standin.py)
  /vendor/...             the APIs of Tavily, Jina and Firecrawl
                          (tests/tools/vendor_standin.py)
  /searxng, /ddg, /wikipedia, /arxiv   the search vendors' APIs
                          (tests/tools/search_standin.py)
  /https-port             the port of an HTTPS twin of this server (same
                          endpoints, self-signed certificate for
                          127.0.0.1), started on first use; needs openssl
"""
import base64
import gzip
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_standin  # noqa: E402
import openapi_standin  # noqa: E402
import vendor_standin  # noqa: E402
import search_standin  # noqa: E402

HITS = {}
HITS_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # stdout belongs to the runner
        pass

    def send_response(self, code, message=None):
        # No Server or Date header: outputs stay deterministic.
        self.send_response_only(code, message)

    def reply(self, status=200, body=b"", ctype="text/plain", headers=()):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        body = self.read_body()
        name = parts[0] if parts else ""
        arg = parts[1] if len(parts) > 1 else ""

        if name in ("mcp", "mcp-auth", "mcp-dify"):
            status, ctype, out, extra = mcp_standin.handle(url.path, self.command,
                                                           self.headers, body)
            self.reply(status, out, ctype, extra)
        elif name == "api":
            status, ctype, out, extra = openapi_standin.handle(self.path, self.command,
                                                               self.headers, body)
            self.reply(status, out, ctype, extra)
        elif name == "vendor":
            status, ctype, out, extra = vendor_standin.handle(self.path, self.command,
                                                              self.headers, body)
            self.reply(status, out, ctype, extra)
        elif name in search_standin.PREFIXES:
            status, ctype, out, extra = search_standin.handle(self.path, self.command,
                                                              self.headers, body)
            self.reply(status, out, ctype, extra)
        elif name == "method":
            self.reply(body=self.command, headers=[("X-Method", self.command)])
        elif name == "header":
            self.reply(body=self.headers.get(arg, "(absent)"))
        elif name == "headers":
            lines = ["%s: %s" % (h.lower(), self.headers.get(h, "(absent)"))
                     for h in arg.split(",") if h]
            self.reply(body="\n".join(lines))
        elif name == "query":
            self.reply(body=url.query)
        elif name == "body":
            self.reply(body=body, headers=[
                ("X-Content-Type", self.headers.get("Content-Type", "(absent)")),
                ("X-Content-Length", self.headers.get("Content-Length", "(absent)"))])
        elif name == "form":
            self.reply(body=form_lines(self.headers.get("Content-Type", ""), body))
        elif name == "status":
            code = int(arg)
            self.reply(status=code, body="status %d" % code)
        elif name == "delay":
            time.sleep(float(arg))
            self.reply(body="slept")
        elif name == "drip":
            n, pause = int(arg), float(parts[2])
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for _ in range(n):
                time.sleep(pause)
                self.wfile.write(b"x")
                self.wfile.flush()
        elif name == "redirect":
            n = int(arg)
            if n <= 0:
                self.reply(body="redirected")
            else:
                self.reply(status=302, headers=[("Location", "/redirect/%d" % (n - 1))])
        elif name == "redirect-to":
            status = int(query.get("status", ["302"])[0])
            self.reply(status=status, headers=[("Location", query["url"][0])])
        elif name == "bytes":
            ctype = query.get("type", ["text/plain"])[0]
            self.reply(body=b"a" * int(arg), ctype=ctype)
        elif name == "file":
            ctype = query.get("type", ["application/octet-stream"])[0]
            self.reply(body=b"FILEDATA", ctype=ctype, headers=[
                ("Content-Disposition", 'attachment; filename="%s"' % arg)])
        elif name == "inline":
            self.reply(body=query.get("body", ["BINARYDATA"])[0],
                       ctype=query.get("type", [""])[0])
        elif name == "basic-auth":
            want = "Basic " + base64.b64encode(
                ("%s:%s" % (arg, parts[2])).encode()).decode()
            if self.headers.get("Authorization") == want:
                self.reply(body="ok " + arg)
            else:
                self.reply(status=401, body="unauthorized",
                           headers=[("WWW-Authenticate", 'Basic realm="t"')])
        elif name == "bearer":
            if self.headers.get("Authorization") == "Bearer " + arg:
                self.reply(body="ok bearer")
            else:
                self.reply(status=401, body="unauthorized")
        elif name == "flaky":
            n, token = int(arg), parts[2]
            with HITS_LOCK:
                HITS[token] = HITS.get(token, 0) + 1
                count = HITS[token]
            if count <= n:
                self.reply(status=500, body="failure %d" % count)
            else:
                self.reply(body="ok after %d" % (count - 1))
        elif name == "hits":
            with HITS_LOCK:
                self.reply(body=str(HITS.get(arg, 0)))
        elif name == "set-headers":
            pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
            typed = any(k.lower() == "content-type" for k, _ in pairs)
            self.reply(body="ok", headers=pairs, ctype=None if typed else "text/plain")
        elif name == "latin1":
            self.reply(body="café".encode("latin-1"),
                       ctype="text/plain; charset=ISO-8859-1")
        elif name == "gzip":
            self.reply(body=gzip.compress(b"hello gzip"),
                       headers=[("Content-Encoding", "gzip")])
        elif name == "https-port":
            port = https_port()
            if port:
                self.reply(body=str(port))
            else:
                self.reply(status=501, body="openssl is not available")
        elif name == "json":
            self.reply(body=json.dumps({"ok": True, "n": 1}), ctype="application/json")
        else:
            self.reply(status=404, body="no endpoint " + url.path)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any


def form_lines(ctype, body):
    """Fields of an urlencoded or multipart body, one line each, in order."""
    lines = []
    if ctype.startswith("application/x-www-form-urlencoded"):
        for k, v in urllib.parse.parse_qsl(body.decode(), keep_blank_values=True):
            lines.append("%s=%s" % (k, v))
    elif ctype.startswith("multipart/form-data"):
        msg = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        for part in msg.iter_parts():
            field = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            filename = part.get_filename()
            if filename is None:
                lines.append("%s=%s" % (field, data.decode()))
            else:
                lines.append("%s=@%s;%s;%d;%s" % (field, filename, part.get_content_type(),
                                                  len(data), data.decode(errors="replace")))
    else:
        lines.append("(content type %s)" % (ctype or "absent"))
    return "\n".join(lines)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients hang up on purpose (timeouts, size caps): not worth a
        # traceback.  Anything else is a bug in this file: show it.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


HTTPS = {}
HTTPS_LOCK = threading.Lock()


def https_port():
    """Starts the HTTPS twin once; returns its port (0 without openssl)."""
    with HTTPS_LOCK:
        if "port" in HTTPS:
            return HTTPS["port"]
        HTTPS["port"] = 0
        tmp = tempfile.mkdtemp(prefix="httpd-tls-")
        key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
        try:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                            "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.CalledProcessError):
            return 0
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        os.unlink(key)
        os.unlink(cert)
        os.rmdir(tmp)
        server = Server(("127.0.0.1", 0), Handler)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        HTTPS["port"] = server.server_address[1]
        return HTTPS["port"]


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = Server(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)

    def stop(*_):
        # shutdown() waits for serve_forever, so call it off the main thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch_stdin():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
