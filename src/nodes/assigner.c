/*
 * assigner — writes conversation variables and loop variables.
 *
 * Two versions live in Dify DSL files.  Version 1 (no `version`, or '1'):
 *     assigned_variable_selector, input_variable_selector,
 *     write_mode: over-write | append | clear
 * Version 2 (`version: '2'`): a list of operations applied in order,
 *     items: [{variable_selector, input_type: variable | constant,
 *              operation, value}]
 * with operations over-write, clear, append, extend, set, +=, -=, *=, /=,
 * remove-first, remove-last.  `value` is a selector when input_type is
 * variable and the literal value when it is constant.
 *
 * Semantics follow graphon's variable assigner nodes:
 *   - version 1 does no type checks: over-write takes the input as it is,
 *     append needs an array target, clear writes the empty value of the
 *     target's type ("", 0, false, {}, []);
 *   - version 2 checks each item against the target's type: which
 *     operations a type supports, which take a variable or a constant
 *     (set and the arithmetic ones only take constants; over-write,
 *     append and extend only take variables; clear and remove-* take
 *     neither, and Dify refuses them with input_type constant), and
 *     whether the value fits (text for text, a non-zero number for /=,
 *     a list of the element type for extend ...);
 *   - a variable input whose value is None skips the item;
 *   - set on an object parses a text value as JSON;
 *   - /= is true division (6 /= 3 gives 2.0), as in Python.
 * Later items see the values earlier items wrote.  Nothing is written
 * unless every item succeeds, so a failed node leaves the variables as
 * they were.  Version 2 records process_data {name: new value} plus
 * "__updated_variables"; the node has no outputs.
 *
 * A variable's type is the one declared in conversation_variables or the
 * loop's loop_variables, as in Dify; only a variable with no known
 * declaration falls back to the type of its current value (an empty array
 * then takes items of any one element type).  Load-time checks compare
 * operations with the declared types and warn where Dify would fail at
 * run time.  Booleans are not numbers here (Python would
 * let True pass as 1).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/node.h"

typedef enum {
    T_NONE,
    T_STRING,
    T_NUMBER,
    T_BOOLEAN,
    T_OBJECT,
    T_FILE,
    T_ARR_STRING,
    T_ARR_NUMBER,
    T_ARR_OBJECT,
    T_ARR_BOOLEAN,
    T_ARR_FILE,
    T_ARR_ANY,
    T_ARR_EMPTY, /* an empty array: its element type is unknown at run time */
    T_UNKNOWN,   /* a declared type sluice does not know (load-time only) */
} vtype;

static const char *type_name(vtype t)
{
    static const char *const names[] = {
        "none", "string", "number", "boolean", "object", "file", "array[string]",
        "array[number]", "array[object]", "array[boolean]", "array[file]", "array[any]",
        "array[any]", "unknown"};
    return names[t];
}

static bool is_array_type(vtype t)
{
    return t >= T_ARR_STRING && t <= T_ARR_EMPTY;
}

static vtype type_of(const sl_value *v)
{
    if (!v || json_is_null(v))
        return T_NONE;
    if (json_is_string(v))
        return T_STRING;
    if (sl_value_is_number(v))
        return T_NUMBER;
    if (json_is_boolean(v))
        return T_BOOLEAN;
    if (sl_value_is_file(v))
        return T_FILE;
    if (json_is_object(v))
        return T_OBJECT;
    if (json_array_size(v) == 0)
        return T_ARR_EMPTY;
    const char *n = sl_value_type_name(v);
    if (strcmp(n, "array[string]") == 0) return T_ARR_STRING;
    if (strcmp(n, "array[number]") == 0) return T_ARR_NUMBER;
    if (strcmp(n, "array[object]") == 0) return T_ARR_OBJECT;
    if (strcmp(n, "array[boolean]") == 0) return T_ARR_BOOLEAN;
    if (strcmp(n, "array[file]") == 0) return T_ARR_FILE;
    return T_ARR_ANY;
}

/* A declared type name from conversation_variables / loop_variables. */
static vtype type_from_name(const char *s)
{
    static const struct {
        const char *name;
        vtype t;
    } m[] = {
        {"string", T_STRING}, {"secret", T_STRING}, {"number", T_NUMBER},
        {"integer", T_NUMBER}, {"float", T_NUMBER}, {"boolean", T_BOOLEAN},
        {"object", T_OBJECT}, {"file", T_FILE}, {"array[string]", T_ARR_STRING},
        {"array[number]", T_ARR_NUMBER}, {"array[object]", T_ARR_OBJECT},
        {"array[boolean]", T_ARR_BOOLEAN}, {"array[file]", T_ARR_FILE},
        {"array[any]", T_ARR_ANY},
    };
    for (size_t i = 0; s && i < sizeof m / sizeof m[0]; i++)
        if (strcmp(m[i].name, s) == 0)
            return m[i].t;
    return T_UNKNOWN;
}

static vtype declared_type(const sl_graph *g, const sl_value *sel);

typedef enum {
    OP_OVER_WRITE, OP_CLEAR, OP_APPEND, OP_EXTEND, OP_SET, OP_ADD, OP_SUB, OP_MUL, OP_DIV,
    OP_REMOVE_FIRST, OP_REMOVE_LAST, OP_BAD
} aop;

static const char *const op_names[] = {"over-write", "clear", "append", "extend", "set", "+=",
                                       "-=", "*=", "/=", "remove-first", "remove-last"};
#define V2_OPS "over-write, clear, append, extend, set, +=, -=, *=, /=, remove-first, remove-last"

static aop op_of(const char *s)
{
    for (int i = 0; s && i < OP_BAD; i++)
        if (strcmp(op_names[i], s) == 0)
            return (aop)i;
    return OP_BAD;
}

static bool is_arith(aop op)
{
    return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV;
}

static bool takes_no_value(aop op)
{
    return op == OP_CLEAR || op == OP_REMOVE_FIRST || op == OP_REMOVE_LAST;
}

static bool op_supported(vtype t, aop op)
{
    switch (op) {
    case OP_OVER_WRITE:
    case OP_CLEAR:
        return true;
    case OP_SET:
        return t == T_OBJECT || t == T_STRING || t == T_NUMBER || t == T_BOOLEAN;
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
        return t == T_NUMBER;
    case OP_APPEND:
    case OP_EXTEND:
    case OP_REMOVE_FIRST:
    case OP_REMOVE_LAST:
        return is_array_type(t);
    case OP_BAD:
        break;
    }
    return false;
}

static bool variable_input_ok(aop op)
{
    return op != OP_SET && !is_arith(op);
}

static bool constant_input_ok(vtype t, aop op)
{
    if (t == T_STRING || t == T_OBJECT || t == T_BOOLEAN)
        return op == OP_OVER_WRITE || op == OP_SET;
    if (t == T_NUMBER)
        return op == OP_OVER_WRITE || op == OP_SET || is_arith(op);
    return false;
}

static bool is_dict(const sl_value *v)
{
    return json_is_object(v) && !sl_value_is_file(v);
}

/* Whether one item fits an array of element type t. */
static bool elem_ok(vtype t, const sl_value *v)
{
    switch (t) {
    case T_ARR_STRING: return json_is_string(v);
    case T_ARR_NUMBER: return sl_value_is_number(v);
    case T_ARR_OBJECT: return is_dict(v);
    case T_ARR_BOOLEAN: return json_is_boolean(v);
    case T_ARR_ANY:
    case T_ARR_EMPTY:
        return json_is_string(v) || sl_value_is_number(v) || json_is_boolean(v) || is_dict(v);
    default: return false;
    }
}

static bool list_ok(vtype t, const sl_value *v)
{
    if (!json_is_array(v))
        return false;
    /* An empty array's element type is unknown: accept a list of any one
     * element type, as the declared type would have been. */
    vtype want = t;
    if (t == T_ARR_EMPTY && json_array_size(v) > 0) {
        want = type_of(v);
        if (want == T_ARR_FILE || want == T_ARR_ANY)
            return false;
    }
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!elem_ok(want, json_array_get(v, i)))
            return false;
    return true;
}

static bool input_valid(vtype t, aop op, const sl_value *v)
{
    if (takes_no_value(op))
        return true;
    switch (t) {
    case T_STRING: return json_is_string(v);
    case T_BOOLEAN: return json_is_boolean(v);
    case T_NUMBER:
        return sl_value_is_number(v) && !(op == OP_DIV && sl_value_number(v) == 0);
    case T_OBJECT: return is_dict(v);
    case T_ARR_STRING:
    case T_ARR_NUMBER:
    case T_ARR_OBJECT:
    case T_ARR_BOOLEAN:
    case T_ARR_ANY:
    case T_ARR_EMPTY:
        if (op == OP_APPEND)
            return elem_ok(t, v);
        if (op == OP_EXTEND || op == OP_OVER_WRITE)
            return list_ok(t, v);
        return false;
    default:
        return false;
    }
}

/* The empty value of a type, what `clear` writes. */
static sl_value *zero_of(vtype t)
{
    switch (t) {
    case T_STRING: return json_string("");
    case T_NUMBER: return json_integer(0);
    case T_BOOLEAN: return json_false();
    case T_OBJECT: return json_object();
    default: return is_array_type(t) ? json_array() : json_null();
    }
}

/* Python arithmetic: int with int stays int (sluice falls back to a float
 * past 64 bits), anything with a float is a float, / is always a float. */
static sl_value *arith(aop op, const sl_value *a, const sl_value *b)
{
    if (op != OP_DIV && json_is_integer(a) && json_is_integer(b)) {
        long long x = json_integer_value(a), y = json_integer_value(b), r;
        bool ovf = op == OP_ADD   ? __builtin_add_overflow(x, y, &r)
                   : op == OP_SUB ? __builtin_sub_overflow(x, y, &r)
                                  : __builtin_mul_overflow(x, y, &r);
        if (!ovf)
            return json_integer(r);
    }
    double x = sl_value_number(a), y = sl_value_number(b);
    switch (op) {
    case OP_ADD: return json_real(x + y);
    case OP_SUB: return json_real(x - y);
    case OP_MUL: return json_real(x * y);
    default: return json_real(x / y);
    }
}

static sl_value *apply_op(vtype t, aop op, const sl_value *cur, const sl_value *in)
{
    sl_value *r;
    size_t n = json_array_size(cur);
    switch (op) {
    case OP_OVER_WRITE:
    case OP_SET:
        return json_incref((sl_value *)in);
    case OP_CLEAR:
        return zero_of(t);
    case OP_APPEND:
        r = json_copy((sl_value *)cur);
        json_array_append(r, (sl_value *)in);
        return r;
    case OP_EXTEND:
        r = json_copy((sl_value *)cur);
        json_array_extend(r, (sl_value *)in);
        return r;
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
        return arith(op, cur, in);
    case OP_REMOVE_FIRST:
    case OP_REMOVE_LAST:
        r = json_array();
        for (size_t i = op == OP_REMOVE_FIRST ? 1 : 0; n && i < (op == OP_REMOVE_LAST ? n - 1 : n);
             i++)
            json_array_append(r, json_array_get(cur, i));
        return r;
    case OP_BAD:
        break;
    }
    return json_null();
}

/* ---- the working set of a version 2 node ---- */

/* Values written by earlier items of this node, by [scope, name]; reads
 * look here first so an item sees what the previous one wrote. */
typedef struct {
    sl_value *sels;   /* [[scope, name], ...] in first-update order */
    sl_value *values; /* parallel array of current values */
} working;

static int work_find(const working *w, const char *scope, const char *name)
{
    for (size_t i = 0; i < json_array_size(w->sels); i++) {
        const sl_value *s = json_array_get(w->sels, i);
        if (strcmp(json_string_value(json_array_get(s, 0)), scope) == 0 &&
            strcmp(json_string_value(json_array_get(s, 1)), name) == 0)
            return (int)i;
    }
    return -1;
}

/* New reference or NULL. */
static sl_value *work_get(sl_node_exec *x, const working *w, const sl_value *sel)
{
    const char *scope = json_string_value(json_array_get(sel, 0));
    const char *name = json_string_value(json_array_get(sel, 1));
    int i = scope && name ? work_find(w, scope, name) : -1;
    if (i < 0)
        return json_is_array(sel) ? sl_exec_get(x, sel) : NULL;
    const sl_value *v = json_array_get(w->values, (size_t)i);
    for (size_t k = 2; v && k < json_array_size(sel); k++) {
        const char *key = json_string_value(json_array_get(sel, k));
        v = json_is_object(v) && key ? json_object_get(v, key) : NULL;
    }
    return v ? json_incref((sl_value *)v) : NULL;
}

static void work_set(working *w, const sl_value *sel, sl_value *v)
{
    const char *scope = json_string_value(json_array_get(sel, 0));
    const char *name = json_string_value(json_array_get(sel, 1));
    int i = work_find(w, scope, name);
    if (i >= 0) {
        json_array_set_new(w->values, (size_t)i, v);
        return;
    }
    sl_value *s = json_array();
    json_array_append_new(s, json_string(scope));
    json_array_append_new(s, json_string(name));
    json_array_append_new(w->sels, s);
    json_array_append_new(w->values, v);
}

static void brief(const sl_value *v, char *out, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 256);
    if (!v)
        sl_buf_adds(&b, "None");
    else
        sl_value_json(v, &b);
    snprintf(out, n, "%.*s%s", 80, b.data ? b.data : "", b.len > 80 ? "…" : "");
    sl_buf_release(&b);
}

static void sel_text(const sl_value *sel, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (!json_is_array(sel)) {
        snprintf(out, n, "%s", json_is_string(sel) && json_string_length(sel)
                                   ? json_string_value(sel) : "(no selector)");
        return;
    }
    for (size_t i = 0; i < json_array_size(sel) && len + 1 < n; i++) {
        const char *p = json_string_value(json_array_get(sel, i));
        int k = snprintf(out + len, n - len, "%s%s", i ? "." : "", p ? p : "?");
        if (k < 0)
            break;
        len += (size_t)k;
    }
}

static sl_value *updated_entry(const sl_value *sel, const sl_value *v)
{
    sl_value *u = json_object();
    json_object_set_new(u, "name", json_incref(json_array_get(sel, 1)));
    json_object_set_new(u, "selector", json_copy((sl_value *)sel));
    json_object_set_new(u, "value_type", json_string(type_name(type_of(v))));
    json_object_set_new(u, "new_value", v ? json_incref((sl_value *)v) : json_null());
    return u;
}

/* Writes every updated variable; sl_exec_assign fails the node itself
 * when a target cannot be assigned. */
static int commit(sl_node_exec *x, const working *w)
{
    for (size_t i = 0; i < json_array_size(w->sels); i++)
        if (sl_exec_assign(x, json_array_get(w->sels, i),
                           json_incref(json_array_get(w->values, i))) < 0)
            return -1;
    return 0;
}

static int item_fail(sl_node_exec *x, working *w, size_t i, const char *type, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));

static int item_fail(sl_node_exec *x, working *w, size_t i, const char *type, const char *fmt,
                     ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_decref(w->sels);
    json_decref(w->values);
    return sl_exec_fail(x, type, "items[%zu]: %s", i, msg);
}

static int run_v2(sl_node_exec *x, const sl_value *data)
{
    const sl_value *items = json_object_get(data, "items");
    sl_exec_input(x, "version", json_string("2"));
    sl_exec_input(x, "items", items ? json_deep_copy(items) : json_array());
    working w = {json_array(), json_array()};
    char st[256], vt[256], b[200];

    for (size_t i = 0; i < json_array_size(items); i++) {
        const sl_value *it = json_array_get(items, i);
        const sl_value *sel = json_object_get(it, "variable_selector");
        const char *opname = json_string_value(json_object_get(it, "operation"));
        const char *itype = json_string_value(json_object_get(it, "input_type"));
        bool from_var = itype && strcmp(itype, "variable") == 0;
        aop op = op_of(opname);
        sel_text(sel, st, sizeof st);

        sl_value *cur = work_get(x, &w, sel);
        if (!cur)
            return item_fail(x, &w, i, "VariableNotFoundError", "Variable %s not found; assign "
                             "a declared conversation variable or a variable of the enclosing "
                             "loop", st);
        vtype t = declared_type(sl_exec_graph(x), sel);
        if (t == T_UNKNOWN || (t == T_ARR_ANY && json_array_size(cur) == 0))
            t = type_of(cur);
        if (!op_supported(t, op)) {
            json_decref(cur);
            return item_fail(x, &w, i, "OperationNotSupportedError", "Operation %s is not "
                             "supported for type %s (%s); pick an operation for %s",
                             opname ? opname : "(none)", type_name(t), st, type_name(t));
        }
        if (from_var && !variable_input_ok(op)) {
            json_decref(cur);
            return item_fail(x, &w, i, "InputTypeNotSupportedError", "Input type variable is "
                             "not supported for operation %s; set input_type: constant and "
                             "give the value", opname);
        }
        if (!from_var && !constant_input_ok(t, op)) {
            json_decref(cur);
            return item_fail(x, &w, i, "InputTypeNotSupportedError", "Input type constant is "
                             "not supported for operation %s on %s; Dify takes %s with "
                             "input_type: variable", opname, type_name(t),
                             takes_no_value(op) ? "this operation" : "the value from a variable");
        }
        const sl_value *raw = json_object_get(it, "value");
        sl_value *in = NULL;
        if (from_var && !takes_no_value(op) && raw && !json_is_null(raw)) {
            in = json_is_array(raw) ? work_get(x, &w, raw) : NULL;
            if (!in) {
                sel_text(raw, vt, sizeof vt);
                json_decref(cur);
                return item_fail(x, &w, i, "VariableNotFoundError", "Variable %s not found; "
                                 "the value must select a variable that has run on this path",
                                 vt);
            }
            if (json_is_null(in)) { /* Dify skips an item whose input is None */
                json_decref(in);
                json_decref(cur);
                continue;
            }
        } else if (raw) {
            in = json_incref((sl_value *)raw);
        }
        if (op == OP_SET && t == T_OBJECT && json_is_string(in)) {
            json_error_t je;
            sl_value *parsed = json_loadb(json_string_value(in), json_string_length(in),
                                          JSON_DECODE_ANY, &je);
            if (!parsed) {
                brief(in, b, sizeof b);
                json_decref(in);
                json_decref(cur);
                return item_fail(x, &w, i, "InvalidInputValueError", "Invalid input value %s: "
                                 "not JSON (%s); write a JSON object such as {\"k\": 1}", b,
                                 je.text);
            }
            json_decref(in);
            in = parsed;
        }
        if (!input_valid(t, op, in)) {
            brief(in, b, sizeof b);
            json_decref(in);
            json_decref(cur);
            if (op == OP_DIV && sl_value_is_number(in))
                return item_fail(x, &w, i, "InvalidInputValueError", "Invalid input value %s: "
                                 "cannot divide %s by zero", b, st);
            return item_fail(x, &w, i, "InvalidInputValueError", "Invalid input value %s for "
                             "%s on %s (%s); give a value of the variable's type%s", b, opname,
                             type_name(t), st,
                             op == OP_APPEND ? " (one item)"
                             : is_array_type(t) ? " (a list)" : "");
        }
        sl_value *nv = apply_op(t, op, cur, in);
        json_decref(in);
        json_decref(cur);
        work_set(&w, sel, nv);
    }

    /* process_data: each variable's new value, then Dify's update list. */
    sl_value *updates = json_array();
    for (size_t i = 0; i < json_array_size(w.sels); i++) {
        const sl_value *sel = json_array_get(w.sels, i);
        const sl_value *v = json_array_get(w.values, i);
        sl_exec_process(x, json_string_value(json_array_get(sel, 1)), json_incref((sl_value *)v));
        json_array_append_new(updates, updated_entry(sel, v));
    }
    sl_exec_process(x, "__updated_variables", updates);
    int rc = commit(x, &w);
    json_decref(w.sels);
    json_decref(w.values);
    return rc;
}

static int run_v1(sl_node_exec *x, const sl_value *data)
{
    const sl_value *target = json_object_get(data, "assigned_variable_selector");
    const sl_value *source = json_object_get(data, "input_variable_selector");
    const char *mode = json_string_value(json_object_get(data, "write_mode"));
    char st[256], b[200];
    sel_text(target, st, sizeof st);
    sl_value *cur = json_is_array(target) ? sl_exec_get(x, target) : NULL;
    if (!cur)
        return sl_exec_fail(x, "VariableOperatorNodeError", "assigned variable %s not found; "
                            "assign a declared conversation variable or a variable of the "
                            "enclosing loop", st);
    sl_value *income = NULL, *nv = NULL;
    if (mode && strcmp(mode, "clear") == 0) {
        income = zero_of(type_of(cur));
        nv = json_incref(income);
    } else {
        income = json_is_array(source) ? sl_exec_get(x, source) : NULL;
        if (!income) {
            char src[256];
            sel_text(source, src, sizeof src);
            json_decref(cur);
            return sl_exec_fail(x, "VariableOperatorNodeError", "input value not found: "
                                "variable %s has no value on this path; pick a variable that "
                                "has run before this node", src);
        }
        if (mode && strcmp(mode, "append") == 0) {
            if (!json_is_array(cur)) {
                brief(cur, b, sizeof b);
                json_decref(cur);
                json_decref(income);
                return sl_exec_fail(x, "VariableOperatorNodeError", "append mode requires an "
                                    "array variable, but %s is %s (%s); use over-write",
                                    st, type_name(type_of(cur)), b);
            }
            nv = json_copy(cur);
            json_array_append(nv, income);
        } else {
            nv = json_incref(income);
        }
    }
    json_decref(cur);
    sl_exec_input(x, "value", income);
    sl_value *sel2 = json_array();
    json_array_append(sel2, json_array_get(target, 0));
    json_array_append(sel2, json_array_get(target, 1));
    sl_value *updates = json_array();
    json_array_append_new(updates, updated_entry(sel2, nv));
    sl_exec_process(x, "__updated_variables", updates);
    int rc = sl_exec_assign(x, sel2, nv);
    json_decref(sel2);
    return rc;
}

/* Version "2" (text or number) selects the item list; anything else that
 * is not "1" is refused at load. */
static int version_of(const sl_value *data)
{
    const sl_value *v = json_object_get(data, "version");
    if (!v || json_is_null(v))
        return 1;
    if (json_is_string(v))
        return strcmp(json_string_value(v), "2") == 0 ? 2
               : strcmp(json_string_value(v), "1") == 0 ? 1 : 0;
    if (json_is_integer(v))
        return json_integer_value(v) == 2 ? 2 : json_integer_value(v) == 1 ? 1 : 0;
    return 0;
}

static int run(sl_node_exec *x)
{
    const sl_value *data = sl_exec_data(x);
    return version_of(data) == 2 ? run_v2(x, data) : run_v1(x, data);
}

/* ---- load-time checks ---- */

/* The declared type of an assignable variable, T_UNKNOWN when not found. */
static vtype declared_type(const sl_graph *g, const sl_value *sel)
{
    const char *scope = json_string_value(json_array_get(sel, 0));
    const char *name = json_string_value(json_array_get(sel, 1));
    if (!scope || !name)
        return T_UNKNOWN;
    const sl_value *list;
    const char *name_key, *type_key;
    if (strcmp(scope, "conversation") == 0) {
        list = g->conv_vars;
        name_key = "name";
        type_key = "value_type";
    } else {
        int t = sl_graph_find(g, scope);
        if (t < 0)
            return T_UNKNOWN;
        list = json_object_get(g->nodes[t].data, "loop_variables");
        name_key = "label";
        type_key = "var_type";
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *e = json_array_get(list, i);
        const char *nm = json_string_value(json_object_get(e, name_key));
        if (nm && strcmp(nm, name) == 0)
            return type_from_name(json_string_value(json_object_get(e, type_key)));
    }
    return T_UNKNOWN;
}

/* A target must be a whole conversation variable or a variable of a loop
 * that encloses this node. */
static int check_target(sl_check *c, const sl_gnode *n, const sl_value *holder, const char *key,
                        const char *field)
{
    if (sl_check_selector(c, n, holder, key, field, true) < 0)
        return -1;
    const sl_value *sel = json_object_get(holder, key);
    const char *scope = json_string_value(json_array_get(sel, 0));
    if (json_array_size(sel) != 2) {
        sl_check_error(c, n, holder, key, field, "assigns a whole variable: write [%s, %s] "
                       "without a path inside it", scope,
                       json_string_value(json_array_get(sel, 1)));
        return -1;
    }
    if (strcmp(scope, "conversation") == 0)
        return 0;
    const sl_graph *g = sl_check_graph(c);
    int t = sl_graph_find(g, scope);
    for (int p = n->parent; t >= 0 && p >= 0; p = g->nodes[p].parent)
        if (p == t && strcmp(g->nodes[p].type, "loop") == 0)
            return 0;
    sl_check_error(c, n, holder, key, field, "'%s' is not assignable: only conversation "
                   "variables and the variables of a loop that contains this node can be "
                   "assigned; pick one of those",
                   scope);
    return -1;
}

static int check_v1(sl_check *c, const sl_gnode *n)
{
    const sl_value *data = n->data;
    int bad = check_target(c, n, data, "assigned_variable_selector",
                           "assigned_variable_selector") < 0;
    const sl_value *mv = json_object_get(data, "write_mode");
    const char *mode = json_string_value(mv);
    if (!mode || (strcmp(mode, "over-write") && strcmp(mode, "append") && strcmp(mode, "clear"))) {
        if (mode)
            sl_check_error(c, n, data, "write_mode", "write_mode", "unknown write mode '%s'; "
                           "use over-write, append or clear", mode);
        else
            sl_check_error(c, n, data, mv ? "write_mode" : NULL, "write_mode", "missing or not "
                           "text; use over-write, append or clear");
        return -1;
    }
    if (strcmp(mode, "clear") != 0)
        bad |= sl_check_selector(c, n, data, "input_variable_selector", "input_variable_selector",
                                 true) < 0;
    if (!bad && strcmp(mode, "append") == 0) {
        vtype t = declared_type(sl_check_graph(c), json_object_get(data,
                                                                   "assigned_variable_selector"));
        if (t != T_UNKNOWN && !is_array_type(t))
            sl_check_warn(c, n, data, "write_mode", "write_mode", "append needs an array "
                          "variable, and the target is declared %s; the node will fail when it "
                          "runs: use over-write", type_name(t));
    }
    return bad ? -1 : 0;
}

static int check_v2(sl_check *c, const sl_gnode *n)
{
    const sl_value *items = json_object_get(n->data, "items");
    if (!items || json_is_null(items))
        return 0;
    if (!json_is_array(items)) {
        sl_check_error(c, n, n->data, "items", "items", "must be a list of {variable_selector, "
                       "input_type, operation, value}");
        return -1;
    }
    int bad = 0;
    char f[96];
    for (size_t i = 0; i < json_array_size(items); i++) {
        const sl_value *it = json_array_get(items, i);
        if (!json_is_object(it)) {
            snprintf(f, sizeof f, "items[%zu]", i);
            sl_check_error(c, n, it, NULL, f, "must be a mapping {variable_selector, input_type, "
                           "operation, value}");
            bad = 1;
            continue;
        }
        snprintf(f, sizeof f, "items[%zu].variable_selector", i);
        bool target_ok = check_target(c, n, it, "variable_selector", f) == 0;
        bad |= !target_ok;
        const sl_value *ov = json_object_get(it, "operation");
        aop op = op_of(json_string_value(ov));
        snprintf(f, sizeof f, "items[%zu].operation", i);
        if (op == OP_BAD) {
            if (json_is_string(ov))
                sl_check_error(c, n, it, "operation", f, "unknown operation '%s'; use one of "
                               V2_OPS, json_string_value(ov));
            else
                sl_check_error(c, n, it, ov ? "operation" : NULL, f, "missing or not text; use "
                               "one of " V2_OPS);
            bad = 1;
        }
        const sl_value *iv = json_object_get(it, "input_type");
        const char *itype = json_string_value(iv);
        snprintf(f, sizeof f, "items[%zu].input_type", i);
        if (!itype || (strcmp(itype, "variable") && strcmp(itype, "constant"))) {
            if (itype)
                sl_check_error(c, n, it, "input_type", f, "unknown input type '%s'; use variable "
                               "(value is a selector) or constant (value is the value)", itype);
            else
                sl_check_error(c, n, it, iv ? "input_type" : NULL, f, "missing or not text; use "
                               "variable (value is a selector) or constant (value is the value)");
            bad = 1;
            continue;
        }
        if (op == OP_BAD)
            continue;
        bool from_var = strcmp(itype, "variable") == 0;
        if (from_var && !takes_no_value(op) && variable_input_ok(op)) {
            snprintf(f, sizeof f, "items[%zu].value", i);
            bad |= sl_check_selector(c, n, it, "value", f, true) < 0;
        }
        if (from_var && !variable_input_ok(op))
            sl_check_warn(c, n, it, "input_type", f, "operation %s takes a constant; Dify fails "
                          "this item when it runs: set input_type: constant", op_names[op]);
        if (!from_var && (takes_no_value(op) || op == OP_APPEND || op == OP_EXTEND))
            sl_check_warn(c, n, it, "input_type", f, "operation %s does not take a constant; "
                          "Dify fails this item when it runs: set input_type: variable",
                          op_names[op]);
        if (target_ok) {
            vtype t = declared_type(sl_check_graph(c), json_object_get(it, "variable_selector"));
            snprintf(f, sizeof f, "items[%zu].operation", i);
            if (t != T_UNKNOWN && !op_supported(t, op))
                sl_check_warn(c, n, it, "operation", f, "operation %s is not supported for a "
                              "%s variable; Dify fails this item when it runs", op_names[op],
                              type_name(t));
        }
    }
    return bad ? -1 : 0;
}

static int check(sl_check *c, const sl_gnode *n)
{
    switch (version_of(n->data)) {
    case 1: return check_v1(c, n);
    case 2: return check_v2(c, n);
    default:
        sl_check_error(c, n, n->data, "version", "version", "unknown assigner version; Dify "
                       "writes '1' (assigned_variable_selector, write_mode) or '2' (items)");
        return -1;
    }
}

const sl_node_kind sl_kind_assigner = {.type = "assigner", .check = check, .run = run};
