/*
 * util — small helpers the unit tests share: JSON test data, showing values
 * and text in TAP lines, reading a file.  Header-only (static inline) so a
 * test includes just what it uses without unused-function warnings.
 */
#ifndef SL_TEST_UTIL_H
#define SL_TEST_UTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

/* Parses JSON test data; aborts on a typo in the test itself. */
static inline sl_value *J(const char *text)
{
    json_error_t je;
    sl_value *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v) {
        fprintf(stderr, "bad test JSON %s: %s\n", text, je.text);
        abort();
    }
    return v;
}

/* A value as compact JSON for a message (heap; "(none)" for NULL). */
static inline char *show(const sl_value *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return s ? s : sl_xstrdup("(none)");
}

/* Text with line breaks and control characters escaped, so it fits on one
 * TAP line (one of four rotating static buffers). */
static inline const char *esc(const char *s)
{
    static char bufs[4][700];
    static int k;
    char *o = bufs[k++ & 3];
    size_t n = 0;
    for (; s && *s && n < 680; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n' || c == '\t' || c == '\r') {
            o[n++] = '\\';
            o[n++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20) {
            n += (size_t)snprintf(o + n, 8, "\\x%02x", c);
        } else {
            o[n++] = (char)c;
        }
    }
    o[n] = '\0';
    return o;
}

/* A whole file (heap), or NULL when it cannot be opened. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 0);
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        sl_buf_add(&b, tmp, n);
    fclose(f);
    *len = b.len;
    return sl_buf_detach(&b);
}

/* The folder SUB of the optional shared test material (heap): under
 * $SLUICE_SHARED, else under ../shared beside the repository (the tests run
 * from its root).  A clone of the repository alone has no such folder; the
 * tests that use one skip when it is not there. */
static inline char *shared_path(const char *sub)
{
    const char *root = getenv("SLUICE_SHARED");
    return sl_xasprintf("%s/%s", root && root[0] ? root : "../shared", sub);
}

/* Starts a Python stand-in server (tests/tools/NAME.py, which writes its
 * port to --port-file) on a free loopback port; returns its pid (the
 * caller stops it with SIGTERM) and its port, or -1.  With quiet, its
 * stderr goes to /dev/null too. */
static inline pid_t start_stand_in(const char *name, bool quiet, int *port)
{
    char pf[] = "/tmp/sluice-standin-XXXXXX";
    int fd = mkstemp(pf);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(pf);
    char script[128];
    snprintf(script, sizeof script, "tests/tools/%s.py", name);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        if (quiet)
            dup2(null, 2);
        execlp("python3", "python3", script, "--port", "0", "--port-file", pf, (char *)NULL);
        _exit(127);
    }
    char line[32] = "";
    for (int i = 0; i < 500 && !line[0]; i++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = 0;
            fclose(f);
        }
        if (!line[0])
            usleep(10000);
    }
    unlink(pf);
    *port = atoi(line);
    return *port > 0 ? pid : -1;
}

/* The sluice built beside this test program (BUILD/tests/NAME ->
 * BUILD/sluice), or NULL when there is none: the document extractor's
 * reader (extract/isolate.h) is that program. */
static inline const char *built_sluice(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    if (!slash || slash - path < 6 || strncmp(slash - 6, "/tests", 6))
        return NULL;
    strcpy(slash - 6, "/sluice");
    return access(path, X_OK) ? NULL : path;
}

/* The LLM stand-in (tests/tools/llmd.py). */
static inline pid_t start_llmd(int *port)
{
    return start_stand_in("llmd", true, port);
}

#endif
