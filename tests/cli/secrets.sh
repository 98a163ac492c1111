#!/usr/bin/env bash
# Secrets never leave in errors: a secret environment variable, an
# Authorization value and a password in a URL are masked in every error and
# every stored or printed string — the CLI's stderr summary and --json,
# the server's blocking answer, GET /v1/workflows/run/:id,
# /v1/workflows/logs and the runs.error column — in raw, URL-encoded and
# JSON-escaped forms.
. "$(dirname "$0")/lib.bash"
for tool in curl jq python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
SPID=
on_exit() { [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null; wait 2>/dev/null; }

# The secret has characters that URL-encoding and JSON escaping change.
cat >"$T/leak.yml" <<'EOF'
app: {mode: workflow, name: leak}
kind: app
version: 0.1.5
workflow:
  environment_variables:
  - {id: tok, name: tok, value: 'Zq"9\kX/tok+en y7', value_type: secret}
  - {id: pw, name: pw, value: 'hunter2pass', value_type: secret}
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: how, label: How, type: text-input, required: true}]}}
    - id: code
      data:
        type: code
        title: Leaky
        code_language: python3
        variables: [{variable: tok, value_selector: [env, tok]}, {variable: how, value_selector: [start, how]}]
        code: |
          import json, urllib.parse
          def main(tok: str, how: str) -> dict:
              if how == "raise":
                  raise ValueError("raw=" + tok + " url=" + urllib.parse.quote(tok, safe="") + " json=" + json.dumps(tok)[1:-1])
              return {"out": "ok"}
        outputs: {out: {type: string, children: null}}
    - id: http
      data: {type: http-request, title: Fetch, method: get, url: "http://user:{{#env.pw#}}@127.0.0.1:1/x?t={{#env.tok#}}", authorization: {type: no-auth}, headers: "", params: "",
             body: {type: none, data: []}, timeout: {max_connect_timeout: 2}, retry_config: {retry_enabled: false}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: out, value_selector: [code, out]}]}}
    edges:
    - {source: start, target: code}
    - {source: code, target: http}
    - {source: http, target: end}
EOF
# no_leak FILE...: none of the secret's forms (raw, URL-encoded, JSON-escaped,
# the URL password) appears
no_leak() {
    ! grep -qF -e 'Zq"9\kX/tok+en y7' -e 'Zq%229%5CkX%2Ftok%2Ben%20y7' -e 'Zq\"9\\kX/tok+en y7' \
        -e 'Zq%229%5CkX/tok+en%20y7' -e 'Zq%229%5ckX/tok+en+y7' -e 'kX%2Ftok' -e 'kX/tok' \
        -e 'Zq\"9\\kX\/tok+en y7' -e 'hunter2pass' "$@"
}

sl run "$T/leak.yml" --input how=raise
check "a code node's error quoting a secret: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… the error is shown, masked" err_has "raw=****** url=****** json=******"
check "… stderr and stdout carry no form of the secret" no_leak "$T/out" "$T/err"
sl run "$T/leak.yml" --input how=raise --json
check "sluice run --json: .error masked, no form of the secret" \
    eval 'jq -e ".error | test(\"raw=\")" "$T/out" >/dev/null && no_leak "$T/out" "$T/err"'
sl run "$T/leak.yml" --input how=raise --events
check "sluice run --events: no event carries the secret" no_leak "$T/out" "$T/err"
sl run "$T/leak.yml" --input how=http --limit http_allow_private=true
check "an HTTP error quoting a URL with a secret and a password: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… neither the secret nor the password shows" no_leak "$T/out" "$T/err"

# ---- the server ----
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
D=$T/data
A=$("$SLUICE" app import "$T/leak.yml" --data "$D" 2>>"$T/serve.err")
K=$("$SLUICE" app key create "$A" --data "$D" 2>>"$T/serve.err")
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "$BASE/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
curl -s --max-time 20 -H "Authorization: Bearer $K" -H 'Content-Type: application/json' \
    --data-binary '{"inputs": {"how": "raise"}, "response_mode": "blocking", "user": "u"}' \
    "$BASE/v1/workflows/run" >"$T/out"
run=$(jq -r .workflow_run_id "$T/out")
check "the blocking answer: failed, error masked" \
    eval 'jq -e ".data.status == \"failed\" and (.data.error | test(\"raw=\"))" "$T/out" >/dev/null && no_leak "$T/out"'
curl -s --max-time 20 -H "Authorization: Bearer $K" -H 'Content-Type: application/json' \
    --data-binary '{"inputs": {"how": "raise"}, "response_mode": "streaming", "user": "u"}' \
    "$BASE/v1/workflows/run" >"$T/stream"
check "the streaming answer carries no form of the secret" no_leak "$T/stream"
curl -s --max-time 10 -H "Authorization: Bearer $K" "$BASE/v1/workflows/run/$run" >"$T/out"
check "GET /v1/workflows/run/:id: error masked" \
    eval 'jq -e ".error | test(\"raw=\")" "$T/out" >/dev/null && no_leak "$T/out"'
curl -s --max-time 10 -H "Authorization: Bearer $K" "$BASE/v1/workflows/logs" >"$T/out"
check "GET /v1/workflows/logs: no form of the secret" \
    eval 'jq -e ".data | length >= 1" "$T/out" >/dev/null && no_leak "$T/out"'
sqlite3 "$D/sluice.db" "SELECT error, outputs FROM runs" >"$T/out" 2>"$T/err"
check "the runs table's error and outputs columns: masked" \
    eval 'grep -q "raw=" "$T/out" && no_leak "$T/out"'
check "the server's log: no form of the secret" no_leak "$T/serve.err"
echo "1..$n"
