/*
 * secret — the registry every shown string is masked with: raw, URL-encoded
 * (whole or in part), form-encoded and JSON-escaped forms, values deep and
 * shallow, counted registration.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/secret.h"
#include "tap.h"

static int masked_is(const char *in, const char *want)
{
    char *m = sl_secret_mask(in);
    int ok = want ? (m && !strcmp(m, want)) : !m;
    if (!ok)
        printf("# %s -> %s (want %s)\n", in, m ? m : "(unchanged)", want ? want : "(unchanged)");
    free(m);
    return ok;
}

int main(void)
{
    CHECK(masked_is("nothing registered: sk-abcdefghijklmnopqrstuv", NULL), "no secrets: nothing changes");
    sl_secret_add("sk-abcdefghijklmnopqrstuv");
    sl_secret_add("a\"b\\c/d+e f!");  /* 12 chars: shown as ****** */
    sl_secret_add("abc");             /* too short to register */
    CHECK(masked_is("key sk-abcdefghijklmnopqrstuv end", "key sk-abc************uv end"), "raw form");
    CHECK(masked_is("sk-abcdefghijklmnopqrstuvsk-abcdefghijklmnopqrstuv", "sk-abc************uvsk-abc************uv"),
          "two in a row");
    CHECK(masked_is("abc abc", NULL), "a string under SL_SECRET_MIN is not a secret");
    CHECK(masked_is("u=a%22b%5Cc%2Fd%2Be%20f%21", "u=******"), "URL-encoded, every byte");
    CHECK(masked_is("u=a%22b%5cc/d+e%20f!", "u=******"), "URL-encoded in part, lower-case hex");
    CHECK(masked_is("q=a%22b%5Cc%2Fd%2Be+f%21", "q=******"), "form-encoded (space as +)");
    CHECK(masked_is("{\"k\": \"a\\\"b\\\\c\\/d+e f!\"}", "{\"k\": \"******\"}"), "JSON-escaped");
    CHECK(masked_is("\"a\\u0022b\\\\c/d+e f!\"", "\"******\""), "JSON \\u escapes");
    CHECK(masked_is("a\"b\\c/d+e f", NULL), "a prefix of a secret is not masked");
    CHECK(masked_is("\\\\\\\\\\\\\\\\%%%%%%++++", NULL), "escape-looking text without a secret");

    sl_value *v = json_pack("{s:[s,i,{s:s}], s:s}", "a", "x", 1, "k", "pre sk-abcdefghijklmnopqrstuv",
                            "b", "plain");
    sl_value *m = sl_secret_mask_value(v);
    CHECK(m != v && !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(m, "a"), 2), "k")),
                            "pre sk-abc************uv"),
          "values: a nested string is masked in a copy");
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(json_object_get(v, "a"), 2), "k")),
                  "pre sk-abcdefghijklmnopqrstuv"),
          "values: the original is untouched");
    CHECK(json_object_get(m, "b") == json_object_get(v, "b"), "values: unchanged parts are shared");
    json_decref(m);
    sl_value *clean = json_pack("{s:[s,i]}", "a", "x", 1);
    m = sl_secret_mask_value(clean);
    CHECK(m == clean, "values: nothing to mask, the same value back");
    json_decref(m);
    json_decref(clean);
    json_decref(v);

    sl_err e = {0};
    sl_err_set(&e, SL_EINVAL, "request to https://h/?key=%s failed", "sk-abcdefghijklmnopqrstuv");
    CHECK(e.msg && !strstr(e.msg, "defghijklm"), "sl_err_set masks: %s", e.msg);
    sl_err_prefix(&e, "with %s", "a\"b\\c/d+e f!");
    CHECK(e.msg && !strstr(e.msg, "d+e f!"), "sl_err_prefix masks: %s", e.msg);
    sl_err_clear(&e);

    sl_secret_add("sk-abcdefghijklmnopqrstuv");     /* a second holder */
    sl_secret_remove("sk-abcdefghijklmnopqrstuv");
    CHECK(masked_is("sk-abcdefghijklmnopqrstuv", "sk-abc************uv"), "counted: held while one holder remains");
    sl_secret_remove("sk-abcdefghijklmnopqrstuv");
    CHECK(masked_is("sk-abcdefghijklmnopqrstuv", NULL), "counted: gone when the last holder removes it");
    sl_secret_remove("a\"b\\c/d+e f!");
    CHECK(masked_is("a\"b\\c/d+e f!", NULL), "removed");

    char *held = strdup("token-0123456789abcdef");
    sl_secret_add(held);
    CHECK(masked_is("x token-0123456789abcdef", "x ******"), "sl_secret_free: held first");
    sl_secret_free(held);
    CHECK(masked_is("x token-0123456789abcdef", NULL), "sl_secret_free: forgotten with its holder");
    sl_secret_free(NULL);
    return tap_done();
}
