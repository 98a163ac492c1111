/*
 * fuzz_mime — libFuzzer target for the type an upload is kept as
 * (core/mime): sl_mime_sniff over a file's first bytes and
 * sl_mime_of_file over a name and those bytes.
 *
 * The input is a file name up to the first NUL byte (at most 255 bytes),
 * then the file's bytes.  Besides memory errors the target checks:
 *   - the kept type is never NULL, and is one of the types sniffing or
 *     the extension table can give (never text from the input);
 *   - sniffing looks at 512 bytes at most: more bytes never change it;
 *   - markup a browser runs (HTML, SVG, XML) is never kept as a type that
 *     previews inline.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size < 256 ? size : 256);
    size_t nn = nul ? (size_t)(nul - data) : 0;
    char name[256];
    memcpy(name, data, nn);
    name[nn] = 0;
    const uint8_t *bytes = nul ? nul + 1 : data;
    size_t n = size - (size_t)(bytes - data);

    const char *sniffed = sl_mime_sniff(bytes, n);
    if (n > 512 && sl_mime_sniff(bytes, 512) != sniffed)
        abort(); /* bytes past the first 512 changed the answer */
    const char *kept = sl_mime_of_file(name, bytes, n);
    if (!kept)
        abort();
    /* a static string of the library, never a piece of the input */
    if (kept >= (const char *)data && kept < (const char *)data + size)
        abort();
    if (sniffed && (!strcmp(sniffed, "text/html") || !strcmp(sniffed, "image/svg+xml") ||
                    !strcmp(sniffed, "text/xml")) &&
        sl_mime_inline_safe(kept))
        abort(); /* markup a browser runs would preview inline */
    return 0;
}
