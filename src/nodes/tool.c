/*
 * tool — Dify's Tool node (data.type "tool").
 *
 * Dify's fields as exports write them:
 *   provider_id, provider_type (builtin, plugin, api, workflow, mcp),
 *   provider_name, tool_name (tool_label is for people);
 *   tool_parameters: {name: {type: mixed | variable | constant, value}}:
 *     mixed is text with {{#node.var#}} references, variable a selector
 *     (the value keeps its type), constant the value itself; a null entry
 *     is dropped;
 *   tool_configurations: the tool's form settings, plain scalars in old
 *     exports and {type, value} in node version 2; merged into the
 *     arguments, overriding tool_parameters as in Dify.
 * The provider is bound to a real tool in sluice's settings (tools/
 * binding.h); an unbound one is refused at load with the lines to add.
 * Arguments are made to fit the tool's input schema (0/1 for a boolean,
 * "10" for a number), nulls and blanks dropped.
 *
 * Outputs, as Dify's: text (streamed to an answer that shows it), files
 * (stored as files of the run), json (the json messages; [{"data": []}]
 * when there are none), and every variable the tool emits.  A call that
 * fails, or that the tool itself marks as failed (MCP isError), fails the
 * node (ToolNodeError / ToolInvokeError), so error_strategy and
 * retry_config apply.
 */
#include "engine/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "engine/graph.h"
#include "nodes/toolcall.h"
#include "nodes/wftool.h"
#include "tools/binding.h"
#include "tools/builtin.h"

static const char *str(const sl_value *data, const char *key)
{
    return json_string_value(json_object_get(data, key));
}

static const char *const provider_types[] = {"builtin", "plugin", "api", "workflow", "mcp",
                                             "app", NULL};

/* A {type, value} input (tool_parameters, v2 tool_configurations). */
static bool is_input(const sl_value *v)
{
    return json_is_object(v) && json_is_string(json_object_get(v, "type")) &&
           json_object_get(v, "value") && json_object_size(v) <= 3;
}

static int check_input(sl_check *c, const sl_gnode *n, const sl_value *obj, const char *key,
                       const sl_value *in, const char *field)
{
    const char *type = str(in, "type");
    const sl_value *v = json_object_get(in, "value");
    if (!strcmp(type, "variable")) {
        if (json_is_null(v))
            return 0;
        return sl_check_selector_or_skip(c, n, in, "value", field);
    }
    if (!strcmp(type, "mixed")) {
        if (json_is_null(v))
            return 0;
        if (!json_is_string(v)) {
            sl_check_error(c, n, in, "value", field, "a mixed value is text (with "
                           "{{#node.var#}} references)");
            return -1;
        }
        return sl_check_text_refs(c, n, in, "value", field);
    }
    if (!strcmp(type, "constant"))
        return 0;
    sl_check_error(c, n, obj, key, field, "type '%s' is not one of mixed, variable and constant",
                   type);
    return -1;
}

static int tool_check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int rc = 0;
    const char *ptype = str(d, "provider_type"), *pid = str(d, "provider_id");
    const char *pname = str(d, "provider_name"), *tname = str(d, "tool_name");
    if (!tname || !*tname) {
        sl_check_error(c, n, d, "tool_name", "tool_name", "missing; the node must name its tool");
        rc = -1;
    }
    if ((!pid || !*pid) && (!pname || !*pname)) {
        sl_check_error(c, n, d, "provider_id", "provider_id",
                       "missing; the node must name its tool's provider");
        rc = -1;
    }
    bool known = false;
    for (const char *const *p = provider_types; ptype && *p && !known; p++)
        known = !strcmp(*p, ptype);
    if (ptype && !known) {
        sl_check_error(c, n, d, "provider_type", "provider_type",
                       "'%s' is not a tool provider type (builtin, plugin, api, workflow, mcp)",
                       ptype);
        rc = -1;
    } else if (ptype && !strcmp(ptype, "app")) {
        sl_check_error(c, n, d, "provider_type", "provider_type",
                       "app tools (a Dify app called as a tool) are not available in sluice; "
                       "bind the provider to an MCP server instead");
        rc = -1;
    }
    const sl_value *tp = json_object_get(d, "tool_parameters");
    if (tp && !json_is_null(tp) && !json_is_object(tp)) {
        sl_check_error(c, n, d, "tool_parameters", "tool_parameters",
                       "must be a mapping {name: {type, value}}");
        rc = -1;
    }
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)tp, k, v) {
        char field[160];
        snprintf(field, sizeof field, "tool_parameters.%s", k);
        if (json_is_null(v))
            continue;
        const sl_value *val = json_object_get(v, "value");
        if (!json_is_object(v) || !val || json_is_null(val)) {
            /* Dify's ToolNodeData drops an entry with no value before it
             * reads the rest (filter_none_tool_inputs): the tool gets no
             * such argument */
            sl_check_warn(c, n, tp, k, field, "has no {type, value} with a value, so it is left "
                          "out, as Dify leaves it out: the tool gets no '%s'; write it as "
                          "{type: mixed, value: TEXT} to pass it", k);
        } else if (!is_input(v)) {
            sl_check_error(c, n, tp, k, field, "must be {type: mixed | variable | constant, "
                           "value}");
            rc = -1;
        } else if (check_input(c, n, tp, k, v, field)) {
            rc = -1;
        }
    }
    const sl_value *tc = json_object_get(d, "tool_configurations");
    if (tc && !json_is_null(tc) && !json_is_object(tc)) {
        sl_check_error(c, n, d, "tool_configurations", "tool_configurations",
                       "must be a mapping {name: value}");
        rc = -1;
    }
    json_object_foreach((sl_value *)tc, k, v) {
        char field[160];
        snprintf(field, sizeof field, "tool_configurations.%s", k);
        if (is_input(v) && check_input(c, n, tc, k, v, field))
            rc = -1;
    }
    if (rc || !tname)
        return rc;
    const sl_binding *b =
        sl_toolcall_binding(sl_check_graph(c), sl_check_config_get(c), pid, pname);
    if (!b && !sl_toolcall_unbound_ok(sl_check_config_get(c))) {
        char *hint = sl_bindings_hint(pid && *pid ? pid : pname, str(d, "provider_type"));
        sl_check_config(c, n, d, "provider_id", "provider_id",
                        "the %s tool '%s' of provider '%s' is not bound to a real tool; %s",
                        ptype ? ptype : "", tname, pid && *pid ? pid : pname, hint);
        free(hint);
        return -1;
    }
    /* a built-in provider has the tools it has: another of the vendor's is
     * refused now, by name, with how to bind the provider elsewhere */
    char *has = NULL;
    if (!sl_builtin_provides(b, tname, &has)) {
        char *hint = sl_bindings_hint(pid && *pid ? pid : pname, str(d, "provider_type"));
        sl_check_config(c, n, d, "tool_name", "tool_name",
                        "the provider '%s' built into sluice has no tool '%s' (it has %s); "
                        "to use the vendor's other tools, bind the provider instead: %s",
                        pid && *pid ? pid : pname, tname, has, hint);
        free(hint);
        free(has);
        return -1;
    }
    /* a workflow tool's app is loaded now, once: what does not load, or
     * reaches back to an app being loaded, is this load's error */
    if (b && !strcmp(sl_binding_kind(b), "workflow"))
        return sl_wftool_check(c, n, d, "provider_id", "provider_id", b);
    return 0;
}

/* tool_parameters, then tool_configurations over them (Dify's order). */
static sl_value *arguments(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    sl_value *args = json_object();
    const char *k;
    const sl_value *v;
    json_object_foreach(json_object_get(d, "tool_parameters"), k, v) {
        sl_value *val = is_input(v) ? sl_toolcall_input(x, v) : NULL;
        if (val)
            json_object_set_new(args, k, val);
    }
    json_object_foreach(json_object_get(d, "tool_configurations"), k, v) {
        sl_value *val = sl_toolcall_input(x, v);
        if (val)
            json_object_set_new(args, k, val);
    }
    return args;
}

static int tool_run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const char *pid = str(d, "provider_id"), *pname = str(d, "provider_name");
    const char *tname = str(d, "tool_name");
    const sl_binding *b = sl_toolcall_binding(sl_exec_graph(x), sl_exec_config(x), pid, pname);
    if (!b && !sl_toolcall_replaying(x)) {
        char *hint = sl_bindings_hint(pid && *pid ? pid : pname, str(d, "provider_type"));
        sl_exec_fail(x, "ToolNodeError", "the tool '%s' of provider '%s' is not bound; %s",
                     tname ? tname : "", pid && *pid ? pid : pname ? pname : "", hint);
        free(hint);
        return -1;
    }
    sl_tool_src src = {.binding = b, .provider = pid && *pid ? pid : pname};
    const char *name = tname;
    const char *bid = b ? sl_binding_id(b) : src.provider;
    sl_value *args = arguments(x);
    sl_exec_input(x, "tool_parameters", json_deep_copy(args));
    sl_exec_process(x, "tool", json_pack("{s:s, s:s, s:s, s:s}", "binding", bid, "kind",
                                         b ? sl_binding_kind(b) : "tape", "where",
                                         b ? sl_binding_where(b) : "the replayed tape", "name",
                                         b ? sl_binding_tool_name(b, name) : name));
    sl_err err = {0};
    sl_value *def = sl_toolcall_def(x, &src, name, &err);
    if (!def) {
        json_decref(args);
        sl_exec_fail(x, sl_err_type(&err, "ToolNodeError"), "%s", err.msg);
        sl_err_clear(&err);
        return -1;
    }
    sl_toolcall_coerce(def, args);
    json_decref(def);
    sl_tool_result res;
    sl_tool_result_init(&res);
    double t0 = sl_clock_s();
    int rc = sl_toolcall(x, &src, name, args, &res, &err);
    sl_exec_process(x, "tool_time", json_real(sl_clock_s() - t0));
    json_decref(args);
    if (rc) {
        sl_exec_fail(x, sl_err_type(&err, err.code == SL_ETIMEOUT || err.code == SL_ELIMIT
                                              ? "ToolNodeError" : "ToolInvokeError"),
                     "tool '%s' (binding '%s'): %s", name, bid, err.msg);
        sl_err_clear(&err);
        sl_tool_result_release(&res);
        return -1;
    }
    if (res.is_error) {
        sl_exec_fail(x, "ToolInvokeError", "tool '%s' (binding '%s') reported a failure: %.*s",
                     name, bid, (int)(res.text.len > 2000 ? 2000 : res.text.len),
                     res.text.data ? res.text.data : "");
        sl_tool_result_release(&res);
        return -1;
    }
    sl_value *files = sl_toolcall_files(x, &res, &err);
    if (!files) {
        sl_exec_fail(x, "ToolNodeError", "tool '%s': keeping its files: %s", name, err.msg);
        sl_err_clear(&err);
        sl_tool_result_release(&res);
        return -1;
    }
    const char *text = res.text.data ? res.text.data : "";
    if (res.text.len && sl_exec_streams(x, "text"))
        sl_exec_stream_chunk(x, "text", text, res.text.len);
    const char *k;
    sl_value *v;
    json_object_foreach(res.variables, k, v) {
        if (strcmp(k, "text") && strcmp(k, "files") && strcmp(k, "json"))
            sl_exec_output(x, k, json_incref(v));
    }
    sl_exec_output(x, "text", json_stringn(text, res.text.len));
    sl_exec_output(x, "files", files);
    sl_exec_output(x, "json", json_array_size(res.json)
                                  ? json_incref(res.json)
                                  : json_pack("[{s:[]}]", "data"));
    sl_tool_result_release(&res);
    return 0;
}

const sl_node_kind sl_kind_tool = {
    .type = "tool",
    .check = tool_check,
    .run = tool_run,
};
