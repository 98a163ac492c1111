/*
 * run — one execution of a workflow graph.
 *
 * The scheduler follows graphon's semantics (docs/engine.md): each edge is
 * unknown, taken or skipped; a node runs once no incoming edge is unknown
 * and at least one is taken; a node whose incoming edges are all skipped is
 * skipped and the skip spreads.  Branching nodes choose a source handle.
 * Ready nodes run on a pool of worker threads; a worker that finishes a
 * node keeps one of the nodes it made ready, so chains never hop threads.
 *
 * Events go to the caller's callback as (name, data) pairs with Dify's
 * event names and fields; the callback may be called from several threads
 * but never concurrently (the run serialises them).  Data is borrowed for
 * the duration of the call.  Secrets (env vars of type secret) are masked
 * in every event.
 */
#ifndef SL_RUN_H
#define SL_RUN_H

#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/pool.h"
#include "sandbox/sandbox.h"

typedef void (*sl_event_fn)(const char *event, const sl_value *data, void *ud);

typedef struct {
    struct sl_limits limits;
    /* The settings (sluice.yml) the run uses: model endpoints and prices,
     * the sandbox policy apps start from.  Borrowed: it must outlive the
     * run.  NULL: nothing configured. */
    const sl_config *config;
    sl_value *inputs;        /* start inputs (borrowed), object */
    const char *query;       /* sys.query for advanced-chat */
    const char *user_id;     /* sys.user_id */
    const char *run_id;      /* the run's id (NULL: a new UUID) */
    const char *workflow_id; /* sys.workflow_id and the events' workflow_id */
    const char *conversation_id;
    sl_value *conversation;  /* conversation variable values (borrowed, may be NULL) */
    sl_value *env_override;  /* env var values overriding the DSL's (borrowed) */
    /* the sandbox for code and command nodes */
    const char *sandbox_provider;  /* NULL: local */
    sl_net_mode net;               /* with net_given: overrides the app's policy */
    const char *net_allow;         /* SL_NET_ALLOW: host list */
    bool net_given;                /* false: the app's / sluice.yml's policy (none) */
    struct sl_llm_tape *llm_tape;  /* record/replay of model calls; may be NULL */
    /* The knowledge bases knowledge-retrieval nodes search (knowledge/kb.h);
     * borrowed, it must outlive the run.  NULL: none (a node bound only to
     * external services still runs). */
    struct sl_kb *kb;
    const sl_value *history;       /* earlier turns [{query, answer}] (borrowed, may be NULL) */
    /* Files.  A file value is data, never a capability: it reaches bytes
     * only through an id sluice issued (its related_id), looked up in the
     * run's table: files its nodes made, the caller's `files`, then the
     * caller's `file_open`.  A url, path or id inside a value is never
     * opened; a remote_url is fetched only through the SSRF guard. */
    const sl_value *files;         /* {id: host path} of files the caller placed (the CLI's
                                      --input @FILE), borrowed; may be NULL */
    /* Keeps the bytes of a file a node made under the new id `id` in the
     * caller's store (the server's blobs); -1 with err when it cannot.
     * NULL: they go to a private folder removed with the run. */
    int (*file_put)(const char *id, const void *data, size_t len, void *ud, sl_err *err);
    /* A read-only descriptor on a file the caller's store holds with this
     * id and this run may read (files put by file_put, uploads of this app
     * and user, files earlier runs of the conversation made); -1 with
     * SL_ENOTFOUND when none, another code when it cannot be read.  May be
     * NULL. */
    int (*file_open)(const char *id, void *ud, sl_err *err);
    const char *files_url;         /* format with one %s (the file id) for the url of file
                                      values nodes make ("/v1/files/%s/preview"); NULL: none */
    /* Called for each file a node stores (artifacts), e.g. to index it. */
    void (*on_file)(const sl_value *file, void *ud);
    void *file_ud;                 /* for file_put, file_open and on_file */
    sl_event_fn on_event;    /* may be NULL */
    void *event_ud;
} sl_run_opts;

typedef enum {
    SL_RUN_RUNNING,
    SL_RUN_SUCCEEDED,
    SL_RUN_FAILED,
    SL_RUN_STOPPED,
    SL_RUN_PARTIAL,          /* partial-succeeded: some node ended in exception */
} sl_run_status;

typedef struct sl_run sl_run;

void sl_run_opts_init(sl_run_opts *o);

/* Checks inputs against the start node's variables (required, type,
 * max_length, options) before anything runs and converts them to their
 * declared types (text "5" for a number input becomes 5).  *out is a new
 * object on success; every problem goes to diag and -1 is returned. */
int sl_run_prepare_inputs(const sl_graph *g, const sl_value *given, sl_value **out,
                          sl_diag *diag);

sl_run *sl_run_new(const sl_graph *g, const sl_run_opts *opts);
/* Runs to completion on the calling thread plus workers.  Returns 0 when
 * the run succeeded (or partially: some node ended in exception); -1 with
 * err when it failed or was stopped.  err's message is sl_run_error()'s,
 * its code says what kind (SL_ENODE a node failed, SL_ECANCELED stopped,
 * SL_ETIMEOUT max_time_s, SL_ELIMIT max_steps), its type is Dify's
 * error_type and its setting the limit to raise.  Either way the run has
 * ended: status, outputs and events are complete. */
int sl_run_exec(sl_run *r, sl_err *err);
/* Thread-safe; the run ends with status stopped. */
void sl_run_cancel(sl_run *r);
void sl_run_free(sl_run *r);

sl_run_status sl_run_status_of(const sl_run *r);
const char *sl_run_status_name(sl_run_status s);
const sl_value *sl_run_outputs(const sl_run *r);   /* borrowed object */
const char *sl_run_error(const sl_run *r);         /* NULL when none */
int sl_run_steps(const sl_run *r);
double sl_run_elapsed(const sl_run *r);
const char *sl_run_id(const sl_run *r);
/* Model tokens the run's nodes have used so far: the total once it has
 * ended, a running count while it runs (thread-safe). */
long long sl_run_tokens(const sl_run *r);
long long sl_run_created_at(const sl_run *r);   /* Unix seconds */
long long sl_run_finished_at(const sl_run *r);  /* Unix seconds; 0 while running */
/* A copy of v with every secret sluice knows masked (core/secret.h), for
 * anything shown to people (new reference).  The run's events, error and
 * outputs are masked already. */
sl_value *sl_run_mask(sl_run *r, const sl_value *v);
/* Registers a secret for as long as the run lives (core/secret.h). */
void sl_run_secret(sl_run *r, const char *s);
/* Opens the file a file value names, read-only, through the run's table
 * (see sl_run_opts.files): an fd, or -1 with err when the value names no
 * file this run holds (a forged or foreign id, a url, a path). */
int sl_run_file_open(sl_run *r, const sl_value *file, sl_err *err);
/* Conversation variables after the run (borrowed object). */
const sl_value *sl_run_conversation(const sl_run *r);
/* Dify's retriever_resources: the knowledge chunks LLM nodes were given as
 * context, for the answer's citations (borrowed array; empty when none).
 * Read once the run has ended. */
const sl_value *sl_run_retriever_resources(const sl_run *r);

#endif
