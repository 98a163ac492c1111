/*
 * knowledge/kb — knowledge bases (kb.h): the meaning of datasets,
 * documents and segments, ingestion and search.  Rows live in the store;
 * vectors are searched in memory (knowledge/vindex.h), one index per
 * knowledge base, loaded again when the store's generation moved.
 */
#include "knowledge/kb.h"
#include "knowledge/kwindex.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/map.h"
#include "core/math.h"
#include "core/rand.h"
#include "core/sha256.h"
#include "engine/config.h"
#include "engine/limits.h"
#include "extract/extract.h"
#include "extract/isolate.h"
#include "knowledge/split.h"
#include "knowledge/vindex.h"
#include "llm/embed.h"
#include "llm/llm.h"
#include "store/store.h"

/* An exact scan below this many vectors; the approximate index above. */
#define APPROX_MIN 20000
/* Dify's hybrid recall per channel: clamp(top_k, 50, 200). */
#define RECALL_FLOOR 50
#define RECALL_MAX 200
/* Terms of a query sent to the full-text index. */
#define MAX_QUERY_TERMS 64
#define MAX_TOP_K 1000

/* What a process keeps of a knowledge base between searches: its
 * vectors (as of the store's chunks_generation) and its documents (as of
 * its generation), each loaded again when the store moved on. */
typedef struct cache {
    struct cache *next;
    char *kb_id;
    long long generation;   /* of the vectors */
    int dims;
    sl_vindex *ix;          /* NULL until a search needs the vectors */
    size_t since_build;     /* rows added since the graph was built */
    bool building;          /* a background build for it runs */
    long long saved_generation;   /* of the graph in the store */
    /* row number -> document row number, sorted by row (for filters) */
    long long *ns, *docs;
    size_t count;
    long long docs_generation;
    sl_value *doclist;      /* sl_store_kb_docs, NULL until loaded */
    sl_map by_id;           /* document id -> its entry in doclist */
} cache;

static const char *str_of(const sl_value *o, const char *key, const char *dflt);
static double num_of(const sl_value *o, const char *key, double dflt);

struct sl_kb {
    sl_kb_env env;
    pthread_mutex_t mu;   /* the caches */
    cache *caches;
    pthread_cond_t built; /* a background build ended (mu) */
    int building;         /* background builds running (mu) */
    bool closing;
};

void sl_kb_limits_default(sl_kb_limits *l)
{
    memset(l, 0, sizeof *l);
    l->max_input = (size_t)64 << 20;
    l->max_chunks = 200000;
    l->embed_batch = SL_EMBED_BATCH;
    l->extract_timeout_s = 60;
    l->extract_memory = (size_t)1 << 30;
    l->extract_max_output = (size_t)64 << 20;
}

void sl_kb_limits_from(sl_kb_limits *kl, const struct sl_limits *l)
{
    kl->max_input = l->knowledge_max_input;
    kl->max_chunks = l->knowledge_max_chunks;
    kl->embed_batch = (size_t)l->knowledge_embed_batch;
    kl->extract_timeout_s = l->extract_timeout_s;
    kl->extract_memory = l->extract_max_memory;
    kl->extract_max_output = l->extract_max_output;
}

sl_kb *sl_kb_open(const sl_kb_env *env, sl_err *err)
{
    if (!env || !env->store) {
        sl_err_set(err, SL_EINVAL, "knowledge: no store");
        return NULL;
    }
    sl_kb *k = sl_xcalloc(1, sizeof *k);
    k->env = *env;
    if (!k->env.limits.max_input && !k->env.limits.max_chunks)
        sl_kb_limits_default(&k->env.limits);
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->built, NULL);
    return k;
}

static void cache_vectors_free(cache *c)
{
    sl_vindex_free(c->ix);
    free(c->ns);
    free(c->docs);
    c->ix = NULL;
    c->ns = c->docs = NULL;
    c->count = 0;
}

static void cache_free(cache *c)
{
    if (!c)
        return;
    cache_vectors_free(c);
    json_decref(c->doclist);
    sl_map_release(&c->by_id);
    free(c->kb_id);
    free(c);
}

/* The cache of a knowledge base (k->mu held), its documents fresh. */
static cache *cache_of(sl_kb *k, const char *kid, const sl_value *row)
{
    cache *c = k->caches;
    while (c && strcmp(c->kb_id, kid))
        c = c->next;
    if (!c) {
        c = sl_xcalloc(1, sizeof *c);
        c->kb_id = sl_xstrdup(kid);
        sl_map_init(&c->by_id);
        c->next = k->caches;
        k->caches = c;
    }
    long long gen = (long long)num_of(row, "generation", 0);
    if (!c->doclist || c->docs_generation != gen) {
        json_decref(c->doclist);
        sl_map_release(&c->by_id);
        sl_map_init(&c->by_id);
        c->doclist = sl_store_kb_docs(k->env.store, kid);
        c->docs_generation = gen;
        size_t i;
        sl_value *d;
        sl_map_reserve(&c->by_id, json_array_size(c->doclist));
        json_array_foreach(c->doclist, i, d)
            sl_map_put(&c->by_id, str_of(d, "id", ""), d);
    }
    return c;
}

void sl_kb_wait(sl_kb *k)
{
    pthread_mutex_lock(&k->mu);
    while (k->building)
        pthread_cond_wait(&k->built, &k->mu);
    pthread_mutex_unlock(&k->mu);
}

void sl_kb_close(sl_kb *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->closing = true;   /* a build that ends now keeps nothing */
    pthread_mutex_unlock(&k->mu);
    sl_kb_wait(k);
    for (cache *c = k->caches, *n; c; c = n) {
        n = c->next;
        cache_free(c);
    }
    pthread_cond_destroy(&k->built);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

/* ---- small helpers ---- */

static const char *str_of(const sl_value *o, const char *key, const char *dflt)
{
    const sl_value *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static double num_of(const sl_value *o, const char *key, double dflt)
{
    const sl_value *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static bool bool_of(const sl_value *o, const char *key, bool dflt)
{
    const sl_value *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static char *new_id(sl_err *err)
{
    char id[37];
    return sl_rand_uuid(id, err) ? NULL : sl_xstrdup(id);
}

/* Dify's index_node_hash: sha256 of the text and "None". */
static void text_hash(const char *text, char out[65])
{
    size_t n = strlen(text);
    char *t = sl_xmalloc(n + 5);
    memcpy(t, text, n);
    memcpy(t + n, "None", 5);
    sl_sha256_hex(t, n + 4, out);
    free(t);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* A chunk's word count and index_node_hash: both follow from its text,
 * so a chunk's info keeps them only when it was written before they were
 * left out (Dify's word_count is the text's length in characters). */
static long long chunk_words(const sl_value *info, const char *content)
{
    const sl_value *w = json_object_get(info, "word_count");
    return w ? (long long)json_number_value(w) : (long long)utf8_chars(content);
}

static void chunk_hash(const sl_value *info, const char *content, char out[65])
{
    const char *h = json_string_value(json_object_get(info, "hash"));
    if (h && strlen(h) == 64)
        memcpy(out, h, 65);
    else
        text_hash(content, out);
}

/* ---- the keyword side (kwindex.h) ---- */

/* The keyword index of a chunk list: its indexed chunks by position. */
static sl_kw_doc *kw_of(const sl_store_chunk *v, size_t n)
{
    sl_kw_doc *d = sl_kw_doc_new();
    for (size_t i = 0; i < n; i++)
        if (v[i].fts)
            sl_kw_doc_add(d, (long long)i, v[i].fts);
    return d;
}

typedef struct {
    size_t nterms;
    long long *df;             /* per term: chunks holding it, over the knowledge base */
    struct kw_row {
        size_t term;
        long long df, base;
        unsigned char *data;
        size_t size;
    } *rows;
    size_t nrows, cap;
} kw_fetch;

static void kw_row_put(size_t i, long long df, long long base, const void *data, size_t size,
                       void *ud)
{
    kw_fetch *f = ud;
    if (f->nrows == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 64;
        f->rows = sl_xrealloc(f->rows, f->cap * sizeof *f->rows);
    }
    unsigned char *copy = sl_xmalloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    f->rows[f->nrows++] = (struct kw_row){i, df, base, copy, size};
    f->df[i] += df;
}

/* The best limit chunks for the query's words by BM25 (FTS5's sign: lower
 * is better), any word enough.
 *
 * Words in more than half of the chunks (BM25 gives them a weight of 1e-6)
 * are left out and, while a rarer word remains, so are words in more than
 * one chunk in twenty: scoring every chunk of such a word is most of a
 * query's time and moves its ranking little; this is Elasticsearch's
 * cutoff_frequency, without its second pass.  When every word is that
 * common, the rarest is kept. */
static int keyword_search(sl_kb *k, const char *kid, const char *query, size_t limit,
                          long long **ns, double **bm25, size_t *count, sl_err *err)
{
    *ns = NULL;
    *bm25 = NULL;
    *count = 0;
    char **w;
    size_t n = sl_kw_words(query, &w, MAX_QUERY_TERMS);
    if (!n) {
        free(w);
        return 0;
    }
    kw_fetch f = {.nterms = n, .df = sl_xcalloc(n, sizeof(long long))};
    long long rows = 0, tokens = 0, *skip = NULL;
    size_t nskip = 0;
    int rc = sl_store_kb_postings(k->env.store, kid, (const char *const *)w, n, kw_row_put, &f,
                                  &rows, &tokens, &skip, &nskip, err);
    sl_kw_scorer *sc = sl_kw_scorer_new(rows, tokens);
    if (!rc && nskip) {
        /* documents gone since their postings were merged: a word's count
         * is of the chunks that are left */
        sl_kw_scorer_skip(sc, skip, nskip);
        memset(f.df, 0, n * sizeof *f.df);
        for (size_t r = 0; r < f.nrows; r++) {
            long long live = sl_kw_scorer_live(sc, f.rows[r].base, f.rows[r].data, f.rows[r].size);
            f.df[f.rows[r].term] += live > 0 ? live : 0;
        }
    }
    if (!rc && rows > 0) {
        bool *use = sl_xcalloc(n, sizeof *use);
        size_t kept = 0, rarest = 0;
        long long best = -1;
        for (size_t i = 0; i < n; i++) {
            if (f.df[i] > 0 && (best < 0 || f.df[i] < best))
                best = f.df[i], rarest = i;
            use[i] = f.df[i] > 0 && f.df[i] * 20 <= rows;
            kept += use[i];
        }
        if (!kept && best > 0)
            use[rarest] = true;
        for (size_t r = 0; !rc && r < f.nrows; r++) {
            const struct kw_row *x = &f.rows[r];
            if (use[x->term] && sl_kw_scorer_add(sc, f.df[x->term], x->base, x->data, x->size))
                rc = sl_err_set(err, SL_EPARSE,
                                "the keyword index of knowledge base %s is damaged (term '%s');"
                                " add its documents again",
                                kid, w[x->term]);
        }
        if (!rc)
            *count = sl_kw_scorer_top(sc, limit, ns, bm25);
        free(use);
    }
    sl_kw_scorer_free(sc);
    free(skip);
    for (size_t r = 0; r < f.nrows; r++)
        free(f.rows[r].data);
    free(f.rows);
    free(f.df);
    sl_kw_words_free(w, n);
    return rc;
}

/* Knowledge bases made before sluice kept its own keyword index: every
 * document indexed again from its chunks, once (store.h). */
static void reindex_chunk(long long pos, const char *content, void *ud)
{
    sl_kw_doc_add(ud, pos, content);
}

static int reindex(sl_kb *k, const char *kid, sl_err *err)
{
    static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&one);
    sl_value *row = sl_store_kb_get(k->env.store, kid);
    int rc = 0;
    if (row && num_of(row, "kw", 1) == 0) {
        sl_value *docs = sl_store_kb_docs(k->env.store, kid), *d;
        size_t i;
        json_array_foreach(docs, i, d) {
            sl_kw_doc *kd = sl_kw_doc_new();
            const char *did = str_of(d, "id", "");
            rc = sl_store_kb_indexed(k->env.store, kid, did, reindex_chunk, kd, err) ||
                 sl_store_kb_kw_put(k->env.store, kid, did, sl_kw_doc_done(kd), err);
            sl_kw_doc_free(kd);
            if (rc)
                break;
        }
        json_decref(docs);
        if (!rc)
            rc = sl_store_kb_kw_done(k->env.store, kid, err);
        if (rc)
            sl_err_prefix(err, "indexing knowledge base %s again for keyword search", kid);
    }
    json_decref(row);
    pthread_mutex_unlock(&one);
    return rc;
}

/* BM25 (FTS5's, lower is better) to 0..1: s / (s + 1) of s = -bm25, so
 * one strong match scores about 0.7-0.9 whatever else the query finds. */
static double bm25_norm(double bm25)
{
    double s = -bm25;
    return s <= 0 ? 0 : s / (s + 1.0);
}

/* ---- knowledge bases ----
 * A knowledge base's info: {description, indexing_technique,
 * embedding_model, embedding_model_provider, dims, retrieval_model,
 * process_rule, doc_form, fields: [{id, name, type}],
 * built_in_field_enabled, updated_at}. */

static sl_value *default_retrieval(const char *technique)
{
    return json_pack("{s:s, s:b, s:n, s:{s:s, s:s}, s:n, s:i, s:b, s:n}", "search_method",
                     !strcmp(technique, "economy") ? "keyword_search" : "semantic_search",
                     "reranking_enable", false, "reranking_mode", "reranking_model",
                     "reranking_provider_name", "", "reranking_model_name", "", "weights",
                     "top_k", 4, "score_threshold_enabled", false, "score_threshold");
}

/* The dataset object Dify's API shows for a store row. */
static sl_value *dataset_of(sl_kb *k, const sl_value *row)
{
    const sl_value *info = json_object_get(row, "info");
    const char *id = str_of(row, "id", "");
    sl_value *docs = sl_store_kb_docs(k->env.store, id);
    long long words = 0, ndocs = (long long)json_array_size(docs), available = 0;
    size_t i;
    sl_value *d;
    json_array_foreach(docs, i, d) {
        const sl_value *di = json_object_get(d, "info");
        words += (long long)num_of(di, "word_count", 0);
        available += bool_of(di, "enabled", true) && !bool_of(di, "archived", false) &&
                     !strcmp(str_of(di, "indexing_status", ""), "completed");
    }
    json_decref(docs);
    const char *tech = str_of(info, "indexing_technique", "high_quality");
    sl_value *rm = json_object_get(info, "retrieval_model");
    rm = json_is_object(rm) ? json_incref(rm) : default_retrieval(tech);
    if (!strcmp(tech, "economy"))
        json_object_set_new(rm, "search_method", json_string("keyword_search"));
    sl_value *fields = json_object_get(info, "fields");
    long long created = (long long)num_of(row, "created_at", 0);
    sl_value *o = json_pack(
        "{s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:s, s:s, s:I, s:s, s:I}", "id", id,
        "name", json_incref(json_object_get(row, "name")), "description",
        str_of(info, "description", ""), "provider", "vendor", "permission",
        str_of(info, "permission", "only_me"), "data_source_type", "upload_file",
        "indexing_technique", tech, "app_count", 0, "document_count", (json_int_t)ndocs,
        "word_count", (json_int_t)words, "created_by", "sluice", "author_name", "sluice",
        "created_at", (json_int_t)created, "updated_by", "sluice", "updated_at",
        (json_int_t)num_of(info, "updated_at", (double)created));
    json_object_set_new(o, "embedding_model", json_string(str_of(info, "embedding_model", "")));
    json_object_set_new(o, "embedding_model_provider",
                        json_string(str_of(info, "embedding_model_provider", "")));
    json_object_set_new(o, "embedding_available", json_boolean(strcmp(tech, "economy") != 0));
    json_object_set_new(o, "retrieval_model_dict", rm);
    json_object_set_new(o, "tags", json_array());
    json_object_set_new(o, "doc_form", json_string(str_of(info, "doc_form", "text_model")));
    json_object_set_new(o, "external_knowledge_info", json_null());
    json_object_set_new(o, "external_retrieval_model", json_null());
    json_object_set_new(o, "doc_metadata",
                        json_is_array(fields) ? json_deep_copy(fields) : json_array());
    json_object_set_new(o, "built_in_field_enabled",
                        json_boolean(bool_of(info, "built_in_field_enabled", false)));
    json_object_set_new(o, "total_documents", json_integer(ndocs));
    json_object_set_new(o, "total_available_documents", json_integer(available));
    json_object_set_new(o, "enable_api", json_boolean(true));
    json_object_set_new(o, "chunk_structure", json_string(str_of(info, "doc_form", "text_model")));
    json_object_set_new(o, "embedding_dims", json_integer((json_int_t)num_of(info, "dims", 0)));
    return o;
}

static int check_name(const char *name, sl_err *err)
{
    size_t n = name ? utf8_chars(name) : 0;
    if (n < 1 || n > 40)
        return sl_err_set(err, SL_EINVAL, "name: a knowledge base's name has 1 to 40 characters");
    return 0;
}

/* Checks and copies the settings a spec or patch gives into info. */
static int apply_spec(sl_kb *k, sl_value *info, const sl_value *spec, bool creating, sl_err *err)
{
    const sl_value *v;
    if ((v = json_object_get(spec, "description")) && !json_is_null(v)) {
        if (!json_is_string(v) || utf8_chars(json_string_value(v)) > 400)
            return sl_err_set(err, SL_EINVAL, "description: a text of at most 400 characters");
        json_object_set(info, "description", (sl_value *)v);
    }
    if ((v = json_object_get(spec, "indexing_technique")) && !json_is_null(v)) {
        const char *t = json_string_value(v);
        if (!t || (strcmp(t, "high_quality") && strcmp(t, "economy")))
            return sl_err_set(err, SL_EINVAL,
                              "indexing_technique: 'high_quality' or 'economy', not %s",
                              t ? t : "a non-text value");
        json_object_set(info, "indexing_technique", (sl_value *)v);
    }
    const char *fields[] = {"embedding_model", "embedding_model_provider", "permission"};
    for (size_t i = 0; i < 3; i++)
        if ((v = json_object_get(spec, fields[i])) && !json_is_null(v)) {
            if (!json_is_string(v) || json_string_length(v) > 200)
                return sl_err_set(err, SL_EINVAL, "%s: a text", fields[i]);
            json_object_set(info, fields[i], (sl_value *)v);
        }
    if ((v = json_object_get(spec, "retrieval_model")) && !json_is_null(v)) {
        const char *m = str_of(v, "search_method", NULL);
        if (!json_is_object(v) || !m ||
            (strcmp(m, "semantic_search") && strcmp(m, "full_text_search") &&
             strcmp(m, "hybrid_search") && strcmp(m, "keyword_search")))
            return sl_err_set(err, SL_EINVAL,
                              "retrieval_model.search_method: semantic_search, full_text_search,"
                              " hybrid_search or keyword_search");
        json_object_set_new(info, "retrieval_model", json_deep_copy(v));
    }
    if ((v = json_object_get(spec, "process_rule")) && !json_is_null(v)) {
        sl_split_rule r;
        if (sl_split_rule_read(v, &r, err))
            return sl_err_prefix(err, "process_rule");
        json_object_set_new(info, "process_rule", json_deep_copy(v));
    }
    if ((v = json_object_get(spec, "doc_form")) && !json_is_null(v)) {
        const char *f = json_string_value(v);
        if (!f || (strcmp(f, "text_model") && strcmp(f, "hierarchical_model")))
            return sl_err_set(err, SL_EINVAL,
                              "doc_form: 'text_model' or 'hierarchical_model' (sluice does not"
                              " make question-answer chunks)");
        json_object_set(info, "doc_form", (sl_value *)v);
    }
    const char *tech = str_of(info, "indexing_technique", NULL);
    if (creating && !tech)
        json_object_set_new(info, "indexing_technique",
                            json_string(str_of(info, "embedding_model", NULL) ? "high_quality"
                                                                             : "economy"));
    tech = str_of(info, "indexing_technique", "economy");
    if (!strcmp(tech, "high_quality")) {
        const char *model = str_of(info, "embedding_model", NULL);
        if (!model || !*model)
            return sl_err_set(err, SL_EINVAL,
                              "No Embedding Model available. Name one (embedding_model and"
                              " embedding_model_provider; `sluice kb create NAME --embedding"
                              " PROVIDER/MODEL`), or choose indexing_technique 'economy'.");
        const char *real;
        sl_err e2 = {0};
        if (!sl_config_offline(k->env.config) &&
            !sl_config_resolve(k->env.config, str_of(info, "embedding_model_provider", ""), model,
                               &real, &e2))
            return sl_err_set(err, SL_EINVAL, "embedding model %s: %s", model, e2.msg);
    }
    return 0;
}

int sl_kb_create(sl_kb *k, const sl_value *spec, sl_value **out, sl_err *err)
{
    *out = NULL;
    const char *name = str_of(spec, "name", NULL);
    if (check_name(name, err))
        return -1;
    sl_value *have = sl_store_kb_get(k->env.store, name);
    if (have) {
        json_decref(have);
        return sl_err_set(err, SL_EINVAL,
                          "The dataset name already exists. Please modify your dataset name.");
    }
    sl_value *info = json_object();
    char *id = NULL;
    int rc = apply_spec(k, info, spec, true, err);
    if (!rc && !(id = new_id(err)))
        rc = -1;
    if (!rc) {
        json_object_set_new(info, "updated_at", json_integer((json_int_t)time(NULL)));
        rc = sl_store_kb_add(k->env.store, id, name, info, err);
    }
    if (!rc) {
        sl_value *row = sl_store_kb_get(k->env.store, id);
        *out = row ? dataset_of(k, row) : NULL;
        json_decref(row);
    }
    free(id);
    json_decref(info);
    return rc;
}

sl_value *sl_kb_list(sl_kb *k, const char *keyword, int page, int limit, long long *total)
{
    sl_value *rows = sl_store_kb_list(k->env.store), *out = json_array();
    size_t i;
    sl_value *r;
    long long n = 0;
    if (page < 1)
        page = 1;
    if (limit < 1)
        limit = 20;
    json_array_foreach(rows, i, r) {
        if (keyword && *keyword && !strstr(str_of(r, "name", ""), keyword))
            continue;
        if (n >= (long long)(page - 1) * limit && n < (long long)page * limit)
            json_array_append_new(out, dataset_of(k, r));
        n++;
    }
    json_decref(rows);
    if (total)
        *total = n;
    return out;
}

sl_value *sl_kb_get(sl_kb *k, const char *id_or_name, sl_err *err)
{
    sl_value *row = sl_store_kb_get(k->env.store, id_or_name);
    if (!row) {
        sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
        return NULL;
    }
    sl_value *d = dataset_of(k, row);
    json_decref(row);
    return d;
}

/* The store row of a knowledge base (by id or name), or NULL with err. */
static int reindex(sl_kb *k, const char *kid, sl_err *err);

static sl_value *kb_row(sl_kb *k, const char *id, sl_err *err)
{
    sl_value *row = id ? sl_store_kb_get(k->env.store, id) : NULL;
    if (!row)
        sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
    if (row && num_of(row, "kw", 1) == 0) {
        /* made before sluice kept its own keyword index: indexed now */
        char *kid = sl_xstrdup(str_of(row, "id", ""));
        json_decref(row);
        row = reindex(k, kid, err) ? NULL : sl_store_kb_get(k->env.store, kid);
        free(kid);
    }
    return row;
}

int sl_kb_update(sl_kb *k, const char *id, const sl_value *patch, sl_value **out, sl_err *err)
{
    *out = NULL;
    sl_value *row = kb_row(k, id, err);
    if (!row)
        return -1;
    const char *name = str_of(patch, "name", NULL);
    sl_value *info = json_deep_copy(json_object_get(row, "info"));
    int rc = name ? check_name(name, err) : 0;
    if (!rc && name && strcmp(name, str_of(row, "name", ""))) {
        sl_value *have = sl_store_kb_get(k->env.store, name);
        if (have)
            rc = sl_err_set(err, SL_EINVAL,
                            "The dataset name already exists. Please modify your dataset name.");
        json_decref(have);
    }
    /* the embedding model of a knowledge base with vectors stays */
    if (!rc && num_of(info, "dims", 0) > 0 &&
        ((str_of(patch, "embedding_model", NULL) &&
          strcmp(str_of(patch, "embedding_model", ""), str_of(info, "embedding_model", ""))) ||
         (str_of(patch, "indexing_technique", NULL) &&
          strcmp(str_of(patch, "indexing_technique", ""), str_of(info, "indexing_technique", "")))))
        rc = sl_err_set(err, SL_EINVAL,
                        "the embedding model of a knowledge base that has vectors cannot change;"
                        " make a new knowledge base and add the documents there");
    if (!rc)
        rc = apply_spec(k, info, patch, false, err);
    if (!rc) {
        json_object_set_new(info, "updated_at", json_integer((json_int_t)time(NULL)));
        rc = sl_store_kb_set(k->env.store, str_of(row, "id", ""), name, info, err);
    }
    if (!rc)
        *out = sl_kb_get(k, str_of(row, "id", ""), err);
    json_decref(info);
    json_decref(row);
    return rc || *out ? rc : -1;
}

int sl_kb_delete(sl_kb *k, const char *id, sl_err *err)
{
    sl_value *row = kb_row(k, id, err);
    if (!row)
        return -1;
    int rc = sl_store_kb_delete(k->env.store, str_of(row, "id", ""), err);
    const char *key = str_of(json_object_get(row, "info"), "index_blob", NULL),
               *ids = str_of(json_object_get(row, "info"), "index_ids_blob", NULL);
    if (!rc && key)
        sl_store_blob_delete(k->env.store, key, NULL);
    if (!rc && ids)
        sl_store_blob_delete(k->env.store, ids, NULL);
    json_decref(row);
    return rc;
}

/* ---- documents ----
 * A document's info: {name, source, hash, position, indexing_status,
 * error, enabled, archived, metadata {name: value}, process_rule,
 * doc_form, word_count, tokens, batch, created_from, completed_at,
 * updated_at, size}. */

static const char *display_status(const sl_value *info)
{
    const char *st = str_of(info, "indexing_status", "completed");
    if (bool_of(info, "archived", false))
        return "archived";
    if (!strcmp(st, "completed"))
        return bool_of(info, "enabled", true) ? "available" : "disabled";
    if (!strcmp(st, "waiting"))
        return "queuing";
    if (!strcmp(st, "error") || !strcmp(st, "paused"))
        return st;
    return "indexing";
}

/* Dify's document object for a store row (detail adds the rule and
 * counts). */
static sl_value *document_of(const sl_value *kbinfo, const sl_value *row, bool detail)
{
    const sl_value *info = json_object_get(row, "info");
    long long created = (long long)num_of(row, "created_at", 0);
    sl_value *o = json_pack("{s:O, s:I, s:s, s:{s:s}, s:n, s:O, s:s, s:s, s:I, s:I, s:s}", "id",
                            json_object_get(row, "id"), "position",
                            (json_int_t)num_of(info, "position", 1), "data_source_type",
                            "upload_file", "data_source_info", "upload_file_id",
                            str_of(row, "id", ""), "dataset_process_rule_id", "name",
                            json_object_get(info, "name"), "created_from",
                            str_of(info, "created_from", "api"), "created_by", "sluice",
                            "created_at", (json_int_t)created, "tokens",
                            (json_int_t)num_of(info, "tokens", 0), "indexing_status",
                            str_of(info, "indexing_status", "completed"));
    const sl_value *e = json_object_get(info, "error");
    json_object_set_new(o, "error", json_is_string(e) ? json_incref((sl_value *)e) : json_null());
    json_object_set_new(o, "enabled", json_boolean(bool_of(info, "enabled", true)));
    json_object_set_new(o, "disabled_at", json_null());
    json_object_set_new(o, "disabled_by", json_null());
    json_object_set_new(o, "archived", json_boolean(bool_of(info, "archived", false)));
    json_object_set_new(o, "display_status", json_string(display_status(info)));
    json_object_set_new(o, "word_count", json_integer((json_int_t)num_of(info, "word_count", 0)));
    json_object_set_new(o, "hit_count", json_integer(0));
    json_object_set_new(o, "doc_form", json_string(str_of(info, "doc_form", "text_model")));
    /* [{id, name, type, value}] of the knowledge base's fields the document has */
    sl_value *meta = json_array(), *vals = json_object_get(info, "metadata");
    size_t i;
    sl_value *f;
    json_array_foreach(json_object_get(kbinfo, "fields"), i, f) {
        const sl_value *v = json_object_get(vals, str_of(f, "name", ""));
        if (v)
            json_array_append_new(meta, json_pack("{s:O, s:O, s:O, s:O}", "id",
                                                  json_object_get(f, "id"), "name",
                                                  json_object_get(f, "name"), "type",
                                                  json_object_get(f, "type"), "value", v));
    }
    json_object_set_new(o, "doc_metadata", meta);
    json_object_set_new(o, "batch", json_string(str_of(info, "batch", "")));
    if (detail) {
        long long segs = (long long)num_of(row, "segments", 0);
        long long words = (long long)num_of(info, "word_count", 0);
        const sl_value *rule = json_object_get(info, "process_rule");
        json_object_set_new(o, "document_process_rule",
                            rule ? json_deep_copy(rule) : json_pack("{s:s}", "mode", "automatic"));
        json_object_set_new(o, "dataset_process_rule",
                            rule ? json_deep_copy(rule) : json_pack("{s:s}", "mode", "automatic"));
        json_object_set_new(o, "completed_at",
                            json_integer((json_int_t)num_of(info, "completed_at", (double)created)));
        json_object_set_new(o, "updated_at",
                            json_integer((json_int_t)num_of(info, "updated_at", (double)created)));
        json_object_set_new(o, "indexing_latency", json_real(num_of(info, "latency", 0)));
        json_object_set_new(o, "doc_language", json_string("English"));
        json_object_set_new(o, "doc_type", json_null());
        json_object_set_new(o, "segment_count", json_integer(segs));
        json_object_set_new(o, "average_segment_length", json_integer(segs ? words / segs : 0));
        json_object_set_new(o, "source", json_string(str_of(info, "source", "")));
    }
    return o;
}

/* The document's text: text as given, or the file's, extracted. */
static int doc_text(sl_kb *k, const sl_kb_doc_in *in, sl_buf *out, sl_err *err)
{
    if (in->text) {
        size_t n = in->len ? in->len : strlen(in->text);
        if (k->env.limits.max_input && n > k->env.limits.max_input)
            return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                                "the document '%s' has %zu bytes of text, over"
                                " knowledge_max_input (%zu)",
                                in->name, n, k->env.limits.max_input);
        return sl_buf_add(out, in->text, n) ? sl_err_set(err, SL_ENOMEM, "out of memory") : 0;
    }
    const char *dot = in->name ? strrchr(in->name, '.') : NULL;
    sl_doc_kind kind = sl_extract_kind(dot, in->mime, err);
    if (kind == SL_DOC_UNKNOWN)
        return sl_err_prefix(err, "document '%s'", in->name);
    if (kind == SL_DOC_TEXT) {
        if (k->env.limits.max_input && in->len > k->env.limits.max_input)
            return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                                "the document '%s' has %zu bytes of text, over"
                                " knowledge_max_input (%zu)",
                                in->name, in->len, k->env.limits.max_input);
        /* plain text needs no reader process: it is checked as UTF-8 and kept */
        if (!sl_utf8_valid(in->bytes ? in->bytes : "", in->len))
            return sl_err_set(err, SL_EPARSE, "document '%s': the text is not valid UTF-8",
                              in->name);
        return sl_buf_add(out, in->bytes, in->len) ? sl_err_set(err, SL_ENOMEM, "out of memory")
                                                   : 0;
    }
    sl_extract_run r;
    sl_extract_run_default(&r);
    r.timeout_s = k->env.limits.extract_timeout_s;
    r.memory_bytes = k->env.limits.extract_memory;
    r.lim.max_output = k->env.limits.extract_max_output;
    r.stop = in->cancelled;
    r.ud = in->ud;
    if (sl_extract_isolated(kind, in->bytes, in->len, &r, out, err))
        return sl_err_prefix(err, "document '%s'", in->name);
    if (out->toobig)
        return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                            "the text of document '%s' is over knowledge_max_input (%zu bytes)",
                            in->name, k->env.limits.max_input);
    return 0;
}

/* A batch name as Dify makes them: the time and six random digits. */
static void batch_name(char out[48])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    unsigned char r[4] = {0};
    sl_rand_bytes(r, sizeof r, NULL);
    unsigned v = ((unsigned)r[0] << 16 | (unsigned)r[1] << 8 | r[2]) % 900000 + 100000;
    snprintf(out, 48, "%04d%02d%02d%02d%02d%02d%06u", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, v);
}

typedef struct {
    sl_store_chunk *v;
    char **owned;       /* strings to free */
    sl_value **infos;
    size_t n, alloc, nowned;
    unsigned char rnd[16 * 64];   /* randomness for ids, drawn 64 at a time */
    size_t rnd_used;
    /* lazy (a document sl_kb_add writes whole): no info objects; their
     * fields wait here and become JSON text once the chunks are final,
     * in the preparer (cl_infos_text) */
    bool lazy;
    struct cl_meta {
        long long created;
        bool indexed;
    } *meta;
} chunk_list;

/* A UUID v4 from the list's pool (one getrandom per 64 ids). */
static void uuid_next(chunk_list *cl, char out[37])
{
    if (!cl->rnd_used || cl->rnd_used >= sizeof cl->rnd) {
        if (sl_rand_bytes(cl->rnd, sizeof cl->rnd, NULL))
            memset(cl->rnd, 0, sizeof cl->rnd);
        cl->rnd_used = 0;
    }
    unsigned char *b = cl->rnd + cl->rnd_used;
    cl->rnd_used += 16;
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80);
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        out[k++] = hex[b[i] >> 4];
        out[k++] = hex[b[i] & 15];
    }
    out[k] = 0;
}

static void cl_add(chunk_list *cl, long parent, int position, const char *content, bool indexed)
{
    if (cl->n == cl->alloc) {
        cl->alloc = cl->alloc ? cl->alloc * 2 : 64;
        cl->v = sl_xrealloc(cl->v, cl->alloc * sizeof *cl->v);
        cl->infos = sl_xrealloc(cl->infos, cl->alloc * sizeof *cl->infos);
        cl->owned = sl_xrealloc(cl->owned, cl->alloc * 3 * sizeof *cl->owned);
        if (cl->lazy)
            cl->meta = sl_xrealloc(cl->meta, cl->alloc * sizeof *cl->meta);
    }
    char id[37] = "";
    uuid_next(cl, id);
    char *idc = sl_xstrdup(id);
    const char *fts = indexed ? content : NULL;   /* kwindex.h tokenizes it */
    cl->owned[cl->nowned++] = idc;
    sl_value *info = NULL;
    if (cl->lazy) {
        struct cl_meta *m = &cl->meta[cl->n];
        m->created = (long long)time(NULL);
        m->indexed = false;
    } else {
        /* no word_count or hash: chunk_words, chunk_hash */
        info = json_pack("{s:b, s:I}", "enabled", true, "created_at", (json_int_t)time(NULL));
    }
    cl->infos[cl->n] = info;
    cl->v[cl->n] = (sl_store_chunk){.id = idc, .parent = parent, .position = position,
                                    .content = content, .fts = fts, .info = info, .vec = NULL};
    cl->n++;
}

static void cl_release(chunk_list *cl)
{
    for (size_t i = 0; i < cl->nowned; i++)
        free(cl->owned[i]);
    for (size_t i = 0; i < cl->n; i++)
        json_decref(cl->infos[i]);
    free(cl->owned);
    free(cl->infos);
    free(cl->meta);
    free(cl->v);
}

/* Marks chunk c found by search (its info's "indexed"). */
static void cl_indexed(chunk_list *cl, size_t c)
{
    if (cl->infos[c])
        json_object_set_new(cl->infos[c], "indexed", json_true());
    else if (cl->lazy)
        cl->meta[c].indexed = true;
}

/* A lazy list's infos as the JSON text the store keeps, each chunk's
 * {enabled, created_at[, indexed]} (its word count and hash follow from
 * its text: chunk_words, chunk_hash). */
static void cl_infos_text(chunk_list *cl)
{
    if (!cl->lazy)
        return;
    /* all of them in one block, each NUL-terminated: at most 66 bytes
     * (a 19-digit number) */
    size_t each = 80, at = 0;
    char *block = sl_xmalloc(cl->n * each + 1);
    cl->owned = sl_xrealloc(cl->owned, (cl->nowned + 2) * sizeof *cl->owned);
    cl->owned[cl->nowned++] = block;
    for (size_t c = 0; c < cl->n; c++) {
        const struct cl_meta *m = &cl->meta[c];
        int w = snprintf(block + at, each, "{\"enabled\":true,\"created_at\":%lld%s}", m->created,
                         m->indexed ? ",\"indexed\":true" : "");
        if (w < 0 || (size_t)w >= each)
            SL_BUG("a chunk's info is longer than its room");
        cl->v[c].info_json = block + at;
        at += (size_t)w + 1;
    }
}

typedef struct {
    const sl_kb_doc_in *in;
    size_t base, total;
} embed_progress;

static void on_embedded(size_t done, size_t total, void *ud)
{
    embed_progress *p = ud;
    (void)total;
    if (p->in->progress)
        p->in->progress("embedding", p->base + done, p->total, p->in->ud);
}

static bool embed_cancelled(void *ud)
{
    embed_progress *p = ud;
    return p->in->cancelled && p->in->cancelled(p->in->ud);
}

/* The endpoint of the knowledge base's embedding model, with its name there. */
static const sl_llm_endpoint *embed_endpoint(sl_kb *k, const sl_value *info, const char **model,
                                             sl_err *err)
{
    const char *m = str_of(info, "embedding_model", "");
    const sl_llm_endpoint *ep =
        sl_config_resolve(k->env.config, str_of(info, "embedding_model_provider", ""), m, model, err);
    if (!ep)
        sl_err_prefix(err, "embedding model %s", m);
    return ep;
}

/* Embeds texts with the knowledge base's model: vectors (n*dims, heap). */
static int embed(sl_kb *k, const sl_value *info, const char *const *texts, size_t n,
                 embed_progress *p, float **vecs, int *dims, long long *tokens, sl_err *err)
{
    const char *model;
    const sl_llm_endpoint *ep = embed_endpoint(k, info, &model, err);
    if (!ep)
        return -1;
    char *tape_model = sl_xasprintf("%s/%s", str_of(info, "embedding_model_provider", ""),
                                    str_of(info, "embedding_model", ""));
    sl_embed_opts o = {.batch = k->env.limits.embed_batch,
                       .dims = (int)num_of(info, "dims", 0),
                       /* the size of the vectors kept is checked, not asked
                        * for: some models refuse `dimensions` */
                       .dims_check_only = true,
                       .cancelled = p ? embed_cancelled : NULL,
                       .progress = p ? on_embedded : NULL,
                       .ud = p,
                       .tape_model = tape_model};
    int rc = sl_llm_embed(ep, model, texts, n, &o, k->env.tape, vecs, dims, tokens, err);
    free(tape_model);
    return rc;
}

/* A document made ready to write: everything sl_kb_add does before the
 * store's transaction, so a batch can prepare the next document while the
 * store writes this one. */
typedef struct {
    char *kid;
    sl_value *kinfo;         /* the knowledge base's info (dims may be set here) */
    sl_value *info;          /* the document's */
    char *doc_id;
    chunk_list cl;
    sl_split_chunks chunks;
    sl_split_parents parents;
    float *vecs;
    int dims;
    bool unchanged;
    sl_value *doc;           /* unchanged: the document as it is */
    sl_kw_doc *kw;           /* its keyword index, built here (off the writer) */
    const sl_store_kw *kwv;
} prepared;

static void prepared_release(prepared *p)
{
    free(p->kid);
    json_decref(p->kinfo);
    json_decref(p->info);
    free(p->doc_id);
    cl_release(&p->cl);
    sl_split_chunks_release(&p->chunks);
    sl_split_parents_release(&p->parents);
    free(p->vecs);
    json_decref(p->doc);
    sl_kw_doc_free(p->kw);
    memset(p, 0, sizeof *p);
}

/* Vectors for every indexed chunk of cl (its fts set): have[c] when the
 * caller has one (the same text's, kept), else the model's, asked for all
 * the missing ones at once.  *vecs: cl->n rows of *dims floats (malloc);
 * each indexed chunk's vec points into it and its info says "indexed". */
static int embed_missing(sl_kb *k, const sl_value *kinfo, embed_progress *ep, chunk_list *cl,
                         float *const *have, int *dims, float **vecs, long long *tokens,
                         sl_err *err)
{
    const char **texts = sl_xcalloc(cl->n + 1, sizeof *texts);
    size_t *slot = sl_xcalloc(cl->n + 1, sizeof *slot), missing = 0;
    for (size_t c = 0; c < cl->n; c++)
        if (cl->v[c].fts && !have[c]) {
            texts[missing] = cl->v[c].content;
            slot[missing++] = c;
        }
    if (ep)
        ep->total = missing;
    float *fresh = NULL;
    int d = *dims, fdims = d, rc = 0;
    if (missing && embed(k, kinfo, texts, missing, ep, &fresh, &fdims, tokens, err))
        rc = -1;
    else if (missing && d > 0 && fdims != d)
        rc = sl_err_set(err, SL_EPARSE,
                        "embedding model %s gave %d dimensions; the knowledge base has %d",
                        str_of(kinfo, "embedding_model", ""), fdims, d);
    if (!rc) {
        if (!d)
            d = fdims;
        *dims = d;
        size_t row = (size_t)(d > 0 ? d : 1);
        *vecs = sl_xcalloc(cl->n + 1, row * sizeof(float));
        for (size_t c = 0; c < cl->n; c++)
            if (have[c])
                memcpy(*vecs + c * row, have[c], row * sizeof(float));
        for (size_t t = 0; t < missing; t++)
            memcpy(*vecs + slot[t] * row, fresh + t * row, row * sizeof(float));
        for (size_t c = 0; c < cl->n; c++)
            if (cl->v[c].fts) {
                cl->v[c].vec = *vecs + c * row;
                cl_indexed(cl, c);
            }
    }
    free(fresh);
    free(texts);
    free(slot);
    return rc;
}

/* Vectors for the prepared chunks that are indexed: the replaced
 * document's for unchanged texts (by hash), the model's for the rest. */
static int prepare_vectors(sl_kb *k, const sl_kb_doc_in *in, prepared *p, const sl_value *old,
                           long long *tokens, sl_err *err)
{
    chunk_list *cl = &p->cl;
    int dims = p->dims;
    float *oldv = NULL;
    sl_value *ochunks = old && dims > 0 ? sl_store_kb_chunks(k->env.store, p->kid,
                                                             str_of(old, "id", ""), &oldv, dims)
                                        : NULL;
    /* the old chunks' vectors by hash */
    sl_map by_hash;
    sl_map_init(&by_hash);
    size_t j;
    sl_value *oc;
    json_array_foreach(ochunks, j, oc) {
        const sl_value *oi = json_object_get(oc, "info");
        if (bool_of(oi, "indexed", false)) {
            char h[65];
            chunk_hash(oi, str_of(oc, "content", ""), h);
            sl_map_put(&by_hash, h, oldv + j * (size_t)dims);
        }
    }
    float **have = sl_xcalloc(cl->n + 1, sizeof *have);
    for (size_t c = 0; c < cl->n && dims > 0 && json_array_size(ochunks); c++)
        if (cl->v[c].fts) {
            char h[65];
            text_hash(cl->v[c].content, h);
            have[c] = sl_map_get(&by_hash, h);
        }
    embed_progress ep = {.in = in};
    int rc = embed_missing(k, p->kinfo, &ep, cl, have, &dims, &p->vecs, tokens, err);
    if (!rc)
        p->dims = dims;
    sl_map_release(&by_hash);
    json_decref(ochunks);
    free(oldv);
    free(have);
    return rc;
}

/* Everything before the write: the text, its chunks, their vectors. */
static int prepare(sl_kb *k, const char *kb_id, const sl_kb_doc_in *in, prepared *p, sl_err *err)
{
    memset(p, 0, sizeof *p);
    if (!in->name || !*in->name || strlen(in->name) > 255)
        return sl_err_set(err, SL_EINVAL, "name: a document needs a name of 1 to 255 bytes");
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    p->kid = sl_xstrdup(str_of(row, "id", ""));
    p->kinfo = json_deep_copy(json_object_get(row, "info"));
    p->dims = (int)num_of(p->kinfo, "dims", 0);
    json_decref(row);
    /* metadata: only the knowledge base's fields */
    size_t i;
    sl_value *f;
    const char *mk;
    sl_value *mv;
    json_object_foreach((sl_value *)in->metadata, mk, mv) {
        bool known = false;
        json_array_foreach(json_object_get(p->kinfo, "fields"), i, f)
            known = known || !strcmp(str_of(f, "name", ""), mk);
        if (!known)
            return sl_err_set(err, SL_EINVAL,
                              "metadata '%s' is not a field of the knowledge base; add it first"
                              " (`sluice kb field add KB %s string`, or POST .../metadata)",
                              mk, mk);
    }
    if (in->progress)
        in->progress("extracting", 0, 1, in->ud);
    sl_buf text;
    sl_buf_init(&text, k->env.limits.max_input ? k->env.limits.max_input + 1 : 0);
    if (doc_text(k, in, &text, err)) {
        sl_buf_release(&text);
        return -1;
    }
    char hash[65];
    sl_sha256_hex(text.data ? text.data : "", text.len, hash);
    /* the document this one replaces: named, or the one from the same source */
    long long position = 1;
    sl_value *docs = sl_store_kb_doc_of_source(k->env.store, p->kid,
                                               in->replace_id ? NULL : in->source, &position);
    if (in->replace_id) {
        json_decref(docs);
        docs = sl_store_kb_doc(k->env.store, p->kid, in->replace_id);
    }
    sl_value *old = docs;
    int rc = 0;
    if (in->replace_id && !old)
        rc = sl_err_set(err, SL_ENOTFOUND, "Document Not Exists.");
    const sl_value *oinfo = json_object_get(old, "info");
    if (!rc && old && !in->replace_id && !strcmp(str_of(oinfo, "hash", ""), hash) &&
        !strcmp(str_of(oinfo, "indexing_status", ""), "completed") && !in->metadata) {
        p->unchanged = true;
        sl_value *full = sl_store_kb_doc(k->env.store, p->kid, str_of(old, "id", ""));
        p->doc = full ? document_of(p->kinfo, full, false) : NULL;
        json_decref(full);
        json_decref(docs);
        sl_buf_release(&text);
        return 0;
    }
    /* the rule: given, the knowledge base's, else automatic */
    const sl_value *rule =
        in->process_rule ? in->process_rule : json_object_get(p->kinfo, "process_rule");
    sl_value *auto_rule = rule ? NULL : json_pack("{s:s}", "mode", "automatic");
    if (!rule)
        rule = auto_rule;
    const char *form = in->doc_form ? in->doc_form : str_of(p->kinfo, "doc_form", "text_model");
    sl_split_rule sr;
    if (!rc && sl_split_rule_read(rule, &sr, err))
        rc = sl_err_prefix(err, "process_rule");
    if (!rc && sr.hierarchical != !strcmp(form, "hierarchical_model"))
        rc = sl_err_set(err, SL_EINVAL,
                        sr.hierarchical ? "a hierarchical process rule needs doc_form"
                                          " 'hierarchical_model'"
                                        : "doc_form 'hierarchical_model' needs a hierarchical"
                                          " process rule (mode 'hierarchical')");
    sl_buf clean;
    sl_buf_init(&clean, 0);
    if (!rc) {
        if (in->progress)
            in->progress("splitting", 0, 1, in->ud);
        sr.clean.max_input = k->env.limits.max_input;
        rc = sl_clean(text.data ? text.data : "", text.len, &sr.clean, &clean, err);
    }
    sl_buf_release(&text);
    long long words = 0, tokens = 0;
    chunk_list *cl = &p->cl;
    cl->lazy = true;
    if (!rc && !sr.hierarchical) {
        sr.split.max_chunks = k->env.limits.max_chunks;
        sr.split.max_input = k->env.limits.max_input;
        rc = sl_split(clean.data ? clean.data : "", clean.len, &sr.split, &p->chunks, err);
        for (size_t c = 0; !rc && c < p->chunks.n; c++) {
            cl_add(cl, -1, (int)c + 1, p->chunks.v[c].text, true);
            words += (long long)p->chunks.v[c].chars;
        }
    } else if (!rc) {
        sr.pc.max_chunks = k->env.limits.max_chunks;
        sr.pc.max_input = k->env.limits.max_input;
        rc = sl_split_parent_child(clean.data ? clean.data : "", clean.len, &sr.pc, &p->parents,
                                   err);
        for (size_t q = 0; !rc && q < p->parents.n; q++) {
            long pi = (long)cl->n;
            cl_add(cl, -1, (int)q + 1, p->parents.v[q].parent.text, false);
            words += (long long)p->parents.v[q].parent.chars;
            for (size_t c = 0; c < p->parents.v[q].children.n; c++)
                cl_add(cl, pi, (int)c + 1, p->parents.v[q].children.v[c].text, true);
        }
    }
    sl_buf_release(&clean);
    /* a document nothing could be found in is refused, not kept empty */
    if (!rc && !p->cl.n)
        rc = sl_err_set(err, SL_EINVAL,
                        "document '%s' has no text to index (empty, or only white space)",
                        in->name);
    if (!rc && !strcmp(str_of(p->kinfo, "indexing_technique", "economy"), "high_quality"))
        rc = prepare_vectors(k, in, p, old, &tokens, err);
    else if (!rc)
        for (size_t c = 0; c < cl->n; c++)
            if (cl->v[c].fts)
                cl_indexed(cl, c);
    if (!rc) {
        p->kw = kw_of(cl->v, cl->n);
        p->kwv = sl_kw_doc_done(p->kw);
        cl_infos_text(cl);   /* made here, off the store's writer */
    }
    char batch[48];
    if (in->batch)
        snprintf(batch, sizeof batch, "%s", in->batch);
    else
        batch_name(batch);
    if (!rc && (old ? !(p->doc_id = sl_xstrdup(str_of(old, "id", ""))) : !(p->doc_id = new_id(err))))
        rc = -1;
    if (!rc) {
        long long now = (long long)time(NULL);
        p->info = json_pack(
            "{s:s, s:s, s:s, s:b, s:b, s:O, s:s, s:I, s:I, s:s, s:s, s:I, s:I, s:I}", "name",
            in->name, "hash", hash, "indexing_status", "completed", "enabled", true, "archived",
            false, "process_rule", rule, "doc_form", form, "word_count", (json_int_t)words,
            "tokens", (json_int_t)tokens, "batch", batch, "created_from",
            in->source ? "cli" : "api", "completed_at", (json_int_t)now, "updated_at",
            (json_int_t)now, "position",
            (json_int_t)(old ? (long long)num_of(oinfo, "position", 1) : position));
        if (in->source)
            json_object_set_new(p->info, "source", json_string(in->source));
        sl_value *meta = in->metadata ? json_deep_copy(in->metadata)
                         : old        ? json_deep_copy(json_object_get(oinfo, "metadata"))
                                      : NULL;
        json_object_set_new(p->info, "metadata", json_is_object(meta) ? meta : json_object());
        if (meta && !json_is_object(meta))
            json_decref(meta);
    }
    json_decref(auto_rule);
    json_decref(docs);
    return rc;
}

/* The store's transaction for a prepared document; *doc the result. */
static int commit(sl_kb *k, const sl_kb_doc_in *in, prepared *p, sl_value **doc, sl_err *err)
{
    if (p->unchanged) {
        *doc = p->doc ? json_incref(p->doc) : NULL;
        return 0;
    }
    if (in->progress)
        in->progress("indexing", 0, p->cl.n, in->ud);
    int rc = sl_store_kb_doc_put(k->env.store, p->kid, p->doc_id, p->info, p->cl.v, p->cl.n,
                                 p->dims, p->kwv, err);
    /* the first vectors fix the knowledge base's dimensions */
    if (!rc && p->vecs && p->dims > 0) {
        sl_value *row = sl_store_kb_get(k->env.store, p->kid);
        sl_value *ki = row ? json_deep_copy(json_object_get(row, "info")) : NULL;
        if (ki && num_of(ki, "dims", 0) != p->dims) {
            json_object_set_new(ki, "dims", json_integer(p->dims));
            rc = sl_store_kb_set(k->env.store, p->kid, NULL, ki, err);
        }
        json_decref(ki);
        json_decref(row);
    }
    if (!rc) {
        sl_value *full = sl_store_kb_doc(k->env.store, p->kid, p->doc_id);
        *doc = full ? document_of(p->kinfo, full, false) : NULL;
        json_decref(full);
    }
    return rc;
}

int sl_kb_add(sl_kb *k, const char *kb_id, const sl_kb_doc_in *in, sl_value **doc,
              bool *unchanged, sl_err *err)
{
    *doc = NULL;
    prepared p;
    int rc = prepare(k, kb_id, in, &p, err);
    if (!rc)
        rc = commit(k, in, &p, doc, err);
    if (unchanged)
        *unchanged = !rc && p.unchanged;
    prepared_release(&p);
    return rc;
}

/* ---- many documents: the next ones prepared while this one is written ----
 * Documents are claimed for preparing in order, by a thread of their own
 * and by the writer whenever the document it must write next is not ready
 * yet (at the start, and whenever preparing is the slower half): the two
 * halves share both processors whichever is the heavier.  The writer
 * writes and reports them in order. */

/* Documents prepared and not yet written, at most: enough that the
 * preparing thread never waits for the writer's room (with 3 it waited a
 * fifth of the time, and the writer prepared in its place), and bounded
 * by their bytes too, so a run of large documents holds a few at most. */
#define RING 8
#define RING_BYTES ((size_t)64 << 20)

typedef struct {
    sl_kb *k;
    const char *kb_id;
    size_t n;
    const sl_kb_feed *f;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* document i in ring[i % RING] from its claim until it is written */
    struct slot {
        bool ready, loaded;
        int rc;
        size_t doc;
        sl_err err;
        sl_kb_doc_in in;
        prepared p;
    } ring[RING];
    size_t claimed;  /* documents claimed for preparing */
    size_t bytes;    /* the loaded documents' bytes, of those not yet written */
    size_t taken;    /* documents the writer has finished */
    bool stop;
} add_batch;

/* The next document to prepare, or -1 when none may be now (mu held). */
static long claim(add_batch *b)
{
    if (b->stop || b->claimed >= b->n || b->claimed >= b->taken + RING ||
        (b->claimed >= b->taken + 2 && b->bytes >= RING_BYTES))
        return -1;
    return (long)b->claimed++;
}

static void prepare_slot(add_batch *b, size_t i)
{
    struct slot *s = &b->ring[i % RING];
    memset(s, 0, sizeof *s);   /* the slot is the claimer's until ready */
    s->doc = i;
    if (b->f->load(i, &s->in, b->f->ud, &s->err)) {
        s->rc = -1;
    } else {
        s->loaded = true;
        s->rc = prepare(b->k, b->kb_id, &s->in, &s->p, &s->err);
    }
    pthread_mutex_lock(&b->mu);
    s->ready = true;
    if (s->loaded)
        b->bytes += s->in.len;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void *preparer(void *arg)
{
    add_batch *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        long i;
        while ((i = claim(b)) < 0 && !b->stop && b->claimed < b->n)
            pthread_cond_wait(&b->cv, &b->mu);
        if (i < 0)
            break;
        pthread_mutex_unlock(&b->mu);
        prepare_slot(b, (size_t)i);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

static void slot_release(add_batch *b, struct slot *s)
{
    if (s->loaded)
        b->bytes -= s->in.len;
    prepared_release(&s->p);
    if (s->loaded && b->f->unload)
        b->f->unload(s->doc, &s->in, b->f->ud);
    sl_err_clear(&s->err);
    s->ready = s->loaded = false;
}

int sl_kb_add_all(sl_kb *k, const char *kb_id, size_t n, const sl_kb_feed *f)
{
    add_batch b = {.k = k, .kb_id = kb_id, .n = n, .f = f};
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    pthread_t th;
    bool threaded = n > 1 && pthread_create(&th, NULL, preparer, &b) == 0;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct slot *s = &b.ring[i % RING];
        pthread_mutex_lock(&b.mu);
        while (!s->ready) {
            long j = claim(&b);
            if (j >= 0) {   /* not ready: prepare one meanwhile */
                pthread_mutex_unlock(&b.mu);
                prepare_slot(&b, (size_t)j);
                pthread_mutex_lock(&b.mu);
                continue;
            }
            pthread_cond_wait(&b.cv, &b.mu);
        }
        pthread_mutex_unlock(&b.mu);
        sl_value *doc = NULL;
        if (!s->rc)
            s->rc = commit(k, &s->in, &s->p, &doc, &s->err);
        failed += s->rc != 0;
        bool stop = f->done(i, s->rc, doc, !s->rc && s->p.unchanged, &s->err, f->ud);
        json_decref(doc);
        pthread_mutex_lock(&b.mu);
        slot_release(&b, s);
        b.taken = i + 1;
        b.stop = b.stop || stop;
        pthread_cond_broadcast(&b.cv);
        pthread_mutex_unlock(&b.mu);
        if (stop)
            break;
    }
    pthread_mutex_lock(&b.mu);
    b.stop = true;
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    if (threaded)
        pthread_join(th, NULL);
    /* what was prepared after a stop */
    for (size_t r = 0; r < RING; r++)
        if (b.ring[r].ready)
            slot_release(&b, &b.ring[r]);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    return failed ? -1 : 0;
}

static bool status_is(const sl_value *info, const char *status)
{
    return !status || !*status || !strcmp(display_status(info), status);
}

sl_value *sl_kb_docs(sl_kb *k, const char *kb_id, const char *keyword, const char *status,
                     int page, int limit, long long *total, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return NULL;
    sl_value *docs = sl_store_kb_docs(k->env.store, str_of(row, "id", "")), *out = json_array();
    const sl_value *kinfo = json_object_get(row, "info");
    if (page < 1)
        page = 1;
    if (limit < 1)
        limit = 20;
    long long n = 0;
    size_t i;
    sl_value *d;
    json_array_foreach(docs, i, d) {
        const sl_value *di = json_object_get(d, "info");
        if ((keyword && *keyword && !strstr(str_of(di, "name", ""), keyword)) ||
            !status_is(di, status))
            continue;
        if (n >= (long long)(page - 1) * limit && n < (long long)page * limit)
            json_array_append_new(out, document_of(kinfo, d, false));
        n++;
    }
    if (total)
        *total = n;
    json_decref(docs);
    json_decref(row);
    return out;
}

sl_value *sl_kb_doc(sl_kb *k, const char *kb_id, const char *doc_id, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return NULL;
    sl_value *d = sl_store_kb_doc(k->env.store, str_of(row, "id", ""), doc_id), *out = NULL;
    if (d)
        out = document_of(json_object_get(row, "info"), d, true);
    else
        sl_err_set(err, SL_ENOTFOUND, "Document Not Exists.");
    json_decref(d);
    json_decref(row);
    return out;
}

sl_value *sl_kb_batch(sl_kb *k, const char *kb_id, const char *batch, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return NULL;
    sl_value *docs = sl_store_kb_docs(k->env.store, str_of(row, "id", "")), *out = json_array();
    size_t i;
    sl_value *d;
    json_array_foreach(docs, i, d) {
        const sl_value *di = json_object_get(d, "info");
        if (strcmp(str_of(di, "batch", ""), batch))
            continue;
        long long done = (long long)num_of(di, "completed_at", 0);
        long long segs = (long long)num_of(d, "segments", 0);
        const sl_value *e = json_object_get(di, "error");
        json_array_append_new(
            out, json_pack("{s:O, s:s, s:I, s:I, s:I, s:I, s:I, s:n, s:O, s:n, s:I, s:I}", "id",
                           json_object_get(d, "id"), "indexing_status",
                           str_of(di, "indexing_status", "completed"), "processing_started_at",
                           (json_int_t)num_of(d, "created_at", 0), "parsing_completed_at",
                           (json_int_t)done, "cleaning_completed_at", (json_int_t)done,
                           "splitting_completed_at", (json_int_t)done, "completed_at",
                           (json_int_t)done, "paused_at", "error",
                           json_is_string(e) ? e : json_null(), "stopped_at",
                           "completed_segments", (json_int_t)segs, "total_segments",
                           (json_int_t)segs));
    }
    json_decref(docs);
    json_decref(row);
    if (!json_array_size(out)) {
        json_decref(out);
        sl_err_set(err, SL_ENOTFOUND, "Documents not found.");
        return NULL;
    }
    return out;
}

int sl_kb_doc_delete(sl_kb *k, const char *kb_id, const char *doc_id, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    int rc = sl_store_kb_doc_delete(k->env.store, str_of(row, "id", ""), doc_id, err);
    json_decref(row);
    return rc;
}

/* Changes a document's info (chunks kept); fn edits a copy. */
static int doc_edit(sl_kb *k, const char *kb_id, const char *doc_id,
                    int (*fn)(sl_value *info, const void *arg, sl_err *err), const void *arg,
                    sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    const char *kid = str_of(row, "id", "");
    sl_value *d = sl_store_kb_doc(k->env.store, kid, doc_id);
    int rc;
    if (!d) {
        rc = sl_err_set(err, SL_ENOTFOUND, "Document Not Exists.");
    } else {
        sl_value *info = json_deep_copy(json_object_get(d, "info"));
        rc = fn(info, arg, err);
        if (!rc) {
            json_object_set_new(info, "updated_at", json_integer((json_int_t)time(NULL)));
            rc = sl_store_kb_doc_put(k->env.store, kid, doc_id, info, NULL, 0, 0, NULL, err);
        }
        json_decref(info);
    }
    json_decref(d);
    json_decref(row);
    return rc;
}

static int set_status(sl_value *info, const void *arg, sl_err *err)
{
    const char *a = arg;
    if (!strcmp(a, "enable") || !strcmp(a, "disable")) {
        if (bool_of(info, "archived", false))
            return sl_err_set(err, SL_EINVAL, "The archived document is not editable.");
        json_object_set_new(info, "enabled", json_boolean(!strcmp(a, "enable")));
    } else if (!strcmp(a, "archive") || !strcmp(a, "un_archive")) {
        json_object_set_new(info, "archived", json_boolean(!strcmp(a, "archive")));
    } else {
        return sl_err_set(err, SL_EINVAL, "Invalid action.");
    }
    return 0;
}

int sl_kb_doc_status(sl_kb *k, const char *kb_id, const sl_value *doc_ids, const char *action,
                     sl_err *err)
{
    if (strcmp(action, "enable") && strcmp(action, "disable") && strcmp(action, "archive") &&
        strcmp(action, "un_archive"))
        return sl_err_set(err, SL_EINVAL, "Invalid action.");
    if (!json_is_array(doc_ids))
        return sl_err_set(err, SL_EINVAL, "document_ids: a list of document ids");
    size_t i;
    sl_value *id;
    json_array_foreach((sl_value *)doc_ids, i, id) {
        if (!json_is_string(id))
            return sl_err_set(err, SL_EINVAL, "document_ids: a list of document ids");
        if (doc_edit(k, kb_id, json_string_value(id), set_status, action, err))
            return -1;
    }
    return 0;
}

typedef struct {
    const sl_value *values;
    bool partial;
} meta_arg;

static int set_meta(sl_value *info, const void *arg, sl_err *err)
{
    (void)err;
    const meta_arg *m = arg;
    sl_value *cur = m->partial ? json_deep_copy(json_object_get(info, "metadata")) : NULL;
    if (!json_is_object(cur)) {
        json_decref(cur);
        cur = json_object();
    }
    json_object_update(cur, (sl_value *)m->values);
    json_object_set_new(info, "metadata", cur);
    return 0;
}

int sl_kb_doc_meta(sl_kb *k, const char *kb_id, const char *doc_id, const sl_value *values,
                   bool partial, sl_err *err)
{
    if (!json_is_object(values))
        return sl_err_set(err, SL_EINVAL, "metadata: an object of field names and values");
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    const char *name;
    sl_value *v;
    int rc = 0;
    json_object_foreach((sl_value *)values, name, v) {
        bool known = false;
        size_t i;
        sl_value *f;
        json_array_foreach(json_object_get(json_object_get(row, "info"), "fields"), i, f)
            known = known || !strcmp(str_of(f, "name", ""), name);
        if (!known && !rc)
            rc = sl_err_set(err, SL_EINVAL, "metadata '%s' is not a field of the knowledge base",
                            name);
        if (!rc && !json_is_string(v) && !json_is_number(v) && !json_is_null(v))
            rc = sl_err_set(err, SL_EINVAL, "metadata '%s': a text, a number or null", name);
    }
    json_decref(row);
    meta_arg a = {values, partial};
    return rc ? rc : doc_edit(k, kb_id, doc_id, set_meta, &a, err);
}

/* ---- metadata fields ---- */

static int kb_info_edit(sl_kb *k, const char *kb_id,
                        int (*fn)(sl_value *info, const void *arg, sl_value **out, sl_err *err),
                        const void *arg, sl_value **out, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    sl_value *info = json_deep_copy(json_object_get(row, "info"));
    if (!json_is_array(json_object_get(info, "fields")))
        json_object_set_new(info, "fields", json_array());
    int rc = fn(info, arg, out, err);
    if (!rc)
        rc = sl_store_kb_set(k->env.store, str_of(row, "id", ""), NULL, info, err);
    json_decref(info);
    json_decref(row);
    return rc;
}

typedef struct {
    const char *id, *name, *type;
} field_arg;

static int field_add(sl_value *info, const void *arg, sl_value **out, sl_err *err)
{
    const field_arg *a = arg;
    sl_value *fields = json_object_get(info, "fields"), *f;
    size_t i;
    json_array_foreach(fields, i, f)
        if (!strcmp(str_of(f, "name", ""), a->name))
            return sl_err_set(err, SL_EINVAL, "Metadata name already exists.");
    char id[37];
    if (sl_rand_uuid(id, err))
        return -1;
    json_array_append_new(fields, json_pack("{s:s, s:s, s:s}", "id", id, "name", a->name, "type",
                                            a->type));
    if (out)
        *out = json_pack("{s:s, s:s, s:s}", "id", id, "name", a->name, "type", a->type);
    return 0;
}

static bool field_name_ok(const char *name)
{
    if (!name || !*name || strlen(name) > 255)
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return false;
    return true;
}

int sl_kb_field_add(sl_kb *k, const char *kb_id, const char *name, const char *type,
                    sl_value **out, sl_err *err)
{
    *out = NULL;
    if (!field_name_ok(name))
        return sl_err_set(err, SL_EINVAL,
                          "name: a metadata field's name has lower-case letters, digits and _");
    if (!type || (strcmp(type, "string") && strcmp(type, "number") && strcmp(type, "time")))
        return sl_err_set(err, SL_EINVAL, "type: 'string', 'number' or 'time'");
    if (!strcmp(name, "document_name") || !strcmp(name, "uploader") ||
        !strcmp(name, "upload_date") || !strcmp(name, "last_update_date") ||
        !strcmp(name, "source"))
        return sl_err_set(err, SL_EINVAL, "Metadata name already exists (a built-in field).");
    field_arg a = {NULL, name, type};
    return kb_info_edit(k, kb_id, field_add, &a, out, err);
}

sl_value *sl_kb_fields(sl_kb *k, const char *kb_id, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return NULL;
    const sl_value *info = json_object_get(row, "info");
    sl_value *docs = sl_store_kb_docs(k->env.store, str_of(row, "id", "")), *list = json_array();
    size_t i, j;
    sl_value *f, *d;
    json_array_foreach(json_object_get(info, "fields"), i, f) {
        long long count = 0;
        json_array_foreach(docs, j, d)
            count += json_object_get(json_object_get(json_object_get(d, "info"), "metadata"),
                                     str_of(f, "name", "")) != NULL;
        sl_value *o = json_deep_copy(f);
        json_object_set_new(o, "count", json_integer(count));
        json_array_append_new(list, o);
    }
    json_decref(docs);
    sl_value *out = json_pack("{s:o, s:b}", "doc_metadata", list, "built_in_field_enabled",
                              bool_of(info, "built_in_field_enabled", false));
    json_decref(row);
    return out;
}

static int field_rename(sl_value *info, const void *arg, sl_value **out, sl_err *err)
{
    const field_arg *a = arg;
    sl_value *fields = json_object_get(info, "fields"), *f, *hit = NULL;
    size_t i;
    json_array_foreach(fields, i, f) {
        if (!strcmp(str_of(f, "id", ""), a->id))
            hit = f;
        else if (a->name && !strcmp(str_of(f, "name", ""), a->name))
            return sl_err_set(err, SL_EINVAL, "Metadata name already exists.");
    }
    if (!hit)
        return sl_err_set(err, SL_ENOTFOUND, "Metadata not found.");
    if (!a->name) {
        json_array_foreach(fields, i, f)
            if (!strcmp(str_of(f, "id", ""), a->id)) {
                json_array_remove(fields, i);
                break;
            }
        return 0;
    }
    json_object_set_new(hit, "name", json_string(a->name));
    if (out)
        *out = json_deep_copy(hit);
    return 0;
}

int sl_kb_field_rename(sl_kb *k, const char *kb_id, const char *field_id, const char *name,
                       sl_value **out, sl_err *err)
{
    *out = NULL;
    if (!field_name_ok(name))
        return sl_err_set(err, SL_EINVAL,
                          "name: a metadata field's name has lower-case letters, digits and _");
    field_arg a = {field_id, name, NULL};
    return kb_info_edit(k, kb_id, field_rename, &a, out, err);
}

int sl_kb_field_delete(sl_kb *k, const char *kb_id, const char *field_id, sl_err *err)
{
    field_arg a = {field_id, NULL, NULL};
    return kb_info_edit(k, kb_id, field_rename, &a, NULL, err);
}

static int set_builtin(sl_value *info, const void *arg, sl_value **out, sl_err *err)
{
    (void)out;
    (void)err;
    json_object_set_new(info, "built_in_field_enabled", json_boolean(*(const bool *)arg));
    return 0;
}

int sl_kb_builtin_fields(sl_kb *k, const char *kb_id, bool enable, sl_err *err)
{
    return kb_info_edit(k, kb_id, set_builtin, &enable, NULL, err);
}

/* ---- segments ---- */

static sl_value *segment_of(const sl_value *c, const char *doc_id, const sl_value *children)
{
    const sl_value *info = json_object_get(c, "info");
    long long created = (long long)num_of(info, "created_at", 0);
    char hash[65];
    chunk_hash(info, str_of(c, "content", ""), hash);
    sl_value *o = json_pack("{s:O, s:I, s:s, s:O, s:O, s:s, s:I, s:I, s:[], s:O, s:s, s:I, s:b}",
                            "id", json_object_get(c, "id"), "position",
                            (json_int_t)num_of(c, "position", 0), "document_id", doc_id,
                            "content", json_object_get(c, "content"), "sign_content",
                            json_object_get(c, "content"), "answer", "", "word_count",
                            (json_int_t)chunk_words(info, str_of(c, "content", "")), "tokens",
                            (json_int_t)num_of(info, "tokens", 0), "keywords", "index_node_id",
                            json_object_get(c, "id"), "index_node_hash", hash,
                            "hit_count", (json_int_t)num_of(info, "hit_count", 0), "enabled",
                            bool_of(info, "enabled", true));
    json_object_set_new(o, "disabled_at", json_null());
    json_object_set_new(o, "disabled_by", json_null());
    json_object_set_new(o, "status", json_string("completed"));
    json_object_set_new(o, "created_by", json_string("sluice"));
    json_object_set_new(o, "created_at", json_integer(created));
    json_object_set_new(o, "updated_at", json_integer(created));
    json_object_set_new(o, "updated_by", json_string("sluice"));
    json_object_set_new(o, "indexing_at", json_integer(created));
    json_object_set_new(o, "completed_at", json_integer(created));
    json_object_set_new(o, "error", json_null());
    json_object_set_new(o, "stopped_at", json_null());
    json_object_set_new(o, "child_chunks", children ? json_incref((sl_value *)children) : json_array());
    return o;
}

/* The segments of a document with their children: [{row, children}]. */
static sl_value *doc_segments(sl_kb *k, const char *kid, const char *doc_id, float **vecs, int dims)
{
    sl_value *chunks = sl_store_kb_chunks(k->env.store, kid, doc_id, vecs, dims);
    sl_value *segs = json_array();
    size_t i, j;
    sl_value *c, *s;
    json_array_foreach(chunks, i, c) {
        long long parent = (long long)num_of(c, "parent", 0);
        if (!parent) {
            json_array_append_new(segs, json_pack("{s:O, s:[], s:I}", "row", c, "children",
                                                  "index", (json_int_t)i));
            continue;
        }
        json_array_foreach(segs, j, s) {
            if ((long long)num_of(json_object_get(s, "row"), "n", 0) == parent) {
                const sl_value *ci = json_object_get(c, "info");
                json_array_append_new(
                    json_object_get(s, "children"),
                    json_pack("{s:O, s:O, s:O, s:O, s:I, s:s, s:I, s:I}", "id",
                              json_object_get(c, "id"), "segment_id",
                              json_object_get(json_object_get(s, "row"), "id"), "content",
                              json_object_get(c, "content"), "position",
                              json_object_get(c, "position"), "word_count",
                              (json_int_t)chunk_words(ci, str_of(c, "content", "")), "type",
                              "automatic",
                              "created_at", (json_int_t)num_of(ci, "created_at", 0),
                              "updated_at", (json_int_t)num_of(ci, "created_at", 0)));
                break;
            }
        }
    }
    json_decref(chunks);
    return segs;
}

sl_value *sl_kb_segments(sl_kb *k, const char *kb_id, const char *doc_id, const char *keyword,
                         const char *status, int page, int limit, long long *total, sl_err *err)
{
    sl_value *d = sl_kb_doc(k, kb_id, doc_id, err);
    if (!d)
        return NULL;
    json_decref(d);
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return NULL;
    sl_value *segs = doc_segments(k, str_of(row, "id", ""), doc_id, NULL, 0), *out = json_array();
    if (page < 1)
        page = 1;
    if (limit < 1)
        limit = 20;
    long long n = 0;
    size_t i;
    sl_value *s;
    json_array_foreach(segs, i, s) {
        const sl_value *r = json_object_get(s, "row");
        bool en = bool_of(json_object_get(r, "info"), "enabled", true);
        if ((keyword && *keyword && !strstr(str_of(r, "content", ""), keyword)) ||
            (status && *status && strcmp(status, "completed") && strcmp(status, en ? "enabled" : "disabled")))
            continue;
        if (n >= (long long)(page - 1) * limit && n < (long long)page * limit)
            json_array_append_new(out, segment_of(r, doc_id, json_object_get(s, "children")));
        n++;
    }
    if (total)
        *total = n;
    json_decref(segs);
    json_decref(row);
    return out;
}

sl_value *sl_kb_segment(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                        sl_err *err)
{
    long long total;
    sl_value *all = sl_kb_segments(k, kb_id, doc_id, NULL, NULL, 1, 1 << 30, &total, err), *hit = NULL;
    size_t i;
    sl_value *s;
    json_array_foreach(all, i, s)
        if (!strcmp(str_of(s, "id", ""), seg_id))
            hit = json_incref(s);
    if (all && !hit)
        sl_err_set(err, SL_ENOTFOUND, "Segment not found.");
    json_decref(all);
    return hit;
}

typedef enum { SEG_ADD, SEG_UPDATE, SEG_DELETE } seg_op;

/* Rewrites a text_model document's segments: adds segs, updates seg_id
 * with patch, or deletes seg_id; embeds what is new. */
static int seg_rewrite(sl_kb *k, const char *kb_id, const char *doc_id, seg_op op,
                       const char *seg_id, const sl_value *arg, sl_value **out, sl_err *err)
{
    if (out)
        *out = NULL;
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    const char *kid = str_of(row, "id", "");
    sl_value *kinfo = json_object_get(row, "info");
    sl_value *d = sl_store_kb_doc(k->env.store, kid, doc_id);
    if (!d) {
        json_decref(row);
        return sl_err_set(err, SL_ENOTFOUND, "Document Not Exists.");
    }
    sl_value *dinfo = json_deep_copy(json_object_get(d, "info"));
    json_decref(d);
    int rc = 0;
    if (!strcmp(str_of(dinfo, "doc_form", "text_model"), "hierarchical_model"))
        rc = sl_err_set(err, SL_EUNSUPPORTED,
                        "segments of a parent-child document change when the document is added"
                        " again; sluice does not edit them one by one");
    else if (bool_of(dinfo, "archived", false))
        rc = sl_err_set(err, SL_EINVAL, "The archived document is not editable.");
    int dims = (int)num_of(kinfo, "dims", 0);
    float *vecs = NULL;
    sl_value *chunks = rc ? json_array() : sl_store_kb_chunks(k->env.store, kid, doc_id, &vecs, dims);
    size_t n = json_array_size(chunks), extra = op == SEG_ADD ? json_array_size(arg) : 0;
    chunk_list cl = {0};
    float **vp = sl_xcalloc(n + extra + 1, sizeof *vp);
    bool found = op == SEG_ADD;
    int position = 0;
    size_t i;
    sl_value *c;
    json_array_foreach(chunks, i, c) {
        if (rc)
            break;
        const sl_value *ci = json_object_get(c, "info");
        bool hit = seg_id && !strcmp(str_of(c, "id", ""), seg_id);
        found = found || hit;
        if (hit && op == SEG_DELETE)
            continue;
        const char *content = str_of(c, "content", "");
        bool enabled = bool_of(ci, "enabled", true);
        bool changed = false;
        if (hit && op == SEG_UPDATE) {
            const sl_value *nc = json_object_get(arg, "content");
            if (nc && (!json_is_string(nc) || !json_string_length(nc))) {
                rc = sl_err_set(err, SL_EINVAL, "Content is empty");
                break;
            }
            if (!enabled && !json_is_true(json_object_get(arg, "enabled")) && nc) {
                rc = sl_err_set(err, SL_EINVAL, "Can't update disabled segment");
                break;
            }
            if (nc && strcmp(json_string_value(nc), content)) {
                content = json_string_value(nc);
                changed = true;
            }
            if (json_is_boolean(json_object_get(arg, "enabled")))
                enabled = json_is_true(json_object_get(arg, "enabled"));
        }
        cl_add(&cl, -1, ++position, content, true);
        sl_store_chunk *sc = &cl.v[cl.n - 1];
        sc->id = str_of(c, "id", sc->id);   /* the segment keeps its id */
        json_object_set_new(cl.infos[cl.n - 1], "enabled", json_boolean(enabled));
        if (!changed && bool_of(ci, "indexed", false)) {
            vp[cl.n - 1] = dims > 0 ? vecs + i * (size_t)dims : NULL;
            json_object_set_new(cl.infos[cl.n - 1], "indexed", json_true());
        }
    }
    if (!rc && !found)
        rc = sl_err_set(err, SL_ENOTFOUND, "Segment not found.");
    size_t first_new = cl.n;
    for (i = 0; !rc && i < extra; i++) {
        const sl_value *s = json_array_get(arg, i);
        const sl_value *content = json_object_get(s, "content");
        if (!json_is_string(content) || !json_string_length(content))
            rc = sl_err_set(err, SL_EINVAL, "Content is empty");
        else
            cl_add(&cl, -1, ++position, json_string_value(content), true);
    }
    if (!rc && extra > 1000)
        rc = sl_err_set(err, SL_EINVAL, "Exceeded maximum segments limit of 1000.");
    /* embed what has no vector */
    float *fresh = NULL;
    long long tokens = 0;
    bool vectors = !strcmp(str_of(kinfo, "indexing_technique", "economy"), "high_quality");
    if (!rc && vectors)
        rc = embed_missing(k, kinfo, NULL, &cl, vp, &dims, &fresh, &tokens, err);
    long long words = 0;
    for (i = 0; !rc && i < cl.n; i++) {
        if (!vectors) {   /* keywords only: every segment is indexed as it is */
            cl.v[i].vec = NULL;
            json_object_set_new(cl.infos[i], "indexed", json_true());
        }
        if (!bool_of(cl.infos[i], "enabled", true))
            cl.v[i].fts = NULL, cl.v[i].vec = NULL;   /* a disabled segment is not searched */
        words += (long long)num_of(cl.infos[i], "word_count", 0);
    }
    if (!rc) {
        json_object_set_new(dinfo, "word_count", json_integer(words));
        json_object_set_new(dinfo, "tokens",
                            json_integer((json_int_t)num_of(dinfo, "tokens", 0) + tokens));
        json_object_set_new(dinfo, "updated_at", json_integer((json_int_t)time(NULL)));
        sl_kw_doc *kd = kw_of(cl.v, cl.n);
        rc = sl_store_kb_doc_put(k->env.store, kid, doc_id, dinfo, cl.v, cl.n, dims,
                                 sl_kw_doc_done(kd), err);
        sl_kw_doc_free(kd);
    }
    if (!rc && vectors && dims > 0 && num_of(kinfo, "dims", 0) != dims) {
        sl_value *ki = json_deep_copy(kinfo);
        json_object_set_new(ki, "dims", json_integer(dims));
        rc = sl_store_kb_set(k->env.store, kid, NULL, ki, err);
        json_decref(ki);
    }
    if (!rc && out) {
        sl_value *segs = doc_segments(k, kid, doc_id, NULL, 0), *s;
        *out = json_array();
        json_array_foreach(segs, i, s) {
            const sl_value *r = json_object_get(s, "row");
            bool want = op == SEG_ADD ? i >= first_new
                                      : !strcmp(str_of(r, "id", ""), seg_id ? seg_id : "");
            if (want)
                json_array_append_new(*out, segment_of(r, doc_id, json_object_get(s, "children")));
        }
        json_decref(segs);
    }
    free(fresh);
    free(vp);
    free(vecs);
    cl_release(&cl);
    json_decref(chunks);
    json_decref(dinfo);
    json_decref(row);
    return rc;
}

int sl_kb_segments_add(sl_kb *k, const char *kb_id, const char *doc_id, const sl_value *segs,
                       sl_value **out, sl_err *err)
{
    if (!json_is_array(segs) || !json_array_size(segs))
        return sl_err_set(err, SL_EINVAL, "segments: a list of {content}");
    return seg_rewrite(k, kb_id, doc_id, SEG_ADD, NULL, segs, out, err);
}

int sl_kb_segment_update(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                         const sl_value *patch, sl_value **out, sl_err *err)
{
    sl_value *list = NULL;
    if (!json_is_object(patch))
        return sl_err_set(err, SL_EINVAL, "segment: an object {content, enabled}");
    int rc = seg_rewrite(k, kb_id, doc_id, SEG_UPDATE, seg_id, patch, &list, err);
    *out = rc ? NULL : json_incref(json_array_get(list, 0));
    json_decref(list);
    return rc;
}

int sl_kb_segment_delete(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                         sl_err *err)
{
    return seg_rewrite(k, kb_id, doc_id, SEG_DELETE, seg_id, NULL, NULL, err);
}

/* ---- metadata conditions (Dify's operators) ---- */

static bool as_number(const sl_value *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        *out = strtod(s, &end);
        return end != s && !*end;
    }
    return false;
}

/* The value as text (numbers as Dify's JSON shows them). */
static char *as_text(const sl_value *v)
{
    if (json_is_string(v))
        return sl_xstrdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

static bool in_list(const sl_value *want, const char *have)
{
    if (json_is_array(want)) {
        size_t i;
        sl_value *w;
        json_array_foreach((sl_value *)want, i, w) {
            char *t = as_text(w);
            bool eq = !strcmp(t, have);
            free(t);
            if (eq)
                return true;
        }
        return false;
    }
    const char *s = json_string_value(want);
    while (s && *s) {
        size_t n = strcspn(s, ",");
        const char *a = s, *b = s + n;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if ((size_t)(b - a) == strlen(have) && b > a && !strncmp(a, have, (size_t)(b - a)))
            return true;
        s += n + (s[n] == ',');
    }
    return false;
}

/* 1 true, 0 false, -1 the condition does not apply (no value). */
static int condition(const sl_value *c, const sl_value *meta)
{
    const char *name = str_of(c, "name", ""), *op = str_of(c, "comparison_operator", "");
    const sl_value *want = json_object_get(c, "value");
    const sl_value *have = json_object_get(meta, name);
    bool present = have && !json_is_null(have);
    if (!strcmp(op, "empty"))
        return !present;
    if (!strcmp(op, "not empty"))
        return present;
    if (!want || json_is_null(want))
        return -1;
    if (!strcmp(op, "in") || !strcmp(op, "not in")) {
        if (!present)
            return !strcmp(op, "not in") && json_is_array(want) && !json_array_size(want);
        char *t = as_text(have);
        bool in = in_list(want, t);
        free(t);
        return !strcmp(op, "in") ? in : !in;
    }
    if (!present)
        return 0;
    double a, b;
    if (!strcmp(op, "before") || !strcmp(op, "<") || !strcmp(op, "after") || !strcmp(op, ">") ||
        !strcmp(op, "≤") || !strcmp(op, "<=") || !strcmp(op, "≥") || !strcmp(op, ">=")) {
        if (!as_number(have, &a) || !as_number(want, &b))
            return 0;
        if (!strcmp(op, "before") || !strcmp(op, "<"))
            return a < b;
        if (!strcmp(op, "after") || !strcmp(op, ">"))
            return a > b;
        if (!strcmp(op, "≤") || !strcmp(op, "<="))
            return a <= b;
        return a >= b;
    }
    if (json_is_number(want) && (!strcmp(op, "=") || !strcmp(op, "≠") || !strcmp(op, "is") ||
                                 !strcmp(op, "is not"))) {
        bool eq = as_number(have, &a) && a == json_number_value(want);
        return !strcmp(op, "=") || !strcmp(op, "is") ? eq : !eq;
    }
    char *h = as_text(have), *w = as_text(want);
    size_t hl = strlen(h), wl = strlen(w);
    int r = 0;
    if (!strcmp(op, "contains"))
        r = strstr(h, w) != NULL;
    else if (!strcmp(op, "not contains"))
        r = strstr(h, w) == NULL;
    else if (!strcmp(op, "start with"))
        r = !strncmp(h, w, wl);
    else if (!strcmp(op, "end with"))
        r = hl >= wl && !strcmp(h + hl - wl, w);
    else if (!strcmp(op, "is") || !strcmp(op, "="))
        r = !strcmp(h, w);
    else if (!strcmp(op, "is not") || !strcmp(op, "≠"))
        r = strcmp(h, w) != 0;
    else
        r = -1;   /* an operator Dify does not know is ignored, as Dify does */
    free(h);
    free(w);
    return r;
}

bool sl_kb_conditions_match(const sl_value *conditions, const sl_value *doc_metadata)
{
    const sl_value *list = json_object_get(conditions, "conditions");
    bool any = !strcmp(str_of(conditions, "logical_operator", "and"), "or");
    bool applied = false;
    size_t i;
    sl_value *c;
    json_array_foreach((sl_value *)list, i, c) {
        int r = condition(c, doc_metadata);
        if (r < 0)
            continue;
        applied = true;
        if (any && r)
            return true;
        if (!any && !r)
            return false;
    }
    return !any || !applied;
}

/* A document's metadata as filters and results see it: its values and,
 * when the knowledge base has them on, the built-in fields. */
static sl_value *doc_metadata(const sl_value *kinfo, const sl_value *d)
{
    const sl_value *info = json_object_get(d, "info");
    sl_value *m = json_deep_copy(json_object_get(info, "metadata"));
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    if (bool_of(kinfo, "built_in_field_enabled", false)) {
        json_object_set_new(m, "document_name", json_string(str_of(info, "name", "")));
        json_object_set_new(m, "uploader", json_string("sluice"));
        json_object_set_new(m, "upload_date",
                            json_integer((json_int_t)num_of(d, "created_at", 0)));
        json_object_set_new(m, "last_update_date",
                            json_integer((json_int_t)num_of(info, "updated_at", 0)));
        json_object_set_new(m, "source", json_string(str_of(info, "source", "upload_file")));
    }
    return m;
}

/* ---- search ---- */

int sl_kb_query_defaults(sl_kb *k, const char *kb_id, sl_kb_query *q, sl_err *err)
{
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    const sl_value *info = json_object_get(row, "info");
    const sl_value *rm = json_object_get(info, "retrieval_model");
    bool economy = !strcmp(str_of(info, "indexing_technique", "economy"), "economy");
    static const char *const methods[] = {"semantic_search", "full_text_search", "hybrid_search",
                                          "keyword_search"};
    const char *m = economy ? "keyword_search" : str_of(rm, "search_method", "semantic_search");
    q->method = methods[0];
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(m, methods[i]))
            q->method = methods[i];
    q->top_k = (int)num_of(rm, "top_k", 4);
    q->threshold_enabled = bool_of(rm, "score_threshold_enabled", false);
    q->score_threshold = num_of(rm, "score_threshold", 0);
    q->reranking_mode = NULL;
    const sl_value *w = json_object_get(rm, "weights");
    if (!strcmp(q->method, "hybrid_search") && json_is_object(w) &&
        !strcmp(str_of(rm, "reranking_mode", ""), "weighted_score")) {
        q->reranking_mode = "weighted_score";
        q->vector_weight = num_of(json_object_get(w, "vector_setting"), "vector_weight", 0.7);
        q->keyword_weight = num_of(json_object_get(w, "keyword_setting"), "keyword_weight", 0.3);
    } else if (bool_of(rm, "reranking_enable", false)) {
        const sl_value *rr = json_object_get(rm, "reranking_model");
        const char *p = str_of(rr, "reranking_provider_name", ""),
                   *mo = str_of(rr, "reranking_model_name", "");
        if (*p && *mo) {
            /* the names live in the store's row, gone with it: the query
             * keeps copies */
            snprintf(q->names[0], sizeof q->names[0], "%s", p);
            snprintf(q->names[1], sizeof q->names[1], "%s", mo);
            q->reranking_mode = "reranking_model";
            q->rerank_provider = q->names[0];
            q->rerank_model = q->names[1];
        }
    }
    json_decref(row);
    return 0;
}

typedef struct {
    long long n;
    double v, kw;       /* cosine, normalised BM25 */
    bool has_v, has_kw;
    double score;
} cand;

static bool sorted_has(const long long *v, size_t n, long long x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x;
}

typedef struct {
    const cache *c;
    const long long *allowed;   /* sorted document row numbers */
    size_t nallowed;
    /* when the rows' numbers are dense: kept[n - base] for each row */
    unsigned char *kept;
    long long base, span;
} keep_ctx;

/* A byte per row number, 1 when its document is searched: the filter the
 * index asks for each row it looks at costs an index, not two binary
 * searches.  Left NULL when row numbers are too sparse for it. */
static void keep_prepare(keep_ctx *kc)
{
    const cache *c = kc->c;
    if (!c->count || !kc->nallowed)
        return;
    long long lo = c->ns[0], hi = c->ns[c->count - 1];   /* ns is sorted */
    long long dlo = kc->allowed[0], dhi = kc->allowed[kc->nallowed - 1];
    if (hi - lo >= (long long)c->count * 8 || dhi - dlo >= (long long)kc->nallowed * 64 + 4096)
        return;
    unsigned char *docs = sl_xcalloc((size_t)(dhi - dlo + 1), 1);
    for (size_t i = 0; i < kc->nallowed; i++)
        docs[kc->allowed[i] - dlo] = 1;
    kc->kept = sl_xcalloc((size_t)(hi - lo + 1), 1);
    kc->base = lo;
    kc->span = hi - lo + 1;
    for (size_t i = 0; i < c->count; i++) {
        long long d = c->docs[i];
        kc->kept[c->ns[i] - lo] = d >= dlo && d <= dhi && docs[d - dlo];
    }
    free(docs);
}

static bool keep_row(long long id, void *ud)
{
    keep_ctx *kc = ud;
    if (kc->kept)
        return id >= kc->base && id - kc->base < kc->span && kc->kept[id - kc->base];
    size_t lo = 0, hi = kc->c->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (kc->c->ns[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < kc->c->count && kc->c->ns[lo] == id &&
           sorted_has(kc->allowed, kc->nallowed, kc->c->docs[lo]);
}

/* Keeps a built graph in the store (a blob), named in the knowledge
 * base's info with the generation it is of, so the next process loads it
 * instead of building it again.  Best effort: a failure costs a build. */
static void save_index(sl_kb *k, cache *c, const sl_value *row, long long gen)
{
    char key[37], ids[37];
    if (sl_rand_uuid(ids, NULL) ||
        sl_store_blob_put(k->env.store, ids, c->ns ? (const void *)c->ns : "",
                          c->count * sizeof *c->ns, 0, NULL))
        return;
    char path[] = "/tmp/sluice-index-XXXXXX";
    int fd = sl_rand_uuid(key, NULL) ? -1 : mkstemp(path);
    if (fd < 0) {
        sl_store_blob_delete(k->env.store, ids, NULL);
        return;
    }
    unlink(path);
    sl_blob_writer *w = NULL;
    (void)row;
    if (!sl_vindex_save(c->ix, fd, NULL) && lseek(fd, 0, SEEK_SET) == 0 &&
        !sl_store_blob_create(k->env.store, key, 0, &w, NULL)) {
        char buf[1 << 16];
        ssize_t got;
        bool ok = true;
        while (ok && (got = read(fd, buf, sizeof buf)) > 0)
            ok = sl_blob_write(w, buf, (size_t)got, NULL) == 0;
        if (ok && !sl_blob_commit(w, NULL)) {
            /* the row as the store has it now (an earlier save may have
             * changed its info since the search read it) */
            sl_value *now = sl_store_kb_get(k->env.store, c->kb_id);
            const sl_value *info = json_object_get(now ? now : row, "info");
            char *old = sl_xstrdup(str_of(info, "index_blob", "")),
                 *oldids = sl_xstrdup(str_of(info, "index_ids_blob", ""));
            sl_value *ni = json_deep_copy(info);
            json_object_set_new(ni, "index_blob", json_string(key));
            json_object_set_new(ni, "index_ids_blob", json_string(ids));
            json_object_set_new(ni, "index_generation", json_integer(gen));
            json_object_set_new(ni, "index_dims", json_integer(c->dims));
            if (!sl_store_kb_set(k->env.store, c->kb_id, NULL, ni, NULL)) {
                c->saved_generation = gen;
                if (*old)
                    sl_store_blob_delete(k->env.store, old, NULL);
                if (*oldids)
                    sl_store_blob_delete(k->env.store, oldids, NULL);
                *ids = 0;
            } else {
                sl_store_blob_delete(k->env.store, key, NULL);
            }
            free(old);
            free(oldids);
            json_decref(ni);
            json_decref(now);
        } else if (!ok) {
            sl_blob_abort(w);
        }
    }
    if (*ids)
        sl_store_blob_delete(k->env.store, ids, NULL);
    close(fd);
}

/* ---- graphs built in the background ---- */

typedef struct {
    sl_kb *k;
    char *kid;
    int dims;
} build_job;

/* Builds a graph over the store's rows as they are now, saves it, and
 * puts it in the cache with those rows; the next search applies what came
 * after, as for a loaded graph. */
static void *graph_main(void *arg)
{
    build_job *j = arg;
    sl_kb *k = j->k;
    sl_value *row = sl_store_kb_get(k->env.store, j->kid);
    long long gen = (long long)num_of(row, "chunks_generation", 0);
    cache tmp = {.kb_id = j->kid, .dims = j->dims};
    float *vecs = NULL;
    bool ok = row && !sl_store_kb_vectors(k->env.store, j->kid, j->dims, &tmp.ns, &tmp.docs,
                                          &vecs, &tmp.count, NULL) &&
              (tmp.ix = sl_vindex_new(j->dims, NULL)) &&
              (!tmp.count || !sl_vindex_add_many(tmp.ix, tmp.ns, vecs, tmp.count, NULL)) &&
              !sl_vindex_build(tmp.ix, NULL, NULL);
    free(vecs);
    if (ok)
        save_index(k, &tmp, row, gen);   /* outside the lock: 400 MB at 100k x 1,024 */
    pthread_mutex_lock(&k->mu);
    cache *c = k->caches;
    while (c && strcmp(c->kb_id, j->kid))
        c = c->next;
    if (ok && c && c->ix && c->dims == j->dims && !k->closing) {
        sl_vindex_free(c->ix);
        free(c->ns);
        free(c->docs);
        c->ix = tmp.ix;
        c->ns = tmp.ns;
        c->docs = tmp.docs;
        c->count = tmp.count;
        c->generation = gen;
        c->since_build = 0;
        c->saved_generation = tmp.saved_generation;
        tmp.ix = NULL;
        tmp.ns = tmp.docs = NULL;
    }
    if (c)
        c->building = false;
    k->building--;
    pthread_cond_broadcast(&k->built);
    pthread_mutex_unlock(&k->mu);
    sl_vindex_free(tmp.ix);
    free(tmp.ns);
    free(tmp.docs);
    json_decref(row);
    free(j->kid);
    free(j);
    return NULL;
}

/* The cache's graph, built (k->mu held): here and now, or on a thread of
 * its own when the environment asks for that (the search goes on with the
 * index as it is). */
static void graph(sl_kb *k, cache *c, const sl_value *row, long long gen)
{
    if (k->env.background_graphs) {
        if (c->building)
            return;
        build_job *j = sl_xcalloc(1, sizeof *j);
        *j = (build_job){.k = k, .kid = sl_xstrdup(c->kb_id), .dims = c->dims};
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        bool started = pthread_create(&th, &at, graph_main, j) == 0;
        pthread_attr_destroy(&at);
        if (started) {
            c->building = true;
            k->building++;
            return;
        }
        free(j->kid);
        free(j);
    }
    if (!sl_vindex_build(c->ix, NULL, NULL)) {
        c->since_build = 0;
        save_index(k, c, row, gen);
    }
}

/* Rows added since the graph was built that make it worth building again
 * (they are scanned exactly until then). */
static size_t rebuild_after(size_t count)
{
    return count / 10 > 5000 ? count / 10 : 5000;
}

/* Brings the cache's index to the store's rows (k->mu held): rows gone
 * are removed, new ones added (their vectors read by number), so adding a
 * document to a large knowledge base costs its own vectors, not a reload
 * and a new graph.  The graph is built again once the rows added since
 * its build are a tenth of all (at least 5,000).  -1 with err when the
 * store cannot be read; the cache is then left empty. */
static int cache_delta(sl_kb *k, cache *c, const sl_value *row, int dims, long long gen,
                       sl_err *err)
{
    long long *ns = NULL, *docs = NULL;
    size_t count = 0;
    if (sl_store_kb_vectors(k->env.store, c->kb_id, dims, &ns, &docs, NULL, &count, err))
        return -1;
    /* both sorted: one merge finds what went and what came */
    long long *added = sl_xcalloc(count + 1, sizeof *added);
    size_t nadd = 0, i = 0, j = 0;
    while (i < c->count || j < count) {
        if (j == count || (i < c->count && c->ns[i] < ns[j])) {
            sl_vindex_remove(c->ix, c->ns[i++]);
        } else if (i == c->count || ns[j] < c->ns[i]) {
            added[nadd++] = ns[j++];
        } else {
            i++, j++;
        }
    }
    int rc = 0;
    for (size_t at = 0; at < nadd && !rc; at += 1024) {
        size_t m = nadd - at < 1024 ? nadd - at : 1024;
        float *vecs = sl_xcalloc(m, (size_t)dims * sizeof *vecs);
        sl_value *rows = sl_store_kb_rows(k->env.store, c->kb_id, added + at, m, vecs, dims);
        /* rows come back in the order asked, without those gone meanwhile */
        size_t r = 0;
        for (size_t x = 0; x < m && !rc; x++) {
            const sl_value *u = json_array_get(rows, r);
            if (!u || (long long)num_of(u, "n", 0) != added[at + x])
                continue;
            r++;
            rc = sl_vindex_add(c->ix, added[at + x], vecs + x * (size_t)dims, err);
        }
        json_decref(rows);
        free(vecs);
    }
    free(added);
    free(c->ns);
    free(c->docs);
    c->ns = ns;
    c->docs = docs;
    c->count = count;
    c->generation = gen;
    c->since_build += nadd;
    if (!rc && count >= APPROX_MIN &&
        (!sl_vindex_has_approx(c->ix) || c->since_build >= rebuild_after(count))) {
        graph(k, c, row, gen);
    } else if (!rc && nadd && sl_vindex_has_approx(c->ix) && c->saved_generation != gen &&
               !c->building && c->since_build * 4 >= rebuild_after(count)) {
        /* the next process should not add these rows again one by one */
        save_index(k, c, row, gen);
    }
    if (rc)
        cache_vectors_free(c);
    return rc;
}

/* The knowledge base's vectors in memory, fresh (k->mu held): loaded
 * once (the saved graph and its rows when there is one, of any
 * generation, else every vector from the store), then kept up to date by
 * cache_delta. */
static int cache_vectors(sl_kb *k, cache *c, const sl_value *row, int dims, sl_err *err)
{
    long long gen = (long long)num_of(row, "chunks_generation", 0);
    if (c->ix && c->generation == gen && c->dims == dims)
        return 0;
    if (c->ix && c->dims != dims)
        cache_vectors_free(c);
    if (!c->ix) {
        /* the saved graph: its rows are the store's as of its generation */
        const sl_value *info = json_object_get(row, "info");
        const char *key = str_of(info, "index_blob", NULL),
                   *ids = str_of(info, "index_ids_blob", NULL);
        if (key && ids && (long long)num_of(info, "index_dims", -1) == dims) {
            int fd = sl_store_blob_open(k->env.store, key, NULL, NULL);
            sl_vindex *ix = NULL;
            sl_buf b;
            sl_buf_init(&b, (size_t)SL_VINDEX_MAX_ROWS * sizeof(long long));
            if (fd >= 0 && !sl_vindex_load(fd, &ix, NULL) && sl_vindex_dims(ix) == dims &&
                !sl_store_blob_get(k->env.store, ids, 0, &b, NULL) &&
                b.len == sl_vindex_count(ix) * sizeof(long long)) {
                c->ix = ix;
                c->count = b.len / sizeof(long long);
                c->ns = sl_xmalloc(b.len + sizeof(long long));
                memcpy(c->ns, b.data ? b.data : "", b.len);
                c->docs = sl_xcalloc(c->count + 1, sizeof *c->docs);
                c->dims = dims;
                c->saved_generation = (long long)num_of(info, "index_generation", -1);
                ix = NULL;
            }
            sl_vindex_free(ix);
            sl_buf_release(&b);
            if (fd >= 0)
                close(fd);
        }
        if (c->ix)
            return cache_delta(k, c, row, dims, gen, err);
    } else {
        return cache_delta(k, c, row, dims, gen, err);
    }
    const char *kid = c->kb_id;
    c->generation = gen;
    c->dims = dims;
    c->since_build = 0;
    float *vecs = NULL;
    int rc = sl_store_kb_vectors(k->env.store, kid, dims, &c->ns, &c->docs, &vecs, &c->count, err);
    if (!rc && !(c->ix = sl_vindex_new(dims, err)))
        rc = -1;
    if (!rc && c->count && sl_vindex_add_many(c->ix, c->ns, vecs, c->count, err))
        rc = -1;
    free(vecs);
    /* the approximate index, built once for the knowledge base and saved */
    if (!rc && c->count >= APPROX_MIN)
        graph(k, c, row, gen);
    if (rc)
        cache_vectors_free(c);
    return rc;
}

static cand *cand_find(cand *v, size_t n, long long id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].n == id)
            return &v[i];
    return NULL;
}

static void normalise(float *v, int dims)
{
    double s = 0;
    for (int i = 0; i < dims; i++)
        s += (double)v[i] * v[i];
    s = sl_sqrt(s);
    if (s > 0)
        for (int i = 0; i < dims; i++)
            v[i] = (float)(v[i] / s);
}

/* Reranks texts with a model: scores[i] for each, -1 when dropped. */
static int model_rerank(sl_kb *k, const sl_kb_query *q, const char *const *docs, size_t n,
                        double *scores, sl_err *err)
{
    const char *model;
    const sl_llm_endpoint *ep =
        sl_config_resolve(k->env.config, q->rerank_provider ? q->rerank_provider : "",
                          q->rerank_model ? q->rerank_model : "", &model, err);
    if (!ep)
        return sl_err_prefix(err, "rerank model %s", q->rerank_model ? q->rerank_model : "");
    sl_rerank_hit *hits = sl_xcalloc(n ? n : 1, sizeof *hits);
    size_t got = 0;
    char *tape_model = sl_xasprintf("%s/%s", q->rerank_provider ? q->rerank_provider : "",
                                    q->rerank_model);
    sl_rerank_opts o = {.cancelled = q->cancelled, .ud = q->ud, .tape_model = tape_model};
    int rc = sl_llm_rerank_with(ep, model, q->query, docs, n, n, &o, k->env.tape, hits, &got,
                                err);
    free(tape_model);
    for (size_t i = 0; i < n; i++)
        scores[i] = -1;
    for (size_t i = 0; !rc && i < got; i++)
        if (hits[i].index < n)
            scores[hits[i].index] = hits[i].score;
    free(hits);
    return rc;
}

/* Embeds the query with the knowledge base's model (normalised). */
static float *embed_query(sl_kb *k, const sl_value *kinfo, const char *query, int *dims,
                          long long *tokens, sl_err *err)
{
    float *v = NULL;
    const char *texts[] = {query};
    *dims = (int)num_of(kinfo, "dims", 0);
    int got = *dims;
    if (embed(k, kinfo, texts, 1, NULL, &v, &got, tokens, err))
        return NULL;
    if (*dims && got != *dims) {
        free(v);
        sl_err_set(err, SL_EPARSE, "embedding model gave %d dimensions for the query, not %d",
                   got, *dims);
        return NULL;
    }
    *dims = got;
    normalise(v, got);
    return v;
}

/* A record (Dify's /retrieve shape) for a unit row; children hits go
 * under their segment. */
static sl_value *record_of(const sl_value *kinfo, const sl_value *unit, const sl_value *doc,
                           double score)
{
    const sl_value *parent = json_object_get(unit, "parent_row");
    bool child = json_is_object(parent);
    const sl_value *seg = child ? parent : unit;
    const char *doc_id = str_of(unit, "doc_id", "");
    sl_value *s = segment_of(seg, doc_id, NULL);
    sl_value *m = doc_metadata(kinfo, doc);
    json_object_set_new(s, "document",
                        json_pack("{s:s, s:s, s:O, s:n, s:o}", "id", doc_id, "data_source_type",
                                  "upload_file", "name",
                                  json_object_get(json_object_get(doc, "info"), "name"),
                                  "doc_type", "doc_metadata", m));
    sl_value *children = json_array();
    if (child)
        json_array_append_new(children, json_pack("{s:O, s:O, s:O, s:f}", "id",
                                                  json_object_get(unit, "id"), "content",
                                                  json_object_get(unit, "content"), "position",
                                                  json_object_get(unit, "position"), "score",
                                                  score));
    return json_pack("{s:o, s:o, s:f, s:n, s:[], s:n}", "segment", s, "child_chunks", children,
                     "score", score, "tsne_position", "files", "summary");
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* The document row of an indexed chunk from the vector cache, or 0. */
static long long doc_of_row(const cache *c, long long n)
{
    size_t lo = 0, hi = c->ix ? c->count : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->ns[mid] < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return c->ix && lo < c->count && c->ns[lo] == n ? c->docs[lo] : 0;
}

/* Adds a hydrated unit to the records: a new record, or a child chunk of
 * the segment one already holds.  false when it was not taken. */
static bool take_unit(sl_value *out, const sl_value *kinfo, const sl_value *u,
                      const sl_value *doc, double score, size_t top_k)
{
    const sl_value *parent = json_object_get(u, "parent_row");
    if (json_is_object(parent)) {
        size_t j;
        sl_value *rec;
        json_array_foreach(out, j, rec)
            if (!strcmp(str_of(json_object_get(rec, "segment"), "id", ""),
                        str_of(parent, "id", ""))) {
                json_array_append_new(json_object_get(rec, "child_chunks"),
                                      json_pack("{s:O, s:O, s:O, s:f}", "id",
                                                json_object_get(u, "id"), "content",
                                                json_object_get(u, "content"), "position",
                                                json_object_get(u, "position"), "score", score));
                return true;
            }
    }
    if (json_array_size(out) >= top_k)
        return false;
    json_array_append_new(out, record_of(kinfo, u, doc, score));
    return true;
}

int sl_kb_search(sl_kb *k, const char *kb_id, const sl_kb_query *q, sl_value **records,
                 long long *tokens, sl_err *err)
{
    *records = NULL;
    if (tokens)
        *tokens = 0;
    if (!q->query)
        return sl_err_set(err, SL_EINVAL, "Query or attachment_ids is required");
    sl_value *row = kb_row(k, kb_id, err);
    if (!row)
        return -1;
    const char *kid = str_of(row, "id", "");
    const sl_value *kinfo = json_object_get(row, "info");
    bool economy = !strcmp(str_of(kinfo, "indexing_technique", "economy"), "economy");
    sl_kb_query dq = {0};
    if (!q->method && sl_kb_query_defaults(k, kid, &dq, err)) {
        json_decref(row);
        return -1;
    }
    const char *method = economy ? "keyword_search" : q->method ? q->method : dq.method;
    if (strcmp(method, "semantic_search") && strcmp(method, "full_text_search") &&
        strcmp(method, "hybrid_search") && strcmp(method, "keyword_search")) {
        json_decref(row);
        return sl_err_set(err, SL_EINVAL, "search method '%s': semantic_search, full_text_search,"
                                          " hybrid_search or keyword_search", method);
    }
    bool vec = !strcmp(method, "semantic_search") || !strcmp(method, "hybrid_search");
    bool kw = !vec || !strcmp(method, "hybrid_search");
    bool hybrid = vec && kw;
    int top_k = q->top_k > 0 ? q->top_k : q->method ? 4 : dq.top_k > 0 ? dq.top_k : 4;
    if (top_k > MAX_TOP_K)
        top_k = MAX_TOP_K;
    bool weighted = hybrid && q->reranking_mode && !strcmp(q->reranking_mode, "weighted_score");
    bool reranked = q->reranking_mode && !strcmp(q->reranking_mode, "reranking_model") &&
                    q->rerank_model && *q->rerank_model;
    /* the query's vector first: a model call needs no lock */
    int rc = 0, dims = (int)num_of(kinfo, "dims", 0);
    float *qv = NULL;
    if (vec && *q->query && q->query_vector) {
        if (q->query_dims != dims || dims <= 0) {
            json_decref(row);
            return sl_err_set(err, SL_EINVAL, "the query's vector has %d dimensions; the"
                                              " knowledge base's have %d", q->query_dims, dims);
        }
        qv = sl_xmalloc((size_t)dims * sizeof *qv);
        memcpy(qv, q->query_vector, (size_t)dims * sizeof *qv);
        normalise(qv, dims);
    } else if (vec && *q->query) {
        long long t = 0;
        if (!(qv = embed_query(k, kinfo, q->query, &dims, &t, err))) {
            json_decref(row);
            return -1;
        }
        if (tokens)
            *tokens += t;
    }
    pthread_mutex_lock(&k->mu);
    cache *c = cache_of(k, kid, row);
    /* the documents searched: completed, enabled, not archived, passing the filter */
    size_t nd = json_array_size(c->doclist), nallowed = 0;
    long long *allowed = sl_xcalloc(nd + 1, sizeof *allowed);
    size_t i;
    sl_value *d;
    json_array_foreach(c->doclist, i, d) {
        const sl_value *di = json_object_get(d, "info");
        if (!bool_of(di, "enabled", true) || bool_of(di, "archived", false) ||
            strcmp(str_of(di, "indexing_status", "completed"), "completed"))
            continue;
        if (q->conditions) {
            sl_value *m = doc_metadata(kinfo, d);
            bool ok = sl_kb_conditions_match(q->conditions, m);
            json_decref(m);
            if (!ok)
                continue;
        }
        allowed[nallowed++] = (long long)num_of(d, "n", 0);
    }
    qsort(allowed, nallowed, sizeof *allowed, cmp_ll);
    bool parent_child = !strcmp(str_of(kinfo, "doc_form", "text_model"), "hierarchical_model");
    size_t recall = (size_t)top_k;
    if (hybrid)
        recall = recall < RECALL_FLOOR ? RECALL_FLOOR : recall > RECALL_MAX ? RECALL_MAX : recall;
    if (parent_child)
        recall *= 4;   /* several children of one segment count once */
    cand *cv = NULL;
    size_t nc = 0;
    sl_value *out = json_array();
    if (!nallowed || !*q->query)
        goto done;
    if (vec) {
        if ((rc = cache_vectors(k, c, row, dims, err)))
            goto done;
        keep_ctx kc = {.c = c, .allowed = allowed, .nallowed = nallowed};
        if (nallowed != nd)
            keep_prepare(&kc);
        sl_vhit *hits = sl_xcalloc(recall, sizeof *hits);
        size_t got = 0;
        rc = sl_vindex_search(c->ix, qv, recall, nallowed == nd ? NULL : keep_row, &kc, q->exact,
                              hits, &got, err);
        free(kc.kept);
        cv = sl_xcalloc(got + 1, sizeof *cv);
        for (size_t h = 0; !rc && h < got; h++)
            cv[nc++] = (cand){.n = hits[h].id, .v = hits[h].score, .has_v = true};
        free(hits);
        if (rc)
            goto done;
    }
    if (kw) {
        /* with the vectors loaded, a hit's document is known here and a
         * filter needs no more rows than the rest; without, hits of other
         * documents are left out as the rows come, so more are asked for */
        bool known = c->ix != NULL;
        size_t want = nallowed == nd || known ? recall * (known && nallowed != nd ? 4 : 1)
                                              : recall * 8;
        long long *ns = NULL;
        double *bm = NULL;
        size_t got = 0;
        if (keyword_search(k, kid, q->query, want, &ns, &bm, &got, err))
            rc = -1;
        cv = sl_xrealloc(cv, (nc + got + 1) * sizeof *cv);
        size_t nvec = nc;
        for (size_t h = 0; !rc && h < got; h++) {
            if (known && nallowed != nd && !sorted_has(allowed, nallowed, doc_of_row(c, ns[h])))
                continue;
            cand *x = NULL;
            for (size_t y = 0; y < nvec && !x; y++)
                if (cv[y].n == ns[h])
                    x = &cv[y];
            if (!x) {
                x = &cv[nc++];
                *x = (cand){.n = ns[h]};
            }
            x->kw = bm25_norm(bm[h]);
            x->has_kw = true;
        }
        free(ns);
        free(bm);
        if (rc)
            goto done;
    }
    /* weighted: a keyword hit the vector channel did not bring needs its cosine */
    if (weighted) {
        size_t nmiss = 0;
        long long *miss = sl_xcalloc(nc + 1, sizeof *miss);
        for (size_t x = 0; x < nc; x++)
            if (!cv[x].has_v)
                miss[nmiss++] = cv[x].n;
        float *mv = nmiss && dims > 0 ? sl_xcalloc(nmiss, (size_t)dims * sizeof(float)) : NULL;
        sl_value *mrows = mv ? sl_store_kb_rows(k->env.store, kid, miss, nmiss, mv, dims) : NULL;
        for (size_t m = 0; mv && m < nmiss; m++) {
            float *v = mv + m * (size_t)dims;
            normalise(v, dims);
            double dot = 0;
            for (int e = 0; e < dims; e++)
                dot += (double)v[e] * qv[e];
            for (size_t x = 0; x < nc; x++)
                if (cv[x].n == miss[m]) {
                    cv[x].v = dot;
                    cv[x].has_v = true;
                }
        }
        json_decref(mrows);
        free(mv);
        free(miss);
    }
    for (size_t x = 0; x < nc; x++) {
        cand *y = &cv[x];
        y->score = !strcmp(method, "semantic_search") ? y->v
                   : !vec                             ? y->kw
                   : weighted ? q->vector_weight * y->v + q->keyword_weight * y->kw
                              : (y->v > y->kw ? y->v : y->kw);
    }
    if (reranked && nc) {
        /* the model reads every candidate: all are hydrated, then ranked */
        long long *ids = sl_xcalloc(nc, sizeof *ids);
        for (size_t x = 0; x < nc; x++)
            ids[x] = cv[x].n;
        sl_value *rows = sl_store_kb_rows(k->env.store, kid, ids, nc, NULL, 0);
        free(ids);
        size_t nr = json_array_size(rows);
        const char **texts = sl_xcalloc(nr + 1, sizeof *texts);
        double *scores = sl_xcalloc(nr + 1, sizeof *scores);
        for (size_t x = 0; x < nr; x++)
            texts[x] = str_of(json_array_get(rows, x), "content", "");
        rc = model_rerank(k, q, texts, nr, scores, err);
        for (size_t x = 0; !rc && x < nr; x++) {
            cand *y = cand_find(cv, nc, (long long)num_of(json_array_get(rows, x), "n", 0));
            if (y)
                y->score = scores[x];
        }
        free(texts);
        free(scores);
        json_decref(rows);
        if (rc)
            goto done;
    }
    qsort(cv, nc, sizeof *cv, cand_cmp);
    /* hydrate the best first, a batch at a time, until the records are full */
    size_t next = 0;
    while (next < nc && json_array_size(out) < (size_t)top_k) {
        size_t batch_n = (size_t)top_k * 2 + 8, m = 0;
        long long *ids = sl_xcalloc(batch_n, sizeof *ids);
        size_t first = next;
        for (; next < nc && m < batch_n; next++) {
            if (cv[next].score < 0 ||
                (q->threshold_enabled && cv[next].score < q->score_threshold))
                continue;
            ids[m++] = cv[next].n;
        }
        sl_value *rows = m ? sl_store_kb_rows(k->env.store, kid, ids, m, NULL, 0) : NULL;
        free(ids);
        size_t r = 0;
        for (size_t x = first; x < next; x++) {
            const sl_value *u = json_array_get(rows, r);
            if (!u || (long long)num_of(u, "n", 0) != cv[x].n)
                continue;   /* skipped above, or gone from the store */
            r++;
            const sl_value *info = json_object_get(u, "info");
            const sl_value *seginfo = json_object_get(json_object_get(u, "parent_row"), "info");
            if (!bool_of(info, "enabled", true) || !bool_of(seginfo, "enabled", true))
                continue;
            const sl_value *doc = sl_map_get(&c->by_id, str_of(u, "doc_id", ""));
            if (!doc || !sorted_has(allowed, nallowed, (long long)num_of(doc, "n", 0)))
                continue;
            take_unit(out, kinfo, u, doc, cv[x].score, (size_t)top_k);
        }
        json_decref(rows);
    }
done:
    pthread_mutex_unlock(&k->mu);
    free(cv);
    free(qv);
    free(allowed);
    json_decref(row);
    if (rc) {
        json_decref(out);
        return -1;
    }
    *records = out;
    return 0;
}

/* ---- merging several knowledge bases ---- */

/* Dify's keyword score for weighted merging: the cosine of idf-weighted
 * word sets of the query and each candidate, idf over the candidates. */
static void keyword_scores(const char *query, const char *const *texts, size_t n, double *out)
{
    char **qw;
    size_t nq = sl_kw_words(query, &qw, MAX_QUERY_TERMS);
    char ***tw = sl_xcalloc(n + 1, sizeof *tw);
    size_t *nt = sl_xcalloc(n + 1, sizeof *nt);
    for (size_t i = 0; i < n; i++)
        nt[i] = sl_kw_words(texts[i], &tw[i], 4096);
    for (size_t i = 0; i < n; i++) {
        double dot = 0, qq = 0, dd = 0;
        for (size_t w = 0; w < nt[i]; w++) {
            size_t df = 0;
            for (size_t j = 0; j < n; j++)
                for (size_t x = 0; x < nt[j]; x++)
                    if (!strcmp(tw[j][x], tw[i][w])) {
                        df++;
                        break;
                    }
            double idf = sl_ln((1.0 + (double)n) / (1.0 + (double)df)) + 1.0;
            dd += idf * idf;
            for (size_t x = 0; x < nq; x++)
                if (!strcmp(qw[x], tw[i][w]))
                    dot += idf * idf;
        }
        for (size_t x = 0; x < nq; x++) {
            size_t df = 0;
            for (size_t j = 0; j < n; j++)
                for (size_t y = 0; y < nt[j]; y++)
                    if (!strcmp(tw[j][y], qw[x])) {
                        df++;
                        break;
                    }
            double idf = df ? sl_ln((1.0 + (double)n) / (1.0 + (double)df)) + 1.0 : 0;
            qq += idf * idf;
        }
        out[i] = qq > 0 && dd > 0 ? dot / (sl_sqrt(qq) * sl_sqrt(dd)) : 0;
    }
    for (size_t i = 0; i < n; i++)
        sl_kw_words_free(tw[i], nt[i]);
    sl_kw_words_free(qw, nq);
    free(tw);
    free(nt);
}

int sl_kb_rerank(sl_kb *k, const sl_kb_query *q, sl_value *records, sl_value **out, sl_err *err)
{
    *out = NULL;
    size_t n = json_array_size(records);
    const char **texts = sl_xcalloc(n + 1, sizeof *texts);
    double *scores = sl_xcalloc(n + 1, sizeof *scores);
    for (size_t i = 0; i < n; i++) {
        const sl_value *r = json_array_get(records, i);
        texts[i] = str_of(json_object_get(r, "segment"), "content", str_of(r, "content", ""));
    }
    int rc = 0;
    if (q->reranking_mode && !strcmp(q->reranking_mode, "reranking_model")) {
        if (!q->rerank_model || !*q->rerank_model)
            rc = sl_err_set(err, SL_EINVAL, "reranking_model: name a rerank model");
        else
            rc = model_rerank(k, q, texts, n, scores, err);
    } else if (q->reranking_mode && !strcmp(q->reranking_mode, "weighted_score")) {
        double *kws = sl_xcalloc(n + 1, sizeof *kws);
        keyword_scores(q->query ? q->query : "", texts, n, kws);
        for (size_t i = 0; i < n; i++)
            scores[i] = q->vector_weight * num_of(json_array_get(records, i), "score", 0) +
                        q->keyword_weight * kws[i];
        free(kws);
    } else {
        for (size_t i = 0; i < n; i++)
            scores[i] = num_of(json_array_get(records, i), "score", 0);
    }
    if (!rc) {
        size_t *order = sl_xcalloc(n + 1, sizeof *order);
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && scores[order[b - 1]] < scores[order[b]]; b--) {
                size_t t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        *out = json_array();
        size_t top = q->top_k > 0 ? (size_t)q->top_k : 4;
        for (size_t o = 0; o < n && json_array_size(*out) < top; o++) {
            double s = scores[order[o]];
            if (s < 0 || (q->threshold_enabled && s < q->score_threshold))
                continue;
            sl_value *r = json_deep_copy(json_array_get(records, order[o]));
            json_object_set_new(r, "score", json_real(s));
            json_array_append_new(*out, r);
        }
        free(order);
    }
    free(texts);
    free(scores);
    return rc;
}
