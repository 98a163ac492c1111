/*
 * store — see store.h.  The one interface: picks the backend by the
 * location's scheme and dispatches every call through its sl_store_ops.
 */
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct sl_store {
    const sl_store_ops *ops;
    sl_store_be *b;
};

/* The backends by the schemes of their locations; form: how a location
 * reads, for messages (NULL: another name of the one before). */
static const struct {
    const char *scheme;
    const sl_store_ops *ops;
    const char *form;
} backends[] = {
    {"sqlite", &sl_store_sqlite, "sqlite:FOLDER"},
    {"postgres", &sl_store_pg, "postgres://USER@HOST/DB"},
    {"postgresql", &sl_store_pg, NULL},  /* libpq's URIs have both */
};
#define NBACKENDS (sizeof backends / sizeof *backends)

/* The length of the scheme `where` starts with ("sqlite" of "sqlite:x"),
 * 0 when it has none: a scheme is a letter, then letters, digits, '+',
 * '-' or '.', then a colon (as in a URL). */
static size_t scheme_len(const char *where)
{
    static const char az[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (!where[0] || !strchr(az, where[0]))
        return 0;
    size_t n = 1 + strspn(where + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789+-.");
    return where[n] == ':' ? n : 0;
}

int sl_store_open(const char *where, sl_store **out, int *interrupted, sl_err *err)
{
    *out = NULL;
    *interrupted = 0;
    const sl_store_ops *ops = backends[0].ops;  /* a plain folder: SQLite */
    size_t n = scheme_len(where);
    if (n) {
        size_t i = 0;
        while (i < NBACKENDS &&
               !(strlen(backends[i].scheme) == n && !strncasecmp(where, backends[i].scheme, n)))
            i++;
        if (i == NBACKENDS) {
            /* only the scheme is shown: the rest may hold a password */
            char known[128] = "";
            for (size_t k = 0; k < NBACKENDS; k++)
                if (backends[k].form)
                    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                             k ? ", " : "", backends[k].form);
            return sl_err_set(err, SL_EUNSUPPORTED,
                              "store: no backend '%.*s' (the data location '%.*s:…'); sluice "
                              "keeps its data in %s or a plain FOLDER (write a folder whose "
                              "name has a colon as ./NAME)",
                              (int)(n > 32 ? 32 : n), where, (int)(n > 32 ? 32 : n), where, known);
        }
        ops = backends[i].ops;
        const char *form = backends[i].form ? backends[i].form : backends[i - 1].form;
        where += n + 1;
        if (!*where)
            return sl_err_set(err, SL_EINVAL, "store: '%s:' names no location (write %s)",
                              backends[i].scheme, form);
    }
    sl_store_be *b;
    if (ops->open(where, &b, interrupted, err))
        return -1;
    sl_store *s = sl_xcalloc(1, sizeof *s);
    s->ops = ops;
    s->b = b;
    *out = s;
    return 0;
}

void sl_store_close(sl_store *s)
{
    if (!s)
        return;
    s->ops->close(s->b);
    free(s);
}

bool sl_store_shared(sl_store *s)
{
    return s->ops->shared(s->b);
}

void sl_store_event_publish(sl_store *s, const char *run_id, long long seq, const char *text,
                            size_t len)
{
    s->ops->event_publish(s->b, run_id, seq, text, len);
}

sl_value *sl_store_events_since(sl_store *s, const char *run_id, long long after)
{
    return s->ops->events_since(s->b, run_id, after);
}

long long sl_store_running(sl_store *s, const char *app_id)
{
    return s->ops->running(s->b, app_id);
}

int sl_store_stop_request(sl_store *s, const char *run_id, sl_err *err)
{
    return s->ops->stop_request(s->b, run_id, err);
}

int sl_store_listen(sl_store *s, sl_store_listen_fn fn, void *ud, sl_err *err)
{
    return s->ops->listen(s->b, fn, ud, err);
}

int sl_store_ping(sl_store *s, sl_err *err)
{
    return s->ops->ping(s->b, err);
}

void sl_store_release_memory(sl_store *s)
{
    s->ops->release_memory(s->b);
}


/* ---- apps ---- */

int sl_store_app_add(sl_store *s, const char *name, const char *mode, const char *dsl, char **id,
                     sl_err *err)
{
    return s->ops->app_add(s->b, name, mode, dsl, id, err);
}

int sl_store_app_list(sl_store *s, sl_value **out, sl_err *err)
{
    return s->ops->app_list(s->b, out, err);
}

int sl_store_app_get(sl_store *s, const char *id, char **dsl, sl_value **info, sl_err *err)
{
    return s->ops->app_get(s->b, id, dsl, info, err);
}

int sl_store_app_delete(sl_store *s, const char *id, sl_err *err)
{
    return s->ops->app_delete(s->b, id, err);
}

int sl_store_app_update(sl_store *s, const char *id, const char *name, const char *mode,
                        const char *dsl, int *version, sl_err *err)
{
    return s->ops->app_update(s->b, id, name, mode, dsl, version, err);
}

int sl_store_app_versions(sl_store *s, const char *id, sl_value **out, sl_err *err)
{
    return s->ops->app_versions(s->b, id, out, err);
}

int sl_store_app_get_version(sl_store *s, const char *id, int version, char **dsl, sl_err *err)
{
    return s->ops->app_get_version(s->b, id, version, dsl, err);
}

char *sl_store_app_dir(sl_store *s, const char *id, sl_err *err)
{
    if (!id || !*id || strchr(id, '/') || !strcmp(id, ".") || !strcmp(id, "..")) {
        char shown[48];
        sl_excerpt(id ? id : "(none)", shown, sizeof shown);
        sl_err_set(err, SL_EINVAL, "store: '%s' is not an app id", shown);
        return NULL;
    }
    return s->ops->app_dir(s->b, id, err);
}

/* ---- keys and the admin token ---- */

int sl_store_key_create(sl_store *s, const char *app_id, char **key, sl_err *err)
{
    return s->ops->key_create(s->b, app_id, key, err);
}

int sl_store_key_list(sl_store *s, const char *app_id, sl_value **out, sl_err *err)
{
    return s->ops->key_list(s->b, app_id, out, err);
}

int sl_store_key_revoke(sl_store *s, const char *key_id, sl_err *err)
{
    return s->ops->key_revoke(s->b, key_id, err);
}

char *sl_store_key_app(sl_store *s, const char *key)
{
    return s->ops->key_app(s->b, key);
}

long long sl_store_keys_version(sl_store *s)
{
    return s->ops->keys_version(s->b);
}

int sl_store_tools_get(sl_store *s, const char *scope, char **spec, sl_err *err)
{
    return s->ops->tools_get(s->b, scope ? scope : "", spec, err);
}

int sl_store_tools_set(sl_store *s, const char *scope, const char *spec, sl_err *err)
{
    return s->ops->tools_set(s->b, scope ? scope : "", spec, err);
}

int sl_store_admin_token(sl_store *s, char **token, bool *created, sl_err *err)
{
    return s->ops->admin_token(s->b, token, created, err);
}

bool sl_store_admin_ok(sl_store *s, const char *token)
{
    return s->ops->admin_ok(s->b, token);
}

/* ---- runs ---- */

int sl_store_start_run(sl_store *s, const sl_run_row *r, sl_err *err)
{
    return s->ops->start_run(s->b, r, err);
}

int sl_store_finish_run(sl_store *s, const char *run_id, const char *status,
                        const sl_value *outputs, const char *error, double elapsed,
                        long long tokens, int steps, long long finished_at, const char *answer,
                        const char *reply, char *events, sl_err *err)
{
    return s->ops->finish_run(s->b, run_id, status, outputs, error, elapsed, tokens, steps,
                              finished_at, answer, reply, events, err);
}

int sl_store_enqueue_run(sl_store *s, const sl_run_row *r, const char *request, sl_err *err)
{
    return s->ops->enqueue_run(s->b, r, request, err);
}

int sl_store_claim_runs(sl_store *s, int max, sl_value **out, sl_err *err)
{
    *out = NULL;
    return s->ops->claim_runs(s->b, max < 1 ? 1 : max, out, err);
}

int sl_store_rate_take(sl_store *s, const char *key, double per_s, sl_err *err)
{
    return s->ops->rate_take(s->b, key, per_s, err);
}

int sl_store_run_state(sl_store *s, const char *run_id, char **status, char **reply, sl_err *err)
{
    *status = *reply = NULL;
    return s->ops->run_state(s->b, run_id, status, reply, err);
}

sl_value *sl_store_run_get(sl_store *s, const char *app_id, const char *run_id)
{
    return s->ops->run_get(s->b, app_id, run_id);
}

sl_value *sl_store_run_events(sl_store *s, const char *app_id, const char *run_id)
{
    return s->ops->run_events(s->b, app_id, run_id);
}

sl_value *sl_store_runs_list(sl_store *s, const sl_runs_filter *f)
{
    return s->ops->runs_list(s->b, f);
}

sl_value *sl_store_run_logs(sl_store *s, const char *app_id, const char *status, int page,
                            int limit)
{
    return s->ops->run_logs(s->b, app_id, status, page, limit);
}

/* ---- conversations ---- */

int sl_store_conversation(sl_store *s, const char *app_id, const char *user, const char *id,
                          const char *first_query, char **out_id, sl_err *err)
{
    return s->ops->conversation(s->b, app_id, user, id, first_query, out_id, err);
}

sl_value *sl_store_history(sl_store *s, const char *conversation_id, int limit)
{
    return s->ops->history(s->b, conversation_id, limit);
}

int sl_store_message_add(sl_store *s, const char *id, const char *conversation_id,
                         const char *app_id, const char *query, const char *run_id, sl_err *err)
{
    return s->ops->message_add(s->b, id, conversation_id, app_id, query, run_id, err);
}

sl_value *sl_store_conversations(sl_store *s, const char *app_id, const char *user, int limit)
{
    return s->ops->conversations(s->b, app_id, user, limit);
}

sl_value *sl_store_messages(sl_store *s, const char *app_id, const char *conversation_id,
                            const char *user, int limit)
{
    return s->ops->messages(s->b, app_id, conversation_id, user, limit);
}

int sl_store_conversation_delete(sl_store *s, const char *app_id, const char *id,
                                 const char *user, sl_err *err)
{
    return s->ops->conversation_delete(s->b, app_id, id, user, err);
}

sl_value *sl_store_conversation_rename(sl_store *s, const char *app_id, const char *id,
                                       const char *user, const char *name)
{
    return s->ops->conversation_rename(s->b, app_id, id, user, name);
}

int sl_store_feedback(sl_store *s, const char *app_id, const char *message_id, const char *user,
                      const char *rating)
{
    return s->ops->feedback(s->b, app_id, message_id, user, rating);
}

/* ---- files ---- */

int sl_store_file_add(sl_store *s, const char *id, const char *app_id, const char *name,
                      long long size, const char *mime, const char *user, sl_err *err)
{
    return s->ops->file_add(s->b, id, app_id, name, size, mime, user, err);
}

sl_value *sl_store_file_get(sl_store *s, const char *app_id, const char *id)
{
    return s->ops->file_get(s->b, app_id, id);
}

sl_value *sl_store_file_find(sl_store *s, const char *app_id, const char *user, const char *id)
{
    if (!sl_file_id_ok(id))
        return NULL;
    sl_value *meta = sl_store_file_get(s, app_id, id);
    const char *owner = json_string_value(json_object_get(meta, "created_by"));
    if (meta && owner && *owner && !(user && !strcmp(owner, user))) {
        json_decref(meta);
        return NULL;
    }
    return meta;
}

int sl_store_file_open(sl_store *s, const char *app_id, const char *user, const char *id,
                       sl_err *err)
{
    sl_value *meta = sl_store_file_find(s, app_id, user, id);
    if (!meta) {
        char shown[48];
        sl_excerpt(id ? id : "(none)", shown, sizeof shown);
        return sl_err_set(err, SL_ENOTFOUND, "store: '%s' is not a file of this app and user",
                          shown);
    }
    json_decref(meta);
    return sl_store_blob_open(s, id, NULL, err);
}

/* ---- blobs ---- */

struct sl_blob_writer {
    const sl_store_ops *ops;
    sl_store_bw *w;
    long long cap, n;
};

static int key_ok(const char *key, sl_err *err)
{
    if (sl_file_id_ok(key))
        return 0;
    char shown[48];
    sl_excerpt(key ? key : "(none)", shown, sizeof shown);
    return sl_err_set(err, SL_EINVAL, "store: '%s' is not a blob key (an id sluice issued)",
                      shown);
}

int sl_store_blob_create(sl_store *s, const char *key, long long cap, sl_blob_writer **out,
                         sl_err *err)
{
    *out = NULL;
    sl_store_bw *w;
    if (key_ok(key, err) || s->ops->blob_create(s->b, key, &w, err))
        return -1;
    sl_blob_writer *bw = sl_xcalloc(1, sizeof *bw);
    bw->ops = s->ops;
    bw->w = w;
    bw->cap = cap;
    *out = bw;
    return 0;
}

int sl_blob_write(sl_blob_writer *w, const void *data, size_t len, sl_err *err)
{
    if (w->cap > 0 && (long long)len > w->cap - w->n)
        return sl_err_set(err, SL_ELIMIT, "store: the file is larger than %lld bytes", w->cap);
    if (len && w->ops->blob_write(w->w, data, len, err))
        return -1;
    w->n += (long long)len;
    return 0;
}

int sl_blob_commit(sl_blob_writer *w, sl_err *err)
{
    int rc = w->ops->blob_commit(w->w, err);
    free(w);
    return rc;
}

void sl_blob_abort(sl_blob_writer *w)
{
    if (!w)
        return;
    w->ops->blob_abort(w->w);
    free(w);
}

int sl_store_blob_put(sl_store *s, const char *key, const void *data, size_t len,
                      long long cap, sl_err *err)
{
    sl_blob_writer *w;
    if (sl_store_blob_create(s, key, cap, &w, err))
        return -1;
    if (sl_blob_write(w, data, len, err)) {
        sl_blob_abort(w);
        return -1;
    }
    return sl_blob_commit(w, err);
}

int sl_store_blob_open(sl_store *s, const char *key, long long *size, sl_err *err)
{
    if (key_ok(key, err))
        return -1;
    return s->ops->blob_open(s->b, key, size, err);
}

int sl_store_blob_get(sl_store *s, const char *key, size_t cap, sl_buf *out, sl_err *err)
{
    int fd = sl_store_blob_open(s, key, NULL, err);
    if (fd < 0)
        return -1;
    char chunk[65536];
    size_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = sl_err_set(err, SL_EIO, "store: reading blob %s: %s", key, strerror(errno));
            break;
        }
        if (k == 0)
            break;
        total += (size_t)k;
        if ((cap && total > cap) || sl_buf_add(out, chunk, (size_t)k)) {
            rc = sl_err_set(err, SL_ELIMIT, "store: blob %s is larger than %zu bytes", key,
                            cap ? cap : out->cap);
            break;
        }
    }
    close(fd);
    return rc;
}

int sl_store_blob_delete(sl_store *s, const char *key, sl_err *err)
{
    if (key_ok(key, err))
        return -1;
    return s->ops->blob_delete(s->b, key, err);
}

/* ---- dataset keys and knowledge ---- */

int sl_store_dataset_key_create(sl_store *s, char **key, sl_err *err)
{
    return s->ops->key_create(s->b, SL_STORE_DATASETS, key, err);
}

bool sl_store_dataset_key_ok(sl_store *s, const char *key)
{
    /* key_app hides dataset keys from apps; the scope's own lookup */
    return key && !strncmp(key, "dataset-", 8) && s->ops->key_scope_ok(s->b, SL_STORE_DATASETS, key);
}

int sl_store_kb_add(sl_store *s, const char *id, const char *name, const sl_value *info,
                    sl_err *err)
{
    return s->ops->kb_add(s->b, id, name, info, err);
}

int sl_store_kb_set(sl_store *s, const char *id, const char *name, const sl_value *info,
                    sl_err *err)
{
    return s->ops->kb_set(s->b, id, name, info, err);
}

sl_value *sl_store_kb_get(sl_store *s, const char *id_or_name)
{
    return id_or_name ? s->ops->kb_get(s->b, id_or_name) : NULL;
}

sl_value *sl_store_kb_list(sl_store *s)
{
    return s->ops->kb_list(s->b);
}

int sl_store_kb_delete(sl_store *s, const char *id, sl_err *err)
{
    return s->ops->kb_delete(s->b, id, err);
}

sl_value *sl_store_kb_docs(sl_store *s, const char *kb_id)
{
    return s->ops->kb_docs(s->b, kb_id);
}

sl_value *sl_store_kb_doc(sl_store *s, const char *kb_id, const char *doc_id)
{
    return s->ops->kb_doc(s->b, kb_id, doc_id);
}

sl_value *sl_store_kb_doc_of_source(sl_store *s, const char *kb_id, const char *source,
                                    long long *next_position)
{
    return s->ops->kb_doc_of_source(s->b, kb_id, source, next_position);
}

int sl_store_kb_doc_put(sl_store *s, const char *kb_id, const char *doc_id, const sl_value *info,
                        const sl_store_chunk *chunks, size_t n, int dims, const sl_store_kw *kw,
                        sl_err *err)
{
    return s->ops->kb_doc_put(s->b, kb_id, doc_id, info, chunks, n, dims, kw, err);
}

int sl_store_kb_doc_delete(sl_store *s, const char *kb_id, const char *doc_id, sl_err *err)
{
    return s->ops->kb_doc_delete(s->b, kb_id, doc_id, err);
}

sl_value *sl_store_kb_chunks(sl_store *s, const char *kb_id, const char *doc_id, float **vecs,
                             int dims)
{
    return s->ops->kb_chunks(s->b, kb_id, doc_id, vecs, dims);
}

int sl_store_kb_vectors(sl_store *s, const char *kb_id, int dims, long long **ns,
                        long long **docs, float **vecs, size_t *count, sl_err *err)
{
    return s->ops->kb_vectors(s->b, kb_id, dims, ns, docs, vecs, count, err);
}

int sl_store_kb_postings(sl_store *s, const char *kb_id, const char *const *terms, size_t n,
                         void (*fn)(size_t i, long long df, long long base, const void *data,
                                    size_t size, void *ud),
                         void *ud, long long *rows, long long *tokens, long long **skip,
                         size_t *nskip, sl_err *err)
{
    return s->ops->kb_postings(s->b, kb_id, terms, n, fn, ud, rows, tokens, skip, nskip, err);
}

sl_value *sl_store_kb_rows(sl_store *s, const char *kb_id, const long long *ns, size_t count,
                           float *vecs, int dims)
{
    return s->ops->kb_rows(s->b, kb_id, ns, count, vecs, dims);
}

int sl_store_kb_indexed(sl_store *s, const char *kb_id, const char *doc_id,
                        void (*fn)(long long pos, const char *content, void *ud), void *ud,
                        sl_err *err)
{
    return s->ops->kb_indexed(s->b, kb_id, doc_id, fn, ud, err);
}

int sl_store_kb_kw_put(sl_store *s, const char *kb_id, const char *doc_id, const sl_store_kw *kw,
                       sl_err *err)
{
    return s->ops->kb_kw_put(s->b, kb_id, doc_id, kw, err);
}

int sl_store_kb_kw_done(sl_store *s, const char *kb_id, sl_err *err)
{
    return s->ops->kb_kw_done(s->b, kb_id, err);
}
