/*
 * console — the web console's files (src/server/console/), as `sluice
 * serve` answers them at `/` and `/NAME`.
 *
 * The files are compiled into the binary (the Makefile turns the folder
 * into sl_console_assets), so a server needs nothing beside it.  A
 * developer can serve a folder instead (--console-dir), read again at each
 * request so an edit shows on reload.  Names are flat: one path segment of
 * letters, digits, '.', '-' and '_', not starting with '.'; anything else
 * is not a console file, so a request can never name a file outside the
 * folder.  Every answer carries the console's security headers
 * (sl_console_headers: a CSP with no inline script, no framing, nosniff);
 * docs/console.md states the model.
 */
#ifndef SL_SERVER_CONSOLE_H
#define SL_SERVER_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *name;
    const unsigned char *data;
    size_t len;
} sl_console_asset;

/* Generated from src/server/console/ (build/gen/console_assets.c); ends
 * with an entry whose name is NULL. */
extern const sl_console_asset sl_console_assets[];

/* One file to answer with.  data is the built-in bytes, or (from a folder)
 * heap bytes the caller frees with sl_console_file_release. */
typedef struct {
    const char *type;   /* Content-Type */
    char etag[24];      /* a quoted hash of the bytes */
    const unsigned char *data;
    size_t len;
    bool owned;
} sl_console_file;

/* The console file url ("/" or "/NAME") names: 0 with f holding it;
 * nonzero when there is none (-1: not even a console file's shape).
 * dir: serve from this folder instead of the built-in files (NULL: built
 * in). */
int sl_console_get(const char *url, const char *dir, sl_console_file *f);
void sl_console_file_release(sl_console_file *f);

/* The security headers every console answer carries, as name/value
 * pairs, ending with a NULL name. */
extern const char *const sl_console_headers[][2];

/* Total bytes of the built-in files (the 200 KB budget). */
size_t sl_console_size(void);

#endif
