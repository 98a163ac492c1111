/*
 * err — the one error convention of sluice.
 *
 * Functions that can fail return 0 on success and -1 on failure, and fill the
 * caller's `sl_err` (which may be NULL when the caller does not care).  The
 * message is written for a user: what was wrong, where (file:line:col, node id
 * and title, field) and what to do.  An `sl_err` owns its message; release it
 * with sl_err_clear().  BUG-class conditions (broken invariants) abort via
 * SL_BUG(); they are never used for anything a user's input can cause.
 *
 * Callers decide on the fields, never on the message text: `code` says what
 * kind of failure it was, `type` is the error_type Dify reports for it (a
 * node's or run's failure class, "HTTPRequestError"), and `setting` names
 * the `sluice limits` entry to raise when a limit was hit (which limit it
 * was: "agent_max_turns" and "agent_max_tokens" are both SL_ELIMIT).
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
    SL_ENOTFOUND,   /* the thing named (an app, a run, a file) does not exist */
} sl_errcode;

typedef struct {
    sl_errcode code;
    char *msg;           /* heap string, NULL when code == SL_OK */
    char *type;          /* heap; Dify's error_type, NULL: the caller's default */
    const char *setting; /* static; the `sluice limits` entry to raise, or NULL */
} sl_err;

/* Sets code and a printf-style message; replaces an earlier error (type and
 * setting too).  Always returns -1 so callers can `return sl_err_set(...)`. */
int sl_err_set(sl_err *err, sl_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* sl_err_set, and the error_type Dify reports for this failure (copied). */
int sl_err_typed(sl_err *err, sl_errcode code, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* sl_err_set for a limit that was hit (SL_ELIMIT, or SL_ETIMEOUT for a time
 * limit), and `setting`, the `sluice limits` entry that raises it (a static
 * string such as "max_steps"; not copied). */
int sl_err_limit(sl_err *err, sl_errcode code, const char *setting, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets (copies) or, with NULL, removes the error_type of a set error. */
void sl_err_set_type(sl_err *err, const char *type);
/* Prepends "prefix: " to an existing message (adds context on the way up);
 * code, type and setting stay. */
int sl_err_prefix(sl_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The error_type to report: err's own, else `fallback` (the caller's class
 * for its failures, e.g. "LoopNodeError"). */
const char *sl_err_type(const sl_err *err, const char *fallback);
/* Moves src into dst (dst's earlier error is released; src is left clear). */
void sl_err_move(sl_err *dst, sl_err *src);
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
