/*
 * http_response — the http-request node's transfer (net/http) with
 * httpx's redirect rules, and its response as Dify's outputs: text or
 * file, size limits, error statuses.
 */
#include "nodes/http_request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/file.h"
#include "core/mime.h"
#include "net/http.h"
#include "net/url.h"

/* ---- file types ---- */

/* Dify's Response.is_file. */
static bool response_is_file(const char *ctype, const char *cd, const char *body, size_t n)
{
    char ct[256];
    sl_hr_header_main(ctype, ct, sizeof ct);
    if (cd && *cd) {
        char disp[64];
        sl_hr_header_main(cd, disp, sizeof disp);
        sl_buf v;
        sl_buf_init(&v, 4096);
        bool named = sl_hr_header_param(cd, "filename", &v) || sl_hr_header_param(cd, "filename*", &v);
        sl_buf_release(&v);
        if (!strcmp(disp, "attachment") || named)
            return true;
    }
    if (!strncmp(ct, "text/", 5) && !strstr(ct, "csv"))
        return false;
    if (!strncmp(ct, "application/", 12)) {
        static const char *const textish[] = {"json", "xml", "javascript",
                                              "x-www-form-urlencoded", "yaml", "graphql"};
        for (size_t i = 0; i < sizeof textish / sizeof textish[0]; i++)
            if (strstr(ct, textish[i]))
                return false;
        /* Text served as application/…: UTF-8 that opens like code or
         * markup stays text. */
        size_t k = n < SNIFF_BYTES ? n : SNIFF_BYTES;
        if (sl_utf8_valid(body, k)) {
            static const char *const marks[] = {"{", "[", "<", "function", "var ", "const ",
                                                "let "};
            for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
                if (memmem(body, k, marks[i], strlen(marks[i])))
                    return false;
        }
    }
    return !strncmp(ct, "application/", 12) || !strncmp(ct, "image/", 6) ||
           !strncmp(ct, "audio/", 6) || !strncmp(ct, "video/", 6);
}

/* Dify's readable_size. */
static void readable_size(size_t n, char *out, size_t len)
{
    if (n < 1024)
        snprintf(out, len, "%zu bytes", n);
    else if (n < 1024 * 1024)
        snprintf(out, len, "%.2f KB", (double)n / 1024);
    else
        snprintf(out, len, "%.2f MB", (double)n / (1024 * 1024));
}

/* ---- the transfer ---- */

/* What stopped the transfer from the run's side. */
enum { AB_NONE, AB_CANCEL, AB_BUDGET };

typedef struct {
    request *r;
    response *o;
    int abort;
    char *last_name;          /* for folded header lines */
} xfer;

/* The run stopped or its budget spent (recorded in t->abort): asked by
 * net/http while the transfer runs. */
static bool run_ended(void *ud)
{
    xfer *t = ud;
    /* The budget first: sl_exec_cancelled() is also true once it is spent,
     * and the user should learn which limit stopped the request. */
    if (sl_exec_time_left(t->r->x) <= 0) {
        t->abort = AB_BUDGET;
        return true;
    }
    if (sl_exec_cancelled(t->r->x)) {
        t->abort = AB_CANCEL;
        return true;
    }
    return false;
}

/* The body, within the cap net/http enforces (o->body's own). */
static int on_body(const char *p, size_t n, void *ud)
{
    xfer *t = ud;
    sl_buf_add(&t->o->body, p, n);
    return 0;
}

static int on_header(const char *p, size_t n, void *ud)
{
    xfer *t = ud;
    if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
        /* A new response (after 100 Continue, or the next hop). */
        json_object_clear(t->o->headers);
        free(t->last_name);
        t->last_name = NULL;
        return 0;
    }
    size_t len = n;
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        len--;
    if (!len)
        return 0;
    if ((p[0] == ' ' || p[0] == '\t') && t->last_name) {
        /* An obsolete folded line continues the previous header. */
        const char *v = p;
        size_t vn = len;
        sl_hr_strip(&v, &vn);
        sl_value *old = json_object_get(t->o->headers, t->last_name);
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, json_string_value(old) ? json_string_value(old) : "");
        sl_buf_addc(&b, ' ');
        sl_buf_add(&b, v, vn);
        json_object_set_new(t->o->headers, t->last_name, sl_hr_header_text(b.data, b.len));
        sl_buf_release(&b);
        return 0;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon)
        return 0;
    const char *k = p, *v = colon + 1;
    size_t kn = (size_t)(colon - p), vn = len - kn - 1;
    sl_hr_strip(&k, &kn);
    sl_hr_strip(&v, &vn);
    char *name = sl_xstrndup(k, kn);
    for (char *c = name; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (!sl_utf8_valid(name, strlen(name))) {
        free(name);
        return 0;
    }
    sl_value *nv = sl_hr_header_text(v, vn);
    const char *old = json_string_value(json_object_get(t->o->headers, name));
    if (old) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_buf_adds(&b, old);
        sl_buf_adds(&b, ", ");
        sl_buf_adds(&b, json_string_value(nv));
        json_decref(nv);
        nv = json_stringn_nocheck(b.data, b.len);
        sl_buf_release(&b);
    }
    json_object_set_new(t->o->headers, name, nv);
    free(t->last_name);
    t->last_name = name;
    return 0;
}

/* The request's headers in libcurl's form.  An empty value needs "Name;"
 * (libcurl drops "Name:"); "Expect:" stops the 100-continue round trip
 * httpx never makes; "Content-Type:" stops libcurl from labelling a raw
 * payload as a form when the user did not label it. */
static void wire_headers(sl_http *h, const kvlist *l, bool no_auto_ctype)
{
    sl_http_clear_headers(h);
    for (size_t i = 0; i < l->n; i++) {
        if (*l->a[i].v)
            sl_http_headerf(h, "%s: %s", l->a[i].k, l->a[i].v);
        else
            sl_http_headerf(h, "%s;", l->a[i].k);
    }
    if (no_auto_ctype && !sl_hr_kv_find_ci(l, "content-type"))
        sl_http_header(h, "Content-Type:");
    sl_http_header(h, "Expect:");
}

static void build_form(sl_http *h, const request *r)
{
    sl_http_form_start(h);
    for (size_t i = 0; i < r->form.n; i++)
        sl_http_form_add(h, r->form.a[i].k, NULL, NULL, r->form.a[i].v, strlen(r->form.a[i].v));
    for (size_t i = 0; i < r->nparts; i++)
        sl_http_form_add(h, r->parts[i].key, r->parts[i].filename, r->parts[i].mime,
                         r->parts[i].data.data ? r->parts[i].data.data : "",
                         r->parts[i].data.len);
}

static bool is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* Explains a failed transfer through sl_exec_fail(). */
static int transfer_error(xfer *t, sl_http *h, sl_http_result res, const char *url)
{
    request *r = t->r;
    const sl_limits *L = r->lim;
    char u[512];
    sl_hr_url_for_msg(url, u, sizeof u);
    const char *why = sl_http_why(h);
    switch (res) {
    case SL_HTTP_REFUSED: {
        const char *kind;
        const char *addr = sl_http_refused(h, &kind);
        return sl_exec_fail(r->x, "ToolSSRFError",
                            "Access to '%s' was blocked by SSRF protection: it connects to %s, "
                            "%s. To let workflows reach this machine and its networks, set "
                            "http_allow_private=true (--limit http_allow_private=true)",
                            u, addr, kind);
    }
    case SL_HTTP_STOPPED:
        if (t->abort == AB_CANCEL)
            return sl_exec_fail(r->x, "Stopped",
                                "the run was stopped during the HTTP request to %s", u);
        return sl_exec_fail(r->x, r->etype,
                            "the run's time budget (max_time_s=%g) ran out during the HTTP "
                            "request to %s; raise max_time_s (--limit max_time_s=N)",
                            L->max_time_s, u);
    case SL_HTTP_IDLE_READ:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: no response data for %g s (read "
                            "timeout); raise timeout.read on the node (at most "
                            "http_read_timeout_s=%g, --limit http_read_timeout_s=N)",
                            u, r->read_s, L->http_read_timeout_s);
    case SL_HTTP_IDLE_WRITE:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: the server took no request data for "
                            "%g s (write timeout); raise timeout.write on the node (at most "
                            "http_write_timeout_s=%g, --limit http_write_timeout_s=N)",
                            u, r->write_s, L->http_write_timeout_s);
    case SL_HTTP_HEADERS_TOO_BIG:
        return sl_exec_fail(r->x, r->etype,
                            "the response from %s has more than %zu KB of headers; sluice "
                            "stops reading such responses", u, HEADER_CAP >> 10);
    case SL_HTTP_CONNECT_TIMEOUT:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s timed out: no connection within %g s "
                            "(connect timeout); check that the host is up, or raise "
                            "timeout.connect on the node (at most http_connect_timeout_s=%g, "
                            "--limit http_connect_timeout_s=N)",
                            u, r->connect_s, L->http_connect_timeout_s);
    case SL_HTTP_TIMEOUT:
        return sl_exec_fail(r->x, r->etype,
                            "the run's time budget (max_time_s=%g) ran out during the HTTP "
                            "request to %s; raise max_time_s (--limit max_time_s=N)",
                            L->max_time_s, u);
    case SL_HTTP_RESOLVE:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: %s; check the host name in the url", u,
                            why);
    case SL_HTTP_CONNECT:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: %s; check that the server is running "
                            "and the port is right", u, why);
    case SL_HTTP_BAD_URL:
        return sl_exec_fail(r->x, "InvalidURLError", "url '%s' is not a valid URL: %s", u, why);
    case SL_HTTP_TLS_VERIFY:
        return sl_exec_fail(r->x, r->etype,
                            "HTTP request to %s failed: the server's TLS certificate could not "
                            "be verified (%s); fix the certificate, or set ssl_verify: false on "
                            "the node for a host you trust", u, why);
    default:
        return sl_exec_fail(r->x, r->etype, "HTTP request to %s failed: %s", u, why);
    }
}

/* Sends r and follows redirects; the last response goes to o.  A body over
 * the size cap is not an error here (o->over; the caller reports it with
 * Dify's message).  Returns 0, or -1 after sl_exec_fail(). */
int sl_hr_perform(request *r, response *o)
{
    const sl_limits *L = r->lim;
    sl_err e = {0};
    sl_http *h = sl_http_new(&e);
    if (!h) {
        int rc = sl_exec_fail(r->x, r->etype, "%s", e.msg);
        sl_err_clear(&e);
        return rc;
    }
    xfer t = {.r = r, .o = o};
    sl_http_opts *op = sl_http_opts_of(h);
    op->guard = true;
    op->allow_private = L->http_allow_private;
    op->connect_s = r->connect_s;
    op->read_idle_s = r->read_s;
    op->write_idle_s = r->write_s;
    op->max_body = o->body.cap;
    op->max_headers = HEADER_CAP;
    op->insecure = !r->ssl_verify;
    op->accept_encoding = "gzip, deflate";
    op->user_agent = "sluice";
    op->http11 = true;
    op->stop = run_ended;
    op->stop_ud = &t;
    op->on_body = on_body;
    op->on_header = on_header;
    op->ud = &t;

    bool form = r->btype == B_FORM_DATA && r->send;
    if (form)
        build_form(h, r);
    kvlist hdrs = {0};
    sl_hr_kv_copy(&hdrs, &r->headers);
    char *url = sl_xstrdup(r->wire_url);
    char method[8];
    snprintf(method, sizeof method, "%s", r->method);
    bool with_body = r->send;
    int rc = 0;
    for (int hops = 0;; hops++) {
        sl_http_method(h, method, r->payload.data, r->payload.len, with_body);
        /* libcurl labels any POSTFIELDS, empty ones too, as a form; only
         * multipart (whose boundary it must write) keeps its own label. */
        wire_headers(h, &hdrs, !(with_body && form));
        sl_http_url(h, url);
        /* The run's budget bounds the whole hop (0: no bound, for budgets
         * too large to count in milliseconds). */
        double left = sl_exec_time_left(r->x);
        op->timeout_s = left < 1e9 ? left + 0.001 : 0;
        t.abort = AB_NONE;
        o->over = false;
        sl_buf_reset(&o->body);
        json_object_clear(o->headers);
        sl_http_result res = sl_http_perform(h);
        if (res == SL_HTTP_TOO_BIG) {
            o->over = true;
        } else if (res != SL_HTTP_OK) {
            rc = transfer_error(&t, h, res, url);
            break;
        }
        o->status = sl_http_status(h);
        const char *next = sl_http_redirect(h);
        if (!is_redirect(o->status) || !next || o->over)
            break;
        char u[512];
        sl_hr_url_for_msg(r->wire_url, u, sizeof u);
        if (hops >= L->http_max_redirects) {
            rc = sl_exec_fail(r->x, r->etype,
                              "Exceeded maximum allowed redirects: %s redirected more than "
                              "http_max_redirects=%d times; raise it (--limit "
                              "http_max_redirects=N) or call the final address",
                              u, L->http_max_redirects);
            break;
        }
        char from[512], to[512], s1[16], s2[16], h1[256], h2[256];
        if (!sl_url_origin(url, from, sizeof from, s1, sizeof s1, h1, sizeof h1) ||
            !sl_url_origin(next, to, sizeof to, s2, sizeof s2, h2, sizeof h2) ||
            (strcasecmp(s2, "http") && strcasecmp(s2, "https"))) {
            char n2[512];
            sl_hr_url_for_msg(next, n2, sizeof n2);
            rc = sl_exec_fail(r->x, r->etype,
                              "%s redirected to '%s', which is not an http or https URL; "
                              "sluice follows redirects to http and https only", u, n2);
            break;
        }
        /* httpx's rules: 303 (but HEAD), and POST after 301 or 302, become
         * GET without a body; Authorization stays only on the same origin
         * or an upgrade to https on the same host; cookies never follow. */
        if ((o->status == 303 && strcmp(method, "HEAD")) ||
            ((o->status == 301 || o->status == 302) && !strcmp(method, "POST"))) {
            snprintf(method, sizeof method, "GET");
            with_body = false;
        }
        bool upgrade = !strcasecmp(s1, "http") && !strcasecmp(s2, "https") && !strcasecmp(h1, h2);
        if (strcmp(from, to) && !upgrade)
            sl_hr_kv_drop_ci(&hdrs, "authorization");
        sl_hr_kv_drop_ci(&hdrs, "cookie");
        char *n = sl_xstrdup(next);
        free(url);
        url = n;
    }
    free(url);
    free(t.last_name);
    sl_hr_kv_release(&hdrs);
    sl_http_free(h);
    return rc;
}

/* ---- the response ---- */

/* A file value for a response body Dify would store as a tool file. */
static sl_value *response_file(const request *r, const response *o, const char *ctype,
                               const char *cd)
{
    char ct[256];
    sl_hr_header_main(ctype, ct, sizeof ct);
    char *cd_name = cd ? sl_hr_disposition_filename(cd) : NULL;
    /* The last path segment of the URL, query cut, escapes undone. */
    const char *url = r->url.data ? r->url.data : "";
    size_t un = strcspn(url, "?#");
    const char *seg = url;
    for (size_t i = 0; i < un; i++)
        if (url[i] == '/')
            seg = url + i + 1;
    char *url_name = sl_hr_unquote(seg, (size_t)(url + un - seg), false);
    if (!sl_utf8_valid(url_name, strlen(url_name)) || strchr(url_name, '/') ||
        strchr(url_name, '\\')) {
        free(url_name);
        url_name = sl_xstrdup("");
    }
    const char *mime = sl_mime_for_ext(sl_file_ext(cd_name));
    if (!mime)
        mime = *ct ? ct : NULL;
    if (!mime)
        mime = sl_mime_for_ext(sl_file_ext(url_name));
    if (!mime)
        mime = "application/octet-stream";
    sl_buf name;
    sl_buf_init(&name, 0);
    sl_buf_adds(&name, cd_name ? cd_name : *url_name ? url_name : "file");
    if (!sl_file_ext(name.data)) {
        const char *e = sl_mime_ext_for(mime);
        sl_buf_adds(&name, e ? e : ".bin");
    }
    char ext[32];
    snprintf(ext, sizeof ext, "%s", sl_file_ext(name.data));
    for (char *c = ext; *c; c++)
        *c = (char)tolower((unsigned char)*c);

    /* every string is UTF-8 (the names were checked or decoded above) */
    sl_value *f = sl_file_new(&(sl_file){
        .type = sl_file_kind(ext, mime), .transfer_method = "tool_file", .filename = name.data,
        .extension = ext, .mime_type = mime, .size = (long long)o->body.len});
    sl_buf b64;
    sl_buf_init(&b64, o->body.len / 3 * 4 + 16);
    sl_base64_encode((const unsigned char *)(o->body.data ? o->body.data : ""), o->body.len, &b64);
    json_object_set_new(f, "content_base64", json_stringn(b64.data ? b64.data : "", b64.len));
    sl_buf_release(&b64);
    sl_buf_release(&name);
    free(cd_name);
    free(url_name);
    return f;
}

int sl_hr_publish(request *r, response *o)
{
    const sl_limits *L = r->lim;
    const char *ctype = json_string_value(json_object_get(o->headers, "content-type"));
    const char *cd = json_string_value(json_object_get(o->headers, "content-disposition"));
    const char *body = o->body.data ? o->body.data : "";
    bool head = !strcmp(r->method, "HEAD");
    bool file = !head && response_is_file(ctype, cd, body, o->body.len);
    size_t cap = file ? L->http_max_binary_bytes : L->http_max_text_bytes;
    if (o->over || o->body.len > cap) {
        char now[96], limit[64];
        if (o->over) {
            const char *cl = json_string_value(json_object_get(o->headers, "content-length"));
            unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
            if (n > cap)
                readable_size((size_t)n, now, sizeof now);
            else {
                readable_size(o->body.cap, limit, sizeof limit);
                snprintf(now, sizeof now, "more than %s", limit);
            }
        } else {
            readable_size(o->body.len, now, sizeof now);
        }
        return sl_exec_fail(r->x, "ResponseSizeError",
                            "%s size is too large, max size is %.2f MB, but current size is %s. "
                            "The limit is %s=%zu bytes; raise it (--limit %s=N) to accept "
                            "larger responses",
                            file ? "File" : "Text", (double)cap / 1024 / 1024, now,
                            file ? "http_max_binary_bytes" : "http_max_text_bytes", cap,
                            file ? "http_max_binary_bytes" : "http_max_text_bytes");
    }
    sl_value *files = json_array();
    sl_value *text;
    if (file) {
        json_array_append_new(files, response_file(r, o, ctype, cd));
        text = json_string("");
    } else {
        sl_buf cs;
        sl_buf_init(&cs, 256);
        bool has = sl_hr_header_param(ctype, "charset", &cs);
        text = sl_hr_decode_body(has ? cs.data : NULL, body, o->body.len);
        sl_buf_release(&cs);
    }
    /* Dify fails a non-2xx response only when something can act on the
     * failure: an error strategy or retries. */
    const sl_value *d = sl_exec_data(r->x);
    const char *strategy = json_string_value(json_object_get(d, "error_strategy"));
    bool acts = (strategy && (!strcmp(strategy, "fail-branch") ||
                              !strcmp(strategy, "default-value"))) ||
                json_is_true(json_object_get(json_object_get(d, "retry_config"), "retry_enabled"));
    if ((o->status < 200 || o->status > 299) && acts) {
        json_decref(files);
        json_decref(text);
        return sl_exec_fail(r->x, "HTTPResponseCodeError", "Request failed with status code %ld",
                            o->status);
    }
    sl_exec_output(r->x, "status_code", json_integer(o->status));
    sl_exec_output(r->x, "body", text);
    sl_exec_output(r->x, "headers", json_incref(o->headers));
    sl_exec_output(r->x, "files", files);
    return 0;
}
