#include "netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *v4_kind(uint32_t a)
{
    if ((a >> 24) == 0)
        return "a 'this network' address (0.0.0.0/8)";
    if ((a >> 24) == 10)
        return "a private address (10.0.0.0/8)";
    if ((a & 0xffc00000u) == 0x64400000u)
        return "a carrier-grade NAT address (100.64.0.0/10)";
    if ((a >> 24) == 127)
        return "a loopback address (127.0.0.0/8)";
    if ((a & 0xffff0000u) == 0xa9fe0000u)
        return "a link-local address (169.254.0.0/16)";
    if ((a & 0xfff00000u) == 0xac100000u)
        return "a private address (172.16.0.0/12)";
    if ((a & 0xffffff00u) == 0xc0000000u)
        return "an IETF protocol address (192.0.0.0/24)";
    if ((a & 0xffff0000u) == 0xc0a80000u)
        return "a private address (192.168.0.0/16)";
    if ((a & 0xfffe0000u) == 0xc6120000u)
        return "a benchmarking address (198.18.0.0/15)";
    if ((a & 0xf0000000u) == 0xe0000000u)
        return "a multicast address (224.0.0.0/4)";
    if ((a & 0xf0000000u) == 0xf0000000u)
        return "a reserved address (240.0.0.0/4)";
    return NULL;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static const char *v6_kind(const unsigned char *b)
{
    static const unsigned char zero[16];
    static const unsigned char nat64[12] = {0x00, 0x64, 0xff, 0x9b};
    static const unsigned char nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
    static const unsigned char discard[8] = {0x01, 0x00};
    if (!memcmp(b, zero, 16))
        return "the unspecified address (::)";
    if (!memcmp(b, zero, 15) && b[15] == 1)
        return "the loopback address (::1)";
    /* IPv4 carried in IPv6: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d,
     * NAT64 64:ff9b::a.b.c.d and 6to4 2002:aabb:ccdd:: reach the IPv4
     * address inside, so that address decides. */
    if ((!memcmp(b, zero, 10) && b[10] == 0xff && b[11] == 0xff) || !memcmp(b, zero, 12) ||
        !memcmp(b, nat64, 12))
        return v4_kind(be32(b + 12));
    if (b[0] == 0x20 && b[1] == 0x02)
        return v4_kind(be32(b + 2));
    if (!memcmp(b, nat64_local, 6))
        return "a local-use NAT64 address (64:ff9b:1::/48)";
    if (!memcmp(b, discard, 8))
        return "a discard-only address (100::/64)";
    if ((b[0] & 0xfe) == 0xfc)
        return "a unique local (private) address (fc00::/7)";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        return "a link-local address (fe80::/10)";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
        return "a site-local address (fec0::/10)";
    if (b[0] == 0xff)
        return "a multicast address (ff00::/8)";
    return NULL;
}

const char *sl_addr_kind(const struct sockaddr *sa, char *text, size_t n)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, text, (socklen_t)n);
        return v4_kind(ntohl(in->sin_addr.s_addr));
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, text, (socklen_t)n);
        return v6_kind(in6->sin6_addr.s6_addr);
    }
    snprintf(text, n, "(address family %d)", sa->sa_family);
    return "not an internet address";
}

const char *sl_ip_text_kind(const char *ip)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, ip, b) == 1)
        return v4_kind(be32(b));
    if (inet_pton(AF_INET6, ip, b) == 1)
        return v6_kind(b);
    return NULL;
}
