#!/usr/bin/python3
"""numpy's brute force for bench/knowledge_bench.c: the same rows, queries
and metadata filters, timed per query in this process.

    knowledge_numpy.py DIR N DIMS QUERIES

DIR holds rows.f32 (N x DIMS float32, unit rows), queries.f32, groups.i32
(each row's document) and keep_<case>.u8 (per document: kept or not).  Per
query: scores = M @ q, the rows the filter drops set to -inf (the row mask
is computed once per case, before the clock), argpartition for the top 10,
sorted.  Prints the BLAS numpy uses, then "numpy CASE p50_ms p95_ms" and writes each query's top-10
ids to DIR/ids_CASE.bin (int64) for the C side to compare with its exact
scan.
"""
import sys
import time

import numpy as np

K = 10


def blas():
    """The BLAS library numpy mapped (Debian: netlib's or OpenBLAS)."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "blas" in line.rsplit("/", 1)[-1]:
                return line.split()[-1]
    return "none found"


def main():
    d, n, dims, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rows = np.fromfile(f"{d}/rows.f32", dtype=np.float32).reshape(n, dims)
    queries = np.fromfile(f"{d}/queries.f32", dtype=np.float32).reshape(nq, dims)
    groups = np.fromfile(f"{d}/groups.i32", dtype=np.int32)
    print(f"numpy {np.__version__} blas {blas()}")
    for case in ("filter30", "filter2"):
        keep = np.fromfile(f"{d}/keep_{case}.u8", dtype=np.uint8).astype(bool)
        mask = keep[groups]
        rows @ queries[0]  # warm-up: BLAS threads, pages
        times = []
        out = np.full((nq, K), -1, dtype=np.int64)
        for i in range(nq):
            t0 = time.perf_counter()
            scores = rows @ queries[i]
            scores = np.where(mask, scores, -np.inf)
            top = np.argpartition(-scores, K)[:K]
            top = top[np.argsort(-scores[top], kind="stable")]
            times.append(time.perf_counter() - t0)
            top = top[np.isfinite(scores[top])]
            out[i, : len(top)] = top
        out.tofile(f"{d}/ids_{case}.bin")
        times.sort()
        p50 = times[int(0.5 * (nq - 1) + 0.5)] * 1e3
        p95 = times[int(0.95 * (nq - 1) + 0.5)] * 1e3
        print(f"numpy {case} {p50:.3f} {p95:.3f}")


if __name__ == "__main__":
    main()
