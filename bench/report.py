#!/usr/bin/env python3
"""Prints bench/run.sh's results as tables with ratios against the issue's
targets and the peers measured in the same run, and PASS/FAIL per target.

Input: the key=value lines written by engine_bench, peer_engine.py and
peer_yaml.py.  Exit status 1 when a target is missed.

Targets (from the issue):
  - engine overhead <= 5 us per node, median, 2 workers, on the 10,000-node
    chain and fan-out workflows;
  - a 1,000-node workflow loads from YAML in <= 20 ms;
  - per-node cost grows linearly from 100 to 10,000 nodes (reported, with
    a warning when the per-node cost more than doubles).
"""

import os
import re
import sys

ENGINE_BUDGET_US = 5.0
LOAD_BUDGET_MS = 20.0
LINEAR_WARN = 2.0


def parse(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            kv = dict(p.split("=", 1) for p in line.split() if "=" in p)
            m = re.match(r"(chain|fanout)-(\d+)\.", os.path.basename(kv.get("file", "")))
            if not m:
                continue
            kv["shape"], kv["n"] = m.group(1), int(m.group(2))
            kv.setdefault("peer", "sluice")
            rows.append(kv)
    return rows


def pick(rows, peer, shape, n):
    for r in rows:
        if r["peer"] == peer and r["shape"] == shape and r["n"] == n:
            return r
    return None


def num(r, key):
    return float(r[key]) if r and key in r else None


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def times(a, b):
    """'12.3x' for a/b, or '-'."""
    return f"{a / b:.1f}x" if a and b else "-"


def main(argv):
    rows = parse(argv[1])
    sizes = sorted({r["n"] for r in rows if r["peer"] == "sluice"})
    shapes = [s for s in ("chain", "fanout") if any(r["shape"] == s for r in rows)]
    results = []  # (ok, text)

    workers = next((r["workers"] for r in rows if r["peer"] == "sluice"), "?")
    print(f"Engine overhead and load time: medians, {workers} workers; nodes = every node of "
          "the workflow, start and end included; pass-through nodes (variable-aggregator).")
    print("Python peer: bench/peer_engine.py, the same edge-state scheduling in plain Python "
          "(a lower bound for any Python engine, Dify's included; not Dify itself).\n")
    print("load ms: sl_graph_load_file (read, parse, validate); libyaml ms: libyaml's bare event "
          "parse of the same bytes, the floor under any libyaml-based loader.\n")
    hdr = (f"{'shape':<7}{'nodes':>7}{'load ms':>10}{'libyaml ms':>12}{'run ms':>10}{'us/node':>9}"
           f"{'py peer us/node':>17}{'sluice faster':>15}")
    print(hdr)
    print("-" * len(hdr))
    for shape in shapes:
        for n in sizes:
            s = pick(rows, "sluice", shape, n)
            p = pick(rows, "python-engine", shape, n)
            if not s:
                continue
            print(f"{shape:<7}{n:>7}{fmt(num(s, 'load_ms'), '10.2f')}"
                  f"{fmt(num(s, 'libyaml_events_ms'), '12.2f')}{fmt(num(s, 'run_ms'), '10.3f')}"
                  f"{fmt(num(s, 'us_per_node'), '9.2f')}{fmt(num(p, 'us_per_node'), '17.2f')}"
                  f"{times(num(p, 'us_per_node'), num(s, 'us_per_node')):>15}")
    print()

    lo, hi = (sizes[0], sizes[-1]) if sizes else (None, None)
    if lo and hi and lo != hi:
        print(f"Growth {lo} -> {hi} nodes: per-node cost at {hi} / per-node cost at {lo} "
              "(1.0 = linear total cost)")
        for shape in shapes:
            a, b = pick(rows, "sluice", shape, lo), pick(rows, "sluice", shape, hi)
            if not (a and b):
                continue
            run_g = num(b, "us_per_node") / num(a, "us_per_node")
            load_g = (num(b, "load_ms") / hi) / (num(a, "load_ms") / lo)
            pa, pb = pick(rows, "python-engine", shape, lo), pick(rows, "python-engine", shape, hi)
            py_g = num(pb, "us_per_node") / num(pa, "us_per_node") if pa and pb else None
            flag = lambda g: "" if g <= LINEAR_WARN else "  WARN: worse than linear"
            print(f"  {shape:<7} engine {run_g:5.2f}{flag(run_g)}")
            print(f"  {shape:<7} load   {load_g:5.2f}{flag(load_g)}")
            if py_g:
                print(f"  {shape:<7} python peer engine {py_g:5.2f}")
        print()

    print(f"Target: engine overhead <= {ENGINE_BUDGET_US:g} us/node at {hi} nodes "
          "(Dify's engine cannot run here, so the issue's budget is the named peer)")
    for shape in shapes:
        s = pick(rows, "sluice", shape, hi)
        if not s:
            results.append((False, f"{shape} {hi}: no measurement"))
            continue
        us = num(s, "us_per_node")
        ok = us <= ENGINE_BUDGET_US
        results.append((ok, f"engine {shape} {hi}"))
        print(f"  {'PASS' if ok else 'FAIL'}  {shape:<7} {us:6.2f} us/node = "
              f"{us / ENGINE_BUDGET_US:.2f} of the budget")
    print()

    print(f"Target: a 1,000-node workflow loads from YAML in <= {LOAD_BUDGET_MS:g} ms "
          "(sluice: parse + full validation; peer: Dify's yaml.safe_load, parse only)")
    for shape in shapes:
        s = pick(rows, "sluice", shape, 1000)
        if not s:
            continue
        ms = num(s, "load_ms")
        ok = ms <= LOAD_BUDGET_MS
        results.append((ok, f"load {shape} 1000"))
        verdict = (f"{times(LOAD_BUDGET_MS, ms)} under the budget" if ok
                   else f"{times(ms, LOAD_BUDGET_MS)} over the budget")
        print(f"  {'PASS' if ok else 'FAIL'}  {shape:<7} sluice {ms:8.2f} ms ({verdict})")
        for peer, label in (("pyyaml-safe_load", "PyYAML safe_load (what Dify uses)"),
                            ("pyyaml-CSafeLoader", "PyYAML CSafeLoader (libyaml; not Dify)")):
            p = pick(rows, peer, shape, 1000)
            if p:
                pm = num(p, "load_ms")
                print(f"        {'':<7} {label:<38} {pm:9.1f} ms: sluice {times(pm, ms)} faster")
    print()

    failed = [t for ok, t in results if not ok]
    print(f"bench: {len(results) - len(failed)} passed, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
