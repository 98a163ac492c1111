/*
 * e2b — the E2B sandbox provider: a Firecracker microVM made through E2B's
 * REST API (POST /sandboxes, DELETE /sandboxes/{id}), driven through envd,
 * the daemon inside the VM (Connect RPC process and filesystem services
 * over HTTPS, plus its /files endpoint).  docs/sandbox-e2b.md has the wire
 * format and where each fact comes from.
 *
 * sl_e2b_create() is what sl_sandbox_create() calls for provider "e2b"; the
 * returned sandbox follows sandbox.h.  Each call (exec, upload, ...) uses its
 * own curl handles, so several threads may use one sandbox at once; the
 * only shared mutable state, the list of running commands, has a lock.
 *
 * The Connect stream parser is a pure function of the bytes fed to it (no
 * I/O), so it can be fuzzed: sl_e2b_stream_feed() takes the response body in
 * pieces of any size and calls back once per process event.  Every message
 * is capped; a frame over the cap is an error, not an allocation.
 *
 * Errors come back the sluice way: -1 and a filled sl_err that names the
 * endpoint and the HTTP status, never the API key or the envd token.
 */
#ifndef SL_E2B_H
#define SL_E2B_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "sandbox/sandbox.h"

/* Settings (sluice.yml `sandbox.e2b`), all optional:
 *   api_key           string; default $E2B_API_KEY (required one way or the other)
 *   api_url           default "https://api.e2b.app"
 *   domain            default "e2b.app" (the API's answer wins when it names one)
 *   envd_url          envd base URL; default "https://49983-{sandboxID}.{domain}"
 *   template          default "base"
 *   timeout_s         sandbox lifetime in seconds, default 300
 *   user              default "user" (envd knows "user" and "root")
 *   workdir           default "/home/user"; the workspace
 *   request_timeout_s each REST / unary call, default 60 */
int sl_e2b_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err);

/* ---- the Connect streaming envelope and process events ---- */

typedef enum {
    SL_E2B_EV_START,      /* pid */
    SL_E2B_EV_STDOUT,     /* data, len (decoded bytes) */
    SL_E2B_EV_STDERR,     /* data, len */
    SL_E2B_EV_END,        /* exit_code, exited, status, error */
    SL_E2B_EV_KEEPALIVE,
    SL_E2B_EV_EOS,        /* the end-stream frame; code/message when it carries an error */
} sl_e2b_ev_kind;

typedef struct {
    sl_e2b_ev_kind kind;
    uint32_t pid;
    const char *data;         /* borrowed, valid during the callback only */
    size_t len;
    int exit_code;
    bool exited;
    const char *status;       /* "exit status 3", "signal: killed" ("" when absent) */
    const char *error;        /* NULL when absent */
    const char *code;         /* EOS: Connect error code ("not_found" ...), NULL when none */
    const char *message;      /* EOS: error message, NULL when none */
} sl_e2b_event;

/* Returns 0 to go on; anything else stops the parser (feed returns -1). */
typedef int (*sl_e2b_event_fn)(const sl_e2b_event *ev, void *ud);

typedef struct {
    size_t max_message;       /* largest frame payload accepted */
    sl_e2b_event_fn fn;
    void *ud;
    unsigned char head[5];
    size_t head_len;
    size_t need;              /* payload bytes still to come for the current frame */
    sl_buf msg;               /* the current frame's payload */
    unsigned char flags;
    bool in_frame;
    bool ended;               /* the end-stream frame was seen */
    bool failed;
    char *decoded;            /* scratch for base64 output */
    size_t decoded_cap;
} sl_e2b_stream;

void sl_e2b_stream_init(sl_e2b_stream *s, size_t max_message, sl_e2b_event_fn fn, void *ud);
/* Feeds body bytes; -1 on a malformed or oversized frame, on anything after
 * the end-stream frame, or when the callback stops it. */
int sl_e2b_stream_feed(sl_e2b_stream *s, const void *data, size_t len, sl_err *err);
/* The body ended: -1 when it stopped inside a frame or before the
 * end-stream frame. */
int sl_e2b_stream_finish(sl_e2b_stream *s, sl_err *err);
void sl_e2b_stream_release(sl_e2b_stream *s);

/* Decodes standard or URL-safe base64, padding optional, into out (room
 * for len*3/4+3 bytes); returns the decoded length or -1. */
long sl_e2b_base64_decode(const char *in, size_t len, char *out);
/* Appends the base64 (standard, padded) of data to b. */
int sl_e2b_base64_encode(sl_buf *b, const void *data, size_t len);
/* Appends `arg` to b quoted for bash ('...' with '\'' for quotes). */
int sl_e2b_shell_quote(sl_buf *b, const char *arg);

#endif
