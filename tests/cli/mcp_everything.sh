#!/usr/bin/env bash
# sluice's MCP client against @modelcontextprotocol/server-everything, the
# reference server that exercises the whole protocol, over Streamable HTTP
# and the old HTTP+SSE transport (tests/mcp, installed by install-deps).
source "$(dirname "$0")/lib.bash"
# is DESCRIPTION 'CONDITION': ok when the shell condition holds
is() { local d=$1; shift; if eval "$*"; then ok "$d"; else nok "$d"; fi; }

EVERY=$PWD/tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js
for tool in node jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
[ -f "$EVERY" ] || { echo "1..0 # SKIP tests/mcp/node_modules is not installed (scripts/install-deps)"; exit 0; }

PIDS=()
on_exit() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# start MODE PORT: server-everything in MODE (streamableHttp, sse) on PORT
start() {
    PORT=$2 node "$EVERY" "$1" >/dev/null 2>"$T/everything-$1.err" &
    PIDS+=($!)
    for ((i = 0; i < 200; i++)); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$2),0.2)" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
HP=$(free_port)
SP=$(free_port)
start streamableHttp "$HP" || { echo "1..0 # SKIP server-everything did not start"; exit 0; }
start sse "$SP" || { echo "1..0 # SKIP server-everything (sse) did not start"; exit 0; }
cat >"$T/sluice.yml" <<EOF2
tools:
  http: {mcp: "http://127.0.0.1:$HP/mcp"}
  sse: {mcp: "http://127.0.0.1:$SP/sse"}
EOF2
cd "$T" || exit 2

for b in http sse; do
    sl tools call "$b" - --allow-private
    is "$b: the reference server's tools are listed" '[ "$rc" = 0 ] && jq -e '\''map(.name) | index("echo") != null and index("get-sum") != null'\'' out >/dev/null'
    sl tools call "$b" echo --args '{"message": "hello everything"}' --allow-private
    is "$b: echo" '[ "$rc" = 0 ] && jq -e '\''.text | contains("hello everything")'\'' out >/dev/null'
    sl tools call "$b" get-sum --args '{"a": 2, "b": 40}' --allow-private
    is "$b: get-sum" '[ "$rc" = 0 ] && jq -e '\''.text | contains("42")'\'' out >/dev/null'
    sl tools call "$b" get-tiny-image --allow-private
    is "$b: an image comes back as a file" '[ "$rc" = 0 ] && jq -e '\''.files | map(.mime_type) | index("image/png") != null'\'' out >/dev/null'
    sl tools call "$b" get-structured-content --args '{"location": "Chicago"}' --allow-private
    is "$b: structured content of a tool with an output schema becomes variables" '[ "$rc" = 0 ] && jq -e '\''.variables.temperature != null and .variables.conditions != null'\'' out >/dev/null'
    sl tools call "$b" get-sum --args '{"a": "x"}' --allow-private
    is "$b: arguments the server refuses are an error or a failed result" '[ "$rc" = 1 ]'
    sl tools call "$b" no-such-tool --allow-private
    is "$b: an unknown tool is refused" '[ "$rc" = 1 ]'
done
echo "1..$n"
