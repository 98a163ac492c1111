/*
 * size — one reading of "512M", "64 KiB", "10MB" for every setting, limit
 * and flag, and the text sluice shows sizes in.
 */
#include <stdint.h>
#include <string.h>

#include "core/size.h"
#include "tap.h"

int main(void)
{
    static const struct {
        const char *text;
        uint64_t want;
    } good[] = {
        {"0", 0},
        {"12", 12},
        {"1048576", 1048576},
        {"100b", 100},
        {"100B", 100},
        {"100 bytes", 100},
        {"1.5k", 1536},
        {"1K", 1024},
        {"1kb", 1024},
        {"1KiB", 1024},
        {"64 KiB", 64 << 10},
        {"10MB", 10 << 20},
        {"512M", 512ull << 20},
        {"512mib", 512ull << 20},
        {"2GiB", 2ull << 30},
        {"2g", 2ull << 30},
        {"3T", 3ull << 40},
        {"0.5m", 512 << 10},
        {"1.9", 1},                              /* rounded down */
        {"16777215t", 16777215ull << 40},       /* 2^64 - 2^40: the largest in t */
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        uint64_t v = 7;
        int rc = sl_size_parse(good[i].text, &v);
        CHECK(rc == 0 && v == good[i].want, "'%s' is %llu bytes (rc %d, got %llu)",
              good[i].text, (unsigned long long)good[i].want, rc, (unsigned long long)v);
    }

    static const char *const bad[] = {
        "", " ", "-1", "-0.5k", "k", "12X", "12 X", "1kx", "1 k b", "1kbb", "1kib2", "1  k",
        "nan", "inf", "1e400", "16777216t", "18446744073709551616", "99999999999999999999k",
        "1.2.3", "1p", "1 byte",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 7;
        int rc = sl_size_parse(bad[i], &v);
        CHECK(rc == -1 && v == 7, "'%s' is refused and leaves the output alone (rc %d)", bad[i],
              rc);
    }

    static const struct {
        uint64_t n;
        const char *want;
    } text[] = {
        {0, "0 bytes"},        {1023, "1023 bytes"},         {1024, "1 KiB"},
        {1536, "1 KiB"},       {1ull << 20, "1 MiB"},         {3ull << 29, "1536 MiB"},
        {1ull << 30, "1 GiB"}, {UINT64_MAX, "17592186044415 MiB"},
    };
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        char out[32];
        sl_size_text(text[i].n, out, sizeof out);
        CHECK(!strcmp(out, text[i].want), "%llu bytes show as '%s' (got '%s')",
              (unsigned long long)text[i].n, text[i].want, out);
    }
    /* what sluice shows, it reads back (exactly, for whole units) */
    static const uint64_t round[] = {0, 512, 4096, 64ull << 20, 8ull << 30};
    for (size_t i = 0; i < sizeof round / sizeof *round; i++) {
        char out[32];
        uint64_t v = 7;
        sl_size_text(round[i], out, sizeof out);
        CHECK(sl_size_parse(out, &v) == 0 && v == round[i], "'%s' reads back as %llu", out,
              (unsigned long long)v);
    }
    return tap_done();
}
