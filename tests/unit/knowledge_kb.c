/*
 * knowledge_kb — the parts of knowledge/kb.h that need no model: Dify's
 * metadata operators (sl_kb_conditions_match), and an economy (keyword)
 * knowledge base in a store of its own: documents added, replaced,
 * disabled, segments edited, metadata fields, and searches that see each
 * change.  tests/cli/kb.sh covers the embedding side through the CLI.
 *
 * SLUICE_TEST_STORE: a store to run against instead of folders of its
 * own (tests/cli/kb_pg.sh: a PostgreSQL database); its knowledge bases
 * get names of their own, and the checks of SQLite's file skip.  Two
 * writers of one knowledge base at once, on two stores (two pools, as two
 * processes), run on either.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config.h"
#include "knowledge/kb.h"
#include "store/store.h"
#include "tap.h"
#include "util.h"

static bool match(const char *conds, const char *meta)
{
    sl_value *c = json_loads(conds, 0, NULL), *m = json_loads(meta, 0, NULL);
    bool r = sl_kb_conditions_match(c, m);
    json_decref(c);
    json_decref(m);
    return r;
}

#define ONE(op, val) "{\"conditions\":[{\"name\":\"f\",\"comparison_operator\":\"" op "\",\"value\":" val "}]}"

static void operators(void)
{
    const char *s = "{\"f\":\"Hello World\",\"n\":5,\"t\":1700000000}";
    CHECK(match(ONE("contains", "\"lo W\""), s), "contains");
    CHECK(!match(ONE("contains", "\"lo w\""), s), "contains is case-sensitive (PostgreSQL LIKE)");
    CHECK(match(ONE("not contains", "\"xyz\""), s), "not contains");
    CHECK(!match(ONE("not contains", "\"xyz\""), "{}"), "not contains: a document without the field fails (SQL NULL)");
    CHECK(match(ONE("start with", "\"Hell\""), s) && !match(ONE("start with", "\"ello\""), s), "start with");
    CHECK(match(ONE("end with", "\"World\""), s) && !match(ONE("end with", "\"Worl\""), s), "end with");
    CHECK(match(ONE("is", "\"Hello World\""), s) && !match(ONE("is", "\"Hello\""), s), "is");
    CHECK(match(ONE("is not", "\"Hello\""), s) && !match(ONE("is not", "\"x\""), "{}"),
          "is not; absent fails");
    CHECK(match(ONE("empty", "null"), "{}") && !match(ONE("empty", "null"), s), "empty");
    CHECK(match(ONE("not empty", "null"), s) && !match(ONE("not empty", "null"), "{\"f\":null}"),
          "not empty");
    CHECK(match(ONE("in", "\"a, Hello World ,b\""), s), "in: a comma list, trimmed");
    CHECK(match(ONE("in", "[\"x\",\"Hello World\"]"), s), "in: a list");
    CHECK(match(ONE("not in", "\"a,b\""), s) && !match(ONE("not in", "\"Hello World\""), s), "not in");
    CHECK(match(ONE("contains", "null"), s) && match(ONE("contains", "null"), "{}"),
          "a condition without a value does not apply");
    CHECK(match(ONE("frobnicate", "\"x\""), s), "an unknown operator does not apply, as in Dify");
#define NUM(op, val) "{\"conditions\":[{\"name\":\"n\",\"comparison_operator\":\"" op "\",\"value\":" val "}]}"
    CHECK(match(NUM("=", "5"), s) && !match(NUM("=", "6"), s), "=");
    CHECK(match(NUM("≠", "6"), s) && !match(NUM("≠", "5"), s), "≠");
    CHECK(match(NUM(">", "4"), s) && !match(NUM(">", "5"), s), ">");
    CHECK(match(NUM("<", "6"), s) && !match(NUM("<", "5"), s), "<");
    CHECK(match(NUM("≥", "5"), s) && match(NUM(">=", "5"), s) && !match(NUM("≥", "6"), s), "≥ and >=");
    CHECK(match(NUM("≤", "5"), s) && match(NUM("<=", "5"), s) && !match(NUM("≤", "4"), s), "≤ and <=");
    CHECK(match(NUM(">", "\"4.5\""), s), "a number given as text compares as a number");
    CHECK(!match(NUM(">", "\"abc\""), s), "text that is no number fails a number comparison");
#define TIME(op, val) "{\"conditions\":[{\"name\":\"t\",\"comparison_operator\":\"" op "\",\"value\":" val "}]}"
    CHECK(match(TIME("before", "1800000000"), s) && !match(TIME("before", "1600000000"), s), "before: Unix seconds");
    CHECK(match(TIME("after", "1600000000"), s) && !match(TIME("after", "1800000000"), s), "after");
    const char *and2 = "{\"logical_operator\":\"and\",\"conditions\":[{\"name\":\"f\",\"comparison_operator\":\"contains\",\"value\":\"Hello\"},{\"name\":\"n\",\"comparison_operator\":\">\",\"value\":9}]}";
    const char *or2 = "{\"logical_operator\":\"or\",\"conditions\":[{\"name\":\"f\",\"comparison_operator\":\"contains\",\"value\":\"Hello\"},{\"name\":\"n\",\"comparison_operator\":\">\",\"value\":9}]}";
    CHECK(!match(and2, s), "and: one false condition fails");
    CHECK(match(or2, s), "or: one true condition passes");
    CHECK(match("{\"logical_operator\":\"or\",\"conditions\":[]}", s), "or with no conditions: no filter");
}

static sl_value *search(sl_kb *k, const char *kb, const char *q, const char *conds)
{
    sl_kb_query query = {0};
    sl_err err = {0};
    sl_value *c = conds ? json_loads(conds, 0, NULL) : NULL, *r = NULL;
    if (sl_kb_query_defaults(k, kb, &query, &err) == 0) {
        query.query = q;
        query.conditions = c;
        long long t;
        if (sl_kb_search(k, kb, &query, &r, &t, &err))
            printf("# search: %s\n", err.msg ? err.msg : "");
    }
    json_decref(c);
    return r;
}

static const char *first_doc(const sl_value *recs)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(json_array_get(recs, 0), "segment"), "document"), "name"));
}

/* The store a check runs against: SLUICE_TEST_STORE, else a new folder
 * made from tmpl (removed by done_store). */
static const char *test_store(char *tmpl)
{
    const char *env = getenv("SLUICE_TEST_STORE");
    if (env && *env)
        return env;
    if (!mkdtemp(tmpl)) {
        CHECK(0, "mkdtemp");
        return NULL;
    }
    return tmpl;
}

static void done_store(const char *where)
{
    const char *env = getenv("SLUICE_TEST_STORE");
    if (env && *env)
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", where);
    CHECK(system(cmd) == 0, "clean up");
}

static void economy(void)
{
    char tmpl[] = "/tmp/sl-kb-XXXXXX";
    const char *dir = test_store(tmpl);
    if (!dir)
        return;
    sl_store *s;
    sl_err err = {0};
    int interrupted;
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens: %s", err.msg ? err.msg : "");
    sl_kb_env env = {.store = s};
    sl_kb_limits_default(&env.limits);
    sl_kb *k = sl_kb_open(&env, &err);
    sl_value *spec = json_pack("{s:s}", "name", "notes"), *ds = NULL, *doc = NULL;
    CHECK(sl_kb_create(k, spec, &ds, &err) == 0, "create: %s", err.msg ? err.msg : "");
    CHECK(!strcmp(json_string_value(json_object_get(ds, "indexing_technique")), "economy"),
          "no embedding model: economy");
    const char *id = json_string_value(json_object_get(ds, "id"));
    char *kb = strdup(id ? id : "");
    sl_kb_doc_in a = {.name = "a.txt", .text = "Apples grow on trees in the orchard."};
    sl_kb_doc_in b = {.name = "b.txt", .text = "Bananas grow in warm places."};
    bool same;
    CHECK(sl_kb_add(k, kb, &a, &doc, &same, &err) == 0 && !same, "add a: %s", err.msg ? err.msg : "");
    char *doc_a = strdup(json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
    CHECK(sl_kb_add(k, kb, &b, &doc, &same, &err) == 0, "add b: %s", err.msg ? err.msg : "");
    json_decref(doc);
    sl_value *r = search(k, kb, "orchard trees", NULL);
    CHECK(json_array_size(r) == 1 && !strcmp(first_doc(r), "a.txt"), "keyword search finds a");
    json_decref(r);
    r = search(k, "notes", "grow", NULL);
    CHECK(json_array_size(r) == 2, "by name too; a word in both finds both");
    json_decref(r);

    /* disabled documents are not searched */
    sl_value *ids = json_pack("[s]", doc_a);
    CHECK(sl_kb_doc_status(k, kb, ids, "disable", &err) == 0, "disable a");
    r = search(k, kb, "orchard", NULL);
    CHECK(json_array_size(r) == 0, "a disabled document is not found");
    json_decref(r);
    CHECK(sl_kb_doc_status(k, kb, ids, "frob", &err) == -1 && strstr(err.msg, "Invalid action."),
          "an unknown action: Dify's message");
    CHECK(sl_kb_doc_status(k, kb, ids, "enable", &err) == 0, "enable a");
    json_decref(ids);

    /* segments: edit one, add one, delete one */
    long long total = 0;
    sl_value *segs = sl_kb_segments(k, kb, doc_a, NULL, NULL, 1, 20, &total, &err);
    CHECK(total == 1 && json_array_size(segs) == 1, "one segment");
    char *seg = strdup(json_string_value(json_object_get(json_array_get(segs, 0), "id")));
    json_decref(segs);
    sl_value *patch = json_pack("{s:s}", "content", "Pears ripen in autumn."), *out = NULL;
    CHECK(sl_kb_segment_update(k, kb, doc_a, seg, patch, &out, &err) == 0 &&
              !strcmp(json_string_value(json_object_get(out, "id")), seg),
          "update keeps the segment's id: %s", err.msg ? err.msg : "");
    json_decref(out);
    json_decref(patch);
    r = search(k, kb, "orchard", NULL);
    CHECK(json_array_size(r) == 0, "the old text is gone from the index");
    json_decref(r);
    r = search(k, kb, "pears autumn", NULL);
    CHECK(json_array_size(r) == 1, "the new text is found");
    json_decref(r);
    sl_value *add = json_pack("[{s:s}]", "content", "Cherries are red."), *added = NULL;
    CHECK(sl_kb_segments_add(k, kb, doc_a, add, &added, &err) == 0 && json_array_size(added) == 1,
          "segments add: %s", err.msg ? err.msg : "");
    json_decref(added);
    json_decref(add);
    r = search(k, kb, "cherries", NULL);
    CHECK(json_array_size(r) == 1, "an added segment is found");
    json_decref(r);
    CHECK(sl_kb_segment_delete(k, kb, doc_a, seg, &err) == 0, "delete a segment");
    CHECK(sl_kb_segment_delete(k, kb, doc_a, seg, &err) == -1 && err.code == SL_ENOTFOUND,
          "deleting it again: not found");
    r = search(k, kb, "pears", NULL);
    CHECK(json_array_size(r) == 0, "a deleted segment is not found");
    json_decref(r);
    free(seg);

    /* metadata */
    sl_value *f = NULL;
    CHECK(sl_kb_field_add(k, kb, "kind", "string", &f, &err) == 0, "field add");
    json_decref(f);
    CHECK(sl_kb_field_add(k, kb, "Bad Name", "string", &f, &err) == -1, "a field name is checked");
    CHECK(sl_kb_field_add(k, kb, "x", "blob", &f, &err) == -1, "a field type is checked");
    sl_value *vals = json_pack("{s:s}", "kind", "fruit");
    CHECK(sl_kb_doc_meta(k, kb, doc_a, vals, false, &err) == 0, "set metadata: %s", err.msg ? err.msg : "");
    json_decref(vals);
    vals = json_pack("{s:s}", "nope", "x");
    CHECK(sl_kb_doc_meta(k, kb, doc_a, vals, false, &err) == -1, "a value of no field is refused");
    json_decref(vals);
    r = search(k, kb, "cherries", "{\"conditions\":[{\"name\":\"kind\",\"comparison_operator\":\"is\",\"value\":\"fruit\"}]}");
    CHECK(json_array_size(r) == 1, "a filter on the field keeps the document");
    json_decref(r);
    r = search(k, kb, "grow", "{\"conditions\":[{\"name\":\"kind\",\"comparison_operator\":\"is\",\"value\":\"fruit\"}]}");
    CHECK(json_array_size(r) == 0, "... and leaves the other out");
    json_decref(r);
    sl_value *fields = sl_kb_fields(k, kb, &err);
    CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(fields, "doc_metadata"), 0), "count")) == 1,
          "the field counts one document");
    json_decref(fields);

    /* deleting */
    CHECK(sl_kb_doc_delete(k, kb, doc_a, &err) == 0, "delete a document");
    r = search(k, kb, "cherries", NULL);
    CHECK(json_array_size(r) == 0, "its chunks are gone");
    json_decref(r);
    CHECK(sl_kb_doc(k, kb, doc_a, &err) == NULL && !strcmp(err.msg, "Document Not Exists."),
          "Dify's message for a missing document");
    CHECK(sl_kb_delete(k, kb, &err) == 0, "delete the knowledge base");
    CHECK(sl_kb_get(k, kb, &err) == NULL && !strcmp(err.msg, "Dataset not found."),
          "Dify's message for a missing knowledge base");
    free(doc_a);
    free(kb);
    json_decref(ds);
    json_decref(spec);
    sl_err_clear(&err);
    sl_kb_close(k);
    sl_store_close(s);
    done_store(dir);
}

/* A knowledge base large enough for the graph (20,000 vectors of 8
 * dimensions, written through the store as sl_kb_add would): documents
 * added and deleted after the graph was built are found and gone at once,
 * in this process and in a fresh one that loads the saved graph. */
static void put_doc(sl_store *s, const char *kb, const char *id, size_t first, size_t n,
                    const float *vecs)
{
    sl_store_chunk *c = calloc(n, sizeof *c);
    char (*ids)[24] = calloc(n, sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%zu", first + i);
        c[i] = (sl_store_chunk){.id = ids[i], .parent = -1, .position = (int)i + 1,
                                .content = "x", .fts = "x", .vec = vecs + i * 8};
    }
    sl_value *info = json_pack("{s:s, s:s, s:b}", "name", id, "indexing_status", "completed",
                               "enabled", true);
    sl_err err = {0};
    if (sl_store_kb_doc_put(s, kb, id, info, c, n, 8, NULL, &err))
        printf("# put: %s\n", err.msg ? err.msg : "");
    json_decref(info);
    free(c);
    free(ids);
}

static const char *top(sl_kb *k, const char *kb, const float *q, bool exact)
{
    static char id[64];
    sl_kb_query query = {.method = "semantic_search", .top_k = 1, .query = "q",
                         .query_vector = q, .query_dims = 8, .exact = exact};
    sl_value *r = NULL;
    long long t;
    sl_err err = {0};
    if (sl_kb_search(k, kb, &query, &r, &t, &err))
        printf("# search: %s\n", err.msg ? err.msg : "");
    const char *s = json_string_value(
        json_object_get(json_object_get(json_array_get(r, 0), "segment"), "id"));
    snprintf(id, sizeof id, "%s", s ? s : "(none)");
    json_decref(r);
    return id;
}

static void graph(bool background)
{
    /* document ids are the store's, across knowledge bases */
    const char *pre = background ? "bg-" : "";
    char tmpl[] = "/tmp/sl-kbg-XXXXXX";
    const char *dir = test_store(tmpl);
    if (!dir)
        return;
    sl_store *s;
    sl_err err = {0};
    int interrupted;
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens");
    sl_config *cfg = sl_config_env();
    sl_config_set_offline(cfg, true);
    sl_kb_env env = {.store = s, .config = cfg, .background_graphs = background};
    sl_kb_limits_default(&env.limits);
    sl_kb *k = sl_kb_open(&env, &err);
    sl_value *spec = json_pack("{s:s, s:s, s:s, s:s}", "name", background ? "big-bg" : "big",
                               "embedding_model", "m",
                               "embedding_model_provider", "p", "indexing_technique",
                               "high_quality"), *ds = NULL;
    CHECK(sl_kb_create(k, spec, &ds, &err) == 0, "create: %s", err.msg ? err.msg : "");
    char *kb = strdup(json_string_value(json_object_get(ds, "id")));
    json_decref(ds);
    json_decref(spec);
    /* 20,000 points spread on the sphere; document i holds 1,000 */
    size_t n = 20000;
    float *v = malloc(n * 8 * sizeof *v);
    unsigned x = 12345;
    for (size_t i = 0; i < n * 8; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (float)((x >> 8) % 2000) / 1000.0f - 1.0f;
    }
    for (size_t d = 0; d < 20; d++) {
        char id[16];
        snprintf(id, sizeof id, "%sd%zu", pre, d);
        put_doc(s, kb, id, d * 1000, 1000, v + d * 1000 * 8);
    }
    sl_value *row = sl_store_kb_get(s, kb), *ki = json_deep_copy(json_object_get(row, "info"));
    json_object_set_new(ki, "dims", json_integer(8));
    sl_store_kb_set(s, kb, NULL, ki, &err);
    json_decref(ki);
    json_decref(row);
    float q[8] = {0.9f, -0.3f, 0.2f, 0.1f, -0.5f, 0.4f, 0.0f, 0.7f};
    char first[64];
    snprintf(first, sizeof first, "%s", top(k, kb, q, false));
    CHECK(strcmp(first, "(none)") && !strcmp(first, top(k, kb, q, true)),
          "%s: the first search answers, as the exact scan does (%s)",
          background ? "background" : "in the search", first);
    if (background) {
        /* the graph comes while searches go on; then it is there */
        sl_kb_wait(k);
        CHECK(!strcmp(first, top(k, kb, q, false)), "background: the built graph agrees");
    }
    row = sl_store_kb_get(s, kb);
    CHECK(json_is_string(json_object_get(json_object_get(row, "info"), "index_blob")),
          "the graph was saved");
    json_decref(row);
    /* a new document exactly at the query: found at once, without a rebuild */
    float at[8];
    memcpy(at, q, sizeof at);
    char nid[16], nid2[16], d0[16];
    snprintf(nid, sizeof nid, "%snew", pre);
    snprintf(nid2, sizeof nid2, "%snew2", pre);
    snprintf(d0, sizeof d0, "%sd0", pre);
    put_doc(s, kb, nid, 900000, 1, at);
    CHECK(!strcmp(top(k, kb, q, false), "900000"), "a document added after the build is found");
    sl_kb_wait(k);
    /* deleting it: gone at once */
    CHECK(sl_kb_doc_delete(k, kb, nid, &err) == 0, "delete it");
    CHECK(!strcmp(top(k, kb, q, false), first), "... and gone (the best is %s again)", first);
    /* a fresh process: the saved graph, then what changed since */
    put_doc(s, kb, nid2, 900001, 1, at);
    sl_kb_close(k);
    k = sl_kb_open(&env, &err);
    CHECK(!strcmp(top(k, kb, q, false), "900001"),
          "a new process loads the saved graph and adds what came after it");
    CHECK(sl_kb_doc_delete(k, kb, d0, &err) == 0, "delete a document of the graph");
    size_t wrong = 0;
    for (int t = 0; t < 20; t++) {
        float r[8];
        for (int e = 0; e < 8; e++) {
            x = x * 1103515245u + 12345u;
            r[e] = (float)((x >> 8) % 2000) / 1000.0f - 1.0f;
        }
        char a[64];
        snprintf(a, sizeof a, "%s", top(k, kb, r, false));
        wrong += strcmp(a, top(k, kb, r, true)) != 0 || (atoi(a) < 1000 && strcmp(a, "(none)"));
    }
    CHECK(wrong <= 1, "after the delete the graph agrees with the scan and never returns the"
                      " deleted rows (%zu of 20 differ)", wrong);
    free(kb);
    free(v);
    sl_err_clear(&err);
    sl_kb_close(k);
    sl_store_close(s);
    sl_config_free(cfg);
    done_store(dir);
}

/* Whether the store's file holds text (after its store is closed, which
 * checkpoints the log into it). */
static bool file_has(const char *dir, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/sluice.db", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = strlen(text), cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    bool found = false;
    for (;;) {
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (len >= n && memmem(buf, len, text, n))
            found = true;
        if (found || !r)
            break;
        if (len > n) { /* keep the tail a match may start in */
            memmove(buf, buf + len - n, n);
            len = n;
        }
    }
    free(buf);
    fclose(f);
    return found;
}

/* The knowledge writer frees pages without zeroing them (secure_delete
 * FAST: merges free pages all the time); deleting a document on purpose
 * still zeroes what it deletes, its text and its own keyword segment. */
static void scrubbed(void)
{
    if (getenv("SLUICE_TEST_STORE") && *getenv("SLUICE_TEST_STORE")) {
        SKIP("a deleted document's text and terms leave the store's file",
             "SQLite's file (SLUICE_TEST_STORE is another store)");
        return;
    }
    char dir[] = "/tmp/sl-kbs-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    sl_err err = {0};
    int interrupted;
    sl_store *s;
    /* 1,500 words and the mark last: the document's keyword segment is a
     * page of about 8 KB, so its last terms sit on an overflow page, one
     * that deleting frees without rewriting (what FAST leaves as it is) */
    const char *mark = "Zzquokkazebrine";
    char text[16000];
    size_t at = 0;
    for (int i = 0; i < 1500; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "w%04d ", i);
    snprintf(text + at, sizeof text - at, "%s.", mark);
    char *kb = NULL, *doc_id = NULL;
    for (int round = 0; round < 2; round++) {
        CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens (round %d)", round);
        sl_kb_env env = {.store = s};
        sl_kb_limits_default(&env.limits);
        sl_kb *k = sl_kb_open(&env, &err);
        if (round == 0) {
            sl_value *spec = json_pack("{s:s}", "name", "vault"), *ds = NULL, *doc = NULL;
            CHECK(sl_kb_create(k, spec, &ds, &err) == 0, "create vault");
            kb = strdup(json_string_value(json_object_get(ds, "id")));
            sl_kb_doc_in a = {.name = "secret.txt", .text = text};
            sl_kb_doc_in b = {.name = "other.txt", .text = "Nothing to see in this one."};
            bool same;
            CHECK(sl_kb_add(k, kb, &a, &doc, &same, &err) == 0, "add the secret");
            doc_id = strdup(json_string_value(json_object_get(doc, "id")));
            json_decref(doc);
            CHECK(sl_kb_add(k, kb, &b, &doc, &same, &err) == 0, "add another");
            json_decref(doc);
            json_decref(ds);
            json_decref(spec);
        } else {
            CHECK(sl_kb_doc_delete(k, kb, doc_id, &err) == 0, "delete the secret");
        }
        sl_kb_close(k);
        sl_store_close(s);
        if (round == 0)
            CHECK(file_has(dir, mark) && file_has(dir, "zzquokkazebrine"),
                  "the store's file holds the document's text and terms");
        else
            CHECK(!file_has(dir, mark) && !file_has(dir, "zzquokkazebrine"),
                  "deleted: neither its text nor its terms are left in the file");
    }
    free(kb);
    free(doc_id);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {
    }
}

/* Two writers of one knowledge base at once, each on a store of its own
 * (as two processes would be): every document is kept once, with its
 * keyword index; documents replaced meanwhile (some of them after their
 * postings were merged) leave their old words out; the counts BM25 takes
 * are those of what is left. */
typedef struct {
    sl_kb *k;
    const char *kb;
    char tag;
    int failed;
} pair_writer;

#define PAIR_DOCS 24

static void pair_text(char *out, size_t n, char tag, int i, int round)
{
    snprintf(out, n, "Shared words in every note. Token q%c%dr%d alone.", tag, i, round);
}

static void *pair_main(void *arg)
{
    pair_writer *w = arg;
    sl_err err = {0};
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < PAIR_DOCS; i++) {
            if (round && i % 3)
                continue;   /* every third one changes */
            char name[32], text[128];
            snprintf(name, sizeof name, "%c%02d.txt", w->tag, i);
            pair_text(text, sizeof text, w->tag, i, round);
            sl_kb_doc_in in = {.name = name, .text = text, .source = name};
            sl_value *doc = NULL;
            bool same;
            if (sl_kb_add(w->k, w->kb, &in, &doc, &same, &err)) {
                printf("# %s: %s\n", name, err.msg ? err.msg : "");
                w->failed++;
            }
            json_decref(doc);
        }
    }
    sl_err_clear(&err);
    return NULL;
}

static void count_df(size_t i, long long df, long long base, const void *data, size_t size,
                     void *ud)
{
    (void)i, (void)base, (void)data, (void)size;
    *(long long *)ud += df;
}

static void concurrent(void)
{
    char tmpl[] = "/tmp/sl-kbp-XXXXXX";
    const char *where = test_store(tmpl);
    if (!where)
        return;
    sl_store *s[2] = {NULL, NULL};
    sl_kb *k[2] = {NULL, NULL};
    sl_err err = {0};
    int interrupted;
    for (int i = 0; i < 2; i++) {
        CHECK(sl_store_open(where, &s[i], &interrupted, &err) == 0, "pair: store %d opens: %s", i,
              err.msg ? err.msg : "");
        sl_kb_env env = {.store = s[i]};
        sl_kb_limits_default(&env.limits);
        k[i] = sl_kb_open(&env, &err);
    }
    sl_value *spec = json_pack("{s:s}", "name", "pair"), *ds = NULL;
    CHECK(sl_kb_create(k[0], spec, &ds, &err) == 0, "pair: create: %s", err.msg ? err.msg : "");
    char *kb = strdup(json_string_value(json_object_get(ds, "id")));
    json_decref(ds);
    json_decref(spec);
    pair_writer w[2] = {{k[0], kb, 'a', 0}, {k[1], kb, 'b', 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, pair_main, &w[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK(!w[0].failed && !w[1].failed, "pair: two writers at once, no write failed (%d, %d)",
          w[0].failed, w[1].failed);
    long long total = 0;
    sl_value *docs = sl_kb_docs(k[1], kb, NULL, NULL, 1, 100, &total, &err);
    CHECK(total == 2 * PAIR_DOCS, "pair: every document kept once (%lld)", total);
    json_decref(docs);
    int found = 0, gone = 0;
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < PAIR_DOCS; i++) {
            char q[64], name[32];
            snprintf(name, sizeof name, "%c%02d.txt", w[t].tag, i);
            snprintf(q, sizeof q, "q%c%dr%d", w[t].tag, i, i % 3 ? 0 : 1);
            sl_value *r = search(k[t], kb, q, NULL);
            found += json_array_size(r) == 1 && !strcmp(first_doc(r), name);
            json_decref(r);
            if (i % 3)
                continue;
            snprintf(q, sizeof q, "q%c%dr0", w[t].tag, i);
            r = search(k[1 - t], kb, q, NULL);
            gone += json_array_size(r) == 0;
            json_decref(r);
        }
    }
    CHECK(found == 2 * PAIR_DOCS, "pair: each document's own word finds it (%d of %d)", found,
          2 * PAIR_DOCS);
    CHECK(gone == 2 * (PAIR_DOCS / 3), "pair: the replaced texts' words are gone (%d of %d)", gone,
          2 * (PAIR_DOCS / 3));
    long long rows = 0, tokens = 0, *skip = NULL, df = 0;
    size_t nskip = 0;
    const char *shared[] = {"shared"};
    CHECK(sl_store_kb_postings(s[0], kb, shared, 1, count_df, &df, &rows, &tokens, &skip, &nskip,
                               &err) == 0 &&
              rows == 2 * PAIR_DOCS && df >= rows,
          "pair: the index counts the chunks that are left (%lld rows, %lld postings of a word"
          " in all, %zu ranges skipped)", rows, df, nskip);
    free(skip);
    CHECK(sl_kb_delete(k[0], kb, &err) == 0, "pair: delete the knowledge base");
    free(kb);
    sl_err_clear(&err);
    for (int i = 0; i < 2; i++) {
        sl_kb_close(k[i]);
        sl_store_close(s[i]);
    }
    done_store(where);
}

int main(void)
{
    operators();
    economy();
    scrubbed();
    concurrent();
    graph(false);
    graph(true);
    return tap_done();
}
