/*
 * proxy — the HTTP egress proxy a sandboxed step reaches the network through.
 *
 * A sandbox gets no network of its own, only a socket to this proxy (via
 * HTTP_PROXY/HTTPS_PROXY).  The proxy serves CONNECT host:port tunnels (for
 * https and anything else) and absolute-form plain-http requests, and lets a
 * request through only when
 *
 *   - its host matches the allow list (names compared case-insensitively, a
 *     trailing dot ignored; IP literals must be listed literally, "*" covers
 *     names only) on a port the entry opens (80 and 443 unless it names
 *     one), and
 *   - every address the name resolves to is public (core/netaddr), unless
 *     the allow list names that exact address as a literal.
 *
 * It then connects to the address it checked, never resolving again, so a
 * name that answers differently the second time (DNS rebinding) cannot steer
 * it elsewhere.
 *
 * A plain-http client connection is kept alive: each request on it is read,
 * framed (sandbox/h1) and checked on its own and gets an origin connection
 * of its own, so nothing after the first request is ever passed on raw.
 * Framing the proxy would have to guess at (Content-Length with
 * Transfer-Encoding, codings other than chunked, malformed chunks, a CR
 * without LF in a head) is refused with 400; chunked bodies are re-encoded
 * both ways.  A CONNECT tunnel carries raw bytes to its one checked target.
 * Refusals are "403 Forbidden" with a one-line text body that
 * says which host was refused and why; names that do not resolve and
 * origins that cannot be reached are 502, requests the proxy cannot read
 * are 400 (431 when the head passes 16 KiB).
 *
 * Threads: one accepts, one more per open connection; sl_proxy_stop() wakes
 * every one of them, closes their sockets and joins them.  A thread inside
 * getaddrinfo() cannot be woken, so stop may wait for the resolver's own
 * timeout.  Errors from start come back through sl_err; the proxy reports
 * nothing else except its counters.
 */
#ifndef SL_PROXY_H
#define SL_PROXY_H

#include <stddef.h>

#include "core/err.h"

typedef struct sl_proxy sl_proxy;

/* Serves HTTP proxy requests arriving on listen_fd (an already listening
 * stream socket, TCP or unix) on its own thread.  The proxy takes ownership
 * of listen_fd, also when it fails to start.
 *
 * allow: comma-separated host patterns: exact names ("pypi.org"), wildcards
 * ("*.example.org" matches any subdomain depth, not the apex), IP literals
 * ("10.0.0.5", "::1", "[::1]:8080"), each with an optional ":port" suffix
 * ("*.example.org:8443", "*:8080" too).  An entry without a port allows
 * ports 80 and 443 only; one with a port allows that port only (list a
 * host twice for two ports).  An entry "*" allows every host name whose
 * addresses are public.  NULL or "" allows nothing.  A malformed entry
 * fails with SL_EINVAL naming it. */
int sl_proxy_start(int listen_fd, const char *allow, sl_proxy **out, sl_err *err);

/* Stops accepting, closes every open relay, joins all threads, frees.
 * NULL is a no-op. */
void sl_proxy_stop(sl_proxy *p);

/* Counters for tests and diagnostics: requests that passed every check and
 * went on to connect, and requests answered 403. */
typedef struct {
    unsigned long allowed, refused;
} sl_proxy_stats;
void sl_proxy_get_stats(sl_proxy *p, sl_proxy_stats *s);

/* Checks one target against the allow list: host is a name or an IP literal
 * (brackets around IPv6 optional), port 1-65535.  Returns 0 when allowed,
 * else -1 with err (SL_EINVAL) naming the host, such as "host evil.com is
 * not in the allow list (allowed: pypi.org)".  Names are not resolved here;
 * the proxy checks their addresses when it connects. */
int sl_proxy_check_host(const sl_proxy *p, const char *host, int port, sl_err *err);

#endif
