/*
 * Model calls (src/llm) against the stand-in server tests/tools/llmd.py,
 * in both wire styles: text, streaming, tool calls (parallel, Ollama's
 * reused index, invalid arguments), usage, finish reasons, retries with
 * Retry-After, mid-stream errors, dropped and malformed streams, timeouts,
 * cancellation, record and replay.  (The config's provider resolution:
 * tests/unit/config.c.)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "llm/llm.h"
#include "tap.h"
#include "util.h"

static pid_t llmd;
static char base[128], root[96];

static void stop(void)
{
    if (llmd > 0) {
        kill(llmd, SIGTERM);
        waitpid(llmd, NULL, 0);
    }
}

static int start(void)
{
    int port;
    llmd = start_llmd(&port);
    if (llmd < 0)
        return -1;
    atexit(stop);
    snprintf(root, sizeof root, "http://127.0.0.1:%d", port);
    snprintf(base, sizeof base, "%s/v1", root);
    return 0;
}

static sl_llm_endpoint ep(sl_llm_style style)
{
    sl_llm_endpoint e = {.name = style == SL_LLM_ANTHROPIC ? "anthropic" : "openai",
                         .style = style,
                         .base_url = style == SL_LLM_ANTHROPIC ? root : base,
                         .api_key = "test-key",
                         .connect_timeout_s = 5,
                         .read_timeout_s = 30,
                         .max_retries = 2};
    return e;
}

typedef struct {
    sl_buf text;
    int pieces;
    double cancel_at;
} sink;

static void on_text(const char *s, size_t n, void *ud)
{
    sink *k = ud;
    sl_buf_add(&k->text, s, n);
    k->pieces++;
}

static bool cancel_at(void *ud)
{
    sink *k = ud;
    return k->cancel_at > 0 && sl_clock_s() >= k->cancel_at;
}

/* One call; returns the response (or NULL with *err). */
static sl_value *call(sl_llm_endpoint *e, const char *model, bool stream, sink *k, sl_err *err)
{
    sl_value *req = json_pack("{s:s, s:s, s:[{s:s, s:s}], s:{s:i}}", "model", model, "system",
                              "be brief", "messages", "role", "user", "content", "hello there",
                              "params", "max_tokens", 64);
    sl_llm_stream st = {.on_text = on_text, .cancelled = cancel_at, .ud = k};
    sl_value *resp = NULL;
    sl_llm_call(e, req, stream ? &st : NULL, NULL, &resp, err);
    json_decref(req);
    return resp;
}

static const char *s_of(const sl_value *v, const char *k)
{
    const char *s = json_string_value(json_object_get(v, k));
    return s ? s : "";
}

static void both_styles(sl_llm_style style)
{
    const char *who = style == SL_LLM_ANTHROPIC ? "anthropic" : "openai";
    sl_llm_endpoint e = ep(style);
    sl_err err = {0};
    sink k = {{0}, 0, 0};
    sl_buf_init(&k.text, 0);
    sl_value *r = call(&e, "text:one%20two%20three", true, &k, &err);
    CHECK(r && !strcmp(s_of(r, "text"), "one two three") && k.pieces >= 3 &&
              k.text.len == strlen("one two three") && !strcmp(s_of(r, "finish_reason"), "stop"),
          "%s: streamed text arrives in pieces and in full (%d pieces)", who, k.pieces);
    const sl_value *u = json_object_get(r, "usage");
    CHECK(json_integer_value(json_object_get(u, "completion_tokens")) == 3 &&
              json_integer_value(json_object_get(u, "prompt_tokens")) > 0 &&
              json_integer_value(json_object_get(u, "total_tokens")) ==
                  json_integer_value(json_object_get(u, "prompt_tokens")) + 3,
          "%s: usage is read", who);
    json_decref(r);
    r = call(&e, "text:blocking%20answer", false, &k, &err);
    CHECK(r && !strcmp(s_of(r, "text"), "blocking answer"), "%s: a blocking call", who);
    json_decref(r);

    r = call(&e, "tools2", true, &k, &err);
    const sl_value *tc = json_object_get(r, "tool_calls");
    CHECK(json_array_size(tc) == 2 && !strcmp(s_of(json_array_get(tc, 0), "name"), "get_weather") &&
              !strcmp(s_of(json_array_get(tc, 0), "arguments"), "{\"city\":\"Paris\"}") &&
              !strcmp(s_of(json_array_get(tc, 1), "name"), "get_time") &&
              !strcmp(s_of(json_array_get(tc, 1), "arguments"), "{\"tz\":\"UTC\"}") &&
              !strcmp(s_of(r, "finish_reason"), "tool_calls"),
          "%s: two parallel tool calls, arguments merged from pieces", who);
    json_decref(r);
    r = call(&e, "badargs", true, &k, &err);
    tc = json_object_get(r, "tool_calls");
    CHECK(r && json_array_size(tc) == 1 && json_object_get(json_array_get(tc, 0), "arguments_error"),
          "%s: invalid tool arguments are reported, not a crash", who);
    json_decref(r);
    r = call(&e, "length", true, &k, &err);
    CHECK(r && !strcmp(s_of(r, "finish_reason"), "length"), "%s: finish reason length", who);
    json_decref(r);

    r = call(&e, "midstream-error", true, &k, &err);
    CHECK(!r && err.msg && strstr(err.msg, "upstream overloaded"),
          "%s: a mid-stream error fails the call with the provider's words: %s", who,
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    r = call(&e, "drop", true, &k, &err);
    CHECK(!r && err.msg, "%s: a dropped stream fails the call: %s", who, err.msg ? err.msg : "");
    sl_err_clear(&err);
    r = call(&e, "malformed", true, &k, &err);
    CHECK(!r && err.msg && strstr(err.msg, "not JSON"), "%s: a malformed chunk fails: %s", who,
          err.msg ? err.msg : "");
    sl_err_clear(&err);

    double t0 = sl_clock_s();
    /* the stand-in counts per model string, so each style has its own */
    r = call(&e, style == SL_LLM_ANTHROPIC ? "ratelimit:01" : "ratelimit:1", true, &k, &err);
    double took = sl_clock_s() - t0;
    CHECK(r && took >= 0.9 && took < 4, "%s: 429 with Retry-After: 1 is retried after ~1 s (%.2f s)",
          who, took);
    json_decref(r);
    sl_err_clear(&err);
    e.max_retries = 1;
    r = call(&e, "error500:5", true, &k, &err);
    CHECK(!r && err.msg && strstr(err.msg, "HTTP 500"), "%s: 500s past the retries fail: %s", who,
          err.msg ? err.msg : "");
    sl_err_clear(&err);

    sl_llm_endpoint bad = ep(style);
    bad.api_key = "bad-key";
    r = call(&bad, "text", false, &k, &err);
    CHECK(!r && err.msg && strstr(err.msg, "401") && strstr(err.msg, "API key") &&
              !strstr(err.msg, "bad-key"),
          "%s: a bad key: 401 with a hint, and the key is not in the message: %s", who,
          err.msg ? err.msg : "");
    sl_err_clear(&err);

    e = ep(style);
    e.read_timeout_s = 1;
    t0 = sl_clock_s();
    e.max_retries = 0;
    r = call(&e, "hang", true, &k, &err);
    took = sl_clock_s() - t0;
    CHECK(!r && took < 4 && err.code == SL_ETIMEOUT, "%s: silence past read_timeout ends the call (%.1f s)",
          who, took);
    sl_err_clear(&err);

    e = ep(style);
    k.cancel_at = sl_clock_s() + 0.3;
    t0 = sl_clock_s();
    r = call(&e, "slow:500", true, &k, &err);
    took = sl_clock_s() - t0;
    CHECK(!r && err.code == SL_ECANCELED && took < 1.5, "%s: cancellation aborts the transfer (%.2f s)",
          who, took);
    k.cancel_at = 0;
    sl_err_clear(&err);
    sl_buf_release(&k.text);
}

static void ollama_quirk(void)
{
    sl_llm_endpoint e = ep(SL_LLM_OPENAI);
    sl_err err = {0};
    sink k = {{0}, 0, 0};
    sl_buf_init(&k.text, 0);
    sl_value *r = call(&e, "ollama-tools", true, &k, &err);
    const sl_value *tc = json_object_get(r, "tool_calls");
    CHECK(json_array_size(tc) == 2 && strcmp(s_of(json_array_get(tc, 0), "id"),
                                             s_of(json_array_get(tc, 1), "id")),
          "two calls at index 0 with different ids stay two calls (Ollama)");
    json_decref(r);
    r = call(&e, "reasoning", true, &k, &err);
    CHECK(r && !strcmp(s_of(r, "text"), "The answer is 42.") &&
              strstr(s_of(r, "reasoning_content"), "pondering"),
          "a separate reasoning stream (DeepSeek) is kept apart");
    json_decref(r);
    sl_buf_release(&k.text);
}

static void tape(void)
{
    char path[] = "/tmp/sluice-tape-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    sl_llm_endpoint e = ep(SL_LLM_OPENAI);
    sl_err err = {0};
    sl_llm_tape *t;
    CHECK(sl_llm_tape_open(path, false, &t, &err) == 0, "open a tape to record");
    sl_value *req = json_pack("{s:s, s:[{s:s, s:s}]}", "model", "text:recorded%20words", "messages",
                              "role", "user", "content", "hi");
    sink k = {{0}, 0, 0};
    sl_buf_init(&k.text, 0);
    sl_llm_stream st = {.on_text = on_text, .ud = &k};
    sl_value *r1 = NULL, *r2 = NULL;
    CHECK(sl_llm_call(&e, req, &st, t, &r1, &err) == 0, "a recorded call");
    sl_llm_tape_close(t);
    sl_buf_reset(&k.text);
    k.pieces = 0;
    sl_llm_endpoint nowhere = {.name = "nowhere", .base_url = "http://127.0.0.1:1/v1"};
    CHECK(sl_llm_tape_open(path, true, &t, &err) == 0, "open the tape to replay");
    CHECK(sl_llm_call(&nowhere, req, &st, t, &r2, &err) == 0 && sl_value_equal(r1, r2) &&
              k.text.len == strlen("recorded words") && k.pieces >= 2,
          "replay gives the same answer and the same pieces, with no network");
    json_object_set_new(req, "model", json_string("another"));
    json_decref(r2);
    r2 = NULL;
    CHECK(sl_llm_call(&nowhere, req, &st, t, &r2, &err) < 0 && strstr(err.msg, "no recorded exchange"),
          "a request that was not recorded fails clearly: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_llm_tape_close(t);
    FILE *f = fopen(path, "w");
    fputs("{\"not\": \"an exchange\"}\n", f);
    fclose(f);
    CHECK(sl_llm_tape_open(path, true, &t, &err) < 0 && strstr(err.msg, ":1:"),
          "a broken tape is refused with file:line: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    unlink(path);
    json_decref(req);
    json_decref(r1);
    sl_buf_release(&k.text);
}

int main(void)
{
    if (start()) {
        printf("1..0 # SKIP tests/tools/llmd.py did not start\n");
        return 0;
    }
    both_styles(SL_LLM_OPENAI);
    both_styles(SL_LLM_ANTHROPIC);
    ollama_quirk();
    tape();
    return tap_done();
}
