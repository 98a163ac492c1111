/*
 * tap — a tiny TAP producer for unit tests: `ok N - what` lines that
 * tests/run.sh counts.  CHECK records a failure and carries on.
 */
#ifndef SL_TAP_H
#define SL_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        tap_n++;                                                                           \
        if (cond) {                                                                        \
            printf("ok %d - ", tap_n);                                                     \
        } else {                                                                           \
            tap_failed++;                                                                  \
            printf("not ok %d - %s:%d: ", tap_n, __FILE__, __LINE__);                      \
        }                                                                                  \
        printf(__VA_ARGS__);                                                               \
        printf("\n");                                                                      \
    } while (0)

/* A check that cannot run on this machine (say, the optional shared samples
 * are not there): TAP's "ok N - what # SKIP why", which tests/run.sh counts
 * as skipped. */
#define SKIP(what, ...)                                                                    \
    do {                                                                                   \
        tap_n++;                                                                           \
        printf("ok %d - %s # SKIP ", tap_n, what);                                         \
        printf(__VA_ARGS__);                                                               \
        printf("\n");                                                                      \
    } while (0)

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
