/*
 * h1 — HTTP/1.1 message framing for the sandbox egress proxy: where a
 * message body ends (RFC 9112 section 6) and a decoder for the chunked
 * transfer coding.  No I/O: the proxy reads the bytes and asks here.
 *
 * The proxy reads every request on a kept-alive client connection itself,
 * so that each one is checked against the allow list; a body it framed
 * differently from the origin would let a second request ride inside the
 * first.  So framing is strict: a request with both Content-Length and
 * Transfer-Encoding, a coding other than chunked, a bad or repeated
 * length, or a malformed chunk is refused, never guessed at, and chunked
 * bodies are re-encoded on the way out, so the origin sees only framing
 * the proxy wrote.
 *
 * Errors come back in the caller's sl_err (which may be NULL): always
 * SL_EINVAL, the message a phrase for a 400 or 502 body.  The caps here
 * (chunk-size digits, extension and trailer bytes) are the protocol's,
 * not `sluice limits` settings, so going over one is malformed input too.
 * Only a failure with an err to fill allocates (its message): framing
 * that is fine, and any failure with a NULL err, allocate nothing.
 */
#ifndef SL_H1_H
#define SL_H1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

typedef enum {
    SL_H1_NONE,        /* no body */
    SL_H1_LENGTH,      /* exactly `length` bytes */
    SL_H1_CHUNKED,     /* chunked; decode with sl_h1_chunked */
    SL_H1_CLOSE,       /* until the sender closes (responses only) */
} sl_h1_body_kind;

typedef struct {
    sl_h1_body_kind kind;
    uint64_t length;   /* SL_H1_LENGTH */
    bool both;         /* a response had Transfer-Encoding and Content-Length:
                        * the length is ignored and must not be passed on */
} sl_h1_body;

/* The header lines of a message, "Name: value" each ending in LF or CRLF,
 * up to an empty line or the NUL: the framing of its body.  request: a
 * request (strict: see above; HTTP/1.0 requests cannot be chunked);
 * otherwise a response whose status and request method allow a body (the
 * caller handles HEAD, 1xx, 204 and 304).  0 when fine, else -1 with err
 * saying why not. */
int sl_h1_body_of(const char *fields, bool request, bool http10, sl_h1_body *out, sl_err *err);

/* Whether the header lines hold header name (case-insensitive) with token
 * tok among its comma-separated values ("Connection: keep-alive, close"). */
bool sl_h1_has_token(const char *fields, const char *name, const char *tok);

/* An incremental decoder of the chunked coding.  Zero it to start. */
typedef struct {
    int state;
    uint64_t left;     /* data bytes left in this chunk */
    size_t line;       /* bytes of the size or trailer line so far */
    size_t trailers;   /* bytes of trailer fields so far */
    int digits;
    bool done;         /* the last chunk and the trailers are consumed */
} sl_h1_chunked;

/* Consumes bytes from in[0..n) and stops after one run of chunk data, so
 * the caller can pass it on: *data_off and *data_len say where that run is
 * in `in` (*data_len 0: none).  Returns how many bytes were consumed (0
 * once done), or -1 with err set when the coding is malformed: a size
 * that is not hex or is too large, a missing CRLF (bare LF included), a
 * control byte in an extension or trailer, or trailers over 16 KiB.
 * Extensions and trailers are consumed and dropped. */
long sl_h1_chunked_feed(sl_h1_chunked *c, const char *in, size_t n, size_t *data_off,
                        size_t *data_len, sl_err *err);

#endif
