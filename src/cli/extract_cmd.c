/*
 * extract_cmd — `sluice extract FILE`: a document's text as the
 * document-extractor node gives it, read the same way (in a process of
 * its own, limited and confined: extract/isolate.h).
 *
 *   sluice extract FILE [--mime TYPE] [--limit NAME=N]...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/opt.h"
#include "engine/limits.h"
#include "extract/isolate.h"

enum { O_MIME = 1, O_LIMIT };

static const sl_opt extract_opts[] = {
    {"--mime", NULL, "TYPE", "the MIME type, for a file with no extension", O_MIME},
    {"--limit", NULL, "NAME=N", "a limit (the extract_* ones of sluice limits);\n"
                                "repeatable", O_LIMIT},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec extract_spec = {
    "sluice extract",
    "usage: sluice extract FILE [--mime TYPE] [--limit NAME=N]...\n"
    "Prints a document's text as Dify's document-extractor node gives it: plain text,\n"
    "JSON, YAML, CSV, properties and the formats in docs/documents.md.  The format\n"
    "comes from the file's extension (exact, as Dify: .pdf, not .PDF), else --mime.\n",
    extract_opts, NULL, false};

typedef struct {
    const char *file, *mime;
    struct sl_limits L;
} extract_args;

static int opt(void *ud, int id, const char *v)
{
    extract_args *a = ud;
    sl_err err = {0};
    switch (id) {
    case SL_OPT_ARG:
        if (a->file) {
            fprintf(stderr, "sluice extract: one FILE only ('%s' is a second)\n", v);
            return -1;
        }
        a->file = v;
        return 0;
    case O_MIME:
        a->mime = v;
        return 0;
    case O_LIMIT:
        if (sl_limits_set(&a->L, v, &err)) {
            fprintf(stderr, "sluice extract: --limit %s: %s\n", v, err.msg);
            sl_err_clear(&err);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* The file's bytes, at most `cap`; NULL after saying why. */
static char *slurp(const char *path, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "sluice extract: cannot read %s: %s\n", path,
                fd < 0 || errno ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if ((unsigned long long)st.st_size > cap) {
        fprintf(stderr, "sluice extract: %s is %lld bytes, over extract_max_input=%zu; raise it "
                        "(--limit extract_max_input=N)\n", path, (long long)st.st_size, cap);
        close(fd);
        return NULL;
    }
    char *data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (data && got < (size_t)st.st_size) {
        ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!data || got != (size_t)st.st_size) {
        fprintf(stderr, "sluice extract: cannot read %s\n", path);
        free(data);
        return NULL;
    }
    *len = got;
    return data;
}

int sl_cli_extract(int argc, char **argv)
{
    extract_args a = {0};
    sl_limits_default(&a.L);
    sl_err err = {0};
    if (sl_limits_from_env(&a.L, &err)) {
        fprintf(stderr, "sluice extract: %s\n", err.msg);
        sl_err_clear(&err);
        return 2;
    }
    int prc = sl_opt_parse(&extract_spec, argc, argv, 1, opt, &a, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? 0 : 2;
    if (!a.file) {
        sl_opt_usage(&extract_spec, stderr);
        return 2;
    }
    const char *base = strrchr(a.file, '/');
    base = base ? base + 1 : a.file;
    const char *dot = strrchr(base, '.');
    sl_doc_kind kind = sl_extract_kind(dot && dot != base ? dot : NULL, a.mime, &err);
    if (kind == SL_DOC_UNKNOWN) {
        fprintf(stderr, "sluice extract: %s: %s\n", a.file, err.msg);
        sl_err_clear(&err);
        return 1;
    }
    size_t len = 0;
    char *data = slurp(a.file, a.L.extract_max_input, &len);
    if (!data)
        return 1;
    sl_extract_run r;
    sl_extract_run_default(&r);
    r.timeout_s = a.L.extract_timeout_s;
    r.memory_bytes = a.L.extract_max_memory;
    r.lim.max_output = a.L.extract_max_output;
    r.lim.max_member = a.L.extract_max_member;
    r.lim.max_unpacked = a.L.extract_max_unpacked;
    r.lim.max_xml_depth = (size_t)a.L.extract_xml_depth;
    r.lim.max_xml_nodes = a.L.extract_xml_nodes;
    sl_buf out;
    sl_buf_init(&out, 0);
    int rc = sl_extract_isolated(kind, data, len, &r, &out, &err);
    free(data);
    if (rc) {
        fprintf(stderr, "sluice extract: %s: %s\n", a.file, err.msg);
        sl_err_clear(&err);
        sl_buf_release(&out);
        return 1;
    }
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    if (out.len && out.data[out.len - 1] != '\n' && isatty(1))
        fputc('\n', stdout);
    sl_buf_release(&out);
    return fflush(stdout) ? 1 : 0;
}
