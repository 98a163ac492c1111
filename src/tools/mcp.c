/*
 * mcp — see mcp.h.  Three parts: the toolset (negotiation, the tool table,
 * list and call), the HTTP transports (Streamable HTTP in both eras, the
 * 2024-11-05 HTTP+SSE transport with its reader thread) and stdio.
 *
 * Locking: one mutex per toolset guards the negotiated state (era,
 * version, session, the HTTP+SSE link, the stdio link), the handle pool
 * and the tool table.  Network I/O never happens under it: a request takes
 * a snapshot of the state, does its exchange, and comes back to the lock
 * only to report that the session was lost.  One thread at a time
 * negotiates (`connecting`); the others wait for it.
 */
#include "tools/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/secret.h"
#include "llm/sse.h"
#include "net/http.h"
#include "net/url.h"
#include "sandbox/sandbox.h"
#include "tools/mcp_wire.h"

/* clientInfo.version: sluice's release (cli/main.c's SLUICE_VERSION). */
#define CLIENT_VERSION "0.1.0"
#define POOL_MAX 8              /* idle HTTP handles kept per toolset */
#define LINGER_S 0.2            /* a stream still open this long after our answer is closed */
#define NOTIFY_S 2.0            /* deadline of the notifications sluice sends on the side */
#define LIST_CAP (16u << 20)    /* bytes of one tools/list answer */
#define CALL_CAP_MIN (4u << 20)
#define CALL_CAP_MAX (256u << 20)
#define SESSION_MAX 256

enum { WANT_AUTO, WANT_STREAMABLE, WANT_SSE };
enum { ERA_NONE, ERA_MODERN, ERA_LEGACY, ERA_SSE, ERA_STDIO };

typedef struct sse_link sse_link;
typedef struct stdio_link stdio_link;

typedef struct {
    sl_toolset base;
    /* configuration, fixed at sl_mcp_new */
    char *url, *where, *client_name;
    int want;
    bool ends_mcp, ends_sse;
    char **headers;
    size_t n_headers;
    char **secrets;
    size_t n_secrets;
    char **argv, **env;
    char *meta;                  /* the 2026-07-28 envelope (meta_text) */
    bool allow_private;
    double connect_s;

    pthread_mutex_t mu;
    pthread_cond_t cv;           /* connecting ended, an SSE answer came, a reader left */
    bool connecting;
    int era;                     /* ERA_NONE until negotiated (and after a loss) */
    const char *version;         /* one of sl_mcp_versions */
    char *session;               /* Mcp-Session-Id (legacy Streamable HTTP) */
    unsigned gen;                /* bumps at every negotiation */
    sl_http *pool[POOL_MAX];
    size_t n_pool;
    sl_value *tools;             /* name -> {"output": bool, "params": [...]}; NULL until listed */
    atomic_llong next_id;
    sse_link *sse;
    int sse_threads;
    stdio_link *links;           /* stdio: a server per sandbox */
    bool untrusted;          /* sl_mcp_opts.untrusted */
} mcp;

/* One list or call: its bounds and the words for its errors. */
typedef struct {
    mcp *m;
    const sl_tool_ctx *ctx;
    double deadline;
    double timeout_s;
    const char *what;            /* "tools/list", "tools/call 'search'" */
} job;

/* The negotiated state one request runs with. */
typedef struct {
    int era;
    const char *version;
    char *session;
    unsigned gen;
    sse_link *sse;               /* ERA_SSE: a reference */
    stdio_link *io;              /* ERA_STDIO: a reference */
} snap;

/* What came of one exchange. */
enum { GOT_OK, GOT_FAIL, GOT_HTTP, GOT_RPC, GOT_LOST };
typedef struct {
    int kind;
    long status;
    sl_value *result;            /* GOT_OK */
    sl_value *error;             /* GOT_RPC: the JSON-RPC error object */
    char *session;               /* an initialize answer's Mcp-Session-Id */
} outcome;

static void outcome_release(outcome *o)
{
    json_decref(o->result);
    json_decref(o->error);
    free(o->session);
    memset(o, 0, sizeof *o);
}

static double now_s(void)
{
    return sl_clock_s();
}

/* 0, or -1 with err when the job was cancelled or ran out of time. */
static int job_check(const job *j, sl_err *err)
{
    if (sl_tool_cancelled(j->ctx))
        return sl_err_set(err, SL_ECANCELED, "MCP server %s: %s was cancelled", j->m->where,
                          j->what);
    if (now_s() >= j->deadline)
        return sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                            "MCP server %s: %s took longer than %g s (tool_timeout_s); raise the "
                            "limit or ask the server's owner why it is slow",
                            j->m->where, j->what, j->timeout_s);
    return 0;
}

/* ---- the handle pool ---- */

static sl_http *take(mcp *m, sl_err *err)
{
    sl_http *h = NULL;
    pthread_mutex_lock(&m->mu);
    if (m->n_pool)
        h = m->pool[--m->n_pool];
    pthread_mutex_unlock(&m->mu);
    if (!h)
        return sl_http_new(err);
    sl_http_reset(h);
    return h;
}

static void give(mcp *m, sl_http *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&m->mu);
    if (m->n_pool < POOL_MAX) {
        m->pool[m->n_pool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&m->mu);
    sl_http_free(h);
}

/* ---- messages ---- */

/* The 2026-07-28 envelope's members, as JSON text: the same for every
 * request of a toolset, so written once (sl_mcp_new). */
static char *meta_text(const char *client_name)
{
    sl_value *env = json_pack("{s:s, s:{s:s, s:s}, s:{}}", "io.modelcontextprotocol/protocolVersion",
                              SL_MCP_MODERN, "io.modelcontextprotocol/clientInfo", "name",
                              client_name, "version", CLIENT_VERSION,
                              "io.modelcontextprotocol/clientCapabilities");
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_value_json(env, &b);
    json_decref(env);
    /* the members alone, without the braces, to splice into params._meta */
    char *text = sl_xstrndup(b.data + 1, b.len - 2);
    sl_buf_release(&b);
    return text;
}

/* A request (id > 0) or notification (id 0) as JSON text; steals params
 * (an object; NULL for none).  Modern requests carry their version and
 * capabilities in params._meta; tools/call asks for progress (which keeps a
 * slow tool's stream alive).  Written straight into a buffer: this is on
 * every call's path, and the envelope is always the same. */
static char *message(mcp *m, const snap *s, long long id, const char *method, sl_value *params)
{
    bool modern = s->era == ERA_MODERN || (s->era == ERA_STDIO && s->version == sl_mcp_versions[0]);
    bool progress = id && !strcmp(method, "tools/call");
    char first[1024];
    sl_buf b;
    sl_buf_init_on(&b, 0, first, sizeof first);
    char num[24];
    int nl = snprintf(num, sizeof num, "%lld", id);
    sl_buf_adds(&b, "{\"jsonrpc\":\"2.0\",");
    if (id) {
        sl_buf_adds(&b, "\"id\":");
        sl_buf_add(&b, num, (size_t)nl);
        sl_buf_addc(&b, ',');
    }
    sl_buf_adds(&b, "\"method\":\"");
    sl_buf_adds(&b, method);  /* sluice's own names: nothing to escape */
    sl_buf_adds(&b, "\",\"params\":");
    size_t open = b.len;
    if (params)
        sl_value_json(params, &b);
    else
        sl_buf_adds(&b, "{}");
    json_decref(params);
    if (id && (modern || progress)) {
        /* splice "_meta" in before the closing brace */
        bool empty = b.len - open == 2;
        b.len--;
        sl_buf_adds(&b, empty ? "\"_meta\":{" : ",\"_meta\":{");
        if (modern)
            sl_buf_adds(&b, m->meta);
        if (progress) {
            sl_buf_adds(&b, modern ? ",\"progressToken\":" : "\"progressToken\":");
            sl_buf_add(&b, num, (size_t)nl);
        }
        sl_buf_adds(&b, "}}");
    }
    sl_buf_addc(&b, '}');
    return sl_buf_detach(&b);
}

/* ---- Streamable HTTP: one exchange ---- */

typedef struct {
    mcp *m;
    const job *j;
    const snap *s;
    long long id;
    sl_http *h;
    int mode;                    /* 0 undecided, 1 a body, 2 an event stream */
    long status;
    sl_buf body;
    sl_sse sse;
    sl_mcp_msg resp;
    bool got;
    double got_at;
    char bad[200];               /* the first message that was not JSON-RPC */
    char session[SESSION_MAX + 1];
    bool session_bad;
    bool cancelled, timed_out, lingered;
} xchg;

static void headers_for(mcp *m, sl_http *h, const snap *s, const char *method, const char *name,
                        const sl_value *params, const sl_value *args);
static void post_side(mcp *m, const snap *s, const char *url, const char *body);

static bool x_stop(void *ud)
{
    xchg *x = ud;
    if (sl_tool_cancelled(x->j->ctx))
        return x->cancelled = true;
    double t = now_s();
    if (t >= x->j->deadline)
        return x->timed_out = true;
    if (x->got && t - x->got_at > LINGER_S)
        return x->lingered = true;
    return false;
}

static int x_header(const char *line, size_t n, void *ud)
{
    xchg *x = ud;
    if (n > 15 && !strncasecmp(line, "mcp-session-id:", 15)) {
        const char *v = line + 15;
        size_t k = n - 15;
        while (k && (*v == ' ' || *v == '\t'))
            v++, k--;
        while (k && (v[k - 1] == '\r' || v[k - 1] == '\n' || v[k - 1] == ' '))
            k--;
        bool ok = k > 0 && k <= SESSION_MAX;
        for (size_t i = 0; ok && i < k; i++)
            ok = v[i] > 0x20 && v[i] < 0x7f;
        if (ok) {
            memcpy(x->session, v, k);
            x->session[k] = 0;
        } else {
            x->session_bad = true;
        }
    }
    return 0;
}

/* Answers a server's request: ping as asked, anything else "method not
 * found" (sluice offers no sampling, elicitation or roots). */
static sl_value *answer_for(const sl_mcp_msg *msg)
{
    sl_value *a = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", msg->id);
    if (!strcmp(msg->method, "ping"))
        json_object_set_new(a, "result", json_object());
    else
        json_object_set_new(a, "error", json_pack("{s:i, s:s}", "code", -32601, "message",
                                                  "Method not found: sluice offers no client "
                                                  "features"));
    return a;
}

static void x_message(xchg *x, const char *data, size_t len)
{
    sl_mcp_msg msg;
    sl_mcp_msg_read(data, len, &msg);
    switch (msg.kind) {
    case SL_MCP_RESPONSE:
        if (!x->got && sl_mcp_id_is(msg.id, x->id)) {
            x->resp = msg;
            x->got = true;
            x->got_at = now_s();
            return;
        }
        break;  /* an answer to something else: not ours to use */
    case SL_MCP_REQUEST: {
        sl_value *a = answer_for(&msg);
        char *text = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        post_side(x->m, x->s, x->m->url, text);
        free(text);
        break;
    }
    case SL_MCP_NOTIFICATION:
        break;  /* progress, log lines: nothing to do */
    case SL_MCP_INVALID:
        if (!x->bad[0])
            sl_excerpt(msg.why, x->bad, sizeof x->bad);
        break;
    }
    sl_mcp_msg_release(&msg);
}

static int x_event(const char *event, const char *data, size_t len, void *ud)
{
    if ((*event && strcmp(event, "message")) || !len)
        return 0;  /* other event kinds, priming events without data */
    x_message(ud, data, len);
    return 0;
}

static int x_body(const char *p, size_t n, void *ud)
{
    xchg *x = ud;
    if (!x->mode) {
        x->status = sl_http_status(x->h);
        const char *ct = sl_http_content_type(x->h);
        x->mode = x->status >= 200 && x->status < 300 && ct && strcasestr(ct, "text/event-stream")
                      ? 2
                      : 1;
    }
    if (x->mode == 1)
        return sl_buf_add(&x->body, p, n);
    return sl_sse_feed(&x->sse, p, n);
}

/* The bytes a call's answer may take: the output cap, with room for
 * base64 and JSON around it. */
static size_t answer_cap(const job *j, bool list)
{
    if (list)
        return LIST_CAP;
    size_t cap = sl_tool_max_output(j->ctx);
    cap = cap > CALL_CAP_MAX / 2 ? CALL_CAP_MAX : cap * 2 + (1u << 20);
    return cap < CALL_CAP_MIN ? CALL_CAP_MIN : cap;
}

static void set_opts(mcp *m, sl_http *h, double until)
{
    sl_http_opts *o = sl_http_opts_of(h);
    double left = until - now_s();
    if (left < 0.001)
        left = 0.001;
    o->guard = true;
    o->allow_private = m->allow_private;
    o->connect_s = m->connect_s < left ? m->connect_s : left;
    o->timeout_s = left + 1;  /* the stop callback says it first, in its own words */
    o->max_headers = 64u << 10;
    o->tcp_keepalive = true;
}

/* Why a transfer failed, for err. */
static int http_fail(mcp *m, const job *j, sl_http *h, sl_http_result rc, size_t cap, sl_err *err)
{
    const char *where = m->where, *what = j->what;
    switch (rc) {
    case SL_HTTP_REFUSED: {
        const char *kind = "";
        const char *addr = sl_http_refused(h, &kind);
        sl_err_typed(err, SL_EIO, "ToolSSRFError",
                     "MCP server %s: sluice refused to connect to %s (%s): tools may not reach "
                     "loopback or private addresses; if the server is yours, set the limit "
                     "tool_allow_private=true (--limit, or SLUICE_TOOL_ALLOW_PRIVATE=true)",
                     where, addr ? addr : "?", kind ? kind : "?");
        return -1;
    }
    case SL_HTTP_CONNECT_TIMEOUT:
        return sl_err_limit(err, SL_ETIMEOUT, NULL,
                            "MCP server %s: no connection within %g s for %s; check that the "
                            "server is up and reachable",
                            where, sl_http_opts_of(h)->connect_s, what);
    case SL_HTTP_TIMEOUT:
        return sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                            "MCP server %s: %s took longer than %g s (tool_timeout_s); raise the "
                            "limit or ask the server's owner why it is slow",
                            where, what, j->timeout_s);
    case SL_HTTP_TOO_BIG:
    case SL_HTTP_HEADERS_TOO_BIG:
        return sl_err_limit(err, SL_ELIMIT, "tool_max_output",
                            "MCP server %s: the answer to %s passed %zu bytes, more than sluice "
                            "reads; raise tool_max_output or ask the tool for less",
                            where, what, cap);
    case SL_HTTP_RESOLVE:
        return sl_err_set(err, SL_EIO,
                          "MCP server %s: the host name does not resolve (%s); check the URL",
                          where, sl_http_why(h));
    case SL_HTTP_CONNECT:
        return sl_err_set(err, SL_EIO,
                          "MCP server %s: cannot connect (%s); check that the server is running "
                          "and the URL is right",
                          where, sl_http_why(h));
    case SL_HTTP_TLS_VERIFY:
        return sl_err_set(err, SL_EIO,
                          "MCP server %s: its TLS certificate could not be verified (%s)", where,
                          sl_http_why(h));
    case SL_HTTP_BROKEN:
        return sl_err_set(err, SL_EIO,
                          "MCP server %s: the connection broke during %s (%s); the server may "
                          "have crashed or restarted, check its log",
                          where, what, sl_http_why(h));
    case SL_HTTP_BAD_URL:
        return sl_err_set(err, SL_EINVAL, "MCP server %s: the URL is not usable (%s)", where,
                          sl_http_why(h));
    default:
        return sl_err_set(err, SL_EIO, "MCP server %s: %s failed: %s", where, what,
                          sl_http_why(h));
    }
}

/* The JSON-RPC error in an HTTP error body, if it holds one. */
static sl_value *body_error(const sl_buf *b)
{
    sl_mcp_msg msg;
    sl_mcp_msg_read(b->data ? b->data : "", b->len, &msg);
    sl_value *e = msg.kind == SL_MCP_RESPONSE && msg.error ? json_incref((sl_value *)msg.error)
                                                           : NULL;
    sl_mcp_msg_release(&msg);
    return e;
}

static void http_status_error(mcp *m, const job *j, sl_http *h, long status, const sl_buf *b,
                              sl_err *err)
{
    char shown[SL_MCP_MAX_SHOWN], to[300] = "";
    sl_excerpt(b->len ? b->data : "no body", shown, sizeof shown);
    const char *loc = status >= 300 && status < 400 ? sl_http_redirect(h) : NULL;
    if (loc) {
        char l[200];
        sl_excerpt(loc, l, sizeof l);
        snprintf(to, sizeof to, "; it redirects to %s: configure that URL if you trust it", l);
    }
    const char *hint = loc ? to
                       : status == 401 || status == 403
                           ? "; check the credentials in the headers configured for this server"
                       : status == 404 || status == 405 ? "; check the URL (its path too)"
                       : status >= 500 ? "; the server failed, check its log"
                                       : "";
    sl_err_set(err, SL_EIO, "MCP server %s: %s was answered with HTTP %ld (%s)%s", m->where,
               j->what, status, shown, hint);
}

/* One POST of a request (id > 0) to the MCP endpoint, and its answer. */
static int http_exchange(mcp *m, const job *j, const snap *s, long long id, const char *method,
                         const char *name, sl_value *params, const sl_value *hparams,
                         const sl_value *args, outcome *o, sl_err *err)
{
    memset(o, 0, sizeof *o);
    o->kind = GOT_FAIL;
    if (job_check(j, err)) {
        json_decref(params);
        return -1;
    }
    sl_http *h = take(m, err);
    if (!h) {
        json_decref(params);
        return -1;
    }
    char *body = message(m, s, id, method, params);
    size_t cap = answer_cap(j, strcmp(method, "tools/call") != 0);
    xchg x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.j = j;
    x.s = s;
    x.id = id;
    x.h = h;
    sl_buf_init(&x.body, cap);
    sl_sse_init(&x.sse, cap, x_event, &x);
    sl_http_url(h, m->url);
    size_t blen = strlen(body);
    sl_http_method(h, "POST", body, blen, true);
    headers_for(m, h, s, method, name, hparams, args);
    if (blen > (1u << 20))
        sl_http_header(h, "Expect:");  /* no 100-continue round trip for large arguments */
    set_opts(m, h, j->deadline);
    sl_http_opts *ho = sl_http_opts_of(h);
    ho->max_body = cap;
    ho->stop = x_stop;
    ho->stop_ud = &x;
    ho->on_body = x_body;
    if (!strcmp(method, "initialize"))
        ho->on_header = x_header;  /* only its answer may set the session */
    ho->ud = &x;
    sl_http_result rc = sl_http_perform(h);
    if (x.mode == 2)
        sl_sse_finish(&x.sse);
    if (!x.mode)
        x.status = sl_http_status(h);
    int ret = -1;
    if (x.got) {
        /* the answer came; how the stream ended after it does not matter */
        if (x.resp.error) {
            o->kind = GOT_RPC;
            o->error = json_incref((sl_value *)x.resp.error);
        } else {
            o->kind = GOT_OK;
            o->result = json_incref((sl_value *)x.resp.result);
        }
        ret = 0;
    } else if (x.cancelled || x.timed_out) {
        /* Closing the stream is how a 2026-07-28 server hears it; the
         * older ones are told. */
        if (s->era == ERA_LEGACY) {
            char *note = message(m, s, 0, "notifications/cancelled",
                                 json_pack("{s:I, s:s}", "requestId", (json_int_t)id, "reason",
                                           x.cancelled ? "cancelled by the caller"
                                                       : "timed out"));
            post_side(m, s, m->url, note);
            free(note);
        }
        if (x.cancelled)
            sl_err_set(err, SL_ECANCELED, "MCP server %s: %s was cancelled", m->where, j->what);
        else
            sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                         "MCP server %s: %s took longer than %g s (tool_timeout_s); raise the "
                         "limit or ask the server's owner why it is slow",
                         m->where, j->what, j->timeout_s);
    } else if (x.sse.failed || x.body.toobig) {
        http_fail(m, j, h, SL_HTTP_TOO_BIG, cap, err);
    } else if (rc != SL_HTTP_OK && rc != SL_HTTP_CALLBACK) {
        http_fail(m, j, h, rc, cap, err);
    } else if (x.status < 200 || x.status >= 300) {
        o->status = x.status;
        o->error = body_error(&x.body);
        o->kind = o->error ? GOT_RPC : GOT_HTTP;
        if (!o->error)
            http_status_error(m, j, h, x.status, &x.body, err);
        ret = 0;
    } else if (x.mode == 1) {
        sl_mcp_msg msg;
        sl_mcp_msg_read(x.body.data ? x.body.data : "", x.body.len, &msg);
        char shown[120];
        if (msg.kind == SL_MCP_RESPONSE && sl_mcp_id_is(msg.id, id)) {
            o->kind = msg.error ? GOT_RPC : GOT_OK;
            if (msg.error)
                o->error = json_incref((sl_value *)msg.error);
            else
                o->result = json_incref((sl_value *)msg.result);
            ret = 0;
        } else if (msg.kind == SL_MCP_RESPONSE) {
            char *shown_id = json_dumps(msg.id, JSON_ENCODE_ANY | JSON_COMPACT);
            sl_excerpt(shown_id, shown, sizeof shown);
            free(shown_id);
            sl_err_set(err, SL_EIO,
                       "MCP server %s: %s was answered for another request (id %s instead of "
                       "%lld); the server is broken, check its version",
                       m->where, j->what, shown, id);
        } else {
            sl_excerpt(msg.kind == SL_MCP_INVALID ? msg.why : "a message that is not an answer",
                       shown, sizeof shown);
            sl_err_set(err, SL_EIO,
                       "MCP server %s: %s was answered with something that is not JSON-RPC "
                       "(%s); check that the URL is an MCP endpoint",
                       m->where, j->what, shown);
        }
        sl_mcp_msg_release(&msg);
    } else if (x.mode == 2) {
        sl_err_set(err, SL_EIO,
                   "MCP server %s: the event stream for %s ended without an answer%s%s%s; the "
                   "server may have failed, check its log",
                   m->where, j->what, x.bad[0] ? " (it sent a message that is not JSON-RPC: " : "",
                   x.bad, x.bad[0] ? ")" : "");
    } else {
        sl_err_set(err, SL_EIO,
                   "MCP server %s: %s was answered with HTTP %ld and no body; check that the "
                   "URL is an MCP endpoint",
                   m->where, j->what, x.status);
    }
    if (x.session[0] && !x.session_bad)
        o->session = sl_xstrdup(x.session);
    if (x.session_bad && !ret && o->kind == GOT_OK && !strcmp(method, "initialize")) {
        outcome_release(o);
        o->kind = GOT_FAIL;
        ret = sl_err_set(err, SL_EIO,
                         "MCP server %s: its Mcp-Session-Id is not a usable header value",
                         m->where);
    }
    sl_mcp_msg_release(&x.resp);
    sl_sse_release(&x.sse);
    sl_buf_release(&x.body);
    free(body);
    give(m, h);
    if (ret)
        o->kind = GOT_FAIL;
    return ret;
}

/* A message sluice sends on the side (notifications/initialized,
 * notifications/cancelled, an answer to a server's request): a short
 * deadline, errors ignored. */
static void post_side(mcp *m, const snap *s, const char *url, const char *body)
{
    sl_http *h = take(m, NULL);
    if (!h)
        return;
    sl_http_url(h, url);
    sl_http_method(h, "POST", body, strlen(body), true);
    headers_for(m, h, s, NULL, NULL, NULL, NULL);
    set_opts(m, h, now_s() + NOTIFY_S);
    sl_http_opts_of(h)->max_body = 64u << 10;
    sl_http_perform(h);
    give(m, h);
}

static void headers_for(mcp *m, sl_http *h, const snap *s, const char *method, const char *name,
                        const sl_value *params, const sl_value *args)
{
    char line[512];
    sl_http_header(h, "Content-Type: application/json");
    sl_http_header(h, "Accept: application/json, text/event-stream");
    /* 2025-06-18 on: the negotiated version on every request after
     * initialize (method NULL: a notification or an answer) */
    if (s->era == ERA_MODERN ||
        (s->era == ERA_LEGACY && s->version && strcmp(s->version, "2025-06-18") >= 0 &&
         !(method && !strcmp(method, "initialize")))) {
        snprintf(line, sizeof line, "MCP-Protocol-Version: %s", s->version);
        sl_http_header(h, line);
    }
    if (s->era == ERA_LEGACY && s->session) {
        snprintf(line, sizeof line, "Mcp-Session-Id: %s", s->session);
        sl_http_header(h, line);
    }
    if (s->era == ERA_MODERN && method) {
        snprintf(line, sizeof line, "Mcp-Method: %s", method);
        sl_http_header(h, line);
        char vbuf[256];
        sl_buf v;
        sl_buf_init_on(&v, 0, vbuf, sizeof vbuf);
        if (name) {
            sl_buf_adds(&v, "Mcp-Name: ");
            sl_mcp_header_value(name, strlen(name), &v);
            sl_http_header(h, v.data);
        }
        for (size_t i = 0; i < json_array_size(params); i++) {
            const sl_value *p = json_array_get(params, i);
            sl_buf raw;
            sl_buf_init(&raw, 8192);
            if (sl_mcp_param_value(args, json_object_get(p, "path"), &raw) && !raw.toobig) {
                sl_buf_reset(&v);
                sl_mcp_header_value(raw.data ? raw.data : "", raw.len, &v);
                if (v.len)
                    sl_http_headerf(h, "Mcp-Param-%s: %s",
                                    json_string_value(json_object_get(p, "header")), v.data);
                else
                    sl_http_headerf(h, "Mcp-Param-%s;",
                                    json_string_value(json_object_get(p, "header")));
            }
            sl_buf_release(&raw);
        }
        sl_buf_release(&v);
    }
    for (size_t i = 0; i < m->n_headers; i++)
        sl_http_header(h, m->headers[i]);
}

/* ---- the HTTP+SSE transport (2024-11-05) ---- */

typedef struct waiter {
    long long id;
    sl_mcp_msg msg;
    bool done;
    struct waiter *next;
} waiter;

struct sse_link {
    mcp *m;
    int refs;                    /* under m->mu: m->sse, the reader, each request */
    bool ready, ended;
    atomic_bool stop;
    char *endpoint;
    char why[400];
    waiter *waiters;
    sl_http *h;                  /* the reader's GET */
    sl_sse sse;
    int mode;
    snap s;                      /* what the reader answers server requests with */
};

/* Under m->mu. */
static void link_unref(sse_link *l)
{
    if (--l->refs)
        return;
    free(l->endpoint);
    free(l);
}

/* An endpoint event's URI made absolute against the URL (RFC 3986's
 * simple cases: absolute, network-path, absolute-path, relative). */
static char *resolve(const char *base, const char *ref)
{
    if (!strncasecmp(ref, "http://", 7) || !strncasecmp(ref, "https://", 8))
        return sl_xstrdup(ref);
    sl_url_parts p;
    if (sl_url_split(base, &p, NULL))
        return NULL;
    if (!strncmp(ref, "//", 2))
        return sl_xasprintf("%.*s:%s", (int)p.scheme_n, p.scheme, ref);
    if (ref[0] == '/')
        return sl_xasprintf("%.*s://%.*s%s", (int)p.scheme_n, p.scheme, (int)p.netloc_n, p.netloc,
                            ref);
    size_t dir = p.path_n;
    while (dir && p.path[dir - 1] != '/')
        dir--;
    return sl_xasprintf("%.*s://%.*s%.*s%s%s", (int)p.scheme_n, p.scheme, (int)p.netloc_n,
                        p.netloc, (int)dir, p.path, dir ? "" : "/", ref);
}

static void link_end(sse_link *l, const char *why)
{
    mcp *m = l->m;
    pthread_mutex_lock(&m->mu);
    if (!l->ended && why && !l->why[0])
        snprintf(l->why, sizeof l->why, "%s", why);
    l->ended = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

static void link_message(sse_link *l, const char *data, size_t len)
{
    mcp *m = l->m;
    sl_mcp_msg msg;
    sl_mcp_msg_read(data, len, &msg);
    if (msg.kind == SL_MCP_RESPONSE) {
        pthread_mutex_lock(&m->mu);
        for (waiter *w = l->waiters; w; w = w->next)
            if (!w->done && sl_mcp_id_is(msg.id, w->id)) {
                w->msg = msg;
                w->done = true;
                memset(&msg, 0, sizeof msg);
                pthread_cond_broadcast(&m->cv);
                break;
            }
        pthread_mutex_unlock(&m->mu);
    } else if (msg.kind == SL_MCP_REQUEST) {
        sl_value *a = answer_for(&msg);
        char *text = json_dumps(a, JSON_COMPACT);
        json_decref(a);
        post_side(m, &l->s, l->endpoint, text);
        free(text);
    }
    sl_mcp_msg_release(&msg);
}

static int link_event(const char *event, const char *data, size_t len, void *ud)
{
    sse_link *l = ud;
    mcp *m = l->m;
    if (!strcmp(event, "endpoint")) {
        if (l->endpoint)
            return 0;  /* one endpoint per stream: a second one is not followed */
        char ref[2048];
        char shown[200];
        if (len >= sizeof ref || memchr(data, 0, len)) {
            link_end(l, "its endpoint event is not a usable URI");
            return 1;
        }
        memcpy(ref, data, len);
        ref[len] = 0;
        char *url = resolve(m->url, ref);
        char o1[512], o2[512], sc[16], host[256];
        bool same = url && !sl_url_check(url, NULL) &&
                    sl_url_origin(url, o1, sizeof o1, sc, sizeof sc, host, sizeof host) &&
                    sl_url_origin(m->url, o2, sizeof o2, sc, sizeof sc, host, sizeof host) &&
                    !strcmp(o1, o2);
        if (!same) {
            sl_excerpt(ref, shown, sizeof shown);
            char why[400];
            snprintf(why, sizeof why,
                     "its endpoint event points to another origin (%s); sluice posts only to "
                     "the server's own origin",
                     shown);
            free(url);
            link_end(l, why);
            return 1;
        }
        pthread_mutex_lock(&m->mu);
        l->endpoint = url;
        l->ready = true;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
        return 0;
    }
    if ((*event && strcmp(event, "message")) || !len)
        return 0;
    if (!l->endpoint)
        return 0;  /* nothing can be answered before the endpoint */
    link_message(l, data, len);
    return 0;
}

static int link_body(const char *p, size_t n, void *ud)
{
    sse_link *l = ud;
    if (!l->mode) {
        long st = sl_http_status(l->h);
        const char *ct = sl_http_content_type(l->h);
        if (st != 200 || !ct || !strcasestr(ct, "text/event-stream")) {
            char why[200];
            snprintf(why, sizeof why, "it answered the event-stream GET with HTTP %ld%s", st,
                     st == 200 ? " but no event stream" : "");
            link_end(l, why);
            return 1;
        }
        l->mode = 1;
    }
    return sl_sse_feed(&l->sse, p, n);
}

static bool link_stop(void *ud)
{
    sse_link *l = ud;
    return atomic_load(&l->stop);
}

static void *link_main(void *arg)
{
    sse_link *l = arg;
    mcp *m = l->m;
    sl_err err = {0};
    l->h = sl_http_new(&err);
    if (l->h) {
        sl_http_url(l->h, m->url);
        sl_http_method(l->h, "GET", NULL, 0, false);
        sl_http_header(l->h, "Accept: text/event-stream");
        for (size_t i = 0; i < m->n_headers; i++)
            sl_http_header(l->h, m->headers[i]);
        sl_http_opts *o = sl_http_opts_of(l->h);
        o->guard = true;
        o->allow_private = m->allow_private;
        o->connect_s = m->connect_s;
        o->max_headers = 64u << 10;
        o->tcp_keepalive = true;
        o->user_agent = "sluice";
        o->stop = link_stop;
        o->stop_ud = l;
        o->on_body = link_body;
        o->ud = l;
        sl_sse_init(&l->sse, LIST_CAP, link_event, l);
        sl_http_result rc = sl_http_perform(l->h);
        char why[400];
        if (l->sse.failed)
            snprintf(why, sizeof why, "it sent an event larger than %u bytes", LIST_CAP);
        else if (rc == SL_HTTP_OK || rc == SL_HTTP_CALLBACK || rc == SL_HTTP_STOPPED)
            snprintf(why, sizeof why, "it closed the event stream");
        else if (rc == SL_HTTP_REFUSED) {
            const char *kind = "";
            const char *addr = sl_http_refused(l->h, &kind);
            snprintf(why, sizeof why,
                     "sluice refused to connect to %s (%s): tools may not reach loopback or "
                     "private addresses; if the server is yours, set the limit "
                     "tool_allow_private=true (--limit, or SLUICE_TOOL_ALLOW_PRIVATE=true)",
                     addr ? addr : "?", kind ? kind : "?");
        } else
            snprintf(why, sizeof why, "its event stream failed: %s", sl_http_why(l->h));
        link_end(l, why);
        sl_sse_release(&l->sse);
        sl_http_free(l->h);
        l->h = NULL;
    } else {
        link_end(l, err.msg ? err.msg : "no HTTP client");
        sl_err_clear(&err);
    }
    pthread_mutex_lock(&m->mu);
    link_unref(l);
    m->sse_threads--;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* Waits on m->cv (held) for a signal or SL_HTTP_POLL_MS. */
static void timed_wait(mcp *m)
{
    struct timespec ts = sl_clock_wall_in(SL_HTTP_POLL_MS / 1000.0);
    pthread_cond_timedwait(&m->cv, &m->mu, &ts);
}

/* Waits on m->cv (held) until *flag, the link ends, or the job's bounds
 * pass; 0 when *flag, -1 with err otherwise (the lock is still held). */
static int wait_for(mcp *m, const job *j, const bool *flag, const bool *ended, double until,
                    sl_err *err)
{
    while (!*flag && !(ended && *ended)) {
        if (sl_tool_cancelled(j->ctx) || now_s() >= until)
            break;
        timed_wait(m);
    }
    if (*flag)
        return 0;
    if (ended && *ended)
        return -1;  /* the caller says why */
    if (sl_tool_cancelled(j->ctx))
        return sl_err_set(err, SL_ECANCELED, "MCP server %s: %s was cancelled", m->where, j->what);
    return -2;  /* out of time: the caller says which bound */
}

static int add_body(const char *p, size_t n, void *ud)
{
    sl_buf_add(ud, p, n);
    return 0;
}

/* One request over the link: POST it, wait for its answer on the stream. */
static int sse_exchange(mcp *m, const job *j, const snap *s, long long id, const char *method,
                        sl_value *params, outcome *o, sl_err *err)
{
    memset(o, 0, sizeof *o);
    o->kind = GOT_FAIL;
    sse_link *l = s->sse;
    if (job_check(j, err)) {
        json_decref(params);
        return -1;
    }
    char *body = message(m, s, id, method, params);
    waiter w = {.id = id};
    pthread_mutex_lock(&m->mu);
    bool ended = l->ended;
    if (!ended) {
        w.next = l->waiters;
        l->waiters = &w;
    }
    pthread_mutex_unlock(&m->mu);
    if (ended) {
        free(body);
        o->kind = GOT_LOST;
        return sl_err_set(err, SL_EIO, "MCP server %s: %s", m->where, l->why);
    }
    int ret = -1;
    sl_http *h = take(m, err);
    if (h) {
        sl_http_url(h, l->endpoint);
        sl_http_method(h, "POST", body, strlen(body), true);
        headers_for(m, h, s, NULL, NULL, NULL, NULL);
        set_opts(m, h, j->deadline);
        sl_buf eb;
        sl_buf_init(&eb, 64u << 10);
        sl_http_opts *ho = sl_http_opts_of(h);
        ho->max_body = 64u << 10;
        ho->on_body = add_body;
        ho->ud = &eb;
        sl_http_result rc = sl_http_perform(h);
        long st = sl_http_status(h);
        if (rc != SL_HTTP_OK && rc != SL_HTTP_TOO_BIG)
            http_fail(m, j, h, rc, 64u << 10, err);
        else if (st < 200 || st >= 300) {
            o->status = st;
            o->kind = GOT_HTTP;
            http_status_error(m, j, h, st, &eb, err);
        } else
            ret = 0;
        sl_buf_release(&eb);
        give(m, h);
    }
    pthread_mutex_lock(&m->mu);
    int wr = ret ? -1 : wait_for(m, j, &w.done, &l->ended, j->deadline, err);
    for (waiter **p = &l->waiters; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
    bool was_ended = l->ended;
    char why[400];
    snprintf(why, sizeof why, "%s", l->why);
    pthread_mutex_unlock(&m->mu);
    if (!ret && !wr) {
        if (w.msg.error) {
            o->kind = GOT_RPC;
            o->error = json_incref((sl_value *)w.msg.error);
        } else {
            o->kind = GOT_OK;
            o->result = json_incref((sl_value *)w.msg.result);
        }
    } else if (!ret) {
        ret = -1;
        if (wr == -1 && was_ended) {
            sl_err_set(err, SL_EIO, "MCP server %s: %s during %s; the server may have restarted",
                       m->where, why, j->what);
        } else if (wr == -2 || (err && err->code == SL_ECANCELED)) {
            char *note = message(m, s, 0, "notifications/cancelled",
                                 json_pack("{s:I, s:s}", "requestId", (json_int_t)id, "reason",
                                           wr == -2 ? "timed out" : "cancelled by the caller"));
            post_side(m, s, l->endpoint, note);
            free(note);
            if (wr == -2)
                sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                             "MCP server %s: %s took longer than %g s (tool_timeout_s); raise "
                             "the limit or ask the server's owner why it is slow",
                             m->where, j->what, j->timeout_s);
        }
    }
    if (ret && o->kind == GOT_OK)
        o->kind = GOT_FAIL;
    sl_mcp_msg_release(&w.msg);
    free(body);
    return ret;
}

/* Opens the event stream and waits for its endpoint. */
static int sse_open(mcp *m, const job *j, sse_link **out, sl_err *err)
{
    sse_link *l = sl_xcalloc(1, sizeof *l);
    l->m = m;
    l->refs = 2;  /* the caller's, the reader's */
    l->s.era = ERA_SSE;
    l->s.version = "2024-11-05";
    pthread_mutex_lock(&m->mu);
    m->sse_threads++;
    pthread_mutex_unlock(&m->mu);
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int prc = pthread_create(&th, &at, link_main, l);
    pthread_attr_destroy(&at);
    if (prc) {
        pthread_mutex_lock(&m->mu);
        m->sse_threads--;
        l->refs = 1;
        link_unref(l);
        pthread_mutex_unlock(&m->mu);
        return sl_err_set(err, SL_EIO, "MCP server %s: cannot start a thread for its event stream",
                          m->where);
    }
    double until = now_s() + m->connect_s;
    if (until > j->deadline)
        until = j->deadline;
    pthread_mutex_lock(&m->mu);
    int rc = wait_for(m, j, &l->ready, &l->ended, until, err);
    char why[400];
    snprintf(why, sizeof why, "%s", l->why);
    pthread_mutex_unlock(&m->mu);
    if (rc) {
        atomic_store(&l->stop, true);
        pthread_mutex_lock(&m->mu);
        link_unref(l);
        pthread_mutex_unlock(&m->mu);
        if (rc == -1)
            return sl_err_set(err, SL_EIO,
                              "MCP server %s: the HTTP+SSE transport did not open: %s; check the "
                              "URL and the transport",
                              m->where, why);
        if (rc == -2 && !job_check(j, err))
            return sl_err_limit(err, SL_ETIMEOUT, NULL,
                                "MCP server %s: its event stream sent no endpoint within %g s; "
                                "check the URL and the transport",
                                m->where, m->connect_s);
        return -1;
    }
    *out = l;
    return 0;
}

/* ---- stdio ---- */

/* One server process, in one sandbox.  A toolset shared by several runs
 * keeps one per run's sandbox (each run's server sees that run's files and
 * limits); a process dies with its sandbox and is started again in the
 * next caller's. */
struct stdio_link {
    int refs;                    /* under m->mu: the list, each request */
    stdio_link *next;            /* m->links */
    sl_sandbox *sb;
    unsigned long long sb_serial;  /* sb is this sandbox, not a later one at its address */
    const char *version;         /* what it speaks */
    pthread_mutex_t io;          /* one request at a time */
    int to, from;                /* its stdin, its stdout */
    sl_sandbox_proc *proc;
    sl_mcp_lines lines;
    atomic_bool dead;
    char why[160];
    /* the request being read for */
    long long want;
    sl_mcp_msg got;
    bool have;
    char bad[200];               /* the first line that was not JSON-RPC */
};

static int io_write_all(stdio_link *io, const job *j, const char *p, size_t n);

/* Appends "\n" to a message (heap) for the wire. */
static char *line_of(char *text, size_t *n)
{
    *n = strlen(text);
    text = sl_xrealloc(text, *n + 2);
    text[(*n)++] = '\n';
    text[*n] = 0;
    return text;
}

static int io_line(const char *line, size_t len, void *ud)
{
    stdio_link *io = ud;
    sl_mcp_msg msg;
    sl_mcp_msg_read(line, len, &msg);
    if (msg.kind == SL_MCP_RESPONSE && !io->have && sl_mcp_id_is(msg.id, io->want)) {
        io->got = msg;
        io->have = true;
        return 0;
    }
    if (msg.kind == SL_MCP_REQUEST) {
        sl_value *a = answer_for(&msg);
        size_t n;
        char *text = line_of(json_dumps(a, JSON_COMPACT), &n);
        json_decref(a);
        job side = {.deadline = now_s() + NOTIFY_S, .what = "an answer"};
        io_write_all(io, &side, text, n);
        free(text);
    } else if (msg.kind == SL_MCP_INVALID && !io->bad[0]) {
        sl_excerpt(msg.why, io->bad, sizeof io->bad);
    }
    /* answers to requests given up on, notifications: skipped */
    sl_mcp_msg_release(&msg);
    return 0;
}

/* Writes to the server's stdin without dying of SIGPIPE when it is gone:
 * 0, -1 (it is gone), -2 (cancelled or out of time). */
static int io_write_all(stdio_link *io, const job *j, const char *p, size_t n)
{
    /* A process that ignores SIGPIPE (sluice serve does) needs no mask:
     * two system calls fewer on every request. */
    struct sigaction sa;
    bool mask = sigaction(SIGPIPE, NULL, &sa) || sa.sa_handler != SIG_IGN;
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (mask)
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int rc = 0;
    while (n) {
        ssize_t w = write(io->to, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN) {
            rc = -1;
            break;
        }
        if ((j->ctx && sl_tool_cancelled(j->ctx)) || now_s() >= j->deadline) {
            rc = -2;
            break;
        }
        struct pollfd pf = {io->to, POLLOUT, 0};
        poll(&pf, 1, SL_HTTP_POLL_MS);
    }
    if (rc == -1) {
        /* the SIGPIPE this write raised is pending for this thread: take it */
        sigset_t pend;
        sigpending(&pend);
        if (mask && sigismember(&pend, SIGPIPE)) {
            struct timespec zero = {0, 0};
            sigtimedwait(&pipe_set, NULL, &zero);
        }
        io->dead = true;
    }
    if (mask)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Reads until the answer to io->want came: 0, -1 (the server is gone),
 * -2 (cancelled, or `until` passed). */
static int io_read(stdio_link *io, const job *j, double until)
{
    char buf[65536];
    while (!io->have) {
        /* wait first: the answer is never there the moment the request left */
        struct pollfd pf = {io->from, POLLIN, 0};
        int pr = poll(&pf, 1, SL_HTTP_POLL_MS);
        if (pr == 0) {
            if ((j->ctx && sl_tool_cancelled(j->ctx)) || now_s() >= until)
                return -2;
            continue;
        }
        ssize_t r = read(io->from, buf, sizeof buf);
        if (r > 0) {
            if (sl_mcp_lines_feed(&io->lines, buf, (size_t)r, io_line, io) < 0) {
                io->dead = true;
                snprintf(io->why, sizeof io->why, "wrote a line longer than %u bytes", LIST_CAP);
                return -1;
            }
            continue;
        }
        if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
            io->dead = true;
            return -1;
        }
        if ((j->ctx && sl_tool_cancelled(j->ctx)) || now_s() >= until)
            return -2;
    }
    return 0;
}

/* Why the server is gone: how it ended and the end of its stderr. */
static void io_obituary(mcp *m, stdio_link *io, const job *j, sl_err *err)
{
    char how[200] = "ended";
    sl_sandbox_result res;
    sl_sandbox_result_init(&res);
    /* EOF comes a moment before the exit is known */
    if (sl_sandbox_proc_wait(io->proc, 1.0, &res)) {
        char d[160];
        sl_sandbox_result_describe(&res, d, sizeof d);
        snprintf(how, sizeof how, "%s", d);
    }
    sl_sandbox_result_release(&res);
    if (io->why[0])
        snprintf(how, sizeof how, "%s", io->why);
    const char *e = sl_sandbox_proc_stderr(io->proc);
    size_t n = e ? strlen(e) : 0;
    while (n && (e[n - 1] == '\n' || e[n - 1] == '\r' || e[n - 1] == ' '))
        n--;
    size_t from = n > 300 ? n - 300 : 0;
    while (from < n && ((unsigned char)e[from] & 0xC0) == 0x80)
        from++;
    char *last = e ? sl_xstrndup(e + from, n - from) : sl_xstrdup("");
    char tail[400];
    sl_excerpt(last, tail, sizeof tail);
    free(last);
    sl_err_set(err, SL_EIO,
               "MCP server %s: the server %s during %s%s%s%s%s%s; check the command and its "
               "output",
               m->where, how, j->what, tail[0] ? "; its stderr ends: " : "", tail,
               io->bad[0] ? "; it also wrote a line that is not JSON-RPC (" : "", io->bad,
               io->bad[0] ? ")" : "");
}

static int stdio_exchange(mcp *m, const job *j, const snap *s, long long id, const char *method,
                          sl_value *params, double until, outcome *o, sl_err *err)
{
    memset(o, 0, sizeof *o);
    o->kind = GOT_FAIL;
    stdio_link *io = s->io;
    if (job_check(j, err)) {
        json_decref(params);
        return -1;
    }
    size_t n;
    char *text = line_of(message(m, s, id, method, params), &n);
    pthread_mutex_lock(&io->io);
    int ret = -1;
    int wr = io->dead || !sl_sandbox_proc_running(io->proc, NULL) ? -1 : io_write_all(io, j, text, n);
    if (wr == -1) {
        /* gone before the request reached it: the caller may start another */
        io->dead = true;
        o->kind = GOT_LOST;
        io_obituary(m, io, j, err);
        goto out;
    }
    io->want = id;
    io->have = false;
    int rr = wr ? wr : io_read(io, j, until);
    if (!rr) {
        ret = 0;
        if (io->got.error) {
            o->kind = GOT_RPC;
            o->error = json_incref((sl_value *)io->got.error);
        } else {
            o->kind = GOT_OK;
            o->result = json_incref((sl_value *)io->got.result);
        }
        sl_mcp_msg_release(&io->got);
        io->have = false;
    } else if (rr == -1) {
        io_obituary(m, io, j, err);  /* died on this request: not retried */
    } else {
        /* cancelled or out of time: tell it; a late answer will be skipped */
        size_t cn;
        char *note = line_of(
            message(m, s, 0, "notifications/cancelled",
                    json_pack("{s:I, s:s}", "requestId", (json_int_t)id, "reason",
                              sl_tool_cancelled(j->ctx) ? "cancelled by the caller" : "timed out")),
            &cn);
        job side = {.deadline = now_s() + NOTIFY_S, .what = "a notification"};
        io_write_all(io, &side, note, cn);
        free(note);
        if (sl_tool_cancelled(j->ctx))
            sl_err_set(err, SL_ECANCELED, "MCP server %s: %s was cancelled", m->where, j->what);
        else if (until < j->deadline)
            o->kind = GOT_HTTP;  /* a probe that got no answer in time */
        else
            sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                         "MCP server %s: %s took longer than %g s (tool_timeout_s); raise the "
                         "limit or ask the server's owner why it is slow",
                         m->where, j->what, j->timeout_s);
    }
out:
    pthread_mutex_unlock(&io->io);
    free(text);
    return ret;
}

static void stdio_close(stdio_link *io)
{
    if (!io)
        return;
    if (io->to >= 0)
        close(io->to);  /* its EOF: a well-behaved server leaves */
    if (io->proc && !io->dead)
        sl_sandbox_proc_wait(io->proc, 0.5, NULL);
    sl_sandbox_proc_free(io->proc);  /* and the others are killed */
    if (io->from >= 0)
        close(io->from);
    sl_mcp_lines_release(&io->lines);
    sl_mcp_msg_release(&io->got);
    pthread_mutex_destroy(&io->io);
    free(io);
}

/* Under m->mu. */
static void io_unref(stdio_link *io)
{
    if (io && !--io->refs)
        stdio_close(io);
}

/* Takes a link out of m->links (under m->mu). */
static void io_drop(mcp *m, stdio_link *io)
{
    for (stdio_link **p = &m->links; *p; p = &(*p)->next)
        if (*p == io) {
            *p = io->next;
            io->next = NULL;
            io_unref(io);
            return;
        }
}

static int stdio_open(mcp *m, sl_sandbox *sb, stdio_link **out, sl_err *err)
{
    sl_sandbox_cmd cmd = {
        .argv = (const char *const *)m->argv,
        .env = (const char *const *)m->env,
    };
    stdio_link *io = sl_xcalloc(1, sizeof *io);
    io->refs = 1;
    io->sb = sb;
    io->sb_serial = sl_sandbox_serial(sb);
    io->to = io->from = -1;
    pthread_mutex_init(&io->io, NULL);
    sl_mcp_lines_init(&io->lines, LIST_CAP);
    if (sl_sandbox_spawn(sb, &cmd, &io->proc, &io->to, &io->from, err)) {
        stdio_close(io);
        return sl_err_prefix(err, "MCP server %s: cannot start it in the sandbox", m->where);
    }
    /* non-blocking: every wait below is bounded by poll */
    fcntl(io->to, F_SETFL, fcntl(io->to, F_GETFL) | O_NONBLOCK);
    fcntl(io->from, F_SETFL, fcntl(io->from, F_GETFL) | O_NONBLOCK);
    *out = io;
    return 0;
}

/* ---- negotiation ---- */

/* Fills s from the toolset's state, taking references; under m->mu. */
static void snap_take(mcp *m, snap *s)
{
    memset(s, 0, sizeof *s);
    s->era = m->era;
    s->version = m->version;
    s->session = m->session ? sl_xstrdup(m->session) : NULL;
    s->gen = m->gen;
    s->sse = m->sse;
    if (s->sse)
        s->sse->refs++;
}

static void snap_drop(mcp *m, snap *s)
{
    free(s->session);
    if (s->sse || s->io) {
        pthread_mutex_lock(&m->mu);
        if (s->sse)
            link_unref(s->sse);
        io_unref(s->io);
        pthread_mutex_unlock(&m->mu);
    }
    memset(s, 0, sizeof *s);
}

/* Forgets the negotiated state s ran with (the session was lost, the
 * server changed or died) unless another thread already negotiated again. */
static void forget(mcp *m, const snap *s)
{
    pthread_mutex_lock(&m->mu);
    if (s->era == ERA_STDIO) {
        atomic_store(&s->io->dead, true);
        io_drop(m, s->io);
    } else if (m->gen == s->gen && m->era != ERA_NONE) {
        m->era = ERA_NONE;
        free(m->session);
        m->session = NULL;
        if (m->sse) {
            atomic_store(&m->sse->stop, true);
            link_unref(m->sse);
            m->sse = NULL;
        }
    }
    pthread_mutex_unlock(&m->mu);
}

static int exchange(mcp *m, const job *j, const snap *s, const char *method, const char *name,
                    sl_value *params, const sl_value *hparams, const sl_value *args, outcome *o,
                    sl_err *err)
{
    long long id = method ? atomic_fetch_add(&m->next_id, 1) : 0;
    switch (s->era) {
    case ERA_SSE: return sse_exchange(m, j, s, id, method, params, o, err);
    case ERA_STDIO: return stdio_exchange(m, j, s, id, method, params, j->deadline, o, err);
    default: return http_exchange(m, j, s, id, method, name, params, hparams, args, o, err);
    }
}

/* A notification (no answer expected). */
static void notify(mcp *m, const snap *s, const char *method)
{
    char *text = message(m, s, 0, method, NULL);
    if (s->era == ERA_SSE) {
        post_side(m, s, s->sse->endpoint, text);
    } else if (s->era == ERA_STDIO) {
        size_t n;
        text = line_of(text, &n);
        job side = {.deadline = now_s() + NOTIFY_S, .what = method};
        pthread_mutex_lock(&s->io->io);
        io_write_all(s->io, &side, text, n);
        pthread_mutex_unlock(&s->io->io);
    } else {
        post_side(m, s, m->url, text);
    }
    free(text);
}

/* initialize and notifications/initialized, asking for `version`; fills
 * s's version and session.  1 when the server refused in a way that lets
 * the caller try another transport. */
static int initialize(mcp *m, const job *j, snap *s, const char *version, sl_err *err)
{
    sl_value *params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", version,
                                 "capabilities", "clientInfo", "name", m->client_name, "version",
                                 CLIENT_VERSION);
    job ij = *j;
    ij.what = "initialize";
    s->version = version;
    outcome o;
    if (exchange(m, &ij, s, "initialize", NULL, params, NULL, NULL, &o, err)) {
        outcome_release(&o);  /* a session id the failed answer carried */
        return -1;
    }
    int rc = 0;
    bool refused = s->era == ERA_LEGACY && (o.status == 400 || o.status == 404 || o.status == 405);
    if (o.kind == GOT_HTTP) {
        rc = refused ? 1 : -1;  /* err says what the status was */
    } else if (o.kind == GOT_RPC) {
        sl_mcp_error(o.error, m->where, "initialize", err);
        rc = refused ? 1 : -1;
    } else if (o.kind == GOT_OK) {
        const char *v = json_string_value(json_object_get(o.result, "protocolVersion"));
        const char *known = sl_mcp_version_known(v);
        if (!known || known == sl_mcp_versions[0]) {
            char shown[64];
            sl_excerpt(v ? v : "none", shown, sizeof shown);
            rc = sl_err_set(err, SL_EUNSUPPORTED,
                            "MCP server %s: it answered initialize with protocol version '%s', "
                            "which sluice does not speak after an initialize (it speaks %s to "
                            "2024-11-05); upgrade the server",
                            m->where, shown, sl_mcp_versions[1]);
        } else {
            s->version = known;
            free(s->session);
            s->session = o.session;
            o.session = NULL;
        }
    } else {
        rc = -1;
    }
    outcome_release(&o);
    if (!rc)
        notify(m, s, "notifications/initialized");
    return rc;
}

/* The modern probe: server/discover.  0 when the server speaks
 * 2026-07-28 (s is set), 1 when it does not (*legacy: a version its
 * UnsupportedProtocolVersion error offered, or NULL), -1 with err when it
 * cannot be reached at all. */
static int discover(mcp *m, const job *j, snap *s, double until, const char **legacy, sl_err *err)
{
    *legacy = NULL;
    s->version = sl_mcp_versions[0];
    job dj = *j;
    dj.what = "server/discover";
    outcome o;
    long long id = atomic_fetch_add(&m->next_id, 1);
    int rc;
    if (s->era == ERA_STDIO)
        rc = stdio_exchange(m, &dj, s, id, "server/discover", NULL, until, &o, err);
    else
        rc = http_exchange(m, &dj, s, id, "server/discover", NULL, NULL, NULL, NULL, &o, err);
    if (rc) {
        bool older = s->era == ERA_STDIO && o.kind == GOT_HTTP;  /* no answer: an older server */
        outcome_release(&o);
        if (older) {
            sl_err_clear(err);
            return 1;
        }
        return -1;
    }
    rc = 1;
    if (o.kind == GOT_OK) {
        const char *v = sl_mcp_pick_version(json_object_get(o.result, "supportedVersions"));
        if (v == sl_mcp_versions[0])
            rc = 0;
        else
            *legacy = v;
    } else if (o.kind == GOT_RPC) {
        const char *pick = NULL;
        if (sl_mcp_error_is_modern(o.error, &pick)) {
            if (pick == sl_mcp_versions[0]) {
                rc = 0;
            } else if (pick) {
                *legacy = pick;
            } else {
                rc = sl_mcp_error(o.error, m->where, "server/discover", err);
            }
        }
    } else if (o.kind == GOT_HTTP && s->era != ERA_STDIO && o.status != 400 && o.status != 404 &&
               o.status != 405) {
        rc = -1;  /* 401, 403, 5xx: err says it; no older transport will do better */
    }
    if (rc == 1 && err)
        sl_err_clear(err);
    outcome_release(&o);
    return rc;
}

static int negotiate_http(mcp *m, const job *j, snap *s, sse_link **link, sl_err *err)
{
    bool sse_first = m->want == WANT_SSE || (m->want == WANT_AUTO && m->ends_sse);
    bool sse_after = m->want == WANT_AUTO && !m->ends_mcp && !m->ends_sse;
    if (!sse_first) {
        s->era = ERA_MODERN;
        const char *legacy = NULL;
        int rc = discover(m, j, s, j->deadline, &legacy, err);
        if (rc <= 0)
            return rc;
        s->era = ERA_LEGACY;
        rc = initialize(m, j, s, legacy ? legacy : sl_mcp_versions[1], err);
        if (rc <= 0 || !sse_after)
            return rc ? -1 : 0;
        sl_err_clear(err);
    }
    sse_link *l = NULL;
    if (sse_open(m, j, &l, err))
        return -1;
    free(s->session);
    memset(s, 0, sizeof *s);
    s->era = ERA_SSE;
    s->sse = l;
    int rc = initialize(m, j, s, "2024-11-05", err);
    if (rc) {
        atomic_store(&l->stop, true);
        pthread_mutex_lock(&m->mu);
        link_unref(l);
        pthread_mutex_unlock(&m->mu);
        s->sse = NULL;
        return -1;
    }
    *link = l;
    return 0;
}

/* Starts the server in sb and finds out what it speaks: server/discover
 * (2026-07-28), else initialize. */
static int negotiate_stdio(mcp *m, const job *j, sl_sandbox *sb, stdio_link **out, sl_err *err)
{
    stdio_link *io = NULL;
    if (stdio_open(m, sb, &io, err))
        return -1;
    snap s = {.era = ERA_STDIO, .io = io};
    const char *legacy = NULL;
    double until = now_s() + m->connect_s;
    if (until > j->deadline)
        until = j->deadline;
    int rc = discover(m, j, &s, until, &legacy, err);
    if (rc == 1)
        rc = initialize(m, j, &s, legacy ? legacy : sl_mcp_versions[1], err) ? -1 : 0;
    free(s.session);
    if (rc) {
        stdio_close(io);
        return -1;
    }
    io->version = s.version;
    *out = io;
    return 0;
}

/* The server process of the caller's sandbox, started (and negotiated
 * with) when there is none or it died; fills s. */
static int connect_stdio(mcp *m, const job *j, snap *s, sl_err *err)
{
    if (!j->ctx || !j->ctx->sandbox)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "MCP server %s: a stdio server runs inside the run's sandbox, and this "
                          "caller has none; configure a sandbox or use the server over HTTP",
                          m->where);
    sl_sandbox *sb = j->ctx->sandbox(j->ctx->ud, err);
    if (!sb)
        return sl_err_prefix(err, "MCP server %s: no sandbox to run it in", m->where);
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&m->mu);
    for (;;) {
        stdio_link *found = NULL;
        for (stdio_link *l = m->links, *next; l; l = next) {
            next = l->next;
            bool alive = !atomic_load(&l->dead) && sl_sandbox_proc_running(l->proc, NULL);
            if (!alive)
                io_drop(m, l);  /* its sandbox ended, or it died */
            else if (l->sb == sb && l->sb_serial == sl_sandbox_serial(sb))
                found = l;  /* the same sandbox, not a new one at the old address */
        }
        if (found) {
            found->refs++;
            s->era = ERA_STDIO;
            s->version = found->version;
            s->io = found;
            s->gen = m->gen;
            pthread_mutex_unlock(&m->mu);
            return 0;
        }
        if (!m->connecting)
            break;
        if (job_check(j, err)) {
            pthread_mutex_unlock(&m->mu);
            return -1;
        }
        timed_wait(m);
    }
    m->connecting = true;
    pthread_mutex_unlock(&m->mu);
    stdio_link *io = NULL;
    int rc = negotiate_stdio(m, j, sb, &io, err);
    pthread_mutex_lock(&m->mu);
    if (!rc) {
        io->next = m->links;
        m->links = io;  /* the list's reference */
        io->refs++;     /* the caller's */
        m->era = ERA_STDIO;
        m->version = io->version;
        m->gen++;
        s->era = ERA_STDIO;
        s->version = io->version;
        s->io = io;
        s->gen = m->gen;
    }
    m->connecting = false;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Makes sure the toolset knows what the server speaks, negotiating when
 * it does not; fills s (the caller drops it with snap_drop). */
static int connect_(mcp *m, const job *j, snap *s, sl_err *err)
{
    if (m->argv)
        return connect_stdio(m, j, s, err);
    pthread_mutex_lock(&m->mu);
    for (;;) {
        if (m->era != ERA_NONE && !m->connecting) {
            snap_take(m, s);
            pthread_mutex_unlock(&m->mu);
            return 0;
        }
        if (!m->connecting)
            break;
        if (job_check(j, err)) {
            pthread_mutex_unlock(&m->mu);
            return -1;
        }
        timed_wait(m);
    }
    m->connecting = true;
    pthread_mutex_unlock(&m->mu);

    snap n;
    memset(&n, 0, sizeof n);
    sse_link *link = NULL;
    int rc = negotiate_http(m, j, &n, &link, err);

    pthread_mutex_lock(&m->mu);
    if (!rc) {
        m->era = n.era;
        m->version = n.version;
        free(m->session);
        m->session = n.session;
        n.session = NULL;
        m->sse = link;  /* the reference sse_open gave */
        m->gen++;
    }
    m->connecting = false;
    pthread_cond_broadcast(&m->cv);
    if (!rc)
        snap_take(m, s);
    pthread_mutex_unlock(&m->mu);
    free(n.session);
    return rc;
}

/* One request and its result (new reference), negotiating first and
 * once more when the server lost the session or changed its version. */
static int rpc(mcp *m, const job *j, const char *method, const char *name, sl_value *params,
               const sl_value *hparams, const sl_value *args, sl_value **result, sl_err *err)
{
    *result = NULL;
    for (int attempt = 0;; attempt++) {
        snap s;
        if (connect_(m, j, &s, err)) {
            json_decref(params);
            return -1;
        }
        outcome o;
        int rc = exchange(m, j, &s, method, name, json_incref(params), hparams, args, &o, err);
        bool lost = o.kind == GOT_LOST || (s.era == ERA_LEGACY && s.session && o.status == 404) ||
                    (s.era == ERA_MODERN && o.kind == GOT_RPC &&
                     json_integer_value(json_object_get(o.error, "code")) == -32022);
        if (lost)
            forget(m, &s);  /* the next request starts afresh */
        snap_drop(m, &s);
        if (lost && attempt == 0 && !job_check(j, NULL)) {
            sl_log(SL_LOG_INFO, "MCP server %s: the %s was lost; starting again", m->where,
                   m->argv ? "server process" : "session");
            outcome_release(&o);
            sl_err_clear(err);
            continue;
        }
        json_decref(params);
        if (rc) {
            outcome_release(&o);
            return -1;
        }
        if (o.kind == GOT_RPC) {
            sl_mcp_error(o.error, m->where, j->what, err);
            outcome_release(&o);
            return -1;
        }
        if (o.kind != GOT_OK) {
            outcome_release(&o);
            return -1;  /* err was set with the HTTP status */
        }
        *result = o.result;
        o.result = NULL;
        outcome_release(&o);
        return 0;
    }
}

/* ---- the toolset ---- */

static void job_init(job *j, mcp *m, const sl_tool_ctx *ctx, const char *what)
{
    j->m = m;
    j->ctx = ctx;
    j->timeout_s = sl_tool_timeout(ctx);
    j->deadline = now_s() + j->timeout_s;
    j->what = what;
}

/* tools/list, every page; refreshes the tool table. */
static int list_tools(mcp *m, const job *j, sl_value **out, sl_err *err)
{
    sl_value *tools = json_array();
    char *cursors[SL_MCP_MAX_PAGES];
    size_t pages = 0, skipped = 0;
    const char *next = NULL;
    int rc = 0;
    for (;;) {
        sl_value *params = next ? json_pack("{s:s}", "cursor", next) : NULL;
        sl_value *result = NULL;
        if (rpc(m, j, "tools/list", NULL, params, NULL, NULL, &result, err)) {
            rc = -1;
            break;
        }
        const char *cur = NULL;
        if (sl_mcp_tools_page(result, tools, SL_MCP_MAX_TOOLS, &cur, &skipped, err)) {
            json_decref(result);
            rc = sl_err_prefix(err, "MCP server %s", m->where);
            break;
        }
        bool again = false;
        for (size_t i = 0; cur && i < pages; i++)
            again = again || !strcmp(cursors[i], cur);
        if (cur && again) {
            json_decref(result);
            rc = sl_err_set(err, SL_EIO,
                            "MCP server %s: its tools/list pages come round in a loop (a "
                            "nextCursor came back); the server is broken",
                            m->where);
            break;
        }
        if (cur && pages + 1 >= SL_MCP_MAX_PAGES) {
            json_decref(result);
            rc = sl_err_limit(err, SL_ELIMIT, NULL,
                              "MCP server %s: its tools/list has more than %d pages, more than "
                              "sluice reads",
                              m->where, SL_MCP_MAX_PAGES);
            break;
        }
        cursors[pages++] = cur ? sl_xstrdup(cur) : NULL;
        json_decref(result);
        if (!cur)
            break;
        next = cursors[pages - 1];
    }
    for (size_t i = 0; i < pages; i++)
        free(cursors[i]);
    if (rc) {
        json_decref(tools);
        return -1;
    }
    if (skipped)
        sl_log(SL_LOG_WARN, "MCP server %s: %zu tool(s) of its list were left out: a name, "
               "schema or description sluice cannot use",
               m->where, skipped);
    /* the table: output schemas, and the headers 2026-07-28 HTTP mirrors */
    pthread_mutex_lock(&m->mu);
    bool modern_http = m->era == ERA_MODERN;
    pthread_mutex_unlock(&m->mu);
    sl_value *table = json_object();
    for (size_t i = 0; i < json_array_size(tools);) {
        sl_value *t = json_array_get(tools, i);
        char why[200] = "";
        sl_value *params = sl_mcp_param_headers(json_object_get(t, "inputSchema"), why, sizeof why);
        if (!params && modern_http) {
            char shown[SL_MCP_MAX_NAME + 8];
            sl_excerpt(json_string_value(json_object_get(t, "name")), shown, sizeof shown);
            sl_log(SL_LOG_WARN, "MCP server %s: tool '%s' left out: %s", m->where, shown, why);
            json_array_remove(tools, i);
            continue;
        }
        json_object_set_new(table, json_string_value(json_object_get(t, "name")),
                            json_pack("{s:b, s:o}", "output",
                                      json_object_get(t, "outputSchema") != NULL, "params",
                                      params ? params : json_array()));
        i++;
    }
    pthread_mutex_lock(&m->mu);
    json_decref(m->tools);
    m->tools = table;
    pthread_mutex_unlock(&m->mu);
    if (out)
        *out = tools;
    else
        json_decref(tools);
    return 0;
}

static int mcp_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    mcp *m = (mcp *)t;
    job j;
    job_init(&j, m, ctx, "tools/list");
    return list_tools(m, &j, out, err);
}

/* The table entry of a tool (new reference), listing when needed. */
static sl_value *tool_info(mcp *m, const job *j, const char *name, sl_err *err)
{
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&m->mu);
        bool have = m->tools != NULL;
        sl_value *info = json_incref(json_object_get(m->tools, name));
        pthread_mutex_unlock(&m->mu);
        if (info)
            return info;
        if (have && pass) {
            char shown[SL_MCP_MAX_NAME + 8];
            sl_excerpt(name, shown, sizeof shown);
            sl_buf names;
            sl_buf_init(&names, 600);
            pthread_mutex_lock(&m->mu);
            const char *k;
            sl_value *v;
            json_object_foreach(m->tools, k, v) {
                if (names.len)
                    sl_buf_adds(&names, ", ");
                if (sl_buf_adds(&names, k))
                    break;
            }
            pthread_mutex_unlock(&m->mu);
            char list[600];
            sl_excerpt(names.len ? names.data : "none", list, sizeof list);
            sl_buf_release(&names);
            sl_err_set(err, SL_ENOTFOUND,
                       "MCP server %s has no tool '%s' (its tools: %s); check the tool name",
                       m->where, shown, list);
            return NULL;
        }
        job lj = *j;
        lj.what = "tools/list";
        if (list_tools(m, &lj, NULL, err))
            return NULL;
    }
    return NULL;
}

static int mcp_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name, const sl_value *args,
                    sl_tool_result *res, sl_err *err)
{
    mcp *m = (mcp *)t;
    char shown[SL_MCP_MAX_NAME + 8];
    sl_excerpt(name, shown, sizeof shown);
    char what[SL_MCP_MAX_NAME + 40];
    snprintf(what, sizeof what, "tools/call '%s'", shown);
    job j;
    job_init(&j, m, ctx, what);
    sl_value *info = tool_info(m, &j, name, err);
    if (!info)
        return -1;
    sl_value *clean = sl_mcp_clean_args(args);
    sl_value *params = json_pack("{s:s, s:O}", "name", name, "arguments", clean);
    sl_value *result = NULL;
    int rc = rpc(m, &j, "tools/call", name, params, json_object_get(info, "params"), clean,
                 &result, err);
    if (!rc && sl_mcp_result_map(result, json_is_true(json_object_get(info, "output")), ctx, res,
                                 err))
        rc = sl_err_prefix(err, "MCP server %s: %s", m->where, what);
    json_decref(result);
    json_decref(clean);
    json_decref(info);
    return rc;
}

static const char *mcp_where(sl_toolset *t)
{
    return ((mcp *)t)->where;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void mcp_free(sl_toolset *t)
{
    mcp *m = (mcp *)t;
    pthread_mutex_lock(&m->mu);
    if (m->sse) {
        atomic_store(&m->sse->stop, true);
        link_unref(m->sse);
        m->sse = NULL;
    }
    while (m->sse_threads)
        pthread_cond_wait(&m->cv, &m->mu);
    while (m->links)
        io_drop(m, m->links);
    bool bye = m->era == ERA_LEGACY && m->session;
    snap s;
    snap_take(m, &s);
    pthread_mutex_unlock(&m->mu);
    if (bye) {
        /* end the session, as 2025 servers ask */
        sl_http *h = take(m, NULL);
        if (h) {
            sl_http_url(h, m->url);
            sl_http_method(h, "DELETE", NULL, 0, false);
            headers_for(m, h, &s, NULL, NULL, NULL, NULL);
            set_opts(m, h, now_s() + NOTIFY_S);
            sl_http_opts_of(h)->max_body = 64u << 10;
            sl_http_perform(h);
            sl_http_free(h);
        }
    }
    free(s.session);
    for (size_t i = 0; i < m->n_pool; i++)
        sl_http_free(m->pool[i]);
    json_decref(m->tools);
    free(m->session);
    /* the header lines and the URL were never registered (their secret
     * parts were, in m->secrets): wiped and freed, no registration dropped */
    for (size_t i = 0; i < m->n_headers; i++)
        wipe_free(m->headers[i]);
    free(m->headers);
    for (size_t i = 0; i < m->n_secrets; i++)
        sl_secret_free(m->secrets[i]);
    free(m->secrets);
    free_strv(m->argv);
    free_strv(m->env);
    wipe_free(m->url);
    free(m->where);
    free(m->client_name);
    free(m->meta);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m);
}

static const sl_toolset_ops mcp_ops = {
    .kind = "mcp",
    .list = mcp_list,
    .call = mcp_call,
    .where = mcp_where,
    .free = mcp_free,
};

static char **copy_strv(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    char **c = sl_xcalloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = sl_xstrdup(v[i]);
    return c;
}

static void add_secret(mcp *m, const char *s, size_t n)
{
    if (m->untrusted)
        return;  /* a DSL's URL: its words are data, never masks for every run */
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n < SL_SECRET_MIN)
        return;
    m->secrets = sl_xrealloc(m->secrets, (m->n_secrets + 1) * sizeof *m->secrets);
    char *c = sl_xstrndup(s, n);
    sl_secret_add(c);
    m->secrets[m->n_secrets++] = c;
}

static bool path_ends(const char *path, size_t n, const char *tail)
{
    while (n && path[n - 1] == '/')
        n--;
    size_t t = strlen(tail);
    return n >= t && !strncasecmp(path + n - t, tail, t);
}

sl_toolset *sl_mcp_new(const sl_mcp_opts *o, sl_err *err)
{
    bool has_url = o->url && *o->url, has_cmd = o->command && o->command[0];
    if (has_url == has_cmd) {
        sl_err_set(err, SL_EINVAL,
                   "an MCP server needs either a url or a command (stdio), not %s",
                   has_url ? "both" : "neither");
        return NULL;
    }
    int want = WANT_AUTO;
    const char *tr = o->transport;
    if (tr && *tr && strcmp(tr, "auto")) {
        if (!strcmp(tr, "streamable") || !strcmp(tr, "streamable_http") || !strcmp(tr, "http"))
            want = WANT_STREAMABLE;
        else if (!strcmp(tr, "sse"))
            want = WANT_SSE;
        else {
            char shown[64];
            sl_excerpt(tr, shown, sizeof shown);
            sl_err_set(err, SL_EINVAL,
                       "unknown MCP transport '%s'; use auto, streamable or sse", shown);
            return NULL;
        }
    }
    for (size_t i = 0; o->headers && o->headers[i]; i++) {
        const char *h = o->headers[i];
        const char *colon = strchr(h, ':');
        bool ok = colon && colon > h && !strpbrk(h, "\r\n");
        for (const char *p = h; ok && p < colon; p++)
            ok = p[0] > 0x20 && p[0] < 0x7f;
        if (!ok) {
            /* the line may hold a credential: say which one, not what it says */
            sl_err_set(err, SL_EINVAL,
                       "MCP server header %zu is not a 'Name: value' line on one line", i + 1);
            return NULL;
        }
    }
    mcp *m = sl_xcalloc(1, sizeof *m);
    m->base.ops = &mcp_ops;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    atomic_init(&m->next_id, 1);
    m->want = want;
    m->untrusted = o->untrusted;
    m->allow_private = o->allow_private;
    m->connect_s = o->connect_s > 0 ? o->connect_s : 10;
    m->client_name = sl_xstrdup(o->client_name && *o->client_name ? o->client_name : "sluice");
    m->meta = meta_text(m->client_name);
    for (size_t i = 0; o->headers && o->headers[i]; i++) {
        m->headers = sl_xrealloc(m->headers, (m->n_headers + 1) * sizeof *m->headers);
        m->headers[m->n_headers++] = sl_xstrdup(o->headers[i]);
        const char *v = strchr(o->headers[i], ':') + 1;
        add_secret(m, v, strlen(v));
        const char *sp = strrchr(v, ' ');  /* "Bearer TOKEN": the token alone too */
        if (sp && sp[1])
            add_secret(m, sp + 1, strlen(sp + 1));
    }
    if (has_cmd) {
        m->argv = copy_strv(o->command);
        m->env = copy_strv(o->env);
        char shown[200];
        sl_excerpt(m->argv[0], shown, sizeof shown);
        m->where = sl_xasprintf("'%s' (stdio)", shown);
        return &m->base;
    }
    sl_url_parts p;
    if (sl_url_split(o->url, &p, err)) {
        sl_err_prefix(err, "the MCP server's URL is not usable");
        mcp_free(&m->base);
        return NULL;
    }
    if (!((p.scheme_n == 4 && !strncasecmp(p.scheme, "http", 4)) ||
          (p.scheme_n == 5 && !strncasecmp(p.scheme, "https", 5)))) {
        sl_err_set(err, SL_EINVAL, "an MCP server's URL must start with http:// or https://");
        mcp_free(&m->base);
        return NULL;
    }
    m->url = sl_xstrdup(o->url);
    /* what may be shown: no user, password, query or fragment */
    const char *host = p.netloc;
    size_t hn = p.netloc_n;
    const char *at = memrchr(p.netloc, '@', p.netloc_n);
    if (at) {
        add_secret(m, p.netloc, (size_t)(at - p.netloc));
        const char *colon = memchr(p.netloc, ':', (size_t)(at - p.netloc));
        if (colon)
            add_secret(m, colon + 1, (size_t)(at - colon - 1));
        hn -= (size_t)(at + 1 - host);
        host = at + 1;
    }
    if (p.has_query && p.query_n)
        add_secret(m, p.query, p.query_n);
    m->where = sl_xasprintf("%.*s://%.*s%.*s", (int)p.scheme_n, p.scheme, (int)hn, host,
                            (int)p.path_n, p.path);
    m->ends_mcp = path_ends(p.path, p.path_n, "/mcp");
    m->ends_sse = path_ends(p.path, p.path_n, "/sse");
    return &m->base;
}

static mcp *as_mcp(sl_toolset *t)
{
    return t && t->ops == &mcp_ops ? (mcp *)t : NULL;
}

const char *sl_mcp_version(sl_toolset *t)
{
    mcp *m = as_mcp(t);
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->mu);
    const char *v = m->era != ERA_NONE ? m->version : NULL;
    pthread_mutex_unlock(&m->mu);
    return v;
}

const char *sl_mcp_transport(sl_toolset *t)
{
    mcp *m = as_mcp(t);
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->mu);
    int era = m->era;
    pthread_mutex_unlock(&m->mu);
    return era == ERA_MODERN || era == ERA_LEGACY ? "streamable"
           : era == ERA_SSE                       ? "sse"
           : era == ERA_STDIO                     ? "stdio"
                                                  : NULL;
}
