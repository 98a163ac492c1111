/*
 * dl — loading a shared library on first use (see dl.h).
 *
 * One lock serves every library: loads are rare (a handful per process)
 * and a load is the slow part anyway.  The state is published with
 * release/acquire, so a caller that sees "loaded" also sees the slots.
 */
#include "core/dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { NOT_TRIED, LOADED, FAILED };

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static void clear_slots(const sl_dl_lib *lib)
{
    for (const sl_dl_sym *s = lib->syms; s->name; s++)
        *s->slot = NULL;
}

/* Tries each name; a failure names the last dlerror(), which says why the
 * library (or one it needs) could not be loaded. */
static int try_load(sl_dl_lib *lib)
{
    void *h = NULL;
    const char *last = "no file name to try";
    for (const char *const *n = lib->sonames; *n && !h; n++) {
        h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            last = e ? e : *n;
        }
    }
    if (!h) {
        snprintf(lib->why_, sizeof lib->why_, "%s is not installed (apt-get install %s): %s",
                 lib->what, lib->package, last);
        return -1;
    }
    for (const sl_dl_sym *s = lib->syms; s->name; s++) {
        dlerror();
        *s->slot = dlsym(h, s->name);
        if (!*s->slot) {
            snprintf(lib->why_, sizeof lib->why_,
                     "%s has no %s: the installed version is too old (apt-get install %s)",
                     lib->what, s->name, lib->package);
            clear_slots(lib);
            dlclose(h);
            return -1;
        }
    }
    return 0;
}

int sl_dl_load(sl_dl_lib *lib, sl_err *err)
{
    int st = __atomic_load_n(&lib->state_, __ATOMIC_ACQUIRE);
    if (st == NOT_TRIED) {
        pthread_mutex_lock(&dl_lock);
        st = __atomic_load_n(&lib->state_, __ATOMIC_ACQUIRE);
        if (st == NOT_TRIED) {
            lib->code_ = SL_EUNSUPPORTED;
            st = try_load(lib) ? FAILED : LOADED;
            __atomic_store_n(&lib->state_, st, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&dl_lock);
    }
    if (st == LOADED)
        return 0;
    return sl_err_set(err, lib->code_, "%s", lib->why_);
}
