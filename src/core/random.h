/*
 * random — bytes from the kernel's CSPRNG (getrandom(2)) for keys, tokens
 * and ids.  There is no fallback: when the kernel gives no randomness the
 * call fails and the caller refuses to make the key (a guessable key is
 * worse than none).  Errors: -1 and sl_err.
 */
#ifndef SL_RANDOM_H
#define SL_RANDOM_H

#include <stddef.h>

#include "core/err.h"

/* n random bytes into buf (any size; EINTR and short reads are retried). */
int sl_random_bytes(void *buf, size_t n, sl_err *err);
/* `bytes` random bytes as lower-case hex into out (2 * bytes + 1 chars). */
int sl_random_hex(char *out, size_t bytes, sl_err *err);

#endif
