/*
 * extract_odf — ODT and EPUB text as Dify's extractor gives it, on the
 * corpus tests/documents/gen_odf.py writes with hand-written expectations
 * (spine order, unknown idrefs, relative and percent-encoded hrefs,
 * nested lists, notes, tables, text:s and text:tab), and hostile packages
 * (entity bombs, XXE, deep nesting, zip bombs, a spine of 100000 items,
 * truncated and non-zip files) that must fail with a clear error or give
 * text with no entity expanded.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "extract/extract.h"
#include "tap.h"
#include "util.h"

static sl_doc_kind kind_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    sl_err err = {0};
    sl_doc_kind k = sl_extract_kind(dot, NULL, &err);
    sl_err_clear(&err);
    return k;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void corpus_case(const char *dir, char *line)
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return;
    *sp = 0;
    const char *name = line, *mode = sp + 1;
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    if (!strncmp(mode, "small ", 6)) {
        mode += 6;
        lim.max_member = 1 << 20;
        lim.max_unpacked = 4 << 20;
        lim.max_output = 1 << 20;
        lim.max_xml_depth = 64;
    }
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
    double t0 = now();
    int rc = sl_extract_text(kind_of(name), data, len, &lim, &out, &err);
    double took = now() - t0;
    if (!strncmp(mode, "error ", 6)) {
        char code[64] = "";
        const char *text = "";
        sscanf(mode + 6, "%63s", code);
        const char *t = strchr(mode + 6, ' ');
        if (t)
            text = t + 1;
        bool code_ok = rc == -1 && !strcmp(sl_errcode_name(err.code), code);
        CHECK(code_ok && err.msg && err.msg[0] && strstr(err.msg, text),
              "%s: %s \"...%s...\" (got %s: %s)", name, code, text,
              rc ? sl_errcode_name(err.code) : "success",
              rc ? err.msg : esc(out.data ? out.data : ""));
        CHECK(!out.len, "%s: nothing is appended on failure", name);
    } else {
        snprintf(path, sizeof path, "%s/%s.expected", dir, name);
        size_t elen;
        char *want = slurp(path, &elen);
        if (rc || !want)
            CHECK(0, "%s: %s", name, rc ? err.msg : "no expected text");
        else
            CHECK(out.len == elen && !memcmp(out.data ? out.data : "", want, elen),
                  "%s: the text is byte-exact (%zu bytes)%s%s%s%s", name, out.len,
                  out.len != elen || memcmp(out.data ? out.data : "", want, elen) ? "\n# got:  "
                                                                                  : "",
                  out.len != elen || memcmp(out.data ? out.data : "", want, elen)
                      ? esc(out.data)
                      : "",
                  out.len != elen || memcmp(out.data ? out.data : "", want, elen) ? "\n# want: "
                                                                                  : "",
                  out.len != elen || memcmp(out.data ? out.data : "", want, elen) ? esc(want)
                                                                                  : "");
        free(want);
    }
    CHECK(took < 20, "%s: read in %.2f s", name, took);
    sl_err_clear(&err);
    sl_buf_release(&out);
    free(data);
}

static void corpus(void)
{
    char dir[] = "/tmp/sluice-odf-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/documents/gen_odf.py %s", dir);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "gen_odf.py ran (status %d)", st);
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t len;
    char *m = slurp(path, &len);
    CHECK(m != NULL, "gen_odf.py wrote a manifest");
    size_t n = 0;
    for (char *line = m, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        corpus_case(dir, line);
        n++;
    }
    CHECK(n >= 29, "the corpus has %zu documents", n);
    free(m);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Through sl_extract_text, Dify's prefix comes first. */
static void prefixes(void)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    CHECK(sl_extract_text(SL_DOC_ODT, "nope", 4, NULL, &out, &err) == -1 && err.msg &&
              !strncmp(err.msg, "Failed to extract text from ODT: ", 33),
          "an ODT failure has Dify's prefix: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_extract_text(SL_DOC_EPUB, "", 0, NULL, &out, &err) == -1 && err.msg &&
              !strncmp(err.msg, "Failed to extract text from EPUB: ", 34),
          "an empty EPUB fails with Dify's prefix: %s", err.msg);
    sl_err_clear(&err);
    CHECK(!out.len, "nothing was appended");
    sl_buf_release(&out);
}

int main(void)
{
    prefixes();
    corpus();
    return tap_done();
}
