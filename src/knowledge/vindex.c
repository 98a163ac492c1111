/*
 * vindex — rows in one matrix, an exact SIMD scan, and hnswlib's HNSW graph
 * opened from a shared object sluice carries (vindex.h says what each call
 * promises).
 *
 * Rows live in slots: a slot is appended for every add (a replaced or
 * removed row's slot is marked dead and stays, because the graph may still
 * route through it) and the slots are compacted by the next build.  The
 * graph covers slots [0, built); slots from `built` on are the tail, which
 * searches scan exactly.
 *
 * The saved form (little-endian, as this machine; a file from a big-endian
 * one is refused by its magic):
 *
 *     "SLVINDEX" u32 version (1) u32 dims u64 slots u64 built
 *     u32 m u32 ef_construction u32 ef_search u32 maxlevel u32 enterpoint u32 0
 *     i64 ids[slots]  u8 dead[slots]  f32 rows[slots][dims]
 *     built > 0: built elements, each u64 slot u32 level, then for each
 *                level 0..level: u32 count, u32 ids[count]
 *
 * Everything in it is checked before it is used: sizes against the
 * bounds of vindex.h and against the bytes that are really there (memory
 * grows with the data read, never with a count the file claims), rows
 * finite unit vectors, ids unique among live rows, and the graph's every
 * element, level and link, so that no search can leave the matrix.
 */
#include "knowledge/vindex.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "core/dl.h"
#include "knowledge/hnsw_shim.h"

/* ---- the shared object with hnswlib --------------------------------------- */

/* Built from hnsw_shim.cc by the Makefile and embedded as bytes
 * ($(BUILD)/gen/hnsw_blob.c), as the sandbox's init is. */
extern const unsigned char sl_hnsw_blob[];
extern const size_t sl_hnsw_blob_len;

#define HN_FNS(X)                                                                                 \
    X(sl_hnsw_new) X(sl_hnsw_free) X(sl_hnsw_add_range) X(sl_hnsw_set_ef)                         \
    X(sl_hnsw_mark_deleted) X(sl_hnsw_search) X(sl_hnsw_count) X(sl_hnsw_params)                  \
    X(sl_hnsw_element) X(sl_hnsw_links) X(sl_hnsw_restore)

#define HN_PTR(f) static __typeof__(&f) hn_##f;
HN_FNS(HN_PTR)
#undef HN_PTR
/* The table, the names and the library's description are filled when the
 * index is first built or loaded, not by initializers: pointers in static
 * initializers are relocations that every sluice start would apply. */
static sl_dl_sym hn_syms[16];
static char hn_path[48];
static const char *hn_names[2];
static sl_dl_lib hn_lib;

static void hn_describe(void)
{
    size_t i = 0;
#define HN_SYM(f) hn_syms[i++] = (sl_dl_sym){#f, (void **)&hn_##f};
    HN_FNS(HN_SYM)
#undef HN_SYM
    hn_syms[i] = (sl_dl_sym){NULL, NULL};
    hn_names[0] = hn_path;
    hn_names[1] = NULL;
    hn_lib = (sl_dl_lib){.what = "libstdc++ (for the approximate vector index)",
                         .sonames = hn_names, .package = "libstdc++6", .syms = hn_syms};
}

#ifdef MFD_EXEC
#define VX_MFD_EXEC MFD_EXEC
#else
#define VX_MFD_EXEC 0x0010U
#endif

static pthread_once_t hn_once = PTHREAD_ONCE_INIT;
static char hn_why[200];

/* Once per process: the object into a memfd, dlopen'd from /proc/self/fd
 * (the mapping outlives the descriptor, which is closed). */
static void hn_open(void)
{
    /* MFD_EXEC: kernels with vm.memfd_noexec=1 map memfds without exec
     * unless asked; older kernels do not know the flag (EINVAL). */
    int fd = memfd_create("sluice-hnsw", MFD_CLOEXEC | VX_MFD_EXEC);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("sluice-hnsw", MFD_CLOEXEC);
    size_t off = 0;
    while (fd >= 0 && off < sl_hnsw_blob_len) {
        ssize_t w = write(fd, sl_hnsw_blob + off, sl_hnsw_blob_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd < 0 || off != sl_hnsw_blob_len) {
        snprintf(hn_why, sizeof hn_why,
                 "cannot write the approximate vector index's code to a memfd: %s",
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    snprintf(hn_path, sizeof hn_path, "/proc/self/fd/%d", fd);
    hn_describe();
    sl_dl_load(&hn_lib, NULL);
    close(fd);
}

static int hn_load(sl_err *err)
{
    pthread_once(&hn_once, hn_open);
    if (hn_why[0])
        return sl_err_set(err, SL_EUNSUPPORTED, "%s", hn_why);
    return sl_dl_load(&hn_lib, err);
}

/* ---- dot products ------------------------------------------------------------ */

typedef float vx_v4 __attribute__((vector_size(16)));

/* Four independent sums, so the adds pipeline; the same order of
 * operations for every row, so equal rows score equally. */
static float dot_generic(const float *a, const float *b, size_t n)
{
    vx_v4 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vx_v4 a0, a1, a2, a3, b0, b1, b2, b3;
        memcpy(&a0, a + i, 16), memcpy(&b0, b + i, 16);
        memcpy(&a1, a + i + 4, 16), memcpy(&b1, b + i + 4, 16);
        memcpy(&a2, a + i + 8, 16), memcpy(&b2, b + i + 8, 16);
        memcpy(&a3, a + i + 12, 16), memcpy(&b3, b + i + 12, 16);
        s0 += a0 * b0, s1 += a1 * b1, s2 += a2 * b2, s3 += a3 * b3;
    }
    vx_v4 s = (s0 + s1) + (s2 + s3);
    float r = (s[0] + s[1]) + (s[2] + s[3]);
    for (; i < n; i++)
        r += a[i] * b[i];
    return r;
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static float dot_avx2(const float *a, const float *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float r = _mm_cvtss_f32(h);
    for (; i < n; i++)
        r += a[i] * b[i];
    return r;
}

/* cpuid by hand, not __builtin_cpu_supports: that one brings libgcc's
 * constructor, which runs cpuid (a trap to the hypervisor in a VM) at every
 * sluice start; measured, 4% of `sluice --version`. */
static bool has_avx2_fma(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return false;
    bool fma = c & bit_FMA, osxsave = c & bit_OSXSAVE, avx = c & bit_AVX;
    if (!fma || !osxsave || !avx)
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) /* the OS saves the SSE and AVX state */
        return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return b & bit_AVX2;
}
#endif

static sl_hnsw_dot_fn dot_fn;

/* Chosen on first use, not at process start; two threads that race here
 * store the same pointer. */
static sl_hnsw_dot_fn dot_pick(void)
{
    sl_hnsw_dot_fn f = __atomic_load_n(&dot_fn, __ATOMIC_RELAXED);
    if (f)
        return f;
    f = dot_generic;
#if defined(__x86_64__)
    if (has_avx2_fma())
        f = dot_avx2;
#endif
    __atomic_store_n(&dot_fn, f, __ATOMIC_RELAXED);
    return f;
}

/* sqrt without libm (sluice does not link it: core/math.h). */
static double vx_sqrt(double x)
{
#if defined(__SSE2__)
    return _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(x)));
#else
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 200; i++) {
        double nr = 0.5 * (r + x / r);
        if (nr == r)
            break;
        r = nr;
    }
    return r;
#endif
}

/* v / |v| into out, or -1 for a zero, NaN or infinite vector. */
static int normalise(const float *v, size_t dims, float *out)
{
    double ss = 0;
    for (size_t i = 0; i < dims; i++) {
        if (!__builtin_isfinite(v[i]))
            return -1;
        ss += (double)v[i] * v[i];
    }
    if (!(ss > 0))
        return -1;
    double inv = 1.0 / vx_sqrt(ss);
    for (size_t i = 0; i < dims; i++)
        out[i] = (float)(v[i] * inv);
    return 0;
}

/* ---- the index --------------------------------------------------------------- */

struct sl_vindex {
    size_t dims;
    size_t slots, cap;     /* rows used / allocated */
    float *rows;           /* cap * dims, unit vectors */
    long long *ids;        /* cap */
    unsigned char *dead;   /* cap */
    size_t live;
    /* id -> slot + 1 of the live row, open addressing (0 empty) */
    uint32_t *tab;
    size_t tab_cap;        /* a power of two, or 0 */
    /* the approximate part */
    sl_hnsw *hnsw;
    size_t built;          /* slots [0, built) are in the graph */
    size_t dead_built;     /* of which dead */
    int m, efc, ef;
};

static size_t id_hash(long long id)
{
    uint64_t x = (uint64_t)id + UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return (size_t)(x ^ (x >> 31));
}

/* The table position of id, or of the empty place where it would go. */
static size_t tab_find(const sl_vindex *ix, long long id)
{
    size_t mask = ix->tab_cap - 1;
    size_t i = id_hash(id) & mask;
    while (ix->tab[i] && ix->ids[ix->tab[i] - 1] != id)
        i = (i + 1) & mask;
    return i;
}

static void tab_rebuild(sl_vindex *ix, size_t need)
{
    size_t cap = 16;
    while (cap < need * 2)
        cap *= 2;
    free(ix->tab);
    ix->tab = sl_xcalloc(cap, sizeof *ix->tab);
    ix->tab_cap = cap;
    for (size_t s = 0; s < ix->slots; s++)
        if (!ix->dead[s])
            ix->tab[tab_find(ix, ix->ids[s])] = (uint32_t)(s + 1);
}

/* Removes the entry at i, shifting back the ones after it that would
 * otherwise become unreachable (linear probing without tombstones). */
static void tab_erase(sl_vindex *ix, size_t i)
{
    size_t mask = ix->tab_cap - 1;
    size_t j = i;
    for (;;) {
        ix->tab[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!ix->tab[j])
                return;
            size_t home = id_hash(ix->ids[ix->tab[j] - 1]) & mask;
            /* j's entry may move to i when its home is not in (i, j] */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
                break;
        }
        ix->tab[i] = ix->tab[j];
        i = j;
    }
}

sl_vindex *sl_vindex_new(int dims, sl_err *err)
{
    if (dims < 1 || dims > SL_VINDEX_MAX_DIMS) {
        sl_err_set(err, SL_EINVAL,
                   "a vector index needs 1 to %d dimensions, not %d: check the embedding "
                   "model's output size",
                   SL_VINDEX_MAX_DIMS, dims);
        return NULL;
    }
    sl_vindex *ix = sl_xcalloc(1, sizeof *ix);
    ix->dims = (size_t)dims;
    return ix;
}

static void drop_approx(sl_vindex *ix)
{
    if (ix->hnsw)
        hn_sl_hnsw_free(ix->hnsw);
    ix->hnsw = NULL;
    ix->built = ix->dead_built = 0;
}

void sl_vindex_free(sl_vindex *ix)
{
    if (!ix)
        return;
    drop_approx(ix);
    free(ix->rows);
    free(ix->ids);
    free(ix->dead);
    free(ix->tab);
    free(ix);
}

int sl_vindex_dims(const sl_vindex *ix)
{
    return (int)ix->dims;
}

size_t sl_vindex_count(const sl_vindex *ix)
{
    return ix->live;
}

bool sl_vindex_has_approx(const sl_vindex *ix)
{
    return ix->hnsw && ix->built > 0;
}

static void reserve(sl_vindex *ix, size_t need)
{
    if (need <= ix->cap)
        return;
    size_t cap = ix->cap ? ix->cap : 64;
    while (cap < need)
        cap = cap > SL_VINDEX_MAX_ROWS / 2 ? SL_VINDEX_MAX_ROWS : cap * 2;
    ix->rows = sl_xrealloc(ix->rows, cap * ix->dims * sizeof(float));
    ix->ids = sl_xrealloc(ix->ids, cap * sizeof *ix->ids);
    ix->dead = sl_xrealloc(ix->dead, cap);
    ix->cap = cap;
}

/* Marks slot s dead (its row removed or replaced). */
static void kill_slot(sl_vindex *ix, size_t s)
{
    ix->dead[s] = 1;
    ix->live--;
    if (s < ix->built && ix->hnsw) {
        char why[160];
        /* Cannot fail: the slot is in the graph and was alive. */
        if (hn_sl_hnsw_mark_deleted(ix->hnsw, s, why, sizeof why))
            SL_BUG(why);
        ix->dead_built++;
    }
}

int sl_vindex_remove(sl_vindex *ix, long long id)
{
    if (!ix->tab_cap)
        return -1;
    size_t i = tab_find(ix, id);
    if (!ix->tab[i])
        return -1;
    size_t s = ix->tab[i] - 1;
    tab_erase(ix, i);
    kill_slot(ix, s);
    return 0;
}

/* Appends a normalised row; the caller checked room. */
static void append(sl_vindex *ix, long long id, const float *unit)
{
    if ((ix->live + 1) * 2 > ix->tab_cap)
        tab_rebuild(ix, ix->live + 1 > 8 ? ix->live + 1 : 8);
    size_t i = tab_find(ix, id);
    if (ix->tab[i]) {
        kill_slot(ix, ix->tab[i] - 1);
        ix->tab[i] = 0; /* overwritten below; no shift needed */
    }
    size_t s = ix->slots++;
    if (unit != ix->rows + s * ix->dims)
        memcpy(ix->rows + s * ix->dims, unit, ix->dims * sizeof(float));
    ix->ids[s] = id;
    ix->dead[s] = 0;
    ix->tab[i] = (uint32_t)(s + 1);
    ix->live++;
}

static int room(const sl_vindex *ix, size_t n, sl_err *err)
{
    if (n > SL_VINDEX_MAX_ROWS - ix->slots)
        return sl_err_set(err, SL_ELIMIT,
                          "a vector index holds at most %zu rows (removed ones count until the "
                          "next build); it has %zu and %zu more were added: split the knowledge "
                          "base",
                          SL_VINDEX_MAX_ROWS, ix->slots, n);
    return 0;
}

int sl_vindex_add(sl_vindex *ix, long long id, const float *v, sl_err *err)
{
    if (room(ix, 1, err))
        return -1;
    reserve(ix, ix->slots + 1);
    if (normalise(v, ix->dims, ix->rows + ix->slots * ix->dims))
        return sl_err_set(err, SL_EINVAL,
                          "the vector of row %lld is zero or has a NaN or infinite value: "
                          "an embedding model returned it; re-embed the chunk",
                          id);
    append(ix, id, ix->rows + ix->slots * ix->dims);
    return 0;
}

int sl_vindex_add_many(sl_vindex *ix, const long long *ids, const float *vs, size_t n, sl_err *err)
{
    if (!n)
        return 0;
    if (room(ix, n, err))
        return -1;
    reserve(ix, ix->slots + n);
    /* Normalised into the free rows first, so a bad vector adds nothing. */
    float *staged = ix->rows + ix->slots * ix->dims;
    for (size_t i = 0; i < n; i++)
        if (normalise(vs + i * ix->dims, ix->dims, staged + i * ix->dims))
            return sl_err_set(err, SL_EINVAL,
                              "the vector of row %lld (number %zu of %zu) is zero or has a NaN "
                              "or infinite value: re-embed that chunk; nothing was added",
                              ids[i], i + 1, n);
    if ((ix->live + n) * 2 > ix->tab_cap)
        tab_rebuild(ix, ix->live + n);
    for (size_t i = 0; i < n; i++)
        append(ix, ids[i], staged + i * ix->dims);
    return 0;
}

/* ---- search ------------------------------------------------------------------ */

typedef struct {
    float score;
    long long id;
} vx_cand;

/* a ranks below b: lower score, or the same score and a higher id */
static bool below(const vx_cand *a, const vx_cand *b)
{
    return a->score < b->score || (a->score == b->score && a->id > b->id);
}

/* The best k so far: a heap with the lowest-ranked on top. */
typedef struct {
    vx_cand *v;
    size_t n, k;
} vx_heap;

static void heap_push(vx_heap *h, float score, long long id)
{
    vx_cand c = {score, id};
    size_t i;
    if (h->n < h->k) {
        i = h->n++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (!below(&c, &h->v[p]))
                break;
            h->v[i] = h->v[p];
            i = p;
        }
        h->v[i] = c;
        return;
    }
    if (!h->k || !below(&h->v[0], &c))
        return;
    i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const vx_cand *mv = &c;
        if (l < h->n && below(&h->v[l], mv))
            m = l, mv = &h->v[l];
        if (r < h->n && below(&h->v[r], mv))
            m = r, mv = &h->v[r];
        if (m == i)
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    h->v[i] = c;
}

static int cmp_hits(const void *pa, const void *pb)
{
    const vx_cand *a = pa, *b = pb;
    return below(a, b) ? 1 : below(b, a) ? -1 : 0;
}

/* Scores every live, kept slot in [from, to). */
static void scan(const sl_vindex *ix, sl_hnsw_dot_fn dot, const float *q, size_t from, size_t to,
                 sl_vindex_keep keep, void *ud, vx_heap *h)
{
    const float *row = ix->rows + from * ix->dims;
    for (size_t s = from; s < to; s++, row += ix->dims) {
        if (ix->dead[s] || (keep && !keep(ix->ids[s], ud)))
            continue;
        heap_push(h, dot(q, row, ix->dims), ix->ids[s]);
    }
}

/* A filter keeping fewer rows than this share goes to the exact scan: it
 * scores only the rows kept, while the graph would have to fetch about
 * k / share candidates to find k that pass. */
#define VX_EXACT_SHARE 0.05
/* Candidates fetched per hit wanted, over 1 / share. */
#define VX_OVERFETCH 2.0
#define VX_SAMPLE 512

/* The share of the graph's live rows that keep keeps, from up to
 * VX_SAMPLE rows spread evenly over it. */
static double keep_share(const sl_vindex *ix, sl_vindex_keep keep, void *ud)
{
    size_t step = ix->built / VX_SAMPLE ? ix->built / VX_SAMPLE : 1;
    size_t seen = 0, kept = 0;
    for (size_t s = 0; s < ix->built; s += step) {
        if (ix->dead[s])
            continue;
        seen++;
        kept += keep(ix->ids[s], ud);
    }
    return seen ? (double)kept / (double)seen : 0;
}

/* The graph's hits into h; 1 when the exact scan should answer instead. */
static int approx(const sl_vindex *ix, sl_hnsw_dot_fn dot, const float *q, size_t k,
                  sl_vindex_keep keep, void *ud, vx_heap *h, sl_err *err)
{
    size_t live = ix->built - ix->dead_built;
    if (!live)
        return 0;
    double share = 1;
    if (keep) {
        share = keep_share(ix, keep, ud);
        if (share < VX_EXACT_SHARE)
            return 1;
    }
    size_t fetch = keep ? (size_t)((double)k / share * VX_OVERFETCH) + 16 : k;
    /* what the graph must give: k, or without a filter all its live rows
     * when it has fewer (the tail gives the rest) */
    size_t need = keep || k < live ? k : live;
    if (fetch > live)
        fetch = live;
    uint64_t *slots = NULL;
    float *dists = NULL;
    int rc = 1;
    for (int tries = 0; tries < 3; tries++) {
        if (fetch * 4 > live && keep)
            break; /* as dear as the scan; and the scan misses nothing */
        slots = sl_xrealloc(slots, fetch * sizeof *slots);
        dists = sl_xrealloc(dists, fetch * sizeof *dists);
        size_t got = 0;
        char why[200];
        if (hn_sl_hnsw_search(ix->hnsw, q, fetch, slots, dists, &got, why, sizeof why)) {
            rc = sl_err_set(err, SL_EINVAL, "%s", why);
            break;
        }
        h->n = 0;
        size_t kept = 0;
        for (size_t i = 0; i < got; i++) {
            uint64_t s = slots[i];
            if (s >= ix->built || ix->dead[s] || (keep && !keep(ix->ids[s], ud)))
                continue;
            kept++;
            /* scored again exactly: the same score on both paths */
            heap_push(h, dot(q, ix->rows + s * ix->dims, ix->dims), ix->ids[s]);
        }
        /* Enough, or else more candidates; a graph that has given all it
         * can (deleted elements eat into what it returns) leaves the answer
         * to the exact scan, which misses nothing. */
        if (kept >= need) {
            rc = 0;
            break;
        }
        if (got < fetch || fetch >= live)
            break;
        fetch *= 4;
        if (fetch > live)
            fetch = live;
    }
    free(slots);
    free(dists);
    return rc;
}

int sl_vindex_search(sl_vindex *ix, const float *q, size_t k, sl_vindex_keep keep, void *ud,
                     bool exact, sl_vhit *out, size_t *n, sl_err *err)
{
    *n = 0;
    if (!k || !ix->live)
        return 0;
    if (k > ix->live)
        k = ix->live;
    float qbuf[256];
    float *qn = ix->dims <= 256 ? qbuf : sl_xmalloc(ix->dims * sizeof(float));
    if (normalise(q, ix->dims, qn)) {
        if (qn != qbuf)
            free(qn);
        return sl_err_set(err, SL_EINVAL,
                          "the query vector is zero or has a NaN or infinite value: check the "
                          "embedding of the query");
    }
    sl_hnsw_dot_fn dot = dot_pick();
    vx_heap h = {sl_xmalloc(k * sizeof *h.v), 0, k};
    int rc = 0;
    size_t tail = 0;
    if (!exact && sl_vindex_has_approx(ix)) {
        rc = approx(ix, dot, qn, k, keep, ud, &h, err);
        if (rc == 0)
            tail = ix->built;
        else if (rc > 0)
            rc = 0, h.n = 0;
    }
    if (rc == 0) {
        scan(ix, dot, qn, tail, ix->slots, keep, ud, &h);
        qsort(h.v, h.n, sizeof *h.v, cmp_hits);
        for (size_t i = 0; i < h.n; i++)
            out[i] = (sl_vhit){h.v[i].id, h.v[i].score};
        *n = h.n;
    }
    free(h.v);
    if (qn != qbuf)
        free(qn);
    return rc;
}

/* ---- build ------------------------------------------------------------------- */

/* Drops the dead slots for good (the graph goes with them). */
static void compact(sl_vindex *ix)
{
    drop_approx(ix);
    if (ix->live == ix->slots)
        return;
    size_t w = 0;
    for (size_t s = 0; s < ix->slots; s++) {
        if (ix->dead[s])
            continue;
        if (w != s) {
            memcpy(ix->rows + w * ix->dims, ix->rows + s * ix->dims, ix->dims * sizeof(float));
            ix->ids[w] = ix->ids[s];
            ix->dead[w] = 0;
        }
        w++;
    }
    ix->slots = w;
    tab_rebuild(ix, ix->live);
}

static int check_range(sl_err *err, const char *what, int v, int lo, int hi)
{
    if (v < lo || v > hi)
        return sl_err_set(err, SL_EINVAL, "the vector index's %s must be %d..%d, not %d", what, lo,
                          hi, v);
    return 0;
}

int sl_vindex_set_ef(sl_vindex *ix, int ef_search, sl_err *err)
{
    if (check_range(err, "ef_search", ef_search, 1, 65536))
        return -1;
    ix->ef = ef_search;
    if (ix->hnsw)
        hn_sl_hnsw_set_ef(ix->hnsw, (size_t)ef_search);
    return 0;
}

int sl_vindex_build(sl_vindex *ix, const sl_vindex_build_opts *o, sl_err *err)
{
    sl_vindex_build_opts d = o ? *o : (sl_vindex_build_opts){0};
    int m = d.m ? d.m : SL_VINDEX_DEFAULT_M;
    int efc = d.ef_construction ? d.ef_construction : SL_VINDEX_DEFAULT_EFC;
    int ef = d.ef_search ? d.ef_search : SL_VINDEX_DEFAULT_EF;
    int threads = d.threads;
    if (check_range(err, "m", m, 2, 100) || check_range(err, "ef_construction", efc, 1, 4096) ||
        check_range(err, "ef_search", ef, 1, 65536) || check_range(err, "threads", threads, 0, 256))
        return -1;
    if (!threads) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c < 1 ? 1 : c > 256 ? 256 : (int)c;
    }
    compact(ix);
    if (hn_load(err))
        return sl_err_prefix(err, "cannot build the approximate vector index (searches stay "
                                  "exact)");
    ix->m = m, ix->efc = efc, ix->ef = ef;
    if (!ix->slots)
        return 0;
    char why[200];
    sl_hnsw *g = hn_sl_hnsw_new(ix->dims, &ix->rows, dot_pick(), ix->slots, (size_t)m,
                                (size_t)efc, why, sizeof why);
    if (!g)
        return sl_err_set(err, SL_ENOMEM, "%s", why);
    if (hn_sl_hnsw_add_range(g, 0, ix->slots, threads, why, sizeof why)) {
        hn_sl_hnsw_free(g);
        return sl_err_set(err, SL_ENOMEM, "%s", why);
    }
    hn_sl_hnsw_set_ef(g, (size_t)ef);
    ix->hnsw = g;
    ix->built = ix->slots;
    ix->dead_built = 0;
    return 0;
}

/* ---- save -------------------------------------------------------------------- */

#define VX_MAGIC "SLVINDEX"
#define VX_VERSION 1
#define VX_MAX_LEVEL 40 /* hnswlib draws levels of -ln(U) / ln(M); U >= 2^-31 */
#define VX_HEAD 56

typedef struct {
    int fd;
    unsigned char buf[1 << 16];
    size_t n;
    int failed; /* errno */
} vx_out;

static void out_flush(vx_out *o)
{
    size_t off = 0;
    while (!o->failed && off < o->n) {
        ssize_t w = write(o->fd, o->buf + off, o->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            o->failed = w < 0 ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    o->n = 0;
}

static void out_put(vx_out *o, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n && !o->failed) {
        if (o->n == sizeof o->buf)
            out_flush(o);
        size_t take = sizeof o->buf - o->n < n ? sizeof o->buf - o->n : n;
        memcpy(o->buf + o->n, c, take);
        o->n += take, c += take, n -= take;
    }
}

static void out_u32(vx_out *o, uint32_t v)
{
    out_put(o, &v, 4);
}

static void out_u64(vx_out *o, uint64_t v)
{
    out_put(o, &v, 8);
}

int sl_vindex_save(const sl_vindex *ix, int fd, sl_err *err)
{
    vx_out *o = sl_xcalloc(1, sizeof *o);
    o->fd = fd;
    size_t built = sl_vindex_has_approx(ix) ? ix->built : 0;
    int maxlevel = 0;
    uint32_t enter = 0;
    if (built) {
        size_t m, efc;
        hn_sl_hnsw_params(ix->hnsw, &m, &efc, &maxlevel, &enter);
    }
    out_put(o, VX_MAGIC, 8);
    out_u32(o, VX_VERSION);
    out_u32(o, (uint32_t)ix->dims);
    out_u64(o, ix->slots);
    out_u64(o, built);
    out_u32(o, built ? (uint32_t)ix->m : 0);
    out_u32(o, built ? (uint32_t)ix->efc : 0);
    out_u32(o, built ? (uint32_t)ix->ef : 0);
    out_u32(o, (uint32_t)maxlevel);
    out_u32(o, enter);
    out_u32(o, 0);
    out_put(o, ix->ids, ix->slots * sizeof *ix->ids);
    out_put(o, ix->dead, ix->slots);
    out_put(o, ix->rows, ix->slots * ix->dims * sizeof(float));
    for (size_t i = 0; i < built; i++) {
        uint64_t slot;
        int level;
        hn_sl_hnsw_element(ix->hnsw, (uint32_t)i, &slot, &level);
        out_u64(o, slot);
        out_u32(o, (uint32_t)level);
        for (int l = 0; l <= level; l++) {
            uint32_t cnt;
            const uint32_t *ids = hn_sl_hnsw_links(ix->hnsw, (uint32_t)i, l, &cnt);
            out_u32(o, cnt);
            out_put(o, ids, cnt * sizeof *ids);
        }
    }
    out_flush(o);
    int e = o->failed;
    free(o);
    if (e)
        return sl_err_set(err, SL_EIO, "cannot write the vector index: %s", strerror(e));
    return 0;
}

/* ---- load -------------------------------------------------------------------- */

typedef struct {
    int fd;
    unsigned char buf[1 << 16];
    size_t pos, n;
    unsigned long long off; /* bytes consumed */
    int failed;             /* errno of a read error */
} vx_in;

static int in_fill(vx_in *r)
{
    if (r->pos < r->n)
        return 1;
    r->pos = r->n = 0;
    for (;;) {
        ssize_t got = read(r->fd, r->buf, sizeof r->buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            r->failed = errno;
            return 0;
        }
        r->n = (size_t)got;
        return got > 0;
    }
}

static int in_fail(vx_in *r, sl_err *err, const char *what)
{
    if (r->failed)
        return sl_err_set(err, SL_EIO, "cannot read the vector index: %s", strerror(r->failed));
    return sl_err_set(err, SL_EPARSE,
                      "the vector index file ends at byte %llu, inside %s: it is truncated; "
                      "rebuild the knowledge base's index",
                      r->off, what);
}

static int in_get(vx_in *r, void *dst, size_t n, sl_err *err, const char *what)
{
    unsigned char *d = dst;
    while (n) {
        if (!in_fill(r))
            return in_fail(r, err, what);
        size_t take = r->n - r->pos < n ? r->n - r->pos : n;
        memcpy(d, r->buf + r->pos, take);
        r->pos += take, r->off += take, d += take, n -= take;
    }
    return 0;
}

/* count items of size bytes into a new block that grows with the data
 * read, so a count the file claims but does not hold costs no memory. */
static int in_block(vx_in *r, void **out, size_t count, size_t size, sl_err *err,
                    const char *what)
{
    size_t total = count * size, cap = 0, have = 0; /* count * size checked by the caller */
    unsigned char *p = NULL;
    while (have < total) {
        if (have == cap) {
            cap = cap ? cap * 2 : (size_t)1 << 20;
            if (cap > total)
                cap = total;
            p = sl_xrealloc(p, cap);
        }
        if (in_get(r, p + have, cap - have, err, what)) {
            free(p);
            return -1;
        }
        have = cap;
    }
    *out = p;
    return 0;
}

__attribute__((format(printf, 2, 3))) static int bad(sl_err *err, const char *fmt, ...)
{
    char m[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return sl_err_set(err, SL_EPARSE,
                      "the vector index file is not valid: %s; rebuild the knowledge base's index",
                      m);
}

typedef struct {
    uint32_t m, efc, ef, maxlevel, enter;
    uint64_t *labels;
    uint8_t *levels;
    uint8_t *deleted;
    size_t *off;
    uint32_t *links;
    size_t nlinks, links_cap;
} vx_graph;

static void graph_release(vx_graph *g)
{
    free(g->labels);
    free(g->levels);
    free(g->deleted);
    free(g->off);
    free(g->links);
}

static void links_put(vx_graph *g, uint32_t v)
{
    if (g->nlinks == g->links_cap) {
        g->links_cap = g->links_cap ? g->links_cap * 2 : 4096;
        g->links = sl_xrealloc(g->links, g->links_cap * sizeof *g->links);
    }
    g->links[g->nlinks++] = v;
}

/* The graph section: read, then every link checked against the levels. */
static int read_graph(vx_in *r, const sl_vindex *ix, size_t built, vx_graph *g, sl_err *err)
{
    g->labels = sl_xmalloc(built * sizeof *g->labels);
    g->levels = sl_xmalloc(built);
    g->deleted = sl_xmalloc(built);
    g->off = sl_xmalloc(built * sizeof *g->off);
    unsigned char *seen = sl_xcalloc(built, 1);
    int rc = -1;
    uint32_t top = 0;
    for (size_t i = 0; i < built; i++) {
        uint64_t label;
        uint32_t level;
        if (in_get(r, &label, 8, err, "the graph") || in_get(r, &level, 4, err, "the graph"))
            goto out;
        if (label >= built || seen[label]) {
            bad(err, "graph element %zu names slot %llu %s", i, (unsigned long long)label,
                label >= built ? "(out of range)" : "twice");
            goto out;
        }
        if (level > g->maxlevel) {
            bad(err, "graph element %zu has level %u, above the graph's top", i, level);
            goto out;
        }
        seen[label] = 1;
        g->labels[i] = label;
        g->levels[i] = (uint8_t)level;
        g->deleted[i] = ix->dead[label];
        g->off[i] = g->nlinks;
        if (level > top)
            top = level;
        for (uint32_t l = 0; l <= level; l++) {
            uint32_t cnt;
            if (in_get(r, &cnt, 4, err, "the graph"))
                goto out;
            if (cnt > (l ? g->m : 2 * g->m)) {
                bad(err, "graph element %zu has %u links at level %u (at most %u)", i, cnt, l,
                    l ? g->m : 2 * g->m);
                goto out;
            }
            links_put(g, cnt);
            for (uint32_t j = 0; j < cnt; j++) {
                uint32_t to;
                if (in_get(r, &to, 4, err, "the graph"))
                    goto out;
                if (to >= built) {
                    bad(err, "graph element %zu links to element %u, out of range", i, to);
                    goto out;
                }
                links_put(g, to);
            }
        }
    }
    /* A search at level l reads the level-l list of every element it
     * reaches there: each link at level l must lead to a level >= l. */
    for (size_t i = 0; i < built; i++) {
        const uint32_t *p = g->links + g->off[i];
        for (uint32_t l = 0; l <= g->levels[i]; l++) {
            uint32_t cnt = *p++;
            for (uint32_t j = 0; j < cnt; j++, p++)
                if (g->levels[*p] < l) {
                    bad(err, "graph element %zu links at level %u to element %u, which is not on it",
                        i, l, *p);
                    goto out;
                }
        }
    }
    if (top != g->maxlevel || g->enter >= built || g->levels[g->enter] != g->maxlevel) {
        bad(err, "the graph's top level %u or entry point %u does not match its elements",
            g->maxlevel, g->enter);
        goto out;
    }
    rc = 0;
out:
    free(seen);
    return rc;
}

static int load_rows(vx_in *r, sl_vindex *ix, size_t slots, sl_err *err)
{
    if (in_block(r, (void **)&ix->ids, slots, sizeof *ix->ids, err, "the row ids") ||
        in_block(r, (void **)&ix->dead, slots, 1, err, "the removed-row marks") ||
        in_block(r, (void **)&ix->rows, slots, ix->dims * sizeof(float), err, "the vectors"))
        return -1;
    ix->cap = ix->slots = slots;
    for (size_t s = 0; s < slots; s++) {
        if (ix->dead[s] > 1)
            return bad(err, "row %zu has the removed mark %u (not 0 or 1)", s, ix->dead[s]);
        const float *v = ix->rows + s * ix->dims;
        double ss = 0;
        for (size_t i = 0; i < ix->dims; i++) {
            if (!__builtin_isfinite(v[i]))
                return bad(err, "row %zu has a NaN or infinite value at %zu", s, i);
            ss += (double)v[i] * v[i];
        }
        if (ss < 0.999 || ss > 1.001)
            return bad(err, "row %zu is not a unit vector (its squared length is %g)", s, ss);
        ix->live += !ix->dead[s];
    }
    tab_rebuild(ix, ix->live);
    size_t unique = 0;
    for (size_t i = 0; i < ix->tab_cap; i++)
        unique += ix->tab[i] != 0;
    if (unique != ix->live)
        return bad(err, "%zu of its %zu live rows repeat another's id", ix->live - unique,
                   ix->live);
    return 0;
}

int sl_vindex_load(int fd, sl_vindex **out, sl_err *err)
{
    *out = NULL;
    vx_in *r = sl_xcalloc(1, sizeof *r);
    r->fd = fd;
    sl_vindex *ix = NULL;
    vx_graph g = {0};
    unsigned char h[VX_HEAD];
    uint32_t version, dims;
    uint64_t slots, built;
    int rc = -1;
    if (in_get(r, h, sizeof h, err, "the header"))
        goto out;
    memcpy(&version, h + 8, 4), memcpy(&dims, h + 12, 4);
    memcpy(&slots, h + 16, 8), memcpy(&built, h + 24, 8);
    memcpy(&g.m, h + 32, 4), memcpy(&g.efc, h + 36, 4), memcpy(&g.ef, h + 40, 4);
    memcpy(&g.maxlevel, h + 44, 4), memcpy(&g.enter, h + 48, 4);
    if (memcmp(h, VX_MAGIC, 8)) {
        rc = sl_err_set(err, SL_EPARSE, "this is not a sluice vector index (no %s at its start)",
                        VX_MAGIC);
        goto out;
    }
    if (version != VX_VERSION) {
        rc = sl_err_set(err, SL_EPARSE,
                        "the vector index has format version %u; this sluice reads %d: rebuild "
                        "the knowledge base's index",
                        version, VX_VERSION);
        goto out;
    }
    if (dims < 1 || dims > SL_VINDEX_MAX_DIMS) {
        bad(err, "it has %u dimensions (1..%d)", dims, SL_VINDEX_MAX_DIMS);
        goto out;
    }
    if (slots > SL_VINDEX_MAX_ROWS || built > slots) {
        bad(err, "it claims %llu rows, %llu in the graph (at most %zu, and no more in the graph)",
            (unsigned long long)slots, (unsigned long long)built, SL_VINDEX_MAX_ROWS);
        goto out;
    }
    if (built ? (g.m < 2 || g.m > 100 || g.efc < 1 || g.efc > 4096 || g.ef < 1 || g.ef > 65536 ||
                 g.maxlevel > VX_MAX_LEVEL)
              : (g.m || g.efc || g.ef || g.maxlevel || g.enter)) {
        bad(err, "its graph settings (M %u, ef_construction %u, ef_search %u, top level %u) are "
                 "out of range",
            g.m, g.efc, g.ef, g.maxlevel);
        goto out;
    }
    /* A file that is shorter than its rows fails here, before any memory. */
    struct stat st;
    unsigned long long need = slots * (8 + 1 + (unsigned long long)dims * 4);
    if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
        off_t at = lseek(fd, 0, SEEK_CUR);
        unsigned long long left = at >= 0 && st.st_size >= at
                                      ? (unsigned long long)(st.st_size - at) + (r->n - r->pos)
                                      : ULLONG_MAX;
        if (at >= 0 && left < need) {
            rc = sl_err_set(err, SL_EPARSE,
                            "the vector index file is truncated: its %llu rows of %u dimensions "
                            "need %llu bytes and %llu follow the header; rebuild the knowledge "
                            "base's index",
                            (unsigned long long)slots, dims, need, left);
            goto out;
        }
    }
    ix = sl_vindex_new((int)dims, err);
    if (load_rows(r, ix, slots, err))
        goto out;
    if (built && read_graph(r, ix, built, &g, err))
        goto out;
    if (in_fill(r)) {
        bad(err, "more data follows its end at byte %llu", r->off);
        goto out;
    }
    if (r->failed) {
        in_fail(r, err, "");
        goto out;
    }
    if (built) {
        ix->m = (int)g.m, ix->efc = (int)g.efc, ix->ef = (int)g.ef;
        sl_err e2 = {0};
        if (hn_load(&e2) == 0) {
            char why[200];
            sl_hnsw *hg = hn_sl_hnsw_new(ix->dims, &ix->rows, dot_pick(), built, g.m, g.efc, why,
                                         sizeof why);
            if (!hg) {
                rc = sl_err_set(err, SL_ENOMEM, "%s", why);
                goto out;
            }
            if (hn_sl_hnsw_restore(hg, built, g.labels, g.levels, g.links, g.off, g.deleted,
                                   (int)g.maxlevel, g.enter, why, sizeof why)) {
                hn_sl_hnsw_free(hg);
                rc = sl_err_set(err, SL_ENOMEM, "%s", why);
                goto out;
            }
            hn_sl_hnsw_set_ef(hg, g.ef);
            ix->hnsw = hg;
            ix->built = built;
            for (size_t s = 0; s < built; s++)
                ix->dead_built += ix->dead[s];
        }
        sl_err_clear(&e2);
    }
    *out = ix;
    ix = NULL;
    rc = 0;
out:
    graph_release(&g);
    sl_vindex_free(ix);
    free(r);
    return rc;
}
