/*
 * sse — see sse.h.  The WHATWG event-stream rules, minus reconnection.
 */
#include "llm/sse.h"

#include <string.h>

void sl_sse_init(sl_sse *p, size_t cap, sl_sse_fn fn, void *ud)
{
    memset(p, 0, sizeof *p);
    p->cap = cap ? cap : 4u << 20;
    sl_buf_init(&p->line, p->cap);
    sl_buf_init(&p->data, p->cap);
    p->fn = fn;
    p->ud = ud;
}

void sl_sse_release(sl_sse *p)
{
    sl_buf_release(&p->line);
    sl_buf_release(&p->data);
}

static int dispatch(sl_sse *p)
{
    int rc = 0;
    if (p->has_data)
        rc = p->fn(p->event, p->data.data ? p->data.data : "", p->data.len, p->ud);
    sl_buf_reset(&p->data);
    p->event[0] = 0;
    p->has_data = false;
    return rc;
}

/* One complete line (without its end). */
static int line(sl_sse *p, const char *s, size_t n)
{
    if (n == 0)
        return dispatch(p);
    if (s[0] == ':')
        return 0;
    const char *colon = memchr(s, ':', n);
    size_t fl = colon ? (size_t)(colon - s) : n;
    const char *v = colon ? colon + 1 : s + n;
    size_t vl = colon ? n - fl - 1 : 0;
    if (vl && *v == ' ')
        v++, vl--;
    if (fl == 4 && !memcmp(s, "data", 4)) {
        if (p->has_data && sl_buf_addc(&p->data, '\n'))
            return -1;
        if (sl_buf_add(&p->data, v, vl))
            return -1;
        p->has_data = true;
    } else if (fl == 5 && !memcmp(s, "event", 5)) {
        size_t k = vl < sizeof p->event - 1 ? vl : sizeof p->event - 1;
        memcpy(p->event, v, k);
        p->event[k] = 0;
    }
    return 0;
}

int sl_sse_feed(sl_sse *p, const char *b, size_t n)
{
    if (p->failed)
        return -1;
    size_t i = 0;
    while (i < n) {
        if (p->cr) {
            p->cr = false;
            if (b[i] == '\n') {
                i++;
                continue;
            }
        }
        /* the rest of the line in this piece */
        size_t j = i;
        while (j < n && b[j] != '\n' && b[j] != '\r')
            j++;
        if (j == n) {
            if (sl_buf_add(&p->line, b + i, n - i)) {
                p->failed = true;
                return -1;
            }
            return 0;
        }
        int rc;
        if (p->line.len + (j - i) > p->cap) { /* the same cap however the bytes came */
            p->failed = true;
            return -1;
        }
        if (p->line.len) {
            if (sl_buf_add(&p->line, b + i, j - i)) {
                p->failed = true;
                return -1;
            }
            rc = line(p, p->line.data, p->line.len);
            sl_buf_reset(&p->line);
        } else {
            rc = line(p, b + i, j - i);
        }
        if (rc) {
            if (rc == -1)
                p->failed = true;
            return rc;
        }
        p->cr = b[j] == '\r';
        i = j + 1;
    }
    return 0;
}

int sl_sse_finish(sl_sse *p)
{
    if (p->failed)
        return -1;
    int rc = 0;
    if (p->line.len) {
        rc = line(p, p->line.data, p->line.len);
        sl_buf_reset(&p->line);
    }
    return rc ? rc : dispatch(p);
}
