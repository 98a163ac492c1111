/*
 * builtins — sluice's own tools (tools/builtin.h) without a workflow: the
 * registry under both ids, and each tool's output for fixed inputs, the
 * expected values taken from Dify's tools (Python's zoneinfo, json, …).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/clock.h"
#include "core/secret.h"
#include "tap.h"
#include "tools/builtin.h"
#include "util.h"

/* Calls provider/tool with args (JSON text); the text, or "ERR: msg". */
static char *call(const char *provider, const char *tool, const char *args)
{
    const sl_binding *b = sl_bindings_find(sl_builtins(), provider, NULL);
    if (!b)
        return sl_xstrdup("ERR: no binding");
    sl_err err = {0};
    sl_toolset *ts = sl_binding_toolset(b, false, &err);
    if (!ts) {
        char *r = sl_xasprintf("ERR: %s", err.msg);
        sl_err_clear(&err);
        return r;
    }
    sl_tool_ctx ctx = {.timeout_s = 10, .allow_private = true};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J(args);
    char *out;
    if (sl_toolset_call(ts, &ctx, tool, a, &res, &err))
        out = sl_xasprintf("ERR: %s", err.msg);
    else
        out = sl_xstrdup(res.text.data ? res.text.data : "");
    json_decref(a);
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    return out;
}

#define EXPECT(provider, tool, args, want)                                                   \
    do {                                                                                     \
        char *got_ = call(provider, tool, args);                                             \
        CHECK(!strcmp(got_, want), "%s.%s %s -> %s (got %s)", provider, tool, args, want,     \
              got_);                                                                         \
        free(got_);                                                                          \
    } while (0)

#define EXPECT_ERR(provider, tool, args, part)                                               \
    do {                                                                                     \
        char *got_ = call(provider, tool, args);                                             \
        CHECK(!strncmp(got_, "ERR: ", 5) && strstr(got_, part), "%s.%s %s fails with '%s' "  \
              "(got %s)", provider, tool, args, part, got_);                                 \
        free(got_);                                                                          \
    } while (0)

static void test_registry(void)
{
    const char *ids[] = {"time", "langgenius/time/time"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        const sl_binding *b = sl_bindings_find(sl_builtins(), ids[i], NULL);
        CHECK(b && !strcmp(sl_binding_kind(b), "builtin"), "%s is a built-in", ids[i]);
    }
    CHECK(sl_builtins() == sl_builtins(), "one registry");
    CHECK(!sl_bindings_find(sl_builtins(), "google", NULL), "google is not built in");
    CHECK(sl_bindings_find(sl_builtins(), "tavily", NULL) &&
              sl_bindings_find(sl_builtins(), "langgenius/tavily/tavily", NULL),
          "tavily is built in under both ids");
    sl_err err = {0};
    sl_toolset *ts = sl_binding_toolset(sl_bindings_find(sl_builtins(), "time", NULL), false,
                                        &err);
    sl_value *list = NULL;
    CHECK(ts && !sl_toolset_list(ts, NULL, &list, &err), "time lists its tools");
    const char *want[] = {"current_time", "weekday", "timezone_conversion",
                          "localtime_to_timestamp", "timestamp_to_localtime"};
    for (size_t i = 0; i < 5; i++) {
        const sl_value *d = sl_binding_find_tool(list, want[i]);
        CHECK(d && json_is_object(json_object_get(d, "inputSchema")), "time has %s", want[i]);
    }
    const sl_value *ct = sl_binding_find_tool(list, "current_time");
    const sl_value *tzp = json_object_get(
        json_object_get(json_object_get(ct, "inputSchema"), "properties"), "timezone");
    CHECK(json_array_size(json_object_get(tzp, "enum")) == 18 &&
              !strcmp(json_string_value(json_object_get(tzp, "type")), "string"),
          "current_time's timezone select is a string enum of 18 zones");
    json_decref(list);
    EXPECT_ERR("time", "no_such_tool", "{}", "has no tool named 'no_such_tool'; it has current_time, weekday");
    sl_err_clear(&err);
}

/* ---- configuration ---- */

/* A fixture provider whose one tool answers with the configuration it
 * was called with. */
static int show_cfg(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                    sl_tool_result *res, sl_err *err)
{
    (void)args;
    if (sl_builtin_need_key(cfg, err))
        return -1;
    char *set = json_dumps(cfg->settings, JSON_COMPACT | JSON_SORT_KEYS);
    char *t = sl_xasprintf("%s|%s|%s|%s", cfg->provider, cfg->api_key,
                           cfg->base_url ? cfg->base_url : "-", set);
    int rc = sl_builtin_text(res, ctx, t, strlen(t), err);
    free(t);
    free(set);
    return rc;
}

static const sl_builtin_tool fixture_tools[] = {
    {"show", "shows its configuration", "{\"type\": \"object\", \"properties\": {}}", show_cfg},
};
static const size_t fixture_n = 1;
static const char *const fixture_settings[] = {"region", NULL};
static const sl_builtin_provider fixture = {
    "fixture", "test/fixture/fixture", fixture_tools, &fixture_n, "SLUICE_TEST_FIXTURE_KEY",
    true, "SLUICE_TEST_FIXTURE_URL", "https://api.fixture.invalid", fixture_settings};

static char *ts_call(sl_toolset *ts)
{
    sl_tool_ctx ctx = {.timeout_s = 5};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_err err = {0};
    char *out = sl_toolset_call(ts, &ctx, "show", NULL, &res, &err)
                    ? sl_xasprintf("ERR: %s", err.msg)
                    : sl_xstrdup(res.text.data ? res.text.data : "");
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    return out;
}

static void test_cfg(void)
{
    unsetenv("SLUICE_TEST_FIXTURE_KEY");
    unsetenv("SLUICE_TEST_FIXTURE_URL");
    /* the registry's way: everything from the environment, at call time */
    sl_toolset *env_ts = sl_builtin_provider_toolset(&fixture, NULL, NULL, NULL, true,
                                                     "in sluice");
    char *got = ts_call(env_ts);
    CHECK(strstr(got, "ERR: fixture: the tool needs an API key and has none: set "
                      "SLUICE_TEST_FIXTURE_KEY in sluice's environment") &&
              strstr(got, "tools: {fixture: {builtin: {api_key: {env: NAME}}}}"),
          "no key: the error names the variable and the binding (got %s)", got);
    free(got);
    setenv("SLUICE_TEST_FIXTURE_KEY", "env-key-1234", 1);
    got = ts_call(env_ts);
    CHECK(!strcmp(got, "fixture|env-key-1234|https://api.fixture.invalid|{}"),
          "the key is read at call time; the vendor's URL by default (got %s)", got);
    free(got);
    setenv("SLUICE_TEST_FIXTURE_URL", "http://127.0.0.1:9/v1", 1);
    got = ts_call(env_ts);
    CHECK(!strcmp(got, "fixture|env-key-1234|http://127.0.0.1:9/v1|{}"),
          "the URL's variable overrides the default (got %s)", got);
    free(got);
    /* a binding's own values win; what it leaves out comes from the
     * environment only when it is trusted */
    sl_value *set = J("{\"region\": \"eu\"}");
    sl_toolset *own = sl_builtin_provider_toolset(&fixture, "own-key-5678", "https://x.invalid",
                                                  set, true, "'f' (sluice's settings)");
    got = ts_call(own);
    CHECK(!strcmp(got, "fixture|own-key-5678|https://x.invalid|{\"region\":\"eu\"}"),
          "the binding's key, URL and settings (got %s)", got);
    free(got);
    sl_toolset_free(own);
    sl_toolset *bundle = sl_builtin_provider_toolset(&fixture, NULL, NULL, set, false,
                                                     "'f' (the app bundle)");
    got = ts_call(bundle);
    CHECK(strstr(got, "ERR: fixture: the tool needs an API key and has none: the binding 'f' "
                      "(the app bundle) gives no api_key"),
          "a bundle's binding never reads the environment's key (got %s)", got);
    free(got);
    sl_toolset_free(bundle);
    json_decref(set);
    unsetenv("SLUICE_TEST_FIXTURE_KEY");
    unsetenv("SLUICE_TEST_FIXTURE_URL");
    sl_toolset_free(env_ts);

    CHECK(sl_builtin_provider_find("time") && sl_builtin_provider_find("langgenius/time/time") &&
              sl_builtin_provider_find("someone/time/time") == sl_builtin_provider_find("time") &&
              !sl_builtin_provider_find("nope"),
          "providers by name, plugin id and a plugin id's last part");

    /* bindings */
    struct {
        const char *yaml;
        bool trusted;
        const char *want;  /* NULL: parses */
    } cases[] = {
        {"tools: {3f1c-uuid: {builtin: time}}", true, NULL},
        {"tools: {x: {builtin: {provider: langgenius/json_process/json_process}}}", true, NULL},
        {"tools: {time: {builtin: {}}}", true, NULL},
        {"tools: {x: {builtin: {}}}", true, "'x' is not a built-in provider's id; name the "
         "provider: builtin: {provider: NAME, …} (one of time, json_process, webscraper"},
        {"tools: {x: {builtin: nope}}", true, "'nope' is not a built-in provider; they are time, "
         "json_process, webscraper"},
        {"tools: {x: {builtin: {provider: nope}}}", true, "tools.x.builtin.provider: 'nope' is "
         "not a built-in provider"},
        {"tools: {time: {builtin: {api_key: k1234}}}", true, "tools.time.builtin.api_key: "
         "unknown setting 'api_key'; the built-in time's settings are provider"},
        {"tools: {time: {builtin: {colour: red}}}", true, "unknown setting 'colour'"},
        {"tools: {time: {builtin: [1]}}", true, "a built-in provider's name, or its settings"},
        {"tools: {time: {builtin: time, mcp: http://x}}", true, "a binding is one of mcp, "
         "openapi, workflow and builtin"},
        {"tools: {time: {builtins: {}}}", true, "unknown setting 'builtins'; the settings are "
         "mcp, openapi, workflow, builtin, names and timeout"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_bindings *b = sl_bindings_new();
        sl_err err = {0};
        int rc = sl_bindings_parse_text(b, cases[i].yaml, strlen(cases[i].yaml), "s.yml",
                                        cases[i].trusted, &err);
        if (!cases[i].want)
            CHECK(rc == 0 && sl_bindings_count(b) == 1 &&
                      !strcmp(sl_binding_kind(sl_bindings_at(b, 0)), "builtin"),
                  "%s parses (%s)", cases[i].yaml, err.msg);
        else
            CHECK(rc && strstr(err.msg, cases[i].want), "%s: %s (got %s)", cases[i].yaml,
                  cases[i].want, err.msg);
        sl_err_clear(&err);
        sl_bindings_free(b);
    }
    /* what a store shows of a built-in binding: no key, no URL secrets */
    sl_value *shown = sl_bindings_spec_show(
        "{\"t\": {\"builtin\": {\"api_key\": \"tvly-secret-1\", "
        "\"base_url\": \"https://u:pw@api.example/v1?token=abc\"}}}");
    char *st = json_dumps(shown, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(!strcmp(st, "{\"t\":{\"builtin\":{\"api_key\":\"******\","
                      "\"base_url\":\"https://api.example/v1\"}}}"),
          "a built-in binding is shown without its key or the URL's credentials (%s)", st);
    free(st);
    json_decref(shown);
    /* a bound built-in calls its tools */
    sl_bindings *b = sl_bindings_new();
    sl_err err = {0};
    const char *y = "tools: {abc-123: {builtin: time}}";
    CHECK(!sl_bindings_parse_text(b, y, strlen(y), "s.yml", true, &err), "binds a UUID");
    const sl_binding *bt = sl_bindings_find(b, "abc-123", NULL);
    CHECK(bt && !strcmp(sl_binding_where(bt), "time in sluice"), "where: %s",
          bt ? sl_binding_where(bt) : "?");
    sl_toolset *ts = bt ? sl_binding_toolset(bt, false, &err) : NULL;
    sl_tool_ctx ctx = {.timeout_s = 5};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *wd = J("{\"year\": 2024, \"month\": 1, \"day\": 1}");
    CHECK(ts && !sl_toolset_call(ts, &ctx, "weekday", wd, &res, &err) &&
              !strcmp(res.text.data, "January 1, 2024 is Monday."),
          "the bound time answers (%s)", err.msg);
    CHECK(ts && sl_binding_toolset(bt, true, &err) == ts, "one toolset for both");
    json_decref(wd);
    sl_tool_result_release(&res);
    sl_err_clear(&err);
    sl_bindings_free(b);
}

/* ---- vendors, against tests/tools/vendor_standin.py ---- */

static char *vendor_url;  /* http://127.0.0.1:PORT/vendor */

/* Calls tool of the binding `id` in b (NULL: the registry); "ERR: msg",
 * or the text, then "\n#json: " and the first json message when any. */
static char *bcall(const sl_bindings *b, const char *id, const char *tool, const char *args,
                   bool allow_private)
{
    const sl_binding *bd = sl_bindings_find(b ? b : sl_builtins(), id, NULL);
    if (!bd)
        return sl_xstrdup("ERR: no binding");
    sl_err err = {0};
    sl_toolset *ts = sl_binding_toolset(bd, allow_private, &err);
    sl_tool_ctx ctx = {.timeout_s = 10, .allow_private = allow_private};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J(args);
    char *out;
    if (!ts || sl_toolset_call(ts, &ctx, tool, a, &res, &err)) {
        out = sl_xasprintf("ERR: %s", err.msg);
    } else {
        sl_buf o;
        sl_buf_init(&o, 0);
        sl_buf_adds(&o, res.text.data ? res.text.data : "");
        if (json_array_size(res.json)) {
            char *j = json_dumps(json_array_get(res.json, 0), JSON_COMPACT | JSON_SORT_KEYS);
            sl_buf_addf(&o, "\n#json: %s", j);
            free(j);
        }
        for (size_t i = 0; i < res.n_files; i++)
            sl_buf_addf(&o, "%s%s (%s, %zu bytes)", i ? ", " : "\n#files: ", res.files[i].name,
                        res.files[i].mime_type, res.files[i].data.len);
        out = sl_buf_detach(&o);
    }
    json_decref(a);
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    return out;
}

/* Bindings from YAML text (trusted or a bundle's); NULL with the error
 * in *why. */
static sl_bindings *bind(const char *yaml, bool trusted, char **why)
{
    sl_bindings *b = sl_bindings_new();
    sl_err err = {0};
    char *y = sl_xstrdup(yaml);
    /* @V stands for the stand-in's /vendor URL */
    for (char *p; (p = strstr(y, "@V"));) {
        char *n = sl_xasprintf("%.*s%s%s", (int)(p - y), y, vendor_url, p + 2);
        free(y);
        y = n;
    }
    *why = NULL;
    if (sl_bindings_parse_text(b, y, strlen(y), "s.yml", trusted, &err)) {
        *why = sl_xstrdup(err.msg);
        sl_bindings_free(b);
        b = NULL;
    }
    sl_err_clear(&err);
    free(y);
    return b;
}

static void test_tavily(void)
{
    char *u = sl_xasprintf("%s/tavily", vendor_url);
    setenv("TAVILY_BASE_URL", u, 1);
    free(u);
    unsetenv("TAVILY_API_KEY");
    /* the registry: the environment's key, read at call time */
    char *got = bcall(NULL, "tavily", "tavily_search", "{\"query\": \"q\"}", true);
    CHECK(strstr(got, "ERR: tavily: the tool needs an API key and has none: set TAVILY_API_KEY"),
          "no key: names TAVILY_API_KEY (got %s)", esc(got));
    free(got);
    setenv("TAVILY_API_KEY", "tvly-wrong-key", 1);
    got = bcall(NULL, "langgenius/tavily/tavily", "tavily_search", "{\"query\": \"q\"}", true);
    CHECK(strstr(got, "ERR: Tavily: the API answered 401 (Unauthorized): Unauthorized: missing "
                      "or invalid API key.; check the API key (set TAVILY_API_KEY"),
          "a wrong key: the vendor's 401 and where the key comes from (got %s)", esc(got));
    free(got);
    setenv("TAVILY_API_KEY", "tvly-test-key", 1);
    got = bcall(NULL, "tavily", "tavily_search",
                "{\"query\": \"q\", \"search_depth\": \"fast\", \"topic\": \"news\", "
                "\"include_answer\": \"advanced\", \"include_raw_content\": true, "
                "\"include_images\": \"true\", \"include_favicon\": true, \"max_results\": \"1\", "
                "\"time_range\": \"week\", \"start_date\": \"\", \"country\": \"None\", "
                "\"exclude_domains\": \"x.com,,y.com\", \"project_id\": \"p1\"}",
                true);
    char *want = sl_xasprintf(
        "**Answer:** The answer.\n\n# Result 1: [Result for q](https://example.com/1)"
        "\n\n**Published Date:** Mon, 01 Dec 2026 10:00:00 GMT\n\n**URL:** "
        "https://example.com/1\n\n**Relevance Score:** 0.98765\n\n**Favicon:** "
        "![Favicon for Result for q](%s/files/favicon.ico)\n\n"
        "**Content:**\nFirst content.\n\n**Raw Content:**\nRaw one.\n\n---\n\n"
        "**Images:**\n\n![An A](%s/files/a.png)\n\n"
        "![Tavily search result image](%s/files/missing.png)\n\n\n\n#json: ",
        vendor_url, vendor_url, vendor_url);
    CHECK(strstr(got, want) == got, "every section of the plugin's text (got %s)", esc(got));
    free(want);
    CHECK(strstr(got, "\n#files: a.png (image/png, 67 bytes), favicon.ico (image/x-icon, 4 bytes)") &&
              got[strlen(got) - 1] == ')',
          "the images and favicons as files, a missing one skipped (got %s)",
          esc(strstr(got, "#files") ? strstr(got, "#files") : got));
    CHECK(strstr(got, "\"echo\":{\"body\":{\"chunks_per_source\":3,\"exclude_domains\":[\"x.com\","
                      "\"y.com\"],\"include_answer\":\"advanced\",\"include_favicon\":true,"
                      "\"include_images\":true,\"include_raw_content\":\"markdown\","
                      "\"max_results\":1,\"query\":\"q\",\"search_depth\":\"fast\",\"time_range\":"
                      "\"week\",\"topic\":\"news\"},\"client\":\"sluice\",\"project\":\"p1\"}"),
          "the body the plugin's processing makes, and the project header (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "tavily", "tavily_search", "{\"query\": \"q\", \"max_results\": \"lots\"}",
                true);
    CHECK(strstr(got, "ERR: tavily: max_results is a whole number"), "a bad number (got %s)",
          esc(got));
    free(got);
    got = bcall(NULL, "tavily", "tavily_extract", "{\"urls\": \"https://a.com\", "
                "\"extract_depth\": \"deep\"}", true);
    CHECK(strstr(got, "ERR: tavily: extract_depth must be either 'basic' or 'advanced'"),
          "extract_depth is checked (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "tavily", "tavily_extract", "{\"urls\": \"https://a.com\", "
                "\"timeout\": 90}", true);
    CHECK(strstr(got, "ERR: tavily: timeout must be between 1.0 and 60.0 seconds"),
          "timeout is checked (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "tavily", "tavily_extract", "{\"urls\": [\"https://a.com/1\"], "
                "\"include_images\": true, \"query\": \"why\", \"timeout\": \"20\", "
                "\"chunks_per_source\": 4, \"format\": \"text\"}", true);
    want = sl_xasprintf("# Extracted Content 1: https://a.com/1\n\n**Raw Content:**\nContent "
                        "of https://a.com/1\n\n**Images:**\n\n![Image from https://a.com/1]"
                        "(%s/files/i.png?size=1)\n\n---\n\n#json: ", vendor_url);
    CHECK(strstr(got, want) == got && strstr(got, "\n#files: i.png (image/png, 67 bytes)") &&
              strstr(got, "\"body\":{\"chunks_per_source\":4,\"format\":\"text\","
                          "\"include_images\":true,\"query\":\"why\",\"timeout\":20.0,"
                          "\"urls\":[\"https://a.com/1\"]}"),
          "extract's text, body and image (got %s)", esc(got));
    free(want);
    free(got);
    got = bcall(NULL, "tavily", "tavily_extract", "{\"urls\": \"https://a.com/1\", "
                "\"include_favicon\": true}", true);
    CHECK(strstr(got, "\n#files: favicon_0.svg (image/svg+xml, 6 bytes)"),
          "a favicon whose URL names no file is favicon_N by its type (got %s)",
          esc(strstr(got, "#files") ? strstr(got, "#files") : got));
    free(got);
    got = bcall(NULL, "tavily", "tavily_search", "{\"query\": \"q\"}", false);
    CHECK(strstr(got, "ERR: Tavily: sluice refused to connect to 127.0.0.1"),
          "the guard without allow_private (got %s)", esc(got));
    free(got);

    /* a binding: its own key from {env:}, registered as a secret */
    setenv("SLUICE_TEST_TAVILY", "tvly-test-key", 1);
    unsetenv("TAVILY_API_KEY");
    char *why;
    sl_bindings *b = bind("tools: {search: {builtin: {provider: tavily, api_key: {env: "
                          "SLUICE_TEST_TAVILY}, base_url: '@V/tavily'}}}", true, &why);
    CHECK(b != NULL, "a tavily binding loads (%s)", why ? why : "");
    char *masked = sl_secret_mask("key tvly-test-key here");
    CHECK(masked && !strstr(masked, "tvly-test-key"), "its key is a registered secret (%s)",
          masked ? masked : "not masked");
    free(masked);
    got = b ? bcall(b, "search", "tavily_search", "{\"query\": \"q\"}", true) : sl_xstrdup("-");
    CHECK(!strncmp(got, "# Result 1: [Result for q]", 26), "the bound key works (got %.80s)", esc(got));
    free(got);
    CHECK(b && !strncmp(sl_binding_where(sl_bindings_get(b, "search")), "tavily in sluice, "
                        "http://127.0.0.1:", 34), "where: %s",
          b ? sl_binding_where(sl_bindings_get(b, "search")) : "-");
    sl_bindings_free(b);
    masked = sl_secret_mask("key tvly-test-key here");
    CHECK(masked && !strstr(masked, "tvly-test-key"), "a key read from the environment stays "
          "a secret after its call (%s)", masked ? masked : "not masked");
    free(masked);
    b = bind("tools: {t2: {builtin: {provider: tavily, api_key: tvly-other-123, base_url: "
             "'@V/tavily'}}}", true, &why);
    masked = sl_secret_mask("tvly-other-123");
    CHECK(b && masked, "a bound key is a secret while its binding lives");
    free(masked);
    got = b ? bcall(b, "t2", "tavily_search", "{\"query\": \"q\"}", true) : sl_xstrdup("-");
    CHECK(strstr(got, "ERR: Tavily: the API answered 401 (Unauthorized): Unauthorized: missing "
                      "or invalid API key.; check the API key (the api_key of the binding 't2' "
                      "(sluice's settings))"),
          "a bound key's 401 names the binding (got %s)", esc(got));
    free(got);
    sl_bindings_free(b);
    masked = sl_secret_mask("tvly-other-123");
    CHECK(!masked, "freed, the key is no longer a secret");
    free(masked);
    /* a bundle's: no {env:}, and no fallback to the environment's key */
    setenv("TAVILY_API_KEY", "tvly-test-key", 1);
    b = bind("tools: {tavily: {builtin: {api_key: {env: SLUICE_TEST_TAVILY}}}}", false, &why);
    CHECK(!b && why && strstr(why, "tools.tavily.builtin.api_key: an app bundle's bindings may "
                              "not read the environment ({env: SLUICE_TEST_TAVILY})"),
          "a bundle may not read the environment (%s)", why ? why : "loaded");
    free(why);
    b = bind("tools: {tavily: {builtin: {base_url: '@V/tavily'}}}", false, &why);
    got = b ? bcall(b, "tavily", "tavily_search", "{\"query\": \"q\"}", true) : sl_xstrdup("-");
    CHECK(strstr(got, "ERR: tavily: the tool needs an API key and has none: the binding 'tavily' "
                      "(the app bundle) gives no api_key"),
          "a bundle's binding never gets this host's key (got %s)", esc(got));
    free(got);
    sl_bindings_free(b);
    b = bind("tools: {tavily: {builtin: {api_key: '', base_url: '@V/tavily'}}}", true, &why);
    CHECK(!b && why && strstr(why, "an API key is one line of text, not empty"),
          "an empty key is refused (%s)", why ? why : "loaded");
    free(why);
    b = bind("tools: {tavily: {builtin: {base_url: 'ftp://x'}}}", true, &why);
    CHECK(!b && why && strstr(why, "tools.tavily.builtin.base_url: the vendor's API root, "
                              "starting with http:// or https://"),
          "a base_url that is not http(s) is refused (%s)", why ? why : "loaded");
    free(why);
    b = bind("tools: {tavily: {builtin: {region: eu}}}", true, &why);
    CHECK(!b && why && strstr(why, "unknown setting 'region'; the built-in tavily's settings "
                              "are provider, api_key, base_url"),
          "an unknown setting lists tavily's (%s)", why ? why : "loaded");
    free(why);
    /* the server's store: `sluice tools bind ID --json '{"builtin": …}'` */
    char *spec = NULL;
    sl_value *one = J("{\"builtin\": {\"provider\": \"tavily\", \"api_key\": "
                      "\"tvly-store-key\", \"base_url\": \"https://t.example/api?sig=1\"}}");
    sl_err err = {0};
    CHECK(!sl_bindings_spec_set(&spec, "3f1c-uuid", one, &err) && spec,
          "a store binds a built-in (%s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_value *shown = sl_bindings_spec_show(spec);
    char *st = json_dumps(shown, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(!strcmp(st, "{\"3f1c-uuid\":{\"builtin\":{\"api_key\":\"******\",\"base_url\":"
                      "\"https://t.example/api\",\"provider\":\"tavily\"}}}"),
          "… and shows it without its key (%s)", st);
    free(st);
    json_decref(shown);
    json_decref(one);
    one = J("{\"builtin\": {\"provider\": \"tavily\", \"apikey\": \"x\"}}");
    CHECK(sl_bindings_spec_set(&spec, "x", one, &err) && strstr(err.msg, "unknown setting "
                                                                 "'apikey'"),
          "a store refuses an unknown setting (%s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
    json_decref(one);
    free(spec);
    unsetenv("TAVILY_API_KEY");
    unsetenv("TAVILY_BASE_URL");
    unsetenv("SLUICE_TEST_TAVILY");
}

static void test_jina(void)
{
    char *r = sl_xasprintf("%s/jina/r", vendor_url), *q = sl_xasprintf("%s/jina/s", vendor_url);
    setenv("JINA_BASE_URL", r, 1);
    setenv("JINA_SEARCH_URL", q, 1);
    free(r);
    free(q);
    unsetenv("JINA_API_KEY");
    /* the key is optional: none is sent without one */
    char *got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com/x?y=1\", "
                      "\"request_params\": \"{\\\"k\\\": [1, true], \\\"n\\\": null}\", "
                      "\"wait_for_selector\": \"#w\", \"image_caption\": true, "
                      "\"gather_all_images_at_the_end\": \"true\", \"proxy_server\": "
                      "\"http://p:1\", \"content_format\": \"default\"}", true);
    CHECK(strstr(got, "\"url\": \"https://a.com/x?y=1&k=1&k=True\"") &&
              strstr(got, "\"headers\": {\"Accept\": \"application/json\", "
                          "\"X-Wait-For-Selector\": \"#w\", \"X-With-Generated-Alt\": \"true\", "
                          "\"X-With-Images-Summary\": \"true\", \"X-Proxy-Url\": \"http://p:1\"}"),
          "the reader without a key: params join the URL's query, the options are headers "
          "(got %s)", esc(got));
    free(got);
    setenv("JINA_API_KEY", "jina-wrong", 1);
    got = bcall(NULL, "langgenius/jina/jina", "jina_search", "{\"query\": \"q\"}", true);
    CHECK(strstr(got, "ERR: Jina: the API answered 401 (Unauthorized): Invalid API key, please "
                      "get a new one from https://jina.ai; check the API key (set JINA_API_KEY"),
          "a wrong key is the vendor's 401 (got %s)", esc(got));
    free(got);
    setenv("JINA_API_KEY", "jina-test-key", 1);
    got = bcall(NULL, "jina", "jina_search", "{\"query\": \"a/b? c#d\"}", true);
    CHECK(strstr(got, "\"title\": \"About a/b? c#d\"") && strstr(got, "\"query\": \"\""),
          "the search query is one path segment (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com/redirect-here\"}", true);
    CHECK(strstr(got, "\"url\": \"https://moved.example/\"") &&
              strstr(got, "\"Authorization\": \"Bearer jina-test-key\""),
          "a redirect within the origin keeps the key (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com/redirect-away\"}", true);
    CHECK(strstr(got, "\"url\": \"https://moved.example/\"") && !strstr(got, "Authorization"),
          "a redirect to another origin drops the key (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com\", \"request_params\": "
                "\"[1]\"}", true);
    CHECK(strstr(got, "ERR: jina: Invalid request_params: request_params must be a JSON object"),
          "request_params must be an object (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com\", \"request_params\": "
                "\"{nope\"}", true);
    CHECK(strstr(got, "ERR: jina: Invalid request_params: "), "request_params must parse (got %s)",
          esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com\", \"summary\": true}",
                true);
    CHECK(strstr(got, "ERR: jina: summary needs a model"), "summary is refused (got %s)",
          esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com\", \"target_selector\": "
                "\"a\\r\\nX-Evil: 1\"}", true);
    CHECK(strstr(got, "ERR: jina: target_selector may not hold a line break"),
          "no header injection (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "jina", "jina_reader", "{\"url\": \"https://a.com/huge\"}", true);
    CHECK(strstr(got, "ERR: Jina: the API's answer is larger than 10485760 bytes"),
          "a huge answer is refused (got %.200s)", esc(got));
    free(got);
    /* a bundle's binding: its own settings, nothing from the environment */
    char *why;
    sl_bindings *b = bind("tools: {jina: {builtin: {base_url: '@V/jina/r', tokenize_url: "
                          "'@V/jina/t'}}}", false, &why);
    got = b ? bcall(b, "jina", "jina_tokenizer", "{\"content\": \"a b c\", \"return_tokens\": "
                                                 "\"true\"}", true)
            : sl_xstrdup(why);
    CHECK(strstr(got, "#json: {\"echo\":{\"body\":{\"content\":\"a b c\",\"return_tokens\":true}},"
                      "\"num_tokens\":3,\"tokenizer\":\"cl100k_base\",\"tokens\":"),
          "a bundle's jina binding: no key, its own tokenizer URL (got %s)", esc(got));
    free(got);
    sl_bindings_free(b);
    unsetenv("JINA_API_KEY");
    unsetenv("JINA_BASE_URL");
    unsetenv("JINA_SEARCH_URL");
}

/* Stops the run once the clock passes *(double *)ud. */
static bool stop_later(void *ud)
{
    return sl_clock_s() > *(double *)ud;
}

static void test_firecrawl(void)
{
    char *u = sl_xasprintf("%s/firecrawl", vendor_url);
    setenv("FIRECRAWL_BASE_URL", u, 1);
    free(u);
    unsetenv("FIRECRAWL_API_KEY");
    char *got = bcall(NULL, "firecrawl", "scrape", "{\"url\": \"https://a.com\"}", true);
    CHECK(strstr(got, "ERR: firecrawl: the tool needs an API key and has none: set "
                      "FIRECRAWL_API_KEY"),
          "no key names FIRECRAWL_API_KEY (got %s)", esc(got));
    free(got);
    setenv("FIRECRAWL_API_KEY", "fc-wrong", 1);
    got = bcall(NULL, "langgenius/firecrawl/firecrawl", "crawl", "{\"url\": \"https://a.com\"}",
                true);
    CHECK(strstr(got, "ERR: Firecrawl: the API answered 401 (Unauthorized): Unauthorized: "
                      "Invalid token; check the API key (set FIRECRAWL_API_KEY"),
          "a wrong key is the vendor's 401 (got %s)", esc(got));
    free(got);
    setenv("FIRECRAWL_API_KEY", "fc-test-key", 1);
    got = bcall(NULL, "firecrawl", "scrape", "{\"url\": \"https://a.com\", \"headers\": "
                "\"{nope\"}", true);
    CHECK(strstr(got, "ERR: firecrawl: Invalid headers format."), "bad headers JSON (got %s)",
          esc(got));
    free(got);
    got = bcall(NULL, "firecrawl", "scrape", "{\"url\": \"https://a.com\", \"formats\": "
                "\"extract\", \"waitFor\": \"1500\", \"timeout\": 2.5}", true);
    CHECK(strstr(got, "\"body\":{\"onlyMainContent\":false,\"timeout\":2.5,\"url\":"
                      "\"https://a.com\",\"waitFor\":1500}"),
          "no formats left once extract goes; numbers as numbers (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "firecrawl", "scrape", "{\"url\": \"https://a.com/not-json\"}", true);
    CHECK(strstr(got, "ERR: Firecrawl: the API answered 200 with a body that is not JSON"),
          "an answer that is not JSON (got %s)", esc(got));
    free(got);
    got = bcall(NULL, "firecrawl", "crawl_job", "{\"job_id\": \"x\", \"operation\": \"stop\"}",
                true);
    CHECK(strstr(got, "ERR: firecrawl: Invalid operation: stop"), "crawl_job's operation (got %s)",
          esc(got));
    free(got);
    got = bcall(NULL, "firecrawl", "crawl_job", "{\"job_id\": \"../../v2/scrape\"}", true);
    CHECK(strstr(got, "ERR: Firecrawl: the API answered 404 (") == NULL &&
              strstr(got, "Job not found"),
          "a job id stays one path segment (got %s)", esc(got));
    free(got);
    /* poll_interval */
    char *why;
    sl_bindings *b = bind("tools: {firecrawl: {builtin: {poll_interval: 0, base_url: "
                          "'@V/firecrawl'}}}", true, &why);
    got = b ? bcall(b, "firecrawl", "crawl", "{\"url\": \"https://a.com\"}", true)
            : sl_xstrdup(why);
    CHECK(strstr(got, "ERR: firecrawl: the binding's poll_interval is seconds, from 0.05 to 600"),
          "poll_interval is checked (got %s)", esc(got));
    free(got);
    sl_bindings_free(b);
    /* a crawl ends at once when the run is stopped */
    b = bind("tools: {firecrawl: {builtin: {poll_interval: 30, base_url: '@V/firecrawl'}}}", true,
             &why);
    sl_err err = {0};
    sl_toolset *ts = b ? sl_binding_toolset(sl_bindings_get(b, "firecrawl"), true, &err) : NULL;
    double stop_at = sl_clock_s() + 0.5;  /* while it waits to poll again */
    sl_tool_ctx ctx = {.timeout_s = 20, .allow_private = true, .cancelled = stop_later,
                       .ud = &stop_at};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J("{\"url\": \"https://a.com/never-ends\"}");
    double t0 = sl_clock_s();
    int rc = ts ? sl_toolset_call(ts, &ctx, "crawl", a, &res, &err) : 0;
    CHECK(rc && err.code == SL_ECANCELED && strstr(err.msg, "firecrawl: the run was stopped") &&
              sl_clock_s() - t0 < 5,
          "a stopped run stops the crawl (%s, %.1f s)", err.msg ? err.msg : "-", sl_clock_s() - t0);
    json_decref(a);
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    sl_bindings_free(b);
    unsetenv("FIRECRAWL_API_KEY");
    unsetenv("FIRECRAWL_BASE_URL");
}

static void fmt_check(long long t, const char *tz, const char *fmt, const char *want)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_err err = {0};
    int rc = sl_builtin_time_format(t, 0, tz, fmt, &b, &err);
    CHECK(rc == 0 && !strcmp(b.data ? b.data : "", want), "%lld in %s as '%s' is '%s' (got '%s' %s)",
          t, tz, fmt, want, b.data ? b.data : "", err.msg ? err.msg : "");
    sl_buf_release(&b);
    sl_err_clear(&err);
}

static void test_time(void)
{
    const char *F = "%Y-%m-%d %H:%M:%S";
    fmt_check(0, "Asia/Shanghai", F, "1970-01-01 08:00:00");
    fmt_check(1704067200, "UTC", "%Y-%m-%d %H:%M:%S %Z %z %A %j", "2024-01-01 00:00:00 UTC +0000 Monday 001");
    /* New York's spring-forward and fall-back edges (transitions in the file) */
    fmt_check(1710053999, "America/New_York", "%Y-%m-%d %H:%M:%S %Z", "2024-03-10 01:59:59 EST");
    fmt_check(1710054000, "America/New_York", "%Y-%m-%d %H:%M:%S %Z", "2024-03-10 03:00:00 EDT");
    fmt_check(1730613599, "America/New_York", "%Y-%m-%d %H:%M:%S %Z", "2024-11-03 01:59:59 EDT");
    fmt_check(1730613600, "America/New_York", "%Y-%m-%d %H:%M:%S %Z", "2024-11-03 01:00:00 EST");
    fmt_check(1711846800, "Europe/London", "%Y-%m-%d %H:%M:%S %Z", "2024-03-31 02:00:00 BST");
    fmt_check(1696089600, "Australia/Sydney", "%Y-%m-%d %H:%M:%S %Z", "2023-10-01 03:00:00 AEDT");
    /* 2100: past the file's transitions, the footer's POSIX rule decides */
    fmt_check(4117996800LL, "Europe/Berlin", "%Y-%m-%d %H:%M:%S %Z %z", "2100-06-30 02:00:00 CEST +0200");
    fmt_check(-1, "UTC", F, "1969-12-31 23:59:59");
    fmt_check(1700000000, "Asia/Kolkata", "%z %Z %:z %%Z", "+0530 IST +05:30 %Z");
    fmt_check(1700000000, "UTC", "", "");

    long long t = 0;
    sl_err err = {0};
    CHECK(!sl_builtin_time_local("2024-03-10 02:30:00", "America/New_York", &t, &err) &&
              t == 1710055800, "a time in the spring gap moves forward (%lld)", t);
    CHECK(!sl_builtin_time_local("2024-11-03 01:30:00", "America/New_York", &t, &err) &&
              t == 1730615400, "an ambiguous time is its later instant (%lld)", t);
    CHECK(!sl_builtin_time_local("2100-07-01 12:00:00", "America/New_York", &t, &err) &&
              t == 4118140800LL, "2100 in New York by the footer rule (%lld)", t);
    sl_err_clear(&err);

    EXPECT("time", "timestamp_to_localtime", "{\"timestamp\": 0}", "1970-01-01 08:00:00");
    EXPECT("langgenius/time/time", "timestamp_to_localtime",
           "{\"timestamp\": 1710054000, \"timezone\": \"America/New_York\"}", "2024-03-10 03:00:00");
    EXPECT("time", "timestamp_to_localtime", "{\"timestamp\": \"1704067200.9\", \"timezone\": \"UTC\"}",
           "2024-01-01 00:00:00");
    EXPECT("time", "localtime_to_timestamp", "{\"localtime\": \"2024-1-1 0:0:0\"}", "1704038400");
    EXPECT("time", "localtime_to_timestamp",
           "{\"localtime\": \"2024-07-01 12:00:00\", \"timezone\": \"Europe/Berlin\"}", "1719828000");
    EXPECT("time", "timezone_conversion",
           "{\"current_time\": \"2024-03-10 02:30:00\", \"current_timezone\": \"America/New_York\", "
           "\"target_timezone\": \"Asia/Tokyo\"}", "2024-03-10 16:30:00");
    EXPECT("time", "timezone_conversion", "{\"current_time\": \"2024-1-1 0:0:0\"}",
           "2024-01-01 01:00:00");
    EXPECT("time", "weekday", "{\"year\": 2024, \"month\": 1, \"day\": 1}", "January 1, 2024 is Monday.");
    EXPECT("time", "weekday", "{\"year\": \"2000\", \"month\": 2, \"day\": 29.0}",
           "February 29, 2000 is Tuesday.");
    EXPECT("time", "weekday", "{\"year\": 1, \"month\": 1, \"day\": 1}", "January 1, 1 is Monday.");
    EXPECT("time", "weekday", "{\"year\": 9999, \"month\": 12, \"day\": 31}", "December 31, 9999 is Friday.");
    EXPECT_ERR("time", "weekday", "{\"year\": 2023, \"month\": 2, \"day\": 29}",
               "Invalid date: Year 2023, Month 2, Day 29.");
    EXPECT_ERR("time", "weekday", "{\"year\": 2023, \"day\": 29}", "month is missing");

    EXPECT_ERR("time", "current_time", "{\"timezone\": \"Mars/Olympus\"}",
               "Invalid timezone: 'Mars/Olympus'");
    EXPECT_ERR("time", "current_time", "{\"timezone\": \"../../etc/passwd\"}", "not a time zone name");
    EXPECT_ERR("time", "current_time", "{\"timezone\": \"America\"}", "Invalid timezone");
    EXPECT_ERR("time", "localtime_to_timestamp", "{\"localtime\": \"2024/01/01\"}",
               "does not match format '%Y-%m-%d %H:%M:%S'");
    EXPECT_ERR("time", "localtime_to_timestamp", "{\"localtime\": \"2024-02-30 00:00:00\"}",
               "day is out of range for month");
    EXPECT_ERR("time", "timestamp_to_localtime", "{\"timestamp\": 1e15}", "out of range");

    /* current_time: the year, and the format's default */
    char *got = call("time", "current_time", "{\"format\": \"%Y\"}");
    CHECK(strlen(got) == 4 && got[0] == '2', "current_time's %%Y is a year (%s)", got);
    free(got);
    got = call("time", "current_time", "{\"timezone\": \"Asia/Tokyo\"}");
    CHECK(strlen(got) == 19 && got[4] == '-' && got[13] == ':', "current_time's default format (%s)", got);
    free(got);
    got = call("time", "current_time", "{\"format\": \"\"}");
    CHECK(strlen(got) == 23 && !strcmp(got + 19, " UTC"), "a blank format adds the zone (%s)", got);
    free(got);
}

/* json_process: args built from content and the rest (JSON text). */
static char *jcall(const char *tool, const char *content, const char *rest)
{
    sl_value *a = J(rest);
    json_object_set_new(a, "content", json_string(content));
    char *text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    char *out = call("json_process", tool, text);
    free(text);
    return out;
}

#define JEXPECT(tool, content, rest, want)                                                   \
    do {                                                                                     \
        char *got_ = jcall(tool, content, rest);                                             \
        CHECK(!strcmp(got_, want), "%s %s -> %s (got %s)", tool, rest, want, got_);          \
        free(got_);                                                                          \
    } while (0)

#define JERR(tool, content, rest, part)                                                      \
    do {                                                                                     \
        char *got_ = jcall(tool, content, rest);                                             \
        CHECK(!strncmp(got_, "ERR: ", 5) && strstr(got_, part), "%s %s fails with '%s' "     \
              "(got %s)", tool, rest, part, got_);                                           \
        free(got_);                                                                          \
    } while (0)

static void test_json(void)
{
    CHECK(sl_bindings_find(sl_builtins(), "langgenius/json_process/json_process", NULL) &&
              sl_bindings_find(sl_builtins(), "json_process", NULL),
          "json_process under both ids");
    /* expected values: the plugin's code with jsonpath_ng 1.8.0 */
    const char *doc = "{\"a\": {\"b\": [1, 2.5, {\"c\": \"x\"}], \"c\": true, \"n\": null}, "
                      "\"c\": \"top\", \"u\": \"h\\u00e9llo \\ud83d\\ude00\", \"l\": [{\"b\": 1}, "
                      "{\"b\": 2}, {\"d\": {\"b\": 3}}]}";
    static const char *cases[][2] = {
        {"$.a.b", "[1, 2.5, {\"c\": \"x\"}]"},
        {"$.a.b[0]", "1"},
        {"$.a.b[-1]", "{\"c\": \"x\"}"},
        {"$.a.b[2].c", "x"},
        {"$..c", "[\"top\", true, \"x\"]"},
        {"$..b", "[[1, 2.5, {\"c\": \"x\"}], 1, 2, 3]"},
        {"$.l[*].b", "[1, 2]"},
        {"$.a.*", "[[1, 2.5, {\"c\": \"x\"}], true, null]"},
        {"$.l[0:2]", "[{\"b\": 1}, {\"b\": 2}]"},
        {"$.u", "h\xc3\xa9llo \xf0\x9f\x98\x80"},
        {"a.c", "True"},
        {"$.a.n", "None"},
        {"$.a.b[1]", "2.5"},
        {"$.missing", ""},
        {"$['a']['c']", "True"},
        {"$.a.b[*]", "[1, 2.5, {\"c\": \"x\"}]"},
        {"$.c[*]", "top"},
        {"$.l[::-1]", "[{\"d\": {\"b\": 3}}, {\"b\": 2}, {\"b\": 1}]"},
        {"$..*", "[{\"b\": [1, 2.5, {\"c\": \"x\"}], \"c\": true, \"n\": null}, \"top\", "
                 "\"h\\u00e9llo \\ud83d\\ude00\", [{\"b\": 1}, {\"b\": 2}, {\"d\": {\"b\": 3}}], "
                 "[1, 2.5, {\"c\": \"x\"}], true, null, \"x\", 1, 2, {\"b\": 3}, 3]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rest[256];
        snprintf(rest, sizeof rest, "{\"json_filter\": \"%s\"}", cases[i][0]);
        JEXPECT("parse", doc, rest, cases[i][1]);
    }
    JEXPECT("parse", "{\"f\": 1e16, \"g\": 1e-5, \"h\": 0.1, \"j\": 100.0, \"k\": \"\\u0001\\t\"}",
            "{\"json_filter\": \"$\"}",
            "{\"f\": 1e+16, \"g\": 1e-05, \"h\": 0.1, \"j\": 100.0, \"k\": \"\\u0001\\t\"}");
    JEXPECT("parse", "{\"u\": [\"\xc3\xa9\"]}", "{\"json_filter\": \"$.u\", \"ensure_ascii\": false}",
            "[\"\xc3\xa9\"]");
    JEXPECT("parse", "{\"u\": [\"\xc3\xa9\"]}", "{\"json_filter\": \"$.u\", \"ensure_ascii\": \"true\"}",
            "[\"\\u00e9\"]");
    JERR("parse", "{bad", "{\"json_filter\": \"$.a\"}", "content is not JSON");
    JERR("parse", "{}", "{\"json_filter\": \"$.a[\"}", "bracket");
    JERR("parse", "{}", "{\"json_filter\": \"$.a(\"}", "cannot be read");
    JERR("parse", "{}", "{\"json_filter\": \"$.l[\\\"c1\\\"}\"}", "bracket");
    JERR("parse", "", "{\"json_filter\": \"$.a\"}", "content is empty");

    const char *d2 = "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"k\": \"v1\"}, "
                     "{\"k\": \"v2\"}]}";
    const char *tail = "\"l\": [{\"k\": \"v1\"}, {\"k\": \"v2\"}]}";
    char want[512];
#define W(head) (snprintf(want, sizeof want, "%s%s", head, tail), want)
    JEXPECT("json_insert", d2, "{\"query\": \"$.a.b\", \"new_value\": \"3\"}",
            W("{\"a\": {\"b\": [1, 2, \"3\"], \"c\": \"hello world\"}, "));
    JEXPECT("json_insert", d2, "{\"query\": \"$.a.b\", \"new_value\": \"0\", \"index\": 0}",
            W("{\"a\": {\"b\": [\"0\", 1, 2], \"c\": \"hello world\"}, "));
    JEXPECT("json_insert", d2,
            "{\"query\": \"$.a.b\", \"new_value\": \"\\\"x\\\"\", \"index\": -1, \"value_decode\": true}",
            W("{\"a\": {\"b\": [1, \"x\", 2], \"c\": \"hello world\"}, "));
    JEXPECT("json_insert", d2, "{\"query\": \"$.a\", \"new_value\": \"{\\\"d\\\": 4}\", \"value_decode\": true}",
            W("{\"a\": {\"b\": [1, 2], \"c\": \"hello world\", \"d\": 4}, "));
    JEXPECT("json_insert", d2, "{\"query\": \"$.a.c\", \"new_value\": \"bye\"}",
            W("{\"a\": {\"b\": [1, 2], \"c\": \"bye\"}, "));
    JEXPECT("json_insert", d2, "{\"query\": \"$.x.y\", \"new_value\": \"new\", \"create_path\": \"True\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"k\": \"v1\"}, {\"k\": \"v2\"}], "
            "\"x\": {\"y\": \"new\"}}");
    JEXPECT("json_insert", d2,
            "{\"query\": \"$.x.arr[1].z\", \"new_value\": \"new\", \"create_path\": \"True\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"k\": \"v1\"}, {\"k\": \"v2\"}], "
            "\"x\": {\"arr\": [{}, {\"z\": \"new\"}]}}");
    JEXPECT("json_insert", d2, "{\"query\": \"$.x.y\", \"new_value\": \"new\", \"create_path\": \"False\"}", d2);
    JEXPECT("json_insert", d2, "{\"query\": \"$.a.c\", \"new_value\": \"\xc3\xa9\", \"ensure_ascii\": false}",
            W("{\"a\": {\"b\": [1, 2], \"c\": \"\xc3\xa9\"}, "));
    JERR("json_insert", d2, "{\"query\": \"$.a\", \"new_value\": \"str\"}", "Cannot insert non-dict value into dict");
    JERR("json_insert", d2, "{\"query\": \"$.a.b\", \"new_value\": \"{bad\", \"value_decode\": true}",
         "Cannot decode new value to json object");

    JEXPECT("json_replace", d2,
            "{\"query\": \"$.a.c\", \"replace_pattern\": \"world\", \"replace_value\": \"there\"}",
            W("{\"a\": {\"b\": [1, 2], \"c\": \"hello there\"}, "));
    JEXPECT("json_replace", d2,
            "{\"query\": \"$.l[*].k\", \"replace_pattern\": \"v\", \"replace_value\": \"w\", \"replace_model\": \"pattern\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"k\": \"w1\"}, {\"k\": \"w2\"}]}");
    JEXPECT("json_replace", d2, "{\"query\": \"$.a.b\", \"replace_value\": \"bb\", \"replace_model\": \"key\"}",
            W("{\"a\": {\"c\": \"hello world\", \"bb\": [1, 2]}, "));
    JEXPECT("json_replace", d2, "{\"query\": \"$.l[*].k\", \"replace_value\": \"kk\", \"replace_model\": \"key\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"kk\": \"v1\"}, {\"kk\": \"v2\"}]}");
    JEXPECT("json_replace", d2, "{\"query\": \"$..k\", \"replace_value\": \"z\", \"replace_model\": \"value\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": [{\"k\": \"z\"}, {\"k\": \"z\"}]}");
    JEXPECT("json_replace", d2,
            "{\"query\": \"$.a.b\", \"replace_value\": \"[9]\", \"replace_model\": \"value\", \"value_decode\": true}",
            W("{\"a\": {\"b\": [9], \"c\": \"hello world\"}, "));
    JERR("json_replace", d2, "{\"query\": \"$.a.b\", \"replace_value\": \"x\", \"replace_model\": \"other\"}",
         "replace_model 'other'");
    JERR("json_replace", d2, "{\"query\": \"$.a.b\", \"replace_value\": \"x\", \"replace_pattern\": \"y\"}",
         "not a string");

    JEXPECT("json_delete", d2, "{\"query\": \"$.a.c\"}", W("{\"a\": {\"b\": [1, 2]}, "));
    JEXPECT("json_delete", d2, "{\"query\": \"$.a.b[0]\"}", W("{\"a\": {\"b\": [2], \"c\": \"hello world\"}, "));
    JEXPECT("json_delete", d2, "{\"query\": \"$.l[*]\"}",
            "{\"a\": {\"b\": [1, 2], \"c\": \"hello world\"}, \"l\": []}");
    JEXPECT("json_delete", d2, "{\"query\": \"$..k\"}", d2);  /* the plugin reads it as $.k */
    JEXPECT("json_delete", d2, "{\"query\": \"nothing\"}", d2);
    JEXPECT("json_delete", d2, "{\"query\": \"a.b\"}", W("{\"a\": {\"c\": \"hello world\"}, "));
#undef W

    /* caps */
    sl_buf big;
    sl_buf_init(&big, 0);
    sl_buf_adds(&big, "{\"a\": [");
    for (int i = 0; i < 100001; i++)
        sl_buf_adds(&big, i ? ",1" : "1");
    sl_buf_adds(&big, "]}");
    JERR("parse", big.data, "{\"json_filter\": \"$.a[*]\"}", "more than 100000");
    sl_buf_release(&big);
    char *q = sl_xmalloc(5000);
    memset(q, 'a', 4999);
    q[4999] = '\0';
    char *rest = sl_xasprintf("{\"json_filter\": \"%s\"}", q);
    JERR("parse", "{}", rest, "longer than");
    free(rest);
    free(q);
}

static void html_check(const char *html, const char *want, const char *want_title)
{
    sl_buf out;
    char *title;
    sl_builtin_html_text(html, strlen(html), &out, &title);
    CHECK(!strcmp(out.data ? out.data : "", want) &&
              (want_title ? title && !strcmp(title, want_title) : !title),
          "html text of %s is '%s' (got '%s', title '%s')", esc(html), esc(want),
          esc(out.data ? out.data : ""), title ? title : "(none)");
    sl_buf_release(&out);
    free(title);
}

static void test_html(void)
{
    html_check("<html><head><title> A &amp; B </title><style>p{x:1}</style>"
               "<script>var a = '<p>no</p>';</script></head>"
               "<body><h1>Head&#x2F;line</h1><p>one\n  two&nbsp;three</p><!-- <p>hidden</p> -->"
               "<ul><li>x</li><li>y &lt;z&gt;</li></ul><nav><a>menu</a></nav>"
               "<table><tr><td>a</td><td>b</td></tr></table>caf&eacute; &#233; &#128512; &bogus; a<b"
               "</body></html>",
               "Head/line\none two three\nx\ny <z>\na b\ncaf\xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80 &bogus; a",
               "A & B");
    html_check("plain text, no tags", "plain text, no tags", NULL);
    html_check("<head><title>t</title><body><p>open head</p>", "open head", "t");
    html_check("<div a='x>y' b=\"<p>\">in</div><br/>after<SCRIPT>x</SCRIPT>end",
               "in\nafterend", NULL);
    html_check("<script>never closed", "", NULL);
    html_check("", "", NULL);

    /* a long title is cut on a character's boundary */
    sl_buf h;
    sl_buf_init(&h, 0);
    sl_buf_adds(&h, "<title>a");
    for (int i = 0; i < 600; i++)
        sl_buf_adds(&h, "\xc3\xa9");
    sl_buf_adds(&h, "</title>x");
    sl_buf out;
    char *title;
    sl_builtin_html_text(h.data, h.len, &out, &title);
    size_t tl = title ? strlen(title) : 0;
    CHECK(tl == 1023 && (unsigned char)title[tl - 2] == 0xc3 && !strcmp(out.data, "x"),
          "a long title is cut within 1024 bytes on a character boundary (%zu)", tl);
    free(title);
    sl_buf_release(&out);
    sl_buf_release(&h);
}

/* The HTML text the web and search built-ins share, and the UTF-8 it
 * writes. */
/* workflow: {app: ID} comes from the settings or the server's store only. */
static void test_workflow_app_binding(void)
{
    sl_err err = {0};
    sl_bindings *b = sl_bindings_new();
    const char *y = "tools:\n  wf: {workflow: {app: 8e35}}\n";
    CHECK(!sl_bindings_parse_text(b, y, strlen(y), "s.yml", true, &err) &&
              !strcmp(sl_binding_kind(sl_bindings_get(b, "wf")), "workflow") &&
              !strcmp(sl_binding_workflow_app(sl_bindings_get(b, "wf")), "8e35") &&
              !sl_binding_workflow_path(sl_bindings_get(b, "wf")),
          "settings bind a workflow tool to a server's app by its id");
    sl_err_clear(&err);
    CHECK(sl_bindings_parse_text(b, y, strlen(y), "tools/bindings.yml", false, &err) &&
              strstr(err.msg, "not by a server's app id"),
          "a bundle may not: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    const char *bad = "tools:\n  wf: {workflow: {app: 8e35, path: x}}\n";
    CHECK(sl_bindings_parse_text(b, bad, strlen(bad), "s.yml", true, &err) &&
              strstr(err.msg, "{app: ID}"),
          "{app: ID} alone: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_bindings_free(b);
}

static void test_html_decode(void)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    const char *in = "a&amp;b &lt;i&gt; caf&eacute; cr&egrave;me &frac12; &#x1F600;&#65; &bogus; "
                     "&#xD800; & end&";
    sl_builtin_html_decode(in, strlen(in), &b);
    const char *want = "a&b <i> caf\xc3\xa9 cr\xc3\xa8me \xc2\xbd \xf0\x9f\x98\x80" "A &bogus; "
                       "\xef\xbf\xbd & end&";
    CHECK(b.data && !strcmp(b.data, want), "HTML references decoded, unknown ones kept (%s)",
          b.data ? b.data : "");
    sl_buf_release(&b);
    sl_buf_init(&b, 0);
    sl_buf_add_utf8(&b, 0x7F);
    sl_buf_add_utf8(&b, 0x10FFFF);
    sl_buf_add_utf8(&b, 0x110000);
    sl_buf_add_utf8(&b, 0);
    CHECK(b.len == 1 + 4 + 3 + 3 && !memcmp(b.data, "\x7f\xf4\x8f\xbf\xbf\xef\xbf\xbd\xef\xbf\xbd", 11),
          "sl_buf_add_utf8: the last code point, and U+FFFD past it and for NUL");
    sl_buf_release(&b);
}

int main(void)
{
    test_html_decode();
    test_workflow_app_binding();
    test_registry();
    test_cfg();
    int port = 0;
    pid_t pid = start_stand_in("vendor_standin", true, &port);
    if (pid > 0) {
        vendor_url = sl_xasprintf("http://127.0.0.1:%d/vendor", port);
        test_tavily();
        test_jina();
        test_firecrawl();
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        free(vendor_url);
    } else {
        CHECK(0, "tests/tools/vendor_standin.py did not start");
    }
    test_time();
    test_json();
    test_html();
    return tap_done();
}
