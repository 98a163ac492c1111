/*
 * tape — record and replay of model exchanges (llm.h).
 *
 * A tape is a JSON-lines file, one exchange a line:
 *   {"request": <neutral request>, "events": [{"text": …} | {"reasoning": …}],
 *    "response": <neutral response>}
 * The request is the neutral one (llm.h), so a tape does not depend on
 * the endpoint, its URL or its key, and never holds a key.  Replaying
 * matches requests by their canonical JSON (keys sorted); the same request
 * made twice is served the recorded answers in order, the last one again
 * when they run out.  A request that was never recorded fails, naming
 * the model and the start of its last message.
 *
 * Tool calls (nodes/toolcall.c) share the tape: their request is
 * {"tool": {"binding", "name", "arguments"}} or {"tool_list": binding},
 * their response the shaped result, so an app with tools replays offline.
 * So do embeddings and reranking (llm/embed.c), one exchange per batch:
 * {"embedding": {"model", "input", "dimensions"?}} and {"rerank": {"model",
 * "query", "documents", "top_n"}}.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "llm/llm.h"

typedef struct {
    sl_value *exchanges;   /* array of {request, events, response} with the same key */
    size_t next;
} entry;

struct sl_llm_tape {
    bool replay;
    FILE *out;             /* record */
    char *path;
    pthread_mutex_t mu;
    sl_map by_key;         /* canonical request -> entry* (replay) */
};

/* The request as the tape knows it: with the model the workflow names
 * ("provider/name", from "tape_model") rather than the one an override
 * sent it to, so a tape recorded against a local model replays anywhere. */
static sl_value *tape_request(const sl_value *req)
{
    sl_value *r = json_copy((sl_value *)req);
    const sl_value *tm = json_object_get(req, "tape_model");
    if (json_is_string(tm))
        json_object_set(r, "model", (sl_value *)tm);
    json_object_del(r, "tape_model");
    return r;
}

static char *canonical(const sl_value *req)
{
    sl_value *r = tape_request(req);
    char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(r);
    return s;
}

static void free_entry(void *v)
{
    entry *e = v;
    json_decref(e->exchanges);
    free(e);
}

int sl_llm_tape_open(const char *path, bool replay, sl_llm_tape **out, sl_err *err)
{
    *out = NULL;
    sl_llm_tape *t = sl_xcalloc(1, sizeof *t);
    t->replay = replay;
    t->path = sl_xstrdup(path);
    pthread_mutex_init(&t->mu, NULL);
    if (!replay) {
        t->out = fopen(path, "a");
        if (!t->out) {
            sl_err_set(err, SL_EIO, "--record %s: cannot open for writing: %s", path,
                       strerror(errno));
            goto fail;
        }
        *out = t;
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        sl_err_set(err, SL_EIO, "--replay %s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    sl_map_init(&t->by_key);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (n == 1 && line[0] == '\n')
            continue;
        json_error_t je;
        sl_value *x = json_loadb(line, (size_t)n, 0, &je);
        const sl_value *req = json_object_get(x, "request");
        if (!json_is_object(req) || !json_is_object(json_object_get(x, "response"))) {
            sl_err_set(err, SL_EPARSE,
                       "%s:%d: not a recorded exchange (%s); a tape line is "
                       "{\"request\", \"events\", \"response\"}",
                       path, lineno, x ? "missing request or response" : je.text);
            json_decref(x);
            free(line);
            fclose(f);
            goto fail;
        }
        char *key = canonical(req);
        entry *e = sl_map_get(&t->by_key, key);
        if (!e) {
            e = sl_xcalloc(1, sizeof *e);
            e->exchanges = json_array();
            sl_map_put(&t->by_key, key, e);
        }
        json_array_append_new(e->exchanges, x);
        free(key);
    }
    free(line);
    fclose(f);
    *out = t;
    return 0;
fail:
    sl_llm_tape_close(t);
    return -1;
}

void sl_llm_tape_close(sl_llm_tape *t)
{
    if (!t)
        return;
    if (t->out)
        fclose(t->out);
    for (size_t i = 0; i < t->by_key.cap; i++)
        if (t->by_key.slots && t->by_key.slots[i].key)
            free_entry(t->by_key.slots[i].val);
    sl_map_release(&t->by_key);
    pthread_mutex_destroy(&t->mu);
    free(t->path);
    free(t);
}

bool sl_llm_tape_replaying(const sl_llm_tape *t)
{
    return t->replay;
}

sl_value *sl_llm_tape_find(sl_llm_tape *t, const sl_value *req, const sl_value **events,
                           sl_err *err)
{
    char *key = canonical(req);
    pthread_mutex_lock(&t->mu);
    entry *e = sl_map_get(&t->by_key, key);
    sl_value *resp = NULL;
    if (e) {
        size_t i = e->next < json_array_size(e->exchanges) ? e->next++
                                                           : json_array_size(e->exchanges) - 1;
        const sl_value *x = json_array_get(e->exchanges, i);
        *events = json_object_get(x, "events");
        resp = json_incref(json_object_get(x, "response"));
    }
    pthread_mutex_unlock(&t->mu);
    free(key);
    const sl_value *tool = json_object_get(req, "tool");
    if (!resp && (tool || json_object_get(req, "tool_list"))) {
        char *args = json_dumps(json_object_get(tool, "arguments"), JSON_COMPACT | JSON_SORT_KEYS);
        sl_err_set(err, SL_ENODE,
                   "--replay %s: no recorded tool call matches this one (binding %s, %s%s%s "
                   "%.80s); the workflow or its inputs changed since the recording: record it "
                   "again with --record",
                   t->path,
                   tool ? json_string_value(json_object_get(tool, "binding"))
                        : json_string_value(json_object_get(req, "tool_list")),
                   tool ? "tool " : "the list of its tools", tool ? json_string_value(
                       json_object_get(tool, "name")) : "", tool ? ", arguments" : "",
                   args ? args : "");
        free(args);
    } else if (!resp && (json_object_get(req, "embedding") || json_object_get(req, "rerank"))) {
        const sl_value *em = json_object_get(req, "embedding");
        const sl_value *rr = em ? em : json_object_get(req, "rerank");
        const char *model = json_string_value(json_object_get(rr, "model"));
        const sl_value *list = json_object_get(rr, em ? "input" : "documents");
        const char *first = em ? json_string_value(json_array_get(list, 0))
                               : json_string_value(json_object_get(rr, "query"));
        sl_err_set(err, SL_ENODE,
                   "--replay %s: no recorded %s matches this one (model %s, %zu %s, %s "
                   "\"%.80s%s\"); the %s or the model changed since the recording%s: record "
                   "it again with --record",
                   t->path, em ? "embedding batch" : "rerank call", model ? model : "(none)",
                   json_array_size(list), em ? "texts" : "documents", em ? "first:" : "query:",
                   first ? first : "", first && strlen(first) > 80 ? "…" : "",
                   em ? "texts" : "query, the documents",
                   em ? " (a different batch size makes different batches too)" : "");
    } else if (!resp) {
        const sl_value *msgs = json_object_get(req, "messages");
        const sl_value *last = json_object_get(json_array_get(msgs, json_array_size(msgs) - 1),
                                               "content");
        char *text = json_is_string(last) ? NULL : json_dumps(last, JSON_COMPACT | JSON_ENCODE_ANY);
        const char *shown = json_is_string(last) ? json_string_value(last) : text ? text : "";
        sl_err_set(err, SL_ENODE,
                   "--replay %s: no recorded exchange matches this request (model %s, %zu "
                   "messages, last: \"%.80s%s\"); the workflow or its inputs changed since the "
                   "recording: record it again with --record",
                   t->path,
                   json_string_value(json_object_get(req, json_object_get(req, "tape_model")
                                                              ? "tape_model"
                                                              : "model")),
                   json_array_size(msgs), shown, strlen(shown) > 80 ? "…" : "");
        free(text);
    }
    return resp;
}

int sl_llm_tape_add(sl_llm_tape *t, const sl_value *req, const sl_value *events,
                    const sl_value *resp, sl_err *err)
{
    sl_value *x = json_pack("{s:o, s:o, s:O}", "request", tape_request(req), "events",
                            events ? json_incref((sl_value *)events) : json_array(), "response",
                            resp);
    char *line = json_dumps(x, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(x);
    pthread_mutex_lock(&t->mu);
    int rc = fputs(line, t->out) < 0 || fputc('\n', t->out) == EOF || fflush(t->out) ? -1 : 0;
    pthread_mutex_unlock(&t->mu);
    free(line);
    if (rc)
        return sl_err_set(err, SL_EIO, "--record %s: cannot write: %s", t->path, strerror(errno));
    return 0;
}
