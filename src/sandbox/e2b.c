/*
 * e2b — the E2B sandbox provider (e2b.h).  docs/sandbox-e2b.md has the wire
 * format, its sources, and what was checked only against the stand-in.
 *
 * Life of a sandbox: POST {api_url}/sandboxes makes the VM and answers its
 * id, envd's access token and domain; every later call goes to envd at
 * {envd_url} with the E2b-Sandbox-Id/-Port headers the E2B proxy routes by;
 * DELETE /sandboxes/{id} ends it.  A command is one server-streaming Connect
 * call (process.Process/Start) read in a net/http group, so the same
 * thread can also send stdin (SendInput/CloseStdin) and, on a timeout or a
 * cancel, SendSignal plus a process-group kill while it keeps reading.
 */
#include "core/clock.h"
#include "core/secret.h"
#include "core/size.h"
#include "sandbox/e2b.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "net/http.h"

#include "core/value.h"

#define ENVD_PORT 49983
#define FRAME_MAX ((size_t)4 << 20)    /* one Connect message; envd sends 32 KiB chunks */
#define JSON_MAX ((size_t)16 << 20)    /* a unary or REST answer */
#define ERRBODY_MAX 65536
#define STDIN_CHUNK 262144
#define KILL_GRACE_S 5.0               /* after a kill, how long the stream may take to end */
#define BIND_MAX_FILES 10000

/* ---------------------------------------------------------------- base64 */

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sl_e2b_base64_encode(sl_buf *b, const void *data, size_t len)
{
    const unsigned char *p = data;
    char q[4];
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        q[0] = b64chars[v >> 18 & 63];
        q[1] = b64chars[v >> 12 & 63];
        q[2] = i + 1 < len ? b64chars[v >> 6 & 63] : '=';
        q[3] = i + 2 < len ? b64chars[v & 63] : '=';
        if (sl_buf_add(b, q, 4))
            return -1;
    }
    return 0;
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

long sl_e2b_base64_decode(const char *in, size_t len, char *out)
{
    while (len && in[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64val((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    return (long)o;
}

int sl_e2b_shell_quote(sl_buf *b, const char *arg)
{
    sl_buf_addc(b, '\'');
    for (const char *p = arg; *p; p++) {
        if (*p == '\'')
            sl_buf_adds(b, "'\\''");
        else
            sl_buf_addc(b, *p);
    }
    return sl_buf_addc(b, '\'');
}

/* ---------------------------------------------------------------- the stream parser */

void sl_e2b_stream_init(sl_e2b_stream *s, size_t max_message, sl_e2b_event_fn fn, void *ud)
{
    memset(s, 0, sizeof *s);
    s->max_message = max_message ? max_message : FRAME_MAX;
    s->fn = fn;
    s->ud = ud;
    sl_buf_init(&s->msg, s->max_message + 1);
}

void sl_e2b_stream_release(sl_e2b_stream *s)
{
    sl_buf_release(&s->msg);
    free(s->decoded);
    s->decoded = NULL;
}

static int stream_fail(sl_e2b_stream *s, sl_err *err, const char *fmt, const char *detail)
{
    s->failed = true;
    return sl_err_set(err, SL_EIO, fmt, detail);
}

static int emit(sl_e2b_stream *s, const sl_e2b_event *ev, sl_err *err)
{
    if (s->fn && s->fn(ev, s->ud)) {
        s->failed = true;
        if (err && !err->msg)
            sl_err_set(err, SL_ECANCELED, "envd stream: stopped by the reader");
        return -1;
    }
    return 0;
}

/* proto3 JSON writes 32-bit integers as numbers, but parsers must take the
 * quoted form too; absent means 0. */
static bool json_int_field(const json_t *o, const char *a, const char *b, long long *out)
{
    const json_t *v = json_object_get(o, a);
    if (!v && b)
        v = json_object_get(o, b);
    *out = 0;
    if (!v || json_is_null(v))
        return true;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_string(v)) {
        char *end;
        errno = 0;
        *out = strtoll(json_string_value(v), &end, 10);
        return !errno && end != json_string_value(v) && !*end;
    }
    return false;
}

static const char *json_str_field(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int data_event(sl_e2b_stream *s, const json_t *data, sl_err *err)
{
    static const struct { const char *key; sl_e2b_ev_kind kind; } outs[] = {
        {"stdout", SL_E2B_EV_STDOUT}, {"stderr", SL_E2B_EV_STDERR}, {"pty", SL_E2B_EV_STDOUT}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        const json_t *v = json_object_get(data, outs[i].key);
        if (!v)
            continue;
        if (!json_is_string(v))
            return stream_fail(s, err, "envd stream: data.%s is not a base64 string", outs[i].key);
        size_t n = json_string_length(v);
        size_t need = n / 4 * 3 + 3;
        if (need > s->decoded_cap) {
            free(s->decoded);
            s->decoded = sl_xmalloc(need);
            s->decoded_cap = need;
        }
        long got = sl_e2b_base64_decode(json_string_value(v), n, s->decoded);
        if (got < 0)
            return stream_fail(s, err, "envd stream: data.%s is not valid base64", outs[i].key);
        sl_e2b_event ev = {.kind = outs[i].kind, .data = s->decoded, .len = (size_t)got};
        return emit(s, &ev, err);
    }
    return 0;  /* an output kind this reader does not know */
}

static int message_frame(sl_e2b_stream *s, sl_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(s->msg.data, s->msg.len, JSON_DECODE_ANY, &je);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return stream_fail(s, err, "envd stream: a message is not a JSON object%s",
                           root ? "" : " (bad JSON)");
    }
    int rc = 0;
    const json_t *ev = json_object_get(root, "event");
    if (!json_is_object(ev))
        goto out;  /* an empty or unknown message: nothing to report */
    const json_t *v;
    long long n;
    if ((v = json_object_get(ev, "start"))) {
        if (!json_is_object(v) || !json_int_field(v, "pid", NULL, &n) || n < 0 || n > UINT32_MAX) {
            rc = stream_fail(s, err, "envd stream: bad start event%s", "");
            goto out;
        }
        sl_e2b_event e = {.kind = SL_E2B_EV_START, .pid = (uint32_t)n};
        rc = emit(s, &e, err);
    } else if ((v = json_object_get(ev, "data"))) {
        if (!json_is_object(v)) {
            rc = stream_fail(s, err, "envd stream: bad data event%s", "");
            goto out;
        }
        rc = data_event(s, v, err);
    } else if ((v = json_object_get(ev, "end"))) {
        if (!json_is_object(v) || !json_int_field(v, "exitCode", "exit_code", &n) ||
            n < INT32_MIN || n > INT32_MAX) {
            rc = stream_fail(s, err, "envd stream: bad end event%s", "");
            goto out;
        }
        const json_t *ex = json_object_get(v, "exited");
        const char *status = json_str_field(v, "status");
        sl_e2b_event e = {.kind = SL_E2B_EV_END,
                          .exit_code = (int)n,
                          .exited = json_is_true(ex),
                          .status = status ? status : "",
                          .error = json_str_field(v, "error")};
        rc = emit(s, &e, err);
    } else if (json_object_get(ev, "keepalive")) {
        sl_e2b_event e = {.kind = SL_E2B_EV_KEEPALIVE};
        rc = emit(s, &e, err);
    }
out:
    json_decref(root);
    return rc;
}

static int end_frame(sl_e2b_stream *s, sl_err *err)
{
    s->ended = true;
    sl_e2b_event e = {.kind = SL_E2B_EV_EOS};
    json_t *root = NULL;
    if (s->msg.len) {
        json_error_t je;
        root = json_loadb(s->msg.data, s->msg.len, 0, &je);
        if (!root)
            return stream_fail(s, err, "envd stream: the end-of-stream message is not a JSON object%s", "");
        const json_t *e_obj = json_object_get(root, "error");
        if (json_is_object(e_obj)) {
            e.code = json_str_field(e_obj, "code");
            e.message = json_str_field(e_obj, "message");
            if (!e.code)
                e.code = "unknown";
        }
    }
    int rc = emit(s, &e, err);
    json_decref(root);
    return rc;
}

static int frame_done(sl_e2b_stream *s, sl_err *err)
{
    s->in_frame = false;
    s->head_len = 0;
    int rc = (s->flags & 0x02) ? end_frame(s, err) : message_frame(s, err);
    sl_buf_reset(&s->msg);
    return rc;
}

int sl_e2b_stream_feed(sl_e2b_stream *s, const void *data, size_t len, sl_err *err)
{
    const unsigned char *p = data;
    if (s->failed)
        return sl_err_set(err, SL_EIO, "envd stream: fed after an error");
    while (len) {
        if (s->ended)
            return stream_fail(s, err, "envd stream: data after the end-of-stream frame%s", "");
        if (!s->in_frame) {
            size_t take = 5 - s->head_len < len ? 5 - s->head_len : len;
            memcpy(s->head + s->head_len, p, take);
            s->head_len += take;
            p += take;
            len -= take;
            if (s->head_len < 5)
                break;
            s->flags = s->head[0];
            uint32_t n = (uint32_t)s->head[1] << 24 | (uint32_t)s->head[2] << 16 |
                         (uint32_t)s->head[3] << 8 | s->head[4];
            if (s->flags & 0x01)
                return stream_fail(s, err, "envd stream: a compressed frame arrived, but none was asked for%s", "");
            if (s->flags & ~0x03u) {
                char f[8];
                snprintf(f, sizeof f, "0x%02x", s->flags);
                return stream_fail(s, err, "envd stream: unknown frame flags %s", f);
            }
            if (n > s->max_message) {
                char sz[32];
                snprintf(sz, sizeof sz, "%" PRIu32, n);
                return stream_fail(s, err, "envd stream: a frame of %s bytes is over the cap", sz);
            }
            s->need = n;
            s->in_frame = true;
            sl_buf_reset(&s->msg);
            if (!n && frame_done(s, err))
                return -1;
            continue;
        }
        size_t take = s->need < len ? s->need : len;
        sl_buf_add(&s->msg, p, take);
        s->need -= take;
        p += take;
        len -= take;
        if (!s->need && frame_done(s, err))
            return -1;
    }
    return 0;
}

int sl_e2b_stream_finish(sl_e2b_stream *s, sl_err *err)
{
    if (s->failed)
        return -1;
    if (s->in_frame || s->head_len)
        return stream_fail(s, err, "envd stream: the body ended inside a frame%s", "");
    if (!s->ended)
        return stream_fail(s, err, "envd stream: the body ended without an end-of-stream frame%s", "");
    return 0;
}

/* ---------------------------------------------------------------- the sandbox */

typedef struct run {
    struct run *next;
    atomic_bool kill;        /* sl_sandbox_kill() asked for it */
} run;

typedef struct {
    sl_sandbox base;
    sl_sandbox_opts o;       /* copy; binds and settings cleared */
    char *api_key, *api_url, *domain, *envd_url, *tmpl, *user, *workdir;
    long timeout_s;
    long request_ms;
    char *id;
    char *token;             /* envd access token; NULL when the sandbox is not "secure" */
    char *envd_hdr[5];       /* header lines every envd call sends; set at create */
    int n_envd_hdr;
    pthread_mutex_t lock;
    run *runs;
} e2b_sb;

/* ---- one HTTP transfer ---- */

typedef struct {
    sl_http *h;
    char *url;
    const char *method;
    char *body;
    size_t body_len;
    sl_buf own;              /* the answer, unless `out` points elsewhere */
    sl_buf *out;
    size_t got, max;         /* max 0: the buffer's own cap */
    bool over;
    bool discard;            /* read and drop (a helper stream) */
    sl_buf errbody;          /* the answer when the status is not 2xx */
    sl_e2b_stream *parser;   /* streaming: the body goes here */
    bool parse_failed;
    sl_err perr;
    long status;
    sl_http_result rc;
    int role;                /* exec: what this transfer is for */
} xfer;

static int on_write(const char *p, size_t len, void *ud)
{
    xfer *x = ud;
    long st = sl_http_status(x->h);
    if (st < 200 || st >= 300) {
        size_t room = ERRBODY_MAX > x->errbody.len ? ERRBODY_MAX - x->errbody.len : 0;
        sl_buf_add(&x->errbody, p, len < room ? len : room);
        return 0;
    }
    if (x->discard)
        return 0;
    if (x->parser) {
        if (x->parse_failed)
            return -1;
        if (sl_e2b_stream_feed(x->parser, p, len, &x->perr)) {
            x->parse_failed = true;
            return -1;
        }
        return 0;
    }
    if ((x->max && x->got + len > x->max) || sl_buf_add(x->out, p, len)) {
        x->over = true;
        return -1;
    }
    x->got += len;
    return 0;
}

static void xfer_init(xfer *x, const char *method, char *url, size_t max)
{
    memset(x, 0, sizeof *x);
    /* libcurl is ready: sl_e2b_create() made sure before the first call */
    sl_err e = {0};
    x->h = sl_http_new(&e);
    if (!x->h)
        SL_BUG("sl_http_new failed after sl_http_init succeeded");
    x->method = method;
    x->url = url;
    x->max = max;
    sl_buf_init(&x->own, max ? max + 1 : JSON_MAX);
    sl_buf_init(&x->errbody, ERRBODY_MAX + 1);
    x->out = &x->own;
    sl_http_url(x->h, url);
    sl_http_method(x->h, method, NULL, 0, false);
    sl_http_opts *o = sl_http_opts_of(x->h);
    o->on_body = on_write;
    o->ud = x;
    o->connect_s = 15;
    o->tcp_keepalive = true;
    o->user_agent = "sluice-e2b";
}

static void xfer_timeout(xfer *x, long ms)
{
    sl_http_opts_of(x->h)->timeout_s = (double)ms / 1000;
}

static void xfer_body(xfer *x, char *body, size_t len)
{
    x->body = body;
    x->body_len = len;
    sl_http_method(x->h, x->method, body, len, true);
}

static void xfer_release(xfer *x)
{
    sl_http_free(x->h);
    free(x->url);
    free(x->body);
    sl_buf_release(&x->own);
    sl_buf_release(&x->errbody);
    sl_err_clear(&x->perr);
    memset(x, 0, sizeof *x);
}

static void xfer_header(xfer *x, const char *fmt, const char *value)
{
    char *line = sl_xasprintf(fmt, value);
    sl_http_header(x->h, line);
    free(line);
}

/* The short reason an error answer gives: its JSON "message" (E2B's API,
 * envd's /files and Connect errors all use that key), else its text. */
static void body_reason(const sl_buf *b, char *out, size_t n)
{
    out[0] = 0;
    if (!b->len)
        return;
    json_error_t je;
    json_t *j = json_loadb(b->data, b->len, 0, &je);
    const char *m = j ? json_str_field(j, "message") : NULL;
    const char *src = m ? m : b->data;
    size_t k = 0;
    for (const char *p = src; *p && k + 1 < n && k < 200; p++)
        out[k++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
    out[k] = 0;
    json_decref(j);
}

/* Turns a failed transfer into an sl_err: what was being done, the method
 * and URL (which never hold a secret), the status or libcurl's reason, and
 * what to check. */
static int xfer_fail(const xfer *x, const char *what, bool envd, sl_err *err)
{
    char reason[256];
    if (x->rc != SL_HTTP_OK &&
        !(x->rc == SL_HTTP_CALLBACK && (x->over || x->parse_failed))) {
        const char *hint = envd ? "check envd_url and that the sandbox is still alive"
                                : "check api_url and your network";
        const char *detail = sl_http_detail(x->h);
        if (x->rc == SL_HTTP_TIMEOUT || x->rc == SL_HTTP_CONNECT_TIMEOUT)
            return sl_err_set(err, SL_ETIMEOUT,
                              "e2b: %s: %s %s: no answer in time (%s); raise "
                              "sandbox.e2b.request_timeout_s or %s",
                              what, x->method, x->url, detail[0] ? detail : "timeout", hint);
        return sl_err_set(err, SL_EIO, "e2b: %s: %s %s: %s (%s); %s", what, x->method, x->url,
                          sl_http_strerror(x->h), detail[0] ? detail : "no detail", hint);
    }
    if (x->parse_failed)
        return sl_err_set(err, SL_EIO, "e2b: %s: %s %s: %s", what, x->method, x->url,
                          x->perr.msg ? x->perr.msg : "bad stream");
    body_reason(&x->errbody, reason, sizeof reason);
    const char *sep = reason[0] ? ": " : "";
    long st = x->status;
    if (st == 401 || st == 403)
        return sl_err_set(err, SL_EINVAL, "e2b: %s: %s %s: HTTP %ld%s%s; %s", what, x->method,
                          x->url, st, sep, reason,
                          envd ? "envd refused the sandbox's access token (was the sandbox "
                                 "replaced or killed?)"
                               : "the API key was refused; check sandbox.e2b.api_key or "
                                 "E2B_API_KEY");
    if (st == 404)
        return sl_err_set(err, SL_EIO, "e2b: %s: %s %s: HTTP 404 not found%s%s", what, x->method,
                          x->url, sep, reason);
    if (st == 429)
        return sl_err_set(err, SL_ELIMIT,
                          "e2b: %s: %s %s: HTTP 429 rate limited%s%s; wait and retry, or raise "
                          "your team's concurrency limit",
                          what, x->method, x->url, sep, reason);
    if (st == 507)
        return sl_err_set(err, SL_ELIMIT, "e2b: %s: %s %s: HTTP 507, the sandbox's disk is full%s%s",
                          what, x->method, x->url, sep, reason);
    if (st == 502 && envd)
        return sl_err_set(err, SL_EIO,
                          "e2b: %s: %s %s: HTTP 502%s%s; the sandbox is gone (killed, or its "
                          "timeout_s ran out)",
                          what, x->method, x->url, sep, reason);
    if (st >= 500)
        return sl_err_set(err, SL_EIO, "e2b: %s: %s %s: HTTP %ld, the service failed%s%s; retry later",
                          what, x->method, x->url, st, sep, reason);
    return sl_err_set(err, SL_EIO, "e2b: %s: %s %s: HTTP %ld%s%s", what, x->method, x->url, st, sep,
                      reason);
}

/* Runs one transfer to its end; 0 when the answer was 2xx and complete. */
static int xfer_run(xfer *x, long timeout_ms, const char *what, bool envd, sl_err *err)
{
    if (timeout_ms > 0)
        xfer_timeout(x, timeout_ms);
    x->rc = sl_http_perform(x->h);
    x->status = sl_http_status(x->h);
    if (x->rc == SL_HTTP_OK && x->status >= 200 && x->status < 300)
        return 0;
    if (x->over)
        return sl_err_set(err, SL_ELIMIT, "e2b: %s: the answer is over the limit of %zu bytes", what,
                          x->max ? x->max : x->out->cap);
    return xfer_fail(x, what, envd, err);
}

/* ---- envd requests ---- */

static char *envd_url(const e2b_sb *s, const char *path)
{
    return sl_xasprintf("%s%s", s->envd_url, path);
}

static void envd_headers(const e2b_sb *s, xfer *x, const char *content_type)
{
    for (int i = 0; i < s->n_envd_hdr; i++)
        sl_http_header(x->h, s->envd_hdr[i]);
    if (content_type)
        xfer_header(x, "Content-Type: %s", content_type);
}

/* A unary Connect call with a JSON body (takes `body`); the answer lands
 * in *answer (new reference) when answer is not NULL. */
static int envd_unary(e2b_sb *s, const char *method, char *body, const char *what, json_t **answer,
                      sl_err *err)
{
    char path[96];
    snprintf(path, sizeof path, "/%s", method);
    xfer x;
    xfer_init(&x, "POST", envd_url(s, path), 0);
    envd_headers(s, &x, "application/json");
    xfer_body(&x, body, strlen(body));
    int rc = xfer_run(&x, s->request_ms, what, true, err);
    if (!rc && answer) {
        json_error_t je;
        *answer = json_loadb(x.out->data, x.out->len, 0, &je);
        if (!*answer)
            rc = sl_err_set(err, SL_EIO, "e2b: %s: POST %s: the answer is not JSON (%s)", what, x.url,
                            je.text);
    }
    xfer_release(&x);
    return rc;
}

static char *abs_path(const e2b_sb *s, const char *p)
{
    if (!p || !*p || !strcmp(p, "."))
        return sl_xstrdup(s->workdir);
    if (p[0] == '/')
        return sl_xstrdup(p);
    if (p[0] == '.' && p[1] == '/')
        p += 2;
    return sl_xasprintf("%s/%s", s->workdir, p);
}

static char *files_url(const e2b_sb *s, const char *abs)
{
    char *ep = sl_http_escape(abs);
    char *eu = sl_http_escape(s->user);
    char *u = sl_xasprintf("%s/files?path=%s&username=%s", s->envd_url, ep, eu);
    free(ep);
    free(eu);
    return u;
}

/* ---- exec ---- */

enum { ROLE_STREAM, ROLE_STDIN, ROLE_SIGNAL, ROLE_GROUPKILL };
enum { K_NONE, K_TIMEOUT, K_OUTPUT, K_CANCEL };

typedef struct {
    e2b_sb *s;
    const sl_sandbox_cmd *cmd;
    sl_sandbox_result *res;
    bool started, ended, eos;
    uint32_t pid;
    int exit_code;
    bool exited;
    char status[128];
    char eos_code[64], eos_msg[256];
    size_t bytes[2];
    int killed;
    bool kill_sent;
} exec_state;

static int on_event(const sl_e2b_event *ev, void *ud)
{
    exec_state *e = ud;
    const sl_sandbox_cmd *cmd = e->cmd;
    switch (ev->kind) {
    case SL_E2B_EV_START:
        e->started = true;
        e->pid = ev->pid;
        break;
    case SL_E2B_EV_STDOUT:
    case SL_E2B_EV_STDERR: {
        int k = ev->kind == SL_E2B_EV_STDERR;
        size_t keep = ev->len;
        if (cmd->max_output_bytes && e->bytes[k] + keep > cmd->max_output_bytes) {
            keep = cmd->max_output_bytes - e->bytes[k];
            if (k)
                e->res->err_truncated = true;
            else
                e->res->out_truncated = true;
            if (e->killed == K_NONE) {
                e->killed = K_OUTPUT;
                e->res->hit = SL_SBLIMIT_OUTPUT;
                snprintf(e->res->limit, sizeof e->res->limit, "%s output (%zu bytes)",
                         k ? "stderr" : "stdout", cmd->max_output_bytes);
            }
        }
        e->bytes[k] += keep;
        if (keep) {
            sl_sandbox_out_fn fn = k ? cmd->on_stderr : cmd->on_stdout;
            if (fn)
                fn(ev->data, keep, cmd->ud);
            else
                sl_buf_add(k ? &e->res->err : &e->res->out, ev->data, keep);
        }
        break;
    }
    case SL_E2B_EV_END:
        e->ended = true;
        e->exit_code = ev->exit_code;
        e->exited = ev->exited;
        snprintf(e->status, sizeof e->status, "%s", ev->status);
        break;
    case SL_E2B_EV_EOS:
        e->eos = true;
        if (ev->code) {
            snprintf(e->eos_code, sizeof e->eos_code, "%s", ev->code);
            snprintf(e->eos_msg, sizeof e->eos_msg, "%s", ev->message ? ev->message : "");
        }
        break;
    case SL_E2B_EV_KEEPALIVE:
        break;
    }
    return 0;
}

/* envd reports a signal death as Go's ProcessState.String(): "signal: "
 * and the signal's name from Go's table (syscall.Signal.String()). */
static int signal_from_status(const char *status)
{
    static const char *const names[] = {
        NULL, "hangup", "interrupt", "quit", "illegal instruction", "trace/breakpoint trap",
        "aborted", "bus error", "floating point exception", "killed", "user defined signal 1",
        "segmentation fault", "user defined signal 2", "broken pipe", "alarm clock", "terminated",
        "stack fault", "child exited", "continued", "stopped (signal)", "stopped",
        "stopped (tty input)", "stopped (tty output)", "urgent I/O condition",
        "CPU time limit exceeded", "file size limit exceeded", "virtual timer expired",
        "profiling timer expired", "window changed", "I/O possible", "power failure",
        "bad system call"};
    const char *p = strstr(status, "signal: ");
    if (!p)
        return 0;
    p += 8;
    for (int i = 1; i < (int)(sizeof names / sizeof *names); i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(p, names[i], n) && (p[n] == 0 || p[n] == ' '))
            return i;
    }
    if (!strncmp(p, "signal ", 7))
        return atoi(p + 7);
    return 0;
}

/* The Start request: argv under bash -l -c (as E2B's SDKs run commands),
 * the per-process limits set with ulimit, then exec'ed through setsid so
 * the command leads its own process group and a kill can take the whole
 * group (envd signals only the one pid). */
static char *start_body(const e2b_sb *s, const sl_sandbox_cmd *cmd, const char *cwd, bool stdin_on,
                        sl_err *err)
{
    sl_buf sc;
    sl_buf_init(&sc, 1 << 20);
    if (s->o.cpu_seconds > 0)
        sl_buf_addf(&sc, "ulimit -t %d 2>/dev/null; ", s->o.cpu_seconds);
    if (s->o.max_open_files > 0)
        sl_buf_addf(&sc, "ulimit -n %d 2>/dev/null; ", s->o.max_open_files);
    if (s->o.max_file_bytes) {
        uint64_t blocks = s->o.max_file_bytes / 1024;
        sl_buf_addf(&sc, "ulimit -f %" PRIu64 " 2>/dev/null; ", blocks ? blocks : 1);
    }
    sl_buf argv;
    sl_buf_init(&argv, 1 << 20);
    for (const char *const *a = cmd->argv; *a; a++) {
        if (a != cmd->argv)
            sl_buf_addc(&argv, ' ');
        sl_e2b_shell_quote(&argv, *a);
    }
    sl_buf_addf(&sc,
                "if command -v setsid >/dev/null 2>&1; then exec setsid %s; else exec %s; fi",
                argv.data, argv.data);
    bool big = sc.toobig || argv.toobig;
    sl_buf_release(&argv);
    if (big) {
        sl_buf_release(&sc);
        sl_err_set(err, SL_ELIMIT,
                   "e2b exec: the command line is over 1 MiB; pass large data on stdin or in a file");
        return NULL;
    }
    json_t *envs = json_object();
    for (const char *const *v = cmd->env; v && *v; v++) {
        const char *eq = strchr(*v, '=');
        if (!eq || eq == *v) {
            json_decref(envs);
            sl_buf_release(&sc);
            sl_err_set(err, SL_EINVAL, "e2b exec: environment entry '%s' is not NAME=VALUE", *v);
            return NULL;
        }
        char *k = sl_xstrndup(*v, (size_t)(eq - *v));
        json_object_set_new(envs, k, json_string(eq + 1));
        free(k);
    }
    json_t *body = json_pack("{s:{s:s, s:[s,s,s], s:o, s:s}, s:b}", "process", "cmd", "/bin/bash",
                             "args", "-l", "-c", sc.data, "envs", envs, "cwd", cwd, "stdin",
                             stdin_on);
    sl_buf_release(&sc);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text)
        sl_err_set(err, SL_EINVAL, "e2b exec: the command or its environment is not valid UTF-8");
    return text;
}

/* The Connect streaming request body: one frame, flags 0. */
static char *envelope(const char *json, size_t *len)
{
    size_t n = strlen(json);
    char *b = sl_xmalloc(n + 5);
    b[0] = 0;
    b[1] = (char)(n >> 24 & 0xff);
    b[2] = (char)(n >> 16 & 0xff);
    b[3] = (char)(n >> 8 & 0xff);
    b[4] = (char)(n & 0xff);
    memcpy(b + 5, json, n);
    *len = n + 5;
    return b;
}

static xfer *stream_xfer(e2b_sb *s, const char *json, sl_e2b_stream *parser)
{
    xfer *x = sl_xcalloc(1, sizeof *x);
    xfer_init(x, "POST", envd_url(s, "/process.Process/Start"), 0);
    envd_headers(s, x, "application/connect+json");
    sl_http_header(x->h, "Keepalive-Ping-Interval: 30");
    size_t len;
    char *b = envelope(json, &len);
    xfer_body(x, b, len);
    x->parser = parser;
    x->discard = parser == NULL;
    return x;
}

static xfer *unary_xfer(e2b_sb *s, const char *method, char *body, int role)
{
    char path[96];
    snprintf(path, sizeof path, "/%s", method);
    xfer *x = sl_xcalloc(1, sizeof *x);
    xfer_init(x, "POST", envd_url(s, path), 0);
    envd_headers(s, x, "application/json");
    xfer_body(x, body, strlen(body));
    xfer_timeout(x, s->request_ms);
    x->role = role;
    return x;
}

#define MAX_AUX 6

typedef struct {
    sl_http_group *g;
    xfer *aux[MAX_AUX];
    int n_aux;
    bool stdin_busy;
} pump;

static void pump_add(pump *p, xfer *x)
{
    if (p->n_aux == MAX_AUX) {
        xfer_release(x);
        free(x);
        return;
    }
    p->aux[p->n_aux++] = x;
    sl_http_group_add(p->g, x->h);
    if (x->role == ROLE_STDIN)
        p->stdin_busy = true;
}

static void send_kill(e2b_sb *s, pump *p, uint32_t pid)
{
    char *b = sl_xasprintf("{\"process\":{\"pid\":%" PRIu32 "},\"signal\":\"SIGNAL_SIGKILL\"}", pid);
    pump_add(p, unary_xfer(s, "process.Process/SendSignal", b, ROLE_SIGNAL));
    /* the rest of the command's process group (setsid made it one) */
    char *script = sl_xasprintf("kill -KILL -- -%" PRIu32 " 2>/dev/null; true", pid);
    json_t *j = json_pack("{s:{s:s, s:[s,s]}, s:b}", "process", "cmd", "/bin/bash", "args", "-c",
                          script, "stdin", 0);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    free(script);
    xfer *g = stream_xfer(s, text, NULL);
    g->role = ROLE_GROUPKILL;
    xfer_timeout(g, s->request_ms);
    free(text);
    pump_add(p, g);
}

static char *stdin_body(uint32_t pid, const char *data, size_t len)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_addf(&b, "{\"process\":{\"pid\":%" PRIu32 "},\"input\":{\"stdin\":\"", pid);
    sl_e2b_base64_encode(&b, data, len);
    sl_buf_adds(&b, "\"}}");
    return sl_buf_detach(&b);
}

static int e2b_exec(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_result *res, sl_err *err)
{
    e2b_sb *s = (e2b_sb *)sb;
    if (!cmd->argv || !cmd->argv[0])
        return sl_err_set(err, SL_EINVAL, "e2b exec: no command given");
    /* an empty stdin is /dev/null: envd's stdin=false */
    bool has_stdin = cmd->inherit_stdin || (cmd->stdin_data && cmd->stdin_len);
    char *cwd = abs_path(s, cmd->cwd);
    char *json = start_body(s, cmd, cwd, has_stdin, err);
    free(cwd);
    if (!json)
        return -1;

    exec_state e = {.s = s, .cmd = cmd, .res = res};
    sl_e2b_stream parser;
    sl_e2b_stream_init(&parser, FRAME_MAX, on_event, &e);
    xfer *st = stream_xfer(s, json, &parser);
    free(json);
    pump p = {.g = sl_http_group_new()};
    sl_http_group_add(p.g, st->h);

    run me = {0};
    atomic_init(&me.kill, false);
    pthread_mutex_lock(&s->lock);
    me.next = s->runs;
    s->runs = &me;
    pthread_mutex_unlock(&s->lock);

    size_t in_off = 0;
    bool stdin_closed = !has_stdin;
    bool fd0_eof = false;
    bool stream_done = false;
    double t0 = sl_clock_s(), kill_at = 0, t_end = 0;
    char chunk[65536];
    for (;;) {
        sl_http_group_run(p.g);
        sl_http *done;
        while ((done = sl_http_group_done(p.g))) {
            if (done == st->h) {
                st->rc = sl_http_result_of(st->h);
                st->status = sl_http_status(st->h);
                stream_done = true;
                continue;
            }
            for (int i = 0; i < p.n_aux; i++) {
                if (p.aux[i]->h != done)
                    continue;
                if (p.aux[i]->role == ROLE_STDIN)
                    p.stdin_busy = false;
                xfer_release(p.aux[i]);
                free(p.aux[i]);
                p.aux[i] = p.aux[--p.n_aux];
                break;
            }
        }
        if ((e.ended || stream_done) && !t_end)
            t_end = sl_clock_s();
        /* done: without a kill, pending stdin no longer matters; after one,
         * give the signal and the group kill their moment */
        if (stream_done && (p.n_aux == 0 || !kill_at))
            break;
        if (kill_at && sl_clock_s() > kill_at + KILL_GRACE_S)
            break;  /* envd never ended the stream after the kill */

        /* stdin, one SendInput at a time so the pieces arrive in order */
        if (e.started && !e.ended && !stdin_closed && !p.stdin_busy && !e.killed) {
            if (cmd->stdin_data && !cmd->inherit_stdin) {
                if (in_off < cmd->stdin_len) {
                    size_t n = cmd->stdin_len - in_off;
                    if (n > STDIN_CHUNK)
                        n = STDIN_CHUNK;
                    pump_add(&p, unary_xfer(s, "process.Process/SendInput",
                                            stdin_body(e.pid, cmd->stdin_data + in_off, n),
                                            ROLE_STDIN));
                    in_off += n;
                } else {
                    char *b = sl_xasprintf("{\"process\":{\"pid\":%" PRIu32 "}}", e.pid);
                    pump_add(&p, unary_xfer(s, "process.Process/CloseStdin", b, ROLE_STDIN));
                    stdin_closed = true;
                }
            } else if (fd0_eof) {
                char *b = sl_xasprintf("{\"process\":{\"pid\":%" PRIu32 "}}", e.pid);
                pump_add(&p, unary_xfer(s, "process.Process/CloseStdin", b, ROLE_STDIN));
                stdin_closed = true;
            } else {
                struct pollfd pf = {0, POLLIN, 0};
                if (poll(&pf, 1, 0) > 0) {
                    ssize_t n = read(0, chunk, sizeof chunk);
                    if (n > 0)
                        pump_add(&p, unary_xfer(s, "process.Process/SendInput",
                                                stdin_body(e.pid, chunk, (size_t)n), ROLE_STDIN));
                    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                        fd0_eof = true;
                }
            }
        }

        /* timeout, cancel, output cap, sl_sandbox_kill() */
        if (!e.ended && !stream_done) {
            if (e.killed == K_NONE) {
                if (cmd->timeout_s > 0 && sl_clock_s() - t0 >= cmd->timeout_s)
                    e.killed = K_TIMEOUT;
                else if (cmd->cancelled && cmd->cancelled(cmd->ud))
                    e.killed = K_CANCEL;
            }
            bool want = e.killed != K_NONE || atomic_load(&me.kill);
            if (want && !e.kill_sent) {
                if (!kill_at)
                    kill_at = sl_clock_s();
                if (e.started) {
                    send_kill(s, &p, e.pid);
                    e.kill_sent = true;
                }
            }
        }

        int wait_ms = 50;
        if (cmd->timeout_s > 0 && !e.killed) {
            double left_s = t0 + cmd->timeout_s - sl_clock_s();
            if (left_s * 1000 < wait_ms)
                wait_ms = left_s > 0 ? (int)(left_s * 1000) + 1 : 0;
        }
        bool watch0 = cmd->inherit_stdin && e.started && !stdin_closed && !fd0_eof && !p.stdin_busy;
        sl_http_group_wait(p.g, watch0 ? 0 : -1, wait_ms);
    }

    pthread_mutex_lock(&s->lock);
    for (run **r = &s->runs; *r; r = &(*r)->next)
        if (*r == &me) {
            *r = me.next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < p.n_aux; i++) {
        sl_http_group_remove(p.g, p.aux[i]->h);
        xfer_release(p.aux[i]);
        free(p.aux[i]);
    }
    sl_http_group_remove(p.g, st->h);
    sl_http_group_free(p.g);
    res->seconds = (t_end ? t_end : sl_clock_s()) - t0;

    int rc = 0;
    if (e.killed == K_TIMEOUT) {
        res->kind = SL_EXIT_TIMEOUT;
    } else if (e.killed == K_CANCEL) {
        res->kind = SL_EXIT_CANCELED;
    } else if (e.killed == K_OUTPUT) {
        res->kind = SL_EXIT_LIMIT;
        res->sig = SIGKILL;
    } else if (e.ended) {
        if (e.exited) {
            res->kind = SL_EXIT_EXITED;
            res->code = e.exit_code;
        } else {
            int sig = signal_from_status(e.status);
            res->sig = sig ? sig : SIGKILL;
            char size[32];
            if (sig == SIGXCPU) {
                res->kind = SL_EXIT_LIMIT;
                res->hit = SL_SBLIMIT_CPU;
                snprintf(res->limit, sizeof res->limit, "CPU time (%d s)", s->o.cpu_seconds);
            } else if (sig == SIGXFSZ) {
                sl_size_text(s->o.max_file_bytes, size, sizeof size);
                res->kind = SL_EXIT_LIMIT;
                res->hit = SL_SBLIMIT_FILE_SIZE;
                snprintf(res->limit, sizeof res->limit, "file size (%s)", size);
            } else {
                res->kind = SL_EXIT_SIGNALED;
            }
        }
    } else if (atomic_load(&me.kill) && e.started) {
        res->kind = SL_EXIT_SIGNALED;
        res->sig = SIGKILL;
    } else {
        if (e.eos_code[0])
            rc = sl_err_set(err, SL_EIO, "e2b exec: envd %s the command: %s: %s",
                            e.started ? "ended" : "refused to start", e.eos_code, e.eos_msg);
        else if (st->rc == SL_HTTP_OK && st->status >= 200 && st->status < 300)
            rc = sl_err_set(err, SL_EIO,
                            "e2b exec: POST %s: the stream ended without an end event; the "
                            "sandbox may have been killed or timed out",
                            st->url);
        else
            rc = xfer_fail(st, "running a command", true, err);
    }
    xfer_release(st);
    free(st);
    sl_e2b_stream_release(&parser);
    return rc;
}

static void e2b_kill(sl_sandbox *sb)
{
    e2b_sb *s = (e2b_sb *)sb;
    pthread_mutex_lock(&s->lock);
    for (run *r = s->runs; r; r = r->next)
        atomic_store(&r->kill, true);
    pthread_mutex_unlock(&s->lock);
}

/* ---- files ---- */

static int upload_abs(e2b_sb *s, const char *abs, const void *data, size_t len, sl_err *err)
{
    xfer x;
    xfer_init(&x, "POST", files_url(s, abs), 0);
    envd_headers(s, &x, NULL);
    const char *slash = strrchr(abs, '/');
    sl_http_form_add(x.h, "file", slash && slash[1] ? slash + 1 : "file",
                     "application/octet-stream", data, len);
    sl_http_method(x.h, "POST", NULL, 0, true);
    char what[300];
    snprintf(what, sizeof what, "uploading %.250s", abs);
    int rc = xfer_run(&x, s->request_ms, what, true, err);
    xfer_release(&x);
    return rc;
}

static int e2b_upload(sl_sandbox *sb, const char *path, const void *data, size_t len, sl_err *err)
{
    e2b_sb *s = (e2b_sb *)sb;
    if (!path || !*path)
        return sl_err_set(err, SL_EINVAL, "e2b upload: no path given");
    char *abs = abs_path(s, path);
    int rc = upload_abs(s, abs, data, len, err);
    free(abs);
    return rc;
}

static int e2b_download(sl_sandbox *sb, const char *path, size_t max, sl_buf *out, sl_err *err)
{
    e2b_sb *s = (e2b_sb *)sb;
    if (!path || !*path)
        return sl_err_set(err, SL_EINVAL, "e2b download: no path given");
    char *abs = abs_path(s, path);
    xfer x;
    xfer_init(&x, "GET", files_url(s, abs), max);
    x.out = out;
    envd_headers(s, &x, NULL);
    char what[300];
    snprintf(what, sizeof what, "downloading %.250s", abs);
    int rc = xfer_run(&x, s->request_ms, what, true, err);
    if (rc && x.over && max)
        rc = sl_err_set(err, SL_ELIMIT, "e2b: %s is over the limit of %zu bytes", abs, max);
    free(abs);
    xfer_release(&x);
    return rc;
}

static int e2b_list(sl_sandbox *sb, const char *dir, size_t limit, sl_value **out, sl_err *err)
{
    e2b_sb *s = (e2b_sb *)sb;
    char *abs = abs_path(s, dir);
    json_t *req = json_pack("{s:s, s:i}", "path", abs, "depth", 1);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char what[300];
    snprintf(what, sizeof what, "listing %.250s", abs);
    free(abs);
    json_t *ans = NULL;
    if (envd_unary(s, "filesystem.Filesystem/ListDir", body, what, &ans, err))
        return -1;
    json_t *entries = json_object_get(ans, "entries");
    size_t n = json_is_array(entries) ? json_array_size(entries) : 0;
    json_t **items = sl_xcalloc(n ? n : 1, sizeof *items);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *en = json_array_get(entries, i);
        const char *name = json_str_field(en, "name");
        if (!name || !*name)
            continue;
        const char *type = json_str_field(en, "type");
        const char *perm = json_str_field(en, "permissions");
        const char *t = "other";
        if (json_str_field(en, "symlinkTarget") || (perm && perm[0] == 'L'))
            t = "link";
        else if (type && !strcmp(type, "FILE_TYPE_FILE"))
            t = "file";
        else if (type && !strcmp(type, "FILE_TYPE_DIRECTORY"))
            t = "dir";
        long long size = 0;
        if (!json_int_field(en, "size", NULL, &size) || size < 0)
            size = 0;
        items[k++] = json_pack("{s:s, s:s, s:I}", "name", name, "type", t, "size",
                               (json_int_t)size);
    }
    json_decref(ans);
    *out = sl_sandbox_list_done(items, k, limit);
    return 0;
}

/* ---- create and destroy ---- */

static void api_delete(e2b_sb *s)
{
    char *eid = sl_http_escape(s->id);
    xfer x;
    xfer_init(&x, "DELETE", sl_xasprintf("%s/sandboxes/%s", s->api_url, eid), 0);
    free(eid);
    xfer_header(&x, "X-API-Key: %s", s->api_key);
    sl_err ignore = {0};
    xfer_run(&x, s->request_ms, "killing the sandbox", false, &ignore);
    sl_err_clear(&ignore);
    xfer_release(&x);
}

static void free_sb(e2b_sb *s)
{
    for (int i = 0; i < s->n_envd_hdr; i++)
        free(s->envd_hdr[i]);
    sl_secret_free(s->api_key);
    free(s->api_url);
    free(s->domain);
    free(s->envd_url);
    free(s->tmpl);
    free(s->user);
    free(s->workdir);
    free(s->id);
    free(s->token);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void e2b_destroy(sl_sandbox *sb)
{
    e2b_sb *s = (e2b_sb *)sb;
    e2b_kill(sb);
    if (s->id)
        api_delete(s);
    free_sb(s);
}

static const sl_sandbox_ops e2b_ops = {
    .name = "e2b",
    .exec = e2b_exec,
    .kill = e2b_kill,
    .upload = e2b_upload,
    .download = e2b_download,
    .list = e2b_list,
    .destroy = e2b_destroy,
};

static const char *const known_keys[] = {"api_key",   "api_url", "domain",    "envd_url",
                                         "template",  "timeout_s", "user",    "workdir",
                                         "request_timeout_s", NULL};

static int get_string(const json_t *set, const char *key, const char *def, char **out, sl_err *err)
{
    const json_t *v = set ? json_object_get(set, key) : NULL;
    if (!v) {
        *out = def ? sl_xstrdup(def) : NULL;
        return 0;
    }
    if (!json_is_string(v) || !json_string_length(v))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.e2b.%s must be a non-empty string", key);
    *out = sl_xstrdup(json_string_value(v));
    return 0;
}

static int get_number(const json_t *set, const char *key, double def, double *out, sl_err *err)
{
    const json_t *v = set ? json_object_get(set, key) : NULL;
    *out = def;
    if (!v)
        return 0;
    if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 86400 * 31)
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.e2b.%s must be a positive number of seconds (got %s)", key,
                          json_is_number(v) ? "a number out of range" : "a non-number");
    *out = json_number_value(v);
    return 0;
}

static void strip_slash(char *u)
{
    size_t n = strlen(u);
    while (n > 1 && u[n - 1] == '/')
        u[--n] = 0;
}

static int check_url(const char *key, const char *u, sl_err *err)
{
    if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8))
        return sl_err_set(err, SL_EINVAL,
                          "sandbox.e2b.%s must be an http:// or https:// URL (got '%s')", key, u);
    return 0;
}

static int read_settings(e2b_sb *s, const json_t *set, sl_err *err)
{
    if (set && !json_is_object(set))
        return sl_err_set(err, SL_EINVAL, "sandbox.e2b: the settings must be a mapping of key: value");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)set, key, v) {
        bool ok = false;
        for (const char *const *k = known_keys; *k; k++)
            ok = ok || !strcmp(*k, key);
        if (!ok)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.e2b: unknown setting '%s' (known: api_key, api_url, domain, "
                              "envd_url, template, timeout_s, user, workdir, request_timeout_s)",
                              key);
    }
    double timeout, req;
    if (get_string(set, "api_key", NULL, &s->api_key, err) ||
        get_string(set, "api_url", "https://api.e2b.app", &s->api_url, err) ||
        get_string(set, "domain", "e2b.app", &s->domain, err) ||
        get_string(set, "envd_url", NULL, &s->envd_url, err) ||
        get_string(set, "template", "base", &s->tmpl, err) ||
        get_string(set, "user", "user", &s->user, err) ||
        get_string(set, "workdir", "/home/user", &s->workdir, err) ||
        get_number(set, "timeout_s", 300, &timeout, err) ||
        get_number(set, "request_timeout_s", 60, &req, err))
        return -1;
    if (!s->api_key) {
        const char *env = getenv("E2B_API_KEY");
        if (!env || !*env)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.e2b: no API key; set sandbox.e2b.api_key or the "
                              "E2B_API_KEY environment variable (keys are at "
                              "https://e2b.dev/dashboard?tab=keys)");
        s->api_key = sl_xstrdup(env);
    }
    sl_secret_add(s->api_key);  /* removed in free_sb */
    for (const char *p = s->api_key; *p; p++)
        if ((unsigned char)*p < 0x21 || *p == 0x7f)
            return sl_err_set(err, SL_EINVAL,
                              "sandbox.e2b.api_key holds a space or control character; copy the "
                              "key again");
    if (check_url("api_url", s->api_url, err) ||
        (s->envd_url && check_url("envd_url", s->envd_url, err)))
        return -1;
    strip_slash(s->api_url);
    if (s->envd_url)
        strip_slash(s->envd_url);
    if (s->workdir[0] != '/')
        return sl_err_set(err, SL_EINVAL, "sandbox.e2b.workdir must be an absolute path (got '%s')",
                          s->workdir);
    strip_slash(s->workdir);
    if (timeout != (double)(long)timeout)
        return sl_err_set(err, SL_EINVAL, "sandbox.e2b.timeout_s must be a whole number of seconds");
    s->timeout_s = (long)timeout;
    s->request_ms = (long)(req * 1000);
    return 0;
}

/* SL_NET_ALLOW → network.allowOut (names, "*.name" wildcards, IPs, CIDRs)
 * with denyOut 0.0.0.0/0; E2B filters names on HTTP Host and TLS SNI. */
static int net_fields(const sl_sandbox_opts *o, json_t *body, sl_err *err)
{
    if (o->net == SL_NET_OPEN) {
        json_object_set_new(body, "allow_internet_access", json_true());
        return 0;
    }
    if (o->net == SL_NET_NONE) {
        json_object_set_new(body, "allow_internet_access", json_false());
        return 0;
    }
    json_t *allow = json_array();
    const char *p = o->net_allow ? o->net_allow : "";
    while (*p) {
        size_t n = strcspn(p, ",");
        char *h = sl_xstrndup(p, n);
        char *t = h;
        while (*t == ' ')
            t++;
        char *end = t + strlen(t);
        while (end > t && end[-1] == ' ')
            *--end = 0;
        if (*t) {
            bool bad = !strcmp(t, "*") || strchr(t, ' ') || strchr(t, '/') == t ||
                       (strchr(t, ':') && !strchr(strchr(t, ':') + 1, ':'));
            if (bad) {
                sl_err_set(err, SL_EUNSUPPORTED,
                           "sandbox network allow-list entry '%s' cannot be expressed on E2B: "
                           "its allowOut takes host names, *.wildcards, IPs and CIDRs, without "
                           "ports (use net open for everything)",
                           t);
                free(h);
                json_decref(allow);
                return -1;
            }
            json_array_append_new(allow, json_string(t));
        }
        free(h);
        p += n;
        if (*p == ',')
            p++;
    }
    if (!json_array_size(allow)) {
        json_decref(allow);
        return sl_err_set(err, SL_EINVAL,
                          "sandbox network allow-list is empty; list hosts or use none");
    }
    json_object_set_new(body, "allow_internet_access", json_true());
    json_object_set_new(body, "network", json_pack("{s:o, s:[s]}", "allowOut", allow, "denyOut",
                                                    "0.0.0.0/0"));
    return 0;
}

static int api_create(e2b_sb *s, const sl_sandbox_opts *o, sl_err *err)
{
    json_t *body = json_pack("{s:s, s:I, s:b, s:{s:s}}", "templateID", s->tmpl, "timeout",
                             (json_int_t)s->timeout_s, "secure", 1, "metadata", "created_by",
                             "sluice");
    if (net_fields(o, body, err)) {
        json_decref(body);
        return -1;
    }
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    xfer x;
    xfer_init(&x, "POST", sl_xasprintf("%s/sandboxes", s->api_url), 0);
    xfer_header(&x, "X-API-Key: %s", s->api_key);
    xfer_header(&x, "Content-Type: %s", "application/json");
    xfer_body(&x, text, strlen(text));
    int rc = xfer_run(&x, s->request_ms, "creating a sandbox", false, err);
    json_t *ans = NULL;
    if (!rc) {
        json_error_t je;
        ans = json_loadb(x.out->data, x.out->len, 0, &je);
        const char *id = ans ? json_str_field(ans, "sandboxID") : NULL;
        if (!id || !*id) {
            rc = sl_err_set(err, SL_EIO,
                            "e2b: creating a sandbox: POST %s: the answer %s; is api_url an E2B API?",
                            x.url, ans ? "has no sandboxID" : "is not JSON");
        } else {
            s->id = sl_xstrdup(id);
            const char *tok = json_str_field(ans, "envdAccessToken");
            s->token = tok && *tok ? sl_xstrdup(tok) : NULL;
            const char *dom = json_str_field(ans, "domain");
            if (dom && *dom) {
                free(s->domain);
                s->domain = sl_xstrdup(dom);
            }
        }
    }
    json_decref(ans);
    xfer_release(&x);
    return rc;
}

static int make_headers(e2b_sb *s)
{
    if (!s->envd_url)
        s->envd_url = sl_xasprintf("https://%d-%s.%s", ENVD_PORT, s->id, s->domain);
    s->envd_hdr[s->n_envd_hdr++] = sl_xasprintf("E2b-Sandbox-Id: %s", s->id);
    s->envd_hdr[s->n_envd_hdr++] = sl_xasprintf("E2b-Sandbox-Port: %d", ENVD_PORT);
    if (s->token)
        s->envd_hdr[s->n_envd_hdr++] = sl_xasprintf("X-Access-Token: %s", s->token);
    /* envd picks the user from Basic auth with an empty password */
    sl_buf cred;
    sl_buf_init(&cred, 0);
    char *up = sl_xasprintf("%s:", s->user);
    sl_buf_adds(&cred, "Authorization: Basic ");
    sl_e2b_base64_encode(&cred, up, strlen(up));
    free(up);
    s->envd_hdr[s->n_envd_hdr++] = sl_buf_detach(&cred);
    s->envd_hdr[s->n_envd_hdr++] = sl_xstrdup("Connect-Protocol-Version: 1");
    return 0;
}

/* Runs a short shell line in the sandbox; its failure is an error. */
static int run_setup(e2b_sb *s, const char *line, const char *what, sl_err *err)
{
    const char *argv[] = {"/bin/bash", "-c", line, NULL};
    /* from "/": the workdir may not exist yet */
    sl_sandbox_cmd cmd = {.argv = argv, .cwd = "/", .timeout_s = 120, .max_output_bytes = 4096};
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    int rc = e2b_exec(&s->base, &cmd, &r, err);
    if (!rc && sl_sandbox_result_code(&r) != 0) {
        char how[96];
        sl_sandbox_result_describe(&r, how, sizeof how);
        rc = sl_err_set(err, SL_EIO, "e2b: %s %s: %.300s", what, how, r.err.len ? r.err.data : "");
    }
    sl_sandbox_result_release(&r);
    return rc;
}

typedef struct {
    e2b_sb *s;
    sl_buf dirs;        /* quoted sandbox dirs for one mkdir -p */
    size_t files;
    uint64_t bytes;
} bind_walk;

static int bind_tree(bind_walk *w, const char *host, const char *target, int depth, sl_err *err)
{
    struct stat st;
    if (lstat(host, &st))
        return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        if (++w->files > BIND_MAX_FILES)
            return sl_err_set(err, SL_ELIMIT,
                              "sandbox bind: more than %d files to copy to E2B; bind a smaller tree",
                              BIND_MAX_FILES);
        w->bytes += (uint64_t)st.st_size;
        if (w->s->o.disk_bytes && w->bytes > w->s->o.disk_bytes)
            return sl_err_set(err, SL_ELIMIT,
                              "sandbox bind: the bound trees are larger than the disk limit");
        int fd = open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host,
                              strerror(errno));
        sl_buf b;
        sl_buf_init(&b, 0);
        char tmp[65536];
        ssize_t n;
        while ((n = read(fd, tmp, sizeof tmp)) > 0)
            if (sl_buf_add(&b, tmp, (size_t)n))
                break;
        close(fd);
        int rc = b.toobig ? sl_err_set(err, SL_ELIMIT, "sandbox bind: %s is too large to copy", host)
                          : upload_abs(w->s, target, b.data ? b.data : "", b.len, err);
        sl_buf_release(&b);
        return rc;
    }
    if (!S_ISDIR(st.st_mode))
        return 0;  /* links, devices, sockets: not copied (docs/sandbox-e2b.md) */
    if (depth > 64)
        return sl_err_set(err, SL_ELIMIT, "sandbox bind: %s nests too deep", host);
    sl_buf_addc(&w->dirs, ' ');
    sl_e2b_shell_quote(&w->dirs, target);
    DIR *d = opendir(host);
    if (!d)
        return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", host, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *h = sl_xasprintf("%s/%s", host, e->d_name);
        char *t = sl_xasprintf("%s/%s", target, e->d_name);
        rc = bind_tree(w, h, t, depth + 1, err);
        free(h);
        free(t);
    }
    closedir(d);
    return rc;
}

static int copy_binds(e2b_sb *s, const sl_sandbox_opts *o, sl_err *err)
{
    bind_walk w = {.s = s};
    sl_buf_init(&w.dirs, 0);
    sl_buf targets;
    sl_buf_init(&targets, 0);
    int rc = 0;
    for (size_t i = 0; !rc && i < o->n_binds; i++) {
        const sl_sandbox_bind *b = &o->binds[i];
        if (!b->host || !b->target || !*b->target) {
            rc = sl_err_set(err, SL_EINVAL, "sandbox bind %zu: host and target are both needed", i);
            break;
        }
        char *t = abs_path(s, b->target);
        strip_slash(t);
        rc = bind_tree(&w, b->host, t, 0, err);
        sl_buf_addc(&targets, ' ');
        sl_e2b_shell_quote(&targets, t);
        free(t);
    }
    if (!rc && o->n_binds) {
        char *line = sl_xasprintf("%s%s%s chmod -R a-w --%s", w.dirs.len ? "mkdir -p --" : "",
                                  w.dirs.len ? w.dirs.data : "", w.dirs.len ? " &&" : "",
                                  targets.data);
        rc = run_setup(s, line, "making the bound trees read-only", err);
        free(line);
    }
    sl_buf_release(&w.dirs);
    sl_buf_release(&targets);
    return rc;
}

int sl_e2b_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err)
{
    *out = NULL;
    e2b_sb *s = sl_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->base.ops = &e2b_ops;
    s->o = *o;
    s->o.binds = NULL;
    s->o.n_binds = 0;
    s->o.settings = NULL;
    s->o.net_allow = NULL;
    if (read_settings(s, o->settings, err)) {
        free_sb(s);
        return -1;
    }
    s->base.workspace = s->workdir;
    if (sl_http_init(err) || api_create(s, o, err)) {
        free_sb(s);
        return -1;
    }
    make_headers(s);
    int rc = 0;
    if (strcmp(s->workdir, "/home/user")) {
        char *q;
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, "mkdir -p -- ");
        sl_e2b_shell_quote(&b, s->workdir);
        q = sl_buf_detach(&b);
        rc = run_setup(s, q, "making the workdir", err);
        free(q);
    }
    if (!rc)
        rc = copy_binds(s, o, err);
    if (rc) {
        sl_err_prefix(err, "e2b sandbox %s", s->id);
        e2b_destroy(&s->base);
        return -1;
    }
    *out = &s->base;
    return 0;
}
