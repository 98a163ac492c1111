/*
 * jinja_tests — Jinja2's built-in tests ({% if n is divisibleby 3 %}).
 */
#include <math.h>
#include <string.h>

#include "core/math.h"
#include "tmpl/jinja_ev.h"

/* ---- tests ---- */

#define TEST(name) static int t_##name(jrender *r, const jnode *e, jv *x, jargs *a, bool *res)
#define JT(x) ((x)->k == K_JSON ? json_typeof((x)->j) : (json_type)-1)

TEST(defined) { (void)r, (void)e, (void)a; *res = x->k != K_UNDEF; return 0; }
TEST(undefined) { (void)r, (void)e, (void)a; *res = x->k == K_UNDEF; return 0; }
TEST(none) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_NULL; return 0; }
TEST(boolean) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_TRUE || JT(x) == JSON_FALSE; return 0; }
TEST(true) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_TRUE; return 0; }
TEST(false) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_FALSE; return 0; }
TEST(integer) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_INTEGER; return 0; }
TEST(float) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_REAL; return 0; }
TEST(number)
{
    (void)r, (void)e, (void)a;
    long long i;
    double d;
    *res = sl_jx_num_of(x, &i, &d) != 0;
    return 0;
}
TEST(string) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_STRING; return 0; }
TEST(mapping) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_OBJECT || x->k == K_NS; return 0; }
TEST(iterable)
{
    (void)r, (void)e, (void)a;
    *res = JT(x) == JSON_ARRAY || JT(x) == JSON_OBJECT || JT(x) == JSON_STRING || x->k == K_UNDEF;
    return 0;
}
TEST(sequence)
{
    (void)r, (void)e, (void)a;
    *res = JT(x) == JSON_ARRAY || JT(x) == JSON_OBJECT || JT(x) == JSON_STRING;
    return 0;
}
TEST(callable)
{
    (void)r, (void)e, (void)a;
    *res = x->k == K_MACRO || x->k == K_CALLER || x->k == K_BUILTIN || x->k == K_JOINER ||
           x->k == K_LOOP;
    return 0;
}
TEST(filter)
{
    (void)r, (void)e, (void)a;
    *res = is_str(x) && sl_jx_find_filter(json_string_value(x->j));
    return 0;
}
TEST(test)
{
    (void)r, (void)e, (void)a;
    *res = is_str(x) && sl_jx_find_test(json_string_value(x->j));
    return 0;
}

static int int_test(jrender *r, const jnode *e, jv *x, long long *v)
{
    double d;
    int t = sl_jx_num_of(x, v, &d);
    if (t == 2) {
        *v = d2ll(d);
        return d == sl_floor(d) ? 0 : 1;
    }
    if (!t)
        return x->k == K_UNDEF ? sl_jx_undef_err(r, e, x)
                               : sl_jx_err(r, e, SL_EINVAL, "the test needs a number, not '%s'",
                                           sl_jx_py_type(x));
    return 0;
}
TEST(even)
{
    (void)a;
    long long v;
    int rc = int_test(r, e, x, &v);
    *res = rc == 0 && v % 2 == 0;
    return rc < 0 ? -1 : 0;
}
TEST(odd)
{
    (void)a;
    long long v;
    int rc = int_test(r, e, x, &v);
    *res = rc == 0 && v % 2 != 0;
    return rc < 0 ? -1 : 0;
}
TEST(divisibleby)
{
    long long v, n = int_arg(sl_jx_arg(a, 0, "num"), 0);
    if (int_test(r, e, x, &v) < 0)
        return -1;
    if (n == 0)
        return sl_jx_err(r, e, SL_EINVAL, "divisibleby 0: division by zero");
    *res = v % n == 0;
    return 0;
}
TEST(sameas)
{
    (void)r, (void)e;
    jv *o = sl_jx_arg(a, 0, "other");
    if (!o) {
        *res = false;
        return 0;
    }
    /* identity: singletons and the same object */
    if (x->k == K_JSON && o->k == K_JSON &&
        (json_is_null(x->j) || json_is_boolean(x->j) || json_is_null(o->j) || json_is_boolean(o->j)))
        *res = json_typeof(x->j) == json_typeof(o->j);
    else
        *res = x->k == o->k && x->j == o->j && x->p == o->p;
    return 0;
}
TEST(in)
{
    jv *o = sl_jx_arg(a, 0, "seq");
    if (!o)
        return sl_jx_err(r, e, SL_EINVAL, "the in test needs a sequence");
    return sl_jx_contains(r, e, x, o, res);
}
TEST(eq)
{
    (void)r, (void)e;
    jv *o = sl_jx_arg(a, 0, "b");
    jv u = sl_jx_undef(NULL);
    *res = sl_jx_eq(x, o ? o : &u);
    return 0;
}
TEST(ne)
{
    int rc = t_eq(r, e, x, a, res);
    *res = !*res;
    return rc;
}
static int ord_test(jrender *r, const jnode *e, jv *x, jargs *a, int want, bool *res)
{
    jv *o = sl_jx_arg(a, 0, "b");
    if (!o || x->k != K_JSON || o->k != K_JSON)
        return sl_jx_err(r, e, SL_EINVAL, "the comparison needs two values");
    int c = sl_jx_py_cmp(x->j, o->j);
    if (c == -2)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' and '%s' do not compare", sl_jx_py_type(x),
                         sl_jx_py_type(o));
    *res = want == 0 ? c < 0 : want == 1 ? c <= 0 : want == 2 ? c > 0 : c >= 0;
    return 0;
}
TEST(lt) { return ord_test(r, e, x, a, 0, res); }
TEST(le) { return ord_test(r, e, x, a, 1, res); }
TEST(gt) { return ord_test(r, e, x, a, 2, res); }
TEST(ge) { return ord_test(r, e, x, a, 3, res); }

TEST(lower) { (void)r, (void)e, (void)a; *res = sl_jx_str_cased(x, false); return 0; }
TEST(upper) { (void)r, (void)e, (void)a; *res = sl_jx_str_cased(x, true); return 0; }
TEST(escaped) { (void)r, (void)e, (void)a, (void)x; *res = false; return 0; }

static const jtest tests[] = {
    {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none},
    {"boolean", t_boolean}, {"true", t_true}, {"false", t_false}, {"integer", t_integer},
    {"float", t_float}, {"number", t_number}, {"string", t_string}, {"mapping", t_mapping},
    {"iterable", t_iterable}, {"sequence", t_sequence}, {"callable", t_callable},
    {"filter", t_filter}, {"test", t_test},
    {"even", t_even}, {"odd", t_odd}, {"divisibleby", t_divisibleby}, {"sameas", t_sameas},
    {"in", t_in}, {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
    {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
    {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
    {"lower", t_lower}, {"upper", t_upper}, {"escaped", t_escaped},
};

const jtest *sl_jx_find_test(const char *name)
{
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (!strcmp(tests[i].name, name))
            return &tests[i];
    return NULL;
}
