/*
 * builtin_ddg — Dify's `duckduckgo` provider: ddgo_search, DuckDuckGo's web
 * results for a query.
 *
 * DuckDuckGo has no search API; Dify's plugin uses the duckduckgo_search
 * package (7.5), which reads DuckDuckGo's HTML page for browsers without
 * JavaScript.  sluice reads the same page, natively.  What it sends:
 * POST {base}/html, base being https://html.duckduckgo.com unless the
 * binding gives another (base_url), with the form q=QUERY&b=&kl=wt-wt (the
 * package's, region "wt-wt": no region), Referer https://duckduckgo.com/
 * and a browser's User-Agent.  While fewer than max_results came, the
 * next page is asked the way the page's own "Next" button asks it: the
 * hidden fields of the form in its last <div class="nav-link">, posted
 * again, at most 5 pages in all (the package's bound).  A page that says
 * "No  results." ends the search.
 *
 * Reading a page (sl_builtin_ddg_page): the HTML becomes a small tree
 * (bounded: nodes and depth capped, script and style skipped) and, as the
 * package's XPath does, each <div> with an <h2> child is a result: its
 * link is the href of its first <a> child with one, its title the text of
 * the <a> in its <h2>, its body the text of its <a> children (the
 * snippet).  Tags left in that text are stripped and entities decoded
 * once more, as the package's _normalize does.  Links are kept once; ads
 * (links to duckduckgo.com/y.js, or the package's Google fallback) are
 * skipped; a link wrapped in DuckDuckGo's redirect (/l/?uddg=URL) is the
 * URL it wraps (decoded once from the wrapper); a link is then
 * percent-decoded and its spaces are "+" (the package's _normalize_url).
 * One thing differs: the title is all of the <a>'s text, where the
 * package keeps only the text before its first child element.
 *
 * The result is the plugin's: one JSON message per result, {"title",
 * "href", "body"}, and no text.  require_summary needs a model (Dify
 * summarises with the workspace's) and proxy_server would route the
 * request past sluice's address checks: both are refused.
 */
#include "tools/builtin.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/math.h"
#include "net/http.h"

#define DDG_URL "https://html.duckduckgo.com"
#define PAGES_MAX 5
#define PAGE_MAX ((size_t)4 << 20)
#define NODES_MAX ((size_t)1 << 18)
#define DEPTH_MAX 256
#define FIELD_MAX ((size_t)64 << 10)
#define RESULTS_PAGE_MAX 100
#define USER_AGENT                                                                          \
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "     \
    "Chrome/124.0.0.0 Safari/537.36"

/* ---- HTML as a small tree ---- */

typedef struct {
    int parent;       /* -1 for the top */
    bool text;        /* a text node, else an element */
    char name[12];    /* an element's name, lower case ("" when longer) */
    uint32_t at, len; /* the attribute text (elements) or the text (texts) in the page */
} hnode;

typedef struct {
    const char *html;
    hnode *n;
    uint32_t *end;  /* node i's subtree is [i, end[i]) */
    size_t count, alloc;
} htree;

static int add_node(htree *t, int parent, bool text, const char *name, size_t nl, size_t at,
                    size_t len)
{
    if (t->count >= NODES_MAX)
        return -1;
    if (t->count == t->alloc) {
        t->alloc = t->alloc ? t->alloc * 2 : 256;
        t->n = sl_xrealloc(t->n, t->alloc * sizeof *t->n);
    }
    hnode *h = &t->n[t->count];
    h->parent = parent;
    h->text = text;
    h->name[0] = '\0';
    if (nl < sizeof h->name) {
        for (size_t i = 0; i < nl; i++)
            h->name[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
        h->name[nl] = '\0';
    }
    h->at = (uint32_t)at;
    h->len = (uint32_t)len;
    return (int)t->count++;
}

static bool in_set(const char *name, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(name, *set))
            return true;
    return false;
}

static const char *const void_elems[] = {"area", "base", "br", "col", "embed", "hr", "img",
                                         "input", "link", "meta", "param", "source", "track",
                                         "wbr", NULL};
static const char *const raw_elems[] = {"script", "style", "textarea", "template", "noscript",
                                        NULL};

static void parse_tree(htree *t, const char *html, size_t n);

/* The page as a tree of t->count nodes in document order (a parent comes
 * before its children, a subtree is a run of nodes). */
static void build_tree(htree *t, const char *html, size_t n)
{
    parse_tree(t, html, n);
    t->end = sl_xmalloc((t->count ? t->count : 1) * sizeof *t->end);
    for (size_t i = 0; i < t->count; i++)
        t->end[i] = (uint32_t)i + 1;
    for (size_t i = t->count; i-- > 0;) {
        int p = t->n[i].parent;
        if (p >= 0 && t->end[p] < t->end[i])
            t->end[p] = t->end[i];
    }
}

static void free_tree(htree *t)
{
    free(t->n);
    free(t->end);
}

static void parse_tree(htree *t, const char *html, size_t n)
{
    memset(t, 0, sizeof *t);
    t->html = html;
    int stack[DEPTH_MAX];
    int depth = 0;
    const char *p = html, *end = html + n;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        const char *stop = lt ? lt : end;
        if (stop > p && add_node(t, depth ? stack[depth - 1] : -1, true, NULL, 0,
                                 (size_t)(p - html), (size_t)(stop - p)) < 0)
            return;
        if (!lt)
            return;
        p = lt;
        sl_html_tag tag;
        const char *after = sl_builtin_html_tag(p, end, &tag);
        if (!after) {  /* a '<' that opens no tag is text */
            if (add_node(t, depth ? stack[depth - 1] : -1, true, NULL, 0, (size_t)(p - html),
                         1) < 0)
                return;
            p++;
            continue;
        }
        p = after;
        if (!tag.name)
            continue;  /* a comment or declaration */
        bool closing = tag.closing;
        const char *nm = tag.name, *attrs = tag.attrs;
        size_t attrs_n = tag.attrs_n;
        char name[12];
        size_t nl = tag.name_n;
        if (nl >= sizeof name) {
            name[0] = '\0';
        } else {
            for (size_t i = 0; i < nl; i++)
                name[i] = (char)(nm[i] >= 'A' && nm[i] <= 'Z' ? nm[i] + 32 : nm[i]);
            name[nl] = '\0';
        }
        if (closing) {
            if (!*name)
                continue;
            for (int i = depth - 1; i >= 0; i--)
                if (!strcmp(t->n[stack[i]].name, name)) {
                    depth = i;
                    break;
                }
            continue;
        }
        int id = add_node(t, depth ? stack[depth - 1] : -1, false, nm, nl,
                          (size_t)(attrs - html), attrs_n);
        if (id < 0)
            return;
        if (*name && in_set(name, raw_elems)) {  /* skipped to its end tag */
            const char *e = p;
            for (; e < end; e++)
                if (*e == '<' && e + 2 + nl <= end && e[1] == '/' &&
                    !strncasecmp(e + 2, name, nl))
                    break;
            const char *gt = e < end ? memchr(e, '>', (size_t)(end - e)) : NULL;
            p = gt ? gt + 1 : end;
            continue;
        }
        if ((*name && in_set(name, void_elems)) || tag.self_closing || depth >= DEPTH_MAX)
            continue;
        stack[depth++] = id;
    }
}

/* ---- text ---- */

/* The text of the nodes under node `top` (its descendants' texts, in
 * order), decoded, appended to b up to FIELD_MAX. */
static void text_under(const htree *t, int top, sl_buf *b)
{
    for (size_t i = (size_t)top + 1; i < t->end[top] && b->len < FIELD_MAX; i++)
        if (t->n[i].text)
            sl_builtin_html_decode(t->html + t->n[i].at, t->n[i].len, b);
}

/* The package's _normalize: tags stripped ("<…>" on one line), then
 * entities decoded (again). */
static char *normalize(const char *s, size_t n)
{
    sl_buf stripped, out;
    sl_buf_init(&stripped, 0);
    sl_buf_init(&out, 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') {
            size_t j = i + 1;
            while (j < n && s[j] != '>' && s[j] != '\n')
                j++;
            if (j < n && s[j] == '>') {
                i = j;
                continue;
            }
        }
        sl_buf_addc(&stripped, s[i]);
    }
    sl_builtin_html_decode(stripped.data ? stripped.data : "", stripped.len, &out);
    sl_buf_release(&stripped);
    if (!out.data)
        sl_buf_adds(&out, "");
    return sl_buf_detach(&out);
}

static char *node_attr(const htree *t, int i, const char *name)
{
    return sl_builtin_html_attr(t->html + t->n[i].at, t->n[i].len, name);
}

/* Python's unquote: %XX decoded (an invalid byte sequence as U+FFFD), the
 * rest as it is. */
static void unquote(const char *s, size_t n, sl_buf *out)
{
    sl_buf raw;
    sl_buf_init(&raw, 0);
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = sl_hex_digit((unsigned char)s[i + 1])) >= 0 &&
            (l = sl_hex_digit((unsigned char)s[i + 2])) >= 0) {
            sl_buf_addc(&raw, (char)(h * 16 + l));
            i += 2;
        } else {
            sl_buf_addc(&raw, s[i]);
        }
    }
    sl_utf8_clean(raw.data ? raw.data : "", raw.len, out);
    sl_buf_release(&raw);
}

/* A result's link as the plugin gives it (new). */
static char *result_href(const char *href)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    const char *u = strstr(href, "duckduckgo.com/l/?");
    const char *w = u ? strstr(u, "uddg=") : NULL;
    if (w && (w[-1] == '?' || w[-1] == '&')) {
        /* the link it wraps, then as any link */
        sl_buf inner;
        sl_buf_init(&inner, 0);
        w += 5;
        unquote(w, strcspn(w, "&"), &inner);
        unquote(inner.data ? inner.data : "", inner.len, &out);
        sl_buf_release(&inner);
    } else {
        unquote(href, strlen(href), &out);
    }
    for (size_t i = 0; i < out.len; i++)
        if (out.data[i] == ' ')
            out.data[i] = '+';
    if (!out.data)
        sl_buf_adds(&out, "");
    return sl_buf_detach(&out);
}

static bool is_ad(const char *href)
{
    return !strncmp(href, "http://www.google.com/search?q=", 31) ||
           !strncmp(href, "https://duckduckgo.com/y.js?", 28) ||
           !strncmp(href, "//duckduckgo.com/y.js?", 22);
}

/* The urlencoded form of the last <div class="nav-link">'s hidden
 * fields (new), or NULL. */
static char *next_form(const htree *t)
{
    int nav = -1;
    for (size_t i = 0; i < t->count; i++) {
        if (t->n[i].text || strcmp(t->n[i].name, "div"))
            continue;
        char *c = node_attr(t, (int)i, "class");
        if (c && !strcmp(c, "nav-link"))
            nav = (int)i;
        free(c);
    }
    if (nav < 0)
        return NULL;
    sl_buf form;
    sl_buf_init(&form, 0);
    for (size_t i = (size_t)nav + 1; i < t->end[nav] && form.len < FIELD_MAX; i++) {
        if (t->n[i].text || strcmp(t->n[i].name, "input"))
            continue;
        char *type = node_attr(t, (int)i, "type");
        if (type && !strcasecmp(type, "hidden")) {
            char *name = node_attr(t, (int)i, "name");
            char *value = node_attr(t, (int)i, "value");
            if (name) {
                char *en = sl_http_escape(name), *ev = sl_http_escape(value ? value : "");
                sl_buf_addf(&form, "%s%s=%s", form.len ? "&" : "", en, ev);
                free(en);
                free(ev);
            }
            free(name);
            free(value);
        }
        free(type);
    }
    if (!form.len) {
        sl_buf_release(&form);
        return NULL;
    }
    return sl_buf_detach(&form);
}

int sl_builtin_ddg_page(const char *html, size_t n, sl_value *results, size_t max,
                        sl_value *seen, char **next)
{
    *next = NULL;
    if (memmem(html, n, "No  results.", 12))
        return 1;
    sl_buf clean;  /* the page is UTF-8 (DuckDuckGo's is), bad bytes as U+FFFD */
    sl_buf_init(&clean, 0);
    sl_utf8_clean(html, n, &clean);
    htree t;
    build_tree(&t, clean.data ? clean.data : "", clean.len);
    /* each <div> with an <h2> child, in document order */
    bool *is_result = sl_xcalloc(t.count ? t.count : 1, sizeof *is_result);
    bool any = false;
    for (size_t i = 0; i < t.count; i++) {
        int p = t.n[i].parent;
        if (!t.n[i].text && !strcmp(t.n[i].name, "h2") && p >= 0 && !strcmp(t.n[p].name, "div"))
            any = is_result[p] = true;
    }
    size_t found = 0;
    for (size_t d = 0; d < t.count && (!max || json_array_size(results) < max) &&
                       found < RESULTS_PAGE_MAX; d++) {
        if (!is_result[d])
            continue;
        found++;
        char *href = NULL;
        int h2 = -1;
        sl_buf body, title;
        sl_buf_init(&body, 0);
        sl_buf_init(&title, 0);
        /* the div's children: its <a>s (the link and the body) and its <h2> */
        for (size_t i = d + 1; i < t.end[d]; i = t.end[i]) {
            if (t.n[i].text)
                continue;
            if (!strcmp(t.n[i].name, "a")) {
                if (!href)
                    href = node_attr(&t, (int)i, "href");
                text_under(&t, (int)i, &body);
            } else if (!strcmp(t.n[i].name, "h2") && h2 < 0) {
                h2 = (int)i;
            }
        }
        if (h2 >= 0) {
            for (size_t i = (size_t)h2 + 1; i < t.end[h2]; i = t.end[i]) {
                if (!t.n[i].text && !strcmp(t.n[i].name, "a")) {
                    text_under(&t, (int)i, &title);
                    break;
                }
            }
        }
        if (href && *href && !is_ad(href) && !json_object_get(seen, href)) {
            json_object_set_new(seen, href, json_true());
            char *ti = normalize(title.data ? title.data : "", title.len);
            char *bo = normalize(body.data ? body.data : "", body.len);
            char *hr = result_href(href);
            json_array_append_new(results, json_pack("{s:s, s:s, s:s}", "title", ti, "href", hr,
                                                     "body", bo));
            free(ti);
            free(bo);
            free(hr);
        }
        free(href);
        sl_buf_release(&body);
        sl_buf_release(&title);
    }
    *next = next_form(&t);
    free(is_result);
    free_tree(&t);
    sl_buf_release(&clean);
    return any ? 0 : -1;
}

/* ---- the tool ---- */

static int ddgo_search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                       sl_tool_result *res, sl_err *err)
{
    char *t1, *t2;
    const char *query = sl_builtin_arg_str(args, "query", "", &t1);
    const char *proxy = sl_builtin_arg_str(args, "proxy_server", "", &t2);
    double maxd = 5;
    int rc = 0;
    char *url = NULL, *form = NULL;
    sl_value *results = json_array(), *seen = json_object();
    if (!*query) {
        rc = sl_err_set(err, SL_EINVAL, "duckduckgo: the query is empty; give ddgo_search a "
                        "query");
        goto done;
    }
    if (sl_builtin_arg_num(args, "max_results", &maxd) < 0) {
        rc = sl_err_set(err, SL_EINVAL, "duckduckgo: max_results must be a number");
        goto done;
    }
    if (sl_builtin_arg_bool(args, "require_summary", false)) {
        rc = sl_err_set(err, SL_EUNSUPPORTED,
                        "duckduckgo: require_summary needs a model (Dify summarises the results "
                        "with the workspace's default model), which a built-in tool does not "
                        "have; set it to false and summarise the results with an LLM node");
        goto done;
    }
    if (*proxy) {
        rc = sl_err_set(err, SL_EUNSUPPORTED,
                        "duckduckgo: proxy_server is not supported: a proxy would take the "
                        "request past sluice's address checks; leave it empty");
        goto done;
    }
    /* the package stops once it has max_results (a fraction rounds up);
     * 0 or less: the first page, whole */
    size_t max = maxd > 0 ? (size_t)(maxd > 1000 ? 1000 : sl_ceil(maxd)) : 0;
    url = sl_builtin_url(cfg && cfg->base_url && *cfg->base_url ? cfg->base_url : DDG_URL,
                         "/html");
    char *eq = sl_http_escape(query);
    form = sl_xasprintf("q=%s&b=&kl=wt-wt", eq);
    free(eq);
    static const char *const headers[] = {
        "Content-Type: application/x-www-form-urlencoded", "Referer: https://duckduckgo.com/",
        "User-Agent: " USER_AGENT, "Accept: text/html,application/xhtml+xml", NULL};
    for (int page = 0; page < PAGES_MAX; page++) {
        sl_builtin_req rq = {.vendor = "duckduckgo", .method = "POST", .url = url,
                             .headers = headers, .body = form, .body_len = strlen(form),
                             .max_body = PAGE_MAX};
        long status = 0;
        sl_buf body;
        sl_buf_init(&body, 0);
        rc = sl_builtin_fetch(ctx, &rq, &status, &body, NULL, err);
        if (!rc && status != 200) {
            if (status == 202 || status == 403 || status == 400 || status == 429 ||
                status == 418 || status == 301)
                rc = sl_err_set(err, SL_EIO, "duckduckgo: DuckDuckGo answered HTTP %ld, its "
                                "answer when it rate-limits or blocks a client; try again "
                                "later", status);
            else
                rc = sl_builtin_status_error(cfg, "duckduckgo", status,
                                             body.data ? body.data : "", body.len, err);
        }
        char *next = NULL;
        int none = 0;
        if (!rc)
            none = sl_builtin_ddg_page(body.data ? body.data : "", body.len, results, max,
                                       seen, &next);
        if (!rc && none < 0 && page == 0)
            rc = sl_err_set(err, SL_EIO, "duckduckgo: the page %s answered (%zu bytes) has no "
                            "search result and does not say \"No results.\": DuckDuckGo's page "
                            "may have changed, or base_url is not DuckDuckGo's", url, body.len);
        sl_buf_release(&body);
        if (rc || none || !next || !max || json_array_size(results) >= max) {
            free(next);
            break;
        }
        free(form);
        form = next;
    }
    if (rc)
        goto done;
    size_t i;
    sl_value *r;
    json_array_foreach(results, i, r) {
        if ((rc = sl_builtin_json_out(res, ctx, json_incref(r), err)))
            goto done;
    }
done:
    json_decref(results);
    json_decref(seen);
    free(url);
    free(form);
    free(t1);
    free(t2);
    return rc;
}

const sl_builtin_tool sl_builtin_ddg_tools[] = {
    {"ddgo_search", "Perform searches on DuckDuckGo and get results.",
     "{\"type\": \"object\", \"properties\": {"
     "\"query\": {\"type\": \"string\", \"description\": \"Key words for searching\"}, "
     "\"max_results\": {\"type\": \"number\", \"description\": \"The maximum number of results "
     "to return.\", \"default\": 5}, "
     "\"require_summary\": {\"type\": \"boolean\", \"description\": \"Whether to pass the "
     "search results to llm for summarization.\", \"default\": false}, "
     "\"proxy_server\": {\"type\": \"string\", \"description\": \"Supports http/https/socks "
     "proxies. Example: http://user:pass@example.com:3128.\"}}, "
     "\"required\": [\"query\"]}",
     ddgo_search},
};
const size_t sl_builtin_ddg_n = sizeof sl_builtin_ddg_tools / sizeof sl_builtin_ddg_tools[0];
