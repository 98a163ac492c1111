#!/usr/bin/env bash
# CLI: stopping a long run from outside.  SIGINT (Ctrl-C) and SIGTERM cancel
# the run: exit 130, status stopped, the end node never runs, and the
# process is gone promptly.  Prints TAP.
. "$(dirname "$0")/lib.bash"
on_exit() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; }
pid=

# Ten million loop rounds (three nested loops): far longer than the test
# waits, on any machine.
cat >"$T/long.yml" <<'EOF'
app: {mode: workflow, name: long}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: l1, data: {type: loop, title: Outer, loop_count: 1000, break_conditions: [], logical_operator: and, loop_variables: []}}
    - {id: l1s, parentId: l1, data: {type: loop-start, title: in1}}
    - {id: l2, parentId: l1, data: {type: loop, title: Middle, loop_count: 100, break_conditions: [], logical_operator: and, loop_variables: []}}
    - {id: l2s, parentId: l2, data: {type: loop-start, title: in2}}
    - {id: l3, parentId: l2, data: {type: loop, title: Inner, loop_count: 100, break_conditions: [], logical_operator: and, loop_variables: []}}
    - {id: l3s, parentId: l3, data: {type: loop-start, title: in3}}
    - {id: end, data: {type: end, title: End, outputs: []}}
    edges:
    - {source: start, target: l1}
    - {source: l1s, target: l2}
    - {source: l2s, target: l3}
    - {source: l1, target: end}
EOF

# stop SIGNAL EXTRA-ARGS...: starts the run, waits until the outer loop is
# running, sends SIGNAL, and waits up to 10 s for the process to end.
# Sets rc (exit status, or "hung").
stop() {
    local sig=$1; shift
    : >"$T/out"; : >"$T/err"
    "$SLUICE" run "$T/long.yml" --limit max_loop_count=1000 "$@" >"$T/out" 2>"$T/err" &
    pid=$!
    local i
    for ((i = 0; i < 100; i++)); do      # up to 10 s for the run to start
        grep -q 'Outer' "$T/err" "$T/out" 2>/dev/null && break
        sleep 0.1
    done
    sleep 0.3
    kill "-$sig" "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do      # up to 10 s to stop
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        rc=hung
    else
        wait "$pid"
        rc=$?
    fi
    pid=
}

stop INT
check "SIGINT: exit 130 (got $rc)" [ "$rc" = 130 ]
check "SIGINT: the run reports status stopped" grep -q 'workflow stopped' "$T/err"
check "SIGINT: the end node never ran" bash -c "! grep -q 'End (end)' '$T/err'"

stop INT --json
check "SIGINT with --json: exit 130 (got $rc)" [ "$rc" = 130 ]
check "SIGINT with --json: status stopped in the result" \
    python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); sys.exit(d["status"] != "stopped")' "$T/out"

stop INT --events
check "SIGINT with --events: exit 130 (got $rc)" [ "$rc" = 130 ]
check "SIGINT with --events: the last event is workflow_finished, status stopped" \
    python3 -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(not (ev and ev[0]["event"] == "workflow_started" and ev[-1]["event"] == "workflow_finished" and ev[-1]["data"]["status"] == "stopped"))' "$T/out"

stop TERM --events -q
check "SIGTERM: exit 130 too (got $rc)" [ "$rc" = 130 ]

echo "1..$n"
