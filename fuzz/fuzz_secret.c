/*
 * fuzz_secret — libFuzzer target for the secret registry's masking
 * (core/secret): sl_secret_mask over arbitrary text, with secrets whose
 * characters URL-encoding and JSON escaping change.
 *
 * Besides memory errors it checks the contract: the masked text never
 * holds a registered secret in raw form; text that holds none comes back
 * unchanged (NULL); masking is idempotent for the fixed secrets (a
 * masked text needs no more masking).  The first byte picks whether the input also registers itself
 * (a secret made of fuzzer bytes, which exercises escape-heavy secrets).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/secret.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed[] = {"sk-abcdefghijklmnopqrstuv", "p\"a\\s/s+w o%rd", "hunter22",
                                    "\\\\\\\\%%%%++++", NULL};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (const char *const *s = fixed; *s; s++)
        sl_secret_add(*s);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    char *own = NULL;
    if (data[0] & 1 && size > 8) {  /* the input's first few bytes as a secret too */
        size_t n = 4 + data[0] % 12;
        own = strndup(text, n < size - 1 ? n : size - 1);
        if (strlen(own) >= SL_SECRET_MIN)
            sl_secret_add(own);
        else {
            free(own);
            own = NULL;
        }
    }
    char *m = sl_secret_mask(text);
    const char *out = m ? m : text;
    for (const char *const *s = fixed; *s; s++)
        if (strstr(out, *s))
            abort();  /* a raw secret survived */
    /* (a secret holding '*' can re-form from a mask and the text after it,
     * which gives nothing away) */
    bool inside = false;  /* (or one a fixed secret's shown first 6 may hold) */
    for (const char *const *s = fixed; own && *s; s++)
        inside |= strstr(*s, own) != NULL;
    if (own && !inside && !strchr(own, '*') && strstr(out, own))
        abort();
    if (m && !own) {  /* masks hold no fixed secret: nothing more to mask */
        char *again = sl_secret_mask(m);
        if (again)
            abort();
    }
    free(m);
    if (own) {
        sl_secret_remove(own);
        free(own);
    }
    free(text);
    return 0;
}
