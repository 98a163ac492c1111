#!/usr/bin/env bash
# CLI: `sluice serve` over real HTTP (curl), as Dify clients use it.
#   - apps and keys: `sluice app import|list|export|delete`, `sluice app key
#     create|list|revoke` (while the server runs) and the admin API; revoked
#     keys and keys of deleted apps get 401; a key sees only its own app.
#   - POST /v1/workflows/run blocking (exact outputs, Dify's fields) and
#     streaming (SSE framing, event order, fields); GET /v1/workflows/run/:id,
#     /v1/workflows/runs/:id/events, /v1/workflows/logs (paging, status).
#   - stop (POST /v1/workflows/tasks/:task_id/stop, /v1/chat-messages/:task_id/stop),
#     a client that goes away (the run goes on), chat (/v1/chat-messages
#     blocking and streaming, conversations, messages), /v1/files/upload,
#     /v1/parameters, /v1/info, error answers (401, 400, 404, 413) and the
#     server still answering after them.
#   - the official Node SDK (tests/sdk, when `npm install --prefix tests/sdk`
#     was run; skipped otherwise).
#   - crash: kill -9 with 100 streaming runs in flight, restart on the same
#     port and data: the runs are failed ("interrupted"), the rest intact,
#     the database passes integrity_check, no process of the dead server
#     lives on.
#   - SIGTERM drains: the running run finishes, exit 0, nothing left behind.
# Needs curl, jq, python3 and sqlite3 (psql on PostgreSQL); prints TAP.
# SLUICE_TEST_STORE names another store to run against (serve_pg.sh).
. "$(dirname "$0")/lib.bash"
# nok, req and is (serve_lib.bash)
. "$(dirname "$0")/serve_lib.bash"

D=${SLUICE_TEST_STORE:-$T/data}
SPID=          # the server
# one value the store holds, by SQL (SQLite's or PostgreSQL's)
sql() {
    if [ -n "${SLUICE_TEST_STORE:-}" ]; then psql -XAtq "$D" -c "$1"; else sqlite3 "$D/sluice.db" "$1"; fi
}
# the store's own consistency check
integrity() {
    if [ -n "${SLUICE_TEST_STORE:-}" ]; then psql -XAtq "$D" -c "SELECT 'ok'"; else sqlite3 "$D/sluice.db" 'PRAGMA integrity_check'; fi
}
NODE_PID=
BG=()          # background curls
on_exit() {
    local p
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$NODE_PID" ] && kill -KILL "$NODE_PID" 2>/dev/null
    for p in "${BG[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}

for tool in curl jq python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

# Processes that write to a server log of this script (the server and
# whatever it started, sandboxes included): their pids.
leftovers() {
    find /proc/[0-9]*/fd -maxdepth 1 -name 2 -lname "$T/serve*.err" 2>/dev/null | cut -d/ -f3
}


# start_server LOG: starts `sluice serve` on $PORT with the data in $D
# (stderr appended to LOG) and waits up to 5 s for /health.
start_server() {
    "$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>>"$1" &
    SPID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"' && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
    return 1
}

get() { req "$1" GET "$2"; }
post() { req "$1" POST "$2" -H 'Content-Type: application/json' --data-binary "$3"; }
# jqf JQ-ARGS...: jq for its exit status only
jqf() { jq "$@" >/dev/null 2>&1; }
# field JQ-EXPR: prints a field of the last answer
field() { jq -r "$1" "$T/out" 2>/dev/null; }

# stream KEY PATH JSON FILE [MAX-TIME]: a streaming request in the
# background, the raw SSE body in FILE; its pid in $spid.
stream() {
    curl -sN --max-time "${5:-30}" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
        --data-binary "$3" "$BASE$2" >"$4" 2>/dev/null &
    spid=$!
    BG+=("$spid")
}
# sse FILE PY-EXPR: evaluates PY-EXPR over an SSE body: raw (text), blocks
# (the "\n\n"-separated chunks), framed (every chunk is one `data: ` line
# or a ping), ev (each data chunk's JSON; one that is not JSON fails),
# names (ev's event names), stored (the JSON in $T/out, if any).
cat >"$T/sse.py" <<'EOF'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
blocks = [b for b in raw.split("\n\n") if b.strip()]
# Dify's keep-alive chunk "event: ping" may come between events
framed = all((b.startswith("data: ") and "\n" not in b.strip("\n")) or b.strip() == "event: ping"
             for b in blocks)
ev = [json.loads(b[len("data: "):]) for b in blocks if b.startswith("data: ")]
names = [e.get("event") for e in ev]
try:
    stored = json.load(open(sys.argv[3]))
except Exception:
    stored = None
def keys(d, *ks):
    return isinstance(d, dict) and all(k in d for k in ks)
ok = eval("(" + sys.argv[2] + "\n)")
if not ok:
    sys.stderr.write("events: %s\n" % names)
sys.exit(0 if ok else 1)
EOF
sse() { python3 "$T/sse.py" "$1" "$2" "$T/out" 2>>"$T/err"; }

# ---- the apps ----
cat >"$T/wf.yml" <<'EOF'
app: {mode: workflow, name: serve-join}
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
        - {variable: n, label: N, type: number, required: true}
        - {variable: who, label: Who, type: text-input, required: false, max_length: 10}
    - id: ifelse
      data:
        type: if-else
        title: Big?
        cases:
        - case_id: 'true'
          logical_operator: and
          conditions:
          - {variable_selector: [start, n], comparison_operator: '>', value: '10'}
    - {id: big1, data: {type: answer, title: Big 1, answer: "big {{#start.n#}}"}}
    - {id: big2, data: {type: answer, title: Big 2, answer: "{{#big1.answer#}}!"}}
    - {id: small1, data: {type: answer, title: Small 1, answer: "small {{#start.n#}}"}}
    - id: agg
      data: {type: variable-aggregator, title: Join, output_type: string, variables: [[big2, answer], [small1, answer]]}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: result, value_selector: [agg, output]}
        - {variable: who, value_selector: [start, who]}
    edges:
    - {source: start, target: ifelse}
    - {source: ifelse, sourceHandle: 'true', target: big1}
    - {source: big1, target: big2}
    - {source: ifelse, sourceHandle: 'false', target: small1}
    - {source: big2, target: agg}
    - {source: small1, target: agg}
    - {source: agg, target: end}
EOF
# secs seconds of sleep in a code node (the run's sandbox)
cat >"$T/slow.yml" <<'EOF'
app: {mode: workflow, name: serve-slow}
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
        - {variable: secs, label: Secs, type: number, required: true}
    - id: nap
      data:
        type: code
        title: Nap
        code_language: python3
        code: |
          import time
          def main(secs):
              time.sleep(secs)
              return {"slept": secs}
        variables:
        - {variable: secs, value_selector: [start, secs]}
        outputs:
          slept: {type: number}
    - id: end
      data: {type: end, title: End, outputs: [{variable: slept, value_selector: [nap, slept]}]}
    edges:
    - {source: start, target: nap}
    - {source: nap, target: end}
EOF
cat >"$T/chat.yml" <<'EOF'
app: {mode: advanced-chat, name: serve-echo}
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
        - {variable: tone, label: Tone, type: select, options: [calm, loud], required: false}
    - {id: ans, data: {type: answer, title: Answer, answer: 'You said: {{#sys.query#}}'}}
    edges:
    - {source: start, target: ans}
EOF

# a chatflow that naps secs seconds before it answers (the answer opens
# with the nap's output: plain text before it would stream at once)
cat >"$T/slowchat.yml" <<'EOF'
app: {mode: advanced-chat, name: serve-slow-chat}
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
        - {variable: secs, label: Secs, type: number, required: true}
    - id: nap
      data:
        type: code
        title: Nap
        code_language: python3
        code: |
          import time
          def main(secs):
              time.sleep(secs)
              return {"slept": secs}
        variables:
        - {variable: secs, value_selector: [start, secs]}
        outputs:
          slept: {type: number}
    - {id: ans, data: {type: answer, title: Answer, answer: '{{#nap.slept#}} s slept'}}
    edges:
    - {source: start, target: nap}
    - {source: nap, target: ans}
EOF

# ---- start ----
PORT=
for _ in 1 2 3; do
    PORT=$(free_port)
    start_server "$T/serve1.err" && break
    PORT=
done
BASE=http://127.0.0.1:$PORT
if [ -z "$PORT" ]; then
    nok "sluice serve starts and answers /health"
    sed 's/^/#   /' "$T/serve1.err" | tail -5
    echo "1..$n"
    exit 1
fi
ok "sluice serve starts and answers /health"
if [ -n "${SLUICE_TEST_STORE:-}" ]; then
    made=$(sql "SELECT count(*) FROM meta WHERE key = 'admin_token'")
else
    made=$([ -s "$D/admin-token" ] && echo 1)
fi
check "the first start makes the admin token (DATA/admin-token in a folder)" [ "$made" = 1 ]
AT=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)

# ---- apps and keys: the CLI (next to the running server) ----
sl app import "$T/wf.yml" --data "$D"
WF=$(cat "$T/out")
check "app import: exit 0, the app id alone on stdout" \
    bash -c '[ "$0" = 0 ] && [ "$(wc -l <"$1")" = 1 ] && grep -Eqx "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}" "$1"' \
    "$rc" "$T/out"
sl app import "$T/slow.yml" --data "$D"
SLOW=$(cat "$T/out")
sl app import "$T/slowchat.yml" --data "$D"
SCHAT=$(cat "$T/out")
sl app key create "$SCHAT" --data "$D"
SCK=$(cat "$T/out")
sl app list --data "$D"
check "app list shows the imported apps with mode and name" \
    bash -c 'grep -q "^$1 .*workflow.*serve-join" "$0" && grep -q "^$2 .*serve-slow" "$0"' "$T/out" "$WF" "$SLOW"
sl app export "$WF" --data "$D"
check "app export prints the DSL as imported" cmp -s "$T/out" "$T/wf.yml"
sl app key create "$WF" --data "$D"
WK=$(cat "$T/out")
check "app key create prints one key app-…" \
    bash -c '[ "$0" = 0 ] && [ "$(wc -l <"$1")" = 1 ] && grep -Eqx "app-[0-9A-Za-z]{16,}" "$1"' "$rc" "$T/out"
sl app key create "$SLOW" --data "$D"
SK=$(cat "$T/out")

# ---- the admin API ----
req "" POST /admin/apps --data-binary @"$T/chat.yml"
check "admin API without the token: 401 (got $code)" is 401 '.code == "unauthorized"'
req "bogus" GET /admin/apps
check "admin API with a wrong token: 401 (got $code)" is 401
req "$AT" POST /admin/apps --data-binary @"$T/chat.yml"
CHAT=$(field .id)
check "POST /admin/apps with the DSL: 201 {id, name, mode} (got $code)" \
    is 201 '(.id | length > 0) and .name == "serve-echo" and .mode == "advanced-chat"'
req "$AT" POST /admin/apps --data-binary 'app: {mode: workflow'
check "POST /admin/apps with a broken DSL: 400 with the reason (got $code)" \
    is 400 '.code == "invalid_param" and (.message | length > 0)'
req "$AT" GET /admin/apps
check "GET /admin/apps lists every app" \
    is 200 "[.data[].id] as \$i | ([\"$WF\", \"$SLOW\", \"$CHAT\"] - \$i) == []"
req "$AT" GET "/admin/apps/$CHAT"
check "GET /admin/apps/:id returns the DSL as uploaded" \
    bash -c '[ "$0" = 200 ] && cmp -s "$1" "$2"' "$code" "$T/out" "$T/chat.yml"
req "$AT" POST "/admin/apps/$CHAT/keys"
CK=$(field .key)
check "POST /admin/apps/:id/keys: 201 with a key (got $code)" is 201 '.key | startswith("app-")'
sl app list --data "$D"
check "app list (CLI) shows the app added over HTTP" out_has "$CHAT"

# ---- keys: list, revoke (a key in use stops working) ----
# (on the slow app: a run a revoked key wrongly gets does not disturb the
# workflow app's logs below)
sl app key create "$SLOW" --data "$D"
K2=$(cat "$T/out")
get "$K2" /v1/info
check "a second key of the app works (got $code)" is 200
sl app key list "$SLOW" --data "$D"
K2ID=$(awk -v h="${K2: -4}" 'index($0, h) && !/revoked/ {print $1}' "$T/out" | tail -1)
check "app key list shows each key by id and hint (…last 4)" \
    bash -c '[ "$(wc -l <"$0")" = 2 ] && [ -n "$1" ]' "$T/out" "$K2ID"
sl app key revoke "$K2ID" --data "$D"
check "app key revoke: exit 0" [ "$rc" = 0 ]
sl app key list "$SLOW" --data "$D"
check "app key list marks the revoked key" bash -c 'grep "^$1" "$0" | grep -q revoked' "$T/out" "$K2ID"
get "$K2" /v1/info
check "a key revoked with the CLI while the server runs gets 401 (got $code)" is 401 '.code == "unauthorized"'
post "$K2" /v1/workflows/run '{"inputs": {"secs": 0}, "response_mode": "blocking", "user": "u"}'
check "… and cannot run the workflow (got $code)" is 401
get "$SK" /v1/info
check "the app's other key still works (got $code)" is 200

req "$AT" POST "/admin/apps/$WF/keys"
K3=$(field .key)
get "$K3" /v1/info
check "a key made over the admin API works (got $code)" is 200
req "$AT" GET "/admin/apps/$WF/keys"
K3ID=$(jq -r --arg h "${K3: -4}" '[.data[] | select(.hint | endswith($h))][0].id' "$T/out")
check "GET /admin/apps/:id/keys lists the keys (id, hint, revoked)" \
    is 200 '(.data | length) == 2 and all(.data[]; (.id | length > 0) and (.hint | length > 0) and .revoked == false)'
req "$AT" DELETE "/admin/keys/$K3ID"
check "DELETE /admin/keys/:id: 200 success (got $code)" is 200 '.result == "success"'
get "$K3" /v1/info
check "a key revoked over the admin API gets 401 (got $code)" is 401 '.code == "unauthorized"'
req "$AT" GET "/admin/apps/$WF/keys"
check "… and the key list says it is revoked" is 200 "[.data[] | select(.revoked) | .id] == [\"$K3ID\"]"
req "$AT" DELETE "/admin/keys/$K3ID"
check "revoking it again: 404 (got $code)" is 404
get "$WK" /v1/info
check "the app's other key still works (got $code)" is 200

# an app deleted with the CLI while the server runs (and its key in use)
sl app import "$T/slow.yml" --data "$D"
GONE=$(cat "$T/out")
sl app key create "$GONE" --data "$D"
GK=$(cat "$T/out")
post "$GK" /v1/workflows/run '{"inputs": {"secs": 0}, "response_mode": "blocking", "user": "u"}'
check "a fresh app runs (got $code)" is 200 '.data.status == "succeeded"'
sl app delete "$GONE" --data "$D"
check "app delete: exit 0" [ "$rc" = 0 ]
sl app list --data "$D"
check "app list no longer shows the deleted app" bash -c '! grep -q "$1" "$0"' "$T/out" "$GONE"
sl app export "$GONE" --data "$D"
check "app export of the deleted app fails, naming it (exit $rc)" \
    bash -c '[ "$0" != 0 ] && grep -q "$1" "$2"' "$rc" "$GONE" "$T/err"
get "$GK" /v1/info
check "the key of an app deleted with the CLI gets 401 (got $code)" is 401
post "$GK" /v1/workflows/run '{"inputs": {"secs": 0}, "response_mode": "blocking", "user": "u"}'
check "… and the deleted app does not run (got $code: $(field .data.status // .code))" is 401

# an app deleted over the admin API
req "$AT" POST /admin/apps --data-binary @"$T/slow.yml"
GONE2=$(field .id)
req "$AT" POST "/admin/apps/$GONE2/keys"
GK2=$(field .key)
get "$GK2" /v1/info
check "an app added over the admin API answers /v1/info (got $code)" is 200 '.name == "serve-slow"'
req "$AT" DELETE "/admin/apps/$GONE2"
check "DELETE /admin/apps/:id: 200 success (got $code)" is 200 '.result == "success"'
req "$AT" GET "/admin/apps/$GONE2"
check "GET /admin/apps/:id of the deleted app: 404 (got $code)" is 404
get "$GK2" /v1/info
check "the key of an app deleted over the admin API gets 401 (got $code: $(field .code))" is 401
req "$AT" DELETE "/admin/apps/$GONE2"
check "deleting it again: 404 (got $code)" is 404

# ---- workflows/run, blocking ----
post "$WK" /v1/workflows/run '{"inputs": {"n": 42, "who": "api"}, "response_mode": "blocking", "user": "alice"}'
R1=$(field .workflow_run_id)
cp "$T/out" "$T/r1.json"
check "blocking run: 200, status succeeded, exact outputs (got $code)" \
    is 200 '.data.status == "succeeded" and .data.outputs == {"result": "big 42!", "who": "api"} and .data.error == null'
check "blocking run: workflow_run_id, task_id and data fields as Dify's (REFERENCE §5)" \
    is 200 '(.workflow_run_id | length > 0) and (.task_id | length > 0) and .data.id == .workflow_run_id
      and (["id", "workflow_id", "status", "outputs", "error", "elapsed_time", "total_tokens",
            "total_steps", "created_at", "finished_at"] - (.data | keys)) == []
      and (.data.elapsed_time | type) == "number" and .data.total_steps >= 5
      and (.data.created_at | type) == "number" and .data.finished_at >= .data.created_at'
post "$WK" /v1/workflows/run '{"inputs": {"n": 3}, "response_mode": "blocking", "user": "bob"}'
R2=$(field .workflow_run_id)
check "blocking run, other branch: small 3, the missing optional input is null (got $code)" \
    is 200 '.data.status == "succeeded" and .data.outputs == {"result": "small 3", "who": null}'
check "each run gets its own run and task id" \
    bash -c '[ -n "$0" ] && [ "$0" != "$1" ] && [ "$(jq -r .task_id "$2")" != "$(jq -r .task_id "$3")" ]' \
    "$R1" "$R2" "$T/r1.json" "$T/out"

# ---- workflows/run, streaming ----
curl -sN --max-time 20 -D "$T/headers" -H "Authorization: Bearer $WK" -H 'Content-Type: application/json' \
    --data-binary '{"inputs": {"n": 42, "who": "sse"}, "response_mode": "streaming", "user": "alice"}' \
    "$BASE/v1/workflows/run" >"$T/s1.sse" 2>"$T/err"
cp "$T/s1.sse" "$T/out"
R3=$(sed -n 's/^data: //p' "$T/s1.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
check "streaming run: 200 text/event-stream" grep -qi '^content-type: text/event-stream' "$T/headers"
check "streaming run: every chunk is one 'data: {json}' line, chunks end with a blank line" \
    sse "$T/s1.sse" 'framed and raw.endswith("\n\n") and len(ev) > 0'
check "streaming run: every event has event, task_id, workflow_run_id, data" \
    sse "$T/s1.sse" 'all(keys(e, "event", "task_id", "workflow_run_id", "data") for e in ev)'
check "streaming run: one workflow_run_id and task_id throughout, equal to data.id of the workflow events" \
    sse "$T/s1.sse" 'len({e["workflow_run_id"] for e in ev}) == 1 and len({e["task_id"] for e in ev}) == 1
      and all(e["data"]["id"] == e["workflow_run_id"] for e in ev if e["event"].startswith("workflow_"))'
check "streaming run: workflow_started first, workflow_finished last, once each" \
    sse "$T/s1.sse" 'names[0] == "workflow_started" and names[-1] == "workflow_finished"
      and names.count("workflow_started") == 1 and names.count("workflow_finished") == 1'
check "streaming run: node_started then node_finished for each node that ran, in order" \
    sse "$T/s1.sse" '[e["data"]["node_id"] for e in ev if e["event"] == "node_started"] == ["start", "ifelse", "big1", "big2", "agg", "end"]
      and all(any(f["event"] == "node_finished" and f["data"]["id"] == s["data"]["id"] for f in ev[i + 1:])
              for i, s in enumerate(ev) if s["event"] == "node_started")
      and names.count("node_started") == names.count("node_finished")'
check "streaming run: event data fields as Dify's (REFERENCE §5)" \
    sse "$T/s1.sse" 'keys(ev[0]["data"], "id", "workflow_id", "inputs", "created_at")
      and all(keys(e["data"], "id", "node_id", "node_type", "title", "index", "predecessor_node_id", "inputs", "created_at")
              for e in ev if e["event"] == "node_started")
      and all(keys(e["data"], "id", "node_id", "node_type", "title", "index", "predecessor_node_id", "inputs",
                   "process_data", "outputs", "status", "error", "elapsed_time", "execution_metadata", "created_at", "finished_at")
              and keys(e["data"]["execution_metadata"], "total_tokens", "total_price", "currency")
              for e in ev if e["event"] == "node_finished")
      and keys(ev[-1]["data"], "id", "workflow_id", "status", "outputs", "error", "elapsed_time", "total_tokens",
               "total_steps", "created_at", "finished_at")'
check "streaming run: workflow_finished succeeded with the exact outputs" \
    sse "$T/s1.sse" 'ev[-1]["data"]["status"] == "succeeded" and ev[-1]["data"]["outputs"] == {"result": "big 42!", "who": "sse"}'

# ---- the run afterwards ----
get "$WK" "/v1/workflows/run/$R3"
check "GET /v1/workflows/run/:id: status, inputs, outputs of the streamed run (got $code)" \
    is 200 ".id == \"$R3\" and .status == \"succeeded\" and .outputs == {\"result\": \"big 42!\", \"who\": \"sse\"}
      and .inputs.n == 42 and .inputs.who == \"sse\" and .error == null
      and ([\"workflow_id\", \"total_steps\", \"total_tokens\", \"elapsed_time\", \"created_at\", \"finished_at\"] - keys) == []"
get "$WK" "/v1/workflows/run/$R1"
check "GET /v1/workflows/run/:id of a blocking run matches its answer" \
    bash -c '[ "$0" = 200 ] && jq -e --slurpfile b "$2" ".status == \$b[0].data.status and .outputs == \$b[0].data.outputs and .total_steps == \$b[0].data.total_steps" "$1" >/dev/null' \
    "$code" "$T/out" "$T/r1.json"
get "$WK" "/v1/workflows/runs/$R3/events"
check "GET /v1/workflows/runs/:id/events: every streamed event, in order, same data" \
    bash -c '[ "$0" = 200 ] && python3 "$1" "$2" "stored is not None and [s[\"event\"] for s in stored[\"data\"]] == names and [s[\"data\"] for s in stored[\"data\"]] == [e[\"data\"] for e in ev]" "$3"' \
    "$code" "$T/sse.py" "$T/s1.sse" "$T/out"
get "$WK" /v1/workflows/run/00000000-0000-4000-8000-000000000000
check "GET /v1/workflows/run/:id of an unknown run: 404 (got $code)" is 404 '.code == "not_found"'

# a key sees only its own app
get "$CK" "/v1/workflows/run/$R1"
check "another app's key: GET that run is 404 (got $code)" is 404
get "$CK" "/v1/workflows/runs/$R3/events"
check "another app's key: GET that run's events is 404 (got $code)" is 404
get "$SK" "/v1/workflows/logs"
check "another app's key: its logs do not list the run" is 200 "[.data[].id] | index(\"$R1\") == null"

# ---- logs ----
get "$WK" "/v1/workflows/logs?page=1&limit=2"
cp "$T/out" "$T/p1.json"
check "GET /v1/workflows/logs?limit=2: 2 of the 3 runs, has_more, total 3 (got $code: total $(field .total))" \
    is 200 '.page == 1 and .limit == 2 and (.data | length) == 2 and .has_more == true and .total == 3'
get "$WK" "/v1/workflows/logs?page=2&limit=2"
check "GET /v1/workflows/logs page 2: the last run, no more" \
    is 200 '.page == 2 and (.data | length) == 1 and .has_more == false'
check "logs pages together list each run once, newest first pages" \
    bash -c 'ids=$(jq -r ".data[].id" "$0" "$1" | sort | tr "\n" " "); want=$(printf "%s\n" "$2" "$3" "$4" | sort | tr "\n" " "); [ "$ids" = "$want" ]' \
    "$T/p1.json" "$T/out" "$R1" "$R2" "$R3"
check "each log entry has the workflow_run with its status" \
    jqf -e '[.data[] | .workflow_run.id == .id and .workflow_run.status == "succeeded"] | all' "$T/p1.json"
get "$WK" "/v1/workflows/logs?status=failed"
check "GET /v1/workflows/logs?status=failed: none" is 200 '.data == []'
get "$WK" "/v1/workflows/logs?status=succeeded"
check "GET /v1/workflows/logs?status=succeeded: all three" is 200 '(.data | length) == 3'

# ---- stop ----
stream "$SK" /v1/workflows/run '{"inputs": {"secs": 10}, "response_mode": "streaming", "user": "carol"}' "$T/stop.sse"
stop_pid=$spid
wait_for "$T/stop.sse" '"node_type":"code"' 10
TASK=$(sed -n 's/^data: //p' "$T/stop.sse" | head -1 | jq -r .task_id 2>/dev/null)
RS=$(sed -n 's/^data: //p' "$T/stop.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
check "a slow run is streaming (its code node started)" grep -q '"node_type":"code"' "$T/stop.sse"
post "$CK" "/v1/workflows/tasks/$TASK/stop" '{"user": "carol"}'
sleep 0.3
check "stop with another app's key does not stop the run" bash -c '! grep -q workflow_finished "$0"' "$T/stop.sse"
t0=$(date +%s%N)
post "$SK" "/v1/workflows/tasks/$TASK/stop" '{"user": "mallory"}'
check "stop by another user: success, as Dify answers (got $code)" is 200 '.result == "success"'
post "$SK" "/v1/workflows/tasks/$TASK/stop" '{}'
check "stop without a user: success too (got $code)" is 200 '.result == "success"'
sleep 0.3
check "… but neither stopped carol's run" bash -c '! grep -q workflow_finished "$0"' "$T/stop.sse"
post "$SK" "/v1/workflows/tasks/$TASK/stop" '{"user": "carol"}'
check "POST /v1/workflows/tasks/:task_id/stop: {\"result\": \"success\"} (got $code)" is 200 '. == {"result": "success"}'
wait_pid "$stop_pid" 8
ms=$((($(date +%s%N) - t0) / 1000000))
check "the stream ends promptly after stop (${ms} ms, curl $rc)" [ "$rc" = 0 -a "$ms" -lt 5000 ]
check "the stream ends with workflow_finished, status stopped" \
    sse "$T/stop.sse" 'names[-1] == "workflow_finished" and ev[-1]["data"]["status"] == "stopped"'
get "$SK" "/v1/workflows/run/$RS"
check "the stored run says stopped (got $code: $(field .status))" is 200 '.status == "stopped"'
post "$SK" "/v1/workflows/tasks/$TASK/stop" '{"user": "carol"}'
check "stop of a task that already ended: still success, as Dify (got $code)" is 200 '.result == "success"'

# ---- a client that goes away does not stop the run ----
stream "$SK" /v1/workflows/run '{"inputs": {"secs": 1.5}, "response_mode": "streaming", "user": "carol"}' "$T/gone.sse" 0.8
wait_pid "$spid" 5
RG=$(sed -n 's/^data: //p' "$T/gone.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
check "the client hung up mid-run (curl timed out, no workflow_finished)" \
    bash -c '[ "$0" = 28 ] && [ -n "$1" ] && ! grep -q workflow_finished "$2"' "$rc" "$RG" "$T/gone.sse"
for ((i = 0; i < 60; i++)); do
    get "$SK" "/v1/workflows/run/$RG"
    [ "$(field .status)" != running ] && break
    sleep 0.1
done
check "the run went on and succeeded (got $(field .status))" is 200 '.status == "succeeded" and .outputs == {"slept": 1.5}'

# a failed run, for the logs' status filter
post "$SK" /v1/workflows/run '{"inputs": {"secs": -1}, "response_mode": "blocking", "user": "carol"}'
RF=$(field .workflow_run_id)
check "a run whose code raises: 200, status failed with the error (got $code)" \
    is 200 '.data.status == "failed" and (.data.error | length > 0)'
get "$SK" "/v1/workflows/logs?status=failed"
check "GET /v1/workflows/logs?status=failed: just the failed run" is 200 "[.data[].id] == [\"$RF\"]"
get "$SK" "/v1/workflows/logs?status=stopped"
check "GET /v1/workflows/logs?status=stopped: just the stopped run" is 200 "[.data[].id] == [\"$RS\"]"

# ---- chat ----
post "$CK" /v1/chat-messages '{"inputs": {}, "query": "hello", "response_mode": "blocking", "user": "dave"}'
CONV=$(field .conversation_id)
check "chat blocking: answer, conversation_id, message_id (got $code)" \
    is 200 '.answer == "You said: hello" and (.conversation_id | length > 0) and (.message_id | length > 0) and .event == "message"'
curl -sN --max-time 20 -H "Authorization: Bearer $CK" -H 'Content-Type: application/json' \
    --data-binary "{\"inputs\": {}, \"query\": \"again\", \"response_mode\": \"streaming\", \"user\": \"dave\", \"conversation_id\": \"$CONV\"}" \
    "$BASE/v1/chat-messages" >"$T/chat.sse" 2>"$T/err"
check "chat streaming: message events then message_end, last" \
    sse "$T/chat.sse" 'framed and "message" in names and names[-1] == "message_end"
      and max(i for i, x in enumerate(names) if x == "message") < names.index("message_end")'
check "chat streaming: the message events carry the answer" \
    sse "$T/chat.sse" '"".join(e["answer"] for e in ev if e["event"] == "message") == "You said: again"'
check "chat streaming: every event has the conversation_id it continued and one message_id" \
    sse "$T/chat.sse" "all(e.get(\"conversation_id\") == \"$CONV\" for e in ev) and len({e.get(\"message_id\") for e in ev}) == 1
      and all(keys(e, \"task_id\", \"message_id\", \"created_at\") for e in ev if e[\"event\"] == \"message\")"
check "chat streaming: the workflow events are there too" \
    sse "$T/chat.sse" 'names[0] == "workflow_started" and "workflow_finished" in names'
post "$CK" /v1/chat-messages "{\"inputs\": {}, \"query\": \"other\", \"response_mode\": \"blocking\", \"user\": \"erin\"}"
get "$CK" "/v1/conversations?user=dave"
check "GET /v1/conversations?user=: the user's conversation only" \
    is 200 "[.data[].id] == [\"$CONV\"] and .has_more == false"
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
check "GET /v1/messages: both turns with their answers, oldest first" \
    is 200 '[.data[] | [.query, .answer]] == [["hello", "You said: hello"], ["again", "You said: again"]]
      and ([.data[] | .conversation_id] | unique | length) == 1'
get "$CK" "/v1/messages?conversation_id=$CONV&user=erin"
check "GET /v1/messages of another user's conversation: 404 (got $code, $(field '.data | length') messages)" is 404
get "$CK" "/v1/messages?conversation_id=00000000-0000-4000-8000-000000000000&user=dave"
check "GET /v1/messages of an unknown conversation: 404 (got $code)" is 404
post "$CK" /v1/chat-messages '{"inputs": {}, "query": "x", "response_mode": "blocking", "user": "dave", "conversation_id": "00000000-0000-4000-8000-000000000000"}'
check "chat with an unknown conversation_id: 404 (got $code)" is 404 '.code == "not_found" and (.message | length > 0)'
post "$CK" /v1/chat-messages "{\"inputs\": {}, \"query\": \"x\", \"response_mode\": \"blocking\", \"user\": \"erin\", \"conversation_id\": \"$CONV\"}"
check "chat in another user's conversation: 404 (got $code)" is 404
# A client that names no user is Dify's default end user: a user like any
# other, who neither sees nor continues another user's conversation.
post "$CK" /v1/chat-messages "{\"inputs\": {}, \"query\": \"x\", \"response_mode\": \"blocking\", \"conversation_id\": \"$CONV\"}"
check "chat in dave's conversation without a user: 404 Conversation Not Exists. (got $code)" \
    is 404 '.message == "Conversation Not Exists."'
get "$CK" "/v1/messages?conversation_id=$CONV"
check "GET /v1/messages of dave's conversation without a user: 404 (got $code)" is 404
get "$CK" "/v1/messages?conversation_id=$CONV&user="
check "… nor with an empty user (got $code)" is 404
get "$CK" /v1/conversations
check "GET /v1/conversations without a user does not list dave's (got $code)" \
    is 200 "[.data[].id] | index(\"$CONV\") == null"
post "$CK" "/v1/conversations/$CONV/name" '{"name": "taken"}'
check "renaming dave's conversation without a user: 404 (got $code)" is 404
req "$CK" DELETE "/v1/conversations/$CONV"
check "deleting dave's conversation without a user: 404 (got $code)" is 404
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
DMID=$(field '.data[0].id')
post "$CK" "/v1/messages/$DMID/feedbacks" '{"rating": "dislike", "user": "erin"}'
check "feedback on dave's message by another user: 404 (got $code)" is 404
post "$CK" "/v1/messages/$DMID/feedbacks" '{"rating": "dislike"}'
check "… or without a user: 404 (got $code)" is 404
check "… and nothing was stored" \
    [ -z "$(sql "SELECT feedback FROM messages WHERE id = '$DMID'")" ]
post "$CK" /v1/chat-messages '{"inputs": {}, "query": "anon", "response_mode": "blocking"}'
ACONV=$(field .conversation_id)
post "$CK" /v1/chat-messages "{\"inputs\": {}, \"query\": \"anon 2\", \"response_mode\": \"blocking\", \"conversation_id\": \"$ACONV\"}"
check "a conversation without a user continues without one (got $code)" \
    is 200 ".conversation_id == \"$ACONV\" and .answer == \"You said: anon 2\""
get "$CK" "/v1/messages?conversation_id=$ACONV&user=dave"
check "… and a named user cannot read it (got $code)" is 404
post "$CK" /v1/chat-messages '{"inputs": {}, "response_mode": "blocking", "user": "dave"}'
check "chat without a query: 400 invalid_param (got $code)" is 400 '.code == "invalid_param"'
post "$CK" /v1/workflows/run '{"inputs": {}, "response_mode": "blocking", "user": "dave"}'
check "workflows/run on a chat app: 400 not_workflow_app naming chat-messages (got $code)" \
    is 400 '.code == "not_workflow_app" and (.message | test("chat-messages"))'
post "$WK" /v1/chat-messages '{"inputs": {"n": 1}, "query": "hi", "response_mode": "blocking", "user": "dave"}'
check "chat-messages on a workflow app: 400 not_chat_app naming workflows/run (got $code)" \
    is 400 '.code == "not_chat_app" and (.message | test("workflows/run"))'

# stopping a chat run
stream "$SCK" /v1/chat-messages '{"inputs": {"secs": 10}, "query": "wait", "response_mode": "streaming", "user": "dave"}' "$T/cstop.sse"
cstop_pid=$spid
wait_for "$T/cstop.sse" '"node_type":"code"' 10
CTASK=$(sed -n 's/^data: //p' "$T/cstop.sse" | head -1 | jq -r .task_id 2>/dev/null)
CRUN=$(sed -n 's/^data: //p' "$T/cstop.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
check "a slow chat run is streaming (its code node started)" grep -q '"node_type":"code"' "$T/cstop.sse"
t0=$(date +%s%N)
post "$SCK" "/v1/chat-messages/$CTASK/stop" '{"user": "dave"}'
check "POST /v1/chat-messages/:task_id/stop: {\"result\": \"success\"} (got $code)" is 200 '. == {"result": "success"}'
wait_pid "$cstop_pid" 8
ms=$((($(date +%s%N) - t0) / 1000000))
check "the chat stream ends promptly after stop (${ms} ms, curl $rc)" [ "$rc" = 0 -a "$ms" -lt 5000 ]
check "… with workflow_finished status stopped, and no answer" \
    sse "$T/cstop.sse" '"workflow_finished" in names and ev[names.index("workflow_finished")]["data"]["status"] == "stopped" and "message" not in names'
get "$SCK" "/v1/workflows/run/$CRUN"
check "the stored chat run says stopped (got $code: $(field .status))" is 200 '.status == "stopped"'

# ---- files ----
printf 'hello file\n' >"$T/hello.txt"
req "$WK" POST /v1/files/upload -F "file=@$T/hello.txt;type=text/plain" -F user=alice
check "POST /v1/files/upload: 201 {id, name, size, extension, mime_type, created_by, created_at} (got $code)" \
    is 201 '(.id | length > 0) and .name == "hello.txt" and .size == 11 and .extension == "txt"
      and .mime_type == "text/plain" and .created_by == "alice" and (.created_at | type) == "number"'
FID=$(field .id)
# the stored type is sluice's, from the bytes and the name; the preview is
# never sniffed, and what a browser would run comes as an attachment
req "$WK" POST /v1/files/upload -F "file=@$T/hello.txt;type=text/html" -F user=alice
check "an upload claiming text/html for a .txt of text is stored as text/plain (got $(field .mime_type))" \
    is 201 '.mime_type == "text/plain"'
curl -s -D "$T/h" -o "$T/out" -H "Authorization: Bearer $WK" "$BASE/v1/files/$FID/preview"
check "the preview of a text file: its bytes, text/plain, nosniff, inline" \
    bash -c 'grep -qx "hello file" "$0" && grep -qi "^content-type: text/plain" "$1" &&
             grep -qi "^x-content-type-options: nosniff" "$1" && ! grep -qi "^content-disposition" "$1"' "$T/out" "$T/h"
preview() { # FILE NAME CLAIMED-TYPE: uploads, then fetches the preview's headers into $T/h
    req "$WK" POST /v1/files/upload -F "file=@$1;filename=$2;type=$3" -F user=alice
    curl -s -D "$T/h" -o /dev/null -H "Authorization: Bearer $WK" "$BASE/v1/files/$(field .id)/preview"
}
printf '<!DOCTYPE html><script>alert(document.cookie)</script>' >"$T/page"
preview "$T/page" page.html text/html
check "an .html upload: stored text/html, its preview an attachment with nosniff" \
    bash -c 'jq -e ".mime_type == \"text/html\"" "$0" >/dev/null && grep -qi "^content-disposition: attachment" "$1" &&
             grep -qi "^x-content-type-options: nosniff" "$1"' "$T/out" "$T/h"
preview "$T/page" notes.txt text/plain
check "HTML bytes named .txt: stored text/html (sniffed), an attachment (got $(field .mime_type))" \
    bash -c 'jq -e ".mime_type == \"text/html\"" "$0" >/dev/null && grep -qi "^content-disposition: attachment" "$1"' "$T/out" "$T/h"
printf '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' >"$T/img"
preview "$T/img" pic.png image/png
check "SVG bytes named .png: stored image/svg+xml, an attachment (got $(field .mime_type))" \
    bash -c 'jq -e ".mime_type == \"image/svg+xml\"" "$0" >/dev/null && grep -qi "^content-disposition: attachment" "$1"' "$T/out" "$T/h"
printf 'alert(1)' >"$T/js"
preview "$T/js" app.js text/plain
check "a .js upload: stored text/javascript, an attachment (got $(field .mime_type))" \
    bash -c 'jq -e ".mime_type == \"text/javascript\"" "$0" >/dev/null && grep -qi "^content-disposition: attachment" "$1"' "$T/out" "$T/h"
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >"$T/png"
preview "$T/png" shot.bin text/html
check "PNG bytes named .bin, claimed text/html: stored image/png, shown inline (got $(field .mime_type))" \
    bash -c 'jq -e ".mime_type == \"image/png\"" "$0" >/dev/null && grep -qi "^content-type: image/png" "$1" &&
             ! grep -qi "^content-disposition" "$1"' "$T/out" "$T/h"
preview "$T/page" 'ré sumé (1).html' text/html
check "the attachment's file name is percent-encoded (nothing in it can end the header)" \
    grep -qi "^content-disposition: attachment; filename\*=UTF-8''r%C3%A9%20sum%C3%A9%20%281%29.html" "$T/h"
curl -s -D "$T/h" -o /dev/null -H "Authorization: Bearer $WK" "$BASE/v1/files/$FID/preview?as_attachment=true"
check "as_attachment=true: any file as an application/octet-stream attachment, as Dify" \
    bash -c 'grep -qi "^content-disposition: attachment; filename\*=UTF-8'"''"'hello.txt" "$0" &&
             grep -qi "^content-type: application/octet-stream" "$0"' "$T/h"
req "$WK" POST /v1/files/upload -F user=alice
check "POST /v1/files/upload without a file: 400 (got $code: $(field .code))" is 400 '(.code | length > 0) and .status == 400'
req "" POST /v1/files/upload -F "file=@$T/hello.txt;type=text/plain" -F user=alice
check "POST /v1/files/upload without a key: 401 (got $code)" is 401

# ---- parameters, info ----
get "$WK" /v1/parameters
check "GET /v1/parameters: user_input_form lists the start variables by type" \
    is 200 '[.user_input_form[] | to_entries[0] | [.key, .value.variable, .value.required]] == [["number", "n", true], ["text-input", "who", false]]
      and .user_input_form[1]["text-input"].max_length == 10'
get "$CK" /v1/parameters
check "GET /v1/parameters of the chat app: the select with its options" \
    is 200 '.user_input_form == [{"select": {"variable": "tone", "label": "Tone", "type": "select", "options": ["calm", "loud"], "required": false}}]'
get "$WK" /v1/info
check "GET /v1/info: name and mode" is 200 '.name == "serve-join" and .mode == "workflow"'
get "$CK" /v1/info
check "GET /v1/info of the chat app: advanced-chat" is 200 '.name == "serve-echo" and .mode == "advanced-chat"'

# ---- errors ----
get "" /v1/info
check "no key: 401 JSON {code, message, status} (got $code)" \
    is 401 '.code == "unauthorized" and .status == 401 and (.message | length > 0)'
get "app-0000000000000000" /v1/info
check "an invalid key: 401 (got $code)" is 401 '.code == "unauthorized" and .status == 401'
req "" GET /v1/info -H "Authorization: Basic $WK"
check "a key not sent as Bearer: 401 (got $code)" is 401
post "$WK" /v1/workflows/run '{"inputs": {"n": 1}, "response_mode": "blocking"'
check "malformed JSON body: 400 invalid_param (got $code)" is 400 '.code == "invalid_param" and .status == 400'
post "$WK" /v1/workflows/run '[1, 2]'
check "a JSON body that is not an object: 400 invalid_param (got $code)" is 400 '.code == "invalid_param"'
post "$WK" /v1/workflows/run '{"inputs": {"n": "abc"}, "response_mode": "blocking", "user": "u"}'
check "an input of the wrong type: 400 naming the input (got $code: $(field .message))" \
    is 400 '.code == "invalid_param" and (.message | test("\\bn\\b")) and (.message | test("number"))'
post "$WK" /v1/workflows/run '{"inputs": {"who": "x"}, "response_mode": "blocking", "user": "u"}'
check "a missing required input: 400 saying it is required (got $code: $(field .message))" \
    is 400 '.code == "invalid_param" and (.message | test("\\bn\\b")) and (.message | test("required"))'
check "… and the message speaks of the API, not of CLI flags (got: $(field .message))" \
    is 400 '.message | test("--input") | not'
post "$WK" /v1/workflows/run '{"inputs": {"n": 1, "who": "far too long a name"}, "response_mode": "blocking", "user": "u"}'
check "a text input over its max_length: 400 (got $code)" is 400 '.code == "invalid_param"'
post "$WK" /v1/workflows/run '{"inputs": [1], "response_mode": "blocking", "user": "u"}'
check "inputs not an object: 400 (got $code)" is 400 '.code == "invalid_param"'
post "$WK" /v1/workflows/run '{"inputs": {"n": 1}, "response_mode": "bogus", "user": "u"}'
check "response_mode bogus: 400 invalid_param (got $code)" is 400 '.code == "invalid_param" and (.message | test("response_mode"))'
get "$WK" /v1/no/such/endpoint
check "an unknown /v1 path: 404 JSON (got $code)" is 404 '.code == "not_found" and .status == 404'
get "" /nowhere
check "an unknown path outside /v1: 404 JSON (got $code)" is 404 '.code == "not_found"'
get "$WK" '/v1/%C3%28x'
check "an unknown path that is not UTF-8: still a 404 JSON answer (got $code)" \
    is 404 '.code == "not_found" and (.message | length > 0)'
req "$WK" DELETE /v1/workflows/run
check "a wrong method on a known path: 404 or 405, JSON (got $code)" \
    bash -c '{ [ "$0" = 404 ] || [ "$0" = 405 ]; } && jq -e .code "$1" >/dev/null' "$code" "$T/out"
{ printf '{"inputs": {"n": 1, "who": "'; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' a; printf '"}}'; } >"$T/huge.json"
post "$WK" /v1/workflows/run @"$T/huge.json"
check "a 16 MB body: 413 (got $code)" is 413 '.status == 413 and .code == "request_entity_too_large"'
req "$WK" POST /v1/files/upload -F "file=@$T/huge.json;type=application/json" -F user=alice
check "a 16 MB upload: 413 (got $code)" is 413 '.status == 413'
rm -f "$T/huge.json"
get "" /health
check "the server still answers /health after all of these (got $code)" is 200
post "$WK" /v1/workflows/run '{"inputs": {"n": 11}, "response_mode": "blocking", "user": "u"}'

check "… and still runs workflows (got $code)" is 200 '.data.outputs.result == "big 11!"'

# ---- the official Node SDK (tests/sdk) ----
if [ -d tests/sdk/node_modules/dify-client ] && command -v node >/dev/null; then
    SLUICE_URL="$BASE/v1" SLUICE_WF_KEY=$WK SLUICE_CHAT_KEY=$CK SLUICE_SLOW_KEY=$SK \
        timeout -k 2 60 node tests/sdk/sdk_test.mjs >"$T/sdk.out" 2>"$T/sdk.err" &
    NODE_PID=$!
    wait "$NODE_PID"
    sdk_rc=$?
    NODE_PID=
    while IFS= read -r l; do
        case $l in
        "ok "*) ok "dify-client: ${l#ok }" ;;
        "not ok "*)
            printf '%s\n' "${l#* -- }" >"$T/out"
            : >"$T/err"
            d=${l#not ok }
            nok "dify-client: ${d%% -- *}"
            ;;
        esac
    done <"$T/sdk.out"
    cp "$T/sdk.err" "$T/err"
    : >"$T/out"
    check "dify-client: the SDK test ran to the end (exit $sdk_rc)" \
        bash -c '[ "$0" -le 1 ] && grep -q "^# [0-9]* passed" "$1"' "$sdk_rc" "$T/sdk.out"
else
    n=$((n + 1))
    echo "ok $n - dify-client SDK tests # SKIP tests/sdk/node_modules/dify-client is not installed (npm install --prefix tests/sdk)"
fi

# ---- crash: kill -9 with 100 streaming runs in flight ----
# earlier finished runs, as they are now
for r in "$R1" "$R2" "$R3"; do
    get "$WK" "/v1/workflows/run/$r"
    cp "$T/out" "$T/before-$r.json"
done
get "$SK" "/v1/workflows/run/$RS"
cp "$T/out" "$T/before-$RS.json"
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
cp "$T/out" "$T/before-msgs.json"

sl app import "$T/slow.yml" --data "$D"
CRASH=$(cat "$T/out")
sl app key create "$CRASH" --data "$D"
XK=$(cat "$T/out")
mkdir -p "$T/crash"
for ((i = 0; i < 100; i++)); do
    stream "$XK" /v1/workflows/run '{"inputs": {"secs": 30}, "response_mode": "streaming", "user": "crash"}' \
        "$T/crash/$i.sse" 40
done
running=0
started=0
for ((i = 0; i < 300; i++)); do         # up to 15 s for all to be running (and stored)
    get "$XK" "/v1/workflows/logs?status=running&limit=100"
    running=$(field '.data | length')
    started=$(grep -l '"node_type":"code"' "$T"/crash/*.sse 2>/dev/null | wc -l)
    [ "$running" = 100 ] && [ "$started" = 100 ] && break
    sleep 0.05
done
check "100 streaming runs in flight (stored as running: $running)" [ "$running" = 100 ]
check "… each stream is in its code node ($started of 100)" [ "$started" = 100 ]
sed -n 's/^data: //p' "$T"/crash/*.sse | jq -r 'select(.event == "workflow_started") | .workflow_run_id' |
    sort -u >"$T/crash-ids"
kill -KILL "$SPID"
wait "$SPID" 2>/dev/null
SPID=
for ((i = 0; i < 40; i++)); do          # up to 2 s for its processes to go
    [ -z "$(leftovers)" ] && break
    sleep 0.05
done
left=$(leftovers | wc -l)
check "no process of the killed server lives on (sandboxes included; $left left)" [ "$left" = 0 ]
start_server "$T/serve2.err"
restarted=$?
check "it restarts on the same port and data folder" [ "$restarted" = 0 ]
if [ "$restarted" != 0 ]; then
    sed 's/^/#   /' "$T/serve2.err" | tail -3
    for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done
    sleep 0.3
    start_server "$T/serve2.err" || { echo "# cannot restart the server; stopping here"; echo "1..$n"; exit 1; }
fi
for p in "${BG[@]}"; do kill -KILL "$p" 2>/dev/null; done
wait "${BG[@]}" 2>/dev/null
BG=()
cp "$T/serve2.err" "$T/err"
: >"$T/out"
if [ -n "${SLUICE_TEST_STORE:-}" ]; then
    # a database store fails them when their lease runs out
    # (SLUICE_RUN_LEASE_S), whoever sees it first, maybe in more than one go
    for ((i = 0; i < 200; i++)); do
        get "$XK" "/v1/workflows/logs?status=running&limit=100"
        [ "$(field '.data | length')" = 0 ] && break
        sleep 0.05
    done
    sleep 0.2
    said=$(grep -oE '\b[0-9]+ run\(s\) were [^;]*; they are (marked )?failed' "$T/serve2.err" |
        awk '{s += $1} END {print s + 0}')
    check "its stderr mentions the 100 interrupted runs ($said)" [ "$said" = 100 ]
else
    check "its stderr mentions the 100 interrupted runs" grep -Eq '\b100 run\(s\).*(interrupted|still running|failed)' "$T/serve2.err"
fi
urls=()
while read -r r; do urls+=("$BASE/v1/workflows/run/$r"); done <"$T/crash-ids"
curl -s --max-time 30 -H "Authorization: Bearer $XK" "${urls[@]}" >"$T/crash-runs.json" 2>/dev/null
check "every one of the ${#urls[@]} runs is now failed, with an error saying interrupted" \
    bash -c '[ "$0" = 100 ] && jq -se "length == 100 and all(.status == \"failed\" and (.error | test(\"interrupted\")))" "$1" >/dev/null' \
    "${#urls[@]}" "$T/crash-runs.json"
check "… with a finished_at" jqf -se 'all(.finished_at != null)' "$T/crash-runs.json"
get "$XK" "/v1/workflows/logs?status=running&limit=100"
check "no run of the app is left running" is 200 '.data == []'
intact=0
for r in "$R1" "$R2" "$R3"; do
    get "$WK" "/v1/workflows/run/$r"
    jq -Se --slurpfile b "$T/before-$r.json" '. == $b[0]' "$T/out" >/dev/null && intact=$((intact + 1))
done
get "$SK" "/v1/workflows/run/$RS"
jq -Se --slurpfile b "$T/before-$RS.json" '. == $b[0]' "$T/out" >/dev/null && intact=$((intact + 1))
check "the earlier finished runs are unchanged ($intact of 4)" [ "$intact" = 4 ]
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
check "the earlier conversation's messages are unchanged" jqf -Se --slurpfile b "$T/before-msgs.json" '. == $b[0]' "$T/out"
integrity >"$T/out" 2>"$T/err"
check "the store's integrity check: ok" bash -c '[ "$(cat "$0")" = ok ]' "$T/out"
post "$WK" /v1/workflows/run '{"inputs": {"n": 50}, "response_mode": "blocking", "user": "u"}'
check "the restarted server runs workflows (got $code)" is 200 '.data.outputs.result == "big 50!"'
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
post "$CK" /v1/chat-messages "{\"inputs\": {}, \"query\": \"after\", \"response_mode\": \"blocking\", \"user\": \"dave\", \"conversation_id\": \"$CONV\"}"
check "… and continues the earlier conversation (got $code)" is 200 ".answer == \"You said: after\" and .conversation_id == \"$CONV\""

# ---- conversations: rename, feedback, delete ----
post "$CK" "/v1/conversations/$CONV/name" '{"name": "Renamed", "user": "dave"}'
check "rename a conversation (got $code)" is 200 '.name == "Renamed"'
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
MID=$(field '.data[0].id')
post "$CK" "/v1/messages/$MID/feedbacks" '{"rating": "like", "user": "dave"}'
check "feedback on a message (got $code)" is 200 '.result == "success"'
check "… is stored" [ "$(sql "SELECT feedback FROM messages WHERE id = '$MID'")" = like ]
post "$CK" "/v1/messages/$MID/feedbacks" '{"rating": "meh", "user": "dave"}'
check "a rating other than like/dislike/null: 400 (got $code)" is 400 '.code == "invalid_param"'
post "$CK" "/v1/messages/no-such-message/feedbacks" '{"rating": "like", "user": "dave"}'
check "feedback on an unknown message: 404 (got $code)" is 404
req "$CK" DELETE "/v1/conversations/$CONV" -H 'Content-Type: application/json' --data-binary '{"user": "someone-else"}'
check "another user cannot delete the conversation (got $code)" is 404
req "$CK" DELETE "/v1/conversations/$CONV" -H 'Content-Type: application/json' --data-binary '{"user": "dave"}'
check "delete a conversation (got $code)" is 200 '.result == "success"'
get "$CK" "/v1/messages?conversation_id=$CONV&user=dave"
check "its messages are gone: 404 (got $code)" is 404

# ---- SIGTERM drains ----
stream "$SK" /v1/workflows/run '{"inputs": {"secs": 1.5}, "response_mode": "streaming", "user": "term"}' "$T/term.sse" 20
term_curl=$spid
wait_for "$T/term.sse" '"node_type":"code"' 10
RT=$(sed -n 's/^data: //p' "$T/term.sse" | head -1 | jq -r .workflow_run_id 2>/dev/null)
t0=$(date +%s%N)
kill -TERM "$SPID"
wait_pid "$SPID" 40
ms=$((($(date +%s%N) - t0) / 1000000))
SPID=
cp "$T/serve2.err" "$T/err"
check "SIGTERM with a run going: the server exits 0 (got $rc after ${ms} ms)" [ "$rc" = 0 ]
check "… after saying it stops" grep -q 'stopp' "$T/serve2.err"
wait_pid "$term_curl" 5
check "the running run finished and its stream got workflow_finished succeeded" \
    sse "$T/term.sse" 'names[-1] == "workflow_finished" and ev[-1]["data"]["status"] == "succeeded"'
check "the stored run says succeeded" \
    [ "$(sql "SELECT status FROM runs WHERE id = '$RT'")" = succeeded ]
sleep 0.2
left=$(leftovers | wc -l)
check "nothing of the server is left running ($left processes)" [ "$left" = 0 ]
integrity >"$T/out" 2>"$T/err"
check "integrity_check after the clean stop: ok" bash -c '[ "$(cat "$0")" = ok ]' "$T/out"

echo "1..$n"
