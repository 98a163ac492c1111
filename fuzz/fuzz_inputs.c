/*
 * fuzz_inputs — libFuzzer target for start-input checking and conversion
 * (sl_run_prepare_inputs), the first thing that touches inputs a user or an
 * HTTP client sends.
 *
 * The input bytes are parsed as JSON (any value, as a request body could
 * be) and checked against a fixed workflow whose start node declares one
 * input of every type.  When the inputs pass, the workflow runs on them
 * (one worker) and must succeed: everything that can be wrong with inputs
 * has to be caught before the run, as Dify does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/run.h"
#include "nodes/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char graph_yaml[] =
    "app: {mode: workflow, name: fuzz_inputs}\n"
    "kind: app\n"
    "version: 0.6.0\n"
    "workflow:\n"
    "  graph:\n"
    "    nodes:\n"
    "    - id: start\n"
    "      data:\n"
    "        type: start\n"
    "        title: Start\n"
    "        variables:\n"
    "        - {variable: t, label: Text, type: text-input, required: true, max_length: 5}\n"
    "        - {variable: p, label: Para, type: paragraph, required: false, default: dflt}\n"
    "        - {variable: s, label: Pick, type: select, required: false, options: [a, b, '1']}\n"
    "        - {variable: n, label: Num, type: number, required: false}\n"
    "        - {variable: c, label: Check, type: checkbox, required: false}\n"
    "        - {variable: j, label: Obj, type: json_object, required: false}\n"
    "        - {variable: f, label: File, type: file, required: false}\n"
    "        - {variable: fl, label: Files, type: file-list, required: false}\n"
    "    - id: agg\n"
    "      data: {type: variable-aggregator, title: Agg, output_type: string,\n"
    "             variables: [[start, j], [start, t]]}\n"
    "    - id: end\n"
    "      data:\n"
    "        type: end\n"
    "        title: End\n"
    "        outputs:\n"
    "        - {variable: t, value_selector: [start, t]}\n"
    "        - {variable: p, value_selector: [start, p]}\n"
    "        - {variable: s, value_selector: [start, s]}\n"
    "        - {variable: n, value_selector: [start, n]}\n"
    "        - {variable: c, value_selector: [start, c]}\n"
    "        - {variable: j, value_selector: [start, j]}\n"
    "        - {variable: f, value_selector: [start, f]}\n"
    "        - {variable: fl, value_selector: [start, fl]}\n"
    "        - {variable: first, value_selector: [agg, output]}\n"
    "    edges:\n"
    "    - {source: start, target: agg}\n"
    "    - {source: agg, target: end}\n";

static sl_graph graph;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_object_seed(1);
    sl_diag diag;
    sl_err err = {0};
    sl_diag_init(&diag);
    if (sl_graph_load_text(&graph, &sl_nodes, NULL, graph_yaml, sizeof graph_yaml - 1,
                           "<fuzz_inputs>", &diag, &err) < 0) {
        fprintf(stderr, "fuzz_inputs: the fixed graph does not load: %s\n",
                err.msg ? err.msg : "");
        for (size_t i = 0; i < diag.n; i++)
            fprintf(stderr, "  %s\n", diag.v[i].msg);
        abort();
    }
    sl_diag_release(&diag);
    sl_err_clear(&err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    sl_value *given = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!given)
        return 0;
    sl_value *inputs = NULL;
    sl_diag diag;
    sl_diag_init(&diag);
    int rc = sl_run_prepare_inputs(&graph, given, &inputs, &diag);
    if (rc == 0 && diag.errors) {
        fprintf(stderr, "inputs accepted with %zu errors\n", diag.errors);
        abort();
    }
    if (rc == 0) {
        sl_run_opts o;
        sl_run_opts_init(&o);
        o.inputs = inputs;
        o.limits.workers = 1;
        sl_run *r = sl_run_new(&graph, &o);
        sl_err err = {0};
        if (sl_run_exec(r, &err) < 0 || sl_run_status_of(r) != SL_RUN_SUCCEEDED) {
            fprintf(stderr, "a run on accepted inputs did not succeed: %s\n",
                    sl_run_error(r) ? sl_run_error(r) : err.msg ? err.msg : "?");
            abort();
        }
        sl_err_clear(&err);
        sl_run_free(r);
    }
    json_decref(inputs);
    sl_diag_release(&diag);
    json_decref(given);
    return 0;
}
