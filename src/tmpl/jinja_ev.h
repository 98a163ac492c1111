/*
 * jinja_ev — what rendering (jinja_eval.c) and the filters, tests and
 * methods (jinja_filters.c) share.  Every function that can fail returns
 * 0 or -1 with the render's error set (naming the expression).
 */
#ifndef SL_JINJA_EV_H
#define SL_JINJA_EV_H

#include "tmpl/jinja_int.h"

typedef struct {
    json_t *items;
    size_t i, n;
    json_t *changed;       /* loop.changed(): the last arguments (owned) */
    const jnode *node;     /* the for tag (recursive loops call it again) */
    frame *outer;          /* the frame the for tag runs in */
    int depth;             /* loop.depth - 1 */
    size_t len;            /* loop.length, once asked (len_known) */
    bool len_known;
} loopst;

typedef struct {
    int n, nkw;
    jv *pos;
    const char **kwn;
    jv *kwv;
    jv pos_s[8], kwv_s[8];
} jargs;

typedef struct jinja_filter {
    const char *name;
    int (*fn)(jrender *r, const jnode *e, jv *x, jargs *a, jv *out);
    const char *params;    /* names after the value, comma-separated; "*": any */
} jfilter;
int sl_jx_check_filter_args(jrender *r, const jnode *e, const jfilter *fl, const jargs *a);

typedef struct jinja_test {
    const char *name;
    int (*fn)(jrender *r, const jnode *e, jv *x, jargs *a, bool *res);
} jtest;

/* A buffer that starts on the stack and moves to the heap only when it
 * grows past 256 bytes (most strings a filter makes are short). */
#define STACKBUF(name, cap)                                                                      \
    char name##_mem[256];                                                                        \
    sl_buf name;                                                                                 \
    sl_buf_init_on(&name, (cap), name##_mem, sizeof name##_mem)

/* Decimal digits of u into out (no NUL); returns how many (at most 20). */
size_t sl_jx_fmt_u64(unsigned long long u, char *out);
/* Decimal text of i into out[24] (NUL-terminated); returns its length. */
size_t sl_jx_fmt_i64(long long i, char *out);
/* An int value; small ones are shared, never freed (new reference). */
json_t *sl_jx_int(long long i);

/* Templates can build values nested as deep as their loops run (a
 * million levels): what walks values recursively stops at this depth with
 * an error, as Python's recursion limit would, and releasing a value never
 * recurses (jdecref). */
#define JINJA_MAX_NEST 1000
/* Lists a template builds (+, extend, insert, append) hold at most this
 * many items: doubling a list in a loop would otherwise eat all memory. */
#define JINJA_MAX_ITEMS 10000000
/* Work and polling.  Whatever a render does in proportion to its input
 * charges units of work to r->work: a loop round or macro call 1, an
 * item a filter visits 1, 64 bytes allocated or scanned 1 (a unit is
 * some nanoseconds).  At safe points (statements, loop rounds, calls,
 * and inside filters that walk many items) jwork() polls once the units
 * run out: sl_jx_poll() checks the byte budget and asks the caller's
 * interrupt callback, then allows another JINJA_POLL_UNITS.  Code that
 * cannot fail (comparisons) only charges, through sl_jx_charge(), and the
 * next safe point polls. */
#define JINJA_POLL_UNITS 65536
int sl_jx_poll(jrender *r, const jnode *e);
static inline int jwork(jrender *r, const jnode *e, long units)
{
    return (r->work -= units) > 0 ? 0 : sl_jx_poll(r, e);
}
/* Charges the render running on this thread (none: nothing). */
void sl_jx_charge(long units);

/* Drops a reference; a container whose last reference this is, is taken
 * apart with an explicit stack (jansson's own delete recurses). */
void sl_jx_decref_last(json_t *j);
static inline void jdecref(json_t *j)
{
    if (j && (json_is_array(j) || json_is_object(j)) &&
        __atomic_load_n(&j->refcount, __ATOMIC_ACQUIRE) == 1)
        sl_jx_decref_last(j);
    else
        json_decref(j);
}
/* o[k] = v (stolen); the old value is released through jdecref */
void sl_jx_obj_set(json_t *o, const char *k, json_t *v);
/* Set on this thread when a walk stopped at JINJA_MAX_NEST; cleared by
 * the render that reads it. */
extern _Thread_local bool sl_jx_too_deep;
/* Python ==, for values of any nesting (false beyond JINJA_MAX_NEST, with
 * sl_jx_too_deep set) */
bool sl_jx_py_eq(const json_t *a, const json_t *b);

/* Tuples: registers j (new reference kept by the render) as a tuple of
 * the given kind; sl_jx_tuple_kind() tells (0: not a tuple). */
void sl_jx_mark_tuple(jrender *r, json_t *j, int kind);
int sl_jx_tuple_kind(const json_t *j);
/* -1 with an error when putting v into container `into` would make a
 * value contain itself (sluice refuses those; Python would allow them) */
int sl_jx_check_insert(jrender *r, const jnode *e, const json_t *into, const jv *v);

/* values (a jv owns its reference) */
void sl_jx_free(jv *v);
jv sl_jx_copy(const jv *v);
jv sl_jx_json(json_t *j); /* steals */
jv sl_jx_undef(const char *name);
json_t *sl_jx_to_json(const jv *v);
bool sl_jx_truthy(const jv *v);
bool sl_jx_eq(const jv *a, const jv *b);
int sl_jx_py_cmp(const json_t *a, const json_t *b); /* -2: not orderable */
const char *sl_jx_py_type(const jv *v);
int sl_jx_num_of(const jv *v, long long *i, double *d);
int sl_jx_float(jrender *r, const jnode *e, double d, jv *out);

/* Python str() and repr() */
void sl_jx_str(const jv *v, sl_buf *out);
void sl_jx_py_str(const json_t *j, sl_buf *out);
void sl_jx_py_repr(const json_t *j, sl_buf *out);
int sl_jx_py_percent(jrender *r, const jnode *e, const char *fmt, const jv *args, jv *out);

int sl_jx_err(jrender *r, const jnode *e, sl_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int sl_jx_undef_err(jrender *r, const jnode *e, const jv *v);
int sl_jx_items(jrender *r, const jnode *e, const jv *v, json_t **out);
int sl_jx_contains(jrender *r, const jnode *e, const jv *needle, const jv *hay, bool *res);
int sl_jx_get_attr(jrender *r, const jnode *e, const jv *o, const char *name, jv *out);
int sl_jx_get_item(jrender *r, const jnode *e, const jv *o, const jv *key, jv *out);
int sl_jx_slice(jrender *r, const jnode *e, const jv *o, const json_t *a, const json_t *b,
                const json_t *st, jv *out);

int sl_jx_eval(jrender *r, const jnode *e, frame *f, jv *out);
int sl_jx_eval_filter(jrender *r, const jnode *e, frame *f, const jv *in, jv *out);
int sl_jx_eval_args(jrender *r, const jnode *e, frame *f, jargs *a);
void sl_jx_args_release(jargs *a);
jv *sl_jx_arg(jargs *a, int i, const char *name);
void sl_jx_frame_set(frame *f, const char *name, jv v);
int sl_jx_emit(jrender *r, sl_buf *out, const char *s, size_t n);
void sl_jx_scratch_init(jrender *r, sl_buf *b);

int sl_jx_call_method(jrender *r, const jnode *e, jv *self, const char *name, jargs *a, jv *out);

#endif
