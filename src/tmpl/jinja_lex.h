/*
 * jinja_lex — what the lexer (jinja_lex.c) and the parser (jinja.c) share:
 * the tokens and the compile state.  Both allocate from the template's
 * arena and report errors through sl_jx_perr.
 */
#ifndef SL_JINJA_LEX_H
#define SL_JINJA_LEX_H

#include "tmpl/jinja_int.h"

enum { T_EOF, T_TEXT, T_VB, T_VE, T_BB, T_BE, T_NAME, T_INT, T_FLOAT, T_STR, T_OP };

typedef struct {
    uint8_t type;
    uint32_t off, len;
    int64_t i;
    double f;
    const char *s;   /* name, decoded string, text (into src), operator */
    size_t slen;
} tok;

typedef struct {
    sl_jinja *t;
    sl_err *err;
    bool failed;
    tok *toks;
    size_t n, cap, pos;
    int depth;
    int blocks;      /* tags open around the one being read */
    /* an unknown filter or test outside any `if` tag: an error once the
     * expression is read, unless it was the value part of an inline if
     * (`x|nope if c else y`, which Jinja2 also defers to run time) */
    bool pend;
    size_t pend_off;
    char pend_msg[160];
    int soft;        /* > 0 inside an if tag or an inline if: an unknown filter or test
                        there is an error only if it runs (Jinja2's "soft frame") */
} P;

/* n zeroed bytes (and a NUL-terminated copy of s[0..n)) from t's arena,
 * freed with the template */
void *sl_jx_amalloc(sl_jinja *t, size_t n);
char *sl_jx_astrndup(sl_jinja *t, const char *s, size_t n);
/* Fails the compile with SL_EPARSE and "NAME:LINE:COL: message" at byte
 * off (only the first error counts); returns NULL. */
__attribute__((format(printf, 3, 4))) void *sl_jx_perr(P *p, size_t off, const char *fmt, ...);
/* Tokens of p->t's source into p->toks, ending with T_EOF: 0, or -1 with
 * the error set. */
int sl_jx_lex(P *p);

#endif
