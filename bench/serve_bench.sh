#!/usr/bin/env bash
# The load benchmark of `sluice serve` (issue 6): throughput and latency of
# blocking runs, 1,000 concurrent streaming clients, and the server's idle
# memory, each with PASS/FAIL against its target.
#
#   bench/serve_bench.sh [BUILD]      BUILD holds sluice (default: build)
#
# The script starts its own server on loopback (a free port) with a fresh
# data folder in bench/out/serve/data, imports bench/serve/trivial.yml
# (start -> end) and bench/serve/stream.yml (start -> 3 pass-through nodes
# -> end) with `sluice app import`, and makes a key for each with
# `sluice app key create`.  Then:
#
# 1. wrk (Debian package wrk) POSTs blocking runs of the trivial app with
#    bench/serve/run.lua for SERVE_WARMUP s (user bench-warmup, not counted)
#    and SERVE_DURATION s (user bench) on SERVE_CONNS connections.  Target:
#    >= 5,000 runs/s with p99 <= 20 ms.  Then the database
#    (sqlite3 DATA/sluice.db) must hold every run wrk made: each run id wrk
#    got back is stored as succeeded with its 7 events, and the stored runs
#    are the answered requests plus at most those still in flight when wrk
#    stopped (wrk drops them unanswered; the server still runs them).
# 2. bench/serve/stream_clients.py opens SERVE_CLIENTS (1,000) connections
#    at once, sends a streaming run on each and reads every SSE stream to the
#    end.  Target: every client completes with workflow_started, one
#    node_started and node_finished per node, workflow_finished, and no event
#    lost; the database holds the same number of events for each run.
#    The server runs with --max-runs SERVE_MAX_RUNS (default: SERVE_CLIENTS),
#    since the default cap (100 runs per app) would refuse 1,000 at once.
# 3. VmRSS of the server (/proc/PID/status) after start, after the blocking
#    load and after the streaming load (idle again).  Target: <= 15 MB
#    (SERVE_RSS_MB, in MiB).
#
# Knobs (environment): SERVE_CONNS (wrk connections, 32), SERVE_THREADS (wrk
# threads, 1), SERVE_DURATION (10), SERVE_WARMUP (2), SERVE_CLIENTS (1000),
# SERVE_MAX_RUNS, SERVE_RSS_MB (15), SERVE_PORT (default: a free port).
# The exit status is 1 when a target is missed, 2 when the bench cannot run.
# Raw output goes to bench/out/serve/ (server.log, wrk and client output).
# About 20 s with the defaults.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
bin=$BUILD/sluice
conns=${SERVE_CONNS:-32}
threads=${SERVE_THREADS:-1}
duration=${SERVE_DURATION:-10}
warmup=${SERVE_WARMUP:-2}
clients=${SERVE_CLIENTS:-1000}
max_runs=${SERVE_MAX_RUNS:-$clients}
rss_mb=${SERVE_RSS_MB:-15}
target_rps=5000 target_p99_ms=20
# workflow_started, 2 x (node_started, node_finished), the end node's text_chunk
# (its output streams, as in Dify), workflow_finished
trivial_events=7
stream_nodes=5 stream_chunks=1

die() { echo "serve bench: $*" >&2; exit 2; }
[ -x "$bin" ] || die "$bin is missing; run make"
for t in wrk sqlite3 python3 curl; do
  command -v "$t" >/dev/null || die "$t is missing (Debian package $t)"
done

out=bench/out/serve
data=$out/data
rm -rf "$out"
mkdir -p "$out"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
t0=$(date +%s)

# ---- helpers ----
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }        # kv KEY "LINE k=v …"
calc() { awk "BEGIN { printf \"%s\", $1 }"; }                  # calc 'EXPR' (awk syntax)
fmt() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); r = ""
  while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
  printf "%s%s", s, r }'; }                                    # 12345 -> 12,345
sql() { sqlite3 "$data/sluice.db" "$@"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status"; }
nthreads() { awk '/^Threads:/ { print $2 }' "/proc/$pid/status"; }
ticks() { awk '{ print $14 + $15 }' "$1" 2>/dev/null || echo 0; }  # utime + stime of a /proc stat file
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }  # all cores, not idle
alive() { kill -0 "$pid" 2>/dev/null || die "the server died (see $out/server.log)"; }

# Waits until the runs of USER stop changing and none is running (the runs
# wrk left in flight still finish on the server).
settle_runs() {
  local user=$1 prev=-1 n
  for _ in $(seq 100); do
    n=$(sql "SELECT count(*) || ' ' || sum(status = 'running') FROM runs WHERE user = '$user'")
    [ "$n" = "$prev" ] && [ "${n#* }" = 0 ] && break
    prev=$n
    sleep 0.2
  done
}

# Waits until the server is back to its idle threads (main, store writer,
# listener), then one more second.
settle_idle() {
  for _ in $(seq 50); do
    [ "$(nthreads)" -le "$idle_threads" ] && break
    sleep 0.1
  done
  sleep 1
}

# ---- the server ----
port=${SERVE_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
trivial_app=$("$bin" app import bench/serve/trivial.yml --data "$data" 2>>"$out/server.log")
trivial_key=$("$bin" app key create "$trivial_app" --data "$data" 2>>"$out/server.log")
stream_app=$("$bin" app import bench/serve/stream.yml --data "$data" 2>>"$out/server.log")
stream_key=$("$bin" app key create "$stream_app" --data "$data" 2>>"$out/server.log")

"$bin" serve --listen "127.0.0.1:$port" --data "$data" --max-runs "$max_runs" 2>>"$out/server.log" &
pid=$!
stop_server() {
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
trap stop_server EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  alive
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || die "the server does not answer /health"
sleep 0.5
idle_threads=$(nthreads)
rss_start=$(rss_kb)
# the store writer: the thread besides main still called sluice when idle
writer_tid=
for t in "/proc/$pid/task"/*; do
  tid=${t##*/}
  if [ "$tid" != "$pid" ] && [ "$(cat "$t/comm")" = sluice ]; then writer_tid=$tid; break; fi
done

echo "# $(nproc) cores: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "# sluice serve on 127.0.0.1:$port, pid $pid, data $data, --max-runs $max_runs"
echo "# $(wrk -v 2>&1 | head -1 | cut -d' ' -f1,2); $(python3 --version); sqlite3 $(sqlite3 --version | cut -d' ' -f1)"
echo "# idle after start: VmRSS $rss_start KB, $idle_threads threads; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. blocking runs with wrk ----
echo "# 1. blocking POST /v1/workflows/run of start -> end: wrk -t$threads -c$conns, ${warmup} s warm-up, ${duration} s measured"
url="http://127.0.0.1:$port"
wrk -t"$threads" -c"$conns" -d"${warmup}s" -s bench/serve/run.lua "$url" -- "$trivial_key" bench-warmup \
  >"$out/wrk-warmup.txt"
settle_runs bench-warmup
alive
cpu0=$(ticks "/proc/$pid/stat") busy0=$(busy_ticks)
wcpu0=$( [ -n "$writer_tid" ] && ticks "/proc/$pid/task/$writer_tid/stat" || echo 0)
TIMEFORMAT='%U %S %R'
{ time wrk -t"$threads" -c"$conns" -d"${duration}s" --timeout 10s -s bench/serve/run.lua "$url" \
    -- "$trivial_key" bench "$out/wrk-ids." >"$out/wrk.txt"; } 2>"$out/wrk-time.txt"
cpu1=$(ticks "/proc/$pid/stat") busy1=$(busy_ticks)
wcpu1=$( [ -n "$writer_tid" ] && ticks "/proc/$pid/task/$writer_tid/stat" || echo 0)
alive
line=$(grep '^WRK ' "$out/wrk.txt") || die "no WRK line from wrk (see $out/wrk.txt)"
answered=$(kv requests "$line") sent=$(kv sent "$line") non2xx=$(kv non2xx "$line")
sockerr=$(( $(kv connect "$line") + $(kv read "$line") + $(kv write "$line") + $(kv timeout "$line") ))
dur_s=$(calc "$(kv duration_us "$line") / 1e6")
ok2xx=$(( answered - non2xx ))
rps=$(calc "$ok2xx / $dur_s")
p50=$(calc "$(kv p50_us "$line") / 1000") p90=$(calc "$(kv p90_us "$line") / 1000")
p99=$(calc "$(kv p99_us "$line") / 1000") pmax=$(calc "$(kv max_us "$line") / 1000")
read -r wrk_user wrk_sys wrk_real < <(tail -1 "$out/wrk-time.txt")
hz=$(getconf CLK_TCK)
srv_cpu=$(calc "($cpu1 - $cpu0) / $hz")
wr_cpu=$(calc "($wcpu1 - $wcpu0) / $hz")
printf '  %s requests/s (%s answered in %.2f s, %s sent), %s non-2xx, %s socket errors\n' \
  "$(fmt "$(calc "$answered / $dur_s")")" "$(fmt "$answered")" "$dur_s" "$(fmt "$sent")" "$non2xx" "$sockerr"
printf '  latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n' "$p50" "$p90" "$p99" "$pmax"
other=$(calc "(($busy1 - $busy0) / $hz - $srv_cpu - $wrk_user - $wrk_sys) / $wrk_real")
printf '  CPU: server %.2f cores (store writer thread %.0f%% of one), wrk %.2f, everything else on the machine %.2f, of %d\n' \
  "$(calc "$srv_cpu / $wrk_real")" "$(calc "100 * $wr_cpu / $wrk_real")" \
  "$(calc "($wrk_user + $wrk_sys) / $wrk_real")" "$other" "$(nproc)"

# every run persisted?
settle_runs bench
cat "$out"/wrk-ids.* >"$out/wrk-ids.txt" 2>/dev/null || : >"$out/wrk-ids.txt"
rm -f "$out"/wrk-ids.[0-9]*
read -r stored succeeded events ids_given ids_missing < <(sql <<EOF
CREATE TEMP TABLE ids(id TEXT);
.import $out/wrk-ids.txt ids
.separator " "
SELECT (SELECT count(*) FROM runs WHERE user = 'bench'),
       (SELECT count(*) FROM runs WHERE user = 'bench' AND status = 'succeeded'),
       (SELECT coalesce(sum(json_array_length(events)), 0) FROM run_log
          WHERE run_id IN (SELECT id FROM runs WHERE user = 'bench')),
       (SELECT count(*) FROM ids),
       (SELECT count(*) FROM ids WHERE id NOT IN (SELECT id FROM runs WHERE status = 'succeeded'));
EOF
)
[ -n "${ids_missing:-}" ] || die "cannot read the runs from $data/sluice.db"
inflight=$(( stored - ok2xx ))
printf '  database: %s runs stored (%s succeeded), %s events; %s run ids from wrk, %s of them missing\n' \
  "$(fmt "$stored")" "$(fmt "$succeeded")" "$(fmt "$events")" "$(fmt "$ids_given")" "$ids_missing"
rss_blocking=$( settle_idle; rss_kb )
echo "  idle after the blocking load: VmRSS $rss_blocking KB"

# ---- 2. streaming clients ----
echo "# 2. $clients streaming clients at once on start -> 3 pass-through nodes -> end ($stream_nodes nodes, $((2 + 2 * stream_nodes + stream_chunks)) events a run)"
alive
sline=$(python3 bench/serve/stream_clients.py 127.0.0.1 "$port" "$stream_key" "$clients" "$stream_nodes" \
          --chunks "$stream_chunks" --ids "$out/stream-ids.txt" --timeout 60 2>"$out/stream-errors.txt" | tee "$out/stream.txt" | grep '^STREAM ') \
  || die "no STREAM line from bench/serve/stream_clients.py (see $out/stream-errors.txt)"
sed 's/^/  client: /' "$out/stream-errors.txt"
completed=$(kv completed "$sline") refused=$(kv refused "$sline")
failed=$(( $(kv failed "$sline") - refused ))        # failed otherwise than by a 429
sevents=$(kv events "$sline") sexpected=$(kv expected "$sline") lost=$(kv lost "$sline")
printf '  %s of %s clients completed (%s refused with 429, %s failed otherwise) in %.2f s (connecting all: %.2f s)\n' \
  "$completed" "$clients" "$refused" "$failed" "$(kv total_s "$sline")" "$(kv connect_s "$sline")"
printf '  %s of %s events received, %s lost; first event p50 %s ms, p99 %s ms; end of stream p50 %s ms, p99 %s ms\n' \
  "$(fmt "$sevents")" "$(fmt "$sexpected")" "$(fmt "$lost")" "$(kv first_event_p50_ms "$sline")" \
  "$(kv first_event_p99_ms "$sline")" "$(kv finish_p50_ms "$sline")" "$(kv finish_p99_ms "$sline")"
settle_runs bench-stream
read -r sruns sbad < <(sql <<EOF
CREATE TEMP TABLE s(id TEXT, n INTEGER);
.mode csv
.import $out/stream-ids.txt s
.mode list
.separator " "
SELECT (SELECT count(*) FROM runs WHERE user = 'bench-stream'),
       (SELECT count(*) FROM s LEFT JOIN (SELECT run_id, json_array_length(events) AS c FROM run_log) e
          ON e.run_id = s.id WHERE e.c IS NULL OR e.c != s.n);
EOF
)
[ -n "${sbad:-}" ] || die "cannot read the streaming runs from $data/sluice.db"
printf '  database: %s streaming runs stored; %s completed stream(s) whose events differ from the stored ones\n' \
  "$sruns" "$sbad"
peak_kb=$(hwm_kb)
rss_stream=$( settle_idle; rss_kb )
echo "  idle after the streaming load: VmRSS $rss_stream KB (peak VmHWM $peak_kb KB, $(nthreads) threads)"
stop_server
trap - EXIT

# ---- verdicts ----
status=0
verdict() { # verdict OK TEXT
  if [ "$1" = 1 ]; then echo "  PASS  $2"; else echo "  FAIL  $2"; status=1; fi
}
ge() { awk "BEGIN { exit !($1 >= $2) }" && echo 1 || echo 0; }
le() { awk "BEGIN { exit !($1 <= $2) }" && echo 1 || echo 0; }
echo
echo "Target: a trivial workflow, blocking, every run persisted: >= $(fmt $target_rps) runs/s with p99 <= $target_p99_ms ms ($conns connections)"
verdict "$(ge "$rps" $target_rps)" "$(printf 'throughput  %s runs/s (2xx answers per second)' "$(fmt "$rps")")"
verdict "$(le "$p99" $target_p99_ms)" "$(printf 'latency     p99 %.2f ms (p50 %.2f ms)' "$p99" "$p50")"
persist_ok=0
if [ "$non2xx" = 0 ] && [ "$sockerr" = 0 ] && [ "$ids_missing" = 0 ] && [ "$ids_given" = "$ok2xx" ] \
   && [ "$succeeded" = "$stored" ] && [ "$inflight" -ge 0 ] && [ "$stored" -le "$sent" ] \
   && [ "$events" = $(( trivial_events * stored )) ]; then persist_ok=1; fi
verdict $persist_ok "$(printf 'persisted   %s stored runs = %s answered + %s still in flight when wrk stopped (it sent %s); every answered run stored as succeeded with its %d events; %s non-2xx' \
  "$(fmt "$stored")" "$(fmt "$ok2xx")" "$inflight" "$(fmt "$sent")" "$trivial_events" "$non2xx")"
echo
echo "Target: $(fmt "$clients") concurrent streaming clients, each receiving every event of its run"
stream_ok=0
[ "$completed" = "$clients" ] && stream_ok=1
verdict $stream_ok "clients     $completed of $clients completed ($refused refused with 429, $failed failed otherwise)"
events_ok=0
[ "$lost" = 0 ] && [ "$sevents" = "$sexpected" ] && [ "$sbad" = 0 ] && [ "$sruns" = "$completed" ] && events_ok=1
verdict $events_ok "$(printf 'events      %s lost of %s; %s completed stream(s) differ from the database; %.2f s for all' \
  "$(fmt "$lost")" "$(fmt "$sexpected")" "$sbad" "$(kv total_s "$sline")")"
echo
echo "Target: idle server RSS <= $rss_mb MB (VmRSS)"
lim=$(( rss_mb * 1024 ))
verdict "$(le "$rss_start" $lim)" "$(printf 'after start                %5.1f MB' "$(calc "$rss_start / 1024")")"
verdict "$(le "$rss_blocking" $lim)" "$(printf 'after the blocking load    %5.1f MB' "$(calc "$rss_blocking / 1024")")"
verdict "$(le "$rss_stream" $lim)" "$(printf 'after the streaming load   %5.1f MB (peak %.1f MB)' \
  "$(calc "$rss_stream / 1024")" "$(calc "$peak_kb / 1024")")"
echo "# serve bench took $(( $(date +%s) - t0 )) s"
exit $status
