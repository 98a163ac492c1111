/*
 * cond — Dify's comparison operators and condition lists (see cond.h).
 *
 * Every operator below mirrors graphon's condition processor; the comment
 * above each says what Dify does when it is not obvious.  Values are
 * jansson values read the way Dify's segments hold them: JSON null is
 * Python None, true/false are bool (and, as in Python, count as the
 * integers 1/0 wherever numbers are compared), integers stay integers.
 */
#include "nodes/cond.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "engine/graph.h"
#include "engine/limits.h"

typedef enum {
    OP_CONTAINS,
    OP_NOT_CONTAINS,
    OP_START_WITH,
    OP_END_WITH,
    OP_IS,
    OP_IS_NOT,
    OP_EMPTY,
    OP_NOT_EMPTY,
    OP_IN,
    OP_NOT_IN,
    OP_ALL_OF,
    OP_EQ,
    OP_NE,
    OP_GT,
    OP_LT,
    OP_GE,
    OP_LE,
    OP_NULL,
    OP_NOT_NULL,
    OP_EXISTS,
    OP_NOT_EXISTS,
    OP_UNKNOWN,
} cond_op;

static const struct {
    const char *name;
    cond_op op;
} op_names[] = {
    {"contains", OP_CONTAINS}, {"not contains", OP_NOT_CONTAINS},
    {"start with", OP_START_WITH}, {"end with", OP_END_WITH},
    {"is", OP_IS}, {"is not", OP_IS_NOT},
    {"empty", OP_EMPTY}, {"not empty", OP_NOT_EMPTY},
    {"in", OP_IN}, {"not in", OP_NOT_IN}, {"all of", OP_ALL_OF},
    {"=", OP_EQ}, {"≠", OP_NE}, {">", OP_GT}, {"<", OP_LT}, {"≥", OP_GE}, {"≤", OP_LE},
    {"null", OP_NULL}, {"not null", OP_NOT_NULL},
    {"exists", OP_EXISTS}, {"not exists", OP_NOT_EXISTS},
};

#define KNOWN_OPS "contains, not contains, start with, end with, is, is not, empty, " \
                  "not empty, in, not in, all of, =, ≠, >, <, ≥, ≤, null, not null, " \
                  "exists, not exists"

static cond_op op_of(const char *name)
{
    if (!name)
        return OP_UNKNOWN;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (strcmp(op_names[i].name, name) == 0)
            return op_names[i].op;
    return OP_UNKNOWN;
}

bool sl_cond_op_known(const char *op)
{
    return op_of(op) != OP_UNKNOWN;
}

/* ---- errors ---- */

/* A condition that cannot be evaluated: SL_EINVAL with the Python class
 * Dify names (ValueError, TypeError) as the error_type. */
#define cerr(e, type, ...) sl_err_typed((e), SL_EINVAL, (type), __VA_ARGS__)

/* Prepends context ("condition 2 (start.x): ") to an error on the way up. */
static void cerr_prefix(sl_err *e, const char *prefix)
{
    if (!e || !e->msg)
        return;
    char *m = sl_xasprintf("%s%s", prefix, e->msg);
    free(e->msg);
    e->msg = m;
}

/* A short rendering of a value for messages: its Dify type and its JSON,
 * cut at 80 bytes so a large list does not swamp the message. */
static void brief(const sl_value *v, char *out, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 256);
    if (!v || json_is_null(v))
        sl_buf_adds(&b, "None");
    else
        sl_value_json(v, &b);
    const char *text = b.data ? b.data : "";
    if (b.len > 80 || b.toobig)
        snprintf(out, n, "%s %.77s…", sl_value_type_name(v), text);
    else
        snprintf(out, n, "%s %s", sl_value_type_name(v), text);
    sl_buf_release(&b);
}

/* "start.x" for messages; Dify shows selectors as lists, dots read better
 * and match the {{#start.x#}} form users type. */
static void sel_text(const sl_value *sel, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (!json_is_array(sel)) {
        snprintf(out, n, "(no selector)");
        return;
    }
    for (size_t i = 0; i < json_array_size(sel) && len + 1 < n; i++) {
        const char *p = json_string_value(json_array_get(sel, i));
        int w = snprintf(out + len, n - len, "%s%s", i ? "." : "", p ? p : "?");
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* ---- Python value semantics ---- */

static bool is_none(const sl_value *v)
{
    return !v || json_is_null(v);
}

/* int, float or bool: Python's bool is an int subclass. */
static bool is_numlike(const sl_value *v)
{
    return v && (json_is_integer(v) || json_is_real(v) || json_is_boolean(v));
}

static bool is_intlike(const sl_value *v)
{
    return v && (json_is_integer(v) || json_is_boolean(v));
}

static json_int_t int_of(const sl_value *v)
{
    if (json_is_boolean(v))
        return json_is_true(v) ? 1 : 0;
    return json_integer_value(v);
}

static double dbl_of(const sl_value *v)
{
    if (json_is_real(v))
        return json_real_value(v);
    return (double)int_of(v);
}

bool sl_cond_py_equal(const sl_value *a, const sl_value *b)
{
    if (is_none(a) || is_none(b))
        return is_none(a) && is_none(b);
    if (is_numlike(a) && is_numlike(b)) {
        if (is_intlike(a) && is_intlike(b))
            return int_of(a) == int_of(b);
        return dbl_of(a) == dbl_of(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!sl_cond_py_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        sl_value *va;
        json_object_foreach((sl_value *)a, k, va) {
            const sl_value *vb = json_object_get(b, k);
            if (!vb || !sl_cond_py_equal(va, vb))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

static void py_repr_str(const char *s, size_t n, sl_buf *out)
{
    /* Python picks double quotes only when the text has a single quote
     * and no double quote. */
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    sl_buf_addc(out, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\\' || ch == (unsigned char)q) {
            sl_buf_addc(out, '\\');
            sl_buf_addc(out, (char)ch);
        } else if (ch == '\n') {
            sl_buf_adds(out, "\\n");
        } else if (ch == '\r') {
            sl_buf_adds(out, "\\r");
        } else if (ch == '\t') {
            sl_buf_adds(out, "\\t");
        } else if (ch < 0x20 || ch == 0x7f) {
            sl_buf_addf(out, "\\x%02x", ch);
        } else {
            sl_buf_addc(out, (char)ch);
        }
    }
    sl_buf_addc(out, q);
}

static int py_repr(const sl_value *v, sl_buf *out, int depth)
{
    char num[32];
    if (depth > 64)
        return sl_buf_adds(out, "...");
    if (is_none(v))
        return sl_buf_adds(out, "None");
    switch (json_typeof(v)) {
    case JSON_TRUE: return sl_buf_adds(out, "True");
    case JSON_FALSE: return sl_buf_adds(out, "False");
    case JSON_INTEGER: return sl_buf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        sl_fmt_double(json_real_value(v), num);
        return sl_buf_adds(out, num);
    case JSON_STRING:
        py_repr_str(json_string_value(v), json_string_length(v), out);
        return out->toobig ? -1 : 0;
    case JSON_ARRAY:
        sl_buf_addc(out, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sl_buf_adds(out, ", ");
            py_repr(json_array_get(v, i), out, depth + 1);
        }
        return sl_buf_addc(out, ']');
    case JSON_OBJECT: {
        const char *k;
        sl_value *e;
        bool first = true;
        sl_buf_addc(out, '{');
        json_object_foreach((sl_value *)v, k, e) {
            if (!first)
                sl_buf_adds(out, ", ");
            first = false;
            py_repr_str(k, strlen(k), out);
            sl_buf_adds(out, ": ");
            py_repr(e, out, depth + 1);
        }
        return sl_buf_addc(out, '}');
    }
    default:
        return 0;
    }
}

int sl_cond_py_str(const sl_value *v, sl_buf *out)
{
    if (json_is_string(v))
        return sl_buf_add(out, json_string_value(v), json_string_length(v));
    return py_repr(v, out, 0);
}

static bool py_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Copies digits from *p into out while they form Python's digit groups
 * (underscores only between digits); returns the count of digits. */
static size_t take_digits(const char **p, char *out, size_t *olen, size_t cap)
{
    const char *s = *p;
    size_t nd = 0;
    while (*s >= '0' && *s <= '9') {
        if (*olen + 1 < cap)
            out[(*olen)++] = *s;
        nd++;
        s++;
        if (*s == '_' && s[1] >= '0' && s[1] <= '9')
            s++;
    }
    *p = s;
    return nd;
}

int sl_cond_py_int(const char *s, json_int_t *out)
{
    char clean[80];
    size_t len = 0;
    if (!s)
        return -1;
    while (py_space(*s))
        s++;
    if (*s == '+' || *s == '-')
        clean[len++] = *s++;
    size_t nd = take_digits(&s, clean, &len, sizeof clean);
    while (py_space(*s))
        s++;
    if (nd == 0 || *s || nd > 40)
        return -1;
    clean[len] = '\0';
    errno = 0;
    char *end;
    long long v = strtoll(clean, &end, 10);
    if (errno == ERANGE || *end)
        return -1;
    *out = (json_int_t)v;
    return 0;
}

int sl_cond_py_float(const char *s, double *out)
{
    char clean[400];
    size_t len = 0;
    if (!s)
        return -1;
    while (py_space(*s))
        s++;
    bool neg = false;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    const char *words[] = {"infinity", "inf", "nan"};
    for (size_t i = 0; i < 3; i++) {
        size_t wl = strlen(words[i]);
        if (strncasecmp(s, words[i], wl) == 0) {
            const char *t = s + wl;
            while (py_space(*t))
                t++;
            if (*t)
                continue;
            double d = i < 2 ? INFINITY : NAN;
            *out = neg ? -d : d;
            return 0;
        }
    }
    if (neg)
        clean[len++] = '-';
    size_t nd = take_digits(&s, clean, &len, sizeof clean);
    if (*s == '.') {
        clean[len++] = '.';
        s++;
        nd += take_digits(&s, clean, &len, sizeof clean);
    }
    if (nd == 0)
        return -1;
    if (*s == 'e' || *s == 'E') {
        if (len + 2 < sizeof clean)
            clean[len++] = 'e';
        s++;
        if (*s == '+' || *s == '-') {
            if (len + 2 < sizeof clean)
                clean[len++] = *s;
            s++;
        }
        if (take_digits(&s, clean, &len, sizeof clean) == 0)
            return -1;
    }
    while (py_space(*s))
        s++;
    if (*s || len + 1 >= sizeof clean)
        return -1;
    clean[len] = '\0';
    *out = strtod(clean, NULL); /* overflow gives ±inf, as Python's float() */
    return 0;
}

/* Python's `needle in haystack` for text: substring search with lengths
 * (jansson strings may hold NUL bytes). */
static bool text_has(const sl_value *hay, const char *needle, size_t nl)
{
    if (nl == 0)
        return true;
    return memmem(json_string_value(hay), json_string_length(hay), needle, nl) != NULL;
}

static bool array_has(const sl_value *arr, const sl_value *item)
{
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (sl_cond_py_equal(json_array_get(arr, i), item))
            return true;
    return false;
}

/* ---- one comparison ---- */

static int op_contains(const sl_value *actual, const sl_value *expected, bool *out,
                       sl_err *err, const char *opname)
{
    char b1[160];
    if (json_is_string(actual)) {
        /* Dify: str(expected) in value, so a non-text expected value is
         * compared by its Python text. */
        if (json_is_string(expected)) {
            *out = text_has(actual, json_string_value(expected), json_string_length(expected));
        } else {
            sl_buf t;
            sl_buf_init(&t, 1 << 20);
            sl_cond_py_str(expected, &t);
            *out = text_has(actual, t.data ? t.data : "", t.len);
            sl_buf_release(&t);
        }
        return 0;
    }
    if (json_is_array(actual)) {
        *out = array_has(actual, expected);
        return 0;
    }
    brief(actual, b1, sizeof b1);
    return cerr(err, "ValueError", "operator '%s' works on text or arrays, but the value is %s; "
                "use a number operator (=, >, ...) or compare another variable", opname, b1);
}

static int need_text(const sl_value *actual, const sl_value *expected, const char *opname,
                     sl_err *err)
{
    char b[160];
    if (!json_is_string(actual)) {
        brief(actual, b, sizeof b);
        return cerr(err, "TypeError", "operator '%s' works on text, but the value is %s", opname, b);
    }
    if (!json_is_string(expected)) {
        brief(expected, b, sizeof b);
        return cerr(err, "TypeError", "operator '%s' needs a text to compare with, but the "
                    "expected value is %s; put the text in the condition's value", opname, b);
    }
    return 0;
}

static bool text_starts(const sl_value *a, const sl_value *e)
{
    size_t al = json_string_length(a), el = json_string_length(e);
    return el <= al && memcmp(json_string_value(a), json_string_value(e), el) == 0;
}

static bool text_ends(const sl_value *a, const sl_value *e)
{
    size_t al = json_string_length(a), el = json_string_length(e);
    return el <= al && memcmp(json_string_value(a) + al - el, json_string_value(e), el) == 0;
}

static const char *py_class(const sl_value *v)
{
    if (is_none(v)) return "NoneType";
    if (json_is_boolean(v)) return "bool";
    if (json_is_integer(v)) return "int";
    if (json_is_real(v)) return "float";
    if (json_is_string(v)) return "str";
    if (json_is_array(v)) return "list";
    return "dict";
}

/* = and ≠: Dify converts the expected value to the type of the actual one
 * (bool(), int(), float()), so "3" equals 3 and any non-empty text is True
 * next to a boolean.  int() of "3.5" is an error, as in Python. */
static int op_equal(const sl_value *actual, const sl_value *expected, bool *out,
                    sl_err *err, const char *opname)
{
    char b[160];
    if (json_is_boolean(actual)) {
        bool e;
        if (json_is_boolean(expected) || json_is_integer(expected) || json_is_string(expected)) {
            e = sl_value_truthy(expected);
        } else {
            brief(expected, b, sizeof b);
            return cerr(err, "ValueError", "operator '%s' on a boolean cannot use the expected "
                        "value %s (Cannot convert <class '%s'> to bool); use true or false",
                        opname, b, py_class(expected));
        }
        *out = json_is_true(actual) == e;
        return 0;
    }
    if (json_is_integer(actual)) {
        json_int_t e;
        if (is_intlike(expected)) {
            e = int_of(expected);
        } else if (json_is_real(expected)) {
            double d = json_real_value(expected);
            if (!isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
                return cerr(err, "ValueError", "operator '%s': cannot convert %g to an integer "
                            "to compare with %" JSON_INTEGER_FORMAT, opname, d,
                            json_integer_value(actual));
            e = (json_int_t)d;
        } else if (json_is_string(expected)) {
            if (sl_cond_py_int(json_string_value(expected), &e) < 0)
                return cerr(err, "ValueError", "operator '%s': the value is the integer %"
                            JSON_INTEGER_FORMAT ", and '%s' is not a whole number (invalid "
                            "literal for int() with base 10); write a whole number such as 3",
                            opname, json_integer_value(actual), json_string_value(expected));
        } else {
            brief(expected, b, sizeof b);
            return cerr(err, "ValueError", "operator '%s' on a number cannot use the expected "
                        "value %s (Cannot convert <class '%s'> to int); write a number",
                        opname, b, py_class(expected));
        }
        *out = json_integer_value(actual) == e;
        return 0;
    }
    if (json_is_real(actual)) {
        double e;
        if (is_numlike(expected)) {
            e = dbl_of(expected);
        } else if (json_is_string(expected)) {
            if (sl_cond_py_float(json_string_value(expected), &e) < 0)
                return cerr(err, "ValueError", "operator '%s': '%s' is not a number (could not "
                            "convert string to float); write a number such as 2.5",
                            opname, json_string_value(expected));
        } else {
            brief(expected, b, sizeof b);
            return cerr(err, "ValueError", "operator '%s' on a number cannot use the expected "
                        "value %s (Cannot convert <class '%s'> to float); write a number",
                        opname, b, py_class(expected));
        }
        *out = json_real_value(actual) == e;
        return 0;
    }
    brief(actual, b, sizeof b);
    return cerr(err, "ValueError", "operator '%s' works on numbers or booleans, but the value "
                "is %s; use 'is' / 'contains' for text", opname, b);
}

/* >, <, ≥, ≤: -1, 0, 1 for actual vs expected.  Dify turns text into a
 * float, then compares an integer value with an integral float as
 * integers, otherwise as floats. */
static int num_compare(const sl_value *actual, const sl_value *expected, int *cmp,
                       sl_err *err, const char *opname)
{
    char b[160];
    if (!is_numlike(actual)) {
        brief(actual, b, sizeof b);
        return cerr(err, "ValueError", "operator '%s' works on numbers, but the value is %s; "
                    "convert it to a number first (e.g. with a code node)", opname, b);
    }
    bool as_int = false;
    json_int_t ai = 0, ei = 0;
    double ad = 0, ed = 0;
    if (json_is_string(expected)) {
        if (sl_cond_py_float(json_string_value(expected), &ed) < 0)
            return cerr(err, "ValueError", "operator '%s': Cannot convert '%s' to number; "
                        "write a number such as 10 or 2.5", opname, json_string_value(expected));
        if (is_intlike(actual) && isfinite(ed) && ed == sl_floor(ed) && fabs(ed) < 9.2e18) {
            as_int = true;
            ai = int_of(actual);
            ei = (json_int_t)ed;
        } else {
            ad = dbl_of(actual);
        }
    } else if (json_is_real(expected)) {
        ad = dbl_of(actual);
        ed = json_real_value(expected);
    } else if (is_intlike(expected)) {
        if (is_intlike(actual)) {
            as_int = true;
            ai = int_of(actual);
            ei = int_of(expected);
        } else {
            ad = dbl_of(actual);
            ed = (double)int_of(expected);
        }
    } else {
        brief(expected, b, sizeof b);
        return cerr(err, "ValueError", "operator '%s': Cannot convert <class '%s'> to number "
                    "(expected value %s); write a number", opname, py_class(expected), b);
    }
    if (as_int)
        *cmp = ai < ei ? -1 : ai > ei;
    else if (isnan(ad) || isnan(ed))
        *cmp = 2; /* unordered: every comparison is false, as with Python's nan */
    else
        *cmp = ad < ed ? -1 : ad > ed;
    return 0;
}

/* `all of` wants a list of texts or a list of booleans. */
static int op_all_of(const sl_value *actual, const sl_value *expected, bool *out,
                     sl_err *err)
{
    char b[160];
    bool all_str = json_is_array(expected), all_bool = json_is_array(expected);
    for (size_t i = 0; json_is_array(expected) && i < json_array_size(expected); i++) {
        const sl_value *e = json_array_get(expected, i);
        all_str = all_str && json_is_string(e);
        all_bool = all_bool && json_is_boolean(e);
    }
    if (!all_str && !all_bool) {
        brief(expected, b, sizeof b);
        return cerr(err, "ValueError", "operator 'all of' expects a list of texts or a list of "
                    "booleans as the value, got %s; list the items, e.g. ['a', 'b']", b);
    }
    if (!sl_value_truthy(actual)) {
        *out = false;
        return 0;
    }
    bool r = true;
    if (json_is_array(actual)) {
        for (size_t i = 0; r && i < json_array_size(expected); i++)
            r = array_has(actual, json_array_get(expected, i));
    } else if (json_is_string(actual) && all_str) {
        for (size_t i = 0; r && i < json_array_size(expected); i++) {
            const sl_value *e = json_array_get(expected, i);
            r = text_has(actual, json_string_value(e), json_string_length(e));
        }
    } else {
        r = false;
    }
    *out = r;
    return 0;
}

int sl_cond_eval_one(const char *opname, const sl_value *actual, const sl_value *expected,
                     bool *out, sl_err *err)
{
    char b[160];
    int cmp = 0;
    if (actual && json_is_null(actual))
        actual = NULL;
    if (expected && json_is_null(expected))
        expected = NULL;
    switch (op_of(opname)) {
    case OP_CONTAINS:
        /* An empty value contains nothing; it "does not contain" anything. */
        if (!sl_value_truthy(actual)) {
            *out = false;
            return 0;
        }
        return op_contains(actual, expected, out, err, opname);
    case OP_NOT_CONTAINS:
        if (!sl_value_truthy(actual)) {
            *out = true;
            return 0;
        }
        if (op_contains(actual, expected, out, err, opname) < 0)
            return -1;
        *out = !*out;
        return 0;
    case OP_START_WITH:
    case OP_END_WITH:
        if (!sl_value_truthy(actual)) {
            *out = false;
            return 0;
        }
        if (need_text(actual, expected, opname, err) < 0)
            return -1;
        *out = op_of(opname) == OP_START_WITH ? text_starts(actual, expected)
                                              : text_ends(actual, expected);
        return 0;
    case OP_IS:
    case OP_IS_NOT:
        /* None is neither "is" nor "is not" anything in Dify. */
        if (!actual) {
            *out = false;
            return 0;
        }
        if (!json_is_string(actual) && !json_is_boolean(actual)) {
            brief(actual, b, sizeof b);
            return cerr(err, "ValueError", "operator '%s' works on text or booleans, but the "
                        "value is %s; use '=' / '≠' for numbers", opname, b);
        }
        *out = sl_cond_py_equal(actual, expected) == (op_of(opname) == OP_IS);
        return 0;
    case OP_EMPTY:
        *out = !sl_value_truthy(actual);
        return 0;
    case OP_NOT_EMPTY:
        *out = sl_value_truthy(actual);
        return 0;
    case OP_EQ:
    case OP_NE:
        if (!actual) {
            *out = false;
            return 0;
        }
        if (op_equal(actual, expected, out, err, opname) < 0)
            return -1;
        if (op_of(opname) == OP_NE)
            *out = !*out;
        return 0;
    case OP_GT:
    case OP_LT:
    case OP_GE:
    case OP_LE:
        if (!actual) {
            *out = false;
            return 0;
        }
        if (num_compare(actual, expected, &cmp, err, opname) < 0)
            return -1;
        switch (op_of(opname)) {
        case OP_GT: *out = cmp == 1; break;
        case OP_LT: *out = cmp == -1; break;
        case OP_GE: *out = cmp == 1 || cmp == 0; break;
        default: *out = cmp == -1 || cmp == 0; break;
        }
        return 0;
    case OP_NULL:
        *out = !actual;
        return 0;
    case OP_NOT_NULL:
        *out = actual != NULL;
        return 0;
    case OP_IN:
    case OP_NOT_IN:
        if (!actual) {
            *out = op_of(opname) == OP_NOT_IN;
            return 0;
        }
        if (!json_is_array(expected)) {
            brief(expected, b, sizeof b);
            return cerr(err, "ValueError", "operator '%s' needs a list as the expected value, "
                        "got %s; give the choices as a list, e.g. ['a', 'b']", opname, b);
        }
        *out = array_has(expected, actual) == (op_of(opname) == OP_IN);
        return 0;
    case OP_ALL_OF:
        return op_all_of(actual, expected, out, err);
    case OP_EXISTS:
        *out = actual != NULL;
        return 0;
    case OP_NOT_EXISTS:
        *out = !actual;
        return 0;
    case OP_UNKNOWN:
        break;
    }
    return cerr(err, "ValueError", "Unsupported operator: '%s'; use one of " KNOWN_OPS,
                opname ? opname : "(none)");
}

/* ---- files ---- */

static const char *const file_attrs[] = {
    "type", "size", "name", "mime_type", "transfer_method", "url", "extension", "related_id",
    NULL};

static bool attr_known(const char *key)
{
    for (const char *const *a = file_attrs; *a; a++)
        if (strcmp(*a, key) == 0)
            return true;
    return false;
}

sl_value *sl_cond_file_attr(const sl_value *file, const char *key, bool *known)
{
    *known = true;
    const char *field = NULL;
    if (strcmp(key, "name") == 0)
        field = "filename";
    else if (strcmp(key, "url") == 0) {
        /* Dify generates the URL: the remote one for remote files, a
         * signed one for stored files (which sluice keeps in "url"). */
        const sl_value *u = json_object_get(file, "url");
        if (!json_is_string(u) || json_string_length(u) == 0)
            u = json_object_get(file, "remote_url");
        if (is_none(u))
            return NULL;
        return json_incref((sl_value *)u);
    } else {
        for (const char *const *a = file_attrs; *a; a++)
            if (strcmp(*a, key) == 0)
                field = key;
    }
    if (!field) {
        *known = false;
        return NULL;
    }
    const sl_value *v = json_object_get(file, field);
    if (is_none(v))
        return NULL;
    return json_incref((sl_value *)v);
}

static bool is_file_array(const sl_value *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return false;
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!sl_value_is_file(json_array_get(v, i)))
            return false;
    return true;
}

/* A sub-condition value as Dify reads it: text, a list of texts, or None;
 * sluice also reads a number as its text.  New reference or NULL. */
static sl_value *sub_expected(const sl_value *v)
{
    if (is_none(v))
        return NULL;
    if (sl_value_is_number(v)) {
        sl_buf b;
        sl_buf_init(&b, 64);
        sl_value_text(v, &b);
        sl_value *s = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return s;
    }
    return json_incref((sl_value *)v);
}

/* Evaluates sub_variable_condition on every file.  Per sub-condition, the
 * files are combined with all() when the operator says "not" (no file may
 * match) and with any() otherwise (some file matches) — Dify's rule. */
static int file_sub_conditions(const sl_value *files, const sl_value *subc, bool *out,
                               sl_err *err)
{
    const char *lop = json_string_value(json_object_get(subc, "logical_operator"));
    bool is_or = lop && strcmp(lop, "or") == 0;
    const sl_value *conds = json_object_get(subc, "conditions");
    bool group = !is_or;
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const sl_value *sc = json_array_get(conds, i);
        const char *key = json_string_value(json_object_get(sc, "key"));
        const char *op = json_string_value(json_object_get(sc, "comparison_operator"));
        char where[96];
        snprintf(where, sizeof where, "file sub-condition %zu (%s): ", i + 1, key ? key : "?");
        bool known = false;
        if (!key || !attr_known(key)) {
            cerr(err, "ValueError", "'%s' is not a valid file attribute; use one of name, size, "
                 "type, extension, mime_type, transfer_method, url, related_id", key ? key : "");
            cerr_prefix(err, where);
            return -1;
        }
        sl_value *expected = sub_expected(json_object_get(sc, "value"));
        bool is_ext = strcmp(key, "extension") == 0;
        if (is_ext) {
            /* Dify compares extensions with their dot: "pdf" and ".pdf" match. */
            if (!json_is_string(expected)) {
                char b[160];
                brief(expected, b, sizeof b);
                json_decref(expected);
                cerr(err, "TypeError", "the expected extension must be text such as 'pdf', "
                     "got %s", b);
                cerr_prefix(err, where);
                return -1;
            }
            if (json_string_length(expected) && json_string_value(expected)[0] != '.') {
                char *d = sl_xasprintf(".%s", json_string_value(expected));
                json_decref(expected);
                expected = json_string(d);
                free(d);
            }
        }
        bool any = false, all = true;
        for (size_t f = 0; f < json_array_size(files); f++) {
            const sl_value *file = json_array_get(files, f);
            sl_value *val = sl_cond_file_attr(file, key, &known);
            if (!val && strcmp(key, "url") == 0) {
                json_decref(expected);
                cerr(err, "ValueError", "file %zu has no url or remote_url to compare; "
                     "compare another attribute", f + 1);
                cerr_prefix(err, where);
                return -1;
            }
            if (is_ext && json_is_string(val) && json_string_length(val) &&
                json_string_value(val)[0] != '.') {
                char *d = sl_xasprintf(".%s", json_string_value(val));
                json_decref(val);
                val = json_string(d);
                free(d);
            }
            bool r = false;
            int rc = sl_cond_eval_one(op, val, expected, &r, err);
            json_decref(val);
            if (rc < 0) {
                json_decref(expected);
                cerr_prefix(err, where);
                return -1;
            }
            any = any || r;
            all = all && r;
        }
        json_decref(expected);
        bool res = op && strstr(op, "not") ? all : any;
        group = is_or ? (group || res) : (group && res);
    }
    *out = group;
    return 0;
}

/* ---- condition lists ---- */

/* Dify's _convert_to_bool: an int (or bool) by truth, text through
 * json.loads, which must give an int or a bool ("true", "0", ...). */
static int to_bool(const sl_value *v, bool *out, sl_err *err)
{
    char b[160];
    if (is_intlike(v)) {
        *out = int_of(v) != 0;
        return 0;
    }
    if (json_is_string(v)) {
        json_error_t je;
        sl_value *p = json_loadb(json_string_value(v), json_string_length(v),
                                 JSON_DECODE_ANY, &je);
        if (!p)
            return cerr(err, "ValueError", "the variable is a boolean and '%s' is not true, "
                        "false, 1 or 0; write true or false", json_string_value(v));
        bool ok = is_intlike(p);
        if (ok)
            *out = int_of(p) != 0;
        json_decref(p);
        if (ok)
            return 0;
    }
    brief(v, b, sizeof b);
    return cerr(err, "TypeError", "the variable is a boolean and the expected value %s is not "
                "a boolean; write true or false", b);
}

static bool is_bool_segment(const sl_value *v)
{
    if (json_is_boolean(v))
        return true;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return false;
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!json_is_boolean(json_array_get(v, i)))
            return false;
    return true;
}

/* The expected value as Dify prepares it: text rendered for {{#…#}},
 * converted to booleans when the variable is boolean; lists of texts or of
 * booleans pass; anything else is a TypeError.  *exp gets a new reference
 * or NULL (None). */
static int prepare_expected(const sl_cond_env *env, const sl_value *actual, const sl_value *raw,
                            sl_value **exp, sl_err *err)
{
    *exp = NULL;
    if (is_none(raw))
        return 0;
    sl_value *e;
    if (json_is_string(raw)) {
        sl_buf b;
        sl_buf_init(&b, env->text_cap);
        if (env->render(env->ud, json_string_value(raw), &b) < 0 || b.toobig) {
            sl_buf_release(&b);
            return cerr(err, "ValueError", "the value grows past %zu bytes when its "
                        "{{#…#}} references are filled in; compare a shorter value",
                        env->text_cap ? env->text_cap : SL_BUF_DEFAULT_CAP);
        }
        e = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
    } else if (sl_value_is_number(raw)) {
        sl_buf b;
        sl_buf_init(&b, 64);
        sl_value_text(raw, &b);
        e = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
    } else {
        e = json_incref((sl_value *)raw);
    }
    if (is_bool_segment(actual)) {
        if (json_is_array(e)) {
            sl_value *l = json_array();
            for (size_t i = 0; i < json_array_size(e); i++) {
                bool bv;
                if (to_bool(json_array_get(e, i), &bv, err) < 0) {
                    json_decref(l);
                    json_decref(e);
                    return -1;
                }
                json_array_append_new(l, json_boolean(bv));
            }
            json_decref(e);
            *exp = l;
            return 0;
        }
        bool bv;
        if (to_bool(e, &bv, err) < 0) {
            json_decref(e);
            return -1;
        }
        json_decref(e);
        *exp = json_boolean(bv);
        return 0;
    }
    if (json_is_string(e) || json_is_boolean(e)) {
        *exp = e;
        return 0;
    }
    if (json_is_array(e)) {
        bool all_str = true, all_bool = true;
        for (size_t i = 0; i < json_array_size(e); i++) {
            all_str = all_str && json_is_string(json_array_get(e, i));
            all_bool = all_bool && json_is_boolean(json_array_get(e, i));
        }
        if (all_str || all_bool) {
            *exp = e;
            return 0;
        }
    }
    char b[160];
    brief(e, b, sizeof b);
    json_decref(e);
    return cerr(err, "TypeError", "unexpected expected value %s: a condition value is text, "
                "a boolean, or a list of texts (quote numbers inside lists)", b);
}

void sl_cond_outcome_release(sl_cond_outcome *o)
{
    if (!o)
        return;
    json_decref(o->inputs);
    json_decref(o->results);
    o->inputs = o->results = NULL;
}

int sl_cond_eval_list_env(const sl_cond_env *env, const sl_value *conditions,
                          const char *logical_operator, sl_cond_outcome *out, sl_err *err)
{
    bool is_or = logical_operator && strcmp(logical_operator, "or") == 0;
    out->inputs = json_array();
    out->results = json_array();
    out->result = !is_or; /* all([]) is True, any([]) is False */
    for (size_t i = 0; i < json_array_size(conditions); i++) {
        const sl_value *cond = json_array_get(conditions, i);
        const sl_value *sel = json_object_get(cond, "variable_selector");
        const char *op = json_string_value(json_object_get(cond, "comparison_operator"));
        char st[256], where[320];
        sel_text(sel, st, sizeof st);
        snprintf(where, sizeof where, "condition %zu (%s %s): ", i + 1, st, op ? op : "?");
        sl_value *v = json_is_array(sel) ? env->get(env->ud, sel) : NULL;
        if (!v) {
            cerr(err, "ValueError", "Variable %s not found; the node that sets it has not run "
                 "on this path (or the name is wrong): check the selector, or test it with "
                 "an earlier branch", st);
            cerr_prefix(err, where);
            goto fail;
        }
        bool r = false;
        int rc;
        cond_op o = op_of(op);
        const sl_value *subc = json_object_get(cond, "sub_variable_condition");
        bool files = is_file_array(v) ||
                     (json_is_array(v) && json_array_size(v) == 0 && json_is_object(subc));
        if (files && (o == OP_CONTAINS || o == OP_NOT_CONTAINS || o == OP_ALL_OF)) {
            if (!json_is_object(subc)) {
                json_decref(v);
                cerr(err, "ValueError", "Sub variable is required: '%s' on a list of files "
                     "tests file attributes; add sub_variable_condition {logical_operator, "
                     "conditions: [{key, comparison_operator, value}]}", op);
                cerr_prefix(err, where);
                goto fail;
            }
            rc = file_sub_conditions(v, subc, &r, err);
        } else if (o == OP_EXISTS || o == OP_NOT_EXISTS) {
            rc = sl_cond_eval_one(op, v, NULL, &r, err);
        } else {
            sl_value *expected = NULL;
            rc = prepare_expected(env, v, json_object_get(cond, "value"), &expected, err);
            if (rc == 0) {
                sl_value *rec = json_object();
                json_object_set(rec, "actual_value", v);
                json_object_set_new(rec, "expected_value", expected ? json_incref(expected)
                                                                    : json_null());
                json_object_set_new(rec, "comparison_operator", json_string(op ? op : ""));
                json_array_append_new(out->inputs, rec);
                rc = sl_cond_eval_one(op, v, expected, &r, err);
            }
            json_decref(expected);
        }
        json_decref(v);
        if (rc < 0) {
            cerr_prefix(err, where);
            goto fail;
        }
        json_array_append_new(out->results, json_boolean(r));
        if (is_or ? r : !r) {
            out->result = r;
            return 0;
        }
    }
    return 0;
fail:
    sl_cond_outcome_release(out);
    return -1;
}

static sl_value *exec_get(void *ud, const sl_value *sel)
{
    return sl_exec_get(ud, sel);
}

static int exec_render(void *ud, const char *text, sl_buf *out)
{
    return sl_exec_render(ud, text, out);
}

int sl_cond_eval_list(sl_node_exec *x, const sl_value *conditions, const char *logical_operator,
                      sl_cond_outcome *out, sl_err *err)
{
    const sl_limits *l = sl_exec_limits(x);
    sl_cond_env env = {exec_get, exec_render, x, l ? l->max_string_bytes : 0};
    return sl_cond_eval_list_env(&env, conditions, logical_operator, out, err);
}

/* ---- load-time checks ---- */

/* Field paths for messages ("cases[0].conditions[1].value"); a path cut
 * at the buffer's end still points the user at the right place. */
static void fld(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fld(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

int sl_cond_check_logical(sl_check *c, const sl_gnode *n, const sl_value *holder,
                          const char *key, const char *field, bool required)
{
    const sl_value *v = json_object_get(holder, key);
    if (is_none(v)) {
        if (!required)
            return 0;
        sl_check_error(c, n, holder, NULL, field, "missing; write 'and' or 'or'");
        return -1;
    }
    const char *s = json_string_value(v);
    if (!s) {
        sl_check_error(c, n, holder, key, field, "must be 'and' or 'or', not %s",
                       sl_value_type_name(v));
        return -1;
    }
    if (strcmp(s, "and") && strcmp(s, "or")) {
        sl_check_error(c, n, holder, key, field, "must be 'and' or 'or', not '%s'", s);
        return -1;
    }
    return 0;
}

/* A condition value: text (with references), number, boolean, a list of
 * texts or booleans, or null. */
static int check_value(sl_check *c, const sl_gnode *n, const sl_value *cond, const char *key,
                       const char *field, bool allow_bool)
{
    const sl_value *v = json_object_get(cond, key);
    if (is_none(v) || sl_value_is_number(v))
        return 0;
    if (json_is_string(v))
        return sl_check_text_refs(c, n, cond, key, field);
    if (json_is_boolean(v) && allow_bool)
        return 0;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const sl_value *e = json_array_get(v, i);
            if (!json_is_string(e) && !(allow_bool && json_is_boolean(e))) {
                char b[160];
                brief(e, b, sizeof b);
                sl_check_error(c, n, cond, key, field, "item %zu of the list is %s; list items "
                               "must be text%s (quote numbers)", i + 1, b,
                               allow_bool ? " or booleans" : "");
                return -1;
            }
        }
        return 0;
    }
    char b[160];
    brief(v, b, sizeof b);
    sl_check_error(c, n, cond, key, field, "is %s; a condition value is text, a number, %sa list "
                   "of texts, or empty", b, allow_bool ? "a boolean, " : "");
    return -1;
}

static int check_op(sl_check *c, const sl_gnode *n, const sl_value *cond, const char *field)
{
    const sl_value *v = json_object_get(cond, "comparison_operator");
    const char *op = json_string_value(v);
    if (!v || json_is_null(v)) {
        sl_check_error(c, n, cond, NULL, field, "missing; pick one of " KNOWN_OPS);
        return -1;
    }
    if (!op) {
        sl_check_error(c, n, cond, "comparison_operator", field,
                       "must be text, not %s; use one of " KNOWN_OPS, sl_value_type_name(v));
        return -1;
    }
    if (!sl_cond_op_known(op)) {
        sl_check_error(c, n, cond, "comparison_operator", field,
                       "unknown operator '%s'; use one of " KNOWN_OPS, op);
        return -1;
    }
    return 0;
}

static int check_sub(sl_check *c, const sl_gnode *n, const sl_value *cond, const char *field)
{
    const sl_value *sub = json_object_get(cond, "sub_variable_condition");
    char f[320];
    if (is_none(sub))
        return 0;
    if (!json_is_object(sub)) {
        sl_check_error(c, n, cond, "sub_variable_condition", field,
                       "must be a mapping {logical_operator, conditions}");
        return -1;
    }
    int bad = 0;
    fld(f, sizeof f, "%s.logical_operator", field);
    bad |= sl_cond_check_logical(c, n, sub, "logical_operator", f, true);
    const sl_value *list = json_object_get(sub, "conditions");
    if (is_none(list))
        return bad ? -1 : 0;
    if (!json_is_array(list)) {
        fld(f, sizeof f, "%s.conditions", field);
        sl_check_error(c, n, sub, "conditions", f, "must be a list of {key, comparison_operator, "
                       "value}");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *sc = json_array_get(list, i);
        fld(f, sizeof f, "%s.conditions[%zu]", field, i);
        if (!json_is_object(sc)) {
            sl_check_error(c, n, list, NULL, f, "must be a mapping {key, comparison_operator, "
                           "value}");
            bad = 1;
            continue;
        }
        const char *key = json_string_value(json_object_get(sc, "key"));
        char kf[360];
        fld(kf, sizeof kf, "%s.key", f);
        if (!key) {
            sl_check_error(c, n, sc, NULL, kf, "missing; name the file attribute to test (name, "
                           "size, type, extension, mime_type, transfer_method, url)");
            bad = 1;
        } else {
            if (!attr_known(key))
                sl_check_warn(c, n, sc, "key", kf, "'%s' is not a file attribute; Dify fails "
                              "this condition when it runs; use name, size, type, extension, "
                              "mime_type, transfer_method, url or related_id", key);
        }
        fld(kf, sizeof kf, "%s.comparison_operator", f);
        bad |= check_op(c, n, sc, kf) < 0;
        fld(kf, sizeof kf, "%s.value", f);
        bad |= check_value(c, n, sc, "value", kf, false) < 0;
    }
    return bad ? -1 : 0;
}

int sl_cond_check_list(sl_check *c, const sl_gnode *n, const sl_value *holder, const char *key,
                       const char *field, bool required)
{
    const sl_value *list = json_object_get(holder, key);
    if (is_none(list)) {
        if (!required)
            return 0;
        sl_check_error(c, n, holder, NULL, field, "missing; give a list of conditions "
                       "(it may be empty)");
        return -1;
    }
    if (!json_is_array(list)) {
        sl_check_error(c, n, holder, key, field, "must be a list of conditions "
                       "{variable_selector, comparison_operator, value}");
        return -1;
    }
    int bad = 0;
    char f[320], ff[360];
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *cond = json_array_get(list, i);
        fld(f, sizeof f, "%s[%zu]", field, i);
        if (!json_is_object(cond)) {
            sl_check_error(c, n, cond, NULL, f, "must be a mapping {variable_selector, "
                           "comparison_operator, value}");
            bad = 1;
            continue;
        }
        fld(ff, sizeof ff, "%s.variable_selector", f);
        bad |= sl_check_selector(c, n, cond, "variable_selector", ff, true) < 0;
        fld(ff, sizeof ff, "%s.comparison_operator", f);
        bad |= check_op(c, n, cond, ff) < 0;
        fld(ff, sizeof ff, "%s.value", f);
        bad |= check_value(c, n, cond, "value", ff, true) < 0;
        fld(ff, sizeof ff, "%s.sub_variable_condition", f);
        bad |= check_sub(c, n, cond, ff) < 0;
    }
    return bad ? -1 : 0;
}
