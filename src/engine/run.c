#include "engine/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/mime.h"
#include "core/secret.h"
#include "core/sha256.h"
#include "engine/stream.h"
#include "sandbox/policy.h"
#include "tmpl/ref.h"

typedef enum { E_UNKNOWN = 0, E_TAKEN, E_SKIPPED } estate;
typedef enum { NS_PENDING = 0, NS_RUNNING, NS_SUCCEEDED, NS_FAILED, NS_EXCEPTION, NS_SKIPPED } nstatus;

static const char *const nstatus_name[] = {"pending", "running", "succeeded", "failed",
                                           "exception", "skipped"};

struct sl_run {
    const sl_graph *g;
    sl_run_opts opts;
    struct sl_limits L;
    sl_pool *pool;
    char id[40];
    atomic_int cancel;        /* 1 when stopped by the caller */
    atomic_int exceptions;    /* nodes that ended in exception */
    atomic_int event_index;
    atomic_llong tokens;      /* model tokens of every node */
    double t0, t1;
    long long created_at, finished_at;  /* wall clock, seconds */
    pthread_mutex_t ev_lock;  /* serialises events, answer text, outputs */
    sl_run_status status;
    char *error;
    sl_value *outputs;
    sl_value *conversation;
    int steps;
    char **secrets;
    int nsecrets;
    sl_buf answer;            /* the text answers and end nodes streamed (ev_lock) */
    const sl_stream_plan *plan; /* the graph's, or NULL when nobody sees what answers show */
    unsigned long long rng;
    /* The run's sandbox, made by the first node that needs one (code,
     * command) and destroyed when the run ends, however it ends. */
    pthread_mutex_t sb_lock;
    sl_sandbox *sandbox;
    char *sandbox_error;
    /* The sandbox policy: sluice.yml's `sandbox` overlaid with the app's
     * `sluice.sandbox` (sizes and timeouts went into L). */
    sl_sandbox_policy policy;
    /* Files the run's nodes made (artifacts): the caller's opts.file_put,
     * or this private folder, made on first use and removed with the run. */
    char *files_dir;
    sl_value *made;           /* {id: true} of files this run stored (sb_lock) */
};

typedef struct sched sched;
struct sched {
    sl_run *run;
    int scope;                /* container node index, or -1 for the root graph */
    int depth;
    sl_pool *pool;
    unsigned char *edge;      /* estate per graph edge */
    int *unknown_in;          /* per node: incoming edges still unknown */
    unsigned char *taken_in;  /* per node: some incoming edge taken */
    unsigned char *status;    /* nstatus per node */
    int *queue;
    int qh, qt, qcap;
    int running, idle, threads, max_threads;
    pthread_t *tids;
    int steps;
    bool abort, done, broke;
    char *fail_msg, *fail_type;
    bool stopped;
    sl_stream *stream;        /* this graph's response coordinator, or NULL (mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct sl_node_exec {
    sched *s;
    const sl_gnode *n;
    double t_start;
    sl_value *inputs, *outputs, *process;
    char *handle;
    char *err_msg, *err_type;
    char exec_id[40];
    long long tokens;         /* model usage of this node (sl_exec_usage) */
    double price;
    char currency[8];
};

void *sl__worker_main(void *arg);

static long long wall_s(void)
{
    return (long long)time(NULL);
}

static unsigned long long rng_next(unsigned long long *s)
{
    /* splitmix64: ids only need to be unique, not secret */
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void make_uuid(sl_run *r, char out[40])
{
    pthread_mutex_lock(&r->ev_lock);
    unsigned long long a = rng_next(&r->rng), b = rng_next(&r->rng);
    pthread_mutex_unlock(&r->ev_lock);
    snprintf(out, 40, "%08llx-%04llx-4%03llx-%04llx-%012llx", a >> 32, (a >> 16) & 0xffff,
             a & 0xfff, ((b >> 48) & 0x3fff) | 0x8000, b & 0xffffffffffffULL);
}

/* ---- events ---- */

/* Steals data. */
static void emit(sl_run *r, const char *event, sl_value *data)
{
    if (!r->opts.on_event) {
        json_decref(data);
        return;
    }
    sl_value *m = sl_secret_mask_value(data);  /* every secret sluice knows */
    json_decref(data);
    data = m;
    pthread_mutex_lock(&r->ev_lock);
    r->opts.on_event(event, data, r->opts.event_ud);
    pthread_mutex_unlock(&r->ev_lock);
    json_decref(data);
}

/* ---- the node execution API ---- */

const sl_value *sl_exec_data(sl_node_exec *x) { return x->n->data; }
const void *sl_exec_state(sl_node_exec *x) { return x->n->state; }
const sl_gnode *sl_exec_node(sl_node_exec *x) { return x->n; }
const sl_graph *sl_exec_graph(sl_node_exec *x) { return x->s->run->g; }
const sl_limits *sl_exec_limits(sl_node_exec *x) { return &x->s->run->L; }
const sl_value *sl_exec_run_inputs(sl_node_exec *x) { return x->s->run->opts.inputs; }
const char *sl_exec_mode(sl_node_exec *x) { return x->s->run->g->mode; }

sl_value *sl_exec_get(sl_node_exec *x, const sl_value *selector)
{
    return sl_pool_get_sel(x->s->pool, selector);
}

static sl_value *resolve_ref(void *ud, const char *const *parts, int n)
{
    sl_node_exec *x = ud;
    return sl_pool_get(x->s->pool, parts, n);
}

int sl_exec_render(sl_node_exec *x, const char *text, sl_buf *out)
{
    return sl_ref_render(text, resolve_ref, x, out);
}

static void obj_set(sl_value **obj, const char *name, sl_value *v)
{
    if (!*obj)
        *obj = json_object();
    json_object_set_new(*obj, name, v ? v : json_null());
}

void sl_exec_input(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->inputs, name, v); }
void sl_exec_output(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->outputs, name, v); }
void sl_exec_process(sl_node_exec *x, const char *name, sl_value *v) { obj_set(&x->process, name, v); }

void sl_exec_handle(sl_node_exec *x, const char *handle)
{
    free(x->handle);
    x->handle = sl_xstrdup(handle);
}

int sl_exec_fail(sl_node_exec *x, const char *error_type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    free(x->err_msg);
    x->err_msg = sl_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    va_start(ap, fmt);
    vsnprintf(x->err_msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    va_end(ap);
    /* Messages quote program output, which need not be UTF-8; events and
     * JSON need it to be, so bad bytes become U+FFFD. */
    size_t len = strlen(x->err_msg);
    if (!sl_utf8_valid(x->err_msg, len)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_utf8_clean(x->err_msg, len, &b);
        free(x->err_msg);
        x->err_msg = sl_buf_detach(&b);
    }
    sl_secret_mask_inplace(&x->err_msg);
    free(x->err_type);
    x->err_type = sl_xstrdup(error_type ? error_type : "NodeError");
    return -1;
}

int sl_exec_assign(sl_node_exec *x, const sl_value *selector, sl_value *v)
{
    const char *node = json_string_value(json_array_get(selector, 0));
    const char *name = json_string_value(json_array_get(selector, 1));
    if (!node || !name || json_array_size(selector) != 2) {
        json_decref(v);
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "can only assign a whole variable [scope, name]");
    }
    const sl_graph *g = x->s->run->g;
    bool ok = strcmp(node, "conversation") == 0;
    if (!ok) {
        int t = sl_graph_find(g, node);
        ok = t >= 0 && strcmp(g->nodes[t].type, "loop") == 0;
    }
    if (!ok) {
        json_decref(v);
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "cannot assign '%s.%s': only conversation variables and the "
                            "variables of an enclosing loop can be assigned", node, name);
    }
    size_t cap = x->s->run->L.max_variable_bytes;
    if (cap && sl_value_size(v, cap) > cap) {
        json_decref(v);
        return sl_exec_fail(x, "VariableSizeExceeded",
                            "the new value of '%s.%s' is larger than max_variable_bytes (%zu "
                            "bytes, Dify's MAX_VARIABLE_SIZE); raise it with --limit "
                            "max_variable_bytes=N", node, name, cap);
    }
    if (sl_pool_assign(x->s->pool, node, name, v) < 0)
        return sl_exec_fail(x, "VariableOperatorNodeError",
                            "variable '%s.%s' is not available here", node, name);
    return 0;
}

bool sl_exec_streams(sl_node_exec *x, const char *var)
{
    return sl_stream_wants(x->s->stream, x->n->idx, var);
}

void sl_exec_stream_chunk(sl_node_exec *x, const char *var, const char *text, size_t len)
{
    sched *s = x->s;
    if (!sl_stream_wants(s->stream, x->n->idx, var)) /* the plan is read-only: no lock */
        return;
    pthread_mutex_lock(&s->mu);
    sl_stream_chunk(s->stream, x->n->idx, var, text, len);
    pthread_mutex_unlock(&s->mu);
}

void sl_exec_usage(sl_node_exec *x, long long tokens, double price, const char *currency)
{
    x->tokens += tokens;
    x->price += price;
    if (currency)
        snprintf(x->currency, sizeof x->currency, "%s", currency);
    atomic_fetch_add(&x->s->run->tokens, tokens);
}

const sl_value *sl_exec_history(sl_node_exec *x)
{
    return x->s->run->opts.history;
}

struct sl_llm_tape *sl_exec_llm_tape(sl_node_exec *x)
{
    return x->s->run->opts.llm_tape;
}

const struct sl_config *sl_exec_config(sl_node_exec *x)
{
    return x->s->run->opts.config;
}

/* Why the app's package install should end early. */
static sl_errcode install_over(void *ud)
{
    sl_run *r = ud;
    if (atomic_load(&r->cancel))
        return SL_ECANCELED;
    return sl_clock_s() - r->t0 >= r->L.max_time_s ? SL_ETIMEOUT : SL_OK;
}

sl_sandbox *sl_exec_sandbox(sl_node_exec *x, sl_err *err)
{
    sl_run *r = x->s->run;
    pthread_mutex_lock(&r->sb_lock);
    if (!r->sandbox && !r->sandbox_error) {
        const struct sl_limits *L = &r->L;
        sl_sandbox_opts o;
        sl_sandbox_opts_init(&o);
        o.provider = r->policy.provider;
        o.net = r->policy.net;
        o.net_allow = r->policy.net_allow;
        o.memory_bytes = L->sandbox_memory_bytes;
        o.max_procs = L->sandbox_max_procs;
        o.cpu_cores = L->sandbox_cpu_cores;
        o.disk_bytes = L->sandbox_disk_bytes;
        o.cpu_seconds = L->sandbox_cpu_seconds;
        o.max_open_files = L->sandbox_open_files;
        o.max_file_bytes = L->sandbox_file_bytes;
        o.settings = r->policy.settings;
        /* The app's skills, read-only, at skills/ in the workspace. */
        sl_sandbox_bind bind;
        char *skills = r->g->app_dir ? sl_xasprintf("%s/skills", r->g->app_dir) : NULL;
        struct stat st;
        if (skills && !stat(skills, &st) && S_ISDIR(st.st_mode)) {
            bind.host = skills;
            bind.target = "skills";
            o.binds = &bind;
            o.n_binds = 1;
        }
        sl_err e = {0};
        if (sl_sandbox_create(&o, &r->sandbox, &e)) {
            /* remembered, so parallel nodes do not each retry a broken set-up */
            r->sandbox_error = sl_xstrdup(e.msg ? e.msg : "the sandbox could not be made");
            sl_err_clear(&e);
        } else if (sl_sandbox_policy_install(&r->policy, r->sandbox, install_over, r,
                                             r->L.max_time_s, &e)) {
            r->sandbox_error = sl_xstrdup(e.msg);
            sl_err_clear(&e);
            sl_sandbox_destroy(r->sandbox);
            r->sandbox = NULL;
        }
        free(skills);
    }
    sl_sandbox *sb = r->sandbox;
    if (!sb)
        sl_err_set(err, SL_EUNSUPPORTED, "%s", r->sandbox_error);
    pthread_mutex_unlock(&r->sb_lock);
    return sb;
}

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
        char tmpl[] = "/tmp/sluice-files-XXXXXX";
        if (mkdtemp(tmpl))
            r->files_dir = sl_xstrdup(tmpl);
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
    if (sl_file_id_new(id) < 0) {
        sl_err_set(err, SL_EIO, "no randomness for a file id: %s", strerror(errno));
        return NULL;
    }
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
    sl_value *f = json_pack("{s:s,s:s,s:s,s:s,s:n,s:s,s:s,s:s,s:s,s:I,s:s}",
                            "dify_model_identity", "__dify__file__", "id", id, "type",
                            sl_file_kind(ext, mime), "transfer_method", "tool_file", "remote_url",
                            "related_id", id, "filename", name, "extension", lower, "mime_type",
                            mime, "size", (json_int_t)len, "sha256", sha);
    if (r->opts.files_url) {
        char url[512];
        snprintf(url, sizeof url, r->opts.files_url, id);
        json_object_set_new(f, "url", json_string(url));
    }
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
static void files_cleanup(sl_run *r)
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

bool sl_exec_cancelled(sl_node_exec *x)
{
    return atomic_load(&x->s->run->cancel) != 0 || sl_exec_time_left(x) <= 0;
}

double sl_exec_elapsed(sl_node_exec *x)
{
    return sl_clock_s() - x->t_start;
}

double sl_exec_time_left(sl_node_exec *x)
{
    sl_run *r = x->s->run;
    double left = r->L.max_time_s - (sl_clock_s() - r->t0);
    return left > 0 ? left : 0;
}

int sl_exec_interrupted(sl_node_exec *x, sl_err *err)
{
    if (atomic_load(&x->s->run->cancel))
        return sl_err_set(err, SL_ECANCELED, "the run was stopped");
    if (sl_exec_time_left(x) <= 0)
        return sl_err_set(err, SL_ETIMEOUT, "the run took longer than max_time_s (%g s); raise "
                          "it with --limit max_time_s=N", x->s->run->L.max_time_s);
    return 0;
}

void sl_exec_event(sl_node_exec *x, const char *event, sl_value *data)
{
    sl_run *r = x->s->run;
    if (!r->opts.on_event) {
        json_decref(data);
        return;
    }
    if (!json_is_object(data)) {
        json_decref(data);
        data = json_object();
    }
    json_object_set_new(data, "node_id", json_string(x->n->id));
    json_object_set_new(data, "node_type", json_string(x->n->type));
    json_object_set_new(data, "title", json_string(x->n->title));
    if (json_object_get(data, "id"))  /* its own id (agent_log): say whose it is */
        json_object_set_new(data, "node_execution_id", json_string(x->exec_id));
    else
        json_object_set_new(data, "id", json_string(x->exec_id));
    if (!json_object_get(data, "created_at"))
        json_object_set_new(data, "created_at", json_integer(wall_s()));
    emit(r, event, data);
}

/* ---- scheduling ---- */

/* The response coordinator's view of a graph engine (called with s->mu
 * held): text goes out as text_chunk events and makes the chat answer,
 * also what answers inside iterations and loops stream, as in Dify. */
static void stream_emit(void *ud, const char *const *sel, int n, const char *text, size_t len)
{
    sched *s = ud;
    sl_run *r = s->run;
    pthread_mutex_lock(&r->ev_lock);
    sl_buf_add(&r->answer, text, len);
    pthread_mutex_unlock(&r->ev_lock);
    if (!r->opts.on_event)
        return;
    sl_value *from = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(from, json_string(sel[i]));
    sl_value *d = json_object();
    json_object_set_new(d, "text", json_stringn(text, len));
    json_object_set_new(d, "from_variable_selector", from);
    emit(r, "text_chunk", d);
}

static sl_value *stream_get(void *ud, const char *const *sel, int n)
{
    return sl_pool_get(((sched *)ud)->pool, sel, n);
}

static bool stream_skipped(void *ud, int node)
{
    return ((sched *)ud)->status[node] == NS_SKIPPED;
}

static void sched_init(sched *s, sl_run *r, int scope, int depth, sl_pool *pool, int threads)
{
    const sl_graph *g = r->g;
    memset(s, 0, sizeof *s);
    s->run = r;
    s->scope = scope;
    s->depth = depth;
    s->pool = pool;
    s->edge = sl_xcalloc((size_t)g->nedges + 1, 1);
    s->unknown_in = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *s->unknown_in);
    s->taken_in = sl_xcalloc((size_t)g->nnodes + 1, 1);
    s->status = sl_xcalloc((size_t)g->nnodes + 1, 1);
    for (int i = 0; i < g->nnodes; i++)
        s->unknown_in[i] = g->nodes[i].nin;
    s->qcap = 64;
    s->queue = sl_xmalloc((size_t)s->qcap * sizeof *s->queue);
    s->max_threads = threads > 1 ? threads - 1 : 0;
    s->tids = s->max_threads ? sl_xcalloc((size_t)s->max_threads, sizeof *s->tids) : NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    sl_stream_io io = {stream_emit, stream_get, stream_skipped, s};
    s->stream = sl_stream_new(r->plan, scope, scope < 0 ? g->start : g->nodes[scope].inner_start,
                              &io);
}

static void sched_release(sched *s)
{
    free(s->edge);
    free(s->unknown_in);
    free(s->taken_in);
    free(s->status);
    free(s->queue);
    free(s->tids);
    free(s->fail_msg);
    free(s->fail_type);
    sl_stream_free(s->stream);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

static void push(sched *s, int node)
{
    int len = s->qt - s->qh;
    if (s->qt == s->qcap) {
        if (s->qh > 0) {
            memmove(s->queue, s->queue + s->qh, (size_t)len * sizeof *s->queue);
            s->qh = 0;
            s->qt = len;
        }
        if (s->qt == s->qcap) {
            s->qcap *= 2;
            s->queue = sl_xrealloc(s->queue, (size_t)s->qcap * sizeof *s->queue);
        }
    }
    s->queue[s->qt++] = node;
}

/* Marks a node skipped and spreads the skip to everything that now has
 * only skipped inputs.  Iterative, so long skipped chains cannot overflow
 * the stack.  Called with s->mu held. */
static void skip_from(sched *s, int node, int *stack)
{
    const sl_graph *g = s->run->g;
    int sp = 0;
    stack[sp++] = node;
    while (sp) {
        int v = stack[--sp];
        s->status[v] = NS_SKIPPED;
        const sl_gnode *n = &g->nodes[v];
        for (int k = 0; k < n->nout; k++) {
            int e = n->out[k];
            s->edge[e] = E_SKIPPED;
            int d = g->edges[e].dst;
            if (--s->unknown_in[d] == 0) {
                if (s->taken_in[d])
                    push(s, d);
                else
                    stack[sp++] = d;
            }
        }
    }
}

static bool handle_matches(const char *edge_handle, const char *chosen, bool fail_branch_node)
{
    if (strcmp(edge_handle, chosen) == 0)
        return true;
    /* Nodes with a fail branch label their normal path "success-branch" in
     * some exports and "source" in others. */
    if (fail_branch_node && strcmp(chosen, "source") == 0 &&
        strcmp(edge_handle, "success-branch") == 0)
        return true;
    return false;
}

/* Called with s->mu held after node v finished with `handle` chosen. */
static int complete(sched *s, int v, const char *handle, bool fail_branch_node)
{
    const sl_graph *g = s->run->g;
    const sl_gnode *n = &g->nodes[v];
    int before = s->qt - s->qh;
    int *stack = NULL;
    for (int k = 0; k < n->nout; k++) {
        int e = n->out[k];
        bool take = handle_matches(g->edges[e].handle, handle, fail_branch_node);
        s->edge[e] = take ? E_TAKEN : E_SKIPPED;
        int d = g->edges[e].dst;
        if (take)
            s->taken_in[d] = 1;
        if (--s->unknown_in[d] == 0) {
            if (s->taken_in[d]) {
                push(s, d);
            } else {
                if (!stack)
                    stack = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *stack);
                skip_from(s, d, stack);
            }
        }
    }
    free(stack);
    return s->qt - s->qh - before;
}

static void fail_sched(sched *s, const char *type, const char *msg)
{
    if (!s->abort) {
        s->abort = true;
        free(s->fail_msg);
        free(s->fail_type);
        s->fail_msg = sl_xstrdup(msg);
        s->fail_type = sl_xstrdup(type);
    }
}

static sl_value *default_values(const sl_gnode *n)
{
    sl_value *o = json_object();
    const sl_value *dv = json_object_get(n->data, "default_value");
    for (size_t i = 0; i < json_array_size(dv); i++) {
        const sl_value *e = json_array_get(dv, i);
        const char *k = json_string_value(json_object_get(e, "key"));
        const sl_value *val = json_object_get(e, "value");
        const char *t = json_string_value(json_object_get(e, "type"));
        if (!k)
            continue;
        /* Dify stores number/object defaults as typed values but some
         * exports carry them as text; convert by the declared type. */
        if (t && json_is_string(val) && strcmp(t, "number") == 0) {
            sl_value *num = sl_value_number_from_text(json_string_value(val));
            json_object_set_new(o, k, num ? num : json_incref((sl_value *)val));
        } else if (t && json_is_string(val) && (strncmp(t, "object", 6) == 0 ||
                                               strncmp(t, "array", 5) == 0)) {
            json_error_t je;
            sl_value *pv = json_loads(json_string_value(val), JSON_DECODE_ANY, &je);
            json_object_set_new(o, k, pv ? pv : json_incref((sl_value *)val));
        } else {
            json_object_set(o, k, val ? (sl_value *)val : json_null());
        }
    }
    return o;
}

/* Sleeps secs, or less: a stop or the run's deadline ends it. */
static void sleep_interruptible(sl_run *r, double secs)
{
    double end = sl_clock_s() + secs, deadline = r->t0 + r->L.max_time_s;
    if (end > deadline)
        end = deadline;
    while (!atomic_load(&r->cancel)) {
        double left = end - sl_clock_s();
        if (left <= 0)
            break;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void check_output_sizes(sl_node_exec *x)
{
    size_t cap = x->s->run->L.max_output_bytes;
    const char *k;
    sl_value *v;
    if (!cap || !x->outputs)
        return;
    json_object_foreach(x->outputs, k, v) {
        size_t sz = sl_value_size(v, cap);
        if (sz > cap) {
            sl_exec_fail(x, "OutputSizeExceeded",
                         "output '%s' is larger than max_output_bytes (%zu bytes); raise it "
                         "with --limit max_output_bytes=N or make the output smaller",
                         k, cap);
            return;
        }
    }
}

static sl_value *node_event_base(sl_node_exec *x, int index, const char *pred)
{
    sl_value *d = json_object();
    json_object_set_new(d, "id", json_string(x->exec_id));
    json_object_set_new(d, "node_id", json_string(x->n->id));
    json_object_set_new(d, "node_type", json_string(x->n->type));
    json_object_set_new(d, "title", json_string(x->n->title));
    json_object_set_new(d, "index", json_integer(index));
    json_object_set_new(d, "predecessor_node_id", pred ? json_string(pred) : json_null());
    if (x->n->parent >= 0) {
        const sl_gnode *p = &x->s->run->g->nodes[x->n->parent];
        json_object_set_new(d, strcmp(p->type, "loop") == 0 ? "loop_id" : "iteration_id",
                            json_string(p->id));
    }
    return d;
}

static const char *predecessor(sched *s, const sl_gnode *n)
{
    const sl_graph *g = s->run->g;
    for (int k = 0; k < n->nin; k++)
        if (s->edge[n->in[k]] == E_TAKEN)
            return g->nodes[g->edges[n->in[k]].src].id;
    return NULL;
}

/* Runs one node with retries and its error strategy, then (under the lock)
 * releases its successors. */
static void exec_node(sched *s, int v)
{
    sl_run *r = s->run;
    const sl_gnode *n = &r->g->nodes[v];
    sl_node_exec x = {.s = s, .n = n};
    bool ev = r->opts.on_event != NULL;
    bool fail_branch = n->on_error == SL_ON_ERROR_BRANCH;
    bool default_value = n->on_error == SL_ON_ERROR_DEFAULT;
    int index = atomic_fetch_add(&r->event_index, 1) + 1;
    double t_start = sl_clock_s();
    x.t_start = t_start;
    long long created = wall_s();
    const char *pred = NULL;
    if (ev) {
        make_uuid(r, x.exec_id);
        pthread_mutex_lock(&s->mu);
        pred = predecessor(s, n);
        pthread_mutex_unlock(&s->mu);
        sl_value *d = node_event_base(&x, index, pred);
        json_object_set_new(d, "inputs", json_null());
        json_object_set_new(d, "created_at", json_integer(created));
        emit(r, "node_started", d);
    }

    int max_retries = n->max_retries, interval_ms = n->retry_interval_ms;
    int ok = -1;
    for (int attempt = 0;; attempt++) {
        if (atomic_load(&r->cancel)) {
            sl_exec_fail(&x, "Stopped", "the run was stopped");
            break;
        }
        ok = n->kind->run(&x);
        if (ok == 0) {
            check_output_sizes(&x);
            ok = x.err_msg ? -1 : 0;
        }
        if (ok == 0 || attempt >= max_retries || atomic_load(&r->cancel) ||
            sl_exec_time_left(&x) <= 0)
            break;
        if (ev) {
            sl_value *d = node_event_base(&x, index, pred);
            json_object_set_new(d, "error", json_string(x.err_msg ? x.err_msg : ""));
            json_object_set_new(d, "retry_index", json_integer(attempt + 1));
            json_object_set_new(d, "inputs", x.inputs ? json_incref(x.inputs) : json_null());
            json_object_set_new(d, "created_at", json_integer(created));
            emit(r, "node_retry", d);
        }
        json_decref(x.outputs);
        json_decref(x.inputs);
        json_decref(x.process);
        x.outputs = x.inputs = x.process = NULL;
        free(x.handle);
        free(x.err_msg);
        free(x.err_type);
        x.handle = x.err_msg = x.err_type = NULL;
        sleep_interruptible(r, interval_ms / 1000.0);
        if (sl_exec_time_left(&x) <= 0) {
            sl_exec_fail(&x, "WorkflowTimeout", "the run took longer than max_time_s (%g s) "
                         "before retry %d; raise it with --limit max_time_s=N",
                         r->L.max_time_s, attempt + 1);
            break;
        }
    }

    nstatus st;
    const char *handle = x.handle ? x.handle : "source";
    bool stopped = atomic_load(&r->cancel) != 0;
    if (ok == 0) {
        st = NS_SUCCEEDED;
    } else if (!stopped && (fail_branch || default_value)) {
        st = NS_EXCEPTION;
        atomic_fetch_add(&r->exceptions, 1);
        sl_value *outs = default_value ? default_values(n) : json_object();
        json_object_set_new(outs, "error_message", json_string(x.err_msg ? x.err_msg : ""));
        json_object_set_new(outs, "error_type", json_string(x.err_type ? x.err_type : ""));
        json_decref(x.outputs);
        x.outputs = outs;
        handle = fail_branch ? "fail-branch" : "source";
    } else {
        st = NS_FAILED;
    }
    if (st != NS_FAILED) {
        if (!x.outputs)
            x.outputs = json_object();
        sl_pool_set_node(s->pool, n->id, json_incref(x.outputs));
        if (strcmp(n->type, "end") == 0 && s->scope < 0) {
            pthread_mutex_lock(&r->ev_lock);
            json_object_update(r->outputs, x.outputs);
            pthread_mutex_unlock(&r->ev_lock);
        }
    }
    sl_value *finished = NULL;
    if (ev) {
        sl_value *d = finished = node_event_base(&x, index, pred);
        json_object_set_new(d, "inputs", x.inputs ? json_incref(x.inputs) : json_null());
        json_object_set_new(d, "process_data", x.process ? json_incref(x.process) : json_null());
        json_object_set_new(d, "outputs", x.outputs ? json_incref(x.outputs) : json_null());
        json_object_set_new(d, "status", json_string(st == NS_FAILED && stopped ? "stopped"
                                                     : nstatus_name[st]));
        json_object_set_new(d, "error", x.err_msg ? json_string(x.err_msg) : json_null());
        json_object_set_new(d, "error_type", x.err_type ? json_string(x.err_type) : json_null());
        json_object_set_new(d, "elapsed_time", json_real(sl_clock_s() - t_start));
        sl_value *meta = json_object();
        json_object_set_new(meta, "total_tokens", json_integer(x.tokens));
        json_object_set_new(meta, "total_price", x.price > 0 ? json_real(x.price) : json_integer(0));
        json_object_set_new(meta, "currency", json_string(x.currency[0] ? x.currency : "USD"));
        json_object_set_new(d, "execution_metadata", meta);
        json_object_set_new(d, "created_at", json_integer(created));
        json_object_set_new(d, "finished_at", json_integer(wall_s()));
    }

    /* node_finished goes out under the lock, after the text this node
     * releases (an answer's path decided, an LLM's stream complete) and
     * before any successor starts, in the order Dify's engine gives. */
    pthread_mutex_lock(&s->mu);
    s->status[v] = (unsigned char)st;
    if (st == NS_FAILED) {
        if (stopped)
            s->stopped = true;
        /* A long message (a traceback) keeps its start and its end, where
         * the exception is; the node_finished event has it whole. */
        const char *em = x.err_msg ? x.err_msg : "unknown error";
        size_t el = strlen(em);
        char *msg = el <= 3000 ? sl_xasprintf("node '%s' (%s) failed: %s", n->id, n->title, em)
                               : sl_xasprintf("node '%s' (%s) failed: %.800s\n[…]\n%s", n->id,
                                              n->title, em, em + el - 2000);
        fail_sched(s, x.err_type ? x.err_type : "NodeError", stopped ? "the run was stopped" : msg);
        free(msg);
    } else {
        if (strcmp(n->type, "loop-end") == 0)
            s->broke = true;
        int added = complete(s, v, handle, fail_branch);
        if (s->stream) {
            sl_stream_done(s->stream, v);
            for (int k = 0; k < n->nout; k++)
                if (s->edge[n->out[k]] == E_TAKEN)
                    sl_stream_taken(s->stream, n->out[k]);
        }
        if (added > 1) {
            /* More work than this worker can take: wake idle workers and
             * start threads up to the pool size. */
            int spare = added - 1;
            if (s->idle > 0)
                pthread_cond_broadcast(&s->cv);
            spare -= s->idle;
            while (spare-- > 0 && s->threads < s->max_threads) {
                if (pthread_create(&s->tids[s->threads], NULL, sl__worker_main, s) == 0)
                    s->threads++;
                else
                    break;
            }
        }
    }
    if (finished) /* workers woken above wait for the lock; freed after it */
        emit(r, "node_finished", json_incref(finished));
    pthread_mutex_unlock(&s->mu);
    json_decref(finished);

    json_decref(x.inputs);
    json_decref(x.outputs);
    json_decref(x.process);
    free(x.handle);
    free(x.err_msg);
    free(x.err_type);
}

static void worker_loop(sched *s)
{
    sl_run *r = s->run;
    pthread_mutex_lock(&s->mu);
    while (!s->done) {
        if (!s->abort && atomic_load(&r->cancel)) {
            s->stopped = true;
            fail_sched(s, "Stopped", "the run was stopped");
        }
        if (!s->abort && r->L.max_time_s > 0 && sl_clock_s() - r->t0 > r->L.max_time_s) {
            char msg[256];
            snprintf(msg, sizeof msg, "the run took longer than max_time_s (%g s); raise it "
                     "with --limit max_time_s=N", r->L.max_time_s);
            fail_sched(s, "WorkflowTimeout", msg);
        }
        if (s->qh != s->qt && !s->abort) {
            int v = s->queue[s->qh++];
            if (++s->steps > r->L.max_steps) {
                char msg[256];
                snprintf(msg, sizeof msg, "the workflow ran more than max_steps (%d) nodes; "
                         "raise it with --limit max_steps=N", r->L.max_steps);
                fail_sched(s, "MaxStepsExceeded", msg);
                continue;
            }
            s->status[v] = NS_RUNNING;
            s->running++;
            pthread_mutex_unlock(&s->mu);
            exec_node(s, v);
            pthread_mutex_lock(&s->mu);
            s->running--;
            continue;
        }
        if (s->running == 0) {
            s->done = true;
            pthread_cond_broadcast(&s->cv);
            break;
        }
        s->idle++;
        pthread_cond_wait(&s->cv, &s->mu);
        s->idle--;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void *sl__worker_main(void *arg)
{
    worker_loop(arg);
    return NULL;
}

static void sched_run(sched *s, int start)
{
    pthread_mutex_lock(&s->mu);
    if (s->stream)
        sl_stream_begin(s->stream);
    push(s, start);
    pthread_mutex_unlock(&s->mu);
    worker_loop(s);
    for (int i = 0; i < s->threads; i++)
        pthread_join(s->tids[i], NULL);
    /* A graph that ran to its end sends what its answers still hold (a
     * reference to a variable that never came); a failed or stopped one
     * sends nothing more. */
    if (s->stream && !s->abort) {
        pthread_mutex_lock(&s->mu);
        sl_stream_finish(s->stream);
        pthread_mutex_unlock(&s->mu);
    }
}

/* ---- containers ---- */

int sl_exec_round(sl_node_exec *x, sl_round *rd)
{
    sl_run *r = x->s->run;
    const sl_gnode *n = x->n;
    rd->result = NULL;
    rd->scope_after = NULL;
    rd->broke = false;
    rd->err = (sl_err){0};
    if (x->s->depth + 1 > r->L.max_depth) {
        json_decref(rd->scope_vars);
        rd->scope_vars = NULL;
        sl_err_limit(&rd->err, SL_ELIMIT, "max_depth", "containers nested deeper than max_depth "
                     "(%d); raise it with --limit max_depth=N", r->L.max_depth);
        sl_err_set_type(&rd->err, "DepthLimitExceeded");
        return -1;
    }
    sl_pool *layer = sl_pool_new(x->s->pool);
    if (rd->scope_vars)
        sl_pool_set_node(layer, n->id, rd->scope_vars);
    rd->scope_vars = NULL;
    sched sub;
    sched_init(&sub, r, n->idx, x->s->depth + 1, layer, 1);
    sched_run(&sub, n->inner_start);
    int rc = 0;
    if (sub.abort) {
        rc = sl_err_typed(&rd->err, SL_ENODE, sub.fail_type ? sub.fail_type : "NodeError", "%s",
                          sub.fail_msg ? sub.fail_msg : "a node inside failed");
    }
    if (rd->collect)
        rd->result = sl_pool_get_sel(layer, rd->collect);
    rd->scope_after = sl_pool_node(layer, n->id);
    rd->broke = sub.broke;
    /* Child steps count against the child engine's own max_steps, as in Dify. */
    sched_release(&sub);
    sl_pool_free(layer);
    return rc;
}

/* ---- runs ---- */

void sl_run_opts_init(sl_run_opts *o)
{
    memset(o, 0, sizeof *o);
    sl_limits_default(&o->limits);
}

const char *sl_run_status_name(sl_run_status s)
{
    switch (s) {
    case SL_RUN_RUNNING: return "running";
    case SL_RUN_SUCCEEDED: return "succeeded";
    case SL_RUN_FAILED: return "failed";
    case SL_RUN_STOPPED: return "stopped";
    case SL_RUN_PARTIAL: return "partial-succeeded";
    }
    return "unknown";
}

/* Converts a declared variable's value (env/conversation) to its type. */
static sl_value *typed_value(const sl_value *decl, const sl_value *given)
{
    const char *t = json_string_value(json_object_get(decl, "value_type"));
    const sl_value *v = given ? given : json_object_get(decl, "value");
    if (!v)
        v = json_null();
    if (t && strcmp(t, "number") == 0 && json_is_string(v)) {
        sl_value *num = sl_value_number_from_text(json_string_value(v));
        if (num)
            return num;
    }
    if (t && (strcmp(t, "object") == 0 || strncmp(t, "array", 5) == 0) && json_is_string(v)) {
        json_error_t je;
        sl_value *pv = json_loads(json_string_value(v), JSON_DECODE_ANY, &je);
        if (pv)
            return pv;
    }
    if (t && strcmp(t, "string") == 0 && !json_is_string(v) && !json_is_null(v)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_value_text(v, &b);
        sl_value *s = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return s ? s : json_string("");
    }
    return json_incref((sl_value *)v);
}

/* The run's sandbox policy (sandbox/policy.h): sluice.yml's, the app's,
 * then the caller's overrides; its sizes and times go into L. */
static void policy_init(sl_run *r)
{
    const sl_value *cfg = sl_config_sandbox(r->opts.config);
    sl_sandbox_policy *p = &r->policy;
    sl_sandbox_policy_init(p, r->g->sandboxed);
    p->memory_bytes = r->L.sandbox_memory_bytes;
    p->disk_bytes = r->L.sandbox_disk_bytes;
    p->cpu_cores = r->L.sandbox_cpu_cores;
    p->max_procs = r->L.sandbox_max_procs;
    p->command_timeout_s = r->L.command_timeout_s;
    sl_sandbox_policy_layer(p, cfg);
    sl_sandbox_policy_layer(p, r->g->sandbox);
    if (r->opts.sandbox_provider)
        snprintf(p->provider, sizeof p->provider, "%s", r->opts.sandbox_provider);
    if (r->opts.net_given)
        sl_sandbox_policy_net(p, r->opts.net, r->opts.net_allow);
    sl_sandbox_policy_settings(p, cfg, r->g->sandbox);
    r->L.sandbox_memory_bytes = p->memory_bytes;
    r->L.sandbox_disk_bytes = p->disk_bytes;
    r->L.sandbox_cpu_cores = p->cpu_cores;
    r->L.sandbox_max_procs = p->max_procs;
    r->L.command_timeout_s = p->command_timeout_s;
}

sl_run *sl_run_new(const sl_graph *g, const sl_run_opts *opts)
{
    sl_run *r = sl_xcalloc(1, sizeof *r);
    r->g = g;
    r->opts = *opts;
    r->L = opts->limits;
    if (r->L.workers < 1)
        r->L.workers = 1;
    policy_init(r);
    r->pool = sl_pool_new(NULL);
    sl_pool_reserve(r->pool, (size_t)g->nnodes + 3);
    r->outputs = json_object();
    pthread_mutex_init(&r->ev_lock, NULL);
    pthread_mutex_init(&r->sb_lock, NULL);
    r->made = json_object();
    /* Workflows show their answers only in events; a chat's make its answer. */
    if (opts->on_event || !strcmp(g->mode, "advanced-chat"))
        r->plan = g->stream_plan;
    sl_buf_init(&r->answer, r->L.max_string_bytes ? r->L.max_string_bytes * 4 : 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->rng = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
             ((unsigned long long)(uintptr_t)r << 7) ^ (unsigned long long)getpid();
    if (opts->run_id && *opts->run_id)
        snprintf(r->id, sizeof r->id, "%s", opts->run_id);
    else
        make_uuid(r, r->id);

    /* env.* and conversation.* */
    sl_value *env = json_object();
    for (size_t i = 0; i < json_array_size(g->env_vars); i++) {
        const sl_value *d = json_array_get(g->env_vars, i);
        const char *name = json_string_value(json_object_get(d, "name"));
        if (!name)
            continue;
        const sl_value *given = json_object_get(opts->env_override, name);
        sl_value *v = typed_value(d, given);
        const char *t = json_string_value(json_object_get(d, "value_type"));
        if (t && strcmp(t, "secret") == 0 && json_is_string(v) && json_string_length(v) >= 4) {
            sl_run_secret(r, json_string_value(v));
        }
        json_object_set_new(env, name, v);
    }
    sl_pool_set_node(r->pool, "env", env);
    sl_value *conv = json_object();
    for (size_t i = 0; i < json_array_size(g->conv_vars); i++) {
        const sl_value *d = json_array_get(g->conv_vars, i);
        const char *name = json_string_value(json_object_get(d, "name"));
        if (name)
            json_object_set_new(conv, name,
                                typed_value(d, json_object_get(opts->conversation, name)));
    }
    sl_pool_set_node(r->pool, "conversation", conv);
    return r;
}

static void set_sys(sl_run *r)
{
    const sl_run_opts *o = &r->opts;
    sl_value *sys = json_object();
    json_object_set_new(sys, "query", json_string(o->query ? o->query : ""));
    json_object_set_new(sys, "files", json_array());
    json_object_set_new(sys, "user_id", json_string(o->user_id ? o->user_id : "sluice-cli"));
    json_object_set_new(sys, "conversation_id",
                        json_string(o->conversation_id ? o->conversation_id : ""));
    json_object_set_new(sys, "dialogue_count", json_integer(1));
    json_object_set_new(sys, "app_id", json_string(""));
    json_object_set_new(sys, "workflow_id", json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
    json_object_set_new(sys, "workflow_run_id", json_string(r->id));
    json_object_set_new(sys, "timestamp", json_integer(wall_s()));
    if (!strcmp(r->g->mode, "workflow"))
        json_object_del(sys, "query");
    sl_pool_set_node(r->pool, "sys", sys);
}

int sl_run_exec(sl_run *r, sl_err *err)
{
    (void)err;
    r->t0 = sl_clock_s();
    long long created = wall_s();
    r->created_at = created;
    set_sys(r);
    r->status = SL_RUN_RUNNING;
    if (r->opts.on_event) {
        sl_value *d = json_object();
        json_object_set_new(d, "id", json_string(r->id));
        json_object_set_new(d, "workflow_id",
                            json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
        json_object_set_new(d, "inputs", r->opts.inputs ? json_incref(r->opts.inputs)
                                                        : json_object());
        json_object_set_new(d, "created_at", json_integer(created));
        emit(r, "workflow_started", d);
    }
    sched s;
    sched_init(&s, r, -1, 0, r->pool, r->L.workers);
    sched_run(&s, r->g->start);
    r->steps = s.steps;
    if (s.stopped || atomic_load(&r->cancel)) {
        r->status = SL_RUN_STOPPED;
        r->error = sl_xstrdup("the run was stopped");
    } else if (s.abort) {
        r->status = SL_RUN_FAILED;
        r->error = sl_xstrdup(s.fail_msg ? s.fail_msg : "failed");
    } else {
        r->status = atomic_load(&r->exceptions) ? SL_RUN_PARTIAL : SL_RUN_SUCCEEDED;
    }
    sched_release(&s);
    pthread_mutex_lock(&r->sb_lock);
    sl_sandbox_destroy(r->sandbox);
    r->sandbox = NULL;
    pthread_mutex_unlock(&r->sb_lock);
    if (!strcmp(r->g->mode, "advanced-chat"))
        json_object_set_new(r->outputs, "answer",
                            json_stringn(r->answer.data ? r->answer.data : "", r->answer.len));
    r->conversation = sl_pool_node(r->pool, "conversation");
    /* What the run shows from here on (results, stored runs, the CLI)
     * carries no secret sluice knows. */
    sl_secret_mask_inplace(&r->error);
    sl_value *shown = sl_secret_mask_value(r->outputs);
    json_decref(r->outputs);
    r->outputs = shown;
    r->t1 = sl_clock_s();
    r->finished_at = wall_s();
    if (r->opts.on_event) {
        sl_value *d = json_object();
        json_object_set_new(d, "id", json_string(r->id));
        json_object_set_new(d, "workflow_id",
                            json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
        json_object_set_new(d, "status", json_string(sl_run_status_name(r->status)));
        json_object_set_new(d, "outputs", json_incref(r->outputs));
        json_object_set_new(d, "error", r->error ? json_string(r->error) : json_null());
        json_object_set_new(d, "elapsed_time", json_real(r->t1 - r->t0));
        json_object_set_new(d, "total_tokens", json_integer(atomic_load(&r->tokens)));
        json_object_set_new(d, "total_steps", json_integer(r->steps));
        json_object_set_new(d, "exceptions_count", json_integer(atomic_load(&r->exceptions)));
        json_object_set_new(d, "created_at", json_integer(created));
        json_object_set_new(d, "finished_at", json_integer(r->finished_at));
        emit(r, "workflow_finished", d);
    }
    return 0;
}

void sl_run_cancel(sl_run *r)
{
    atomic_store(&r->cancel, 1);
}

void sl_run_free(sl_run *r)
{
    if (!r)
        return;
    sl_pool_free(r->pool);
    json_decref(r->outputs);
    json_decref(r->conversation);
    free(r->error);
    for (int i = 0; i < r->nsecrets; i++) {
        sl_secret_remove(r->secrets[i]);
        memset(r->secrets[i], 0, strlen(r->secrets[i]));
        free(r->secrets[i]);
    }
    free(r->secrets);
    sl_buf_release(&r->answer);
    pthread_mutex_destroy(&r->ev_lock);
    sl_sandbox_destroy(r->sandbox);
    free(r->sandbox_error);
    sl_sandbox_policy_release(&r->policy);
    files_cleanup(r);
    free(r->files_dir);
    json_decref(r->made);
    pthread_mutex_destroy(&r->sb_lock);
    free(r);
}

sl_value *sl_run_mask(sl_run *r, const sl_value *v)
{
    (void)r;
    return sl_secret_mask_value((sl_value *)v);
}

void sl_run_secret(sl_run *r, const char *s)
{
    if (!s || strlen(s) < SL_SECRET_MIN)
        return;
    pthread_mutex_lock(&r->sb_lock);
    r->secrets = sl_xrealloc(r->secrets, (size_t)(r->nsecrets + 1) * sizeof *r->secrets);
    r->secrets[r->nsecrets++] = sl_xstrdup(s);
    sl_secret_add(s);
    pthread_mutex_unlock(&r->sb_lock);
}

void sl_exec_secret(sl_node_exec *x, const char *s)
{
    sl_run_secret(x->s->run, s);
}

sl_run_status sl_run_status_of(const sl_run *r) { return r->status; }
const sl_value *sl_run_outputs(const sl_run *r) { return r->outputs; }
const char *sl_run_error(const sl_run *r) { return r->error; }
int sl_run_steps(const sl_run *r) { return r->steps; }
double sl_run_elapsed(const sl_run *r) { return r->t1 - r->t0; }
const char *sl_run_id(const sl_run *r) { return r->id; }
long long sl_run_tokens(const sl_run *r) { return atomic_load(&r->tokens); }
long long sl_run_created_at(const sl_run *r) { return r->created_at; }
long long sl_run_finished_at(const sl_run *r) { return r->finished_at; }
const sl_value *sl_run_conversation(const sl_run *r) { return r->conversation; }
