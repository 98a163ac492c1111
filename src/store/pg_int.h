/*
 * store/pg_int — what the PostgreSQL backend's files share (store/pg.c:
 * the connection pool, statements, migrations and everything but
 * knowledge; store/pg_kb.c: knowledge bases).  Internal to store/: nothing
 * else includes it.
 */
#ifndef SL_STORE_PG_INT_H
#define SL_STORE_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>

#include "store/store.h"

/* libpq's functions, loaded when a store opens (core/dl.h) */
#define PQ_FNS(X)                                                                                 \
    X(PQclear) X(PQcmdTuples) X(PQconnectdbParams) X(PQconninfoFree) X(PQconninfoParse)           \
    X(PQerrorMessage) X(PQexec) X(PQexecParams) X(PQfinish) X(PQfreemem) X(PQgetisnull)           \
    X(PQgetlength) X(PQgetvalue) X(PQntuples) X(PQresultErrorField) X(PQresultErrorMessage)       \
    X(PQresultStatus) X(PQsetNoticeProcessor) X(PQstatus) X(PQtransactionStatus)             \
    X(PQsocket) X(PQconsumeInput) X(PQnotifies) X(PQprepare) X(PQexecPrepared)

#define PQ_PTR(f) extern __typeof__(&f) pq_##f;
PQ_FNS(PQ_PTR)
#undef PQ_PTR
#define PQclear pq_PQclear
#define PQcmdTuples pq_PQcmdTuples
#define PQconnectdbParams pq_PQconnectdbParams
#define PQconninfoFree pq_PQconninfoFree
#define PQconninfoParse pq_PQconninfoParse
#define PQerrorMessage pq_PQerrorMessage
#define PQexec pq_PQexec
#define PQexecParams pq_PQexecParams
#define PQfinish pq_PQfinish
#define PQfreemem pq_PQfreemem
#define PQgetisnull pq_PQgetisnull
#define PQgetlength pq_PQgetlength
#define PQgetvalue pq_PQgetvalue
#define PQntuples pq_PQntuples
#define PQresultErrorField pq_PQresultErrorField
#define PQresultErrorMessage pq_PQresultErrorMessage
#define PQresultStatus pq_PQresultStatus
#define PQsetNoticeProcessor pq_PQsetNoticeProcessor
#define PQstatus pq_PQstatus
#define PQsocket pq_PQsocket
#define PQconsumeInput pq_PQconsumeInput
#define PQnotifies pq_PQnotifies
#define PQprepare pq_PQprepare
#define PQexecPrepared pq_PQexecPrepared
#define PQtransactionStatus pq_PQtransactionStatus

#define POOL_MAX 8             /* connections one store keeps at most */
#define MAX_PW 8               /* passwords a location may hold, as written and decoded */
#define BLOB_PART (1u << 20)   /* bytes per row of blob_parts */

struct sl_store_be {
    char *conninfo;            /* "postgresql:" and the location */
    char *shown;               /* the location for messages, its password masked */
    char *pw[MAX_PW];          /* passwords as written and decoded */
    int npw;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* a connection came back, or room for one */
    PGconn *idle[POOL_MAX];
    int nidle, nopen;          /* nopen: made and not dropped, idle or lent */
    long long keys_seen;       /* the last keys_version read (mu) */
    /* keys_seen holds while the listener hears sluice_keys (every bump
     * says it), for 5 s at most: keys_gen counts the bumps heard or made
     * here, and a read made across one is not kept (mu) */
    bool keys_valid, keys_heard;
    double keys_at;
    unsigned long keys_gen;
    char *down_why;            /* the last failed connect's reason (mu) */
    double down_until;         /* until when new connects fail at once with it */
    /* run leases (migration 13): this store's id as runs' owner, and the
     * thread that renews its leases and fails runs whose lease ran out */
    char owner[40];
    int lease_s;               /* $SLUICE_RUN_LEASE_S, default LEASE_S */
    /* the epoch of each run this store runs now (mu): its writes name it */
    /* carried: events the publisher took; pending: queued or being
     * written (pub_mu too); since: when this process took the run */
    struct pg_epoch { char id[40]; long long epoch, carried, pending; double since; } *epochs;
    size_t nepochs, epochs_cap;
    pthread_t leaser;
    bool leasing, stop;        /* stop: mu */
    pthread_cond_t stop_cv;
    /* events carried to other processes (event_publish): a queue one
     * thread writes in batches, each batch announced with NOTIFY */
    pthread_mutex_t pub_mu;
    pthread_cond_t pub_cv;     /* items queued, or one batch written */
    struct pub_item *pub_head, *pub_tail;
    size_t pub_n;              /* in the queue now */
    /* writes of runs (start, queue, end) go through one thread that
     * commits them in groups (pg.c, batched) */
    pthread_mutex_t gw_mu;
    pthread_cond_t gw_cv;      /* ops queued, or ops done */
    struct gw_op *gw_head, *gw_tail;
    pthread_t grouper;
    bool grouping;
    /* statements prepared on the pool's connections (mu), each by the
     * address of its SQL text, which the program holds for good */
    struct pg_prep {
        PGconn *c;
        int n;
        const char *sql[48];
    } prep[2 * POOL_MAX];
    pthread_t publisher, listener;
    bool publishing, listening;
    sl_store_listen_fn listen_fn;
    void *listen_ud;
};

typedef struct {
    sl_store_be *b;
    PGconn *c;        /* NULL: lost (its place in the pool is freed at give) */
    bool reused;      /* it came from the pool: the server may have dropped it */
    bool used;        /* a statement went through on it */
    bool bumped;      /* keys_version was bumped in its transaction */
    char state[6];    /* the SQLSTATE of the last failure */
} pg_conn;

/* n parameters of a statement: ARGS(a, b) */
#define ARGS(...)                                                                                 \
    (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),                          \
        (const char *const[]){__VA_ARGS__}

/* ---- the pool and statements (pg.c) ---- */
long long pg_now_s(void);
const char *pg_ll(char buf[24], long long v);
/* Lends a connection (the pool's, or a new one); pg_give takes it back. */
int pg_take(sl_store_be *b, pg_conn *x, sl_err *err);
void pg_give(pg_conn *x);
/* A statement's result (the caller PQclears it), or NULL with err
 * ("store: WHAT: PostgreSQL's message").  len/fmt: NULL for text
 * parameters; binary: results in binary (bytea as its bytes). */
PGresult *pg_run(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                 const int *len, const int *fmt, int binary, sl_err *err);
PGresult *pg_qx(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                sl_err *err);
/* pg_qx for a statement the program runs often: sql is text it holds for
 * good (a string literal); it is prepared once on each connection, so
 * PostgreSQL does not parse and plan it again at every call. */
PGresult *pg_qp(pg_conn *x, const char *what, const char *sql, int n, const char *const *v,
                sl_err *err);
/* pg_q1 so. */
PGresult *pg_q1p(sl_store_be *b, const char *what, const char *sql, int n, const char *const *v,
                 sl_err *err);
/* One statement on a connection of its own. */
PGresult *pg_q1(sl_store_be *b, const char *what, const char *sql, int n, const char *const *v,
                sl_err *err);
/* pg_q1 for operations that have no err: a failure is logged. */
PGresult *pg_q1_logged(sl_store_be *b, const char *what, const char *sql, int n,
                       const char *const *v);
/* The number of rows a statement changed; the result is cleared. */
int pg_changed(PGresult *r);
int pg_begin(pg_conn *x, sl_err *err);
/* Commits when rc is 0, else rolls back; gives the connection back.
 * Returns rc, or -1 when the commit failed. */
int pg_end_tx(pg_conn *x, int rc, sl_err *err);
bool pg_has_row(PGresult *r);
const char *pg_val(PGresult *r, int row, int col);   /* NULL for SQL NULL */
sl_value *pg_col_str(PGresult *r, int row, int col);
long long pg_col_ll(PGresult *r, int row, int col);
sl_value *pg_col_int(PGresult *r, int row, int col);
double pg_col_double(PGresult *r, int row, int col);
sl_value *pg_col_json(PGresult *r, int row, int col);
char *pg_json_or_null(const sl_value *v);

/* ---- knowledge (pg_kb.c) ---- */
/* Migration 16: what knowledge needs beyond the baseline's tables. */
extern const char pg_kb_migration[];
int pg_kb_add(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                     sl_err *err);
int pg_kb_set(sl_store_be *b, const char *id, const char *name, const sl_value *info,
                     sl_err *err);
sl_value *pg_kb_get(sl_store_be *b, const char *id_or_name);
sl_value *pg_kb_list(sl_store_be *b);
int pg_kb_delete(sl_store_be *b, const char *id, sl_err *err);
sl_value *pg_kb_docs(sl_store_be *b, const char *kb_id);
sl_value *pg_kb_doc(sl_store_be *b, const char *kb_id, const char *doc_id);
sl_value *pg_kb_doc_of_source(sl_store_be *b, const char *kb_id, const char *source,
                                     long long *next_position);
int pg_kb_doc_put(sl_store_be *b, const char *kb_id, const char *doc_id,
                         const sl_value *info, const sl_store_chunk *chunks, size_t n, int dims,
                         const sl_store_kw *kw, sl_err *err);
int pg_kb_doc_delete(sl_store_be *b, const char *kb_id, const char *doc_id, sl_err *err);
sl_value *pg_kb_chunks(sl_store_be *b, const char *kb_id, const char *doc_id,
                              float **vecs, int dims);
int pg_kb_vectors(sl_store_be *b, const char *kb_id, int dims, long long **ns,
                         long long **docs, float **vecs, size_t *count, sl_err *err);
int pg_kb_postings(sl_store_be *b, const char *kb_id, const char *const *terms, size_t n,
                          void (*fn)(size_t i, long long df, long long base, const void *data,
                                     size_t size, void *ud),
                          void *ud, long long *rows, long long *tokens, long long **skip,
                          size_t *nskip, sl_err *err);
sl_value *pg_kb_rows(sl_store_be *b, const char *kb_id, const long long *ns, size_t count,
                            float *vecs, int dims);
int pg_kb_indexed(sl_store_be *b, const char *kb_id, const char *doc_id,
                         void (*fn)(long long pos, const char *content, void *ud), void *ud,
                         sl_err *err);
int pg_kb_kw_put(sl_store_be *b, const char *kb_id, const char *doc_id,
                        const sl_store_kw *kw, sl_err *err);
int pg_kb_kw_done(sl_store_be *b, const char *kb_id, sl_err *err);

#endif
