/*
 * stream — the response coordinator: the text that answer and end nodes
 * show, streamed in the order Dify's engine streams it (graphon's response
 * stream filter).
 *
 * Each response node has a template: an answer node's text split into plain
 * runs and {{#…#}} references; an end node's outputs as references joined
 * by "\n".  Its session starts once its path is decided: some path from the
 * graph's start to it has every blocking edge taken, a blocking edge being
 * one out of a branching node (if-else, question-classifier, a node with a
 * fail branch), a container (iteration, loop), another answer or end node,
 * or an assigner that writes a variable the template shows.  One session
 * streams at a time; the others wait in the order they started, those
 * started by the same edge in node id order (graphon sorts them so).  The
 * active session sends its plain runs at once and each reference as soon as
 * it can: the pieces its node streams (an LLM's text, kept until then), else
 * the value once it is in the pool; a reference to a skipped node shows
 * nothing.  So no text comes from a branch that is not taken, a later
 * answer's text never comes before an earlier one's, and plain text keeps
 * its place around streamed values.
 *
 * A plan is the graph's part, made once when the graph loads (graph.h's
 * stream_plan) and shared by its runs.  A coordinator serves one
 * graph engine: the run's, or one round of an iteration or loop (whose
 * answers stream as their round reaches them, as Dify's child engines do).
 * A coordinator is not thread-safe: its caller serialises every call (the
 * scheduler's lock), and text goes out through io.emit during the call.
 */
#ifndef SL_STREAM_H
#define SL_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/graph.h"

typedef struct sl_stream_plan sl_stream_plan;
typedef struct sl_stream sl_stream;

typedef struct {
    /* One piece of text from the variable at sel[0..n); plain text comes
     * from the response node's [id, "answer"]. */
    void (*emit)(void *ud, const char *const *sel, int n, const char *text, size_t len);
    /* The value at a selector: a new reference, or NULL while it is absent. */
    sl_value *(*get)(void *ud, const char *const *sel, int n);
    /* Whether a node (by index) was skipped. */
    bool (*skipped)(void *ud, int node);
    void *ud;
} sl_stream_io;

/* The plan of a loaded graph, or NULL when it has no answer or end node.
 * It borrows the graph's nodes, edges and data, which must outlive it. */
sl_stream_plan *sl_stream_plan_new(const sl_graph *g);
void sl_stream_plan_free(sl_stream_plan *p);

/* The coordinator of the graph inside `scope` (a container's node index,
 * or -1 for the root graph) whose engine starts at node `root`; NULL when
 * that graph has no answer or end node.  io is copied. */
sl_stream *sl_stream_new(const sl_stream_plan *p, int scope, int root, const sl_stream_io *io);
void sl_stream_free(sl_stream *st);

/* Whether some response node shows node.var whole, so that node should
 * stream it as it is produced. */
bool sl_stream_wants(const sl_stream *st, int node, const char *var);
/* Starts the sessions whose path is decided before any node ran. */
void sl_stream_begin(sl_stream *st);
/* A piece of node.var as it is produced. */
void sl_stream_chunk(sl_stream *st, int node, const char *var, const char *text, size_t len);
/* A node finished (succeeded, or ended in an exception its error strategy
 * handled) and its outputs are in the pool: its streams are complete. */
void sl_stream_done(sl_stream *st, int node);
/* An edge was taken (after its source's sl_stream_done). */
void sl_stream_taken(sl_stream *st, int edge);
/* The graph ran to its end: what the started sessions still hold goes
 * out.  A reference whose variable never came shows as the answer node's
 * own text does ("node.var"); an end node output shows nothing. */
void sl_stream_finish(sl_stream *st);

#endif
