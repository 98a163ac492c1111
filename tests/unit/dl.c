/*
 * dl — loading a library on first use: the first soname that loads wins,
 * every symbol is resolved, failures name the library or symbol and the
 * package, the first result is kept, and concurrent first calls agree.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/dl.h"
#include "tap.h"

static double (*p_cos)(double);
static double (*p_sqrt)(double);
static const char *const m_names[] = {"libsluice-no-such.so.0", "libm.so.6", NULL};
static const sl_dl_sym m_syms[] = {{"cos", (void **)&p_cos}, {"sqrt", (void **)&p_sqrt}, {NULL, NULL}};
static sl_dl_lib m_lib = {.what = "libm", .sonames = m_names, .package = "libc6", .syms = m_syms};

static void *p_missing_fn;
static const char *const missing_names[] = {"libsluice-no-such.so.0", "libsluice-no-such.so", NULL};
static const sl_dl_sym missing_syms[] = {{"x", &p_missing_fn}, {NULL, NULL}};
static sl_dl_lib missing_lib = {.what = "libnosuch", .sonames = missing_names,
                               .package = "libnosuch1", .syms = missing_syms};

static void *p_cos2, *p_nosym;
static const char *const m2_names[] = {"libm.so.6", NULL};
static const sl_dl_sym nosym_syms[] = {
    {"cos", &p_cos2}, {"sluice_no_such_symbol", &p_nosym}, {NULL, NULL}};
static sl_dl_lib nosym_lib = {.what = "libm", .sonames = m2_names, .package = "libc6", .syms = nosym_syms};

static double (*p_sin)(double);
static const sl_dl_sym race_syms[] = {{"sin", (void **)&p_sin}, {NULL, NULL}};
static sl_dl_lib race_lib = {.what = "libm", .sonames = m2_names, .package = "libc6", .syms = race_syms};

static void *racer(void *arg)
{
    (void)arg;
    sl_err e = {0};
    int rc = sl_dl_load(&race_lib, &e);
    /* a thread that returns 0 must see the filled slot */
    int ok = rc == 0 && p_sin && p_sin(0.0) == 0.0;
    sl_err_clear(&e);
    return ok ? (void *)1 : NULL;
}

int main(void)
{
    sl_err e = {0};
    CHECK(sl_dl_load(&m_lib, &e) == 0 && e.code == SL_OK, "loads the first soname that exists");
    CHECK(p_cos && p_cos(0.0) == 1.0 && p_sqrt && p_sqrt(16.0) == 4.0, "every symbol is resolved");
    double (*first)(double) = p_cos;
    CHECK(sl_dl_load(&m_lib, NULL) == 0 && p_cos == first, "a second call returns the first result");

    CHECK(sl_dl_load(&missing_lib, &e) == -1 && e.code == SL_EUNSUPPORTED, "a missing library fails");
    CHECK(e.msg && strstr(e.msg, "libnosuch is not installed") && strstr(e.msg, "apt-get install libnosuch1"),
          "the error names the library and the package: %s", e.msg ? e.msg : "(none)");
    CHECK(!p_missing_fn, "no slot is filled when the library is missing");
    sl_err_clear(&e);
    CHECK(sl_dl_load(&missing_lib, &e) == -1 && e.msg && strstr(e.msg, "libnosuch1"),
          "a later call returns the same failure");
    sl_err_clear(&e);

    CHECK(sl_dl_load(&nosym_lib, &e) == -1 && e.code == SL_EUNSUPPORTED, "a missing symbol fails");
    CHECK(e.msg && strstr(e.msg, "has no sluice_no_such_symbol") && strstr(e.msg, "libc6"),
          "the error names the symbol and the package: %s", e.msg ? e.msg : "(none)");
    CHECK(!p_cos2 && !p_nosym, "on a missing symbol every slot is left NULL");
    sl_err_clear(&e);
    CHECK(sl_dl_load(&missing_lib, NULL) == -1, "a NULL err is allowed");

    enum { N = 8 };
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, racer, NULL);
    int good = 0;
    for (int i = 0; i < N; i++) {
        void *r;
        pthread_join(t[i], &r);
        good += r != NULL;
    }
    CHECK(good == N, "concurrent first calls all see the loaded library (%d of %d)", good, N);
    return tap_done();
}
