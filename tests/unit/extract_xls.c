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
#include "corpus.h"

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
    size_t n = corpus_run("gen_xls.py", "python3-xlwt, python3-xlrd or python3-pandas is not installed");
    CHECK(n >= 17, "the corpus has %zu workbooks", n);
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
