/*
 * jinja_methods — the methods of list and dict that templates call
 * (xs.append(1), d.items(), d.get('k')), and the dispatch of any method
 * call by the value's type (str's methods are in jinja_str.c).
 */
#include <string.h>

#include "tmpl/jinja_ev.h"

/* ---- methods of list and dict ---- */

/* Python's index rules for insert/pop: negative from the end */
static long long py_index(long long i, long long n, bool clamp)
{
    if (i < 0)
        i += n;
    if (clamp)
        i = i < 0 ? 0 : i > n ? n : i;
    return i;
}

static int nargs(jrender *r, const jnode *e, const char *m, jargs *a, int lo, int hi)
{
    if (a->nkw)
        return sl_jx_err(r, e, SL_EINVAL, "%s() takes no keyword arguments", m);
    if (a->n < lo || a->n > hi)
        return sl_jx_err(r, e, SL_EINVAL, "%s() takes %s %d argument%s (%d given)", m,
                         lo == hi    ? "exactly"
                         : a->n < lo ? "at least"
                                     : "at most",
                         a->n < lo ? lo : hi, (a->n < lo ? lo : hi) == 1 ? "" : "s", a->n);
    return 0;
}


/* list and dict methods that change the value in place (the template's
 * render works on a copy of its context: see t->mutates) */
static int mutate(jrender *r, const jnode *e, json_t *j, const char *m, jargs *a, jv *out)
{
    *out = sl_jx_json(json_null());
    if (json_is_array(j)) {
        long long n = (long long)json_array_size(j);
        if (strcmp(m, "append") && strcmp(m, "pop"))
            r->work -= (long)n; /* the rest walk or move every item */
        else if (!strcmp(m, "pop") && a->n)
            r->work -= (long)(n >> 3); /* pop(i) moves the items after i */
        if ((!strcmp(m, "append") || !strcmp(m, "insert")) && n >= JINJA_MAX_ITEMS)
            return sl_jx_err(r, e, SL_ELIMIT,
                             "the list would have more than %d items (sluice's cap on "
                             "lists a template builds)",
                             JINJA_MAX_ITEMS);
        if (!strcmp(m, "append")) {
            if (nargs(r, e, m, a, 1, 1) < 0 || sl_jx_check_insert(r, e, j, &a->pos[0]) < 0)
                return -1;
            json_array_append_new(j, sl_jx_to_json(&a->pos[0]));
            return 0;
        }
        if (!strcmp(m, "extend")) {
            json_t *items;
            if (nargs(r, e, m, a, 1, 1) < 0 || sl_jx_items(r, e, &a->pos[0], &items) < 0)
                return -1;
            if ((size_t)n + json_array_size(items) > JINJA_MAX_ITEMS) {
                jdecref(items);
                return sl_jx_err(r, e, SL_ELIMIT,
                                 "the list would have more than %d items (sluice's "
                                 "cap on lists a template builds)",
                                 JINJA_MAX_ITEMS);
            }
            for (size_t i = 0; i < json_array_size(items); i++) {
                jv x = {.k = K_JSON, .j = json_array_get(items, i)};
                if (sl_jx_check_insert(r, e, j, &x) < 0) {
                    jdecref(items);
                    return -1;
                }
            }
            if (items == j) { /* xs.extend(xs) */
                json_t *c = json_copy(items);
                jdecref(items);
                items = c;
            }
            json_array_extend(j, items);
            jdecref(items);
            return 0;
        }
        if (!strcmp(m, "insert")) {
            long long i;
            if (nargs(r, e, m, a, 2, 2) < 0)
                return -1;
            if (sl_jx_num_of(&a->pos[0], &i, &(double){0}) != 1)
                return sl_jx_err(r, e, SL_EINVAL, "insert() needs an integer index");
            if (sl_jx_check_insert(r, e, j, &a->pos[1]) < 0)
                return -1;
            json_array_insert_new(j, (size_t)py_index(i, n, true), sl_jx_to_json(&a->pos[1]));
            return 0;
        }
        if (!strcmp(m, "pop")) {
            long long i = -1;
            if (nargs(r, e, m, a, 0, 1) < 0)
                return -1;
            if (a->n && sl_jx_num_of(&a->pos[0], &i, &(double){0}) != 1)
                return sl_jx_err(r, e, SL_EINVAL, "pop() needs an integer index");
            if (!n)
                return sl_jx_err(r, e, SL_EINVAL, "pop from empty list");
            i = py_index(i, n, false);
            if (i < 0 || i >= n)
                return sl_jx_err(r, e, SL_EINVAL, "pop index out of range");
            json_t *x = json_incref(json_array_get(j, (size_t)i));
            json_array_remove(j, (size_t)i);
            *out = sl_jx_json(x);
            return 0;
        }
        if (!strcmp(m, "remove")) {
            if (nargs(r, e, m, a, 1, 1) < 0)
                return -1;
            for (long long i = 0; i < n; i++) {
                jv it = {.k = K_JSON, .j = json_array_get(j, (size_t)i)};
                if (sl_jx_eq(&it, &a->pos[0])) {
                    json_t *x = json_incref(it.j);
                    json_array_remove(j, (size_t)i);
                    jdecref(x);
                    return 0;
                }
            }
            return sl_jx_err(r, e, SL_EINVAL, "list.remove(x): x not in list");
        }
        if (!strcmp(m, "clear") || !strcmp(m, "reverse") || !strcmp(m, "sort")) {
            bool rev = false;
            if (m[1] == 'o') {
                if (a->n)
                    return sl_jx_err(r, e, SL_EINVAL, "sort() takes no positional arguments");
                for (int k = 0; k < a->nkw; k++)
                    if (strcmp(a->kwn[k], "reverse"))
                        return sl_jx_err(r, e, SL_EINVAL,
                                         "sort() takes only reverse= in templates "
                                         "(no key functions)");
                rev = bool_arg(sl_jx_arg(a, -1, "reverse"), false);
            } else if (nargs(r, e, m, a, 0, 0) < 0) {
                return -1;
            }
            json_t *old = json_copy(j); /* holds every item while j is emptied */
            while (json_array_size(j))
                json_array_remove(j, json_array_size(j) - 1);
            if (m[0] == 'r') {
                for (size_t i = json_array_size(old); i-- > 0;)
                    json_array_append(j, json_array_get(old, i));
            } else if (m[1] == 'o') {
                size_t k;
                kv *v = sl_jx_keyed(old, NULL, true, &k);
                int rc = sl_jx_sort_items(r, e, v, k, rev);
                for (size_t i = 0; i < k; i++)
                    json_array_append(j, rc < 0 ? json_array_get(old, i) : v[i].item);
                sl_jx_keyed_free(v, k);
                if (rc < 0) {
                    jdecref(old);
                    return rc == -2 ? -1
                           : sl_jx_too_deep
                               ? 0
                               : sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
                }
            }
            jdecref(old);
            return 0;
        }
        if (!strcmp(m, "copy")) {
            if (nargs(r, e, m, a, 0, 0) < 0)
                return -1;
            *out = sl_jx_json(json_copy(j));
            return 0;
        }
        return 1;
    }
    if (!strcmp(m, "update")) {
        json_t *src = NULL;
        if (a->n > 1)
            return sl_jx_err(r, e, SL_EINVAL, "update expected at most 1 argument, got %d", a->n);
        if (a->n == 1 && !(a->pos[0].k == K_JSON && (json_is_object(a->pos[0].j) ||
                                                     json_is_array(a->pos[0].j))))
            return sl_jx_err(r, e, SL_EINVAL, "update() needs a dict or a list of pairs");
        if (a->n == 1)
            src = a->pos[0].j;
        jv whole = {.k = K_JSON, .j = src};
        if (src && sl_jx_check_insert(r, e, j, &whole) < 0)
            return -1;
        for (int k = 0; k < a->nkw; k++)
            if (sl_jx_check_insert(r, e, j, &a->kwv[k]) < 0)
                return -1;
        if (json_is_object(src)) {
            const char *k;
            json_t *v;
            json_object_foreach(src, k, v) sl_jx_obj_set(j, k, json_incref(v));
        } else if (src) {
            for (size_t i = 0; i < json_array_size(src); i++) {
                json_t *pair = json_array_get(src, i);
                if (!json_is_array(pair) || json_array_size(pair) != 2 ||
                    !json_is_string(json_array_get(pair, 0)))
                    return sl_jx_err(r, e, SL_EINVAL,
                                     "update() needs pairs of a string key and a value");
                const json_t *ks = json_array_get(pair, 0);
                if (memchr(json_string_value(ks), 0, json_string_length(ks)))
                    return sl_jx_err(r, e, SL_EINVAL,
                                     "sluice's dict keys cannot hold NUL characters");
                sl_jx_obj_set(j, json_string_value(ks), json_incref(json_array_get(pair, 1)));
            }
        }
        for (int k = 0; k < a->nkw; k++)
            sl_jx_obj_set(j, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        return 0;
    }
    if (!strcmp(m, "pop") || !strcmp(m, "setdefault")) {
        if (nargs(r, e, m, a, 1, 2) < 0)
            return -1;
        if (!is_str(&a->pos[0]))
            return sl_jx_err(r, e, SL_EINVAL, "sluice's dict keys are strings");
        const char *k = json_string_value(a->pos[0].j);
        size_t kl = json_string_length(a->pos[0].j);
        if (memchr(k, 0, kl))
            return sl_jx_err(r, e, SL_EINVAL, "sluice's dict keys cannot hold NUL characters");
        json_t *v = json_object_getn(j, k, kl);
        if (m[0] == 'p') {
            if (!v && a->n < 2)
                return sl_jx_err(r, e, SL_EINVAL, "KeyError: '%s'", k);
            if (!v) {
                *out = sl_jx_copy(&a->pos[1]);
                return 0;
            }
            json_incref(v);
            json_object_deln(j, k, kl);
            sl_jx_free(out);
            *out = sl_jx_json(v);
            return 0;
        }
        if (v) {
            *out = sl_jx_json(json_incref(v));
            return 0;
        }
        jv none = sl_jx_json(json_null());
        jv *d = a->n > 1 ? &a->pos[1] : &none;
        if (sl_jx_check_insert(r, e, j, d) < 0)
            return -1;
        json_object_setn_new(j, k, kl, sl_jx_to_json(d));
        *out = sl_jx_copy(d);
        return 0;
    }
    if (!strcmp(m, "popitem")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        const char *last = NULL;
        size_t ll = 0;
        void *it = json_object_iter(j);
        for (; it; it = json_object_iter_next(j, it)) {
            last = json_object_iter_key(it);
            ll = json_object_iter_key_len(it);
        }
        if (!last)
            return sl_jx_err(r, e, SL_EINVAL, "popitem(): dictionary is empty");
        json_t *v = json_incref(json_object_getn(j, last, ll));
        json_t *pair = sl_jx_pair(last, ll, v);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        json_object_deln(j, last, ll);
        jdecref(v);
        *out = sl_jx_json(pair);
        return 0;
    }
    if (!strcmp(m, "clear")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        json_t *old = json_copy(j);
        json_object_clear(j);
        jdecref(old);
        return 0;
    }
    if (!strcmp(m, "copy")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        *out = sl_jx_json(json_copy(j));
        return 0;
    }
    return 1;
}

int sl_jx_dict_items(jrender *r, const jnode *e, jv *x, jargs *a, jv *out)
{
    (void)a;
    if (x->k == K_UNDEF) {
        *out = sl_jx_json(json_array());
        return 0;
    }
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "can only get item pairs from a mapping, not '%s'",
                         sl_jx_py_type(x));
    json_t *res = json_array();
    const char *k;
    json_t *val;
    json_object_foreach(x->j, k, val) {
        json_t *pair = sl_jx_pair(k, strlen(k), val);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        json_array_append_new(res, pair);
    }
    *out = sl_jx_json(res);
    return 0;
}

int sl_jx_call_method(jrender *r, const jnode *e, jv *self, const char *m, jargs *a, jv *out)
{
    json_t *j = self->k == K_JSON || self->k == K_NS ? self->j : NULL;
    if (self->k == K_JSON && json_is_string(j))
        return sl_jx_str_method(r, e, self, m, a, out);
    if (self->k == K_JSON && (json_is_array(j) || json_is_object(j))) {
        int rc = mutate(r, e, j, m, a, out);
        if (rc <= 0)
            return rc;
        sl_jx_free(out);
    }
    if (json_is_object(j)) {
        if (!strcmp(m, "items")) {
            if (sl_jx_dict_items(r, e, self, a, out) < 0)
                return -1;
            sl_jx_mark_tuple(r, out->j, VIEW_ITEMS);
            return 0;
        }
        if (!strcmp(m, "keys") || !strcmp(m, "values")) {
            json_t *res = json_array();
            const char *k;
            json_t *v;
            json_object_foreach(j, k, v)
                json_array_append_new(res, m[0] == 'k' ? json_string_nocheck(k) : json_incref(v));
            sl_jx_mark_tuple(r, res, m[0] == 'k' ? VIEW_KEYS : VIEW_VALUES);
            *out = sl_jx_json(res);
            return 0;
        }
        if (!strcmp(m, "get")) {
            jv *k = sl_jx_arg(a, 0, NULL), *d = sl_jx_arg(a, 1, "default");
            json_t *v = is_str(k) ? json_object_get(j, json_string_value(k->j)) : NULL;
            *out = v ? sl_jx_json(json_incref(v)) : d ? sl_jx_copy(d) : sl_jx_json(json_null());
            return 0;
        }
        json_t *f = json_object_get(j, m);
        if (f)
            return sl_jx_err(r, e, SL_EINVAL, "'%s' object is not callable",
                             json_is_string(f) ? "str" : "value");
        return sl_jx_err(r, e, SL_EINVAL, "'dict object' has no attribute '%s'", m);
    }
    if (json_is_array(j)) {
        if (!strcmp(m, "count") || !strcmp(m, "index")) {
            jv *x = sl_jx_arg(a, 0, NULL);
            long long c = 0, at = -1;
            r->work -= (long)json_array_size(j);
            for (size_t i = 0; x && i < json_array_size(j); i++) {
                jv it = {.k = K_JSON, .j = json_array_get(j, i)};
                if (sl_jx_eq(&it, x)) {
                    c++;
                    if (at < 0)
                        at = (long long)i;
                }
            }
            if (m[0] == 'i' && at < 0)
                return sl_jx_err(r, e, SL_EINVAL, "value is not in list");
            *out = sl_jx_json(sl_jx_int(m[0] == 'c' ? c : at));
            return 0;
        }
        return sl_jx_err(r, e, SL_EINVAL, "'list object' has no attribute '%s'", m);
    }
    return sl_jx_err(r, e, SL_EINVAL, "'%s object' has no attribute '%s'", sl_jx_py_type(self), m);
}
