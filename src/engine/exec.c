/* The node-facing execution API (engine/node.h): what a node's run() reads,
 * produces and asks of the run. */
#include "engine/run_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/secret.h"
#include "tmpl/ref.h"

/* ---- the node execution API ---- */

const sl_value *sl_exec_data(sl_node_exec *x) { return x->n->data; }
const void *sl_exec_state(sl_node_exec *x) { return x->n->state; }
const sl_gnode *sl_exec_node(sl_node_exec *x) { return x->n; }
const sl_graph *sl_exec_graph(sl_node_exec *x) { return x->s->run->g; }
const sl_limits *sl_exec_limits(sl_node_exec *x) { return &x->s->run->L; }
const sl_value *sl_exec_run_inputs(sl_node_exec *x) { return x->s->run->opts.inputs; }
const char *sl_exec_mode(sl_node_exec *x) { return x->s->run->g->mode; }

sl_value *sl_exec_get(sl_node_exec *x, const sl_value *selector)
{
    return sl_pool_get_sel(x->s->pool, selector);
}

static sl_value *resolve_ref(void *ud, const char *const *parts, int n)
{
    sl_node_exec *x = ud;
    return sl_pool_get(x->s->pool, parts, n);
}

int sl_exec_render(sl_node_exec *x, const char *text, sl_buf *out)
{
    return sl_ref_render(text, resolve_ref, x, out);
}

static void obj_set(sl_value **obj, const char *name, sl_value *v)
{
    if (!*obj)
        *obj = json_object();
    json_object_set_new(*obj, name, v ? v : json_null());
}

void sl_exec_input(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->inputs, name, v); }
void sl_exec_output(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->outputs, name, v); }
void sl_exec_process(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->process, name, v); }

void sl_exec_handle(sl_node_exec *x, const char *handle)
{
    free(x->handle);
    x->handle = sl_xstrdup(handle);
}

int sl_exec_fail(sl_node_exec *x, const char *error_type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    free(x->err_msg);
    x->err_msg = sl_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(x->err_msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    /* Messages quote program output, which need not be UTF-8; events and
     * JSON need it to be, so bad bytes become U+FFFD. */
    size_t len = strlen(x->err_msg);
    if (!sl_utf8_valid(x->err_msg, len)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_utf8_clean(x->err_msg, len, &b);
        free(x->err_msg);
        x->err_msg = sl_buf_detach(&b);
    }
    sl_secret_mask_inplace(&x->err_msg);
    free(x->err_type);
    x->err_type = sl_xstrdup(error_type ? error_type : "NodeError");
    return -1;
}

int sl_exec_assign(sl_node_exec *x, const sl_value *selector, sl_value *v)
{
    const char *node = json_string_value(json_array_get(selector, 0));
    const char *name = json_string_value(json_array_get(selector, 1));
    if (!node || !name || json_array_size(selector) != 2) {
        json_decref(v);
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "can only assign a whole variable [scope, name]");
    }
    const sl_graph *g = x->s->run->g;
    bool ok = strcmp(node, "conversation") == 0;
    if (!ok) {
        int t = sl_graph_find(g, node);
        ok = t >= 0 && strcmp(g->nodes[t].type, "loop") == 0;
    }
    if (!ok) {
        json_decref(v);
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "cannot assign '%s.%s': only conversation variables and the "
                            "variables of an enclosing loop can be assigned", node, name);
    }
    size_t cap = x->s->run->L.max_variable_bytes;
    if (cap && sl_value_size(v, cap) > cap) {
        json_decref(v);
        return sl_exec_fail(x, "VariableSizeExceeded",
                            "the new value of '%s.%s' is larger than max_variable_bytes (%zu "
                            "bytes, Dify's MAX_VARIABLE_SIZE); raise it with --limit "
                            "max_variable_bytes=N", node, name, cap);
    }
    if (sl_pool_assign(x->s->pool, node, name, v) < 0)
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "variable '%s.%s' is not available here", node, name);
    return 0;
}

bool sl_exec_streams(sl_node_exec *x, const char *var)
{
    return sl_stream_wants(x->s->stream, x->n->idx, var);
}

void sl_exec_stream_chunk(sl_node_exec *x, const char *var, const char *text, size_t len)
{
    sched *s = x->s;
    if (!sl_stream_wants(s->stream, x->n->idx, var)) /* the plan is read-only: no lock */
        return;
    pthread_mutex_lock(&s->mu);
    sl_stream_chunk(s->stream, x->n->idx, var, text, len);
    pthread_mutex_unlock(&s->mu);
}

void sl_exec_usage(sl_node_exec *x, long long tokens, double price, const char *currency)
{
    x->tokens += tokens;
    x->price += price;
    if (currency)
        snprintf(x->currency, sizeof x->currency, "%s", currency);
    atomic_fetch_add(&x->s->run->tokens, tokens);
}

const sl_value *sl_exec_history(sl_node_exec *x)
{
    return x->s->run->opts.history;
}

struct sl_llm_tape *sl_exec_llm_tape(sl_node_exec *x)
{
    return x->s->run->opts.llm_tape;
}

void sl_exec_retriever_resources(sl_node_exec *x, sl_value *resources)
{
    sl_run *r = x->s->run;
    pthread_mutex_lock(&r->ev_lock);
    json_array_extend(r->resources, resources);
    pthread_mutex_unlock(&r->ev_lock);
    json_decref(resources);
}

struct sl_kb *sl_exec_kb(sl_node_exec *x)
{
    return x->s->run->opts.kb;
}

const struct sl_config *sl_exec_config(sl_node_exec *x)
{
    return x->s->run->opts.config;
}

/* Why the app's package install should end early. */
static sl_errcode install_over(void *ud)
{
    sl_run *r = ud;
    if (atomic_load(&r->cancel))
        return SL_ECANCELED;
    return sl_clock_s() - r->t0 >= r->L.max_time_s ? SL_ETIMEOUT : SL_OK;
}

sl_sandbox *sl_exec_sandbox(sl_node_exec *x, sl_err *err)
{
    sl_run *r = x->s->run;
    pthread_mutex_lock(&r->sb_lock);
    if (!r->sandbox && !r->sandbox_error) {
        const struct sl_limits *L = &r->L;
        sl_sandbox_opts o;
        sl_sandbox_opts_init(&o);
        o.provider = r->policy.provider;
        o.net = r->policy.net;
        o.net_allow = r->policy.net_allow;
        o.memory_bytes = L->sandbox_memory_bytes;
        o.max_procs = L->sandbox_max_procs;
        o.cpu_cores = L->sandbox_cpu_cores;
        o.disk_bytes = L->sandbox_disk_bytes;
        o.cpu_seconds = L->sandbox_cpu_seconds;
        o.max_open_files = L->sandbox_open_files;
        o.max_file_bytes = L->sandbox_file_bytes;
        o.settings = r->policy.settings;
        /* The app's skills and tools (its stdio MCP servers' programs),
         * read-only, at skills/ and tools/ in the workspace. */
        sl_sandbox_bind binds[2];
        char *dirs[2] = {NULL, NULL};
        static const char *const leaf[2] = {"skills", "tools"};
        o.binds = binds;
        for (int i = 0; i < 2 && r->g->app_dir; i++) {
            dirs[i] = sl_xasprintf("%s/%s", r->g->app_dir, leaf[i]);
            struct stat st;
            if (!stat(dirs[i], &st) && S_ISDIR(st.st_mode))
                binds[o.n_binds++] = (sl_sandbox_bind){.host = dirs[i], .target = leaf[i]};
        }
        sl_err e = {0};
        if (sl_sandbox_create(&o, &r->sandbox, &e)) {
            /* remembered, so parallel nodes do not each retry a broken set-up */
            r->sandbox_error = sl_xstrdup(e.msg ? e.msg : "the sandbox could not be made");
            sl_err_clear(&e);
        } else if (sl_sandbox_policy_install(
                       &r->policy, r->sandbox, install_over, r,
                       &(sl_sandbox_install_limits){r->L.install_timeout_s, r->L.sandbox_output_bytes,
                                                    r->L.command_error_bytes, r->L.max_time_s},
                       &e)) {
            r->sandbox_error = sl_xstrdup(e.msg);
            sl_err_clear(&e);
            sl_sandbox_destroy(r->sandbox);
            r->sandbox = NULL;
        }
        free(dirs[0]);
        free(dirs[1]);
    }
    sl_sandbox *sb = r->sandbox;
    if (!sb)
        sl_err_set(err, SL_EUNSUPPORTED, "%s", r->sandbox_error);
    pthread_mutex_unlock(&r->sb_lock);
    return sb;
}

bool sl_exec_cancelled(sl_node_exec *x)
{
    return atomic_load(&x->s->run->cancel) != 0 || sl_exec_time_left(x) <= 0;
}

double sl_exec_elapsed(sl_node_exec *x)
{
    return sl_clock_s() - x->t_start;
}

double sl_exec_time_left(sl_node_exec *x)
{
    sl_run *r = x->s->run;
    double left = r->L.max_time_s - (sl_clock_s() - r->t0);
    return left > 0 ? left : 0;
}

int sl_exec_interrupted(sl_node_exec *x, sl_err *err)
{
    if (atomic_load(&x->s->run->cancel))
        return sl_err_set(err, SL_ECANCELED, "the run was stopped");
    if (sl_exec_time_left(x) <= 0)
        return sl_err_set(err, SL_ETIMEOUT, "the run took longer than max_time_s (%g s); raise "
                          "it with --limit max_time_s=N", x->s->run->L.max_time_s);
    return 0;
}

static int jinja_interrupted(void *x, sl_err *err)
{
    return sl_exec_interrupted(x, err);
}

void sl_exec_jinja_limits(sl_node_exec *x, sl_jinja_limits *lim)
{
    const sl_limits *l = sl_exec_limits(x);
    sl_jinja_limits_default(lim);
    lim->max_output_chars = l->max_string_bytes;
    lim->limit_name = "max_string_bytes";
    lim->max_bytes = l->template_max_bytes ? l->template_max_bytes : SIZE_MAX;
    lim->bytes_limit_name = "template_max_bytes (--limit template_max_bytes=N)";
    lim->interrupt = jinja_interrupted;
    lim->interrupt_ud = x;
}

void sl_exec_event(sl_node_exec *x, const char *event, sl_value *data)
{
    sl_run *r = x->s->run;
    if (!r->opts.on_event) {
        json_decref(data);
        return;
    }
    if (!json_is_object(data)) {
        json_decref(data);
        data = json_object();
    }
    json_object_set_new(data, "node_id", json_string(x->n->id));
    json_object_set_new(data, "node_type", json_string(x->n->type));
    json_object_set_new(data, "title", json_string(x->n->title));
    if (json_object_get(data, "id"))  /* its own id (agent_log): say whose it is */
        json_object_set_new(data, "node_execution_id", json_string(x->exec_id));
    else
        json_object_set_new(data, "id", json_string(x->exec_id));
    if (!json_object_get(data, "created_at"))
        json_object_set_new(data, "created_at", json_integer(sl_rx_wall()));
    sl_rx_emit(r, event, data);
}

void sl_exec_secret(sl_node_exec *x, const char *s)
{
    sl_run_secret(x->s->run, s);
}
