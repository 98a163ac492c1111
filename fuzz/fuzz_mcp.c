/*
 * fuzz_mcp — libFuzzer target for what an MCP server's bytes reach
 * (tools/mcp_wire): the message reader behind an SSE stream and behind
 * stdio lines, tools/list pages and their x-mcp-header marks, the
 * tools/call result mapper, argument cleaning, header values and the
 * Python repr.
 *
 * The first byte picks the path and a few knobs (cap, output schema); the
 * rest is the server's bytes.  Checks besides memory errors:
 *   - a message reads as one kind, with what that kind needs (a response
 *     has exactly one of result and error, a result is an object);
 *   - stdio lines split the same whole or byte by byte;
 *   - a mapped result stays within its cap and its text is valid UTF-8;
 *   - a kept tool has a name within the cap and a description within its;
 *   - a header value is printable ASCII on one line;
 *   - cleaned arguments hold no null and no blank string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/value.h"
#include "llm/sse.h"
#include "tools/mcp_wire.h"
#include "tools/tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const char *p, size_t n)
{
    sl_mcp_msg m;
    sl_mcp_msg_read(p, n, &m);
    switch (m.kind) {
    case SL_MCP_RESPONSE:
        if (!m.msg || !m.id || (!m.result == !m.error) || (m.result && !json_is_object(m.result)))
            abort();
        break;
    case SL_MCP_REQUEST:
        if (!m.method || !m.id || (!json_is_string(m.id) && !json_is_integer(m.id)))
            abort();
        break;
    case SL_MCP_NOTIFICATION:
        if (!m.method || json_object_get(m.msg, "id"))
            abort();
        break;
    case SL_MCP_INVALID:
        if (m.msg || !m.why[0])
            abort();
        break;
    }
    sl_mcp_msg_release(&m);
}

static int on_event(const char *event, const char *d, size_t len, void *ud)
{
    (void)event;
    (void)ud;
    check_msg(d, len);
    return 0;
}

static int on_line(const char *line, size_t len, void *ud)
{
    sl_buf *b = ud;
    check_msg(line, len);
    sl_buf_add(b, line, len);
    sl_buf_addc(b, '\n');
    return 0;
}

static void lines(const uint8_t *data, size_t size, size_t step, sl_buf *out, int *rc)
{
    sl_mcp_lines l;
    sl_mcp_lines_init(&l, 256);
    *rc = 0;
    for (size_t i = 0; i < size && !*rc; i += step) {
        size_t n = size - i < step ? size - i : step;
        *rc = sl_mcp_lines_feed(&l, (const char *)data + i, n, on_line, out);
    }
    sl_mcp_lines_release(&l);
}

static void ascii_line(const sl_buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if ((unsigned char)b->data[i] < 0x20 || (unsigned char)b->data[i] > 0x7e)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    uint8_t knob = data[0];
    data++, size--;
    const char *text = (const char *)data;
    switch (knob % 6) {
    case 0: {  /* an event stream of messages, in pieces */
        sl_sse p;
        sl_sse_init(&p, 4096, on_event, NULL);
        size_t step = (size_t)(knob / 6) % 13 + 1;
        int rc = 0;
        for (size_t i = 0; i < size && !rc; i += step)
            rc = sl_sse_feed(&p, text + i, size - i < step ? size - i : step);
        if (!rc)
            sl_sse_finish(&p);
        sl_sse_release(&p);
        check_msg(text, size);
        break;
    }
    case 1: {  /* stdio lines, whole and byte by byte */
        sl_buf a, b;
        sl_buf_init(&a, 0);
        sl_buf_init(&b, 0);
        int ra, rb;
        lines(data, size, size, &a, &ra);
        lines(data, size, 1, &b, &rb);
        if (ra != rb || (!ra && (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len)))))
            abort();
        sl_buf_release(&a);
        sl_buf_release(&b);
        break;
    }
    case 2: {  /* a tools/call result */
        sl_value *v = json_loadb(text, size, JSON_DECODE_ANY, NULL);
        if (!v)
            break;
        size_t cap = (size_t)((knob / 6) % 8) * 512 + 1;
        sl_tool_ctx ctx = {.max_output = cap};
        sl_tool_result r;
        sl_tool_result_init(&r);
        sl_err err = {0};
        int rc = sl_mcp_result_map(v, knob & 0x80, &ctx, &r, &err);
        if (!rc && r.bytes > cap)
            abort();
        if (!rc && !sl_utf8_valid(r.text.data ? r.text.data : "", r.text.len))
            abort();
        if (!rc && r.text.len > cap)
            abort();
        if (rc && !err.msg)
            abort();
        sl_err_clear(&err);
        sl_tool_result_release(&r);
        json_decref(v);
        break;
    }
    case 3: {  /* a tools/list page and its x-mcp-header marks */
        sl_value *v = json_loadb(text, size, JSON_DECODE_ANY, NULL);
        if (!v)
            break;
        sl_value *tools = json_array();
        const char *cur = NULL;
        size_t skipped = 0;
        sl_err err = {0};
        if (!sl_mcp_tools_page(v, tools, 20, &cur, &skipped, &err)) {
            for (size_t i = 0; i < json_array_size(tools); i++) {
                const sl_value *t = json_array_get(tools, i);
                const sl_value *name = json_object_get(t, "name");
                if (!json_is_string(name) || json_string_length(name) > SL_MCP_MAX_NAME ||
                    json_string_length(json_object_get(t, "description")) > SL_MCP_MAX_DESC)
                    abort();
                char why[200];
                sl_value *ph = sl_mcp_param_headers(json_object_get(t, "inputSchema"), why,
                                                    sizeof why);
                for (size_t k = 0; k < json_array_size(ph); k++) {
                    sl_buf b;
                    sl_buf_init(&b, 4096);
                    if (sl_mcp_param_value(v, json_object_get(json_array_get(ph, k), "path"),
                                           &b)) {
                        sl_buf h;
                        sl_buf_init(&h, 0);
                        sl_mcp_header_value(b.data ? b.data : "", b.len, &h);
                        ascii_line(&h);
                        sl_buf_release(&h);
                    }
                    sl_buf_release(&b);
                }
                json_decref(ph);
            }
        }
        sl_err_clear(&err);
        json_decref(tools);
        json_decref(v);
        break;
    }
    case 4: {  /* arguments and header values */
        sl_buf h;
        sl_buf_init(&h, 0);
        sl_mcp_header_value(text, size, &h);
        ascii_line(&h);
        sl_buf_release(&h);
        sl_value *v = json_loadb(text, size, JSON_DECODE_ANY, NULL);
        sl_value *c = sl_mcp_clean_args(json_is_object(v) ? v : NULL);
        const char *k;
        sl_value *x;
        json_object_foreach(c, k, x) {
            if (json_is_null(x) || (json_is_string(x) && !json_string_length(x)))
                abort();
        }
        json_decref(c);
        json_decref(v);
        break;
    }
    case 5: {  /* Python's repr */
        sl_value *v = json_loadb(text, size, JSON_DECODE_ANY, NULL);
        if (!v)
            break;
        sl_buf b;
        sl_buf_init(&b, 1 << 20);
        sl_mcp_pyrepr(v, &b);
        if (!b.toobig && !sl_utf8_valid(b.data ? b.data : "", b.len))
            abort();
        sl_buf_release(&b);
        json_decref(v);
        break;
    }
    }
    return 0;
}
