/*
 * iteration — runs its child graph once per item of an array, sequentially
 * or on up to parallel_nums threads, and collects one output per item.
 *
 * Each round gets its own pool layer with [iteration_id, item] and
 * [iteration_id, index], so parallel rounds never see each other.  Results
 * keep item order whatever order rounds finish in.  error_handle_mode:
 * terminated (first failure fails the node), continue-on-error (null in
 * that slot), remove-abnormal-output (slot dropped).
 */
#include "engine/node.h"
#include "engine/graph.h"
#include "engine/limits.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MODE_TERMINATED, MODE_CONTINUE, MODE_REMOVE } err_mode;

static int parse_mode(const char *s, err_mode *m)
{
    if (!s || !strcmp(s, "terminated"))
        *m = MODE_TERMINATED;
    else if (!strcmp(s, "continue-on-error"))
        *m = MODE_CONTINUE;
    else if (!strcmp(s, "remove-abnormal-output"))
        *m = MODE_REMOVE;
    else
        return -1;
    return 0;
}

static int iteration_check(sl_check *c, const sl_gnode *n)
{
    sl_check_selector(c, n, n->data, "iterator_selector", "iterator_selector", true);
    sl_check_selector(c, n, n->data, "output_selector", "output_selector", false);
    err_mode m;
    const sl_value *em = json_object_get(n->data, "error_handle_mode");
    if (em && !json_is_null(em) && (!json_is_string(em) || parse_mode(json_string_value(em), &m) < 0))
        sl_check_error(c, n, n->data, "error_handle_mode", "error_handle_mode",
                       "must be terminated, continue-on-error or remove-abnormal-output");
    const sl_value *pn = json_object_get(n->data, "parallel_nums");
    if (pn && !json_is_null(pn) && (!json_is_integer(pn) || json_integer_value(pn) < 1))
        sl_check_error(c, n, n->data, "parallel_nums", "parallel_nums",
                       "must be a whole number of at least 1");
    return 0;
}

typedef struct {
    sl_node_exec *x;
    const sl_value *items;
    const sl_value *collect;
    size_t n;
    sl_value **results;      /* per item, NULL for removed */
    unsigned char *failed;
    char **errors;
    err_mode mode;
    atomic_size_t next;
    atomic_int stop;
} iter_state;

static void run_item(iter_state *st, size_t i)
{
    sl_node_exec *x = st->x;
    sl_value *vars = json_object();
    json_object_set(vars, "item", json_array_get(st->items, i));
    json_object_set_new(vars, "index", json_integer((json_int_t)i));
    sl_value *ev = json_object();
    json_object_set_new(ev, "index", json_integer((json_int_t)i));
    sl_exec_event(x, "iteration_next", ev);
    sl_round rd = {.scope_vars = vars, .collect = st->collect, .index = (long long)i};
    int rc = sl_exec_round(x, &rd);
    json_decref(rd.scope_after);
    if (rc < 0) {
        st->failed[i] = 1;
        st->errors[i] = rd.err.msg;  /* taken: the error's message is all kept */
        rd.err.msg = NULL;
        sl_err_clear(&rd.err);
        json_decref(rd.result);
        if (st->mode == MODE_TERMINATED)
            atomic_store(&st->stop, 1);
        return;
    }
    st->results[i] = rd.result ? rd.result : json_null();
}

static void *worker(void *arg)
{
    iter_state *st = arg;
    for (;;) {
        if (atomic_load(&st->stop) || sl_exec_cancelled(st->x))
            break;
        size_t i = atomic_fetch_add(&st->next, 1);
        if (i >= st->n)
            break;
        run_item(st, i);
    }
    return NULL;
}

static int iteration_run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const sl_limits *L = sl_exec_limits(x);
    sl_value *items = sl_exec_get(x, json_object_get(d, "iterator_selector"));
    err_mode mode = MODE_TERMINATED;
    parse_mode(json_string_value(json_object_get(d, "error_handle_mode")), &mode);
    if (!items || json_is_null(items)) {
        json_decref(items);
        items = json_array();
    }
    if (!json_is_array(items)) {
        const char *t = sl_value_type_name(items);
        json_decref(items);
        return sl_exec_fail(x, "IteratorVariableNotArrayError",
                            "iterator_selector must point to an array, but it holds %s; pick an "
                            "array variable", t);
    }
    sl_exec_input(x, "iterator_selector", json_incref(items));
    size_t n = json_array_size(items);
    if (n > (size_t)L->max_iterations) {
        json_decref(items);
        return sl_exec_fail(x, "IterationLimitExceeded",
                            "the array has %zu items; max_iterations is %d (raise it with "
                            "--limit max_iterations=N)", n, L->max_iterations);
    }
    sl_value *ev = json_object();
    sl_value *meta = json_object();
    json_object_set_new(meta, "iterator_length", json_integer((json_int_t)n));
    json_object_set_new(ev, "metadata", meta);
    json_object_set_new(ev, "inputs", json_pack("{s:O}", "iterator_selector", items));
    sl_exec_event(x, "iteration_started", ev);

    iter_state st = {.x = x, .items = items, .n = n, .mode = mode,
                     .collect = json_object_get(d, "output_selector")};
    if (json_array_size(st.collect) < 2)
        st.collect = NULL;
    st.results = sl_xcalloc(n ? n : 1, sizeof *st.results);
    st.failed = sl_xcalloc(n ? n : 1, 1);
    st.errors = sl_xcalloc(n ? n : 1, sizeof *st.errors);
    atomic_init(&st.next, 0);
    atomic_init(&st.stop, 0);

    int threads = 1;
    if (json_is_true(json_object_get(d, "is_parallel"))) {
        const sl_value *pn = json_object_get(d, "parallel_nums");
        threads = json_is_integer(pn) ? (int)json_integer_value(pn) : 10;
        if (threads > L->parallel_iterations)
            threads = L->parallel_iterations;
        if (threads < 1)
            threads = 1;
        if ((size_t)threads > n)
            threads = (int)(n ? n : 1);
    }
    if (threads == 1) {
        worker(&st);
    } else {
        pthread_t *tids = sl_xcalloc((size_t)threads, sizeof *tids);
        int started = 0;
        for (int i = 0; i < threads; i++)
            if (pthread_create(&tids[i], NULL, worker, &st) == 0)
                started++;
            else
                break;
        if (started == 0)
            worker(&st);
        for (int i = 0; i < started; i++)
            pthread_join(tids[i], NULL);
        free(tids);
    }

    int rc = 0;
    sl_value *out = json_array();
    for (size_t i = 0; i < n; i++) {
        if (st.failed[i]) {
            if (mode == MODE_TERMINATED && rc == 0)
                rc = sl_exec_fail(x, "IterationNodeError", "item %zu failed: %s", i,
                                  st.errors[i] ? st.errors[i] : "unknown error");
            else if (mode == MODE_CONTINUE)
                json_array_append_new(out, json_null());
        } else if (st.results[i]) {
            json_array_append_new(out, st.results[i]);
            st.results[i] = NULL;
        }
    }
    if (rc == 0 && sl_exec_cancelled(x))
        rc = sl_exec_time_left(x) <= 0
                 ? sl_exec_fail(x, "WorkflowTimeout", "the run took longer than max_time_s; "
                                "raise it with --limit max_time_s=N")
                 : sl_exec_fail(x, "Stopped", "the run was stopped");
    /* flatten_output (default true): a list of lists becomes one list. */
    const sl_value *fo = json_object_get(d, "flatten_output");
    bool flatten = !fo || json_is_null(fo) || json_is_true(fo);
    bool all_arrays = json_array_size(out) > 0;
    for (size_t i = 0; i < json_array_size(out); i++)
        all_arrays &= json_is_array(json_array_get(out, i));
    if (rc == 0 && flatten && all_arrays) {
        sl_value *flat = json_array();
        for (size_t i = 0; i < json_array_size(out); i++)
            json_array_extend(flat, json_array_get(out, i));
        json_decref(out);
        out = flat;
    }
    if (rc == 0)
        sl_exec_output(x, "output", json_incref(out));
    sl_value *done = json_object();
    json_object_set_new(done, "inputs", json_pack("{s:O}", "iterator_selector", items));
    json_object_set_new(done, "outputs", json_pack("{s:O}", "output", out));
    json_object_set_new(done, "status", json_string(rc == 0 ? "succeeded" : "failed"));
    json_object_set_new(done, "error", rc == 0 ? json_null() : json_string("an item failed"));
    json_object_set_new(done, "steps", json_integer((json_int_t)n));
    json_object_set_new(done, "elapsed_time", json_real(sl_exec_elapsed(x)));
    sl_exec_event(x, "iteration_completed", done);
    json_decref(out);
    for (size_t i = 0; i < n; i++) {
        json_decref(st.results[i]);
        free(st.errors[i]);
    }
    free(st.results);
    free(st.failed);
    free(st.errors);
    json_decref(items);
    return rc;
}

const sl_node_kind sl_kind_iteration = {
    .type = "iteration",
    .flags = SL_KIND_CONTAINER,
    .check = iteration_check,
    .run = iteration_run,
};
