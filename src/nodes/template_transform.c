/*
 * template_transform — Dify's template-transform node.
 *
 * Fields: template (Jinja2 text), variables [{variable, value_selector}].
 * The variables' values are the template's context; the rendering is the
 * output `output` (a string, capped at max_string_bytes characters, Dify's
 * 400,000).  A render obeys the run's deadline and stop (it polls them)
 * and template_max_bytes.  The template is compiled at load (syntax errors are load
 * errors with the template's line:col) and kept in a cache keyed by the
 * node's data, so runs only render.  Cache entries are reference counted:
 * a run holds its entry while it renders.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "tmpl/jinja.h"
#include "engine/node.h"

typedef struct entry {
    struct entry *next;
    const void *key;
    char *text;
    sl_jinja *t;
    int refs;
} entry;

#define CACHE_MAX 256
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static entry *cache;
static int cache_n;

static void entry_unref(entry *e)
{
    if (--e->refs == 0) {
        sl_jinja_free(e->t);
        free(e->text);
        free(e);
    }
}

/* The compiled template of this node's data (held: release with
 * entry_release), compiling on first use.  NULL with err on a syntax error. */
static entry *cache_get(const void *key, const char *text, sl_err *err)
{
    pthread_mutex_lock(&cache_mu);
    for (entry *e = cache; e; e = e->next)
        if (e->key == key && !strcmp(e->text, text)) {
            e->refs++;
            pthread_mutex_unlock(&cache_mu);
            return e;
        }
    pthread_mutex_unlock(&cache_mu);
    sl_jinja *t;
    if (sl_jinja_compile(text, strlen(text), "template", &t, err) < 0)
        return NULL;
    entry *ne = sl_xcalloc(1, sizeof *ne);
    ne->key = key;
    ne->text = sl_xstrdup(text);
    ne->t = t;
    ne->refs = 2; /* the cache's and the caller's */
    pthread_mutex_lock(&cache_mu);
    ne->next = cache;
    cache = ne;
    if (++cache_n > CACHE_MAX) {
        /* drop the oldest; a render holding it keeps it alive */
        entry **pp = &cache;
        while ((*pp)->next)
            pp = &(*pp)->next;
        entry *old = *pp;
        *pp = NULL;
        cache_n--;
        entry_unref(old);
    }
    pthread_mutex_unlock(&cache_mu);
    return ne;
}

static void entry_release(entry *e)
{
    pthread_mutex_lock(&cache_mu);
    entry_unref(e);
    pthread_mutex_unlock(&cache_mu);
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const sl_value *tv = json_object_get(d, "template");
    if (!json_is_string(tv)) {
        sl_check_error(c, n, d, "template", "template", "missing: the Jinja2 template to render");
        bad = 1;
    } else {
        sl_err err = {0};
        entry *e = cache_get(d, json_string_value(tv), &err);
        if (!e) {
            sl_check_error(c, n, d, "template", "template", "%s; fix the template's syntax",
                           err.msg ? err.msg : "the template does not compile");
            bad = 1;
        } else {
            entry_release(e);
        }
        sl_err_clear(&err);
    }
    const sl_value *vars = json_object_get(d, "variables");
    if (vars && !json_is_array(vars)) {
        sl_check_error(c, n, d, "variables", "variables",
                       "must be a list of {variable, value_selector}");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        char f[64];
        snprintf(f, sizeof f, "variables[%zu]", i);
        if (!json_is_string(json_object_get(v, "variable"))) {
            sl_check_error(c, n, v, NULL, f, "each variable needs a name (variable)");
            bad = 1;
            continue;
        }
        snprintf(f, sizeof f, "variables[%zu].value_selector", i);
        bad |= sl_check_selector(c, n, v, "value_selector", f, false) < 0;
    }
    return bad ? -1 : 0;
}

static int interrupted(void *ud, sl_err *err)
{
    return sl_exec_interrupted(ud, err);
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const char *text = json_string_value(json_object_get(d, "template"));
    sl_err err = {0};
    entry *e = cache_get(d, text ? text : "", &err);
    if (!e) {
        int rc = sl_exec_fail(x, "TemplateTransformError", "%s", err.msg);
        sl_err_clear(&err);
        return rc;
    }
    sl_value *ctx = json_object();
    const sl_value *vars = json_object_get(d, "variables");
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        const char *name = json_string_value(json_object_get(v, "variable"));
        const sl_value *sel = json_object_get(v, "value_selector");
        if (!name)
            continue;
        sl_value *val = json_array_size(sel) ? sl_exec_get(x, sel) : NULL;
        if (!val)
            val = json_null();
        sl_exec_input(x, name, json_incref(val));
        json_object_set_new(ctx, name, val);
    }
    const sl_limits *l = sl_exec_limits(x);
    sl_jinja_limits lim;
    sl_jinja_limits_default(&lim);
    lim.max_output_chars = l->max_string_bytes;
    lim.limit_name = "max_string_bytes";
    lim.max_bytes = l->template_max_bytes ? l->template_max_bytes : SIZE_MAX;
    lim.bytes_limit_name = "template_max_bytes (--limit template_max_bytes=N)";
    lim.interrupt = interrupted;
    lim.interrupt_ud = x;
    sl_buf out;
    sl_buf_init(&out, l->max_string_bytes * 4 + 16);
    int rc = sl_jinja_render(e->t, ctx, &lim, &out, &err);
    entry_release(e);
    json_decref(ctx);
    if (rc < 0) {
        rc = sl_exec_fail(x, err.code == SL_ETIMEOUT ? "WorkflowTimeout"
                             : err.code == SL_ECANCELED ? "Stopped" : "TemplateTransformError",
                          "%s", err.msg);
    } else {
        sl_exec_output(x, "output", json_stringn_nocheck(out.data ? out.data : "", out.len));
    }
    sl_err_clear(&err);
    sl_buf_release(&out);
    return rc;
}

const sl_node_kind sl_kind_template_transform = {"template-transform", 0, check, run};
