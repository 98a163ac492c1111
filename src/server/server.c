/*
 * server — see server.h.
 */
#include "server/server.h"
#include "tools/binding.h"
#include "server/apps.h"
#include "server/console.h"
#include "server/datasets.h"
#include "server/mhd.h"
#include "server/workers.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/file.h"
#include "core/map.h"
#include "core/mime.h"
#include "core/rand.h"
#include "core/sha256.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "knowledge/kb.h"

/* ---- apps, loaded once ---- */

typedef struct app {
    sl_graph g;
    int version;              /* the app version this graph is */
    struct app *retired;      /* next on S.retired: replaced while runs may use it */
    atomic_int running;
    pthread_mutex_t rate_mu;  /* a token bucket for --rate-limit */
    double tokens, last;
    /* --max-runs on a shared store: the store's count of the app's runs
     * going, read at most every GOING_TTL_S, and the runs this server
     * started since (rate_mu) */
    long long going;
    double going_at;
    long long started_since;
} app;

#define GOING_TTL_S 0.05

/* ---- runs in flight (for stop and for streaming readers) ---- */

struct reader;

typedef struct live {
    char id[40], task_id[40], app_id[40], message_id[40], conversation_id[40];
    bool chat;
    sl_run *run;
    pthread_mutex_t mu;
    sl_buf sse;           /* every event as SSE text, in order */
    struct reader *waiting; /* readers suspended until the next event */
    bool sse_full;        /* the SSE text reached its cap and ended with an error event */
    bool log_full;        /* the same for the event log */
    bool done;
    bool streaming;       /* a client reads the SSE text (else it is not built) */
    int refs;             /* the run thread and each reader */
    sl_buf log;           /* the run's events as a JSON array, for the store */
    size_t (*ev)[2];      /* each event's [start, end) in log, for numbered readers */
    size_t n_ev, ev_cap;
    long long created;
    char *user;           /* who started it (NULL: Dify's default end user) */
    struct live *next;
} live;

typedef struct {
    sl_store *store;
    sl_server_opts o;
    pthread_mutex_t mu;   /* apps, keys, lives */
    sl_map apps;          /* app id -> app* */
    sl_map keys;          /* sha256(key) -> app id (heap) */
    long long keys_version;
    struct app *retired;  /* apps replaced by a newer version or deleted */
    live *lives;
    atomic_int active;
    atomic_int pending;   /* requests handed to a worker, not yet answered */
    atomic_int suspended; /* SSE readers waiting for their run's next event */
    atomic_int closing;   /* stopping the daemon: no request goes to a worker */
    sl_workers *workers;
    volatile sig_atomic_t stopping;
    sl_kb *kb;            /* the knowledge bases of the Knowledge API (/v1/datasets) */
    bool shared;          /* the store is shared by processes (PostgreSQL) */
    atomic_bool listening; /* on_store may act (the server runs) */
    pthread_mutex_t rmu;  /* remote */
    struct rreader *remote; /* readers of runs another process runs */
    char *kb_error;       /* why kb could not be opened (heap), NULL when it was */
    /* runs as jobs (a shared store): the thread that claims queued runs
     * while this process has room (--workers), woken by the store's
     * "queue" and by a run's end; and requests waiting on runs another
     * process executes */
    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    bool qwake;           /* look at the queue now (qmu) */
    atomic_bool queue_maybe; /* the last claim took all it asked: more may wait */
    pthread_t claimer;
    atomic_bool claiming; /* read by the store's listener thread */
    pthread_mutex_t wmu;  /* waiters */
    struct waiter *waiters;
} server;

static server S;

/* One request's worth of the app's rate; false when it is used up.  On a
 * shared store the bucket is the store's: the rate holds across every
 * server (when the store cannot say, this server's own bucket does). */
static bool rate_ok(app *a, double per_s, const char *app_id)
{
    if (per_s <= 0)
        return true;
    if (S.shared) {
        sl_err err = {0};
        int r = sl_store_rate_take(S.store, app_id, per_s, &err);
        sl_err_clear(&err);
        if (r >= 0)
            return r == 1;
    }
    pthread_mutex_lock(&a->rate_mu);
    double now = sl_clock_s();
    if (a->last == 0)
        a->tokens = per_s;
    else
        a->tokens += (now - a->last) * per_s;
    if (a->tokens > per_s)
        a->tokens = per_s; /* bursts of up to one second's worth */
    a->last = now;
    bool ok = a->tokens >= 1;
    if (ok)
        a->tokens -= 1;
    pthread_mutex_unlock(&a->rate_mu);
    return ok;
}

/* Room kept past --max-event-bytes for the error event that ends a stream
 * or a log, and the log's closing bracket. */
#define EVENT_CAP_ROOM 1024

/* Threads for requests and runs at most (workers.h); beyond, they wait. */
#define MAX_WORKERS 4096

static void wake_readers(live *l);
static bool app_exists(const char *id);
static void claimer_wake(void);

/* --max-runs on a shared store: the app's runs going in every process,
 * from a count read at most every GOING_TTL_S (read at every request it
 * cost a fifth of a queued run) and the runs this server started since;
 * one more is counted when there is room for it.  -1 when the store
 * cannot say (it is out of reach): the caller counts its own runs. */
static long long runs_going(app *a, const char *app_id)
{
    double now = sl_clock_s();
    pthread_mutex_lock(&a->rate_mu);
    bool stale = now - a->going_at >= GOING_TTL_S;
    pthread_mutex_unlock(&a->rate_mu);
    long long n = stale ? sl_store_running(S.store, app_id) : -1;
    if (stale && n < 0)
        return -1;
    pthread_mutex_lock(&a->rate_mu);
    if (n >= 0) {
        a->going = n;
        a->going_at = now;
        a->started_since = 0;
    }
    long long going = a->going + a->started_since;
    if (going < S.o.max_runs_per_app)
        a->started_since++;
    pthread_mutex_unlock(&a->rate_mu);
    return going;
}
struct reader;
static enum MHD_Result sse_response(struct MHD_Connection *c, struct reader *rd);

static long long wall(void)
{
    return (long long)time(NULL);
}

/* UUIDv7 (RFC 9562): 48 bits of milliseconds, then randomness.  Ids that
 * grow with time make every new row land at the end of the store's
 * indexes (runs, run_log), where the pages are hot, instead of at a random
 * place in a large B-tree. */
static int uuid(char out[40])
{
    unsigned char b[16];
    out[0] = 0;
    if (sl_rand_bytes(b, sizeof b, NULL))
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long ms = (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
    for (int i = 0; i < 6; i++)
        b[i] = (unsigned char)(ms >> (8 * (5 - i)));
    b[6] = (b[6] & 0x0f) | 0x70;
    b[8] = (b[8] & 0x3f) | 0x80;
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
    return 0;
}

/* Drops the cached keys and apps when the store says they changed (a key
 * revoked, an app updated or deleted, by this server or by `sluice app`:
 * sl_store_keys_version); returns the version the caches now hold. */
static long long refresh(void)
{
    long long ver = sl_store_keys_version(S.store);
    pthread_mutex_lock(&S.mu);
    if (ver != S.keys_version) {
        for (size_t i = 0; i < S.keys.cap; i++)
            if (S.keys.slots && S.keys.slots[i].key)
                free(S.keys.slots[i].val);
        sl_map_release(&S.keys);
        sl_map_init(&S.keys);
        /* Apps too: one may have a new version or be gone.  Runs may still
         * use the loaded ones; they are freed when the server stops. */
        for (size_t i = 0; i < S.apps.cap; i++)
            if (S.apps.slots && S.apps.slots[i].key) {
                app *old = S.apps.slots[i].val;
                old->retired = S.retired;
                S.retired = old;
            }
        sl_map_release(&S.apps);
        sl_map_init(&S.apps);
        S.keys_version = ver;
    }
    pthread_mutex_unlock(&S.mu);
    return ver;
}

/* The loaded app: every run asks here, so a new version is used from the
 * next run on, whichever path (app key or admin token) the run came by. */
static app *app_get(const char *id, sl_err *err)
{
    refresh();
    pthread_mutex_lock(&S.mu);
    app *a = sl_map_get(&S.apps, id);
    pthread_mutex_unlock(&S.mu);
    if (a)
        return a;
    a = sl_xcalloc(1, sizeof *a);
    pthread_mutex_init(&a->rate_mu, NULL);
    if (sl_apps_load(S.store, id, S.o.config, &a->g, &a->version, err)) {
        sl_graph_release(&a->g);
        free(a);
        return NULL;
    }
    pthread_mutex_lock(&S.mu);
    app *old = sl_map_get(&S.apps, id);
    if (old) {
        sl_graph_release(&a->g);
        free(a);
        a = old;
    } else {
        sl_map_put(&S.apps, id, a);
    }
    pthread_mutex_unlock(&S.mu);
    return a;
}

/* The app a bearer key opens (heap id), NULL when none.  Keys are cached
 * by their hash; the cache is dropped whenever a key is revoked or an app
 * deleted, by this server or by `sluice app` (sl_store_keys_version). */
static char *auth_app(struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7))
        return NULL;
    const char *key = h + 7;
    char hash[65];
    sl_sha256_hex(key, strlen(key), hash);
    long long ver = refresh();
    pthread_mutex_lock(&S.mu);
    char *id = sl_map_get(&S.keys, hash);
    char *copy = id ? sl_xstrdup(id) : NULL;
    pthread_mutex_unlock(&S.mu);
    if (copy)
        return copy;
    copy = sl_store_key_app(S.store, key);
    if (copy) {
        pthread_mutex_lock(&S.mu);
        if (ver == S.keys_version && !sl_map_get(&S.keys, hash))
            sl_map_put(&S.keys, hash, sl_xstrdup(copy));
        pthread_mutex_unlock(&S.mu);
    }
    return copy;
}

/* ---- responses ---- */

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, sl_value *body)
{
    char *text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(body);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Dify's error body: {code, message, status}. */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *code,
                                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *code,
                                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a message may quote a client's path, which need not be UTF-8 (jansson
     * would make no answer of it, and the connection would just close) */
    return reply_json(c, status, sl_datasets_error(status, code, msg));
}

/* ---- running ---- */

static void live_unref(live *l)
{
    pthread_mutex_lock(&l->mu);
    bool last = --l->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (!last)
        return;
    pthread_mutex_lock(&S.mu);
    for (live **p = &S.lives; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    pthread_mutex_unlock(&S.mu);
    sl_buf_release(&l->sse);
    sl_buf_release(&l->log);
    free(l->ev);
    free(l->user);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* Appends one SSE event for readers.  An event that would take the text
 * past --max-event-bytes is replaced by Dify's error event, which ends the
 * stream (the run goes on, and is stored whole). */
static void push_text(live *l, const char *text)
{
    pthread_mutex_lock(&l->mu);
    if (!l->sse_full && l->sse.len + strlen(text) + 8 > S.o.max_event_bytes) {
        l->sse_full = true;
        sl_value *err = json_pack(
            "{s:s, s:s, s:s, s:i, s:s, s:s++}", "event", "error", "task_id", l->task_id,
            "workflow_run_id", l->id, "status", 500, "code", "stream_too_large", "message",
            "this run's events passed the server's cap for one stream (--max-event-bytes); the "
            "stream ends here, the run goes on: GET /v1/workflows/run/", l->id,
            " gives its result");
        if (l->chat) {
            json_object_set_new(err, "message_id", json_string(l->message_id));
            json_object_set_new(err, "conversation_id", json_string(l->conversation_id));
        }
        char *et = json_dumps(err, JSON_COMPACT);
        json_decref(err);
        sl_buf_addf(&l->sse, "data: %s\n\n", et);
        free(et);
    } else if (!l->sse_full) {
        sl_buf_adds(&l->sse, "data: ");
        sl_buf_adds(&l->sse, text);
        sl_buf_adds(&l->sse, "\n\n");
    }
    wake_readers(l);
    pthread_mutex_unlock(&l->mu);
}

static void push(live *l, sl_value *ev)
{
    if (l->streaming) {
        char *text = json_dumps(ev, JSON_COMPACT);
        if (text)
            push_text(l, text);
        free(text);
    }
    json_decref(ev);
}

/* Appends one event to the run's log (a JSON array).  An event that would
 * take it past --max-event-bytes is replaced by an error event saying so,
 * the last one kept: the stored log stays valid JSON and says where and
 * why it ends. */
static void log_event_locked(live *l, const char *event, const char *data);

/* The log's last event, for the other processes of a shared store (they
 * stream this run to their clients); l->mu held. */
static void publish_last(live *l)
{
    if (!S.shared)
        return;
    size_t i = l->n_ev - 1;
    sl_store_event_publish(S.store, l->id, (long long)i + 1, l->log.data + l->ev[i][0],
                           l->ev[i][1] - l->ev[i][0]);
}

static void log_event(live *l, const char *event, const char *data)
{
    pthread_mutex_lock(&l->mu);
    if (!l->log_full) {
        log_event_locked(l, event, data);
        wake_readers(l);
    }
    pthread_mutex_unlock(&l->mu);
}

/* Numbered readers (GET /admin/runs/ID/events) read the log as it grows:
 * each event's place in it is kept. */
static void log_event_locked(live *l, const char *event, const char *data)
{
    const char *sep = l->log.len > 1 ? "," : "";
    if (l->n_ev == l->ev_cap) {
        l->ev_cap = l->ev_cap ? 2 * l->ev_cap : 64;
        l->ev = sl_xrealloc(l->ev, l->ev_cap * sizeof *l->ev);
    }
    l->ev[l->n_ev][0] = l->log.len + strlen(sep);
    if (l->log.len + strlen(event) + strlen(data) + 32 > S.o.max_event_bytes) {
        l->log_full = true;
        sl_value *d = json_pack("{s:s, s:s}", "message",
                                "this run's events passed the server's cap for one run's log "
                                "(--max-event-bytes); later events were not kept (the run's "
                                "status and outputs were)", "dropped_from", event);
        char *dt = json_dumps(d, JSON_COMPACT);
        json_decref(d);
        sl_buf_addf(&l->log, "%s{\"event\":\"error\",\"data\":%s}", sep, dt);
        free(dt);
        l->ev[l->n_ev++][1] = l->log.len;
        publish_last(l);
        return;
    }
    sl_buf_addf(&l->log, "%s{\"event\":\"%s\",\"data\":%s}", sep, event, data);
    l->ev[l->n_ev++][1] = l->log.len;
    publish_last(l);
}

/* One event as the /v1 stream carries it: the logged data text in Dify's
 * envelope, the same bytes (event names and ids are ours: no escaping);
 * message_id NULL for a workflow's run. */
static void envelope(sl_buf *e, const char *event, const char *data, size_t data_len,
                     const char *task_id, const char *run_id, const char *message_id,
                     const char *conversation_id)
{
    sl_buf_addf(e, "{\"event\":\"%s\",\"task_id\":\"%s\",\"workflow_run_id\":\"%s\",\"data\":",
                event, task_id, run_id);
    sl_buf_add(e, data, data_len);
    if (message_id)
        sl_buf_addf(e, ",\"message_id\":\"%s\",\"conversation_id\":\"%s\"", message_id,
                    conversation_id);
    sl_buf_addc(e, '}');
}

/* A chat's text_chunk as the /v1 stream carries it: a message event. */
static sl_value *message_event(const char *task_id, const char *message_id,
                               const char *conversation_id, const sl_value *data, long long created)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:O?, s:I}", "event", "message", "task_id", task_id,
                     "message_id", message_id, "conversation_id", conversation_id, "answer",
                     json_object_get(data, "text"), "created_at", (json_int_t)created);
}

static void on_event(const char *event, const sl_value *data, void *ud)
{
    live *l = ud;
    /* the event log, kept with the run's end */
    char *text = json_dumps(data, JSON_COMPACT);
    log_event(l, event, text ? text : "null");
    if (l->chat && !strcmp(event, "text_chunk")) {
        free(text);
        push(l, message_event(l->task_id, l->message_id, l->conversation_id, data, l->created));
        return;
    }
    if (!l->streaming || !text) {
        free(text);
        return;
    }
    sl_buf e;
    sl_buf_init(&e, 0);
    envelope(&e, event, text, strlen(text), l->task_id, l->id, l->chat ? l->message_id : NULL,
             l->conversation_id);
    free(text);
    push_text(l, e.data);
    sl_buf_release(&e);
}

typedef struct {
    app *a;
    char *app_id;
    sl_value *inputs;
    char *user;
    char *query;
    sl_value *history;
    live *l;
    bool claimed;         /* taken from the queue: its requester waits elsewhere */
} job;

/* The files a run of this app may read: uploads and files runs made, of
 * this app and, when the file has one, this user (chatflows find files of
 * earlier turns so); sl_store_file_open keeps the rule. */
static int run_file_open(const char *id, void *ud, sl_err *err)
{
    job *j = ud;
    return sl_store_file_open(S.store, j->app_id, j->user, id, err);
}

/* Files nodes make (agent artifacts) join the uploads as blobs; on_file
 * then gives them their metadata. */
static int run_file_put(const char *id, const void *data, size_t len, void *ud, sl_err *err)
{
    (void)ud;
    return sl_store_blob_put(S.store, id, data, len, 0, err);
}

static void on_file(const sl_value *f, void *ud)
{
    job *j = ud;
    sl_err err = {0};
    if (sl_store_file_add(S.store, json_string_value(json_object_get(f, "id")), j->app_id,
                      json_string_value(json_object_get(f, "filename")),
                      (long long)json_integer_value(json_object_get(f, "size")),
                      json_string_value(json_object_get(f, "mime_type")),
                      j->user ? j->user : "", &err)) /* the run goes on; its file is not listed */
        sl_log(SL_LOG_ERROR, "run %s: a file it made could not be recorded: %s", j->l->id, err.msg);
    sl_err_clear(&err);
}

/* Runs to the end and records it; returns the blocking-mode answer body. */
static sl_value *execute(job *j)
{
    live *l = j->l;
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.limits = S.o.limits;
    o.config = S.o.config;
    o.kb = S.kb;  /* knowledge-retrieval nodes search the Knowledge API's bases */
    o.inputs = j->inputs;
    o.user_id = j->user;
    o.run_id = l->id;
    o.workflow_id = j->app_id;
    o.query = j->query;
    o.conversation_id = l->chat ? l->conversation_id : NULL;
    o.history = j->history;
    o.on_event = on_event;
    o.event_ud = l;
    /* Files nodes make (agent artifacts) join the uploads: downloadable at
     * /v1/files/ID/preview by this app's keys. */
    o.file_put = run_file_put;
    o.file_open = run_file_open;
    o.files_url = "/v1/files/%s/preview";
    o.on_file = on_file;
    o.file_ud = j;
    sl_run *r = sl_run_new(&j->a->g, &o);
    pthread_mutex_lock(&l->mu);
    l->run = r;
    pthread_mutex_unlock(&l->mu);
    sl_err err = {0};
    sl_run_exec(r, &err);
    sl_err_clear(&err);
    const char *status = sl_run_status_name(sl_run_status_of(r));
    long long tokens = sl_run_tokens(r);
    const char *answer = json_string_value(json_object_get(sl_run_outputs(r), "answer"));
    long long finished = wall();
    sl_value *body, *end = NULL;
    if (l->chat) {
        /* the knowledge chunks the answer used: Dify's citations */
        const sl_value *res = sl_run_retriever_resources(r);
        end = json_pack("{s:s, s:s, s:s, s:s, s:{s:{s:I}}}", "event", "message_end",
                                  "task_id", l->task_id, "message_id", l->message_id,
                                  "conversation_id", l->conversation_id, "metadata", "usage",
                                  "total_tokens", (json_int_t)tokens);
        body = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s%, s:{s:{s:I}}, s:I}", "event", "message",
                         "task_id", l->task_id, "id", l->message_id, "message_id", l->message_id,
                         "conversation_id", l->conversation_id, "answer", answer ? answer : "",
                         answer ? strlen(answer) : 0, "metadata", "usage", "total_tokens",
                         (json_int_t)tokens, "created_at", (json_int_t)l->created);
        if (json_array_size(res)) {
            json_object_set(json_object_get(end, "metadata"), "retriever_resources",
                            (sl_value *)res);
            json_object_set(json_object_get(body, "metadata"), "retriever_resources",
                            (sl_value *)res);
        }
    } else {
        body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:O, s:s?, s:f, s:I, s:i, s:I, s:I}}",
                         "workflow_run_id", l->id, "task_id", l->task_id, "data", "id", l->id,
                         "workflow_id", j->app_id, "status", status, "outputs",
                         sl_run_outputs(r), "error", sl_run_error(r), "elapsed_time",
                         sl_run_elapsed(r), "total_tokens", (json_int_t)tokens, "total_steps",
                         sl_run_steps(r), "created_at", (json_int_t)l->created, "finished_at",
                         (json_int_t)finished);
    }
    /* The store takes a copy: numbered readers may still be reading the
     * log, and read it to its end.  A run from the queue leaves its
     * blocking answer for the process whose client waits on it. */
    pthread_mutex_lock(&l->mu);
    sl_buf_addc(&l->log, ']');
    char *events = sl_xstrdup(l->log.data);
    pthread_mutex_unlock(&l->mu);
    char *reply = j->claimed ? json_dumps(body, JSON_COMPACT) : NULL;
    if (sl_store_finish_run(S.store, l->id, status, sl_run_outputs(r), sl_run_error(r),
                            sl_run_elapsed(r), tokens, sl_run_steps(r), finished,
                            l->chat ? (answer ? answer : "") : NULL, reply, events, &err))
        sl_log(SL_LOG_ERROR, "run %s finished (%s) but could not be recorded: %s", l->id, status,
               err.msg);
    sl_err_clear(&err);
    free(reply);
    if (end)
        push(l, end);
    pthread_mutex_lock(&l->mu);
    l->run = NULL;
    l->done = true;
    wake_readers(l);
    pthread_mutex_unlock(&l->mu);
    sl_run_free(r);
    atomic_fetch_sub(&j->a->running, 1);
    atomic_fetch_sub(&S.active, 1);
    if (S.o.workers >= 0 && atomic_load(&S.queue_maybe))
        claimer_wake();  /* room again: runs may be waiting in line */
    return body;
}

static void job_free(job *j)
{
    json_decref(j->inputs);
    json_decref(j->history);
    free(j->app_id);
    free(j->user);
    free(j->query);
    free(j);
}

static void stream_main(void *arg)
{
    job *j = arg;
    json_decref(execute(j));
    live_unref(j->l);
    job_free(j);
}

/* ---- runs from the queue (a shared store) ---- */

static void claimer_wake(void)
{
    if (!S.claiming)
        return;
    pthread_mutex_lock(&S.qmu);
    S.qwake = true;
    pthread_cond_signal(&S.qcv);
    pthread_mutex_unlock(&S.qmu);
}

/* A claimed run that cannot run here (its app is gone or broken) ends
 * failed, saying why. */
static void claimed_fail(const char *run_id, const char *why)
{
    sl_err err = {0};
    char *events = sl_xstrdup("[]");
    if (sl_store_finish_run(S.store, run_id, "failed", NULL, why, 0, 0, 0, wall(), NULL, NULL,
                            events, &err))
        sl_log(SL_LOG_ERROR, "run %s: %s; and its end could not be recorded: %s", run_id, why,
               err.msg);
    sl_err_clear(&err);
}

/* Starts a run claimed from the queue, as start_run would have (its
 * slot taken): row as sl_store_claim_runs gives it. */
static void launch_claimed(const sl_value *row)
{
    const char *id = json_string_value(json_object_get(row, "id"));
    const char *app_id = json_string_value(json_object_get(row, "app_id"));
    const char *user = json_string_value(json_object_get(row, "user"));
    const sl_value *request = json_object_get(row, "request");
    const char *query = json_string_value(json_object_get(request, "query"));
    sl_err err = {0};
    app *a = app_id ? app_get(app_id, &err) : NULL;
    if (!a || !id || strlen(id) >= 40) {
        char *why = sl_xasprintf("the app cannot run: %s", err.msg ? err.msg : "it is gone");
        if (id)
            claimed_fail(id, why);
        free(why);
        sl_err_clear(&err);
        atomic_fetch_sub(&S.active, 1);
        return;
    }
    live *l = sl_xcalloc(1, sizeof *l);
    snprintf(l->id, sizeof l->id, "%s", id);
    snprintf(l->task_id, sizeof l->task_id, "%s",
             json_string_value(json_object_get(row, "task_id")) ?: id);
    snprintf(l->app_id, sizeof l->app_id, "%s", app_id);
    l->chat = !strcmp(a->g.mode, "advanced-chat");
    if (l->chat) {
        snprintf(l->message_id, sizeof l->message_id, "%s",
                 json_string_value(json_object_get(row, "message_id")) ?: "");
        snprintf(l->conversation_id, sizeof l->conversation_id, "%s",
                 json_string_value(json_object_get(row, "conversation_id")) ?: "");
    }
    pthread_mutex_init(&l->mu, NULL);
    sl_buf_init(&l->sse, S.o.max_event_bytes + EVENT_CAP_ROOM);
    sl_buf_init(&l->log, S.o.max_event_bytes + EVENT_CAP_ROOM);
    sl_buf_addc(&l->log, '[');
    l->user = user ? sl_xstrdup(user) : NULL;
    l->created = json_integer_value(json_object_get(row, "created_at")) ?: wall();
    l->refs = 1;
    job *j = sl_xcalloc(1, sizeof *j);
    j->a = a;
    j->app_id = sl_xstrdup(app_id);
    const sl_value *inputs = json_object_get(row, "inputs");
    j->inputs = json_is_object(inputs) ? json_incref((sl_value *)inputs) : json_object();
    j->user = user ? sl_xstrdup(user) : NULL;
    j->query = query ? sl_xstrdup(query) : NULL;
    j->l = l;
    j->claimed = true;
    if (l->chat)  /* the turns before this one (its own has no answer yet) */
        j->history = sl_store_history(S.store, l->conversation_id, S.o.limits.history_messages);
    atomic_fetch_add(&a->running, 1);
    pthread_mutex_lock(&S.mu);
    l->next = S.lives;
    S.lives = l;
    pthread_mutex_unlock(&S.mu);
    sl_workers_submit(S.workers, stream_main, j);
}

/* Claims queued runs while this process has room: when the store says
 * runs were queued, when a run here ends, and every second (a word may
 * be lost). */
#define CLAIM_MAX 32

static void *claimer_main(void *arg)
{
    (void)arg;
    double backoff = 0;
    while (!S.stopping) {
        pthread_mutex_lock(&S.qmu);
        if (!S.qwake && !S.stopping) {
            struct timespec ts = sl_clock_wall_in(backoff > 0 ? backoff : 1);
            pthread_cond_timedwait(&S.qcv, &S.qmu, &ts);
        }
        S.qwake = false;
        pthread_mutex_unlock(&S.qmu);
        while (!S.stopping) {
            /* the slots are taken before the claim: a run that ends
             * meanwhile cannot make room twice */
            int have = atomic_load(&S.active), want;
            do {
                want = S.o.workers < 0 ? CLAIM_MAX : S.o.workers - have;
                if (want > CLAIM_MAX)
                    want = CLAIM_MAX;
                if (want <= 0)
                    break;
            } while (!atomic_compare_exchange_weak(&S.active, &have, have + want));
            if (want <= 0)
                break;
            sl_value *rows = NULL;
            sl_err err = {0};
            if (sl_store_claim_runs(S.store, want, &rows, &err)) {
                atomic_fetch_sub(&S.active, want);
                if (backoff == 0)
                    sl_log(SL_LOG_WARN, "queued runs cannot be claimed: %s", err.msg);
                sl_err_clear(&err);
                backoff = backoff ? (backoff * 2 > 2 ? 2 : backoff * 2) : 0.1;
                break;
            }
            backoff = 0;
            int n = (int)json_array_size(rows);
            atomic_fetch_sub(&S.active, want - n);
            atomic_store(&S.queue_maybe, n == want);
            size_t i;
            sl_value *row;
            json_array_foreach(rows, i, row)
                launch_claimed(row);
            json_decref(rows);
            if (n < want)
                break;
        }
    }
    return NULL;
}

/* The SSE reader of one client: its own position in the run's events.
 * The reader runs on libmicrohttpd's event loop, so it never waits: with
 * nothing new to send it suspends its connection, and push() (or the ping
 * timer in sl_server_run, after 10 s of silence) resumes it. */
typedef struct reader {
    live *l;
    struct MHD_Connection *c;
    size_t pos;
    bool ping;                /* the timer woke it: send a ping */
    double since;             /* when it started waiting */
    struct reader *next;      /* on l->waiting */
    /* a numbered reader (GET /admin/runs/ID/events) reads l->log, not
     * l->sse: event next_ev is the next to send, out the text being sent */
    bool numbered;
    size_t next_ev;
    sl_buf out;
    size_t out_pos;
} reader;

/* Resumes every reader waiting on l; l->mu held. */
static void wake_readers(live *l)
{
    for (reader *rd = l->waiting, *next; rd; rd = next) {
        next = rd->next;
        rd->next = NULL;
        MHD_resume_connection(rd->c);
        atomic_fetch_sub(&S.suspended, 1);
    }
    l->waiting = NULL;
}

/* Waits for l's next event: suspends the reader's connection until push,
 * log_event or the ping timer resumes it; l->mu held. */
static ssize_t reader_wait(reader *rd)
{
    rd->since = sl_clock_s();
    rd->next = rd->l->waiting;
    rd->l->waiting = rd;
    atomic_fetch_add(&S.suspended, 1);
    MHD_suspend_connection(rd->c);
    return 0;
}

static const char ping_text[] = "event: ping\n\n";

/* The numbered reader: `id: N` and `data: {event, data}` per event of the
 * log, N counting from 1, as the stored events are replayed. */
static ssize_t numbered_read(reader *rd, char *buf, size_t max)
{
    live *l = rd->l;
    if (rd->out_pos == rd->out.len && rd->next_ev < l->n_ev) {
        size_t i = rd->next_ev++;
        rd->out.len = 0;
        rd->out_pos = 0;
        sl_buf_addf(&rd->out, "id: %zu\ndata: ", i + 1);
        sl_buf_add(&rd->out, l->log.data + l->ev[i][0], l->ev[i][1] - l->ev[i][0]);
        sl_buf_adds(&rd->out, "\n\n");
    }
    size_t n = rd->out.len - rd->out_pos;
    if (n) {
        if (n > max)
            n = max;
        memcpy(buf, rd->out.data + rd->out_pos, n);
        rd->out_pos += n;
        return (ssize_t)n;
    }
    if (l->done || l->log_full)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (rd->ping) {
        rd->ping = false;
        memcpy(buf, ping_text, sizeof ping_text - 1);
        return (ssize_t)(sizeof ping_text - 1);
    }
    return reader_wait(rd);
}

static ssize_t sse_read(void *cls, uint64_t off, char *buf, size_t max)
{
    (void)off;
    reader *rd = cls;
    live *l = rd->l;
    pthread_mutex_lock(&l->mu);
    if (rd->numbered) {
        ssize_t r = numbered_read(rd, buf, max);
        pthread_mutex_unlock(&l->mu);
        return r;
    }
    size_t n = l->sse.len - rd->pos;
    if (n == 0 && (l->done || l->sse_full)) { /* done (or cut) and all sent */
        pthread_mutex_unlock(&l->mu);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (n == 0 && rd->ping) {
        rd->ping = false;
        pthread_mutex_unlock(&l->mu);
        memcpy(buf, ping_text, sizeof ping_text - 1);
        return (ssize_t)(sizeof ping_text - 1);
    }
    if (n == 0) {
        reader_wait(rd);
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    if (n > max)
        n = max;
    memcpy(buf, l->sse.data + rd->pos, n);
    rd->pos += n;
    pthread_mutex_unlock(&l->mu);
    return (ssize_t)n;
}

/* Readers that waited 10 s get a ping (Dify's keep-alive). */
static void ping_remote(void);

static void ping_readers(void)
{
    ping_remote();
    double now = sl_clock_s();
    pthread_mutex_lock(&S.mu);
    for (live *l = S.lives; l; l = l->next) {
        pthread_mutex_lock(&l->mu);
        for (reader **p = &l->waiting; *p;) {
            reader *rd = *p;
            if (now - rd->since < 10) {
                p = &rd->next;
                continue;
            }
            *p = rd->next;
            rd->next = NULL;
            rd->ping = true;
            MHD_resume_connection(rd->c);
            atomic_fetch_sub(&S.suspended, 1);
        }
        pthread_mutex_unlock(&l->mu);
    }
    pthread_mutex_unlock(&S.mu);
}

static void sse_free(void *cls)
{
    reader *rd = cls;
    live_unref(rd->l);
    sl_buf_release(&rd->out);
    free(rd);
}

/* ---- request bodies ---- */

/* Where a request goes, decided on its headers. */
enum route { R_NONE, R_HEALTH, R_V1, R_ADMIN, R_DATASETS, R_CONSOLE };

typedef struct {
    enum route route;
    char *app_id;         /* /v1: the app its key opens (checked on the headers) */
    size_t v1_at;         /* /v1: where the Service API's path starts in the url */
    /* handed to a worker: the connection (suspended meanwhile) and the
     * request line (valid until the request ends) */
    struct MHD_Connection *c;
    const char *method, *url;
    bool dispatched;
    bool idle_timeout;    /* the connection has the idle timeout, not the header one */
    sl_buf body;
    bool too_big;
    /* a multipart upload (POST /v1/files/upload) streams into a blob */
    struct MHD_PostProcessor *pp;
    sl_blob_writer *blob;
    char file_id[40], name[256], user[128];
    unsigned char head[512];  /* the file's first bytes, to tell its type */
    size_t head_n;
    long long file_size;
    bool upload_failed;
    sl_buf form_data;     /* a document upload's `data` part (/v1/datasets/…) */
    bool many_files;      /* a document upload came with more than one file */
} req;

static enum MHD_Result upload_part(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *filename, const char *content_type,
                                   const char *transfer_encoding, const char *data, uint64_t off,
                                   size_t size)
{
    /* the client's Content-Type is not kept: the type is told from the
     * file's bytes and name (sl_mime_of_file) */
    (void)kind, (void)content_type, (void)transfer_encoding, (void)off;
    req *q = cls;
    if (!strcmp(key, "data") && q->route == R_DATASETS) {
        if (!sl_buf_add(&q->form_data, data, size))
            return MHD_YES;
        q->too_big = true;
        return MHD_NO;
    }
    if (!strcmp(key, "user")) {
        size_t have = strlen(q->user);
        snprintf(q->user + have, sizeof q->user - have, "%.*s", (int)size, data);
        return MHD_YES;
    }
    if (strcmp(key, "file"))
        return MHD_YES;
    if (q->route == R_DATASETS && q->blob && off == 0 && q->file_size > 0) {
        q->many_files = true;  /* a second file part: Dify takes one */
        return MHD_YES;
    }
    if (!q->blob && !q->upload_failed) {
        if (uuid(q->file_id)) {
            q->upload_failed = true;
            return MHD_YES;
        }
        snprintf(q->name, sizeof q->name, "%s", filename ? filename : "upload");
        sl_err err = {0};
        if (sl_store_blob_create(S.store, q->file_id, S.o.max_body_bytes, &q->blob, &err)) {
            sl_log(SL_LOG_ERROR, "upload %s could not be stored: %s", q->file_id, err.msg);
            q->upload_failed = true;
        }
        sl_err_clear(&err);
    }
    if (q->blob && size) {
        size_t h = sizeof q->head - q->head_n < size ? sizeof q->head - q->head_n : size;
        memcpy(q->head + q->head_n, data, h);
        q->head_n += h;
        q->file_size += (long long)size;
        sl_err err = {0};
        int rc = sl_blob_write(q->blob, data, size, &err);
        bool limit = rc && err.code == SL_ELIMIT;
        sl_err_clear(&err);
        if (limit) {
            q->too_big = true;
            return MHD_NO;
        }
        if (rc)
            q->upload_failed = true;
    }
    return MHD_YES;
}

static sl_value *body_json(req *q, struct MHD_Connection *c, enum MHD_Result *ret)
{
    json_error_t je;
    sl_value *v = json_loadb(q->body.data ? q->body.data : "", q->body.len, 0, &je);
    if (!json_is_object(v)) {
        json_decref(v);
        *ret = reply_error(c, 400, "invalid_param",
                           "the request body is not a JSON object (%s at line %d, column %d)",
                           je.text, je.line, je.column);
        return NULL;
    }
    return v;
}

int sl_server_check_request(const sl_graph *g, const sl_value *body, bool chat,
                            sl_value **inputs_out, bool *streaming, sl_err *err)
{
    *inputs_out = NULL;
    const sl_value *inputs = json_object_get(body, "inputs");
    if (inputs && !json_is_object(inputs) && !json_is_null(inputs)) {
        return sl_err_set(err, SL_EINVAL, "inputs must be a JSON object");
    }
    const sl_value *rm = json_object_get(body, "response_mode");
    const char *mode = json_string_value(rm);
    if ((rm && !json_is_null(rm) && !mode) ||
        (mode && strcmp(mode, "blocking") && strcmp(mode, "streaming"))) {
        return sl_err_set(err, SL_EINVAL, "response_mode must be blocking or streaming");
    }
    *streaming = mode && !strcmp(mode, "streaming");
    const sl_value *user = json_object_get(body, "user");
    if (user && !json_is_null(user) && !json_is_string(user)) {
        return sl_err_set(err, SL_EINVAL, "user must be a string");
    }
    const char *query = json_string_value(json_object_get(body, "query"));
    if (chat && (!query || !*query)) {
        return sl_err_set(err, SL_EINVAL, "query is required");
    }
    sl_diag d;
    sl_diag_init(&d);
    sl_value *given =
        inputs && json_is_object(inputs) ? json_incref((sl_value *)inputs) : json_object();
    int rc = sl_run_prepare_inputs(g, given, inputs_out, &d);
    json_decref(given);
    if (rc)
        sl_err_set(err, SL_EINVAL, "%s", d.n ? d.v[0].msg : "the inputs are not valid");
    sl_diag_release(&d);
    if (rc)
        return -1;
    /* as Dify does, inputs the start node does not declare are dropped */
    const char *k;
    sl_value *val;
    void *tmp;
    json_object_foreach_safe(*inputs_out, tmp, k, val) {
        bool declared = false;
        for (size_t i = 0; i < json_array_size(g->inputs) && !declared; i++) {
            const char *name = json_string_value(json_object_get(json_array_get(g->inputs, i),
                                                                 "variable"));
            declared = name && !strcmp(name, k);
        }
        if (!declared)
            json_object_del(*inputs_out, k);
    }
    return 0;
}

/* A file input as Dify clients send it ({type, transfer_method local_file,
 * upload_file_id}, {type, transfer_method tool_file, tool_file_id} or
 * {type, transfer_method remote_url, url}) as a file value of sluice's
 * making: an id only when it names a file of this app and user, never a
 * path, url or id the client wrote into a file value.  NULL (and err)
 * otherwise. */
static sl_value *file_input(const char *app_id, const char *user, const sl_value *in,
                            sl_err *err)
{
    const char *method = json_string_value(json_object_get(in, "transfer_method"));
    const char *type = json_string_value(json_object_get(in, "type"));
    if (method && !strcmp(method, "remote_url")) {
        const char *url = json_string_value(json_object_get(in, "url"));
        if (!url)
            url = json_string_value(json_object_get(in, "remote_url"));
        if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
            sl_err_set(err, SL_EINVAL, "a remote_url file input needs an http(s) url");
            return NULL;
        }
        const char *name = strrchr(url, '/');
        return sl_file_new(&(sl_file){.type = type ? type : "custom",
                                      .transfer_method = "remote_url", .remote_url = url,
                                      .filename = name && name[1] ? name + 1 : url,
                                      .extension = "", .size = -1, .url = url});
    }
    const char *id = NULL;
    if (method && !strcmp(method, "local_file"))
        id = json_string_value(json_object_get(in, "upload_file_id"));
    else if (method && !strcmp(method, "tool_file"))
        id = json_string_value(json_object_get(in, "tool_file_id"));
    else {
        char m[40];
        sl_excerpt(method ? method : "(none)", m, sizeof m);
        sl_err_set(err, SL_EINVAL, "file input: transfer_method '%s' is not one sluice takes "
                   "(local_file with upload_file_id, tool_file with tool_file_id, remote_url "
                   "with url)", m);
        return NULL;
    }
    if (!id)  /* a file value as sluice gives it out (an earlier answer's) */
        id = json_string_value(json_object_get(in, "related_id"));
    sl_value *meta = sl_store_file_find(S.store, app_id, user, id);
    if (!meta) {
        char shown[48];
        sl_excerpt(id ? id : "(none)", shown, sizeof shown);
        sl_err_set(err, SL_EINVAL, "file input '%s' is not a file of this app and user (upload "
                   "it with POST /v1/files/upload and the same user)", shown);
        return NULL;
    }
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *dot = name ? strrchr(name, '.') : NULL;
    const char *mime = json_string_value(json_object_get(meta, "mime_type"));
    char url[96];
    snprintf(url, sizeof url, "/v1/files/%s/preview", id);
    sl_value *fv = sl_file_new(&(sl_file){
        .id = id, .type = type ? type : sl_file_kind(dot, mime ? mime : ""),
        .transfer_method = method, .related_id = id, .filename = name ? name : id,
        .extension = dot ? dot : "", .mime_type = mime ? mime : "application/octet-stream",
        .size = json_integer_value(json_object_get(meta, "size")), .url = url});
    json_decref(meta);
    return fv;
}

/* Whether a client's input is meant as a file (Dify's client shape or a
 * file value). */
static bool looks_like_file(const sl_value *v)
{
    return json_is_object(v) &&
           (json_object_get(v, "transfer_method") || json_object_get(v, "dify_model_identity"));
}

/* Replaces file inputs given the Dify client way by file values. */
static int resolve_files(const char *app_id, const char *user, sl_value *inputs, sl_err *err)
{
    const char *k;
    sl_value *val;
    json_object_foreach(inputs, k, val) {
        if (looks_like_file(val)) {
            sl_value *fv = file_input(app_id, user, val, err);
            if (!fv)
                return -1;
            json_object_set_new(inputs, k, fv);
        } else if (json_is_array(val)) {
            for (size_t i = 0; i < json_array_size(val); i++) {
                sl_value *e = json_array_get(val, i);
                if (!looks_like_file(e))
                    continue;
                sl_value *fv = file_input(app_id, user, e, err);
                if (!fv)
                    return -1;
                json_array_set_new(val, i, fv);
            }
        }
    }
    return 0;
}

/* Starts a run of app_id.  chat: the request came to /chat-messages (1),
 * /workflows/run (0), or the admin API's /runs, which takes the app's own
 * mode (-1).  detached: answer 202 with the run's ids at once and let it
 * go on; its events are then GET /admin/runs/ID/events. */
/* Takes a slot for a run executed here: false when --workers are all
 * busy (the run is queued then). */
static bool slot_take(void)
{
    int n = atomic_load(&S.active);
    do {
        if (S.o.workers >= 0 && n >= S.o.workers)
            return false;
    } while (!atomic_compare_exchange_weak(&S.active, &n, n + 1));
    return true;
}

/* The ids of a run started detached (POST /admin/apps/ID/runs). */
static sl_value *run_ids(const live *l, const char *mode)
{
    sl_value *ids = json_pack("{s:s, s:s, s:s, s:s}", "id", l->id, "task_id", l->task_id,
                              "app_id", l->app_id, "mode", mode);
    if (l->chat) {
        json_object_set_new(ids, "conversation_id", json_string(l->conversation_id));
        json_object_set_new(ids, "message_id", json_string(l->message_id));
    }
    return ids;
}

static enum MHD_Result remote_v1(struct MHD_Connection *c, const live *l);

/* ---- requests waiting on a run another process executes ---- */

typedef struct waiter {
    const char *run_id;
    pthread_cond_t cv;
    bool woken;
    struct waiter *next;
} waiter;

static void waiter_add(waiter *w, const char *run_id)
{
    w->run_id = run_id;
    w->woken = false;
    pthread_cond_init(&w->cv, NULL);
    pthread_mutex_lock(&S.wmu);
    w->next = S.waiters;
    S.waiters = w;
    pthread_mutex_unlock(&S.wmu);
}

static void waiter_remove(waiter *w)
{
    pthread_mutex_lock(&S.wmu);
    for (waiter **p = &S.waiters; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    pthread_mutex_unlock(&S.wmu);
    pthread_cond_destroy(&w->cv);
}

/* Wakes the waiters of run_id (NULL: all). */
static void waiters_wake(const char *run_id)
{
    pthread_mutex_lock(&S.wmu);
    for (waiter *w = S.waiters; w; w = w->next)
        if (!run_id || !strcmp(w->run_id, run_id)) {
            w->woken = true;
            pthread_cond_signal(&w->cv);
        }
    pthread_mutex_unlock(&S.wmu);
}

/* The blocking answer of a run that ended without leaving one (its
 * process was lost): made from its row, as Dify shapes it. */
static sl_value *reply_of_row(const live *l)
{
    sl_value *run = sl_store_run_get(S.store, NULL, l->id);
    if (!run)
        return NULL;
    sl_value *body;
    if (l->chat) {
        body = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:{s:O}}, s:I}", "event", "message",
                         "task_id", l->task_id, "id", l->message_id, "message_id", l->message_id,
                         "conversation_id", l->conversation_id, "answer", "", "metadata", "usage",
                         "total_tokens", json_object_get(run, "total_tokens"), "created_at",
                         (json_int_t)l->created);
    } else {
        body = json_pack("{s:s, s:s, s:O}", "workflow_run_id", l->id, "task_id", l->task_id,
                         "data", run);
        json_object_del(json_object_get(body, "data"), "user");
        json_object_del(json_object_get(body, "data"), "app_version");
        json_object_del(json_object_get(body, "data"), "inputs");
    }
    json_decref(run);
    return body;
}

/* A blocking request for a queued run: waits for its end (the store says
 * "done"; and every second, in case a word was lost) and answers what
 * the process that ran it left. */
static enum MHD_Result wait_reply(struct MHD_Connection *c, const live *l, waiter *w)
{
    char *status = NULL, *reply = NULL;
    bool ended = false;
    for (;;) {
        pthread_mutex_lock(&S.wmu);
        if (!w->woken && !S.stopping) {
            struct timespec ts = sl_clock_wall_in(1);
            pthread_cond_timedwait(&w->cv, &S.wmu, &ts);
        }
        w->woken = false;
        pthread_mutex_unlock(&S.wmu);
        free(status);
        free(reply);
        status = reply = NULL;
        sl_err err = {0};
        if (sl_store_run_state(S.store, l->id, &status, &reply, &err)) {
            bool gone = err.code == SL_ENOTFOUND;
            sl_err_clear(&err);
            if (gone)
                break;  /* its app was deleted meanwhile */
        } else if (strcmp(status, "queued") && strcmp(status, "running")) {
            ended = true;
            break;
        }
        if (S.stopping)
            break;
    }
    waiter_remove(w);
    sl_value *body = reply ? json_loads(reply, 0, NULL) : ended ? reply_of_row(l) : NULL;
    free(status);
    free(reply);
    if (body)
        return reply_json(c, 200, body);
    if (S.stopping)
        return reply_error(c, 503, "server_stopping",
                           "this server is shutting down; the run goes on in another process: "
                           "GET /v1/workflows/run/%s gives its result", l->id);
    return reply_error(c, 404, "not_found", "run %s is gone (its app was deleted)", l->id);
}

/* Queues the run that start_run prepared, for any process with room, and
 * answers as it would have: 202 with the ids, the event stream (read
 * from the store as the run goes), or the blocking answer once it ends.
 * Takes j and its live. */
static enum MHD_Result run_queued(struct MHD_Connection *c, job *j, const sl_run_row *row,
                                  bool detached, bool streaming)
{
    live *l = j->l;
    sl_value *rq = json_pack("{s:s?, s:b}", "query", j->query, "retry",
                             sl_config_retry_on_worker_loss(S.o.config, j->app_id));
    char *request = json_dumps(rq, JSON_COMPACT);
    json_decref(rq);
    waiter w;
    bool wait = !detached && !streaming;
    if (wait)  /* before the run is in line: its end cannot come first */
        waiter_add(&w, l->id);
    sl_err err = {0};
    int rc = sl_store_enqueue_run(S.store, row, request, &err);
    free(request);
    enum MHD_Result ret;
    if (rc) {
        if (wait)
            waiter_remove(&w);
        ret = reply_error(c, 503, "store_unavailable",
                          "the run cannot be queued, so it was not started: %s; try again "
                          "shortly", err.msg);
        sl_err_clear(&err);
    } else if (detached) {
        ret = reply_json(c, 202, run_ids(l, j->a->g.mode));
    } else if (streaming) {
        ret = remote_v1(c, l);
    } else {
        ret = wait_reply(c, l, &w);
    }
    job_free(j);
    live_unref(l);
    return ret;
}

static enum MHD_Result start_run(struct MHD_Connection *c, const char *app_id, sl_value *body,
                                 int chat, bool detached)
{
    sl_err err = {0};
    app *a = app_get(app_id, &err);
    if (!a) {
        enum MHD_Result r = reply_error(c, 400, "app_unavailable",
                                        "the app cannot run: %s", err.msg ? err.msg : "?");
        sl_err_clear(&err);
        return r;
    }
    if (!rate_ok(a, S.o.rate_limit, app_id))
        return reply_error(c, 429, "too_many_requests",
                           "this app's request rate is limited to %g per second (--rate-limit)",
                           S.o.rate_limit);
    bool is_chat_app = !strcmp(a->g.mode, "advanced-chat");
    if (chat < 0)
        chat = is_chat_app;
    if (chat != is_chat_app)
        return reply_error(c, 400, chat ? "not_chat_app" : "not_workflow_app",
                           chat ? "this app is a workflow: use POST /v1/workflows/run"
                                : "this app is a chatflow: use POST /v1/chat-messages");
    sl_value *prepared = NULL;
    bool streaming = false;
    sl_value *given = json_object_get(body, "inputs");
    const char *who = json_string_value(json_object_get(body, "user"));
    if ((json_is_object(given) && resolve_files(app_id, who, given, &err)) ||
        sl_server_check_request(&a->g, body, chat, &prepared, &streaming, &err)) {
        enum MHD_Result r = reply_error(c, 400, "invalid_param", "%s", err.msg);
        sl_err_clear(&err);
        return r;
    }
    const char *user = json_string_value(json_object_get(body, "user"));
    const char *query = json_string_value(json_object_get(body, "query"));
    long long everywhere = S.shared && S.o.max_runs_per_app > 0 ? runs_going(a, app_id) : -1;
    if (S.o.max_runs_per_app > 0 &&
        (everywhere >= 0 ? everywhere : atomic_load(&a->running)) >= S.o.max_runs_per_app) {
        json_decref(prepared);
        return reply_error(c, 429, "too_many_requests",
                           "this app already runs %d workflows; try again shortly",
                           S.o.max_runs_per_app);
    }
    if (S.stopping) {
        json_decref(prepared);
        return reply_error(c, 503, "server_stopping", "the server is shutting down");
    }
    char run_id[40], task_id[40], message_id[40] = "";
    if (uuid(run_id) || uuid(task_id) || (chat && uuid(message_id))) {
        json_decref(prepared);
        return reply_error(c, 500, "internal_error", "the kernel gave no random bytes for the "
                           "run's id (getrandom failed); the run was not started");
    }
    live *l = sl_xcalloc(1, sizeof *l);
    memcpy(l->id, run_id, sizeof run_id);
    memcpy(l->task_id, task_id, sizeof task_id);
    memcpy(l->message_id, message_id, sizeof message_id);
    snprintf(l->app_id, sizeof l->app_id, "%s", app_id);
    pthread_mutex_init(&l->mu, NULL);
    sl_buf_init(&l->sse, S.o.max_event_bytes + EVENT_CAP_ROOM);
    sl_buf_init(&l->log, S.o.max_event_bytes + EVENT_CAP_ROOM);
    sl_buf_addc(&l->log, '[');
    l->chat = chat;
    l->user = user ? sl_xstrdup(user) : NULL;
    l->created = wall();
    l->refs = 1;
    job *j = sl_xcalloc(1, sizeof *j);
    j->a = a;
    j->app_id = sl_xstrdup(app_id);
    j->inputs = prepared;
    j->user = user ? sl_xstrdup(user) : NULL;
    j->query = query ? sl_xstrdup(query) : NULL;
    j->l = l;
    if (chat) {
        char *conv = NULL;
        const char *cid = json_string_value(json_object_get(body, "conversation_id"));
        if (sl_store_conversation(S.store, app_id, user, cid, query, &conv, &err)) {
            bool gone = err.code == SL_ENOTFOUND, down = err.code == SL_EIO;
            enum MHD_Result r = reply_error(c, gone ? 404 : down ? 503 : 500,
                                            gone ? "not_found"
                                            : down ? "store_unavailable" : "internal_error",
                                            "%s", err.msg);
            sl_err_clear(&err);
            job_free(j);
            live_unref(l);
            return r;
        }
        snprintf(l->conversation_id, sizeof l->conversation_id, "%s", conv);
        free(conv);
        j->history = sl_store_history(S.store, l->conversation_id, S.o.limits.history_messages);
        if (sl_store_message_add(S.store, l->message_id, l->conversation_id, app_id, query, l->id,
                                 &err)) { /* the answer still comes; history will lack it */
            sl_log(SL_LOG_ERROR, "message %s could not be recorded: %s", l->message_id, err.msg);
            sl_err_clear(&err);
        }
    }
    sl_run_row row = {l->id, app_id, l->task_id, user, chat ? l->conversation_id : NULL,
                      chat ? l->message_id : NULL, prepared, a->version};
    /* no room here (--workers, on a shared store only): the run waits in
     * line for any process */
    if (!slot_take())
        return run_queued(c, j, &row, detached, streaming);
    if (sl_store_start_run(S.store, &row, &err)) {
        /* a run that cannot be recorded does not run: its result would
         * be lost (a database store that is down; SQLite queues starts) */
        enum MHD_Result r = reply_error(c, 503, "store_unavailable",
                                        "the run cannot be recorded, so it was not started: %s; "
                                        "try again shortly", err.msg);
        sl_err_clear(&err);
        atomic_fetch_sub(&S.active, 1);
        job_free(j);
        live_unref(l);
        return r;
    }
    atomic_fetch_add(&a->running, 1);
    pthread_mutex_lock(&S.mu);
    l->next = S.lives;
    S.lives = l;
    pthread_mutex_unlock(&S.mu);
    if (detached) {
        /* the answer is made first: once submitted, the run may end and
         * free l before this thread looks at it again */
        sl_value *ids = run_ids(l, a->g.mode);
        sl_workers_submit(S.workers, stream_main, j);
        return reply_json(c, 202, ids);
    }
    if (!streaming) {
        sl_value *resp = execute(j);
        job_free(j);
        live_unref(l);
        return reply_json(c, 200, resp);
    }
    /* streaming: the run goes on, on a worker of its own, without this
     * connection */
    l->refs = 2;
    l->streaming = true;
    reader *rd = sl_xcalloc(1, sizeof *rd);
    rd->l = l;
    rd->c = c;
    sl_workers_submit(S.workers, stream_main, j);
    return sse_response(c, rd);
}

static bool same_user(const char *a, const char *b)
{
    return !strcmp(a && *a ? a : SL_STORE_DEFAULT_USER, b && *b ? b : SL_STORE_DEFAULT_USER);
}

/* Stops the task when it is this app's and was started by this user: as
 * in Dify, a stop from another user is answered but changes nothing. */
/* Stops the run of task in app_id here, when the user may; whether
 * this server runs that task. */
static bool stop_local_task(const char *app_id, const char *task, const char *user)
{
    bool found = false;
    pthread_mutex_lock(&S.mu);
    for (live *l = S.lives; l; l = l->next)
        if (!strcmp(l->task_id, task) && !strcmp(l->app_id, app_id)) {
            found = true;
            if (!same_user(l->user, user))
                continue;  /* Dify answers success and stops nothing */
            pthread_mutex_lock(&l->mu);
            if (l->run)
                sl_run_cancel(l->run);
            pthread_mutex_unlock(&l->mu);
        }
    pthread_mutex_unlock(&S.mu);
    return found;
}

static enum MHD_Result stop_task(struct MHD_Connection *c, const char *app_id, const char *task,
                                 req *q)
{
    enum MHD_Result ret;
    sl_value *b = q->body.len ? body_json(q, c, &ret) : json_object();
    if (!b)
        return ret;
    const char *user = json_string_value(json_object_get(b, "user"));
    bool here = stop_local_task(app_id, task, user);
    if (!here && S.shared && !strchr(app_id, '\t') && !strchr(task, '\t') &&
        !(user && strchr(user, '\t'))) {
        /* maybe another server runs it: ask them all (the one that does
         * checks app and user as here) */
        char *what = sl_xasprintf("task\t%s\t%s\t%s", app_id, task, user ? user : "");
        sl_err err = {0};
        if (sl_store_stop_request(S.store, what, &err))
            sl_log(SL_LOG_WARN, "a stop could not be passed on: %s", err.msg);
        sl_err_clear(&err);
        free(what);
    }
    json_decref(b);
    /* Dify answers success also for a task that already ended */
    return reply_json(c, 200, json_pack("{s:s}", "result", "success"));
}

/* ---- the API ---- */

/* The headers of a file's preview.  The browser must not guess a type
 * (nosniff), and a type it would run (HTML, SVG, XML, JavaScript, or any
 * type not known to be inert) comes as an attachment, never inline: a
 * file uploaded by one user must not run script in another's browser.
 * as_attachment=true asks for an attachment of any file, typed
 * application/octet-stream, as in Dify. */
static void preview_headers(struct MHD_Response *r, const sl_value *meta, const char *as_attachment)
{
    const char *mime = json_string_value(json_object_get(meta, "mime_type"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    bool asked = as_attachment && (!strcasecmp(as_attachment, "true") || !strcmp(as_attachment, "1"));
    bool attach = asked || !sl_mime_inline_safe(mime);
    MHD_add_response_header(r, "Content-Type", mime && *mime && !asked ? mime
                                                                       : "application/octet-stream");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (!attach)
        return;
    /* RFC 6266 / 8187: the name percent-encoded, so nothing in it (quotes,
     * CR/LF) can end the header */
    sl_buf d;
    sl_buf_init(&d, 4096);
    sl_buf_adds(&d, "attachment; filename*=UTF-8''");
    for (const unsigned char *p = (const unsigned char *)(name ? name : "file"); *p; p++)
        if (isalnum(*p) || strchr("!#$&+-.^_`|~", *p))
            sl_buf_addc(&d, (char)*p);
        else
            sl_buf_addf(&d, "%%%02X", *p);
    MHD_add_response_header(r, "Content-Disposition", d.data);
    sl_buf_release(&d);
}

static int arg_int(struct MHD_Connection *c, const char *k, int def)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
    return v && *v ? atoi(v) : def;
}

static enum MHD_Result parameters(struct MHD_Connection *c, const char *app_id)
{
    sl_err err = {0};
    app *a = app_get(app_id, &err);
    if (!a) {
        enum MHD_Result r = reply_error(c, 400, "app_unavailable", "%s", err.msg);
        sl_err_clear(&err);
        return r;
    }
    sl_value *form = json_array();
    for (size_t i = 0; i < json_array_size(a->g.inputs); i++) {
        const sl_value *v = json_array_get(a->g.inputs, i);
        const char *type = json_string_value(json_object_get(v, "type"));
        json_array_append_new(form, json_pack("{s:O}", type ? type : "text-input", v));
    }
    return reply_json(c, 200,
                      json_pack("{s:s, s:[], s:{s:b}, s:{s:b}, s:{s:b}, s:{s:b}, s:o, s:{}}",
                                "opening_statement", "", "suggested_questions",
                                "suggested_questions_after_answer", "enabled", 0, "speech_to_text",
                                "enabled", 0, "text_to_speech", "enabled", 0,
                                "retriever_resource", "enabled", 0, "user_input_form", form,
                                "file_upload"));
}

/* ---- the Service API (/v1), one handler per route ---- */

/* What a route's handler gets: the request, its app, and the path's
 * captured segments (":" in the pattern). */
typedef struct {
    struct MHD_Connection *c;
    req *q;
    const char *app_id;
    const char *method;
    const char *path;
    char cap[2][64];
} route_ctx;

typedef enum MHD_Result (*route_fn)(route_ctx *x);

static enum MHD_Result v1_run(route_ctx *x)
{
    enum MHD_Result ret;
    sl_value *body = body_json(x->q, x->c, &ret);
    if (body) {
        ret = start_run(x->c, x->app_id, body, !strcmp(x->path, "/chat-messages"), false);
        json_decref(body);
    }
    return ret;
}

static enum MHD_Result v1_run_get(route_ctx *x)
{
    sl_value *run = sl_store_run_get(S.store, x->app_id, x->cap[0]);
    return run ? reply_json(x->c, 200, run)
               : reply_error(x->c, 404, "not_found", "Workflow run not found");
}

static enum MHD_Result v1_run_events(route_ctx *x)
{
    sl_value *evs = sl_store_run_events(S.store, x->app_id, x->cap[0]);
    if (evs && json_array_size(evs))
        return reply_json(x->c, 200, json_pack("{s:o}", "data", evs));
    json_decref(evs);
    return reply_error(x->c, 404, "not_found", "Workflow run not found");
}

static enum MHD_Result v1_stop(route_ctx *x)
{
    return stop_task(x->c, x->app_id, x->cap[0], x->q);
}

static enum MHD_Result v1_logs(route_ctx *x)
{
    const char *st = MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND, "status");
    return reply_json(x->c, 200, sl_store_run_logs(S.store, x->app_id, st && *st ? st : NULL,
                                                   arg_int(x->c, "page", 1),
                                                   arg_int(x->c, "limit", 20)));
}

static enum MHD_Result v1_conversations(route_ctx *x)
{
    const char *user = MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND, "user");
    return reply_json(x->c, 200, sl_store_conversations(S.store, x->app_id, user,
                                                        arg_int(x->c, "limit", 20)));
}

static enum MHD_Result v1_messages(route_ctx *x)
{
    const char *cid = MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND, "conversation_id");
    if (!cid || !*cid)
        return reply_error(x->c, 400, "invalid_param", "conversation_id is required");
    sl_value *msgs = sl_store_messages(
        S.store, x->app_id, cid, MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND, "user"),
        arg_int(x->c, "limit", 20));
    return msgs ? reply_json(x->c, 200, msgs)
                : reply_error(x->c, 404, "not_found", "Conversation Not Exists.");
}

static enum MHD_Result v1_upload(route_ctx *x)
{
    req *q = x->q;
    if (!q->file_id[0] || !q->blob)
        return reply_error(x->c, 400, "no_file_uploaded",
                           "send the file as multipart/form-data in a field named file");
    enum MHD_Result ret;
    sl_blob_writer *w = q->blob;
    q->blob = NULL;
    sl_err err = {0};
    const char *dot = strrchr(q->name, '.');
    const char *mime = sl_mime_of_file(q->name, q->head, q->head_n);
    bool failed = q->upload_failed;
    if (failed)
        sl_blob_abort(w);
    else
        failed = sl_blob_commit(w, &err) != 0;
    if (!failed && sl_store_file_add(S.store, q->file_id, x->app_id, q->name, q->file_size, mime,
                                     q->user, &err)) {
        sl_store_blob_delete(S.store, q->file_id, NULL);
        failed = true;
    }
    if (failed)
        ret = reply_error(x->c, 500, "internal_error", "the file could not be stored in the data folder (check free disk space and permissions)");
    else
        ret = reply_json(x->c, 201, json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:I}", "id",
                                              q->file_id, "name", q->name, "size",
                                              (json_int_t)q->file_size, "extension",
                                              dot ? dot + 1 : "", "mime_type", mime,
                                              "created_by", q->user, "created_at",
                                              (json_int_t)wall()));
    sl_err_clear(&err);
    return ret;
}

static enum MHD_Result v1_preview(route_ctx *x)
{
    enum MHD_Result ret;
    /* any file of this app: the key is the app's */
    sl_value *meta = sl_store_file_get(S.store, x->app_id, x->cap[0]);
    int fd = meta ? sl_store_blob_open(S.store, x->cap[0], NULL, NULL) : -1;
    if (fd < 0) {
        ret = reply_error(x->c, 404, "file_not_found", "File not found");
    } else {
        struct MHD_Response *r = MHD_create_response_from_fd(
            (uint64_t)json_integer_value(json_object_get(meta, "size")), fd);
        preview_headers(r, meta, MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND,
                                                             "as_attachment"));
        ret = MHD_queue_response(x->c, 200, r);
        MHD_destroy_response(r);
    }
    json_decref(meta);
    return ret;
}

/* DELETE /conversations/ID and POST /conversations/ID/name */
static enum MHD_Result v1_conversation(route_ctx *x)
{
    enum MHD_Result ret;
    bool del = !strcmp(x->method, "DELETE");
    sl_value *b = x->q->body.len ? body_json(x->q, x->c, &ret) : json_object();
    if (!b)
        return ret;
    const char *user = json_string_value(json_object_get(b, "user"));
    sl_err err = {0};
    if (del) {
        ret = sl_store_conversation_delete(S.store, x->app_id, x->cap[0], user, &err)
                  ? reply_error(x->c, 404, "not_found", "Conversation Not Exists.")
                  : reply_json(x->c, 200, json_pack("{s:s}", "result", "success"));
    } else {
        const char *name = json_string_value(json_object_get(b, "name"));
        sl_value *conv = sl_store_conversation_rename(S.store, x->app_id, x->cap[0], user,
                                                      name ? name : "New conversation");
        ret = conv ? reply_json(x->c, 200, conv)
                   : reply_error(x->c, 404, "not_found", "Conversation Not Exists.");
    }
    sl_err_clear(&err);
    json_decref(b);
    return ret;
}

static enum MHD_Result v1_feedback(route_ctx *x)
{
    enum MHD_Result ret;
    sl_value *b = body_json(x->q, x->c, &ret);
    if (!b)
        return ret;
    const sl_value *rating = json_object_get(b, "rating");
    const char *r = json_string_value(rating);
    if (rating && !json_is_null(rating) && (!r || (strcmp(r, "like") && strcmp(r, "dislike"))))
        ret = reply_error(x->c, 400, "invalid_param", "rating must be like, dislike or null");
    else if (sl_store_feedback(S.store, x->app_id, x->cap[0],
                               json_string_value(json_object_get(b, "user")), r))
        ret = reply_error(x->c, 404, "not_found", "Message Not Exists.");
    else
        ret = reply_json(x->c, 200, json_pack("{s:s}", "result", "success"));
    json_decref(b);
    return ret;
}

static enum MHD_Result v1_parameters(route_ctx *x)
{
    return parameters(x->c, x->app_id);
}

static enum MHD_Result v1_info(route_ctx *x)
{
    sl_value *info = NULL;
    sl_err err = {0};
    if (sl_store_app_get(S.store, x->app_id, NULL, &info, &err)) {
        enum MHD_Result ret = reply_error(x->c, 404, "not_found", "%s", err.msg);
        sl_err_clear(&err);
        return ret;
    }
    json_object_set_new(info, "description", json_string(""));
    json_object_set_new(info, "tags", json_array());
    json_object_del(info, "id");
    return reply_json(x->c, 200, info);
}

/* The Service API.  In a pattern, ":" stands for one path segment (an id:
 * non-empty, no '/', under 64 bytes), captured in order. */
static const struct {
    const char *method;
    const char *pattern;
    route_fn fn;
} v1_routes[] = {
    {"POST", "/workflows/run", v1_run},
    {"POST", "/chat-messages", v1_run},
    {"GET", "/workflows/run/:", v1_run_get},
    {"GET", "/workflows/runs/:/events", v1_run_events},
    {"POST", "/workflows/tasks/:/stop", v1_stop},
    {"POST", "/chat-messages/:/stop", v1_stop},
    {"GET", "/workflows/logs", v1_logs},
    {"GET", "/conversations", v1_conversations},
    {"GET", "/messages", v1_messages},
    {"POST", "/files/upload", v1_upload},
    {"GET", "/files/:/preview", v1_preview},
    {"DELETE", "/conversations/:", v1_conversation},
    {"POST", "/conversations/:/name", v1_conversation},
    {"POST", "/messages/:/feedbacks", v1_feedback},
    {"GET", "/parameters", v1_parameters},
    {"GET", "/info", v1_info},
};

/* Whether path matches pattern, filling x->cap with the ":" segments. */
static bool route_match(const char *pattern, const char *path, route_ctx *x)
{
    int k = 0;
    while (*pattern) {
        if (*pattern == ':') {
            size_t n = strcspn(path, "/");
            if (!n || n >= sizeof x->cap[0] || k == 2)
                return false;
            memcpy(x->cap[k], path, n);
            x->cap[k++][n] = 0;
            path += n;
            pattern++;
        } else if (*pattern++ != *path++) {
            return false;
        }
    }
    return !*path;
}

static enum MHD_Result v1(struct MHD_Connection *c, const char *method, const char *path, req *q)
{
    route_ctx x = {.c = c, .q = q, .app_id = q->app_id, .method = method, .path = path};
    for (size_t i = 0; i < sizeof v1_routes / sizeof v1_routes[0]; i++)
        if (!strcmp(method, v1_routes[i].method) && route_match(v1_routes[i].pattern, path, &x))
            return v1_routes[i].fn(&x);
    return reply_error(c, 404, "not_found", "%s %s is not an endpoint of the Service API", method,
                       path);
}

static const char *query_arg(void *ud, const char *name)
{
    return MHD_lookup_connection_value(ud, MHD_GET_ARGUMENT_KIND, name);
}

/* A request to the Knowledge API (/v1/datasets…), on a worker: its body
 * (or its upload, streamed to a blob as /files/upload's) goes to
 * server/datasets, which says what to answer. */
static enum MHD_Result datasets(struct MHD_Connection *c, const char *method, const char *path,
                                req *q)
{
    if (!S.kb)
        return reply_error(c, 503, "knowledge_unavailable",
                           "the knowledge bases cannot be opened: %s", S.kb_error);
    if (q->many_files)
        return reply_error(c, 400, "too_many_files", "Only one file is allowed.");
    sl_datasets_req r = {.method = method, .path = path, .body = q->body.data,
                         .body_len = q->body.len, .multipart = q->pp != NULL, .arg = query_arg,
                         .ud = c};
    sl_buf file;
    sl_buf_init(&file, (size_t)S.o.max_body_bytes);
    if (q->blob) {
        /* the file came whole to a blob; its bytes go to the knowledge
         * base, which keeps its text, not the blob */
        sl_blob_writer *w = q->blob;
        q->blob = NULL;
        sl_err err = {0};
        bool failed = q->upload_failed;
        if (failed)
            sl_blob_abort(w);
        else
            failed = sl_blob_commit(w, &err) != 0 ||
                     sl_store_blob_get(S.store, q->file_id, (size_t)S.o.max_body_bytes, &file,
                                       &err) != 0;
        sl_store_blob_delete(S.store, q->file_id, NULL);
        sl_err_clear(&err);
        if (failed) {
            sl_buf_release(&file);
            return reply_error(c, 500, "internal_error", "the file could not be stored in the "
                               "data folder (check free disk space and permissions)");
        }
        r.file = file.data ? file.data : "";
        r.file_len = file.len;
        r.file_name = q->name;
        r.file_mime = sl_mime_of_file(q->name, q->head, q->head_n);
        r.data = q->form_data.len ? q->form_data.data : NULL;
    } else if (q->pp) {
        r.data = q->form_data.len ? q->form_data.data : NULL;
    }
    sl_value *body = NULL;
    unsigned st = sl_datasets_serve(S.kb, &r, &body);
    sl_buf_release(&file);
    if (body)
        return reply_json(c, st, body);
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, st, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* /admin/tools[/ID] and /admin/apps/APP/tools[/ID]: the tool bindings of
 * scope ("" the server's defaults, else the app's), kept in the store and
 * never exported with an app.  Values of headers and env are shown masked. */
static enum MHD_Result admin_tools(struct MHD_Connection *c, const char *method,
                                   const char *scope, const char *rest, req *q)
{
    sl_err err = {0};
    enum MHD_Result ret;
    char *spec = NULL;
    if (*scope) {
        char *dsl = NULL;
        if (sl_store_app_get(S.store, scope, &dsl, NULL, &err)) {
            ret = reply_error(c, 404, "not_found", "%s", err.msg);
            sl_err_clear(&err);
            return ret;
        }
        free(dsl);
    }
    const char *id = *rest == '/' ? rest + 1 : NULL;
    if (sl_store_tools_get(S.store, scope, &spec, &err)) {
        ret = reply_error(c, 500, "internal_error", "%s", err.msg);
    } else if (!id && !*rest && !strcmp(method, "GET")) {
        ret = reply_json(c, 200, json_pack("{s:o}", "data", sl_bindings_spec_show(spec)));
    } else if (id && *id && (!strcmp(method, "PUT") || !strcmp(method, "DELETE"))) {
        sl_value *body = NULL;
        if (!strcmp(method, "PUT")) {
            json_error_t je;
            body = json_loadb(q->body.data ? q->body.data : "", q->body.len, 0, &je);
        }
        if (!strcmp(method, "PUT") && !json_is_object(body) && !json_is_string(body)) {
            ret = reply_error(c, 400, "invalid_param", "the body is a binding: {\"mcp\": URL} "
                              "or {\"mcp\": {url, transport, headers} | {command, env}, "
                              "\"names\": {…}, \"timeout\": s} (docs/tools.md)");
        } else if (sl_bindings_spec_set(&spec, id, body, &err) ||
                   sl_store_tools_set(S.store, scope, spec, &err)) {
            ret = reply_error(c, err.code == SL_ENOTFOUND ? 404 : err.code == SL_EIO ? 500 : 400,
                              err.code == SL_ENOTFOUND ? "not_found"
                              : err.code == SL_EIO     ? "internal_error"
                                                       : "invalid_param",
                              "%s", err.msg);
        } else {
            ret = reply_json(c, 200, json_pack("{s:s}", "result", "success"));
        }
        json_decref(body);
    } else {
        ret = reply_error(c, 404, "not_found", "%s /admin/…/tools%s is not an admin endpoint; "
                          "GET the list, PUT or DELETE /tools/ID", method, rest);
    }
    free(spec);
    sl_err_clear(&err);
    return ret;
}

/* A number argument of the query (0 when absent); false when it is there
 * and no whole number. */
static bool arg_ll(struct MHD_Connection *c, const char *k, long long *out)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
    *out = 0;
    if (!v || !*v)
        return true;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || *end || n < 0)
        return false;
    *out = n;
    return true;
}

/* GET /admin/runs: the runs of every app, newest first (sl_store_runs_list):
 * ?app= &status= &user= &since= &until= (Unix seconds) &limit= (1..100)
 * &before= (the "next" of the page before). */
static enum MHD_Result admin_runs(struct MHD_Connection *c)
{
    sl_runs_filter f = {0};
    const char *v;
#define ARG(k) ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k)) && *v ? v : NULL)
    f.app_id = ARG("app");
    f.status = ARG("status");
    f.user = ARG("user");
    long long limit = 0;
    if (!arg_ll(c, "since", &f.since) || !arg_ll(c, "until", &f.until) ||
        !arg_ll(c, "limit", &limit) || limit > 100)
        return reply_error(c, 400, "invalid_param",
                           "since and until are Unix seconds, limit 1 to 100 (the default 50)");
    f.limit = (int)limit;
    char id[128] = "";
    const char *before = ARG("before");
#undef ARG
    if (before) {
        const char *colon = strchr(before, ':');
        char *end;
        errno = 0;
        f.before_at = strtoll(before, &end, 10);
        if (!colon || end != colon || errno || f.before_at <= 0 ||
            strlen(colon + 1) >= sizeof id)
            return reply_error(c, 400, "invalid_param",
                               "before is the \"next\" of the page before (CREATED_AT:RUN_ID)");
        snprintf(id, sizeof id, "%s", colon + 1);
        f.before_id = id;
    }
    sl_value *list = sl_store_runs_list(S.store, &f);
    return list ? reply_json(c, 200, list)
                : reply_error(c, 500, "internal_error", "the runs could not be read");
}

/* GET /admin/runs/ID/events: a finished run's events again, as the stream
 * that carried them (text/event-stream), each numbered (id: 1, 2, ...) so
 * that a client that lost the connection resumes with Last-Event-ID (or
 * ?after=N) and misses nothing. */
/* The run this server runs now, with a reference taken; NULL when none. */
static live *live_find(const char *run_id)
{
    live *found = NULL;
    pthread_mutex_lock(&S.mu);
    for (live *l = S.lives; l && !found; l = l->next)
        if (!strcmp(l->id, run_id)) {
            pthread_mutex_lock(&l->mu);
            l->refs++;
            pthread_mutex_unlock(&l->mu);
            found = l;
        }
    pthread_mutex_unlock(&S.mu);
    return found;
}

/* An event stream read by fn(cls, …), cls freed by done. */
static enum MHD_Result stream_reply(struct MHD_Connection *c, MHD_ContentReaderCallback fn,
                                    void *cls, MHD_ContentReaderFreeCallback done)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, fn, cls, done);
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result sse_response(struct MHD_Connection *c, reader *rd)
{
    return stream_reply(c, sse_read, rd, sse_free);
}

/* ---- runs another process runs (a shared store) ----
 * A reader of such a run reads the events the store carries
 * (sl_store_events_since), numbered as everywhere; the store's listener
 * (on_store) says when a run has new ones, and fetches them here, off the
 * event loop, into each reader's text, then resumes its connection.  The
 * stream ends with workflow_finished, or when the store says the run is
 * no longer running (then the rest comes from its stored log). */
typedef struct rreader {
    char run_id[40];
    struct MHD_Connection *c;
    pthread_mutex_t mu;       /* out, out_pos, last, done, waiting, ping */
    sl_buf out;
    size_t out_pos;
    long long last;           /* the number of the last event taken */
    bool done, waiting, ping;
    bool finished;            /* workflow_finished was taken */
    double since;             /* when it started waiting */
    /* a /v1 stream (of a queued run, for the client that asked for it):
     * events in Dify's envelope, unnumbered, and a chat's message_end */
    bool v1, chat;
    char task_id[40], message_id[40], conversation_id[40];
    long long created;
    struct rreader *next;     /* on S.remote (S.rmu) */
} rreader;

static void rr_add(rreader *rr, long long seq, const char *text)
{
    rr->last = seq;
    bool fin = strstr(text, "\"event\":\"workflow_finished\"") != NULL;
    rr->finished = rr->finished || fin;
    if (!rr->v1) {
        sl_buf_addf(&rr->out, "id: %lld\ndata: %s\n\n", seq, text);
        rr->done = rr->done || fin;
        return;
    }
    /* the log's {"event":"NAME","data":DATA} (log_event_locked) */
    const char *name = text + 10, *q = strchr(name, '"');
    const char *data = q ? strstr(q, ",\"data\":") : NULL;
    size_t tl = strlen(text);
    if (strncmp(text, "{\"event\":\"", 10) || !data || tl < 2 || text[tl - 1] != '}')
        return;
    data += 8;
    char event[64];
    snprintf(event, sizeof event, "%.*s", (int)(q - name), name);
    sl_buf_adds(&rr->out, "data: ");
    if (rr->chat && !strcmp(event, "text_chunk")) {
        sl_value *d = json_loadb(data, (size_t)(text + tl - 1 - data), 0, NULL);
        sl_value *m = message_event(rr->task_id, rr->message_id, rr->conversation_id, d,
                                    rr->created);
        char *mt = json_dumps(m, JSON_COMPACT);
        sl_buf_adds(&rr->out, mt ? mt : "{}");
        free(mt);
        json_decref(m);
        json_decref(d);
    } else {
        envelope(&rr->out, event, data, (size_t)(text + tl - 1 - data), rr->task_id, rr->run_id,
                 rr->chat ? rr->message_id : NULL, rr->conversation_id);
    }
    sl_buf_adds(&rr->out, "\n\n");
}

/* The end of a /v1 stream of a run that ended: a chat's message_end (its
 * usage and citations, from the answer the run left), or an error event
 * when the run ended without workflow_finished (its process was lost). */
static void rr_v1_end(rreader *rr, const char *reply)
{
    sl_value *r = reply ? json_loads(reply, 0, NULL) : NULL;
    sl_value *ev = NULL;
    if (!rr->finished) {
        sl_value *run = sl_store_run_get(S.store, NULL, rr->run_id);
        ev = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "event", "error", "task_id",
                       rr->task_id, "workflow_run_id", rr->run_id, "status", 500, "code",
                       "run_failed", "message",
                       json_string_value(json_object_get(run, "error")) ?: "the run ended early");
        json_decref(run);
    } else if (rr->chat) {
        const sl_value *md = json_object_get(r, "metadata");
        ev = json_pack("{s:s, s:s, s:s, s:s, s:O}", "event", "message_end", "task_id",
                       rr->task_id, "message_id", rr->message_id, "conversation_id",
                       rr->conversation_id, "metadata", md ? md : json_object());
        if (!md)
            json_decref(json_object_get(ev, "metadata"));
    }
    if (ev && rr->chat && !rr->finished) {
        json_object_set_new(ev, "message_id", json_string(rr->message_id));
        json_object_set_new(ev, "conversation_id", json_string(rr->conversation_id));
    }
    if (ev) {
        char *t = json_dumps(ev, JSON_COMPACT);
        sl_buf_addf(&rr->out, "data: %s\n\n", t ? t : "{}");
        free(t);
        json_decref(ev);
    }
    json_decref(r);
    rr->done = true;
}

/* Takes what is new for rr from the store; rr->mu held.  check: also ask
 * whether the run still runs (the stream ends with what its log holds). */
static void rr_fetch(rreader *rr, bool check)
{
    sl_value *ev = sl_store_events_since(S.store, rr->run_id, rr->last);
    size_t i;
    sl_value *e;
    json_array_foreach(ev, i, e)
        if (!rr->done)
            rr_add(rr, (long long)json_integer_value(json_object_get(e, "seq")),
                   json_string_value(json_object_get(e, "text")) ?: "{}");
    bool got = json_array_size(ev) > 0;
    json_decref(ev);
    if (rr->done || (got && !check && !(rr->v1 && rr->finished)))
        return;
    char *status = NULL, *reply = NULL;
    sl_err err = {0};
    int st = sl_store_run_state(S.store, rr->run_id, &status, &reply, &err);
    sl_err_clear(&err);
    bool queued = !st && !strcmp(status, "queued");
    bool running = !st && (queued || !strcmp(status, "running"));
    free(status);
    if (queued && rr->last > 0) {
        /* its process was lost and it waits to run again from the start
         * (retry_on_worker_loss): this stream cannot go on */
        sl_buf_addf(&rr->out, "%sdata: {\"event\":\"error\",\"task_id\":\"%s\","
                    "\"workflow_run_id\":\"%s\",\"status\":500,\"code\":\"run_restarted\","
                    "\"message\":\"the process running this run was lost; the run is queued to "
                    "run again from the start: GET /v1/workflows/run/%s gives its result\"}\n\n",
                    rr->v1 ? "" : "event: error\n", rr->task_id, rr->run_id, rr->run_id);
        rr->done = true;
    }
    if (st || running) {
        free(reply);
        return;
    }
    /* it ended: the rest from its log (the carried copies are gone) */
    sl_value *all = sl_store_run_events(S.store, NULL, rr->run_id);
    json_array_foreach(all, i, e) {
        if ((long long)i + 1 <= rr->last)
            continue;
        char *text = json_dumps(e, JSON_COMPACT);
        if (text)
            rr_add(rr, (long long)i + 1, text);
        free(text);
    }
    json_decref(all);
    if (rr->v1)
        rr_v1_end(rr, reply);
    free(reply);
    rr->done = true;
}

/* The store's listener: events of a run, a stop, or "look again". */
static void on_store(const char *what, const char *run_id, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&S.rmu);  /* held throughout: the server's end waits for it */
    if (!atomic_load(&S.listening)) {
        pthread_mutex_unlock(&S.rmu);
        return;
    }
    if (!strcmp(what, "stop") && run_id && !strncmp(run_id, "task\t", 5)) {
        /* a /v1 stop another server got: "task\tAPP\tTASK\tUSER" */
        char *f = sl_xstrdup(run_id + 5), *save = NULL;
        const char *aid = strtok_r(f, "\t", &save), *task = strtok_r(NULL, "\t", &save);
        const char *user = strtok_r(NULL, "\t", &save);
        if (aid && task)
            stop_local_task(aid, task, user);
        free(f);
        pthread_mutex_unlock(&S.rmu);
        return;
    }
    if (!strcmp(what, "stop")) {
        pthread_mutex_lock(&S.mu);
        for (live *l = S.lives; l && run_id; l = l->next)
            if (!strcmp(l->id, run_id)) {
                pthread_mutex_lock(&l->mu);
                if (l->run && !l->done)
                    sl_run_cancel(l->run);
                pthread_mutex_unlock(&l->mu);
            }
        pthread_mutex_unlock(&S.mu);
        pthread_mutex_unlock(&S.rmu);
        return;
    }
    bool lost = !strcmp(what, "lost"), done = !strcmp(what, "done");
    if (!strcmp(what, "queue") || lost)
        claimer_wake();
    if (done || lost)
        waiters_wake(done ? run_id : NULL);
    for (rreader *rr = S.remote; rr; rr = rr->next) {
        if (!lost && strcmp(rr->run_id, run_id ? run_id : ""))
            continue;
        pthread_mutex_lock(&rr->mu);
        if (!rr->done)
            rr_fetch(rr, lost || done);
        if (rr->waiting && (rr->out_pos < rr->out.len || rr->done)) {
            rr->waiting = false;
            MHD_resume_connection(rr->c);
            atomic_fetch_sub(&S.suspended, 1);
        }
        pthread_mutex_unlock(&rr->mu);
    }
    pthread_mutex_unlock(&S.rmu);
}

static ssize_t rr_read(void *cls, uint64_t off, char *buf, size_t max)
{
    (void)off;
    rreader *rr = cls;
    pthread_mutex_lock(&rr->mu);
    size_t n = rr->out.len - rr->out_pos;
    ssize_t ret;
    if (n) {
        if (n > max)
            n = max;
        memcpy(buf, rr->out.data + rr->out_pos, n);
        rr->out_pos += n;
        ret = (ssize_t)n;
    } else if (rr->done) {
        ret = MHD_CONTENT_READER_END_OF_STREAM;
    } else if (rr->ping) {
        rr->ping = false;
        memcpy(buf, ping_text, sizeof ping_text - 1);
        ret = (ssize_t)(sizeof ping_text - 1);
    } else {
        rr->out.len = rr->out_pos = 0;
        rr->waiting = true;
        rr->since = sl_clock_s();
        atomic_fetch_add(&S.suspended, 1);
        MHD_suspend_connection(rr->c);
        ret = 0;
    }
    pthread_mutex_unlock(&rr->mu);
    return ret;
}

static void rr_free(void *cls)
{
    rreader *rr = cls;
    pthread_mutex_lock(&S.rmu);
    for (rreader **p = &S.remote; *p; p = &(*p)->next)
        if (*p == rr) {
            *p = rr->next;
            break;
        }
    pthread_mutex_unlock(&S.rmu);
    sl_buf_release(&rr->out);
    pthread_mutex_destroy(&rr->mu);
    free(rr);
}

/* Remote readers that waited 10 s get a ping, as local ones do; when the
 * server closes, their streams end (the run goes on elsewhere: a client
 * resumes from Last-Event-ID on another server). */
static void ping_remote(void)
{
    double now = sl_clock_s();
    bool closing = atomic_load(&S.closing);
    pthread_mutex_lock(&S.rmu);
    for (rreader *rr = S.remote; rr; rr = rr->next) {
        pthread_mutex_lock(&rr->mu);
        if (closing)
            rr->done = true;
        if (rr->waiting && (closing || now - rr->since >= 10)) {
            rr->waiting = false;
            rr->ping = !closing;
            MHD_resume_connection(rr->c);
            atomic_fetch_sub(&S.suspended, 1);
        }
        pthread_mutex_unlock(&rr->mu);
    }
    pthread_mutex_unlock(&S.rmu);
}

static enum MHD_Result remote_stream(struct MHD_Connection *c, rreader *rr)
{
    rr->c = c;
    pthread_mutex_init(&rr->mu, NULL);
    sl_buf_init(&rr->out, 0);
    pthread_mutex_lock(&S.rmu);  /* on the list before the first fetch: nothing falls between */
    rr->next = S.remote;
    S.remote = rr;
    pthread_mutex_lock(&rr->mu);
    rr_fetch(rr, false);  /* it asks whether the run still runs when nothing came */
    pthread_mutex_unlock(&rr->mu);
    pthread_mutex_unlock(&S.rmu);
    return stream_reply(c, rr_read, rr, rr_free);
}

static enum MHD_Result remote_events(struct MHD_Connection *c, const char *run_id, long long after)
{
    rreader *rr = sl_xcalloc(1, sizeof *rr);
    snprintf(rr->run_id, sizeof rr->run_id, "%.39s", run_id);
    rr->last = after;
    return remote_stream(c, rr);
}

/* The /v1 stream of a run queued for its client: as a local run's. */
static enum MHD_Result remote_v1(struct MHD_Connection *c, const live *l)
{
    rreader *rr = sl_xcalloc(1, sizeof *rr);
    memcpy(rr->run_id, l->id, sizeof rr->run_id);
    memcpy(rr->task_id, l->task_id, sizeof rr->task_id);
    rr->v1 = true;
    rr->chat = l->chat;
    if (l->chat) {
        memcpy(rr->message_id, l->message_id, sizeof rr->message_id);
        memcpy(rr->conversation_id, l->conversation_id, sizeof rr->conversation_id);
    }
    rr->created = l->created;
    return remote_stream(c, rr);
}

/* GET /admin/runs/ID/events: a running run's events as they come (the
 * stream ends with the run), a finished run's from the store; numbered
 * alike, so a client resumes either from Last-Event-ID. */
static enum MHD_Result admin_run_events(struct MHD_Connection *c, const char *run_id)
{
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    long long after = 0;
    if (last && *last) {
        char *end;
        errno = 0;
        after = strtoll(last, &end, 10);
        if (errno || *end || after < 0)
            return reply_error(c, 400, "invalid_param", "Last-Event-ID is an event's number");
    } else if (!arg_ll(c, "after", &after)) {
        return reply_error(c, 400, "invalid_param", "after is an event's number");
    }
    live *l = live_find(run_id);
    if (l) {
        reader *rd = sl_xcalloc(1, sizeof *rd);
        rd->l = l;
        rd->c = c;
        rd->numbered = true;
        rd->next_ev = (size_t)after;
        sl_buf_init(&rd->out, 0);
        return sse_response(c, rd);
    }
    sl_value *run = sl_store_run_get(S.store, NULL, run_id);
    if (!run)
        return reply_error(c, 404, "not_found", "no run %s", run_id);
    const char *status = json_string_value(json_object_get(run, "status")) ?: "";
    bool running = !strcmp(status, "running") || !strcmp(status, "queued");
    json_decref(run);
    if (running && S.shared) /* another process runs it, or will */
        return remote_events(c, run_id, after);
    if (running) /* started a moment ago, or by another server on the store */
        return reply_error(c, 409, "run_running",
                           "run %s is running but not on this server; its events are kept when "
                           "it ends", run_id);
    sl_value *evs = sl_store_run_events(S.store, NULL, run_id);
    sl_buf out;
    sl_buf_init(&out, 0);
    size_t i;
    sl_value *e;
    json_array_foreach(evs, i, e) {
        if ((long long)i + 1 <= after)
            continue;
        char *text = json_dumps(e, JSON_COMPACT);
        if (text) {
            sl_buf_addf(&out, "id: %zu\ndata: %s\n\n", i + 1, text);
            free(text);
        }
    }
    json_decref(evs);
    size_t n = out.len;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(n, n ? sl_buf_detach(&out) : (void *)"",
                                        n ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    sl_buf_release(&out);
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* GET /admin/runs/ID: one run of any app. */
static enum MHD_Result admin_run_get(struct MHD_Connection *c, const char *run_id)
{
    sl_value *run = sl_store_run_get(S.store, NULL, run_id);
    live *l = run ? NULL : live_find(run_id);
    if (l) {
        /* started a moment ago: the store writes runs in groups, so its
         * row may not be there yet; what the server knows of it is */
        run = json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:f, s:i, s:i, s:I, s:n, s:s?, s:s?, s:s?}",
                        "id", l->id, "workflow_id", l->app_id, "status", "running", "inputs",
                        "outputs", "error", "elapsed_time", 0.0, "total_tokens", 0,
                        "total_steps", 0, "created_at", (json_int_t)l->created, "finished_at",
                        "user", l->user, "conversation_id", l->chat ? l->conversation_id : NULL,
                        "message_id", l->chat ? l->message_id : NULL);
        live_unref(l);
    }
    return run ? reply_json(c, 200, run) : reply_error(c, 404, "not_found", "no run %s", run_id);
}

/* POST /admin/runs/ID/stop: stops a run of any app, whoever started it;
 * {result: success, stopped}: stopped false when it had ended already. */
static enum MHD_Result admin_run_stop(struct MHD_Connection *c, const char *run_id)
{
    bool stopped = false;
    pthread_mutex_lock(&S.mu);
    for (live *l = S.lives; l; l = l->next)
        if (!strcmp(l->id, run_id)) {
            pthread_mutex_lock(&l->mu);
            if (l->run && !l->done) {
                sl_run_cancel(l->run);
                stopped = true;
            }
            pthread_mutex_unlock(&l->mu);
        }
    pthread_mutex_unlock(&S.mu);
    if (!stopped) {
        sl_value *run = sl_store_run_get(S.store, NULL, run_id);
        if (!run)
            return reply_error(c, 404, "not_found", "no run %s", run_id);
        const char *status = json_string_value(json_object_get(run, "status")) ?: "";
        bool running = !strcmp(status, "running") || !strcmp(status, "queued");
        json_decref(run);
        /* another process runs it (or it waits in line): the store tells
         * them all */
        sl_err err = {0};
        if (running && S.shared) {
            if (sl_store_stop_request(S.store, run_id, &err)) {
                enum MHD_Result r = reply_error(c, 503, "store_unavailable", "%s", err.msg);
                sl_err_clear(&err);
                return r;
            }
            stopped = true;
        }
    }
    return reply_json(c, 200, json_pack("{s:s, s:b}", "result", "success", "stopped", stopped));
}

static enum MHD_Result admin(struct MHD_Connection *c, const char *method, const char *path,
                             req *q)
{
    sl_err err = {0};
    enum MHD_Result ret;
    if (!strcmp(method, "POST") && !strcmp(path, "/apps")) {
        /* the body is a DSL file or a .zip bundle */
        sl_diag d;
        sl_diag_init(&d);
        char *id = NULL;
        sl_value *info = NULL;
        if (sl_apps_import(S.store, q->body.data ? q->body.data : "", q->body.len, "upload",
                           S.o.config, &id, &info, &d, &err))
            ret = reply_error(c, err.code == SL_EIO ? 500 : 400,
                              err.code == SL_EIO ? "internal_error" : "invalid_param",
                              "the app does not load: %s", d.n ? d.v[0].msg : err.msg);
        else
            ret = reply_json(c, 201, info);
        free(id);
        sl_diag_release(&d);
    } else if (!strcmp(method, "GET") && !strcmp(path, "/apps")) {
        sl_value *apps = NULL;
        ret = sl_store_app_list(S.store, &apps, &err) ? reply_error(c, 500, "internal_error", "%s", err.msg)
                                                       : reply_json(c, 200, json_pack("{s:o}", "data", apps));
    } else if (!strcmp(path, "/tools") || !strncmp(path, "/tools/", 7)) {
        ret = admin_tools(c, method, "", path + 6, q);
    } else if (!strcmp(method, "GET") && !strcmp(path, "/runs")) {
        ret = admin_runs(c);
    } else if (!strcmp(method, "GET") && (!strcmp(path, "/datasets") || !strncmp(path, "/datasets/", 10))) {
        /* the knowledge bases, read with the admin token (the console's
         * Knowledge page): the Knowledge API's GET routes, as a dataset
         * key reads them */
        ret = datasets(c, method, path, q);
    } else if (!strncmp(path, "/runs/", 6) && path[6]) {
        /* /runs/ID, /runs/ID/events, /runs/ID/stop */
        char id[128];
        const char *rest = strchr(path + 6, '/');
        size_t n = rest ? (size_t)(rest - path - 6) : strlen(path + 6);
        bool get = !strcmp(method, "GET");
        snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : 0), path + 6);
        if (n >= sizeof id)
            ret = reply_error(c, 404, "not_found", "no run %.40s...", path + 6);
        else if (get && !rest)
            ret = admin_run_get(c, id);
        else if (get && !strcmp(rest, "/events"))
            ret = admin_run_events(c, id);
        else if (!strcmp(method, "POST") && rest && !strcmp(rest, "/stop"))
            ret = admin_run_stop(c, id);
        else
            ret = reply_error(c, 404, "not_found", "%s %s is not an admin endpoint", method, path);
    } else if (!strncmp(path, "/apps/", 6)) {
        char id[64];
        const char *rest = strchr(path + 6, '/');
        snprintf(id, sizeof id, "%.*s", (int)(rest ? (size_t)(rest - path - 6) : strlen(path + 6)),
                 path + 6);
        const char *want_v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "version");
        if (rest && (!strcmp(rest, "/tools") || !strncmp(rest, "/tools/", 7))) {
            ret = admin_tools(c, method, id, rest + 6, q);
        } else if (!rest && !strcmp(method, "GET") && want_v) {
            char *dsl = NULL;
            if (sl_store_app_get_version(S.store, id, atoi(want_v), &dsl, &err)) {
                ret = reply_error(c, 404, "not_found", "%s", err.msg);
            } else {
                struct MHD_Response *r = MHD_create_response_from_buffer(strlen(dsl), dsl,
                                                                         MHD_RESPMEM_MUST_FREE);
                MHD_add_response_header(r, "Content-Type", "application/x-yaml");
                ret = MHD_queue_response(c, 200, r);
                MHD_destroy_response(r);
            }
        } else if (!rest && !strcmp(method, "PUT")) {
            /* a new version of the app: a DSL file or a .zip bundle */
            sl_diag d;
            sl_diag_init(&d);
            sl_value *info = NULL;
            if (sl_apps_update(S.store, id, q->body.data ? q->body.data : "", q->body.len,
                               "upload", S.o.config, &info, &d, &err))
                ret = reply_error(c, err.code == SL_EIO         ? 500
                                     : err.code == SL_ENOTFOUND ? 404 : 400,
                                  err.code == SL_EIO         ? "internal_error"
                                  : err.code == SL_ENOTFOUND ? "not_found" : "invalid_param",
                                  "the app does not load: %s", d.n ? d.v[0].msg : err.msg);
            else
                ret = reply_json(c, 200, info);
            sl_diag_release(&d);
        } else if (rest && !strcmp(rest, "/versions") && !strcmp(method, "GET")) {
            sl_value *vs = NULL;
            ret = sl_store_app_versions(S.store, id, &vs, &err)
                      ? reply_error(c, 404, "not_found", "%s", err.msg)
                      : reply_json(c, 200, json_pack("{s:o}", "data", vs));
        } else if (!rest && !strcmp(method, "GET")) {
            sl_buf out;
            sl_buf_init(&out, 0);
            bool zip;
            if (sl_apps_export(S.store, id, S.o.config, &out, &zip, &err)) {
                ret = reply_error(c, 404, "not_found", "%s", err.msg);
                sl_buf_release(&out);
            } else {
                size_t n = out.len;
                struct MHD_Response *r = MHD_create_response_from_buffer(
                    n, sl_buf_detach(&out), MHD_RESPMEM_MUST_FREE);
                MHD_add_response_header(r, "Content-Type",
                                        zip ? "application/zip" : "application/x-yaml");
                ret = MHD_queue_response(c, 200, r);
                MHD_destroy_response(r);
            }
        } else if (!rest && !strcmp(method, "DELETE")) {
            ret = sl_apps_delete(S.store, id, &err)
                      ? reply_error(c, 404, "not_found", "%s", err.msg)
                      : reply_json(c, 200, json_pack("{s:s}", "result", "success"));

        } else if (rest && !strcmp(rest, "/runs") && !strcmp(method, "POST")) {
            /* a run that goes on without this request: its events are
             * GET /admin/runs/ID/events */
            sl_value *body = body_json(q, c, &ret);
            if (body) {
                ret = app_exists(id) ? start_run(c, id, body, -1, true)
                                     : reply_error(c, 404, "not_found", "no app %s", id);
                json_decref(body);
            }
        } else if (rest && !strcmp(rest, "/graph") && !strcmp(method, "GET")) {
            char *dsl = NULL;
            sl_value *info = NULL;
            if (want_v ? sl_store_app_get_version(S.store, id, atoi(want_v), &dsl, &err)
                       : sl_store_app_get(S.store, id, &dsl, &info, &err)) {
                ret = reply_error(c, 404, "not_found", "%s", err.msg);
            } else {
                sl_value *gr = sl_apps_graph(dsl, strlen(dsl), &err);
                if (gr) {
                    json_object_set_new(gr, "id", json_string(id));
                    if (info)
                        json_object_set(gr, "version", json_object_get(info, "version"));
                }
                ret = gr ? reply_json(c, 200, gr) : reply_error(c, 400, "invalid_param", "%s", err.msg);
            }
            free(dsl);
            json_decref(info);
        } else if (rest && !strcmp(rest, "/keys") && !strcmp(method, "POST")) {
            char *key = NULL;
            ret = sl_store_key_create(S.store, id, &key, &err)
                      ? reply_error(c, 404, "not_found", "%s", err.msg)
                      : reply_json(c, 201, json_pack("{s:s}", "key", key));
            free(key);
        } else if (rest && !strcmp(rest, "/keys") && !strcmp(method, "GET")) {
            sl_value *keys = NULL;
            ret = sl_store_key_list(S.store, id, &keys, &err)
                      ? reply_error(c, 500, "internal_error", "%s", err.msg)
                      : reply_json(c, 200, json_pack("{s:o}", "data", keys));
        } else {
            ret = reply_error(c, 404, "not_found", "%s %s is not an admin endpoint", method, path);
        }
    } else if (!strcmp(method, "DELETE") && !strncmp(path, "/keys/", 6)) {
        ret = sl_store_key_revoke(S.store, path + 6, &err)
                  ? reply_error(c, 404, "not_found", "%s", err.msg)
                  : reply_json(c, 200, json_pack("{s:s}", "result", "success"));

    } else {
        ret = reply_error(c, 404, "not_found", "%s %s is not an admin endpoint", method, path);
    }
    sl_err_clear(&err);
    return ret;
}

static bool admin_ok(struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    return h && !strncasecmp(h, "Bearer ", 7) && sl_store_admin_ok(S.store, h + 7);
}

/* Why a request to the Knowledge API may not go on (Dify's 401 messages),
 * NULL when its key is a dataset key.  App keys open no knowledge base. */
static const char *auth_dataset(struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *sp = h ? strchr(h, ' ') : NULL;
    if (!sp)
        return "Authorization header must be provided and start with 'Bearer'";
    if ((size_t)(sp - h) != 6 || strncasecmp(h, "Bearer", 6))
        return "Authorization scheme must be 'Bearer'";
    if (!sl_store_dataset_key_ok(S.store, sp + 1))
        return "Access token is invalid: send Authorization: Bearer dataset-… with a key made "
               "by `sluice kb key create` (app keys do not open knowledge bases)";
    return NULL;
}

/* /admin/apps/ID/v1/…: the Service API of app ID with the admin token
 * (the console runs apps and uploads their files without minting app
 * keys); the length of "/admin/apps/ID/v1" and the id in *id, else 0. */
static size_t admin_v1(const char *url, char id[64])
{
    static const char pre[] = "/admin/apps/";
    if (strncmp(url, pre, sizeof pre - 1))
        return 0;
    const char *s = url + sizeof pre - 1;
    size_t n = strcspn(s, "/");
    if (!n || n >= 64 || strncmp(s + n, "/v1/", 4))
        return 0;
    memcpy(id, s, n);
    id[n] = 0;
    return sizeof pre - 1 + n + 3;
}

/* The web console's files (console.h), answered on the event loop: they
 * are in memory (or, with --console-dir, small files a developer serves). */
static enum MHD_Result console(struct MHD_Connection *c, const char *url)
{
    sl_console_file f;
    if (sl_console_get(url, S.o.console_dir, &f))
        return reply_error(c, 404, "not_found",
                           "%s is not a path sluice serves (/v1/…, /admin/…, the console's files)",
                           url);
    struct MHD_Response *r;
    unsigned status = 200;
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    if (inm && f.etag[0] && !strcmp(inm, f.etag)) {
        status = 304;
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "ETag", f.etag);
    } else {
        r = MHD_create_response_from_buffer(f.len, (void *)f.data,
                                            f.owned ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", f.type);
        if (f.etag[0])
            MHD_add_response_header(r, "ETag", f.etag);
    }
    for (size_t i = 0; sl_console_headers[i][0]; i++)
        MHD_add_response_header(r, sl_console_headers[i][0], sl_console_headers[i][1]);
    sl_console_file_release(&f);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A key or token was not found: 401, unless the store could not be asked
 * (a database that is down), which is 503, so a client retries rather
 * than drops a key that is fine. */
static enum MHD_Result unauthorized(struct MHD_Connection *c, const char *why)
{
    sl_err err = {0};
    enum MHD_Result r;
    if (sl_store_ping(S.store, &err))
        r = reply_error(c, 503, "store_unavailable",
                        "the store cannot be reached to check the key (%s); try again shortly",
                        err.msg ? err.msg : "?");
    else
        r = reply_error(c, 401, "unauthorized", "%s", why);
    sl_err_clear(&err);
    return r;
}

/* A request's headers have arrived, nothing of its body yet: everything
 * that can be refused is refused here, so a client without a key never
 * makes the server buffer or write a byte of its body (an answer queued
 * now also makes libmicrohttpd skip "100 Continue", drop the body and
 * close the connection). */
static enum MHD_Result on_headers(struct MHD_Connection *c, const char *url, const char *method,
                                  req *q)
{
    char via_admin[64];
    size_t at = admin_v1(url, via_admin);
    q->v1_at = 3;
    if (at) {
        if (!admin_ok(c))
            return unauthorized(c, "the admin API needs Authorization: Bearer <admin token> (the "
                                   "file admin-token in the data folder, or sluice store "
                                   "admin-token)");
        q->route = R_V1;  /* the app is looked up on the worker (serve_request) */
        q->app_id = sl_xstrdup(via_admin);
        q->v1_at = at;
    } else if (!strncmp(url, "/v1/", 4) && sl_datasets_path(url + 3))
        q->route = R_DATASETS;
    else if (!strncmp(url, "/v1/", 4) || !strcmp(url, "/v1"))
        q->route = R_V1;
    else if (!strncmp(url, "/admin/", 7))
        q->route = R_ADMIN;
    else if (!strcmp(url, "/health"))
        q->route = R_HEALTH;
    else if (!S.o.no_console && (!strcmp(method, "GET") || !strcmp(method, "HEAD")))
        q->route = R_CONSOLE; /* answered once the (empty) body is in: kept alive */
    else
        return reply_error(c, 404, "not_found", "%s is not a path sluice serves (/v1/…, /admin/…)",
                           url);
    if (q->route == R_V1 && !q->app_id && !(q->app_id = auth_app(c)))
        return unauthorized(c, "Access token is invalid: send Authorization: Bearer app-… with a "
                               "key of this app (sluice app key create APP_ID)");
    const char *why = q->route == R_DATASETS ? auth_dataset(c) : NULL;
    if (why)
        return reply_error(c, 401, "unauthorized", "%s", why);
    if (q->route == R_ADMIN && !admin_ok(c))
        return unauthorized(c, "the admin API needs Authorization: Bearer <admin token> (the file "
                               "admin-token in the data folder, or sluice store admin-token)");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > (unsigned long long)S.o.max_body_bytes)
        return reply_error(c, 413, "request_entity_too_large",
                           "the request body is larger than %d bytes", S.o.max_body_bytes);
    if ((q->route == R_V1 && !strcmp(method, "POST") && !strcmp(url + q->v1_at, "/files/upload")) ||
        (q->route == R_DATASETS && sl_datasets_upload(method, url + 3)))
        q->pp = MHD_create_post_processor(c, 65536, upload_part, q);
    /* from here the request is under way: the idle timeout, not the
     * header timeout, bounds its silences */
    if (q->route != R_HEALTH && q->route != R_CONSOLE && S.o.idle_timeout_s != S.o.header_timeout_s) {
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, S.o.idle_timeout_s);
        q->idle_timeout = true;
    }
    return MHD_YES;
}

/* Whether the store has app id (an admin request through /admin/apps/ID/v1). */
static bool app_exists(const char *id)
{
    char *dsl = NULL;
    sl_value *info = NULL;
    sl_err err = {0};
    bool there = !sl_store_app_get(S.store, id, &dsl, &info, &err);
    free(dsl);
    json_decref(info);
    sl_err_clear(&err);
    return there;
}

/* A worker answers the request (store reads and writes, a blocking run)
 * while its connection waits, suspended; resuming hands it back to the
 * event loop, which sends the answer queued meanwhile. */
static void serve_request(void *arg)
{
    req *q = arg;
    struct MHD_Connection *c = q->c;
    if (q->route == R_V1 && q->v1_at != 3 && !app_exists(q->app_id))
        reply_error(c, 404, "not_found", "no app %s", q->app_id);
    else if (q->route == R_V1)
        v1(c, q->method, q->url + q->v1_at, q);
    else if (q->route == R_DATASETS)
        datasets(c, q->method, q->url + 3, q);
    else
        admin(c, q->method, q->url + 6, q);
    MHD_resume_connection(c); /* q may be gone from here on */
    atomic_fetch_sub(&S.pending, 1);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls)
{
    (void)cls, (void)version;
    req *q = *con_cls;
    if (!q) {
        q = sl_xcalloc(1, sizeof *q);
        sl_buf_init(&q->body, (size_t)S.o.max_body_bytes);
        sl_buf_init(&q->form_data, (size_t)1 << 20);
        *con_cls = q;
        return on_headers(c, url, method, q);
    }
    if (*size) {
        if (q->route == R_HEALTH || q->route == R_CONSOLE)
            ; /* a body nobody reads is not kept */
        else if (q->pp) {
            if (MHD_post_process(q->pp, data, *size) != MHD_YES && !q->too_big)
                q->upload_failed = true;
        } else if (sl_buf_add(&q->body, data, *size)) {
            q->too_big = true;
        }
        *size = 0;
        return MHD_YES;
    }
    if (q->too_big)
        return reply_error(c, 413, "request_entity_too_large",
                           "the request body is larger than %d bytes", S.o.max_body_bytes);
    switch (q->route) {
    case R_V1:
    case R_ADMIN:
    case R_DATASETS:
        if (q->dispatched)
            return MHD_NO; /* back from the worker without an answer: close */
        atomic_fetch_add(&S.pending, 1);
        if (atomic_load(&S.closing)) {
            atomic_fetch_sub(&S.pending, 1);
            return reply_error(c, 503, "server_stopping", "the server is shutting down");
        }
        q->dispatched = true;
        q->c = c;
        q->method = method;
        q->url = url;
        MHD_suspend_connection(c);
        sl_workers_submit(S.workers, serve_request, q);
        return MHD_YES;
    case R_HEALTH:
        return reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
    case R_CONSOLE:
        return console(c, url);
    case R_NONE:
        break;
    }
    return MHD_NO;
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    req *q = *con_cls;
    /* a kept-alive connection now waits for its next request's headers */
    if (q && q->idle_timeout && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, S.o.header_timeout_s);
    if (q) {
        if (q->pp)
            MHD_destroy_post_processor(q->pp);
        sl_blob_abort(q->blob);  /* an upload that did not finish */
        sl_buf_release(&q->body);
        sl_buf_release(&q->form_data);
        free(q->app_id);
        free(q);
    }
    *con_cls = NULL;
}

void sl_server_opts_init(sl_server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->listen = "127.0.0.1:5001";
    o->max_body_bytes = 15 * 1024 * 1024;
    o->max_runs_per_app = 100;
    o->drain_s = 30;
    o->rate_limit = 0;
    o->max_connections = 10000;
    o->max_connections_per_ip = 2048;
    o->header_timeout_s = 10;
    o->idle_timeout_s = 60;
    o->max_event_bytes = (size_t)64 << 20;
    o->workers = -1;
    sl_limits_default(&o->limits);
}

/* libmicrohttpd's messages go through core/log, rate-limited per kind
 * (told apart by the library's format string, static text). */
static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = 0;
    char hint[96] = "";
    if (strstr(msg, "connection limit")) /* the library's text: say which of ours it is */
        snprintf(hint, sizeof hint, " (--max-connections %u, --max-connections-per-ip %u)",
                 S.o.max_connections, S.o.max_connections_per_ip);
    sl_log_site(SL_LOG_WARN, fmt, "libmicrohttpd: %s%s", msg, hint);
}

/* The first SIGINT/SIGTERM starts the drain; another one ends it: the
 * runs still going are stopped at once. */
static void on_signal(int sig)
{
    (void)sig;
    S.stopping = S.stopping < 2 ? S.stopping + 1 : 2;
}

int sl_server_run(sl_store *store, const sl_server_opts *o, sl_err *err)
{
    if (sl_mhd_load(err))
        return -1;
    sl_log_init(o->worker_only ? "worker" : "serve");
    memset(&S, 0, sizeof S);
    /* Two malloc arenas, not eight per core: connection threads come and
     * go, and every arena one touched keeps its own free memory, which
     * shows as resident memory long after a load. */
    mallopt(M_ARENA_MAX, 2);
    S.store = store;
    S.o = *o;
    pthread_mutex_init(&S.rmu, NULL);
    sl_apps_serve_workflows(store);
    pthread_mutex_init(&S.mu, NULL);
    /* a store shared by processes carries runs' events and stops: this
     * server streams and stops runs that others run (the store listens
     * until it is closed; on_store does nothing once the server ends) */
    if (sl_store_shared(store)) {
        sl_err lerr = {0};
        S.shared = !sl_store_listen(store, on_store, NULL, &lerr);
        if (!S.shared)
            sl_log(SL_LOG_ERROR, "runs of other servers cannot be streamed: %s", lerr.msg);
        sl_err_clear(&lerr);
        atomic_store(&S.listening, S.shared);
    }
    sl_map_init(&S.apps);
    sl_map_init(&S.keys);
    S.keys_version = sl_store_keys_version(store);
    pthread_mutex_init(&S.qmu, NULL);
    pthread_cond_init(&S.qcv, NULL);
    pthread_mutex_init(&S.wmu, NULL);
    const char *who = o->worker_only ? "sluice worker" : "sluice serve";
    if ((o->workers >= 0 || o->worker_only) && !S.shared) {
        atomic_store(&S.listening, false);
        return sl_err_set(err, SL_EINVAL, "%s: runs are queued only on a store that processes "
                          "share (PostgreSQL: --store postgres://…); with this one, one process "
                          "runs every run itself (leave out --workers)",
                          o->worker_only ? "sluice worker" : "--workers");
    }

    char host[128] = "";
    int port = 0;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    if (!o->worker_only) {
        const char *colon = strrchr(o->listen, ':');
        if (!colon || (port = atoi(colon + 1)) <= 0 || port > 65535 ||
            (size_t)(colon - o->listen) >= sizeof host)
            return sl_err_set(err, SL_EINVAL, "--listen '%s': use ADDR:PORT, e.g. 127.0.0.1:5001",
                              o->listen);
        snprintf(host, sizeof host, "%.*s", (int)(colon - o->listen), o->listen);
        addr.sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
            return sl_err_set(err, SL_EINVAL, "--listen '%s': '%s' is not an IPv4 address",
                              o->listen, host);
    }
    /* thousands of streaming clients need thousands of descriptors */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* Connections stay below the descriptor limit, with room for what runs
     * open (the store, sandboxes, model calls): accept() then never fails
     * for want of descriptors. */
    unsigned conns = S.o.max_connections;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)conns + 512) {
        conns = rl.rlim_cur > 576 ? (unsigned)(rl.rlim_cur - 512) : 64;
        fprintf(stderr, "sluice serve: at most %u connections (the descriptor limit is %llu; "
                        "raise it with ulimit -n for more)\n",
                conns, (unsigned long long)rl.rlim_cur);
        S.o.max_connections = conns;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned loops = cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned)cpus;
    signal(SIGPIPE, SIG_IGN);
    S.workers = sl_workers_new(MAX_WORKERS, 1 << 20);
    /* the Knowledge API's knowledge bases; the rest of the server works
     * without them, and /v1/datasets says why they are missing */
    /* a graph is built beside the searches, not in one of them */
    sl_kb_env kenv = {.store = store, .config = o->config, .background_graphs = true};
    sl_kb_limits_from(&kenv.limits, &S.o.limits);
    sl_err kerr = {0};
    if (!(S.kb = sl_kb_open(&kenv, &kerr))) {
        S.kb_error = sl_xstrdup(kerr.msg ? kerr.msg : "unknown error");
        sl_log(SL_LOG_ERROR, "knowledge bases unavailable: %s", S.kb_error);
    }
    sl_err_clear(&kerr);
    /* An event loop per core (epoll) serves every connection; nothing on
     * it waits: requests are answered by workers (serve_request) and SSE
     * readers suspend until their run's next event. */
    struct MHD_Daemon *d = o->worker_only ? NULL : MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handle, NULL, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
        MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_THREAD_POOL_SIZE, loops,
        MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_CONNECTION_LIMIT, conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, S.o.max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, S.o.header_timeout_s, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        1024u, MHD_OPTION_END);
    if (!d && !o->worker_only) {
        sl_workers_free(S.workers);
        if (S.kb)
            sl_kb_close(S.kb);
        free(S.kb_error);
        return sl_err_set(err, SL_EIO, "cannot listen on %s (%s); is the port in use?", o->listen,
                          strerror(errno));
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (d)
        fprintf(stderr, "sluice serve: listening on http://%s (Service API at /v1)\n", o->listen);
    if (d && !o->no_console)
        fprintf(stderr, "sluice serve: web console at http://%s/ (sign in with the admin token)\n",
                o->listen);
    /* a process with room claims queued runs */
    if (S.shared && o->workers != 0) {
        S.claiming = !pthread_create(&S.claimer, NULL, claimer_main, NULL);
        if (!S.claiming)
            sl_log(SL_LOG_ERROR, "queued runs cannot be claimed: no thread for it");
        else if (o->worker_only && o->workers > 0)
            fprintf(stderr, "sluice worker: running queued runs, %d at a time\n", o->workers);
        else if (o->worker_only)
            fprintf(stderr, "sluice worker: running queued runs\n");
    }
    /* idle: give memory freed by finished requests back to the system,
     * after 0.5 s and again once the idle workers have exited (2 s after
     * their last task; a tick later, when their thread caches are back) */
    int idle = 0, gone = 0;
    while (!S.stopping) {
        usleep(250000);
        ping_readers();
        if (atomic_load(&S.active) == 0 && atomic_load(&S.pending) == 0) {
            idle += idle < 1000;
            gone = sl_workers_threads(S.workers) == 0 ? gone + 1 : 0;
            if (idle == 2 || (idle > 2 && idle < 1000 && gone == 2)) {
                sl_store_release_memory(S.store);
                malloc_trim(0);
                if (idle > 2)
                    idle = 1000; /* done until the next load */
            }
        } else {
            idle = 0;
        }
    }
    /* drain: no new runs (none claimed); running ones get drain_s, then
     * they are stopped; requests waiting on runs elsewhere are answered */
    if (S.claiming) {
        claimer_wake();
        pthread_join(S.claimer, NULL);
    }
    waiters_wake(NULL);
    fprintf(stderr, "%s: stopping; %d run(s) still going\n", who, atomic_load(&S.active));
    if (d)
        MHD_quiesce_daemon(d);
    double t0 = sl_clock_s();
    for (;;) {
        double el = sl_clock_s() - t0;
        if (atomic_load(&S.active) == 0)
            break;
        if (el > o->drain_s || S.stopping > 1) {
            pthread_mutex_lock(&S.mu);
            for (live *l = S.lives; l; l = l->next) {
                pthread_mutex_lock(&l->mu);
                if (l->run)
                    sl_run_cancel(l->run);
                pthread_mutex_unlock(&l->mu);
            }
            pthread_mutex_unlock(&S.mu);
        }
        ping_readers();
        usleep(20000);
    }
    /* No connection may be suspended when the daemon stops: requests a
     * worker still answers are waited for, and new ones are answered 503
     * on the event loop (see handle). */
    atomic_store(&S.closing, 1);
    for (int i = 0; i < 500 && (atomic_load(&S.pending) || atomic_load(&S.suspended)); i++) {
        ping_readers();
        usleep(10000);
    }
    if (d)
        MHD_stop_daemon(d);
    sl_workers_free(S.workers);
    for (size_t i = 0; i < S.apps.cap; i++)
        if (S.apps.slots && S.apps.slots[i].key) {
            app *a = S.apps.slots[i].val;
            sl_graph_release(&a->g);
            free(a);
        }
    sl_map_release(&S.apps);
    for (app *a = S.retired, *next; a; a = next) {
        next = a->retired;
        sl_graph_release(&a->g);
        free(a);
    }
    for (size_t i = 0; i < S.keys.cap; i++)
        if (S.keys.slots && S.keys.slots[i].key)
            free(S.keys.slots[i].val);
    sl_map_release(&S.keys);
    if (S.kb)
        sl_kb_close(S.kb);
    free(S.kb_error);

    atomic_store(&S.listening, false);
    pthread_mutex_lock(&S.rmu);  /* an on_store under way ends first */
    pthread_mutex_unlock(&S.rmu);
    pthread_mutex_destroy(&S.mu);
    pthread_mutex_destroy(&S.qmu);
    pthread_cond_destroy(&S.qcv);
    pthread_mutex_destroy(&S.wmu);
    fprintf(stderr, "%s: stopped\n", who);
    return 0;
}
