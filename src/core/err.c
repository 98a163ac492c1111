#include "core/err.h"
#include "core/secret.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *s = sl_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static int vset(sl_err *err, sl_errcode code, const char *type, const char *setting,
                const char *fmt, va_list ap)
{
    char *m = vfmt(fmt, ap);
    sl_secret_mask_inplace(&m);  /* errors quote URLs, tracebacks, bodies */
    free(err->msg);
    err->msg = m;
    err->code = code;
    sl_err_set_type(err, type);
    err->setting = setting;
    return -1;
}

int sl_err_set(sl_err *err, sl_errcode code, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, NULL, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int sl_err_typed(sl_err *err, sl_errcode code, const char *type, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, type, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int sl_err_limit(sl_err *err, sl_errcode code, const char *setting, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, NULL, setting, fmt, ap);
    va_end(ap);
    return -1;
}

void sl_err_set_type(sl_err *err, const char *type)
{
    if (!err)
        return;
    char *t = type ? sl_xstrdup(type) : NULL;  /* copy first: type may be err->type */
    free(err->type);
    err->type = t;
}

const char *sl_err_type(const sl_err *err, const char *fallback)
{
    return err && err->type ? err->type : fallback;
}

void sl_err_move(sl_err *dst, sl_err *src)
{
    if (dst == src)
        return;
    if (!dst) {
        sl_err_clear(src);
        return;
    }
    sl_err_clear(dst);
    *dst = *src;
    *src = (sl_err){0};
}

int sl_err_prefix(sl_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    char *p = vfmt(fmt, ap);
    va_end(ap);
    char *m = sl_xasprintf("%s: %s", p, err->msg ? err->msg : "unknown error");
    free(p);
    sl_secret_mask_inplace(&m);
    free(err->msg);
    err->msg = m;
    return -1;
}

void sl_err_clear(sl_err *err)
{
    if (!err)
        return;
    free(err->msg);
    free(err->type);
    *err = (sl_err){0};
}

const char *sl_errcode_name(sl_errcode code)
{
    switch (code) {
    case SL_OK: return "ok";
    case SL_EINVAL: return "invalid";
    case SL_ENOMEM: return "out-of-memory";
    case SL_EPARSE: return "parse";
    case SL_EVALIDATE: return "validation";
    case SL_EUNSUPPORTED: return "unsupported";
    case SL_ELIMIT: return "limit";
    case SL_ETIMEOUT: return "timeout";
    case SL_ECANCELED: return "canceled";
    case SL_EIO: return "io";
    case SL_ENODE: return "node";
    case SL_ENOTFOUND: return "not-found";
    }
    return "unknown";
}

void sl_bug(const char *file, int line, const char *what)
{
    fprintf(stderr, "sluice: BUG at %s:%d: %s\n", file, line, what);
    abort();
}

static void oom(size_t n)
{
    fprintf(stderr, "sluice: out of memory allocating %zu bytes\n", n);
    abort();
}

void *sl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *sl_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *sl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *sl_xstrdup(const char *s)
{
    return sl_xstrndup(s, strlen(s));
}

char *sl_xstrndup(const char *s, size_t n)
{
    char *d = sl_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *sl_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    return s;
}
