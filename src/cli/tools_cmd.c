/*
 * tools_cmd — `sluice tools`: which tools an app calls and where each is
 * bound, and one call of a bound tool to try it.
 *
 *   sluice tools list FILE [--config F]
 *   sluice tools call BINDING TOOL [--args JSON] [--config F] [--allow-private]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/opt.h"
#include "core/secret.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "nodes/registry.h"
#include "sandbox/sandbox.h"
#include "tools/binding.h"

enum { O_CONFIG = 1, O_ARGS, O_PRIVATE, O_TIMEOUT };

static const sl_opt list_opts[] = {
    {"--config", NULL, "FILE", "the settings with the bindings (default: $SLUICE_CONFIG,\n"
                               "else ./sluice.yml)", O_CONFIG},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec list_spec = {
    "sluice tools list",
    "usage: sluice tools list FILE [options]\n"
    "\n"
    "Lists every tool the workflow FILE calls (tool nodes, agents' tools, an\n"
    "mcp_agent's servers) and where each is bound; for an unbound one, the lines\n"
    "to add to sluice.yml.  Exits 1 when any is unbound.\n",
    list_opts, NULL, false,
};

static const sl_opt call_opts[] = {
    {"--args", NULL, "JSON", "the arguments, a JSON object (default {})", O_ARGS},
    {"--config", NULL, "FILE", "the settings with the bindings (default: $SLUICE_CONFIG,\n"
                               "else ./sluice.yml)", O_CONFIG},
    {"--allow-private", NULL, NULL, "let the server be on this host or a private address", O_PRIVATE},
    {"--timeout", NULL, "SECONDS", "the call's deadline (default 60)", O_TIMEOUT},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec call_spec = {
    "sluice tools call",
    "usage: sluice tools call BINDING TOOL [options]\n"
    "\n"
    "Calls TOOL of the server BINDING is bound to (sluice.yml's tools: section)\n"
    "and prints the result as JSON: text, json, variables, files (name, type,\n"
    "size) and is_error.  Exits 1 when the call fails or the tool reports an\n"
    "error.  With TOOL \"-\", lists the server's tools instead.\n",
    call_opts, NULL, false,
};

static const sl_optspec tools_spec = {
    "sluice tools",
    "usage: sluice tools list FILE [--config FILE]\n"
    "       sluice tools call BINDING TOOL [--args JSON] [--config FILE] [--allow-private]\n"
    "\n"
    "Configured tools: which tools an app calls and where each is bound, and one\n"
    "call of a bound tool to try it.  Bindings live in sluice.yml (docs/tools.md).\n",
    list_opts + 1, NULL, true,
};

typedef struct {
    const char *config, *args, *pos[3];
    int npos;
    bool allow_private;
    double timeout;
} targs;

static int on_opt(void *ud, int id, const char *v)
{
    targs *a = ud;
    switch (id) {
    case O_CONFIG: a->config = v; break;
    case O_ARGS: a->args = v; break;
    case O_PRIVATE: a->allow_private = true; break;
    case O_TIMEOUT:
        a->timeout = strtod(v, NULL);
        if (a->timeout <= 0) {
            fprintf(stderr, "sluice tools call: --timeout takes seconds above 0\n");
            return -1;
        }
        break;
    default:
        if (a->npos == 3) {
            fprintf(stderr, "sluice tools: too many arguments ('%s')\n", v);
            return -1;
        }
        a->pos[a->npos++] = v;
    }
    return 0;
}

static int load_config(const char *path, sl_config **cfg)
{
    sl_err err = {0};
    if (sl_config_load(path, cfg, &err)) {
        fprintf(stderr, "sluice tools: %s\n", err.msg);
        sl_err_clear(&err);
        return -1;
    }
    return 0;
}

static int show_ref(const sl_graph *g, const sl_config *cfg, const sl_gnode *n, const char *what,
                    const char *pid, const char *pname, const char *tool)
{
    const sl_binding *b = sl_bindings_find(g->tools, pid, pname);
    if (!b)
        b = sl_bindings_find(sl_config_tools(cfg), pid, pname);
    const char *prov = pid && *pid ? pid : pname ? pname : "";
    printf("node '%s' (%s) %s %s/%s: ", n->id, n->title ? n->title : "", what, prov,
           tool ? tool : "");
    if (b) {
        const char *as = sl_binding_tool_name(b, tool);
        printf("bound to '%s' (%s %s)", sl_binding_id(b), sl_binding_kind(b),
               sl_binding_where(b));
        if (as && tool && strcmp(as, tool))
            printf(" as '%s'", as);
        printf("\n");
        return 0;
    }
    char *hint = sl_bindings_hint(prov);
    printf("UNBOUND; %s\n", hint);
    free(hint);
    return 1;
}

static int tools_list(targs *a)
{
    if (a->npos != 2) {
        sl_opt_usage(&list_spec, stderr);
        return 2;
    }
    sl_config *cfg;
    if (load_config(a->config, &cfg))
        return 1;
    sl_config_set_lenient(cfg, true);
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    if (sl_graph_load_file(&g, &sl_nodes, cfg, a->pos[1], &d, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        sl_err_clear(&err);
        sl_diag_release(&d);
        sl_config_free(cfg);
        return 1;
    }
    sl_diag_release(&d);
    int unbound = 0, refs = 0;
    for (int i = 0; i < g.nnodes; i++) {
        const sl_gnode *n = &g.nodes[i];
        const char *type = json_string_value(json_object_get(n->data, "type"));
        if (type && !strcmp(type, "tool")) {
            refs++;
            unbound += show_ref(&g, cfg, n, "tool",
                                json_string_value(json_object_get(n->data, "provider_id")),
                                json_string_value(json_object_get(n->data, "provider_name")),
                                json_string_value(json_object_get(n->data, "tool_name")));
        } else if (type && !strcmp(type, "agent")) {
            const sl_value *ap = json_object_get(n->data, "agent_parameters");
            const sl_value *tools = json_object_get(json_object_get(ap, "tools"), "value");
            size_t k;
            const sl_value *t;
            json_array_foreach(tools, k, t) {
                const sl_value *en = json_object_get(t, "enabled");
                if (en && !json_is_true(en))
                    continue;
                refs++;
                unbound += show_ref(&g, cfg, n, "agent tool",
                                    json_string_value(json_object_get(t, "provider_name")), NULL,
                                    json_string_value(json_object_get(t, "tool_name")));
            }
            const sl_value *ms = json_object_get(json_object_get(ap, "mcp_server"), "value");
            if (json_is_string(ms) && *json_string_value(ms)) {
                refs++;
                char *shown = sl_secret_mask(json_string_value(ms));
                printf("node '%s' (%s) mcp_agent servers (from the DSL, through the SSRF "
                       "guard): %.200s\n",
                       n->id, n->title ? n->title : "", shown ? shown : json_string_value(ms));
                free(shown);
            }
        }
    }
    if (!refs)
        printf("%s calls no configured tools\n", a->pos[1]);
    sl_graph_release(&g);
    sl_config_free(cfg);
    return unbound ? 1 : 0;
}

static sl_sandbox *cli_sandbox(void *ud, sl_err *err)
{
    sl_sandbox **sb = ud;
    if (!*sb) {
        sl_sandbox_opts o;
        sl_sandbox_opts_init(&o);
        if (sl_sandbox_create(&o, sb, err))
            return NULL;
    }
    return *sb;
}

static int tools_call(targs *a)
{
    if (a->npos != 3) {
        sl_opt_usage(&call_spec, stderr);
        return 2;
    }
    sl_value *args = NULL;
    if (a->args) {
        json_error_t je;
        args = json_loads(a->args, 0, &je);
        if (!json_is_object(args)) {
            fprintf(stderr, "sluice tools call: --args must be a JSON object (%s)\n",
                    args ? "it is not an object" : je.text);
            json_decref(args);
            return 2;
        }
    }
    sl_config *cfg;
    if (load_config(a->config, &cfg)) {
        json_decref(args);
        return 1;
    }
    int rc = 1;
    sl_err err = {0};
    const sl_binding *b = sl_bindings_get(sl_config_tools(cfg), a->pos[1]);
    sl_sandbox *sb = NULL;
    sl_tool_ctx ctx = {.timeout_s = a->timeout, .sandbox = cli_sandbox, .ud = &sb};
    if (!b) {
        fprintf(stderr, "sluice tools call: no binding named '%s' in the settings; %s\n",
                a->pos[1], "see sluice.yml's tools: section (docs/tools.md)");
        goto out;
    }
    if (!strcmp(a->pos[2], "-")) {
        sl_value *list = NULL;
        if (sl_binding_list(b, a->allow_private, &ctx, false, &list, &err)) {
            fprintf(stderr, "sluice tools call: %s\n", err.msg);
            goto out;
        }
        char *s = json_dumps(list, JSON_INDENT(2));
        printf("%s\n", s ? s : "[]");
        free(s);
        json_decref(list);
        rc = 0;
        goto out;
    }
    sl_toolset *ts = sl_binding_toolset(b, a->allow_private, &err);
    sl_tool_result res;
    sl_tool_result_init(&res);
    if (!ts || sl_toolset_call(ts, &ctx, sl_binding_tool_name(b, a->pos[2]), args, &res, &err)) {
        fprintf(stderr, "sluice tools call: %s\n", err.msg);
        sl_tool_result_release(&res);
        goto out;
    }
    sl_value *files = json_array();
    for (size_t i = 0; i < res.n_files; i++)
        json_array_append_new(files, json_pack("{s:s, s:s, s:I}", "name", res.files[i].name,
                                               "mime_type", res.files[i].mime_type, "size",
                                               (json_int_t)res.files[i].data.len));
    sl_value *out = json_pack("{s:s#, s:O, s:O, s:o, s:b}", "text",
                              res.text.data ? res.text.data : "", res.text.len, "json", res.json,
                              "variables", res.variables, "files", files, "is_error",
                              res.is_error);
    sl_value *masked = sl_secret_mask_value(out);
    char *s = json_dumps(masked, JSON_INDENT(2));
    printf("%s\n", s ? s : "{}");
    free(s);
    json_decref(masked);
    json_decref(out);
    rc = res.is_error ? 1 : 0;
    sl_tool_result_release(&res);
out:
    sl_err_clear(&err);
    json_decref(args);
    sl_config_free(cfg);
    sl_sandbox_destroy(sb);
    return rc;
}

int sl_cli_tools(int argc, char **argv)
{
    targs a = {0};
    const char *sub = argc > 1 ? argv[1] : NULL;
    const sl_optspec *spec = sub && !strcmp(sub, "list") ? &list_spec
                             : sub && !strcmp(sub, "call") ? &call_spec
                                                           : &tools_spec;
    if (spec == &tools_spec) {
        bool help = sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h"));
        if (!help && sub)
            fprintf(stderr, "sluice tools: unknown subcommand '%s'; use list or call\n", sub);
        sl_opt_usage(&tools_spec, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    int prc = sl_opt_parse(spec, argc, argv, 1, on_opt, &a, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? 0 : 2;
    return spec == &list_spec ? tools_list(&a) : tools_call(&a);
}
