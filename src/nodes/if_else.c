/*
 * if-else — picks a branch by conditions.
 *
 * Two shapes exist in Dify DSL files.  The current one is
 *     cases: [{case_id, logical_operator, conditions: [...]}, ...]
 * evaluated in order; the first case whose conditions hold gives the
 * source handle (its case_id).  The legacy one (files from before cases
 * existed) is top-level `conditions` + `logical_operator`, a single case
 * whose handle is "true".  When no case holds, the handle is "false".
 * A `cases` list, even an empty one, wins over the legacy fields, as in
 * graphon.
 *
 * Outputs `result` (whether a case held) and `selected_case_id`.  As in
 * Dify, inputs.conditions records the compared values of the last case
 * evaluated and process_data.condition_results one entry per evaluated
 * case.  A condition that cannot be evaluated (missing variable, value of
 * the wrong type) fails the node; see cond.h for each operator's rules.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "nodes/cond.h"
#include "engine/node.h"

static bool is_none(const sl_value *v)
{
    return !v || json_is_null(v);
}

static sl_value *copy_or_null(const sl_value *v)
{
    return v ? json_deep_copy(v) : json_null();
}

/* The case as Dify's model_dump() shows it in process_data: every field,
 * defaults filled in. */
static sl_value *dump_case(const sl_value *cs)
{
    sl_value *d = json_object();
    json_object_set_new(d, "case_id", copy_or_null(json_object_get(cs, "case_id")));
    json_object_set_new(d, "logical_operator",
                        copy_or_null(json_object_get(cs, "logical_operator")));
    sl_value *conds = json_array();
    const sl_value *src = json_object_get(cs, "conditions");
    for (size_t i = 0; i < json_array_size(src); i++) {
        const sl_value *c = json_array_get(src, i);
        sl_value *dc = json_object();
        json_object_set_new(dc, "variable_selector",
                            copy_or_null(json_object_get(c, "variable_selector")));
        json_object_set_new(dc, "comparison_operator",
                            copy_or_null(json_object_get(c, "comparison_operator")));
        json_object_set_new(dc, "value", copy_or_null(json_object_get(c, "value")));
        const sl_value *sub = json_object_get(c, "sub_variable_condition");
        if (json_is_object(sub)) {
            sl_value *ds = json_object();
            json_object_set_new(ds, "logical_operator",
                                copy_or_null(json_object_get(sub, "logical_operator")));
            sl_value *sl = json_array();
            const sl_value *ss = json_object_get(sub, "conditions");
            for (size_t k = 0; k < json_array_size(ss); k++) {
                const sl_value *s = json_array_get(ss, k);
                sl_value *o = json_object();
                json_object_set_new(o, "key", copy_or_null(json_object_get(s, "key")));
                json_object_set_new(o, "comparison_operator",
                                    copy_or_null(json_object_get(s, "comparison_operator")));
                json_object_set_new(o, "value", copy_or_null(json_object_get(s, "value")));
                json_array_append_new(sl, o);
            }
            json_object_set_new(ds, "conditions", sl);
            json_object_set_new(dc, "sub_variable_condition", ds);
        } else {
            json_object_set_new(dc, "sub_variable_condition", json_null());
        }
        json_array_append_new(conds, dc);
    }
    json_object_set_new(d, "conditions", conds);
    return d;
}

static int run(sl_node_exec *x)
{
    const sl_value *data = sl_exec_data(x);
    const sl_value *cases = json_object_get(data, "cases");
    bool legacy = is_none(cases);
    size_t ncases = legacy ? 1 : json_array_size(cases);
    sl_value *results = json_array();
    sl_value *last_inputs = NULL;
    const char *selected = "false";
    bool final = false;

    for (size_t i = 0; i < ncases; i++) {
        const sl_value *cs = legacy ? data : json_array_get(cases, i);
        const char *case_id = legacy ? "true" : json_string_value(json_object_get(cs, "case_id"));
        const char *lop = json_string_value(json_object_get(cs, "logical_operator"));
        sl_cond_outcome o;
        sl_err e = {0};
        if (sl_cond_eval_list(x, json_object_get(cs, "conditions"), lop ? lop : "and", &o,
                              &e) < 0) {
            json_decref(last_inputs);
            sl_exec_input(x, "conditions", json_array());
            sl_exec_process(x, "condition_results", results);
            int rc;
            if (legacy)
                rc = sl_exec_fail(x, sl_err_type(&e, NULL), "%s", e.msg);
            else
                rc = sl_exec_fail(x, sl_err_type(&e, NULL), "case '%s': %s", case_id ? case_id : "?", e.msg);
            sl_err_clear(&e);
            return rc;
        }
        sl_value *entry = json_object();
        json_object_set_new(entry, "group", legacy ? json_string("default") : dump_case(cs));
        json_object_set(entry, "results", o.results);
        json_object_set_new(entry, "final_result", json_boolean(o.result));
        json_array_append_new(results, entry);
        json_decref(last_inputs);
        last_inputs = json_incref(o.inputs);
        sl_cond_outcome_release(&o);
        if (o.result) {
            final = true;
            selected = case_id ? case_id : "false";
            break;
        }
    }
    sl_exec_input(x, "conditions", last_inputs ? last_inputs : json_array());
    sl_exec_process(x, "condition_results", results);
    sl_exec_output(x, "result", json_boolean(final));
    sl_exec_output(x, "selected_case_id", json_string(selected));
    sl_exec_handle(x, selected);
    return 0;
}

/* Warns about outgoing edges whose handle no case can choose: they would
 * silently never be taken. */
static void check_handles(sl_check *c, const sl_gnode *n, const sl_value *cases, bool legacy)
{
    const sl_graph *g = sl_check_graph(c);
    const char *es = json_string_value(json_object_get(n->data, "error_strategy"));
    bool fail_branch = es && strcmp(es, "fail-branch") == 0;
    for (int k = 0; k < n->nout; k++) {
        const sl_gedge *e = &g->edges[n->out[k]];
        const char *h = e->handle;
        bool ok = strcmp(h, "false") == 0 || (legacy && strcmp(h, "true") == 0) ||
                  (fail_branch && strcmp(h, "fail-branch") == 0);
        for (size_t i = 0; !ok && !legacy && i < json_array_size(cases); i++) {
            const char *id = json_string_value(json_object_get(json_array_get(cases, i),
                                                               "case_id"));
            ok = id && strcmp(id, h) == 0;
        }
        if (!ok)
            sl_check_warn(c, n, NULL, NULL, NULL,
                          "edge '%s' to '%s' leaves through handle '%s', which no case can "
                          "choose (handles are the case ids, '%s' and 'false'); it will never "
                          "be taken: set its sourceHandle to a case id",
                          e->id, g->nodes[e->dst].id, h, legacy ? "true" : "...");
    }
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *data = n->data;
    const sl_value *cases = json_object_get(data, "cases");
    int bad = 0;
    if (is_none(cases)) {
        bad |= sl_cond_check_logical(c, n, data, "logical_operator", "logical_operator",
                                     false) < 0;
        bad |= sl_cond_check_list(c, n, data, "conditions", "conditions", false) < 0;
        check_handles(c, n, NULL, true);
        return bad ? -1 : 0;
    }
    if (!json_is_array(cases)) {
        sl_check_error(c, n, data, "cases", "cases", "must be a list of {case_id, "
                       "logical_operator, conditions}");
        return -1;
    }
    char f[96];
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const sl_value *cs = json_array_get(cases, i);
        snprintf(f, sizeof f, "cases[%zu]", i);
        if (!json_is_object(cs)) {
            sl_check_error(c, n, cs, NULL, f, "must be a mapping {case_id, logical_operator, "
                           "conditions}");
            bad = 1;
            continue;
        }
        const sl_value *idv = json_object_get(cs, "case_id");
        const char *id = json_string_value(idv);
        snprintf(f, sizeof f, "cases[%zu].case_id", i);
        if (!id || !*id) {
            sl_check_error(c, n, cs, idv ? "case_id" : NULL, f, "missing or not text; each case "
                           "needs an id, which is the handle of its outgoing edge (quote "
                           "numeric ids)");
            bad = 1;
        } else {
            if (strcmp(id, "false") == 0)
                sl_check_warn(c, n, cs, "case_id", f, "'false' is also the else handle; the "
                              "edge of this case and the else edge cannot be told apart: "
                              "rename the case");
            for (size_t k = 0; k < i; k++) {
                const char *other = json_string_value(json_object_get(json_array_get(cases, k),
                                                                      "case_id"));
                if (other && strcmp(other, id) == 0) {
                    sl_check_warn(c, n, cs, "case_id", f, "case id '%s' is used by cases[%zu] "
                                  "too; only the first can ever be chosen: rename one", id, k);
                    break;
                }
            }
        }
        snprintf(f, sizeof f, "cases[%zu].logical_operator", i);
        bad |= sl_cond_check_logical(c, n, cs, "logical_operator", f, true) < 0;
        snprintf(f, sizeof f, "cases[%zu].conditions", i);
        bad |= sl_cond_check_list(c, n, cs, "conditions", f, true) < 0;
    }
    check_handles(c, n, cases, false);
    return bad ? -1 : 0;
}

const sl_node_kind sl_kind_if_else = {
    .type = "if-else",
    .flags = SL_KIND_BRANCH,
    .check = check,
    .run = run,
};
