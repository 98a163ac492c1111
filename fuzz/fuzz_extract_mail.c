/*
 * fuzz_extract_mail — libFuzzer target for the e-mail readers
 * (extract/mail.c, extract/cfb.c): the input is read as an .eml and as an
 * Outlook .msg under small limits.  Besides memory errors the target
 * checks that a reader either fails with a message or gives text no
 * longer than max_output, and that a failure leaves the output as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = 1 << 16;
    lim.max_member = 1 << 18;
    lim.max_unpacked = 1 << 19;
    lim.max_xml_depth = 32;
    lim.max_xml_nodes = 4096;
    static const sl_doc_kind kinds[] = {SL_DOC_EML, SL_DOC_MSG};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_buf_adds(&out, "keep");
        sl_err err = {0};
        int rc = sl_extract_text(kinds[k], data, size, &lim, &out, &err);
        if (rc && (!err.msg || !err.msg[0] || out.len != 4 || memcmp(out.data, "keep", 4)))
            abort(); /* a failure without a message, or that changed the output */
        if (!rc && out.len - 4 > lim.max_output)
            abort();
        sl_err_clear(&err);
        sl_buf_release(&out);
    }
    return 0;
}
