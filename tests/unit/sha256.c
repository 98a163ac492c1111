/*
 * sha256 — FIPS 180-4's examples, and the CPU's SHA instructions against
 * the portable code on every length around the block boundaries.
 */
#include <stdio.h>
#include <string.h>

#include "core/sha256.h"
#include "tap.h"

static const char *hex(const char *s, size_t n)
{
    static char out[65];
    sl_sha256_hex(s, n, out);
    return out;
}

int main(void)
{
    for (int portable = 0; portable < 2; portable++) {
        sl_sha256_portable(portable);
        const char *m = portable ? "portable" : "default";
        CHECK(!strcmp(hex("abc", 3),
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
              "%s: abc", m);
        CHECK(!strcmp(hex("", 0),
                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
              "%s: empty", m);
        const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        CHECK(!strcmp(hex(two, strlen(two)),
                      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
              "%s: two blocks", m);
        static char mil[1000000];
        memset(mil, 'a', sizeof mil);
        CHECK(!strcmp(hex(mil, sizeof mil),
                      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
              "%s: a million a", m);
    }
    /* every length 0..300 of varied bytes, both ways */
    static char buf[301];
    for (int i = 0; i < 301; i++)
        buf[i] = (char)(i * 131 + 7);
    int same = 0;
    for (size_t n = 0; n <= 300; n++) {
        char a[65], b[65];
        sl_sha256_portable(true);
        sl_sha256_hex(buf, n, a);
        sl_sha256_portable(false);
        sl_sha256_hex(buf, n, b);
        same += !strcmp(a, b);
    }
    CHECK(same == 301, "the CPU's instructions and the portable code agree on 301 lengths (%d)",
          same);
    return tap_done();
}
