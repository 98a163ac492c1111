/*
 * fuzz_extract_pdf — libFuzzer target for sluice's own PDF reader
 * (extract/pdfobj.c, extract/pdftext.c) under small limits.  Besides
 * memory errors the target checks that the reader either fails with a
 * message (a decline included) and leaves the output as it was, or gives
 * valid UTF-8 no longer than max_output.  Seed it with the PDFs
 * tests/documents/gen_pdf.py writes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "extract/pdftext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = 1 << 16;
    lim.max_member = 1 << 20;
    lim.max_unpacked = 1 << 22;
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_buf_adds(&out, "keep");
    sl_err err = {0};
    int rc = sl_pdf_text(data, size, &lim, &out, &err);
    if (rc && (!err.msg || !err.msg[0] || out.len != 4 || memcmp(out.data, "keep", 4)))
        abort(); /* a failure without a message, or that changed the output */
    if (!rc && (out.len - 4 > lim.max_output || !sl_utf8_valid(out.data + 4, out.len - 4)))
        abort();
    sl_err_clear(&err);
    sl_buf_release(&out);
    return 0;
}
