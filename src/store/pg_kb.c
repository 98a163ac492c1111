/*
 * store/pg_kb — knowledge bases in the PostgreSQL backend (see store.h and
 * store/pg_int.h): the rows of store/sqlite.c's knowledge section, in the
 * same tables (the baseline, migration 12, and migration 16 below), kept
 * and read the same way, so that a search gives the same chunks with the
 * same scores on either backend.
 *
 * The keyword index is sluice's own (knowledge/kwindex.h), as in SQLite: a
 * document's terms are a segment of their own, pages of about PAGE_BYTES
 * in kb_pages (bytea, keyed by their first term as bytes), merged
 * MERGE_FANIN at a time into segments of the next level; a document whose
 * postings were merged leaves its chunk numbers in kb_dead.  Vectors are
 * bytea (dims floats as the machine keeps them), searched in the process
 * (knowledge/vindex.h): Debian's PostgreSQL has no pgvector.
 *
 * Where SQLite relies on its single writer, writes here lock the
 * knowledge base's row (SELECT … FOR UPDATE) for their transaction: two
 * processes writing one knowledge base go one after the other, and
 * different knowledge bases are written at once.  Chunk numbers only grow
 * and a document's are consecutive (postings name its chunks by position
 * from its first): each write takes its block from meta's kb_chunk_next
 * in a statement of its own, before its transaction, so that counter is
 * never held locked while a document is written.
 *
 * Bulk rows travel as PostgreSQL's binary arrays, a parameter per column
 * (INSERT … SELECT FROM unnest($1, $2, …)): a document's chunks are a few
 * statements whatever their number, and vectors and pages go as their
 * bytes, neither escaped nor hex-coded.  Reads of vectors and pages take
 * binary results for the same reason (pg_run's `binary`).
 *
 * Errors are SQLite's: "Dataset not found.", "Document Not Exists.", a
 * taken name SL_EINVAL, the rest "store: WHAT: PostgreSQL's message".
 */
#include "store/pg_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "knowledge/kwindex.h"

const char pg_kb_migration[] =
    /* a document's source and position, which adding a document looks up
     * (the one of the same source, the next position): SQLite indexes
     * json_extract of its info; here the store fills these columns from
     * the info it writes, as its JSON would not always cast (jsonb refuses
     * \u0000), and matches json_extract's values (see doc_keys) */
    "ALTER TABLE kb_docs ADD COLUMN source TEXT;"
    "ALTER TABLE kb_docs ADD COLUMN position BIGINT;"
    "CREATE INDEX kb_docs_source ON kb_docs(kb, source);"
    "CREATE INDEX kb_docs_position ON kb_docs(kb, position);"
    /* a page's first term compares as bytes, as SQLite's BINARY does,
     * whatever the database's collation; a term cut at its 128th byte
     * need not be UTF-8 */
    "ALTER TABLE kb_pages ALTER COLUMN first TYPE BYTEA USING convert_to(first, 'UTF8');"
    /* a knowledge base's vectors by number, with their documents, from
     * the index alone when the vectors are not asked for */
    "DROP INDEX kb_chunks_vec;"
    "CREATE INDEX kb_chunks_vec ON kb_chunks(kb, n) INCLUDE (doc) WHERE vec IS NOT NULL;"
    /* floats and varint postings hardly compress (pages by 8%), and
     * trying was the most of PostgreSQL's time adding documents: out of
     * line at once, as they are */
    "ALTER TABLE kb_chunks ALTER COLUMN vec SET STORAGE EXTERNAL;"
    "ALTER TABLE kb_pages ALTER COLUMN data SET STORAGE EXTERNAL;"
    "COMMENT ON TABLE kb IS 'knowledge bases (store/pg_kb.c)';";

/* PostgreSQL's type oids of array elements */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT4 23
#define OID_TEXT 25

/* Chunks one INSERT writes at most, and their bytes about (a parameter
 * may hold 1 GB; these keep a batch's memory small) */
#define CHUNK_ROWS 5000
#define CHUNK_BYTES ((size_t)16 << 20)
/* Pages one INSERT writes, and pages a merge reads of a segment at once */
#define PAGE_ROWS 256
#define READ_PAGES 64
/* Vectors one statement reads */
#define VEC_ROWS 16384

/* As store/sqlite.c: the keyword index's segments and pages */
#define MERGE_FANIN 16
#define PAGE_BYTES 8192

#define ARR_CAP ((size_t)1 << 30)

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- small helpers ---- */

static char *info_text(const sl_value *info)
{
    return info ? json_dumps(info, JSON_COMPACT) : sl_xstrdup("{}");
}

/* A statement with binary results (bytea as its bytes). */
static PGresult *q_bin(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                       sl_err *err)
{
    return pg_run(x, what, sql, n, v, NULL, NULL, 1, err);
}

/* A statement whose rows do not matter: 0, or -1 with err. */
static int run(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
               sl_err *err)
{
    return pg_changed(pg_qx(x, what, sql, n, v, err)) < 0 ? -1 : 0;
}

/* An integer column of a binary result (int2, int4 or int8); 0 for NULL. */
static long long bin_ll(PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    const unsigned char *p = (const unsigned char *)PQgetvalue(r, row, col);
    int len = PQgetlength(r, row, col);
    uint64_t v = 0;
    for (int i = 0; i < len && i < 8; i++)
        v = v << 8 | p[i];
    if (len == 4)
        return (int32_t)(uint32_t)v;
    if (len == 2)
        return (int16_t)(uint16_t)v;
    return (long long)(int64_t)v;
}

/* A vector column into to (dims floats), zeros when it has none or
 * another size (as SQLite's copy_vec). */
static void copy_vec(PGresult *r, int row, int col, float *to, int dims)
{
    int len = PQgetisnull(r, row, col) ? -1 : PQgetlength(r, row, col);
    if (len == dims * (int)sizeof(float))
        memcpy(to, PQgetvalue(r, row, col), (size_t)len);
    else
        memset(to, 0, (size_t)dims * sizeof(float));
}

/* "{1,2,3}": integers as an array parameter in text form. */
static char *int_array(const long long *v, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, ARR_CAP);
    sl_buf_addc(&b, '{');
    for (size_t i = 0; i < n; i++)
        sl_buf_addf(&b, "%s%lld", i ? "," : "", v[i]);
    sl_buf_addc(&b, '}');
    return sl_buf_detach(&b);
}

/* ---- binary arrays: a column of many rows as one parameter ----
 * PostgreSQL's wire form: dimensions (1), whether any element is NULL,
 * the element type, the length and lower bound (1), then each element as
 * its length (-1: NULL) and its bytes. */
typedef struct {
    sl_buf b;
    size_t n;
    bool nulls;
} pg_arr;

static void be32(unsigned char *o, uint32_t v)
{
    o[0] = (unsigned char)(v >> 24);
    o[1] = (unsigned char)(v >> 16);
    o[2] = (unsigned char)(v >> 8);
    o[3] = (unsigned char)v;
}

static void arr_init(pg_arr *a, uint32_t oid)
{
    sl_buf_init(&a->b, ARR_CAP);
    unsigned char h[20];
    be32(h, 1);
    be32(h + 4, 0);
    be32(h + 8, oid);
    be32(h + 12, 0);
    be32(h + 16, 1);
    sl_buf_add(&a->b, h, sizeof h);
    a->n = 0;
    a->nulls = false;
}

static void arr_reset(pg_arr *a)
{
    a->b.len = 20;
    a->n = 0;
    a->nulls = false;
}

/* An element of len bytes; p NULL: NULL. */
static void arr_add(pg_arr *a, const void *p, size_t len)
{
    unsigned char l[4];
    be32(l, p ? (uint32_t)len : UINT32_MAX);
    sl_buf_add(&a->b, l, 4);
    if (p)
        sl_buf_add(&a->b, p, len);
    else
        a->nulls = true;
    a->n++;
}

static void arr_text(pg_arr *a, const char *s)
{
    arr_add(a, s, s ? strlen(s) : 0);
}

static void arr_ll(pg_arr *a, long long v)
{
    unsigned char o[8];
    be32(o, (uint32_t)((uint64_t)v >> 32));
    be32(o + 4, (uint32_t)v);
    arr_add(a, o, 8);
}

static void arr_int(pg_arr *a, int v)
{
    unsigned char o[4];
    be32(o, (uint32_t)v);
    arr_add(a, o, 4);
}

/* The parameter (its bytes and length); NULL when the array passed its
 * cap. */
static const char *arr_param(pg_arr *a, int *len)
{
    if (a->b.toobig || a->b.len > INT32_MAX)
        return NULL;
    unsigned char *h = (unsigned char *)a->b.data;
    be32(h + 4, a->nulls);
    be32(h + 12, (uint32_t)a->n);
    *len = (int)a->b.len;
    return a->b.data;
}

/* ---- knowledge bases ---- */

static sl_value *kb_row(PGresult *r, int i)
{
    return json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I}", "id", pg_col_str(r, i, 0), "name",
                     pg_col_str(r, i, 1), "info", pg_col_json(r, i, 2), "generation",
                     (json_int_t)pg_col_ll(r, i, 3), "created_at", (json_int_t)pg_col_ll(r, i, 4),
                     "chunks_generation", (json_int_t)pg_col_ll(r, i, 5), "kw",
                     (json_int_t)pg_col_ll(r, i, 6));
}

#define KB_COLS "id, name, info, generation, created_at, chunks_generation, kw"

/* The knowledge base's row number, its row locked until the transaction
 * ends: 0 with "Dataset not found.", -1 on error (err set either way). */
static long long kb_lock(pg_conn *x, const char *kb_id, sl_err *err)
{
    PGresult *r = pg_qx(x, "lock a knowledge base", "SELECT n FROM kb WHERE id=$1 FOR UPDATE",
                        ARGS(kb_id), err);
    if (!r)
        return -1;
    long long n = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
    PQclear(r);
    if (!n)
        sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
    return n;
}

int pg_kb_add(sl_store_be *b, const char *id, const char *name, const sl_value *info,
              sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    char *it = info_text(info), *what = sl_xasprintf("knowledge base '%s'", name);
    char t[24];
    PGresult *r = pg_qx(&x, what,
                        "INSERT INTO kb(id, name, info, created_at, kw) VALUES($1, $2, $3, $4, 1)",
                        ARGS(id, name, it, pg_ll(t, pg_now_s())), err);
    if (!r && !strcmp(x.state, "23505") && err)
        err->code = SL_EINVAL;   /* the id or name is taken */
    PQclear(r);
    pg_give(&x);
    free(what);
    free(it);
    return r ? 0 : -1;
}

int pg_kb_set(sl_store_be *b, const char *id, const char *name, const sl_value *info,
              sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    char *it = info ? info_text(info) : NULL;
    int n = pg_changed(pg_qx(&x, "change a knowledge base",
                             "UPDATE kb SET name=coalesce($2, name), info=coalesce($3, info)"
                             " WHERE id=$1",
                             ARGS(id, name, it), err));
    if (n < 0 && !strcmp(x.state, "23505") && err)
        err->code = SL_EINVAL;
    pg_give(&x);
    free(it);
    if (n < 0)
        return -1;
    return n ? 0 : sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
}

sl_value *pg_kb_get(sl_store_be *b, const char *id_or_name)
{
    /* by id first, as SQLite's UNION ALL does */
    PGresult *r = pg_q1_logged(b, "read a knowledge base",
                               "SELECT " KB_COLS " FROM kb WHERE id=$1 OR name=$1"
                               " ORDER BY id=$1 DESC LIMIT 1",
                               ARGS(id_or_name));
    sl_value *v = pg_has_row(r) ? kb_row(r, 0) : NULL;
    PQclear(r);
    return v;
}

sl_value *pg_kb_list(sl_store_be *b)
{
    sl_value *arr = json_array();
    PGresult *r = pg_q1_logged(b, "list knowledge bases",
                               "SELECT " KB_COLS " FROM kb ORDER BY created_at DESC, n DESC", 0,
                               NULL);
    for (int i = 0; r && i < PQntuples(r); i++)
        json_array_append_new(arr, kb_row(r, i));
    PQclear(r);
    return arr;
}

int pg_kb_delete(sl_store_be *b, const char *id, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    long long n = rc ? -1 : kb_lock(&x, id, err);
    if (n <= 0)
        return pg_end_tx(&x, -1, err);
    char ns[24];
    pg_ll(ns, n);
    rc = run(&x, "delete a knowledge base",
             "WITH c AS (DELETE FROM kb_chunks WHERE kb=$1),"
             " p AS (DELETE FROM kb_pages WHERE seg IN (SELECT n FROM kb_segs WHERE kb=$1)),"
             " s AS (DELETE FROM kb_segs WHERE kb=$1),"
             " x AS (DELETE FROM kb_dead WHERE kb=$1),"
             " d AS (DELETE FROM kb_docs WHERE kb=$1)"
             " DELETE FROM kb WHERE n=$1",
             ARGS(ns), err);
    return pg_end_tx(&x, rc, err);
}

/* ---- documents ---- */

static sl_value *doc_row(PGresult *r, int i, bool with_n)
{
    sl_value *v = json_pack("{s:o, s:o, s:I, s:I}", "id", pg_col_str(r, i, 0), "info",
                            pg_col_json(r, i, 1), "created_at", (json_int_t)pg_col_ll(r, i, 2),
                            "segments", (json_int_t)pg_col_ll(r, i, 3));
    if (with_n)
        json_object_set_new(v, "n", json_integer(pg_col_ll(r, i, 4)));
    return v;
}

#define DOC_COLS                                                                                  \
    "d.id, d.info, d.created_at,"                                                                 \
    " (SELECT count(*) FROM kb_chunks c WHERE c.doc=d.n AND c.parent=0), d.n"

sl_value *pg_kb_docs(sl_store_be *b, const char *kb_id)
{
    sl_value *arr = json_array();
    PGresult *r = pg_q1_logged(b, "list documents",
                               "SELECT " DOC_COLS " FROM kb_docs d JOIN kb k ON k.n=d.kb"
                               " WHERE k.id=$1 ORDER BY d.created_at DESC, d.n DESC",
                               ARGS(kb_id));
    for (int i = 0; r && i < PQntuples(r); i++)
        json_array_append_new(arr, doc_row(r, i, true));
    PQclear(r);
    return arr;
}

sl_value *pg_kb_doc(sl_store_be *b, const char *kb_id, const char *doc_id)
{
    PGresult *r = pg_q1_logged(b, "read a document",
                               "SELECT " DOC_COLS " FROM kb_docs d JOIN kb k ON k.n=d.kb"
                               " WHERE k.id=$1 AND d.id=$2",
                               ARGS(kb_id, doc_id));
    sl_value *v = pg_has_row(r) ? doc_row(r, 0, false) : NULL;
    PQclear(r);
    return v;
}

sl_value *pg_kb_doc_of_source(sl_store_be *b, const char *kb_id, const char *source,
                              long long *next_position)
{
    *next_position = 1;
    /* one statement: the next position (1 for an unknown knowledge base,
     * as SQLite's max over no rows) and the first document of the source */
    PGresult *r = pg_q1_logged(
        b, "find a document by its source",
        "SELECT d.id, d.info, d.created_at,"
        " (SELECT count(*) FROM kb_chunks c WHERE c.doc=d.n AND c.parent=0), d.n,"
        " (SELECT coalesce(max(position), 0) + 1 FROM kb_docs WHERE kb=k.n)"
        " FROM kb k LEFT JOIN LATERAL (SELECT * FROM kb_docs WHERE kb=k.n AND source=$2"
        " ORDER BY created_at, n LIMIT 1) d ON true WHERE k.id=$1",
        ARGS(kb_id, source));
    sl_value *v = NULL;
    if (pg_has_row(r)) {
        *next_position = pg_col_ll(r, 0, 5);
        if (pg_val(r, 0, 0))
            v = doc_row(r, 0, true);
    }
    PQclear(r);
    return v;
}

/* The columns a document's info gives (migration 16): its source as
 * SQLite's json_extract(info, '$.source') compares with a text (a string
 * only), its position as json_extract(…, '$.position') counts in max()
 * + 1 read as an integer (numbers cut toward zero, true 1, false 0). */
static void doc_keys(const sl_value *info, const char **source, char pos[24])
{
    const sl_value *s = json_object_get(info, "source"), *p = json_object_get(info, "position");
    *source = json_is_string(s) && strlen(json_string_value(s)) == json_string_length(s)
                  ? json_string_value(s)
                  : NULL;
    if (json_is_integer(p))
        pg_ll(pos, (long long)json_integer_value(p));
    else if (json_is_real(p) && json_real_value(p) > -9e18 && json_real_value(p) < 9e18)
        pg_ll(pos, (long long)json_real_value(p));
    else if (json_is_boolean(p))
        pg_ll(pos, json_is_true(p));
    else
        *pos = 0;
}

/* ---- the keyword index's segments (knowledge/kwindex.h) ----
 * As store/sqlite.c keeps them (see its comment); here a segment's pages
 * are written PAGE_ROWS to a statement and read READ_PAGES at a time. */

typedef struct {
    long long first, last;
} dead_range;

static int cmp_dead(const void *a, const void *b)
{
    const dead_range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorts ranges and joins those that overlap or touch; their new number. */
static size_t dead_join(dead_range *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, cmp_dead);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].first <= v[m].last + 1) {
            if (v[i].last > v[m].last)
                v[m].last = v[i].last;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
}

/* A segment being written: entries in term order go into pages, pages
 * into batches.  Its row in kb_segs is made with its first batch of
 * pages, in one statement (seg is "" until then). */
typedef struct {
    pg_conn *x;
    char seg[24], kb[24], level[24], doc[24];
    sl_buf page;
    unsigned char first[SL_KW_TOKEN_MAX + 8];
    size_t nfirst;
    pg_arr firsts, datas;
    sl_err *err;
    int rc;
} seg_writer;

static void sw_write(seg_writer *w)
{
    if (w->rc || (!w->firsts.n && *w->seg))
        return;
    int l1, l2;
    const char *a1 = arr_param(&w->firsts, &l1), *a2 = arr_param(&w->datas, &l2);
    if (!a1 || !a2) {
        w->rc = sl_err_set(w->err, SL_ELIMIT, "store: a keyword index's pages are too large");
        return;
    }
    PGresult *r;
    if (*w->seg) {
        const char *v[] = {w->seg, a1, a2};
        const int len[] = {0, l1, l2}, fmt[] = {0, 1, 1};
        r = pg_run(w->x, "write a keyword index",
                   "INSERT INTO kb_pages(seg, first, data)"
                   " SELECT $1::bigint, f, d FROM unnest($2::bytea[], $3::bytea[]) u(f, d)",
                   3, v, len, fmt, 0, w->err);
    } else {
        const char *v[] = {w->kb, w->level, w->doc, a1, a2};
        const int len[] = {0, 0, 0, l1, l2}, fmt[] = {0, 0, 0, 1, 1};
        r = pg_run(w->x, "write a keyword index",
                   "WITH s AS (INSERT INTO kb_segs(kb, level, doc)"
                   "  VALUES($1::bigint, $2::integer, $3::bigint) RETURNING n),"
                   " p AS (INSERT INTO kb_pages(seg, first, data) SELECT s.n, u.f, u.d"
                   "  FROM s, unnest($4::bytea[], $5::bytea[]) u(f, d))"
                   " SELECT n FROM s",
                   5, v, len, fmt, 0, w->err);
        if (pg_has_row(r))
            pg_ll(w->seg, pg_col_ll(r, 0, 0));
    }
    w->rc = r && *w->seg ? 0 : -1;
    PQclear(r);
    arr_reset(&w->firsts);
    arr_reset(&w->datas);
}

static void sw_flush(seg_writer *w)
{
    if (w->rc || !w->page.len)
        return;
    arr_add(&w->firsts, w->first, w->nfirst);
    arr_add(&w->datas, w->page.data, w->page.len);
    sl_buf_reset(&w->page);
    if (w->firsts.n >= PAGE_ROWS)
        sw_write(w);
}

static void sw_add(seg_writer *w, const sl_kw_entry *e)
{
    if (w->rc)
        return;
    if (!w->page.len) {
        /* the page's key: its first term (SQLite binds the same bytes) */
        size_t k = e->len < SL_KW_TOKEN_MAX + 4 ? e->len : SL_KW_TOKEN_MAX + 4;
        const char *nul = memchr(e->term, 0, k);
        w->nfirst = nul ? (size_t)(nul - e->term) : k;
        memcpy(w->first, e->term, w->nfirst);
    }
    sl_kw_page_put(&w->page, e);
    if (w->page.len >= PAGE_BYTES)
        sw_flush(w);
}

/* A new segment of knowledge base kbn at level, document doc's (0: a
 * merged one). */
static void sw_open(pg_conn *x, seg_writer *w, long long kbn, int level, long long doc,
                    sl_err *err)
{
    memset(w, 0, sizeof *w);
    w->x = x;
    w->err = err;
    pg_ll(w->kb, kbn);
    pg_ll(w->level, level);
    pg_ll(w->doc, doc);
    sl_buf_init(&w->page, ARR_CAP);
    arr_init(&w->firsts, OID_BYTEA);
    arr_init(&w->datas, OID_BYTEA);
}

/* Writes what is left (the segment's row at least); w->seg: its number. */
static int sw_close(seg_writer *w)
{
    sw_flush(w);
    sw_write(w);
    sl_buf_release(&w->page);
    sl_buf_release(&w->firsts.b);
    sl_buf_release(&w->datas.b);
    return w->rc;
}

/* A segment read in term order, READ_PAGES pages a statement (the next
 * ones after the last page's key), so a merge of large segments holds a
 * few pages of each, not all of them.  The first pages of every segment
 * a merge joins come in one statement (rows [row, end) of a result the
 * merge keeps); a reader that needs more reads its own. */
typedef struct {
    pg_conn *x;
    char seg[24];
    PGresult *r;          /* the pages read */
    bool own;             /* r is this reader's (else the merge's) */
    int row, end;         /* the next of them, and past its last */
    bool more;            /* pages after them may follow */
    unsigned char after[SL_KW_TOKEN_MAX + 8];
    int nafter;
    const unsigned char *page;
    size_t size, at;
    sl_kw_entry e;
    bool live;
    int rc;
    sl_err *err;
} seg_reader;

/* Takes rows [row, end) of r (first, data) as the pages read; more: a
 * full batch, pages may follow. */
static void sr_take(seg_reader *rd, PGresult *r, bool own, int row, int end)
{
    if (rd->own)
        PQclear(rd->r);
    rd->r = r;
    rd->own = own;
    rd->row = row;
    rd->end = end;
    rd->more = end - row == READ_PAGES;
    if (end > row) {
        int l = PQgetlength(r, end - 1, 0);
        rd->nafter = l < (int)sizeof rd->after ? l : (int)sizeof rd->after;
        memcpy(rd->after, PQgetvalue(r, end - 1, 0), (size_t)rd->nafter);
    }
}

static int sr_fetch(seg_reader *rd)
{
    rd->page = NULL;
    const char *v[] = {rd->seg, (const char *)rd->after};
    const int len[] = {0, rd->nafter}, fmt[] = {0, 1};
    PGresult *r = pg_run(rd->x, "merge a keyword index",
                         "SELECT first, data FROM kb_pages WHERE seg=$1::bigint AND first > $2::bytea"
                         " ORDER BY first LIMIT " STR(READ_PAGES),
                         2, v, len, fmt, 1, rd->err);
    sr_take(rd, r, true, 0, r ? PQntuples(r) : 0);
    return r ? 0 : -1;
}

static void sr_next(seg_reader *rd)
{
    for (;;) {
        if (rd->page) {
            int k = sl_kw_page_next(rd->page, rd->size, &rd->at, &rd->e);
            if (k == 1)
                return;
            if (k < 0) {
                rd->rc = sl_err_set(rd->err, SL_EPARSE, "store: a keyword index's page is damaged;"
                                    " add the knowledge base's documents again");
                rd->live = false;
                return;
            }
            rd->page = NULL;
        }
        if (rd->row >= rd->end && (!rd->more || sr_fetch(rd) || rd->row >= rd->end)) {
            rd->rc = rd->r ? 0 : -1;
            rd->live = false;
            return;
        }
        rd->page = (const unsigned char *)PQgetvalue(rd->r, rd->row, 1);
        rd->size = (size_t)PQgetlength(rd->r, rd->row, 1);
        rd->at = 0;
        rd->row++;
    }
}

static int cmp_term_bytes(const sl_kw_entry *a, const sl_kw_entry *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->term, b->term, n);
    return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

/* Joins segs (ns of them, in their order) into a new segment of level. */
static int merge_level(pg_conn *x, long long kbn, int level, const long long *segs, size_t ns,
                       sl_err *err)
{
    seg_reader rd[MERGE_FANIN];
    memset(rd, 0, sizeof rd);
    char *arr = int_array(segs, ns);
    /* the first pages of each, in one statement */
    PGresult *first = q_bin(x, "merge a keyword index",
                            "SELECT p.first, p.data, s.i FROM unnest($1::bigint[])"
                            " WITH ORDINALITY AS s(seg, i) CROSS JOIN LATERAL"
                            " (SELECT first, data FROM kb_pages WHERE seg=s.seg ORDER BY first"
                            "  LIMIT " STR(READ_PAGES) ") p ORDER BY s.i, p.first",
                            ARGS(arr), err);
    int rc = first ? 0 : -1, at = 0, nr = first ? PQntuples(first) : 0;
    for (size_t i = 0; i < ns && !rc; i++) {
        int from = at;
        while (at < nr && bin_ll(first, at, 2) == (long long)i + 1)
            at++;
        rd[i].x = x;
        rd[i].err = err;
        pg_ll(rd[i].seg, segs[i]);
        sr_take(&rd[i], first, false, from, at);
        rd[i].live = true;
        sr_next(&rd[i]);
        rc = rd[i].rc;
    }
    seg_writer w;
    sw_open(x, &w, kbn, level + 1, 0, err);
    sl_kw_entry parts[MERGE_FANIN];
    sl_buf out;
    sl_buf_init(&out, ARR_CAP);
    while (!rc) {
        /* one pass: the lowest term and the readers that have it */
        size_t at_[MERGE_FANIN], np = 0;
        const sl_kw_entry *low = NULL;
        for (size_t i = 0; i < ns; i++) {
            if (!rd[i].live)
                continue;
            int c = low ? cmp_term_bytes(&rd[i].e, low) : -1;
            if (c < 0)
                low = &rd[i].e, np = 0;
            if (c <= 0)
                at_[np++] = i;
        }
        if (!low)
            break;
        for (size_t j = 0; j < np; j++)
            parts[j] = rd[at_[j]].e;
        sl_kw_entry joined = *low;
        if (sl_kw_join(parts, np, &out, &joined))
            rc = sl_err_set(err, SL_EPARSE, "store: a keyword index's postings are damaged;"
                            " add the knowledge base's documents again");
        joined.data = (const unsigned char *)out.data;
        joined.size = out.len;
        if (!rc)
            sw_add(&w, &joined);
        /* the entries joined are copied: each reader moves on */
        for (size_t j = 0; j < np && !rc; j++)
            sr_next(&rd[at_[j]]), rc = rd[at_[j]].rc;
        rc = rc || w.rc;
    }
    sl_buf_release(&out);
    for (size_t i = 0; i < ns; i++)
        if (rd[i].own)
            PQclear(rd[i].r);
    PQclear(first);
    /* (a failed merge writes nothing more) */
    if (rc)
        w.rc = -1;
    rc = sw_close(&w);
    if (!rc)
        rc = run(x, "merge a keyword index",
                 "WITH d AS (UPDATE kb_docs SET kw_seg=0 FROM kb_segs g"
                 "  WHERE g.n = ANY($1::bigint[]) AND kb_docs.n=g.doc AND kb_docs.kw_seg=g.n),"
                 " p AS (DELETE FROM kb_pages WHERE seg = ANY($1::bigint[]))"
                 " DELETE FROM kb_segs WHERE n = ANY($1::bigint[])",
                 ARGS(arr), err);
    free(arr);
    return rc;
}

/* Merges the knowledge base's segments of a level into one of the next
 * when there are MERGE_FANIN of them, and so on up (as SQLite's
 * merge_segments, whose pages these are byte for byte). */
static int merge_segments(pg_conn *x, long long kbn, sl_err *err)
{
    char ks[24], ls[24];
    pg_ll(ks, kbn);
    for (int level = 0; level < 30; level++) {
        long long segs[MERGE_FANIN];
        size_t ns = 0;
        PGresult *r = pg_qx(x, "merge a keyword index",
                            "SELECT n FROM kb_segs WHERE kb=$1 AND level=$2 ORDER BY n"
                            " LIMIT " STR(MERGE_FANIN),
                            ARGS(ks, pg_ll(ls, level)), err);
        if (!r)
            return -1;
        for (int i = 0; i < PQntuples(r) && ns < MERGE_FANIN; i++)
            segs[ns++] = pg_col_ll(r, i, 0);
        PQclear(r);
        if (ns < MERGE_FANIN)
            return 0;
        if (merge_level(x, kbn, level, segs, ns, err))
            return -1;
    }
    return 0;
}

/* Removes document d's keyword index: its own segment, or (merged) its
 * chunk numbers marked dead; and its counts from the knowledge base's.
 * In the transaction that locked the knowledge base; before its chunks
 * go. */
static int drop_terms(pg_conn *x, long long kbn, long long d, sl_err *err)
{
    char ds[24], ks[24];
    pg_ll(ds, d);
    pg_ll(ks, kbn);
    PGresult *r = pg_qx(x, "drop a document's keyword index",
                        "SELECT kw_seg, kw_rows, kw_tokens,"
                        " (SELECT min(n) FROM kb_chunks WHERE doc=$1),"
                        " (SELECT max(n) FROM kb_chunks WHERE doc=$1)"
                        " FROM kb_docs WHERE n=$1",
                        ARGS(ds), err);
    if (!r)
        return -1;
    int rc = 0;
    if (pg_has_row(r)) {
        const char *seg = PQgetvalue(r, 0, 0), *rows = PQgetvalue(r, 0, 1),
                   *tokens = PQgetvalue(r, 0, 2);
        if (pg_col_ll(r, 0, 0))
            rc = run(x, "drop a document's keyword index",
                     "WITH p AS (DELETE FROM kb_pages WHERE seg=$1) DELETE FROM kb_segs WHERE n=$1",
                     ARGS(seg), err);
        else if (pg_col_ll(r, 0, 1) && pg_val(r, 0, 3))
            rc = run(x, "drop a document's keyword index",
                     "INSERT INTO kb_dead(kb, first, last) VALUES($1, $2, $3)",
                     ARGS(ks, PQgetvalue(r, 0, 3), PQgetvalue(r, 0, 4)), err);
        if (!rc && (pg_col_ll(r, 0, 1) || pg_col_ll(r, 0, 2)))
            rc = run(x, "drop a document's keyword index",
                     "UPDATE kb SET kw_rows=kw_rows-$1, kw_tokens=kw_tokens-$2 WHERE n=$3",
                     ARGS(rows, tokens, ks), err);
    }
    PQclear(r);
    return rc || run(x, "drop a document's keyword index",
                     "UPDATE kb_docs SET kw_seg=0, kw_rows=0, kw_tokens=0 WHERE n=$1", ARGS(ds),
                     err);
}

/* Writes document d's keyword index as a segment of its own (the caller
 * dropped its old one: drop_terms), then merges what is due; base: the
 * row number of its first chunk.  With bump, the knowledge base's
 * generations move in the same statement as its counts (*bumped: they
 * did; there was an index to write). */
static int put_terms(pg_conn *x, long long kbn, long long d, long long base,
                     const sl_store_kw *kw, bool bump, bool *bumped, sl_err *err)
{
    if (bumped)
        *bumped = false;
    if (!kw || !kw->n)
        return 0;
    seg_writer w;
    sw_open(x, &w, kbn, 0, d, err);
    for (size_t i = 0; i < kw->n && !w.rc; i++) {
        const sl_store_term *t = &kw->terms[i];
        sl_kw_entry e = {t->term, strlen(t->term), t->df, base, t->last, t->data, t->size};
        sw_add(&w, &e);
    }
    if (sw_close(&w))
        return -1;
    char rs[24], ts[24];
    /* the counts, and the level-0 segments there are now: a merge is due
     * at MERGE_FANIN */
    PGresult *r = pg_qx(x, "write a keyword index",
                        bump ? "WITH k AS (UPDATE kb SET kw_rows=kw_rows+$2, kw_tokens=kw_tokens+$3,"
                               "  generation=generation+1, chunks_generation=chunks_generation+1"
                               "  WHERE n=$5),"
                               " d AS (UPDATE kb_docs SET kw_seg=$1, kw_rows=$2, kw_tokens=$3"
                               "  WHERE n=$4)"
                               " SELECT count(*) FROM kb_segs WHERE kb=$5 AND level=0"
                             : "WITH k AS (UPDATE kb SET kw_rows=kw_rows+$2, kw_tokens=kw_tokens+$3"
                               "  WHERE n=$5),"
                               " d AS (UPDATE kb_docs SET kw_seg=$1, kw_rows=$2, kw_tokens=$3"
                               "  WHERE n=$4)"
                               " SELECT count(*) FROM kb_segs WHERE kb=$5 AND level=0",
                        ARGS(w.seg, pg_ll(rs, kw->rows), pg_ll(ts, kw->tokens), w.doc, w.kb),
                        err);
    long long level0 = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
    PQclear(r);
    if (!r)
        return -1;
    if (bumped)
        *bumped = bump;
    return level0 >= MERGE_FANIN ? merge_segments(x, kbn, err) : 0;
}

/* Removes document d's chunks and their keyword index. */
static int drop_chunks(pg_conn *x, long long kbn, long long d, sl_err *err)
{
    char ds[24];
    return drop_terms(x, kbn, d, err) ||
           run(x, "write a document", "DELETE FROM kb_chunks WHERE doc=$1", ARGS(pg_ll(ds, d)),
               err);
}

/* A batch of chunks to write: a column each. */
typedef struct {
    pg_arr n, id, parent, position, content, fts, info, vec;
} chunk_batch;

#define CB_COLS(X) X(n) X(id) X(parent) X(position) X(content) X(fts) X(info) X(vec)

static void cb_init(chunk_batch *c)
{
    arr_init(&c->n, OID_INT8);
    arr_init(&c->id, OID_TEXT);
    arr_init(&c->parent, OID_INT8);
    arr_init(&c->position, OID_INT4);
    arr_init(&c->content, OID_TEXT);
    arr_init(&c->fts, OID_TEXT);
    arr_init(&c->info, OID_TEXT);
    arr_init(&c->vec, OID_BYTEA);
}

static size_t cb_bytes(const chunk_batch *c)
{
    size_t s = 0;
#define CB_BYTES(f) s += c->f.b.len;
    CB_COLS(CB_BYTES)
#undef CB_BYTES
    return s;
}

static int cb_write(pg_conn *x, chunk_batch *c, const char *ks, const char *ds, sl_err *err)
{
    if (!c->n.n)
        return 0;
    const char *v[10];
    int len[10], fmt[10], k = 0;
#define CB_PARAM(f)                                                                               \
    fmt[k] = 1;                                                                                   \
    if (!(v[k] = arr_param(&c->f, &len[k])))                                                      \
        return sl_err_set(err, SL_ELIMIT, "store: a document's chunks are too large to write");  \
    k++;
    CB_COLS(CB_PARAM)
#undef CB_PARAM
    v[k] = ks, len[k] = 0, fmt[k++] = 0;
    v[k] = ds, len[k] = 0, fmt[k++] = 0;
    int rc = pg_changed(pg_run(x, "write a document",
                               "INSERT INTO kb_chunks(n, id, kb, doc, parent, position, content,"
                               " fts, info, vec) SELECT u.n, u.id, $9::bigint, $10::bigint,"
                               " u.parent, u.position, u.content, u.fts, u.info, u.vec"
                               " FROM unnest($1::bigint[], $2::text[], $3::bigint[],"
                               " $4::integer[], $5::text[], $6::text[], $7::text[], $8::bytea[])"
                               " AS u(n, id, parent, position, content, fts, info, vec)",
                               k, v, len, fmt, 0, err)) < 0
                 ? -1
                 : 0;
#define CB_RESET(f) arr_reset(&c->f);
    CB_COLS(CB_RESET)
#undef CB_RESET
    return rc;
}

/* Takes n consecutive chunk numbers, in a statement of its own (a
 * transaction of its own: the counter is not held while the document is
 * written; a write that fails leaves its numbers unused).  As SQLite's,
 * they start past every number ever given. */
static int reserve(pg_conn *x, size_t n, long long *first, sl_err *err)
{
    char ns[24];
    PGresult *r = pg_qx(x, "number a document's chunks",
                        "INSERT INTO meta(key, value) VALUES('kb_chunk_next',"
                        " ((SELECT coalesce(max(n), 0) + 1 FROM kb_chunks) + $1::bigint)::text)"
                        " ON CONFLICT(key) DO UPDATE SET value=(greatest(meta.value::bigint,"
                        " (SELECT coalesce(max(n), 0) + 1 FROM kb_chunks)) + $1::bigint)::text"
                        " RETURNING value::bigint - $1::bigint",
                        ARGS(pg_ll(ns, (long long)n)), err);
    *first = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
    PQclear(r);
    return *first > 0 ? 0 : r ? sl_err_set(err, SL_EIO, "store: no chunk numbers left") : -1;
}

int pg_kb_doc_put(sl_store_be *b, const char *kb_id, const char *doc_id, const sl_value *info,
                  const sl_store_chunk *chunks, size_t n, int dims, const sl_store_kw *kw,
                  sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    char *it = info_text(info);
    const char *source;
    char pos[24], ks[24], ds[24];
    doc_keys(info, &source, pos);
    long long next = 0, kbn = 0, d = 0;
    bool had = false, bumped = false;
    int rc = chunks && n ? reserve(&x, n, &next, err) : 0;
    if (!rc)
        rc = pg_begin(&x, err);
    /* the lock first, in a statement of its own: the next one's snapshot
     * then holds what the writer before committed */
    if (!rc && (kbn = kb_lock(&x, kb_id, err)) <= 0)
        rc = -1;
    if (!rc) {
        char t[24];
        PGresult *r = pg_qx(&x, "write a document",
                            "WITH old AS (SELECT n FROM kb_docs WHERE id=$1 AND kb=$3::bigint),"
                            " up AS (UPDATE kb_docs SET info=$2, source=$5, position=$6::bigint"
                            "  WHERE n IN (SELECT n FROM old) RETURNING n),"
                            " ins AS (INSERT INTO kb_docs(id, info, kb, created_at, source, position)"
                            "  SELECT $1::text, $2::text, $3::bigint, $4::bigint, $5::text,"
                            "  $6::bigint WHERE NOT EXISTS (SELECT 1 FROM old) RETURNING n)"
                            " SELECT n, 1 FROM up UNION ALL SELECT n, 0 FROM ins",
                            ARGS(doc_id, it, pg_ll(ks, kbn), pg_ll(t, pg_now_s()), source,
                                 *pos ? pos : NULL),
                            err);
        d = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
        had = d && pg_col_ll(r, 0, 1);
        rc = d ? 0 : -1;
        PQclear(r);
        pg_ll(ds, d);
    }
    /* a new document has no chunks nor index to drop */
    if (!rc && chunks && had)
        rc = drop_chunks(&x, kbn, d, err);
    if (!rc && chunks) {
        chunk_batch cb;
        cb_init(&cb);
        for (size_t i = 0; i < n && !rc; i++) {
            const sl_store_chunk *c = &chunks[i];
            char *ci = c->info_json ? NULL : info_text(c->info);
            arr_ll(&cb.n, next + (long long)i);
            arr_text(&cb.id, c->id);
            arr_ll(&cb.parent,
                   c->parent >= 0 && (size_t)c->parent < i ? next + (long long)c->parent : 0);
            arr_int(&cb.position, c->position);
            arr_text(&cb.content, c->content ? c->content : "");
            /* '' marks an indexed chunk (its keyword index is the document's) */
            arr_text(&cb.fts, c->fts ? "" : NULL);
            arr_text(&cb.info, ci ? ci : c->info_json);
            arr_add(&cb.vec, c->vec && dims > 0 ? (const void *)c->vec : NULL,
                    dims > 0 ? (size_t)dims * sizeof(float) : 0);
            free(ci);
            if (cb.n.n >= CHUNK_ROWS || cb_bytes(&cb) >= CHUNK_BYTES)
                rc = cb_write(&x, &cb, ks, ds, err);
        }
        if (!rc)
            rc = cb_write(&x, &cb, ks, ds, err);
#define CB_FREE(f) sl_buf_release(&cb.f.b);
        CB_COLS(CB_FREE)
#undef CB_FREE
        if (!rc)
            rc = put_terms(&x, kbn, d, next, kw, true, &bumped, err);
    }
    if (!rc && !bumped)
        rc = run(&x, "write a document",
                 chunks ? "UPDATE kb SET generation=generation+1,"
                          " chunks_generation=chunks_generation+1 WHERE n=$1"
                        : "UPDATE kb SET generation=generation+1 WHERE n=$1",
                 ARGS(ks), err);
    free(it);
    return pg_end_tx(&x, rc, err);
}

/* The document's row number (in the knowledge base locked as kbn), 0
 * with "Document Not Exists.", -1 on error; *base (may be NULL): the row
 * number of its first chunk. */
static long long doc_n(pg_conn *x, long long kbn, const char *doc_id, long long *base,
                       sl_err *err)
{
    char ks[24];
    PGresult *r = pg_qx(x, "find a document",
                        "SELECT d.n, (SELECT min(n) FROM kb_chunks WHERE doc=d.n)"
                        " FROM kb_docs d WHERE d.id=$1 AND d.kb=$2",
                        ARGS(doc_id, pg_ll(ks, kbn)), err);
    if (!r)
        return -1;
    long long d = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
    if (base)
        *base = d ? pg_col_ll(r, 0, 1) : 0;
    PQclear(r);
    if (!d)
        sl_err_set(err, SL_ENOTFOUND, "Document Not Exists.");
    return d;
}

int pg_kb_doc_delete(sl_store_be *b, const char *kb_id, const char *doc_id, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    long long kbn = pg_begin(&x, err) ? -1 : kb_lock(&x, kb_id, err);
    long long d = kbn > 0 ? doc_n(&x, kbn, doc_id, NULL, err) : -1;
    if (d <= 0)
        return pg_end_tx(&x, -1, err);
    char ds[24], ks[24];
    int rc = drop_chunks(&x, kbn, d, err) ||
             run(&x, "delete a document",
                 "WITH d AS (DELETE FROM kb_docs WHERE n=$1) UPDATE kb SET"
                 " generation=generation+1, chunks_generation=chunks_generation+1 WHERE n=$2",
                 ARGS(pg_ll(ds, d), pg_ll(ks, kbn)), err);
    return pg_end_tx(&x, rc, err);
}

/* ---- chunks ---- */

/* A chunk of a binary result whose first columns are n, id, parent,
 * position, content, info. */
static sl_value *chunk_row(PGresult *r, int i)
{
    return json_pack("{s:I, s:o, s:I, s:i, s:o, s:o}", "n", (json_int_t)bin_ll(r, i, 0), "id",
                     pg_col_str(r, i, 1), "parent", (json_int_t)bin_ll(r, i, 2), "position",
                     (int)bin_ll(r, i, 3), "content", pg_col_str(r, i, 4), "info",
                     pg_col_json(r, i, 5));
}

/* One statement with binary results on a connection of its own. */
static PGresult *q1_bin(sl_store_be *b, const char *what, const char *sql, int n,
                        const char *const *v, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return NULL;
    PGresult *r = pg_run(&x, what, sql, n, v, NULL, NULL, 1, err);
    pg_give(&x);
    return r;
}

/* q1_bin for operations without err: a failure is logged. */
static PGresult *q1_bin_logged(sl_store_be *b, const char *what, const char *sql, int n,
                               const char *const *v)
{
    sl_err err = {0};
    PGresult *r = q1_bin(b, what, sql, n, v, &err);
    if (!r)
        sl_log_site(SL_LOG_WARN, what, "%s", err.msg ? err.msg : "store: failed");
    sl_err_clear(&err);
    return r;
}

sl_value *pg_kb_chunks(sl_store_be *b, const char *kb_id, const char *doc_id, float **vecs,
                       int dims)
{
    sl_value *arr = json_array();
    bool want = vecs && dims > 0;
    if (vecs)
        *vecs = NULL;
    PGresult *r = q1_bin_logged(b, "read a document's chunks",
                                want ? "SELECT c.n, c.id, c.parent, c.position, c.content, c.info,"
                                       " c.vec FROM kb_chunks c JOIN kb_docs d ON d.n=c.doc"
                                       " JOIN kb k ON k.n=d.kb WHERE k.id=$1 AND d.id=$2"
                                       " ORDER BY c.n"
                                     : "SELECT c.n, c.id, c.parent, c.position, c.content, c.info"
                                       " FROM kb_chunks c JOIN kb_docs d ON d.n=c.doc"
                                       " JOIN kb k ON k.n=d.kb WHERE k.id=$1 AND d.id=$2"
                                       " ORDER BY c.n",
                                ARGS(kb_id, doc_id));
    int rows = r ? PQntuples(r) : 0;
    if (want && rows)
        *vecs = sl_xmalloc((size_t)rows * (size_t)dims * sizeof(float));
    for (int i = 0; i < rows; i++) {
        json_array_append_new(arr, chunk_row(r, i));
        if (want)
            copy_vec(r, i, 6, *vecs + (size_t)i * (size_t)dims, dims);
    }
    PQclear(r);
    return arr;
}

int pg_kb_vectors(sl_store_be *b, const char *kb_id, int dims, long long **ns, long long **docs,
                  float **vecs, size_t *count, sl_err *err)
{
    *ns = NULL;
    *docs = NULL;
    if (vecs)
        *vecs = NULL;
    *count = 0;
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    /* the numbers alone come from the index in one statement; vectors a
     * batch at a time, all of one snapshot (REPEATABLE READ) */
    int rc = vecs ? run(&x, "read vectors",
                        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", 0, NULL, err)
                  : 0;
    size_t cap = 0, n = 0;
    long long after = 0;
    for (bool more = !rc; more && !rc;) {
        char as[24];
        pg_ll(as, after);
        PGresult *r = pg_run(&x, "read vectors",
                             vecs ? "SELECT n, doc, vec FROM kb_chunks"
                                    " WHERE kb=(SELECT n FROM kb WHERE id=$1) AND vec IS NOT NULL"
                                    " AND n > $2 ORDER BY n LIMIT " STR(VEC_ROWS)
                                  : "SELECT n, doc FROM kb_chunks"
                                    " WHERE kb=(SELECT n FROM kb WHERE id=$1) AND vec IS NOT NULL"
                                    " AND n > $2 ORDER BY n",
                             ARGS(kb_id, as), NULL, NULL, 1, err);
        if (!r) {
            rc = -1;
            break;
        }
        int rows = PQntuples(r);
        more = vecs && rows == VEC_ROWS;
        if (n + (size_t)rows > cap) {
            cap = (n + (size_t)rows) * 2;
            *ns = sl_xrealloc(*ns, cap * sizeof **ns);
            *docs = sl_xrealloc(*docs, cap * sizeof **docs);
            if (vecs)
                *vecs = sl_xrealloc(*vecs, cap * (size_t)dims * sizeof(float));
        }
        for (int i = 0; i < rows && !rc; i++) {
            if (vecs && PQgetlength(r, i, 2) != dims * (int)sizeof(float)) {
                rc = sl_err_set(err, SL_EPARSE,
                                "store: a vector of knowledge base %s has %d bytes, not %d"
                                " dimensions; add its documents again",
                                kb_id, PQgetlength(r, i, 2), dims);
                break;
            }
            (*ns)[n] = bin_ll(r, i, 0);
            (*docs)[n] = bin_ll(r, i, 1);
            if (vecs)
                memcpy(*vecs + n * (size_t)dims, PQgetvalue(r, i, 2),
                       (size_t)dims * sizeof(float));
            n++;
        }
        if (rows)
            after = bin_ll(r, rows - 1, 0);
        PQclear(r);
    }
    /* read only: its end is a rollback either way */
    if (vecs)
        pg_end_tx(&x, -1, NULL);
    else
        pg_give(&x);
    if (rc) {
        free(*ns);
        free(*docs);
        *ns = *docs = NULL;
        if (vecs) {
            free(*vecs);
            *vecs = NULL;
        }
        return -1;
    }
    *count = n;
    return 0;
}

int pg_kb_postings(sl_store_be *b, const char *kb_id, const char *const *terms, size_t n,
                   void (*fn)(size_t i, long long df, long long base, const void *data,
                              size_t size, void *ud),
                   void *ud, long long *rows, long long *tokens, long long **skip, size_t *nskip,
                   sl_err *err)
{
    *rows = *tokens = 0;
    *skip = NULL;
    *nskip = 0;
    pg_arr ta;
    arr_init(&ta, OID_BYTEA);
    for (size_t i = 0; i < n; i++)
        arr_text(&ta, terms[i]);
    int tl;
    const char *tv = arr_param(&ta, &tl);
    if (!tv) {
        sl_buf_release(&ta.b);
        return sl_err_set(err, SL_ELIMIT, "store: a keyword search's terms are too long");
    }
    /* one statement, so one snapshot: the counts, the dead chunks, and
     * each segment's page that may hold each term (a few segments: see
     * merge_segments), terms in order, segments as SQLite lists them */
    pg_conn x;
    PGresult *r = NULL;
    if (!pg_take(b, &x, err)) {
        const char *v[] = {kb_id, tv};
        const int len[] = {0, tl}, fmt[] = {0, 1};
        r = pg_run(&x, "keyword search",
                   "WITH k AS (SELECT n, kw_rows, kw_tokens FROM kb WHERE id=$1)"
                   " SELECT 0 AS kind, 0::bigint AS i, kw_rows AS a, kw_tokens AS b,"
                   " NULL::bytea AS data FROM k"
                   " UNION ALL SELECT 1, 0, d.first, d.last, NULL FROM k JOIN kb_dead d"
                   " ON d.kb=k.n"
                   " UNION ALL SELECT 2, t.i, g.level, g.n, (SELECT p.data FROM kb_pages p"
                   " WHERE p.seg=g.n AND p.first <= t.term ORDER BY p.first DESC LIMIT 1)"
                   " FROM k JOIN kb_segs g ON g.kb=k.n"
                   " CROSS JOIN unnest($2::bytea[]) WITH ORDINALITY AS t(term, i)"
                   " ORDER BY 1, 2, 3, 4",
                   2, v, len, fmt, 1, err);
        pg_give(&x);
    }
    sl_buf_release(&ta.b);
    if (!r)
        return -1;
    int nr = PQntuples(r), rc = 0;
    if (!nr || bin_ll(r, 0, 0) != 0) {
        PQclear(r);
        return sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
    }
    *rows = bin_ll(r, 0, 2);
    *tokens = bin_ll(r, 0, 3);
    dead_range *dead = NULL;
    size_t nd = 0;
    int at = 1;
    for (; at < nr && bin_ll(r, at, 0) == 1; at++) {
        dead = sl_xrealloc(dead, (nd + 1) * sizeof *dead);
        dead[nd++] = (dead_range){bin_ll(r, at, 2), bin_ll(r, at, 3)};
    }
    /* the chunks merged segments still hold but that are gone */
    nd = dead_join(dead, nd);
    if (nd) {
        *skip = sl_xcalloc(2 * nd, sizeof **skip);
        for (size_t k = 0; k < nd; k++)
            (*skip)[2 * k] = dead[k].first, (*skip)[2 * k + 1] = dead[k].last;
        *nskip = nd;
    }
    free(dead);
    for (; at < nr && !rc; at++) {
        long long i = bin_ll(r, at, 1) - 1;
        if (i < 0 || (size_t)i >= n || PQgetisnull(r, at, 4))
            continue;
        const unsigned char *page = (const unsigned char *)PQgetvalue(r, at, 4);
        size_t size = (size_t)PQgetlength(r, at, 4), pat = 0, tlen = strlen(terms[i]);
        sl_kw_entry e;
        int k;
        while ((k = sl_kw_page_next(page, size, &pat, &e)) == 1) {
            int c = memcmp(e.term, terms[i], e.len < tlen ? e.len : tlen);
            if (!c && e.len == tlen) {
                fn((size_t)i, e.df, e.base, e.data, e.size, ud);
                break;
            }
            if (c > 0 || (!c && e.len > tlen))
                break;   /* past where it would be */
        }
        if (k < 0)
            rc = sl_err_set(err, SL_EPARSE, "the keyword index of knowledge base %s is"
                            " damaged; add its documents again", kb_id);
    }
    PQclear(r);
    if (rc) {
        free(*skip);
        *skip = NULL;
        *nskip = 0;
    }
    return rc;
}

typedef struct {
    long long n;
    int row;
} row_at;

static int cmp_row_at(const void *a, const void *b)
{
    const row_at *x = a, *y = b;
    return x->n < y->n ? -1 : x->n > y->n;
}

sl_value *pg_kb_rows(sl_store_be *b, const char *kb_id, const long long *ns, size_t count,
                     float *vecs, int dims)
{
    sl_value *arr = json_array();
    if (!count)
        return arr;
    bool want = vecs && dims > 0;
    char *list = int_array(ns, count);
    /* all in one statement; then in the order asked */
    PGresult *r = q1_bin_logged(
        b, "read chunks",
        want ? "SELECT c.n, c.id, c.parent, c.position, c.content, c.info, d.id,"
               " p.n, p.id, p.position, p.content, p.info, c.vec"
               " FROM kb_chunks c JOIN kb k ON k.n=c.kb JOIN kb_docs d ON d.n=c.doc"
               " LEFT JOIN kb_chunks p ON p.n=c.parent WHERE k.id=$1 AND c.n = ANY($2::bigint[])"
             : "SELECT c.n, c.id, c.parent, c.position, c.content, c.info, d.id,"
               " p.n, p.id, p.position, p.content, p.info"
               " FROM kb_chunks c JOIN kb k ON k.n=c.kb JOIN kb_docs d ON d.n=c.doc"
               " LEFT JOIN kb_chunks p ON p.n=c.parent WHERE k.id=$1 AND c.n = ANY($2::bigint[])",
        ARGS(kb_id, list));
    free(list);
    int rows = r ? PQntuples(r) : 0;
    row_at *by = sl_xcalloc((size_t)rows + 1, sizeof *by);
    for (int i = 0; i < rows; i++)
        by[i] = (row_at){bin_ll(r, i, 0), i};
    qsort(by, (size_t)rows, sizeof *by, cmp_row_at);
    for (size_t i = 0; i < count && rows; i++) {
        row_at key = {ns[i], 0};
        const row_at *f = bsearch(&key, by, (size_t)rows, sizeof *by, cmp_row_at);
        if (!f)
            continue;
        int j = f->row;
        if (want)
            copy_vec(r, j, 12, vecs + i * (size_t)dims, dims);
        sl_value *o = chunk_row(r, j);
        json_object_set_new(o, "doc_id", pg_col_str(r, j, 6));
        json_object_set_new(
            o, "parent_row",
            PQgetisnull(r, j, 7)
                ? json_null()
                : json_pack("{s:I, s:o, s:i, s:o, s:o}", "n", (json_int_t)bin_ll(r, j, 7), "id",
                            pg_col_str(r, j, 8), "position", (int)bin_ll(r, j, 9), "content",
                            pg_col_str(r, j, 10), "info", pg_col_json(r, j, 11)));
        json_array_append_new(arr, o);
    }
    free(by);
    PQclear(r);
    return arr;
}

int pg_kb_indexed(sl_store_be *b, const char *kb_id, const char *doc_id,
                  void (*fn)(long long pos, const char *content, void *ud), void *ud,
                  sl_err *err)
{
    PGresult *r = pg_q1(b, "read a document's chunks",
                        "SELECT c.n - (SELECT min(n) FROM kb_chunks WHERE doc=d.n), c.content"
                        " FROM kb_chunks c JOIN kb_docs d ON d.n=c.doc JOIN kb k ON k.n=d.kb"
                        " WHERE k.id=$1 AND d.id=$2 AND c.fts IS NOT NULL ORDER BY c.n",
                        ARGS(kb_id, doc_id), err);
    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r); i++) {
        const char *c = pg_val(r, i, 1);
        fn(pg_col_ll(r, i, 0), c ? c : "", ud);
    }
    PQclear(r);
    return 0;
}

int pg_kb_kw_put(sl_store_be *b, const char *kb_id, const char *doc_id, const sl_store_kw *kw,
                 sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    long long base = 0, kbn = pg_begin(&x, err) ? -1 : kb_lock(&x, kb_id, err);
    long long d = kbn > 0 ? doc_n(&x, kbn, doc_id, &base, err) : -1;
    int rc = d <= 0 ? -1
                   : drop_terms(&x, kbn, d, err) || put_terms(&x, kbn, d, base, kw, false, NULL, err);
    return pg_end_tx(&x, rc, err);
}

int pg_kb_kw_done(sl_store_be *b, const char *kb_id, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    long long n = pg_begin(&x, err) ? -1 : kb_lock(&x, kb_id, err);
    char ns[24];
    int rc = n <= 0 ? -1
                    : run(&x, "finish a keyword index",
                          "UPDATE kb SET kw=1, generation=generation+1,"
                          " chunks_generation=chunks_generation+1 WHERE n=$1",
                          ARGS(pg_ll(ns, n)), err);
    return pg_end_tx(&x, rc, err);
}
