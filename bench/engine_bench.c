/*
 * engine_bench — engine overhead per node and DSL load time (bench/run.sh).
 *
 * For each workflow file given (made by bench/gen.py: N pass-through nodes,
 * N counting start and end), it
 *   - loads the file repeatedly (sl_graph_load_file + sl_graph_release:
 *     YAML parse and full validation, what `sluice run` pays before the
 *     first node) and keeps the median, next to the median of libyaml's
 *     bare event parse of the same bytes (the floor under that load);
 *   - runs the loaded graph repeatedly (sl_run_new + sl_run_exec +
 *     sl_run_free, `workers` threads) and keeps the median.  No event
 *     callback by default; `--events 1` adds one that only counts them, so
 *     the figure includes building every event and streaming what answer
 *     and end nodes show (the response coordinator), as a server pays.  Pass-through nodes do almost nothing, so run time / nodes is
 *     what the engine itself costs per node: scheduling, edge states, the
 *     variable pool, thread hand-offs.
 *
 * Medians, not means: the machine is shared with the other benchmarks and
 * a stray page fault or preemption should not move the figure.  Repetition
 * counts adapt to a time budget so a 100-node run is measured hundreds of
 * times and a 10,000-node run a few dozen, within the 2-minute bench.
 *
 * Every run is checked (status succeeded, the `result` output equals the
 * input, every node ran) so a broken engine cannot post a fast figure.
 *
 * Output: one line per file, space-separated key=value, for bench/report.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "core/clock.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "nodes/registry.h"

#define INPUT_TEXT "bench input"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* How many repetitions: at least `min`, more while the budget lasts, at
 * most `max` (the sample array size). */
typedef struct {
    int min, max;
    double budget_s;
} reps;

static bool more(const reps *r, int done, double spent)
{
    return done < r->max && (done < r->min || spent < r->budget_s);
}

/* libyaml's event parser alone over the file's bytes: the floor under any
 * loader built on libyaml, so the report can say how much of the load
 * time is the tokenizer and how much is sluice (tree, marks, validation).
 * Returns seconds, or -1 when libyaml rejects the text. */
static double yaml_events_s(const char *text, size_t len)
{
    double t0 = sl_clock_s();
    yaml_parser_t p;
    yaml_event_t ev;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    bool end = false, ok = true;
    while (!end && (ok = yaml_parser_parse(&p, &ev))) {
        end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return ok ? sl_clock_s() - t0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, SL_DSL_MAX_BYTES + 1);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sl_buf_add(&b, chunk, n);
    fclose(f);
    *len = b.len;
    return sl_buf_detach(&b);
}

/* The settings every load and run uses: the environment's, as `sluice
 * validate` sees them (made on first use, kept for the process). */
static sl_config *config;

static int load(const char *path, sl_graph *g)
{
    if (!config)
        config = sl_config_default();
    sl_diag diag;
    sl_err err = {0};
    sl_diag_init(&diag);
    int rc = sl_graph_load_file(g, &sl_nodes, config, path, &diag, &err);
    if (rc < 0) {
        fprintf(stderr, "engine_bench: %s does not load: %s\n", path,
                err.msg ? err.msg : "invalid");
        for (size_t i = 0; i < diag.n; i++)
            fprintf(stderr, "  %s\n", diag.v[i].msg);
        sl_graph_release(g);
    }
    sl_diag_release(&diag);
    sl_err_clear(&err);
    return rc;
}

/* One timed run, from sl_run_new to the end of sl_run_free (a server pays
 * the teardown for every run too); -1 (with a message) when the run did
 * not do the work.  The checks cost a few string compares. */
static int run_once(const sl_graph *g, const sl_run_opts *o, double *secs)
{
    double t0 = sl_clock_s();
    sl_run *r = sl_run_new(g, o);
    sl_err err = {0};
    int rc = r ? 0 : -1;
    if (r)
        sl_run_exec(r, &err);
    if (rc == 0 && sl_run_status_of(r) != SL_RUN_SUCCEEDED) {
        fprintf(stderr, "engine_bench: run %s: %s\n", sl_run_status_name(sl_run_status_of(r)),
                sl_run_error(r) ? sl_run_error(r) : "?");
        rc = -1;
    } else if (rc == 0) {
        const char *res = json_string_value(json_object_get(sl_run_outputs(r), "result"));
        if (!res || strcmp(res, INPUT_TEXT) != 0) {
            fprintf(stderr, "engine_bench: output 'result' is %s, expected '%s'\n",
                    res ? res : "missing", INPUT_TEXT);
            rc = -1;
        } else if (sl_run_steps(r) != g->nnodes) {
            fprintf(stderr, "engine_bench: %d steps for %d nodes\n", sl_run_steps(r),
                    g->nnodes);
            rc = -1;
        }
    } else {
        fprintf(stderr, "engine_bench: the run could not start: %s\n",
                err.msg ? err.msg : "?");
    }
    sl_err_clear(&err);
    sl_run_free(r);
    *secs = sl_clock_s() - t0;
    return rc;
}

static void count_event(const char *event, const sl_value *data, void *ud)
{
    (void)event, (void)data;
    ++*(long *)ud;
}

static long events_seen;

static int bench_file(const char *path, int workers, bool events, const reps *lr,
                      const reps *rr)
{
    double *samples = sl_xmalloc((size_t)(lr->max > rr->max ? lr->max : rr->max) *
                                 sizeof *samples);
    sl_graph g;
    int nload = 0;
    double spent = 0;
    while (more(lr, nload, spent)) {
        double t0 = sl_clock_s();
        if (load(path, &g) < 0) {
            free(samples);
            return -1;
        }
        double t1 = sl_clock_s();
        samples[nload++] = t1 - t0;
        spent += t1 - t0;
        sl_graph_release(&g);
    }
    double load_ms = median(samples, nload) * 1e3;

    size_t len = 0;
    char *text = slurp(path, &len);
    int nyaml = 0;
    spent = 0;
    while (text && more(lr, nyaml, spent)) {
        double t = yaml_events_s(text, len);
        if (t < 0)
            break;
        samples[nyaml++] = t;
        spent += t;
    }
    free(text);
    double yaml_ms = nyaml ? median(samples, nyaml) * 1e3 : -1;

    if (load(path, &g) < 0) {
        free(samples);
        return -1;
    }
    /* Inputs are checked once, as a server would before queueing runs. */
    sl_value *given = json_pack("{s:s}", "q", INPUT_TEXT);
    sl_value *inputs = NULL;
    sl_diag diag;
    sl_diag_init(&diag);
    int rc = sl_run_prepare_inputs(&g, given, &inputs, &diag);
    for (size_t i = 0; i < diag.n; i++)
        fprintf(stderr, "engine_bench: %s\n", diag.v[i].msg);
    sl_diag_release(&diag);
    json_decref(given);

    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = config;
    o.inputs = inputs;
    o.limits.workers = workers;
    if (events) {
        o.on_event = count_event;
        o.event_ud = &events_seen;
    }
    o.limits.max_steps = g.nnodes + 10;   /* Dify's 500 would stop a long chain */
    o.limits.max_time_s = 600;

    int nrun = 0;
    spent = 0;
    double t;
    /* Two warm-up runs fill the allocator's free lists and the caches the
     * way a long-lived server process would have them. */
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = run_once(&g, &o, &t);
    while (rc == 0 && more(rr, nrun, spent)) {
        rc = run_once(&g, &o, &t);
        samples[nrun++] = t;
        spent += t;
    }
    if (rc == 0) {
        double run_s = median(samples, nrun);
        printf("file=%s nodes=%d edges=%d workers=%d loads=%d load_ms=%.3f "
               "libyaml_events_ms=%.3f runs=%d run_ms=%.3f us_per_node=%.3f\n",
               path, g.nnodes, g.nedges, workers, nload, load_ms, yaml_ms, nrun, run_s * 1e3,
               run_s * 1e6 / g.nnodes);
        fflush(stdout);
    }
    json_decref(inputs);
    sl_graph_release(&g);
    free(samples);
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: engine_bench [options] FILE...\n"
            "  --workers N      worker threads per run (2)\n"
            "  --run-budget S   seconds of runs per file, at least 11 runs (1.0)\n"
            "  --load-budget S  seconds of loads per file, at least 3 loads (1.0)\n"
            "  --events 0|1     1: runs with an event callback (0)\n");
}

int main(int argc, char **argv)
{
    int workers = 2;
    bool events = false;
    reps lr = {3, 101, 1.0}, rr = {11, 2001, 1.0};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        if (strcmp(argv[i], "--workers") == 0)
            workers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--run-budget") == 0)
            rr.budget_s = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--load-budget") == 0)
            lr.budget_s = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--events") == 0)
            events = atoi(argv[i + 1]) != 0;
        else {
            usage();
            return 2;
        }
    }
    if (i >= argc || workers < 1) {
        usage();
        return 2;
    }
    int rc = 0;
    for (; i < argc; i++)
        rc |= bench_file(argv[i], workers, events, &lr, &rr) < 0;
    return rc;
}
