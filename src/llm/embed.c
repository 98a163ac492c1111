/*
 * embed — see embed.h.  One call = one libcurl handle, reused for every
 * batch so the connection is kept; each request is a blocking POST whose
 * body is collected (capped) and read once it has all arrived.  The retry
 * rules are llm.c's, for answers that never stream.
 */
#include "llm/embed.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/value.h"
#include "net/http.h"

/* ---- one POST, retried ---- */

typedef struct {
    const sl_llm_endpoint *ep;
    bool (*cancelled)(void *ud);
    void *ud;
    sl_http *h;
    char *url;
    char *auth;            /* the Authorization header line (wiped at the end) */
    sl_buf body;
    long status;
    double retry_after;    /* seconds, from the header; -1 when none */
    double last_rx;
    bool was_cancelled, timed_out;
} xfer;

static int on_header(const char *p, size_t len, void *ud)
{
    xfer *x = ud;
    x->last_rx = sl_clock_s();
    double wait = sl_http_retry_after(p, len);
    if (wait >= 0)
        x->retry_after = wait;
    return 0;
}

static int on_body(const char *p, size_t len, void *ud)
{
    xfer *x = ud;
    x->last_rx = sl_clock_s();
    return sl_buf_add(&x->body, p, len);
}

static bool is_cancelled(xfer *x)
{
    if (x->cancelled && x->cancelled(x->ud))
        x->was_cancelled = true;
    return x->was_cancelled;
}

/* The caller's stop and the read timeout (silence since the attempt began
 * or bytes last arrived), asked by net/http while the transfer runs. */
static bool xfer_stop(void *ud)
{
    xfer *x = ud;
    if (is_cancelled(x))
        return true;
    double limit = x->ep->read_timeout_s > 0 ? x->ep->read_timeout_s : 600;
    if (sl_clock_s() - x->last_rx > limit) {
        x->timed_out = true;
        return true;
    }
    return false;
}

static int xfer_open(xfer *x, const sl_llm_endpoint *ep, const char *path,
                     bool (*cancelled)(void *), void *ud, sl_err *err)
{
    memset(x, 0, sizeof *x);
    x->ep = ep;
    x->cancelled = cancelled;
    x->ud = ud;
    sl_buf_init(&x->body, SL_EMBED_BODY_CAP);
    const char *base = ep->base_url ? ep->base_url : "";
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    x->url = sl_xasprintf("%.*s/%s", (int)n, base, path);
    x->h = sl_http_new(err);
    if (!x->h)
        return -1;
    if (ep->api_key && *ep->api_key)
        x->auth = sl_xasprintf("Authorization: Bearer %s", ep->api_key);
    return 0;
}

static void xfer_close(xfer *x)
{
    sl_http_free(x->h);
    sl_buf_release(&x->body);
    if (x->auth) {
        explicit_bzero(x->auth, strlen(x->auth));  /* the key leaves no copy behind */
        free(x->auth);
    }
    free(x->url);
}

static bool retryable_status(long s)
{
    return s == 408 || s == 409 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504 ||
           s == 529;
}

static bool retryable_transfer(sl_http_result rc)
{
    return rc == SL_HTTP_CONNECT || rc == SL_HTTP_BROKEN || rc == SL_HTTP_TIMEOUT ||
           rc == SL_HTTP_CONNECT_TIMEOUT;
}

/* Sleeps `secs`, waking early (false) when the caller cancels. */
static bool backoff(xfer *x, double secs)
{
    double slept = 0;
    while (slept < secs) {
        if (is_cancelled(x))
            return false;
        double step = secs - slept < 0.05 ? secs - slept : 0.05;
        struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
        slept += step;
    }
    return !is_cancelled(x);
}

/* msg with every occurrence of the endpoint's key replaced: some providers
 * quote the key they were given.  Appended to out. */
static void add_clean(sl_buf *out, const char *msg, const sl_llm_endpoint *ep)
{
    const char *key = ep->api_key;
    size_t kl = key ? strlen(key) : 0;
    for (const char *p = msg; *p;) {
        const char *hit = kl >= 4 ? strstr(p, key) : NULL;
        if (!hit) {
            sl_buf_adds(out, p);
            break;
        }
        sl_buf_add(out, p, (size_t)(hit - p));
        sl_buf_adds(out, "[the API key]");
        p = hit + kl;
    }
}

/* The provider's own words for an error object, string or body. */
static const char *error_words(const sl_value *e)
{
    if (json_is_string(e))
        return json_string_value(e);
    const char *m = json_string_value(json_object_get(e, "message"));
    if (!m)
        m = json_string_value(json_object_get(e, "detail"));
    return m;
}

static int http_error(xfer *x, const char *what, sl_err *err)
{
    json_error_t je;
    sl_value *j = json_loadb(x->body.data ? x->body.data : "", x->body.len, 0, &je);
    const char *msg = NULL;
    if (json_is_object(j)) {
        const sl_value *e = json_object_get(j, "error");
        msg = e ? error_words(e) : NULL;
        if (!msg)
            msg = error_words(j);
    }
    char snippet[300];
    if (!msg) {
        sl_excerpt(x->body.data ? x->body.data : "", snippet, sizeof snippet);
        msg = snippet[0] ? snippet : "no details";
    }
    const char *hint = x->status == 401 || x->status == 403
                           ? "; check the API key configured for this provider"
                       : x->status == 404 ? "; check the provider's base URL, that it serves "
                                            "this API, and the model name"
                       : x->status == 429 ? "; the provider is rate limiting (retries ran out)"
                                          : "";
    sl_buf clean;
    sl_buf_init(&clean, 0);
    add_clean(&clean, msg, x->ep);
    sl_err_set(err, SL_ENODE, "%s: model provider '%s' answered HTTP %ld: %s%s", what,
               x->ep->name, x->status, clean.data ? clean.data : "", hint);
    sl_buf_release(&clean);
    json_decref(j);
    return -1;
}

/* POSTs payload; 0 with a 200 answer's body in x->body, else -1 with err
 * (`what` says which call and batch). */
static int xfer_post(xfer *x, const char *payload, const char *what, sl_err *err)
{
    sl_http_reset(x->h);
    sl_http_opts *o = sl_http_opts_of(x->h);
    o->accept_encoding = "";
    o->tcp_keepalive = true;
    o->connect_s = x->ep->connect_timeout_s > 0 ? x->ep->connect_timeout_s : 10;
    o->stop = xfer_stop;
    o->stop_ud = x;
    o->on_body = on_body;
    o->on_header = on_header;
    o->ud = x;
    sl_http_url(x->h, x->url);
    sl_http_method(x->h, "POST", payload, strlen(payload), true);
    sl_http_header(x->h, "Content-Type: application/json");
    sl_http_header(x->h, "Accept: application/json");
    if (x->auth)
        sl_http_header(x->h, x->auth);
    int attempts = (x->ep->max_retries > 0 ? x->ep->max_retries : 0) + 1;
    for (int a = 0; a < attempts; a++) {
        bool last = a + 1 == attempts;
        sl_buf_reset(&x->body);
        x->body.toobig = false;
        x->retry_after = -1;
        x->last_rx = sl_clock_s();
        x->timed_out = false;
        if (is_cancelled(x))
            return sl_err_set(err, SL_ECANCELED, "%s: cancelled", what);
        sl_http_result rc = sl_http_perform(x->h);
        if (x->timed_out)
            rc = SL_HTTP_TIMEOUT;
        x->status = sl_http_status(x->h);
        if (x->was_cancelled)
            return sl_err_set(err, SL_ECANCELED, "%s: cancelled", what);
        if (x->body.toobig)
            return sl_err_set(err, SL_ELIMIT,
                              "%s: model provider '%s' sent an answer larger than sluice "
                              "accepts (%zu MB); use smaller batches",
                              what, x->ep->name, SL_EMBED_BODY_CAP >> 20);
        if (rc != SL_HTTP_OK) {
            if (!last && retryable_transfer(rc)) {
                if (!backoff(x, ldexp(0.5, a)))
                    return sl_err_set(err, SL_ECANCELED, "%s: cancelled", what);
                continue;
            }
            if (rc == SL_HTTP_TIMEOUT || rc == SL_HTTP_CONNECT_TIMEOUT)
                return sl_err_set(err, SL_ETIMEOUT,
                                  "%s: model provider '%s' at %s sent nothing for %g s (its "
                                  "read_timeout)",
                                  what, x->ep->name, x->url,
                                  x->ep->read_timeout_s > 0 ? x->ep->read_timeout_s : 600);
            return sl_err_set(err, SL_EIO, "%s: cannot reach model provider '%s' at %s: %s", what,
                              x->ep->name, x->url, sl_http_strerror(x->h));
        }
        if (x->status != 200) {
            if (!last && retryable_status(x->status)) {
                double wait = x->retry_after >= 0 ? x->retry_after : ldexp(0.5, a);
                if (wait > 60)
                    wait = 60;
                wait += (double)(rand() % 100) / 1000.0;
                if (!backoff(x, wait))
                    return sl_err_set(err, SL_ECANCELED, "%s: cancelled", what);
                continue;
            }
            return http_error(x, what, err);
        }
        return 0;
    }
    return sl_err_set(err, SL_EIO, "%s: model provider '%s': no attempt succeeded", what,
                      x->ep->name);
}

/* The 200 answer as JSON, or NULL with err: not JSON, or an error object
 * sent with 200 (some gateways do). */
static sl_value *answer_json(xfer *x, const char *what, sl_err *err)
{
    json_error_t je;
    sl_value *j = json_loadb(x->body.data ? x->body.data : "", x->body.len, 0, &je);
    if (!j) {
        sl_err_set(err, SL_EIO,
                   "%s: model provider '%s' answered with something that is not JSON (%s at "
                   "byte %d)",
                   what, x->ep->name, je.text, je.position);
        return NULL;
    }
    const sl_value *e = json_is_object(j) ? json_object_get(j, "error") : NULL;
    if (e && !json_is_null(e)) {
        const char *m = error_words(e);
        sl_buf clean;
        sl_buf_init(&clean, 0);
        add_clean(&clean, m ? m : "no details", x->ep);
        sl_err_set(err, SL_ENODE, "%s: model provider '%s' reported an error: %s", what,
                   x->ep->name, clean.data ? clean.data : "");
        sl_buf_release(&clean);
        json_decref(j);
        return NULL;
    }
    return j;
}

static int refuse_anthropic(const sl_llm_endpoint *ep, const char *api, const char *kind,
                            const char *model, sl_err *err)
{
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "model provider '%s' speaks Anthropic's Messages API, which has no %s API; "
                      "%s model '%s' needs an OpenAI-compatible provider: add one under "
                      "llm.providers in sluice.yml (style: openai) and point the model at it "
                      "(llm.models or llm.aliases)",
                      ep->name, api, kind, model);
}

/* Checks a text to send: UTF-8, not NULL; `what` and i name it (i
 * SIZE_MAX: what alone). */
static int check_text(const char *s, const char *what, size_t i, sl_err *err)
{
    char name[64];
    if (i == SIZE_MAX)
        snprintf(name, sizeof name, "%s", what);
    else
        snprintf(name, sizeof name, "%s %zu", what, i);
    if (!s)
        return sl_err_set(err, SL_EINVAL, "%s is missing (NULL)", name);
    if (!sl_utf8_valid(s, strlen(s)))
        return sl_err_set(err, SL_EINVAL,
                          "%s is not valid UTF-8; extract or clean the text first", name);
    return 0;
}

/* ---- embeddings ---- */

typedef struct {
    const sl_llm_endpoint *ep;
    const char *model;
    const sl_embed_opts *o;
    int dims;              /* of the first batch; 0 until then */
    float *v;              /* done * dims floats so far */
    size_t done;
    long long tokens;
    char what[256];        /* "embedding model 'M', texts A..B" */
} embed_state;

static void describe(embed_state *s, size_t first, size_t count)
{
    char m[96];
    sl_excerpt(s->model, m, sizeof m);
    snprintf(s->what, sizeof s->what, "embedding model '%s', texts %zu..%zu", m, first,
             first + count - 1);
}

static void add_tokens(embed_state *s, long long t)
{
    if (t > 0 && s->tokens < (1LL << 62) - t)
        s->tokens += t;
}

/* A batch's count*dims floats, checked against the call's dimensions and
 * appended to the result. */
static int take_batch(embed_state *s, const float *f, size_t count, int dims, sl_err *err)
{
    if (s->o->dims > 0 && dims != s->o->dims && s->o->dims_check_only)
        return sl_err_set(err, SL_EIO,
                          "%s: model provider '%s' answered vectors of %d dimensions where %d "
                          "were expected; the model is not the one the earlier vectors were "
                          "made with",
                          s->what, s->ep->name, dims, s->o->dims);
    if (s->o->dims > 0 && dims != s->o->dims)
        return sl_err_set(err, SL_EIO,
                          "%s: model provider '%s' answered vectors of %d dimensions where %d "
                          "were asked for; the model may not support `dimensions`: leave it 0",
                          s->what, s->ep->name, dims, s->o->dims);
    if (s->dims && dims != s->dims)
        return sl_err_set(err, SL_EIO,
                          "%s: model provider '%s' answered vectors of %d dimensions where "
                          "earlier batches had %d; one model gives one size: check that the "
                          "provider serves the same model every time",
                          s->what, s->ep->name, dims, s->dims);
    s->dims = dims;
    s->v = sl_xrealloc(s->v, (s->done + count) * (size_t)dims * sizeof(float));
    memcpy(s->v + s->done * (size_t)dims, f, count * (size_t)dims * sizeof(float));
    s->done += count;
    return 0;
}

static bool fits_float(double d)
{
    return isfinite(d) && fabs(d) <= FLT_MAX;
}

/* One item's vector into row (dims floats), from a JSON array of numbers
 * or (servers that answer base64 anyway) a base64 string of float32. */
static int read_vector(const char *what, const sl_value *e, size_t item, float *row, int dims,
                       sl_err *err)
{
    if (json_is_array(e)) {
        for (size_t k = 0; k < (size_t)dims; k++) {
            const sl_value *num = json_array_get(e, k);
            double d = json_number_value(num);
            if (!json_is_number(num) || !fits_float(d))
                return sl_err_set(err, SL_EIO,
                                  "%s answered a vector (item %zu) whose "
                                  "value %zu is %s",
                                  what, item, k,
                                  !json_is_number(num) ? "not a number"
                                                       : "not a finite number that fits a float");
            row[k] = (float)d;
        }
        return 0;
    }
    sl_buf raw;
    sl_buf_init(&raw, (size_t)SL_EMBED_MAX_DIMS * 4 + 4);
    int rc = sl_base64_decode(json_string_value(e), json_string_length(e), &raw);
    if (!rc && raw.len == (size_t)dims * 4) {
        for (size_t k = 0; k < (size_t)dims; k++) {
            const unsigned char *p = (const unsigned char *)raw.data + 4 * k;
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24;
            memcpy(&row[k], &u, 4);
            if (!isfinite(row[k])) {
                rc = -1;
                break;
            }
        }
    } else {
        rc = -1;
    }
    sl_buf_release(&raw);
    if (rc)
        return sl_err_set(err, SL_EIO,
                          "%s answered a vector (item %zu) in base64 that "
                          "is not %d finite float32 values",
                          what, item, dims);
    return 0;
}

int sl_embed_read(const sl_value *j, size_t count, const char *what, float **out, int *dims_out,
                  long long *tokens, sl_err *err)
{
    *out = NULL;
    *dims_out = 0;
    if (tokens)
        *tokens = 0;
    const sl_value *data = json_object_get(j, "data");
    if (!json_is_array(data))
        return sl_err_set(err, SL_EIO,
                          "%s answered without a \"data\" list; is it an OpenAI-compatible "
                          "embeddings API?",
                          what);
    if (json_array_size(data) != count)
        return sl_err_set(err, SL_EIO,
                          "%s answered %zu vectors for %zu texts", what, json_array_size(data),
                          count);
    const sl_value *e0 = json_object_get(json_array_get(data, 0), "embedding");
    size_t d = json_array_size(e0);
    if (json_is_string(e0)) {   /* base64 of float32 */
        sl_buf raw;
        sl_buf_init(&raw, (size_t)SL_EMBED_MAX_DIMS * 4 + 4);
        d = sl_base64_decode(json_string_value(e0), json_string_length(e0), &raw) ? 0
                                                                                   : raw.len / 4;
        sl_buf_release(&raw);
    }
    if (d == 0 || d > SL_EMBED_MAX_DIMS)
        return sl_err_set(err, SL_EIO,
                          "%s answered a vector (item 0) of %zu dimensions "
                          "(sluice takes 1..%d)",
                          what, d, SL_EMBED_MAX_DIMS);
    int dims = (int)d;
    float *f = sl_xmalloc(count * d * sizeof(float));
    bool *seen = sl_xcalloc(count, 1);
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        const sl_value *it = json_array_get(data, i);
        const sl_value *ix = json_object_get(it, "index");
        const sl_value *e = json_object_get(it, "embedding");
        json_int_t k = json_integer_value(ix);
        if (!json_is_integer(ix))
            rc = sl_err_set(err, SL_EIO,
                            "%s answered item %zu without an integer "
                            "\"index\"; the order of the vectors cannot be known",
                            what, i);
        else if (k < 0 || (size_t)k >= count)
            rc = sl_err_set(err, SL_EIO,
                            "%s answered item %zu with index %lld, outside "
                            "0..%zu",
                            what, i, (long long)k, count - 1);
        else if (seen[k])
            rc = sl_err_set(err, SL_EIO,
                            "%s answered index %lld twice (item %zu)",
                            what, (long long)k, i);
        else if (!json_is_array(e) && !json_is_string(e))
            rc = sl_err_set(err, SL_EIO,
                            "%s answered item %zu without an \"embedding\" "
                            "list",
                            what, i);
        else if (json_is_array(e) && json_array_size(e) != d)
            rc = sl_err_set(err, SL_EIO,
                            "%s answered vectors of different sizes in one "
                            "batch (%zu and %zu dimensions)",
                            what, d, json_array_size(e));
        else {
            seen[k] = true;
            rc = read_vector(what, e, i, f + (size_t)k * d, dims, err);
        }
    }
    free(seen);
    if (rc) {
        free(f);
        return -1;
    }
    const sl_value *u = json_object_get(j, "usage");
    const sl_value *t = json_object_get(u, "total_tokens");
    if (!json_is_integer(t))
        t = json_object_get(u, "prompt_tokens");
    if (tokens)
        *tokens = json_integer_value(t) > 0 ? json_integer_value(t) : 0;
    *out = f;
    *dims_out = dims;
    return 0;
}

/* ---- the fast path for a well-formed answer ----
 *
 * jansson reads 10 to 20 MB of JSON a second and makes a value of every
 * number: 60 to 130 ms for one batch of 32 vectors of 3072 values (this
 * reader: 4 ms; tests/unit/llm_embed.c prints both).  This reader
 * takes only the answer it expects (an object whose "data" items have an
 * integer "index" and an "embedding" list of plain numbers, and "usage")
 * straight into floats, strictly; anything else -- an error object, base64,
 * a string with \u escapes, a duplicate key it reads, a number jansson
 * would refuse or read otherwise, any check that would fail -- makes it give
 * up, and the answer goes the jansson way, which has the messages.  So it
 * only ever returns what sl_embed_read would (fuzz/fuzz_embed.c compares
 * the two). */

typedef struct {
    const char *p, *end;
    int depth;
} scan;

static void ws(scan *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(scan *c, char ch)
{
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A string (the opening quote next); *s and *n its raw bytes.  No \u
 * escapes (their rules are jansson's to apply), no control characters,
 * valid UTF-8. */
static bool scan_string(scan *c, const char **s, size_t *n)
{
    if (!eat(c, '"'))
        return false;
    const char *start = c->p;
    while (c->p < c->end && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p;
        if (ch < 0x20)
            return false;
        if (ch == '\\') {
            if (c->p + 1 >= c->end || !strchr("\"\\/bfnrt", c->p[1]) || !c->p[1])
                return false;
            c->p++;
        }
        c->p++;
    }
    if (c->p >= c->end || !sl_utf8_valid(start, (size_t)(c->p - start)))
        return false;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return true;
}

/* Powers of ten a double holds exactly. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A JSON number; *d its value as jansson gives it (strtod's), *integer
 * whether jansson would make it an integer (and one that fits: at most 18
 * digits).  A mantissa below 2^53 with a power of ten up to 22 is one
 * correctly rounded multiplication or division of two exact doubles, so the
 * same double strtod gives (Clinger's fast path); anything else goes to
 * strtod. */
static bool scan_number(scan *c, double *d, bool *integer)
{
    ws(c);
    const char *q = c->p, *e = c->end;
    bool neg = q < e && *q == '-';
    if (neg)
        q++;
    if (q >= e || *q < '0' || *q > '9')
        return false;
    uint64_t mant = 0;
    int sig = 0, frac = 0;     /* significant digits kept, digits after the point */
    bool exact = true;
    const char *digits = q;
#define DIGIT(ch)                                                            \
    do {                                                                     \
        if (mant || (ch) != '0') {                                           \
            if (++sig > 19)                                                  \
                exact = false;                                               \
            else                                                             \
                mant = mant * 10 + (uint64_t)((ch) - '0');                   \
        }                                                                    \
    } while (0)
    if (*q == '0')
        q++;
    else
        while (q < e && *q >= '0' && *q <= '9') {
            DIGIT(*q);
            q++;
        }
    size_t ndig = (size_t)(q - digits);
    *integer = true;
    if (q < e && *q == '.') {
        *integer = false;
        q++;
        if (q >= e || *q < '0' || *q > '9')
            return false;
        while (q < e && *q >= '0' && *q <= '9') {
            DIGIT(*q);
            frac++;
            q++;
        }
    }
#undef DIGIT
    long ex = 0;
    if (q < e && (*q == 'e' || *q == 'E')) {
        *integer = false;
        q++;
        bool eneg = q < e && *q == '-';
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        if (q >= e || *q < '0' || *q > '9')
            return false;
        for (; q < e && *q >= '0' && *q <= '9'; q++)
            if (ex < 100000)
                ex = ex * 10 + (*q - '0');
        if (eneg)
            ex = -ex;
    }
    if (*integer && ndig > 18)
        return false;
    long p10 = ex - frac;
    if (exact && mant <= (1ull << 53) && p10 >= -22 && p10 <= 22) {
        double m = (double)mant;
        *d = p10 < 0 ? m / pow10_exact[-p10] : m * pow10_exact[p10];
        if (neg)
            *d = -*d;
        c->p = q;
        return true;
    }
    errno = 0;
    char *stop;
    *d = strtod(c->p, &stop);
    if (stop != q || (errno == ERANGE && *d != 0))
        return false;
    c->p = q;
    return true;
}

static bool skip_value(scan *c)
{
    ws(c);
    if (c->p >= c->end || ++c->depth > 64)
        return false;
    bool ok = true;
    const char *s;
    size_t n;
    double d;
    bool integer;
    char ch = *c->p;
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->p++;
        if (!eat(c, close)) {
            do {
                if (ch == '{' && (!scan_string(c, &s, &n) || !eat(c, ':')))
                    return false;
                if (!skip_value(c))
                    return false;
            } while (eat(c, ','));
            ok = eat(c, close);
        }
    } else if (ch == '"') {
        ok = scan_string(c, &s, &n);
    } else if (ch == 't' || ch == 'f' || ch == 'n') {
        const char *lit = ch == 't' ? "true" : ch == 'f' ? "false" : "null";
        size_t ln = strlen(lit);
        ok = (size_t)(c->end - c->p) >= ln && !memcmp(c->p, lit, ln);
        c->p += ok ? ln : 0;
    } else {
        ok = scan_number(c, &d, &integer);
    }
    c->depth--;
    return ok;
}

static bool key_is(const char *s, size_t n, const char *k)
{
    return n == strlen(k) && !memcmp(s, k, n);
}

/* usage: total_tokens when an integer, else prompt_tokens. */
static bool scan_usage(scan *c, long long *tokens)
{
    ws(c);
    if (c->p >= c->end || *c->p != '{')
        return skip_value(c);   /* not an object: no usage, as jansson reads it */
    c->p++;
    bool has_total = false, has_prompt = false, seen_total = false, seen_prompt = false;
    long long total = 0, prompt = 0;
    if (eat(c, '}'))
        return true;
    do {
        const char *k;
        size_t kn;
        if (!scan_string(c, &k, &kn) || !eat(c, ':'))
            return false;
        bool is_total = key_is(k, kn, "total_tokens"), is_prompt = key_is(k, kn, "prompt_tokens");
        if ((is_total && seen_total) || (is_prompt && seen_prompt))
            return false;
        seen_total |= is_total;
        seen_prompt |= is_prompt;
        ws(c);
        bool num = c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'));
        if ((is_total || is_prompt) && num) {
            double d;
            bool integer;
            if (!scan_number(c, &d, &integer))
                return false;
            if (integer && is_total) {
                has_total = true;
                total = (long long)d;
            } else if (integer) {
                has_prompt = true;
                prompt = (long long)d;
            }
        } else if (!skip_value(c)) {
            return false;
        }
    } while (eat(c, ','));
    if (!eat(c, '}'))
        return false;
    long long t = has_total ? total : has_prompt ? prompt : 0;
    *tokens = t > 0 ? t : 0;
    return true;
}

/* One item of "data" into f (count rows of *dims; the first item sets
 * *dims), its index marked in seen.  The values go to row (scratch of
 * SL_EMBED_MAX_DIMS floats) first: the index may come after them. */
static bool scan_item(scan *c, size_t count, float **f, int *dims, bool *seen, float *row)
{
    if (!eat(c, '{'))
        return false;
    long long index = -1;
    size_t k = 0;
    bool seen_index = false, seen_emb = false;
    if (eat(c, '}'))
        return false;
    do {
        const char *key;
        size_t kn;
        if (!scan_string(c, &key, &kn) || !eat(c, ':'))
            return false;
        if (key_is(key, kn, "index")) {
            double d;
            bool integer;
            if (seen_index || !scan_number(c, &d, &integer) || !integer || d < 0 ||
                d >= (double)count)
                return false;
            seen_index = true;
            index = (long long)d;
        } else if (key_is(key, kn, "embedding")) {
            if (seen_emb || !eat(c, '[') || eat(c, ']'))
                return false;
            seen_emb = true;
            size_t cap = *dims ? (size_t)*dims : SL_EMBED_MAX_DIMS;
            do {
                double d;
                bool integer;
                if (k >= cap || !scan_number(c, &d, &integer) || !fits_float(d))
                    return false;
                row[k++] = (float)d;
            } while (eat(c, ','));
            if (!eat(c, ']'))
                return false;
        } else if (!skip_value(c)) {
            return false;
        }
    } while (eat(c, ','));
    if (!eat(c, '}') || !seen_index || !seen_emb || seen[index])
        return false;
    if (*dims == 0) {
        *dims = (int)k;
        *f = sl_xmalloc(count * k * sizeof(float));
    } else if (k != (size_t)*dims) {
        return false;
    }
    seen[index] = true;
    memcpy(*f + (size_t)index * k, row, k * sizeof(float));
    return true;
}

static bool embed_fast(const char *body, size_t len, size_t count, float **out, int *dims_out,
                       long long *tokens)
{
    scan c = {body, body + len, 0};
    float *f = NULL;
    int dims = 0;
    long long tok = 0;
    bool *seen = sl_xcalloc(count ? count : 1, 1);
    float *row = sl_xmalloc(SL_EMBED_MAX_DIMS * sizeof(float));
    bool seen_data = false, seen_usage = false, ok = eat(&c, '{') && !eat(&c, '}');
    size_t items = 0;
    while (ok) {
        const char *k;
        size_t kn;
        ok = scan_string(&c, &k, &kn) && eat(&c, ':');
        if (!ok)
            break;
        if (key_is(k, kn, "data")) {
            ok = !seen_data && eat(&c, '[') && !eat(&c, ']');
            seen_data = true;
            while (ok) {
                ok = items < count && scan_item(&c, count, &f, &dims, seen, row);
                items++;
                if (!ok || !eat(&c, ','))
                    break;
            }
            ok = ok && eat(&c, ']');
        } else if (key_is(k, kn, "usage")) {
            ok = !seen_usage && scan_usage(&c, &tok);
            seen_usage = true;
        } else if (key_is(k, kn, "error")) {
            ok = false;   /* jansson's way: it has the words for it */
        } else {
            ok = skip_value(&c);
        }
        if (ok && !eat(&c, ','))
            break;
    }
    ok = ok && eat(&c, '}');
    ws(&c);
    ok = ok && c.p == c.end && seen_data && items == count && dims > 0;
    free(seen);
    free(row);
    if (!ok) {
        free(f);
        return false;
    }
    *out = f;
    *dims_out = dims;
    if (tokens)
        *tokens = tok;
    return true;
}

int sl_embed_read_text(const char *body, size_t len, size_t count, const char *who,
                       float **vectors, int *dims, long long *tokens, sl_err *err)
{
    *vectors = NULL;
    *dims = 0;
    if (tokens)
        *tokens = 0;
    if (count && embed_fast(body, len, count, vectors, dims, tokens))
        return 0;
    json_error_t je;
    sl_value *j = json_loadb(body, len, 0, &je);
    if (!j)
        return sl_err_set(err, SL_EIO,
                          "%s answered with something that is not JSON (%s at byte %d)", who,
                          je.text, je.position);
    int rc = json_is_object(j) ? sl_embed_read(j, count, who, vectors, dims, tokens, err)
                               : sl_err_set(err, SL_EIO, "%s answered JSON that is not an object",
                                            who);
    json_decref(j);
    return rc;
}

/* The tape's compact answer for a batch. */
static sl_value *tape_answer(const float *f, size_t count, int dims, long long tokens)
{
    size_t nb = count * (size_t)dims * 4;
    unsigned char *raw = sl_xmalloc(nb ? nb : 1);
    for (size_t i = 0; i < count * (size_t)dims; i++) {
        uint32_t u;
        memcpy(&u, &f[i], 4);
        raw[4 * i] = (unsigned char)u;
        raw[4 * i + 1] = (unsigned char)(u >> 8);
        raw[4 * i + 2] = (unsigned char)(u >> 16);
        raw[4 * i + 3] = (unsigned char)(u >> 24);
    }
    sl_buf b64;
    sl_buf_init(&b64, 0);
    sl_base64_encode(raw, nb, &b64);
    free(raw);
    sl_value *r = json_pack("{s:i, s:I, s:s%, s:I}", "dims", dims, "count", (json_int_t)count,
                            "vectors", b64.data ? b64.data : "", b64.len, "tokens",
                            (json_int_t)tokens);
    sl_buf_release(&b64);
    return r;
}

/* A recorded answer, checked as a server's would be. */
static int read_tape_answer(embed_state *s, const sl_value *r, size_t count, float **out,
                            int *dims_out, sl_err *err)
{
    const sl_value *jd = json_object_get(r, "dims"), *jc = json_object_get(r, "count");
    const sl_value *jv = json_object_get(r, "vectors");
    json_int_t d = json_integer_value(jd);
    if (!json_is_integer(jd) || d < 1 || d > SL_EMBED_MAX_DIMS ||
        json_integer_value(jc) != (json_int_t)count || !json_is_string(jv))
        return sl_err_set(err, SL_EPARSE,
                          "%s: the recorded answer on the tape is not a batch of %zu vectors "
                          "({\"dims\", \"count\", \"vectors\"}); record it again",
                          s->what, count);
    sl_buf raw;
    sl_buf_init(&raw, count * (size_t)d * 4 + 4);
    int rc = sl_base64_decode(json_string_value(jv), json_string_length(jv), &raw);
    if (rc || raw.len != count * (size_t)d * 4) {
        sl_buf_release(&raw);
        return sl_err_set(err, SL_EPARSE,
                          "%s: the recorded vectors on the tape are not %zu x %lld float32 "
                          "values in base64; record it again",
                          s->what, count, (long long)d);
    }
    float *f = sl_xmalloc(count * (size_t)d * sizeof(float));
    for (size_t i = 0; i < count * (size_t)d; i++) {
        const unsigned char *p = (const unsigned char *)raw.data + 4 * i;
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
        memcpy(&f[i], &u, 4);
        if (!isfinite(f[i]))
            rc = -1;
    }
    sl_buf_release(&raw);
    if (rc) {
        free(f);
        return sl_err_set(err, SL_EPARSE,
                          "%s: the recorded vectors on the tape hold a value that is not a "
                          "finite number; record it again",
                          s->what);
    }
    add_tokens(s, json_integer_value(json_object_get(r, "tokens")));
    *out = f;
    *dims_out = (int)d;
    return 0;
}

int sl_llm_embed(const sl_llm_endpoint *ep, const char *model, const char *const *texts, size_t n,
                 const sl_embed_opts *o, sl_llm_tape *tape, float **vectors, int *dims,
                 long long *tokens, sl_err *err)
{
    *vectors = NULL;
    *dims = 0;
    if (tokens)
        *tokens = 0;
    sl_embed_opts defaults = {0};
    if (!o)
        o = &defaults;
    if (!model || !*model)
        return sl_err_set(err, SL_EINVAL, "no embedding model named");
    if (ep->style == SL_LLM_ANTHROPIC)
        return refuse_anthropic(ep, "embeddings", "embedding", model, err);
    size_t batch = o->batch ? o->batch : SL_EMBED_BATCH;
    if (batch > SL_EMBED_MAX_BATCH)
        return sl_err_set(err, SL_EINVAL,
                          "an embedding batch of %zu texts is more than the %d OpenAI-compatible "
                          "servers take",
                          batch, SL_EMBED_MAX_BATCH);
    if (o->dims < 0 || o->dims > SL_EMBED_MAX_DIMS)
        return sl_err_set(err, SL_EINVAL, "embedding dimensions %d: sluice takes 0 (the model's) "
                                          "or 1..%d", o->dims, SL_EMBED_MAX_DIMS);
    size_t max_chars = o->max_input_chars ? o->max_input_chars : SL_EMBED_MAX_INPUT_CHARS;
    for (size_t i = 0; i < n; i++) {
        if (check_text(texts[i], "text", i, err))
            return -1;
        size_t len = strlen(texts[i]);
        if (!len)
            return sl_err_set(err, SL_EINVAL,
                              "text %zu is empty; embedding APIs refuse empty input: leave it "
                              "out",
                              i);
        size_t chars = len > max_chars ? sl_utf8_chars(texts[i], len) : len;
        if (chars > max_chars)
            return sl_err_set(err, SL_ELIMIT,
                              "text %zu is %zu characters long, more than the %zu an embedding "
                              "input may have (max_input_chars); split it into smaller chunks",
                              i, chars, max_chars);
    }
    if (n == 0)
        return 0;

    embed_state s = {.ep = ep, .model = model, .o = o};
    const char *tape_model = o->tape_model && *o->tape_model ? o->tape_model : model;
    bool replay = tape && sl_llm_tape_replaying(tape);
    xfer x;
    bool open = false;
    int rc = 0;
    if (!replay) {
        open = true;
        if (xfer_open(&x, ep, "embeddings", o->cancelled, o->ud, err))
            rc = -1;
    }
    for (size_t first = 0; first < n && !rc; first += batch) {
        size_t count = n - first < batch ? n - first : batch;
        describe(&s, first, count);
        if (o->cancelled && o->cancelled(o->ud)) {
            rc = sl_err_set(err, SL_ECANCELED, "%s: cancelled", s.what);
            break;
        }
        sl_value *input = json_array();
        for (size_t i = 0; i < count; i++)
            json_array_append_new(input, json_string(texts[first + i]));
        sl_value *treq = json_pack("{s:{s:s, s:O}}", "embedding", "model", tape_model, "input",
                                   input);
        if (o->dims > 0 && !o->dims_check_only)
            json_object_set_new(json_object_get(treq, "embedding"), "dimensions",
                                json_integer(o->dims));
        float *f = NULL;
        int d = 0;
        long long before = s.tokens;
        if (replay) {
            const sl_value *events = NULL;
            sl_value *r = sl_llm_tape_find(tape, treq, &events, err);
            rc = r ? read_tape_answer(&s, r, count, &f, &d, err) : -1;
            json_decref(r);
        } else {
            sl_value *wire = json_pack("{s:s, s:O, s:s}", "model", model, "input", input,
                                       "encoding_format", "float");
            if (o->dims > 0 && !o->dims_check_only)
                json_object_set_new(wire, "dimensions", json_integer(o->dims));
            char *payload = json_dumps(wire, JSON_COMPACT);
            json_decref(wire);
            rc = xfer_post(&x, payload, s.what, err);
            free(payload);
            char who[400];
            snprintf(who, sizeof who, "%s: model provider '%s'", s.what, ep->name);
            long long t = 0;
            if (!rc && !embed_fast(x.body.data ? x.body.data : "", x.body.len, count, &f, &d,
                                   &t)) {
                /* the jansson way, for the error object's words (key removed) */
                sl_value *j = answer_json(&x, s.what, err);
                if (!j)
                    rc = -1;
                else if (!json_is_object(j))
                    rc = sl_err_set(err, SL_EIO, "%s answered JSON that is not an object", who);
                else
                    rc = sl_embed_read(j, count, who, &f, &d, &t, err);
                json_decref(j);
            }
            if (!rc)
                add_tokens(&s, t);
            if (!rc && tape) {
                sl_value *ans = tape_answer(f, count, d, s.tokens - before);
                rc = sl_llm_tape_add(tape, treq, NULL, ans, err);
                json_decref(ans);
            }
        }
        if (!rc)
            rc = take_batch(&s, f, count, d, err);
        free(f);
        json_decref(treq);
        json_decref(input);
        if (!rc && o->progress)
            o->progress(s.done, n, o->ud);
    }
    if (open)
        xfer_close(&x);
    if (rc) {
        free(s.v);
        return -1;
    }
    *vectors = s.v;
    *dims = s.dims;
    if (tokens)
        *tokens = s.tokens;
    return 0;
}

/* ---- rerank ---- */

static int by_score(const void *a, const void *b)
{
    const sl_rerank_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int sl_rerank_read(const sl_value *j, size_t n, const char *what, sl_rerank_hit *out,
                   size_t *nout, sl_err *err)
{
    *nout = 0;
    const sl_value *list = json_is_array(j) ? j : json_object_get(j, "results");
    if (!json_is_array(list))
        return sl_err_set(err, SL_EIO,
                          "%s answered without a \"results\" list; is it a Jina- or "
                          "Cohere-style rerank API?",
                          what);
    if (json_array_size(list) > n)
        return sl_err_set(err, SL_EIO, "%s answered %zu results for %zu documents", what,
                          json_array_size(list), n);
    bool *seen = sl_xcalloc(n ? n : 1, 1);
    int rc = 0;
    size_t k = 0;
    for (size_t i = 0; i < json_array_size(list) && !rc; i++) {
        const sl_value *it = json_array_get(list, i);
        const sl_value *ix = json_object_get(it, "index");
        const sl_value *sc = json_object_get(it, "relevance_score");
        if (!sc)
            sc = json_object_get(it, "score");
        json_int_t idx = json_integer_value(ix);
        if (!json_is_integer(ix))
            rc = sl_err_set(err, SL_EIO,
                            "%s answered result %zu without an integer "
                            "\"index\"",
                            what, i);
        else if (idx < 0 || (size_t)idx >= n)
            rc = sl_err_set(err, SL_EIO,
                            "%s answered result %zu with index %lld, "
                            "outside 0..%zu",
                            what, i, (long long)idx, n - 1);
        else if (seen[idx])
            rc = sl_err_set(err, SL_EIO,
                            "%s answered index %lld twice (result %zu)", what, (long long)idx, i);
        else if (!json_is_number(sc) || !isfinite(json_number_value(sc)))
            rc = sl_err_set(err, SL_EIO,
                            "%s answered result %zu without a finite "
                            "\"relevance_score\" (or \"score\")",
                            what, i);
        else {
            seen[idx] = true;
            out[k].index = (size_t)idx;
            out[k].score = json_number_value(sc);
            k++;
        }
    }
    free(seen);
    if (rc)
        return -1;
    qsort(out, k, sizeof *out, by_score);
    *nout = k;
    return 0;
}

int sl_llm_rerank(const sl_llm_endpoint *ep, const char *model, const char *query,
                  const char *const *docs, size_t n, size_t top_n, sl_llm_tape *tape,
                  sl_rerank_hit *out, size_t *nout, sl_err *err)
{
    return sl_llm_rerank_with(ep, model, query, docs, n, top_n, NULL, tape, out, nout, err);
}

int sl_llm_rerank_with(const sl_llm_endpoint *ep, const char *model, const char *query,
                       const char *const *docs, size_t n, size_t top_n, const sl_rerank_opts *o,
                       sl_llm_tape *tape, sl_rerank_hit *out, size_t *nout, sl_err *err)
{
    *nout = 0;
    sl_rerank_opts defaults = {0};
    if (!o)
        o = &defaults;
    if (!model || !*model)
        return sl_err_set(err, SL_EINVAL, "no rerank model named");
    if (ep->style == SL_LLM_ANTHROPIC)
        return refuse_anthropic(ep, "rerank", "rerank", model, err);
    if (n > SL_RERANK_MAX_DOCS)
        return sl_err_set(err, SL_ELIMIT,
                          "%zu documents to rerank at once, more than the %d sluice sends in one "
                          "call; retrieve fewer candidates",
                          n, SL_RERANK_MAX_DOCS);
    if (check_text(query, "the query", SIZE_MAX, err))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (check_text(docs[i], "document", i, err))
            return -1;
    if (n == 0)
        return 0;
    if (top_n == 0 || top_n > n)
        top_n = n;
    char m[96], what[160], who[300];
    sl_excerpt(model, m, sizeof m);
    snprintf(what, sizeof what, "rerank model '%s', %zu documents", m, n);

    if (o->cancelled && o->cancelled(o->ud))
        return sl_err_set(err, SL_ECANCELED, "%s: cancelled", what);
    sl_value *documents = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(documents, json_string(docs[i]));
    sl_value *treq = json_pack("{s:{s:s, s:s, s:O, s:I}}", "rerank", "model",
                               o->tape_model && *o->tape_model ? o->tape_model : model, "query",
                               query, "documents", documents, "top_n", (json_int_t)top_n);
    int rc = 0;
    size_t k = 0;
    if (tape && sl_llm_tape_replaying(tape)) {
        const sl_value *events = NULL;
        sl_value *r = sl_llm_tape_find(tape, treq, &events, err);
        sl_value *hits = json_array();
        const sl_value *rh = json_object_get(r, "hits");
        for (size_t i = 0; r && i < json_array_size(rh); i++) {
            const sl_value *h = json_array_get(rh, i);
            json_array_append_new(hits, json_pack("{s:O?, s:O?}", "index", json_array_get(h, 0),
                                                  "relevance_score", json_array_get(h, 1)));
        }
        if (!r)
            rc = -1;
        else if (!json_is_array(rh))
            rc = sl_err_set(err, SL_EPARSE, "%s: the recorded answer on the tape has no "
                                            "\"hits\"; record it again", what);
        else {
            snprintf(who, sizeof who, "%s: the tape", what);
            rc = sl_rerank_read(hits, n, who, out, &k, err);
        }
        json_decref(hits);
        json_decref(r);
    } else {
        xfer x;
        rc = xfer_open(&x, ep, "rerank", o->cancelled, o->ud, err);
        sl_value *j = NULL;
        if (!rc) {
            sl_value *wire = json_pack("{s:s, s:s, s:O, s:I, s:b}", "model", model, "query", query,
                                       "documents", documents, "top_n", (json_int_t)top_n,
                                       "return_documents", 0);
            char *payload = json_dumps(wire, JSON_COMPACT);
            json_decref(wire);
            rc = xfer_post(&x, payload, what, err);
            free(payload);
            j = rc ? NULL : answer_json(&x, what, err);
            if (!rc && !j)
                rc = -1;
        }
        if (!rc) {
            snprintf(who, sizeof who, "%s: model provider '%s'", what, ep->name);
            rc = sl_rerank_read(j, n, who, out, &k, err);
        }
        json_decref(j);
        xfer_close(&x);
        if (!rc && tape) {
            sl_value *hits = json_array();
            for (size_t i = 0; i < k && i < top_n; i++)
                json_array_append_new(hits, json_pack("[I, f]", (json_int_t)out[i].index,
                                                      out[i].score));
            sl_value *ans = json_pack("{s:o}", "hits", hits);
            rc = sl_llm_tape_add(tape, treq, NULL, ans, err);
            json_decref(ans);
        }
    }
    json_decref(treq);
    json_decref(documents);
    if (rc)
        return -1;
    *nout = k < top_n ? k : top_n;
    return 0;
}
