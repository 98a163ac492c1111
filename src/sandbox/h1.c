#include "sandbox/h1.h"

#include "core/buf.h"

#include <string.h>
#include <strings.h>

#define MAX_SIZE_DIGITS 15       /* 2^60 bytes: no real chunk is larger */
#define MAX_EXT_BYTES 4096       /* one chunk-size line with its extensions */
#define MAX_TRAILER_BYTES 16384  /* all trailer fields, as for a head */
#define MAX_LENGTH_DIGITS 15

/* ---- header fields ---- */

/* The next line of fields: its start and length without the line end;
 * *s moves past it.  An empty line or the end gives length 0. */
static const char *next_line(const char **s, size_t *len)
{
    const char *a = *s, *nl = strchr(a, '\n');
    const char *b = nl ? nl : a + strlen(a);
    *s = nl ? nl + 1 : b;
    if (b > a && b[-1] == '\r')
        b--;
    *len = (size_t)(b - a);
    return a;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* If line[0..len) is header `name`, its value trimmed of whitespace. */
static bool field_value(const char *line, size_t len, const char *name, const char **v,
                        size_t *vlen)
{
    size_t n = strlen(name);
    if (len <= n || line[n] != ':' || strncasecmp(line, name, n))
        return false;
    const char *a = line + n + 1, *b = line + len;
    while (a < b && is_ows(*a))
        a++;
    while (b > a && is_ows(b[-1]))
        b--;
    *v = a;
    *vlen = (size_t)(b - a);
    return true;
}

/* Counts the comma-separated elements of v[0..len), trimmed, and keeps
 * the last; empty ones are skipped (RFC 9110 section 5.6.1 allows them). */
typedef struct {
    size_t count;
    const char *last;
    size_t last_len;
} elements;

static void list_elements(const char *v, size_t len, elements *e)
{
    const char *end = v + len;
    while (v < end) {
        const char *comma = memchr(v, ',', (size_t)(end - v));
        const char *a = v, *b = comma ? comma : end;
        v = comma ? comma + 1 : end;
        while (a < b && is_ows(*a))
            a++;
        while (b > a && is_ows(b[-1]))
            b--;
        if (a == b)
            continue;
        e->count++;
        e->last = a;
        e->last_len = (size_t)(b - a);
    }
}

static bool is_token(const char *a, size_t n, const char *tok)
{
    return n == strlen(tok) && !strncasecmp(a, tok, n);
}

bool sl_h1_has_token(const char *fields, const char *name, const char *tok)
{
    const char *s = fields, *v;
    size_t len, vlen;
    while (*s) {
        const char *f = next_line(&s, &len);
        if (!len)
            break;
        if (!field_value(f, len, name, &v, &vlen))
            continue;
        const char *end = v + vlen;
        while (v < end) {
            const char *comma = memchr(v, ',', (size_t)(end - v));
            const char *a = v, *b = comma ? comma : end;
            v = comma ? comma + 1 : end;
            while (a < b && is_ows(*a))
                a++;
            while (b > a && is_ows(b[-1]))
                b--;
            if (is_token(a, (size_t)(b - a), tok))
                return true;
        }
    }
    return false;
}

int sl_h1_body_of(const char *fields, bool request, bool http10, sl_h1_body *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    elements te = {0};
    bool has_te = false, has_cl = false;
    uint64_t cl = 0;
    const char *s = fields, *v;
    size_t len, vlen;
    while (*s) {
        const char *f = next_line(&s, &len);
        if (!len)
            break;
        if (field_value(f, len, "transfer-encoding", &v, &vlen)) {
            has_te = true;
            list_elements(v, vlen, &te);
        } else if (field_value(f, len, "content-length", &v, &vlen)) {
            /* One decimal number; a repeat must say the same. */
            if (vlen == 0 || vlen > MAX_LENGTH_DIGITS)
                return sl_err_set(err, SL_EINVAL, "Content-Length is not a number of bytes");
            uint64_t n = 0;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return sl_err_set(err, SL_EINVAL,
                                      "Content-Length is not a number of bytes");
                n = n * 10 + (uint64_t)(v[i] - '0');
            }
            if (has_cl && n != cl)
                return sl_err_set(err, SL_EINVAL,
                                  "Content-Length is given twice with different values");
            has_cl = true;
            cl = n;
        }
    }
    if (request) {
        if (has_te && has_cl)
            return sl_err_set(err, SL_EINVAL,
                              "the request has both Content-Length and Transfer-Encoding, "
                              "which frame its body differently");
        if (has_te && http10)
            return sl_err_set(err, SL_EINVAL, "an HTTP/1.0 request cannot use Transfer-Encoding");
        if (has_te) {
            if (te.count != 1 || !is_token(te.last, te.last_len, "chunked"))
                return sl_err_set(err, SL_EINVAL,
                                  "the request's Transfer-Encoding is not \"chunked\", the "
                                  "only coding the proxy passes on");
            out->kind = SL_H1_CHUNKED;
        } else if (has_cl && cl) {
            out->kind = SL_H1_LENGTH;
            out->length = cl;
        }
        return 0;
    }
    out->both = has_te && has_cl;
    if (has_te)
        out->kind = te.count && is_token(te.last, te.last_len, "chunked") ? SL_H1_CHUNKED
                                                                          : SL_H1_CLOSE;
    else if (has_cl) {
        out->kind = cl ? SL_H1_LENGTH : SL_H1_NONE;
        out->length = cl;
    } else
        out->kind = SL_H1_CLOSE;
    return 0;
}

/* ---- the chunked coding ---- */

enum {
    CH_SIZE,         /* hex digits of a chunk size */
    CH_EXT,          /* ";ext" after the size, up to CR */
    CH_SIZE_LF,      /* LF after the size line's CR */
    CH_DATA,         /* chunk data */
    CH_DATA_CR,      /* CR after the data */
    CH_DATA_LF,      /* LF after it */
    CH_TRAILER,      /* a trailer line, or the CR of the empty line */
    CH_TRAILER_LF,   /* LF ending a trailer line */
    CH_END_LF,       /* LF of the empty line that ends the message */
    CH_DONE,
};

static bool is_ctl(unsigned char ch)
{
    return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

long sl_h1_chunked_feed(sl_h1_chunked *c, const char *in, size_t n, size_t *data_off,
                        size_t *data_len, sl_err *err)
{
    *data_off = *data_len = 0;
    size_t i = 0;
    while (i < n && c->state != CH_DONE) {
        char ch = in[i];
        switch (c->state) {
        case CH_SIZE: {
            int h = sl_hex_digit(ch);
            if (h >= 0) {
                if (++c->digits > MAX_SIZE_DIGITS)
                    return sl_err_set(err, SL_EINVAL, "a chunk size is too large");
                c->left = c->left * 16 + (uint64_t)h;
                c->line++;
            } else if (c->digits && ch == ';') {
                c->state = CH_EXT;
                c->line++;
            } else if (c->digits && ch == '\r') {
                c->state = CH_SIZE_LF;
            } else if (c->digits && ch == '\n') {
                return sl_err_set(err, SL_EINVAL, "a chunk size line does not end in CRLF");
            } else {
                return sl_err_set(err, SL_EINVAL,
                                  "a chunk size is not a hexadecimal number followed by CRLF");
            }
            i++;
            break;
        }
        case CH_EXT:
            if (ch == '\r') {
                c->state = CH_SIZE_LF;
            } else if (is_ctl((unsigned char)ch) || ++c->line > MAX_EXT_BYTES) {
                return sl_err_set(err, SL_EINVAL,
                                  "a chunk extension holds a control byte or is too long");
            }
            i++;
            break;
        case CH_SIZE_LF:
            if (ch != '\n')
                return sl_err_set(err, SL_EINVAL, "a chunk size line does not end in CRLF");
            i++;
            c->line = 0;
            c->digits = 0;
            c->state = c->left ? CH_DATA : CH_TRAILER;
            break;
        case CH_DATA: {
            size_t k = n - i;
            if ((uint64_t)k > c->left)
                k = (size_t)c->left;
            *data_off = i;
            *data_len = k;
            c->left -= k;
            if (!c->left)
                c->state = CH_DATA_CR;
            /* One run at a time: the caller passes it on, then feeds on. */
            return (long)(i + k);
        }
        case CH_DATA_CR:
        case CH_DATA_LF:
            if (ch != (c->state == CH_DATA_CR ? '\r' : '\n'))
                return sl_err_set(err, SL_EINVAL, "chunk data is not followed by CRLF");
            i++;
            c->state = c->state == CH_DATA_CR ? CH_DATA_LF : CH_SIZE;
            break;
        case CH_TRAILER:
            if (ch == '\r') {
                c->state = c->line ? CH_TRAILER_LF : CH_END_LF;
            } else if (ch == '\n') {
                return sl_err_set(err, SL_EINVAL, "a trailer line does not end in CRLF");
            } else if (is_ctl((unsigned char)ch)) {
                return sl_err_set(err, SL_EINVAL, "a trailer field holds a control byte");
            } else {
                c->line++;
            }
            if (++c->trailers > MAX_TRAILER_BYTES)
                return sl_err_set(err, SL_EINVAL, "the trailer fields are longer than 16 KiB");
            i++;
            break;
        case CH_TRAILER_LF:
        case CH_END_LF:
            if (ch != '\n')
                return sl_err_set(err, SL_EINVAL, "a trailer line does not end in CRLF");
            i++;
            c->line = 0;
            c->state = c->state == CH_END_LF ? CH_DONE : CH_TRAILER;
            break;
        }
    }
    c->done = c->state == CH_DONE;
    return (long)i;
}
