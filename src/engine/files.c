/* The run's file table: files nodes make and read (engine/run.h, node.h). */
#include "engine/run_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/mime.h"
#include "core/rand.h"
#include "core/sha256.h"

/* ---- the run's files ----
 *
 * The table of files this run may read.  Nothing inside a file value is
 * trusted but its related_id, and that only as a key: the bytes come from
 * a file sluice placed itself.  Ids are UUIDs, so no id builds a path. */

/* The host path of file id `id` in the run's own folder or the caller's
 * `files` (heap), or NULL when neither holds it. */
static char *file_path_of(sl_run *r, const char *id)
{
    char *path = NULL;
    pthread_mutex_lock(&r->sb_lock);
    if (r->files_dir && json_object_get(r->made, id))
        path = sl_xasprintf("%s/%s", r->files_dir, id);
    pthread_mutex_unlock(&r->sb_lock);
    if (!path) {
        const char *p = json_string_value(json_object_get(r->opts.files, id));
        if (p)
            path = sl_xstrdup(p);
    }
    return path;
}

int sl_run_file_open(sl_run *r, const sl_value *f, sl_err *err)
{
    const char *name = json_string_value(json_object_get(f, "filename"));
    const char *id = json_string_value(json_object_get(f, "related_id"));
    if (!sl_value_is_file(f))
        return sl_err_set(err, SL_EINVAL, "not a file value");
    char *path = sl_file_id_ok(id) ? file_path_of(r, id) : NULL;
    int fd = -1;
    sl_err e = {.code = SL_ENOTFOUND};
    if (path) {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            sl_err_set(&e, SL_EIO, "%s", strerror(errno));
        free(path);
    } else if (sl_file_id_ok(id) && r->opts.file_open) {
        fd = r->opts.file_open(id, r->opts.file_ud, &e);
    }
    if (fd >= 0)
        return fd;
    if (e.code == SL_ENOTFOUND) {
        sl_err_clear(&e);
        char shown[48];
        sl_excerpt(id ? id : "(none)", shown, sizeof shown);
        return sl_err_set(err, SL_EINVAL,
                          "file '%s' is not a file sluice holds for this run (related_id '%s'): "
                          "a file value reaches bytes only through an id sluice issued, never "
                          "through its url or path; pass files as inputs (--input NAME=@FILE, "
                          "POST /v1/files/upload) or as a remote_url",
                          name ? name : "?", shown);
    }
    sl_err_set(err, SL_EIO, "file '%s' cannot be read: %s", name ? name : "?",
               e.msg ? e.msg : "?");
    sl_err_clear(&e);
    return -1;
}

/* Writes the bytes of file `id` into the run's private folder (made on
 * first use). */
static int put_private(sl_run *r, const char *id, const char *name, const void *data,
                       size_t len, sl_err *err)
{
    pthread_mutex_lock(&r->sb_lock);
    if (!r->files_dir) {
        const char *tmp = getenv("TMPDIR"); /* where the user keeps temporary files */
        char *tmpl = sl_xasprintf("%s/sluice-files-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(tmpl))
            r->files_dir = tmpl;
        else
            free(tmpl);
    }
    char *dir = r->files_dir ? sl_xstrdup(r->files_dir) : NULL;
    pthread_mutex_unlock(&r->sb_lock);
    if (!dir)
        return sl_err_set(err, SL_EIO, "cannot make a folder for the run's files: %s",
                          strerror(errno));
    char *path = sl_xasprintf("%s/%s", dir, id);
    free(dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    const char *p = data;
    size_t left = len;
    while (fd >= 0 && left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    if (fd < 0 || left || close(fd)) {
        sl_err_set(err, SL_EIO, "cannot store file '%s' in %s: %s", name, path, strerror(errno));
        unlink(path);
        free(path);
        return -1;
    }
    free(path);
    return 0;
}

sl_value *sl_exec_store_file(sl_node_exec *x, const char *name, const void *data, size_t len,
                             sl_err *err)
{
    sl_run *r = x->s->run;
    char id[37];
    if (sl_rand_uuid(id, err))
        return NULL;
    if (r->opts.file_put) {
        if (r->opts.file_put(id, data, len, r->opts.file_ud, err)) {
            sl_err_prefix(err, "cannot store file '%s'", name);
            return NULL;
        }
    } else if (put_private(r, id, name, data, len, err)) {
        return NULL;
    }
    pthread_mutex_lock(&r->sb_lock);
    json_object_set_new(r->made, id, json_true());
    pthread_mutex_unlock(&r->sb_lock);
    const char *ext = sl_file_ext(name);
    const char *mime = sl_mime_for_ext(ext);
    if (!mime)
        mime = "application/octet-stream";
    char lower[32] = "";
    for (size_t i = 0; ext && ext[i] && i < sizeof lower - 1; i++)
        lower[i] = (char)tolower((unsigned char)ext[i]);
    char sha[65];
    sl_sha256_hex(data, len, sha);
    char url[512] = "";
    if (r->opts.files_url)
        snprintf(url, sizeof url, r->opts.files_url, id);
    sl_value *f = sl_file_new(&(sl_file){
        .id = id, .type = sl_file_kind(ext, mime), .transfer_method = "tool_file",
        .related_id = id, .filename = name, .extension = lower, .mime_type = mime,
        .size = (long long)len, .sha256 = sha, .url = r->opts.files_url ? url : NULL});
    if (r->opts.on_file)
        r->opts.on_file(f, r->opts.file_ud);
    return f;
}

int sl_exec_file_bytes(sl_node_exec *x, const sl_value *f, size_t cap, sl_buf *out, sl_err *err)
{
    sl_run *r = x->s->run;
    const char *name = json_string_value(json_object_get(f, "filename"));
    const char *b64 = json_string_value(json_object_get(f, "content_base64"));
    if (b64) {  /* the bytes themselves: data, not a reference */
        sl_buf tmp;
        sl_buf_init(&tmp, cap);
        int rc = sl_base64_decode(b64, strlen(b64), &tmp);
        if (rc < 0 || tmp.toobig) {
            sl_buf_release(&tmp);
            return sl_err_set(err, SL_EINVAL, "file '%s': content_base64 is not valid base64 "
                              "or is larger than %zu bytes", name ? name : "?", cap);
        }
        sl_buf_add(out, tmp.data ? tmp.data : "", tmp.len);
        sl_buf_release(&tmp);
        return 0;
    }
    const char *tm = json_string_value(json_object_get(f, "transfer_method"));
    if (tm && !strcmp(tm, "remote_url"))
        return 1;  /* the caller may fetch it through the SSRF guard */
    int fd = sl_run_file_open(r, f, err);
    if (fd < 0)
        return -1;
    char chunk[65536];
    size_t total = 0;
    ssize_t k;
    int rc = 0;
    while ((k = read(fd, chunk, sizeof chunk)) != 0) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = sl_err_set(err, SL_EIO, "reading file '%s': %s", name ? name : "?",
                            strerror(errno));
            break;
        }
        total += (size_t)k;
        if (cap && total > cap) {
            rc = sl_err_set(err, SL_ELIMIT, "file '%s' is larger than %zu bytes",
                            name ? name : "?", cap);
            break;
        }
        sl_buf_add(out, chunk, (size_t)k);
    }
    close(fd);
    return rc;
}

/* Removes a private files folder (flat: file ids only). */
void sl_rx_files_cleanup(sl_run *r)
{
    if (!r->files_dir)
        return;
    DIR *d = opendir(r->files_dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(r->files_dir);
}
