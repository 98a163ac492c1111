/*
 * builtin_searxng — Dify's `searxng` provider: searxng_search, the results
 * of a SearXNG instance for a query.
 *
 * SearXNG is software anyone runs, so there is no default: the instance's
 * URL comes from the binding (base_url) or the environment
 * (SEARXNG_BASE_URL), as Dify's plugin takes it from its provider
 * credential searxng_base_url.  What sluice sends: GET {base}/search
 * ?q=QUERY&time_range=T&format=json&categories=SEARCH_TYPE ("/search" is
 * not added when base already ends with it).  The plugin sends the same
 * parameters to the base URL itself, which SearXNG redirects to /search.
 * time_range is sent when the call gives one: Dify hands the plugin
 * every form setting, an unset one as "" (its code's fallback to "day"
 * is for a call without the key, which a workflow never makes), and
 * SearXNG reads an empty time_range as none.  search_type is "general"
 * by default.
 *
 * The result is the plugin's: one JSON message per item of the answer's
 * "results" (the item as SearXNG sent it), and no text; when there is no
 * result, the text "No results found, get response: " and the answer as
 * Python shows bytes (b'…').  An instance answers 403 when its settings
 * do not enable the json format; the error says so.
 */
#include "tools/builtin.h"

#include <stdlib.h>
#include <string.h>

#include "net/http.h"

/* Python's repr() of the bytes s[0..n), appended to out. */
void sl_builtin_py_bytes_repr(const char *s, size_t n, sl_buf *out)
{
    bool dq = memchr(s, '\'', n) && !memchr(s, '"', n);
    char q = dq ? '"' : '\'';
    sl_buf_addc(out, 'b');
    sl_buf_addc(out, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q) {
            sl_buf_addc(out, '\\');
            sl_buf_addc(out, (char)c);
        } else if (c == '\t') {
            sl_buf_adds(out, "\\t");
        } else if (c == '\n') {
            sl_buf_adds(out, "\\n");
        } else if (c == '\r') {
            sl_buf_adds(out, "\\r");
        } else if (c < 0x20 || c >= 0x7F) {
            sl_buf_addf(out, "\\x%02x", c);
        } else {
            sl_buf_addc(out, (char)c);
        }
    }
    sl_buf_addc(out, q);
}

static int searxng_search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                          const sl_value *args, sl_tool_result *res, sl_err *err)
{
    const char *base = cfg ? cfg->base_url : NULL;
    if (!base || !*base)
        return sl_err_set(err, SL_EINVAL,
                          "searxng: no SearXNG instance is configured (SearXNG is software "
                          "you run; there is no public default): set SEARXNG_BASE_URL in "
                          "sluice's environment, or bind it in sluice.yml: tools: {searxng: "
                          "{builtin: {base_url: https://searx.example.org}}} "
                          "(docs/tools.md, \"SearXNG\")");
    char *t1, *t2, *t3 = NULL;
    const char *query = sl_builtin_arg_str(args, "query", "", &t1);
    const char *type = sl_builtin_arg_str(args, "search_type", "general", &t2);
    const char *range = sl_builtin_arg_str(args, "time_range", "", &t3);
    int rc = 0;
    char *url = NULL;
    sl_buf body;
    sl_buf_init(&body, 0);
    if (!*query) {
        rc = sl_err_set(err, SL_EINVAL, "searxng: the query is empty; give searxng_search a "
                        "query");
        goto done;
    }
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        bl--;
    bool has_search = bl >= 7 && !memcmp(base + bl - 7, "/search", 7);
    char *eq = sl_http_escape(query), *et = sl_http_escape(*type ? type : "general");
    char *er = *range ? sl_http_escape(range) : NULL;
    url = sl_xasprintf("%.*s%s?q=%s%s%s&format=json&categories=%s", (int)bl, base,
                       has_search ? "" : "/search", eq, er ? "&time_range=" : "", er ? er : "",
                       et);
    free(eq);
    free(et);
    free(er);
    static const char *const headers[] = {"Accept: application/json", NULL};
    sl_builtin_req rq = {.vendor = "searxng", .method = "GET", .url = url, .headers = headers};
    long status = 0;
    if ((rc = sl_builtin_fetch(ctx, &rq, &status, &body, NULL, err)))
        goto done;
    if (status == 403) {
        rc = sl_err_set(err, SL_EIO, "searxng: the SearXNG instance at %.*s answered 403 "
                        "Forbidden: it does not serve the json format; enable it in the "
                        "instance's settings.yml (search: formats: [html, json])", (int)bl,
                        base);
        goto done;
    }
    if (status != 200) {
        rc = sl_builtin_status_error(cfg, "searxng", status, body.data ? body.data : "",
                                     body.len, err);
        goto done;
    }
    json_error_t je;
    sl_value *answer = json_loadb(body.data ? body.data : "", body.len, 0, &je);
    if (!json_is_object(answer)) {
        json_decref(answer);
        rc = sl_err_set(err, SL_EIO, "searxng: the answer of %.*s is not a JSON object (%s); "
                        "is base_url a SearXNG instance?", (int)bl, base,
                        answer ? "another JSON value" : je.text);
        goto done;
    }
    const sl_value *results = json_object_get(answer, "results");
    size_t n = 0;
    if (json_is_array(results)) {
        size_t i;
        const sl_value *r;
        json_array_foreach(results, i, r) {
            if (!json_is_object(r))
                continue;
            if ((rc = sl_builtin_json_out(res, ctx, json_incref((sl_value *)r), err)))
                break;
            n++;
        }
    }
    json_decref(answer);
    if (!rc && !n) {
        sl_buf text;
        sl_buf_init(&text, 0);
        sl_buf_adds(&text, "No results found, get response: ");
        sl_builtin_py_bytes_repr(body.data ? body.data : "", body.len, &text);
        rc = sl_builtin_text(res, ctx, text.data, text.len, err);
        sl_buf_release(&text);
    }
done:
    sl_buf_release(&body);
    free(url);
    free(t1);
    free(t2);
    free(t3);
    return rc;
}

const sl_builtin_tool sl_builtin_searxng_tools[] = {
    {"searxng_search", "Perform searches on SearXNG and get results.",
     "{\"type\": \"object\", \"properties\": {"
     "\"query\": {\"type\": \"string\", \"description\": \"Key words for searching\"}, "
     "\"search_type\": {\"type\": \"string\", \"description\": \"Search the web using SearXNG, "
     "a privacy-respecting metasearch engine\", \"enum\": [\"general\", \"images\", \"videos\", "
     "\"news\", \"map\", \"music\", \"it\", \"science\", \"files\", \"social_media\"], "
     "\"default\": \"general\"}, "
     "\"time_range\": {\"type\": \"string\", \"description\": \"corresponding to the SearXNG "
     "API's time_range parameter, also depends on whether the search engine supports it\", "
     "\"enum\": [\"day\", \"week\", \"month\", \"year\"]}}, "
     "\"required\": [\"query\"]}",
     searxng_search},
};
const size_t sl_builtin_searxng_n =
    sizeof sl_builtin_searxng_tools / sizeof sl_builtin_searxng_tools[0];
