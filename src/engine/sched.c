/* The scheduler (docs/engine.md): edge states, the ready queue, workers,
 * one node's execution with retries and error strategies, container rounds. */
#include "engine/run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const nstatus_name[] = {"pending", "running", "succeeded", "failed",
                                           "exception", "skipped"};

void *sl__worker_main(void *arg);

/* ---- scheduling ---- */

/* The response coordinator's view of a graph engine (called with s->mu
 * held): text goes out as text_chunk events and makes the chat answer,
 * also what answers inside iterations and loops stream, as in Dify. */
static void stream_emit(void *ud, const char *const *sel, int n, const char *text, size_t len)
{
    sched *s = ud;
    sl_run *r = s->run;
    pthread_mutex_lock(&r->ev_lock);
    sl_buf_add(&r->answer, text, len);
    pthread_mutex_unlock(&r->ev_lock);
    if (!r->opts.on_event)
        return;
    sl_value *from = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(from, json_string(sel[i]));
    sl_value *d = json_object();
    json_object_set_new(d, "text", json_stringn(text, len));
    json_object_set_new(d, "from_variable_selector", from);
    sl_rx_emit(r, "text_chunk", d);
}

static sl_value *stream_get(void *ud, const char *const *sel, int n)
{
    return sl_pool_get(((sched *)ud)->pool, sel, n);
}

static bool stream_skipped(void *ud, int node)
{
    return ((sched *)ud)->status[node] == NS_SKIPPED;
}

void sl_rx_sched_init(sched *s, sl_run *r, int scope, int depth, sl_pool *pool, int threads)
{
    const sl_graph *g = r->g;
    memset(s, 0, sizeof *s);
    s->run = r;
    s->scope = scope;
    s->round = -1;
    s->depth = depth;
    s->pool = pool;
    s->edge = sl_xcalloc((size_t)g->nedges + 1, 1);
    s->unknown_in = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *s->unknown_in);
    s->taken_in = sl_xcalloc((size_t)g->nnodes + 1, 1);
    s->status = sl_xcalloc((size_t)g->nnodes + 1, 1);
    for (int i = 0; i < g->nnodes; i++)
        s->unknown_in[i] = g->nodes[i].nin;
    s->qcap = 64;
    s->queue = sl_xmalloc((size_t)s->qcap * sizeof *s->queue);
    s->max_threads = threads > 1 ? threads - 1 : 0;
    s->tids = s->max_threads ? sl_xcalloc((size_t)s->max_threads, sizeof *s->tids) : NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    sl_stream_io io = {stream_emit, stream_get, stream_skipped, s};
    s->stream = sl_stream_new(r->plan, scope, scope < 0 ? g->start : g->nodes[scope].inner_start,
                              &io);
}

void sl_rx_sched_release(sched *s)
{
    free(s->edge);
    free(s->unknown_in);
    free(s->taken_in);
    free(s->status);
    free(s->queue);
    free(s->tids);
    free(s->fail_msg);
    free(s->fail_type);
    sl_stream_free(s->stream);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

static void push(sched *s, int node)
{
    int len = s->qt - s->qh;
    if (s->qt == s->qcap) {
        if (s->qh > 0) {
            memmove(s->queue, s->queue + s->qh, (size_t)len * sizeof *s->queue);
            s->qh = 0;
            s->qt = len;
        }
        if (s->qt == s->qcap) {
            s->qcap *= 2;
            s->queue = sl_xrealloc(s->queue, (size_t)s->qcap * sizeof *s->queue);
        }
    }
    s->queue[s->qt++] = node;
}

/* Marks a node skipped and spreads the skip to everything that now has
 * only skipped inputs.  Iterative, so long skipped chains cannot overflow
 * the stack.  Called with s->mu held. */
static void skip_from(sched *s, int node, int *stack)
{
    const sl_graph *g = s->run->g;
    int sp = 0;
    stack[sp++] = node;
    while (sp) {
        int v = stack[--sp];
        s->status[v] = NS_SKIPPED;
        const sl_gnode *n = &g->nodes[v];
        for (int k = 0; k < n->nout; k++) {
            int e = n->out[k];
            s->edge[e] = E_SKIPPED;
            int d = g->edges[e].dst;
            if (--s->unknown_in[d] == 0) {
                if (s->taken_in[d])
                    push(s, d);
                else
                    stack[sp++] = d;
            }
        }
    }
}

static bool handle_matches(const char *edge_handle, const char *chosen, bool fail_branch_node)
{
    if (strcmp(edge_handle, chosen) == 0)
        return true;
    /* Nodes with a fail branch label their normal path "success-branch" in
     * some exports and "source" in others. */
    if (fail_branch_node && strcmp(chosen, "source") == 0 &&
        strcmp(edge_handle, "success-branch") == 0)
        return true;
    return false;
}

/* Called with s->mu held after node v finished with `handle` chosen. */
static int complete(sched *s, int v, const char *handle, bool fail_branch_node)
{
    const sl_graph *g = s->run->g;
    const sl_gnode *n = &g->nodes[v];
    int before = s->qt - s->qh;
    int *stack = NULL;
    for (int k = 0; k < n->nout; k++) {
        int e = n->out[k];
        bool take = handle_matches(g->edges[e].handle, handle, fail_branch_node);
        s->edge[e] = take ? E_TAKEN : E_SKIPPED;
        int d = g->edges[e].dst;
        if (take)
            s->taken_in[d] = 1;
        if (--s->unknown_in[d] == 0) {
            if (s->taken_in[d]) {
                push(s, d);
            } else {
                if (!stack)
                    stack = sl_xmalloc(((size_t)g->nnodes + 1) * sizeof *stack);
                skip_from(s, d, stack);
            }
        }
    }
    free(stack);
    return s->qt - s->qh - before;
}

/* Stops the graph for the first reason given: `code` says what kind
 * (SL_ENODE a node failed), `setting` the limit hit (or NULL). */
static void fail_sched(sched *s, sl_errcode code, const char *setting, const char *type,
                       const char *msg)
{
    if (!s->abort) {
        s->abort = true;
        free(s->fail_msg);
        free(s->fail_type);
        s->fail_msg = sl_xstrdup(msg);
        s->fail_type = sl_xstrdup(type);
        s->fail_code = code;
        s->fail_setting = setting;
    }
}

static sl_value *default_values(const sl_gnode *n)
{
    sl_value *o = json_object();
    const sl_value *dv = json_object_get(n->data, "default_value");
    for (size_t i = 0; i < json_array_size(dv); i++) {
        const sl_value *e = json_array_get(dv, i);
        const char *k = json_string_value(json_object_get(e, "key"));
        const sl_value *val = json_object_get(e, "value");
        const char *t = json_string_value(json_object_get(e, "type"));
        if (!k)
            continue;
        /* Dify stores number/object defaults as typed values but some
         * exports carry them as text; convert by the declared type. */
        if (t && json_is_string(val) && strcmp(t, "number") == 0) {
            sl_value *num = sl_value_number_from_text(json_string_value(val));
            json_object_set_new(o, k, num ? num : json_incref((sl_value *)val));
        } else if (t && json_is_string(val) && (strncmp(t, "object", 6) == 0 ||
                                               strncmp(t, "array", 5) == 0)) {
            json_error_t je;
            sl_value *pv = json_loads(json_string_value(val), JSON_DECODE_ANY, &je);
            json_object_set_new(o, k, pv ? pv : json_incref((sl_value *)val));
        } else {
            json_object_set(o, k, val ? (sl_value *)val : json_null());
        }
    }
    return o;
}

/* Sleeps secs, or less: a stop or the run's deadline ends it. */
static void sleep_interruptible(sl_run *r, double secs)
{
    double end = sl_clock_s() + secs, deadline = r->t0 + r->L.max_time_s;
    if (end > deadline)
        end = deadline;
    while (!atomic_load(&r->cancel)) {
        double left = end - sl_clock_s();
        if (left <= 0)
            break;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void check_output_sizes(sl_node_exec *x)
{
    size_t cap = x->s->run->L.max_output_bytes;
    const char *k;
    sl_value *v;
    if (!cap || !x->outputs)
        return;
    json_object_foreach(x->outputs, k, v) {
        size_t sz = sl_value_size(v, cap);
        if (sz > cap) {
            sl_exec_fail(x, "OutputSizeExceeded",
                         "output '%s' is larger than max_output_bytes (%zu bytes); raise it "
                         "with --limit max_output_bytes=N or make the output smaller",
                         k, cap);
            return;
        }
    }
}

static sl_value *node_event_base(sl_node_exec *x, int index, const char *pred)
{
    sl_value *d = json_object();
    json_object_set_new(d, "id", json_string(x->exec_id));
    json_object_set_new(d, "node_id", json_string(x->n->id));
    json_object_set_new(d, "node_type", json_string(x->n->type));
    json_object_set_new(d, "title", json_string(x->n->title));
    json_object_set_new(d, "index", json_integer(index));
    json_object_set_new(d, "predecessor_node_id", pred ? json_string(pred) : json_null());
    if (x->n->parent >= 0) {
        const sl_gnode *p = &x->s->run->g->nodes[x->n->parent];
        bool loop = strcmp(p->type, "loop") == 0;
        json_object_set_new(d, loop ? "loop_id" : "iteration_id", json_string(p->id));
        if (x->s->round >= 0)
            json_object_set_new(d, loop ? "loop_index" : "iteration_index",
                                json_integer(x->s->round));
    }
    /* sluice's own: when the node started, in seconds from the run's
     * start (Dify's created_at is whole seconds), for timelines */
    json_object_set_new(d, "start_offset", json_real(x->t_start - x->s->run->t0));
    return d;
}

static const char *predecessor(sched *s, const sl_gnode *n)
{
    const sl_graph *g = s->run->g;
    for (int k = 0; k < n->nin; k++)
        if (s->edge[n->in[k]] == E_TAKEN)
            return g->nodes[g->edges[n->in[k]].src].id;
    return NULL;
}

/* Runs one node with retries and its error strategy, then (under the lock)
 * releases its successors. */
static void exec_node(sched *s, int v)
{
    sl_run *r = s->run;
    const sl_gnode *n = &r->g->nodes[v];
    sl_node_exec x = {.s = s, .n = n};
    bool ev = r->opts.on_event != NULL;
    bool fail_branch = n->on_error == SL_ON_ERROR_BRANCH;
    bool default_value = n->on_error == SL_ON_ERROR_DEFAULT;
    int index = atomic_fetch_add(&r->event_index, 1) + 1;
    double t_start = sl_clock_s();
    x.t_start = t_start;
    long long created = sl_rx_wall();
    const char *pred = NULL;
    if (ev) {
        sl_rx_uuid(r, x.exec_id);
        pthread_mutex_lock(&s->mu);
        pred = predecessor(s, n);
        pthread_mutex_unlock(&s->mu);
        sl_value *d = node_event_base(&x, index, pred);
        json_object_set_new(d, "inputs", json_null());
        json_object_set_new(d, "created_at", json_integer(created));
        sl_rx_emit(r, "node_started", d);
    }

    int max_retries = n->max_retries, interval_ms = n->retry_interval_ms;
    int ok = -1;
    for (int attempt = 0;; attempt++) {
        if (atomic_load(&r->cancel)) {
            sl_exec_fail(&x, "Stopped", "the run was stopped");
            break;
        }
        ok = n->kind->run(&x);
        if (ok == 0) {
            check_output_sizes(&x);
            ok = x.err_msg ? -1 : 0;
        }
        if (ok == 0 || attempt >= max_retries || atomic_load(&r->cancel) ||
            sl_exec_time_left(&x) <= 0)
            break;
        if (ev) {
            sl_value *d = node_event_base(&x, index, pred);
            json_object_set_new(d, "error", json_string(x.err_msg ? x.err_msg : ""));
            json_object_set_new(d, "retry_index", json_integer(attempt + 1));
            json_object_set_new(d, "inputs", x.inputs ? json_incref(x.inputs) : json_null());
            json_object_set_new(d, "created_at", json_integer(created));
            sl_rx_emit(r, "node_retry", d);
        }
        json_decref(x.outputs);
        json_decref(x.inputs);
        json_decref(x.process);
        x.outputs = x.inputs = x.process = NULL;
        free(x.handle);
        free(x.err_msg);
        free(x.err_type);
        x.handle = x.err_msg = x.err_type = NULL;
        sleep_interruptible(r, interval_ms / 1000.0);
        if (sl_exec_time_left(&x) <= 0) {
            sl_exec_fail(&x, "WorkflowTimeout", "the run took longer than max_time_s (%g s) "
                         "before retry %d; raise it with --limit max_time_s=N",
                         r->L.max_time_s, attempt + 1);
            break;
        }
    }

    nstatus st;
    const char *handle = x.handle ? x.handle : "source";
    bool stopped = atomic_load(&r->cancel) != 0;
    if (ok == 0) {
        st = NS_SUCCEEDED;
    } else if (!stopped && (fail_branch || default_value)) {
        st = NS_EXCEPTION;
        atomic_fetch_add(&r->exceptions, 1);
        sl_value *outs = default_value ? default_values(n) : json_object();
        json_object_set_new(outs, "error_message", json_string(x.err_msg ? x.err_msg : ""));
        json_object_set_new(outs, "error_type", json_string(x.err_type ? x.err_type : ""));
        json_decref(x.outputs);
        x.outputs = outs;
        handle = fail_branch ? "fail-branch" : "source";
    } else {
        st = NS_FAILED;
    }
    if (st != NS_FAILED) {
        if (!x.outputs)
            x.outputs = json_object();
        sl_pool_set_node(s->pool, n->id, json_incref(x.outputs));
        if (strcmp(n->type, "end") == 0 && s->scope < 0) {
            pthread_mutex_lock(&r->ev_lock);
            json_object_update(r->outputs, x.outputs);
            pthread_mutex_unlock(&r->ev_lock);
        }
    }
    sl_value *finished = NULL;
    if (ev) {
        sl_value *d = finished = node_event_base(&x, index, pred);
        json_object_set_new(d, "inputs", x.inputs ? json_incref(x.inputs) : json_null());
        json_object_set_new(d, "process_data", x.process ? json_incref(x.process) : json_null());
        json_object_set_new(d, "outputs", x.outputs ? json_incref(x.outputs) : json_null());
        json_object_set_new(d, "status", json_string(st == NS_FAILED && stopped ? "stopped"
                                                     : nstatus_name[st]));
        json_object_set_new(d, "error", x.err_msg ? json_string(x.err_msg) : json_null());
        json_object_set_new(d, "error_type", x.err_type ? json_string(x.err_type) : json_null());
        json_object_set_new(d, "elapsed_time", json_real(sl_clock_s() - t_start));
        sl_value *meta = json_object();
        json_object_set_new(meta, "total_tokens", json_integer(x.tokens));
        json_object_set_new(meta, "total_price", x.price > 0 ? json_real(x.price) : json_integer(0));
        json_object_set_new(meta, "currency", json_string(x.currency[0] ? x.currency : "USD"));
        json_object_set_new(d, "execution_metadata", meta);
        json_object_set_new(d, "created_at", json_integer(created));
        json_object_set_new(d, "finished_at", json_integer(sl_rx_wall()));
    }

    /* node_finished goes out under the lock, after the text this node
     * releases (an answer's path decided, an LLM's stream complete) and
     * before any successor starts, in the order Dify's engine gives. */
    pthread_mutex_lock(&s->mu);
    s->status[v] = (unsigned char)st;
    if (st == NS_FAILED) {
        if (stopped)
            s->stopped = true;
        /* A long message (a traceback) keeps its start and its end, where
         * the exception is; the node_finished event has it whole. */
        const char *em = x.err_msg ? x.err_msg : "unknown error";
        size_t el = strlen(em);
        char *msg = el <= 3000 ? sl_xasprintf("node '%s' (%s) failed: %s", n->id, n->title, em)
                               : sl_xasprintf("node '%s' (%s) failed: %.800s\n[…]\n%s", n->id,
                                              n->title, em, em + el - 2000);
        fail_sched(s, stopped ? SL_ECANCELED : SL_ENODE, NULL,
                   x.err_type ? x.err_type : "NodeError", stopped ? "the run was stopped" : msg);
        free(msg);
    } else {
        if (strcmp(n->type, "loop-end") == 0)
            s->broke = true;
        int added = complete(s, v, handle, fail_branch);
        if (s->stream) {
            sl_stream_done(s->stream, v);
            for (int k = 0; k < n->nout; k++)
                if (s->edge[n->out[k]] == E_TAKEN)
                    sl_stream_taken(s->stream, n->out[k]);
        }
        if (added > 1) {
            /* More work than this worker can take: wake idle workers and
             * start threads up to the pool size. */
            int spare = added - 1;
            if (s->idle > 0)
                pthread_cond_broadcast(&s->cv);
            spare -= s->idle;
            while (spare-- > 0 && s->threads < s->max_threads) {
                if (pthread_create(&s->tids[s->threads], NULL, sl__worker_main, s) == 0)
                    s->threads++;
                else
                    break;
            }
        }
    }
    if (finished) /* workers woken above wait for the lock; freed after it */
        sl_rx_emit(r, "node_finished", json_incref(finished));
    pthread_mutex_unlock(&s->mu);
    json_decref(finished);

    json_decref(x.inputs);
    json_decref(x.outputs);
    json_decref(x.process);
    free(x.handle);
    free(x.err_msg);
    free(x.err_type);
}

static void worker_loop(sched *s)
{
    sl_run *r = s->run;
    pthread_mutex_lock(&s->mu);
    while (!s->done) {
        if (!s->abort && atomic_load(&r->cancel)) {
            s->stopped = true;
            fail_sched(s, SL_ECANCELED, NULL, "Stopped", "the run was stopped");
        }
        if (!s->abort && r->L.max_time_s > 0 && sl_clock_s() - r->t0 > r->L.max_time_s) {
            char msg[256];
            snprintf(msg, sizeof msg, "the run took longer than max_time_s (%g s); raise it "
                     "with --limit max_time_s=N", r->L.max_time_s);
            fail_sched(s, SL_ETIMEOUT, "max_time_s", "WorkflowTimeout", msg);
        }
        if (s->qh != s->qt && !s->abort) {
            int v = s->queue[s->qh++];
            if (++s->steps > r->L.max_steps) {
                char msg[256];
                snprintf(msg, sizeof msg, "the workflow ran more than max_steps (%d) nodes; "
                         "raise it with --limit max_steps=N", r->L.max_steps);
                fail_sched(s, SL_ELIMIT, "max_steps", "MaxStepsExceeded", msg);
                continue;
            }
            s->status[v] = NS_RUNNING;
            s->running++;
            pthread_mutex_unlock(&s->mu);
            exec_node(s, v);
            pthread_mutex_lock(&s->mu);
            s->running--;
            continue;
        }
        if (s->running == 0) {
            s->done = true;
            pthread_cond_broadcast(&s->cv);
            break;
        }
        s->idle++;
        pthread_cond_wait(&s->cv, &s->mu);
        s->idle--;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void *sl__worker_main(void *arg)
{
    worker_loop(arg);
    return NULL;
}

void sl_rx_sched_run(sched *s, int start)
{
    pthread_mutex_lock(&s->mu);
    if (s->stream)
        sl_stream_begin(s->stream);
    push(s, start);
    pthread_mutex_unlock(&s->mu);
    worker_loop(s);
    for (int i = 0; i < s->threads; i++)
        pthread_join(s->tids[i], NULL);
    /* A graph that ran to its end sends what its answers still hold (a
     * reference to a variable that never came); a failed or stopped one
     * sends nothing more. */
    if (s->stream && !s->abort) {
        pthread_mutex_lock(&s->mu);
        sl_stream_finish(s->stream);
        pthread_mutex_unlock(&s->mu);
    }
}

/* ---- containers ---- */

int sl_exec_round(sl_node_exec *x, sl_round *rd)
{
    sl_run *r = x->s->run;
    const sl_gnode *n = x->n;
    rd->result = NULL;
    rd->scope_after = NULL;
    rd->broke = false;
    rd->err = (sl_err){0};
    if (x->s->depth + 1 > r->L.max_depth) {
        json_decref(rd->scope_vars);
        rd->scope_vars = NULL;
        sl_err_limit(&rd->err, SL_ELIMIT, "max_depth", "containers nested deeper than max_depth "
                     "(%d); raise it with --limit max_depth=N", r->L.max_depth);
        sl_err_set_type(&rd->err, "DepthLimitExceeded");
        return -1;
    }
    sl_pool *layer = sl_pool_new(x->s->pool);
    if (rd->scope_vars)
        sl_pool_set_node(layer, n->id, rd->scope_vars);
    rd->scope_vars = NULL;
    sched sub;
    sl_rx_sched_init(&sub, r, n->idx, x->s->depth + 1, layer, 1);
    sub.round = rd->index;
    sl_rx_sched_run(&sub, n->inner_start);
    int rc = 0;
    if (sub.abort) {
        rc = sl_err_typed(&rd->err, SL_ENODE, sub.fail_type ? sub.fail_type : "NodeError", "%s",
                          sub.fail_msg ? sub.fail_msg : "a node inside failed");
    }
    if (rd->collect)
        rd->result = sl_pool_get_sel(layer, rd->collect);
    rd->scope_after = sl_pool_node(layer, n->id);
    rd->broke = sub.broke;
    /* Child steps count against the child engine's own max_steps, as in Dify. */
    sl_rx_sched_release(&sub);
    sl_pool_free(layer);
    return rc;
}
