/*
 * fuzz_embed — libFuzzer target for the readers of embedding and rerank
 * answers (llm/embed.c: sl_embed_read, sl_rerank_read), what a hostile
 * model server controls.
 *
 * The first byte is the number of texts the answer is for (1..8), the
 * second the number of documents (0..15); the rest is parsed as JSON and
 * given to both readers.  Checks besides memory errors:
 *   - a reader succeeds or fails with a message, never both, and a failure
 *     returns nothing;
 *   - vectors: count * dims floats, dims within 1..SL_EMBED_MAX_DIMS, every
 *     value finite, tokens not negative;
 *   - hits: at most n, every index below n and given once, scores finite
 *     and best first.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/embed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_vectors(const sl_value *j, size_t count)
{
    sl_err err = {0};
    float *v = NULL;
    int dims = -1;
    long long tokens = -1;
    int rc = sl_embed_read(j, count, "fuzz", &v, &dims, &tokens, &err);
    if (rc == 0) {
        if (err.msg || !v || dims < 1 || dims > SL_EMBED_MAX_DIMS || tokens < 0)
            abort();
        for (size_t i = 0; i < count * (size_t)dims; i++)
            if (!isfinite(v[i]))
                abort();
    } else if (!err.msg || v || dims != 0) {
        abort();
    }
    free(v);
    sl_err_clear(&err);
}

static void check_hits(const sl_value *j, size_t n)
{
    sl_err err = {0};
    sl_rerank_hit hits[16];
    bool seen[16] = {false};
    size_t nh = 99;
    int rc = sl_rerank_read(j, n, "fuzz", hits, &nh, &err);
    if (rc == 0) {
        if (err.msg || nh > n)
            abort();
        for (size_t i = 0; i < nh; i++) {
            if (hits[i].index >= n || seen[hits[i].index] || !isfinite(hits[i].score))
                abort();
            seen[hits[i].index] = true;
            if (i && hits[i].score > hits[i - 1].score)
                abort();
        }
    } else if (!err.msg || nh != 0) {
        abort();
    }
    sl_err_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t count = 1 + data[0] % 8, n = data[1] % 16;
    sl_value *j = json_loadb((const char *)data + 2, size - 2, JSON_DECODE_ANY, NULL);
    if (!j)
        return 0;
    check_vectors(j, count);
    check_hits(j, n);
    json_decref(j);
    return 0;
}
