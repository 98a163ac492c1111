/*
 * net/http — the one HTTP client.  Every outbound HTTP request sluice makes
 * (the http-request node, model providers, E2B, and the tools and
 * embeddings to come) goes through an sl_http handle, so what they all
 * need is done once, here:
 *
 *   - libcurl: initialised once per process (curl_global_init), on the
 *     first handle made; nothing outside src/net/ includes <curl/curl.h>.
 *   - caps: max_body and max_headers stop a transfer as soon as the
 *     response passes them, so a hostile server cannot make us buffer more.
 *   - deadlines: connect, the whole transfer, and "no byte moved for N s"
 *     while reading or writing (counted once the connection is ready).
 *   - cancellation: the caller's stop() is asked from libcurl's progress
 *     callback and, while the peer is silent, at least every
 *     SL_HTTP_POLL_MS (curl_easy_perform alone would look once a second).
 *   - the SSRF policy (opts.guard): http and https only, no proxy from the
 *     environment (so the check sees the real peer), and every connection
 *     checked on the address it connects to (core/netaddr), in the
 *     open-socket callback for new ones and again for reused ones; a name
 *     that resolves differently later (DNS rebinding) gains nothing.
 *
 * Record and replay of model calls (llm/tape.c) sit above this module: a
 * tape holds the neutral request and answer, never the HTTP exchange, so
 * replaying one makes no request at all.
 *
 * A handle is one transfer at a time on one thread; it is reused for the
 * next request (redirect hops, retries) and keeps its connections.  Strings
 * and bodies given to it must live until the transfer ends, except header
 * lines and form parts, which are copied.
 */
#ifndef SL_NET_HTTP_H
#define SL_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/err.h"

/* How often a transfer with a silent peer asks its stop(). */
#define SL_HTTP_POLL_MS 50

typedef struct sl_http sl_http;

/* What a transfer came to.  The text for a failure is sl_http_why(). */
typedef enum {
    SL_HTTP_OK = 0,
    SL_HTTP_STOPPED,          /* the caller's stop() answered true */
    SL_HTTP_CALLBACK,         /* on_body or on_header refused the bytes */
    SL_HTTP_TOO_BIG,          /* the body passed opts.max_body */
    SL_HTTP_HEADERS_TOO_BIG,  /* the headers passed opts.max_headers */
    SL_HTTP_IDLE_READ,        /* nothing received for opts.read_idle_s */
    SL_HTTP_IDLE_WRITE,       /* the peer took nothing for opts.write_idle_s */
    SL_HTTP_CONNECT_TIMEOUT,  /* no connection within opts.connect_s */
    SL_HTTP_TIMEOUT,          /* opts.timeout_s passed once connected */
    SL_HTTP_REFUSED,          /* the guard refused the address (sl_http_refused) */
    SL_HTTP_RESOLVE,          /* the host name did not resolve */
    SL_HTTP_CONNECT,          /* the connection was refused or unreachable */
    SL_HTTP_BAD_URL,          /* the URL is malformed */
    SL_HTTP_TLS_VERIFY,       /* the server's certificate could not be verified */
    SL_HTTP_BROKEN,           /* the connection broke: send/receive error, a partial
                                 or empty answer, HTTP/2 framing, TLS handshake */
    SL_HTTP_NOMEM,
    SL_HTTP_NOLIB,            /* libcurl could not be loaded or initialised */
    SL_HTTP_FAILED,           /* anything else */
} sl_http_result;

/* Settings read by each sl_http_perform(); zero means "off" or libcurl's
 * default.  sl_http_opts_of() gives the handle's own, to change freely
 * between transfers. */
typedef struct {
    double connect_s;         /* connection deadline */
    double timeout_s;         /* the whole transfer */
    double read_idle_s;       /* longest silence while receiving, once connected */
    double write_idle_s;      /* longest stall while the request body goes out */
    size_t max_body;          /* response body bytes */
    size_t max_headers;       /* response header bytes (an interim 100 answer counts) */
    bool guard;               /* the SSRF policy (above) */
    bool allow_private;       /* ... but special-purpose addresses are allowed */
    bool insecure;            /* no TLS certificate or host name check */
    bool tcp_keepalive;
    bool http11;              /* HTTP/1.1 only */
    const char *user_agent;   /* NULL: no User-Agent header */
    const char *accept_encoding; /* NULL: none; "": every encoding libcurl decodes */
    long buffer_size;         /* receive buffer; 0: libcurl's default */
    /* The caller's stop, asked often during the transfer (see above). */
    bool (*stop)(void *ud);
    void *stop_ud;
    /* Response bytes as they arrive: header lines (status line included,
     * with their CRLF, for every response of the transfer) and the body.
     * Return 0 to go on, anything else to stop with SL_HTTP_CALLBACK. */
    int (*on_header)(const char *line, size_t n, void *ud);
    int (*on_body)(const char *p, size_t n, void *ud);
    void *ud;
} sl_http_opts;

/* Makes libcurl ready (once per process).  0, or -1 with err naming what
 * is missing.  sl_http_new() calls it; callers need not. */
int sl_http_init(sl_err *err);

/* A new handle, or NULL with err set when libcurl is not available. */
sl_http *sl_http_new(sl_err *err);
void sl_http_free(sl_http *h);

/* Back to a fresh handle's settings (URL, method, headers, form and opts
 * cleared), connections kept. */
void sl_http_reset(sl_http *h);

sl_http_opts *sl_http_opts_of(sl_http *h);

void sl_http_url(sl_http *h, const char *url);

/* The method and body of the next request.  `body` (len bytes, not
 * copied) is sent when with_body; when the handle has form parts it is
 * ignored and the form goes as multipart/form-data.  HEAD never waits for
 * a body; POST, PUT and PATCH without one still send Content-Length: 0. */
void sl_http_method(sl_http *h, const char *method, const void *body, size_t len,
                    bool with_body);

/* Request header lines, copied, in libcurl's form: "Name: value";
 * "Name;" sends a header with an empty value; "Name:" suppresses one
 * libcurl would add (Expect:, Content-Type:). */
void sl_http_header(sl_http *h, const char *line);
void sl_http_headerf(sl_http *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_http_clear_headers(sl_http *h);

/* A multipart/form-data body, empty until parts are added; a part
 * (copied) is a text field when filename and type are NULL, else a file.
 * sl_http_form_add() starts the form when there is none. */
void sl_http_form_start(sl_http *h);
void sl_http_form_add(sl_http *h, const char *name, const char *filename, const char *type,
                      const void *data, size_t len);

/* Runs the request to its end.  The status and headers of the answer
 * stay readable until the next request. */
sl_http_result sl_http_perform(sl_http *h);

sl_http_result sl_http_result_of(const sl_http *h);
/* The status of the response being received (0 before one). */
long sl_http_status(sl_http *h);
/* Its Content-Type, or NULL. */
const char *sl_http_content_type(sl_http *h);
/* Where a 3xx answer points (absolute), or NULL; redirects are never
 * followed by the handle. */
const char *sl_http_redirect(sl_http *h);
/* Whether the last transfer got a connection ready for its request. */
bool sl_http_connected(const sl_http *h);
/* The address and kind the guard refused (SL_HTTP_REFUSED). */
const char *sl_http_refused(const sl_http *h, const char **kind);
/* libcurl's detail for the last failure ("" when it gave none), and its
 * short text for the failure's code. */
const char *sl_http_detail(const sl_http *h);
const char *sl_http_strerror(const sl_http *h);
/* The detail, else the short text. */
const char *sl_http_why(const sl_http *h);

/* Several transfers at once on one thread (E2B: a streaming call and the
 * requests that go beside it).  sl_http_group_add() starts a handle set up
 * as for sl_http_perform(); sl_http_group_run() moves every transfer on;
 * sl_http_group_done() returns a finished one (its result set; it has
 * left the group), or NULL; sl_http_group_wait() sleeps until there is
 * something to do, `fd` (-1 for none) is readable, or ms pass.  The stop
 * and idle deadlines are asked only while libcurl calls back. */
typedef struct sl_http_group sl_http_group;
sl_http_group *sl_http_group_new(void);
void sl_http_group_add(sl_http_group *g, sl_http *h);
void sl_http_group_remove(sl_http_group *g, sl_http *h);
void sl_http_group_run(sl_http_group *g);
sl_http *sl_http_group_done(sl_http_group *g);
void sl_http_group_wait(sl_http_group *g, int fd, int ms);
void sl_http_group_free(sl_http_group *g);

/* A URL component percent-encoded: everything but letters, digits and
 * -._~ (RFC 3986 unreserved).  Returns a new string. */
char *sl_http_escape(const char *s);

/* An HTTP date (Retry-After, Expires) as time, or -1. */
time_t sl_http_date(const char *s);

/* The seconds a response header line says to wait when it is Retry-After
 * (delay-seconds or an HTTP date, RFC 9110 10.2.3); -1 for any other line
 * or a value that is neither. */
double sl_http_retry_after(const char *line, size_t len);

#endif
