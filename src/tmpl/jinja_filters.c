/*
 * jinja_filters — Jinja2's built-in filters ({{ xs | join(', ') }}), each
 * with the parameters Jinja2 3.1 gives it.  Filters that are also Python
 * methods (replace, center, items) are the methods' own functions.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/math.h"
#include "tmpl/jinja_ev.h"

/* ---- helpers for filters ---- */

/* an integer parameter: its value, def when absent or None, or -1 with
 * the error Python would raise for another type */
static int int_param(jrender *r, const jnode *e, jv *v, const char *name, long long def,
                     long long *out)
{
    long long i;
    double d;
    if (!v || (v->k == K_JSON && json_is_null(v->j))) {
        *out = def;
        return 0;
    }
    int t = sl_jx_num_of(v, &i, &d);
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "%s must be an integer, not '%s'", name,
                         sl_jx_py_type(v));
    *out = t == 1 ? i : d2ll(d);
    return 0;
}

/* item.a.b (dots; integer parts index lists); borrowed or NULL */
static json_t *path_get(json_t *x, const char *path)
{
    char part[256];
    while (x && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof part)
            return NULL;
        memcpy(part, path, n);
        part[n] = 0;
        if (json_is_object(x)) {
            x = json_object_get(x, part);
        } else if (json_is_array(x) && isdigit((unsigned char)part[0])) {
            x = json_array_get(x, (size_t)atoll(part));
        } else {
            return NULL;
        }
        path = dot ? dot + 1 : path + n;
    }
    return x;
}

static json_t *attr_of(json_t *x, jv *attribute)
{
    if (!attribute || attribute->k != K_JSON || json_is_null(attribute->j))
        return x;
    if (json_is_integer(attribute->j))
        return json_is_array(x) ? json_array_get(x, (size_t)json_integer_value(attribute->j)) : NULL;
    if (!json_is_string(attribute->j))
        return NULL;
    const char *path = json_string_value(attribute->j);
    if (json_is_object(x) && !memchr(path, '.', json_string_length(attribute->j)))
        return json_object_get(x, path);
    return path_get(x, path);
}

/* sort key: lower-cased strings unless case sensitive */
static json_t *sort_key(json_t *x, bool cs)
{
    if (!cs && json_is_string(x)) {
        const unsigned char *p = (const unsigned char *)json_string_value(x);
        size_t n = json_string_length(x), i = 0;
        while (i < n && p[i] < 0x80 && !(p[i] >= 'A' && p[i] <= 'Z'))
            i++;
        if (i == n)
            return json_incref(x);
        STACKBUF(b, 0);
        sl_jx_case_map(json_string_value(x), json_string_length(x), 0, &b);
        json_t *k = json_stringn_nocheck(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return k;
    }
    return json_incref(x);
}

static _Thread_local bool sort_bad; /* renders run on many threads */

static int kv_cmp(const kv *a, const kv *b)
{
    int c = a->key && b->key ? sl_jx_py_cmp(a->key, b->key) : -2;
    if (c == -2) {
        sort_bad = true;
        return 0;
    }
    return c;
}

/* keys all of one kind compare without sl_jx_py_cmp: 1 ints, 2 numbers that
 * doubles hold exactly, 3 strings; 0 mixed */
static int key_kind(const kv *v, size_t n)
{
    int kind = -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *k = v[i].key;
        int t = json_is_integer(k) ? (llabs((long long)json_integer_value(k)) < (1LL << 53) ? 1 : 0)
                : json_is_real(k)  ? 2
                : json_is_string(k) ? 3 : 0;
        if (!t)
            return 0;
        if (kind < 0)
            kind = t;
        else if (kind != t)
            kind = kind == 3 || t == 3 ? 0 : 2;
        if (!kind)
            return 0;
    }
    return kind < 0 ? 0 : kind;
}

static int kind_cmp(int kind, const json_t *a, const json_t *b)
{
    if (kind == 1) {
        long long x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    if (kind == 2) {
        double x = json_is_integer(a) ? (double)json_integer_value(a) : json_real_value(a);
        double y = json_is_integer(b) ? (double)json_integer_value(b) : json_real_value(b);
        return x < y ? -1 : x > y;
    }
    size_t la = json_string_length(a), lb = json_string_length(b);
    int c = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
    return c ? (c < 0 ? -1 : 1) : la < lb ? -1 : la > lb;
}

/* stable merge sort of items by key: 0, -1 when keys do not order, -2
 * when the render was ended meanwhile (its error is set) */
int sl_jx_sort_items(jrender *r, const jnode *e, kv *v, size_t n, bool reverse)
{
    kv *tmp = sl_xmalloc((n ? n : 1) * sizeof *tmp);
    bool bad = false;
    int kind = key_kind(v, n);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int c;
                if (kind) {
                    c = kind_cmp(kind, v[j].key, v[i].key);
                } else {
                    sort_bad = false;
                    c = kv_cmp(&v[j], &v[i]);
                    bad |= sort_bad;
                }
                if (reverse ? c > 0 : c < 0)
                    tmp[k++] = v[j++];
                else
                    tmp[k++] = v[i++];
            }
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
            if (jwork(r, e, (long)(hi - lo)) < 0) {
                free(tmp);
                return -2;
            }
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
    return bad ? -1 : 0;
}

/* (filters read their items through here: walking them is charged as work) */
static int items_of(jrender *r, const jnode *e, jv *x, json_t **items)
{
    if (sl_jx_items(r, e, x, items) < 0)
        return -1;
    r->work -= (long)json_array_size(*items);
    return 0;
}

/* ---- filters ---- */

#define FILTER(name) static int f_##name(jrender *r, const jnode *e, jv *x, jargs *a, jv *out)

FILTER(abs)
{
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    (void)a;
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "bad operand type for abs(): '%s'", sl_jx_py_type(x));
    if (t == 1 && i != INT64_MIN)
        *out = sl_jx_json(sl_jx_int(i < 0 ? -i : i));
    else
        *out = sl_jx_json(json_real(fabs(d)));
    return 0;
}

FILTER(attr)
{
    jv *n = sl_jx_arg(a, 0, "name");
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    *out = sl_jx_undef(is_str(n) ? NULL : "?");
    if (is_str(n))
        out->j = json_incref(n->j); /* the name, kept alive with the value */
    return 0;
}

FILTER(lower) { (void)e, (void)a; return sl_jx_str_case(r, x, 0, out); }
FILTER(upper) { (void)e, (void)a; return sl_jx_str_case(r, x, 1, out); }
FILTER(capitalize) { (void)e, (void)a; return sl_jx_str_case(r, x, 2, out); }
FILTER(title) { (void)e, (void)a; return sl_jx_str_case(r, x, 4, out); }

FILTER(default)
{
    (void)r, (void)e;
    jv *d = sl_jx_arg(a, 0, "default_value");
    bool boolean = bool_arg(sl_jx_arg(a, 1, "boolean"), false);
    if (x->k == K_UNDEF || (boolean && !sl_jx_truthy(x)))
        *out = d ? sl_jx_copy(d) : jstr("", 0);
    else
        *out = sl_jx_copy(x);
    return 0;
}

static void html_escape(const char *s, size_t n, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': sl_buf_adds(b, "&amp;"); break;
        case '<': sl_buf_adds(b, "&lt;"); break;
        case '>': sl_buf_adds(b, "&gt;"); break;
        case '"': sl_buf_adds(b, "&#34;"); break;
        case '\'': sl_buf_adds(b, "&#39;"); break;
        default: sl_buf_addc(b, s[i]);
        }
    }
}

FILTER(escape)
{
    (void)r, (void)e, (void)a;
    text t;
    text_of(x, &t);
    STACKBUF(b, 0);
    html_escape(t.s, t.n, &b);
    text_done(&t);
    *out = jbuf(&b);
    return 0;
}

FILTER(safe)
{
    (void)r, (void)e, (void)a;
    *out = sl_jx_copy(x);
    return 0;
}

FILTER(first)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    *out = json_array_size(items) ? sl_jx_json(json_incref(json_array_get(items, 0)))
                                  : sl_jx_undef("first");
    jdecref(items);
    return 0;
}

FILTER(last)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    *out = n ? sl_jx_json(json_incref(json_array_get(items, n - 1))) : sl_jx_undef("last");
    jdecref(items);
    return 0;
}

FILTER(float)
{
    jv *d = sl_jx_arg(a, 0, "default");
    long long i;
    double v;
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    int t = sl_jx_num_of(x, &i, &v);
    if (t)
        return sl_jx_float(r, e, v, out);
    if (is_str(x)) {
        const char *s = json_string_value(x->j);
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        /* Python's float(): decimal, or nan / inf / infinity with a sign;
         * no hex (strtod would read 0x1p3) */
        const char *q = s + (*s == '+' || *s == '-');
        bool hex = q[0] == '0' && (q[1] | 32) == 'x';
        v = hex ? 0 : strtod(s, &end);
        if (hex)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end) {
            if (!isfinite(v))
                return sl_jx_err(r, e, SL_EINVAL,
                                 "'%s' is not a finite number, and sluice's values "
                                 "are JSON numbers (no nan or inf)",
                                 json_string_value(x->j));
            *out = sl_jx_json(json_real(v));
            return 0;
        }
    }
    *out = d ? sl_jx_copy(d) : sl_jx_json(json_real(0.0));
    return 0;
}

FILTER(int)
{
    (void)r, (void)e;
    jv *d = sl_jx_arg(a, 0, "default");
    long long base = int_arg(sl_jx_arg(a, 1, "base"), 10);
    long long i;
    double v;
    if (a->n > 2)
        return sl_jx_err(r, e, SL_EINVAL, "int takes at most 2 arguments (%d given)", a->n);
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    int t = sl_jx_num_of(x, &i, &v);
    if (t == 1) {
        *out = sl_jx_json(sl_jx_int(i));
        return 0;
    }
    if (t == 2 && fabs(v) < 9.2e18) {
        *out = sl_jx_json(sl_jx_int((long long)v));
        return 0;
    }
    if (is_str(x)) {
        /* Python's int(s, base): digits with single underscores between
         * them; a 0x/0o/0b prefix only when it matches the base */
        char buf[128];
        const char *s0 = json_string_value(x->j);
        size_t k = 0;
        while (isspace((unsigned char)*s0))
            s0++;
        bool ok = true;
        for (const char *q = s0; *q && k < sizeof buf - 1; q++) {
            if (*q == '_') {
                ok &= q > s0 && isalnum((unsigned char)q[-1]) && isalnum((unsigned char)q[1]);
                continue;
            }
            buf[k++] = *q;
        }
        buf[k] = 0;
        const char *s = buf;
        int b = (int)(base >= 2 && base <= 36 ? base : 10);
        size_t sg = buf[0] == '-' || buf[0] == '+';
        if (s[sg] == '0' && s[sg + 1] && strchr("xXoObB", s[sg + 1])) {
            char pc = (char)(s[sg + 1] | 32);
            if ((b == 16 && pc == 'x') || (b == 8 && pc == 'o') || (b == 2 && pc == 'b'))
                memmove(buf + sg, buf + sg + 2, strlen(buf + sg + 2) + 1); /* drop 0x */
            else if (b != 16 || pc != 'b')
                ok = false;
        }
        char *end;
        errno = 0;
        long long n = ok ? strtoll(s, &end, b) : 0;
        if (!ok)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end && !errno) {
            *out = sl_jx_json(sl_jx_int(n));
            return 0;
        }
        v = ok && !strchr(s, 'x') && !strchr(s, 'X') ? strtod(s, &end) : 0;
        if (!ok)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end && isfinite(v) && fabs(v) < 9.2e18) {
            *out = sl_jx_json(sl_jx_int((long long)v));
            return 0;
        }
        if (end != s && !*end && isfinite(v)) {
            /* beyond 64 bits: sluice's ints stop there, so the nearest float */
            *out = sl_jx_json(json_real(sl_trunc(v)));
            return 0;
        }
    }
    *out = d ? sl_jx_copy(d) : sl_jx_json(sl_jx_int(0));
    return 0;
}

FILTER(join)
{
    jv *d = sl_jx_arg(a, 0, "d");
    jv *at = sl_jx_arg(a, 1, "attribute");
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    text sep;
    if (d) {
        text_of(d, &sep);
    } else {
        sep.s = "";
        sep.n = 0;
        sl_buf_init(&sep.b, 0);
    }
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    for (size_t i = 0; i < json_array_size(items); i++) {
        if (i)
            sl_buf_add(&b, sep.s, sep.n);
        json_t *it = attr_of(json_array_get(items, i), at);
        if (it)
            sl_jx_py_str(it, &b);
    }
    text_done(&sep);
    jdecref(items);
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the joined text is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

FILTER(length)
{
    (void)a;
    if (x->k == K_UNDEF) {
        *out = sl_jx_json(sl_jx_int(0));
        return 0;
    }
    json_t *j = x->k == K_JSON || x->k == K_NS ? x->j : NULL;
    if (json_is_string(j)) {
        r->work -= (long)(json_string_length(j) >> 6);
        *out = sl_jx_json(sl_jx_int((long long)sl_jx_ulen(json_string_value(j), json_string_length(j))));
    } else if (json_is_array(j))
        *out = sl_jx_json(sl_jx_int((long long)json_array_size(j)));
    else if (json_is_object(j))
        *out = sl_jx_json(sl_jx_int((long long)json_object_size(j)));
    else if (x->k == K_LOOP)
        *out = sl_jx_json(sl_jx_int((long long)((const loopst *)x->p)->n));
    else
        return sl_jx_err(r, e, SL_EINVAL, "object of type '%s' has no len()", sl_jx_py_type(x));
    return 0;
}

FILTER(list)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    *out = sl_jx_json(json_copy(items));
    jdecref(items);
    return 0;
}

FILTER(string)
{
    (void)r, (void)e, (void)a;
    STACKBUF(b, 0);
    sl_jx_str(x, &b);
    *out = jbuf(&b);
    return 0;
}

FILTER(reverse)
{
    (void)a;
    if (is_str(x)) {
        const char *s = json_string_value(x->j);
        size_t n = json_string_length(x->j);
        char *o = sl_xmalloc(n + 1);
        size_t w = n;
        for (size_t i = 0; i < n;) {
            size_t l = 1;
            while (i + l < n && ((unsigned char)s[i + l] & 0xC0) == 0x80)
                l++;
            w -= l;
            memcpy(o + w, s + i, l);
            i += l;
        }
        *out = jstr(o, n);
        free(o);
        return 0;
    }
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    json_t *res = json_array();
    for (size_t i = json_array_size(items); i > 0; i--)
        json_array_append(res, json_array_get(items, i - 1));
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

/* Python's round(v, p): 0 and *out, or -1 and err (libm, core/math.h) */
static int py_round(double v, long long p, double *out, sl_err *err)
{
    if (!isfinite(v))
        return *out = v, 0;
    if (p >= 0 && p < 300) {
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", (int)p, v);
        return *out = strtod(buf, NULL), 0;
    }
    double m;
    if (sl_pow10(-p, &m, err))
        return -1;
    double q = v / m, fl = sl_floor(q), diff = q - fl;
    double rq = diff > 0.5 ? fl + 1 : diff < 0.5 ? fl : (sl_fmod(fl, 2) == 0 ? fl : fl + 1);
    return *out = rq * m, 0;
}

FILTER(round)
{
    long long p = int_arg(sl_jx_arg(a, 0, "precision"), 0);
    jv *m = sl_jx_arg(a, 1, "method");
    const char *method = is_str(m) ? json_string_value(m->j) : "common";
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "round needs a number, not '%s'", sl_jx_py_type(x));
    if (t == 1 && !(x->k == K_JSON && json_is_boolean(x->j)) && p >= 0 &&
        !strcmp(method, "common")) {
        /* Python's round() of an int keeps the int */
        *out = sl_jx_json(sl_jx_int(i));
        return 0;
    }
    if (strcmp(method, "common") && strcmp(method, "ceil") && strcmp(method, "floor"))
        return sl_jx_err(r, e, SL_EINVAL, "method must be common, ceil or floor");
    double v = 0, mul = 1;
    sl_err pe = {0};
    if (!strcmp(method, "common") ? py_round(d, p, &v, &pe) : sl_pow10(p, &mul, &pe)) {
        int rc = sl_jx_err(r, e, pe.code, "%s", pe.msg);
        sl_err_clear(&pe);
        return rc;
    }
    if (!strcmp(method, "common"))
        return sl_jx_float(r, e, v, out);
    v = method[0] == 'c' ? sl_ceil(d * mul) / mul : sl_floor(d * mul) / mul;
    return sl_jx_float(r, e, v, out);
}

static const jtest *test_arg(jrender *r, const jnode *e, jv *name)
{
    if (!is_str(name)) {
        sl_jx_err(r, e, SL_EINVAL, "expected a test name");
        return NULL;
    }
    const jtest *t = sl_jx_find_test(json_string_value(name->j));
    if (!t)
        sl_jx_err(r, e, SL_EINVAL, "no test named '%s'", json_string_value(name->j));
    return t;
}

/* select/reject (attr: false) and selectattr/rejectattr (attr: true) */
static int do_select(jrender *r, const jnode *e, jv *x, jargs *a, bool attr, bool keep, jv *out)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    int first = attr ? 1 : 0;
    jv *an = attr ? sl_jx_arg(a, 0, NULL) : NULL;
    const jtest *t = NULL;
    if (a->n > first && !(t = test_arg(r, e, &a->pos[first]))) {
        jdecref(items);
        return -1;
    }
    jargs rest = *a;
    rest.n = a->n > first + 1 ? a->n - first - 1 : 0;
    rest.pos = a->pos + (a->n > first + 1 ? first + 1 : 0);
    json_t *res = json_array();
    int rc = 0;
    for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
        json_t *it = json_array_get(items, i);
        json_t *v = attr ? attr_of(it, an) : it;
        jv jx = v ? sl_jx_json(json_incref(v))
                  : sl_jx_undef(an && is_str(an) ? json_string_value(an->j) : NULL);
        bool ok;
        if (t)
            rc = t->fn(r, e, &jx, &rest, &ok);
        else
            ok = sl_jx_truthy(&jx);
        if (!rc && ok == keep)
            json_array_append(res, it);
        sl_jx_free(&jx);
        if (!rc)
            rc = jwork(r, e, 1);
    }
    jdecref(items);
    if (rc) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(select) { return do_select(r, e, x, a, false, true, out); }
FILTER(reject) { return do_select(r, e, x, a, false, false, out); }
FILTER(selectattr) { return do_select(r, e, x, a, true, true, out); }
FILTER(rejectattr) { return do_select(r, e, x, a, true, false, out); }

FILTER(map)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    jv *at = sl_jx_arg(a, -1, "attribute");
    json_t *res = json_array();
    int rc = 0;
    if (at) {
        jv *def = sl_jx_arg(a, -1, "default");
        for (size_t i = 0; i < json_array_size(items); i++) {
            json_t *v = attr_of(json_array_get(items, i), at);
            json_array_append_new(res, v ? json_incref(v) : def ? sl_jx_to_json(def) : json_null());
        }
    } else if (a->n >= 1 && is_str(&a->pos[0])) {
        const jfilter *fl = sl_jx_find_filter(json_string_value(a->pos[0].j));
        if (!fl) {
            rc = sl_jx_err(r, e, SL_EINVAL, "no filter named '%s'", json_string_value(a->pos[0].j));
        } else {
            jargs rest = *a;
            rest.n = a->n - 1;
            rest.pos = a->pos + 1;
            for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
                jv it = sl_jx_json(json_incref(json_array_get(items, i))), o;
                rc = fl->fn(r, e, &it, &rest, &o);
                if (!rc) {
                    json_array_append_new(res, sl_jx_to_json(&o));
                    sl_jx_free(&o);
                    rc = jwork(r, e, 1);
                }
                sl_jx_free(&it);
            }
        }
    } else {
        json_array_extend(res, items);
    }
    jdecref(items);
    if (rc) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

kv *sl_jx_keyed(json_t *items, jv *at, bool cs, size_t *n)
{
    *n = json_array_size(items);
    kv *v = sl_xmalloc((*n ? *n : 1) * sizeof *v);
    /* sort(attribute='a,b.c'): the key is the list of those attributes */
    const char *multi = is_str(at) && strchr(json_string_value(at->j), ',')
                            ? json_string_value(at->j) : NULL;
    for (size_t i = 0; i < *n; i++) {
        v[i].item = json_array_get(items, i);
        if (multi) {
            json_t *key = json_array();
            for (const char *p = multi; key;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                char part[256];
                json_t *k = NULL;
                if (l < sizeof part) {
                    memcpy(part, p, l);
                    part[l] = 0;
                    k = path_get(v[i].item, part);
                }
                if (!k) {
                    jdecref(key);
                    key = NULL;
                    break;
                }
                json_array_append_new(key, sort_key(k, cs));
                if (!c)
                    break;
                p = c + 1;
            }
            v[i].key = key;
            continue;
        }
        json_t *k = attr_of(v[i].item, at);
        v[i].key = k ? sort_key(k, cs) : NULL;
    }
    return v;
}

void sl_jx_keyed_free(kv *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jdecref(v[i].key);
    free(v);
}

static int minmax(jrender *r, const jnode *e, jv *x, jargs *a, bool max, jv *out)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = sl_jx_keyed(items, sl_jx_arg(a, 1, "attribute"),
                  bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false), &n);
    size_t best = 0;
    int rc = 0;
    for (size_t i = 1; i < n; i++) {
        sort_bad = false;
        int c = kv_cmp(&v[i], &v[best]);
        if (sort_bad) {
            rc = sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
            break;
        }
        if (max ? c > 0 : c < 0)
            best = i;
    }
    if (!rc)
        *out = n ? sl_jx_json(json_incref(v[best].item)) : sl_jx_undef(max ? "max" : "min");
    sl_jx_keyed_free(v, n);
    jdecref(items);
    return rc;
}

FILTER(max) { return minmax(r, e, x, a, true, out); }
FILTER(min) { return minmax(r, e, x, a, false, out); }

FILTER(sort)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = sl_jx_keyed(items, sl_jx_arg(a, 2, "attribute"),
                  bool_arg(sl_jx_arg(a, 1, "case_sensitive"), false), &n);
    int rc = sl_jx_sort_items(r, e, v, n, bool_arg(sl_jx_arg(a, 0, "reverse"), false));
    if (rc == -2) {
        rc = -1;
    } else if (rc < 0 && sl_jx_too_deep) {
        rc = 0; /* eval_filter reports it */
        *out = sl_jx_json(json_array());
    } else if (rc < 0) {
        rc = sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
    } else {
        json_t *res = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append(res, v[i].item);
        *out = sl_jx_json(res);
    }
    sl_jx_keyed_free(v, n);
    jdecref(items);
    return rc;
}

FILTER(unique)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = sl_jx_keyed(items, sl_jx_arg(a, 1, "attribute"),
                  bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false), &n);
    json_t *res = json_array();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = v[k].key && v[i].key ? sl_jx_py_eq(v[k].key, v[i].key) : v[k].key == v[i].key;
        if (!seen)
            json_array_append(res, v[i].item);
        rc = jwork(r, e, (long)i + 1); /* each item is compared with those before it */
    }
    sl_jx_keyed_free(v, n);
    jdecref(items);
    if (rc < 0) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(dictsort)
{
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "dictsort needs a dict, not '%s'", sl_jx_py_type(x));
    bool cs = bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false);
    jv *by = sl_jx_arg(a, 1, "by");
    bool byval = is_str(by) && !strcmp(json_string_value(by->j), "value");
    size_t n = json_object_size(x->j), i = 0;
    r->work -= (long)n;
    kv *v = sl_xmalloc((n ? n : 1) * sizeof *v);
    const char *k;
    json_t *val;
    json_object_foreach(x->j, k, val) {
        json_t *pair = sl_jx_pair(k, strlen(k), val);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        v[i].item = pair;
        v[i].key = sort_key(byval ? val : json_array_get(pair, 0), cs);
        i++;
    }
    int rc = sl_jx_sort_items(r, e, v, n, bool_arg(sl_jx_arg(a, 2, "reverse"), false));
    json_t *res = json_array();
    for (i = 0; i < n; i++) {
        json_array_append_new(res, v[i].item);
        jdecref(v[i].key);
    }
    free(v);
    if (rc < 0) {
        jdecref(res);
        return rc == -2 ? -1 : sl_jx_err(r, e, SL_EINVAL, "the values do not compare");
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(sum)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    jv *at = sl_jx_arg(a, 0, "attribute");
    jv *st = sl_jx_arg(a, 1, "start");
    /* the running sum stays a C number (int until a float or an overflow,
     * as Python's would) and becomes a value once, at the end */
    long long ia = 0;
    double da = 0;
    int ta = 1;
    if (st && !(ta = sl_jx_num_of(st, &ia, &da))) {
        jdecref(items);
        return sl_jx_err(r, e, SL_EINVAL, "unsupported operand type(s) for +: '%s' and '%s'",
                         sl_jx_py_type(st), "int");
    }
    int rc = 0;
    for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
        json_t *it = attr_of(json_array_get(items, i), at);
        long long ib;
        double db;
        jv iv = {.k = K_JSON, .j = it};
        int tb = it ? sl_jx_num_of(&iv, &ib, &db) : 0;
        if (!tb) {
            rc = sl_jx_err(r, e, SL_EINVAL, "unsupported operand type(s) for +: '%s' and '%s'",
                           ta == 1 ? "int" : "float", it ? sl_jx_py_type(&iv) : "Undefined");
            break;
        }
        long long s;
        if (ta == 1 && tb == 1 && !__builtin_add_overflow(ia, ib, &s)) {
            ia = s;
            da = (double)s;
        } else {
            da = (ta == 1 ? (double)ia : da) + db;
            ta = 2;
            if (!isfinite(da))
                rc = sl_jx_err(r, e, SL_EINVAL, "the result is not a finite number");
        }
    }
    bool none = json_array_size(items) == 0;
    jdecref(items);
    if (rc)
        return -1;
    if (none && st)
        *out = sl_jx_copy(st);
    else
        *out = sl_jx_json(ta == 1 ? sl_jx_int(ia) : json_real(da));
    return 0;
}

FILTER(trim)
{
    (void)r, (void)e;
    jv *c = sl_jx_arg(a, 0, "chars");
    text t, ct;
    text_of(x, &t);
    bool have = c && c->k == K_JSON && !json_is_null(c->j);
    if (have)
        text_of(c, &ct);
    size_t b, en;
    sl_jx_strip(t.s, t.n, have ? ct.s : NULL, have ? ct.n : 0, 3, &b, &en);
    *out = jstr(t.s + b, en - b);
    text_done(&t);
    if (have)
        text_done(&ct);
    return 0;
}

FILTER(truncate)
{
    long long length;
    if (int_param(r, e, sl_jx_arg(a, 0, "length"), "length", 255, &length) < 0)
        return -1;
    bool kill = bool_arg(sl_jx_arg(a, 1, "killwords"), false);
    jv *endv = sl_jx_arg(a, 2, "end");
    jv *lw = sl_jx_arg(a, 3, "leeway");
    long long leeway = lw && lw->k == K_JSON && !json_is_null(lw->j) ? int_arg(lw, 5) : 5;
    text t, et;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6); /* counted whole, kept in part */
    if (endv) {
        text_of(endv, &et);
    } else {
        et.s = "...";
        et.n = 3;
        sl_buf_init(&et.b, 0);
    }
    long long elen = (long long)sl_jx_ulen(et.s, et.n), tlen = (long long)sl_jx_ulen(t.s, t.n);
    int rc = 0;
    if (length < elen || leeway < 0) {
        rc = sl_jx_err(r, e, SL_EINVAL, "expected length >= %lld and leeway >= 0", elen);
    } else if (tlen <= length || tlen - length <= leeway) {
        *out = x->k == K_JSON && json_is_string(x->j) ? sl_jx_copy(x) : jstr(t.s, t.n);
    } else {
        size_t cut = sl_jx_uoff(t.s, t.n, (size_t)(length - elen));
        STACKBUF(b, 0);
        if (kill) {
            sl_buf_add(&b, t.s, cut);
        } else {
            size_t k = cut;
            while (k > 0 && t.s[k - 1] != ' ')
                k--;
            sl_buf_add(&b, t.s, k ? k - 1 : cut);
        }
        sl_buf_add(&b, et.s, et.n);
        *out = jbuf(&b);
    }
    text_done(&t);
    text_done(&et);
    return rc;
}

FILTER(wordcount)
{
    (void)e, (void)a;
    text t;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6);
    long long n = 0;
    bool in = false;
    for (size_t i = 0; i < t.n;) {
        size_t l;
        unsigned long c = utf8_dec(t.s + i, t.n - i, &l);
        bool w = c < 0x80 ? (isalnum((int)c) || c == '_') : (sl_jx_cp_alpha(c) || !sl_jx_cp_space(c));
        if (w && !in)
            n++;
        in = w;
        i += l;
    }
    text_done(&t);
    *out = sl_jx_json(sl_jx_int(n));
    return 0;
}

FILTER(tojson)
{
    if (x->k == K_UNDEF)
        return sl_jx_err(r, e, SL_EINVAL, "Object of type Undefined is not JSON serializable");
    (void)r, (void)e;
    jv *ind = sl_jx_arg(a, 0, "indent");
    int indent = ind && ind->k == K_JSON && json_is_integer(ind->j) ? (int)int_arg(ind, -1) : -1;
    if (indent > 100)
        indent = 100;
    json_t *j = sl_jx_to_json(x);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    sl_jx_tojson(j, indent, &b);
    jdecref(j);
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the JSON is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

static void url_quote(const char *s, size_t n, const char *safe, bool plus, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' || (c && strchr(safe, c)))
            sl_buf_addc(b, (char)c);
        else if (c == ' ' && plus)
            sl_buf_addc(b, '+');
        else
            sl_buf_addf(b, "%%%02X", c);
    }
}

FILTER(urlencode)
{
    (void)r, (void)e, (void)a;
    STACKBUF(b, 0);
    if (x->k == K_JSON && (json_is_object(x->j) || json_is_array(x->j))) {
        bool first = true;
        if (json_is_object(x->j)) {
            const char *k;
            json_t *v;
            json_object_foreach(x->j, k, v) {
                if (!first)
                    sl_buf_addc(&b, '&');
                first = false;
                url_quote(k, strlen(k), "", true, &b);
                sl_buf_addc(&b, '=');
                STACKBUF(s, 0);
                sl_jx_py_str(v, &s);
                url_quote(s.data ? s.data : "", s.len, "", true, &b);
                sl_buf_release(&s);
            }
        } else {
            for (size_t i = 0; i < json_array_size(x->j); i++) {
                json_t *p = json_array_get(x->j, i);
                if (!first)
                    sl_buf_addc(&b, '&');
                first = false;
                for (int k = 0; k < 2; k++) {
                    if (k)
                        sl_buf_addc(&b, '=');
                    STACKBUF(s, 0);
                    sl_jx_py_str(json_array_get(p, (size_t)k) ? json_array_get(p, (size_t)k)
                                                              : json_null(),
                                 &s);
                    url_quote(s.data ? s.data : "", s.len, "", true, &b);
                    sl_buf_release(&s);
                }
            }
        }
    } else {
        text t;
        text_of(x, &t);
        url_quote(t.s, t.n, "/", false, &b);
        text_done(&t);
    }
    *out = jbuf(&b);
    return 0;
}

FILTER(striptags)
{
    (void)e, (void)a;
    text t;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6);
    STACKBUF(b, 0);
    /* once a search for the end of a comment or tag failed, it fails from
     * every later place too: not searching again keeps this linear */
    bool no_cend = false, no_gt = false;
    for (size_t i = 0; i < t.n;) {
        if (!no_cend && i + 3 < t.n && !memcmp(t.s + i, "<!--", 4)) {
            const char *q = memmem(t.s + i + 4, t.n - i - 4, "-->", 3);
            if (q) {
                i = (size_t)(q - t.s) + 3;
                continue;
            }
            no_cend = true;
        }
        if (!no_gt && t.s[i] == '<') {
            const char *q = memchr(t.s + i + 1, '>', t.n - i - 1);
            if (q) {
                i = (size_t)(q - t.s) + 1;
                continue;
            }
            no_gt = true;
        }
        sl_buf_addc(&b, t.s[i++]);
    }
    text_done(&t);
    /* collapse whitespace, then unescape the common entities */
    STACKBUF(c, 0);
    const char *s = b.data ? b.data : "";
    for (size_t i = 0; i < b.len;) {
        if (isspace((unsigned char)s[i])) {
            while (i < b.len && isspace((unsigned char)s[i]))
                i++;
            if (c.len && i < b.len)
                sl_buf_addc(&c, ' ');
            continue;
        }
        static const char *const ent[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
                                             {"&quot;", "\""}, {"&#39;", "'"}, {"&#34;", "\""},
                                             {"&nbsp;", "\xc2\xa0"}};
        bool hit = false;
        for (size_t k = 0; k < sizeof ent / sizeof ent[0] && !hit; k++) {
            size_t l = strlen(ent[k][0]);
            if (i + l <= b.len && !memcmp(s + i, ent[k][0], l)) {
                sl_buf_adds(&c, ent[k][1]);
                i += l;
                hit = true;
            }
        }
        if (!hit)
            sl_buf_addc(&c, s[i++]);
    }
    sl_buf_release(&b);
    *out = jbuf(&c);
    return 0;
}

FILTER(indent)
{
    (void)r, (void)e;
    jv *w = sl_jx_arg(a, 0, "width");
    bool first = bool_arg(sl_jx_arg(a, 1, "first"), false),
         blank = bool_arg(sl_jx_arg(a, 2, "blank"), false);
    STACKBUF(ind, 0);
    if (is_str(w)) {
        sl_buf_add(&ind, json_string_value(w->j), json_string_length(w->j));
    } else {
        long long n = int_arg(w, 4);
        for (long long i = 0; i < n && i < 10000; i++)
            sl_buf_addc(&ind, ' ');
    }
    const char *is = ind.data ? ind.data : "";
    text t0;
    text_of(x, &t0);
    /* Jinja2 splits s + "\n" into lines (str.splitlines) */
    STACKBUF(tb, r->lim.max_output_chars * 4 + 16);
    sl_buf_add(&tb, t0.s, t0.n);
    sl_buf_addc(&tb, '\n');
    text_done(&t0);
    text t = {.s = tb.data, .n = tb.len};
    sl_buf_init(&t.b, 0);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    if (first)
        sl_buf_add(&b, is, ind.len);
    size_t i = 0;
    bool firstline = true;
    while (i < t.n) {
        size_t j = i;
        while (j < t.n && !strchr("\n\r\v\f\x1c\x1d\x1e", t.s[j]))
            j++;
        if (!firstline) {
            sl_buf_addc(&b, '\n');
            if (j > i || blank)
                sl_buf_add(&b, is, ind.len);
        }
        sl_buf_add(&b, t.s + i, j - i);
        firstline = false;
        if (j < t.n && t.s[j] == '\r' && j + 1 < t.n && t.s[j + 1] == '\n')
            j++;
        i = j + 1;
    }
    text_done(&t);
    sl_buf_release(&tb);
    sl_buf_release(&ind);
    *out = jbuf(&b);
    return 0;
}

FILTER(format)
{
    text t;
    text_of(x, &t);
    int rc;
    if (!a->nkw && a->n == 1 &&
        !(a->pos[0].k == K_JSON && (json_is_array(a->pos[0].j) || json_is_object(a->pos[0].j)))) {
        /* s % (x,) is s % x for a single value that is not a list or dict */
        rc = sl_jx_py_percent(r, e, t.s, &a->pos[0], out);
    } else if (a->nkw) {
        json_t *o = json_object();
        for (int k = 0; k < a->nkw; k++)
            json_object_set_new(o, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        jv d = sl_jx_json(o);
        rc = sl_jx_py_percent(r, e, t.s, &d, out);
        sl_jx_free(&d);
    } else {
        json_t *l = json_array();
        for (int i = 0; i < a->n; i++)
            json_array_append_new(l, sl_jx_to_json(&a->pos[i]));
        jv d = sl_jx_json(l);
        rc = sl_jx_py_percent(r, e, t.s, &d, out);
        sl_jx_free(&d);
    }
    text_done(&t);
    return rc;
}

static int chunks(jrender *r, const jnode *e, jv *x, jargs *a, bool batch, jv *out)
{
    long long n = int_arg(sl_jx_arg(a, 0, batch ? "linecount" : "slices"), 0);
    jv *fill = sl_jx_arg(a, 1, "fill_with");
    if (fill && fill->k == K_JSON && json_is_null(fill->j))
        fill = NULL;
    if (n <= 0)
        return sl_jx_err(r, e, SL_EINVAL, "%s needs a positive count", batch ? "batch" : "slice");
    if (batch && fill && n > JINJA_MAX_ITEMS)
        return sl_jx_err(r, e, SL_ELIMIT,
                         "batch(%lld) with a fill value would make lists of more "
                         "than %d items (sluice's cap on lists a template builds)",
                         n, JINJA_MAX_ITEMS);
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t len = json_array_size(items);
    json_t *res = json_array();
    if (batch) {
        json_t *cur = NULL;
        for (size_t i = 0; i < len; i++) {
            if (!cur)
                cur = json_array();
            json_array_append(cur, json_array_get(items, i));
            if ((long long)json_array_size(cur) == n) {
                json_array_append_new(res, cur);
                cur = NULL;
            }
        }
        if (cur) {
            while (fill && (long long)json_array_size(cur) < n)
                json_array_append_new(cur, sl_jx_to_json(fill));
            json_array_append_new(res, cur);
        }
    } else if (n <= 100000) {
        size_t per = len / (size_t)n, extra = len % (size_t)n, offset = 0;
        for (size_t s = 0; s < (size_t)n; s++) {
            size_t start = offset + s * per;
            if (s < extra)
                offset++;
            size_t end = offset + (s + 1) * per;
            json_t *cur = json_array();
            for (size_t i = start; i < end && i < len; i++)
                json_array_append(cur, json_array_get(items, i));
            if (fill && s >= extra)
                json_array_append_new(cur, sl_jx_to_json(fill));
            json_array_append_new(res, cur);
        }
    }
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

FILTER(batch) { return chunks(r, e, x, a, true, out); }
FILTER(slice) { return chunks(r, e, x, a, false, out); }

/* groupby(attribute, default=None, case_sensitive=False): (grouper, list)
 * tuples sorted by the grouper */
FILTER(groupby)
{
    jv *at = sl_jx_arg(a, 0, "attribute"), *dflt = sl_jx_arg(a, 1, "default");
    bool cs = bool_arg(sl_jx_arg(a, 2, "case_sensitive"), false);
    if (!at)
        return sl_jx_err(r, e, SL_EINVAL, "groupby needs the attribute to group by");
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    kv *v = sl_xmalloc((n ? n : 1) * sizeof *v);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        v[i].item = json_array_get(items, i);
        json_t *k = attr_of(v[i].item, at);
        if (!k && dflt)
            k = sl_jx_to_json(dflt), json_decref(k); /* borrowed from the argument */
        if (!k) {
            for (size_t j = 0; j < i; j++)
                jdecref(v[j].key);
            free(v);
            jdecref(items);
            return sl_jx_err(r, e, SL_EINVAL, "an item has no attribute '%s' to group by",
                             is_str(at) ? json_string_value(at->j) : "?");
        }
        v[i].key = sort_key(k, cs);
    }
    rc = sl_jx_sort_items(r, e, v, n, false);
    if (rc < 0) {
        sl_jx_keyed_free(v, n);
        jdecref(items);
        if (rc == -2)
            return -1;
        if (sl_jx_too_deep) {
            *out = sl_jx_json(json_array());
            return 0;
        }
        return sl_jx_err(r, e, SL_EINVAL, "the group keys do not compare");
    }
    json_t *res = json_array();
    for (size_t i = 0; i < n;) {
        size_t j = i;
        json_t *list = json_array();
        while (j < n && sl_jx_py_eq(v[j].key, v[i].key))
            json_array_append(list, v[j++].item);
        json_t *g = attr_of(v[i].item, at);
        json_t *grp = json_array();
        json_array_append(grp, cs || !g ? v[i].key : g);
        json_array_append_new(grp, list);
        sl_jx_mark_tuple(r, grp, TUP_GROUP);
        json_array_append_new(res, grp);
        i = j;
    }
    sl_jx_keyed_free(v, n);
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

/* filesizeformat(value, binary=False) */
FILTER(filesizeformat)
{
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    if (!t && is_str(x)) {
        char *end;
        d = strtod(json_string_value(x->j), &end);
        t = *end ? 0 : 2;
    }
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "filesizeformat needs a number, not '%s'",
                         sl_jx_py_type(x));
    if (!isfinite(d) || fabs(d) >= 9e18)
        return sl_jx_err(r, e, SL_EINVAL, "filesizeformat: %g bytes is out of range", d);
    bool binary = bool_arg(sl_jx_arg(a, 0, "binary"), false);
    double base = binary ? 1024 : 1000;
    static const char *const dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    char buf[64];
    if (d == 1) {
        snprintf(buf, sizeof buf, "1 Byte");
    } else if (d < base) {
        snprintf(buf, sizeof buf, "%lld Bytes", (long long)d);
    } else {
        int k = 0;
        double unit = base * base;
        for (k = 0; k < 7 && d >= unit; k++)
            unit *= base;
        snprintf(buf, sizeof buf, "%.1f %s", base * d / unit, binary ? bin[k] : dec[k]);
    }
    *out = jstr(buf, strlen(buf));
    return 0;
}

/* wordwrap(width=79, break_long_words=True, wrapstring=None,
 * break_on_hyphens=True): Python's textwrap.wrap on each line of the text
 * (expand_tabs and replace_whitespace off, as Jinja2 calls it), lines
 * joined by the wrapstring */
typedef struct {
    const char *s;
    size_t n, len; /* bytes, characters */
    bool space;
} chunk;

/* textwrap's character classes on code points: \w, letters ([^\d\W]) and
 * the punctuation its em-dash rule accepts */
static bool ww_space(unsigned long c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
static bool ww_letter(unsigned long c)
{
    return c < 0x80 ? (isalpha((int)c) || c == '_') : sl_jx_cp_alpha(c);
}
static bool ww_word(unsigned long c) { return ww_letter(c) || (c < 0x80 && isdigit((int)c)); }
static bool ww_punct(unsigned long c) { return ww_word(c) || (c && c < 0x80 && strchr("!\"'&.,?", (int)c)); }

/* the code point at byte i (0 past the end), and where the one before i starts */
static unsigned long ww_at(const char *s, size_t n, size_t i)
{
    size_t l;
    return i < n ? utf8_dec(s + i, n - i, &l) : 0;
}
static size_t ww_prev(const char *s, size_t i)
{
    while (i > 0 && ((unsigned char)s[--i] & 0xC0) == 0x80)
        ;
    return i;
}
static size_t ww_next(const char *s, size_t n, size_t i)
{
    size_t l;
    if (i >= n)
        return n;
    utf8_dec(s + i, n - i, &l);
    return i + l;
}

/* The end (byte) of the chunk starting at i: textwrap's wordsep_re
 * (hyphenated words split after the hyphen, em-dashes apart) or, without
 * break_on_hyphens, runs of space and of the rest. */
static size_t ww_chunk_end(const char *s, size_t n, size_t i, bool hyph)
{
    size_t j = i;
    if (ww_space(ww_at(s, n, i))) {
        while (j < n && ww_space(ww_at(s, n, j)))
            j = ww_next(s, n, j);
        return j;
    }
    if (!hyph) {
        while (j < n && !ww_space(ww_at(s, n, j)))
            j = ww_next(s, n, j);
        return j;
    }
    /* an em-dash between words: (?<=wp) -{2,} (?=\w) */
    if (s[i] == '-' && i + 1 < n && s[i + 1] == '-' && i > 0 &&
        ww_punct(ww_at(s, n, ww_prev(s, i)))) {
        size_t k = i;
        while (k < n && s[k] == '-')
            k++;
        if (k < n && ww_word(ww_at(s, n, k)))
            return k;
    }
    /* a word: the shortest run of non-space that ends at a hyphen between
     * letters, before space or the end, or before an em-dash */
    for (j = ww_next(s, n, i);; j = ww_next(s, n, j)) {
        if (j >= n || ww_space(ww_at(s, n, j)))
            return j;
        if (s[j] == '-') {
            size_t p1 = ww_prev(s, j), p2 = p1 > 0 ? ww_prev(s, p1) : 0,
                   p3 = p2 > 0 ? ww_prev(s, p2) : 0;
            bool before = (p1 > 0 && ww_letter(ww_at(s, n, p1)) && ww_letter(ww_at(s, n, p2))) ||
                          (p2 > 0 && ww_letter(ww_at(s, n, p1)) && s[p2] == '-' &&
                           ww_letter(ww_at(s, n, p3)));
            size_t a1 = j + 1, a2 = ww_next(s, n, a1), a3 = ww_next(s, n, a2);
            bool after = ww_letter(ww_at(s, n, a1)) &&
                         (ww_letter(ww_at(s, n, a2)) ||
                          (a2 < n && s[a2] == '-' && ww_letter(ww_at(s, n, a3))));
            if (before && after)
                return j + 1;
            if (j + 1 < n && s[j + 1] == '-' && ww_punct(ww_at(s, n, p1))) {
                size_t k = j;
                while (k < n && s[k] == '-')
                    k++;
                if (k < n && ww_word(ww_at(s, n, k)))
                    return j;
            }
        }
    }
}

/* textwrap.TextWrapper(width, expand_tabs=False, replace_whitespace=False,
 * break_long_words, break_on_hyphens).wrap(line), lines joined by sep */
static void wrap_line(const char *s, size_t n, size_t width, bool brk, bool hyph, const text *sep,
                      sl_buf *b)
{
    size_t nc = 0, ac = 16;
    chunk *c = sl_xmalloc(ac * sizeof *c);
    for (size_t i = 0; i < n;) {
        size_t j = ww_chunk_end(s, n, i, hyph);
        if (nc == ac) {
            ac *= 2;
            c = sl_xrealloc(c, ac * sizeof *c);
        }
        c[nc++] = (chunk){.s = s + i, .n = j - i, .len = sl_jx_ulen(s + i, j - i),
                          .space = ww_space(ww_at(s, n, i))};
        i = j;
    }
    /* one output line at a time: pieces are (pointer, bytes, characters) */
    size_t ap = 16, np;
    chunk *line = sl_xmalloc(ap * sizeof *line);
    size_t k = 0;
    bool lines = false;
    while (k < nc) {
        np = 0;
        size_t cur = 0;
        if (c[k].space && lines)
            k++;
        while (k < nc && cur + c[k].len <= width) {
            if (np == ap) {
                ap *= 2;
                line = sl_xrealloc(line, ap * sizeof *line);
            }
            line[np++] = c[k];
            cur += c[k++].len;
        }
        if (k < nc && c[k].len > width) {
            /* a chunk too long for any line */
            size_t left = width - cur; /* may be 0 */
            if (brk) {
                size_t end = left;
                if (hyph && c[k].len > left) {
                    /* rfind('-', 0, left), counted in characters */
                    size_t lim = sl_jx_uoff(c[k].s, c[k].n, left), h = lim;
                    while (h > 0 && c[k].s[h - 1] != '-')
                        h--;
                    if (h > 0) {
                        size_t hpos = h - 1; /* byte index of the hyphen */
                        bool other = false;
                        for (size_t q = 0; q < hpos; q++)
                            other |= c[k].s[q] != '-';
                        if (hpos > 0 && other)
                            end = sl_jx_ulen(c[k].s, hpos) + 1;
                    }
                }
                size_t off = sl_jx_uoff(c[k].s, c[k].n, end);
                if (np == ap) {
                    ap *= 2;
                    line = sl_xrealloc(line, ap * sizeof *line);
                }
                line[np++] = (chunk){.s = c[k].s, .n = off, .len = end, .space = c[k].space};
                c[k].s += off;
                c[k].n -= off;
                c[k].len -= end;
            } else if (!np) {
                line[np++] = c[k++];
            }
        }
        /* a last piece that is whitespace (or empty) is dropped */
        if (np && (line[np - 1].space || !line[np - 1].n))
            np--;
        if (np) {
            if (lines)
                sl_buf_add(b, sep->s, sep->n);
            for (size_t q = 0; q < np; q++)
                sl_buf_add(b, line[q].s, line[q].n);
            lines = true;
        }
    }
    free(line);
    free(c);
}

FILTER(wordwrap)
{
    long long width;
    if (int_param(r, e, sl_jx_arg(a, 0, "width"), "width", 79, &width) < 0)
        return -1;
    bool brk = bool_arg(sl_jx_arg(a, 1, "break_long_words"), true);
    jv *ws = sl_jx_arg(a, 2, "wrapstring");
    bool hyph = bool_arg(sl_jx_arg(a, 3, "break_on_hyphens"), true);
    if (width <= 0)
        return sl_jx_err(r, e, SL_EINVAL, "invalid width %lld (must be > 0)", width);
    text t, sep;
    text_of(x, &t);
    if (ws && !(ws->k == K_JSON && json_is_null(ws->j))) {
        text_of(ws, &sep);
    } else {
        sep.s = "\n";
        sep.n = 1;
        sl_buf_init(&sep.b, 0);
    }
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    /* str.splitlines: a final line break ends the last line, it does not
     * start another */
    bool firstline = true;
    for (size_t i = 0; i < t.n;) {
        size_t j = i;
        while (j < t.n && !strchr("\n\r\v\f\x1c\x1d\x1e", t.s[j]))
            j++;
        if (!firstline)
            sl_buf_add(&b, sep.s, sep.n);
        firstline = false;
        wrap_line(t.s + i, j - i, (size_t)width, brk, hyph, &sep, &b);
        if (j < t.n && t.s[j] == '\r' && j + 1 < t.n && t.s[j + 1] == '\n')
            j++;
        i = j + 1;
    }
    text_done(&t);
    text_done(&sep);
    *out = jbuf(&b);
    return 0;
}

FILTER(pprint)
{
    (void)a;
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    if (x->k == K_JSON)
        sl_jx_pformat(r, x->j, &b);
    else
        sl_jx_str(x, &b);
    if (r->halted) {
        sl_buf_release(&b);
        return -1;
    }
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the printed value is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

/* xmlattr(d, autospace=True): ' key="value"' for each item that is not
 * None or undefined; keys with spaces, /, >, = are refused (Jinja2 3.1.3+
 * refuses those too; 3.1.2 let them through unescaped) */
FILTER(xmlattr)
{
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "xmlattr needs a dict, not '%s'", sl_jx_py_type(x));
    bool autospace = bool_arg(sl_jx_arg(a, 0, "autospace"), true);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    const char *k;
    json_t *v;
    bool first = true;
    json_object_foreach(x->j, k, v) {
        if (json_is_null(v))
            continue;
        if (strpbrk(k, " /\t\n\f>=")) {
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "invalid character in attribute name: '%s'", k);
        }
        if (!first || autospace)
            sl_buf_addc(&b, ' ');
        first = false;
        html_escape(k, strlen(k), &b);
        sl_buf_adds(&b, "=\"");
        STACKBUF(t, 0);
        sl_jx_py_str(v, &t);
        html_escape(t.data ? t.data : "", t.len, &b);
        sl_buf_release(&t);
        sl_buf_addc(&b, '"');
    }
    *out = jbuf(&b);
    return 0;
}

/* random(seq): one item, or undefined when there is none (Jinja2) */
FILTER(random)
{
    (void)a;
    static _Thread_local uint64_t state;
    if (!state)
        state = ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)&state ^ 0x9E3779B97F4A7C15ULL;
    state ^= state << 13; /* xorshift64 */
    state ^= state >> 7;
    state ^= state << 17;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    *out = n ? sl_jx_json(json_incref(json_array_get(items, (size_t)(state % n))))
             : sl_jx_undef("random");
    jdecref(items);
    return 0;
}

/* Each filter with the parameters Jinja2 3.1 gives it after the value
 * ("*": any); eval_filter refuses other keyword arguments and extra
 * positional ones, as Python's call would. */
static const jfilter filters[] = {
    {"abs", f_abs, ""},
    {"attr", f_attr, "name"},
    {"batch", f_batch, "linecount,fill_with"},
    {"capitalize", f_capitalize, ""},
    {"center", sl_jx_str_center, "width"},
    {"count", f_length, ""},
    {"d", f_default, "default_value,boolean"},
    {"default", f_default, "default_value,boolean"},
    {"dictsort", f_dictsort, "case_sensitive,by,reverse"},
    {"e", f_escape, ""},
    {"escape", f_escape, ""},
    {"filesizeformat", f_filesizeformat, "binary"},
    {"first", f_first, ""},
    {"float", f_float, "default"},
    {"forceescape", f_escape, ""},
    {"format", f_format, "*"},
    {"groupby", f_groupby, "attribute,default,case_sensitive"},
    {"indent", f_indent, "width,first,blank"},
    {"int", f_int, "default,base"},
    {"items", sl_jx_dict_items, ""},
    {"join", f_join, "d,attribute"},
    {"last", f_last, ""},
    {"length", f_length, ""},
    {"list", f_list, ""},
    {"lower", f_lower, ""},
    {"map", f_map, "*"},
    {"max", f_max, "case_sensitive,attribute"},
    {"min", f_min, "case_sensitive,attribute"},
    {"pprint", f_pprint, ""},
    {"random", f_random, ""},
    {"reject", f_reject, "*"},
    {"rejectattr", f_rejectattr, "*"},
    {"replace", sl_jx_str_replace, "old,new,count"},
    {"reverse", f_reverse, ""},
    {"round", f_round, "precision,method"},
    {"safe", f_safe, ""},
    {"select", f_select, "*"},
    {"selectattr", f_selectattr, "*"},
    {"slice", f_slice, "slices,fill_with"},
    {"sort", f_sort, "reverse,case_sensitive,attribute"},
    {"string", f_string, ""},
    {"striptags", f_striptags, ""},
    {"sum", f_sum, "attribute,start"},
    {"title", f_title, ""},
    {"tojson", f_tojson, "indent"},
    {"trim", f_trim, "chars"},
    {"truncate", f_truncate, "length,killwords,end,leeway"},
    {"unique", f_unique, "case_sensitive,attribute"},
    {"upper", f_upper, ""},
    {"urlencode", f_urlencode, ""},
    {"wordcount", f_wordcount, ""},
    {"wordwrap", f_wordwrap, "width,break_long_words,wrapstring,break_on_hyphens"},
    {"xmlattr", f_xmlattr, "autospace"},
};

bool sl_jx_filter_args_ok(const jfilter *fl, int n, const char *const *kwn, int nkw)
{
    jargs a = {.n = n, .nkw = nkw, .kwn = (const char **)kwn};
    return sl_jx_check_filter_args(NULL, NULL, fl, &a) == 0;
}

/* -1 with an error when the call does not fit the filter's parameters
 * (r NULL: only say whether) */
int sl_jx_check_filter_args(jrender *r, const jnode *e, const jfilter *fl, const jargs *a)
{
    const char *ps = fl->params;
    if (!ps || !strcmp(ps, "*") || (!a->nkw && !a->n))
        return 0;
    int np = *ps ? 1 : 0;
    for (const char *q = ps; *q; q++)
        np += *q == ',';
    if (a->n > np)
        return !r ? -1
                  : sl_jx_err(r, e, SL_EINVAL,
                              "%s() takes at most %d argument%s after the value (%d given)",
                              fl->name, np, np == 1 ? "" : "s", a->n);
    for (int k = 0; k < a->nkw; k++) {
        const char *kw = a->kwn[k];
        size_t kl = strlen(kw);
        int idx = 0;
        const char *q = ps;
        bool found = false;
        while (*q) {
            const char *c = strchr(q, ',');
            size_t l = c ? (size_t)(c - q) : strlen(q);
            if (l == kl && !memcmp(q, kw, l)) {
                found = true;
                break;
            }
            idx++;
            if (!c)
                break;
            q = c + 1;
        }
        if (!found)
            return !r ? -1
                      : sl_jx_err(r, e, SL_EINVAL,
                                  "%s() got an unexpected keyword argument '%s' (it takes %s)",
                                  fl->name, kw, *ps ? ps : "no arguments");
        if (idx < a->n)
            return !r ? -1
                      : sl_jx_err(r, e, SL_EINVAL, "%s() got multiple values for argument '%s'",
                                  fl->name, kw);
    }
    return 0;
}

const jfilter *sl_jx_find_filter(const char *name)
{
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
        if (!strcmp(filters[i].name, name))
            return &filters[i];
    return NULL;
}
