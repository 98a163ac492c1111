/*
 * fuzz_openapi — libFuzzer target for the OpenAPI reader (tools/openapi):
 * a document's bytes, JSON or YAML, any version, as a bound spec file or
 * URL would hand them over; then a request for every operation it kept,
 * with arguments made from the document itself, and the answer shaper.
 *
 * The first byte picks a few knobs (a base URL or none, which arguments);
 * the rest is the document.  Checks besides memory errors:
 *   - every kept tool has a non-empty name, a description and an object
 *     inputSchema whose `required` names only its properties;
 *   - names are unique (the list is what the tool node looks up);
 *   - a built request's URL starts with the server, and its header lines
 *     hold no CR and end in "\n";
 *   - the server is NULL or an absolute http(s) URL;
 *   - the fast readers (tools/oatree) agree with the full ones: when
 *     oat_parse_json accepts the text, jansson reads the same value (and
 *     oat_json_loads reads any text as json_loadb does); when
 *     oat_parse_yaml accepts it, dsl/yaml reads the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "dsl/yaml.h"
#include "tools/oatree.h"
#include "tools/openapi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tools(const sl_value *tools)
{
    size_t i;
    const sl_value *t;
    json_array_foreach(tools, i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        const sl_value *s = json_object_get(t, "inputSchema");
        const sl_value *props = json_object_get(s, "properties");
        if (!name || !*name || !json_is_string(json_object_get(t, "description")) ||
            !json_is_object(s) || !json_is_object(props))
            abort();
        size_t k;
        const sl_value *r;
        json_array_foreach(json_object_get(s, "required"), k, r)
            if (!json_object_get(props, json_string_value(r) ? json_string_value(r) : ""))
                abort();
        for (size_t j = 0; j < i; j++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(tools, j), "name")), name))
                abort();
    }
}

/* Arguments for a tool: each property given a value of a kind the first
 * byte picks. */
static sl_value *args_for(const sl_value *tool, uint8_t knob)
{
    sl_value *a = json_object();
    const char *k;
    const sl_value *x;
    int n = 0;
    json_object_foreach(json_object_get(json_object_get(tool, "inputSchema"), "properties"), k, x) {
        switch ((knob + n++) % 5) {
        case 0: json_object_set_new(a, k, json_string("a b/c?d&e=f{g}")); break;
        case 1: json_object_set_new(a, k, json_integer(42)); break;
        case 2: json_object_set_new(a, k, json_pack("[s,i,b]", "x", 1, 1)); break;
        case 3: json_object_set_new(a, k, json_pack("{s:s}", "k", "v")); break;
        default: json_object_set_new(a, k, json_true()); break;
        }
    }
    return a;
}

/* A fast reader's tree against the full reader's value of the same text. */
static void check_fast(const char *text, size_t len)
{
    oat_tree *t = oat_parse_json(text, len);
    if (t) {
        sl_value *want = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
        sl_value *got = oat_value(oat_root(t));
        if (!want || !json_equal(want, got))
            abort();
        json_decref(want);
        json_decref(got);
        oat_free(t);
    }
    /* an answer's JSON, any value at the top */
    sl_value *any = oat_json_loads(text, len);
    sl_value *want = json_loadb(text, len, JSON_DECODE_ANY, NULL);
    if (!any != !want || (any && !json_equal(any, want)))
        abort();
    json_decref(any);
    json_decref(want);
    t = oat_parse_yaml(text, len);
    if (t) {
        sl_yaml_doc y;
        if (sl_yaml_parse_ex(text, len, "fuzz.yaml", &y, false, NULL))
            abort();
        sl_value *got = oat_value(oat_root(t));
        if (!json_equal(y.root, got))
            abort();
        json_decref(got);
        sl_yaml_doc_release(&y);
        oat_free(t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    check_fast((const char *)data + 1, size - 1);
    uint8_t knob = data[0];
    const char *base = knob & 1 ? "https://api.example.com/specs/v1/openapi.yaml" : NULL;
    sl_openapi_doc *d = NULL;
    sl_err err = {0};
    if (sl_openapi_parse((const char *)data + 1, size - 1, "fuzz.yaml", base, &d, &err)) {
        if (!err.msg || d)
            abort();
        sl_err_clear(&err);
        return 0;
    }
    const sl_value *tools = sl_openapi_tools(d);
    check_tools(tools);
    const char *server = sl_openapi_server(d);
    if (server && strncmp(server, "http://", 7) && strncmp(server, "https://", 8))
        abort();
    size_t i;
    const sl_value *t;
    json_array_foreach(tools, i, t) {
        if (i >= 64)
            break;
        sl_value *a = args_for(t, knob >> 1);
        sl_openapi_req rq;
        sl_openapi_req_init(&rq);
        if (sl_openapi_request(d, json_string_value(json_object_get(t, "name")), a,
                               "https://h.example/base", &rq, &err) == 0) {
            if (strncmp(rq.url.data, "https://h.example/base", 22) || !rq.method)
                abort();
            if (rq.headers.len && (memchr(rq.headers.data, '\r', rq.headers.len) ||
                                   rq.headers.data[rq.headers.len - 1] != '\n'))
                abort();
        }
        sl_err_clear(&err);
        sl_openapi_req_release(&rq);
        json_decref(a);
    }
    sl_openapi_doc_free(d);
    /* the shaper over the same bytes */
    static const char *const types[] = {"application/json", "text/plain", "image/png", "",
                                        "application/problem+json"};
    sl_tool_result r;
    sl_tool_result_init(&r);
    sl_tool_ctx ctx = {.max_output = 1u << 16};
    sl_openapi_shape(types[knob % 5], NULL, (const char *)data + 1, size - 1, &ctx, &r, &err);
    sl_err_clear(&err);
    if (r.bytes > (1u << 16) + size)
        abort();
    sl_tool_result_release(&r);
    return 0;
}
