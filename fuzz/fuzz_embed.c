/*
 * fuzz_embed — libFuzzer target for the readers of embedding and rerank
 * answers (llm/embed.c: sl_embed_read, sl_rerank_read), what a hostile
 * model server controls.
 *
 * The first byte is the number of texts the answer is for (1..8), the
 * second the number of documents (0..15); the rest is parsed as JSON and
 * given to both readers, and its text to sl_embed_read_text, whose fast
 * path must agree with jansson and sl_embed_read: the same success or
 * failure, the same vectors bit for bit, the same tokens.  Checks besides
 * memory errors:
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

/* The fast reader of the answer's text gives what jansson and
 * sl_embed_read give, or fails when they do. */
static void check_fast(const char *text, size_t len, size_t count)
{
    sl_err e1 = {0}, e2 = {0};
    float *v1 = NULL, *v2 = NULL;
    int d1 = 0, d2 = 0;
    long long t1 = 0, t2 = 0;
    int r1 = sl_embed_read_text(text, len, count, "fuzz", &v1, &d1, &t1, &e1);
    sl_value *j = json_loadb(text, len, 0, NULL);
    int r2 = json_is_object(j) ? sl_embed_read(j, count, "fuzz", &v2, &d2, &t2, &e2) : -1;
    json_decref(j);
    if (r1 != r2 || (r1 == 0 && (d1 != d2 || t1 != t2 ||
                                 memcmp(v1, v2, count * (size_t)d1 * sizeof(float)))))
        abort();
    if (r1 && !e1.msg)
        abort();
    free(v1);
    free(v2);
    sl_err_clear(&e1);
    sl_err_clear(&e2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t count = 1 + data[0] % 8, n = data[1] % 16;
    check_fast((const char *)data + 2, size - 2, count);
    sl_value *j = json_loadb((const char *)data + 2, size - 2, JSON_DECODE_ANY, NULL);
    if (!j)
        return 0;
    check_vectors(j, count);
    check_hits(j, n);
    json_decref(j);
    return 0;
}
