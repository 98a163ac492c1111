/*
 * server — `sluice serve`: Dify's Service API (/v1) and an admin API
 * (/admin) over HTTP, on libmicrohttpd, with the store (store/) keeping
 * apps, keys, runs, events, conversations and messages.
 *
 * Each connection has its own thread (libmicrohttpd's thread-per-
 * connection mode, small stacks): a blocking run executes on it; a
 * streaming run executes on a thread of its own and every client reads
 * the run's event list at its own pace, so a slow client never holds up
 * the run or anyone else, and a client that goes away does not stop the
 * run (POST .../stop does).  docs/server.md lists the endpoints.
 */
#ifndef SL_SERVER_H
#define SL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/err.h"
#include "../engine/graph.h"
#include "../store/store.h"

typedef struct {
    const char *listen;      /* "127.0.0.1:5001" */
    int max_body_bytes;      /* request bodies (default 15 MB, as Dify) */
    int max_runs_per_app;    /* concurrent runs of one app (default 100) */
    double drain_s;          /* graceful shutdown: how long runs may finish (default 30) */
    double rate_limit;       /* run requests per second per app (0: no limit) */
} sl_server_opts;

void sl_server_opts_init(sl_server_opts *o);
/* Serves until SIGINT/SIGTERM, then drains: running runs get drain_s
 * seconds, then (or at a second signal) they are stopped, which ends each
 * within a second.  Returns 0 on a clean stop. */
int sl_server_run(sl_store *store, const sl_server_opts *o, sl_err *err);

/* Checks a run request's body (inputs, response_mode, user, query) against
 * the app: 0 with the checked, converted inputs (new object), or -1 with
 * the message for a 400 invalid_param in why.  Fuzzed by fuzz_request. */
int sl_server_check_request(const sl_graph *g, const sl_value *body, bool chat,
                            sl_value **inputs, bool *streaming, char *why, size_t n);

#endif
