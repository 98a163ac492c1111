/*
 * http — net/http, the one HTTP client, against a small server on
 * loopback: a plain answer, the body and header caps, the caller's stop
 * and the read deadline ending a silent transfer, the SSRF guard refusing
 * loopback (and allowing it when told), a refused connection, groups, and
 * the text helpers (escape, HTTP dates), and net/url: origins, checks and
 * splits as written.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "net/http.h"
#include "net/url.h"
#include "tap.h"

static int port;

/* Answers by path: /hello, /big (64 KB), /headers (64 KB of them),
 * /silent (says nothing for 3 s).  send(MSG_NOSIGNAL): a client that stops
 * reading at its cap must not kill the test with SIGPIPE. */
static void *serve_one(void *arg)
{
    int c = (int)(long)arg;
    char req[4096];
    ssize_t n = read(c, req, sizeof req - 1);
    req[n > 0 ? n : 0] = 0;
    if (strstr(req, "GET /hello ")) {
        const char *a = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                        "Connection: close\r\n\r\nhello";
        (void)!send(c, a, strlen(a), MSG_NOSIGNAL);
    } else if (strstr(req, "GET /big ")) {
        const char *a = "HTTP/1.1 200 OK\r\nContent-Length: 65536\r\nConnection: close\r\n\r\n";
        (void)!send(c, a, strlen(a), MSG_NOSIGNAL);
        char *b = calloc(1, 65536);
        (void)!send(c, b, 65536, MSG_NOSIGNAL);
        free(b);
    } else if (strstr(req, "GET /headers ")) {
        const char *a = "HTTP/1.1 200 OK\r\n";
        (void)!send(c, a, strlen(a), MSG_NOSIGNAL);
        for (int i = 0; i < 1024; i++) {
            char line[80];
            int k = snprintf(line, sizeof line, "X-Pad-%d: %050d\r\n", i, 0);
            (void)!send(c, line, (size_t)k, MSG_NOSIGNAL);
        }
        (void)!send(c, "Content-Length: 0\r\n\r\n", 21, MSG_NOSIGNAL);
    } else if (strstr(req, "GET /redirect ")) {
        const char *a = "HTTP/1.1 302 Found\r\nLocation: /hello\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n";
        (void)!send(c, a, strlen(a), MSG_NOSIGNAL);
    } else {
        sleep(3);
    }
    close(c);
    return NULL;
}

static void *server(void *arg)
{
    int s = (int)(long)arg;
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            return NULL;
        pthread_t t;
        pthread_create(&t, NULL, serve_one, (void *)(long)c);
        pthread_detach(t);
    }
}

static int collect(const char *p, size_t n, void *ud)
{
    return sl_buf_add(ud, p, n);
}

static double stop_at;
static bool stop_later(void *ud)
{
    (void)ud;
    return sl_clock_s() > stop_at;
}

static sl_http *get(const char *path, sl_buf *body)
{
    sl_err e = {0};
    sl_http *h = sl_http_new(&e);
    if (!h) {
        printf("# %s\n", e.msg);
        exit(1);
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    sl_http_url(h, url);
    sl_http_method(h, "GET", NULL, 0, false);
    sl_http_opts *o = sl_http_opts_of(h);
    o->on_body = collect;
    o->ud = body;
    return h;
}

int main(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16) ||
        getsockname(s, (struct sockaddr *)&a, &al))
        return 1;
    port = ntohs(a.sin_port);
    pthread_t st;
    pthread_create(&st, NULL, server, (void *)(long)s);

    sl_buf body;
    sl_buf_init(&body, 1 << 20);

    sl_http *h = get("/hello", &body);
    sl_http_result r = sl_http_perform(h);
    CHECK(r == SL_HTTP_OK && sl_http_status(h) == 200, "a plain GET answers 200 (%d)", r);
    CHECK(body.len == 5 && !memcmp(body.data, "hello", 5), "... and its body arrives");
    CHECK(sl_http_content_type(h) && !strcmp(sl_http_content_type(h), "text/plain"),
          "... with its Content-Type");
    CHECK(sl_http_connected(h), "... on a connection that was ready");

    sl_buf_reset(&body);
    sl_http_url(h, "http://127.0.0.1:1/x"); /* nothing listens on port 1 */
    r = sl_http_perform(h);
    CHECK(r == SL_HTTP_CONNECT && *sl_http_why(h), "a refused connection is SL_HTTP_CONNECT: %s",
          sl_http_why(h));
    sl_http_free(h);

    h = get("/big", &body);
    sl_http_opts_of(h)->max_body = 1000;
    r = sl_http_perform(h);
    CHECK(r == SL_HTTP_TOO_BIG && body.len <= 1000, "a body past max_body stops (%d, %zu bytes)", r,
          body.len);
    sl_http_free(h);

    sl_buf_reset(&body);
    h = get("/headers", &body);
    sl_http_opts_of(h)->max_headers = 4096;
    r = sl_http_perform(h);
    CHECK(r == SL_HTTP_HEADERS_TOO_BIG, "headers past max_headers stop (%d)", r);
    sl_http_free(h);

    h = get("/silent", &body);
    stop_at = sl_clock_s() + 0.2;
    sl_http_opts_of(h)->stop = stop_later;
    double t0 = sl_clock_s();
    r = sl_http_perform(h);
    double took = sl_clock_s() - t0;
    CHECK(r == SL_HTTP_STOPPED && took < 1.0, "stop() ends a silent transfer at once (%.2f s)",
          took);
    sl_http_free(h);

    h = get("/silent", &body);
    sl_http_opts_of(h)->read_idle_s = 0.3;
    t0 = sl_clock_s();
    r = sl_http_perform(h);
    took = sl_clock_s() - t0;
    CHECK(r == SL_HTTP_IDLE_READ && took < 2.0, "read_idle_s ends a silent answer (%d, %.2f s)", r,
          took);
    sl_http_free(h);

    h = get("/silent", &body);
    sl_http_opts_of(h)->timeout_s = 0.3;
    r = sl_http_perform(h);
    CHECK(r == SL_HTTP_TIMEOUT, "timeout_s once connected is SL_HTTP_TIMEOUT (%d)", r);
    sl_http_free(h);

    h = get("/hello", &body);
    sl_http_opts_of(h)->guard = true;
    r = sl_http_perform(h);
    const char *kind = NULL;
    const char *addr = sl_http_refused(h, &kind);
    CHECK(r == SL_HTTP_REFUSED && addr && !strcmp(addr, "127.0.0.1") && kind &&
              strstr(kind, "loopback"),
          "the guard refuses loopback: %s, %s", addr ? addr : "-", kind ? kind : "-");
    sl_buf_reset(&body);
    sl_http_opts_of(h)->allow_private = true;
    r = sl_http_perform(h);
    CHECK(r == SL_HTTP_OK && body.len == 5, "... and allows it with allow_private (%d)", r);
    sl_http_free(h);

    h = get("/redirect", &body);
    r = sl_http_perform(h);
    const char *next = sl_http_redirect(h);
    char want[128];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/hello", port);
    CHECK(r == SL_HTTP_OK && sl_http_status(h) == 302 && next && !strcmp(next, want),
          "a redirect is not followed; its target is absolute: %s", next ? next : "-");
    sl_http_free(h);

    /* a group: two transfers at once, each finishing with its own result */
    sl_buf b2;
    sl_buf_init(&b2, 0);
    sl_buf_reset(&body);
    sl_http *g1 = get("/hello", &body), *g2 = get("/big", &b2);
    sl_http_opts_of(g2)->max_body = 10;
    sl_http_group *g = sl_http_group_new();
    sl_http_group_add(g, g1);
    sl_http_group_add(g, g2);
    int finished = 0;
    t0 = sl_clock_s();
    while (finished < 2 && sl_clock_s() - t0 < 5) {
        sl_http_group_run(g);
        sl_http *d;
        while ((d = sl_http_group_done(g)))
            finished++;
        sl_http_group_wait(g, -1, 50);
    }
    CHECK(finished == 2 && sl_http_result_of(g1) == SL_HTTP_OK && body.len == 5 &&
              sl_http_result_of(g2) == SL_HTTP_TOO_BIG,
          "a group runs transfers side by side (%d finished)", finished);
    sl_http_group_free(g);
    sl_http_free(g1);
    sl_http_free(g2);
    sl_buf_release(&b2);

    char *e1 = sl_http_escape("/home/user/a b+ü~.-_");
    CHECK(!strcmp(e1, "%2Fhome%2Fuser%2Fa%20b%2B%C3%BC~.-_"), "escape keeps unreserved only: %s",
          e1);
    free(e1);
    CHECK(sl_http_date("Wed, 21 Oct 2015 07:28:00 GMT") == 1445412480,
          "an HTTP date reads as its time");
#define RA(s) sl_http_retry_after(s, strlen(s))
    CHECK(RA("Retry-After: 7\r\n") == 7 && RA("retry-after:2.5") == 2.5,
          "Retry-After in seconds, any case");
    double future = RA("Retry-After: Fri, 31 Dec 2099 23:59:59 GMT");
    CHECK(future > 1e9, "Retry-After as a date: the seconds until it (%.0f)", future);
    CHECK(RA("Retry-After: soon") == -1 && RA("Retry-After:") == -1 &&
              RA("Content-Type: text/plain") == -1 &&
              RA("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT") < 0,
          "no wait from another header, a bad value or a past date");

    char o[256], sc[16], ho[128];
    CHECK(sl_url_origin("HTTP://Example.com/a?b", o, sizeof o, sc, sizeof sc, ho, sizeof ho) &&
              !strcmp(o, "http://Example.com:80"),
          "an origin fills in the default port: %s", o);
    CHECK(!sl_url_origin("no url", o, sizeof o, sc, sizeof sc, ho, sizeof ho),
          "a text that is not a URL has no origin");
    sl_err e = {0};
    CHECK(sl_url_check("http://exa mple.com/", &e) == -1 && e.code == SL_EINVAL && e.msg,
          "a malformed URL is refused: %s", e.msg ? e.msg : "-");
    sl_err_clear(&e);

    /* sl_url_split: the parts as written, where libcurl cuts them */
    static const struct {
        const char *url, *netloc, *path, *query; /* query NULL: none */
    } splits[] = {
        {"http://h/a b?x y", "h", "/a b", "x y"},
        {"http://h", "h", "", NULL},
        {"http://h?x=1", "h", "", "x=1"},
        {"http://h/x?", "h", "/x", ""},
        {"http://h/x?#", "h", "/x", ""},
        {"http://h/x#", "h", "/x", NULL},
        {"http://h/x?a=1#f?g", "h", "/x", "a=1"},
        {"http://h/a/../b/./c", "h", "/a/../b/./c", NULL},
        {"http://u:p%40ss@[::1]:8080/p", "u:p%40ss@[::1]:8080", "/p", NULL},
        {"http://h:/x", "h:", "/x", NULL},
        {"http://h/{a}|^`<>\"\\x?q=\xc3\xa9", "h", "/{a}|^`<>\"\\x", "q=\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof splits / sizeof *splits; i++) {
        sl_url_parts up;
        int rc = sl_url_split(splits[i].url, &up, &e);
        bool okq = splits[i].query ? up.has_query && up.query_n == strlen(splits[i].query) &&
                                         !memcmp(up.query, splits[i].query, up.query_n)
                                   : !up.has_query;
        CHECK(rc == 0 && up.scheme_n == 4 && up.netloc_n == strlen(splits[i].netloc) &&
                  !memcmp(up.netloc, splits[i].netloc, up.netloc_n) &&
                  up.path_n == strlen(splits[i].path) &&
                  !memcmp(up.path, splits[i].path, up.path_n) && okq,
              "split %s: netloc '%.*s', path '%.*s'", splits[i].url, (int)up.netloc_n,
              up.netloc ? up.netloc : "", (int)up.path_n, up.path ? up.path : "");
        sl_err_clear(&e);
    }
    CHECK(sl_url_split("http://h/a\tb", &(sl_url_parts){0}, &e) == -1 && e.code == SL_EINVAL,
          "a control character is refused by libcurl: %s", e.msg ? e.msg : "-");
    sl_err_clear(&e);

    sl_buf_release(&body);
    return tap_done();
}
