#!/usr/bin/env bash
# Under `sluice serve`, an app run as a workflow tool finds its own tools
# as a top-level run of it would (docs/tools.md, "Workflows as tools"): its
# bundle's bindings, the server's store, the calling app's own store
# bindings, then sluice.yml's.  App A calls app B (a workflow binding in
# the store, or in sluice.yml); B's tool node is bound only in the store,
# to the MCP stand-in (tests/tools/httpd.py's /mcp); A runs through the
# Service API and B's tool result must come back.
source "$(dirname "$0")/lib.bash"
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
cd "$T" || exit 2

# B: its one tool node (provider `inner`) is bound nowhere but the store
cat >b.yml <<'EOF'
app: {mode: workflow, name: inner_app}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: text, type: text-input, label: text, required: true}]}}
    - id: t
      data:
        type: tool
        title: Inner
        provider_id: inner
        provider_type: builtin
        tool_name: echo
        tool_parameters: {text: {type: mixed, value: "B got {{#start.text#}}"}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: said, value_selector: [t, text]}]}
    edges:
    - {source: start, target: t}
    - {source: t, target: end}
EOF
# A: calls B through workflow binding PROVIDER
app_a() { # NAME PROVIDER
    cat <<EOF
app: {mode: workflow, name: $1}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: q, type: text-input, label: q}]}}
    - id: w
      data:
        type: tool
        title: Call B
        provider_id: $2
        provider_type: workflow
        tool_name: inner_app
        tool_parameters: {text: {type: mixed, value: "{{#start.q#}}"}}
    - id: end
      data: {type: end, title: End, outputs: [{variable: out, value_selector: [w, json]}]}
    edges:
    - {source: start, target: w}
    - {source: w, target: end}
EOF
}
app_a outer wfb >a.yml
app_a outer_cfg wfc >a_cfg.yml
app_a outer_cfg2 wfc >a_cfg2.yml
# sluice.yml binds wfc for every app; B's own tool is not in it
printf 'tools:\n  wfc: {workflow: "%s/b.yml"}\n' "$T" >sluice.yml

D="$T/data"
PORT=$(free_port)
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" --limit tool_allow_private=true \
    >/dev/null 2>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
ADMIN=$(cat "$D/admin-token" 2>/dev/null)
API="http://127.0.0.1:$PORT"
admin() { # METHOD PATH [BODY]: the status; the answer in $T/out
    curl -s -o "$T/out" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $ADMIN" \
        ${3:+--data-binary "$3"} "$API$2"
}
import() { # FILE: the new app's id (empty when refused; the answer in $T/out)
    curl -s -o "$T/out" -H "Authorization: Bearer $ADMIN" --data-binary @"$1" "$API/admin/apps"
    jq -r '.id // empty' "$T/out"
}
run() { # APP Q: runs APP through the Service API with input q, answer in $T/out
    local key
    key=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" "$API/admin/apps/$1/keys" | jq -r .key)
    curl -s -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d '{"inputs": {"q": "'"$2"'"}, "response_mode": "blocking", "user": "u"}' \
        "$API/v1/workflows/run" >"$T/out"
}
said() { jq -r '.data.outputs.out[0].said // .data.error // .message // "?"' "$T/out"; }

code=$(admin PUT /admin/tools/wfb '{"workflow": "'"$T"'/b.yml"}')
is "the workflow binding goes in the server's store" '[ "$code" = 200 ]'
A=$(import a.yml)
is "without a binding for B's tool, A is refused at import, naming B's tool" \
    '[ -z "$A" ] && grep -q "inner" "$T/out"'

# the server's binding for B's tool, in the store only
code=$(admin PUT /admin/tools/inner '{"mcp": "'"$HURL"'/mcp"}')
is "B's tool bound for every app in the store" '[ "$code" = 200 ]'
A=$(import a.yml)
is "A imports: B loads against the store's bindings" '[ -n "$A" ]'
run "$A" one
is "a served run of A gets B's tool result (the server's binding)" '[ "$(said)" = "B got one" ]'

# A's own binding for B's tool wins over the server's, as for A's own tools
code=$(admin PUT "/admin/apps/$A/tools/inner" '{"mcp": "'"$HURL"'/mcp-dify", "names": {"echo": "mock_search"}}')
is "an app's own binding for the tool of the app it calls" '[ "$code" = 200 ]'
run "$A" two
is "... is what B's tool node finds when A calls B" '[ "$(said)" = "mocked search result" ]'
code=$(admin DELETE /admin/tools/inner)
run "$A" three
is "... and it is enough without the server's" '[ "$code" = 200 ] && [ "$(said)" = "mocked search result" ]'

# B bound in sluice.yml (shared by every app): each calling app's own store
# bindings still decide what B's tool is
code=$(admin PUT /admin/tools/inner '{"mcp": "'"$HURL"'/mcp"}')
C1=$(import a_cfg.yml)
C2=$(import a_cfg2.yml)
code2=$(admin PUT "/admin/apps/$C2/tools/inner" '{"mcp": "'"$HURL"'/mcp-dify", "names": {"echo": "mock_search"}}')
is "two apps call B through sluice.yml's binding" '[ -n "$C1" ] && [ -n "$C2" ] && [ "$code" = 200 ] && [ "$code2" = 200 ]'
run "$C1" four
is "the first finds the server's binding for B's tool" '[ "$(said)" = "B got four" ]'
run "$C2" five
is "the second its own, in the same server" '[ "$(said)" = "mocked search result" ]'
run "$C1" six
is "the first is not changed by the second's" '[ "$(said)" = "B got six" ]'

# B imported into the server and named by its id: workflow: {app: ID}
B=$(import b.yml)
app_a outer_id wfid >a_id.yml
code=$(admin PUT /admin/tools/wfid '{"workflow": {"app": "'"$B"'"}}')
AI=$(import a_id.yml)
is "an app of the store bound as a workflow tool by its id ($code, $B)" '[ -n "$B" ] && [ "$code" = 200 ] && [ -n "$AI" ]'
run "$AI" seven
is "a served run calls the imported app, which finds the store's bindings" '[ "$(said)" = "B got seven" ]'
code=$(admin PUT /admin/tools/wfid '{"workflow": {"app": "no-such-app"}}')
NA=$(import a_id.yml)
is "an id the store does not have: the import is refused, naming it" \
    '[ "$code" = 200 ] && [ -z "$NA" ] && grep -q "no-such-app" "$T/out"'
# an app that comes to name itself by its id: a cycle, refused by name
code=$(admin PUT /admin/tools/wfself '{"workflow": {"app": "'"$B"'"}}')
app_a self_id wfself >self.yml
SELF=$(import self.yml)
code2=$(admin PUT /admin/tools/wfself '{"workflow": {"app": "'"$SELF"'"}}')
run "$SELF" eight
is "then it cannot run ($(said | head -c 120))" \
    '[ -n "$SELF" ] && [ "$code2" = 200 ] && said | grep -q "cannot run"'
code=$(curl -s -o "$T/out" -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" \
    --data-binary @self.yml "$API/admin/apps/$SELF")
is "and a new version of it is refused, naming the cycle ($code)" \
    '[ "$code" = 400 ] && grep -q "cycle" "$T/out" && grep -q "app:$SELF" "$T/out"'
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=
is "the server stopped with no sanitizer report" \
    '! grep -q -e "Sanitizer" -e "runtime error" "$T/serve.err"'
echo "1..$n"
