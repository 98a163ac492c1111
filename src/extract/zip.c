#include "extract/zip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive.h"
#include "core/map.h"

typedef struct {
    char *name;
    bool encrypted;
} member;

struct sl_zip {
    const void *data;
    size_t len;
    sl_extract_limits lim;
    member *m;
    size_t n;
    size_t unpacked; /* all members' bytes read so far */
    bool backslashes;
    sl_map names;    /* name -> index + 1 */
};

bool sl_zip_is_zip(const void *data, size_t len)
{
    const unsigned char *p = data;
    return len >= 4 && p[0] == 'P' && p[1] == 'K' &&
           ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6));
}

static struct archive *reopen(const sl_zip *z, sl_err *err)
{
    struct archive *a = archive_read_new();
    if (!a) {
        sl_err_set(err, SL_ENOMEM, "out of memory opening the zip");
        return NULL;
    }
    archive_read_support_format_zip(a);
    if (archive_read_open_memory(a, z->data, z->len) != ARCHIVE_OK) {
        sl_err_set(err, SL_EPARSE, "File is not a zip file (%s)",
                   archive_error_string(a) ? archive_error_string(a) : "unreadable");
        archive_read_free(a);
        return NULL;
    }
    return a;
}

static const char *entry_name(struct archive_entry *ae)
{
    const char *raw = archive_entry_pathname_utf8(ae);
    return raw ? raw : archive_entry_pathname(ae);
}

static void index_names(sl_zip *z)
{
    sl_map_release(&z->names);
    sl_map_init(&z->names);
    for (size_t i = 0; i < z->n; i++) {
        char *key = z->m[i].name;
        char *tmp = NULL;
        if (z->backslashes && strchr(key, '\\')) {
            tmp = sl_xstrdup(key);
            for (char *c = tmp; *c; c++)
                if (*c == '\\')
                    *c = '/';
            key = tmp;
        }
        sl_map_put(&z->names, key, (void *)(uintptr_t)(i + 1));
        free(tmp);
    }
}

sl_zip *sl_zip_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err)
{
    if (sl_archive_load(err))
        return NULL;
    sl_zip *z = sl_xcalloc(1, sizeof *z);
    z->data = data;
    z->len = len;
    if (lim)
        z->lim = *lim;
    else
        sl_extract_limits_default(&z->lim);
    sl_map_init(&z->names);
    size_t alloc = 0;
    sl_archive_utf8 u;
    sl_archive_utf8_enter(&u);
    struct archive *a = reopen(z, err);
    int rc = a ? 0 : -1;
    while (!rc) {
        struct archive_entry *ae;
        int r = archive_read_next_header(a, &ae);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            rc = sl_err_set(err, SL_EPARSE,
                            "the zip is corrupt or truncated (after %zu members): %s",
                            z->n, archive_error_string(a) ? archive_error_string(a) : "?");
            break;
        }
        if (z->n == SL_ZIP_MAX_MEMBERS) {
            rc = sl_err_set(err, SL_ELIMIT, "the zip has more than %d members (the limit)",
                            SL_ZIP_MAX_MEMBERS);
            break;
        }
        const char *name = entry_name(ae);
        if (z->n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            z->m = sl_xrealloc(z->m, alloc * sizeof *z->m);
        }
        z->m[z->n].name = sl_xstrdup(name ? name : "");
        z->m[z->n].encrypted = archive_entry_is_encrypted(ae) != 0;
        z->n++;
    }
    if (a)
        archive_read_free(a);
    sl_archive_utf8_leave(&u);
    if (rc) {
        sl_zip_close(z);
        return NULL;
    }
    if (z->n == 0 && !sl_zip_is_zip(data, len)) {
        sl_zip_close(z);
        sl_err_set(err, SL_EPARSE, "File is not a zip file");
        return NULL;
    }
    index_names(z);
    return z;
}

void sl_zip_close(sl_zip *z)
{
    if (!z)
        return;
    for (size_t i = 0; i < z->n; i++)
        free(z->m[i].name);
    free(z->m);
    sl_map_release(&z->names);
    free(z);
}

size_t sl_zip_count(const sl_zip *z)
{
    return z->n;
}

const char *sl_zip_name(const sl_zip *z, size_t i)
{
    return i < z->n ? z->m[i].name : NULL;
}

bool sl_zip_has(const sl_zip *z, const char *name)
{
    return sl_map_get(&z->names, name) != NULL;
}

void sl_zip_backslashes(sl_zip *z)
{
    z->backslashes = true;
    index_names(z);
}

/* Decompresses the entry the archive is at into out, counting every
 * block against both limits. */
static int read_data(sl_zip *z, struct archive *a, struct archive_entry *ae, const char *name,
                     sl_buf *out, sl_err *err)
{
    int rc = 0;
    size_t got_all = 0;
    if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 0 &&
        (uint64_t)archive_entry_size(ae) > z->lim.max_member)
        rc = sl_err_set(err, SL_ELIMIT,
                          "the zip member \"%s\" unpacks to %lld bytes, over the limit of %zu "
                          "bytes for one member (extract_max_member; a zip bomb?)",
                          name, (long long)archive_entry_size(ae), z->lim.max_member);
    char tmp[65536];
    while (!rc) {
        la_ssize_t got = archive_read_data(a, tmp, sizeof tmp);
        if (got == 0)
            break;
        if (got < 0) {
            rc = sl_err_set(err, SL_EPARSE, "the zip member \"%s\" does not decompress: %s", name,
                            archive_error_string(a) ? archive_error_string(a) : "?");
            break;
        }
        if ((size_t)got > z->lim.max_member - got_all)
            rc = sl_err_set(err, SL_ELIMIT,
                              "the zip member \"%s\" unpacks to more than %zu bytes, the limit "
                              "for one member (extract_max_member; a zip bomb?)",
                              name, z->lim.max_member);
        else if ((size_t)got > z->lim.max_unpacked - z->unpacked)
            rc = sl_err_set(err, SL_ELIMIT,
                              "the zip's members unpack to more than %zu bytes, the limit for "
                              "one document (extract_max_unpacked; a zip bomb?); stopped in \"%s\"",
                              z->lim.max_unpacked, name);
        else {
            got_all += (size_t)got;
            z->unpacked += (size_t)got;
            if (sl_buf_add(out, tmp, (size_t)got))
                rc = sl_err_set(err, SL_ELIMIT, "the zip member \"%s\" is too big for its buffer",
                                  name);
        }
    }
    return rc;
}

static int encrypted(const char *name, sl_err *err)
{
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "the zip member \"%s\" is encrypted (password-protected); save the "
                      "document without a password",
                      name);
}

/* Decompresses the idx-th entry into out. */
static int read_at(sl_zip *z, size_t idx, sl_buf *out, sl_err *err)
{
    const char *name = z->m[idx].name;
    struct archive *a = reopen(z, err);
    if (!a)
        return -1;
    int rc = 0;
    struct archive_entry *ae = NULL;
    for (size_t i = 0; i <= idx && !rc; i++) {
        int r = archive_read_next_header(a, &ae);
        if (r < ARCHIVE_WARN || r == ARCHIVE_EOF)
            rc = sl_err_set(err, SL_EPARSE,
                            "the zip is corrupt or truncated before member \"%s\": %s",
                            name, archive_error_string(a) ? archive_error_string(a) : "?");
    }
    if (!rc)
        rc = read_data(z, a, ae, name, out, err);
    archive_read_free(a);
    return rc;
}

int sl_zip_each(sl_zip *z, bool (*want)(const char *name, void *ud),
                int (*got)(const char *name, const sl_buf *data, void *ud), void *ud, sl_err *err)
{
    if (sl_archive_load(err))
        return -1;
    sl_archive_utf8 u;
    sl_archive_utf8_enter(&u);
    struct archive *a = reopen(z, err);
    int rc = a ? 0 : -1;
    sl_buf b;
    sl_buf_init(&b, SIZE_MAX);
    while (!rc) {
        struct archive_entry *ae;
        int r = archive_read_next_header(a, &ae);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            rc = sl_err_set(err, SL_EPARSE, "the zip is corrupt or truncated: %s",
                            archive_error_string(a) ? archive_error_string(a) : "?");
            break;
        }
        char *name = sl_xstrdup(entry_name(ae) ? entry_name(ae) : "");
        if (z->backslashes)
            for (char *c = name; *c; c++)
                if (*c == '\\')
                    *c = '/';
        if (want(name, ud)) {
            sl_buf_reset(&b);
            rc = archive_entry_is_encrypted(ae) ? encrypted(name, err)
                                                : read_data(z, a, ae, name, &b, err);
            if (!rc)
                rc = got(name, &b, ud);
        }
        free(name);
    }
    sl_buf_release(&b);
    if (a)
        archive_read_free(a);
    sl_archive_utf8_leave(&u);
    return rc;
}

int sl_zip_read(sl_zip *z, const char *name, sl_buf *out, sl_err *err)
{
    uintptr_t i = (uintptr_t)sl_map_get(&z->names, name);
    if (!i)
        return sl_err_set(err, SL_ENOTFOUND, "There is no item named '%s' in the archive", name);
    if (z->m[i - 1].encrypted)
        return encrypted(name, err);
    size_t at = out->len;
    if (sl_archive_load(err))
        return -1;
    sl_archive_utf8 u;
    sl_archive_utf8_enter(&u);
    int rc = read_at(z, i - 1, out, err);
    sl_archive_utf8_leave(&u);
    if (rc) {
        out->len = at;
        out->toobig = false;
        if (out->data)
            out->data[at] = 0;
    }
    return rc;
}
