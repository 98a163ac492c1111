/*
 * builtin — see builtin.h.
 */
#include "tools/builtin.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/math.h"
#include "core/secret.h"
#include "net/http.h"
#include "net/url.h"

typedef struct {
    sl_toolset base;
    char *where;
    const sl_builtin_tool *tools;
    size_t n;
    const sl_builtin_provider *p;  /* NULL: a bare table (no configuration) */
    char *api_key;                 /* the binding's (a registered secret when trusted) */
    char *base_url;
    sl_value *settings;            /* object */
    bool from_env;                 /* what the binding leaves out comes from the environment */
} builtin_ts;

static int bt_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)ctx;
    builtin_ts *b = (builtin_ts *)t;
    sl_value *list = json_array();
    for (size_t i = 0; i < b->n; i++) {
        json_error_t je;
        sl_value *schema = json_loads(b->tools[i].schema, 0, &je);
        if (!schema) {
            json_decref(list);
            return sl_err_set(err, SL_EPARSE, "built-in tool %s: its schema does not parse: %s",
                              b->tools[i].name, je.text);
        }
        json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "name", b->tools[i].name,
                                              "description", b->tools[i].description,
                                              "inputSchema", schema));
    }
    *out = list;
    return 0;
}

/* A value of the environment variable name, or NULL when unset or empty. */
static const char *env_of(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    return v && *v ? v : NULL;
}

/* Registers a key read from the environment as a secret, once per value,
 * and keeps it registered for the process's life: what a call returns is
 * masked after the call, in events, outputs and the store. */
static void keep_secret(const char *key)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char *seen[64];
    static size_t n;
    pthread_mutex_lock(&mu);
    bool known = false;
    for (size_t i = 0; i < n && !known; i++)
        known = !strcmp(seen[i], key);
    if (!known) {
        sl_secret_add(key);
        if (n < sizeof seen / sizeof *seen)
            seen[n++] = sl_xstrdup(key);
    }
    pthread_mutex_unlock(&mu);
}

static int bt_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name, const sl_value *args,
                   sl_tool_result *res, sl_err *err)
{
    builtin_ts *b = (builtin_ts *)t;
    sl_value *empty = NULL;
    if (!json_is_object(args))
        args = empty = json_object();
    /* the configuration as this call sees it: the environment is read now,
     * so a key set after start is used (and registered: masked) */
    const sl_builtin_provider *p = b->p;
    sl_builtin_cfg cfg = {0};
    char key_from[512] = "";
    char *env_key = NULL;
    cfg.settings = b->settings;
    cfg.from_env = b->from_env;
    if (p) {
        cfg.provider = p->name;
        cfg.api_key = b->api_key;
        cfg.base_url = b->base_url;
        if (b->from_env && !cfg.api_key && p->key_env && env_of(p->key_env)) {
            env_key = sl_xstrdup(env_of(p->key_env));
            keep_secret(env_key);
            cfg.api_key = env_key;
        }
        if (b->from_env && !cfg.base_url)
            cfg.base_url = env_of(p->url_env);
        if (!cfg.base_url)
            cfg.base_url = p->default_url;
        if (p->key_env && b->api_key)
            snprintf(key_from, sizeof key_from, "the api_key of the binding %s", b->where);
        else if (p->key_env && b->from_env)
            snprintf(key_from, sizeof key_from, "set %s in sluice's environment, or give the "
                     "key in sluice.yml: tools: {%s: {builtin: {api_key: {env: NAME}}}} "
                     "(docs/tools.md, \"Built-in tools\")", p->key_env, p->name);
        else if (p->key_env)
            snprintf(key_from, sizeof key_from, "the binding %s gives no api_key; add "
                     "api_key to its builtin settings", b->where);
        cfg.key_from = key_from;
    }
    int rc = 1;
    for (size_t i = 0; i < b->n && rc == 1; i++)
        if (name && !strcmp(name, b->tools[i].name))
            rc = b->tools[i].call(ctx, &cfg, args, res, err);
    if (rc == 1) {
        sl_buf names;
        sl_buf_init(&names, 0);
        for (size_t i = 0; i < b->n; i++)
            sl_buf_addf(&names, "%s%s", i ? ", " : "", b->tools[i].name);
        rc = sl_err_set(err, SL_ENOTFOUND, "this built-in provider has no tool named '%s'; it "
                        "has %s", name ? name : "", names.data ? names.data : "none");
        sl_buf_release(&names);
    }
    if (env_key) {
        explicit_bzero(env_key, strlen(env_key));
        free(env_key);
    }
    json_decref(empty);
    return rc;
}

static const char *bt_where(sl_toolset *t)
{
    return ((builtin_ts *)t)->where;
}

static void bt_free(sl_toolset *t)
{
    builtin_ts *b = (builtin_ts *)t;
    if (b->api_key) {
        explicit_bzero(b->api_key, strlen(b->api_key));
        free(b->api_key);
    }
    free(b->base_url);
    free(b->where);
    json_decref(b->settings);
    free(b);
}

static const sl_toolset_ops builtin_ops = {
    .kind = "builtin", .list = bt_list, .call = bt_call, .where = bt_where, .free = bt_free};

static builtin_ts *bt_new(const char *where, const sl_builtin_tool *tools, size_t n)
{
    builtin_ts *b = sl_xcalloc(1, sizeof *b);
    b->base.ops = &builtin_ops;
    b->where = sl_xstrdup(where ? where : "");
    b->tools = tools;
    b->n = n;
    b->settings = json_object();
    return b;
}

bool sl_builtin_provides(const sl_binding *b, const char *tool, char **names)
{
    *names = NULL;
    if (!b || !tool || strcmp(sl_binding_kind(b), "builtin"))
        return true;
    sl_err e = {0};
    sl_toolset *t = sl_binding_toolset(b, false, &e);
    sl_err_clear(&e);
    if (!t || t->ops != &builtin_ops)
        return true;
    const builtin_ts *bt = (const builtin_ts *)t;
    const char *want = sl_binding_tool_name(b, tool);
    for (size_t i = 0; i < bt->n; i++)
        if (!strcmp(want, bt->tools[i].name))
            return true;
    sl_buf list;
    sl_buf_init(&list, 0);
    for (size_t i = 0; i < bt->n; i++)
        sl_buf_addf(&list, "%s%s", i ? ", " : "", bt->tools[i].name);
    *names = list.data ? sl_buf_detach(&list) : sl_xstrdup("");
    return false;
}

sl_toolset *sl_builtin_toolset(const char *where, const sl_builtin_tool *tools, size_t n)
{
    return &bt_new(where, tools, n)->base;
}

sl_toolset *sl_builtin_provider_toolset(const sl_builtin_provider *p, const char *api_key,
                                        const char *base_url, const sl_value *settings,
                                        bool from_env, const char *where)
{
    builtin_ts *b = bt_new(where, p->tools, *p->n);
    b->p = p;
    b->api_key = api_key ? sl_xstrdup(api_key) : NULL;
    b->base_url = base_url ? sl_xstrdup(base_url) : NULL;
    if (json_is_object(settings))
        json_object_update(b->settings, (sl_value *)settings);
    b->from_env = from_env;
    return &b->base;
}

/* ---- the providers ---- */

const sl_builtin_provider sl_builtin_providers[] = {
    {"time", "langgenius/time/time", sl_builtin_time_tools, &sl_builtin_time_n, NULL, false,
     NULL, NULL, NULL},
    {"json_process", "langgenius/json_process/json_process", sl_builtin_json_tools,
     &sl_builtin_json_n, NULL, false, NULL, NULL, NULL},
    {"webscraper", "langgenius/webscraper/webscraper", sl_builtin_web_tools, &sl_builtin_web_n,
     NULL, false, NULL, NULL, NULL},
    {"tavily", "langgenius/tavily/tavily", sl_builtin_tavily_tools, &sl_builtin_tavily_n,
     "TAVILY_API_KEY", true, "TAVILY_BASE_URL", "https://api.tavily.com", NULL},
    {"jina", "langgenius/jina/jina", sl_builtin_jina_tools, &sl_builtin_jina_n, "JINA_API_KEY",
     false, "JINA_BASE_URL", "https://r.jina.ai", sl_builtin_jina_settings},
    {"firecrawl", "langgenius/firecrawl/firecrawl", sl_builtin_firecrawl_tools,
     &sl_builtin_firecrawl_n, "FIRECRAWL_API_KEY", true, "FIRECRAWL_BASE_URL",
     "https://api.firecrawl.dev", sl_builtin_firecrawl_settings},
    {"searxng", "langgenius/searxng/searxng", sl_builtin_searxng_tools, &sl_builtin_searxng_n,
     NULL, false, "SEARXNG_BASE_URL", NULL, NULL},
    {"duckduckgo", "langgenius/duckduckgo/duckduckgo", sl_builtin_ddg_tools, &sl_builtin_ddg_n,
     NULL, false, "DUCKDUCKGO_BASE_URL", "https://html.duckduckgo.com", NULL},
    {"wikipedia", "langgenius/wikipedia/wikipedia", sl_builtin_wikipedia_tools,
     &sl_builtin_wikipedia_n, NULL, false, "WIKIPEDIA_BASE_URL", "https://{lang}.wikipedia.org",
     NULL},
    {"arxiv", "langgenius/arxiv/arxiv", sl_builtin_arxiv_tools, &sl_builtin_arxiv_n, NULL, false,
     "ARXIV_BASE_URL", "https://export.arxiv.org", NULL},
    {0},
};

const sl_builtin_provider *sl_builtin_provider_find(const char *name)
{
    if (!name)
        return NULL;
    const char *slash = strrchr(name, '/');
    for (const sl_builtin_provider *p = sl_builtin_providers; p->name; p++)
        if (!strcmp(name, p->name) || !strcmp(name, p->plugin_id) ||
            (slash && !strcmp(slash + 1, p->name)))
            return p;
    return NULL;
}

char *sl_builtin_provider_names(void)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (const sl_builtin_provider *p = sl_builtin_providers; p->name; p++)
        sl_buf_addf(&b, "%s%s", p == sl_builtin_providers ? "" : ", ", p->name);
    return sl_buf_detach(&b);
}

const char *sl_builtin_setting(const sl_builtin_cfg *cfg, const char *name, const char *env,
                               const char *def)
{
    const char *v = json_string_value(json_object_get(cfg->settings, name));
    if (v && *v)
        return v;
    if (cfg->from_env && env_of(env))
        return env_of(env);
    return def;
}

int sl_builtin_need_key(const sl_builtin_cfg *cfg, sl_err *err)
{
    if (cfg->api_key && *cfg->api_key)
        return 0;
    return sl_err_set(err, SL_EINVAL, "%s: the tool needs an API key and has none: %s",
                      cfg->provider ? cfg->provider : "built-in",
                      cfg->key_from && *cfg->key_from ? cfg->key_from : "bind one");
}

/* ---- a vendor's HTTP API ---- */

#define HOPS_MAX 10

typedef struct {
    sl_buf *body;
    const sl_tool_ctx *ctx;
} fetch_ud;

static int fetch_body(const char *p, size_t n, void *ud)
{
    return sl_buf_add(((fetch_ud *)ud)->body, p, n) ? 1 : 0;
}

static bool fetch_stop(void *ud)
{
    return sl_tool_cancelled(((fetch_ud *)ud)->ctx);
}

static int fetch_failed(sl_http *h, sl_http_result rc, const sl_builtin_req *rq, size_t cap,
                        const sl_tool_ctx *ctx, sl_err *err)
{
    switch (rc) {
    case SL_HTTP_REFUSED: {
        const char *kind = "";
        const char *addr = sl_http_refused(h, &kind);
        return sl_err_typed(err, SL_EIO, "ToolSSRFError",
                            "%s: sluice refused to connect to %s (%s): tools may not reach this "
                            "host or private addresses; if the API is yours, set the limit "
                            "tool_allow_private=true (--limit, or SLUICE_TOOL_ALLOW_PRIVATE=true)",
                            rq->vendor, addr ? addr : "?", kind ? kind : "?");
    }
    case SL_HTTP_STOPPED: return sl_err_set(err, SL_ECANCELED, "%s: the run was stopped", rq->vendor);
    case SL_HTTP_TOO_BIG:
    case SL_HTTP_CALLBACK:
        return sl_err_limit(err, SL_ELIMIT, "tool_max_output",
                            "%s: the API's answer is larger than %zu bytes, more than sluice "
                            "reads", rq->vendor, cap);
    case SL_HTTP_CONNECT_TIMEOUT:
    case SL_HTTP_TIMEOUT:
    case SL_HTTP_IDLE_READ:
    case SL_HTTP_IDLE_WRITE:
        return sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                            "%s: the API did not answer within %g s (tool_timeout_s)", rq->vendor,
                            sl_tool_timeout(ctx));
    case SL_HTTP_BAD_URL:
        return sl_err_set(err, SL_EINVAL, "%s: the API's URL is not usable (%s); check the "
                          "binding's base_url", rq->vendor, sl_http_why(h));
    default:
        return sl_err_set(err, SL_EIO, "%s: the request failed: %s", rq->vendor,
                          sl_http_why(h));
    }
}

int sl_builtin_fetch(const sl_tool_ctx *ctx, const sl_builtin_req *rq, long *status,
                     sl_buf *body, char **ctype, sl_err *err)
{
    /* raising tool_max_output lets a larger answer in */
    size_t cap = rq->max_body ? rq->max_body : SL_BUILTIN_API_MAX;
    if (!rq->max_body && sl_tool_max_output(ctx) > cap)
        cap = sl_tool_max_output(ctx);
    *status = 0;
    if (ctype)
        *ctype = NULL;
    sl_http *h = sl_http_new(err);
    if (!h)
        return -1;
    char *url = sl_xstrdup(rq->url);
    const char *method = rq->method ? rq->method : "GET";
    bool with_body = rq->body != NULL;
    size_t saved_cap = body->cap;
    fetch_ud ud = {body, ctx};
    bool strip_auth = false;
    int rc = 0;
    double timeout = sl_tool_timeout(ctx);
    for (int hop = 0;; hop++) {
        sl_http_reset(h);
        sl_buf_reset(body);
        body->cap = cap;
        body->toobig = false;
        sl_http_opts *o = sl_http_opts_of(h);
        o->connect_s = timeout < 10 ? timeout : 10;
        o->timeout_s = timeout;
        o->read_idle_s = timeout;
        o->write_idle_s = timeout;
        o->max_body = cap;
        o->max_headers = 256 << 10;
        o->guard = true;
        o->allow_private = ctx && ctx->allow_private;
        o->user_agent = "sluice";
        o->accept_encoding = "";
        o->stop = fetch_stop;
        o->stop_ud = &ud;
        o->on_body = fetch_body;
        o->ud = &ud;
        sl_http_url(h, url);
        sl_http_method(h, method, with_body ? rq->body : NULL, with_body ? rq->body_len : 0,
                       with_body);
        for (const char *const *p = rq->headers; p && *p; p++)
            if (!(strip_auth && !strncasecmp(*p, "Authorization:", 14)))
                sl_http_header(h, *p);
        sl_http_result hr = sl_http_perform(h);
        if (hr != SL_HTTP_OK) {
            rc = fetch_failed(h, hr, rq, cap, ctx, err);
            break;
        }
        long st = sl_http_status(h);
        const char *next = st >= 300 && st < 400 ? sl_http_redirect(h) : NULL;
        if (next) {
            if (hop + 1 >= HOPS_MAX) {
                rc = sl_err_set(err, SL_EIO, "%s: the API redirects more than %d times",
                                rq->vendor, HOPS_MAX);
                break;
            }
            /* as Python's requests: 303, and a POST's 301 and 302, go on as GET */
            if (st == 303 || ((st == 301 || st == 302) && strcmp(method, "GET"))) {
                method = "GET";
                with_body = false;
            }
            /* as Python's requests: the key does not follow a redirect to
             * another origin */
            char o1[512], o2[512], sc[16], ho[300];
            if (!sl_url_origin(url, o1, sizeof o1, sc, sizeof sc, ho, sizeof ho) ||
                !sl_url_origin(next, o2, sizeof o2, sc, sizeof sc, ho, sizeof ho) ||
                strcmp(o1, o2))
                strip_auth = true;
            char *n = sl_xstrdup(next);
            free(url);
            url = n;
            continue;
        }
        *status = st;
        if (ctype && sl_http_content_type(h))
            *ctype = sl_xstrdup(sl_http_content_type(h));
        break;
    }
    body->cap = saved_cap;
    sl_http_free(h);
    free(url);
    return rc;
}

char *sl_builtin_vendor_message(const char *body, size_t len)
{
    sl_value *root = len ? json_loadb(body, len, 0, NULL) : NULL;
    const sl_value *v = root;
    const char *msg = NULL;
    static const char *const keys[] = {"detail", "error", "message", "readableMessage", "msg",
                                       NULL};
    for (int depth = 0; depth < 3 && json_is_object(v) && !msg; depth++) {
        const sl_value *next = NULL;
        for (int i = 0; keys[i] && !msg; i++) {
            const sl_value *x = json_object_get(v, keys[i]);
            if (json_is_string(x) && *json_string_value(x))
                msg = json_string_value(x);
            else if (json_is_object(x) && !next)
                next = x;
        }
        v = next;  /* {detail: {error: "…"}} */
    }
    const char *s = msg ? msg : body ? body : "";
    size_t n = msg ? strlen(msg) : body ? len : 0;
    if (n > 300) {  /* cut on a character's first byte */
        n = 300;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_utf8_clean(s, n, &b);
    for (size_t i = 0; i < b.len; i++)
        if (b.data[i] == '\n' || b.data[i] == '\r' || b.data[i] == '\t')
            b.data[i] = ' ';
    char *out = b.data ? sl_buf_detach(&b) : sl_xstrdup("");
    json_decref(root);
    return out;
}

int sl_builtin_status_error(const sl_builtin_cfg *cfg, const char *vendor, long status,
                            const char *body, size_t len, sl_err *err)
{
    char *msg = sl_builtin_vendor_message(body, len);
    const char *what = "";
    char hint[600] = "";
    /* a provider that takes no key (key_from ""): 401 and 403 are the
     * vendor's refusal, not a key to check */
    bool keyed = !cfg || !cfg->key_from || *cfg->key_from;
    bool auth = (status == 401 || status == 403) && keyed;
    if (status == 401 || status == 403) {
        what = status == 401 ? " (Unauthorized)" : " (Forbidden)";
        if (keyed)
            snprintf(hint, sizeof hint, "; check the API key (%s)",
                     cfg && cfg->key_from && *cfg->key_from ? cfg->key_from
                                                            : "the binding's api_key");
    } else if (status == 429) {
        what = " (Too Many Requests)";
        snprintf(hint, sizeof hint, "; the vendor's rate limit or quota: try again later");
    } else if (status >= 500) {
        what = " (a server error)";
        snprintf(hint, sizeof hint, "; the service failed, try again later");
    }
    int rc = sl_err_set(err, auth ? SL_EINVAL : SL_EIO,
                        "%s: the API answered %ld%s%s%s%s", vendor, status, what,
                        *msg ? ": " : "", msg, hint);
    free(msg);
    return rc;
}

int sl_builtin_fetch_json(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                          const sl_builtin_req *rq, sl_value **out, sl_err *err)
{
    *out = NULL;
    long status = 0;
    sl_buf body;
    sl_buf_init(&body, 0);
    int rc = sl_builtin_fetch(ctx, rq, &status, &body, NULL, err);
    if (!rc && (status < 200 || status > 299))
        rc = sl_builtin_status_error(cfg, rq->vendor, status, body.data, body.len, err);
    if (!rc) {
        json_error_t je;
        *out = json_loadb(body.data ? body.data : "", body.len, 0, &je);
        if (!*out)
            rc = sl_err_set(err, SL_EPARSE, "%s: the API answered %ld with a body that is not "
                            "JSON (%s at byte %d)", rq->vendor, status, je.text, je.position);
    }
    sl_buf_release(&body);
    return rc;
}

/* ---- the registry ---- */

static sl_bindings *registry;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void make_registry(void)
{
    registry = sl_bindings_new();
    /* one toolset per id: a binding owns its toolset */
    for (const sl_builtin_provider *p = sl_builtin_providers; p->name; p++) {
        sl_bindings_add_toolset(registry, p->name,
                                sl_builtin_provider_toolset(p, NULL, NULL, NULL, true, "in sluice"),
                                "in sluice");
        sl_bindings_add_toolset(registry, p->plugin_id,
                                sl_builtin_provider_toolset(p, NULL, NULL, NULL, true,
                                                            "in sluice"),
                                "in sluice");
    }
}

const sl_bindings *sl_builtins(void)
{
    pthread_once(&registry_once, make_registry);
    return registry;
}

/* ---- arguments ---- */

const char *sl_builtin_arg_str(const sl_value *args, const char *name, const char *def,
                               char **tmp)
{
    *tmp = NULL;
    const sl_value *v = json_object_get(args, name);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        return *tmp = sl_xasprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == sl_floor(d) && fabs(d) < 1e15)
            return *tmp = sl_xasprintf("%.1f", d);
        return *tmp = sl_xasprintf("%.17g", d);
    }
    if (json_is_boolean(v))
        return json_is_true(v) ? "True" : "False";
    return def;
}

bool sl_builtin_arg_bool(const sl_value *args, const char *name, bool def)
{
    const sl_value *v = json_object_get(args, name);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes"))
            return true;
        if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no") || !*s)
            return false;
    }
    return def;
}

int sl_builtin_arg_num(const sl_value *args, const char *name, double *out)
{
    const sl_value *v = json_object_get(args, name);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        while (*s == ' ')
            s++;
        if (!*s)
            return 0;
        double d = strtod(s, &end);
        while (*end == ' ')
            end++;
        if (end != s && !*end && isfinite(d)) {
            *out = d;
            return 1;
        }
    }
    return -1;
}

int sl_builtin_text(sl_tool_result *res, const sl_tool_ctx *ctx, const char *s, size_t n,
                    sl_err *err)
{
    if (sl_tool_result_charge(res, ctx, n, err))
        return -1;
    sl_buf_add(&res->text, s, n);
    return 0;
}

char *sl_builtin_url(const char *base, const char *path)
{
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    return sl_xasprintf("%.*s%s", (int)n, base, path);
}

void sl_builtin_pystr(const sl_value *v, sl_buf *out)
{
    if (json_is_string(v))
        sl_buf_add(out, json_string_value(v), json_string_length(v));
    else if (json_is_boolean(v))
        sl_buf_adds(out, json_is_true(v) ? "True" : "False");
    else if (!v || json_is_null(v))
        sl_buf_adds(out, "None");
    else
        sl_builtin_py_json(v, false, out);
}

int sl_builtin_json_out(sl_tool_result *res, const sl_tool_ctx *ctx, sl_value *v, sl_err *err)
{
    if (sl_tool_result_charge(res, ctx, sl_value_size(v, sl_tool_max_output(ctx)), err)) {
        json_decref(v);
        return -1;
    }
    json_array_append_new(res->json, v);
    return 0;
}

void sl_builtin_cut_chars(sl_buf *b, size_t chars)
{
    size_t i = 0;
    for (size_t c = 0; i < b->len; i++) {
        if (((unsigned char)b->data[i] & 0xC0) != 0x80 && c++ == chars)
            break;
    }
    if (i < b->len) {
        b->len = i;
        b->data[i] = '\0';
    }
}

/* ---- HTML text ---- */

/* The named references the built-ins' readers decode (HTML's common ones;
 * any other stays as written). */
static const struct {
    const char *name;
    uint32_t cp;
} html_entities[] = {
    {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}, {"nbsp", 0xA0},
    {"copy", 0xA9}, {"reg", 0xAE}, {"trade", 0x2122}, {"hellip", 0x2026}, {"mdash", 0x2014},
    {"ndash", 0x2013}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
    {"rdquo", 0x201D}, {"bull", 0x2022}, {"middot", 0xB7}, {"laquo", 0xAB}, {"raquo", 0xBB},
    {"euro", 0x20AC}, {"pound", 0xA3}, {"yen", 0xA5}, {"cent", 0xA2}, {"sect", 0xA7},
    {"deg", 0xB0}, {"plusmn", 0xB1}, {"times", 0xD7}, {"divide", 0xF7}, {"frac12", 0xBD},
    {"frac14", 0xBC}, {"frac34", 0xBE}, {"iexcl", 0xA1}, {"iquest", 0xBF}, {"shy", 0xAD},
    {"ensp", 0x2002}, {"emsp", 0x2003}, {"thinsp", 0x2009}, {"zwnj", 0x200C}, {"zwj", 0x200D},
    {"eacute", 0xE9}, {"egrave", 0xE8}, {"aacute", 0xE1}, {"agrave", 0xE0}, {"ouml", 0xF6},
    {"uuml", 0xFC}, {"auml", 0xE4}, {"szlig", 0xDF}, {"ccedil", 0xE7}, {"ntilde", 0xF1},
    {"Ouml", 0xD6}, {"Uuml", 0xDC}, {"Auml", 0xC4}, {"Eacute", 0xC9}, {"larr", 0x2190},
    {"rarr", 0x2192},
};

void sl_builtin_html_decode(const char *s, size_t n, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            sl_buf_addc(b, s[i]);
            continue;
        }
        size_t j = i + 1;
        uint32_t cp = 0;
        bool ok = false;
        if (j < n && s[j] == '#') {
            j++;
            bool hex = j < n && (s[j] == 'x' || s[j] == 'X');
            j += hex;
            size_t d0 = j;
            while (j < n && j - d0 < 8 &&
                   (hex ? sl_hex_digit((unsigned char)s[j]) >= 0 : (s[j] >= '0' && s[j] <= '9'))) {
                cp = cp * (hex ? 16 : 10) +
                     (uint32_t)(hex ? sl_hex_digit((unsigned char)s[j]) : s[j] - '0');
                j++;
            }
            ok = j > d0;
        } else {
            size_t k0 = j;
            while (j < n && j - k0 < 10 &&
                   ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
                    (s[j] >= '0' && s[j] <= '9')))
                j++;
            for (size_t e = 0; e < sizeof html_entities / sizeof *html_entities && !ok; e++)
                if (strlen(html_entities[e].name) == j - k0 &&
                    !memcmp(html_entities[e].name, s + k0, j - k0)) {
                    cp = html_entities[e].cp;
                    ok = true;
                }
        }
        if (!ok) {
            sl_buf_addc(b, '&');
            continue;
        }
        sl_buf_add_utf8(b, cp);
        i = j < n && s[j] == ';' ? j : j - 1;
    }
}

const char *sl_builtin_html_tag(const char *p, const char *end, sl_html_tag *tag)
{
    memset(tag, 0, sizeof *tag);
    size_t left = (size_t)(end - p);
    if (left >= 4 && !memcmp(p, "<!--", 4)) {
        const char *e = memmem(p + 4, left - 4, "-->", 3);
        return e ? e + 3 : end;
    }
    if (left >= 2 && (p[1] == '!' || p[1] == '?')) {
        const char *gt = memchr(p, '>', left);
        return gt ? gt + 1 : end;
    }
    tag->closing = left >= 2 && p[1] == '/';
    const char *nm = p + 1 + tag->closing, *ne = nm;
    while (ne < end && ((*ne >= 'a' && *ne <= 'z') || (*ne >= 'A' && *ne <= 'Z') ||
                        (*ne >= '0' && *ne <= '9')))
        ne++;
    if (ne == nm)
        return NULL;
    const char *q = ne;
    char quote = 0;
    while (q < end && (quote || *q != '>')) {
        if (quote && *q == quote)
            quote = 0;
        else if (!quote && (*q == '"' || *q == '\''))
            quote = *q;
        q++;
    }
    tag->name = nm;
    tag->name_n = (size_t)(ne - nm);
    tag->attrs = ne;
    tag->attrs_n = (size_t)(q - ne);
    tag->self_closing = tag->attrs_n && ne[tag->attrs_n - 1] == '/';
    return q < end ? q + 1 : end;
}

char *sl_builtin_html_attr(const char *a, size_t n, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < n;) {
        while (i < n && (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\r' ||
                         a[i] == '/'))
            i++;
        size_t k0 = i;
        while (i < n && a[i] != '=' && a[i] != ' ' && a[i] != '\t' && a[i] != '\n' &&
               a[i] != '\r' && a[i] != '/')
            i++;
        size_t kl = i - k0;
        while (i < n && (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\r'))
            i++;
        const char *v = NULL;
        size_t vl = 0;
        if (i < n && a[i] == '=') {
            i++;
            while (i < n && (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\r'))
                i++;
            if (i < n && (a[i] == '"' || a[i] == '\'')) {
                char q = a[i++];
                v = a + i;
                while (i < n && a[i] != q)
                    i++;
                vl = (size_t)(a + i - v);
                i++;
            } else {
                v = a + i;
                while (i < n && a[i] != ' ' && a[i] != '\t' && a[i] != '\n' && a[i] != '\r')
                    i++;
                vl = (size_t)(a + i - v);
            }
        }
        if (kl == nl && !strncasecmp(a + k0, name, nl)) {
            sl_buf b;
            sl_buf_init(&b, 0);
            sl_builtin_html_decode(v ? v : "", vl, &b);
            if (!b.data)
                sl_buf_adds(&b, "");
            return sl_buf_detach(&b);
        }
        if (kl == 0 && i == k0)
            i++;
    }
    return NULL;
}
