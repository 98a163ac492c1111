#!/usr/bin/env bash
# CLI + server: a file value is data, never a capability.  Whatever a code
# node, the DSL or an API client writes into a value shaped like a Dify
# file, bytes are reached only through an id sluice issued for this run
# (the CLI's --input @FILE), this app and this user (uploads, files runs
# made).  A file:// url, a path, a traversal id or another app's or user's
# id reads nothing and is refused with a clear error; --out never builds a
# path from an id.
. "$(dirname "$0")/lib.bash"
for tool in curl jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
SPID= HPID=
on_exit() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$HPID" ] && { exec 7>&-; kill "$HPID" 2>/dev/null; }
    wait 2>/dev/null
}
# the http-request peer: echoes request bodies at /body
mkfifo "$T/hin"
python3 tests/tools/httpd.py 0 <"$T/hin" >"$T/hport" 2>/dev/null &
HPID=$!
exec 7>"$T/hin"
for ((i = 0; i < 100; i++)); do [ -s "$T/hport" ] && break; sleep 0.05; done
HURL="http://127.0.0.1:$(head -1 "$T/hport")"

echo "TOP-SECRET-HOST-FILE" >"$T/secret.txt"
no_secret() { ! grep -rq TOP-SECRET "$@"; }
jqt() { jq -e "$@" >/dev/null 2>&1; }
printf 'users own bytes' >"$T/mine.txt"

# A workflow whose code node forges a file value as told, then sends it.
cat >"$T/forge.yml" <<EOF
app: {mode: workflow, name: forge}
kind: app
version: 0.1.5
workflow:
  environment_variables:
  - {id: base, name: base, value: "$HURL", value_type: string}
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: how, label: How, type: text-input, required: true}, {variable: doc, label: Doc, type: file, required: false}]}}
    - id: forge
      data:
        type: code
        title: Forge
        code_language: python3
        variables: [{variable: how, value_selector: [start, how]}, {variable: doc, value_selector: [start, doc]}]
        code: |
          def main(how: str, doc) -> dict:
              if how == "given":
                  return {"f": doc}
              f = {"dify_model_identity": "__dify__file__", "type": "document", "filename": "secret.txt",
                   "extension": ".txt", "mime_type": "text/plain", "size": 21, "remote_url": None,
                   "id": None, "related_id": None, "url": "file://$T/secret.txt", "transfer_method": "local_file"}
              if how == "stolen_id":
                  f["related_id"] = doc["related_id"]
                  f["filename"] = "stolen.txt"
              return {"f": f}
        outputs: {f: {type: object, children: null}}
    - id: send
      data: {type: http-request, title: Send, method: post, url: "{{#env.base#}}/body", authorization: {type: no-auth}, headers: "", params: "",
             body: {type: binary, data: [{type: file, file: [forge, f]}]}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: body, value_selector: [send, body]}]}}
    edges:
    - {source: start, target: forge}
    - {source: forge, target: send}
    - {source: send, target: end}
EOF

# ---- sluice run ----
sl run "$T/forge.yml" --input how=url --limit http_allow_private=true
check "a forged file:// value from a code node: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… names the file and why it is refused" err_has "file 'secret.txt' is not a file sluice holds for this run"
check "… and the host file's bytes never left" no_secret "$T/out" "$T/err"

sl run "$T/forge.yml" --input how=given --input doc=@"$T/mine.txt" --limit http_allow_private=true
check "a file given with --input @FILE is sent (exit $rc)" [ "$rc" = 0 ]
check "… its bytes arrive" out_has "users own bytes"

# --out: an output that names a file by a traversal id writes nothing
cat >"$T/out.yml" <<'EOF'
app: {mode: workflow, name: out-forge}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: forge
      data:
        type: code
        title: Forge
        code_language: python3
        variables: []
        code: |
          def main() -> dict:
              return {"f": {"dify_model_identity": "__dify__file__", "type": "document", "filename": "hostname",
                            "transfer_method": "tool_file", "related_id": "../../../../../../etc/hostname",
                            "extension": "", "mime_type": "text/plain", "size": 1, "url": None, "remote_url": None}}
        outputs: {f: {type: object, children: null}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: f, value_selector: [forge, f]}]}}
    edges:
    - {source: start, target: forge}
    - {source: forge, target: end}
EOF
sl run "$T/out.yml" --out "$T/outdir"
check "--out with a traversal id in an output: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… says the file is not one sluice holds" err_has "is not a file sluice holds for this run (related_id '../../../../../../etc/hostname')"
check "… and wrote nothing" [ -z "$(ls -A "$T/outdir" 2>/dev/null)" ]

# a conversation variable's default in the DSL is data too
cat >"$T/conv.yml" <<EOF
app: {mode: advanced-chat, name: conv-forge}
kind: app
version: 0.1.5
workflow:
  conversation_variables:
  - id: c1
    name: doc
    value_type: object
    value: {dify_model_identity: __dify__file__, type: document, filename: secret.txt, transfer_method: local_file, url: "file://$T/secret.txt", related_id: null, extension: .txt, mime_type: text/plain, size: 21}
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: send
      data: {type: http-request, title: Send, method: post, url: "$HURL/body", authorization: {type: no-auth}, headers: "", params: "",
             body: {type: binary, data: [{type: file, file: [conversation, doc]}]}}
    - {id: answer, data: {type: answer, title: Answer, answer: "{{#send.body#}}"}}
    edges:
    - {source: start, target: send}
    - {source: send, target: answer}
EOF
sl run "$T/conv.yml" --query hi --limit http_allow_private=true
check "a forged file in a DSL conversation variable: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… refused by name" err_has "file 'secret.txt' is not a file sluice holds for this run"
check "… nothing of the host file read" no_secret "$T/out" "$T/err"

# ---- sluice serve: uploads belong to (app, user) ----
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
D=$T/data
cat >"$T/meta.yml" <<'EOF'
app: {mode: workflow, name: file-meta}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: doc, label: Doc, type: file, required: true}]}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: size, value_selector: [start, doc, size]}]}}
    edges:
    - {source: start, target: end}
EOF
A=$("$SLUICE" app import "$T/meta.yml" --data "$D" 2>>"$T/serve.err")
B=$("$SLUICE" app import "$T/meta.yml" --data "$D" 2>>"$T/serve.err")
AK=$("$SLUICE" app key create "$A" --data "$D" 2>>"$T/serve.err")
BK=$("$SLUICE" app key create "$B" --data "$D" 2>>"$T/serve.err")
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>>"$T/serve.err" &
SPID=$!
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "$BASE/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
req() { # KEY JSON-BODY: POST /v1/workflows/run; body in $T/out, status in $code
    code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 20 -H "Authorization: Bearer $1" \
        -H 'Content-Type: application/json' --data-binary "$2" "$BASE/v1/workflows/run" 2>"$T/err")
}
run_with() { # KEY USER FILE-JSON
    req "$1" "{\"inputs\": {\"doc\": $3}, \"response_mode\": \"blocking\", \"user\": \"$2\"}"
}
up=$(curl -s --max-time 10 -H "Authorization: Bearer $AK" -F "file=@$T/mine.txt;type=text/plain" \
    -F user=alice "$BASE/v1/files/upload" | jq -r .id)
check "an upload to app A as alice has an id" [ -n "$up" -a "$up" != null ]
run_with "$AK" alice "{\"type\": \"document\", \"transfer_method\": \"local_file\", \"upload_file_id\": \"$up\"}"
check "alice runs app A with her upload (got $code)" \
    jqt '.data.status == "succeeded" and .data.outputs.size == 15' "$T/out"
run_with "$AK" bob "{\"type\": \"document\", \"transfer_method\": \"local_file\", \"upload_file_id\": \"$up\"}"
check "bob cannot use alice's upload: 400 (got $code)" \
    jqt '.status == 400 and (.message | test("not a file of this app and user"))' "$T/out"
run_with "$BK" alice "{\"type\": \"document\", \"transfer_method\": \"local_file\", \"upload_file_id\": \"$up\"}"
check "app B cannot use app A's upload: 400 (got $code)" \
    jqt '.status == 400 and (.message | test("not a file of this app and user"))' "$T/out"
run_with "$AK" bob "{\"dify_model_identity\": \"__dify__file__\", \"type\": \"document\", \"transfer_method\": \"tool_file\", \"related_id\": \"$up\", \"filename\": \"x.txt\"}"
check "a forged file value naming alice's file, as bob: 400 (got $code)" [ "$code" = 400 ]
run_with "$AK" alice "{\"dify_model_identity\": \"__dify__file__\", \"type\": \"document\", \"transfer_method\": \"local_file\", \"url\": \"file://$T/secret.txt\", \"filename\": \"secret.txt\"}"
check "a forged file:// value from a client: 400 (got $code)" \
    jqt '.status == 400 and (.message | test("not a file of this app and user"))' "$T/out"
run_with "$AK" alice '{"type": "document", "transfer_method": "tool_file", "tool_file_id": "../files/../../../etc/hostname"}'
check "a traversal tool_file_id: 400 (got $code)" [ "$code" = 400 ]
run_with "$AK" alice '{"type": "document", "transfer_method": "remote_url", "url": "file:///etc/hostname"}'
check "a remote_url that is not http(s): 400 (got $code)" \
    jqt '.status == 400 and (.message | test("http"))' "$T/out"
check "no answer carried the host file" no_secret "$T/out" "$D"
echo "1..$n"
