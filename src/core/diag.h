/*
 * diag — a list of diagnostics (errors and warnings) gathered while loading
 * or validating, so a user sees every problem at once instead of one per
 * try.  Each entry is a full message ("file:line:col: node 'id' (Title):
 * field 'x': what is wrong; what to do").  The list owns its strings.
 */
#ifndef SL_DIAG_H
#define SL_DIAG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *msg;
    bool warning;
} sl_diag_entry;

typedef struct {
    sl_diag_entry *v;
    size_t n, alloc;
    size_t errors, warnings;
} sl_diag;

void sl_diag_init(sl_diag *d);
void sl_diag_release(sl_diag *d);
void sl_diag_add(sl_diag *d, bool warning, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
