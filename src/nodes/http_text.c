/*
 * http_text — the text rules of the http-request node: Python's strip and
 * splitlines, dict-like key/value lists, charsets, urllib's quoting and
 * splitting, header parameters (RFC 5987 file names).
 */
#include "nodes/http_request.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers ---- */

int sl_hr_index_of(const char *s, const char *const *set, bool nocase)
{
    for (int i = 0; s && set[i]; i++)
        if (nocase ? strcasecmp(s, set[i]) == 0 : strcmp(s, set[i]) == 0)
            return i;
    return -1;
}

/* Python's str.strip() set, limited to ASCII (plus the separators that
 * splitlines also breaks on). */
bool sl_hr_is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

void sl_hr_strip(const char **s, size_t *n)
{
    while (*n && sl_hr_is_space((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && sl_hr_is_space((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Next line as Python's str.splitlines() cuts it: \n, \r, \r\n, \v, \f,
 * \x1c-\x1e, U+0085, U+2028 and U+2029 end a line; no empty last line. */
bool sl_hr_next_line(const char **pos, const char *end, const char **line, size_t *len)
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

void sl_hr_kv_add(kvlist *l, const char *k, size_t kn, const char *v, size_t vn)
{
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? l->alloc * 2 : 8;
        l->a = sl_xrealloc(l->a, l->alloc * sizeof *l->a);
    }
    l->a[l->n].k = sl_xstrndup(k, kn);
    l->a[l->n].v = sl_xstrndup(v, vn);
    l->n++;
}

void sl_hr_kv_put(kvlist *l, const char *k, size_t kn, const char *v, size_t vn)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->a[i].k) == kn && memcmp(l->a[i].k, k, kn) == 0) {
            free(l->a[i].v);
            l->a[i].v = sl_xstrndup(v, vn);
            return;
        }
    sl_hr_kv_add(l, k, kn, v, vn);
}

void sl_hr_kv_puts(kvlist *l, const char *k, const char *v)
{
    sl_hr_kv_put(l, k, strlen(k), v, strlen(v));
}

const kv *sl_hr_kv_find_ci(const kvlist *l, const char *k)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcasecmp(l->a[i].k, k) == 0)
            return &l->a[i];
    return NULL;
}

void sl_hr_kv_drop_ci(kvlist *l, const char *k)
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

void sl_hr_kv_copy(kvlist *dst, const kvlist *src)
{
    for (size_t i = 0; i < src->n; i++)
        sl_hr_kv_puts(dst, src->a[i].k, src->a[i].v);
}

void sl_hr_kv_release(kvlist *l)
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
sl_value *sl_hr_header_text(const char *s, size_t n)
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
size_t sl_hr_utf8_cut(const char *s, size_t n)
{
    while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

/* Python counts characters, not bytes, in len(). */
/* JSON text with every non-ASCII character written as \uXXXX, as Python's
 * json.dumps (ensure_ascii) and therefore httpx's json= send it.  The input
 * is valid UTF-8 (jansson wrote it). */
void sl_hr_ascii_escape(const char *s, size_t n, sl_buf *out)
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
sl_value *sl_hr_decode_body(const char *charset, const char *s, size_t n)
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

void sl_hr_urlencode(sl_buf *out, const kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            sl_buf_addc(out, '&');
        quote_plus(out, l->a[i].k, strlen(l->a[i].k));
        sl_buf_addc(out, '=');
        quote_plus(out, l->a[i].v, strlen(l->a[i].v));
    }
}

/* Percent-decoding; plus becomes a space when `plus`.  libcurl's URL API
 * decodes a whole part at once, never "+", and refuses control
 * characters, where urllib's unquote works on one query key or path
 * segment and keeps them. */
char *sl_hr_unquote(const char *s, size_t n, bool plus)
{
    char *o = sl_xmalloc(n + 1), *w = o;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && sl_hex_digit(s[i + 1]) >= 0 && sl_hex_digit(s[i + 2]) >= 0) {
            *w++ = (char)(sl_hex_digit(s[i + 1]) * 16 + sl_hex_digit(s[i + 2]));
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
 * escapes included, as httpx does.  libcurl's own encoder (CURLU_URLENCODE)
 * is not used: it leaves "<>\"^`{|}\\" as they are, writes lower-case hex
 * and turns a space in a query into "+" (tests/cases/http/url.yml). */
void sl_hr_url_fix(sl_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || strchr("\"<>\\^`{|}", c))
            sl_buf_addf(out, "%%%02X", c);
        else
            sl_buf_addc(out, (char)c);
    }
}

char *sl_hr_url_controls(const char *u)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            sl_buf_addf(&b, "%%%02X", *p);
        else
            sl_buf_addc(&b, (char)*p);
    }
    return b.data ? sl_buf_detach(&b) : sl_xstrdup("");
}

/* The URL's query merged with the node's params the way httpx merges
 * params= into a URL: a key the params name loses its URL values and takes
 * the params' values at its first position; other params follow in order. */
void sl_hr_merge_query(sl_buf *out, const char *q, size_t qn, const kvlist *params)
{
    bool *done = sl_xcalloc(params->n + 1, 1);
    bool first = true;
    const char *p = q, *end = q + qn;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        size_t len = amp ? (size_t)(amp - p) : (size_t)(end - p);
        if (len) {
            const char *eq = memchr(p, '=', len);
            char *key = sl_hr_unquote(p, eq ? (size_t)(eq - p) : len, true);
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
                sl_hr_url_fix(out, p, len);
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
void sl_hr_url_for_msg(const char *u, char *out, size_t n)
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
        size_t k = sl_hr_utf8_cut(out, n - 4);
        memcpy(out + k, "...", 4);
    }
}

/* ---- header parameters (Content-Type, Content-Disposition) ---- */

/* Copies the main value (before ';'), stripped and lower-cased. */
void sl_hr_header_main(const char *h, char *out, size_t n)
{
    const char *s = h ? h : "";
    size_t len = strcspn(s, ";");
    sl_hr_strip(&s, &len);
    if (len >= n)
        len = n - 1;
    for (size_t i = 0; i < len; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[len] = 0;
}

/* Value of parameter `name` (case-insensitive) in a header like
 * `attachment; filename="a b.pdf"`; quotes and backslash escapes undone.
 * Returns false when absent. */
bool sl_hr_header_param(const char *h, const char *name, sl_buf *out)
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
        sl_hr_strip(&k, &kn);
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
            sl_hr_strip(&vs, &vn);
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
char *sl_hr_disposition_filename(const char *cd)
{
    sl_buf v, name;
    sl_buf_init(&v, 4096);
    sl_buf_init(&name, 4096);
    char *res = NULL;
    if (sl_hr_header_param(cd, "filename*", &v) && v.len) {
        /* charset'lang'percent-encoded */
        const char *q1 = memchr(v.data, '\'', v.len);
        const char *q2 = q1 ? memchr(q1 + 1, '\'', v.len - (size_t)(q1 + 1 - v.data)) : NULL;
        const char *enc = q2 ? q2 + 1 : v.data;
        char *raw = sl_hr_unquote(enc, v.len - (size_t)(enc - v.data), false);
        bool latin1 = q1 && (size_t)(q1 - v.data) >= 3 && !strncasecmp(v.data, "iso-8859-1", 10);
        if (latin1 || !sl_utf8_valid(raw, strlen(raw)))
            latin1_to_utf8(raw, strlen(raw), &name);
        else
            sl_buf_adds(&name, raw);
        free(raw);
    } else {
        sl_buf_reset(&v);
        if (sl_hr_header_param(cd, "filename", &v) && v.len) {
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
