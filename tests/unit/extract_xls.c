/*
 * extract_xls — legacy .xls text as Dify's extractor gives it, on the
 * corpus tests/documents/gen_xls.py makes (xlwt workbooks and BIFF8
 * records written by hand, with pandas over xlrd computing the expected
 * text by Dify's algorithm), and hostile workbooks (counts, offsets and
 * lengths that lie, CONTINUE chains that end early, encryption, BIFF5)
 * that must fail with a clear error; limits where they bite.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "extract/extract.h"
#include "tap.h"
#include "util.h"

/* Whitespace runs as one space, none at the ends. */
static char *norm(const char *s)
{
    char *o = malloc(strlen(s) + 1), *w = o;
    bool sp = false;
    for (; *s; s++) {
        if (isspace((unsigned char)*s)) {
            sp = w != o;
            continue;
        }
        if (sp)
            *w++ = ' ';
        sp = false;
        *w++ = *s;
    }
    *w = 0;
    return o;
}

static sl_doc_kind kind_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    sl_err err = {0};
    sl_doc_kind k = sl_extract_kind(dot, NULL, &err);
    sl_err_clear(&err);
    return k;
}

static void corpus_case(const char *dir, char *line)
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return;
    *sp = 0;
    const char *name = line, *mode = sp + 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    char *data = slurp(path, &len);
    if (!data) {
        CHECK(0, "%s: cannot read the generated file", name);
        return;
    }
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_extract_text(kind_of(name), data, len, NULL, &out, &err);
    if (!strncmp(mode, "error ", 6)) {
        char code[64] = "";
        const char *text = "";
        sscanf(mode + 6, "%63s", code);
        const char *t = strchr(mode + 6, ' ');
        if (t)
            text = t + 1;
        bool code_ok = rc == -1 && !strcmp(sl_errcode_name(err.code), code);
        CHECK(rc == -1 && code_ok && strstr(err.msg, text), "%s: %s \"...%s...\" (got %s: %s)",
              name, code, text, rc ? sl_errcode_name(err.code) : "success",
              rc ? err.msg : esc(out.data ? out.data : ""));
        CHECK(!out.len, "%s: nothing is appended on failure", name);
    } else {
        snprintf(path, sizeof path, "%s/%s.expected", dir, name);
        size_t elen;
        char *want = slurp(path, &elen);
        if (rc || !want) {
            CHECK(0, "%s: %s", name, rc ? err.msg : "no expected text");
        } else {
            char *a = norm(out.data ? out.data : ""), *b = norm(want);
            CHECK(!strcmp(a, b),
                  "%s: the text matches Dify's after whitespace normalisation%s%s%s%s",
                  name, strcmp(a, b) ? "\n# got:  " : "", strcmp(a, b) ? esc(a) : "",
                  strcmp(a, b) ? "\n# want: " : "", strcmp(a, b) ? esc(b) : "");
            free(a);
            free(b);
            if (!strcmp(mode, "exact"))
                CHECK(out.len == elen && !memcmp(out.data ? out.data : "", want, elen),
                      "%s: the text is byte-exact%s%s%s%s", name,
                      out.len != elen ? "\n# got:  " : "", out.len != elen ? esc(out.data) : "",
                      out.len != elen ? "\n# want: " : "", out.len != elen ? esc(want) : "");
        }
        free(want);
    }
    sl_err_clear(&err);
    sl_buf_release(&out);
    free(data);
}

static void corpus(void)
{
    char dir[] = "/tmp/sluice-xls-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/documents/gen_xls.py %s", dir);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code == 3)
        SKIP("the xlwt/xlrd/pandas corpus",
             "python3-xlwt, python3-xlrd or python3-pandas is not installed");
    else
        CHECK(code == 0, "gen_xls.py ran (status %d)", code);
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t len;
    char *m = slurp(path, &len);
    CHECK(m != NULL, "gen_xls.py wrote a manifest");
    size_t n = 0;
    for (char *line = m, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        corpus_case(dir, line);
        n++;
    }
    CHECK(n >= 17, "the corpus has %zu workbooks", n);
    free(m);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* A workbook from the corpus, or NULL. */
static char *corpus_file(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path, len);
}

/* The limits stop a workbook where they bite, and any extension that
 * names Excel reads it by its bytes, as pandas does. */
static void limits(const char *dir)
{
    size_t len;
    char *data = corpus_file(dir, "long_sst.xls", &len);
    if (!data) {
        SKIP("the limits", "no long_sst.xls (the pandas part of the corpus was skipped)");
        return;
    }
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_extract_text(SL_DOC_EXCEL, data, len, &lim, &out, &err);
    CHECK(rc == 0 && out.len > 20000 && strstr(out.data, "| k | v |"),
          "a workbook of 400 rows reads (%zu bytes)", out.len);
    size_t full = out.len;
    sl_buf_reset(&out);
    lim.max_output = 10000;
    rc = sl_extract_text(SL_DOC_EXCEL, data, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "over 10000 bytes") && !out.len,
          "max_output stops its text: %s", err.msg);
    sl_err_clear(&err);
    lim.max_output = 64;
    rc = sl_extract_text(SL_DOC_EXCEL, data, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "cells"),
          "a tiny max_output stops the cells before they are read: %s", err.msg);
    sl_err_clear(&err);
    sl_extract_limits_default(&lim);
    lim.max_member = 4096;
    rc = sl_extract_text(SL_DOC_EXCEL, data, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT, "max_member stops the Workbook stream: %s", err.msg);
    sl_err_clear(&err);
    sl_extract_limits_default(&lim);
    /* every prefix of a workbook fails cleanly or reads */
    size_t fails = 0;
    for (size_t n = 0; n < len; n += n < 2048 ? 97 : 1499) {
        sl_buf_reset(&out);
        if (sl_extract_text(SL_DOC_EXCEL, data, n, &lim, &out, &err)) {
            fails += err.code == SL_EPARSE;
            sl_err_clear(&err);
        }
    }
    CHECK(fails > 0, "truncated copies fail as parse errors (%zu did)", fails);
    sl_buf_release(&out);
    sl_buf_init(&out, 0);
    sl_err er2 = {0};
    sl_doc_kind k = sl_extract_kind(".xlsx", NULL, &er2);
    rc = sl_extract_text(k, data, len, NULL, &out, &er2);
    CHECK(rc == 0 && out.len == full, "a .xls named .xlsx reads by its signature");
    sl_err_clear(&er2);
    sl_buf_release(&out);
    free(data);
}

int main(void)
{
    char dir[] = "/tmp/sluice-xls-lim-XXXXXX";
    corpus();
    if (mkdtemp(dir)) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/documents/gen_xls.py %s", dir);
        if (system(cmd) == 0)
            limits(dir);
        else
            SKIP("the limits", "gen_xls.py could not make the pandas corpus");
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return tap_done();
}
