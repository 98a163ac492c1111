/*
 * openapi_bench — the OpenAPI toolset's own costs (docs/tools.md, "OpenAPI
 * tools"):
 *
 *   call:  one call's overhead without the HTTP exchange: finding the
 *          operation among ~1,000, mapping the arguments to the request
 *          (path, query, header, a JSON body) and shaping a 600-byte JSON
 *          answer into a tool result: median <= 20 us;
 *   load:  reading a 1 MB OpenAPI 3.0 document (1,000 operations with
 *          parameters, a JSON body and $refs into components), as JSON and
 *          as YAML: median <= 20 ms each.  Loading reads every operation
 *          and checks every schema and $ref; the tool list's JSON Schemas
 *          are made when the list is first asked for, which is timed and
 *          shown apart ("list").
 *
 * For reference it also times what reading the same text into values
 * costs with the general readers (jansson's json_loadb for JSON, dsl/yaml
 * for YAML), which the reader uses only for what its fast readers decline
 * (tools/oatree.h).
 * The documents are generated here, so the bench needs nothing else.
 * Prints each figure and PASS/FAIL; exits 1 on a miss.
 *
 *   openapi_bench [-n ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "dsl/yaml.h"
#include "tools/openapi.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* About `bytes` of OpenAPI 3.0: operations op0… on /things{i}/{id}. */
static void gen(sl_buf *b, size_t bytes, bool yaml)
{
    int n = 0;
    if (yaml) {
        sl_buf_adds(b, "openapi: 3.0.3\ninfo: {title: Bench, version: '1'}\nservers:\n"
                       "- url: https://api.example.com/v1\ncomponents:\n  schemas:\n");
        for (int i = 0; i < 50; i++)
            sl_buf_addf(b, "    Thing%d:\n      type: object\n      required: [name]\n"
                           "      properties:\n        name: {type: string, description: "
                           "the name of the thing}\n        size: {type: integer}\n        tags: "
                           "{type: array, items: {type: string}}\n        owner: {$ref: "
                           "'#/components/schemas/Owner'}\n", i);
        sl_buf_adds(b, "    Owner:\n      type: object\n      properties:\n        id: {type: "
                       "string}\n        email: {type: string, format: email}\npaths:\n");
        while (b->len < bytes) {
            sl_buf_addf(b, "  /things%d/{id}:\n    post:\n      operationId: op%d\n      summary: "
                           "Change thing %d and say what it became\n      parameters:\n"
                           "      - {name: id, in: path, required: true, schema: {type: "
                           "string}}\n      - {name: verbose, in: query, schema: {type: "
                           "boolean}}\n      - {name: X-Request-Id, in: header, schema: {type: "
                           "string}}\n      requestBody:\n        content:\n          "
                           "application/json:\n            schema: {$ref: "
                           "'#/components/schemas/Thing%d'}\n      responses:\n        '200': "
                           "{description: ok}\n", n, n, n, n % 50);
            n++;
        }
        return;
    }
    sl_buf_adds(b, "{\"openapi\": \"3.0.3\", \"info\": {\"title\": \"Bench\", \"version\": \"1\"}, "
                   "\"servers\": [{\"url\": \"https://api.example.com/v1\"}], \"components\": "
                   "{\"schemas\": {");
    for (int i = 0; i < 50; i++)
        sl_buf_addf(b, "\"Thing%d\": {\"type\": \"object\", \"required\": [\"name\"], "
                       "\"properties\": {\"name\": {\"type\": \"string\", \"description\": \"the "
                       "name of the thing\"}, \"size\": {\"type\": \"integer\"}, \"tags\": "
                       "{\"type\": \"array\", \"items\": {\"type\": \"string\"}}, \"owner\": "
                       "{\"$ref\": \"#/components/schemas/Owner\"}}}, ", i);
    sl_buf_adds(b, "\"Owner\": {\"type\": \"object\", \"properties\": {\"id\": {\"type\": "
                   "\"string\"}, \"email\": {\"type\": \"string\", \"format\": \"email\"}}}}}, "
                   "\"paths\": {");
    while (b->len < bytes) {
        sl_buf_addf(b, "%s\"/things%d/{id}\": {\"post\": {\"operationId\": \"op%d\", \"summary\": "
                       "\"Change thing %d and say what it became\", \"parameters\": [{\"name\": "
                       "\"id\", \"in\": \"path\", \"required\": true, \"schema\": {\"type\": "
                       "\"string\"}}, {\"name\": \"verbose\", \"in\": \"query\", \"schema\": "
                       "{\"type\": \"boolean\"}}, {\"name\": \"X-Request-Id\", \"in\": "
                       "\"header\", \"schema\": {\"type\": \"string\"}}], \"requestBody\": "
                       "{\"content\": {\"application/json\": {\"schema\": {\"$ref\": "
                       "\"#/components/schemas/Thing%d\"}}}}, \"responses\": {\"200\": "
                       "{\"description\": \"ok\"}}}}",
                    n ? ", " : "", n, n, n, n % 50);
        n++;
    }
    sl_buf_adds(b, "}}");
}

static int load_bench(const char *what, bool yaml, int iters, sl_openapi_doc **keep)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    gen(&b, 1000000, yaml);
    double *t = calloc((size_t)iters, sizeof *t), *tl = calloc((size_t)iters, sizeof *tl);
    size_t ops = 0;
    for (int i = 0; i < iters; i++) {
        sl_openapi_doc *d = NULL;
        sl_err err = {0};
        double t0 = sl_clock_s();
        if (sl_openapi_parse(b.data, b.len, what, NULL, &d, &err)) {
            fprintf(stderr, "openapi_bench: %s\n", err.msg);
            exit(2);
        }
        t[i] = sl_clock_s() - t0;
        t0 = sl_clock_s();
        ops = json_array_size(sl_openapi_tools(d));
        tl[i] = sl_clock_s() - t0;
        if (keep && !*keep)
            *keep = d;
        else
            sl_openapi_doc_free(d);
    }
    double m = median(t, iters), list = median(tl, iters);
    for (int i = 0; i < iters; i++) {
        double t0 = sl_clock_s();
        sl_value *v = NULL;
        sl_yaml_doc y;
        if (yaml) {
            if (sl_yaml_parse_ex(b.data, b.len, what, &y, false, NULL) == 0)
                sl_yaml_doc_release(&y);
        } else
            v = json_loadb(b.data, b.len, 0, NULL);
        t[i] = sl_clock_s() - t0;
        json_decref(v);
    }
    double floor = median(t, iters);
    bool ok = m <= 0.020;
    printf("load %-5s %7zu bytes, %4zu operations: median %6.2f ms (target <= 20 ms; then the "
           "list: %.2f ms; %s alone: %.2f ms)  %s\n", yaml ? "YAML" : "JSON", b.len, ops,
           m * 1e3, list * 1e3, yaml ? "dsl/yaml's parse" : "json_loadb", floor * 1e3,
           ok ? "PASS" : "FAIL");
    free(t);
    free(tl);
    sl_buf_release(&b);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int iters = 200000;
    if (argc == 3 && !strcmp(argv[1], "-n"))
        iters = atoi(argv[2]);
    sl_openapi_doc *d = NULL;
    int fails = load_bench("bench.json", false, 21, &d);
    fails += load_bench("bench.yaml", true, 11, NULL);

    sl_value *args = json_pack("{s:s,s:b,s:s,s:s,s:i,s:[s,s],s:{s:s}}", "id", "th-42", "verbose",
                               1, "X-Request-Id", "req-0001", "name", "a thing", "size", 7, "tags",
                               "red", "round", "owner", "id", "o-1");
    const char *answer = "{\"id\": \"th-42\", \"name\": \"a thing\", \"size\": 7, \"tags\": [\"red\", "
                         "\"round\"], \"owner\": {\"id\": \"o-1\", \"email\": \"o@example.com\"}, "
                         "\"created\": \"2026-01-01T00:00:00Z\", \"updated\": "
                         "\"2026-01-02T00:00:00Z\", \"history\": [{\"at\": \"2026-01-01\", "
                         "\"what\": \"made\"}, {\"at\": \"2026-01-02\", \"what\": \"changed\"}], "
                         "\"links\": {\"self\": \"https://api.example.com/v1/things/th-42\", "
                         "\"owner\": \"https://api.example.com/v1/owners/o-1\"}, \"note\": "
                         "\"padding to six hundred bytes of a typical answer, padding padding "
                         "padding padding padding padding padding padding padding padding\"}";
    size_t alen = strlen(answer);
    int rounds = 101, per = iters / rounds > 0 ? iters / rounds : 1;
    double *t = calloc((size_t)rounds, sizeof *t);
    char name[32];
    for (int r = -5; r < rounds; r++) {
        double t0 = sl_clock_s();
        for (int i = 0; i < per; i++) {
            snprintf(name, sizeof name, "op%d", (i * 7919) % 1000);
            sl_openapi_req rq;
            sl_openapi_req_init(&rq);
            sl_err err = {0};
            if (sl_openapi_request(d, name, args, "https://api.example.com/v1", &rq, &err)) {
                fprintf(stderr, "openapi_bench: %s\n", err.msg);
                return 2;
            }
            sl_tool_result res;
            sl_tool_result_init(&res);
            if (sl_openapi_shape("application/json", NULL, answer, alen, NULL, &res, &err))
                return 2;
            sl_tool_result_release(&res);
            sl_openapi_req_release(&rq);
        }
        if (r >= 0)
            t[r] = (sl_clock_s() - t0) / per;
    }
    double m = median(t, rounds);
    bool ok = m <= 20e-6;
    printf("call overhead (lookup among %zu, arguments, shaping %zu bytes of JSON): median %.2f us "
           "(target <= 20 us)  %s\n", json_array_size(sl_openapi_tools(d)), alen, m * 1e6,
           ok ? "PASS" : "FAIL");
    fails += !ok;
    free(t);
    json_decref(args);
    sl_openapi_doc_free(d);
    return fails ? 1 : 0;
}
