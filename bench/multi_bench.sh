#!/usr/bin/env bash
# Event latency across processes (issue 20): two `sluice serve` on one
# PostgreSQL (a cluster of the bench's own, tests/cli/pg_lib.bash); a run
# on A is followed from A and from B at once (bench/multi_bench.py).
#   bench/multi_bench.sh [BUILD]          (make bench-multi)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
SLUICE=$BUILD/sluice
. tests/cli/pg_lib.bash
pg_have || { echo "bench-multi: needs Debian's postgresql"; exit 2; }
T=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; pg_stop; rm -rf "$T"' EXIT
pg_start || { echo "bench-multi: PostgreSQL did not start"; exit 2; }
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# spread: 20 code nodes of 30 ms; burst: 200 template nodes
{
    echo 'app: {mode: workflow, name: bench-spread}'; echo 'kind: app'; echo 'version: 0.1.5'
    echo 'workflow:'; echo '  graph:'; echo '    nodes:'
    echo '    - {id: n0, data: {type: start, title: Start, variables: []}}'
    for i in $(seq 1 20); do
        echo "    - {id: n$i, data: {type: code, title: N$i, code_language: python3, code: \"import time\\ndef main():\\n    time.sleep(0.03)\\n    return {'v': $i}\\n\", variables: [], outputs: {v: {type: number}}}}"
    done
    echo '    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: [n20, v]}]}}'
    echo '    edges:'
    for i in $(seq 1 20); do echo "    - {source: n$((i - 1)), target: n$i}"; done
    echo '    - {source: n20, target: end}'
} >"$T/spread.yml"
{
    echo 'app: {mode: workflow, name: bench-burst}'; echo 'kind: app'; echo 'version: 0.1.5'
    echo 'workflow:'; echo '  graph:'; echo '    nodes:'
    echo '    - {id: n0, data: {type: start, title: Start, variables: []}}'
    for i in $(seq 1 200); do
        echo "    - {id: n$i, data: {type: template-transform, title: N$i, template: 'step $i', variables: []}}"
    done
    echo '    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: [n200, output]}]}}'
    echo '    edges:'
    for i in $(seq 1 200); do echo "    - {source: n$((i - 1)), target: n$i}"; done
    echo '    - {source: n200, target: end}'
} >"$T/burst.yml"
SPREAD=$("$SLUICE" app import "$T/spread.yml" --store "$PG_URL") || exit 2
BURST=$("$SLUICE" app import "$T/burst.yml" --store "$PG_URL") || exit 2
TOKEN=$("$SLUICE" store admin-token --store "$PG_URL" 2>/dev/null)
# start VAR: a server; VAR gets its base URL
start() {
    local p
    p=$(port)
    "$SLUICE" serve --store "$PG_URL" --listen "127.0.0.1:$p" >/dev/null 2>>"$T/serve.err" &
    PIDS+=($!)
    for _ in $(seq 100); do curl -s "http://127.0.0.1:$p/health" | grep -q ok && break; sleep 0.05; done
    printf -v "$1" 'http://127.0.0.1:%s' "$p"
}
start A
start B
/usr/bin/python3 bench/multi_bench.py "$A" "$B" "$TOKEN" "$SPREAD" "$BURST" "${BENCH_RUNS:-3}"
