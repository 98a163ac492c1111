/*
 * bundle — Dify app bundles: the .zip a sandboxed Dify app exports.
 *
 * A bundle holds, at its top level, `{app}.yml` (the DSL), `manifest.json`
 * and a folder `{app}/` with the app's files (skills, scripts, data).  The
 * manifest (schema 1.0, see docs/bundles.md for the fields and where they
 * come from) lists every file with the node id Dify's asset tree gives it.
 *
 * Reading happens in memory and trusts nothing in the archive: entry names
 * are checked before anything else (no absolute paths, `..`, backslashes,
 * NUL or control characters, nothing outside the three known top-level
 * names), only regular files and folders are accepted, the uncompressed
 * bytes are counted while they are decompressed (never taken from the
 * headers), and the manifest must agree with what the zip holds.  Every
 * refusal names the entry or manifest field at fault.
 *
 * Ownership: an sl_bundle owns everything it points to, including its
 * manifest value; sl_bundle_release() frees it all.  Errors follow the
 * sl_err convention (0 / -1 and a message for a user).
 */
#ifndef SL_BUNDLE_H
#define SL_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/value.h"

/* Dify's own caps: a bundle of at most 50 MB, DSL and manifest read with
 * at most 10 MB each. */
#define SL_BUNDLE_MAX_TOTAL ((size_t)50 << 20)
#define SL_BUNDLE_MAX_TEXT ((size_t)10 << 20)
#define SL_BUNDLE_MAX_ENTRIES 10000
#define SL_BUNDLE_MANIFEST "manifest.json"
#define SL_BUNDLE_SCHEMA "1.0"

typedef struct {
    size_t max_total;   /* uncompressed bytes of all entries; 0 = SL_BUNDLE_MAX_TOTAL */
    size_t max_entries; /* entries of any kind; 0 = SL_BUNDLE_MAX_ENTRIES */
} sl_bundle_limits;

typedef struct {
    char *path;          /* relative to the app folder: "skills/pdf/SKILL.md" */
    char *node_id;       /* the id manifest files[] gives it */
    unsigned char *data; /* the bytes, NUL-terminated for convenience */
    size_t len;
    bool exec;           /* any x bit in the entry's mode */
} sl_bundle_file;

typedef struct {
    char *dsl_name;        /* "{app}.yml" (manifest dsl_filename) */
    char *app_dir;         /* "{app}", the folder of files */
    char *dsl;             /* the DSL text (valid UTF-8, NUL-terminated) */
    size_t dsl_len;
    sl_value *manifest;    /* the parsed manifest.json */
    sl_bundle_file *files; /* sorted by path */
    size_t nfiles;
} sl_bundle;

/* Whether the bytes start like a zip archive (local header or the end
 * record of an empty zip).  The _path form reads the first bytes of a
 * file; false when it cannot be read. */
bool sl_bundle_is_zip(const void *data, size_t len);
bool sl_bundle_path_is_zip(const char *path);

/* Reads a whole bundle from memory into *out (zeroed first; released on
 * failure, so there is nothing to free then).  lim may be NULL. */
int sl_bundle_read(const void *zip, size_t len, const sl_bundle_limits *lim, sl_bundle *out,
                   sl_err *err);

/* Writes the bundle's files under dir, which is created (0755) or must be
 * an empty folder; sub-folders 0755, files 0644 or 0755.  Never follows a
 * symlink: each path component is opened with O_NOFOLLOW relative to its
 * parent and files are created with O_EXCL.  On failure dir may hold part
 * of the files; the caller removes it. */
int sl_bundle_extract(const sl_bundle *b, const char *dir, sl_err *err);

/* Reads the bundle file at path (at most SL_BUNDLE_MAX_TOTAL bytes) into
 * *out, as sl_bundle_read does; messages name path. */
int sl_bundle_read_file(const char *path, sl_bundle *out, sl_err *err);

/* Extracts the bundle's files (sl_bundle_extract) into a new private
 * folder under $TMPDIR (else /tmp): *dir is that folder and *files its
 * `files` folder that holds them (both heap).  The caller owns the folder
 * and removes it with sl_bundle_remove_dir(*dir).  On failure nothing is
 * left behind; origin names the bundle in messages. */
int sl_bundle_extract_tmp(const sl_bundle *b, const char *origin, char **dir, char **files,
                          sl_err *err);

/* Removes a folder of an app's files and everything in it (one made by
 * sl_bundle_extract_tmp, or one sl_bundle_extract wrote).  A symlink
 * inside is removed, never followed.  NULL does nothing. */
void sl_bundle_remove_dir(const char *dir);

/* Writes a bundle at zip_path from a DSL text and a host folder of files
 * (files_dir may be NULL for none).  app_name is sanitised the way Dify
 * does it (<>:"/\|?* and control characters become _, dots and spaces
 * trimmed, 100 characters at most, "app" when nothing is left) and names
 * `{app}.yml` and `{app}/`.  Symlinks, devices, FIFOs and sockets in
 * files_dir are refused with their path, as are names a bundle cannot
 * carry.  file_refs (may be NULL) keeps node ids stable across a
 * read/write round trip: a manifest (its app_assets.tree gives the ids of
 * files and folders) or an array of {node_id, path}; other paths get new
 * UUIDs.  The zip is written to a temporary file beside zip_path and
 * renamed over it, so readers never see half a bundle. */
int sl_bundle_write(const char *zip_path, const char *app_name, const char *dsl_text,
                    size_t dsl_len, const char *files_dir, const sl_value *file_refs,
                    sl_err *err);

void sl_bundle_release(sl_bundle *b);

#endif
