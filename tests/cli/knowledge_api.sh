#!/usr/bin/env bash
# CLI: Dify's Knowledge API in `sluice serve` (/v1/datasets…), over real
# HTTP with the requests Dify's documentation shows.
#   - keys: a dataset key (`sluice kb key create`) opens every knowledge
#     base; no key, another scheme, a bad key and an app key get Dify's 401s;
#     a dataset key on the app endpoints gets 401.
#   - every route at least once: datasets (create, list, get, patch,
#     delete), documents by text and by file (both spellings), updates,
#     lists, details, indexing-status, status actions, segments, retrieve
#     and hit-testing (Dify's record shape, scores, metadata filters), the
#     metadata endpoints (both built-in spellings).
#   - a served app's knowledge-retrieval node finds what the API added.
#   - errors in Dify's envelope: unknown dataset/document/segment, bad
#     process_rule (Dify's messages), a query over 250 characters, refused
#     routes (child chunks, tags) naming themselves.
# Embeddings come from the llmd stand-in (tests/tools/llmd.py, model
# "hash:64": words hashed into 64 dimensions).  Needs curl and jq; prints TAP.
# SLUICE_TEST_STORE names another store to run against (tests/cli/
# kb_pg.sh: PostgreSQL), else a folder.
. "$(dirname "$0")/lib.bash"
# nok, req and is (serve_lib.bash); requests may take a minute here
. "$(dirname "$0")/serve_lib.bash"
REQ_TIMEOUT=60

PY=/usr/bin/python3
for tool in curl jq $PY; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done

D=${SLUICE_TEST_STORE:-$T/data}
SPID=
LPID=
on_exit() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$LPID" ] && kill -TERM "$LPID" 2>/dev/null
    wait 2>/dev/null
}

# ---- the embedding stand-in ----
$PY tests/tools/llmd.py --port 0 --port-file "$T/llmd.port" >/dev/null 2>"$T/llmd.err" &
LPID=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/llmd.port" ] && break; sleep 0.05; done
LPORT=$(cat "$T/llmd.port" 2>/dev/null)
if [ -z "$LPORT" ]; then
    echo "1..0 # SKIP the llmd stand-in did not start"
    exit 0
fi
if ! curl -s --max-time 5 -H 'Authorization: Bearer k' -H 'Content-Type: application/json' \
    -d '{"model":"hash:64","input":["probe"]}' "http://127.0.0.1:$LPORT/v1/embeddings" |
    jq -e '.data[0].embedding | length == 64' >/dev/null 2>&1; then
    echo "1..0 # SKIP the llmd stand-in serves no /v1/embeddings"
    exit 0
fi
cat >"$T/sluice.yml" <<EOF
llm:
  providers:
    stand: {style: openai, base_url: http://127.0.0.1:$LPORT/v1, api_key: k}
EOF

# ---- the server ----
start_server() {
    "$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" --config "$T/sluice.yml" \
        >/dev/null 2>>"$T/serve.err" &
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
[ -n "${SLUICE_TEST_STORE:-}" ] || mkdir -p "$D"
for _ in 1 2 3; do
    PORT=$(free_port)
    start_server && break
    PORT=
done
if [ -z "$PORT" ]; then
    nok "sluice serve starts"
    sed 's/^/#   /' "$T/serve.err" | tail -5
    echo "1..$n"
    exit 1
fi
BASE=http://127.0.0.1:$PORT

get() { req "$K" GET "$1"; }
del() { req "$K" DELETE "$1"; }
post() { req "$K" POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
patch() { req "$K" PATCH "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
# field JQ-EXPR: a field of the last answer
field() { jq -r "$1" "$T/out" 2>/dev/null; }
# Dify's error envelope with that status, code and message
err_is() { is "$1" "(.status == $1) and (.code == \"$2\") and (.message | contains(\"$3\"))"; }

# ---- keys ----
sl kb key create --data "$D"
K=$(tail -1 "$T/out")
check "kb key create prints a key dataset-…" \
    bash -c '[ "$0" = 0 ] && grep -Eq "^dataset-[0-9A-Za-z]{16,}$" <<<"$1"' "$rc" "$K"
cat >"$T/wf.yml" <<'EOF'
app: {mode: workflow, name: kbapi-echo}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: end, data: {type: end, title: End, outputs: []}}
    edges:
    - {source: start, target: end}
EOF
sl app import "$T/wf.yml" --data "$D"
APP=$(cat "$T/out")
sl app key create "$APP" --data "$D"
AK=$(cat "$T/out")

req "" GET /v1/datasets
check "no Authorization header: 401 (Dify's message)" \
    err_is 401 unauthorized "Authorization header must be provided and start with 'Bearer'"
req "" GET /v1/datasets -H "Authorization: Basic $K"
check "another scheme: 401 (Dify's message)" err_is 401 unauthorized "Authorization scheme must be 'Bearer'"
req "dataset-nosuchkeyatall00000000" GET /v1/datasets
check "an unknown key: 401 Access token is invalid" err_is 401 unauthorized "Access token is invalid"
req "$AK" GET /v1/datasets
check "an app key on a dataset route: 401 Access token is invalid" \
    err_is 401 unauthorized "Access token is invalid"
req "$K" POST /v1/workflows/run -H 'Content-Type: application/json' \
    --data-binary '{"inputs":{},"response_mode":"blocking","user":"u"}'
check "a dataset key on an app route: 401" err_is 401 unauthorized "Access token is invalid"
req "$K" GET /v1/parameters
check "a dataset key on GET /v1/parameters: 401" is 401
req "$AK" GET /v1/parameters
check "the app key still opens its app" is 200

sl kb key create --data "$D"
K2=$(tail -1 "$T/out")
req "$K2" GET /v1/datasets
check "a second dataset key works too" is 200
sl kb key list --data "$D"
K2ID=$(jq -r --arg h "${K2: -4}" '.[] | select(.hint | endswith($h)) | .id' "$T/out")
sl kb key revoke "$K2ID" --data "$D"
req "$K2" GET /v1/datasets
check "a revoked dataset key, while the server runs: 401" err_is 401 unauthorized "Access token is invalid"
req "$K" GET /v1/datasets
check "the other key still works" is 200

# ---- datasets ----
post /v1/datasets '{"name": "Handbook", "permission": "only_me"}'
check "POST /v1/datasets: 200 with the dataset" is 200 '.name == "Handbook" and (.id | length > 0)'
DS=$(field .id)
post /v1/datasets '{"name": "Handbook"}'
check "the same name again: 409 dataset_name_duplicate" \
    err_is 409 dataset_name_duplicate "The dataset name already exists."
post /v1/datasets '{"name": "Scratch", "description": "to delete"}'
DS2=$(field .id)
post /v1/datasets '{"name": ""}'
check "an empty name: 400 invalid_param" is 400 '.code == "invalid_param"'
post /v1/datasets '[1,2]'
check "a body that is not an object: 400" is 400 '.code == "invalid_param"'
get "/v1/datasets?page=1&limit=20"
check "GET /v1/datasets: both, Dify's page fields" \
    is 200 '(.total == 2) and (.page == 1) and (.limit == 20) and (.has_more == false) and ([.data[].name] | sort == ["Handbook", "Scratch"])'
get "/v1/datasets?page=1&limit=1"
check "GET /v1/datasets?limit=1: one, has_more" is 200 '(.data | length == 1) and .has_more == true and .total == 2'
get "/v1/datasets?limit=5000"
check "limit over 100 is held to 100" is 200 '.limit == 100'
get "/v1/datasets?page=abc"
check "a page that is not a number: 400" is 400 '.code == "invalid_param"'
get "/v1/datasets?keyword=Scr"
check "GET /v1/datasets?keyword=: the matching one" is 200 '(.total == 1) and .data[0].name == "Scratch"'
get "/v1/datasets?tag_ids=t1"
check "tag_ids: no knowledge base has tags in sluice" is 200 '.total == 0 and (.data | length == 0)'
get "/v1/datasets/$DS"
check "GET /v1/datasets/{id}" is 200 ".id == \"$DS\" and .name == \"Handbook\""
get /v1/datasets/00000000-0000-0000-0000-000000000000
check "an unknown dataset: 404 Dataset not found." err_is 404 not_found "Dataset not found."
AT=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)
req "$AT" GET "/admin/datasets?page=1&limit=20"
check "GET /admin/datasets: the same list with the admin token (the console's)" \
    is 200 '(.total == 2) and ([.data[].name] | sort == ["Handbook", "Scratch"])'
req "$AT" GET "/admin/datasets/$DS/documents"
check "… and a base's documents" is 200 '.data | type == "array"'
req "$AT" POST "/admin/datasets" -H 'Content-Type: application/json' --data-binary '{"name":"x"}'
check "… read only: POST there is 404" is 404
req "$K" GET "/admin/datasets"
check "… a dataset key there: 401" is 401
patch "/v1/datasets/$DS" '{"description": "How we work"}'
check "PATCH /v1/datasets/{id}" is 200 '.description == "How we work" and .name == "Handbook"'
patch "/v1/datasets/$DS2" '{"name": "Handbook"}'
check "PATCH to a taken name: 409" is 409 '.code == "dataset_name_duplicate"'
del "/v1/datasets/$DS2"
check "DELETE /v1/datasets/{id}: 204, empty body" bash -c '[ "$0" = 204 ] && [ ! -s "$1" ]' "$code" "$T/out"
get "/v1/datasets/$DS2"
check "the deleted dataset is gone: 404" is 404

# ---- documents by text ----
EMB='"embedding_model": "hash:64", "embedding_model_provider": "stand"'
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"x\", \"text\": \"y\", \"indexing_technique\": \"high_quality\", $EMB, \"process_rule\": {\"mode\": \"fancy\"}}"
check "process_rule mode fancy: 400 Process rule mode is invalid" \
    err_is 400 invalid_param "Process rule mode is invalid"
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"x\", \"text\": \"y\", \"indexing_technique\": \"high_quality\", $EMB, \"process_rule\": {\"mode\": \"custom\", \"rules\": {\"pre_processing_rules\": []}}}"
check "custom rule without segmentation: 400 (Dify's message)" \
    err_is 400 invalid_param "Process rule segmentation is required"
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"x\", \"text\": \"y\", \"indexing_technique\": \"high_quality\", $EMB, \"process_rule\": {\"mode\": \"custom\", \"rules\": {\"pre_processing_rules\": [], \"segmentation\": {\"separator\": \"\", \"max_tokens\": 100}}}}"
check "an empty separator: 400 (Dify's message)" \
    err_is 400 invalid_param "Process rule segmentation separator is required"
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"x\", \"text\": \"y\", \"indexing_technique\": \"high_quality\", $EMB, \"process_rule\": {\"mode\": \"custom\", \"rules\": {\"pre_processing_rules\": [], \"segmentation\": {\"separator\": \"\\\\n\", \"max_tokens\": 10}}}}"
check "max_tokens 10: 400 Custom segment length should be between 50 and 4000." \
    err_is 400 invalid_param "Custom segment length should be between 50 and 4000."
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"x\", \"text\": \"y\", \"indexing_technique\": \"high_quality\", \"doc_form\": \"qa_model\", $EMB, \"process_rule\": {\"mode\": \"automatic\"}}"
check "doc_form qa_model: refused by name" is 400 '.message | contains("qa_model")'

TEXT1='Vacation policy. Every employee has 30 days of paid vacation each year.\n\nRemote work. Teams may work from home on Fridays.'
post "/v1/datasets/$DS/document/create-by-text" \
    "{\"name\": \"policy\", \"text\": \"$TEXT1\", \"indexing_technique\": \"high_quality\", $EMB, \"process_rule\": {\"mode\": \"automatic\"}}"
check "create-by-text (Dify's example): 200, {document, batch}, indexed at once" \
    is 200 '(.document.name == "policy") and (.document.indexing_status == "completed") and (.batch | test("^[0-9]{20}$"))'
DOC1=$(field .document.id)
BATCH1=$(field .batch)
get "/v1/datasets/$DS"
check "the first document set the dataset's indexing technique" \
    is 200 '.indexing_technique == "high_quality"'
post "/v1/datasets/$DS/document/create_by_text" \
    '{"name": "coffee", "text": "The coffee machine is on the third floor next to the kitchen.", "process_rule": {"mode": "automatic"}}'
check "create_by_text (the older spelling): 200, technique inherited" \
    is 200 '.document.name == "coffee" and .document.indexing_status == "completed"'
DOC2=$(field .document.id)
post "/v1/datasets/$DS/document/create-by-text" '{"name": "nothing"}'
check "no text: 400" is 400 '.code == "invalid_param"'

# ---- documents by file ----
printf '# Security\n\nLock your screen when you leave the desk.###Badges are worn at all times.\n' >"$T/security.md"
req "$K" POST "/v1/datasets/$DS/document/create-by-file" \
    -F 'data={"indexing_technique":"high_quality","process_rule":{"rules":{"pre_processing_rules":[{"id":"remove_extra_spaces","enabled":true},{"id":"remove_urls_emails","enabled":true}],"segmentation":{"separator":"###","max_tokens":500}},"mode":"custom"}};type=text/plain' \
    -F "file=@$T/security.md"
check "create-by-file (Dify's example: file + data): 200, completed" \
    is 200 '.document.name == "security.md" and .document.indexing_status == "completed" and (.batch | length == 20)'
DOC3=$(field .document.id)
printf 'Parking is free for bicycles.\n' >"$T/parking.txt"
req "$K" POST "/v1/datasets/$DS/document/create_by_file" \
    -F 'data={"process_rule":{"mode":"automatic"}}' -F "file=@$T/parking.txt"
check "create_by_file (the older spelling): 200" is 200 '.document.name == "parking.txt"'
DOC4=$(field .document.id)
req "$K" POST "/v1/datasets/$DS/document/create-by-file" -F 'data={"process_rule":{"mode":"automatic"}}'
check "create-by-file without a file: 400 no_file_uploaded" err_is 400 no_file_uploaded "Please upload your file."
req "$K" POST "/v1/datasets/$DS/document/create-by-file" -F 'data={not json' -F "file=@$T/parking.txt"
check "create-by-file with a data part that is not JSON: 400" is 400 '.code == "invalid_param"'
req "$K" POST "/v1/datasets/$DS/document/create-by-file" -F 'data={}' \
    -F "file=@$T/parking.txt" -F "file=@$T/security.md"
check "two files: 400 too_many_files" err_is 400 too_many_files "Only one file is allowed."

printf 'room,floor\nkitchen,3\nlibrary,5\n' >"$T/rooms.csv"
req "$K" POST "/v1/datasets/$DS/document/create-by-file" -F 'data={"process_rule":{"mode":"automatic"}}' -F "file=@$T/rooms.csv"
check "create-by-file with a CSV: read by the document extractor" \
    is 200 '.document.name == "rooms.csv" and .document.indexing_status == "completed"'
DOC5=$(field .document.id)
get "/v1/datasets/$DS/documents/$DOC5/segments"
check "its segments hold the extractor's text (a markdown table, as Dify's)" \
    is 200 '([.data[].content] | join(" ")) | (contains("kitchen") and contains("| 3"))'
del "/v1/datasets/$DS/documents/$DOC5"
head -c 3000 /dev/urandom >"$T/tool.exe"
req "$K" POST "/v1/datasets/$DS/document/create-by-file" -F 'data={}' -F "file=@$T/tool.exe"
check "a file of a kind no extractor reads: 415 unsupported_file_type" \
    is 415 '.code == "unsupported_file_type" and (.message | length > 0)'

# ---- listing, details, indexing status ----
get "/v1/datasets/$DS/documents?page=1&limit=20"
check "GET documents: all four, Dify's page fields" \
    is 200 '.total == 4 and (.data | length == 4) and .page == 1 and .limit == 20 and .has_more == false'
get "/v1/datasets/$DS/documents?keyword=coff"
check "GET documents?keyword=: names matching" is 200 '.total == 1 and .data[0].id == "'"$DOC2"'"'
get "/v1/datasets/$DS/documents/$DOC1"
check "GET documents/{doc}: the document" is 200 ".id == \"$DOC1\" and .name == \"policy\""
get "/v1/datasets/$DS/documents/$DOC1?metadata=only"
check "GET documents/{doc}?metadata=only: id and metadata" is 200 ".id == \"$DOC1\" and (has(\"name\") | not)"
get "/v1/datasets/$DS/documents/$DOC1?metadata=bogus"
check "metadata=bogus: 400 Invalid metadata value" err_is 400 invalid_metadata "Invalid metadata value: bogus"
get "/v1/datasets/$DS/documents/00000000-0000-0000-0000-000000000000"
check "an unknown document: 404 Document Not Exists." err_is 404 not_found "Document Not Exists."
get "/v1/datasets/$DS/documents/$BATCH1/indexing-status"
check "indexing-status of the batch: completed, segments counted" \
    is 200 ".data[0].id == \"$DOC1\" and .data[0].indexing_status == \"completed\" and (.data[0].total_segments >= 1) and .data[0].completed_segments == .data[0].total_segments"
get "/v1/datasets/$DS/documents/11112222333344445555/indexing-status"
check "indexing-status of an unknown batch: 404" is 404 '.code == "not_found"'

# ---- updates ----
post "/v1/datasets/$DS/documents/$DOC2/update-by-text" \
    '{"name": "coffee", "text": "The coffee machine moved to the second floor."}'
check "update-by-text: 200, the new text indexed" is 200 '.document.indexing_status == "completed" and (.batch | length == 20)'
post "/v1/datasets/$DS/documents/$DOC2/update_by_text" '{"text": "no name"}'
check "update_by_text with text and no name: 400 (Dify's message)" \
    err_is 400 invalid_param "name is required when text is provided"
post "/v1/datasets/$DS/documents/00000000-0000-0000-0000-000000000000/update-by-text" '{"name":"a","text":"b"}'
check "update-by-text of an unknown document: 404" is 404
printf 'Parking is free for bicycles and scooters.\n' >"$T/parking.txt"
req "$K" POST "/v1/datasets/$DS/documents/$DOC4/update-by-file" -F 'data={}' -F "file=@$T/parking.txt"
check "update-by-file: 200" is 200 '.document.indexing_status == "completed"'
req "$K" POST "/v1/datasets/$DS/documents/$DOC4/update_by_file" -F 'data={}' -F "file=@$T/parking.txt"
check "update_by_file (the older spelling): 200" is 200 '.document.indexing_status == "completed"'
get "/v1/datasets/$DS/documents"
check "updates replaced, not added: still four documents" is 200 '.total == 4'

# ---- status actions ----
patch "/v1/datasets/$DS/documents/status/disable" "{\"document_ids\": [\"$DOC4\"]}"
check "PATCH documents/status/disable: success" is 200 '.result == "success"'
get "/v1/datasets/$DS/documents/$DOC4"
check "the document is disabled" is 200 '.enabled == false'
patch "/v1/datasets/$DS/documents/status/enable" "{\"document_ids\": [\"$DOC4\"]}"
get "/v1/datasets/$DS/documents/$DOC4"
check "enable: enabled again" is 200 '.enabled == true'
patch "/v1/datasets/$DS/documents/status/explode" "{\"document_ids\": [\"$DOC4\"]}"
check "an unknown action: 400 invalid_action" err_is 400 invalid_action "Invalid action."

patch "/v1/datasets/$DS/documents/status/archive" "{\"document_ids\": [\"$DOC4\"]}"
check "archive: success" is 200 '.result == "success"'
req "$K" POST "/v1/datasets/$DS/documents/$DOC4/update-by-file" -F 'data={}' -F "file=@$T/parking.txt"
check "an archived document is not updated: 403 (Dify's code)" \
    err_is 403 archived_document_immutable "The archived document is not editable."
del "/v1/datasets/$DS/documents/$DOC4"
check "nor deleted: 403" is 403 '.code == "archived_document_immutable"'
patch "/v1/datasets/$DS/documents/status/un_archive" "{\"document_ids\": [\"$DOC4\"]}"
get "/v1/datasets/$DS/documents/$DOC4"
check "un_archive: available again" is 200 '.archived == false and .display_status == "available"'
req "$K" PATCH "/v1/datasets/$DS/documents/$DOC4" -F 'data={}' -F "file=@$T/parking.txt"
check "PATCH documents/{doc} with a file (Dify's newer update): 200" \
    is 200 ".document.id == \"$DOC4\" and .document.indexing_status == \"completed\""

# ---- segments ----
post "/v1/datasets/$DS/documents/$DOC3/segments" \
    '{"segments": [{"content": "Visitors sign in at the front desk.", "answer": "", "keywords": ["visitors"]}]}'
check "POST segments: 200, {data, doc_form}" \
    is 200 '(.data | length == 1) and .data[0].content == "Visitors sign in at the front desk." and .doc_form == "text_model"'
SEG=$(field '.data[0].id')
post "/v1/datasets/$DS/documents/$DOC3/segments" '{"segments": [{"content": ""}]}'
check "an empty segment: 400 Content is empty" err_is 400 invalid_param "Content is empty"
get "/v1/datasets/$DS/documents/$DOC3/segments?page=1&limit=20"
check "GET segments: the document's, Dify's page fields" \
    is 200 "((.data | length) == .total) and .total >= 2 and .doc_form == \"text_model\" and ([.data[].id] | index(\"$SEG\") != null)"
get "/v1/datasets/$DS/documents/$DOC3/segments/$SEG"
check "GET segments/{seg}: {data, doc_form}" is 200 ".data.id == \"$SEG\" and .doc_form == \"text_model\""
post "/v1/datasets/$DS/documents/$DOC3/segments/$SEG" \
    '{"segment": {"content": "Visitors sign in at the front desk and wear a badge.", "enabled": true}}'
check "POST segments/{seg} updates it" is 200 '.data.content == "Visitors sign in at the front desk and wear a badge."'
get "/v1/datasets/$DS/documents/$DOC3/segments/00000000-0000-0000-0000-000000000000"
check "an unknown segment: 404 Segment not found." err_is 404 not_found "Segment not found."
get "/v1/datasets/$DS/documents/$DOC3/segments/$SEG/child_chunks"
check "GET child_chunks of a general segment: none" is 200 '.data == [] and .total == 0 and .page == 1'
post "/v1/datasets/$DS/documents/$DOC3/segments/$SEG/child_chunks" '{"content": "a child"}'
check "adding a child chunk: refused by name (501)" is 501 '.message | contains("child_chunks") and contains("sluice does not support")'
del "/v1/datasets/$DS/documents/$DOC3/segments/$SEG"
check "DELETE segments/{seg}: 204, empty" bash -c '[ "$0" = 204 ] && [ ! -s "$1" ]' "$code" "$T/out"
get "/v1/datasets/$DS/documents/$DOC3/segments/$SEG"
check "the deleted segment is gone" is 404

# ---- retrieve ----
Q='How many days of paid vacation does every employee have'
post "/v1/datasets/$DS/retrieve" \
    "{\"query\": \"$Q\", \"retrieval_model\": {\"search_method\": \"semantic_search\", \"reranking_enable\": false, \"top_k\": 2, \"score_threshold_enabled\": false}}"
check "retrieve (semantic): Dify's record shape, the vacation chunk first, scores" \
    is 200 "(.query.content == \"$Q\") and (.records | length >= 1 and length <= 2) and (.records[0].segment.content | contains(\"30 days\")) and (.records[0].score | type == \"number\") and (.records[0].segment.document.id == \"$DOC1\") and (.records[0].segment.document.name == \"policy\") and (.records[0] | has(\"child_chunks\") and has(\"tsne_position\")) and ([.records[].score] | . == (sort | reverse))"
post "/v1/datasets/$DS/hit-testing" "{\"query\": \"coffee machine floor\"}"
check "hit-testing, the dataset's own settings: the coffee chunk first" \
    is 200 '.records[0].segment.content | contains("coffee machine")'
post "/v1/datasets/$DS/retrieve" \
    '{"query": "bicycles", "retrieval_model": {"search_method": "full_text_search", "reranking_enable": false, "top_k": 3, "score_threshold_enabled": false}}'
check "retrieve (full text): the parking chunk" is 200 '.records[0].segment.content | contains("bicycles")'
post "/v1/datasets/$DS/retrieve" \
    "{\"query\": \"$Q\", \"retrieval_model\": {\"search_method\": \"semantic_search\", \"reranking_enable\": false, \"top_k\": 4, \"score_threshold_enabled\": true, \"score_threshold\": 0.99}}"
check "score_threshold 0.99: nothing below it" is 200 '[.records[].score | select(. < 0.99)] | length == 0'
LONG=$(printf 'a%.0s' $(seq 251))
post "/v1/datasets/$DS/retrieve" "{\"query\": \"$LONG\"}"
check "a 251-character query: 400 Query cannot exceed 250 characters" \
    err_is 400 invalid_param "Query cannot exceed 250 characters"
LONGU=$(printf 'é%.0s' $(seq 250))
post "/v1/datasets/$DS/retrieve" "{\"query\": \"$LONGU\"}"
check "250 characters (500 bytes) pass: characters are counted" is 200
post "/v1/datasets/$DS/retrieve" '{"query": ""}'
check "no query: 400 (Dify's message)" err_is 400 invalid_param "Query or attachment_ids is required"
post "/v1/datasets/$DS/retrieve" '{"query": "x", "retrieval_model": {"search_method": "psychic"}}'
check "an unknown search_method: 400" is 400 '.code == "invalid_param"'

# ---- parent-child ----
post /v1/datasets "{\"name\": \"Manual\", \"indexing_technique\": \"high_quality\", $EMB, \"doc_form\": \"hierarchical_model\"}"
check "a parent-child knowledge base" is 200 '.doc_form == "hierarchical_model"'
DSH=$(field .id)
HTEXT='Espresso guide.\nGrind the beans fine.\nTamp with firm pressure.\n\nMilk guide.\nSteam the milk to sixty degrees.\nPour slowly into the cup.'
post "/v1/datasets/$DSH/document/create-by-text" \
    "{\"name\": \"barista\", \"text\": \"$HTEXT\", \"doc_form\": \"hierarchical_model\", \"process_rule\": {\"mode\": \"hierarchical\", \"rules\": {\"pre_processing_rules\": [{\"id\": \"remove_extra_spaces\", \"enabled\": true}], \"segmentation\": {\"separator\": \"\\\\n\\\\n\", \"max_tokens\": 1024}, \"parent_mode\": \"paragraph\", \"subchunk_segmentation\": {\"separator\": \"\\\\n\", \"max_tokens\": 512}}}}"
check "create-by-text, hierarchical (Dify's example rule): 200" \
    is 200 '.document.doc_form == "hierarchical_model" and .document.indexing_status == "completed"'
post "/v1/datasets/$DSH/retrieve" \
    '{"query": "Steam the milk to sixty degrees", "retrieval_model": {"search_method": "semantic_search", "reranking_enable": false, "top_k": 3, "score_threshold_enabled": false}}'
check "retrieve: the parent paragraph, with its matching child chunks and their scores" \
    is 200 '(.records[0].segment.content | contains("Milk guide") and contains("Pour slowly")) and (.records[0].child_chunks | length >= 1) and (.records[0].child_chunks[0].content | contains("sixty degrees")) and (.records[0].child_chunks[0].score | type == "number") and (.records[0].score == .records[0].child_chunks[0].score)'
post "/v1/datasets/$DSH/retrieve" \
    '{"query": "grind beans", "retrieval_model": {"search_method": "hybrid_search", "reranking_enable": false, "reranking_mode": "weighted_score", "weights": {"weight_type": "customized", "vector_setting": {"vector_weight": 0.7, "embedding_provider_name": "stand", "embedding_model_name": "hash:64"}, "keyword_setting": {"keyword_weight": 0.3}}, "top_k": 2, "score_threshold_enabled": false}}'
check "retrieve (hybrid, weighted): the espresso paragraph first" \
    is 200 '.records[0].segment.content | contains("Grind the beans")'
HDOC=$(jq -r '.records[0].segment.document.id' "$T/out")
HSEG=$(jq -r '.records[0].segment.id' "$T/out")
get "/v1/datasets/$DSH/documents/$HDOC/segments/$HSEG/child_chunks?keyword=beans"
check "GET child_chunks?keyword=: Dify's page of the segment's children" \
    is 200 "(.total == 1) and (.total_pages == 1) and (.data[0].segment_id == \"$HSEG\") and (.data[0].content | contains(\"beans\")) and (.data[0].type == \"automatic\")"
get "/v1/datasets/$DSH/documents/$HDOC/segments/$HSEG/child_chunks?limit=1&page=2"
check "child_chunks paged: the second of several" is 200 '(.data | length == 1) and .total >= 2 and .page == 2'
del "/v1/datasets/$DSH"

# ---- metadata ----
req "$K" POST "/v1/datasets/$DS/metadata" -H 'Content-Type: application/json' \
    --data-binary '{"type": "string", "name": "team"}'
check "POST metadata: 201 {id, name, type}" is 201 '.name == "team" and .type == "string" and (.id | length > 0)'
MD=$(field .id)
post "/v1/datasets/$DS/metadata" '{"type": "colour", "name": "x"}'
check "a metadata type that is none of Dify's: 400" is 400
patch "/v1/datasets/$DS/metadata/$MD" '{"name": "department"}'
check "PATCH metadata/{id}: renamed" is 200 '.name == "department" and .id == "'"$MD"'"'
post "/v1/datasets/$DS/documents/metadata" \
    "{\"operation_data\": [{\"document_id\": \"$DOC1\", \"metadata_list\": [{\"id\": \"$MD\", \"name\": \"department\", \"value\": \"hr\"}]}, {\"document_id\": \"$DOC2\", \"metadata_list\": [{\"id\": \"$MD\", \"name\": \"department\", \"value\": \"facilities\"}]}]}"
check "POST documents/metadata: success" is 200 '.result == "success"'
get "/v1/datasets/$DS/metadata"
check "GET metadata: the field with its count" \
    is 200 '(.doc_metadata | map(select(.name == "department")) | length == 1) and (.doc_metadata[] | select(.name == "department") | .count == 2) and has("built_in_field_enabled")'
get "/v1/datasets/$DS/documents/$DOC1"
check "the document carries its value" is 200 '[.doc_metadata[]? | select(.name == "department") | .value] == ["hr"]'
post "/v1/datasets/$DS/retrieve" \
    "{\"query\": \"$Q\", \"retrieval_model\": {\"search_method\": \"semantic_search\", \"reranking_enable\": false, \"top_k\": 4, \"score_threshold_enabled\": false, \"metadata_filtering_conditions\": {\"logical_operator\": \"and\", \"conditions\": [{\"name\": \"department\", \"comparison_operator\": \"is\", \"value\": \"facilities\"}]}}}"
check "retrieve with a metadata filter: only that document's chunks" \
    is 200 "(.records | length >= 1) and ([.records[].segment.document.id] | unique == [\"$DOC2\"])"
get "/v1/datasets/$DS/metadata/built-in"
check "GET metadata/built-in: Dify's five fields" \
    is 200 '[.fields[].name] == ["document_name", "uploader", "upload_date", "last_update_date", "source"]'
get "/v1/datasets/metadata/built-in"
check "GET /v1/datasets/metadata/built-in (the older route)" is 200 '.fields | length == 5'
post "/v1/datasets/$DS/metadata/built-in/enable" '{}'
check "POST metadata/built-in/enable: success" is 200 '.result == "success"'
get "/v1/datasets/$DS/metadata"
check "built-in fields now enabled" is 200 '.built_in_field_enabled == true'
post "/v1/datasets/$DS/metadata/built-in/disable" '{}'
check "POST metadata/built-in/disable: success" is 200 '.result == "success"'
del "/v1/datasets/$DS/metadata/$MD"
check "DELETE metadata/{id}: 204" is 204
get "/v1/datasets/$DS/metadata"
check "the field is gone" is 200 '[.doc_metadata[] | select(.name == "department")] | length == 0'

# ---- requests at once ----
PAR=()
for i in 1 2 3 4 5 6 7 8; do
    curl -s -o "$T/par$i.out" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $K" \
        -H 'Content-Type: application/json' --data-binary \
        "{\"name\": \"par-$i\", \"text\": \"Parallel note $i about the garden.\"}" \
        "$BASE/v1/datasets/$DS/document/create-by-text" >"$T/par$i.code" &
    PAR+=($!)
    curl -s -o /dev/null --max-time 60 -H "Authorization: Bearer $K" -H 'Content-Type: application/json' \
        --data-binary '{"query": "garden"}' "$BASE/v1/datasets/$DS/retrieve" &
    PAR+=($!)
done
wait "${PAR[@]}"
check "8 documents added at once, with searches between: all 200" \
    bash -c 'for i in 1 2 3 4 5 6 7 8; do [ "$(cat "$0/par$i.code")" = 200 ] || exit 1; done' "$T"
get "/v1/datasets/$DS/documents?keyword=par-&limit=100"
check "all 8 are there, once each" is 200 '.total == 8 and ([.data[].name] | unique | length == 8)'
for i in 1 2 3 4 5 6 7 8; do del "/v1/datasets/$DS/documents/$(jq -r .document.id "$T/par$i.out")"; done
check "and deleted again" is 204

# ---- what the API built, a served app's knowledge-retrieval node finds ----
cat >"$T/rag.yml" <<'EOF'
app: {mode: workflow, name: kbapi-rag}
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
        - {variable: q, label: q, type: text-input, required: true}
    - id: kr
      data:
        type: knowledge-retrieval
        title: Retrieve
        query_variable_selector: [start, q]
        dataset_ids: [Handbook]
        retrieval_mode: multiple
        multiple_retrieval_config: {top_k: 2, reranking_enable: false}
    - {id: end, data: {type: end, title: End, outputs: [{variable: r, value_selector: [kr, result]}]}}
    edges:
    - {source: start, target: kr}
    - {source: kr, target: end}
EOF
sl app import "$T/rag.yml" --data "$D"
RAG=$(cat "$T/out")
sl app key create "$RAG" --data "$D"
RK=$(cat "$T/out")
req "$RK" POST /v1/workflows/run -H 'Content-Type: application/json' \
    --data-binary "{\"inputs\": {\"q\": \"$Q\"}, \"response_mode\": \"blocking\", \"user\": \"u\"}"
check "a served app's knowledge-retrieval node finds what the API added" \
    is 200 "(.data.status == \"succeeded\") and (.data.outputs.r[0].content | contains(\"30 days\")) and (.data.outputs.r[0].metadata._source == \"knowledge\") and (.data.outputs.r[0].metadata.dataset_id == \"$DS\") and (.data.outputs.r[0].metadata.document_id == \"$DOC1\")"

# ---- refused routes, wrong methods ----
get /v1/datasets/tags
check "tags: refused by name (501)" is 501 '.code == "not_supported" and (.message | contains("/v1/datasets/tags"))'
get /v1/workspaces/current/models/model-types/text-embedding
check "the model list: refused by name (501), not 401" is 501 '.message | contains("model-types")'
req "$AK" GET /v1/workspaces/current/models/model-types/text-embedding
check "the model list with an app key: 401" is 401
req "$K" PUT "/v1/datasets/$DS"
check "PUT on a dataset: 405" is 405
get "/v1/datasets/$DS/nonsense"
check "an unknown route: 404 naming it" is 404 '.message | contains("nonsense")'

# ---- deletes ----
del "/v1/datasets/$DS/documents/$DOC4"
check "DELETE documents/{doc}: 204, empty body" bash -c '[ "$0" = 204 ] && [ ! -s "$1" ]' "$code" "$T/out"
get "/v1/datasets/$DS/documents/$DOC4"
check "the deleted document is gone: 404" is 404
post "/v1/datasets/$DS/retrieve" '{"query": "bicycles scooters parking", "retrieval_model": {"search_method": "full_text_search", "reranking_enable": false, "top_k": 4, "score_threshold_enabled": false}}'
check "its chunks are no longer found" is 200 "[.records[].segment.document.id] | index(\"$DOC4\") == null"
del "/v1/datasets/$DS"
check "DELETE the dataset: 204" is 204
get "/v1/datasets?page=1"
check "no dataset left" is 200 '.total == 0'

# ---- the server lived through it ----
curl -s --max-time 2 "$BASE/health" | grep -q '"ok"'
check "the server still answers /health" test $? = 0
kill -TERM "$SPID"
wait_pid "$SPID" 20
SPID=
check "SIGTERM: the server stops cleanly (exit $rc)" test "$rc" = 0
check "the server's log has no sanitizer report" bash -c '! grep -q "Sanitizer" "$0"' "$T/serve.err"

echo "1..$n"
