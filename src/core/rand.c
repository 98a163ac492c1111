/*
 * rand — see rand.h.
 */
#include "core/rand.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static const char hex[] = "0123456789abcdef";

int sl_rand_bytes(void *buf, size_t n, sl_err *err)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(p + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : EIO;
            memset(buf, 0, n);
            return sl_err_set(err, SL_EIO,
                              "the kernel gave no random bytes (getrandom: %s); sluice makes "
                              "keys, ids and markers only from getrandom, so nothing was "
                              "created",
                              strerror(e));
        }
        got += (size_t)k;
    }
    return 0;
}

int sl_rand_hex(char *out, size_t bytes, sl_err *err)
{
    unsigned char b[64];
    out[0] = 0;
    if (bytes > sizeof b)
        return sl_err_set(err, SL_EINVAL, "sl_rand_hex: %zu bytes asked, at most %zu", bytes,
                          sizeof b);
    if (sl_rand_bytes(b, bytes, err))
        return -1;
    for (size_t i = 0; i < bytes; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[2 * bytes] = 0;
    return 0;
}

int sl_rand_uuid(char out[37], sl_err *err)
{
    unsigned char b[16];
    out[0] = 0;
    if (sl_rand_bytes(b, sizeof b, err))
        return -1;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);  /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);  /* RFC 9562 variant */
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[k++] = '-';
        out[k++] = hex[b[i] >> 4];
        out[k++] = hex[b[i] & 15];
    }
    out[k] = 0;
    return 0;
}
