/*
 * workers — see workers.h.
 */
#include "server/workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "core/err.h"

/* How long a thread waits for work before it exits. */
#define IDLE_EXIT_S 2

typedef struct task {
    sl_work_fn *fn;
    void *arg;
    struct task *next;
} task;

struct sl_workers {
    pthread_mutex_t mu;
    pthread_cond_t work;      /* a task was queued, or stopping */
    pthread_cond_t gone;      /* a thread exited */
    task *head, *tail;
    int queued;               /* tasks in the queue */
    int threads, idle, max;
    size_t stack;
    bool stopping;
};

static void *worker_main(void *arg)
{
    sl_workers *w = arg;
    pthread_setname_np(pthread_self(), "sluice-worker");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stopping) {
            struct timespec until = sl_clock_wall_in(IDLE_EXIT_S);
            w->idle++;
            int rc = pthread_cond_timedwait(&w->work, &w->mu, &until);
            w->idle--;
            if (rc == ETIMEDOUT && !w->head)
                goto out;
        }
        if (!w->head)
            break; /* stopping, and nothing left to do */
        task *t = w->head;
        w->head = t->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
        pthread_mutex_unlock(&w->mu);
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&w->mu);
    }
out:
    w->threads--;
    pthread_cond_broadcast(&w->gone);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

sl_workers *sl_workers_new(int max, size_t stack_bytes)
{
    sl_workers *w = sl_xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->gone, NULL);
    w->max = max > 0 ? max : 1;
    w->stack = stack_bytes;
    return w;
}

/* Called with w->mu held. */
static bool spawn(sl_workers *w)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (w->stack)
        pthread_attr_setstacksize(&at, w->stack);
    pthread_t t;
    bool ok = pthread_create(&t, &at, worker_main, w) == 0;
    pthread_attr_destroy(&at);
    if (ok)
        w->threads++;
    return ok;
}

void sl_workers_submit(sl_workers *w, sl_work_fn *fn, void *arg)
{
    task *t = sl_xcalloc(1, sizeof *t);
    t->fn = fn;
    t->arg = arg;
    pthread_mutex_lock(&w->mu);
    /* one thread for each task no idle thread will take */
    if (w->queued + 1 > w->idle && w->threads < w->max && !spawn(w) && w->threads == 0) {
        /* no thread at all and none can be made (out of memory or of
         * processes): run it here rather than never */
        pthread_mutex_unlock(&w->mu);
        fn(arg);
        free(t);
        return;
    }
    if (w->tail)
        w->tail->next = t;
    else
        w->head = t;
    w->tail = t;
    w->queued++;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
}

int sl_workers_threads(sl_workers *w)
{
    pthread_mutex_lock(&w->mu);
    int n = w->threads;
    pthread_mutex_unlock(&w->mu);
    return n;
}

void sl_workers_free(sl_workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->work);
    while (w->threads > 0)
        pthread_cond_wait(&w->gone, &w->mu);
    pthread_mutex_unlock(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->gone);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
