/*
 * The settings (engine/config): loading sluice.yml over the environment,
 * provider resolution, prices, the sandbox mapping, offline replay, what a
 * NULL configuration means, and that a configuration belongs to whoever
 * loaded it: two runs in one process, each lent its own, behave each by
 * its own (a model's price, whether its provider is configured).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/secret.h"
#include "engine/config.h"
#include "engine/run.h"
#include "nodes/registry.h"
#include "tap.h"
#include "util.h"

/* A config file with this text (heap path; the caller unlinks it). */
static char *config_file(const char *yml)
{
    char *path = sl_xstrdup("/tmp/sluice-config-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, yml, strlen(yml)) != (ssize_t)strlen(yml)) {
        perror("config test file");
        abort();
    }
    close(fd);
    return path;
}

static sl_config *load(const char *yml)
{
    char *path = config_file(yml);
    sl_config *c = NULL;
    sl_err err = {0};
    if (sl_config_load(path, &c, &err))
        fprintf(stderr, "config: %s\n", err.msg);
    sl_err_clear(&err);
    unlink(path);
    free(path);
    return c;
}

static void resolve(void)
{
    unsetenv("SLUICE_LLM_BASE_URL");
    unsetenv("OPENAI_API_KEY");
    unsetenv("ANTHROPIC_API_KEY");
    setenv("DEEPSEEK_API_KEY", "dk", 1);
    sl_config *c = load("llm:\n"
                        "  providers:\n"
                        "    local: {style: openai, base_url: http://127.0.0.1:9/v1, api_key: k1}\n"
                        "    claude: {style: anthropic, base_url: http://127.0.0.1:9}\n"
                        "  aliases: {openai_api_compatible: local, bedrock: claude}\n"
                        "  models:\n"
                        "    gpt-4o: {provider: local, name: llama3.1}\n"
                        "    deepseek/deepseek-chat: {name: ds-local}\n"
                        "  prices:\n"
                        "    llama3.1: {input: 1.5, output: 2, currency: EUR}\n");
    CHECK(c != NULL, "a config file loads");
    const char *model;
    sl_err why = {0};
    const sl_llm_endpoint *e = sl_config_resolve(c, "langgenius/openai/openai", "gpt-4o", &model,
                                                 &why);
    CHECK(e && !strcmp(e->name, "local") && !strcmp(model, "llama3.1"),
          "a model override moves gpt-4o to a local model");
    e = sl_config_resolve(c, "openai_api_compatible", "x", &model, &why);
    CHECK(e && !strcmp(e->name, "local"), "an alias maps a DSL provider to a configured one");
    e = sl_config_resolve(c, "bedrock", "anthropic.claude", &model, &why);
    CHECK(e && e->style == SL_LLM_ANTHROPIC, "bedrock aliased to an Anthropic-style endpoint");
    e = sl_config_resolve(c, "deepseek", "deepseek-chat", &model, &why);
    CHECK(e && !strcmp(e->name, "deepseek") && !strcmp(model, "ds-local") &&
              !strcmp(e->api_key, "dk") && strstr(e->base_url, "deepseek"),
          "an environment key configures a known provider; a provider/model override renames");
    e = sl_config_resolve(c, "openai", "gpt-4o-mini", &model, &why);
    CHECK(!e && why.code == SL_ENOTFOUND && strstr(why.msg, "OPENAI_API_KEY") && strstr(why.msg, "llm.providers.openai"),
          "an unconfigured provider says which setting to add: %s", why.msg);
    e = sl_config_resolve(c, "zzz", "m", &model, &why);
    CHECK(!e && strstr(why.msg, "llm.providers.zzz") && strstr(why.msg, "SLUICE_LLM_BASE_URL"),
          "an unknown provider too: %s", why.msg);
    double in, out;
    const char *cur;
    CHECK(sl_config_price(c, "llama3.1", &in, &out, &cur) && in == 1.5 && out == 2 &&
              !strcmp(cur, "EUR"),
          "prices per million tokens");
    CHECK(!sl_config_sandbox(c), "a file without `sandbox` has no sandbox mapping");
    sl_config_free(c);

    char *path = config_file("llm:\n  providers:\n    x: {style: grpc, base_url: u}\n");
    sl_err err = {0};
    c = (sl_config *)1;
    CHECK(sl_config_load(path, &c, &err) < 0 && !c && strstr(err.msg, "style"),
          "a bad style is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    /* the commands that judge a workflow without running it fall back to
     * the environment when the file does not load */
    setenv("SLUICE_CONFIG", path, 1);
    c = sl_config_default();
    e = c ? sl_config_resolve(c, "deepseek", "deepseek-chat", &model, &why) : NULL;
    CHECK(e && !strcmp(e->name, "deepseek"),
          "sl_config_default: a broken $SLUICE_CONFIG leaves the environment's settings");
    sl_config_free(c);
    unsetenv("SLUICE_CONFIG");
    unlink(path);
    free(path);
    unsetenv("DEEPSEEK_API_KEY");
    sl_err_clear(&why);
}

static void nothing_and_offline(void)
{
    const char *model;
    sl_err why = {0};
    double in, out;
    const char *cur;
    CHECK(!sl_config_resolve(NULL, "openai", "gpt-4o", &model, &why) &&
              strstr(why.msg, "not configured"),
          "a NULL configuration configures nothing: %s", why.msg);
    CHECK(!sl_config_price(NULL, "gpt-4o", &in, &out, &cur) && !sl_config_sandbox(NULL),
          "and has no prices and no sandbox mapping");
    sl_config *c = sl_config_env();
    const sl_llm_endpoint *e = sl_config_resolve(c, "nosuch", "m", &model, &why);
    CHECK(!e, "an unconfigured provider does not resolve");
    sl_config_set_offline(c, true);
    e = sl_config_resolve(c, "nosuch", "m", &model, &why);
    CHECK(e && !strcmp(e->base_url, "replay:"),
          "offline (a tape is replayed), it resolves to the replay placeholder");
    sl_config_free(c);
    sl_err_clear(&why);
}

static void sandbox_and_secrets(void)
{
    sl_config *c = load("sandbox: {provider: ssh, network: none, ssh: {host: h}}\n");
    const sl_value *sb = sl_config_sandbox(c);
    CHECK(sb && !strcmp(json_string_value(json_object_get(sb, "provider")), "ssh") &&
              json_object_get(sb, "ssh"),
          "the file's sandbox mapping is kept for the engine");
    sl_config_free(c);
    char *path = config_file("sandbox: {provider: local, colour: blue}\n");
    sl_err err = {0};
    CHECK(sl_config_load(path, &c, &err) < 0 && strstr(err.msg, "sandbox.colour"),
          "an unknown sandbox setting is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    unlink(path);
    free(path);

    /* an API key is a secret while a configuration that holds it lives */
    const char *yml = "llm:\n  providers:\n"
                      "    p: {style: openai, base_url: http://127.0.0.1:9/v1, "
                      "api_key: sk-config-test-4711}\n";
    sl_config *a = load(yml), *b = load(yml);
    char *m = sl_secret_mask("key sk-config-test-4711");
    CHECK(m && !strstr(m, "4711"), "a loaded API key is masked");
    free(m);
    sl_config_free(a);
    m = sl_secret_mask("key sk-config-test-4711");
    CHECK(m && !strstr(m, "4711"), "still masked while another configuration holds it");
    free(m);
    sl_config_free(b);
    m = sl_secret_mask("key sk-config-test-4711");
    CHECK(!m, "no longer once the last one is freed");
    free(m);
}

/* ---- two runs, two configurations ---- */

typedef struct {
    const sl_graph *g;
    const sl_config *config;
    sl_llm_tape *tape;
    sl_value *meta;        /* the llm node's execution_metadata */
    const char *status;
    char *error;
} one_run;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    one_run *o = ud;
    const char *id = json_string_value(json_object_get(data, "node_id"));
    if (!strcmp(event, "node_finished") && id && !strcmp(id, "llm")) {
        json_decref(o->meta);
        o->meta = json_incref(json_object_get(data, "execution_metadata"));
    }
}

static void *run_main(void *arg)
{
    one_run *o = arg;
    sl_run_opts opts;
    sl_run_opts_init(&opts);
    sl_value *inputs = json_pack("{s:s}", "topic", "tides");
    opts.inputs = inputs;
    opts.query = "Why are there tides?";
    opts.config = o->config;
    opts.llm_tape = o->tape;
    opts.on_event = on_event;
    opts.event_ud = o;
    sl_run *r = sl_run_new(o->g, &opts);
    sl_err err = {0};
    sl_run_exec(r, &err);
    sl_err_clear(&err);
    o->status = sl_run_status_name(sl_run_status_of(r));
    o->error = sl_run_error(r) ? sl_xstrdup(sl_run_error(r)) : NULL;
    sl_run_free(r);
    json_decref(inputs);
    return NULL;
}

/* Whether the run succeeded and its llm node cost `price` in `currency`
 * (says what it saw when not). */
static bool priced(const one_run *o, const char *currency, double price)
{
    const char *cur = json_string_value(json_object_get(o->meta, "currency"));
    double p = sl_value_number(json_object_get(o->meta, "total_price"));
    bool ok = !strcmp(o->status, "succeeded") && cur && !strcmp(cur, currency) &&
              p > price - 1e-12 && p < price + 1e-12;
    if (!ok) {
        char *m = show(o->meta);
        printf("# status %s, error %s, metadata %s\n", o->status, o->error ? o->error : "none",
               m);
        free(m);
    }
    return ok;
}

static void two_runs(void)
{
    const char *wf = "tests/cases/llm/llm_replay.yml", *tp = "tests/cases/llm/llm_replay.jsonl";
    /* Two configurations of one process: the same replayed model priced
     * in two currencies. */
    unsetenv("SLUICE_LLM_BASE_URL");
    unsetenv("OPENAI_API_KEY");
    sl_config *eur = load("llm:\n  prices:\n    gpt-offline-1: {input: 1000, output: 2000, "
                          "currency: EUR}\n");
    sl_config *usd = load("llm:\n  prices:\n    gpt-offline-1: {input: 3000, output: 4000, "
                          "currency: USD}\n");
    sl_config *none = sl_config_env();
    if (!eur || !usd) {
        CHECK(0, "the test's configurations load");
        return;
    }
    sl_config_set_offline(eur, true);
    sl_config_set_offline(usd, true);

    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_file(&g, &sl_nodes, none, wf, &d, &err);
    CHECK(rc < 0 && d.n && strstr(d.v[0].msg, "not configured"),
          "loaded against settings without the provider, the workflow is refused: %s",
          d.n ? d.v[0].msg : err.msg ? err.msg : "?");
    sl_graph_release(&g);
    sl_diag_release(&d);
    sl_err_clear(&err);
    /* the same settings, lenient: what sluice validate does without --strict */
    sl_config *lenient = sl_config_env();
    sl_config_set_lenient(lenient, true);
    sl_diag_init(&d);
    rc = sl_graph_load_file(&g, &sl_nodes, lenient, wf, &d, &err);
    CHECK(rc == 0 && d.n == 1 && d.v[0].warning && strstr(d.v[0].msg, "not configured"),
          "loaded against lenient settings, that is a warning: %s",
          d.n ? d.v[0].msg : err.msg ? err.msg : "none");
    sl_graph_release(&g);
    sl_diag_release(&d);
    sl_err_clear(&err);
    sl_config_free(lenient);
    CHECK(!sl_config_lenient(NULL), "a NULL configuration is not lenient");
    sl_diag_init(&d);
    rc = sl_graph_load_file(&g, &sl_nodes, eur, wf, &d, &err);
    CHECK(rc == 0, "loaded against offline settings, it loads (%s)",
          d.n ? d.v[0].msg : err.msg ? err.msg : "ok");
    sl_diag_release(&d);
    sl_err_clear(&err);
    if (rc) {
        sl_config_free(eur);
        sl_config_free(usd);
        sl_config_free(none);
        return;
    }

    one_run runs[3] = {{.g = &g, .config = eur}, {.g = &g, .config = usd},
                       {.g = &g, .config = none}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        if (sl_llm_tape_open(tp, true, &runs[i].tape, &err)) {
            CHECK(0, "the tape opens: %s", err.msg);
            sl_err_clear(&err);
        }
        pthread_create(&t[i], NULL, run_main, &runs[i]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);

    /* the tape's exchange: 8 prompt and 5 completion tokens */
    CHECK(priced(&runs[0], "EUR", (8 * 1000 + 5 * 2000) / 1e6),
          "the run lent the EUR settings prices the model in EUR");
    CHECK(priced(&runs[1], "USD", (8 * 3000 + 5 * 4000) / 1e6),
          "at the same time, the run lent the USD settings prices it in USD");
    CHECK(!strcmp(runs[2].status, "failed") && runs[2].error &&
              strstr(runs[2].error, "not configured"),
          "and a run lent settings without the provider fails on its own: %s",
          runs[2].error ? runs[2].error : runs[2].status);
    for (int i = 0; i < 3; i++) {
        json_decref(runs[i].meta);
        free(runs[i].error);
        sl_llm_tape_close(runs[i].tape);
    }
    sl_graph_release(&g);
    sl_config_free(eur);
    sl_config_free(usd);
    sl_config_free(none);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsetenv("SLUICE_CONFIG");
    unsetenv("SLUICE_LLM_MODEL");
    resolve();
    nothing_and_offline();
    sandbox_and_secrets();
    two_runs();
    return tap_done();
}
