/*
 * knowledge/external — a client of Dify's External Knowledge API: the
 * knowledge bases another service keeps, which a knowledge-retrieval node
 * reaches when sluice.yml binds a dataset id to one (docs/knowledge.md).
 *
 *   POST {endpoint}/retrieval
 *   Authorization: Bearer {api_key}          (when a key is configured)
 *   {"knowledge_id", "query", "retrieval_setting": {"top_k", "score_threshold"},
 *    "metadata_condition"?: {"logical_operator", "conditions": [...]}}
 *   -> 200 {"records": [{"content", "score", "title", "metadata"}]}
 *
 * The request goes through net/http with its SSRF guard (this host and
 * private addresses only when the binding allows them), a deadline and a
 * cap on the answer.  Unlike Dify, which turns any answer but a 200 into
 * no records, a failed call is an error naming the endpoint, its status
 * and the service's error_msg, so a broken binding shows.
 *
 * Records are checked as hostile input: content must be text, score a
 * number (absent: 0), title text (absent: ""), metadata an object (absent
 * or null: {}); at most SL_KB_EXTERNAL_MAX_RECORDS of them.
 * Errors: -1 with sl_err (SL_EIO, SL_ETIMEOUT, SL_ELIMIT, SL_ECANCELED,
 * SL_EPARSE), error_type "ExternalKnowledgeError".
 */
#ifndef SL_KNOWLEDGE_EXTERNAL_H
#define SL_KNOWLEDGE_EXTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/value.h"

#define SL_KB_EXTERNAL_MAX_RECORDS 1000

typedef struct {
    const char *endpoint;       /* http(s) URL; "/retrieval" is appended */
    const char *api_key;        /* NULL or "": no Authorization header */
    const char *knowledge_id;
    const char *query;
    int top_k;
    double score_threshold;
    const sl_value *metadata_condition;  /* NULL: left out of the request */
    double timeout_s;           /* the whole call; 0: 60 s */
    size_t max_body;            /* bytes of the answer; 0: 16 MiB */
    bool allow_private;         /* this host and private addresses may be reached */
    bool (*cancelled)(void *ud);
    void *ud;
} sl_kb_external_req;

/* Calls the service.  *records: a new array of {content, score, title,
 * metadata}, in the service's order. */
int sl_kb_external_retrieve(const sl_kb_external_req *rq, sl_value **records, sl_err *err);

/* Reads a 200 answer's body (what the call does with it): *records as
 * above, or -1 with err naming `url` and what is wrong.  Fuzzed by
 * fuzz_kb_external. */
int sl_kb_external_parse(const char *body, size_t len, const char *url, sl_value **records,
                         sl_err *err);

#endif
