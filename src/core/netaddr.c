#include "core/netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/err.h"

/* ---- special-purpose ranges ---- */

/* The IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its
 * updates), with multicast and the reserved 240/4 beside it.  Entries the
 * registry marks globally reachable (AS112, AMT) are here too: they serve
 * routing infrastructure, never content a workflow should fetch. */
static const struct {
    uint32_t net;
    int bits;
    const char *kind;
} v4_ranges[] = {
    {0x00000000u, 8, "a 'this network' address (0.0.0.0/8)"},
    {0x0a000000u, 8, "a private address (10.0.0.0/8)"},
    {0x64400000u, 10, "a carrier-grade NAT address (100.64.0.0/10)"},
    {0x7f000000u, 8, "a loopback address (127.0.0.0/8)"},
    {0xa9fe0000u, 16, "a link-local address (169.254.0.0/16)"},
    {0xac100000u, 12, "a private address (172.16.0.0/12)"},
    {0xc0000000u, 24, "an IETF protocol address (192.0.0.0/24)"},
    {0xc0000200u, 24, "a documentation address (192.0.2.0/24, TEST-NET-1)"},
    {0xc01fc400u, 24, "an AS112 DNS address (192.31.196.0/24)"},
    {0xc034c100u, 24, "an AMT relay address (192.52.193.0/24)"},
    {0xc0586300u, 24, "a 6to4 relay anycast address (192.88.99.0/24)"},
    {0xc0a80000u, 16, "a private address (192.168.0.0/16)"},
    {0xc0af3000u, 24, "an AS112 DNS address (192.175.48.0/24)"},
    {0xc6120000u, 15, "a benchmarking address (198.18.0.0/15)"},
    {0xc6336400u, 24, "a documentation address (198.51.100.0/24, TEST-NET-2)"},
    {0xcb007100u, 24, "a documentation address (203.0.113.0/24, TEST-NET-3)"},
    {0xe0000000u, 4, "a multicast address (224.0.0.0/4)"},
    {0xffffffffu, 32, "the limited broadcast address (255.255.255.255)"},
    {0xf0000000u, 4, "a reserved address (240.0.0.0/4)"},
};

static const char *v4_range_kind(uint32_t a)
{
    for (size_t i = 0; i < sizeof v4_ranges / sizeof v4_ranges[0]; i++) {
        uint32_t mask = 0xffffffffu << (32 - v4_ranges[i].bits);
        if ((a & mask) == v4_ranges[i].net)
            return v4_ranges[i].kind;
    }
    return NULL;
}

/* The IANA IPv6 Special-Purpose Address Registry, the address
 * architecture's link-local, site-local and multicast blocks, and the
 * newer documentation and SRv6 blocks.  Forms that carry an IPv4 address
 * are judged by that address first (v6_range_kind). */
static const struct {
    unsigned char net[16];
    int bits;
    const char *kind;
} v6_ranges[] = {
    {{0}, 128, "the unspecified address (::)"},
    {{[15] = 1}, 128, "the loopback address (::1)"},
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, "a local-use NAT64 address (64:ff9b:1::/48)"},
    {{0x01, 0x00}, 64, "a discard-only address (100::/64)"},
    {{0x01, 0x00, [7] = 0x01}, 64, "a dummy address (100:0:0:1::/64)"},
    {{0x20, 0x01, 0x00, 0x00}, 32, "a Teredo address (2001::/32)"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "a documentation address (2001:db8::/32)"},
    {{0x20, 0x01}, 23, "an IETF protocol address (2001::/23)"},
    {{0x26, 0x20, 0x00, 0x4f, 0x80, 0x00}, 48, "an AS112 DNS address (2620:4f:8000::/48)"},
    {{0x3f, 0xff}, 20, "a documentation address (3fff::/20)"},
    {{0x5f, 0x00}, 16, "an SRv6 segment identifier (5f00::/16)"},
    {{0xfc}, 7, "a unique local (private) address (fc00::/7)"},
    {{0xfe, 0x80}, 10, "a link-local address (fe80::/10)"},
    {{0xfe, 0xc0}, 10, "a site-local address (fec0::/10)"},
    {{0xff}, 8, "a multicast address (ff00::/8)"},
};

static bool prefix_is(const unsigned char *b, const unsigned char *net, int bits)
{
    int whole = bits / 8, rest = bits % 8;
    if (memcmp(b, net, (size_t)whole))
        return false;
    if (!rest)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (b[whole] & mask) == (net[whole] & mask);
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Where an IPv6 address carries an IPv4 address that it reaches: mapped
 * ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d (through a translator), 6to4
 * 2002:aabb:ccdd:: (through the relay of that IPv4 site) and the
 * deprecated compatible ::a.b.c.d.  NULL for other addresses; *compat is
 * set for the compatible form, which is refused whatever it carries. */
static const unsigned char *embedded_v4(const unsigned char *b, bool *compat)
{
    static const unsigned char zero[12];
    static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
    static const unsigned char nat64[12] = {0x00, 0x64, 0xff, 0x9b};
    *compat = false;
    if (!memcmp(b, mapped, 12) || !memcmp(b, nat64, 12))
        return b + 12;
    if (b[0] == 0x20 && b[1] == 0x02)
        return b + 2;
    /* :: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1. */
    if (!memcmp(b, zero, 12) && be32(b + 12) > 1) {
        *compat = true;
        return b + 12;
    }
    return NULL;
}

static const char *v6_range_kind(const unsigned char *b)
{
    bool compat;
    const unsigned char *v4 = embedded_v4(b, &compat);
    if (v4) {
        const char *k = v4_range_kind(be32(v4));
        if (k || !compat)
            return k;
        return "a deprecated IPv4-compatible address (::/96)";
    }
    for (size_t i = 0; i < sizeof v6_ranges / sizeof v6_ranges[0]; i++)
        if (prefix_is(b, v6_ranges[i].net, v6_ranges[i].bits))
            return v6_ranges[i].kind;
    /* Only 2000::/3 is handed out for global unicast; the rest is reserved
     * or special whether or not the registries list it yet. */
    if ((b[0] & 0xe0) != 0x20)
        return "a reserved address (outside 2000::/3, the global unicast space)";
    return NULL;
}

/* ---- this machine's own addresses ---- */

/* A service bound to 0.0.0.0 answers on every address of the host, public
 * ones included, so the host's own addresses are refused like loopback.
 * getifaddrs() costs about 36 us (a netlink dump), and the guards ask on
 * every connection, so the list is kept for a second: interfaces change
 * rarely and never at a workflow's request.  Addresses are kept in IPv6
 * form, IPv4 as ::ffff:a.b.c.d. */
#define OWN_TTL_NS 1000000000LL

static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char (*own)[16];
static size_t nown;
static long long own_at = -1;   /* when the list was read; -1: never */
static bool own_ok;             /* the last read worked */

static void v4_as_v6(const unsigned char *v4, unsigned char out[16])
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, v4, 4);
}

/* Reads the interface addresses into own[]; the lock is held. */
static void own_refresh(void)
{
    struct ifaddrs *list = NULL;
    own_at = sl_clock_ns();
    if (getifaddrs(&list) < 0) {
        /* Keep nothing: a stale list could miss an address, and the
         * guards fail closed while own_ok is false. */
        own_ok = false;
        nown = 0;
        return;
    }
    size_t n = 0;
    for (struct ifaddrs *i = list; i; i = i->ifa_next)
        if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
                            i->ifa_addr->sa_family == AF_INET6))
            n++;
    own = sl_xrealloc(own, (n ? n : 1) * sizeof *own);
    nown = 0;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr)
            continue;
        if (i->ifa_addr->sa_family == AF_INET) {
            const struct sockaddr_in *in = (const void *)i->ifa_addr;
            v4_as_v6((const unsigned char *)&in->sin_addr, own[nown++]);
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const void *)i->ifa_addr;
            memcpy(own[nown++], &in6->sin6_addr, 16);
        }
    }
    freeifaddrs(list);
    own_ok = true;
}

/* 1: one of this machine's addresses; 0: not; -1: the list cannot be read. */
static int own_has(const unsigned char ip[16])
{
    pthread_mutex_lock(&own_mu);
    long long now = sl_clock_ns();
    if (own_at < 0 || now - own_at >= OWN_TTL_NS || now < own_at)
        own_refresh();
    int r = own_ok ? 0 : -1;
    for (size_t i = 0; r == 0 && i < nown; i++)
        if (!memcmp(own[i], ip, 16))
            r = 1;
    pthread_mutex_unlock(&own_mu);
    return r;
}

/* 1: ip is this machine's, also when carried inside IPv6 (a mapped or
 * NAT64 form of the host's IPv4 address reaches the host too); 0: not;
 * -1: the interfaces cannot be listed. */
static int own_match(const unsigned char ip[16])
{
    unsigned char alt[16];
    bool compat;
    const unsigned char *v4 = embedded_v4(ip, &compat);
    int r = own_has(ip);
    if (r == 0 && v4) {
        v4_as_v6(v4, alt);
        r = own_has(alt);
    }
    return r;
}

static const char *own_kind(const unsigned char ip[16])
{
    int r = own_match(ip);
    if (r < 0)
        return "an address sluice cannot tell apart from this machine's own (listing the "
               "network interfaces failed)";
    return r ? "an address of this machine's own network interfaces" : NULL;
}

/* ---- the public functions ---- */

static const char *kind_of(const unsigned char ip[16])
{
    const char *k = v6_range_kind(ip);
    return k ? k : own_kind(ip);
}

const char *sl_addr_kind(const struct sockaddr *sa, char *text, size_t n)
{
    unsigned char ip[16];
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, text, (socklen_t)n);
        v4_as_v6((const unsigned char *)&in->sin_addr, ip);
        return kind_of(ip);
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, text, (socklen_t)n);
        memcpy(ip, &in6->sin6_addr, 16);
        return kind_of(ip);
    }
    snprintf(text, n, "(address family %d)", sa->sa_family);
    return "not an internet address";
}

const char *sl_ip_text_kind(const char *ip)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, ip, b) == 1) {
        unsigned char m[16];
        v4_as_v6(b, m);
        return kind_of(m);
    }
    if (inet_pton(AF_INET6, ip, b) == 1)
        return kind_of(b);
    return NULL;
}

int sl_addr_is_own(const struct sockaddr *sa)
{
    unsigned char ip[16];
    if (sa->sa_family == AF_INET)
        v4_as_v6((const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr,
                 ip);
    else if (sa->sa_family == AF_INET6)
        memcpy(ip, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    else
        return 0;
    return own_match(ip);
}
