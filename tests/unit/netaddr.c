/*
 * netaddr — the address classification the SSRF guards share: every IPv4
 * and IPv6 special-purpose range, IPv4 carried inside IPv6 (mapped,
 * compatible, NAT64, 6to4) judged by the IPv4 address inside, and this
 * machine's own interface addresses: the ones getifaddrs() lists here, and
 * public addresses put on the loopback interface of a network namespace of
 * our own (skipped, counted, where namespaces cannot be made).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/netaddr.h"
#include "tap.h"

/* Address text and the start of the expected phrase (NULL: public). */
static const struct {
    const char *ip, *kind;
} table[] = {
    {"8.8.8.8", NULL},
    {"1.1.1.1", NULL},
    {"0.1.2.3", "a 'this network' address"},
    {"10.0.0.5", "a private address (10.0.0.0/8)"},
    {"100.64.0.1", "a carrier-grade NAT address"},
    {"100.127.255.255", "a carrier-grade NAT address"},
    {"100.128.0.1", NULL},
    {"127.0.0.1", "a loopback address (127.0.0.0/8)"},
    {"127.255.255.254", "a loopback address"},
    {"169.254.169.254", "a link-local address (169.254.0.0/16)"},
    {"172.16.0.1", "a private address (172.16.0.0/12)"},
    {"172.31.255.255", "a private address (172.16.0.0/12)"},
    {"172.32.0.1", NULL},
    {"192.0.0.8", "an IETF protocol address"},
    {"192.0.0.170", "an IETF protocol address"},
    {"192.0.1.1", NULL},
    {"192.0.2.1", "a documentation address (192.0.2.0/24, TEST-NET-1)"},
    {"192.0.3.1", NULL},
    {"192.31.196.1", "an AS112 DNS address (192.31.196.0/24)"},
    {"192.52.193.1", "an AMT relay address"},
    {"192.88.99.1", "a 6to4 relay anycast address (192.88.99.0/24)"},
    {"192.168.1.1", "a private address (192.168.0.0/16)"},
    {"192.175.48.6", "an AS112 DNS address (192.175.48.0/24)"},
    {"198.18.0.1", "a benchmarking address (198.18.0.0/15)"},
    {"198.19.255.255", "a benchmarking address"},
    {"198.20.0.1", NULL},
    {"198.51.100.7", "a documentation address (198.51.100.0/24, TEST-NET-2)"},
    {"203.0.113.9", "a documentation address (203.0.113.0/24, TEST-NET-3)"},
    {"203.0.114.1", NULL},
    {"223.255.255.255", NULL},
    {"224.0.0.1", "a multicast address (224.0.0.0/4)"},
    {"239.255.255.250", "a multicast address"},
    {"240.0.0.1", "a reserved address (240.0.0.0/4)"},
    {"255.255.255.254", "a reserved address (240.0.0.0/4)"},
    {"255.255.255.255", "the limited broadcast address"},
    {"::", "the unspecified address"},
    {"::1", "the loopback address (::1)"},
    {"2001:4860:4860::8888", NULL},
    {"2606:4700::1111", NULL},
    /* mapped */
    {"::ffff:127.0.0.1", "a loopback address (127.0.0.0/8)"},
    {"::ffff:192.0.2.1", "a documentation address (192.0.2.0/24"},
    {"::ffff:203.0.113.1", "a documentation address (203.0.113.0/24"},
    {"::ffff:8.8.8.8", NULL},
    /* compatible (deprecated): refused whatever it carries */
    {"::10.0.0.1", "a private address (10.0.0.0/8)"},
    {"::8.8.8.8", "a deprecated IPv4-compatible address (::/96)"},
    /* translated (SIIT), outside 2000::/3 */
    {"::ffff:0:8.8.8.8", "a reserved address (outside 2000::/3"},
    /* NAT64 */
    {"64:ff9b::a9fe:a9fe", "a link-local address (169.254.0.0/16)"},
    {"64:ff9b::127.0.0.1", "a loopback address"},
    {"64:ff9b::198.51.100.1", "a documentation address (198.51.100.0/24"},
    {"64:ff9b::808:808", NULL},
    {"64:ff9b:1::1", "a local-use NAT64 address (64:ff9b:1::/48)"},
    {"64:ff9b:1:ffff::8.8.8.8", "a local-use NAT64 address"},
    /* 6to4 */
    {"2002:c0a8:0101::1", "a private address (192.168.0.0/16)"},
    {"2002:7f00:1::", "a loopback address"},
    {"2002:c000:0201::1", "a documentation address (192.0.2.0/24"},
    {"2002:0808:0808::1", NULL},
    /* IETF protocol assignments, Teredo, documentation */
    {"2001::1", "a Teredo address (2001::/32)"},
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo address"},
    {"2001:1::1", "an IETF protocol address (2001::/23)"},
    {"2001:2::1", "an IETF protocol address"},
    {"2001:20::1", "an IETF protocol address"},
    {"2001:1ff:ffff::1", "an IETF protocol address"},
    {"2001:200::1", NULL},
    {"2001:db8::1", "a documentation address (2001:db8::/32)"},
    {"2001:db8:ffff::1", "a documentation address"},
    {"2001:db9::1", NULL},
    {"3fff::1", "a documentation address (3fff::/20)"},
    {"3fff:fff::1", "a documentation address (3fff::/20)"},
    {"3fff:1000::1", NULL},
    {"2620:4f:8000::53", "an AS112 DNS address"},
    {"2620:4f:8001::1", NULL},
    {"100::1", "a discard-only address (100::/64)"},
    {"100:0:0:1::5", "a dummy address (100:0:0:1::/64)"},
    {"5f00::1", "an SRv6 segment identifier (5f00::/16)"},
    {"fd00::1", "a unique local (private) address (fc00::/7)"},
    {"fc00::1", "a unique local (private) address"},
    {"fe80::1", "a link-local address (fe80::/10)"},
    {"febf::1", "a link-local address"},
    {"fec0::1", "a site-local address"},
    {"ff02::1", "a multicast address (ff00::/8)"},
    {"4000::1", "a reserved address (outside 2000::/3"},
    {"1::1", "a reserved address (outside 2000::/3"},
    {"e000::1", "a reserved address (outside 2000::/3"},
};

static int kind_is(const char *got, const char *want)
{
    if (!want || !got)
        return got == want;
    return strncmp(got, want, strlen(want)) == 0;
}

static void test_text_table(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const char *k = sl_ip_text_kind(table[i].ip);
        CHECK(kind_is(k, table[i].kind), "%s is %s (got %s)", table[i].ip,
              table[i].kind ? table[i].kind : "public", k ? k : "public");
    }
    CHECK(sl_ip_text_kind("example.org") == NULL, "a host name is not classified");
    CHECK(sl_ip_text_kind("") == NULL, "empty text is not classified");
}

/* The same table through socket addresses, as a resolver returns them; the
 * text written back is the address. */
static void test_sockaddr_table(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof ss);
        if (strchr(table[i].ip, ':')) {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
            in6->sin6_family = AF_INET6;
            inet_pton(AF_INET6, table[i].ip, &in6->sin6_addr);
        } else {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            in->sin_family = AF_INET;
            inet_pton(AF_INET, table[i].ip, &in->sin_addr);
        }
        char text[64];
        const char *k = sl_addr_kind((const struct sockaddr *)&ss, text, sizeof text);
        CHECK(kind_is(k, table[i].kind), "sockaddr %s is %s (got %s)", table[i].ip,
              table[i].kind ? table[i].kind : "public", k ? k : "public");
        unsigned char a[16], b[16];
        int fam = strchr(table[i].ip, ':') ? AF_INET6 : AF_INET;
        CHECK(inet_pton(fam, text, a) == 1 && inet_pton(fam, table[i].ip, b) == 1 &&
                  !memcmp(a, b, fam == AF_INET ? 4 : 16),
              "sockaddr %s is written back as text (got %s)", table[i].ip, text);
    }
    struct sockaddr sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_family = AF_UNIX;
    char text[64];
    const char *k = sl_addr_kind(&sa, text, sizeof text);
    CHECK(k && !strcmp(k, "not an internet address"), "AF_UNIX is not an internet address (got %s)",
          k ? k : "public");
}

static int sockaddr_of(const char *ip, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (strchr(ip, ':')) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        in6->sin6_family = AF_INET6;
        return inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    return inet_pton(AF_INET, ip, &in->sin_addr) == 1 ? 0 : -1;
}

/* Every address getifaddrs() lists here is this machine's and refused,
 * and so are the IPv6 forms that carry its IPv4 addresses. */
static void test_own_interfaces(void)
{
    struct ifaddrs *list;
    if (getifaddrs(&list) < 0) {
        CHECK(0, "getifaddrs: %s", strerror(errno));
        return;
    }
    int others = 0;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
                             i->ifa_addr->sa_family != AF_INET6))
            continue;
        char text[64];
        const char *k = sl_addr_kind(i->ifa_addr, text, sizeof text);
        CHECK(sl_addr_is_own(i->ifa_addr) == 1 && k,
              "%s address %s is this machine's and refused (%s)", i->ifa_name, text,
              k ? k : "allowed");
        if (i->ifa_flags & IFF_LOOPBACK)
            continue;
        others++;
        if (i->ifa_addr->sa_family != AF_INET)
            continue;
        char forms[3][80];
        snprintf(forms[0], sizeof forms[0], "::ffff:%s", text);
        snprintf(forms[1], sizeof forms[1], "64:ff9b::%s", text);
        const unsigned char *b = (const unsigned char *)&((struct sockaddr_in *)(void *)
                                                              i->ifa_addr)->sin_addr;
        snprintf(forms[2], sizeof forms[2], "2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]);
        for (int f = 0; f < 3; f++) {
            struct sockaddr_storage ss;
            sockaddr_of(forms[f], &ss);
            CHECK(sl_addr_is_own((struct sockaddr *)&ss) == 1 && sl_ip_text_kind(forms[f]),
                  "%s (carrying %s's address) is this machine's and refused", forms[f],
                  i->ifa_name);
        }
    }
    freeifaddrs(list);
    if (!others)
        CHECK(1, "# SKIP this machine has no network interface besides loopback");
    struct sockaddr_storage ss;
    sockaddr_of("8.8.8.8", &ss);
    CHECK(sl_addr_is_own((struct sockaddr *)&ss) == 0, "8.8.8.8 is not this machine's");
}

/* In a child with a network namespace of its own, public addresses put
 * on its loopback interface are this machine's: refused, with the phrase
 * that says so, in every form that reaches them.  Runs first, before any
 * lookup fills the one-second cache the child would inherit.  Exit codes:
 * 0 fine, 1 a check failed, 77 no namespace could be made. */
static int own_public_child(void)
{
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 && unshare(CLONE_NEWNET) < 0)
        return 77;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    struct sockaddr_in *in = (struct sockaddr_in *)&ifr.ifr_addr;
    in->sin_family = AF_INET;
    inet_pton(AF_INET, "93.184.215.14", &in->sin_addr);
    if (fd < 0 || ioctl(fd, SIOCSIFADDR, &ifr) < 0)
        return 77;
    close(fd);
    static const char *const refused[] = {"93.184.215.14", "::ffff:93.184.215.14",
                                          "64:ff9b::93.184.215.14", "2002:5db8:d70e::1"};
    int bad = 0;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const char *k = sl_ip_text_kind(refused[i]);
        if (!k || strcmp(k, "an address of this machine's own network interfaces")) {
            printf("# %s: %s\n", refused[i], k ? k : "allowed");
            bad = 1;
        }
    }
    if (sl_ip_text_kind("93.184.215.15")) {
        printf("# 93.184.215.15, not on any interface, is refused\n");
        bad = 1;
    }
    fflush(stdout);
    return bad;
}

static void test_own_public(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(own_public_child());
    int st = 0;
    waitpid(pid, &st, 0);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (code == 77)
        CHECK(1, "# SKIP no network namespace can be made here for a public loopback address");
    else
        CHECK(code == 0, "a public address on this machine's interface is refused as its own, "
                         "also mapped, NAT64 and 6to4 (child exit %d)",
              code);
}

int main(void)
{
    test_own_public();
    test_text_table();
    test_sockaddr_table();
    test_own_interfaces();
    return tap_done();
}
