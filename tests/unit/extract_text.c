/*
 * extract_text — the text formats of the document extractor give Dify's
 * text: hand-written expectations from the spec (docs/documents.md), then
 * every file of tests/documents/text/ against tests/documents/dify_text.py,
 * which runs Dify's algorithms with Python's json, csv and PyYAML.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "extract/extract.h"
#include "tap.h"

/* The kind's text for the bytes, or "ERROR: <message>". */
static char *run(sl_doc_kind kind, const void *data, size_t len, const sl_extract_limits *lim)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    char *r;
    if (sl_extract_text(kind, data, len, lim, &out, &err)) {
        r = sl_xasprintf("ERROR: %s", err.msg);
        sl_err_clear(&err);
    } else {
        r = sl_xstrndup(out.data ? out.data : "", out.len);
    }
    sl_buf_release(&out);
    return r;
}

static void expect(sl_doc_kind kind, const char *in, size_t len, const char *want)
{
    char *got = run(kind, in, len, NULL);
    char name[41];
    size_t n = 0;
    for (; n < len && n < 40; n++)
        name[n] = (unsigned char)in[n] < 0x20 ? '.' : in[n];
    name[n] = 0;
    CHECK(!strcmp(got, want), "%s of %s", sl_extract_kind_id(kind), name);
    if (strcmp(got, want))
        printf("# want [%s]\n# got  [%s]\n", want, got);
    free(got);
}

#define EXPECT(kind, in, want) expect(kind, in, sizeof in - 1, want)

static void plain(void)
{
    EXPECT(SL_DOC_TEXT, "h\xc3\xa9llo\r\n\tx  ", "h\xc3\xa9llo\r\n\tx  ");
    EXPECT(SL_DOC_TEXT, "\xef\xbb\xbfhi", "\xef\xbb\xbfhi"); /* the BOM is kept */
    EXPECT(SL_DOC_TEXT, "h\xe9llo \x80 \x81", "h\xc3\xa9llo \xe2\x82\xac \xc2\x81");
    EXPECT(SL_DOC_TEXT, "", "");
    char *got = run(SL_DOC_TEXT, "a\0b", 3, NULL);
    CHECK(!memcmp(got, "a\0b", 3), "a NUL byte is kept");
    free(got);
}

static void json(void)
{
    EXPECT(SL_DOC_JSON, "{\"a\": 1, \"b\": [x]}",
           "ERROR: Failed to decode or parse JSON file: Expecting value: line 1 column 16 (char "
           "15)");
    EXPECT(SL_DOC_JSON, "{\"a\":1,\"b\":[true,null],\"c\":{},\"d\":[]}",
           "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ],\n  \"c\": {},\n  \"d\": []\n}");
    EXPECT(SL_DOC_JSON, "{\"a\":1,\"b\":2,\"a\":3}", "{\n  \"a\": 3,\n  \"b\": 2\n}");
    EXPECT(SL_DOC_JSON, "[1.0, 1e-5, 1e100, 1E400, 10000000000000000.0, 0.1, -0, -0.0]",
           "[\n  1.0,\n  1e-05,\n  1e+100,\n  Infinity,\n  1e+16,\n  0.1,\n  0,\n  -0.0\n]");
    EXPECT(SL_DOC_JSON, "123456789012345678901234567890", "123456789012345678901234567890");
    EXPECT(SL_DOC_JSON, "[NaN, -Infinity]", "[\n  NaN,\n  -Infinity\n]");
    EXPECT(SL_DOC_JSON, "\"\\u00e9\\n\\u0001/\\ud83d\\ude00\"",
           "\"\xc3\xa9\\n\\u0001/\xf0\x9f\x98\x80\"");
    EXPECT(SL_DOC_JSON, "\xef\xbb\xbf{}",
           "ERROR: Failed to decode or parse JSON file: Unexpected UTF-8 BOM (decode using "
           "utf-8-sig): line 1 column 1 (char 0)");
    EXPECT(SL_DOC_JSON, "",
           "ERROR: Failed to decode or parse JSON file: Expecting value: line 1 column 1 (char "
           "0)");
    EXPECT(SL_DOC_JSON, "{\n\"\xc3\xa9\" 1}",
           "ERROR: Failed to decode or parse JSON file: Expecting ':' delimiter: line 2 column "
           "5 (char 6)");
    EXPECT(SL_DOC_JSON, "[1] 2",
           "ERROR: Failed to decode or parse JSON file: Extra data: line 1 column 5 (char 4)");
    EXPECT(SL_DOC_JSON, "\"abc",
           "ERROR: Failed to decode or parse JSON file: Unterminated string starting at: line 1 "
           "column 1 (char 0)");
    /* a stray byte is dropped on Dify's second try */
    EXPECT(SL_DOC_JSON, "[1,\x80 2]", "[\n  1,\n  2\n]");
    /* the output limit holds for deep nesting */
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = 1000;
    char deep[801];
    memset(deep, '[', 400);
    memset(deep + 400, ']', 400);
    char *got = run(SL_DOC_JSON, deep, 800, &lim);
    CHECK(!strncmp(got, "ERROR: the JSON file's text is over 1000 bytes", 46),
          "deep JSON stops at the output limit: %.60s", got);
    free(got);
}

static void csv(void)
{
    EXPECT(SL_DOC_CSV, "name,\"multi\r\nline\",\r\n1,\"a|b\",x,extra\r\n\r\n\"q\"\"uote\",2\r\n",
           "| name | multi line |  |\n| ---- | ----------- |  |\n| 1 | a|b | x | extra |\n|  |\n"
           "| q\"uote | 2 |\n");
    EXPECT(SL_DOC_CSV, "", "");
    EXPECT(SL_DOC_CSV, "\xc3\xa9t\xc3\xa9,b\n", "| \xc3\xa9t\xc3\xa9 | b |\n| --- | - |\n");
    EXPECT(SL_DOC_CSV, "a,b\rc",
           "ERROR: Failed to extract text from CSV: new-line character seen in unquoted field - "
           "do you need to open the file in universal-newline mode?");
    EXPECT(SL_DOC_CSV, "a,\"bc", "| a | bc |\n| - | -- |\n");
}

static void properties(void)
{
    EXPECT(SL_DOC_PROPERTIES, "# comment\nfoo=bar\n", "# comment\nfoo: bar");
    EXPECT(SL_DOC_PROPERTIES, " key value \na:b=c\n\n ! x \nk : v", "key value: \na:b: c\n\n! x\nk: v");
    EXPECT(SL_DOC_PROPERTIES, "a=1\rb=2\r\nc", "a: 1\nb: 2\nc: ");
    EXPECT(SL_DOC_PROPERTIES, "", "");
}

static void vtt(void)
{
    EXPECT(SL_DOC_VTT,
           "WEBVTT\n\n00:00.000 --> 00:01.000\na\n\n00:01.000 --> 00:02.000\nb\n\n"
           "00:02.000 --> 00:03.000\nc\n",
           " \"a\"\n \"a\"\n \"a\"");
    EXPECT(SL_DOC_VTT,
           "WEBVTT\n\n00:00.000 --> 00:01.000\n<v A>a1\n\n00:01.000 --> 00:02.000\nn\n\n"
           "00:02.000 --> 00:03.000\n<v A>a2\n",
           " \"a1\"\nA \"a1 a2\"");
    EXPECT(SL_DOC_VTT,
           "WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\n<v Ann>Hi <b>you</b>\n\n"
           "00:00:01.000 --> 00:00:02.000\n<v Ann>there\n\n00:00:02.000 --> 00:00:03.000\n"
           "<v.x Bo>ok\nline 2\n",
           "Ann \"Hi you there\"\nBo \"ok\nline 2\"");
    EXPECT(SL_DOC_VTT, "00:00.000 --> 00:01.000\nx\n", "ERROR: Invalid format");
    EXPECT(SL_DOC_VTT, "WEBVTT\n\nNOTE x\n", "");
    EXPECT(SL_DOC_VTT, "WEBVTT\n\n00:00.000 --> 00:60.000\nx\n",
           "ERROR: Invalid timestamp: 00:60.000");
}

static void yaml(void)
{
    EXPECT(SL_DOC_YAML, "a: 1\nb: [x, y]\nc:\n  d: h\xc3\xa9llo\n",
           "a: 1\nb:\n- x\n- y\nc:\n  d: h\xc3\xa9llo\n");
    EXPECT(SL_DOC_YAML, "a: 1\n---\nb: 2\n", "a: 1\n---\nb: 2\n");
    EXPECT(SL_DOC_YAML, "hello\n", "hello\n...\n");
    EXPECT(SL_DOC_YAML, "---\n", "null\n...\n");
    EXPECT(SL_DOC_YAML, "", "");
    EXPECT(SL_DOC_YAML, "k: yes\nn: 'no'\ni: 0x10\nf: 1.0e+5\ns: 1e5\ne: ''\n",
           "k: true\nn: 'no'\ni: 16\nf: 100000.0\ns: 1e5\ne: ''\n");
    EXPECT(SL_DOC_YAML, "x: &A {p: 1}\ny: *A\n", "x: &id001\n  p: 1\ny: *id001\n");
    EXPECT(SL_DOC_YAML, "t: \"a\\tb\"\nl: |\n  x\n  y\n", "t: \"a\\tb\"\nl: 'x\n\n  y\n\n  '\n");
    EXPECT(SL_DOC_YAML, "a:\tb\n",
           "ERROR: Failed to decode or parse YAML file: while scanning for the next token\n"
           "found character '\\t' that cannot start any token\n"
           "  in \"<unicode string>\", line 1, column 3:\n    a:\tb\n      ^");
    EXPECT(SL_DOC_YAML, "d: 2024-01-02\nt: 2001-12-14t21:59:43.10-05:00\nz: 2001-12-15 2:59:43Z\n",
           "d: 2024-01-02\nt: 2001-12-14 21:59:43.100000-05:00\nz: 2001-12-15 02:59:43+00:00\n");
    EXPECT(SL_DOC_YAML, "t: 10:30\nu: 1:30.5\nv: 1:60\nw: 123456789012345678901234567890\n",
           "t: 630\nu: 90.5\nv: 1:60\nw: 123456789012345678901234567890\n");
    EXPECT(SL_DOC_YAML, "b: &b {x: 1}\nc:\n  y: 2\n  <<: *b\n  x: 3\n",
           "b:\n  x: 1\nc:\n  x: 3\n  y: 2\n");
    /* an alias bomb is written with aliases: small */
    char bomb[2048];
    size_t bn = 0;
    bn += (size_t)snprintf(bomb + bn, sizeof bomb - bn, "a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'j'; c++)
        bn += (size_t)snprintf(bomb + bn, sizeof bomb - bn,
                               "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c,
                               c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    char *got = run(SL_DOC_YAML, bomb, bn, NULL);
    CHECK(strlen(got) < 2000 && strstr(got, "*id009"), "an alias bomb stays small (%zu bytes)",
          strlen(got));
    free(got);
}

/* Every file of the corpus against Dify's algorithms run by Python. */
static void differential(void)
{
    const char *dir = "tests/documents/text";
    if (access("/usr/bin/python3", X_OK)) {
        SKIP("differential", "/usr/bin/python3 is not installed");
        return;
    }
    bool have_yaml = system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") == 0;
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(0, "%s is readable", dir);
        return;
    }
    static const struct {
        const char *ext;
        sl_doc_kind kind;
    } exts[] = {{".txt", SL_DOC_TEXT}, {".json", SL_DOC_JSON}, {".yaml", SL_DOC_YAML},
                {".csv", SL_DOC_CSV},  {".properties", SL_DOC_PROPERTIES}, {".vtt", SL_DOC_VTT}};
    char **names = NULL;
    size_t nn = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        names = sl_xrealloc(names, (nn + 1) * sizeof *names);
        names[nn++] = sl_xstrdup(e->d_name);
    }
    closedir(d);
    size_t compared = 0;
    for (size_t i = 0; i < nn; i++) {
        const char *dot = strrchr(names[i], '.');
        sl_doc_kind kind = SL_DOC_UNKNOWN;
        for (size_t x = 0; dot && x < sizeof exts / sizeof *exts; x++)
            if (!strcmp(dot, exts[x].ext))
                kind = exts[x].kind;
        if (kind == SL_DOC_UNKNOWN)
            continue;
        if (kind == SL_DOC_YAML && !have_yaml) {
            SKIP(names[i], "python3-yaml is not installed");
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        sl_buf in;
        sl_buf_init(&in, 0);
        if (f) {
            sl_buf_add_file(&in, f);
            fclose(f);
        }
        char cmd[700];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 tests/documents/dify_text.py %s '%s' 2>/dev/null",
                 sl_extract_kind_id(kind), path);
        FILE *p = popen(cmd, "r");
        sl_buf want;
        sl_buf_init(&want, 0);
        sl_buf_add_file(&want, p);
        int st = pclose(p);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        char *expected = rc == 3 ? sl_xasprintf("ERROR: %s", want.data ? want.data : "")
                                 : sl_xstrndup(want.data ? want.data : "", want.len);
        size_t elen = rc == 3 ? strlen(expected) : want.len;
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_err err = {0};
        char *got;
        size_t glen;
        if (sl_extract_text(kind, in.data, in.len, NULL, &out, &err)) {
            got = sl_xasprintf("ERROR: %s", err.msg);
            glen = strlen(got);
            sl_err_clear(&err);
        } else {
            got = sl_xstrndup(out.data ? out.data : "", out.len);
            glen = out.len;
        }
        bool same = (rc == 0 || rc == 3) && glen == elen && !memcmp(got, expected, glen);
        /* libyaml words some problems otherwise than PyYAML: a YAML file
         * Dify refuses must be refused with PyYAML's first line, or by a
         * refusal naming what sluice does not read */
        static const char yfail[] = "ERROR: Failed to decode or parse YAML file: ";
        if (!same && kind == SL_DOC_YAML && rc == 3 && !strncmp(got, yfail, sizeof yfail - 1)) {
            const char *gl = strchr(got, '\n'), *el = strchr(expected, '\n');
            size_t gn = gl ? (size_t)(gl - got) : glen, en = el ? (size_t)(el - expected) : elen;
            same = strstr(got, "sluice does not read") || (gn == en && !memcmp(got, expected, gn));
        }
        if (rc == 4) /* Dify fails outside its reader: sluice must refuse */
            same = !strncmp(got, "ERROR: ", 7);
        /* refused_*: what sluice refuses by name though Dify reads it */
        if (!strncmp(names[i], "refused_", 8))
            same = strstr(got, "sluice does not read") != NULL;
        CHECK(same, "%s is Dify's text (%zu bytes)", names[i], elen);
        if (!same) {
            printf("# python rc %d\n# want [%.*s]\n# got  [%.*s]\n", rc,
                   (int)(elen < 600 ? elen : 600), expected, (int)(glen < 600 ? glen : 600),
                   got);
        }
        compared++;
        free(got);
        free(expected);
        sl_buf_release(&out);
        sl_buf_release(&want);
        sl_buf_release(&in);
    }
    CHECK(compared >= 50, "the corpus has %zu files compared", compared);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
}

int main(void)
{
    plain();
    json();
    csv();
    properties();
    vtt();
    yaml();
    differential();
    return tap_done();
}
