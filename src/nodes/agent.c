/*
 * agent — Dify's Agent node (data.type "agent").
 *
 * Dify runs agent nodes through strategy plugins; sluice runs the
 * function-calling strategy of langgenius/agent (and ReAct, the same loop
 * with native tool calls) itself, reading the same agent_parameters:
 * model (a model selector), instruction, query, maximum_iterations, tools.
 * sluice's own settings sit under data.sluice, which Dify ignores:
 *
 *   sluice: {agent_mode: true, max_turns: 30, max_tokens: 0, timeout: 600,
 *            output_chars: 8000, max_files: 50, max_file_size: 10M}
 *
 * Agent mode (the default in the sandboxed runtime): the model works in
 * the run's sandbox with bash, file and grep tools (agent/agent.c); the
 * app's skills are in its catalog; file inputs are copied to inputs/; the
 * files it leaves in output/ come back as the node's `files`.  Every model
 * turn and tool call is an agent_log event.  Agent mode off (and the
 * classic runtime, where agents have only the tools the workflow
 * configures): one plain model call with the same prompt.
 *
 * Outputs, as in Dify: text, files, json (and usage).
 */
#include "engine/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/skills.h"
#include "core/size.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "sandbox/sandbox.h"
#include "nodes/model.h"

static const sl_value *param(const sl_value *data, const char *name)
{
    return json_object_get(json_object_get(data, "agent_parameters"), name);
}

static const sl_value *param_value(const sl_value *data, const char *name)
{
    return json_object_get(param(data, name), "value");
}

static const sl_value *settings(const sl_value *data)
{
    const sl_value *s = json_object_get(data, "sluice");
    return json_is_object(s) ? s : NULL;
}

/* Agent mode: data.sluice.agent_mode, else on in the sandboxed runtime. */
static bool agent_mode(const sl_graph *g, const sl_value *data)
{
    const sl_value *m = json_object_get(settings(data), "agent_mode");
    return json_is_boolean(m) ? json_is_true(m) : g->sandboxed;
}

static bool strategy_ok(const char *provider, const char *name)
{
    if (!provider || !*provider)
        return !name || !*name || !strcmp(name, "function_calling") || !strcmp(name, "ReAct");
    return strstr(provider, "langgenius/agent") &&
           (!name || !strcmp(name, "function_calling") || !strcmp(name, "ReAct"));
}

static int check_text_param(sl_check *c, const sl_gnode *n, const char *name, bool required)
{
    const sl_value *p = param(n->data, name);
    char field[96];
    snprintf(field, sizeof field, "agent_parameters.%s", name);
    if (!p) {
        if (required)
            sl_check_error(c, n, n->data, "agent_parameters", field,
                           "missing; the agent needs a %s ({type: mixed, value: text})", name);
        return required ? -1 : 0;
    }
    const char *type = json_string_value(json_object_get(p, "type"));
    const sl_value *v = json_object_get(p, "value");
    if (type && !strcmp(type, "variable"))
        return sl_check_selector(c, n, p, "value", field, true);
    if (!json_is_string(v) && !json_is_null(v)) {
        sl_check_error(c, n, p, "value", field, "must be text (with {{#node.var#}} references)");
        return -1;
    }
    return json_is_string(v) ? sl_check_text_refs(c, n, p, "value", field) : 0;
}

static int agent_check(sl_check *c, const sl_gnode *n)
{
    const sl_graph *g = sl_check_graph(c);
    const char *prov = json_string_value(json_object_get(n->data, "agent_strategy_provider_name"));
    const char *strat = json_string_value(json_object_get(n->data, "agent_strategy_name"));
    int rc = 0;
    if (!strategy_ok(prov, strat)) {
        sl_check_error(c, n, n->data, "agent_strategy_name", "agent_strategy_name",
                       "the agent strategy '%s' of plugin '%s' is not available in sluice; "
                       "sluice runs langgenius/agent's function_calling and ReAct strategies",
                       strat ? strat : "", prov ? prov : "");
        return -1;
    }
    const sl_value *ap = json_object_get(n->data, "agent_parameters");
    if (!json_is_object(ap)) {
        sl_check_error(c, n, n->data, "agent_parameters", "agent_parameters",
                       "missing or not a mapping; the agent needs {model, instruction, query}");
        return -1;
    }
    const sl_value *m = param_value(n->data, "model");
    if (!json_is_object(m)) {
        sl_check_error(c, n, ap, "model", "agent_parameters.model",
                       "missing; the agent needs a model ({type: constant, value: {provider, "
                       "model, completion_params}})");
        rc = -1;
    } else if (sl_model_check_value(c, n, m, "agent_parameters.model.value")) {
        rc = -1;
    }
    if (check_text_param(c, n, "instruction", false) || check_text_param(c, n, "query", true))
        rc = -1;
    const sl_value *tools = param_value(n->data, "tools");
    if (json_array_size(tools) > 0) {
        sl_check_error(c, n, param(n->data, "tools"), NULL, "agent_parameters.tools",
                       "configured tools (%zu) are not available in sluice yet; remove them%s",
                       json_array_size(tools),
                       g->sandboxed ? " (in the sandboxed runtime the agent has bash, file and "
                                      "grep tools of its own)"
                                    : "");
        rc = -1;
    }
    const sl_value *it = param_value(n->data, "maximum_iterations");
    if (it && !json_is_null(it) && !(json_is_integer(it) && json_integer_value(it) > 0))
        sl_check_error(c, n, param(n->data, "maximum_iterations"), "value",
                       "agent_parameters.maximum_iterations", "must be a positive whole number");
    const sl_value *s = json_object_get(n->data, "sluice");
    if (s && !json_is_object(s)) {
        sl_check_error(c, n, n->data, "sluice", "sluice", "must be a mapping");
        return -1;
    }
    static const char *const keys[] = {"agent_mode", "max_turns", "max_tokens", "timeout",
                                        "output_chars", "max_files", "max_file_size", NULL};
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)s, k, v) {
        bool known = false;
        for (const char *const *p = keys; *p && !known; p++)
            known = !strcmp(*p, k);
        if (!known) {
            sl_check_error(c, n, s, k, "sluice", "unknown setting '%s'; the settings are "
                           "agent_mode, max_turns, max_tokens, timeout, output_chars, "
                           "max_files and max_file_size", k);
            rc = -1;
        } else if (!strcmp(k, "agent_mode") ? !json_is_boolean(v)
                   : !strcmp(k, "max_file_size")
                       ? !(json_is_integer(v) || json_is_string(v))
                       : !(sl_value_is_number(v) && sl_value_number(v) >= 0)) {
            sl_check_error(c, n, s, k, "sluice", "'%s' must be %s", k,
                           !strcmp(k, "agent_mode") ? "true or false"
                                                    : "a number that is not negative");
            rc = -1;
        }
    }
    if (agent_mode(g, n->data) && !g->sandboxed) {
        sl_check_error(c, n, s ? s : n->data, s ? "agent_mode" : NULL, "sluice.agent_mode",
                       "agent mode needs the sandboxed runtime: add `sluice: {runtime: "
                       "sandboxed}` at the top level of the DSL, or set agent_mode: false for "
                       "a plain model call");
        rc = -1;
    }
    return rc;
}

/* A text parameter, references rendered. */
static char *text_param(sl_node_exec *x, const char *name)
{
    const sl_value *p = param(sl_exec_data(x), name);
    const char *type = json_string_value(json_object_get(p, "type"));
    const sl_value *v = json_object_get(p, "value");
    sl_buf b;
    sl_buf_init(&b, 0);
    if (type && !strcmp(type, "variable")) {
        sl_value *got = sl_exec_get(x, v);
        sl_model_text(got, &b);
        json_decref(got);
    } else if (json_is_string(v)) {
        sl_exec_render(x, json_string_value(v), &b);
    }
    sl_buf_addc(&b, 0);
    return sl_buf_detach(&b);
}

static double num_setting(const sl_value *data, const char *key, double dflt)
{
    const sl_value *v = json_object_get(settings(data), key);
    return sl_value_is_number(v) ? sl_value_number(v) : dflt;
}

/* ---- agent mode off: one call ---- */

static void on_text(const char *s, size_t n, void *ud)
{
    sl_exec_stream_chunk(ud, "text", s, n);
}

static bool on_cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

static int plain_call(sl_node_exec *x, const sl_value *model, const char *instruction,
                      const char *query)
{
    sl_value *msgs = json_array();
    if (*instruction)
        json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system", "content",
                                              instruction));
    json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "user", "content", query));
    if (sl_model_add_images(x, msgs, NULL) < 0) {
        json_decref(msgs);
        return -1;
    }
    sl_value *req = json_pack("{s:o}", "messages", msgs);
    sl_exec_input(x, "prompts", json_deep_copy(msgs));
    sl_llm_stream st = {.on_text = on_text, .cancelled = on_cancelled, .ud = x};
    sl_value *resp = NULL;
    int rc = sl_model_call_with(x, model, req, &st, &resp);
    json_decref(req);
    if (rc)
        return rc;
    const char *text = json_string_value(json_object_get(resp, "text"));
    sl_exec_output(x, "text", json_string(text ? text : ""));
    sl_exec_output(x, "files", json_array());
    sl_exec_output(x, "json", json_array());
    sl_exec_output(x, "usage", json_incref(json_object_get(resp, "usage")));
    json_decref(resp);
    return 0;
}

/* ---- agent mode ---- */

typedef struct {
    sl_node_exec *x;
    const sl_value *model;
    sl_value *log;           /* the steps, for process_data (capped) */
    long long tokens;
} agent_ctx;

static int call_model(void *ud, sl_value *req, sl_value **resp)
{
    agent_ctx *a = ud;
    sl_llm_stream st = {.cancelled = on_cancelled, .ud = a->x};
    return sl_model_call_with(a->x, a->model, req, &st, resp);
}

static void log_step(void *ud, const sl_value *step)
{
    agent_ctx *a = ud;
    if (json_array_size(a->log) < 500)
        json_array_append_new(a->log, json_deep_copy(step));
    sl_value *ev = json_deep_copy(step);
    sl_exec_event(a->x, "agent_log", ev);
}

static bool ctx_cancelled(void *ud)
{
    agent_ctx *a = ud;
    return sl_exec_cancelled(a->x);
}

/* A file value's name, made safe for a path in the sandbox. */
static void safe_name(const char *name, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = name && *name ? name : "file"; *p && k + 1 < n; p++)
        out[k++] = (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20) ? '_' : *p;
    out[k] = 0;
    if (!strcmp(out, ".") || !strcmp(out, ".."))
        snprintf(out, n, "file");
}

static void add_input_file(sl_node_exec *x, sl_sandbox *sb, const sl_value *f, sl_value *placed,
                           sl_buf *prompt)
{
    const char *ident = json_string_value(json_object_get(f, "dify_model_identity"));
    if (!json_is_object(f) || !ident || strcmp(ident, "__dify__file__"))
        return;
    char name[256];
    safe_name(json_string_value(json_object_get(f, "filename")), name, sizeof name);
    /* Two inputs with one name: the second becomes name-2.ext, … */
    char path[300];
    snprintf(path, sizeof path, "inputs/%s", name);
    for (int i = 2; json_object_get(placed, path); i++) {
        const char *dot = strrchr(name, '.');
        int stem = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
        snprintf(path, sizeof path, "inputs/%.*s-%d%s", stem, name, i, dot && dot != name ? dot : "");
    }
    sl_buf bytes;
    sl_buf_init(&bytes, 0);
    sl_err e = {0};
    int rc = sl_exec_file_bytes(x, f, sl_exec_limits(x)->agent_max_file_bytes * 10, &bytes, &e);
    if (rc == 0 && sl_sandbox_upload(sb, path, bytes.data ? bytes.data : "", bytes.len, &e))
        rc = -1;
    if (rc == 0) {
        json_object_set_new(placed, path, json_integer((json_int_t)bytes.len));
        const char *mime = json_string_value(json_object_get(f, "mime_type"));
        sl_buf_addf(prompt, "- %s/%s (%s, %zu bytes)\n", sl_sandbox_workspace(sb), path,
                    mime ? mime : "?", bytes.len);
    } else {
        const char *url = json_string_value(json_object_get(f, "remote_url"));
        if (!url || !*url)
            url = json_string_value(json_object_get(f, "url"));
        sl_buf_addf(prompt, "- %s: not copied into the sandbox (%s)%s%s\n", name,
                    rc > 0 ? "sluice does not hold its bytes" : e.msg,
                    url && !strncmp(url, "http", 4) ? "; its URL: " : "",
                    url && !strncmp(url, "http", 4) ? url : "");
    }
    sl_err_clear(&e);
    sl_buf_release(&bytes);
}

/* Copies the run's file inputs (start inputs and sys.files) to inputs/. */
static void place_inputs(sl_node_exec *x, sl_sandbox *sb, sl_buf *prompt)
{
    sl_value *placed = json_object();
    sl_buf list;
    sl_buf_init(&list, 0);
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)sl_exec_run_inputs(x), k, v) {
        if (json_is_array(v))
            for (size_t i = 0; i < json_array_size(v); i++)
                add_input_file(x, sb, json_array_get(v, i), placed, &list);
        else
            add_input_file(x, sb, v, placed, &list);
    }
    sl_value *sel = json_pack("[s,s]", "sys", "files");
    sl_value *files = sl_exec_get(x, sel);
    json_decref(sel);
    for (size_t i = 0; i < json_array_size(files); i++)
        add_input_file(x, sb, json_array_get(files, i), placed, &list);
    json_decref(files);
    if (list.len) {
        sl_buf_adds(prompt, "\nThe user's files are in inputs/:\n");
        sl_buf_add(prompt, list.data, list.len);
    }
    sl_buf_release(&list);
    json_decref(placed);
}

/* Collects files under dir (recursively) as artifacts. */
static void collect(sl_node_exec *x, sl_sandbox *sb, const char *dir, int depth, int max_files,
                    size_t max_bytes, sl_value *files, sl_value *skipped)
{
    sl_value *list = NULL;
    sl_err e = {0};
    if (depth > 8 || sl_sandbox_list(sb, dir, 1000, &list, &e)) {
        sl_err_clear(&e);
        return;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *it = json_array_get(list, i);
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *type = json_string_value(json_object_get(it, "type"));
        char *path = sl_xasprintf("%s/%s", dir, name ? name : "");
        if (type && !strcmp(type, "dir")) {
            collect(x, sb, path, depth + 1, max_files, max_bytes, files, skipped);
        } else if (!type || strcmp(type, "file")) {
            json_array_append_new(skipped, json_pack("{s:s,s:s}", "path", path, "reason",
                                                     "not a regular file"));
        } else if ((int)json_array_size(files) >= max_files) {
            json_array_append_new(skipped, json_pack("{s:s,s:s}", "path", path, "reason",
                                                     "over the limit of files "
                                                     "(agent_max_files / max_files)"));
        } else {
            sl_buf b;
            sl_buf_init(&b, 0);
            if (sl_sandbox_download(sb, path, max_bytes, &b, &e)) {
                json_array_append_new(skipped, json_pack("{s:s,s:s}", "path", path, "reason",
                                                         e.msg ? e.msg : "?"));
                sl_err_clear(&e);
            } else {
                sl_value *f = sl_exec_store_file(x, name, b.data ? b.data : "", b.len, &e);
                if (f) {
                    json_object_set_new(f, "path", json_string(path));
                    json_array_append_new(files, f);
                } else {
                    json_array_append_new(skipped, json_pack("{s:s,s:s}", "path", path,
                                                             "reason", e.msg ? e.msg : "?"));
                    sl_err_clear(&e);
                }
            }
            sl_buf_release(&b);
        }
        free(path);
    }
    json_decref(list);
}

static int agent_run(sl_node_exec *x)
{
    const sl_value *data = sl_exec_data(x);
    const sl_graph *g = sl_exec_graph(x);
    const sl_limits *lim = sl_exec_limits(x);
    const sl_value *model = param_value(data, "model");
    char *instruction = text_param(x, "instruction");
    char *query = text_param(x, "query");
    sl_exec_input(x, "query", json_string(query));
    int rc;
    if (!agent_mode(g, data)) {
        rc = plain_call(x, model, instruction, query);
        free(instruction);
        free(query);
        return rc;
    }
    sl_err e = {0};
    sl_sandbox *sb = sl_exec_sandbox(x, &e);
    if (!sb) {
        rc = sl_exec_fail(x, "SandboxError", "%s", e.msg);
        sl_err_clear(&e);
        free(instruction);
        free(query);
        return rc;
    }
    const char *ws = sl_sandbox_workspace(sb);

    sl_buf sys;
    sl_buf_init(&sys, 0);
    sl_buf_addf(&sys,
                "You are an agent working on a Linux machine of your own (a sandbox, provider "
                "%s). Your working directory is %s; files you make there stay for the rest of "
                "this run. Use your tools to run commands, write and run scripts, and read and "
                "change files; check your work by running it.\n"
                "Save every file you want to hand back to the user in %s/output/ — those files "
                "are returned with your answer (at most %d files, %zu bytes each). When you are "
                "done, reply with your final answer and no tool call.\n",
                sl_sandbox_provider(sb), ws, ws, lim->agent_max_files, lim->agent_max_file_bytes);
    place_inputs(x, sb, &sys);
    sl_skills skills;
    char *sdir = g->app_dir ? sl_xasprintf("%s/skills", g->app_dir) : NULL;
    char *sloc = sl_xasprintf("%s/skills", ws);
    if (sl_skills_load(sdir, sloc, &skills, &e))
        sl_err_clear(&e);  /* an unreadable folder: no skills, said in the warnings below */
    free(sdir);
    free(sloc);
    if (skills.n) {
        sl_buf_adds(&sys, "\n");
        sl_skills_catalog(&skills, &sys);
    }
    sl_value *names = json_array(), *bad = json_array();
    for (size_t i = 0; i < skills.n; i++)
        json_array_append_new(names, json_string(skills.v[i].name));
    for (size_t i = 0; i < skills.nwarnings; i++)
        if (skills.warnings[i].skipped)
            json_array_append_new(bad, json_string(skills.warnings[i].folder));
    sl_exec_process(x, "skills_loaded", names);
    sl_exec_process(x, "skills_skipped", bad);
    sl_exec_process(x, "skills_warnings", sl_skills_warnings(&skills));
    sl_skills_release(&skills);
    if (*instruction)
        sl_buf_addf(&sys, "\n%s\n", instruction);
    sl_buf_addc(&sys, 0);
    sl_exec_input(x, "instruction", json_string(sys.data));

    sl_agent_limits L;
    sl_agent_limits_init(&L);
    /* The node's own settings, each capped by the run's limit. */
    const sl_value *mi = param_value(data, "maximum_iterations");
    int turns = json_is_integer(mi) && json_integer_value(mi) > 0 ? (int)json_integer_value(mi)
                                                                   : lim->agent_max_turns;
    turns = (int)num_setting(data, "max_turns", turns);
    L.max_turns = turns < lim->agent_max_turns ? turns : lim->agent_max_turns;
    long long tok = (long long)num_setting(data, "max_tokens", (double)lim->agent_max_tokens);
    long long ltok = (long long)lim->agent_max_tokens;
    L.max_tokens = ltok > 0 && (tok <= 0 || tok > ltok) ? ltok : tok;
    L.timeout_s = num_setting(data, "timeout", lim->agent_timeout_s);
    if (lim->agent_timeout_s > 0 && (L.timeout_s <= 0 || L.timeout_s > lim->agent_timeout_s))
        L.timeout_s = lim->agent_timeout_s;
    double left = sl_exec_time_left(x);
    if (L.timeout_s <= 0 || L.timeout_s > left)
        L.timeout_s = left;
    L.command_timeout_s = lim->command_timeout_s;
    L.output_chars = (size_t)num_setting(data, "output_chars", (double)lim->agent_output_chars);
    L.head_chars = lim->agent_head_chars;
    L.tail_chars = lim->agent_tail_chars;
    if (L.head_chars + L.tail_chars > L.output_chars)
        L.head_chars = L.tail_chars = L.output_chars / 2;
    L.max_command_output = lim->sandbox_output_bytes;
    int max_files = (int)num_setting(data, "max_files", lim->agent_max_files);
    size_t max_bytes = lim->agent_max_file_bytes;
    const sl_value *mfs = json_object_get(settings(data), "max_file_size");
    uint64_t sz;
    if (json_is_integer(mfs))
        max_bytes = (size_t)json_integer_value(mfs);
    else if (json_is_string(mfs) && !sl_size_parse(json_string_value(mfs), &sz))
        max_bytes = (size_t)sz;
    L.max_file_bytes = max_bytes > L.max_file_bytes ? max_bytes : L.max_file_bytes;

    agent_ctx a = {.x = x, .model = model, .log = json_array()};
    sl_agent_io io = {.call = call_model, .log = log_step, .cancelled = ctx_cancelled, .ud = &a};
    sl_agent_session s;
    if (sl_agent_session_init(&s, sb, &L, &io, &e)) {
        rc = sl_exec_fail(x, "SandboxError", "%s", e.msg);
        sl_err_clear(&e);
        json_decref(a.log);
        sl_buf_release(&sys);
        free(instruction);
        free(query);
        return rc;
    }
    sl_agent_result res;
    sl_value *user = json_string(query);
    rc = sl_agent_run(&s, sys.data, user, &res, &e);
    json_decref(user);
    sl_exec_process(x, "agent_log", a.log);
    sl_exec_process(x, "turns", json_integer(res.turns));
    sl_exec_process(x, "tool_calls", json_integer(res.tool_calls));
    if (rc) {
        if (e.code == SL_ENODE)
            rc = -1;  /* the model call failed the node already */
        else
            rc = sl_exec_fail(x, e.code == SL_ECANCELED ? "WorkflowStopped"
                                 : e.code == SL_ETIMEOUT ? "AgentTimeoutError"
                                                         : "AgentLimitError",
                              "%s%s", e.msg,
                              e.code == SL_ELIMIT && e.setting &&
                                      !strcmp(e.setting, "agent_max_turns")
                                  ? "; raise data.sluice.max_turns (maximum_iterations), within "
                                    "the limit agent_max_turns"
                              : e.code == SL_ELIMIT ? "; raise data.sluice.max_tokens, within the "
                                                      "limit agent_max_tokens"
                              : e.code == SL_ETIMEOUT ? "; raise data.sluice.timeout, within the "
                                                        "limit agent_timeout_s"
                                                      : "");
        sl_err_clear(&e);
    } else {
        sl_value *files = json_array(), *skipped = json_array();
        collect(x, sb, "output", 0, max_files, max_bytes, files, skipped);
        if (json_array_size(skipped))
            sl_exec_process(x, "files_skipped", json_incref(skipped));
        json_decref(skipped);
        sl_exec_output(x, "text", json_string(res.text));
        sl_exec_output(x, "files", files);
        sl_exec_output(x, "json", json_array());
        sl_exec_output(x, "usage", json_pack("{s:I}", "total_tokens", (json_int_t)res.tokens));
    }
    sl_agent_result_release(&res);
    sl_agent_session_release(&s);
    sl_buf_release(&sys);
    free(instruction);
    free(query);
    return rc;
}

const sl_node_kind sl_kind_agent = {.type = "agent", .check = agent_check, .run = agent_run};
