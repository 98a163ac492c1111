/*
 * jinja_ev — what rendering (jinja_eval.c) shares with the parts it calls:
 * Python's str (jinja_str.c), printing and formatting values
 * (jinja_format.c), the filters (jinja_filters.c), the tests
 * (jinja_tests.c) and the list and dict methods (jinja_methods.c).
 * Every function that can fail returns 0 or -1 with the render's error
 * set (naming the expression).
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
/* The render running on this thread (NULL: none): tuples are looked up
 * through it and allocations counted to it. */
extern _Thread_local jrender *sl_jx_cur_render;

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
/* the error for sl_jx_too_deep (which it clears) */
int sl_jx_deep_err(jrender *r, const jnode *e);
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
/* [key, value] (new; v gets a new reference): json_pack would refuse a
 * key that is not valid UTF-8, and a template's strings need not be */
json_t *sl_jx_pair(const char *k, size_t kl, json_t *v);
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

int sl_jx_err(jrender *r, const jnode *e, sl_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int sl_jx_undef_err(jrender *r, const jnode *e, const jv *v);
int sl_jx_items(jrender *r, const jnode *e, const jv *v, json_t **out);
int sl_jx_contains(jrender *r, const jnode *e, const jv *needle, const jv *hay, bool *res);
int sl_jx_get_attr(jrender *r, const jnode *e, const jv *o, const char *name, jv *out);
int sl_jx_get_item(jrender *r, const jnode *e, const jv *o, const jv *key, jv *out);
int sl_jx_slice(jrender *r, const jnode *e, const jv *o, const json_t *a, const json_t *b,
                const json_t *st, jv *out);
/* a OP b for the arithmetic operators (OP_ADD ... OP_CAT) */
int sl_jx_arith(jrender *r, const jnode *e, int op, const jv *a, const jv *b, jv *out);
/* a OP b for the comparison operators (OP_EQ ... OP_NOTIN) */
int sl_jx_compare(jrender *r, const jnode *e, int op, const jv *a, const jv *b, bool *res);

/* argument i (a positional one), else the keyword argument name; NULL: none */
jv *sl_jx_arg(jargs *a, int i, const char *name);

/* ---- small helpers every part uses (static inline: not symbols) ---- */

static inline bool is_str(const jv *v)
{
    return v && v->k == K_JSON && json_is_string(v->j);
}

/* a double as long long, clamped (C leaves out-of-range conversions undefined) */
static inline long long d2ll(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (long long)d;
}

/* an argument as an integer (floats truncated), def when absent or not a number */
static inline long long int_arg(jv *v, long long def)
{
    long long i;
    double d;
    int t = v ? sl_jx_num_of(v, &i, &d) : 0;
    return t == 1 ? i : t == 2 ? d2ll(d) : def;
}

static inline bool bool_arg(jv *v, bool def)
{
    return v && v->k != K_UNDEF ? sl_jx_truthy(v) : def;
}

/* a string value of s[0..n) (s may be NULL when n is 0) */
static inline jv jstr(const char *s, size_t n)
{
    return sl_jx_json(json_stringn_nocheck(s ? s : "", n));
}

/* b's text as a string value; releases b */
static inline jv jbuf(sl_buf *b)
{
    jv v = jstr(b->data, b->len);
    sl_buf_release(b);
    return v;
}

/* the value as text: strings as they are, others through str()
 * (sl_jx_str); text_done() releases what text_of() made */
typedef struct {
    const char *s;
    size_t n;
    sl_buf b;
    char mem[64];
} text;

void sl_jx_str(const jv *v, sl_buf *out);

static inline void text_of(const jv *v, text *t)
{
    sl_buf_init_on(&t->b, 0, t->mem, sizeof t->mem);
    if (v->k == K_JSON && json_is_string(v->j)) {
        t->s = json_string_value(v->j);
        t->n = json_string_length(v->j);
        return;
    }
    sl_jx_str(v, &t->b);
    t->s = t->b.data ? t->b.data : "";
    t->n = t->b.len;
}

static inline void text_done(text *t)
{
    sl_buf_release(&t->b);
}

/* The code point at s[0..n) (n > 0), its length in *len; a byte that does
 * not start valid UTF-8 is itself, of length 1. */
static inline unsigned long utf8_dec(const char *s, size_t n, size_t *len)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned long c = p[0];
    size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (l > n || c < 0xC0) {
        *len = 1;
        return c;
    }
    c &= l == 2 ? 0x1F : l == 3 ? 0x0F : 0x07;
    for (size_t i = 1; i < l; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *len = 1;
            return p[0];
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *len = l;
    return c;
}

/* ---- Python's str (jinja_str.c) ---- */

/* cp as UTF-8, appended to b */
void sl_jx_utf8_enc(unsigned long cp, sl_buf *b);
bool sl_jx_cp_alpha(unsigned long c); /* str.isalpha() of one code point */
bool sl_jx_cp_space(unsigned long c); /* str.isspace() of one code point */
/* s[0..n) case-mapped onto out; mode: 0 lower, 1 upper, 2 capitalize,
 * 3 Python str.title, 4 Jinja2 title */
void sl_jx_case_map(const char *s, size_t n, int mode, sl_buf *out);
/* characters (code points) in s[0..n) */
size_t sl_jx_ulen(const char *s, size_t n);
/* the byte offset of code point k of s[0..n) (n when there are fewer) */
size_t sl_jx_uoff(const char *s, size_t n, size_t k);
/* x's text case-mapped (modes of sl_jx_case_map): lower, upper, title,
 * capitalize and their filters */
int sl_jx_str_case(jrender *r, jv *x, int mode, jv *out);
/* str.center(width, fillchar) and str.replace(old, new, count), which are
 * also the filters center and replace (with the filters' arguments) */
int sl_jx_str_center(jrender *r, const jnode *e, jv *x, jargs *a, jv *out);
int sl_jx_str_replace(jrender *r, const jnode *e, jv *x, jargs *a, jv *out);
/* str.strip: where 1 left, 2 right, 3 both; chars NULL: whitespace.
 * s[*b..*en) is what remains. */
void sl_jx_strip(const char *s, size_t n, const char *chars, size_t cn, int where, size_t *b,
                 size_t *en);
/* str.isupper() (upper) or str.islower(); false for what is not a string */
bool sl_jx_str_cased(jv *x, bool upper);
/* self.m(args) for a string self */
int sl_jx_str_method(jrender *r, const jnode *e, jv *self, const char *m, jargs *a, jv *out);

/* ---- values as Python prints them, and formatting (jinja_format.c) ---- */

/* Python's str() (sl_jx_str: of any runtime value) */
void sl_jx_py_str(const json_t *j, sl_buf *out);
/* json.dumps(sort_keys=True, indent) with Jinja2's HTML-safe escapes
 * (indent < 0: none) */
void sl_jx_tojson(const json_t *j, int indent, sl_buf *out);
/* Python's pprint.pformat (width 80, dict keys sorted); out->toobig set
 * when the render was ended meanwhile */
void sl_jx_pformat(jrender *r, const json_t *j, sl_buf *out);
/* "fmt" % args: args is a tuple/list, a dict (for %(name)s) or one value */
int sl_jx_py_percent(jrender *r, const jnode *e, const char *fmt, const jv *args, jv *out);
/* s.format(args) */
int sl_jx_py_format(jrender *r, const jnode *e, const char *s, jargs *a, jv *out);

/* ---- filters (jinja_filters.c) ---- */

/* an item (borrowed) with its sort key (owned; NULL: the item has no such
 * attribute) */
typedef struct {
    json_t *key, *item;
} kv;
/* min/max/sort/unique share: the items with their keys, each the item's
 * attribute `at` ("a.b"; "a,b" for a list of several; NULL: the item
 * itself), strings lower-cased unless cs; free with sl_jx_keyed_free */
kv *sl_jx_keyed(json_t *items, jv *at, bool cs, size_t *n);
void sl_jx_keyed_free(kv *v, size_t n);
/* stable sort of v by key: 0, -1 when keys do not order, -2 when the
 * render was ended meanwhile (its error is set) */
int sl_jx_sort_items(jrender *r, const jnode *e, kv *v, size_t n, bool reverse);

/* ---- methods (jinja_methods.c; str's in jinja_str.c) ---- */

/* self.name(args) for any value */
int sl_jx_call_method(jrender *r, const jnode *e, jv *self, const char *name, jargs *a, jv *out);
/* d.items() as a list of (key, value) tuples; also the filter items */
int sl_jx_dict_items(jrender *r, const jnode *e, jv *x, jargs *a, jv *out);

#endif
