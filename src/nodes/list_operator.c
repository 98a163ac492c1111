/*
 * list-operator — filters, picks, sorts and cuts an array.
 *
 * Fields: variable (selector to an array of texts, numbers, booleans or
 * files), filter_by{enabled, conditions[{key, comparison_operator, value}]},
 * extract_by{enabled, serial}, order_by{enabled, key, value asc|desc},
 * limit{enabled, size}.  The steps run in Dify's order: filter, extract,
 * order, limit.  Outputs `result` (the array), `first_record` and
 * `last_record` (None when the result is empty).
 *
 * Semantics follow graphon's list-operator node:
 *   - a missing variable fails the node; an empty (or otherwise falsy)
 *     value gives an empty result without looking at its type;
 *   - arrays of objects or of mixed types are refused;
 *   - filter conditions apply one after the other (an "and");
 *   - on texts, `in` means "the item is part of the value text" and
 *     `empty` means the item is "";
 *   - numbers compare with float(value); booleans need a boolean value;
 *   - files filter on one attribute (`key`): name, extension, mime_type,
 *     url, related_id as text; type and transfer_method with in / not in;
 *     size as a number;
 *   - extract_by.serial is 1-based and may be a {{#…#}} reference;
 *   - limit.size slices like Python's [:size] (a negative size drops items
 *     from the end).
 * Filter values and the serial may hold {{#…#}} references; sluice also
 * reads a plain number there as its text.  Filtering and sorting millions
 * of items take a second or more: both look at the run's stop and time
 * budget as they go (`ended`).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "nodes/cond.h"
#include "engine/node.h"

typedef enum { K_STR, K_NUM, K_BOOL, K_FILE, K_OTHER } elem_kind;

/* A failure of the node: SL_EINVAL with the error class Dify names as its
 * type; the node fails with it. */
#define fail_with(e, type, ...) sl_err_typed((e), SL_EINVAL, (type), __VA_ARGS__)

/* The run stopped or out of time: the node fails with the run's own
 * message (fills e).  Asked every few thousand items. */
static bool ended(sl_node_exec *x, sl_err *e)
{
    if (sl_exec_interrupted(x, e) == 0)
        return false;
    sl_err_set_type(e, e->code == SL_ETIMEOUT ? "WorkflowTimeout" : "Stopped");
    return true;
}

static elem_kind kind_of(const sl_value *arr)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return K_OTHER;
    elem_kind k = K_OTHER;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const sl_value *e = json_array_get(arr, i);
        elem_kind ek = json_is_string(e)        ? K_STR
                       : sl_value_is_number(e)  ? K_NUM
                       : json_is_boolean(e)     ? K_BOOL
                       : sl_value_is_file(e)    ? K_FILE
                                                : K_OTHER;
        if (ek == K_OTHER || (i && ek != k))
            return K_OTHER;
        k = ek;
    }
    return k;
}

static void brief(const sl_value *v, char *out, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 256);
    sl_value_json(v, &b);
    snprintf(out, n, "%.*s%s", 80, b.data ? b.data : "null", b.len > 80 ? "…" : "");
    sl_buf_release(&b);
}

/* Renders a template text (or a plain number, read as its text) into a
 * new string value. */
static int render_value(sl_node_exec *x, const sl_value *raw, sl_value **out, const char *what,
                        sl_err *e)
{
    if (!raw || json_is_null(raw)) {
        *out = json_string("");
        return 0;
    }
    const sl_limits *l = sl_exec_limits(x);
    sl_buf b;
    sl_buf_init(&b, l ? l->max_string_bytes : 0);
    int rc = 0;
    if (json_is_string(raw))
        rc = sl_exec_render(x, json_string_value(raw), &b);
    else
        rc = sl_value_text(raw, &b);
    if (rc < 0 || b.toobig) {
        sl_buf_release(&b);
        return fail_with(e, "ValueError", "%s grows past the text limit when its {{#…#}} "
                         "references are filled in; use a shorter value", what);
    }
    *out = json_stringn(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return 0;
}

/* ---- filter predicates ---- */

typedef enum {
    F_CONTAINS, F_NOT_CONTAINS, F_START_WITH, F_END_WITH, F_IS, F_IS_NOT, F_IN, F_NOT_IN,
    F_EMPTY, F_NOT_EMPTY, F_EQ, F_NE, F_LT, F_GT, F_LE, F_GE, F_BAD
} fop;

static const struct {
    const char *name;
    fop op;
} fops[] = {
    {"contains", F_CONTAINS}, {"not contains", F_NOT_CONTAINS}, {"start with", F_START_WITH},
    {"end with", F_END_WITH}, {"is", F_IS}, {"is not", F_IS_NOT}, {"in", F_IN},
    {"not in", F_NOT_IN}, {"empty", F_EMPTY}, {"not empty", F_NOT_EMPTY}, {"=", F_EQ},
    {"≠", F_NE}, {"<", F_LT}, {">", F_GT}, {"≤", F_LE}, {"≥", F_GE},
};

#define FILTER_OPS "contains, not contains, start with, end with, is, is not, in, not in, " \
                   "empty, not empty, =, ≠, <, >, ≤, ≥"

static fop fop_of(const char *s)
{
    for (size_t i = 0; s && i < sizeof fops / sizeof fops[0]; i++)
        if (strcmp(fops[i].name, s) == 0)
            return fops[i].op;
    return F_BAD;
}

static bool has_sub(const char *h, size_t hl, const char *nd, size_t nl)
{
    return nl == 0 || memmem(h, hl, nd, nl) != NULL;
}

/* The text predicates; `in` asks whether the item is part of the value. */
static int text_pred(fop op, const char *x, size_t xl, const char *v, size_t vl, bool *out)
{
    switch (op) {
    case F_EMPTY: *out = xl == 0; return 0;
    case F_NOT_EMPTY: *out = xl != 0; return 0;
    case F_CONTAINS: *out = has_sub(x, xl, v, vl); return 0;
    case F_NOT_CONTAINS: *out = !has_sub(x, xl, v, vl); return 0;
    case F_START_WITH: *out = vl <= xl && memcmp(x, v, vl) == 0; return 0;
    case F_END_WITH: *out = vl <= xl && memcmp(x + xl - vl, v, vl) == 0; return 0;
    case F_IS: *out = xl == vl && memcmp(x, v, vl) == 0; return 0;
    case F_IS_NOT: *out = !(xl == vl && memcmp(x, v, vl) == 0); return 0;
    case F_IN: *out = has_sub(v, vl, x, xl); return 0;
    case F_NOT_IN: *out = !has_sub(v, vl, x, xl); return 0;
    default: return -1;
    }
}

static int num_pred(fop op, double x, double v, bool *out)
{
    switch (op) {
    case F_EQ: *out = x == v; return 0;
    case F_NE: *out = x != v; return 0;
    case F_LT: *out = x < v; return 0;
    case F_LE: *out = x <= v; return 0;
    case F_GT: *out = x > v; return 0;
    case F_GE: *out = x >= v; return 0;
    default: return -1;
    }
}

/* Text attribute of a file as the list-operator reads it (note: `url` is
 * the remote URL here, not a generated one). */
static const char *file_text(const sl_value *f, const char *key, size_t *len)
{
    const char *field = strcmp(key, "name") == 0  ? "filename"
                        : strcmp(key, "url") == 0 ? "remote_url"
                                                  : key;
    const sl_value *v = json_object_get(f, field);
    if (!json_is_string(v)) {
        *len = 0;
        return "";
    }
    *len = json_string_length(v);
    return json_string_value(v);
}

static double file_size(const sl_value *f)
{
    const sl_value *v = json_object_get(f, "size");
    return sl_value_is_number(v) ? sl_value_number(v) : -1; /* Dify's default size */
}

static bool key_in(const char *key, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(*set, key) == 0)
            return true;
    return false;
}

static const char *const text_keys[] = {"name", "extension", "mime_type", "url", "related_id",
                                        NULL};
static const char *const seq_keys[] = {"type", "transfer_method", NULL};
static const char *const order_keys[] = {"name", "type", "extension", "mime_type",
                                         "transfer_method", "url", "related_id", NULL};

static int apply_filter(sl_node_exec *x, const sl_value *cond, size_t ci, elem_kind kind,
                        sl_value **arr, sl_err *e)
{
    const char *opname = json_string_value(json_object_get(cond, "comparison_operator"));
    if (!opname)
        opname = "contains"; /* Dify's default for a condition without one */
    fop op = fop_of(opname);
    const sl_value *raw = json_object_get(cond, "value");
    const char *key = json_string_value(json_object_get(cond, "key"));
    if (!key)
        key = "";
    if (!raw || json_is_null(raw))
        raw = NULL;
    char b[200], what[64];
    snprintf(what, sizeof what, "filter condition %zu", ci + 1);
    sl_value *val = NULL; /* rendered text, or the raw list/boolean */
    double num = 0;

    switch (kind) {
    case K_STR:
    case K_NUM:
        if (raw && !json_is_string(raw) && !sl_value_is_number(raw)) {
            brief(raw, b, sizeof b);
            return fail_with(e, "InvalidFilterValueError", "%s: Invalid filter value: %s; "
                             "filtering %s takes a single text value", what, b,
                             kind == K_STR ? "texts" : "numbers");
        }
        if (render_value(x, raw, &val, what, e) < 0)
            return -1;
        if (kind == K_NUM) {
            if (op < F_EQ || op > F_GE) {
                json_decref(val);
                return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                                 "numbers; use =, ≠, <, >, ≤ or ≥", what, opname);
            }
            if (sl_cond_py_float(json_string_value(val), &num) < 0) {
                fail_with(e, "ValueError", "%s: could not convert string to float: '%s'; "
                          "the value must be a number", what, json_string_value(val));
                json_decref(val);
                return -1;
            }
        } else if (op > F_NOT_EMPTY) {
            json_decref(val);
            return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                             "texts; use " FILTER_OPS " except the number ones", what, opname);
        }
        break;
    case K_BOOL:
        if (!json_is_boolean(raw)) {
            brief(raw, b, sizeof b);
            return fail_with(e, "TypeError", "%s: Boolean filter expects a boolean value, got "
                             "%s; write true or false (unquoted)", what, b);
        }
        if (op != F_IS && op != F_IS_NOT)
            return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                             "booleans; use 'is' or 'is not'", what, opname);
        val = json_incref((sl_value *)raw);
        break;
    case K_FILE:
        if (json_is_boolean(raw))
            return fail_with(e, "TypeError", "%s: File filter expects a string value, got a "
                             "boolean", what);
        if (!raw || json_is_string(raw) || sl_value_is_number(raw)) {
            if (render_value(x, raw, &val, what, e) < 0)
                return -1;
        } else {
            val = json_incref((sl_value *)raw);
        }
        if (key_in(key, text_keys) && json_is_string(val)) {
            if (op > F_NOT_EMPTY) {
                json_decref(val);
                return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                                 "the file %s; use a text operator", what, opname, key);
            }
        } else if (key_in(key, seq_keys)) {
            if (op != F_IN && op != F_NOT_IN) {
                json_decref(val);
                return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                                 "the file %s; use 'in' or 'not in' with a list such as "
                                 "['image', 'document']", what, opname, key);
            }
        } else if (strcmp(key, "size") == 0 && json_is_string(val)) {
            if (op < F_EQ || op > F_GE) {
                json_decref(val);
                return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s' on "
                                 "the file size; use =, ≠, <, >, ≤ or ≥", what, opname);
            }
            if (sl_cond_py_float(json_string_value(val), &num) < 0) {
                fail_with(e, "ValueError", "%s: could not convert string to float: '%s'; the "
                          "size is compared as a number of bytes", what, json_string_value(val));
                json_decref(val);
                return -1;
            }
        } else {
            json_decref(val);
            return fail_with(e, "InvalidKeyError", "%s: Invalid key: '%s'; filter files by "
                             "name, extension, mime_type, url, related_id (text), type, "
                             "transfer_method (a list) or size", what, key);
        }
        break;
    case K_OTHER:
        return fail_with(e, "ValueError", "%s: nothing to filter", what);
    }

    sl_value *kept = json_array();
    for (size_t i = 0; i < json_array_size(*arr); i++) {
        if ((i & 0xffff) == 0xffff && ended(x, e)) {
            json_decref(kept);
            json_decref(val);
            return -1;
        }
        const sl_value *item = json_array_get(*arr, i);
        bool keep = false;
        int rc = 0;
        if (kind == K_STR) {
            rc = text_pred(op, json_string_value(item), json_string_length(item),
                           json_string_value(val), json_string_length(val), &keep);
        } else if (kind == K_NUM) {
            rc = num_pred(op, sl_value_number(item), num, &keep);
        } else if (kind == K_BOOL) {
            keep = (json_is_true(item) == json_is_true(val)) == (op == F_IS);
        } else if (key_in(key, seq_keys)) {
            size_t xl;
            const char *xs = file_text(item, key, &xl);
            bool in;
            if (json_is_string(val)) {
                in = has_sub(json_string_value(val), json_string_length(val), xs, xl);
            } else {
                in = false;
                for (size_t k = 0; json_is_array(val) && k < json_array_size(val); k++) {
                    const sl_value *c = json_array_get(val, k);
                    in = in || (json_is_string(c) && json_string_length(c) == xl &&
                                memcmp(json_string_value(c), xs, xl) == 0);
                }
            }
            keep = op == F_IN ? in : !in;
        } else if (strcmp(key, "size") == 0) {
            rc = num_pred(op, file_size(item), num, &keep);
        } else {
            size_t xl;
            const char *xs = file_text(item, key, &xl);
            rc = text_pred(op, xs, xl, json_string_value(val), json_string_length(val), &keep);
        }
        if (rc < 0) {
            json_decref(kept);
            json_decref(val);
            return fail_with(e, "InvalidConditionError", "%s: Invalid condition: '%s'", what,
                             opname);
        }
        if (keep)
            json_array_append(kept, (sl_value *)item);
    }
    json_decref(val);
    json_decref(*arr);
    *arr = kept;
    return 0;
}

/* ---- order ---- */

typedef struct {
    elem_kind kind;
    const char *key; /* files */
    bool desc;
    sl_node_exec *x;
    sl_err *e;
    bool stopped;    /* the run ended while sorting (e says how) */
} order_ctx;

static int cmp_items(const sl_value *a, const sl_value *b, const order_ctx *o)
{
    int r;
    if (o->kind == K_STR) {
        size_t al = json_string_length(a), bl = json_string_length(b);
        r = memcmp(json_string_value(a), json_string_value(b), al < bl ? al : bl);
        if (r == 0)
            r = al < bl ? -1 : al > bl;
    } else if (o->kind == K_NUM) {
        if (json_is_integer(a) && json_is_integer(b))
            r = json_integer_value(a) < json_integer_value(b) ? -1
                                                               : json_integer_value(a) >
                                                                     json_integer_value(b);
        else
            r = sl_value_number(a) < sl_value_number(b) ? -1
                                                         : sl_value_number(a) > sl_value_number(b);
    } else if (o->kind == K_BOOL) {
        r = (int)json_is_true(a) - (int)json_is_true(b);
    } else if (strcmp(o->key, "size") == 0) {
        double sa = file_size(a), sb = file_size(b);
        r = sa < sb ? -1 : sa > sb;
    } else {
        size_t al, bl;
        const char *as = file_text(a, o->key, &al), *bs = file_text(b, o->key, &bl);
        r = memcmp(as, bs, al < bl ? al : bl);
        if (r == 0)
            r = al < bl ? -1 : al > bl;
    }
    return o->desc ? -r : r;
}

/* Stable merge sort: Python's sorted() keeps equal items in their order,
 * also with reverse=True, which a negated comparison reproduces. */
static void merge_sort(const sl_value **v, const sl_value **tmp, size_t n, order_ctx *o)
{
    if (n < 2 || o->stopped)
        return;
    if (n >= 16384 && ended(o->x, o->e)) {
        o->stopped = true;
        return;
    }
    size_t h = n / 2;
    merge_sort(v, tmp, h, o);
    merge_sort(v + h, tmp, n - h, o);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_items(v[j], v[i], o) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static int apply_order(sl_node_exec *x, const sl_value *cfg, elem_kind kind, sl_value **arr,
                       sl_err *e)
{
    const char *dir = json_string_value(json_object_get(cfg, "value"));
    order_ctx o = {kind, json_string_value(json_object_get(cfg, "key")),
                   dir && strcmp(dir, "desc") == 0, x, e, false};
    if (!o.key)
        o.key = "";
    if (kind == K_FILE && !key_in(o.key, order_keys) && strcmp(o.key, "size") != 0)
        return fail_with(e, "InvalidKeyError", "order_by: Invalid order key '%s'; sort files "
                         "by name, type, extension, mime_type, transfer_method, url, "
                         "related_id or size", o.key);
    size_t n = json_array_size(*arr);
    const sl_value **v = sl_xmalloc((n ? n : 1) * sizeof *v);
    const sl_value **tmp = sl_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(*arr, i);
    merge_sort(v, tmp, n, &o);
    if (o.stopped) {
        free(v);
        free(tmp);
        return -1;
    }
    sl_value *sorted = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(sorted, (sl_value *)v[i]);
    free(v);
    free(tmp);
    json_decref(*arr);
    *arr = sorted;
    return 0;
}

/* ---- extract, limit ---- */

static int apply_extract(sl_node_exec *x, const sl_value *cfg, sl_value **arr, sl_err *e)
{
    const sl_value *raw = json_object_get(cfg, "serial");
    sl_value *text = NULL;
    if (!raw || json_is_null(raw))
        text = json_string("1"); /* Dify's default serial */
    else if (render_value(x, raw, &text, "extract_by.serial", e) < 0)
        return -1;
    json_int_t serial;
    if (sl_cond_py_int(json_string_value(text), &serial) < 0) {
        fail_with(e, "ValueError", "extract_by.serial: invalid literal for int() with base 10: "
                  "'%s'; the serial is a whole number counting from 1", json_string_value(text));
        json_decref(text);
        return -1;
    }
    json_decref(text);
    size_t n = json_array_size(*arr);
    if (serial < 1)
        return fail_with(e, "ValueError", "extract_by.serial: Invalid serial index: must be >= "
                         "1, got %" JSON_INTEGER_FORMAT "; the first item is 1", serial);
    if ((size_t)serial > n)
        return fail_with(e, "InvalidKeyError", "extract_by.serial: Invalid serial index: must "
                         "be <= %zu, got %" JSON_INTEGER_FORMAT "; the list has %zu item%s here",
                         n, serial, n, n == 1 ? "" : "s");
    sl_value *one = json_array();
    json_array_append(one, json_array_get(*arr, (size_t)serial - 1));
    json_decref(*arr);
    *arr = one;
    return 0;
}

static void apply_limit(const sl_value *cfg, sl_value **arr)
{
    const sl_value *sv = json_object_get(cfg, "size");
    json_int_t size = json_is_integer(sv) ? json_integer_value(sv) : -1;
    json_int_t n = (json_int_t)json_array_size(*arr);
    json_int_t keep = size >= 0 ? (size < n ? size : n) : (n + size > 0 ? n + size : 0);
    sl_value *cut = json_array();
    for (json_int_t i = 0; i < keep; i++)
        json_array_append(cut, json_array_get(*arr, (size_t)i));
    json_decref(*arr);
    *arr = cut;
}

static bool enabled(const sl_value *cfg)
{
    return json_is_object(cfg) && json_is_true(json_object_get(cfg, "enabled"));
}

static void set_outputs(sl_node_exec *x, sl_value *arr)
{
    size_t n = json_array_size(arr);
    sl_value *first = n ? json_incref(json_array_get(arr, 0)) : json_null();
    sl_value *last = n ? json_incref(json_array_get(arr, n - 1)) : json_null();
    sl_exec_output(x, "result", arr);
    sl_exec_output(x, "first_record", first);
    sl_exec_output(x, "last_record", last);
}

static int run(sl_node_exec *x)
{
    const sl_value *data = sl_exec_data(x);
    const sl_value *sel = json_object_get(data, "variable");
    sl_value *v = sl_exec_get(x, sel);
    if (!v) {
        sl_buf b;
        sl_buf_init(&b, 1024);
        sl_value_json(sel, &b);
        int rc = sl_exec_fail(x, "ListOperatorError", "Variable not found for selector: %s; "
                              "the node that sets it did not run on this path or the name is "
                              "wrong", b.data ? b.data : "[]");
        sl_buf_release(&b);
        return rc;
    }
    if (!sl_value_truthy(v)) {
        json_decref(v);
        sl_exec_input(x, "variable", json_array());
        sl_exec_process(x, "variable", json_array());
        set_outputs(x, json_array());
        return 0;
    }
    elem_kind kind = kind_of(v);
    if (kind == K_OTHER) {
        char b[200];
        brief(sel, b, sizeof b);
        int rc = sl_exec_fail(x, "ListOperatorError", "Variable %s is not an array type the "
                              "list operator handles, actual type: %s; it takes an array of "
                              "texts, numbers, booleans or files", b, sl_value_type_name(v));
        json_decref(v);
        return rc;
    }
    sl_exec_input(x, "variable", json_incref(v));
    sl_exec_process(x, "variable", json_incref(v));

    sl_value *arr = json_copy(v); /* shallow: items are shared, never mutated */
    json_decref(v);
    sl_err e = {0};
    const sl_value *filter = json_object_get(data, "filter_by");
    if (enabled(filter)) {
        const sl_value *conds = json_object_get(filter, "conditions");
        for (size_t i = 0; i < json_array_size(conds); i++)
            if (apply_filter(x, json_array_get(conds, i), i, kind, &arr, &e) < 0)
                goto fail;
    }
    if (enabled(json_object_get(data, "extract_by")) &&
        apply_extract(x, json_object_get(data, "extract_by"), &arr, &e) < 0)
        goto fail;
    if (enabled(json_object_get(data, "order_by")) &&
        apply_order(x, json_object_get(data, "order_by"), kind, &arr, &e) < 0)
        goto fail;
    if (enabled(json_object_get(data, "limit")))
        apply_limit(json_object_get(data, "limit"), &arr);
    set_outputs(x, arr);
    return 0;
fail:
    json_decref(arr);
    int rc = sl_exec_fail(x, sl_err_type(&e, NULL), "%s", e.msg);
    sl_err_clear(&e);
    return rc;
}

/* ---- load-time checks ---- */

static bool check_section(sl_check *c, const sl_gnode *n, const char *name)
{
    const sl_value *s = json_object_get(n->data, name);
    if (!s || json_is_null(s))
        return true;
    if (!json_is_object(s)) {
        sl_check_error(c, n, n->data, name, name, "must be a mapping with 'enabled' and the "
                       "step's settings");
        return false;
    }
    const sl_value *en = json_object_get(s, "enabled");
    if (en && !json_is_boolean(en) && !json_is_null(en)) {
        char f[64];
        snprintf(f, sizeof f, "%s.enabled", name);
        sl_check_error(c, n, s, "enabled", f, "must be true or false");
        return false;
    }
    return true;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *data = n->data;
    int bad = sl_check_selector(c, n, data, "variable", "variable", true) < 0;
    for (const char *const *s = (const char *const[]){"filter_by", "order_by", "limit",
                                                       "extract_by", NULL};
         *s; s++)
        bad |= !check_section(c, n, *s);

    const sl_value *conds = json_object_get(json_object_get(data, "filter_by"), "conditions");
    if (conds && !json_is_null(conds) && !json_is_array(conds)) {
        sl_check_error(c, n, json_object_get(data, "filter_by"), "conditions",
                       "filter_by.conditions", "must be a list of {key, comparison_operator, "
                       "value}");
        bad = 1;
    }
    char f[96];
    for (size_t i = 0; json_is_array(conds) && i < json_array_size(conds); i++) {
        const sl_value *cd = json_array_get(conds, i);
        snprintf(f, sizeof f, "filter_by.conditions[%zu]", i);
        if (!json_is_object(cd)) {
            sl_check_error(c, n, cd, NULL, f, "must be a mapping {key, comparison_operator, "
                           "value}");
            bad = 1;
            continue;
        }
        const sl_value *op = json_object_get(cd, "comparison_operator");
        snprintf(f, sizeof f, "filter_by.conditions[%zu].comparison_operator", i);
        if (op && !json_is_null(op) && fop_of(json_string_value(op)) == F_BAD) {
            if (json_is_string(op))
                sl_check_error(c, n, cd, "comparison_operator", f, "unknown filter operator "
                               "'%s'; use one of " FILTER_OPS, json_string_value(op));
            else
                sl_check_error(c, n, cd, "comparison_operator", f, "must be text naming a "
                               "filter operator: " FILTER_OPS);
            bad = 1;
        }
        const sl_value *val = json_object_get(cd, "value");
        snprintf(f, sizeof f, "filter_by.conditions[%zu].value", i);
        if (json_is_string(val)) {
            bad |= sl_check_text_refs(c, n, cd, "value", f) < 0;
        } else if (json_is_array(val)) {
            for (size_t k = 0; k < json_array_size(val); k++)
                if (!json_is_string(json_array_get(val, k))) {
                    sl_check_error(c, n, cd, "value", f, "list items must be text (e.g. "
                                   "['image', 'document'])");
                    bad = 1;
                    break;
                }
        } else if (val && !json_is_null(val) && !json_is_boolean(val) &&
                   !sl_value_is_number(val)) {
            sl_check_error(c, n, cd, "value", f, "must be text, a boolean or a list of texts");
            bad = 1;
        }
        const sl_value *key = json_object_get(cd, "key");
        if (key && !json_is_null(key) && !json_is_string(key)) {
            snprintf(f, sizeof f, "filter_by.conditions[%zu].key", i);
            sl_check_error(c, n, cd, "key", f, "must be text naming a file attribute");
            bad = 1;
        }
    }

    const sl_value *order = json_object_get(data, "order_by");
    const sl_value *dir = json_object_get(order, "value");
    if (dir && !json_is_null(dir) &&
        (!json_is_string(dir) || (strcmp(json_string_value(dir), "asc") &&
                                  strcmp(json_string_value(dir), "desc")))) {
        sl_check_error(c, n, order, "value", "order_by.value", "must be 'asc' or 'desc'");
        bad = 1;
    }
    const sl_value *limit = json_object_get(data, "limit");
    const sl_value *size = json_object_get(limit, "size");
    if (size && !json_is_null(size) && !json_is_integer(size)) {
        sl_check_error(c, n, limit, "size", "limit.size", "must be a whole number of items");
        bad = 1;
    }
    const sl_value *extract = json_object_get(data, "extract_by");
    const sl_value *serial = json_object_get(extract, "serial");
    if (json_is_string(serial))
        bad |= sl_check_text_refs(c, n, extract, "serial", "extract_by.serial") < 0;
    else if (serial && !json_is_null(serial) && !json_is_integer(serial)) {
        sl_check_error(c, n, extract, "serial", "extract_by.serial",
                       "must be a whole number from 1, or a {{#…#}} reference to one");
        bad = 1;
    }
    return bad ? -1 : 0;
}

const sl_node_kind sl_kind_list_operator = {.type = "list-operator", .check = check, .run = run};
