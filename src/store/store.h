/*
 * store — everything `sluice serve` keeps: apps (their DSL), hashed API
 * keys, runs with their inputs, outputs, status, timings and tokens, every
 * event of every run, conversations and messages, and uploaded files and
 * files runs made (metadata, and their bytes as blobs).
 *
 * One interface, backends behind it: an sl_store is opened from a location
 * ("sqlite:FOLDER", or a plain FOLDER) and every function below dispatches
 * through the backend's sl_store_ops.  Nothing outside store/ knows which
 * backend holds the data or how: no SQL and no paths of stored files leave
 * this module; file bytes go through the blob functions, by key.
 *
 * The SQLite backend (store/sqlite.c) keeps one database (WAL) in the
 * folder, files/ID for blobs, apps/ID for apps' bundle files, and
 * admin-token beside them.  Migrations are numbered; opening a store
 * applies the missing ones in order inside a transaction.  Opening also marks runs that were running when the
 * previous process died as failed, with the reason.
 *
 * The PostgreSQL backend (store/pg.c, knowledge in store/pg_kb.c) keeps
 * the same tables, under the same migration numbers, in one database
 * several servers and workers share, with blobs as rows and apps' bundle
 * files in a folder every machine mounts ($SLUICE_FILES_DIR); it leaves
 * running runs alone at open (they may be another process's), and also
 * queues runs (see "runs as jobs").
 *
 * Writes of finished runs go through one writer thread that commits them
 * in groups (one transaction for every run that finished meanwhile), so a
 * busy server pays one commit per group, not per run; sl_store_finish_run
 * returns once its group is committed.  Reads use their own connection.
 * All functions are thread-safe.  Errors: -1 with sl_err.
 */
#ifndef SL_STORE_H
#define SL_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

typedef struct sl_store sl_store;

/* Opens (creating) the store at `where`: "sqlite:FOLDER", or a FOLDER
 * (a folder whose name starts with letters and a colon is written
 * ./NAME), or a PostgreSQL URI ("postgres://…" or "postgresql://…").  An
 * unknown backend is refused (SL_EUNSUPPORTED, naming it and the ones
 * there are).  *interrupted gets how many runs the last process left
 * running (now failed; 0 on PostgreSQL). */
int sl_store_open(const char *where, sl_store **out, int *interrupted, sl_err *err);
void sl_store_close(sl_store *s);
/* Gives caches back (the server calls it when idle). */
void sl_store_release_memory(sl_store *s);
/* Whether the store answers now: 0, or -1 with why (a database server
 * that is down or unreachable).  The server asks when a key or token
 * lookup found nothing, to tell "no such key" (401) from "cannot look"
 * (503). */
int sl_store_ping(sl_store *s, sl_err *err);

/* ---- apps ---- */
/* *id gets a new app id (heap). */
int sl_store_app_add(sl_store *s, const char *name, const char *mode, const char *dsl, char **id,
                     sl_err *err);
/* {id, name, mode, created_at} objects, newest first. */
int sl_store_app_list(sl_store *s, sl_value **out, sl_err *err);
/* The app's DSL text (heap) and mode/name; -1 with SL_ENOTFOUND when unknown. */
int sl_store_app_get(sl_store *s, const char *id, char **dsl, sl_value **info, sl_err *err);
int sl_store_app_delete(sl_store *s, const char *id, sl_err *err);
/* A new version of an app (its DSL, name and mode); *version: its number.
 * Servers running the app load the new version for the runs that follow. */
int sl_store_app_update(sl_store *s, const char *id, const char *name, const char *mode,
                        const char *dsl, int *version, sl_err *err);
/* [{version, created_at}] newest first. */
int sl_store_app_versions(sl_store *s, const char *id, sl_value **out, sl_err *err);
int sl_store_app_get_version(sl_store *s, const char *id, int version, char **dsl, sl_err *err);
/* The folder on this machine for app id's bundle files (its files/ and
 * manifest.json: runs mount them, export reads them), heap; its parent
 * exists, the folder itself may not.  NULL with SL_EINVAL for an id that
 * could name another folder ("", ".", "..", a '/'). */
char *sl_store_app_dir(sl_store *s, const char *id, sl_err *err);

/* ---- keys ---- */
/* A new key "app-…" for the app (heap); only its hash is kept. */
int sl_store_key_create(sl_store *s, const char *app_id, char **key, sl_err *err);
int sl_store_key_list(sl_store *s, const char *app_id, sl_value **out, sl_err *err);
int sl_store_key_revoke(sl_store *s, const char *key_id, sl_err *err);
/* The app a key belongs to (heap), NULL when the key is unknown or revoked. */
char *sl_store_key_app(sl_store *s, const char *key);
/* Changes whenever a key is revoked or an app deleted, by any process
 * (a file's time stamp): caches of keys compare it before each use. */
long long sl_store_keys_version(sl_store *s);

/* ---- admin token ---- */
/* The admin token: made on first use and written to DIR/admin-token
 * (mode 0600); *created tells whether it was made now. */
/* Tool bindings the admin set (tools/binding.h), as the JSON text of a
 * `tools` mapping: scope "" holds the server's defaults, an app id that
 * app's own.  *spec NULL when none.  Setting them (spec NULL: removing)
 * makes servers load their apps again (sl_store_keys_version). */
int sl_store_tools_get(sl_store *s, const char *scope, char **spec, sl_err *err);
int sl_store_tools_set(sl_store *s, const char *scope, const char *spec, sl_err *err);

int sl_store_admin_token(sl_store *s, char **token, bool *created, sl_err *err);
bool sl_store_admin_ok(sl_store *s, const char *token);

/* ---- runs ---- */
typedef struct {
    const char *id, *app_id, *task_id, *user, *conversation_id, *message_id;
    const sl_value *inputs;
    int app_version;     /* the app's version the run runs (0: not known) */
} sl_run_row;

int sl_store_start_run(sl_store *s, const sl_run_row *r, sl_err *err);
/* Records the end of a run, its events (a JSON array text, heap; taken),
 * the answer of the message it makes when it has one, and reply (JSON
 * text, or NULL): the answer a blocking request gets, for a process that
 * waits on a run another executed (sl_store_run_state); returns when that
 * is on disk.  On a shared store only the attempt that holds the run's
 * lease writes (see sl_store_claim_runs); a later one logs and writes
 * nothing. */
int sl_store_finish_run(sl_store *s, const char *run_id, const char *status,
                        const sl_value *outputs, const char *error, double elapsed,
                        long long tokens, int steps, long long finished_at, const char *answer,
                        const char *reply, char *events, sl_err *err);
/* The run as Dify's GET /workflows/run/:id shows it; NULL when it is not
 * this app's (app_id NULL: any app's, for the admin API, which also gets
 * `user`, `app_version`, and a chat turn's `conversation_id`, `message_id`
 * and `query`). */
sl_value *sl_store_run_get(sl_store *s, const char *app_id, const char *run_id);
/* Events of a run in order: [{event, data}] (app_id as above); NULL while
 * the run runs (they are kept when it ends). */
sl_value *sl_store_run_events(sl_store *s, const char *app_id, const char *run_id);
/* ---- a run's events while it runs, for other processes ----
 * A store several processes share (PostgreSQL) carries each event of a
 * running run as it happens, so any server can stream a run another
 * executes, and stop it.  A store of one process (SQLite) has nothing to
 * carry: publish does nothing, shared is false, listen fails.  Events are
 * numbered from 1 as the stored log is (sl_store_run_events); when the
 * run ends they are kept in its log and the carried copies go. */
/* Whether the store is shared by processes (events and stops travel). */
bool sl_store_shared(sl_store *s);
/* Carries event `seq` of run_id (len bytes of text: {"event":…,"data":…},
 * copied), in order, soon; the caller goes on at once.  Failures are
 * logged. */
void sl_store_event_publish(sl_store *s, const char *run_id, long long seq, const char *text,
                            size_t len);
/* The carried events of run_id after `after`: [{seq, text}] (new ref;
 * NULL on error). */
sl_value *sl_store_events_since(sl_store *s, const char *run_id, long long after);
/* How many runs of app_id run now or wait in line, in every process
 * sharing the store; -1 when the store is one process's (it counts its
 * own). */
long long sl_store_running(sl_store *s, const char *app_id);
/* Asks whichever process runs run_id to stop it (fn gets "stop"). */
int sl_store_stop_request(sl_store *s, const char *run_id, sl_err *err);
/* Calls fn(what, run_id, ud) from a thread of the store's: what is
 * "events" (run_id has new events), "stop" (stop run_id if it is yours)
 * or "lost" (the store was out of reach; run_id NULL: look again at
 * everything you follow), or "queue" (runs were queued; run_id NULL).  Once per store. */
typedef void (*sl_store_listen_fn)(const char *what, const char *run_id, void *ud);
int sl_store_listen(sl_store *s, sl_store_listen_fn fn, void *ud, sl_err *err);

/* ---- runs as jobs (a shared store) ----
 * A run may be queued instead of started: its row waits, status "queued",
 * until a process claims it and runs it as its own.  Each claim raises the
 * run's epoch, and every later write of that attempt (events, its end)
 * names it: an attempt whose lease ran out (its process stopped, or was
 * cut off) writes nothing, so nothing is recorded twice.  A run whose
 * lease ran out is failed, or queued again when its request says "retry"
 * (three attempts at most).  Queued runs are announced: listen's fn gets
 * "queue".  A SQLite store has one process: it queues nothing (its calls
 * fail with SL_EUNSUPPORTED). */
/* Queues the run (its row as sl_store_start_run writes it); request: JSON
 * text of what a claimer needs beyond the row ({query, retry}). */
int sl_store_enqueue_run(sl_store *s, const sl_run_row *r, const char *request, sl_err *err);
/* Claims up to max queued runs, oldest first: each runs here from now,
 * under a lease this store renews.  *out: [{id, app_id, task_id, user,
 * conversation_id, message_id, inputs, request, app_version, created_at,
 * attempts}], maybe empty. */
int sl_store_claim_runs(sl_store *s, int max, sl_value **out, sl_err *err);
/* A run's state, for a process that waits on a run another executes:
 * *status (heap: "queued", "running" or its end) and, once it ended, its
 * reply (heap, NULL when it has none: an attempt that was lost).  -1 with
 * SL_ENOTFOUND when there is no such run. */
int sl_store_run_state(sl_store *s, const char *run_id, char **status, char **reply,
                       sl_err *err);

/* A rate limit every process sharing the store keeps together: takes one
 * request's worth from key's bucket, which refills at per_s a second up
 * to one second's worth.  1: taken; 0: the bucket is empty (refuse);
 * -1 with err: the store cannot say (SQLite: SL_EUNSUPPORTED; the caller
 * keeps its own). */
int sl_store_rate_take(sl_store *s, const char *key, double per_s, sl_err *err);

/* Runs of every app, newest first, for the admin API: each filter applies
 * when set (NULL, 0), before_at/before_id continue a list (the cursor of
 * the page before), limit 1..100 (else 50).  {data: [{id, app_id, status,
 * user, error, created_at, finished_at, elapsed_time, total_tokens,
 * total_steps}], has_more, next (the cursor "created_at:id", or null)}. */
typedef struct {
    const char *app_id, *status, *user;
    long long since, until;           /* created_at bounds, Unix seconds (0: none) */
    long long before_at;              /* 0: from the newest */
    const char *before_id;
    int limit;
} sl_runs_filter;
sl_value *sl_store_runs_list(sl_store *s, const sl_runs_filter *f);
/* Dify's /workflows/logs page. */
sl_value *sl_store_run_logs(sl_store *s, const char *app_id, const char *status, int page,
                            int limit);

/* ---- conversations ---- */
/* Conversations and their messages belong to the (app, user) that started
 * them, as in Dify: every call below takes the caller's `user` and acts
 * only on that user's conversations.  A NULL or empty user is Dify's
 * default end user, SL_STORE_DEFAULT_USER (a client that never names a
 * user), which is a user like any other: it does not see other users'
 * conversations, and they do not see its. */
#define SL_STORE_DEFAULT_USER "DEFAULT-USER"

/* Makes the conversation when id is NULL (new id in *out_id, heap);
 * fails (SL_EINVAL, "Conversation Not Exists.") when it does not exist or
 * belongs to another app or user. */
int sl_store_conversation(sl_store *s, const char *app_id, const char *user, const char *id,
                          const char *first_query, char **out_id, sl_err *err);
/* The conversation's turns [{query, answer}], oldest first (the caller
 * checked the conversation with sl_store_conversation). */
sl_value *sl_store_history(sl_store *s, const char *conversation_id, int limit);
int sl_store_message_add(sl_store *s, const char *id, const char *conversation_id,
                         const char *app_id, const char *query, const char *run_id,
                         sl_err *err);
/* The user's conversations, newest first. */
sl_value *sl_store_conversations(sl_store *s, const char *app_id, const char *user, int limit);
/* The messages of the user's conversation; NULL when it is not this app's
 * and user's. */
sl_value *sl_store_messages(sl_store *s, const char *app_id, const char *conversation_id,
                            const char *user, int limit);

int sl_store_conversation_delete(sl_store *s, const char *app_id, const char *id,
                                 const char *user, sl_err *err);
/* The renamed conversation, NULL when it is not this app's and user's. */
sl_value *sl_store_conversation_rename(sl_store *s, const char *app_id, const char *id,
                                       const char *user, const char *name);
/* like, dislike or NULL (clears); -1 when the message is not in one of
 * this app's and user's conversations. */
int sl_store_feedback(sl_store *s, const char *app_id, const char *message_id, const char *user,
                      const char *rating);

/* ---- files ----
 * An uploaded file or one a run made: its metadata here, its bytes the
 * blob of the same key.  A file is reached only by its id, and only for
 * its app and, when it has one, its user. */
int sl_store_file_add(sl_store *s, const char *id, const char *app_id, const char *name,
                      long long size, const char *mime, const char *user, sl_err *err);
/* {id, name, size, mime_type, created_by, created_at}, NULL when not this app's. */
sl_value *sl_store_file_get(sl_store *s, const char *app_id, const char *id);
/* The same, when a run of app_id for `user` may read the file: it is the
 * app's and has no owner or is this user's (chatflows find files of
 * earlier turns so).  NULL for any other id (also ids of no file shape). */
sl_value *sl_store_file_find(sl_store *s, const char *app_id, const char *user, const char *id);
/* Opens the bytes of such a file: a read-only descriptor the caller
 * closes; -1 with SL_ENOTFOUND when sl_store_file_find would say NULL. */
int sl_store_file_open(sl_store *s, const char *app_id, const char *user, const char *id,
                       sl_err *err);

/* ---- blobs: bytes by key ----
 * A key is an id sluice issued (a lowercase UUID, sl_file_id_ok): nothing
 * else is taken, so no key names a path.  A blob is written once (a key
 * that exists is refused), within a cap, and read whole or as a stream. */
typedef struct sl_blob_writer sl_blob_writer;

/* Starts blob `key`; its bytes come with sl_blob_write, and it exists once
 * sl_blob_commit returns 0.  cap: the most bytes it may hold (0: none). */
int sl_store_blob_create(sl_store *s, const char *key, long long cap, sl_blob_writer **out,
                         sl_err *err);
/* Adds bytes; -1 with SL_ELIMIT when they would pass the cap (none of
 * them is written), SL_EIO when the backend cannot write. */
int sl_blob_write(sl_blob_writer *w, const void *data, size_t len, sl_err *err);
/* Keeps the blob and frees w; on failure nothing is kept. */
int sl_blob_commit(sl_blob_writer *w, sl_err *err);
/* Drops what was written and frees w (NULL: nothing). */
void sl_blob_abort(sl_blob_writer *w);
/* The whole blob in one call (create, write, commit). */
int sl_store_blob_put(sl_store *s, const char *key, const void *data, size_t len,
                      long long cap, sl_err *err);
/* A read-only descriptor on the blob's bytes, at their start, that the
 * caller closes; *size (may be NULL) gets their number.  -1 with
 * SL_ENOTFOUND when there is no such blob. */
int sl_store_blob_open(sl_store *s, const char *key, long long *size, sl_err *err);
/* Appends the blob's bytes to out; -1 with SL_ELIMIT when there are more
 * than cap (0: out's own cap). */
int sl_store_blob_get(sl_store *s, const char *key, size_t cap, sl_buf *out, sl_err *err);
int sl_store_blob_delete(sl_store *s, const char *key, sl_err *err);

/* ---- dataset keys ----
 * Dify's workspace-wide Knowledge API keys ("dataset-…"): one reaches every
 * knowledge base, and no app (sl_store_key_app says NULL for it).  Listed
 * and revoked as app keys are, under the scope SL_STORE_DATASETS. */
#define SL_STORE_DATASETS "*datasets"
int sl_store_dataset_key_create(sl_store *s, char **key, sl_err *err);
bool sl_store_dataset_key_ok(sl_store *s, const char *key);

/* ---- knowledge (knowledge/kb.h keeps the meaning; this keeps the rows) ----
 * A knowledge base, its documents and its chunks each carry an "info"
 * object the store keeps as it is.  A chunk is a segment (parent 0) or a
 * child of the segment whose n is parent; chunks with a vector are the
 * searchable ones, and only they are in the full-text index (by their
 * fts text, which the caller prepares).  Row numbers (n) are the store's
 * own and stable; vectors and full-text hits are named by them.
 * Every change to a knowledge base's documents raises its generation, and
 * every change to its chunks its chunks_generation too, so caches of its
 * documents and of its vectors know when to load them again. */
typedef struct {
    const char *id;          /* the chunk's id (a UUID) */
    long parent;             /* index in this array of its segment, or -1 */
    int position;
    const char *content;
    const char *fts;         /* indexed text (often content itself), NULL: not indexed */
    const sl_value *info;
    const char *info_json;   /* info as JSON text when the caller made it, or NULL */
    const float *vec;        /* dims floats, or NULL */
} sl_store_chunk;

/* A document's keyword index (knowledge/kwindex.h builds it): each term
 * with its postings, the terms in byte order; rows and tokens: the
 * document's indexed chunks and their tokens.  Postings name chunks by
 * their position in the document (0: its first chunk). */
typedef struct {
    const char *term;
    long long df;                /* the document's chunks holding it */
    long long last;              /* the position of its last posting */
    const unsigned char *data;   /* its postings */
    size_t size;
} sl_store_term;
typedef struct {
    const sl_store_term *terms;
    size_t n;
    long long rows, tokens;
} sl_store_kw;

/* kb: {id, name, info, generation, chunks_generation, created_at}. */
int sl_store_kb_add(sl_store *s, const char *id, const char *name, const sl_value *info,
                    sl_err *err);
/* name NULL keeps it; info NULL keeps it.  A taken name: SL_EINVAL. */
int sl_store_kb_set(sl_store *s, const char *id, const char *name, const sl_value *info,
                    sl_err *err);
sl_value *sl_store_kb_get(sl_store *s, const char *id_or_name);
sl_value *sl_store_kb_list(sl_store *s);
int sl_store_kb_delete(sl_store *s, const char *id, sl_err *err);
/* docs: [{n, id, info, created_at, segments}] newest first. */
sl_value *sl_store_kb_docs(sl_store *s, const char *kb_id);
sl_value *sl_store_kb_doc(sl_store *s, const char *kb_id, const char *doc_id);
/* The document added from source (the first, as sl_store_kb_docs lists
 * them) or NULL, and the position a new document takes (one past the
 * largest); without reading every document. */
sl_value *sl_store_kb_doc_of_source(sl_store *s, const char *kb_id, const char *source,
                                    long long *next_position);
/* Writes document doc_id (made when new) with info; with chunks (n may
 * be 0) its chunks, and its keyword index with kw (NULL: none), are
 * replaced by them, all in one transaction; chunks NULL keeps them. */
int sl_store_kb_doc_put(sl_store *s, const char *kb_id, const char *doc_id, const sl_value *info,
                        const sl_store_chunk *chunks, size_t n, int dims, const sl_store_kw *kw,
                        sl_err *err);
int sl_store_kb_doc_delete(sl_store *s, const char *kb_id, const char *doc_id, sl_err *err);
/* The chunks of a document in order: [{n, id, parent (n or 0), position,
 * content, info}]; with vecs, *vecs gets each chunk's vector (dims floats,
 * zeros when it has none), malloc'd. */
sl_value *sl_store_kb_chunks(sl_store *s, const char *kb_id, const char *doc_id, float **vecs,
                             int dims);
/* Every vector of a knowledge base: its row number, its document's (the
 * "n" of sl_store_kb_docs) and dims floats each (malloc'd; vecs NULL:
 * the numbers alone). */
int sl_store_kb_vectors(sl_store *s, const char *kb_id, int dims, long long **ns,
                        long long **docs, float **vecs, size_t *count, sl_err *err);
/* Keyword postings: fn(i, df, base, data, size, ud) for each segment of
 * the index that holds terms[i] (base: the row number of position 0);
 * *rows and *tokens: the knowledge base's indexed chunks and their tokens;
 * *skip (malloc'd, *nskip [first, last] pairs, sorted): chunk numbers the
 * postings may still hold that are gone (documents since removed). */
int sl_store_kb_postings(sl_store *s, const char *kb_id, const char *const *terms, size_t n,
                         void (*fn)(size_t i, long long df, long long base, const void *data,
                                    size_t size, void *ud),
                         void *ud, long long *rows, long long *tokens, long long **skip,
                         size_t *nskip, sl_err *err);
/* Knowledge bases made before sluice kept its own keyword index (their
 * row's "kw" is 0) are indexed again, a document at a time: its indexed
 * chunks in order (fn(pos, content): pos counted from its first chunk),
 * then its index written; sl_store_kb_kw_done marks the knowledge base. */
int sl_store_kb_indexed(sl_store *s, const char *kb_id, const char *doc_id,
                        void (*fn)(long long pos, const char *content, void *ud), void *ud,
                        sl_err *err);
int sl_store_kb_kw_put(sl_store *s, const char *kb_id, const char *doc_id, const sl_store_kw *kw,
                       sl_err *err);
int sl_store_kb_kw_done(sl_store *s, const char *kb_id, sl_err *err);
/* Chunks by row number: [{n, id, doc_id, parent_row: {n, id, position,
 * content, info} | null, position, content, info}] in the order asked
 * (unknown ones left out); with vecs (count*dims floats), each found
 * row's vector goes to its place in the order asked. */
sl_value *sl_store_kb_rows(sl_store *s, const char *kb_id, const long long *ns, size_t count,
                           float *vecs, int dims);

/* ---- backends ----
 * A backend is a table of functions, one for each of the above, named as
 * them without "sl_store_" (but for file_find, file_open, blob_put and
 * blob_get, which store.c builds on the others); sl_store_open picks it by the scheme of the
 * location and hands `where` after the colon to its open.  Its own state
 * (struct sl_store_be) is its business: the functions get it back.  Each
 * function keeps the contract written above for its sl_store_ twin; the
 * store checks what is the same for every backend (blob keys, caps, who
 * may open a file) before it calls them. */
typedef struct sl_store_be sl_store_be;
typedef struct sl_store_bw sl_store_bw;  /* a blob being written */

typedef struct sl_store_ops {
    const char *scheme;  /* "sqlite": the location's scheme */
    int (*open)(const char *where, sl_store_be **out, int *interrupted, sl_err *err);
    void (*close)(sl_store_be *b);
    void (*release_memory)(sl_store_be *b);
    int (*ping)(sl_store_be *b, sl_err *err);
    bool (*shared)(sl_store_be *b);
    void (*event_publish)(sl_store_be *b, const char *run_id, long long seq, const char *text,
                          size_t len);
    sl_value *(*events_since)(sl_store_be *b, const char *run_id, long long after);
    int (*stop_request)(sl_store_be *b, const char *run_id, sl_err *err);
    long long (*running)(sl_store_be *b, const char *app_id);
    int (*listen)(sl_store_be *b, sl_store_listen_fn fn, void *ud, sl_err *err);
    int (*enqueue_run)(sl_store_be *b, const sl_run_row *r, const char *request, sl_err *err);
    int (*claim_runs)(sl_store_be *b, int max, sl_value **out, sl_err *err);
    int (*run_state)(sl_store_be *b, const char *run_id, char **status, char **reply,
                     sl_err *err);
    int (*rate_take)(sl_store_be *b, const char *key, double per_s, sl_err *err);

    int (*app_add)(sl_store_be *b, const char *name, const char *mode, const char *dsl,
                   char **id, sl_err *err);
    int (*app_list)(sl_store_be *b, sl_value **out, sl_err *err);
    int (*app_get)(sl_store_be *b, const char *id, char **dsl, sl_value **info, sl_err *err);
    int (*app_delete)(sl_store_be *b, const char *id, sl_err *err);
    int (*app_update)(sl_store_be *b, const char *id, const char *name, const char *mode,
                      const char *dsl, int *version, sl_err *err);
    int (*app_versions)(sl_store_be *b, const char *id, sl_value **out, sl_err *err);
    int (*app_get_version)(sl_store_be *b, const char *id, int version, char **dsl,
                           sl_err *err);
    char *(*app_dir)(sl_store_be *b, const char *id, sl_err *err);

    int (*key_create)(sl_store_be *b, const char *app_id, char **key, sl_err *err);
    int (*key_list)(sl_store_be *b, const char *app_id, sl_value **out, sl_err *err);
    int (*key_revoke)(sl_store_be *b, const char *key_id, sl_err *err);
    char *(*key_app)(sl_store_be *b, const char *key);
    bool (*key_scope_ok)(sl_store_be *b, const char *scope, const char *key);
    long long (*keys_version)(sl_store_be *b);
    int (*tools_get)(sl_store_be *b, const char *scope, char **spec, sl_err *err);
    int (*tools_set)(sl_store_be *b, const char *scope, const char *spec, sl_err *err);
    int (*admin_token)(sl_store_be *b, char **token, bool *created, sl_err *err);
    bool (*admin_ok)(sl_store_be *b, const char *token);

    int (*start_run)(sl_store_be *b, const sl_run_row *r, sl_err *err);
    int (*finish_run)(sl_store_be *b, const char *run_id, const char *status,
                      const sl_value *outputs, const char *error, double elapsed,
                      long long tokens, int steps, long long finished_at, const char *answer,
                      const char *reply,
                      char *events, sl_err *err);
    sl_value *(*run_get)(sl_store_be *b, const char *app_id, const char *run_id);
    sl_value *(*run_events)(sl_store_be *b, const char *app_id, const char *run_id);
    sl_value *(*runs_list)(sl_store_be *b, const sl_runs_filter *f);
    sl_value *(*run_logs)(sl_store_be *b, const char *app_id, const char *status, int page,
                          int limit);

    int (*conversation)(sl_store_be *b, const char *app_id, const char *user, const char *id,
                        const char *first_query, char **out_id, sl_err *err);
    sl_value *(*history)(sl_store_be *b, const char *conversation_id, int limit);
    int (*message_add)(sl_store_be *b, const char *id, const char *conversation_id,
                       const char *app_id, const char *query, const char *run_id, sl_err *err);
    sl_value *(*conversations)(sl_store_be *b, const char *app_id, const char *user, int limit);
    sl_value *(*messages)(sl_store_be *b, const char *app_id, const char *conversation_id,
                          const char *user, int limit);
    int (*conversation_delete)(sl_store_be *b, const char *app_id, const char *id,
                               const char *user, sl_err *err);
    sl_value *(*conversation_rename)(sl_store_be *b, const char *app_id, const char *id,
                                     const char *user, const char *name);
    int (*feedback)(sl_store_be *b, const char *app_id, const char *message_id,
                    const char *user, const char *rating);

    int (*file_add)(sl_store_be *b, const char *id, const char *app_id, const char *name,
                    long long size, const char *mime, const char *user, sl_err *err);
    sl_value *(*file_get)(sl_store_be *b, const char *app_id, const char *id);

    /* blobs: the store checked the key and keeps the cap */
    int (*blob_create)(sl_store_be *b, const char *key, sl_store_bw **out, sl_err *err);
    int (*blob_write)(sl_store_bw *w, const void *data, size_t len, sl_err *err);
    int (*blob_commit)(sl_store_bw *w, sl_err *err);  /* frees w */
    void (*blob_abort)(sl_store_bw *w);               /* frees w */
    int (*blob_open)(sl_store_be *b, const char *key, long long *size, sl_err *err);
    int (*blob_delete)(sl_store_be *b, const char *key, sl_err *err);

    int (*kb_add)(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                  sl_err *err);
    int (*kb_set)(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                  sl_err *err);
    sl_value *(*kb_get)(sl_store_be *b, const char *id_or_name);
    sl_value *(*kb_list)(sl_store_be *b);
    int (*kb_delete)(sl_store_be *b, const char *id, sl_err *err);
    sl_value *(*kb_docs)(sl_store_be *b, const char *kb_id);
    sl_value *(*kb_doc)(sl_store_be *b, const char *kb_id, const char *doc_id);
    sl_value *(*kb_doc_of_source)(sl_store_be *b, const char *kb_id, const char *source,
                                  long long *next_position);
    int (*kb_doc_put)(sl_store_be *b, const char *kb_id, const char *doc_id, const sl_value *info,
                      const sl_store_chunk *chunks, size_t n, int dims, const sl_store_kw *kw,
                      sl_err *err);
    int (*kb_doc_delete)(sl_store_be *b, const char *kb_id, const char *doc_id, sl_err *err);
    sl_value *(*kb_chunks)(sl_store_be *b, const char *kb_id, const char *doc_id, float **vecs,
                           int dims);
    int (*kb_vectors)(sl_store_be *b, const char *kb_id, int dims, long long **ns,
                      long long **docs, float **vecs, size_t *count, sl_err *err);
    int (*kb_postings)(sl_store_be *b, const char *kb_id, const char *const *terms, size_t n,
                       void (*fn)(size_t i, long long df, long long base, const void *data,
                                  size_t size, void *ud),
                       void *ud, long long *rows, long long *tokens, long long **skip,
                       size_t *nskip, sl_err *err);
    sl_value *(*kb_rows)(sl_store_be *b, const char *kb_id, const long long *ns, size_t count,
                         float *vecs, int dims);
    int (*kb_indexed)(sl_store_be *b, const char *kb_id, const char *doc_id,
                      void (*fn)(long long pos, const char *content, void *ud), void *ud,
                      sl_err *err);
    int (*kb_kw_put)(sl_store_be *b, const char *kb_id, const char *doc_id, const sl_store_kw *kw,
                     sl_err *err);
    int (*kb_kw_done)(sl_store_be *b, const char *kb_id, sl_err *err);
} sl_store_ops;

/* The backends sluice has: SQLite (store/sqlite.c) and PostgreSQL
 * (store/pg.c: "postgres://USER:PASSWORD@HOST:PORT/DB" or
 * "postgresql:///DB?host=SOCKETDIR", libpq's URIs; knowledge in
 * store/pg_kb.c; apps' bundle files in $SLUICE_FILES_DIR). */
extern const sl_store_ops sl_store_sqlite;
extern const sl_store_ops sl_store_pg;

#endif
