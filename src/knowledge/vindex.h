/*
 * vindex — the vector index of a knowledge base: rows (an id and a float32
 * vector) searched by cosine similarity, exactly or through an approximate
 * HNSW graph (docs/knowledge.md, "Vector search").
 *
 * Rows are L2-normalised on the way in and kept in one contiguous matrix;
 * the exact search scans every row with a SIMD dot product and keeps the
 * top k in a heap: it is the reference the approximate path is measured
 * against.  The approximate path is hnswlib's HNSW (Debian's
 * libhnswlib-dev), built by sl_vindex_build over the rows there are then;
 * rows added later are scanned exactly and merged with the graph's hits
 * until the next build; removed rows are marked in the graph and never
 * returned.  hnswlib is C++: it lives in a shared object of its own that
 * sluice carries as bytes and opens on first use, so a process that never
 * builds or loads a graph never maps libstdc++.  Without libstdc++ (Debian's
 * libstdc++6) a build is refused with an error naming the package, and
 * searches use the exact scan.
 *
 * Results are ordered by score (cosine similarity, higher first), ties by
 * id (lower first).  Scores of approximate hits are recomputed exactly, so
 * a row has the same score on both paths.
 *
 * Threads: any number of sl_vindex_search calls may run at once on one
 * index; everything that changes it (add, remove, build, free) needs the
 * caller's exclusion from every other call on it.
 *
 * Errors come back through sl_err: bad arguments and vectors (wrong size,
 * zero, NaN or infinite) are SL_EINVAL, a malformed saved index SL_EPARSE,
 * I/O SL_EIO, a missing libstdc++ SL_EUNSUPPORTED.
 */
#ifndef SL_KNOWLEDGE_VINDEX_H
#define SL_KNOWLEDGE_VINDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

#define SL_VINDEX_MAX_DIMS 16384
/* Rows (live and removed until the next build) an index may hold: the
 * graph numbers its elements with 32-bit ids. */
#define SL_VINDEX_MAX_ROWS ((size_t)1 << 31)

typedef struct sl_vindex sl_vindex;
typedef struct { long long id; float score; } sl_vhit;   /* score = cosine similarity, higher is better */
typedef bool (*sl_vindex_keep)(long long id, void *ud);  /* a filter: false drops the row */

/* The approximate index's settings; 0 takes the default (measured with
 * `make bench-knowledge`, docs/knowledge.md). */
typedef struct {
    int m;               /* graph degree (hnswlib's M): 2..100, default 16 */
    int ef_construction; /* build breadth: 1..4096, default SL_VINDEX_DEFAULT_EFC */
    int ef_search;       /* search breadth (at least k): 1..65536, default SL_VINDEX_DEFAULT_EF */
    int threads;         /* build threads: 0 all cores, at most 256 */
} sl_vindex_build_opts;

#define SL_VINDEX_DEFAULT_M 16
#define SL_VINDEX_DEFAULT_EFC 100
#define SL_VINDEX_DEFAULT_EF 128

sl_vindex *sl_vindex_new(int dims, sl_err *err);          /* dims 1..16384 */
void sl_vindex_free(sl_vindex *ix);
int  sl_vindex_dims(const sl_vindex *ix);
size_t sl_vindex_count(const sl_vindex *ix);              /* live rows */
/* Adds (or replaces) row id; v has dims floats; it is L2-normalised on the way in (zero vector: refused SL_EINVAL). */
int  sl_vindex_add(sl_vindex *ix, long long id, const float *v, sl_err *err);
/* Adds n rows at once (ids[i], vs + i*dims) — what loading a knowledge base
 * uses.  Every vector is checked first: on an error nothing was added. */
int  sl_vindex_add_many(sl_vindex *ix, const long long *ids, const float *vs, size_t n, sl_err *err);
int  sl_vindex_remove(sl_vindex *ix, long long id);       /* 0 removed, -1 unknown id */
/* Top k rows by cosine similarity to q, best first, into out (k entries); *n = how many.
   keep may be NULL. exact=true always scans every row (the reference); otherwise the approximate
   index is used when built, with the filter applied by over-fetching and falling back to
   the exact scan when the filter keeps few rows.  q is normalised (a copy); a zero, NaN or
   infinite q is SL_EINVAL. */
int  sl_vindex_search(sl_vindex *ix, const float *q, size_t k, sl_vindex_keep keep, void *ud,
                      bool exact, sl_vhit *out, size_t *n, sl_err *err);
/* Builds the approximate (HNSW) index over the current rows, dropping the
 * removed ones for good (o may be NULL: defaults).  On failure the index
 * keeps its rows and has no approximate part. */
int  sl_vindex_build(sl_vindex *ix, const sl_vindex_build_opts *o, sl_err *err);
bool sl_vindex_has_approx(const sl_vindex *ix);
/* Changes the search breadth of a built index (1..65536); not while searches run. */
int  sl_vindex_set_ef(sl_vindex *ix, int ef_search, sl_err *err);
/* Saves/loads the whole index (rows + approximate part) to/from a descriptor,
 * from its current offset.  A file whose graph cannot be opened (no
 * libstdc++) loads without it: searches are then exact. */
int  sl_vindex_save(const sl_vindex *ix, int fd, sl_err *err);
int  sl_vindex_load(int fd, sl_vindex **out, sl_err *err);   /* hostile file: checked, bounded, never crashes */

#endif
