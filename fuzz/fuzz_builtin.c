/*
 * fuzz_builtin — libFuzzer target for what outside input reaches in the
 * built-in tools (tools/builtin.h): a web page's HTML (webscraper's
 * HTML to text) and json_process's JSONPath queries and JSON content,
 * from a DSL or a model.
 *
 * The first byte picks the path; for json_process the rest is split at
 * the first NUL into the query and the content.  Checks besides memory
 * errors:
 *   - the text of HTML that is valid UTF-8 is valid UTF-8, has no
 *     blank line and no line that starts or ends with a space;
 *   - a json_process call answers text or fails with a message, never
 *     both and never neither.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/value.h"
#include "tools/builtin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool utf8_ok(const char *s, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_utf8_clean(s, n, &b);
    bool ok = b.len == n && (!n || !memcmp(b.data, s, n));
    sl_buf_release(&b);
    return ok;
}

static void html(const char *p, size_t n)
{
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(p, n, &clean);
    sl_buf out;
    char *title;
    sl_builtin_html_text(clean.data ? clean.data : "", clean.len, &out, &title);
    const char *s = out.data ? out.data : "";
    if (!utf8_ok(s, out.len) || (title && !utf8_ok(title, strlen(title))))
        abort();
    for (size_t i = 0; i < out.len; i++) {
        bool start = i == 0 || s[i - 1] == '\n', end = i + 1 == out.len || s[i + 1] == '\n';
        if ((s[i] == '\n' && start) || (s[i] == ' ' && (start || end)))
            abort();
    }
    free(title);
    sl_buf_release(&out);
    sl_buf_release(&clean);
}

static void json_tool(uint8_t knob, const char *p, size_t n)
{
    static const char *tools[] = {"parse", "json_insert", "json_replace", "json_delete"};
    static const char *models[] = {"pattern", "key", "value"};
    const char *nul = memchr(p, '\0', n);
    size_t qn = nul ? (size_t)(nul - p) : n;
    sl_value *args = json_object();
    json_object_set_new(args, "json_filter", json_stringn_nocheck(p, qn));
    json_object_set_new(args, "query", json_stringn_nocheck(p, qn));
    json_object_set_new(args, "content", nul ? json_stringn_nocheck(nul + 1, n - qn - 1)
                                             : json_string("{\"a\": [1, {\"b\": \"c\"}]}"));
    json_object_set_new(args, "new_value", json_string(knob & 16 ? "{\"x\": 1}" : "v"));
    json_object_set_new(args, "replace_value", json_string("r"));
    json_object_set_new(args, "replace_pattern", json_string("c"));
    json_object_set_new(args, "replace_model", json_string(models[(knob >> 5) % 3]));
    json_object_set_new(args, "value_decode", json_boolean(knob & 16));
    json_object_set_new(args, "create_path", json_string(knob & 8 ? "True" : "False"));
    json_object_set_new(args, "ensure_ascii", json_boolean(knob & 4));
    sl_toolset *ts = sl_builtin_toolset("fuzz", sl_builtin_json_tools, sl_builtin_json_n);
    sl_tool_ctx ctx = {.max_output = 1 << 20};
    sl_tool_result res;
    sl_tool_result_init(&res);
    sl_err err = {0};
    int rc = sl_toolset_call(ts, &ctx, tools[knob & 3], args, &res, &err);
    if ((rc == 0) == (err.msg != NULL))
        abort();
    sl_err_clear(&err);
    sl_tool_result_release(&res);
    sl_toolset_free(ts);
    json_decref(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 16))
        return 0;
    const char *p = (const char *)data + 1;
    if (data[0] & 128)
        html(p, size - 1);
    else
        json_tool(data[0], p, size - 1);
    return 0;
}
