/*
 * sha256 — SHA-256 (FIPS 180-4), for hashing API keys before they are
 * stored.  Written from the standard; no state beyond the call.
 */
#ifndef SL_SHA256_H
#define SL_SHA256_H

#include <stddef.h>
#include <stdint.h>

void sl_sha256(const void *data, size_t len, uint8_t out[32]);
/* The digest as 64 lowercase hex digits plus NUL. */
void sl_sha256_hex(const void *data, size_t len, char out[65]);

#endif
