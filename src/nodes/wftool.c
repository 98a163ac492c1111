/*
 * wftool — see wftool.h.
 */
#include "nodes/wftool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/run.h"
#include "nodes/registry.h"

typedef struct {
    sl_toolset base;
    sl_graph g;
    char *where;     /* the app's file */
    char *name;      /* the app's name */
    sl_value *def;   /* the one tool {name, description, inputSchema} */
    /* The settings it was loaded against, for a call with no caller
     * (`sluice tools call`): they hold the binding, so they outlive it. */
    const sl_config *cfg;
    /* How deep it nests workflow tools: 1, plus the deepest of the
     * workflow tools its nodes name (found as they load with it). */
    int depth;
} wftool;

/* ---- loading, and the apps being loaded on this thread ---- */

/* A load checks the apps it names through workflow tools as it goes, on
 * the loading thread, so the chain of apps being loaded is this thread's
 * stack; an app found on it again closes a cycle. */
#define MAX_CHAIN 32
static _Thread_local const char *chain[MAX_CHAIN];
static _Thread_local int chain_depth[MAX_CHAIN];  /* deepest workflow tool each one names */
static _Thread_local int chain_n;

static const sl_toolset_ops wftool_ops;

/* Under serve, the store's bindings the apps loaded on this thread inherit
 * (sl_wftool_inherit). */
#define MAX_INHERIT 4
static _Thread_local const char *inh_spec[MAX_INHERIT];
static _Thread_local const char *inh_where[MAX_INHERIT];
static _Thread_local size_t inh_n;

void sl_wftool_inherit(const char *const *specs, const char *const *wheres, size_t n)
{
    inh_n = 0;
    for (size_t i = 0; i < n && inh_n < MAX_INHERIT; i++)
        if (specs[i]) {
            inh_spec[inh_n] = specs[i];
            inh_where[inh_n++] = wheres[i];
        }
}

static sl_wftool_app_fn app_loader;
static void *app_loader_ud;

void sl_wftool_set_app_loader(sl_wftool_app_fn fn, void *ud)
{
    app_loader_ud = ud;
    app_loader = fn;
}

/* The app being loaded on this thread names ts: its depth counts. */
static void note_depth(const sl_toolset *ts)
{
    if (chain_n > 0 && ts && ts->ops == &wftool_ops &&
        ((const wftool *)ts)->depth > chain_depth[chain_n - 1])
        chain_depth[chain_n - 1] = ((const wftool *)ts)->depth;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A start variable's JSON Schema type, or NULL when a tool cannot take it
 * (files: a model or a tool node has no file to hand over by name). */
static const char *schema_type(const char *t)
{
    if (!t || !strcmp(t, "text-input") || !strcmp(t, "paragraph") || !strcmp(t, "select"))
        return "string";
    if (!strcmp(t, "number"))
        return "number";
    if (!strcmp(t, "checkbox"))
        return "boolean";
    if (!strcmp(t, "json_object"))
        return "object";
    return NULL;
}

static sl_value *make_def(const sl_graph *g)
{
    sl_value *props = json_object(), *req = json_array();
    size_t i;
    const sl_value *v;
    json_array_foreach(g->inputs, i, v) {
        const char *name = json_string_value(json_object_get(v, "variable"));
        const char *type = schema_type(json_string_value(json_object_get(v, "type")));
        if (!name || !type)
            continue;
        sl_value *p = json_pack("{s:s}", "type", type);
        const char *label = json_string_value(json_object_get(v, "label"));
        const char *hint = json_string_value(json_object_get(v, "hint"));
        if ((hint && *hint) || (label && *label))
            json_object_set_new(p, "description", json_string(hint && *hint ? hint : label));
        const sl_value *opts = json_object_get(v, "options");
        if (!strcmp(type, "string") && json_is_array(opts) && json_array_size(opts))
            json_object_set(p, "enum", (sl_value *)opts);
        json_object_set_new(props, name, p);
        if (json_is_true(json_object_get(v, "required")))
            json_array_append_new(req, json_string(name));
    }
    const sl_value *app = json_object_get(g->doc.root, "app");
    const char *desc = json_string_value(json_object_get(app, "description"));
    /* x-any-name: the one tool answers to any name (kept on a tape too, so
     * a replay with no binding knows it) */
    return json_pack("{s:s, s:s, s:{s:s, s:o, s:o}, s:b}", "name", g->name ? g->name : "workflow",
                     "description", desc && *desc ? desc : g->name ? g->name : "a workflow",
                     "inputSchema", "type", "object", "properties", props, "required", req,
                     "x-any-name", 1);
}

/* real: the app's file, or (app_id) its id in serve's store. */
static int load_app(const char *real, bool app_id, const sl_config *cfg, wftool **out,
                    sl_err *err)
{
    wftool *w = sl_xcalloc(1, sizeof *w);
    w->base.ops = &wftool_ops;
    w->where = app_id ? sl_xasprintf("%s (of the server's store)", real) : sl_xstrdup(real);
    sl_diag d;
    sl_diag_init(&d);
    sl_err e = {0};
    int rc;
    if (app_id) {
        /* the server loads it with its own bindings; what this thread
         * inherits is the calling app's, kept for its other nodes */
        const char *spec[MAX_INHERIT], *where[MAX_INHERIT];
        size_t n = inh_n;
        memcpy(spec, inh_spec, sizeof spec);
        memcpy(where, inh_where, sizeof where);
        rc = app_loader(app_loader_ud, real, cfg, &w->g, &e);
        sl_wftool_inherit(spec, where, n);
    } else {
        /* its bundle's bindings, then the store's (serve), then cfg's: as
         * a top-level run of it would find them */
        rc = sl_graph_load_file_specs(&w->g, &sl_nodes, cfg, inh_spec, inh_where, inh_n, real,
                                      &d, &e);
    }
    if (rc) {
        const char *first = NULL;
        size_t n = 0;
        for (size_t i = 0; i < d.n; i++)
            if (!d.v[i].warning) {
                first = first ? first : d.v[i].msg;
                n++;
            }
        sl_err_set(err, SL_EVALIDATE, "the workflow tool's app %s does not load: %s%s",
                   w->where, first ? first : e.msg ? e.msg : "(no reason given)",
                   n > 1 ? " (and more: sluice validate lists them)" : "");
    } else if (!w->g.mode || strcmp(w->g.mode, "workflow")) {
        rc = sl_err_set(err, SL_EUNSUPPORTED, "the workflow tool's app %s is a %s app; only "
                        "workflow apps run as tools, as in Dify", w->where,
                        w->g.mode ? w->g.mode : "(no mode)");
    }
    sl_err_clear(&e);
    sl_diag_release(&d);
    if (rc) {
        sl_graph_release(&w->g);
        free(w->where);
        free(w);
        return -1;
    }
    w->name = sl_xstrdup(w->g.name ? w->g.name : base_name(real));
    w->cfg = cfg;
    w->def = make_def(&w->g);
    *out = w;
    return 0;
}

/* Keeps w: on b, or, when b is the settings' (shared by every app) and the
 * app being loaded inherits the store's bindings (serve), on that app's
 * own bindings `own` under b's id, since what the nested app finds
 * depends on the app that names it. */
static sl_toolset *keep(const sl_binding *b, const sl_config *cfg, sl_bindings *own, wftool *w)
{
    if (own && inh_n && sl_bindings_get(sl_config_tools(cfg), sl_binding_id(b)) == b) {
        sl_bindings_add_toolset(own, sl_binding_id(b), &w->base, w->where);
        return &w->base;
    }
    return sl_binding_keep_toolset(b, &w->base);
}

static sl_toolset *get(const sl_binding *b, const sl_config *cfg, const char *from,
                       sl_bindings *own, sl_err *err)
{
    sl_err e = {0};
    sl_toolset *have = sl_binding_toolset(b, false, &e);
    sl_err_clear(&e);
    if (have && have->ops == &wftool_ops) {
        note_depth(have);
        return have;
    }
    const char *path = sl_binding_workflow_path(b), *app = sl_binding_workflow_app(b);
    if (!path && !app) {
        sl_err_set(err, SL_EINVAL, "tool binding '%s' is not a workflow", sl_binding_id(b));
        return NULL;
    }
    if (app && !app_loader) {
        sl_err_set(err, SL_EUNSUPPORTED, "tool binding '%s' names app %s of a server's store, "
                   "which only `sluice serve` has; here, name the app's file (workflow: FILE)",
                   sl_binding_id(b), app);
        return NULL;
    }
    /* the chain holds files, and apps of the store as "app:ID" */
    char *real = app ? sl_xasprintf("app:%s", app) : realpath(path, NULL);
    if (!real) {
        sl_err_set(err, SL_ENOTFOUND, "tool binding '%s': the workflow tool's app %s cannot be "
                   "read (%s); fix the path under tools.%s.workflow", sl_binding_id(b), path,
                   strerror(errno), sl_binding_id(b));
        return NULL;
    }
    char *from_real = from ? realpath(from, NULL) : NULL;
    int pushed = 0;
    if (from_real && (!chain_n || strcmp(chain[chain_n - 1], from_real)) &&
        chain_n < MAX_CHAIN) {
        chain_depth[chain_n] = 0;
        chain[chain_n++] = from_real;
        pushed++;
    }
    int at = -1;
    for (int i = 0; i < chain_n && at < 0; i++)
        if (!strcmp(chain[i], real))
            at = i;
    sl_toolset *ts = NULL;
    if (at >= 0 || chain_n >= MAX_CHAIN) {
        sl_buf msg;
        sl_buf_init(&msg, 0);
        for (int i = at >= 0 ? at : 0; i < chain_n; i++)
            sl_buf_addf(&msg, "%s -> ", chain[i]);
        sl_buf_adds(&msg, real);
        if (at >= 0)
            sl_err_set(err, SL_EVALIDATE, "workflow tools form a cycle: %s; an app may not "
                       "call itself through its workflow tools", msg.data);
        else
            sl_err_set(err, SL_ELIMIT, "workflow tools name apps more than %d deep: %s",
                       MAX_CHAIN, msg.data);
        sl_buf_release(&msg);
    } else {
        chain_depth[chain_n] = 0;
        chain[chain_n++] = real;
        wftool *w = NULL;
        if (!load_app(app ? app : real, app != NULL, cfg, &w, err)) {
            w->depth = 1 + chain_depth[chain_n - 1];
            ts = keep(b, cfg, own, w);
        }
        chain_n--;
    }
    chain_n -= pushed;
    note_depth(ts);
    free(from_real);
    free(real);
    return ts;
}

sl_toolset *sl_wftool_get(const sl_binding *b, const sl_config *cfg, const char *from,
                          sl_err *err)
{
    return get(b, cfg, from, NULL, err);
}

int sl_wftool_check(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                    const char *field, const sl_binding *b)
{
    const sl_graph *g = sl_check_graph(c);
    sl_err e = {0};
    if (get(b, sl_check_config_get(c), g ? g->doc.path : NULL, g ? g->tools : NULL, &e))
        return 0;
    sl_check_error(c, n, at, key, field, "%s", e.msg);
    sl_err_clear(&e);
    return -1;
}

/* ---- the toolset ---- */

static int wf_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)ctx;
    (void)err;
    *out = json_pack("[O]", ((wftool *)t)->def);
    return 0;
}

/* The nested run's node events as agent_log entries of the calling node
 * (docs/tools.md, "Workflows as tools"). */
typedef struct {
    sl_node_exec *x;
    const wftool *w;
} fwd;

static void forward(const char *event, const sl_value *data, void *ud)
{
    fwd *f = ud;
    if (!f->x)
        return;
    if (!strcmp(event, "agent_log")) {
        /* from a workflow tool of the nested run, one level down: its
         * top entries hang under the nested node that made the call */
        sl_value *e = json_deep_copy(data);
        const sl_value *p = json_object_get(e, "parent_id");
        if (!p || json_is_null(p))
            json_object_set(e, "parent_id", json_object_get(data, "node_execution_id"));
        json_object_del(e, "node_execution_id");
        sl_exec_event(f->x, "agent_log", e);
        return;
    }
    bool started = !strcmp(event, "node_started");
    if (!started && strcmp(event, "node_finished"))
        return;
    const char *st = json_string_value(json_object_get(data, "status"));
    const char *title = json_string_value(json_object_get(data, "title"));
    const sl_value *id = json_object_get(data, "id");
    const sl_value *error = json_object_get(data, "error");
    sl_value *e = json_object();
    json_object_set_new(e, "id", json_is_string(id) ? json_incref((sl_value *)id)
                                                    : json_string(""));
    json_object_set_new(e, "label", json_sprintf("%s: %s", f->w->name, title ? title : "node"));
    json_object_set_new(e, "parent_id", json_null());
    json_object_set_new(e, "error", json_is_string(error) ? json_incref((sl_value *)error)
                                                          : json_null());
    json_object_set_new(e, "status", json_string(started ? "start"
                                                 : st && !strcmp(st, "succeeded") ? "success"
                                                 : "error"));
    json_object_set_new(e, "data", json_deep_copy(data));
    json_object_set_new(e, "metadata", json_pack("{s:s, s:s}", "provider", "workflow",
                                                 "event", event));
    const sl_value *el = json_object_get(data, "elapsed_time");
    if (el)
        json_object_set(json_object_get(e, "metadata"), "elapsed_time", (sl_value *)el);
    sl_exec_event(f->x, "agent_log", e);
}

/* Stops the nested run when the caller is stopped or out of time. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    sl_run *r;
    const sl_tool_ctx *ctx;
} watch;

static void *watch_main(void *p)
{
    watch *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        struct timespec ts = sl_clock_wall_in(0.05);
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (!w->done && sl_tool_cancelled(w->ctx)) {
            sl_run_cancel(w->r);
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* A file value of the nested run as a file of the result. */
static int add_file(sl_run *r, const sl_tool_ctx *ctx, const sl_value *f, sl_tool_result *res,
                    sl_err *err)
{
    int fd = sl_run_file_open(r, f, err);
    if (fd < 0)
        return -1;
    size_t cap = sl_tool_max_output(ctx);
    sl_buf b;
    sl_buf_init(&b, cap + 1);
    char chunk[65536];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0 && !b.toobig)
        sl_buf_add(&b, chunk, (size_t)n);
    close(fd);
    int rc = n < 0 ? sl_err_set(err, SL_EIO, "reading a file of the run: %s", strerror(errno))
                   : b.toobig ? sl_err_limit(err, SL_ELIMIT, "tool_max_output", "a file the "
                                             "workflow returned is larger than tool_max_output "
                                             "(%zu bytes)", cap)
                   : sl_tool_result_charge(res, ctx, b.len, err);
    if (!rc)
        sl_tool_result_file(res, json_string_value(json_object_get(f, "filename")),
                            json_string_value(json_object_get(f, "mime_type")),
                            b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return rc;
}

static bool all_files(const sl_value *v)
{
    if (!json_is_array(v) || !json_array_size(v))
        return false;
    size_t i;
    const sl_value *e;
    json_array_foreach(v, i, e)
        if (!sl_value_is_file(e))
            return false;
    return true;
}

/* Dify's result: files out of the outputs, then the rest as text (JSON)
 * and as one json message. */
static int shape(sl_run *r, const sl_tool_ctx *ctx, sl_tool_result *res, sl_err *err)
{
    sl_value *outs = json_object();
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)sl_run_outputs(r), k, v) {
        if (sl_value_is_file(v)) {
            if (add_file(r, ctx, v, res, err))
                goto fail;
        } else if (all_files(v)) {
            size_t i;
            const sl_value *f;
            json_array_foreach(v, i, f)
                if (add_file(r, ctx, f, res, err))
                    goto fail;
        } else {
            json_object_set(outs, k, (sl_value *)v);
        }
    }
    char *text = json_dumps(outs, JSON_ENCODE_ANY);  /* ", " and ": ", as json.dumps */
    size_t len = text ? strlen(text) : 0;
    if (sl_tool_result_charge(res, ctx, 2 * len, err)) {
        free(text);
        goto fail;
    }
    sl_buf_add(&res->text, text ? text : "", len);
    free(text);
    json_array_append_new(res->json, outs);
    return 0;
fail:
    json_decref(outs);
    return -1;
}

static int wf_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name, const sl_value *args,
                   sl_tool_result *res, sl_err *err)
{
    (void)name;  /* one tool: any name the DSL gives it */
    wftool *w = (wftool *)t;
    sl_node_exec *x = ctx->caller;
    sl_limits L;
    if (x)
        L = *sl_exec_limits(x);
    else
        sl_limits_default(&L);
    /* known at load for the tools its nodes name; the count the nested
     * runs carry down catches the rest (an agent's tools loaded late) */
    if (w->depth > L.tool_workflow_depth)
        return sl_err_limit(err, SL_ELIMIT, "tool_workflow_depth", "the workflow tool '%s' (%s) "
                            "nests workflow tools %d deep, and tool_workflow_depth allows %d "
                            "here; raise it with --limit tool_workflow_depth=N", w->name,
                            w->where, w->depth, L.tool_workflow_depth);
    if (L.tool_workflow_depth <= 0)
        return sl_err_limit(err, SL_ELIMIT, "tool_workflow_depth", "the workflow tool '%s' (%s) "
                            "would nest workflow tools deeper than tool_workflow_depth allows; "
                            "raise it with --limit tool_workflow_depth=N", w->name, w->where);
    sl_value *empty = json_object();
    sl_value *in = NULL;
    sl_diag d;
    sl_diag_init(&d);
    if (sl_run_prepare_inputs(&w->g, args ? args : empty, &in, &d)) {
        sl_buf why;
        sl_buf_init(&why, 4096);
        for (size_t i = 0; i < d.n; i++)
            if (!d.v[i].warning)
                sl_buf_addf(&why, "%s%s", why.len ? "; " : "", d.v[i].msg);
        sl_err_set(err, SL_EINVAL, "the workflow tool '%s' (%s): its inputs: %s", w->name,
                   w->where, why.len ? why.data : "refused");
        sl_buf_release(&why);
        sl_diag_release(&d);
        json_decref(empty);
        return -1;
    }
    sl_diag_release(&d);
    json_decref(empty);

    sl_run_opts o;
    sl_run_opts_init(&o);
    o.limits = L;
    o.limits.tool_workflow_depth--;
    double to = sl_tool_timeout(ctx);
    if (o.limits.max_time_s <= 0 || to < o.limits.max_time_s)
        o.limits.max_time_s = to;
    o.config = x ? sl_exec_config(x) : w->cfg;
    o.inputs = in;
    o.llm_tape = x ? sl_exec_llm_tape(x) : NULL;
    /* the same user, as Dify runs a workflow tool for the caller's user */
    sl_value *usel = json_pack("[s, s]", "sys", "user_id");
    sl_value *user = x ? sl_exec_get(x, usel) : NULL;
    json_decref(usel);
    o.user_id = json_string_value(user);
    fwd f = {x, w};
    o.on_event = forward;
    o.event_ud = &f;
    sl_run *r = sl_run_new(&w->g, &o);

    watch wa = {.done = false, .r = r, .ctx = ctx};
    pthread_t th;
    bool watching = false;
    if (ctx->cancelled) {
        pthread_mutex_init(&wa.mu, NULL);
        pthread_cond_init(&wa.cv, NULL);
        watching = pthread_create(&th, NULL, watch_main, &wa) == 0;
        if (!watching) {
            pthread_cond_destroy(&wa.cv);
            pthread_mutex_destroy(&wa.mu);
        }
    }
    sl_err e = {0};
    int rc = sl_run_exec(r, &e);
    if (watching) {
        pthread_mutex_lock(&wa.mu);
        wa.done = true;
        pthread_cond_signal(&wa.cv);
        pthread_mutex_unlock(&wa.mu);
        pthread_join(th, NULL);
        pthread_cond_destroy(&wa.cv);
        pthread_mutex_destroy(&wa.mu);
    }
    if (rc) {
        if (e.code == SL_ETIMEOUT && !sl_tool_cancelled(ctx))
            sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s", "the workflow tool '%s' (%s) ran "
                         "past its %g s; raise tool_timeout_s (or the binding's timeout)",
                         w->name, w->where, to);
        else {
            sl_err_set(err, e.code == SL_OK ? SL_EIO : e.code, "the workflow tool '%s' (%s) "
                       "failed: %s", w->name, w->where, e.msg ? e.msg : "(no reason given)");
            if (err)
                err->setting = e.setting;
        }
    } else {
        rc = shape(r, ctx, res, err);
    }
    sl_err_clear(&e);
    sl_run_free(r);
    json_decref(user);
    json_decref(in);
    return rc;
}

static const char *wf_where(sl_toolset *t)
{
    return ((wftool *)t)->where;
}

static void wf_free(sl_toolset *t)
{
    wftool *w = (wftool *)t;
    if (!w)
        return;
    sl_graph_release(&w->g);
    json_decref(w->def);
    free(w->where);
    free(w->name);
    free(w);
}

static const sl_toolset_ops wftool_ops = {
    .kind = "workflow",
    .list = wf_list,
    .call = wf_call,
    .where = wf_where,
    .free = wf_free,
};
