/*
 * binding — see binding.h.
 */
#include "tools/binding.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/secret.h"
#include "tools/builtin.h"
#include "tools/mcp.h"
#include "tools/openapi.h"

/* Room a configuration can take: far past any real one, and a bound on
 * what a hostile bundle can make us hold. */
#define MAX_BINDINGS 1024
#define MAX_ARGS 256

struct sl_binding {
    char *id;
    char *where;          /* URL or command line, no credentials */
    char *url;            /* NULL for stdio */
    char *transport;      /* auto, streamable, sse */
    char **headers;       /* "Name: value", NULL-terminated (secrets registered) */
    char **command;       /* stdio argv, NULL-terminated */
    char **env;           /* stdio KEY=VALUE, NULL-terminated */
    sl_value *names;      /* object: DSL tool name -> server tool name */
    double timeout_s;
    bool openapi;         /* an OpenAPI document, not an MCP server */
    char *spec;           /* openapi: a file path or an http(s) URL (with document, its name) */
    char *document;       /* openapi: the document's text, kept with the binding; or NULL */
    char *base_dir;       /* the folder a relative spec path is read from */
    char *server;         /* openapi: the server override, or NULL */
    char *auth[7];        /* openapi: type, in, name, prefix, value, username, password */
    bool registered;      /* header and env values are registered secrets */
    bool trusted;         /* from the machine's settings, not a bundle */
    pthread_mutex_t lock;
    sl_toolset *toolset[2];  /* made on first use: [allow_private] */
    sl_value *list[2];       /* its tools, listed on first use */
    bool shared;             /* toolset[0] == toolset[1], made in this process */
    char *app;               /* workflow: the app's DSL file (nodes/wftool.h makes the toolset) */
    bool app_id;             /* ... or, `workflow: {app: ID}`, an app of serve's store */
    const sl_builtin_provider *builtin;  /* builtin: the provider (tools/builtin.h) */
    char *api_key;           /* builtin: its credential, or NULL */
    char *base_url;          /* builtin: the vendor's API root, or NULL */
    sl_value *settings;      /* builtin: its other settings (object), or NULL */
};

struct sl_bindings {
    sl_binding **v;
    size_t n;
};

sl_bindings *sl_bindings_new(void)
{
    return sl_xcalloc(1, sizeof(sl_bindings));
}

/* Frees a NULL-terminated list; with sep, each item's value (after sep)
 * is a credential: its registration is dropped when `registered` and its
 * bytes are wiped. */
static void free_strv(char **v, const char *sep, bool registered)
{
    for (char **p = v; p && *p; p++) {
        if (sep) {
            if (registered)
                sl_secret_remove(strstr(*p, sep) + strlen(sep));
            explicit_bzero(*p, strlen(*p));
        }
        free(*p);
    }
    free(v);
}

static void binding_free(sl_binding *t)
{
    if (!t)
        return;
    for (int i = 0; i < 2; i++) {
        if (!(t->shared && i == 1))
            sl_toolset_free(t->toolset[i]);
        json_decref(t->list[i]);
    }
    free(t->id);
    free(t->where);
    free(t->url);
    free(t->transport);
    free(t->spec);
    free(t->document);
    free(t->base_dir);
    free(t->server);
    free(t->app);
    if (t->api_key) {
        if (t->registered)
            sl_secret_remove(t->api_key);
        explicit_bzero(t->api_key, strlen(t->api_key));
        free(t->api_key);
    }
    free(t->base_url);
    json_decref(t->settings);
    for (int i = 0; i < 7; i++) {
        if (t->auth[i] && i >= 4) {
            if (t->registered)
                sl_secret_remove(t->auth[i]);
            explicit_bzero(t->auth[i], strlen(t->auth[i]));
        }
        free(t->auth[i]);
    }
    free_strv(t->headers, ": ", t->registered);
    free_strv(t->command, NULL, false);
    free_strv(t->env, "=", t->registered);
    json_decref(t->names);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void sl_bindings_free(sl_bindings *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        binding_free(b->v[i]);
    free(b->v);
    free(b);
}

typedef struct {
    const sl_yaml_doc *d;
    const char *path;
    const char *id;
    bool trusted;
    sl_err *err;
    const char *dir;   /* the folder of the file the bindings came from, or NULL */
} where_ctx;

/* "path:line:col: tools.ID.field: what" */
__attribute__((format(printf, 5, 6)))
static int bad(const where_ctx *w, const sl_value *obj, const char *key, const char *field,
               const char *fmt, ...)
{
    sl_mark m = obj && key ? sl_yaml_key_mark(w->d, obj, key)
                           : obj ? sl_yaml_mark(w->d, obj) : (sl_mark){0, 0};
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sl_err_set(w->err, SL_EINVAL, "%s:%d:%d: tools.%s%s%s: %s", w->path, m.line, m.col,
                      w->id, field ? "." : "", field ? field : "", what);
}

/* A value, or {env: NAME} read from the environment. */
static int scalar_or_env(const where_ctx *w, const sl_value *obj, const char *key,
                         const char *field, const sl_value *v, char **out)
{
    *out = NULL;
    if (json_is_string(v)) {
        *out = sl_xstrdup(json_string_value(v));
        return 0;
    }
    if (json_is_integer(v) || json_is_real(v)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_value_text(v, &b);
        *out = sl_xstrdup(b.data ? b.data : "");
        sl_buf_release(&b);
        return 0;
    }
    const char *name = json_is_object(v) ? json_string_value(json_object_get(v, "env")) : NULL;
    if (!name || json_object_size(v) != 1)
        return bad(w, obj, key, field, "a value is a string or {env: NAME}");
    if (!w->trusted)
        return bad(w, obj, key, field, "an app bundle's bindings may not read the environment "
                   "({env: %s}); bind credentials in sluice.yml instead", name);
    const char *val = getenv(name);
    if (!val)
        return bad(w, obj, key, field, "names the environment variable %s, which is not set; "
                   "set it or write the value", name);
    *out = sl_xstrdup(val);
    return 0;
}

/* A mapping {K: V} as "K<sep>V" strings (NULL-terminated). */
static int pairs(const where_ctx *w, const sl_value *obj, const char *key, const char *sep,
                 bool check_name, char ***out)
{
    *out = NULL;
    const sl_value *m = json_object_get(obj, key);
    if (!m)
        return 0;
    if (!json_is_object(m))
        return bad(w, obj, key, key, "must be a mapping of names to values");
    if (json_object_size(m) > MAX_ARGS)
        return bad(w, obj, key, key, "more than %d entries", MAX_ARGS);
    char **v = sl_xcalloc(json_object_size(m) + 1, sizeof *v);
    size_t n = 0;
    const char *k;
    const sl_value *x;
    json_object_foreach((sl_value *)m, k, x) {
        bool ok = *k != '\0';
        for (const char *p = k; *p && ok; p++)
            ok = check_name ? (*p > 32 && *p < 127 && *p != ':')
                            : (*p != '=' && *p != '\n');
        char field[128];
        snprintf(field, sizeof field, "%s.%s", key, k);
        char *val = NULL;
        if (!ok) {
            free_strv(v, sep, false);
            return bad(w, m, k, field, "not a valid %s name", check_name ? "header" : "variable");
        }
        if (scalar_or_env(w, m, k, field, x, &val)) {
            free_strv(v, sep, false);
            return -1;
        }
        if (strpbrk(val, "\r\n")) {
            explicit_bzero(val, strlen(val));
            free(val);
            free_strv(v, sep, false);
            return bad(w, m, k, field, "a value may not hold a line break");
        }
        v[n++] = sl_xasprintf("%s%s%s", k, sep, val);
        explicit_bzero(val, strlen(val));
        free(val);
    }
    *out = v;
    return 0;
}

/* The first key of obj that is not in keys (NULL-terminated), or NULL. */
static const char *unknown_key(const sl_value *obj, const char *const *keys)
{
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)obj, k, v) {
        bool ok = false;
        for (const char *const *q = keys; *q && !ok; q++)
            ok = !strcmp(*q, k);
        if (!ok)
            return k;
    }
    return NULL;
}

static bool url_ok(const char *u)
{
    return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
}

static int parse_mcp(const where_ctx *w, const sl_value *entry, sl_binding *t)
{
    const sl_value *m = json_object_get(entry, "mcp");
    if (json_is_string(m)) {
        if (!url_ok(json_string_value(m)))
            return bad(w, entry, "mcp", "mcp", "an MCP server's URL starts with http:// or "
                       "https://; a stdio server is {command: [program, args…]}");
        t->url = sl_xstrdup(json_string_value(m));
        t->transport = sl_xstrdup("auto");
        return 0;
    }
    if (!json_is_object(m))
        return bad(w, entry, "mcp", "mcp", "give the server's URL, or {url, transport, "
                   "headers} or {command, env}");
    static const char *const keys[] = {"url", "transport", "headers", "command", "env", NULL};
    const char *k = unknown_key(m, keys);
    const sl_value *x;
    if (k)
        return bad(w, m, k, "mcp", "unknown setting '%s'; the settings are url, transport, "
                   "headers, command and env", k);
    const char *url = json_string_value(json_object_get(m, "url"));
    const sl_value *cmd = json_object_get(m, "command");
    if (!url == !cmd)
        return bad(w, entry, "mcp", "mcp", "give either url (an HTTP server) or command (a "
                   "stdio server)");
    if (url && !url_ok(url))
        return bad(w, m, "url", "mcp.url", "an MCP server's URL starts with http:// or https://");
    const char *tr = json_string_value(json_object_get(m, "transport"));
    if (json_object_get(m, "transport") && (!tr || (strcmp(tr, "auto") &&
                                                   strcmp(tr, "streamable") && strcmp(tr, "sse"))))
        return bad(w, m, "transport", "mcp.transport", "is auto, streamable or sse");
    t->transport = sl_xstrdup(tr ? tr : "auto");
    if (url) {
        t->url = sl_xstrdup(url);
        if (json_object_get(m, "env"))
            return bad(w, m, "env", "mcp.env", "env is for stdio servers (command)");
        return pairs(w, m, "headers", ": ", true, &t->headers);
    }
    if (!json_is_array(cmd) || !json_array_size(cmd) || json_array_size(cmd) > MAX_ARGS)
        return bad(w, m, "command", "mcp.command", "a list: [program, arguments…]");
    t->command = sl_xcalloc(json_array_size(cmd) + 1, sizeof(char *));
    size_t i;
    json_array_foreach(cmd, i, x) {
        if (!json_is_string(x) || !*json_string_value(x))
            return bad(w, m, "command", "mcp.command", "item %zu is not a non-empty string", i);
        t->command[i] = sl_xstrdup(json_string_value(x));
    }
    if (json_object_get(m, "headers"))
        return bad(w, m, "headers", "mcp.headers", "headers are for HTTP servers (url)");
    return pairs(w, m, "env", "=", false, &t->env);
}

static const char *const auth_keys[7] = {"type", "in", "name", "prefix", "value", "username",
                                          "password"};

/* openapi: {spec, server, auth} (m), or the shorthand `openapi: SPEC`. */
static int parse_openapi_in(const where_ctx *w, const sl_value *entry, const sl_value *m,
                            sl_binding *t)
{
    if (!json_is_object(m))
        return bad(w, entry, "openapi", "openapi", "give the document: {spec: PATH or URL, "
                   "server: URL, auth: {...}}");
    static const char *const keys[] = {"spec", "document", "server", "auth", NULL};
    const char *k = unknown_key(m, keys);
    const sl_value *x;
    if (k)
        return bad(w, m, k, "openapi", "unknown setting '%s'; the settings are spec (or "
                   "document), server and auth", k);
    const sl_value *doc = json_object_get(m, "document");
    if (doc) {
        /* the document itself, as `sluice tools bind --openapi FILE` keeps it */
        if (json_object_get(m, "spec"))
            return bad(w, m, "document", "openapi.document", "give spec (a path or URL) or "
                       "document (the text), not both");
        if (!json_is_string(doc) || !json_string_length(doc))
            return bad(w, m, "document", "openapi.document", "the OpenAPI document's text");
        if (json_string_length(doc) > SL_OPENAPI_MAX_SPEC)
            return bad(w, m, "document", "openapi.document", "larger than %u MiB",
                       SL_OPENAPI_MAX_SPEC >> 20);
        t->openapi = true;
        t->document = sl_xstrdup(json_string_value(doc));
        t->spec = sl_xstrdup("the stored document");
        goto server;
    }
    const char *spec = json_string_value(json_object_get(m, "spec"));
    if (!spec || !*spec)
        return bad(w, json_object_get(m, "spec") ? m : entry, json_object_get(m, "spec") ? "spec"
                   : "openapi", "openapi.spec", "the OpenAPI document: a file path (relative to "
                   "this file's folder) or an http(s) URL");
    bool url = url_ok(spec);
    if (!url && strstr(spec, "://"))
        return bad(w, m, "spec", "openapi.spec", "a URL starts with http:// or https://");
    if (!url && !w->trusted) {
        bool dots = false;
        for (const char *p = spec; *p; p += strcspn(p, "/"), p += *p == '/')
            dots |= !strncmp(p, "..", 2) && (p[2] == '/' || !p[2]);
        if (spec[0] == '/' || dots)
            return bad(w, m, "spec", "openapi.spec", "an app bundle's spec is a path inside its "
                       "tools/ folder (no absolute path, no ..)");
    }
    if (!url && spec[0] != '/' && !w->dir)
        return bad(w, m, "spec", "openapi.spec", "a relative path needs a folder to be read "
                   "from, and these bindings come from no file; give an absolute path or a URL");
    t->openapi = true;
    t->spec = sl_xstrdup(spec);
    t->base_dir = w->dir && !url ? sl_xstrdup(w->dir) : NULL;
server:;
    const sl_value *srv = json_object_get(m, "server");
    if (srv) {
        if (!json_is_string(srv) || !url_ok(json_string_value(srv)))
            return bad(w, m, "server", "openapi.server", "the API's base URL, starting with "
                       "http:// or https://");
        t->server = sl_xstrdup(json_string_value(srv));
    }
    const sl_value *a = json_object_get(m, "auth");
    if (!a)
        return 0;
    if (!json_is_object(a))
        return bad(w, m, "auth", "openapi.auth", "a mapping: {type: none | api_key | bearer | "
                   "basic, ...}");
    json_object_foreach((sl_value *)a, k, x) {
        int i = 0;
        while (i < 7 && strcmp(auth_keys[i], k) && !(i == 4 && !strcmp(k, "token")))
            i++;
        char field[64];
        snprintf(field, sizeof field, "openapi.auth.%s", k);
        if (i == 7)
            return bad(w, a, k, field, "unknown setting '%s'; the settings are type, in, name, "
                       "prefix, value (or token), username and password", k);
        if (t->auth[i])
            return bad(w, a, k, field, "given twice (value and token are one setting)");
        if (i < 4) {
            if (!json_is_string(x))
                return bad(w, a, k, field, "must be a string");
            t->auth[i] = sl_xstrdup(json_string_value(x));
        } else if (scalar_or_env(w, a, k, field, x, &t->auth[i]))
            return -1;
        if (strpbrk(t->auth[i], "\r\n"))
            return bad(w, a, k, field, "may not hold a line break");
    }
    const char *type = t->auth[0] ? t->auth[0] : "none";
    const char *in = t->auth[1];
    if (strcmp(type, "none") && strcmp(type, "api_key") && strcmp(type, "bearer") &&
        strcmp(type, "basic"))
        return bad(w, a, "type", "openapi.auth.type", "is none, api_key, bearer or basic");
    if (!strcmp(type, "api_key") && in && strcmp(in, "header") && strcmp(in, "query"))
        return bad(w, a, "in", "openapi.auth.in", "is header or query");
    if ((!strcmp(type, "api_key") || !strcmp(type, "bearer")) && !t->auth[4])
        return bad(w, m, "auth", "openapi.auth", "%s needs its %s", type,
                   !strcmp(type, "bearer") ? "token" : "value (the key)");
    if (!strcmp(type, "basic") && !t->auth[5])
        return bad(w, m, "auth", "openapi.auth", "basic needs a username and a password");
    if (t->auth[2]) {
        for (const char *p = t->auth[2]; *p; p++)
            if (*p <= 32 || *p >= 127 || *p == ':')
                return bad(w, a, "name", "openapi.auth.name", "not a valid header or parameter "
                           "name");
    }
    return 0;
}

static int parse_openapi(const where_ctx *w, const sl_value *entry, sl_binding *t)
{
    const sl_value *m = json_object_get(entry, "openapi");
    if (!json_is_string(m))
        return parse_openapi_in(w, entry, m, t);
    sl_value *wrap = json_pack("{s:O}", "spec", m);
    int rc = parse_openapi_in(w, entry, wrap, t);
    json_decref(wrap);
    return rc;
}

/* workflow: PATH, an app's DSL file or bundle.  The toolset that runs it
 * lives above the engine (nodes/wftool.h); a binding only says where. */
static int parse_workflow(const where_ctx *w, const sl_value *entry, sl_binding *t)
{
    const sl_value *wf = json_object_get(entry, "workflow");
    if (json_is_object(wf)) {
        /* {app: ID}: an app imported into `sluice serve` (nodes/wftool.h) */
        const char *id = json_string_value(json_object_get(wf, "app"));
        if (!id || !*id || json_object_size(wf) != 1)
            return bad(w, entry, "workflow", "workflow", "{app: ID} names an app of the server's "
                       "store by its id; a file is named by its path (workflow: FILE)");
        if (!w->trusted)
            return bad(w, entry, "workflow", "workflow", "an app bundle names its workflow tools' "
                       "apps by their files inside its tools/ folder, not by a server's app id");
        t->app = sl_xstrdup(id);
        t->app_id = true;
        return 0;
    }
    const char *path = json_string_value(wf);
    if (!path || !*path)
        return bad(w, entry, "workflow", "workflow", "the app to run: a DSL file or bundle "
                   "(.yml or .zip), its path relative to this file's folder");
    if (!w->trusted) {
        bool dots = false;
        for (const char *p = path; *p; p += strcspn(p, "/"), p += *p == '/')
            dots |= !strncmp(p, "..", 2) && (p[2] == '/' || !p[2]);
        if (path[0] == '/' || dots)
            return bad(w, entry, "workflow", "workflow", "an app bundle's workflow is a path "
                       "inside its tools/ folder (no absolute path, no ..)");
    }
    if (path[0] != '/' && !w->dir)
        return bad(w, entry, "workflow", "workflow", "a relative path needs a folder to be read "
                   "from, and these bindings come from no file; give an absolute path");
    t->app = path[0] == '/' ? sl_xstrdup(path) : sl_xasprintf("%s/%s", w->dir, path);
    return 0;
}

/* builtin: PROVIDER, or {provider, api_key, base_url, …its settings}: one
 * of sluice's own providers (tools/builtin.h) with its configuration. */
static int parse_builtin(const where_ctx *w, const sl_value *entry, sl_binding *t)
{
    const sl_value *m = json_object_get(entry, "builtin");
    const char *pname = json_is_string(m) ? json_string_value(m) : NULL;
    if (!pname && !json_is_object(m))
        return bad(w, entry, "builtin", "builtin", "a built-in provider's name, or its "
                   "settings: {provider: NAME, api_key: KEY or {env: NAME}, base_url: URL, …}");
    const sl_value *pv = json_is_object(m) ? json_object_get(m, "provider") : NULL;
    if (pv && (!json_is_string(pv) || !*json_string_value(pv)))
        return bad(w, m, "provider", "builtin.provider", "a built-in provider's name");
    if (pv)
        pname = json_string_value(pv);
    const sl_builtin_provider *p = sl_builtin_provider_find(pname ? pname : w->id);
    if (!p) {
        char *names = sl_builtin_provider_names();
        int rc = pname ? bad(w, pv ? m : entry, pv ? "provider" : "builtin", pv ? "builtin.provider"
                             : "builtin", "'%s' is not a built-in provider; they are %s", pname,
                             names)
                       : bad(w, entry, "builtin", "builtin", "'%s' is not a built-in provider's "
                             "id; name the provider: builtin: {provider: NAME, …} (one of %s)",
                             w->id, names);
        free(names);
        return rc;
    }
    t->builtin = p;
    t->settings = json_object();
    const char *k;
    const sl_value *x;
    json_object_foreach((sl_value *)(json_is_object(m) ? m : NULL), k, x) {
        char field[128];
        snprintf(field, sizeof field, "builtin.%s", k);
        bool known = !strcmp(k, "provider") || !strcmp(k, "api_key") || !strcmp(k, "base_url");
        for (const char *const *q = p->settings; q && *q && !known; q++)
            known = !strcmp(*q, k);
        bool no_vendor = !p->default_url && !p->url_env;
        if (!known || (!strcmp(k, "api_key") && !p->key_env) ||
            (!strcmp(k, "base_url") && no_vendor)) {
            sl_buf names;
            sl_buf_init(&names, 0);
            sl_buf_adds(&names, "provider");
            if (p->key_env)
                sl_buf_adds(&names, ", api_key");
            if (!no_vendor)
                sl_buf_adds(&names, ", base_url");
            for (const char *const *q = p->settings; q && *q; q++)
                sl_buf_addf(&names, ", %s", *q);
            int rc = bad(w, m, k, field, "unknown setting '%s'; the built-in %s's settings are %s",
                         k, p->name, names.data);
            sl_buf_release(&names);
            return rc;
        }
        if (!strcmp(k, "provider"))
            continue;
        if (!strcmp(k, "base_url")) {
            const char *u = json_string_value(x);
            if (!u || !url_ok(u))
                return bad(w, m, k, field, "the vendor's API root, starting with http:// or "
                           "https://");
            t->base_url = sl_xstrdup(u);
            continue;
        }
        if (json_is_boolean(x) || json_is_null(x)) {
            json_object_set(t->settings, k, (sl_value *)x);
            continue;
        }
        char *val = NULL;
        if (scalar_or_env(w, m, k, field, x, &val))
            return -1;
        if (!strcmp(k, "api_key")) {
            t->api_key = val;
            if (!*val || strpbrk(val, "\r\n"))
                return bad(w, m, k, field, "an API key is one line of text, not empty");
            continue;
        }
        json_object_set_new(t->settings, k, json_is_object(x) || json_is_string(x)
                                                ? json_string(val) : json_deep_copy(x));
        free(val);
    }
    return 0;
}

static void set_where(sl_binding *t)
{
    if (t->builtin) {
        sl_binding tmp = {.url = t->base_url};
        if (t->base_url)
            set_where(&tmp);
        t->where = sl_xasprintf("%s in sluice%s%s", t->builtin->name, tmp.where ? ", " : "",
                                tmp.where ? tmp.where : "");
        free(tmp.where);
        return;
    }
    if (t->app) {
        t->where = t->app_id ? sl_xasprintf("app %s of the server's store", t->app)
                             : sl_xstrdup(t->app);
        return;
    }
    if (t->openapi) {
        sl_binding tmp = {.url = t->server ? t->server : t->spec};
        if (t->server || url_ok(t->spec)) {
            set_where(&tmp);
            t->where = tmp.where;
        } else
            t->where = sl_xstrdup(t->spec);
        return;
    }
    if (t->url) {
        /* no query string or user info: either may carry a credential */
        const char *s = t->url, *host = strstr(s, "://");
        host = host ? host + 3 : s;
        const char *at = strchr(host, '@'), *slash = strchr(host, '/');
        if (at && (!slash || at < slash))
            host = at + 1;
        size_t n = strcspn(host, "?#");
        t->where = sl_xasprintf("%.*s%.*s", (int)(strstr(s, "://") ? strstr(s, "://") + 3 - s : 0),
                                s, (int)n, host);
        return;
    }
    /* a program, not its arguments: they may carry a token */
    t->where = t->command[1] ? sl_xasprintf("%s …", t->command[0]) : sl_xstrdup(t->command[0]);
}

static void put(sl_bindings *b, sl_binding *t)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->v[i]->id, t->id)) {
            binding_free(b->v[i]);
            b->v[i] = t;
            return;
        }
    b->v = sl_xrealloc(b->v, (b->n + 1) * sizeof *b->v);
    b->v[b->n++] = t;
}

static int parse_one(sl_bindings *b, const where_ctx *w, const sl_value *section,
                     const sl_value *entry)
{
    if (json_is_string(entry)) {
        /* shorthand: `id: URL` */
        sl_value *wrap = json_pack("{s:O}", "mcp", entry);
        int rc = parse_one(b, w, section, wrap);
        json_decref(wrap);
        return rc;
    }
    if (!json_is_object(entry))
        return bad(w, section, w->id, NULL, "a binding is a mapping {mcp: …, names: …, "
                   "timeout: …} (or openapi: …, workflow: … or builtin: … in place of mcp)");
    static const char *const keys[] = {"mcp",   "openapi", "workflow", "builtin",
                                       "names", "timeout", NULL};
    const char *k = unknown_key(entry, keys);
    const sl_value *x;
    if (k)
        return bad(w, entry, k, k, "unknown setting '%s'; the settings are mcp, openapi, "
                   "workflow, builtin, names and timeout", k);
    bool is_mcp = json_object_get(entry, "mcp") != NULL;
    bool is_openapi = json_object_get(entry, "openapi") != NULL;
    bool is_workflow = json_object_get(entry, "workflow") != NULL;
    bool is_builtin = json_object_get(entry, "builtin") != NULL;
    int kinds = is_mcp + is_openapi + is_workflow + is_builtin;
    if (!kinds)
        return bad(w, section, w->id, NULL, "say what the provider is bound to: mcp: URL, "
                   "mcp: {command: [...]} for a stdio server, openapi: {spec: ...}, "
                   "workflow: APP or builtin: {…}");
    if (is_builtin && kinds > 1)
        return bad(w, entry, "builtin", "builtin", "a binding is one of mcp, openapi, workflow "
                   "and builtin");
    if (is_mcp && is_openapi)
        return bad(w, entry, "openapi", "openapi", "a binding is either mcp or openapi, not both");
    if (is_workflow && kinds > 1)
        return bad(w, entry, "workflow", "workflow", "a binding is one of mcp, openapi and "
                   "workflow");
    sl_binding *t = sl_xcalloc(1, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->id = sl_xstrdup(w->id);
    if (is_builtin ? parse_builtin(w, entry, t)
        : is_workflow ? parse_workflow(w, entry, t)
        : is_mcp ? parse_mcp(w, entry, t) : parse_openapi(w, entry, t))
        goto fail;
    const sl_value *names = json_object_get(entry, "names");
    if (names) {
        if (!json_is_object(names)) {
            bad(w, entry, "names", "names", "a mapping: the DSL's tool_name -> the server's");
            goto fail;
        }
        json_object_foreach((sl_value *)names, k, x)
            if (!json_is_string(x) || !*json_string_value(x)) {
                bad(w, names, k, "names", "'%s' must map to a tool name (a string)", k);
                goto fail;
            }
        t->names = json_deep_copy(names);
    }
    const sl_value *to = json_object_get(entry, "timeout");
    if (to) {
        if (!sl_value_is_number(to) || sl_value_number(to) <= 0 || sl_value_number(to) > 86400) {
            bad(w, entry, "timeout", "timeout", "seconds, a number above 0 (at most 86400)");
            goto fail;
        }
        t->timeout_s = sl_value_number(to);
    }
    /* The machine's own credentials are masked everywhere; a bundle's are
     * data (it cannot read the environment), and registering its words
     * would let it mask any text it likes in every run. */
    t->trusted = w->trusted;
    if (w->trusted) {
        for (char **p = t->headers; p && *p; p++)
            sl_secret_add(strstr(*p, ": ") + 2);
        for (char **p = t->env; p && *p; p++)
            sl_secret_add(strchr(*p, '=') + 1);
        for (int i = 4; i < 7; i++)
            if (t->auth[i])
                sl_secret_add(t->auth[i]);
        if (t->api_key)
            sl_secret_add(t->api_key);
        t->registered = true;
    }
    set_where(t);
    put(b, t);
    return 0;
fail:
    binding_free(t);
    return -1;
}

static int parse_in(sl_bindings *b, const sl_yaml_doc *d, const sl_value *section,
                    const char *path, const char *dir, bool trusted, sl_err *err)
{
    where_ctx w = {d, path, "", trusted, err, dir};
    if (!section || json_is_null(section))
        return 0;
    if (!json_is_object(section)) {
        sl_mark m = sl_yaml_mark(d, section);
        return sl_err_set(err, SL_EINVAL, "%s:%d:%d: `tools` must be a mapping of provider ids "
                          "to bindings (see docs/tools.md)", path, m.line, m.col);
    }
    if (b->n + json_object_size(section) > MAX_BINDINGS)
        return sl_err_set(err, SL_ELIMIT, "%s: more than %d tool bindings", path, MAX_BINDINGS);
    const char *id;
    const sl_value *entry;
    json_object_foreach((sl_value *)section, id, entry) {
        w.id = id;
        if (!*id)
            return bad(&w, section, id, NULL, "an empty provider id");
        if (parse_one(b, &w, section, entry))
            return -1;
    }
    return 0;
}

/* The folder of a settings file, or NULL when path names no file (a
 * binding given as text). */
static char *dir_of(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
        return NULL;
    char *real = realpath(path, NULL);
    char *slash = real ? strrchr(real, '/') : NULL;
    if (slash)
        *(slash == real ? slash + 1 : slash) = '\0';
    return real;
}

int sl_bindings_parse(sl_bindings *b, const sl_yaml_doc *d, const sl_value *section,
                      const char *path, bool trusted, sl_err *err)
{
    char *dir = dir_of(path);
    int rc = parse_in(b, d, section, path, dir, trusted, err);
    free(dir);
    return rc;
}

void sl_bindings_add_toolset(sl_bindings *b, const char *id, sl_toolset *ts, const char *where)
{
    sl_binding *t = sl_xcalloc(1, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->id = sl_xstrdup(id);
    t->where = sl_xstrdup(where ? where : "");
    t->toolset[0] = t->toolset[1] = ts;
    t->shared = true;
    put(b, t);
}

const sl_binding *sl_bindings_get(const sl_bindings *b, const char *id)
{
    for (size_t i = 0; b && id && i < b->n; i++)
        if (!strcmp(b->v[i]->id, id))
            return b->v[i];
    return NULL;
}

const sl_binding *sl_bindings_find(const sl_bindings *b, const char *provider_id,
                                   const char *provider_name)
{
    const sl_binding *t = sl_bindings_get(b, provider_id);
    if (!t)
        t = sl_bindings_get(b, provider_name);
    const char *slash = provider_id ? strrchr(provider_id, '/') : NULL;
    if (!t && slash && slash[1])
        t = sl_bindings_get(b, slash + 1);
    return t;
}

size_t sl_bindings_count(const sl_bindings *b)
{
    return b ? b->n : 0;
}

const sl_binding *sl_bindings_at(const sl_bindings *b, size_t i)
{
    return b && i < b->n ? b->v[i] : NULL;
}

const char *sl_binding_id(const sl_binding *t)
{
    return t->id;
}

const char *sl_binding_kind(const sl_binding *t)
{
    if (t->builtin)
        return "builtin";
    if (t->app)
        return "workflow";
    if (t->openapi)
        return "openapi";
    return t->shared && t->toolset[0]->ops->kind ? t->toolset[0]->ops->kind : "mcp";
}

const char *sl_binding_where(const sl_binding *t)
{
    return t->where;
}

const char *sl_binding_tool_name(const sl_binding *t, const char *dsl_name)
{
    const char *n = json_string_value(json_object_get(t->names, dsl_name ? dsl_name : ""));
    return n ? n : dsl_name;
}

const char *sl_binding_dsl_name(const sl_binding *t, const char *server_name)
{
    const char *k;
    const sl_value *v;
    json_object_foreach(t->names, k, v)
        if (!strcmp(json_string_value(v), server_name))
            return k;
    return server_name;
}

double sl_binding_timeout(const sl_binding *t)
{
    return t->timeout_s;
}

const char *sl_binding_workflow_path(const sl_binding *t)
{
    return t->app_id ? NULL : t->app;
}

const char *sl_binding_workflow_app(const sl_binding *t)
{
    return t->app_id ? t->app : NULL;
}

sl_toolset *sl_binding_keep_toolset(const sl_binding *t, sl_toolset *ts)
{
    sl_binding *m = (sl_binding *)t;
    pthread_mutex_lock(&m->lock);
    if (m->toolset[0]) {
        sl_toolset_free(ts);  /* another thread made it first */
        ts = m->toolset[0];
    } else {
        m->toolset[0] = m->toolset[1] = ts;
        m->shared = true;
    }
    pthread_mutex_unlock(&m->lock);
    return ts;
}

sl_toolset *sl_binding_toolset(const sl_binding *t, bool allow_private, sl_err *err)
{
    sl_binding *m = (sl_binding *)t;  /* the lock and the cache are the mutable part */
    pthread_mutex_lock(&m->lock);
    sl_toolset *ts = m->toolset[allow_private];
    if (!ts && t->builtin) {
        /* one toolset for both: a call's ctx says whether it may reach
         * private addresses.  A bundle's binding never reads the
         * environment, not even for what it leaves out. */
        char *where = sl_xasprintf("'%s' (%s)", t->id, t->trusted ? "sluice's settings"
                                                                  : "the app bundle");
        ts = sl_builtin_provider_toolset(t->builtin, t->api_key, t->base_url, t->settings,
                                         t->trusted, where);
        free(where);
        m->toolset[0] = m->toolset[1] = ts;
        m->shared = true;
    } else if (!ts && t->app) {
        sl_err_set(err, SL_EINVAL, "tool binding '%s' (%s) is a workflow; its app is loaded by "
                   "the node that calls it (a tool node or an agent)", t->id, t->where);
    } else if (!ts && t->openapi) {
        sl_openapi_opts o = {0};
        o.spec = t->spec;
        o.document = t->document;
        o.base_dir = t->base_dir;
        o.confine = !t->trusted;
        o.server = t->server;
        o.auth = (sl_openapi_auth){t->auth[0], t->auth[1], t->auth[2], t->auth[3], t->auth[4],
                                   t->auth[5], t->auth[6]};
        o.allow_private = allow_private;
        o.untrusted = !t->trusted;
        ts = m->toolset[allow_private] = sl_openapi_new(&o, err);
        if (!ts)
            sl_err_prefix(err, "tool binding '%s' (%s)", t->id, t->where);
    } else if (!ts) {
        sl_mcp_opts o = {0};
        o.url = t->url;
        o.transport = t->transport;
        o.headers = (const char *const *)t->headers;
        o.command = (const char *const *)t->command;
        o.env = (const char *const *)t->env;
        o.allow_private = allow_private;
        o.client_name = "sluice";
        o.untrusted = !t->trusted;
        ts = m->toolset[allow_private] = sl_mcp_new(&o, err);
        if (!ts)
            sl_err_prefix(err, "tool binding '%s' (%s)", t->id, t->where);
    }
    pthread_mutex_unlock(&m->lock);
    return ts;
}

int sl_binding_list(const sl_binding *t, bool allow_private, const sl_tool_ctx *ctx,
                    bool refresh, sl_value **out, sl_err *err)
{
    sl_binding *m = (sl_binding *)t;
    *out = NULL;
    pthread_mutex_lock(&m->lock);
    sl_value *have = refresh ? NULL : json_incref(m->list[allow_private]);
    pthread_mutex_unlock(&m->lock);
    if (have) {
        *out = have;
        return 0;
    }
    sl_toolset *ts = sl_binding_toolset(t, allow_private, err);
    if (!ts)
        return -1;
    sl_value *list = NULL;
    if (sl_toolset_list(ts, ctx, &list, err)) {
        sl_err_prefix(err, "tool binding '%s' (%s): listing its tools", t->id, t->where);
        return -1;
    }
    pthread_mutex_lock(&m->lock);
    json_decref(m->list[allow_private]);
    m->list[allow_private] = json_incref(list);
    pthread_mutex_unlock(&m->lock);
    *out = list;
    return 0;
}

const sl_value *sl_binding_find_tool(const sl_value *list, const char *name)
{
    size_t i;
    const sl_value *e;
    json_array_foreach(list, i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && name && !strcmp(n, name))
            return e;
    }
    return NULL;
}

static int parse_text_in(sl_bindings *b, const char *text, size_t len, const char *where,
                         const char *dir, bool trusted, sl_err *err);

int sl_bindings_load_file(sl_bindings *b, const char *file, const char *where, bool trusted,
                          sl_err *err)
{
    FILE *fp = fopen(file, "rb");
    if (!fp)
        return 1;
    sl_buf t;
    sl_buf_init(&t, 1u << 20);
    sl_buf_add_file(&t, fp);
    fclose(fp);
    char *dir = dir_of(file);
    int rc = t.toobig ? sl_err_set(err, SL_ELIMIT, "%s: larger than 1 MiB", where)
                      : parse_text_in(b, t.data ? t.data : "", t.len, where, dir, trusted, err);
    free(dir);
    sl_buf_release(&t);
    return rc;
}

static int parse_text_in(sl_bindings *b, const char *text, size_t len, const char *where,
                         const char *dir, bool trusted, sl_err *err)
{
    if (len > (1u << 20))
        return sl_err_set(err, SL_ELIMIT, "%s: larger than 1 MiB", where);
    sl_yaml_doc d;
    if (sl_yaml_parse(text, len, where, &d, err))
        return -1;
    const sl_value *sec = json_object_get(d.root, "tools");
    int rc = parse_in(b, &d, sec ? sec : d.root, where, dir, trusted, err);
    sl_yaml_doc_release(&d);
    return rc;
}

int sl_bindings_parse_text(sl_bindings *b, const char *text, size_t len, const char *where,
                           bool trusted, sl_err *err)
{
    return parse_text_in(b, text, len, where, NULL, trusted, err);
}

int sl_bindings_parse_json(sl_bindings *b, const char *spec, const char *where, sl_err *err)
{
    sl_yaml_doc d;
    if (sl_yaml_parse(spec ? spec : "{}", spec ? strlen(spec) : 2, where, &d, err))
        return -1;
    int rc = parse_in(b, &d, d.root, where, NULL, true, err);
    sl_yaml_doc_release(&d);
    return rc;
}

int sl_bindings_spec_set(char **spec, const char *id, const sl_value *binding, sl_err *err)
{
    if (!id || !*id)
        return sl_err_set(err, SL_EINVAL, "a binding needs an id (the provider_id it binds)");
    sl_value *all = *spec ? json_loads(*spec, 0, NULL) : json_object();
    if (!json_is_object(all)) {
        json_decref(all);
        all = json_object();
    }
    if (binding)
        json_object_set_new(all, id, json_deep_copy(binding));
    else if (json_object_del(all, id))
        return json_decref(all),
               sl_err_set(err, SL_ENOTFOUND, "there is no tool binding '%s' to remove", id);
    char *text = json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(all);
    sl_bindings *check = sl_bindings_new();
    int rc = sl_bindings_parse_json(check, text, "binding", err);
    sl_bindings_free(check);
    if (rc) {
        free(text);
        return -1;
    }
    free(*spec);
    *spec = strcmp(text, "{}") ? text : (free(text), NULL);
    return 0;
}

sl_value *sl_bindings_spec_show(const char *spec)
{
    sl_value *all = spec ? json_loads(spec, 0, NULL) : NULL;
    if (!json_is_object(all)) {
        json_decref(all);
        return json_object();
    }
    const char *id;
    sl_value *b;
    json_object_foreach(all, id, b) {
        sl_value *m = json_object_get(b, "mcp");
        static const char *const secret_maps[] = {"headers", "env"};
        for (int i = 0; i < 2; i++) {
            const char *k;
            sl_value *v;
            json_object_foreach(json_object_get(m, secret_maps[i]), k, v)
                json_object_set_new(json_object_get(m, secret_maps[i]), k, json_string("******"));
        }
        /* a URL's user info and query may be credentials too */
        sl_value *holder = json_is_string(m) ? b : m;
        const char *key = json_is_string(m) ? "mcp" : "url";
        const char *url = json_string_value(json_object_get(holder, key));
        if (url) {
            sl_binding tmp = {.url = (char *)url};
            set_where(&tmp);
            json_object_set_new(holder, key, json_string(tmp.where));
            free(tmp.where);
        }
        /* an OpenAPI binding's credentials, and its URLs' user info and query */
        sl_value *oa = json_object_get(b, "openapi");
        static const char *const oa_urls[] = {"spec", "server"};
        for (int i = 0; i < 2; i++) {
            sl_value *oh = json_is_string(oa) ? b : oa;
            const char *ok = json_is_string(oa) ? "openapi" : oa_urls[i];
            const char *u = json_string_value(json_object_get(oh, ok));
            if (u && url_ok(u)) {
                sl_binding tmp = {.url = (char *)u};
                set_where(&tmp);
                json_object_set_new(oh, ok, json_string(tmp.where));
                free(tmp.where);
            }
            if (json_is_string(oa))
                break;
        }
        /* a built-in's key, and its API root's user info and query */
        sl_value *bi = json_object_get(b, "builtin");
        if (json_object_get(bi, "api_key"))
            json_object_set_new(bi, "api_key", json_string("******"));
        const char *bu = json_string_value(json_object_get(bi, "base_url"));
        if (bu && url_ok(bu)) {
            sl_binding tmp = {.url = (char *)bu};
            set_where(&tmp);
            json_object_set_new(bi, "base_url", json_string(tmp.where));
            free(tmp.where);
        }
        sl_value *text = json_object_get(oa, "document");
        if (json_is_string(text)) {
            char shown[80];
            snprintf(shown, sizeof shown, "(kept in the store, %zu bytes)",
                     json_string_length(text));
            json_object_set_new(oa, "document", json_string(shown));
        }
        sl_value *auth = json_object_get(oa, "auth");
        static const char *const secret_keys[] = {"value", "token", "username", "password"};
        for (int i = 0; i < 4; i++)
            if (json_object_get(auth, secret_keys[i]))
                json_object_set_new(auth, secret_keys[i], json_string("******"));
        /* a stdio command's arguments may be too */
        sl_value *cmd = json_object_get(m, "command");
        for (size_t i = 1; json_is_array(cmd) && i < json_array_size(cmd); i++)
            json_array_set_new(cmd, i, json_string("******"));
    }
    return all;
}

char *sl_bindings_hint(const char *provider_id, const char *provider_type)
{
    const char *id = provider_id && *provider_id ? provider_id : "PROVIDER";
    bool quote = strpbrk(id, ":#{}[],&*!|>'\"%@` ") != NULL;
    /* the kind of binding the provider's type calls for (docs/tools.md) */
    const char *line = "mcp: http://HOST:PORT/mcp   # the MCP server that provides it";
    if (provider_type && !strcmp(provider_type, "api"))
        line = "openapi: {spec: api.yaml, auth: {type: bearer, token: {env: API_TOKEN}}}";
    else if (provider_type && !strcmp(provider_type, "workflow"))
        line = "workflow: apps/the-app.yml   # the app this tool runs";
    return sl_xasprintf("add to sluice.yml:\n  tools:\n    %s%s%s:\n      %s", quote ? "\"" : "",
                        id, quote ? "\"" : "", line);
}
