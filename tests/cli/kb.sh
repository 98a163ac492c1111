#!/usr/bin/env bash
# CLI: `sluice kb` as a user meets it — knowledge bases made, documents
# added (a folder, again unchanged, changed, a PDF through the extractor),
# searched by vector, keyword and both, filtered by metadata, reranked,
# recorded and replayed without the model server, and the errors on the
# way.  The embedding model is llmd's `hash` (a bag of words), so which
# chunk ranks first is known.  SLUICE_TEST_STORE names another store to
# run against (tests/cli/kb_pg.sh: PostgreSQL), else a folder.
. "$(dirname "$0")/lib.bash"
for tool in jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
LPID=
on_exit() { [ -n "$LPID" ] && kill "$LPID" 2>/dev/null; wait 2>/dev/null; }
jqt() { jq -e "$@" >/dev/null 2>&1; }

python3 tests/tools/llmd.py --port 0 --port-file "$T/llmd.port" >/dev/null 2>&1 &
LPID=$!
for _ in $(seq 100); do [ -s "$T/llmd.port" ] && break; sleep 0.05; done
export SLUICE_LLM_BASE_URL="http://127.0.0.1:$(cat "$T/llmd.port")/v1" SLUICE_LLM_API_KEY=test
export SLUICE_DATA="${SLUICE_TEST_STORE:-$T/data}"
cd "$T" || exit 2

mkdir docs
printf 'Cats are small furry animals that sleep all day.\n' >docs/cats.txt
printf 'Dogs are loyal animals that play fetch in the park.\n' >docs/dogs.txt
printf 'The stock market fell sharply on Tuesday after the bank report.\n' >docs/market.md
printf 'hidden\n' >docs/.hidden

# ---- create ----
sl kb create pets --embedding openai/hash:64 --description "notes about pets"
check "create: a knowledge base with an embedding model (exit $rc)" [ "$rc" = 0 ]
sl kb create pets --embedding openai/hash:64
check "create: the same name again is refused with Dify's message (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "The dataset name already exists"'
sl kb create "$(printf 'x%.0s' $(seq 41))"
check "create: a name over 40 characters is refused (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "1 to 40 characters"'
sl kb create bad --embedding nomodel
check "create: --embedding without a provider says the form (exit $rc)" \
    eval '[ "$rc" = 2 ] && err_has "PROVIDER/MODEL"'
sl kb create words
check "create: without a model, an economy (keyword) knowledge base (exit $rc)" [ "$rc" = 0 ]
sl kb list
check "list: both, with their indexing technique" \
    eval 'out_has "pets" && out_has "economy" && out_has "high_quality"'

# ---- add ----
sl kb add pets docs
check "add: a folder, hidden files skipped (exit $rc)" \
    eval '[ "$rc" = 0 ] && err_has "3 added, 0 unchanged, 0 failed"'
sl kb add pets docs
check "add: the same folder again changes nothing (resumable)" \
    eval '[ "$rc" = 0 ] && err_has "0 added, 3 unchanged, 0 failed"'
sl kb show pets
check "show: three documents, available, with their words counted" \
    jqt '.document_count == 3 and (.documents | length) == 3 and
         all(.documents[]; .display_status == "available" and .word_count > 0)' "$T/out"
sl kb add pets nothere.txt
check "add: a missing file is named (exit $rc)" \
    eval '[ "$rc" = 2 ] && err_has "nothere.txt: no such file"'
printf '\xff\xfe bad' >bad.txt
sl kb add pets bad.txt
check "add: text that is not UTF-8 is refused by name, nothing kept (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "bad.txt" && err_has "UTF-8"'
sl kb add pets docs/market.md --limit knowledge_max_input=10
check "add: a document over knowledge_max_input is refused, naming the limit (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "knowledge_max_input"'
printf ' \n\n \t\n' >blank.txt
sl kb add pets blank.txt
check "add: a document with no text is refused, not kept empty (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "has no text to index"'
sl kb add nope docs
check "add: an unknown knowledge base: Dify's message (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "Dataset not found."'

# ---- search ----
sl kb search pets "which animals play fetch" --json
check "search: by vector, the dog document first" \
    jqt '.[0].segment.document.name == "dogs.txt" and .[0].score > .[1].score' "$T/out"
check "… records in Dify's shape (segment, document, child_chunks, score)" \
    jqt '.[0] | has("segment") and has("child_chunks") and has("score") and
         (.segment | has("index_node_hash") and has("word_count") and has("position") and
          .created_at > 1700000000)' "$T/out"
# a segment's word_count and index_node_hash are Dify's: the text's length
# in characters and sha256(text + "None") (kept in no chunk's info since
# they follow from the text: knowledge/kb.c, chunk_words and chunk_hash)
check "… word_count and index_node_hash are Dify's (characters; sha256 of the text and None)" \
    /usr/bin/python3 -c '
import hashlib, json, sys
recs = json.load(open(sys.argv[1]))
ok = bool(recs)
for r in recs:
    s = r["segment"]
    ok = ok and s["word_count"] == len(s["content"]) and \
        s["index_node_hash"] == hashlib.sha256((s["content"] + "None").encode()).hexdigest()
sys.exit(0 if ok else 1)' "$T/out"
sl kb search pets "stock market" --mode keyword --json
check "search: by keyword, only the document with the words" \
    jqt 'length == 1 and .[0].segment.document.name == "market.md" and .[0].score > 0 and
         .[0].score <= 1' "$T/out"
sl kb search pets "cats sleep" --mode hybrid --top-k 1 --json
check "search: hybrid, top 1" jqt 'length == 1 and .[0].segment.document.name == "cats.txt"' "$T/out"
sl kb search pets "cats sleep" --mode hybrid --weights 0.5,0.5 --json
check "search: hybrid with weights" jqt '.[0].segment.document.name == "cats.txt"' "$T/out"
sl kb search pets "loyal dogs fetch" --mode vector --rerank openai/overlap --json
check "search: a rerank model scores and orders the chunks (llmd's overlap: the share of query words)" \
    jqt 'length == 3 and .[0].segment.document.name == "dogs.txt" and .[0].score == 1 and
         .[1].score < 1' "$T/out"
sl kb search pets "cats" --rerank nomodel
check "search: --rerank without a provider says the form (exit $rc)" \
    eval '[ "$rc" = 2 ] && err_has "PROVIDER/MODEL"'
sl kb search pets "cats sleep" --threshold 0.99 --json
check "search: a threshold above every score keeps none" jqt 'length == 0' "$T/out"
sl kb search pets 'AND OR "(* -x' --mode keyword
check "search: a query of FTS5 syntax is words, not syntax (exit $rc)" [ "$rc" = 0 ]
sl kb search pets "cats" --mode fuzzy
check "search: an unknown mode is named (exit $rc)" \
    eval '[ "$rc" = 2 ] && err_has "vector, keyword or hybrid"'
sl kb search pets "cats" --exact --json
check "search: --exact scans every vector" jqt '.[0].segment.document.name == "cats.txt"' "$T/out"

# ---- metadata ----
sl kb add pets docs/cats.txt --meta color=grey
check "add: metadata of no field is refused, naming the fix (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "not a field of the knowledge base"'
sl kb field add pets color string && sl kb field add pets legs number
check "field add: two fields (exit $rc)" [ "$rc" = 0 ]
sl kb field add pets color string
check "field add: a taken name: Dify's message" err_has "Metadata name already exists."
sl kb add pets docs/cats.txt --meta color=grey --meta legs=4
sl kb add pets docs/dogs.txt --meta color=brown --meta legs=4
check "add: documents with metadata (exit $rc)" [ "$rc" = 0 ]
sl kb search pets "animals" --json \
    --filter '{"logical_operator":"and","conditions":[{"name":"color","comparison_operator":"is","value":"grey"}]}'
check "search: a metadata filter keeps the grey document only" \
    jqt 'length == 1 and .[0].segment.document.name == "cats.txt" and
         .[0].segment.document.doc_metadata.color == "grey"' "$T/out"
sl kb search pets "animals" --json --mode keyword \
    --filter '{"conditions":[{"name":"legs","comparison_operator":"≥","value":4},{"name":"color","comparison_operator":"start with","value":"br"}]}'
check "search: number and text operators together, keyword channel too" \
    jqt 'length == 1 and .[0].segment.document.name == "dogs.txt"' "$T/out"
sl kb search pets "animals" --json \
    --filter '{"logical_operator":"or","conditions":[{"name":"color","comparison_operator":"is","value":"purple"}]}'
check "search: a filter no document passes finds nothing" jqt 'length == 0' "$T/out"
sl kb search pets "animals" --filter '{"conditions": 3}'
check "search: a malformed filter is refused (exit $rc)" [ "$rc" = 2 ]

# ---- a changed document replaces its chunks ----
# chunks whose text did not change keep their vectors: only the new one
# goes to the model (llmd's request log); each paragraph is a chunk of its
# own (about 1,500 characters, over half of automatic's 500 tokens)
para() { for _ in $(seq 30); do printf '%s ' "$1"; done; printf '\n\n'; }
{ para 'Cats are small furry animals that sleep all day.'
  para 'They chase mice at night.'; } >docs/cats.txt
sl kb add pets docs/cats.txt
curl -s -X POST "${SLUICE_LLM_BASE_URL%/v1}/__reset" >/dev/null
{ para 'Cats are small furry animals that sleep all day.'
  para 'They purr when they are happy.'; } >docs/cats.txt
sl kb add pets docs/cats.txt
curl -s "${SLUICE_LLM_BASE_URL%/v1}/__log" >"$T/log.json"
check "add: a changed file: only its changed chunk is embedded again (rc $rc)" \
    jqt '[.[] | select(.path | test("embeddings")) | .body.input | if type == "array" then .[] else . end]
         | length >= 1 and (map(test("purr")) | all) and (map(test("sleep all day")) | any | not)' \
    "$T/log.json"
printf 'Cats purr when they are happy and warm.\n' >docs/cats.txt
sl kb add pets docs
check "add: a changed file is replaced, the others unchanged" \
    err_has "1 added, 2 unchanged, 0 failed"
sl kb search pets "purr happy" --mode keyword --json
check "… its new text is found" jqt '.[0].segment.content | test("purr")' "$T/out"
sl kb search pets "sleep all day" --mode keyword --json
check "… its old text is gone" jqt 'length == 0' "$T/out"
sl kb show pets
check "… still three documents" jqt '.document_count == 3' "$T/out"

# ---- parent-child ----
sl kb create tree --embedding openai/hash:64 --doc-form parent-child \
    --rule '{"mode":"hierarchical","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\\n\\n","max_tokens":500},"parent_mode":"paragraph","subchunk_segmentation":{"separator":"\\n","max_tokens":100}}}'
check "create: a parent-child knowledge base (exit $rc)" [ "$rc" = 0 ]
printf 'Owls hunt at night.\nThey fly silently.\n\nBees make honey.\nThey live in hives.\n' >pc.txt
sl kb add tree pc.txt
sl kb search tree "fly silently" --json
check "search: a child hit comes back as its parent with child_chunks" \
    jqt '.[0].segment.content | test("Owls hunt at night") and test("fly silently")' "$T/out"
check "… the matching child first, with its score" \
    jqt '.[0].child_chunks[0].content == "They fly silently." and .[0].child_chunks[0].score == .[0].score' "$T/out"

# ---- economy, Chinese text ----
printf '今天天气很好，我们去公园散步。\n' >zh.txt
sl kb add words zh.txt docs/market.md
sl kb search words "公园" --json
check "economy: a keyword search finds Chinese words without spaces" \
    jqt 'length == 1 and .[0].segment.document.name == "zh.txt"' "$T/out"

# ---- record and replay ----
sl kb create taped --embedding openai/hash:32
sl kb add taped docs --record "$T/tape.jsonl"
sl kb search taped "loyal dogs" --record "$T/tape.jsonl" --json
cp "$T/out" "$T/live.json"
kill "$LPID"; wait "$LPID" 2>/dev/null; LPID=
sl kb search taped "loyal dogs" --replay "$T/tape.jsonl" --json
check "replay: the same records with the model server gone" \
    eval '[ "$rc" = 0 ] && cmp -s "$T/out" "$T/live.json"'
sl kb search taped "something never asked" --replay "$T/tape.jsonl"
check "replay: a query never recorded fails, saying so (exit $rc)" [ "$rc" = 1 ]
sl kb search pets "cats"
check "a model server that is gone: the search fails clearly (exit $rc)" \
    eval '[ "$rc" = 1 ] && err_has "hash"'

# ---- keys, rm ----
sl kb key create
check "key create: a dataset- key" eval '[ "$rc" = 0 ] && grep -q "^dataset-" "$T/out"'
key=$(cat "$T/out")
sl kb key list
check "key list: one key, its hint only, never the key" \
    eval 'jqt "length == 1 and (.[0].hint | startswith(\"dataset-\"))" "$T/out" && ! grep -qF "$key" "$T/out"'
sl kb rm pets
sl kb show pets
check "rm: the knowledge base is gone (exit $rc)" \
    eval '[ "$rc" = 3 ] && err_has "Dataset not found."'
sl kb frobnicate
check "an unknown command lists the known ones (exit $rc)" \
    eval '[ "$rc" = 2 ] && err_has "create, add, list"'

echo "1..$n"
