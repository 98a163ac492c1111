/*
 * dl — loading a shared library on first use (dlopen), not at process start.
 *
 * Most sluice commands never touch the network, a store or a sandbox over
 * SSH, yet linking libcurl, libssh or libmicrohttpd maps them and their
 * dependency chains (TLS, Kerberos, LDAP, ...) into every process, which is
 * most of what `sluice --help` spends.  A module that uses such a library
 * describes it in a static sl_dl_lib, keeps a struct of function pointers
 * that the symbols fill, and calls sl_dl_load at its API boundary (first
 * request, store open, serve start), never at process start.
 *
 *     static void *p_archive_read_new;
 *     static const char *const archive_names[] = {"libarchive.so.13", NULL};
 *     static const sl_dl_sym archive_syms[] = {
 *         {"archive_read_new", (void **)&p_archive_read_new}, {NULL, NULL}};
 *     static sl_dl_lib archive_lib = {.what = "libarchive", .sonames = archive_names,
 *                                     .package = "libarchive13", .syms = archive_syms};
 *     ...
 *     if (sl_dl_load(&archive_lib, err)) return -1;
 *
 * (Designated initializers, as above, leave the private fields zero without
 * a -Wmissing-field-initializers warning.)  The library stays loaded for the life of the process; the sl_dl_lib, its
 * names and the slots must be static (they are written once and read by
 * every later call).
 */
#ifndef SL_DL_H
#define SL_DL_H

#include "core/err.h"

typedef struct {
    const char *name; /* the symbol's name */
    void **slot;      /* where its address is stored */
} sl_dl_sym;

typedef struct sl_dl_lib {
    const char *what;           /* "libcurl" — named in errors */
    const char *const *sonames; /* NULL-terminated, tried in order: "libcurl.so.4", ... */
    const char *package;        /* the Debian package that provides it, named in errors */
    const sl_dl_sym *syms;      /* terminated by {NULL, NULL} */
    /* private: load state, written once under dl.c's lock */
    int state_;                 /* 0 not tried, 1 loaded, 2 failed (read atomically) */
    sl_errcode code_;           /* on failure */
    char why_[320];             /* on failure: the message every call returns */
} sl_dl_lib;

/* Opens the library (the first soname that loads) and resolves every
 * symbol, once per process; later calls return the first result.  Thread
 * safe.  On failure returns -1, leaves every slot NULL and fills err with
 * SL_EUNSUPPORTED and which library or symbol is missing and which package
 * to install. */
int sl_dl_load(sl_dl_lib *lib, sl_err *err);

#endif
