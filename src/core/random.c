/*
 * random — see random.h.
 */
#include "core/random.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int sl_random_bytes(void *buf, size_t n, sl_err *err)
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
                              "keys and ids only from getrandom, so nothing was created",
                              strerror(e));
        }
        got += (size_t)k;
    }
    return 0;
}

int sl_random_hex(char *out, size_t bytes, sl_err *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[64];
    out[0] = 0;
    if (bytes > sizeof b)
        return sl_err_set(err, SL_EINVAL, "sl_random_hex: %zu bytes asked, at most %zu", bytes,
                          sizeof b);
    if (sl_random_bytes(b, bytes, err))
        return -1;
    for (size_t i = 0; i < bytes; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[2 * bytes] = 0;
    return 0;
}
