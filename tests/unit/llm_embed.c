/*
 * Embeddings and reranking (src/llm/embed.c) against the stand-in server
 * tests/tools/llmd.py: batching and order, indexes out of order, retries on
 * 429, every hostile answer llmd can give, cancellation, the key kept out
 * of messages, the checks made before any request, record and replay with
 * the server stopped, and rerank (Jina/Cohere and TEI answers, hostile
 * indexes and scores).
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/sha256.h"
#include "llm/embed.h"
#include "net/http.h"
#include "tap.h"
#include "util.h"

static pid_t llmd;
static char base[128], root[96];

static void stop(void)
{
    if (llmd > 0) {
        kill(llmd, SIGTERM);
        waitpid(llmd, NULL, 0);
        llmd = 0;
    }
}

static sl_llm_endpoint ep(void)
{
    sl_llm_endpoint e = {.name = "local",
                         .style = SL_LLM_OPENAI,
                         .base_url = base,
                         .api_key = "test-key-1234",
                         .connect_timeout_s = 5,
                         .read_timeout_s = 30,
                         .max_retries = 2};
    return e;
}

static int collect(const char *p, size_t n, void *ud)
{
    return sl_buf_add(ud, p, n);
}

/* A GET or POST to llmd's own endpoints; the answer parsed (NULL on failure). */
static sl_value *admin(const char *method, const char *path)
{
    sl_err err = {0};
    sl_http *h = sl_http_new(&err);
    sl_err_clear(&err);
    if (!h)
        return NULL;
    char url[256];
    snprintf(url, sizeof url, "%s%s", root, path);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_http_url(h, url);
    sl_http_method(h, method, "", 0, !strcmp(method, "POST"));
    sl_http_opts *o = sl_http_opts_of(h);
    o->on_body = collect;
    o->ud = &b;
    o->timeout_s = 10;
    sl_value *v = NULL;
    if (sl_http_perform(h) == SL_HTTP_OK)
        v = json_loadb(b.data ? b.data : "", b.len, JSON_DECODE_ANY, NULL);
    sl_http_free(h);
    sl_buf_release(&b);
    return v;
}

static void reset(void)
{
    json_decref(admin("POST", "/__reset"));
}

/* The bodies of the requests made to PATH since the last reset. */
static sl_value *sent(const char *path)
{
    sl_value *log = admin("GET", "/__log"), *out = json_array();
    for (size_t i = 0; i < json_array_size(log); i++) {
        const sl_value *r = json_array_get(log, i);
        if (!strcmp(json_string_value(json_object_get(r, "path")), path))
            json_array_append(out, json_object_get(r, "body"));
    }
    json_decref(log);
    return out;
}

static size_t count_sent(const char *path)
{
    sl_value *s = sent(path);
    size_t n = json_array_size(s);
    json_decref(s);
    return n;
}

/* llmd's hash embedding, computed here from its description (README): a
 * check that the stand-in is what the tests of semantic search assume. */
static void hash_vector(const char *words[], size_t nw, int dims, float *out)
{
    double v[64] = {0}, norm = 0;
    for (size_t i = 0; i < nw; i++) {
        uint8_t h[32];
        sl_sha256(words[i], strlen(words[i]), h);
        uint32_t b = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                     (uint32_t)h[3] << 24;
        v[b % (uint32_t)dims] += h[4] & 1 ? -1 : 1;
    }
    for (int k = 0; k < dims; k++)
        norm += v[k] * v[k];
    for (int k = 0; k < dims; k++)
        out[k] = (float)(norm > 0 ? v[k] / sqrt(norm) : 0);
}

static double cosine(const float *a, const float *b, int dims)
{
    double d = 0, na = 0, nb = 0;
    for (int k = 0; k < dims; k++) {
        d += (double)a[k] * b[k];
        na += (double)a[k] * a[k];
        nb += (double)b[k] * b[k];
    }
    return na > 0 && nb > 0 ? d / sqrt(na * nb) : 0;
}

typedef struct {
    size_t calls, last_done, last_total;
    double cancel_at;
} watch;

static void on_progress(size_t done, size_t total, void *ud)
{
    watch *w = ud;
    w->calls++;
    w->last_done = done;
    w->last_total = total;
}

static bool cancel_at(void *ud)
{
    watch *w = ud;
    return w->cancel_at > 0 && sl_clock_s() >= w->cancel_at;
}

#define NTEXTS 70
static char *texts[NTEXTS];

static void make_texts(void)
{
    static const char *topics[] = {"red cat", "blue ocean", "green forest", "old castle",
                                   "fast train"};
    for (int i = 0; i < NTEXTS; i++)
        texts[i] = sl_xasprintf("text %d is about the %s", i, topics[i % 5]);
}

static void happy_path(void)
{
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    float *v = NULL, *one = NULL;
    int dims = 0, d1 = 0;
    long long tokens = 0;
    watch w = {0};
    sl_embed_opts o = {.progress = on_progress, .ud = &w};
    reset();
    int rc = sl_llm_embed(&e, "hash:32", (const char *const *)texts, NTEXTS, &o, NULL, &v, &dims,
                          &tokens, &err);
    CHECK(rc == 0 && v && dims == 32, "70 texts embedded (%d dimensions) %s", dims,
          err.msg ? err.msg : "");
    size_t reqs = count_sent("/v1/embeddings");
    CHECK(reqs == 3, "70 texts in batches of 32 are 3 requests (%zu)", reqs);
    CHECK(w.calls == 3 && w.last_done == 70 && w.last_total == 70,
          "progress after each batch (%zu calls, %zu of %zu)", w.calls, w.last_done,
          w.last_total);
    CHECK(tokens == 70 * 7, "tokens are the sum of the batches' usage (%lld)", tokens);
    sl_value *bodies = sent("/v1/embeddings");
    const sl_value *b0 = json_array_get(bodies, 0);
    CHECK(json_array_size(json_object_get(b0, "input")) == 32 &&
              json_array_size(json_object_get(json_array_get(bodies, 2), "input")) == 6 &&
              !strcmp(json_string_value(json_object_get(b0, "encoding_format")), "float") &&
              !strcmp(json_string_value(json_object_get(b0, "model")), "hash:32") &&
              !json_object_get(b0, "dimensions"),
          "the requests are OpenAI's: model, input (32, 32, 6), encoding_format float");
    json_decref(bodies);

    /* every text alone gives the vector it got in its batch: order kept */
    bool same = rc == 0;
    sl_embed_opts o1 = {.batch = 1};
    for (int i = 0; same && i < NTEXTS; i += 23) {
        const char *t[] = {texts[i]};
        same = sl_llm_embed(&e, "hash:32", t, 1, &o1, NULL, &one, &d1, NULL, &err) == 0 &&
               d1 == 32 && !memcmp(one, v + (size_t)i * 32, 32 * sizeof(float));
        free(one);
        one = NULL;
    }
    CHECK(same, "each vector is at its text's place (texts 0, 23, 46, 69 alone agree)");

    /* the stand-in's embedding is the documented one, and similar texts
     * come out similar */
    const char *words[] = {"text", "0", "is", "about", "the", "red", "cat"};
    float want[32];
    hash_vector(words, 7, 32, want);
    bool exact = rc == 0;
    for (int k = 0; exact && k < 32; k++)
        exact = fabsf(want[k] - v[k]) < 1e-6f;
    CHECK(exact, "llmd's hash embedding is sha256 buckets and signs, L2-normalised");
    if (rc == 0) {
        double near = cosine(v, v + 5 * 32, 32), far = cosine(v, v + 1 * 32, 32);
        CHECK(near > far, "texts on the same topic are closer (%.3f) than others (%.3f)", near,
              far);
    }
    free(v);
    v = NULL;

    /* dimensions asked for */
    reset();
    sl_embed_opts od = {.dims = 12};
    const char *t2[] = {"alpha beta", "gamma"};
    rc = sl_llm_embed(&e, "hash", t2, 2, &od, NULL, &v, &dims, NULL, &err);
    bodies = sent("/v1/embeddings");
    CHECK(rc == 0 && dims == 12 &&
              json_integer_value(json_object_get(json_array_get(bodies, 0), "dimensions")) == 12,
          "dims 12 asks for \"dimensions\": 12 and gets 12");
    json_decref(bodies);
    free(v);
    v = NULL;
    sl_err_clear(&err);

    /* the size of vectors already kept: checked, not asked for */
    reset();
    sl_embed_opts oc = {.dims = 64, .dims_check_only = true};
    rc = sl_llm_embed(&e, "hash", t2, 2, &oc, NULL, &v, &dims, NULL, &err);
    bodies = sent("/v1/embeddings");
    CHECK(rc == 0 && dims == 64 && !json_object_get(json_array_get(bodies, 0), "dimensions"),
          "dims 64, check only: no \"dimensions\" sent, 64 accepted %s", err.msg ? err.msg : "");
    json_decref(bodies);
    free(v);
    v = NULL;
    sl_err_clear(&err);
    oc.dims = 12;
    rc = sl_llm_embed(&e, "hash", t2, 2, &oc, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && !v && strstr(err.msg, "64 dimensions where 12 were expected"),
          "... and another size is refused: %s", esc(err.msg));
    sl_err_clear(&err);

    /* an answer out of order is put back in order by index */
    float *a = NULL, *b = NULL;
    int da = 0, db = 0;
    int r1 = sl_llm_embed(&e, "hash:8", (const char *const *)texts, 10, NULL, NULL, &a, &da, NULL,
                          &err);
    int r2 = sl_llm_embed(&e, "shuffled", (const char *const *)texts, 10, NULL, NULL, &b, &db,
                          NULL, &err);
    CHECK(r1 == 0 && r2 == 0 && da == 8 && db == 8 && !memcmp(a, b, 10 * 8 * sizeof(float)),
          "data sent in reverse order with correct indexes is read by index %s",
          err.msg ? err.msg : "");
    free(a);
    free(b);
    sl_err_clear(&err);

    /* nothing to embed: no request */
    reset();
    rc = sl_llm_embed(&e, "hash", NULL, 0, NULL, NULL, &v, &dims, &tokens, &err);
    CHECK(rc == 0 && !v && dims == 0 && tokens == 0 && count_sent("/v1/embeddings") == 0,
          "no texts: no request, no vectors");
}

static void retries(void)
{
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    float *v = NULL;
    int dims = 0;
    reset();
    const char *t[] = {"retry me"};
    double t0 = sl_clock_s();
    int rc = sl_llm_embed(&e, "flaky:1", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    double took = sl_clock_s() - t0;
    CHECK(rc == 0 && dims == 8 && took >= 0.9 && took < 4 && count_sent("/v1/embeddings") == 2,
          "a 429 with Retry-After: 1 is retried after ~1 s (%.2f s) %s", took,
          err.msg ? err.msg : "");
    free(v);
    v = NULL;
    sl_err_clear(&err);

    reset();
    t0 = sl_clock_s();
    rc = sl_llm_embed(&e, "drop:1", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    took = sl_clock_s() - t0;
    CHECK(rc == 0 && dims == 8 && count_sent("/v1/embeddings") == 2 && took >= 0.4,
          "a connection closed without an answer is retried after a backoff (%.2f s) %s", took,
          err.msg ? err.msg : "");
    free(v);
    v = NULL;
    sl_err_clear(&err);

    reset();
    e.max_retries = 1;
    rc = sl_llm_embed(&e, "flaky:5", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_ENODE && strstr(err.msg, "HTTP 429") &&
              strstr(err.msg, "rate limiting") && count_sent("/v1/embeddings") == 2 && !v,
          "429s past the retries fail, saying so: %s", esc(err.msg));
    sl_err_clear(&err);

    sl_llm_endpoint bad = ep();
    bad.api_key = "bad-key";
    rc = sl_llm_embed(&bad, "hash", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && strstr(err.msg, "401") && strstr(err.msg, "API key") &&
              !strstr(err.msg, "bad-key"),
          "a bad key: 401 with a hint, and the key (quoted by the server) is not in the "
          "message: %s",
          esc(err.msg));
    sl_err_clear(&err);

    rc = sl_llm_rerank(&bad, "overlap", "q", t, 1, 0, NULL, (sl_rerank_hit[1]){{0}},
                       &(size_t){0}, &err);
    CHECK(rc < 0 && strstr(err.msg, "401") && !strstr(err.msg, "bad-key"),
          "rerank: the same for a bad key: %s", esc(err.msg));
    sl_err_clear(&err);

    sl_llm_endpoint nowhere = ep();
    nowhere.base_url = "http://127.0.0.1:1/v1";
    nowhere.max_retries = 0;
    rc = sl_llm_embed(&nowhere, "hash", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EIO && strstr(err.msg, "cannot reach"),
          "no server: cannot reach it: %s", esc(err.msg));
    sl_err_clear(&err);

    /* an unknown model: the server's words */
    rc = sl_llm_embed(&e, "no-such-model", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && strstr(err.msg, "404") && strstr(err.msg, "does not exist") &&
              strstr(err.msg, "no-such-model"),
          "an unknown model: HTTP 404 with the server's message: %s", esc(err.msg));
    sl_err_clear(&err);
}

static void hostile(void)
{
    static const struct {
        const char *model;
        size_t n, batch;
        int dims;
        sl_errcode code;
        const char *says;
    } cases[] = {
        {"short", 3, 0, 0, SL_EIO, "2 vectors for 3 texts"},
        {"long", 3, 0, 0, SL_EIO, "4 vectors for 3 texts"},
        {"noindex", 3, 0, 0, SL_EIO, "without an integer \"index\""},
        {"dupindex", 3, 0, 0, SL_EIO, "index 0 twice"},
        {"badindex", 3, 0, 0, SL_EIO, "index 3, outside 0..2"},
        {"baddims", 3, 0, 0, SL_EIO, "different sizes in one batch (8 and 7"},
        {"varydims", 3, 2, 0, SL_EIO, "8 dimensions where earlier batches had 16"},
        {"varydims", 1, 0, 5, SL_EIO, "8 dimensions where 5 were asked for"},
        {"nan", 2, 0, 0, SL_EIO, "not JSON"},
        {"overflow", 2, 0, 0, SL_EIO, "value 0 is not a finite number that fits a float"},
        {"badvalue", 2, 0, 0, SL_EIO, "value 0 is not a number"},
        {"error200", 2, 0, 0, SL_ENODE, "embedding backend exploded"},
        {"huge", 1, 0, 0, SL_ELIMIT, "larger than sluice accepts (64 MB)"},
    };
    sl_llm_endpoint e = ep();
    const char *t[] = {"one", "two words", "three more words"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_err err = {0};
        float *v = (float *)&err;   /* must come back NULL */
        int dims = -1;
        sl_embed_opts o = {.batch = cases[i].batch, .dims = cases[i].dims};
        int rc = sl_llm_embed(&e, cases[i].model, t, cases[i].n, &o, NULL, &v, &dims, NULL, &err);
        CHECK(rc < 0 && !v && err.code == cases[i].code && err.msg &&
                  strstr(err.msg, cases[i].says) && strstr(err.msg, cases[i].model) &&
                  strstr(err.msg, "texts ") && strstr(err.msg, "'local'"),
              "%s: refused naming the model, provider and batch: %s", cases[i].model,
              esc(err.msg));
        sl_err_clear(&err);
    }
}

static void refused_before_sending(void)
{
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    float *v = NULL;
    int dims = 0;
    reset();
    const char *empty[] = {"fine", ""};
    int rc = sl_llm_embed(&e, "hash", empty, 2, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EINVAL && strstr(err.msg, "text 1 is empty"),
          "an empty text is refused, naming its index: %s", esc(err.msg));
    sl_err_clear(&err);
    const char *longer[] = {"ok", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"};
    sl_embed_opts o = {.max_input_chars = 5};
    rc = sl_llm_embed(&e, "hash", longer, 2, &o, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_ELIMIT && strstr(err.msg, "text 1 is 6 characters") &&
              strstr(err.msg, "max_input_chars"),
          "a text longer than max_input_chars (code points) is refused: %s", esc(err.msg));
    sl_err_clear(&err);
    o.max_input_chars = 6;
    rc = sl_llm_embed(&e, "hash", longer, 2, &o, NULL, &v, &dims, NULL, &err);
    CHECK(rc == 0 && dims == 64, "... and one of exactly max_input_chars is sent %s",
          err.msg ? err.msg : "");
    free(v);
    v = NULL;
    sl_err_clear(&err);
    reset();
    const char *bad[] = {"ok", "bad \xff byte"};
    rc = sl_llm_embed(&e, "hash", bad, 2, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EINVAL && strstr(err.msg, "text 1 is not valid UTF-8"),
          "invalid UTF-8 is refused: %s", esc(err.msg));
    sl_err_clear(&err);
    sl_embed_opts big = {.batch = 5000};
    rc = sl_llm_embed(&e, "hash", bad, 1, &big, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EINVAL && strstr(err.msg, "5000"),
          "a batch past 2048 is refused: %s", esc(err.msg));
    sl_err_clear(&err);
    CHECK(count_sent("/v1/embeddings") == 0, "none of those made a request");

    sl_llm_endpoint an = {.name = "claude", .style = SL_LLM_ANTHROPIC, .base_url = root};
    rc = sl_llm_embed(&an, "hash", bad, 1, NULL, NULL, &v, &dims, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EUNSUPPORTED && strstr(err.msg, "'claude'") &&
              strstr(err.msg, "no embeddings API") && strstr(err.msg, "embedding model 'hash'") &&
              strstr(err.msg, "llm.providers"),
          "an Anthropic endpoint has no embeddings: %s", esc(err.msg));
    sl_err_clear(&err);
    sl_rerank_hit hits[1];
    size_t nh = 9;
    rc = sl_llm_rerank(&an, "overlap", "q", bad, 1, 0, NULL, hits, &nh, &err);
    CHECK(rc < 0 && err.code == SL_EUNSUPPORTED && strstr(err.msg, "no rerank API") && nh == 0,
          "... nor rerank: %s", esc(err.msg));
    sl_err_clear(&err);
}

static void cancellation(void)
{
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    float *v = NULL;
    int dims = 0;
    watch w = {.cancel_at = sl_clock_s() + 0.2};
    sl_embed_opts o = {.cancelled = cancel_at, .ud = &w};
    const char *t[] = {"wait for it"};
    double t0 = sl_clock_s();
    int rc = sl_llm_embed(&e, "slow:5000", t, 1, &o, NULL, &v, &dims, NULL, &err);
    double took = sl_clock_s() - t0;
    CHECK(rc < 0 && err.code == SL_ECANCELED && took < 0.5 && !v,
          "cancellation ends a call within ~100 ms (%.2f s): %s", took, esc(err.msg));
    sl_err_clear(&err);

    /* cancelled during the backoff of a retry */
    w.cancel_at = sl_clock_s() + 0.3;
    t0 = sl_clock_s();
    rc = sl_llm_embed(&e, "flaky:3", t, 1, &o, NULL, &v, &dims, NULL, &err);
    took = sl_clock_s() - t0;
    CHECK(rc < 0 && err.code == SL_ECANCELED && took < 0.6,
          "... and while waiting to retry (%.2f s)", took);
    sl_err_clear(&err);

    w.cancel_at = sl_clock_s() + 0.2;
    sl_rerank_opts ro = {.cancelled = cancel_at, .ud = &w};
    sl_rerank_hit hits[1];
    size_t nh = 5;
    t0 = sl_clock_s();
    rc = sl_llm_rerank_with(&e, "slow:5000", "q", t, 1, 0, &ro, NULL, hits, &nh, &err);
    took = sl_clock_s() - t0;
    CHECK(rc < 0 && err.code == SL_ECANCELED && took < 0.5 && nh == 0,
          "a rerank call is cancelled too (%.2f s): %s", took, esc(err.msg));
    sl_err_clear(&err);

    e.read_timeout_s = 0.5;
    e.max_retries = 0;
    t0 = sl_clock_s();
    rc = sl_llm_embed(&e, "slow:5000", t, 1, NULL, NULL, &v, &dims, NULL, &err);
    took = sl_clock_s() - t0;
    CHECK(rc < 0 && err.code == SL_ETIMEOUT && took < 2,
          "silence past read_timeout ends the call (%.2f s): %s", took, esc(err.msg));
    sl_err_clear(&err);
}

static void rerank(void)
{
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    const char *docs[] = {"a red car", "the red cat sat", "a dog", "cats are red"};
    sl_rerank_hit hits[4];
    size_t nh = 0;
    reset();
    int rc = sl_llm_rerank(&e, "overlap", "Red cat", docs, 4, 0, NULL, hits, &nh, &err);
    CHECK(rc == 0 && nh == 4 && hits[0].index == 1 && hits[0].score == 1.0 &&
              hits[1].index == 0 && hits[1].score == 0.5 && hits[2].index == 3 &&
              hits[3].index == 2 && hits[3].score == 0.0,
          "overlap: best first, ties by index (1, 0, 3, 2) %s", err.msg ? err.msg : "");
    sl_value *bodies = sent("/v1/rerank");
    const sl_value *b0 = json_array_get(bodies, 0);
    CHECK(json_array_size(bodies) == 1 &&
              json_integer_value(json_object_get(b0, "top_n")) == 4 &&
              json_is_false(json_object_get(b0, "return_documents")) &&
              !strcmp(json_string_value(json_object_get(b0, "query")), "Red cat") &&
              json_array_size(json_object_get(b0, "documents")) == 4,
          "the request: model, query, documents, top_n, return_documents false");
    json_decref(bodies);
    rc = sl_llm_rerank(&e, "overlap", "red cat", docs, 4, 2, NULL, hits, &nh, &err);
    CHECK(rc == 0 && nh == 2 && hits[0].index == 1 && hits[1].index == 0, "top_n 2: two hits");
    rc = sl_llm_rerank(&e, "tei", "red cat", docs, 4, 3, NULL, hits, &nh, &err);
    CHECK(rc == 0 && nh == 3 && hits[0].index == 1 && hits[1].index == 0 && hits[2].index == 3,
          "TEI's top-level [{index, score}] is read too %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    double t0 = sl_clock_s();
    rc = sl_llm_rerank(&e, "flaky:1", "red cat", docs, 4, 0, NULL, hits, &nh, &err);
    CHECK(rc == 0 && nh == 4 && sl_clock_s() - t0 >= 0.9, "a 429 is retried");
    sl_err_clear(&err);

    static const struct {
        const char *model, *says;
    } bad[] = {
        {"badindex", "index 4, outside 0..3"},
        {"dupindex", "index 1 twice"},
        {"noscore", "without a finite \"relevance_score\""},
        {"nan", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nh = 7;
        rc = sl_llm_rerank(&e, bad[i].model, "red cat", docs, 4, 0, NULL, hits, &nh, &err);
        CHECK(rc < 0 && nh == 0 && err.msg && strstr(err.msg, bad[i].says) &&
                  strstr(err.msg, "rerank model") && strstr(err.msg, bad[i].model),
              "rerank %s: refused: %s", bad[i].model, esc(err.msg));
        sl_err_clear(&err);
    }
    reset();
    rc = sl_llm_rerank(&e, "overlap", "red cat", docs, 0, 0, NULL, hits, &nh, &err);
    CHECK(rc == 0 && nh == 0 && count_sent("/v1/rerank") == 0, "no documents: no hits, no request");
    const char *badq = "\xc0\x80";
    rc = sl_llm_rerank(&e, "overlap", badq, docs, 4, 0, NULL, hits, &nh, &err);
    CHECK(rc < 0 && err.code == SL_EINVAL && strstr(err.msg, "the query") &&
              count_sent("/v1/rerank") == 0,
          "a query that is not UTF-8 is refused before sending: %s", esc(err.msg));
    sl_err_clear(&err);
}

typedef struct {
    sl_llm_tape *tape;
    size_t first;
    float *v;
    int dims, rc;
} worker;

static void *embed_worker(void *ud)
{
    worker *w = ud;
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    sl_embed_opts o = {.batch = 8};
    w->rc = sl_llm_embed(&e, "hash:16", (const char *const *)texts + w->first, 17, &o, w->tape,
                         &w->v, &w->dims, NULL, &err);
    sl_err_clear(&err);
    return NULL;
}

/* Calls on four threads at once, one recording tape between them. */
static void threads(void)
{
    char path[] = "/tmp/sluice-embed-mt-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    sl_llm_tape *t = NULL;
    sl_err err = {0};
    sl_llm_tape_open(path, false, &t, &err);
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.tape = t, .first = (size_t)i * 17};
        pthread_create(&th[i], NULL, embed_worker, &w[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    sl_llm_tape_close(t);
    float *all = NULL;
    int dims = 0;
    sl_llm_embed(&(sl_llm_endpoint){.name = "local", .base_url = base, .api_key = "k"}, "hash:16",
                 (const char *const *)texts, 68, NULL, NULL, &all, &dims, NULL, &err);
    bool same = all && dims == 16;
    for (int i = 0; i < 4; i++) {
        same = same && w[i].rc == 0 && w[i].dims == 16 &&
               !memcmp(w[i].v, all + (size_t)i * 17 * 16, 17 * 16 * sizeof(float));
        free(w[i].v);
    }
    size_t len = 0, lines = 0;
    char *text = slurp(path, &len);
    for (size_t i = 0; text && i < len; i++)
        lines += text[i] == '\n';
    CHECK(same && lines == 12,
          "four threads at once, one tape: each gets its own vectors, the tape every batch "
          "(%zu lines) %s",
          lines, err.msg ? err.msg : "");
    free(text);
    free(all);
    sl_err_clear(&err);
    unlink(path);
}

static void tape(void)
{
    char path[] = "/tmp/sluice-embed-tape-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    sl_llm_endpoint e = ep();
    sl_err err = {0};
    sl_llm_tape *t = NULL;
    float *v = NULL, *w = NULL;
    int dims = 0, dw = 0;
    long long tok = 0, tw = 0;
    sl_embed_opts o = {.tape_model = "openai/text-embedding-3-small"};
    const char *docs[] = {"a red car", "the red cat sat", "a dog"};
    sl_rerank_hit h1[3], h2[3];
    size_t n1 = 0, n2 = 0;
    CHECK(sl_llm_tape_open(path, false, &t, &err) == 0, "open a tape to record");
    int rc = sl_llm_embed(&e, "hash:16", (const char *const *)texts, NTEXTS, &o, t, &v, &dims,
                          &tok, &err);
    int rr = sl_llm_rerank(&e, "overlap", "red cat", docs, 3, 2, t, h1, &n1, &err);
    sl_rerank_opts ro = {.tape_model = "jina/jina-reranker-v2"};
    sl_rerank_hit h3[3];
    size_t n3 = 0;
    int rr3 = sl_llm_rerank_with(&e, "tei", "dog", docs, 3, 0, &ro, t, h3, &n3, &err);
    sl_llm_tape_close(t);
    size_t len = 0;
    char *text = slurp(path, &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    CHECK(rc == 0 && rr == 0 && rr3 == 0 && lines == 5 && strstr(text, "jina-reranker-v2") && strstr(text, "\"embedding\"") &&
              strstr(text, "openai/text-embedding-3-small") && !strstr(text, "hash:16") &&
              strstr(text, "\"rerank\"") && !strstr(text, "test-key"),
          "recording writes one exchange per batch and one per rerank (%zu lines), under the "
          "tape model, without the key",
          lines);
    free(text);

    stop();   /* replaying needs no server */
    sl_llm_endpoint gone = ep();
    gone.max_retries = 0;
    CHECK(sl_llm_tape_open(path, true, &t, &err) == 0, "open the tape to replay");
    watch wp = {0};
    o.progress = on_progress;
    o.ud = &wp;
    rc = sl_llm_embed(&gone, "another-local-name", (const char *const *)texts, NTEXTS, &o, t, &w,
                      &dw, &tw, &err);
    CHECK(rc == 0 && dw == dims && tw == tok && v && w &&
              !memcmp(v, w, (size_t)NTEXTS * 16 * sizeof(float)) && wp.calls == 3,
          "replay gives the same vectors (exactly) and tokens with the server stopped %s",
          err.msg ? err.msg : "");
    rr = sl_llm_rerank(&gone, "overlap", "red cat", docs, 3, 2, t, h2, &n2, &err);
    CHECK(rr == 0 && n2 == n1 && n2 == 2 && h2[0].index == h1[0].index &&
              h2[0].score == h1[0].score && h2[1].index == h1[1].index,
          "... and the same rerank hits");
    sl_rerank_hit h4[3];
    size_t n4 = 0;
    rr3 = sl_llm_rerank_with(&gone, "some-local-reranker", "dog", docs, 3, 0, &ro, t, h4, &n4,
                             &err);
    CHECK(rr3 == 0 && n4 == 3 && n3 == 3 && h4[0].index == 2 && h4[0].index == h3[0].index &&
              h4[0].score == h3[0].score,
          "a rerank recorded under its tape model replays whatever model serves it %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    free(w);
    w = NULL;
    sl_embed_opts o2 = {.tape_model = "openai/text-embedding-3-small", .batch = 20};
    rc = sl_llm_embed(&gone, "x", (const char *const *)texts, NTEXTS, &o2, t, &w, &dw, NULL, &err);
    CHECK(rc < 0 && !w && err.code == SL_ENODE && strstr(err.msg, "no recorded embedding batch") &&
              strstr(err.msg, "text-embedding-3-small") && strstr(err.msg, "20 texts") &&
              strstr(err.msg, "text 0 is about"),
          "another batching is not on the tape, and says so: %s", esc(err.msg));
    sl_err_clear(&err);
    rr = sl_llm_rerank(&gone, "overlap", "blue cat", docs, 3, 2, t, h2, &n2, &err);
    CHECK(rr < 0 && strstr(err.msg, "no recorded rerank call") && strstr(err.msg, "blue cat"),
          "another query is not on the tape: %s", esc(err.msg));
    sl_err_clear(&err);
    sl_llm_tape_close(t);

    /* a tampered tape is checked like a server */
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"request\": {\"embedding\": {\"model\": \"m\", \"input\": [\"a\", \"b\"]}}, "
               "\"response\": {\"dims\": 2, \"count\": 2, \"vectors\": \"AAAA\"}}\n");
    fclose(f);
    CHECK(sl_llm_tape_open(path, true, &t, &err) == 0, "open a tampered tape");
    const char *ab[] = {"a", "b"};
    rc = sl_llm_embed(&gone, "m", ab, 2, NULL, t, &w, &dw, NULL, &err);
    CHECK(rc < 0 && err.code == SL_EPARSE && strstr(err.msg, "record it again"),
          "recorded vectors of the wrong size are refused: %s", esc(err.msg));
    sl_err_clear(&err);
    sl_llm_tape_close(t);
    unlink(path);
    free(v);
}

/* What reading one batch costs: 32 vectors of 3072 values (text-embedding-3-large)
 * as a server writes them; a figure, with a bound far above it. */
static void read_cost(void)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "{\"object\":\"list\",\"data\":[");
    for (int i = 0; i < 32; i++) {
        sl_buf_addf(&b, "%s{\"object\":\"embedding\",\"index\":%d,\"embedding\":[", i ? "," : "",
                    31 - i);
        for (int k = 0; k < 3072; k++)
            sl_buf_addf(&b, "%s%.10f", k ? "," : "", sin(i * 3072.0 + k) * 0.05);
        sl_buf_adds(&b, "]}");
    }
    sl_buf_adds(&b, "],\"usage\":{\"prompt_tokens\":320,\"total_tokens\":320}}");
    double t0 = sl_clock_s();
    sl_value *j = json_loadb(b.data, b.len, 0, NULL);
    double t1 = sl_clock_s();
    float *v = NULL;
    int dims = 0;
    long long tokens = 0;
    sl_err err = {0};
    int rc = sl_embed_read(j, 32, "bench", &v, &dims, &tokens, &err);
    double t2 = sl_clock_s();
    float *w = NULL;
    int dw = 0;
    long long tw = 0;
    double t3 = sl_clock_s();
    int rw = sl_embed_read_text(b.data, b.len, 32, "bench", &w, &dw, &tw, &err);
    double t4 = sl_clock_s();
    CHECK(rc == 0 && dims == 3072 && tokens == 320 &&
              fabsf(v[0] - (float)(sin(31 * 3072.0) * 0.05)) < 1e-6f && t2 - t0 < 2,
          "figure: a 32 x 3072 answer (%.1f MB of JSON): jansson parses it in %.1f ms, "
          "sl_embed_read reads that in %.1f ms",
          (double)b.len / 1e6, (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    CHECK(rw == 0 && dw == 3072 && tw == 320 && !memcmp(v, w, 32 * 3072 * sizeof(float)) &&
              t4 - t3 < 1,
          "figure: the fast path reads the text in %.1f ms, the same floats bit for bit",
          (t4 - t3) * 1e3);
    free(w);
    /* what makes it give up goes the jansson way, with the same result */
    static const struct {
        const char *text;
        int rc, dims;
        long long tokens;
    } odd[] = {
        {"{\"data\":[{\"index\":0,\"embedding\":[1,2e0,-0.5]}],\"usage\":{\"prompt_tokens\":3}}",
         0, 3, 3},
        {"{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAAEA=\"}],\"x\":\"\\u00e9\"}", 0, 2,
         0},
        {"{\"data\":[{\"index\":0,\"embedding\":[1]}],\"data\":[{\"index\":0,"
         "\"embedding\":[1,2]}]}",
         0, 2, 0},
        {"{\"data\":[{\"index\":0,\"embedding\":[1e-320]}]}", 0, 1, 0},
        {"{\"data\":[{\"index\":0,\"embedding\":[12345678901234567890123]}]}", -1, 0, 0},
        {"{\"data\":[{\"index\":0,\"embedding\":[1]}]} x", -1, 0, 0},
        {"{\"data\":[{\"index\":0,\"embedding\":[0x1]}]}", -1, 0, 0},
        {"{\"data\":[{\"index\":0,\"embedding\":[1]}],\"error\":{\"message\":\"no\"}}", 0, 1,
         0},
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        w = NULL;
        dw = 0;
        tw = 0;
        rw = sl_embed_read_text(odd[i].text, strlen(odd[i].text), 1, "odd", &w, &dw, &tw, &err);
        CHECK(rw == odd[i].rc && dw == odd[i].dims && tw == odd[i].tokens,
              "odd answer %zu (%s): %s", i, rw ? "refused" : "read", rw ? esc(err.msg) : "");
        free(w);
        sl_err_clear(&err);
    }
    free(v);
    json_decref(j);
    sl_buf_release(&b);
    sl_err_clear(&err);
}

int main(void)
{
    int port;
    llmd = start_llmd(&port);
    if (llmd < 0) {
        printf("1..0 # SKIP tests/tools/llmd.py did not start\n");
        return 0;
    }
    atexit(stop);
    snprintf(root, sizeof root, "http://127.0.0.1:%d", port);
    snprintf(base, sizeof base, "%s/v1", root);
    read_cost();
    make_texts();
    happy_path();
    retries();
    hostile();
    refused_before_sending();
    cancellation();
    rerank();
    threads();
    tape();   /* last: stops the server */
    for (int i = 0; i < NTEXTS; i++)
        free(texts[i]);
    return tap_done();
}
