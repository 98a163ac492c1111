#include "core/diag.h"
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_diag_init(sl_diag *d)
{
    d->v = NULL;
    d->n = d->alloc = d->errors = d->warnings = 0;
}

void sl_diag_release(sl_diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].msg);
        free(d->v[i].input);
    }
    free(d->v);
    sl_diag_init(d);
}

static sl_diag_entry *push(sl_diag *d, bool warning, char *msg)
{
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? d->alloc * 2 : 8;
        d->v = sl_xrealloc(d->v, d->alloc * sizeof *d->v);
    }
    sl_diag_entry *e = &d->v[d->n++];
    *e = (sl_diag_entry){.msg = msg, .warning = warning, .what_len = strlen(msg)};
    if (warning)
        d->warnings++;
    else
        d->errors++;
    return e;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = sl_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    return s;
}

void sl_diag_add(sl_diag *d, bool warning, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    push(d, warning, s);
}

void sl_diag_input(sl_diag *d, bool warning, sl_diag_kind kind, const char *input,
                   const char *fix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = vfmt(fmt, ap);
    va_end(ap);
    size_t what_len = strlen(what);
    char *msg = what;
    if (fix) {
        msg = sl_xasprintf("%s; %s", what, fix);
        free(what);
    }
    sl_diag_entry *e = push(d, warning, msg);
    e->kind = kind;
    e->input = input ? sl_xstrdup(input) : NULL;
    e->what_len = what_len;
}
