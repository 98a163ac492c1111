#!/usr/bin/env bash
# CLI: the knowledge-retrieval node end to end: `sluice validate` names each
# unbound dataset id with the line to add; `sluice run` searches a dataset
# bound to an External Knowledge API service (tests/tools/
# kb_external_standin.py) without making a store it was not asked for, and
# an LLM node's context gets the results (the LLM stand-in's echo model);
# a failing service fails the run, naming it; a knowledge base made with
# `sluice kb` and bound by a line is searched with `--data` beside the
# external one, and by `sluice serve`'s runs.  Prints TAP.
# SLUICE_TEST_STORE names another store to run against (tests/cli/
# kb_pg.sh: PostgreSQL), else a folder.
. "$(dirname "$0")/lib.bash"

unset SLUICE_DATA SLUICE_CONFIG SLUICE_STORE
ROOT=$PWD
PIDS=()
on_exit() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
standin() { # NAME PORTFILE: starts tests/tools/NAME.py, its port in $PORT
    /usr/bin/python3 "$ROOT/tests/tools/$1.py" --port 0 --port-file "$2" >/dev/null 2>&1 &
    PIDS+=($!)
    local i
    for ((i = 0; i < 100; i++)); do [ -s "$2" ] && break; sleep 0.05; done
    PORT=$(head -1 "$2" 2>/dev/null)
}
DATA=${SLUICE_TEST_STORE:-$T/data}
cd "$T" || exit 2
standin kb_external_standin kb.port
KB_PORT=$PORT
standin llmd llm.port
LLM_PORT=$PORT
if [ -z "$KB_PORT" ] || [ -z "$LLM_PORT" ]; then
    nok "the stand-ins start (kb '$KB_PORT', llm '$LLM_PORT')"
    echo "1..$n"
    exit 1
fi

# A Dify export's shape: a chatflow-style chain start -> retrieval -> llm
# (context from the retrieval) -> end; one bound dataset, one not.
cat >app.yml <<'EOF'
app: {mode: workflow, name: rag, icon: 🤖, description: ''}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: '1711000000000'
      type: custom
      data:
        type: start
        title: Start
        variables:
        - {variable: query, label: query, type: text-input, required: true, max_length: 256}
    - id: '1711000000001'
      type: custom
      data:
        type: knowledge-retrieval
        title: Knowledge Retrieval
        desc: ''
        query_variable_selector: ['1711000000000', query]
        dataset_ids:
        - 5f1b7c1e-0000-4000-8000-00000000aaaa
        - 6c7f9d2a-0000-4000-8000-00000000bbbb
        retrieval_mode: multiple
        multiple_retrieval_config:
          top_k: 2
          score_threshold: null
          reranking_enable: false
    - id: '1711000000002'
      type: custom
      data:
        type: llm
        title: LLM
        model: {provider: local, name: echo, mode: chat, completion_params: {temperature: 0.7}}
        prompt_template:
        - {role: system, text: "Use this context:\n{{#context#}}"}
        - {role: user, text: "{{#1711000000000.query#}}"}
        context: {enabled: true, variable_selector: ['1711000000001', result]}
        vision: {enabled: false}
    - id: '1711000000003'
      type: custom
      data:
        type: end
        title: End
        outputs:
        - {variable: result, value_selector: ['1711000000001', result]}
        - {variable: text, value_selector: ['1711000000002', text]}
    edges:
    - {source: '1711000000000', target: '1711000000001', sourceHandle: source, targetHandle: target}
    - {source: '1711000000001', target: '1711000000002', sourceHandle: source, targetHandle: target}
    - {source: '1711000000002', target: '1711000000003', sourceHandle: source, targetHandle: target}
EOF
cat >sluice.yml <<EOF
llm:
  providers:
    local: {style: openai, base_url: 'http://127.0.0.1:$LLM_PORT/v1', api_key: k}
knowledge:
  datasets:
    5f1b7c1e-0000-4000-8000-00000000aaaa:
      external: {endpoint: 'http://127.0.0.1:$KB_PORT/api', knowledge_id: open-good, allow_private: true}
EOF

sl validate app.yml
check "validate: the file is valid (unbound ids are warnings)" [ "$rc" = 0 ]
check "validate names the unbound id, the node and the line to add" \
    grep -q "node '1711000000001' (Knowledge Retrieval): field dataset_ids\[1\]: dataset '6c7f9d2a-0000-4000-8000-00000000bbbb' is bound to no knowledge base.*knowledge: datasets: {6c7f9d2a-0000-4000-8000-00000000bbbb: KB_NAME}" "$T/out" "$T/err"
check "validate says nothing of the bound id" \
    bash -c "! grep -q 'aaaa. is bound' '$T/out' '$T/err'"

sl run app.yml --input query=alpha --json
check "run: succeeded (rc $rc)" [ "$rc" = 0 ]
check "run: the result is Dify's chunk objects from the external service" \
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["outputs"]["result"]
m = r[0]["metadata"]
assert len(r) == 2, r
assert m["_source"] == "knowledge" and m["data_source_type"] == "external", m
assert m["dataset_id"] == "5f1b7c1e-0000-4000-8000-00000000aaaa" and m["position"] == 1, m
assert r[0]["content"] == "Alpha content" and r[1]["content"] == "Gamma content", r
assert r[0]["files"] is None and r[0]["summary"] is None and r[0]["title"] == "alpha"
' "$T/out"
check "run: the LLM's context holds the retrieved contents, joined by newlines" \
    grep -qF 'Use this context:\\nAlpha content\\nGamma content' "$T/out"
check "run: no store was made unasked" [ ! -e sluice-data ]

sed -i 's/knowledge_id: open-good/knowledge_id: "open-status:503"/' sluice.yml
sl run app.yml --input query=alpha
check "run: a failing service fails the run (rc $rc)" [ "$rc" = 1 ]
check "run: the error names the dataset, the endpoint and the status" \
    grep -q "knowledge base '5f1b7c1e-0000-4000-8000-00000000aaaa': external knowledge API http://127.0.0.1:$KB_PORT/api/retrieval answered HTTP 503" "$T/err"

sl run --help
check "run --help lists --data" out_has "--data DIR"

# a knowledge base of the store (sluice kb; keywords only, no model) bound
# by a line, beside the external one
echo "The alpha protocol handles retries. Alpha is fast." >alpha.txt
sl kb create docs --data "$DATA"
check "kb create (rc $rc)" [ "$rc" = 0 ]
sl kb add docs alpha.txt --data "$DATA"
check "kb add (rc $rc)" [ "$rc" = 0 ]
cat >sluice.yml <<EOF
llm:
  providers:
    local: {style: openai, base_url: 'http://127.0.0.1:$LLM_PORT/v1', api_key: k}
knowledge:
  datasets:
    5f1b7c1e-0000-4000-8000-00000000aaaa:
      external: {endpoint: 'http://127.0.0.1:$KB_PORT/api', knowledge_id: open-good, allow_private: true}
    6c7f9d2a-0000-4000-8000-00000000bbbb: docs
EOF
SLUICE_DATA=$DATA sl validate app.yml
check "validate with the store: every id is bound, no warning (rc $rc)" \
    bash -c "[ $rc = 0 ] && ! grep -q 'bound to no knowledge base\|does not exist' '$T/out' '$T/err'"
sed -i 's/top_k: 2/top_k: 5/' app.yml
sl run app.yml --data "$DATA" --input query=alpha --json
check "run --data: the store's knowledge base and the external service, merged (rc $rc)" \
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["outputs"]["result"]
names = [x["metadata"]["dataset_name"] for x in r]
assert "docs" in names and "5f1b7c1e-0000-4000-8000-00000000aaaa" in names, names
d = [x for x in r if x["metadata"]["dataset_name"] == "docs"][0]
assert d["title"] == "alpha.txt" and "alpha protocol" in d["content"], d
assert d["metadata"]["data_source_type"] == "upload_file" and d["metadata"]["segment_id"], d
assert [x["metadata"]["position"] for x in r] == list(range(1, len(r) + 1)), r
' "$T/out"

# ---- single retrieval: the router's call is recorded and replayed ----
cat >single.yml <<'EOF'
app: {mode: workflow, name: rag-single}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: query, label: query, type: text-input, required: true}]}}
    - id: kr
      data:
        type: knowledge-retrieval
        title: Pick
        query_variable_selector: [start, query]
        dataset_ids: [5f1b7c1e-0000-4000-8000-00000000aaaa, ext-two]
        retrieval_mode: single
        single_retrieval_config:
          model: {provider: local, name: 'tool:ext-two', mode: chat, completion_params: {}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: result, value_selector: [kr, result]}]}}
    edges:
    - {source: start, target: kr}
    - {source: kr, target: end}
EOF
cat >>sluice.yml <<EOF
    ext-two:
      external: {endpoint: 'http://127.0.0.1:$KB_PORT/api', knowledge_id: open-good, allow_private: true}
EOF
sl run single.yml --input query=alpha --json --record tape.jsonl
check "single: the model's pick is searched, the call recorded (rc $rc)" \
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["outputs"]["result"]
assert r and all(x["metadata"]["dataset_id"] == "ext-two" for x in r), r
assert open(sys.argv[2]).read().count("ext-two") >= 1
' "$T/out" tape.jsonl
sed "s|base_url: 'http://127.0.0.1:$LLM_PORT/v1'|base_url: 'http://127.0.0.1:9/v1'|" sluice.yml >replay.yml
sl run single.yml --input query=alpha --json --replay tape.jsonl --config replay.yml
check "single: replayed with no model server, the same pick (rc $rc)" \
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["outputs"]["result"]
assert r and all(x["metadata"]["dataset_id"] == "ext-two" for x in r), r
' "$T/out"

# ---- sluice serve: a run searches the server's knowledge bases ----
sl app import app.yml --data "$DATA"
APP=$(cat "$T/out")
sl app key create "$APP" --data "$DATA"
KEY=$(cat "$T/out")
SPORT=$(free_port)
"$SLUICE" serve --listen "127.0.0.1:$SPORT" --data "$DATA" --config sluice.yml \
    >/dev/null 2>"$T/serve.err" &
PIDS+=($!)
for ((i = 0; i < 100; i++)); do
    curl -s --max-time 1 "http://127.0.0.1:$SPORT/health" 2>/dev/null | grep -q '"ok"' && break
    sleep 0.05
done
curl -s --max-time 30 -o "$T/out" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"inputs": {"query": "alpha"}, "response_mode": "blocking", "user": "u"}' \
    "http://127.0.0.1:$SPORT/v1/workflows/run"
check "serve: the run's result holds the store's and the external knowledge bases' chunks" \
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["data"]
assert d["status"] == "succeeded", d
names = [x["metadata"]["dataset_name"] for x in d["outputs"]["result"]]
assert "docs" in names and "5f1b7c1e-0000-4000-8000-00000000aaaa" in names, names
' "$T/out"

# ---- a chatflow: the chunks an answer used are its citations ----
cat >chat.yml <<'EOF'
app: {mode: advanced-chat, name: rag-chat, icon: 🤖, description: ''}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: kr
      data:
        type: knowledge-retrieval
        title: Knowledge Retrieval
        query_variable_selector: [sys, query]
        dataset_ids: [5f1b7c1e-0000-4000-8000-00000000aaaa]
        retrieval_mode: multiple
        multiple_retrieval_config: {top_k: 2, reranking_enable: false}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: local, name: echo, mode: chat, completion_params: {}}
        prompt_template:
        - {role: system, text: "Context:\n{{#context#}}"}
        - {role: user, text: "{{#sys.query#}}"}
        context: {enabled: true, variable_selector: [kr, result]}
        vision: {enabled: false}
    - id: answer
      data: {type: answer, title: Answer, answer: '{{#llm.text#}}'}
    edges:
    - {source: start, target: kr}
    - {source: kr, target: llm}
    - {source: llm, target: answer}
EOF
sl app import chat.yml --data "$DATA"
CHAT=$(cat "$T/out")
sl app key create "$CHAT" --data "$DATA"
CKEY=$(cat "$T/out")
curl -s --max-time 30 -o "$T/out" -H "Authorization: Bearer $CKEY" -H 'Content-Type: application/json' \
    -d '{"inputs": {}, "query": "alpha", "response_mode": "blocking", "user": "u"}' \
    "http://127.0.0.1:$SPORT/v1/chat-messages"
check "chat: the answer's metadata cites the chunks the LLM was given (Dify's retriever_resources)" \
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
res = d["metadata"]["retriever_resources"]
assert res and [r["position"] for r in res] == list(range(1, len(res) + 1)), res
for r in res:
    assert r["dataset_id"].endswith("aaaa") and r["content"] and "score" in r and "document_name" in r, r
' "$T/out"
curl -s -N --max-time 30 -o "$T/out" -H "Authorization: Bearer $CKEY" -H 'Content-Type: application/json' \
    -d '{"inputs": {}, "query": "alpha", "response_mode": "streaming", "user": "u"}' \
    "http://127.0.0.1:$SPORT/v1/chat-messages"
check "chat: streamed, message_end carries them too" \
    /usr/bin/python3 -c '
import json, sys
ends = [json.loads(l[5:]) for l in open(sys.argv[1]) if l.startswith("data:") and "message_end" in l]
assert ends and ends[0]["metadata"]["retriever_resources"], ends
' "$T/out"

echo "1..$n"
