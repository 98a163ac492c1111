/*
 * file — the Dify file value: the JSON object a workflow passes around for a
 * file (an upload, a node's output, a remote URL), as Dify shapes it:
 *
 *   {"dify_model_identity": "__dify__file__", "id", "type",
 *    "transfer_method", "remote_url", "related_id", "filename", "extension",
 *    "mime_type", "size"[, "sha256"][, "url"]}
 *
 * in that order (clients and tests compare the JSON as text).  The value
 * names no path: the bytes are found by id in the run's or the store's
 * table.  sl_value_is_file (core/value.h) tells a file value from others.
 */
#ifndef SL_FILE_H
#define SL_FILE_H

#include "core/value.h"

/* The fields of a new file value; strings are copied.  NULL writes JSON
 * null, except sha256 and url, which are left out when NULL. */
typedef struct {
    const char *id;
    const char *type;             /* image, document, audio, video, custom */
    const char *transfer_method;  /* local_file, tool_file, remote_url */
    const char *remote_url;
    const char *related_id;
    const char *filename;
    const char *extension;
    const char *mime_type;
    long long size;               /* bytes; -1: not known */
    const char *sha256;
    const char *url;
} sl_file;

/* A new file value (new reference); NULL when a string is not UTF-8 (as
 * json_pack would). */
sl_value *sl_file_new(const sl_file *f);

#endif
