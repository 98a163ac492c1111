/*
 * yaml — the DSL loader: YAML 1.1 scalar resolution as PyYAML's safe_load
 * does it (Dify loads DSL files with it), limits (depth, alias bombs,
 * multi-document, bad UTF-8), source marks, and the emitter round trip.
 *
 * Every expected value below was checked with python3 + PyYAML 6
 * (yaml.safe_load; marks with yaml.compose, node.start_mark + 1).
 */
#include <stdlib.h>
#include <string.h>

#include "dsl/yaml.h"
#include "tap.h"
#include "util.h"

/* Same JSON type (int vs real matters here) and equal, recursively. */
static bool same(const sl_value *a, const sl_value *b)
{
    if (!a || !b)
        return a == b;
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        sl_value *e;
        json_object_foreach((sl_value *)a, k, e) if (!same(e, json_object_get(b, k))) return false;
        return true;
    }
    if (json_is_real(a))
        return json_real_value(a) == json_real_value(b);
    return json_equal((sl_value *)a, (sl_value *)b);
}

static int parse(const char *text, sl_yaml_doc *doc, sl_err *err)
{
    return sl_yaml_parse(text, strlen(text), "t.yml", doc, err);
}

/* Parses `text` and compares the whole document with JSON `want`. */
static void doc_is(const char *text, const char *want_json, const char *what)
{
    sl_yaml_doc doc;
    sl_err err = {0};
    int rc = parse(text, &doc, &err);
    sl_value *want = J(want_json);
    char *got = rc == 0 ? show(doc.root) : strdup(err.msg ? err.msg : "?");
    CHECK(rc == 0 && same(doc.root, want), "%s: %s -> %s (got %s)", what, esc(text), want_json,
          esc(got));
    free(got);
    json_decref(want);
    if (rc == 0)
        sl_yaml_doc_release(&doc);
    sl_err_clear(&err);
}

/* Plain scalar `s` as the value of key a. */
static void scalar_is(const char *s, const char *want_json)
{
    char text[256], what[300];
    snprintf(text, sizeof text, "a: %s\n", s);
    snprintf(what, sizeof what, "{\"a\": %s}", want_json);
    doc_is(text, what, "scalar");
}

static void test_scalars(void)
{
    /* booleans (YAML 1.1) */
    scalar_is("yes", "true");
    scalar_is("Yes", "true");
    scalar_is("YES", "true");
    scalar_is("no", "false");
    scalar_is("NO", "false");
    scalar_is("on", "true");
    scalar_is("On", "true");
    scalar_is("off", "false");
    scalar_is("OFF", "false");
    scalar_is("true", "true");
    scalar_is("True", "true");
    scalar_is("TRUE", "true");
    scalar_is("False", "false");
    scalar_is("false", "false");
    scalar_is("y", "\"y\"");
    scalar_is("n", "\"n\"");
    scalar_is("Y", "\"Y\"");
    scalar_is("yEs", "\"yEs\"");
    scalar_is("tRUE", "\"tRUE\"");
    /* null */
    scalar_is("~", "null");
    scalar_is("null", "null");
    scalar_is("Null", "null");
    scalar_is("NULL", "null");
    scalar_is("", "null");
    scalar_is("nULL", "\"nULL\"");
    /* ints */
    scalar_is("0", "0");
    scalar_is("-0", "0");
    scalar_is("00", "0");
    scalar_is("42", "42");
    scalar_is("+12", "12");
    scalar_is("-17", "-17");
    scalar_is("0x1F", "31");
    scalar_is("0x1f", "31");
    scalar_is("-0x1F", "-31");
    scalar_is("0x_1F", "31");
    scalar_is("0o17", "\"0o17\"");  /* PyYAML (1.1) has no 0o prefix: a string */
    scalar_is("017", "15");         /* 1.1 legacy octal */
    scalar_is("08", "\"08\"");      /* not octal, not decimal: a string */
    scalar_is("0b101", "5");
    scalar_is("1_000", "1000");
    scalar_is("1__", "1");
    scalar_is("9223372036854775807", "9223372036854775807");
    scalar_is("1:30", "90");        /* sexagesimal (base 60) */
    scalar_is("190:20:30", "685230");
    scalar_is("0xG", "\"0xG\"");
    scalar_is("1,000", "\"1,000\"");
    /* floats: PyYAML needs a dot, and a signed exponent */
    scalar_is("1.5", "1.5");
    scalar_is("-1.5e-3", "-0.0015");
    scalar_is("1.5E+3", "1500.0");
    scalar_is("1.0e+5", "100000.0");
    scalar_is("1.", "1.0");
    scalar_is("3.", "3.0");
    scalar_is("0.", "0.0");
    scalar_is(".5", "0.5");
    scalar_is("1_0.5", "10.5");
    scalar_is("1:30.5", "90.5");
    scalar_is("1e5", "\"1e5\"");
    scalar_is("1e+5", "\"1e+5\"");
    scalar_is("12e03", "\"12e03\"");
    scalar_is("1.0e5", "\"1.0e5\"");
    scalar_is("-.5", "\"-.5\"");
    scalar_is("+.5", "\"+.5\"");
    scalar_is("._5", "\"._5\"");
    scalar_is(".", "\".\"");
    /* too big for int64: PyYAML makes a bignum; it must not turn into a wrong int */
    {
        sl_yaml_doc doc;
        sl_err err = {0};
        int rc = parse("a: 9223372036854775808\n", &doc, &err);
        const sl_value *a = rc == 0 ? json_object_get(doc.root, "a") : NULL;
        CHECK(rc == 0 && a && !json_is_integer(a),
              "2**63 is not squeezed into a (wrong) int64 (got %s)",
              a ? (json_is_integer(a) ? "an integer" : "not an integer") : "error");
        if (rc == 0)
            sl_yaml_doc_release(&doc);
        sl_err_clear(&err);
    }
    /* quoted scalars stay strings */
    scalar_is("'yes'", "\"yes\"");
    scalar_is("\"no\"", "\"no\"");
    scalar_is("'123'", "\"123\"");
    scalar_is("\"1.5\"", "\"1.5\"");
    scalar_is("''", "\"\"");
    scalar_is("'~'", "\"~\"");
    scalar_is("\"null\"", "\"null\"");
    scalar_is("'0x1F'", "\"0x1F\"");
    scalar_is("\"a\\tb\\u00e9\"", "\"a\\tb\\u00e9\"");
    /* tags */
    scalar_is("!!str 123", "\"123\"");
    scalar_is("!!str yes", "\"yes\"");
    scalar_is("!!int \"12\"", "12");
    /* plain text */
    scalar_is("hello world", "\"hello world\"");
    scalar_is("日本語", "\"日本語\"");
    scalar_is("2001-12-14x", "\"2001-12-14x\"");
    doc_is("a: |\n  yes\n  2\nb: >\n  folded\n  text\n\nc: |-\n  keep\n",
           "{\"a\": \"yes\\n2\\n\", \"b\": \"folded text\\n\", \"c\": \"keep\"}",
           "block scalars are strings");
    doc_is("a: [yes, '1', 1, 1.0, ~]\n", "{\"a\": [true, \"1\", 1, 1.0, null]}",
           "flow sequence items resolve like block ones");
    doc_is("a: {b: off, c: 0x10}\n", "{\"a\": {\"b\": false, \"c\": 16}}", "flow mapping values");
}

static void test_structure(void)
{
    doc_is("1: a\n1.5: b\n~: d\n0x10: e\n",
           "{\"1\": \"a\", \"1.5\": \"b\", \"None\": \"d\", \"16\": \"e\"}",
           "number and null keys become text keys (as Python's str())");
    doc_is("true: x\n", "{\"True\": \"x\"}", "a bool key becomes 'True'");
    doc_is("'1': a\n\"yes\": b\n", "{\"1\": \"a\", \"yes\": \"b\"}", "quoted keys stay as written");
    doc_is("a: 1\na: 2\n", "{\"a\": 2}", "a duplicate key: the later wins (PyYAML)");
    doc_is("base: &b {x: 1, y: 2}\nuse: *b\n",
           "{\"base\": {\"x\": 1, \"y\": 2}, \"use\": {\"x\": 1, \"y\": 2}}", "alias of a mapping");
    doc_is("a: &s hello\nb: *s\nc: [*s, *s]\n",
           "{\"a\": \"hello\", \"b\": \"hello\", \"c\": [\"hello\", \"hello\"]}",
           "alias of a scalar");
    doc_is("a: &n 12\nb: *n\n", "{\"a\": 12, \"b\": 12}", "an aliased int stays an int");
    doc_is("a: &l [1, 2]\nb: &l [3]\nc: *l\n", "{\"a\": [1, 2], \"b\": [3], \"c\": [3]}",
           "a redefined anchor: aliases see the latest");
    doc_is("base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
           "{\"base\": {\"x\": 1, \"y\": 2}, \"derived\": {\"x\": 1, \"y\": 3}}",
           "merge key << (safe_load merges)");
    doc_is("", "null", "an empty file is null");
    doc_is("# only a comment\n", "null", "a comment-only file is null");
    doc_is("--- \na: 1\n...\n", "{\"a\": 1}", "explicit start and end markers, one document");
    doc_is("- a\n- - b\n  - c\n- {d: [e]}\n", "[\"a\", [\"b\", \"c\"], {\"d\": [\"e\"]}]",
           "nested block and flow collections");
    doc_is("\xef\xbb\xbf" "a: 1\n", "{\"a\": 1}", "a UTF-8 BOM is accepted");
}

static void refused(const char *text, size_t len, const char *want_in_msg, const char *what)
{
    sl_yaml_doc doc;
    sl_err err = {0};
    int rc = sl_yaml_parse(text, len, "t.yml", &doc, &err);
    bool ok = rc < 0 && err.msg && strncmp(err.msg, "t.yml:", 6) == 0 &&
              (!want_in_msg || strstr(err.msg, want_in_msg));
    CHECK(ok, "%s is refused with 't.yml:line:col: ...%s...' (got rc %d, %s)", what,
          want_in_msg ? want_in_msg : "", rc, err.msg ? esc(err.msg) : "no message");
    if (rc == 0)
        sl_yaml_doc_release(&doc);
    sl_err_clear(&err);
}

static bool msg_has_line_col(const char *msg, int line)
{
    /* "t.yml:LINE:COL: ..." */
    int l = 0, c = 0;
    return msg && sscanf(msg, "t.yml:%d:%d:", &l, &c) == 2 && (line == 0 || l == line) && c > 0;
}

static void test_limits(void)
{
    refused("a: 1\n---\nb: 2\n", strlen("a: 1\n---\nb: 2\n"), "document", "a second document");
    refused("--- 1\n--- 2\n", strlen("--- 1\n--- 2\n"), NULL, "two explicit documents");

    /* 300 nested flow sequences: an error, not a crash */
    char deep[700];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[600] = '\0';
    refused(deep, 600, NULL, "300 nested [");
    /* and as many nested block mappings */
    sl_buf b;
    sl_buf_init(&b, 0);
    for (int i = 0; i < 300; i++) {
        for (int k = 0; k < i; k++)
            sl_buf_adds(&b, " ");
        sl_buf_adds(&b, "k:\n");
    }
    refused(b.data, b.len, NULL, "300 nested block mappings");
    sl_buf_release(&b);
    /* 200 levels is fine */
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    deep[400] = '\0';
    {
        sl_yaml_doc doc;
        sl_err err = {0};
        int rc = sl_yaml_parse(deep, 400, "t.yml", &doc, &err);
        int depth = 0;
        const sl_value *v = rc == 0 ? doc.root : NULL;
        while (json_is_array(v)) {
            depth++;
            v = json_array_get(v, 0);
        }
        CHECK(rc == 0 && depth == 200, "200 nested [ load (depth %d, %s)", depth,
              err.msg ? err.msg : "ok");
        if (rc == 0)
            sl_yaml_doc_release(&doc);
        sl_err_clear(&err);
    }

    /* billion laughs: 9 levels of 9 aliases = 9^9 values */
    const char *bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                       "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                       "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    refused(bomb, strlen(bomb), "alias", "a billion-laughs alias bomb");
    /* a modest, legitimate use of aliases is fine */
    const char *small = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\nc: &c {k: *a}\nd: [*c, *c]\n";
    {
        sl_yaml_doc doc;
        sl_err err = {0};
        int rc = parse(small, &doc, &err);
        CHECK(rc == 0 && json_array_size(json_object_get(doc.root, "d")) == 2,
              "a few aliases load (%s)", err.msg ? err.msg : "ok");
        if (rc == 0)
            sl_yaml_doc_release(&doc);
        sl_err_clear(&err);
    }
    refused("a: *nowhere\n", strlen("a: *nowhere\n"), "anchor", "an alias to an unknown anchor");

    /* invalid UTF-8 */
    refused("a: \xff\xfe\n", 7, NULL, "bytes FF FE");
    refused("a: 'caf\xc3'\n", 10, NULL, "a truncated UTF-8 sequence");
    refused("a: \xc0\xaf\n", 6, NULL, "an overlong UTF-8 encoding");
    refused("a: \xed\xa0\x80\n", 7, NULL, "a UTF-8 encoded surrogate");
    {
        /* the message points at the bad byte, not at the file's start */
        sl_yaml_doc doc;
        sl_err err = {0};
        const char *t = "a: 1\nb: 2\nc: caf\xe9\n";
        int rc = sl_yaml_parse(t, strlen(t), "t.yml", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 3),
              "invalid UTF-8 on line 3 is reported at t.yml:3:... (got %s)", esc(err.msg));
        sl_err_clear(&err);
    }

    /* syntax errors carry file:line:col */
    {
        sl_yaml_doc doc;
        sl_err err = {0};
        int rc = parse("a: 1\nb: [1, 2\nc: 3\n", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 0) && strstr(err.msg, "YAML"),
              "a syntax error says t.yml:line:col and YAML (got %s)", esc(err.msg));
        sl_err_clear(&err);
        rc = parse("a: 1\nb:\n  - x\n - y\n", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 4), "a bad indent is reported on line 4 (got %s)",
              esc(err.msg));
        sl_err_clear(&err);
        rc = parse("a: 1\n\tb: 2\n", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 2), "a tab indent is reported on line 2 (got %s)",
              esc(err.msg));
        sl_err_clear(&err);
        rc = parse("a: !!python/object:os.system x\n", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 1),
              "a python tag is refused (safe_load refuses it too) (got %s)", esc(err.msg));
        sl_err_clear(&err);
        rc = parse("? [a, b]\n: c\n", &doc, &err);
        CHECK(rc < 0 && msg_has_line_col(err.msg, 1), "a sequence as a key is refused (got %s)",
              esc(err.msg));
        sl_err_clear(&err);
    }
    /* a NULL err is allowed */
    sl_yaml_doc doc;
    CHECK(sl_yaml_parse("[", 1, "t.yml", &doc, NULL) < 0, "a parse error with err == NULL");
}

typedef struct {
    const char *path;
    int line, col;
} want_mark;

/* Walks "a.b[1].c" from root; returns the container and sets key/index. */
static const sl_value *locate(const sl_value *root, const char *path, char *key, size_t *idx,
                              bool *is_index)
{
    const sl_value *cur = root, *parent = NULL;
    const char *p = path;
    while (*p) {
        parent = cur;
        if (*p == '.') {
            p++;
            size_t n = strcspn(p, ".[");
            memcpy(key, p, n);
            key[n] = '\0';
            cur = json_object_get(cur, key);
            *is_index = false;
            p += n;
        } else if (*p == '[') {
            *idx = strtoul(p + 1, (char **)&p, 10);
            p++; /* ']' */
            cur = json_array_get(cur, *idx);
            *is_index = true;
        } else {
            return NULL;
        }
    }
    return parent;
}

static void test_marks(void)
{
    const char *text = "app:\n"
                       "  name: demo\n"
                       "  mode: workflow\n"
                       "workflow:\n"
                       "  graph:\n"
                       "    nodes:\n"
                       "    - id: a\n"
                       "      data:\n"
                       "        type: start\n"
                       "    -   id: b\n"
                       "        data: {type: end, title: \"E\"}\n"
                       "    edges: []\n"
                       "list:\n"
                       "  - 1\n"
                       "  - [x, y]\n"
                       "  -\n"
                       "    deep: true\n"
                       "empty:\n"
                       "quoted: 'yes'\n";
    /* python3: yaml.compose(text), value_node.start_mark.line + 1, .column + 1 */
    static const want_mark w[] = {
        {".app", 2, 3},
        {".app.name", 2, 9},
        {".app.mode", 3, 9},
        {".workflow", 5, 3},
        {".workflow.graph", 6, 5},
        {".workflow.graph.nodes", 7, 5},
        {".workflow.graph.nodes[0]", 7, 7},
        {".workflow.graph.nodes[0].id", 7, 11},
        {".workflow.graph.nodes[0].data", 9, 9},
        {".workflow.graph.nodes[0].data.type", 9, 15},
        {".workflow.graph.nodes[1]", 10, 9},
        {".workflow.graph.nodes[1].id", 10, 13},
        {".workflow.graph.nodes[1].data", 11, 15},
        {".workflow.graph.nodes[1].data.type", 11, 22},
        {".workflow.graph.nodes[1].data.title", 11, 34},
        {".workflow.graph.edges", 12, 12},
        {".list", 14, 3},
        {".list[0]", 14, 5},
        {".list[1]", 15, 5},
        {".list[1][0]", 15, 6},
        {".list[1][1]", 15, 9},
        {".list[2]", 17, 5},
        {".list[2].deep", 17, 11},
        {".quoted", 19, 9},
    };
    sl_yaml_doc doc;
    sl_err err = {0};
    if (parse(text, &doc, &err) < 0) {
        CHECK(0, "marks document parses: %s", err.msg);
        sl_err_clear(&err);
        return;
    }
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char key[64];
        size_t idx = 0;
        bool is_index = false;
        const sl_value *c = locate(doc.root, w[i].path, key, &idx, &is_index);
        sl_mark m = {0, 0};
        if (c)
            m = is_index ? sl_yaml_index_mark(&doc, c, idx) : sl_yaml_key_mark(&doc, c, key);
        CHECK(m.line == w[i].line && m.col == w[i].col, "mark of %s is %d:%d (got %d:%d)",
              w[i].path, w[i].line, w[i].col, m.line, m.col);
    }
    /* Shared singletons: `true` at two places keeps two marks. */
    const sl_value *app = json_object_get(doc.root, "app");
    sl_mark am = sl_yaml_mark(&doc, app);
    CHECK(am.line == 2 && am.col == 3, "a mapping's own mark is where it starts (got %d:%d)",
          am.line, am.col);
    sl_mark miss = sl_yaml_key_mark(&doc, app, "no-such-key");
    CHECK(miss.line == am.line && miss.col == am.col,
          "a key not in the file falls back to the object's own mark (got %d:%d)", miss.line,
          miss.col);
    const sl_value *list = json_object_get(doc.root, "list");
    sl_mark lm = sl_yaml_index_mark(&doc, list, 99);
    CHECK(lm.line == 14 && lm.col == 3, "an index past the end falls back to the list's mark");
    sl_yaml_doc_release(&doc);

    /* Same-valued scalars (shared singletons in jansson) at different places */
    const char *t2 = "a:\n  x: true\nb:\n  x: true\n  y: null\nc:\n  - null\n  - true\n";
    if (parse(t2, &doc, &err) == 0) {
        sl_mark ma = sl_yaml_key_mark(&doc, json_object_get(doc.root, "a"), "x");
        sl_mark mb = sl_yaml_key_mark(&doc, json_object_get(doc.root, "b"), "x");
        sl_mark my = sl_yaml_key_mark(&doc, json_object_get(doc.root, "b"), "y");
        sl_mark mc = sl_yaml_index_mark(&doc, json_object_get(doc.root, "c"), 1);
        CHECK(ma.line == 2 && ma.col == 6 && mb.line == 4 && mb.col == 6 && my.line == 5 &&
                  mc.line == 8 && mc.col == 5,
              "equal singleton values keep their own marks (%d:%d %d:%d %d %d:%d)", ma.line,
              ma.col, mb.line, mb.col, my.line, mc.line, mc.col);
        sl_yaml_doc_release(&doc);
    } else {
        CHECK(0, "singleton marks document parses");
    }

    /* Long keys that share a 120-character prefix keep separate marks. */
    char longdoc[1024];
    char prefix[131];
    memset(prefix, 'k', 130);
    prefix[130] = '\0';
    snprintf(longdoc, sizeof longdoc, "%s1: a\n%s2: b\n", prefix, prefix);
    if (parse(longdoc, &doc, &err) == 0) {
        char k1[140], k2[140];
        snprintf(k1, sizeof k1, "%s1", prefix);
        snprintf(k2, sizeof k2, "%s2", prefix);
        sl_mark m1 = sl_yaml_key_mark(&doc, doc.root, k1);
        sl_mark m2 = sl_yaml_key_mark(&doc, doc.root, k2);
        CHECK(m1.line == 1 && m2.line == 2,
              "two 131-char keys with a common prefix: marks on lines 1 and 2 (got %d and %d)",
              m1.line, m2.line);
        sl_yaml_doc_release(&doc);
    } else {
        CHECK(0, "long keys document parses");
    }
    sl_err_clear(&err);

    /* Parsing without marks gives the same value; lookups then find nothing. */
    sl_yaml_doc fast, full;
    if (sl_yaml_parse_ex(text, strlen(text), "t.yml", &fast, false, &err) == 0 &&
        parse(text, &full, &err) == 0) {
        CHECK(same(fast.root, full.root), "parse without marks gives the same document");
        sl_mark m = sl_yaml_key_mark(&fast, fast.root, "app");
        CHECK(m.line == 0 && m.col == 0, "without marks, lookups give 0:0 (got %d:%d)", m.line,
              m.col);
        sl_yaml_doc_release(&fast);
        sl_yaml_doc_release(&full);
    } else {
        CHECK(0, "parse_ex without marks works: %s", err.msg ? err.msg : "?");
    }
    sl_err_clear(&err);
}

/* parse(emit(v)) must give v back, types included. */
static void round_trip(const sl_value *v, const char *what)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_yaml_emit(v, &out, &err);
    sl_yaml_doc doc;
    int prc = rc == 0 ? sl_yaml_parse(out.data, out.len, "emit.yml", &doc, &err) : -1;
    bool ok = rc == 0 && prc == 0 && same(doc.root, v);
    char *want = show(v);
    char *got = prc == 0 ? show(doc.root) : strdup(err.msg ? err.msg : "emit failed");
    CHECK(ok, "round trip of %s: %s (yaml '%s', back %s)", what, esc(want),
          esc(out.data ? out.data : ""), esc(got));
    free(want);
    free(got);
    if (prc == 0)
        sl_yaml_doc_release(&doc);
    sl_buf_release(&out);
    sl_err_clear(&err);
}

static void test_emit(void)
{
    static const char *const strs[] = {
        "yes", "no", "on", "off", "true", "False", "y", "n", "123", "-5", "0x1F", "0o17", "017",
        "08", "1_000", "1.5", "1e5", "1.0e+5", ".5", "-.5", "1:30", "1.", "", "null", "~", "Null",
        "- x", "-", "a: b", "a:b", ":", "?", "? x", "#x", "x #y", "x#y", "[a]", "{a: b}", "a, b",
        "'quoted'", "\"dq\"", "*alias", "&anchor", "!tag", "%percent", "@at", "`tick", "|", ">",
        "multi\nline\ntext\n", "multi\nline no newline at end", "ends with two\n\n", "\nleading nl",
        "  leading spaces", "trailing spaces  ", " ", "\t", "a\tb", "日本語 ✓ é 😀",
        "\x01 control", "back\\slash", "crlf\r\nline", "---", "...", "--- x", "=", "<<",
        ".inf", ".nan", "2001-12-14",
        ("a very long line that goes on and on past the usual eighty column width limit of "
         "yaml emitters so folding must not change it at all ok"),
        "   \n  indented\n    more\n", "\u2028sep", "\xc2\x85nel",
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        sl_value *v = json_pack("{s:s,s:[s,{s:s}]}", "k", strs[i], "arr", strs[i], "n", strs[i]);
        if (!v) {
            CHECK(0, "test string %zu is valid UTF-8", i);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "string #%zu", i);
        round_trip(v, what);
        /* the string as a key too (single-line ones) */
        if (!strchr(strs[i], '\n') && !strchr(strs[i], '\r') && strs[i][0]) {
            sl_value *o = json_object();
            json_object_set_new(o, strs[i], json_integer(1));
            snprintf(what, sizeof what, "key #%zu", i);
            round_trip(o, what);
            json_decref(o);
        }
        json_decref(v);
    }
    /* numbers and other scalars keep their types */
    static const char *const vals[] = {
        "0", "-5", "9223372036854775807", "-9223372036854775808", "1.0", "0.1", "-0.0",
        "123456789012345.0", "1e16", "1e-05", "1.5e300", "2.5e-10", "true", "false", "null",
        "[]", "{}", "[[]]", "{\"a\": {}}", "[1, [2, [3, []]]]", "{\"a\": [], \"b\": {\"c\": null}}",
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "value %s", vals[i]);
        sl_value *v = J(vals[i]);
        sl_value *o = json_pack("{s:O,s:[O]}", "v", v, "l", v);
        round_trip(o, what);
        json_decref(o);
        json_decref(v);
    }
    /* Strings that PyYAML (Dify) would read as something else must be quoted
     * in the YAML sluice writes, even where sluice itself keeps them text. */
    static const char *const pyyaml_nonstr[] = {".inf", "-.Inf", ".NaN", "1:30", "190:20:30"};
    for (size_t i = 0; i < sizeof pyyaml_nonstr / sizeof pyyaml_nonstr[0]; i++) {
        sl_value *o = json_pack("{s:s}", "k", pyyaml_nonstr[i]);
        sl_buf out;
        sl_buf_init(&out, 0);
        int rc = sl_yaml_emit(o, &out, NULL);
        const char *p = out.data ? strstr(out.data, "k: ") : NULL;
        CHECK(rc == 0 && p && (p[3] == '\'' || p[3] == '"'),
              "'%s' is written quoted so PyYAML reads a string (got %s)", pyyaml_nonstr[i],
              esc(out.data ? out.data : ""));
        sl_buf_release(&out);
        json_decref(o);
    }
    /* emit honours the buffer cap */
    sl_value *big = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(big, json_string("some text that takes room"));
    sl_buf out;
    sl_buf_init(&out, 1000);
    sl_err err = {0};
    CHECK(sl_yaml_emit(big, &out, &err) < 0 && err.msg, "emit into a small capped buffer fails (%s)",
          err.msg ? err.msg : "no message");
    sl_buf_release(&out);
    sl_err_clear(&err);
    json_decref(big);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep TAP lines if a sanitizer ends the run */
    test_scalars();
    test_structure();
    test_limits();
    test_marks();
    test_emit();
    return tap_done();
}
