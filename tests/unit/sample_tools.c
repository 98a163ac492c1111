/*
 * sample_tools — every `tool` node of the shared Dify exports
 * (dsl-samples/ under SLUICE_SHARED, else ../shared) runs or is refused at
 * load by name, with the binding to add (issue 16).
 *
 * For each tool node of each sample:
 *  - one that nothing binds (no sluice.yml here, no built-in) must be
 *    refused when its file loads: an error that names the node and holds
 *    the lines `sluice validate` gives to bind its provider;
 *  - one that is bound (a built-in) must load without an error of its own
 *    and run: its data, as the sample writes it, in a workflow of its own
 *    whose start node takes the id of the node its parameters read from;
 *    any bound provider not in `hermetic` below (a built-in that needs a
 *    vendor's service, which this machine does not reach) must end,
 *    succeeded or failed with an error naming its tool, within the time
 *    the test gives it;
 *  - a provider in `hermetic`, bound or not, runs so with the binding the
 *    table gives it, against tests/tools/httpd.py (a page, or a vendor's
 *    API as its stand-ins speak it), and must succeed with the text the
 *    table says in its text or json.
 * Without the shared folder every check is skipped (and counted so).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsl/yaml.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/run.h"
#include "nodes/registry.h"
#include "nodes/toolcall.h"
#include "tap.h"
#include "tmpl/ref.h"
#include "tools/binding.h"
#include "util.h"

static pid_t httpd_pid;
static FILE *httpd_in;
static char httpd_url[64];

/* Providers a sample's node can run with here: what each of its
 * parameters gets (a path on httpd, or a word when not starting with /),
 * the binding it runs with (sluice.yml's `tools` entry, its base URL
 * relative to httpd; NULL: none) and text its answer must hold. */
static const struct {
    const char *provider_id;
    const char *input;
    const char *binding;
    const char *want;
} hermetic[] = {
    {"webscraper", "/inline?type=text/html&body=%3Chtml%3E%3Chead%3E%3Ctitle%3ESample%3C%2Ftitle"
                   "%3E%3C%2Fhead%3E%3Cbody%3E%3Cp%3Esluice%20sample%20page%3C%2Fp%3E%3C%2Fbody"
                   "%3E%3C%2Fhtml%3E", NULL, "TITLE: Sample"},
    /* Tavily's API as tests/tools/vendor_standin.py speaks it */
    {"tavily", "sluice", "{builtin: {api_key: tvly-test-key, base_url: \"%s/vendor/tavily/\"}}",
     "[Result for sluice]"},
    /* DuckDuckGo's HTML search as httpd.py's /ddg answers (json messages) */
    {"duckduckgo", "sluice", "{builtin: {base_url: \"%s/ddg\"}}", "'href': 'https://example.com/sluice/1'"},
    /* Jina's reader, the same way */
    {"jina", "https://example.com/sample", "{builtin: {api_key: jina-test-key, base_url: "
     "\"%s/vendor/jina/r\"}}", "Hello from https://example.com/sample"},
};

/* The settings hermetic providers run with: their bindings (new). */
static sl_config *standin_config(void)
{
    char path[] = "/tmp/sluice-sample-tools-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "tools:\n");
    for (size_t i = 0; i < sizeof hermetic / sizeof *hermetic; i++)
        if (hermetic[i].binding) {
            fprintf(f, "  %s: ", hermetic[i].provider_id);
            fprintf(f, hermetic[i].binding, httpd_url);
            fprintf(f, "\n");
        }
    fclose(f);
    sl_config *c = NULL;
    sl_err err = {0};
    if (sl_config_load(path, &c, &err))
        fprintf(stderr, "sample_tools: %s\n", err.msg);
    sl_err_clear(&err);
    unlink(path);
    return c;
}

static int start_httpd(void)
{
    int out[2], in[2];
    if (pipe(out) < 0 || pipe(in) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execlp("python3", "python3", "tests/tools/httpd.py", "0", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    httpd_in = fdopen(in[1], "w"); /* closing it tells the server to exit */
    FILE *f = fdopen(out[0], "r");
    char line[64];
    if (!f || !fgets(line, sizeof line, f)) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(httpd_url, sizeof httpd_url, "http://127.0.0.1:%d", atoi(line));
    httpd_pid = pid;
    return 0;
}

static void stop_httpd(void)
{
    if (httpd_in)
        fclose(httpd_in);
    if (httpd_pid > 0) {
        kill(httpd_pid, SIGTERM);
        waitpid(httpd_pid, NULL, 0);
    }
}

static const char *str(const sl_value *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- the references a node's parameters read ---- */

typedef struct {
    sl_value *vars; /* source node id -> {variable: true} */
} refs;

static void add_ref(refs *r, const char *node, const char *var)
{
    if (!strcmp(node, "sys") || !strcmp(node, "env") || !strcmp(node, "conversation"))
        return;
    sl_value *o = json_object_get(r->vars, node);
    if (!o) {
        o = json_object();
        json_object_set_new(r->vars, node, o);
    }
    json_object_set_new(o, var, json_true());
}

static int visit(void *ud, const char *const *parts, int n)
{
    if (n >= 2)
        add_ref(ud, parts[0], parts[1]);
    return 0;
}

static void scan_inputs(refs *r, const sl_value *m)
{
    const char *k;
    const sl_value *in;
    json_object_foreach((sl_value *)m, k, in) {
        const char *type = str(in, "type");
        const sl_value *v = json_object_get(in, "value");
        if (type && !strcmp(type, "mixed") && json_is_string(v))
            sl_ref_scan(json_string_value(v), visit, r);
        else if (type && !strcmp(type, "variable") && json_array_size(v) >= 2 &&
                 json_is_string(json_array_get(v, 0)) && json_is_string(json_array_get(v, 1)))
            add_ref(r, json_string_value(json_array_get(v, 0)),
                    json_string_value(json_array_get(v, 1)));
    }
}

/* ---- one bound node, run on its own ---- */

static sl_config *standin_cfg;

static void run_alone(const char *file, const sl_value *node, const sl_config *cfg)
{
    const char *id = str(node, "id");
    const sl_value *data = json_object_get(node, "data");
    const char *pid = str(data, "provider_id"), *tname = str(data, "tool_name");
    int h = -1;
    for (size_t i = 0; i < sizeof hermetic / sizeof *hermetic && h < 0; i++)
        if (pid && !strcmp(pid, hermetic[i].provider_id))
            h = (int)i;
    if (h >= 0 && standin_cfg)
        cfg = standin_cfg;
    refs r = {json_object()};
    scan_inputs(&r, json_object_get(data, "tool_parameters"));
    scan_inputs(&r, json_object_get(data, "tool_configurations"));
    if (json_object_size(r.vars) > 1) {
        CHECK(0, "%s: node '%s' (%s): its parameters read %zu nodes; this test feeds one",
              file, id, tname, json_object_size(r.vars));
        json_decref(r.vars);
        return;
    }
    const char *src = "start";
    const sl_value *vars = NULL;
    const char *k;
    sl_value *v;
    json_object_foreach(r.vars, k, v) {
        src = k;
        vars = v;
    }
    /* start (with the id the parameters read) -> the node -> end */
    sl_value *svars = json_array(), *inputs = json_object();
    json_object_foreach((sl_value *)vars, k, v) {
        json_array_append_new(svars, json_pack("{s:s, s:s, s:s, s:b, s:i}", "variable", k,
                                               "label", k, "type", "paragraph", "required", 1,
                                               "max_length", 100000));
        char *val = h < 0                        ? sl_xstrdup("sluice")
                    : hermetic[h].input[0] == '/' ? sl_xasprintf("%s%s", httpd_url,
                                                                 hermetic[h].input)
                                                  : sl_xstrdup(hermetic[h].input);
        json_object_set_new(inputs, k, json_string(val));
        free(val);
    }
    sl_value *d = json_deep_copy(data);
    const char *inner[] = {"iteration_id", "isInIteration", "loop_id", "isInLoop"};
    for (size_t i = 0; i < sizeof inner / sizeof *inner; i++)
        json_object_del(d, inner[i]);
    /* a chatflow, so that sys.query (which the samples' nodes read) is the
     * query; its answer shows the node's text and json messages */
    char *answer = sl_xasprintf("{{#%s.text#}} {{#%s.json#}}", id, id);
    sl_value *doc = json_pack(
        "{s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:s, s:o}}, {s:s, s:o}, "
        "{s:s, s:{s:s, s:s, s:s}}], s:[{s:s, s:s}, {s:s, s:s}]}}}",
        "version", "0.1.5", "app", "mode", "advanced-chat", "name", "sample tool",
        "workflow", "graph", "nodes",
        "id", src, "data", "type", "start", "title", "Start", "variables", svars,
        "id", id, "data", d,
        "id", "sample_answer", "data", "type", "answer", "title", "Answer", "answer", answer,
        "edges", "source", src, "target", id, "source", id, "target", "sample_answer");
    free(answer);
    char *text = json_dumps(doc, JSON_COMPACT); /* JSON is YAML */
    json_decref(doc);
    sl_graph g;
    sl_diag diag;
    sl_diag_init(&diag);
    sl_err err = {0};
    if (sl_graph_load_text(&g, &sl_nodes, cfg, text, strlen(text), file, &diag, &err)) {
        CHECK(0, "%s: node '%s' (%s) loads on its own # %s", file, id, tname,
              diag.n ? diag.v[0].msg : err.msg ? err.msg : "?");
        sl_graph_release(&g);
        goto out;
    }
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = cfg;
    o.inputs = inputs;
    o.query = h >= 0 && hermetic[h].input[0] != '/' ? hermetic[h].input : "sluice";
    sl_limits_set(&o.limits, "tool_allow_private=true", &err);
    sl_limits_set(&o.limits, "tool_timeout_s=15", &err);
    sl_limits_set(&o.limits, "max_time_s=30", &err);
    sl_err_clear(&err);
    sl_run *run = sl_run_new(&g, &o);
    sl_run_exec(run, &err);
    sl_run_status st = sl_run_status_of(run);
    const char *got = json_string_value(json_object_get(sl_run_outputs(run), "answer"));
    const char *why = sl_run_error(run) ? sl_run_error(run) : "";
    if (h >= 0)
        CHECK(st == SL_RUN_SUCCEEDED && got && strstr(got, hermetic[h].want),
              "%s: node '%s' (%s/%s) runs against its stand-in and answers # %s: %s", file, id,
              pid, tname, sl_run_status_name(st), esc(got ? got : why));
    else
        CHECK(st == SL_RUN_SUCCEEDED || (st == SL_RUN_FAILED && tname && strstr(why, tname)),
              "%s: node '%s' (%s/%s) is bound, and runs or fails naming its tool # %s: %s",
              file, id, pid, tname, sl_run_status_name(st), esc(got ? got : why));
    sl_run_free(run);
    sl_graph_release(&g);
out:
    sl_err_clear(&err);
    sl_diag_release(&diag);
    free(text);
    json_decref(inputs);
    json_decref(r.vars);
}

/* ---- one sample ---- */

static int sample(const char *dir, const char *name, const sl_config *cfg)
{
    char *path = sl_xasprintf("%s/%s", dir, name);
    size_t len = 0;
    char *text = slurp(path, &len);
    sl_yaml_doc doc;
    sl_err err = {0};
    int found = 0;
    if (!text || sl_yaml_parse(text, len, path, &doc, &err)) {
        CHECK(0, "%s: reads as YAML # %s", name, err.msg ? err.msg : strerror(errno));
        sl_err_clear(&err);
        free(text);
        free(path);
        return 0;
    }
    const sl_value *nodes = json_object_get(json_object_get(json_object_get(doc.root,
                                                                            "workflow"),
                                                            "graph"), "nodes");
    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    sl_graph_load_file(&g, &sl_nodes, cfg, path, &d, &err);  /* refused or not: d says */
    sl_graph_release(&g);
    sl_err_clear(&err);
    size_t i;
    const sl_value *n;
    json_array_foreach(nodes, i, n) {
        const sl_value *data = json_object_get(n, "data");
        const char *type = str(data, "type"), *id = str(n, "id");
        if (!type || strcmp(type, "tool") || !id)
            continue;
        found++;
        const char *pid = str(data, "provider_id"), *pname = str(data, "provider_name");
        const char *tname = str(data, "tool_name"), *ptype = str(data, "provider_type");
        char *who = sl_xasprintf("node '%s'", id);
        const sl_diag_entry *mine = NULL;
        for (size_t e = 0; e < d.n && !mine; e++)
            if (!d.v[e].warning && strstr(d.v[e].msg, who))
                mine = &d.v[e];
        const sl_binding *b = sl_toolcall_binding(NULL, cfg, pid, pname);
        if (!b) {
            char *hint = sl_bindings_hint(pid && *pid ? pid : pname, ptype);
            CHECK(mine && strstr(mine->msg, "is not bound to a real tool") &&
                      strstr(mine->msg, hint),
                  "%s: node '%s' (%s/%s) is refused at load, with the binding to add # %s",
                  name, id, pid ? pid : pname, tname, esc(mine ? mine->msg : "no error"));
            free(hint);
            for (size_t k = 0; k < sizeof hermetic / sizeof *hermetic; k++)
                if (pid && !strcmp(pid, hermetic[k].provider_id))
                    run_alone(name, n, cfg);  /* bound, it runs */
        } else {
            CHECK(!mine, "%s: node '%s' (%s/%s) is bound to '%s' and loads # %s", name, id,
                  pid ? pid : pname, tname, sl_binding_id(b), esc(mine ? mine->msg : ""));
            run_alone(name, n, cfg);
        }
        free(who);
    }
    sl_diag_release(&d);
    sl_yaml_doc_release(&doc);
    free(text);
    free(path);
    return found;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char *dir = shared_path("dsl-samples");
    DIR *dd = opendir(dir);
    if (!dd) {
        SKIP("every tool node of the shared Dify exports", "no %s (%s); SLUICE_SHARED names the "
             "folder that holds dsl-samples/", dir, strerror(errno));
        free(dir);
        return tap_done();
    }
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(dd)) != NULL) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] != '.' && l > 4 && !strcmp(de->d_name + l - 4, ".yml")) {
            names = sl_xrealloc(names, (nn + 1) * sizeof *names);
            names[nn++] = sl_xstrdup(de->d_name);
        }
    }
    closedir(dd);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    if (start_httpd())
        fprintf(stderr, "sample_tools: tests/tools/httpd.py did not start\n");
    sl_config *cfg = sl_config_default();
    standin_cfg = httpd_pid > 0 ? standin_config() : NULL;
    int found = 0;
    for (size_t i = 0; i < nn; i++) {
        found += sample(dir, names[i], cfg);
        free(names[i]);
    }
    free(names);
    CHECK(found > 0, "the samples have tool nodes (%d found)", found);
    sl_config_free(cfg);
    sl_config_free(standin_cfg);
    stop_httpd();
    free(dir);
    return tap_done();
}
