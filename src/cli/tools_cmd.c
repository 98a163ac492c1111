/*
 * tools_cmd — `sluice tools`: which tools an app calls and where each is
 * bound, and one call of a bound tool to try it.
 *
 *   sluice tools list FILE [--config F]
 *   sluice tools call BINDING TOOL [--args JSON] [--config F] [--allow-private]
 *   sluice tools bind ID (--mcp URL | --command CMD | --openapi SPEC | --workflow FILE |
 *                         --json B) [...] [--app A] [--data D]
 *   sluice tools unbind ID [--app A] [--data D]
 *   sluice tools bindings [--app A] [--data D]
 * bind, unbind and bindings edit the server's store (`sluice serve`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/opt.h"
#include "core/secret.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "nodes/registry.h"
#include "nodes/toolcall.h"
#include "nodes/wftool.h"
#include "sandbox/sandbox.h"
#include "store/store.h"
#include "tools/binding.h"
#include "tools/builtin.h"
#include "tools/openapi.h"

enum { O_CONFIG = 1, O_ARGS, O_PRIVATE, O_TIMEOUT, O_MCP, O_COMMAND, O_JSON, O_HEADER,
       O_TRANSPORT, O_NAME, O_APP, O_DATA, O_BTIMEOUT, O_OPENAPI, O_WORKFLOW, O_SERVER,
       O_AUTH, O_AUTH_IN, O_AUTH_NAME, O_AUTH_PREFIX, O_AUTH_VALUE, O_AUTH_USER, O_AUTH_PASS };

/* --auth-KEY VALUE sets the binding's openapi.auth.KEY (docs/tools.md). */
static const char *const auth_key[] = {"in", "name", "prefix", "value", "username", "password"};

#define APP_OPT {"--app", NULL, "APP", "the app's own bindings (default: the server's, for\n" \
                                       "every app)", O_APP}
#define DATA_OPT {"--data", "--store", "DIR|URL", "the store: a folder, sqlite:FOLDER or postgres://…\n" \
                  "(default $SLUICE_STORE, else $SLUICE_DATA, else ./sluice-data)", \
                  O_DATA}

static const sl_opt bind_opts[] = {
    {"--mcp", NULL, "URL", "an MCP server over HTTP (Streamable HTTP or SSE)", O_MCP},
    {"--command", NULL, "CMD", "a stdio MCP server: its command line, split on blanks,\n"
                               "or a JSON list; it runs in a sandbox", O_COMMAND},
    {"--openapi", NULL, "SPEC", "an OpenAPI document: a file (read now and kept in the\n"
                                "store) or an http(s) URL (fetched when first used)", O_OPENAPI},
    {"--workflow", NULL, "FILE", "an app run as a tool: its DSL file or bundle (.yml or\n"
                                 ".zip; the store keeps its absolute path)", O_WORKFLOW},
    {"--json", NULL, "BINDING", "the whole binding as JSON (see docs/tools.md)", O_JSON},
    {"--transport", NULL, "auto|streamable|sse", "with --mcp: the transport (default auto)",
     O_TRANSPORT},
    {"--header", NULL, "'NAME: VALUE'", "with --mcp: a header sent with every request (a\n"
                                         "credential: stored, never shown); repeatable", O_HEADER},
    {"--server", NULL, "URL", "with --openapi: the API's base URL (else the document's)",
     O_SERVER},
    {"--auth", NULL, "none|api_key|bearer|basic", "with --openapi: how calls authenticate\n"
                                                  "(credentials are stored, never shown)", O_AUTH},
    {"--auth-in", NULL, "header|query", "api_key: where the key goes (default header)",
     O_AUTH_IN},
    {"--auth-name", NULL, "NAME", "api_key: the header (default Authorization) or the query\n"
                                  "parameter (default key)", O_AUTH_NAME},
    {"--auth-prefix", NULL, "PREFIX", "api_key in a header: bearer, basic, custom (the key\n"
                                      "alone, the default) or any word", O_AUTH_PREFIX},
    {"--auth-value", NULL, "SECRET", "api_key: the key; bearer: the token", O_AUTH_VALUE},
    {"--auth-username", NULL, "USER", "basic: the user name", O_AUTH_USER},
    {"--auth-password", NULL, "SECRET", "basic: the password", O_AUTH_PASS},
    {"--name", NULL, "DSL=SERVER", "the DSL's tool name for the server's; repeatable", O_NAME},
    {"--timeout", NULL, "SECONDS", "per call (tool_timeout_s caps it)", O_BTIMEOUT},
    APP_OPT,
    DATA_OPT,
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec bind_spec = {
    "sluice tools bind",
    "usage: sluice tools bind ID (--mcp URL | --command CMD | --openapi SPEC |\n"
    "                            --workflow FILE | --json BINDING) [options]\n"
    "\n"
    "Binds the tool provider ID (a provider_id as DSL files name it) to an MCP\n"
    "server, an OpenAPI document or an app in the store of `sluice serve`: for every\n"
    "app, or with --app for one.  Bindings in the store are never exported with an\n"
    "app.  Running servers pick it up at once.  An OpenAPI file is checked and kept\n"
    "in the store (it may move or go afterwards); a workflow's file is not.\n",
    bind_opts, NULL, false,
};

static const sl_opt scope_opts[] = {APP_OPT, DATA_OPT, {NULL, NULL, NULL, NULL, 0}};

static const sl_optspec unbind_spec = {
    "sluice tools unbind",
    "usage: sluice tools unbind ID [options]\n"
    "\n"
    "Removes the binding ID from the store (the server's, or with --app an app's).\n",
    scope_opts, NULL, false,
};

static const sl_optspec bindings_spec = {
    "sluice tools bindings",
    "usage: sluice tools bindings [options]\n"
    "\n"
    "Prints the store's bindings (the server's, or with --app an app's) as JSON,\n"
    "header and env values masked.\n",
    scope_opts, NULL, false,
};

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
    "Calls TOOL of the server BINDING is bound to (sluice.yml's tools: section,\n"
    "else a built-in provider: time, json_process, webscraper or their plugin ids)\n"
    "and prints the result as JSON: text, json, variables, files (name, type,\n"
    "size) and is_error.  Exits 1 when the call fails or the tool reports an\n"
    "error.  With TOOL \"-\", lists the server's tools instead.\n",
    call_opts, NULL, false,
};

static const sl_optspec tools_spec = {
    "sluice tools",
    "usage: sluice tools list FILE [--config FILE]\n"
    "       sluice tools call BINDING TOOL [--args JSON] [--config FILE] [--allow-private]\n"
    "       sluice tools bind ID (--mcp URL | --command CMD | --openapi SPEC |\n"
    "                            --workflow FILE | --json BINDING) [--app APP]\n"
    "       sluice tools unbind ID [--app APP]\n"
    "       sluice tools bindings [--app APP]\n"
    "\n"
    "Configured tools: which tools an app calls and where each is bound, and one\n"
    "call of a bound tool to try it.  Bindings live in sluice.yml (docs/tools.md),\n"
    "and for `sluice serve` in its store (bind, unbind, bindings; --help on each).\n",
    list_opts + 1, NULL, true,
};

typedef struct {
    const char *config, *args, *pos[3];
    int npos;
    bool allow_private;
    double timeout;
    /* bind */
    const char *mcp, *command, *json, *transport, *app, *data, *openapi, *workflow, *server;
    const char *auth, *auth_opt[6];
    sl_value *headers, *names;
    double btimeout;
    bool bad;
} targs;

static int on_opt(void *ud, int id, const char *v)
{
    targs *a = ud;
    switch (id) {
    case O_CONFIG: a->config = v; break;
    case O_ARGS: a->args = v; break;
    case O_PRIVATE: a->allow_private = true; break;
    case O_TIMEOUT:
    case O_BTIMEOUT:
        *(id == O_TIMEOUT ? &a->timeout : &a->btimeout) = strtod(v, NULL);
        if (strtod(v, NULL) <= 0) {
            fprintf(stderr, "sluice tools: --timeout takes seconds above 0\n");
            return -1;
        }
        break;
    case O_MCP: a->mcp = v; break;
    case O_COMMAND: a->command = v; break;
    case O_JSON: a->json = v; break;
    case O_TRANSPORT: a->transport = v; break;
    case O_OPENAPI: a->openapi = v; break;
    case O_WORKFLOW: a->workflow = v; break;
    case O_SERVER: a->server = v; break;
    case O_AUTH: a->auth = v; break;
    case O_AUTH_IN:
    case O_AUTH_NAME:
    case O_AUTH_PREFIX:
    case O_AUTH_VALUE:
    case O_AUTH_USER:
    case O_AUTH_PASS: a->auth_opt[id - O_AUTH_IN] = v; break;
    case O_APP: a->app = v; break;
    case O_DATA:
        if (sl_cli_set_store("sluice tools", &a->data, v))
            return -1;
        break;
    case O_HEADER:
    case O_NAME: {
        const char *sep = id == O_HEADER ? strchr(v, ':') : strchr(v, '=');
        if (!sep || sep == v) {
            fprintf(stderr, "sluice tools bind: %s takes %s\n",
                    id == O_HEADER ? "--header" : "--name",
                    id == O_HEADER ? "'NAME: VALUE'" : "DSL=SERVER");
            return -1;
        }
        sl_value **m = id == O_HEADER ? &a->headers : &a->names;
        if (!*m)
            *m = json_object();
        const char *val = sep + 1;
        while (id == O_HEADER && *val == ' ')
            val++;
        char *key = sl_xstrndup(v, (size_t)(sep - v));
        json_object_set_new(*m, key, json_string(val));
        free(key);
        break;
    }
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
                    const char *pid, const char *pname, const char *tool, const char *ptype)
{
    const sl_binding *b = sl_toolcall_binding(g, cfg, pid, pname);
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
    char *hint = sl_bindings_hint(prov, ptype);
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
        sl_graph_release(&g);
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
                                json_string_value(json_object_get(n->data, "tool_name")),
                                json_string_value(json_object_get(n->data, "provider_type")));
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
                                    json_string_value(json_object_get(t, "tool_name")),
                                    json_string_value(json_object_get(t, "type")));
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
    if (!b)
        b = sl_bindings_get(sl_builtins(), a->pos[1]);
    sl_sandbox *sb = NULL;
    sl_tool_ctx ctx = {.timeout_s = a->timeout, .sandbox = cli_sandbox, .ud = &sb,
                       .allow_private = a->allow_private};
    if (!b) {
        fprintf(stderr, "sluice tools call: no binding named '%s' in the settings, and no "
                "built-in tool; %s\n", a->pos[1], "see sluice.yml's tools: section "
                "(docs/tools.md)");
        goto out;
    }
    /* a workflow's toolset is made above tools/ (nodes/wftool.h) */
    if (!strcmp(sl_binding_kind(b), "workflow") && !sl_wftool_get(b, cfg, NULL, &err)) {
        fprintf(stderr, "sluice tools call: %s\n", err.msg);
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
        sl_secret_mask_inplace(&err.msg);
        fprintf(stderr, "sluice tools call: binding '%s': %s%s\n", a->pos[1], err.msg,
                err.code == SL_EIO && strstr(err.msg, "refused to connect")
                    ? " (sluice tools call --allow-private; a run's limit tool_allow_private)"
                    : "");
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

/* --openapi's binding: a URL as it is, a file read, checked and kept as
 * the document's text (the store must not lean on a file that may move).
 * NULL after a message. */
static sl_value *openapi_binding(targs *a)
{
    sl_value *m = json_object();
    if (!strncasecmp(a->openapi, "http://", 7) || !strncasecmp(a->openapi, "https://", 8))
        json_object_set_new(m, "spec", json_string(a->openapi));
    else {
        FILE *f = fopen(a->openapi, "rb");
        struct stat st;
        sl_buf text;
        sl_buf_init(&text, SL_OPENAPI_MAX_SPEC + 1);
        bool ok = f && !fstat(fileno(f), &st) && S_ISREG(st.st_mode) &&
                  sl_buf_add_file(&text, f) == 0;
        if (f)
            fclose(f);
        sl_openapi_doc *d = NULL;
        sl_err err = {0};
        if (!ok)
            fprintf(stderr, "sluice tools bind: --openapi %s: %s\n", a->openapi,
                    text.toobig ? "larger than 8 MiB" : "cannot read the file (give a file "
                                  "or an http(s) URL)");
        else if (sl_openapi_parse(text.data ? text.data : "", text.len, a->openapi, NULL, &d,
                                  &err)) {
            fprintf(stderr, "sluice tools bind: %s\n", err.msg);
            ok = false;
        } else if (!a->server && !sl_openapi_server(d)) {
            fprintf(stderr, "sluice tools bind: %s names no server (or only a relative one); "
                    "give --server https://HOST/PATH\n", a->openapi);
            ok = false;
        }
        sl_openapi_doc_free(d);
        sl_err_clear(&err);
        if (ok)
            json_object_set_new(m, "document", json_stringn(text.data, text.len));
        sl_buf_release(&text);
        if (!ok || !json_object_get(m, "document")) {
            if (ok)
                fprintf(stderr, "sluice tools bind: --openapi %s is not UTF-8 text\n",
                        a->openapi);
            json_decref(m);
            return NULL;
        }
    }
    if (a->server)
        json_object_set_new(m, "server", json_string(a->server));
    if (a->auth) {
        sl_value *auth = json_pack("{s:s}", "type", a->auth);
        for (int i = 0; i < 6; i++)
            if (a->auth_opt[i])
                json_object_set_new(auth, auth_key[i], json_string(a->auth_opt[i]));
        json_object_set_new(m, "auth", auth);
    }
    return json_pack("{s:o}", "openapi", m);
}

/* The binding --mcp/--command/--openapi/--workflow/--json describe (new), or
 * NULL after a message. */
static sl_value *binding_of(targs *a)
{
    int given = !!a->mcp + !!a->command + !!a->json + !!a->openapi + !!a->workflow;
    if (given != 1) {
        fprintf(stderr, "sluice tools bind: give one of --mcp URL, --command CMD, --openapi "
                "SPEC, --workflow FILE, --json BINDING\n");
        return NULL;
    }
    bool auth_opt = false;
    for (int i = 0; i < 6; i++)
        auth_opt |= a->auth_opt[i] != NULL;
    if ((a->server || a->auth || auth_opt) && !a->openapi) {
        fprintf(stderr, "sluice tools bind: --server and --auth… go with --openapi\n");
        return NULL;
    }
    if (auth_opt && !a->auth) {
        fprintf(stderr, "sluice tools bind: --auth-… need --auth api_key, bearer or basic\n");
        return NULL;
    }
    if (a->auth && (!strcmp(a->auth, "api_key") || !strcmp(a->auth, "bearer")) &&
        !a->auth_opt[3]) {
        fprintf(stderr, "sluice tools bind: --auth %s needs --auth-value (the %s)\n", a->auth,
                !strcmp(a->auth, "bearer") ? "token" : "key");
        return NULL;
    }
    if (a->auth && !strcmp(a->auth, "basic") && (!a->auth_opt[4] || !a->auth_opt[5])) {
        fprintf(stderr, "sluice tools bind: --auth basic needs --auth-username and "
                "--auth-password\n");
        return NULL;
    }
    if ((a->transport || a->headers) && !a->mcp) {
        fprintf(stderr, "sluice tools bind: --transport and --header go with --mcp\n");
        return NULL;
    }
    sl_value *b = NULL;
    if (a->openapi || a->workflow) {
        if (a->openapi)
            b = openapi_binding(a);
        else {
            char *full = realpath(a->workflow, NULL);
            struct stat st;
            if (!full || stat(full, &st) || !S_ISREG(st.st_mode))
                fprintf(stderr, "sluice tools bind: --workflow %s: no such file; give the "
                        "app's DSL file or bundle (binding an app of the store by its id is "
                        "not supported: the workflow: key names a file)\n", a->workflow);
            else
                b = json_pack("{s:s}", "workflow", full);
            free(full);
        }
        if (b && a->names)
            json_object_set(b, "names", a->names);
        if (b && a->btimeout > 0)
            json_object_set_new(b, "timeout", json_real(a->btimeout));
        return b;
    }
    if (a->json) {
        json_error_t je;
        b = json_loads(a->json, JSON_DECODE_ANY, &je);
        if (!json_is_object(b) && !json_is_string(b)) {
            fprintf(stderr, "sluice tools bind: --json must be a binding object (%s)\n",
                    b ? "it is not an object" : je.text);
            json_decref(b);
            return NULL;
        }
        return b;
    }
    sl_value *m = json_object();
    if (a->mcp) {
        json_object_set_new(m, "url", json_string(a->mcp));
        if (a->transport)
            json_object_set_new(m, "transport", json_string(a->transport));
        if (a->headers)
            json_object_set(m, "headers", a->headers);
    } else {
        sl_value *argv = a->command[0] == '[' ? json_loads(a->command, 0, NULL) : json_array();
        if (a->command[0] != '[') {
            char *copy = sl_xstrdup(a->command), *save = NULL;
            for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
                json_array_append_new(argv, json_string(w));
            free(copy);
        }
        json_object_set_new(m, "command", argv ? argv : json_array());
    }
    b = json_pack("{s:o}", "mcp", m);
    if (a->names)
        json_object_set(b, "names", a->names);
    if (a->btimeout > 0)
        json_object_set_new(b, "timeout", json_real(a->btimeout));
    return b;
}

static int tools_store(targs *a, const char *verb)
{
    bool bind = !strcmp(verb, "bind"), unbind = !strcmp(verb, "unbind");
    if ((bind || unbind) ? a->npos != 2 : a->npos != 1) {
        sl_opt_usage(bind ? &bind_spec : unbind ? &unbind_spec : &bindings_spec, stderr);
        return 2;
    }
    sl_value *b = NULL;
    if (bind && !(b = binding_of(a)))
        return 2;
    sl_store *st = sl_cli_open_store(a->data, NULL);
    if (!st) {
        json_decref(b);
        return 1;
    }
    int rc = 1;
    char *spec = NULL;
    sl_err err = {0};
    const char *scope = a->app ? a->app : "";
    char *dsl = NULL;
    if (a->app && sl_store_app_get(st, a->app, &dsl, NULL, &err)) {
        fprintf(stderr, "sluice tools %s: %s\n", verb, err.msg);
    } else if (sl_store_tools_get(st, scope, &spec, &err)) {
        fprintf(stderr, "sluice tools %s: %s\n", verb, err.msg);
    } else if (!bind && !unbind) {
        sl_value *shown = sl_bindings_spec_show(spec);
        char *s = json_dumps(shown, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("%s\n", s ? s : "{}");
        free(s);
        json_decref(shown);
        rc = 0;
    } else if (sl_bindings_spec_set(&spec, a->pos[1], b, &err) ||
               sl_store_tools_set(st, scope, spec, &err)) {
        fprintf(stderr, "sluice tools %s: %s\n", verb, err.msg);
    } else {
        printf("%s %s%s%s\n", bind ? "bound" : "unbound", a->pos[1],
               a->app ? " for app " : " for every app", a->app ? a->app : "");
        rc = 0;
    }
    free(dsl);
    free(spec);
    sl_err_clear(&err);
    json_decref(b);
    sl_store_close(st);
    return rc;
}

int sl_cli_tools(int argc, char **argv)
{
    targs a = {0};
    const char *sub = argc > 1 ? argv[1] : NULL;
    const sl_optspec *spec = sub && !strcmp(sub, "list")       ? &list_spec
                             : sub && !strcmp(sub, "call")     ? &call_spec
                             : sub && !strcmp(sub, "bind")     ? &bind_spec
                             : sub && !strcmp(sub, "unbind")   ? &unbind_spec
                             : sub && !strcmp(sub, "bindings") ? &bindings_spec
                                                               : &tools_spec;
    if (spec == &tools_spec) {
        bool help = sub && (!strcmp(sub, "--help") || !strcmp(sub, "-h"));
        if (!help && sub)
            fprintf(stderr, "sluice tools: unknown subcommand '%s'; use list or call\n", sub);
        sl_opt_usage(&tools_spec, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    int prc = sl_opt_parse(spec, argc, argv, 1, on_opt, &a, NULL);
    int rc = prc != SL_OPT_OK        ? (prc == SL_OPT_HELP ? 0 : 2)
             : spec == &list_spec    ? tools_list(&a)
             : spec == &call_spec    ? tools_call(&a)
                                     : tools_store(&a, sub);
    json_decref(a.headers);
    json_decref(a.names);
    return rc;
}
