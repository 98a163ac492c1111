/*
 * config — see config.h.
 */
#include "engine/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/secret.h"
#include "dsl/yaml.h"
#include "tools/binding.h"

struct sl_config {
    sl_llm_endpoint *eps;
    size_t n;
    sl_value *aliases;   /* object: DSL provider -> endpoint name */
    sl_value *models;    /* object: "provider/model" | "model" -> {provider, name} */
    sl_value *prices;    /* object: model -> {input, output, currency} */
    char *force_model;   /* SLUICE_LLM_MODEL */
    sl_value *sandbox;   /* the file's `sandbox` mapping, or NULL */
    char *store;         /* the file's `store`: where sluice keeps its data, or NULL */
    sl_value *retry;     /* retry_on_worker_loss: true, or an array of app ids (NULL: off) */
    char *files_dir;     /* files_dir: where apps' bundle files are, on a shared store */
    sl_bindings *tools;  /* the file's `tools` mapping (tools/binding.h) */
    sl_kb_binding *kbs;  /* the file's knowledge.datasets */
    size_t nkbs;
    struct sl_kb *kb;    /* the caller's knowledge bases (sl_config_set_kb) */
    bool offline;        /* a tape is replayed: see sl_config_set_offline */
    bool lenient;        /* unconfigured is a warning: see sl_config_set_lenient */
};

/* Providers sluice knows by their environment variables. */
static const struct {
    const char *name, *key_env, *base_env, *base;
    sl_llm_style style;
    bool keyless;        /* local servers: configured by their base URL alone */
} known[] = {
    {"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1", SL_LLM_OPENAI, false},
    {"anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com",
     SL_LLM_ANTHROPIC, false},
    {"deepseek", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com/v1",
     SL_LLM_OPENAI, false},
    {"openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1",
     SL_LLM_OPENAI, false},
    {"ollama", NULL, "OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1", SL_LLM_OPENAI, true},
    {"zhipuai", "ZHIPUAI_API_KEY", "ZHIPUAI_BASE_URL", "https://open.bigmodel.cn/api/paas/v4",
     SL_LLM_OPENAI, false},
    {"siliconflow", "SILICONFLOW_API_KEY", "SILICONFLOW_BASE_URL", "https://api.siliconflow.cn/v1",
     SL_LLM_OPENAI, false},
    {"tongyi", "DASHSCOPE_API_KEY", "DASHSCOPE_BASE_URL",
     "https://dashscope.aliyuncs.com/compatible-mode/v1", SL_LLM_OPENAI, false},
    {"moonshot", "MOONSHOT_API_KEY", "MOONSHOT_BASE_URL", "https://api.moonshot.cn/v1",
     SL_LLM_OPENAI, false},
};

/* Replaying a tape needs no endpoint: unconfigured providers resolve to this. */
static const sl_llm_endpoint replay_endpoint = {.name = "replay", .base_url = "replay:"};

static const char *env(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    return v && *v ? v : NULL;
}

static sl_llm_endpoint *add_endpoint(sl_config *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->eps[i].name, name))
            return &c->eps[i];
    c->eps = sl_xrealloc(c->eps, sizeof *c->eps * (c->n + 1));
    sl_llm_endpoint *e = &c->eps[c->n++];
    memset(e, 0, sizeof *e);
    e->name = sl_xstrdup(name);
    e->connect_timeout_s = 10;
    e->read_timeout_s = 600;
    e->max_retries = 3;
    return e;
}

static void set_str(char **slot, const char *v)
{
    free(*slot);
    *slot = v ? sl_xstrdup(v) : NULL;
}

/* API keys are secrets: registered while the configuration holds them, so
 * no error or event can show one (core/secret.h). */
static void set_key(char **slot, const char *v)
{
    sl_secret_free(*slot);
    *slot = v ? sl_xstrdup(v) : NULL;
    sl_secret_add(v);
}

void sl_config_free(sl_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->eps[i].name);
        free(c->eps[i].base_url);
        set_key(&c->eps[i].api_key, NULL);
    }
    free(c->eps);
    json_decref(c->aliases);
    json_decref(c->models);
    json_decref(c->prices);
    json_decref(c->sandbox);
    free(c->store);
    json_decref(c->retry);
    free(c->files_dir);
    sl_bindings_free(c->tools);
    for (size_t i = 0; i < c->nkbs; i++) {
        sl_kb_binding *b = &c->kbs[i];
        free((char *)b->dataset_id);
        free((char *)b->kb);
        free((char *)b->endpoint);
        char *key = (char *)b->api_key;
        set_key(&key, NULL);
        free((char *)b->knowledge_id);
        free((char *)b->where);
    }
    free(c->kbs);
    free(c->force_model);
    free(c);
}

static void from_env(sl_config *c)
{
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        const char *key = env(known[i].key_env), *base = env(known[i].base_env);
        /* configured by its key, or a local server by its address */
        if (!key && !(known[i].keyless && base))
            continue;
        sl_llm_endpoint *e = add_endpoint(c, known[i].name);
        e->style = known[i].style;
        set_str(&e->base_url, base ? base : known[i].base);
        set_key(&e->api_key, key);
    }
    const char *base = env("SLUICE_LLM_BASE_URL");
    if (base) {
        sl_llm_endpoint *e = add_endpoint(c, "default");
        const char *style = env("SLUICE_LLM_STYLE");
        e->style = style && !strcasecmp(style, "anthropic") ? SL_LLM_ANTHROPIC : SL_LLM_OPENAI;
        set_str(&e->base_url, base);
        set_key(&e->api_key, env("SLUICE_LLM_API_KEY"));
    }
    set_str(&c->force_model, env("SLUICE_LLM_MODEL"));
}

static int bad(sl_err *err, const char *path, const sl_yaml_doc *d, const sl_value *obj,
               const char *key, const char *what)
{
    sl_mark m = obj ? sl_yaml_key_mark(d, obj, key) : (sl_mark){0, 0};
    return sl_err_set(err, SL_EINVAL, "%s:%d:%d: llm.%s: %s", path, m.line, m.col, key, what);
}

/* ---- knowledge.datasets ---- */

#define KB_BINDINGS_MAX 10000
#define KB_ID_MAX 255

static int kb_bad(sl_err *err, const char *path, const sl_yaml_doc *d, const sl_value *obj,
                  const char *key, const char *field, const char *what)
{
    sl_mark m = obj ? sl_yaml_key_mark(d, obj, key) : (sl_mark){0, 0};
    return sl_err_set(err, SL_EINVAL, "%s:%d:%d: knowledge.datasets.%s: %s", path, m.line,
                      m.col, field, what);
}

/* {external: {endpoint, api_key_env | api_key, knowledge_id, top_k,
 * score_threshold, allow_private, timeout}} into b. */
static int kb_external(sl_kb_binding *b, const char *path, const sl_yaml_doc *d,
                       const sl_value *map, const char *id, sl_err *err)
{
    const sl_value *ex = json_object_get(map, "external");
    if (json_object_size(map) != 1 || !json_is_object(ex))
        return kb_bad(err, path, d, json_object_get(map, "external") ? map : NULL, "external",
                      id, "a dataset binds to a knowledge base's name (text) or to "
                      "{external: {endpoint, api_key_env, knowledge_id}}");
    static const char *const keys[] = {"endpoint", "api_key_env", "api_key", "knowledge_id",
                                        "top_k", "score_threshold", "allow_private", "timeout",
                                        NULL};
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)ex, k, v) {
        bool ok = false;
        for (const char *const *q = keys; *q && !ok; q++)
            ok = !strcmp(*q, k);
        if (!ok)
            return kb_bad(err, path, d, ex, k, id, "unknown setting of an external knowledge "
                          "base; the settings are endpoint, api_key_env (or api_key), "
                          "knowledge_id, top_k, score_threshold, allow_private and timeout");
    }
    const char *ep = json_string_value(json_object_get(ex, "endpoint"));
    if (!ep || (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8)) || strlen(ep) > 2048)
        return kb_bad(err, path, d, ex, "endpoint", id, "external.endpoint must be the "
                      "service's http:// or https:// URL (\"/retrieval\" is added to it)");
    const char *kid = json_string_value(json_object_get(ex, "knowledge_id"));
    if (!kid || !*kid || strlen(kid) > 1024)
        return kb_bad(err, path, d, ex, "knowledge_id", id, "external.knowledge_id must be the "
                      "service's id of the knowledge base (text)");
    const char *kenv = json_string_value(json_object_get(ex, "api_key_env"));
    const sl_value *kv = json_object_get(ex, "api_key");
    if ((json_object_get(ex, "api_key_env") && !kenv) || (kv && !json_is_string(kv)))
        return kb_bad(err, path, d, ex, kenv ? "api_key" : "api_key_env", id,
                      "external.api_key_env names an environment variable (text)");
    if (kenv && !env(kenv))
        return kb_bad(err, path, d, ex, "api_key_env", id,
                      "external.api_key_env names an environment variable that is not set");
    const sl_value *tk = json_object_get(ex, "top_k");
    if (tk && (!json_is_integer(tk) || json_integer_value(tk) < 1 ||
               json_integer_value(tk) > 100))
        return kb_bad(err, path, d, ex, "top_k", id, "external.top_k is a whole number from 1 "
                      "to 100");
    const sl_value *th = json_object_get(ex, "score_threshold");
    if (th && (!sl_value_is_number(th) || sl_value_number(th) < 0 || sl_value_number(th) > 1))
        return kb_bad(err, path, d, ex, "score_threshold", id, "external.score_threshold is a "
                      "number from 0 to 1");
    const sl_value *ap = json_object_get(ex, "allow_private");
    if (ap && !json_is_boolean(ap))
        return kb_bad(err, path, d, ex, "allow_private", id, "external.allow_private is true "
                      "or false");
    const sl_value *to = json_object_get(ex, "timeout");
    if (to && (!sl_value_is_number(to) || !(sl_value_number(to) > 0) ||
               sl_value_number(to) > 3600))
        return kb_bad(err, path, d, ex, "timeout", id, "external.timeout is seconds, more than 0 "
                      "and at most 3600");
    b->endpoint = sl_xstrdup(ep);
    b->knowledge_id = sl_xstrdup(kid);
    char *key = NULL;
    set_key(&key, kenv ? env(kenv) : json_string_value(kv));
    b->api_key = key;
    b->top_k = tk ? (int)json_integer_value(tk) : 4;
    b->threshold_enabled = th != NULL;
    b->score_threshold = th ? sl_value_number(th) : 0;
    b->allow_private = json_is_true(ap);
    b->timeout_s = to ? sl_value_number(to) : 60;
    return 0;
}

static int kb_parse(sl_config *c, const char *path, const sl_yaml_doc *d, const sl_value *kn,
                    sl_err *err)
{
    if (!kn || json_is_null(kn))
        return 0;
    const sl_value *ds = json_object_get(kn, "datasets");
    if (!json_is_object(kn) || json_object_size(kn) != (ds ? 1u : 0u) ||
        (ds && !json_is_null(ds) && !json_is_object(ds)))
        return sl_err_set(err, SL_EINVAL, "%s: `knowledge` must be a mapping {datasets: "
                          "{DIFY_DATASET_ID: KB_NAME, …}}", path);
    if (json_object_size(ds) > KB_BINDINGS_MAX)
        return sl_err_set(err, SL_EINVAL, "%s: knowledge.datasets has %zu lines, more than the "
                          "%d sluice reads", path, json_object_size(ds), KB_BINDINGS_MAX);
    const char *id;
    const sl_value *v;
    json_object_foreach((sl_value *)ds, id, v) {
        if (!*id || strlen(id) > KB_ID_MAX)
            return kb_bad(err, path, d, ds, id, "?", "a dataset id is 1 to 255 bytes");
        sl_kb_binding b = {0};
        if (json_is_string(v)) {
            if (!json_string_length(v) || json_string_length(v) > KB_ID_MAX)
                return kb_bad(err, path, d, ds, id, id, "the knowledge base's name or id is 1 "
                              "to 255 bytes");
            b.kb = sl_xstrdup(json_string_value(v));
        } else if (json_is_object(v)) {
            if (kb_external(&b, path, d, v, id, err))
                return -1;
        } else {
            return kb_bad(err, path, d, ds, id, id, "a dataset binds to a knowledge base's "
                          "name (text) or to {external: {endpoint, api_key_env, knowledge_id}}");
        }
        sl_mark m = sl_yaml_key_mark(d, ds, id);
        b.dataset_id = sl_xstrdup(id);
        b.where = sl_xasprintf("%s:%d:%d", path, m.line, m.col);
        /* a later file's line replaces an earlier one's */
        size_t at = c->nkbs;
        for (size_t i = 0; i < c->nkbs; i++)
            if (!strcmp(c->kbs[i].dataset_id, id))
                at = i;
        if (at == c->nkbs) {
            c->kbs = sl_xrealloc(c->kbs, sizeof *c->kbs * (c->nkbs + 1));
            c->nkbs++;
        } else {
            sl_kb_binding *o = &c->kbs[at];
            free((char *)o->dataset_id);
            free((char *)o->kb);
            free((char *)o->endpoint);
            char *key = (char *)o->api_key;
            set_key(&key, NULL);
            free((char *)o->knowledge_id);
            free((char *)o->where);
        }
        c->kbs[at] = b;
    }
    return 0;
}

static int from_file(sl_config *c, const char *path, sl_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sl_err_set(err, SL_EIO, "config %s: cannot open: %s", path, strerror(errno));
    sl_buf b;
    sl_buf_init(&b, 4u << 20);
    sl_buf_add_file(&b, f);
    fclose(f);
    if (b.toobig) {
        sl_buf_release(&b);
        return sl_err_set(err, SL_ELIMIT, "config %s: larger than 4 MiB", path);
    }
    sl_yaml_doc d;
    if (sl_yaml_parse(b.data ? b.data : "", b.len, path, &d, err)) {
        sl_buf_release(&b);
        return -1;
    }
    sl_buf_release(&b);
    int rc = 0;
    const sl_value *sbx = json_object_get(d.root, "sandbox");
    if (sbx && !json_is_null(sbx)) {
        if (!json_is_object(sbx)) {
            rc = sl_err_set(err, SL_EINVAL, "%s: `sandbox` must be a mapping {provider, "
                            "network, ssh: {…}, e2b: {…}}", path);
            goto out;
        }
        static const char *const keys[] = {"provider", "network", "memory", "disk",
                                            "cpu_cores", "max_procs", "command_timeout",
                                            "local", "ssh", "e2b", NULL};
        const char *sk;
        const sl_value *sv;
        json_object_foreach((sl_value *)sbx, sk, sv) {
            bool ok = false;
            for (const char *const *q = keys; *q && !ok; q++)
                ok = !strcmp(*q, sk);
            if (!ok) {
                sl_mark m = sl_yaml_key_mark(&d, sbx, sk);
                rc = sl_err_set(err, SL_EINVAL, "%s:%d:%d: sandbox.%s: unknown setting; the "
                                "settings are provider, network, memory, disk, cpu_cores, "
                                "max_procs, command_timeout, local, ssh and e2b",
                                path, m.line, m.col, sk);
                goto out;
            }
        }
        json_decref(c->sandbox);
        c->sandbox = json_deep_copy(sbx);
    }
    const sl_value *store = json_object_get(d.root, "store");
    if (store && !json_is_null(store)) {
        if (!json_is_string(store) || !*json_string_value(store)) {
            sl_mark m = sl_yaml_key_mark(&d, d.root, "store");
            rc = sl_err_set(err, SL_EINVAL, "%s:%d:%d: `store` is where sluice keeps its data: "
                            "a folder, sqlite:FOLDER or postgres://…", path, m.line, m.col);
            goto out;
        }
        free(c->store);
        c->store = sl_xstrdup(json_string_value(store));
    }
    const sl_value *fdir = json_object_get(d.root, "files_dir");
    if (fdir && !json_is_null(fdir)) {
        if (!json_is_string(fdir) || json_string_value(fdir)[0] != '/') {
            sl_mark m = sl_yaml_key_mark(&d, d.root, "files_dir");
            rc = sl_err_set(err, SL_EINVAL, "%s:%d:%d: `files_dir` is the absolute path of a "
                            "folder every machine mounts, for apps' bundle files on a shared "
                            "store (PostgreSQL)", path, m.line, m.col);
            goto out;
        }
        free(c->files_dir);
        c->files_dir = sl_xstrdup(json_string_value(fdir));
    }
    const sl_value *retry = json_object_get(d.root, "retry_on_worker_loss");
    if (retry && !json_is_null(retry)) {
        bool ok = json_is_boolean(retry) || json_is_array(retry);
        size_t i;
        const sl_value *id;
        json_array_foreach(retry, i, id)
            ok = ok && json_is_string(id) && *json_string_value(id);
        if (!ok) {
            sl_mark m = sl_yaml_key_mark(&d, d.root, "retry_on_worker_loss");
            rc = sl_err_set(err, SL_EINVAL, "%s:%d:%d: `retry_on_worker_loss` is true (every "
                            "app), false, or a list of app ids: their runs are run again from "
                            "the start when the process running them is lost",
                            path, m.line, m.col);
            goto out;
        }
        json_decref(c->retry);
        c->retry = json_is_true(retry) || json_is_array(retry) ? json_deep_copy(retry) : NULL;
    }
    if (sl_bindings_parse(c->tools, &d, json_object_get(d.root, "tools"), path, true, err)) {
        rc = -1;
        goto out;
    }
    if (kb_parse(c, path, &d, json_object_get(d.root, "knowledge"), err)) {
        rc = -1;
        goto out;
    }
    const sl_value *llm = json_object_get(d.root, "llm");
    if (!llm) {
        sl_yaml_doc_release(&d);
        return 0;
    }
    if (!json_is_object(llm)) {
        rc = sl_err_set(err, SL_EINVAL, "%s: `llm` must be a mapping", path);
        goto out;
    }
    const sl_value *provs = json_object_get(llm, "providers");
    const char *name;
    const sl_value *p;
    json_object_foreach((sl_value *)provs, name, p) {
        if (!json_is_object(p)) {
            rc = bad(err, path, &d, provs, name, "a provider is a mapping {style, base_url, "
                                                 "api_key_env | api_key}");
            goto out;
        }
        const char *style = json_string_value(json_object_get(p, "style"));
        const char *base = json_string_value(json_object_get(p, "base_url"));
        if (style && strcmp(style, "openai") && strcmp(style, "anthropic")) {
            rc = bad(err, path, &d, p, "style", "style is openai or anthropic");
            goto out;
        }
        if (!base) {
            rc = bad(err, path, &d, provs, name, "the provider needs a base_url");
            goto out;
        }
        sl_llm_endpoint *e = add_endpoint(c, name);
        e->style = style && !strcmp(style, "anthropic") ? SL_LLM_ANTHROPIC : SL_LLM_OPENAI;
        set_str(&e->base_url, base);
        const char *kenv = json_string_value(json_object_get(p, "api_key_env"));
        const char *key = json_string_value(json_object_get(p, "api_key"));
        set_key(&e->api_key, kenv ? env(kenv) : key);
        if (kenv && !env(kenv)) {
            rc = sl_err_set(err, SL_EINVAL,
                            "%s: llm.providers.%s.api_key_env names %s, which is not set", path,
                            name, kenv);
            goto out;
        }
        const sl_value *v;
        if (sl_value_is_number(v = json_object_get(p, "connect_timeout")))
            e->connect_timeout_s = sl_value_number(v);
        if (sl_value_is_number(v = json_object_get(p, "read_timeout")))
            e->read_timeout_s = sl_value_number(v);
        if (json_is_integer(v = json_object_get(p, "retries")))
            e->max_retries = (int)json_integer_value(v);
    }
    const char *sections[] = {"aliases", "models", "prices"};
    sl_value **slots[] = {&c->aliases, &c->models, &c->prices};
    for (int i = 0; i < 3; i++) {
        const sl_value *s = json_object_get(llm, sections[i]);
        if (!s)
            continue;
        if (!json_is_object(s)) {
            rc = bad(err, path, &d, llm, sections[i], "must be a mapping");
            goto out;
        }
        json_object_update(*slots[i], (sl_value *)s);
    }
out:
    sl_yaml_doc_release(&d);
    return rc;
}

static sl_config *config_new(void)
{
    sl_config *c = sl_xcalloc(1, sizeof *c);
    c->aliases = json_object();
    c->models = json_object();
    c->prices = json_object();
    c->tools = sl_bindings_new();
    from_env(c);
    return c;
}

int sl_config_load(const char *path, sl_config **out, sl_err *err)
{
    *out = NULL;
    sl_config *c = config_new();
    if (!path)
        path = env("SLUICE_CONFIG");
    struct stat st;
    if (!path && !stat("sluice.yml", &st))
        path = "sluice.yml";
    if (path && from_file(c, path, err)) {
        sl_config_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

sl_config *sl_config_env(void)
{
    return config_new();
}

sl_config *sl_config_default(void)
{
    sl_config *c;
    sl_err err = {0};
    if (sl_config_load(NULL, &c, &err)) {
        /* a broken ./sluice.yml: environment only; `sluice run` reports it */
        sl_err_clear(&err);
        c = config_new();
    }
    return c;
}

void sl_config_set_offline(sl_config *c, bool on)
{
    c->offline = on;
}

bool sl_config_offline(const sl_config *c)
{
    return c && c->offline;
}

void sl_config_set_lenient(sl_config *c, bool on)
{
    c->lenient = on;
}

bool sl_config_lenient(const sl_config *c)
{
    return c && c->lenient;
}

/* What a NULL configuration reads as: nothing configured. */
static const sl_config nothing;

/* "langgenius/openai/openai" -> "openai" */
static const char *short_name(const char *provider)
{
    const char *slash = strrchr(provider, '/');
    return slash ? slash + 1 : provider;
}

static const sl_llm_endpoint *find(const sl_config *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcasecmp(c->eps[i].name, name))
            return &c->eps[i];
    return NULL;
}

const sl_llm_endpoint *sl_config_resolve(const sl_config *c, const char *provider,
                                         const char *model, const char **model_out,
                                         sl_err *err)
{
    const char *p = short_name(provider ? provider : "");
    *model_out = model;
    if (!c)
        c = &nothing;
    /* a model override may move the model to another provider */
    char key[512];
    snprintf(key, sizeof key, "%s/%s", p, model ? model : "");
    const sl_value *ov = json_object_get(c->models, key);
    if (!ov)
        ov = json_object_get(c->models, model ? model : "");
    const char *ov_provider = json_string_value(json_object_get(ov, "provider"));
    const char *ov_name = json_string_value(json_object_get(ov, "name"));
    if (ov_name)
        *model_out = ov_name;
    else if (c->force_model)
        *model_out = c->force_model;
    const char *target = ov_provider ? ov_provider : p;
    const char *alias = json_string_value(json_object_get(c->aliases, target));
    if (!alias)
        alias = json_string_value(json_object_get(c->aliases, provider ? provider : ""));
    if (alias)
        target = alias;
    const sl_llm_endpoint *e = find(c, target);
    if (!e)
        e = find(c, "default");
    if (!e && c->offline)
        e = &replay_endpoint;
    if (e)
        return e;
    const char *hint_env = NULL;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcasecmp(known[i].name, target))
            hint_env = known[i].key_env ? known[i].key_env : known[i].base_env;
    if (hint_env)
        sl_err_set(err, SL_ENOTFOUND,
                   "model provider '%s' is not configured: set %s, or add llm.providers.%s to "
                   "sluice.yml (or SLUICE_LLM_BASE_URL for one endpoint that serves every model)",
                   target, hint_env, target);
    else
        sl_err_set(err, SL_ENOTFOUND,
                   "model provider '%s' is not configured: add llm.providers.%s (style, "
                   "base_url, api_key_env) to sluice.yml, map it to a configured provider with "
                   "llm.aliases.%s, or set SLUICE_LLM_BASE_URL for one endpoint that serves "
                   "every model",
                   target, target, target);
    return NULL;
}

const sl_bindings *sl_config_tools(const sl_config *c)
{
    return c ? c->tools : NULL;
}

struct sl_bindings *sl_config_tools_edit(sl_config *c)
{
    return c->tools;
}

const sl_value *sl_config_sandbox(const sl_config *c)
{
    return c ? c->sandbox : NULL;
}

const char *sl_config_store(const sl_config *c)
{
    return c ? c->store : NULL;
}

const char *sl_config_files_dir(const sl_config *c)
{
    return c ? c->files_dir : NULL;
}

bool sl_config_retry_on_worker_loss(const sl_config *c, const char *app_id)
{
    if (!c || !c->retry)
        return false;
    if (json_is_true(c->retry))
        return true;
    size_t i;
    const sl_value *id;
    json_array_foreach(c->retry, i, id)
        if (app_id && !strcmp(json_string_value(id), app_id))
            return true;
    return false;
}

bool sl_config_price(const sl_config *c, const char *model, double *input, double *output,
                     const char **currency)
{
    if (!c)
        return false;
    const sl_value *p = json_object_get(c->prices, model ? model : "");
    if (!json_is_object(p))
        return false;
    *input = sl_value_number(json_object_get(p, "input"));
    *output = sl_value_number(json_object_get(p, "output"));
    const char *cur = json_string_value(json_object_get(p, "currency"));
    *currency = cur ? cur : "USD";
    return true;
}

const sl_kb_binding *sl_config_kb_binding(const sl_config *c, const char *dataset_id)
{
    for (size_t i = 0; c && dataset_id && i < c->nkbs; i++)
        if (!strcmp(c->kbs[i].dataset_id, dataset_id))
            return &c->kbs[i];
    return NULL;
}

void sl_config_set_kb(sl_config *c, struct sl_kb *kb)
{
    c->kb = kb;
}

struct sl_kb *sl_config_kb(const sl_config *c)
{
    return c ? c->kb : NULL;
}
