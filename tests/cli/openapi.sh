#!/usr/bin/env bash
# OpenAPI tools from the command line, as a user meets them: a binding in
# sluice.yml whose spec is a file beside it, `sluice tools list/call`, a
# run, a bad document named with path:line:col, and a token that never
# shows.  The API is tests/tools/openapi_standin.py behind httpd.py's /api.
source "$(dirname "$0")/lib.bash"
is() { local d=$1; shift; if eval "$*"; then ok "$d"; else nok "$d"; fi; }

for tool in jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

HPID=
on_exit() {
    [ -n "$HPID" ] && { exec 7>&-; kill "$HPID" 2>/dev/null; wait "$HPID" 2>/dev/null; }
}
mkfifo "$T/hin"
python3 tests/tools/httpd.py 0 <"$T/hin" >"$T/hport" 2>/dev/null &
HPID=$!
exec 7>"$T/hin"
for ((i = 0; i < 100; i++)); do [ -s "$T/hport" ] && break; sleep 0.05; done
HURL="http://127.0.0.1:$(head -1 "$T/hport")"
export SLUICE_TEST_OPENAPI_TOKEN="tok-cli-openapi-6502"

mkdir -p "$T/specs"
cp tests/tools/openapi/petstore3.yaml "$T/specs/pets.yaml"
printf 'openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n      - {name: q, in: matrix}\n' \
    >"$T/specs/bad.yaml"
cat >"$T/sluice.yml" <<EOF
tools:
  pets:
    openapi:
      spec: specs/pets.yaml
      server: "$HURL/api/v1"
      auth: {type: bearer, token: {env: SLUICE_TEST_OPENAPI_TOKEN}}
  broken:
    openapi: {spec: specs/bad.yaml, server: "$HURL/api/v1"}
EOF
cat >"$T/app.yml" <<'EOF'
app: {mode: workflow, name: openapi-cli}
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
    - id: end
      data: {type: end, title: End, outputs: [{variable: got, value_selector: [get, json]}]}
    edges:
    - {source: start, target: get}
    - {source: get, target: end}
EOF
cd "$T" || exit 2

sl tools list app.yml
is "tools list shows an api tool bound to its OpenAPI binding" '[ "$rc" = 0 ] && out_has "bound to '\''pets'\'' (openapi $HURL/api/v1)"'
sl tools call pets - --allow-private
is "tools call BINDING - lists the operations" '[ "$rc" = 0 ] && jq -e '\''length == 13 and (map(.name) | index("list_get")) != null'\'' out >/dev/null'
sl tools call pets whoami --allow-private
is "a call sends the bearer token, masked in what the API echoes" '[ "$rc" = 0 ] && jq -e '\''.json[0].headers.authorization == "Bearer ******"'\'' out >/dev/null'
is "... and the token shows nowhere" '! grep -q tok-cli-openapi-6502 "$T/out" "$T/err"'
sl tools call pets status --args '{"code": 404}' --allow-private
is "a 404 exits 1 naming the status" '[ "$rc" = 1 ] && err_has "HTTP 404"'
sl tools call pets whoami
is "without --allow-private this host is refused" '[ "$rc" = 1 ] && err_has "refused to connect"'
sl tools call broken x --allow-private
is "a bad document is named with path:line:col" '[ "$rc" = 1 ] && err_has "specs/bad.yaml:6:23: paths./a.get: parameter '\''q'\''"'
sl run app.yml --input id=5 --limit tool_allow_private=true --json
is "run: the tool node calls the operation" '[ "$rc" = 0 ] && jq -e '\''.outputs.got[0].path == "/api/v1/echo/pets/5"'\'' out >/dev/null'
is "run: the token shows nowhere" '! grep -q tok-cli-openapi-6502 "$T/out" "$T/err"'

echo "1..$n"
