/*
 * llm — see llm.h.  One call = one libcurl easy handle on the caller's
 * thread; the wire style decides how the request is written and how the
 * stream (or the blocking body) is read back into the neutral response.
 */
#include "llm/llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "llm/sse.h"
#include "net/http.h"

#define BODY_CAP (16u << 20)   /* a blocking answer or an error body */
#define TEXT_CAP (16u << 20)   /* the answer's text, reasoning, tool arguments */

/* ---- the state of one attempt ---- */

typedef struct {
    const sl_llm_endpoint *ep;
    const sl_llm_stream *st;
    sl_http *h;
    sl_sse sse;
    bool sse_on;           /* the answer is an event stream */
    bool body_mode;        /* not an event stream: collect the body */
    sl_buf body;
    long status;
    double retry_after;    /* seconds, from the header; -1 when none */
    sl_buf text, reasoning;
    sl_value *calls;       /* [{id, name, args (string), index}] */
    sl_value *events;      /* for the tape: [{"text"|"reasoning": piece}] */
    char finish[32];
    json_int_t prompt_tokens, completion_tokens;
    bool done;             /* [DONE] / message_stop */
    bool emitted;          /* something went to the caller's callbacks */
    char *stream_error;    /* an error the stream reported */
    bool malformed;        /* ... because a chunk was not JSON (not worth a retry) */
    bool cancelled;
    bool timed_out;        /* silence longer than the read timeout */
    double last_rx;        /* when bytes last arrived (or the attempt began) */
    int anth_block_kind[64];  /* anthropic: per content block: 0 text, 1 tool, 2 thinking */
    int anth_block_call[64];  /* ... and the index in calls for tool blocks */
} call;

static void emit(call *c, bool reasoning, const char *s, size_t n)
{
    if (!n)
        return;
    sl_buf_add(reasoning ? &c->reasoning : &c->text, s, n);
    if (c->events)
        json_array_append_new(c->events, json_pack("{s:s%}", reasoning ? "reasoning" : "text", s, n));
    if (c->st) {
        void (*fn)(const char *, size_t, void *) = reasoning ? c->st->on_reasoning : c->st->on_text;
        if (fn) {
            fn(s, n, c->st->ud);
            c->emitted = true;
        }
    }
}

static sl_value *new_call(call *c, const char *id, const char *name, json_int_t index)
{
    sl_value *o = json_pack("{s:s, s:s, s:s, s:I}", "id", id ? id : "", "name", name ? name : "",
                            "args", "", "index", index);
    json_array_append_new(c->calls, o);
    return o;
}

static void append_str(sl_value *o, const char *key, const char *piece)
{
    if (!piece || !*piece)
        return;
    const char *old = json_string_value(json_object_get(o, key));
    size_t ol = old ? strlen(old) : 0, pl = strlen(piece);
    if (ol + pl > TEXT_CAP)
        return;
    char *s = sl_xmalloc(ol + pl + 1);
    memcpy(s, old ? old : "", ol);
    memcpy(s + ol, piece, pl + 1);
    json_object_set_new(o, key, json_stringn(s, ol + pl));
    free(s);
}

static void set_stream_error(call *c, const char *msg)
{
    if (!c->stream_error)
        c->stream_error = sl_xstrdup(msg ? msg : "the provider reported an error mid-stream");
}

/* ---- OpenAI style ---- */

static void openai_delta_calls(call *c, const sl_value *tcs)
{
    for (size_t i = 0; i < json_array_size(tcs); i++) {
        const sl_value *t = json_array_get(tcs, i);
        json_int_t index = json_integer_value(json_object_get(t, "index"));
        const char *id = json_string_value(json_object_get(t, "id"));
        const sl_value *fn = json_object_get(t, "function");
        const char *name = json_string_value(json_object_get(fn, "name"));
        const char *args = json_string_value(json_object_get(fn, "arguments"));
        /* the latest call at this index, unless a new id starts another
         * (Ollama numbers every call 0) */
        sl_value *slot = NULL;
        for (size_t k = json_array_size(c->calls); k-- > 0;) {
            sl_value *o = json_array_get(c->calls, k);
            if (json_integer_value(json_object_get(o, "index")) == index) {
                slot = o;
                break;
            }
        }
        const char *sid = slot ? json_string_value(json_object_get(slot, "id")) : NULL;
        if (!slot || (id && *id && sid && *sid && strcmp(id, sid)))
            slot = new_call(c, id, NULL, index);
        else if (id && *id && (!sid || !*sid))
            json_object_set_new(slot, "id", json_string(id));
        append_str(slot, "name", name);
        append_str(slot, "args", args);
    }
}

static void openai_usage(call *c, const sl_value *u)
{
    if (!json_is_object(u))
        return;
    if (json_is_integer(json_object_get(u, "prompt_tokens")))
        c->prompt_tokens = json_integer_value(json_object_get(u, "prompt_tokens"));
    if (json_is_integer(json_object_get(u, "completion_tokens")))
        c->completion_tokens = json_integer_value(json_object_get(u, "completion_tokens"));
}

static const char *error_message(const sl_value *e)
{
    if (json_is_string(e))
        return json_string_value(e);
    const char *m = json_string_value(json_object_get(e, "message"));
    return m ? m : "the provider reported an error";
}

static int openai_event(const char *event, const char *data, size_t len, void *ud)
{
    (void)event;
    call *c = ud;
    if (len == 6 && !memcmp(data, "[DONE]", 6)) {
        c->done = true;
        return 0;
    }
    json_error_t je;
    sl_value *j = json_loadb(data, len, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        char msg[320];
        snprintf(msg, sizeof msg, "the provider sent a stream chunk that is not JSON (%s)", je.text);
        set_stream_error(c, msg);
        c->malformed = true;
        return 1;
    }
    const sl_value *err = json_object_get(j, "error");
    if (err && !json_is_null(err)) {
        set_stream_error(c, error_message(err));
        json_decref(j);
        return 1;
    }
    openai_usage(c, json_object_get(j, "usage"));
    const sl_value *ch = json_array_get(json_object_get(j, "choices"), 0);
    if (ch) {
        const sl_value *d = json_object_get(ch, "delta");
        const sl_value *rc = json_object_get(d, "reasoning_content");
        if (!json_is_string(rc))
            rc = json_object_get(d, "reasoning");
        if (json_is_string(rc))
            emit(c, true, json_string_value(rc), json_string_length(rc));
        const sl_value *tx = json_object_get(d, "content");
        if (json_is_string(tx))
            emit(c, false, json_string_value(tx), json_string_length(tx));
        openai_delta_calls(c, json_object_get(d, "tool_calls"));
        const char *fr = json_string_value(json_object_get(ch, "finish_reason"));
        if (fr)
            snprintf(c->finish, sizeof c->finish, "%s", fr);
    }
    json_decref(j);
    return 0;
}

static int openai_body(call *c, const sl_value *j)
{
    const sl_value *ch = json_array_get(json_object_get(j, "choices"), 0);
    const sl_value *m = json_object_get(ch, "message");
    if (!json_is_object(m))
        return -1;
    const sl_value *rc = json_object_get(m, "reasoning_content");
    if (json_is_string(rc))
        emit(c, true, json_string_value(rc), json_string_length(rc));
    const sl_value *tx = json_object_get(m, "content");
    if (json_is_string(tx))
        emit(c, false, json_string_value(tx), json_string_length(tx));
    const sl_value *tcs = json_object_get(m, "tool_calls");
    for (size_t i = 0; i < json_array_size(tcs); i++) {
        const sl_value *t = json_array_get(tcs, i);
        const sl_value *fn = json_object_get(t, "function");
        sl_value *o = new_call(c, json_string_value(json_object_get(t, "id")),
                               json_string_value(json_object_get(fn, "name")), (json_int_t)i);
        append_str(o, "args", json_string_value(json_object_get(fn, "arguments")));
    }
    const char *fr = json_string_value(json_object_get(ch, "finish_reason"));
    if (fr)
        snprintf(c->finish, sizeof c->finish, "%s", fr);
    openai_usage(c, json_object_get(j, "usage"));
    c->done = true;
    return 0;
}

/* ---- Anthropic style ---- */

static const char *anthropic_finish(const char *stop)
{
    if (!stop)
        return "";
    if (!strcmp(stop, "end_turn") || !strcmp(stop, "stop_sequence"))
        return "stop";
    if (!strcmp(stop, "max_tokens"))
        return "length";
    if (!strcmp(stop, "tool_use"))
        return "tool_calls";
    return stop;
}

static void anthropic_usage(call *c, const sl_value *u)
{
    if (json_is_integer(json_object_get(u, "input_tokens")))
        c->prompt_tokens = json_integer_value(json_object_get(u, "input_tokens"));
    if (json_is_integer(json_object_get(u, "output_tokens")))
        c->completion_tokens = json_integer_value(json_object_get(u, "output_tokens"));
}

static int anthropic_event(const char *event, const char *data, size_t len, void *ud)
{
    call *c = ud;
    json_error_t je;
    sl_value *j = json_loadb(data, len, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        char msg[320];
        snprintf(msg, sizeof msg, "the provider sent a stream event that is not JSON (%s)", je.text);
        set_stream_error(c, msg);
        c->malformed = true;
        return 1;
    }
    const char *type = json_string_value(json_object_get(j, "type"));
    if (!type)
        type = event;
    json_int_t idx = json_integer_value(json_object_get(j, "index"));
    bool slot = idx >= 0 && idx < 64;
    if (!strcmp(type, "error")) {
        set_stream_error(c, error_message(json_object_get(j, "error")));
        json_decref(j);
        return 1;
    } else if (!strcmp(type, "message_start")) {
        anthropic_usage(c, json_object_get(json_object_get(j, "message"), "usage"));
    } else if (!strcmp(type, "content_block_start") && slot) {
        const sl_value *b = json_object_get(j, "content_block");
        const char *bt = json_string_value(json_object_get(b, "type"));
        c->anth_block_kind[idx] = 0;
        if (bt && !strcmp(bt, "tool_use")) {
            c->anth_block_kind[idx] = 1;
            c->anth_block_call[idx] = (int)json_array_size(c->calls);
            new_call(c, json_string_value(json_object_get(b, "id")),
                     json_string_value(json_object_get(b, "name")), idx);
        } else if (bt && (!strcmp(bt, "thinking") || !strcmp(bt, "redacted_thinking"))) {
            c->anth_block_kind[idx] = 2;
        } else {
            const sl_value *t = json_object_get(b, "text");
            if (json_is_string(t))
                emit(c, false, json_string_value(t), json_string_length(t));
        }
    } else if (!strcmp(type, "content_block_delta") && slot) {
        const sl_value *d = json_object_get(j, "delta");
        const char *dt = json_string_value(json_object_get(d, "type"));
        if (dt && !strcmp(dt, "text_delta")) {
            const sl_value *t = json_object_get(d, "text");
            emit(c, false, json_string_value(t), json_string_length(t));
        } else if (dt && !strcmp(dt, "thinking_delta")) {
            const sl_value *t = json_object_get(d, "thinking");
            emit(c, true, json_string_value(t), json_string_length(t));
        } else if (dt && !strcmp(dt, "input_json_delta") && c->anth_block_kind[idx] == 1) {
            sl_value *o = json_array_get(c->calls, (size_t)c->anth_block_call[idx]);
            append_str(o, "args", json_string_value(json_object_get(d, "partial_json")));
        }
    } else if (!strcmp(type, "message_delta")) {
        const char *stop = json_string_value(json_object_get(json_object_get(j, "delta"),
                                                             "stop_reason"));
        if (stop)
            snprintf(c->finish, sizeof c->finish, "%s", anthropic_finish(stop));
        anthropic_usage(c, json_object_get(j, "usage"));
    } else if (!strcmp(type, "message_stop")) {
        c->done = true;
    }
    json_decref(j);
    return 0;
}

static int anthropic_body(call *c, const sl_value *j)
{
    const sl_value *content = json_object_get(j, "content");
    if (!json_is_array(content))
        return -1;
    for (size_t i = 0; i < json_array_size(content); i++) {
        const sl_value *b = json_array_get(content, i);
        const char *bt = json_string_value(json_object_get(b, "type"));
        if (!bt)
            continue;
        if (!strcmp(bt, "text")) {
            const sl_value *t = json_object_get(b, "text");
            emit(c, false, json_string_value(t), json_string_length(t));
        } else if (!strcmp(bt, "thinking")) {
            const sl_value *t = json_object_get(b, "thinking");
            emit(c, true, json_string_value(t), json_string_length(t));
        } else if (!strcmp(bt, "tool_use")) {
            sl_value *o = new_call(c, json_string_value(json_object_get(b, "id")),
                                   json_string_value(json_object_get(b, "name")), (json_int_t)i);
            char *args = json_dumps(json_object_get(b, "input"), JSON_COMPACT | JSON_ENCODE_ANY);
            append_str(o, "args", args);
            free(args);
        }
    }
    snprintf(c->finish, sizeof c->finish, "%s",
             anthropic_finish(json_string_value(json_object_get(j, "stop_reason"))));
    anthropic_usage(c, json_object_get(j, "usage"));
    c->done = true;
    return 0;
}

/* ---- writing the request ---- */

/* A data: URL split into media type and base64 data (pointers into url). */
static bool data_url(const char *url, char *mime, size_t mn, const char **b64)
{
    if (strncmp(url, "data:", 5))
        return false;
    const char *semi = strstr(url, ";base64,");
    if (!semi || (size_t)(semi - url - 5) >= mn)
        return false;
    memcpy(mime, url + 5, (size_t)(semi - url - 5));
    mime[semi - url - 5] = 0;
    *b64 = semi + 8;
    return true;
}

static sl_value *openai_content(const sl_value *content)
{
    if (!json_is_array(content))
        return json_incref((sl_value *)content);
    sl_value *parts = json_array();
    for (size_t i = 0; i < json_array_size(content); i++) {
        const sl_value *p = json_array_get(content, i);
        const char *t = json_string_value(json_object_get(p, "type"));
        if (t && !strcmp(t, "image")) {
            sl_value *iu = json_pack("{s:O}", "url", json_object_get(p, "url"));
            if (json_object_get(p, "detail"))
                json_object_set(iu, "detail", json_object_get(p, "detail"));
            json_array_append_new(parts, json_pack("{s:s, s:o}", "type", "image_url",
                                                   "image_url", iu));
        } else {
            json_array_append_new(parts, json_pack("{s:s, s:O}", "type", "text", "text",
                                                   json_object_get(p, "text")));
        }
    }
    return parts;
}

static sl_value *openai_request(const sl_value *req, bool stream)
{
    sl_value *o = json_object();
    json_object_set(o, "model", json_object_get(req, "model"));
    sl_value *msgs = json_array();
    const sl_value *sys = json_object_get(req, "system");
    if (json_is_string(sys) && json_string_length(sys))
        json_array_append_new(msgs, json_pack("{s:s, s:O}", "role", "system", "content", sys));
    const sl_value *in = json_object_get(req, "messages");
    for (size_t i = 0; i < json_array_size(in); i++) {
        const sl_value *m = json_array_get(in, i);
        sl_value *w = json_pack("{s:O}", "role", json_object_get(m, "role"));
        const sl_value *content = json_object_get(m, "content");
        json_object_set_new(w, "content", content ? openai_content(content) : json_null());
        const sl_value *tcs = json_object_get(m, "tool_calls");
        if (json_array_size(tcs)) {
            sl_value *arr = json_array();
            for (size_t k = 0; k < json_array_size(tcs); k++) {
                const sl_value *t = json_array_get(tcs, k);
                json_array_append_new(
                    arr, json_pack("{s:O, s:s, s:{s:O, s:O}}", "id", json_object_get(t, "id"),
                                   "type", "function", "function", "name",
                                   json_object_get(t, "name"), "arguments",
                                   json_object_get(t, "arguments")));
            }
            json_object_set_new(w, "tool_calls", arr);
        }
        if (json_object_get(m, "tool_call_id"))
            json_object_set(w, "tool_call_id", json_object_get(m, "tool_call_id"));
        json_array_append_new(msgs, w);
    }
    json_object_set_new(o, "messages", msgs);
    const sl_value *tools = json_object_get(req, "tools");
    if (json_array_size(tools)) {
        sl_value *arr = json_array();
        for (size_t i = 0; i < json_array_size(tools); i++) {
            const sl_value *t = json_array_get(tools, i);
            sl_value *fn = json_pack("{s:O}", "name", json_object_get(t, "name"));
            if (json_object_get(t, "description"))
                json_object_set(fn, "description", json_object_get(t, "description"));
            const sl_value *ps = json_object_get(t, "parameters");
            json_object_set_new(fn, "parameters", ps ? json_incref((sl_value *)ps)
                                                     : json_pack("{s:s}", "type", "object"));
            json_array_append_new(arr, json_pack("{s:s, s:o}", "type", "function", "function", fn));
        }
        json_object_set_new(o, "tools", arr);
        const sl_value *tc = json_object_get(req, "tool_choice");
        if (json_is_string(tc))
            json_object_set(o, "tool_choice", (sl_value *)tc);
        else if (json_is_object(tc))
            json_object_set_new(o, "tool_choice",
                                json_pack("{s:s, s:{s:O}}", "type", "function", "function", "name",
                                          json_object_get(tc, "name")));
    }
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)json_object_get(req, "params"), k, v)
        json_object_set(o, k, (sl_value *)v);
    if (stream) {
        json_object_set_new(o, "stream", json_true());
        json_object_set_new(o, "stream_options", json_pack("{s:b}", "include_usage", 1));
    }
    return o;
}

static sl_value *anthropic_content(const sl_value *content)
{
    if (!json_is_array(content))
        return json_pack("[{s:s, s:O}]", "type", "text", "text",
                         content ? content : json_string(""));
    sl_value *parts = json_array();
    for (size_t i = 0; i < json_array_size(content); i++) {
        const sl_value *p = json_array_get(content, i);
        const char *t = json_string_value(json_object_get(p, "type"));
        if (t && !strcmp(t, "image")) {
            const char *url = json_string_value(json_object_get(p, "url"));
            char mime[64];
            const char *b64;
            if (url && data_url(url, mime, sizeof mime, &b64))
                json_array_append_new(parts, json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "image",
                                                       "source", "type", "base64", "media_type",
                                                       mime, "data", b64));
            else
                json_array_append_new(parts, json_pack("{s:s, s:{s:s, s:s}}", "type", "image",
                                                       "source", "type", "url", "url",
                                                       url ? url : ""));
        } else {
            json_array_append_new(parts, json_pack("{s:s, s:O}", "type", "text", "text",
                                                   json_object_get(p, "text")));
        }
    }
    return parts;
}

static sl_value *anthropic_request(const sl_value *req, bool stream)
{
    sl_value *o = json_object();
    json_object_set(o, "model", json_object_get(req, "model"));
    sl_buf sys;
    sl_buf_init(&sys, 0);
    const sl_value *s0 = json_object_get(req, "system");
    if (json_is_string(s0))
        sl_buf_adds(&sys, json_string_value(s0));
    sl_value *msgs = json_array();
    const sl_value *in = json_object_get(req, "messages");
    for (size_t i = 0; i < json_array_size(in); i++) {
        const sl_value *m = json_array_get(in, i);
        const char *role = json_string_value(json_object_get(m, "role"));
        const sl_value *content = json_object_get(m, "content");
        if (role && !strcmp(role, "system")) {
            if (sys.len)
                sl_buf_adds(&sys, "\n");
            if (json_is_string(content))
                sl_buf_adds(&sys, json_string_value(content));
            continue;
        }
        sl_value *blocks;
        const char *wrole = "user";
        if (role && !strcmp(role, "tool")) {
            blocks = json_pack("[{s:s, s:O, s:O}]", "type", "tool_result", "tool_use_id",
                               json_object_get(m, "tool_call_id"), "content",
                               content ? content : json_string(""));
        } else {
            wrole = role && !strcmp(role, "assistant") ? "assistant" : "user";
            blocks = json_is_string(content) && !json_string_length(content) ? json_array()
                                                                            : anthropic_content(content);
            const sl_value *tcs = json_object_get(m, "tool_calls");
            for (size_t k = 0; k < json_array_size(tcs); k++) {
                const sl_value *t = json_array_get(tcs, k);
                const char *args = json_string_value(json_object_get(t, "arguments"));
                sl_value *input = args ? json_loads(args, 0, NULL) : NULL;
                json_array_append_new(blocks, json_pack("{s:s, s:O, s:O, s:o}", "type", "tool_use",
                                                        "id", json_object_get(t, "id"), "name",
                                                        json_object_get(t, "name"), "input",
                                                        input ? input : json_object()));
            }
        }
        /* the API wants user and assistant turns to alternate */
        sl_value *last = json_array_get(msgs, json_array_size(msgs) - 1);
        if (last && !strcmp(json_string_value(json_object_get(last, "role")), wrole)) {
            json_array_extend(json_object_get(last, "content"), blocks);
            json_decref(blocks);
        } else {
            json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", wrole, "content", blocks));
        }
    }
    if (sys.len)
        json_object_set_new(o, "system", json_stringn(sys.data, sys.len));
    sl_buf_release(&sys);
    json_object_set_new(o, "messages", msgs);
    const sl_value *params = json_object_get(req, "params");
    const sl_value *mt = json_object_get(params, "max_tokens");
    json_object_set_new(o, "max_tokens", json_is_integer(mt) ? json_incref((sl_value *)mt)
                                                             : json_integer(4096));
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)params, k, v) {
        if (!strcmp(k, "max_tokens") || !strcmp(k, "response_format") ||
            !strcmp(k, "presence_penalty") || !strcmp(k, "frequency_penalty") ||
            !strcmp(k, "seed"))
            continue; /* not Anthropic parameters */
        json_object_set(o, !strcmp(k, "stop") ? "stop_sequences" : k, (sl_value *)v);
    }
    const sl_value *tools = json_object_get(req, "tools");
    if (json_array_size(tools)) {
        sl_value *arr = json_array();
        for (size_t i = 0; i < json_array_size(tools); i++) {
            const sl_value *t = json_array_get(tools, i);
            sl_value *w = json_pack("{s:O}", "name", json_object_get(t, "name"));
            if (json_object_get(t, "description"))
                json_object_set(w, "description", json_object_get(t, "description"));
            const sl_value *ps = json_object_get(t, "parameters");
            json_object_set_new(w, "input_schema", ps ? json_incref((sl_value *)ps)
                                                      : json_pack("{s:s}", "type", "object"));
            json_array_append_new(arr, w);
        }
        json_object_set_new(o, "tools", arr);
        const sl_value *tc = json_object_get(req, "tool_choice");
        const char *tcs = json_string_value(tc);
        if (tcs)
            json_object_set_new(o, "tool_choice",
                                json_pack("{s:s}", "type",
                                          !strcmp(tcs, "required") ? "any"
                                          : !strcmp(tcs, "none")   ? "none"
                                                                   : "auto"));
        else if (json_is_object(tc))
            json_object_set_new(o, "tool_choice", json_pack("{s:s, s:O}", "type", "tool", "name",
                                                            json_object_get(tc, "name")));
    }
    if (stream)
        json_object_set_new(o, "stream", json_true());
    return o;
}

/* ---- transport ---- */

static int on_header(const char *p, size_t len, void *ud)
{
    call *c = ud;
    c->last_rx = sl_clock_s();
    double wait = sl_http_retry_after(p, len);
    if (wait >= 0)
        c->retry_after = wait;
    return 0;
}

static int on_body(const char *p, size_t len, void *ud)
{
    call *c = ud;
    c->last_rx = sl_clock_s();
    if (!c->sse_on && !c->body_mode) {
        c->status = sl_http_status(c->h);
        const char *ct = sl_http_content_type(c->h);
        if (c->status == 200 && ct && strstr(ct, "text/event-stream"))
            c->sse_on = true;
        else
            c->body_mode = true;
    }
    if (c->body_mode)
        return sl_buf_add(&c->body, p, len);
    return sl_sse_feed(&c->sse, p, len);
}

/* The caller's stop, and the read timeout: the longest silence since the
 * attempt began or bytes last arrived (net/http's read_idle_s counts only
 * once connected).  Asked by net/http while the transfer runs. */
static bool call_stop(void *ud)
{
    call *c = ud;
    if (c->st && c->st->cancelled && c->st->cancelled(c->st->ud))
        c->cancelled = true;
    if (c->cancelled)
        return true;
    double limit = c->ep->read_timeout_s > 0 ? c->ep->read_timeout_s : 600;
    if (sl_clock_s() - c->last_rx > limit) {
        c->timed_out = true;
        return true;
    }
    return false;
}

static char *url_for(const sl_llm_endpoint *ep)
{
    const char *base = ep->base_url ? ep->base_url : "";
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    if (ep->style == SL_LLM_ANTHROPIC) {
        bool v1 = n >= 3 && !strncmp(base + n - 3, "/v1", 3);
        return sl_xasprintf("%.*s%s", (int)n, base, v1 ? "/messages" : "/v1/messages");
    }
    return sl_xasprintf("%.*s/chat/completions", (int)n, base);
}

static void reset_call(call *c)
{
    sl_sse_release(&c->sse);
    sl_sse_init(&c->sse, 4u << 20, c->ep->style == SL_LLM_ANTHROPIC ? anthropic_event : openai_event,
                c);
    sl_buf_reset(&c->body);
    sl_buf_reset(&c->text);
    sl_buf_reset(&c->reasoning);
    json_array_clear(c->calls);
    if (c->events)
        json_array_clear(c->events);
    c->finish[0] = 0;
    c->prompt_tokens = c->completion_tokens = 0;
    c->done = false;
    c->sse_on = c->body_mode = false;
    free(c->stream_error);
    c->stream_error = NULL;
    c->malformed = false;
    c->status = 0;
    c->retry_after = -1;
}

static bool retryable_status(long s)
{
    return s == 408 || s == 409 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504 ||
           s == 529;
}

static bool retryable_transfer(sl_http_result rc)
{
    return rc == SL_HTTP_CONNECT || rc == SL_HTTP_BROKEN || rc == SL_HTTP_TIMEOUT ||
           rc == SL_HTTP_CONNECT_TIMEOUT;
}

/* Sleeps `secs`, waking early when the caller cancels. */
static bool backoff(const call *c, double secs)
{
    double slept = 0;
    while (slept < secs) {
        if (c->st && c->st->cancelled && c->st->cancelled(c->st->ud))
            return false;
        double step = secs - slept < 0.05 ? secs - slept : 0.05;
        struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
        slept += step;
    }
    return true;
}

/* The provider's own words for an error answer. */
static void http_error(call *c, sl_err *err)
{
    json_error_t je;
    sl_value *j = json_loadb(c->body.data ? c->body.data : "", c->body.len, 0, &je);
    const char *msg = NULL;
    if (json_is_object(j)) {
        const sl_value *e = json_object_get(j, "error");
        msg = e ? error_message(e) : json_string_value(json_object_get(j, "message"));
    }
    char snippet[300];
    if (!msg) {
        size_t n = c->body.len < sizeof snippet - 1 ? c->body.len : sizeof snippet - 1;
        memcpy(snippet, c->body.data ? c->body.data : "", n);
        snippet[n] = 0;
        msg = n ? snippet : "no details";
    }
    const char *hint = c->status == 401 || c->status == 403
                           ? "; check the API key configured for this provider"
                       : c->status == 404 ? "; check the provider's base URL and the model name"
                       : c->status == 429 ? "; the provider is rate limiting (retries ran out)"
                                          : "";
    /* some providers quote the key they were given: never pass it on */
    sl_buf clean;
    sl_buf_init(&clean, 0);
    const char *key = c->ep->api_key;
    size_t kl = key ? strlen(key) : 0;
    for (const char *p = msg; *p;) {
        const char *hit = kl >= 4 ? strstr(p, key) : NULL;
        if (!hit) {
            sl_buf_adds(&clean, p);
            break;
        }
        sl_buf_add(&clean, p, (size_t)(hit - p));
        sl_buf_adds(&clean, "[the API key]");
        p = hit + kl;
    }
    sl_err_set(err, SL_ENODE, "model provider '%s' answered HTTP %ld: %s%s", c->ep->name,
               c->status, clean.data ? clean.data : "", hint);
    sl_buf_release(&clean);
    json_decref(j);
}

static sl_value *finish_response(call *c)
{
    sl_value *calls = json_array();
    for (size_t i = 0; i < json_array_size(c->calls); i++) {
        const sl_value *o = json_array_get(c->calls, i);
        const char *args = json_string_value(json_object_get(o, "args"));
        sl_value *t = json_pack("{s:O, s:O, s:s}", "id", json_object_get(o, "id"), "name",
                                json_object_get(o, "name"), "arguments",
                                args && *args ? args : "{}");
        if (args && *args) {
            json_error_t je;
            sl_value *parsed = json_loads(args, JSON_DECODE_ANY, &je);
            if (!json_is_object(parsed))
                json_object_set_new(t, "arguments_error",
                                    json_sprintf("the arguments are not a JSON object (%s)",
                                                 parsed ? "another JSON value" : je.text));
            json_decref(parsed);
        }
        json_array_append_new(calls, t);
    }
    const char *fin = c->finish[0] ? c->finish : json_array_size(calls) ? "tool_calls" : "stop";
    return json_pack("{s:s%, s:s%, s:o, s:s, s:{s:I, s:I, s:I}}", "text",
                     c->text.data ? c->text.data : "", c->text.len, "reasoning_content",
                     c->reasoning.data ? c->reasoning.data : "", c->reasoning.len, "tool_calls",
                     calls, "finish_reason", fin, "usage", "prompt_tokens", c->prompt_tokens,
                     "completion_tokens", c->completion_tokens, "total_tokens",
                     c->prompt_tokens + c->completion_tokens);
}

/* One request, retried as the endpoint allows; the handle carries the
 * URL, body and headers already. */
static int perform(call *c, const char *url, sl_value **resp, sl_err *err)
{
    sl_http_opts *o = sl_http_opts_of(c->h);
    o->accept_encoding = "";
    o->tcp_keepalive = true;
    o->buffer_size = 16384;
    o->connect_s = c->ep->connect_timeout_s > 0 ? c->ep->connect_timeout_s : 10;
    o->stop = call_stop;
    o->stop_ud = c;
    o->on_body = on_body;
    o->on_header = on_header;
    o->ud = c;
    int attempts = (c->ep->max_retries > 0 ? c->ep->max_retries : 0) + 1;
    for (int a = 0; a < attempts; a++) {
        reset_call(c);
        c->last_rx = sl_clock_s();
        c->timed_out = false;
        sl_http_result rc = sl_http_perform(c->h);
        if (c->timed_out)
            rc = SL_HTTP_TIMEOUT;
        if (c->sse_on)
            sl_sse_finish(&c->sse);
        c->status = sl_http_status(c->h);
        if (c->cancelled)
            return sl_err_set(err, SL_ECANCELED, "the model call was cancelled");
        bool last = a + 1 == attempts || c->emitted;
        if (c->stream_error) {
            if (!last && !c->emitted && !c->done && !c->malformed) {
                if (!backoff(c, ldexp(0.5, a)))
                    return sl_err_set(err, SL_ECANCELED, "the model call was cancelled");
                continue;
            }
            return sl_err_set(err, SL_ENODE, "model provider '%s' failed mid-answer: %s",
                              c->ep->name, c->stream_error);
        }
        if (rc != SL_HTTP_OK && rc != SL_HTTP_CALLBACK) {
            if (!last && retryable_transfer(rc)) {
                if (!backoff(c, ldexp(0.5, a)))
                    return sl_err_set(err, SL_ECANCELED, "the model call was cancelled");
                continue;
            }
            if (rc == SL_HTTP_TIMEOUT || rc == SL_HTTP_CONNECT_TIMEOUT)
                return sl_err_set(err, SL_ETIMEOUT,
                                  "model provider '%s' at %s sent nothing for %g s (its "
                                  "read_timeout)",
                                  c->ep->name, url,
                                  c->ep->read_timeout_s > 0 ? c->ep->read_timeout_s : 600);
            return sl_err_set(err, SL_EIO, "cannot reach model provider '%s' at %s: %s",
                              c->ep->name, url, sl_http_strerror(c->h));
        }
        if (rc == SL_HTTP_CALLBACK && !c->body.toobig && !c->sse.failed)
            return sl_err_set(err, SL_EIO, "model provider '%s': the answer could not be read",
                              c->ep->name);
        if (c->body.toobig || c->sse.failed)
            return sl_err_set(err, SL_ELIMIT,
                              "model provider '%s' sent an answer larger than sluice accepts",
                              c->ep->name);
        if (c->status != 200) {
            if (!last && retryable_status(c->status)) {
                double wait = c->retry_after >= 0 ? c->retry_after : ldexp(0.5, a);
                if (wait > 60)
                    wait = 60;
                wait += (double)(rand() % 100) / 1000.0;
                if (!backoff(c, wait))
                    return sl_err_set(err, SL_ECANCELED, "the model call was cancelled");
                continue;
            }
            http_error(c, err);
            return -1;
        }
        if (c->body_mode) {
            json_error_t je;
            sl_value *j = json_loadb(c->body.data ? c->body.data : "", c->body.len, 0, &je);
            int ok = json_is_object(j) ? (c->ep->style == SL_LLM_ANTHROPIC ? anthropic_body(c, j)
                                                                           : openai_body(c, j))
                                       : -1;
            json_decref(j);
            if (ok)
                return sl_err_set(err, SL_EIO,
                                  "model provider '%s' answered with something that is not a "
                                  "completion (%s)",
                                  c->ep->name, json_is_object(j) ? "no choices" : je.text);
        } else if (!c->done) {
            if (!last && !c->emitted) {
                if (!backoff(c, ldexp(0.5, a)))
                    return sl_err_set(err, SL_ECANCELED, "the model call was cancelled");
                continue;
            }
            return sl_err_set(err, SL_EIO,
                              "model provider '%s' closed the stream before the answer ended",
                              c->ep->name);
        }
        *resp = finish_response(c);
        return 0;
    }
    return sl_err_set(err, SL_EIO, "model provider '%s': no attempt succeeded", c->ep->name);
}

static void replay_events(const sl_value *events, const sl_llm_stream *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < json_array_size(events); i++) {
        const sl_value *e = json_array_get(events, i);
        const sl_value *t = json_object_get(e, "text"), *r = json_object_get(e, "reasoning");
        if (json_is_string(t) && st->on_text)
            st->on_text(json_string_value(t), json_string_length(t), st->ud);
        if (json_is_string(r) && st->on_reasoning)
            st->on_reasoning(json_string_value(r), json_string_length(r), st->ud);
    }
}

int sl_llm_call(const sl_llm_endpoint *ep, const sl_value *req, const sl_llm_stream *stream,
                sl_llm_tape *tape, sl_value **resp, sl_err *err)
{
    *resp = NULL;
    if (tape && sl_llm_tape_replaying(tape)) {
        const sl_value *events = NULL;
        sl_value *r = sl_llm_tape_find(tape, req, &events, err);
        if (!r)
            return -1;
        replay_events(events, stream);
        *resp = r;
        return 0;
    }
    bool streaming = stream && (stream->on_text || stream->on_reasoning);
    sl_value *wire = ep->style == SL_LLM_ANTHROPIC ? anthropic_request(req, streaming)
                                                   : openai_request(req, streaming);
    char *body = json_dumps(wire, JSON_COMPACT);
    json_decref(wire);
    char *url = url_for(ep);
    call c;
    memset(&c, 0, sizeof c);
    c.ep = ep;
    c.st = stream;
    c.h = sl_http_new(err);
    char *auth = NULL;
    if (c.h) {
        sl_http_url(c.h, url);
        sl_http_method(c.h, "POST", body, strlen(body), true);
        sl_http_header(c.h, "Content-Type: application/json");
        sl_http_header(c.h, streaming ? "Accept: text/event-stream" : "Accept: application/json");
        if (ep->style == SL_LLM_ANTHROPIC) {
            sl_http_header(c.h, "anthropic-version: 2023-06-01");
            if (ep->api_key)
                auth = sl_xasprintf("x-api-key: %s", ep->api_key);
        } else if (ep->api_key && *ep->api_key) {
            auth = sl_xasprintf("Authorization: Bearer %s", ep->api_key);
        }
        if (auth)
            sl_http_header(c.h, auth);
    }
    sl_buf_init(&c.body, BODY_CAP);
    sl_buf_init(&c.text, TEXT_CAP);
    sl_buf_init(&c.reasoning, TEXT_CAP);
    sl_sse_init(&c.sse, 4u << 20, openai_event, &c);
    c.calls = json_array();
    c.events = tape ? json_array() : NULL;
    int rc = c.h ? perform(&c, url, resp, err) : -1;
    if (!rc && tape && sl_llm_tape_add(tape, req, c.events, *resp, err)) {
        json_decref(*resp);
        *resp = NULL;
        rc = -1;
    }
    sl_http_free(c.h);
    sl_sse_release(&c.sse);
    sl_buf_release(&c.body);
    sl_buf_release(&c.text);
    sl_buf_release(&c.reasoning);
    json_decref(c.calls);
    json_decref(c.events);
    free(c.stream_error);
    if (auth) {
        explicit_bzero(auth, strlen(auth));  /* the key leaves no copy behind */
        free(auth);
    }
    free(url);
    free(body);
    return rc;
}
