#!/usr/bin/env python3
"""The DSL-load peer for bench/run.sh: how long Dify takes to read a DSL
file, measured in-process on the same generated files sluice loads.

Dify imports an app with PyYAML's yaml.safe_load (the pure-Python
SafeLoader; services/app_dsl_service.py), then validates with pydantic.
Only the safe_load part is timed here, so this is again a lower bound on
Dify's import time, while sluice's figure includes its full validation.
For reference it also times PyYAML's libyaml-backed CSafeLoader, which is
not what Dify uses but is the fairest "C parser called from Python" peer.

Both timings include reading the file, as sl_graph_load_file does.
Prints one key=value line per file and loader for bench/report.py.

Usage: peer_yaml.py [--min-runs N] [--budget S] FILE.yml...
"""

import argparse
import statistics
import sys
import time

try:
    import yaml
except ImportError:
    sys.exit("peer_yaml: PyYAML is missing; install the Debian package python3-yaml")


def load_safe(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f.read())


def load_c(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f.read(), Loader=yaml.CSafeLoader)


def timed(fn, path, min_runs, budget):
    samples, spent = [], 0.0
    while len(samples) < min_runs or (spent < budget and len(samples) < 101):
        t0 = time.perf_counter()
        doc = fn(path)
        t = time.perf_counter() - t0
        if not isinstance(doc, dict) or doc.get("kind") != "app":
            sys.exit(f"peer_yaml: {path} did not load as a DSL document")
        samples.append(t)
        spent += t
    return statistics.median(samples), len(samples)


def main(argv):
    ap = argparse.ArgumentParser(description="PyYAML load-time peer")
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per file and loader")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    loaders = [("pyyaml-safe_load", load_safe)]
    if getattr(yaml, "__with_libyaml__", False):
        loaders.append(("pyyaml-CSafeLoader", load_c))
    for path in a.files:
        for name, fn in loaders:
            med, n = timed(fn, path, a.min_runs, a.budget)
            print(f"peer={name} file={path} loads={n} load_ms={med * 1e3:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
