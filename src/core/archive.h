/*
 * archive — libarchive, loaded on first use (core/dl), for every module
 * that reads or writes a zip (dsl/bundle, extract/zip).
 *
 * libarchive and what it pulls in (libxml2, ICU, libstdc++, the
 * compressors) are about 2 MB of resident memory that every sluice process
 * would otherwise carry, a long-running server included, for the few that
 * touch an archive.  One table of function pointers serves all its users;
 * after this header the libarchive names used by sluice (archive_read_new,
 * ...) are macros for the table's slots, so the calling code reads as
 * plain libarchive code.  Call sl_archive_load, once per API entry, before
 * any of them: until it has returned 0 the slots are NULL.
 */
#ifndef SL_ARCHIVE_H
#define SL_ARCHIVE_H

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include "core/err.h"

/* The union of what sluice's modules call. */
#define SL_ARCHIVE_FNS(X)                                                                       \
    X(archive_entry_filetype) X(archive_entry_free) X(archive_entry_hardlink)                  \
    X(archive_entry_is_encrypted) X(archive_entry_mode) X(archive_entry_new)                   \
    X(archive_entry_pathname) X(archive_entry_pathname_utf8) X(archive_entry_perm)             \
    X(archive_entry_set_filetype) X(archive_entry_set_mtime) X(archive_entry_set_pathname_utf8) \
    X(archive_entry_set_perm) X(archive_entry_set_size) X(archive_entry_size)                  \
    X(archive_entry_size_is_set) X(archive_entry_symlink) X(archive_error_string)              \
    X(archive_read_data) X(archive_read_free) X(archive_read_new) X(archive_read_next_header)   \
    X(archive_read_open_memory) X(archive_read_support_format_zip) X(archive_write_close)       \
    X(archive_write_data) X(archive_write_free) X(archive_write_header) X(archive_write_new)   \
    X(archive_write_open_fd) X(archive_write_set_format_zip) X(archive_write_set_options)

#define SL_ARCHIVE_SLOT(f) __typeof__(&f) f;
typedef struct {
    SL_ARCHIVE_FNS(SL_ARCHIVE_SLOT)
} sl_archive_api;
#undef SL_ARCHIVE_SLOT

extern sl_archive_api sl_archive;

/* Loads libarchive and fills sl_archive, once per process (thread safe);
 * -1 with err (SL_EUNSUPPORTED, naming the package to install). */
int sl_archive_load(sl_err *err);

/* libarchive converts names through the locale's charset; under the C
 * locale a UTF-8 name does not convert and comes back NULL.  The thread's
 * locale (uselocale, not setlocale) is switched to C.UTF-8 while an
 * archive is open, which leaves other threads alone. */
typedef struct {
    locale_t loc, old;
} sl_archive_utf8;

void sl_archive_utf8_enter(sl_archive_utf8 *u);
void sl_archive_utf8_leave(sl_archive_utf8 *u);

/* archive.c fills the table by name and so goes without the macros. */
#ifndef SL_ARCHIVE_NO_MACROS
#define archive_entry_filetype sl_archive.archive_entry_filetype
#define archive_entry_free sl_archive.archive_entry_free
#define archive_entry_hardlink sl_archive.archive_entry_hardlink
#define archive_entry_is_encrypted sl_archive.archive_entry_is_encrypted
#define archive_entry_mode sl_archive.archive_entry_mode
#define archive_entry_new sl_archive.archive_entry_new
#define archive_entry_pathname sl_archive.archive_entry_pathname
#define archive_entry_pathname_utf8 sl_archive.archive_entry_pathname_utf8
#define archive_entry_perm sl_archive.archive_entry_perm
#define archive_entry_set_filetype sl_archive.archive_entry_set_filetype
#define archive_entry_set_mtime sl_archive.archive_entry_set_mtime
#define archive_entry_set_pathname_utf8 sl_archive.archive_entry_set_pathname_utf8
#define archive_entry_set_perm sl_archive.archive_entry_set_perm
#define archive_entry_set_size sl_archive.archive_entry_set_size
#define archive_entry_size sl_archive.archive_entry_size
#define archive_entry_size_is_set sl_archive.archive_entry_size_is_set
#define archive_entry_symlink sl_archive.archive_entry_symlink
#define archive_error_string sl_archive.archive_error_string
#define archive_read_data sl_archive.archive_read_data
#define archive_read_free sl_archive.archive_read_free
#define archive_read_new sl_archive.archive_read_new
#define archive_read_next_header sl_archive.archive_read_next_header
#define archive_read_open_memory sl_archive.archive_read_open_memory
#define archive_read_support_format_zip sl_archive.archive_read_support_format_zip
#define archive_write_close sl_archive.archive_write_close
#define archive_write_data sl_archive.archive_write_data
#define archive_write_free sl_archive.archive_write_free
#define archive_write_header sl_archive.archive_write_header
#define archive_write_new sl_archive.archive_write_new
#define archive_write_open_fd sl_archive.archive_write_open_fd
#define archive_write_set_format_zip sl_archive.archive_write_set_format_zip
#define archive_write_set_options sl_archive.archive_write_set_options
#endif

#endif
