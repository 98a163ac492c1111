/*
 * net/http — see http.h.  One sl_http wraps one libcurl easy handle; every
 * transfer runs on a multi handle of its own so that a silent peer does
 * not keep the caller's stop() waiting (curl_easy_perform sleeps up to a
 * second at a time and asks nothing in between).
 */
#include "net/http.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "core/clock.h"
#include "core/dl.h"
#include "core/netaddr.h"
#include "net/curl.h"

/* What stopped a transfer from inside, beside libcurl's own code. */
enum { AB_NONE, AB_STOP, AB_BODY, AB_HEADERS, AB_READ, AB_WRITE, AB_CALLBACK };

struct sl_http {
    CURL *h;
    CURLM *m;                 /* the transfers' multi handle, made on the first; its
                                 connection cache is what keeps connections between them */
    sl_http_opts o;
    char *url;
    const char *method;
    const void *body;
    size_t body_len;
    bool with_body;
    struct curl_slist *hdrs;
    curl_mime *form;
    char errbuf[CURL_ERROR_SIZE];
    /* the transfer under way, or the last one */
    CURLcode rc;
    sl_http_result result;
    int abort;
    double connected_at;      /* 0 until the request can go out */
    double last_move;
    curl_off_t last_ul, last_dl;
    size_t body_bytes, header_bytes;
    char refused_addr[INET6_ADDRSTRLEN + 32];
    const char *refused_kind;
};

struct sl_http_group {
    CURLM *m;
};

/* ---- once per process ---- */

#define NC_DEF(f) __typeof__(nc_##f) nc_##f;
NC_FNS(NC_DEF)
#undef NC_DEF
#define NC_SYM(f) {#f, (void **)&nc_##f},
static const sl_dl_sym curl_syms[] = {NC_FNS(NC_SYM){NULL, NULL}};
#undef NC_SYM
static const char *const curl_names[] = {"libcurl.so.4", "libcurl.so", NULL};
static sl_dl_lib curl_lib = {.what = "libcurl", .sonames = curl_names, .package = "libcurl4",
                             .syms = curl_syms};

int sl_net_curl_load(sl_err *err)
{
    return sl_dl_load(&curl_lib, err);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc = CURLE_FAILED_INIT;

static void init_curl(void)
{
    init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int sl_http_init(sl_err *err)
{
    if (sl_net_curl_load(err))
        return -1;
    pthread_once(&init_once, init_curl);
    if (init_rc != CURLE_OK)
        return sl_err_set(err, SL_EIO, "libcurl could not be initialised: %s",
                          curl_easy_strerror(init_rc));
    return 0;
}

/* ---- libcurl's callbacks ---- */

static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    sl_http *h = ud;
    if (purpose == CURLSOCKTYPE_IPCXN) {
        /* libcurl goes on to the next address after a refusal; the text
         * is kept only for a refused one, so the message names it. */
        char text[sizeof h->refused_addr];
        const char *kind = sl_addr_kind(&a->addr, text, sizeof text);
        if (kind) {
            memcpy(h->refused_addr, text, sizeof text);
            h->refused_kind = kind;
            return CURL_SOCKET_BAD;
        }
    }
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* Runs once a connection (new or reused) is ready for the request: starts
 * the idle clocks and checks the peer again, since reused connections
 * skip the socket callback. */
static int on_prereq(void *ud, char *ip, char *local_ip, int port, int local_port)
{
    sl_http *h = ud;
    (void)local_ip;
    (void)port;
    (void)local_port;
    if (h->o.guard && !h->o.allow_private) {
        const char *kind = sl_ip_text_kind(ip);
        if (kind) {
            snprintf(h->refused_addr, sizeof h->refused_addr, "%s", ip);
            h->refused_kind = kind;
            return CURL_PREREQFUNC_ABORT;
        }
    }
    h->connected_at = h->last_move = sl_clock_s();
    return CURL_PREREQFUNC_OK;
}

static bool stopped(sl_http *h)
{
    if (h->o.stop && h->o.stop(h->o.stop_ud)) {
        h->abort = AB_STOP;
        return true;
    }
    return false;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    sl_http *h = ud;
    (void)dltotal;
    if (stopped(h))
        return 1;
    double now = sl_clock_s();
    if (dlnow != h->last_dl || ulnow != h->last_ul) {
        h->last_dl = dlnow;
        h->last_ul = ulnow;
        h->last_move = now;
        return 0;
    }
    if (h->connected_at <= 0)
        return 0; /* still connecting: the connect deadline applies */
    bool uploading = ultotal > 0 && ulnow < ultotal;
    double limit = uploading ? h->o.write_idle_s : h->o.read_idle_s;
    if (limit > 0 && now - h->last_move > limit) {
        h->abort = uploading ? AB_WRITE : AB_READ;
        return 1;
    }
    return 0;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    sl_http *h = ud;
    size_t n = size * nmemb;
    if (h->o.max_body && h->body_bytes + n > h->o.max_body) {
        h->abort = AB_BODY;
        return 0;
    }
    h->body_bytes += n;
    if (h->o.on_body && h->o.on_body(p, n, h->o.ud)) {
        h->abort = AB_CALLBACK;
        return 0;
    }
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    sl_http *h = ud;
    size_t n = size * nmemb;
    h->header_bytes += n;
    if (h->o.max_headers && h->header_bytes > h->o.max_headers) {
        h->abort = AB_HEADERS;
        return 0;
    }
    if (h->o.on_header && h->o.on_header(p, n, h->o.ud)) {
        h->abort = AB_CALLBACK;
        return 0;
    }
    return n;
}

/* ---- handles ---- */

sl_http *sl_http_new(sl_err *err)
{
    if (sl_http_init(err))
        return NULL;
    CURL *c = curl_easy_init();
    if (!c) {
        sl_err_set(err, SL_ENOMEM, "libcurl could not start a transfer (out of memory)");
        return NULL;
    }
    sl_http *h = sl_xcalloc(1, sizeof *h);
    h->h = c;
    return h;
}

static void clear_request(sl_http *h)
{
    free(h->url);
    h->url = NULL;
    h->method = NULL;
    h->body = NULL;
    h->body_len = 0;
    h->with_body = false;
    sl_http_clear_headers(h);
    curl_mime_free(h->form);
    h->form = NULL;
}

void sl_http_free(sl_http *h)
{
    if (!h)
        return;
    curl_easy_cleanup(h->h);
    if (h->m)
        curl_multi_cleanup(h->m);
    clear_request(h);
    free(h);
}

void sl_http_reset(sl_http *h)
{
    curl_easy_reset(h->h);
    clear_request(h);
    memset(&h->o, 0, sizeof h->o);
}

sl_http_opts *sl_http_opts_of(sl_http *h)
{
    return &h->o;
}

void sl_http_url(sl_http *h, const char *url)
{
    free(h->url);
    h->url = sl_xstrdup(url);
}

void sl_http_method(sl_http *h, const char *method, const void *body, size_t len, bool with_body)
{
    h->method = method;
    h->body = body;
    h->body_len = len;
    h->with_body = with_body;
}

void sl_http_header(sl_http *h, const char *line)
{
    struct curl_slist *l = curl_slist_append(h->hdrs, line);
    if (!l)
        SL_BUG("out of memory adding a header");
    h->hdrs = l;
}

void sl_http_headerf(sl_http *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    if (vasprintf(&line, fmt, ap) < 0)
        SL_BUG("out of memory formatting a header");
    va_end(ap);
    sl_http_header(h, line);
    free(line);
}

void sl_http_clear_headers(sl_http *h)
{
    curl_slist_free_all(h->hdrs);
    h->hdrs = NULL;
}

void sl_http_form_start(sl_http *h)
{
    if (!h->form)
        h->form = curl_mime_init(h->h);
    if (!h->form)
        SL_BUG("out of memory starting a form");
}

void sl_http_form_add(sl_http *h, const char *name, const char *filename, const char *type,
                      const void *data, size_t len)
{
    sl_http_form_start(h);
    curl_mimepart *p = curl_mime_addpart(h->form);
    curl_mime_name(p, name);
    if (filename)
        curl_mime_filename(p, filename);
    if (type)
        curl_mime_type(p, type);
    curl_mime_data(p, len ? data : "", len);
}

/* The method and body for the next transfer.  HEAD never waits for a
 * body; POST, PUT and PATCH without one still send Content-Length: 0. */
static void set_method(sl_http *h)
{
    CURL *c = h->h;
    const char *m = h->method ? h->method : "GET";
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    if (!strcmp(m, "HEAD")) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        return;
    }
    bool post_like = !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH");
    if (h->with_body && h->form) {
        curl_easy_setopt(c, CURLOPT_MIMEPOST, h->form);
    } else if (h->with_body || post_like) {
        const char *data = h->with_body && h->body ? h->body : "";
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, data);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(h->with_body ? h->body_len : 0));
    }
    if (strcmp(m, "POST") != 0 && (strcmp(m, "GET") != 0 || h->with_body))
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
}

static long ms(double s)
{
    return s > 0 ? (long)(s * 1000) : 0L;
}

/* Everything the opts say, set again before each transfer, and the state
 * of a transfer cleared. */
static void prepare(sl_http *h)
{
    CURL *c = h->h;
    const sl_http_opts *o = &h->o;
    curl_easy_setopt(c, CURLOPT_PRIVATE, h);
    curl_easy_setopt(c, CURLOPT_URL, h->url ? h->url : "");
    set_method(h);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    /* "": no proxy from the environment; NULL: libcurl's default */
    curl_easy_setopt(c, CURLOPT_PROXY, o->guard ? "" : (char *)NULL);
    bool check = o->guard && !o->allow_private;
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, check ? on_open_socket : NULL);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, check ? h : NULL);
    curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(c, CURLOPT_PREREQDATA, h);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms(o->connect_s));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms(o->timeout_s));
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, o->accept_encoding);
    curl_easy_setopt(c, CURLOPT_USERAGENT, o->user_agent);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION,
                     o->http11 ? (long)CURL_HTTP_VERSION_1_1 : (long)CURL_HTTP_VERSION_NONE);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, o->tcp_keepalive ? 1L : 0L);
    if (o->buffer_size > 0)
        curl_easy_setopt(c, CURLOPT_BUFFERSIZE, o->buffer_size);
    h->errbuf[0] = 0;
    h->rc = CURLE_OK;
    h->result = SL_HTTP_OK;
    h->abort = AB_NONE;
    h->connected_at = 0;
    h->last_move = sl_clock_s();
    h->last_ul = h->last_dl = -1;
    h->body_bytes = h->header_bytes = 0;
    h->refused_kind = NULL;
}

/* The result of a finished transfer: what stopped it from inside first
 * (the body cap, the guard, the other callbacks), else libcurl's code. */
static void finish(sl_http *h, CURLcode rc)
{
    h->rc = rc;
    sl_http_result r;
    if (rc == CURLE_OK)
        r = SL_HTTP_OK;
    else if (h->abort == AB_BODY)
        r = SL_HTTP_TOO_BIG;
    else if (h->refused_kind)
        r = SL_HTTP_REFUSED;
    else if (h->abort == AB_STOP)
        r = SL_HTTP_STOPPED;
    else if (h->abort == AB_READ)
        r = SL_HTTP_IDLE_READ;
    else if (h->abort == AB_WRITE)
        r = SL_HTTP_IDLE_WRITE;
    else if (h->abort == AB_HEADERS)
        r = SL_HTTP_HEADERS_TOO_BIG;
    else if (h->abort == AB_CALLBACK)
        r = SL_HTTP_CALLBACK;
    else
        switch (rc) {
        case CURLE_OPERATION_TIMEDOUT:
            r = h->connected_at > 0 ? SL_HTTP_TIMEOUT : SL_HTTP_CONNECT_TIMEOUT;
            break;
        case CURLE_COULDNT_RESOLVE_HOST:
            r = SL_HTTP_RESOLVE;
            break;
        case CURLE_COULDNT_CONNECT:
            r = SL_HTTP_CONNECT;
            break;
        case CURLE_URL_MALFORMAT:
            r = SL_HTTP_BAD_URL;
            break;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
            r = SL_HTTP_TLS_VERIFY;
            break;
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_SSL_CONNECT_ERROR:
            r = SL_HTTP_BROKEN;
            break;
        case CURLE_OUT_OF_MEMORY:
            r = SL_HTTP_NOMEM;
            break;
        case CURLE_WRITE_ERROR:
            r = SL_HTTP_CALLBACK;
            break;
        default:
            r = SL_HTTP_FAILED;
            break;
        }
    h->result = r;
}

sl_http_result sl_http_perform(sl_http *h)
{
    prepare(h);
    if (!h->m)
        h->m = curl_multi_init();
    CURLM *m = h->m;
    if (!m) {
        finish(h, CURLE_OUT_OF_MEMORY);
        return h->result;
    }
    if (curl_multi_add_handle(m, h->h) != CURLM_OK) {
        finish(h, CURLE_FAILED_INIT);
        return h->result;
    }
    CURLcode rc = CURLE_OK;
    for (;;) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(m, &running);
        bool done = false;
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == h->h) {
                rc = msg->data.result;
                done = true;
            }
        if (done)
            break;
        if (mc != CURLM_OK || !running) {
            rc = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
            break;
        }
        if (stopped(h)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        /* sleeps until a socket is ready, curl's own next timer, or the
         * next look at stop() */
        if (curl_multi_poll(m, NULL, 0, SL_HTTP_POLL_MS, NULL) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
    }
    curl_multi_remove_handle(m, h->h);
    finish(h, rc);
    return h->result;
}

sl_http_result sl_http_result_of(const sl_http *h)
{
    return h->result;
}

long sl_http_status(sl_http *h)
{
    long st = 0;
    curl_easy_getinfo(h->h, CURLINFO_RESPONSE_CODE, &st);
    return st;
}

const char *sl_http_content_type(sl_http *h)
{
    const char *ct = NULL;
    curl_easy_getinfo(h->h, CURLINFO_CONTENT_TYPE, &ct);
    return ct;
}

const char *sl_http_redirect(sl_http *h)
{
    char *next = NULL;
    curl_easy_getinfo(h->h, CURLINFO_REDIRECT_URL, &next);
    return next;
}

bool sl_http_connected(const sl_http *h)
{
    return h->connected_at > 0;
}

const char *sl_http_refused(const sl_http *h, const char **kind)
{
    if (kind)
        *kind = h->refused_kind;
    return h->refused_kind ? h->refused_addr : NULL;
}

const char *sl_http_detail(const sl_http *h)
{
    return h->errbuf;
}

const char *sl_http_strerror(const sl_http *h)
{
    return curl_easy_strerror(h->rc);
}

const char *sl_http_why(const sl_http *h)
{
    return h->errbuf[0] ? h->errbuf : curl_easy_strerror(h->rc);
}

/* ---- groups ---- */

sl_http_group *sl_http_group_new(void)
{
    sl_http_group *g = sl_xcalloc(1, sizeof *g);
    g->m = curl_multi_init();
    if (!g->m)
        SL_BUG("curl_multi_init failed");
    return g;
}

void sl_http_group_add(sl_http_group *g, sl_http *h)
{
    prepare(h);
    if (curl_multi_add_handle(g->m, h->h) != CURLM_OK)
        SL_BUG("curl_multi_add_handle failed");
}

void sl_http_group_remove(sl_http_group *g, sl_http *h)
{
    curl_multi_remove_handle(g->m, h->h);
}

void sl_http_group_run(sl_http_group *g)
{
    int still = 0;
    curl_multi_perform(g->m, &still);
}

sl_http *sl_http_group_done(sl_http_group *g)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(g->m, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        sl_http *h = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&h);
        CURLcode rc = msg->data.result;
        curl_multi_remove_handle(g->m, msg->easy_handle);
        if (h) {
            finish(h, rc);
            return h;
        }
    }
    return NULL;
}

void sl_http_group_wait(sl_http_group *g, int fd, int ms_)
{
    struct curl_waitfd wfd = {fd, CURL_WAIT_POLLIN, 0};
    curl_multi_poll(g->m, fd >= 0 ? &wfd : NULL, fd >= 0 ? 1 : 0, ms_, NULL);
}

void sl_http_group_free(sl_http_group *g)
{
    if (!g)
        return;
    curl_multi_cleanup(g->m);
    free(g);
}

/* ---- text ---- */

char *sl_http_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *o = sl_xmalloc(n * 3 + 1), *w = o;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            *w++ = (char)c;
        } else {
            *w++ = '%';
            *w++ = hex[c >> 4];
            *w++ = hex[c & 15];
        }
    }
    *w = 0;
    return o;
}

double sl_http_retry_after(const char *line, size_t len)
{
    if (len <= 12 || strncasecmp(line, "retry-after:", 12))
        return -1;
    char v[64];
    size_t k = len - 12 < sizeof v - 1 ? len - 12 : sizeof v - 1;
    memcpy(v, line + 12, k);
    v[k] = 0;
    char *end;
    double secs = strtod(v, &end);
    if (end != v && secs >= 0)
        return secs;
    time_t when = sl_http_date(v);
    return when > 0 ? difftime(when, time(NULL)) : -1;
}

time_t sl_http_date(const char *s)
{
    sl_err e = {0};
    if (sl_http_init(&e)) {
        sl_err_clear(&e);
        return -1;
    }
    return curl_getdate(s, NULL);
}
