/*
 * llm — calls to language models: one neutral request and response shape,
 * two wire styles (OpenAI Chat Completions and everything compatible with
 * it; Anthropic Messages), streaming, retries, record and replay.
 *
 * The neutral request is an sl_value object:
 *
 *   { "model": "gpt-4o-mini",
 *     "system": "text"                    (optional; also as a system message)
 *     "messages": [ {"role": "system"|"user"|"assistant"|"tool",
 *                    "content": "text" | [ {"type":"text","text":…},
 *                                          {"type":"image","url":…,"detail":…} ],
 *                    "tool_calls": [{"id","name","arguments"}],   (assistant)
 *                    "tool_call_id": "…" } ],                     (tool)
 *     "tools": [ {"name","description","parameters"} ],
 *     "tool_choice": "auto"|"none"|"required"|{"name":…},
 *     "params": { "temperature", "top_p", "max_tokens", "stop": [...],
 *                 "presence_penalty", "frequency_penalty", "seed",
 *                 "response_format": {...} } }
 *
 * and the neutral response:
 *
 *   { "text": "…", "reasoning_content": "…",
 *     "tool_calls": [ {"id","name","arguments", "arguments_error"?} ],
 *     "finish_reason": "stop"|"length"|"tool_calls"|…,
 *     "usage": {"prompt_tokens","completion_tokens","total_tokens"} }
 *
 * A call streams (when the caller gives callbacks) and then returns the
 * whole response.  It retries 429, 5xx and lost connections with backoff
 * (honouring Retry-After) as long as nothing has been streamed to the
 * caller yet; it is cancelled within ~100 ms of the caller's cancelled()
 * turning true.  Each call has its own libcurl handle: nothing is shared
 * between threads.  Errors come back through sl_err, never with the API
 * key in them.
 */
#ifndef SL_LLM_H
#define SL_LLM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/value.h"

typedef enum { SL_LLM_OPENAI, SL_LLM_ANTHROPIC } sl_llm_style;

typedef struct {
    char *name;              /* the configured provider's name */
    sl_llm_style style;
    char *base_url;          /* ".../v1" for openai style; host root for anthropic */
    char *api_key;           /* NULL for servers that need none */
    double connect_timeout_s;
    double read_timeout_s;   /* longest silence while waiting for bytes */
    int max_retries;
} sl_llm_endpoint;

typedef struct {
    /* Pieces of the answer as they arrive (may be NULL). */
    void (*on_text)(const char *s, size_t n, void *ud);
    void (*on_reasoning)(const char *s, size_t n, void *ud);
    bool (*cancelled)(void *ud);
    void *ud;
} sl_llm_stream;

typedef struct sl_llm_tape sl_llm_tape;

/* Makes one call.  `stream` may be NULL (then the call does not stream).
 * `tape` may be NULL; when recording, the exchange is appended; when
 * replaying, no network is used.  *resp is a new reference. */
int sl_llm_call(const sl_llm_endpoint *ep, const sl_value *req, const sl_llm_stream *stream,
                sl_llm_tape *tape, sl_value **resp, sl_err *err);

/* ---- record / replay (tape.c) ---- */

/* Opens FILE to append exchanges (record) or to serve them (replay). */
int sl_llm_tape_open(const char *path, bool replay, sl_llm_tape **out, sl_err *err);
void sl_llm_tape_close(sl_llm_tape *t);
bool sl_llm_tape_replaying(const sl_llm_tape *t);
/* Internal to llm.c: a recorded exchange for req (new ref to the
 * response, events array borrowed via *events), or NULL with err. */
sl_value *sl_llm_tape_find(sl_llm_tape *t, const sl_value *req, const sl_value **events,
                           sl_err *err);
int sl_llm_tape_add(sl_llm_tape *t, const sl_value *req, const sl_value *events,
                    const sl_value *resp, sl_err *err);

#endif
