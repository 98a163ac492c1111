/*
 * netaddr — the address classification the SSRF guards share: IPv4 ranges,
 * IPv6 ranges, and IPv4 carried inside IPv6 (mapped, compatible, NAT64,
 * 6to4) judged by the IPv4 address inside.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

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
    {"100.128.0.1", NULL},
    {"127.0.0.1", "a loopback address (127.0.0.0/8)"},
    {"127.255.255.254", "a loopback address"},
    {"169.254.169.254", "a link-local address (169.254.0.0/16)"},
    {"172.16.0.1", "a private address (172.16.0.0/12)"},
    {"172.31.255.255", "a private address (172.16.0.0/12)"},
    {"172.32.0.1", NULL},
    {"192.0.0.8", "an IETF protocol address"},
    {"192.168.1.1", "a private address (192.168.0.0/16)"},
    {"198.18.0.1", "a benchmarking address"},
    {"224.0.0.1", "a multicast address (224.0.0.0/4)"},
    {"255.255.255.255", "a reserved address (240.0.0.0/4)"},
    {"::", "the unspecified address"},
    {"::1", "the loopback address (::1)"},
    {"2001:4860:4860::8888", NULL},
    {"::ffff:127.0.0.1", "a loopback address (127.0.0.0/8)"},
    {"::ffff:8.8.8.8", NULL},
    {"::10.0.0.1", "a private address (10.0.0.0/8)"},
    {"64:ff9b::a9fe:a9fe", "a link-local address (169.254.0.0/16)"},
    {"64:ff9b::808:808", NULL},
    {"64:ff9b:1::1", "a local-use NAT64 address"},
    {"2002:c0a8:0101::1", "a private address (192.168.0.0/16)"},
    {"2002:0808:0808::1", NULL},
    {"100::1", "a discard-only address"},
    {"fd00::1", "a unique local (private) address (fc00::/7)"},
    {"fe80::1", "a link-local address (fe80::/10)"},
    {"fec0::1", "a site-local address"},
    {"ff02::1", "a multicast address (ff00::/8)"},
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

int main(void)
{
    test_text_table();
    test_sockaddr_table();
    return tap_done();
}
