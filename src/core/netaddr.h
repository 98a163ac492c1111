/*
 * netaddr — whether an IP address may be dialled for workflow data: the one
 * classification the SSRF guards share.
 *
 * The http-request node (its requests, redirects and file downloads) and
 * the sandbox egress proxy both refuse addresses that reach the host or
 * its networks rather than the public internet:
 *
 *   - every range of the IANA IPv4 and IPv6 Special-Purpose Address
 *     Registries ("this network", loopback, private, CGNAT, link-local,
 *     IETF protocol, documentation, benchmarking, 6to4 relay, AS112,
 *     Teredo, ORCHID, discard, unique local, ...), multicast, the reserved
 *     240/4 and broadcast, and every IPv6 address outside 2000::/3;
 *   - IPv4 carried inside IPv6 (mapped ::ffff:a.b.c.d, NAT64
 *     64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::, compatible ::a.b.c.d),
 *     judged by the IPv4 address inside, since that is what they reach;
 *   - every address of this machine's own interfaces (a service bound to
 *     0.0.0.0 answers on the host's public address too), read with
 *     getifaddrs() and kept for a second.  When the interfaces cannot be
 *     listed every address is refused: the guards fail closed.
 *
 * Callers make the exceptions (http_allow_private, an address the allow
 * list names literally) and must check the address they actually connect
 * to, not one resolved earlier.
 *
 * The kind functions return NULL for an address that may be dialled and
 * otherwise a static phrase written for a user, such as "a loopback address
 * (127.0.0.0/8)", that reads well after "... resolves to 127.0.0.1, ".
 * Safe from any thread; nothing is handed to the caller to free.
 */
#ifndef SL_NETADDR_H
#define SL_NETADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* Classifies an AF_INET or AF_INET6 socket address and writes the address
 * as text into text[n] (for messages).  Any other family is "not an
 * internet address". */
const char *sl_addr_kind(const struct sockaddr *sa, char *text, size_t n);

/* Classifies an address in the text form inet_pton() reads ("10.0.0.5",
 * "::ffff:127.0.0.1").  Text that is not such an address gives NULL: callers
 * pass addresses that came from a resolver or a connected socket. */
const char *sl_ip_text_kind(const char *ip);

/* Whether sa is one of this machine's own interface addresses (directly or
 * inside IPv6 as above): 1 yes, 0 no, -1 the interfaces cannot be listed.
 * sl_addr_kind() already includes this; it is separate for tests and for
 * messages. */
int sl_addr_is_own(const struct sockaddr *sa);

#endif
