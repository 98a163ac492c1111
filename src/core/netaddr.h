/*
 * netaddr — what kind of IP address an address is, for the SSRF guards.
 *
 * The http-request node and the sandbox egress proxy both refuse to connect
 * to addresses that reach the host or its networks rather than the public
 * internet: "this network", loopback, private, CGNAT, link-local, IETF
 * protocol, benchmarking, multicast and reserved ranges, and the same
 * addresses carried inside IPv6 (mapped ::ffff:a.b.c.d, compatible
 * ::a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::), since those
 * reach the IPv4 address inside.  Both guards ask here so they agree.
 *
 * Each function returns NULL for a public address and otherwise a static
 * phrase written for a user, such as "a loopback address (127.0.0.0/8)", that
 * reads well after "... resolves to 127.0.0.1, ".  Nothing is allocated.
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

#endif
