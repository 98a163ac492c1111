#!/usr/bin/env bash
# The benchmark behind the issue's speed targets; `make bench` runs it.
#
#   bench/run.sh [BUILD]        BUILD holds sluice, bench/engine_bench,
#                               bench/sandbox_bench, bench/startup_bench,
#                               bench/llm_bench, bench/mcp_bench, bench/tool_bench,
#                               bench/openapi_bench
#                               (default: build)
#
# 1. bench/gen.py writes chain and fan-out workflows of 100, 1,000 and
#    10,000 pass-through nodes into bench/out/ (YAML, plus a JSON twin for
#    the Python peer).
# 2. engine_bench loads and runs each with sluice (2 workers, medians).
# 3. The peers run in the same session on the same files: a minimal Python
#    engine (peer_engine.py, a lower bound for Dify's) and PyYAML's
#    safe_load, which is how Dify reads DSL files (peer_yaml.py).
# 4. report.py prints the tables, the ratios and PASS/FAIL per target; the
#    exit status is 1 when a target is missed.
#
# BENCH_KIND=answer generates answer nodes instead of variable-aggregators.
# PYTHON picks the interpreter for the PyYAML peer (default: the system
# python3 with Debian's python3-yaml when present).
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
out=bench/out
kind=${BENCH_KIND:-variable-aggregator}
bin=$BUILD/bench/engine_bench
[ -x "$bin" ] || { echo "bench: $bin is missing; run make bench" >&2; exit 2; }

pick_python() {
  local p
  for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if "$p" -c 'import yaml' 2>/dev/null; then echo "$p"; return; fi
  done
  echo "bench: no python3 with PyYAML (Debian package python3-yaml)" >&2
  exit 2
}
py=$(pick_python)

t0=$(date +%s)
mkdir -p "$out"
files=() jsons=()
for shape in chain fanout; do
  for n in 100 1000 10000; do
    python3 bench/gen.py "$shape" "$n" "$out/$shape-$n.yml" --kind "$kind" --json
    files+=("$out/$shape-$n.yml") jsons+=("$out/$shape-$n.json")
  done
done

echo "# $(nproc) cores: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "# $("$py" -c 'import sys, yaml; print("Python", sys.version.split()[0], "PyYAML", yaml.__version__)')"
results=$out/results.txt
: >"$results"
echo "# sluice: load and run each workflow"
"$bin" --workers 2 "${files[@]}" | tee -a "$results"
echo "# peer: minimal Python engine on the same graphs"
"$py" bench/peer_engine.py "${jsons[@]}" | tee -a "$results"
echo "# peer: PyYAML loading the 1,000-node files"
"$py" bench/peer_yaml.py "$out/chain-1000.yml" "$out/fanout-1000.yml" | tee -a "$results"
echo
status=0
# run_bench NAME: $BUILD/bench/NAME, its misses in status (1), or 2 when absent
run_bench() {
  if [ -x "$BUILD/bench/$1" ]; then
    "$BUILD/bench/$1" || status=1
  else
    echo "bench: $BUILD/bench/$1 is missing; run make bench" >&2; status=2
  fi
}
python3 bench/report.py "$results" || status=$?
echo
echo "# the local sandbox (issue 3): sluice against bubblewrap, fork+exec and python3"
run_bench sandbox_bench
echo
echo "# whole processes (issue 14): sluice's start against /bin/true, sandbox run against bwrap"
bench/startup.sh "$BUILD" || status=1
echo
echo "# model calls (issue 4): streaming relay overhead and memory per concurrent call"
run_bench llm_bench
echo
echo "# MCP tools: the client against the transport under it (HTTP, stdio)"
run_bench mcp_bench
echo
echo "# configured tools (issue 15): the tool node's and an agent tool step's own costs"
run_bench tool_bench
echo
echo "# OpenAPI tools (issue 16): call overhead and loading a 1 MB document"
run_bench openapi_bench
echo
echo "# sluice serve (issue 6): throughput, p99, streaming clients, memory"
bench/serve_bench.sh "$BUILD" || status=1
echo "# bench took $(( $(date +%s) - t0 )) s"
exit $status
