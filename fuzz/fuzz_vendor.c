/*
 * fuzz_vendor — libFuzzer target for what a vendor's API answers to the
 * built-in tools that call one (tools/builtin.h), and the arguments a DSL
 * or a model hands them: Tavily's search and extract answers and
 * arguments as the plugin's markdown, a vendor's error body as the
 * message of an error, and Jina's request_params as a query string.
 *
 * The first byte picks the path; for Tavily the rest is split at the
 * first NUL into the arguments and the answer (JSON; text that does not
 * parse is taken as a JSON string).  Checks besides memory errors:
 *   - Tavily's markdown is valid UTF-8;
 *   - a vendor's message is valid UTF-8 on one line, at most 300 bytes
 *     of the body (each replaced byte may take 3);
 *   - request_params either fail with a message or give "?k=v&…" of
 *     percent-encoded bytes only, never both and never neither.
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

static sl_value *parse(const char *p, size_t n)
{
    sl_value *v = json_loadb(p, n, JSON_DECODE_ANY, NULL);
    if (v)
        return v;
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_utf8_clean(p, n, &b);
    v = json_stringn(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return v;
}

static void tavily(bool extract, const char *p, size_t n)
{
    const char *nul = memchr(p, '\0', n);
    size_t an = nul ? (size_t)(nul - p) : n;
    sl_value *args = parse(p, an);
    sl_value *answer = nul ? parse(nul + 1, n - an - 1) : json_object();
    if (!json_is_object(args)) {
        json_decref(args);
        args = json_object();
    }
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_builtin_tavily_text(extract, args, answer, &out);
    if (!utf8_ok(out.data ? out.data : "", out.len))
        abort();
    sl_buf_release(&out);
    json_decref(args);
    json_decref(answer);
}

static void message(const char *p, size_t n)
{
    char *m = sl_builtin_vendor_message(p, n);
    size_t len = strlen(m);
    if (!utf8_ok(m, len) || strpbrk(m, "\r\n") || len > 900)
        abort();
    free(m);
}

static void query(const char *p, size_t n)
{
    char *s = strndup(p, n);
    sl_buf q;
    sl_buf_init(&q, 0);
    sl_err err = {0};
    int rc = sl_builtin_jina_query(s, &q, &err);
    if ((rc == 0) == (err.msg != NULL))
        abort();
    if (rc == 0 && q.len) {
        if (q.data[0] != '?')
            abort();
        for (size_t i = 1; i < q.len; i++)
            if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&",
                        q.data[i]))
                abort();
    }
    sl_err_clear(&err);
    sl_buf_release(&q);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 16))
        return 0;
    const char *p = (const char *)data + 1;
    switch (data[0] & 3) {
    case 0: tavily(false, p, size - 1); break;
    case 1: tavily(true, p, size - 1); break;
    case 2: message(p, size - 1); break;
    default: query(p, size - 1); break;
    }
    return 0;
}
