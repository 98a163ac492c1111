#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_buf_init(sl_buf *b, size_t cap)
{
    b->data = NULL;
    b->len = b->alloc = 0;
    b->cap = cap ? cap : SL_BUF_DEFAULT_CAP;
    b->toobig = false;
    b->ext = false;
}

void sl_buf_reset(sl_buf *b)
{
    b->len = 0;
    b->toobig = false;
    if (b->data)
        b->data[0] = '\0';
}

static int grow(sl_buf *b, size_t n)
{
    if (b->toobig || n > b->cap || b->len > b->cap - n) {
        b->toobig = true;
        return -1;
    }
    size_t need = b->len + n + 1;
    if (need > b->alloc) {
        size_t a = b->alloc ? b->alloc : 64;
        while (a < need)
            a *= 2;
        if (b->ext) {
            char *p = sl_xmalloc(a);
            memcpy(p, b->data, b->len + 1);
            b->data = p;
            b->ext = false;
        } else {
            b->data = sl_xrealloc(b->data, a);
        }
        b->alloc = a;
    }
    return 0;
}

int sl_buf_add(sl_buf *b, const void *p, size_t n)
{
    if (n < b->alloc - b->len && !b->toobig && n <= b->cap - b->len) {
        /* room already (the common case: no call to grow); p may be NULL
         * when n is 0 */
        if (n)
            memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
    }
    if (grow(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int sl_buf_add_file(sl_buf *b, FILE *f)
{
    char chunk[65536];
    size_t n;
    while (!b->toobig && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sl_buf_add(b, chunk, n);
    return ferror(f) ? -1 : 0;
}

int sl_buf_adds(sl_buf *b, const char *s)
{
    return sl_buf_add(b, s, strlen(s));
}

int sl_buf_addc(sl_buf *b, char c)
{
    return sl_buf_add(b, &c, 1);
}

int sl_buf_add_utf8(sl_buf *b, uint32_t cp)
{
    char u[4];
    return sl_buf_add(b, u, sl_utf8_put(cp, u));
}

int sl_buf_addf(sl_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof tmp)
        return sl_buf_add(b, tmp, (size_t)n);
    if (grow(b, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

char *sl_buf_detach(sl_buf *b)
{
    char *s = b->data ? b->data : sl_xstrdup("");
    if (b->ext) {
        s = sl_xmalloc(b->len + 1);
        memcpy(s, b->data, b->len + 1);
        b->ext = false;
    }
    b->data = NULL;
    b->len = b->alloc = 0;
    return s;
}

void sl_excerpt(const char *s, char *out, size_t n)
{
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    for (; *p; p++) {
        char esc[8];
        size_t m;
        unsigned char c = *p;
        /* C1 controls are U+0080..U+009F: UTF-8 C2 80..C2 9F */
        bool c1 = c == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
        if (c == '\n' || c == '\t' || c == '\r') {
            m = (size_t)snprintf(esc, sizeof esc, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        } else if (c < 0x20 || c == 0x7f) {
            m = (size_t)snprintf(esc, sizeof esc, "\\x%02x", c);
        } else if (c1) {
            m = (size_t)snprintf(esc, sizeof esc, "\\x%02x", p[1]);
            p++;
        } else {
            esc[0] = (char)c;
            m = 1;
        }
        if (k + m + 4 > n) {  /* room for "..." and the terminator */
            while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
                k--;  /* never cut inside a UTF-8 sequence */
            if (k > 0 && (unsigned char)out[k - 1] >= 0xC0)
                k--;
            memcpy(out + k, "...", 3);
            out[k + 3] = 0;
            return;
        }
        memcpy(out + k, esc, m);
        k += m;
    }
    out[k] = 0;
}
