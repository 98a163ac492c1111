/*
 * blockyaml — the fast reader for Dify's block-style YAML must agree with
 * the libyaml-based parser on everything it accepts, and must accept the
 * files Dify writes (or the speed-up would never apply).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/blockyaml.h"
#include "dsl/yaml.h"
#include "tap.h"
#include "util.h"

/* 1 accepted and equal, 0 declined, -1 accepted but different. */
static int compare(const char *text, size_t len, char **why)
{
    sl_value *fast = NULL;
    *why = NULL;
    if (sl_blockyaml_parse(text, len, &fast) < 0)
        return 0;
    sl_yaml_doc doc;
    sl_err err = {0};
    int rc = -1;
    if (sl_yaml_parse(text, len, "t.yml", &doc, &err) < 0) {
        *why = sl_xasprintf("libyaml refuses it: %s", err.msg);
    } else if (!json_equal(fast, doc.root)) {
        char *a = json_dumps(fast, JSON_COMPACT), *b = json_dumps(doc.root, JSON_COMPACT);
        *why = sl_xasprintf("fast %.200s / libyaml %.200s", a, b);
        free(a);
        free(b);
        sl_yaml_doc_release(&doc);
    } else {
        rc = 1;
        sl_yaml_doc_release(&doc);
    }
    sl_err_clear(&err);
    json_decref(fast);
    return rc;
}

static void text_is(const char *text, int want, const char *what)
{
    char *why;
    int got = compare(text, strlen(text), &why);
    CHECK(got == want, "%s: %s (%s)", what, want == 1 ? "accepted, same as libyaml" : "declined",
          why ? why : got == 1 ? "accepted" : got == 0 ? "declined" : "differs");
    free(why);
}

static void samples(const char *dir, bool must_accept)
{
    DIR *d = opendir(dir);
    if (!d) {
        CHECK(0, "cannot open %s", dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 5 || strcmp(de->d_name + nl - 4, ".yml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len;
        char *text = slurp(path, &len);
        char *why = NULL;
        int got = text ? compare(text, len, &why) : -1;
        if (must_accept)
            CHECK(got == 1, "%s: the fast reader accepts it and agrees with libyaml (%s)", path,
                  why ? why : got == 0 ? "declined" : "ok");
        else
            CHECK(got >= 0, "%s: accepted and equal, or declined (%s)", path, why ? why : "ok");
        free(why);
        free(text);
    }
    closedir(d);
}

int main(void)
{
    char *shared = shared_path("dsl-samples");
    DIR *d = opendir(shared);
    if (d) {
        closedir(d);
        samples(shared, true);
    } else {
        SKIP("the fast reader on the shared Dify exports", "no %s (%s); SLUICE_SHARED names "
             "the folder that holds dsl-samples/", shared, strerror(errno));
    }
    free(shared);
    samples("tests/cases/engine", false);
    samples("tests/cases/http", false);
    samples("tests/cases/if_else", false);

    text_is("a: 1\nb: yes\nc: '1'\nd: ~\ne: 1.5\nf: 1:30\ng: 0x1F\n", 1, "typed plain scalars");
    text_is("a:\n- 1\n- - 2\n  - 3\n- k: v\n  j: w\nb: []\nc: {}\n", 1, "indentless and nested sequences");
    text_is("a: this is a long\n  plain scalar\n\n  with a blank line\nb: x\n", 1, "folded plain scalar");
    text_is("a: 'it''s\n\n  folded\n  here'\n", 1, "folded single-quoted scalar");
    text_is("a: \"esc \\u00e9 \\x41 \\t\\\n  \\ joined\\\n\n  next\"\n", 1, "double-quoted escapes and breaks");
    text_is("a: 1 # comment\n", 0, "a comment after a value");
    text_is("a: [1, 2]\n", 0, "a flow sequence");
    text_is("a: &x 1\nb: *x\n", 0, "anchors");
    text_is("a: |\n  lit\n", 0, "a literal block");
    text_is("a:\tb\n", 0, "a tab");
    text_is("a: 1\r\nb: 2\r\n", 0, "CR line ends");
    text_is("---\na: 1\n", 0, "a document marker");
    text_is("1: a\n", 0, "a non-text key");
    text_is("a: b: c\n", 0, "a mapping on a value's line");
    text_is("a: 1\n b: 2\n", 0, "a key indented under a scalar");
    return tap_done();
}
