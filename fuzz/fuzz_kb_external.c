/*
 * fuzz_kb_external — libFuzzer target for what an External Knowledge API
 * service answers (knowledge/external.h, sl_kb_external_parse): the bytes
 * are a 200 answer's body.  Checks besides memory errors:
 *   - a parse either gives records or fails with a message, never both and
 *     never neither;
 *   - every record is {content: text, score: number, title: text,
 *     metadata: object}, and there are at most SL_KB_EXTERNAL_MAX_RECORDS.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/external.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_value *recs = NULL;
    sl_err err = {0};
    int rc = sl_kb_external_parse((const char *)data, size, "http://kb.test/retrieval", &recs,
                                  &err);
    if ((rc == 0) != (recs != NULL) || (rc == 0) == (err.msg != NULL))
        abort();
    if (rc == 0) {
        if (!json_is_array(recs) || json_array_size(recs) > SL_KB_EXTERNAL_MAX_RECORDS)
            abort();
        for (size_t i = 0; i < json_array_size(recs); i++) {
            const sl_value *r = json_array_get(recs, i);
            if (json_object_size(r) != 4 || !json_is_string(json_object_get(r, "content")) ||
                !json_is_real(json_object_get(r, "score")) ||
                !json_is_string(json_object_get(r, "title")) ||
                !json_is_object(json_object_get(r, "metadata")))
                abort();
        }
    }
    json_decref(recs);
    sl_err_clear(&err);
    return 0;
}
