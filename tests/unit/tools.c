/*
 * tools — the tool layer without a server: bindings from sluice.yml and
 * from a bundle (errors with file:line, credentials masked, the untrusted
 * bundle refused the environment), the tool node and a classic agent over
 * an in-process toolset, argument coercion, and --record / --replay of
 * tool calls (the replay contacts no toolset at all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/secret.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "llm/llm.h"
#include "nodes/registry.h"
#include "nodes/toolcall.h"
#include "tap.h"
#include "tools/binding.h"
#include "tools/mcp.h"
#include "util.h"

/* ---- an in-process toolset ---- */

typedef struct {
    sl_toolset base;
    int calls, lists;
} fake_ts;

static int fake_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)ctx;
    (void)err;
    ((fake_ts *)t)->lists++;
    *out = J("[{\"name\": \"echo\", \"description\": \"echo\", \"inputSchema\": {\"type\": "
             "\"object\", \"properties\": {\"text\": {\"type\": \"string\"}, \"n\": {\"type\": "
             "\"integer\"}, \"flag\": {\"type\": \"boolean\"}, \"l\": {\"type\": \"array\"}}}},"
             "{\"name\": \"files\", \"inputSchema\": {\"type\": \"object\"}},"
             "{\"name\": \"boom\", \"inputSchema\": {\"type\": \"object\"}}]");
    return 0;
}

static int fake_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name,
                     const sl_value *args, sl_tool_result *res, sl_err *err)
{
    ((fake_ts *)t)->calls++;
    if (!strcmp(name, "boom"))
        return sl_err_set(err, SL_EIO, "the server hung up");
    if (!strcmp(name, "files")) {
        sl_tool_result_file(res, "", "image/png", "\x89PNG\r\n\x1a\n", 8);
        sl_buf_adds(&res->text, "made one");
        return sl_tool_result_charge(res, ctx, 16, err);
    }
    char *s = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
    sl_buf_adds(&res->text, s);
    json_array_append_new(res->json, json_pack("{s:s}", "seen", name));
    int rc = sl_tool_result_charge(res, ctx, strlen(s), err);
    free(s);
    return rc;
}

static void fake_free(sl_toolset *t)
{
    free(t);
}

static const sl_toolset_ops fake_ops = {"fake", fake_list, fake_call, NULL, fake_free};

static fake_ts *fake_new(void)
{
    fake_ts *f = sl_xcalloc(1, sizeof *f);
    f->base.ops = &fake_ops;
    return f;
}

/* ---- helpers ---- */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int load_cfg(const char *yaml, sl_config **cfg, sl_err *err)
{
    char path[] = "/tmp/sluice-tools-test-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    write_file(path, yaml);
    int rc = sl_config_load(path, cfg, err);
    unlink(path);
    return rc;
}

static const char *const node_dsl =
    "app: {mode: workflow, name: t}\n"
    "kind: app\n"
    "version: 0.1.5\n"
    "workflow:\n"
    "  graph:\n"
    "    nodes:\n"
    "    - {id: start, data: {type: start, title: Start, variables: [{variable: x, type: "
    "text-input, label: x}]}}\n"
    "    - id: t\n"
    "      data:\n"
    "        type: tool\n"
    "        title: T\n"
    "        provider_id: langgenius/fake/fake\n"
    "        provider_type: plugin\n"
    "        tool_name: echo\n"
    "        tool_parameters:\n"
    "          text: {type: mixed, value: 'say {{#start.x#}}'}\n"
    "          n: {type: constant, value: 1}\n"
    "          gone: null\n"
    "        tool_configurations: {n: '7', flag: 1, l: '[1, 2]', nothing: null}\n"
    "    - id: f\n"
    "      data: {type: tool, title: F, provider_id: fake, provider_type: builtin, tool_name: "
    "files, tool_parameters: {}, tool_configurations: {}}\n"
    "    - id: end\n"
    "      data: {type: end, title: End, outputs: [{variable: text, value_selector: [t, text]}, "
    "{variable: json, value_selector: [t, json]}, {variable: ftext, value_selector: [f, text]}, "
    "{variable: fjson, value_selector: [f, json]}, {variable: files, value_selector: [f, files]}]}\n"
    "    edges:\n"
    "    - {source: start, target: t}\n"
    "    - {source: t, target: f}\n"
    "    - {source: f, target: end}\n";

/* Runs node_dsl with x; *outputs new, or NULL with *why. */
static int run_dsl(const char *dsl, const sl_config *cfg, sl_llm_tape *tape, const char *x,
                   sl_value **outputs, char **why)
{
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    *outputs = NULL;
    *why = NULL;
    if (sl_graph_load_text(&g, &sl_nodes, cfg, dsl, strlen(dsl), "t.yml", &d, &err)) {
        *why = sl_xasprintf("load: %s %s", err.msg, d.n ? d.v[0].msg : "");
        sl_err_clear(&err);
        sl_diag_release(&d);
        sl_graph_release(&g);
        return -1;
    }
    sl_diag_release(&d);
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = cfg;
    o.llm_tape = tape;
    sl_value *in = json_pack("{s:s}", "x", x);
    o.inputs = in;
    sl_run *r = sl_run_new(&g, &o);
    int rc = sl_run_exec(r, &err);
    if (rc)
        *why = sl_xstrdup(err.msg ? err.msg : "?");
    else
        *outputs = json_incref((sl_value *)sl_run_outputs(r));
    sl_err_clear(&err);
    sl_run_free(r);
    json_decref(in);
    sl_graph_release(&g);
    return rc;
}

static void test_bindings(void)
{
    sl_config *cfg = NULL;
    sl_err err = {0};
    setenv("SLUICE_TEST_TOOL_TOKEN", "tok-0123456789-secret", 1);
    int rc = load_cfg("tools:\n"
                      "  time: http://127.0.0.1:9/mcp\n"
                      "  langgenius/jina/jina:\n"
                      "    mcp:\n"
                      "      url: https://user:pw@example.com/sse?key=abc\n"
                      "      headers: {Authorization: {env: SLUICE_TEST_TOOL_TOKEN}}\n"
                      "    names: {jina_reader: read_url}\n"
                      "    timeout: 5\n"
                      "  files:\n"
                      "    mcp: {command: [node, server.js], env: {LOG: warn}}\n",
                      &cfg, &err);
    CHECK(rc == 0, "a tools: section loads (%s)", err.msg ? err.msg : "");
    const sl_bindings *b = sl_config_tools(cfg);
    CHECK(sl_bindings_count(b) == 3, "three bindings");
    const sl_binding *t = sl_bindings_find(b, "time", NULL);
    CHECK(t && !strcmp(sl_binding_where(t), "http://127.0.0.1:9/mcp"), "found by provider_id");
    const sl_binding *j = sl_bindings_find(b, "nope", "langgenius/jina/jina");
    CHECK(j != NULL, "found by provider_name");
    CHECK(sl_bindings_find(b, "someone/time/time", NULL) == t, "found by a plugin id's last part");
    CHECK(j && !strcmp(sl_binding_where(j), "https://example.com/sse"),
          "where() drops the user info and the query (%s)", j ? sl_binding_where(j) : "");
    CHECK(j && !strcmp(sl_binding_tool_name(j, "jina_reader"), "read_url") &&
              !strcmp(sl_binding_tool_name(j, "other"), "other"),
          "names map the DSL's tool name");
    CHECK(j && sl_binding_timeout(j) == 5, "its own timeout");
    char *masked = sl_secret_mask("header tok-0123456789-secret here");
    CHECK(masked && !strstr(masked, "0123456789"), "a header from the environment is a secret (%s)",
          masked ? masked : "");
    free(masked);
    const sl_binding *f = sl_bindings_find(b, "files", NULL);
    CHECK(f && !strcmp(sl_binding_where(f), "node …"), "a stdio binding shows its program, not its arguments");
    sl_config_free(cfg);
    masked = sl_secret_mask("header tok-0123456789-secret here");
    CHECK(masked == NULL, "freeing the settings forgets the secret");
    free(masked);

    static const struct {
        const char *yaml, *want;
    } bad[] = {
        {"tools:\n  x:\n    mcp: ftp://h/\n", ":3:10: tools.x.mcp: an MCP server's URL starts with"},
        {"tools:\n  x:\n    mcp: {url: 'http://h/mcp', command: [a]}\n",
         "give either url (an HTTP server) or command"},
        {"tools:\n  x:\n    mcp: {url: 'http://h/mcp', transport: ws}\n",
         "tools.x.mcp.transport: is auto, streamable or sse"},
        {"tools:\n  x:\n    mcp: {url: 'http://h/mcp', headers: {A: {env: SLUICE_NOT_SET_X}}}\n",
         "names the environment variable SLUICE_NOT_SET_X, which is not set"},
        {"tools:\n  x:\n    mcp: {url: 'http://h/mcp', headers: {'A B': v}}\n",
         "not a valid header name"},
        {"tools:\n  x:\n    openapi: {spec: spec.yml, auth: {type: oauth}}\n",
         "tools.x.openapi.auth.type: is none, api_key, bearer or basic"},
        {"tools:\n  x:\n    mcp: http://h/mcp\n    timeout: -1\n", "tools.x.timeout: seconds"},
        {"tools:\n  x: [1]\n", "a binding is a mapping"},
        {"tools: 3\n", "`tools` must be a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_config *c = NULL;
        rc = load_cfg(bad[i].yaml, &c, &err);
        CHECK(rc == -1 && err.msg && strstr(err.msg, bad[i].want), "bad binding %zu: %s", i,
              err.msg ? err.msg : "(loaded)");
        sl_err_clear(&err);
        sl_config_free(c);
    }
}

static void test_untrusted(void)
{
    sl_yaml_doc d;
    sl_err err = {0};
    const char *y = "tools:\n  x:\n    mcp: {url: 'http://h/mcp', headers: {A: {env: HOME}}}\n";
    CHECK(sl_yaml_parse(y, strlen(y), "b.zip:tools/bindings.yml", &d, &err) == 0, "parses");
    sl_bindings *b = sl_bindings_new();
    int rc = sl_bindings_parse(b, &d, json_object_get(d.root, "tools"), "b.zip:tools/bindings.yml",
                               false, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "may not read the environment ({env: HOME})"),
          "a bundle's binding may not read the environment: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_bindings_free(b);
    sl_yaml_doc_release(&d);

    /* a bundle's words are data: they mask nothing */
    y = "tools:\n  x:\n    mcp: {url: 'http://h/mcp', headers: {A: successful}}\n";
    sl_yaml_parse(y, strlen(y), "b.zip:tools/bindings.yml", &d, &err);
    b = sl_bindings_new();
    rc = sl_bindings_parse(b, &d, json_object_get(d.root, "tools"), "b", false, &err);
    char *m = sl_secret_mask("status: successful");
    CHECK(rc == 0 && m == NULL, "a bundle's header value is not registered as a secret");
    free(m);
    sl_bindings_free(b);
    sl_yaml_doc_release(&d);

    /* what an admin sees of stored bindings */
    char *spec = NULL;
    sl_value *one = J("{\"mcp\": {\"url\": \"https://u:pw@h.example/mcp?key=sk-1\", "
                      "\"headers\": {\"X-Key\": 9876543210}}}");
    rc = sl_bindings_spec_set(&spec, "x", one, &err);
    sl_value *cmd = J("{\"mcp\": {\"command\": [\"npx\", \"srv\", \"--token\", \"sk-2\"]}}");
    rc |= sl_bindings_spec_set(&spec, "y", cmd, &err);
    sl_value *shown = sl_bindings_spec_show(spec);
    char *text = json_dumps(shown, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(rc == 0 && text && !strstr(text, "9876543210") && !strstr(text, "pw@") &&
              !strstr(text, "sk-1") && !strstr(text, "sk-2") && strstr(text, "https://h.example/mcp"),
          "stored bindings are shown without credentials: %s", text ? text : "");
    free(text);
    json_decref(shown);
    json_decref(one);
    json_decref(cmd);
    free(spec);
}

static void check_outputs(const sl_value *out, const char *what)
{
    const char *text = json_string_value(json_object_get(out, "text"));
    CHECK(text && !strcmp(text, "{\"flag\":true,\"l\":[1,2],\"n\":7,\"text\":\"say hi\"}"),
          "%s: configurations override parameters, fit the schema, nulls dropped: %s", what,
          text ? text : "(none)");
    char *j = json_dumps(json_object_get(out, "json"), JSON_COMPACT);
    CHECK(j && !strcmp(j, "[{\"seen\":\"echo\"}]"), "%s: json messages: %s", what, j ? j : "");
    free(j);
    j = json_dumps(json_object_get(out, "fjson"), JSON_COMPACT);
    CHECK(j && !strcmp(j, "[{\"data\":[]}]"), "%s: no json messages: [{data: []}]: %s", what,
          j ? j : "");
    free(j);
    const sl_value *f = json_array_get(json_object_get(out, "files"), 0);
    const char *mime = json_string_value(json_object_get(f, "mime_type"));
    const char *ext = json_string_value(json_object_get(f, "extension"));
    const char *tm = json_string_value(json_object_get(f, "transfer_method"));
    CHECK(json_array_size(json_object_get(out, "files")) == 1 && mime &&
              !strcmp(mime, "image/png") && ext && !strcmp(ext, ".png") && tm &&
              !strcmp(tm, "tool_file"),
          "%s: a tool's file is a file of the run, its type kept", what);
    const char *ft = json_string_value(json_object_get(out, "ftext"));
    CHECK(ft && !strcmp(ft, "made one"), "%s: text beside a file", what);
}

static void test_node(void)
{
    sl_config *cfg = NULL;
    sl_err err = {0};
    load_cfg("tools: {}\n", &cfg, &err);
    fake_ts *f = fake_new();
    sl_bindings_add_toolset(sl_config_tools_edit(cfg), "fake", &f->base, "in process");
    char tape_path[] = "/tmp/sluice-tools-tape-XXXXXX";
    int fd = mkstemp(tape_path);
    close(fd);
    sl_llm_tape *tape = NULL;
    CHECK(sl_llm_tape_open(tape_path, false, &tape, &err) == 0, "a tape to record");
    sl_value *out = NULL;
    char *why = NULL;
    run_dsl(node_dsl, cfg, tape, "hi", &out, &why);
    sl_llm_tape_close(tape);
    CHECK(out != NULL, "the tool node runs over an in-process toolset (%s)", why ? why : "");
    if (out)
        check_outputs(out, "live");
    CHECK(f->calls == 2 && f->lists == 1, "two calls, one list (kept): %d, %d", f->calls, f->lists);
    free(why);
    json_decref(out);
    sl_config_free(cfg);

    /* replayed: no binding at all, nothing contacted */
    load_cfg("tools: {}\n", &cfg, &err);
    sl_config_set_offline(cfg, true);
    CHECK(sl_llm_tape_open(tape_path, true, &tape, &err) == 0, "the tape replays (%s)",
          err.msg ? err.msg : "");
    run_dsl(node_dsl, cfg, tape, "hi", &out, &why);
    CHECK(out != NULL, "an unbound tool replays from the tape (%s)", why ? why : "");
    if (out)
        check_outputs(out, "replayed");
    free(why);
    json_decref(out);
    run_dsl(node_dsl, cfg, tape, "other", &out, &why);
    CHECK(out == NULL && why && strstr(why, "no recorded tool call matches this one (binding "
                                            "langgenius/fake/fake, tool echo, arguments"),
          "other arguments are not on the tape: %s", why ? why : "(ran)");
    free(why);
    json_decref(out);
    sl_llm_tape_close(tape);
    sl_config_free(cfg);

    /* a secret in the arguments: recorded masked, and replayed */
    sl_secret_add("sekrit-value-12345");
    load_cfg("tools: {}\n", &cfg, &err);
    f = fake_new();
    sl_bindings_add_toolset(sl_config_tools_edit(cfg), "fake", &f->base, "in process");
    fd = open(tape_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    close(fd);
    sl_llm_tape_open(tape_path, false, &tape, &err);
    run_dsl(node_dsl, cfg, tape, "sekrit-value-12345", &out, &why);
    sl_llm_tape_close(tape);
    json_decref(out);
    free(why);
    sl_config_free(cfg);
    size_t tl = 0;
    char *tt = slurp(tape_path, &tl);
    CHECK(tt && !strstr(tt, "sekrit-value-12345") && strstr(tt, "say ******"),
          "the tape holds the secret masked");
    free(tt);
    load_cfg("tools: {}\n", &cfg, &err);
    sl_config_set_offline(cfg, true);
    sl_llm_tape_open(tape_path, true, &tape, &err);
    run_dsl(node_dsl, cfg, tape, "sekrit-value-12345", &out, &why);
    CHECK(out != NULL, "a call with a secret in its arguments replays (%s)", why ? why : "");
    json_decref(out);
    free(why);
    sl_llm_tape_close(tape);
    sl_config_free(cfg);
    sl_secret_remove("sekrit-value-12345");
    unlink(tape_path);

    /* a failing call fails the node, with the server's reason */
    load_cfg("tools: {}\n", &cfg, &err);
    f = fake_new();
    sl_bindings_add_toolset(sl_config_tools_edit(cfg), "fake", &f->base, "in process");
    char *boom = sl_xstrdup(node_dsl);
    char *at = strstr(boom, "tool_name: files");
    memcpy(at, "tool_name: boom ", 16);
    run_dsl(boom, cfg, NULL, "hi", &out, &why);
    CHECK(out == NULL && why && strstr(why, "tool 'boom' (binding 'fake'): the server hung up"),
          "a failed call fails the node: %s", why ? why : "(ran)");
    free(why);
    json_decref(out);
    free(boom);
    sl_config_free(cfg);

    /* unbound: refused at load with the lines to add */
    load_cfg("tools: {}\n", &cfg, &err);
    run_dsl(node_dsl, cfg, NULL, "hi", &out, &why);
    CHECK(out == NULL && why && strstr(why, "not bound to a real tool") &&
              strstr(why, "langgenius/fake/fake:"),
          "unbound: %s", why ? why : "(ran)");
    free(why);
    sl_config_free(cfg);
}

static void test_mcp_secrets(void)
{
    sl_err err = {0};
    /* freeing a toolset drops only what it registered */
    const char *url = "https://mcp.example/mcp?key=sk-abcdef123456";
    sl_secret_add(url);
    sl_mcp_opts o = {.url = url, .headers = (const char *const[]){"X-A: Bearer zz-token-98765",
                                                                 NULL}};
    sl_toolset *ts = sl_mcp_new(&o, &err);
    char *m = sl_secret_mask("token zz-token-98765");
    CHECK(ts && m, "a trusted header's token is masked while its toolset lives");
    free(m);
    sl_toolset_free(ts);
    m = sl_secret_mask(url);
    CHECK(m != NULL, "freeing a toolset keeps a secret someone else registered");
    free(m);
    m = sl_secret_mask("token zz-token-98765");
    CHECK(m == NULL, "... and drops its own");
    free(m);
    sl_secret_remove(url);
    /* a DSL's URL registers nothing */
    sl_mcp_opts u = {.url = "https://mcp.example/mcp?successful", .untrusted = true};
    ts = sl_mcp_new(&u, &err);
    m = sl_secret_mask("status: successful");
    CHECK(ts && m == NULL, "an untrusted URL's query masks nothing");
    free(m);
    sl_toolset_free(ts);
    sl_err_clear(&err);
}

static void test_coerce(void)
{
    sl_value *def = J("{\"inputSchema\": {\"properties\": {\"b\": {\"type\": \"boolean\"}, "
                      "\"i\": {\"type\": \"integer\"}, \"n\": {\"type\": \"number\"}, "
                      "\"s\": {\"type\": \"string\"}, \"o\": {\"type\": \"object\"}}}}");
    sl_value *a = J("{\"b\": \"false\", \"i\": \"12\", \"n\": \"1.5\", \"s\": 3, "
                    "\"o\": \"{\\\"k\\\": 1}\", \"x\": null, \"keep\": \"as is\"}");
    sl_toolcall_coerce(def, a);
    char *s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(s && !strcmp(s, "{\"b\":false,\"i\":12,\"keep\":\"as is\",\"n\":1.5,"
                          "\"o\":{\"k\":1},\"s\":\"3\"}"),
          "arguments fit the schema: %s", s ? s : "");
    free(s);
    json_decref(a);
    a = J("{\"b\": \"maybe\", \"i\": \"x1\"}");
    sl_toolcall_coerce(def, a);
    s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(s && !strcmp(s, "{\"b\":\"maybe\",\"i\":\"x1\"}"),
          "what does not convert is left for the server to judge: %s", s ? s : "");
    free(s);
    json_decref(a);
    json_decref(def);
}

/* workflow: PATH only says where the app is; nodes/wftool.h runs it */
static void test_workflow_binding(void)
{
    sl_err err = {0};
    sl_bindings *b = sl_bindings_new();
    int rc = sl_bindings_parse_json(b, "{\"w\": {\"workflow\": \"/srv/apps/sum.yml\", "
                                    "\"timeout\": 9}}", "t", &err);
    const sl_binding *w = sl_bindings_get(b, "w");
    CHECK(rc == 0 && w && !strcmp(sl_binding_kind(w), "workflow") &&
          !strcmp(sl_binding_workflow_path(w), "/srv/apps/sum.yml") &&
          !strcmp(sl_binding_where(w), "/srv/apps/sum.yml") && sl_binding_timeout(w) == 9,
          "a workflow binding: its kind, path and timeout");
    sl_toolset *ts = w ? sl_binding_toolset(w, false, &err) : NULL;
    CHECK(!ts && err.msg && strstr(err.msg, "is a workflow"),
          "its toolset is not made in tools/: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    rc = sl_bindings_parse_json(b, "{\"r\": {\"workflow\": \"apps/sum.yml\"}}", "t", &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "needs a folder"),
          "a relative path with no file to be relative to is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    rc = sl_bindings_parse_json(b, "{\"m\": {\"workflow\": \"/a.yml\", \"mcp\": \"http://h/mcp\"}}",
                                "t", &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "one of mcp, openapi and workflow"),
          "workflow and mcp together are refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    const char *y = "tools:\n  u: {workflow: ../up.yml}\n";
    rc = sl_bindings_parse_text(b, y, strlen(y), "b.zip", false, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "inside its tools/ folder"),
          "a bundle's workflow path may not climb out: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_bindings_free(b);
}

int main(void)
{
    test_workflow_binding();
    test_bindings();
    test_untrusted();
    test_node();
    test_coerce();
    test_mcp_secrets();
    return tap_done();
}
