/*
 * mcp — the MCP client (tools/mcp.c) and its wire functions
 * (tools/mcp_wire.c).  The wire checks need nothing; the rest run against
 * real peers on loopback, started from tests/mcp/ (the npm packages
 * scripts/install-deps installs there; without them those checks are
 * skipped, and counted):
 *
 *   modern.mjs   @modelcontextprotocol/server 2.x, revision 2026-07-28
 *   legacy.mjs   @modelcontextprotocol/sdk 1.x: Streamable HTTP with
 *                sessions, and the 2024-11-05 HTTP+SSE transport
 *   raw.mjs      a hand-written server that lies, hangs or dies on demand
 *
 * Every server is a child of this process (it dies with it) and is
 * stopped before the end.  `build/tests/mcp --conformance-client URL` is
 * the client @modelcontextprotocol/conformance drives; its client
 * scenarios run last.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/secret.h"
#include "net/http.h"
#include "sandbox/sandbox.h"
#include "tap.h"
#include "tools/mcp.h"
#include "tools/mcp_wire.h"
#include "util.h"

/* ---- peers ---- */

#define MAX_PEERS 16
static pid_t peers[MAX_PEERS];

static void stop_peer(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            goto gone;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
gone:
    for (int i = 0; i < MAX_PEERS; i++)
        if (peers[i] == pid)
            peers[i] = 0;
}

static void stop_all(void)
{
    for (int i = 0; i < MAX_PEERS; i++)
        stop_peer(peers[i]);
}

/* Starts tests/mcp/SCRIPT (port 0: any free one) with extra flags;
 * returns its pid and port, or -1. */
static pid_t start_peer(const char *script, int want_port, int *port, const char *flag1,
                        const char *flag2)
{
    char pf[] = "/tmp/sluice-mcp-port-XXXXXX";
    int fd = mkstemp(pf);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(pf);
    char path[256], ports[16];
    snprintf(path, sizeof path, "tests/mcp/%s", script);
    snprintf(ports, sizeof ports, "%d", want_port);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        if (!getenv("MCP_TEST_VERBOSE"))
            dup2(null, 2);
        const char *argv[10] = {"node", path, "--port", ports, "--port-file", pf};
        int n = 6;
        if (flag1)
            argv[n++] = flag1;
        if (flag2)
            argv[n++] = flag2;
        argv[n] = NULL;
        execvp("node", (char **)argv);
        _exit(127);
    }
    for (int i = 0; i < MAX_PEERS; i++)
        if (!peers[i]) {
            peers[i] = pid;
            break;
        }
    char line[32] = "";
    for (int i = 0; i < 1500 && !line[0]; i++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = 0;
            fclose(f);
        }
        if (!line[0]) {
            if (waitpid(pid, NULL, WNOHANG) == pid)
                break;
            usleep(10000);
        }
    }
    unlink(pf);
    *port = atoi(line);
    if (*port <= 0) {
        stop_peer(pid);
        return -1;
    }
    return pid;
}

static int collect(const char *p, size_t n, void *ud)
{
    return sl_buf_add(ud, p, n);
}

/* GET http://127.0.0.1:PORT/_seen: what the peer observed. */
static sl_value *seen(int port)
{
    sl_http *h = sl_http_new(NULL);
    if (!h)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 1 << 20);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/_seen", port);
    sl_http_url(h, url);
    sl_http_opts *o = sl_http_opts_of(h);
    o->timeout_s = 5;
    o->on_body = collect;
    o->ud = &b;
    sl_value *v = NULL;
    if (sl_http_perform(h) == SL_HTTP_OK)
        v = json_loadb(b.data ? b.data : "", b.len, 0, NULL);
    sl_buf_release(&b);
    sl_http_free(h);
    return v;
}

/* Polls /_seen until array `key` is not empty (a server's side of a
 * cancellation arrives a moment after the client gave up), for 5 s. */
static sl_value *seen_until(int port, const char *key)
{
    for (int i = 0; i < 250; i++) {
        sl_value *v = seen(port);
        if (json_array_size(json_object_get(v, key)))
            return v;
        json_decref(v);
        usleep(20000);
    }
    return seen(port);
}

/* ---- calls ---- */

static sl_toolset *mk(const char *url, const char *transport, bool allow_private,
                      const char *const *headers, sl_err *err)
{
    sl_mcp_opts o = {.url = url, .transport = transport, .allow_private = allow_private,
                     .headers = headers, .connect_s = 5};
    return sl_mcp_new(&o, err);
}

typedef struct {
    double cancel_at;  /* sl_clock_s() time, 0: never */
} cancel_ud;

static bool cancel_fn(void *ud)
{
    cancel_ud *c = ud;
    return c->cancel_at > 0 && sl_clock_s() >= c->cancel_at;
}

static int call(sl_toolset *t, const char *name, const char *args, sl_tool_result *r, sl_err *err)
{
    sl_tool_ctx ctx = {.timeout_s = 20};
    sl_value *a = args ? J(args) : NULL;
    sl_tool_result_init(r);
    int rc = sl_toolset_call(t, &ctx, name, a, r, err);
    json_decref(a);
    return rc;
}

static const char *text_of(const sl_tool_result *r)
{
    return r->text.data ? r->text.data : "";
}

/* ---- the wire alone ---- */

static void wire_messages(void)
{
    sl_mcp_msg m;
    sl_mcp_msg_read("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":1}}", 41, &m);
    CHECK(m.kind == SL_MCP_RESPONSE && sl_mcp_id_is(m.id, 7) && m.result && !m.error,
          "a result response reads");
    sl_mcp_msg_release(&m);
    const char *e = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"x\"}}";
    sl_mcp_msg_read(e, strlen(e), &m);
    CHECK(m.kind == SL_MCP_RESPONSE && m.error && json_is_null(m.id),
          "an error response with a null id reads");
    sl_mcp_msg_release(&m);
    const char *rq = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}";
    sl_mcp_msg_read(rq, strlen(rq), &m);
    CHECK(m.kind == SL_MCP_REQUEST && !strcmp(m.method, "ping"), "a server request reads");
    sl_mcp_msg_release(&m);
    const char *nt = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}";
    sl_mcp_msg_read(nt, strlen(nt), &m);
    CHECK(m.kind == SL_MCP_NOTIFICATION, "a notification reads");
    sl_mcp_msg_release(&m);
    const char *bad[] = {
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}",
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"no code\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}",
        "42",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_mcp_msg_read(bad[i], strlen(bad[i]), &m);
        CHECK(m.kind == SL_MCP_INVALID && m.why[0] && !m.msg, "not JSON-RPC: %s (%s)",
              esc(bad[i]), m.why);
        sl_mcp_msg_release(&m);
    }
}

static void wire_args(void)
{
    sl_value *a = J("{\"a\": null, \"b\": \"  \\t\", \"c\": \"x\", \"d\": 0, \"e\": false, "
                    "\"f\": \"\\u3000\\u00a0\", \"g\": [], \"h\": \" y \"}");
    sl_value *c = sl_mcp_clean_args(a);
    char *s = show(c);
    CHECK(!strcmp(s, "{\"c\":\"x\",\"d\":0,\"e\":false,\"g\":[],\"h\":\" y \"}"),
          "null and blank arguments are dropped, as Dify does: %s", s);
    free(s);
    json_decref(c);
    json_decref(a);
    c = sl_mcp_clean_args(NULL);
    CHECK(json_is_object(c) && !json_object_size(c), "no arguments read as {}");
    json_decref(c);
}

static int map(const char *result, bool schema, size_t cap, sl_tool_result *r, sl_err *err)
{
    sl_tool_ctx ctx = {.max_output = cap};
    sl_value *v = J(result);
    sl_tool_result_init(r);
    int rc = sl_mcp_result_map(v, schema, &ctx, r, err);
    json_decref(v);
    return rc;
}

static void wire_results(void)
{
    sl_tool_result r;
    sl_err err = {0};
    int rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"hello \"},{\"type\":\"text\","
                 "\"text\":\"world\"}]}",
                 false, 0, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "hello world") && !json_array_size(r.json),
          "text messages are concatenated, as Dify's tool node joins them: '%s'", text_of(&r));
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\" {\\\"k\\\": [1, 2]} \\n\"}]}", false, 0,
             &r, &err);
    char *s = show(r.json);
    CHECK(!rc && !strcmp(s, "[{\"k\":[1,2]}]") && !r.text.len,
          "text that is a JSON object becomes a json entry: %s", s);
    free(s);
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"[{\\\"a\\\":1},{\\\"b\\\":2}]\"}]}", false,
             0, &r, &err);
    CHECK(!rc && json_array_size(r.json) == 2 && !r.text.len,
          "a JSON list of objects becomes one json entry each");
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"[1, \\\"it's\\\", null, true, 2.5, "
             "{\\\"k\\\": \\\"v\\\"}, \\\"a\\\\nb\\\"]\"}]}",
             false, 0, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "[1, \"it's\", None, True, 2.5, {'k': 'v'}, 'a\\nb']"),
          "a list holding anything else is its Python repr, as Dify's str(): %s",
          esc(text_of(&r)));
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"[]\"}]}", false, 0, &r, &err);
    CHECK(!rc && !r.text.len && !json_array_size(r.json), "an empty JSON list gives nothing");
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"{not json}\"}]}", false, 0, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "{not json}"), "text that only looks like JSON stays text");
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"image\",\"data\":\"aGVsbG8=\",\"mimeType\":\"image/png\"},"
             "{\"type\":\"audio\",\"data\":\"d2F2\",\"mimeType\":\"audio/wav\"},"
             "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///a/b/report.pdf?x=1\","
             "\"blob\":\"cGRm\",\"mimeType\":\"application/pdf\"}},"
             "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///t\",\"text\":\"res text\"}},"
             "{\"type\":\"resource_link\",\"uri\":\"https://x\",\"name\":\"x\"},"
             "{\"type\":\"future_kind\"}]}",
             false, 0, &r, &err);
    CHECK(!rc && r.n_files == 3 && !strcmp(r.files[0].mime_type, "image/png") &&
              r.files[0].data.len == 5 && !memcmp(r.files[0].data.data, "hello", 5) &&
              !strcmp(r.files[1].mime_type, "audio/wav") &&
              !strcmp(r.files[2].name, "report.pdf") &&
              !strcmp(r.files[2].mime_type, "application/pdf") &&
              !strcmp(text_of(&r), "res text"),
          "images, audio and blob resources become files, text resources text, links and "
          "unknown kinds are dropped");
    sl_tool_result_release(&r);

    const char *sc = "{\"content\":[],\"structuredContent\":{\"temp\":21,\"unit\":\"C\"}}";
    rc = map(sc, true, 0, &r, &err);
    s = show(r.variables);
    CHECK(!rc && !strcmp(s, "{\"temp\":21,\"unit\":\"C\"}"),
          "structuredContent becomes variables when the tool declared an output schema: %s", s);
    free(s);
    sl_tool_result_release(&r);
    rc = map(sc, false, 0, &r, &err);
    CHECK(!rc && !json_object_size(r.variables), "... and not when it did not");
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"nope\"}],\"isError\":true}", false, 0,
             &r, &err);
    CHECK(!rc && r.is_error && !strcmp(text_of(&r), "nope"), "isError is surfaced with its text");
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"text\",\"text\":\"0123456789\"}]}", false, 5, &r, &err);
    CHECK(rc && err.code == SL_ELIMIT && err.setting && !strcmp(err.setting, "tool_max_output"),
          "output past the cap fails with tool_max_output: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"image\",\"data\":\"aGVsbG8gd29ybGQ=\"}]}", false, 5, &r,
             &err);
    CHECK(rc && err.code == SL_ELIMIT, "a file past the cap fails before it is decoded whole");
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"image\",\"data\":\"!!!\",\"mimeType\":\"image/png\"}]}",
             false, 0, &r, &err);
    CHECK(rc && err.code == SL_EIO, "bad base64 is an error: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = map("{\"resultType\":\"input_required\",\"inputRequests\":{}}", false, 0, &r, &err);
    CHECK(rc && err.code == SL_EUNSUPPORTED, "a result asking for input is refused: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    rc = map("{\"content\":[{\"type\":\"image\",\"data\":\"aGk=\",\"mimeType\":\"text/html\\r\\nX: "
             "y\"}]}",
             false, 0, &r, &err);
    CHECK(!rc && r.n_files == 1 && !strcmp(r.files[0].mime_type, "application/octet-stream"),
          "a MIME type that is not one is not kept");
    sl_tool_result_release(&r);
}

static void wire_tools(void)
{
    sl_value *res = J("{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}},"
                      "{\"name\":\"\"},{\"name\":\"a\"},{\"name\":\"b\\u0007\"},{\"nope\":1},"
                      "{\"name\":\"c\",\"description\":\"d\",\"outputSchema\":{\"type\":\"object\"}}],"
                      "\"nextCursor\":\"p2\"}");
    sl_value *tools = json_array();
    const char *cur = NULL;
    size_t skipped = 0;
    sl_err err = {0};
    int rc = sl_mcp_tools_page(res, tools, 10, &cur, &skipped, &err);
    CHECK(!rc && json_array_size(tools) == 2 && skipped == 4 && cur && !strcmp(cur, "p2"),
          "a tools page keeps the usable tools and its cursor (%zu kept, %zu skipped)",
          json_array_size(tools), skipped);
    CHECK(json_object_get(json_array_get(tools, 1), "outputSchema") &&
              json_is_object(json_object_get(json_array_get(tools, 0), "inputSchema")),
          "schemas are kept");
    sl_value *few = json_array();
    rc = sl_mcp_tools_page(res, few, 1, &cur, &skipped, &err);
    CHECK(rc && err.code == SL_ELIMIT, "the tool cap holds: %s", err.msg);
    json_decref(few);
    sl_err_clear(&err);
    json_decref(res);
    res = J("{\"tools\":{}}");
    CHECK(sl_mcp_tools_page(res, tools, 10, &cur, &skipped, &err) && err.code == SL_EIO,
          "an answer without a tools array is an error");
    sl_err_clear(&err);
    json_decref(res);
    json_decref(tools);

    char why[200] = "";
    sl_value *s = J("{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
                    "\"x-mcp-header\":\"Region\"},\"o\":{\"type\":\"object\",\"properties\":{"
                    "\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"}}}}}");
    sl_value *ph = sl_mcp_param_headers(s, why, sizeof why);
    char *shown = show(ph);
    CHECK(ph && json_array_size(ph) == 2, "x-mcp-header parameters are found: %s", shown);
    free(shown);
    sl_value *args = J("{\"region\":\"eu\",\"o\":{\"n\":42}}");
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_mcp_param_value(args, json_object_get(json_array_get(ph, 1), "path"), &b) &&
              !strcmp(b.data, "42"),
          "a nested parameter's value is found");
    sl_buf_release(&b);
    json_decref(args);
    json_decref(ph);
    json_decref(s);
    const char *bad[] = {
        "{\"properties\":{\"x\":{\"type\":\"number\",\"x-mcp-header\":\"X\"}}}",
        "{\"properties\":{\"x\":{\"type\":\"string\",\"x-mcp-header\":\"A B\"}}}",
        "{\"properties\":{\"x\":{\"type\":\"string\",\"x-mcp-header\":\"A\"},"
        "\"y\":{\"type\":\"string\",\"x-mcp-header\":\"a\"}}}",
        "{\"properties\":{\"x\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
        "\"x-mcp-header\":\"A\"}}}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        s = J(bad[i]);
        ph = sl_mcp_param_headers(s, why, sizeof why);
        CHECK(!ph && why[0], "a broken x-mcp-header is refused: %s", why);
        json_decref(s);
    }
    sl_buf_init(&b, 0);
    sl_mcp_header_value("us-west1", 8, &b);
    CHECK(!strcmp(b.data, "us-west1"), "a plain header value stays");
    sl_buf_reset(&b);
    sl_mcp_header_value("Hello, \xe4\xb8\x96\xe7\x95\x8c", 13, &b);
    CHECK(!strcmp(b.data, "=?base64?SGVsbG8sIOS4lueVjA==?="), "a non-ASCII one is encoded: %s",
          b.data);
    sl_buf_reset(&b);
    sl_mcp_header_value("=?base64?literal?=", 18, &b);
    CHECK(!strcmp(b.data, "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
          "one that looks encoded is encoded: %s", b.data);
    sl_buf_release(&b);
}

static int count_lines(const char *line, size_t len, void *ud)
{
    sl_buf *b = ud;
    sl_buf_add(b, line, len);
    sl_buf_addc(b, '|');
    return 0;
}

static void wire_misc(void)
{
    sl_mcp_lines l;
    sl_mcp_lines_init(&l, 16);
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = sl_mcp_lines_feed(&l, "ab\r\n\ncd", 7, count_lines, &b);
    rc |= sl_mcp_lines_feed(&l, "e\nf", 3, count_lines, &b);
    CHECK(!rc && !strcmp(b.data, "ab|cde|"), "stdio lines split in any pieces: %s", b.data);
    rc = sl_mcp_lines_feed(&l, "0123456789abcdefgh\n", 19, count_lines, &b);
    CHECK(rc == -1 && sl_mcp_lines_feed(&l, "x\n", 2, count_lines, &b) == -1,
          "a line past the cap fails the reader for good");
    sl_buf_release(&b);
    sl_mcp_lines_release(&l);

    sl_err err = {0};
    sl_value *e = J("{\"code\":-32602,\"message\":\"Unknown tool: nope\"}");
    sl_mcp_error(e, "http://h/mcp", "tools/call 'nope'", &err);
    CHECK(err.code == SL_ENOTFOUND && strstr(err.msg, "http://h/mcp"),
          "an unknown tool is SL_ENOTFOUND: %s", err.msg);
    json_decref(e);
    e = J("{\"code\":-32602,\"message\":\"bad\\u001b[2J\"}");
    sl_mcp_error(e, "w", "x", &err);
    CHECK(err.code == SL_EINVAL && !strchr(err.msg, 0x1b), "bad arguments are SL_EINVAL, shown "
          "safely: %s", esc(err.msg));
    json_decref(e);
    e = J("{\"code\":-32022,\"message\":\"v\",\"data\":{\"supported\":[\"2099-01-01\","
          "\"2025-06-18\"]}}");
    const char *pick = NULL;
    CHECK(sl_mcp_error_is_modern(e, &pick) && pick && !strcmp(pick, "2025-06-18"),
          "an unsupported-version error offers the newest version both speak");
    json_decref(e);
    sl_err_clear(&err);

    sl_buf_init(&b, 0);
    sl_value *v = J("[\"a'b\", \"a\\\"b'\", \"\\u0085x\", {\"k\": 1e100}]");
    sl_mcp_pyrepr(v, &b);
    CHECK(!strcmp(b.data, "[\"a'b\", 'a\"b\\'', '\\x85x', {'k': 1e+100}]"),
          "Python's repr of strings and floats: %s", b.data);
    json_decref(v);
    sl_buf_release(&b);
}

static void options(void)
{
    sl_err err = {0};
    const char *cmd[] = {"node", NULL};
    sl_mcp_opts o = {.url = "http://h/mcp", .command = cmd};
    CHECK(!sl_mcp_new(&o, &err) && err.code == SL_EINVAL, "a url and a command: %s", err.msg);
    sl_err_clear(&err);
    o = (sl_mcp_opts){0};
    CHECK(!sl_mcp_new(&o, &err) && err.code == SL_EINVAL, "neither: %s", err.msg);
    sl_err_clear(&err);
    o = (sl_mcp_opts){.url = "ftp://h/x"};
    CHECK(!sl_mcp_new(&o, &err) && err.code == SL_EINVAL, "not http: %s", err.msg);
    sl_err_clear(&err);
    o = (sl_mcp_opts){.url = "http://h/mcp", .transport = "websocket"};
    CHECK(!sl_mcp_new(&o, &err) && err.code == SL_EINVAL, "an unknown transport: %s", err.msg);
    sl_err_clear(&err);
    const char *hdr[] = {"Authorization Bearer s3cret-value", NULL};
    o = (sl_mcp_opts){.url = "http://h/mcp", .headers = hdr};
    CHECK(!sl_mcp_new(&o, &err) && err.code == SL_EINVAL && !strstr(err.msg, "s3cret"),
          "a header without a colon, not shown: %s", err.msg);
    sl_err_clear(&err);
    o = (sl_mcp_opts){.url = "https://user:pa55word@example.com:8443/v1/mcp?key=k3y-value#f"};
    sl_toolset *t = sl_mcp_new(&o, &err);
    CHECK(t && !strcmp(sl_toolset_where(t), "https://example.com:8443/v1/mcp"),
          "where() shows no credentials, query or fragment: %s", t ? sl_toolset_where(t) : "");
    char *masked = sl_secret_mask("echo pa55word and key=k3y-value");
    CHECK(masked && !strstr(masked, "pa55word") && !strstr(masked, "k3y-value"),
          "the URL's password and query are masked while the toolset lives: %s",
          masked ? masked : "(not masked)");
    free(masked);
    CHECK(!sl_mcp_version(t) && !sl_mcp_transport(t), "nothing is contacted before use");
    sl_toolset_free(t);
    masked = sl_secret_mask("pa55word");
    CHECK(!masked, "... and forgotten with it");
    free(masked);
    o = (sl_mcp_opts){.command = cmd};
    t = sl_mcp_new(&o, &err);
    sl_tool_result r;
    sl_tool_ctx ctx = {.timeout_s = 5};
    sl_tool_result_init(&r);
    int rc = sl_toolset_call(t, &ctx, "x", NULL, &r, &err);
    CHECK(rc && err.code == SL_EUNSUPPORTED && strstr(err.msg, "sandbox") &&
              strstr(err.msg, "'node'"),
          "a stdio server without a sandbox fails clearly: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
}

/* ---- against real servers ---- */

static void modern(void)
{
    int port;
    pid_t pid = start_peer("modern.mjs", 0, &port, NULL, NULL);
    CHECK(pid > 0, "the 2026-07-28 server (@modelcontextprotocol/server 2.x) starts");
    if (pid <= 0)
        return;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    sl_err err = {0};
    sl_toolset *t = mk(url, NULL, true, NULL, &err);
    sl_tool_ctx ctx = {.timeout_s = 20};
    sl_value *tools = NULL;
    int rc = sl_toolset_list(t, &ctx, &tools, &err);
    CHECK(!rc && json_array_size(tools) == 15, "tools/list: %zu tools (the one with a broken "
          "x-mcp-header left out) %s", json_array_size(tools), err.msg ? err.msg : "");
    CHECK(sl_mcp_version(t) && !strcmp(sl_mcp_version(t), "2026-07-28") &&
              !strcmp(sl_mcp_transport(t), "streamable"),
          "it speaks 2026-07-28 over Streamable HTTP");
    json_decref(tools);
    sl_err_clear(&err);

    sl_tool_result r;
    rc = call(t, "echo", "{\"text\":\"hi\"}", &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: hi"), "tools/call: '%s' %s", text_of(&r),
          err.msg ? err.msg : "");
    sl_tool_result_release(&r);
    rc = call(t, "args", "{\"a\":\"x\",\"b\":null,\"c\":\"   \",\"n\":3}", &r, &err);
    char *s = show(r.json);
    CHECK(!rc && !strcmp(s, "[{\"a\":\"x\",\"n\":3}]"),
          "blank and null arguments never reach the server; JSON text is a json entry: %s", s);
    free(s);
    sl_tool_result_release(&r);
    rc = call(t, "json_list", NULL, &r, &err);
    CHECK(!rc && json_array_size(r.json) == 2, "a JSON list of objects: two json entries");
    sl_tool_result_release(&r);
    rc = call(t, "mixed_list", NULL, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "[1, 'two', {'three': 3}, None, True, 1.5]"),
          "a mixed JSON list: its Python repr: %s", text_of(&r));
    sl_tool_result_release(&r);
    rc = call(t, "media", NULL, &r, &err);
    CHECK(!rc && r.n_files == 2 && !strcmp(r.files[0].mime_type, "image/png") &&
              r.files[0].data.len == 66 && !memcmp(r.files[0].data.data, "\x89PNG", 4) &&
              !strcmp(r.files[1].mime_type, "audio/wav") && !strcmp(text_of(&r), "a picture"),
          "an image and audio become files (%zu, %zu bytes)", r.n_files,
          r.n_files ? r.files[0].data.len : 0);
    sl_tool_result_release(&r);
    rc = call(t, "resources", NULL, &r, &err);
    CHECK(!rc && r.n_files == 1 && !strcmp(r.files[0].name, "blob.bin") &&
              !strcmp(r.files[0].mime_type, "application/x-demo") &&
              !strcmp(text_of(&r), "resource text"),
          "embedded resources: text and a file; the link is dropped");
    sl_tool_result_release(&r);
    rc = call(t, "weather", "{\"city\":\"Oslo\"}", &r, &err);
    s = show(r.variables);
    CHECK(!rc && !strcmp(s, "{\"temp\":21,\"unit\":\"C\"}") && !strcmp(text_of(&r), "Sunny, 21 C"),
          "structuredContent with an output schema: variables %s", s);
    free(s);
    sl_tool_result_release(&r);
    rc = call(t, "weather_plain", NULL, &r, &err);
    CHECK(!rc && !json_object_size(r.variables), "without one: no variables");
    sl_tool_result_release(&r);
    rc = call(t, "fail", NULL, &r, &err);
    CHECK(!rc && r.is_error && strstr(text_of(&r), "it broke"),
          "isError comes back as a failed call with its text");
    sl_tool_result_release(&r);
    rc = call(t, "progress", NULL, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "done after progress"),
          "an event-stream answer with progress notifications before it: %s",
          err.msg ? err.msg : text_of(&r));
    sl_tool_result_release(&r);
    sl_err_clear(&err);
    rc = call(t, "region", "{\"region\":\"eu-west\",\"q\":\"x\"}", &r, &err);
    sl_value *sn = seen(port);
    CHECK(!rc && !strcmp(json_string_value(json_object_get(sn, "region_header")) ?: "", "eu-west"),
          "a parameter with x-mcp-header is mirrored into Mcp-Param-Region");
    s = show(json_object_get(sn, "methods"));
    CHECK(strstr(s, "tools/call:region") != NULL, "Mcp-Method and Mcp-Name go with each call: %s",
          s);
    free(s);
    sl_value *ph = json_object_get(sn, "protocol_headers");
    CHECK(json_array_size(ph) &&
              !strcmp(json_string_value(json_array_get(ph, 0)) ?: "", "2026-07-28"),
          "MCP-Protocol-Version: 2026-07-28 on every request");
    json_decref(sn);
    sl_tool_result_release(&r);
    rc = call(t, "no_such_tool", NULL, &r, &err);
    CHECK(rc && err.code == SL_ENOTFOUND && strstr(err.msg, "echo"),
          "an unknown tool: SL_ENOTFOUND naming the tools there are: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);

    /* cancellation: closing the stream is the 2026-07-28 signal */
    cancel_ud cu = {sl_clock_s() + 0.4};
    sl_tool_ctx cctx = {.timeout_s = 20, .cancelled = cancel_fn, .ud = &cu};
    sl_value *a = J("{\"ms\": 10000}");
    sl_tool_result_init(&r);
    double t0 = sl_clock_s();
    rc = sl_toolset_call(t, &cctx, "sleep", a, &r, &err);
    double took = sl_clock_s() - t0;
    CHECK(rc && err.code == SL_ECANCELED && took < 3, "a cancelled call ends at once (%.2f s): %s",
          took, err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sn = seen_until(port, "aborted");
    CHECK(json_array_size(json_object_get(sn, "aborted")) == 1,
          "the server saw the request cancelled (its stream closed)");
    json_decref(sn);
    /* the deadline */
    sl_tool_ctx tctx = {.timeout_s = 0.5};
    sl_tool_result_init(&r);
    t0 = sl_clock_s();
    rc = sl_toolset_call(t, &tctx, "sleep", a, &r, &err);
    took = sl_clock_s() - t0;
    CHECK(rc && err.code == SL_ETIMEOUT && err.setting && !strcmp(err.setting, "tool_timeout_s") &&
              took < 3,
          "a call past its timeout fails with tool_timeout_s (%.2f s): %s", took, err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    json_decref(a);
    sl_toolset_free(t);

    /* a URL that names no transport: tried in order */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api", port);
    t = mk(url, "auto", true, NULL, &err);
    rc = call(t, "echo", "{\"text\":\"auto\"}", &r, &err);
    CHECK(!rc && !strcmp(sl_mcp_version(t), "2026-07-28"), "auto at /api finds 2026-07-28");
    sl_tool_result_release(&r);
    sl_toolset_free(t);

    /* the SSRF guard */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    t = mk(url, NULL, false, NULL, &err);
    rc = call(t, "echo", NULL, &r, &err);
    CHECK(rc && err.type && !strcmp(err.type, "ToolSSRFError") && strstr(err.msg, "allow_private"),
          "loopback is refused unless allow_private: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);

    /* pagination */
    pid = start_peer("modern.mjs", 0, &port, "--page-size=4", "--fillers=30");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = sl_toolset_list(t, &ctx, &tools, &err);
    CHECK(!rc && json_array_size(tools) == 45, "tools/list reads every page: %zu tools",
          json_array_size(tools));
    json_decref(tools);
    sl_toolset_free(t);
    stop_peer(pid);

    /* --sse: every answer an event stream */
    pid = start_peer("modern.mjs", 0, &port, "--sse", "--reject-legacy");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "weather", NULL, &r, &err);
    CHECK(!rc && json_object_size(r.variables) == 2, "answers as event streams read the same");
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);
}

typedef struct {
    sl_toolset *t;
    int ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 15; i++) {
        sl_tool_result r;
        sl_err err = {0};
        char args[64];
        snprintf(args, sizeof args, "{\"text\":\"%d\"}", i);
        if (!call(w->t, "echo", args, &r, &err) && !strncmp(text_of(&r), "echo: ", 6))
            w->ok++;
        sl_tool_result_release(&r);
        sl_err_clear(&err);
    }
    return NULL;
}

static void legacy(void)
{
    int port;
    pid_t pid = start_peer("legacy.mjs", 0, &port, NULL, NULL);
    CHECK(pid > 0, "the session server (@modelcontextprotocol/sdk 1.x) starts");
    if (pid <= 0)
        return;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    sl_err err = {0};
    sl_toolset *t = mk(url, NULL, true, NULL, &err);
    sl_tool_result r;
    int rc = call(t, "echo", "{\"text\":\"old\"}", &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: old") && !strcmp(sl_mcp_version(t), "2025-11-25"),
          "a 2025-11-25 server: initialize, then calls (%s) %s", sl_mcp_version(t) ?: "-",
          err.msg ? err.msg : "");
    sl_tool_result_release(&r);
    rc = call(t, "media", NULL, &r, &err);
    CHECK(!rc && r.n_files == 2, "results map the same in the older revision");
    sl_tool_result_release(&r);
    sl_value *sn = seen(port);
    sl_value *ph = json_object_get(sn, "protocol_headers");
    CHECK(json_integer_value(json_object_get(sn, "initialize")) == 1 &&
              !strcmp(json_string_value(json_array_get(ph, 0)) ?: "", "2025-11-25"),
          "one initialize; MCP-Protocol-Version after it");
    json_decref(sn);

    /* many threads, one session */
    worker w[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (worker){t, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    sn = seen(port);
    CHECK(ok == 90 && json_integer_value(json_object_get(sn, "initialize")) == 1,
          "6 threads x 15 calls share one session: %d ok", ok);
    json_decref(sn);

    /* cancellation: the older revisions are told */
    cancel_ud cu = {sl_clock_s() + 0.4};
    sl_tool_ctx cctx = {.timeout_s = 20, .cancelled = cancel_fn, .ud = &cu};
    sl_value *a = J("{\"ms\": 10000}");
    sl_tool_result_init(&r);
    rc = sl_toolset_call(t, &cctx, "sleep", a, &r, &err);
    CHECK(rc && err.code == SL_ECANCELED, "a cancelled call: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sn = seen_until(port, "cancelled");
    CHECK(json_array_size(json_object_get(sn, "cancelled")) == 1,
          "the server got notifications/cancelled");
    json_decref(sn);
    sn = seen_until(port, "aborted");
    CHECK(json_array_size(json_object_get(sn, "aborted")) == 1, "... and stopped the tool");
    json_decref(sn);
    json_decref(a);

    /* the server restarts: the session is gone, sluice initialises again */
    stop_peer(pid);
    int port2;
    pid = start_peer("legacy.mjs", port, &port2, NULL, NULL);
    rc = call(t, "echo", "{\"text\":\"again\"}", &r, &err);
    sn = seen(port);
    CHECK(pid > 0 && !rc && !strcmp(text_of(&r), "echo: again") &&
              json_integer_value(json_object_get(sn, "initialize")) == 1,
          "a lost session (404) is initialised again and the call goes through %s",
          err.msg ? err.msg : "");
    json_decref(sn);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    sn = seen(port);
    CHECK(json_integer_value(json_object_get(sn, "deleted")) == 1,
          "freeing the toolset ends its session (DELETE)");
    json_decref(sn);
    stop_peer(pid);

    /* an older version, stateless, JSON answers */
    pid = start_peer("legacy.mjs", 0, &port, "--version=2025-03-26", "--json");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    t = mk(url, "streamable", true, NULL, &err);
    rc = call(t, "weather", NULL, &r, &err);
    CHECK(!rc && !strcmp(sl_mcp_version(t) ?: "", "2025-03-26") && json_object_size(r.variables),
          "a 2025-03-26 server with JSON answers %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);
    pid = start_peer("legacy.mjs", 0, &port, "--stateless", "--page-size=5");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "progress", NULL, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "done after progress") &&
              !strcmp(sl_mcp_version(t) ?: "", "2025-11-25"),
          "a stateless 2025 server (no session) with progress %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);

    /* the 2024-11-05 HTTP+SSE transport */
    pid = start_peer("legacy.mjs", 0, &port, NULL, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/sse", port);
    t = mk(url, NULL, true, NULL, &err);
    sl_tool_ctx ctx = {.timeout_s = 20};
    sl_value *tools = NULL;
    rc = sl_toolset_list(t, &ctx, &tools, &err);
    CHECK(!rc && json_array_size(tools) == 15 && !strcmp(sl_mcp_transport(t) ?: "", "sse"),
          "the HTTP+SSE transport: tools/list (%zu) %s", json_array_size(tools),
          err.msg ? err.msg : "");
    json_decref(tools);
    rc = call(t, "echo", "{\"text\":\"sse\"}", &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: sse"), "... and tools/call");
    sl_tool_result_release(&r);
    cu.cancel_at = sl_clock_s() + 0.3;
    a = J("{\"ms\": 10000}");
    sl_tool_result_init(&r);
    rc = sl_toolset_call(t, &cctx, "sleep", a, &r, &err);
    CHECK(rc && err.code == SL_ECANCELED, "... cancelled: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    json_decref(a);
    sn = seen_until(port, "cancelled");
    CHECK(json_array_size(json_object_get(sn, "cancelled")) == 1,
          "... and the server got notifications/cancelled");
    json_decref(sn);
    sl_toolset_free(t);
    /* a URL that names no transport: Streamable HTTP is refused, then the old one */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/events", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "echo", "{\"text\":\"events\"}", &r, &err);
    CHECK(!rc && !strcmp(sl_mcp_transport(t) ?: "", "sse"),
          "auto falls back to HTTP+SSE at /events %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);
}

static void liars(void)
{
    int port;
    pid_t pid = start_peer("raw.mjs", 0, &port, NULL, NULL);
    CHECK(pid > 0, "the lying server starts");
    if (pid <= 0)
        return;
    char url[160];
    sl_err err = {0};
    sl_tool_result r;
    const char *sekret = "Authorization: Bearer sekret-token-123";
    const char *hdrs[] = {sekret, NULL};
    struct {
        const char *mode;
        sl_errcode code;
        const char *words;
    } cases[] = {
        {"badjson", SL_EIO, "not JSON-RPC"},
        {"wrongid", SL_EIO, "another request"},
        {"huge", SL_ELIMIT, "tool_max_output"},
        {"redirect", SL_EIO, "HTTP 307"},
        {"errecho", SL_EIO, "bad token"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d/%s/mcp", port, cases[i].mode);
        sl_toolset *t = mk(url, NULL, true, hdrs, &err);
        sl_tool_ctx ctx = {.timeout_s = 20, .max_output = 1u << 20};
        sl_tool_result_init(&r);
        int rc = sl_toolset_call(t, &ctx, "t", NULL, &r, &err);
        CHECK(rc && err.code == cases[i].code && strstr(err.msg, cases[i].words) &&
                  !strstr(err.msg, "sekret-token") && !strchr(err.msg, 0x1b),
              "%s: %s", cases[i].mode, esc(err.msg));
        sl_err_clear(&err);
        sl_tool_result_release(&r);
        sl_toolset_free(t);
    }
    /* a server that never answers */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/hang/mcp", port);
    sl_toolset *t = mk(url, NULL, true, NULL, &err);
    sl_tool_ctx ctx = {.timeout_s = 1};
    sl_tool_result_init(&r);
    double t0 = sl_clock_s();
    int rc = sl_toolset_call(t, &ctx, "t", NULL, &r, &err);
    double took = sl_clock_s() - t0;
    CHECK(rc && err.code == SL_ETIMEOUT && took >= 0.9 && took < 4,
          "a server that hangs: timed out after %.2f s: %s", took, err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    /* junk in the stream: skipped; the server's request answered */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/sse-junk/mcp", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "t", NULL, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "after junk"),
          "bad events, stray answers and server requests in the stream are skipped %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    /* tools/list that lies */
    struct {
        const char *mode;
        sl_errcode code;
        const char *words;
    } lists[] = {
        {"loop", SL_EIO, "loop"},
        {"endless", SL_ELIMIT, "pages"},
        {"many", SL_ELIMIT, "1000 tools"},
        {"nolist", SL_EIO, "tools"},
    };
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d/%s/mcp", port, lists[i].mode);
        t = mk(url, NULL, true, NULL, &err);
        sl_tool_ctx lctx = {.timeout_s = 20};
        sl_value *tools = NULL;
        rc = sl_toolset_list(t, &lctx, &tools, &err);
        CHECK(rc && !tools && err.code == lists[i].code && strstr(err.msg, lists[i].words),
              "tools/list %s: %s", lists[i].mode, err.msg);
        sl_err_clear(&err);
        sl_toolset_free(t);
    }
    /* the old transport's endpoint may not leave the origin */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/other-origin/sse", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "t", NULL, &r, &err);
    CHECK(rc && strstr(err.msg, "another origin"), "an endpoint on another origin: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    /* credentials stay out of what the toolset shows */
    snprintf(url, sizeof url, "http://user:pa55w0rd@127.0.0.1:1/mcp?api_key=qu3ry-key");
    t = mk(url, NULL, true, hdrs, &err);
    rc = call(t, "t", NULL, &r, &err);
    CHECK(rc && !strstr(err.msg, "pa55w0rd") && !strstr(err.msg, "qu3ry-key") &&
              !strstr(err.msg, "sekret") && strstr(err.msg, "http://127.0.0.1:1/mcp"),
          "a connection error names the server without its credentials: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);

    /* a server that dies mid-call */
    pid = start_peer("raw.mjs", 0, &port, NULL, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/die/mcp", port);
    t = mk(url, NULL, true, NULL, &err);
    rc = call(t, "t", NULL, &r, &err);
    CHECK(rc && err.code == SL_EIO && strstr(err.msg, "die/mcp"),
          "a server that dies mid-call: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    stop_peer(pid);
}

/* ---- stdio, in a sandbox ---- */

static sl_sandbox *box;

static sl_sandbox *give_box(void *ud, sl_err *err)
{
    (void)ud;
    (void)err;
    return box;
}

static sl_sandbox *make_box(sl_err *err)
{
    static char host[4096];
    if (!realpath("tests/mcp", host))
        return NULL;
    static sl_sandbox_bind bind;
    bind = (sl_sandbox_bind){host, "/opt/mcp"};
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.binds = &bind;
    o.n_binds = 1;
    sl_sandbox *sb = NULL;
    if (sl_sandbox_create(&o, &sb, err))
        return NULL;
    return sb;
}

/* The server's seen.json in the sandbox's workspace, once `key` is not
 * empty (or after 5 s). */
static sl_value *box_seen(const char *key)
{
    sl_value *v = NULL;
    for (int i = 0; i < 250; i++) {
        sl_buf b;
        sl_buf_init(&b, 0);
        json_decref(v);
        v = NULL;
        if (!sl_sandbox_download(box, "seen.json", 1 << 20, &b, NULL))
            v = json_loadb(b.data ? b.data : "", b.len, 0, NULL);
        sl_buf_release(&b);
        if (json_array_size(json_object_get(v, key)))
            break;
        usleep(20000);
    }
    return v;
}

static int scall(sl_toolset *t, const char *name, const char *args, double timeout_s,
                 sl_tool_result *r, sl_err *err)
{
    sl_tool_ctx ctx = {.timeout_s = timeout_s, .sandbox = give_box};
    sl_value *a = args ? J(args) : NULL;
    sl_tool_result_init(r);
    int rc = sl_toolset_call(t, &ctx, name, a, r, err);
    json_decref(a);
    return rc;
}

static void *swork(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 10; i++) {
        sl_tool_result r;
        sl_err err = {0};
        if (!scall(w->t, "echo", "{\"text\":\"s\"}", 20, &r, &err) &&
            !strcmp(text_of(&r), "echo: s"))
            w->ok++;
        sl_tool_result_release(&r);
        sl_err_clear(&err);
    }
    return NULL;
}

static void stdio_servers(void)
{
    sl_err err = {0};
    box = make_box(&err);
    if (!box) {
        SKIP("MCP stdio servers", "no local sandbox here: %s", err.msg ? err.msg : "?");
        sl_err_clear(&err);
        return;
    }
    const char *cmd[] = {"node", "/opt/mcp/stdio.mjs", NULL};
    sl_mcp_opts o = {.command = cmd};
    sl_toolset *t = sl_mcp_new(&o, &err);
    sl_tool_ctx ctx = {.timeout_s = 20, .sandbox = give_box};
    sl_value *tools = NULL;
    int rc = sl_toolset_list(t, &ctx, &tools, &err);
    CHECK(!rc && json_array_size(tools) == 15 && !strcmp(sl_mcp_version(t) ?: "", "2026-07-28") &&
              !strcmp(sl_mcp_transport(t) ?: "", "stdio"),
          "a stdio server in the sandbox: 2026-07-28, tools/list (%zu) %s", json_array_size(tools),
          err.msg ? err.msg : "");
    json_decref(tools);
    sl_err_clear(&err);
    sl_tool_result r;
    rc = scall(t, "media", NULL, 20, &r, &err);
    CHECK(!rc && r.n_files == 2 && !strcmp(text_of(&r), "a picture"), "stdio tools/call %s",
          err.msg ? err.msg : "");
    sl_tool_result_release(&r);
    rc = scall(t, "weather", NULL, 20, &r, &err);
    CHECK(!rc && json_object_size(r.variables) == 2, "stdio structured output");
    sl_tool_result_release(&r);

    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){t, 0};
        pthread_create(&th[i], NULL, swork, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    CHECK(ok == 40, "4 threads x 10 calls take turns on one server: %d ok", ok);

    cancel_ud cu = {sl_clock_s() + 0.4};
    sl_tool_ctx cctx = {.timeout_s = 20, .cancelled = cancel_fn, .ud = &cu, .sandbox = give_box};
    sl_value *a = J("{\"ms\": 10000}");
    sl_tool_result_init(&r);
    double t0 = sl_clock_s();
    rc = sl_toolset_call(t, &cctx, "sleep", a, &r, &err);
    CHECK(rc && err.code == SL_ECANCELED && sl_clock_s() - t0 < 3, "a cancelled stdio call: %s",
          err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    json_decref(a);
    sl_value *sn = box_seen("aborted");
    CHECK(json_array_size(json_object_get(sn, "aborted")) == 1,
          "the server got notifications/cancelled and stopped the tool");
    json_decref(sn);
    rc = scall(t, "sleep", "{\"ms\": 3000}", 0.5, &r, &err);
    CHECK(rc && err.code == SL_ETIMEOUT, "a stdio call past its timeout: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    rc = scall(t, "echo", "{\"text\":\"after\"}", 20, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: after"), "the next call goes on (a late answer is "
          "skipped) %s", err.msg ? err.msg : "");
    sl_tool_result_release(&r);

    rc = scall(t, "crash", NULL, 20, &r, &err);
    CHECK(rc && err.code == SL_EIO && strstr(err.msg, "exited with 3") && strstr(err.msg, "'node'"),
          "a server that dies mid-call: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    rc = scall(t, "echo", "{\"text\":\"reborn\"}", 20, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: reborn"), "the next call starts it again %s",
          err.msg ? err.msg : "");
    sl_tool_result_release(&r);

    /* its sandbox ends; the next run's sandbox gets its own */
    sl_sandbox_destroy(box);
    box = make_box(&err);
    rc = scall(t, "echo", "{\"text\":\"new box\"}", 20, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: new box"), "a new sandbox gets a new server %s",
          err.msg ? err.msg : "");
    sl_tool_result_release(&r);
    sl_toolset_free(t);

    const char *v1[] = {"node", "/opt/mcp/stdio.mjs", "--v1", NULL};
    o.command = v1;
    t = sl_mcp_new(&o, &err);
    rc = scall(t, "echo", "{\"text\":\"v1\"}", 20, &r, &err);
    CHECK(!rc && !strcmp(text_of(&r), "echo: v1") && !strcmp(sl_mcp_version(t) ?: "", "2025-11-25"),
          "a 1.x stdio server: initialize, 2025-11-25 %s", err.msg ? err.msg : "");
    sl_tool_result_release(&r);
    cu.cancel_at = sl_clock_s() + 0.4;
    a = J("{\"ms\": 10000}");
    sl_tool_result_init(&r);
    rc = sl_toolset_call(t, &cctx, "sleep", a, &r, &err);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    json_decref(a);
    sn = box_seen("aborted");
    CHECK(rc && json_array_size(json_object_get(sn, "aborted")) == 1,
          "... cancelled, it stops the tool too");
    json_decref(sn);
    sl_toolset_free(t);

    const char *none[] = {"no-such-mcp-server", "--flag", NULL};
    o.command = none;
    t = sl_mcp_new(&o, &err);
    rc = scall(t, "x", NULL, 20, &r, &err);
    CHECK(rc && err.code == SL_EIO && strstr(err.msg, "no-such-mcp-server") &&
              strstr(err.msg, "127"),
          "a command that is not there: %s", err.msg);
    sl_err_clear(&err);
    sl_tool_result_release(&r);
    sl_toolset_free(t);
    sl_sandbox_destroy(box);
    box = NULL;
}

/* ---- the conformance suite's client ---- */

/* `mcp --conformance-client URL`: what @modelcontextprotocol/conformance
 * runs for its client scenarios (MCP_CONFORMANCE_SCENARIO names one): list
 * the tools and call each with arguments made from its schema. */
static int conformance_client(const char *url)
{
    sl_err err = {0};
    sl_toolset *t = mk(url, NULL, true, NULL, &err);
    if (!t) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    sl_tool_ctx ctx = {.timeout_s = 20};
    sl_value *tools = NULL;
    int rc = sl_toolset_list(t, &ctx, &tools, &err);
    for (size_t i = 0; !rc && i < json_array_size(tools); i++) {
        const sl_value *tool = json_array_get(tools, i);
        const sl_value *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
        sl_value *args = json_object();
        const char *k;
        sl_value *p;
        int n = 1;
        json_object_foreach((sl_value *)props, k, p) {
            const char *type = json_string_value(json_object_get(p, "type"));
            json_object_set_new(args, k, type && (!strcmp(type, "number") || !strcmp(type, "integer"))
                                             ? json_integer(n++)
                                         : type && !strcmp(type, "boolean") ? json_true()
                                                                            : json_string("x"));
        }
        sl_tool_result r;
        sl_tool_result_init(&r);
        rc = sl_toolset_call(t, &ctx, json_string_value(json_object_get(tool, "name")), args, &r,
                             &err);
        printf("%s -> %s\n", json_string_value(json_object_get(tool, "name")),
               rc ? err.msg : text_of(&r));
        sl_tool_result_release(&r);
        json_decref(args);
    }
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    json_decref(tools);
    sl_err_clear(&err);
    sl_toolset_free(t);
    return rc ? 1 : 0;
}

/* Runs a client scenario of @modelcontextprotocol/conformance against
 * this binary's --conformance-client, in a scratch folder (it writes its
 * results there); true when the suite says it passed. */
static bool conformance(const char *scenario)
{
    char self[4096], here[4096], dir[] = "/tmp/sluice-mcp-conf-XXXXXX";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 64);
    if (n <= 0 || !getcwd(here, sizeof here) || !mkdtemp(dir))
        return false;
    self[n] = 0;
    strcat(self, " --conformance-client");
    char shim[4200], cli[4200];
    snprintf(shim, sizeof shim, "%s/tests/mcp/conformance-shim.mjs", here);
    snprintf(cli, sizeof cli, "%s/tests/mcp/node_modules/@modelcontextprotocol/conformance/dist/index.js",
             here);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (chdir(dir))
            _exit(126);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        if (!getenv("MCP_TEST_VERBOSE"))
            dup2(null, 2);
        execlp("node", "node", "--import", shim, cli, "client", "--command", self, "--scenario",
               scenario, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    (void)!system(rm);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void conformance_suite(void)
{
    struct stat st;
    if (stat("tests/mcp/node_modules/@modelcontextprotocol/conformance", &st)) {
        SKIP("the conformance suite's client scenarios", "@modelcontextprotocol/conformance is "
             "not installed");
        return;
    }
    /* the scenarios a tool client can pass; elicitation and SSE stream
     * resumption are features sluice does not have (docs/tools.md) */
    const char *scenarios[] = {"initialize", "tools_call"};
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
        CHECK(conformance(scenarios[i]), "@modelcontextprotocol/conformance client scenario %s",
              scenarios[i]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--conformance-client"))
        return conformance_client(argv[2]);
    atexit(stop_all);
    signal(SIGPIPE, SIG_IGN);
    wire_messages();
    wire_args();
    wire_results();
    wire_tools();
    wire_misc();
    options();
    struct stat st;
    bool node = !stat("tests/mcp/node_modules/@modelcontextprotocol/server", &st) &&
                !stat("tests/mcp/node_modules/@modelcontextprotocol/sdk", &st) &&
                !system("node --version >/dev/null 2>&1");
    if (!node) {
        SKIP("MCP servers on loopback",
             "tests/mcp/node_modules is missing (scripts/install-deps installs it with npm)");
        return tap_done();
    }
    modern();
    legacy();
    liars();
    stdio_servers();
    conformance_suite();
    return tap_done();
}
