#include "cli/term.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

void sl_term_write(FILE *f, const char *s, size_t n)
{
    if (!s)
        return;
    if (!isatty(fileno(f))) {
        fwrite(s, 1, n, f);
        return;
    }
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
    while (p < end) {
        unsigned char c = *p;
        bool c1 = c == 0xC2 && p + 1 < end && p[1] >= 0x80 && p[1] <= 0x9F;
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c1) {
            fwrite(run, 1, (size_t)(p - run), f);
            fprintf(f, "\\x%02x", c1 ? p[1] : c);
            p += c1 ? 2 : 1;
            run = p;
        } else {
            p++;
        }
    }
    fwrite(run, 1, (size_t)(p - run), f);
}

void sl_term_puts(FILE *f, const char *s)
{
    if (s)
        sl_term_write(f, s, strlen(s));
}
