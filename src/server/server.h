/*
 * server — `sluice serve`: Dify's Service API (/v1) and an admin API
 * (/admin) over HTTP, on libmicrohttpd, with the store (store/) keeping
 * apps, keys, runs, events, conversations and messages.
 *
 * Connections are served by libmicrohttpd's event loops (epoll, one per
 * core), which never wait: the key is checked on a request's headers, and
 * the request is then answered by a worker thread (workers.h) while its
 * connection is suspended; a blocking run executes on that worker.  A
 * streaming run executes on a worker of its own and every client reads
 * the run's event list at its own pace, suspended while there is nothing
 * new, so a slow client never holds up the run or anyone else, and a
 * client that goes away does not stop the run (POST .../stop does).
 * Connections are bounded in number, per client address and in silence.
 * docs/server.md lists the endpoints and the limits.
 */
#ifndef SL_SERVER_H
#define SL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "store/store.h"

typedef struct {
    const char *listen;      /* "127.0.0.1:5001" */
    int max_body_bytes;      /* request bodies (default 15 MB, as Dify) */
    int max_runs_per_app;    /* concurrent runs of one app (default 100) */
    double drain_s;          /* graceful shutdown: how long runs may finish (default 30) */
    double rate_limit;       /* run requests per second per app (0: no limit) */
    /* connections (docs/server.md, "Connections and limits") */
    unsigned max_connections;         /* open at once, all clients (default 10,000) */
    unsigned max_connections_per_ip;  /* open at once from one address (default 2,048) */
    unsigned header_timeout_s;        /* silence before a request's headers (default 10) */
    unsigned idle_timeout_s;          /* silence within a request (default 60) */
    size_t max_event_bytes;  /* one run's event log, and its SSE text (default 64 MB) */
    struct sl_limits limits; /* every run's limits (--limit, SLUICE_*; Dify's defaults) */
    /* the settings (sluice.yml) apps are checked against and run with;
     * borrowed: they must outlive sl_server_run.  NULL: nothing configured */
    const sl_config *config;
    bool no_console;         /* --no-console: `/` and the console's files are 404 */
    const char *console_dir; /* --console-dir: serve the console from this folder
                              * (read at each request), not the built-in files */
    /* runs as jobs, on a store shared by processes (docs/deploy.md): how
     * many runs this process executes at once.  -1 (the default): no cap,
     * every request runs here.  N >= 1: at most N; a request beyond them is
     * queued for any process with room.  0: none; every run is queued.  A
     * process with room claims queued runs (SKIP LOCKED).  A SQLite store
     * has one process: it takes -1 only. */
    int workers;
    bool worker_only;        /* sluice worker: no HTTP, it runs queued runs */
} sl_server_opts;

void sl_server_opts_init(sl_server_opts *o);
/* Serves until SIGINT/SIGTERM, then drains: running runs get drain_s
 * seconds, then (or at a second signal) they are stopped, which ends each
 * within a second.  Returns 0 on a clean stop. */
int sl_server_run(sl_store *store, const sl_server_opts *o, sl_err *err);

/* Checks a run request's body (inputs, response_mode, user, query) against
 * the app: 0 with the checked, converted inputs (new object), or -1 with
 * err (SL_EINVAL) holding the message for a 400 invalid_param.  Fuzzed by
 * fuzz_request. */
int sl_server_check_request(const sl_graph *g, const sl_value *body, bool chat,
                            sl_value **inputs, bool *streaming, sl_err *err);

#endif
