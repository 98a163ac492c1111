/*
 * builtin_web — Dify's `webscraper` provider: the webscraper tool, a page
 * as readable text.
 *
 * The page comes through net/http with its SSRF guard: this host's and
 * private addresses only with the tool_allow_private limit
 * (sl_tool_ctx.allow_private), checked on the address each connection
 * reaches, every redirect hop included (hops are followed here, at most
 * 10, so each one passes the guard).  The body is capped as the
 * http-request node's (10 MiB).
 *
 * Dify runs Mozilla's Readability in node and prints its result in a
 * template (TITLE, AUTHORS, PUBLISH DATE, TOP_IMAGE_URL, TEXT); sluice
 * fills the same template natively: the title is the page's <title>, the
 * author its <meta name="author">, and the text every visible block of
 * the page, one line each (script, style, head, nav, aside, footer and
 * other parts a reader never sees dropped, entities decoded, whitespace
 * collapsed) rather than Readability's guess at the main article.
 */
#include "tools/builtin.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"

#define PAGE_MAX ((size_t)10 << 20)
#define HOPS_MAX 10
#define TITLE_MAX 1024
#define DEFAULT_UA                                                                          \
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "     \
    "Chrome/100.0.1000.0 Safari/537.36"

/* ---- HTML to text ---- */

typedef struct {
    sl_buf *out;
    bool line_empty, space;
} text_out;

static void put_text(text_out *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            t->space = !t->line_empty;
            continue;
        }
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0xA0) {  /* nbsp */
            t->space = !t->line_empty;
            i++;
            continue;
        }
        if (t->space)
            sl_buf_addc(t->out, ' ');
        t->space = false;
        t->line_empty = false;
        sl_buf_addc(t->out, (char)c);
    }
}

static void put_break(text_out *t)
{
    if (!t->line_empty)
        sl_buf_addc(t->out, '\n');
    t->line_empty = true;
    t->space = false;
}

static bool name_is(const char *name, const char *const *set)
{
    for (; *set; set++)
        if (!strcasecmp(name, *set))
            return true;
    return false;
}

/* Elements whose text is never seen: raw ones are skipped to their end
 * tag, the others with everything inside them. */
static const char *const raw_skip[] = {"script", "style", "noscript", "template", "textarea",
                                       NULL};
static const char *const nested_skip[] = {"head", "nav", "aside", "footer", "svg", "iframe",
                                          "object", "select", "button", "canvas", "math",
                                          NULL};
static const char *const blocks[] = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "main", "header", "blockquote", "pre", "hr", "dd", "dt", "dl",
    "figure", "figcaption", "address", "form", "fieldset", "details", "summary", "caption",
    "thead", "tbody", "tfoot", "body", "html", "center", "label", "legend", "option", NULL};

/* Finds the end tag of a raw element from p: the byte after its '>', or end. */
static const char *raw_end(const char *p, const char *end, const char *name)
{
    size_t nl = strlen(name);
    for (; p < end; p++) {
        if (*p == '<' && p + 2 + nl <= end && p[1] == '/' && !strncasecmp(p + 2, name, nl)) {
            const char *gt = memchr(p, '>', (size_t)(end - p));
            return gt ? gt + 1 : end;
        }
    }
    return end;
}

static char *collapse(const char *s, size_t n, size_t cap)
{
    sl_buf raw, b;
    sl_buf_init(&raw, 0);
    sl_buf_init(&b, 0);
    if (n > cap) {  /* cut on a character's first byte */
        n = cap;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    sl_builtin_html_decode(s, n, &raw);
    text_out t = {&b, true, false};
    put_text(&t, raw.data ? raw.data : "", raw.len);
    sl_buf_release(&raw);
    return sl_buf_detach(&b);
}

void sl_builtin_html_text(const char *html, size_t n, sl_buf *out, char **title)
{
    sl_buf_init(out, 0);
    *title = NULL;
    text_out t = {out, true, false};
    const char *p = html, *end = html + n;
    int skip = 0;  /* depth inside nested_skip elements */
    sl_buf txt;
    sl_buf_init(&txt, 0);
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        const char *stop = lt ? lt : end;
        if (!skip && stop > p) {
            sl_buf_reset(&txt);
            sl_builtin_html_decode(p, (size_t)(stop - p), &txt);
            put_text(&t, txt.data ? txt.data : "", txt.len);
        }
        if (!lt)
            break;
        p = lt;
        sl_html_tag tag;
        const char *after = sl_builtin_html_tag(p, end, &tag);
        if (!after) {  /* a '<' that opens no tag is text */
            if (!skip)
                put_text(&t, "<", 1);
            p++;
            continue;
        }
        p = after;
        if (!tag.name)
            continue;  /* a comment or declaration */
        bool closing = tag.closing;
        const char *nm = tag.name;
        char name[16];
        size_t nl = tag.name_n;
        if (nl >= sizeof name)
            continue;
        memcpy(name, nm, nl);
        name[nl] = '\0';
        bool self_closing = tag.self_closing;
        if (!closing && !strcasecmp(name, "title") && !*title) {
            const char *e = raw_end(p, end, "title");
            const char *te = e;
            while (te > p && *--te != '<')
                ;
            *title = collapse(p, (size_t)(te > p ? te - p : 0), TITLE_MAX);
            p = e;
            continue;
        }
        if (!closing && name_is(name, raw_skip)) {
            p = raw_end(p, end, name);
            continue;
        }
        if (!closing && !strcasecmp(name, "body"))
            skip = 0;  /* a <head> left open ends here */
        if (name_is(name, nested_skip) && !self_closing) {
            skip += closing ? (skip > 0 ? -1 : 0) : 1;
            continue;
        }
        if (skip)
            continue;
        if (name_is(name, blocks)) {
            put_break(&t);
        } else if (!strcasecmp(name, "td") || !strcasecmp(name, "th")) {
            if (!closing)
                t.space = !t.line_empty;
        }
    }
    sl_buf_release(&txt);
    /* no trailing line break */
    while (out->len && out->data[out->len - 1] == '\n')
        out->data[--out->len] = '\0';
}

/* <meta name="author" content="…"> of html, or NULL (new). */
static char *html_author(const char *html, size_t n)
{
    const char *p = html, *end = html + n;
    while ((p = memchr(p, '<', (size_t)(end - p)))) {
        if (end - p > 5 && !strncasecmp(p, "<meta", 5)) {
            const char *gt = memchr(p, '>', (size_t)(end - p));
            if (!gt)
                break;
            size_t an = (size_t)(gt - p - 5);
            char *nm = sl_builtin_html_attr(p + 5, an, "name");
            char *c = nm && !strcasecmp(nm, "author") ? sl_builtin_html_attr(p + 5, an, "content")
                                                      : NULL;
            free(nm);
            if (c && *c) {
                char *r = collapse(c, strlen(c), TITLE_MAX);
                free(c);
                return r;
            }
            free(c);
            p = gt;
        } else if (end - p > 6 && !strncasecmp(p, "<body", 5)) {
            break;
        }
        p++;
    }
    return NULL;
}

/* ---- fetching ---- */

typedef struct {
    sl_buf body;
} page;

static int on_body(const char *p, size_t n, void *ud)
{
    page *pg = ud;
    return sl_buf_add(&pg->body, p, n) ? 1 : 0;
}

static bool stop_asked(void *ud)
{
    return sl_tool_cancelled(ud);
}

static int http_error(sl_http *h, sl_http_result rc, const char *url, const sl_tool_ctx *ctx,
                      sl_err *err)
{
    switch (rc) {
    case SL_HTTP_REFUSED: {
        const char *kind = "";
        const char *addr = sl_http_refused(h, &kind);
        return sl_err_typed(err, SL_EIO, "ToolSSRFError",
                            "webscraper: sluice refused to connect to %s (%s) for %s: tools may "
                            "not reach this host or private addresses; if the page is yours, "
                            "set the limit tool_allow_private=true (--limit, or "
                            "SLUICE_TOOL_ALLOW_PRIVATE=true)",
                            addr ? addr : "?", kind ? kind : "?", url);
    }
    case SL_HTTP_STOPPED: return sl_err_set(err, SL_ECANCELED, "webscraper: the run was stopped");
    case SL_HTTP_TOO_BIG:
    case SL_HTTP_CALLBACK:
        return sl_err_limit(err, SL_ELIMIT, "tool_max_output",
                            "webscraper: the page %s is larger than %zu bytes, more than sluice "
                            "reads", url, PAGE_MAX);
    case SL_HTTP_CONNECT_TIMEOUT:
    case SL_HTTP_TIMEOUT:
    case SL_HTTP_IDLE_READ:
        return sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                            "webscraper: %s did not answer within %g s (tool_timeout_s)", url,
                            sl_tool_timeout(ctx));
    case SL_HTTP_BAD_URL:
        return sl_err_set(err, SL_EINVAL, "webscraper: the URL '%s' is not usable (%s)", url,
                          sl_http_why(h));
    default:
        return sl_err_set(err, SL_EIO, "webscraper: fetching %s failed: %s", url,
                          sl_http_why(h));
    }
}

/* The charset a Content-Type or the page's <meta> names, or "" (new). */
static char *page_charset(const char *ctype, const char *html, size_t n)
{
    const char *c = ctype ? strcasestr(ctype, "charset=") : NULL;
    const char *src = c ? c + 8 : NULL;
    if (!src) {
        size_t look = n < 4096 ? n : 4096;
        const char *m = NULL;
        for (size_t i = 0; i + 8 <= look && !m; i++)
            if (!strncasecmp(html + i, "charset=", 8))
                m = html + i + 8;
        src = m;
    }
    if (!src)
        return sl_xstrdup("");
    while (*src == '"' || *src == '\'' || *src == ' ')
        src++;
    size_t k = 0;
    while (k < 40 && src[k] && (src[k] == '-' || src[k] == '_' || src[k] == '.' ||
                                (src[k] >= '0' && src[k] <= '9') ||
                                (src[k] >= 'a' && src[k] <= 'z') ||
                                (src[k] >= 'A' && src[k] <= 'Z')))
        k++;
    return sl_xstrndup(src, k);
}

/* The body as UTF-8 text (new buffer contents in out). */
static void to_utf8(const char *charset, const char *s, size_t n, sl_buf *out)
{
    sl_buf_init(out, n * 4 + 16);
    iconv_t cd = (iconv_t)-1;
    if (*charset && strcasecmp(charset, "utf-8") && strcasecmp(charset, "utf8") &&
        (cd = iconv_open("UTF-8", charset)) != (iconv_t)-1) {
        char *in = (char *)s;
        size_t left = n;
        char tmp[4096];
        while (left) {
            char *o = tmp;
            size_t room = sizeof tmp;
            size_t r = iconv(cd, &in, &left, &o, &room);
            sl_buf_add(out, tmp, (size_t)(o - tmp));
            if (r == (size_t)-1 && errno != E2BIG) {
                sl_buf_add(out, "\xef\xbf\xbd", 3);
                in++;
                left--;
                iconv(cd, NULL, NULL, NULL, NULL);
            }
        }
        iconv_close(cd);
        return;
    }
    sl_utf8_clean(s, n, out);
}

static int webscraper(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                      const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    char *t1, *t2;
    const char *url0 = sl_builtin_arg_str(args, "url", "", &t1);
    const char *ua = sl_builtin_arg_str(args, "user_agent", DEFAULT_UA, &t2);
    if (!*ua)
        ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/91.0.4472.124 Safari/537.36";
    int rc = 0;
    sl_http *h = NULL;
    char *url = sl_xstrdup(url0);
    page pg;
    sl_buf_init(&pg.body, PAGE_MAX);
    if (!*url) {
        rc = sl_err_set(err, SL_EINVAL, "webscraper: Please input url");
        goto done;
    }
    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
        rc = sl_err_set(err, SL_EINVAL, "webscraper: the URL '%s' must start with http:// or "
                        "https://", url);
        goto done;
    }
    if (sl_builtin_arg_bool(args, "generate_summary", false)) {
        rc = sl_err_set(err, SL_EUNSUPPORTED,
                        "webscraper: generate_summary needs a model (Dify summarises the page "
                        "with the workspace's default model), which a built-in tool does not "
                        "have; set it to false and summarise the text with an LLM node");
        goto done;
    }
    if (!(h = sl_http_new(err))) {
        rc = -1;
        goto done;
    }
    double timeout = sl_tool_timeout(ctx);
    for (int hop = 0;; hop++) {
        sl_http_reset(h);
        sl_buf_reset(&pg.body);
        pg.body.toobig = false;
        sl_http_opts *o = sl_http_opts_of(h);
        o->connect_s = timeout < 10 ? timeout : 10;
        o->timeout_s = timeout;
        o->read_idle_s = timeout;
        o->max_body = PAGE_MAX;
        o->max_headers = 256 << 10;
        o->guard = true;
        o->allow_private = ctx && ctx->allow_private;
        o->user_agent = ua;
        o->accept_encoding = "";
        o->stop = stop_asked;
        o->stop_ud = (void *)ctx;
        o->on_body = on_body;
        o->ud = &pg;
        sl_http_url(h, url);
        sl_http_method(h, "GET", NULL, 0, false);
        sl_http_header(h, "Accept: text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8");
        sl_http_result hr = sl_http_perform(h);
        if (hr != SL_HTTP_OK) {
            rc = http_error(h, hr, url, ctx, err);
            goto done;
        }
        long status = sl_http_status(h);
        const char *next = status >= 300 && status < 400 ? sl_http_redirect(h) : NULL;
        if (next) {
            if (hop + 1 >= HOPS_MAX) {
                rc = sl_err_set(err, SL_EIO, "webscraper: %s redirects more than %d times",
                                url0, HOPS_MAX);
                goto done;
            }
            char *n = sl_xstrdup(next);
            free(url);
            url = n;
            continue;
        }
        if (status != 200) {
            rc = sl_err_set(err, SL_EIO, "webscraper: URL returned status code %ld. (%s)",
                            status, url);
            goto done;
        }
        break;
    }
    const char *ctype = sl_http_content_type(h);
    char main_type[128] = "";
    if (ctype) {
        size_t k = strcspn(ctype, ";");
        while (k && ctype[k - 1] == ' ')
            k--;
        snprintf(main_type, sizeof main_type, "%.*s", (int)k, ctype);
    }
    bool html = !strcasecmp(main_type, "text/html") ||
                !strcasecmp(main_type, "application/xhtml+xml");
    bool plain = !strcasecmp(main_type, "text/plain") ||
                 !strcasecmp(main_type, "application/json");
    if (!html && !plain) {
        rc = sl_err_set(err, SL_EUNSUPPORTED, "webscraper: Unsupported content-type [%s] of "
                        "URL %s; the built-in reads text/html, text/plain and application/json",
                        *main_type ? main_type : "None", url);
        goto done;
    }
    char *cs = page_charset(ctype, pg.body.data ? pg.body.data : "", pg.body.len);
    sl_buf text8;
    to_utf8(cs, pg.body.data ? pg.body.data : "", pg.body.len, &text8);
    free(cs);
    if (plain) {  /* Dify's extractor gives these back as they are */
        rc = sl_builtin_text(res, ctx, text8.data ? text8.data : "", text8.len, err);
        sl_buf_release(&text8);
        goto done;
    }
    sl_buf body;
    char *title = NULL;
    sl_builtin_html_text(text8.data ? text8.data : "", text8.len, &body, &title);
    char *author = html_author(text8.data ? text8.data : "", text8.len);
    sl_buf_release(&text8);
    if (body.len) {
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_buf_addf(&out, "\nTITLE: %s\nAUTHORS: %s\nPUBLISH DATE: None\nTOP_IMAGE_URL: \n"
                    "TEXT:\n\n", title && *title ? title : "None",
                    author ? author : "None");
        sl_buf_add(&out, body.data, body.len);
        sl_buf_addc(&out, '\n');
        rc = sl_builtin_text(res, ctx, out.data, out.len, err);
        sl_buf_release(&out);
    }
    sl_buf_release(&body);
    free(title);
    free(author);
done:
    sl_http_free(h);
    sl_buf_release(&pg.body);
    free(url);
    free(t1);
    free(t2);
    return rc;
}

const sl_builtin_tool sl_builtin_web_tools[] = {
    {"webscraper", "A tool for scraping webpages. Input should be a URL.",
     "{\"type\": \"object\", \"properties\": {"
     "\"url\": {\"type\": \"string\", \"description\": \"url for scraping\"}, "
     "\"user_agent\": {\"type\": \"string\", \"description\": \"used for identifying the "
     "browser.\", \"default\": \"" DEFAULT_UA "\"}, "
     "\"generate_summary\": {\"type\": \"boolean\", \"description\": \"If true, the crawler "
     "will only return the page summary content.\", \"default\": false}}, "
     "\"required\": [\"url\"]}",
     webscraper},
};
const size_t sl_builtin_web_n = sizeof sl_builtin_web_tools / sizeof sl_builtin_web_tools[0];
