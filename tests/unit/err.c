/*
 * err — the fields callers decide on (code, type, setting), and the callers
 * that decide on them instead of on message text.
 */
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "llm/schema.h"
#include "nodes/registry.h"
#include "tap.h"

static void test_fields(void)
{
    sl_err e = {0};
    CHECK(sl_err_typed(&e, SL_ENODE, "HTTPRequestError", "bad %s", "url") == -1 &&
              e.code == SL_ENODE && !strcmp(e.msg, "bad url") &&
              !strcmp(e.type, "HTTPRequestError") && !e.setting,
          "err: typed sets code, message and error_type");
    CHECK(!strcmp(sl_err_type(&e, "NodeError"), "HTTPRequestError"),
          "err: type() prefers the error's own type");
    sl_err_prefix(&e, "node 'x'");
    CHECK(!strcmp(e.msg, "node 'x': bad url") && !strcmp(e.type, "HTTPRequestError"),
          "err: prefix keeps the type");
    sl_err_set(&e, SL_EINVAL, "plain");
    CHECK(!e.type && !e.setting && !strcmp(sl_err_type(&e, "NodeError"), "NodeError"),
          "err: set replaces the type too; type() falls back");
    CHECK(!strcmp(sl_err_type(NULL, "X"), "X"), "err: type() of no error is the fallback");
    CHECK(sl_err_limit(&e, SL_ELIMIT, "agent_max_turns", "used %d turns", 30) == -1 &&
              e.code == SL_ELIMIT && !strcmp(e.setting, "agent_max_turns") &&
              !strcmp(e.msg, "used 30 turns") && !e.type,
          "err: limit names the setting to raise");
    sl_err_set_type(&e, "AgentLimitError");
    CHECK(!strcmp(e.type, "AgentLimitError") && !strcmp(e.setting, "agent_max_turns"),
          "err: set_type adds a type and keeps the setting");
    sl_err_set_type(&e, e.type);  /* its own type: copied before it is freed */
    CHECK(!strcmp(e.type, "AgentLimitError"), "err: set_type with its own type");
    sl_err_set_type(&e, NULL);
    CHECK(!e.type, "err: set_type(NULL) removes the type");
    sl_err_limit(&e, SL_ETIMEOUT, "max_time_s", "slow");
    sl_err_set_type(&e, "WorkflowTimeout");
    sl_err d = {0};
    sl_err_set(&d, SL_EIO, "old");
    sl_err_move(&d, &e);
    CHECK(d.code == SL_ETIMEOUT && !strcmp(d.msg, "slow") && !strcmp(d.type, "WorkflowTimeout") &&
              !strcmp(d.setting, "max_time_s"),
          "err: move carries every field");
    CHECK(e.code == SL_OK && !e.msg && !e.type && !e.setting, "err: move leaves the source clear");
    sl_err_move(NULL, &d);
    CHECK(d.code == SL_OK && !d.msg && !d.type, "err: move to NULL releases the error");
    CHECK(sl_err_typed(NULL, SL_EIO, "T", "x") == -1 && sl_err_limit(NULL, SL_ELIMIT, "s", "x") == -1,
          "err: NULL err is allowed");
    sl_err_set(&e, SL_ENOTFOUND, "no app with id 'x'");
    CHECK(!strcmp(sl_errcode_name(e.code), "not-found"), "err: not-found code has a name");
    sl_err_clear(&e);
    CHECK(e.code == SL_OK && !e.msg && !e.type && !e.setting, "err: clear releases every field");
}

static void test_diag(void)
{
    sl_diag d;
    sl_diag_init(&d);
    sl_diag_add(&d, true, "plain %d", 1);
    sl_diag_input(&d, false, SL_DIAG_MISSING, "city", "give it a value (inputs.city)",
                  "input '%s' is required", "city");
    sl_diag_input(&d, false, SL_DIAG_INVALID, "n", NULL, "input 'n' must be a number");
    CHECK(d.n == 3 && d.errors == 2 && d.warnings == 1, "diag: counts errors and warnings");
    CHECK(d.v[0].kind == SL_DIAG_OTHER && !d.v[0].input && d.v[0].what_len == strlen("plain 1"),
          "diag: a plain entry concerns no input");
    CHECK(!strcmp(d.v[1].msg, "input 'city' is required; give it a value (inputs.city)") &&
              d.v[1].kind == SL_DIAG_MISSING && !strcmp(d.v[1].input, "city") &&
              d.v[1].what_len == strlen("input 'city' is required"),
          "diag: an input entry names the input and where its what-to-do starts (%s)",
          d.v[1].msg);
    CHECK(!strcmp(d.v[2].msg, "input 'n' must be a number") && d.v[2].kind == SL_DIAG_INVALID &&
              d.v[2].what_len == strlen(d.v[2].msg),
          "diag: an input entry without a fix is its message alone");
    sl_diag_release(&d);
    CHECK(d.n == 0 && !d.v, "diag: release empties the list");
}

/* The start node's inputs: each problem names the input it is about, so
 * the CLI and the server say how to give it without reading the text. */
static void test_inputs(void)
{
    static const char dsl[] =
        "app: {mode: workflow, name: t}\n"
        "kind: app\n"
        "version: 0.1.5\n"
        "workflow:\n"
        "  graph:\n"
        "    nodes:\n"
        "    - {id: start, data: {type: start, title: Start, variables: ["
        "{variable: city, label: City, type: text-input, required: true}, "
        "{variable: n, label: N, type: number, required: false}]}}\n"
        "    - {id: end, data: {type: end, title: End, outputs: []}}\n"
        "    edges:\n"
        "    - {source: start, target: end}\n";
    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    sl_err err = {0};
    if (sl_graph_load_text(&g, &sl_nodes, NULL, dsl, strlen(dsl), "t.yml", &d, &err)) {
        CHECK(0, "inputs: the test DSL loads: %s", d.n ? d.v[0].msg : err.msg);
        sl_diag_release(&d);
        sl_err_clear(&err);
        return;
    }
    sl_diag_release(&d);
    sl_diag_init(&d);
    sl_value *given = json_pack("{s:s,s:s}", "n", "abc", "cty", "x"), *out = NULL;
    CHECK(sl_run_prepare_inputs(&g, given, &out, &d) == -1, "inputs: refused");
    const sl_diag_entry *miss = NULL, *bad = NULL, *undeclared = NULL;
    for (size_t i = 0; i < d.n; i++) {
        if (d.v[i].kind == SL_DIAG_MISSING)
            miss = &d.v[i];
        else if (d.v[i].kind == SL_DIAG_INVALID)
            bad = &d.v[i];
        else if (d.v[i].kind == SL_DIAG_UNDECLARED)
            undeclared = &d.v[i];
    }
    CHECK(miss && !strcmp(miss->input, "city") &&
              !strcmp(miss->msg, "input 'city' (City) is required; give it a value (inputs.city)") &&
              miss->what_len == strlen("input 'city' (City) is required"),
          "inputs: the missing one is MISSING, names city (%s)", miss ? miss->msg : "none");
    CHECK(bad && !strcmp(bad->input, "n"), "inputs: the bad number is INVALID, names n (%s)",
          bad ? bad->msg : "none");
    CHECK(undeclared && undeclared->warning && !strcmp(undeclared->input, "cty"),
          "inputs: the misspelt one is UNDECLARED, names cty (%s)",
          undeclared ? undeclared->msg : "none");
    json_decref(given);
    json_decref(out);
    sl_diag_release(&d);
    sl_graph_release(&g);
}

/* The schema check fails with an sl_err naming the path (it wrote into a
 * caller's char buffer before). */
static void test_schema(void)
{
    sl_value *schema = json_loads("{\"type\": \"object\", \"required\": [\"a\"], "
                                  "\"properties\": {\"a\": {\"type\": \"array\", "
                                  "\"items\": {\"type\": \"integer\"}}}}",
                                  0, NULL);
    sl_value *good = json_loads("{\"a\": [1, 2]}", 0, NULL);
    sl_value *bad = json_loads("{\"a\": [1, \"x\"]}", 0, NULL);
    sl_value *none = json_loads("{}", 0, NULL);
    sl_err e = {0};
    CHECK(sl_schema_check(schema, good, &e) == 0 && e.code == SL_OK && !e.msg,
          "schema: a fitting value leaves err clear");
    CHECK(sl_schema_check(schema, bad, &e) == -1 && e.code == SL_EINVAL &&
              !strcmp(e.msg, "$.a[1] should be integer, not string"),
          "schema: a misfit names its path (%s)", e.msg ? e.msg : "");
    CHECK(sl_schema_check(schema, none, &e) == -1 && !strcmp(e.msg, "$.a is required but missing"),
          "schema: a missing property (%s)", e.msg ? e.msg : "");
    sl_err_clear(&e);
    json_decref(schema);
    json_decref(good);
    json_decref(bad);
    json_decref(none);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_fields();
    test_diag();
    test_inputs();
    test_schema();
    return tap_done();
}
