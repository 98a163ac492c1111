/*
 * extract_pdftext — sluice's own PDF reader (extract/pdftext.h) against
 * pypdf's text of the same PDFs and pdftotext's (tests/documents/
 * gen_pdf.py writes them): what it reads it reads right, what it cannot
 * read as well it declines (and the isolated path then gives pdftotext
 * the file), and damaged structure ends in a decline, not a hang.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "extract/isolate.h"
#include "extract/pdf.h"
#include "extract/pdftext.h"
#include "tap.h"
#include "util.h"
#include "corpus.h"

static char dir[64];

static char *doc(const char *name, const char *ext, size_t *len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    char *d = slurp(path, len);
    if (!d) {
        fprintf(stderr, "missing %s\n", path);
        exit(1);
    }
    return d;
}

/* Read by sluice's reader, not declined, and the text is pypdf's. */
static void reads(const char *name)
{
    size_t len, elen;
    char *d = doc(name, "pdf", &len), *want = doc(name, "expected", &elen);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_pdf_text(d, len, NULL, &out, &err);
    CHECK(rc == 0, "%s: read by sluice's reader (%s)", name, rc ? err.msg : "ok");
    char *w = corpus_norm(want), *got = corpus_norm(out.data ? out.data : "");
    size_t at = 0;
    while (w[at] && w[at] == got[at])
        at++;
    CHECK(!strcmp(w, got), "%s: the text is pypdf's (%zu bytes)%s%.40s%s%.40s", name, strlen(w),
          w[at] || got[at] ? "; differs at: want " : "", w + at, w[at] || got[at] ? " got " : "",
          got + at);
    free(w), free(got), free(d), free(want);
    sl_buf_release(&out);
    sl_err_clear(&err);
}

/* The same bytes as pdftotext's text through sl_extract_pdf. */
static void same_as_pdftotext(const char *name)
{
    size_t len;
    char *d = doc(name, "pdf", &len);
    sl_buf a, b;
    sl_buf_init(&a, 0);
    sl_buf_init(&b, 0);
    sl_err e1 = {0}, e2 = {0};
    int r1 = sl_pdf_text(d, len, NULL, &a, &e1), r2 = sl_extract_pdf(d, len, NULL, 30, &b, &e2);
    CHECK(r1 == 0 && r2 == 0 && a.len == b.len && !memcmp(a.data, b.data, a.len),
          "%s: the same %zu bytes as pdftotext (%zu) (%s / %s)", name, a.len, b.len,
          r1 ? e1.msg : "ok", r2 ? e2.msg : "ok");
    free(d);
    sl_buf_release(&a);
    sl_buf_release(&b);
    sl_err_clear(&e1);
    sl_err_clear(&e2);
}

/* Declined (SL_EUNSUPPORTED) with a reason naming says, in good time,
 * out untouched. */
static void declines(const char *name, const char *says)
{
    size_t len;
    char *d = doc(name, "pdf", &len);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_buf_adds(&out, "kept");
    sl_err err = {0};
    double t0 = corpus_now();
    int rc = sl_pdf_text(d, len, NULL, &out, &err);
    double t = corpus_now() - t0;
    CHECK(rc == -1 && err.code == SL_EUNSUPPORTED && err.msg && strstr(err.msg, says),
          "%s: declined, saying '%s' (%s: %s)", name, says, sl_errcode_name(err.code),
          err.msg ? err.msg : "no error");
    CHECK(t < 5, "%s: declined in %.2f s", name, t);
    CHECK(out.len == 4 && !strcmp(out.data, "kept"), "%s: nothing appended", name);
    free(d);
    sl_buf_release(&out);
    sl_err_clear(&err);
}

/* Through the isolated path: sluice's reader, or pdftotext for what it
 * declines; the text holds want. */
static void isolated(const char *name, const char *want)
{
    size_t len;
    char *d = doc(name, "pdf", &len);
    sl_extract_run r;
    sl_extract_run_default(&r);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_extract_isolated(SL_DOC_PDF, d, len, &r, &out, &err);
    CHECK(rc == 0 && out.data && strstr(out.data, want), "%s: the isolated path reads '%s' (%s)",
          name, want, rc ? err.msg : "read");
    free(d);
    sl_buf_release(&out);
    sl_err_clear(&err);
}

static bool stop_now(void *ud)
{
    int *polls = ud;
    return ++*polls >= 1;
}

/* Inputs that once crashed the fuzzer (fuzz/regress/extract_pdf-*): a
 * failure with a message or text, nothing else. */
static void regressions(void)
{
    DIR *d = opendir("fuzz/regress");
    if (!d) {
        SKIP("fuzz regressions", "no fuzz/regress folder");
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "extract_pdf-", 12))
            continue;
        char path[512];
        snprintf(path, sizeof path, "fuzz/regress/%s", de->d_name);
        size_t len;
        char *data = slurp(path, &len);
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_err err = {0};
        int rc = data ? sl_pdf_text(data, len, NULL, &out, &err) : -1;
        CHECK(data && (rc == 0 || (err.msg && err.msg[0])), "%s: read or refused with a reason",
              de->d_name);
        free(data);
        sl_buf_release(&out);
        sl_err_clear(&err);
    }
    closedir(d);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a stopped sandbox's stdin */
    regressions();
    snprintf(dir, sizeof dir, "/tmp/sluice-pdftext-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK(0, "a temporary folder");
        return tap_done();
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/documents/gen_pdf.py %s", dir);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        SKIP("sluice's PDF reader against pypdf",
             "tests/documents/gen_pdf.py could not run (exit %d): it needs /usr/bin/python3 "
             "with python3-reportlab and python3-pypdf",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        goto done;
    }

    /* reportlab's PDFs (a standard font without widths, an embedded
     * TrueType subset with a ToUnicode map) and hand-made ones */
    static const char *const readable[] = {"one",      "multi",   "unicode", "emptypage",
                                           "pages300", "features", "xrefstm", "type0",
                                           "incremental", "lzw",     "runlength"};
    for (size_t i = 0; i < sizeof readable / sizeof *readable; i++)
        reads(readable[i]);
    static const char *const reportlab[] = {"one", "multi", "unicode", "emptypage", "pages300"};
    if (access("/usr/bin/pdftotext", X_OK) == 0)
        for (size_t i = 0; i < sizeof reportlab / sizeof *reportlab; i++)
            same_as_pdftotext(reportlab[i]);
    else
        SKIP("the same text as pdftotext", "pdftotext is not installed (poppler-utils)");

    /* what each feature gives, exactly */
    size_t len;
    char *f = doc("features", "pdf", &len);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_pdf_text(f, len, NULL, &out, &err);
    const char *t = rc ? "" : out.data;
    CHECK(strstr(t, "Hello World\n"), "TJ: kerning joins letters, a wide gap is a space");
    CHECK(strstr(t, "First line\nSecond line\nThird line\n"), "' and \" start new lines");
    CHECK(strstr(t, "Left Right\n"), "a word placed further along the line: one space");
    CHECK(strstr(t, "Caf\xc3\xa9 \xe2\x80\x9cquoted\xe2\x80\x9d \xe2\x82\xac 5"),
          "WinAnsi bytes as Unicode");
    CHECK(strstr(t, "\xe2\x80\x99\xef\xac\x81 Differences"), "/Differences: quoteright, fi");
    CHECK(strstr(t, "Text inside a form"), "a form XObject's text");
    CHECK(!strstr(t, "EI"), "an inline image's data is skipped");

    /* a symbolic font without /Encoding: its program's own (pypdf reads
     * the codes as they are; pdftotext, as here, through the program) */
    free(f);
    f = doc("builtin", "pdf", &len);
    sl_buf_reset(&out);
    rc = sl_pdf_text(f, len, NULL, &out, &err);
    CHECK(rc == 0 && out.len == 9 && !memcmp(out.data, "ABC \xef\xac\x81nd", 9),
          "a Type1 program's own encoding: 'ABC \xef\xac\x81nd' (%s)",
          rc ? err.msg : out.data);
    free(f);

    /* /ActualText stands for the glyphs it marks, a missing glyph among
     * them (pdftotext's reading; pypdf ignores it) */
    f = doc("actualtext", "pdf", &len);
    sl_buf_reset(&out);
    rc = sl_pdf_text(f, len, NULL, &out, &err);
    CHECK(rc == 0 && out.data && !strcmp(out.data, "Word \xe4\xb8\xad\xe6\x96\x87 and fi end"),
          "/ActualText, inline and named, replaces what it marks (%s)",
          rc ? err.msg : esc(out.data));
    free(f);

    /* appends; the output limit counts this document's text only */
    sl_buf_reset(&out);
    sl_buf_adds(&out, "kept:");
    f = doc("one", "pdf", &len);
    rc = sl_pdf_text(f, len, NULL, &out, &err);
    CHECK(rc == 0 && !strncmp(out.data, "kept:Hello from a one-page PDF.", 31),
          "appends after what out held");
    size_t one_len = out.len - 5;
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = one_len;
    sl_buf_reset(&out);
    sl_buf_adds(&out, "kept:");
    rc = sl_pdf_text(f, len, &lim, &out, &err);
    CHECK(rc == 0 && out.len == one_len + 5, "max_output = the text's length passes");
    lim.max_output = one_len - 1;
    sl_buf_reset(&out);
    rc = sl_pdf_text(f, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && err.setting &&
              !strcmp(err.setting, "extract_max_output") && out.len == 0,
          "a byte over max_output: SL_ELIMIT naming extract_max_output, nothing kept (%s)",
          err.msg ? err.msg : "-");
    sl_err_clear(&err);
    free(f);

    /* bombs: stopped at their limits */
    f = doc("bomb_text", "pdf", &len);
    sl_extract_limits_default(&lim);
    lim.max_output = 1 << 20;
    double t0 = corpus_now();
    rc = sl_pdf_text(f, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "extract_max_output") &&
              corpus_now() - t0 < 5,
          "17 MB of text from 30 KB: stopped at max_output (%s)", err.msg ? err.msg : "-");
    sl_err_clear(&err);
    free(f);
    f = doc("bomb_mem", "pdf", &len);
    sl_extract_limits_default(&lim);
    lim.max_member = 64 << 20;
    t0 = corpus_now();
    rc = sl_pdf_text(f, len, &lim, &out, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && err.setting &&
              !strcmp(err.setting, "extract_max_member") && corpus_now() - t0 < 10,
          "768 MiB behind 1 MB: stopped at max_member (%s)", err.msg ? err.msg : "-");
    sl_err_clear(&err);
    free(f);

    /* left to pdftotext */
    declines("encrypted", "encrypted");
    declines("rotated", "rotated");
    declines("unmapped", "no Unicode value");
    declines("type3", "Type3");
    declines("truncated", "startxref");
    declines("garbage", "startxref");
    /* damaged structure: declined, not looped on */
    declines("loop_prev", "loop");
    declines("loop_tree", "deeper");
    declines("loop_length", "refers to itself");
    declines("deep", "nested deeper");
    declines("chain", "needs more than");

    const char *helper = built_sluice();
    if (helper && access("/usr/bin/pdftotext", X_OK) == 0) {
        sl_extract_set_helper(helper);
        isolated("features", "Text inside a form");
        isolated("rotated", "Rotated");
        isolated("unmapped", "A");
        isolated("type3", "");
        /* a stopped run stops the reading, on either path */
        int polls = 0;
        sl_extract_run r;
        sl_extract_run_default(&r);
        r.stop = stop_now;
        r.ud = &polls;
        f = doc("rotated", "pdf", &len);
        sl_buf_reset(&out);
        rc = sl_extract_isolated(SL_DOC_PDF, f, len, &r, &out, &err);
        CHECK(rc == -1 && err.code == SL_ECANCELED && out.len == 0,
              "stopped: SL_ECANCELED, nothing kept (%s)", err.msg ? err.msg : "ok");
        sl_err_clear(&err);
        free(f);
        f = doc("pages300", "pdf", &len);
        polls = 0;
        t0 = corpus_now();
        rc = sl_extract_pdf_until(f, len, NULL, 30, stop_now, &polls, &out, &err);
        CHECK(rc == -1 && err.code == SL_ECANCELED && corpus_now() - t0 < 2,
              "pdftotext stopped when the run stops, in %.2f s (%s)", corpus_now() - t0,
              err.msg ? err.msg : "ok");
        sl_err_clear(&err);
        free(f);
    } else {
        SKIP("the isolated path", "no built sluice beside this test, or no pdftotext");
    }
    sl_buf_release(&out);

done:
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return tap_done();
}
