/*
 * loop — runs its child graph again and again, up to loop_count rounds,
 * until a break condition holds or a loop-end node runs.
 *
 * Loop variables live under the loop's own id ([loop_id, label]) in each
 * round's pool layer, where assigner nodes inside the loop may change them;
 * the values a round ends with seed the next round.  Break conditions are
 * checked before the first round (a loop whose condition already holds runs
 * zero rounds) and after every round, as Dify does.  The node's outputs are
 * the final loop variables.
 */
#include "nodes/cond.h"
#include "engine/node.h"
#include "engine/graph.h"
#include "engine/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const var_types[] = {"string", "number", "object", "boolean",
                                        "array[string]", "array[number]", "array[object]",
                                        "array[boolean]", NULL};

static int loop_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *lc = json_object_get(n->data, "loop_count");
    if (!json_is_integer(lc) || json_integer_value(lc) < 0)
        sl_check_error(c, n, n->data, "loop_count", "loop_count",
                       "must be a whole number of rounds (0 or more)");
    sl_cond_check_list(c, n, n->data, "break_conditions", "break_conditions", false);
    sl_cond_check_logical(c, n, n->data, "logical_operator", "logical_operator", false);
    const sl_value *vars = json_object_get(n->data, "loop_variables");
    if (vars && !json_is_null(vars) && !json_is_array(vars)) {
        sl_check_error(c, n, n->data, "loop_variables", "loop_variables",
                       "must be a list of {label, var_type, value_type, value}");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        char field[64];
        snprintf(field, sizeof field, "loop_variables[%zu]", i);
        const char *label = json_string_value(json_object_get(v, "label"));
        if (!label || !*label) {
            sl_check_error(c, n, vars, NULL, field, "each loop variable needs a label");
            continue;
        }
        if (!strcmp(label, "index"))
            sl_check_error(c, n, v, "label", field, "'index' is the loop's round counter; "
                           "pick another name");
        const char *vt = json_string_value(json_object_get(v, "var_type"));
        bool ok = false;
        for (const char *const *p = var_types; vt && *p; p++)
            ok |= !strcmp(*p, vt);
        if (!ok)
            sl_check_error(c, n, v, "var_type", field, "var_type must be one of string, number, "
                           "object, boolean, array[string], array[number], array[object], "
                           "array[boolean]");
        const char *how = json_string_value(json_object_get(v, "value_type"));
        if (how && !strcmp(how, "variable"))
            sl_check_selector(c, n, v, "value", field, true);
        else if (how && strcmp(how, "constant"))
            sl_check_error(c, n, v, "value_type", field, "value_type must be constant or "
                           "variable");
    }
    return 0;
}

/* A constant loop variable converted to its declared type, as the Dify
 * editor stores numbers and JSON as text at times. */
static sl_value *constant_value(const char *vt, const sl_value *v)
{
    if (!v || json_is_null(v))
        return json_null();
    if (json_is_string(v) && vt && !strcmp(vt, "number")) {
        sl_value *num = sl_value_number_from_text(json_string_value(v));
        if (num)
            return num;
    }
    if (json_is_string(v) && vt && (!strcmp(vt, "object") || !strncmp(vt, "array", 5))) {
        json_error_t je;
        sl_value *pv = json_loads(json_string_value(v), JSON_DECODE_ANY, &je);
        if (pv)
            return pv;
    }
    if (json_is_string(v) && vt && !strcmp(vt, "boolean")) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "true") || !strcmp(s, "True"))
            return json_true();
        if (!strcmp(s, "false") || !strcmp(s, "False"))
            return json_false();
    }
    return json_incref((sl_value *)v);
}

typedef struct {
    sl_node_exec *x;
    const char *id;
    sl_value *vars;
} loop_env;

static sl_value *env_get(void *ud, const sl_value *sel)
{
    loop_env *e = ud;
    const char *first = json_string_value(json_array_get(sel, 0));
    if (first && !strcmp(first, e->id)) {
        sl_value *v = json_object_get(e->vars, json_string_value(json_array_get(sel, 1)));
        for (size_t i = 2; v && i < json_array_size(sel); i++)
            v = json_object_get(v, json_string_value(json_array_get(sel, i)));
        return json_incref(v);
    }
    return sl_exec_get(e->x, sel);
}

static int env_render(void *ud, const char *text, sl_buf *out)
{
    loop_env *e = ud;
    return sl_exec_render(e->x, text, out);
}

static int should_break(sl_node_exec *x, loop_env *e, bool *stop)
{
    const sl_value *d = sl_exec_data(x);
    const sl_value *conds = json_object_get(d, "break_conditions");
    *stop = false;
    if (json_array_size(conds) == 0)
        return 0;
    sl_cond_env env = {env_get, env_render, e, sl_exec_limits(x)->max_string_bytes};
    sl_cond_outcome o;
    sl_err err = {0};
    if (sl_cond_eval_list_env(&env, conds, json_string_value(json_object_get(d, "logical_operator")),
                              &o, &err) < 0) {
        int rc = sl_exec_fail(x, sl_err_type(&err, "LoopNodeError"), "break conditions: %s",
                              err.msg ? err.msg : "cannot be evaluated");
        sl_err_clear(&err);
        return rc;
    }
    *stop = o.result;
    sl_cond_outcome_release(&o);
    return 0;
}

static int loop_run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const sl_limits *L = sl_exec_limits(x);
    const sl_gnode *n = sl_exec_node(x);
    json_int_t count = json_integer_value(json_object_get(d, "loop_count"));
    if (count > L->max_loop_count)
        return sl_exec_fail(x, "LoopNodeError",
                            "loop_count is %lld but max_loop_count is %d; lower loop_count or "
                            "raise the limit with --limit max_loop_count=N",
                            (long long)count, L->max_loop_count);
    loop_env e = {x, n->id, json_object()};
    const sl_value *lv = json_object_get(d, "loop_variables");
    for (size_t i = 0; i < json_array_size(lv); i++) {
        const sl_value *v = json_array_get(lv, i);
        const char *label = json_string_value(json_object_get(v, "label"));
        const char *how = json_string_value(json_object_get(v, "value_type"));
        const char *vt = json_string_value(json_object_get(v, "var_type"));
        if (!label)
            continue;
        sl_value *val;
        if (how && !strcmp(how, "variable")) {
            val = sl_exec_get(x, json_object_get(v, "value"));
            if (!val)
                val = json_null();
        } else {
            val = constant_value(vt, json_object_get(v, "value"));
        }
        json_object_set_new(e.vars, label, val);
    }
    sl_exec_input(x, "loop_count", json_integer(count));
    sl_value *ev = json_object();
    json_object_set_new(ev, "inputs", json_pack("{s:I}", "loop_count", count));
    json_object_set_new(ev, "metadata", json_pack("{s:I}", "loop_length", count));
    sl_exec_event(x, "loop_started", ev);

    int rc = 0;
    bool stop = false;
    json_int_t rounds = 0;
    if (should_break(x, &e, &stop) < 0)
        rc = -1;
    for (json_int_t i = 0; rc == 0 && !stop && i < count; i++) {
        if (sl_exec_cancelled(x)) {
            rc = sl_exec_time_left(x) <= 0
                     ? sl_exec_fail(x, "WorkflowTimeout", "the run took longer than max_time_s; "
                                    "raise it with --limit max_time_s=N")
                     : sl_exec_fail(x, "Stopped", "the run was stopped");
            break;
        }
        sl_value *ne = json_pack("{s:I}", "index", i);
        json_object_set_new(ne, "pre_loop_output", json_deep_copy(e.vars));
        sl_exec_event(x, "loop_next", ne);
        sl_value *scope = json_deep_copy(e.vars);
        json_object_set_new(scope, "index", json_integer(i));
        sl_round rd = {.scope_vars = scope, .index = i};
        int r = sl_exec_round(x, &rd);
        rounds++;
        if (rd.scope_after) {
            sl_value *nv = json_deep_copy(rd.scope_after);
            json_object_del(nv, "index");
            json_decref(e.vars);
            e.vars = nv;
            json_decref(rd.scope_after);
        }
        json_decref(rd.result);
        if (r < 0) {
            rc = sl_exec_fail(x, sl_err_type(&rd.err, "LoopNodeError"), "round %lld: %s",
                              (long long)i, rd.err.msg ? rd.err.msg : "a node inside failed");
        } else if (rd.broke) {
            stop = true;
        } else if (should_break(x, &e, &stop) < 0) {
            rc = -1;
        }
        sl_err_clear(&rd.err);
    }
    const char *k;
    sl_value *v;
    json_object_foreach(e.vars, k, v) sl_exec_output(x, k, json_incref(v));
    sl_exec_process(x, "loop_round", json_integer(rounds));
    sl_value *done = json_object();
    json_object_set_new(done, "outputs", json_incref(e.vars));
    json_object_set_new(done, "metadata", json_pack("{s:I}", "loop_round", rounds));
    json_object_set_new(done, "status", json_string(rc == 0 ? "succeeded" : "failed"));
    json_object_set_new(done, "steps", json_integer(rounds));
    json_object_set_new(done, "elapsed_time", json_real(sl_exec_elapsed(x)));
    sl_exec_event(x, "loop_completed", done);
    json_decref(e.vars);
    return rc;
}

const sl_node_kind sl_kind_loop = {
    .type = "loop",
    .flags = SL_KIND_CONTAINER,
    .check = loop_check,
    .run = loop_run,
};
