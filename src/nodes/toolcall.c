/*
 * toolcall — see toolcall.h.
 */
#include "nodes/toolcall.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/mime.h"
#include "core/secret.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "llm/llm.h"
#include "nodes/wftool.h"
#include "tools/builtin.h"

const sl_binding *sl_toolcall_binding(const struct sl_graph *g, const struct sl_config *cfg,
                                      const char *provider_id, const char *provider_name)
{
    const sl_binding *b = g ? sl_bindings_find(g->tools, provider_id, provider_name) : NULL;
    if (!b)
        b = sl_bindings_find(sl_config_tools(cfg), provider_id, provider_name);
    /* last, sluice's own (tools/builtin.h), by the provider's id only: an api
     * or workflow tool's provider_name is the user's word, not a provider */
    return b ? b : sl_bindings_find(sl_builtins(), provider_id && *provider_id ? provider_id
                                                   : provider_name, NULL);
}

static bool stop_asked(void *ud)
{
    sl_node_exec *x = ud;
    sl_err e = {0};
    bool stop = sl_exec_interrupted(x, &e) != 0;
    sl_err_clear(&e);
    return stop;
}

static struct sl_sandbox *run_sandbox(void *ud, sl_err *err)
{
    return sl_exec_sandbox(ud, err);
}

static int run_file_bytes(void *ud, const sl_value *file, size_t cap, sl_buf *out, sl_err *err)
{
    return sl_exec_file_bytes(ud, file, cap, out, err);
}

/* The call's bounds: the limit, the binding's own timeout when smaller,
 * and what is left of the run's time. */
static void make_ctx(sl_node_exec *x, const sl_binding *b, sl_tool_ctx *ctx)
{
    const sl_limits *L = sl_exec_limits(x);
    memset(ctx, 0, sizeof *ctx);
    double t = L->tool_timeout_s > 0 ? L->tool_timeout_s : SL_TOOL_TIMEOUT_S;
    if (b && sl_binding_timeout(b) > 0 && sl_binding_timeout(b) < t)
        t = sl_binding_timeout(b);
    double left = sl_exec_time_left(x);
    if (left > 0 && left < t)
        t = left;
    ctx->timeout_s = t > 0.001 ? t : 0.001;
    ctx->max_output = L->tool_max_output ? L->tool_max_output : SL_TOOL_MAX_OUTPUT;
    ctx->allow_private = L->tool_allow_private;
    ctx->cancelled = stop_asked;
    ctx->sandbox = run_sandbox;
    ctx->ud = x;
    ctx->caller = x;
    ctx->file_bytes = run_file_bytes;
}

/* ---- workflow bindings ---- */

/* A workflow binding's toolset is made here, above the engine
 * (nodes/wftool.h): loaded on first use and kept on the binding.
 * 0 when b is of another kind or its toolset is there. */
static int workflow_ready(sl_node_exec *x, const sl_binding *b, sl_err *err)
{
    if (!b || strcmp(sl_binding_kind(b), "workflow"))
        return 0;
    const sl_graph *g = sl_exec_graph(x);
    return sl_wftool_get(b, sl_exec_config(x), g ? g->doc.path : NULL, err) ? 0 : -1;
}

/* A workflow toolset has one tool, and the DSL may name it anything
 * (x-any-name: from the toolset, or a tape of it). */
static const sl_value *workflow_tool(const sl_value *list)
{
    const sl_value *t = json_array_get(list, 0);
    return json_array_size(list) == 1 && json_is_true(json_object_get(t, "x-any-name")) ? t
                                                                                     : NULL;
}

/* ---- the tape ---- */

static sl_value *result_json(const sl_tool_result *r)
{
    sl_value *files = json_array();
    for (size_t i = 0; i < r->n_files; i++) {
        sl_buf b64;
        sl_buf_init(&b64, 0);
        sl_base64_encode((const unsigned char *)r->files[i].data.data, r->files[i].data.len,
                         &b64);
        json_array_append_new(files, json_pack("{s:s, s:s, s:s#}", "name", r->files[i].name,
                                               "mime_type", r->files[i].mime_type, "data",
                                               b64.data ? b64.data : "", b64.len));
        sl_buf_release(&b64);
    }
    return json_pack("{s:s#, s:O, s:O, s:o, s:b}", "text", r->text.data ? r->text.data : "",
                     r->text.len, "json", r->json, "variables", r->variables, "files", files,
                     "is_error", r->is_error);
}

static int result_from(const sl_value *v, sl_tool_result *r, sl_err *err)
{
    const sl_value *e = json_object_get(v, "error");
    if (e) {
        const char *code = json_string_value(json_object_get(e, "code"));
        sl_errcode c = SL_EIO;
        for (int k = SL_EINVAL; k <= SL_ENOTFOUND; k++)
            if (code && !strcmp(code, sl_errcode_name((sl_errcode)k)))
                c = (sl_errcode)k;
        return sl_err_set(err, c, "%s", json_string_value(json_object_get(e, "message")));
    }
    const char *text = json_string_value(json_object_get(v, "text"));
    if (text)
        sl_buf_add(&r->text, text, json_string_length(json_object_get(v, "text")));
    if (json_is_array(json_object_get(v, "json")))
        json_array_extend(r->json, json_object_get(v, "json"));
    if (json_is_object(json_object_get(v, "variables")))
        json_object_update(r->variables, json_object_get(v, "variables"));
    r->is_error = json_is_true(json_object_get(v, "is_error"));
    size_t i;
    const sl_value *f;
    json_array_foreach(json_object_get(v, "files"), i, f) {
        const char *d = json_string_value(json_object_get(f, "data"));
        sl_buf bytes;
        sl_buf_init(&bytes, 0);
        if (!d || sl_base64_decode(d, strlen(d), &bytes)) {
            sl_buf_release(&bytes);
            return sl_err_set(err, SL_EPARSE, "the tape's tool result holds a file that is "
                              "not base64; record it again with --record");
        }
        sl_tool_result_file(r, json_string_value(json_object_get(f, "name")),
                            json_string_value(json_object_get(f, "mime_type")), bytes.data,
                            bytes.len);
        sl_buf_release(&bytes);
    }
    return 0;
}

static sl_value *error_json(const sl_err *e)
{
    return json_pack("{s:{s:s, s:s}}", "error", "code", sl_errcode_name(e->code), "message",
                     e->msg ? e->msg : "");
}

/* Replays req from the tape: 1 when not replaying, 0 with *resp, -1. */
static int from_tape(sl_node_exec *x, const sl_value *req, sl_value **resp, sl_err *err)
{
    sl_llm_tape *tape = sl_exec_llm_tape(x);
    if (!tape || !sl_llm_tape_replaying(tape))
        return 1;
    const sl_value *events = NULL;
    /* the tape holds requests masked (to_tape): look them up the same way */
    sl_value *masked = sl_secret_mask_value((sl_value *)req);
    *resp = sl_llm_tape_find(tape, masked, &events, err);
    json_decref(masked);
    return *resp ? 0 : -1;
}

static void to_tape(sl_node_exec *x, const sl_value *req, const sl_value *resp)
{
    sl_llm_tape *tape = sl_exec_llm_tape(x);
    if (!tape || sl_llm_tape_replaying(tape))
        return;
    sl_err e = {0};
    /* a tape is a log: a credential a tool echoes is masked there too */
    sl_value *mreq = sl_secret_mask_value((sl_value *)req);
    sl_value *mresp = sl_secret_mask_value((sl_value *)resp);
    if (sl_llm_tape_add(tape, mreq, NULL, mresp, &e))
        sl_err_clear(&e);  /* a tape that cannot be written loses the recording, not the run */
    json_decref(mreq);
    json_decref(mresp);
}

/* ---- definitions ---- */

bool sl_toolcall_unbound_ok(const struct sl_config *cfg)
{
    return sl_config_offline(cfg);
}

bool sl_toolcall_replaying(sl_node_exec *x)
{
    sl_llm_tape *tape = sl_exec_llm_tape(x);
    return tape && sl_llm_tape_replaying(tape);
}

static const char *src_id(const sl_tool_src *src)
{
    return src->provider ? src->provider : src->binding ? sl_binding_id(src->binding) : "";
}

/* The server's list with names as the DSL calls them (a binding's
 * `names` read backwards). */
static sl_value *dsl_names(const sl_tool_src *src, const sl_value *list)
{
    sl_value *out = json_deep_copy(list);
    if (!src->binding)
        return out;
    size_t i;
    sl_value *t;
    json_array_foreach(out, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        const char *dsl = n ? sl_binding_dsl_name(src->binding, n) : NULL;
        if (dsl && strcmp(dsl, n))
            json_object_set_new(t, "name", json_string(dsl));
    }
    return out;
}

static int list_src(sl_node_exec *x, const sl_tool_src *src, bool refresh, sl_value **out,
                    sl_err *err)
{
    *out = NULL;
    sl_value *req = json_pack("{s:s}", "tool_list", src_id(src));
    sl_value *resp = NULL;
    int rc = from_tape(x, req, &resp, err);
    if (rc == 0) {
        *out = json_incref(json_object_get(resp, "tools"));
        json_decref(resp);
        json_decref(req);
        if (!json_is_array(*out)) {
            json_decref(*out);
            *out = NULL;
            return sl_err_set(err, SL_EPARSE, "the tape's list of tools is not a list");
        }
        return 0;
    }
    if (rc < 0) {
        json_decref(req);
        return -1;
    }
    sl_tool_ctx ctx;
    make_ctx(x, src->binding, &ctx);
    const sl_limits *L = sl_exec_limits(x);
    sl_value *raw = NULL;
    if (src->binding)
        rc = workflow_ready(x, src->binding, err) ? -1
             : sl_binding_list(src->binding, L->tool_allow_private, &ctx, refresh, &raw, err);
    else if (src->ts)
        rc = sl_toolset_list(src->ts, &ctx, &raw, err);
    else
        rc = sl_err_set(err, SL_ENOTFOUND, "the tools of '%s' are not bound; %s", src_id(src),
                        "bind the provider in sluice.yml (docs/tools.md)");
    if (!rc) {
        *out = dsl_names(src, raw);
        sl_value *rec = json_pack("{s:O}", "tools", *out);
        to_tape(x, req, rec);
        json_decref(rec);
    }
    json_decref(raw);
    json_decref(req);
    return rc;
}

int sl_toolcall_list(sl_node_exec *x, const sl_tool_src *src, sl_value **out, sl_err *err)
{
    return list_src(x, src, false, out, err);
}

sl_value *sl_toolcall_def(sl_node_exec *x, const sl_tool_src *src, const char *name,
                          sl_err *err)
{
    sl_value *list = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (list_src(x, src, pass == 1, &list, err))
            return NULL;
        const sl_value *d = sl_binding_find_tool(list, name);
        const sl_value *wf = d ? NULL : workflow_tool(list);
        if (wf) {
            sl_value *r = json_deep_copy(wf);
            json_object_set_new(r, "name", json_string(name ? name : ""));
            json_decref(list);
            return r;
        }
        if (d) {
            sl_value *r = json_incref((sl_value *)d);
            json_decref(list);
            return r;
        }
        if (pass == 1 || sl_toolcall_replaying(x) || !src->binding)
            break;  /* a tape or a node's own server holds one list */
        json_decref(list);
        list = NULL;
    }
    /* say what it does have */
    sl_buf names;
    sl_buf_init(&names, 4096);
    size_t i;
    const sl_value *t;
    json_array_foreach(list, i, t) {
        if (i == 20) {
            sl_buf_addf(&names, ", … (%zu in all)", json_array_size(list));
            break;
        }
        sl_buf_addf(&names, "%s%s", i ? ", " : "", json_string_value(json_object_get(t, "name")));
    }
    json_decref(list);
    if (src->binding)
        sl_err_set(err, SL_ENOTFOUND,
                   "tool binding '%s' (%s) has no tool named '%s'; it has: %s. Map the DSL's "
                   "tool_name to one of them under tools.%s.names in sluice.yml",
                   sl_binding_id(src->binding), sl_binding_where(src->binding), name ? name : "",
                   names.len ? names.data : "(none)", sl_binding_id(src->binding));
    else
        sl_err_set(err, SL_ENOTFOUND, "'%s' has no tool named '%s'; it has: %s", src_id(src),
                   name ? name : "", names.len ? names.data : "(none)");
    sl_buf_release(&names);
    return NULL;
}

/* ---- arguments ---- */

sl_value *sl_toolcall_input(sl_node_exec *x, const sl_value *in)
{
    const char *type = json_string_value(json_object_get(in, "type"));
    const sl_value *v = json_object_get(in, "value");
    if (!json_is_object(in) || !type || !v)
        return json_is_null(in) || !in ? NULL : json_incref((sl_value *)in);
    if (json_is_null(v))
        return NULL;
    if (!strcmp(type, "variable"))
        return sl_exec_get(x, v);
    if (json_is_string(v)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_exec_render(x, json_string_value(v), &b);
        sl_value *s = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return s;
    }
    return strcmp(type, "mixed") ? json_incref((sl_value *)v) : NULL;
}

static sl_value *coerce_one(const char *type, sl_value *v)
{
    if (!type || !v)
        return NULL;
    if (!strcmp(type, "boolean")) {
        if (json_is_integer(v))
            return json_boolean(json_integer_value(v) != 0);
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            if (!strcasecmp(s, "true") || !strcmp(s, "1"))
                return json_true();
            if (!strcasecmp(s, "false") || !strcmp(s, "0"))
                return json_false();
        }
    } else if (!strcmp(type, "integer") || !strcmp(type, "number")) {
        if (json_is_string(v)) {
            sl_value *n = sl_value_number_from_text(json_string_value(v));
            if (n && !strcmp(type, "integer") && json_is_real(n) &&
                json_real_value(n) > -9.2e18 && json_real_value(n) < 9.2e18 &&
                json_real_value(n) == (double)(long long)json_real_value(n)) {
                sl_value *i = json_integer((long long)json_real_value(n));
                json_decref(n);
                return i;
            }
            return n;
        }
        if (json_is_boolean(v))
            return json_integer(json_is_true(v));
    } else if (!strcmp(type, "string")) {
        if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v)) {
            sl_buf b;
            sl_buf_init(&b, 0);
            sl_value_text(v, &b);
            sl_value *s = json_stringn(b.data ? b.data : "", b.len);
            sl_buf_release(&b);
            return s;
        }
    } else if (!strcmp(type, "array") || !strcmp(type, "object")) {
        if (json_is_string(v)) {
            sl_value *p = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
            if (p && (!strcmp(type, "array") ? json_is_array(p) : json_is_object(p)))
                return p;
            json_decref(p);
        }
    }
    return NULL;
}

void sl_toolcall_coerce(const sl_value *def, sl_value *args)
{
    const sl_value *props = json_object_get(json_object_get(def, "inputSchema"), "properties");
    const char *k;
    sl_value *v;
    void *tmp;
    json_object_foreach_safe(args, tmp, k, v) {
        if (json_is_null(v)) {
            json_object_del(args, k);
            continue;
        }
        const sl_value *ty = json_object_get(json_object_get(props, k), "type");
        sl_value *c = coerce_one(json_string_value(ty), v);
        if (c)
            json_object_set_new(args, k, c);
    }
}

/* ---- the call ---- */

int sl_toolcall(sl_node_exec *x, const sl_tool_src *src, const char *name, const sl_value *args,
                sl_tool_result *res, sl_err *err)
{
    sl_value *req = json_pack("{s:{s:s, s:s, s:o}}", "tool", "binding", src_id(src), "name",
                              name, "arguments",
                              args ? json_incref((sl_value *)args) : json_object());
    sl_value *resp = NULL;
    int rc = from_tape(x, req, &resp, err);
    if (rc <= 0) {
        if (rc == 0)
            rc = result_from(resp, res, err);
        json_decref(resp);
        json_decref(req);
        return rc;
    }
    sl_tool_ctx ctx;
    make_ctx(x, src->binding, &ctx);
    const sl_limits *L = sl_exec_limits(x);
    sl_toolset *ts = src->ts;
    if (src->binding)
        ts = workflow_ready(x, src->binding, err) ? NULL
             : sl_binding_toolset(src->binding, L->tool_allow_private, err);
    else if (!ts)
        sl_err_set(err, SL_ENOTFOUND, "'%s' is not bound to a tool server; bind it in "
                   "sluice.yml (docs/tools.md)", src_id(src));
    const char *server_name = src->binding ? sl_binding_tool_name(src->binding, name) : name;
    rc = ts ? sl_toolset_call(ts, &ctx, server_name, args, res, err) : -1;
    if (rc && err && err->code == SL_ETIMEOUT && !err->setting)
        err->setting = "tool_timeout_s";
    sl_value *rec = rc ? error_json(err) : result_json(res);
    to_tape(x, req, rec);
    json_decref(rec);
    json_decref(resp);
    json_decref(req);
    return rc;
}

/* File i's name: its own, else one from its type, so the file keeps its
 * kind ("tool-file-1.png"). */
static void file_name(const sl_tool_result *res, size_t i, char *name, size_t n)
{
    const sl_tool_file *f = &res->files[i];
    if (*f->name) {
        snprintf(name, n, "%s", f->name);
        return;
    }
    const char *ext = sl_mime_ext_for(f->mime_type);
    snprintf(name, n, "tool-file-%zu%s%s", i + 1, ext && *ext != '.' ? "." : "", ext ? ext : "");
}

void sl_toolcall_text(const sl_tool_result *res, sl_buf *out)
{
    if (res->text.len)
        sl_buf_add(out, res->text.data, res->text.len);
    size_t i;
    const sl_value *j;
    json_array_foreach(res->json, i, j) {
        char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        sl_buf_addf(out, "%stool response: %s", out->len ? "\n" : "", s ? s : "null");
        free(s);
    }
    if (json_object_size(res->variables)) {
        char *s = json_dumps(res->variables, JSON_COMPACT);
        sl_buf_addf(out, "%svariables: %s", out->len ? "\n" : "", s ? s : "{}");
        free(s);
    }
    for (size_t k = 0; k < res->n_files; k++) {
        char name[160];
        file_name(res, k, name, sizeof name);
        sl_buf_addf(out, "%sfile: %s (%s, %zu bytes), handed back with the answer",
                    out->len ? "\n" : "", name, res->files[k].mime_type,
                    res->files[k].data.len);
    }
    if (!out->len)
        sl_buf_adds(out, "(the tool returned nothing)");
}

sl_value *sl_toolcall_files(sl_node_exec *x, const sl_tool_result *res, sl_err *err)
{
    sl_value *out = json_array();
    for (size_t i = 0; i < res->n_files; i++) {
        const sl_tool_file *f = &res->files[i];
        char name[160];
        file_name(res, i, name, sizeof name);
        sl_value *fv = sl_exec_store_file(x, name, f->data.data ? f->data.data : "",
                                          f->data.len, err);
        if (!fv) {
            json_decref(out);
            return NULL;
        }
        if (f->mime_type && strcmp(f->mime_type, "application/octet-stream"))
            json_object_set_new(fv, "mime_type", json_string(f->mime_type));
        json_array_append_new(out, fv);
    }
    return out;
}
