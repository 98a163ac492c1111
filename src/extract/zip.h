/*
 * zip — the members of a zip archive held in memory (docx, xlsx, pptx,
 * and later epub and odt), read through libarchive (core/archive).
 *
 * The archive is hostile: every member read is bounded by
 * sl_extract_limits (max_member for one, max_unpacked for all read through
 * one sl_zip), counted as it decompresses, so a zip bomb stops at the
 * limit with SL_ELIMIT naming it; encrypted members are refused; at most
 * SL_ZIP_MAX_MEMBERS members are listed.  Names are only keys here ("..",
 * absolute names and the rest are never paths; nothing touches the disk).
 *
 * The sl_zip keeps a pointer to the caller's bytes, which must outlive it.
 * Errors come back through sl_err with messages that need no prefix
 * beyond the format's ("... : the zip member \"x\" is encrypted").
 */
#ifndef SL_EXTRACT_ZIP_H
#define SL_EXTRACT_ZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "extract/extract.h"

#define SL_ZIP_MAX_MEMBERS 100000

typedef struct sl_zip sl_zip;

/* True when data starts with a zip's local-file signature ("PK\3\4") or
 * an empty zip's end record. */
bool sl_zip_is_zip(const void *data, size_t len);

/* Lists the archive's members; NULL with err (SL_EPARSE for what is not a
 * readable zip, SL_ELIMIT past SL_ZIP_MAX_MEMBERS, SL_EUNSUPPORTED when
 * libarchive cannot be loaded).  lim is copied. */
sl_zip *sl_zip_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err);
void sl_zip_close(sl_zip *z);

size_t sl_zip_count(const sl_zip *z);
const char *sl_zip_name(const sl_zip *z, size_t i);
/* Whether a member has this exact name (the last of duplicates counts, as
 * Python's zipfile has it). */
bool sl_zip_has(const sl_zip *z, const char *name);

/* From now on a name is looked up with every backslash in the members'
 * names read as a slash ("word\document.xml" is "word/document.xml"), as
 * Dify rewrites Evernote's exports before its second try. */
void sl_zip_backslashes(sl_zip *z);

/* Appends the member's unpacked bytes to out (0), or -1 with err:
 * SL_ENOTFOUND when there is no such member, SL_EUNSUPPORTED when it is
 * encrypted, SL_EPARSE when it does not decompress, SL_ELIMIT when a
 * limit stopped it (out is left as it was). */
int sl_zip_read(sl_zip *z, const char *name, sl_buf *out, sl_err *err);

/* Reads, in one pass over the archive, every member `want` says yes to
 * (by its name, backslashes as slashes after sl_zip_backslashes) and
 * hands each to `got` (the buffer is reused for the next): for readers
 * that take many members, since sl_zip_read finds each one by reading the
 * archive from its start.  The same limits and errors as sl_zip_read;
 * got returns 0 or -1 (having said why in its own way).  0, or -1. */
int sl_zip_each(sl_zip *z, bool (*want)(const char *name, void *ud),
                int (*got)(const char *name, const sl_buf *data, void *ud), void *ud,
                sl_err *err);

#endif
