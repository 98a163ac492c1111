/*
 * size — see size.h.
 */
#include "core/size.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sl_size_parse(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0)
        return -1;
    if (*end == ' ')
        end++;
    static const struct {
        char c;
        int shift;
    } units[] = {{'k', 10}, {'m', 20}, {'g', 30}, {'t', 40}};
    int shift = -1;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if ((*end | 0x20) == units[i].c)
            shift = units[i].shift;
    if (shift >= 0) {
        end++;
        if ((*end | 0x20) == 'i')
            end++;
        if ((*end | 0x20) == 'b')
            end++;
    } else if (!strcasecmp(end, "b") || !strcasecmp(end, "bytes")) {
        end += strlen(end);
        shift = 0;
    } else {
        shift = 0;
    }
    if (*end)
        return -1;
    double bytes = ldexp(v, shift);
    if (bytes >= 18446744073709551616.0)  /* 2^64 */
        return -1;
    *out = (uint64_t)bytes;
    return 0;
}

void sl_size_text(uint64_t n, char *out, size_t len)
{
    if (n >= (1ull << 30) && n % (1ull << 30) == 0)
        snprintf(out, len, "%" PRIu64 " GiB", n >> 30);
    else if (n >= (1ull << 20))
        snprintf(out, len, "%" PRIu64 " MiB", n >> 20);
    else if (n >= 1024)
        snprintf(out, len, "%" PRIu64 " KiB", n >> 10);
    else
        snprintf(out, len, "%" PRIu64 " bytes", n);
}
