#!/usr/bin/env python3
"""N concurrent streaming clients of `sluice serve` (bench/serve_bench.sh).

Standard library only: asyncio over plain TCP, HTTP/1.1 written and read
by hand (chunked transfer coding, server-sent events).

  1. opens N connections at once and waits until all are up;
  2. sends POST /v1/workflows/run with response_mode streaming on every
     connection at once;
  3. reads every SSE stream to its end and checks it: the first event is
     workflow_started, the last workflow_finished (status succeeded), all
     events carry one workflow_run_id, and there is one node_started and one
     node_finished per node of the workflow (NODES) and CHUNKS text_chunk
     events (what the end node streams).

Prints one line for the shell, e.g.

  STREAM clients=1000 connected=1000 completed=1000 refused=0 failed=0
         events=13000 expected=13000 lost=0 pings=0 connect_s=0.21 total_s=1.93
         first_event_p50_ms=… first_event_p99_ms=… finish_p50_ms=… finish_p99_ms=…

`lost` counts the events a client should have had but did not get (a
failed client loses all of its run's events).  With --ids FILE the run id
and event count of every completed stream go to FILE (id,count per line) so
the caller can compare them with the database.

Usage: stream_clients.py HOST PORT KEY N NODES [--chunks CHUNKS] [--ids FILE] [--timeout S]
"""

import argparse
import asyncio
import json
import resource
import sys
import time


class Result:
    __slots__ = ("ok", "status", "events", "run_id", "err", "pings", "t_first", "t_end")

    def __init__(self):
        self.ok = False
        self.status = 0
        self.events = []      # event names in order
        self.run_id = None
        self.err = None
        self.pings = 0
        self.t_first = None   # first event, seconds after the request was sent
        self.t_end = None     # end of stream, same clock


def request_bytes(host, port, key):
    body = json.dumps({"inputs": {"q": "hello"}, "response_mode": "streaming",
                       "user": "bench-stream"}).encode()
    head = (f"POST /v1/workflows/run HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\n"
            f"Authorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\n"
            f"Accept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode()
    return head + body


class SSE:
    """Splits the body into events as it arrives."""

    def __init__(self, res, t0):
        self.buf = b""
        self.res = res
        self.t0 = t0

    def feed(self, data):
        self.buf += data
        while True:
            i = self.buf.find(b"\n\n")
            if i < 0:
                return
            block, self.buf = self.buf[:i], self.buf[i + 2:]
            self.event(block)

    def event(self, block):
        res = self.res
        if res.t_first is None:
            res.t_first = time.monotonic() - self.t0
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                ev = json.loads(line[5:])
                name = ev.get("event")
                res.events.append(name)
                rid = ev.get("workflow_run_id")
                if rid:
                    if res.run_id is None:
                        res.run_id = rid
                    elif rid != res.run_id:
                        raise ValueError(f"event for run {rid} in the stream of {res.run_id}")
                if name == "workflow_finished":
                    st = (ev.get("data") or {}).get("status")
                    if st != "succeeded":
                        raise ValueError(f"workflow_finished with status {st}")
            elif line.startswith(b"event:") and line[6:].strip() == b"ping":
                res.pings += 1


async def read_body(reader, headers, sse):
    if "chunked" in headers.get("transfer-encoding", ""):
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")   # (no trailers)
                return
            sse.feed(await reader.readexactly(size))
            await reader.readexactly(2)
    elif "content-length" in headers:
        sse.feed(await reader.readexactly(int(headers["content-length"])))
    else:
        while True:
            data = await reader.read(65536)
            if not data:
                return
            sse.feed(data)


async def client(conn, req, res, go, nodes, chunks):
    """One client on an open connection: waits for `go`, then runs."""
    reader, writer = conn
    try:
        await go.wait()
        t0 = time.monotonic()
        writer.write(req)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        res.status = int(lines[0].split()[1])
        headers = {}
        for h in lines[1:]:
            if ":" in h:
                k, v = h.split(":", 1)
                headers[k.strip().lower()] = v.strip().lower()
        if res.status != 200:
            body = await reader.read(4096)
            res.err = f"HTTP {res.status}: {body[:200].decode(errors='replace')}"
            return
        sse = SSE(res, t0)
        await read_body(reader, headers, sse)
        res.t_end = time.monotonic() - t0
        ev = res.events
        problems = []
        if not ev or ev[0] != "workflow_started":
            problems.append("does not begin with workflow_started")
        if not ev or ev[-1] != "workflow_finished":
            problems.append("does not end with workflow_finished")
        for name, want in (("node_started", nodes), ("node_finished", nodes),
                           ("text_chunk", chunks)):
            n = ev.count(name)
            if n != want:
                problems.append(f"{n} {name} events, expected {want}")
        if problems:
            res.err = "; ".join(problems) + f" (got {ev})"
        else:
            res.ok = True
    except Exception as e:  # noqa: BLE001 -- every failure is counted, not raised
        res.err = f"{type(e).__name__}: {e}"
    finally:
        writer.close()


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


async def main_async(a):
    req = request_bytes(a.host, a.port, a.key)
    results = [Result() for _ in range(a.n)]
    go = asyncio.Event()
    t_start = time.monotonic()

    async def connect(i):
        try:
            return await asyncio.open_connection(a.host, a.port)
        except OSError as e:
            results[i].err = f"connect: {e}"
            return None

    conns = await asyncio.gather(*(connect(i) for i in range(a.n)))
    connect_s = time.monotonic() - t_start
    tasks = [asyncio.ensure_future(client(c, req, results[i], go, a.nodes, a.chunks))
             for i, c in enumerate(conns) if c is not None]
    await asyncio.sleep(0)          # every client is waiting on `go`
    t_go = time.monotonic()
    go.set()
    done, pending = await asyncio.wait(tasks, timeout=a.timeout)
    for t in pending:
        t.cancel()
    total_s = time.monotonic() - t_go
    for r in results:
        if not r.ok and r.err is None:
            r.err = f"no end of stream within {a.timeout:g} s"

    expected_per = 2 + 2 * a.nodes + a.chunks
    completed = sum(r.ok for r in results)
    refused = sum(r.status == 429 for r in results)
    events = sum(len(r.events) for r in results)
    lost = sum(max(0, expected_per - len(r.events)) for r in results)
    pings = sum(r.pings for r in results)
    firsts = [r.t_first * 1e3 for r in results if r.t_first is not None]
    ends = [r.t_end * 1e3 for r in results if r.ok]
    errors = {}
    for r in results:
        if r.err:
            errors.setdefault(r.err[:160], 0)
            errors[r.err[:160]] += 1
    for msg, n in sorted(errors.items(), key=lambda kv: -kv[1])[:5]:
        print(f"stream_clients: {n} client(s): {msg}", file=sys.stderr)
    if a.ids:
        with open(a.ids, "w") as f:
            for r in results:
                if r.ok:
                    f.write(f"{r.run_id},{len(r.events)}\n")
    print(f"STREAM clients={a.n} connected={len(tasks)} completed={completed} "
          f"refused={refused} failed={a.n - completed} events={events} "
          f"expected={expected_per * a.n} lost={lost} pings={pings} "
          f"connect_s={connect_s:.3f} total_s={total_s:.3f} "
          f"first_event_p50_ms={pct(firsts, 50):.1f} first_event_p99_ms={pct(firsts, 99):.1f} "
          f"finish_p50_ms={pct(ends, 50):.1f} finish_p99_ms={pct(ends, 99):.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("key")
    ap.add_argument("n", type=int)
    ap.add_argument("nodes", type=int, help="nodes in the workflow (node events per kind)")
    ap.add_argument("--chunks", type=int, default=0, help="text_chunk events a run sends")
    ap.add_argument("--ids", help="write run_id,events of each completed stream here")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, a.n + 64))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    asyncio.run(main_async(a))


if __name__ == "__main__":
    main()
