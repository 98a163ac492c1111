#!/usr/bin/env bash
# CLI: sluice's own keyword index (knowledge/kwindex.h) against SQLite's
# FTS5 as the reference: the same 60 one-chunk documents, the same queries,
# the same chunks found with the same BM25 (FTS5's bm25(), normalised as
# sluice does, s / (s + 1) of s = -bm25).  Then a knowledge base made before
# sluice kept its own index (its rows emptied, an FTS5 table in its place,
# as migration 11 finds them) is indexed again on first use and searches
# the same.  SLUICE_TEST_STORE names another store to run against
# (tests/cli/kb_pg.sh: PostgreSQL, through psql; an old knowledge base
# there has no FTS5 table, only its rows to index again), else a folder.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
for tool in jq "$PY"; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
"$PY" -c 'import sqlite3; c = sqlite3.connect(":memory:"); c.execute("create virtual table f using fts5(t)")' 2>/dev/null ||
    { echo "1..0 # SKIP Python's sqlite3 has no FTS5"; exit 0; }
export SLUICE_DATA="${SLUICE_TEST_STORE:-$T/data}"
PG=${SLUICE_TEST_STORE:+yes}
if [ -n "$PG" ] && ! command -v psql >/dev/null; then
    echo "1..0 # SKIP psql is not installed"; exit 0
fi
psql_do() { psql -XAtq -v ON_ERROR_STOP=1 -F ' ' "$SLUICE_TEST_STORE" -c "$1"; }
jqt() { jq -e "$@" >/dev/null 2>&1; }
cd "$T" || exit 2

# 60 documents of Zipf-distributed words (a fixed seed); the queries are
# words in at most 3 of them, so none is left out as too common
"$PY" - <<'EOF'
import os, random, json
random.seed(7)
vocab = ['w%d' % i for i in range(300)]
os.mkdir('docs')
texts = {}
for d in range(60):
    n = random.randint(8, 40)
    words = [vocab[min(int(random.paretovariate(1.1)) - 1, 299)] for _ in range(n)]
    t = ' '.join(words + (['zzold'] if d == 0 else [])) + '.'
    texts['d%02d.txt' % d] = t
    open('docs/d%02d.txt' % d, 'w').write(t + '\n')
df = {}
for t in texts.values():
    for w in set(t.rstrip('.').split()):
        df[w] = df.get(w, 0) + 1
rare = sorted(w for w, c in df.items() if c <= 3)
queries = [' '.join(rare[i:i + k]) for i, k in ((0, 1), (3, 2), (10, 3), (20, 2), (30, 4))]
json.dump({'texts': texts, 'queries': queries}, open('corpus.json', 'w'))
EOF

sl kb create bm
check "create a keyword-only knowledge base (exit $rc)" [ "$rc" = 0 ]
sl kb add bm docs
check "add 60 documents (exit $rc)" eval '[ "$rc" = 0 ] && err_has "60 added"'

# FTS5's scores for every query: {query: {document: normalised score}}
cat >fts5.py <<'EOF'
import json, sqlite3
c = json.load(open('corpus.json'))
db = sqlite3.connect(':memory:')
db.execute("create virtual table f using fts5(name unindexed, t, tokenize='unicode61 remove_diacritics 2')")
for name, t in c['texts'].items():
    db.execute('insert into f(name, t) values(?, ?)', (name, t))
out = {}
for q in c['queries']:
    m = ' OR '.join('"%s"' % w for w in q.split())
    out[q] = {n: (-s) / (-s + 1) for n, s in db.execute('select name, bm25(f) from f where f match ?', (m,))}
print(json.dumps(out))
EOF
"$PY" fts5.py >fts5.json

compare() { # label
    local q all=0 good=0
    while IFS= read -r q; do
        all=$((all + 1))
        sl kb search bm "$q" --mode keyword --top-k 60 --json
        jq --arg q "$q" --slurpfile want fts5.json -e '
            ($want[0][$q]) as $w
            | (map({(.segment.document.name): .score}) | add // {}) as $g
            | ($g | keys) == ($w | keys)
              and all($w | to_entries[]; (($g[.key] - .value) | fabs) < 1e-6)' "$T/out" \
            >/dev/null && good=$((good + 1))
    done < <(jq -r '.queries[]' corpus.json)
    check "$1: $good of $all queries find FTS5's chunks with FTS5's BM25" \
        test "$good" = "$all" -a "$all" -gt 0
}
compare "sluice's index"

# as migration 11 finds a knowledge base of before: no rows of its own,
# kw 0, an FTS5 table
if [ -n "$PG" ]; then
    psql_do "BEGIN; UPDATE kb SET kw=0, kw_rows=0, kw_tokens=0; DELETE FROM kb_pages;
             DELETE FROM kb_segs; DELETE FROM kb_dead;
             UPDATE kb_docs SET kw_seg=0, kw_rows=0, kw_tokens=0; COMMIT" >/dev/null
else "$PY" - <<'EOF'
import sqlite3
db = sqlite3.connect('data/sluice.db')
n = db.execute("select n from kb where name='bm'").fetchone()[0]
db.executescript('''
update kb set kw=0, kw_rows=0, kw_tokens=0;
delete from kb_pages;
delete from kb_segs;
delete from kb_dead;
update kb_docs set kw_seg=0, kw_rows=0, kw_tokens=0;
create virtual table kbf_%d using fts5(t, content='');
''' % n)
db.commit()
EOF
fi
compare "an old knowledge base, indexed again on first use"
if [ -n "$PG" ]; then
    psql_do "SELECT kw, 0, (SELECT count(*) FROM kb_pages), (SELECT count(*) FROM kb_segs)
             FROM kb WHERE name='bm'" >state
else "$PY" - <<'EOF' >state
import sqlite3
db = sqlite3.connect('data/sluice.db')
kw, n = db.execute("select kw, n from kb where name='bm'").fetchone()
fts = db.execute("select count(*) from sqlite_master where name='kbf_%d'" % n).fetchone()[0]
rows = db.execute("select count(*) from kb_pages").fetchone()[0]
segs = db.execute("select count(*) from kb_segs").fetchone()[0]
print(kw, fts, rows, segs)
EOF
fi
read -r kw fts rows segs <state
check "… marked done, its FTS5 table dropped, its terms written ($kw $fts $rows)" \
    test "$kw" = 1 -a "$fts" = 0 -a "$rows" -gt 0
# 60 documents: merged 16 at a time, a handful of segments, not 60
check "… in $segs segments, merged (not one a document)" test "$segs" -gt 0 -a "$segs" -lt 20

# a document changed: its old words are gone, its new ones found
printf 'zzfresh words only.\n' >docs/d00.txt
sl kb add bm docs/d00.txt
sl kb search bm zzfresh --mode keyword --json
check "a changed document's new words are found" jqt 'length == 1' "$T/out"
sl kb search bm zzold --mode keyword --json
check "… and a word only its old text had is not" jqt 'length == 0' "$T/out"
# the counts BM25 takes leave the old text out too (its postings were
# merged: they are skipped, not rewritten)
"$PY" - <<'PYEOF'
import json
c = json.load(open('corpus.json'))
c['texts']['d00.txt'] = 'zzfresh words only.'
json.dump(c, open('corpus.json', 'w'))
PYEOF
"$PY" fts5.py >fts5.json
compare "after a document changed"
echo "1..$n"
