/*
 * ref — Dify's inline references {{#node.var.path#}}: which forms are
 * references (Dify's pattern: node id [A-Za-z0-9_]{1,50}, then 1 to 10
 * parts [A-Za-z_][A-Za-z0-9_]{0,29}), rendering of every value type the
 * way Segment.text shows it, missing variables, adjacency, the cap.
 */
#include <stdlib.h>
#include <string.h>

#include "tmpl/ref.h"
#include "tap.h"
#include "util.h"

/* Variables the resolver knows, as "node.var" -> JSON. */
static sl_value *vars;
static int resolve_calls;

static sl_value *resolve(void *ud, const char *const *parts, int n)
{
    (void)ud;
    resolve_calls++;
    sl_buf key;
    sl_buf_init(&key, 0);
    for (int i = 0; i < n; i++) {
        if (i)
            sl_buf_addc(&key, '.');
        sl_buf_adds(&key, parts[i]);
    }
    sl_value *v = json_object_get(vars, key.data);
    sl_buf_release(&key);
    return v ? json_incref(v) : NULL;
}

static void render_is(const char *text, const char *want, const char *what)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    int rc = sl_ref_render(text, resolve, NULL, &out);
    const char *got = out.data ? out.data : "";
    CHECK(rc == 0 && strcmp(got, want) == 0, "%s: '%s' renders '%s' (got '%s')", what, esc(text),
          esc(want), esc(got));
    sl_buf_release(&out);
}

typedef struct {
    sl_buf seen; /* "a.b|c.d|" */
    int stop_at; /* stop after this many (0 = never) */
    int n;
} scan_ud;

static int visit(void *ud, const char *const *parts, int n)
{
    scan_ud *s = ud;
    for (int i = 0; i < n; i++) {
        if (i)
            sl_buf_addc(&s->seen, '.');
        sl_buf_adds(&s->seen, parts[i]);
    }
    sl_buf_addc(&s->seen, '|');
    s->n++;
    return s->stop_at && s->n >= s->stop_at ? 7 : 0;
}

static void scan_is(const char *text, const char *want, const char *what)
{
    scan_ud s = {.stop_at = 0};
    sl_buf_init(&s.seen, 0);
    int rc = sl_ref_scan(text, visit, &s);
    const char *got = s.seen.data ? s.seen.data : "";
    CHECK(rc == 0 && strcmp(got, want) == 0, "%s: scan '%s' finds '%s' (got '%s')", what,
          esc(text), want, got);
    sl_buf_release(&s.seen);
}

static void setup(void)
{
    vars = json_object();
    json_object_set_new(vars, "n1.text", json_string("hello"));
    json_object_set_new(vars, "n1.empty", json_string(""));
    json_object_set_new(vars, "n1.int", json_integer(42));
    json_object_set_new(vars, "n1.neg", json_integer(-3));
    json_object_set_new(vars, "n1.f1", json_real(1.0));
    json_object_set_new(vars, "n1.f2", json_real(0.1));
    json_object_set_new(vars, "n1.fbig", json_real(1e16));
    json_object_set_new(vars, "n1.fsmall", json_real(1e-05));
    json_object_set_new(vars, "n1.t", json_true());
    json_object_set_new(vars, "n1.f", json_false());
    json_object_set_new(vars, "n1.none", json_null());
    json_object_set_new(vars, "n1.arr", json_pack("[s,s]", "a", "b"));
    json_object_set_new(vars, "n1.nums", json_pack("[i,f]", 1, 2.0));
    json_object_set_new(vars, "n1.earr", json_array());
    json_object_set_new(vars, "n1.obj", json_pack("{s:i,s:s}", "k", 1, "u", "日本"));
    json_object_set_new(vars, "n1.eobj", json_object());
    json_object_set_new(vars, "n1.multi", json_string("line1\nline2"));
    json_object_set_new(vars, "n1.hash", json_string("{{#n1.text#}}"));
    json_object_set_new(vars, "sys.query", json_string("q?"));
    json_object_set_new(vars, "n1.a.b.c", json_string("deep"));
    json_object_set_new(vars, "n1.obj.k", json_integer(1));
    json_object_set_new(vars, "1711528914102.text", json_string("numeric id"));
    json_object_set_new(vars, "A_b9.X_1", json_string("mixed"));
    json_object_set_new(vars, "n1.p1.p2.p3.p4.p5.p6.p7.p8.p9.p10", json_string("ten parts"));
    json_object_set_new(vars, "n1.p1.p2.p3.p4.p5.p6.p7.p8.p9.p10.p11", json_string("eleven"));
    json_object_set_new(vars, "n1.file", json_pack("{s:s,s:s,s:s}", "dify_model_identity",
                                                  "__dify__file__", "type", "image", "filename",
                                                  "a.png"));
}

static void test_render_values(void)
{
    render_is("{{#n1.text#}}", "hello", "a string");
    render_is("say {{#n1.text#}}!", "say hello!", "text around a reference");
    render_is("[{{#n1.empty#}}]", "[]", "an empty string");
    render_is("{{#n1.int#}}", "42", "an int");
    render_is("{{#n1.neg#}}", "-3", "a negative int");
    render_is("{{#n1.f1#}}", "1.0", "float 1.0");
    render_is("{{#n1.f2#}}", "0.1", "float 0.1");
    render_is("{{#n1.fbig#}}", "1e+16", "float 1e16");
    render_is("{{#n1.fsmall#}}", "1e-05", "float 1e-05");
    render_is("{{#n1.t#}}/{{#n1.f#}}", "true/false", "booleans");
    render_is("[{{#n1.none#}}]", "[]", "None renders empty");
    render_is("{{#n1.arr#}}", "[\"a\", \"b\"]", "array[string] as JSON with ', '");
    render_is("{{#n1.nums#}}", "[1, 2.0]", "array[number]");
    render_is("[{{#n1.earr#}}]", "[]", "an empty array renders empty");
    render_is("{{#n1.obj#}}", "{\"k\": 1, \"u\": \"日本\"}", "an object, non-ASCII kept");
    render_is("{{#n1.eobj#}}", "{}", "an empty object");
    render_is("{{#n1.multi#}}", "line1\nline2", "a multi-line string, raw");
    render_is("{{#n1.hash#}}", "{{#n1.text#}}", "a value that looks like a reference is not "
              "rendered again");
    render_is("{{#n1.file#}}",
              "{\"dify_model_identity\": \"__dify__file__\", \"type\": \"image\", "
              "\"filename\": \"a.png\"}",
              "a file (an object)");
    render_is("{{#sys.query#}}", "q?", "a sys variable");
    render_is("{{#n1.a.b.c#}}", "deep", "a nested path passes all parts");
    render_is("{{#1711528914102.text#}}", "numeric id", "a numeric node id (as Dify makes them)");
    render_is("{{#A_b9.X_1#}}", "mixed", "letters, digits, underscores");
}

static void test_forms(void)
{
    /* Dify's convert_template emits the inner text of a reference whose
     * variable does not exist. */
    render_is("{{#missing.var#}}", "missing.var", "a missing variable renders as its path, as in Dify");
    render_is("a{{#missing.var.deep#}}b", "amissing.var.deepb", "a missing variable between text");
    render_is("{{#n1.text#}}{{#n1.int#}}", "hello42", "adjacent references");
    render_is("{{#n1.text#}}{{#n1.text#}}{{#n1.text#}}", "hellohellohello", "three in a row");
    render_is("{{#n1#}}", "{{#n1#}}", "a node id alone is text");
    render_is("{{#a#}}", "{{#a#}}", "{{#a#}} is text");
    render_is("{{# n1.text #}}", "{{# n1.text #}}", "spaces inside are text");
    render_is("{{#n1.text #}}", "{{#n1.text #}}", "a trailing space is text");
    render_is("{{#n1. text#}}", "{{#n1. text#}}", "a space after the dot is text");
    render_is("{{n1.text}}", "{{n1.text}}", "Jinja-style is text");
    render_is("{#n1.text#}", "{#n1.text#}", "single braces are text");
    render_is("{{#n1.text#}", "{{#n1.text#}", "an unclosed reference is text");
    render_is("{{#n1.text}}", "{{#n1.text}}", "no closing # is text");
    render_is("{{#n1.1abc#}}", "{{#n1.1abc#}}", "a part starting with a digit is text");
    render_is("{{#n1.text.#}}", "{{#n1.text.#}}", "a trailing dot is text");
    render_is("{{#n1..text#}}", "{{#n1..text#}}", "an empty part is text");
    render_is("{{#.n1.text#}}", "{{#.n1.text#}}", "an empty node id is text");
    render_is("{{#n-1.text#}}", "{{#n-1.text#}}", "a dash in the node id is text");
    render_is("{{#n1.te-xt#}}", "{{#n1.te-xt#}}", "a dash in a part is text");
    render_is("{{#nö.text#}}", "{{#nö.text#}}", "non-ASCII in the node id is text");
    render_is("{{#n1.p1.p2.p3.p4.p5.p6.p7.p8.p9.p10#}}", "ten parts", "10 parts after the node id");
    render_is("{{#n1.p1.p2.p3.p4.p5.p6.p7.p8.p9.p10.p11#}}",
              "{{#n1.p1.p2.p3.p4.p5.p6.p7.p8.p9.p10.p11#}}", "11 parts after the node id is text");
    render_is("{{#{{#n1.text#}}", "{{#hello", "a stray opener before a reference");
    render_is("{{#n1.text#}}#}}", "hello#}}", "a stray closer after a reference");
    render_is("{{{#n1.text#}}}", "{hello}", "extra braces around");
    render_is("", "", "empty text");
    render_is("no refs at all", "no refs at all", "plain text");
    render_is("{{#", "{{#", "only an opener");
    render_is("x{{#n1.text", "x{{#n1.text", "an opener at the end");

    /* lengths: node id up to 50, parts up to 30 characters */
    char id50[51], id51[52], p30[31], p31[32];
    memset(id50, 'a', 50);
    id50[50] = '\0';
    memset(id51, 'a', 51);
    id51[51] = '\0';
    p30[0] = 'v';
    memset(p30 + 1, 'x', 29);
    p30[30] = '\0';
    p31[0] = 'v';
    memset(p31 + 1, 'x', 30);
    p31[31] = '\0';
    char key[128], text[160];
    snprintf(key, sizeof key, "%s.v", id50);
    json_object_set_new(vars, key, json_string("id50"));
    snprintf(key, sizeof key, "%s.v", id51);
    json_object_set_new(vars, key, json_string("id51"));
    snprintf(key, sizeof key, "n1.%s", p30);
    json_object_set_new(vars, key, json_string("p30"));
    snprintf(key, sizeof key, "n1.%s", p31);
    json_object_set_new(vars, key, json_string("p31"));
    snprintf(text, sizeof text, "{{#%s.v#}}", id50);
    render_is(text, "id50", "a 50-character node id");
    snprintf(text, sizeof text, "{{#%s.v#}}", id51);
    render_is(text, text, "a 51-character node id is text");
    snprintf(text, sizeof text, "{{#n1.%s#}}", p30);
    render_is(text, "p30", "a 30-character part");
    snprintf(text, sizeof text, "{{#n1.%s#}}", p31);
    render_is(text, text, "a 31-character part is text");

    /* the resolver is called once per reference, never for near-misses */
    resolve_calls = 0;
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_ref_render("{{#a#}} {{#n1.text#}} {{# x.y #}} {{#n1.int#}}", resolve, NULL, &out);
    CHECK(resolve_calls == 2, "the resolver ran once per real reference (%d calls)", resolve_calls);
    sl_buf_release(&out);

    /* rendering appends */
    sl_buf_init(&out, 0);
    sl_buf_adds(&out, "pre:");
    sl_ref_render("{{#n1.text#}}", resolve, NULL, &out);
    CHECK(strcmp(out.data, "pre:hello") == 0, "render appends to what is in the buffer");
    sl_buf_release(&out);
}

static void test_scan(void)
{
    scan_is("{{#n1.text#}} and {{#sys.query#}}", "n1.text|sys.query|", "two references");
    scan_is("{{#a#}} {{# a.b #}} {{#n1.1x#}}", "", "near-misses are not references");
    scan_is("{{#n1.a.b.c#}}{{#n2.x#}}", "n1.a.b.c|n2.x|", "parts and adjacency");
    scan_is("", "", "empty text");
    scan_is("{{#{{#x.y#}}", "x.y|", "a stray opener");
    scan_ud s = {.stop_at = 2};
    sl_buf_init(&s.seen, 0);
    int rc = sl_ref_scan("{{#a.b#}} {{#c.d#}} {{#e.f#}}", visit, &s);
    CHECK(rc == 7 && s.n == 2, "a visitor's non-zero result stops the scan and is returned "
          "(rc %d after %d)", rc, s.n);
    sl_buf_release(&s.seen);
}

static int piece(void *ud, const char *lit, size_t len, const char *const *parts, int n)
{
    sl_buf *b = ud;
    if (lit) {
        sl_buf_addc(b, '[');
        sl_buf_add(b, lit, len);
        sl_buf_addc(b, ']');
    }
    for (int i = 0; i < n; i++) {
        sl_buf_adds(b, i ? "." : "<");
        sl_buf_adds(b, parts[i]);
    }
    if (n)
        sl_buf_addc(b, '>');
    return 0;
}

static void pieces_are(const char *text, const char *want, const char *what)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_ref_pieces(text, piece, &b);
    const char *got = b.data ? b.data : "";
    CHECK(strcmp(got, want) == 0, "%s: pieces of '%s' are '%s' (got '%s')", what, esc(text),
          want, got);
    sl_buf_release(&b);
}

/* The split an answer node streams by: plain runs and references, in
 * order, near-misses staying plain text. */
static void test_pieces(void)
{
    pieces_are("Hi {{#n1.text#}}!", "[Hi ]<n1.text>[!]", "text around a reference");
    pieces_are("{{#a.b#}}{{#c.d.e#}}", "<a.b><c.d.e>", "adjacent references, no empty runs");
    pieces_are("{{# a.b #}} {{#x#}}", "[{{# a.b #}} {{#x#}}]", "near-misses stay plain");
    pieces_are("", "", "empty text");
    pieces_are("{{#x.y#}} and {{#x.y#}}", "<x.y>[ and ]<x.y>", "a reference twice");
}

static void test_cap(void)
{
    sl_buf out;
    sl_buf_init(&out, 8);
    int rc = sl_ref_render("{{#n1.text#}} {{#n1.text#}}", resolve, NULL, &out);
    CHECK(rc == -1 && out.toobig, "render past the cap returns -1 (rc %d)", rc);
    sl_buf_release(&out);
    sl_buf_init(&out, 8);
    rc = sl_ref_render("0123456789", resolve, NULL, &out);
    CHECK(rc == -1, "literal text past the cap returns -1 (rc %d)", rc);
    sl_buf_release(&out);
    sl_buf_init(&out, 5);
    rc = sl_ref_render("{{#n1.text#}}", resolve, NULL, &out);
    CHECK(rc == 0 && strcmp(out.data, "hello") == 0, "exactly at the cap is fine (rc %d)", rc);
    sl_buf_release(&out);
    /* a value that repeats until the cap: one big array, many times */
    sl_value *big = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(big, json_string("xxxxxxxxxx"));
    json_object_set_new(vars, "n1.big", big);
    sl_buf_init(&out, 50000);
    rc = sl_ref_render("{{#n1.big#}}{{#n1.big#}}{{#n1.big#}}{{#n1.big#}}", resolve, NULL, &out);
    CHECK(rc == -1 && out.len <= 50000, "large values stop at the cap (rc %d, len %zu)", rc,
          out.len);
    sl_buf_release(&out);
}

static void md_is(const char *text, const char *want, const char *what)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    int rc = sl_ref_render_markdown(text, resolve, NULL, &out);
    const char *got = out.data ? out.data : "";
    CHECK(rc == 0 && strcmp(got, want) == 0, "%s: '%s' shows '%s' (got '%s')", what, esc(text),
          esc(want), esc(got));
    sl_buf_release(&out);
}

/* Answer and end nodes show values as Dify's Segment.markdown */
static void test_markdown(void)
{
    md_is("{{#n1.arr#}}", "- a\n- b", "a list of strings as - lines");
    md_is("x {{#n1.nums#}}", "x - 1\n- 2.0", "numbers as Python prints them");
    json_object_set_new(vars, "n1.mixed", json_pack("[{s:i},[s],n,b]", "k", 1, "a", 1));
    md_is("{{#n1.mixed#}}", "- {'k': 1}\n- ['a']\n- None\n- True", "items as Python's str()");
    md_is("{{#n1.earr#}}", "", "an empty list shows nothing");
    md_is("{{#n1.obj#}}", "{\n  \"k\": 1,\n  \"u\": \"日本\"\n}", "an object indented by 2");
    md_is("{{#n1.text#}} {{#n1.int#}} {{#n1.none#}}|", "hello 42 |", "scalars as in templates");
    md_is("{{#n1.nope#}}", "n1.nope", "a missing variable as its path");
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_ref_markdown(json_object_get(vars, "n1.file"), &out);
    sl_buf plain;
    sl_buf_init(&plain, 0);
    sl_value_text(json_object_get(vars, "n1.file"), &plain);
    CHECK(out.len && out.len == plain.len && !memcmp(out.data, plain.data, out.len),
          "a file shows as in other templates");
    sl_buf_release(&out);
    sl_buf_release(&plain);
}

int main(void)
{
    setup();
    test_markdown();
    test_render_values();
    test_forms();
    test_scan();
    test_pieces();
    test_cap();
    json_decref(vars);
    return tap_done();
}
