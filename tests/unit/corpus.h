/*
 * corpus — document tests as data.  A generator (tests/documents/gen_*.py
 * DIR) writes documents into DIR with the text Dify's algorithm gives for
 * each (NAME.expected) and a MANIFEST, one line per document:
 *
 *   NAME exact                 the text, whitespace-normalised and byte for byte
 *   NAME norm                  the text after whitespace normalisation
 *   NAME error CODE TEXT       fails with CODE (sl_errcode_name) saying TEXT
 *   NAME small ...             the same under small limits (1 MiB a member,
 *                              4 MiB in all, 1 MiB of text, depth 64)
 *
 * corpus_run reads every document through sl_extract_text (its format from
 * its extension) and checks it.  Include after tap.h and util.h.
 */
#ifndef SL_TEST_CORPUS_H
#define SL_TEST_CORPUS_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "extract/extract.h"

/* Whitespace runs as one space, none at the ends (heap). */
static inline char *corpus_norm(const char *s)
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

static inline double corpus_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void corpus_case(const char *dir, char *line)
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
    const char *dot = strrchr(name, '.');
    sl_err err = {0};
    sl_doc_kind kind = sl_extract_kind(dot, NULL, &err);
    sl_err_clear(&err);
    sl_buf out;
    sl_buf_init(&out, 0);
    double t0 = corpus_now();
    int rc = sl_extract_text(kind, data, len, &lim, &out, &err);
    double took = corpus_now() - t0;
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
        if (rc || !want) {
            CHECK(0, "%s: %s", name, rc ? err.msg : "no expected text");
        } else {
            char *a = corpus_norm(out.data ? out.data : ""), *b = corpus_norm(want);
            bool same = !strcmp(a, b);
            CHECK(same, "%s: the text matches Dify's after whitespace normalisation%s%s%s%s",
                  name, same ? "" : "\n# got:  ", same ? "" : esc(a), same ? "" : "\n# want: ",
                  same ? "" : esc(b));
            free(a);
            free(b);
            if (!strcmp(mode, "exact")) {
                bool exact = out.len == elen && !memcmp(out.data ? out.data : "", want, elen);
                CHECK(exact, "%s: the text is byte-exact (%zu bytes)%s%s%s%s", name, out.len,
                      exact ? "" : "\n# got:  ", exact ? "" : esc(out.data ? out.data : ""),
                      exact ? "" : "\n# want: ", exact ? "" : esc(want));
            }
        }
        free(want);
    }
    CHECK(took < 20, "%s: read in %.2f s", name, took);
    sl_err_clear(&err);
    sl_buf_release(&out);
    free(data);
}

/* Runs tests/documents/GEN into a fresh folder and checks each document
 * of its MANIFEST; returns how many there were.  A generator that exits 3
 * lacks a Python package: the corpus is skipped, saying `missing`. */
static inline size_t corpus_run(const char *gen, const char *missing)
{
    char dir[] = "/tmp/sluice-corpus-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return 0;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/documents/%s %s", gen, dir);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    size_t n = 0;
    if (code == 3) {
        SKIP(gen, "%s", missing);
    } else {
        CHECK(code == 0, "%s ran (status %d)", gen, code);
        snprintf(cmd, sizeof cmd, "%s/MANIFEST", dir);
        size_t len;
        char *m = slurp(cmd, &len);
        CHECK(m != NULL, "%s wrote a manifest", gen);
        for (char *line = m, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            corpus_case(dir, line);
            n++;
        }
        free(m);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return n;
}

#endif
