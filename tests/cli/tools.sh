#!/usr/bin/env bash
# sluice tools, validate and run with configured tools, as a user meets
# them: an MCP server on loopback (tests/tools/httpd.py's /mcp), bindings
# in sluice.yml and in the server's store, --record / --replay, and
# credentials that never show.
source "$(dirname "$0")/lib.bash"
# is DESCRIPTION 'CONDITION': ok when the shell condition holds
is() { local d=$1; shift; if eval "$*"; then ok "$d"; else nok "$d"; fi; }

for tool in curl jq python3; do
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
export SLUICE_TEST_MCP_TOKEN="Bearer s3cret-token-42"

cat >"$T/sluice.yml" <<EOF
tools:
  standin: {mcp: "$HURL/mcp"}
  locked:
    mcp:
      url: "$HURL/mcp-auth"
      headers: {Authorization: {env: SLUICE_TEST_MCP_TOKEN}}
EOF
cat >"$T/app.yml" <<'EOF'
app: {mode: workflow, name: tools-cli}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: q, type: text-input, label: q}]}}
    - id: echo
      data:
        type: tool
        title: Echo
        provider_id: langgenius/standin/standin
        provider_type: plugin
        tool_name: echo
        tool_parameters: {text: {type: mixed, value: "{{#start.q#}}?"}}
        tool_configurations: {}
    - id: who
      data: {type: tool, title: Who, provider_id: locked, provider_type: builtin, tool_name: whoami, tool_parameters: {}, tool_configurations: {}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: said, value_selector: [echo, text]}, {variable: who, value_selector: [who, text]}]}
    edges:
    - {source: start, target: echo}
    - {source: echo, target: who}
    - {source: who, target: end}
EOF
REPO=$PWD
cd "$T" || exit 2

sl tools --help
is "tools --help lists the subcommands" '[ "$rc" = 0 ] && out_has "sluice tools bind ID"'
sl tools frobnicate
is "an unknown subcommand is refused with exit 2" '[ "$rc" = 2 ] && err_has "unknown subcommand '\''frobnicate'\''"'

# validate: unbound tools are named with the lines to add
mv sluice.yml sluice.off
sl validate app.yml
is "validate warns of each unbound tool, with the lines to add" 'err_has "the plugin tool '\''echo'\'' of provider '\''langgenius/standin/standin'\'' is not bound" && err_has "    langgenius/standin/standin:" && err_has "      mcp: http://HOST:PORT/mcp"'
sl validate --strict app.yml
is "validate --strict fails on an unbound tool" '[ "$rc" = 1 ]'
sl tools list app.yml
is "tools list says UNBOUND and exits 1" '[ "$rc" = 1 ] && out_has "UNBOUND; add to sluice.yml"'
mv sluice.off sluice.yml
sl tools list app.yml
is "tools list shows where each tool is bound" '[ "$rc" = 0 ] && out_has "node '\''echo'\'' (Echo) tool langgenius/standin/standin/echo: bound to '\''standin'\'' (mcp $HURL/mcp)"'
is "tools list shows no credential" '! grep -q s3cret "$T/out"'

# call
sl tools call standin echo --args '{"text": "hello"}' --allow-private
is "tools call prints the shaped result" '[ "$rc" = 0 ] && jq -e '\''.text == "hello" and .is_error == false'\'' out >/dev/null'
sl tools call standin - --allow-private
is "tools call BINDING - lists the server's tools (all pages)" '[ "$rc" = 0 ] && jq -e '\''length == 12 and (map(.name) | index("args")) != null'\'' out >/dev/null'
sl tools call standin fail --allow-private
is "a tool's own failure exits 1 with is_error" '[ "$rc" = 1 ] && jq -e '\''.is_error == true'\'' out >/dev/null'
sl tools call standin image --allow-private
is "an image comes back as a file" '[ "$rc" = 0 ] && jq -e '\''.files[0].mime_type == "image/png"'\'' out >/dev/null'
sl tools call standin echo --args '{"text": "x"}'
is "a server on this host is refused without --allow-private" '[ "$rc" = 1 ] && err_has "standin"'
sl tools call langgenius/time/time timestamp_to_localtime --args '{"timestamp": 0, "timezone": "UTC"}'
is "tools call runs a built-in tool" '[ "$rc" = 0 ] && jq -e '\''.text == "1970-01-01 00:00:00"'\'' out >/dev/null'
sl tools call webscraper webscraper --args "{\"url\": \"$HURL/inline?type=text/html&body=x\"}"
is "a built-in webscraper refuses this host without --allow-private" '[ "$rc" = 1 ] && err_has "refused to connect"'
sl tools call webscraper webscraper --args "{\"url\": \"$HURL/inline?type=text/html&body=x\"}" --allow-private
is "... and reads it with --allow-private" '[ "$rc" = 0 ] && jq -e '\''.text | endswith("TEXT:\n\nx\n")'\'' out >/dev/null'
sl tools call standin echo --args '[1]'
is "--args must be an object" '[ "$rc" = 2 ] && err_has "--args must be a JSON object"'
sl tools call nobody echo
is "an unknown binding is named" '[ "$rc" = 1 ] && err_has "no binding named '\''nobody'\''"'
sl tools call locked whoami --allow-private
is "a header from the environment reaches the server (what it echoes is masked)" '[ "$rc" = 0 ] && out_has '\''"text": "******"'\'''
is "... and is masked in what sluice prints" '! grep -q '\''s3cret-token-42'\'' "$T/out"'

# run, record, replay
sl run app.yml --input q=hi --limit tool_allow_private=true --record tape.jsonl --json
is "run: the tool node answers" '[ "$rc" = 0 ] && jq -e '\''.outputs.said == "hi?"'\'' out >/dev/null'
is "run: a credential echoed by a tool is masked in the outputs" '! grep -q '\''s3cret-token-42'\'' "$T/out"'
is "the tape holds the tool calls, no credential" 'grep -q '\''"tool":{"arguments":{"text":"hi?"}'\'' tape.jsonl && ! grep -q '\''s3cret-token-42'\'' tape.jsonl'
mv sluice.yml sluice.off
sl run app.yml --input q=hi --replay tape.jsonl --json
is "replay: the same outputs with no binding and no server" '[ "$rc" = 0 ] && jq -e '\''.outputs.said == "hi?"'\'' out >/dev/null'
sl run app.yml --input q=other --replay tape.jsonl
is "replay: a call not on the tape fails, naming it" '[ "$rc" != 0 ] && err_has "no recorded tool call matches"'
mv sluice.off sluice.yml
sl run app.yml --input q=hi
is "run without tool_allow_private: the SSRF guard refuses this host" '[ "$rc" != 0 ]'

# a bundle that carries its own stdio server (tools/), bound in its own
# tools/bindings.yml: the server runs in the run's sandbox, which sees the
# app's tools/ folder read-only
if "$SLUICE" sandbox run -- true >/dev/null 2>&1 && command -v node >/dev/null; then
    mkdir -p bundle/tools
    cp "$REPO/tests/mcp/raw-stdio.mjs" bundle/tools/server.mjs
    printf 'tools:\n  files:\n    mcp: {command: [node, tools/server.mjs]}\n' >bundle/tools/bindings.yml
    cat >stdio.yml <<'EOF2'
app: {mode: workflow, name: stdio-bundle}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: q, type: text-input, label: q}]}}
    - id: t
      data:
        type: tool
        title: Local
        provider_id: files
        provider_type: builtin
        tool_name: t
        tool_parameters: {text: {type: mixed, value: "from {{#start.q#}}"}}
        tool_configurations: {}
    - id: end
      data: {type: end, title: End, outputs: [{variable: said, value_selector: [t, text]}]}
    edges:
    - {source: start, target: t}
    - {source: t, target: end}
EOF2
    mv sluice.yml sluice.off
    sl export stdio.yml --app-dir bundle -o stdio.zip
    sl run stdio.zip --input q=inside --json
    is "a bundle's stdio server runs in the sandbox, bound by the bundle" '[ "$rc" = 0 ] && jq -e '\''.outputs.said == "from inside"'\'' out >/dev/null'
    sl run stdio.yml --input q=inside
    is "without the bundle the tool is unbound" '[ "$rc" != 0 ] && err_has "is not bound"'
    mv sluice.off sluice.yml
else
    skip "a bundle's stdio server (no local sandbox or no node here)"
fi

# workflow tools: an app bound in sluice.yml, called from the command
# line, and one a bundle carries in its tools/ folder
cp "$REPO/tests/cases/tools/apps/wf_echo.yml" echo.yml
printf '  7a1c0000-0000-4000-8000-00000000ec40: {workflow: echo.yml}\n' >>sluice.yml
sl tools call 7a1c0000-0000-4000-8000-00000000ec40 - --config sluice.yml
is "tools call BINDING -: a workflow's one tool, its start variables as the schema" '[ "$rc" = 0 ] && jq -e '\''.[0].name == "echo_app" and .[0].inputSchema.required == ["text"] and .[0].inputSchema.properties.count.type == "number"'\'' out >/dev/null'
sl tools call 7a1c0000-0000-4000-8000-00000000ec40 any_name --args '{"text": "cli", "count": "4"}' --config sluice.yml
is "tools call runs the app: its outputs as text and json" '[ "$rc" = 0 ] && jq -e '\''.text == "{\"greeting\": \"Hello cli\", \"count\": 4}" and .json[0].count == 4'\'' out >/dev/null'
mkdir -p wfb/tools
cp echo.yml wfb/tools/echo.yml
printf 'tools:\n  wfx: {workflow: echo.yml}\n' >wfb/tools/bindings.yml
cat >wfcall.yml <<'EOF2'
app: {mode: workflow, name: wf-bundle}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: q, type: text-input, label: q}]}}
    - id: t
      data:
        type: tool
        title: Echo app
        provider_id: wfx
        provider_type: workflow
        tool_name: echo
        tool_parameters: {text: {type: mixed, value: "{{#start.q#}}"}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: said, value_selector: [t, json]}]}
    edges:
    - {source: start, target: t}
    - {source: t, target: end}
EOF2
sed 's/provider_id: wfx/provider_id: 7a1c0000-0000-4000-8000-00000000ec40/' wfcall.yml >wfapp.yml
sl run wfapp.yml --input q=taped --record wftape.jsonl --json
is "run --record: a workflow tool's call goes on the tape" '[ "$rc" = 0 ] && grep -q '\''"greeting":"Hello taped"'\'' wftape.jsonl'
mv sluice.yml sluice.off
sl run wfapp.yml --input q=taped --replay wftape.jsonl --json
is "run --replay: the workflow tool answers from the tape, with no binding" '[ "$rc" = 0 ] && jq -e '\''.outputs.said[0].greeting == "Hello taped"'\'' out >/dev/null'
mv sluice.off sluice.yml
sl export wfcall.yml --app-dir wfb -o wfb.zip
sl run wfb.zip --input q=zipped --json
is "a bundle's workflow tool runs the app in its tools/ folder" '[ "$rc" = 0 ] && jq -e '\''.outputs.said[0].greeting == "Hello zipped"'\'' out >/dev/null'
printf 'tools:\n  wfx: {workflow: ../echo.yml}\n' >wfb/tools/bindings.yml
sl export wfcall.yml --app-dir wfb -o wfb2.zip
sl run wfb2.zip --input q=zipped
is "a bundle's workflow binding may not leave its tools/ folder" '[ "$rc" != 0 ] && err_has "inside its tools/ folder"'

# the server's store: bind, import, run through the Service API
D="$T/data"
sl tools bind standin --mcp "$HURL/mcp" --data "$D"
is "tools bind writes the server's store" '[ "$rc" = 0 ] && out_has "bound standin for every app"'
sl tools bind locked --mcp "$HURL/mcp-auth" --header "Authorization: Bearer s3cret-token-42" --data "$D"
sl tools bindings --data "$D"
is "tools bindings masks header values" '[ "$rc" = 0 ] && out_has '\''"Authorization": "******"'\'' && ! grep -q s3cret "$T/out"'
sl tools bind bad --mcp ftp://x --data "$D"
is "a bad binding is refused and the store keeps the good ones" '[ "$rc" = 1 ] && err_has "starts with http"'
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mv sluice.yml sluice.off
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" --limit tool_allow_private=true >/dev/null 2>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
ADMIN=$(cat "$D/admin-token" 2>/dev/null)
API="http://127.0.0.1:$PORT"
APP=$(curl -s -H "Authorization: Bearer $ADMIN" --data-binary @app.yml "$API/admin/apps" | jq -r .id)
is "an app with tools imports against the store's bindings" '[ -n "$APP" ] && [ "$APP" != null ]'
KEY=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" "$API/admin/apps/$APP/keys" | jq -r .key)
curl -s -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json'     -d '{"inputs": {"q": "served"}, "response_mode": "blocking", "user": "u"}' "$API/v1/workflows/run" >"$T/out"
is "a served run calls the bound tool" 'jq -e '\''.data.outputs.said == "served?"'\'' out >/dev/null'
is "... and shows no credential" '! grep -q '\''s3cret-token-42'\'' "$T/out"'
curl -s -H "Authorization: Bearer $ADMIN" "$API/admin/tools" >"$T/out"
is "GET /admin/tools lists the bindings, masked" 'jq -e '\''.data.standin.mcp.url != null and .data.locked.mcp.headers.Authorization == "******"'\'' out >/dev/null'
code=$(curl -s -o "$T/out" -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" -d '{"mcp": "'"$HURL"'/mcp", "names": {"echo": "flags"}}' "$API/admin/apps/$APP/tools/standin")
is "PUT /admin/apps/APP/tools/ID sets the app's own binding" '[ "$code" = 200 ]'
curl -s -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json'     -d '{"inputs": {"q": "again"}, "response_mode": "blocking", "user": "u"}' "$API/v1/workflows/run" >"$T/out"
is "the app's binding wins over the server's, at once" 'jq -e '\''.data.outputs.said == "flag=None count=None label=None"'\'' out >/dev/null'
code=$(curl -s -o "$T/out" -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" -d '{"mcp": {"url": "'"$HURL"'/mcp", "headers": {"A": {"env": "HOME"}}, "bogus": 1}}' "$API/admin/tools/x")
is "a bad binding is a 400 naming the field" '[ "$code" = 400 ] && grep -q '\''unknown setting'\'' "$T/out"'
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $ADMIN" "$API/admin/tools/nope")
is "DELETE of a binding that is not there is a 404" '[ "$code" = 404 ]'
curl -s -H "Authorization: Bearer $ADMIN" "$API/admin/apps/$APP" >"$T/export.yml"
is "an export carries no binding and no credential" '! grep -q -e s3cret -e mcp-auth "$T/export.yml"'
# a bundle whose own tools/bindings.yml binds its tool; a new version in
# plain YAML keeps the app's files, so their bindings still count
mkdir -p b2/tools
printf 'tools:\n  files: {mcp: "%s/mcp"}\n' "$HURL" >b2/tools/bindings.yml
sed 's/provider_id: langgenius\/standin\/standin/provider_id: files/; s/provider_id: locked/provider_id: files/; s/tool_name: whoami/tool_name: echo/' app.yml >b2.yml
"$SLUICE" export b2.yml --app-dir b2 -o b2.zip >/dev/null 2>&1
code=$(curl -s -o "$T/out" -w '%{http_code}' -H "Authorization: Bearer $ADMIN" --data-binary @b2.zip "$API/admin/apps")
B2=$(jq -r .id out 2>/dev/null)
is "a bundle imports against its own bindings" '[ "$code" = 201 ] && [ -n "$B2" ]'
code=$(curl -s -o "$T/out" -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" --data-binary @b2.yml "$API/admin/apps/$B2")
is "a new version in plain YAML keeps the bundle's bindings" '[ "$code" = 200 ]'
# a workflow tool bound in the server's store (an absolute path)
code=$(curl -s -o "$T/out" -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" -d '{"workflow": "'"$PWD"'/echo.yml"}' "$API/admin/tools/wfs")
is "PUT /admin/tools/ID binds a workflow" '[ "$code" = 200 ]'
sed 's/provider_id: wfx/provider_id: wfs/' wfcall.yml >wfs.yml
W=$(curl -s -H "Authorization: Bearer $ADMIN" --data-binary @wfs.yml "$API/admin/apps" | jq -r .id)
WKEY=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" "$API/admin/apps/$W/keys" | jq -r .key)
curl -s -H "Authorization: Bearer $WKEY" -H 'Content-Type: application/json' -d '{"inputs": {"q": "served"}, "response_mode": "blocking", "user": "u"}' "$API/v1/workflows/run" >"$T/out"
is "a served run calls the workflow tool bound in the store" 'jq -e '\''.data.outputs.said[0].greeting == "Hello served"'\'' out >/dev/null'
mv sluice.off sluice.yml
echo "1..$n"
