/*
 * mail — the text of an e-mail (.eml, RFC 5322 + MIME) as Dify's
 * partition_email gives it (research notes §3.12), and of an Outlook
 * message (.msg, a compound file: extract/cfb.h) as partition_msg does
 * (§3.13, at sl_extract_msg below; its body and attachments become
 * elements the same way).
 *
 * The message is read into a tree of parts (headers unfolded, multiparts
 * split on their boundaries, preamble and epilogue dropped), then:
 *   - the body is Python's get_body(("html", "plain")): the first text/html
 *     part that is not an attachment, searched depth first through every
 *     multipart but multipart/related (which offers its first part only),
 *     else the first such text/plain part;
 *   - an HTML body becomes one element per block (p, div, li, h1 to h6, td,
 *     tr, br, ...), its whitespace collapsed and references decoded; a plain
 *     body is split into paragraphs as unstructured's partition_text does
 *     (a line per element, or blank-line paragraphs when one line in ten or
 *     more is blank);
 *   - each attachment (Content-Disposition: attachment, anywhere in the
 *     tree) of type text/plain or text/html, or of a generic type with a
 *     .txt/.text/.md/.html/.htm file name, is split the same way and its
 *     elements follow the body's.  Other attachments (images, PDFs, office
 *     files, attached messages) are skipped: Dify would hand them to
 *     unstructured's auto partitioner, which sluice does not reproduce.
 * Elements are joined with "\n".  Headers (From, Subject, ...) are not
 * text, as in Dify.
 *
 * Charsets are decoded here, not through iconv (the reader runs confined,
 * extract/isolate.h): UTF-8, US-ASCII, ISO-8859-1, windows-1252 and
 * UTF-16 (LE, BE, or by its BOM).  Any other charset, and a part without
 * one, is read as UTF-8 with its invalid bytes dropped: Python would
 * decode with the named codec, so such text may differ.
 *
 * Where Python's email package is lenient and sluice is not: a multipart
 * without a boundary, whose boundary never appears or is never closed
 * (usually a truncated file), and base64 with bytes outside its alphabet
 * are errors naming the part, not silently repaired text.
 *
 * Bounds (sluice limits): nesting of multiparts (extract_xml_depth),
 * number of parts (extract_xml_nodes), a part's decoded bytes
 * (extract_max_member) and all parts' (extract_max_unpacked), and the
 * text (extract_max_output).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "extract/cfb.h"
#include "extract/extract_int.h"
#include "tools/builtin.h"

#define HDR_MAX 16384 /* bytes of one unfolded header field we look at */

typedef struct {
    char type[128];      /* "text/plain", lower case */
    char boundary[256];
    char charset[64];    /* lower case, "" when none */
    char filename[256];  /* decoded, "" when none */
    char cte[32];        /* lower case */
    bool attachment;
} mail_head;

typedef struct {
    mail_head h;
    const char *body;
    size_t body_n;
    int first_child, next; /* indexes, -1 for none */
} mail_part;

typedef struct {
    const sl_extract_limits *lim;
    mail_part *parts;
    size_t nparts, alloc;
    size_t unpacked;
    sl_buf *out;
    size_t out0;
    bool any;
    sl_err *err;
} mail_ctx;

/* ---- small helpers ---- */

static int lc(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static bool ieq(const char *a, size_t n, const char *b)
{
    size_t bn = strlen(b);
    if (n != bn)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lc((unsigned char)a[i]) != lc((unsigned char)b[i]))
            return false;
    return true;
}

static bool is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static void copy_lower(char *dst, size_t cap, const char *s, size_t n)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    for (size_t i = 0; i < k; i++)
        dst[i] = (char)lc((unsigned char)s[i]);
    dst[k] = 0;
}

/* Appends the valid UTF-8 in s[0..n) to b, dropping invalid bytes. */
static void add_utf8_clean(sl_buf *b, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                  : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) {
            i++;
            continue;
        }
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        bool ok = true;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                ok = false;
                break;
            }
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                   (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                   (cp >= 0xD800 && cp <= 0xDFFF)))
            ok = false;
        if (!ok) {
            i++;
            continue;
        }
        if (cp == 0)
            i += len; /* a NUL is no text */
        else {
            sl_buf_add(b, s + i, len);
            i += len;
        }
    }
}

static const uint16_t cp1252_hi[32] = {
    0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x8D,   0x017D, 0x8F,   0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178,
};

/* Bytes in charset cs as UTF-8, appended to b. */
static void add_charset(sl_buf *b, const char *cs, const unsigned char *s, size_t n)
{
    bool latin1 = !strcmp(cs, "iso-8859-1") || !strcmp(cs, "iso_8859-1") ||
                  !strcmp(cs, "latin1") || !strcmp(cs, "latin-1") || !strcmp(cs, "l1");
    bool cp1252 = !strcmp(cs, "windows-1252") || !strcmp(cs, "cp1252");
    if (latin1 || cp1252) {
        for (size_t i = 0; i < n; i++) {
            uint32_t cp = s[i];
            if (cp1252 && cp >= 0x80 && cp < 0xA0)
                cp = cp1252_hi[cp - 0x80];
            if (cp)
                sl_buf_add_utf8(b, cp);
        }
        return;
    }
    bool u16 = !strcmp(cs, "utf-16"), le = !strcmp(cs, "utf-16le"), be = !strcmp(cs, "utf-16be");
    if (u16 || le || be) {
        size_t i = 0;
        if (u16) {
            le = true; /* Python's utf-16 without a BOM: little-endian */
            if (n >= 2 && s[0] == 0xFE && s[1] == 0xFF)
                le = false, i = 2;
            else if (n >= 2 && s[0] == 0xFF && s[1] == 0xFE)
                i = 2;
        }
        for (; i + 1 < n; i += 2) {
            uint32_t u = le ? (uint32_t)(s[i] | s[i + 1] << 8) : (uint32_t)(s[i] << 8 | s[i + 1]);
            if (u >= 0xD800 && u < 0xDC00 && i + 3 < n) {
                uint32_t v = le ? (uint32_t)(s[i + 2] | s[i + 3] << 8)
                                : (uint32_t)(s[i + 2] << 8 | s[i + 3]);
                if (v >= 0xDC00 && v < 0xE000) {
                    sl_buf_add_utf8(b, 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00));
                    i += 2;
                    continue;
                }
            }
            if (u && (u < 0xD800 || u > 0xDFFF))
                sl_buf_add_utf8(b, u);
        }
        return;
    }
    /* UTF-8, US-ASCII and every other charset: UTF-8 with invalid bytes
     * dropped (no iconv in the confined reader). */
    add_utf8_clean(b, s, n);
}

/* ---- transfer encodings ---- */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Base64 in s into b: whitespace skipped, '=' ends it; -1 with a reason
 * for a byte outside the alphabet or a lone last character. */
static int unbase64(const char *s, size_t n, sl_buf *b, const char **why, size_t *at)
{
    uint32_t acc = 0;
    int bits = 0, got = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (is_ws(c))
            continue;
        if (c == '=')
            break;
        int v = b64val(c);
        if (v < 0) {
            *why = "a byte outside base64's alphabet";
            *at = i;
            return -1;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        got++;
        if (bits >= 8) {
            bits -= 8;
            sl_buf_addc(b, (char)(acc >> bits & 0xFF));
        }
    }
    if (got % 4 == 1) {
        *why = "a base64 text cut in the middle of a byte";
        *at = n;
        return -1;
    }
    return 0;
}

static void unqp(const char *s, size_t n, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '=') {
            sl_buf_addc(b, s[i]);
            continue;
        }
        /* a soft line break: '=', optional blanks, end of line */
        size_t j = i + 1;
        while (j < n && (s[j] == ' ' || s[j] == '\t'))
            j++;
        if (j < n && (s[j] == '\n' || s[j] == '\r')) {
            i = j + (s[j] == '\r' && j + 1 < n && s[j + 1] == '\n');
            continue;
        }
        if (j == n) {
            i = n;
            continue;
        }
        int h = i + 2 < n ? sl_hex_digit((unsigned char)s[i + 1]) : -1;
        int l = i + 2 < n ? sl_hex_digit((unsigned char)s[i + 2]) : -1;
        if (h >= 0 && l >= 0) {
            sl_buf_addc(b, (char)(h << 4 | l));
            i += 2;
        } else
            sl_buf_addc(b, '='); /* not an escape: kept, as Python does */
    }
}

/* ---- RFC 2047 encoded words (in a file name) ---- */

static void add_encoded_words(sl_buf *b, const char *s, size_t n)
{
    bool after_word = false;
    for (size_t i = 0; i < n;) {
        if (i + 1 < n && s[i] == '=' && s[i + 1] == '?') {
            /* =?charset?X?text?= */
            const char *cs = s + i + 2, *end = s + n;
            const char *q1 = memchr(cs, '?', (size_t)(end - cs));
            if (q1 && q1 + 2 < end && q1[2] == '?') {
                char enc = (char)lc((unsigned char)q1[1]);
                const char *tx = q1 + 3;
                const char *q2 = tx;
                while (q2 + 1 < end && !(q2[0] == '?' && q2[1] == '='))
                    q2++;
                if (q2 + 1 < end && (enc == 'b' || enc == 'q')) {
                    char charset[64];
                    copy_lower(charset, sizeof charset, cs, (size_t)(q1 - cs));
                    char *star = strchr(charset, '*'); /* RFC 2231 language */
                    if (star)
                        *star = 0;
                    sl_buf raw;
                    sl_buf_init(&raw, HDR_MAX);
                    const char *why;
                    size_t at;
                    if (enc == 'b') {
                        if (unbase64(tx, (size_t)(q2 - tx), &raw, &why, &at))
                            raw.len = 0;
                    } else {
                        for (const char *p = tx; p < q2; p++) {
                            int h = p + 2 < q2 ? sl_hex_digit((unsigned char)p[1]) : -1;
                            int l = p + 2 < q2 ? sl_hex_digit((unsigned char)p[2]) : -1;
                            if (*p == '_')
                                sl_buf_addc(&raw, ' ');
                            else if (*p == '=' && h >= 0 && l >= 0) {
                                sl_buf_addc(&raw, (char)(h << 4 | l));
                                p += 2;
                            } else
                                sl_buf_addc(&raw, *p);
                        }
                    }
                    /* blanks between two encoded words are not text */
                    if (after_word) {
                        size_t k = b->len;
                        while (k > 0 && is_ws((unsigned char)b->data[k - 1]))
                            k--;
                        b->len = k;
                        if (b->data)
                            b->data[k] = 0;
                    }
                    add_charset(b, charset, (const unsigned char *)raw.data, raw.len);
                    sl_buf_release(&raw);
                    i = (size_t)(q2 + 2 - s);
                    after_word = true;
                    continue;
                }
            }
        }
        if (!is_ws((unsigned char)s[i]))
            after_word = false;
        sl_buf_addc(b, s[i]);
        i++;
    }
}

/* ---- headers ---- */

/* Parameter `name` of a Content-Type or Content-Disposition value (after
 * its first ';'), unquoted, into dst; RFC 2231's name*=charset''%xx too.
 * false when absent. */
static bool header_param(const char *v, size_t n, const char *name, char *dst, size_t cap,
                         bool *ext)
{
    size_t nl = strlen(name);
    *ext = false;
    size_t i = 0;
    bool in_q = false;
    while (i < n && (in_q || v[i] != ';')) { /* skip the value itself */
        if (v[i] == '"')
            in_q = !in_q;
        i++;
    }
    while (i < n) {
        i++; /* the ';' */
        while (i < n && is_ws((unsigned char)v[i]))
            i++;
        size_t k0 = i;
        while (i < n && v[i] != '=' && v[i] != ';' && !is_ws((unsigned char)v[i]))
            i++;
        size_t kn = i - k0;
        while (i < n && is_ws((unsigned char)v[i]))
            i++;
        bool has_eq = i < n && v[i] == '=';
        if (has_eq)
            i++;
        while (i < n && is_ws((unsigned char)v[i]))
            i++;
        size_t o = 0;
        bool match = has_eq && ((kn == nl && ieq(v + k0, nl, name)) ||
                                (kn == nl + 1 && v[k0 + nl] == '*' && ieq(v + k0, nl, name)));
        bool star = match && kn == nl + 1;
        if (i < n && v[i] == '"') {
            for (i++; i < n && v[i] != '"'; i++) {
                if (v[i] == '\\' && i + 1 < n)
                    i++;
                if (match && o + 1 < cap)
                    dst[o++] = v[i];
            }
            if (i < n)
                i++;
        } else {
            for (; i < n && v[i] != ';' && !is_ws((unsigned char)v[i]); i++)
                if (match && o + 1 < cap)
                    dst[o++] = v[i];
        }
        while (i < n && v[i] != ';')
            i++;
        if (match) {
            dst[o] = 0;
            *ext = star;
            return true;
        }
    }
    return false;
}

/* A file name parameter as text: RFC 2231 (charset''%xx) or encoded
 * words (RFC 2047, which mailers use there though the RFC says not to). */
static void decode_filename(const char *raw, bool ext, char *dst, size_t cap)
{
    sl_buf b;
    sl_buf_init(&b, HDR_MAX);
    const char *q1 = ext ? strchr(raw, '\'') : NULL;
    const char *q2 = q1 ? strchr(q1 + 1, '\'') : NULL;
    if (q2) {
        char cs[64];
        copy_lower(cs, sizeof cs, raw, (size_t)(q1 - raw));
        sl_buf bytes;
        sl_buf_init(&bytes, HDR_MAX);
        for (const char *p = q2 + 1; *p; p++) {
            int h = *p == '%' && p[1] ? sl_hex_digit((unsigned char)p[1]) : -1;
            int l = h >= 0 && p[2] ? sl_hex_digit((unsigned char)p[2]) : -1;
            if (h >= 0 && l >= 0) {
                sl_buf_addc(&bytes, (char)(h << 4 | l));
                p += 2;
            } else
                sl_buf_addc(&bytes, *p);
        }
        add_charset(&b, cs, (const unsigned char *)bytes.data, bytes.len);
        sl_buf_release(&bytes);
    } else
        add_encoded_words(&b, raw, strlen(raw));
    size_t k = b.len < cap - 1 ? b.len : cap - 1;
    memcpy(dst, b.data ? b.data : "", k);
    dst[k] = 0;
    sl_buf_release(&b);
}

static void take_field(mail_head *h, const char *name, size_t nn, const char *v, size_t vn,
                       bool *seen_ct, bool *seen_cte, bool *seen_cd)
{
    char tmp[512];
    bool ext;
    if (ieq(name, nn, "content-type") && !*seen_ct) {
        *seen_ct = true;
        size_t i = 0;
        while (i < vn && is_ws((unsigned char)v[i]))
            i++;
        size_t t0 = i;
        while (i < vn && v[i] != ';' && !is_ws((unsigned char)v[i]))
            i++;
        /* Python: a type that is not type/subtype is text/plain */
        if (memchr(v + t0, '/', i - t0) && i - t0 < sizeof h->type)
            copy_lower(h->type, sizeof h->type, v + t0, i - t0);
        if (header_param(v, vn, "boundary", h->boundary, sizeof h->boundary, &ext))
            (void)0;
        if (header_param(v, vn, "charset", tmp, sizeof tmp, &ext))
            copy_lower(h->charset, sizeof h->charset, tmp, strlen(tmp));
        if (!h->filename[0] && header_param(v, vn, "name", tmp, sizeof tmp, &ext))
            decode_filename(tmp, ext, h->filename, sizeof h->filename);
    } else if (ieq(name, nn, "content-transfer-encoding") && !*seen_cte) {
        *seen_cte = true;
        size_t i = 0;
        while (i < vn && is_ws((unsigned char)v[i]))
            i++;
        size_t e = i;
        while (e < vn && !is_ws((unsigned char)v[e]) && v[e] != ';')
            e++;
        copy_lower(h->cte, sizeof h->cte, v + i, e - i);
    } else if (ieq(name, nn, "content-disposition") && !*seen_cd) {
        *seen_cd = true;
        size_t i = 0;
        while (i < vn && is_ws((unsigned char)v[i]))
            i++;
        size_t e = i;
        while (e < vn && v[e] != ';' && !is_ws((unsigned char)v[e]))
            e++;
        h->attachment = ieq(v + i, e - i, "attachment");
        if (header_param(v, vn, "filename", tmp, sizeof tmp, &ext))
            decode_filename(tmp, ext, h->filename, sizeof h->filename);
    }
}

/* Reads the header fields at p[0..n) into h; *body gets the offset of the
 * body.  Returns the number of fields read.  A line that is neither a
 * field nor a folded continuation starts the body, as in Python. */
static size_t read_head(const char *p, size_t n, mail_head *h, size_t *body)
{
    memset(h, 0, sizeof *h);
    size_t fields = 0, i = 0;
    bool seen_ct = false, seen_cte = false, seen_cd = false;
    sl_buf val;
    sl_buf_init(&val, HDR_MAX);
    const char *name = NULL;
    size_t nn = 0;
    for (;;) {
        if (i >= n)
            break;
        const char *nl = memchr(p + i, '\n', n - i);
        size_t le = nl ? (size_t)(nl - p) : n, next = nl ? le + 1 : n;
        size_t ln = le - i;
        if (ln && p[i + ln - 1] == '\r')
            ln--;
        if (ln == 0) { /* the blank line */
            i = next;
            break;
        }
        if ((p[i] == ' ' || p[i] == '\t') && name) {
            sl_buf_add(&val, p + i, ln); /* unfolded: CRLF removed, the blank kept */
            i = next;
            continue;
        }
        const char *colon = memchr(p + i, ':', ln);
        bool ok = colon && colon > p + i;
        for (const char *c = p + i; ok && c < colon; c++)
            if (*c <= ' ' || *c >= 127)
                ok = false;
        if (!ok)
            break;
        if (name)
            take_field(h, name, nn, val.data ? val.data : "", val.len, &seen_ct, &seen_cte,
                       &seen_cd);
        name = p + i;
        nn = (size_t)(colon - name);
        sl_buf_reset(&val);
        val.toobig = false;
        sl_buf_add(&val, colon + 1, ln - nn - 1);
        fields++;
        i = next;
    }
    if (name)
        take_field(h, name, nn, val.data ? val.data : "", val.len, &seen_ct, &seen_cte, &seen_cd);
    sl_buf_release(&val);
    *body = i;
    return fields;
}

/* ---- the tree of parts ---- */

static int new_part(mail_ctx *c)
{
    if (c->nparts >= c->lim->max_xml_nodes || c->nparts >= INT32_MAX) {
        sl_err_limit(c->err, SL_ELIMIT, "extract_xml_nodes",
                     "the message has more than %zu MIME parts (extract_xml_nodes)",
                     c->lim->max_xml_nodes);
        return -1;
    }
    if (c->nparts == c->alloc) {
        c->alloc = c->alloc ? c->alloc * 2 : 16;
        c->parts = sl_xrealloc(c->parts, c->alloc * sizeof *c->parts);
    }
    memset(&c->parts[c->nparts], 0, sizeof *c->parts);
    c->parts[c->nparts].first_child = c->parts[c->nparts].next = -1;
    return (int)c->nparts++;
}

/* Is p[0..n) a delimiter line of boundary b?  *close when "--b--". */
static bool delimiter(const char *p, size_t n, const char *b, size_t bn, bool *close)
{
    if (n < 2 + bn || p[0] != '-' || p[1] != '-' || memcmp(p + 2, b, bn))
        return false;
    size_t i = 2 + bn;
    *close = i + 1 < n && p[i] == '-' && p[i + 1] == '-';
    if (*close)
        i += 2;
    for (; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

static int parse_part(mail_ctx *c, const char *p, size_t n, int depth, const char *where,
                      bool top);

static int parse_multipart(mail_ctx *c, int idx, int depth, const char *where)
{
    mail_part *mp = &c->parts[idx];
    /* copied: parsing the parts may move c->parts */
    char b[sizeof mp->h.boundary], type[sizeof mp->h.type];
    memcpy(b, mp->h.boundary, sizeof b);
    memcpy(type, mp->h.type, sizeof type);
    const char *p = mp->body;
    size_t bn = strlen(b), n = mp->body_n;
    if (!bn)
        return sl_err_set(c->err, SL_EPARSE, "%s is %s but has no boundary parameter", where,
                          type);
    if (depth + 1 > (int)(c->lim->max_xml_depth < 1000 ? c->lim->max_xml_depth : 1000))
        return sl_err_limit(c->err, SL_ELIMIT, "extract_xml_depth",
                            "%s nests multiparts deeper than %zu (extract_xml_depth)",
                            where, c->lim->max_xml_depth);
    size_t i = 0, start = 0, count = 0;
    bool open = false, closed = false;
    int last = -1;
    while (i < n) {
        const char *nl = memchr(p + i, '\n', n - i);
        size_t le = nl ? (size_t)(nl - p) : n, next = nl ? le + 1 : n;
        bool close;
        if (delimiter(p + i, le - i, b, bn, &close)) {
            if (open) {
                /* the line break before the delimiter belongs to it */
                size_t e = i;
                if (e > start && p[e - 1] == '\n')
                    e--;
                if (e > start && p[e - 1] == '\r')
                    e--;
                char sub[128];
                snprintf(sub, sizeof sub, "%s part %zu", where, count + 1);
                int ch = parse_part(c, p + start, e - start, depth + 1, sub, false);
                if (ch < 0)
                    return -1;
                mp = &c->parts[idx]; /* the array may have moved */
                if (last < 0)
                    mp->first_child = ch;
                else
                    c->parts[last].next = ch;
                last = ch;
                count++;
            }
            if (close) {
                closed = true;
                break; /* what follows is the epilogue */
            }
            open = true;
            start = next;
        }
        i = next;
    }
    if (!open && !closed)
        return sl_err_set(c->err, SL_EPARSE,
                          "%s's boundary \"%s\" never appears: the file is not a whole "
                          "message, or its Content-Type names the wrong boundary",
                          where, b);
    if (!closed)
        return sl_err_set(c->err, SL_EPARSE,
                          "%s's closing boundary \"--%s--\" never comes: the message is "
                          "truncated",
                          where, b);
    return 0;
}

/* Parses one part (headers and body) into the tree; its index or -1. */
static int parse_part(mail_ctx *c, const char *p, size_t n, int depth, const char *where,
                      bool top)
{
    int idx = new_part(c);
    if (idx < 0)
        return -1;
    mail_head h;
    size_t body;
    size_t fields = read_head(p, n, &h, &body);
    if (top && !fields)
        return sl_err_set(c->err, SL_EPARSE,
                          "not a MIME message: it does not start with a header field "
                          "(\"Name: value\")");
    if (!h.type[0])
        strcpy(h.type, "text/plain");
    mail_part *mp = &c->parts[idx];
    mp->h = h;
    mp->body = p + body;
    mp->body_n = n - body;
    if (!strncmp(h.type, "multipart/", 10) && parse_multipart(c, idx, depth, where))
        return -1;
    return idx;
}

/* ---- text out ---- */

static int emit(mail_ctx *c, const char *s, size_t n)
{
    if (!n)
        return 0;
    if (c->any)
        sl_buf_addc(c->out, '\n');
    sl_buf_add(c->out, s, n);
    c->any = true;
    if (c->out->toobig || c->out->len - c->out0 > c->lim->max_output)
        return sl_err_limit(c->err, SL_ELIMIT, "extract_max_output",
                            "the message's text is over %zu bytes", c->lim->max_output);
    return 0;
}

/* Strips s (ASCII blanks and U+00A0 at both ends). */
static void strip(const char **s, size_t *n)
{
    const char *p = *s, *e = *s + *n;
    for (;;) {
        if (p < e && is_ws((unsigned char)*p))
            p++;
        else if (e - p >= 2 && (unsigned char)p[0] == 0xC2 && (unsigned char)p[1] == 0xA0)
            p += 2;
        else
            break;
    }
    for (;;) {
        if (e > p && is_ws((unsigned char)e[-1]))
            e--;
        else if (e - p >= 2 && (unsigned char)e[-2] == 0xC2 && (unsigned char)e[-1] == 0xA0)
            e -= 2;
        else
            break;
    }
    *s = p;
    *n = (size_t)(e - p);
}

/* unstructured's clean_bullets: a leading bullet and the blanks after it. */
static void clean_bullet(const char **s, size_t *n)
{
    static const char *const bullets[] = {
        "\xe2\x80\xa2", "\xe2\x80\xa3", "\xe2\x81\x83", "\xe2\x88\x99", "\xe2\x97\x8b",
        "\xe2\x97\x8f", "\xe2\x97\xa6", "\xc2\xb7",     "\xc2\x95",     "*",
        "-",
    };
    for (size_t i = 0; i < sizeof bullets / sizeof *bullets; i++) {
        size_t bl = strlen(bullets[i]);
        if (*n >= bl && !memcmp(*s, bullets[i], bl) &&
            (*n == bl || is_ws((unsigned char)(*s)[bl]))) {
            *s += bl;
            *n -= bl;
            strip(s, n);
            return;
        }
    }
}

static int emit_clean(mail_ctx *c, const char *s, size_t n)
{
    strip(&s, &n);
    clean_bullet(&s, &n);
    return emit(c, s, n);
}

static size_t words(const char *s, size_t n)
{
    size_t w = 1;
    for (size_t i = 0; i < n; i++)
        w += s[i] == ' ';
    return w;
}

/* The line at t[i..n): its end in *e, stripped in *s and *sn; the next
 * line's start, or n + 1 after the last. */
static size_t line_at(const char *t, size_t n, size_t i, const char **s, size_t *sn)
{
    const char *nl = memchr(t + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - t) : n;
    *s = t + i;
    *sn = e - i;
    strip(s, sn);
    return e + 1;
}

/* Plain text as partition_text splits it (see the top of the file). */
static int plain_elements(mail_ctx *c, const char *t, size_t n)
{
    const char *s;
    size_t sn, lines = 0, blank = 0;
    for (size_t i = 0; i <= n && lines < 2000; lines++) {
        i = line_at(t, n, i, &s, &sn);
        blank += !sn;
    }
    bool per_line = !lines || (double)blank / (double)lines < 0.1;
    int rc = 0;
    if (per_line) {
        for (size_t i = 0; i <= n && !rc;) {
            i = line_at(t, n, i, &s, &sn);
            rc = emit_clean(c, s, sn);
        }
        return rc;
    }
    /* paragraphs between blank lines: lines of fewer than five words stay
     * apart, others join with a space */
    sl_buf para;
    sl_buf_init(&para, 0);
    for (size_t i = 0; i <= n && !rc;) {
        size_t p0 = i, p1 = i;
        bool short_lines = true;
        while (p1 <= n) {
            size_t next = line_at(t, n, p1, &s, &sn);
            if (!sn)
                break;
            short_lines = short_lines && words(s, sn) < 5;
            p1 = next;
        }
        if (p1 == p0) { /* a blank line */
            i = line_at(t, n, i, &s, &sn);
            continue;
        }
        sl_buf_reset(&para);
        for (size_t k = p0; k < p1 && !rc;) {
            k = line_at(t, n, k, &s, &sn);
            if (short_lines)
                rc = emit_clean(c, s, sn);
            else {
                if (para.len)
                    sl_buf_addc(&para, ' ');
                sl_buf_add(&para, s, sn);
            }
        }
        if (!short_lines && !rc)
            rc = emit_clean(c, para.data ? para.data : "", para.len);
        i = p1;
    }
    sl_buf_release(&para);
    return rc;
}

static bool tag_is(const sl_html_tag *t, const char *const *names, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (ieq(t->name, t->name_n, names[i]))
            return true;
    return false;
}

static int flush_html(mail_ctx *c, sl_buf *raw, sl_buf *dec)
{
    sl_buf_reset(dec);
    sl_builtin_html_decode(raw->data ? raw->data : "", raw->len, dec);
    sl_buf_reset(raw);
    /* whitespace collapsed: runs of blanks (and U+00A0) become one space */
    size_t o = 0;
    bool sp = false;
    for (size_t i = 0; i < dec->len; i++) {
        unsigned char ch = (unsigned char)dec->data[i];
        bool w = is_ws(ch);
        if (ch == 0xC2 && i + 1 < dec->len && (unsigned char)dec->data[i + 1] == 0xA0)
            w = true, i++;
        if (w)
            sp = true;
        else {
            if (sp && o)
                dec->data[o++] = ' ';
            sp = false;
            dec->data[o++] = (char)ch;
        }
    }
    dec->len = o;
    return emit(c, dec->data ? dec->data : "", o);
}

/* HTML as one element per block (see the top of the file). */
static int html_elements(mail_ctx *c, const char *h, size_t n)
{
    static const char *const block[] = {
        "p",       "div",     "li",     "h1",     "h2",      "h3",         "h4",
        "h5",      "h6",      "td",     "th",     "tr",      "br",         "table",
        "ul",      "ol",      "dl",     "dt",     "dd",      "blockquote", "pre",
        "section", "article", "header", "footer", "hr",      "body",       "html",
        "tbody",   "thead",   "tfoot",  "form",   "address", "nav",        "aside",
        "main",    "figure",  "figcaption", "caption", "center", "title",
    };
    static const char *const hidden[] = {"script", "style", "head", "noscript", "template"};
    sl_buf raw, dec;
    sl_buf_init(&raw, 0);
    sl_buf_init(&dec, 0);
    int rc = 0;
    const char *p = h, *end = h + n;
    while (p < end && !rc) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt) {
            sl_buf_add(&raw, p, (size_t)(end - p));
            break;
        }
        sl_buf_add(&raw, p, (size_t)(lt - p));
        sl_html_tag t;
        const char *after = sl_builtin_html_tag(lt, end, &t);
        if (!after) {
            sl_buf_addc(&raw, '<');
            p = lt + 1;
            continue;
        }
        p = after;
        if (!t.name)
            continue;
        if (!t.closing && !t.self_closing &&
            tag_is(&t, hidden, sizeof hidden / sizeof *hidden)) {
            /* its content is not text: skip to </name */
            const char *q = p;
            for (;;) {
                const char *lt2 = memchr(q, '<', (size_t)(end - q));
                if (!lt2 || (size_t)(end - lt2) < t.name_n + 2) {
                    p = end;
                    break;
                }
                if (lt2[1] == '/' && (size_t)(end - lt2 - 2) >= t.name_n) {
                    bool same = true;
                    for (size_t k = 0; k < t.name_n; k++)
                        if (lc((unsigned char)lt2[2 + k]) != lc((unsigned char)t.name[k]))
                            same = false;
                    if (same) {
                        const char *gt = memchr(lt2, '>', (size_t)(end - lt2));
                        p = gt ? gt + 1 : end;
                        break;
                    }
                }
                q = lt2 + 1;
            }
            if (ieq(t.name, t.name_n, "head"))
                sl_buf_reset(&raw);
            continue;
        }
        if (tag_is(&t, block, sizeof block / sizeof *block))
            rc = flush_html(c, &raw, &dec);
    }
    if (!rc)
        rc = flush_html(c, &raw, &dec);
    sl_buf_release(&raw);
    sl_buf_release(&dec);
    return rc;
}

/* ---- parts to text ---- */

static bool name_ends(const char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    return n > e && ieq(name + n - e, e, ext);
}

/* The part's decoded text, as UTF-8, in t. */
static int part_text(mail_ctx *c, const mail_part *mp, sl_buf *t, const char *where)
{
    size_t cap = c->lim->max_member;
    sl_buf raw;
    sl_buf_init(&raw, cap < SIZE_MAX - 1 ? cap + 1 : cap);
    int rc = 0;
    if (!strcmp(mp->h.cte, "base64")) {
        const char *why;
        size_t at;
        if (unbase64(mp->body, mp->body_n, &raw, &why, &at)) {
            sl_buf_release(&raw);
            return sl_err_set(c->err, SL_EPARSE,
                              "%s (%s) is not valid base64: %s at byte %zu of its body", where,
                              mp->h.type, why, at);
        }
    } else if (!strcmp(mp->h.cte, "quoted-printable"))
        unqp(mp->body, mp->body_n, &raw);
    else
        sl_buf_add(&raw, mp->body, mp->body_n);
    if (raw.toobig || raw.len > cap)
        rc = sl_err_limit(c->err, SL_ELIMIT, "extract_max_member",
                          "%s decodes to more than %zu bytes (extract_max_member)", where,
                          cap);
    else if (raw.len > c->lim->max_unpacked - c->unpacked || c->unpacked > c->lim->max_unpacked)
        rc = sl_err_limit(c->err, SL_ELIMIT, "extract_max_unpacked",
                          "the message's parts decode to more than %zu bytes "
                          "(extract_max_unpacked)",
                          c->lim->max_unpacked);
    else {
        c->unpacked += raw.len;
        sl_buf_init(t, 0);
        add_charset(t, mp->h.charset, (const unsigned char *)(raw.data ? raw.data : ""),
                    raw.len);
    }
    sl_buf_release(&raw);
    return rc;
}

static int part_elements(mail_ctx *c, int idx, bool html, const char *where)
{
    sl_buf t;
    if (part_text(c, &c->parts[idx], &t, where))
        return -1;
    int rc = html ? html_elements(c, t.data ? t.data : "", t.len)
                  : plain_elements(c, t.data ? t.data : "", t.len);
    sl_buf_release(&t);
    return rc;
}

/* Python's _find_body: the best part (rank 0 html, 1 plain) under idx. */
static void find_body(mail_ctx *c, int idx, int depth, int *best, int *rank)
{
    const mail_part *mp = &c->parts[idx];
    if (mp->h.attachment || *rank == 0 || depth > 1000)
        return;
    if (!strcmp(mp->h.type, "text/html") || !strcmp(mp->h.type, "text/plain")) {
        int r = !strcmp(mp->h.type, "text/html") ? 0 : 1;
        if (r < *rank)
            *rank = r, *best = idx;
        return;
    }
    if (strncmp(mp->h.type, "multipart/", 10))
        return;
    if (!strcmp(mp->h.type, "multipart/related")) {
        /* its root: the first part (the "start" parameter is not read) */
        if (mp->first_child >= 0)
            find_body(c, mp->first_child, depth + 1, best, rank);
        return;
    }
    for (int ch = mp->first_child; ch >= 0; ch = c->parts[ch].next)
        find_body(c, ch, depth + 1, best, rank);
}

int sl_extract_eml(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    mail_ctx c = {.lim = lim, .out = out, .out0 = out->len, .err = err};
    int rc = -1;
    if (parse_part(&c, data, len, 0, "the message", true) < 0)
        goto done;
    int best = -1, rank = 2;
    find_body(&c, 0, 0, &best, &rank);
    if (best >= 0 && part_elements(&c, best, rank == 0, "the message's body"))
        goto done;
    /* attachments, in the order they appear */
    size_t k = 0;
    for (size_t i = 0; i < c.nparts; i++) {
        const mail_part *mp = &c.parts[i];
        if (!mp->h.attachment || (int)i == best)
            continue;
        k++;
        bool html = !strcmp(mp->h.type, "text/html"), plain = !strcmp(mp->h.type, "text/plain");
        bool generic = !strcmp(mp->h.type, "application/octet-stream") ||
                       !strncmp(mp->h.type, "text/", 5);
        if (!html && !plain && generic) {
            html = name_ends(mp->h.filename, ".html") || name_ends(mp->h.filename, ".htm");
            plain = name_ends(mp->h.filename, ".txt") || name_ends(mp->h.filename, ".text") ||
                    name_ends(mp->h.filename, ".md");
        }
        if (!html && !plain)
            continue; /* not text: skipped (see the top of the file) */
        char where[300];
        snprintf(where, sizeof where, "attachment %zu (%s)", k,
                 mp->h.filename[0] ? mp->h.filename : "without a name");
        if (part_elements(&c, (int)i, html, where))
            goto done;
    }
    rc = 0;
done:
    free(c.parts);
    return rc;
}

/* ---- Outlook .msg ---- */

/* Bytes in an unknown charset: UTF-8 when they are valid UTF-8, UTF-16
 * with a BOM, else windows-1252 (as Dify's plain-text decoding guesses). */
static void add_guess(sl_buf *b, const unsigned char *s, size_t n)
{
    if (n >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF))) {
        add_charset(b, "utf-16", s, n);
        return;
    }
    size_t at = b->len;
    add_utf8_clean(b, s, n);
    if (b->len - at == n || b->toobig)
        return;
    b->len = at;
    if (b->data)
        b->data[at] = 0;
    add_charset(b, "windows-1252", s, n);
}

/* A code page number as a charset add_charset knows, or NULL. */
static const char *codepage_charset(uint32_t cp)
{
    switch (cp) {
    case 65001: return "utf-8";
    case 1252: return "windows-1252";
    case 28591: return "iso-8859-1";
    case 20127: return "us-ascii";
    case 1200: return "utf-16le";
    case 1201: return "utf-16be";
    default: return NULL;
    }
}

/* Property `tag`'s 32-bit value in a __properties_version1.0 stream
 * (entries of 16 bytes after a header of `skip` bytes). */
static bool msg_prop32(const sl_buf *props, size_t skip, uint32_t tag, uint32_t *v)
{
    const unsigned char *p = (const unsigned char *)props->data;
    for (size_t i = skip; p && i + 16 <= props->len; i += 16) {
        uint32_t t = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        if (t == tag) {
            *v = (uint32_t)p[i + 8] | (uint32_t)p[i + 9] << 8 | (uint32_t)p[i + 10] << 16 |
                 (uint32_t)p[i + 11] << 24;
            return true;
        }
    }
    return false;
}

/* Stream `name` under storage dir, read into raw (reset first).  0 when
 * absent (raw empty), 1 when read, -1 with err. */
static int msg_stream(sl_cfb *f, int dir, const char *name, sl_buf *raw, sl_err *err)
{
    sl_buf_reset(raw);
    int i = sl_cfb_find(f, dir, name);
    if (i < 0 || sl_cfb_type(f, i) != SL_CFB_STREAM)
        return 0;
    return sl_cfb_read(f, i, raw, err) ? -1 : 1;
}

/* A string property (id as 4 hex digits): its Unicode (001F) stream, else
 * its 8-bit (001E) one in charset cs (NULL: guessed); into t. */
static int msg_string(sl_cfb *f, int dir, const char *id, const char *cs, sl_buf *raw,
                      sl_buf *t, sl_err *err)
{
    char name[40];
    snprintf(name, sizeof name, "__substg1.0_%s001F", id);
    int rc = msg_stream(f, dir, name, raw, err);
    if (rc > 0) {
        add_charset(t, "utf-16le", (const unsigned char *)raw->data, raw->len);
        return 1;
    }
    if (rc < 0)
        return -1;
    snprintf(name, sizeof name, "__substg1.0_%s001E", id);
    rc = msg_stream(f, dir, name, raw, err);
    if (rc > 0) {
        if (cs)
            add_charset(t, cs, (const unsigned char *)raw->data, raw->len);
        else
            add_guess(t, (const unsigned char *)raw->data, raw->len);
    }
    return rc;
}

static int msg_count(mail_ctx *c, size_t n)
{
    if (n > c->lim->max_unpacked - c->unpacked || c->unpacked > c->lim->max_unpacked)
        return sl_err_limit(c->err, SL_ELIMIT, "extract_max_unpacked",
                            "the message's streams hold more than %zu bytes (extract_max_unpacked)",
                            c->lim->max_unpacked);
    c->unpacked += n;
    return 0;
}

/* The message's body: HTML (PR_HTML) preferred, else the plain body. */
static int msg_body(mail_ctx *c, sl_cfb *f, const char *cs, sl_buf *raw, sl_buf *t)
{
    sl_buf_reset(t);
    int rc = msg_stream(f, SL_CFB_ROOT_ENTRY, "__substg1.0_10130102", raw, c->err);
    if (rc < 0 || msg_count(c, raw->len))
        return -1;
    if (rc > 0 && raw->len) {
        if (cs)
            add_charset(t, cs, (const unsigned char *)raw->data, raw->len);
        else
            add_guess(t, (const unsigned char *)raw->data, raw->len);
    } else if ((rc = msg_string(f, SL_CFB_ROOT_ENTRY, "1013", cs, raw, t, c->err)) < 0 ||
               msg_count(c, raw->len))
        return -1;
    if (t->len)
        return html_elements(c, t->data, t->len);
    if (msg_string(f, SL_CFB_ROOT_ENTRY, "1000", cs, raw, t, c->err) < 0 ||
        msg_count(c, raw->len))
        return -1;
    return plain_elements(c, t->data ? t->data : "", t->len);
}

/* The attachments that are text (see sl_extract_msg), as elements. */
static int msg_attachments(mail_ctx *c, sl_cfb *f, sl_buf *raw, sl_buf *t)
{
    int n = sl_cfb_children(f, SL_CFB_ROOT_ENTRY, NULL, 0, c->err);
    if (n < 0)
        return -1;
    int *kids = sl_xmalloc(((size_t)n + 1) * sizeof *kids);
    sl_cfb_children(f, SL_CFB_ROOT_ENTRY, kids, n, c->err);
    int rc = 0;
    static const char prefix[] = "__attach_version1.0_#";
    for (int i = 0; i < n && !rc; i++) {
        int a = kids[i];
        if (sl_cfb_type(f, a) != SL_CFB_STORAGE ||
            strncmp(sl_cfb_name(f, a), prefix, sizeof prefix - 1))
            continue;
        char fname[256] = "", mime[128] = "";
        sl_buf_reset(t);
        if (msg_string(f, a, "3707", NULL, raw, t, c->err) < 0 ||
            (!t->len && msg_string(f, a, "3704", NULL, raw, t, c->err) < 0)) {
            rc = -1;
            break;
        }
        snprintf(fname, sizeof fname, "%s", t->data ? t->data : "");
        sl_buf_reset(t);
        if (msg_string(f, a, "370E", NULL, raw, t, c->err) < 0) {
            rc = -1;
            break;
        }
        copy_lower(mime, sizeof mime, t->data ? t->data : "", t->len);
        bool html = name_ends(fname, ".html") || name_ends(fname, ".htm");
        bool plain = name_ends(fname, ".txt") || name_ends(fname, ".text") ||
                     name_ends(fname, ".md");
        if (!html && !plain && !fname[0]) {
            html = !strcmp(mime, "text/html");
            plain = !strcmp(mime, "text/plain");
        }
        if (!html && !plain)
            continue; /* not text: skipped (see sl_extract_msg) */
        int got = msg_stream(f, a, "__substg1.0_37010102", raw, c->err);
        if (got < 0 || msg_count(c, raw->len)) {
            rc = -1;
            break;
        }
        if (!got)
            continue; /* no data: an embedded message or a link */
        sl_buf_reset(t);
        add_guess(t, (const unsigned char *)raw->data, raw->len);
        rc = html ? html_elements(c, t->data ? t->data : "", t->len)
                  : plain_elements(c, t->data ? t->data : "", t->len);
    }
    free(kids);
    return rc;
}

/*
 * An Outlook message is a compound file (extract/cfb.h) whose root holds
 * a stream per property, __substg1.0_<id><type>.  As python-oxmsg's
 * partition_msg: the HTML body (PR_HTML, 1013) when there is one, else
 * the plain body (PR_BODY, 1000: 001F UTF-16LE, or 001E 8-bit), then the
 * attachments (__attach_version1.0_#N storages) whose file name ends in
 * .txt/.text/.md/.html/.htm, or without a name whose PR_ATTACH_MIME_TAG is
 * text/plain or text/html, their PR_ATTACH_DATA_BIN read as text.  8-bit
 * text is decoded by the message's PR_INTERNET_CPID or PR_MESSAGE_CODEPAGE
 * when add_charset knows it, else guessed (UTF-8, else windows-1252).
 * Not read: the compressed RTF body (PR_RTF_COMPRESSED, LZFu; a message
 * with only an RTF body gives no text), embedded messages and every other
 * attachment type.
 */
int sl_extract_msg(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    if (!sl_cfb_is(data, len))
        return sl_err_set(err, SL_EPARSE,
                          "not an Outlook message: no compound file (OLE2) signature at its "
                          "start");
    sl_cfb *f = sl_cfb_open(data, len, lim, err);
    if (!f)
        return -1;
    mail_ctx c = {.lim = lim, .out = out, .out0 = out->len, .err = err};
    sl_buf raw, t;
    sl_buf_init(&raw, 0);
    sl_buf_init(&t, 0);
    int rc = -1;
    int props = sl_cfb_find(f, SL_CFB_ROOT_ENTRY, "__properties_version1.0");
    if (props < 0) {
        sl_err_set(err, SL_EPARSE,
                   "not an Outlook message: the compound file has no __properties_version1.0 "
                   "stream");
        goto done;
    }
    if (sl_cfb_read(f, props, &raw, err))
        goto done;
    uint32_t cp = 0;
    const char *cs = NULL;
    if (msg_prop32(&raw, 32, 0x3FDE0003u, &cp))
        cs = codepage_charset(cp);
    if (!cs && msg_prop32(&raw, 32, 0x3FFD0003u, &cp))
        cs = codepage_charset(cp);
    if (msg_body(&c, f, cs, &raw, &t) || msg_attachments(&c, f, &raw, &t))
        goto done;
    rc = 0;
done:
    sl_buf_release(&raw);
    sl_buf_release(&t);
    sl_cfb_free(f);
    return rc;
}
