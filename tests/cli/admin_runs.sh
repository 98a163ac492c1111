#!/usr/bin/env bash
# CLI: the admin API's runs (docs/server.md, "Runs of every app"), over
# real HTTP with the admin token:
#   - GET /admin/runs lists the runs of every app, newest first, filtered
#     by app, status, user and time, in pages continued by their cursor
#     (nothing repeated, nothing missed);
#   - GET /admin/runs/ID: one run of any app; unknown ids are 404;
#   - GET /admin/runs/ID/events: its events as an event stream, numbered,
#     and resumed after Last-Event-ID (or ?after=) with nothing lost;
#   - POST /admin/runs/ID/stop stops a run of any app, whoever started it;
#   - /admin/apps/ID/v1/…: the Service API of any app with the admin token
#     (run blocking and streaming, parameters, files/upload); app keys,
#     no token and unknown apps are refused;
#   - bad arguments are 400 naming the argument; no token, 401.
# Needs curl and jq; prints TAP.  SLUICE_TEST_STORE names another store
# to run against (tests/cli/serve_pg.sh: PostgreSQL), else a folder.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/serve_lib.bash"
for tool in curl jq; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

D=${SLUICE_TEST_STORE:-$T/data}
SPID=
on_exit() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    wait 2>/dev/null
}

# two apps: one that answers, one that fails on a bad input
cat >"$T/echo.yml" <<'EOF'
app: {mode: workflow, name: admin-echo}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables:
        - {variable: x, label: X, type: text-input, required: true}
    - id: tpl
      data: {type: template-transform, title: T, template: '<{{ x }}>', variables: [{variable: x, value_selector: [start, x]}]}
    - id: end
      data: {type: end, title: End, outputs: [{variable: y, value_selector: [tpl, output]}]}
    edges:
    - {source: start, target: tpl}
    - {source: tpl, target: end}
EOF
cat >"$T/fail.yml" <<'EOF'
app: {mode: workflow, name: admin-fail}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [{variable: x, label: X, type: text-input, required: true}]}
    - id: code
      data:
        type: code
        title: Boom
        code_language: python3
        code: |
          def main(x):
              raise ValueError("boom " + x)
        variables: [{variable: x, value_selector: [start, x]}]
        outputs: {y: {type: string}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: y, value_selector: [code, y]}]}
    edges:
    - {source: start, target: code}
    - {source: code, target: end}
EOF
cat >"$T/slow.yml" <<'EOF2'
app: {mode: workflow, name: admin-slow}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: nap
      data:
        type: code
        title: Nap
        code_language: python3
        code: |
          import time
          def main():
              time.sleep(3)
              return {"slept": 3}
        variables: []
        outputs: {slept: {type: number}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: s, value_selector: [nap, slept]}]}
    edges:
    - {source: start, target: nap}
    - {source: nap, target: end}
EOF2
sl app import "$T/slow.yml" --data "$D"
SLOW=$(cat "$T/out")
sl app key create "$SLOW" --data "$D"
SK=$(cat "$T/out")
sl app import "$T/echo.yml" --data "$D"
ECHO=$(cat "$T/out")
sl app import "$T/fail.yml" --data "$D"
FAIL=$(cat "$T/out")
sl app key create "$ECHO" --data "$D"
EK=$(cat "$T/out")
sl app key create "$FAIL" --data "$D"
FK=$(cat "$T/out")

if ! serve_start "$T/serve.err"; then
    nok "sluice serve starts"
    echo "1..$n"
    exit 1
fi
AT=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)

# 7 runs of echo (users alice and bob), 2 failed runs of fail
for i in 1 2 3 4 5 6 7; do
    u=alice
    [ $((i % 2)) = 0 ] && u=bob
    req "$EK" POST /v1/workflows/run -H 'Content-Type: application/json' \
        --data-binary "{\"inputs\":{\"x\":\"r$i\"},\"user\":\"$u\",\"response_mode\":\"blocking\"}"
done
check "the runs ran (last: $code)" is 200 '.data.outputs.y == "<r7>"'
for i in 1 2; do
    req "$FK" POST /v1/workflows/run -H 'Content-Type: application/json' \
        --data-binary "{\"inputs\":{\"x\":\"f$i\"},\"user\":\"carol\",\"response_mode\":\"blocking\"}"
done
FAILED_RUN=$(jq -r '.workflow_run_id // .data.id' "$T/out")

req "" GET /admin/runs
check "no token: 401 ($code)" is 401 '.code == "unauthorized"'

req "$AT" GET "/admin/runs"
check "every app's runs, newest first (9 runs)" is 200 \
    '(.data | length) == 9 and .has_more == false and .next == null and
     ([.data[].created_at] | . == (sort | reverse)) and
     ([.data[].app_id] | unique | length) == 2'
check "… each with its app, status, user and figures" is 200 \
    '.data[0] | has("id") and has("app_id") and has("status") and has("user") and
     has("elapsed_time") and has("total_tokens") and has("total_steps") and has("finished_at")'
req "$AT" GET "/admin/runs?app=$ECHO"
check "?app: that app's runs only" is 200 \
    "(.data | length) == 7 and all(.data[]; .app_id == \"$ECHO\" and .status == \"succeeded\")"
req "$AT" GET "/admin/runs?status=failed"
check "?status=failed: the two failed runs, with their error" is 200 \
    "(.data | length) == 2 and all(.data[]; .app_id == \"$FAIL\" and (.error | test(\"boom\")))"
req "$AT" GET "/admin/runs?user=bob"
check "?user=bob: his three runs" is 200 '(.data | length) == 3 and all(.data[]; .user == "bob")'
req "$AT" GET "/admin/runs?since=4102444800"
check "?since in the future: none" is 200 '(.data | length) == 0'
req "$AT" GET "/admin/runs?until=1"
check "?until in the past: none" is 200 '(.data | length) == 0'

# pages of 2 through the cursor: every run once, in order
ids=()
next=
for _ in 1 2 3 4 5 6; do
    req "$AT" GET "/admin/runs?limit=2${next:+&before=$(jq -rn --arg v "$next" '$v|@uri')}"
    while read -r id; do ids+=("$id"); done < <(jq -r '.data[].id' "$T/out")
    next=$(jq -r '.next // empty' "$T/out")
    [ -z "$next" ] && break
done
req "$AT" GET "/admin/runs?limit=100"
all=$(jq -r '.data[].id' "$T/out" | tr '\n' ' ')
check "pages of 2 by the cursor: all 9 runs once, in order (${#ids[@]})" \
    [ "$(printf '%s ' "${ids[@]}")" = "$all" ]

req "$AT" GET "/admin/runs?limit=500"
check "limit over 100: 400 naming it ($code)" is 400 '.message | test("limit")'
req "$AT" GET "/admin/runs?since=yesterday"
check "a since that is no number: 400 ($code)" is 400 '.message | test("since")'
req "$AT" GET "/admin/runs?before=nonsense"
check "a before that is no cursor: 400 ($code)" is 400 '.message | test("before")'

# one run, and its events
req "$AT" GET "/admin/runs/$FAILED_RUN"
check "GET /admin/runs/ID: a run of any app" is 200 \
    ".id == \"$FAILED_RUN\" and .workflow_id == \"$FAIL\" and .status == \"failed\" and
     .app_version == 1 and .user == \"carol\""
req "$AT" GET "/admin/runs/nope"
check "an unknown run: 404 ($code)" is 404 '.code == "not_found"'
req "$AT" GET "/admin/runs/$FAILED_RUN/events"
cp "$T/out" "$T/events"
check "its events: an event stream, numbered from 1, each a stored event ($code)" \
    bash -c '[ "$0" = 200 ] && python3 -c "
import json, sys
blocks = [b for b in open(sys.argv[1]).read().split(\"\n\n\") if b.strip()]
ok = len(blocks) >= 3
for i, b in enumerate(blocks):
    lines = b.split(\"\n\")
    ok = ok and len(lines) == 2 and lines[0] == \"id: %d\" % (i + 1) and lines[1].startswith(\"data: \")
    ev = json.loads(lines[1][6:])
    ok = ok and \"event\" in ev
ok = ok and json.loads(blocks[0].split(\"\n\")[1][6:])[\"event\"] == \"workflow_started\"
ok = ok and json.loads(blocks[-1].split(\"\n\")[1][6:])[\"event\"] == \"workflow_finished\"
sys.exit(0 if ok else 1)" "$1"' "$code" "$T/events"
total=$(grep -c '^id: ' "$T/events")
req "$AT" GET "/admin/runs/$FAILED_RUN/events" -H "Last-Event-ID: 2"
check "Last-Event-ID: 2 resumes with event 3, the rest unchanged" \
    bash -c '[ "$(head -1 "$0")" = "id: 3" ] && [ "$(grep -c "^id: " "$0")" = "$1" ] &&
             diff <(tail -n +$(( $(grep -n "^id: 3\$" "$2" | cut -d: -f1) )) "$2") "$0" >/dev/null' \
    "$T/out" "$((total - 2))" "$T/events"
req "$AT" GET "/admin/runs/$FAILED_RUN/events?after=$total"
check "?after= the last: nothing more ($code)" bash -c '[ "$0" = 200 ] && [ ! -s "$1" ]' "$code" "$T/out"
req "$AT" GET "/admin/runs/$FAILED_RUN/events" -H "Last-Event-ID: x"
check "a Last-Event-ID that is no number: 400 ($code)" is 400
req "$AT" GET "/admin/runs/$FAILED_RUN/nothing"
check "an unknown path under a run: 404 ($code)" is 404

# a run that is still running: listed as running; its events come live,
# numbered as a finished run's, and the stream ends with the run
curl -s --max-time 30 -H "Authorization: Bearer $SK" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{},"user":"dan","response_mode":"blocking"}' \
    "$BASE/v1/workflows/run" >"$T/slow.out" 2>/dev/null &
CPID=$!
RUNNING=
for _ in $(seq 100); do
    req "$AT" GET "/admin/runs?status=running"
    RUNNING=$(jq -r '.data[0].id // empty' "$T/out")
    [ -n "$RUNNING" ] && break
    sleep 0.05
done
check "a running run is listed as running" [ -n "$RUNNING" ]
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$BASE/admin/runs/$RUNNING/events" \
    >"$T/live" 2>/dev/null &
LPID=$!
curl -sN --max-time 30 -H "Authorization: Bearer $AT" -H "Last-Event-ID: 2" \
    "$BASE/admin/runs/$RUNNING/events" >"$T/live2" 2>/dev/null &
LPID2=$!
for _ in $(seq 100); do
    grep -q '"node_started".*"node_id":"nap"' "$T/live" 2>/dev/null && break
    sleep 0.02
done
check "its events while it runs: the nap's node_started arrives live, the run not ended" \
    bash -c 'grep -q "\"node_started\".*\"node_id\":\"nap\"" "$0" && ! grep -q workflow_finished "$0" &&
             kill -0 "$1"' "$T/live" "$CPID"
wait "$CPID" "$LPID" "$LPID2"
check "… and the live stream ends with the run: workflow_finished last, ids 1..N in order" \
    python3 -c '
import sys, json
blocks = [b for b in open(sys.argv[1]).read().split("\n\n") if b.strip()]
ids = [int(b.split("\n")[0][4:]) for b in blocks]
evs = [json.loads(b.split("\n")[1][6:])["event"] for b in blocks]
sys.exit(0 if ids == list(range(1, len(ids) + 1)) and evs[0] == "workflow_started" and
         evs[-1] == "workflow_finished" else 1)' "$T/live"
req "$AT" GET "/admin/runs/$RUNNING/events"
check "… the same events as the stored replay, byte for byte" \
    bash -c '[ "$0" = 200 ] && python3 -c "
import sys, json
a = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith(\"data: \")]
b = [json.loads(l[6:]) for l in open(sys.argv[2]) if l.startswith(\"data: \")]
sys.exit(0 if a == b and len(a) > 4 else 1)" "$1" "$2"' "$code" "$T/live" "$T/out"
check "… a reader joining with Last-Event-ID: 2 got events 3..N, none twice" \
    bash -c '[ "$(head -1 "$0")" = "id: 3" ] && diff <(grep "^id: " "$0") <(grep "^id: " "$1" | tail -n +3) >/dev/null' \
    "$T/live2" "$T/live"

# a run started by the admin API without a request held open
req "$AT" POST "/admin/apps/$SLOW/runs" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{},"user":"fay"}'
check "POST /admin/apps/ID/runs: 202 with the run's ids at once ($code)" is 202 \
    '(.id | length) == 36 and (.task_id | length) == 36 and .mode == "workflow"'
DET=$(jq -r '.id' "$T/out")
req "$AT" GET "/admin/runs/$DET"
check "… it runs meanwhile" is 200 '.status == "running"'
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$BASE/admin/runs/$DET/events" >"$T/det" 2>/dev/null
check "… its events from 1, live to the end" \
    bash -c '[ "$(head -1 "$0")" = "id: 1" ] && tail -2 "$0" | grep -q "\"workflow_finished\".*\"succeeded\""' "$T/det"
misses=0
for _ in $(seq 20); do
    id=$(curl -s -H "Authorization: Bearer $AT" --data-binary '{"inputs":{"x":"r"}}' \
        "$BASE/admin/apps/$ECHO/runs" | jq -r .id)
    c=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AT" "$BASE/admin/runs/$id")
    [ "$c" = 200 ] || misses=$((misses + 1))
done
check "… GET /admin/runs/ID right after the 202 finds the run, every time ($misses of 20 missed)" \
    [ "$misses" = 0 ]
# runs that end before the 202 is written (it was made from the run's
# record after handing it over, which a fast run had freed)
for _ in $(seq 200); do
    curl -s -o /dev/null -H "Authorization: Bearer $AT" --data-binary '{"inputs":{"x":"q"}}' \
        "$BASE/admin/apps/$ECHO/runs" || break
done
check "… 200 quick runs in a row: the server is still up" \
    bash -c 'curl -s --max-time 2 "$0/health" | grep -q ok' "$BASE"
req "$AT" POST "/admin/apps/$ECHO/runs" -H 'Content-Type: application/json' --data-binary '{"inputs":{}}'
check "… inputs the app needs, missing: 400 naming them ($code)" is 400 '.message | test("x")'
req "$AT" POST "/admin/apps/nope/runs" -H 'Content-Type: application/json' --data-binary '{"inputs":{}}'
check "… an unknown app: 404 ($code)" is 404
req "$AT" POST "/admin/apps/$ECHO/runs" --data-binary 'nope'
check "… a body that is no JSON object: 400 ($code)" is 400

# the graph as the console draws it
req "$AT" GET "/admin/apps/$SLOW/graph"
check "GET /admin/apps/ID/graph: its nodes and edges ($code)" is 200 \
    '([.nodes[].id] == ["start","nap","end"]) and (.nodes[1].title == "Nap") and
     (.nodes[1].type == "code") and (.edges | map(.source + ">" + .target) == ["start>nap","nap>end"]) and
     .edges[0].source_handle == "source" and .mode == "workflow"'
req "$AT" GET "/admin/apps/nope/graph"
check "… an unknown app: 404 ($code)" is 404

# stopping a run of any app, whoever started it
curl -s --max-time 30 -H "Authorization: Bearer $SK" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{},"user":"erin","response_mode":"blocking"}' \
    "$BASE/v1/workflows/run" >"$T/slow2.out" 2>/dev/null &
CPID=$!
RUNNING=
for _ in $(seq 100); do
    req "$AT" GET "/admin/runs?status=running&user=erin"
    RUNNING=$(jq -r '.data[0].id // empty' "$T/out")
    [ -n "$RUNNING" ] && break
    sleep 0.05
done
t0=$(date +%s%N)
req "$AT" POST "/admin/runs/$RUNNING/stop"
check "POST /admin/runs/ID/stop: stopped ($code)" is 200 '.result == "success" and .stopped == true'
wait "$CPID"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
req "$AT" GET "/admin/runs/$RUNNING"
check "… the run ends stopped, well before its 3 s nap ($ms ms)" \
    bash -c '[ "$0" -lt 2500 ] && jq -e ".status == \"stopped\"" "$1" >/dev/null' "$ms" "$T/out"
req "$AT" POST "/admin/runs/$RUNNING/stop"
check "stopping it again: success, stopped false ($code)" is 200 '.stopped == false'
req "$AT" POST "/admin/runs/nope/stop"
check "stopping an unknown run: 404 ($code)" is 404

# the Service API of any app with the admin token: /admin/apps/ID/v1/…
req "$AT" POST "/admin/apps/$ECHO/v1/workflows/run" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{"x":"adm"},"user":"console","response_mode":"blocking"}'
check "/admin/apps/ID/v1/workflows/run: runs the app, no app key needed ($code)" is 200 \
    '.data.outputs.y == "<adm>" and .data.status == "succeeded"'
ADM_RUN=$(jq -r '.workflow_run_id' "$T/out")
req "$AT" GET "/admin/runs?user=console"
check "… the run is listed, by its user" is 200 "(.data | length) == 1 and .data[0].id == \"$ADM_RUN\""
req "$EK" POST "/admin/apps/$ECHO/v1/workflows/run" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{"x":"k"},"user":"u","response_mode":"blocking"}'
check "… an app key there: 401 ($code)" is 401 '.code == "unauthorized"'
req "" GET "/admin/apps/$ECHO/v1/parameters"
check "… no token: 401 ($code)" is 401
req "$AT" GET "/admin/apps/nope/v1/parameters"
check "… an unknown app: 404 ($code)" is 404 '.message | test("nope")'
req "$AT" GET "/admin/apps/$ECHO/v1/parameters"
check "… GET parameters: the start form ($code)" is 200 \
    '.user_input_form[0]["text-input"].variable == "x"'
curl -sN --max-time 30 -H "Authorization: Bearer $AT" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{"x":"s"},"user":"console","response_mode":"streaming"}' \
    "$BASE/admin/apps/$ECHO/v1/workflows/run" >"$T/stream" 2>/dev/null
check "… streaming: the events, ending with workflow_finished" \
    bash -c 'grep -q "^data: .*\"event\": *\"workflow_started\"" "$0" &&
             grep -q "^data: .*\"event\": *\"workflow_finished\"" "$0"' "$T/stream"
printf 'hello from the console\n' >"$T/note.txt"
req "$AT" POST "/admin/apps/$ECHO/v1/files/upload" -F "file=@$T/note.txt;type=text/plain" -F user=console
check "… files/upload: the file is kept for the app and user ($code)" is 201 \
    '.name == "note.txt" and .size == 23 and (.id | length) > 0'
FID=$(jq -r '.id' "$T/out")
req "$AT" GET "/admin/apps/$ECHO/v1/files/$FID/preview?user=console"
check "… and its preview through the admin path ($code)" \
    bash -c '[ "$0" = 200 ] && cmp -s "$1" "$2"' "$code" "$T/out" "$T/note.txt"
req "$AT" POST "/admin/apps/$ECHO/v1/nothing"
check "… a path the Service API does not have: 404 ($code)" is 404

# a chat turn started by the admin API: the run says its conversation and
# query, and the conversation's messages name their runs
cat >"$T/chat.yml" <<'EOF2'
app: {mode: advanced-chat, name: admin-chat}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, type: custom, data: {type: start, title: Start, variables: []}}
    - {id: ans, type: custom, data: {type: answer, title: Answer, answer: 'you said {{#sys.query#}}'}}
    - {id: note, type: custom-note, data: {type: '', title: '', text: 'a note on the canvas'}}
    edges:
    - {source: start, target: ans}
EOF2
sl app import "$T/chat.yml" --data "$D"
CHAT=$(cat "$T/out")
req "$AT" POST "/admin/apps/$CHAT/runs" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{},"query":"hi there","user":"console"}'
check "POST /admin/apps/ID/runs on a chatflow: its conversation and message ($code)" is 202 \
    '.mode == "advanced-chat" and (.conversation_id | length) == 36 and (.message_id | length) == 36'
CRUN=$(jq -r '.id' "$T/out")
CONV=$(jq -r '.conversation_id' "$T/out")
curl -sN --max-time 30 -H "Authorization: Bearer $AT" "$BASE/admin/runs/$CRUN/events" >/dev/null 2>&1
req "$AT" GET "/admin/runs/$CRUN"
check "… GET /admin/runs/ID: the turn's conversation and query" is 200 \
    ".conversation_id == \"$CONV\" and .query == \"hi there\" and .user == \"console\""
req "$AT" GET "/admin/apps/$CHAT/v1/messages?conversation_id=$CONV&user=console"
check "… its message names the run (workflow_run_id)" is 200 \
    ".data[0].workflow_run_id == \"$CRUN\" and .data[0].answer == \"you said hi there\""
req "$AT" GET "/admin/apps/$CHAT/graph"
check "… the graph leaves the canvas note out" is 200 '[.nodes[].id] == ["start","ans"]'

# a new version through the admin API is what the next run runs, by the
# admin path as by an app key
sed "s/'<{{ x }}>'/'[{{ x }}]'/" "$T/echo.yml" >"$T/echo2.yml"
req "$AT" PUT "/admin/apps/$ECHO" --data-binary "@$T/echo2.yml"
check "PUT /admin/apps/ID: version 2 ($code)" is 200 '.version == 2'
req "$AT" POST "/admin/apps/$ECHO/v1/workflows/run" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{"x":"v"},"user":"console","response_mode":"blocking"}'
check "… the next run by the admin path runs it" is 200 '.data.outputs.y == "[v]"'
req "$EK" POST "/v1/workflows/run" -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{"x":"v"},"user":"u","response_mode":"blocking"}'
check "… and by an app key" is 200 '.data.outputs.y == "[v]"'

# the web console's files: built in, with headers that let no inline
# script run and no other site frame them
curl -s -D "$T/h" -o "$T/index" "$BASE/"
check "GET /: the console's page, with its CSP, nosniff and no framing" \
    bash -c 'grep -qi "^content-type: text/html" "$0" && grep -qi "<script type=\"module\"" "$1" &&
             grep -qi "^content-security-policy: default-src '"'self'"'; img-src '"'self'"' blob:; frame-ancestors '"'none'"'" "$0" &&
             grep -qi "^x-content-type-options: nosniff" "$0" && grep -qi "^x-frame-options: deny" "$0"' \
    "$T/h" "$T/index"
etag=$(grep -i '^etag:' "$T/h" | cut -d' ' -f2 | tr -d '\r')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE/")
check "… again with its ETag: 304 ($code)" [ "$code" = 304 ]
code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/app.js")
check "… its script: 200 ($code)" [ "$code" = 200 ]
for p in /nope.js /..%2f..%2fetc%2fpasswd /a/b /.hidden; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE$p")
    check "… $p: 404 ($code)" [ "$code" = 404 ]
done

kill -TERM "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
SPID=
if serve_start "$T/serve.err" --no-console; then
    code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/")
    check "--no-console: / is 404 ($code)" [ "$code" = 404 ]
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AT" "$BASE/admin/apps")
    check "… and the admin API is there ($code)" [ "$code" = 200 ]
    kill -TERM "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
else
    check "sluice serve --no-console starts" false
fi
echo "1..$n"
