/*
 * err — the one error convention of sluice.
 *
 * Functions that can fail return 0 on success and -1 on failure, and fill the
 * caller's `sl_err` (which may be NULL when the caller does not care).  The
 * message is written for a user: what was wrong, where (file:line:col, node id
 * and title, field) and what to do.  An `sl_err` owns its message; release it
 * with sl_err_clear().  BUG-class conditions (broken invariants) abort via
 * SL_BUG(); they are never used for anything a user's input can cause.
 */
#ifndef SL_ERR_H
#define SL_ERR_H

#include <stddef.h>

typedef enum {
    SL_OK = 0,
    SL_EINVAL,      /* bad argument or bad input from the user */
    SL_ENOMEM,      /* allocation failed */
    SL_EPARSE,      /* a file could not be parsed */
    SL_EVALIDATE,   /* a workflow failed validation */
    SL_EUNSUPPORTED,/* a feature (node type, option) sluice does not run */
    SL_ELIMIT,      /* a configured limit was hit */
    SL_ETIMEOUT,    /* a time limit was hit */
    SL_ECANCELED,   /* the run was stopped */
    SL_EIO,         /* file or network I/O failed */
    SL_ENODE,       /* a node failed while running */
} sl_errcode;

typedef struct {
    sl_errcode code;
    char *msg;      /* heap string, NULL when code == SL_OK */
} sl_err;

/* Sets code and a printf-style message; replaces an earlier message.
 * Always returns -1 so callers can `return sl_err_set(...)`. */
int sl_err_set(sl_err *err, sl_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (adds context on the way up). */
int sl_err_prefix(sl_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sl_err_clear(sl_err *err);
const char *sl_errcode_name(sl_errcode code);

/* Aborts with file:line; for broken invariants only. */
_Noreturn void sl_bug(const char *file, int line, const char *what);
#define SL_BUG(what) sl_bug(__FILE__, __LINE__, (what))

/* Allocation that never returns NULL: running out of memory is fatal, as in
 * redis and git; every size that outside input controls is capped before it
 * gets here. */
void *sl_xmalloc(size_t n);
void *sl_xcalloc(size_t n, size_t size);
void *sl_xrealloc(void *p, size_t n);
char *sl_xstrdup(const char *s);
char *sl_xstrndup(const char *s, size_t n);
char *sl_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
