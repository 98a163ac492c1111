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
#include "core/clock.h"
#include "core/size.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "sandbox/sandbox.h"
#include "nodes/model.h"
#include "nodes/toolcall.h"
#include "nodes/wftool.h"
#include "tools/builtin.h"
#include "tools/mcp.h"

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
    if (provider && !strcmp(provider, "hjlarry/agent/mcp_agent"))
        return !name || !strcmp(name, "function_calling");
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

static int check_tools(sl_check *c, const sl_gnode *n);

static int agent_check(sl_check *c, const sl_gnode *n)
{
    const sl_graph *g = sl_check_graph(c);
    const char *prov = json_string_value(json_object_get(n->data, "agent_strategy_provider_name"));
    const char *strat = json_string_value(json_object_get(n->data, "agent_strategy_name"));
    int rc = 0;
    if (!strategy_ok(prov, strat)) {
        sl_check_error(c, n, n->data, "agent_strategy_name", "agent_strategy_name",
                       "the agent strategy '%s' of plugin '%s' is not available in sluice; "
                       "sluice runs langgenius/agent's function_calling and ReAct strategies "
                       "and hjlarry/agent's mcp_agent",
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
    if (check_tools(c, n))
        rc = -1;
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

/* ---- configured tools ---- */

/* The hjlarry/agent plugin's MCP strategy: function calling with the MCP
 * servers named by its mcp_server parameter. */
static bool is_mcp_agent(const sl_value *data)
{
    const char *prov = json_string_value(json_object_get(data, "agent_strategy_provider_name"));
    return prov && !strcmp(prov, "hjlarry/agent/mcp_agent");
}

/* The enabled entries of agent_parameters.tools. */
static bool tool_enabled(const sl_value *t)
{
    const sl_value *e = json_object_get(t, "enabled");
    return !e || json_is_true(e);
}

/* mcp_server: a JSON object {name: {url, headers?, timeout?, transport?}},
 * or one URL.  *out: {name: {url, ...}} (new), or NULL with why. */
static sl_value *mcp_servers(const char *text, const char **why)
{
    *why = NULL;
    while (text && (*text == ' ' || *text == '\n' || *text == '\t'))
        text++;
    if (!text || !*text)
        return json_object();
    if (*text != '{') {
        if (strncmp(text, "http://", 7) && strncmp(text, "https://", 8)) {
            *why = "is neither a URL nor a JSON object {name: {url, headers, timeout}}";
            return NULL;
        }
        char *u = sl_xstrdup(text);
        for (size_t n = strlen(u); n && (u[n - 1] == ' ' || u[n - 1] == '\n'); n--)
            u[n - 1] = 0;
        sl_value *r = json_pack("{s:{s:s}}", "default_server", "url", u);
        free(u);
        return r;
    }
    sl_value *v = json_loads(text, 0, NULL);
    if (json_is_object(json_object_get(v, "mcpServers"))) {
        sl_value *inner = json_incref(json_object_get(v, "mcpServers"));
        json_decref(v);
        v = inner;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        *why = "is not valid JSON: {name: {url, headers, timeout}}";
        return NULL;
    }
    const char *k;
    const sl_value *s;
    json_object_foreach(v, k, s) {
        const char *url = json_string_value(json_object_get(s, "url"));
        if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
            json_decref(v);
            *why = "names a server without an http(s) url";
            return NULL;
        }
    }
    if (json_object_size(v) > 16) {
        json_decref(v);
        *why = "names more than 16 servers";
        return NULL;
    }
    return v;
}

static int check_tools(sl_check *c, const sl_gnode *n)
{
    const sl_value *tp = param(n->data, "tools");
    const sl_value *tools = param_value(n->data, "tools");
    int rc = 0;
    if (tools && !json_is_null(tools) && !json_is_array(tools)) {
        sl_check_error(c, n, tp, "value", "agent_parameters.tools", "must be a list of tools");
        return -1;
    }
    size_t i;
    const sl_value *t;
    json_array_foreach(tools, i, t) {
        char field[96];
        snprintf(field, sizeof field, "agent_parameters.tools[%zu]", i);
        if (!json_is_object(t)) {
            sl_check_error(c, n, tp, "value", field, "a tool is a mapping {provider_name, "
                           "tool_name, …}");
            rc = -1;
            continue;
        }
        if (!tool_enabled(t))
            continue;
        const char *prov = json_string_value(json_object_get(t, "provider_name"));
        const char *name = json_string_value(json_object_get(t, "tool_name"));
        if (!prov || !*prov || !name || !*name) {
            sl_check_error(c, n, t, NULL, field, "an enabled tool needs provider_name and "
                           "tool_name");
            rc = -1;
            continue;
        }
        const char *k;
        const sl_value *p;
        json_object_foreach(json_object_get(t, "parameters"), k, p) {
            const sl_value *val = json_object_get(p, "value");
            const sl_value *auto_ = json_object_get(p, "auto");
            bool fixed = json_is_integer(auto_) ? json_integer_value(auto_) == 0
                                                : json_is_false(auto_);
            if (fixed && json_is_object(val) &&
                !strcmp(json_string_value(json_object_get(val, "type")) ?: "", "variable")) {
                char f2[160];
                snprintf(f2, sizeof f2, "%s.parameters.%s", field, k);
                if (sl_check_selector_or_skip(c, n, val, "value", f2))
                    rc = -1;
            }
        }
        const sl_binding *bound =
            sl_toolcall_binding(sl_check_graph(c), sl_check_config_get(c), prov, NULL);
        /* a workflow tool's app loads with this one (nodes/wftool.h) */
        if (bound && !strcmp(sl_binding_kind(bound), "workflow") &&
            sl_wftool_check(c, n, t, "provider_name", field, bound))
            rc = -1;
        char *has = NULL;
        if (!sl_builtin_provides(bound, name, &has)) {
            char *hint = sl_bindings_hint(prov, json_string_value(json_object_get(t, "type")));
            sl_check_config(c, n, t, "tool_name", field,
                            "the provider '%s' built into sluice has no tool '%s' (it has %s); "
                            "to use the vendor's other tools, bind the provider instead: %s",
                            prov, name, has, hint);
            free(hint);
            free(has);
            rc = -1;
        }
        if (!bound && !sl_toolcall_unbound_ok(sl_check_config_get(c))) {
            char *hint = sl_bindings_hint(prov, json_string_value(json_object_get(t, "type")));
            sl_check_config(c, n, t, "provider_name", field,
                            "the agent's tool '%s' of provider '%s' is not bound to a real "
                            "tool; %s", name, prov, hint);
            free(hint);
            rc = -1;
        }
    }
    if (is_mcp_agent(n->data)) {
        const sl_value *ms = param_value(n->data, "mcp_server");
        const char *why = NULL;
        if (ms && !json_is_null(ms) && !json_is_string(ms)) {
            why = "must be text";
        } else if (json_is_string(ms) && !strstr(json_string_value(ms), "{{#")) {
            sl_value *v = mcp_servers(json_string_value(ms), &why);
            json_decref(v);
        }
        if (why) {
            sl_check_error(c, n, param(n->data, "mcp_server"), "value",
                           "agent_parameters.mcp_server", "%s", why);
            rc = -1;
        }
    }
    return rc;
}

typedef struct {
    char *model_name;            /* what the model calls it */
    sl_tool_src src;             /* where it comes from (provider: borrowed from the DSL
                                    or from ct->server_ids) */
    char *name;                  /* the DSL's name for it */
    sl_value *fixed;             /* fixed arguments: settings, auto: 0 parameters */
    sl_value *def;               /* the server's definition (for the arguments' types) */
} ctool;

typedef struct {
    ctool *v;
    size_t n;
    sl_value *defs;              /* for the model: [{name, description, parameters}] */
    sl_toolset **servers;        /* mcp_agent servers */
    char **server_ids;
    size_t n_servers;
    sl_value *files;             /* files the tools made, as file values */
} ctools;

static void ctools_release(ctools *ct)
{
    for (size_t i = 0; i < ct->n; i++) {
        free(ct->v[i].model_name);
        free(ct->v[i].name);
        json_decref(ct->v[i].fixed);
        json_decref(ct->v[i].def);
    }
    free(ct->v);
    json_decref(ct->defs);
    for (size_t i = 0; i < ct->n_servers; i++) {
        sl_toolset_free(ct->servers[i]);
        free(ct->server_ids[i]);
    }
    free(ct->servers);
    free(ct->server_ids);
    json_decref(ct->files);
    memset(ct, 0, sizeof *ct);
}

static const char *const sandbox_tool_names[] = {"bash", "read_file", "write_file", "edit_file",
                                                 "list_files", "grep", NULL};

/* A unique name for the model: the tool's own, else prefixed by its
 * provider, else numbered. */
static char *model_name(const ctools *ct, bool sandboxed, const char *prefix, const char *name)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        char *cand = attempt == 0 ? sl_xstrdup(name)
                     : attempt == 1 ? sl_xasprintf("%s__%s", prefix, name)
                                    : sl_xasprintf("%s__%s_%d", prefix, name, attempt);
        /* model APIs take [a-zA-Z0-9_-]{1,64} */
        for (char *p = cand; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                *p = '_';
        if (strlen(cand) > 64)
            cand[64] = 0;
        bool taken = false;
        for (const char *const *s = sandbox_tool_names; sandboxed && *s && !taken; s++)
            taken = !strcmp(*s, cand);
        for (size_t i = 0; i < ct->n && !taken; i++)
            taken = !strcmp(ct->v[i].model_name, cand);
        if (!taken)
            return cand;
        free(cand);
    }
    return sl_xasprintf("tool_%zu", ct->n + 1);
}

/* The model's view of a definition: the input schema without the fixed
 * arguments, the description from extra.description when given. */
static sl_value *model_def(const char *mname, const sl_value *def, const sl_value *fixed,
                           const char *desc)
{
    sl_value *schema = json_deep_copy(json_object_get(def, "inputSchema"));
    if (!json_is_object(schema)) {
        json_decref(schema);
        schema = json_pack("{s:s, s:{}}", "type", "object", "properties");
    }
    sl_value *props = json_object_get(schema, "properties");
    sl_value *req = json_object_get(schema, "required");
    const char *k;
    sl_value *v;
    json_object_foreach((sl_value *)fixed, k, v) {
        json_object_del(props, k);
        for (size_t i = json_array_size(req); i-- > 0;)
            if (!strcmp(json_string_value(json_array_get(req, i)) ?: "", k))
                json_array_remove(req, i);
    }
    const char *d = desc && *desc ? desc : json_string_value(json_object_get(def, "description"));
    return json_pack("{s:s, s:s, s:o}", "name", mname, "description", d ? d : "", "parameters",
                     schema);
}

static void add_ctool(ctools *ct, ctool t, const char *desc)
{
    ct->v = sl_xrealloc(ct->v, (ct->n + 1) * sizeof *ct->v);
    json_array_append_new(ct->defs, model_def(t.model_name, t.def, t.fixed, desc));
    ct->v[ct->n++] = t;
}

/* Builds the tools the node configures; -1 with the node failed. */
static int build_tools(sl_node_exec *x, bool sandboxed, ctools *ct)
{
    const sl_value *data = sl_exec_data(x);
    ct->defs = json_array();
    ct->files = json_array();
    sl_err e = {0};
    size_t i;
    const sl_value *t;
    json_array_foreach(param_value(data, "tools"), i, t) {
        if (!tool_enabled(t))
            continue;
        const char *prov = json_string_value(json_object_get(t, "provider_name"));
        const char *tname = json_string_value(json_object_get(t, "tool_name"));
        const sl_binding *b = sl_toolcall_binding(sl_exec_graph(x), sl_exec_config(x), prov, NULL);
        if (!b && !sl_toolcall_replaying(x)) {
            char *hint = sl_bindings_hint(prov, json_string_value(json_object_get(t, "type")));
            sl_exec_fail(x, "AgentNodeError", "the agent's tool '%s' of provider '%s' is not "
                         "bound; %s", tname ? tname : "", prov ? prov : "", hint);
            free(hint);
            return -1;
        }
        ctool c = {.src = {.binding = b, .provider = prov}};
        c.name = sl_xstrdup(tname);
        c.def = sl_toolcall_def(x, &c.src, c.name, &e);
        if (!c.def) {
            free(c.name);
            sl_exec_fail(x, sl_err_type(&e, "AgentNodeError"), "%s", e.msg);
            sl_err_clear(&e);
            return -1;
        }
        c.fixed = json_object();
        const char *k;
        const sl_value *v;
        json_object_foreach(json_object_get(t, "settings"), k, v) {
            sl_value *fv = sl_toolcall_input(x, json_is_object(v) && json_object_get(v, "value") &&
                                                 json_object_size(v) == 1
                                             ? json_object_get(v, "value")
                                             : v);
            if (fv)
                json_object_set_new(c.fixed, k, fv);
        }
        json_object_foreach(json_object_get(t, "parameters"), k, v) {
            const sl_value *auto_ = json_object_get(v, "auto");
            bool fixed = json_is_integer(auto_) ? json_integer_value(auto_) == 0
                                                : json_is_false(auto_);
            sl_value *fv = fixed ? sl_toolcall_input(x, json_object_get(v, "value")) : NULL;
            if (fv)
                json_object_set_new(c.fixed, k, fv);
        }
        c.model_name = model_name(ct, sandboxed, prov, tname ? tname : c.name);
        const char *desc = json_string_value(json_object_get(json_object_get(t, "extra"),
                                                             "description"));
        add_ctool(ct, c, desc);
    }
    if (!is_mcp_agent(data))
        return 0;
    char *text = text_param(x, "mcp_server");
    const char *why = NULL;
    sl_value *servers = mcp_servers(text, &why);
    free(text);
    if (!servers) {
        sl_exec_fail(x, "AgentNodeError", "agent_parameters.mcp_server %s", why);
        return -1;
    }
    const sl_limits *lim = sl_exec_limits(x);
    const char *sname;
    const sl_value *s;
    json_object_foreach(servers, sname, s) {
        sl_toolset *ts = NULL;
        if (!sl_toolcall_replaying(x)) {
            sl_mcp_opts o = {0};
            o.url = json_string_value(json_object_get(s, "url"));
            o.transport = json_string_value(json_object_get(s, "transport"));
            if (o.transport && !strcmp(o.transport, "streamable_http"))
                o.transport = "streamable";
            if (o.transport && strcmp(o.transport, "sse") && strcmp(o.transport, "streamable"))
                o.transport = NULL;
            /* the plugin sends none of its headers; a DSL's would be data, not credentials */
            o.allow_private = lim->tool_allow_private;
            o.client_name = "sluice";
            o.untrusted = true;
            ts = sl_mcp_new(&o, &e);
            if (!ts) {
                sl_exec_fail(x, "AgentNodeError", "MCP server '%s': %s", sname, e.msg);
                sl_err_clear(&e);
                json_decref(servers);
                return -1;
            }
        }
        ct->servers = sl_xrealloc(ct->servers, (ct->n_servers + 1) * sizeof *ct->servers);
        ct->server_ids = sl_xrealloc(ct->server_ids, (ct->n_servers + 1) * sizeof(char *));
        int idx = (int)ct->n_servers++;
        ct->servers[idx] = ts;
        ct->server_ids[idx] = sl_xasprintf("mcp_server:%s", sname);
        sl_value *list = NULL;
        sl_tool_src ssrc = {.ts = ts, .provider = ct->server_ids[idx]};
        if (sl_toolcall_list(x, &ssrc, &list, &e)) {
            sl_exec_fail(x, sl_err_type(&e, "AgentNodeError"), "MCP server '%s': %s", sname,
                         e.msg);
            sl_err_clear(&e);
            json_decref(servers);
            return -1;
        }
        size_t j;
        const sl_value *d;
        json_array_foreach(list, j, d) {
            const char *tn = json_string_value(json_object_get(d, "name"));
            if (!tn || !*tn || ct->n >= 256)
                continue;
            ctool c = {.src = ssrc, .name = sl_xstrdup(tn), .fixed = json_object(),
                       .def = json_incref((sl_value *)d)};
            c.model_name = model_name(ct, sandboxed, sname, tn);
            add_ctool(ct, c, NULL);
        }
        json_decref(list);
    }
    json_decref(servers);
    return 0;
}

typedef struct {
    sl_node_exec *x;
    ctools *ct;
} ctool_ud;

/* One configured tool's call for the agent loop. */
static bool call_ctool(ctools *ct, sl_node_exec *x, const char *name, const sl_value *args,
                       sl_buf *out, double *tool_s)
{
    ctool *c = NULL;
    for (size_t i = 0; i < ct->n && !c; i++)
        if (!strcmp(ct->v[i].model_name, name))
            c = &ct->v[i];
    if (!c) {
        sl_buf_addf(out, "there is no tool named '%s'", name);
        return true;
    }
    sl_value *a = json_deep_copy(args);
    json_object_update(a, c->fixed);  /* hidden from the model: fixed values win */
    sl_toolcall_coerce(c->def, a);
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_err e = {0};
    double t0 = sl_clock_s();
    int rc = sl_toolcall(x, &c->src, c->name, a, &res, &e);
    *tool_s += sl_clock_s() - t0;
    json_decref(a);
    bool failed = rc != 0 || res.is_error;
    if (rc) {
        sl_buf_addf(out, "the tool call failed: %s", e.msg ? e.msg : "unknown error");
        sl_err_clear(&e);
    } else {
        sl_toolcall_text(&res, out);
        if (res.n_files) {
            sl_value *files = sl_toolcall_files(x, &res, &e);
            if (files)
                json_array_extend(ct->files, files);
            else
                sl_err_clear(&e);
            json_decref(files);
        }
    }
    sl_tool_result_release(&res);
    return failed;
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
    ctools *ct;              /* the workflow's configured tools */
    double tool_s;           /* seconds inside configured tools' calls */
    sl_buf text;             /* every round's text, as streamed */
} agent_ctx;

static bool io_tool(void *ud, const char *name, const sl_value *args, sl_buf *out)
{
    agent_ctx *a = ud;
    return call_ctool(a->ct, a->x, name, args, out, &a->tool_s);
}

/* Every round's text as it comes: streamed to an answer that shows the
 * node's text, and kept, since the node's text is all of it, as in Dify's
 * strategies (a model's words before a tool call included). */
static void on_agent_text(const char *s, size_t n, void *ud)
{
    agent_ctx *a = ud;
    sl_buf_add(&a->text, s, n);
    sl_exec_stream_chunk(a->x, "text", s, n);
}

static bool on_agent_cancelled(void *ud)
{
    return sl_exec_cancelled(((agent_ctx *)ud)->x);
}

static int call_model(void *ud, sl_value *req, sl_value **resp)
{
    agent_ctx *a = ud;
    sl_llm_stream st = {.on_text = on_agent_text, .cancelled = on_agent_cancelled, .ud = a};
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
    bool mode = agent_mode(g, data);
    ctools ct = {0};
    if (build_tools(x, mode, &ct)) {
        ctools_release(&ct);
        free(instruction);
        free(query);
        return -1;
    }
    if (!mode && ct.n == 0) {
        ctools_release(&ct);
        rc = plain_call(x, model, instruction, query);
        free(instruction);
        free(query);
        return rc;
    }
    sl_err e = {0};
    sl_sandbox *sb = NULL;
    sl_buf sys;
    sl_buf_init(&sys, 0);
    if (mode && !(sb = sl_exec_sandbox(x, &e))) {
        rc = sl_exec_fail(x, "SandboxError", "%s", e.msg);
        sl_err_clear(&e);
        ctools_release(&ct);
        free(instruction);
        free(query);
        return rc;
    }
    if (sb) {
    const char *ws = sl_sandbox_workspace(sb);

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
    }
    if (*instruction)
        sl_buf_addf(&sys, sb ? "\n%s\n" : "%s", instruction);
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

    agent_ctx a = {.x = x, .model = model, .log = json_array(), .ct = &ct};
    sl_buf_init(&a.text, lim->max_string_bytes ? lim->max_string_bytes : 0);
    sl_agent_io io = {.call = call_model, .log = log_step, .cancelled = ctx_cancelled,
                      .tools = ct.n ? ct.defs : NULL, .tool = io_tool, .ud = &a};
    sl_agent_session s;
    if (sl_agent_session_init(&s, sb, &L, &io, &e)) {
        rc = sl_exec_fail(x, "SandboxError", "%s", e.msg);
        sl_err_clear(&e);
        json_decref(a.log);
        sl_buf_release(&a.text);
        ctools_release(&ct);
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
    /* where the time went: the rest of elapsed_time is sluice's own */
    sl_exec_process(x, "model_time", json_real(s.model_s));
    sl_exec_process(x, "tool_time", json_real(a.tool_s + s.sandbox_s));
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
        json_array_extend(files, ct.files);
        if (sb)
            collect(x, sb, "output", 0, max_files, max_bytes, files, skipped);
        if (json_array_size(skipped))
            sl_exec_process(x, "files_skipped", json_incref(skipped));
        json_decref(skipped);
        /* all the rounds' text; a model that streamed none (a replayed or
         * non-streaming answer) gives its final reply */
        if (a.text.len && !a.text.toobig)
            sl_exec_output(x, "text", json_stringn(a.text.data, a.text.len));
        else
            sl_exec_output(x, "text", json_string(res.text));
        sl_exec_output(x, "files", files);
        sl_exec_output(x, "json", json_array());
        sl_exec_output(x, "usage", json_pack("{s:I}", "total_tokens", (json_int_t)res.tokens));
    }
    sl_agent_result_release(&res);
    sl_agent_session_release(&s);
    sl_buf_release(&a.text);
    ctools_release(&ct);
    sl_buf_release(&sys);
    free(instruction);
    free(query);
    return rc;
}

const sl_node_kind sl_kind_agent = {.type = "agent", .check = agent_check, .run = agent_run};
