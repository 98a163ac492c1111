/*
 * size — sizes in bytes as people write them ("512M", "2GiB", "1.5k",
 * "64 KiB", "10MB", "1048576") and as sluice shows them ("256 MiB").
 *
 * One reading for settings, limits, flags and node data: the units are
 * binary (k = KiB = KB = 1024, m, g, t), case does not matter, "i" and "b"
 * are optional, a space may stand between number and unit.  Errors: -1
 * (callers say which setting was wrong).
 */
#ifndef SL_SIZE_H
#define SL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses text into bytes (fractions allowed: "1.5k" = 1536, rounded
 * down).  -1 when it is empty, negative, not finite, has an unknown unit
 * or trailing text, or the bytes do not fit in 64 bits. */
int sl_size_parse(const char *text, uint64_t *out);
/* A size for people: "1 GiB" (whole GiB only), "256 MiB", "12 KiB", "100
 * bytes" (rounded down to the unit); sl_size_parse reads it back. */
void sl_size_text(uint64_t n, char *out, size_t len);

#endif
