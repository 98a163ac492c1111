/*
 * sse — an incremental parser for Server-Sent Events (text/event-stream),
 * as LLM APIs stream them.
 *
 * Bytes go in as they arrive from the socket, in pieces of any size; each
 * complete event (a blank line ends it) comes out through the callback
 * with its `event` name ("" when none was given) and its `data` lines
 * joined by "\n".  Comment lines (":") and `id`/`retry` fields are
 * skipped.  Lines may end in \n, \r\n or \r.  A line or an event larger
 * than the cap fails the stream instead of growing without bound.
 */
#ifndef SL_LLM_SSE_H
#define SL_LLM_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

/* Returns 0 to go on, non-zero to stop the stream (sl_sse_feed returns it). */
typedef int (*sl_sse_fn)(const char *event, const char *data, size_t len, void *ud);

typedef struct {
    sl_buf line;       /* the line being read */
    sl_buf data;       /* data lines of the current event */
    char event[64];
    bool has_data;
    bool cr;           /* last byte was \r: a following \n belongs to it */
    bool failed;
    size_t cap;
    sl_sse_fn fn;
    void *ud;
} sl_sse;

/* cap: the largest line and event (bytes); 0 means 4 MiB. */
void sl_sse_init(sl_sse *p, size_t cap, sl_sse_fn fn, void *ud);
void sl_sse_release(sl_sse *p);
/* 0 when fine; -1 when a line or an event passed the cap (and the
 * parser stays failed); else what the callback returned. */
int sl_sse_feed(sl_sse *p, const char *bytes, size_t n);
/* End of stream: dispatches an event that lacked its final blank line. */
int sl_sse_finish(sl_sse *p);

#endif
