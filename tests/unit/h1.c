/*
 * h1 — the sandbox proxy's HTTP/1.1 framing (sandbox/h1) on its own: the
 * body framing of requests and responses, the chunked decoder, and how
 * both report a refusal: -1 with an sl_err of code SL_EINVAL whose message
 * is the phrase the proxy puts in its 400 or 502, the same with a NULL
 * err, and an err left untouched when the framing is fine.  The proxy's
 * replies themselves are tested end to end in tests/unit/proxy.c.
 */
#include <string.h>

#include "sandbox/h1.h"
#include "tap.h"

/* ---- the framing of a message ---- */

typedef struct {
    const char *fields;
    bool request, http10;
    sl_h1_body_kind kind;      /* when fine */
    uint64_t length;
    bool both;
    const char *why;           /* NULL: fine; else the whole message */
} framing;

static const framing framings[] = {
    {"Host: a\r\n\r\n", true, false, SL_H1_NONE, 0, false, NULL},
    {"Content-Length: 5\r\n\r\n", true, false, SL_H1_LENGTH, 5, false, NULL},
    {"Content-Length: 0\r\n\r\n", true, false, SL_H1_NONE, 0, false, NULL},
    {"Content-Length: 5\r\ncontent-length: 5\r\n\r\n", true, false, SL_H1_LENGTH, 5, false,
     NULL},
    {"Transfer-Encoding: chunked\r\n\r\n", true, false, SL_H1_CHUNKED, 0, false, NULL},
    {"Content-Length: 5, 5\r\n\r\n", true, false, 0, 0, false,
     "Content-Length is not a number of bytes"},
    {"Content-Length: 1234567890123456\r\n\r\n", true, false, 0, 0, false,
     "Content-Length is not a number of bytes"},
    {"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", true, false, 0, 0, false,
     "Content-Length is given twice with different values"},
    {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", true, false, 0, 0, false,
     "the request has both Content-Length and Transfer-Encoding, which frame its body "
     "differently"},
    {"Transfer-Encoding: chunked\r\n\r\n", true, true, 0, 0, false,
     "an HTTP/1.0 request cannot use Transfer-Encoding"},
    {"Transfer-Encoding: gzip, chunked\r\n\r\n", true, false, 0, 0, false,
     "the request's Transfer-Encoding is not \"chunked\", the only coding the proxy passes on"},
    /* responses */
    {"Content-Length: 5\r\n\r\n", false, false, SL_H1_LENGTH, 5, false, NULL},
    {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", false, false, SL_H1_CHUNKED, 0,
     true, NULL},
    {"Transfer-Encoding: gzip\r\n\r\n", false, false, SL_H1_CLOSE, 0, false, NULL},
    {"Server: x\r\n\r\n", false, false, SL_H1_CLOSE, 0, false, NULL},
    {"Content-Length: -1\r\n\r\n", false, false, 0, 0, false,
     "Content-Length is not a number of bytes"},
};

static void test_body_of(void)
{
    for (size_t i = 0; i < sizeof framings / sizeof framings[0]; i++) {
        const framing *t = &framings[i];
        const char *what = t->request ? "request" : "response";
        sl_h1_body b;
        sl_err err = {0};
        int rc = sl_h1_body_of(t->fields, t->request, t->http10, &b, &err);
        if (!t->why) {
            CHECK(rc == 0 && err.code == SL_OK && !err.msg && b.kind == t->kind &&
                      b.length == t->length && b.both == t->both,
                  "%s %zu frames (rc %d, kind %d, length %llu)", what, i, rc, (int)b.kind,
                  (unsigned long long)b.length);
        } else {
            CHECK(rc == -1 && err.code == SL_EINVAL && err.msg && !strcmp(err.msg, t->why),
                  "%s %zu is refused: SL_EINVAL, \"%s\" (rc %d, code %s, msg %s)", what, i,
                  t->why, rc, sl_errcode_name(err.code), err.msg ? err.msg : "(none)");
        }
        sl_err_clear(&err);
        /* The caller that does not want the message gets the same answer. */
        int rc2 = sl_h1_body_of(t->fields, t->request, t->http10, &b, NULL);
        CHECK(rc2 == rc, "%s %zu with a NULL err: the same answer (%d, %d)", what, i, rc, rc2);
    }
}

/* ---- the chunked coding ---- */

typedef struct {
    const char *in;
    const char *data;          /* what decodes, when fine */
    const char *why;           /* NULL: fine and done; else the whole message */
} chunking;

static const chunking chunkings[] = {
    {"5\r\nhello\r\n0\r\n\r\n", "hello", NULL},
    {"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n", "hello world", NULL},
    {"zz\r\n", NULL, "a chunk size is not a hexadecimal number followed by CRLF"},
    {"5\nhello\r\n0\r\n\r\n", NULL, "a chunk size line does not end in CRLF"},
    {"5\rhello\r\n0\r\n\r\n", NULL, "a chunk size line does not end in CRLF"},
    {"5\r\nhelloX\r\n0\r\n\r\n", NULL, "chunk data is not followed by CRLF"},
    {"10000000000000000\r\n", NULL, "a chunk size is too large"},
    {"5;a\x01\r\n", NULL, "a chunk extension holds a control byte or is too long"},
    {"0\r\nA: b\n\r\n", NULL, "a trailer line does not end in CRLF"},
    {"0\r\nA: \x01\r\n\r\n", NULL, "a trailer field holds a control byte"},
};

static void test_chunked(void)
{
    for (size_t i = 0; i < sizeof chunkings / sizeof chunkings[0]; i++) {
        const chunking *t = &chunkings[i];
        sl_h1_chunked c;
        memset(&c, 0, sizeof c);
        sl_err err = {0};
        char out[64];
        size_t got = 0, at = 0, n = strlen(t->in);
        long used = 0;
        bool clean = true;     /* err untouched while feeding went well */
        while (at < n && !c.done) {
            size_t off, dlen;
            used = sl_h1_chunked_feed(&c, t->in + at, n - at, &off, &dlen, &err);
            if (used < 0)
                break;
            clean = clean && err.code == SL_OK && !err.msg;
            if (got + dlen <= sizeof out)
                memcpy(out + got, t->in + at + off, dlen);
            got += dlen;
            at += (size_t)used;
        }
        if (!t->why) {
            CHECK(used >= 0 && c.done && clean && got == strlen(t->data) &&
                      !memcmp(out, t->data, got),
                  "chunked %zu decodes to \"%s\" and leaves err alone", i, t->data);
        } else {
            CHECK(used == -1 && err.code == SL_EINVAL && err.msg && !strcmp(err.msg, t->why),
                  "chunked %zu is refused: SL_EINVAL, \"%s\" (code %s, msg %s)", i, t->why,
                  sl_errcode_name(err.code), err.msg ? err.msg : "(none)");
        }
        sl_err_clear(&err);
    }

    /* Trailers past 16 KiB, and the same refusals with a NULL err. */
    static char big[20000];
    memcpy(big, "0\r\n", 3);
    memset(big + 3, 'a', sizeof big - 4);
    sl_h1_chunked c;
    memset(&c, 0, sizeof c);
    sl_err err = {0};
    size_t off, dlen;
    long used = sl_h1_chunked_feed(&c, big, strlen(big), &off, &dlen, &err);
    CHECK(used == -1 && err.code == SL_EINVAL && err.msg &&
              !strcmp(err.msg, "the trailer fields are longer than 16 KiB"),
          "trailers over 16 KiB are refused: SL_EINVAL (msg %s)", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    memset(&c, 0, sizeof c);
    used = sl_h1_chunked_feed(&c, big, strlen(big), &off, &dlen, NULL);
    CHECK(used == -1, "with a NULL err the refusal is the same (%ld)", used);
    memset(&c, 0, sizeof c);
    used = sl_h1_chunked_feed(&c, "zz\r\n", 4, &off, &dlen, NULL);
    CHECK(used == -1, "a bad size with a NULL err is refused too (%ld)", used);
}

int main(void)
{
    test_body_of();
    test_chunked();
    return tap_done();
}
