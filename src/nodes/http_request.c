/*
 * http_request — Dify's http-request node, on net/http (the one HTTP client).
 *
 * The node renders its url, params, headers, API key and body (each may
 * hold {{#node.var#}} references), sends one request and publishes
 * status_code, body, headers and files the way Dify does:
 *
 *   - headers and params are "key:value" lines (Python's splitlines, split at
 *     the first colon, both sides stripped; a line without a colon is a key
 *     with an empty value).  Headers are rendered as a whole before they are
 *     split; params are split first and each key and value rendered after.
 *   - a non-2xx status is not a failure unless the node has an error
 *     strategy or retries enabled; then it fails with HTTPResponseCodeError so
 *     the engine can retry it or take the strategy.
 *   - a response is a file (body "", one entry in files) when
 *     Content-Disposition says attachment or names a file, or when its type is
 *     application/image/audio/video and not text-like; text bodies are
 *     decoded with their charset, bad bytes replaced by U+FFFD.
 *   - text responses over http_max_text_bytes and files over
 *     http_max_binary_bytes fail with ResponseSizeError; the download stops
 *     as soon as the larger cap is passed, so a hostile server cannot make us
 *     buffer more than that.
 *
 * Sluice has no file store, so a file this node produces carries its bytes
 * in a "content_base64" field beside Dify's file fields (related_id is
 * null).  Files sent in form-data or binary bodies are read from
 * content_base64, or fetched from their remote_url through the same guarded
 * client.
 *
 * Network policy (Dify delegates it to its ssrf_proxy; sluice enforces it
 * with net/http's guard): only http and https; proxies from the
 * environment are ignored so the guard sees the real peer; every
 * connection, redirects included, is checked on the address it connects
 * to (so a name that resolves differently later, DNS rebinding, gains
 * nothing), and again when a reused connection is picked up.  Special-
 * purpose ranges (loopback, private, link-local, documentation, ...), the
 * IPv6 forms that carry them, and this machine's own interface addresses
 * are refused unless http_allow_private is set (core/netaddr classifies
 * them, shared with the sandbox proxy).  Redirects are followed here rather than by
 * net/http so that httpx's rules apply (303, and POST after 301/302, become
 * GET without a body; Authorization is dropped when the origin changes) and
 * the count obeys http_max_redirects.
 *
 * Timeouts: connect, and read and write as "no bytes moved for N seconds",
 * are net/http's deadlines; its stop callback ends the transfer when the
 * run is cancelled or its time budget runs out.
 *
 * Errors go through sl_exec_fail() with Dify's error type names
 * (InvalidURLError, AuthorizationConfigError, RequestBodyError,
 * FileFetchError, ResponseSizeError, HttpRequestNodeError,
 * HTTPResponseCodeError; ToolSSRFError for refused addresses).
 */
#include "engine/node.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "core/mime.h"
#include "core/err.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "net/http.h"
#include "net/url.h"

/* Response header bytes kept per response: far above any real server, low
 * enough that a hostile one cannot grow our memory with headers. */
#define HEADER_CAP ((size_t)256 << 10)
/* Dify sniffs this many leading bytes to tell text from binary. */
#define SNIFF_BYTES 1024
/* Longest body text quoted back in an error message. */
#define QUOTE_MAX 300

enum { B_NONE, B_FORM_DATA, B_URLENCODED, B_RAW, B_JSON, B_BINARY };

static const char *const body_types[] = {"none", "form-data", "x-www-form-urlencoded",
                                         "raw-text", "json", "binary", NULL};
static const char *const methods[] = {"get", "post", "put", "patch", "delete", "head",
                                      "options", NULL};
/* Content-Type Dify adds for a body type when the user gave none. */
static const char *const body_ctype[] = {NULL, "multipart/form-data",
                                         "application/x-www-form-urlencoded", "text/plain",
                                         "application/json", NULL};

/* ---- small helpers ---- */

static int index_of(const char *s, const char *const *set, bool nocase)
{
    for (int i = 0; s && set[i]; i++)
        if (nocase ? strcasecmp(s, set[i]) == 0 : strcmp(s, set[i]) == 0)
            return i;
    return -1;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Python's str.strip() set, limited to ASCII (plus the separators that
 * splitlines also breaks on). */
static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static void strip(const char **s, size_t *n)
{
    while (*n && is_space((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_space((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Next line as Python's str.splitlines() cuts it: \n, \r, \r\n, \v, \f,
 * \x1c-\x1e, U+0085, U+2028 and U+2029 end a line; no empty last line. */
static bool next_line(const char **pos, const char *end, const char **line, size_t *len)
{
    const char *p = *pos, *q = p;
    if (p >= end)
        return false;
    for (; q < end; q++) {
        unsigned char c = (unsigned char)*q;
        size_t brk = 0;
        if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e))
            brk = 1;
        else if (c == '\r')
            brk = (q + 1 < end && q[1] == '\n') ? 2 : 1;
        else if (c == 0xc2 && q + 1 < end && (unsigned char)q[1] == 0x85)
            brk = 2;
        else if (c == 0xe2 && q + 2 < end && (unsigned char)q[1] == 0x80 &&
                 ((unsigned char)q[2] == 0xa8 || (unsigned char)q[2] == 0xa9))
            brk = 3;
        if (brk) {
            *line = p;
            *len = (size_t)(q - p);
            *pos = q + brk;
            return true;
        }
    }
    *line = p;
    *len = (size_t)(end - p);
    *pos = end;
    return true;
}

/* Key/value lists.  kv_put has Python dict semantics (an equal key keeps
 * its place and takes the new value), which is what Dify builds headers
 * and form fields with. */
typedef struct {
    char *k, *v;
} kv;

typedef struct {
    kv *a;
    size_t n, alloc;
} kvlist;

static void kv_add(kvlist *l, const char *k, size_t kn, const char *v, size_t vn)
{
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? l->alloc * 2 : 8;
        l->a = sl_xrealloc(l->a, l->alloc * sizeof *l->a);
    }
    l->a[l->n].k = sl_xstrndup(k, kn);
    l->a[l->n].v = sl_xstrndup(v, vn);
    l->n++;
}

static void kv_put(kvlist *l, const char *k, size_t kn, const char *v, size_t vn)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->a[i].k) == kn && memcmp(l->a[i].k, k, kn) == 0) {
            free(l->a[i].v);
            l->a[i].v = sl_xstrndup(v, vn);
            return;
        }
    kv_add(l, k, kn, v, vn);
}

static void kv_puts(kvlist *l, const char *k, const char *v)
{
    kv_put(l, k, strlen(k), v, strlen(v));
}

static const kv *kv_find_ci(const kvlist *l, const char *k)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcasecmp(l->a[i].k, k) == 0)
            return &l->a[i];
    return NULL;
}

static void kv_drop_ci(kvlist *l, const char *k)
{
    size_t j = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (strcasecmp(l->a[i].k, k) == 0) {
            free(l->a[i].k);
            free(l->a[i].v);
        } else {
            l->a[j++] = l->a[i];
        }
    }
    l->n = j;
}

static void kv_copy(kvlist *dst, const kvlist *src)
{
    for (size_t i = 0; i < src->n; i++)
        kv_puts(dst, src->a[i].k, src->a[i].v);
}

static void kv_release(kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->a[i].k);
        free(l->a[i].v);
    }
    free(l->a);
    memset(l, 0, sizeof *l);
}

/* ---- text encodings ---- */

static void latin1_to_utf8(const char *s, size_t n, sl_buf *out)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            sl_buf_addc(out, (char)c);
        } else {
            char two[2] = {(char)(0xc0 | (c >> 6)), (char)(0x80 | (c & 0x3f))};
            sl_buf_add(out, two, 2);
        }
    }
}

/* Header values are bytes; HTTP allows Latin-1, which is how httpx falls
 * back when they are not UTF-8. */
static sl_value *header_text(const char *s, size_t n)
{
    if (sl_utf8_valid(s, n))
        return json_stringn_nocheck(s, n);
    sl_buf b;
    sl_buf_init(&b, 0);
    latin1_to_utf8(s, n, &b);
    sl_value *v = json_stringn_nocheck(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return v;
}

/* Largest n' <= n that does not split a UTF-8 character of s: messages
 * quote cut text, and an event refuses a message that is not UTF-8. */
static size_t utf8_cut(const char *s, size_t n)
{
    while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

/* Python counts characters, not bytes, in len(). */
static size_t utf8_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            c++;
    return c;
}

/* JSON text with every non-ASCII character written as \uXXXX, as Python's
 * json.dumps (ensure_ascii) and therefore httpx's json= send it.  The input
 * is valid UTF-8 (jansson wrote it). */
static void ascii_escape(const char *s, size_t n, sl_buf *out)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        bool ok;
        size_t k = sl_utf8_step(p + i, n - i, &ok);
        if (p[i] < 0x80 || !ok) {
            sl_buf_add(out, p + i, k);
        } else {
            uint32_t cp = p[i] & (k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07);
            for (size_t j = 1; j < k; j++)
                cp = (cp << 6) | (p[i + j] & 0x3f);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                sl_buf_addf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                sl_buf_addf(out, "\\u%04x", cp);
            }
        }
        i += k;
    }
}

/* Decodes a body with the charset its Content-Type names, as httpx's
 * Response.text does (UTF-8 when none or unknown; errors replaced). */
static sl_value *decode_body(const char *charset, const char *s, size_t n)
{
    sl_buf out;
    sl_buf_init(&out, n * 4 + 16);
    bool utf8 = !charset || !*charset || !strcasecmp(charset, "utf-8") ||
                !strcasecmp(charset, "utf8");
    iconv_t cd = (iconv_t)-1;
    if (!utf8 && (!strcasecmp(charset, "ascii") || !strcasecmp(charset, "us-ascii"))) {
        for (size_t i = 0; i < n; i++) {
            if ((unsigned char)s[i] < 0x80)
                sl_buf_addc(&out, s[i]);
            else
                sl_buf_add(&out, "\xef\xbf\xbd", 3);
        }
    } else if (!utf8 && (cd = iconv_open("UTF-8", charset)) != (iconv_t)-1) {
        char *in = (char *)s;
        size_t left = n;
        char tmp[4096];
        while (left) {
            char *o = tmp;
            size_t room = sizeof tmp;
            size_t r = iconv(cd, &in, &left, &o, &room);
            sl_buf_add(&out, tmp, (size_t)(o - tmp));
            if (r == (size_t)-1 && errno != E2BIG) {
                /* An invalid or truncated sequence: replace one byte, go on. */
                sl_buf_add(&out, "\xef\xbf\xbd", 3);
                in++;
                left--;
                iconv(cd, NULL, NULL, NULL, NULL);
            }
        }
        iconv_close(cd);
    } else {
        sl_utf8_clean(s, n, &out);
    }
    sl_value *v = json_stringn_nocheck(out.data ? out.data : "", out.len);
    sl_buf_release(&out);
    return v;
}

/* ---- URLs ---- */

/* Python's urllib.parse.quote_plus (what urlencode uses). */
static void quote_plus(sl_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~')
            sl_buf_addc(out, (char)c);
        else if (c == ' ')
            sl_buf_addc(out, '+');
        else
            sl_buf_addf(out, "%%%02X", c);
    }
}

static void urlencode(sl_buf *out, const kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            sl_buf_addc(out, '&');
        quote_plus(out, l->a[i].k, strlen(l->a[i].k));
        sl_buf_addc(out, '=');
        quote_plus(out, l->a[i].v, strlen(l->a[i].v));
    }
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decoding; plus becomes a space when `plus`. */
static char *unquote(const char *s, size_t n, bool plus)
{
    char *o = sl_xmalloc(n + 1), *w = o;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            *w++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            *w++ = plus && s[i] == '+' ? ' ' : s[i];
        }
    }
    *w = 0;
    return o;
}

/* Percent-encodes what may not stand in a URL's path or query (spaces,
 * controls, non-ASCII bytes, "<>\"^`{|}\\") and keeps the rest, existing
 * escapes included, as httpx does. */
static void url_fix(sl_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || strchr("\"<>\\^`{|}", c))
            sl_buf_addf(out, "%%%02X", c);
        else
            sl_buf_addc(out, (char)c);
    }
}

/* The parts of an http(s) URL, as urllib.parse.urlparse cuts them. */
typedef struct {
    const char *scheme, *netloc, *path, *query;
    size_t scheme_n, netloc_n, path_n, query_n;
    bool has_query;
} urlparts;

static void url_split(const char *u, urlparts *p)
{
    memset(p, 0, sizeof *p);
    const char *sep = strstr(u, "://");
    p->scheme = u;
    p->scheme_n = (size_t)(sep - u);
    const char *s = sep + 3;
    p->netloc = s;
    p->netloc_n = strcspn(s, "/?#");
    s += p->netloc_n;
    p->path = s;
    p->path_n = strcspn(s, "?#");
    s += p->path_n;
    if (*s == '?') {
        p->has_query = true;
        p->query = s + 1;
        p->query_n = strcspn(s + 1, "#");
    }
}

/* The URL's query merged with the node's params the way httpx merges
 * params= into a URL: a key the params name loses its URL values and takes
 * the params' values at its first position; other params follow in order. */
static void merge_query(sl_buf *out, const char *q, size_t qn, const kvlist *params)
{
    bool *done = sl_xcalloc(params->n + 1, 1);
    bool first = true;
    const char *p = q, *end = q + qn;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        size_t len = amp ? (size_t)(amp - p) : (size_t)(end - p);
        if (len) {
            const char *eq = memchr(p, '=', len);
            char *key = unquote(p, eq ? (size_t)(eq - p) : len, true);
            bool named = false;
            for (size_t i = 0; i < params->n; i++) {
                if (strcmp(params->a[i].k, key) != 0)
                    continue;
                named = true;
                if (done[i])
                    continue;
                for (size_t j = i; j < params->n; j++) {
                    if (strcmp(params->a[j].k, key) != 0)
                        continue;
                    done[j] = true;
                    if (!first)
                        sl_buf_addc(out, '&');
                    first = false;
                    quote_plus(out, params->a[j].k, strlen(params->a[j].k));
                    sl_buf_addc(out, '=');
                    quote_plus(out, params->a[j].v, strlen(params->a[j].v));
                }
            }
            free(key);
            if (!named) {
                if (!first)
                    sl_buf_addc(out, '&');
                first = false;
                url_fix(out, p, len);
            }
        }
        p += len + (amp ? 1 : 0);
    }
    for (size_t i = 0; i < params->n; i++) {
        if (done[i])
            continue;
        if (!first)
            sl_buf_addc(out, '&');
        first = false;
        quote_plus(out, params->a[i].k, strlen(params->a[i].k));
        sl_buf_addc(out, '=');
        quote_plus(out, params->a[i].v, strlen(params->a[i].v));
    }
    free(done);
}

/* The URL for messages: no user:password@ in it. */
static void url_for_msg(const char *u, char *out, size_t n)
{
    const char *sep = strstr(u, "://");
    const char *host = sep ? sep + 3 : u;
    size_t nl = strcspn(host, "/?#");
    const char *at = memchr(host, '@', nl);
    if (sep && at)
        snprintf(out, n, "%.*s%s", (int)(host - u), u, at + 1);
    else
        snprintf(out, n, "%s", u);
    if (strlen(out) == n - 1 && n > 4) {
        size_t k = utf8_cut(out, n - 4);
        memcpy(out + k, "...", 4);
    }
}

/* ---- header parameters (Content-Type, Content-Disposition) ---- */

/* Copies the main value (before ';'), stripped and lower-cased. */
static void header_main(const char *h, char *out, size_t n)
{
    const char *s = h ? h : "";
    size_t len = strcspn(s, ";");
    strip(&s, &len);
    if (len >= n)
        len = n - 1;
    for (size_t i = 0; i < len; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[len] = 0;
}

/* Value of parameter `name` (case-insensitive) in a header like
 * `attachment; filename="a b.pdf"`; quotes and backslash escapes undone.
 * Returns false when absent. */
static bool header_param(const char *h, const char *name, sl_buf *out)
{
    const char *p = h ? strchr(h, ';') : NULL;
    size_t nl = strlen(name);
    while (p && *p == ';') {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        const char *k = p;
        while (*p && *p != '=' && *p != ';')
            p++;
        size_t kn = (size_t)(p - k);
        strip(&k, &kn);
        bool match = kn == nl && strncasecmp(k, name, nl) == 0;
        if (*p != '=') {
            if (match)
                return true;
            continue;
        }
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        sl_buf v;
        sl_buf_init(&v, 4096);
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                    p++;
                sl_buf_addc(&v, *p);
            }
            if (*p == '"')
                p++;
            while (*p && *p != ';')
                p++;
        } else {
            const char *vs = p;
            while (*p && *p != ';')
                p++;
            size_t vn = (size_t)(p - vs);
            strip(&vs, &vn);
            sl_buf_add(&v, vs, vn);
        }
        if (match) {
            sl_buf_add(out, v.data ? v.data : "", v.len);
            sl_buf_release(&v);
            return true;
        }
        sl_buf_release(&v);
    }
    return false;
}

/* The file name a Content-Disposition gives (filename*, RFC 5987, first;
 * then filename), reduced to its last path component.  NULL when none. */
static char *disposition_filename(const char *cd)
{
    sl_buf v, name;
    sl_buf_init(&v, 4096);
    sl_buf_init(&name, 4096);
    char *res = NULL;
    if (header_param(cd, "filename*", &v) && v.len) {
        /* charset'lang'percent-encoded */
        const char *q1 = memchr(v.data, '\'', v.len);
        const char *q2 = q1 ? memchr(q1 + 1, '\'', v.len - (size_t)(q1 + 1 - v.data)) : NULL;
        const char *enc = q2 ? q2 + 1 : v.data;
        char *raw = unquote(enc, v.len - (size_t)(enc - v.data), false);
        bool latin1 = q1 && (size_t)(q1 - v.data) >= 3 && !strncasecmp(v.data, "iso-8859-1", 10);
        if (latin1 || !sl_utf8_valid(raw, strlen(raw)))
            latin1_to_utf8(raw, strlen(raw), &name);
        else
            sl_buf_adds(&name, raw);
        free(raw);
    } else {
        sl_buf_reset(&v);
        if (header_param(cd, "filename", &v) && v.len) {
            if (sl_utf8_valid(v.data, v.len))
                sl_buf_add(&name, v.data, v.len);
            else
                latin1_to_utf8(v.data, v.len, &name);
        }
    }
    if (name.len) {
        const char *base = name.data;
        for (const char *p = name.data; *p; p++)
            if (*p == '/' || *p == '\\')
                base = p + 1;
        sl_buf clean;
        sl_buf_init(&clean, 0);
        for (const char *p = base; *p; p++)
            if ((unsigned char)*p >= 0x20 && *p != 0x7f)
                sl_buf_addc(&clean, *p);
        if (clean.len && strcmp(clean.data, ".") && strcmp(clean.data, ".."))
            res = sl_buf_detach(&clean);
        sl_buf_release(&clean);
    }
    sl_buf_release(&v);
    sl_buf_release(&name);
    return res;
}

/* ---- file types ---- */

/* Dify's Response.is_file. */
static bool response_is_file(const char *ctype, const char *cd, const char *body, size_t n)
{
    char ct[256];
    header_main(ctype, ct, sizeof ct);
    if (cd && *cd) {
        char disp[64];
        header_main(cd, disp, sizeof disp);
        sl_buf v;
        sl_buf_init(&v, 4096);
        bool named = header_param(cd, "filename", &v) || header_param(cd, "filename*", &v);
        sl_buf_release(&v);
        if (!strcmp(disp, "attachment") || named)
            return true;
    }
    if (!strncmp(ct, "text/", 5) && !strstr(ct, "csv"))
        return false;
    if (!strncmp(ct, "application/", 12)) {
        static const char *const textish[] = {"json", "xml", "javascript",
                                              "x-www-form-urlencoded", "yaml", "graphql"};
        for (size_t i = 0; i < sizeof textish / sizeof textish[0]; i++)
            if (strstr(ct, textish[i]))
                return false;
        /* Text served as application/…: UTF-8 that opens like code or
         * markup stays text. */
        size_t k = n < SNIFF_BYTES ? n : SNIFF_BYTES;
        if (sl_utf8_valid(body, k)) {
            static const char *const marks[] = {"{", "[", "<", "function", "var ", "const ",
                                                "let "};
            for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
                if (memmem(body, k, marks[i], strlen(marks[i])))
                    return false;
        }
    }
    return !strncmp(ct, "application/", 12) || !strncmp(ct, "image/", 6) ||
           !strncmp(ct, "audio/", 6) || !strncmp(ct, "video/", 6);
}

/* Dify's readable_size. */
static void readable_size(size_t n, char *out, size_t len)
{
    if (n < 1024)
        snprintf(out, len, "%zu bytes", n);
    else if (n < 1024 * 1024)
        snprintf(out, len, "%.2f KB", (double)n / 1024);
    else
        snprintf(out, len, "%.2f MB", (double)n / (1024 * 1024));
}

/* ---- the request ---- */

typedef struct {
    char *key, *filename, *mime;
    sl_buf data;
} part;

typedef struct {
    sl_node_exec *x;
    const sl_limits *lim;
    const char *etype;        /* error type for transfer failures */
    char method[8];           /* upper-case */
    sl_buf url;               /* rendered */
    char *wire_url;           /* with params merged and bad characters escaped */
    kvlist params, headers;
    int btype;                /* B_*, or -1 when the node has no body */
    bool send;                /* a payload goes on the wire */
    sl_buf payload;           /* raw-text, json, binary, urlencoded bytes */
    const char *raw_template; /* raw-text value before rendering (for the log) */
    kvlist form;              /* form-data text fields */
    part *parts;
    size_t nparts;
    char *auth_header;        /* header to mask in the log, when api-key */
    double connect_s, read_s, write_s;
    bool ssl_verify;
} request;

typedef struct {
    long status;
    sl_value *headers;        /* lower-case names; repeats joined by ", " */
    sl_buf body;
    bool over;                /* body passed the larger size cap */
} response;

static void request_init(request *r, sl_node_exec *x)
{
    memset(r, 0, sizeof *r);
    r->x = x;
    r->lim = sl_exec_limits(x);
    r->etype = "HttpRequestNodeError";
    r->btype = -1;
    size_t cap = r->lim->http_max_binary_bytes;
    sl_buf_init(&r->url, cap);
    sl_buf_init(&r->payload, cap);
}

static void request_release(request *r)
{
    sl_buf_release(&r->url);
    free(r->wire_url);
    kv_release(&r->params);
    kv_release(&r->headers);
    kv_release(&r->form);
    sl_buf_release(&r->payload);
    for (size_t i = 0; i < r->nparts; i++) {
        free(r->parts[i].key);
        free(r->parts[i].filename);
        free(r->parts[i].mime);
        sl_buf_release(&r->parts[i].data);
    }
    free(r->parts);
    free(r->auth_header);
}

static void response_init(response *o, size_t cap)
{
    memset(o, 0, sizeof *o);
    o->headers = json_object();
    sl_buf_init(&o->body, cap);
}

static void response_release(response *o)
{
    json_decref(o->headers);
    sl_buf_release(&o->body);
}

/* ---- the transfer ---- */

/* What stopped the transfer from the run's side. */
enum { AB_NONE, AB_CANCEL, AB_BUDGET };

typedef struct {
    request *r;
    response *o;
    int abort;
    char *last_name;          /* for folded header lines */
} xfer;

/* The run stopped or its budget spent (recorded in t->abort): asked by
 * net/http while the transfer runs. */
static bool run_ended(void *ud)
{
    xfer *t = ud;
    /* The budget first: sl_exec_cancelled() is also true once it is spent,
     * and the user should learn which limit stopped the request. */
    if (sl_exec_time_left(t->r->x) <= 0) {
        t->abort = AB_BUDGET;
        return true;
    }
    if (sl_exec_cancelled(t->r->x)) {
        t->abort = AB_CANCEL;
        return true;
    }
    return false;
}

/* The body, within the cap net/http enforces (o->body's own). */
static int on_body(const char *p, size_t n, void *ud)
{
    xfer *t = ud;
    sl_buf_add(&t->o->body, p, n);
    return 0;
}

static int on_header(const char *p, size_t n, void *ud)
{
    xfer *t = ud;
    if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
        /* A new response (after 100 Continue, or the next hop). */
        json_object_clear(t->o->headers);
        free(t->last_name);
        t->last_name = NULL;
        return 0;
    }
    size_t len = n;
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        len--;
    if (!len)
        return 0;
    if ((p[0] == ' ' || p[0] == '\t') && t->last_name) {
        /* An obsolete folded line continues the previous header. */
        const char *v = p;
        size_t vn = len;
        strip(&v, &vn);
        sl_value *old = json_object_get(t->o->headers, t->last_name);
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, json_string_value(old) ? json_string_value(old) : "");
        sl_buf_addc(&b, ' ');
        sl_buf_add(&b, v, vn);
        json_object_set_new(t->o->headers, t->last_name, header_text(b.data, b.len));
        sl_buf_release(&b);
        return 0;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon)
        return 0;
    const char *k = p, *v = colon + 1;
    size_t kn = (size_t)(colon - p), vn = len - kn - 1;
    strip(&k, &kn);
    strip(&v, &vn);
    char *name = sl_xstrndup(k, kn);
    for (char *c = name; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (!sl_utf8_valid(name, strlen(name))) {
        free(name);
        return 0;
    }
    sl_value *nv = header_text(v, vn);
    const char *old = json_string_value(json_object_get(t->o->headers, name));
    if (old) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, old);
        sl_buf_adds(&b, ", ");
        sl_buf_adds(&b, json_string_value(nv));
        json_decref(nv);
        nv = json_stringn_nocheck(b.data, b.len);
        sl_buf_release(&b);
    }
    json_object_set_new(t->o->headers, name, nv);
    free(t->last_name);
    t->last_name = name;
    return 0;
}

/* The request's headers in libcurl's form.  An empty value needs "Name;"
 * (libcurl drops "Name:"); "Expect:" stops the 100-continue round trip
 * httpx never makes; "Content-Type:" stops libcurl from labelling a raw
 * payload as a form when the user did not label it. */
static void wire_headers(sl_http *h, const kvlist *l, bool no_auto_ctype)
{
    sl_http_clear_headers(h);
    for (size_t i = 0; i < l->n; i++) {
        if (*l->a[i].v)
            sl_http_headerf(h, "%s: %s", l->a[i].k, l->a[i].v);
        else
            sl_http_headerf(h, "%s;", l->a[i].k);
    }
    if (no_auto_ctype && !kv_find_ci(l, "content-type"))
        sl_http_header(h, "Content-Type:");
    sl_http_header(h, "Expect:");
}

static void build_form(sl_http *h, const request *r)
{
    sl_http_form_start(h);
    for (size_t i = 0; i < r->form.n; i++)
        sl_http_form_add(h, r->form.a[i].k, NULL, NULL, r->form.a[i].v, strlen(r->form.a[i].v));
    for (size_t i = 0; i < r->nparts; i++)
        sl_http_form_add(h, r->parts[i].key, r->parts[i].filename, r->parts[i].mime,
                         r->parts[i].data.data ? r->parts[i].data.data : "",
                         r->parts[i].data.len);
}

static bool is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* Explains a failed transfer through sl_exec_fail(). */
static int transfer_error(xfer *t, sl_http *h, sl_http_result res, const char *url)
{
    request *r = t->r;
    const sl_limits *L = r->lim;
    char u[512];
    url_for_msg(url, u, sizeof u);
    const char *why = sl_http_why(h);
    switch (res) {
    case SL_HTTP_REFUSED: {
        const char *kind;
        const char *addr = sl_http_refused(h, &kind);
        return sl_exec_fail(r->x, "ToolSSRFError",
                            "Access to '%s' was blocked by SSRF protection: it connects to %s, "
                            "%s. To let workflows reach this machine and its networks, set "
                            "http_allow_private=true (--limit http_allow_private=true)",
                            u, addr, kind);
    }
    case SL_HTTP_STOPPED:
        if (t->abort == AB_CANCEL)
            return sl_exec_fail(r->x, "Stopped",
                                "the run was stopped during the HTTP request to %s", u);
        return sl_exec_fail(r->x, r->etype,
                            "the run's time budget (max_time_s=%g) ran out during the HTTP "
                            "request to %s; raise max_time_s (--limit max_time_s=N)",
                            L->max_time_s, u);
    case SL_HTTP_IDLE_READ:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: no response data for %g s (read "
                            "timeout); raise timeout.read on the node (at most "
                            "http_read_timeout_s=%g, --limit http_read_timeout_s=N)",
                            u, r->read_s, L->http_read_timeout_s);
    case SL_HTTP_IDLE_WRITE:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: the server took no request data for "
                            "%g s (write timeout); raise timeout.write on the node (at most "
                            "http_write_timeout_s=%g, --limit http_write_timeout_s=N)",
                            u, r->write_s, L->http_write_timeout_s);
    case SL_HTTP_HEADERS_TOO_BIG:
        return sl_exec_fail(r->x, r->etype,
                            "the response from %s has more than %zu KB of headers; sluice "
                            "stops reading such responses", u, HEADER_CAP >> 10);
    case SL_HTTP_CONNECT_TIMEOUT:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: no connection within %g s "
                            "(connect timeout); check that the host is up, or raise "
                            "timeout.connect on the node (at most http_connect_timeout_s=%g, "
                            "--limit http_connect_timeout_s=N)",
                            u, r->connect_s, L->http_connect_timeout_s);
    case SL_HTTP_TIMEOUT:
        return sl_exec_fail(r->x, r->etype,
                            "the run's time budget (max_time_s=%g) ran out during the HTTP "
                            "request to %s; raise max_time_s (--limit max_time_s=N)",
                            L->max_time_s, u);
    case SL_HTTP_RESOLVE:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: %s; check the host name in the url", u,
                            why);
    case SL_HTTP_CONNECT:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: %s; check that the server is running "
                            "and the port is right", u, why);
    case SL_HTTP_BAD_URL:
        return sl_exec_fail(r->x, "InvalidURLError", "url '%s' is not a valid URL: %s", u, why);
    case SL_HTTP_TLS_VERIFY:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: the server's TLS certificate could not "
                            "be verified (%s); fix the certificate, or set ssl_verify: false on "
                            "the node for a host you trust", u, why);
    default:
        return sl_exec_fail(r->x, r->etype, "HTTP request to %s failed: %s", u, why);
    }
}

/* Sends r and follows redirects; the last response goes to o.  A body over
 * the size cap is not an error here (o->over; the caller reports it with
 * Dify's message).  Returns 0, or -1 after sl_exec_fail(). */
static int perform(request *r, response *o)
{
    const sl_limits *L = r->lim;
    sl_err e = {0};
    sl_http *h = sl_http_new(&e);
    if (!h) {
        int rc = sl_exec_fail(r->x, r->etype, "%s", e.msg);
        sl_err_clear(&e);
        return rc;
    }
    xfer t = {.r = r, .o = o};
    sl_http_opts *op = sl_http_opts_of(h);
    op->guard = true;
    op->allow_private = L->http_allow_private;
    op->connect_s = r->connect_s;
    op->read_idle_s = r->read_s;
    op->write_idle_s = r->write_s;
    op->max_body = o->body.cap;
    op->max_headers = HEADER_CAP;
    op->insecure = !r->ssl_verify;
    op->accept_encoding = "gzip, deflate";
    op->user_agent = "sluice";
    op->http11 = true;
    op->stop = run_ended;
    op->stop_ud = &t;
    op->on_body = on_body;
    op->on_header = on_header;
    op->ud = &t;

    bool form = r->btype == B_FORM_DATA && r->send;
    if (form)
        build_form(h, r);
    kvlist hdrs = {0};
    kv_copy(&hdrs, &r->headers);
    char *url = sl_xstrdup(r->wire_url);
    char method[8];
    snprintf(method, sizeof method, "%s", r->method);
    bool with_body = r->send;
    int rc = 0;
    for (int hops = 0;; hops++) {
        sl_http_method(h, method, r->payload.data, r->payload.len, with_body);
        /* libcurl labels any POSTFIELDS, empty ones too, as a form; only
         * multipart (whose boundary it must write) keeps its own label. */
        wire_headers(h, &hdrs, !(with_body && form));
        sl_http_url(h, url);
        /* The run's budget bounds the whole hop (0: no bound, for budgets
         * too large to count in milliseconds). */
        double left = sl_exec_time_left(r->x);
        op->timeout_s = left < 1e9 ? left + 0.001 : 0;
        t.abort = AB_NONE;
        o->over = false;
        sl_buf_reset(&o->body);
        json_object_clear(o->headers);
        sl_http_result res = sl_http_perform(h);
        if (res == SL_HTTP_TOO_BIG) {
            o->over = true;
        } else if (res != SL_HTTP_OK) {
            rc = transfer_error(&t, h, res, url);
            break;
        }
        o->status = sl_http_status(h);
        const char *next = sl_http_redirect(h);
        if (!is_redirect(o->status) || !next || o->over)
            break;
        char u[512];
        url_for_msg(r->wire_url, u, sizeof u);
        if (hops >= L->http_max_redirects) {
            rc = sl_exec_fail(r->x, r->etype,
                              "Exceeded maximum allowed redirects: %s redirected more than "
                              "http_max_redirects=%d times; raise it (--limit "
                              "http_max_redirects=N) or call the final address",
                              u, L->http_max_redirects);
            break;
        }
        char from[512], to[512], s1[16], s2[16], h1[256], h2[256];
        if (!sl_url_origin(url, from, sizeof from, s1, sizeof s1, h1, sizeof h1) ||
            !sl_url_origin(next, to, sizeof to, s2, sizeof s2, h2, sizeof h2) ||
            (strcasecmp(s2, "http") && strcasecmp(s2, "https"))) {
            char n2[512];
            url_for_msg(next, n2, sizeof n2);
            rc = sl_exec_fail(r->x, r->etype,
                              "%s redirected to '%s', which is not an http or https URL; "
                              "sluice follows redirects to http and https only", u, n2);
            break;
        }
        /* httpx's rules: 303 (but HEAD), and POST after 301 or 302, become
         * GET without a body; Authorization stays only on the same origin
         * or an upgrade to https on the same host; cookies never follow. */
        if ((o->status == 303 && strcmp(method, "HEAD")) ||
            ((o->status == 301 || o->status == 302) && !strcmp(method, "POST"))) {
            snprintf(method, sizeof method, "GET");
            with_body = false;
        }
        bool upgrade = !strcasecmp(s1, "http") && !strcasecmp(s2, "https") && !strcasecmp(h1, h2);
        if (strcmp(from, to) && !upgrade)
            kv_drop_ci(&hdrs, "authorization");
        kv_drop_ci(&hdrs, "cookie");
        char *n = sl_xstrdup(next);
        free(url);
        url = n;
    }
    free(url);
    free(t.last_name);
    kv_release(&hdrs);
    sl_http_free(h);
    return rc;
}

/* ---- building the request from the node's data ---- */

static int render(request *r, const char *what, const char *text, sl_buf *out)
{
    if (sl_exec_render(r->x, text ? text : "", out) < 0)
        return sl_exec_fail(r->x, "HttpRequestNodeError",
                            "%s is larger than %zu bytes once its {{#…#}} references are filled "
                            "in; raise http_max_binary_bytes (--limit http_max_binary_bytes=N) "
                            "or send less", what, r->lim->http_max_binary_bytes);
    return 0;
}

static bool header_name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return false;
    return true;
}

/* A selector as Python prints a list: ['node', 'var']. */
static void selector_text(const sl_value *sel, char *out, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, n);
    sl_buf_addc(&b, '[');
    for (size_t i = 0; i < json_array_size(sel); i++)
        sl_buf_addf(&b, "%s'%s'", i ? ", " : "", json_string_value(json_array_get(sel, i))
                                                     ? json_string_value(json_array_get(sel, i))
                                                     : "?");
    sl_buf_addc(&b, ']');
    snprintf(out, n, "%s", b.data ? b.data : "[]");
    sl_buf_release(&b);
}

/* The bytes of a file value: content_base64 (files this node made), or a
 * download of its remote_url through the guarded client. */
static int file_bytes(request *r, const sl_value *f, sl_buf *out)
{
    const char *name = json_string_value(json_object_get(f, "filename"));
    const char *remote = json_string_value(json_object_get(f, "remote_url"));
    if (!remote || !*remote)
        remote = json_string_value(json_object_get(f, "url"));
    size_t cap = r->lim->http_max_binary_bytes;
    sl_err e = {0};
    int got = sl_exec_file_bytes(r->x, f, cap, out, &e);
    if (got <= 0) {
        if (got < 0)
            sl_exec_fail(r->x, "FileFetchError", "file '%s' cannot be sent: %s (limit "
                         "http_max_binary_bytes=%zu)", name ? name : "?", e.msg, cap);
        sl_err_clear(&e);
        return got;
    }
    if (remote && (!strncmp(remote, "http://", 7) || !strncmp(remote, "https://", 8))) {
        request d;
        request_init(&d, r->x);
        d.etype = "FileFetchError";
        snprintf(d.method, sizeof d.method, "GET");
        d.wire_url = sl_xstrdup(remote);
        d.connect_s = r->connect_s;
        d.read_s = r->read_s;
        d.write_s = r->write_s;
        d.ssl_verify = r->ssl_verify;
        response o;
        response_init(&o, cap);
        int rc = perform(&d, &o);
        char u[512];
        url_for_msg(remote, u, sizeof u);
        if (rc == 0 && o.over)
            rc = sl_exec_fail(r->x, "FileFetchError",
                              "file '%s' from %s is larger than http_max_binary_bytes=%zu; raise "
                              "it (--limit http_max_binary_bytes=N)", name ? name : "?", u, cap);
        else if (rc == 0 && (o.status < 200 || o.status > 299))
            rc = sl_exec_fail(r->x, "FileFetchError",
                              "downloading file '%s' from %s failed with status code %ld",
                              name ? name : "?", u, o.status);
        if (rc == 0)
            sl_buf_add(out, o.body.data ? o.body.data : "", o.body.len);
        response_release(&o);
        request_release(&d);
        return rc;
    }
    return sl_exec_fail(r->x, "FileFetchError",
                        "file '%s' has no content sluice can read: a file must carry its bytes "
                        "in content_base64 (as files from http-request nodes do) or have an "
                        "http(s) remote_url", name ? name : "?");
}

static void add_part(request *r, const char *key, const sl_value *f, sl_buf *data)
{
    r->parts = sl_xrealloc(r->parts, (r->nparts + 1) * sizeof *r->parts);
    part *p = &r->parts[r->nparts++];
    const char *fn = json_string_value(json_object_get(f, "filename"));
    const char *mt = json_string_value(json_object_get(f, "mime_type"));
    p->key = sl_xstrdup(key);
    p->filename = sl_xstrdup(fn ? fn : "");
    /* a file value's mime_type is data: one with a control character
     * (CR/LF would add part headers) is sent as octet-stream */
    for (const char *c = mt; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            mt = NULL;
            break;
        }
    p->mime = sl_xstrdup(mt && *mt ? mt : "application/octet-stream");
    p->data = *data;
    sl_buf_init(data, r->lim->http_max_binary_bytes);
}

/* Lines "key:value" of an old DSL's string body data, which Dify 0.6
 * parsed as form fields. */
static int legacy_form_lines(request *r, const char *text, kvlist *into)
{
    const char *pos = text, *end = text + strlen(text), *line;
    size_t len;
    while (next_line(&pos, end, &line, &len)) {
        strip(&line, &len);
        if (!len)
            continue;
        const char *colon = memchr(line, ':', len);
        const char *k = line, *v = colon ? colon + 1 : line + len;
        size_t kn = colon ? (size_t)(colon - line) : len, vn = colon ? len - kn - 1 : 0;
        strip(&k, &kn);
        strip(&v, &vn);
        char *kt = sl_xstrndup(k, kn), *vt = sl_xstrndup(v, vn);
        sl_buf kb, vb;
        sl_buf_init(&kb, r->lim->http_max_binary_bytes);
        sl_buf_init(&vb, r->lim->http_max_binary_bytes);
        int rc = render(r, "a body field", kt, &kb);
        if (rc == 0)
            rc = render(r, "a body field", vt, &vb);
        if (rc == 0)
            kv_put(into, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "", vb.len);
        free(kt);
        free(vt);
        sl_buf_release(&kb);
        sl_buf_release(&vb);
        if (rc)
            return rc;
    }
    return 0;
}

/* Removes trailing commas and escapes raw control characters inside
 * strings: the two slips a rendered template makes most (a multi-line
 * variable pasted into "…", a list built with a comma too many), which
 * Dify's json_repair and json.loads(strict=False) accept. */
static void json_relax(const char *s, size_t n, sl_buf *out)
{
    bool in_str = false, esc = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            else if (c < 0x20) {
                static const char *const named[] = {[8] = "\\b", [9] = "\\t", [10] = "\\n",
                                                    [12] = "\\f", [13] = "\\r"};
                if (c < sizeof named / sizeof named[0] && named[c])
                    sl_buf_adds(out, named[c]);
                else
                    sl_buf_addf(out, "\\u%04x", c);
                continue;
            }
            sl_buf_addc(out, (char)c);
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == ',') {
            size_t j = i + 1;
            while (j < n && is_space((unsigned char)s[j]))
                j++;
            if (j < n && (s[j] == '}' || s[j] == ']'))
                continue;
        }
        sl_buf_addc(out, (char)c);
    }
}

/* Parses the rendered JSON body into the payload, written as httpx sends
 * json=; JSON null sends no body, as json=None does. */
static int build_json(request *r, const char *text, size_t n)
{
    sl_buf fixed;
    sl_buf_init(&fixed, n * 6 + 16); /* a control character grows to \u00XX */
    json_relax(text, n, &fixed);
    json_error_t jerr;
    sl_value *v = json_loadb(fixed.data ? fixed.data : "", fixed.len,
                             JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    sl_buf_release(&fixed);
    if (!v) {
        return sl_exec_fail(r->x, "RequestBodyError",
                            "Failed to parse JSON: %.*s%s (%s at line %d, column %d); fix the "
                            "JSON in the node's body",
                            (int)(n > QUOTE_MAX ? utf8_cut(text, QUOTE_MAX) : n), text,
                            n > QUOTE_MAX ? "…" : "",
                            jerr.text, jerr.line, jerr.column);
    }
    if (!json_is_null(v)) {
        /* httpx sends json= as json.dumps(obj): ", " and ": " separators,
         * non-ASCII escaped. */
        sl_buf py;
        sl_buf_init(&py, r->lim->http_max_binary_bytes);
        sl_value_pyjson(v, &py, false);
        ascii_escape(py.data ? py.data : "", py.len, &r->payload);
        if (py.toobig)
            r->payload.toobig = true;
        sl_buf_release(&py);
        r->send = true;
    }
    json_decref(v);
    if (r->payload.toobig)
        return sl_exec_fail(r->x, "RequestBodyError",
                            "the JSON body is larger than http_max_binary_bytes=%zu; raise it "
                            "(--limit http_max_binary_bytes=N) or send less",
                            r->lim->http_max_binary_bytes);
    return 0;
}

static int build_body(request *r, const sl_value *body)
{
    const char *bt = json_string_value(json_object_get(body, "type"));
    r->btype = index_of(bt, body_types, false);
    if (r->btype < 0)
        return sl_exec_fail(r->x, "RequestBodyError",
                            "body.type '%s' is not one of none, form-data, "
                            "x-www-form-urlencoded, raw-text, json, binary", bt ? bt : "");
    if (r->btype == B_NONE)
        return 0;
    const sl_value *data = json_object_get(body, "data");
    const char *legacy = json_is_string(data) && json_string_length(data) ? json_string_value(data)
                                                                          : NULL;
    size_t nitems = legacy ? 1 : json_is_array(data) ? json_array_size(data) : 0;
    const sl_value *item = json_is_array(data) ? json_array_get(data, 0) : NULL;
    size_t cap = r->lim->http_max_binary_bytes;

    if ((r->btype == B_RAW || r->btype == B_JSON) && nitems == 0)
        return 0;  /* sent empty, as Dify does (a load warning said so) */
    if (r->btype == B_RAW || r->btype == B_JSON || r->btype == B_BINARY) {
        if (nitems != 1)
            return sl_exec_fail(r->x, "RequestBodyError", "%s body type should have exactly one "
                                "item (found %zu); fix body.data in the node", bt, nitems);
    }
    if (r->btype == B_RAW || r->btype == B_JSON) {
        const char *tmpl = legacy ? legacy : json_string_value(json_object_get(item, "value"));
        r->raw_template = tmpl ? tmpl : "";
        if (r->btype == B_RAW) {
            if (render(r, "the body", r->raw_template, &r->payload))
                return -1;
            r->send = true;
            return 0;
        }
        sl_buf text;
        sl_buf_init(&text, cap);
        int rc = render(r, "the JSON body", r->raw_template, &text);
        if (rc == 0)
            rc = build_json(r, text.data ? text.data : "", text.len);
        sl_buf_release(&text);
        return rc;
    }
    if (r->btype == B_BINARY) {
        const sl_value *sel = json_object_get(item, "file");
        sl_value *f = sl_exec_get(r->x, sel);
        /* A one-file list is accepted too: that is what file-list inputs
         * and this node's own files output hold. */
        if (json_is_array(f) && json_array_size(f) == 1) {
            sl_value *one = json_incref(json_array_get(f, 0));
            json_decref(f);
            f = one;
        }
        if (!sl_value_is_file(f)) {
            char st[256];
            selector_text(sel, st, sizeof st);
            const char *why = f ? "it is not a file" : "no such variable";
            json_decref(f);
            return sl_exec_fail(r->x, "FileFetchError",
                                "cannot fetch file with selector %s: %s; pick a file variable "
                                "for the binary body", st, why);
        }
        int rc = file_bytes(r, f, &r->payload);
        json_decref(f);
        r->send = rc == 0;
        return rc;
    }

    /* Form bodies: x-www-form-urlencoded takes every item's key and value;
     * form-data takes text items as fields and file items as files. */
    kvlist fields = {0};
    kvlist file_keys = {0}; /* rendered key -> index of the item */
    int rc = 0;
    if (legacy) {
        rc = legacy_form_lines(r, legacy, &fields);
    } else {
        for (size_t i = 0; rc == 0 && i < nitems; i++) {
            const sl_value *it = json_array_get(data, i);
            const char *type = json_string_value(json_object_get(it, "type"));
            bool is_file = type && !strcmp(type, "file");
            sl_buf kb, vb;
            sl_buf_init(&kb, cap);
            sl_buf_init(&vb, cap);
            rc = render(r, "a body field name", json_string_value(json_object_get(it, "key")), &kb);
            if (rc == 0 && r->btype == B_FORM_DATA && is_file) {
                char idx[32];
                snprintf(idx, sizeof idx, "%zu", i);
                kv_put(&file_keys, kb.data ? kb.data : "", kb.len, idx, strlen(idx));
            } else if (rc == 0) {
                rc = render(r, "a body field", json_string_value(json_object_get(it, "value")),
                            &vb);
                if (rc == 0)
                    kv_put(&fields, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "",
                           vb.len);
            }
            sl_buf_release(&kb);
            sl_buf_release(&vb);
        }
    }
    if (rc == 0 && r->btype == B_URLENCODED) {
        urlencode(&r->payload, &fields);
        r->send = true;
        if (r->payload.toobig)
            rc = sl_exec_fail(r->x, "RequestBodyError",
                              "the form body is larger than http_max_binary_bytes=%zu; raise it "
                              "(--limit http_max_binary_bytes=N) or send less", cap);
    }
    if (rc == 0 && r->btype == B_FORM_DATA) {
        kv_copy(&r->form, &fields);
        r->send = true;
        for (size_t i = 0; rc == 0 && i < file_keys.n; i++) {
            const sl_value *it = json_array_get(data, (size_t)atoi(file_keys.a[i].v));
            sl_value *v = sl_exec_get(r->x, json_object_get(it, "file"));
            /* Like Dify, anything but a file or a list of files adds nothing. */
            size_t nf = sl_value_is_file(v) ? 1 : json_is_array(v) ? json_array_size(v) : 0;
            for (size_t k = 0; rc == 0 && k < nf; k++) {
                const sl_value *f = sl_value_is_file(v) ? v : json_array_get(v, k);
                if (!sl_value_is_file(f))
                    continue;
                sl_buf bytes;
                sl_buf_init(&bytes, cap);
                rc = file_bytes(r, f, &bytes);
                if (rc == 0)
                    add_part(r, file_keys.a[i].k, f, &bytes);
                sl_buf_release(&bytes);
            }
            json_decref(v);
        }
    }
    kv_release(&fields);
    kv_release(&file_keys);
    return rc;
}

static double timeout_value(const sl_value *t, const char *key, double max)
{
    const sl_value *v = json_object_get(t, key);
    double s = 0;
    if (json_is_number(v))
        s = json_number_value(v);
    else if (json_is_string(v))
        s = strtod(json_string_value(v), NULL);
    /* 0 or absent means the default, which is also the ceiling; a limit
     * of 0 means no ceiling (and no timeout unless the node sets one). */
    if (max <= 0)
        return s > 0 ? s : 0;
    return s > 0 && s < max ? s : max;
}

/* Renders params ("key:value" lines, split first and each side rendered
 * after, repeats kept). */
static int build_params(request *r, const char *text)
{
    const char *pos = text ? text : "", *end = pos + strlen(pos), *line;
    size_t len, cap = r->lim->http_max_binary_bytes;
    int rc = 0;
    while (rc == 0 && next_line(&pos, end, &line, &len)) {
        strip(&line, &len);
        const char *colon = memchr(line, ':', len);
        const char *k = line, *v = colon ? colon + 1 : line + len;
        size_t kn = colon ? (size_t)(colon - line) : len, vn = colon ? len - kn - 1 : 0;
        strip(&k, &kn);
        strip(&v, &vn);
        if (!kn)
            continue;
        char *kt = sl_xstrndup(k, kn), *vt = sl_xstrndup(v, vn);
        sl_buf kb, vb;
        sl_buf_init(&kb, cap);
        sl_buf_init(&vb, cap);
        rc = render(r, "a query parameter", kt, &kb);
        if (rc == 0)
            rc = render(r, "a query parameter", vt, &vb);
        if (rc == 0)
            kv_add(&r->params, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "", vb.len);
        free(kt);
        free(vt);
        sl_buf_release(&kb);
        sl_buf_release(&vb);
    }
    return rc;
}

/* A character that must not reach a header: a control character (CR, LF,
 * NUL, …; horizontal tab is allowed) or DEL.  Returns its position, or
 * -1 when there is none. */
static long header_bad_char(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return (long)i;
    }
    return -1;
}

static const char *char_name(unsigned char c)
{
    return c == '\r' ? "a carriage return (CR)" : c == '\n' ? "a line feed (LF)"
           : c == 0 ? "a NUL byte" : "a control character";
}

/* Splits the headers text into "key:value" lines (dict semantics: a
 * repeated key keeps the last value) and renders each line.  A value
 * that still holds a line break or another control character once its
 * {{#…#}} references are filled in is refused: it would otherwise become
 * headers of its own (Dify splits the rendered text into lines, so a
 * variable could add any header). */
static int build_headers(request *r, const char *text)
{
    const char *tpos = text ? text : "", *tend = tpos + strlen(tpos), *tline;
    size_t tlen;
    int rc = 0;
    while (rc == 0 && next_line(&tpos, tend, &tline, &tlen)) {
        char *tmpl = sl_xstrndup(tline, tlen);
        sl_buf h;
        sl_buf_init(&h, r->lim->http_max_binary_bytes);
        rc = render(r, "the headers", tmpl, &h);
        free(tmpl);
        const char *line = h.data ? h.data : "";
        const char *colon = memchr(line, ':', h.len);
        const char *k = line, *v = colon ? colon + 1 : line + h.len;
        size_t kn = colon ? (size_t)(colon - line) : h.len, vn = colon ? h.len - kn - 1 : 0;
        strip(&k, &kn);
        strip(&v, &vn);
        char *name = rc == 0 && (kn || vn) ? sl_xstrndup(k, kn) : NULL;
        long bad = name ? header_bad_char(v, vn) : -1;
        if (!name)
            ;
        else if (bad >= 0 || header_bad_char(k, kn) >= 0)
            rc = sl_exec_fail(r->x, "HttpRequestNodeError",
                              "header '%s': its %s holds %s once its {{#…#}} references are "
                              "filled in; a header is one line, so sluice does not send it "
                              "(it would add headers of its own): clean the variable, e.g. "
                              "with a template or code node",
                              header_name_ok(name) ? name : "(a line)",
                              bad >= 0 ? "value" : "name",
                              char_name((unsigned char)(bad >= 0 ? v[bad]
                                                                 : k[header_bad_char(k, kn)])));
        else if (header_name_ok(name))
            kv_put(&r->headers, k, kn, v, vn);
        else
            rc = sl_exec_fail(r->x, "HttpRequestNodeError",
                              "header name '%s' is not a valid HTTP header name (letters, digits "
                              "and !#$%%&'*+-.^_`|~ only); fix the node's headers", name);
        free(name);
        sl_buf_release(&h);
    }
    return rc;
}

/* The Authorization header (or config.header) of api-key authorization.
 * `k` is the rendered API key, stripped, already checked to hold no
 * control character. */
static void add_auth_header(request *r, const sl_value *cfg, const char *k)
{
    size_t kn = strlen(k);
    const char *ctype = json_string_value(json_object_get(cfg, "type"));
    const char *hname = json_string_value(json_object_get(cfg, "header"));
    if (!hname || !*hname)
        hname = "Authorization";
    r->auth_header = sl_xstrdup(hname);
    sl_buf val;
    sl_buf_init(&val, kn / 3 * 4 + 64);
    if (ctype && !strcmp(ctype, "bearer")) {
        sl_buf_adds(&val, "Bearer ");
        sl_buf_add(&val, k, kn);
    } else if (ctype && !strcmp(ctype, "basic")) {
        /* "user:pass" is encoded; anything else is taken as already
         * encoded credentials. */
        sl_buf_adds(&val, "Basic ");
        if (memchr(k, ':', kn))
            sl_base64_encode((const unsigned char *)k, kn, &val);
        else
            sl_buf_add(&val, k, kn);
    } else if (ctype && !strcmp(ctype, "custom")) {
        sl_buf_add(&val, k, kn);
    }
    if (val.len)
        kv_puts(&r->headers, hname, val.data);
    /* the key, the credentials as encoded and a basic password alone are
     * masked wherever they would show (errors, events, logs) */
    sl_exec_secret(r->x, k);
    if (ctype && !strcmp(ctype, "basic") && val.len > 6) {
        sl_exec_secret(r->x, val.data + 6);
        if (strchr(k, ':'))
            sl_exec_secret(r->x, strchr(k, ':') + 1);
    }
    sl_buf_release(&val);
}

/* The URL as sent: path and query escaped where needed, params merged. */
static int build_wire_url(request *r, const char *url)
{
    urlparts up;
    url_split(url, &up);
    sl_buf w, q;
    sl_buf_init(&w, 0);
    sl_buf_init(&q, 0);
    sl_buf_add(&w, up.scheme, up.scheme_n);
    sl_buf_adds(&w, "://");
    sl_buf_add(&w, up.netloc, up.netloc_n);
    /* a password in the URL (user:pass@host) is a secret like any other */
    const char *at = up.netloc_n ? memrchr(up.netloc, '@', up.netloc_n) : NULL;
    const char *colon = at ? memchr(up.netloc, ':', (size_t)(at - up.netloc)) : NULL;
    if (colon && at - colon > 1) {
        char *pw = sl_xstrndup(colon + 1, (size_t)(at - colon - 1));
        sl_exec_secret(r->x, pw);
        free(pw);
    }
    url_fix(&w, up.path, up.path_n);
    if (r->params.n)
        merge_query(&q, up.query ? up.query : "", up.query_n, &r->params);
    else if (up.has_query)
        url_fix(&q, up.query, up.query_n);
    if (q.len || up.has_query) {
        sl_buf_addc(&w, '?');
        sl_buf_add(&w, q.data ? q.data : "", q.len);
    }
    sl_buf_release(&q);
    r->wire_url = sl_buf_detach(&w);
    sl_err e = {0};
    if (sl_url_check(r->wire_url, &e) == 0)
        return 0;
    char u[512];
    url_for_msg(url, u, sizeof u);
    int rc = e.code == SL_EINVAL
                 ? sl_exec_fail(r->x, "InvalidURLError",
                                "url '%s' is not a valid URL: %s; fix the node's url", u, e.msg)
                 : sl_exec_fail(r->x, "HttpRequestNodeError", "%s", e.msg);
    sl_err_clear(&e);
    return rc;
}

/* Everything Dify's Executor does before sending, in its order: API key,
 * url, params, headers, body, then the auth and Content-Type headers. */
static int build_request(request *r)
{
    const sl_value *d = sl_exec_data(r->x);
    const sl_limits *L = r->lim;
    sl_buf key;
    sl_buf_init(&key, L->http_max_binary_bytes);
    char *key_text = NULL; /* the key, stripped */
    int rc = -1;

    const char *m = json_string_value(json_object_get(d, "method"));
    if (index_of(m, methods, true) < 0) {
        sl_exec_fail(r->x, "InvalidHttpMethodError", "Invalid http method %s; use get, post, "
                     "put, patch, delete, head or options", m ? m : "(none)");
        goto done;
    }
    for (size_t i = 0; i < sizeof r->method - 1 && m[i]; i++)
        r->method[i] = (char)toupper((unsigned char)m[i]);

    const sl_value *auth = json_object_get(d, "authorization");
    const char *atype = json_string_value(json_object_get(auth, "type"));
    const sl_value *cfg = json_object_get(auth, "config");
    bool api_key = atype && !strcmp(atype, "api-key");
    if (api_key) {
        if (!json_is_object(cfg)) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "authorization config is required for api-key authorization; give "
                         "authorization.config {type, api_key, header}");
            goto done;
        }
        if (render(r, "the API key", json_string_value(json_object_get(cfg, "api_key")), &key))
            goto done;
        const char *kt = key.data ? key.data : "";
        size_t key_n = key.len;
        strip(&kt, &key_n);
        key_text = sl_xstrndup(kt, key_n);
        if (!key_n) {
            sl_exec_fail(r->x, "AuthorizationConfigError", "API key is required for "
                         "authorization but was empty. Please provide a valid API key.");
            goto done;
        }
        long bad = header_bad_char(key_text, key_n);
        if (bad >= 0) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "the API key holds %s once its {{#…#}} references are filled in; it "
                         "goes into a header, which is one line, so sluice does not send it: "
                         "clean the key's variable", char_name((unsigned char)key_text[bad]));
            goto done;
        }
        const char *hname = json_string_value(json_object_get(cfg, "header"));
        if (hname && *hname && !header_name_ok(hname)) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "authorization.config.header '%s' is not a valid HTTP header name "
                         "(letters, digits and !#$%%&'*+-.^_`|~ only); fix it", hname);
            goto done;
        }
    }

    if (render(r, "the url", json_string_value(json_object_get(d, "url")), &r->url))
        goto done;
    const char *url = r->url.data ? r->url.data : "";
    if (!*url) {
        sl_exec_fail(r->x, "InvalidURLError",
                     "url is required; its references may have rendered to nothing");
        goto done;
    }
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        char u[512];
        url_for_msg(url, u, sizeof u);
        sl_exec_fail(r->x, "InvalidURLError",
                     "url should start with http:// or https:// (got '%s')", u);
        goto done;
    }
    if (build_params(r, json_string_value(json_object_get(d, "params"))) ||
        build_headers(r, json_string_value(json_object_get(d, "headers"))))
        goto done;
    const sl_value *body = json_object_get(d, "body");
    if (json_is_object(body) && build_body(r, body))
        goto done;
    if (api_key)
        add_auth_header(r, cfg, key_text);
    if (r->btype == B_FORM_DATA)
        kv_drop_ci(&r->headers, "content-type"); /* the multipart boundary must win */
    else if (r->btype >= 0 && body_ctype[r->btype] && !kv_find_ci(&r->headers, "content-type"))
        kv_puts(&r->headers, "Content-Type", body_ctype[r->btype]);
    if (build_wire_url(r, url))
        goto done;

    const sl_value *to = json_object_get(d, "timeout");
    r->connect_s = timeout_value(to, "connect", L->http_connect_timeout_s);
    r->read_s = timeout_value(to, "read", L->http_read_timeout_s);
    r->write_s = timeout_value(to, "write", L->http_write_timeout_s);
    const sl_value *sv = json_object_get(d, "ssl_verify");
    r->ssl_verify = json_is_boolean(sv) ? json_is_true(sv) : L->http_ssl_verify;
    rc = 0;
done:
    sl_buf_release(&key);
    free(key_text);
    return rc;
}

/* Dify's process_data.request: the request as raw HTTP text, the API key
 * masked, binary content summarised. */
static sl_value *request_log(const request *r)
{
    urlparts up;
    const char *url = r->url.data ? r->url.data : "";
    url_split(url, &up);
    sl_buf s;
    sl_buf_init(&s, 0);
    sl_buf_addf(&s, "%s ", r->method);
    if (up.path_n)
        sl_buf_add(&s, up.path, up.path_n);
    else
        sl_buf_addc(&s, '/');
    if (r->params.n) {
        sl_buf_addc(&s, '?');
        urlencode(&s, &r->params);
    } else if (up.query_n) {
        sl_buf_addc(&s, '?');
        sl_buf_add(&s, up.query, up.query_n);
    }
    /* The Host line as sent: without user:password@, which goes out as an
     * Authorization header and must not show in events. */
    sl_buf_adds(&s, " HTTP/1.1\r\nHost: ");
    const char *at = memchr(up.netloc, '@', up.netloc_n);
    const char *host = at ? at + 1 : up.netloc;
    sl_buf_add(&s, host, up.netloc_n - (size_t)(host - up.netloc));
    sl_buf_adds(&s, "\r\n");

    char boundary[40] = "----WebKitFormBoundary";
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        for (size_t i = 0; i < sizeof rnd; i++)
            rnd[i] = (unsigned char)(mono_s() * 1e6 + (double)i * 7);
    for (size_t i = 0; i < sizeof rnd; i++)
        boundary[22 + i] = (char)('a' + rnd[i] % 26);
    boundary[38] = 0;

    kvlist h = {0};
    kv_copy(&h, &r->headers);
    if (r->btype == B_FORM_DATA) {
        char ct[80];
        snprintf(ct, sizeof ct, "multipart/form-data; boundary=%s", boundary);
        kv_puts(&h, "Content-Type", ct);
    }
    for (size_t i = 0; i < h.n; i++) {
        sl_buf_addf(&s, "%s: ", h.a[i].k);
        if (r->auth_header && !strcasecmp(h.a[i].k, r->auth_header))
            for (size_t k = utf8_chars(h.a[i].v, strlen(h.a[i].v)); k; k--)
                sl_buf_addc(&s, '*');
        else
            sl_buf_adds(&s, h.a[i].v);
        sl_buf_adds(&s, "\r\n");
    }
    kv_release(&h);

    sl_buf b;
    sl_buf_init(&b, 0);
    if (r->btype == B_FORM_DATA && (r->form.n || r->nparts)) {
        for (size_t i = 0; i < r->form.n; i++)
            sl_buf_addf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n",
                        boundary, r->form.a[i].k, r->form.a[i].v);
        for (size_t i = 0; i < r->nparts; i++)
            sl_buf_addf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n"
                        "<file_content_binary: '%s', type='%s', size=%zu bytes>\r\n",
                        boundary, r->parts[i].key, *r->parts[i].filename ? r->parts[i].filename
                        : "unknown", r->parts[i].mime, r->parts[i].data.len);
        sl_buf_addf(&b, "--%s--\r\n", boundary);
    } else if (r->btype == B_BINARY && r->payload.len) {
        sl_buf_addf(&b, "<binary_content: size=%zu bytes>", r->payload.len);
    } else if (r->btype == B_RAW) {
        if (r->payload.len)
            sl_utf8_clean(r->payload.data, r->payload.len, &b);
        else
            sl_buf_adds(&b, r->raw_template ? r->raw_template : "");
    } else if ((r->btype == B_URLENCODED || r->btype == B_JSON) && r->payload.len) {
        /* Python logs falsy JSON ({}, [], 0, "") as no body at all. */
        const char *p = r->payload.data;
        bool falsy = r->btype == B_JSON && (!strcmp(p, "{}") || !strcmp(p, "[]") ||
                                            !strcmp(p, "0") || !strcmp(p, "0.0") ||
                                            !strcmp(p, "\"\"") || !strcmp(p, "false"));
        if (!falsy)
            sl_buf_add(&b, p, r->payload.len);
    }
    if (b.len)
        sl_buf_addf(&s, "Content-Length: %zu\r\n", utf8_chars(b.data, b.len));
    sl_buf_adds(&s, "\r\n");
    sl_buf_add(&s, b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(s.data ? s.data : "", s.len, &clean);
    sl_value *v = json_stringn_nocheck(clean.data ? clean.data : "", clean.len);
    sl_buf_release(&clean);
    sl_buf_release(&s);
    return v;
}

/* ---- the response ---- */

/* A file value for a response body Dify would store as a tool file. */
static sl_value *response_file(const request *r, const response *o, const char *ctype,
                               const char *cd)
{
    char ct[256];
    header_main(ctype, ct, sizeof ct);
    char *cd_name = cd ? disposition_filename(cd) : NULL;
    /* The last path segment of the URL, query cut, escapes undone. */
    const char *url = r->url.data ? r->url.data : "";
    size_t un = strcspn(url, "?#");
    const char *seg = url;
    for (size_t i = 0; i < un; i++)
        if (url[i] == '/')
            seg = url + i + 1;
    char *url_name = unquote(seg, (size_t)(url + un - seg), false);
    if (!sl_utf8_valid(url_name, strlen(url_name)) || strchr(url_name, '/') ||
        strchr(url_name, '\\')) {
        free(url_name);
        url_name = sl_xstrdup("");
    }
    const char *mime = sl_mime_for_ext(sl_file_ext(cd_name));
    if (!mime)
        mime = *ct ? ct : NULL;
    if (!mime)
        mime = sl_mime_for_ext(sl_file_ext(url_name));
    if (!mime)
        mime = "application/octet-stream";
    sl_buf name;
    sl_buf_init(&name, 0);
    sl_buf_adds(&name, cd_name ? cd_name : *url_name ? url_name : "file");
    if (!sl_file_ext(name.data)) {
        const char *e = sl_mime_ext_for(mime);
        sl_buf_adds(&name, e ? e : ".bin");
    }
    char ext[32];
    snprintf(ext, sizeof ext, "%s", sl_file_ext(name.data));
    for (char *c = ext; *c; c++)
        *c = (char)tolower((unsigned char)*c);

    sl_value *f = json_object();
    json_object_set_new(f, "dify_model_identity", json_string("__dify__file__"));
    json_object_set_new(f, "id", json_null());
    json_object_set_new(f, "type", json_string(sl_file_kind(ext, mime)));
    json_object_set_new(f, "transfer_method", json_string("tool_file"));
    json_object_set_new(f, "remote_url", json_null());
    json_object_set_new(f, "related_id", json_null());
    json_object_set_new(f, "filename", json_string(name.data));
    json_object_set_new(f, "extension", json_string(ext));
    json_object_set_new(f, "mime_type", json_string(mime));
    json_object_set_new(f, "size", json_integer((json_int_t)o->body.len));
    sl_buf b64;
    sl_buf_init(&b64, o->body.len / 3 * 4 + 16);
    sl_base64_encode((const unsigned char *)(o->body.data ? o->body.data : ""), o->body.len, &b64);
    json_object_set_new(f, "content_base64", json_stringn(b64.data ? b64.data : "", b64.len));
    sl_buf_release(&b64);
    sl_buf_release(&name);
    free(cd_name);
    free(url_name);
    return f;
}

static int publish(request *r, response *o)
{
    const sl_limits *L = r->lim;
    const char *ctype = json_string_value(json_object_get(o->headers, "content-type"));
    const char *cd = json_string_value(json_object_get(o->headers, "content-disposition"));
    const char *body = o->body.data ? o->body.data : "";
    bool head = !strcmp(r->method, "HEAD");
    bool file = !head && response_is_file(ctype, cd, body, o->body.len);
    size_t cap = file ? L->http_max_binary_bytes : L->http_max_text_bytes;
    if (o->over || o->body.len > cap) {
        char now[96], limit[64];
        if (o->over) {
            const char *cl = json_string_value(json_object_get(o->headers, "content-length"));
            unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
            if (n > cap)
                readable_size((size_t)n, now, sizeof now);
            else {
                readable_size(o->body.cap, limit, sizeof limit);
                snprintf(now, sizeof now, "more than %s", limit);
            }
        } else {
            readable_size(o->body.len, now, sizeof now);
        }
        return sl_exec_fail(r->x, "ResponseSizeError",
                            "%s size is too large, max size is %.2f MB, but current size is %s. "
                            "The limit is %s=%zu bytes; raise it (--limit %s=N) to accept "
                            "larger responses",
                            file ? "File" : "Text", (double)cap / 1024 / 1024, now,
                            file ? "http_max_binary_bytes" : "http_max_text_bytes", cap,
                            file ? "http_max_binary_bytes" : "http_max_text_bytes");
    }
    sl_value *files = json_array();
    sl_value *text;
    if (file) {
        json_array_append_new(files, response_file(r, o, ctype, cd));
        text = json_string("");
    } else {
        sl_buf cs;
        sl_buf_init(&cs, 256);
        bool has = header_param(ctype, "charset", &cs);
        text = decode_body(has ? cs.data : NULL, body, o->body.len);
        sl_buf_release(&cs);
    }
    /* Dify fails a non-2xx response only when something can act on the
     * failure: an error strategy or retries. */
    const sl_value *d = sl_exec_data(r->x);
    const char *strategy = json_string_value(json_object_get(d, "error_strategy"));
    bool acts = (strategy && (!strcmp(strategy, "fail-branch") ||
                              !strcmp(strategy, "default-value"))) ||
                json_is_true(json_object_get(json_object_get(d, "retry_config"), "retry_enabled"));
    if ((o->status < 200 || o->status > 299) && acts) {
        json_decref(files);
        json_decref(text);
        return sl_exec_fail(r->x, "HTTPResponseCodeError", "Request failed with status code %ld",
                            o->status);
    }
    sl_exec_output(r->x, "status_code", json_integer(o->status));
    sl_exec_output(r->x, "body", text);
    sl_exec_output(r->x, "headers", json_incref(o->headers));
    sl_exec_output(r->x, "files", files);
    return 0;
}

static int run(sl_node_exec *x)
{
    request r;
    request_init(&r, x);
    int rc = build_request(&r);
    if (rc == 0) {
        sl_exec_process(x, "request", request_log(&r));
        size_t cap = r.lim->http_max_text_bytes > r.lim->http_max_binary_bytes
                         ? r.lim->http_max_text_bytes
                         : r.lim->http_max_binary_bytes;
        response o;
        response_init(&o, cap);
        rc = perform(&r, &o);
        if (rc == 0)
            rc = publish(&r, &o);
        response_release(&o);
    }
    request_release(&r);
    return rc;
}

/* ---- load-time checks ---- */

static bool numeric_text(const char *s)
{
    char *end;
    if (!s || !*s)
        return false;
    strtod(s, &end);
    while (is_space((unsigned char)*end))
        end++;
    return !*end;
}

static int check_text(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                      const char *field)
{
    const sl_value *v = json_object_get(at, key);
    if (!v || json_is_null(v))
        return 0;
    return sl_check_text_refs(c, n, at, key, field);
}

static int check_auth(sl_check *c, const sl_gnode *n, const sl_value *d)
{
    const sl_value *a = json_object_get(d, "authorization");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_object(a)) {
        sl_check_error(c, n, d, "authorization", "authorization",
                       "must be a mapping {type: no-auth | api-key, config: ...}");
        return -1;
    }
    const char *t = json_string_value(json_object_get(a, "type"));
    if (!t || (strcmp(t, "no-auth") && strcmp(t, "api-key"))) {
        sl_check_error(c, n, a, json_object_get(a, "type") ? "type" : NULL, "authorization.type",
                       "is '%s'; use no-auth or api-key", t ? t : "(missing)");
        return -1;
    }
    if (!strcmp(t, "no-auth"))
        return 0;
    const sl_value *cfg = json_object_get(a, "config");
    if (!json_is_object(cfg)) {
        sl_check_error(c, n, a, cfg ? "config" : NULL, "authorization.config",
                       "is required for api-key authorization: {type: basic | bearer | custom, "
                       "api_key, header}");
        return -1;
    }
    int bad = 0;
    const char *ct = json_string_value(json_object_get(cfg, "type"));
    static const char *const ctypes[] = {"basic", "bearer", "custom", NULL};
    if (index_of(ct, ctypes, false) < 0) {
        sl_check_error(c, n, cfg, json_object_get(cfg, "type") ? "type" : NULL,
                       "authorization.config.type", "is '%s'; use basic, bearer or custom",
                       ct ? ct : "(missing)");
        bad = -1;
    }
    const sl_value *k = json_object_get(cfg, "api_key");
    if (!json_is_string(k)) {
        sl_check_error(c, n, cfg, k ? "api_key" : NULL, "authorization.config.api_key",
                       "is required for api-key authorization; give the key or a {{#env.…#}} "
                       "reference to it");
        bad = -1;
    } else if (sl_check_text_refs(c, n, cfg, "api_key", "authorization.config.api_key") < 0) {
        bad = -1;
    }
    const sl_value *hd = json_object_get(cfg, "header");
    if (hd && !json_is_null(hd) && !json_is_string(hd)) {
        sl_check_error(c, n, cfg, "header", "authorization.config.header",
                       "must be a header name such as X-Api-Key");
        bad = -1;
    }
    return bad;
}

static int check_body(sl_check *c, const sl_gnode *n, const sl_value *d)
{
    const sl_value *b = json_object_get(d, "body");
    if (!b || json_is_null(b))
        return 0;
    if (!json_is_object(b)) {
        sl_check_error(c, n, d, "body", "body", "must be a mapping {type, data}");
        return -1;
    }
    const char *t = json_string_value(json_object_get(b, "type"));
    int bt = index_of(t, body_types, false);
    if (bt < 0) {
        sl_check_error(c, n, b, json_object_get(b, "type") ? "type" : NULL, "body.type",
                       "is '%s'; use none, form-data, x-www-form-urlencoded, raw-text, json or "
                       "binary", t ? t : "(missing)");
        return -1;
    }
    if (bt == B_NONE)
        return 0;
    const sl_value *data = json_object_get(b, "data");
    size_t count = 0;
    int bad = 0;
    if (json_is_string(data)) {
        count = json_string_length(data) ? 1 : 0;
        if (bt == B_BINARY) {
            sl_check_error(c, n, b, "data", "body.data",
                           "a binary body needs an item {type: file, file: [node_id, var]}");
            return -1;
        }
        if (sl_check_text_refs(c, n, b, "data", "body.data") < 0)
            bad = -1;
    } else if (json_is_array(data)) {
        count = json_array_size(data);
        for (size_t i = 0; i < count; i++) {
            const sl_value *it = json_array_get(data, i);
            char f[64];
            snprintf(f, sizeof f, "body.data[%zu]", i);
            if (!json_is_object(it)) {
                sl_check_error(c, n, it, NULL, f, "must be a mapping {key, type, value, file}");
                bad = -1;
                continue;
            }
            const char *it_type = json_string_value(json_object_get(it, "type"));
            if (!it_type || (strcmp(it_type, "text") && strcmp(it_type, "file"))) {
                snprintf(f, sizeof f, "body.data[%zu].type", i);
                sl_check_error(c, n, it, json_object_get(it, "type") ? "type" : NULL, f,
                               "is '%s'; use text or file", it_type ? it_type : "(missing)");
                bad = -1;
                continue;
            }
            snprintf(f, sizeof f, "body.data[%zu].key", i);
            if (check_text(c, n, it, "key", f) < 0)
                bad = -1;
            bool file_item = !strcmp(it_type, "file");
            if (file_item && (bt == B_BINARY || bt == B_FORM_DATA)) {
                snprintf(f, sizeof f, "body.data[%zu].file", i);
                if (sl_check_selector(c, n, it, "file", f, bt == B_BINARY) < 0)
                    bad = -1;
            } else {
                snprintf(f, sizeof f, "body.data[%zu].value", i);
                if (check_text(c, n, it, "value", f) < 0)
                    bad = -1;
            }
        }
    } else if (data && !json_is_null(data)) {
        sl_check_error(c, n, b, "data", "body.data", "must be a list of {key, type, value, file}");
        return -1;
    }
    if ((bt == B_RAW || bt == B_JSON) && count == 0) {
        sl_check_warn(c, n, b, data ? "data" : NULL, "body.data",
                      "a %s body with no item is sent empty, as Dify does; add an item "
                      "{type: text, value: ...} to send something", t);
    } else if ((bt == B_RAW || bt == B_JSON || bt == B_BINARY) && count != 1) {
        sl_check_error(c, n, b, data ? "data" : NULL, "body.data",
                       "a %s body takes exactly one item, found %zu; keep one item %s", t,
                       count, bt == B_BINARY ? "{type: file, file: [node_id, var]}"
                                             : "{type: text, value: ...}");
        bad = -1;
    }
    return bad;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const sl_value *m = json_object_get(d, "method");
    if (index_of(json_string_value(m), methods, true) < 0) {
        sl_check_error(c, n, d, m ? "method" : NULL, "method",
                       "is '%s'; use get, post, put, patch, delete, head or options",
                       json_string_value(m) ? json_string_value(m) : "(missing)");
        bad = -1;
    }
    const sl_value *u = json_object_get(d, "url");
    const char *us = json_string_value(u);
    if (!us || !*us) {
        sl_check_error(c, n, d, u ? "url" : NULL, "url",
                       "is missing or empty; give the address to call, e.g. "
                       "https://api.example.com/items");
        bad = -1;
    } else if (sl_check_text_refs(c, n, d, "url", "url") < 0) {
        bad = -1;
    } else if (!strstr(us, "{{#") && strncmp(us, "http://", 7) && strncmp(us, "https://", 8)) {
        sl_check_error(c, n, d, "url", "url", "'%s' must start with http:// or https://", us);
        bad = -1;
    }
    if (check_text(c, n, d, "headers", "headers") < 0)
        bad = -1;
    if (check_text(c, n, d, "params", "params") < 0)
        bad = -1;
    if (check_auth(c, n, d) < 0)
        bad = -1;
    if (check_body(c, n, d) < 0)
        bad = -1;
    const sl_value *to = json_object_get(d, "timeout");
    if (to && !json_is_null(to) && !json_is_object(to)) {
        sl_check_error(c, n, d, "timeout", "timeout",
                       "must be a mapping {connect, read, write} of seconds");
        bad = -1;
    } else if (json_is_object(to)) {
        static const char *const keys[] = {"connect", "read", "write"};
        for (size_t i = 0; i < 3; i++) {
            const sl_value *v = json_object_get(to, keys[i]);
            bool ok = !v || json_is_null(v) || (json_is_number(v) && json_number_value(v) >= 0) ||
                      (json_is_string(v) && numeric_text(json_string_value(v)) &&
                       strtod(json_string_value(v), NULL) >= 0);
            if (!ok) {
                char f[32];
                snprintf(f, sizeof f, "timeout.%s", keys[i]);
                sl_check_error(c, n, to, keys[i], f,
                               "must be a number of seconds (0 or empty for the default)");
                bad = -1;
            }
        }
    }
    const sl_value *sv = json_object_get(d, "ssl_verify");
    if (sv && !json_is_null(sv) && !json_is_boolean(sv)) {
        sl_check_error(c, n, d, "ssl_verify", "ssl_verify", "must be true or false");
        bad = -1;
    }
    return bad;
}

const sl_node_kind sl_kind_http_request = {.type = "http-request", .check = check, .run = run};
