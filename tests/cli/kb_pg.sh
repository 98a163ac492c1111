#!/usr/bin/env bash
# CLI: knowledge bases on PostgreSQL.  Starts a cluster of its own
# (pg_lib.bash) and runs the knowledge tests that take SLUICE_TEST_STORE
# (tests/unit/knowledge_kb, kb.sh, kb_bm25.sh, knowledge_api.sh,
# knowledge_node.sh) against a fresh database each, their checks named
# "[postgres] …"; then the same documents, added and changed the same way
# in a SQLite store and in PostgreSQL, must give the same search results
# (chunks, order, scores) for the same queries, by vector, keyword and
# both, after the keyword index merged segments and left dead chunks.
# Skips (counted) without Debian's postgresql.
#
#   tests/cli/kb_pg.sh [BUILD]   (default: the folder of $SLUICE, else build)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/pg_lib.bash"
BUILD=${1:-$(dirname "$SLUICE")}
PY=/usr/bin/python3
if ! pg_have; then
    echo "1..0 # SKIP PostgreSQL is not installed (Debian's postgresql)"
    exit 0
fi
for tool in jq "$PY"; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
LPID=
on_exit() {
    [ -n "$LPID" ] && kill "$LPID" 2>/dev/null
    wait 2>/dev/null
    pg_stop
}
trap 'exit 1' INT TERM
if ! pg_start; then
    nok "a PostgreSQL cluster of the test's own starts"
    tail -5 "$PG_DIR/initdb.log" "$PG_DIR/log" 2>/dev/null | sed 's/^/# /'
    echo "1..$n"
    exit 1
fi
here=$(dirname "$0")
export SLUICE
unset SLUICE_STORE SLUICE_DATA

# A test's TAP, renumbered into this test's plan under a label.
relabel() { # LABEL
    local line
    while IFS= read -r line; do
        case $line in
        "ok "*) n=$((n + 1)); echo "ok $n - [postgres] $1${line#ok * - }" ;;
        "not ok "*) n=$((n + 1)); echo "not ok $n - [postgres] $1${line#not ok * - }" ;;
        "1.."*) ;;
        *) echo "$line" ;;
        esac
    done
}

if [ -x "$BUILD/tests/knowledge_kb" ]; then
    if url=$(pg_new_db knowledge_kb); then
        relabel "knowledge_kb: " < <(SLUICE_TEST_STORE=$url "$BUILD/tests/knowledge_kb" 2>&1)
    else
        nok "a database for knowledge_kb"
    fi
else
    skip "[postgres] knowledge_kb: $BUILD/tests/knowledge_kb is not built"
fi
for t in kb kb_bm25 knowledge_api knowledge_node; do
    url=$(pg_new_db "$t") || { nok "a database for $t"; continue; }
    relabel "$t: " < <(SLUICE_TEST_STORE=$url bash "$here/$t.sh" 2>&1)
done

# ---- the same results on SQLite and on PostgreSQL ----
"$PY" tests/tools/llmd.py --port 0 --port-file "$T/llmd.port" >/dev/null 2>&1 &
LPID=$!
for _ in $(seq 100); do [ -s "$T/llmd.port" ] && break; sleep 0.05; done
export SLUICE_LLM_BASE_URL="http://127.0.0.1:$(cat "$T/llmd.port")/v1" SLUICE_LLM_API_KEY=test
mkdir -p "$T/docs" "$T/docs2" "$T/tree"
# 40 documents of Zipf-distributed words in paragraphs (a fixed seed),
# each paragraph a chunk or two; then 8 of them changed (some after their
# postings were merged: dead chunks) and 4 new ones
"$PY" - "$T" <<'EOF'
import json, os, random, sys
T = sys.argv[1]
random.seed(11)
vocab = ['w%d' % i for i in range(400)]
def para():
    n = random.randint(10, 60)
    return ' '.join(vocab[min(int(random.paretovariate(1.05)) - 1, 399)] for _ in range(n)) + '.'
def doc(name):
    return '\n\n'.join(para() for _ in range(random.randint(1, 4))) + '\n'
for d in range(40):
    open('%s/docs/d%02d.txt' % (T, d), 'w').write(doc(d))
for d in list(range(0, 40, 5)) + [40, 41, 42, 43]:
    open('%s/docs2/d%02d.txt' % (T, d), 'w').write(doc(d))
for d in range(6):
    open('%s/tree/t%d.txt' % (T, d), 'w').write(
        '\n\n'.join('\n'.join(para() for _ in range(3)) for _ in range(2)) + '\n')
qs = [' '.join(random.sample(vocab[:120], k)) for k in (1, 2, 2, 3, 3, 4, 5, 6)]
json.dump(qs, open('%s/queries.json' % T, 'w'))
EOF
RULE='{"mode":"custom","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\n\n","max_tokens":120}}}'
TREE='{"mode":"hierarchical","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\n\n","max_tokens":500},"parent_mode":"paragraph","subchunk_segmentation":{"separator":"\n","max_tokens":100}}}'
# load STORE OUT: the knowledge bases written, then every query's results
load() {
    local st=$1 out=$2 q mode i=0
    mkdir -p "$out"
    # the changed files replace their documents: the same paths again
    rm -rf "$T/work" && mkdir "$T/work" && cp "$T"/docs/* "$T/work/" || return 1
    sl kb create cmp --embedding openai/hash:64 --search hybrid_search --rule "$RULE" --store "$st" &&
        sl kb add cmp "$T/work" --store "$st" &&
        cp "$T"/docs2/* "$T/work/" &&
        sl kb add cmp "$T/work" --store "$st" &&
        sl kb create tree --embedding openai/hash:64 --doc-form parent-child --rule "$TREE" \
            --store "$st" &&
        sl kb add tree "$T/tree" --store "$st" || return 1
    while IFS= read -r q; do
        for mode in vector keyword hybrid; do
            sl kb search cmp "$q" --mode "$mode" --top-k 12 --json --store "$st" || return 1
            cp "$T/out" "$out/cmp-$mode-$i.json"
        done
        sl kb search tree "$q" --top-k 5 --json --store "$st" || return 1
        cp "$T/out" "$out/tree-$i.json"
        i=$((i + 1))
    done < <(jq -r '.[]' "$T/queries.json")
    sl kb show cmp --json --store "$st" && cp "$T/out" "$out/show.json"
}
url=$(pg_new_db compare) && load "$url" "$T/pg"
check "compare: documents added, changed and searched on PostgreSQL (rc $rc)" [ "$rc" = 0 ]
load "$T/sqlite-data" "$T/sq"
check "compare: … and on SQLite (rc $rc)" [ "$rc" = 0 ]
cat >"$T/same.py" <<'EOF'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
TOL = 1e-6
def recs(path):
    out = []
    for r in json.load(open(path)):
        s = r['segment']
        kids = [(c['content'], round(c['score'], 6)) for c in r.get('child_chunks') or []]
        out.append(((s['document']['name'], s['position'], s['content'], tuple(kids)), r['score']))
    return out
bad, n, hits = [], 0, 0
for f in sorted(os.listdir(a)):
    if not f.endswith('.json') or f == 'show.json':
        continue
    n += 1
    x, y = recs(os.path.join(a, f)), recs(os.path.join(b, f))
    hits += len(x)
    # best first on both; chunks of equal scores may come in either order
    ordered = all(r[i][1] >= r[i + 1][1] - TOL for r in (x, y) for i in range(len(r) - 1))
    xs, ys = sorted(x, key=lambda e: (-round(e[1], 6), e[0])), sorted(y, key=lambda e: (-round(e[1], 6), e[0]))
    same = ordered and len(xs) == len(ys) and all(
        p[0] == q[0] and abs(p[1] - q[1]) <= TOL for p, q in zip(xs, ys))
    if not same:
        bad.append(f)
sa, sb = (json.load(open(os.path.join(d, 'show.json'))) for d in (a, b))
docs = lambda s: sorted((d['name'], d['word_count'], d['display_status']) for d in s['documents'])
print(json.dumps({'searches': n, 'hits': hits, 'differ': bad,
                  'docs': sa['document_count'] == sb['document_count'] and docs(sa) == docs(sb)}))
EOF
"$PY" "$T/same.py" "$T/pg" "$T/sq" >"$T/same.json" 2>"$T/err"
same() { jq -r "$1" "$T/same.json" 2>/dev/null; }
jqt() { jq -e "$@" >/dev/null 2>&1; }
check "compare: $(same .searches) searches ($(same .hits) results) find the same chunks in the same order with the same scores$(same '.differ | if length > 0 then " (differ: " + join(" ") + ")" else "" end')" \
    jqt '.searches > 0 and .hits > 0 and (.differ | length) == 0' "$T/same.json"
check "compare: the same documents, word counts and statuses" jqt '.docs' "$T/same.json"

# ---- two processes adding to one knowledge base at once ----
mkdir -p "$T/two/a" "$T/two/b"
for side in a b; do
    for i in $(seq 1 24); do
        printf 'Common words everywhere here. Token q%s%dz only.\n\nMore common words.\n' \
            "$side" "$i" >"$T/two/$side/$side$i.txt"
    done
done
url=$(pg_new_db two) && sl kb create two --store "$url"
"$SLUICE" kb add two "$T/two/a" --store "$url" >/dev/null 2>"$T/two/a.err" &
pa=$!
"$SLUICE" kb add two "$T/two/b" --store "$url" >/dev/null 2>"$T/two/b.err" &
pb=$!
wait "$pa"; ra=$?
wait "$pb"; rb=$?
check "two processes at once: both add their documents (exit $ra, $rb)" \
    eval '[ "$ra" = 0 ] && [ "$rb" = 0 ] && grep -q "24 added" "$T/two/a.err" && grep -q "24 added" "$T/two/b.err"'
sl kb show two --json --store "$url"
check "… every document kept once" jqt '.document_count == 48' "$T/out"
sl kb search two "everywhere" --mode keyword --top-k 100 --json --store "$url"
check "… a word of all of them finds all 48, with one score" \
    jqt 'length == 48 and ([.[].score] | unique | length) == 1' "$T/out"
sl kb search two "qa7z qb19z" --mode keyword --top-k 10 --json --store "$url"
check "… each one's own word finds it" \
    jqt '[.[].segment.document.name] | sort == ["a7.txt", "b19.txt"]' "$T/out"
echo "1..$n"
