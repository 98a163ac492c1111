/*
 * knowledge/external — see external.h.
 */
#include "knowledge/external.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "net/http.h"

#define TYPE "ExternalKnowledgeError"

typedef struct {
    sl_buf *body;
    const sl_kb_external_req *rq;
} call_ud;

static int on_body(const char *p, size_t n, void *ud)
{
    return sl_buf_add(((call_ud *)ud)->body, p, n) ? 1 : 0;
}

static bool stop(void *ud)
{
    const sl_kb_external_req *rq = ((call_ud *)ud)->rq;
    return rq->cancelled && rq->cancelled(rq->ud);
}

/* The service's own word on a failure: error_msg (Dify's convention), else
 * a short, printable piece of the body. */
static void service_says(const sl_buf *b, sl_buf *out)
{
    sl_value *v = b->len ? json_loadb(b->data, b->len, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(v, "error_msg"));
    if (!msg)
        msg = json_string_value(json_object_get(v, "message"));
    const char *s = msg ? msg : b->data ? b->data : "";
    size_t n = msg ? strlen(msg) : b->len;
    if (n > 200) {
        n = 200;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    sl_buf t;
    sl_buf_init(&t, 0);
    sl_utf8_clean(s, n, &t);
    for (size_t i = 0; i < t.len; i++)
        if ((unsigned char)t.data[i] < 0x20)
            t.data[i] = ' ';
    if (t.len)
        sl_buf_addf(out, ": %.*s", (int)t.len, t.data);
    sl_buf_release(&t);
    json_decref(v);
}

static int failed(sl_http *h, sl_http_result hr, const char *url, double timeout, size_t cap,
                  sl_err *err)
{
    switch (hr) {
    case SL_HTTP_REFUSED: {
        const char *kind = "";
        const char *addr = sl_http_refused(h, &kind);
        return sl_err_typed(err, SL_EIO, TYPE,
                            "external knowledge API %s: sluice refused to connect to %s (%s); "
                            "if the service is yours, add allow_private: true to its binding "
                            "in sluice.yml (knowledge.datasets.ID.external)",
                            url, addr ? addr : "?", kind ? kind : "?");
    }
    case SL_HTTP_STOPPED:
        return sl_err_typed(err, SL_ECANCELED, TYPE, "external knowledge API %s: the run was "
                            "stopped", url);
    case SL_HTTP_TOO_BIG:
    case SL_HTTP_CALLBACK:
        return sl_err_typed(err, SL_ELIMIT, TYPE, "external knowledge API %s: the answer is "
                            "larger than %zu bytes, more than sluice reads (max_output_bytes)",
                            url, cap);
    case SL_HTTP_CONNECT_TIMEOUT:
    case SL_HTTP_TIMEOUT:
    case SL_HTTP_IDLE_READ:
    case SL_HTTP_IDLE_WRITE:
        return sl_err_typed(err, SL_ETIMEOUT, TYPE, "external knowledge API %s: no answer "
                            "within %g s (the binding's timeout)", url, timeout);
    default:
        return sl_err_typed(err, SL_EIO, TYPE, "external knowledge API %s: the request failed: "
                            "%s", url, sl_http_why(h));
    }
}

/* One record of the answer, checked; NULL with err naming what is wrong. */
static sl_value *record(const sl_value *r, size_t i, const char *url, sl_err *err)
{
    const sl_value *content = json_object_get(r, "content");
    const sl_value *score = json_object_get(r, "score");
    const sl_value *title = json_object_get(r, "title");
    const sl_value *meta = json_object_get(r, "metadata");
    const char *bad = !json_is_object(r)                               ? "is not an object"
                      : !json_is_string(content)                       ? "has no text content"
                      : score && !json_is_null(score) && !sl_value_is_number(score)
                          ? "has a score that is not a number"
                      : title && !json_is_null(title) && !json_is_string(title)
                          ? "has a title that is not text"
                      : meta && !json_is_null(meta) && !json_is_object(meta)
                          ? "has metadata that is not an object"
                          : NULL;
    if (bad) {
        sl_err_typed(err, SL_EPARSE, TYPE, "external knowledge API %s: records[%zu] %s; the "
                     "service must answer {\"records\": [{\"content\", \"score\", \"title\", "
                     "\"metadata\"}]}", url, i, bad);
        return NULL;
    }
    return json_pack("{s:O, s:f, s:s, s:o}", "content", content, "score",
                     score && !json_is_null(score) ? sl_value_number(score) : 0.0, "title",
                     json_is_string(title) ? json_string_value(title) : "", "metadata",
                     json_is_object(meta) ? json_deep_copy(meta) : json_object());
}

int sl_kb_external_parse(const char *body, size_t len, const char *url, sl_value **records,
                         sl_err *err)
{
    *records = NULL;
    json_error_t je;
    sl_value *v = len ? json_loadb(body, len, 0, &je) : NULL;
    const sl_value *recs = json_object_get(v, "records");
    if (!json_is_array(recs)) {
        sl_err_typed(err, SL_EPARSE, TYPE, "external knowledge API %s: the answer is not "
                     "{\"records\": [...]}%s%s", url, v ? "" : ": ",
                     v ? "" : len ? je.text : "empty body");
        json_decref(v);
        return -1;
    }
    if (json_array_size(recs) > SL_KB_EXTERNAL_MAX_RECORDS) {
        sl_err_typed(err, SL_ELIMIT, TYPE, "external knowledge API %s: %zu records, more than "
                     "the %d sluice takes from one call; lower the binding's top_k", url,
                     json_array_size(recs), SL_KB_EXTERNAL_MAX_RECORDS);
        json_decref(v);
        return -1;
    }
    sl_value *out = json_array();
    for (size_t i = 0; i < json_array_size(recs); i++) {
        sl_value *r = record(json_array_get(recs, i), i, url, err);
        if (!r) {
            json_decref(out);
            json_decref(v);
            return -1;
        }
        json_array_append_new(out, r);
    }
    json_decref(v);
    *records = out;
    return 0;
}

int sl_kb_external_retrieve(const sl_kb_external_req *rq, sl_value **records, sl_err *err)
{
    *records = NULL;
    const char *ep = rq->endpoint ? rq->endpoint : "";
    size_t n = strlen(ep);
    while (n && ep[n - 1] == '/')
        n--;
    char *url = sl_xasprintf("%.*s/retrieval", (int)n, ep);
    double timeout = rq->timeout_s > 0 ? rq->timeout_s : 60;
    size_t cap = rq->max_body ? rq->max_body : (size_t)16 << 20;
    sl_value *req = json_pack("{s:s, s:s, s:{s:i, s:f}}", "knowledge_id",
                              rq->knowledge_id ? rq->knowledge_id : "", "query",
                              rq->query ? rq->query : "", "retrieval_setting", "top_k", rq->top_k,
                              "score_threshold", rq->score_threshold);
    if (!req) {
        free(url);
        return sl_err_typed(err, SL_EINVAL, TYPE, "external knowledge API: the query or "
                            "knowledge_id is not valid UTF-8");
    }
    if (rq->metadata_condition)  /* left out when none: dify#21070 */
        json_object_set(req, "metadata_condition", (sl_value *)rq->metadata_condition);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    sl_http *h = sl_http_new(err);
    if (!h) {
        free(body);
        free(url);
        return -1;
    }
    sl_buf resp;
    sl_buf_init(&resp, cap);
    call_ud ud = {&resp, rq};
    sl_http_opts *o = sl_http_opts_of(h);
    o->connect_s = timeout < 10 ? timeout : 10;
    o->timeout_s = timeout;
    o->read_idle_s = timeout;
    o->write_idle_s = timeout;
    o->max_body = cap;
    o->max_headers = 256 << 10;
    o->guard = true;
    o->allow_private = rq->allow_private;
    o->user_agent = "sluice";
    o->accept_encoding = "";
    o->stop = stop;
    o->stop_ud = &ud;
    o->on_body = on_body;
    o->ud = &ud;
    sl_http_url(h, url);
    sl_http_method(h, "POST", body, strlen(body), true);
    sl_http_header(h, "Content-Type: application/json");
    if (rq->api_key && *rq->api_key)
        sl_http_headerf(h, "Authorization: Bearer %s", rq->api_key);
    sl_http_result hr = sl_http_perform(h);
    int rc = 0;
    if (hr != SL_HTTP_OK) {
        rc = failed(h, hr, url, timeout, cap, err);
        goto out;
    }
    long st = sl_http_status(h);
    if (st != 200) {
        sl_buf m;
        sl_buf_init(&m, 0);
        service_says(&resp, &m);
        rc = sl_err_typed(err, SL_EIO, TYPE, "external knowledge API %s answered HTTP %ld%s; "
                          "check the binding's endpoint, api_key and knowledge_id in sluice.yml",
                          url, st, m.data ? m.data : "");
        sl_buf_release(&m);
        goto out;
    }
    rc = sl_kb_external_parse(resp.data, resp.len, url, records, err);
out:
    sl_buf_release(&resp);
    sl_http_free(h);
    free(body);
    free(url);
    return rc;
}
