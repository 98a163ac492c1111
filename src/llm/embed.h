/*
 * embed — embeddings and reranking through the model layer (issue 18):
 * texts to vectors at an OpenAI-compatible endpoint (POST
 * {base_url}/embeddings), and documents ordered for a query by a rerank
 * model (POST {base_url}/rerank, Jina's and Cohere's shape; TEI's answer
 * is read too).  docs/llm.md ("Embeddings and reranking") has more.
 *
 * Calls are made as llm.c makes chat calls: one libcurl handle per call on
 * the caller's thread, 429, 408/409, 5xx and lost connections retried with
 * backoff (honouring Retry-After, at most 60 s) up to the endpoint's
 * max_retries, the read timeout counted from the last byte received,
 * cancellation (sl_embed_opts.cancelled) within ~100 ms, and error
 * messages that never carry the API key.  Anthropic-style endpoints have
 * neither API: SL_EUNSUPPORTED, naming the provider.
 *
 * Everything the server sends is checked: the count of vectors, their
 * indexes (the answer is put in order by index, never by position;
 * missing, duplicate and out-of-range ones are refused), every value a
 * finite number that fits a float, the same dimensions within a call, and
 * the body's size (SL_EMBED_BODY_CAP).  An error names the model, the
 * provider and the batch (texts FIRST..LAST), and what to do.
 *
 * Record and replay share the chat calls' tape (llm.h, tape.c): one
 * exchange per batch, request {"embedding": {"model", "input": [...]}}
 * (plus "dimensions" when asked for) and response {"dims", "count",
 * "vectors": base64 of little-endian float32, "tokens"} (exact, 5.3 bytes
 * a value); rerank's request is {"rerank": {"model", "query",
 * "documents", "top_n"}} and its response {"hits": [[index, score],
 * ...]}.  "model" there is the options' tape_model when given (the name
 * the workflow uses), so a tape recorded against one endpoint replays
 * against any; replaying makes no request.  A recorded answer is checked
 * as a server's would be.
 *
 * Ownership: *vectors is the caller's (free()); the texts are borrowed.
 */
#ifndef SL_LLM_EMBED_H
#define SL_LLM_EMBED_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "llm/llm.h"

/* Texts per request by default, and at most (OpenAI takes 2048 inputs). */
#define SL_EMBED_BATCH 32
#define SL_EMBED_MAX_BATCH 2048
/* A text longer than this many characters (code points) is refused by
 * default: OpenAI's models take 8192 tokens of input, which is about this
 * many characters of English; longer ones fail there or, at other servers,
 * are cut silently.  Nothing is truncated here: split the text smaller. */
#define SL_EMBED_MAX_INPUT_CHARS 32768
/* Dimensions accepted from a server (text-embedding-3-large has 3072). */
#define SL_EMBED_MAX_DIMS 16384
/* An answer's body (one batch, or one rerank call). */
#define SL_EMBED_BODY_CAP ((size_t)64 << 20)
/* Documents in one rerank call. */
#define SL_RERANK_MAX_DOCS 10000

typedef struct {
    size_t batch;            /* texts per request; 0: SL_EMBED_BATCH; at most
                                SL_EMBED_MAX_BATCH */
    size_t max_input_chars;  /* a longer text (code points) is refused with
                                SL_ELIMIT naming its index; 0:
                                SL_EMBED_MAX_INPUT_CHARS */
    int dims;                /* 0: whatever the model returns; else ask for
                                `dimensions` and check every vector has them */
    bool dims_check_only;    /* with dims: check it, but do not send
                                `dimensions` (the size of vectors already kept;
                                some models, text-embedding-ada-002, refuse
                                the parameter) */
    bool (*cancelled)(void *ud);
    void (*progress)(size_t done, size_t total, void *ud);   /* after each batch */
    void *ud;
    const char *tape_model;  /* the model's name on the tape (the workflow's
                                "provider/model"); NULL: model */
} sl_embed_opts;

/* Embeds n texts with `model` at endpoint ep.  The request is OpenAI's:
 * {"model", "input": [...], "encoding_format": "float"} (+ "dimensions"
 * when o->dims > 0); the answer's data[i].embedding is placed by
 * data[i].index, and usage.total_tokens (else prompt_tokens) is summed.
 * *vectors: n * *dims floats (malloc; NULL when n is 0), *tokens the sum
 * of usage (may be NULL).  Texts are UTF-8, not empty (servers refuse
 * empty input) and at most max_input_chars long: those checks are made
 * for every text before the first request.  o may be NULL (defaults), tape
 * may be NULL.  On failure nothing is returned, whatever batches
 * succeeded. */
int sl_llm_embed(const sl_llm_endpoint *ep, const char *model, const char *const *texts, size_t n,
                 const sl_embed_opts *o, sl_llm_tape *tape, float **vectors, int *dims,
                 long long *tokens, sl_err *err);

typedef struct {
    size_t index;            /* into the documents given */
    double score;            /* the server's relevance score */
} sl_rerank_hit;

/* Jina/Cohere-style rerank: POST {base_url}/rerank {"model", "query",
 * "documents": [...], "top_n": N, "return_documents": false}; the answer's
 * results[{index, relevance_score}] (or TEI's top-level [{index, score}])
 * are checked (index < n and not repeated, score finite) and written to
 * out (room for n), best first (ties by index), at most top_n of them
 * (0: all).  *nout is how many.  Documents are UTF-8, at most
 * SL_RERANK_MAX_DOCS.  tape may be NULL. */
int sl_llm_rerank(const sl_llm_endpoint *ep, const char *model, const char *query,
                  const char *const *docs, size_t n, size_t top_n, sl_llm_tape *tape,
                  sl_rerank_hit *out, size_t *nout, sl_err *err);

typedef struct {
    bool (*cancelled)(void *ud);   /* asked during the call, as for embeddings */
    void *ud;
    const char *tape_model;        /* the model's name on the tape; NULL: model */
} sl_rerank_opts;

/* sl_llm_rerank with options (o may be NULL: sl_llm_rerank). */
int sl_llm_rerank_with(const sl_llm_endpoint *ep, const char *model, const char *query,
                       const char *const *docs, size_t n, size_t top_n, const sl_rerank_opts *o,
                       sl_llm_tape *tape, sl_rerank_hit *out, size_t *nout, sl_err *err);

/* The readers of the answers above (also fuzz/fuzz_embed.c's entry).
 * `who` starts every message ("embedding model 'M', texts 0..31: model
 * provider 'P'").  sl_embed_read: an embeddings answer (a JSON object) for
 * count texts: *vectors count * *dims floats in index order (malloc), all
 * finite, *dims 1..SL_EMBED_MAX_DIMS, *tokens its usage (may be NULL).
 * sl_rerank_read: a rerank answer for n documents into out (room for n),
 * best first, ties by index; no top_n cut. */
int sl_embed_read(const sl_value *answer, size_t count, const char *who, float **vectors,
                  int *dims, long long *tokens, sl_err *err);
int sl_rerank_read(const sl_value *answer, size_t n, const char *who, sl_rerank_hit *out,
                   size_t *nout, sl_err *err);
/* sl_embed_read from the answer's text, as the calls read it: a strict
 * fast path for well-formed answers (no JSON values made; 15 times
 * faster), else jansson and sl_embed_read, with the same result. */
int sl_embed_read_text(const char *body, size_t len, size_t count, const char *who,
                       float **vectors, int *dims, long long *tokens, sl_err *err);

#endif
