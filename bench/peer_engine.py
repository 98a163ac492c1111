#!/usr/bin/env python3
"""A minimal Python workflow engine, the in-run peer for sluice's engine
benchmark (bench/run.sh).

THIS IS NOT DIFY.  Dify's engine (graphon / core.workflow) cannot be
installed here, so this file stands in for "any Python engine" with the
least work such an engine must do per node:

  - edge states (unknown / taken / skipped) and a ready queue: a node runs
    once none of its incoming edges is unknown and one is taken; a node
    whose incoming edges are all skipped is skipped and the skip spreads;
  - a variable pool, dict of node id -> {name: value}, read by selector;
  - one output dict per node, published to the pool after the node runs.

Dify does all of that and much more per node: pydantic node and event
objects (NodeRunStartedEvent, NodeRunSucceededEvent, ...), a thread-pool
dispatcher and queues, deep copies of variables into Segment objects,
node-run records, timing and retry bookkeeping.  So the figure printed
here is a LOWER BOUND on what Dify's Python engine costs per node; the
issue reports milliseconds per node for the real thing.  It runs on one
thread: the GIL would serialise pass-through nodes anyway, and threads
would only add hand-off cost to a lower bound.

It runs the same generated graph as sluice (the JSON twin gen.py writes
next to the YAML, so PyYAML's cost is not counted here) with the same
input, checks the result like engine_bench does, and prints one line of
key=value for bench/report.py.

Usage: peer_engine.py [--budget S] FILE.json...
"""

import argparse
import json
import re
import statistics
import sys
import time
from collections import deque

UNKNOWN, TAKEN, SKIPPED = 0, 1, 2
INPUT_TEXT = "bench input"
REF = re.compile(r"\{\{#([A-Za-z0-9_]{1,50}(?:\.[A-Za-z_][A-Za-z0-9_]{0,29}){1,10})#\}\}")


class Graph:
    """Node and edge tables built once, as any engine does at load."""

    def __init__(self, doc):
        g = doc["workflow"]["graph"]
        self.data = {n["id"]: n["data"] for n in g["nodes"]}
        self.out = {nid: [] for nid in self.data}
        self.inc = {nid: [] for nid in self.data}
        self.edges = []  # (source, target, handle)
        for e in g["edges"]:
            i = len(self.edges)
            self.edges.append((e["source"], e["target"], e.get("sourceHandle") or "source"))
            self.out[e["source"]].append(i)
            self.inc[e["target"]].append(i)
        self.start = next(n for n, d in self.data.items() if d["type"] == "start")


def pool_get(pool, selector):
    """Value at [node_id, name, path...], or KeyError when absent."""
    v = pool[selector[0]][selector[1]]
    for p in selector[2:]:
        v = v[p]
    return v


def run_start(data, pool, inputs):
    return dict(inputs)


def run_aggregator(data, pool, inputs):
    for sel in data.get("variables") or []:
        try:
            return {"output": pool_get(pool, sel)}
        except (KeyError, IndexError, TypeError):
            continue
    return {}


def run_answer(data, pool, inputs):
    def value(m):
        try:
            v = pool_get(pool, m.group(1).split("."))
        except (KeyError, IndexError, TypeError):
            return ""
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return {"answer": REF.sub(value, data.get("answer", ""))}


def run_end(data, pool, inputs):
    out = {}
    for o in data.get("outputs") or []:
        try:
            out[o["variable"]] = pool_get(pool, o["value_selector"])
        except (KeyError, IndexError, TypeError):
            out[o["variable"]] = None
    return out


EXEC = {
    "start": run_start,
    "variable-aggregator": run_aggregator,
    "answer": run_answer,
    "end": run_end,
}


def run(graph, inputs):
    """One run; returns (workflow outputs, steps)."""
    state = [UNKNOWN] * len(graph.edges)
    # Unknown incoming edges and "one was taken" per node: counters make a
    # join with N inputs cost O(N), not O(N^2) (the least an engine can do).
    pending = {nid: len(ins) for nid, ins in graph.inc.items()}
    taken = set()
    pool = {}
    outputs = {}
    steps = 0
    ready = deque([graph.start])

    def decide(e, st):
        """Sets edge e and settles its target once nothing is unknown."""
        work = [(e, st)]
        while work:
            e, st = work.pop()
            state[e] = st
            dst = graph.edges[e][1]
            if st == TAKEN:
                taken.add(dst)
            pending[dst] -= 1
            if pending[dst]:
                continue
            if dst in taken:
                ready.append(dst)
            else:                           # all skipped: the skip spreads
                work.extend((out, SKIPPED) for out in graph.out[dst])

    while ready:
        nid = ready.popleft()
        data = graph.data[nid]
        result = EXEC[data["type"]](data, pool, inputs)
        # Branching nodes (not generated here) would name their handle.
        handle = result.pop("__handle__", "source")
        pool[nid] = result
        steps += 1
        if data["type"] == "end":
            outputs.update(result)
        for e in graph.out[nid]:
            decide(e, TAKEN if graph.edges[e][2] == handle else SKIPPED)
    return outputs, steps


def bench(path, budget):
    with open(path, encoding="utf-8") as f:
        graph = Graph(json.load(f))
    inputs = {"q": INPUT_TEXT}
    nodes = len(graph.data)

    def once():
        t0 = time.perf_counter()
        outputs, steps = run(graph, inputs)
        t = time.perf_counter() - t0
        if outputs.get("result") != INPUT_TEXT or steps != nodes:
            sys.exit(f"peer_engine: {path}: wrong run (result {outputs.get('result')!r}, "
                     f"{steps} steps for {nodes} nodes)")
        return t

    once()                     # warm-up, as engine_bench does
    samples, spent = [], 0.0
    while len(samples) < 2001 and (len(samples) < 5 or spent < budget):
        t = once()
        samples.append(t)
        spent += t
    med = statistics.median(samples)
    print(f"peer=python-engine file={path} nodes={nodes} runs={len(samples)} "
          f"run_ms={med * 1e3:.3f} us_per_node={med * 1e6 / nodes:.3f}", flush=True)


def main(argv):
    ap = argparse.ArgumentParser(description="minimal Python engine peer (a lower bound, not Dify)")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of runs per file")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    for path in a.files:
        bench(path, a.budget)


if __name__ == "__main__":
    main(sys.argv[1:])
