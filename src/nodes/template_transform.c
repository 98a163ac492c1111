/*
 * template_transform — Dify's template-transform node.
 *
 * Fields: template (Jinja2 text), variables [{variable, value_selector}].
 * The variables' values are the template's context; the rendering is the
 * output `output` (a string, capped at max_string_bytes characters, Dify's
 * 400,000).  A render obeys the run's deadline and stop (it polls them)
 * and template_max_bytes.  The template is compiled once, at load
 * (prepare; syntax errors are load errors with the template's line:col):
 * the graph keeps it and every run only renders it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/node.h"
#include "tmpl/jinja.h"

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const sl_value *tv = json_object_get(d, "template");
    if (!json_is_string(tv)) {
        sl_check_error(c, n, d, "template", "template", "missing: the Jinja2 template to render");
        bad = 1;
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

/* Compiles the template; check has said what is wrong when it is missing. */
static int prepare(sl_check *c, const sl_gnode *n, void **state)
{
    const sl_value *tv = json_object_get(n->data, "template");
    if (!json_is_string(tv))
        return -1;
    sl_err err = {0};
    sl_jinja *t;
    const char *text = json_string_value(tv);
    if (sl_jinja_compile(text, strlen(text), "template", &t, &err) < 0) {
        sl_check_error(c, n, n->data, "template", "template", "%s; fix the template's syntax",
                       err.msg ? err.msg : "the template does not compile");
        sl_err_clear(&err);
        return -1;
    }
    *state = t;
    return 0;
}

static void release(void *state)
{
    sl_jinja_free(state);
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const sl_jinja *t = sl_exec_state(x); /* a graph that loaded has it */
    sl_err err = {0};
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
    sl_exec_jinja_limits(x, &lim);
    sl_buf out;
    sl_buf_init(&out, l->max_string_bytes * 4 + 16);
    int rc = sl_jinja_render(t, ctx, &lim, &out, &err);
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

const sl_node_kind sl_kind_template_transform = {
    .type = "template-transform",
    .check = check,
    .run = run,
    .prepare = prepare,
    .release = release,
};
