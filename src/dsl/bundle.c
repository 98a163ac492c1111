/*
 * bundle — reading, extracting and writing Dify app bundles (see bundle.h
 * and docs/bundles.md).
 *
 * libarchive does the zip format and the decompression; everything a
 * hostile archive could abuse is checked here, before it is used: names
 * (and a scan of the raw central directory for NUL bytes, which
 * libarchive's C-string names would hide), entry types, the running total
 * of decompressed bytes, duplicates and files nested under files.
 */
#include "dsl/bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/archive.h"
#include "core/buf.h"
#include "core/map.h"
#include "core/rand.h"
#include "core/sha256.h"

/* libarchive is loaded when a bundle is first read or written
 * (core/archive). */
static int archive_ready(sl_err *err)
{
    if (sl_archive_load(err))
        return sl_err_prefix(err, "bundle");
    return 0;
}

#define MAX_PATH_BYTES 4096
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* names                                                              */

/* A name fit for one line of a message: control bytes, quotes and
 * backslashes escaped, cut at about 200 bytes. */
static const char *shown(const char *s, size_t n, char out[256])
{
    size_t o = 0;
    for (size_t i = 0; i < n && o < 220; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, 8, "\\x%02x", c);
        else if (c == '"' || c == '\\')
            out[o++] = '\\', out[o++] = (char)c;
        else
            out[o++] = (char)c;
    }
    if (o >= 220)
        memcpy(out + o, "...", 3), o += 3;
    out[o] = '\0';
    return out;
}

__attribute__((format(printf, 3, 4))) static int bad_entry(sl_err *err, const char *name,
                                                           const char *fmt, ...)
{
    char why[512], nm[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return sl_err_set(err, SL_EINVAL, "bundle entry \"%s\": %s",
                      shown(name, strlen(name), nm), why);
}

/* Why a relative path cannot be in a bundle, or NULL when it can.  The
 * same rule serves zip entry names, manifest paths and host file names,
 * so whatever sluice writes it can read back. */
static const char *path_problem(const char *p, size_t n)
{
    if (n == 0)
        return "the name is empty";
    if (p[0] == '/')
        return "an absolute path; paths in a bundle are relative to it";
    if (n > MAX_PATH_BYTES)
        return "the path is longer than 4096 bytes";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\')
            return "the name contains a backslash (a Windows separator); use /";
        if (c < 0x20 || c == 0x7f)
            return "the name contains a control character";
    }
    if (!sl_utf8_valid(p, n))
        return "the name is not valid UTF-8";
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && p[j] != '/')
            j++;
        size_t len = j - i;
        if (len == 2 && p[i] == '.' && p[i + 1] == '.')
            return "the path contains '..', which would lead out of the bundle";
        if (len == 0)
            return "the path has an empty component (// or a trailing /)";
        if (len == 1 && p[i] == '.')
            return "the path has a '.' component";
        i = j + 1;
    }
    return NULL;
}

bool sl_bundle_is_zip(const void *data, size_t len)
{
    const unsigned char *p = data;
    return len >= 4 && p[0] == 'P' && p[1] == 'K' &&
           ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6));
}

bool sl_bundle_path_is_zip(const char *path)
{
    unsigned char head[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == 4 && sl_bundle_is_zip(head, 4);
}

/* ------------------------------------------------------------------ */
/* reading                                                            */

typedef struct {
    char *name; /* normalised: no trailing slash */
    bool dir, exec;
    sl_buf data;
} entry;

typedef struct {
    entry *v;
    size_t n, alloc;
    sl_map names; /* name -> index + 1 */
} entries;

static void entries_release(entries *es)
{
    for (size_t i = 0; i < es->n; i++) {
        free(es->v[i].name);
        sl_buf_release(&es->v[i].data);
    }
    free(es->v);
    sl_map_release(&es->names);
}

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walks the raw central directory (and each entry's local header) for
 * what libarchive hides or repairs: names with a NUL byte (it cuts them
 * short: "app/x\0../../y" reads as "app/x"), backslashes (it turns them
 * into slashes), Unix FIFOs and sockets (it reads them as files), and an
 * entry count over the limit, all before anything is decompressed.  A zip
 * without an end record is truncated.  Zip64 directories are left to
 * libarchive. */
static int cd_scan(const unsigned char *p, size_t len, size_t max_entries, sl_err *err)
{
    size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
    for (size_t i = len >= 22 ? len - 22 + 1 : 0; i-- > lo;) {
        if (rd32(p + i) != 0x06054b50)
            continue;
        size_t count = rd16(p + i + 10);
        size_t q = rd32(p + i + 16);
        if (count == 0xffff || q == 0xffffffff)
            return 0;
        if (count > max_entries)
            return sl_err_set(err, SL_ELIMIT,
                              "bundle: the zip has %zu entries, more than the limit of %zu",
                              count, max_entries);
        for (size_t k = 0; k < count; k++) {
            if (q > len || len - q < 46 || rd32(p + q) != 0x02014b50)
                return 0;
            size_t nl = rd16(p + q + 28), xl = rd16(p + q + 30), cl = rd16(p + q + 32);
            if (len - q - 46 < nl)
                return 0;
            const char *name = (const char *)p + q + 46;
            char nm[256];
            if (memchr(name, 0, nl))
                return sl_err_set(err, SL_EINVAL,
                                  "bundle entry \"%s\": the name contains a NUL byte",
                                  shown(name, nl, nm));
            if (memchr(name, '\\', nl))
                return sl_err_set(err, SL_EINVAL,
                                  "bundle entry \"%s\": the name contains a backslash (a Windows "
                                  "separator); use /",
                                  shown(name, nl, nm));
            unsigned ftype = (rd32(p + q + 38) >> 16) & 0170000;
            if (p[q + 5] == 3 && ftype && ftype != 0100000 && ftype != 0040000 &&
                ftype != 0120000)
                return sl_err_set(err, SL_EINVAL,
                                  "bundle entry \"%s\": is a device, FIFO or socket (mode 0%o); a "
                                  "bundle carries regular files only",
                                  shown(name, nl, nm), rd32(p + q + 38) >> 16);
            size_t lh = rd32(p + q + 42);
            if (lh < len && len - lh >= 30 && rd32(p + lh) == 0x04034b50) {
                size_t ln = rd16(p + lh + 26);
                const char *lname = (const char *)p + lh + 30;
                if (len - lh - 30 >= ln && memchr(lname, 0, ln))
                    return sl_err_set(err, SL_EINVAL,
                                      "bundle entry \"%s\": the name in its local header "
                                      "contains a NUL byte",
                                      shown(lname, ln, nm));
            }
            q += 46 + nl + xl + cl;
        }
        return 0;
    }
    return sl_err_set(err, SL_EINVAL,
                      "bundle: the zip is truncated (its end-of-central-directory record is "
                      "missing)");
}

/* Reads every entry of the archive into es, checking names, types and
 * the running total as it goes. */
static int read_entries(struct archive *a, size_t max_total, size_t max_entries, entries *es,
                        char *tmp, size_t tmpsize, sl_err *err)
{
    size_t total = 0;
    for (;;) {
        struct archive_entry *ae;
        int r = archive_read_next_header(a, &ae);
        if (r == ARCHIVE_EOF)
            return 0;
        /* ARCHIVE_WARN comes with names the C locale cannot show; the
         * UTF-8 name below and our own checks decide about those. */
        if (r < ARCHIVE_WARN)
            return sl_err_set(err, SL_EINVAL,
                              "bundle: the zip is corrupt or truncated (after %zu entries): %s",
                              es->n, archive_error_string(a));
        if (es->n + 1 > max_entries)
            return sl_err_set(err, SL_ELIMIT,
                              "bundle: the zip has more than %zu entries (the limit)",
                              max_entries);
        const char *raw = archive_entry_pathname_utf8(ae);
        if (!raw)
            raw = archive_entry_pathname(ae);
        if (!raw)
            return sl_err_set(err, SL_EINVAL, "bundle: entry %zu has no readable name",
                              es->n + 1);
        mode_t type = archive_entry_filetype(ae);
        bool dir = type == AE_IFDIR;
        size_t n = strlen(raw);
        if (dir && n > 1 && raw[n - 1] == '/')
            n--;
        char *name = sl_xstrndup(raw, n);
        const char *why = path_problem(name, n);
        if (why) {
            bad_entry(err, raw, "%s", why);
            free(name);
            return -1;
        }
        int rc = 0;
        const char *target = archive_entry_symlink(ae);
        if (archive_entry_hardlink(ae))
            rc = bad_entry(err, name, "is a hard link; a bundle carries regular files only");
        else if (type == AE_IFLNK)
            rc = bad_entry(err, name,
                           "is a symbolic link (to \"%s\"); a bundle carries regular files only",
                           target ? target : "?");
        else if (type != AE_IFREG && type != AE_IFDIR)
            rc = bad_entry(err, name,
                           "is a device, FIFO or socket (mode 0%o); a bundle carries regular "
                           "files only",
                           (unsigned)archive_entry_mode(ae));
        else if (archive_entry_is_encrypted(ae))
            rc = bad_entry(err, name, "is encrypted; export the bundle without a password");
        else if (sl_map_get(&es->names, name))
            rc = bad_entry(err, name, "appears twice in the zip");
        if (rc) {
            free(name);
            return -1;
        }
        if (es->n == es->alloc) {
            es->alloc = es->alloc ? es->alloc * 2 : 16;
            es->v = sl_xrealloc(es->v, es->alloc * sizeof *es->v);
        }
        entry *e = &es->v[es->n++];
        e->name = name;
        e->dir = dir;
        e->exec = (archive_entry_perm(ae) & 0111) != 0;
        sl_buf_init(&e->data, max_total - total < SIZE_MAX ? max_total - total + 1 : SIZE_MAX);
        sl_map_put(&es->names, name, (void *)(uintptr_t)es->n);
        if (dir)
            continue;
        /* The header's size is a hint that lets an honest oversized entry
         * fail before any work; the count below is what is enforced. */
        if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 0 &&
            (uint64_t)archive_entry_size(ae) > max_total - total)
            return bad_entry(err, name,
                             "%lld bytes uncompressed would pass the limit of %zu bytes for a "
                             "whole bundle",
                             (long long)archive_entry_size(ae), max_total);
        for (;;) {
            la_ssize_t got = archive_read_data(a, tmp, tmpsize);
            if (got == 0)
                break;
            if (got < 0)
                return bad_entry(err, name, "cannot be decompressed (corrupt or truncated zip): %s",
                                 archive_error_string(a));
            if ((size_t)got > max_total - total)
                return bad_entry(err, name,
                                 "the bundle's uncompressed contents pass the limit of %zu "
                                 "bytes here (a zip bomb?)",
                                 max_total);
            total += (size_t)got;
            sl_buf_add(&e->data, tmp, (size_t)got);
        }
    }
}

static const entry *find(const entries *es, const char *name)
{
    uintptr_t i = (uintptr_t)sl_map_get(&es->names, name);
    return i ? &es->v[i - 1] : NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Dify's BUNDLE_DSL_FILENAME_PATTERN: ^[^/]+\.ya?ml$ */
static bool dsl_name_ok(const char *s)
{
    return !strchr(s, '/') && (ends_with(s, ".yml") || ends_with(s, ".yaml")) &&
           strlen(s) > (ends_with(s, ".yml") ? 4u : 5u) && !path_problem(s, strlen(s));
}

/* Checks the manifest's own shape (the fields Dify's pydantic model
 * requires) and returns the file node ids of its tree in ids. */
static int check_manifest(const sl_value *m, sl_map *ids, sl_err *err)
{
    if (!json_is_object(m))
        return sl_err_set(err, SL_EINVAL, "bundle: manifest.json is not a JSON object");
    const sl_value *v = json_object_get(m, "schema_version");
    /* missing means 1.0, the default of Dify's model */
    if (v && (!json_is_string(v) || strcmp(json_string_value(v), SL_BUNDLE_SCHEMA))) {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        sl_err_set(err, SL_EUNSUPPORTED,
                   "bundle: manifest.json schema_version is %s; sluice reads bundles of schema "
                   "\"" SL_BUNDLE_SCHEMA "\"",
                   s ? s : "?");
        free(s);
        return -1;
    }
    v = json_object_get(m, "generated_at");
    if (v && !json_is_string(v) && !json_is_number(v))
        return sl_err_set(err, SL_EINVAL,
                          "bundle: manifest.json generated_at must be an ISO-8601 date-time");
    if (!json_is_string(json_object_get(m, "dsl_filename")))
        return sl_err_set(err, SL_EINVAL,
                          "bundle: manifest.json has no dsl_filename (the name of the .yml)");
    const sl_value *tree = json_object_get(json_object_get(m, "app_assets"), "tree");
    if (!json_is_object(tree))
        return sl_err_set(err, SL_EINVAL, "bundle: manifest.json has no app_assets.tree object");
    const sl_value *nodes = json_object_get(tree, "nodes");
    if (nodes && !json_is_array(nodes))
        return sl_err_set(err, SL_EINVAL, "bundle: manifest.json app_assets.tree.nodes is not a list");
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const sl_value *nd = json_array_get(nodes, i);
        const char *id = json_string_value(json_object_get(nd, "id"));
        const char *type = json_string_value(json_object_get(nd, "node_type"));
        if (!id || !type || !json_is_string(json_object_get(nd, "name")) ||
            (strcmp(type, "file") && strcmp(type, "folder")))
            return sl_err_set(err, SL_EINVAL,
                              "bundle: manifest.json app_assets.tree.nodes[%zu] needs a string "
                              "id and name and node_type \"file\" or \"folder\"",
                              i);
        if (!strcmp(type, "file"))
            sl_map_put(ids, id, (void *)nd);
    }
    const sl_value *files = json_object_get(m, "files");
    if (!json_is_array(files))
        return sl_err_set(err, SL_EINVAL, "bundle: manifest.json has no files list");
    for (size_t i = 0; i < json_array_size(files); i++) {
        const sl_value *f = json_array_get(files, i);
        if (!json_is_string(json_object_get(f, "node_id")) || !json_is_string(json_object_get(f, "path")))
            return sl_err_set(err, SL_EINVAL,
                              "bundle: manifest.json files[%zu] needs string node_id and path", i);
    }
    if (!json_is_integer(json_object_get(json_object_get(m, "integrity"), "file_count")))
        return sl_err_set(err, SL_EINVAL,
                          "bundle: manifest.json has no integrity.file_count number");
    return 0;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const sl_bundle_file *)a)->path, ((const sl_bundle_file *)b)->path);
}

/* Puts the entries in their places (DSL, manifest, app files) and checks
 * that the manifest agrees with the zip. */
static int assemble(entries *es, sl_bundle *out, sl_err *err)
{
    const entry *me = find(es, SL_BUNDLE_MANIFEST);
    if (!me || me->dir)
        return sl_err_set(err, SL_EINVAL,
                          "bundle: no manifest.json at the top of the zip; a Dify app bundle "
                          "holds {app}.yml, manifest.json and an {app}/ folder");
    if (me->data.len > SL_BUNDLE_MAX_TEXT)
        return sl_err_set(err, SL_ELIMIT, "bundle: manifest.json is larger than 10 MB");
    json_error_t je;
    out->manifest = json_loadb(me->data.data ? me->data.data : "", me->data.len,
                               JSON_REJECT_DUPLICATES, &je);
    if (!out->manifest)
        return sl_err_set(err, SL_EPARSE, "bundle: manifest.json is not valid JSON: %s (line %d, column %d)",
                          je.text, je.line, je.column);
    sl_map ids;
    sl_map_init(&ids);
    int rc = check_manifest(out->manifest, &ids, err);
    const sl_value *m = out->manifest;
    char nm[256];
    if (!rc) {
        const char *dsl = json_string_value(json_object_get(m, "dsl_filename"));
        const entry *de = find(es, dsl);
        if (!dsl_name_ok(dsl)) {
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: manifest.json dsl_filename \"%s\" is not a .yml or .yaml "
                            "name at the top of the bundle",
                            shown(dsl, strlen(dsl), nm));
        } else if (!de || de->dir) {
            const char *other = NULL;
            for (size_t i = 0; i < es->n && !other; i++)
                if (!es->v[i].dir && dsl_name_ok(es->v[i].name))
                    other = es->v[i].name;
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: manifest.json dsl_filename is \"%s\" but the zip has no such "
                            "entry%s%s%s",
                            shown(dsl, strlen(dsl), nm), other ? " (it has \"" : "",
                            other ? other : "", other ? "\")" : "");
        } else if (de->data.len > SL_BUNDLE_MAX_TEXT) {
            rc = bad_entry(err, dsl, "the DSL is larger than 10 MB (Dify's limit)");
        } else if (!sl_utf8_valid(de->data.data ? de->data.data : "", de->data.len)) {
            rc = bad_entry(err, dsl, "the DSL is not valid UTF-8 text");
        } else {
            out->dsl_name = sl_xstrdup(dsl);
            out->app_dir = sl_xstrndup(dsl, (size_t)(strrchr(dsl, '.') - dsl));
        }
    }
    size_t dlen = rc ? 0 : strlen(out->app_dir), nfiles = 0;
    /* the layout, and no entry nested under a file */
    for (size_t i = 0; i < es->n && !rc; i++) {
        entry *e = &es->v[i];
        bool in_app = !strncmp(e->name, out->app_dir, dlen) && e->name[dlen] == '/';
        if (e->dir ? strcmp(e->name, out->app_dir) && !in_app
                   : strcmp(e->name, SL_BUNDLE_MANIFEST) && strcmp(e->name, out->dsl_name) &&
                         !in_app) {
            rc = bad_entry(err, e->name,
                           "is outside the bundle layout; a bundle holds only %s, manifest.json "
                           "and the %s/ folder",
                           out->dsl_name, out->app_dir);
            break;
        }
        for (char *s = strchr(e->name, '/'); s && !rc; s = strchr(s + 1, '/')) {
            *s = '\0';
            const entry *up = find(es, e->name);
            if (up && !up->dir) {
                char at[256];
                shown(e->name, strlen(e->name), at);
                *s = '/';
                rc = bad_entry(err, e->name, "lies under \"%s\", which is a file", at);
            }
            *s = '/';
        }
        if (!rc && in_app && !e->dir)
            nfiles++;
    }
    sl_map paths; /* app-relative path -> file index + 1 */
    sl_map_init(&paths);
    if (!rc) {
        out->files = sl_xcalloc(nfiles ? nfiles : 1, sizeof *out->files);
        out->nfiles = nfiles;
        size_t k = 0;
        for (size_t i = 0; i < es->n; i++) {
            entry *e = &es->v[i];
            if (e->dir || strncmp(e->name, out->app_dir, dlen) || e->name[dlen] != '/')
                continue;
            sl_bundle_file *f = &out->files[k++];
            f->path = sl_xstrdup(e->name + dlen + 1);
            f->exec = e->exec;
            f->len = e->data.len;
            f->data = (unsigned char *)sl_buf_detach(&e->data);
            sl_map_put(&paths, f->path, (void *)(uintptr_t)k);
        }
        const entry *de = find(es, out->dsl_name);
        out->dsl_len = de->data.len;
        out->dsl = sl_buf_detach(&((entry *)de)->data);
        json_int_t count = json_integer_value(json_object_get(json_object_get(m, "integrity"), "file_count"));
        const sl_value *files = json_object_get(m, "files");
        if (count < 0 || (uint64_t)count != out->nfiles)
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: manifest.json integrity.file_count is %lld but the %s/ "
                            "folder holds %zu files",
                            (long long)count, out->app_dir, out->nfiles);
        else if (json_array_size(files) != out->nfiles)
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: manifest.json lists %zu files but integrity.file_count is %lld",
                            json_array_size(files), (long long)count);
        for (size_t i = 0; i < json_array_size(files) && !rc; i++) {
            const char *path = json_string_value(json_object_get(json_array_get(files, i), "path"));
            const char *id = json_string_value(json_object_get(json_array_get(files, i), "node_id"));
            uintptr_t at = (uintptr_t)sl_map_get(&paths, path);
            if (!at)
                rc = sl_err_set(err, SL_EINVAL,
                                "bundle: manifest.json files[%zu] names \"%s\", which is not in the "
                                "%s/ folder of the zip",
                                i, shown(path, strlen(path), nm), out->app_dir);
            else if (out->files[at - 1].node_id)
                rc = sl_err_set(err, SL_EINVAL,
                                "bundle: manifest.json files[%zu] names \"%s\" a second time", i,
                                shown(path, strlen(path), nm));
            else if (!sl_map_get(&ids, id))
                rc = sl_err_set(err, SL_EINVAL,
                                "bundle: manifest.json files[%zu] (\"%s\") has node_id \"%s\", "
                                "which is no file of app_assets.tree",
                                i, shown(path, strlen(path), nm), id);
            else
                out->files[at - 1].node_id = sl_xstrdup(id);
        }
        qsort(out->files, out->nfiles, sizeof *out->files, cmp_file);
    }
    sl_map_release(&paths);
    sl_map_release(&ids);
    return rc;
}

int sl_bundle_read(const void *zip, size_t len, const sl_bundle_limits *lim, sl_bundle *out,
                   sl_err *err)
{
    memset(out, 0, sizeof *out);
    size_t max_total = lim && lim->max_total ? lim->max_total : SL_BUNDLE_MAX_TOTAL;
    size_t max_entries = lim && lim->max_entries ? lim->max_entries : SL_BUNDLE_MAX_ENTRIES;
    if (!sl_bundle_is_zip(zip, len))
        return sl_err_set(err, SL_EINVAL,
                          "bundle: not a zip archive (it does not start with a zip signature)");
    if (cd_scan(zip, len, max_entries, err) || archive_ready(err))
        return -1;
    entries es = {0};
    sl_map_init(&es.names);
    sl_archive_utf8 u;
    sl_archive_utf8_enter(&u);
    struct archive *a = archive_read_new();
    archive_read_support_format_zip(a);
    int rc;
    if (archive_read_open_memory(a, zip, len) != ARCHIVE_OK)
        rc = sl_err_set(err, SL_EINVAL, "bundle: not a readable zip archive: %s",
                        archive_error_string(a));
    else {
        char *tmp = sl_xmalloc(65536);
        rc = read_entries(a, max_total, max_entries, &es, tmp, 65536, err);
        free(tmp);
    }
    archive_read_free(a);
    sl_archive_utf8_leave(&u);
    if (!rc)
        rc = assemble(&es, out, err);
    entries_release(&es);
    if (rc)
        sl_bundle_release(out);
    return rc;
}

void sl_bundle_release(sl_bundle *b)
{
    for (size_t i = 0; i < b->nfiles; i++) {
        free(b->files[i].path);
        free(b->files[i].node_id);
        free(b->files[i].data);
    }
    free(b->files);
    free(b->dsl_name);
    free(b->app_dir);
    free(b->dsl);
    if (b->manifest)
        json_decref(b->manifest);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------ */
/* extracting                                                         */

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int extract_one(int root, const sl_bundle_file *f, const char *dir, sl_err *err)
{
    char *path = sl_xstrdup(f->path);
    int cur = dup(root), rc = 0;
    char *comp = path;
    for (char *s; cur >= 0 && (s = strchr(comp, '/')); comp = s + 1) {
        *s = '\0';
        bool made = mkdirat(cur, comp, 0755) == 0;
        if (!made && errno != EEXIST) {
            rc = sl_err_set(err, SL_EIO, "extract: cannot create %s/%s: %s", dir, path,
                            strerror(errno));
            break;
        }
        int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            rc = sl_err_set(err, SL_EIO, "extract: cannot open the folder %s/%s: %s%s", dir, path,
                            strerror(errno),
                            errno == ELOOP || errno == ENOTDIR ? " (a symlink or file is in the way)"
                                                               : "");
            break;
        }
        if (made)
            fchmod(next, 0755);
        close(cur);
        cur = next;
        *s = '/';
    }
    if (cur < 0 && !rc)
        rc = sl_err_set(err, SL_EIO, "extract: %s: %s", dir, strerror(errno));
    if (!rc) {
        mode_t mode = f->exec ? 0755 : 0644;
        int fd = openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
            rc = sl_err_set(err, SL_EIO, "extract: cannot create %s/%s: %s", dir, f->path,
                            strerror(errno));
        else {
            if (fchmod(fd, mode) < 0 || write_all(fd, f->data, f->len) < 0)
                rc = sl_err_set(err, SL_EIO, "extract: cannot write %s/%s: %s", dir, f->path,
                                strerror(errno));
            if (close(fd) < 0 && !rc)
                rc = sl_err_set(err, SL_EIO, "extract: cannot write %s/%s: %s", dir, f->path,
                                strerror(errno));
        }
    }
    if (cur >= 0)
        close(cur);
    free(path);
    return rc;
}

int sl_bundle_extract(const sl_bundle *b, const char *dir, sl_err *err)
{
    for (size_t i = 0; i < b->nfiles; i++) {
        const char *why = path_problem(b->files[i].path, strlen(b->files[i].path));
        if (why)
            return bad_entry(err, b->files[i].path, "%s", why);
    }
    bool made = mkdir(dir, 0755) == 0;
    if (!made && errno != EEXIST)
        return sl_err_set(err, SL_EIO, "extract: cannot create the folder %s: %s", dir,
                          strerror(errno));
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0)
        return sl_err_set(err, SL_EIO, "extract: cannot open the folder %s: %s%s", dir,
                          strerror(errno),
                          errno == ELOOP || errno == ENOTDIR ? " (it is a symlink or a file)" : "");
    if (made) {
        fchmod(root, 0755);
    } else {
        int d = dup(root);
        DIR *dp = d >= 0 ? fdopendir(d) : NULL;
        bool empty = dp != NULL;
        for (struct dirent *de; dp && (de = readdir(dp));)
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                empty = false;
        if (dp)
            closedir(dp);
        else if (d >= 0)
            close(d);
        if (!empty) {
            close(root);
            return sl_err_set(err, SL_EINVAL,
                              "extract: %s already exists and is not empty; give a new or empty "
                              "folder",
                              dir);
        }
    }
    int rc = 0;
    for (size_t i = 0; i < b->nfiles && !rc; i++)
        rc = extract_one(root, &b->files[i], dir, err);
    close(root);
    return rc;
}

int sl_bundle_read_file(const char *path, sl_bundle *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sl_err_set(err, SL_EIO, "cannot open %s: %s", path, strerror(errno));
    sl_buf b;
    sl_buf_init(&b, SL_BUNDLE_MAX_TOTAL + 1);
    sl_buf_add_file(&b, f);
    fclose(f);
    if (b.toobig) {
        sl_buf_release(&b);
        return sl_err_set(err, SL_ELIMIT, "%s: the bundle is larger than %zu MB, the most an "
                          "app may be", path, SL_BUNDLE_MAX_TOTAL >> 20);
    }
    int rc = sl_bundle_read(b.data ? b.data : "", b.len, NULL, out, err);
    sl_buf_release(&b);
    if (rc)
        return sl_err_set(err, err->code ? err->code : SL_EPARSE, "%s: %s", path,
                          err->msg ? err->msg : "not a valid app bundle");
    return 0;
}

int sl_bundle_extract_tmp(const sl_bundle *b, const char *origin, char **dir, char **files,
                          sl_err *err)
{
    *dir = *files = NULL;
    const char *tmp = getenv("TMPDIR");
    char *d = sl_xasprintf("%s/sluice-app-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d)) {
        int rc = sl_err_set(err, SL_EIO, "cannot make a folder for %s's files: %s", origin,
                            strerror(errno));
        free(d);
        return rc;
    }
    char *f = sl_xasprintf("%s/files", d);
    if (sl_bundle_extract(b, f, err)) {
        sl_bundle_remove_dir(d);
        free(f);
        free(d);
        return -1;
    }
    *dir = d;
    *files = f;
    return 0;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)f;
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

void sl_bundle_remove_dir(const char *dir)
{
    /* FTW_PHYS: a symlink inside is removed, never followed */
    if (dir)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------ */
/* writing                                                            */

typedef struct {
    char *path; /* relative to files_dir */
    const char *name;
    char id[40];
    long parent; /* index, -1 at the top */
    size_t order;
    bool dir, exec;
    char *data;
    size_t len;
} wnode;

typedef struct {
    wnode *v;
    size_t n, alloc;
    size_t total;
    const char *root; /* for messages */
} walk;

static void walk_release(walk *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->v[i].path);
        free(w->v[i].data);
    }
    free(w->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_file_fd(int fd, size_t room, sl_buf *out)
{
    sl_buf_init(out, room + 1);
    char tmp[65536];
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if ((size_t)n > room - out->len) {
            errno = EFBIG;
            return -1;
        }
        sl_buf_add(out, tmp, (size_t)n);
    }
}

static wnode *push(walk *w)
{
    if (w->n == w->alloc) {
        w->alloc = w->alloc ? w->alloc * 2 : 16;
        w->v = sl_xrealloc(w->v, w->alloc * sizeof *w->v);
    }
    wnode *n = &w->v[w->n++];
    memset(n, 0, sizeof *n);
    return n;
}

/* Collects the folder open at fd (closed here) into w, children sorted by
 * name so the bundle and its node order do not depend on readdir. */
static int walk_dir(walk *w, int fd, const char *rel, long parent, int depth, sl_err *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return sl_err_set(err, SL_EIO, "bundle: cannot read the folder %s/%s: %s", w->root, rel,
                          strerror(errno));
    }
    char **names = NULL;
    size_t nn = 0, na = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (nn == na) {
            na = na ? na * 2 : 16;
            names = sl_xrealloc(names, na * sizeof *names);
        }
        names[nn++] = sl_xstrdup(de->d_name);
    }
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < nn && !rc; i++) {
        char *path = *rel ? sl_xasprintf("%s/%s", rel, names[i]) : sl_xstrdup(names[i]);
        const char *why = path_problem(path, strlen(path));
        struct stat st;
        char nm[256];
        if (why) {
            rc = sl_err_set(err, SL_EINVAL, "bundle: %s/%s cannot go in a bundle: %s", w->root,
                            shown(path, strlen(path), nm), why);
        } else if (w->n + 3 >= SL_BUNDLE_MAX_ENTRIES) {
            rc = sl_err_set(err, SL_ELIMIT, "bundle: %s holds more than %d files and folders",
                            w->root, SL_BUNDLE_MAX_ENTRIES - 3);
        } else if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = sl_err_set(err, SL_EIO, "bundle: %s/%s: %s", w->root, path, strerror(errno));
        } else if (S_ISLNK(st.st_mode)) {
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: %s/%s is a symbolic link; a bundle carries regular files "
                            "only (copy the target in instead)",
                            w->root, path);
        } else if (S_ISDIR(st.st_mode)) {
            long self = (long)w->n;
            wnode *n = push(w);
            n->path = path, path = NULL;
            n->parent = parent, n->order = i, n->dir = true;
            int sub = openat(dirfd(d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (depth >= MAX_DEPTH)
                rc = sl_err_set(err, SL_ELIMIT, "bundle: %s/%s is nested more than %d folders deep",
                                w->root, w->v[self].path, MAX_DEPTH);
            else if (sub < 0)
                rc = sl_err_set(err, SL_EIO, "bundle: cannot open %s/%s: %s", w->root,
                                w->v[self].path, strerror(errno));
            else
                rc = walk_dir(w, sub, w->v[self].path, self, depth + 1, err), sub = -1;
            if (sub >= 0)
                close(sub);
        } else if (S_ISREG(st.st_mode)) {
            int f = openat(dirfd(d), names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
            sl_buf b;
            sl_buf_init(&b, 0);
            struct stat fst;
            if (f < 0 || fstat(f, &fst) < 0 || !S_ISREG(fst.st_mode) ||
                read_file_fd(f, SL_BUNDLE_MAX_TOTAL - w->total, &b) < 0) {
                rc = sl_err_set(err, errno == EFBIG ? SL_ELIMIT : SL_EIO,
                                "bundle: cannot read %s/%s: %s", w->root, path,
                                errno == EFBIG ? "the files pass the 50 MB bundle limit"
                                               : strerror(errno));
                sl_buf_release(&b);
            } else {
                wnode *n = push(w);
                n->path = path, path = NULL;
                n->parent = parent, n->order = i, n->exec = (fst.st_mode & 0111) != 0;
                n->len = b.len;
                n->data = sl_buf_detach(&b);
                w->total += n->len;
            }
            if (f >= 0)
                close(f);
        } else {
            rc = sl_err_set(err, SL_EINVAL,
                            "bundle: %s/%s is a device, FIFO or socket; a bundle carries regular "
                            "files only",
                            w->root, path);
        }
        free(path);
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    closedir(d);
    /* names now point into the paths, which outlive the listing */
    for (size_t i = 0; i < w->n; i++) {
        const char *s = strrchr(w->v[i].path, '/');
        w->v[i].name = s ? s + 1 : w->v[i].path;
    }
    return rc;
}

/* Dify's AppBundleService._sanitize_filename, plus invalid UTF-8 made
 * into _ so the name is text. */
static char *sanitize_name(const char *name)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    const unsigned char *p = (const unsigned char *)name;
    size_t n = strlen(name);
    for (size_t i = 0; i < n;) {
        bool ok;
        size_t step = sl_utf8_step(p + i, n - i, &ok);
        if (!ok || (step == 1 && (p[i] < 0x20 || strchr("<>:\"/\\|?*", p[i]))))
            sl_buf_addc(&b, '_');
        else
            sl_buf_add(&b, p + i, step);
        i += step;
    }
    char *s = sl_buf_detach(&b);
    size_t lo = 0, hi = strlen(s);
    while (lo < hi && (s[lo] == '.' || s[lo] == ' '))
        lo++;
    while (hi > lo && (s[hi - 1] == '.' || s[hi - 1] == ' '))
        hi--;
    size_t end = lo, chars = 0;
    while (end < hi && chars < 100) {
        bool ok;
        end += sl_utf8_step((const unsigned char *)s + end, hi - end, &ok);
        chars++;
    }
    char *out = end > lo ? sl_xstrndup(s + lo, end - lo) : sl_xstrdup("app");
    free(s);
    return out;
}

/* path -> node id from what the caller kept of an earlier manifest. */
static void refs_map(const sl_value *refs, sl_map *out)
{
    if (json_is_array(refs)) {
        for (size_t i = 0; i < json_array_size(refs); i++) {
            const sl_value *r = json_array_get(refs, i);
            const char *p = json_string_value(json_object_get(r, "path"));
            const char *id = json_string_value(json_object_get(r, "node_id"));
            if (p && id && !sl_map_get(out, p))
                sl_map_put(out, p, (void *)id);
        }
        return;
    }
    const sl_value *nodes = json_object_get(json_object_get(json_object_get(refs, "app_assets"), "tree"), "nodes");
    sl_map byid;
    sl_map_init(&byid);
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(nodes, i), "id"));
        if (id)
            sl_map_put(&byid, id, (void *)json_array_get(nodes, i));
    }
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const sl_value *nd = json_array_get(nodes, i);
        const char *id = json_string_value(json_object_get(nd, "id"));
        sl_buf path;
        sl_buf_init(&path, MAX_PATH_BYTES);
        bool ok = id != NULL;
        /* the path is the names up the parent chain; a cycle or a missing
         * parent leaves the node out */
        for (int depth = 0; ok && nd; depth++) {
            const char *name = json_string_value(json_object_get(nd, "name"));
            const char *parent = json_string_value(json_object_get(nd, "parent_id"));
            if (!name || depth > MAX_DEPTH) {
                ok = false;
                break;
            }
            if (path.len) {
                char *rest = sl_xstrdup(path.data);
                sl_buf_reset(&path);
                sl_buf_addf(&path, "%s/%s", name, rest);
                free(rest);
            } else {
                sl_buf_adds(&path, name);
            }
            nd = parent ? sl_map_get(&byid, parent) : NULL;
            if (parent && !nd)
                ok = false;
        }
        if (ok && !path.toobig && path.len && !sl_map_get(out, path.data))
            sl_map_put(out, path.data, (void *)id);
        sl_buf_release(&path);
    }
    sl_map_release(&byid);
}

/* NULL and err when the kernel gives no randomness for a new file id. */
static sl_value *build_manifest(walk *w, const char *dsl_name, const sl_value *refs,
                                sl_err *err)
{
    sl_map ref, used;
    sl_map_init(&ref);
    sl_map_init(&used);
    if (refs)
        refs_map(refs, &ref);
    for (size_t i = 0; i < w->n; i++) {
        const char *id = sl_map_get(&ref, w->v[i].path);
        if (id && strlen(id) < sizeof w->v[i].id && !sl_map_get(&used, id))
            snprintf(w->v[i].id, sizeof w->v[i].id, "%s", id);
        else if (sl_rand_uuid(w->v[i].id, err)) {
            sl_map_release(&ref);
            sl_map_release(&used);
            return NULL;
        }
        sl_map_put(&used, w->v[i].id, (void *)1);
    }
    sl_map_release(&ref);
    sl_map_release(&used);

    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sl_value *nodes = json_array(), *files = json_array();
    size_t nfiles = 0;
    for (size_t i = 0; i < w->n; i++) {
        wnode *n = &w->v[i];
        const char *dot = strrchr(n->name, '.');
        sl_value *nd = json_pack("{s:s, s:s, s:s, s:o, s:I, s:s, s:I}", "id", n->id, "node_type",
                                 n->dir ? "folder" : "file", "name", n->name, "parent_id",
                                 n->parent < 0 ? json_null() : json_string(w->v[n->parent].id),
                                 "order", (json_int_t)n->order, "extension",
                                 !n->dir && dot ? dot + 1 : "", "size",
                                 (json_int_t)(n->dir ? 0 : n->len));
        char sum[65] = "";
        if (!n->dir)
            sl_sha256_hex(n->data, n->len, sum);
        json_object_set_new(nd, "checksum", json_string(sum));
        json_array_append_new(nodes, nd);
        if (!n->dir) {
            json_array_append_new(files, json_pack("{s:s, s:s}", "node_id", n->id, "path", n->path));
            nfiles++;
        }
    }
    return json_pack("{s:s, s:s, s:s, s:{s:{s:o}}, s:o, s:{s:I}}", "schema_version",
                     SL_BUNDLE_SCHEMA, "generated_at", when, "dsl_filename", dsl_name,
                     "app_assets", "tree", "nodes", nodes, "files", files, "integrity",
                     "file_count", (json_int_t)nfiles);
}

static int put_entry(struct archive *a, const char *name, bool dir, bool exec, const void *data,
                     size_t len, time_t now)
{
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname_utf8(e, name);
    archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(e, dir || exec ? 0755 : 0644);
    archive_entry_set_size(e, dir ? 0 : (la_int64_t)len);
    archive_entry_set_mtime(e, now, 0);
    int rc = archive_write_header(a, e) == ARCHIVE_OK ? 0 : -1;
    if (!rc && !dir && len && archive_write_data(a, data, len) != (la_ssize_t)len)
        rc = -1;
    archive_entry_free(e);
    return rc;
}

static int write_zip(int fd, const char *app, const char *dsl_name, const char *dsl,
                     size_t dsl_len, const char *manifest, const walk *w, sl_err *err)
{
    sl_archive_utf8 u;
    sl_archive_utf8_enter(&u);
    struct archive *a = archive_write_new();
    time_t now = time(NULL);
    int rc = 0;
    if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
        archive_write_set_options(a, "zip:compression=deflate,zip:hdrcharset=UTF-8") != ARCHIVE_OK ||
        archive_write_open_fd(a, fd) != ARCHIVE_OK)
        rc = -1;
    if (!rc)
        rc = put_entry(a, dsl_name, false, false, dsl, dsl_len, now);
    if (!rc)
        rc = put_entry(a, SL_BUNDLE_MANIFEST, false, false, manifest, strlen(manifest), now);
    if (!rc)
        rc = put_entry(a, app, true, false, NULL, 0, now);
    for (size_t i = 0; i < w->n && !rc; i++) {
        char *name = sl_xasprintf("%s/%s", app, w->v[i].path);
        rc = put_entry(a, name, w->v[i].dir, w->v[i].exec, w->v[i].data, w->v[i].len, now);
        free(name);
    }
    if (!rc && archive_write_close(a) != ARCHIVE_OK)
        rc = -1;
    if (rc)
        sl_err_set(err, SL_EIO, "bundle: cannot write the zip: %s",
                   archive_error_string(a) ? archive_error_string(a) : strerror(errno));
    archive_write_free(a);
    sl_archive_utf8_leave(&u);
    return rc;
}

int sl_bundle_write(const char *zip_path, const char *app_name, const char *dsl_text,
                    size_t dsl_len, const char *files_dir, const sl_value *file_refs,
                    sl_err *err)
{
    if (dsl_len > SL_BUNDLE_MAX_TEXT)
        return sl_err_set(err, SL_ELIMIT, "bundle: the DSL is larger than 10 MB (Dify's limit)");
    if (archive_ready(err))
        return -1;
    if (!sl_utf8_valid(dsl_text, dsl_len))
        return sl_err_set(err, SL_EINVAL, "bundle: the DSL is not valid UTF-8 text");
    walk w = {.root = files_dir};
    int rc = 0;
    if (files_dir) {
        int fd = open(files_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            rc = sl_err_set(err, SL_EIO, "bundle: cannot open the files folder %s: %s", files_dir,
                            strerror(errno));
        else
            rc = walk_dir(&w, fd, "", -1, 0, err);
    }
    char *app = sanitize_name(app_name ? app_name : "");
    char *dsl_name = sl_xasprintf("%s.yml", app);
    sl_value *manifest = NULL;
    char *mtext = NULL, *tmp = NULL;
    int fd = -1;
    if (!rc) {
        manifest = build_manifest(&w, dsl_name, file_refs, err);
        if (!manifest)
            rc = -1;
        else if (!(mtext = json_dumps(manifest, JSON_INDENT(2))))
            SL_BUG("manifest does not serialise");
        else if (w.total + dsl_len + strlen(mtext) > SL_BUNDLE_MAX_TOTAL)
            rc = sl_err_set(err, SL_ELIMIT,
                            "bundle: the DSL, manifest and files come to more than the 50 MB a "
                            "bundle may hold");
    }
    if (!rc) {
        tmp = sl_xasprintf("%s.tmp.XXXXXX", zip_path);
        fd = mkstemp(tmp);
        if (fd < 0)
            rc = sl_err_set(err, SL_EIO, "bundle: cannot create %s: %s", tmp, strerror(errno));
    }
    if (!rc) {
        fchmod(fd, 0644);
        rc = write_zip(fd, app, dsl_name, dsl_text, dsl_len, mtext, &w, err);
        if (!rc && (fsync(fd) < 0 || close(fd) < 0))
            rc = sl_err_set(err, SL_EIO, "bundle: cannot write %s: %s", tmp, strerror(errno));
        else if (rc)
            close(fd);
        fd = -1;
        if (!rc && rename(tmp, zip_path) < 0)
            rc = sl_err_set(err, SL_EIO, "bundle: cannot rename %s to %s: %s", tmp, zip_path,
                            strerror(errno));
        if (rc)
            unlink(tmp);
    }
    free(tmp);
    free(mtext);
    if (manifest)
        json_decref(manifest);
    free(dsl_name);
    free(app);
    walk_release(&w);
    return rc;
}
