/*
 * fuzz_proxy — libFuzzer target for the sandbox's egress proxy
 * (sandbox/proxy) and its HTTP/1.1 framing (sandbox/h1).
 *
 * The first byte picks what the rest feeds:
 *
 *   odd        "allow-list\nhost": the list goes to sl_proxy_start and the
 *              host to sl_proxy_check_host.  A refusal always says why.
 *   2 mod 4    the framing functions alone: sl_h1_body_of on the text (as a
 *              request and as a response) and the chunked decoder on the
 *              bytes, fed whole and again one byte at a time: both ways
 *              must decode the same data and end the same way.
 *   0 mod 4    a client conversation with a live proxy over a unix socket,
 *              "CLIENT\n--origin--\nORIGIN": CLIENT goes to the proxy ("@@"
 *              becomes the port of an origin server on 127.0.0.1), and the
 *              origin answers every connection with ORIGIN.  The proxy
 *              allows that origin and loopback's discard port only, so no
 *              input resolves a name or reaches beyond this machine.
 *
 * Checks besides memory errors: the proxy answers with an HTTP status line
 * or closes, within its own timeouts; and what reaches the origin over a
 * plain-http request is one request in origin form with "Connection:
 * close", framing the proxy accepts, and not a byte after its body: a
 * request smuggled past the checks would break that.  (CONNECT tunnels
 * carry the client's raw bytes, so inputs with CONNECT skip that check.)
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/err.h"
#include "sandbox/h1.h"
#include "sandbox/proxy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the origin ---- */

static struct {
    int fd, port;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    int busy;                  /* connections being served */
    char *answer;              /* what every connection gets */
    size_t answer_len;
    bool check;                /* judge what arrives */
} origin;

static size_t find(const char *h, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(h + i, needle, k))
            return i;
    return (size_t)-1;
}

/* What the proxy forwarded on one origin connection: one request in
 * origin form, framed as the proxy accepts, nothing after its body. */
static void check_forwarded(const char *got, size_t n)
{
    size_t e = find(got, n, "\r\n\r\n");
    if (e == (size_t)-1)
        abort(); /* the head goes out whole, before anything else */
    char *head = strndup(got, e + 4);
    const char *sp = strchr(head, ' ');
    const char *eol = strstr(head, "\r\n");
    if (!sp || sp > eol || sp[1] != '/')
        abort(); /* origin form: the proxy strips the scheme and host */
    if (!strstr(head, "\r\nConnection: close\r\n") ||
        strcasestr(head, "\r\nproxy-authorization:") ||
        strcasestr(head, "\r\nproxy-connection:") || strcasestr(head, "\r\nkeep-alive:"))
        abort(); /* hop-by-hop headers are the proxy's own */
    bool http10 = !strncmp(eol - 8, "HTTP/1.0", 8);
    sl_h1_body b;
    if (sl_h1_body_of(eol + 2, true, http10, &b, NULL) < 0)
        abort(); /* only framing the proxy accepts goes out */
    const char *rest = got + e + 4;
    size_t rn = n - e - 4;
    if (b.kind == SL_H1_NONE && rn)
        abort();
    if (b.kind == SL_H1_LENGTH && rn > b.length)
        abort();
    if (b.kind == SL_H1_CHUNKED) {
        sl_h1_chunked c;
        memset(&c, 0, sizeof c);
        size_t at = 0;
        while (at < rn && !c.done) {
            size_t off, dlen;
            long used = sl_h1_chunked_feed(&c, rest + at, rn - at, &off, &dlen, NULL);
            if (used < 0)
                abort(); /* the proxy writes well-formed chunks */
            at += (size_t)used;
        }
        if (at != rn)
            abort(); /* bytes after the last chunk */
    }
    free(head);
}

static void serve_origin(int fd)
{
    struct timeval tv = {35, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t cap = 1 << 16, n = 0;
    char *got = malloc(cap);
    bool answered = false;
    for (;;) {
        if (n == cap)
            got = realloc(got, cap *= 2);
        ssize_t k = recv(fd, got + n, cap - n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            abort(); /* the proxy must close within its own timeouts */
        if (k <= 0)
            break;
        n += (size_t)k;
        if (!answered && find(got, n, "\r\n\r\n") != (size_t)-1) {
            pthread_mutex_lock(&origin.mu);
            size_t off = 0;
            while (off < origin.answer_len) {
                ssize_t s = send(fd, origin.answer + off, origin.answer_len - off, MSG_NOSIGNAL);
                if (s <= 0)
                    break;
                off += (size_t)s;
            }
            pthread_mutex_unlock(&origin.mu);
            shutdown(fd, SHUT_WR);
            answered = true;
        }
    }
    pthread_mutex_lock(&origin.mu);
    bool check = origin.check;
    pthread_mutex_unlock(&origin.mu);
    if (check && n)
        check_forwarded(got, n);
    free(got);
}

static void *origin_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept4(origin.fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break;
        }
        pthread_mutex_lock(&origin.mu);
        origin.busy++;
        pthread_mutex_unlock(&origin.mu);
        serve_origin(fd);
        close(fd);
        pthread_mutex_lock(&origin.mu);
        if (--origin.busy == 0)
            pthread_cond_broadcast(&origin.idle);
        pthread_mutex_unlock(&origin.mu);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    origin.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (origin.fd < 0 || bind(origin.fd, (struct sockaddr *)&a, sizeof a) ||
        listen(origin.fd, 16) || getsockname(origin.fd, (struct sockaddr *)&a, &l))
        abort();
    origin.port = ntohs(a.sin_port);
    pthread_mutex_init(&origin.mu, NULL);
    pthread_cond_init(&origin.idle, NULL);
    if (pthread_create(&origin.tid, NULL, origin_main, NULL))
        abort();
    return 0;
}

/* ---- the allow list ---- */

/* A listening unix socket on an autobound abstract address. */
static int listener(struct sockaddr_un *a, socklen_t *len)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un any = {.sun_family = AF_UNIX};
    if (fd < 0 || bind(fd, (struct sockaddr *)&any, sizeof(sa_family_t)) || listen(fd, 16))
        abort();
    *len = sizeof *a;
    if (getsockname(fd, (struct sockaddr *)a, len))
        abort();
    return fd;
}

static void check_allow_list(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char *nl = memchr(text, '\n', size);
    const char *host = "pypi.org";
    if (nl) {
        *nl = 0;
        host = nl + 1;
    }
    struct sockaddr_un a;
    socklen_t len;
    int fd = listener(&a, &len);
    sl_proxy *p = NULL;
    sl_err err = {0};
    if (sl_proxy_start(fd, text, &p, &err) == 0) {
        sl_err why = {0};
        if (sl_proxy_check_host(p, host, 443, &why) && (!why.msg || !*why.msg))
            abort(); /* a refusal always says why */
        sl_err_clear(&why);
        sl_proxy_stop(p);
    } else if (!err.msg) {
        abort(); /* a refused list always says why */
    }
    sl_err_clear(&err);
    free(text);
}

/* ---- the framing alone ---- */

typedef struct {
    char *data;
    size_t len;
    long status;               /* -1 error, else bytes consumed in all */
    bool done;
} decoded;

/* Decodes in[0..n) in pieces of `step` bytes (0: all at once). */
static decoded decode(const char *in, size_t n, size_t step)
{
    decoded d = {malloc(n + 1), 0, 0, false};
    sl_h1_chunked c;
    memset(&c, 0, sizeof c);
    size_t at = 0;
    while (at < n && !c.done) {
        size_t piece = step && n - at > step ? step : n - at;
        size_t used_here = 0;
        while (used_here < piece && !c.done) {
            size_t off, dlen;
            sl_err why = {0};
            long used = sl_h1_chunked_feed(&c, in + at + used_here, piece - used_here, &off,
                                           &dlen, &why);
            if (used < 0) {
                if (why.code != SL_EINVAL || !why.msg || !*why.msg)
                    abort(); /* an error says what kind and why */
                sl_err_clear(&why);
                d.status = -1;
                return d;
            }
            if (why.code != SL_OK || why.msg)
                abort(); /* success leaves err alone */
            if (dlen > (size_t)used || off + dlen > (size_t)used)
                abort(); /* data lies inside what was consumed */
            memcpy(d.data + d.len, in + at + used_here + off, dlen);
            d.len += dlen;
            used_here += (size_t)used;
            if (!used)
                break;
        }
        at += used_here;
    }
    d.status = (long)at;
    d.done = c.done;
    return d;
}

static void check_framing(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    for (int req = 0; req < 2; req++)
        for (int v10 = 0; v10 < 2; v10++) {
            sl_h1_body b;
            sl_err why = {0};
            int rc = sl_h1_body_of(text, req, v10, &b, &why);
            if (rc < 0 && (why.code != SL_EINVAL || !why.msg || !*why.msg))
                abort(); /* an error says what kind and why */
            if (rc == 0 && (why.code != SL_OK || why.msg))
                abort(); /* success leaves err alone */
            if (!rc && req && (b.kind == SL_H1_CLOSE || b.both))
                abort(); /* a request body is never framed by closing */
            if (!rc && b.kind == SL_H1_LENGTH && !b.length)
                abort();
            sl_err_clear(&why);
        }
    (void)sl_h1_has_token(text, "connection", "close");
    decoded whole = decode((const char *)data, size, 0);
    decoded bytes = decode((const char *)data, size, 1);
    if (whole.status != bytes.status || whole.done != bytes.done ||
        (whole.status >= 0 && (whole.len != bytes.len || memcmp(whole.data, bytes.data, whole.len))))
        abort(); /* how the bytes arrive must not change what they mean */
    free(whole.data);
    free(bytes.data);
    free(text);
}

/* ---- a live conversation ---- */

static void send_request(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n--origin--\n";
    size_t cut = find((const char *)data, size, sep);
    size_t clen = cut == (size_t)-1 ? size : cut;
    /* The client's bytes with "@@" made the origin's port. */
    char port[8];
    snprintf(port, sizeof port, "%d", origin.port);
    char *client = malloc(clen * 3 + 1);
    size_t n = 0;
    for (size_t i = 0; i < clen; i++) {
        if (i + 1 < clen && data[i] == '@' && data[i + 1] == '@') {
            memcpy(client + n, port, strlen(port));
            n += strlen(port);
            i++;
        } else {
            client[n++] = (char)data[i];
        }
    }
    pthread_mutex_lock(&origin.mu);
    free(origin.answer);
    origin.answer_len = cut == (size_t)-1 ? 0 : size - cut - (sizeof sep - 1);
    origin.answer = malloc(origin.answer_len + 1);
    if (origin.answer_len)
        memcpy(origin.answer, data + cut + sizeof sep - 1, origin.answer_len);
    origin.check = find(client, n, "CONNECT") == (size_t)-1;
    pthread_mutex_unlock(&origin.mu);

    /* A proxy per input: stopping it joins its threads, so every input
     * ends with nothing running and leak checks see the whole story. */
    char allow[64];
    snprintf(allow, sizeof allow, "127.0.0.1:9,[::1]:9,127.0.0.1:%d", origin.port);
    struct sockaddr_un addr;
    socklen_t addr_len;
    sl_err err = {0};
    sl_proxy *proxy = NULL;
    int lfd = listener(&addr, &addr_len);
    if (sl_proxy_start(lfd, allow, &proxy, &err))
        abort();
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, addr_len))
        abort();
    size_t off = 0;
    while (off < n) {
        ssize_t k = send(fd, client + off, n - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* the proxy may answer and close before reading it all */
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    char buf[4096], first[16] = {0};
    size_t got = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, 35000);
        if (r < 0 && errno == EINTR)
            continue; /* libFuzzer's timer signal */
        if (r != 1)
            abort(); /* the proxy must answer or close within its own timeouts */
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (got < sizeof first - 1) {
            size_t c = (size_t)k < sizeof first - 1 - got ? (size_t)k : sizeof first - 1 - got;
            memcpy(first + got, buf, c);
        }
        got += (size_t)k;
    }
    if (got && strncmp(first, "HTTP/1.1 ", 9) && strncmp(first, "HTTP/1.0 ", 9))
        abort(); /* anything it says starts with a status line */
    close(fd);
    sl_proxy_stop(proxy);
    /* The origin finishes with this input's connections before the next
     * input changes its answer. */
    pthread_mutex_lock(&origin.mu);
    while (origin.busy)
        pthread_cond_wait(&origin.idle, &origin.mu);
    pthread_mutex_unlock(&origin.mu);
    free(client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 20000)
        return 0;
    if (data[0] & 1)
        check_allow_list(data + 1, size - 1);
    else if (data[0] & 2)
        check_framing(data + 1, size - 1);
    else
        send_request(data + 1, size - 1);
    return 0;
}
