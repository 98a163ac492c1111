/*
 * workers — the threads that do the server's slow work, so that
 * libmicrohttpd's event loop never waits: answering a /v1 or /admin
 * request (store reads and writes, a blocking run) and running a
 * streaming run to its end.
 *
 * A pool grows on demand, one thread per task waiting, up to `max`
 * threads; beyond that tasks wait their turn, in order.  A thread that has
 * had nothing to do for a while exits, so an idle server holds none (and
 * their memory goes back).  sl_workers_free waits for every task queued or
 * running to finish.  Nothing here fails: a thread that cannot be made is
 * made later, and while there is none at all the task runs on the
 * submitting thread.
 */
#ifndef SL_SERVER_WORKERS_H
#define SL_SERVER_WORKERS_H

#include <stddef.h>

typedef struct sl_workers sl_workers;
typedef void sl_work_fn(void *arg);

/* At most `max` threads, each with a stack of `stack_bytes`. */
sl_workers *sl_workers_new(int max, size_t stack_bytes);
void sl_workers_submit(sl_workers *w, sl_work_fn *fn, void *arg);
/* Threads alive now (for tests and the bench's idle check). */
int sl_workers_threads(sl_workers *w);
/* Waits for every task, then for every thread to end, and frees. */
void sl_workers_free(sl_workers *w);

#endif
