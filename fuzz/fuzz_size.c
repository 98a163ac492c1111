/*
 * fuzz_size — libFuzzer target for sizes as people write them (core/size):
 * sl_size_parse over any text, sl_size_text over any number.
 *
 * The input is the text (at most 63 bytes, up to the first NUL); its first
 * 8 bytes are also read as a number.  Besides memory errors and undefined
 * behaviour (a double cast out of range) the target checks:
 *   - what sl_size_text writes, sl_size_parse reads back, to at most the
 *     number itself (the text rounds down to its unit) and more than half
 *     of it;
 *   - a size that parses shows as text that parses again to the same or
 *     less.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = 0;
    uint64_t v;
    if (sl_size_parse(text, &v) == 0) {
        char shown[64];
        uint64_t back;
        sl_size_text(v, shown, sizeof shown);
        if (sl_size_parse(shown, &back) != 0 || back > v)
            abort();
    }
    uint64_t num = 0;
    memcpy(&num, data, size < sizeof num ? size : sizeof num);
    char shown[64];
    uint64_t back;
    sl_size_text(num, shown, sizeof shown);
    if (sl_size_parse(shown, &back) != 0 || back > num || (num && back <= num / 2))
        abort();
    return 0;
}
