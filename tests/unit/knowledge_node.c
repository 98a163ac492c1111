/*
 * knowledge_node — what the knowledge-retrieval node stands on: the
 * External Knowledge API client (knowledge/external.h) against a stand-in
 * service (tests/tools/kb_external_standin.py), and sluice.yml's
 * knowledge.datasets bindings (engine/config.h).
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
#include "net/http.h"
#include "nodes/registry.h"
#include "tap.h"
#include "util.h"

static int kb_port;
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

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    pid_t kb = start_stand_in("kb_external_standin", true, &kb_port);
    CHECK(kb > 0, "the stand-in starts (port %d)", kb_port);
    if (kb > 0) {
        test_external();
        test_config();
    }
    if (kb > 0) {
        kill(kb, SIGTERM);
        waitpid(kb, NULL, 0);
    }
    char *rm = sl_xasprintf("rm -rf %s", tmpdir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    free(rm);
    return tap_done();
}
