#!/usr/bin/env bash
# Runs as jobs through PostgreSQL (issue 20), measured in one go against a
# cluster of the bench's own (tests/cli/pg_lib.bash, PostgreSQL's default
# durability: fsync and synchronous_commit on).
#
# 1. Throughput of the trivial workflow (start -> end), blocking, with wrk
#    (bench/serve/run.lua):
#    a. one process: `sluice serve` runs every request itself;
#    b. through the queue: two `sluice serve --workers 0` (every run is a
#       row, claimed with FOR UPDATE SKIP LOCKED) and two `sluice worker`,
#       one wrk per server.
#    Targets: b >= 2,000 runs/s with p99 <= 50 ms.  Afterwards every run
#    wrk was answered for is in the database, succeeded, once; none is
#    left queued or running.
# 2. A CPU-bound workflow (a code node that computes for ~0.35 s), each
#    worker running one run at a time (--workers 1): QUEUE_CPU_RUNS runs
#    queued at once, drained by one worker, then by two.  Target: two
#    give >= 1.7x one.
#
#   bench/queue_bench.sh [BUILD]          (make bench-queue)
# Knobs: QUEUE_SECONDS (10), QUEUE_CONNS (wrk connections per server, 20),
# QUEUE_CPU_RUNS (32).  Raw output: bench/out/queue/.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
SLUICE=$BUILD/sluice
. tests/cli/pg_lib.bash
pg_have || { echo "bench-queue: needs Debian's postgresql"; exit 2; }
command -v wrk >/dev/null || { echo "bench-queue: needs wrk (apt-get install wrk)"; exit 2; }
secs=${QUEUE_SECONDS:-10}
conns=${QUEUE_CONNS:-20}
cpu_runs=${QUEUE_CPU_RUNS:-32}
out=bench/out/queue
mkdir -p "$out"
T=$(mktemp -d)
PIDS=()
stop_all() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    PIDS=()
}
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; pg_stop; rm -rf "$T"' EXIT
pg_start || { echo "bench-queue: PostgreSQL did not start"; exit 2; }
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
psql_q() { pg_as "$PG_BIN/psql" -qtA -h "$PG_DIR" -U sluice -d postgres -c "$1"; }
calc() { /usr/bin/python3 -c "print($1)"; }
kv() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" $2"; }
D=$PG_URL
APP=$("$SLUICE" app import bench/serve/trivial.yml --store "$D") || exit 2
KEY=$("$SLUICE" app key create "$APP" --store "$D") || exit 2
TOKEN=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)
cat >"$T/cpu.yml" <<'EOF'
app: {mode: workflow, name: bench-cpu}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: work, data: {type: code, title: Work, code_language: python3, code: "def main():\n    s = 0\n    for i in range(10000000):\n        s += i * i % 7\n    return {'v': s}\n", variables: [], outputs: {v: {type: number}}}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: [work, v]}]}}
    edges:
    - {source: start, target: work}
    - {source: work, target: end}
EOF
CPU=$("$SLUICE" app import "$T/cpu.yml" --store "$D") || exit 2

# serve VAR [ARGS…]: a server; VAR gets its base URL
serve() {
    local var=$1 p
    shift
    p=$(port)
    "$SLUICE" serve --store "$D" --listen "127.0.0.1:$p" --max-runs 100000 "$@" >/dev/null \
        2>>"$out/serve.log" &
    PIDS+=($!)
    for _ in $(seq 200); do curl -s "http://127.0.0.1:$p/health" | grep -q ok && break; sleep 0.05; done
    printf -v "$var" 'http://127.0.0.1:%s' "$p"
}
worker() { "$SLUICE" worker --store "$D" "$@" >/dev/null 2>>"$out/worker.log" & PIDS+=($!); }
# wrk_on URL USER FILE: blocking runs for $secs s
wrk_on() {
    wrk -t1 -c"$conns" -d"${secs}s" --timeout 10s -s bench/serve/run.lua "$1" -- "$KEY" "$2" \
        "$T/ids-$2." >"$3" 2>&1
}
# the figures of one wrk output: rps p50_ms p99_ms ok
figures() {
    local line
    line=$(grep '^WRK ' "$1") || { echo "0 0 0 0"; return; }
    local n e d
    n=$(kv requests "$line") e=$(kv non2xx "$line") d=$(kv duration_us "$line")
    echo "$(calc "($n - $e) / ($d / 1e6)") $(calc "$(kv p50_us "$line") / 1000") $(calc "$(kv p99_us "$line") / 1000") $((n - e))"
}
echo "# $(wrk -v 2>&1 | head -1 | cut -d' ' -f1,2); PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1a. one process ----
serve ONE
wrk -t1 -c"$conns" -d2s -s bench/serve/run.lua "$ONE" -- "$KEY" warm >/dev/null 2>&1
wrk_on "$ONE" one "$out/wrk-one.txt"
read -r one_rps one_p50 one_p99 one_ok < <(figures "$out/wrk-one.txt")
stop_all
printf '1a. one process (serve runs every request):     %8.0f runs/s  p50 %6.2f ms  p99 %6.2f ms\n' \
    "$one_rps" "$one_p50" "$one_p99"

# ---- 1b. through the queue ----
serve SA --workers 0
serve SB --workers 0
worker --workers 64
worker --workers 64
wrk -t1 -c"$conns" -d2s -s bench/serve/run.lua "$SA" -- "$KEY" warm >/dev/null 2>&1
wrk_on "$SA" qa "$out/wrk-qa.txt" &
w1=$!
wrk_on "$SB" qb "$out/wrk-qb.txt"
wait "$w1"
read -r a_rps a_p50 a_p99 a_ok < <(figures "$out/wrk-qa.txt")
read -r b_rps b_p50 b_p99 b_ok < <(figures "$out/wrk-qb.txt")
q_rps=$(calc "$a_rps + $b_rps")
q_p99=$(calc "max($a_p99, $b_p99)")
q_p50=$(calc "max($a_p50, $b_p50)")
sleep 1
stop_all
printf '1b. queue: 2 serve --workers 0 + 2 sluice worker: %8.0f runs/s  p50 %6.2f ms  p99 %6.2f ms  (%.2fx one process)\n' \
    "$q_rps" "$q_p50" "$q_p99" "$(calc "$q_rps / $one_rps")"
# every answered run is there, succeeded, once; nothing is left in line
cat "$T"/ids-qa.* "$T"/ids-qb.* 2>/dev/null | sort >"$T/answered"
answered=$(wc -l <"$T/answered")
dups=$(uniq -d "$T/answered" | wc -l)
psql_q "SELECT id FROM runs WHERE app_id='$APP' AND \"user\" IN ('qa','qb') AND status='succeeded'" |
    sort >"$T/stored"
missing=$(comm -23 "$T/answered" "$T/stored" | wc -l)
left=$(psql_q "SELECT count(*) FROM runs WHERE status IN ('queued','running')")
printf '    %d answered, %d of them missing from the store, %d answered twice, %d left queued or running\n' \
    "$answered" "$missing" "$dups" "$left"

# ---- 2. CPU-bound, one worker vs two ----
# part 1's dead rows vacuumed now, not by autovacuum on the cores the
# workers are measured on
psql_q "VACUUM" >/dev/null
psql_q "CHECKPOINT" >/dev/null
serve SQ --workers 0
cpu_drain() {  # N_WORKERS: seconds to run $cpu_runs runs
    local i
    for i in $(seq "$1"); do worker --workers 1; done
    sleep 0.5
    # all queued at once over one connection, then each looked at every
    # 50 ms until they all ended (one process: the bench takes little of
    # the CPU the workers measure); prints the seconds
    /usr/bin/python3 - "$SQ" "$TOKEN" "$CPU" "cpu$1" "$cpu_runs" <<'PY' || exit 2
import http.client, json, sys, time, urllib.parse
base, token, app, user, n = sys.argv[1:6]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
t0 = time.monotonic()
left = []
for _ in range(int(n)):
    c.request("POST", "/admin/apps/%s/runs" % app, json.dumps({"inputs": {}, "user": user}), h)
    r = c.getresponse()
    body = r.read()
    if r.status != 202:
        sys.exit("bench-queue: a run was not queued: %d" % r.status)
    left.append(json.loads(body)["id"])
# each run by its id (a key lookup: a list filtered by user would read
# the whole table at every look, on the cores the workers are measured on)
while left:
    time.sleep(0.05)
    while left:
        c.request("GET", "/admin/runs/%s" % left[0], headers=h)
        if json.loads(c.getresponse().read())["status"] in ("queued", "running"):
            break
        left.pop(0)
print("%.3f" % (time.monotonic() - t0))
PY
    bad=$(psql_q "SELECT count(*) FROM runs WHERE \"user\"='cpu$1' AND status<>'succeeded'")
    # only the workers stop: the server stays
    for p in "${PIDS[@]:1}"; do kill -TERM "$p"; wait "$p" 2>/dev/null; done
    PIDS=("${PIDS[0]}")
    [ "$bad" = 0 ] || echo "bench-queue: $bad CPU-bound run(s) did not succeed" >&2
}
t1=$(cpu_drain 1)
t2=$(cpu_drain 2)
stop_all
printf '2.  CPU-bound, %d runs: one worker %.2f s, two workers %.2f s: %.2fx\n' "$cpu_runs" "$t1" "$t2" \
    "$(calc "$t1 / $t2")"

fail=0
ok() { if [ "$(calc "$1")" = True ]; then echo "    ok: $2"; else echo "    MISSED: $2"; fail=1; fi; }
echo "# targets"
ok "$q_rps >= 2000" "queue >= 2,000 runs/s ($(printf %.0f "$q_rps"))"
ok "$q_p99 <= 50" "queue p99 <= 50 ms ($(printf %.2f "$q_p99"))"
ok "$missing == 0 and $dups == 0 and $left == 0" "no run lost, doubled or left behind"
ok "$t1 / $t2 >= 1.7" "two workers >= 1.7x one ($(printf %.2f "$(calc "$t1 / $t2")"))"
exit $fail
