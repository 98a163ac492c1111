/*
 * builtin_wikipedia — Dify's `wikipedia` provider: wikipedia_search, the
 * introductions of the first Wikipedia articles a search finds.
 *
 * Dify's plugin uses the wikipedia package: a search (10 titles, of which
 * it keeps 3), then for each title a request for the page's info and
 * another for its introduction as plain text; missing pages and
 * disambiguation pages are left out.  sluice asks MediaWiki's action API
 * the same in two requests, GET {root}/w/api.php with
 *   action=query&format=json&list=search&srprop=&srlimit=3&srsearch=QUERY
 *   action=query&format=json&prop=extracts|pageprops&ppprop=disambiguation
 *     &exintro=&explaintext=&redirects=&titles=T1|T2|T3
 * root being https://{lang}.wikipedia.org unless the binding gives another
 * base_url ("{lang}" in it, if any, becomes the language).  QUERY is the
 * query cut to 300 characters.  The language is the call's `language` when
 * it reads as a language code (two or three letters, optionally followed
 * by -subtags, or "simple"), else "en", as the package falls back to
 * English for a language it does not know.
 *
 * The text is the plugin's: "Page: {title as the search found it}\n
 * Summary: {introduction}" for each page, joined by a blank line and cut
 * to 4000 characters; "No good Wikipedia Search Result was found" when
 * none is left.  Dify passes that text through the model's summary,
 * which gives text this short back as it is.  An error the API answers
 * ({"error": {"info": …}}) fails the call with its words.
 */
#include "tools/builtin.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

#define WIKI_URL "https://{lang}.wikipedia.org"
#define QUERY_CHARS 300
#define TOP_K 3
#define TEXT_CHARS 4000

/* ---- answers ---- */

static int api_error(const sl_value *answer, sl_err *err)
{
    const sl_value *e = json_object_get(answer, "error");
    if (!e)
        return 0;
    const char *info = json_string_value(json_object_get(e, "info"));
    const char *code = json_string_value(json_object_get(e, "code"));
    char ex[400];
    sl_excerpt(info ? info : code ? code : "no reason given", ex, sizeof ex);
    return sl_err_set(err, SL_EIO, "wikipedia: Wikipedia's API answered an error: %s", ex);
}

sl_value *sl_builtin_wiki_titles(const sl_value *answer, size_t max, sl_err *err)
{
    if (api_error(answer, err))
        return NULL;
    const sl_value *hits = json_object_get(json_object_get(answer, "query"), "search");
    if (!json_is_array(hits)) {
        sl_err_set(err, SL_EIO, "wikipedia: the search answer has no query.search list; is "
                   "base_url a MediaWiki site?");
        return NULL;
    }
    sl_value *titles = json_array();
    size_t i;
    const sl_value *h;
    json_array_foreach(hits, i, h) {
        const sl_value *t = json_object_get(h, "title");
        if (json_is_string(t) && json_string_length(t) && json_array_size(titles) < max)
            json_array_append(titles, (sl_value *)t);
    }
    return titles;
}

/* The "to" of the {from, to} item of list whose "from" is title, or title. */
static const char *map_title(const sl_value *list, const char *title)
{
    size_t i;
    const sl_value *m;
    json_array_foreach(list, i, m) {
        const char *from = json_string_value(json_object_get(m, "from"));
        const char *to = json_string_value(json_object_get(m, "to"));
        if (from && to && !strcmp(from, title))
            return to;
    }
    return title;
}

int sl_builtin_wiki_text(const sl_value *titles, const sl_value *answer, sl_buf *out,
                         sl_err *err)
{
    sl_buf_init(out, 0);
    if (api_error(answer, err))
        return -1;
    const sl_value *q = json_object_get(answer, "query");
    const sl_value *pages = json_object_get(q, "pages");
    const sl_value *normalized = json_object_get(q, "normalized");
    const sl_value *redirects = json_object_get(q, "redirects");
    if (!json_is_object(pages) && !json_is_array(pages)) {
        return sl_err_set(err, SL_EIO, "wikipedia: the pages answer has no query.pages; is "
                          "base_url a MediaWiki site?");
    }
    size_t n = 0, i;
    const sl_value *tv;
    json_array_foreach(titles, i, tv) {
        const char *title = json_string_value(tv);
        if (!title)
            continue;
        const char *target = map_title(redirects, map_title(normalized, title));
        const sl_value *page = NULL;
        const char *k;
        const sl_value *p;
        size_t j;
        if (json_is_object(pages)) {
            json_object_foreach((sl_value *)pages, k, p) {
                const char *pt = json_string_value(json_object_get(p, "title"));
                if (!page && pt && !strcmp(pt, target))
                    page = p;
            }
        } else {  /* formatversion=2 */
            json_array_foreach(pages, j, p) {
                const char *pt = json_string_value(json_object_get(p, "title"));
                if (!page && pt && !strcmp(pt, target))
                    page = p;
            }
        }
        if (!json_is_object(page) || json_object_get(page, "missing") ||
            json_object_get(page, "invalid") ||
            json_object_get(json_object_get(page, "pageprops"), "disambiguation"))
            continue;
        const char *extract = json_string_value(json_object_get(page, "extract"));
        sl_buf_addf(out, "%sPage: %s\nSummary: %s", n ? "\n\n" : "", title,
                    extract ? extract : "");
        n++;
        if (out->len > (size_t)TEXT_CHARS * 4)
            break;  /* the rest would be cut */
    }
    if (!n)
        sl_buf_adds(out, "No good Wikipedia Search Result was found");
    sl_builtin_cut_chars(out, TEXT_CHARS);
    return 0;
}

/* ---- the tool ---- */

/* The wiki's language: lang (lower case) when it reads as a code, else "en". */
static void language(const char *lang, char out[24])
{
    while (*lang == ' ')
        lang++;
    size_t n = strlen(lang);
    while (n && lang[n - 1] == ' ')
        n--;
    bool ok = n >= 2 && n < 24;
    for (size_t i = 0; i < n && ok; i++)
        out[i] = (char)tolower((unsigned char)lang[i]);
    if (ok) {
        out[n] = '\0';
        /* a first part of 2-3 letters (or "simple"), then -parts of 1-8
         * letters or digits */
        size_t first = strcspn(out, "-");
        for (size_t i = 0; i < first && ok; i++)
            ok = out[i] >= 'a' && out[i] <= 'z';
        ok = ok && ((first >= 2 && first <= 3) || (first == 6 && !strncmp(out, "simple", 6)));
        for (const char *p = out + first; *p && ok;) {
            size_t k = strspn(++p, "abcdefghijklmnopqrstuvwxyz0123456789");
            ok = k >= 1 && k <= 8 && (!p[k] || p[k] == '-');
            p += k;
        }
    }
    if (!ok)
        strcpy(out, "en");
}

/* root with "{lang}" replaced by lang, no trailing slash (new). */
static char *root_for(const char *base, const char *lang)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (const char *p = base; *p;) {
        if (!strncmp(p, "{lang}", 6)) {
            sl_buf_adds(&b, lang);
            p += 6;
        } else {
            sl_buf_addc(&b, *p++);
        }
    }
    while (b.len && b.data[b.len - 1] == '/')
        b.data[--b.len] = '\0';
    if (!b.data)
        sl_buf_adds(&b, "");
    return sl_buf_detach(&b);
}

static int get_json(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const char *url,
                    sl_value **out, sl_err *err)
{
    static const char *const headers[] = {"Accept: application/json", NULL};
    sl_builtin_req rq = {.vendor = "wikipedia", .method = "GET", .url = url, .headers = headers};
    long status = 0;
    sl_buf body;
    sl_buf_init(&body, 0);
    int rc = sl_builtin_fetch(ctx, &rq, &status, &body, NULL, err);
    if (!rc && status != 200)
        rc = sl_builtin_status_error(cfg, "wikipedia", status, body.data ? body.data : "",
                                     body.len, err);
    if (!rc) {
        json_error_t je;
        *out = json_loadb(body.data ? body.data : "", body.len, 0, &je);
        if (!json_is_object(*out)) {
            json_decref(*out);
            *out = NULL;
            rc = sl_err_set(err, SL_EIO, "wikipedia: the API's answer is not a JSON object "
                            "(%s); is base_url a MediaWiki site?", je.text);
        }
    }
    sl_buf_release(&body);
    return rc;
}

static int wikipedia_search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                            const sl_value *args, sl_tool_result *res, sl_err *err)
{
    char *t1, *t2;
    const char *q0 = sl_builtin_arg_str(args, "query", "", &t1);
    const char *l0 = sl_builtin_arg_str(args, "language", "", &t2);
    if (!*q0) {
        free(t1);
        free(t2);
        return sl_err_set(err, SL_EINVAL, "wikipedia: Please input query");
    }
    char lang[24];
    language(l0, lang);
    sl_buf q;
    sl_buf_init(&q, 0);
    sl_buf_adds(&q, q0);
    sl_builtin_cut_chars(&q, QUERY_CHARS);
    free(t1);
    free(t2);
    char *root = root_for(cfg && cfg->base_url && *cfg->base_url ? cfg->base_url : WIKI_URL,
                          lang);
    char *eq = sl_http_escape(q.data);
    sl_buf_release(&q);
    char *url = sl_xasprintf("%s/w/api.php?action=query&format=json&list=search&srprop="
                             "&srlimit=%d&srsearch=%s", root, TOP_K, eq);
    free(eq);
    sl_value *found = NULL, *titles = NULL, *pages = NULL;
    int rc = get_json(ctx, cfg, url, &found, err);
    if (!rc && !(titles = sl_builtin_wiki_titles(found, TOP_K, err)))
        rc = -1;
    sl_buf text;
    sl_buf_init(&text, 0);
    if (!rc && json_array_size(titles)) {
        sl_buf list;
        sl_buf_init(&list, 0);
        size_t i;
        const sl_value *t;
        json_array_foreach(titles, i, t) {
            char *e = sl_http_escape(json_string_value(t));
            sl_buf_addf(&list, "%s%s", i ? "%7C" : "", e);
            free(e);
        }
        free(url);
        url = sl_xasprintf("%s/w/api.php?action=query&format=json&prop=extracts%%7Cpageprops"
                           "&ppprop=disambiguation&exintro=&explaintext=&redirects=&titles=%s",
                           root, list.data ? list.data : "");
        sl_buf_release(&list);
        rc = get_json(ctx, cfg, url, &pages, err);
        if (!rc)
            rc = sl_builtin_wiki_text(titles, pages, &text, err);
    } else if (!rc) {
        sl_buf_adds(&text, "No good Wikipedia Search Result was found");
    }
    if (!rc)
        rc = sl_builtin_text(res, ctx, text.data ? text.data : "", text.len, err);
    sl_buf_release(&text);
    json_decref(found);
    json_decref(titles);
    json_decref(pages);
    free(url);
    free(root);
    return rc;
}

const sl_builtin_tool sl_builtin_wikipedia_tools[] = {
    {"wikipedia_search",
     "A tool for performing a Wikipedia search and extracting snippets and webpages. Input "
     "should be a search query.",
     "{\"type\": \"object\", \"properties\": {"
     "\"query\": {\"type\": \"string\", \"description\": \"key words for searching, this "
     "should be in the language of \\\"language\\\" parameter\"}, "
     "\"language\": {\"type\": \"string\", \"description\": \"language of the wikipedia to be "
     "searched, only \\\"de\\\" for German, \\\"en\\\" for English, \\\"fr\\\" for French, "
     "\\\"hi\\\" for Hindi, \\\"ja\\\" for Japanese, \\\"ko\\\" for Korean, \\\"pl\\\" for "
     "Polish, \\\"pt\\\" for Portuguese, \\\"ro\\\" for Romanian, \\\"uk\\\" for Ukrainian, "
     "\\\"vi\\\" for Vietnamese, and \\\"zh\\\" for Chinese are supported\", "
     "\"enum\": [\"de\", \"en\", \"fr\", \"hi\", \"ja\", \"ko\", \"pl\", \"pt\", \"ro\", "
     "\"uk\", \"vi\", \"zh\"]}}, "
     "\"required\": [\"query\", \"language\"]}",
     wikipedia_search},
};
const size_t sl_builtin_wikipedia_n =
    sizeof sl_builtin_wikipedia_tools / sizeof sl_builtin_wikipedia_tools[0];
