#!/usr/bin/env python3
"""vendor_standin - the vendors' APIs sluice's built-in tools call (Tavily,
Jina, Firecrawl), as their documentation describes them, served by
httpd.py under /vendor/... (or alone: vendor_standin.py --port 0
--port-file F).  Each checks the API key and the request's shape the way
the vendor does, and answers in the vendor's shape; every answer carries
`echo` (what the request said) so a test can check the parameters sluice
sent.

  POST /vendor/tavily/search      Tavily search: Bearer tvly-test-key,
  POST /vendor/tavily/extract     JSON bodies; X-Client-Source, X-Project-ID
  GET  /vendor/jina/r/URL         Jina reader (Accept: application/json);
  GET  /vendor/jina/s/QUERY       Jina search; a key is optional, but a
  POST /vendor/jina/t/            wrong one is refused (jina-test-key);
                                  the tokenizer counts words
  POST /vendor/firecrawl/v2/scrape      Firecrawl: Bearer fc-test-key
  POST /vendor/firecrawl/v2/crawl       starts a job; GET
  GET  /vendor/firecrawl/v2/crawl/ID    /v2/crawl/ID is "scraping" for its
                                        first poll, then "completed" (never,
                                        for a URL with never-ends); DELETE
                                        cancels

                                  (a target with redirect-here or
                                  redirect-away: 302 to this server by
                                  its address, or as localhost)
  GET  /vendor/files/NAME          the images and favicons the answers name:
                                  a PNG for .png, an icon for .ico, SVG
                                  else; 404 for missing*

Words in the query, URL or URLs pick a failure, as a test needs one:
  status-429, status-500, status-402   that status with the vendor's error body
  not-json                             200 with an HTML body
  huge                                 200 with 11 MiB of JSON
  nothing                              200 with no results
  crawl-fails                          (Firecrawl crawl) the job fails
  slow                                 answers after 3 s
"""
import argparse
import base64
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAaJPXQAAAABJRU5ErkJggg==")
KEYS = {"tavily": "tvly-test-key", "jina": "jina-test-key", "firecrawl": "fc-test-key"}
JOBS = {}
JOBS_LOCK = threading.Lock()


def js(status, obj, extra=()):
    return status, "application/json", json.dumps(obj).encode(), list(extra)


def failure(vendor, words):
    """The answer a trigger word asks for, or None."""
    if "slow" in words:
        time.sleep(3)
    if "not-json" in words:
        return 200, "text/html", b"<html><body>Bad gateway</body></html>", []
    if "huge" in words:
        return 200, "application/json", b'{"results": ["' + b"a" * (11 << 20) + b'"]}', []
    for code in (402, 429, 500):
        if "status-%d" % code in words:
            if code == 500:
                return code, "text/plain", b"Internal Server Error", []
            if vendor == "tavily":
                return js(code, {"detail": {"error": "Your request has been blocked due to "
                                            "excessive requests." if code == 429 else
                                            "This request exceeds your plan's set usage limit."}})
            if vendor == "jina":
                return js(code, {"data": None, "code": code, "name": "RateLimitTriggeredError",
                                 "status": code * 100, "message": "Per IP rate limit exceeded",
                                 "readableMessage": "RateLimitTriggeredError: Per IP rate "
                                 "limit exceeded"})
            return js(code, {"success": False, "error": "Rate limit exceeded. Consumed "
                             "(req/min): 11, Remaining (req/min): 0."})
    return None


def bearer(headers):
    a = headers.get("Authorization") or ""
    return a[7:] if a.startswith("Bearer ") else None


def tavily(path, method, headers, body, base):
    if method != "POST":
        return js(405, {"detail": "Method Not Allowed"})
    if bearer(headers) != KEYS["tavily"]:
        return js(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
    if not (headers.get("Content-Type") or "").startswith("application/json"):
        return js(422, {"detail": {"error": "the body is JSON"}})
    try:
        req = json.loads(body or b"null")
    except ValueError:
        return js(400, {"detail": {"error": "Invalid JSON body."}})
    if not isinstance(req, dict):
        return js(400, {"detail": {"error": "Invalid JSON body."}})
    echo = {"body": req, "client": headers.get("X-Client-Source"),
            "project": headers.get("X-Project-ID")}
    if path == "/vendor/tavily/search":
        q = req.get("query")
        if not isinstance(q, str) or not q:
            return js(400, {"detail": {"error": "Query is missing."}})
        bad = failure("tavily", q)
        if bad:
            return bad
        results = [] if "nothing" in q else [
            {"title": "Result for " + q, "url": "https://example.com/1",
             "content": "First content.", "score": 0.98765, "raw_content": "Raw one.",
             "published_date": "Mon, 01 Dec 2026 10:00:00 GMT",
             "favicon": base + "/vendor/files/favicon.ico"},
            {"title": "Second", "url": "https://example.com/2", "content": "Second content.",
             "score": 0.5, "raw_content": None}]
        out = {"query": q, "follow_up_questions": None,
               "answer": "The answer." if req.get("include_answer") else None,
               "images": ([{"url": base + "/vendor/files/a.png", "description": "An A"},
                           base + "/vendor/files/missing.png"]
                          if req.get("include_images") else []),
               "results": results[:req.get("max_results", 5)], "response_time": 0.12,
               "echo": echo}
        return js(200, out)
    if path == "/vendor/tavily/extract":
        urls = req.get("urls")
        if isinstance(urls, str):
            urls = [urls]
        if not isinstance(urls, list) or not urls:
            return js(400, {"detail": {"error": "No URLs provided."}})
        bad = failure("tavily", " ".join(urls))
        if bad:
            return bad
        results, failed = [], []
        for u in urls:
            if "missing" in u:
                failed.append({"url": u, "error": "Failed to fetch url"})
            else:
                r = {"url": u, "raw_content": "Content of " + u,
                     "images": [base + "/vendor/files/i.png?size=1"]
                     if req.get("include_images") else []}
                if req.get("include_favicon"):
                    r["favicon"] = base + "/vendor/files/icon"
                results.append(r)
        return js(200, {"results": results, "failed_results": failed, "response_time": 0.3,
                        "echo": echo})
    return js(404, {"detail": "Not Found"})


def jina(path, query, method, headers, body=b"", base=""):
    key = bearer(headers)
    if headers.get("Authorization") is not None and key != KEYS["jina"]:
        return js(401, {"data": None, "code": 401, "name": "AuthenticationFailedError",
                        "status": 40103, "message": "Invalid API key, please get a new one "
                        "from https://jina.ai", "readableMessage": "AuthenticationFailedError: "
                        "Invalid API key"})
    if path.rstrip("/") == "/vendor/jina/t":
        if method != "POST":
            return js(405, {"code": 405, "message": "Method Not Allowed"})
        try:
            req = json.loads(body or b"null")
        except ValueError:
            req = None
        if not isinstance(req, dict) or not isinstance(req.get("content"), str):
            return js(400, {"code": 400, "name": "ParamValidationError", "status": 40001,
                            "message": "content is required"})
        words = req["content"].split()
        out = {"num_tokens": len(words), "tokenizer": req.get("tokenizer", "cl100k_base"),
               "usage": {"tokens": len(words)}, "echo": {"body": req}}
        if req.get("return_tokens"):
            out["tokens"] = [[w, [i]] for i, w in enumerate(words)]
        if req.get("return_chunks"):
            out["num_chunks"] = 1
            out["chunk_positions"] = [[0, len(req["content"])]]
            out["chunks"] = [req["content"]]
        return js(200, out)
    if method != "GET":
        return js(405, {"code": 405, "message": "Method Not Allowed"})
    echo = {"headers": {k: v for k, v in headers.items() if k.lower().startswith("x-")
                        or k.lower() in ("dnt", "accept", "authorization")},
            "query": query}
    if path.startswith("/vendor/jina/r/"):
        target = path[len("/vendor/jina/r/"):]
        if "redirect-here" in target or "redirect-away" in target:
            # the same origin, or the same server by another name
            host = base.split("//", 1)[1]
            other = "localhost" + host[host.index(":"):] if "redirect-away" in target else host
            return 302, "text/plain", b"moved", [
                ("Location", "http://%s/vendor/jina/r/https://moved.example/" % other)]
        bad = failure("jina", target)
        if bad:
            return bad
        if not target.startswith("http"):
            return js(422, {"data": None, "code": 422, "name": "ParamValidationError",
                            "status": 42206, "message": "Invalid URL"})
        if headers.get("Accept") != "application/json":
            return 200, "text/plain", ("Title: Page\n\nURL Source: %s\n\nMarkdown Content:\n"
                                       "Hello" % target).encode(), []
        return js(200, {"code": 200, "status": 20000, "data": {
            "title": "Page at " + target, "url": target, "content": "Hello from " + target,
            "usage": {"tokens": 7}}, "echo": echo})
    if path.startswith("/vendor/jina/s/"):
        q = urllib.parse.unquote(path[len("/vendor/jina/s/"):])
        bad = failure("jina", q)
        if bad:
            return bad
        return js(200, {"code": 200, "status": 20000, "data": [] if "nothing" in q else [
            {"title": "About " + q, "url": "https://example.com/s1",
             "description": "d1", "content": "Found: " + q, "usage": {"tokens": 5}}],
            "echo": echo})
    return js(404, {"code": 404, "message": "Not Found"})


def firecrawl(path, method, headers, body, base):
    if bearer(headers) != KEYS["firecrawl"]:
        return js(401, {"success": False, "error": "Unauthorized: Invalid token"})
    if path == "/vendor/firecrawl/v2/scrape" or path == "/vendor/firecrawl/v2/crawl":
        if method != "POST":
            return js(405, {"success": False, "error": "Method Not Allowed"})
        try:
            req = json.loads(body or b"null")
        except ValueError:
            return js(400, {"success": False, "error": "Bad Request: invalid JSON"})
        if not isinstance(req, dict) or not isinstance(req.get("url"), str):
            return js(400, {"success": False, "error": "Bad Request",
                            "details": [{"path": ["url"], "message": "Required"}]})
        url = req["url"]
        bad = failure("firecrawl", url)
        if bad:
            return bad
        if path.endswith("/scrape"):
            data = {"markdown": "# Page\n\nScraped " + url,
                    "metadata": {"title": "Page", "sourceURL": url, "statusCode": 200}}
            return js(200, {"success": True, "data": data, "echo": {"body": req}})
        with JOBS_LOCK:
            jid = "job-%d" % (len(JOBS) + 1)
            JOBS[jid] = {"polls": 0, "req": req}
        return js(200, {"success": True, "id": jid, "url": base + "/v2/crawl/" + jid})
    if path.startswith("/vendor/firecrawl/v2/crawl/"):
        jid = path.rsplit("/", 1)[1]
        with JOBS_LOCK:
            job = JOBS.get(jid)
            if job:
                job["polls"] += 1
        if not job:
            return js(404, {"success": False, "error": "Job not found"})
        if method == "DELETE":
            return js(200, {"status": "cancelled"})
        req = job["req"]
        if "crawl-fails" in req["url"]:
            return js(200, {"success": False, "status": "failed", "error": "the site refused"})
        if job["polls"] < 2 or "never-ends" in req["url"]:
            return js(200, {"success": True, "status": "scraping", "total": 2, "completed": 0,
                            "creditsUsed": 0, "data": []})
        data = [{"markdown": "# %s page %d" % (req["url"], i),
                 "metadata": {"sourceURL": "%s/p%d" % (req["url"], i), "statusCode": 200}}
                for i in range(1, min(req.get("limit", 5), 2) + 1)]
        return js(200, {"success": True, "status": "completed", "total": len(data),
                        "completed": len(data), "creditsUsed": len(data),
                        "expiresAt": "2026-12-02T00:00:00.000Z", "data": data,
                        "echo": {"body": req, "polls": job["polls"]}})
    return js(404, {"success": False, "error": "Not Found"})


def handle(raw_path, method, headers, body, base=""):
    url = urllib.parse.urlsplit(raw_path)
    path = url.path
    base = base or "http://" + (headers.get("Host") or "127.0.0.1")
    if path.startswith("/vendor/files/"):
        name = path.rsplit("/", 1)[1]
        if name.startswith("missing"):
            return 404, "text/plain", b"no such file", []
        if name.endswith(".png"):
            return 200, "image/png", PNG, []
        return 200, "image/x-icon" if name.endswith(".ico") else "image/svg+xml", \
            b"<svg/>" if not name.endswith(".ico") else b"\x00\x00\x01\x00", []
    if path.startswith("/vendor/tavily/"):
        return tavily(path, method, headers, body, base)
    if path.startswith("/vendor/jina/"):
        # the reader's target is the rest of the request line, query and all
        return jina(raw_path if path.startswith("/vendor/jina/r/") else path, url.query,
                    method, headers, body, base)
    if path.startswith("/vendor/firecrawl/"):
        return firecrawl(path, method, headers, body, base + "/vendor/firecrawl")
    return js(404, {"error": "no vendor at " + path})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        base = "http://%s:%d" % self.server.server_address[:2]
        status, ctype, out, extra = handle(self.path, self.command, self.headers, body, base)
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

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = any


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
