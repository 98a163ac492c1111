/*
 * builtins_search — the search built-ins (searxng, duckduckgo, wikipedia,
 * arxiv; tools/builtin.h): their readers on fixed answers (DuckDuckGo's
 * HTML, MediaWiki's JSON, arXiv's Atom, Python's bytes repr), and calls
 * against the vendors' stand-ins (tests/tools/search_standin.py) for what
 * the workflow cases do not reach: argument checks, the query's cut, the
 * SearXNG instance no one configured.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tap.h"
#include "tools/builtin.h"
#include "util.h"

static char base[64];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double stop_at;

/* A run stopped 0.3 s after the call starts. */
static bool stop_soon(void *ud)
{
    (void)ud;
    if (!stop_at)
        stop_at = now_s() + 0.3;
    return now_s() >= stop_at;
}

/* Calls provider/tool with args (JSON text) against the stand-in (base_url
 * root + sub, or none when sub is NULL); the text, the json messages as
 * compact JSON after " JSON:" when there are any, or "ERR: msg". */
static char *call(const char *provider, const char *sub, const char *tool, const char *args)
{
    const sl_builtin_provider *p = sl_builtin_provider_find(provider);
    if (!p)
        return sl_xstrdup("ERR: no provider");
    char *url = sub ? sl_xasprintf("%s%s", base, sub) : NULL;
    sl_toolset *ts = sl_builtin_provider_toolset(p, NULL, url, NULL, false, "the test");
    free(url);
    sl_tool_ctx ctx = {.timeout_s = 10, .allow_private = true};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J(args);
    sl_err err = {0};
    char *out;
    if (sl_toolset_call(ts, &ctx, tool, a, &res, &err)) {
        out = sl_xasprintf("ERR: %s", err.msg);
    } else if (json_array_size(res.json)) {
        char *j = show(res.json);
        out = sl_xasprintf("%s JSON:%s", res.text.data ? res.text.data : "", j);
        free(j);
    } else {
        out = sl_xstrdup(res.text.data ? res.text.data : "");
    }
    json_decref(a);
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    sl_toolset_free(ts);
    return out;
}

/* Calls id's tool as the registry binds it (the environment's settings). */
static char *call_registry(const char *id, const char *tool, const char *args)
{
    sl_err err = {0};
    const sl_binding *b = sl_bindings_find(sl_builtins(), id, NULL);
    sl_toolset *ts = b ? sl_binding_toolset(b, false, &err) : NULL;
    if (!ts) {
        sl_err_clear(&err);
        return sl_xstrdup("ERR: not bound");
    }
    sl_tool_ctx ctx = {.timeout_s = 10, .allow_private = true};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J(args);
    char *out;
    if (sl_toolset_call(ts, &ctx, tool, a, &res, &err)) {
        out = sl_xasprintf("ERR: %s", err.msg);
    } else {
        char *j = show(res.json);
        out = sl_xasprintf("%s JSON:%s", res.text.data ? res.text.data : "", j);
        free(j);
    }
    json_decref(a);
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    return out;
}

#define EXPECT_HAS(got, part, what)                                                          \
    CHECK(strstr(got, part), "%s: has '%s' (got %s)", what, esc(part), esc(got))

static void test_registry(void)
{
    const char *ids[][3] = {
        {"searxng", "langgenius/searxng/searxng", "searxng_search"},
        {"duckduckgo", "langgenius/duckduckgo/duckduckgo", "ddgo_search"},
        {"wikipedia", "langgenius/wikipedia/wikipedia", "wikipedia_search"},
        {"arxiv", "langgenius/arxiv/arxiv", "arxiv_search"},
    };
    for (size_t i = 0; i < 4; i++) {
        for (int k = 0; k < 2; k++) {
            const sl_binding *b = sl_bindings_find(sl_builtins(), ids[i][k], NULL);
            CHECK(b && !strcmp(sl_binding_kind(b), "builtin"), "%s is a built-in", ids[i][k]);
            sl_err err = {0};
            sl_toolset *ts = b ? sl_binding_toolset(b, false, &err) : NULL;
            sl_value *list = NULL;
            CHECK(ts && !sl_toolset_list(ts, NULL, &list, &err) &&
                  sl_binding_find_tool(list, ids[i][2]),
                  "%s lists %s", ids[i][k], ids[i][2]);
            json_decref(list);
            sl_err_clear(&err);
        }
    }
    /* the plugin's parameter names */
    const sl_value *props;
    sl_err err = {0};
    sl_value *list = NULL;
    sl_toolset *ts = sl_binding_toolset(sl_bindings_find(sl_builtins(), "duckduckgo", NULL),
                                        false, &err);
    sl_toolset_list(ts, NULL, &list, &err);
    props = json_object_get(json_object_get(sl_binding_find_tool(list, "ddgo_search"),
                                            "inputSchema"), "properties");
    CHECK(json_object_get(props, "query") && json_object_get(props, "max_results") &&
          json_object_get(props, "require_summary") && json_object_get(props, "proxy_server"),
          "ddgo_search takes query, max_results, require_summary, proxy_server");
    json_decref(list);
    sl_err_clear(&err);
}

static void test_bytes_repr(void)
{
    struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"{\"a\": []}", "b'{\"a\": []}'"},
        {"it's", "b\"it's\""},
        {"it's \"x\"", "b'it\\'s \"x\"'"},
        {"a\\b\n\t\r\x01\x7f\xc3\xa9", "b'a\\\\b\\n\\t\\r\\x01\\x7f\\xc3\\xa9'"},
        {"", "b''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_builtin_py_bytes_repr(cases[i].in, strlen(cases[i].in), &b);
        CHECK(b.data && !strcmp(b.data, cases[i].want), "repr(%s) = %s (got %s)",
              esc(cases[i].in), esc(cases[i].want), esc(b.data ? b.data : ""));
        sl_buf_release(&b);
    }
}

static void test_ddg_page(void)
{
    const char *page =
        "<html><head><title>x</title><script>var s = '<div><h2>no</h2><a href=\"/s\">s</a>"
        "</div>';</script></head><body>"
        "<div class=\"result\"><div class=\"result__body\">"
        "<h2><a class=\"result__a\" href=\"https://duckduckgo.com/y.js?ad_domain=x\">Ad</a></h2>"
        "<a class=\"result__snippet\" href=\"https://duckduckgo.com/y.js?ad_domain=x\">buy</a>"
        "</div></div>"
        "<div class=\"result__body\"><h2><a href=\"https://a.example/x%20y\">A &amp; "
        "<b>bold</b></a></h2>"
        "<div><a href=\"https://other.example/\">not a child</a></div>"
        "<a class=\"result__snippet\" href=\"https://a.example/x%20y\">snip <b>pet</b> "
        "&#x27;q&#39; &amp;lt;i&amp;gt;</a></div>"
        "<DIV><H2><A HREF='x'>B</A></H2><A HREF='//duckduckgo.com/l/?uddg=https%3A%2F%2F"
        "b.example%2Fc%252B%252B&amp;rut=1'>b body</A></DIV>"
        "<div><h2><a href=\"https://a.example/x%20y\">duplicate</a></h2>"
        "<a href=\"https://a.example/x%20y\">dup</a></div>"
        "<div><h2>no link</h2></div>"
        "<div class=\"nav-link\"><form><input type=\"submit\" value=\"Next\">"
        "<input type=\"hidden\" name=\"q\" value=\"a b&amp;c\"><input type=hidden name=s "
        "value=10><input type=\"text\" name=\"no\" value=\"1\"></form></div>"
        "</body></html>";
    sl_value *results = json_array(), *seen = json_object();
    char *next = NULL;
    int rc = sl_builtin_ddg_page(page, strlen(page), results, 0, seen, &next);
    char *got = show(results);
    CHECK(rc == 0 && !strcmp(got, "[{\"title\":\"A & bold\",\"href\":\"https://a.example/x+y\","
                                  "\"body\":\"snip pet 'q' <i>\"},{\"title\":\"B\",\"href\":"
                                  "\"https://b.example/c++\",\"body\":\"b body\"}]"),
          "a page's results: ad, duplicate and linkless blocks skipped, links unwrapped and "
          "decoded, entities decoded twice (got %s)", esc(got));
    CHECK(next && !strcmp(next, "q=a%20b%26c&s=10"), "the next page's form (got %s)",
          next ? next : "(none)");
    free(got);
    free(next);
    /* max stops early; seen carries over */
    json_array_clear(results);
    rc = sl_builtin_ddg_page(page, strlen(page), results, 1, seen, &next);
    CHECK(rc == 0 && json_array_size(results) == 0, "links seen on an earlier page are not "
          "repeated (%zu)", json_array_size(results));
    free(next);
    json_object_clear(seen);
    rc = sl_builtin_ddg_page(page, strlen(page), results, 1, seen, &next);
    CHECK(rc == 0 && json_array_size(results) == 1, "max_results bounds a page (%zu)",
          json_array_size(results));
    free(next);
    const char *none = "<html><body><div class=no-results>No  results.</div></body></html>";
    CHECK(sl_builtin_ddg_page(none, strlen(none), results, 0, seen, &next) == 1 && !next,
          "\"No  results.\" is no results");
    const char *other = "<html><body><p>captcha</p></body></html>";
    CHECK(sl_builtin_ddg_page(other, strlen(other), results, 0, seen, &next) == -1 && !next,
          "a page without result blocks is not a results page");
    /* deep and unclosed markup stays bounded */
    sl_buf deep;
    sl_buf_init(&deep, 0);
    for (int i = 0; i < 5000; i++)
        sl_buf_adds(&deep, "<div><h2><a href='u'>t</a></h2><a href='u'>");
    json_array_clear(results);
    json_object_clear(seen);
    rc = sl_builtin_ddg_page(deep.data, deep.len, results, 0, seen, &next);
    CHECK(rc == 0 && json_array_size(results) == 1, "nested blocks: one link, once (%zu)",
          json_array_size(results));
    free(next);
    sl_buf_release(&deep);
    json_decref(results);
    json_decref(seen);
}

static void test_wiki(void)
{
    sl_err err = {0};
    sl_value *found = J("{\"query\": {\"search\": [{\"title\": \"a b\"}, {\"title\": \"Gone\"}, "
                        "{\"title\": \"Amb\"}, {\"title\": \"R\"}, {\"title\": \"Fourth\"}]}}");
    sl_value *titles = sl_builtin_wiki_titles(found, 4, &err);
    char *s = show(titles);
    CHECK(s && !strcmp(s, "[\"a b\",\"Gone\",\"Amb\",\"R\"]"), "the first titles (got %s)", s);
    free(s);
    sl_value *pages = J("{\"query\": {\"normalized\": [{\"from\": \"a b\", \"to\": \"A b\"}], "
                        "\"redirects\": [{\"from\": \"R\", \"to\": \"Target\"}], \"pages\": {"
                        "\"1\": {\"title\": \"A b\", \"extract\": \"first\"}, "
                        "\"-1\": {\"title\": \"Gone\", \"missing\": \"\"}, "
                        "\"2\": {\"title\": \"Amb\", \"extract\": \"x\", \"pageprops\": "
                        "{\"disambiguation\": \"\"}}, "
                        "\"3\": {\"title\": \"Target\"}}}}");
    sl_buf out;
    int rc = sl_builtin_wiki_text(titles, pages, &out, &err);
    CHECK(rc == 0 && out.data && !strcmp(out.data, "Page: a b\nSummary: first\n\nPage: R\n"
                                                  "Summary: "),
          "pages: normalised, redirected, missing and disambiguation left out, no extract "
          "empty (got %s)", esc(out.data ? out.data : ""));
    sl_buf_release(&out);
    sl_value *v2 = J("{\"query\": {\"pages\": [{\"title\": \"Fourth\", \"extract\": \"f2\"}]}}");
    sl_value *t4 = J("[\"Fourth\", \"Nowhere\"]");
    rc = sl_builtin_wiki_text(t4, v2, &out, &err);
    CHECK(rc == 0 && !strcmp(out.data, "Page: Fourth\nSummary: f2"), "formatversion 2's list "
          "(got %s)", esc(out.data));
    sl_buf_release(&out);
    sl_value *none = J("{\"query\": {\"pages\": {}}}");
    rc = sl_builtin_wiki_text(t4, none, &out, &err);
    CHECK(rc == 0 && !strcmp(out.data, "No good Wikipedia Search Result was found"),
          "none left (got %s)", esc(out.data));
    sl_buf_release(&out);
    sl_value *e = J("{\"error\": {\"code\": \"x\", \"info\": \"bad\\nthing\"}}");
    CHECK(!sl_builtin_wiki_titles(e, 3, &err) && strstr(err.msg, "answered an error: bad\\nthing"),
          "the API's error (got %s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_value *odd = J("{\"query\": {\"search\": 7}}");
    CHECK(!sl_builtin_wiki_titles(odd, 3, &err) && strstr(err.msg, "no query.search"),
          "an answer that is not a search's (got %s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
    CHECK(sl_builtin_wiki_text(t4, odd, &out, &err) == -1 && strstr(err.msg, "no query.pages"),
          "an answer that is not a pages answer (got %s)", err.msg ? err.msg : "");
    sl_buf_release(&out);
    sl_err_clear(&err);
    json_decref(found);
    json_decref(titles);
    json_decref(pages);
    json_decref(v2);
    json_decref(t4);
    json_decref(none);
    json_decref(e);
    json_decref(odd);
}

static void expect_arxiv(const char *xml, const char *want, const char *what)
{
    sl_buf out;
    sl_err err = {0};
    int rc = sl_builtin_arxiv_text(xml, strlen(xml), &out, &err);
    const char *got = rc ? err.msg : out.data ? out.data : "";
    bool ok = !strncmp(want, "ERR: ", 5) ? rc && strstr(got, want + 5) : !rc && !strcmp(got, want);
    CHECK(ok, "%s (got %s%s)", what, rc ? "ERR: " : "", esc(got));
    if (!rc)
        sl_buf_release(&out);
    sl_err_clear(&err);
}

#define ENTRY(id, upd, title, summary, authors)                                               \
    "<entry><id>" id "</id><updated>" upd "</updated><published>2020-01-01T00:00:00Z"      \
    "</published><title>" title "</title><summary>" summary "</summary>" authors "</entry>"

static void test_arxiv(void)
{
    expect_arxiv("<?xml version='1.0'?><!-- c --><!DOCTYPE feed [<!ENTITY x 'boom'>]>"
                 "<feed xmlns='http://www.w3.org/2005/Atom'><title>feed title</title>"
                 ENTRY("1", "2024-12-31T23:30:00-01:00", " A\n\t title\xc2\xa0 x ",
                       "&lt;s&gt; &#x1F600; &x; <![CDATA[<c>]]>",
                       "<author><name>N1</name><name>ignored</name></author>"
                       "<author><arxiv:affiliation>U</arxiv:affiliation></author>"
                       "<author><name>N&amp;3</name></author>")
                 "</feed>",
                 "Published: 2025-01-01\nTitle:  A title x \nAuthors: N1, , N&3\n"
                 "Summary: <s> \xf0\x9f\x98\x80 &x; <c>",
                 "an entry: the UTC date, the title collapsed, references and CDATA read");
    expect_arxiv("<feed>" ENTRY("", "2024-01-01T00:00:00Z", "no id", "s", "")
                 "<entry><id>2</id><published>2020-01-01T00:00:00Z</published></entry>"
                 ENTRY("3", "2024-01-02", "ok", "s3", "") ENTRY("4", "2024-01-03T05Z", "t4",
                                                                 "s4", "")
                 ENTRY("5", "2024-01-04T00:00:00.123+05:30", "t5", "s5", "")
                 ENTRY("6", "2024-01-05T00:00:00Z", "t6", "s6", "") "</feed>",
                 "Published: 2024-01-02\nTitle: ok\nAuthors: \nSummary: s3\n\n"
                 "Published: 2024-01-03\nTitle: t4\nAuthors: \nSummary: s4\n\n"
                 "Published: 2024-01-03\nTitle: t5\nAuthors: \nSummary: s5",
                 "entries without an id or a date are skipped; three are kept");
    expect_arxiv("<atom:feed xmlns:atom='http://www.w3.org/2005/Atom'><atom:entry><atom:id>1"
                 "</atom:id><atom:updated>2024-02-29T12:00:00Z</atom:updated><atom:published>"
                 "2024-02-29</atom:published><atom:title>p<b>x</b>tail</atom:title>"
                 "<other:title>no</other:title></atom:entry></atom:feed>",
                 "Published: 2024-02-29\nTitle: p\nAuthors: \nSummary: ",
                 "atom: prefixes; an element's text ends at its first child");
    expect_arxiv("<feed></feed>", "No good Arxiv Result was found", "an empty feed");
    expect_arxiv("<feed/>", "No good Arxiv Result was found", "an empty feed, self-closed");
    expect_arxiv("<feed>" ENTRY("1", "2023-02-29T00:00:00Z", "t", "s", "") "</feed>",
                 "ERR: date '2023-02-29T00:00:00Z' is not an ISO 8601 time", "a bad date");
    expect_arxiv("<html><body>502</body></html>", "ERR: not an Atom feed", "not a feed");
    expect_arxiv("<feed><entry><id>1</id><title>cut", "ERR: cut short", "a feed cut short");
    /* the text is cut to 4000 characters */
    sl_buf big;
    sl_buf_init(&big, 0);
    sl_buf_adds(&big, "<feed><entry><id>1</id><updated>2024-01-01T00:00:00Z</updated>"
                      "<published>2024-01-01T00:00:00Z</published><summary>");
    for (int i = 0; i < 5000; i++)
        sl_buf_adds(&big, "\xc3\xa9");
    sl_buf_adds(&big, "</summary></entry></feed>");
    sl_buf out;
    sl_err err = {0};
    int rc = sl_builtin_arxiv_text(big.data, big.len, &out, &err);
    CHECK(rc == 0 && sl_utf8_chars(out.data, out.len) == 4000 && sl_utf8_valid(out.data, out.len),
          "the text is cut to 4000 characters (%zu)", rc ? 0 : sl_utf8_chars(out.data, out.len));
    if (!rc)
        sl_buf_release(&out);
    sl_buf_release(&big);
    /* deep nesting stays bounded */
    sl_buf deep;
    sl_buf_init(&deep, 0);
    sl_buf_adds(&deep, "<feed>");
    for (int i = 0; i < 10000; i++)
        sl_buf_adds(&deep, "<entry>");
    for (int i = 0; i < 10000; i++)
        sl_buf_adds(&deep, "</entry>");
    sl_buf_adds(&deep, "</feed>");
    rc = sl_builtin_arxiv_text(deep.data, deep.len, &out, &err);
    CHECK(rc == 0 && !strcmp(out.data, "No good Arxiv Result was found"), "deep nesting");
    if (!rc)
        sl_buf_release(&out);
    sl_buf_release(&deep);
    sl_err_clear(&err);
}

static void test_calls(void)
{
    int port = 0;
    pid_t pid = start_stand_in("search_standin", true, &port);
    if (pid < 0) {
        SKIP("the search stand-ins", "python3 tests/tools/search_standin.py did not start");
        return;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    char *got;

    unsetenv("SEARXNG_BASE_URL");
    got = call("searxng", NULL, "searxng_search", "{\"query\": \"x\"}");
    EXPECT_HAS(got, "ERR: searxng: no SearXNG instance is configured", "searxng unbound");
    EXPECT_HAS(got, "SEARXNG_BASE_URL", "searxng unbound names the variable");
    EXPECT_HAS(got, "tools: {searxng: {builtin: {base_url:", "searxng unbound names the binding");
    free(got);
    /* the registry's built-ins read their API root from the environment at
     * each call */
    char *env = sl_xasprintf("%s/searxng", base);
    setenv("SEARXNG_BASE_URL", env, 1);
    free(env);
    env = sl_xasprintf("%s/wikipedia/{lang}", base);
    setenv("WIKIPEDIA_BASE_URL", env, 1);
    free(env);
    got = call_registry("searxng", "searxng_search", "{\"query\": \"env\"}");
    EXPECT_HAS(got, "\"title\":\"env result 1\"", "SEARXNG_BASE_URL is the instance");
    free(got);
    got = call_registry("langgenius/wikipedia/wikipedia", "wikipedia_search",
                        "{\"query\": \"turing\", \"language\": \"de\"}");
    EXPECT_HAS(got, "Summary: Alan Mathison Turing war", "WIKIPEDIA_BASE_URL is the wiki");
    free(got);
    unsetenv("SEARXNG_BASE_URL");
    unsetenv("WIKIPEDIA_BASE_URL");

    got = call("searxng", "/searxng", "searxng_search",
               "{\"query\": \"q\", \"time_range\": \"\", \"search_type\": \"\"}");
    EXPECT_HAS(got, "\"content\":\"q=q categories=general format=json\"",
               "an empty time_range is left out; an empty search_type is general");
    free(got);
    got = call("searxng", "/searxng", "searxng_search",
               "{\"query\": \"q\", \"time_range\": \"year\", \"search_type\": \"it\"}");
    EXPECT_HAS(got, "\"content\":\"q=q categories=it time_range=year format=json\"",
               "time_range and search_type are sent");
    free(got);
    got = call("searxng", "/searxng", "searxng_search", "{\"query\": \"\"}");
    EXPECT_HAS(got, "ERR: searxng: the query is empty", "searxng without a query");
    free(got);

    got = call("duckduckgo", "/ddg", "ddgo_search", "{\"query\": \"k\", \"max_results\": 2.5}");
    CHECK(strstr(got, "k & result 3") && !strstr(got, "k & result 4"),
          "max_results 2.5 gives 3 (got %s)", esc(got));
    free(got);
    got = call("duckduckgo", "/ddg", "ddgo_search", "{\"query\": \"k\", \"max_results\": \"x\"}");
    EXPECT_HAS(got, "ERR: duckduckgo: max_results must be a number", "max_results not a number");
    free(got);
    got = call("duckduckgo", "/ddg", "ddgo_search",
               "{\"query\": \"k\", \"proxy_server\": \"http://p:3128\"}");
    EXPECT_HAS(got, "ERR: duckduckgo: proxy_server is not supported", "a proxy is refused");
    free(got);
    got = call("duckduckgo", "/ddg", "ddgo_search", "{\"query\": \"\"}");
    EXPECT_HAS(got, "ERR: duckduckgo: the query is empty", "ddgo_search without a query");
    free(got);
    got = call("duckduckgo", "/ddg", "ddgo_search", "{\"query\": \"k\", \"max_results\": 50}");
    CHECK(strstr(got, "k & result 23") && !strstr(got, "k & result 24"),
          "every page up to the last (got %.200s)", esc(got));
    free(got);

    got = call("wikipedia", "/wikipedia/{lang}", "wikipedia_search",
               "{\"query\": \"!status 403\", \"language\": \"en\"}");
    CHECK(strstr(got, "ERR: wikipedia: the API answered 403 (Forbidden): <h1>") &&
          !strstr(got, "API key"), "403 from a vendor that takes no key names no key (got %s)",
          esc(got));
    free(got);
    got = call("wikipedia", "/wikipedia/{lang}", "wikipedia_search", "{\"query\": \"\"}");
    EXPECT_HAS(got, "ERR: wikipedia: Please input query", "wikipedia without a query");
    free(got);
    got = call("wikipedia", "/wikipedia/{lang}", "wikipedia_search",
               "{\"query\": \"turing\", \"language\": \"../x\"}");
    EXPECT_HAS(got, "Page: Alan Turing\nSummary: Alan Mathison Turing (23 June",
               "a language that is not a code is English");
    free(got);
    got = call("wikipedia", "/wikipedia/{lang}", "wikipedia_search",
               "{\"query\": \"turing\", \"language\": \"zh-min-nan\"}");
    EXPECT_HAS(got, "No good Wikipedia Search Result was found", "a code with subtags is kept");
    free(got);

    sl_buf q;
    sl_buf_init(&q, 0);
    sl_buf_adds(&q, "{\"query\": \"");
    for (int i = 0; i < 400; i++)
        sl_buf_adds(&q, "\xc3\xa9");
    sl_buf_adds(&q, "\"}");
    got = call("arxiv", "/arxiv", "arxiv_search", q.data);
    sl_buf want;
    sl_buf_init(&want, 0);
    sl_buf_adds(&want, "search_query=");
    for (int i = 0; i < 300; i++)
        sl_buf_adds(&want, "\xc3\xa9");
    sl_buf_adds(&want, " id_list=");
    EXPECT_HAS(got, want.data, "the query is cut to 300 characters");
    free(got);
    sl_buf_release(&q);
    sl_buf_release(&want);
    got = call("arxiv", "/arxiv", "arxiv_search", "{}");
    EXPECT_HAS(got, "ERR: arxiv: Please input query", "arxiv without a query");
    free(got);

    /* a stopped run ends a slow call at once */
    const sl_builtin_provider *p = sl_builtin_provider_find("arxiv");
    char *url = sl_xasprintf("%s/arxiv", base);
    sl_toolset *ts = sl_builtin_provider_toolset(p, NULL, url, NULL, false, "the test");
    sl_tool_ctx ctx = {.timeout_s = 10, .allow_private = true, .cancelled = stop_soon};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_value *a = J("{\"query\": \"!slow 5\"}");
    sl_err err = {0};
    double t0 = now_s();
    int rc = sl_toolset_call(ts, &ctx, "arxiv_search", a, &res, &err);
    double took = now_s() - t0;
    CHECK(rc == -1 && err.code == SL_ECANCELED && took < 2, "a stopped run ends the call "
          "(%.2f s): %s", took, err.msg ? err.msg : "");
    sl_err_clear(&err);
    json_decref(a);
    sl_tool_result_release(&res);
    sl_toolset_free(ts);
    free(url);

    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    test_registry();
    test_bytes_repr();
    test_ddg_page();
    test_wiki();
    test_arxiv();
    test_calls();
    return tap_done();
}
