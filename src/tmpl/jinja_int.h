/*
 * jinja_int — what the parts of the Jinja2 engine share: the syntax tree
 * (jinja.c builds it) and the runtime value and render state (jinja_eval.c
 * walks the tree; jinja_ev.h lists the parts rendering calls).
 *
 * The tree lives in one arena owned by the sl_jinja and is never written
 * after compile.  A `jv` owns one reference of its json_t.
 *
 * Names: what the Jinja files share is sl_jx_* (sl_jinja_* is the public
 * API of jinja.h); everything else is static to its file (or a static
 * inline helper of jinja_ev.h).
 */
#ifndef SL_JINJA_INT_H
#define SL_JINJA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "tmpl/jinja.h"

/* ---- syntax tree ---- */

enum {
    /* statements */
    N_TEXT = 1, N_OUT, N_IF, N_FOR, N_SET, N_SETBLOCK, N_MACRO, N_CALLBLOCK, N_FILTERBLOCK,
    N_WITH, N_BODY,
    /* expressions */
    E_CONST, E_NAME, E_LIST, E_TUPLE, E_DICT, E_ATTR, E_ITEM, E_SLICE, E_BIN, E_NEG, E_POS,
    E_NOT, E_AND, E_OR, E_CMP, E_COND, E_FILTER, E_TEST, E_CALL,
};

/* binary and comparison operators */
enum { OP_ADD = 1, OP_SUB, OP_MUL, OP_DIV, OP_FDIV, OP_MOD, OP_POW, OP_CAT,
       OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN };

typedef struct jnode jnode;
struct jinja_filter;
struct jinja_test;

struct jnode {
    uint8_t type, op;
    bool neg;              /* E_TEST: is not; N_SET: target is ns.attr; N_FOR: recursive;
                              E_ATTR: the name is a dict method; E_FILTER: the arguments
                              do not fit the filter (an error when it runs) */
    uint32_t off, len;     /* source span (for messages) */
    const char *s;         /* name / text / attribute */
    size_t slen;
    json_t *c;             /* E_CONST value */
    jnode *a, *b, *x;      /* operands; N_IF: cond, then, else; N_FOR: iter, body, else */
    jnode *cond;           /* N_FOR filter */
    jnode **v;             /* children (lists, args, bodies, targets, cmp operands) */
    int nv;
    const char **kwn;      /* keyword argument names / macro param names */
    jnode **kwv;           /* their values / defaults (NULL: none) */
    int nkw;
    const char **names;    /* N_FOR / N_SET targets, N_CALLBLOCK caller params */
    int nnames;
    const void *fn;        /* E_FILTER: filter entry, E_TEST: test entry */
    const char *s2;        /* N_SET ns.attr: attribute */
};

struct sl_jinja {
    bool mutates;          /* calls list/dict methods that change values in place */
    char *name;
    char *src;             /* normalised source (newlines, trailing newline) */
    size_t srclen;
    jnode *root;
    json_t **consts;       /* every E_CONST value, freed with the template */
    size_t nconsts, aconsts;
    struct arena *arena;
};

/* ---- runtime values ---- */

enum { K_ABSENT = 0, K_UNDEF, K_JSON, K_MACRO, K_LOOP, K_NS, K_CALLER,
       K_BUILTIN,   /* range, dict, namespace, cycler, joiner (name) */
       K_CYCLER,    /* cycler(...) (p: its state, owned by the render) */
       K_JOINER };  /* joiner(sep) (p: its state, owned by the render) */

typedef struct {
    uint8_t k;
    json_t *j;             /* K_JSON value, K_NS object, K_UNDEF key (may be NULL) */
    const char *name;      /* K_UNDEF: variable or attribute name; K_MACRO name */
    const char *owner;     /* K_UNDEF: "dict object" etc. when from an attribute */
    const void *p;         /* K_MACRO / K_CALLER node, K_LOOP state */
    const void *p2;        /* K_CALLER: call site frame */
} jv;

typedef struct frame frame;
struct frame {
    frame *parent;
    int n, cap;
    const char **names;
    jv *vals;
};

/* state of a cycler or joiner; freed with the render */
typedef struct jobj jobj;
struct jobj {
    jobj *next;
    json_t *items;         /* cycler: its items; joiner: [sep] */
    size_t pos;            /* cycler: current index; joiner: calls so far */
};

typedef struct {
    const sl_jinja *t;
    const json_t *ctx;
    json_t *own_ctx;       /* a copy of the context when the template mutates values */
    sl_jinja_limits lim;
    sl_err *err;
    long iters;
    long work;             /* units of work left before the next poll (sl_jx_poll) */
    sl_errcode halted;     /* set once a poll ended the render: later polls fail too */
    long walk;             /* container visits left for self-reference checks */
    const sl_buf *cnt_buf; /* the render's output: its first cnt_len bytes */
    size_t cnt_len, cnt_chars; /* hold cnt_chars characters (emit's count) */
    bool ns_escaped;       /* a namespace was put into a list or dict: setting its
                              attributes must check for self-reference */
    int depth;
    long long bytes;       /* memory held by the values this render made (counted at
                              jansson's allocator) and by its captured text */
    sl_buf *capture;       /* where a macro, recursive loop or set block is being
                              captured (NULL: the render's own output) */
    frame *root;
    jobj *objs;
    /* values that are tuples (printed (a, b)) or groupby groups: a set of
     * pointers, each holding a reference so no other value takes its address */
    json_t **tup;
    uint8_t *tupk;
    size_t ntup, atup;
} jrender;

enum { TUP_PLAIN = 1, TUP_GROUP = 2,           /* print as (a, b) */
       VIEW_KEYS = 3, VIEW_VALUES = 4, VIEW_ITEMS = 5 }; /* print as dict_keys([...]) */

/* Is name one of dict's methods (d.items reads the method, as in Jinja2)? */
const char *sl_jx_dict_method(const char *name); /* its static name, or NULL */
/* Do n positional and these keyword arguments fit the filter's parameters? */
bool sl_jx_filter_args_ok(const struct jinja_filter *filter, int n, const char *const *kwn,
                          int nkw);

/* Filters and tests by name; NULL when there is none. */
const struct jinja_filter *sl_jx_find_filter(const char *name);
const struct jinja_test *sl_jx_find_test(const char *name);
/* The line and column (from 1) of byte off of the template's source. */
void sl_jx_line_col(const sl_jinja *t, size_t off, int *line, int *col);

#endif
