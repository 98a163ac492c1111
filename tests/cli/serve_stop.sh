#!/usr/bin/env bash
# CLI: `sluice serve` stops runs within a second, whatever node they are in.
#   - the stop API (POST /v1/workflows/tasks/:task_id/stop) ends a run
#     in a template-transform node that would loop for hours, and one
#     waiting on a model that never answers;
#   - SIGTERM drains: runs get --drain seconds, then are stopped, and the
#     server exits 0; a second SIGTERM stops them at once.
# Needs curl, jq and python3; prints TAP.
. "$(dirname "$0")/lib.bash"

D=$T/data
SPID=          # the server
PEER=          # the silent model provider
BG=()          # background curls
on_exit() {
    local p
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$PEER" ] && kill -KILL "$PEER" 2>/dev/null
    for p in "${BG[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}

for tool in curl jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

# A model provider on loopback that reads the request and never answers.
start_silent_peer "$T/peer-port"

# ---- the apps ----
cat >"$T/spin.yml" <<'EOF'
app: {mode: workflow, name: spin}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: tt
      data:
        type: template-transform
        title: Spin
        variables: []
        template: "{% set s = 'x' * 100000 %}{% for i in range(1000000) %}{% set t = s|replace('x', 'yy') %}{% endfor %}done"
    - {id: end, data: {type: end, title: End, outputs: [{variable: out, value_selector: [tt, output]}]}}
    edges:
    - {source: start, target: tt}
    - {source: tt, target: end}
EOF
cat >"$T/think.yml" <<'EOF'
app: {mode: workflow, name: think}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: llm
      data:
        type: llm
        title: Think
        model: {provider: openai, name: gpt-4o, mode: chat, completion_params: {}}
        prompt_template: [{role: user, text: hello}]
        context: {enabled: false, variable_selector: []}
        vision: {enabled: false}
    - {id: end, data: {type: end, title: End, outputs: [{variable: t, value_selector: [llm, text]}]}}
    edges:
    - {source: start, target: llm}
    - {source: llm, target: end}
EOF
sl app import "$T/spin.yml" --data "$D"
SPIN=$(cat "$T/out")
sl app key create "$SPIN" --data "$D"
SPK=$(cat "$T/out")
OPENAI_API_KEY=sk-test sl app import "$T/think.yml" --data "$D"
THINK=$(cat "$T/out")
sl app key create "$THINK" --data "$D"
THK=$(cat "$T/out")
check "the two apps and their keys" [ -n "$SPK" -a -n "$THK" ]

PORT=$(free_port)
BASE=http://127.0.0.1:$PORT
# start_server LOG [ARGS...]: `sluice serve` on $PORT (stderr to LOG), up
# within 5 s
start_server() {
    local log=$1
    shift
    OPENAI_API_KEY=sk-test OPENAI_BASE_URL="http://127.0.0.1:$PEER_PORT/v1" \
        "$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" "$@" >/dev/null 2>>"$log" &
    SPID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        curl -s --max-time 1 "$BASE/health" 2>/dev/null | grep -q '"ok"' && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    return 1
}
# stream KEY FILE: a streaming run in the background (SSE body in FILE);
# its pid in $spid
stream() {
    curl -sN --max-time 60 -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
        --data-binary '{"inputs": {}, "response_mode": "streaming", "user": "u"}' \
        "$BASE/v1/workflows/run" >"$2" 2>/dev/null &
    spid=$!
    BG+=("$spid")
}
# last FILE: the status in the stream's last event, when it is workflow_finished
last() {
    sed -n 's/^data: //p' "$1" | tail -1 | jq -r 'select(.event == "workflow_finished") | .data.status' 2>/dev/null
}
task_of() { sed -n 's/^data: //p' "$1" | head -1 | jq -r .task_id 2>/dev/null; }

start_server "$T/serve.err"
check "the server is up" [ $? = 0 ]

# ---- the stop API ----
for app in spin think; do
    if [ $app = spin ]; then key=$SPK; node=template-transform; else key=$THK; node=llm; fi
    stream "$key" "$T/$app.sse"
    pid=$spid
    wait_for "$T/$app.sse" "\"node_type\":\"$node\""
    sleep 0.5
    task=$(task_of "$T/$app.sse")
    t0=$(date +%s%N)
    code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $key" \
        -H 'Content-Type: application/json' --data-binary '{"user": "u"}' \
        "$BASE/v1/workflows/tasks/$task/stop")
    wait_pid "$pid" 10
    ms=$(ms_since "$t0")
    check "stop API on a run in its $node node: 200 (got $code), the stream ends within a second (${ms} ms)" \
        [ "$code" = 200 -a "$rc" = 0 -a "$ms" -lt "$SLACK_MS" ]
    check "… with workflow_finished, status stopped (got '$(last "$T/$app.sse")')" \
        [ "$(last "$T/$app.sse")" = stopped ]
done

# ---- SIGTERM: the drain ends with the runs stopped ----
kill -TERM "$SPID"
wait_pid "$SPID" 10
SPID=
start_server "$T/serve2.err" --drain 1
stream "$SPK" "$T/drain.sse"
pid=$spid
wait_for "$T/drain.sse" '"node_type":"template-transform"'
t0=$(date +%s%N)
kill -TERM "$SPID"
wait_pid "$SPID" 10
ms=$(ms_since "$t0")
SPID=
cp "$T/serve2.err" "$T/err"
check "SIGTERM with --drain 1 and a run that would go on for hours: exit 0 (got $rc)" [ "$rc" = 0 ]
check "… within the drain and a second (${ms} ms)" [ "$ms" -lt 2000 ]
wait_pid "$pid" 5
check "… the run's stream ends with workflow_finished, status stopped (got '$(last "$T/drain.sse")')" \
    [ "$(last "$T/drain.sse")" = stopped ]

# ---- a second SIGTERM stops the runs at once ----
start_server "$T/serve3.err"
stream "$SPK" "$T/twice.sse"
pid=$spid
wait_for "$T/twice.sse" '"node_type":"template-transform"'
RUN=$(sed -n 's/^data: //p' "$T/twice.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
kill -TERM "$SPID"
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$SPID"
wait_pid "$SPID" 10
ms=$(ms_since "$t0")
SPID=
check "a second SIGTERM during the 30 s drain: exit 0 (got $rc) within a second (${ms} ms)" \
    [ "$rc" = 0 -a "$ms" -lt "$SLACK_MS" ]
wait_pid "$pid" 5
check "… the run's stream ends with status stopped (got '$(last "$T/twice.sse")')" \
    [ "$(last "$T/twice.sse")" = stopped ]
start_server "$T/serve4.err"
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $SPK" \
    "$BASE/v1/workflows/run/$RUN")
check "… and the stored run says stopped (got $code: $(jq -r .status "$T/out" 2>/dev/null))" \
    [ "$code" = 200 -a "$(jq -r .status "$T/out" 2>/dev/null)" = stopped ]
kill -TERM "$SPID"
wait_pid "$SPID" 10
SPID=

# Runs on the server obey the limits it was started with (--limit, or
# SLUICE_* in its environment): the spinning template ends at max_time_s.
start_server "$T/serve5.err" --limit max_time_s=1
t0=$(date +%s%N)
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 20 -H "Authorization: Bearer $SPK" \
    -H 'Content-Type: application/json' \
    --data-binary '{"inputs": {}, "response_mode": "blocking", "user": "u"}' "$BASE/v1/workflows/run")
ms=$(ms_since "$t0")
check "serve --limit max_time_s=1: the run fails at its deadline (${ms} ms), naming the limit" \
    bash -c "[ '$code' = 200 ] && [ $ms -lt 3500 ] && jq -e '.data.status == \"failed\" and (.data.error | test(\"max_time_s\"))' '$T/out' >/dev/null"
kill -TERM "$SPID"
wait_pid "$SPID" 10
SPID=
timeout 10 "$SLUICE" serve --limit bogus=1 --data "$D" >/dev/null 2>"$T/err"
check "serve --limit with an unknown name: exit 2, naming it" \
    bash -c "[ $? = 2 ] && grep -q bogus '$T/err'"

echo "1..$n"
