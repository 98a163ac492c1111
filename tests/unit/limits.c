/*
 * limits — Dify's defaults, "name=value" parsing with errors that name the
 * field, sizes with k/m/g suffixes, booleans, SLUICE_<NAME> environment
 * variables, and the --help description.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/limits.h"
#include "tap.h"

static void test_defaults(void)
{
    struct sl_limits l;
    memset(&l, 0xAB, sizeof l);
    sl_limits_default(&l);
    /* Dify: WORKFLOW_MAX_EXECUTION_STEPS, WORKFLOW_MAX_EXECUTION_TIME,
     * WORKFLOW_CALL_MAX_DEPTH, MAX_VARIABLE_SIZE, LOOP_NODE_MAX_COUNT,
     * HTTP_REQUEST_* settings, code node string cap. */
    CHECK(l.max_steps == 500, "max_steps defaults to 500 (got %d)", l.max_steps);
    CHECK(l.max_time_s == 1200, "max_time_s defaults to 1200 (got %g)", l.max_time_s);
    CHECK(l.max_depth == 5, "max_depth defaults to 5 (got %d)", l.max_depth);
    CHECK(l.max_variable_bytes == 204800, "max_variable_bytes defaults to 200 KB = 204800 (got %zu)",
          l.max_variable_bytes);
    CHECK(l.workers == 10, "workers defaults to 10 (got %d)", l.workers);
    /* bounds that were fixed numbers in the code, same defaults */
    CHECK(l.install_timeout_s == 600 && l.command_error_bytes == 2000 && l.code_log_bytes == 16384 &&
              l.code_error_bytes == 8192 && l.history_messages == 500 &&
              l.input_file_bytes == (size_t)10 << 20 && l.sandbox_output_bytes == l.max_output_bytes,
          "install, error tails, history, input files and sandbox output keep their defaults");
    {
        struct sl_limits m;
        sl_limits_default(&m);
        sl_err e = {0};
        CHECK(!sl_limits_set(&m, "install_timeout_s=5", &e) && m.install_timeout_s == 5 &&
                  !sl_limits_set(&m, "history_messages=20", &e) && m.history_messages == 20 &&
                  !sl_limits_set(&m, "code_error_bytes=1k", &e) && m.code_error_bytes == 1024,
              "the new entries are set like every other (%s)", e.msg ? e.msg : "");
        sl_err_clear(&e);
    }
    CHECK(l.max_loop_count == 100, "max_loop_count defaults to 100 (got %d)", l.max_loop_count);
    CHECK(l.parallel_iterations == 10, "parallel_iterations defaults to 10 (got %d)",
          l.parallel_iterations);
    CHECK(l.max_string_bytes == 400000, "max_string_bytes defaults to 400000 (got %zu)",
          l.max_string_bytes);
    CHECK(l.max_iterations > 0, "max_iterations has a positive default (got %d)", l.max_iterations);
    CHECK(l.http_connect_timeout_s == 10, "http_connect_timeout_s defaults to 10 (got %g)",
          l.http_connect_timeout_s);
    CHECK(l.http_read_timeout_s == 600, "http_read_timeout_s defaults to 600 (got %g)",
          l.http_read_timeout_s);
    CHECK(l.http_write_timeout_s == 600, "http_write_timeout_s defaults to 600 (got %g)",
          l.http_write_timeout_s);
    CHECK(l.http_max_text_bytes == 1048576, "http_max_text_bytes defaults to 1 MB (got %zu)",
          l.http_max_text_bytes);
    CHECK(l.http_max_binary_bytes == 10485760, "http_max_binary_bytes defaults to 10 MB (got %zu)",
          l.http_max_binary_bytes);
    CHECK(!l.http_allow_private, "http_allow_private defaults to false (SSRF guard)");
    CHECK(l.http_ssl_verify, "http_ssl_verify defaults to true");
    CHECK(l.http_max_redirects == 20, "http_max_redirects defaults to 20, httpx's (got %d)",
          l.http_max_redirects);
}

/* Applies `a`; expects success. */
static struct sl_limits set_ok(const char *a, bool *ok)
{
    struct sl_limits l;
    sl_limits_default(&l);
    sl_err err = {0};
    *ok = sl_limits_set(&l, a, &err) == 0 && err.msg == NULL;
    if (!*ok)
        fprintf(stderr, "# %s: %s\n", a, err.msg ? err.msg : "?");
    sl_err_clear(&err);
    return l;
}

/* Applies `a`; expects -1 with a message containing `field`, and the
 * limits left as they were. */
static void set_bad(const char *a, const char *field)
{
    struct sl_limits l, before;
    sl_limits_default(&l);
    sl_limits_default(&before);
    sl_err err = {0};
    int rc = sl_limits_set(&l, a, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, field) && err.code == SL_EINVAL &&
              memcmp(&l, &before, sizeof l) == 0,
          "'%s' is refused with a message naming '%s', limits unchanged (got rc %d: %s)", a,
          field, rc, err.msg ? err.msg : "no message");
    sl_err_clear(&err);
}

static void test_set(void)
{
    bool ok;
    struct sl_limits l;
    l = set_ok("max_steps=1000", &ok);
    CHECK(ok && l.max_steps == 1000, "max_steps=1000");
    l = set_ok("max_steps=0", &ok);
    CHECK(ok && l.max_steps == 0, "max_steps=0 is allowed");
    l = set_ok("workers=1", &ok);
    CHECK(ok && l.workers == 1, "workers=1");
    l = set_ok("max_time_s=2.5", &ok);
    CHECK(ok && l.max_time_s == 2.5, "max_time_s=2.5 (fractions of a second)");
    l = set_ok("max_time_s=0.05", &ok);
    CHECK(ok && l.max_time_s == 0.05, "max_time_s=0.05");
    l = set_ok("http_read_timeout_s=30", &ok);
    CHECK(ok && l.http_read_timeout_s == 30, "http_read_timeout_s=30");
    l = set_ok("max_loop_count=5000", &ok);
    CHECK(ok && l.max_loop_count == 5000 && l.max_steps == 500,
          "one assignment changes one field only");

    /* sizes */
    l = set_ok("max_variable_bytes=300", &ok);
    CHECK(ok && l.max_variable_bytes == 300, "size in bytes");
    l = set_ok("max_variable_bytes=200k", &ok);
    CHECK(ok && l.max_variable_bytes == 204800, "200k = 204800 (got %zu)", l.max_variable_bytes);
    l = set_ok("max_variable_bytes=2K", &ok);
    CHECK(ok && l.max_variable_bytes == 2048, "2K = 2048 (got %zu)", l.max_variable_bytes);
    l = set_ok("max_string_bytes=1m", &ok);
    CHECK(ok && l.max_string_bytes == 1048576, "1m = 1048576 (got %zu)", l.max_string_bytes);
    l = set_ok("http_max_binary_bytes=1.5m", &ok);
    CHECK(ok && l.http_max_binary_bytes == 1572864, "1.5m = 1572864 (got %zu)",
          l.http_max_binary_bytes);
    l = set_ok("http_max_text_bytes=64kb", &ok);
    CHECK(ok && l.http_max_text_bytes == 65536, "64kb = 65536 (got %zu)", l.http_max_text_bytes);
    l = set_ok("http_max_binary_bytes=1g", &ok);
    CHECK(ok && l.http_max_binary_bytes == 1073741824, "1g = 1073741824 (got %zu)",
          l.http_max_binary_bytes);
    l = set_ok("max_variable_bytes=0", &ok);
    CHECK(ok && l.max_variable_bytes == 0, "size 0");

    /* booleans */
    static const char *const truths[] = {"true", "TRUE", "True", "1", "yes", "on"};
    static const char *const falses[] = {"false", "FALSE", "0", "no", "off"};
    for (size_t i = 0; i < sizeof truths / sizeof truths[0]; i++) {
        char a[64];
        snprintf(a, sizeof a, "http_allow_private=%s", truths[i]);
        l = set_ok(a, &ok);
        CHECK(ok && l.http_allow_private, "%s", a);
    }
    for (size_t i = 0; i < sizeof falses / sizeof falses[0]; i++) {
        char a[64];
        snprintf(a, sizeof a, "http_ssl_verify=%s", falses[i]);
        l = set_ok(a, &ok);
        CHECK(ok && !l.http_ssl_verify, "%s", a);
    }

    /* bad values name the field */
    set_bad("max_steps=-1", "max_steps");
    set_bad("max_steps=abc", "max_steps");
    set_bad("max_steps=", "max_steps");
    set_bad("max_steps=1.5", "max_steps");
    set_bad("max_steps=10x", "max_steps");
    set_bad("max_steps=99999999999999999999", "max_steps");
    set_bad("workers=many", "workers");
    set_bad("max_depth=-3", "max_depth");
    set_bad("max_time_s=-1", "max_time_s");
    set_bad("max_time_s=soon", "max_time_s");
    set_bad("max_time_s=", "max_time_s");
    set_bad("max_time_s=1e999", "max_time_s");
    set_bad("max_variable_bytes=-5", "max_variable_bytes");
    set_bad("max_variable_bytes=10x", "max_variable_bytes");
    set_bad("max_variable_bytes=k", "max_variable_bytes");
    set_bad("max_variable_bytes=", "max_variable_bytes");
    set_bad("http_allow_private=maybe", "http_allow_private");
    set_bad("http_allow_private=", "http_allow_private");
    set_bad("bogus=1", "bogus");
    set_bad("max_step=5", "max_step");
    set_bad("max_steps_x=5", "max_steps_x");
    set_bad("max_steps", "max_steps");
    set_bad("MAX_STEPS=5", "MAX_STEPS");

    /* an error with a NULL err still fails */
    sl_limits_default(&l);
    CHECK(sl_limits_set(&l, "max_steps=x", NULL) == -1, "a bad value with err == NULL is -1");
    /* later assignments win */
    sl_limits_default(&l);
    sl_limits_set(&l, "max_steps=7", NULL);
    sl_limits_set(&l, "max_steps=8", NULL);
    CHECK(l.max_steps == 8, "the later assignment wins");
}

static void test_env(void)
{
    struct sl_limits l;
    sl_err err = {0};
    setenv("SLUICE_MAX_STEPS", "42", 1);
    setenv("SLUICE_HTTP_ALLOW_PRIVATE", "yes", 1);
    setenv("SLUICE_MAX_VARIABLE_BYTES", "1k", 1);
    setenv("SLUICE_MAX_TIME_S", "7.5", 1);
    sl_limits_default(&l);
    int rc = sl_limits_from_env(&l, &err);
    CHECK(rc == 0 && l.max_steps == 42 && l.http_allow_private && l.max_variable_bytes == 1024 &&
              l.max_time_s == 7.5 && l.workers == 10,
          "SLUICE_MAX_STEPS, SLUICE_HTTP_ALLOW_PRIVATE, SLUICE_MAX_VARIABLE_BYTES, "
          "SLUICE_MAX_TIME_S are read; others keep defaults (%s)", err.msg ? err.msg : "ok");
    sl_err_clear(&err);
    setenv("SLUICE_WORKERS", "lots", 1);
    sl_limits_default(&l);
    rc = sl_limits_from_env(&l, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "SLUICE_WORKERS") && strstr(err.msg, "lots"),
          "a bad SLUICE_WORKERS is refused naming the variable and value (%s)",
          err.msg ? err.msg : "no message");
    sl_err_clear(&err);
    unsetenv("SLUICE_WORKERS");
    unsetenv("SLUICE_MAX_STEPS");
    unsetenv("SLUICE_HTTP_ALLOW_PRIVATE");
    unsetenv("SLUICE_MAX_VARIABLE_BYTES");
    unsetenv("SLUICE_MAX_TIME_S");
    setenv("sluice_max_steps", "3", 1);
    sl_limits_default(&l);
    rc = sl_limits_from_env(&l, &err);
    CHECK(rc == 0 && l.max_steps == 500, "only upper-case SLUICE_<NAME> variables count");
    unsetenv("sluice_max_steps");
    sl_err_clear(&err);
}

typedef struct {
    int n;
    bool steps, private_false, ssl_true; /* value column as expected */
    char names[64][32];
} desc;

/* Lines look like "name   value   what it bounds". */
static void on_line(const char *line, void *ud)
{
    desc *d = ud;
    char name[32] = "", value[32] = "";
    sscanf(line, "%31s %31s", name, value);
    if (d->n < 64)
        memcpy(d->names[d->n], name, sizeof name);
    d->n++;
    if (!strcmp(name, "max_steps"))
        d->steps = !strcmp(value, "500");
    if (!strcmp(name, "http_allow_private"))
        d->private_false = !strcmp(value, "false");
    if (!strcmp(name, "http_ssl_verify"))
        d->ssl_true = !strcmp(value, "true");
}

static void test_describe(void)
{
    struct sl_limits l;
    sl_limits_default(&l);
    desc d = {0};
    sl_limits_describe(&l, on_line, &d);
    CHECK(d.n >= 17, "describe lists every limit (%d lines)", d.n);
    CHECK(d.steps && d.private_false && d.ssl_true, "describe shows current values");
    /* every name it lists is accepted by sl_limits_set */
    int bad = 0;
    for (int i = 0; i < d.n && i < 64; i++) {
        struct sl_limits t;
        sl_limits_default(&t);
        char a[64];
        snprintf(a, sizeof a, "%s=1", d.names[i]);
        if (sl_limits_set(&t, a, NULL) < 0)
            bad++;
    }
    CHECK(bad == 0, "every described name can be set with name=1 (%d refused)", bad);
    sl_limits_set(&l, "max_steps=777", NULL);
    d = (desc){0};
    sl_limits_describe(&l, on_line, &d);
    CHECK(!d.steps, "describe reflects an override (no longer 500)");
}

/* Non-finite and out-of-range numbers.  Last, because converting them to
 * size_t is undefined behaviour that UBSan builds stop on. */
static void test_non_finite(void)
{
    set_bad("max_time_s=nan", "max_time_s"); /* a NaN budget would never expire */
    set_bad("max_variable_bytes=nan", "max_variable_bytes");
    set_bad("max_variable_bytes=inf", "max_variable_bytes");
    set_bad("max_variable_bytes=1e30g", "max_variable_bytes");
}

int main(void)
{
    test_defaults();
    test_set();
    test_env();
    test_describe();
    test_non_finite();
    return tap_done();
}
