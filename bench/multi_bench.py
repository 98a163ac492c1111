#!/usr/bin/env python3
"""Event latency across processes (issue 20): a run executes on server A;
a reader on A (the server that runs it: events from memory) and a reader
on B (another server on the same PostgreSQL: events carried by the store,
announced with NOTIFY) follow GET /admin/runs/ID/events at once.  For each
event, latency = when B's reader got it - when A's reader got it, on one
clock (time.monotonic, one process).  Target: p50 <= 5 ms.

  multi_bench.py A_BASE B_BASE TOKEN SPREAD_APP BURST_APP [RUNS]

SPREAD_APP: nodes that take a while each (events spread out); BURST_APP:
many quick nodes (events in bursts).  Prints a table, exits 1 on a miss.
"""
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

A, B, TOKEN, SPREAD, BURST = sys.argv[1:6]
RUNS = int(sys.argv[6]) if len(sys.argv) > 6 else 3


def req(base, method, path, body=None):
    u = urllib.parse.urlparse(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def follow(base, run_id, out):
    """Reads the run's events, noting when each id arrived."""
    u = urllib.parse.urlparse(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    c.request("GET", "/admin/runs/%s/events" % run_id, headers={"Authorization": "Bearer " + TOKEN})
    r = c.getresponse()
    buf = b""
    while True:
        chunk = r.read1(65536)
        if not chunk:
            break
        now = time.monotonic()
        buf += chunk
        while b"\n\n" in buf:
            block, buf = buf.split(b"\n\n", 1)
            if block.startswith(b"id: "):
                out[int(block.split(b"\n", 1)[0][4:])] = now
    c.close()


def one(app):
    st, body = req(A, "POST", "/admin/apps/%s/runs" % app, {"inputs": {}, "user": "bench"})
    if st != 202:
        sys.exit("bench: the run did not start: %s %s" % (st, body[:200]))
    run_id = json.loads(body)["id"]
    got_a, got_b = {}, {}
    ta = threading.Thread(target=follow, args=(A, run_id, got_a))
    tb = threading.Thread(target=follow, args=(B, run_id, got_b))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    # the first events may predate B's reader (it reads them from the store at once)
    ids = sorted(set(got_a) & set(got_b))[3:]
    return [(got_b[i] - got_a[i]) * 1000 for i in ids], len(got_a), len(got_b)


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


rows = []
ok = True
for name, app in (("spread", SPREAD), ("burst", BURST)):
    lat, na, nb = [], 0, 0
    for _ in range(RUNS):
        l, a, b = one(app)
        lat += l
        na += a
        nb += b
    if na != nb:
        print("# %s: A's reader got %d events, B's %d" % (name, na, nb))
        ok = False
    p50, p95 = statistics.median(lat), pct(lat, 95)
    rows.append((name, len(lat), p50, p95))
print("%-40s %8s %8s %8s %7s  %s" % ("event latency, server A -> server B", "events", "p50 ms",
                                      "p95 ms", "ratio", "result"))
for name, n, p50, p95 in rows:
    good = p50 <= 5
    ok = ok and good
    print("%-40s %8d %8.2f %8.2f %7.2f  %s" % ("  " + name + " (target p50 <= 5 ms)", n, p50, p95,
                                              p50 / 5, "PASS" if good else "FAIL"))
sys.exit(0 if ok else 1)
