/*
 * fuzz_jinja — libFuzzer target for the Jinja2 engine (tmpl/jinja):
 * compile arbitrary text and render it against a fixed context with
 * every value shape (strings with non-ASCII, numbers, null, lists, dicts).
 *
 * Checks, besides memory errors and undefined behaviour:
 *   - compile either succeeds or fails with SL_EPARSE and a message;
 *   - render either succeeds or fails with a message (SL_EINVAL or
 *     SL_ELIMIT), never past the caps: small ones here, so the cap paths
 *     are fuzzed too (output 2,000 characters, 5,000 loop iterations,
 *     macro depth 20).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl/jinja.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sl_value *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    ctx = json_loads("{\"s\": \"h\\u00e9llo w\\u00f6rld\", \"n\": 42, \"f\": 2.5, \"z\": null,"
                     " \"t\": true, \"l\": [1, \"a\", null, [2, 3], {\"k\": \"v\"}],"
                     " \"d\": {\"a\": 1, \"b\": [\"x\", \"y\"], \"c\": {\"d\": \"e\"}},"
                     " \"users\": [{\"name\": \"ann\", \"age\": 30}, {\"name\": \"bob\", \"age\": 25}]}",
                     0, NULL);
    return ctx ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    sl_err err = {0};
    sl_jinja *t;
    if (sl_jinja_compile((const char *)data, size, "fuzz", &t, &err) < 0) {
        if (err.code != SL_EPARSE || !err.msg)
            abort();
        sl_err_clear(&err);
        return 0;
    }
    sl_jinja_limits lim;
    sl_jinja_limits_default(&lim);
    lim.max_output_chars = 2000;
    lim.max_loop_iterations = 5000;
    lim.max_depth = 20;
    sl_buf out;
    sl_buf_init(&out, 0);
    if (sl_jinja_render(t, ctx, &lim, &out, &err) < 0) {
        if (!err.msg || (err.code != SL_EINVAL && err.code != SL_ELIMIT))
            abort();
    } else if (out.len > 4 * lim.max_output_chars) {
        abort();
    }
    sl_buf_release(&out);
    sl_err_clear(&err);
    sl_jinja_free(t);
    return 0;
}
