/*
 * rand — bytes from the kernel's CSPRNG (getrandom(2)) for everything that
 * must not be guessed: keys, tokens, ids, and the markers and boundaries
 * that separate sluice's own framing from what a program prints.
 *
 * It fails closed: when the kernel gives no randomness the call fails and
 * the caller refuses to go on (a guessable key, id or marker is worse than
 * none).  There is no time- or pid-seeded fallback anywhere in sluice.
 * Errors: -1 and sl_err (SL_EIO; the message names getrandom).
 *
 * Tests simulate a failing kernel by defining getrandom in the test
 * program, which takes the place of libc's (tests/unit/rand.c).
 */
#ifndef SL_RAND_H
#define SL_RAND_H

#include <stddef.h>

#include "core/err.h"

/* n random bytes into buf (any size; EINTR and short reads are retried).
 * On failure buf is zeroed. */
int sl_rand_bytes(void *buf, size_t n, sl_err *err);
/* `bytes` random bytes (at most 64) as lower-case hex into out
 * (2 * bytes + 1 chars).  On failure out is "". */
int sl_rand_hex(char *out, size_t bytes, sl_err *err);
/* A random (version 4) UUID, lower-case, 36 chars and a NUL.  On failure
 * out is "". */
int sl_rand_uuid(char out[37], sl_err *err);

#endif
