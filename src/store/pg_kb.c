/*
 * store/pg_kb — knowledge bases in the PostgreSQL backend (see store.h and
 * store/pg_int.h).
 */
#include "store/pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char pg_kb_migration[] = "COMMENT ON TABLE kb IS 'knowledge bases (store/pg_kb.c)';";

/* ---- knowledge: not kept here yet ----
 * A knowledge base's chunks, vectors and keyword index are many rows read
 * at every search; until they are moved here (issue 20), every call says
 * so, and sl_kb_open reports the Knowledge API unavailable for why. */

#define NO_KB                                                                                     \
    "store: knowledge bases are not kept in PostgreSQL yet; use a SQLite store (--data DIR) " \
    "for them"

static int no_kb(sl_err *err)
{
    return sl_err_set(err, SL_EUNSUPPORTED, NO_KB);
}

int pg_kb_add(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                     sl_err *err)
{
    (void)b, (void)id, (void)name, (void)info;
    return no_kb(err);
}

int pg_kb_set(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                     sl_err *err)
{
    (void)b, (void)id, (void)name, (void)info;
    return no_kb(err);
}

sl_value *pg_kb_get(sl_store_be *b, const char *id_or_name)
{
    (void)b, (void)id_or_name;
    return NULL;
}

sl_value *pg_kb_list(sl_store_be *b)
{
    (void)b;
    return NULL;
}

int pg_kb_delete(sl_store_be *b, const char *id, sl_err *err)
{
    (void)b, (void)id;
    return no_kb(err);
}

sl_value *pg_kb_docs(sl_store_be *b, const char *kb_id)
{
    (void)b, (void)kb_id;
    return NULL;
}

sl_value *pg_kb_doc(sl_store_be *b, const char *kb_id, const char *doc_id)
{
    (void)b, (void)kb_id, (void)doc_id;
    return NULL;
}

sl_value *pg_kb_doc_of_source(sl_store_be *b, const char *kb_id, const char *source,
                                     long long *next_position)
{
    (void)b, (void)kb_id, (void)source;
    if (next_position)
        *next_position = 0;
    return NULL;
}

int pg_kb_doc_put(sl_store_be *b, const char *kb_id, const char *doc_id,
                         const sl_value *info, const sl_store_chunk *chunks, size_t n, int dims,
                         const sl_store_kw *kw, sl_err *err)
{
    (void)b, (void)kb_id, (void)doc_id, (void)info, (void)chunks, (void)n, (void)dims, (void)kw;
    return no_kb(err);
}

int pg_kb_doc_delete(sl_store_be *b, const char *kb_id, const char *doc_id, sl_err *err)
{
    (void)b, (void)kb_id, (void)doc_id;
    return no_kb(err);
}

sl_value *pg_kb_chunks(sl_store_be *b, const char *kb_id, const char *doc_id,
                              float **vecs, int dims)
{
    (void)b, (void)kb_id, (void)doc_id, (void)dims;
    if (vecs)
        *vecs = NULL;
    return NULL;
}

int pg_kb_vectors(sl_store_be *b, const char *kb_id, int dims, long long **ns,
                         long long **docs, float **vecs, size_t *count, sl_err *err)
{
    (void)b, (void)kb_id, (void)dims;
    *ns = NULL;
    *docs = NULL;
    if (vecs)
        *vecs = NULL;
    *count = 0;
    return no_kb(err);
}

int pg_kb_postings(sl_store_be *b, const char *kb_id, const char *const *terms, size_t n,
                          void (*fn)(size_t i, long long df, long long base, const void *data,
                                     size_t size, void *ud),
                          void *ud, long long *rows, long long *tokens, long long **skip,
                          size_t *nskip, sl_err *err)
{
    (void)b, (void)kb_id, (void)terms, (void)n, (void)fn, (void)ud;
    *rows = *tokens = 0;
    *skip = NULL;
    *nskip = 0;
    return no_kb(err);
}

sl_value *pg_kb_rows(sl_store_be *b, const char *kb_id, const long long *ns, size_t count,
                            float *vecs, int dims)
{
    (void)b, (void)kb_id, (void)ns, (void)count, (void)vecs, (void)dims;
    return NULL;
}

int pg_kb_indexed(sl_store_be *b, const char *kb_id, const char *doc_id,
                         void (*fn)(long long pos, const char *content, void *ud), void *ud,
                         sl_err *err)
{
    (void)b, (void)kb_id, (void)doc_id, (void)fn, (void)ud;
    return no_kb(err);
}

int pg_kb_kw_put(sl_store_be *b, const char *kb_id, const char *doc_id,
                        const sl_store_kw *kw, sl_err *err)
{
    (void)b, (void)kb_id, (void)doc_id, (void)kw;
    return no_kb(err);
}

int pg_kb_kw_done(sl_store_be *b, const char *kb_id, sl_err *err)
{
    (void)b, (void)kb_id;
    return no_kb(err);
}
