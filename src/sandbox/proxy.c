#include "sandbox/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/netaddr.h"
#include "sandbox/h1.h"

#define HEAD_CAP (16 * 1024)          /* request line + headers */
#define RESPONSE_HEAD_CAP (64 * 1024) /* status line + headers */
#define HEAD_TIMEOUT_MS (30 * 1000)   /* to send them */
#define CONNECT_TIMEOUT_MS (10 * 1000) /* per resolved address */
#define IDLE_TIMEOUT_MS (300 * 1000)  /* a relay with no bytes moving */
#define REPLY_TIMEOUT_MS (5 * 1000)   /* to hand an error reply over */
#define LINGER_MS 2000                /* reading what follows a refused request */
#define LINGER_BYTES (1 << 20)
#define RELAY_BUF (64 * 1024)         /* per direction */
#define MAX_CONNS 256                 /* open connections; more get 503 */
#define MAX_ADDRS 16                  /* resolved addresses tried */
#define HOST_MAX 253                  /* longest DNS name */

/* ---- the allow list ---- */

enum { R_NAME, R_WILD, R_IP, R_ANY };

typedef struct {
    int kind;
    char name[HOST_MAX + 2];   /* R_NAME: the host; R_WILD: ".suffix" */
    unsigned char ip[16];      /* R_IP: IPv6, IPv4 as ::ffff:a.b.c.d */
    int port;                  /* 0: 80 and 443 */
} rule;

typedef struct conn {
    struct conn *next;
    sl_proxy *p;
    pthread_t tid;
    int cfd;
    bool done;                 /* the thread is finishing; join it */
} conn;

struct sl_proxy {
    int listen_fd;
    /* Written once by stop and never drained, so every poll in every
     * thread sees it from then on. */
    int wake[2];
    /* A connection thread that finishes pokes the acceptor to join it. */
    int reap[2];
    pthread_t acceptor;
    pthread_mutex_t mu;        /* guards conns, nconns, stats */
    conn *conns;
    size_t nconns;
    sl_proxy_stats stats;
    rule *rules;
    size_t nrules;
    char *allowed;             /* "allowed: a, b", for refusals */
};

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Copies host into out[n] lower-cased, without brackets around an IPv6
 * literal and without one trailing dot.  False when what is left is empty,
 * longer than a DNS name, or holds characters that neither a name nor an IP
 * literal has; keeping the alphabet small keeps odd bytes away from the
 * resolver and out of refusal messages. */
static bool norm_host(const char *host, size_t len, char *out, size_t n)
{
    bool bracket = false;
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        host++;
        len -= 2;
        bracket = true;
    }
    if (!bracket && len && host[len - 1] == '.')
        len--;
    if (!len || len > HOST_MAX || len >= n)
        return false;
    bool colon = false;
    for (size_t i = 0; i < len; i++) {
        int c = lower((unsigned char)host[i]);
        if (c == ':')
            colon = true;
        else if (!(is_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '.' || c == '_'))
            return false;
        out[i] = (char)c;
    }
    out[len] = '\0';
    if (out[0] == '.' || out[len - 1] == '.' || strstr(out, ".."))
        return false;
    unsigned char b[16];
    if ((colon || bracket) && inet_pton(AF_INET6, out, b) != 1)
        return false;
    return true;
}

/* Whether a normalised host is an IP literal; its address goes to ip as
 * IPv6 (IPv4 mapped).  IPv4 is read the way the resolver reads it
 * (inet_aton: "127.1" and "0x7f000001" are 127.0.0.1), so no spelling of an
 * address passes for a name. */
static bool parse_ip(const char *h, unsigned char ip[16])
{
    if (strchr(h, ':'))
        return inet_pton(AF_INET6, h, ip) == 1;
    struct in_addr a;
    if (!inet_aton(h, &a))
        return false;
    memset(ip, 0, 10);
    ip[10] = ip[11] = 0xff;
    memcpy(ip + 12, &a.s_addr, 4);
    return true;
}

static bool is_mapped(const unsigned char ip[16])
{
    static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return !memcmp(ip, prefix, 12);
}

/* A socket address for ip (as parse_ip writes it) and port. */
static socklen_t make_sockaddr(const unsigned char ip[16], int port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (is_mapped(ip)) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        memcpy(&in->sin_addr, ip + 12, 4);
        return sizeof *in;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)port);
    memcpy(&in6->sin6_addr, ip, 16);
    return sizeof *in6;
}

/* Reads "1".."65535" from s[len]; -1 otherwise. */
static int parse_port(const char *s, size_t len)
{
    if (len == 0 || len > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= 65535 ? v : -1;
}

/* Splits "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 literal
 * (two or more colons, no port) into host (brackets kept) and port (0 when
 * absent, -1 when malformed). */
static void split_port(const char *s, size_t len, size_t *hlen, int *port)
{
    *hlen = len;
    *port = 0;
    const char *colon = NULL;
    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close) {
            *port = -1;
            return;
        }
        *hlen = (size_t)(close - s) + 1;
        if (*hlen == len)
            return;
        if (s[*hlen] != ':') {
            *port = -1;
            return;
        }
        colon = s + *hlen;
    } else {
        colon = memchr(s, ':', len);
        if (!colon || memchr(colon + 1, ':', len - (size_t)(colon - s) - 1))
            return;
        *hlen = (size_t)(colon - s);
    }
    *port = parse_port(colon + 1, len - (size_t)(colon - s) - 1);
}

static int add_rule(sl_proxy *p, const char *s, size_t len, sl_buf *shown, sl_err *err)
{
    size_t hlen;
    int port;
    split_port(s, len, &hlen, &port);
    rule r;
    memset(&r, 0, sizeof r);
    r.port = port;
    bool ok = port >= 0;
    if (ok && hlen == 1 && s[0] == '*') {
        r.kind = R_ANY;
    } else if (ok && hlen > 2 && s[0] == '*' && s[1] == '.') {
        r.kind = R_WILD;
        r.name[0] = '.';
        ok = norm_host(s + 2, hlen - 2, r.name + 1, sizeof r.name - 1) &&
             !strchr(r.name, ':') && !memchr(s + 2, '*', hlen - 2);
    } else if (ok) {
        ok = !memchr(s, '*', hlen) && norm_host(s, hlen, r.name, sizeof r.name);
        if (ok && parse_ip(r.name, r.ip))
            r.kind = R_IP;
        else
            r.kind = R_NAME;
    }
    if (!ok)
        return sl_err_set(err, SL_EINVAL,
                          "sandbox proxy allow list: entry \"%.*s\" is not a host name, "
                          "\"*.domain\", an IP address or \"*\", each with an optional "
                          ":port (1-65535)",
                          (int)len, s);
    p->rules = sl_xrealloc(p->rules, (p->nrules + 1) * sizeof *p->rules);
    p->rules[p->nrules++] = r;
    if (shown->len)
        sl_buf_adds(shown, ", ");
    if (r.kind == R_ANY)
        sl_buf_adds(shown, "*");
    else if (r.kind == R_WILD)
        sl_buf_addf(shown, "*%s", r.name);
    else if (r.port && strchr(r.name, ':'))
        sl_buf_addf(shown, "[%s]", r.name);
    else
        sl_buf_adds(shown, r.name);
    if (r.port)
        sl_buf_addf(shown, ":%d", r.port);
    return 0;
}

static int parse_allow(sl_proxy *p, const char *allow, sl_err *err)
{
    sl_buf shown;
    sl_buf_init(&shown, 0);
    for (const char *s = allow ? allow : ""; *s;) {
        const char *e = strchr(s, ',');
        if (!e)
            e = s + strlen(s);
        const char *a = s, *b = e;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (a < b && add_rule(p, a, (size_t)(b - a), &shown, err) < 0) {
            sl_buf_release(&shown);
            return -1;
        }
        s = *e ? e + 1 : e;
    }
    p->allowed = shown.len ? sl_xasprintf("allowed: %s", shown.data)
                           : sl_xstrdup("the allow list is empty");
    sl_buf_release(&shown);
    return 0;
}

/* An entry without a port opens the web ports only: a listed host is
 * there for its web service, not its SSH, database or admin ports. */
static bool port_ok(const rule *r, int port)
{
    return r->port ? r->port == port : port == 80 || port == 443;
}

/* Whether the allow list names ip (IPv6 form) literally for this port. */
static bool listed_ip(const sl_proxy *p, const unsigned char ip[16], int port)
{
    for (size_t i = 0; i < p->nrules; i++)
        if (p->rules[i].kind == R_IP && !memcmp(p->rules[i].ip, ip, 16) &&
            port_ok(&p->rules[i], port))
            return true;
    return false;
}

static bool host_matches(const rule *r, const char *h, size_t hl, bool literal,
                         const unsigned char ip[16])
{
    if (literal)
        return r->kind == R_IP && !memcmp(r->ip, ip, 16);
    switch (r->kind) {
    case R_ANY:
        return true;
    case R_NAME:
        return !strcmp(r->name, h);
    case R_WILD: {
        size_t sl = strlen(r->name);
        return hl > sl && !memcmp(h + hl - sl, r->name, sl);
    }
    default:
        return false;
    }
}

int sl_proxy_check_host(const sl_proxy *p, const char *host, int port, sl_err *err)
{
    char h[HOST_MAX + 1];
    if (!norm_host(host, strlen(host), h, sizeof h)) {
        return sl_err_set(err, SL_EINVAL, "host %.300s is not a valid host name or IP address",
                          host);
    }
    if (port < 1 || port > 65535) {
        return sl_err_set(err, SL_EINVAL, "port %d of host %s is not a valid port", port, h);
    }
    unsigned char ip[16];
    bool literal = parse_ip(h, ip);
    size_t hl = strlen(h);
    bool host_ok = false;
    for (size_t i = 0; i < p->nrules; i++) {
        if (!host_matches(&p->rules[i], h, hl, literal, ip))
            continue;
        if (port_ok(&p->rules[i], port))
            return 0;
        host_ok = true;
    }
    if (host_ok) {
        sl_err_set(err, SL_EINVAL,
                   "port %d of host %s is not in the allow list: an entry without a port allows "
                   "ports 80 and 443 only; list %s%s%s:%d to allow this one (%s)",
                   port, h, strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "", port,
                   p->allowed);
    } else if (literal) {
        struct sockaddr_storage ss;
        char text[INET6_ADDRSTRLEN];
        make_sockaddr(ip, port, &ss);
        const char *kind = sl_addr_kind((const struct sockaddr *)&ss, text, sizeof text);
        sl_err_set(err, SL_EINVAL,
                   "host %s is not in the allow list: IP addresses must be listed literally%s%s "
                   "(%s)",
                   h, kind ? ", and this one is " : "", kind ? kind : "", p->allowed);
    } else {
        sl_err_set(err, SL_EINVAL, "host %s is not in the allow list (%s)", h, p->allowed);
    }
    return -1;
}

/* ---- waiting on sockets ---- */

static int ms_left(long long deadline)
{
    long long left = deadline - sl_clock_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Waits for events on fd until deadline.  1: ready; 0: timed out; -1: the
 * proxy is stopping. */
static int wait_fd(const sl_proxy *p, int fd, short events, long long deadline)
{
    for (;;) {
        int left = ms_left(deadline);
        if (!left)
            return 0;
        struct pollfd f[2] = {{fd, events, 0}, {p->wake[0], POLLIN, 0}};
        int r = poll(f, 2, left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && f[1].revents)
            return -1;
        if (r > 0 && f[0].revents)
            return 1;
    }
}

static int send_all(const sl_proxy *p, int fd, const char *b, size_t n, long long deadline)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k > 0) {
            b += k;
            n -= (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(p, fd, POLLOUT, deadline) != 1)
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Sends an error reply and reads (and drops) what the client still sends
 * for a moment, so that closing with unread bytes does not reset the
 * connection before the client has read the reply. */
static void reply(conn *c, int code, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void reply(conn *c, int code, const char *status, const char *fmt, ...)
{
    char body[1024];
    int k = snprintf(body, sizeof body, "sluice sandbox proxy: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body + k, sizeof body - (size_t)k - 1, fmt, ap);
    va_end(ap);
    strcat(body, "\n");
    char *msg = sl_xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                             code, status, strlen(body), body);
    int rc = send_all(c->p, c->cfd, msg, strlen(msg), sl_clock_ms() + REPLY_TIMEOUT_MS);
    free(msg);
    if (rc < 0)
        return;
    shutdown(c->cfd, SHUT_WR);
    long long deadline = sl_clock_ms() + LINGER_MS;
    char sink[4096];
    for (size_t total = 0; total < LINGER_BYTES;) {
        ssize_t r = recv(c->cfd, sink, sizeof sink, 0);
        if (r > 0)
            total += (size_t)r;
        else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return;
        else if (wait_fd(c->p, c->cfd, POLLIN, deadline) != 1)
            return;
    }
}

/* Answers 403 with why the allow list refused the request. */
static void refuse(conn *c, const sl_err *why)
{
    pthread_mutex_lock(&c->p->mu);
    c->p->stats.refused++;
    pthread_mutex_unlock(&c->p->mu);
    reply(c, 403, "Forbidden", "%s", why->msg);
}

/* ---- reading heads ---- */

/* Bytes read from one side and not yet used: what follows a head (a body,
 * the next request, a TLS hello sent early) waits here for its turn. */
typedef struct {
    int fd;
    char *mem;                 /* cap + 1 bytes */
    char *buf;                 /* the bytes not used yet: buf[0..len), in mem */
    size_t len, cap;
} inbuf;

static void inbuf_init(inbuf *b, int fd, size_t cap)
{
    b->fd = fd;
    b->mem = b->buf = sl_xmalloc(cap + 1);
    b->len = 0;
    b->cap = cap;
}

/* Uses n bytes.  No copying here: a body of many tiny chunks would make
 * that quadratic; fill() moves what is left once, when it needs room. */
static void consume(inbuf *b, size_t n)
{
    b->buf += n;
    b->len -= n;
    if (!b->len)
        b->buf = b->mem;
}

/* Reads more into b.  >0: bytes read; 0: the peer closed; -1: an error or
 * stop; -2: nothing came before deadline; -3: b is full. */
static long fill(conn *c, inbuf *b, long long deadline)
{
    if (b->buf + b->len == b->mem + b->cap) {
        if (b->buf == b->mem)
            return -3;
        memmove(b->mem, b->buf, b->len);
        b->buf = b->mem;
    }
    for (;;) {
        size_t room = (size_t)(b->mem + b->cap - (b->buf + b->len));
        ssize_t k = recv(b->fd, b->buf + b->len, room, 0);
        if (k >= 0) {
            b->len += (size_t)k;
            return (long)k;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        int w = wait_fd(c->p, b->fd, POLLIN, deadline);
        if (w == 0)
            return -2;
        if (w < 0)
            return -1;
    }
}

enum { HEAD_OK, HEAD_CLOSED, HEAD_TOOBIG, HEAD_BAD, HEAD_TIMEOUT };

/* Where the head in b[from..n) ends (after its blank line), or 0. */
static size_t head_end(const char *b, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        if (b[i] != '\n')
            continue;
        if (i + 1 < n && b[i + 1] == '\n')
            return i + 2;
        if (i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Reads until b starts with a whole head (up to its blank line) and sets
 * *end after it.  A control byte inside the head is garbage (binary, TLS
 * sent without CONNECT) and is answered at once rather than after the cap
 * or the timeout; so is a CR not followed by LF, which some parsers take
 * for a line end: a header hidden behind one would reach the origin
 * unseen by the checks here. */
static int read_head(conn *c, inbuf *b, long long deadline, size_t *end)
{
    size_t scanned = 0;
    for (;;) {
        size_t e = head_end(b->buf, scanned >= 3 ? scanned - 3 : 0, b->len);
        size_t stop = e ? e : b->len;
        for (size_t i = scanned; i < stop; i++) {
            unsigned char ch = (unsigned char)b->buf[i];
            if ((ch < 0x20 && ch != '\r' && ch != '\n' && ch != '\t') || ch == 0x7f)
                return HEAD_BAD;
            if (ch == '\r' && i + 1 < b->len && b->buf[i + 1] != '\n')
                return HEAD_BAD;
        }
        scanned = stop;
        if (e) {
            *end = e;
            return HEAD_OK;
        }
        /* A CR last in the buffer is judged once its next byte is in. */
        if (scanned && b->buf[scanned - 1] == '\r')
            scanned--;
        long k = fill(c, b, deadline);
        if (k == -3)
            return HEAD_TOOBIG;
        if (k == -2)
            return HEAD_TIMEOUT;
        if (k <= 0)
            return HEAD_CLOSED;
    }
}

/* ---- parsing the request ---- */

static bool is_tchar(int c)
{
    return c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* The next line of a NUL-terminated head: returns its start and length
 * without "\r\n", and moves *s past it. */
static const char *next_line(const char **s, size_t *len)
{
    const char *a = *s, *nl = strchr(a, '\n');
    const char *b = nl ? nl : a + strlen(a);
    *s = nl ? nl + 1 : b;
    if (b > a && b[-1] == '\r')
        b--;
    *len = (size_t)(b - a);
    return a;
}

typedef struct {
    char *head;                /* NUL-terminated copy */
    char method[32];
    char *target, *version;    /* in head */
    const char *fields;        /* the header lines, in head */
    char norm[HOST_MAX + 1];   /* the target host, normalised */
    int port;
    const char *authority;     /* for Host: (absolute form) */
    size_t alen;
    const char *path;          /* origin-form target (absolute form) */
    size_t plen;
} request;

/* Checks the shape of header lines, up to an empty line or the NUL: each
 * is "name: value" with a token for a name.  0 when fine, else -1 with err
 * (SL_EINVAL; NULL: no message is made) saying what is wrong. */
static int check_fields(const char *s, sl_err *err)
{
    size_t len;
    while (*s) {
        const char *f = next_line(&s, &len);
        if (!len)
            break;
        if (f[0] == ' ' || f[0] == '\t')
            return sl_err_set(err, SL_EINVAL, "folded header lines are not accepted");
        const char *colon = memchr(f, ':', len);
        if (!colon || colon == f)
            return sl_err_set(err, SL_EINVAL, "a header line has no name");
        for (const char *c = f; c < colon; c++)
            if (!is_tchar((unsigned char)*c))
                return sl_err_set(err, SL_EINVAL,
                                  "a header name has characters a header name cannot have");
    }
    return 0;
}

/* Checks the request line and the header lines' shape; 0 when fine, else
 * -1 with err (SL_EINVAL) saying what is wrong (for a 400). */
static int parse_head(request *r, sl_err *err)
{
    const char *s = r->head;
    size_t len;
    const char *line = next_line(&s, &len);
    char *l = (char *)line;
    l[len] = '\0';
    char *sp1 = strchr(l, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1 == l || sp2 == sp1 + 1 ||
        (size_t)(sp1 - l) >= sizeof r->method)
        return sl_err_set(err, SL_EINVAL, "the request line is not \"METHOD target HTTP/1.1\"");
    for (const char *m = l; m < sp1; m++)
        if (!is_tchar((unsigned char)*m))
            return sl_err_set(err, SL_EINVAL, "the request method is not a token");
    memcpy(r->method, l, (size_t)(sp1 - l));
    r->method[sp1 - l] = '\0';
    *sp1 = *sp2 = '\0';
    r->target = sp1 + 1;
    r->version = sp2 + 1;
    if (strcmp(r->version, "HTTP/1.1") && strcmp(r->version, "HTTP/1.0"))
        return sl_err_set(err, SL_EINVAL, "only HTTP/1.0 and HTTP/1.1 requests can be proxied");
    r->fields = s;
    return check_fields(s, err);
}

/* Reads "host:port" or "[v6]:port" into r->norm and r->port; the port may
 * be left out (or empty, "host:") only when there is a default. */
static bool parse_authority(request *r, const char *a, size_t len, int default_port)
{
    if (default_port && len && a[len - 1] == ':')
        len--;
    size_t hlen;
    int port;
    split_port(a, len, &hlen, &port);
    if (port < 0 || (!port && !default_port) || hlen == 0)
        return false;
    const char *h = a;
    bool bracket = h[0] == '[';
    if (bracket) {
        h++;
        hlen -= 2;
    }
    /* IPv6 in brackets and only there. */
    if (bracket != (memchr(h, ':', hlen) != NULL))
        return false;
    r->port = port ? port : default_port;
    return norm_host(h, hlen, r->norm, sizeof r->norm);
}

/* ---- resolving and connecting ---- */

typedef struct {
    struct sockaddr_storage sa;
    socklen_t len;
} addr;

/* Resolves the target once and checks every address; the caller connects
 * to these and nothing else.  0: fine; otherwise the reply already went. */
static int resolve(conn *c, request *r, addr *out, size_t *nout)
{
    unsigned char ip[16];
    *nout = 0;
    if (parse_ip(r->norm, ip)) {
        /* sl_proxy_check_host() let it through, so it is listed. */
        out[0].len = make_sockaddr(ip, r->port, &out[0].sa);
        *nout = 1;
        return 0;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    int rc = getaddrinfo(r->norm, NULL, &hints, &res);
    if (rc) {
        reply(c, 502, "Bad Gateway", "cannot resolve host %s: %s", r->norm,
              rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        char text[INET6_ADDRSTRLEN + 32];
        const char *kind = sl_addr_kind(ai->ai_addr, text, sizeof text);
        if (kind) {
            unsigned char a6[16];
            if (ai->ai_family == AF_INET)
                parse_ip(text, a6);
            else
                memcpy(a6, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr, 16);
            if (!listed_ip(c->p, a6, r->port)) {
                sl_err why = {0};
                sl_err_set(&why, SL_EINVAL, "host %s resolves to %s, %s", r->norm, text, kind);
                freeaddrinfo(res);
                refuse(c, &why);
                sl_err_clear(&why);
                return -1;
            }
        }
        if (*nout < MAX_ADDRS && ai->ai_addrlen <= sizeof out->sa) {
            memcpy(&out[*nout].sa, ai->ai_addr, ai->ai_addrlen);
            out[*nout].len = ai->ai_addrlen;
            if (ai->ai_family == AF_INET)
                ((struct sockaddr_in *)&out[*nout].sa)->sin_port = htons((uint16_t)r->port);
            else
                ((struct sockaddr_in6 *)&out[*nout].sa)->sin6_port = htons((uint16_t)r->port);
            (*nout)++;
        }
    }
    freeaddrinfo(res);
    if (!*nout) {
        reply(c, 502, "Bad Gateway", "host %s has no IPv4 or IPv6 address", r->norm);
        return -1;
    }
    return 0;
}

/* Connects to the first address that answers; -1 after replying (or when
 * the proxy is stopping). */
static int connect_any(conn *c, request *r, const addr *as, size_t n)
{
    int err = 0;
    char text[INET6_ADDRSTRLEN + 32] = "";
    for (size_t i = 0; i < n; i++) {
        int fd = socket(as[i].sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, (const struct sockaddr *)&as[i].sa, as[i].len) == 0)
            return fd;
        err = errno;
        if (err == EINPROGRESS) {
            int w = wait_fd(c->p, fd, POLLOUT, sl_clock_ms() + CONNECT_TIMEOUT_MS);
            if (w < 0) {
                close(fd);
                return -1;
            }
            socklen_t l = sizeof err;
            if (w == 0)
                err = ETIMEDOUT;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                err = errno;
            if (!err) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                return fd;
            }
        }
        sl_addr_kind((const struct sockaddr *)&as[i].sa, text, sizeof text);
        close(fd);
    }
    reply(c, 502, "Bad Gateway", "cannot connect to host %s (%s port %d): %s", r->norm,
          *text ? text : "no address", r->port, strerror(err ? err : ECONNREFUSED));
    return -1;
}

/* ---- relaying ---- */

typedef struct {
    int from, to;
    char *buf;
    size_t off, len;
    bool eof;                  /* `from` sent its last byte */
    bool shut;                 /* and `to` has been told (SHUT_WR) */
} flow;

/* Moves a tunnel's bytes both ways until both sides have closed, an
 * error, IDLE_TIMEOUT_MS without a byte, or stop.  A side that closes its
 * sending half is passed on as a half-close once its bytes are delivered.
 * pre[npre] goes to the origin first. */
static void relay(conn *c, int ufd, const char *pre, size_t npre)
{
    char *mem = sl_xmalloc(2 * RELAY_BUF);
    flow f[2] = {{c->cfd, ufd, mem, 0, npre, false, false},
                 {ufd, c->cfd, mem + RELAY_BUF, 0, 0, false, false}};
    memcpy(f[0].buf, pre, npre);
    int fds[2] = {c->cfd, ufd};
    bool quiet[2] = {false, false};    /* hung up; poll only when we want it */
    long long idle = sl_clock_ms() + IDLE_TIMEOUT_MS;
    for (;;) {
        for (int k = 0; k < 2; k++)
            if (f[k].eof && f[k].off == f[k].len && !f[k].shut) {
                shutdown(f[k].to, SHUT_WR);
                f[k].shut = true;
            }
        if (f[0].shut && f[1].shut)
            break;
        /* fds[0] is read by flow 0 and written by flow 1; fds[1] the
         * other way round.  A buffer is refilled only once drained. */
        short ev[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            if (!f[k].eof && f[k].off == f[k].len)
                ev[k] |= POLLIN;
            if (f[k].off < f[k].len)
                ev[1 - k] |= POLLOUT;
        }
        struct pollfd pf[3];
        for (int i = 0; i < 2; i++) {
            pf[i].fd = ev[i] || !quiet[i] ? fds[i] : -1;
            pf[i].events = ev[i];
            pf[i].revents = 0;
        }
        pf[2] = (struct pollfd){c->p->wake[0], POLLIN, 0};
        int left = ms_left(idle);
        if (!left)
            break;
        int r = poll(pf, 3, left);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (pf[2].revents)
            break;
        bool moved = false;
        for (int i = 0; i < 2; i++) {
            if (pf[i].revents && !pf[i].events) {
                if (pf[i].revents & POLLERR)
                    goto out;
                quiet[i] = true;
            }
        }
        for (int k = 0; k < 2; k++) {
            flow *fl = &f[k];
            if ((pf[k].events & POLLIN) && pf[k].revents) {
                ssize_t got = recv(fl->from, fl->buf, RELAY_BUF, 0);
                if (got > 0) {
                    fl->off = 0;
                    fl->len = (size_t)got;
                    moved = true;
                } else if (got == 0) {
                    fl->eof = true;
                } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    goto out;
                }
            }
            if ((pf[1 - k].events & POLLOUT) && pf[1 - k].revents) {
                ssize_t put = send(fl->to, fl->buf + fl->off, fl->len - fl->off, MSG_NOSIGNAL);
                if (put > 0) {
                    fl->off += (size_t)put;
                    if (fl->off == fl->len)
                        fl->off = fl->len = 0;
                    moved = true;
                } else if (put < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                           errno != EINTR) {
                    goto out;
                }
            }
        }
        if (moved)
            idle = sl_clock_ms() + IDLE_TIMEOUT_MS;
    }
out:
    free(mem);
}

/* ---- one connection ---- */

static bool header_is(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    return len > n && line[n] == ':' && !strncasecmp(line, name, n);
}

/* Whether a Connection header names this header as hop-by-hop. */
static bool nominated(const char *fields, const char *name, size_t nlen)
{
    const char *s = fields;
    size_t len;
    while (*s) {
        const char *f = next_line(&s, &len);
        if (!len)
            break;
        if (!header_is(f, len, "connection"))
            continue;
        const char *v = f + 11, *end = f + len;
        while (v < end) {
            while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
                v++;
            const char *t = v;
            while (v < end && *v != ',' && *v != ' ' && *v != '\t')
                v++;
            if ((size_t)(v - t) == nlen && !strncasecmp(t, name, nlen))
                return true;
        }
    }
    return false;
}

/* Whether a header line is for this hop only (RFC 9110 section 7.6.1):
 * the proxy speaks for itself on each side.  Upgrade goes too: the proxy
 * does not switch protocols. */
static bool hop_by_hop(const char *fields, const char *f, size_t len)
{
    static const char *const names[] = {"connection", "proxy-connection", "keep-alive",
                                        "proxy-authorization", "te", "trailer", "upgrade"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (header_is(f, len, names[i]))
            return true;
    const char *colon = memchr(f, ':', len);
    return colon && nominated(fields, f, (size_t)(colon - f));
}

/* The request for the origin: origin-form target, Host from the URL (RFC
 * 9112 section 3.2.2: a proxy replaces Host with the target's authority),
 * hop-by-hop headers dropped, one request per origin connection. */
static void rewrite(const request *r, sl_buf *out)
{
    /* "http://h" and "http://h?q" have the path "/". */
    const char *slash = r->plen && r->path[0] == '/' ? "" : "/";
    sl_buf_addf(out, "%s %s%.*s %s\r\nHost: %.*s\r\n", r->method, slash,
                (int)r->plen, r->path, r->version, (int)r->alen, r->authority);
    const char *s = r->fields;
    size_t len;
    while (*s) {
        const char *f = next_line(&s, &len);
        if (!len)
            break;
        if (header_is(f, len, "host") || hop_by_hop(r->fields, f, len))
            continue;
        sl_buf_add(out, f, len);
        sl_buf_adds(out, "\r\n");
    }
    sl_buf_adds(out, "Connection: close\r\n\r\n");
}

/* The response head for the client: the origin's status line and fields,
 * hop-by-hop ones dropped; Content-Length dropped when Transfer-Encoding
 * frames the body (RFC 9112 section 6.3); "Connection: close" when this
 * is the connection's last response. */
static void rewrite_response(const char *head, bool drop_length, bool last, sl_buf *out)
{
    const char *s = head;
    size_t len;
    const char *f = next_line(&s, &len);
    sl_buf_add(out, f, len);
    sl_buf_adds(out, "\r\n");
    const char *fields = s;
    while (*s) {
        f = next_line(&s, &len);
        if (!len)
            break;
        if (hop_by_hop(fields, f, len) || (drop_length && header_is(f, len, "content-length")))
            continue;
        sl_buf_add(out, f, len);
        sl_buf_adds(out, "\r\n");
    }
    if (last)
        sl_buf_adds(out, "Connection: close\r\n");
    sl_buf_adds(out, "\r\n");
}

/* "HTTP/1.1 SSS[ reason]" (or 1.0): the status, or -1. */
static int status_of(const char *head)
{
    if (strncmp(head, "HTTP/1.", 7) || (head[7] != '0' && head[7] != '1') || head[8] != ' ')
        return -1;
    const char *d = head + 9;
    for (int i = 0; i < 3; i++)
        if (!is_digit((unsigned char)d[i]))
            return -1;
    if (d[3] != ' ' && d[3] != '\r' && d[3] != '\n')
        return -1;
    return (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
}

/* Sends data to the origin unless it answers or stops reading first:
 * 0 sent; 1 the origin speaks while the proxy waits to send, or has shut
 * its reading side (what was sent so far is unknown to the caller: its
 * answer is still worth reading); -1 timed out or stopping. */
static int send_up(conn *c, int ufd, const char *b, size_t n)
{
    long long deadline = sl_clock_ms() + IDLE_TIMEOUT_MS;
    while (n) {
        ssize_t k = send(ufd, b, n, MSG_NOSIGNAL);
        if (k > 0) {
            b += k;
            n -= (size_t)k;
            deadline = sl_clock_ms() + IDLE_TIMEOUT_MS;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return 1;
        struct pollfd f[2] = {{ufd, POLLOUT | POLLIN, 0}, {c->p->wake[0], POLLIN, 0}};
        int left = ms_left(deadline);
        if (!left)
            return -1;
        int r = poll(f, 2, left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (f[1].revents)
            return -1;
        if ((f[0].revents & POLLIN) && !(f[0].revents & POLLOUT))
            return 1;
    }
    return 0;
}

/* Where a request body stands: its framing and how far it has gone. */
typedef struct {
    sl_h1_body frame;
    uint64_t left;             /* SL_H1_LENGTH */
    sl_h1_chunked chunks;      /* SL_H1_CHUNKED */
    bool done;                 /* all of it went to the origin */
    bool cut;                  /* a send was cut short: it cannot go on */
} body;

enum { BODY_DONE, BODY_EARLY, BODY_BAD, BODY_GONE };

/* Passes the request body from the client (in) to the origin, chunked
 * bodies re-encoded.  BODY_EARLY when the origin answers first (an interim
 * 100 Continue, or a final answer that does not wait for the body); the
 * caller comes back after an interim one.  BODY_BAD sets err: SL_EINVAL
 * for a malformed chunk, SL_EIO when the client closed mid-body. */
static int send_body(conn *c, inbuf *in, int ufd, body *bd, sl_err *err)
{
    long long idle = sl_clock_ms() + IDLE_TIMEOUT_MS;
    for (;;) {
        while (in->len) {
            int s;
            if (bd->frame.kind == SL_H1_LENGTH) {
                size_t k = in->len < bd->left ? in->len : (size_t)bd->left;
                s = send_up(c, ufd, in->buf, k);
                consume(in, k);
                bd->left -= k;
                bd->done = bd->left == 0;
            } else {
                size_t off, dlen;
                long used = sl_h1_chunked_feed(&bd->chunks, in->buf, in->len, &off, &dlen, err);
                if (used < 0)
                    return BODY_BAD;
                s = 0;
                if (dlen) {
                    char size[24];
                    int k = snprintf(size, sizeof size, "%zx\r\n", dlen);
                    s = send_up(c, ufd, size, (size_t)k);
                    if (!s)
                        s = send_up(c, ufd, in->buf + off, dlen);
                    if (!s)
                        s = send_up(c, ufd, "\r\n", 2);
                }
                consume(in, (size_t)used);
                if (!s && bd->chunks.done) {
                    s = send_up(c, ufd, "0\r\n\r\n", 5);
                    bd->done = true;
                }
            }
            if (s < 0)
                return BODY_GONE;
            if (s > 0) {
                bd->cut = true;
                return BODY_EARLY;
            }
            if (bd->done)
                return BODY_DONE;
        }
        /* More is needed; the origin may answer meanwhile. */
        struct pollfd f[3] = {{in->fd, POLLIN, 0}, {ufd, POLLIN, 0}, {c->p->wake[0], POLLIN, 0}};
        int left = ms_left(idle);
        if (!left)
            return BODY_GONE;
        int r = poll(f, 3, left);
        if (r < 0 && errno != EINTR)
            return BODY_GONE;
        if (r <= 0)
            continue;
        if (f[2].revents)
            return BODY_GONE;
        if (f[1].revents)
            return BODY_EARLY;
        if (f[0].revents) {
            long k = fill(c, in, idle);
            if (k == 0) {
                sl_err_set(err, SL_EIO,
                           "the client closed the connection in the middle of the request body");
                return BODY_BAD;
            }
            if (k < 0 && k != -2)
                return BODY_GONE;
            idle = sl_clock_ms() + IDLE_TIMEOUT_MS;
        }
    }
}

/* Passes the response body from the origin (up) to the client, framed
 * as `frame` says, chunked bodies re-encoded.  False when either side
 * fails, or the origin's framing is broken: the client connection must
 * then close. */
static bool send_response_body(conn *c, inbuf *up, const sl_h1_body *frame)
{
    uint64_t left = frame->length;
    sl_h1_chunked chunks;
    memset(&chunks, 0, sizeof chunks);
    for (;;) {
        if (frame->kind == SL_H1_NONE || (frame->kind == SL_H1_LENGTH && !left) ||
            (frame->kind == SL_H1_CHUNKED && chunks.done))
            return true;
        if (!up->len) {
            long k = fill(c, up, sl_clock_ms() + IDLE_TIMEOUT_MS);
            if (k == 0)
                return frame->kind == SL_H1_CLOSE;
            if (k < 0)
                return false;
        }
        long long deadline = sl_clock_ms() + IDLE_TIMEOUT_MS;
        if (frame->kind == SL_H1_CHUNKED) {
            size_t off, dlen;
            /* The client gets no reply here (the head went out): no
             * message is needed, so none is made. */
            long used = sl_h1_chunked_feed(&chunks, up->buf, up->len, &off, &dlen, NULL);
            if (used < 0)
                return false;
            if (dlen) {
                char size[24];
                int k = snprintf(size, sizeof size, "%zx\r\n", dlen);
                if (send_all(c->p, c->cfd, size, (size_t)k, deadline) < 0 ||
                    send_all(c->p, c->cfd, up->buf + off, dlen, deadline) < 0 ||
                    send_all(c->p, c->cfd, "\r\n", 2, deadline) < 0)
                    return false;
            }
            consume(up, (size_t)used);
            if (chunks.done && send_all(c->p, c->cfd, "0\r\n\r\n", 5, deadline) < 0)
                return false;
        } else {
            size_t k = up->len;
            if (frame->kind == SL_H1_LENGTH && k > left)
                k = (size_t)left;
            if (send_all(c->p, c->cfd, up->buf, k, deadline) < 0)
                return false;
            consume(up, k);
            left -= k;
        }
    }
}

/* One plain-http request on an origin connection: the head, the body, and
 * the answer back.  Interim answers (100 Continue) are passed on and the
 * body goes on after them.  Returns whether the client connection can
 * carry another request: the request said nothing against it, its body was
 * read to its end, and the answer's end is known without a close. */
static bool exchange(conn *c, inbuf *in, const request *r, const sl_h1_body *frame, int ufd)
{
    sl_buf out;
    sl_buf_init(&out, 2 * HEAD_CAP);
    rewrite(r, &out);
    bool ok = !out.toobig && send_up(c, ufd, out.data, out.len) == 0;
    sl_buf_release(&out);
    if (!ok) {
        reply(c, 502, "Bad Gateway", "host %s closed the connection before the request went out",
              r->norm);
        return false;
    }
    body bd;
    memset(&bd, 0, sizeof bd);
    bd.frame = *frame;
    bd.left = frame->length;
    bd.done = frame->kind == SL_H1_NONE;
    inbuf up;
    inbuf_init(&up, ufd, RESPONSE_HEAD_CAP);
    bool again = false;
    for (;;) {
        if (!bd.done && !bd.cut) {
            sl_err why = {0};
            int b = send_body(c, in, ufd, &bd, &why);
            if (b == BODY_BAD)
                reply(c, 400, "Bad Request", "%s", why.msg);
            sl_err_clear(&why);
            if (b == BODY_BAD || b == BODY_GONE)
                break;
        }
        size_t end;
        int h = read_head(c, &up, sl_clock_ms() + IDLE_TIMEOUT_MS, &end);
        char *head = h == HEAD_OK ? sl_xstrndup(up.buf, end) : NULL;
        int status = head ? status_of(head) : -1;
        /* The reply names no header line, so no message is made. */
        bool bad = head && check_fields(strchr(head, '\n') + 1, NULL) < 0;
        if (status < 0 || bad || status == 101) {
            reply(c, 502, "Bad Gateway", "host %s sent %s", r->norm,
                  h == HEAD_TOOBIG    ? "a response head longer than 64 KiB"
                  : h == HEAD_BAD     ? "a response head with control bytes or a CR without LF"
                  : h == HEAD_TIMEOUT ? "no response in time"
                  : h != HEAD_OK      ? "no response before closing the connection"
                  : status < 0        ? "a response that is not HTTP/1.1 or 1.0"
                  : bad               ? "a malformed header line"
                         : "101 Switching Protocols, which the proxy does not pass on");
            free(head);
            break;
        }
        consume(&up, end);
        if (status < 200) {
            /* Interim: pass it on and go back to the body, unless a send
             * to the origin was cut short and the body cannot go on. */
            sl_buf_init(&out, 0);
            rewrite_response(head, false, false, &out);
            ok = send_all(c->p, c->cfd, out.data, out.len, sl_clock_ms() + IDLE_TIMEOUT_MS) == 0;
            sl_buf_release(&out);
            free(head);
            if (!ok || (bd.cut && !bd.done))
                break;
            continue;
        }
        sl_h1_body rf;
        memset(&rf, 0, sizeof rf);
        sl_err framing = {0};
        if (!strcmp(r->method, "HEAD") || status == 204 || status == 304) {
            rf.kind = SL_H1_NONE;
        } else if (sl_h1_body_of(strchr(head, '\n') + 1, false, false, &rf, &framing) < 0) {
            reply(c, 502, "Bad Gateway", "host %s sent a response the proxy cannot frame: %s",
                  r->norm, framing.msg);
            sl_err_clear(&framing);
            free(head);
            break;
        }
        again = bd.done && !rf.both && !strcmp(r->version, "HTTP/1.1") &&
                !sl_h1_has_token(r->fields, "connection", "close") && rf.kind != SL_H1_CLOSE;
        sl_buf_init(&out, 0);
        rewrite_response(head, rf.both, !again, &out);
        ok = send_all(c->p, c->cfd, out.data, out.len, sl_clock_ms() + IDLE_TIMEOUT_MS) == 0;
        sl_buf_release(&out);
        free(head);
        if (!ok || !send_response_body(c, &up, &rf))
            again = false;
        break;
    }
    free(up.mem);
    return again;
}

/* One request read from the client: checked, then tunnelled (CONNECT,
 * the connection's last) or exchanged.  Returns whether another request
 * may follow on this connection. */
static bool serve_one(conn *c, inbuf *in, request *r)
{
    sl_err bad = {0};
    if (parse_head(r, &bad) < 0) {
        reply(c, 400, "Bad Request", "%s", bad.msg);
        sl_err_clear(&bad);
        return false;
    }
    bool tunnel = !strcmp(r->method, "CONNECT");
    if (tunnel) {
        if (!parse_authority(r, r->target, strlen(r->target), 0)) {
            reply(c, 400, "Bad Request", "CONNECT needs host:port, not %.200s", r->target);
            return false;
        }
    } else if (!strncasecmp(r->target, "http://", 7)) {
        const char *a = r->target + 7;
        size_t alen = strcspn(a, "/?#");
        if (memchr(a, '@', alen)) {
            reply(c, 400, "Bad Request", "user names and passwords in URLs are not proxied");
            return false;
        }
        if (!parse_authority(r, a, alen, 80)) {
            reply(c, 400, "Bad Request", "the URL %.200s has no valid host", r->target);
            return false;
        }
        r->authority = a;
        r->alen = alen;
        r->path = a + alen;
        r->plen = strcspn(r->path, "#");
    } else if (strstr(r->target, "://")) {
        reply(c, 400, "Bad Request",
              "only http:// URLs can be proxied; use CONNECT for https and other schemes");
        return false;
    } else {
        reply(c, 400, "Bad Request",
              "this is a proxy: send CONNECT host:port or an absolute http:// URL");
        return false;
    }
    /* The body's framing is judged before anything goes out, so a request
     * the proxy would frame differently from the origin goes nowhere. */
    sl_h1_body frame;
    memset(&frame, 0, sizeof frame);
    if (!tunnel) {
        sl_err framing = {0};
        if (sl_h1_body_of(r->fields, true, !strcmp(r->version, "HTTP/1.0"), &frame,
                          &framing) < 0) {
            reply(c, 400, "Bad Request", "%s", framing.msg);
            sl_err_clear(&framing);
            return false;
        }
    }
    sl_err refused = {0};
    if (sl_proxy_check_host(c->p, r->norm, r->port, &refused)) {
        refuse(c, &refused);
        sl_err_clear(&refused);
        return false;
    }
    addr as[MAX_ADDRS];
    size_t nas;
    if (resolve(c, r, as, &nas) < 0)
        return false;
    pthread_mutex_lock(&c->p->mu);
    c->p->stats.allowed++;
    pthread_mutex_unlock(&c->p->mu);
    int ufd = connect_any(c, r, as, nas);
    if (ufd < 0)
        return false;
    bool again = false;
    if (tunnel) {
        static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
        if (send_all(c->p, c->cfd, ok, sizeof ok - 1, sl_clock_ms() + REPLY_TIMEOUT_MS) == 0)
            relay(c, ufd, in->buf, in->len);
    } else {
        again = exchange(c, in, r, &frame, ufd);
    }
    close(ufd);
    return again;
}

/* Serves the requests of one client connection in turn.  Each request on
 * a kept-alive connection is read, framed and checked on its own, so bytes
 * after the first request never reach an origin unchecked. */
static void serve(conn *c)
{
    inbuf in;
    inbuf_init(&in, c->cfd, HEAD_CAP);
    for (bool first = true;; first = false) {
        size_t end;
        int h = read_head(c, &in, sl_clock_ms() + HEAD_TIMEOUT_MS, &end);
        if (h == HEAD_CLOSED || (h == HEAD_TIMEOUT && !first && !in.len))
            break;
        if (h == HEAD_TIMEOUT) {
            reply(c, 408, "Request Timeout", "no complete request head within %d seconds",
                  HEAD_TIMEOUT_MS / 1000);
            break;
        }
        if (h == HEAD_TOOBIG) {
            reply(c, 431, "Request Header Fields Too Large",
                  "the request head is longer than %d bytes", HEAD_CAP);
            break;
        }
        if (h == HEAD_BAD) {
            reply(c, 400, "Bad Request",
                  "the request is not HTTP (control bytes, or a CR without LF, in its head)");
            break;
        }
        request r;
        memset(&r, 0, sizeof r);
        r.head = sl_xstrndup(in.buf, end);
        consume(&in, end);
        bool again = serve_one(c, &in, &r);
        free(r.head);
        if (!again)
            break;
    }
    free(in.mem);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    sl_proxy *p = c->p;
    serve(c);
    close(c->cfd);
    pthread_mutex_lock(&p->mu);
    c->done = true;
    pthread_mutex_unlock(&p->mu);
    /* If the pipe is full the acceptor has a poke pending anyway. */
    if (write(p->reap[1], "x", 1) < 0) {
    }
    return NULL;
}

/* ---- accepting ---- */

/* Joins finished connection threads, or all of them. */
static void reap(sl_proxy *p, bool all)
{
    for (;;) {
        conn *c = NULL;
        pthread_mutex_lock(&p->mu);
        for (conn **pp = &p->conns; *pp; pp = &(*pp)->next)
            if (all || (*pp)->done) {
                c = *pp;
                *pp = c->next;
                p->nconns--;
                break;
            }
        pthread_mutex_unlock(&p->mu);
        if (!c)
            return;
        pthread_join(c->tid, NULL);
        free(c);
    }
}

static void accept_one(sl_proxy *p)
{
    int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        /* Out of descriptors or memory: back off instead of spinning. */
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            struct pollfd w = {p->wake[0], POLLIN, 0};
            poll(&w, 1, 100);
        }
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_mutex_lock(&p->mu);
    if (p->nconns >= MAX_CONNS) {
        pthread_mutex_unlock(&p->mu);
        static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                   "Connection: close\r\n\r\n";
        if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        }
        close(fd);
        return;
    }
    conn *c = sl_xcalloc(1, sizeof *c);
    c->p = p;
    c->cfd = fd;
    /* Under the lock, so the thread cannot finish before it is listed. */
    if (pthread_create(&c->tid, NULL, conn_main, c) != 0) {
        pthread_mutex_unlock(&p->mu);
        close(fd);
        free(c);
        return;
    }
    c->next = p->conns;
    p->conns = c;
    p->nconns++;
    pthread_mutex_unlock(&p->mu);
}

static void *accept_main(void *arg)
{
    sl_proxy *p = arg;
    for (;;) {
        struct pollfd f[3] = {{p->listen_fd, POLLIN, 0},
                              {p->wake[0], POLLIN, 0},
                              {p->reap[0], POLLIN, 0}};
        if (poll(f, 3, -1) < 0)
            continue;
        if (f[1].revents)
            break;
        if (f[2].revents) {
            char tmp[64];
            while (read(p->reap[0], tmp, sizeof tmp) > 0) {
            }
            reap(p, false);
        }
        if (f[0].revents & POLLIN) {
            accept_one(p);
        } else if (f[0].revents) {
            /* The listening socket broke; wait for stop without spinning. */
            poll(&f[1], 1, 100);
        }
    }
    return NULL;
}

static void proxy_free(sl_proxy *p)
{
    if (p->listen_fd >= 0)
        close(p->listen_fd);
    for (int i = 0; i < 2; i++) {
        if (p->wake[i] >= 0)
            close(p->wake[i]);
        if (p->reap[i] >= 0)
            close(p->reap[i]);
    }
    pthread_mutex_destroy(&p->mu);
    free(p->rules);
    free(p->allowed);
    free(p);
}

int sl_proxy_start(int listen_fd, const char *allow, sl_proxy **out, sl_err *err)
{
    *out = NULL;
    sl_proxy *p = sl_xcalloc(1, sizeof *p);
    p->listen_fd = listen_fd;
    p->wake[0] = p->wake[1] = p->reap[0] = p->reap[1] = -1;
    pthread_mutex_init(&p->mu, NULL);
    if (parse_allow(p, allow, err) < 0)
        goto fail;
    int listening = 0;
    socklen_t l = sizeof listening;
    if (listen_fd < 0 ||
        getsockopt(listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) < 0 || !listening) {
        sl_err_set(err, SL_EINVAL, "sandbox proxy: descriptor %d is not a listening socket",
                   listen_fd);
        goto fail;
    }
    int fl = fcntl(listen_fd, F_GETFL);
    if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        fcntl(listen_fd, F_SETFD, FD_CLOEXEC) < 0 || pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
        pipe2(p->reap, O_CLOEXEC | O_NONBLOCK) < 0) {
        sl_err_set(err, SL_EIO, "sandbox proxy: cannot set up its sockets: %s", strerror(errno));
        goto fail;
    }
    int rc = pthread_create(&p->acceptor, NULL, accept_main, p);
    if (rc) {
        sl_err_set(err, SL_EIO, "sandbox proxy: cannot start its thread: %s", strerror(rc));
        goto fail;
    }
    *out = p;
    return 0;
fail:
    proxy_free(p);
    return -1;
}

void sl_proxy_stop(sl_proxy *p)
{
    if (!p)
        return;
    if (write(p->wake[1], "x", 1) < 0) {
    }
    pthread_join(p->acceptor, NULL);
    reap(p, true);
    proxy_free(p);
}

void sl_proxy_get_stats(sl_proxy *p, sl_proxy_stats *s)
{
    pthread_mutex_lock(&p->mu);
    *s = p->stats;
    pthread_mutex_unlock(&p->mu);
}
