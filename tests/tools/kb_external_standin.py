#!/usr/bin/env python3
"""kb_external_standin - a stand-in for a service speaking Dify's External
Knowledge API, for sluice's knowledge-retrieval tests (standard library only).

usage: kb_external_standin.py [--port PORT] [--port-file PATH]

POST /retrieval (under any prefix: /api/retrieval works too) with
{"knowledge_id", "query", "retrieval_setting": {"top_k", "score_threshold"},
"metadata_condition"?}.  The knowledge_id chooses the answer:

  good         three records, scores 0.9, 0.4 and 0.7 (in that order), titles
               "alpha", "beta", "gamma"; alpha's metadata carries
               "document_id": "doc-a" and "echo": the request as received
               ({"body", "authorization", "path"})
  status:N     status N with {"error_code": 2001, "error_msg": "The knowledge
               is not exist."}
  huge         a 20 MiB body
  malformed    a body that is not JSON
  badrecord    {"records": [{"content": 5}]}
  nullmeta     one record whose metadata is null and score absent
  many         1001 records
  slow         answers after 5 seconds

A request without "Authorization: Bearer sekret" gets 403 {"error_code":
1002, "error_msg": "Authorization failed"} unless its knowledge_id is not
one that needs it: those starting "open-" (open-good: as good, no key).
"""
import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def records(body, auth, path):
    echo = {"body": body, "authorization": auth, "path": path}
    return [
        {"content": "Alpha content", "score": 0.9, "title": "alpha",
         "metadata": {"document_id": "doc-a", "echo": echo}},
        {"content": "Beta content", "score": 0.4, "title": "beta", "metadata": {"k": 1}},
        {"content": "Gamma content", "score": 0.7, "title": "gamma", "metadata": {}},
    ]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw)
        except ValueError:
            return self.send(400, {"error_code": 400, "error_msg": "bad json"})
        if not self.path.endswith("/retrieval"):
            return self.send(404, {"error_code": 404, "error_msg": "no such path"})
        kid = str(body.get("knowledge_id", ""))
        auth = self.headers.get("Authorization")
        if not kid.startswith("open-") and auth != "Bearer sekret":
            return self.send(403, {"error_code": 1002, "error_msg": "Authorization failed"})
        kid = kid[5:] if kid.startswith("open-") else kid
        if kid == "good":
            return self.send(200, {"records": records(body, auth, self.path)})
        if kid.startswith("status:"):
            return self.send(int(kid[7:]), {"error_code": 2001,
                                            "error_msg": "The knowledge is not exist."})
        if kid == "huge":
            return self.send(200, b"x" * (20 << 20), "text/plain")
        if kid == "malformed":
            return self.send(200, b"{not json", "text/plain")
        if kid == "badrecord":
            return self.send(200, {"records": [{"content": 5}]})
        if kid == "nullmeta":
            return self.send(200, {"records": [{"content": "c", "title": "t", "metadata": None}]})
        if kid == "many":
            return self.send(200, {"records": [{"content": "c", "score": 0.1, "title": "t",
                                                "metadata": {}}] * 1001})
        if kid == "slow":
            time.sleep(5)
            return self.send(200, {"records": []})
        return self.send(404, {"error_code": 2001, "error_msg": "The knowledge is not exist."})


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
    else:
        print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
