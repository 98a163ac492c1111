/*
 * start, end, answer — the nodes that open and close a workflow, plus the
 * trivial start/end markers inside iteration and loop containers.
 */
#include "engine/node.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "tmpl/ref.h"

#include <stdio.h>
#include <string.h>

static int start_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *vars = json_object_get(n->data, "variables");
    if (vars && !json_is_array(vars)) {
        sl_check_error(c, n, n->data, "variables", "variables",
                       "must be a list of input definitions");
        return -1;
    }
    static const char *const types[] = {"text-input", "paragraph", "select", "number",
                                        "checkbox", "file", "file-list", "json_object",
                                        "external_data_tool", NULL};
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        char field[64];
        snprintf(field, sizeof field, "variables[%zu]", i);
        if (!json_is_object(v) || !json_is_string(json_object_get(v, "variable"))) {
            sl_check_error(c, n, vars, NULL, field, "each input needs a 'variable' name");
            continue;
        }
        const char *t = json_string_value(json_object_get(v, "type"));
        bool ok = false;
        for (const char *const *p = types; t && *p; p++)
            ok |= strcmp(*p, t) == 0;
        if (t && !ok)
            sl_check_error(c, n, v, "type", field, "unknown input type '%s' (expected "
                           "text-input, paragraph, select, number, checkbox, file, file-list "
                           "or json_object)", t);
        if (t && strcmp(t, "external_data_tool") == 0)
            sl_check_error(c, n, v, "type", field, "input type 'external_data_tool' calls an "
                           "external API extension, which sluice does not support; use a plain "
                           "input instead");
    }
    return 0;
}

static int start_run(sl_node_exec *x)
{
    const sl_value *in = sl_exec_run_inputs(x);
    const char *k;
    sl_value *v;
    json_object_foreach((sl_value *)in, k, v) {
        sl_exec_input(x, k, json_incref(v));
        sl_exec_output(x, k, json_incref(v));
    }
    return 0;
}

const sl_node_kind sl_kind_start = {
    .type = "start",
    .flags = SL_KIND_ROOT_START,
    .check = start_check,
    .run = start_run,
};

static int end_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *outs = json_object_get(n->data, "outputs");
    if (outs && !json_is_array(outs)) {
        sl_check_error(c, n, n->data, "outputs", "outputs",
                       "must be a list of {variable, value_selector}");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(outs); i++) {
        const sl_value *o = json_array_get(outs, i);
        char field[64];
        snprintf(field, sizeof field, "outputs[%zu]", i);
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "variable"))) {
            sl_check_error(c, n, outs, NULL, field, "each output needs a 'variable' name");
            continue;
        }
        snprintf(field, sizeof field, "outputs[%zu].value_selector", i);
        sl_check_selector(c, n, o, "value_selector", field, false);
    }
    return 0;
}

static int end_run(sl_node_exec *x)
{
    const sl_value *outs = json_object_get(sl_exec_data(x), "outputs");
    for (size_t i = 0; i < json_array_size(outs); i++) {
        const sl_value *o = json_array_get(outs, i);
        const char *name = json_string_value(json_object_get(o, "variable"));
        if (!name)
            continue;
        sl_value *v = sl_exec_get(x, json_object_get(o, "value_selector"));
        sl_exec_input(x, name, v ? json_incref(v) : json_null());
        sl_exec_output(x, name, v ? v : json_null());
    }
    return 0;
}

const sl_node_kind sl_kind_end = {.type = "end", .check = end_check, .run = end_run};

static int answer_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *a = json_object_get(n->data, "answer");
    if (!a) {
        sl_check_error(c, n, n->data, NULL, "answer", "missing; an answer node needs the text "
                       "to reply with");
        return -1;
    }
    return sl_check_text_refs(c, n, n->data, "answer", "answer");
}

static sl_value *answer_ref(void *ud, const char *const *parts, int n)
{
    sl_value *sel = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(sel, json_string(parts[i]));
    sl_value *v = sl_exec_get(ud, sel);
    json_decref(sel);
    return v;
}

/* The answer's text is its output, each value as Dify's Segment.markdown
 * shows it (a list as "- item" lines, an object as indented JSON); what the
 * user sees streaming is sent by the engine's response coordinator
 * (engine/stream.h), from the same template, as its path is decided and
 * its variables come. */
static int answer_run(sl_node_exec *x)
{
    const char *text = json_string_value(json_object_get(sl_exec_data(x), "answer"));
    sl_buf b;
    sl_buf_init(&b, sl_exec_limits(x)->max_string_bytes * 4);
    if (sl_ref_render_markdown(text ? text : "", answer_ref, x, &b) < 0) {
        sl_buf_release(&b);
        return sl_exec_fail(x, "OutputTooLarge", "the answer text is longer than "
                            "max_string_bytes; shorten the variables it shows");
    }
    sl_exec_output(x, "answer", json_stringn(b.data ? b.data : "", b.len));
    sl_buf_release(&b);
    return 0;
}

const sl_node_kind sl_kind_answer = {.type = "answer", .check = answer_check, .run = answer_run};

/* Container markers: they only mark where a child graph starts or ends;
 * the engine treats a finished loop-end as "break". */
static int marker_run(sl_node_exec *x)
{
    (void)x;
    return 0;
}

const sl_node_kind sl_kind_iteration_start = {
    .type = "iteration-start",
    .flags = SL_KIND_INNER_START,
    .run = marker_run,
};
const sl_node_kind sl_kind_loop_start = {
    .type = "loop-start",
    .flags = SL_KIND_INNER_START,
    .run = marker_run,
};
const sl_node_kind sl_kind_loop_end = {.type = "loop-end", .run = marker_run};
