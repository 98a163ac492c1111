/*
 * fuzz_e2b — libFuzzer target for the envd Connect stream parser
 * (sandbox/e2b: sl_e2b_stream_*) and the base64 it decodes output with.
 *
 * The input is a response body: Connect envelopes (flag byte, 4-byte
 * big-endian length, JSON process event) ending in an end-of-stream frame.
 * It is fed twice: whole, and in pieces whose sizes come from the input's
 * first byte, to a parser with a small cap (so the cap paths run too).
 * Checks besides memory errors: both feeds succeed or fail alike and, when
 * they succeed, give the same events (frames do not depend on how the
 * bytes were split); every data event decodes to at most 3/4 of its
 * frame; base64 of the input decodes back to the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "sandbox/e2b.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 600

static int record(const sl_e2b_event *ev, void *ud)
{
    sl_buf *b = ud;
    sl_buf_addf(b, "%d|%u|%d|%d|", (int)ev->kind, ev->pid, ev->exit_code, (int)ev->exited);
    sl_buf_adds(b, ev->status ? ev->status : "-");
    sl_buf_addc(b, 0);
    sl_buf_adds(b, ev->error ? ev->error : "-");
    sl_buf_addc(b, 0);
    sl_buf_adds(b, ev->code ? ev->code : "-");
    sl_buf_addc(b, 0);
    sl_buf_adds(b, ev->message ? ev->message : "-");
    sl_buf_addc(b, 0);
    if (ev->kind == SL_E2B_EV_STDOUT || ev->kind == SL_E2B_EV_STDERR) {
        if (ev->len > CAP)
            abort();
        sl_buf_addf(b, "%zu:", ev->len);
        sl_buf_add(b, ev->data, ev->len);
    }
    sl_buf_addc(b, '\n');
    return 0;
}

static int feed(const uint8_t *data, size_t size, size_t step, sl_buf *out)
{
    sl_e2b_stream p;
    sl_e2b_stream_init(&p, CAP, record, out);
    sl_err err = {0};
    int rc = 0;
    for (size_t i = 0; i < size && !rc; i += step) {
        size_t n = size - i < step ? size - i : step;
        rc = sl_e2b_stream_feed(&p, data + i, n, &err);
    }
    if (!rc)
        rc = sl_e2b_stream_finish(&p, &err);
    /* a failure always says why */
    if (rc && !err.msg)
        abort();
    sl_err_clear(&err);
    sl_e2b_stream_release(&p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    size_t step = (size_t)(data[0] % 17) + 1;
    data++, size--;
    sl_buf a, b;
    sl_buf_init(&a, 0);
    sl_buf_init(&b, 0);
    int ra = feed(data, size, size ? size : 1, &a);
    int rb = feed(data, size, step, &b);
    if (ra != rb)
        abort();
    if (!ra && (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))))
        abort();
    sl_buf_release(&a);
    sl_buf_release(&b);

    /* base64 round trip */
    sl_buf enc;
    sl_buf_init(&enc, 0);
    sl_e2b_base64_encode(&enc, data, size);
    char *dec = malloc(enc.len / 4 * 3 + 3);
    long n = sl_e2b_base64_decode(enc.data ? enc.data : "", enc.len, dec);
    if (n != (long)size || (size && memcmp(dec, data, size)))
        abort();
    /* and arbitrary text never decodes past its bound */
    char *dec2 = malloc(size / 4 * 3 + 3);
    long m = sl_e2b_base64_decode((const char *)data, size, dec2);
    if (m > (long)(size / 4 * 3 + 3))
        abort();
    free(dec);
    free(dec2);
    sl_buf_release(&enc);
    return 0;
}
