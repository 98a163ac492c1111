/* console — see console.h. */
#include "server/console.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* No inline script or style attribute runs (default-src 'self'); images
 * may also be blob: URLs, which is how the page shows an artifact it
 * fetched with the admin token (an <img> cannot send Authorization). */
const char *const sl_console_headers[][2] = {
    {"Content-Security-Policy",
     "default-src 'self'; img-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; "
     "form-action 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
    {"Cache-Control", "no-cache"},
    {NULL, NULL},
};

/* Files larger than this are not console files (a folder given with
 * --console-dir is a developer's; this keeps a stray big file out). */
#define MAX_FILE (4u << 20)

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},    {".svg", "image/svg+xml"},
    {".png", "image/png"},                  {".ico", "image/x-icon"},
    {".json", "application/json"},          {".txt", "text/plain; charset=utf-8"},
};

static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && !strcmp(name + n - e, types[i].ext))
            return types[i].type;
    }
    return "application/octet-stream";
}

/* One path segment, no dot first: nothing can climb out of the folder. */
static bool flat_name(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > 128)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '-' || *s == '_'))
            return false;
    return true;
}

static void etag_of(const unsigned char *p, size_t n, char out[24])
{
    uint64_t h = 1469598103934665603ull;  /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    snprintf(out, 24, "\"%016llx\"", (unsigned long long)h);
}

/* The built-in files' ETags, worked out once. */
static char (*builtin_etags)[24];
static pthread_once_t etags_once = PTHREAD_ONCE_INIT;

static void make_etags(void)
{
    size_t n = 0;
    while (sl_console_assets[n].name)
        n++;
    builtin_etags = calloc(n + 1, sizeof *builtin_etags);
    for (size_t i = 0; builtin_etags && i < n; i++)
        etag_of(sl_console_assets[i].data, sl_console_assets[i].len, builtin_etags[i]);
}

static int from_dir(const char *dir, const char *name, sl_console_file *f)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return 1;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
        if (fd >= 0)
            close(fd);
        return 1;
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != (size_t)st.st_size) {
        free(buf);
        return 1;
    }
    f->data = buf;
    f->len = got;
    f->owned = true;
    etag_of(buf, got, f->etag);
    return 0;
}

int sl_console_get(const char *url, const char *dir, sl_console_file *f)
{
    memset(f, 0, sizeof *f);
    if (url[0] != '/')
        return -1;
    const char *name = url[1] ? url + 1 : "index.html";
    if (!flat_name(name))
        return -1;
    f->type = type_of(name);
    if (dir)
        return from_dir(dir, name, f);
    pthread_once(&etags_once, make_etags);
    for (size_t i = 0; sl_console_assets[i].name; i++)
        if (!strcmp(sl_console_assets[i].name, name)) {
            f->data = sl_console_assets[i].data;
            f->len = sl_console_assets[i].len;
            if (builtin_etags)
                memcpy(f->etag, builtin_etags[i], sizeof f->etag);
            return 0;
        }
    return 1;
}

void sl_console_file_release(sl_console_file *f)
{
    if (f->owned)
        free((void *)f->data);
    memset(f, 0, sizeof *f);
}

size_t sl_console_size(void)
{
    size_t n = 0;
    for (size_t i = 0; sl_console_assets[i].name; i++)
        n += sl_console_assets[i].len;
    return n;
}
