/*
 * openapi — the OpenAPI reader (documents in JSON and YAML, 3.0, 3.1 and
 * Swagger 2.0, $refs, bad documents), the request and result mapping, and
 * the toolset against a real REST API on loopback
 * (tests/tools/openapi_standin.py): every auth style, path, query, header,
 * cookie and body parameters, JSON, text and binary answers, errors,
 * caps, a redirect, a slow server, and bindings.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/secret.h"
#include "dsl/yaml.h"
#include "tools/binding.h"
#include "tools/oatree.h"
#include "tools/openapi.h"
#include "tap.h"
#include "util.h"

#define SPECS "tests/tools/openapi/"

static sl_openapi_doc *load(const char *file, const char *base)
{
    size_t len = 0;
    char *text = slurp(file, &len);
    sl_openapi_doc *d = NULL;
    sl_err err = {0};
    if (!text || sl_openapi_parse(text, len, file, base, &d, &err))
        CHECK(0, "%s parses: %s", file, err.msg ? err.msg : "(unreadable)");
    sl_err_clear(&err);
    free(text);
    return d;
}

static const sl_value *tool(const sl_openapi_doc *d, const char *name)
{
    return sl_binding_find_tool(sl_openapi_tools(d), name);
}

static char *schema_of(const sl_openapi_doc *d, const char *name)
{
    const sl_value *t = tool(d, name);
    return t ? json_dumps(json_object_get(t, "inputSchema"), JSON_COMPACT | JSON_SORT_KEYS)
             : sl_xstrdup("(none)");
}

static void test_reader(void)
{
    sl_openapi_doc *d = load(SPECS "petstore3.yaml", NULL);
    if (!d)
        return;
    CHECK(json_array_size(sl_openapi_tools(d)) == 13, "OpenAPI 3.0 YAML: 13 operations (%zu)",
          json_array_size(sl_openapi_tools(d)));
    CHECK(tool(d, "list_get") && tool(d, "echov12xthings_delete"),
          "without an operationId, Dify's name: path without /, {, }, . and the method");
    CHECK(sl_openapi_server(d) == NULL, "a relative server without a URL to resolve it: none");
    char *s = schema_of(d, "getPet");
    CHECK(!strcmp(s, "{\"properties\":{\"X-Trace\":{\"description\":\"A trace id\",\"type\":"
                     "\"string\"},\"petId\":{\"type\":\"integer\"},\"session\":{\"type\":"
                     "\"string\"},\"tags\":{\"items\":{\"type\":\"string\"},\"type\":\"array\"},"
                     "\"verbose\":{\"type\":\"boolean\"}},\"required\":[\"petId\"],\"type\":"
                     "\"object\"}"),
          "path, query, cookie and the path item's $ref'd header in one schema: %s", s);
    free(s);
    s = schema_of(d, "addPet");
    CHECK(strstr(s, "\"owner\":{\"properties\":{\"name\":{\"type\":\"string\"},\"pets\":"
                    "{\"items\":{},\"type\":\"array\"}}") && strstr(s, "\"required\":[\"name\"]"),
          "a JSON body's $ref'd properties; the recursive Pet is cut to {}: %s", s);
    free(s);
    const sl_value *t = tool(d, "addPet");
    CHECK(!strcmp(json_string_value(json_object_get(t, "description")), "Add a pet"),
          "the description wins over the summary, as in Dify");
    t = tool(d, "getPet");
    CHECK(!strcmp(json_string_value(json_object_get(t, "description")), "Get a pet"),
          "else the summary");
    sl_openapi_doc_free(d);

    d = load(SPECS "petstore3.yaml", "http://h.example:8080/api/spec/petstore3.yaml?x=1");
    CHECK(d && !strcmp(sl_openapi_server(d) ?: "", "http://h.example:8080/api/v1"),
          "a relative server is resolved against the document's URL: %s",
          d && sl_openapi_server(d) ? sl_openapi_server(d) : "(none)");
    sl_openapi_doc_free(d);

    d = load(SPECS "api31.json", NULL);
    if (d) {
        CHECK(!strcmp(sl_openapi_server(d) ?: "", "http://127.0.0.1:9/api/v1"),
              "OpenAPI 3.1 JSON: server variables take their defaults: %s",
              sl_openapi_server(d) ?: "(none)");
        s = schema_of(d, "patchThing");
        CHECK(strstr(s, "\"label\"") && strstr(s, "\"size\"") &&
                  strstr(s, "\"dry\":{\"type\":[\"boolean\",\"null\"]}"),
              "a $ref'd requestBody with a +json type, 3.1 type lists: %s", s);
        free(s);
        s = schema_of(d, "postRaw");
        CHECK(strstr(s, "\"body\":{\"items\":{\"type\":\"integer\"},\"type\":\"array\"}") != NULL,
              "a body that is not an object is the argument `body`: %s", s);
        free(s);
    }
    sl_openapi_doc_free(d);

    d = load(SPECS "swagger2.yaml", "http://127.0.0.1:5/api/spec/swagger2.yaml");
    if (d) {
        CHECK(!strcmp(sl_openapi_server(d) ?: "", "http://127.0.0.1:5/api/v1"),
              "Swagger 2.0: no host, the document's; basePath: %s", sl_openapi_server(d) ?: "");
        s = schema_of(d, "createItem");
        CHECK(strstr(s, "\"title\":{\"type\":\"string\"}") && strstr(s, "\"required\":[\"title\"]"),
              "a body parameter's #/definitions schema is flattened: %s", s);
        free(s);
        s = schema_of(d, "getItem");
        CHECK(strstr(s, "\"id\":{\"type\":\"integer\"}") &&
                  strstr(s, "\"fields\":{\"items\":{\"type\":\"string\"},\"type\":\"array\"}"),
              "v2 parameters keep their type on themselves: %s", s);
        free(s);
    }
    sl_openapi_doc_free(d);
}

static void test_bad(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"[1, 2]", "spec.yaml: not an OpenAPI document: the top is not a mapping"},
        {"title: x\n", "spec.yaml:1:1: not an OpenAPI document: it has neither"},
        {"openapi: 4.0.0\npaths: {/a: {get: {}}}\n", "spec.yaml:1:10: openapi: version '4.0.0'"},
        {"openapi: 3.0.0\ninfo: {}\n", "the document has no operations"},
        {"openapi: 3.0.0\npaths: {/a: {summary: x}}\n", "spec.yaml:2:8: paths: the document has "
         "no operations (no path has a get"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
         "      - $ref: '#/components/parameters/Nope'\n",
         "spec.yaml:6:15: paths./a.get: $ref '#/components/parameters/Nope' names nothing"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n      - {in: query}\n",
         "spec.yaml:6:9: paths./a.get: a parameter needs a name"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
         "      - {name: q, in: matrix}\n",
         "spec.yaml:6:23: paths./a.get: parameter 'q': `in` is path, query, header or cookie"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
         "      - $ref: '#/x'\nx: {$ref: '#/x'}\n", "$ref chain longer than 32"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    post:\n      requestBody:\n        content:\n"
         "          application/json:\n            schema: {$ref: 'other.yaml#/Pet'}\n",
         "spec.yaml:8:28: $ref 'other.yaml#/Pet' names nothing in this document; only local"},
        {"openapi: 3.0.0\npaths: {/a: [1]}\n", "paths./a: a path item is a mapping"},
        {"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n"
         "      - {name: 'X: Y', in: header}\n",
         "spec.yaml:6:16: paths./a.get: 'X: Y' is not a valid header name"},
        {"openapi: 3.0.0\npaths:\n  /a: {get: {x: [}\n", "spec.yaml"},
        {"{\"openapi\": \"3.0.0\", \"paths\": {\"/a\": {\"get\": {\"parameters\": 5}}}}",
         "spec.yaml:1:61: paths./a.get: parameters is a list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_openapi_doc *d = NULL;
        sl_err err = {0};
        int rc = sl_openapi_parse(bad[i].text, strlen(bad[i].text), "spec.yaml", NULL, &d, &err);
        CHECK(rc == -1 && !d && err.msg && strstr(err.msg, bad[i].want), "bad document %zu: %s",
              i, err.msg ? err.msg : "(read)");
        sl_err_clear(&err);
        sl_openapi_doc_free(d);
    }
    /* refs that fan out: 2^40 nodes from a few lines */
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "openapi: 3.0.0\npaths:\n  /a:\n    post:\n      requestBody:\n        content:\n"
                    "          application/json:\n            schema: {$ref: '#/s/s0'}\ns:\n");
    for (int i = 0; i < 40; i++)
        sl_buf_addf(&b, "  s%d: {type: object, properties: {a: {$ref: '#/s/s%d'}, b: {$ref: "
                        "'#/s/s%d'}}}\n", i, i + 1, i + 1);
    sl_buf_adds(&b, "  s40: {type: string}\n");
    sl_openapi_doc *d = NULL;
    sl_err err = {0};
    int rc = sl_openapi_parse(b.data, b.len, "fan.yaml", NULL, &d, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "expand past"), "$refs that fan out are "
          "refused: %s", err.msg ? err.msg : "(read)");
    sl_err_clear(&err);
    sl_buf_release(&b);
    char *big = malloc(SL_OPENAPI_MAX_SPEC + 2);
    memset(big, ' ', SL_OPENAPI_MAX_SPEC + 1);
    rc = sl_openapi_parse(big, SL_OPENAPI_MAX_SPEC + 1, "big.yaml", NULL, &d, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "larger than 8 MiB"),
          "a document over 8 MiB is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    free(big);
}

static void test_request(void)
{
    sl_openapi_doc *d = load(SPECS "petstore3.yaml", NULL);
    if (!d)
        return;
    sl_openapi_req rq;
    sl_err err = {0};
    sl_value *args = J("{\"petId\": 7, \"verbose\": true, \"tags\": [\"a b\", \"c\"], "
                       "\"session\": \"s 1\", \"X-Trace\": \"t-1\", \"extra\": 1}");
    sl_openapi_req_init(&rq);
    int rc = sl_openapi_request(d, "getPet", args, "http://h/api/v1", &rq, &err);
    CHECK(rc == 0 && !strcmp(rq.method, "GET") &&
              !strcmp(rq.url.data, "http://h/api/v1/echo/pets/7?verbose=true&tags=a%20b&tags=c"),
          "path and query parameters, arrays exploded: %s", rq.url.data);
    CHECK(rq.headers.data && !strcmp(rq.headers.data, "X-Trace: t-1\nCookie: session=s%201\n"),
          "header and cookie parameters: %s", esc(rq.headers.data ? rq.headers.data : ""));
    CHECK(!rq.content_type, "no body");
    sl_openapi_req_release(&rq);
    json_decref(args);

    args = J("{\"name\": \"Rex\", \"owner\": {\"name\": \"Ann\"}, \"other\": 1}");
    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "addPet", args, "http://h", &rq, &err);
    CHECK(rc == 0 && !strcmp(rq.content_type, "application/json") &&
              !strcmp(rq.body.data, "{\"name\":\"Rex\",\"owner\":{\"name\":\"Ann\"}}"),
          "a JSON body from the body's properties only: %s", rq.body.data ? rq.body.data : "");
    sl_openapi_req_release(&rq);
    json_decref(args);

    args = J("{\"a\": \"x&y\", \"n\": 3}");
    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "sendForm", args, "http://h", &rq, &err);
    CHECK(rc == 0 && !strcmp(rq.content_type, "application/x-www-form-urlencoded") &&
              !strcmp(rq.body.data, "a=x%26y&n=3"),
          "a urlencoded form: %s", rq.body.data ? rq.body.data : "");
    sl_openapi_req_release(&rq);
    json_decref(args);

    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "getPet", NULL, "http://h", &rq, &err);
    CHECK(rc == -1 && err.code == SL_EINVAL && strstr(err.msg, "'petId' is required"),
          "a required argument missing: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_openapi_req_release(&rq);

    args = J("{\"petId\": 1, \"X-Trace\": \"a\\r\\nEvil: 1\"}");
    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "getPet", args, "http://h", &rq, &err);
    CHECK(rc == -1 && err.code == SL_EINVAL && strstr(err.msg, "line break"),
          "a header value with a line break is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_openapi_req_release(&rq);
    json_decref(args);

    /* a header parameter cannot reframe the request */
    sl_openapi_doc *hd = NULL;
    const char *ht = "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      operationId: a\n"
                     "      parameters:\n      - {name: Content-Length, in: header}\n"
                     "      - {name: X-Ok, in: header}\n"
                     "      - {name: ids, in: query, explode: false}\n"
                     "      - {name: ps, in: query, style: pipeDelimited, explode: false}\n";
    sl_openapi_parse(ht, strlen(ht), "h.yaml", NULL, &hd, &err);
    args = J("{\"Content-Length\": 5, \"X-Ok\": 1, \"ids\": [1, 2], \"ps\": [\"a\", \"b\"]}");
    sl_openapi_req_init(&rq);
    rc = hd ? sl_openapi_request(hd, "a", args, "http://h", &rq, &err) : -1;
    CHECK(rc == 0 && rq.headers.data && !strcmp(rq.headers.data, "X-Ok: 1\n"),
          "framing headers (Content-Length, Host, …) are not taken from arguments: %s",
          esc(rq.headers.data ? rq.headers.data : ""));
    CHECK(rc == 0 && !strcmp(rq.url.data, "http://h/a?ids=1%2C2&ps=a%7Cb"),
          "explode: false joins an array (style's delimiter): %s", rq.url.data);
    sl_openapi_req_release(&rq);
    json_decref(args);
    sl_openapi_doc_free(hd);
    sl_err_clear(&err);

    args = J("{\"petId\": \"../../admin?x=1#\"}");
    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "getPet", args, "http://h", &rq, &err);
    CHECK(rc == 0 && !strcmp(rq.url.data, "http://h/echo/pets/..%2F..%2Fadmin%3Fx%3D1%23"),
          "a path parameter cannot leave its segment: %s", rq.url.data);
    sl_openapi_req_release(&rq);
    json_decref(args);

    sl_openapi_req_init(&rq);
    rc = sl_openapi_request(d, "nope", NULL, "http://h", &rq, &err);
    CHECK(rc == -1 && err.code == SL_ENOTFOUND, "an unknown operation: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_openapi_req_release(&rq);
    sl_openapi_doc_free(d);
}

static void test_shape(void)
{
    sl_tool_result r;
    sl_err err = {0};
    sl_tool_result_init(&r);
    const char *j = "[{\"a\": 1}, 2, {\"b\": 2}]";
    int rc = sl_openapi_shape("application/json; charset=utf-8", NULL, j, strlen(j), NULL, &r, &err);
    char *s = json_dumps(r.json, JSON_COMPACT);
    CHECK(rc == 0 && !strcmp(s, "[{\"a\":1},{\"b\":2}]") && !strcmp(r.text.data, j),
          "a JSON list: one json entry per object, and the text: %s", s);
    free(s);
    sl_tool_result_release(&r);

    sl_tool_result_init(&r);
    rc = sl_openapi_shape("text/html", NULL, "<p>hi</p>", 9, NULL, &r, &err);
    CHECK(rc == 0 && !strcmp(r.text.data, "<p>hi</p>") && json_array_size(r.json) == 0 &&
              r.n_files == 0, "other text stays text");
    sl_tool_result_release(&r);

    sl_tool_result_init(&r);
    rc = sl_openapi_shape("application/pdf", NULL, "%PDF-1\0\1", 8, NULL, &r, &err);
    CHECK(rc == 0 && r.n_files == 1 && !strcmp(r.files[0].name, "file.pdf") &&
              !strcmp(r.files[0].mime_type, "application/pdf") && r.files[0].data.len == 8,
          "a binary type is a file");
    sl_tool_result_release(&r);

    sl_tool_ctx ctx = {.max_output = 4};
    sl_tool_result_init(&r);
    rc = sl_openapi_shape("text/plain", NULL, "12345", 5, &ctx, &r, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && !strcmp(err.setting, "tool_max_output"),
          "past the output cap: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
}

/* ---- against the stand-in ---- */

static int port;

static sl_toolset *make(const char *spec, const char *server, sl_openapi_auth auth, bool priv,
                        sl_err *err)
{
    char srv[128];
    snprintf(srv, sizeof srv, "http://127.0.0.1:%d/api/v1", port);
    sl_openapi_opts o = {.spec = spec, .server = server ? srv : NULL, .auth = auth,
                         .allow_private = priv};
    return sl_openapi_new(&o, err);
}

static int call(sl_toolset *t, const char *name, const char *args, double timeout,
                sl_tool_result *r, sl_err *err)
{
    sl_value *a = args ? J(args) : NULL;
    sl_tool_ctx ctx = {.timeout_s = timeout};
    sl_tool_result_init(r);
    int rc = sl_toolset_call(t, &ctx, name, a, r, err);
    json_decref(a);
    return rc;
}

/* The echo's field at a path "a.b" of the first json entry, as compact JSON. */
static char *echoed(const sl_tool_result *r, const char *key)
{
    const sl_value *v = json_array_get(r->json, 0);
    char k[128];
    snprintf(k, sizeof k, "%s", key);
    for (char *p = strtok(k, "."); p && v; p = strtok(NULL, "."))
        v = json_object_get(v, p);
    return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
             : sl_xstrdup("(none)");
}

static size_t fake_file_cap;

/* A run's file_bytes: "bytes of RELATED_ID", or 1 for a file without one. */
static int fake_file_bytes(void *ud, const sl_value *f, size_t cap, sl_buf *out, sl_err *err)
{
    (void)ud;
    (void)err;
    fake_file_cap = cap;
    const char *id = json_string_value(json_object_get(f, "related_id"));
    if (!id)
        return 1;
    sl_buf_addf(out, "bytes of %s", id);
    return 0;
}

static bool cancel_after(void *ud)
{
    return sl_clock_s() > *(double *)ud;
}

static void test_live(void)
{
    sl_err err = {0};
    sl_tool_result r;
    sl_openapi_auth none = {0};
    sl_toolset *t = make(SPECS "petstore3.yaml", "", none, true, &err);
    CHECK(t != NULL, "a toolset from a file with a server override: %s", err.msg ? err.msg : "");
    if (!t)
        return;
    char want[128];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/api/v1", port);
    CHECK(!strcmp(sl_toolset_where(t), want), "where() is the server: %s", sl_toolset_where(t));
    sl_value *list = NULL;
    CHECK(sl_toolset_list(t, NULL, &list, &err) == 0 && json_array_size(list) == 13, "lists");
    json_decref(list);

    int rc = call(t, "getPet", "{\"petId\": 7, \"verbose\": false, \"tags\": [\"x\", \"y\"], "
                  "\"session\": \"abc\", \"X-Trace\": \"tr-9\"}", 10, &r, &err);
    char *path = echoed(&r, "path"), *q = echoed(&r, "query"), *h = echoed(&r, "headers");
    CHECK(rc == 0 && !strcmp(path, "\"/api/v1/echo/pets/7\"") &&
              !strcmp(q, "{\"tags\":[\"x\",\"y\"],\"verbose\":\"false\"}") &&
              strstr(h, "\"cookie\":\"session=abc\"") && strstr(h, "\"x-trace\":\"tr-9\""),
          "path, query, header and cookie parameters reach the API: %s %s %s %s", path, q, h,
          err.msg ? err.msg : "");
    CHECK(r.text.len > 0 && strstr(r.text.data, "\"method\": \"GET\""), "the JSON is the text too");
    free(path);
    free(q);
    free(h);
    sl_tool_result_release(&r);

    rc = call(t, "addPet", "{\"name\": \"Rex\", \"owner\": {\"name\": \"Ann\"}}", 10, &r, &err);
    char *body = echoed(&r, "body"), *ct = echoed(&r, "headers.content-type");
    CHECK(rc == 0 && !strcmp(body, "{\"name\":\"Rex\",\"owner\":{\"name\":\"Ann\"}}") &&
              !strcmp(ct, "\"application/json\""), "a JSON body: %s %s", body, ct);
    free(body);
    free(ct);
    sl_tool_result_release(&r);

    rc = call(t, "sendForm", "{\"a\": \"x&y\", \"n\": 3}", 10, &r, &err);
    body = echoed(&r, "body");
    CHECK(rc == 0 && !strcmp(body, "{\"a\":\"x&y\",\"n\":\"3\"}"), "a urlencoded body: %s", body);
    free(body);
    sl_tool_result_release(&r);

    rc = call(t, "upload", "{\"note\": \"hello\"}", 10, &r, &err);
    body = echoed(&r, "body");
    char *m = echoed(&r, "method");
    CHECK(rc == 0 && !strcmp(body, "{\"multipart\":{\"note\":\"hello\"}}") && !strcmp(m, "\"PUT\""),
          "a multipart body with PUT: %s %s", body, m);
    free(body);
    free(m);
    sl_tool_result_release(&r);

    /* files in a multipart body: format: binary arguments, as Dify sends them */
    static const char *files_args =
        "{\"note\": \"n\", \"doc\": {\"dify_model_identity\": \"__dify__file__\", "
        "\"filename\": \"a.txt\", \"mime_type\": \"text/plain\", \"content_base64\": "
        "\"aGVsbG8=\"}, \"pics\": [{\"dify_model_identity\": \"__dify__file__\", "
        "\"filename\": \"p1.png\", \"mime_type\": \"image/png\", \"content_base64\": "
        "\"iVBORw==\"}, {\"dify_model_identity\": \"__dify__file__\", \"filename\": \"p2.png\", "
        "\"mime_type\": \"image/png\", \"content_base64\": \"iVBORw==\"}]}";
    rc = call(t, "upload", files_args, 10, &r, &err);
    body = echoed(&r, "body.multipart");
    CHECK(rc == 0 && !strcmp(body, "{\"doc\":{\"filename\":\"a.txt\",\"head\":\"68656c6c6f\",\"size\":5,"
                                   "\"type\":\"text/plain\"},\"note\":\"n\",\"pics\":[{\"filename\":"
                                   "\"p1.png\",\"head\":\"89504e47\",\"size\":4,\"type\":"
                                   "\"image/png\"},{\"filename\":\"p2.png\",\"head\":\"89504e47\","
                                   "\"size\":4,\"type\":\"image/png\"}]}"),
          "a file argument is a part with its name and type; a list of files, one part each: "
          "%s %s", body, err.msg ? err.msg : "");
    free(body);
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    rc = call(t, "upload", "{\"doc\": \"just text\"}", 10, &r, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "'doc' is a file (format: binary): give a file "
                                                 "value") && strstr(err.msg, "not string"),
          "text for a file argument is refused: %s", err.msg ? err.msg : "(sent)");
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    /* in a run, the bytes come from the run's files */
    fake_file_cap = 0;
    sl_tool_ctx fctx = {.timeout_s = 10, .file_bytes = fake_file_bytes};
    sl_value *fa = J("{\"doc\": {\"dify_model_identity\": \"__dify__file__\", \"related_id\": "
                     "\"f-1\", \"filename\": \"run.bin\"}}");
    sl_tool_result_init(&r);
    rc = sl_toolset_call(t, &fctx, "upload", fa, &r, &err);
    body = echoed(&r, "body.multipart.doc");
    CHECK(rc == 0 && !strcmp(body, "{\"filename\":\"run.bin\",\"head\":\"6279746573206f66\",\"size\":12,"
                                   "\"type\":\"application/octet-stream\"}") &&
              fake_file_cap == SL_OPENAPI_MAX_UPLOAD,
          "a run's file is read through the call's file_bytes, capped: %s %zu", body,
          fake_file_cap);
    free(body);
    sl_tool_result_release(&r);
    json_decref(fa);
    fa = J("{\"doc\": {\"dify_model_identity\": \"__dify__file__\", \"url\": \"http://x/y\"}}");
    sl_tool_result_init(&r);
    rc = sl_toolset_call(t, &fctx, "upload", fa, &r, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "the file for 'doc' holds no bytes here"),
          "a file with no bytes in the run is refused: %s", err.msg ? err.msg : "(sent)");
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    json_decref(fa);

    rc = call(t, "list_get", NULL, 10, &r, &err);
    char *js = json_dumps(r.json, JSON_COMPACT);
    CHECK(rc == 0 && !strcmp(js, "[{\"a\":1},{\"b\":2}]"), "a JSON list: one entry per object: %s",
          js);
    free(js);
    sl_tool_result_release(&r);

    rc = call(t, "text", NULL, 10, &r, &err);
    CHECK(rc == 0 && !strcmp(r.text.data ? r.text.data : "", "plain words") &&
              json_array_size(r.json) == 0, "text stays text");
    sl_tool_result_release(&r);

    rc = call(t, "image", NULL, 10, &r, &err);
    CHECK(rc == 0 && r.n_files == 1 && !strcmp(r.files[0].name, "dot.png") &&
              !strcmp(r.files[0].mime_type, "image/png") && r.files[0].data.len == 67,
          "an image is a file, named by Content-Disposition (%zu)",
          r.n_files ? r.files[0].data.len : 0);
    sl_tool_result_release(&r);

    rc = call(t, "status", "{\"code\": 503}", 10, &r, &err);
    CHECK(rc == -1 && err.code == SL_EIO && strstr(err.msg, "HTTP 503") &&
              strstr(err.msg, "went wrong, auth was none") &&
              strstr(err.msg, "API tool 'status' (GET http://127.0.0.1:"),
          "a 5xx is a call error with the status and the body: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = call(t, "huge", NULL, 10, &r, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "passed 8388608 bytes"),
          "a huge answer is cut off at the output cap: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = call(t, "redirect", NULL, 10, &r, &err);
    CHECK(rc == -1 && strstr(err.msg, "HTTP 302, a redirect to http://10.1.2.3/private") &&
              strstr(err.msg, "does not follow"),
          "a redirect (to a private address) is not followed: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    double t0 = sl_clock_s();
    rc = call(t, "slow", "{\"s\": 5}", 0.5, &r, &err);
    double took = sl_clock_s() - t0;
    CHECK(rc == -1 && err.code == SL_ETIMEOUT && !strcmp(err.setting ?: "", "tool_timeout_s") &&
              took < 2, "a slow server: the timeout ends the call in %.2f s: %s", took,
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    /* cancellation from the run ends the call at once */
    sl_value *a = J("{\"s\": 5}");
    double until = sl_clock_s() + 0.3;
    sl_tool_ctx cctx = {.timeout_s = 10, .cancelled = cancel_after, .ud = &until};
    sl_tool_result_init(&r);
    t0 = sl_clock_s();
    rc = sl_toolset_call(t, &cctx, "slow", a, &r, &err);
    took = sl_clock_s() - t0;
    CHECK(rc == -1 && err.code == SL_ECANCELED && took < 1.5,
          "a cancelled call ends in %.2f s: %s", took, err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    json_decref(a);
    sl_toolset_free(t);

    /* without tool_allow_private */
    t = make(SPECS "petstore3.yaml", "", none, false, &err);
    rc = t ? call(t, "text", NULL, 10, &r, &err) : -1;
    CHECK(rc == -1 && !strcmp(sl_err_type(&err, ""), "ToolSSRFError") &&
              strstr(err.msg, "tool_allow_private"),
          "the SSRF guard refuses loopback: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
}

static void test_auth(void)
{
    static const struct {
        sl_openapi_auth a;
        const char *field, *want;
    } cases[] = {
        {{.type = "api_key", .name = "X-API-Key", .value = "key-abc-123"}, "headers.x-api-key",
         "\"key-abc-123\""},
        {{.type = "api_key", .value = "key-abc-123"}, "headers.authorization", "\"key-abc-123\""},
        {{.type = "api_key", .prefix = "Bearer", .value = "key-abc-123"}, "headers.authorization",
         "\"Bearer key-abc-123\""},
        {{.type = "api_key", .prefix = "basic", .value = "key-abc-123"}, "headers.authorization",
         "\"Basic key-abc-123\""},
        {{.type = "api_key", .prefix = "custom", .value = "key-abc-123"}, "headers.authorization",
         "\"key-abc-123\""},
        {{.type = "api_key", .in = "query", .value = "k y"}, "query.key", "\"k y\""},
        {{.type = "api_key", .in = "query", .name = "api_key", .value = "kq"}, "query.api_key",
         "\"kq\""},
        {{.type = "bearer", .value = "tok-xyz-789"}, "headers.authorization",
         "\"Bearer tok-xyz-789\""},
        {{.type = "basic", .username = "ann", .password = "pw-secret-1"}, "headers.authorization",
         "\"Basic YW5uOnB3LXNlY3JldC0x\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_err err = {0};
        sl_tool_result r;
        sl_toolset *t = make(SPECS "petstore3.yaml", "", cases[i].a, true, &err);
        int rc = t ? call(t, "whoami", NULL, 10, &r, &err) : (sl_tool_result_init(&r), -1);
        char *got = echoed(&r, cases[i].field);
        CHECK(rc == 0 && !strcmp(got, cases[i].want), "auth %zu (%s%s%s): %s = %s %s", i,
              cases[i].a.type, cases[i].a.in ? " in " : "", cases[i].a.in ? cases[i].a.in : "",
              cases[i].field, got, err.msg ? err.msg : "");
        free(got);
        sl_tool_result_release(&r);
        sl_err_clear(&err);
        sl_toolset_free(t);
    }

    /* a credential the API echoes in an error is masked */
    sl_err err = {0};
    sl_tool_result r;
    sl_openapi_auth a = {.type = "bearer", .value = "tok-masked-4242"};
    sl_toolset *t = make(SPECS "petstore3.yaml", "", a, true, &err);
    int rc = t ? call(t, "status", "{\"code\": 401}", 10, &r, &err) : -1;
    CHECK(rc == -1 && strstr(err.msg, "HTTP 401") && !strstr(err.msg, "tok-masked-4242") &&
              strstr(err.msg, "check the binding's auth"),
          "a 401 names the auth, and the echoed token is masked: %s", err.msg ? err.msg : "");
    CHECK(!strstr(sl_toolset_where(t), "tok"), "where() holds no credential");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    char *masked = sl_secret_mask("tok-masked-4242");
    CHECK(masked == NULL, "freeing the toolset forgets its secret");
    free(masked);

    sl_openapi_opts o = {.spec = SPECS "petstore3.yaml", .server = "http://h/",
                         .auth = {.type = "bearer", .value = "tok-untrusted-55"}, .untrusted = true};
    t = sl_openapi_new(&o, &err);
    masked = sl_secret_mask("tok-untrusted-55");
    CHECK(t && masked == NULL, "an untrusted binding registers no secret");
    free(masked);
    sl_toolset_free(t);

    o = (sl_openapi_opts){.spec = SPECS "petstore3.yaml", .server = "http://h/",
                          .auth = {.type = "digest"}};
    t = sl_openapi_new(&o, &err);
    CHECK(!t && strstr(err.msg, "none, api_key, bearer or basic"), "an unknown auth type: %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
}

static void test_by_url(void)
{
    static const struct {
        const char *spec, *op, *args, *field, *want;
    } cases[] = {
        {"petstore3.yaml", "getPet", "{\"petId\": 3}", "path", "\"/api/v1/echo/pets/3\""},
        {"swagger2.yaml", "createItem", "{\"title\": \"t\", \"count\": 2}", "body",
         "{\"count\":2,\"title\":\"t\"}"},
        {"swagger2.yaml", "getItem", "{\"id\": 5, \"fields\": [\"a\", \"b\"], \"X-Trace\": \"z\", "
         "\"sort\": [\"x\", \"y\"]}", "query", "{\"fields\":[\"a\",\"b\"],\"sort\":\"x,y\"}"},
        {"swagger2.yaml", "contact", "{\"email\": \"a@b.c\", \"age\": 30}", "body",
         "{\"age\":\"30\",\"email\":\"a@b.c\"}"},
        {"api31.json", "patchThing", "{\"id\": \"t1\", \"dry\": true, \"label\": \"L\"}", "body",
         "{\"label\":\"L\"}"},
        {"api31.json", "postRaw", "{\"body\": [1, 2]}", "body", "[1,2]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char url[256];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/api/spec/%s", port, cases[i].spec);
        sl_err err = {0};
        sl_tool_result r;
        sl_openapi_auth none = {0};
        /* 3.1's server names port 9: the override points it here */
        sl_toolset *t = make(url, strstr(cases[i].spec, "31") ? "" : NULL, none, true, &err);
        int rc = t ? call(t, cases[i].op, cases[i].args, 10, &r, &err)
                   : (sl_tool_result_init(&r), -1);
        char *got = echoed(&r, cases[i].field);
        CHECK(rc == 0 && !strcmp(got, cases[i].want), "by URL: %s %s: %s %s", cases[i].spec,
              cases[i].op, got, err.msg ? err.msg : "");
        free(got);
        sl_tool_result_release(&r);
        sl_err_clear(&err);
        sl_toolset_free(t);
    }
    sl_err err = {0};
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/spec/nope.yaml", port);
    sl_openapi_auth none = {0};
    sl_toolset *t = make(url, NULL, none, true, &err);
    CHECK(!t && strstr(err.msg, "HTTP 404"), "a document URL that answers 404: %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/spec/petstore3.yaml", port);
    t = make(url, NULL, none, false, &err);
    CHECK(!t && strstr(err.msg, "refused to connect"), "the document's URL passes the guard "
          "too: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
}

static void test_bindings(void)
{
    char dir[] = "/tmp/sluice-openapi-XXXXXX";
    if (!mkdtemp(dir))
        return;
    char p[512], q[512];
    snprintf(p, sizeof p, "%s/specs", dir);
    mkdir(p, 0755);
    size_t slen = 0;
    char *spec = slurp(SPECS "petstore3.yaml", &slen);
    snprintf(p, sizeof p, "%s/specs/pets.yaml", dir);
    FILE *f = fopen(p, "w");
    fputs(spec, f);
    fclose(f);
    free(spec);
    snprintf(p, sizeof p, "%s/out.yaml", dir);
    f = fopen(p, "w");
    fputs("openapi: 3.0.0\npaths: {/a: {get: {}}}\n", f);
    fclose(f);
    snprintf(q, sizeof q, "%s/tools", dir);
    mkdir(q, 0755);
    snprintf(q, sizeof q, "%s/tools/link.yaml", dir);
    if (symlink("../out.yaml", q))
        CHECK(0, "symlink");

    setenv("SLUICE_TEST_OPENAPI_KEY", "env-key-31337", 1);
    snprintf(p, sizeof p, "%s/sluice.yml", dir);
    f = fopen(p, "w");
    fprintf(f, "tools:\n  pets:\n    openapi:\n      spec: specs/pets.yaml\n"
               "      server: http://127.0.0.1:%d/api/v1\n"
               "      auth: {type: api_key, in: header, name: X-API-Key, value: {env: "
               "SLUICE_TEST_OPENAPI_KEY}}\n", port);
    fclose(f);
    sl_bindings *b = sl_bindings_new();
    sl_err err = {0};
    int rc = sl_bindings_load_file(b, p, "sluice.yml", true, &err);
    const sl_binding *pb = sl_bindings_get(b, "pets");
    CHECK(rc == 0 && pb && !strcmp(sl_binding_kind(pb), "openapi"),
          "an openapi binding loads: %s", err.msg ? err.msg : "");
    char *masked = sl_secret_mask("x env-key-31337 y");
    CHECK(masked && !strstr(masked, "31337"), "its key is a registered secret");
    free(masked);
    sl_value *list = NULL;
    rc = pb ? sl_binding_list(pb, true, NULL, false, &list, &err) : -1;
    CHECK(rc == 0 && sl_binding_find_tool(list, "getPet"),
          "its spec is read relative to the settings' folder: %s", err.msg ? err.msg : "");
    json_decref(list);
    sl_toolset *ts = pb ? sl_binding_toolset(pb, true, &err) : NULL;
    sl_tool_result r;
    rc = ts ? call(ts, "whoami", NULL, 10, &r, &err) : (sl_tool_result_init(&r), -1);
    char *got = echoed(&r, "headers.x-api-key");
    CHECK(rc == 0 && !strcmp(got, "\"env-key-31337\""), "the key from the environment is sent: %s",
          got);
    free(got);
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    sl_bindings_free(b);

    /* a bundle's: inside its tools/ folder only */
    static const struct {
        const char *yaml, *want;
    } bundle[] = {
        {"x:\n  openapi: {spec: ../out.yaml}\n", "tools/bindings.yml:2:19: tools.x.openapi.spec: "
                                                 "an app bundle's spec is a path inside"},
        {"x:\n  openapi: {spec: /etc/passwd}\n", "no absolute path"},
        {"x:\n  openapi: {spec: link.yaml, server: 'http://h'}\n", "leads out of the bundle"},
        {"x:\n  openapi: {spec: s.yaml, auth: {type: bearer, token: {env: HOME}}}\n",
         "may not read the environment"},
    };
    snprintf(p, sizeof p, "%s/tools/bindings.yml", dir);
    for (size_t i = 0; i < sizeof bundle / sizeof *bundle; i++) {
        f = fopen(p, "w");
        fputs(bundle[i].yaml, f);
        fclose(f);
        b = sl_bindings_new();
        rc = sl_bindings_load_file(b, p, "tools/bindings.yml", false, &err);
        if (rc == 0) {
            const sl_binding *x = sl_bindings_get(b, "x");
            rc = x && sl_binding_toolset(x, true, &err) ? 0 : -1;
        }
        CHECK(rc == -1 && err.msg && strstr(err.msg, bundle[i].want), "bundle binding %zu: %s", i,
              err.msg ? err.msg : "(made)");
        sl_err_clear(&err);
        sl_bindings_free(b);
    }

    static const struct {
        const char *yaml, *want;
    } bad[] = {
        {"x:\n  openapi: {server: 'http://h'}\n", "tools.x.openapi.spec: the OpenAPI document"},
        {"x:\n  openapi: {spec: /a.yaml, server: ftp://h}\n", "tools.x.openapi.server: the API's"},
        {"x:\n  openapi: {spec: /a.yaml, auth: {type: api_key}}\n", "api_key needs its value"},
        {"x:\n  openapi: {spec: /a.yaml, auth: {type: api_key, in: body, value: v}}\n",
         "tools.x.openapi.auth.in: is header or query"},
        {"x:\n  openapi: {spec: /a.yaml, auth: {type: basic, pass: v}}\n", "unknown setting 'pass'"},
        {"x:\n  openapi: {spec: /a.yaml, color: red}\n",
         "the settings are spec (or document), server and auth"},
        {"x:\n  openapi: {spec: /a.yaml, document: 'openapi: 3.0.0'}\n", "not both"},
        {"x:\n  openapi: {document: 5}\n", "tools.x.openapi.document: the OpenAPI document's"},
        {"x:\n  openapi: a.yaml\n  mcp: http://h/mcp\n", "either mcp or openapi, not both"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        b = sl_bindings_new();
        rc = sl_bindings_parse_text(b, bad[i].yaml, strlen(bad[i].yaml), "s.yml", true, &err);
        CHECK(rc == -1 && err.msg && strstr(err.msg, bad[i].want), "bad binding %zu: %s", i,
              err.msg ? err.msg : "(loaded)");
        sl_err_clear(&err);
        sl_bindings_free(b);
    }
    char *shown = NULL;
    sl_value *one = J("{\"openapi\": {\"spec\": \"/x.yaml\", \"server\": "
                      "\"https://u:p-shown-no@h/v1?k=q-shown-no\", \"auth\": {\"type\": \"basic\", "
                      "\"username\": \"u\", \"password\": \"pw-shown-no\"}}}");
    rc = sl_bindings_spec_set(&shown, "x", one, &err);
    sl_value *v = sl_bindings_spec_show(shown);
    char *vs = json_dumps(v, JSON_COMPACT);
    CHECK(rc == 0 && vs && !strstr(vs, "shown-no") && strstr(vs, "/x.yaml") &&
              strstr(vs, "\"https://h/v1\""),
          "a stored binding shows its auth masked: %s", vs ? vs : "");
    free(vs);
    json_decref(v);
    json_decref(one);
    free(shown);

    /* a document kept in the binding itself (sluice tools bind --openapi FILE) */
    shown = NULL;
    spec = slurp(SPECS "petstore3.yaml", &slen);
    char srv[100];
    snprintf(srv, sizeof srv, "http://127.0.0.1:%d/api/v1", port);
    one = json_pack("{s:{s:s,s:s,s:{s:s,s:s}}}", "openapi", "document", spec, "server", srv,
                    "auth", "type", "bearer", "token", "tok-kept-4242");
    free(spec);
    rc = sl_bindings_spec_set(&shown, "kept", one, &err);
    json_decref(one);
    b = sl_bindings_new();
    if (rc == 0)
        rc = sl_bindings_parse_json(b, shown, "store", &err);
    pb = rc == 0 ? sl_bindings_get(b, "kept") : NULL;
    ts = pb ? sl_binding_toolset(pb, true, &err) : NULL;
    rc = ts ? call(ts, "whoami", NULL, 10, &r, &err) : (sl_tool_result_init(&r), -1);
    got = echoed(&r, "headers.authorization");
    CHECK(rc == 0 && !strcmp(got, "\"Bearer tok-kept-4242\"") &&
              !strcmp(sl_binding_where(pb), srv),
          "a binding with its document kept in it calls the API: %s %s", got,
          err.msg ? err.msg : "");
    free(got);
    masked = sl_secret_mask("x tok-kept-4242 y");
    CHECK(masked && !strstr(masked, "4242"), "... and its token is a registered secret");
    free(masked);
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    sl_bindings_free(b);
    v = sl_bindings_spec_show(shown);
    vs = json_dumps(v, JSON_COMPACT);
    CHECK(vs && strstr(vs, "\"document\":\"(kept in the store, ") && !strstr(vs, "getPet") &&
              !strstr(vs, "4242"),
          "it shows the document's size, not its text, and no token: %s", vs ? vs : "");
    free(vs);
    json_decref(v);
    free(shown);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        CHECK(0, "cleanup");
}

/* The fast readers (tools/oatree.h) against jansson and dsl/yaml: what
 * they accept reads the same; what they decline still loads. */
static void test_fast_readers(void)
{
    static const struct {
        const char *text;
        bool accept;
    } yaml[] = {
        {"a: b\nc: [1, -2, 0x1f, 1.5e+3, 010, 1_000, ~, yes, Off, null, 'x', \"y\"]\ne: 1:30\n", true},
        {"info: {title: 'It''s', version: \"1\\t\\u00e9\\\"\", x: {y: [z]}}\n", true},
        {"---\n# c\nservers:\n- url: https://h/v1   # note\n  description: d\n- {url: /x}\n", true},
        {"p:\n  /a/{b}:\n    get:\n      parameters:\n      - name: b\n        in: path\n"
         "      responses:\n        200: {description: ok}\n        '404': x\n", true},
        {"d: |\n  one\n\n  two\n    three\ne: >-\n  a\n  b\n\n  c\nf: |-\n  x\ng: >\n  y\n", true},
        {"a:\n  - b\n  - - c\n", false},               /* a compact nested list */
        {"a: &x {b: 1}\nc: *x\n", false},               /* anchors */
        {"a: !!str 1\n", false},                         /* tags */
        {"a: b\na: c\n", false},                        /* a duplicate key */
        {"a:\tb\n", false},                             /* a tab */
        {"a: b\r\nc: d\r\n", false},                     /* CR */
        {"a: multi\n  line\n", false},                  /* multi-line plain text */
        {"a: [b,\n  c]\n", false},                      /* a flow over two lines */
        {"a: {b: c:d}\n", false},                        /* a colon in flow text */
        {"<<: {a: 1}\nb: 2\n", false},                  /* a merge key */
        {"a: b\n---\nc: d\n", false},                  /* two documents */
        {"true: 1\n", false},                            /* a key that is not text */
        {"a: |+\n  kept\n\n", false},                  /* keep chomping */
    };
    for (size_t i = 0; i < sizeof yaml / sizeof *yaml; i++) {
        const char *text = yaml[i].text;
        oat_tree *t = oat_parse_yaml(text, strlen(text));
        sl_yaml_doc y;
        int rc = sl_yaml_parse_ex(text, strlen(text), "t.yaml", &y, false, NULL);
        CHECK(!t == !yaml[i].accept, "YAML %zu is %s by the fast reader", i,
              yaml[i].accept ? "read" : "declined");
        if (t) {
            sl_value *v = oat_value(oat_root(t));
            char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            CHECK(rc == 0 && json_equal(v, y.root), "YAML %zu reads as dsl/yaml reads it: %s", i,
                  got);
            free(got);
            json_decref(v);
            oat_free(t);
        }
        if (rc == 0)
            sl_yaml_doc_release(&y);
    }
    static const struct {
        const char *text;
        bool accept;
    } js[] = {
        {"{\"a\": [1, -0, 2.5e-3, 1E2, true, false, null, \"\\u00e9\\ud83d\\ude00\\n\\/\"], "
         "\"\": {}, \"b\": []}", true},
        {"{\"a\": 1, \"a\": 2}", false},                   /* a duplicate key */
        {"{\"a\": \"\\u0000\"}", false},                   /* NUL */
        {"{\"a\": 1e999}", false},                         /* overflow */
        {"{\"a\": 99999999999999999999}", false},          /* too big an int */
        {"{\"a\": \"\\ud800\"}", false},                   /* a lone surrogate */
        {"{\"a\": 1,}", false},                            /* not JSON */
        {"{\"a\": 01}", false},
    };
    for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
        const char *text = js[i].text;
        oat_tree *t = oat_parse_json(text, strlen(text));
        CHECK(!t == !js[i].accept, "JSON %zu is %s by the fast reader", i,
              js[i].accept ? "read" : "declined");
        if (t) {
            sl_value *want = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, NULL);
            sl_value *v = oat_value(oat_root(t));
            CHECK(want && json_equal(v, want), "JSON %zu reads as jansson reads it", i);
            json_decref(want);
            json_decref(v);
            oat_free(t);
        }
    }
    /* one document three ways: YAML (fast), JSON (fast), YAML with an
     * anchor (the full reader): the same tools */
    size_t len = 0;
    char *text = slurp(SPECS "petstore3.yaml", &len);
    sl_yaml_doc y;
    if (!text || sl_yaml_parse_ex(text, len, "p.yaml", &y, false, NULL)) {
        CHECK(0, "petstore3.yaml reads");
        free(text);
        return;
    }
    char *json = json_dumps(y.root, JSON_INDENT(1));
    sl_yaml_doc_release(&y);
    sl_buf anchored;
    sl_buf_init(&anchored, 0);
    sl_buf_adds(&anchored, text);
    sl_buf_adds(&anchored, "\nx-anchored: &a {b: 1}\nx-alias: *a\n");
    const char *texts[3] = {text, json, anchored.data};
    char *lists[3];
    for (int i = 0; i < 3; i++) {
        sl_openapi_doc *d = NULL;
        sl_err err = {0};
        int rc = sl_openapi_parse(texts[i], strlen(texts[i]), "p", NULL, &d, &err);
        lists[i] = rc ? sl_xstrdup(err.msg) : json_dumps(sl_openapi_tools(d), JSON_COMPACT);
        sl_err_clear(&err);
        sl_openapi_doc_free(d);
    }
    CHECK(!strcmp(lists[0], lists[1]) && !strcmp(lists[0], lists[2]) && strstr(lists[0], "getPet"),
          "YAML, JSON and YAML past the fast reader give the same tools: %.200s", lists[0]);
    for (int i = 0; i < 3; i++)
        free(lists[i]);
    free(json);
    free(text);
    sl_buf_release(&anchored);
}

int main(void)
{
    test_reader();
    test_fast_readers();
    test_bad();
    test_request();
    test_shape();
    pid_t pid = start_stand_in("openapi_standin", true, &port);
    if (pid > 0) {
        test_live();
        test_auth();
        test_by_url();
        test_bindings();
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    } else
        SKIP("the stand-in API", "python3 tests/tools/openapi_standin.py did not start");
    return tap_done();
}
