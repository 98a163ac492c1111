/*
 * knowledge_node — the knowledge-retrieval node and what it stands on: the
 * External Knowledge API client (knowledge/external.h) against a stand-in
 * service (tests/tools/kb_external_standin.py), sluice.yml's
 * knowledge.datasets bindings (engine/config.h), the node's load checks
 * (unbound ids named with the line to add) and its runs: Dify's result
 * objects, multiple and single retrieval (the router through the LLM
 * stand-in), manual metadata conditions, Dify's failures.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/run.h"
#include "knowledge/external.h"
#include "knowledge/kb.h"
#include "net/http.h"
#include "nodes/registry.h"
#include "store/store.h"
#include "tap.h"
#include "util.h"

static int kb_port, llm_port;
static char tmpdir[] = "/tmp/sluice-krnode-XXXXXX";

static char *url_of(int port, const char *path)
{
    return sl_xasprintf("http://127.0.0.1:%d%s", port, path);
}

/* ---- the External Knowledge API client ---- */

static int ext_call(const char *kid, const char *key, bool allow_private, double timeout,
                    size_t max_body, const sl_value *cond, sl_value **recs, sl_err *err)
{
    char *ep = url_of(kb_port, "/api/");
    sl_kb_external_req rq = {.endpoint = ep, .api_key = key, .knowledge_id = kid,
                             .query = "what is alpha?", .top_k = 3, .score_threshold = 0.25,
                             .metadata_condition = cond, .timeout_s = timeout,
                             .max_body = max_body, .allow_private = allow_private};
    int rc = sl_kb_external_retrieve(&rq, recs, err);
    free(ep);
    return rc;
}

static void test_external(void)
{
    sl_value *recs = NULL;
    sl_err err = {0};
    int rc = ext_call("good", "sekret", true, 10, 0, NULL, &recs, &err);
    CHECK(rc == 0 && json_array_size(recs) == 3, "a service's records come back (%s)",
          err.msg ? err.msg : "ok");
    const sl_value *r0 = json_array_get(recs, 0);
    const sl_value *echo = json_object_get(json_object_get(r0, "metadata"), "echo");
    const sl_value *body = json_object_get(echo, "body");
    char *s = show(body);
    CHECK(!strcmp(json_string_value(json_object_get(echo, "path")) ?: "", "/api/retrieval"),
          "POST {endpoint}/retrieval, the endpoint's trailing slash dropped");
    CHECK(!strcmp(json_string_value(json_object_get(echo, "authorization")) ?: "",
                  "Bearer sekret"), "the key goes as a Bearer token");
    CHECK(!strcmp(s, "{\"knowledge_id\":\"good\",\"query\":\"what is alpha?\","
                     "\"retrieval_setting\":{\"top_k\":3,\"score_threshold\":0.25}}"),
          "the body is Dify's, with no metadata_condition when there is none: %s", s);
    free(s);
    CHECK(json_real_value(json_object_get(json_array_get(recs, 1), "score")) == 0.4 &&
              !strcmp(json_string_value(json_object_get(json_array_get(recs, 2), "title")) ?: "",
                      "gamma"),
          "records keep the service's order, scores and titles");
    json_decref(recs);

    sl_value *cond = J("{\"logical_operator\":\"and\",\"conditions\":[{\"name\":\"lang\","
                       "\"comparison_operator\":\"is\",\"value\":\"en\"}]}");
    rc = ext_call("good", "sekret", true, 10, 0, cond, &recs, &err);
    echo = json_object_get(json_object_get(json_array_get(recs, 0), "metadata"), "echo");
    CHECK(rc == 0 && json_equal(json_object_get(json_object_get(echo, "body"),
                                                 "metadata_condition"), cond),
          "metadata_condition goes as given");
    json_decref(cond);
    json_decref(recs);
    recs = NULL;

    rc = ext_call("good", "sekret", false, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_EIO && strstr(err.msg, "allow_private") && !recs,
          "loopback is refused by the SSRF guard unless the binding allows it: %s",
          esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("status:404", "sekret", true, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && strstr(err.msg, "HTTP 404") && strstr(err.msg, "The knowledge is not exist.") &&
              strstr(err.msg, "/api/retrieval") &&
              !strcmp(sl_err_type(&err, ""), "ExternalKnowledgeError"),
          "a 404 is an error naming the endpoint, the status and the service's error_msg: %s",
          esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("good", "wrong", true, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && strstr(err.msg, "HTTP 403") && strstr(err.msg, "Authorization failed"),
          "a refused key says so: %s", esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("huge", "sekret", true, 10, 1 << 20, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_ELIMIT && strstr(err.msg, "1048576"),
          "an answer over the cap is refused: %s", esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("malformed", "sekret", true, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_EPARSE && strstr(err.msg, "records"),
          "an answer that is no JSON is refused: %s", esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("badrecord", "sekret", true, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_EPARSE && strstr(err.msg, "records[0] has no text content"),
          "a record without text content is refused, naming it: %s", esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("nullmeta", "sekret", true, 10, 0, NULL, &recs, &err);
    s = show(recs);
    CHECK(rc == 0 && !strcmp(s, "[{\"content\":\"c\",\"score\":0.0,\"title\":\"t\",\"metadata\":{}}]"),
          "null metadata reads as {}, a missing score as 0: %s", s);
    free(s);
    json_decref(recs);
    recs = NULL;

    rc = ext_call("many", "sekret", true, 10, 0, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_ELIMIT && strstr(err.msg, "1001"),
          "more than %d records are refused: %s", SL_KB_EXTERNAL_MAX_RECORDS, esc(err.msg));
    sl_err_clear(&err);

    rc = ext_call("slow", "sekret", true, 0.5, 0, NULL, &recs, &err);
    CHECK(rc < 0 && err.code == SL_ETIMEOUT, "a silent service times out: %s", esc(err.msg));
    sl_err_clear(&err);
}

/* ---- sluice.yml ---- */

static char *write_config(const char *name, const char *text)
{
    char *path = sl_xasprintf("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static sl_config *load_config(const char *text, sl_err *err)
{
    static int n;
    char name[32];
    snprintf(name, sizeof name, "sluice%d.yml", n++);
    char *path = write_config(name, text);
    sl_config *c = NULL;
    sl_config_load(path, &c, err);
    free(path);
    return c;
}

static void test_config(void)
{
    setenv("KRNODE_KEY", "sekret", 1);
    unsetenv("KRNODE_UNSET");
    sl_err err = {0};
    sl_config *c = load_config("knowledge:\n  datasets:\n    aaa: my-kb\n"
                               "    bbb: {external: {endpoint: http://h.example/api, "
                               "api_key_env: KRNODE_KEY, knowledge_id: k1, top_k: 7, "
                               "score_threshold: 0.3, allow_private: true, timeout: 5}}\n",
                               &err);
    CHECK(c != NULL, "a knowledge section loads (%s)", err.msg ? err.msg : "ok");
    const sl_kb_binding *a = sl_config_kb_binding(c, "aaa");
    const sl_kb_binding *b = sl_config_kb_binding(c, "bbb");
    CHECK(a && a->kb && !strcmp(a->kb, "my-kb") && !a->endpoint && strstr(a->where, "sluice0.yml:3:"),
          "a dataset id binds to a knowledge base's name, with its line (%s)",
          a ? a->where : "none");
    CHECK(b && !b->kb && !strcmp(b->endpoint, "http://h.example/api") &&
              !strcmp(b->api_key, "sekret") && !strcmp(b->knowledge_id, "k1") && b->top_k == 7 &&
              b->threshold_enabled && b->score_threshold == 0.3 && b->allow_private &&
              b->timeout_s == 5,
          "an external binding carries its endpoint, key (from the environment) and settings");
    CHECK(!sl_config_kb_binding(c, "ccc") && !sl_config_kb_binding(NULL, "aaa"),
          "an id the file does not name has no binding");
    sl_config_free(c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"knowledge: [1]\n", "`knowledge` must be a mapping"},
        {"knowledge: {datasets: {}, other: 1}\n", "`knowledge` must be a mapping"},
        {"knowledge: {datasets: {x: 5}}\n", "knowledge.datasets.x: a dataset binds to"},
        {"knowledge: {datasets: {x: ''}}\n", "1 to 255 bytes"},
        {"knowledge: {datasets: {x: {external: {endpoint: ftp://h, knowledge_id: k}}}}\n",
         "http:// or https://"},
        {"knowledge: {datasets: {x: {external: {endpoint: http://h}}}}\n", "knowledge_id"},
        {"knowledge: {datasets: {x: {external: {endpoint: http://h, knowledge_id: k, "
         "api_key_env: KRNODE_UNSET}}}}\n", "not set"},
        {"knowledge: {datasets: {x: {external: {endpoint: http://h, knowledge_id: k, "
         "top_k: 0}}}}\n", "top_k is a whole number from 1 to 100"},
        {"knowledge: {datasets: {x: {external: {endpoint: http://h, knowledge_id: k, "
         "score_threshold: 2}}}}\n", "score_threshold"},
        {"knowledge: {datasets: {x: {external: {endpoint: http://h, knowledge_id: k, "
         "colour: red}}}}\n", "unknown setting"},
        {"knowledge: {datasets: {x: {internal: 1}}}\n", "a dataset binds to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_err e = {0};
        sl_config *bc = load_config(bad[i].text, &e);
        CHECK(!bc && e.msg && strstr(e.msg, bad[i].want), "refused: %s -> %s",
              esc(bad[i].text), esc(e.msg));
        sl_config_free(bc);
        sl_err_clear(&e);
    }
    sl_err_clear(&err);
}

/* ---- the node ---- */

static char *workflow(const char *kr_data)
{
    return sl_xasprintf(
        "app: {mode: workflow, name: kr}\nkind: app\nversion: 0.1.5\nworkflow:\n  graph:\n"
        "    nodes:\n"
        "    - {id: start, type: custom, data: {type: start, title: Start, variables: "
        "[{variable: q, type: text-input, label: q, required: false}, "
        "{variable: n, type: number, label: n, required: false}]}}\n"
        "    - {id: kr, type: custom, data: %s}\n"
        "    - {id: end, type: custom, data: {type: end, title: End, outputs: "
        "[{variable: result, value_selector: [kr, result]}]}}\n"
        "    edges:\n    - {source: start, target: kr}\n    - {source: kr, target: end}\n",
        kr_data);
}

typedef struct {
    sl_value *outputs;      /* the kr node's */
    sl_value *process;
    sl_value *meta;
    const char *status;
    char *error;
} kr_run;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    kr_run *o = ud;
    const char *id = json_string_value(json_object_get(data, "node_id"));
    if (strcmp(event, "node_finished") || !id || strcmp(id, "kr"))
        return;
    o->outputs = json_incref(json_object_get(data, "outputs"));
    o->process = json_incref(json_object_get(data, "process_data"));
    o->meta = json_incref(json_object_get(data, "execution_metadata"));
    o->error = json_string_value(json_object_get(data, "error"))
                   ? sl_xstrdup(json_string_value(json_object_get(data, "error")))
                   : NULL;
}

static void kr_release(kr_run *o)
{
    json_decref(o->outputs);
    json_decref(o->process);
    json_decref(o->meta);
    free(o->error);
    memset(o, 0, sizeof *o);
}

/* Loads the workflow with kr_data against c and runs it with inputs;
 * returns the load's result (0 loaded), diag kept for the caller. */
static int run_kr(sl_config *c, const char *kr_data, const char *inputs, sl_diag *d, kr_run *o)
{
    char *text = workflow(kr_data);
    sl_graph g;
    sl_err err = {0};
    sl_diag_init(d);
    int rc = sl_graph_load_text(&g, &sl_nodes, c, text, strlen(text), "kr.yml", d, &err);
    free(text);
    memset(o, 0, sizeof *o);
    if (rc < 0) {
        o->error = sl_xstrdup(d->n ? d->v[0].msg : err.msg ? err.msg : "?");
        sl_err_clear(&err);
        sl_graph_release(&g);
        return rc;
    }
    sl_run_opts opts;
    sl_run_opts_init(&opts);
    opts.limits.http_allow_private = true;
    sl_value *in = J(inputs);
    opts.inputs = in;
    opts.config = c;
    opts.on_event = on_event;
    opts.event_ud = o;
    sl_run *r = sl_run_new(&g, &opts);
    sl_run_exec(r, &err);
    o->status = sl_run_status_name(sl_run_status_of(r));
    sl_err_clear(&err);
    sl_run_free(r);
    json_decref(in);
    sl_graph_release(&g);
    return 0;
}

static const sl_value *item(const kr_run *o, size_t i)
{
    return json_array_get(json_object_get(o->outputs, "result"), i);
}

static const char *meta_s(const kr_run *o, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_object_get(item(o, i), "metadata"), key));
}

static double meta_score(const kr_run *o, size_t i)
{
    return json_real_value(json_object_get(json_object_get(item(o, i), "metadata"), "score"));
}

#define MULTI(ids, extra)                                                                    \
    "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "      \
    "dataset_ids: " ids ", retrieval_mode: multiple, multiple_retrieval_config: "           \
    "{top_k: 2, score_threshold: 0.5, reranking_enable: false}" extra "}"

static void test_node(void)
{
    char *cfg_text = sl_xasprintf(
        "llm:\n  providers:\n    local: {style: openai, base_url: 'http://127.0.0.1:%d/v1', "
        "api_key: k}\n"
        "knowledge:\n  datasets:\n"
        "    ext1: {external: {endpoint: 'http://127.0.0.1:%d/api', api_key_env: KRNODE_KEY, "
        "knowledge_id: good, allow_private: true}}\n"
        "    ext2: {external: {endpoint: 'http://127.0.0.1:%d/api', knowledge_id: open-good, "
        "allow_private: true, top_k: 2, score_threshold: 0.6}}\n"
        "    broken: {external: {endpoint: 'http://127.0.0.1:%d/api', knowledge_id: "
        "'open-status:500', allow_private: true}}\n"
        "    named: some-kb\n",
        llm_port, kb_port, kb_port, kb_port);
    sl_err err = {0};
    sl_config *c = load_config(cfg_text, &err);
    free(cfg_text);
    CHECK(c != NULL, "the node's settings load (%s)", err.msg ? err.msg : "ok");
    if (!c)
        return;
    sl_diag d;
    kr_run o;

    /* load: an unbound id is named with the line to add */
    int rc = run_kr(c, MULTI("[ext1, 6c7f-unbound, named]", ""), "{\"q\":\"alpha?\"}", &d, &o);
    bool named = false;
    for (size_t i = 0; i < d.n; i++)
        named |= d.v[i].warning && strstr(d.v[i].msg, "6c7f-unbound") &&
                 strstr(d.v[i].msg, "knowledge: datasets: {6c7f-unbound: KB_NAME}") &&
                 strstr(d.v[i].msg, "Search") && strstr(d.v[i].msg, "kr.yml");
    CHECK(rc == 0 && named && d.n == 1,
          "an unbound dataset id is a warning naming it, the node and the line to add; a "
          "bound name is not reported without a store (%s)", d.n ? esc(d.v[0].msg) : "none");
    /* run: the unbound ones are skipped, the external one searched */
    CHECK(o.status && !strcmp(o.status, "succeeded") && json_array_size(
              json_object_get(o.outputs, "result")) == 2,
          "the run succeeds with the external knowledge base's results (%s)",
          o.error ? esc(o.error) : "ok");
    char *s = show(item(&o, 0));
    CHECK(!strcmp(meta_s(&o, 0, "_source") ?: "", "knowledge") &&
              !strcmp(meta_s(&o, 0, "dataset_id") ?: "", "ext1") &&
              !strcmp(meta_s(&o, 0, "document_id") ?: "", "doc-a") &&
              !strcmp(meta_s(&o, 0, "document_name") ?: "", "alpha") &&
              !strcmp(meta_s(&o, 0, "data_source_type") ?: "", "external") &&
              !strcmp(meta_s(&o, 0, "retriever_from") ?: "", "workflow") &&
              meta_score(&o, 0) == 0.9 &&
              json_integer_value(json_object_get(json_object_get(item(&o, 0), "metadata"),
                                                 "position")) == 1 &&
              !strcmp(json_string_value(json_object_get(item(&o, 0), "content")) ?: "",
                      "Alpha content") &&
              !strcmp(json_string_value(json_object_get(item(&o, 0), "title")) ?: "", "alpha") &&
              json_is_null(json_object_get(item(&o, 0), "files")) &&
              json_is_null(json_object_get(item(&o, 0), "summary")),
          "an external record is Dify's result item: %s", esc(s));
    free(s);
    CHECK(meta_score(&o, 1) == 0.7 && !strcmp(meta_s(&o, 1, "document_id") ?: "", "gamma"),
          "best first, under the threshold left out, cut to top_k; a record without "
          "metadata.document_id is named by its title");
    s = show(json_object_get(o.process, "skipped_datasets"));
    CHECK(strstr(s, "6c7f-unbound") && strstr(s, "named") && strstr(s, "no knowledge base "
          "store is open"), "process_data lists the datasets skipped and why: %s", esc(s));
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* two external knowledge bases, merged without reranking */
    run_kr(c, MULTI("[ext1, ext2]", ""), "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(json_array_size(json_object_get(o.outputs, "result")) == 2 &&
              meta_score(&o, 0) == 0.9 && meta_score(&o, 1) == 0.9 &&
              !strcmp(meta_s(&o, 0, "dataset_id") ?: "", "ext1") &&
              !strcmp(meta_s(&o, 1, "dataset_id") ?: "", "ext2") &&
              json_integer_value(json_object_get(json_object_get(item(&o, 1), "metadata"),
                                                 "position")) == 2,
          "results of two knowledge bases merge best first, ties in their order (%s)",
          o.error ? esc(o.error) : "ok");
    const sl_value *echo = json_object_get(json_object_get(
        json_object_get(item(&o, 1), "metadata"), "doc_metadata"), "echo");
    const sl_value *rs = json_object_get(json_object_get(echo, "body"), "retrieval_setting");
    s = show(rs);
    CHECK(json_integer_value(json_object_get(rs, "top_k")) == 2 &&
              fabs(json_real_value(json_object_get(rs, "score_threshold")) - 0.6) < 1e-9 &&
              json_is_null(json_object_get(echo, "authorization")),
          "each external knowledge base is asked with its binding's top_k and threshold, and "
          "no key when it has none: %s", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* the reranking of several needs the knowledge base service */
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, ext2], retrieval_mode: multiple, multiple_retrieval_config: "
              "{top_k: 2, reranking_enable: true, reranking_mode: reranking_model, "
              "reranking_model: {provider: jina, model: jina-reranker-v2}}}",
           "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "failed") && o.error && strstr(o.error, "reranking"),
          "reranking with no knowledge base service open fails, saying so: %s",
          esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);

    /* reranking on with no reranking model: Dify has no rerank runner and
     * keeps every candidate */
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, ext2], retrieval_mode: multiple, multiple_retrieval_config: "
              "{top_k: 1, score_threshold: 0.95, reranking_enable: true}}",
           "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              json_array_size(json_object_get(o.outputs, "result")) == 6 &&
              meta_score(&o, 0) == 0.9 && meta_score(&o, 5) == 0.4,
          "reranking enabled without a model keeps every candidate, best first, as Dify (%s)",
          o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);

    /* a failing external service fails the node, naming it */
    run_kr(c, MULTI("[ext1, broken]", ""), "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "failed") && o.error && strstr(o.error, "'broken'") &&
              strstr(o.error, "HTTP 500") && strstr(o.error, "/api/retrieval"),
          "an external service's error fails the node with the endpoint and status: %s",
          esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);

    /* the query */
    run_kr(c, MULTI("[ext1]", ""), "{\"n\":5}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "failed") && o.error &&
              !strcmp(o.error, "Query variable is not string type."),
          "a query that is no text fails with Dify's message: %s", esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);
    run_kr(c, MULTI("[ext1]", ""), "{\"q\":\"\"}", &d, &o);
    s = show(o.outputs);
    CHECK(!strcmp(o.status ?: "", "succeeded") && !strcmp(s, "{\"result\":[]}"),
          "an empty query gives result []: %s", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [], "
              "dataset_ids: [ext1], retrieval_mode: multiple, multiple_retrieval_config: "
              "{top_k: 2}}", "{\"q\":\"x\"}", &d, &o);
    s = show(o.outputs);
    CHECK(!strcmp(o.status ?: "", "succeeded") && !strcmp(s, "{}"),
          "no query selector: succeeded with no outputs, as Dify: %s", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* Dify's run-time checks */
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1], retrieval_mode: multiple}", "{\"q\":\"x\"}", &d, &o);
    CHECK(o.error && !strcmp(o.error, "multiple_retrieval_config is required") && d.n == 1 &&
              d.v[0].warning,
          "no multiple_retrieval_config: a load warning and Dify's failure: %s", esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1], retrieval_mode: multiple, multiple_retrieval_config: "
              "{top_k: 2, reranking_mode: weighted_score}}", "{\"q\":\"x\"}", &d, &o);
    CHECK(o.error && !strcmp(o.error, "weights is required"),
          "weighted_score without weights: %s", esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);

    /* hostile fields are load errors */
    static const struct {
        const char *data, *want;
    } bad[] = {
        {MULTI("ext1", ""), "dataset_ids"},
        {MULTI("[ext1, 5]", ""), "dataset_ids[1]"},
        {"{type: knowledge-retrieval, title: S, query_variable_selector: [start, q], "
         "dataset_ids: [ext1], retrieval_mode: multiple, multiple_retrieval_config: "
         "{top_k: 100000}}", "top_k"},
        {"{type: knowledge-retrieval, title: S, query_variable_selector: [start, q], "
         "dataset_ids: [ext1], retrieval_mode: multiple, multiple_retrieval_config: "
         "{top_k: 2, score_threshold: 7}}", "score_threshold"},
        {"{type: knowledge-retrieval, title: S, query_variable_selector: [start, q], "
         "dataset_ids: [ext1], retrieval_mode: sometimes}", "retrieval_mode"},
        {MULTI("[ext1]", ", metadata_filtering_mode: manual, metadata_filtering_conditions: "
               "{conditions: [{name: a, comparison_operator: resembles, value: x}]}"),
         "comparison_operator 'resembles'"},
        {MULTI("[ext1]", ", metadata_filtering_mode: automatic"), "metadata_model_config"},
        {MULTI("[ext1]", ", query_attachment_selector: [start, q]"), "attached files"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = run_kr(c, bad[i].data, "{\"q\":\"x\"}", &d, &o);
        CHECK(rc < 0 && o.error && strstr(o.error, bad[i].want), "refused at load: %s",
              esc(o.error));
        kr_release(&o);
        sl_diag_release(&d);
    }

    /* manual metadata conditions: references rendered, white space squashed */
    run_kr(c, MULTI("[ext1]", ", metadata_filtering_mode: manual, "
                    "metadata_filtering_conditions: {logical_operator: or, conditions: ["
                    "{name: topic, comparison_operator: is, value: \"  {{#start.q#}}\\n\\t x \"}, "
                    "{name: year, comparison_operator: '>', value: 2020}, "
                    "{name: tags, comparison_operator: in, value: ['{{#start.q#}}', b]}]}"),
           "{\"q\":\"alpha\"}", &d, &o);
    echo = json_object_get(json_object_get(json_object_get(item(&o, 0), "metadata"),
                                           "doc_metadata"), "echo");
    s = show(json_object_get(json_object_get(echo, "body"), "metadata_condition"));
    CHECK(!strcmp(s, "{\"logical_operator\":\"or\",\"conditions\":[{\"name\":\"topic\","
                     "\"comparison_operator\":\"is\",\"value\":\"alpha  x\"},{\"name\":\"year\","
                     "\"comparison_operator\":\">\",\"value\":2020},{\"name\":\"tags\","
                     "\"comparison_operator\":\"in\",\"value\":[\"alpha\",\"b\"]}]}"),
          "manual conditions go to the service rendered: %s", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* single: one knowledge base needs no model */
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, nope], retrieval_mode: single, single_retrieval_config: "
              "{model: {provider: local, name: 'hang:30', mode: chat}}}",
           "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              json_array_size(json_object_get(o.outputs, "result")) == 3 &&
              meta_score(&o, 2) == 0.4 &&
              !strcmp(json_string_value(json_object_get(o.process, "dataset_chosen")) ?: "",
                      "ext1"),
          "single with one available knowledge base: searched without a model call, best "
          "first (%s)", o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);

    /* single: the model picks by function calling */
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, ext2], retrieval_mode: single, single_retrieval_config: "
              "{model: {provider: local, name: 'tool:ext2', mode: chat}}}",
           "{\"q\":\"alpha?\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              !strcmp(json_string_value(json_object_get(o.process, "dataset_chosen")) ?: "",
                      "ext2") &&
              !strcmp(meta_s(&o, 0, "dataset_id") ?: "", "ext2") &&
              json_integer_value(json_object_get(o.meta, "total_tokens")) > 0 &&
              json_object_get(o.process, "usage"),
          "single with two: the model's tool call picks one, its tokens counted (%s)",
          o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);

    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, ext2], retrieval_mode: single, single_retrieval_config: "
              "{model: {provider: local, name: echo, mode: chat}}}",
           "{\"q\":\"alpha?\"}", &d, &o);
    s = show(o.outputs);
    CHECK(!strcmp(o.status ?: "", "succeeded") && !strcmp(s, "{\"result\":[]}"),
          "single: an answer without a tool call gives [] (%s)", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);
    sl_config_free(c);
    sl_err_clear(&err);
}

static int collect(const char *p, size_t n, void *ud)
{
    return sl_buf_add(ud, p, n) ? 1 : 0;
}

/* Every request llmd has seen (its GET /__log). */
static sl_value *llmd_log(void)
{
    sl_err err = {0};
    sl_http *h = sl_http_new(&err);
    if (!h)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 64 << 20);
    char *url = url_of(llm_port, "/__log");
    sl_http_opts *o = sl_http_opts_of(h);
    o->timeout_s = 10;
    o->on_body = collect;
    o->ud = &b;
    sl_http_url(h, url);
    sl_http_perform(h);
    sl_value *v = b.len ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    sl_buf_release(&b);
    sl_http_free(h);
    free(url);
    return v;
}

/* What the router sent: the request llmd logged last. */
static void test_router_request(void)
{
    char *cfg_text = sl_xasprintf(
        "llm:\n  providers:\n    local: {style: openai, base_url: 'http://127.0.0.1:%d/v1', "
        "api_key: k}\n"
        "knowledge:\n  datasets:\n"
        "    ext1: {external: {endpoint: 'http://127.0.0.1:%d/api', knowledge_id: open-good, "
        "allow_private: true}}\n"
        "    'odd id!': {external: {endpoint: 'http://127.0.0.1:%d/api', knowledge_id: "
        "open-good, allow_private: true}}\n",
        llm_port, kb_port, kb_port);
    sl_err err = {0};
    sl_config *c = load_config(cfg_text, &err);
    free(cfg_text);
    sl_diag d;
    kr_run o;
    run_kr(c, "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "
              "dataset_ids: [ext1, 'odd id!'], retrieval_mode: single, single_retrieval_config: "
              "{model: {provider: local, name: 'tool:dataset_1', mode: chat}}}",
           "{\"q\":\"which?\"}", &d, &o);
    CHECK(!strcmp(json_string_value(json_object_get(o.process, "dataset_chosen")) ?: "",
                  "odd id!"),
          "an id that is no valid tool name is offered as dataset_N (%s)",
          o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);
    sl_config_free(c);
    sl_err_clear(&err);
    /* the request, from llmd's log */
    sl_value *log = llmd_log();
    const sl_value *last = json_array_get(log, json_array_size(log) - 1);
    const sl_value *body = json_object_get(last, "body");
    const sl_value *msgs = json_object_get(body, "messages");
    const sl_value *tools = json_object_get(body, "tools");
    char *s = show(tools);
    CHECK(json_array_size(msgs) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(msgs, 0), "content")) ?: "",
                      "You are a helpful AI assistant.") &&
              !strcmp(json_string_value(json_object_get(json_array_get(msgs, 1), "content")) ?: "",
                      "which?"),
          "the router's messages: Dify's system prompt, then the query");
    CHECK(json_real_value(json_object_get(body, "temperature")) == 0.2 &&
              json_real_value(json_object_get(body, "top_p")) == 0.3 &&
              json_integer_value(json_object_get(body, "max_tokens")) == 1500,
          "the router's parameters are Dify's (temperature 0.2, top_p 0.3, max_tokens 1500)");
    CHECK(strstr(s, "\"name\":\"ext1\"") && strstr(s, "\"name\":\"dataset_1\"") &&
              strstr(s, "useful for when you want to answer queries about the odd id!") &&
              strstr(s, "\"properties\":{}"),
          "one tool per knowledge base, named by its id, described as Dify does: %s", esc(s));
    free(s);
    json_decref(log);
}

/* ---- the node on sluice's knowledge bases ---- */

static char *add_doc(sl_kb *kb, const char *kb_id, const char *name, const char *text)
{
    sl_kb_doc_in in = {.name = name, .text = text, .len = strlen(text)};
    sl_value *doc = NULL;
    bool unchanged = false;
    sl_err err = {0};
    int rc = sl_kb_add(kb, kb_id, &in, &doc, &unchanged, &err);
    CHECK(rc == 0 && doc, "document %s added (%s)", name, err.msg ? esc(err.msg) : "ok");
    char *id = sl_xstrdup(json_string_value(json_object_get(doc, "id")) ?: "");
    json_decref(doc);
    sl_err_clear(&err);
    return id;
}

static char *make_kb(sl_kb *kb, const char *spec_json)
{
    sl_value *spec = J(spec_json), *ds = NULL;
    sl_err err = {0};
    int rc = sl_kb_create(kb, spec, &ds, &err);
    CHECK(rc == 0 && ds, "knowledge base %s made (%s)",
          json_string_value(json_object_get(spec, "name")), err.msg ? esc(err.msg) : "ok");
    char *id = sl_xstrdup(json_string_value(json_object_get(ds, "id")) ?: "");
    json_decref(spec);
    json_decref(ds);
    sl_err_clear(&err);
    return id;
}

static int run_kb(sl_config *c, sl_kb *kb, const char *kr_data, const char *inputs, sl_diag *d,
                  kr_run *o)
{
    sl_config_set_kb(c, kb);
    char *text = workflow(kr_data);
    sl_graph g;
    sl_err err = {0};
    sl_diag_init(d);
    int rc = sl_graph_load_text(&g, &sl_nodes, c, text, strlen(text), "kr.yml", d, &err);
    free(text);
    memset(o, 0, sizeof *o);
    if (rc < 0) {
        o->error = sl_xstrdup(d->n ? d->v[0].msg : err.msg ? err.msg : "?");
        sl_err_clear(&err);
        sl_graph_release(&g);
        return rc;
    }
    sl_run_opts opts;
    sl_run_opts_init(&opts);
    sl_value *in = J(inputs);
    opts.inputs = in;
    opts.config = c;
    opts.kb = kb;
    opts.on_event = on_event;
    opts.event_ud = o;
    sl_run *r = sl_run_new(&g, &opts);
    sl_run_exec(r, &err);
    o->status = sl_run_status_name(sl_run_status_of(r));
    sl_err_clear(&err);
    sl_run_free(r);
    json_decref(in);
    sl_graph_release(&g);
    return 0;
}

#define KB_MULTI(ids, cfg, extra)                                                            \
    "{type: knowledge-retrieval, title: Search, query_variable_selector: [start, q], "      \
    "dataset_ids: " ids ", retrieval_mode: multiple, multiple_retrieval_config: " cfg extra "}"

static bool all_from(const kr_run *o, const char *key, const char *want)
{
    const sl_value *r = json_object_get(o->outputs, "result");
    for (size_t i = 0; i < json_array_size(r); i++)
        if (strcmp(meta_s(o, i, key) ?: "", want))
            return false;
    return json_array_size(r) > 0;
}

static void test_kb_node(void)
{
    char *cfg_text = sl_xasprintf(
        "llm:\n  providers:\n    local: {style: openai, base_url: 'http://127.0.0.1:%d/v1', "
        "api_key: k}\n"
        "knowledge:\n  datasets:\n"
        "    dify-hb: handbook\n"
        "    dify-gone: no-such-kb\n",
        llm_port);
    sl_err err = {0};
    sl_config *c = load_config(cfg_text, &err);
    free(cfg_text);
    char *dir = sl_xasprintf("%s/data", tmpdir);
    sl_store *st = NULL;
    int interrupted = 0;
    if (!c || sl_store_open(dir, &st, &interrupted, &err)) {
        CHECK(0, "a store for knowledge bases opens (%s)", err.msg ? esc(err.msg) : "?");
        sl_err_clear(&err);
        sl_config_free(c);
        free(dir);
        return;
    }
    free(dir);
    sl_kb_env env = {.store = st, .config = c};
    sl_kb_limits_default(&env.limits);
    sl_kb *kb = sl_kb_open(&env, &err);
    CHECK(kb != NULL, "knowledge bases open (%s)", err.msg ? esc(err.msg) : "ok");
    if (!kb) {
        sl_err_clear(&err);
        sl_store_close(st);
        sl_config_free(c);
        return;
    }
    static const char RM[] = "\"retrieval_model\": {\"search_method\": \"semantic_search\", "
                             "\"reranking_enable\": false, \"top_k\": 4, "
                             "\"score_threshold_enabled\": false}";
    char *spec = sl_xasprintf("{\"name\": \"handbook\", \"description\": \"Company rules\", "
                              "\"indexing_technique\": \"high_quality\", \"embedding_model\": "
                              "\"hash\", \"embedding_model_provider\": \"local\", %s}", RM);
    char *hb = make_kb(kb, spec);
    free(spec);
    spec = sl_xasprintf("{\"name\": \"faq\", \"indexing_technique\": \"high_quality\", "
                        "\"embedding_model\": \"hash\", \"embedding_model_provider\": "
                        "\"local\", %s}", RM);
    char *faq = make_kb(kb, spec);
    free(spec);
    spec = sl_xasprintf("{\"name\": \"other\", \"indexing_technique\": \"high_quality\", "
                        "\"embedding_model\": \"hash:64\", \"embedding_model_provider\": "
                        "\"local\", %s}", RM);
    char *other = make_kb(kb, spec);
    free(spec);
    char *vac = add_doc(kb, hb, "vacation.txt", "Employees get 25 vacation days per year. "
                        "Vacation requests go to the manager.");
    char *sec = add_doc(kb, hb, "security.txt", "Badges must be worn at all times. Lost "
                        "badges are reported to security.");
    char *wifi = add_doc(kb, faq, "wifi.txt", "The wifi password is on the kitchen wall.");
    char *oth = add_doc(kb, other, "misc.txt", "Vacation days are counted in the calendar.");
    (void)sec;
    (void)wifi;
    (void)oth;
    sl_diag d;
    kr_run o;

    /* bound by name (no line) and through sluice.yml's line */
    int rc = run_kb(c, kb, KB_MULTI("[handbook, dify-hb, dify-gone]",
                                    "{top_k: 3, reranking_enable: false}", ""),
                    "{\"q\":\"how many vacation days do employees get, and lost badges\"}", &d, &o);
    bool gone = false;
    for (size_t i = 0; i < d.n; i++)
        gone |= strstr(d.v[i].msg, "no-such-kb") && strstr(d.v[i].msg, "does not exist") != NULL;
    CHECK(rc == 0 && d.n == 1 && gone,
          "with the store open, a knowledge base's name binds without a line and a line naming "
          "none is reported (%s)", d.n ? esc(d.v[0].msg) : "no warning");
    char *s = show(item(&o, 0));
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              json_array_size(json_object_get(o.outputs, "result")) == 2 &&
              !strcmp(meta_s(&o, 0, "document_name") ?: "", "vacation.txt") &&
              strstr(json_string_value(json_object_get(item(&o, 0), "content")) ?: "", "25 vacation"),
          "the best chunk answers the query; the knowledge base named twice is searched once "
          "(%s)", o.error ? esc(o.error) : esc(s));
    CHECK(!strcmp(meta_s(&o, 0, "_source") ?: "", "knowledge") &&
              !strcmp(meta_s(&o, 0, "dataset_id") ?: "", hb) &&
              !strcmp(meta_s(&o, 0, "dataset_name") ?: "", "handbook") &&
              !strcmp(meta_s(&o, 0, "document_id") ?: "", vac) &&
              meta_s(&o, 0, "segment_id") && meta_s(&o, 0, "data_source_type") &&
              !strcmp(meta_s(&o, 0, "retriever_from") ?: "", "workflow") &&
              meta_score(&o, 0) > 0 &&
              json_is_array(json_object_get(json_object_get(item(&o, 0), "metadata"),
                                            "child_chunks")) &&
              json_is_integer(json_object_get(json_object_get(item(&o, 0), "metadata"),
                                              "segment_position")) &&
              json_is_integer(json_object_get(json_object_get(item(&o, 0), "metadata"),
                                              "segment_word_count")) &&
              !strcmp(json_string_value(json_object_get(item(&o, 0), "title")) ?: "",
                      "vacation.txt"),
          "a chunk is Dify's result item: %s", esc(s));
    free(s);
    CHECK(meta_score(&o, 0) > meta_score(&o, 1) &&
              json_integer_value(json_object_get(json_object_get(item(&o, 1), "metadata"),
                                                 "position")) == 2,
          "best first (%g, %g)", meta_score(&o, 0), meta_score(&o, 1));
    CHECK(json_integer_value(json_object_get(o.meta, "total_tokens")) > 0,
          "the query's embedding tokens count into the node's usage (%lld)",
          (long long)json_integer_value(json_object_get(o.meta, "total_tokens")));
    s = show(json_object_get(o.process, "skipped_datasets"));
    CHECK(strstr(s, "dify-gone") && strstr(s, "no-such-kb"), "the id bound to no knowledge "
          "base is skipped: %s", esc(s));
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* two knowledge bases reranked by a model */
    run_kb(c, kb, KB_MULTI("[handbook, faq]", "{top_k: 2, reranking_enable: true, "
                           "reranking_mode: reranking_model, reranking_model: {provider: local, "
                           "model: overlap}}", ""),
           "{\"q\":\"wifi password\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              json_array_size(json_object_get(o.outputs, "result")) == 2 &&
              !strcmp(meta_s(&o, 0, "dataset_name") ?: "", "faq"),
          "two knowledge bases reranked together: the wifi chunk first, top_k kept (%s)",
          o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);

    /* weighted scores need one embedding model */
    run_kb(c, kb, KB_MULTI("[handbook, other]", "{top_k: 2, reranking_enable: true, "
                           "reranking_mode: weighted_score, weights: {vector_setting: "
                           "{vector_weight: 0.7}, keyword_setting: {keyword_weight: 0.3}}}", ""),
           "{\"q\":\"vacation\"}", &d, &o);
    CHECK(o.error && !strcmp(o.error, "The configured knowledge base list have different "
                             "embedding model, please set reranking model."),
          "weighted scores over two embedding models: Dify's error (%s)", esc(o.error));
    kr_release(&o);
    sl_diag_release(&d);
    run_kb(c, kb, KB_MULTI("[handbook, faq]", "{top_k: 3, reranking_enable: true, "
                           "reranking_mode: weighted_score, weights: {vector_setting: "
                           "{vector_weight: 0.7}, keyword_setting: {keyword_weight: 0.3}}}", ""),
           "{\"q\":\"vacation days\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") && json_array_size(json_object_get(o.outputs,
                                                                                  "result")) &&
              !strcmp(meta_s(&o, 0, "document_name") ?: "", "vacation.txt"),
          "weighted scores over one embedding model (%s)", o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);

    /* metadata: manual and automatic */
    sl_value *field = NULL, *vals = J("{\"dept\": \"hr\"}");
    rc = sl_kb_field_add(kb, hb, "dept", "string", &field, &err);
    if (!rc)
        rc = sl_kb_doc_meta(kb, hb, vac, vals, false, &err);
    CHECK(rc == 0, "a metadata field set on a document (%s)", err.msg ? esc(err.msg) : "ok");
    sl_err_clear(&err);
    json_decref(field);
    json_decref(vals);
    run_kb(c, kb, KB_MULTI("[handbook]", "{top_k: 4, reranking_enable: false}",
                           ", metadata_filtering_mode: manual, metadata_filtering_conditions: "
                           "{logical_operator: and, conditions: [{name: dept, "
                           "comparison_operator: is, value: \" hr\\n\"}]}"),
           "{\"q\":\"badges and vacation\"}", &d, &o);
    s = show(o.outputs);
    CHECK(!strcmp(o.status ?: "", "succeeded") && all_from(&o, "document_name", "vacation.txt"),
          "a manual condition keeps only the documents it matches (%s)",
          o.error ? esc(o.error) : esc(s));
    free(s);
    kr_release(&o);
    sl_diag_release(&d);
    run_kb(c, kb, KB_MULTI("[handbook]", "{top_k: 4, reranking_enable: false}",
                           ", metadata_filtering_mode: manual, metadata_filtering_conditions: "
                           "{conditions: [{name: dept, comparison_operator: is, value: it}]}"),
           "{\"q\":\"badges and vacation\"}", &d, &o);
    s = show(o.outputs);
    CHECK(!strcmp(s, "{\"result\":[]}"), "a condition no document matches gives []: %s", s);
    free(s);
    kr_release(&o);
    sl_diag_release(&d);
    run_kb(c, kb, KB_MULTI("[handbook]", "{top_k: 4, reranking_enable: false}",
                           ", metadata_filtering_mode: automatic, metadata_model_config: "
                           "{provider: local, name: 'json:{\"metadata_map\": [{"
                           "\"metadata_field_name\": \"dept\", \"metadata_field_value\": "
                           "\"hr\", \"comparison_operator\": \"is\"}, {\"metadata_field_name\": "
                           "\"colour\", \"metadata_field_value\": \"red\", "
                           "\"comparison_operator\": \"is\"}]}', mode: chat}"),
           "{\"q\":\"what does HR say about vacation days\"}", &d, &o);
    s = show(json_object_get(o.process, "metadata_filter"));
    CHECK(!strcmp(o.status ?: "", "succeeded") &&
              !strcmp(s, "{\"logical_operator\":\"or\",\"conditions\":[{\"name\":\"dept\","
                         "\"comparison_operator\":\"is\",\"value\":\"hr\"}]}") &&
              all_from(&o, "document_name", "vacation.txt") && json_object_get(o.process, "usage"),
          "automatic: the model's conditions on known fields, logical operator or: %s (%s)", s,
          o.error ? esc(o.error) : "ok");
    free(s);
    kr_release(&o);
    sl_diag_release(&d);

    /* single: the model picks faq */
    run_kb(c, kb, "{type: knowledge-retrieval, title: Search, query_variable_selector: "
                  "[start, q], dataset_ids: [dify-hb, faq], retrieval_mode: single, "
                  "single_retrieval_config: {model: {provider: local, name: 'tool:faq', "
                  "mode: chat}}}",
           "{\"q\":\"wifi password\"}", &d, &o);
    CHECK(!strcmp(o.status ?: "", "succeeded") && all_from(&o, "dataset_name", "faq"),
          "single: the knowledge base the model picks is searched (%s)",
          o.error ? esc(o.error) : "ok");
    kr_release(&o);
    sl_diag_release(&d);
    sl_value *log = llmd_log();
    const sl_value *tools = NULL;
    for (size_t i = json_array_size(log); i-- > 0 && !tools;)
        tools = json_object_get(json_object_get(json_array_get(log, i), "body"), "tools");
    s = show(tools);
    CHECK(strstr(s, "\"name\":\"dify-hb\"") && strstr(s, "\"description\":\"Company rules\"") &&
              strstr(s, "\"name\":\"faq\"") &&
              strstr(s, "useful for when you want to answer queries about the faq"),
          "the router's tools: the DSL ids, the description or Dify's default: %s", esc(s));
    free(s);
    json_decref(log);

    free(hb);
    free(faq);
    free(other);
    free(vac);
    free(sec);
    free(wifi);
    free(oth);
    sl_config_set_kb(c, NULL);
    sl_kb_close(kb);
    sl_store_close(st);
    sl_config_free(c);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    pid_t kb = start_stand_in("kb_external_standin", true, &kb_port);
    pid_t llm = start_llmd(&llm_port);
    CHECK(kb > 0 && llm > 0, "the stand-ins start (kb %d, llm %d)", kb_port, llm_port);
    if (kb > 0 && llm > 0) {
        test_external();
        test_config();
        test_node();
        test_router_request();
        test_kb_node();
    }
    if (kb > 0) {
        kill(kb, SIGTERM);
        waitpid(kb, NULL, 0);
    }
    if (llm > 0) {
        kill(llm, SIGTERM);
        waitpid(llm, NULL, 0);
    }
    char *rm = sl_xasprintf("rm -rf %s", tmpdir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    free(rm);
    return tap_done();
}
