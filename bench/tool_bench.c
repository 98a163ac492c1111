/*
 * tool_bench — the configured tools' own costs (issue 15), the tool's own
 * time excluded:
 *
 *   1. tool node overhead ≤ 20 µs: a workflow start → tool → end against
 *      an in-process tool that answers at once, less the same workflow
 *      without the tool node (start → end), run after run in turn; what is
 *      left is the binding, the templating, the argument shaping, the
 *      result shaping and the node's scheduling;
 *   2. agent step overhead with tools ≤ 100 µs: a classic agent whose
 *      model (the LLM stand-in, tests/tools/llmd.py, on loopback) calls an
 *      in-process tool twenty times; the node reports the seconds spent in
 *      the model and in the tools (process_data model_time, tool_time), and
 *      the rest of its elapsed time, per step, is sluice's own.
 *
 * Medians; prints each figure and PASS/FAIL; exit 1 on a miss.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "nodes/registry.h"
#include "tools/binding.h"
#include "../tests/unit/util.h"  /* start_llmd: the LLM stand-in, as the tests start it */

/* ---- an in-process tool that answers at once ---- */

static int inst_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)t, (void)ctx, (void)err;
    *out = json_loads("[{\"name\": \"echo\", \"description\": \"echo\", \"inputSchema\": "
                      "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}, "
                      "\"n\": {\"type\": \"integer\"}}}}]",
                      0, NULL);
    return 0;
}

static int inst_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name,
                     const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)t, (void)name;
    const char *s = json_string_value(json_object_get(args, "text"));
    sl_buf_adds(&res->text, s ? s : "");
    return sl_tool_result_charge(res, ctx, res->text.len, err);
}

static void inst_free(sl_toolset *t)
{
    free(t);
}

static const sl_toolset_ops inst_ops = {"in-process", inst_list, inst_call, NULL, inst_free};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *const with_tool =
    "app: {mode: workflow, name: b}\nkind: app\nversion: 0.1.5\nworkflow:\n  graph:\n"
    "    nodes:\n"
    "    - {id: start, data: {type: start, title: S, variables: [{variable: q, type: "
    "text-input, label: q}]}}\n"
    "    - id: t\n"
    "      data:\n"
    "        type: tool\n"
    "        title: T\n"
    "        provider_id: langgenius/inst/inst\n"
    "        provider_type: plugin\n"
    "        tool_name: echo\n"
    "        tool_parameters: {text: {type: mixed, value: 'asked: {{#start.q#}}'}}\n"
    "        tool_configurations: {n: '3'}\n"
    "    - {id: end, data: {type: end, title: E, outputs: [{variable: r, value_selector: [t, "
    "text]}]}}\n"
    "    edges:\n"
    "    - {source: start, target: t}\n"
    "    - {source: t, target: end}\n";

static const char *const without_tool =
    "app: {mode: workflow, name: b}\nkind: app\nversion: 0.1.5\nworkflow:\n  graph:\n"
    "    nodes:\n"
    "    - {id: start, data: {type: start, title: S, variables: [{variable: q, type: "
    "text-input, label: q}]}}\n"
    "    - {id: end, data: {type: end, title: E, outputs: [{variable: r, value_selector: "
    "[start, q]}]}}\n"
    "    edges:\n"
    "    - {source: start, target: end}\n";

static const char *const agent_app =
    "app: {mode: workflow, name: b}\nkind: app\nversion: 0.1.5\nworkflow:\n  graph:\n"
    "    nodes:\n"
    "    - {id: start, data: {type: start, title: S, variables: []}}\n"
    "    - id: a\n"
    "      data:\n"
    "        type: agent\n"
    "        title: A\n"
    "        agent_strategy_provider_name: langgenius/agent/agent\n"
    "        agent_strategy_name: function_calling\n"
    "        agent_parameters:\n"
    "          model: {type: constant, value: {provider: langgenius/openai/openai, model: "
    "'script:bench_tools', mode: chat, completion_params: {}}}\n"
    "          instruction: {type: constant, value: 'Use the tool.'}\n"
    "          query: {type: constant, value: 'Go.'}\n"
    "          maximum_iterations: {type: constant, value: 30}\n"
    "          tools:\n"
    "            type: array[tools]\n"
    "            value:\n"
    "            - {enabled: true, provider_name: inst, tool_name: echo, type: builtin, "
    "parameters: {n: {auto: 0, value: {type: constant, value: 3}}}}\n"
    "    - {id: end, data: {type: end, title: E, outputs: [{variable: r, value_selector: [a, "
    "text]}]}}\n"
    "    edges:\n"
    "    - {source: start, target: a}\n"
    "    - {source: a, target: end}\n";

typedef struct {
    double elapsed, model, tool;
    int turns;
} agent_fig;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    agent_fig *f = ud;
    if (strcmp(event, "node_finished") ||
        strcmp(json_string_value(json_object_get(data, "node_id")) ?: "", "a"))
        return;
    const sl_value *pd = json_object_get(data, "process_data");
    f->elapsed = json_number_value(json_object_get(data, "elapsed_time"));
    f->model = json_number_value(json_object_get(pd, "model_time"));
    f->tool = json_number_value(json_object_get(pd, "tool_time"));
    f->turns = (int)json_integer_value(json_object_get(pd, "turns"));
}

static int load(const char *text, const sl_config *cfg, sl_graph *g)
{
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_text(g, &sl_nodes, cfg, text, strlen(text), "bench.yml", &d, &err);
    if (rc)
        fprintf(stderr, "tool_bench: %s %s\n", err.msg, d.n ? d.v[0].msg : "");
    sl_diag_release(&d);
    sl_err_clear(&err);
    return rc;
}

/* One run; its wall seconds, or -1 when it did not succeed. */
static double run_once(const sl_graph *g, const sl_config *cfg, sl_value *in, agent_fig *f)
{
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = cfg;
    o.inputs = in;
    o.limits.workers = 1;
    if (f) {
        o.on_event = on_event;
        o.event_ud = f;
    }
    double t0 = sl_clock_s();
    sl_run *r = sl_run_new(g, &o);
    sl_err err = {0};
    int rc = sl_run_exec(r, &err);
    double t = sl_clock_s() - t0;
    if (rc)
        fprintf(stderr, "tool_bench: the run failed: %s\n", err.msg);
    sl_err_clear(&err);
    sl_run_free(r);
    return rc ? -1 : t;
}

int main(void)
{
    int fails = 0;
    int port = 0;
    pid_t llmd = start_llmd(&port);
    if (llmd > 0) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
        setenv("SLUICE_LLM_BASE_URL", url, 1);
        setenv("SLUICE_LLM_API_KEY", "bench", 1);
    }
    sl_config *cfg = sl_config_env();
    sl_toolset *ts = sl_xcalloc(1, sizeof *ts);
    ts->ops = &inst_ops;
    sl_bindings_add_toolset(sl_config_tools_edit(cfg), "inst", ts, "in process");

    /* 1. the tool node */
    sl_graph a, b;
    if (load(with_tool, cfg, &a) || load(without_tool, cfg, &b))
        return 1;
    sl_value *in = json_pack("{s:s}", "q", "what time is it");
    enum { N = 2001 };
    static double ta[N], tb[N];
    for (int i = 0; i < 200; i++)
        run_once(&a, cfg, in, NULL), run_once(&b, cfg, in, NULL);
    for (int i = 0; i < N; i++) {
        ta[i] = run_once(&a, cfg, in, NULL);
        tb[i] = run_once(&b, cfg, in, NULL);
        if (ta[i] < 0 || tb[i] < 0)
            return 1;
    }
    double ma = median(ta, N), mb = median(tb, N), over = (ma - mb) * 1e6;
    bool ok = over <= 20;
    fails += !ok;
    printf("tool node overhead        %6.1f us   (run with it %.1f us, without %.1f us; "
           "target <= 20 us)  %s\n",
           over, ma * 1e6, mb * 1e6, ok ? "PASS" : "FAIL");
    sl_graph_release(&a);
    sl_graph_release(&b);
    json_decref(in);

    /* 2. the agent step */
    if (llmd <= 0) {
        printf("agent step overhead       SKIP (the LLM stand-in did not start)\n");
    } else {
        sl_graph g;
        if (load(agent_app, cfg, &g))
            return 1;
        enum { R = 15 };
        double per[R];
        int steps = 0;
        sl_value *none = json_object();
        for (int i = 0; i < R; i++) {
            agent_fig f = {0};
            if (run_once(&g, cfg, none, &f) < 0 || f.turns < 2)
                return 1;
            steps = f.turns - 1;
            per[i] = (f.elapsed - f.model - f.tool) / steps * 1e6;
        }
        json_decref(none);
        double m = median(per, R);
        ok = m <= 100;
        fails += !ok;
        printf("agent step overhead       %6.1f us   (per tool step, %d steps, model and "
               "tool time excluded; target <= 100 us)  %s\n",
               m, steps, ok ? "PASS" : "FAIL");
        sl_graph_release(&g);
        kill(llmd, SIGTERM);
        waitpid(llmd, NULL, 0);
    }
    sl_config_free(cfg);
    return fails ? 1 : 0;
}
