/*
 * fuzz_extract_text — libFuzzer target for the text formats of the
 * document extractor (extract/text.c): plain text, JSON, YAML, CSV,
 * .properties and WebVTT.
 *
 * The first byte picks the format, the rest is the document.  The output
 * limit is set low (64 KiB) so that deep nesting and alias bombs run into
 * it.  Besides memory errors the target checks:
 *   - a reader either succeeds or sets an error with a message;
 *   - the text never exceeds the output limit;
 *   - the text is valid UTF-8 (every reader decodes its input first).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool utf8_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
                                : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((p[i + j] & 0xC0) != 0x80)
                return false;
        i += k;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sl_doc_kind kinds[] = {SL_DOC_TEXT, SL_DOC_JSON,       SL_DOC_YAML,
                                        SL_DOC_CSV,  SL_DOC_PROPERTIES, SL_DOC_VTT};
    if (!size)
        return 0;
    sl_doc_kind kind = kinds[data[0] % (sizeof kinds / sizeof *kinds)];
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = 64 << 10;
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    int rc = sl_extract_text(kind, data + 1, size - 1, &lim, &out, &err);
    if (rc && (!err.code || !err.msg || !err.msg[0]))
        abort();
    if (!rc && (out.len > lim.max_output || !utf8_ok((const unsigned char *)out.data, out.len)))
        abort();
    sl_err_clear(&err);
    sl_buf_release(&out);
    return 0;
}
