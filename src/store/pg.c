/*
 * store/pg — the PostgreSQL backend of the store (see store.h), for several
 * servers sharing one database.  The location is a libpq URI:
 * "postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=require" or
 * "postgresql:///DB?host=/run/postgresql&user=NAME".
 *
 * libpq is loaded when a store opens (core/dl.h), as libsqlite3 is.  A
 * small pool of connections, made on demand, lends one to each operation
 * (or transaction) and takes it back; one the server dropped (a restart,
 * pg_terminate_backend) is dropped from the pool, and when an operation
 * meets it before it did anything on it, the operation runs again on a
 * new one, so the store keeps working once the server is back.  Every
 * statement is PQexecParams with the data as parameters ($1, $2, …); only
 * migrations are SQL text alone.
 *
 * The tables and columns are SQLite's (store/sqlite.c), in PostgreSQL's
 * types, with four differences: blobs are rows (parts of 1 MiB, visible
 * once committed), the admin token is a row of meta, keys_version is a
 * counter in meta that every change of keys, apps and tool bindings bumps
 * in its own transaction, and messages carry an identity column (seq) for
 * the order SQLite's rowid gives.  Knowledge bases are store/pg_kb.c's;
 * apps' bundle files are in the folder $SLUICE_FILES_DIR names (app_dir).
 * Runs may also be queued and claimed (runs as jobs, store.h).
 *
 * Errors say what failed and PostgreSQL's message, prefixed "store:", and
 * never show the location's password.  All functions are thread-safe.
 */
#include "store/pg_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/dl.h"
#include "core/log.h"
#include "core/rand.h"
#include "core/sha256.h"

#define PQ_PTR(f) __typeof__(pq_##f) pq_##f;
PQ_FNS(PQ_PTR)
#undef PQ_PTR
#define PQ_SYM(f) {#f, (void **)&pq_##f},
static const sl_dl_sym pq_syms[] = {PQ_FNS(PQ_SYM){NULL, NULL}};
#undef PQ_SYM
static const char *const pq_names[] = {"libpq.so.5", "libpq.so", NULL};
static sl_dl_lib pq_lib = {.what = "libpq", .sonames = pq_names, .package = "libpq5",
                           .syms = pq_syms};


/* Migrations, by the number they have in both backends.  A new PostgreSQL
 * store starts at SQLite's 12 (the baseline below makes what SQLite's 1-12
 * end with); a migration 13 is added to both lists under that number.
 * Each runs once, in the transaction that records it in sluice_migrations. */
static const struct {
    int version;
    const char *sql;
} migrations[] = {
    {12,
     /* ids that lists order or page by compare as bytes, as in SQLite */
     "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
     "INSERT INTO meta(key, value) VALUES('keys_version', '1');"
     "CREATE TABLE apps(id TEXT COLLATE \"C\" PRIMARY KEY, name TEXT NOT NULL,"
     "  mode TEXT NOT NULL, dsl TEXT NOT NULL, created_at BIGINT NOT NULL,"
     "  version INTEGER NOT NULL DEFAULT 1);"
     "CREATE TABLE app_versions(app_id TEXT NOT NULL, version INTEGER NOT NULL,"
     "  dsl TEXT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY(app_id, version));"
     "CREATE TABLE app_keys(id TEXT COLLATE \"C\" PRIMARY KEY, app_id TEXT NOT NULL,"
     "  hash TEXT NOT NULL UNIQUE, hint TEXT NOT NULL, created_at BIGINT NOT NULL,"
     "  revoked_at BIGINT);"
     "CREATE INDEX app_keys_app ON app_keys(app_id);"
     "CREATE TABLE runs(id TEXT COLLATE \"C\" PRIMARY KEY, app_id TEXT NOT NULL,"
     "  task_id TEXT NOT NULL, \"user\" TEXT, conversation_id TEXT, message_id TEXT,"
     "  status TEXT NOT NULL, inputs TEXT, outputs TEXT, error TEXT, elapsed DOUBLE PRECISION,"
     "  total_tokens BIGINT DEFAULT 0, total_steps BIGINT DEFAULT 0,"
     "  created_at BIGINT NOT NULL, finished_at BIGINT, app_version INTEGER);"
     "CREATE INDEX runs_app ON runs(app_id, created_at);"
     "CREATE INDEX runs_running ON runs(status) WHERE status = 'running';"
     "CREATE INDEX runs_created ON runs(created_at, id);"
     "CREATE TABLE run_log(run_id TEXT PRIMARY KEY, events TEXT NOT NULL);"
     "CREATE TABLE conversations(id TEXT COLLATE \"C\" PRIMARY KEY, app_id TEXT NOT NULL,"
     "  \"user\" TEXT, name TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);"
     "CREATE INDEX conv_app ON conversations(app_id, \"user\", updated_at);"
     /* seq: the order of insertion, which SQLite's rowid gives */
     "CREATE TABLE messages(id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL,"
     "  app_id TEXT NOT NULL, query TEXT, answer TEXT, run_id TEXT,"
     "  created_at BIGINT NOT NULL, feedback TEXT, seq BIGINT GENERATED ALWAYS AS IDENTITY);"
     "CREATE INDEX msg_conv ON messages(conversation_id, created_at);"
     "CREATE INDEX msg_run ON messages(run_id);"
     "CREATE TABLE files(id TEXT PRIMARY KEY, app_id TEXT NOT NULL, name TEXT NOT NULL,"
     "  size BIGINT NOT NULL, mime TEXT, \"user\" TEXT, created_at BIGINT NOT NULL);"
     "CREATE TABLE tool_bindings(scope TEXT PRIMARY KEY, spec TEXT NOT NULL,"
     "  updated_at BIGINT NOT NULL);"
     /* node executions, read from each run's event log (events stay TEXT,
      * as jsonb refuses the \\u0000 a run's output may hold) */
     "CREATE VIEW node_executions AS SELECT l.run_id AS run_id,"
     "  e->'data'->>'id' AS id, e->'data'->>'node_id' AS node_id,"
     "  e->'data'->>'node_type' AS node_type, e->'data'->>'title' AS title,"
     "  (e->'data'->>'index')::bigint AS step, e->'data'->>'status' AS status,"
     "  e->'data'->'inputs' AS inputs, e->'data'->'process_data' AS process_data,"
     "  e->'data'->'outputs' AS outputs, e->'data'->>'error' AS error,"
     "  (e->'data'->>'elapsed_time')::double precision AS elapsed,"
     "  e->'data'->'execution_metadata' AS metadata,"
     "  (e->'data'->>'created_at')::bigint AS created_at,"
     "  (e->'data'->>'finished_at')::bigint AS finished_at"
     " FROM run_log l, jsonb_array_elements(l.events::jsonb) e"
     " WHERE e->>'event' = 'node_finished';"
     /* knowledge: SQLite's tables (store/pg_kb.c keeps them; migration 16
      * adds what its queries want) */
     "CREATE TABLE kb(n BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  id TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE, info TEXT NOT NULL,"
     "  generation BIGINT NOT NULL DEFAULT 0, chunks_generation BIGINT NOT NULL DEFAULT 0,"
     "  created_at BIGINT NOT NULL, kw INTEGER NOT NULL DEFAULT 0,"
     "  kw_rows BIGINT NOT NULL DEFAULT 0, kw_tokens BIGINT NOT NULL DEFAULT 0);"
     "CREATE TABLE kb_docs(n BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  id TEXT NOT NULL UNIQUE, kb BIGINT NOT NULL, info TEXT NOT NULL,"
     "  created_at BIGINT NOT NULL, kw_rows BIGINT NOT NULL DEFAULT 0,"
     "  kw_tokens BIGINT NOT NULL DEFAULT 0, kw_seg BIGINT NOT NULL DEFAULT 0);"
     "CREATE INDEX kb_docs_kb ON kb_docs(kb, created_at);"
     "CREATE TABLE kb_chunks(n BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  id TEXT NOT NULL, kb BIGINT NOT NULL, doc BIGINT NOT NULL, parent BIGINT NOT NULL,"
     "  position INTEGER NOT NULL, content TEXT NOT NULL, fts TEXT, info TEXT, vec BYTEA);"
     "CREATE INDEX kb_chunks_doc ON kb_chunks(doc, parent);"
     "CREATE INDEX kb_chunks_vec ON kb_chunks(kb) WHERE vec IS NOT NULL;"
     "CREATE TABLE kb_segs(n BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
     "  kb BIGINT NOT NULL, level INTEGER NOT NULL, doc BIGINT NOT NULL DEFAULT 0);"
     "CREATE INDEX kb_segs_kb ON kb_segs(kb, level);"
     "CREATE TABLE kb_pages(seg BIGINT NOT NULL, first TEXT NOT NULL, data BYTEA NOT NULL,"
     "  PRIMARY KEY(seg, first));"
     "CREATE TABLE kb_dead(kb BIGINT NOT NULL, first BIGINT NOT NULL, last BIGINT NOT NULL);"
     "CREATE INDEX kb_dead_kb ON kb_dead(kb);"
     /* blobs (SQLite keeps them as files): a writer's parts go under the id
      * of its row in blob_writes and become the blob when its row in blobs
      * is made; parts are stored as they are (most uploads are compressed
      * already) */
     "CREATE TABLE blob_writes(id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
     "  key TEXT NOT NULL, started_at BIGINT NOT NULL);"
     "CREATE TABLE blob_parts(id BIGINT NOT NULL, part INTEGER NOT NULL, data BYTEA NOT NULL,"
     "  PRIMARY KEY(id, part));"
     "ALTER TABLE blob_parts ALTER COLUMN data SET STORAGE EXTERNAL;"
     "CREATE TABLE blobs(key TEXT PRIMARY KEY, id BIGINT NOT NULL UNIQUE,"
     "  size BIGINT NOT NULL, created_at BIGINT NOT NULL);"},
    /* 13: a running run's lease: the process that runs it (owner, one id
     * per open store) renews lease_until while it lives; a run whose lease
     * ran out is failed by whoever sees it, and its owner writes nothing
     * more to it */
    {13,
     "ALTER TABLE runs ADD COLUMN owner TEXT;"
     "ALTER TABLE runs ADD COLUMN lease_until BIGINT;"
     "CREATE INDEX runs_owner ON runs(owner) WHERE status = 'running';"},
    /* 14: a running run's events as they happen, for the other processes
     * (announced on channel sluice_events); they go to run_log at its end */
    {14,
     "CREATE TABLE run_events(run_id TEXT NOT NULL, seq BIGINT NOT NULL, data TEXT NOT NULL,"
     "  PRIMARY KEY(run_id, seq));"},
    /* 15: runs as jobs.  A run request is a row (status 'queued', its
     * request, qseq its place in line); a process claims it with SKIP
     * LOCKED, which raises its epoch: every later write of that attempt
     * names the epoch, so an attempt whose lease ran out writes nothing.
     * attempts: how often it was claimed; reply: its blocking answer. */
    {15,
     "ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE runs ADD COLUMN request TEXT;"
     "ALTER TABLE runs ADD COLUMN reply TEXT;"
     "ALTER TABLE runs ADD COLUMN qseq BIGINT;"
     "CREATE SEQUENCE run_queue;"
     "CREATE INDEX runs_queued ON runs(qseq) WHERE status = 'queued';"
     /* --max-runs counts an app's runs going, at every request; runs_owner
      * (the same rows) serves what runs_running did, and each change of a
      * run's status writes one index entry less */
     "CREATE INDEX runs_app_going ON runs(app_id) WHERE status IN ('running', 'queued');"
     "DROP INDEX runs_running;"
     /* runs' logs compressed with lz4 where the server has it (pglz cost
      * a run's end more than its insert) */
     "DO $$ BEGIN ALTER TABLE run_log ALTER COLUMN events SET COMPRESSION lz4;"
     " EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL; END $$;"
     /* --rate-limit across processes: a token bucket per app, kept out
      * of the WAL (lost at a crash, which only refills them) */
     "CREATE UNLOGGED TABLE rate_buckets(key TEXT PRIMARY KEY,"
     "  tokens DOUBLE PRECISION NOT NULL, at DOUBLE PRECISION NOT NULL);"},
    /* 16: knowledge bases (store/pg_kb.c) */
    {16, pg_kb_migration},
};

/* Any number: the advisory lock migrations take, so two processes
 * starting at once apply them one after the other. */
#define MIGRATION_LOCK "7308604759281526121"

typedef struct pub_item {
    struct pub_item *next;
    char *run_id, *text;
    long long seq, epoch;
    double ready;     /* when it may be written (its run is PUB_WAIT_US old); 0: now */
} pub_item;

/* ---- writes of runs, committed in groups ----
 * A busy process starts, queues and ends runs by the hundred a second;
 * each in a transaction of its own would wait for the disk once per run
 * (fsync at every commit, PostgreSQL's default durability).  They go
 * through one thread instead, which runs every statement waiting in one
 * transaction and commits them together: a caller returns, as before,
 * once its write is on disk.  When the group fails, each statement runs
 * again alone, so each caller gets its own answer. */

typedef struct gw_op {
    struct gw_op *next;
    const char *what, *sql;
    int n;
    const char *const *v;     /* the caller's: it waits until done */
    PGresult *res;
    sl_err err;
    bool done;
} gw_op;

#define GW_MAX 256  /* statements one group holds at most */

static void *grouper_main(void *arg)
{
    sl_store_be *b = arg;
    pthread_mutex_lock(&b->gw_mu);
    for (;;) {
        while (!b->gw_head && !b->stop)
            pthread_cond_wait(&b->gw_cv, &b->gw_mu);
        if (!b->gw_head)
            break;  /* stopping, all done */
        gw_op *group = b->gw_head, *last = group;
        for (int k = 1; k < GW_MAX && last->next; k++)
            last = last->next;
        b->gw_head = last->next;
        if (!b->gw_head)
            b->gw_tail = NULL;
        last->next = NULL;
        pthread_mutex_unlock(&b->gw_mu);
        pg_conn x;
        sl_err err = {0};
        /* a connection not had is not given back (its place is free) */
        bool took = !pg_take(b, &x, &err);
        bool ok = took && !pg_begin(&x, &err);
        for (gw_op *op = group; op && ok; op = op->next)
            ok = (op->res = pg_qp(&x, op->what, op->sql, op->n, op->v, &err)) != NULL;
        if (took)
            ok = !pg_end_tx(&x, ok ? 0 : -1, &err) && ok;
        sl_err_clear(&err);
        for (gw_op *op = group; op && !ok; op = op->next) {
            PQclear(op->res);  /* rolled back: each alone now */
            op->res = pg_q1p(b, op->what, op->sql, op->n, op->v, &op->err);
        }
        pthread_mutex_lock(&b->gw_mu);
        for (gw_op *op = group, *next; op; op = next) {
            next = op->next;
            op->done = true;
        }
        pthread_cond_broadcast(&b->gw_cv);
    }
    pthread_mutex_unlock(&b->gw_mu);
    return NULL;
}

/* pg_q1, committed with the other writes waiting meanwhile. */
static PGresult *pg_grouped(sl_store_be *b, const char *what, const char *sql, int n,
                            const char *const *v, sl_err *err)
{
    if (!b->grouping)
        return pg_q1p(b, what, sql, n, v, err);
    gw_op op = {.what = what, .sql = sql, .n = n, .v = v};
    pthread_mutex_lock(&b->gw_mu);
    if (b->gw_tail)
        b->gw_tail->next = &op;
    else
        b->gw_head = &op;
    b->gw_tail = &op;
    pthread_cond_broadcast(&b->gw_cv);
    while (!op.done)
        pthread_cond_wait(&b->gw_cv, &b->gw_mu);
    pthread_mutex_unlock(&b->gw_mu);
    if (!op.res) {
        sl_err_set(err, op.err.code ? op.err.code : SL_EIO, "%s",
                   op.err.msg ? op.err.msg : "store: the write failed");
        sl_err_clear(&op.err);
    }
    return op.res;
}

/* ---- the epoch of each run this process runs ---- */

static void epoch_set(sl_store_be *b, const char *run_id, long long epoch)
{
    pthread_mutex_lock(&b->mu);
    size_t i = 0;
    while (i < b->nepochs && strcmp(b->epochs[i].id, run_id))
        i++;
    if (i == b->nepochs) {
        if (b->nepochs == b->epochs_cap) {
            b->epochs_cap = b->epochs_cap ? 2 * b->epochs_cap : 64;
            b->epochs = sl_xrealloc(b->epochs, b->epochs_cap * sizeof *b->epochs);
        }
        snprintf(b->epochs[b->nepochs++].id, sizeof b->epochs->id, "%s", run_id);
    }
    b->epochs[i].epoch = epoch;
    b->epochs[i].carried = 0;
    b->epochs[i].pending = 0;
    b->epochs[i].since = sl_clock_s();
    pthread_mutex_unlock(&b->mu);
}

/* The run's epoch here (0: not this process's); drop: forget it;
 * *carried (may be NULL): how many of its events the publisher took. */
static long long epoch_of(sl_store_be *b, const char *run_id, bool drop, long long *carried)
{
    long long e = 0;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < b->nepochs; i++)
        if (!strcmp(b->epochs[i].id, run_id)) {
            e = b->epochs[i].epoch;
            if (carried)
                *carried = b->epochs[i].carried;
            if (drop)
                b->epochs[i] = b->epochs[--b->nepochs];
            break;
        }
    pthread_mutex_unlock(&b->mu);
    return e;
}

long long pg_now_s(void)
{
    return (long long)time(NULL);
}

const char *pg_ll(char buf[24], long long v)
{
    snprintf(buf, 24, "%lld", v);
    return buf;
}


/* ---- messages without the password ---- */

static void replace_all(sl_buf *out, const char *s, const char *what, const char *with)
{
    size_t n = strlen(what);
    for (const char *p; n && (p = strstr(s, what));) {
        sl_buf_add(out, s, (size_t)(p - s));
        sl_buf_adds(out, with);
        s = p + n;
    }
    sl_buf_adds(out, s);
}

/* A message of libpq or the server fit for an error (heap): the
 * passwords masked, on one line, without the statement excerpt
 * ("LINE 1: …"). */
static char *tidy(const sl_store_be *b, const char *msg)
{
    char *m = sl_xstrdup(msg ? msg : "");
    for (int i = 0; i < b->npw; i++) {
        if (!*b->pw[i])
            continue;
        sl_buf o;
        sl_buf_init(&o, 0);
        replace_all(&o, m, b->pw[i], "***");
        free(m);
        m = sl_buf_detach(&o);
    }
    char *end = strstr(m, "\nLINE ");
    if (end)
        *end = 0;
    sl_buf t;
    sl_buf_init(&t, 0);
    bool space = false;
    for (const char *c = m; *c; c++) {
        if (*c == '\n' || *c == '\t' || *c == ' ' || *c == '\r') {
            space = true;
            continue;
        }
        if (space && t.len)
            sl_buf_addc(&t, ' ');
        space = false;
        sl_buf_addc(&t, *c);
    }
    free(m);
    return sl_buf_detach(&t);
}

/* %XX sequences decoded (heap). */
static char *pct_decode(const char *s, size_t n)
{
    char *o = sl_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int h = i + 2 < n && s[i] == '%' ? sl_hex_digit(s[i + 1]) : -1;
        int l = h >= 0 ? sl_hex_digit(s[i + 2]) : -1;
        if (l >= 0) {
            o[k++] = (char)(h * 16 + l);
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = 0;
    return o;
}

/* Keeps a password found in the location, as written and decoded. */
static void add_password(sl_store_be *b, const char *at, size_t n)
{
    if (b->npw + 2 > MAX_PW)
        return;
    b->pw[b->npw++] = sl_xstrndup(at, n);
    b->pw[b->npw++] = pct_decode(at, n);
}

/* Finds the passwords in the URI (its user info's, password=
 * parameters'): b->pw, and b->shown, the location with them masked. */
static void find_password(sl_store_be *b, const char *uri)
{
    sl_buf s;
    sl_buf_init(&s, 0);
    const char *auth = strstr(uri, "//");
    auth = auth ? auth + 2 : uri;
    const char *auth_end = auth + strcspn(auth, "/?");
    const char *at = NULL;
    for (const char *p = auth; p < auth_end; p++)
        if (*p == '@')
            at = p;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    const char *done = uri;  /* copied to s up to here */
    if (colon) {
        sl_buf_add(&s, done, (size_t)(colon + 1 - done));
        sl_buf_adds(&s, "***");
        add_password(b, colon + 1, (size_t)(at - colon - 1));
        done = at;
    }
    for (const char *p = strchr(auth_end, '?'); p; p = strchr(p, '&')) {
        p++;
        if (!strncmp(p, "password=", 9)) {
            size_t n = strcspn(p + 9, "&");
            sl_buf_add(&s, done, (size_t)(p + 9 - done));
            sl_buf_adds(&s, "***");
            add_password(b, p + 9, n);
            done = p + 9 + n;
        }
    }
    sl_buf_adds(&s, done);
    b->shown = sl_buf_detach(&s);
}

/* ---- the pool ---- */


static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* After a connection fails, the next ones within DOWN_MS fail at once
 * with the same reason: a server that is down (or a host that does not
 * answer, where each try waits out connect_timeout) costs every caller
 * one try per DOWN_MS, not one each. */
#define DOWN_MS 1000

static PGconn *connect_new(sl_store_be *b, sl_err *err)
{
    pthread_mutex_lock(&b->mu);
    bool down = b->down_why && sl_clock_s() < b->down_until;
    char *why_down = down ? sl_xstrdup(b->down_why) : NULL;
    pthread_mutex_unlock(&b->mu);
    if (down) {
        sl_err_set(err, SL_EIO, "%s", why_down);
        free(why_down);
        return NULL;
    }
    /* the location's own settings win: it comes last */
    static const char *const kw[] = {"connect_timeout", "fallback_application_name",
                                      "client_encoding", "dbname", NULL};
    const char *const val[] = {"10", "sluice", "UTF8", b->conninfo, NULL};
    PGconn *c = PQconnectdbParams(kw, val, 1);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        char *why = tidy(b, c ? PQerrorMessage(c) : "out of memory");
        sl_err_set(err, SL_EIO, "store: cannot connect to PostgreSQL at %s: %s", b->shown, why);
        free(why);
        if (c)
            PQfinish(c);
        pthread_mutex_lock(&b->mu);
        free(b->down_why);
        b->down_why = sl_xstrdup(err && err->msg ? err->msg : "store: PostgreSQL is down");
        b->down_until = sl_clock_s() + DOWN_MS / 1000.0;
        pthread_mutex_unlock(&b->mu);
        return NULL;
    }
    /* "already exists, skipping" and the like are no one's business */
    PQsetNoticeProcessor(c, ignore_notice, NULL);
    return c;
}

static void place_freed(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    b->nopen--;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Lends a connection: an idle one, else a new one while there are fewer
 * than POOL_MAX, else the first one given back. */
int pg_take(sl_store_be *b, pg_conn *x, sl_err *err)
{
    memset(x, 0, sizeof *x);
    x->b = b;
    pthread_mutex_lock(&b->mu);
    while (!b->nidle && b->nopen >= POOL_MAX)
        pthread_cond_wait(&b->cv, &b->mu);
    if (b->nidle) {
        x->c = b->idle[--b->nidle];
        x->reused = true;
        pthread_mutex_unlock(&b->mu);
        return 0;
    }
    b->nopen++;
    pthread_mutex_unlock(&b->mu);
    if (!(x->c = connect_new(b, err))) {
        place_freed(b);
        return -1;
    }
    return 0;
}

static void prep_forget(sl_store_be *b, PGconn *c);
static void keys_changed(sl_store_be *b);

/* Takes it back: kept when it is sound and outside a transaction. */
void pg_give(pg_conn *x)
{
    sl_store_be *b = x->b;
    if (x->c && (PQstatus(x->c) != CONNECTION_OK || PQtransactionStatus(x->c) != PQTRANS_IDLE)) {
        prep_forget(b, x->c);
        PQfinish(x->c);
        x->c = NULL;
    }
    if (!x->c) {
        place_freed(b);
        return;
    }
    pthread_mutex_lock(&b->mu);
    b->idle[b->nidle++] = x->c;
    x->c = NULL;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Runs a statement: its result (the caller PQclears it), or NULL with err
 * ("store: WHAT: PostgreSQL's message").  len/fmt: NULL for text
 * parameters; binary: results in binary (bytea as its bytes). */
/* Forgets what was prepared on c (before it is finished: another
 * connection may come at its address). */
static void prep_forget(sl_store_be *b, PGconn *c)
{
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < sizeof b->prep / sizeof *b->prep; i++)
        if (b->prep[i].c == c)
            b->prep[i].c = NULL;
    pthread_mutex_unlock(&b->mu);
}

/* sql prepared on c (as "sN"), or NULL when there is no room to keep
 * it: then it runs unprepared. */
static PGresult *exec_prepared(sl_store_be *b, PGconn *c, const char *sql, int n,
                               const char *const *v)
{
    char name[16];
    int k = -1;
    struct pg_prep *p = NULL;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < sizeof b->prep / sizeof *b->prep && !p; i++)
        if (b->prep[i].c == c)
            p = &b->prep[i];
    for (size_t i = 0; i < sizeof b->prep / sizeof *b->prep && !p; i++)
        if (!b->prep[i].c) {
            p = &b->prep[i];
            p->c = c;
            p->n = 0;
        }
    for (int i = 0; p && i < p->n && k < 0; i++)
        if (p->sql[i] == sql)
            k = i;
    bool fresh = p && k < 0 && p->n < (int)(sizeof p->sql / sizeof *p->sql);
    if (fresh)
        k = p->n;
    pthread_mutex_unlock(&b->mu);
    if (k < 0)
        return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
    snprintf(name, sizeof name, "s%d", k);
    if (fresh) {
        PGresult *r = PQprepare(c, name, sql, n, NULL);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
            return r;  /* its error is the statement's */
        PQclear(r);
        pthread_mutex_lock(&b->mu);
        if (p->c == c && p->n == k)
            p->sql[p->n++] = sql;
        pthread_mutex_unlock(&b->mu);
    }
    return PQexecPrepared(c, name, n, v, NULL, NULL, 0);
}

static PGresult *run_any(pg_conn *x, const char *what, const char *sql, int n,
                         const char *const *v, const int *len, const int *fmt, int binary,
                         bool prep, sl_err *err)
{
    x->state[0] = 0;
    if (!x->c) {
        sl_err_set(err, SL_EIO, "store: %s: the connection to PostgreSQL was lost", what);
        return NULL;
    }
    for (;;) {
        PGresult *r = prep ? exec_prepared(x->b, x->c, sql, n, v)
                           : PQexecParams(x->c, sql, n, NULL, v, len, fmt, binary);
        ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            x->used = true;
            return r;
        }
        char *why = tidy(x->b, r ? PQresultErrorMessage(r) : PQerrorMessage(x->c));
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        snprintf(x->state, sizeof x->state, "%s", state ? state : "");
        PQclear(r);
        if (PQstatus(x->c) == CONNECTION_BAD) {
            /* the server dropped it (a restart, an admin): never again */
            prep_forget(x->b, x->c);
            PQfinish(x->c);
            x->c = NULL;
            if (x->reused && !x->used) {
                /* nothing ran on it: all again, on a new one */
                free(why);
                x->reused = false;
                if (!(x->c = connect_new(x->b, err)))
                    return NULL;
                continue;
            }
            sl_err_set(err, SL_EIO, "store: %s: the connection to PostgreSQL was lost: %s", what,
                       why);
        } else {
            sl_err_set(err, SL_EIO, "store: %s: %s", what, why);
        }
        free(why);
        return NULL;
    }
}

PGresult *pg_run(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                 const int *len, const int *fmt, int binary, sl_err *err)
{
    return run_any(x, what, sql, n, v, len, fmt, binary, false, err);
}

PGresult *pg_qx(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                    sl_err *err)
{
    return run_any(x, what, sql, n, v, NULL, NULL, 0, false, err);
}

PGresult *pg_qp(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                sl_err *err)
{
    return run_any(x, what, sql, n, v, NULL, NULL, 0, true, err);
}

PGresult *pg_q1p(sl_store_be *b, const char *what, const char *sql, int n, const char *const *v,
                 sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return NULL;
    PGresult *r = pg_qp(&x, what, sql, n, v, err);
    pg_give(&x);
    return r;
}

/* One statement on a connection of its own. */
PGresult *pg_q1(sl_store_be *b, const char *what, const char *sql, int n,
                    const char *const *v, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return NULL;
    PGresult *r = pg_qx(&x, what, sql, n, v, err);
    pg_give(&x);
    return r;
}

/* q1 for operations that have no err: a failure is logged (the caller
 * only sees "none") */
/* pg_q1p so: for SQL the program holds for good. */
static PGresult *pg_q1p_logged(sl_store_be *b, const char *what, const char *sql, int n,
                               const char *const *v)
{
    sl_err err = {0};
    PGresult *r = pg_q1p(b, what, sql, n, v, &err);
    if (!r)
        sl_log_site(SL_LOG_WARN, what, "%s", err.msg ? err.msg : "store: failed");
    sl_err_clear(&err);
    return r;
}

PGresult *pg_q1_logged(sl_store_be *b, const char *what, const char *sql, int n,
                           const char *const *v)
{
    sl_err err = {0};
    PGresult *r = pg_q1(b, what, sql, n, v, &err);
    if (!r)
        sl_log_site(SL_LOG_WARN, what, "%s", err.msg ? err.msg : "store: failed");
    sl_err_clear(&err);
    return r;
}

/* The number of rows a statement changed; the result is cleared. */
int pg_changed(PGresult *r)
{
    int n = r ? atoi(PQcmdTuples(r)) : -1;
    PQclear(r);
    return n;
}

int pg_begin(pg_conn *x, sl_err *err)
{
    PGresult *r = pg_qx(x, "begin a transaction", "BEGIN", 0, NULL, err);
    PQclear(r);
    return r ? 0 : -1;
}

/* Commits when rc is 0, else rolls back; gives the connection back.
 * Returns rc, or -1 when the commit failed. */
int pg_end_tx(pg_conn *x, int rc, sl_err *err)
{
    if (x->c && PQtransactionStatus(x->c) != PQTRANS_IDLE) {
        if (!rc) {
            PGresult *r = pg_qx(x, "commit", "COMMIT", 0, NULL, err);
            rc = r ? 0 : -1;
            PQclear(r);
        } else {
            PQclear(PQexec(x->c, "ROLLBACK"));
        }
    }
    if (x->bumped)  /* a read of keys_version that began before the commit is not kept */
        keys_changed(x->b);
    pg_give(x);
    return rc;
}

bool pg_has_row(PGresult *r)
{
    return r && PQntuples(r) > 0;
}

const char *pg_val(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

sl_value *pg_col_str(PGresult *r, int row, int col)
{
    const char *t = pg_val(r, row, col);
    sl_value *v = t ? json_string(t) : NULL;
    return v ? v : json_null();
}

long long pg_col_ll(PGresult *r, int row, int col)
{
    const char *t = pg_val(r, row, col);
    return t ? strtoll(t, NULL, 10) : 0;
}

sl_value *pg_col_int(PGresult *r, int row, int col)
{
    return pg_val(r, row, col) ? json_integer(pg_col_ll(r, row, col)) : json_null();
}

double pg_col_double(PGresult *r, int row, int col)
{
    const char *t = pg_val(r, row, col);
    return t ? strtod(t, NULL) : 0;
}

sl_value *pg_col_json(PGresult *r, int row, int col)
{
    const char *t = pg_val(r, row, col);
    sl_value *v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : json_null();
}

char *pg_json_or_null(const sl_value *v)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

/* ---- open / close ---- */

static int migrate(pg_conn *x, sl_err *err)
{
    int want = migrations[sizeof migrations / sizeof *migrations - 1].version;
    if (pg_begin(x, err))
        return -1;
    PGresult *r = pg_qx(x, "lock the schema", "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK ")", 0,
                     NULL, err);
    PQclear(r);
    if (r) {
        r = pg_qx(x, "make sluice_migrations",
               "CREATE TABLE IF NOT EXISTS sluice_migrations(version INTEGER PRIMARY KEY,"
               " applied_at BIGINT NOT NULL)",
               0, NULL, err);
        PQclear(r);
    }
    if (r)
        r = pg_qx(x, "read sluice_migrations",
               "SELECT coalesce(max(version), 0) FROM sluice_migrations", 0, NULL, err);
    if (!r)
        return pg_end_tx(x, -1, err);
    int have = (int)pg_col_ll(r, 0, 0);
    PQclear(r);
    if (have > want) {
        sl_err_set(err, SL_EUNSUPPORTED,
                   "store: the database is at schema %d, newer than this sluice knows (%d); use "
                   "a newer sluice",
                   have, want);
        return pg_end_tx(x, -1, err);
    }
    for (size_t i = 0; i < sizeof migrations / sizeof *migrations; i++) {
        if (migrations[i].version <= have)
            continue;
        PGresult *m = PQexec(x->c, migrations[i].sql);
        if (!m || PQresultStatus(m) != PGRES_COMMAND_OK) {
            char *why = tidy(x->b, m ? PQresultErrorMessage(m) : PQerrorMessage(x->c));
            sl_err_set(err, SL_EIO, "store: migration %d: %s", migrations[i].version, why);
            free(why);
            PQclear(m);
            return pg_end_tx(x, -1, err);
        }
        PQclear(m);
        char v[24], t[24];
        r = pg_qx(x, "record a migration",
               "INSERT INTO sluice_migrations(version, applied_at) VALUES($1, $2)",
               ARGS(pg_ll(v, migrations[i].version), pg_ll(t, pg_now_s())), err);
        PQclear(r);
        if (!r)
            return pg_end_tx(x, -1, err);
    }
    return pg_end_tx(x, 0, err);
}

/* Parts of blobs whose writer died (a day is longer than any upload). */
static void sweep_blobs(sl_store_be *b)
{
    pg_conn x;
    if (pg_take(b, &x, NULL))
        return;
    char t[24];
    pg_ll(t, pg_now_s() - 86400);
    int rc = pg_begin(&x, NULL);
    if (!rc)
        rc = pg_changed(pg_qx(&x, "sweep blob parts",
                        "DELETE FROM blob_parts WHERE id IN"
                        " (SELECT id FROM blob_writes WHERE started_at < $1)",
                        ARGS(t), NULL)) < 0 ||
             pg_changed(pg_qx(&x, "sweep blob writes", "DELETE FROM blob_writes WHERE started_at < $1",
                        ARGS(t), NULL)) < 0;
    pg_end_tx(&x, rc ? -1 : 0, NULL);
}

static void be_free(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_broadcast(&b->stop_cv);
    pthread_mutex_unlock(&b->mu);
    if (b->leasing)
        pthread_join(b->leaser, NULL);
    if (b->grouping) {
        pthread_mutex_lock(&b->gw_mu);
        pthread_cond_broadcast(&b->gw_cv);  /* it sees stop, does what is left, ends */
        pthread_mutex_unlock(&b->gw_mu);
        pthread_join(b->grouper, NULL);
    }
    if (b->listening)
        pthread_join(b->listener, NULL);
    if (b->publishing) {
        pthread_mutex_lock(&b->pub_mu);
        pthread_cond_broadcast(&b->pub_cv);  /* it sees stop, writes what is left, ends */
        pthread_mutex_unlock(&b->pub_mu);
        pthread_join(b->publisher, NULL);
    }
    for (pub_item *it = b->pub_head, *next; it; it = next) {
        next = it->next;
        free(it->run_id);
        free(it->text);
        free(it);
    }
    pthread_mutex_destroy(&b->pub_mu);
    pthread_cond_destroy(&b->pub_cv);
    pthread_mutex_destroy(&b->gw_mu);
    pthread_cond_destroy(&b->gw_cv);
    pthread_cond_destroy(&b->stop_cv);
    for (int i = 0; i < b->nidle; i++)
        PQfinish(b->idle[i]);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->conninfo);
    free(b->epochs);
    free(b->down_why);
    free(b->shown);
    for (int i = 0; i < b->npw; i++)
        free(b->pw[i]);
    free(b);
}

/* ---- events carried to other processes ---- */

#define PUB_MAX 200000  /* events queued at most (PostgreSQL down): older ones go */
#define PUB_ROWS 500    /* events one INSERT writes */
#define PUB_WAIT_US 1000 /* how long a new run's events wait (it may end by then) */

static bool stopping(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    bool st = b->stop;
    pthread_mutex_unlock(&b->mu);
    return st;
}

/* Writes a batch in one transaction and announces each run in it once:
 * a reader fetches whatever is new, so one NOTIFY per run per batch does. */
/* Appends s to an array literal's text ({"a","b"}), quoted. */
static void array_item(sl_buf *a, const char *s)
{
    sl_buf_adds(a, a->len > 1 ? ",\"" : "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sl_buf_addc(a, '\\');
        sl_buf_addc(a, *s);
    }
    sl_buf_addc(a, '"');
}

/* Writes a batch in one transaction: its events (items with seq >= 0),
 * then every word it holds (seq < 0: run_id the channel, text the
 * payload) and each run with new events once on sluice_events (a reader
 * fetches whatever is new), in one statement. */
static void pub_write(sl_store_be *b, pub_item *batch)
{
    pg_conn x;
    sl_err err = {0};
    bool events = false;
    for (pub_item *it = batch; it && !events; it = it->next)
        events = it->seq >= 0;
    bool took = !pg_take(b, &x, &err);
    /* words alone go in one statement of their own transaction; events
     * and their words in one transaction */
    int rc = took ? (events ? pg_begin(&x, &err) : 0) : -1;
    /* one statement per PUB_ROWS events: a round trip each is what a
     * burst of events (quick nodes) would otherwise wait on */
    for (pub_item *it = batch; it && !rc;) {
        sl_buf q;
        sl_buf_init(&q, 0);
        /* only the attempt that holds the run writes: its owner and epoch */
        sl_buf_adds(&q, "INSERT INTO run_events(run_id, seq, data) SELECT v.r, v.s, v.d FROM"
                        " (VALUES");
        const char *v[4 * PUB_ROWS + 1];
        char seqs[PUB_ROWS][24], eps[PUB_ROWS][24];
        int k = 0;
        for (; it && k < PUB_ROWS; it = it->next) {
            if (it->seq < 0)
                continue;
            sl_buf_addf(&q, "%s($%d, $%d::bigint, $%d, $%d::int)", k ? "," : "", 4 * k + 2,
                        4 * k + 3, 4 * k + 4, 4 * k + 5);
            v[4 * k + 1] = it->run_id;
            v[4 * k + 2] = pg_ll(seqs[k], it->seq);
            v[4 * k + 3] = it->text;
            v[4 * k + 4] = pg_ll(eps[k], it->epoch);
            k++;
        }
        v[0] = b->owner;
        sl_buf_adds(&q, ") v(r, s, d, e) JOIN runs ON runs.id = v.r AND runs.owner = $1"
                        " AND runs.epoch = v.e ON CONFLICT DO NOTHING");
        if (k)
            rc = pg_changed(pg_qx(&x, "carry runs' events", q.data, 4 * k + 1, v, &err)) < 0;
        sl_buf_release(&q);
    }
    sl_buf chans, pays;
    sl_buf_init(&chans, 0);
    sl_buf_init(&pays, 0);
    sl_buf_addc(&chans, '{');
    sl_buf_addc(&pays, '{');
    for (pub_item *it = batch; it && !rc; it = it->next) {
        bool seen = false;
        for (pub_item *o = batch; o != it && !seen && it->seq >= 0; o = o->next)
            seen = o->seq >= 0 && !strcmp(o->run_id, it->run_id);
        if (seen)
            continue;
        array_item(&chans, it->seq < 0 ? it->run_id : "sluice_events");
        array_item(&pays, it->seq < 0 ? it->text : it->run_id);
    }
    sl_buf_addc(&chans, '}');
    sl_buf_addc(&pays, '}');
    /* carried events are copies for the run's lifetime (its end keeps
     * them all), and words are hints (those waiting look again every
     * second): neither waits for the disk (synchronous_commit off for
     * this transaction, set in its last statement, before its commit).
     * A NOTIFY holds a lock of the whole database from its commit until
     * that commit is on disk, so durable writes leave theirs to this
     * transaction (pg_note) rather than take turns at the disk. */
    if (!rc && chans.len > 2)
        rc = pg_changed(pg_qp(&x, "announce runs' events",
                              "SELECT set_config('synchronous_commit', 'off', true),"
                              " pg_notify(c, p) FROM unnest($1::text[], $2::text[]) t(c, p)",
                              ARGS(chans.data, pays.data), &err)) < 0;
    sl_buf_release(&chans);
    sl_buf_release(&pays);
    if (took)
        rc = pg_end_tx(&x, rc, &err);
    if (rc)
        sl_log_site(SL_LOG_WARN, "pub_write", "%s (other servers streaming these runs miss "
                    "events until their end)", err.msg ? err.msg : "store: events not carried");
    sl_err_clear(&err);
}

static void *publisher_main(void *arg)
{
    sl_store_be *b = arg;
    pthread_mutex_lock(&b->pub_mu);
    for (;;) {
        while (!b->pub_head && !stopping(b))
            pthread_cond_wait(&b->pub_cv, &b->pub_mu);
        if (!b->pub_head)
            break;  /* stopping, all written */
        /* The events of a run younger than PUB_WAIT_US wait: a run that
         * ends by then needs none carried (its log has them, pub_forget).
         * The rest go now, in order (a run's events are all young or all
         * not), with every word. */
        bool all = stopping(b);
        double now = sl_clock_s(), soonest = 0;
        pub_item *batch = NULL, **bt = &batch;
        for (pub_item **p = &b->pub_head, *prev = NULL; *p;) {
            pub_item *it = *p;
            if (!all && it->ready > now) {
                soonest = soonest == 0 || it->ready < soonest ? it->ready : soonest;
                prev = it;
                p = &it->next;
                continue;
            }
            *p = it->next;
            if (b->pub_tail == it)
                b->pub_tail = prev;
            b->pub_n--;
            it->next = NULL;
            *bt = it;
            bt = &it->next;
        }
        if (!batch) {  /* only young runs' events: until the first is ready */
            struct timespec ts = sl_clock_wall_in(soonest - now + 1e-6);
            pthread_cond_timedwait(&b->pub_cv, &b->pub_mu, &ts);
            continue;
        }
        pthread_mutex_lock(&b->mu);
        for (pub_item *it = batch, *prev = NULL; it; prev = it, it = it->next)
            if (!prev || strcmp(it->run_id, prev->run_id))  /* runs' events come in runs */
                for (size_t i = 0; i < b->nepochs; i++)
                    if (!strcmp(b->epochs[i].id, it->run_id)) {
                        b->epochs[i].carried++;
                        break;
                    }
        pthread_mutex_unlock(&b->mu);
        pthread_mutex_unlock(&b->pub_mu);
        pub_write(b, batch);
        pthread_mutex_lock(&b->pub_mu);
        pthread_mutex_lock(&b->mu);  /* each run's events written: pub_forget waits on it */
        for (pub_item *it = batch; it; it = it->next)
            if (it->seq >= 0)
                for (size_t i = 0; i < b->nepochs; i++)
                    if (!strcmp(b->epochs[i].id, it->run_id)) {
                        b->epochs[i].pending--;
                        break;
                    }
        pthread_mutex_unlock(&b->mu);
        pthread_cond_broadcast(&b->pub_cv);
        for (pub_item *it = batch, *next; it; it = next) {
            next = it->next;
            free(it->run_id);
            free(it->text);
            free(it);
        }
    }
    pthread_mutex_unlock(&b->pub_mu);
    return NULL;
}

static bool pg_shared(sl_store_be *b)
{
    (void)b;
    return true;
}

static void pub_add(sl_store_be *b, pub_item *it);

static void pg_event_publish(sl_store_be *b, const char *run_id, long long seq, const char *text,
                             size_t len)
{
    pub_item *it = sl_xcalloc(1, sizeof *it);
    it->run_id = sl_xstrdup(run_id);
    it->text = sl_xmalloc(len + 1);
    memcpy(it->text, text, len);
    it->text[len] = 0;
    it->seq = seq;
    pub_add(b, it);
}

/* Says payload on channel soon, once the caller's transaction is over:
 * with the publisher's next batch (see pub_write). */
static void pg_note(sl_store_be *b, const char *channel, const char *payload)
{
    pub_item *it = sl_xcalloc(1, sizeof *it);
    it->run_id = sl_xstrdup(channel);
    it->text = sl_xstrdup(payload);
    it->seq = -1;
    pub_add(b, it);
}

static void pub_add(sl_store_be *b, pub_item *it)
{
    pthread_mutex_lock(&b->pub_mu);
    if (it->seq >= 0) {  /* an event: its attempt, when it may go, one more pending */
        pthread_mutex_lock(&b->mu);
        for (size_t i = 0; i < b->nepochs; i++)
            if (!strcmp(b->epochs[i].id, it->run_id)) {
                it->epoch = b->epochs[i].epoch;
                it->ready = b->epochs[i].since + PUB_WAIT_US / 1e6;
                b->epochs[i].pending++;
                break;
            }
        pthread_mutex_unlock(&b->mu);
    }
    if (b->pub_n >= PUB_MAX) {  /* the oldest goes: readers get the rest at the run's end */
        pub_item *old = b->pub_head;
        b->pub_head = old->next;
        if (!b->pub_head)
            b->pub_tail = NULL;
        b->pub_n--;
        pthread_mutex_lock(&b->mu);
        for (size_t i = 0; i < b->nepochs && old->seq >= 0; i++)
            if (!strcmp(b->epochs[i].id, old->run_id)) {
                b->epochs[i].pending--;
                break;
            }
        pthread_mutex_unlock(&b->mu);
        free(old->run_id);
        free(old->text);
        free(old);
    }
    if (b->pub_tail)
        b->pub_tail->next = it;
    else
        b->pub_head = it;
    b->pub_tail = it;
    b->pub_n++;
    pthread_cond_broadcast(&b->pub_cv);
    pthread_mutex_unlock(&b->pub_mu);
}

static sl_value *pg_events_since(sl_store_be *b, const char *run_id, long long after)
{
    char a[24];
    PGresult *r = pg_q1p_logged(b, "read a run's carried events",
                            "SELECT seq, data FROM run_events WHERE run_id=$1 AND seq > $2"
                            " ORDER BY seq",
                            ARGS(run_id, pg_ll(a, after)));
    if (!r)
        return NULL;
    sl_value *out = json_array();
    for (int i = 0; i < PQntuples(r); i++)
        json_array_append_new(out, json_pack("{s:I, s:s}", "seq", (json_int_t)pg_col_ll(r, i, 0),
                                             "text", pg_val(r, i, 1)));
    PQclear(r);
    return out;
}

/* Runs whose lease ran out are not counted: they are failed soon. */
static long long pg_running(sl_store_be *b, const char *app_id)
{
    char t[24];
    /* those in line count too: --max-runs bounds what an app has going */
    PGresult *r = pg_q1p_logged(b, "count an app's running runs",
                            "SELECT count(*) FROM runs WHERE app_id=$1"
                            " AND status IN ('running', 'queued')"
                            " AND (lease_until IS NULL OR lease_until >= $2)",
                            ARGS(app_id, pg_ll(t, pg_now_s())));
    long long n = r && PQntuples(r) ? pg_col_ll(r, 0, 0) : -1;
    PQclear(r);
    return n;
}

/* A run still in line is stopped here and now; one that runs, by its
 * process, told on sluice_stop.  run_id may be "task\tAPP\tTASK\tUSER"
 * (a /v1 stop, by task id and only for that user). */
static int pg_stop_request(sl_store_be *b, const char *run_id, sl_err *err)
{
    char t[24];
    char *f = sl_xstrdup(run_id), *save = NULL;
    bool task = !strncmp(f, "task\t", 5);
    const char *app = task ? strtok_r(f + 5, "\t", &save) : NULL;
    const char *tid = task ? strtok_r(NULL, "\t", &save) : NULL;
    const char *user = task ? strtok_r(NULL, "\t", &save) : NULL;
    PGresult *r = pg_q1p(b, "stop a queued run",
                        "WITH s AS (UPDATE runs SET status='stopped', error='the run was stopped"
                        " before it started', finished_at=$5, reply=NULL WHERE status='queued' AND"
                        " CASE WHEN $2::text IS NULL THEN id=$1 ELSE app_id=$2 AND task_id=$3"
                        " AND coalesce(nullif(\"user\", ''), '" SL_STORE_DEFAULT_USER "')"
                        " = coalesce(nullif($4, ''), '" SL_STORE_DEFAULT_USER "') END"
                        " RETURNING id) SELECT pg_notify('sluice_done', id) FROM s",
                        ARGS(run_id, app, tid, user, pg_ll(t, pg_now_s())), err);
    free(f);
    if (!r)
        return -1;
    bool stopped = PQntuples(r) > 0;
    PQclear(r);
    if (stopped)
        return 0;
    return pg_changed(pg_q1p(b, "ask for a run to stop", "SELECT pg_notify('sluice_stop', $1)",
                      ARGS(run_id), err)) < 0 ? -1 : 0;
}

/* LISTEN on a connection of its own; told of every notification, and of
 * each time the connection was lost (notifications meanwhile are gone,
 * so the caller looks again at what it follows). */
static void *listener_main(void *arg)
{
    sl_store_be *b = arg;
    PGconn *c = NULL;
    double backoff = 0.1;
    bool was_up = true;
    while (!stopping(b)) {
        if (!c) {
            sl_err err = {0};
            c = connect_new(b, &err);
            PGresult *r = c ? PQexec(c, "LISTEN sluice_events; LISTEN sluice_stop;"
                                        " LISTEN sluice_queue; LISTEN sluice_done;"
                                        " LISTEN sluice_keys")
                            : NULL;
            bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
            PQclear(r);
            if (!ok) {
                if (was_up)
                    sl_log_site(SL_LOG_WARN, "listener_main", "%s (events and stops from other "
                                "servers wait for it)", err.msg ? err.msg : "store: LISTEN failed");
                sl_err_clear(&err);
                if (c)
                    PQfinish(c);
                c = NULL;
                was_up = false;
                usleep((useconds_t)(backoff * 1e6));
                backoff = backoff * 2 > 2 ? 2 : backoff * 2;
                continue;
            }
            keys_changed(b);  /* what was said meanwhile is not known */
            pthread_mutex_lock(&b->mu);
            b->keys_heard = true;
            pthread_mutex_unlock(&b->mu);
            if (!was_up)
                b->listen_fn("lost", NULL, b->listen_ud);  /* what came meanwhile */
            was_up = true;
            backoff = 0.1;
        }
        struct pollfd pfd = {.fd = PQsocket(c), .events = POLLIN};
        int pr = poll(&pfd, 1, 250);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        if (!PQconsumeInput(c) || PQstatus(c) == CONNECTION_BAD) {
            PQfinish(c);
            c = NULL;
            pthread_mutex_lock(&b->mu);
            b->keys_heard = false;
            pthread_mutex_unlock(&b->mu);
            b->listen_fn("lost", NULL, b->listen_ud);
            was_up = false;
            continue;
        }
        PGnotify *n;
        while ((n = PQnotifies(c))) {
            /* sluice_NAME: "events", "stop", "queue", "done"; "keys" is the store's */
            const char *what = !strncmp(n->relname, "sluice_", 7) ? n->relname + 7 : "events";
            if (!strcmp(what, "keys")) {
                keys_changed(b);
                PQfreemem(n);
                continue;
            }
            b->listen_fn(what, !strcmp(what, "queue") ? NULL : n->extra, b->listen_ud);
            PQfreemem(n);
        }
    }
    if (c)
        PQfinish(c);
    return NULL;
}

static int pg_listen(sl_store_be *b, sl_store_listen_fn fn, void *ud, sl_err *err)
{
    if (b->listening)
        return sl_err_set(err, SL_EINVAL, "store: already listening");
    b->listen_fn = fn;
    b->listen_ud = ud;
    if (pthread_create(&b->listener, NULL, listener_main, b))
        return sl_err_set(err, SL_EIO, "store: cannot start the thread that listens");
    b->listening = true;
    return 0;
}

/* ---- run leases ---- */

#define LEASE_S 15  /* how long a run outlives its process, at most */

static int lease_seconds(void)
{
    const char *e = getenv("SLUICE_RUN_LEASE_S");
    long v = e && *e ? strtol(e, NULL, 10) : 0;
    return v >= 1 && v <= 3600 ? (int)v : LEASE_S;
}

/* Fails the runs whose lease ran out (their process is gone, or was cut
 * off from the database for longer than the lease); how many. */
static int expire_leases(sl_store_be *b)
{
    char t[24];
    /* and each is announced, so servers streaming it end their streams */
    /* a run whose request says "retry" goes back in line (three attempts
     * at most), its carried events gone: the next attempt starts over */
    PGresult *r = pg_q1p_logged(b, "fail runs whose process stopped",
                            "WITH gone AS (UPDATE runs SET"
                            " status=CASE WHEN again THEN 'queued' ELSE 'failed' END,"
                            " error=CASE WHEN again THEN NULL ELSE 'interrupted: the process "
                            "running it stopped (its lease ran out) before the run ended' END,"
                            " finished_at=CASE WHEN again THEN NULL ELSE $1 END,"
                            " qseq=CASE WHEN again THEN nextval('run_queue') ELSE qseq END,"
                            " owner=NULL, lease_until=NULL"
                            " FROM (SELECT id AS gid, coalesce(request::jsonb->>'retry', '')"
                            " = 'true' AND attempts < 3 AS again FROM runs WHERE"
                            " status='running' AND lease_until < $1 FOR UPDATE SKIP LOCKED) g"
                            " WHERE runs.id = g.gid RETURNING id, again),"
                            " cleared AS (DELETE FROM run_events WHERE run_id IN"
                            " (SELECT id FROM gone WHERE again))"
                            " SELECT pg_notify(CASE WHEN again THEN 'sluice_queue' ELSE"
                            " 'sluice_done' END, CASE WHEN again THEN '' ELSE id END),"
                            " pg_notify('sluice_events', id) FROM gone",
                            ARGS(pg_ll(t, pg_now_s())));
    int n = r ? PQntuples(r) : 0;
    PQclear(r);
    return n;
}

/* Every third of a lease: this process's runs are renewed, others' that
 * ran out are failed (and said, as a restarted server says them). */
static void *leaser_main(void *arg)
{
    sl_store_be *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->stop) {
        struct timespec ts = sl_clock_wall_in(b->lease_s / 3.0);
        pthread_cond_timedwait(&b->stop_cv, &b->mu, &ts);
        if (b->stop)
            break;
        pthread_mutex_unlock(&b->mu);
        char t[24];
        /* the runs this process holds, not every row naming it (an end
         * it could not write, a claim whose answer was lost) */
        sl_buf ids;
        sl_buf_init(&ids, 0);
        sl_buf_addc(&ids, '{');
        pthread_mutex_lock(&b->mu);
        for (size_t i = 0; i < b->nepochs; i++)
            sl_buf_addf(&ids, "%s\"%s\"", i ? "," : "", b->epochs[i].id);
        pthread_mutex_unlock(&b->mu);
        sl_buf_addc(&ids, '}');
        if (ids.len > 2)
        PQclear(pg_q1p_logged(b, "renew this process's run leases",
                          /* rows another transaction holds (a group of ends) are
                           * skipped, not waited for: they are ending, and a
                           * wait could close a cycle of locks */
                          "UPDATE runs SET lease_until=$2 WHERE id IN (SELECT id FROM runs"
                          " WHERE id = ANY($3::text[]) AND owner=$1 AND status='running'"
                          " FOR UPDATE SKIP LOCKED)",
                          ARGS(b->owner, pg_ll(t, pg_now_s() + b->lease_s), ids.data)));
        sl_buf_release(&ids);
        int n = expire_leases(b);
        /* not rate-limited as sl_log is (a second go within its window
         * would be counted, not told): this says at most once a third of
         * a lease, and an operator adds them up */
        if (n)
            fprintf(stderr, "sluice: store: %d run(s) were running in a process that stopped; "
                    "they are failed (interrupted), or queued again where their app opts in\n",
                    n);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

static int pg_open(const char *where, sl_store_be **out, int *interrupted, sl_err *err)
{
    *out = NULL;
    *interrupted = 0;
    /* the rest is not shown: it may hold a password */
    if (strncmp(where, "//", 2))
        return sl_err_set(err, SL_EINVAL,
                          "store: a PostgreSQL location is a URI: "
                          "postgres://USER:PASSWORD@HOST:PORT/DB or "
                          "postgresql:///DB?host=/run/postgresql");
    if (sl_dl_load(&pq_lib, err))
        return sl_err_prefix(err, "store");
    sl_store_be *b = sl_xcalloc(1, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    pthread_cond_init(&b->stop_cv, NULL);
    pthread_mutex_init(&b->pub_mu, NULL);
    pthread_cond_init(&b->pub_cv, NULL);
    pthread_mutex_init(&b->gw_mu, NULL);
    pthread_cond_init(&b->gw_cv, NULL);
    b->lease_s = lease_seconds();
    b->conninfo = sl_xasprintf("postgresql:%s", where);
    find_password(b, b->conninfo);
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(b->conninfo, &perr);
    if (!opts) {
        char *why = tidy(b, perr ? perr : "out of memory");
        sl_err_set(err, SL_EINVAL, "store: the PostgreSQL location %s is not a valid URI: %s",
                   b->shown, why);
        free(why);
        PQfreemem(perr);
        be_free(b);
        return -1;
    }
    PQconninfoFree(opts);
    pg_conn x;
    if (pg_take(b, &x, err)) {
        be_free(b);
        return -1;
    }
    int rc = migrate(&x, err);
    if (rc) {
        be_free(b);
        return -1;
    }
    sweep_blobs(b);
    /* Runs left 'running' by a process that died are not all marked failed
     * here, as SQLite's open does: other processes share the database and
     * their runs are running.  A run's lease says: those whose lease ran
     * out are failed now, the rest when theirs does (the leaser). */
    if (sl_rand_uuid(b->owner, err)) {
        be_free(b);
        return -1;
    }
    *interrupted = expire_leases(b);
    b->leasing = !pthread_create(&b->leaser, NULL, leaser_main, b);
    b->publishing = !pthread_create(&b->publisher, NULL, publisher_main, b);
    b->grouping = !pthread_create(&b->grouper, NULL, grouper_main, b);
    *out = b;
    return 0;
}

static void pg_close(sl_store_be *b)
{
    if (b)
        be_free(b);
}

static int pg_ping(sl_store_be *b, sl_err *err)
{
    PGresult *r = pg_q1p(b, "reach PostgreSQL", "SELECT 1", 0, NULL, err);
    PQclear(r);
    return r ? 0 : -1;
}

/* Idle connections but one are closed (each holds a server process). */
static void pg_release_memory(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    while (b->nidle > 1) {
        for (size_t i = 0; i < sizeof b->prep / sizeof *b->prep; i++)  /* prep_forget, mu held */
            if (b->prep[i].c == b->idle[0])
                b->prep[i].c = NULL;
        PQfinish(b->idle[0]);
        memmove(b->idle, b->idle + 1, (size_t)(b->nidle - 1) * sizeof *b->idle);
        b->nidle--;
        b->nopen--;
    }
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* ---- apps ---- */

/* In a transaction: servers drop their caches of keys and apps (keys_version). */
static void keys_changed(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    b->keys_gen++;
    b->keys_valid = false;
    pthread_mutex_unlock(&b->mu);
}

/* In a transaction: said to every process at its commit (sluice_keys;
 * rare, so it may wait for the disk), and here at once (pg_end_tx). */
static int bump_keys(pg_conn *x, sl_err *err)
{
    x->bumped = true;
    keys_changed(x->b);
    return pg_changed(pg_qx(x, "note the change of keys",
                      "WITH u AS (UPDATE meta SET value = (value::bigint + 1)::text"
                      " WHERE key='keys_version' RETURNING 1)"
                      " SELECT pg_notify('sluice_keys', '') FROM u",
                      0, NULL, err)) < 0
               ? -1
               : 0;
}

static int no_app(sl_err *err, const char *id)
{
    return sl_err_set(err, SL_ENOTFOUND, "no app with id '%s' (sluice app list shows them)", id);
}

static int pg_app_add(sl_store_be *b, const char *name, const char *mode, const char *dsl,
                      char **id, sl_err *err)
{
    char u[37], t[24];
    *id = NULL;
    if (sl_rand_uuid(u, err))
        return -1;
    pg_ll(t, pg_now_s());
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err) ||
             pg_changed(pg_qx(&x, "add an app",
                        "INSERT INTO apps(id, name, mode, dsl, created_at, version)"
                        " VALUES($1, $2, $3, $4, $5, 1)",
                        ARGS(u, name, mode, dsl, t), err)) < 0 ||
             pg_changed(pg_qx(&x, "add an app's first version",
                        "INSERT INTO app_versions(app_id, version, dsl, created_at)"
                        " VALUES($1, 1, $2, $3)",
                        ARGS(u, dsl, t), err)) < 0;
    if (pg_end_tx(&x, rc ? -1 : 0, err))
        return -1;
    *id = sl_xstrdup(u);
    return 0;
}

static int pg_app_update(sl_store_be *b, const char *id, const char *name, const char *mode,
                         const char *dsl, int *version, sl_err *err)
{
    char t[24];
    pg_ll(t, pg_now_s());
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    PGresult *r = NULL;
    if (!rc) {
        r = pg_qx(&x, "update an app",
               "UPDATE apps SET name=$2, mode=$3, dsl=$4, version=version + 1 WHERE id=$1"
               " RETURNING version",
               ARGS(id, name, mode, dsl), err);
        rc = r ? 0 : -1;
    }
    if (!rc && !pg_has_row(r))
        rc = no_app(err, id);
    if (!rc) {
        *version = (int)pg_col_ll(r, 0, 0);
        char v[24];
        rc = pg_changed(pg_qx(&x, "keep an app's version",
                        "INSERT INTO app_versions(app_id, version, dsl, created_at)"
                        " VALUES($1, $2, $3, $4)",
                        ARGS(id, pg_ll(v, *version), dsl, t), err)) < 0 ||
             bump_keys(&x, err); /* servers load the new version */
    }
    PQclear(r);
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

static int pg_app_versions(sl_store_be *b, const char *id, sl_value **out, sl_err *err)
{
    PGresult *r = pg_q1p(b, "list an app's versions",
                     "SELECT version, created_at FROM app_versions WHERE app_id=$1"
                     " ORDER BY version DESC",
                     ARGS(id), err);
    if (!r)
        return -1;
    if (!pg_has_row(r)) {
        PQclear(r);
        return no_app(err, id);
    }
    sl_value *arr = json_array();
    for (int i = 0; i < PQntuples(r); i++)
        json_array_append_new(arr, json_pack("{s:I, s:I}", "version", (json_int_t)pg_col_ll(r, i, 0),
                                             "created_at", (json_int_t)pg_col_ll(r, i, 1)));
    PQclear(r);
    *out = arr;
    return 0;
}

static int pg_app_get_version(sl_store_be *b, const char *id, int version, char **dsl,
                              sl_err *err)
{
    char v[24];
    PGresult *r = pg_q1p(b, "read an app's version",
                     "SELECT dsl FROM app_versions WHERE app_id=$1 AND version=$2",
                     ARGS(id, pg_ll(v, version)), err);
    if (!r)
        return -1;
    int rc = 0;
    if (pg_has_row(r))
        *dsl = sl_xstrdup(PQgetvalue(r, 0, 0));
    else
        rc = sl_err_set(err, SL_ENOTFOUND,
                        "app '%s' has no version %d (sluice app versions %s lists them)", id,
                        version, id);
    PQclear(r);
    return rc;
}

static int pg_app_list(sl_store_be *b, sl_value **out, sl_err *err)
{
    PGresult *r = pg_q1p(b, "list apps",
                     "SELECT id, name, mode, created_at, version FROM apps"
                     " ORDER BY created_at DESC, id",
                     0, NULL, err);
    if (!r)
        return -1;
    sl_value *arr = json_array();
    for (int i = 0; i < PQntuples(r); i++)
        json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:I, s:I}", "id", pg_col_str(r, i, 0),
                                             "name", pg_col_str(r, i, 1), "mode", pg_col_str(r, i, 2),
                                             "created_at", (json_int_t)pg_col_ll(r, i, 3),
                                             "version", (json_int_t)pg_col_ll(r, i, 4)));
    PQclear(r);
    *out = arr;
    return 0;
}

static int pg_app_get(sl_store_be *b, const char *id, char **dsl, sl_value **info, sl_err *err)
{
    PGresult *r = pg_q1p(b, "read an app",
                     "SELECT dsl, name, mode, created_at, version FROM apps WHERE id=$1",
                     ARGS(id), err);
    if (!r)
        return -1;
    int rc = 0;
    if (!pg_has_row(r)) {
        rc = no_app(err, id);
    } else {
        if (dsl)
            *dsl = sl_xstrdup(PQgetvalue(r, 0, 0));
        if (info)
            *info = json_pack("{s:s, s:o, s:o, s:I, s:I}", "id", id, "name", pg_col_str(r, 0, 1),
                              "mode", pg_col_str(r, 0, 2), "created_at", (json_int_t)pg_col_ll(r, 0, 3),
                              "version", (json_int_t)pg_col_ll(r, 0, 4));
    }
    PQclear(r);
    return rc;
}

static int pg_app_delete(sl_store_be *b, const char *id, sl_err *err)
{
    char t[24];
    pg_ll(t, pg_now_s());
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    if (!rc) {
        int n = pg_changed(pg_qx(&x, "delete an app", "DELETE FROM apps WHERE id=$1", ARGS(id), err));
        rc = n < 0 ? -1 : n == 0 ? sl_err_set(err, SL_ENOTFOUND, "no app with id '%s'", id) : 0;
    }
    if (!rc)
        rc = pg_changed(pg_qx(&x, "delete an app's versions", "DELETE FROM app_versions WHERE app_id=$1",
                        ARGS(id), err)) < 0 ||
             pg_changed(pg_qx(&x, "revoke an app's keys",
                        "UPDATE app_keys SET revoked_at=$2 WHERE app_id=$1 AND revoked_at IS NULL",
                        ARGS(id, t), err)) < 0 ||
             bump_keys(&x, err);
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

/* Apps' bundle files live in a folder every machine mounts (files_dir in
 * sluice.yml, or $SLUICE_FILES_DIR): FOLDER/apps/ID, as in a SQLite
 * store's folder. */
static char *pg_app_dir(sl_store_be *b, const char *id, sl_err *err)
{
    const char *root = getenv("SLUICE_FILES_DIR");
    if (!root || !*root) {
        sl_err_set(err, SL_EUNSUPPORTED,
                   "store: apps with files (a .zip bundle's skills and scripts) on PostgreSQL "
                   "keep them in a folder every machine mounts: set files_dir in sluice.yml "
                   "(or $SLUICE_FILES_DIR) to it");
        return NULL;
    }
    (void)b;
    char *apps = sl_xasprintf("%s/apps", root);
    if (mkdir(root, 0700) && errno != EEXIST) {
        sl_err_set(err, SL_EIO, "store: cannot create %s (files_dir): %s", root, strerror(errno));
        free(apps);
        return NULL;
    }
    if (mkdir(apps, 0700) && errno != EEXIST) {
        sl_err_set(err, SL_EIO, "store: cannot create %s: %s", apps, strerror(errno));
        free(apps);
        return NULL;
    }
    char *dir = sl_xasprintf("%s/%s", apps, id);
    free(apps);
    return dir;
}

/* ---- keys, tool bindings and the admin token ---- */

static int pg_key_create(sl_store_be *b, const char *app_id, char **key, sl_err *err)
{
    bool datasets = !strcmp(app_id, SL_STORE_DATASETS);
    *key = NULL;
    if (!datasets && pg_app_get(b, app_id, NULL, NULL, err))
        return -1;
    const char *prefix = datasets ? "dataset" : "app";
    char secret[49], id[37], hint[24], t[24], hash[65];
    if (sl_rand_hex(secret, 24, err) || sl_rand_uuid(id, err))
        return -1;
    char *k = sl_xasprintf("%s-%s", prefix, secret);
    sl_sha256_hex(k, strlen(k), hash);
    snprintf(hint, sizeof hint, "%s-…%s", prefix, secret + 44);
    if (pg_changed(pg_q1p(b, "add a key",
                   "INSERT INTO app_keys(id, app_id, hash, hint, created_at)"
                   " VALUES($1, $2, $3, $4, $5)",
                   ARGS(id, app_id, hash, hint, pg_ll(t, pg_now_s())), err)) < 0) {
        free(k);
        return -1;
    }
    *key = k;
    return 0;
}

static int pg_key_list(sl_store_be *b, const char *app_id, sl_value **out, sl_err *err)
{
    PGresult *r = pg_q1p(b, "list keys",
                     "SELECT id, hint, created_at, revoked_at FROM app_keys WHERE app_id=$1"
                     " ORDER BY created_at, id",
                     ARGS(app_id), err);
    if (!r)
        return -1;
    sl_value *arr = json_array();
    for (int i = 0; i < PQntuples(r); i++)
        json_array_append_new(arr, json_pack("{s:o, s:o, s:I, s:b}", "id", pg_col_str(r, i, 0),
                                             "hint", pg_col_str(r, i, 1), "created_at",
                                             (json_int_t)pg_col_ll(r, i, 2), "revoked",
                                             !PQgetisnull(r, i, 3)));
    PQclear(r);
    *out = arr;
    return 0;
}

static int pg_key_revoke(sl_store_be *b, const char *key_id, sl_err *err)
{
    char t[24];
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    if (!rc) {
        int n = pg_changed(pg_qx(&x, "revoke a key",
                           "UPDATE app_keys SET revoked_at=$2 WHERE id=$1 AND revoked_at IS NULL",
                           ARGS(key_id, pg_ll(t, pg_now_s())), err));
        rc = n < 0    ? -1
             : n == 0 ? sl_err_set(err, SL_ENOTFOUND, "no active key with id '%s'", key_id)
                      : bump_keys(&x, err);
    }
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

static char *pg_key_app(sl_store_be *b, const char *key)
{
    char hash[65];
    sl_sha256_hex(key, strlen(key), hash);
    PGresult *r = pg_q1p_logged(b, "look up a key",
                            "SELECT app_id FROM app_keys WHERE hash=$1 AND revoked_at IS NULL"
                            " AND app_id <> '" SL_STORE_DATASETS "'",
                            ARGS(hash));
    char *app = pg_has_row(r) ? sl_xstrdup(PQgetvalue(r, 0, 0)) : NULL;
    PQclear(r);
    return app;
}

static bool pg_key_scope_ok(sl_store_be *b, const char *scope, const char *key)
{
    char hash[65];
    sl_sha256_hex(key, strlen(key), hash);
    PGresult *r = pg_q1p_logged(b, "look up a key",
                            "SELECT 1 FROM app_keys WHERE hash=$1 AND app_id=$2"
                            " AND revoked_at IS NULL",
                            ARGS(hash, scope));
    bool ok = pg_has_row(r);
    PQclear(r);
    return ok;
}

/* One read of the counter per call (a round trip on a pooled connection);
 * while the server cannot be reached, the last one read. */
/* Servers ask at every request: while the listener hears every change,
 * the last value read stands (5 s at most). */
static long long pg_keys_version(sl_store_be *b)
{
    pthread_mutex_lock(&b->mu);
    double now = sl_clock_s();
    bool fresh = b->keys_heard && b->keys_valid && now - b->keys_at < 5;
    long long v = b->keys_seen;
    unsigned long gen = b->keys_gen;
    pthread_mutex_unlock(&b->mu);
    if (fresh)
        return v;
    PGresult *r = pg_q1p_logged(b, "read keys_version",
                            "SELECT value FROM meta WHERE key='keys_version'", 0, NULL);
    pthread_mutex_lock(&b->mu);
    if (pg_has_row(r)) {
        b->keys_seen = pg_col_ll(r, 0, 0);
        if (gen == b->keys_gen) {  /* no change was heard meanwhile */
            b->keys_valid = true;
            b->keys_at = now;
        }
    }
    v = b->keys_seen;
    pthread_mutex_unlock(&b->mu);
    PQclear(r);
    return v;
}

static int pg_tools_get(sl_store_be *b, const char *scope, char **spec, sl_err *err)
{
    *spec = NULL;
    PGresult *r = pg_q1p(b, "read tool bindings", "SELECT spec FROM tool_bindings WHERE scope=$1",
                     ARGS(scope), err);
    if (!r)
        return -1;
    if (pg_has_row(r))
        *spec = sl_xstrdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

static int pg_tools_set(sl_store_be *b, const char *scope, const char *spec, sl_err *err)
{
    char t[24];
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err) ||
             pg_changed(spec ? pg_qx(&x, "set tool bindings",
                               "INSERT INTO tool_bindings(scope, spec, updated_at)"
                               " VALUES($1, $2, $3) ON CONFLICT(scope) DO UPDATE"
                               " SET spec=excluded.spec, updated_at=excluded.updated_at",
                               ARGS(scope, spec, pg_ll(t, pg_now_s())), err)
                          : pg_qx(&x, "remove tool bindings",
                               "DELETE FROM tool_bindings WHERE scope=$1", ARGS(scope), err)) < 0 ||
             bump_keys(&x, err); /* servers load their apps again, with the new bindings */
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

/* The token ("adm-" and 64 hex digits, as SQLite's admin-token file holds)
 * is the row admin_token of meta, its hash admin_hash; the first server to
 * make it wins, the others read it. */
static int pg_admin_token(sl_store_be *b, char **token, bool *created, sl_err *err)
{
    *created = false;
    *token = NULL;
    PGresult *r = pg_q1p(b, "read the admin token", "SELECT value FROM meta WHERE key='admin_token'",
                     0, NULL, err);
    if (!r)
        return -1;
    char tok[80] = "";
    if (pg_has_row(r))
        snprintf(tok, sizeof tok, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    if (!tok[0]) {
        char secret[65];
        if (sl_rand_hex(secret, 32, err))
            return -1;
        char mine[80];
        snprintf(mine, sizeof mine, "adm-%s", secret);
        r = pg_q1p(b, "keep the admin token",
               "INSERT INTO meta(key, value) VALUES('admin_token', $1)"
               " ON CONFLICT(key) DO NOTHING RETURNING value",
               ARGS(mine), err);
        if (!r)
            return -1;
        *created = pg_has_row(r);
        PQclear(r);
        if (*created) {
            snprintf(tok, sizeof tok, "%s", mine);
        } else { /* another server made it meanwhile */
            r = pg_q1p(b, "read the admin token", "SELECT value FROM meta WHERE key='admin_token'",
                   0, NULL, err);
            if (!r)
                return -1;
            if (pg_has_row(r))
                snprintf(tok, sizeof tok, "%s", PQgetvalue(r, 0, 0));
            PQclear(r);
        }
        if (!tok[0])
            return sl_err_set(err, SL_EIO, "store: the admin token could not be kept");
    }
    char hash[65];
    sl_sha256_hex(tok, strlen(tok), hash);
    if (pg_changed(pg_q1p(b, "keep the admin token's hash",
                   "INSERT INTO meta(key, value) VALUES('admin_hash', $1)"
                   " ON CONFLICT(key) DO UPDATE SET value=excluded.value"
                   " WHERE meta.value <> excluded.value",
                   ARGS(hash), err)) < 0)
        return -1;
    *token = sl_xstrdup(tok);
    return 0;
}

static bool pg_admin_ok(sl_store_be *b, const char *token)
{
    char hash[65];
    sl_sha256_hex(token, strlen(token), hash);
    PGresult *r = pg_q1p_logged(b, "check the admin token",
                            "SELECT 1 FROM meta WHERE key='admin_hash' AND value=$1", ARGS(hash));
    bool ok = pg_has_row(r);
    PQclear(r);
    return ok;
}

/* ---- runs ---- */

static int pg_start_run(sl_store_be *b, const sl_run_row *r, sl_err *err)
{
    char t[24], v[24], lu[24];
    char *inputs = pg_json_or_null(r->inputs);
    int rc = pg_changed(pg_grouped(b, "record the start of a run",
                        "INSERT INTO runs(id, app_id, task_id, \"user\", conversation_id,"
                        " message_id, status, inputs, created_at, app_version, owner,"
                        " lease_until, epoch, attempts)"
                        " VALUES($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9, $10, $11, 1, 1)",
                        ARGS(r->id, r->app_id, r->task_id, r->user, r->conversation_id,
                             r->message_id, inputs, pg_ll(t, pg_now_s()),
                             r->app_version > 0 ? pg_ll(v, r->app_version) : NULL, b->owner,
                             pg_ll(lu, pg_now_s() + b->lease_s)),
                        err)) < 0
                 ? -1
                 : 0;
    free(inputs);
    if (!rc)
        epoch_set(b, r->id, 1);
    return rc;
}

static int pg_enqueue_run(sl_store_be *b, const sl_run_row *r, const char *request, sl_err *err)
{
    char t[24], v[24];
    char *inputs = pg_json_or_null(r->inputs);
    PGresult *res = pg_grouped(b, "queue a run",
                          "INSERT INTO runs(id, app_id, task_id, \"user\","
                          " conversation_id, message_id, status, inputs, created_at, app_version,"
                          " request, qseq) VALUES($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9,"
                          " $10, nextval('run_queue'))",
                          ARGS(r->id, r->app_id, r->task_id, r->user, r->conversation_id,
                               r->message_id, inputs, pg_ll(t, pg_now_s()),
                               r->app_version > 0 ? pg_ll(v, r->app_version) : NULL, request),
                          err);
    free(inputs);
    PQclear(res);
    if (res)  /* idle processes claim it at once */
        pg_note(b, "sluice_queue", "");
    return res ? 0 : -1;
}

static int pg_claim_runs(sl_store_be *b, int max, sl_value **out, sl_err *err)
{
    char lu[24], m[24];
    PGresult *r = pg_q1p(b, "claim queued runs",
                        "WITH c AS (SELECT id FROM runs WHERE status='queued' ORDER BY qseq"
                        " LIMIT $3 FOR UPDATE SKIP LOCKED)"
                        " UPDATE runs SET status='running', owner=$1, lease_until=$2,"
                        " epoch=runs.epoch+1, attempts=runs.attempts+1 FROM c WHERE runs.id=c.id"
                        " RETURNING runs.id, app_id, task_id, \"user\", conversation_id,"
                        " message_id, inputs, request, app_version, created_at, attempts, epoch,"
                        " qseq",
                        ARGS(b->owner, pg_ll(lu, pg_now_s() + b->lease_s), pg_ll(m, max)), err);
    if (!r)
        return -1;
    /* in line order (RETURNING keeps none) */
    int n = PQntuples(r), *order = sl_xmalloc(((size_t)n + 1) * sizeof *order);
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && pg_col_ll(r, order[j - 1], 12) > pg_col_ll(r, i, 12); j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    *out = json_array();
    for (int k = 0; k < n; k++) {
        int i = order[k];
        epoch_set(b, pg_val(r, i, 0), pg_col_ll(r, i, 11));
        json_array_append_new(
            *out, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
                            pg_col_str(r, i, 0), "app_id", pg_col_str(r, i, 1), "task_id",
                            pg_col_str(r, i, 2), "user", pg_col_str(r, i, 3), "conversation_id",
                            pg_col_str(r, i, 4), "message_id", pg_col_str(r, i, 5), "inputs",
                            pg_col_json(r, i, 6), "request", pg_col_json(r, i, 7), "app_version",
                            pg_col_int(r, i, 8), "created_at", pg_col_int(r, i, 9), "attempts",
                            pg_col_int(r, i, 10)));
    }
    free(order);
    PQclear(r);
    return 0;
}

/* One request's worth of the bucket: refilled at per_s a second, up to
 * one second's worth, in one statement (the row's lock orders takers). */
static int pg_rate_take(sl_store_be *b, const char *key, double per_s, sl_err *err)
{
    char rate[40];
    snprintf(rate, sizeof rate, "%.17g", per_s);
    PGresult *r = pg_q1p(b, "take from a rate limit",
                         "INSERT INTO rate_buckets AS r(key, tokens, at)"
                         " VALUES($1, $2::float8 - 1, extract(epoch from clock_timestamp()))"
                         " ON CONFLICT(key) DO UPDATE SET"
                         " tokens = least($2::float8, r.tokens + (extract(epoch from"
                         " clock_timestamp()) - r.at) * $2::float8) - 1,"
                         " at = extract(epoch from clock_timestamp())"
                         " WHERE least($2::float8, r.tokens + (extract(epoch from"
                         " clock_timestamp()) - r.at) * $2::float8) >= 1"
                         " RETURNING tokens",
                         ARGS(key, rate), err);
    if (!r)
        return -1;
    int ok = PQntuples(r) > 0;
    PQclear(r);
    return ok;
}

static int pg_run_state(sl_store_be *b, const char *run_id, char **status, char **reply,
                        sl_err *err)
{
    PGresult *r = pg_q1p(b, "read a run's state", "SELECT status, reply FROM runs WHERE id=$1",
                        ARGS(run_id), err);
    if (!r)
        return -1;
    int rc = 0;
    if (!PQntuples(r)) {
        rc = sl_err_set(err, SL_ENOTFOUND, "store: no run %s", run_id);
    } else {
        *status = sl_xstrdup(pg_val(r, 0, 0));
        *reply = pg_val(r, 0, 1) ? sl_xstrdup(pg_val(r, 0, 1)) : NULL;
    }
    PQclear(r);
    return rc;
}

/* Before a run's end is written: when none of its events were carried
 * yet (a run that ended within the publisher's wait, PUB_WAIT_US), those
 * waiting are taken out of its queue: its stored log holds them all, and
 * a reader takes them from there.  Once some were carried, a reader
 * follows it live: the rest are written first (as they come: the batch
 * being written and those queued before this call), so its readers get
 * them as soon as they can.  *epoch: the run's.  Whether any were
 * carried (their copies are then cleared with the end). */
/* Events of run_id queued or being written (pub_mu held). */
static long long run_pending(sl_store_be *b, const char *run_id)
{
    long long n = 0;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < b->nepochs; i++)
        if (!strcmp(b->epochs[i].id, run_id))
            n = b->epochs[i].pending;
    pthread_mutex_unlock(&b->mu);
    return n;
}

static bool pub_forget(sl_store_be *b, const char *run_id, long long *epoch)
{
    pthread_mutex_lock(&b->pub_mu);
    long long carried = 0;
    *epoch = epoch_of(b, run_id, false, &carried);
    if (carried) {
        /* until its own are written (a count of everyone's would also
         * count events queued after this call, or dropped by others) */
        struct timespec ts = sl_clock_wall_in(5);
        while (b->publishing && run_pending(b, run_id) > 0 &&
               pthread_cond_timedwait(&b->pub_cv, &b->pub_mu, &ts) == 0) {
        }
        pthread_mutex_unlock(&b->pub_mu);
        return true;
    }
    for (pub_item **p = &b->pub_head, *prev = NULL; *p;) {
        pub_item *it = *p;
        if (it->seq < 0 || strcmp(it->run_id, run_id)) {
            prev = it;
            p = &it->next;
            continue;
        }
        *p = it->next;
        if (b->pub_tail == it)
            b->pub_tail = prev;
        b->pub_n--;
        free(it->run_id);
        free(it->text);
        free(it);
    }
    pthread_mutex_lock(&b->mu);  /* none of its events waits now */
    for (size_t i = 0; i < b->nepochs; i++)
        if (!strcmp(b->epochs[i].id, run_id))
            b->epochs[i].pending = 0;
    pthread_mutex_unlock(&b->mu);
    pthread_mutex_unlock(&b->pub_mu);
    return false;
}

static int pg_finish_run(sl_store_be *b, const char *run_id, const char *status,
                         const sl_value *outputs, const char *error, double elapsed,
                         long long tokens, int steps, long long finished_at, const char *answer,
                         const char *reply, char *events, sl_err *err)
{
    char el[40], tk[24], st[24], fin[24], ep[24];
    long long epoch;
    bool carried = pub_forget(b, run_id, &epoch);
    snprintf(el, sizeof el, "%.17g", elapsed);
    char *out = pg_json_or_null(outputs);
    /* One statement, one round trip: only while this attempt holds the
     * run's lease (this process, this epoch; one whose lease ran out was
     * failed or queued again meanwhile, and that stands), its end, its
     * log, a chat turn's answer, its carried events cleared, and the word
     * on sluice_done for those waiting on it, sent at the commit. */
    /* PostgreSQL out of reach (a restart): the end is written again until
     * it is back, while this process still holds the run's lease (the
     * leaser renews it meanwhile), for twice the lease at most; then the
     * run is let go, and its lease runs out as any lost run's does */
    double give_up = sl_clock_s() + 2.0 * b->lease_s, wait = 0.1;
    PGresult *r;
    for (;;) {
        r = pg_grouped(b, "save the end of a run",
                            "WITH u AS (UPDATE runs SET status=$2, outputs=$3, error=$4, elapsed=$5,"
                            " total_tokens=$6, total_steps=$7, finished_at=$8, owner=NULL, reply=$11"
                            " WHERE id=$1 AND status='running'"
                            " AND ((owner=$9 AND epoch=$10) OR owner IS NULL) RETURNING id),"
                            " l AS (INSERT INTO run_log(run_id, events) SELECT id, $12 FROM u"
                            " WHERE $12::text IS NOT NULL"
                            " ON CONFLICT(run_id) DO UPDATE SET events=excluded.events),"
                            " m AS (UPDATE messages SET answer=$13 WHERE $13::text IS NOT NULL"
                            " AND run_id IN (SELECT id FROM u)),"
                            " d AS (DELETE FROM run_events WHERE $14 AND run_id IN (SELECT id FROM u))"
                            " SELECT id FROM u",
                            ARGS(run_id, status, out, error, el, pg_ll(tk, tokens), pg_ll(st, steps),
                                 pg_ll(fin, finished_at), b->owner, pg_ll(ep, epoch), reply, events,
                                 answer, carried ? "true" : "false"),
                            err);
        if (r || sl_clock_s() + wait > give_up || stopping(b))
            break;
        if (wait == 0.1)
            sl_log(SL_LOG_WARN, "store: run %s ended; its end is written again until PostgreSQL "
                   "answers: %s", run_id, err && err->msg ? err->msg : "");
        if (err)
            sl_err_clear(err);
        usleep((useconds_t)(wait * 1e6));
        wait = wait * 2 > 2 ? 2 : wait * 2;
    }
    epoch_of(b, run_id, true, NULL);  /* this process holds it no more */
    free(out);
    free(events);
    if (!r)
        return -1;
    if (!PQntuples(r))
        sl_log(SL_LOG_WARN, "store: run %s ended after its lease ran out (it was failed or "
               "queued again meanwhile); this end is not saved", run_id);
    else
        pg_note(b, "sluice_done", run_id);
    PQclear(r);
    return 0;
}

#define RUN_COLS                                                                                   \
    "id, app_id, status, inputs, outputs, error, elapsed, total_tokens, total_steps, created_at, " \
    "finished_at"

static sl_value *run_row(PGresult *r, int i)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:I, s:I, s:I, s:o}", "id",
                     pg_col_str(r, i, 0), "workflow_id", pg_col_str(r, i, 1), "status", pg_col_str(r, i, 2),
                     "inputs", pg_col_json(r, i, 3), "outputs", pg_col_json(r, i, 4), "error",
                     pg_col_str(r, i, 5), "elapsed_time", pg_col_double(r, i, 6), "total_tokens",
                     (json_int_t)pg_col_ll(r, i, 7), "total_steps", (json_int_t)pg_col_ll(r, i, 8),
                     "created_at", (json_int_t)pg_col_ll(r, i, 9), "finished_at", pg_col_int(r, i, 10));
}

static sl_value *pg_run_get(sl_store_be *b, const char *app_id, const char *run_id)
{
    PGresult *r = pg_q1p_logged(b, "read a run",
                            "SELECT " RUN_COLS ", \"user\", app_version, conversation_id,"
                            " message_id, (SELECT query FROM messages m WHERE m.id = runs.message_id)"
                            " FROM runs WHERE id=$1 AND ($2::text IS NULL OR app_id=$2)",
                            ARGS(run_id, app_id));
    sl_value *v = pg_has_row(r) ? run_row(r, 0) : NULL;
    if (v && !app_id) { /* the admin API's view, as SQLite's */
        json_object_set_new(v, "user", pg_col_str(r, 0, 11));
        json_object_set_new(v, "app_version", pg_col_int(r, 0, 12));
        json_object_set_new(v, "conversation_id", pg_col_str(r, 0, 13));
        json_object_set_new(v, "message_id", pg_col_str(r, 0, 14));
        json_object_set_new(v, "query", pg_col_str(r, 0, 15));
    }
    PQclear(r);
    return v;
}

static sl_value *pg_run_events(sl_store_be *b, const char *app_id, const char *run_id)
{
    PGresult *r = pg_q1p_logged(b, "read a run's events",
                            "SELECT l.events FROM run_log l JOIN runs r ON r.id = l.run_id"
                            " WHERE l.run_id=$1 AND ($2::text IS NULL OR r.app_id=$2)",
                            ARGS(run_id, app_id));
    sl_value *arr = pg_has_row(r) ? pg_col_json(r, 0, 0) : NULL;
    PQclear(r);
    if (json_is_array(arr))
        return arr;
    json_decref(arr);
    return NULL;
}

static sl_value *pg_runs_list(sl_store_be *b, const sl_runs_filter *f)
{
    int limit = f->limit >= 1 && f->limit <= 100 ? f->limit : 50;
    char since[24], until[24], bat[24], lim[24];
    PGresult *r = pg_q1p_logged(
        b, "list runs",
        "SELECT id, app_id, status, \"user\", error, created_at, finished_at, elapsed,"
        " total_tokens, total_steps FROM runs"
        " WHERE ($1::text IS NULL OR app_id=$1) AND ($2::text IS NULL OR status=$2)"
        " AND ($3::text IS NULL OR \"user\"=$3) AND created_at >= $4 AND created_at <= $5"
        " AND (created_at < $6 OR (created_at = $6 AND id < $7))"
        " ORDER BY created_at DESC, id DESC LIMIT $8",
        ARGS(f->app_id, f->status, f->user, pg_ll(since, f->since),
             pg_ll(until, f->until > 0 ? f->until : INT64_MAX),
             pg_ll(bat, f->before_at > 0 ? f->before_at : INT64_MAX),
             f->before_id ? f->before_id : "", pg_ll(lim, limit + 1)));
    if (!r)
        return NULL;
    sl_value *data = json_array(), *next = json_null();
    int rows = PQntuples(r);
    bool more = rows > limit;
    for (int i = 0; i < rows && i < limit; i++)
        json_array_append_new(
            data, json_pack("{s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:f, s:I, s:I}", "id",
                            pg_col_str(r, i, 0), "app_id", pg_col_str(r, i, 1), "status",
                            pg_col_str(r, i, 2), "user", pg_col_str(r, i, 3), "error", pg_col_str(r, i, 4),
                            "created_at", (json_int_t)pg_col_ll(r, i, 5), "finished_at",
                            pg_col_int(r, i, 6), "elapsed_time", pg_col_double(r, i, 7),
                            "total_tokens", (json_int_t)pg_col_ll(r, i, 8), "total_steps",
                            (json_int_t)pg_col_ll(r, i, 9)));
    if (more && limit > 0) {
        char *cur = sl_xasprintf("%lld:%s", pg_col_ll(r, limit - 1, 5), PQgetvalue(r, limit - 1, 0));
        json_decref(next);
        next = json_string(cur);
        free(cur);
    }
    PQclear(r);
    return json_pack("{s:o, s:b, s:o}", "data", data, "has_more", more, "next", next);
}

static sl_value *pg_run_logs(sl_store_be *b, const char *app_id, const char *status, int page,
                             int limit)
{
    if (limit <= 0 || limit > 100)
        limit = 20;
    if (page <= 0)
        page = 1;
    char lim[24], off[24];
    PGresult *r = pg_q1p_logged(b, "list an app's runs",
                            "SELECT " RUN_COLS ", \"user\", count(*) OVER () FROM runs"
                            " WHERE app_id=$1 AND ($2::text IS NULL OR status=$2)"
                            " ORDER BY created_at DESC, id LIMIT $3 OFFSET $4",
                            ARGS(app_id, status, pg_ll(lim, limit + 1),
                                 pg_ll(off, (long long)(page - 1) * limit)));
    if (!r)
        return NULL;
    sl_value *data = json_array();
    int rows = PQntuples(r);
    bool more = rows > limit;
    long long total = rows ? pg_col_ll(r, 0, 12) : 0;
    for (int i = 0; i < rows && i < limit; i++) {
        sl_value *run = run_row(r, i);
        json_array_append_new(data, json_pack("{s:o, s:o, s:o, s:o}", "id",
                                              json_incref(json_object_get(run, "id")),
                                              "workflow_run", run, "created_from",
                                              json_string("service-api"), "created_by_end_user",
                                              json_pack("{s:o}", "session_id", pg_col_str(r, i, 11))));
    }
    PQclear(r);
    if (!rows && page > 1) { /* past the last page: the total still counts */
        r = pg_q1p_logged(b, "count an app's runs",
                      "SELECT count(*) FROM runs WHERE app_id=$1 AND ($2::text IS NULL OR status=$2)",
                      ARGS(app_id, status));
        total = pg_has_row(r) ? pg_col_ll(r, 0, 0) : 0;
        PQclear(r);
    }
    return json_pack("{s:i, s:i, s:I, s:b, s:o}", "page", page, "limit", limit, "total",
                     (json_int_t)total, "has_more", more, "data", data);
}

/* ---- conversations ---- */

static const char *owner_of(const char *user)
{
    return user && *user ? user : SL_STORE_DEFAULT_USER;
}

/* SQL: the conversation row is the user's bound at $N; rows kept without
 * a user belong to the default user (as in SQLite). */
#define OWNED_BY(n) "coalesce(\"user\", '" SL_STORE_DEFAULT_USER "')=$" #n

static sl_value *conversation_json(PGresult *r, int i)
{
    return json_pack("{s:o, s:o, s:{}, s:s, s:s, s:I, s:I}", "id", pg_col_str(r, i, 0), "name",
                     pg_col_str(r, i, 1), "inputs", "status", "normal", "introduction", "",
                     "created_at", (json_int_t)pg_col_ll(r, i, 2), "updated_at",
                     (json_int_t)pg_col_ll(r, i, 3));
}

static int pg_conversation(sl_store_be *b, const char *app_id, const char *user, const char *id,
                           const char *first_query, char **out_id, sl_err *err)
{
    char t[24];
    pg_ll(t, pg_now_s());
    user = owner_of(user);
    *out_id = NULL;
    if (id && *id) {
        int n = pg_changed(pg_q1p(b, "continue a conversation",
                           "UPDATE conversations SET updated_at=$4"
                           " WHERE id=$1 AND app_id=$2 AND " OWNED_BY(3),
                           ARGS(id, app_id, user, t), err));
        if (n < 0)
            return -1;
        if (n == 0)
            return sl_err_set(err, SL_ENOTFOUND, "Conversation Not Exists.");
        *out_id = sl_xstrdup(id);
        return 0;
    }
    char u[37];
    if (sl_rand_uuid(u, err))
        return -1;
    /* SQLite's first 48 bytes, cut where a character starts (PostgreSQL
     * takes valid UTF-8 only) */
    const char *q = first_query ? first_query : "New conversation";
    size_t len = strnlen(q, 48);
    while (len > 0 && len < strlen(q) && ((unsigned char)q[len] & 0xC0) == 0x80)
        len--;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)len, q);
    if (pg_changed(pg_q1p(b, "start a conversation",
                   "INSERT INTO conversations(id, app_id, \"user\", name, created_at, updated_at)"
                   " VALUES($1, $2, $3, $4, $5, $5)",
                   ARGS(u, app_id, user, name, t), err)) < 0)
        return -1;
    *out_id = sl_xstrdup(u);
    return 0;
}

static sl_value *pg_history(sl_store_be *b, const char *conversation_id, int limit)
{
    char lim[24];
    PGresult *r = pg_q1p_logged(b, "read a conversation's history",
                            "SELECT query, answer FROM (SELECT query, answer, created_at, seq"
                            " FROM messages WHERE conversation_id=$1 AND answer IS NOT NULL"
                            " ORDER BY created_at DESC, seq DESC LIMIT $2) t"
                            " ORDER BY created_at, seq",
                            ARGS(conversation_id, pg_ll(lim, limit > 0 ? limit : 500)));
    sl_value *arr = json_array();
    for (int i = 0; r && i < PQntuples(r); i++)
        json_array_append_new(arr, json_pack("{s:o, s:o}", "query", pg_col_str(r, i, 0), "answer",
                                             pg_col_str(r, i, 1)));
    PQclear(r);
    return arr;
}

static int pg_message_add(sl_store_be *b, const char *id, const char *conversation_id,
                          const char *app_id, const char *query, const char *run_id, sl_err *err)
{
    char t[24];
    return pg_changed(pg_q1p(b, "add a message",
                      "INSERT INTO messages(id, conversation_id, app_id, query, run_id, created_at)"
                      " VALUES($1, $2, $3, $4, $5, $6)",
                      ARGS(id, conversation_id, app_id, query, run_id, pg_ll(t, pg_now_s())), err)) < 0
               ? -1
               : 0;
}

static sl_value *pg_conversations(sl_store_be *b, const char *app_id, const char *user, int limit)
{
    int lim = limit > 0 && limit <= 100 ? limit : 20;
    char l[24];
    PGresult *r = pg_q1p_logged(b, "list conversations",
                            "SELECT id, name, created_at, updated_at FROM conversations"
                            " WHERE app_id=$1 AND " OWNED_BY(2)
                            " ORDER BY updated_at DESC, id LIMIT $3",
                            ARGS(app_id, owner_of(user), pg_ll(l, lim + 1)));
    if (!r)
        return NULL;
    sl_value *data = json_array();
    int rows = PQntuples(r);
    for (int i = 0; i < rows && i < lim; i++)
        json_array_append_new(data, conversation_json(r, i));
    PQclear(r);
    return json_pack("{s:i, s:b, s:o}", "limit", lim, "has_more", rows > lim, "data", data);
}

static sl_value *pg_messages(sl_store_be *b, const char *app_id, const char *conversation_id,
                             const char *user, int limit)
{
    size_t lim = limit > 0 && limit <= 100 ? (size_t)limit : 20;
    pg_conn x;
    sl_err err = {0};
    if (pg_take(b, &x, &err)) {
        sl_log_site(SL_LOG_WARN, "store: messages", "%s", err.msg);
        sl_err_clear(&err);
        return NULL;
    }
    /* the conversation must be this app's and this user's */
    PGresult *c = pg_qx(&x, "read a conversation",
                     "SELECT 1 FROM conversations WHERE id=$1 AND app_id=$2 AND " OWNED_BY(3),
                     ARGS(conversation_id, app_id, owner_of(user)), &err);
    PGresult *r = NULL;
    if (pg_has_row(c))
        r = pg_qx(&x, "read messages",
               "SELECT id, conversation_id, query, answer, created_at, run_id FROM messages"
               " WHERE conversation_id=$1 AND app_id=$2 ORDER BY created_at, seq",
               ARGS(conversation_id, app_id), &err);
    pg_give(&x);
    if (err.msg)
        sl_log_site(SL_LOG_WARN, "store: messages", "%s", err.msg);
    sl_err_clear(&err);
    bool ok = pg_has_row(c) && r;
    PQclear(c);
    if (!ok) {
        PQclear(r);
        return NULL;
    }
    sl_value *data = json_array();
    size_t n = (size_t)PQntuples(r);
    /* the newest `limit` messages */
    for (size_t i = n > lim ? n - lim : 0; i < n; i++)
        json_array_append_new(
            data, json_pack("{s:o, s:o, s:{}, s:o, s:o, s:[], s:n, s:[], s:I, s:o}", "id",
                            pg_col_str(r, (int)i, 0), "conversation_id", pg_col_str(r, (int)i, 1),
                            "inputs", "query", pg_col_str(r, (int)i, 2), "answer",
                            pg_col_str(r, (int)i, 3), "message_files", "feedback",
                            "retriever_resources", "created_at", (json_int_t)pg_col_ll(r, (int)i, 4),
                            /* sluice's own: the run behind the answer */
                            "workflow_run_id", pg_col_str(r, (int)i, 5)));
    PQclear(r);
    return json_pack("{s:i, s:b, s:o}", "limit", (int)lim, "has_more", n > lim, "data", data);
}

static int pg_conversation_delete(sl_store_be *b, const char *app_id, const char *id,
                                  const char *user, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    if (!rc) {
        int n = pg_changed(pg_qx(&x, "delete a conversation",
                           "DELETE FROM conversations WHERE id=$1 AND app_id=$2 AND " OWNED_BY(3),
                           ARGS(id, app_id, owner_of(user)), err));
        rc = n < 0 ? -1 : n == 0 ? sl_err_set(err, SL_ENOTFOUND, "Conversation Not Exists.") : 0;
    }
    if (!rc)
        rc = pg_changed(pg_qx(&x, "delete a conversation's messages",
                        "DELETE FROM messages WHERE conversation_id=$1 AND app_id=$2",
                        ARGS(id, app_id), err)) < 0;
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

static sl_value *pg_conversation_rename(sl_store_be *b, const char *app_id, const char *id,
                                        const char *user, const char *name)
{
    PGresult *r = pg_q1p_logged(b, "rename a conversation",
                            "UPDATE conversations SET name=$4 WHERE id=$1 AND app_id=$2 AND "
                            OWNED_BY(3) " RETURNING id, name, created_at, updated_at",
                            ARGS(id, app_id, owner_of(user), name));
    sl_value *v = pg_has_row(r) ? conversation_json(r, 0) : NULL;
    PQclear(r);
    return v;
}

static int pg_feedback(sl_store_be *b, const char *app_id, const char *message_id,
                       const char *user, const char *rating)
{
    return pg_changed(pg_q1p_logged(b, "rate a message",
                             "UPDATE messages SET feedback=$3 WHERE id=$1 AND app_id=$2 AND"
                             " conversation_id IN (SELECT id FROM conversations WHERE app_id=$2"
                             " AND " OWNED_BY(4) ")",
                             ARGS(message_id, app_id, rating, owner_of(user)))) > 0
               ? 0
               : -1;
}

/* ---- files ---- */

static int pg_file_add(sl_store_be *b, const char *id, const char *app_id, const char *name,
                       long long size, const char *mime, const char *user, sl_err *err)
{
    char sz[24], t[24];
    return pg_changed(pg_q1p(b, "add a file",
                      "INSERT INTO files(id, app_id, name, size, mime, \"user\", created_at)"
                      " VALUES($1, $2, $3, $4, $5, $6, $7)",
                      ARGS(id, app_id, name, pg_ll(sz, size), mime, user, pg_ll(t, pg_now_s())), err)) < 0
               ? -1
               : 0;
}

static sl_value *pg_file_get(sl_store_be *b, const char *app_id, const char *id)
{
    PGresult *r = pg_q1p_logged(b, "read a file's metadata",
                            "SELECT id, name, size, mime, \"user\", created_at FROM files"
                            " WHERE id=$1 AND app_id=$2",
                            ARGS(id, app_id));
    sl_value *v = NULL;
    if (pg_has_row(r))
        v = json_pack("{s:o, s:o, s:I, s:o, s:o, s:I}", "id", pg_col_str(r, 0, 0), "name",
                      pg_col_str(r, 0, 1), "size", (json_int_t)pg_col_ll(r, 0, 2), "mime_type",
                      pg_col_str(r, 0, 3), "created_by", pg_col_str(r, 0, 4), "created_at",
                      (json_int_t)pg_col_ll(r, 0, 5));
    PQclear(r);
    return v;
}

/* ---- blobs: rows of blob_parts (the store checked the key) ----
 * A writer holds no connection between its calls: each full part is one
 * INSERT under the writer's id, and the commit makes the blobs row that
 * names them, which is when the blob exists. */

struct sl_store_bw {
    sl_store_be *b;
    char key[40];
    char id[24];              /* its row in blob_writes */
    int part;                 /* parts written */
    long long size;
    unsigned char *buf;       /* the part being filled (BLOB_PART bytes) */
    size_t len;
};

static int pg_blob_create(sl_store_be *b, const char *key, sl_store_bw **out, sl_err *err)
{
    char t[24];
    PGresult *r = pg_q1p(b, "start a blob",
                     "INSERT INTO blob_writes(key, started_at) SELECT $1, $2"
                     " WHERE NOT EXISTS (SELECT 1 FROM blobs WHERE key=$1) RETURNING id",
                     ARGS(key, pg_ll(t, pg_now_s())), err);
    if (!r)
        return -1;
    if (!pg_has_row(r)) {
        PQclear(r);
        return sl_err_set(err, SL_EIO, "store: blob %s exists (a blob is written once)", key);
    }
    sl_store_bw *w = sl_xcalloc(1, sizeof *w);
    w->b = b;
    snprintf(w->key, sizeof w->key, "%s", key);
    snprintf(w->id, sizeof w->id, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    *out = w;
    return 0;
}

static int flush_part(sl_store_bw *w, sl_err *err)
{
    char p[24];
    const char *const v[] = {w->id, pg_ll(p, w->part), (const char *)w->buf};
    const int len[] = {0, 0, (int)w->len}, fmt[] = {0, 0, 1};
    pg_conn x;
    if (pg_take(w->b, &x, err))
        return -1;
    int rc = pg_changed(pg_run(&x, "write a blob's part",
                         "INSERT INTO blob_parts(id, part, data) VALUES($1, $2, $3)", 3, v, len,
                         fmt, 0, err)) < 0
                 ? -1
                 : 0;
    pg_give(&x);
    if (!rc) {
        w->part++;
        w->len = 0;
    }
    return rc;
}

static int pg_blob_write(sl_store_bw *w, const void *data, size_t len, sl_err *err)
{
    const unsigned char *p = data;
    if (!w->buf)
        w->buf = sl_xmalloc(BLOB_PART);
    while (len) {
        size_t n = BLOB_PART - w->len < len ? BLOB_PART - w->len : len;
        memcpy(w->buf + w->len, p, n);
        w->len += n;
        w->size += (long long)n;
        p += n;
        len -= n;
        if (w->len == BLOB_PART && flush_part(w, err))
            return -1;
    }
    return 0;
}

static void bw_drop(sl_store_bw *w)
{
    pg_conn x;
    if (!pg_take(w->b, &x, NULL)) {
        int rc = pg_begin(&x, NULL) ||
                 pg_changed(pg_qx(&x, "drop a blob's parts", "DELETE FROM blob_parts WHERE id=$1",
                            ARGS(w->id), NULL)) < 0 ||
                 pg_changed(pg_qx(&x, "drop a blob write", "DELETE FROM blob_writes WHERE id=$1",
                            ARGS(w->id), NULL)) < 0;
        pg_end_tx(&x, rc ? -1 : 0, NULL); /* else the sweep at an open drops them */
    }
    free(w->buf);
    free(w);
}

static int pg_blob_commit(sl_store_bw *w, sl_err *err)
{
    int rc = w->len ? flush_part(w, err) : 0;
    pg_conn x;
    if (!rc)
        rc = pg_take(w->b, &x, err);
    if (!rc) {
        char sz[24], t[24];
        rc = pg_begin(&x, err) ||
             pg_changed(pg_qx(&x, "keep a blob",
                        "INSERT INTO blobs(key, id, size, created_at) VALUES($1, $2, $3, $4)",
                        ARGS(w->key, w->id, pg_ll(sz, w->size), pg_ll(t, pg_now_s())), err)) < 0;
        if (rc && !strcmp(x.state, "23505"))
            sl_err_set(err, SL_EIO, "store: blob %s exists (a blob is written once)", w->key);
        if (!rc)
            rc = pg_changed(pg_qx(&x, "keep a blob", "DELETE FROM blob_writes WHERE id=$1",
                            ARGS(w->id), err)) < 0;
        rc = pg_end_tx(&x, rc ? -1 : 0, err);
    }
    if (rc) {
        bw_drop(w);
        return -1;
    }
    free(w->buf);
    free(w);
    return 0;
}

static void pg_blob_abort(sl_store_bw *w)
{
    bw_drop(w);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The bytes go to a memfd, sealed against any change, and the caller gets
 * a read-only descriptor on it: a file like SQLite's (pread, fstat,
 * sendfile work), kept in memory (or swap) until it is closed. */
static int pg_blob_open(sl_store_be *b, const char *key, long long *size, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int fd = -1;
    int rc = pg_changed(pg_qx(&x, "read a blob",
                        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, err)) < 0
                 ? -1
                 : 0;
    PGresult *r = NULL;
    if (!rc && !(r = pg_qx(&x, "read a blob", "SELECT id, size FROM blobs WHERE key=$1", ARGS(key),
                        err)))
        rc = -1;
    if (!rc && !pg_has_row(r))
        rc = sl_err_set(err, SL_ENOTFOUND, "store: there is no blob %s", key);
    long long total = 0, have = 0;
    char id[24] = "";
    if (!rc) {
        total = pg_col_ll(r, 0, 1);
        snprintf(id, sizeof id, "%s", PQgetvalue(r, 0, 0));
        fd = memfd_create("sluice-blob", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
            rc = sl_err_set(err, SL_EIO, "store: reading blob %s: memfd_create: %s", key,
                            strerror(errno));
    }
    PQclear(r);
    for (int part = 0; !rc && have < total; part++) {
        char p[24];
        const char *const v[] = {id, pg_ll(p, part)};
        PGresult *d = pg_run(&x, "read a blob's part",
                          "SELECT data FROM blob_parts WHERE id=$1 AND part=$2", 2, v, NULL,
                          NULL, 1, err);
        if (!d) {
            rc = -1;
        } else if (!pg_has_row(d)) {
            rc = sl_err_set(err, SL_EIO, "store: blob %s lacks its part %d", key, part);
        } else if (write_all(fd, PQgetvalue(d, 0, 0), (size_t)PQgetlength(d, 0, 0))) {
            rc = sl_err_set(err, SL_EIO, "store: reading blob %s: %s", key, strerror(errno));
        } else {
            have += PQgetlength(d, 0, 0);
        }
        PQclear(d);
    }
    pg_end_tx(&x, -1, NULL); /* read only: nothing to commit */
    if (!rc && have != total)
        rc = sl_err_set(err, SL_EIO, "store: blob %s has %lld bytes, not %lld", key, have, total);
    if (!rc && fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE))
        rc = sl_err_set(err, SL_EIO, "store: reading blob %s: sealing: %s", key, strerror(errno));
    if (rc) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* read-only, at its start; without /proc the sealed one serves */
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    if (ro >= 0) {
        close(fd);
        fd = ro;
    } else {
        lseek(fd, 0, SEEK_SET);
    }
    if (size)
        *size = total;
    return fd;
}

static int pg_blob_delete(sl_store_be *b, const char *key, sl_err *err)
{
    pg_conn x;
    if (pg_take(b, &x, err))
        return -1;
    int rc = pg_begin(&x, err);
    PGresult *r = NULL;
    if (!rc && !(r = pg_qx(&x, "delete a blob", "DELETE FROM blobs WHERE key=$1 RETURNING id",
                        ARGS(key), err)))
        rc = -1;
    if (!rc && !pg_has_row(r))
        rc = sl_err_set(err, SL_ENOTFOUND, "store: there is no blob %s", key);
    if (!rc)
        rc = pg_changed(pg_qx(&x, "delete a blob's parts", "DELETE FROM blob_parts WHERE id=$1",
                        ARGS(PQgetvalue(r, 0, 0)), err)) < 0;
    PQclear(r);
    return pg_end_tx(&x, rc ? -1 : 0, err);
}

const sl_store_ops sl_store_pg = {
    .scheme = "postgres",
    .open = pg_open,
    .close = pg_close,
    .release_memory = pg_release_memory,
    .ping = pg_ping,
    .shared = pg_shared,
    .event_publish = pg_event_publish,
    .events_since = pg_events_since,
    .stop_request = pg_stop_request,
    .enqueue_run = pg_enqueue_run,
    .claim_runs = pg_claim_runs,
    .run_state = pg_run_state,
    .rate_take = pg_rate_take,
    .running = pg_running,
    .listen = pg_listen,
    .app_add = pg_app_add,
    .app_list = pg_app_list,
    .app_get = pg_app_get,
    .app_delete = pg_app_delete,
    .app_update = pg_app_update,
    .app_versions = pg_app_versions,
    .app_get_version = pg_app_get_version,
    .app_dir = pg_app_dir,
    .key_create = pg_key_create,
    .key_list = pg_key_list,
    .key_revoke = pg_key_revoke,
    .key_app = pg_key_app,
    .key_scope_ok = pg_key_scope_ok,
    .keys_version = pg_keys_version,
    .tools_get = pg_tools_get,
    .tools_set = pg_tools_set,
    .admin_token = pg_admin_token,
    .admin_ok = pg_admin_ok,
    .start_run = pg_start_run,
    .finish_run = pg_finish_run,
    .run_get = pg_run_get,
    .run_events = pg_run_events,
    .runs_list = pg_runs_list,
    .run_logs = pg_run_logs,
    .conversation = pg_conversation,
    .history = pg_history,
    .message_add = pg_message_add,
    .conversations = pg_conversations,
    .messages = pg_messages,
    .conversation_delete = pg_conversation_delete,
    .conversation_rename = pg_conversation_rename,
    .feedback = pg_feedback,
    .file_add = pg_file_add,
    .file_get = pg_file_get,
    .blob_create = pg_blob_create,
    .blob_write = pg_blob_write,
    .blob_commit = pg_blob_commit,
    .blob_abort = pg_blob_abort,
    .blob_open = pg_blob_open,
    .blob_delete = pg_blob_delete,
    .kb_add = pg_kb_add,
    .kb_set = pg_kb_set,
    .kb_get = pg_kb_get,
    .kb_list = pg_kb_list,
    .kb_delete = pg_kb_delete,
    .kb_docs = pg_kb_docs,
    .kb_doc = pg_kb_doc,
    .kb_doc_of_source = pg_kb_doc_of_source,
    .kb_doc_put = pg_kb_doc_put,
    .kb_doc_delete = pg_kb_doc_delete,
    .kb_chunks = pg_kb_chunks,
    .kb_vectors = pg_kb_vectors,
    .kb_postings = pg_kb_postings,
    .kb_rows = pg_kb_rows,
    .kb_indexed = pg_kb_indexed,
    .kb_kw_put = pg_kb_kw_put,
    .kb_kw_done = pg_kb_kw_done,
};
