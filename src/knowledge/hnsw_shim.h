/*
 * hnsw_shim — the C face of hnswlib (Debian's libhnswlib-dev, header-only
 * C++), for knowledge/vindex.c alone.
 *
 * hnsw_shim.cc is built into a shared object of its own, embedded in sluice
 * as bytes and opened on first use (vindex.c), so that no sluice process
 * maps libstdc++ unless it builds or loads an approximate index.  Every C++
 * exception stops at this boundary: a function that can fail returns -1 (or
 * NULL) and writes what happened into msg (msglen bytes, NUL-terminated).
 *
 * The graph does not hold the vectors.  Each element's data is an 8-byte
 * handle: SL_HNSW_ROW | slot names a row of the caller's matrix (*base +
 * slot * dims, read at every distance, so the caller may move the matrix
 * between calls), anything else is the address of a query.  Distances are
 * 1 - dot(a, b) through the caller's dot function, so the rows must be unit
 * vectors for it to be the cosine distance.
 *
 * Threads: searches may run concurrently with each other; adds, deletes and
 * restores need the caller's exclusion.
 */
#ifndef SL_KNOWLEDGE_HNSW_SHIM_H
#define SL_KNOWLEDGE_HNSW_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_HNSW_ROW (UINT64_C(1) << 63)

typedef struct sl_hnsw sl_hnsw;
typedef float (*sl_hnsw_dot_fn)(const float *a, const float *b, size_t n);

/* An empty graph for up to max_elements rows of dims floats; labels are
 * the caller's slots.  ef_construction is raised to M as hnswlib does. */
sl_hnsw *sl_hnsw_new(size_t dims, float *const *base, sl_hnsw_dot_fn dot, size_t max_elements,
                     size_t m, size_t ef_construction, char *msg, size_t msglen);
void sl_hnsw_free(sl_hnsw *h);
/* Inserts slots first..first+n-1 on `threads` threads (>= 1). */
int sl_hnsw_add_range(sl_hnsw *h, uint64_t first, size_t n, int threads, char *msg, size_t msglen);
/* The search breadth (hnswlib's ef); a search uses max(ef, k).  Not to be
 * called while searches run. */
void sl_hnsw_set_ef(sl_hnsw *h, size_t ef);
/* Deleted elements still route searches but are never returned. */
int sl_hnsw_mark_deleted(sl_hnsw *h, uint64_t slot, char *msg, size_t msglen);
/* Up to k nearest elements to q (dims floats), nearest first: slots[i] and
 * dists[i] (1 - dot); *n how many. */
int sl_hnsw_search(const sl_hnsw *h, const float *q, size_t k, uint64_t *slots, float *dists,
                   size_t *n, char *msg, size_t msglen);

/* The graph as it is, for saving: elements are numbered 0..count-1. */
size_t sl_hnsw_count(const sl_hnsw *h);
void sl_hnsw_params(const sl_hnsw *h, size_t *m, size_t *ef_construction, int *maxlevel,
                    uint32_t *enterpoint);
/* Element i's label (slot) and top level. */
void sl_hnsw_element(const sl_hnsw *h, uint32_t i, uint64_t *slot, int *level);
/* Element i's neighbours at level (0..its top level): *count ids. */
const uint32_t *sl_hnsw_links(const sl_hnsw *h, uint32_t i, int level, uint32_t *count);

/* Fills a new graph (sl_hnsw_new with max_elements = n and the saved M)
 * from a saved one the caller has checked: labels[i], levels[i], and
 * links[off[i]..] holding, for each level 0..levels[i], a count and that
 * many ids (< n, each neighbour at level l having a level >= l; counts at
 * most 2M at level 0, M above).  deleted[i] marks the elements to mark. */
int sl_hnsw_restore(sl_hnsw *h, size_t n, const uint64_t *labels, const uint8_t *levels,
                    const uint32_t *links, const size_t *off, const uint8_t *deleted,
                    int maxlevel, uint32_t enterpoint, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif
