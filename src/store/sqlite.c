/*
 * store/sqlite — the SQLite backend of the store (see store.h): one
 * database in WAL mode under the data folder, a writer thread that commits
 * finished runs in groups, a reader connection for everything else, and a
 * checkpointer thread.  Only this file knows SQL.
 */
#include "store/store.h"
#include "core/map.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/dl.h"
#include "core/rand.h"
#include "core/sha256.h"
#include "knowledge/kwindex.h"

/* libsqlite3 is loaded when a store opens (core/dl.h), not linked: only
 * `sluice serve` and `sluice app` keep a store, and every other command
 * need not map it.  The calls below go through pointers sq_open fills. */
#define SQ_FNS(X)                                                                                 \
    X(sqlite3_bind_blob) X(sqlite3_bind_double) X(sqlite3_bind_int) X(sqlite3_bind_int64) X(sqlite3_bind_null)         \
    X(sqlite3_bind_text) X(sqlite3_busy_timeout) X(sqlite3_changes) X(sqlite3_clear_bindings)     \
    X(sqlite3_close) X(sqlite3_column_blob) X(sqlite3_column_bytes) X(sqlite3_column_double) X(sqlite3_column_int) X(sqlite3_column_int64)       \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_db_release_memory)                    \
    X(sqlite3_errmsg) X(sqlite3_exec) X(sqlite3_finalize) X(sqlite3_free) X(sqlite3_open_v2)      \
    X(sqlite3_last_insert_rowid) X(sqlite3_prepare_v2) X(sqlite3_prepare_v3) X(sqlite3_reset)      \
    X(sqlite3_sql) X(sqlite3_step) X(sqlite3_wal_checkpoint_v2)

#define SQ_PTR(f) static __typeof__(&f) sq_##f;
SQ_FNS(SQ_PTR)
#undef SQ_PTR
#define SQ_SYM(f) {#f, (void **)&sq_##f},
static const sl_dl_sym sq_syms[] = {SQ_FNS(SQ_SYM){NULL, NULL}};
#undef SQ_SYM
static const char *const sq_names[] = {"libsqlite3.so.0", "libsqlite3.so", NULL};
static sl_dl_lib sq_lib = {.what = "libsqlite3", .sonames = sq_names, .package = "libsqlite3-0",
                           .syms = sq_syms};

#define sqlite3_bind_blob sq_sqlite3_bind_blob
#define sqlite3_bind_double sq_sqlite3_bind_double
#define sqlite3_bind_int sq_sqlite3_bind_int
#define sqlite3_bind_int64 sq_sqlite3_bind_int64
#define sqlite3_bind_null sq_sqlite3_bind_null
#define sqlite3_bind_text sq_sqlite3_bind_text
#define sqlite3_busy_timeout sq_sqlite3_busy_timeout
#define sqlite3_changes sq_sqlite3_changes
#define sqlite3_clear_bindings sq_sqlite3_clear_bindings
#define sqlite3_close sq_sqlite3_close
#define sqlite3_column_blob sq_sqlite3_column_blob
#define sqlite3_column_bytes sq_sqlite3_column_bytes
#define sqlite3_column_double sq_sqlite3_column_double
#define sqlite3_column_int sq_sqlite3_column_int
#define sqlite3_column_int64 sq_sqlite3_column_int64
#define sqlite3_column_text sq_sqlite3_column_text
#define sqlite3_column_type sq_sqlite3_column_type
#define sqlite3_db_release_memory sq_sqlite3_db_release_memory
#define sqlite3_errmsg sq_sqlite3_errmsg
#define sqlite3_exec sq_sqlite3_exec
#define sqlite3_finalize sq_sqlite3_finalize
#define sqlite3_free sq_sqlite3_free
#define sqlite3_open_v2 sq_sqlite3_open_v2
#define sqlite3_last_insert_rowid sq_sqlite3_last_insert_rowid
#define sqlite3_prepare_v2 sq_sqlite3_prepare_v2
#define sqlite3_prepare_v3 sq_sqlite3_prepare_v3
#define sqlite3_sql sq_sqlite3_sql
#define sqlite3_reset sq_sqlite3_reset
#define sqlite3_step sq_sqlite3_step
#define sqlite3_wal_checkpoint_v2 sq_sqlite3_wal_checkpoint_v2

/* Migrations, in order; each runs once, in a transaction. */
static const char *const migrations[] = {
    /* 1: everything the first server keeps */
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE apps(id TEXT PRIMARY KEY, name TEXT NOT NULL, mode TEXT NOT NULL,"
    "  dsl TEXT NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE app_keys(id TEXT PRIMARY KEY, app_id TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,"
    "  hint TEXT NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER);"
    "CREATE TABLE runs(id TEXT PRIMARY KEY, app_id TEXT NOT NULL, task_id TEXT NOT NULL,"
    "  user TEXT, conversation_id TEXT, message_id TEXT, status TEXT NOT NULL, inputs TEXT,"
    "  outputs TEXT, error TEXT, elapsed REAL, total_tokens INTEGER DEFAULT 0,"
    "  total_steps INTEGER DEFAULT 0, created_at INTEGER NOT NULL, finished_at INTEGER);"
    "CREATE INDEX runs_app ON runs(app_id, created_at);"
    "CREATE INDEX runs_status ON runs(status);"
    "CREATE TABLE run_events(run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL,"
    "  data TEXT NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE conversations(id TEXT PRIMARY KEY, app_id TEXT NOT NULL, user TEXT,"
    "  name TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
    "CREATE INDEX conv_app ON conversations(app_id, user, updated_at);"
    "CREATE TABLE messages(id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL,"
    "  app_id TEXT NOT NULL, query TEXT, answer TEXT, run_id TEXT, created_at INTEGER NOT NULL);"
    "CREATE INDEX msg_conv ON messages(conversation_id, created_at);",
    /* 2: uploaded files (bytes in DIR/files/ID) */
    "CREATE TABLE files(id TEXT PRIMARY KEY, app_id TEXT NOT NULL, name TEXT NOT NULL,"
    "  size INTEGER NOT NULL, mime TEXT, user TEXT, created_at INTEGER NOT NULL);",
    /* 3: a run's events in one row, written with its end (one insert per run
     * instead of one per event) */
    "CREATE TABLE run_log(run_id TEXT PRIMARY KEY, events TEXT NOT NULL) WITHOUT ROWID;",
    /* 4: feedback on messages */
    "ALTER TABLE messages ADD COLUMN feedback TEXT;",
    /* 5: only running runs need finding by status (at start); a full index
     * on status costs every run's end an index update */
    "DROP INDEX runs_status;"
    "CREATE INDEX runs_running ON runs(status) WHERE status = 'running';",
    /* 6: events live in run_log since migration 3 */
    "DROP TABLE run_events;",
    /* 7: every DSL an app has had; apps.dsl is the current one */
    "CREATE TABLE app_versions(app_id TEXT NOT NULL, version INTEGER NOT NULL,"
    "  dsl TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY(app_id, version))"
    "  WITHOUT ROWID;"
    "INSERT INTO app_versions SELECT id, 1, dsl, created_at FROM apps;"
    "ALTER TABLE apps ADD COLUMN version INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE runs ADD COLUMN app_version INTEGER;",
    /* 8: node executions, read from each run's event log (writing a row
     * per node would cost every run; reading them is rare) */
    "CREATE VIEW node_executions AS SELECT l.run_id AS run_id,"
    "  json_extract(e.value, '$.data.id') AS id,"
    "  json_extract(e.value, '$.data.node_id') AS node_id,"
    "  json_extract(e.value, '$.data.node_type') AS node_type,"
    "  json_extract(e.value, '$.data.title') AS title,"
    "  json_extract(e.value, '$.data.index') AS step,"
    "  json_extract(e.value, '$.data.status') AS status,"
    "  json_extract(e.value, '$.data.inputs') AS inputs,"
    "  json_extract(e.value, '$.data.process_data') AS process_data,"
    "  json_extract(e.value, '$.data.outputs') AS outputs,"
    "  json_extract(e.value, '$.data.error') AS error,"
    "  json_extract(e.value, '$.data.elapsed_time') AS elapsed,"
    "  json_extract(e.value, '$.data.execution_metadata') AS metadata,"
    "  json_extract(e.value, '$.data.created_at') AS created_at,"
    "  json_extract(e.value, '$.data.finished_at') AS finished_at"
    " FROM run_log l, json_each(l.events) e"
    " WHERE json_extract(e.value, '$.event') = 'node_finished';",
    /* 9: tool bindings set by the admin (scope '' is the server's, else an
     * app id): never part of an app's export */
    "CREATE TABLE tool_bindings(scope TEXT PRIMARY KEY, spec TEXT NOT NULL,"
    "  updated_at INTEGER NOT NULL) WITHOUT ROWID;",
    /* 10: knowledge bases; each has its full-text table kbf_N (N: kb.n),
     * made with it */
    "CREATE TABLE kb(n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE,"
    "  info TEXT NOT NULL, generation INTEGER NOT NULL DEFAULT 0,"
    "  chunks_generation INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL);"
    "CREATE TABLE kb_docs(n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kb INTEGER NOT NULL,"
    "  info TEXT NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE INDEX kb_docs_kb ON kb_docs(kb, created_at);"
    "CREATE TABLE kb_chunks(n INTEGER PRIMARY KEY, id TEXT NOT NULL, kb INTEGER NOT NULL,"
    "  doc INTEGER NOT NULL, parent INTEGER NOT NULL, position INTEGER NOT NULL,"
    "  content TEXT NOT NULL, fts TEXT, info TEXT, vec BLOB);"
    "CREATE INDEX kb_chunks_doc ON kb_chunks(doc, parent);"
    "CREATE INDEX kb_chunks_vec ON kb_chunks(kb) WHERE vec IS NOT NULL;",
    /* 11: sluice's own keyword index (knowledge/kwindex.h) replaces the
     * FTS5 tables: segments of pages of terms (a document's own, merged
     * ones; see merge_segments), chunk numbers gone from merged segments, counts
     * for BM25; kw 0 marks the knowledge bases still to index again (kb.c
     * does, then drops kbf_N) */
    "ALTER TABLE kb ADD COLUMN kw INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE kb ADD COLUMN kw_rows INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE kb ADD COLUMN kw_tokens INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE kb_docs ADD COLUMN kw_rows INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE kb_docs ADD COLUMN kw_tokens INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE kb_docs ADD COLUMN kw_seg INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE kb_segs(n INTEGER PRIMARY KEY, kb INTEGER NOT NULL, level INTEGER NOT NULL,"
    "  doc INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX kb_segs_kb ON kb_segs(kb, level);"
    "CREATE TABLE kb_pages(seg INTEGER NOT NULL, first TEXT NOT NULL, data BLOB NOT NULL,"
    "  PRIMARY KEY(seg, first)) WITHOUT ROWID;"
    "CREATE TABLE kb_dead(kb INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL);"
    "CREATE INDEX kb_dead_kb ON kb_dead(kb);"
    /* adding a document finds the one of the same source and the next
     * position without reading every document */
    "CREATE INDEX kb_docs_source ON kb_docs(kb, json_extract(info, '$.source'));"
    "CREATE INDEX kb_docs_position ON kb_docs(kb, json_extract(info, '$.position'));",
    /* 12: the admin API lists the runs of every app, newest first */
    "CREATE INDEX runs_created ON runs(created_at, id);",
    /* 13: a running run's lease, as on PostgreSQL (store/pg.c), where
     * several processes share the runs; one process owns a SQLite store,
     * so its open fails every run left running and these stay empty */
    "ALTER TABLE runs ADD COLUMN owner TEXT;"
    "ALTER TABLE runs ADD COLUMN lease_until INTEGER;",
    /* 14: a running run's events for other processes, as on PostgreSQL;
     * one process owns a SQLite store, so this stays empty */
    "CREATE TABLE run_events(run_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,"
    "  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;",
    /* 15: runs as jobs, as on PostgreSQL: a queued run's request, the
     * attempt that holds it (epoch), how often it was tried, and its
     * blocking answer; one process runs a SQLite store's runs at once, so
     * none is ever queued here */
    "ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE runs ADD COLUMN request TEXT;"
    "ALTER TABLE runs ADD COLUMN reply TEXT;"
    "ALTER TABLE runs ADD COLUMN qseq INTEGER;",
    /* 16: knowledge on PostgreSQL (store/pg_kb.c); nothing here */
    "SELECT 1;",
};

typedef struct op {
    struct op *next;
    enum { OP_START, OP_FINISH } kind;
    char *run_id;
    char *a, *b, *c, *d, *e, *f;   /* strings, by kind */
    char *json1, *json2;
    int seq, steps;
    double elapsed;
    long long tokens, when;
    /* OP_FINISH: the caller waits for its group, on a condition of its
     * own (one broadcast for all woke every waiter at every commit, also
     * those whose run is in the next group) */
    bool done;
    pthread_cond_t done_cv;
    int rc;
    /* OP_FINISH: the run's OP_START in the same group, written with it as
     * one INSERT (a short run then costs one row write, not two). */
    struct op *start;
    bool merged;               /* OP_START: written by its OP_FINISH */
} op;

/* Statements kept prepared on one connection, used under its lock: parsing
 * the SQL again at every use was 8% of the knowledge writer's time and 4%
 * of preparing a document.  An entry is found by the SQL's address and
 * checked against its text (so a text made at run time is safe too). */
typedef struct {
    struct stmt_entry {
        const char *sql;
        sqlite3_stmt *st;
        bool busy;
    } e[32];
    int n;
} stmt_cache;

struct sl_store_be {
    char *dir;
    char *keys_stamp;          /* DIR/keys-changed */
    sqlite3 *w, *r;            /* writer (writer thread only) and reader */
    sqlite3_stmt *wst[6];      /* the writer's statements, prepared once */
    sqlite3 *ck;               /* checkpoints, on their own thread */
    pthread_cond_t ckcv;       /* wakes the checkpointer (at close) */
    pthread_t checkpointer;
    pthread_mutex_t rmu;       /* the reader connection */
    /* knowledge writes: a document's chunks are written on a connection of
     * their own, so reads (the next document's preparation, searches) go
     * on meanwhile, as WAL allows */
    sqlite3 *kw;
    pthread_mutex_t kwmu;
    stmt_cache kwc;            /* kw's statements, kept prepared (kq) */
    bool scrub;                /* kw zeroes what it deletes until kb_end */
    stmt_cache rc;             /* the reader's (q_open) */
    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    op *head, *tail;
    bool stop;
    pthread_t writer;
};

/* The statement for sql on db from cache c (prepared when it has none
 * free: a nested use of the same text gets one of its own), NULL when it
 * does not prepare; sc_done hands it back. */
static sqlite3_stmt *sc_get(stmt_cache *c, sqlite3 *db, const char *sql)
{
    for (int i = 0; i < c->n; i++)
        if (!c->e[i].busy && c->e[i].sql == sql && !strcmp(sqlite3_sql(c->e[i].st), sql)) {
            c->e[i].busy = true;
            return c->e[i].st;
        }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return NULL;
    if (c->n < (int)(sizeof c->e / sizeof *c->e))
        c->e[c->n++] = (struct stmt_entry){sql, st, true};
    return st;
}

static void sc_done(stmt_cache *c, sqlite3_stmt *st)
{
    if (!st)
        return;
    for (int i = 0; i < c->n; i++)
        if (c->e[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            c->e[i].busy = false;
            return;
        }
    sqlite3_finalize(st);
}

static void sc_free(stmt_cache *c)
{
    for (int i = 0; i < c->n; i++)
        sqlite3_finalize(c->e[i].st);
    c->n = 0;
}


static long long now_s(void)
{
    return (long long)time(NULL);
}

/* A UUID v4 in text form (heap), or NULL and err when the kernel gives no
 * randomness. */
static char *uuid(sl_err *err)
{
    char h[33];
    if (sl_rand_hex(h, 16, err))
        return NULL;
    h[12] = '4';
    h[16] = "89ab"[h[16] % 4];
    return sl_xasprintf("%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

static int db_err(sl_err *err, sqlite3 *db, const char *what)
{
    return sl_err_set(err, SL_EIO, "store: %s: %s", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql, sl_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sl_err_set(err, SL_EIO, "store: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* own: a connection only one thread at a time uses, under a lock of ours
 * (SQLite's own mutex on every call is then spared) */
static int open_db_as(const char *path, sqlite3 **db, bool own, sl_err *err)
{
    if (sqlite3_open_v2(path, db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            (own ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_FULLMUTEX),
                        NULL) != SQLITE_OK) {
        sl_err_set(err, SL_EIO, "store: cannot open %s: %s", path,
                   *db ? sqlite3_errmsg(*db) : "out of memory");
        return -1;
    }
    sqlite3_busy_timeout(*db, 10000);
    /* WAL: readers never block the writer; NORMAL: a commit survives the
     * process being killed (not a power cut) without an fsync each */
    return exec(*db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                err);
}

static int open_db(const char *path, sqlite3 **db, sl_err *err)
{
    return open_db_as(path, db, false, err);
}

static int migrate(sqlite3 *db, sl_err *err)
{
    int have = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            have = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    int want = (int)(sizeof migrations / sizeof *migrations);
    if (have > want)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "store: the database is at schema %d, newer than this sluice knows (%d); "
                          "use a newer sluice",
                          have, want);
    for (int v = have; v < want; v++) {
        char *ver = sl_xasprintf("PRAGMA user_version=%d", v + 1);
        int rc = exec(db, "BEGIN IMMEDIATE", err) || exec(db, migrations[v], err) ||
                 exec(db, ver, err) || exec(db, "COMMIT", err);
        free(ver);
        if (rc) {
            exec(db, "ROLLBACK", NULL);
            return sl_err_prefix(err, "migration %d", v + 1);
        }
    }
    return 0;
}

/* ---- the writer ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* bind_text for a string that outlives the statement's next step: not
 * copied (a document's chunks are megabytes) */
static void bind_kept(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static int apply(sl_store_be *s, op *o)
{
    sqlite3 *db = s->w;
    static const char *const sql[] = {
        "INSERT INTO runs(id, app_id, task_id, user, conversation_id, message_id, status, inputs,"
        " created_at, app_version) VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9)",
        "UPDATE runs SET status=?2, outputs=?3, error=?4, elapsed=?5, total_tokens=?6,"
        " total_steps=?7, finished_at=?8 WHERE id=?1",
    };
    static const char log_sql[] = "INSERT OR REPLACE INTO run_log(run_id, events) VALUES(?1, ?2)";
    static const char whole_sql[] =
        "INSERT INTO runs(id, app_id, task_id, user, conversation_id, message_id, status, inputs,"
        " created_at, outputs, error, elapsed, total_tokens, total_steps, finished_at,"
        " app_version)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?9, ?7, ?8, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
    if (o->kind == OP_START && o->merged)
        return 0;
    int slot = o->kind == OP_FINISH && o->start ? 5 : (int)o->kind;
    sqlite3_stmt *st = s->wst[slot];
    if (!st && sqlite3_prepare_v3(db, slot == 5 ? whole_sql : sql[o->kind], -1,
                                  SQLITE_PREPARE_PERSISTENT, &s->wst[slot], NULL) != SQLITE_OK)
        return -1;
    st = s->wst[slot];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    bind_text(st, 1, o->run_id);
    if (slot == 5) {
        const op *b = o->start;
        bind_text(st, 2, b->a);
        bind_text(st, 3, b->b);
        bind_text(st, 4, b->c);
        bind_text(st, 5, b->d);
        bind_text(st, 6, b->e);
        bind_text(st, 7, b->json1);
        sqlite3_bind_int64(st, 8, b->when);
        bind_text(st, 9, o->a);
        bind_text(st, 10, o->json1);
        bind_text(st, 11, o->b);
        sqlite3_bind_double(st, 12, o->elapsed);
        sqlite3_bind_int64(st, 13, o->tokens);
        sqlite3_bind_int(st, 14, o->steps);
        sqlite3_bind_int64(st, 15, o->when);
        if (b->seq > 0)
            sqlite3_bind_int(st, 16, b->seq);
    }
    switch (slot == 5 ? -1 : (int)o->kind) {
    case OP_START:
        bind_text(st, 2, o->a);
        bind_text(st, 3, o->b);
        bind_text(st, 4, o->c);
        bind_text(st, 5, o->d);
        bind_text(st, 6, o->e);
        bind_text(st, 7, o->json1);
        sqlite3_bind_int64(st, 8, o->when);
        if (o->seq > 0)
            sqlite3_bind_int(st, 9, o->seq);
        break;
    case OP_FINISH:
        bind_text(st, 2, o->a);
        bind_text(st, 3, o->json1);
        bind_text(st, 4, o->b);
        sqlite3_bind_double(st, 5, o->elapsed);
        sqlite3_bind_int64(st, 6, o->tokens);
        sqlite3_bind_int(st, 7, o->steps);
        sqlite3_bind_int64(st, 8, o->when);
        break;
    }
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_reset(st);
    if (!rc && o->kind == OP_FINISH && o->json2) {
        if (!s->wst[4] && sqlite3_prepare_v3(db, log_sql, -1, SQLITE_PREPARE_PERSISTENT,
                                             &s->wst[4], NULL) != SQLITE_OK)
            return -1;
        st = s->wst[4];
        sqlite3_reset(st);
        bind_text(st, 1, o->run_id);
        bind_text(st, 2, o->json2);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(st);
    }
    if (!rc && o->kind == OP_FINISH && o->c) {
        /* the answer of the message this run made */
        if (!s->wst[3] && sqlite3_prepare_v3(db, "UPDATE messages SET answer=?2 WHERE run_id=?1",
                                             -1, SQLITE_PREPARE_PERSISTENT, &s->wst[3],
                                             NULL) != SQLITE_OK)
            return -1;
        st = s->wst[3];
        sqlite3_reset(st);
        bind_text(st, 1, o->run_id);
        bind_text(st, 2, o->c);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(st);
    }
    return rc;
}

static void free_op(op *o)
{
    free(o->run_id);
    free(o->a);
    free(o->b);
    free(o->c);
    free(o->d);
    free(o->e);
    free(o->f);
    free(o->json1);
    free(o->json2);
    free(o);
}

static void *writer_main(void *arg)
{
    sl_store_be *s = arg;
    pthread_mutex_lock(&s->qmu);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->qcv, &s->qmu);
        if (!s->head && s->stop)
            break;
        op *batch = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->qmu);
        /* A run that started and finished within this group is written
         * once, by one INSERT with its final state. */
        sl_map starts;
        sl_map_init(&starts);
        for (op *o = batch; o; o = o->next) {
            if (o->kind == OP_START) {
                sl_map_put(&starts, o->run_id, o);
            } else {
                op *b = sl_map_get(&starts, o->run_id);
                if (b && !b->merged) {
                    b->merged = true;
                    o->start = b;
                }
            }
        }
        sl_map_release(&starts);
        /* one transaction for everything that queued up meanwhile */
        int rc = sqlite3_exec(s->w, "BEGIN", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
        for (op *o = batch; o && !rc; o = o->next)
            rc = apply(s, o);
        rc = !rc && sqlite3_exec(s->w, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
        if (rc)
            sqlite3_exec(s->w, "ROLLBACK", NULL, NULL, NULL);
        pthread_mutex_lock(&s->qmu);
        for (op *o = batch, *next; o; o = next) {
            next = o->next;
            if (o->kind == OP_FINISH) {
                o->rc = rc;
                o->done = true; /* the waiter frees it */
                pthread_cond_signal(&o->done_cv);
            } else {
                free_op(o);
            }
        }
    }
    pthread_mutex_unlock(&s->qmu);
    return NULL;
}

/* Checkpoints move the WAL into the database; done here, off the commit
 * path, so no request waits for their disk syncs. */
static void *checkpoint_main(void *arg)
{
    sl_store_be *s = arg;
    pthread_mutex_lock(&s->qmu);
    while (!s->stop) {
        /* every 250 ms: small checkpoints keep the WAL short and the
         * latency of runs even (1 s ones showed as a 50% higher p99) */
        struct timespec ts = sl_clock_wall_in(0.25);
        pthread_cond_timedwait(&s->ckcv, &s->qmu, &ts);
        if (s->stop)
            break;
        pthread_mutex_unlock(&s->qmu);
        sqlite3_wal_checkpoint_v2(s->ck, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&s->qmu);
    }
    pthread_mutex_unlock(&s->qmu);
    return NULL;
}

static void enqueue(sl_store_be *s, op *o)
{
    pthread_mutex_lock(&s->qmu);
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    pthread_cond_signal(&s->qcv);
    pthread_mutex_unlock(&s->qmu);
}

static char *dup_or_null(const char *s)
{
    return s ? sl_xstrdup(s) : NULL;
}

static char *json_or_null(const sl_value *v)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

/* ---- open / close ---- */

/* A folder of the store, made or tightened to 0700: it holds key hashes,
 * the admin token, every run's inputs and outputs and the uploads, so no
 * other user may list or read it, whatever mode it was created with. */
static int private_dir(const char *path, sl_err *err)
{
    if (mkdir(path, 0700) && errno != EEXIST)
        return sl_err_set(err, SL_EIO, "store: cannot create %s: %s", path, strerror(errno));
    struct stat sb;
    if (stat(path, &sb))
        return sl_err_set(err, SL_EIO, "store: cannot read %s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sl_err_set(err, SL_EIO, "store: %s is not a folder; give --data a folder", path);
    if ((sb.st_mode & 07777) != 0700 && chmod(path, 0700))
        return sl_err_set(err, SL_EIO, "store: cannot make %s private (chmod 700: %s); it holds "
                          "keys and run data: give it to this user or chmod 700 it", path,
                          strerror(errno));
    return 0;
}

/* The database and its WAL and shared-memory files, 0600 (SQLite makes the
 * -wal and -shm files with the database's mode). */
static int private_db(const char *db, sl_err *err)
{
    int fd = open(db, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return sl_err_set(err, SL_EIO, "store: cannot open %s: %s", db, strerror(errno));
    int rc = fchmod(fd, 0600);
    close(fd);
    if (rc)
        return sl_err_set(err, SL_EIO, "store: cannot make %s private (chmod 600: %s)", db,
                          strerror(errno));
    static const char *const side[] = {"-wal", "-shm"};
    for (size_t i = 0; i < 2; i++) {
        char *p = sl_xasprintf("%s%s", db, side[i]);
        rc = chmod(p, 0600) && errno != ENOENT;
        int e = errno;
        free(p);
        if (rc)
            return sl_err_set(err, SL_EIO, "store: cannot make %s%s private (chmod 600: %s)", db,
                              side[i], strerror(e));
    }
    return 0;
}

static int sq_open(const char *dir, sl_store_be **out, int *interrupted, sl_err *err)
{
    *out = NULL;
    *interrupted = 0;
    if (sl_dl_load(&sq_lib, err))
        return sl_err_prefix(err, "store");
    char *files = sl_xasprintf("%s/files", dir);
    char *db = sl_xasprintf("%s/sluice.db", dir);
    int prc = private_dir(dir, err) || private_dir(files, err) || private_db(db, err);
    free(files);
    free(db);
    if (prc)
        return -1;
    sl_store_be *s = sl_xcalloc(1, sizeof *s);
    s->dir = sl_xstrdup(dir);
    s->keys_stamp = sl_xasprintf("%s/keys-changed", dir);
    pthread_mutex_init(&s->rmu, NULL);
    pthread_mutex_init(&s->kwmu, NULL);
    pthread_mutex_init(&s->qmu, NULL);
    pthread_cond_init(&s->qcv, NULL);
    pthread_cond_init(&s->ckcv, NULL);
    char *path = sl_xasprintf("%s/sluice.db", dir);
    int rc = open_db(path, &s->w, err) || migrate(s->w, err) || open_db(path, &s->r, err) ||
             open_db(path, &s->ck, err) ||
             exec(s->w, "PRAGMA wal_autocheckpoint=0", err);
    free(path);
    if (rc) {
        if (s->w)
            sqlite3_close(s->w);
        if (s->r)
            sqlite3_close(s->r);
        if (s->ck)
            sqlite3_close(s->ck);
        free(s->keys_stamp);
        free(s->dir);
        free(s);
        return -1;
    }
    /* runs the last process left running will never end: say so */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->w,
                           "UPDATE runs SET status='failed', error='interrupted: the server "
                           "stopped before the run ended', finished_at=?1 WHERE status='running'",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now_s());
        if (sqlite3_step(st) == SQLITE_DONE)
            *interrupted = sqlite3_changes(s->w);
        sqlite3_finalize(st);
    }
    pthread_create(&s->writer, NULL, writer_main, s);
    pthread_create(&s->checkpointer, NULL, checkpoint_main, s);
    *out = s;
    return 0;
}

/* A database in a folder of this machine: there is nothing to reach. */
static int sq_ping(sl_store_be *s, sl_err *err)
{
    (void)s, (void)err;
    return 0;
}

/* One process owns a SQLite store: its runs' events live in its memory
 * (server.c), and nothing travels. */
static bool sq_shared(sl_store_be *s)
{
    (void)s;
    return false;
}

static void sq_event_publish(sl_store_be *s, const char *run_id, long long seq, const char *text,
                             size_t len)
{
    (void)s, (void)run_id, (void)seq, (void)text, (void)len;
}

static sl_value *sq_events_since(sl_store_be *s, const char *run_id, long long after)
{
    (void)s, (void)run_id, (void)after;
    return json_array();
}

static long long sq_running(sl_store_be *s, const char *app_id)
{
    (void)s, (void)app_id;
    return -1;
}

static int sq_stop_request(sl_store_be *s, const char *run_id, sl_err *err)
{
    (void)s, (void)run_id;
    return sl_err_set(err, SL_EUNSUPPORTED, "store: a SQLite store has one process; it stops "
                      "its runs itself");
}

#define SQ_ONE_PROCESS                                                                            \
    "store: a SQLite store has one process, which runs every run itself: runs are queued only " \
    "on a shared store (PostgreSQL: --store postgres://…)"

static int sq_enqueue_run(sl_store_be *s, const sl_run_row *r, const char *request, sl_err *err)
{
    (void)s, (void)r, (void)request;
    return sl_err_set(err, SL_EUNSUPPORTED, SQ_ONE_PROCESS);
}

static int sq_claim_runs(sl_store_be *s, int max, sl_value **out, sl_err *err)
{
    (void)s, (void)max, (void)out;
    return sl_err_set(err, SL_EUNSUPPORTED, SQ_ONE_PROCESS);
}

static int sq_run_state(sl_store_be *s, const char *run_id, char **status, char **reply,
                        sl_err *err)
{
    (void)s, (void)run_id, (void)status, (void)reply;
    return sl_err_set(err, SL_EUNSUPPORTED, SQ_ONE_PROCESS);
}

static int sq_rate_take(sl_store_be *s, const char *key, double per_s, sl_err *err)
{
    (void)s, (void)key, (void)per_s;
    return sl_err_set(err, SL_EUNSUPPORTED, "store: a SQLite store has one process, which "
                      "keeps its rate limits itself");
}

static int sq_listen(sl_store_be *s, sl_store_listen_fn fn, void *ud, sl_err *err)
{
    (void)s, (void)fn, (void)ud;
    return sl_err_set(err, SL_EUNSUPPORTED, "store: a SQLite store has one process: there is "
                      "nothing to listen to");
}

static void sq_release_memory(sl_store_be *s)
{
    sqlite3_db_release_memory(s->w);
    sqlite3_db_release_memory(s->r);
    sqlite3_db_release_memory(s->ck);
}

static void sq_close(sl_store_be *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->qmu);
    s->stop = true;
    pthread_cond_broadcast(&s->qcv);
    pthread_cond_broadcast(&s->ckcv);
    pthread_mutex_unlock(&s->qmu);
    pthread_join(s->writer, NULL);
    pthread_join(s->checkpointer, NULL);
    for (size_t i = 0; i < sizeof s->wst / sizeof *s->wst; i++)
        sqlite3_finalize(s->wst[i]);
    sqlite3_wal_checkpoint_v2(s->ck, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_close(s->ck);
    sqlite3_close(s->w);
    sc_free(&s->rc);
    sqlite3_close(s->r);
    if (s->kw) {
        sc_free(&s->kwc);
        sqlite3_close(s->kw);
    }
    pthread_mutex_destroy(&s->rmu);
    pthread_mutex_destroy(&s->kwmu);
    pthread_mutex_destroy(&s->qmu);
    pthread_cond_destroy(&s->qcv);
    pthread_cond_destroy(&s->ckcv);
    free(s->keys_stamp);
    free(s->dir);
    free(s);
}

/* DIR/apps/ID; DIR/apps is made (0700) on first use. */
static char *sq_app_dir(sl_store_be *s, const char *id, sl_err *err)
{
    char *apps = sl_xasprintf("%s/apps", s->dir);
    if (mkdir(apps, 0700) && errno != EEXIST) {
        sl_err_set(err, SL_EIO, "store: cannot create %s: %s", apps, strerror(errno));
        free(apps);
        return NULL;
    }
    char *dir = sl_xasprintf("%s/%s", apps, id);
    free(apps);
    return dir;
}

/* ---- reads and small writes on the reader connection ---- */

typedef struct {
    sl_store_be *s;
    sqlite3_stmt *st;
} q;

static bool q_open(q *x, sl_store_be *s, const char *sql)
{
    x->s = s;
    pthread_mutex_lock(&s->rmu);
    if (!(x->st = sc_get(&s->rc, s->r, sql))) {
        pthread_mutex_unlock(&s->rmu);
        return false;
    }
    return true;
}

static void q_close(q *x)
{
    sc_done(&x->s->rc, x->st);
    pthread_mutex_unlock(&x->s->rmu);
}

static sl_value *col_json(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    sl_value *v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : json_null();
}

/* An integer column, or null where it is NULL. */
static sl_value *col_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_integer(sqlite3_column_int64(st, i));
}

static sl_value *col_str(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? json_string(t) : json_null();
}

/* A statement on the reader connection that changes something. */
static int write_now(sl_store_be *s, const char *sql, const char *const *args, int n, sl_err *err)
{
    q x;
    if (!q_open(&x, s, sql))
        return db_err(err, s->r, "prepare");
    for (int i = 0; i < n; i++)
        bind_text(x.st, i + 1, args[i]);
    int rc = sqlite3_step(x.st) == SQLITE_DONE ? 0 : db_err(err, s->r, "write");
    int changed = sqlite3_changes(s->r);
    q_close(&x);
    return rc ? rc : changed;
}

static void keys_changed(sl_store_be *s);
static int sq_app_get(sl_store_be *s, const char *id, char **dsl, sl_value **info, sl_err *err);

/* Statements on the reader connection in one transaction; args[i] binds
 * ?1.. of sql[i] (NULL-terminated lists).  The number of rows the last
 * statement changed, or -1. */
static int write_tx(sl_store_be *s, const char *const *sql, const char *const *const *args,
                    sl_err *err)
{
    pthread_mutex_lock(&s->rmu);
    int rc = sqlite3_exec(s->r, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    int changed = 0;
    for (int i = 0; sql[i] && !rc; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->r, sql[i], -1, &st, NULL) != SQLITE_OK) {
            rc = -1;
            break;
        }
        for (int k = 0; args[i][k]; k++)
            bind_text(st, k + 1, args[i][k]);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        changed = sqlite3_changes(s->r);
        sqlite3_finalize(st);
    }
    if (rc) {
        db_err(err, s->r, "write");
        sqlite3_exec(s->r, "ROLLBACK", NULL, NULL, NULL);
    } else if (sqlite3_exec(s->r, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_err(err, s->r, "commit");
    }
    pthread_mutex_unlock(&s->rmu);
    return rc ? -1 : changed;
}

static int sq_app_add(sl_store_be *s, const char *name, const char *mode, const char *dsl,
                      char **id, sl_err *err)
{
    if (!(*id = uuid(err)))
        return -1;
    char when[32];
    snprintf(when, sizeof when, "%lld", now_s());
    const char *const a1[] = {*id, name, mode, dsl, when, NULL};
    const char *const a2[] = {*id, dsl, when, NULL};
    const char *const sql[] = {
        "INSERT INTO apps(id, name, mode, dsl, created_at, version) VALUES(?1,?2,?3,?4,?5,1)",
        "INSERT INTO app_versions(app_id, version, dsl, created_at) VALUES(?1,1,?2,?3)", NULL};
    const char *const *args[] = {a1, a2};
    if (write_tx(s, sql, args, err) < 0) {
        free(*id);
        *id = NULL;
        return -1;
    }
    return 0;
}

static int sq_app_update(sl_store_be *s, const char *id, const char *name, const char *mode,
                         const char *dsl, int *version, sl_err *err)
{
    char when[32];
    snprintf(when, sizeof when, "%lld", now_s());
    const char *const a1[] = {id, dsl, when, NULL};
    const char *const a2[] = {id, name, mode, dsl, NULL};
    const char *const sql[] = {
        "INSERT INTO app_versions(app_id, version, dsl, created_at)"
        " SELECT id, version + 1, ?2, ?3 FROM apps WHERE id=?1",
        "UPDATE apps SET name=?2, mode=?3, dsl=?4, version=version + 1 WHERE id=?1", NULL};
    const char *const *args[] = {a1, a2};
    int n = write_tx(s, sql, args, err);
    if (n < 0)
        return -1;
    if (n == 0)
        return sl_err_set(err, SL_ENOTFOUND, "no app with id '%s' (sluice app list shows them)", id);
    sl_value *info = NULL;
    if (sq_app_get(s, id, NULL, &info, err))
        return -1;
    *version = (int)json_integer_value(json_object_get(info, "version"));
    json_decref(info);
    keys_changed(s);  /* servers reload the app */
    return 0;
}

static int sq_app_versions(sl_store_be *s, const char *id, sl_value **out, sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT version, created_at FROM app_versions WHERE app_id=?1"
                       " ORDER BY version DESC"))
        return db_err(err, s->r, "list versions");
    bind_text(x.st, 1, id);
    sl_value *arr = json_array();
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I, s:I}", "version",
                                             (json_int_t)sqlite3_column_int64(x.st, 0),
                                             "created_at",
                                             (json_int_t)sqlite3_column_int64(x.st, 1)));
    q_close(&x);
    if (!json_array_size(arr)) {
        json_decref(arr);
        return sl_err_set(err, SL_ENOTFOUND, "no app with id '%s' (sluice app list shows them)", id);
    }
    *out = arr;
    return 0;
}

static int sq_app_get_version(sl_store_be *s, const char *id, int version, char **dsl, sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT dsl FROM app_versions WHERE app_id=?1 AND version=?2"))
        return db_err(err, s->r, "get version");
    bind_text(x.st, 1, id);
    sqlite3_bind_int(x.st, 2, version);
    int rc = -1;
    if (sqlite3_step(x.st) == SQLITE_ROW) {
        *dsl = sl_xstrdup((const char *)sqlite3_column_text(x.st, 0));
        rc = 0;
    } else {
        sl_err_set(err, SL_ENOTFOUND, "app '%s' has no version %d (sluice app versions %s lists "
                   "them)", id, version, id);
    }
    q_close(&x);
    return rc;
}

static int sq_app_list(sl_store_be *s, sl_value **out, sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT id, name, mode, created_at, version FROM apps"
                       " ORDER BY created_at DESC, id"))
        return db_err(err, s->r, "list apps");
    sl_value *arr = json_array();
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:I, s:I}", "id", col_str(x.st, 0),
                                             "name", col_str(x.st, 1), "mode", col_str(x.st, 2),
                                             "created_at",
                                             (json_int_t)sqlite3_column_int64(x.st, 3), "version",
                                             (json_int_t)sqlite3_column_int64(x.st, 4)));
    q_close(&x);
    *out = arr;
    return 0;
}

static int sq_app_get(sl_store_be *s, const char *id, char **dsl, sl_value **info, sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT dsl, name, mode, created_at, version FROM apps WHERE id=?1"))
        return db_err(err, s->r, "get app");
    bind_text(x.st, 1, id);
    int rc = -1;
    if (sqlite3_step(x.st) == SQLITE_ROW) {
        if (dsl)
            *dsl = sl_xstrdup((const char *)sqlite3_column_text(x.st, 0));
        if (info)
            *info = json_pack("{s:s, s:o, s:o, s:I, s:I}", "id", id, "name", col_str(x.st, 1),
                              "mode", col_str(x.st, 2), "created_at",
                              (json_int_t)sqlite3_column_int64(x.st, 3), "version",
                              (json_int_t)sqlite3_column_int64(x.st, 4));
        rc = 0;
    } else {
        sl_err_set(err, SL_ENOTFOUND, "no app with id '%s' (sluice app list shows them)", id);
    }
    q_close(&x);
    return rc;
}

static int sq_app_delete(sl_store_be *s, const char *id, sl_err *err)
{
    const char *args[] = {id};
    int n = write_now(s, "DELETE FROM apps WHERE id=?1", args, 1, err);
    if (n < 0)
        return -1;
    if (n == 0)
        return sl_err_set(err, SL_ENOTFOUND, "no app with id '%s'", id);
    write_now(s, "DELETE FROM app_versions WHERE app_id=?1", args, 1, NULL);
    write_now(s, "UPDATE app_keys SET revoked_at=strftime('%s','now') WHERE app_id=?1", args, 1,
              NULL);
    keys_changed(s);
    return 0;
}

static int sq_key_create(sl_store_be *s, const char *app_id, char **key, sl_err *err)
{
    bool datasets = !strcmp(app_id, SL_STORE_DATASETS);
    if (!datasets && sq_app_get(s, app_id, NULL, NULL, err))
        return -1;
    const char *prefix = datasets ? "dataset" : "app";
    char secret[49];
    char *id = NULL, hint[24], when[32];
    *key = NULL;
    if (sl_rand_hex(secret, 24, err) || !(id = uuid(err)))
        return -1;
    *key = sl_xasprintf("%s-%s", prefix, secret);
    char hash[65];
    sl_sha256_hex(*key, strlen(*key), hash);
    snprintf(hint, sizeof hint, "%s-…%s", prefix, secret + 44);
    snprintf(when, sizeof when, "%lld", now_s());
    const char *args[] = {id, app_id, hash, hint, when};
    int rc = write_now(s, "INSERT INTO app_keys(id, app_id, hash, hint, created_at) "
                          "VALUES(?1,?2,?3,?4,?5)",
                       args, 5, err);
    free(id);
    if (rc < 0) {
        free(*key);
        *key = NULL;
        return -1;
    }
    return 0;
}

static int sq_key_list(sl_store_be *s, const char *app_id, sl_value **out, sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT id, hint, created_at, revoked_at FROM app_keys WHERE app_id=?1 "
                       "ORDER BY created_at, id"))
        return db_err(err, s->r, "list keys");
    bind_text(x.st, 1, app_id);
    sl_value *arr = json_array();
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:o, s:o, s:I, s:b}", "id", col_str(x.st, 0),
                                             "hint", col_str(x.st, 1), "created_at",
                                             (json_int_t)sqlite3_column_int64(x.st, 2), "revoked",
                                             sqlite3_column_type(x.st, 3) != SQLITE_NULL));
    q_close(&x);
    *out = arr;
    return 0;
}

/* Servers cache keys; touching this file tells them to forget the cache. */
static void keys_changed(sl_store_be *s)
{
    int fd = open(s->keys_stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
}

static long long sq_keys_version(sl_store_be *s)
{
    struct stat sb;
    return stat(s->keys_stamp, &sb) ? 0
                                    : (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
}

static int sq_key_revoke(sl_store_be *s, const char *key_id, sl_err *err)
{
    const char *args[] = {key_id};
    int n = write_now(s, "UPDATE app_keys SET revoked_at=strftime('%s','now') WHERE id=?1 AND "
                         "revoked_at IS NULL",
                      args, 1, err);
    if (n < 0)
        return -1;
    keys_changed(s);
    return n ? 0 : sl_err_set(err, SL_ENOTFOUND, "no active key with id '%s'", key_id);
}

static int sq_tools_get(sl_store_be *s, const char *scope, char **spec, sl_err *err)
{
    *spec = NULL;
    q x;
    if (!q_open(&x, s, "SELECT spec FROM tool_bindings WHERE scope=?1"))
        return db_err(err, s->r, "read tool bindings");
    bind_text(x.st, 1, scope);
    if (sqlite3_step(x.st) == SQLITE_ROW)
        *spec = sl_xstrdup((const char *)sqlite3_column_text(x.st, 0));
    q_close(&x);
    return 0;
}

static int sq_tools_set(sl_store_be *s, const char *scope, const char *spec, sl_err *err)
{
    const char *args[] = {scope, spec};
    int n = spec ? write_now(s, "INSERT OR REPLACE INTO tool_bindings(scope, spec, updated_at) "
                                "VALUES(?1, ?2, strftime('%s','now'))", args, 2, err)
                 : write_now(s, "DELETE FROM tool_bindings WHERE scope=?1", args, 1, err);
    if (n < 0)
        return -1;
    keys_changed(s);  /* servers load their apps again, with the new bindings */
    return 0;
}

static char *sq_key_app(sl_store_be *s, const char *key)
{
    char hash[65];
    sl_sha256_hex(key, strlen(key), hash);
    q x;
    if (!q_open(&x, s, "SELECT app_id FROM app_keys WHERE hash=?1 AND revoked_at IS NULL"
                       " AND app_id <> '" SL_STORE_DATASETS "'"))
        return NULL;
    bind_text(x.st, 1, hash);
    char *app = sqlite3_step(x.st) == SQLITE_ROW
                    ? sl_xstrdup((const char *)sqlite3_column_text(x.st, 0))
                    : NULL;
    q_close(&x);
    return app;
}

static int sq_admin_token(sl_store_be *s, char **token, bool *created, sl_err *err)
{
    *created = false;
    char *path = sl_xasprintf("%s/admin-token", s->dir);
    FILE *f = fopen(path, "r");
    char buf[128] = "";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
        buf[strcspn(buf, "\r\n")] = 0;
    }
    if (!buf[0]) {
        char secret[65];
        if (sl_rand_hex(secret, 32, err)) {
            free(path);
            return -1;
        }
        snprintf(buf, sizeof buf, "adm-%s", secret);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf) || write(fd, "\n", 1) != 1) {
            if (fd >= 0)
                close(fd);
            sl_err_set(err, SL_EIO, "store: cannot write %s: %s", path, strerror(errno));
            free(path);
            return -1;
        }
        close(fd);
        *created = true;
    }
    char hash[65];
    sl_sha256_hex(buf, strlen(buf), hash);
    const char *args[] = {hash};
    write_now(s, "INSERT OR REPLACE INTO meta(key, value) VALUES('admin_hash', ?1)", args, 1, NULL);
    free(path);
    *token = sl_xstrdup(buf);
    return 0;
}

static bool sq_admin_ok(sl_store_be *s, const char *token)
{
    char hash[65];
    sl_sha256_hex(token, strlen(token), hash);
    q x;
    if (!q_open(&x, s, "SELECT 1 FROM meta WHERE key='admin_hash' AND value=?1"))
        return false;
    bind_text(x.st, 1, hash);
    bool ok = sqlite3_step(x.st) == SQLITE_ROW;
    q_close(&x);
    return ok;
}

/* ---- runs ---- */

static int sq_start_run(sl_store_be *s, const sl_run_row *r, sl_err *err)
{
    (void)err;
    op *o = sl_xcalloc(1, sizeof *o);
    o->kind = OP_START;
    o->run_id = sl_xstrdup(r->id);
    o->a = dup_or_null(r->app_id);
    o->b = dup_or_null(r->task_id);
    o->c = dup_or_null(r->user);
    o->d = dup_or_null(r->conversation_id);
    o->e = dup_or_null(r->message_id);
    o->json1 = json_or_null(r->inputs);
    o->when = now_s();
    o->seq = r->app_version;  /* seq is free for OP_START */
    enqueue(s, o);
    return 0;
}

static int sq_finish_run(sl_store_be *s, const char *run_id, const char *status,
                         const sl_value *outputs, const char *error, double elapsed,
                         long long tokens, int steps, long long finished_at, const char *answer,
                         const char *reply, char *events, sl_err *err)
{
    (void)reply;  /* no other process waits on a SQLite store's runs */
    op *o = sl_xcalloc(1, sizeof *o);
    o->json2 = events;
    o->kind = OP_FINISH;
    o->run_id = sl_xstrdup(run_id);
    o->a = sl_xstrdup(status);
    o->b = dup_or_null(error);
    o->c = dup_or_null(answer);
    o->json1 = json_or_null(outputs);
    o->elapsed = elapsed;
    o->tokens = tokens;
    o->steps = steps;
    o->when = finished_at;
    pthread_cond_init(&o->done_cv, NULL);
    enqueue(s, o);
    pthread_mutex_lock(&s->qmu);
    while (!o->done)
        pthread_cond_wait(&o->done_cv, &s->qmu);
    pthread_mutex_unlock(&s->qmu);
    pthread_cond_destroy(&o->done_cv);
    int rc = o->rc;
    free_op(o);
    if (rc)
        return sl_err_set(err, SL_EIO, "store: the run could not be saved (the database in %s refused the write; check free disk space and that the folder is writable)", s->dir);
    return 0;
}

static sl_value *run_row(sqlite3_stmt *st)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:I, s:I, s:I, s:o}", "id",
                     col_str(st, 0), "workflow_id", col_str(st, 1), "status", col_str(st, 2),
                     "inputs", col_json(st, 3), "outputs", col_json(st, 4), "error",
                     col_str(st, 5), "elapsed_time", sqlite3_column_double(st, 6), "total_tokens",
                     (json_int_t)sqlite3_column_int64(st, 7), "total_steps",
                     (json_int_t)sqlite3_column_int64(st, 8), "created_at",
                     (json_int_t)sqlite3_column_int64(st, 9), "finished_at", col_int(st, 10));
}

#define RUN_COLS                                                                                   \
    "id, app_id, status, inputs, outputs, error, elapsed, total_tokens, total_steps, created_at, " \
    "finished_at"

static sl_value *sq_run_get(sl_store_be *s, const char *app_id, const char *run_id)
{
    q x;
    if (!q_open(&x, s, "SELECT " RUN_COLS ", user, app_version, conversation_id, message_id, "
                       "(SELECT query FROM messages WHERE messages.id = runs.message_id) FROM runs "
                       "WHERE id=?1 AND (?2 IS NULL OR app_id=?2)"))
        return NULL;
    bind_text(x.st, 1, run_id);
    bind_text(x.st, 2, app_id);
    sl_value *v = sqlite3_step(x.st) == SQLITE_ROW ? run_row(x.st) : NULL;
    if (v && !app_id) { /* the admin API's view: who ran it, on which version,
                         * and for a chat turn its conversation and query */
        json_object_set_new(v, "user", col_str(x.st, 11));
        json_object_set_new(v, "app_version", col_int(x.st, 12));
        json_object_set_new(v, "conversation_id", col_str(x.st, 13));
        json_object_set_new(v, "message_id", col_str(x.st, 14));
        json_object_set_new(v, "query", col_str(x.st, 15));
    }
    q_close(&x);
    return v;
}

static sl_value *sq_run_events(sl_store_be *s, const char *app_id, const char *run_id)
{
    q x;
    if (!q_open(&x, s, "SELECT l.events FROM run_log l JOIN runs r ON r.id=l.run_id "
                       "WHERE l.run_id=?1 AND (?2 IS NULL OR r.app_id=?2)"))
        return NULL;
    bind_text(x.st, 1, run_id);
    bind_text(x.st, 2, app_id);
    sl_value *arr = sqlite3_step(x.st) == SQLITE_ROW ? col_json(x.st, 0) : NULL;
    q_close(&x);
    if (json_is_array(arr))
        return arr;
    json_decref(arr);
    return NULL;
}

static sl_value *sq_runs_list(sl_store_be *s, const sl_runs_filter *f)
{
    int limit = f->limit >= 1 && f->limit <= 100 ? f->limit : 50;
    q x;
    if (!q_open(&x, s, "SELECT id, app_id, status, user, error, created_at, finished_at, elapsed,"
                       " total_tokens, total_steps FROM runs"
                       " WHERE (?1 IS NULL OR app_id=?1) AND (?2 IS NULL OR status=?2)"
                       " AND (?3 IS NULL OR user=?3) AND created_at >= ?4 AND created_at <= ?5"
                       " AND (created_at < ?6 OR (created_at = ?6 AND id < ?7))"
                       " ORDER BY created_at DESC, id DESC LIMIT ?8"))
        return NULL;
    bind_text(x.st, 1, f->app_id);
    bind_text(x.st, 2, f->status);
    bind_text(x.st, 3, f->user);
    sqlite3_bind_int64(x.st, 4, f->since);
    sqlite3_bind_int64(x.st, 5, f->until > 0 ? f->until : INT64_MAX);
    sqlite3_bind_int64(x.st, 6, f->before_at > 0 ? f->before_at : INT64_MAX);
    bind_text(x.st, 7, f->before_id ? f->before_id : "");
    sqlite3_bind_int(x.st, 8, limit + 1);
    sl_value *data = json_array(), *next = json_null();
    int n = 0;
    bool more = false;
    while (sqlite3_step(x.st) == SQLITE_ROW) {
        if (n++ == limit) {
            more = true;
            break;
        }
        long long created = sqlite3_column_int64(x.st, 5);
        json_array_append_new(
            data, json_pack("{s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:f, s:I, s:I}", "id",
                            col_str(x.st, 0), "app_id", col_str(x.st, 1), "status",
                            col_str(x.st, 2), "user", col_str(x.st, 3), "error", col_str(x.st, 4),
                            "created_at", (json_int_t)created, "finished_at", col_int(x.st, 6),
                            "elapsed_time", sqlite3_column_double(x.st, 7), "total_tokens",
                            (json_int_t)sqlite3_column_int64(x.st, 8), "total_steps",
                            (json_int_t)sqlite3_column_int64(x.st, 9)));
    }
    q_close(&x);
    size_t last = json_array_size(data);
    if (more && last) {
        const sl_value *r = json_array_get(data, last - 1);
        char *cur = sl_xasprintf("%lld:%s", (long long)json_integer_value(json_object_get(r, "created_at")),
                                 json_string_value(json_object_get(r, "id")));
        json_decref(next);
        next = json_string(cur);
        free(cur);
    }
    return json_pack("{s:o, s:b, s:o}", "data", data, "has_more", more, "next", next);
}

static sl_value *sq_run_logs(sl_store_be *s, const char *app_id, const char *status, int page,
                             int limit)
{
    if (limit <= 0 || limit > 100)
        limit = 20;
    if (page <= 0)
        page = 1;
    q x;
    if (!q_open(&x, s, "SELECT " RUN_COLS ", user FROM runs WHERE app_id=?1 AND (?2 IS NULL OR "
                       "status=?2) ORDER BY created_at DESC, id LIMIT ?3 OFFSET ?4"))
        return NULL;
    bind_text(x.st, 1, app_id);
    bind_text(x.st, 2, status);
    sqlite3_bind_int(x.st, 3, limit + 1);
    sqlite3_bind_int(x.st, 4, (page - 1) * limit);
    sl_value *data = json_array();
    int n = 0;
    bool more = false;
    while (sqlite3_step(x.st) == SQLITE_ROW) {
        if (n++ == limit) {
            more = true;
            break;
        }
        sl_value *run = run_row(x.st);
        json_array_append_new(data, json_pack("{s:o, s:o, s:o, s:o}", "id",
                                              json_incref(json_object_get(run, "id")),
                                              "workflow_run", run, "created_from", json_string("service-api"),
                                              "created_by_end_user", json_pack("{s:o}", "session_id",
                                                                               col_str(x.st, 11))));
    }
    q_close(&x);
    long long total = 0;
    if (q_open(&x, s, "SELECT count(*) FROM runs WHERE app_id=?1 AND (?2 IS NULL OR status=?2)")) {
        bind_text(x.st, 1, app_id);
        bind_text(x.st, 2, status);
        if (sqlite3_step(x.st) == SQLITE_ROW)
            total = sqlite3_column_int64(x.st, 0);
        q_close(&x);
    }
    return json_pack("{s:i, s:i, s:I, s:b, s:o}", "page", page, "limit", limit, "total",
                     (json_int_t)total, "has_more", more, "data", data);
}

/* ---- conversations ---- */

/* Who a conversation belongs to: the user the client named, or Dify's
 * default end user when it named none. */
static const char *owner_of(const char *user)
{
    return user && *user ? user : SL_STORE_DEFAULT_USER;
}

/* SQL: the conversation row is the user's bound at ?N.  Rows that older
 * versions stored without a user belong to the default user. */
#define OWNED_BY(n) "coalesce(user, '" SL_STORE_DEFAULT_USER "')=?" #n

static int sq_conversation(sl_store_be *s, const char *app_id, const char *user, const char *id,
                           const char *first_query, char **out_id, sl_err *err)
{
    char when[32];
    snprintf(when, sizeof when, "%lld", now_s());
    user = owner_of(user);
    if (id && *id) {
        q x;
        if (!q_open(&x, s, "SELECT 1 FROM conversations WHERE id=?1 AND app_id=?2 AND " OWNED_BY(3)))
            return db_err(err, s->r, "conversation");
        bind_text(x.st, 1, id);
        bind_text(x.st, 2, app_id);
        bind_text(x.st, 3, user);
        bool mine = sqlite3_step(x.st) == SQLITE_ROW;
        q_close(&x);
        if (!mine)
            return sl_err_set(err, SL_ENOTFOUND, "Conversation Not Exists.");
        const char *args[] = {id, when};
        write_now(s, "UPDATE conversations SET updated_at=?2 WHERE id=?1", args, 2, NULL);
        *out_id = sl_xstrdup(id);
        return 0;
    }
    if (!(*out_id = uuid(err)))
        return -1;
    /* the first query's first 48 bytes, cut before a character that
     * would not fit whole (a cut one is no UTF-8: jansson refuses it) */
    char name[64];
    const char *fq = first_query ? first_query : "New conversation";
    size_t cut = 0;
    while (fq[cut]) {
        size_t len = 1;
        while ((fq[cut + len] & 0xC0) == 0x80)
            len++;
        if (cut + len > 48)
            break;
        cut += len;
    }
    snprintf(name, sizeof name, "%.*s", (int)cut, fq);
    const char *args[] = {*out_id, app_id, user, name, when};
    if (write_now(s, "INSERT INTO conversations(id, app_id, user, name, created_at, updated_at) "
                     "VALUES(?1,?2,?3,?4,?5,?5)",
                  args, 5, err) < 0) {
        free(*out_id);
        *out_id = NULL;
        return -1;
    }
    return 0;
}

static sl_value *sq_history(sl_store_be *s, const char *conversation_id, int limit)
{
    q x;
    if (!q_open(&x, s, "SELECT query, answer FROM (SELECT query, answer, created_at, rowid FROM "
                       "messages WHERE conversation_id=?1 AND answer IS NOT NULL ORDER BY "
                       "created_at DESC, rowid DESC LIMIT ?2) ORDER BY created_at, rowid"))
        return json_array();
    bind_text(x.st, 1, conversation_id);
    sqlite3_bind_int(x.st, 2, limit > 0 ? limit : 500);
    sl_value *arr = json_array();
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:o, s:o}", "query", col_str(x.st, 0), "answer",
                                             col_str(x.st, 1)));
    q_close(&x);
    return arr;
}

static int sq_message_add(sl_store_be *s, const char *id, const char *conversation_id,
                          const char *app_id, const char *query, const char *run_id, sl_err *err)
{
    char when[32];
    snprintf(when, sizeof when, "%lld", now_s());
    const char *args[] = {id, conversation_id, app_id, query, run_id, when};
    return write_now(s, "INSERT INTO messages(id, conversation_id, app_id, query, run_id, "
                        "created_at) VALUES(?1,?2,?3,?4,?5,?6)",
                     args, 6, err) < 0
               ? -1
               : 0;
}

static sl_value *sq_conversations(sl_store_be *s, const char *app_id, const char *user, int limit)
{
    q x;
    if (!q_open(&x, s, "SELECT id, name, created_at, updated_at FROM conversations WHERE "
                       "app_id=?1 AND " OWNED_BY(2) " ORDER BY updated_at DESC, id LIMIT ?3"))
        return NULL;
    bind_text(x.st, 1, app_id);
    bind_text(x.st, 2, owner_of(user));
    sqlite3_bind_int(x.st, 3, (limit > 0 && limit <= 100 ? limit : 20) + 1);
    sl_value *data = json_array();
    int n = 0, lim = limit > 0 && limit <= 100 ? limit : 20;
    bool more = false;
    while (sqlite3_step(x.st) == SQLITE_ROW) {
        if (n++ == lim) {
            more = true;
            break;
        }
        json_array_append_new(data, json_pack("{s:o, s:o, s:{}, s:s, s:s, s:I, s:I}", "id",
                                              col_str(x.st, 0), "name", col_str(x.st, 1), "inputs",
                                              "status", "normal", "introduction", "", "created_at",
                                              (json_int_t)sqlite3_column_int64(x.st, 2),
                                              "updated_at",
                                              (json_int_t)sqlite3_column_int64(x.st, 3)));
    }
    q_close(&x);
    return json_pack("{s:i, s:b, s:o}", "limit", lim, "has_more", more, "data", data);
}

static sl_value *sq_messages(sl_store_be *s, const char *app_id, const char *conversation_id,
                             const char *user, int limit)
{
    /* the conversation must be this app's and this user's */
    q c;
    if (!q_open(&c, s, "SELECT 1 FROM conversations WHERE id=?1 AND app_id=?2 AND " OWNED_BY(3)))
        return NULL;
    bind_text(c.st, 1, conversation_id);
    bind_text(c.st, 2, app_id);
    bind_text(c.st, 3, owner_of(user));
    bool ok = sqlite3_step(c.st) == SQLITE_ROW;
    q_close(&c);
    if (!ok)
        return NULL;
    q x;
    if (!q_open(&x, s, "SELECT id, conversation_id, query, answer, created_at, run_id FROM "
                       "messages WHERE conversation_id=?1 AND app_id=?2 ORDER BY created_at, "
                       "rowid"))
        return NULL;
    bind_text(x.st, 1, conversation_id);
    bind_text(x.st, 2, app_id);
    sl_value *data = json_array();
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(data, json_pack("{s:o, s:o, s:{}, s:o, s:o, s:[], s:n, s:[], s:I, s:o}",
                                              "id", col_str(x.st, 0), "conversation_id",
                                              col_str(x.st, 1), "inputs", "query",
                                              col_str(x.st, 2), "answer", col_str(x.st, 3),
                                              "message_files", "feedback", "retriever_resources",
                                              "created_at",
                                              (json_int_t)sqlite3_column_int64(x.st, 4),
                                              /* sluice's own: the run behind the answer */
                                              "workflow_run_id", col_str(x.st, 5)));
    q_close(&x);
    size_t n = json_array_size(data), lim = limit > 0 && limit <= 100 ? (size_t)limit : 20;
    /* the newest `limit` messages */
    while (json_array_size(data) > lim)
        json_array_remove(data, 0);
    return json_pack("{s:i, s:b, s:o}", "limit", (int)lim, "has_more", n > lim, "data", data);
}

static int sq_file_add(sl_store_be *s, const char *id, const char *app_id, const char *name,
                       long long size, const char *mime, const char *user, sl_err *err)
{
    char when[32], sz[32];
    snprintf(when, sizeof when, "%lld", now_s());
    snprintf(sz, sizeof sz, "%lld", size);
    const char *args[] = {id, app_id, name, sz, mime, user, when};
    return write_now(s, "INSERT INTO files(id, app_id, name, size, mime, user, created_at) "
                        "VALUES(?1,?2,?3,?4,?5,?6,?7)",
                     args, 7, err) < 0
               ? -1
               : 0;
}

static sl_value *sq_file_get(sl_store_be *s, const char *app_id, const char *id)
{
    q x;
    if (!q_open(&x, s, "SELECT id, name, size, mime, user, created_at FROM files WHERE id=?1 AND "
                       "app_id=?2"))
        return NULL;
    bind_text(x.st, 1, id);
    bind_text(x.st, 2, app_id);
    sl_value *v = NULL;
    if (sqlite3_step(x.st) == SQLITE_ROW)
        v = json_pack("{s:o, s:o, s:I, s:o, s:o, s:I}", "id", col_str(x.st, 0), "name",
                      col_str(x.st, 1), "size", (json_int_t)sqlite3_column_int64(x.st, 2),
                      "mime_type", col_str(x.st, 3), "created_by", col_str(x.st, 4), "created_at",
                      (json_int_t)sqlite3_column_int64(x.st, 5));
    q_close(&x);
    return v;
}

static int sq_conversation_delete(sl_store_be *s, const char *app_id, const char *id,
                                  const char *user, sl_err *err)
{
    const char *args[] = {id, app_id, owner_of(user)};
    int n = write_now(s, "DELETE FROM conversations WHERE id=?1 AND app_id=?2 AND " OWNED_BY(3),
                      args, 3, err);
    if (n <= 0)
        return n < 0 ? -1 : sl_err_set(err, SL_ENOTFOUND, "Conversation Not Exists.");
    write_now(s, "DELETE FROM messages WHERE conversation_id=?1 AND app_id=?2", args, 2, NULL);
    return 0;
}

static sl_value *sq_conversation_rename(sl_store_be *s, const char *app_id, const char *id,
                                        const char *user, const char *name)
{
    const char *args[] = {id, app_id, owner_of(user), name};
    if (write_now(s, "UPDATE conversations SET name=?4 WHERE id=?1 AND app_id=?2 AND " OWNED_BY(3),
                  args, 4, NULL) <= 0)
        return NULL;
    q x;
    if (!q_open(&x, s, "SELECT id, name, created_at, updated_at FROM conversations WHERE id=?1"))
        return NULL;
    bind_text(x.st, 1, id);
    sl_value *v = NULL;
    if (sqlite3_step(x.st) == SQLITE_ROW)
        v = json_pack("{s:o, s:o, s:{}, s:s, s:s, s:I, s:I}", "id", col_str(x.st, 0), "name",
                      col_str(x.st, 1), "inputs", "status", "normal", "introduction", "",
                      "created_at", (json_int_t)sqlite3_column_int64(x.st, 2), "updated_at",
                      (json_int_t)sqlite3_column_int64(x.st, 3));
    q_close(&x);
    return v;
}

static int sq_feedback(sl_store_be *s, const char *app_id, const char *message_id,
                       const char *user, const char *rating)
{
    const char *args[] = {message_id, app_id, rating, owner_of(user)};
    return write_now(s, "UPDATE messages SET feedback=?3 WHERE id=?1 AND app_id=?2 AND "
                        "conversation_id IN (SELECT id FROM conversations WHERE app_id=?2 AND "
                        OWNED_BY(4) ")",
                     args, 4, NULL) > 0
               ? 0
               : -1;
}

/* ---- blobs: DIR/files/KEY (the store checked the key) ---- */

struct sl_store_bw {
    FILE *f;
    char *path;
};

static char *blob_path(const sl_store_be *s, const char *key)
{
    return sl_xasprintf("%s/files/%s", s->dir, key);
}

static int sq_blob_create(sl_store_be *s, const char *key, sl_store_bw **out, sl_err *err)
{
    char *path = blob_path(s, key);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(path);
        return sl_err_set(err, SL_EIO, "store: cannot store blob %s in %s/files: %s", key, s->dir,
                          strerror(e));
    }
    sl_store_bw *w = sl_xcalloc(1, sizeof *w);
    w->f = f;
    w->path = path;
    *out = w;
    return 0;
}

static int sq_blob_write(sl_store_bw *w, const void *data, size_t len, sl_err *err)
{
    if (fwrite(data, 1, len, w->f) != len)
        return sl_err_set(err, SL_EIO, "store: cannot write %s: %s", w->path, strerror(errno));
    return 0;
}

static void bw_free(sl_store_bw *w)
{
    free(w->path);
    free(w);
}

static int sq_blob_commit(sl_store_bw *w, sl_err *err)
{
    int rc = 0;
    if (fclose(w->f)) {
        rc = sl_err_set(err, SL_EIO, "store: cannot write %s: %s", w->path, strerror(errno));
        unlink(w->path);
    }
    bw_free(w);
    return rc;
}

static void sq_blob_abort(sl_store_bw *w)
{
    fclose(w->f);
    unlink(w->path);
    bw_free(w);
}

static int sq_blob_open(sl_store_be *s, const char *key, long long *size, sl_err *err)
{
    char *path = blob_path(s, key);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && size) {
        if (fstat(fd, &sb)) {
            close(fd);
            fd = -1;
        } else {
            *size = (long long)sb.st_size;
        }
    }
    if (fd < 0)
        sl_err_set(err, errno == ENOENT ? SL_ENOTFOUND : SL_EIO, "store: cannot open %s: %s",
                   path, strerror(errno));
    free(path);
    return fd;
}

static int sq_blob_delete(sl_store_be *s, const char *key, sl_err *err)
{
    char *path = blob_path(s, key);
    int rc = unlink(path) ? sl_err_set(err, errno == ENOENT ? SL_ENOTFOUND : SL_EIO,
                                       "store: cannot remove %s: %s", path, strerror(errno))
                          : 0;
    free(path);
    return rc;
}

static bool sq_key_scope_ok(sl_store_be *s, const char *scope, const char *key)
{
    char hash[65];
    sl_sha256_hex(key, strlen(key), hash);
    q x;
    if (!q_open(&x, s, "SELECT 1 FROM app_keys WHERE hash=?1 AND app_id=?2 AND revoked_at IS NULL"))
        return false;
    bind_text(x.st, 1, hash);
    bind_text(x.st, 2, scope);
    bool ok = sqlite3_step(x.st) == SQLITE_ROW;
    q_close(&x);
    return ok;
}

/* ---- knowledge ----
 * Writes go through the reader connection under its lock, as the other
 * small writes do; a document's chunks are written in one transaction. */

static char *info_text(const sl_value *info)
{
    return info ? json_dumps(info, JSON_COMPACT) : sl_xstrdup("{}");
}

static sl_value *kb_row(sqlite3_stmt *st)
{
    return json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I}", "id", col_str(st, 0), "name",
                     col_str(st, 1), "info", col_json(st, 2), "generation",
                     (json_int_t)sqlite3_column_int64(st, 3), "created_at",
                     (json_int_t)sqlite3_column_int64(st, 4), "chunks_generation",
                     (json_int_t)sqlite3_column_int64(st, 5), "kw",
                     (json_int_t)sqlite3_column_int64(st, 6));
}

/* The knowledge base's row number, or 0 (reader lock held). */
/* The knowledge writer's statements (s->kw, under kwmu). */
static sqlite3_stmt *kq(sl_store_be *s, const char *sql)
{
    return sc_get(&s->kwc, s->kw, sql);
}

static void kq_done(sl_store_be *s, sqlite3_stmt *st)
{
    sc_done(&s->kwc, st);
}

static long long kb_n(sl_store_be *s, const char *kb_id)
{
    sqlite3_stmt *st = kq(s, "SELECT n FROM kb WHERE id=?1");
    long long n = 0;
    if (!st)
        return 0;
    bind_text(st, 1, kb_id);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    kq_done(s, st);
    return n;
}

/* Binds texts (NULL: null) and integers (after the texts) and steps once:
 * 0 when the statement ran. */
static int bind_step(sqlite3_stmt *st, const char *const *t, int nt, const long long *i, int ni)
{
    for (int k = 0; k < nt; k++)
        bind_text(st, k + 1, t[k]);
    for (int k = 0; k < ni; k++)
        sqlite3_bind_int64(st, nt + k + 1, i[k]);
    int rc = sqlite3_step(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* One statement on the locked reader connection (bind_step). */
static int run1(sqlite3 *db, const char *sql, const char *const *t, int nt,
                const long long *i, int ni)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = bind_step(st, t, nt, i, ni);
    sqlite3_finalize(st);
    return rc;
}

/* run1 on the knowledge writer's connection, its statement kept (kq). */
static int run1k(sl_store_be *s, const char *sql, const char *const *t, int nt,
                 const long long *i, int ni)
{
    sqlite3_stmt *st = kq(s, sql);
    if (!st)
        return -1;
    int rc = bind_step(st, t, nt, i, ni);
    kq_done(s, st);
    return rc;
}

/* The knowledge writer's settings.  Debian builds SQLite with
 * SECURE_DELETE, which zeroes every freed page: merging the keyword
 * index frees its small segments' pages all the time, and writing those
 * zeros was 6% of ingest.  FAST zeroes what is deleted only where that
 * writes no extra page; deleting a document or a knowledge base on
 * purpose still scrubs it (SCRUB_ON/OFF around it).  32 MB of page cache
 * keep the segments a merge reads back (the last 16 documents' terms)
 * in memory instead of reading them from the log again. */
#define KW_PRAGMAS "PRAGMA secure_delete=FAST; PRAGMA cache_size=-32768"
static void scrub(sl_store_be *s)
{
    s->scrub = sqlite3_exec(s->kw, "PRAGMA secure_delete=ON", NULL, NULL, NULL) == SQLITE_OK;
}

/* Takes the knowledge writer's connection, opening it on first use (a
 * store that never writes knowledge never opens it). */
static int kw_lock(sl_store_be *s, sl_err *err)
{
    pthread_mutex_lock(&s->kwmu);
    if (s->kw)
        return 0;
    char *path = sl_xasprintf("%s/sluice.db", s->dir);
    /* under kwmu only; checkpoints are the checkpointer's (as for w), not
     * the knowledge writer's, which did them in line after a commit once
     * the log passed 1000 pages (13% of its time) */
    int rc = open_db_as(path, &s->kw, true, err) ||
             exec(s->kw, "PRAGMA wal_autocheckpoint=0", err) ||
             exec(s->kw, KW_PRAGMAS, err);
    free(path);
    if (rc) {
        if (s->kw)
            sqlite3_close(s->kw);
        s->kw = NULL;
        pthread_mutex_unlock(&s->kwmu);
        return -1;
    }
    return 0;
}

static int sq_kb_add(sl_store_be *s, const char *id, const char *name, const sl_value *info,
                     sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    char *it = info_text(info);
    long long when = now_s();
    int rc = sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    const char *t[] = {id, name, it};
    if (!rc && run1(s->kw, "INSERT INTO kb(id, name, info, created_at, kw) VALUES(?1,?2,?3,?4,1)",
                    t, 3, &when, 1)) {
        rc = sl_err_set(err, strstr(sqlite3_errmsg(s->kw), "UNIQUE") ? SL_EINVAL : SL_EIO,
                        "store: knowledge base '%s': %s", name, sqlite3_errmsg(s->kw));
    } else if (rc) {
        db_err(err, s->kw, "begin");
    }
    if (!rc && sqlite3_exec(s->kw, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_err(err, s->kw, "commit");
    if (rc)
        sqlite3_exec(s->kw, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->kwmu);
    free(it);
    return rc;
}

static int sq_kb_set(sl_store_be *s, const char *id, const char *name, const sl_value *info,
                     sl_err *err)
{
    char *it = info ? info_text(info) : NULL;
    const char *args[] = {id, name, it};
    int n = write_now(s, "UPDATE kb SET name=coalesce(?2, name), info=coalesce(?3, info) WHERE id=?1",
                      args, 3, err);
    free(it);
    if (n < 0 && strstr(err->msg, "UNIQUE"))
        err->code = SL_EINVAL;
    if (n < 0)
        return -1;
    return n ? 0 : sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
}

static sl_value *sq_kb_get(sl_store_be *s, const char *id_or_name)
{
    q x;
    if (!q_open(&x, s, "SELECT id, name, info, generation, created_at, chunks_generation, kw FROM kb"
                       " WHERE id=?1 UNION ALL"
                       " SELECT id, name, info, generation, created_at, chunks_generation, kw FROM kb"
                       " WHERE name=?1 AND id<>?1 LIMIT 1"))
        return NULL;
    bind_text(x.st, 1, id_or_name);
    sl_value *v = sqlite3_step(x.st) == SQLITE_ROW ? kb_row(x.st) : NULL;
    q_close(&x);
    return v;
}

static sl_value *sq_kb_list(sl_store_be *s)
{
    q x;
    sl_value *arr = json_array();
    if (!q_open(&x, s, "SELECT id, name, info, generation, created_at, chunks_generation, kw FROM kb"
                       " ORDER BY created_at DESC, n DESC"))
        return arr;
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, kb_row(x.st));
    q_close(&x);
    return arr;
}

/* Ends a write on the knowledge writer's connection: COMMIT, else
 * ROLLBACK, and lets it go. */
static int kb_end(sl_store_be *s, int rc, sl_err *err)
{
    if (!rc && sqlite3_exec(s->kw, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = db_err(err, s->kw, "commit");
    if (rc)
        sqlite3_exec(s->kw, "ROLLBACK", NULL, NULL, NULL);
    if (s->scrub) {
        sqlite3_exec(s->kw, "PRAGMA secure_delete=FAST", NULL, NULL, NULL);
        s->scrub = false;
    }
    pthread_mutex_unlock(&s->kwmu);
    return rc;
}

static int sq_kb_delete(sl_store_be *s, const char *id, sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    scrub(s);
    if (sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return kb_end(s, db_err(err, s->kw, "begin"), err);
    long long n = kb_n(s, id);
    if (!n)
        return kb_end(s, sl_err_set(err, SL_ENOTFOUND, "Dataset not found."), err);
    char *ddl = sl_xasprintf("DROP TABLE IF EXISTS kbv_%lld; DROP TABLE IF EXISTS kbf_%lld", n, n);
    int rc = run1(s->kw, "DELETE FROM kb_chunks WHERE kb=?1", NULL, 0, &n, 1) ||
             run1(s->kw, "DELETE FROM kb_pages WHERE seg IN (SELECT n FROM kb_segs WHERE kb=?1)",
                  NULL, 0, &n, 1) ||
             run1(s->kw, "DELETE FROM kb_segs WHERE kb=?1", NULL, 0, &n, 1) ||
             run1(s->kw, "DELETE FROM kb_dead WHERE kb=?1", NULL, 0, &n, 1) ||
             run1(s->kw, "DELETE FROM kb_docs WHERE kb=?1", NULL, 0, &n, 1) ||
             run1(s->kw, "DELETE FROM kb WHERE n=?1", NULL, 0, &n, 1) ||
             sqlite3_exec(s->kw, ddl, NULL, NULL, NULL) != SQLITE_OK;
    free(ddl);
    return kb_end(s, rc ? db_err(err, s->kw, "delete a knowledge base") : 0, err);
}

static sl_value *sq_kb_docs(sl_store_be *s, const char *kb_id)
{
    q x;
    sl_value *arr = json_array();
    if (!q_open(&x, s, "SELECT d.id, d.info, d.created_at, (SELECT count(*) FROM kb_chunks c"
                       " WHERE c.doc=d.n AND c.parent=0), d.n FROM kb_docs d JOIN kb k ON k.n=d.kb"
                       " WHERE k.id=?1 ORDER BY d.created_at DESC, d.n DESC"))
        return arr;
    bind_text(x.st, 1, kb_id);
    while (sqlite3_step(x.st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I, s:o, s:o, s:I, s:I}", "n",
                                             (json_int_t)sqlite3_column_int64(x.st, 4),
                                             "id", col_str(x.st, 0),
                                             "info", col_json(x.st, 1), "created_at",
                                             (json_int_t)sqlite3_column_int64(x.st, 2),
                                             "segments",
                                             (json_int_t)sqlite3_column_int64(x.st, 3)));
    q_close(&x);
    return arr;
}

static sl_value *sq_kb_doc_of_source(sl_store_be *s, const char *kb_id, const char *source,
                                     long long *next_position)
{
    q x;
    *next_position = 1;
    sl_value *v = NULL;
    /* both by the indexes on kb_docs' info (migration 11) */
    if (q_open(&x, s, "SELECT coalesce(max(json_extract(info, '$.position')), 0) + 1"
                      " FROM kb_docs INDEXED BY kb_docs_position"
                      " WHERE kb=(SELECT n FROM kb WHERE id=?1)")) {
        bind_text(x.st, 1, kb_id);
        if (sqlite3_step(x.st) == SQLITE_ROW)
            *next_position = sqlite3_column_int64(x.st, 0);
        q_close(&x);
    }
    /* INDEXED BY: without statistics the planner walks every document */
    if (source && q_open(&x, s, "SELECT d.id, d.info, d.created_at, (SELECT count(*) FROM kb_chunks c"
                                " WHERE c.doc=d.n AND c.parent=0), d.n"
                                " FROM kb_docs d INDEXED BY kb_docs_source"
                                " WHERE d.kb=(SELECT n FROM kb WHERE id=?1)"
                                " AND json_extract(d.info, '$.source')=?2"
                                " ORDER BY d.created_at, d.n LIMIT 1")) {
        bind_text(x.st, 1, kb_id);
        bind_text(x.st, 2, source);
        if (sqlite3_step(x.st) == SQLITE_ROW)
            v = json_pack("{s:I, s:o, s:o, s:I, s:I}", "n", (json_int_t)sqlite3_column_int64(x.st, 4),
                          "id", col_str(x.st, 0), "info", col_json(x.st, 1), "created_at",
                          (json_int_t)sqlite3_column_int64(x.st, 2), "segments",
                          (json_int_t)sqlite3_column_int64(x.st, 3));
        q_close(&x);
    }
    return v;
}

static sl_value *sq_kb_doc(sl_store_be *s, const char *kb_id, const char *doc_id)
{
    q x;
    if (!q_open(&x, s, "SELECT d.id, d.info, d.created_at, (SELECT count(*) FROM kb_chunks c"
                       " WHERE c.doc=d.n AND c.parent=0) FROM kb_docs d JOIN kb k ON k.n=d.kb"
                       " WHERE k.id=?1 AND d.id=?2"))
        return NULL;
    bind_text(x.st, 1, kb_id);
    bind_text(x.st, 2, doc_id);
    sl_value *v = sqlite3_step(x.st) == SQLITE_ROW
                      ? json_pack("{s:o, s:o, s:I, s:I}", "id", col_str(x.st, 0), "info",
                                  col_json(x.st, 1), "created_at",
                                  (json_int_t)sqlite3_column_int64(x.st, 2), "segments",
                                  (json_int_t)sqlite3_column_int64(x.st, 3))
                      : NULL;
    q_close(&x);
    return v;
}

/* ---- the keyword index's segments (knowledge/kwindex.h) ----
 * A document's terms are a segment of their own (level 0): its terms in
 * byte order, each with its chunk count, base and postings, packed into
 * pages of about PAGE_BYTES, a row each keyed by the page's first term.
 * Writing a document writes a few rows and touches no other's.  Once a
 * knowledge base has MERGE_FANIN segments of a level, they are merged into
 * one of the next level, so a term is looked up in a handful of segments,
 * not one per document; merging joins postings rather than decoding them,
 * as chunk numbers only grow from segment to segment.  A document whose
 * postings were merged leaves its chunk numbers in kb_dead (numbers are
 * never given again), which searches skip. */

#define MERGE_FANIN 16
#define PAGE_BYTES 8192

typedef struct {
    long long first, last;
} dead_range;

static int cmp_dead(const void *a, const void *b)
{
    const dead_range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* kb's dead chunk ranges, sorted and joined where they overlap. */
static dead_range *dead_of(sqlite3 *db, long long kbn, size_t *n)
{
    *n = 0;
    dead_range *v = NULL;
    size_t cap = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT first, last FROM kb_dead WHERE kb=?1", -1, &st, NULL) !=
        SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, kbn);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = sl_xrealloc(v, cap * sizeof *v);
        }
        v[(*n)++] = (dead_range){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    }
    sqlite3_finalize(st);
    if (*n > 1) {
        qsort(v, *n, sizeof *v, cmp_dead);
        size_t m = 0;
        for (size_t i = 1; i < *n; i++) {
            if (v[i].first <= v[m].last + 1) {
                if (v[i].last > v[m].last)
                    v[m].last = v[i].last;
            } else {
                v[++m] = v[i];
            }
        }
        *n = m + 1;
    }
    return v;
}

/* A segment being written: entries in term order go into pages. */
typedef struct {
    sl_store_be *s;
    sqlite3_stmt *st;   /* INSERT INTO kb_pages */
    long long seg;
    sl_buf page;
    char first[SL_KW_TOKEN_MAX + 8];
    int rc;
} seg_writer;

static void sw_flush(seg_writer *w)
{
    if (w->rc || !w->page.len)
        return;
    sqlite3_reset(w->st);
    sqlite3_bind_int64(w->st, 1, w->seg);
    sqlite3_bind_text(w->st, 2, w->first, -1, SQLITE_STATIC);
    sqlite3_bind_blob(w->st, 3, w->page.data, (int)w->page.len, SQLITE_STATIC);
    w->rc = sqlite3_step(w->st) == SQLITE_DONE ? 0 : -1;
    sl_buf_reset(&w->page);
}

static void sw_add(seg_writer *w, const sl_kw_entry *e)
{
    if (w->rc)
        return;
    if (!w->page.len) {
        size_t k = e->len < SL_KW_TOKEN_MAX + 4 ? e->len : SL_KW_TOKEN_MAX + 4;
        memcpy(w->first, e->term, k);
        w->first[k] = 0;
    }
    sl_kw_page_put(&w->page, e);
    if (w->page.len >= PAGE_BYTES)
        sw_flush(w);
}

static int sw_open(sl_store_be *s, seg_writer *w, long long seg)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    w->seg = seg;
    sl_buf_init(&w->page, 0);
    w->st = kq(s, "INSERT INTO kb_pages(seg, first, data) VALUES(?1,?2,?3)");
    return w->st ? 0 : -1;
}

static int sw_close(seg_writer *w)
{
    sw_flush(w);
    kq_done(w->s, w->st);
    sl_buf_release(&w->page);
    return w->rc;
}

/* A segment read in term order, a page at a time. */
typedef struct {
    sqlite3_stmt *st;     /* its pages in order */
    const unsigned char *page;
    size_t size, at;
    sl_kw_entry e;
    bool live;
    int rc;
} seg_reader;

static void sr_next(seg_reader *r)
{
    for (;;) {
        if (r->page) {
            int k = sl_kw_page_next(r->page, r->size, &r->at, &r->e);
            if (k == 1)
                return;
            if (k < 0) {
                r->rc = -1;
                r->live = false;
                return;
            }
        }
        int step = sqlite3_step(r->st);
        if (step != SQLITE_ROW) {
            r->rc = step == SQLITE_DONE ? 0 : -1;
            r->live = false;
            return;
        }
        r->page = sqlite3_column_blob(r->st, 0);
        r->size = (size_t)sqlite3_column_bytes(r->st, 0);
        r->at = 0;
    }
}

static int cmp_term_bytes(const sl_kw_entry *a, const sl_kw_entry *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->term, b->term, n);
    return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

/* Merges kb's segments of a level into one of the next when there are
 * MERGE_FANIN of them, and so on up: each read in term order, the terms
 * met in step. */
static int merge_segments(sl_store_be *s, long long kbn)
{
    for (int level = 0; level < 30; level++) {
        long long segs[MERGE_FANIN];
        size_t ns = 0;
        sqlite3_stmt *st = kq(s, "SELECT n FROM kb_segs WHERE kb=?1 AND level=?2 ORDER BY n"
                                 " LIMIT ?3");
        if (!st)
            return -1;
        sqlite3_bind_int64(st, 1, kbn);
        sqlite3_bind_int(st, 2, level);
        sqlite3_bind_int(st, 3, MERGE_FANIN);
        while (sqlite3_step(st) == SQLITE_ROW)
            segs[ns++] = sqlite3_column_int64(st, 0);
        kq_done(s, st);
        if (ns < MERGE_FANIN)
            return 0;
        long long args[2] = {kbn, level + 1};
        if (run1k(s, "INSERT INTO kb_segs(kb, level) VALUES(?1, ?2)", NULL, 0, args, 2))
            return -1;
        seg_writer w;
        seg_reader rd[MERGE_FANIN];
        memset(rd, 0, sizeof rd);
        int rc = sw_open(s, &w, sqlite3_last_insert_rowid(s->kw));
        for (size_t i = 0; i < ns && !rc; i++) {
            rc = sqlite3_prepare_v2(s->kw, "SELECT data FROM kb_pages WHERE seg=?1 ORDER BY first",
                                    -1, &rd[i].st, NULL) != SQLITE_OK;
            if (!rc) {
                sqlite3_bind_int64(rd[i].st, 1, segs[i]);
                rd[i].live = true;
                sr_next(&rd[i]);
                rc = rd[i].rc;
            }
        }
        sl_kw_entry parts[MERGE_FANIN];
        sl_buf out;
        sl_buf_init(&out, 0);
        while (!rc) {
            /* one pass: the lowest term and the readers that have it */
            size_t at[MERGE_FANIN], np = 0;
            const sl_kw_entry *low = NULL;
            for (size_t i = 0; i < ns; i++) {
                if (!rd[i].live)
                    continue;
                int c = low ? cmp_term_bytes(&rd[i].e, low) : -1;
                if (c < 0)
                    low = &rd[i].e, np = 0;
                if (c <= 0)
                    at[np++] = i;
            }
            if (!low)
                break;
            for (size_t j = 0; j < np; j++)
                parts[j] = rd[at[j]].e;
            sl_kw_entry joined = *low;
            rc = sl_kw_join(parts, np, &out, &joined);
            joined.data = (const unsigned char *)out.data;
            joined.size = out.len;
            if (!rc)
                sw_add(&w, &joined);
            /* the entries joined are copied: each reader moves on */
            for (size_t j = 0; j < np && !rc; j++)
                sr_next(&rd[at[j]]), rc = rd[at[j]].rc;
            rc = rc || w.rc;
        }
        sl_buf_release(&out);
        for (size_t i = 0; i < ns; i++)
            sqlite3_finalize(rd[i].st);
        rc = sw_close(&w) || rc;
        for (size_t i = 0; i < ns && !rc; i++)
            rc = run1k(s, "UPDATE kb_docs SET kw_seg=0 WHERE n=(SELECT doc FROM kb_segs WHERE n=?1)"
                          " AND kw_seg=?1", NULL, 0, &segs[i], 1) ||
                 run1k(s, "DELETE FROM kb_pages WHERE seg=?1", NULL, 0, &segs[i], 1) ||
                 run1k(s, "DELETE FROM kb_segs WHERE n=?1", NULL, 0, &segs[i], 1);
        if (rc)
            return -1;
    }
    return 0;
}

/* Removes document d's keyword index: its own segment, or (merged) its
 * chunk numbers marked dead; and its counts from the knowledge base's.
 * Locked, in a transaction; before its chunks go. */
static int drop_terms(sl_store_be *s, long long kbn, long long d)
{
    sqlite3_stmt *st = kq(s, "SELECT kw_seg, kw_rows, kw_tokens,"
                             " (SELECT min(n) FROM kb_chunks WHERE doc=?1),"
                             " (SELECT max(n) FROM kb_chunks WHERE doc=?1)"
                             " FROM kb_docs WHERE n=?1");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, d);
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        long long seg = sqlite3_column_int64(st, 0);
        long long counts[3] = {sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), kbn};
        long long range[3] = {kbn, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4)};
        if (seg)
            rc = run1k(s, "DELETE FROM kb_pages WHERE seg=?1", NULL, 0, &seg, 1) ||
                 run1k(s, "DELETE FROM kb_segs WHERE n=?1", NULL, 0, &seg, 1);
        else if (counts[0] && sqlite3_column_type(st, 3) != SQLITE_NULL)
            rc = run1k(s, "INSERT INTO kb_dead(kb, first, last) VALUES(?1,?2,?3)", NULL, 0,
                      range, 3);
        if (!rc && (counts[0] || counts[1]))
            rc = run1k(s, "UPDATE kb SET kw_rows=kw_rows-?1, kw_tokens=kw_tokens-?2 WHERE n=?3",
                      NULL, 0, counts, 3);
    }
    kq_done(s, st);
    return rc || run1k(s, "UPDATE kb_docs SET kw_seg=0, kw_rows=0, kw_tokens=0 WHERE n=?1", NULL,
                       0, &d, 1);
}

/* Writes document d's keyword index as a segment of its own (the caller
 * dropped its old one: drop_terms), then merges what is due; base: the
 * row number of its first chunk. */
static int put_terms(sl_store_be *s, long long kbn, long long d, long long base, const sl_store_kw *kw)
{
    if (!kw || !kw->n)
        return 0;
    long long args[2] = {kbn, d};
    if (run1k(s, "INSERT INTO kb_segs(kb, level, doc) VALUES(?1, 0, ?2)", NULL, 0, args, 2))
        return -1;
    long long seg = sqlite3_last_insert_rowid(s->kw);
    seg_writer w;
    int rc = sw_open(s, &w, seg);
    for (size_t i = 0; i < kw->n && !rc; i++) {
        const sl_store_term *t = &kw->terms[i];
        sl_kw_entry e = {t->term, strlen(t->term), t->df, base, t->last, t->data, t->size};
        sw_add(&w, &e);
        rc = w.rc;
    }
    rc = sw_close(&w) || rc;
    long long up[4] = {seg, kw->rows, kw->tokens, d};
    long long counts[3] = {kw->rows, kw->tokens, kbn};
    if (!rc)
        rc = run1k(s, "UPDATE kb_docs SET kw_seg=?1, kw_rows=?2, kw_tokens=?3 WHERE n=?4", NULL, 0,
                  up, 4) ||
             run1k(s, "UPDATE kb SET kw_rows=kw_rows+?1, kw_tokens=kw_tokens+?2 WHERE n=?3", NULL,
                  0, counts, 3) ||
             merge_segments(s, kbn);
    return rc;
}

/* Removes document d's chunks and their keyword index (locked, in a
 * transaction). */
static int drop_chunks(sl_store_be *s, long long kbn, long long d)
{
    return drop_terms(s, kbn, d) || run1k(s, "DELETE FROM kb_chunks WHERE doc=?1", NULL, 0, &d, 1);
}

static int sq_kb_doc_put(sl_store_be *s, const char *kb_id, const char *doc_id,
                         const sl_value *info, const sl_store_chunk *chunks, size_t n, int dims,
                         const sl_store_kw *kw, sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    char *it = info_text(info);
    if (sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        free(it);
        return kb_end(s, db_err(err, s->kw, "begin"), err);
    }
    long long kbn = kb_n(s, kb_id), d = 0, when = now_s();
    if (!kbn) {
        free(it);
        return kb_end(s, sl_err_set(err, SL_ENOTFOUND, "Dataset not found."), err);
    }
    sqlite3_stmt *st = kq(s, "SELECT n FROM kb_docs WHERE id=?1 AND kb=?2");
    int rc = 0;
    if (st) {
        bind_text(st, 1, doc_id);
        sqlite3_bind_int64(st, 2, kbn);
        if (sqlite3_step(st) == SQLITE_ROW)
            d = sqlite3_column_int64(st, 0);
        kq_done(s, st);
        st = NULL;
    }
    const char *t[] = {doc_id, it};
    long long ints[] = {kbn, when};
    if (d) {
        const char *ti[] = {it};
        rc = run1k(s, "UPDATE kb_docs SET info=?1 WHERE n=?2", ti, 1, &d, 1);
    } else {
        rc = run1k(s, "INSERT INTO kb_docs(id, info, kb, created_at) VALUES(?1,?2,?3,?4)", t, 2,
                   ints, 2);
        d = sqlite3_last_insert_rowid(s->kw);
    }
    if (!rc && chunks) {
        rc = drop_chunks(s, kbn, d);
        long long *rows = sl_xcalloc(n ? n : 1, sizeof *rows);
        /* chunk numbers only grow (meta kb_chunk_next), so a number never
         * comes back with another text or vector: caches of a knowledge
         * base's rows follow it by number.  (AUTOINCREMENT did the same at
         * a lookup of sqlite_sequence per row.) */
        long long next = 0;
        sqlite3_stmt *nx = rc ? NULL
                              : kq(s, "SELECT max(coalesce((SELECT CAST(value AS INTEGER) FROM meta"
                                      " WHERE key='kb_chunk_next'), 1),"
                                      " (SELECT coalesce(max(n), 0) + 1 FROM kb_chunks))");
        if (nx) {
            if (sqlite3_step(nx) == SQLITE_ROW)
                next = sqlite3_column_int64(nx, 0);
            kq_done(s, nx);
        }
        if (next <= 0)
            rc = -1;
        if (!rc && !(st = kq(s, "INSERT INTO kb_chunks(id, kb, doc, parent, position,"
                                " content, fts, info, vec, n)"
                                " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)")))
            rc = -1;
        for (size_t i = 0; i < n && !rc; i++) {
            const sl_store_chunk *c = &chunks[i];
            char *ci = c->info_json ? NULL : info_text(c->info);
            sqlite3_reset(st);
            bind_kept(st, 1, c->id);
            sqlite3_bind_int64(st, 2, kbn);
            sqlite3_bind_int64(st, 3, d);
            sqlite3_bind_int64(st, 4, c->parent >= 0 && (size_t)c->parent < i ? rows[c->parent] : 0);
            sqlite3_bind_int(st, 5, c->position);
            bind_kept(st, 6, c->content);
            /* '' marks an indexed chunk (its keyword index is the document's) */
            bind_text(st, 7, c->fts ? "" : NULL);
            bind_kept(st, 8, ci ? ci : c->info_json);
            if (c->vec && dims > 0)
                sqlite3_bind_blob(st, 9, c->vec, dims * (int)sizeof(float), SQLITE_STATIC);
            else
                sqlite3_bind_null(st, 9);
            sqlite3_bind_int64(st, 10, next + (long long)i);
            rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
            free(ci);
            rows[i] = next + (long long)i;
        }
        free(rows);
        if (!rc)
            rc = put_terms(s, kbn, d, next, kw);
        if (!rc) {
            long long after = next + (long long)n;
            char v[32];
            snprintf(v, sizeof v, "%lld", after);
            const char *vt[] = {v};
            rc = run1k(s, "INSERT OR REPLACE INTO meta(key, value) VALUES('kb_chunk_next', ?1)",
                       vt, 1, NULL, 0);
        }
    }
    if (!rc)
        rc = run1k(s, chunks ? "UPDATE kb SET generation=generation+1,"
                              " chunks_generation=chunks_generation+1 WHERE n=?1"
                            : "UPDATE kb SET generation=generation+1 WHERE n=?1",
                  NULL, 0, &kbn, 1);
    if (rc)
        db_err(err, s->kw, "write a document");
    kq_done(s, st);
    free(it);
    return kb_end(s, rc, err);
}

static int sq_kb_doc_delete(sl_store_be *s, const char *kb_id, const char *doc_id, sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    scrub(s);
    if (sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return kb_end(s, db_err(err, s->kw, "begin"), err);
    long long kbn = kb_n(s, kb_id), d = 0;
    sqlite3_stmt *st;
    if (kbn && sqlite3_prepare_v2(s->kw, "SELECT n FROM kb_docs WHERE id=?1 AND kb=?2", -1, &st,
                                  NULL) == SQLITE_OK) {
        bind_text(st, 1, doc_id);
        sqlite3_bind_int64(st, 2, kbn);
        if (sqlite3_step(st) == SQLITE_ROW)
            d = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (!d)
        return kb_end(s, sl_err_set(err, SL_ENOTFOUND, kbn ? "Document Not Exists." : "Dataset not found."), err);
    int rc = drop_chunks(s, kbn, d) ||
             run1(s->kw, "DELETE FROM kb_docs WHERE n=?1", NULL, 0, &d, 1) ||
             run1(s->kw, "UPDATE kb SET generation=generation+1, chunks_generation=chunks_generation+1"
                     " WHERE n=?1", NULL, 0, &kbn, 1);
    return kb_end(s, rc ? db_err(err, s->kw, "delete a document") : 0, err);
}

static sl_value *chunk_row(sqlite3_stmt *st)
{
    return json_pack("{s:I, s:o, s:I, s:i, s:o, s:o}", "n", (json_int_t)sqlite3_column_int64(st, 0),
                     "id", col_str(st, 1), "parent", (json_int_t)sqlite3_column_int64(st, 2),
                     "position", sqlite3_column_int(st, 3), "content", col_str(st, 4), "info",
                     col_json(st, 5));
}

static void copy_vec(sqlite3_stmt *st, int col, float *to, int dims)
{
    const void *b = sqlite3_column_blob(st, col);
    int len = sqlite3_column_bytes(st, col);
    if (b && len == dims * (int)sizeof(float))
        memcpy(to, b, (size_t)len);
    else
        memset(to, 0, (size_t)dims * sizeof(float));
}

static sl_value *sq_kb_chunks(sl_store_be *s, const char *kb_id, const char *doc_id, float **vecs,
                              int dims)
{
    q x;
    sl_value *arr = json_array();
    if (vecs)
        *vecs = NULL;
    if (!q_open(&x, s, "SELECT c.n, c.id, c.parent, c.position, c.content, c.info, c.vec"
                       " FROM kb_chunks c JOIN kb_docs d ON d.n=c.doc JOIN kb k ON k.n=d.kb"
                       " WHERE k.id=?1 AND d.id=?2 ORDER BY c.n"))
        return arr;
    bind_text(x.st, 1, kb_id);
    bind_text(x.st, 2, doc_id);
    size_t cap = 0;
    while (sqlite3_step(x.st) == SQLITE_ROW) {
        size_t i = json_array_size(arr);
        json_array_append_new(arr, chunk_row(x.st));
        if (vecs && dims > 0) {
            if (i == cap) {
                cap = cap ? cap * 2 : 64;
                *vecs = sl_xrealloc(*vecs, cap * (size_t)dims * sizeof(float));
            }
            copy_vec(x.st, 6, *vecs + i * (size_t)dims, dims);
        }
    }
    q_close(&x);
    return arr;
}

static int sq_kb_vectors(sl_store_be *s, const char *kb_id, int dims, long long **ns,
                         long long **docs, float **vecs, size_t *count, sl_err *err)
{
    *ns = NULL;
    *docs = NULL;
    if (vecs)
        *vecs = NULL;
    *count = 0;
    q x;
    /* without vecs only the numbers: the partial index answers alone */
    if (!q_open(&x, s, vecs ? "SELECT c.n, c.vec, c.doc FROM kb_chunks c JOIN kb k ON k.n=c.kb"
                              " WHERE k.id=?1 AND c.vec IS NOT NULL ORDER BY c.n"
                            : "SELECT c.n, NULL, c.doc FROM kb_chunks c JOIN kb k ON k.n=c.kb"
                              " WHERE k.id=?1 AND c.vec IS NOT NULL ORDER BY c.n"))
        return db_err(err, s->r, "read vectors");
    bind_text(x.st, 1, kb_id);
    size_t cap = 0, n = 0;
    int rc = 0;
    while (sqlite3_step(x.st) == SQLITE_ROW) {
        if (vecs && sqlite3_column_bytes(x.st, 1) != dims * (int)sizeof(float)) {
            rc = sl_err_set(err, SL_EPARSE,
                            "store: a vector of knowledge base %s has %d bytes, not %d dimensions;"
                            " add its documents again",
                            kb_id, sqlite3_column_bytes(x.st, 1), dims);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            *ns = sl_xrealloc(*ns, cap * sizeof **ns);
            *docs = sl_xrealloc(*docs, cap * sizeof **docs);
            if (vecs)
                *vecs = sl_xrealloc(*vecs, cap * (size_t)dims * sizeof(float));
        }
        (*ns)[n] = sqlite3_column_int64(x.st, 0);
        (*docs)[n] = sqlite3_column_int64(x.st, 2);
        if (vecs)
            copy_vec(x.st, 1, *vecs + n * (size_t)dims, dims);
        n++;
    }
    q_close(&x);
    if (rc) {
        free(*ns);
        free(*docs);
        *ns = *docs = NULL;
        if (vecs) {
            free(*vecs);
            *vecs = NULL;
        }
        return -1;
    }
    *count = n;
    return 0;
}

static int sq_kb_postings(sl_store_be *s, const char *kb_id, const char *const *terms, size_t n,
                          void (*fn)(size_t i, long long df, long long base, const void *data,
                                     size_t size, void *ud),
                          void *ud, long long *rows, long long *tokens, long long **skip,
                          size_t *nskip, sl_err *err)
{
    *rows = *tokens = 0;
    *skip = NULL;
    *nskip = 0;
    pthread_mutex_lock(&s->rmu);
    sqlite3_stmt *st = NULL;
    long long kbn = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(s->r, "SELECT n, kw_rows, kw_tokens FROM kb WHERE id=?1", -1, &st,
                           NULL) == SQLITE_OK) {
        bind_text(st, 1, kb_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            kbn = sqlite3_column_int64(st, 0);
            *rows = sqlite3_column_int64(st, 1);
            *tokens = sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (!kbn) {
        rc = sl_err_set(err, SL_ENOTFOUND, "Dataset not found.");
    } else {
        /* the chunks merged segments still hold but that are gone */
        size_t nd;
        dead_range *dead = dead_of(s->r, kbn, &nd);
        if (nd) {
            *skip = sl_xcalloc(2 * nd, sizeof **skip);
            for (size_t k = 0; k < nd; k++)
                (*skip)[2 * k] = dead[k].first, (*skip)[2 * k + 1] = dead[k].last;
            *nskip = nd;
        }
        free(dead);
        /* each segment's page that may hold the term (a few: see
         * merge_segments) */
        if (sqlite3_prepare_v2(s->r, "SELECT (SELECT data FROM kb_pages p WHERE p.seg=g.n AND"
                                     " p.first<=?2 ORDER BY p.first DESC LIMIT 1)"
                                     " FROM kb_segs g WHERE g.kb=?1",
                               -1, &st, NULL) != SQLITE_OK)
            rc = db_err(err, s->r, "keyword search");
    }
    for (size_t i = 0; !rc && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, kbn);
        bind_text(st, 2, terms[i]);
        size_t tl = strlen(terms[i]);
        int step;
        while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
            const unsigned char *page = sqlite3_column_blob(st, 0);
            size_t size = (size_t)sqlite3_column_bytes(st, 0), at = 0;
            sl_kw_entry e;
            int k;
            while ((k = sl_kw_page_next(page, size, &at, &e)) == 1) {
                int c = memcmp(e.term, terms[i], e.len < tl ? e.len : tl);
                if (!c && e.len == tl) {
                    fn(i, e.df, e.base, e.data, e.size, ud);
                    break;
                }
                if (c > 0 || (!c && e.len > tl))
                    break;   /* past where it would be */
            }
            if (k < 0)
                rc = sl_err_set(err, SL_EPARSE, "the keyword index of knowledge base %s is"
                                " damaged; add its documents again", kb_id);
        }
        if (!rc && step != SQLITE_DONE)
            rc = db_err(err, s->r, "keyword search");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->rmu);
    if (rc) {
        free(*skip);
        *skip = NULL;
        *nskip = 0;
    }
    return rc;
}

static sl_value *sq_kb_rows(sl_store_be *s, const char *kb_id, const long long *ns, size_t count,
                            float *vecs, int dims)
{
    sl_value *arr = json_array();
    q x;
    if (!q_open(&x, s, "SELECT c.n, c.id, c.parent, c.position, c.content, c.info, d.id,"
                       " p.n, p.id, p.position, p.content, p.info, c.vec"
                       " FROM kb_chunks c JOIN kb k ON k.n=c.kb JOIN kb_docs d ON d.n=c.doc"
                       " LEFT JOIN kb_chunks p ON p.n=c.parent WHERE k.id=?1 AND c.n=?2"))
        return arr;
    for (size_t i = 0; i < count; i++) {
        sqlite3_reset(x.st);
        bind_text(x.st, 1, kb_id);
        sqlite3_bind_int64(x.st, 2, ns[i]);
        if (sqlite3_step(x.st) != SQLITE_ROW)
            continue;
        if (vecs && dims > 0)
            copy_vec(x.st, 12, vecs + i * (size_t)dims, dims);
        sl_value *r = chunk_row(x.st);
        json_object_set_new(r, "doc_id", col_str(x.st, 6));
        json_object_set_new(
            r, "parent_row",
            sqlite3_column_type(x.st, 7) == SQLITE_NULL
                ? json_null()
                : json_pack("{s:I, s:o, s:i, s:o, s:o}", "n",
                            (json_int_t)sqlite3_column_int64(x.st, 7), "id", col_str(x.st, 8),
                            "position", sqlite3_column_int(x.st, 9), "content",
                            col_str(x.st, 10), "info", col_json(x.st, 11)));
        json_array_append_new(arr, r);
    }
    q_close(&x);
    return arr;
}

static int sq_kb_indexed(sl_store_be *s, const char *kb_id, const char *doc_id,
                         void (*fn)(long long pos, const char *content, void *ud), void *ud,
                         sl_err *err)
{
    q x;
    if (!q_open(&x, s, "SELECT c.n - (SELECT min(n) FROM kb_chunks WHERE doc=d.n), c.content"
                       " FROM kb_chunks c JOIN kb_docs d ON d.n=c.doc JOIN kb k ON k.n=d.kb"
                       " WHERE k.id=?1 AND d.id=?2 AND c.fts IS NOT NULL ORDER BY c.n"))
        return db_err(err, s->r, "read a document's chunks");
    bind_text(x.st, 1, kb_id);
    bind_text(x.st, 2, doc_id);
    int step;
    while ((step = sqlite3_step(x.st)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(x.st, 1);
        fn(sqlite3_column_int64(x.st, 0), c ? c : "", ud);
    }
    int rc = step == SQLITE_DONE ? 0 : db_err(err, s->r, "read a document's chunks");
    q_close(&x);
    return rc;
}

static int sq_kb_kw_put(sl_store_be *s, const char *kb_id, const char *doc_id, const sl_store_kw *kw,
                        sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    if (sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return kb_end(s, db_err(err, s->kw, "begin"), err);
    long long kbn = kb_n(s, kb_id), d = 0, base = 0;
    sqlite3_stmt *st;
    if (kbn && sqlite3_prepare_v2(s->kw, "SELECT d.n, (SELECT min(n) FROM kb_chunks WHERE doc=d.n)"
                                         " FROM kb_docs d WHERE d.id=?1 AND d.kb=?2",
                                  -1, &st, NULL) == SQLITE_OK) {
        bind_text(st, 1, doc_id);
        sqlite3_bind_int64(st, 2, kbn);
        if (sqlite3_step(st) == SQLITE_ROW) {
            d = sqlite3_column_int64(st, 0);
            base = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
    }
    if (!d)
        return kb_end(s, sl_err_set(err, SL_ENOTFOUND, kbn ? "Document Not Exists." : "Dataset not found."), err);
    int rc = drop_terms(s, kbn, d) || put_terms(s, kbn, d, base, kw);
    return kb_end(s, rc ? db_err(err, s->kw, "write a document's keyword index") : 0, err);
}

static int sq_kb_kw_done(sl_store_be *s, const char *kb_id, sl_err *err)
{
    if (kw_lock(s, err))
        return -1;
    if (sqlite3_exec(s->kw, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return kb_end(s, db_err(err, s->kw, "begin"), err);
    long long n = kb_n(s, kb_id);
    if (!n)
        return kb_end(s, sl_err_set(err, SL_ENOTFOUND, "Dataset not found."), err);
    char *ddl = sl_xasprintf("DROP TABLE IF EXISTS kbv_%lld; DROP TABLE IF EXISTS kbf_%lld", n, n);
    int rc = sqlite3_exec(s->kw, ddl, NULL, NULL, NULL) != SQLITE_OK ||
             run1(s->kw, "UPDATE kb SET kw=1, generation=generation+1,"
                         " chunks_generation=chunks_generation+1 WHERE n=?1", NULL, 0, &n, 1);
    free(ddl);
    return kb_end(s, rc ? db_err(err, s->kw, "finish a keyword index") : 0, err);
}

const sl_store_ops sl_store_sqlite = {
    .scheme = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .release_memory = sq_release_memory,
    .ping = sq_ping,
    .shared = sq_shared,
    .event_publish = sq_event_publish,
    .events_since = sq_events_since,
    .stop_request = sq_stop_request,
    .enqueue_run = sq_enqueue_run,
    .claim_runs = sq_claim_runs,
    .run_state = sq_run_state,
    .rate_take = sq_rate_take,
    .running = sq_running,
    .listen = sq_listen,
    .app_add = sq_app_add,
    .app_list = sq_app_list,
    .app_get = sq_app_get,
    .app_delete = sq_app_delete,
    .app_update = sq_app_update,
    .app_versions = sq_app_versions,
    .app_get_version = sq_app_get_version,
    .app_dir = sq_app_dir,
    .key_create = sq_key_create,
    .key_list = sq_key_list,
    .key_revoke = sq_key_revoke,
    .tools_get = sq_tools_get,
    .tools_set = sq_tools_set,
    .key_app = sq_key_app,
    .keys_version = sq_keys_version,
    .admin_token = sq_admin_token,
    .admin_ok = sq_admin_ok,
    .start_run = sq_start_run,
    .finish_run = sq_finish_run,
    .run_get = sq_run_get,
    .run_events = sq_run_events,
    .runs_list = sq_runs_list,
    .run_logs = sq_run_logs,
    .conversation = sq_conversation,
    .history = sq_history,
    .message_add = sq_message_add,
    .conversations = sq_conversations,
    .messages = sq_messages,
    .conversation_delete = sq_conversation_delete,
    .conversation_rename = sq_conversation_rename,
    .feedback = sq_feedback,
    .file_add = sq_file_add,
    .file_get = sq_file_get,
    .blob_create = sq_blob_create,
    .blob_write = sq_blob_write,
    .blob_commit = sq_blob_commit,
    .blob_abort = sq_blob_abort,
    .blob_open = sq_blob_open,
    .blob_delete = sq_blob_delete,
    .key_scope_ok = sq_key_scope_ok,
    .kb_add = sq_kb_add,
    .kb_set = sq_kb_set,
    .kb_get = sq_kb_get,
    .kb_list = sq_kb_list,
    .kb_delete = sq_kb_delete,
    .kb_docs = sq_kb_docs,
    .kb_doc = sq_kb_doc,
    .kb_doc_of_source = sq_kb_doc_of_source,
    .kb_doc_put = sq_kb_doc_put,
    .kb_doc_delete = sq_kb_doc_delete,
    .kb_chunks = sq_kb_chunks,
    .kb_vectors = sq_kb_vectors,
    .kb_postings = sq_kb_postings,
    .kb_rows = sq_kb_rows,
    .kb_indexed = sq_kb_indexed,
    .kb_kw_put = sq_kb_kw_put,
    .kb_kw_done = sq_kb_kw_done,
};
