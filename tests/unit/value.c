/*
 * value — the workflow value type: text as Dify shows it (Segment.text),
 * Python float repr, truthiness, equality, type names, number parsing,
 * sizes, Python-style JSON; plus the core helpers under it (capped buffer,
 * hash map, errors).
 *
 * Expected strings were taken from python3 (repr(), json.dumps(...,
 * ensure_ascii=False)) and hard-coded here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/map.h"
#include "core/value.h"
#include "tap.h"
#include "util.h"

/* sl_value_text of v (stolen) compared with want. */
static void text_is(sl_value *v, const char *want, const char *what)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = sl_value_text(v, &b);
    const char *got = b.data ? b.data : "";
    CHECK(rc == 0 && strcmp(got, want) == 0, "text of %s is '%s' (got '%s')", what, esc(want),
          esc(got));
    sl_buf_release(&b);
    json_decref(v);
}

static void double_is(double d, const char *want)
{
    char out[32];
    memset(out, 'X', sizeof out);
    sl_fmt_double(d, out);
    CHECK(strcmp(out, want) == 0, "repr(%.17g) is '%s' (got '%s')", d, want, out);
}

static void pyjson_is(const char *json, bool pretty, const char *want)
{
    sl_value *v = J(json);
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = sl_value_pyjson(v, &b, pretty);
    const char *got = b.data ? b.data : "";
    CHECK(rc == 0 && strcmp(got, want) == 0, "pyjson%s %s gives '%s' (got '%s')",
          pretty ? " pretty" : "", json, esc(want), esc(got));
    sl_buf_release(&b);
    json_decref(v);
}

static void test_text(void)
{
    text_is(json_string("hello"), "hello", "a string");
    text_is(json_string(""), "", "an empty string");
    text_is(json_string("a \"quoted\" \\ line\nnext"), "a \"quoted\" \\ line\nnext",
            "a string with quotes and newline (raw, not escaped)");
    text_is(json_string("日本語 ✓"), "日本語 ✓", "a non-ASCII string");
    text_is(json_null(), "", "None");
    {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, "x");
        CHECK(sl_value_text(NULL, &b) == 0 && strcmp(b.data, "x") == 0,
              "text of a missing value (NULL) appends nothing");
        sl_buf_release(&b);
    }
    text_is(json_integer(0), "0", "int 0");
    text_is(json_integer(42), "42", "int 42");
    text_is(json_integer(-7), "-7", "int -7");
    text_is(json_integer(INT64_MAX), "9223372036854775807", "int64 max");
    text_is(json_integer(INT64_MIN), "-9223372036854775808", "int64 min");
    text_is(json_real(1.0), "1.0", "float 1.0");
    text_is(json_real(0.1), "0.1", "float 0.1");
    text_is(json_real(1e16), "1e+16", "float 1e16");
    text_is(json_real(1e-05), "1e-05", "float 1e-05");
    text_is(json_real(123456789012345.0), "123456789012345.0", "float 123456789012345.0");
    text_is(json_real(-0.0), "-0.0", "float -0.0");
    text_is(json_real(2.5), "2.5", "float 2.5");
    text_is(json_true(), "true", "True");
    text_is(json_false(), "false", "False");
    text_is(J("[]"), "", "an empty array");
    text_is(J("{}"), "{}", "an empty object");
    text_is(J("[\"a\", \"b\"]"), "[\"a\", \"b\"]", "array[string]");
    text_is(J("[1, 2.0, 3.5]"), "[1, 2.0, 3.5]", "array[number] (floats keep .0)");
    text_is(J("[true, false, null]"), "[true, false, null]", "array of bools and null");
    text_is(J("{\"a\": 1, \"b\": [1, 2], \"c\": {\"d\": \"e\"}}"),
            "{\"a\": 1, \"b\": [1, 2], \"c\": {\"d\": \"e\"}}",
            "a nested object, Python separators, key order kept");
    text_is(J("{\"名\": \"值 ü\"}"), "{\"名\": \"值 ü\"}", "an object with non-ASCII kept");
    text_is(J("[\"say \\\"hi\\\"\", \"a\\\\b\", \"l1\\nl2\\t\"]"),
            "[\"say \\\"hi\\\"\", \"a\\\\b\", \"l1\\nl2\\t\"]",
            "array strings escaped as JSON");
    text_is(J("[\"\\u0001\\u001f\"]"), "[\"\\u0001\\u001f\"]",
            "control characters as lowercase \\u escapes (like json.dumps)");
    text_is(J("[[]]"), "[[]]", "an array holding an empty array is not empty");
    text_is(J("[1e16, 1e-05, -0.0]"), "[1e+16, 1e-05, -0.0]", "floats inside JSON use repr");
    text_is(J("{\"k\": []}"), "{\"k\": []}", "an empty array inside an object");
}

static void test_fmt_double(void)
{
    /* python3: repr(x) */
    static const struct {
        double d;
        const char *want;
    } t[] = {
        {1.0, "1.0"},
        {0.1, "0.1"},
        {0.30000000000000004, "0.30000000000000004"},
        {1e16, "1e+16"},
        {1e-05, "1e-05"},
        {123456789012345.0, "123456789012345.0"},
        {1234567890123456.0, "1234567890123456.0"},
        {12345678901234567.0, "1.2345678901234568e+16"},
        {-0.0, "-0.0"},
        {0.0, "0.0"},
        {1e22, "1e+22"},
        {1e-4, "0.0001"},
        {0.0001234, "0.0001234"},
        {1.5, "1.5"},
        {-2.5, "-2.5"},
        {3.141592653589793, "3.141592653589793"},
        {2.718281828459045, "2.718281828459045"},
        {1.0 / 3, "0.3333333333333333"},
        {2.0 / 3, "0.6666666666666666"},
        {1e-320, "1e-320"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {100.0, "100.0"},
        {1e15, "1000000000000000.0"},
        {9999999999999998.0, "9999999999999998.0"},
        {5e-07, "5e-07"},
        {123.456, "123.456"},
        {-1e-07, "-1e-07"},
        {1e100, "1e+100"},
        {9007199254740992.0, "9007199254740992.0"},
        {0.3, "0.3"},
        {1.1, "1.1"},
        {100.5, "100.5"},
        {1.0000000000000002e16, "1.0000000000000002e+16"},
        {-123456.789, "-123456.789"},
        {0.001, "0.001"},
        {1e-3 * 7, "0.007"},
        {4.35, "4.35"},
        {2.0e-5, "2e-05"},
        {1.5e-10, "1.5e-10"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        double_is(t[i].d, t[i].want);
    double_is(INFINITY, "inf");
    double_is(-INFINITY, "-inf");
    double_is(NAN, "nan");
}

static void test_truthy(void)
{
    static const struct {
        const char *json;
        bool want;
    } t[] = {
        {"null", false}, {"false", false}, {"true", true},  {"0", false},
        {"0.0", false},  {"-0.0", false},  {"1", true},     {"-1", true},
        {"0.5", true},   {"\"\"", false},  {"\"0\"", true}, {"\" \"", true},
        {"\"false\"", true}, {"[]", false}, {"[0]", true},  {"{}", false},
        {"{\"a\": null}", true},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sl_value *v = J(t[i].json);
        CHECK(sl_value_truthy(v) == t[i].want, "bool(%s) is %s", t[i].json,
              t[i].want ? "True" : "False");
        json_decref(v);
    }
    CHECK(!sl_value_truthy(NULL), "a missing value is falsy");
}

static void test_equal(void)
{
    static const struct {
        const char *a, *b;
        bool want;
    } t[] = {
        {"1", "1.0", true},
        {"1.0", "1", true},
        {"0", "-0.0", true},
        {"1", "2", false},
        {"0.1", "0.1", true},
        {"\"1\"", "1", false},
        {"\"a\"", "\"a\"", true},
        {"\"a\"", "\"b\"", false},
        {"null", "null", true},
        {"null", "false", false},
        {"true", "true", true},
        {"true", "false", false},
        {"[]", "[]", true},
        {"[1, 2]", "[1.0, 2.0]", true},
        {"[1, 2]", "[2, 1]", false},
        {"[1, 2]", "[1, 2, 3]", false},
        {"{}", "{}", true},
        {"{\"a\": 1, \"b\": 2}", "{\"b\": 2.0, \"a\": 1.0}", true},
        {"{\"a\": 1}", "{\"a\": 1, \"b\": 2}", false},
        {"{\"a\": 1, \"b\": 2}", "{\"a\": 1}", false},
        {"{\"a\": null}", "{\"b\": null}", false},
        {"{\"a\": [1, {\"b\": [2.0, \"x\"]}]}", "{\"a\": [1.0, {\"b\": [2, \"x\"]}]}", true},
        {"{\"a\": [1, {\"b\": [2.0, \"x\"]}]}", "{\"a\": [1.0, {\"b\": [2, \"y\"]}]}", false},
        {"[[]]", "[{}]", false},
        {"9007199254740993", "9007199254740992", false},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sl_value *a = J(t[i].a), *b = J(t[i].b);
        CHECK(sl_value_equal(a, b) == t[i].want && sl_value_equal(b, a) == t[i].want,
              "(%s == %s) is %s both ways", t[i].a, t[i].b, t[i].want ? "True" : "False");
        json_decref(a);
        json_decref(b);
    }
    sl_value *x = J("[1]");
    CHECK(!sl_value_equal(x, NULL) && !sl_value_equal(NULL, x), "a value never equals NULL");
    CHECK(sl_value_equal(NULL, NULL), "NULL equals NULL");
    json_decref(x);
}

static void test_type_names(void)
{
    static const struct {
        const char *json, *want;
    } t[] = {
        {"null", "none"},
        {"\"x\"", "string"},
        {"3", "integer"},
        {"3.5", "number"},
        {"true", "boolean"},
        {"{\"a\": 1}", "object"},
        {"[\"a\", \"b\"]", "array[string]"},
        {"[1, 2.5]", "array[number]"},
        {"[true, false]", "array[boolean]"},
        {"[{\"a\": 1}, {}]", "array[object]"},
        {"[]", "array[any]"},
        {"[\"a\", 1]", "array[any]"},
        {"[null]", "array[any]"},
        {"[[1]]", "array[any]"},
        {"{\"dify_model_identity\": \"__dify__file__\", \"type\": \"document\"}", "file"},
        {"[{\"dify_model_identity\": \"__dify__file__\", \"type\": \"image\"}]", "array[file]"},
        {"[{\"dify_model_identity\": \"__dify__file__\"}, {\"a\": 1}]", "array[any]"},
        {"{\"dify_model_identity\": \"something else\"}", "object"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sl_value *v = J(t[i].json);
        const char *got = sl_value_type_name(v);
        CHECK(got && strcmp(got, t[i].want) == 0, "type of %s is %s (got %s)", t[i].json,
              t[i].want, got ? got : "NULL");
        json_decref(v);
    }
    CHECK(strcmp(sl_value_type_name(NULL), "none") == 0, "type of a missing value is none");
    sl_value *f = J("{\"dify_model_identity\": \"__dify__file__\"}");
    CHECK(sl_value_is_file(f), "a tagged object is a file");
    json_decref(f);
    f = J("{\"dify_model_identity\": 1}");
    CHECK(!sl_value_is_file(f), "an object whose tag is not the file tag is not a file");
    json_decref(f);
}

static void number_is(const char *text, const char *want_json)
{
    sl_value *got = sl_value_number_from_text(text);
    if (!want_json) {
        CHECK(got == NULL, "'%s' is not a number (Python int()/float() refuse it)", esc(text));
        json_decref(got);
        return;
    }
    sl_value *want = J(want_json);
    bool ok = got && json_typeof(got) == json_typeof(want) && sl_value_equal(got, want);
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
    CHECK(ok, "'%s' reads as %s (got %s)", esc(text), want_json, g ? g : "NULL");
    free(g);
    json_decref(got);
    json_decref(want);
}

static void test_number_from_text(void)
{
    number_is("5", "5");
    number_is("-12", "-12");
    number_is("+7", "7");
    number_is("  42  ", "42");
    number_is("\t3\n", "3");
    number_is("0", "0");
    number_is("007", "7");                 /* int('007') == 7 */
    number_is("1.5", "1.5");
    number_is("-0.25", "-0.25");
    number_is(".5", "0.5");
    number_is("5.", "5.0");
    number_is("1e3", "1000.0");            /* float('1e3'), int() refuses */
    number_is("1E-2", "0.01");
    number_is("9223372036854775807", "9223372036854775807");
    number_is("", NULL);
    number_is("   ", NULL);
    number_is("abc", NULL);
    number_is("12abc", NULL);
    number_is("1.2.3", NULL);
    number_is("--1", NULL);
    number_is("1 2", NULL);
    number_is("0x10", NULL);               /* int('0x10') and float('0x10') raise */
    number_is("0x1p3", NULL);              /* C hex float; Python refuses */
    number_is("1_000", "1000");            /* int('1_000') == 1000 */
}

static void test_size(void)
{
    sl_value *v = json_string("abcd");
    size_t s = sl_value_size(v, 1000);
    CHECK(s >= 4 && s <= 12, "size of \"abcd\" is about its JSON length (got %zu)", s);
    json_decref(v);
    v = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(v, json_string("0123456789"));
    s = sl_value_size(v, 1u << 30);
    CHECK(s >= 12000 && s <= 20000, "size of 1000 ten-char strings is ~13 KB (got %zu)", s);
    s = sl_value_size(v, 100);
    CHECK(s > 100, "size stops past the limit and reports more than it (got %zu)", s);
    json_decref(v);
    /* A huge string: the size must say so without walking further. */
    char *big = malloc(300000);
    memset(big, 'x', 299999);
    big[299999] = '\0';
    v = json_object();
    json_object_set_new(v, "text", json_string(big));
    s = sl_value_size(v, 204800);
    CHECK(s > 204800, "an object holding a 300 KB string is over a 200 KB limit (got %zu)", s);
    json_decref(v);
    free(big);
    v = J("{\"a\": {\"b\": [1, 2, 3]}}");
    s = sl_value_size(v, 1000);
    CHECK(s >= 10 && s <= 100, "size of a small nested object is small (got %zu)", s);
    json_decref(v);
}

static void test_pyjson(void)
{
    pyjson_is("{\"a\": 1, \"b\": [1, 2.0]}", false, "{\"a\": 1, \"b\": [1, 2.0]}");
    pyjson_is("[]", false, "[]");
    pyjson_is("{}", false, "{}");
    pyjson_is("\"é\\\"\"", false, "\"é\\\"\"");
    pyjson_is("null", false, "null");
    pyjson_is("[true, null, 0.5]", false, "[true, null, 0.5]");
    /* python3: json.dumps(v, indent=2, ensure_ascii=False) */
    pyjson_is("{\"a\": 1, \"b\": [1, 2], \"c\": {}, \"d\": []}", true,
              "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": []\n}");
    pyjson_is("[{\"x\": \"ü\"}]", true, "[\n  {\n    \"x\": \"ü\"\n  }\n]");
    pyjson_is("3", true, "3");

    sl_value *v = J("{\"a\": [1, 2.0, \"x\"], \"b\": null}");
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_value_json(v, &b) == 0 && strcmp(b.data, "{\"a\":[1,2.0,\"x\"],\"b\":null}") == 0,
          "compact JSON has no spaces (got %s)", b.data);
    sl_buf_release(&b);
    sl_buf_init(&b, 10);
    CHECK(sl_value_pyjson(v, &b, false) < 0, "pyjson reports a buffer that hit its cap");
    sl_buf_release(&b);
    json_decref(v);
}

static void test_buf(void)
{
    sl_buf b;
    sl_buf_init(&b, 10);
    CHECK(sl_buf_adds(&b, "12345") == 0 && b.len == 5 && strcmp(b.data, "12345") == 0,
          "buf: append under the cap");
    CHECK(sl_buf_adds(&b, "67890") == 0 && b.len == 10, "buf: append up to exactly the cap");
    CHECK(sl_buf_addc(&b, 'x') < 0 && b.toobig && b.len == 10,
          "buf: one byte past the cap fails and sets toobig");
    CHECK(sl_buf_adds(&b, "") < 0, "buf: once toobig, even an empty append fails");
    CHECK(sl_buf_addf(&b, "%d", 1) < 0 && b.len == 10 && strcmp(b.data, "1234567890") == 0,
          "buf: toobig sticks; contents unchanged and NUL-terminated");
    sl_buf_release(&b);

    sl_buf_init(&b, 8);
    CHECK(sl_buf_adds(&b, "123456789") < 0 && b.toobig && b.len == 0,
          "buf: an append larger than the cap fails whole, nothing written");
    CHECK(sl_buf_adds(&b, "1") < 0, "buf: and later small appends fail too");
    sl_buf_release(&b);

    sl_buf_init(&b, 100);
    char big[300];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK(sl_buf_addf(&b, "%s", big) < 0 && b.toobig, "buf: a long addf past the cap fails");
    sl_buf_release(&b);

    sl_buf_init(&b, 0);
    CHECK(b.cap == SL_BUF_DEFAULT_CAP, "buf: cap 0 means the default cap");
    for (int i = 0; i < 1000; i++)
        sl_buf_addf(&b, "%04d,", i);
    CHECK(b.len == 5000 && !memcmp(b.data + 4995, "0999,", 5) && b.data[5000] == '\0',
          "buf: 1000 formatted appends grow the buffer");
    char longfmt[400];
    memset(longfmt, 'z', 399);
    longfmt[399] = '\0';
    sl_buf_reset(&b);
    CHECK(b.len == 0 && sl_buf_addf(&b, "<%s>", longfmt) == 0 && b.len == 401 &&
              b.data[0] == '<' && b.data[400] == '>',
          "buf: addf longer than its stack buffer is written whole");
    char *s = sl_buf_detach(&b);
    CHECK(s && strlen(s) == 401 && b.data == NULL && b.len == 0, "buf: detach hands over");
    free(s);
    s = sl_buf_detach(&b);
    CHECK(s && s[0] == '\0', "buf: detach of an empty buffer gives \"\"");
    free(s);
    sl_buf_release(&b);

    sl_buf_init(&b, 4);
    sl_buf_adds(&b, "abcdef");
    sl_buf_reset(&b);
    CHECK(!b.toobig && sl_buf_adds(&b, "ab") == 0, "buf: reset clears toobig");
    sl_buf_release(&b);
    sl_buf_init(&b, 0);
    CHECK(sl_buf_add(&b, "a\0b", 3) == 0 && b.len == 3 && b.data[1] == '\0' && b.data[2] == 'b',
          "buf: binary bytes with NUL are kept");
    sl_buf_release(&b);

    /* a file of 200,000 bytes (more than one read), then under a cap */
    FILE *f = tmpfile();
    for (int i = 0; f && i < 20000; i++)
        fputs("0123456789", f);
    if (f)
        rewind(f);
    sl_buf_init(&b, 0);
    CHECK(f && sl_buf_add_file(&b, f) == 0 && b.len == 200000 && !b.toobig &&
              !memcmp(b.data + 199990, "0123456789", 10),
          "buf: add_file reads a file whole");
    sl_buf_release(&b);
    if (f)
        rewind(f);
    sl_buf_init(&b, 100000);
    CHECK(f && sl_buf_add_file(&b, f) == 0 && b.toobig && b.len < 100000,
          "buf: add_file stops at the cap and says so");
    sl_buf_release(&b);
    if (f)
        fclose(f);
}

static void test_utf8_chars(void)
{
    CHECK(sl_utf8_chars("", 0) == 0, "utf8_chars: empty");
    CHECK(sl_utf8_chars("abc", 3) == 3, "utf8_chars: ASCII");
    CHECK(sl_utf8_chars("h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10) == 4,
          "utf8_chars: 1-, 2-, 3- and 4-byte characters count one each");
    CHECK(sl_utf8_chars("a\0b", 3) == 3, "utf8_chars: a NUL inside counts");
}

static void test_map(void)
{
    sl_map m;
    sl_map_init(&m);
    CHECK(sl_map_get(&m, "nothing") == NULL, "map: get on an empty map is NULL");
    int a = 1, b = 2, c = 3;
    CHECK(sl_map_put(&m, "a", &a) == NULL, "map: put new key returns NULL");
    CHECK(sl_map_get(&m, "a") == &a, "map: get finds it");
    CHECK(sl_map_put(&m, "a", &b) == &a && sl_map_get(&m, "a") == &b && m.n == 1,
          "map: replace returns the old value, keeps one entry");
    CHECK(sl_map_put(&m, "", &c) == NULL && sl_map_get(&m, "") == &c, "map: empty key works");
    char key[32];
    static int vals[10000];
    for (int i = 0; i < 10000; i++) {
        vals[i] = i;
        snprintf(key, sizeof key, "key-%d", i);
        sl_map_put(&m, key, &vals[i]);
    }
    CHECK(m.n == 10002, "map: 10k distinct keys stored (n=%zu)", m.n);
    int bad = 0;
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        int *p = sl_map_get(&m, key);
        if (!p || *p != i)
            bad++;
    }
    CHECK(bad == 0, "map: all 10k keys found after growing (%d wrong)", bad);
    CHECK(sl_map_get(&m, "key-10000") == NULL && sl_map_get(&m, "key-") == NULL,
          "map: absent keys stay absent");
    CHECK(sl_map_get(&m, "a") == &b && sl_map_get(&m, "") == &c,
          "map: early keys survive the growth");
    for (int i = 0; i < 10000; i += 2) {
        snprintf(key, sizeof key, "key-%d", i);
        sl_map_put(&m, key, &a);
    }
    bad = 0;
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        int *p = sl_map_get(&m, key);
        if (p != (i % 2 ? &vals[i] : &a))
            bad++;
    }
    CHECK(bad == 0 && m.n == 10002, "map: replacing 5k values keeps n and the others");
    CHECK(m.n * 4 <= m.cap * 3, "map: load factor stays under 3/4 (n=%zu cap=%zu)", m.n, m.cap);
    sl_map_release(&m);
    CHECK(m.n == 0 && sl_map_get(&m, "a") == NULL, "map: release empties it");

    sl_map_init(&m);
    sl_map_reserve(&m, 1000);
    size_t cap = m.cap;
    for (int i = 0; i < 1000; i++) {
        char k[16];
        snprintf(k, sizeof k, "r%d", i);
        sl_map_put(&m, k, &vals[i % 16]);
    }
    CHECK(m.cap == cap && m.n == 1000, "map: reserve makes room for that many keys up front");
    sl_map_release(&m);
}

static void test_err(void)
{
    sl_err e = {0};
    CHECK(sl_err_set(&e, SL_EINVAL, "field '%s' is %d", "x", 5) == -1, "err: set returns -1");
    CHECK(e.code == SL_EINVAL && e.msg && strcmp(e.msg, "field 'x' is 5") == 0,
          "err: set formats the message");
    sl_err_set(&e, SL_EPARSE, "second");
    CHECK(e.code == SL_EPARSE && strcmp(e.msg, "second") == 0, "err: set replaces");
    CHECK(sl_err_prefix(&e, "file %s", "a.yml") == -1 &&
              strcmp(e.msg, "file a.yml: second") == 0 && e.code == SL_EPARSE,
          "err: prefix prepends 'prefix: ' and keeps the code (got %s)", e.msg);
    sl_err_prefix(&e, "outer");
    CHECK(strcmp(e.msg, "outer: file a.yml: second") == 0, "err: prefixes stack");
    sl_err_clear(&e);
    CHECK(e.code == SL_OK && e.msg == NULL, "err: clear");
    CHECK(sl_err_set(NULL, SL_EIO, "x") == -1 && sl_err_prefix(NULL, "y") == -1,
          "err: NULL err is allowed");
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sl_err_set(&e, SL_EIO, "%s", big);
    CHECK(strlen(e.msg) == sizeof big - 1, "err: long messages are not cut");
    sl_err_clear(&e);
    CHECK(strcmp(sl_errcode_name(SL_OK), "ok") == 0 &&
              strcmp(sl_errcode_name(SL_EUNSUPPORTED), "unsupported") == 0,
          "err: code names");
    char *s = sl_xasprintf("%s-%d", "a", 7);
    CHECK(strcmp(s, "a-7") == 0, "xasprintf");
    free(s);
    s = sl_xstrndup("abcdef", 3);
    CHECK(strcmp(s, "abc") == 0, "xstrndup");
    free(s);
}

static void test_deep_copy(void)
{
    sl_value *v = J("{\"a\": [1, {\"b\": 2}]}");
    sl_value *c = sl_value_deep_copy(v);
    CHECK(c != v && sl_value_equal(c, v), "deep copy is equal");
    json_object_set_new(json_array_get(json_object_get(c, "a"), 1), "b", json_integer(3));
    CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(v, "a"), 1), "b")) ==
              2,
          "deep copy does not share nested objects");
    json_decref(v);
    json_decref(c);
    v = J("[1, 2.5]");
    CHECK(sl_value_is_number(json_array_get(v, 0)) && sl_value_is_number(json_array_get(v, 1)) &&
              sl_value_number(json_array_get(v, 0)) == 1.0 &&
              sl_value_number(json_array_get(v, 1)) == 2.5,
          "is_number / number on int and real");
    json_decref(v);
}

/* sl_utf8_valid (eight ASCII bytes at a time, then a code point) agrees
 * with jansson's check on random strings: runs of ASCII of every length
 * around the 8-byte steps, with valid and broken sequences between. */
static void test_utf8_valid(void)
{
    static const char *const pieces[] = {
        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf", /* valid */
        "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80", "\xff",
        "\xf0\x9f\x98", "\xc3"};                                            /* not */
    unsigned seed = 12345, disagree = 0, tried = 0, valid = 0;
    char buf[256];
    for (int t = 0; t < 20000; t++) {
        size_t n = 0;
        int parts = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
        for (int k = 0; k <= parts && n < 200; k++) {
            int run = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 19;
            for (int r = 0; r < run; r++)
                buf[n++] = (char)('a' + r % 26);
            if ((seed >> 20) % 3) {
                const char *pc = pieces[((seed = seed * 1103515245u + 12345u) >> 16) % 12];
                /* mostly valid pieces, so whole strings are often valid */
                if ((seed >> 18) % 4 && k % 2 == 0)
                    pc = pieces[(seed >> 12) % 4];
                memcpy(buf + n, pc, strlen(pc));
                n += strlen(pc);
            }
        }
        sl_value *j = json_stringn(buf, n);
        bool want = j != NULL, got = sl_utf8_valid(buf, n);
        json_decref(j);
        disagree += want != got;
        valid += want;
        tried++;
    }
    CHECK(disagree == 0 && valid > tried / 10 && valid < tried - tried / 10,
          "utf8_valid agrees with jansson on %u strings (%u valid, %u disagree)", tried, valid,
          disagree);
    CHECK(sl_utf8_valid("abcdefgh\xc3\xa9" "abcdefgh", 18) &&
              !sl_utf8_valid("abcdefghabcdefg\xc3", 16) && sl_utf8_valid("", 0),
          "utf8_valid: ASCII words around a two-byte letter; a cut one at the end");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep TAP lines if a sanitizer ends the run */
    test_utf8_valid();
    test_text();
    test_fmt_double();
    test_truthy();
    test_equal();
    test_type_names();
    test_number_from_text();
    test_size();
    test_pyjson();
    test_utf8_chars();
    test_buf();
    test_map();
    test_err();
    test_deep_copy();
    return tap_done();
}
