/*
 * model — see model.h.
 */
#include "nodes/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "engine/graph.h"
#include "engine/config.h"

/* The model's name: `name` in LLM nodes, `model` in agent nodes'
 * model-selector values. */
static const char *model_name(const sl_value *m)
{
    const char *name = json_string_value(json_object_get(m, "name"));
    return name ? name : json_string_value(json_object_get(m, "model"));
}

int sl_model_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *m = json_object_get(n->data, "model");
    if (!json_is_object(m)) {
        sl_check_error(c, n, n->data, "model", "model",
                       "the node names no model: it needs model{provider, name}");
        return -1;
    }
    return sl_model_check_value(c, n, m, "model");
}

int sl_model_check_value(sl_check *c, const sl_gnode *n, const sl_value *m, const char *field)
{
    const char *provider = json_string_value(json_object_get(m, "provider"));
    const char *name = model_name(m);
    char f[160];
    if (!provider || !*provider || !name || !*name) {
        bool no_provider = !provider || !*provider;
        snprintf(f, sizeof f, "%s.%s", field, no_provider ? "provider" : "name");
        sl_check_error(c, n, m, no_provider ? "provider" : "name", f,
                       "is %s: the node's model needs a provider and a name; pick the model "
                       "again in Dify's editor, or set %s.provider (e.g. openai) and %s.name",
                       (no_provider ? provider : name) ? "empty" : "missing", field, field);
        return -1;
    }
    const char *model;
    sl_err why = {0};
    if (!sl_config_resolve(sl_check_config_get(c), provider, name, &model, &why)) {
        snprintf(f, sizeof f, "%s.provider", field);
        sl_check_config(c, n, m, "provider", f, "%s", why.msg);
        sl_err_clear(&why);
    }
    const sl_value *cp = json_object_get(m, "completion_params");
    if (cp && !json_is_null(cp) && !json_is_object(cp)) {
        snprintf(f, sizeof f, "%s.completion_params", field);
        sl_check_error(c, n, m, "completion_params", f,
                       "must be a mapping (temperature, top_p, max_tokens, stop, ...)");
        return -1;
    }
    return 0;
}

sl_value *sl_model_params(const sl_value *model)
{
    const sl_value *cp = json_object_get(model, "completion_params");
    sl_value *p = json_object();
    static const char *const pass[] = {"temperature", "top_p", "max_tokens", "presence_penalty",
                                       "frequency_penalty", "seed", NULL};
    for (const char *const *k = pass; *k; k++) {
        const sl_value *v = json_object_get(cp, *k);
        if (sl_value_is_number(v))
            json_object_set(p, *k, (sl_value *)v);
    }
    const sl_value *stop = json_object_get(cp, "stop");
    if (json_is_array(stop) && json_array_size(stop))
        json_object_set(p, "stop", (sl_value *)stop);
    else if (json_is_string(stop) && json_string_length(stop))
        json_object_set_new(p, "stop", json_pack("[O]", stop));
    const char *rf = json_string_value(json_object_get(cp, "response_format"));
    if (rf && !strcmp(rf, "json_object")) {
        json_object_set_new(p, "response_format", json_pack("{s:s}", "type", "json_object"));
    } else if (rf && !strcmp(rf, "json_schema")) {
        const sl_value *js = json_object_get(cp, "json_schema");
        sl_value *schema = json_is_string(js) ? json_loads(json_string_value(js), 0, NULL)
                                              : json_incref((sl_value *)js);
        if (json_is_object(schema)) {
            if (!json_object_get(schema, "schema"))
                schema = json_pack("{s:s, s:o}", "name", "output", "schema", schema);
            json_object_set_new(p, "response_format",
                                json_pack("{s:s, s:o}", "type", "json_schema", "json_schema", schema));
        } else {
            json_decref(schema);
        }
    }
    return p;
}

void sl_model_text(const sl_value *v, sl_buf *out)
{
    if (json_is_string(v))
        sl_buf_add(out, json_string_value(v), json_string_length(v));
    else if (v && !json_is_null(v))
        sl_value_text(v, out);
}

int sl_model_call(sl_node_exec *x, sl_value *req, const sl_llm_stream *stream, sl_value **resp)
{
    return sl_model_call_with(x, json_object_get(sl_exec_data(x), "model"), req, stream, resp);
}

int sl_model_call_with(sl_node_exec *x, const sl_value *m, sl_value *req,
                       const sl_llm_stream *stream, sl_value **resp)
{
    *resp = NULL;
    const char *provider = json_string_value(json_object_get(m, "provider"));
    const char *name = model_name(m);
    const sl_config *cfg = sl_exec_config(x);
    const char *model;
    sl_err why = {0};
    const sl_llm_endpoint *ep = sl_config_resolve(cfg, provider, name, &model, &why);
    if (!ep) {
        int rc = sl_exec_fail(x, "LLMModeRequiredError", "%s", why.msg);
        sl_err_clear(&why);
        return rc;
    }
    json_object_set_new(req, "model", json_string(model));
    char *tm = sl_xasprintf("%s/%s", provider, name);
    json_object_set_new(req, "tape_model", json_string(tm));
    free(tm);
    if (!json_object_get(req, "params"))
        json_object_set_new(req, "params", sl_model_params(m));
    sl_err err = {0};
    double t0 = sl_clock_s();
    int rc = sl_llm_call(ep, req, stream, sl_exec_llm_tape(x), resp, &err);
    if (rc) {
        /* a call the run's deadline cut short says so, and how to raise it */
        sl_err late = {0};
        if (err.code == SL_ECANCELED && sl_exec_interrupted(x, &late) < 0 &&
            late.code == SL_ETIMEOUT)
            rc = sl_exec_fail(x, "WorkflowTimeout", "%s (it ended the call to model %s)", late.msg,
                              model);
        else
            rc = sl_exec_fail(x, err.code == SL_ECANCELED ? "WorkflowStopped" : "LLMInvokeError",
                              "%s (model %s)", err.msg, model);
        sl_err_clear(&late);
        sl_err_clear(&err);
        return rc;
    }
    sl_value *u = json_object_get(*resp, "usage");
    long long pt = json_integer_value(json_object_get(u, "prompt_tokens"));
    long long ct = json_integer_value(json_object_get(u, "completion_tokens"));
    double pin = 0, pout = 0;
    const char *cur = "USD";
    sl_config_price(cfg, model, &pin, &pout, &cur);
    double prompt_price = (double)pt * pin / 1e6, completion_price = (double)ct * pout / 1e6;
    json_object_set_new(u, "prompt_unit_price", json_real(pin));
    json_object_set_new(u, "prompt_price_unit", json_real(1e-6));
    json_object_set_new(u, "prompt_price", json_real(prompt_price));
    json_object_set_new(u, "completion_unit_price", json_real(pout));
    json_object_set_new(u, "completion_price_unit", json_real(1e-6));
    json_object_set_new(u, "completion_price", json_real(completion_price));
    json_object_set_new(u, "total_price", json_real(prompt_price + completion_price));
    json_object_set_new(u, "currency", json_string(cur));
    json_object_set_new(u, "latency", json_real(sl_clock_s() - t0));
    sl_exec_usage(x, pt + ct, prompt_price + completion_price, cur);
    return 0;
}

/* ---- vision ---- */

/* The image part of a file value for the model: its bytes as a data URL
 * (files sluice holds), or the http(s) remote_url of a remote file.  NULL
 * when f is no image; NULL with *refused when it names no file this run
 * holds (a forged id or a path): the caller fails the node. */
static sl_value *image_part(sl_node_exec *x, const sl_value *f, const char *detail,
                            sl_err *refused)
{
    const char *type = json_string_value(json_object_get(f, "type"));
    const char *mime = json_string_value(json_object_get(f, "mime_type"));
    if (!(type && !strcmp(type, "image")) && !(mime && !strncmp(mime, "image/", 6)))
        return NULL;
    const char *url = json_string_value(json_object_get(f, "remote_url"));
    if (!url || !*url)
        url = json_string_value(json_object_get(f, "url"));
    if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        url = NULL;  /* only a remote file's own address goes to the model */
    sl_buf bytes, enc;
    sl_buf_init(&bytes, 0);
    sl_buf_init(&enc, 0);
    int got = sl_exec_file_bytes(x, f, (size_t)20 << 20, &bytes, refused);
    if (got < 0) {
        sl_buf_release(&bytes);
        return NULL;
    }
    if (got == 0)
        sl_base64_encode((const unsigned char *)(bytes.data ? bytes.data : ""), bytes.len, &enc);
    sl_buf_release(&bytes);
    sl_value *part = json_pack("{s:s}", "type", "image");
    if (got == 0) {
        sl_buf_addc(&enc, 0);
        char *u = sl_xasprintf("data:%s;base64,%s", mime ? mime : "image/png", enc.data);
        json_object_set_new(part, "url", json_string(u));
        free(u);
    } else if (url) {
        json_object_set_new(part, "url", json_string(url));
    } else {
        sl_buf_release(&enc);
        json_decref(part);
        return NULL;
    }
    sl_buf_release(&enc);
    if (detail)
        json_object_set_new(part, "detail", json_string(detail));
    return part;
}

int sl_model_add_images(sl_node_exec *x, sl_value *msgs, sl_value *used)
{
    const sl_value *vis = json_object_get(sl_exec_data(x), "vision");
    if (!json_is_true(json_object_get(vis, "enabled")))
        return 0;
    const sl_value *cfg = json_object_get(vis, "configs");
    const sl_value *sel = json_object_get(cfg, "variable_selector");
    sl_value *def = json_pack("[s,s]", "sys", "files");
    sl_value *files = sl_exec_get(x, json_array_size(sel) ? sel : def);
    json_decref(def);
    if (sl_value_is_file(files))
        files = json_pack("[o]", files);
    const char *detail = json_string_value(json_object_get(cfg, "detail"));
    sl_value *parts = json_array();
    for (size_t i = 0; json_is_array(files) && i < json_array_size(files); i++) {
        sl_value *f = json_array_get(files, i);
        sl_err e = {0};
        sl_value *p = image_part(x, f, detail, &e);
        if (e.msg) {
            sl_exec_fail(x, "FileRefusedError", "vision: %s", e.msg);
            sl_err_clear(&e);
            json_decref(parts);
            json_decref(files);
            return -1;
        }
        if (!p)
            continue;
        json_array_append_new(parts, p);
        if (used)
            json_array_append(used, f);
    }
    json_decref(files);
    if (!json_array_size(parts)) {
        json_decref(parts);
        return 0;
    }
    /* onto the last message when it is the user's (its text becomes a list
     * of parts), else as a new user message, as Dify does */
    sl_value *last = json_array_get(msgs, json_array_size(msgs) - 1);
    const char *role = json_string_value(json_object_get(last, "role"));
    if (!last || !role || strcmp(role, "user")) {
        last = json_pack("{s:s, s:[]}", "role", "user", "content");
        json_array_append_new(msgs, last);
    }
    sl_value *content = json_object_get(last, "content");
    if (json_is_string(content)) {
        sl_value *arr = json_array();
        if (json_string_length(content))
            json_array_append_new(arr, json_pack("{s:s, s:O}", "type", "text", "text", content));
        json_object_set_new(last, "content", arr);
        content = arr;
    }
    json_array_extend(content, parts);
    json_decref(parts);
    return 0;
}

size_t sl_model_history_from(const sl_value *memory, size_t n)
{
    const sl_value *win = json_object_get(memory, "window");
    if (json_is_true(json_object_get(win, "enabled")) &&
        json_is_integer(json_object_get(win, "size"))) {
        json_int_t size = json_integer_value(json_object_get(win, "size"));
        if (size >= 0 && (size_t)size < n)
            return n - (size_t)size;
    }
    return 0;
}

char *sl_model_history_text(sl_node_exec *x)
{
    const sl_value *mem = json_object_get(sl_exec_data(x), "memory");
    const sl_value *hist = sl_exec_history(x);
    if (!json_is_object(mem) || strcmp(sl_exec_mode(x), "advanced-chat") || !json_array_size(hist))
        return sl_xstrdup("");
    size_t n = json_array_size(hist), from = sl_model_history_from(mem, n);
    const sl_value *rp = json_object_get(mem, "role_prefix");
    const char *up = json_string_value(json_object_get(rp, "user"));
    const char *ap = json_string_value(json_object_get(rp, "assistant"));
    sl_buf b;
    sl_buf_init(&b, 0);
    for (size_t i = from; i < n; i++) {
        const sl_value *t = json_array_get(hist, i);
        const char *q = json_string_value(json_object_get(t, "query"));
        const char *a = json_string_value(json_object_get(t, "answer"));
        if (q)
            sl_buf_addf(&b, "%s%s: %s", b.len ? "\n" : "", up && *up ? up : "Human", q);
        if (a)
            sl_buf_addf(&b, "%s%s: %s", b.len ? "\n" : "", ap && *ap ? ap : "Assistant", a);
    }
    return sl_buf_detach(&b);
}
