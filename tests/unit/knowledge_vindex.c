/*
 * knowledge_vindex — the vector index (knowledge/vindex.h): the exact scan
 * against a naive double-precision loop (ties, k over the count, filters,
 * removed and replaced rows), the approximate path's recall on clustered
 * data, rows added after a build, save/load round trips, hostile saved
 * files (every truncation, every byte flipped, crafted headers), and
 * concurrent searches.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "knowledge/vindex.h"
#include "tap.h"

/* ---- data -------------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_u64(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static double uniform(void)
{
    return ((next_u64() >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

static void random_vec(float *v, int d)
{
    for (int i = 0; i < d; i++)
        v[i] = (float)gauss();
}

/* n points around c clusters (centre + noise), not normalised. */
static float *clustered(int n, int d, int clusters, double noise, uint64_t seed)
{
    uint64_t keep = rng;
    rng = seed;
    float *centres = malloc((size_t)clusters * d * sizeof(float));
    for (int c = 0; c < clusters; c++)
        random_vec(centres + (size_t)c * d, d);
    float *v = malloc((size_t)n * d * sizeof(float));
    for (int i = 0; i < n; i++) {
        const float *c = centres + (next_u64() % (uint64_t)clusters) * d;
        for (int j = 0; j < d; j++)
            v[(size_t)i * d + j] = (float)(c[j] + noise * gauss());
    }
    free(centres);
    rng = keep;
    return v;
}

/* ---- the naive reference ------------------------------------------------------ */

typedef struct {
    double score;
    long long id;
} ref_hit;

static int cmp_ref(const void *pa, const void *pb)
{
    const ref_hit *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Rows as added (the last vector of each id alive; removed[] ids gone). */
typedef struct {
    int d;
    size_t n;
    long long *ids;
    float *vs;
    bool *gone;
} ref_set;

static double ref_cos(const float *a, const float *b, int d)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < d; i++)
        ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return ab / sqrt(aa * bb);
}

static size_t ref_search(const ref_set *r, const float *q, size_t k, sl_vindex_keep keep, void *ud,
                         ref_hit *out)
{
    ref_hit *all = malloc(r->n * sizeof *all);
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->gone[i] || (keep && !keep(r->ids[i], ud)))
            continue;
        all[m++] = (ref_hit){ref_cos(q, r->vs + i * r->d, r->d), r->ids[i]};
    }
    qsort(all, m, sizeof *all, cmp_ref);
    size_t n = m < k ? m : k;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

/* The index's answer agrees with the reference: the same count, scores
 * within float rounding of the reference's at each rank, non-increasing,
 * ties by id; and the same ids except where reference scores are too
 * close for float32 to order (the tolerance). */
static bool agrees(const sl_vhit *h, size_t n, const ref_hit *r, size_t rn, char *why, size_t wl)
{
    const double tol = 2e-5;
    if (n != rn)
        return snprintf(why, wl, "%zu hits, the reference %zu", n, rn), false;
    for (size_t i = 0; i < n; i++) {
        if (fabs(h[i].score - r[i].score) > tol)
            return snprintf(why, wl, "rank %zu: score %.7f, the reference %.7f", i, h[i].score,
                            r[i].score),
                   false;
        if (i && (h[i].score > h[i - 1].score ||
                  (h[i].score == h[i - 1].score && h[i].id <= h[i - 1].id)))
            return snprintf(why, wl, "rank %zu is out of order", i), false;
        if (h[i].id != r[i].id) {
            /* allowed only inside a near-tie of the reference */
            bool near = false;
            for (size_t j = 0; j < rn; j++)
                if (r[j].id == h[i].id && fabs(r[j].score - r[i].score) <= tol)
                    near = true;
            if (!near)
                return snprintf(why, wl, "rank %zu: id %lld, the reference %lld", i, h[i].id,
                                r[i].id),
                       false;
        }
    }
    return true;
}

static bool keep_even(long long id, void *ud)
{
    (void)ud;
    return id % 2 == 0;
}

static bool keep_mod(long long id, void *ud)
{
    const int *m = ud;
    return id % m[0] < m[1];
}

/* ---- exact -------------------------------------------------------------------- */

static void test_errors(void)
{
    sl_err err = {0};
    CHECK(!sl_vindex_new(0, &err) && err.code == SL_EINVAL && strstr(err.msg, "1 to 16384"),
          "0 dimensions refused: %s", err.msg);
    sl_err_clear(&err);
    CHECK(!sl_vindex_new(SL_VINDEX_MAX_DIMS + 1, &err) && err.code == SL_EINVAL,
          "16385 dimensions refused");
    sl_err_clear(&err);
    sl_vindex *ix = sl_vindex_new(3, &err);
    float zero[3] = {0, 0, 0}, nan3[3] = {1, NAN, 0}, inf3[3] = {INFINITY, 0, 0}, ok[3] = {1, 2, 3};
    CHECK(sl_vindex_add(ix, 1, zero, &err) == -1 && err.code == SL_EINVAL &&
              strstr(err.msg, "row 1"),
          "a zero vector is refused: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_vindex_add(ix, 2, nan3, &err) == -1 && err.code == SL_EINVAL, "NaN refused");
    sl_err_clear(&err);
    CHECK(sl_vindex_add(ix, 3, inf3, &err) == -1 && err.code == SL_EINVAL, "infinity refused");
    sl_err_clear(&err);
    CHECK(sl_vindex_count(ix) == 0, "nothing was added");
    float batch[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    long long bids[3] = {7, 8, 9};
    CHECK(sl_vindex_add_many(ix, bids, batch, 3, &err) == -1 && strstr(err.msg, "row 9") &&
              sl_vindex_count(ix) == 0,
          "a batch with one zero vector adds nothing: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_vindex_add(ix, 4, ok, &err) == 0 && sl_vindex_count(ix) == 1, "a good row goes in");
    sl_vhit out[2];
    size_t n = 9;
    CHECK(sl_vindex_search(ix, zero, 2, NULL, NULL, true, out, &n, &err) == -1 &&
              err.code == SL_EINVAL && n == 0,
          "a zero query is refused: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_vindex_search(ix, ok, 0, NULL, NULL, true, out, &n, &err) == 0 && n == 0,
          "k = 0: no hits");
    CHECK(sl_vindex_search(ix, ok, 2, NULL, NULL, false, out, &n, &err) == 0 && n == 1 &&
              out[0].id == 4 && fabsf(out[0].score - 1) < 1e-6f,
          "k over the count: the one row, score 1 (%g)", out[0].score);
    CHECK(sl_vindex_remove(ix, 5) == -1, "removing an unknown id: -1");
    CHECK(sl_vindex_remove(ix, 4) == 0 && sl_vindex_count(ix) == 0 && sl_vindex_remove(ix, 4) == -1,
          "remove, then it is unknown");
    CHECK(sl_vindex_search(ix, ok, 2, NULL, NULL, true, out, &n, &err) == 0 && n == 0,
          "an empty index: no hits");
    sl_vindex_build_opts bo = {.m = 1};
    CHECK(sl_vindex_build(ix, &bo, &err) == -1 && err.code == SL_EINVAL && strstr(err.msg, "m must"),
          "M 1 refused: %s", err.msg);
    sl_err_clear(&err);
    bo = (sl_vindex_build_opts){.ef_construction = 5000};
    CHECK(sl_vindex_build(ix, &bo, &err) == -1 && err.code == SL_EINVAL, "efc 5000 refused");
    sl_err_clear(&err);
    bo = (sl_vindex_build_opts){.threads = -1};
    CHECK(sl_vindex_build(ix, &bo, &err) == -1 && err.code == SL_EINVAL, "threads -1 refused");
    sl_err_clear(&err);
    CHECK(sl_vindex_build(ix, NULL, &err) == 0 && !sl_vindex_has_approx(ix),
          "building an empty index: no graph (%s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_vindex_free(ix);
}

static void exact_vs_naive(int d, size_t nrows, int queries)
{
    sl_err err = {0};
    sl_vindex *ix = sl_vindex_new(d, &err);
    ref_set r = {d, 0, malloc((nrows + 64) * sizeof(long long)),
                 malloc((nrows + 64) * d * sizeof(float)), calloc(nrows + 64, sizeof(bool))};
    long long *ids = malloc(nrows * sizeof *ids);
    float *vs = malloc(nrows * d * sizeof(float));
    for (size_t i = 0; i < nrows; i++) {
        ids[i] = (long long)(i * 3 + 1);
        random_vec(vs + i * d, d);
    }
    CHECK(sl_vindex_add_many(ix, ids, vs, nrows, &err) == 0 && sl_vindex_count(ix) == nrows,
          "d=%d: %zu rows added", d, nrows);
    memcpy(r.ids, ids, nrows * sizeof *ids);
    memcpy(r.vs, vs, nrows * d * sizeof(float));
    r.n = nrows;
    /* ties: one vector five times (twice scaled: the same unit vector) */
    float *tie = malloc(d * sizeof(float));
    random_vec(tie, d);
    for (int c = 0; c < 5; c++) {
        float *t = r.vs + r.n * d;
        for (int j = 0; j < d; j++)
            t[j] = tie[j] * (c % 2 ? 2.0f : 1.0f);
        r.ids[r.n] = 100000 - c; /* added in falling id order */
        sl_vindex_add(ix, r.ids[r.n], t, &err);
        r.n++;
    }
    sl_vhit *out = malloc((nrows + 64) * sizeof *out);
    ref_hit *ref = malloc((nrows + 64) * sizeof *ref);
    size_t n;
    if (d > 1) /* in one dimension every row ties with one of two others */
    CHECK(sl_vindex_search(ix, tie, 5, NULL, NULL, true, out, &n, &err) == 0 && n == 5 &&
              out[0].id == 99996 && out[1].id == 99997 && out[4].id == 100000 &&
              out[0].score == out[4].score,
          "d=%d: five equal rows tie, lower id first (%lld %lld .. %lld)", d, out[0].id, out[1].id,
          out[4].id);
    char why[200] = "";
    int bad = 0;
    size_t ks[] = {1, 10, 37, nrows + 100};
    for (int qi = 0; qi < queries; qi++) {
        float q[4096];
        random_vec(q, d);
        size_t k = ks[qi % 4];
        sl_vindex_search(ix, q, k, NULL, NULL, true, out, &n, &err);
        if (!agrees(out, n, ref, ref_search(&r, q, k, NULL, NULL, ref), why, sizeof why))
            bad++;
        sl_vindex_search(ix, q, k, keep_even, NULL, true, out, &n, &err);
        if (!agrees(out, n, ref, ref_search(&r, q, k, keep_even, NULL, ref), why, sizeof why))
            bad++;
    }
    CHECK(!bad, "d=%d: %d queries (k 1, 10, 37, over the count; with and without a filter) as the "
                "naive loop %s",
          d, queries, why);
    /* removed and replaced rows */
    for (size_t i = 0; i < nrows; i += 7) {
        sl_vindex_remove(ix, ids[i]);
        r.gone[i] = true;
    }
    for (size_t i = 3; i < nrows; i += 11) {
        if (r.gone[i])
            continue;
        float *nv = r.vs + r.n * d;
        random_vec(nv, d);
        sl_vindex_add(ix, ids[i], nv, &err);
        r.gone[i] = true;
        r.ids[r.n++] = ids[i];
        if (r.n >= nrows + 64)
            break;
    }
    size_t live = 0;
    for (size_t i = 0; i < r.n; i++)
        live += !r.gone[i];
    CHECK(sl_vindex_count(ix) == live, "d=%d: count %zu after removes and replaces (%zu)", d,
          sl_vindex_count(ix), live);
    bad = 0;
    for (int qi = 0; qi < queries; qi++) {
        float q[4096];
        random_vec(q, d);
        size_t k = ks[qi % 4];
        sl_vindex_search(ix, q, k, NULL, NULL, true, out, &n, &err);
        if (!agrees(out, n, ref, ref_search(&r, q, k, NULL, NULL, ref), why, sizeof why))
            bad++;
    }
    CHECK(!bad, "d=%d: after removes and replaces, still the naive loop's answer %s", d, why);
    /* a replaced row answers with its new vector */
    float *last = r.vs + (r.n - 1) * d;
    if (d > 1)
    CHECK(sl_vindex_search(ix, last, 1, NULL, NULL, true, out, &n, &err) == 0 && n == 1 &&
              out[0].id == r.ids[r.n - 1] && out[0].score > 0.9999f,
          "d=%d: a replaced row is found by its new vector", d);
    free(tie), free(out), free(ref), free(ids), free(vs);
    free(r.ids), free(r.vs), free(r.gone);
    sl_vindex_free(ix);
}

/* ---- approximate -------------------------------------------------------------- */

static double recall(sl_vindex *ix, const float *qs, int nq, int d, size_t k, sl_vindex_keep keep,
                     void *ud)
{
    sl_err err = {0};
    sl_vhit a[64], e[64];
    size_t na, ne, found = 0, total = 0;
    for (int i = 0; i < nq; i++) {
        sl_vindex_search(ix, qs + (size_t)i * d, k, keep, ud, false, a, &na, &err);
        sl_vindex_search(ix, qs + (size_t)i * d, k, keep, ud, true, e, &ne, &err);
        for (size_t x = 0; x < ne; x++)
            for (size_t y = 0; y < na; y++)
                if (a[y].id == e[x].id) {
                    found++;
                    break;
                }
        total += ne;
    }
    return total ? (double)found / (double)total : 1;
}

typedef struct {
    sl_vindex *ix;
    const float *qs;
    int nq, d;
    const sl_vhit *want; /* nq * 10 */
    int mismatches;
} conc_arg;

/* sl_vhit has padding: compared field by field. */
static bool same_hits(const sl_vhit *a, const sl_vhit *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].id != b[i].id || a[i].score != b[i].score)
            return false;
    return true;
}

static void *conc_search(void *p)
{
    conc_arg *c = p;
    sl_err err = {0};
    for (int rep = 0; rep < 5; rep++)
        for (int i = 0; i < c->nq; i++) {
            sl_vhit h[10];
            size_t n;
            if (sl_vindex_search(c->ix, c->qs + (size_t)i * c->d, 10, NULL, NULL, false, h, &n,
                                 &err) ||
                n != 10 || !same_hits(h, c->want + (size_t)i * 10, 10))
                c->mismatches++;
        }
    return NULL;
}

static sl_vindex *saved_and_loaded(const sl_vindex *ix, size_t *bytes)
{
    sl_err err = {0};
    int fd = memfd_create("vx", 0);
    if (sl_vindex_save(ix, fd, &err))
        return NULL;
    *bytes = (size_t)lseek(fd, 0, SEEK_CUR);
    lseek(fd, 0, SEEK_SET);
    sl_vindex *out = NULL;
    if (sl_vindex_load(fd, &out, &err))
        printf("# load: %s\n", err.msg);
    sl_err_clear(&err);
    close(fd);
    return out;
}

static bool same_answers(sl_vindex *a, sl_vindex *b, const float *qs, int nq, int d, bool exact,
                         sl_vindex_keep keep, void *ud)
{
    sl_err err = {0};
    for (int i = 0; i < nq; i++) {
        sl_vhit ha[10], hb[10];
        size_t na, nb;
        sl_vindex_search(a, qs + (size_t)i * d, 10, keep, ud, exact, ha, &na, &err);
        sl_vindex_search(b, qs + (size_t)i * d, 10, keep, ud, exact, hb, &nb, &err);
        if (na != nb || !same_hits(ha, hb, na))
            return false;
    }
    return true;
}

static void test_approx(void)
{
    const int d = 64, n = 6000, nq = 100;
    sl_err err = {0};
    float *all = clustered(n + nq, d, 60, 0.35, 12345);
    const float *qs = all + (size_t)n * d;
    sl_vindex *ix = sl_vindex_new(d, &err);
    long long *ids = malloc(n * sizeof *ids);
    for (int i = 0; i < n; i++)
        ids[i] = 1000 + i;
    sl_vindex_add_many(ix, ids, all, n, &err);
    int rc = sl_vindex_build(ix, NULL, &err);
    CHECK(rc == 0 && sl_vindex_has_approx(ix), "build over %d rows: %s", n,
          err.msg ? err.msg : "ok");
    sl_err_clear(&err);
    double r = recall(ix, qs, nq, d, 10, NULL, NULL);
    CHECK(r >= 0.95, "recall@10 of the graph on clustered data: %.3f (>= 0.95)", r);
    int m30[2] = {10, 3}, m2[2] = {50, 1};
    r = recall(ix, qs, nq, d, 10, keep_mod, m30);
    CHECK(r >= 0.95, "recall@10 with a filter keeping 30%%: %.3f (>= 0.95)", r);
    r = recall(ix, qs, nq, d, 10, keep_mod, m2);
    CHECK(r == 1.0, "a filter keeping 2%% goes to the exact scan: recall %.3f", r);
    /* every approximate hit passes the filter and carries its exact score */
    sl_vhit a[10], e[1];
    size_t na, ne;
    int wrong = 0;
    for (int i = 0; i < nq; i++) {
        sl_vindex_search(ix, qs + (size_t)i * d, 10, keep_mod, m30, false, a, &na, &err);
        for (size_t j = 0; j < na; j++)
            if (!keep_mod(a[j].id, m30) || (j && a[j].score > a[j - 1].score))
                wrong++;
        sl_vindex_search(ix, qs + (size_t)i * d, 1, keep_mod, m30, true, e, &ne, &err);
        if (na && ne && a[0].id == e[0].id && a[0].score != e[0].score)
            wrong++;
    }
    CHECK(!wrong, "approximate hits pass the filter, are ordered and score as the exact scan");
    /* rows added after the build: found through the tail */
    float *fresh = malloc(d * sizeof(float));
    memcpy(fresh, qs, d * sizeof(float));
    sl_vindex_add(ix, 1, fresh, &err);
    CHECK(sl_vindex_search(ix, qs, 3, NULL, NULL, false, a, &na, &err) == 0 && na == 3 &&
              a[0].id == 1 && a[0].score > 0.9999f,
          "a row added after the build is found on the approximate path");
    /* removed and replaced rows are never returned */
    sl_vindex_search(ix, qs + d, 10, NULL, NULL, false, a, &na, &err);
    long long gone = a[0].id, moved = a[1].id;
    sl_vindex_remove(ix, gone);
    float *far = malloc(d * sizeof(float));
    for (int j = 0; j < d; j++)
        far[j] = -qs[d + j];
    sl_vindex_add(ix, moved, far, &err);
    sl_vindex_search(ix, qs + d, 10, NULL, NULL, false, a, &na, &err);
    bool seen = false;
    for (size_t j = 0; j < na; j++)
        seen |= a[j].id == gone || a[j].id == moved;
    CHECK(na == 10 && !seen, "a removed row and a replaced one leave the approximate hits");
    sl_vindex_search(ix, far, 1, NULL, NULL, false, a, &na, &err);
    CHECK(na == 1 && a[0].id == moved, "the replaced row is found by its new vector (tail)");
    CHECK(sl_vindex_count(ix) == (size_t)n, "count %zu", sl_vindex_count(ix));

    /* save and load: the same answers on both paths */
    size_t bytes = 0;
    sl_vindex *back = saved_and_loaded(ix, &bytes);
    CHECK(back && sl_vindex_has_approx(back) && sl_vindex_count(back) == sl_vindex_count(ix) &&
              sl_vindex_dims(back) == d,
          "saved (%zu bytes) and loaded with its graph", bytes);
    CHECK(back && same_answers(ix, back, qs, nq, d, false, NULL, NULL) &&
              same_answers(ix, back, qs, nq, d, true, NULL, NULL) &&
              same_answers(ix, back, qs, nq, d, false, keep_mod, m30),
          "the loaded index answers as the saved one (approximate, exact, filtered)");
    sl_vindex_free(back);

    /* a rebuild drops the dead rows; answers stay */
    CHECK(sl_vindex_build(ix, &(sl_vindex_build_opts){.m = 8, .ef_construction = 64, .threads = 1},
                          &err) == 0,
          "rebuilt with M 8, efc 64, one thread");
    r = recall(ix, qs, nq, d, 10, NULL, NULL);
    CHECK(r >= 0.9, "recall@10 after the rebuild: %.3f", r);
    CHECK(sl_vindex_set_ef(ix, 0, &err) == -1 && sl_vindex_set_ef(ix, 400, &err) == 0,
          "ef_search 0 refused, 400 taken");
    sl_err_clear(&err);
    double r400 = recall(ix, qs, nq, d, 10, NULL, NULL);
    CHECK(r400 >= r && r400 >= 0.97, "ef_search 400: recall %.3f", r400);

    /* most of the graph removed: what it cannot give, the exact scan does */
    sl_vindex *sparse = sl_vindex_new(d, &err);
    sl_vindex_add_many(sparse, ids, all, n, &err);
    sl_vindex_build(sparse, &(sl_vindex_build_opts){.m = 8, .threads = 2}, &err);
    for (int i = 0; i < n; i++)
        if (i % 50)
            sl_vindex_remove(sparse, ids[i]);
    int short_or_wrong = 0;
    for (int i = 0; i < nq; i++) {
        sl_vindex_search(sparse, qs + (size_t)i * d, 10, NULL, NULL, false, a, &na, &err);
        sl_vhit ex[10];
        size_t nx;
        sl_vindex_search(sparse, qs + (size_t)i * d, 10, NULL, NULL, true, ex, &nx, &err);
        if (na != 10 || nx != 10)
            short_or_wrong++;
        for (size_t j = 0; j < na; j++)
            if (ids[(a[j].id - 1000)] % 50 != 1000 % 50)
                short_or_wrong++;
    }
    CHECK(sl_vindex_count(sparse) == (size_t)n / 50 && !short_or_wrong,
          "49 of 50 graph rows removed: still 10 live hits a query (%d short or wrong)",
          short_or_wrong);
    sl_vindex_free(sparse);

    /* concurrent searches */
    sl_vhit *want = malloc((size_t)nq * 10 * sizeof *want);
    for (int i = 0; i < nq; i++)
        sl_vindex_search(ix, qs + (size_t)i * d, 10, NULL, NULL, false, want + (size_t)i * 10, &na,
                         &err);
    pthread_t th[4];
    conc_arg ca[4];
    for (int t = 0; t < 4; t++) {
        ca[t] = (conc_arg){ix, qs, nq, d, want, 0};
        pthread_create(&th[t], NULL, conc_search, &ca[t]);
    }
    int mism = 0;
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        mism += ca[t].mismatches;
    }
    CHECK(!mism, "4 threads x 500 searches at once: the single-threaded answers (%d differ)", mism);
    free(want), free(fresh), free(far), free(ids), free(all);
    sl_vindex_free(ix);
}

/* ---- hostile files ------------------------------------------------------------- */

static int load_bytes(const unsigned char *p, size_t n, sl_vindex **out, sl_err *err)
{
    int fd = memfd_create("vx", 0);
    if (n && write(fd, p, n) != (ssize_t)n)
        abort();
    lseek(fd, 0, SEEK_SET);
    int rc = sl_vindex_load(fd, out, err);
    close(fd);
    return rc;
}

/* Anything that loads must search without harm. */
static void exercise(sl_vindex *ix)
{
    sl_err err = {0};
    int d = sl_vindex_dims(ix);
    float *q = calloc((size_t)d, sizeof(float));
    q[0] = 1;
    sl_vhit h[5];
    size_t n;
    sl_vindex_search(ix, q, 5, NULL, NULL, false, h, &n, &err);
    sl_err_clear(&err);
    sl_vindex_search(ix, q, 5, keep_even, NULL, false, h, &n, &err);
    sl_err_clear(&err);
    free(q);
}

static void test_hostile(void)
{
    sl_err err = {0};
    const int d = 4;
    sl_vindex *ix = sl_vindex_new(d, &err);
    float *v = clustered(40, d, 3, 0.3, 777);
    for (int i = 0; i < 40; i++)
        sl_vindex_add(ix, i * 2, v + i * d, &err);
    sl_vindex_build(ix, &(sl_vindex_build_opts){.m = 4, .threads = 1}, &err);
    sl_vindex_remove(ix, 6); /* a dead row in the graph */
    int fd = memfd_create("vx", 0);
    sl_vindex_save(ix, fd, &err);
    size_t len = (size_t)lseek(fd, 0, SEEK_CUR);
    unsigned char *file = malloc(len + 8);
    if (pread(fd, file, len, 0) != (ssize_t)len)
        abort();
    close(fd);
    sl_vindex *back = NULL;
    CHECK(load_bytes(file, len, &back, &err) == 0 && back && sl_vindex_has_approx(back) &&
              sl_vindex_count(back) == 39,
          "a small index with a graph and a removed row loads (%zu bytes)", len);
    sl_vindex_free(back);

    int wrong = 0;
    for (size_t cut = 0; cut < len; cut++) {
        back = NULL;
        if (load_bytes(file, cut, &back, &err) != -1 || back || err.code != SL_EPARSE || !err.msg)
            wrong++;
        sl_err_clear(&err);
    }
    CHECK(!wrong, "every one of the %zu truncations is an SL_EPARSE error (%d not)", len, wrong);

    int loaded = 0, failed = 0;
    for (size_t i = 0; i < len; i++) {
        for (int f = 0; f < 2; f++) {
            unsigned char keep = file[i];
            file[i] ^= f ? 0x80 : 0xFF;
            back = NULL;
            if (load_bytes(file, len, &back, &err) == 0) {
                loaded++;
                exercise(back);
                sl_vindex_free(back);
            } else {
                failed += err.msg != NULL;
            }
            sl_err_clear(&err);
            file[i] = keep;
        }
    }
    CHECK(loaded + failed == (int)len * 2,
          "every byte flipped two ways: %d load (and search), %d fail with a message", loaded,
          failed);

    file[len] = 0;
    CHECK(load_bytes(file, len + 1, &back, &err) == -1 && strstr(err.msg, "more data"),
          "trailing data: %s", err.msg);
    sl_err_clear(&err);

    /* crafted headers */
    unsigned char h[56];
    memcpy(h, file, sizeof h);
    uint64_t big = (uint64_t)1 << 31;
    memcpy(h + 16, &big, 8);
    memset(h + 24, 0, 32); /* no graph */
    CHECK(load_bytes(h, sizeof h, &back, &err) == -1 && err.code == SL_EPARSE &&
              strstr(err.msg, "truncated"),
          "2^31 rows claimed by a 56-byte file: refused before any allocation: %s", err.msg);
    sl_err_clear(&err);
    big++;
    memcpy(h + 16, &big, 8);
    CHECK(load_bytes(h, sizeof h, &back, &err) == -1 && strstr(err.msg, "2147483649 rows"),
          "more rows than the bound: %s", err.msg);
    sl_err_clear(&err);
    uint32_t dims = 20000;
    memcpy(h, file, sizeof h);
    memcpy(h + 12, &dims, 4);
    CHECK(load_bytes(h, sizeof h, &back, &err) == -1 && strstr(err.msg, "20000 dimensions"),
          "20000 dimensions: %s", err.msg);
    sl_err_clear(&err);
    memcpy(h, file, sizeof h);
    h[0] = 'X';
    CHECK(load_bytes(h, sizeof h, &back, &err) == -1 && strstr(err.msg, "not a sluice vector index"),
          "wrong magic: %s", err.msg);
    sl_err_clear(&err);
    memcpy(h, file, sizeof h);
    h[8] = 2;
    CHECK(load_bytes(h, sizeof h, &back, &err) == -1 && strstr(err.msg, "version 2"),
          "another version: %s", err.msg);
    sl_err_clear(&err);

    /* through a pipe (no size to check up front): grows with the data */
    int p[2];
    if (pipe(p))
        abort();
    memcpy(h, file, sizeof h);
    big = (uint64_t)1 << 30;
    memcpy(h + 16, &big, 8);
    memset(h + 24, 0, 32);
    if (write(p[1], h, sizeof h) != (ssize_t)sizeof h)
        abort();
    close(p[1]);
    CHECK(sl_vindex_load(p[0], &back, &err) == -1 && strstr(err.msg, "truncated"),
          "2^30 rows claimed through a pipe: truncated, not allocated: %s", err.msg);
    sl_err_clear(&err);
    close(p[0]);

    /* rows the loader must refuse: not unit, NaN, a repeated id */
    size_t rows_at = 56 + 40 * 8 + 40;
    float x;
    memcpy(&x, file + rows_at, 4);
    float two = x * 2 + 1;
    memcpy(file + rows_at, &two, 4);
    CHECK(load_bytes(file, len, &back, &err) == -1 && strstr(err.msg, "not a unit vector"),
          "a row that is not a unit vector: %s", err.msg);
    sl_err_clear(&err);
    float nanv = NAN;
    memcpy(file + rows_at, &nanv, 4);
    CHECK(load_bytes(file, len, &back, &err) == -1 && strstr(err.msg, "NaN"), "a NaN: %s", err.msg);
    sl_err_clear(&err);
    memcpy(file + rows_at, &x, 4);
    long long id0;
    memcpy(&id0, file + 56, 8);
    memcpy(file + 56 + 8, &id0, 8);
    CHECK(load_bytes(file, len, &back, &err) == -1 && strstr(err.msg, "repeat"),
          "two live rows with one id: %s", err.msg);
    sl_err_clear(&err);

    /* without a graph */
    sl_vindex *plain = sl_vindex_new(d, &err);
    for (int i = 0; i < 40; i++)
        sl_vindex_add(plain, i, v + i * d, &err);
    size_t bytes;
    back = saved_and_loaded(plain, &bytes);
    CHECK(back && !sl_vindex_has_approx(back) && sl_vindex_count(back) == 40 &&
              same_answers(plain, back, v, 40, d, true, NULL, NULL),
          "an index without a graph round-trips (%zu bytes)", bytes);
    sl_vindex_free(back);
    sl_vindex *empty = sl_vindex_new(7, &err);
    back = saved_and_loaded(empty, &bytes);
    CHECK(back && sl_vindex_count(back) == 0 && sl_vindex_dims(back) == 7 && bytes == 56,
          "an empty index round-trips");
    sl_vindex_free(back);
    sl_vindex_free(empty);
    sl_vindex_free(plain);
    free(file);
    free(v);
    sl_vindex_free(ix);
}

/* A process that cannot open the graph's code (here: no descriptor left
 * for the memfd) refuses to build, says why, and searches exactly.  Run in
 * a child before anything in this process opens that code. */
static void test_no_graph_code(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {32, 32};
        setrlimit(RLIMIT_NOFILE, &rl);
        while (open("/dev/null", O_RDONLY) >= 0)
            ;
        sl_err err = {0};
        sl_vindex *ix = sl_vindex_new(8, &err);
        float *v = clustered(50, 8, 3, 0.3, 99);
        for (int i = 0; i < 50; i++)
            sl_vindex_add(ix, i, v + i * 8, &err);
        int bad = 0;
        if (sl_vindex_build(ix, NULL, &err) != -1 || err.code != SL_EUNSUPPORTED ||
            !strstr(err.msg, "memfd") || !strstr(err.msg, "searches stay exact") ||
            sl_vindex_has_approx(ix))
            bad |= 1;
        sl_err_clear(&err);
        sl_vhit a[5], e[5];
        size_t na, ne;
        if (sl_vindex_search(ix, v, 5, NULL, NULL, false, a, &na, &err) ||
            sl_vindex_search(ix, v, 5, NULL, NULL, true, e, &ne, &err) || na != 5 || ne != 5)
            bad |= 2;
        for (size_t i = 0; i < na && !(bad & 2); i++)
            if (a[i].id != e[i].id || a[i].score != e[i].score)
                bad |= 2;
        _exit(bad);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "without a descriptor for the graph's code: the build is refused (SL_EUNSUPPORTED, "
          "names the memfd, says searches stay exact) and searches are the exact scan's "
          "(child status %d)",
          st);
}

int main(void)
{
    test_no_graph_code();
    test_errors();
    exact_vs_naive(37, 3000, 80);
    exact_vs_naive(256, 1500, 40);
    exact_vs_naive(1, 50, 8);
    test_approx();
    test_hostile();
    return tap_done();
}
