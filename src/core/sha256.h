/*
 * sha256 — SHA-256 (FIPS 180-4), for hashing API keys before they are
 * stored and knowledge chunks (their Dify index_node_hash).  Written from
 * the standard; the CPU's SHA instructions are used where it has them.
 */
#ifndef SL_SHA256_H
#define SL_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void sl_sha256(const void *data, size_t len, uint8_t out[32]);
/* The digest as 64 lowercase hex digits plus NUL. */
void sl_sha256_hex(const void *data, size_t len, char out[65]);
/* Tests: on forces the portable code, off lets the CPU's be used again. */
void sl_sha256_portable(bool on);

#endif
