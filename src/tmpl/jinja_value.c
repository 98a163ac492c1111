/*
 * jinja_value — Python's semantics of the values a render makes: shared
 * small ints, tuples (which JSON lacks), type names, truthiness,
 * iteration, attribute and item lookup, slices, arithmetic, comparisons
 * and `in`.  Releasing a container never recurses (sl_jx_decref_last).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "tmpl/jinja_ev.h"

/* ---- values ---- */

size_t sl_jx_fmt_u64(unsigned long long u, char *out)
{
    char t[20];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++)
        out[i] = t[n - 1 - i];
    return n;
}

size_t sl_jx_fmt_i64(long long i, char *out)
{
    size_t n = 0;
    unsigned long long u = (unsigned long long)i;
    if (i < 0) {
        out[n++] = '-';
        u = 0ULL - u;
    }
    n += sl_jx_fmt_u64(u, out + n);
    out[n] = '\0';
    return n;
}

/* Loop counters, lengths and small sums are the ints templates make most:
 * these are made once per process and shared (reference counts are atomic). */
enum { SMALL_MIN = -16, SMALL_MAX = 1023 };
static json_t *small_ints[SMALL_MAX - SMALL_MIN + 1];
static pthread_once_t small_once = PTHREAD_ONCE_INIT;

static void small_init(void)
{
    for (int i = SMALL_MIN; i <= SMALL_MAX; i++)
        small_ints[i - SMALL_MIN] = json_integer(i);
}

json_t *sl_jx_int(long long i)
{
    if (i < SMALL_MIN || i > SMALL_MAX)
        return json_integer(i);
    pthread_once(&small_once, small_init);
    return json_incref(small_ints[i - SMALL_MIN]);
}

_Thread_local bool sl_jx_too_deep;

void sl_jx_decref_last(json_t *j)
{
    /* the last reference to a container: empty it and its sole-owned
     * children level by level, so freeing does not recurse */
    size_t n = 0, cap = 16;
    json_t **st = sl_xmalloc(cap * sizeof *st);
    st[n++] = j;
    while (n) {
        json_t *c = st[--n];
        for (;;) {
            json_t *x;
            if (json_is_array(c)) {
                size_t k = json_array_size(c);
                if (!k)
                    break;
                x = json_incref(json_array_get(c, k - 1));
                json_array_remove(c, k - 1);
            } else {
                void *it = json_object_iter(c);
                if (!it)
                    break;
                x = json_incref(json_object_iter_value(it));
                /* by length: a key may hold a NUL byte */
                json_object_deln(c, json_object_iter_key(it), json_object_iter_key_len(it));
            }
            if ((json_is_array(x) || json_is_object(x)) && x->refcount == 1) {
                if (n == cap) {
                    cap *= 2;
                    st = sl_xrealloc(st, cap * sizeof *st);
                }
                st[n++] = x;
            } else {
                json_decref(x);
            }
        }
        json_decref(c);
    }
    free(st);
}

/* what kind of sequence an array is, for ==: a list, a tuple, or a dict view */
static int seq_kind(const json_t *a)
{
    int k = sl_jx_tuple_kind(a);
    return k == TUP_GROUP ? TUP_PLAIN : k;
}

static bool eq_rec(const json_t *a, const json_t *b, int depth)
{
    if (a == b)
        return true;
    if (depth > JINJA_MAX_NEST) {
        sl_jx_too_deep = true;
        return false;
    }
    sl_jx_charge(1); /* comparing big values is work too */
    jv va = {.k = K_JSON, .j = (json_t *)a}, vb = {.k = K_JSON, .j = (json_t *)b};
    long long ia, ib;
    double da, db;
    int ta = sl_jx_num_of(&va, &ia, &da), tb = sl_jx_num_of(&vb, &ib, &db);
    if (ta && tb)
        return ta == 1 && tb == 1 ? ia == ib : da == db;
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_string(a)) {
        size_t n = json_string_length(a);
        if (n != json_string_length(b))
            return false;
        sl_jx_charge((long)(n >> 6));
        return !memcmp(json_string_value(a), json_string_value(b), n);
    }
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b) || seq_kind(a) != seq_kind(b)) /* (1, 2) != [1, 2] */
            return false;
        for (size_t i = 0; i < n; i++)
            if (!eq_rec(json_array_get(a, i), json_array_get(b, i), depth + 1))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)a, k, x) {
            json_t *y = json_object_get(b, k);
            if (!y || !eq_rec(x, y, depth + 1))
                return false;
        }
        return true;
    }
    return true; /* null */
}

/* ---- tuples ---- */

static size_t tup_slot(const jrender *r, const json_t *j)
{
    uintptr_t h = (uintptr_t)j >> 4;
    h *= 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 20) & (r->atup - 1);
}

/* the set, rehashed into a table of cap slots (a power of two) */
static void tup_rebuild(jrender *r, size_t cap)
{
    json_t **ot = r->tup;
    uint8_t *ok = r->tupk;
    size_t oa = r->atup;
    r->atup = cap;
    r->tup = calloc(cap, sizeof *r->tup);
    r->tupk = calloc(cap, 1);
    if (!r->tup || !r->tupk)
        abort();
    for (size_t i = 0; i < oa; i++)
        if (ot[i]) {
            size_t k = tup_slot(r, ot[i]);
            while (r->tup[k])
                k = (k + 1) & (r->atup - 1);
            r->tup[k] = ot[i];
            r->tupk[k] = ok[i];
        }
    free(ot);
    free(ok);
}

void sl_jx_mark_tuple(jrender *r, json_t *j, int kind)
{
    if (!j || !json_is_array(j) || sl_jx_tuple_kind(j))
        return;
    if ((r->ntup + 1) * 2 > r->atup && r->atup) {
        /* first drop the tuples only this set still holds: a loop that
         * makes pairs would otherwise keep every one until the end */
        size_t live = 0;
        for (size_t i = 0; i < r->atup; i++)
            if (r->tup[i] && __atomic_load_n(&r->tup[i]->refcount, __ATOMIC_ACQUIRE) == 1) {
                jdecref(r->tup[i]);
                r->tup[i] = NULL;
            } else if (r->tup[i]) {
                live++;
            }
        if (live < r->ntup) {
            r->ntup = live;
            tup_rebuild(r, r->atup); /* the probe chains had holes */
        }
    }
    if ((r->ntup + 1) * 2 > r->atup)
        tup_rebuild(r, r->atup ? r->atup * 2 : 64);
    size_t k = tup_slot(r, j);
    while (r->tup[k])
        k = (k + 1) & (r->atup - 1);
    r->tup[k] = json_incref(j);
    r->tupk[k] = (uint8_t)kind;
    r->ntup++;
}

int sl_jx_tuple_kind(const json_t *j)
{
    const jrender *r = sl_jx_cur_render;
    if (!r || !r->ntup || !json_is_array(j))
        return 0;
    for (size_t k = tup_slot(r, j); r->tup[k]; k = (k + 1) & (r->atup - 1))
        if (r->tup[k] == j)
            return r->tupk[k];
    return 0;
}

/* Is `into` reachable from v (v itself included)?  Visits containers only,
 * with an explicit stack, charged to the render's walk budget. */
int sl_jx_check_insert(jrender *r, const jnode *e, const json_t *into, const jv *v)
{
    json_t *j = v->k == K_JSON || v->k == K_NS ? v->j : NULL;
    if (!j || !(json_is_array(j) || json_is_object(j)))
        return 0;
    size_t n = 0, cap = 16;
    const json_t **st = sl_xmalloc(cap * sizeof *st);
    st[n++] = j;
    int rc = 0;
    while (n && !rc) {
        const json_t *c = st[--n];
        if (c == into) {
            rc = sl_jx_err(r, e, SL_EINVAL,
                           "this would make a value contain itself, which sluice "
                           "does not allow (Python would print it as [...])");
            break;
        }
        size_t m = json_is_array(c) ? json_array_size(c) : 0;
        void *it = json_is_object(c) ? json_object_iter((json_t *)c) : NULL;
        for (size_t i = 0;; i++) {
            if (--r->walk < 0) {
                rc = sl_jx_err(r, e, SL_ELIMIT,
                               "putting large values into lists or dicts in place "
                               "looked through more than 10,000,000 items in this render (sluice's "
                               "cap, which guards against self-containing values); append smaller "
                               "values, or build the result with filters such as map and list");
                break;
            }
            const json_t *x;
            if (json_is_array(c)) {
                if (i >= m)
                    break;
                x = json_array_get(c, i);
            } else {
                if (!it)
                    break;
                x = json_object_iter_value(it);
                it = json_object_iter_next((json_t *)c, it);
            }
            if (json_is_array(x) || json_is_object(x)) {
                if (n == cap) {
                    cap *= 2;
                    st = sl_xrealloc(st, cap * sizeof *st);
                }
                st[n++] = x;
            }
        }
    }
    free(st);
    return rc;
}

void sl_jx_obj_set(json_t *o, const char *k, json_t *v)
{
    json_t *old = json_incref(json_object_get(o, k));
    json_object_set_new_nocheck(o, k, v);
    jdecref(old); /* not jansson's delete, which recurses */
}

bool sl_jx_py_eq(const json_t *a, const json_t *b)
{
    return a && b ? eq_rec(a, b, 0) : a == b;
}

/* ---- runtime values (jv) ---- */

void sl_jx_free(jv *v)
{
    if (v->j) {
        jdecref(v->j);
        v->j = NULL;
    }
    v->k = K_ABSENT;
}

jv sl_jx_copy(const jv *v)
{
    jv r = *v;
    if (r.j)
        json_incref(r.j);
    return r;
}

jv sl_jx_json(json_t *j)
{
    jv v = {.k = K_JSON, .j = j};
    return v;
}

json_t *sl_jx_pair(const char *k, size_t kl, json_t *v)
{
    json_t *p = json_array();
    json_array_append_new(p, json_stringn_nocheck(k, kl));
    json_array_append(p, v);
    return p;
}

jv sl_jx_undef(const char *name)
{
    jv v = {.k = K_UNDEF, .name = name};
    return v;
}

/* the value as JSON for a container (new reference) */
json_t *sl_jx_to_json(const jv *v)
{
    if (v->k == K_NS && sl_jx_cur_render)
        sl_jx_cur_render->ns_escaped = true;
    if ((v->k == K_JSON || v->k == K_NS) && v->j)
        return json_incref(v->j);
    return json_null();
}

const char *sl_jx_py_type(const jv *v)
{
    if (v->k == K_UNDEF)
        return "Undefined";
    if (v->k == K_MACRO || v->k == K_CALLER)
        return "Macro";
    if (v->k == K_LOOP)
        return "LoopContext";
    if (v->k == K_NS)
        return "Namespace";
    if (v->k == K_BUILTIN)
        return "builtin_function_or_method";
    if (v->k == K_CYCLER)
        return "Cycler";
    if (v->k == K_JOINER)
        return "Joiner";
    switch (json_typeof(v->j)) {
    case JSON_OBJECT: return "dict";
    case JSON_ARRAY: return "list";
    case JSON_STRING: return "str";
    case JSON_INTEGER: return "int";
    case JSON_REAL: return "float";
    case JSON_TRUE:
    case JSON_FALSE: return "bool";
    default: return "NoneType";
    }
}

int sl_jx_undef_err(jrender *r, const jnode *e, const jv *v)
{
    if (v->owner && v->j && json_is_integer(v->j))
        return sl_jx_err(r, e, SL_EINVAL, "%s has no element %lld", v->owner,
                         (long long)json_integer_value(v->j));
    /* a name made at run time is kept as v->j (v->name may point into a
     * value that is gone) */
    const char *nm = v->j && json_is_string(v->j) ? json_string_value(v->j) : v->name;
    if (v->owner)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' has no attribute '%s'", v->owner, nm ? nm : "?");
    if (nm)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' is undefined", nm);
    return sl_jx_err(r, e, SL_EINVAL, "a value is undefined");
}

bool sl_jx_truthy(const jv *v)
{
    switch (v->k) {
    case K_JSON: return sl_value_truthy(v->j);
    case K_UNDEF:
    case K_ABSENT: return false;
    default: return true;
    }
}

int sl_jx_deep_err(jrender *r, const jnode *e)
{
    sl_jx_too_deep = false;
    return sl_jx_err(r, e, SL_ELIMIT,
                     "a value is nested deeper than %d levels (sluice's limit, like "
                     "Python's recursion limit)",
                     JINJA_MAX_NEST);
}

/* ---- iteration ---- */

/* The items of an iterable as a JSON array (new reference): lists, dict
 * keys, string characters; undefined iterates as empty. */
int sl_jx_items(jrender *r, const jnode *e, const jv *v, json_t **out)
{
    *out = NULL;
    if (v->k == K_UNDEF) {
        *out = json_array();
        return 0;
    }
    if (v->k != K_JSON)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' object is not iterable", sl_jx_py_type(v));
    json_t *j = v->j;
    if (json_is_array(j)) {
        *out = json_incref(j);
        return 0;
    }
    if (json_is_object(j)) {
        json_t *a = json_array();
        const char *k;
        json_t *x;
        json_object_foreach(j, k, x) json_array_append_new(a, json_string_nocheck(k));
        *out = a;
        return 0;
    }
    if (json_is_string(j)) {
        json_t *a = json_array();
        const char *s = json_string_value(j);
        size_t n = json_string_length(j);
        for (size_t i = 0; i < n;) {
            size_t l = 1;
            while (i + l < n && ((unsigned char)s[i + l] & 0xC0) == 0x80)
                l++;
            json_array_append_new(a, json_stringn_nocheck(s + i, l));
            i += l;
        }
        *out = a;
        return 0;
    }
    return sl_jx_err(r, e, SL_EINVAL, "'%s' object is not iterable", sl_jx_py_type(v));
}

/* ---- lookups ---- */

static jv loop_attr(const jv *lv, const char *name)
{
    loopst *l = (loopst *)lv->p;
    long long i = (long long)l->i, n = (long long)json_array_size(l->items);
    if (name[0] == 'l' && !strcmp(name, "last"))
        return sl_jx_json(json_boolean(i == n - 1));
    /* Jinja2 takes a loop's length once, when first asked (the list may
     * grow while it is walked) */
    if (!l->len_known) {
        l->len = (size_t)n;
        l->len_known = true;
    }
    n = (long long)l->len;
    if (!strcmp(name, "index"))
        return sl_jx_json(sl_jx_int(i + 1));
    if (!strcmp(name, "index0"))
        return sl_jx_json(sl_jx_int(i));
    if (!strcmp(name, "revindex"))
        return sl_jx_json(sl_jx_int(n - i));
    if (!strcmp(name, "revindex0"))
        return sl_jx_json(sl_jx_int(n - i - 1));
    if (!strcmp(name, "first"))
        return sl_jx_json(json_boolean(i == 0));
    if (!strcmp(name, "last"))
        return sl_jx_json(json_boolean(i == n - 1));
    if (!strcmp(name, "length"))
        return sl_jx_json(sl_jx_int(n));
    if (!strcmp(name, "depth"))
        return sl_jx_json(sl_jx_int(l->depth + 1));
    if (!strcmp(name, "depth0"))
        return sl_jx_json(sl_jx_int(l->depth));
    if (!strcmp(name, "previtem")) {
        if (i == 0)
            return sl_jx_undef("previtem");
        return sl_jx_json(json_incref(json_array_get(l->items, (size_t)i - 1)));
    }
    if (!strcmp(name, "nextitem")) {
        if (i + 1 >= n)
            return sl_jx_undef("nextitem");
        return sl_jx_json(json_incref(json_array_get(l->items, (size_t)i + 1)));
    }
    jv u = sl_jx_undef(name);
    u.owner = "LoopContext object";
    return u;
}

/* obj.name (Jinja2: attribute, then item) */
const char *sl_jx_dict_method(const char *name)
{
    static const char *const methods[] = {"items", "keys", "values", "get", "pop", "update",
                                          "copy", "clear", "setdefault", "popitem", NULL};
    if (!name[0] || !strchr("cgikpsuv", name[0]))
        return NULL;
    for (int i = 0; methods[i]; i++)
        if (!strcmp(name, methods[i]))
            return methods[i];
    return NULL;
}

int sl_jx_get_attr(jrender *r, const jnode *e, const jv *o, const char *name, jv *out)
{
    if (o->k == K_UNDEF)
        return sl_jx_undef_err(r, e, o);
    if (o->k == K_LOOP) {
        *out = loop_attr(o, name);
        return 0;
    }
    if (o->k == K_CYCLER && !strcmp(name, "current")) {
        const jobj *c = o->p;
        *out = sl_jx_json(json_incref(json_array_get(c->items, c->pos)));
        return 0;
    }
    json_t *j = o->j;
    if (o->k == K_JSON && json_is_array(j) && json_array_size(j) == 2 &&
        (!strcmp(name, "grouper") || !strcmp(name, "list")) && sl_jx_tuple_kind(j) == TUP_GROUP) {
        *out = sl_jx_json(json_incref(json_array_get(j, name[0] == 'l')));
        return 0;
    }
    if (o->k == K_JSON && json_is_object(j) &&
        (e && e->type == E_ATTR ? e->neg : sl_jx_dict_method(name) != NULL)) {
        /* Jinja2 reads an attribute before an item: d.items is the dict's
         * method even when d has a key "items" (use d['items'] for that) */
        jv m = {.k = K_BUILTIN, .name = sl_jx_dict_method(name), .owner = "dict object"};
        *out = m;
        return 0;
    }
    if ((o->k == K_JSON || o->k == K_NS) && json_is_object(j)) {
        json_t *x = json_object_get(j, name);
        if (x) {
            *out = sl_jx_json(json_incref(x));
            return 0;
        }
    }
    *out = sl_jx_undef(name);
    out->owner = o->k == K_JSON && json_is_object(j) ? "dict object"
                 : o->k == K_JSON && json_is_array(j) ? "list object"
                 : o->k == K_JSON && json_is_string(j) ? "str object"
                 : o->k == K_NS ? "Namespace object" : "object";
    return 0;
}

/* obj[key] (Jinja2: item, then attribute) */
int sl_jx_get_item(jrender *r, const jnode *e, const jv *o, const jv *key, jv *out)
{
    if (o->k == K_UNDEF)
        return sl_jx_undef_err(r, e, o);
    if (key->k == K_JSON && json_is_string(key->j)) {
        /* obj['name']: the item first, then the attribute */
        json_t *x = (o->k == K_JSON || o->k == K_NS) && json_is_object(o->j)
                        ? json_object_get(o->j, json_string_value(key->j)) : NULL;
        if (x) {
            *out = sl_jx_json(json_incref(x));
            return 0;
        }
        if (sl_jx_get_attr(r, e, o, json_string_value(key->j), out) < 0)
            return -1;
        /* an undefined result names the key: keep the key alive with it */
        if ((out->k == K_UNDEF || out->k == K_BUILTIN) && !out->j) {
            out->j = json_incref(key->j);
            if (out->k == K_UNDEF)
                out->name = NULL;
        }
        return 0;
    }
    json_t *j = o->j;
    if (o->k == K_JSON && key->k == K_JSON &&
        (json_is_integer(key->j) || json_is_boolean(key->j))) {
        long long i = json_is_integer(key->j) ? json_integer_value(key->j) : json_is_true(key->j);
        if (json_is_array(j)) {
            long long n = (long long)json_array_size(j);
            long long k = i < 0 ? i + n : i;
            if (k >= 0 && k < n) {
                *out = sl_jx_json(json_incref(json_array_get(j, (size_t)k)));
                return 0;
            }
        } else if (json_is_string(j)) {
            const char *s = json_string_value(j);
            size_t n = json_string_length(j);
            r->work -= (long)(n >> 6); /* s[i] counts the characters: indexing a long
                                          string in a loop is quadratic work */
            long long cn = (long long)sl_jx_ulen(s, n);
            long long k = i < 0 ? i + cn : i;
            if (k >= 0 && k < cn) {
                size_t b = 0, c = 0;
                while (c < (size_t)k) {
                    b++;
                    while (b < n && ((unsigned char)s[b] & 0xC0) == 0x80)
                        b++;
                    c++;
                }
                size_t l = 1;
                while (b + l < n && ((unsigned char)s[b + l] & 0xC0) == 0x80)
                    l++;
                *out = sl_jx_json(json_stringn_nocheck(s + b, l));
                return 0;
            }
        }
    }
    *out = sl_jx_undef(NULL);
    out->owner = o->k == K_JSON && json_is_object(j) ? "dict object"
                 : o->k == K_JSON && json_is_array(j) ? "list object"
                 : o->k == K_JSON && json_is_string(j) ? "str object" : "object";
    out->j = key->k == K_JSON ? json_incref(key->j) : NULL;
    return 0;
}

/* ---- Python slices ---- */

static void slice_bounds(long long n, const json_t *a, const json_t *b, long long step,
                         long long *start, long long *stop)
{
    if (step > 0) {
        *start = a ? json_integer_value(a) : 0;
        *stop = b ? json_integer_value(b) : n;
        if (*start < 0)
            *start = *start + n < 0 ? 0 : *start + n;
        if (*start > n)
            *start = n;
        if (*stop < 0)
            *stop = *stop + n < 0 ? 0 : *stop + n;
        if (*stop > n)
            *stop = n;
    } else {
        *start = a ? json_integer_value(a) : n - 1;
        *stop = b ? json_integer_value(b) : -1 - n;
        if (*start < 0)
            *start = *start + n < 0 ? -1 : *start + n;
        if (*start >= n)
            *start = n - 1;
        if (*stop < 0)
            *stop = *stop + n < 0 ? -1 : *stop + n;
        if (*stop >= n)
            *stop = n - 1;
    }
}

int sl_jx_slice(jrender *r, const jnode *e, const jv *o, const json_t *a, const json_t *b,
                const json_t *st, jv *out)
{
    if (o->k == K_UNDEF)
        return sl_jx_undef_err(r, e, o);
    for (int i = 0; i < 3; i++) {
        const json_t *x = i == 0 ? a : i == 1 ? b : st;
        if (x && !json_is_integer(x) && !json_is_null(x))
            return sl_jx_err(r, e, SL_EINVAL, "slice indices must be integers or None");
    }
    if (a && json_is_null(a))
        a = NULL;
    if (b && json_is_null(b))
        b = NULL;
    long long step = st && json_is_integer(st) ? json_integer_value(st) : 1;
    if (step == 0)
        return sl_jx_err(r, e, SL_EINVAL, "slice step cannot be zero");
    json_t *j = o->j;
    if (o->k == K_JSON && json_is_array(j)) {
        long long n = (long long)json_array_size(j), s0, s1;
        slice_bounds(n, a, b, step, &s0, &s1);
        r->work -= (long)((s1 > s0 ? s1 - s0 : s0 - s1) / (step > 0 ? step : -step));
        json_t *res = json_array();
        for (long long i = s0; step > 0 ? i < s1 : i > s1; i += step)
            json_array_append(res, json_array_get(j, (size_t)i));
        if (seq_kind(j) == TUP_PLAIN)
            sl_jx_mark_tuple(r, res, TUP_PLAIN);
        *out = sl_jx_json(res);
        return 0;
    }
    if (o->k == K_JSON && json_is_string(j)) {
        const char *s = json_string_value(j);
        size_t n = json_string_length(j);
        r->work -= (long)(n >> 3);
        /* codepoint offsets */
        size_t cn = sl_jx_ulen(s, n);
        size_t *offs = sl_xmalloc((cn + 1) * sizeof *offs);
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (((unsigned char)s[i] & 0xC0) != 0x80)
                offs[c++] = i;
        offs[cn] = n;
        long long s0, s1;
        slice_bounds((long long)cn, a, b, step, &s0, &s1);
        sl_buf res;
        sl_buf_init(&res, 0);
        for (long long i = s0; step > 0 ? i < s1 : i > s1; i += step)
            sl_buf_add(&res, s + offs[i], offs[i + 1] - offs[i]);
        free(offs);
        *out = sl_jx_json(json_stringn_nocheck(res.data ? res.data : "", res.len));
        sl_buf_release(&res);
        return 0;
    }
    return sl_jx_err(r, e, SL_EINVAL, "'%s' object is not subscriptable", sl_jx_py_type(o));
}

/* ---- arithmetic ---- */

/* 1 int, 2 float, 0 not a number (bools are ints, as in Python) */
int sl_jx_num_of(const jv *v, long long *i, double *d)
{
    if (v->k != K_JSON)
        return 0;
    switch (json_typeof(v->j)) {
    case JSON_INTEGER: *i = json_integer_value(v->j); *d = (double)*i; return 1;
    case JSON_REAL: *d = json_real_value(v->j); return 2;
    case JSON_TRUE: *i = 1; *d = 1; return 1;
    case JSON_FALSE: *i = 0; *d = 0; return 1;
    default: return 0;
    }
}

int sl_jx_float(jrender *r, const jnode *e, double d, jv *out)
{
    if (!isfinite(d))
        return sl_jx_err(r, e, SL_EINVAL, "the result is not a finite number");
    *out = sl_jx_json(json_real(d));
    return 0;
}

int sl_jx_arith(jrender *r, const jnode *e, int op, const jv *a, const jv *b, jv *out)
{
    static const char *const sym[] = {"", "+", "-", "*", "/", "//", "%", "**"};
    long long ia = 0, ib = 0;
    double da = 0, db = 0;
    if (a->k == K_UNDEF)
        return sl_jx_undef_err(r, e, a);
    if (b->k == K_UNDEF)
        return sl_jx_undef_err(r, e, b);
    int ta = sl_jx_num_of(a, &ia, &da), tb = sl_jx_num_of(b, &ib, &db);
    if (ta && tb) {
        bool ints = ta == 1 && tb == 1;
        long long ir;
        switch (op) {
        case OP_ADD:
            if (ints && !__builtin_add_overflow(ia, ib, &ir))
                return *out = sl_jx_json(sl_jx_int(ir)), 0;
            return sl_jx_float(r, e, da + db, out);
        case OP_SUB:
            if (ints && !__builtin_sub_overflow(ia, ib, &ir))
                return *out = sl_jx_json(sl_jx_int(ir)), 0;
            return sl_jx_float(r, e, da - db, out);
        case OP_MUL:
            if (ints && !__builtin_mul_overflow(ia, ib, &ir))
                return *out = sl_jx_json(sl_jx_int(ir)), 0;
            return sl_jx_float(r, e, da * db, out);
        case OP_DIV:
            if (db == 0)
                return sl_jx_err(r, e, SL_EINVAL, "division by zero");
            return sl_jx_float(r, e, da / db, out);
        case OP_FDIV:
        case OP_MOD:
            if (db == 0)
                return sl_jx_err(r, e, SL_EINVAL,
                                 op == OP_MOD ? "modulo by zero" : "division by zero");
            if (ints && !(ia == INT64_MIN && ib == -1)) {
                long long q = ia / ib, m = ia % ib;
                if (m != 0 && ((m < 0) != (ib < 0))) {
                    q--;
                    m += ib;
                }
                return *out = sl_jx_json(sl_jx_int(op == OP_FDIV ? q : m)), 0;
            }
            if (op == OP_FDIV)
                return sl_jx_float(r, e, sl_floor(da / db), out);
            {
                double m = sl_fmod(da, db);
                if (m != 0 && ((m < 0) != (db < 0)))
                    m += db;
                else if (m == 0)
                    m = copysign(0.0, db);
                return sl_jx_float(r, e, m, out);
            }
        case OP_POW:
            if (ints && ib >= 0) {
                long long res = 1, base = ia, ex = ib;
                bool of = false;
                while (ex && !of) {
                    if (ex & 1)
                        of |= __builtin_mul_overflow(res, base, &res);
                    ex >>= 1;
                    if (ex)
                        of |= __builtin_mul_overflow(base, base, &base);
                }
                if (!of)
                    return *out = sl_jx_json(sl_jx_int(res)), 0;
            }
            if (da == 0 && db < 0)
                return sl_jx_err(r, e, SL_EINVAL, "0.0 cannot be raised to a negative power");
            double pw;
            sl_err pe = {0};
            if (sl_pow(da, db, &pw, &pe)) {
                int rc = sl_jx_err(r, e, pe.code, "%s", pe.msg);
                sl_err_clear(&pe);
                return rc;
            }
            return sl_jx_float(r, e, pw, out);
        }
    }
    json_t *ja = a->k == K_JSON ? a->j : NULL, *jb = b->k == K_JSON ? b->j : NULL;
    if (op == OP_ADD && json_is_string(ja) && json_is_string(jb)) {
        size_t la = json_string_length(ja), lb = json_string_length(jb);
        if (la + lb > r->lim.max_output_chars * 4 + 16)
            return sl_jx_err(r, e, SL_ELIMIT,
                             "the joined string would be larger than the output cap");
        char *s = sl_xmalloc(la + lb + 1);
        memcpy(s, json_string_value(ja), la);
        memcpy(s + la, json_string_value(jb), lb);
        *out = sl_jx_json(json_stringn_nocheck(s, la + lb));
        free(s);
        return 0;
    }
    if (op == OP_ADD && json_is_array(ja) && json_is_array(jb)) {
        bool ta2 = seq_kind(ja) == TUP_PLAIN, tb2 = seq_kind(jb) == TUP_PLAIN;
        if (ta2 != tb2)
            return sl_jx_err(r, e, SL_EINVAL, "can only concatenate %s (not \"%s\") to %s",
                             ta2 ? "tuple" : "list", tb2 ? "tuple" : "list",
                             ta2 ? "tuple" : "list");
        if (json_array_size(ja) + json_array_size(jb) > JINJA_MAX_ITEMS)
            return sl_jx_err(r, e, SL_ELIMIT,
                             "the list would have more than %d items (sluice's cap on "
                             "lists a template builds)",
                             JINJA_MAX_ITEMS);
        json_t *res = json_copy(ja);
        json_array_extend(res, jb);
        if (ta2)
            sl_jx_mark_tuple(r, res, TUP_PLAIN);
        *out = sl_jx_json(res);
        return 0;
    }
    if (op == OP_MUL && ((json_is_string(ja) || json_is_array(ja)) && tb == 1 && !json_is_boolean(jb)) ) {
        long long unit = (long long)(json_is_string(ja) ? json_string_length(ja) : json_array_size(ja));
        if (unit > 0 && ib > (long long)(r->lim.max_output_chars * 4) / unit)
            return sl_jx_err(r, e, SL_ELIMIT,
                             "the repeated value would be larger than the output cap");
        if (unit == 0)
            ib = 0; /* "" * 10**15 is "" at once, not after 10**15 empty copies */
        if (json_is_string(ja)) {
            sl_buf b2;
            sl_buf_init(&b2, 0);
            for (long long i = 0; i < ib; i++)
                sl_buf_add(&b2, json_string_value(ja), json_string_length(ja));
            *out = sl_jx_json(json_stringn_nocheck(b2.data ? b2.data : "", b2.len));
            sl_buf_release(&b2);
        } else {
            json_t *res = json_array();
            for (long long i = 0; i < ib; i++)
                json_array_extend(res, ja);
            if (seq_kind(ja) == TUP_PLAIN)
                sl_jx_mark_tuple(r, res, TUP_PLAIN);
            *out = sl_jx_json(res);
        }
        return 0;
    }
    if (op == OP_MUL && json_is_string(jb) && ta == 1) {
        jv sw;
        return sl_jx_arith(r, e, op, b, a, &sw) ? -1 : (*out = sw, 0);
    }
    if (op == OP_MOD && json_is_string(ja))
        return sl_jx_py_percent(r, e, json_string_value(ja), b, out);
    return sl_jx_err(r, e, SL_EINVAL, "unsupported operand type(s) for %s: '%s' and '%s'", sym[op],
                     sl_jx_py_type(a), sl_jx_py_type(b));
}

/* ---- comparisons ---- */

bool sl_jx_eq(const jv *a, const jv *b)
{
    if (a->k == K_UNDEF || b->k == K_UNDEF)
        return a->k == b->k;
    if (a->k != K_JSON || b->k != K_JSON)
        return a->p == b->p && a->j == b->j;
    long long ia, ib;
    double da, db;
    int ta = sl_jx_num_of(a, &ia, &da), tb = sl_jx_num_of(b, &ib, &db);
    if (ta && tb)
        return ta == 1 && tb == 1 ? ia == ib : da == db;
    return sl_jx_py_eq(a->j, b->j);
}

/* Python ordering: -2 when the types do not order */
static int cmp_rec(const json_t *a, const json_t *b, int depth)
{
    sl_jx_charge(1);
    jv va = {.k = K_JSON, .j = (json_t *)a}, vb = {.k = K_JSON, .j = (json_t *)b};
    long long ia, ib;
    double da, db;
    int ta = sl_jx_num_of(&va, &ia, &da), tb = sl_jx_num_of(&vb, &ib, &db);
    if (ta && tb) {
        if (ta == 1 && tb == 1)
            return ia < ib ? -1 : ia > ib;
        return da < db ? -1 : da > db;
    }
    if (json_is_string(a) && json_is_string(b)) {
        size_t la = json_string_length(a), lb = json_string_length(b);
        int c = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
        if (c)
            return c < 0 ? -1 : 1;
        return la < lb ? -1 : la > lb;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t la = json_array_size(a), lb = json_array_size(b);
        for (size_t i = 0; i < la && i < lb; i++) {
            json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
            if (depth >= JINJA_MAX_NEST) {
                sl_jx_too_deep = true;
                return -2;
            }
            if (eq_rec(x, y, depth + 1))
                continue;
            return cmp_rec(x, y, depth + 1);
        }
        return la < lb ? -1 : la > lb;
    }
    return -2;
}

int sl_jx_py_cmp(const json_t *a, const json_t *b)
{
    return cmp_rec(a, b, 0);
}

int sl_jx_contains(jrender *r, const jnode *e, const jv *needle, const jv *hay, bool *res)
{
    *res = false;
    if (hay->k == K_UNDEF)
        return 0;
    json_t *h = hay->k == K_JSON || hay->k == K_NS ? hay->j : NULL;
    if (json_is_string(h)) {
        if (needle->k != K_JSON || !json_is_string(needle->j))
            return sl_jx_err(r, e, SL_EINVAL,
                             "'in <string>' requires string as left operand, not %s",
                             sl_jx_py_type(needle));
        *res = memmem(json_string_value(h), json_string_length(h), json_string_value(needle->j),
                      json_string_length(needle->j)) != NULL;
        return jwork(r, e, (long)(json_string_length(h) >> 6));
    }
    if (json_is_array(h)) {
        for (size_t i = 0; i < json_array_size(h) && !*res; i++) {
            jv x = {.k = K_JSON, .j = json_array_get(h, i)};
            *res = sl_jx_eq(needle, &x);
            if (jwork(r, e, 1) < 0)
                return -1;
        }
        return 0;
    }
    if (json_is_object(h)) {
        *res = needle->k == K_JSON && json_is_string(needle->j) &&
               json_object_get(h, json_string_value(needle->j));
        return 0;
    }
    return sl_jx_err(r, e, SL_EINVAL, "argument of type '%s' is not iterable", sl_jx_py_type(hay));
}

int sl_jx_compare(jrender *r, const jnode *e, int op, const jv *a, const jv *b, bool *res)
{
    switch (op) {
    case OP_EQ: *res = sl_jx_eq(a, b); return 0;
    case OP_NE: *res = !sl_jx_eq(a, b); return 0;
    case OP_IN: return sl_jx_contains(r, e, a, b, res);
    case OP_NOTIN:
        if (sl_jx_contains(r, e, a, b, res) < 0)
            return -1;
        *res = !*res;
        return 0;
    }
    static const char *const sym[] = {[OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">="};
    if (a->k == K_UNDEF)
        return sl_jx_undef_err(r, e, a);
    if (b->k == K_UNDEF)
        return sl_jx_undef_err(r, e, b);
    int c = a->k == K_JSON && b->k == K_JSON ? sl_jx_py_cmp(a->j, b->j) : -2;
    if (c == -2 && sl_jx_too_deep)
        return sl_jx_deep_err(r, e);
    if (c == -2)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' not supported between instances of '%s' and '%s'",
                         sym[op], sl_jx_py_type(a), sl_jx_py_type(b));
    *res = op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0;
    return 0;
}
