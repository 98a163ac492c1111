#!/usr/bin/env bash
# CLI: two `sluice serve` on one PostgreSQL database (issue 20).  A run
# executes on the server that got it; any server streams it live (its
# events carried by the store, announced with NOTIFY), resumes a client
# from Last-Event-ID, and stops it within a second.  Starts a cluster of
# its own (pg_lib.bash); skips (counted) without Debian's postgresql.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
. "$(dirname "$0")/pg_lib.bash"
for tool in curl jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
if ! pg_have; then
    echo "1..0 # SKIP PostgreSQL is not installed (Debian's postgresql)"
    exit 0
fi
export SLUICE_RUN_LEASE_S=2   # a killed server's runs fail within seconds
PA= PB= PC= PE=
on_exit() {
    for p in $PA $PB $PC $PE; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    pg_stop
}
if ! pg_start; then
    nok "a PostgreSQL cluster of the test's own starts"
    echo "1..$n"
    exit 1
fi

cat >"$T/steps.yml" <<'EOF2'
app: {mode: workflow, name: multi-steps}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: a, data: {type: code, title: A, code_language: python3, code: "import time\ndef main():\n    time.sleep(0.6)\n    return {'v': 1}\n", variables: [], outputs: {v: {type: number}}}}
    - {id: b, data: {type: code, title: B, code_language: python3, code: "import time\ndef main():\n    time.sleep(0.6)\n    return {'v': 2}\n", variables: [], outputs: {v: {type: number}}}}
    - {id: c, data: {type: code, title: C, code_language: python3, code: "import time\ndef main():\n    time.sleep(0.6)\n    return {'v': 3}\n", variables: [], outputs: {v: {type: number}}}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: [c, v]}]}}
    edges:
    - {source: start, target: a}
    - {source: a, target: b}
    - {source: b, target: c}
    - {source: c, target: end}
EOF2
cat >"$T/nap.yml" <<'EOF2'
app: {mode: workflow, name: multi-nap}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: nap, data: {type: code, title: Nap, code_language: python3, code: "import time\ndef main():\n    time.sleep(20)\n    return {'v': 1}\n", variables: [], outputs: {v: {type: number}}}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: [nap, v]}]}}
    edges:
    - {source: start, target: nap}
    - {source: nap, target: end}
EOF2
D=$PG_URL
STEPS=$("$SLUICE" app import "$T/steps.yml" --store "$D" 2>"$T/err")
NAP=$("$SLUICE" app import "$T/nap.yml" --store "$D" 2>>"$T/err")
check "two apps imported into PostgreSQL" bash -c '[ -n "$0" ] && [ -n "$1" ]' "$STEPS" "$NAP"
serve_start "$T/a.err" || { nok "server A starts"; echo "1..$n"; exit 1; }
A=$BASE PA=$SPID
serve_start "$T/b.err" || { nok "server B starts"; echo "1..$n"; exit 1; }
B=$BASE PB=$SPID
SPID=
AT=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)
ok "two servers on one database"

# a run on A, streamed from B while it runs
BASE=$A req "$AT" POST "/admin/apps/$STEPS/runs" --data-binary '{"inputs":{},"user":"multi"}'
RUN=$(jq -r .id "$T/out")
check "a run started on A ($code)" [ "$code" = 202 ]
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$B/admin/runs/$RUN/events" >"$T/b.sse" 2>/dev/null &
C1=$!
sleep 0.9   # node a has finished, b runs
curl -sN --max-time 30 -H "Authorization: Bearer $AT" -H "Last-Event-ID: 3" \
    "$B/admin/runs/$RUN/events" >"$T/b3.sse" 2>/dev/null &
C2=$!
for _ in $(seq 100); do
    grep -q '"node_started".*"node_id":"b"' "$T/b.sse" 2>/dev/null && break
    sleep 0.02
done
check "B streams A's run live: node b has started, the run has not ended" \
    bash -c 'grep -q "\"node_started\".*\"node_id\":\"b\"" "$0" && ! grep -q workflow_finished "$0"' "$T/b.sse"
wait "$C1" "$C2"
check "… to its end: ids 1..N in order, workflow_finished last" python3 -c '
import sys, json
blocks = [b for b in open(sys.argv[1]).read().split("\n\n") if b.strip() and not b.startswith("event: ping")]
ids = [int(b.split("\n")[0][4:]) for b in blocks]
evs = [json.loads(b.split("\n")[1][6:])["event"] for b in blocks]
sys.exit(0 if ids == list(range(1, len(ids) + 1)) and evs[0] == "workflow_started" and evs[-1] == "workflow_finished" and len(ids) >= 10 else 1)' "$T/b.sse"
BASE=$A req "$AT" GET "/admin/runs/$RUN/events"
check "… the same events A keeps, byte for byte" bash -c 'python3 -c "
import sys, json
a = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith(\"data: \")]
b = [json.loads(l[6:]) for l in open(sys.argv[2]) if l.startswith(\"data: \")]
sys.exit(0 if a == b else 1)" "$0" "$1"' "$T/out" "$T/b.sse"
check "a client resuming on B with Last-Event-ID: 3 gets 4..N, none twice" \
    bash -c '[ "$(grep -m1 "^id: " "$0")" = "id: 4" ] && diff <(grep "^id: " "$0") <(grep "^id: " "$1" | tail -n +4) >/dev/null' \
    "$T/b3.sse" "$T/b.sse"

# a run on A, stopped through B
BASE=$A req "$AT" POST "/admin/apps/$NAP/runs" --data-binary '{"inputs":{},"user":"multi"}'
NRUN=$(jq -r .id "$T/out")
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$B/admin/runs/$NRUN/events" >"$T/nap.sse" 2>/dev/null &
C3=$!
for _ in $(seq 200); do
    grep -q '"node_started".*"node_id":"nap"' "$T/nap.sse" 2>/dev/null && break
    sleep 0.02
done
check "the nap has started on A (seen through B)" grep -q '"node_started".*"node_id":"nap"' "$T/nap.sse"
t0=$(date +%s%N)
BASE=$B req "$AT" POST "/admin/runs/$NRUN/stop"
check "B is asked to stop A's run: stopped ($code)" is 200 '.stopped == true'
st=
for _ in $(seq 100); do
    BASE=$A req "$AT" GET "/admin/runs/$NRUN"
    st=$(jq -r .status "$T/out")
    [ "$st" = running ] || break
    sleep 0.02
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "… A stops it within a second ($st after $ms ms)" bash -c '[ "$0" = stopped ] && [ "$1" -lt 1000 ]' "$st" "$ms"
wait "$C3"
check "… and B's stream of it ends, saying stopped" \
    bash -c 'tail -3 "$0" | grep -q "\"workflow_finished\".*\"status\":\"stopped\""' "$T/nap.sse"

# the Service API's stop (by task id, with an app key) through B, of a
# run on A: by its user it stops, by another user it does not (Dify)
KEY=$("$SLUICE" app key create "$NAP" --store "$D" 2>/dev/null)
go_nap() {
    curl -sN --max-time 30 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        --data-binary '{"inputs":{},"user":"ann","response_mode":"streaming"}' \
        "$A/v1/workflows/run" >"$T/$1.sse" 2>/dev/null &
    for _ in $(seq 200); do
        grep -q '"node_started".*"node_id":"nap"' "$T/$1.sse" 2>/dev/null && break
        sleep 0.02
    done
    sed -n 's/^data: //p' "$T/$1.sse" | head -1 | jq -r .task_id
}
TASK=$(go_nap v1a)
BASE=$B req "$KEY" POST "/v1/workflows/tasks/$TASK/stop" -H 'Content-Type: application/json' \
    --data-binary '{"user":"bob"}'
sleep 0.5
check "/v1 stop through B by another user: success, the run goes on ($code)" \
    bash -c '[ "$0" = 200 ] && ! grep -q workflow_finished "$1"' "$code" "$T/v1a.sse"
t0=$(date +%s%N)
BASE=$B req "$KEY" POST "/v1/workflows/tasks/$TASK/stop" -H 'Content-Type: application/json' \
    --data-binary '{"user":"ann"}'
for _ in $(seq 100); do
    grep -q workflow_finished "$T/v1a.sse" && break
    sleep 0.02
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "/v1 stop through B by its user: A's run stops within a second ($ms ms)" \
    bash -c 'grep -q "\"workflow_finished\".*\"status\":\"stopped\"" "$0" && [ "$1" -lt 1000 ]' "$T/v1a.sse" "$ms"

# --max-runs counts an app's runs on every server
if serve_start "$T/c.err" --max-runs 1; then
    C=$BASE PC=$SPID
    SPID=
    BASE=$A req "$AT" POST "/admin/apps/$NAP/runs" --data-binary '{"inputs":{},"user":"multi"}'
    MRUN=$(jq -r .id "$T/out")
    BASE=$C req "$AT" POST "/admin/apps/$NAP/runs" --data-binary '{"inputs":{},"user":"multi"}'
    check "a server with --max-runs 1 refuses a run while A runs one of the app: 429 ($code)" \
        is 429 '.code == "too_many_requests"'
    BASE=$C req "$AT" POST "/admin/apps/$STEPS/runs" --data-binary '{"inputs":{},"user":"multi"}'
    check "… and runs another app ($code)" is 202
    BASE=$A req "$AT" POST "/admin/runs/$MRUN/stop"
    sleep 0.3
    # C dies (kill -9) in the middle of a run B is streaming: once its
    # lease runs out the run is failed, and B's stream of it ends
    BASE=$C req "$AT" POST "/admin/apps/$NAP/runs" --data-binary '{"inputs":{},"user":"multi"}'
    KRUN=$(jq -r .id "$T/out")
    curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$B/admin/runs/$KRUN/events" >"$T/k.sse" 2>/dev/null &
    C5=$!
    for _ in $(seq 200); do
        grep -q '"node_started".*"node_id":"nap"' "$T/k.sse" 2>/dev/null && break
        sleep 0.02
    done
    t0=$(date +%s%N)
    kill -KILL "$PC"
    wait "$PC" 2>/dev/null
    PC=
    wait "$C5"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    BASE=$A req "$AT" GET "/admin/runs/$KRUN"
    check "C killed mid-run: B's stream of it ends ($ms ms; lease ${SLUICE_RUN_LEASE_S} s)" \
        bash -c '[ "$0" -lt 6000 ] && grep -q "node_id\":\"nap" "$1"' "$ms" "$T/k.sse"
    check "… and the run is failed, interrupted" is 200 '.status == "failed" and (.error | test("interrupted"))'
else
    nok "a third server starts"
fi

# B stops while a client follows a run A runs: B's stream ends, B exits
# at once and cleanly, and the run goes on on A
BASE=$A req "$AT" POST "/admin/apps/$NAP/runs" --data-binary '{"inputs":{},"user":"multi"}'
LRUN=$(jq -r .id "$T/out")
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$B/admin/runs/$LRUN/events" >"$T/last.sse" 2>/dev/null &
C4=$!
for _ in $(seq 200); do
    grep -q '"node_started".*"node_id":"nap"' "$T/last.sse" 2>/dev/null && break
    sleep 0.02
done
t0=$(date +%s%N)
kill -TERM "$PB"
wait "$PB"
rc=$?
PB=
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$C4"
check "B stops with a client following A's run: exit $rc after $ms ms, its stream ended" \
    bash -c '[ "$0" = 0 ] && [ "$1" -lt 3000 ] && grep -q "node_id\":\"nap" "$2"' "$rc" "$ms" "$T/last.sse"
BASE=$A req "$AT" GET "/admin/runs/$LRUN"
check "… and the run goes on on A" is 200 '.status == "running"'
BASE=$A req "$AT" POST "/admin/runs/$LRUN/stop"

kill -TERM "$PA" 2>/dev/null
wait "$PA" 2>/dev/null
PA=

# --rate-limit is one bucket for every server: two servers at 4/s take
# about 4 (one second's worth) of a quick burst between them, not 8
cat >"$T/quick.yml" <<'EOF2'
app: {mode: workflow, name: multi-quick}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: end, data: {type: end, title: End, outputs: []}}
    edges:
    - {source: start, target: end}
EOF2
QUICK=$("$SLUICE" app import "$T/quick.yml" --store "$D" 2>>"$T/err")
QKEY=$("$SLUICE" app key create "$QUICK" --store "$D" 2>>"$T/err")
if serve_start "$T/c.err" --rate-limit 4; then
    C=$BASE PC=$SPID
    serve_start "$T/d.err" --rate-limit 4 && E=$BASE PE=$SPID
    SPID=
    took=0 refused=0
    for i in $(seq 8); do
        for base in "$C" "$E"; do
            c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST "$base/v1/workflows/run" \
                -H "Authorization: Bearer $QKEY" -H 'Content-Type: application/json' \
                -d '{"inputs":{},"user":"rate","response_mode":"blocking"}')
            [ "$c" = 200 ] && took=$((took + 1))
            [ "$c" = 429 ] && refused=$((refused + 1))
        done
    done
    check "--rate-limit 4 on two servers: $took of 16 quick requests taken, $refused refused (429)" \
        bash -c '[ "$0" -ge 3 ] && [ "$0" -le 6 ] && [ $(($0 + $1)) = 16 ]' "$took" "$refused"
    kill -TERM "$PC" "$PE" 2>/dev/null
    wait "$PC" "$PE" 2>/dev/null
    PC= PE=
else
    nok "servers with --rate-limit start"
fi
check "neither server's log has a sanitizer report" bash -c '! grep -q Sanitizer "$0" "$1"' "$T/a.err" "$T/b.err"
echo "1..$n"
