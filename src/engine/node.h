/*
 * node — the contract between the engine and one node type.
 *
 * A node type is an `sl_node_kind`.  The engine knows no node type by
 * name: whoever loads a graph hands it an `sl_node_kinds` table (sluice's
 * own is nodes/registry.h) and the engine looks each node's type up there.
 * At load time the engine calls `check` to validate the node's fields and
 * report every problem through sl_check_error() (file:line:col, node id and
 * title, field, what to do), then `prepare` to compile what every run would
 * otherwise redo (templates).  At run time the engine calls `run` on a worker
 * thread with an `sl_node_exec` that gives access to the variable pool,
 * limits and cancellation, and collects what the node produces.
 *
 * run() returns 0 on success or the value of sl_exec_fail() (-1).  Outputs
 * passed to sl_exec_output() are stolen.  Values read from the pool
 * (sl_exec_get) are new references the node must release.  A node never
 * writes to the pool directly except through sl_exec_assign (the assigner
 * and loop bodies): the engine publishes outputs after run() returns, so
 * retries and error strategies see a clean slate.
 */
#ifndef SL_NODE_H
#define SL_NODE_H

#include <stdbool.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/err.h"
#include "core/value.h"
#include "tmpl/jinja.h"

struct sl_gnode;
struct sl_graph;
typedef struct sl_node_exec sl_node_exec;
typedef struct sl_check sl_check;
typedef struct sl_limits sl_limits;

enum {
    SL_KIND_BRANCH = 1 << 0,     /* run() picks a source handle */
    SL_KIND_CONTAINER = 1 << 1,  /* has child nodes (iteration, loop) */
    SL_KIND_INNER_START = 1 << 2,/* iteration-start / loop-start */
    SL_KIND_ROOT_START = 1 << 3, /* the workflow's start node */
};

typedef struct sl_node_kind {
    const char *type;       /* data.type in the DSL */
    unsigned flags;
    int (*check)(sl_check *c, const struct sl_gnode *n);  /* may be NULL */
    int (*run)(sl_node_exec *x);
    /* The compile step (may be NULL).  Called at load right after check,
     * even when check reported problems (a load reports them all at once),
     * so it must not rely on check's findings.  It reports what does not
     * compile through sl_check_error() like check, and may set *state
     * (NULL before the call) to what it compiled: the graph owns it and
     * hands it to release() when the graph is released (release may be
     * NULL when state is never set).  Runs read it through
     * sl_exec_state(), from any number of threads at once: it is read-only
     * after prepare. */
    int (*prepare)(sl_check *c, const struct sl_gnode *n, void **state);
    void (*release)(void *state);
} sl_node_kind;

/* The node types a graph may use, passed to sl_graph_load_*(). */
typedef struct sl_node_kinds {
    /* The kind that runs data.type `type`; NULL when none does. */
    const sl_node_kind *(*find)(const char *type);
    /* Whether `type` is a node type Dify has that is not run here (may be
     * NULL): only changes the message a load gives for it. */
    bool (*known)(const char *type);
} sl_node_kinds;

/* ---- load-time checking ---- */

/* Reports an error on `field` of node n (field may be NULL, or a dotted
 * path for messages such as "cases[0].conditions[1].comparison_operator";
 * the mark is taken from `at`/`key` when given, else from the node). */
void sl_check_error(sl_check *c, const struct sl_gnode *n, const sl_value *at, const char *key,
                    const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void sl_check_warn(sl_check *c, const struct sl_gnode *n, const sl_value *at, const char *key,
                   const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A problem of this machine's configuration rather than of the file (a
 * provider not configured): an error, or a warning when the load's
 * configuration is lenient (sl_config_set_lenient). */
void sl_check_config(sl_check *c, const struct sl_gnode *n, const sl_value *at, const char *key,
                     const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Validates a value selector ([node_id, var, ...] of strings, reserved
 * first parts sys/env/conversation, node ids that exist).  Reports and
 * returns -1 when bad.  `required` false lets an empty/missing one pass. */
int sl_check_selector(sl_check *c, const struct sl_gnode *n, const sl_value *at, const char *key,
                      const char *field, bool required);
/* Like a required sl_check_selector, but a selector naming a node that is
 * not in the graph (one deleted in the editor) is a warning and reads as
 * empty at run time, as in Dify. */
int sl_check_selector_or_skip(sl_check *c, const struct sl_gnode *n, const sl_value *at,
                              const char *key, const char *field);
/* Validates the {{#…#}} references inside a text field. */
int sl_check_text_refs(sl_check *c, const struct sl_gnode *n, const sl_value *at,
                       const char *key, const char *field);
const struct sl_graph *sl_check_graph(sl_check *c);
/* The settings the graph is loaded against (engine/config.h; NULL:
 * nothing configured), e.g. whether a model's provider is configured. */
const struct sl_config *sl_check_config_get(sl_check *c);

/* ---- run time ---- */

const sl_value *sl_exec_data(sl_node_exec *x);          /* the node's data (borrowed) */
/* What the kind's prepare() made for this node (borrowed, read-only:
 * concurrent runs share it); NULL when it made nothing. */
const void *sl_exec_state(sl_node_exec *x);
const struct sl_gnode *sl_exec_node(sl_node_exec *x);
const struct sl_graph *sl_exec_graph(sl_node_exec *x);   /* e.g. declared variable types */
const sl_limits *sl_exec_limits(sl_node_exec *x);
/* The run's start inputs after checking and type conversion (borrowed). */
const sl_value *sl_exec_run_inputs(sl_node_exec *x);
/* "workflow" or "advanced-chat". */
const char *sl_exec_mode(sl_node_exec *x);

/* Value at a selector (array of strings): new reference, NULL if absent. */
sl_value *sl_exec_get(sl_node_exec *x, const sl_value *selector);
/* Renders text with {{#node.var#}} references into out (appends). */
int sl_exec_render(sl_node_exec *x, const char *text, sl_buf *out);

/* Records an input shown in node_started/node_finished events (steals). */
void sl_exec_input(sl_node_exec *x, const char *name, sl_value *v);
/* Sets an output (steals). */
void sl_exec_output(sl_node_exec *x, const char *name, sl_value *v);
/* Extra detail for node_finished.process_data (steals). */
void sl_exec_process(sl_node_exec *x, const char *name, sl_value *v);
/* Chooses the outgoing source handle (branching nodes). Copies the string. */
void sl_exec_handle(sl_node_exec *x, const char *handle);
/* Fails the node: error_type names the class (e.g. "HTTPRequestError"),
 * message says what and what to do.  Returns -1. */
int sl_exec_fail(sl_node_exec *x, const char *error_type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes a value to a variable that may be assigned: conversation.*
 * and the variables of an enclosing loop.  Steals v.  On failure it has
 * already failed the node (sl_exec_fail) and returns -1. */
int sl_exec_assign(sl_node_exec *x, const sl_value *selector, sl_value *v);

/* Whether an answer or end node shows this node's output `var` whole, so
 * the node should stream it as it is produced (an LLM's text). */
bool sl_exec_streams(sl_node_exec *x, const char *var);
/* A piece of this node's output `var` as it is produced.  The engine's
 * response coordinator (engine/stream.h) sends it as a text_chunk when
 * the answer showing it is streaming, keeps it until then, and drops it
 * when no answer shows `var`. */
void sl_exec_stream_chunk(sl_node_exec *x, const char *var, const char *text, size_t len);

bool sl_exec_cancelled(sl_node_exec *x);
/* A value the node uses that must never be shown (an Authorization header,
 * a password): masked in every error, event and result until the run
 * ends (core/secret.h). */
void sl_exec_secret(sl_node_exec *x, const char *s);
/* The run's sandbox, made on first use with the run's limits and network
 * policy; NULL with err when it cannot be made.  Borrowed: the run
 * destroys it when it ends. */
struct sl_sandbox *sl_exec_sandbox(sl_node_exec *x, sl_err *err);
/* Model usage of this node: adds to its execution_metadata and to the
 * run's total_tokens. */
void sl_exec_usage(sl_node_exec *x, long long tokens, double price, const char *currency);
/* The conversation's earlier turns, [{query, answer}] oldest first
 * (borrowed; NULL when there are none). */
const sl_value *sl_exec_history(sl_node_exec *x);
/* The run's record/replay tape for model calls (NULL: call live). */
struct sl_llm_tape *sl_exec_llm_tape(sl_node_exec *x);
/* Adds Dify's retriever_resources (an array, taken) to the run's, for the
 * answer's citations. */
void sl_exec_retriever_resources(sl_node_exec *x, sl_value *resources);
/* The run's knowledge bases (sl_run_opts.kb; NULL: none open). */
struct sl_kb *sl_exec_kb(sl_node_exec *x);
/* The run's settings (sl_run_opts.config; NULL: nothing configured). */
const struct sl_config *sl_exec_config(sl_node_exec *x);
/* Keeps bytes as a file of the run (an artifact) and returns its Dify file
 * value (transfer_method tool_file; related_id names it; filename,
 * extension, mime_type, type, size, sha256).  NULL with err on failure. */
sl_value *sl_exec_store_file(sl_node_exec *x, const char *name, const void *data, size_t len,
                             sl_err *err);
/* The bytes of a file value: its content_base64, or a file of this run's
 * store.  0 when appended to out, -1 with err (bad data, over cap bytes),
 * 1 when the value carries neither (the caller may fetch its URL). */
int sl_exec_file_bytes(sl_node_exec *x, const sl_value *f, size_t cap, sl_buf *out,
                       sl_err *err);
/* Seconds since this node started. */
double sl_exec_elapsed(sl_node_exec *x);
/* Seconds left in the run's time budget (never negative). */
double sl_exec_time_left(sl_node_exec *x);
/* 0 while the node may go on; -1 with err once the run is stopped
 * (SL_ECANCELED) or its time budget is spent (SL_ETIMEOUT, naming
 * max_time_s and how to raise it).  For work that polls (template renders). */
int sl_exec_interrupted(sl_node_exec *x, sl_err *err);
/* The bounds of a template the node renders: the run's max_string_bytes
 * for its output, template_max_bytes for its work, and the run's stop
 * and deadline (sl_exec_interrupted) as its interrupt. */
void sl_exec_jinja_limits(sl_node_exec *x, sl_jinja_limits *lim);

/* ---- containers (iteration, loop) ---- */

/* Runs the container's child graph once, in a fresh pool layer whose
 * `scope_vars` object (steals; may be NULL) is published under the
 * container's own node id (e.g. {"item":…, "index":…}).  After the round,
 * `collect` (a selector, may be NULL) is read from the layer into *result
 * (new reference or NULL).  For loops, *broke is set when a loop-end node
 * ran.  Returns 0, or -1 with `err` set when a child node failed (SL_ENODE,
 * its message and error_type) or containers nest past max_depth (SL_ELIMIT);
 * the caller releases err. */
typedef struct {
    sl_value *scope_vars;
    const sl_value *collect;
    sl_value *result;
    sl_value *scope_after;  /* the layer's scope vars after the round (new ref) */
    bool broke;
    sl_err err;
    long long index;        /* which round: the child nodes' events say it */
} sl_round;
int sl_exec_round(sl_node_exec *x, sl_round *r);

/* Emits a container event (iteration_next, loop_next, ...) with data (steals). */
void sl_exec_event(sl_node_exec *x, const char *event, sl_value *data);

#endif
