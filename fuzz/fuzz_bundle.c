/*
 * fuzz_bundle — libFuzzer target for the app bundle reader (dsl/bundle,
 * sl_bundle_read): zip parsing through libarchive, the raw central
 * directory scan, entry checks and the manifest checks.
 *
 * The first byte picks how the rest is used.  Even: the bytes are the zip.
 * Odd: the bytes are a recipe, NUL-separated name/content pairs (a name
 * ending in / is a folder), written into a well-formed zip first, so the
 * mutations reach the layout and manifest checks instead of dying on a
 * CRC.  Limits are small (1 MB, 256 entries) to keep runs fast and to hit
 * the limit paths.
 *
 * Checks besides memory errors: a bundle that reads has sorted, unique,
 * relative paths without `..`, a node id per file, as many files as
 * integrity.file_count says, UTF-8 DSL text, and no more bytes than the
 * limit.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const sl_bundle_limits lim = {.max_total = 1 << 20, .max_entries = 256};

/* Writes the recipe as a zip into out (malloc'd); returns its length or 0. */
static size_t build(const uint8_t *p, size_t n, char **out)
{
    size_t cap = n * 2 + 65536, used = 0;
    char *buf = malloc(cap);
    struct archive *a = archive_write_new();
    archive_write_set_format_zip(a);
    archive_write_set_options(a, "zip:compression=store");
    if (archive_write_open_memory(a, buf, cap, &used) != ARCHIVE_OK)
        goto fail;
    for (size_t i = 0; i < n;) {
        const uint8_t *name = p + i, *z = memchr(name, 0, n - i);
        size_t nl = z ? (size_t)(z - name) : n - i;
        i += nl + 1;
        const uint8_t *body = i < n ? p + i : p + n;
        z = i < n ? memchr(body, 0, n - i) : NULL;
        size_t bl = i < n ? (z ? (size_t)(z - body) : n - i) : 0;
        i += bl + 1;
        if (!nl)
            continue;
        char *nm = strndup((const char *)name, nl);
        bool dir = nm[nl - 1] == '/';
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, nm);
        archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
        archive_entry_set_perm(e, bl & 1 ? 0755 : 0644);
        archive_entry_set_size(e, dir ? 0 : (la_int64_t)bl);
        int r = archive_write_header(a, e);
        if (r == ARCHIVE_OK && !dir && bl)
            archive_write_data(a, body, bl);
        archive_entry_free(e);
        free(nm);
        if (r < ARCHIVE_WARN)
            goto fail;
    }
    if (archive_write_close(a) != ARCHIVE_OK)
        goto fail;
    archive_write_free(a);
    *out = buf;
    return used;
fail:
    archive_write_free(a);
    free(buf);
    return 0;
}

static void check(const sl_bundle *b)
{
    json_int_t count =
        json_integer_value(json_object_get(json_object_get(b->manifest, "integrity"), "file_count"));
    if ((size_t)count != b->nfiles || !b->dsl_name || !b->app_dir || !b->dsl)
        abort();
    if (!sl_utf8_valid(b->dsl, b->dsl_len) || b->dsl_len > lim.max_total)
        abort();
    size_t total = b->dsl_len;
    for (size_t i = 0; i < b->nfiles; i++) {
        const char *p = b->files[i].path;
        if (!*p || *p == '/' || strstr(p, "..") == p || strstr(p, "/../") || !b->files[i].node_id)
            abort();
        if (i && strcmp(b->files[i - 1].path, p) >= 0)
            abort();
        total += b->files[i].len;
    }
    if (total > lim.max_total)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 262144)
        return 0;
    char *zip = NULL;
    size_t len = size - 1;
    if (data[0] & 1) {
        len = build(data + 1, size - 1, &zip);
        if (!len)
            return 0;
    } else {
        /* an exact-size copy, so reads past the end are caught */
        zip = malloc(len ? len : 1);
        memcpy(zip, data + 1, len);
    }
    sl_bundle b;
    sl_err err = {0};
    if (sl_bundle_read(zip, len, &lim, &b, &err) == 0) {
        check(&b);
        sl_bundle_release(&b);
    } else if (!err.msg) {
        abort(); /* every refusal says why */
    }
    sl_err_clear(&err);
    free(zip);
    return 0;
}
