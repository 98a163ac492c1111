/*
 * parameter-extractor — Dify's Parameter Extractor: a model reads a text
 * and returns typed values.
 *
 * Fields: model, query (selector of the text), parameters [{name, type,
 * description, required, options}], reasoning_mode function_call | prompt
 * (empty: function_call), instruction (text with {{#node.var#}}), memory,
 * vision.  Types: string, number, boolean (legacy "bool"), select (a
 * string, usually with options), array[string|number|object|boolean].
 *
 * - function_call: the model gets one tool, extract_parameters, whose JSON
 *   schema comes from the parameters, two worked example calls and the
 *   text; the first tool call's arguments are the result (its text when it
 *   makes none).  Completion models use the prompt mode: in Dify they
 *   offer no tool calling.
 * - prompt: schema and text go into the prompt; the first JSON object in
 *   the answer is the result.
 * - The result is checked in Dify's order (number of keys, required names,
 *   each value's type, select options); the first problem becomes __reason
 *   with __is_success 0, and the node still succeeds.  Each value is then
 *   converted to its type (numbers from text, ...); a missing or unusable
 *   one becomes the type's zero (0, false, "", []).
 * - memory's histories are the run's earlier turns (sl_model_history_text).
 * Outputs: each parameter, __is_success, __reason, __usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "nodes/model.h"
#include "engine/node.h"

#define TOOL "extract_parameters"
#define HISTORY                                                                            \
    "### Memory\nThe conversation so far between the human and the assistant, inside "     \
    "<histories></histories> tags:\n<histories>\n%s\n</histories>\n"

/* The parameter's type in Dify's names, legacy ones mapped; NULL when not allowed. */
static const char *param_type(const sl_value *p)
{
    static const char *const ok[] = {"string", "number", "boolean", "array[string]",
                                     "array[number]", "array[object]", "array[boolean]", NULL};
    const char *t = json_string_value(json_object_get(p, "type"));
    if (t && !strcmp(t, "select"))
        return "string";
    if (t && !strcmp(t, "bool"))
        return "boolean";
    for (const char *const *k = ok; t && *k; k++)
        if (!strcmp(*k, t))
            return *k;
    return NULL;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data, *ps = json_object_get(d, "parameters");
    int bad = sl_model_check(c, n) < 0;
    bad |= sl_check_selector(c, n, d, "query", "query", true) < 0;
    bad |= sl_check_text_refs(c, n, d, "instruction", "instruction") < 0;
    const char *rm = json_string_value(json_object_get(d, "reasoning_mode"));
    if (rm && *rm && strcmp(rm, "function_call") && strcmp(rm, "prompt")) {
        sl_check_error(c, n, d, "reasoning_mode", "reasoning_mode",
                       "'%s' is not a reasoning mode; use function_call or prompt", rm);
        bad = 1;
    }
    const sl_value *vis = json_object_get(d, "vision");
    if (json_is_true(json_object_get(vis, "enabled")))
        bad |= sl_check_selector(c, n, json_object_get(vis, "configs"), "variable_selector",
                                 "vision.configs.variable_selector", false) < 0;
    if (!json_is_array(ps)) {
        sl_check_error(c, n, d, "parameters", "parameters",
                       "missing: a list of {name, type, description, required, options}");
        return -1;
    }
    char f[64];
    for (size_t i = 0; i < json_array_size(ps); i++) {
        const sl_value *p = json_array_get(ps, i), *opts = json_object_get(p, "options");
        const char *name = json_string_value(json_object_get(p, "name"));
        const char *t = json_string_value(json_object_get(p, "type"));
        snprintf(f, sizeof f, "parameters[%zu]", i);
        if (!name || !*name || !strcmp(name, "__reason") || !strcmp(name, "__is_success")) {
            sl_check_error(c, n, p, json_is_object(p) ? "name" : NULL, f, "each parameter needs "
                           "a name other than __reason and __is_success (which the node "
                           "outputs itself)");
            bad = 1;
            continue;
        }
        for (size_t k = 0; k < i; k++) {
            const char *other = json_string_value(json_object_get(json_array_get(ps, k), "name"));
            if (other && !strcmp(name, other))
                sl_check_warn(c, n, p, "name", f, "'%s' is also parameters[%zu]; the model sees "
                              "one of them and validation always fails: rename one", name, k);
        }
        if (!param_type(p)) {
            sl_check_error(c, n, p, "type", f, "type '%s' is not allowed; use string, number, "
                           "boolean, select, array[string], array[number], array[object] or "
                           "array[boolean]", t ? t : "(none)");
            bad = 1;
        }
        bool opts_ok = !opts || json_is_null(opts) || json_is_array(opts);
        for (size_t k = 0; json_is_array(opts) && k < json_array_size(opts); k++)
            opts_ok &= json_is_string(json_array_get(opts, k));
        const sl_value *desc = json_object_get(p, "description");
        const sl_value *req = json_object_get(p, "required");
        if (!opts_ok || (desc && !json_is_null(desc) && !json_is_string(desc)) ||
            (req && !json_is_null(req) && !json_is_boolean(req))) {
            sl_check_error(c, n, p, NULL, f, "'%s': description must be text, required true or "
                           "false, options a list of texts (quote numbers)", name);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* ---- the request ---- */

/* The JSON schema of the parameters, keys in Dify's order. */
static sl_value *schema_of(const sl_value *ps)
{
    sl_value *props = json_object(), *req = json_array();
    for (size_t i = 0; i < json_array_size(ps); i++) {
        const sl_value *p = json_array_get(ps, i);
        const char *t = param_type(p), *desc = json_string_value(json_object_get(p, "description"));
        sl_value *s = json_pack("{s:s}", "description", desc ? desc : "");
        if (!strncmp(t, "array[", 6)) {
            json_object_set_new(s, "type", json_string("array"));
            json_object_set_new(s, "items", json_pack("{s:s%}", "type", t + 6, strlen(t) - 7));
        } else {
            json_object_set_new(s, "type", json_string(t));
        }
        if (json_array_size(json_object_get(p, "options")))
            json_object_set(s, "enum", json_object_get(p, "options"));
        json_object_set_new(props, json_string_value(json_object_get(p, "name")), s);
        if (json_is_true(json_object_get(p, "required")))
            json_array_append(req, json_object_get(p, "name"));
    }
    return json_pack("{s:s, s:o, s:o}", "type", "object", "properties", props, "required", req);
}

static void add(sl_value *msgs, const char *role, const char *text)
{
    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", role, "content", text));
}

static const char *const ex_text[2] = {"What is the weather like in Paris today?",
                                       "I would love a slice of cherry pie."};
static const char *const ex_args[2] = {"{\"location\": \"Paris\"}", "{\"food\": \"cherry pie\"}"};
static const char *const ex_schema[2] = {
    "{\"type\": \"object\", \"properties\": {\"location\": {\"description\": \"The place to "
    "report the weather for\", \"type\": \"string\"}}, \"required\": [\"location\"]}",
    "{\"type\": \"object\", \"properties\": {\"food\": {\"description\": \"The food wanted\", "
    "\"type\": \"string\"}}, \"required\": [\"food\"]}"};

/* function_call: system, two worked calls, then the text. */
static void fc_messages(sl_value *msgs, const char *hist, const char *ins, const char *query,
                        const char *schema)
{
    char *t = sl_xasprintf(
        "You extract structured information from a text, following the criteria you are given."
        "\n### Task\nAlways call the `" TOOL "` function with correct arguments, faithful to the "
        "text and the criteria.\n" HISTORY "### Instructions\nMore guidance, to follow as "
        "closely as you can:\n<instruction>\n%s\n</instruction>\nSteps:\n1. Read the "
        "conversation in <histories>.\n2. Find the information that meets the criteria; give "
        "every value that matches.\n3. Call `" TOOL "` with it as the arguments.\n4. Write no "
        "XML tags.\n### Output\nA function call with JSON arguments, as in the examples.",
        hist, ins);
    add(msgs, "system", t);
    free(t);
    for (int i = 0; i < 2; i++) {
        char id[32];
        snprintf(id, sizeof id, "call_example_%d", i + 1);
        add(msgs, "user", ex_text[i]);
        json_array_append_new(msgs, json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "role",
                                              "assistant", "content", "I call the function with "
                                              "the arguments the text gives.", "tool_calls", "id",
                                              id, "name", TOOL, "arguments", ex_args[i]));
        json_array_append_new(msgs, json_pack("{s:s, s:s, s:s}", "role", "tool", "content",
                                              "Called with correct arguments.", "tool_call_id",
                                              id));
        add(msgs, "assistant", "The parameters are extracted.");
    }
    t = sl_xasprintf("Extract the information in <context> by calling " TOOL " with arguments "
                     "that follow the structure in <structure>.\n<context>\n%s\n</context>\n\n"
                     "<structure>\n%s\n</structure>", query, schema);
    add(msgs, "user", t);
    free(t);
}

/* prompt mode: system, two worked answers, then the text; completion
 * models get the system text and the text as one prompt. */
static void json_messages(sl_value *msgs, bool completion, const char *hist, const char *ins,
                          const char *query, const char *schema)
{
    static const char user[] = "### Structure\nThe JSON object follows this structure:\n"
                               "<structure>\n%s\n</structure>\n\n### Text\nTurn the text in "
                               "<text> into that JSON object:\n<text>\n%s\n</text>";
    char *sys = sl_xasprintf("Follow the instructions and reply with one valid JSON object, "
                             "shaped as the structure says.\n\n" HISTORY "\n### Instructions\n"
                             "More guidance, to follow as closely as you can:\n<instructions>\n"
                             "%s\n</instructions>", hist, ins);
    char *u = sl_xasprintf(user, schema, query), *t;
    if (completion) {
        t = sl_xasprintf("%s\n\n%s\n\n### Answer\nOne valid JSON object and nothing else.\n"
                         "```json\n", sys, u);
        add(msgs, "user", t);
        free(t);
    } else {
        add(msgs, "system", sys);
        for (int i = 0; i < 2; i++) {
            t = sl_xasprintf(user, ex_schema[i], ex_text[i]);
            add(msgs, "user", t);
            add(msgs, "assistant", ex_args[i]);
            free(t);
        }
        add(msgs, "user", u);
    }
    free(sys);
    free(u);
}


/* ---- the answer ---- */

/* The first JSON object in s as Dify finds it: tried from each '{' or '['
 * in turn (an object inside a list counts), a bounded number of times. */
static sl_value *first_object(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0, tries = 0; i < n && tries < 256; i++) {
        if (s[i] != '{' && s[i] != '[')
            continue;
        tries++;
        sl_value *v = json_loadb(s + i, n - i, JSON_DISABLE_EOF_CHECK, NULL);
        if (json_is_object(v))
            return v;
        json_decref(v);
    }
    return NULL;
}

/* SegmentType.is_valid, every array item checked; Python's bool is a number. */
static bool valid(const char *t, const sl_value *v)
{
    if (!strncmp(t, "array[", 6)) {
        char et[16];
        snprintf(et, sizeof et, "%.*s", (int)strlen(t) - 7, t + 6);
        for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
            if (!valid(et, json_array_get(v, i)))
                return false;
        return json_is_array(v);
    }
    return !strcmp(t, "string")    ? json_is_string(v)
           : !strcmp(t, "number")  ? json_is_number(v) || json_is_boolean(v)
           : !strcmp(t, "boolean") ? json_is_boolean(v)
                                   : json_is_object(v);
}

/* Dify's conversion of a value to its type: new reference, or NULL when it
 * cannot be used.  A boolean parameter takes integers, a boolean array item
 * only booleans (`item`). */
static sl_value *convert(const char *t, const sl_value *v, bool item)
{
    if (!strcmp(t, "number")) {
        if (json_is_boolean(v))
            return json_integer(json_is_true(v));
        if (!json_is_string(v))
            return json_is_number(v) ? json_incref((sl_value *)v) : NULL;
        /* float() when the text has a '.', else int() */
        bool dot = strchr(json_string_value(v), '.') != NULL;
        sl_value *num = sl_value_number_from_text(json_string_value(v));
        if (num && dot != json_is_real(num)) {
            double r = json_number_value(num);
            json_decref(num);
            num = dot ? json_real(r) : NULL;
        }
        return num;
    }
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v) ? json_incref((sl_value *)v)
               : !item && json_is_integer(v) ? json_boolean(json_integer_value(v) != 0) : NULL;
    if (strncmp(t, "array[", 6))
        return (!strcmp(t, "string") ? json_is_string(v) : json_is_object(v))
                   ? json_incref((sl_value *)v) : NULL;
    if (!json_is_array(v))
        return NULL;
    char et[16];
    snprintf(et, sizeof et, "%.*s", (int)strlen(t) - 7, t + 6);
    sl_value *out = json_array();
    for (size_t i = 0; i < json_array_size(v); i++) {
        sl_value *e = convert(et, json_array_get(v, i), true);
        if (e)
            json_array_append_new(out, e);
    }
    return out;
}

static sl_value *zero(const char *t)
{
    return !strncmp(t, "array[", 6) ? json_array() : !strcmp(t, "string") ? json_string("")
           : !strcmp(t, "number") ? json_integer(0) : json_false();
}

/* Dify's checks of the result, in its order: 0, or -1 with the first
 * problem in err (SL_EINVAL). */
static int problem(const sl_value *ps, const sl_value *result, sl_err *err)
{
    if (json_array_size(ps) != json_object_size(result))
        return sl_err_set(err, SL_EINVAL, "Invalid number of parameters");
    for (size_t i = 0; i < json_array_size(ps); i++) {
        const sl_value *p = json_array_get(ps, i), *opts = json_object_get(p, "options");
        const char *name = json_string_value(json_object_get(p, "name")), *t = param_type(p);
        const sl_value *v = json_object_get(result, name);
        if (!v && json_is_true(json_object_get(p, "required")))
            return sl_err_set(err, SL_EINVAL, "Parameter %s is required", name);
        if (!valid(t, v)) {
            sl_buf b;
            sl_buf_init(&b, 0);
            sl_value_pyjson(v, &b, false);
            size_t len = b.len > 500 ? 500 : b.len; /* cut on a character boundary */
            while (len && !sl_utf8_valid(b.data, len))
                len--;
            sl_err_set(err, SL_EINVAL, "Invalid value for parameter %s, expected segment type: %s, "
                       "actual_type: %s, value: %.*s%s", name, t, sl_value_type_name(v),
                       (int)len, b.data, len < b.len ? "…" : "");
            sl_buf_release(&b);
            return -1;
        }
        bool listed = !json_array_size(opts) || strcmp(t, "string");
        for (size_t k = 0; !listed && k < json_array_size(opts); k++)
            listed = json_equal(json_array_get(opts, k), (sl_value *)v);
        if (!listed)
            return sl_err_set(err, SL_EINVAL, "Invalid `select` value for parameter %s", name);
    }
    return 0;
}

/* The values the model gave: the first tool call's arguments, else the
 * text's first JSON object, else Dify's fallback (zeros, arrays left out).
 * why gets the first problem Dify would report, or stays clear. */
static sl_value *read_result(const sl_value *ps, const sl_value *call, const char *text,
                             sl_err *why)
{
    const char *args = json_string_value(json_object_get(call, "arguments"));
    sl_value *result = first_object(call ? (args ? args : "") : text ? text : "");
    if (!result && !call) {
        result = json_object();
        for (size_t i = 0; i < json_array_size(ps); i++) {
            const char *t = param_type(json_array_get(ps, i));
            if (strncmp(t, "array[", 6))
                json_object_set_new(result, json_string_value(json_object_get(
                                                json_array_get(ps, i), "name")), zero(t));
        }
        sl_err_set(why, SL_EINVAL, "Failed to extract result from function call or text "
                   "response, using empty result.");
    }
    if (!result)
        result = json_object();
    problem(ps, result, why);  /* a problem replaces the message above */
    return result;
}

static bool cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x), *ps = json_object_get(d, "parameters");
    const sl_value *m = json_object_get(d, "model");
    const char *instruction = json_string_value(json_object_get(d, "instruction"));
    const char *mode = json_string_value(json_object_get(m, "mode"));
    const char *rm = json_string_value(json_object_get(d, "reasoning_mode"));
    bool completion = mode && !strcmp(mode, "completion");
    bool fc = !completion && !(rm && !strcmp(rm, "prompt"));
    size_t cap = sl_exec_limits(x)->max_output_bytes;
    sl_buf query, ins, schema;
    sl_buf_init(&query, cap);
    sl_buf_init(&ins, cap);
    sl_buf_init(&schema, 0);
    sl_value *qv = sl_exec_get(x, json_object_get(d, "query"));
    if (qv)
        sl_value_text(qv, &query);
    json_decref(qv);
    int rc = sl_exec_render(x, instruction ? instruction : "", &ins);
    if (rc || query.toobig || ins.toobig) {
        sl_buf_release(&query);
        sl_buf_release(&ins);
        return sl_exec_fail(x, "ParameterExtractorNodeError", "the query or the instruction is "
                            "larger than max_output_bytes; shorten the variables they show");
    }
    sl_value *sch = schema_of(ps), *msgs = json_array(), *files = json_array(), *tool = NULL;
    sl_value_pyjson(sch, &schema, false);
    const char *q = query.data ? query.data : "", *in = ins.data ? ins.data : "";
    char *hist = sl_model_history_text(x);
    if (fc)
        fc_messages(msgs, hist, in, q, schema.data);
    else
        json_messages(msgs, completion, hist, in, q, schema.data);
    free(hist);
    if (sl_model_add_images(x, msgs, files) < 0) {
        json_decref(msgs);
        json_decref(files);
        json_decref(sch);
        sl_buf_release(&schema);
        sl_buf_release(&query);
        sl_buf_release(&ins);
        return -1;
    }
    sl_exec_input(x, "query", json_string(q));
    sl_exec_input(x, "files", files);
    sl_exec_input(x, "parameters", json_incref((sl_value *)ps));
    sl_exec_input(x, "instruction", instruction ? json_string(instruction) : json_null());
    sl_buf_release(&schema);
    sl_buf_release(&query);
    sl_buf_release(&ins);
    sl_value *req = json_pack("{s:o}", "messages", msgs), *resp = NULL;
    if (fc) {
        tool = json_pack("{s:s, s:s, s:O}", "name", TOOL, "description",
                         "Extract the parameters from the text", "parameters", sch);
        json_object_set_new(req, "tools", json_pack("[O]", tool));
    }
    json_decref(sch);
    sl_exec_process(x, "model_mode", json_string(completion ? "completion" : "chat"));
    sl_exec_process(x, "prompts", json_deep_copy(msgs));
    sl_exec_process(x, "function", tool ? tool : json_object());
    sl_exec_process(x, "model_provider", json_incref(json_object_get(m, "provider")));
    sl_exec_process(x, "model_name", json_incref(json_object_get(m, "name")));
    sl_llm_stream stream = {.cancelled = cancelled, .ud = x};
    rc = sl_model_call(x, req, &stream, &resp);
    json_decref(req);
    if (rc)
        return rc;
    const char *text = json_string_value(json_object_get(resp, "text"));
    const sl_value *call = json_array_get(json_object_get(resp, "tool_calls"), 0);
    sl_value *usage = json_object_get(resp, "usage");
    sl_exec_process(x, "usage", json_incref(usage));
    sl_exec_process(x, "tool_call", call ? json_deep_copy(call) : json_null());
    sl_exec_process(x, "llm_text", json_string(text ? text : ""));
    sl_err why = {0};
    sl_value *result = read_result(ps, call, text, &why);
    sl_exec_output(x, "__is_success", json_integer(!why.msg));
    sl_exec_output(x, "__reason", why.msg ? json_string(why.msg) : json_null());
    sl_exec_output(x, "__usage", json_incref(usage));
    for (size_t i = 0; i < json_array_size(ps); i++) {
        const sl_value *pp = json_array_get(ps, i);
        const char *name = json_string_value(json_object_get(pp, "name")), *t = param_type(pp);
        sl_value *v = convert(t, json_object_get(result, name), false);
        sl_exec_output(x, name, v ? v : zero(t));
    }
    sl_err_clear(&why);
    json_decref(result);
    json_decref(resp);
    return 0;
}

const sl_node_kind sl_kind_parameter_extractor = {
    .type = "parameter-extractor",
    .check = check,
    .run = run,
};
