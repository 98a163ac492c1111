#!/usr/bin/env bash
# `sluice tools bind` for OpenAPI documents and workflows in the server's
# store: a document file is checked and kept in the store (the file may go
# afterwards), its auth stored and never shown; bad combinations of flags
# are refused; a workflow's file is kept by its absolute path.  A served run
# then calls the bound API (tests/tools/openapi_standin.py behind httpd.py's
# /api) after the document's file is gone.
source "$(dirname "$0")/lib.bash"
is() { local d=$1; shift; if eval "$*"; then ok "$d"; else nok "$d"; fi; }

for tool in jq python3 curl; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

HPID= SPID=
on_exit() {
    [ -n "$SPID" ] && { kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }
    [ -n "$HPID" ] && { exec 7>&-; kill "$HPID" 2>/dev/null; wait "$HPID" 2>/dev/null; }
}
mkfifo "$T/hin"
python3 tests/tools/httpd.py 0 <"$T/hin" >"$T/hport" 2>/dev/null &
HPID=$!
exec 7>"$T/hin"
for ((i = 0; i < 100; i++)); do [ -s "$T/hport" ] && break; sleep 0.05; done
HURL="http://127.0.0.1:$(head -1 "$T/hport")"

mkdir -p "$T/specs"
cp tests/tools/openapi/petstore3.yaml "$T/specs/pets.yaml"
cp tests/cases/tools/apps/wf_echo.yml "$T/echo.yml"
printf 'openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n      - {name: q, in: matrix}\n' \
    >"$T/specs/bad.yaml"
cat >"$T/app.yml" <<'EOF'
app: {mode: workflow, name: openapi-bind}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: id, type: text-input, label: id}]}}
    - id: get
      data:
        type: tool
        title: Get
        provider_id: pets
        provider_type: api
        tool_name: getPet
        tool_parameters: {petId: {type: mixed, value: "{{#start.id#}}"}}
        tool_configurations: {}
    - id: who
      data: {type: tool, title: Who, provider_id: pets, provider_type: api, tool_name: whoami, tool_parameters: {}, tool_configurations: {}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: got, value_selector: [get, json]}, {variable: who, value_selector: [who, json]}]}
    edges:
    - {source: start, target: get}
    - {source: get, target: who}
    - {source: who, target: end}
EOF
cd "$T" || exit 2
D="$T/data"

sl tools bind --help
is "bind --help names --openapi, --workflow and the auth flags" '[ "$rc" = 0 ] && out_has "--openapi SPEC" && out_has "--workflow FILE" && out_has "--auth-value SECRET"'
sl tools bind pets --openapi specs/pets.yaml --data "$D"
is "a document with only a relative server needs --server" '[ "$rc" = 2 ] && err_has "give --server"'
sl tools bind pets --openapi specs/bad.yaml --server "$HURL/api/v1" --data "$D"
is "a bad document is refused at bind time with path:line:col" '[ "$rc" = 2 ] && err_has "specs/bad.yaml:6:23: paths./a.get: parameter"'
sl tools bind pets --openapi specs/nope.yaml --server "$HURL/api/v1" --data "$D"
is "a missing file is refused" '[ "$rc" = 2 ] && err_has "cannot read the file"'
sl tools bind pets --openapi specs/pets.yaml --mcp "$HURL/mcp" --data "$D"
is "--openapi with --mcp is refused" '[ "$rc" = 2 ] && err_has "give one of"'
sl tools bind pets --mcp "$HURL/mcp" --auth bearer --auth-value x --data "$D"
is "--auth without --openapi is refused" '[ "$rc" = 2 ] && err_has "go with --openapi"'
sl tools bind pets --openapi specs/pets.yaml --server "$HURL/api/v1" --auth-value x --data "$D"
is "--auth-value without --auth is refused" '[ "$rc" = 2 ] && err_has "need --auth"'
sl tools bind pets --openapi specs/pets.yaml --server "$HURL/api/v1" --auth bearer --data "$D"
is "--auth bearer without its token is refused" '[ "$rc" = 2 ] && err_has "needs --auth-value"'
sl tools bind pets --openapi specs/pets.yaml --server "$HURL/api/v1" --auth basic --auth-username u --data "$D"
is "--auth basic without a password is refused" '[ "$rc" = 2 ] && err_has "--auth-password"'
sl tools bind pets --openapi specs/pets.yaml --server "ftp://x" --data "$D"
is "a server that is not http(s) is refused" '[ "$rc" = 1 ] && err_has "starting with http"'
sl tools bind pets --openapi specs/pets.yaml --server "$HURL/api/v1" --auth api_key --auth-name X-API-Key --auth-prefix bearer --auth-value key-bind-8086 --data "$D"
is "bind --openapi FILE with an api_key binds it" '[ "$rc" = 0 ] && out_has "bound pets for every app"'
sl tools bindings --data "$D"
is "bindings show the document kept in the store, the key masked" '[ "$rc" = 0 ] && jq -e '\''.pets.openapi.document | startswith("(kept in the store")'\'' out >/dev/null && jq -e '\''.pets.openapi.auth.value == "******" and .pets.openapi.auth.name == "X-API-Key"'\'' out >/dev/null && ! grep -q key-bind-8086 out'
sl tools bind byurl --openapi "$HURL/api/spec/petstore3.yaml" --auth bearer --auth-value tok-bind-6809 --data "$D"
sl tools bindings --data "$D"
is "bind --openapi URL keeps the URL" '[ "$rc" = 0 ] && jq -e '\''.byurl.openapi.spec == "'"$HURL"'/api/spec/petstore3.yaml" and .byurl.openapi.auth.value == "******"'\'' out >/dev/null && ! grep -q tok-bind-6809 out'
sl tools bind wf --workflow echo.yml --data "$D"
sl tools bindings --data "$D"
is "bind --workflow FILE keeps its absolute path" '[ "$rc" = 0 ] && jq -e '\''.wf.workflow == "'"$T"'/echo.yml"'\'' out >/dev/null'
sl tools bind wf2 --workflow no-such-app --data "$D"
is "bind --workflow of something that is no file says so" '[ "$rc" = 2 ] && err_has "no such file"'

# the document's file goes; a served run still calls the API
rm -f specs/pets.yaml
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" --limit tool_allow_private=true >/dev/null 2>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
ADMIN=$(cat "$D/admin-token" 2>/dev/null)
API="http://127.0.0.1:$PORT"
APP=$(curl -s -H "Authorization: Bearer $ADMIN" --data-binary @app.yml "$API/admin/apps" | jq -r .id)
is "an app calling the bound api tool imports" '[ -n "$APP" ] && [ "$APP" != null ]'
KEY=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" "$API/admin/apps/$APP/keys" | jq -r .key)
curl -s -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"inputs": {"id": "9"}, "response_mode": "blocking", "user": "u"}' "$API/v1/workflows/run" >"$T/out"
is "a served run calls the API from the stored document, its file gone" 'jq -e '\''.data.outputs.got[0].path == "/api/v1/echo/pets/9"'\'' out >/dev/null'
is "... with the stored key in its header, masked in what the API echoes" 'jq -e '\''.data.outputs.who[0].headers["x-api-key"] == "Bearer ******"'\'' out >/dev/null && ! grep -q key-bind-8086 out'

echo "1..$n"
