/*
 * mime — what sluice calls a file: its extension, MIME type and Dify
 * FileType ("image", "document", "audio", "video", "custom").  One table
 * (the common part of Python's mimetypes, which Dify uses) for every
 * node and command that names files.  All strings are static.
 */
#ifndef SL_MIME_H
#define SL_MIME_H

/* ".png" for "chart.png"; NULL when the name has no extension. */
const char *sl_file_ext(const char *name);
/* "image/png" for ".png" (any case); NULL when unknown. */
const char *sl_mime_for_ext(const char *ext);
/* ".png" for "image/png"; NULL when unknown. */
const char *sl_mime_ext_for(const char *mime);
/* Dify's FileType: by extension (with or without the dot) first, then by
 * MIME type (never NULL: "custom" at worst). */
const char *sl_file_kind(const char *ext, const char *mime);

#endif
