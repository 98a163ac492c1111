/*
 * diag — a list of diagnostics (errors and warnings) gathered while loading
 * or validating, so a user sees every problem at once instead of one per
 * try.  Each entry is a full message ("file:line:col: node 'id' (Title):
 * field 'x': what is wrong; what to do").  The list owns its strings.
 * An entry about one input also names that input, so a caller can say how
 * to give it (--input X=, a form field) without reading the message.
 */
#ifndef SL_DIAG_H
#define SL_DIAG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SL_DIAG_OTHER = 0,
    SL_DIAG_MISSING,     /* `input` needs a value and has none */
    SL_DIAG_INVALID,     /* `input`'s value is refused */
    SL_DIAG_UNDECLARED,  /* `input` was given but nothing declares it */
} sl_diag_kind;

typedef struct {
    char *msg;           /* the whole message, as shown */
    bool warning;
    sl_diag_kind kind;
    char *input;         /* the input (a start variable) it concerns, or NULL */
    size_t what_len;     /* msg[0, what_len) says what is wrong; after it, "; "
                          * and what to do (what_len is strlen(msg) when none) */
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
/* An entry about `input` (copied): the message is what fmt says is wrong,
 * then "; " and `fix` (what to do; NULL: nothing more). */
void sl_diag_input(sl_diag *d, bool warning, sl_diag_kind kind, const char *input,
                   const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
