/*
 * knowledge/kb — knowledge bases: documents in (extract → clean → chunk →
 * embed → store), chunks out (vector, keyword or hybrid search, metadata
 * filters, reranking), in Dify's shapes so the knowledge-retrieval node,
 * `sluice kb` and the Knowledge API all say the same thing.
 *
 * A knowledge base ("dataset" in Dify) lives in the store (store.h): its
 * settings, documents with their metadata, segments (and, for parent-child
 * documents, child chunks), their vectors and a full-text index.  The
 * searchable unit is a segment of a "text_model" document or a child
 * chunk of a "hierarchical_model" one; hits on children come back as
 * their parent segment with metadata.child_chunks, scored by the best
 * child, as in Dify.
 *
 * Objects are Dify's (docs/knowledge.md lists them):
 *   dataset   {id, name, description, provider, permission, data_source_type,
 *              indexing_technique, app_count, document_count, word_count,
 *              created_by, created_at, updated_by, updated_at, embedding_model,
 *              embedding_model_provider, embedding_available, retrieval_model_dict,
 *              tags, doc_form, doc_metadata, built_in_field_enabled, …}
 *   document  {id, position, data_source_type, name, created_from, created_at,
 *              tokens, indexing_status, error, enabled, archived, display_status,
 *              word_count, hit_count, doc_form, doc_metadata, batch, …}
 *   segment   {id, position, document_id, content, answer, word_count, tokens,
 *              keywords, index_node_id, index_node_hash, hit_count, enabled,
 *              status, created_at, …, child_chunks}
 *   record    {segment: {…, document: {id, data_source_type, name, doc_type,
 *              doc_metadata}}, child_chunks: [{id, content, position, score}],
 *              score, tsne_position: null, files: [], summary: null}
 *
 * Ownership: every function returns new references (sl_value) the caller
 * drops.  An sl_kb is shared by threads: every function is thread-safe.
 * Errors: -1 (or NULL) with sl_err; SL_ENOTFOUND for an unknown knowledge
 * base, document or segment (with Dify's message: "Dataset not found.",
 * "Document Not Exists.", "Segment not found."), SL_EINVAL for bad input
 * with Dify's message where Dify has one.
 */
#ifndef SL_KNOWLEDGE_KB_H
#define SL_KNOWLEDGE_KB_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/value.h"

struct sl_store;
struct sl_config;
struct sl_llm_tape;

typedef struct sl_kb sl_kb;

typedef struct {
    size_t max_input;       /* knowledge_max_input: bytes of one document's text */
    size_t max_chunks;      /* knowledge_max_chunks: chunks of one document */
    size_t embed_batch;     /* texts per embedding request (0: 32) */
    double extract_timeout_s;
    size_t extract_memory;
    size_t extract_max_output;
} sl_kb_limits;

/* The defaults of `sluice limits`. */
void sl_kb_limits_default(sl_kb_limits *l);
/* The knowledge_* and extract_* settings of `sluice limits`. */
struct sl_limits;
void sl_kb_limits_from(sl_kb_limits *kl, const struct sl_limits *l);

typedef struct {
    struct sl_store *store;          /* borrowed: where knowledge bases live */
    const struct sl_config *config;  /* borrowed: endpoints of embedding and rerank models */
    struct sl_llm_tape *tape;        /* borrowed, may be NULL: model calls recorded/replayed */
    sl_kb_limits limits;
    /* Build HNSW graphs (tens of seconds at 100,000 vectors) on a thread of
     * their own, as a server wants: searches meanwhile use the index as it
     * is (its exact scan).  Off: the search that needs a graph builds it,
     * as a one-shot command wants (it is saved for the next process). */
    bool background_graphs;
} sl_kb_env;

sl_kb *sl_kb_open(const sl_kb_env *env, sl_err *err);
/* Waits for background graph builds, then frees k. */
void sl_kb_close(sl_kb *k);
/* Waits until no graph is being built in the background. */
void sl_kb_wait(sl_kb *k);

/* ---- knowledge bases ---- */

/* spec: {name (1..40 chars, unique), description, indexing_technique
 * ("high_quality" needs an embedding model; "economy": keywords only),
 * embedding_model, embedding_model_provider, retrieval_model (Dify's
 * RetrievalModel), process_rule, doc_form ("text_model" |
 * "hierarchical_model")}.  *out: the dataset object. */
int sl_kb_create(sl_kb *k, const sl_value *spec, sl_value **out, sl_err *err);
/* Datasets newest first, those whose name contains keyword (NULL: all);
 * page from 1; *total all that match. */
sl_value *sl_kb_list(sl_kb *k, const char *keyword, int page, int limit, long long *total);
/* By id or by name; NULL (SL_ENOTFOUND) when there is none. */
sl_value *sl_kb_get(sl_kb *k, const char *id_or_name, sl_err *err);
/* patch: any of spec's fields. */
int sl_kb_update(sl_kb *k, const char *id, const sl_value *patch, sl_value **out, sl_err *err);
int sl_kb_delete(sl_kb *k, const char *id, sl_err *err);

/* ---- documents ---- */

typedef struct {
    const char *name;             /* the document's name (a file's base name) */
    /* the content: text, or a file's bytes read by the document extractor
     * (by name's extension, else mime) in its confined process */
    const char *text;
    const void *bytes;
    size_t len;
    const char *mime;
    const sl_value *metadata;     /* {name: value} of the knowledge base's fields; may be NULL */
    const sl_value *process_rule; /* NULL: the knowledge base's (or automatic) */
    const char *doc_form;         /* NULL: the knowledge base's */
    const char *replace_id;       /* a document of this knowledge base to replace, or NULL */
    const char *source;           /* where it came from (a path for `kb add`), or NULL */
    const char *batch;            /* the batch it belongs to, or NULL (one is made) */
    /* called as work proceeds: stage "extracting" | "splitting" |
     * "embedding" | "indexing", done of total units */
    void (*progress)(const char *stage, size_t done, size_t total, void *ud);
    bool (*cancelled)(void *ud);
    void *ud;
} sl_kb_doc_in;

/* Adds a document (or replaces replace_id's, or a document of the same
 * source whose content changed; an unchanged one is kept and returned with
 * *unchanged true).  Synchronous: *doc comes back "completed", or the
 * call fails and nothing of it is kept. */
int sl_kb_add(sl_kb *k, const char *kb_id, const sl_kb_doc_in *in, sl_value **doc,
              bool *unchanged, sl_err *err);
/* Many documents, each as sl_kb_add, written in order; while the store
 * writes one, a thread of its own extracts, splits and embeds the next
 * ones, and so does the caller's thread whenever the one to write next is
 * not ready.  load fills document i's input (on either thread, for
 * different i at once; -1 with err: it failed), unload frees it, done
 * reports it (on the caller's thread, in order) and returns true to stop
 * after it.  -1 when one failed. */
typedef struct {
    int (*load)(size_t i, sl_kb_doc_in *in, void *ud, sl_err *err);
    void (*unload)(size_t i, sl_kb_doc_in *in, void *ud);
    bool (*done)(size_t i, int rc, const sl_value *doc, bool unchanged, const sl_err *err,
                 void *ud);
    void *ud;
} sl_kb_feed;
int sl_kb_add_all(sl_kb *k, const char *kb_id, size_t n, const sl_kb_feed *f);
/* Documents newest first; keyword matches names; status: Dify's display
 * status or NULL. */
sl_value *sl_kb_docs(sl_kb *k, const char *kb_id, const char *keyword, const char *status,
                     int page, int limit, long long *total, sl_err *err);
/* One document with its details (segment_count, process rule, …). */
sl_value *sl_kb_doc(sl_kb *k, const char *kb_id, const char *doc_id, sl_err *err);
/* The documents of an upload batch (Dify's indexing-status). */
sl_value *sl_kb_batch(sl_kb *k, const char *kb_id, const char *batch, sl_err *err);
int sl_kb_doc_delete(sl_kb *k, const char *kb_id, const char *doc_id, sl_err *err);
/* action: "enable" | "disable" | "archive" | "un_archive". */
int sl_kb_doc_status(sl_kb *k, const char *kb_id, const sl_value *doc_ids, const char *action,
                     sl_err *err);
/* Sets a document's metadata values {name: value}; partial keeps the
 * others.  Names must be fields of the knowledge base. */
int sl_kb_doc_meta(sl_kb *k, const char *kb_id, const char *doc_id, const sl_value *values,
                   bool partial, sl_err *err);

/* ---- metadata fields ---- */
/* type: "string" | "number" | "time".  *out {id, name, type}. */
int sl_kb_field_add(sl_kb *k, const char *kb_id, const char *name, const char *type,
                    sl_value **out, sl_err *err);
/* {doc_metadata: [{id, name, type, count}], built_in_field_enabled}. */
sl_value *sl_kb_fields(sl_kb *k, const char *kb_id, sl_err *err);
int sl_kb_field_rename(sl_kb *k, const char *kb_id, const char *field_id, const char *name,
                       sl_value **out, sl_err *err);
int sl_kb_field_delete(sl_kb *k, const char *kb_id, const char *field_id, sl_err *err);
int sl_kb_builtin_fields(sl_kb *k, const char *kb_id, bool enable, sl_err *err);

/* ---- segments ---- */
sl_value *sl_kb_segments(sl_kb *k, const char *kb_id, const char *doc_id, const char *keyword,
                         const char *status, int page, int limit, long long *total,
                         sl_err *err);
/* segs: [{content, answer?, keywords?}]; embeds and indexes them; *out the
 * new segments. */
int sl_kb_segments_add(sl_kb *k, const char *kb_id, const char *doc_id, const sl_value *segs,
                       sl_value **out, sl_err *err);
sl_value *sl_kb_segment(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                        sl_err *err);
/* patch: {content?, answer?, keywords?, enabled?}. */
int sl_kb_segment_update(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                         const sl_value *patch, sl_value **out, sl_err *err);
int sl_kb_segment_delete(sl_kb *k, const char *kb_id, const char *doc_id, const char *seg_id,
                         sl_err *err);

/* ---- search ---- */

typedef struct {
    const char *query;
    /* "semantic_search" | "full_text_search" | "hybrid_search" |
     * "keyword_search"; NULL: the knowledge base's retrieval_model */
    const char *method;
    int top_k;                    /* 0: the knowledge base's (else 4) */
    bool threshold_enabled;
    double score_threshold;
    /* NULL: none; "reranking_model" (rerank_provider/rerank_model) or
     * "weighted_score" (vector_weight, keyword_weight) */
    const char *reranking_mode;
    const char *rerank_provider, *rerank_model;
    double vector_weight, keyword_weight;
    /* Dify's metadata_filtering_conditions {logical_operator, conditions:
     * [{name, comparison_operator, value}]}, values already substituted;
     * NULL: no filter.  Documents none matches are left out. */
    const sl_value *conditions;
    bool exact;                   /* vector channel: scan every vector */
    /* the query's embedding when the caller has it (no model call), of
     * the knowledge base's dimensions; NULL: the model embeds query */
    const float *query_vector;
    int query_dims;
    bool (*cancelled)(void *ud);
    void *ud;
    /* where sl_kb_query_defaults keeps the rerank names it points to */
    char names[2][256];
} sl_kb_query;

/* Fills a query with the knowledge base's own retrieval settings. */
int sl_kb_query_defaults(sl_kb *k, const char *kb_id, sl_kb_query *q, sl_err *err);

/* Searches one knowledge base: records (see above), best first, at most
 * top_k, and *tokens the embedding tokens spent on the query. */
int sl_kb_search(sl_kb *k, const char *kb_id, const sl_kb_query *q, sl_value **records,
                 long long *tokens, sl_err *err);

/* Reranks candidate records (from several knowledge bases) with a model or
 * weights, as Dify merges a multiple-retrieval: q's reranking fields,
 * score_threshold and top_k apply.  records is borrowed; *out is a new
 * array of copies of the kept ones. */
int sl_kb_rerank(sl_kb *k, const sl_kb_query *q, sl_value *records, sl_value **out,
                 sl_err *err);

/* Whether a document's metadata {name: value} passes Dify's conditions
 * (the operators of the knowledge-retrieval node). */
bool sl_kb_conditions_match(const sl_value *conditions, const sl_value *doc_metadata);

#endif
