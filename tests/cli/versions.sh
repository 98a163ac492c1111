#!/usr/bin/env bash
# App versions in the store: `sluice app import --app ID` and the admin
# API's PUT make new versions; a running server runs the newest for the
# runs that follow, each run records its version, old versions stay
# readable; bad updates change nothing.
. "$(dirname "$0")/lib.bash"

SPID=
on_exit() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; }

app_v() { # FILE WORD: a workflow whose output `says` is WORD
    cat >"$1" <<EOF
app: {mode: workflow, name: versioned}
kind: app
version: 0.1.5
workflow:
  environment_variables:
  - {name: word, value: $2, value_type: string}
  graph:
    edges:
    - {source: start, target: end, sourceHandle: source, targetHandle: target}
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: says, value_selector: [env, word]}
EOF
}
app_v "$T/v1.yml" one
app_v "$T/v2.yml" two
app_v "$T/v3.yml" three

D="$T/data"
sl app import "$T/v1.yml" --data "$D"
ID=$(cat "$T/out")
check "import makes version 1" test "$rc" = 0 -a -n "$ID"
sl app key create "$ID" --data "$D"
KEY=$(cat "$T/out")
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>"$T/serve.err" &
SPID=$!
for _ in $(seq 200); do curl -s --max-time 1 "$BASE/health" | grep -q ok && break; sleep 0.05; done
AT=$(cat "$D/admin-token")

run() { curl -s --max-time 20 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        -d '{"inputs": {}, "response_mode": "blocking", "user": "v"}' "$BASE/v1/workflows/run"; }
run >"$T/r1.json"
check "the server runs version 1" test "$(jq -r .data.outputs.says "$T/r1.json")" = one

sl app import "$T/v2.yml" --app "$ID" --data "$D"
check "import --app makes version 2 of the same app (its id on stdout)" \
    test "$rc" = 0 -a "$(cat "$T/out")" = "$ID" -a -n "$(grep -F 'version 2' "$T/err")"
run >"$T/r2.json"
check "the running server runs the new version from the next run on" \
    test "$(jq -r .data.outputs.says "$T/r2.json")" = two

code=$(curl -s -o "$T/put.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $AT" \
       --data-binary @"$T/v3.yml" "$BASE/admin/apps/$ID")
check "PUT /admin/apps/ID makes version 3 (got $code)" \
    test "$code" = 200 -a "$(jq -r .version "$T/put.json")" = 3
run >"$T/r3.json"
check "... and runs use it" test "$(jq -r .data.outputs.says "$T/r3.json")" = three

code=$(curl -s -o "$T/bad.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $AT" \
       --data-binary 'app: {mode: workflow' "$BASE/admin/apps/$ID")
check "a DSL that does not load is refused with the reason: 400 (got $code)" \
    test "$code" = 400 -a -n "$(jq -r .message "$T/bad.json" | grep -i 'load')"
code=$(curl -s -o "$T/nf.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $AT" \
       --data-binary @"$T/v2.yml" "$BASE/admin/apps/no-such-app")
check "a new version of an app that does not exist: 404 (got $code)" test "$code" = 404
run >"$T/r4.json"
check "the refused update changed nothing" test "$(jq -r .data.outputs.says "$T/r4.json")" = three

sl app versions "$ID" --data "$D"
check "sluice app versions lists 3, newest first, the current one marked" \
    bash -c '[ "$(grep -c . "$0")" = 3 ] && head -1 "$0" | grep -q "^3 .*(current)"' "$T/out"
sl app export "$ID" --version 1 --data "$D"
check "export --version 1 gives version 1's DSL as imported" cmp -s "$T/out" "$T/v1.yml"
sl app export "$ID" --version 9 --data "$D"
check "a version that does not exist is an error that says so" \
    test "$rc" = 1 -a -n "$(grep -F 'has no version 9' "$T/err")"
curl -s -H "Authorization: Bearer $AT" "$BASE/admin/apps/$ID/versions" >"$T/vs.json"
check "GET /admin/apps/ID/versions lists them" test "$(jq '.data | length' "$T/vs.json")" = 3
curl -s -H "Authorization: Bearer $AT" "$BASE/admin/apps/$ID?version=2" >"$T/v2-got.yml"
check "GET /admin/apps/ID?version=2 gives version 2" cmp -s "$T/v2-got.yml" "$T/v2.yml"
sl app list --data "$D"
check "app list shows the current version" out_has "(version 3)"

for r in r1 r2 r3; do
    jq -r .workflow_run_id "$T/$r.json"
done >"$T/ids"
kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=
got=$(while read -r rid; do sqlite3 "$D/sluice.db" "SELECT app_version FROM runs WHERE id='$rid'"; done <"$T/ids" | tr '\n' ' ')
check "each run records the version it ran (got: $got)" test "$got" = "1 2 3 "

rid=$(head -1 "$T/ids")
nodes=$(sqlite3 "$D/sluice.db" "SELECT node_id || ':' || status FROM node_executions WHERE run_id='$rid' ORDER BY step" | tr '\n' ' ')
check "the store's node_executions view lists each node of a run (got: $nodes)" \
    test "$nodes" = "start:succeeded end:succeeded "

echo "1..$n"
