/*
 * kb_bench — knowledge bases end to end (issue 18): hybrid search through
 * sl_kb_search over 100,000 chunks of 1,024 dimensions with a metadata
 * filter, against numpy's brute force in the same run, and ingestion
 * (extract, clean, chunk, index; no embedding) in MB of text per second.
 *
 *   make bench-knowledge            (runs bench/knowledge_bench too)
 *   BENCH_N=20000 BENCH_DIMS=256 build/bench/kb_bench    (smaller)
 *
 * The data: 200 Gaussian clusters; a chunk is a point of its cluster and a
 * text of that cluster's topic words among common ones; 100 chunks a
 * document; each document has metadata tier (t0..t9) and shard (0..49).
 * Queries are held-back points with two topic words and a common word.
 * Filters: tier in t0,t1,t2 (30% of the chunks) and shard = 0 (2%).
 * numpy scans every vector (bench/knowledge_numpy.py, the same files as
 * bench/knowledge_bench.c writes) — the vector half only, so the ratio
 * gives numpy the easier job.
 */
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "knowledge/kb.h"
#include "knowledge/kwindex.h"
#include "store/store.h"
#include "knowledge_common.h"

#define DOC_CHUNKS 100
#define CLUSTERS 200
#define TOPIC_WORDS 24
#define COMMON_WORDS 4000

/* A word: "w" and a number, common ones Zipf-like (low numbers often). */
static void common_word(char *out, size_t n)
{
    double u = uniform();
    snprintf(out, n, "w%u", (unsigned)(COMMON_WORDS * u * u * u));
}

static void topic_word(char *out, size_t n, unsigned cluster, unsigned k)
{
    snprintf(out, n, "t%us%u", cluster, k);
}

static void chunk_text(char *out, size_t cap, unsigned cluster)
{
    size_t len = 0;
    int words = 50 + (int)(rnd() % 30);
    for (int i = 0; i < words && len + 24 < cap; i++) {
        char w[24];
        if (rnd() % 5 == 0)
            topic_word(w, sizeof w, cluster, (unsigned)(rnd() % TOPIC_WORDS));
        else
            common_word(w, sizeof w);
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", w);
    }
}

/* ---- ingestion ---- */

typedef struct {
    char **paths;
    size_t n;
    char **bytes;
    size_t *lens;
    size_t done, failed;
} feed_ctx;

static int load(size_t i, sl_kb_doc_in *in, void *ud, sl_err *err)
{
    feed_ctx *c = ud;
    FILE *f = fopen(c->paths[i], "rb");
    if (!f)
        return sl_err_set(err, SL_EIO, "cannot open %s", c->paths[i]);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    c->bytes[i] = malloc((size_t)len + 1);
    c->lens[i] = fread(c->bytes[i], 1, (size_t)len, f);
    fclose(f);
    *in = (sl_kb_doc_in){.name = strrchr(c->paths[i], '/') + 1, .bytes = c->bytes[i],
                         .len = c->lens[i], .source = c->paths[i]};
    return 0;
}

static void unload(size_t i, sl_kb_doc_in *in, void *ud)
{
    feed_ctx *c = ud;
    (void)in;
    free(c->bytes[i]);
    c->bytes[i] = NULL;
}

static bool done(size_t i, int rc, const sl_value *doc, bool unchanged, const sl_err *err,
                 void *ud)
{
    feed_ctx *c = ud;
    (void)i, (void)doc, (void)unchanged;
    if (rc) {
        fprintf(stderr, "ingest: %s\n", err->msg);
        c->failed++;
    }
    c->done++;
    return false;
}

/* files documents of per bytes each, in dir/name: the first run of large
 * files, the second of many small ones (128 of 160 KB: the keyword
 * index merges its segments 16 at a time, so this one pays merges). */
static int bench_ingest(const char *dir, const char *name, size_t files, size_t per)
{
    feed_ctx c = {.n = files};
    c.paths = calloc(files, sizeof *c.paths);
    c.bytes = calloc(files, sizeof *c.bytes);
    c.lens = calloc(files, sizeof *c.lens);
    char *buf = malloc(per + 1024), *docs = NULL;
    if (asprintf(&docs, "%s/%s", dir, name) < 0 || mkdir(docs, 0700))
        return -1;
    size_t total = 0;
    for (size_t f = 0; f < files; f++) {
        size_t len = 0;
        while (len < per) {
            char para[1024];
            chunk_text(para, sizeof para, (unsigned)(rnd() % CLUSTERS));
            len += (size_t)snprintf(buf + len, per + 1024 - len, "%s.\n\n", para);
        }
        if (asprintf(&c.paths[f], "%s/doc%02zu.txt", docs, f) < 0 ||
            write_file(c.paths[f], buf, len))
            return -1;
        total += len;
    }
    free(buf);
    /* rounds: a fresh store each; the medians are the figures (this
     * machine's speed drifts by a fifth from one run to the next) */
    int rounds = (int)env_long("BENCH_INGEST_ROUNDS", 3);
    if (rounds < 1)
        rounds = 1;
    double *in = calloc((size_t)rounds, sizeof *in), *whole = calloc((size_t)rounds, sizeof *whole);
    int failed = 0;
    for (int r = 0; r < rounds; r++) {
        char *data;
        if (asprintf(&data, "%s/%s-store-%d", dir, name, r) < 0)
            return -1;
        sl_store *s;
        sl_err err = {0};
        int interrupted;
        if (sl_store_open(data, &s, &interrupted, &err)) {
            fprintf(stderr, "store: %s\n", err.msg);
            return -1;
        }
        sl_kb_env env = {.store = s};
        sl_kb_limits_default(&env.limits);
        sl_kb *k = sl_kb_open(&env, &err);
        sl_value *spec = json_pack("{s:s}", "name", "ingest"), *ds;
        if (sl_kb_create(k, spec, &ds, &err)) {
            fprintf(stderr, "create: %s\n", err.msg);
            return -1;
        }
        sl_kb_feed feed = {.load = load, .unload = unload, .done = done, .ud = &c};
        double t0 = now();
        sl_kb_add_all(k, "ingest", files, &feed);
        in[r] = now() - t0;
        json_decref(ds);
        json_decref(spec);
        sl_kb_close(k);
        sl_store_close(s);
        free(data);
        /* the same as a user runs it: a whole `sluice kb add` process */
        char *cmd;
        if (asprintf(&cmd, "%s kb create ingest2 --data %s/%s-cli-%d >/dev/null && %s kb add"
                           " ingest2 %s --data %s/%s-cli-%d 2>/dev/null",
                     SLUICE, dir, name, r, SLUICE, docs, dir, name, r) < 0)
            return -1;
        t0 = now();
        failed += system(cmd) != 0;
        whole[r] = now() - t0;
        free(cmd);
    }
    qsort(in, (size_t)rounds, sizeof *in, cmp_double);
    qsort(whole, (size_t)rounds, sizeof *whole, cmp_double);
    double mi = in[rounds / 2], mw = whole[rounds / 2];
    printf("ingest: %zu files of %zu KB, %.1f MB of text, automatic chunking, keyword index"
           " (no embedding), median of %d rounds\n", files, per / 1000, total / 1e6, rounds);
    printf("  in process: %.2f s, %.1f MB/s (%.1f-%.1f)%s\n", mi, total / 1e6 / mi,
           total / 1e6 / in[rounds - 1], total / 1e6 / in[0], c.failed ? "  (FAILED documents)" : "");
    printf("  sluice kb add (whole process): %.2f s, %.1f MB/s (%.1f-%.1f)%s\n", mw,
           total / 1e6 / mw, total / 1e6 / whole[rounds - 1], total / 1e6 / whole[0],
           failed ? "  (FAILED)" : "");
    printf("  target >= 20 MB/s (whole process): %s\n", total / 1e6 / mw >= 20 ? "PASS" : "FAIL");
    free(in);
    free(whole);
    free(docs);
    for (size_t f = 0; f < files; f++)
        free(c.paths[f]);
    free(c.paths);
    free(c.bytes);
    free(c.lens);
    return 0;
}

/* ---- hybrid search ---- */

typedef struct {
    const char *name;
    const char *filter;      /* Dify's conditions */
} fcase;

static const fcase cases[] = {
    {"filter30", "{\"logical_operator\":\"and\",\"conditions\":[{\"name\":\"tier\","
                 "\"comparison_operator\":\"in\",\"value\":\"t0,t1,t2\"}]}"},
    {"filter2", "{\"logical_operator\":\"and\",\"conditions\":[{\"name\":\"shard\","
                "\"comparison_operator\":\"is\",\"value\":\"s0\"}]}"},
};

static int row_of(const sl_value *rec)
{
    const char *id =
        json_string_value(json_object_get(json_object_get(rec, "segment"), "id"));
    return id ? atoi(id) : -1;
}

int main(void)
{
    rng_state = 0x9E3779B97F4A7C15ULL;
    size_t n = (size_t)env_long("BENCH_N", 100000), d = (size_t)env_long("BENCH_DIMS", 1024);
    size_t nq = (size_t)env_long("BENCH_QUERIES", 200);
    size_t ndocs = (n + DOC_CHUNKS - 1) / DOC_CHUNKS;
    char dir[] = "/tmp/sluice-kb-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    printf("kb_bench: %s\n", dir);
    if (!getenv("BENCH_SKIP_INGEST") &&
        (bench_ingest(dir, "large", (size_t)env_long("BENCH_INGEST_FILES", 8), 2500000) ||
         bench_ingest(dir, "small", 128, 160000)))
        fprintf(stderr, "ingest bench failed\n");

    /* the data */
    float *centres = malloc(CLUSTERS * d * sizeof *centres);
    for (size_t c = 0; c < CLUSTERS; c++) {
        for (size_t i = 0; i < d; i++)
            centres[c * d + i] = (float)gauss();
        unit(centres + c * d, d);
    }
    float *rows = malloc(n * d * sizeof *rows), *qs = malloc(nq * d * sizeof *qs);
    unsigned *cl = malloc(n * sizeof *cl), *qcl = malloc(nq * sizeof *qcl);
    int32_t *groups = malloc(n * sizeof *groups);
    for (size_t i = 0; i < n; i++) {
        cl[i] = (unsigned)(rnd() % CLUSTERS);
        point(rows + i * d, centres + cl[i] * d, d, 0.9);
        groups[i] = (int32_t)(i / DOC_CHUNKS);
    }
    for (size_t q = 0; q < nq; q++) {
        qcl[q] = (unsigned)(rnd() % CLUSTERS);
        point(qs + q * d, centres + qcl[q] * d, d, 0.9);
    }
    unsigned char *keep[2] = {malloc(ndocs), malloc(ndocs)};
    for (size_t doc = 0; doc < ndocs; doc++) {
        keep[0][doc] = doc % 10 < 3;
        keep[1][doc] = doc % 50 == 0;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/rows.f32", dir);
    int wrc = write_file(path, rows, n * d * sizeof *rows);
    snprintf(path, sizeof path, "%s/queries.f32", dir);
    wrc |= write_file(path, qs, nq * d * sizeof *qs);
    snprintf(path, sizeof path, "%s/groups.i32", dir);
    wrc |= write_file(path, groups, n * sizeof *groups);
    snprintf(path, sizeof path, "%s/keep_filter30.u8", dir);
    wrc |= write_file(path, keep[0], ndocs);
    snprintf(path, sizeof path, "%s/keep_filter2.u8", dir);
    wrc |= write_file(path, keep[1], ndocs);
    if (wrc)
        return 1;

    /* the knowledge base, written through the store as sl_kb_add would */
    char data[600];
    snprintf(data, sizeof data, "%s/store", dir);
    sl_store *s;
    sl_err err = {0};
    int interrupted;
    if (sl_store_open(data, &s, &interrupted, &err))
        return fprintf(stderr, "store: %s\n", err.msg), 1;
    sl_config *cfg = sl_config_env();
    sl_config_set_offline(cfg, true);
    sl_kb_env env = {.store = s, .config = cfg};
    sl_kb_limits_default(&env.limits);
    sl_kb *k = sl_kb_open(&env, &err);
    sl_value *spec = json_pack("{s:s, s:s, s:s, s:s}", "name", "bench", "embedding_model",
                               "bench", "embedding_model_provider", "bench",
                               "indexing_technique", "high_quality"), *ds, *f;
    if (sl_kb_create(k, spec, &ds, &err) || sl_kb_field_add(k, "bench", "tier", "string", &f, &err))
        return fprintf(stderr, "create: %s\n", err.msg), 1;
    json_decref(f);
    if (sl_kb_field_add(k, "bench", "shard", "string", &f, &err))
        return fprintf(stderr, "field: %s\n", err.msg), 1;
    json_decref(f);
    const char *kid = json_string_value(json_object_get(ds, "id"));
    double t0 = now();
    sl_store_chunk *chunks = calloc(DOC_CHUNKS, sizeof *chunks);
    char (*texts)[1024] = malloc(DOC_CHUNKS * sizeof *texts);
    char (*ids)[24] = malloc(DOC_CHUNKS * sizeof *ids);
    for (size_t doc = 0; doc < ndocs; doc++) {
        size_t first = doc * DOC_CHUNKS, m = n - first < DOC_CHUNKS ? n - first : DOC_CHUNKS;
        for (size_t c = 0; c < m; c++) {
            chunk_text(texts[c], sizeof texts[c], cl[first + c]);
            snprintf(ids[c], sizeof ids[c], "%zu", first + c);
            chunks[c] = (sl_store_chunk){.id = ids[c], .parent = -1, .position = (int)c + 1,
                                         .content = texts[c], .fts = texts[c],
                                         .vec = rows + (first + c) * d};
        }
        char name[32], tier[8], shard[8];
        snprintf(name, sizeof name, "doc%zu.txt", doc);
        snprintf(tier, sizeof tier, "t%zu", doc % 10);
        snprintf(shard, sizeof shard, "s%zu", doc % 50);
        sl_value *info = json_pack("{s:s, s:s, s:b, s:{s:s, s:s}}", "name", name,
                                   "indexing_status", "completed", "enabled", true, "metadata",
                                   "tier", tier, "shard", shard);
        char did[24];
        snprintf(did, sizeof did, "d%zu", doc);
        /* the keyword index as sl_kb_add builds it (knowledge/kwindex.h) */
        sl_kw_doc *kd = sl_kw_doc_new();
        for (size_t c = 0; c < m; c++)
            sl_kw_doc_add(kd, (long long)c, texts[c]);
        int put = sl_store_kb_doc_put(s, kid, did, info, chunks, m, (int)d, sl_kw_doc_done(kd), &err);
        sl_kw_doc_free(kd);
        if (put)
            return fprintf(stderr, "put: %s\n", err.msg), 1;
        json_decref(info);
    }
    free(chunks);
    free(texts);
    free(ids);
    sl_value *row = sl_store_kb_get(s, kid), *ki = json_deep_copy(json_object_get(row, "info"));
    json_object_set_new(ki, "dims", json_integer((json_int_t)d));
    sl_store_kb_set(s, kid, NULL, ki, &err);
    json_decref(ki);
    json_decref(row);
    printf("hybrid search: %zu chunks of %zu dimensions in %zu documents, %d clusters,"
           " %zu queries\n", n, d, ndocs, CLUSTERS, nq);
    printf("  written to the store: %.1f s\n", now() - t0);

    /* the first search loads the vectors and builds the graph; a second
     * process (a fresh sl_kb) loads what the first saved */
    sl_value *conds[2];
    for (int c = 0; c < 2; c++)
        conds[c] = json_loads(cases[c].filter, 0, NULL);
    char text[128];
    sl_kb_query q = {.method = "hybrid_search", .top_k = 10, .query = text,
                     .query_vector = qs, .query_dims = (int)d};
    snprintf(text, sizeof text, "t%us1 t%us2 w1", qcl[0], qcl[0]);
    sl_value *recs;
    long long tok;
    t0 = now();
    if (sl_kb_search(k, kid, &q, &recs, &tok, &err))
        return fprintf(stderr, "search: %s\n", err.msg), 1;
    printf("  build (load %zu vectors, build the graph, save it): %.1f s\n", n, now() - t0);
    json_decref(recs);
    sl_kb_close(k);
    k = sl_kb_open(&env, &err);
    t0 = now();
    sl_kb_search(k, kid, &q, &recs, &tok, &err);
    json_decref(recs);
    printf("  load (a new process: vectors and the saved graph): %.2f s\n", now() - t0);
    printf("  RSS %ld MB (peak %ld MB)\n", status_kb("VmRSS:") / 1024, status_kb("VmHWM:") / 1024);

    double np50[2] = {0, 0}, np95[2] = {0, 0};
    int nrc = run_numpy(dir, n, d, nq, np50, np95);
    double *times = malloc(nq * sizeof *times);
    int bad = 0;
    for (int c = 0; c < 2; c++) {
        /* recall@10 of the vector channel: approximate against exact */
        double hit = 0, total = 0;
        q.conditions = conds[c];
        for (size_t i = 0; i < nq; i++) {
            q.query_vector = qs + i * d;
            q.method = "semantic_search";
            sl_value *a = NULL, *e = NULL;
            q.exact = false;
            sl_kb_search(k, kid, &q, &a, &tok, &err);
            q.exact = true;
            sl_kb_search(k, kid, &q, &e, &tok, &err);
            for (size_t x = 0; x < json_array_size(e); x++) {
                total++;
                for (size_t y = 0; y < json_array_size(a); y++)
                    if (row_of(json_array_get(e, x)) == row_of(json_array_get(a, y)))
                        hit++;
            }
            json_decref(a);
            json_decref(e);
        }
        double recall = total ? hit / total : 0;
        const char *methods[] = {"hybrid_search", "semantic_search", "full_text_search"};
        const char *mnames[] = {"hybrid", "vector", "keyword"};
        double p50[3][2];
        for (int m = 0; m < 3; m++)
            for (int ex = 0; ex < (m == 2 ? 1 : 2); ex++) {
                q.method = methods[m];
                q.exact = ex;
                for (size_t i = 0; i < nq; i++) {
                    q.query_vector = qs + i * d;
                    snprintf(text, sizeof text, "t%us%u t%us%u w%u", qcl[i],
                             (unsigned)(i % TOPIC_WORDS), qcl[i],
                             (unsigned)((i + 7) % TOPIC_WORDS), (unsigned)(i % 50));
                    double s0 = now();
                    int rc = sl_kb_search(k, kid, &q, &recs, &tok, &err);
                    times[i] = (now() - s0) * 1e3;
                    if (rc)
                        fprintf(stderr, "search: %s\n", err.msg), bad = 1;
                    json_decref(recs);
                }
                p50[m][ex] = pct(times, nq, 0.5);
                double p95 = pct(times, nq, 0.95);
                printf("  %-8s %-7s %-5s p50 %6.2f ms  p95 %6.2f ms\n", cases[c].name,
                       mnames[m], m == 2 ? "" : ex ? "exact" : "hnsw", p50[m][ex], p95);
            }
        printf("  %-8s recall@10 of the graph against the exact scan: %.3f (target >= 0.95)\n",
               cases[c].name, recall);
        if (!nrc)
            printf("  %-8s numpy brute force (vectors only) p50 %.2f ms: hybrid %.1fx numpy"
                   " (target >= 3x), p50 target <= 10 ms\n",
                   cases[c].name, np50[c], np50[c] / p50[0][0]);
        else
            printf("  %-8s numpy did not run (python3-numpy?)\n", cases[c].name);
    }
    free(times);
    for (int c = 0; c < 2; c++)
        json_decref(conds[c]);
    json_decref(ds);
    json_decref(spec);
    sl_kb_close(k);
    sl_store_close(s);
    sl_config_free(cfg);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        return 1;
    return bad;
}
