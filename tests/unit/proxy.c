/*
 * proxy — the sandbox egress proxy: allow-list rules through
 * sl_proxy_check_host() (exact names, wildcards, ports, case, trailing dots,
 * IP literals, "*"), malformed lists, and end to end against a small origin
 * server on 127.0.0.1: CONNECT tunnels (TCP and unix listeners, half-close),
 * absolute-form GET and POST with the head rewritten, kept-alive
 * connections (each request framed and checked on its own, pipelined
 * requests to hosts or ports not listed refused, smuggling attempts 400,
 * chunked bodies re-encoded both ways, 100 Continue), and the refusals: 403
 * for hosts not listed and for names resolving to loopback, 400 for
 * garbage, 431 for an oversized head, 502 for names that do not resolve and
 * ports that refuse.  Ends with stop closing an open tunnel.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/buf.h"
#include "sandbox/proxy.h"
#include "tap.h"
#include "util.h"

/* ---- sockets ---- */

/* A listening TCP socket on 127.0.0.1 with a free port. */
static int listen_tcp(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
        perror("listen_tcp");
        abort();
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void set_timeout(int fd)
{
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int dial_tcp(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror("dial_tcp");
        abort();
    }
    set_timeout(fd);
    return fd;
}

static void send_str(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* Reads until the peer closes (or 10 s pass); heap string. */
static char *read_all(int fd, size_t *len)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    char tmp[16384];
    ssize_t k;
    while ((k = recv(fd, tmp, sizeof tmp, 0)) > 0)
        sl_buf_add(&b, tmp, (size_t)k);
    if (len)
        *len = b.len;
    if (!b.data)
        return sl_xstrdup("");
    return sl_buf_detach(&b);
}

/* Reads up to and including the first blank line; heap string. */
static char *read_head(int fd)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    char c;
    while (recv(fd, &c, 1, 0) == 1) {
        sl_buf_addc(&b, c);
        if (b.len >= 4 && !memcmp(b.data + b.len - 4, "\r\n\r\n", 4))
            break;
    }
    if (!b.data)
        return sl_xstrdup("");
    return sl_buf_detach(&b);
}

/* One response from fd: the head, then a body of Content-Length bytes, a
 * chunked one up to its last chunk, none for 1xx, or all until the peer
 * closes; heap string. */
static char *read_one(int fd)
{
    char *head = read_head(fd);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, head);
    const char *cl = strcasestr(head, "\r\ncontent-length:");
    if (!strncmp(head, "HTTP/1.1 1", 10)) {
    } else if (cl) {
        size_t n = strtoul(cl + 17, NULL, 10);
        char ch;
        while (n-- && recv(fd, &ch, 1, 0) == 1)
            sl_buf_addc(&b, ch);
    } else if (strcasestr(head, "\r\ntransfer-encoding: chunked")) {
        char ch;
        while (!(b.len >= 5 && !memcmp(b.data + b.len - 5, "0\r\n\r\n", 5)) &&
               recv(fd, &ch, 1, 0) == 1)
            sl_buf_addc(&b, ch);
    } else {
        size_t n;
        char *rest = read_all(fd, &n);
        sl_buf_add(&b, rest, n);
        free(rest);
    }
    free(head);
    return sl_buf_detach(&b);
}

/* Whether the peer has closed fd (reads nothing more within 10 s). */
static bool closed_by_peer(int fd)
{
    char ch;
    return recv(fd, &ch, 1, 0) == 0;
}

/* One request to the proxy on port and its one response back. */
static char *ask1(int port, const char *req)
{
    int fd = dial_tcp(port);
    send_str(fd, req, strlen(req));
    char *r = read_one(fd);
    close(fd);
    return r;
}

/* One request to the proxy on port, the whole answer back. */
static char *ask(int port, const char *req)
{
    int fd = dial_tcp(port);
    send_str(fd, req, strlen(req));
    char *r = read_all(fd, NULL);
    close(fd);
    return r;
}

/* ---- the origin server ---- */

/* Answers each connection once, then closes:
 *   - "/untileof": reads to EOF, answers "got N" (bytes after the head);
 *   - "/continue": sends "100 Continue" first, then as below;
 *   - with Content-Length: echoes the body;
 *   - with Transfer-Encoding: chunked: echoes the body's bytes as they
 *     came, chunk framing included, up to the last chunk;
 *   - "/chunked": "hello world" in chunks, with an extension and a trailer;
 *   - "/noframe": a body with neither length nor chunks, ended by closing;
 *   - "/both": Transfer-Encoding and a wrong Content-Length at once;
 *   - otherwise "hello from origin".
 * Keeps the last request head and every request line for the checks. */
static struct {
    int fd, port;
    int stop[2];
    pthread_t tid;
    pthread_mutex_t mu;
    char *last_head;
    sl_buf lines;              /* every request line seen */
    int served;
} origin;

static void origin_answer(int fd)
{
    char *head = read_head(fd);
    pthread_mutex_lock(&origin.mu);
    free(origin.last_head);
    origin.last_head = sl_xstrdup(head);
    origin.served++;
    sl_buf_add(&origin.lines, head, strcspn(head, "\r\n"));
    sl_buf_addc(&origin.lines, '\n');
    pthread_mutex_unlock(&origin.mu);
    char *body = NULL;
    size_t blen = 0;
    const char *cl = strcasestr(head, "\r\ncontent-length:");
    if (strstr(head, " /continue "))
        send_str(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    if (strstr(head, " /chunked ")) {
        static const char r[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                "Connection: close\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n"
                                "0\r\nX-Trailer: t\r\n\r\n";
        send_str(fd, r, sizeof r - 1);
    } else if (strstr(head, " /noframe ")) {
        static const char r[] = "HTTP/1.1 200 OK\r\n\r\nuntil the origin closes";
        send_str(fd, r, sizeof r - 1);
    } else if (strstr(head, " /both ")) {
        static const char r[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n4\r\nboth\r\n0\r\n\r\n";
        send_str(fd, r, sizeof r - 1);
    } else if (strcasestr(head, "\r\ntransfer-encoding: chunked")) {
        sl_buf raw;
        sl_buf_init(&raw, 0);
        char ch;
        while (!(raw.len >= 5 && !memcmp(raw.data + raw.len - 5, "0\r\n\r\n", 5)) &&
               recv(fd, &ch, 1, 0) == 1)
            sl_buf_addc(&raw, ch);
        blen = raw.len;
        body = raw.data ? sl_buf_detach(&raw) : sl_xstrdup("");
    } else if (strstr(head, " /untileof ")) {
        size_t n = 0;
        free(read_all(fd, &n));
        body = sl_xasprintf("got %zu", n);
        blen = strlen(body);
    } else if (cl) {
        blen = strtoul(cl + 17, NULL, 10);
        body = sl_xmalloc(blen + 1);
        size_t got = 0;
        while (got < blen) {
            ssize_t k = recv(fd, body + got, blen - got, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        blen = got;
    } else if (*head) {
        body = sl_xstrdup("hello from origin");
        blen = strlen(body);
    }
    if (body) {
        char *h = sl_xasprintf("HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
                               "Connection: close\r\n\r\n",
                               blen);
        send_str(fd, h, strlen(h));
        send_str(fd, body, blen);
        free(h);
    }
    free(body);
    free(head);
}

static void *origin_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd f[2] = {{origin.fd, POLLIN, 0}, {origin.stop[0], POLLIN, 0}};
        if (poll(f, 2, -1) < 0 || f[1].revents)
            break;
        int c = accept4(origin.fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        set_timeout(c);
        origin_answer(c);
        close(c);
    }
    return NULL;
}

static void origin_start(void)
{
    origin.fd = listen_tcp(&origin.port);
    if (pipe(origin.stop) < 0)
        abort();
    pthread_mutex_init(&origin.mu, NULL);
    sl_buf_init(&origin.lines, 0);
    pthread_create(&origin.tid, NULL, origin_main, NULL);
}

static void origin_stop(void)
{
    if (write(origin.stop[1], "x", 1) < 0)
        abort();
    pthread_join(origin.tid, NULL);
    close(origin.fd);
    close(origin.stop[0]);
    close(origin.stop[1]);
    free(origin.last_head);
    sl_buf_release(&origin.lines);
    pthread_mutex_destroy(&origin.mu);
}

/* The request lines the origin has seen, one a line, then forgets them. */
static char *origin_take_lines(void)
{
    pthread_mutex_lock(&origin.mu);
    char *l = sl_xstrdup(origin.lines.data ? origin.lines.data : "");
    sl_buf_reset(&origin.lines);
    pthread_mutex_unlock(&origin.mu);
    return l;
}

static char *origin_last_head(void)
{
    pthread_mutex_lock(&origin.mu);
    char *h = sl_xstrdup(origin.last_head ? origin.last_head : "");
    pthread_mutex_unlock(&origin.mu);
    return h;
}

/* ---- the proxy ---- */

static sl_proxy *proxy_on_tcp(const char *allow, int *port)
{
    sl_proxy *p = NULL;
    sl_err err = {0};
    if (sl_proxy_start(listen_tcp(port), allow, &p, &err) < 0) {
        fprintf(stderr, "proxy start: %s\n", err.msg);
        abort();
    }
    return p;
}

/* An allow list naming the origin's address and port (entries without a
 * port open 80 and 443 only). */
static sl_proxy *proxy_for_origin(int *port)
{
    char *allow = sl_xasprintf("127.0.0.1:%d", origin.port);
    sl_proxy *p = proxy_on_tcp(allow, port);
    free(allow);
    return p;
}

/* ---- the allow list ---- */

static void expect(const sl_proxy *p, const char *host, int port, const char *want)
{
    sl_err e = {0};
    int rc = sl_proxy_check_host(p, host, port, &e);
    const char *r = rc ? e.msg : NULL;
    CHECK(rc == (want ? -1 : 0) && (!rc || (e.code == SL_EINVAL && e.msg)),
          "%s port %d: %s, and err %s", host, port, rc ? "refused" : "allowed",
          rc ? "says why" : "is clear");
    if (!want)
        CHECK(r == NULL, "%s port %d is allowed (got: %s)", host, port, r ? r : "allowed");
    else
        CHECK(r && strstr(r, want), "%s port %d is refused with \"%s\" (got: %s)", host, port, want,
              r ? r : "allowed");
    sl_err_clear(&e);
}

static void test_rules(void)
{
    int port;
    sl_proxy *p = proxy_on_tcp(" pypi.org, *.pythonhosted.org,api.example.com:443 , 10.0.0.5, "
                               "::1, [fe80::1]:8080, Example.NET., 127.0.0.1",
                               &port);
    expect(p, "pypi.org", 443, NULL);
    expect(p, "pypi.org", 80, NULL);
    expect(p, "pypi.org", 22,
           "port 22 of host pypi.org is not in the allow list: an entry without a port allows "
           "ports 80 and 443 only; list pypi.org:22 to allow this one");
    expect(p, "pypi.org", 8080, "port 8080 of host pypi.org is not in the allow list");
    expect(p, "files.pythonhosted.org", 8443, "port 8443 of host files.pythonhosted.org");
    expect(p, "PyPI.ORG", 443, NULL);
    expect(p, "pypi.org.", 443, NULL);
    expect(p, "www.pypi.org", 443, "host www.pypi.org is not in the allow list");
    expect(p, "pypi.org.evil.com", 443, "not in the allow list");
    expect(p, "files.pythonhosted.org", 443, NULL);
    expect(p, "a.b.c.Pythonhosted.org.", 443, NULL);
    expect(p, "pythonhosted.org", 443, "host pythonhosted.org is not in the allow list");
    expect(p, "evilpythonhosted.org", 443, "not in the allow list");
    expect(p, "api.example.com", 443, NULL);
    expect(p, "api.example.com", 80, "port 80 of host api.example.com is not in the allow list");
    expect(p, "example.net", 80, NULL);
    expect(p, "EXAMPLE.net.", 80, NULL);
    expect(p, "10.0.0.5", 443, NULL);
    expect(p, "10.0.0.5", 5432, "port 5432 of host 10.0.0.5 is not in the allow list");
    expect(p, "10.0.0.6", 5432,
           "host 10.0.0.6 is not in the allow list: IP addresses must be listed literally, "
           "and this one is a private address (10.0.0.0/8)");
    expect(p, "::1", 80, NULL);
    expect(p, "[::1]", 80, NULL);
    expect(p, "0:0:0:0:0:0:0:1", 80, NULL);
    expect(p, "::2", 80, "IP addresses must be listed literally");
    expect(p, "::1", 8080, "list [::1]:8080 to allow this one");
    expect(p, "fe80::1", 8080, NULL);
    expect(p, "[FE80::1]", 8080, NULL);
    expect(p, "fe80::1", 80, "port 80 of host fe80::1 is not in the allow list");
    expect(p, "127.0.0.1", 80, NULL);
    /* Other spellings of a listed address are the address. */
    expect(p, "127.1", 80, NULL);
    expect(p, "10.0.5", 80, NULL);
    expect(p, "127.0.0.2", 80, "a loopback address");
    expect(p, "2130706434", 80, "host 2130706434 is not in the allow list: IP addresses");
    expect(p, "a b", 80, "not a valid host name");
    expect(p, "", 80, "not a valid host name");
    expect(p, "pypi.org", 0, "not a valid port");
    expect(p, "evil.com", 443,
           "host evil.com is not in the allow list (allowed: pypi.org, *.pythonhosted.org, "
           "api.example.com:443, 10.0.0.5, ::1, [fe80::1]:8080, example.net, 127.0.0.1)");
    sl_proxy_stop(p);

    p = proxy_on_tcp("*", &port);
    expect(p, "anything.example", 443, NULL);
    expect(p, "anything.example", 80, NULL);
    expect(p, "anything.example", 25, "port 25 of host anything.example is not in the allow list");
    expect(p, "anything.example", 8080, "ports 80 and 443 only");
    expect(p, "localhost", 80, NULL);   /* its address is checked when connecting */
    expect(p, "8.8.8.8", 443, "IP addresses must be listed literally");
    expect(p, "[2001:4860:4860::8888]", 443, "IP addresses must be listed literally");
    expect(p, "169.254.169.254", 80, "a link-local address");
    sl_proxy_stop(p);

    p = proxy_on_tcp("*:443, 8.8.8.8:53", &port);
    expect(p, "anything.example", 443, NULL);
    expect(p, "anything.example", 80, "port 80 of host anything.example");
    expect(p, "8.8.8.8", 53, NULL);
    expect(p, "8.8.8.8", 443, "port 443 of host 8.8.8.8");
    sl_proxy_stop(p);

    /* A port on a wildcard; a host listed twice opens both. */
    p = proxy_on_tcp("*.example.org:8443, git.example:22, git.example", &port);
    expect(p, "a.example.org", 8443, NULL);
    expect(p, "a.example.org", 443, "port 443 of host a.example.org is not in the allow list");
    expect(p, "git.example", 22, NULL);
    expect(p, "git.example", 443, NULL);
    expect(p, "git.example", 80, NULL);
    expect(p, "git.example", 2222, "port 2222 of host git.example");
    sl_proxy_stop(p);

    p = proxy_on_tcp("", &port);
    expect(p, "pypi.org", 443, "host pypi.org is not in the allow list (the allow list is empty)");
    sl_proxy_stop(p);
    p = proxy_on_tcp(NULL, &port);
    expect(p, "pypi.org", 443, "the allow list is empty");
    sl_proxy_stop(p);
}

static void test_bad_lists(void)
{
    static const char *const bad[] = {"foo*.org", "pypi.org:0", "pypi.org:70000", "*.",
                                      "a..b",     "[::1",       "pypi.org:x",     "*.*.org",
                                      "pypi org", "ok.org, bad/one"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int port;
        int fd = listen_tcp(&port);
        sl_proxy *p = (sl_proxy *)&port;
        sl_err err = {0};
        int rc = sl_proxy_start(fd, bad[i], &p, &err);
        CHECK(rc == -1 && err.code == SL_EINVAL && p == NULL && err.msg &&
                  strstr(err.msg, "allow list: entry"),
              "allow \"%s\" is refused (got %d: %s)", bad[i], rc, err.msg ? err.msg : "");
        CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
              "allow \"%s\": the listening socket is closed on failure", bad[i]);
        sl_err_clear(&err);
        if (rc == 0)
            sl_proxy_stop(p);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sl_proxy *p = NULL;
    sl_err err = {0};
    int rc = sl_proxy_start(fd, "pypi.org", &p, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "not a listening socket"),
          "a socket that does not listen is refused (got %s)", err.msg ? err.msg : "");
    sl_err_clear(&err);
}

/* ---- end to end ---- */

static const char *body_of(const char *resp)
{
    const char *b = strstr(resp, "\r\n\r\n");
    return b ? b + 4 : "";
}

/* CONNECT through fd, then one request inside the tunnel; the answer. */
static char *tunnel(int fd, const char *target, const char *inner, bool half_close, char **head)
{
    char *req = sl_xasprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
    send_str(fd, req, strlen(req));
    free(req);
    *head = read_head(fd);
    if (strncmp(*head, "HTTP/1.1 200 ", 13))
        return read_all(fd, NULL);
    send_str(fd, inner, strlen(inner));
    if (half_close)
        shutdown(fd, SHUT_WR);
    return read_all(fd, NULL);
}

static void test_connect(void)
{
    int port;
    sl_proxy *p = proxy_for_origin(&port);
    char *target = sl_xasprintf("127.0.0.1:%d", origin.port), *head;

    int fd = dial_tcp(port);
    char *r = tunnel(fd, target, "GET /in-tunnel HTTP/1.1\r\nHost: x\r\n\r\n", false, &head);
    close(fd);
    CHECK(!strcmp(head, "HTTP/1.1 200 Connection Established\r\n\r\n"),
          "CONNECT is answered 200 Connection Established (got %s)", esc(head));
    CHECK(!strcmp(body_of(r), "hello from origin"), "bytes arrive through the tunnel (got %s)",
          esc(r));
    char *oh = origin_last_head();
    CHECK(!strncmp(oh, "GET /in-tunnel HTTP/1.1\r\n", 25),
          "the origin gets the tunnelled request unchanged (got %s)", esc(oh));
    free(oh);
    free(head);
    free(r);

    /* The client half-closes; the origin sees EOF, answers, and the answer
     * still comes back. */
    fd = dial_tcp(port);
    r = tunnel(fd, target, "GET /untileof HTTP/1.1\r\n\r\n12345", true, &head);
    close(fd);
    CHECK(!strcmp(body_of(r), "got 5"), "a half-close passes through the tunnel (got %s)", esc(r));
    free(head);
    free(r);

    /* Bytes sent right behind the CONNECT head are not lost. */
    fd = dial_tcp(port);
    char *req = sl_xasprintf("CONNECT %s HTTP/1.1\r\n\r\nGET /early HTTP/1.1\r\n\r\n", target);
    send_str(fd, req, strlen(req));
    r = read_all(fd, NULL);
    close(fd);
    CHECK(strstr(r, "200 Connection Established") && strstr(r, "hello from origin"),
          "bytes sent before the 200 reach the origin (got %s)", esc(r));
    free(req);
    free(r);

    /* A large body in both directions (more than the relay buffers). */
    size_t big = 300 * 1000;
    char *payload = sl_xmalloc(big);
    for (size_t i = 0; i < big; i++)
        payload[i] = (char)('a' + i % 26);
    char *inner = sl_xasprintf("POST /echo HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", big);
    fd = dial_tcp(port);
    req = sl_xasprintf("CONNECT %s HTTP/1.1\r\n\r\n", target);
    send_str(fd, req, strlen(req));
    head = read_head(fd);
    send_str(fd, inner, strlen(inner));
    send_str(fd, payload, big);
    size_t n;
    r = read_all(fd, &n);
    close(fd);
    const char *b = body_of(r);
    CHECK(n - (size_t)(b - r) == big && !memcmp(b, payload, big),
          "300 kB go through the tunnel and back (got %zu bytes)", n);
    free(req);
    free(inner);
    free(head);
    free(r);
    free(payload);

    sl_proxy_stats st;
    sl_proxy_get_stats(p, &st);
    CHECK(st.allowed == 4 && st.refused == 0, "stats count 4 allowed, 0 refused (got %lu, %lu)",
          st.allowed, st.refused);
    free(target);
    sl_proxy_stop(p);
}

static void test_unix_listener(void)
{
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    /* An abstract name: nothing to clean up on disk. */
    int k = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "sluice-proxy-test-%d", (int)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
    if (bind(lfd, (struct sockaddr *)&a, len) < 0 || listen(lfd, 4) < 0)
        abort();
    sl_proxy *p = NULL;
    sl_err err = {0};
    char *allow = sl_xasprintf("127.0.0.1:%d", origin.port);
    int rc = sl_proxy_start(lfd, allow, &p, &err);
    free(allow);
    CHECK(rc == 0, "the proxy starts on a unix socket (%s)", err.msg ? err.msg : "ok");
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rc < 0 || connect(fd, (struct sockaddr *)&a, len) < 0)
        abort();
    set_timeout(fd);
    char *target = sl_xasprintf("127.0.0.1:%d", origin.port), *head;
    char *r = tunnel(fd, target, "GET /unix HTTP/1.1\r\n\r\n", false, &head);
    close(fd);
    CHECK(strstr(head, " 200 ") && !strcmp(body_of(r), "hello from origin"),
          "CONNECT through a unix socket listener works (got %s%s)", esc(head), esc(r));
    free(target);
    free(head);
    free(r);
    sl_proxy_stop(p);
}

static void test_plain_http(void)
{
    int port;
    sl_proxy *p = proxy_for_origin(&port);
    char *req = sl_xasprintf("GET http://127.0.0.1:%d/path/x?q=1 HTTP/1.1\r\n"
                             "Host: somewhere.else\r\n"
                             "User-Agent: test\r\n"
                             "Proxy-Connection: keep-alive\r\n"
                             "Proxy-Authorization: Basic c2VjcmV0\r\n"
                             "Connection: keep-alive, X-Hop\r\n"
                             "X-Hop: 1\r\n"
                             "Accept: */*\r\n\r\n",
                             origin.port);
    char *r = ask1(port, req);
    CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && !strcmp(body_of(r), "hello from origin"),
          "an absolute-form GET is answered by the origin (got %s)", esc(r));
    char *oh = origin_last_head();
    char *want = sl_xasprintf("GET /path/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                              "User-Agent: test\r\nAccept: */*\r\nConnection: close\r\n\r\n",
                              origin.port);
    CHECK(!strcmp(oh, want),
          "the origin gets origin-form, its own Host, no proxy or hop-by-hop headers, "
          "Connection: close (got %s)",
          esc(oh));
    free(want);
    free(oh);
    free(req);
    free(r);

    req = sl_xasprintf("GET http://127.0.0.1:%d HTTP/1.0\r\n\r\n", origin.port);
    r = ask1(port, req);
    oh = origin_last_head();
    CHECK(!strncmp(oh, "GET / HTTP/1.0\r\n", 16), "an empty path becomes / (got %s)", esc(oh));
    free(oh);
    free(req);
    free(r);

    req = sl_xasprintf("POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: 11\r\n\r\n"
                       "hello world",
                       origin.port);
    r = ask1(port, req);
    CHECK(!strcmp(body_of(r), "hello world"), "a POST body goes to the origin and back (got %s)",
          esc(r));
    free(req);
    free(r);

    r = ask(port, "GET https://127.0.0.1/ HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13) && strstr(r, "only http:// URLs"),
          "an https:// URL in a GET is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "GET ftp://127.0.0.1/x HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "an ftp:// URL is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "GET /local HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13) && strstr(r, "this is a proxy"),
          "an origin-form request is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "GET http://user:pw@127.0.0.1/ HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "credentials in the URL are 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "GET http://evil.example/ HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) &&
              strstr(r, "sluice sandbox proxy: host evil.example is not in the allow list "
                        "(allowed: 127.0.0.1:"),
          "a GET to a host not listed is 403 with the reason (got %s)", esc(r));
    free(r);
    r = ask(port, "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) &&
              strstr(r, "port 80 of host 127.0.0.1 is not in the allow list"),
          "a GET to a listed address on another port is 403 naming the port (got %s)", esc(r));
    free(r);
    sl_proxy_stop(p);
}

/* Sends req on a new connection to the proxy; the whole answer back
 * (the proxy closes after a refusal or a last response). */
static char *ask_all(int port, const char *req, size_t len)
{
    int fd = dial_tcp(port);
    send_str(fd, req, len);
    char *r = read_all(fd, NULL);
    close(fd);
    return r;
}

/* A refusal of req with 400 that names `why`, before any byte reaches
 * the origin. */
static void expect_400(int port, const char *req, const char *why, const char *what)
{
    free(origin_take_lines());
    char *r = ask_all(port, req, strlen(req));
    char *lines = origin_take_lines();
    CHECK(!strncmp(r, "HTTP/1.1 400 Bad Request\r\n", 26) && strstr(r, why) && !*lines,
          "%s: 400 naming \"%s\", nothing reaches the origin (got %s; origin saw %s)", what, why,
          esc(r), esc(lines));
    free(lines);
    free(r);
}

/* Plain-http connections carry one request after another, each read,
 * framed and checked on its own: a second request to a host or port not
 * listed is refused, never piped to the first one's origin, and a request
 * hidden in a body stays body. */
static void test_keepalive(void)
{
    int port, o = origin.port;
    char *allow = sl_xasprintf("127.0.0.1:%d, pypi.org", o);
    sl_proxy *p = proxy_on_tcp(allow, &port);
    free(allow);
    free(origin_take_lines());

    /* Two requests in turn on one connection. */
    int fd = dial_tcp(port);
    char *req = sl_xasprintf("GET http://127.0.0.1:%d/one HTTP/1.1\r\n\r\n", o);
    send_str(fd, req, strlen(req));
    free(req);
    char *r = read_one(fd);
    CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && !strcasestr(r, "connection:") &&
              !strcmp(body_of(r), "hello from origin"),
          "the first request is answered and the connection stays open (got %s)", esc(r));
    free(r);
    req = sl_xasprintf("GET http://127.0.0.1:%d/two HTTP/1.1\r\nConnection: close\r\n\r\n", o);
    send_str(fd, req, strlen(req));
    free(req);
    r = read_one(fd);
    CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && strstr(r, "\r\nConnection: close\r\n") &&
              !strcmp(body_of(r), "hello from origin") && closed_by_peer(fd),
          "a second request on it is answered, and Connection: close ends it (got %s)", esc(r));
    free(r);
    close(fd);
    char *lines = origin_take_lines();
    CHECK(!strcmp(lines, "GET /one HTTP/1.1\nGET /two HTTP/1.1\n"),
          "the origin got both requests, each on its own (got %s)", esc(lines));
    free(lines);

    /* Pipelined behind an allowed request: a host not listed, a listed
     * address on a port not listed, a listed name on a port not listed. */
    static const char *const second[][2] = {
        {"GET http://evil.example/steal HTTP/1.1\r\nHost: evil.example\r\n\r\n",
         "host evil.example is not in the allow list"},
        {"GET http://127.0.0.1:22/ HTTP/1.1\r\n\r\n", "port 22 of host 127.0.0.1 is not in"},
        {"POST http://pypi.org:8080/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
         "port 8080 of host pypi.org is not in the allow list"},
        {"CONNECT evil.example:443 HTTP/1.1\r\n\r\n", "host evil.example is not in"},
    };
    for (size_t i = 0; i < sizeof second / sizeof second[0]; i++) {
        req = sl_xasprintf("GET http://127.0.0.1:%d/first HTTP/1.1\r\n\r\n%s", o, second[i][0]);
        r = ask_all(port, req, strlen(req));
        const char *refusal = strstr(r, "HTTP/1.1 403 Forbidden\r\n");
        lines = origin_take_lines();
        CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && strstr(r, "hello from origin") &&
                  refusal && strstr(refusal, second[i][1]) &&
                  !strcmp(lines, "GET /first HTTP/1.1\n"),
              "a pipelined %.*s is refused on its own and never reaches the first origin "
              "(got %s; origin saw %s)",
              (int)strcspn(second[i][0], "\r"), second[i][0], esc(r), esc(lines));
        free(lines);
        free(r);
        free(req);
    }

    /* A request inside a Content-Length body is body. */
    static const char hidden[] = "GET http://evil.example/ HTTP/1.1\r\n\r\n";
    req = sl_xasprintf("POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s"
                       "GET http://127.0.0.1:%d/after HTTP/1.1\r\nConnection: close\r\n\r\n",
                       o, sizeof hidden - 1, hidden, o);
    r = ask_all(port, req, strlen(req));
    lines = origin_take_lines();
    CHECK(strstr(r, hidden) && !strstr(r, " 403 ") && strstr(r, "hello from origin") &&
              !strcmp(lines, "POST /echo HTTP/1.1\nGET /after HTTP/1.1\n"),
          "a request inside a Content-Length body goes as body; the next one is read after it "
          "(got %s; origin saw %s)",
          esc(r), esc(lines));
    free(lines);
    free(r);
    free(req);

    /* Chunked: re-encoded (extension and trailer dropped); what follows
     * the last chunk is the next request, and checked. */
    req = sl_xasprintf("POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                       "\r\n5;x=y\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n%s",
                       o, hidden);
    r = ask_all(port, req, strlen(req));
    lines = origin_take_lines();
    const char *refusal = strstr(r, "HTTP/1.1 403 ");
    CHECK(strstr(r, "\r\n\r\n5\r\nhello\r\n0\r\n\r\n") && refusal &&
              strstr(refusal, "host evil.example is not in the allow list") &&
              !strcmp(lines, "POST /echo HTTP/1.1\n"),
          "a chunked body reaches the origin re-encoded and a request after its last chunk is "
          "checked (got %s; origin saw %s)",
          esc(r), esc(lines));
    free(lines);
    free(r);
    free(req);

    /* Framing the proxy will not guess at. */
    static const char *const bad[][3] = {
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: 4\r\n"
         "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         "both Content-Length and Transfer-Encoding", "Content-Length with Transfer-Encoding"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
         "Content-Length: 4\r\n\r\n0\r\n\r\n",
         "both Content-Length and Transfer-Encoding", "Transfer-Encoding with Content-Length"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
         "is not \"chunked\"", "a coding besides chunked"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
         "Transfer-Encoding: chunked\r\n\r\n",
         "is not \"chunked\"", "chunked twice"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
         "is not \"chunked\"", "a coding that only looks like chunked"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
         "HTTP/1.0 request cannot use Transfer-Encoding", "chunked in HTTP/1.0"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n"
         "\r\nabcde",
         "Content-Length is given twice with different values", "two lengths"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\nabcd",
         "Content-Length is not a number", "a list of lengths"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
         "Content-Length is not a number", "a negative length"},
        {"POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n",
         "Content-Length is not a number", "a hexadecimal length"},
        {"GET http://127.0.0.1:%d/ HTTP/1.1\r\nX-A: 1\rTransfer-Encoding: chunked\r\n\r\n",
         "a CR without LF", "a header hidden behind a bare CR"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        req = sl_xasprintf(bad[i][0], o);
        expect_400(port, req, bad[i][1], bad[i][2]);
        free(req);
    }

    /* Malformed chunks: 400, and nothing after them is read as a request. */
    static const char *const chunks[][3] = {
        {"zz\r\n", "chunk size is not a hexadecimal number", "a size that is not hex"},
        {" 5\r\nhello\r\n0\r\n\r\n", "chunk size is not a hexadecimal", "space before a size"},
        {"5 \r\nhello\r\n0\r\n\r\n", "chunk size is not a hexadecimal", "space after a size"},
        {"5\nhello\r\n0\r\n\r\n", "chunk size line does not end in CRLF", "a bare LF"},
        {"5\r\nhelloX\r\n0\r\n\r\n", "chunk data is not followed by CRLF", "data overrunning"},
        {"10000000000000000\r\n", "chunk size is too large", "a size past 2^60"},
        {"-5\r\nhello\r\n0\r\n\r\n", "chunk size is not a hexadecimal", "a negative size"},
        {"0\r\nX: 1\n\r\n", "trailer line does not end in CRLF", "a trailer with a bare LF"},
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        req = sl_xasprintf("POST http://127.0.0.1:%d/echo HTTP/1.1\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n%s%s",
                           o, chunks[i][0], hidden);
        free(origin_take_lines());
        r = ask_all(port, req, strlen(req));
        lines = origin_take_lines();
        CHECK(strstr(r, "HTTP/1.1 400 Bad Request\r\n") && strstr(r, chunks[i][1]) &&
                  !strstr(r, " 403 ") && !strstr(lines, "evil"),
              "%s in a chunked body: 400 naming \"%s\" (got %s; origin saw %s)", chunks[i][2],
              chunks[i][1], esc(r), esc(lines));
        free(lines);
        free(r);
        free(req);
    }

    /* Responses: chunked ones re-encoded, trailer dropped, and the
     * connection goes on; one framed by closing ends the connection; a
     * length beside Transfer-Encoding is dropped. */
    fd = dial_tcp(port);
    req = sl_xasprintf("GET http://127.0.0.1:%d/chunked HTTP/1.1\r\n\r\n", o);
    send_str(fd, req, strlen(req));
    free(req);
    r = read_one(fd);
    CHECK(strstr(r, "\r\nTransfer-Encoding: chunked\r\n") && !strcasestr(r, "connection:") &&
              !strcmp(body_of(r), "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
          "a chunked response is passed on re-encoded, its trailer dropped (got %s)", esc(r));
    free(r);
    req = sl_xasprintf("GET http://127.0.0.1:%d/noframe HTTP/1.1\r\n\r\n", o);
    send_str(fd, req, strlen(req));
    free(req);
    r = read_one(fd);
    CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && strstr(r, "\r\nConnection: close\r\n") &&
              !strcmp(body_of(r), "until the origin closes"),
          "after it, a response framed by closing ends the connection (got %s)", esc(r));
    free(r);
    close(fd);
    req = sl_xasprintf("GET http://127.0.0.1:%d/both HTTP/1.1\r\n\r\n", o);
    r = ask1(port, req);
    CHECK(!strcasestr(r, "content-length") && !strcmp(body_of(r), "4\r\nboth\r\n0\r\n\r\n"),
          "Content-Length beside Transfer-Encoding in a response is dropped (got %s)", esc(r));
    free(r);
    free(req);

    /* Expect: 100-continue: the interim answer comes through, then the
     * body goes and the final answer comes back. */
    fd = dial_tcp(port);
    req = sl_xasprintf("POST http://127.0.0.1:%d/continue HTTP/1.1\r\nContent-Length: 5\r\n"
                       "Expect: 100-continue\r\n\r\n",
                       o);
    send_str(fd, req, strlen(req));
    free(req);
    char *interim = read_head(fd);
    send_str(fd, "hello", 5);
    r = read_one(fd);
    close(fd);
    CHECK(!strcmp(interim, "HTTP/1.1 100 Continue\r\n\r\n") && !strcmp(body_of(r), "hello"),
          "100 Continue reaches the client before the body goes (got %s then %s)", esc(interim),
          esc(r));
    free(interim);
    free(r);

    /* Large bodies both ways, by length and in many small chunks (more
     * than the proxy's buffers hold, so they refill mid-chunk). */
    size_t big = 300 * 1000;
    sl_buf body;
    sl_buf_init(&body, 0);
    sl_buf_addf(&body, "POST http://127.0.0.1:%d/echo HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", o,
                big);
    size_t head_len = body.len;
    for (size_t i = 0; i < big; i++)
        sl_buf_addc(&body, (char)('a' + i % 26));
    fd = dial_tcp(port);
    send_str(fd, body.data, body.len);
    r = read_one(fd);
    close(fd);
    CHECK(strlen(body_of(r)) == big && !memcmp(body_of(r), body.data + head_len, big),
          "a 300 kB body by length goes to the origin and back (got %zu bytes)",
          strlen(body_of(r)));
    free(r);
    sl_buf_reset(&body);
    sl_buf_addf(&body, "POST http://127.0.0.1:%d/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                o);
    for (int i = 0; i < 20000; i++)
        sl_buf_addf(&body, "%x\r\n%0*d\r\n", 1 + i % 16, 1 + i % 16, 0);
    sl_buf_adds(&body, "0\r\n\r\n");
    fd = dial_tcp(port);
    send_str(fd, body.data, body.len);
    r = read_one(fd);
    close(fd);
    /* Decoded, what came back must be the zeros that went. */
    size_t want = 0, got = 0;
    for (int i = 0; i < 20000; i++)
        want += (size_t)(1 + i % 16);
    bool well_formed = true;
    for (const char *q = body_of(r);;) {
        char *e;
        unsigned long n = strtoul(q, &e, 16);
        if (e == q || strncmp(e, "\r\n", 2)) {
            well_formed = false;
            break;
        }
        q = e + 2;
        if (!n) {
            well_formed = !strcmp(q, "\r\n");
            break;
        }
        for (unsigned long k = 0; k < n; k++)
            well_formed &= q[k] == '0';
        got += n;
        q += n;
        if (strncmp(q, "\r\n", 2)) {
            well_formed = false;
            break;
        }
        q += 2;
    }
    CHECK(well_formed && got == want,
          "20,000 small chunks reach the origin, re-encoded, with every byte (got %zu of %zu)",
          got, want);
    free(r);
    sl_buf_release(&body);

    /* HTTP/1.0: one request per connection. */
    fd = dial_tcp(port);
    req = sl_xasprintf("GET http://127.0.0.1:%d/ten HTTP/1.0\r\n\r\n", o);
    send_str(fd, req, strlen(req));
    free(req);
    r = read_one(fd);
    CHECK(strstr(r, "\r\nConnection: close\r\n") && closed_by_peer(fd),
          "an HTTP/1.0 request gets Connection: close and the connection ends (got %s)", esc(r));
    free(r);
    close(fd);
    free(origin_take_lines());
    sl_proxy_stop(p);
}

static void test_refusals(void)
{
    int port;
    char *allow = sl_xasprintf("localhost:%d, *.invalid, pypi.org", origin.port);
    sl_proxy *p = proxy_on_tcp(allow, &port);
    free(allow);
    char *req = sl_xasprintf("CONNECT localhost:%d HTTP/1.1\r\n\r\n", origin.port);
    char *r = ask(port, req);
    CHECK(!strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) &&
              strstr(r, "host localhost resolves to ") && strstr(r, "loopback address"),
          "a listed name that resolves to loopback is 403 (got %s)", esc(r));
    free(r);
    free(req);

    r = ask(port, "CONNECT evil.example:443 HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) &&
              strstr(r, "Content-Type: text/plain") &&
              strstr(body_of(r), "sluice sandbox proxy: host evil.example is not in the allow "
                                 "list (allowed: localhost:") &&
              strstr(body_of(r), ", *.invalid, pypi.org)\n"),
          "CONNECT to a host not listed is 403 with the reason (got %s)", esc(r));
    free(r);

    /* A listed host is open on 80 and 443 only: no tunnel to its SSH
     * port, refused before the name is resolved. */
    r = ask(port, "CONNECT pypi.org:22 HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) &&
              strstr(body_of(r), "sluice sandbox proxy: port 22 of host pypi.org is not in the "
                                 "allow list: an entry without a port allows ports 80 and 443 "
                                 "only; list pypi.org:22 to allow this one (allowed: "),
          "CONNECT to a listed host on another port is 403 naming the rule (got %s)", esc(r));
    free(r);

    r = ask(port, "CONNECT 127.0.0.1:80 HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 403 ", 13) &&
              strstr(r, "host 127.0.0.1 is not in the allow list: IP addresses must be listed "
                        "literally, and this one is a loopback address"),
          "an IP literal not listed is 403 (got %s)", esc(r));
    free(r);

    /* A name the resolver rejects without asking DNS (a 64-byte label). */
    r = ask(port, "CONNECT aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.invalid:443 HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 502 ", 13) && strstr(r, "cannot resolve host"),
          "a name that does not resolve is 502 (got %s)", esc(r));
    free(r);

    r = ask(port, "garbage\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 Bad Request\r\n", 26), "garbage is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "binary garbage (TLS without CONNECT) is 400 at once "
                                            "(got %s)",
          esc(r));
    free(r);
    r = ask(port, "CONNECT evil.example HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "CONNECT without a port is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "CONNECT ::1:443 HTTP/1.1\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "CONNECT to IPv6 without brackets is 400 (got %s)",
          esc(r));
    free(r);
    r = ask(port, "GET http://x/ HTTP/2.0\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "HTTP/2.0 in the request line is 400 (got %s)", esc(r));
    free(r);
    r = ask(port, "GET http://x/ HTTP/1.1\r\n folded: header\r\n\r\n");
    CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "a folded header line is 400 (got %s)", esc(r));
    free(r);

    sl_buf huge;
    sl_buf_init(&huge, 0);
    sl_buf_adds(&huge, "GET http://x.invalid/ HTTP/1.1\r\n");
    while (huge.len < 17000)
        sl_buf_adds(&huge, "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    sl_buf_adds(&huge, "\r\n");
    r = ask(port, huge.data);
    CHECK(!strncmp(r, "HTTP/1.1 431 ", 13), "a head over 16 KiB is 431 (got %s)", esc(r));
    free(r);
    sl_buf_release(&huge);

    sl_proxy_stats st;
    sl_proxy_get_stats(p, &st);
    CHECK(st.allowed == 0 && st.refused == 4, "stats count 0 allowed, 4 refused (got %lu, %lu)",
          st.allowed, st.refused);
    sl_proxy_stop(p);

    /* Listing the loopback literals lets the name through. */
    int closed_port;
    close(listen_tcp(&closed_port));
    allow = sl_xasprintf("localhost:%d, 127.0.0.1:%d, [::1]:%d, 127.0.0.1:%d", origin.port,
                         origin.port, origin.port, closed_port);
    p = proxy_on_tcp(allow, &port);
    free(allow);
    int fd = dial_tcp(port);
    char *target = sl_xasprintf("localhost:%d", origin.port), *head;
    r = tunnel(fd, target, "GET /via-name HTTP/1.1\r\n\r\n", false, &head);
    close(fd);
    CHECK(strstr(head, " 200 ") && !strcmp(body_of(r), "hello from origin"),
          "a name resolving to a listed literal goes through (got %s%s)", esc(head), esc(r));
    free(head);
    free(r);
    free(target);

    /* A port nobody listens on. */
    req = sl_xasprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", closed_port);
    r = ask(port, req);
    CHECK(!strncmp(r, "HTTP/1.1 502 ", 13) && strstr(r, "cannot connect to host 127.0.0.1"),
          "a refused connection is 502 (got %s)", esc(r));
    free(r);
    free(req);
    sl_proxy_stop(p);
}

/* stop closes tunnels that are still open and returns. */
static void test_stop(void)
{
    int port;
    sl_proxy *p = proxy_for_origin(&port);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = dial_tcp(port);
        char *req = sl_xasprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", origin.port);
        send_str(fds[i], req, strlen(req));
        free(req);
        char *head = read_head(fds[i]);
        CHECK(strstr(head, " 200 "), "tunnel %d is open (got %s)", i, esc(head));
        free(head);
    }
    /* One more connection that never finishes its head. */
    int idle = dial_tcp(port);
    send_str(idle, "CONNECT 127.0", 13);
    sl_proxy_stop(p);
    for (int i = 0; i < 3; i++) {
        char c;
        ssize_t k = recv(fds[i], &c, 1, 0);
        CHECK(k == 0 || (k < 0 && errno == ECONNRESET), "stop closed tunnel %d (recv %zd)", i, k);
        close(fds[i]);
    }
    char c;
    ssize_t k = recv(idle, &c, 1, 0);
    CHECK(k <= 0 && !(k < 0 && errno == EAGAIN), "stop closed a connection still sending its head");
    close(idle);
}

int main(void)
{
    test_rules();
    test_bad_lists();
    origin_start();
    test_connect();
    test_unix_listener();
    test_plain_http();
    test_keepalive();
    test_refusals();
    test_stop();
    origin_stop();
    return tap_done();
}
