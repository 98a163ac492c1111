/*
 * mime — what sluice calls a file: its extension, MIME type and Dify
 * FileType ("image", "document", "audio", "video", "custom").  One table
 * (the common part of Python's mimetypes, which Dify uses) for every
 * node and command that names files; the type a file's first bytes show;
 * and which types a browser may be shown inline.  All strings are static.
 */
#ifndef SL_MIME_H
#define SL_MIME_H

#include <stdbool.h>
#include <stddef.h>

/* ".png" for "chart.png"; NULL when the name has no extension. */
const char *sl_file_ext(const char *name);
/* "image/png" for ".png" (any case); NULL when unknown. */
const char *sl_mime_for_ext(const char *ext);
/* ".png" for "image/png"; NULL when unknown. */
const char *sl_mime_ext_for(const char *mime);
/* Dify's FileType: by extension (with or without the dot) first, then by
 * MIME type (never NULL: "custom" at worst). */
const char *sl_file_kind(const char *ext, const char *mime);

/* The type a file's first bytes show (up to 512 are looked at): PNG, JPEG,
 * GIF, WebP, PDF, ZIP, gzip, MP3, WAV, Ogg, FLAC, MP4/MOV/M4A, WebM, and
 * markup a browser would run (HTML, SVG, XML); NULL when they show none. */
const char *sl_mime_sniff(const void *head, size_t n);
/* The type to keep for an uploaded file named `name` whose first bytes
 * are `head`: what the bytes show (a ZIP stays the Office or EPUB type its
 * extension names), else the type of its extension, else
 * application/octet-stream.  What a client claims is never used. */
const char *sl_mime_of_file(const char *name, const void *head, size_t n);
/* True for types a browser shows without running anything in them:
 * raster images, audio, video, PDF, plain text, CSV, Markdown, JSON.
 * Anything else (HTML, SVG, XML, JavaScript, unknown types) is served
 * as an attachment. */
bool sl_mime_inline_safe(const char *mime);

#endif
