#include "core/diag.h"
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void sl_diag_init(sl_diag *d)
{
    d->v = NULL;
    d->n = d->alloc = d->errors = d->warnings = 0;
}

void sl_diag_release(sl_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i].msg);
    free(d->v);
    sl_diag_init(d);
}

void sl_diag_add(sl_diag *d, bool warning, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = sl_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? d->alloc * 2 : 8;
        d->v = sl_xrealloc(d->v, d->alloc * sizeof *d->v);
    }
    d->v[d->n].msg = s;
    d->v[d->n].warning = warning;
    d->n++;
    if (warning)
        d->warnings++;
    else
        d->errors++;
}
