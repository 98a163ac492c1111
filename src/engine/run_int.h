/*
 * run_int — what the parts of a run share (engine/run.h is the public API).
 *
 *   run.c    a run's life: options, sl_run_new/exec/free, events, secrets
 *   sched.c  the scheduler: edge states, the ready queue, workers, one
 *            node's execution with retries and error strategies, and
 *            container rounds (sl_exec_round)
 *   exec.c   the node-facing execution API of engine/node.h (sl_exec_*)
 *   files.c  the run's file table (sl_run_file_open, sl_exec_store_file,
 *            sl_exec_file_bytes)
 *
 * A run owns its pool, outputs, error, secrets and sandbox; a sched lives
 * on the stack of whoever runs one graph (the run, or a container's round)
 * and an sl_node_exec on the stack of the worker running one node.
 *
 * Names: what these files share is sl_rx_*; everything else is static to
 * its file.
 */
#ifndef SL_RUN_INT_H
#define SL_RUN_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "engine/run.h"
#include "engine/stream.h"
#include "sandbox/policy.h"

typedef enum { E_UNKNOWN = 0, E_TAKEN, E_SKIPPED } estate;
typedef enum { NS_PENDING = 0, NS_RUNNING, NS_SUCCEEDED, NS_FAILED, NS_EXCEPTION, NS_SKIPPED } nstatus;

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
    sl_errcode error_code;    /* with error: what kind of failure (sl_run_exec's err) */
    char *error_type;         /* Dify's error_type, or NULL */
    const char *error_setting;/* the limit to raise (static), or NULL */
    sl_value *outputs;
    sl_value *conversation;
    int steps;
    char **secrets;
    int nsecrets;
    sl_buf answer;            /* the text answers and end nodes streamed (ev_lock) */
    const sl_stream_plan *plan; /* the graph's, or NULL when nobody sees what answers show */
    unsigned long long rng;   /* the ids' generator, seeded by the kernel */
    sl_err no_rand;           /* set: the kernel gave no seed; the run refuses */
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
    sl_value *resources;      /* Dify's retriever_resources, LLM nodes' (ev_lock) */
};

typedef struct sched sched;
struct sched {
    sl_run *run;
    int scope;                /* container node index, or -1 for the root graph */
    long long round;          /* the container's round this graph runs (-1: root) */
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
    sl_errcode fail_code;     /* SL_ENODE, or what stopped the graph */
    const char *fail_setting; /* the limit that did (static), or NULL */
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

/* Unix seconds, for events' created_at and finished_at. */
static inline long long sl_rx_wall(void)
{
    return (long long)time(NULL);
}

/* ---- run.c ---- */

/* A new UUID (v4 layout) for an id of this run's (node executions). */
void sl_rx_uuid(sl_run *r, char out[40]);
/* Sends an event to the caller, secrets masked.  Steals data. */
void sl_rx_emit(sl_run *r, const char *event, sl_value *data);

/* ---- sched.c ---- */

/* A scheduler for the graph under `scope` (a container's index, or -1 for
 * the whole workflow) at nesting `depth`, writing to `pool`, with up to
 * `threads` threads (the caller's included). */
void sl_rx_sched_init(sched *s, sl_run *r, int scope, int depth, sl_pool *pool, int threads);
/* Runs the graph from node `start` until nothing is left to run. */
void sl_rx_sched_run(sched *s, int start);
void sl_rx_sched_release(sched *s);

/* ---- files.c ---- */

/* Removes the run's private files folder, if it made one. */
void sl_rx_files_cleanup(sl_run *r);

#endif
