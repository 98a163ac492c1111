/*
 * mime — file extensions, MIME types and Dify's file kinds (mime.h).
 */
#include "mime.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static bool in_set(const char *s, const char *const *set)
{
    for (int i = 0; s && set[i]; i++)
        if (!strcasecmp(s, set[i]))
            return true;
    return false;
}

/* Extension <-> MIME type, the common part of Python's mimetypes table.
 * For a type the first row wins; for an extension, the first row too. */
static const struct {
    const char *ext, *mime;
} mime_table[] = {
    {".txt", "text/plain"}, {".html", "text/html"}, {".htm", "text/html"},
    {".csv", "text/csv"}, {".md", "text/markdown"}, {".markdown", "text/markdown"},
    {".css", "text/css"}, {".js", "text/javascript"}, {".xml", "text/xml"},
    {".xml", "application/xml"}, {".json", "application/json"}, {".pdf", "application/pdf"},
    {".zip", "application/zip"}, {".gz", "application/gzip"}, {".tar", "application/x-tar"},
    {".bin", "application/octet-stream"}, {".doc", "application/msword"},
    {".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {".xls", "application/vnd.ms-excel"},
    {".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {".ppt", "application/vnd.ms-powerpoint"},
    {".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    {".epub", "application/epub+zip"}, {".eml", "message/rfc822"},
    {".png", "image/png"}, {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"},
    {".gif", "image/gif"}, {".webp", "image/webp"}, {".svg", "image/svg+xml"},
    {".bmp", "image/bmp"}, {".ico", "image/vnd.microsoft.icon"}, {".tiff", "image/tiff"},
    {".tif", "image/tiff"}, {".mp3", "audio/mpeg"}, {".mpga", "audio/mpeg"},
    {".m4a", "audio/mp4"}, {".wav", "audio/x-wav"}, {".wav", "audio/wav"},
    {".ogg", "audio/ogg"}, {".amr", "audio/amr"}, {".mp4", "video/mp4"},
    {".mov", "video/quicktime"}, {".mpeg", "video/mpeg"}, {".webm", "video/webm"},
};

const char *sl_file_ext(const char *name)
{
    const char *dot = name ? strrchr(name, '.') : NULL;
    return dot && dot != name && dot[1] ? dot : NULL;
}

const char *sl_mime_for_ext(const char *ext)
{
    for (size_t i = 0; ext && i < sizeof mime_table / sizeof mime_table[0]; i++)
        if (!strcasecmp(mime_table[i].ext, ext))
            return mime_table[i].mime;
    return NULL;
}

const char *sl_mime_ext_for(const char *mime)
{
    for (size_t i = 0; mime && i < sizeof mime_table / sizeof mime_table[0]; i++)
        if (!strcasecmp(mime_table[i].mime, mime))
            return mime_table[i].ext;
    return NULL;
}

/* Dify's FileType: by extension first, then by MIME type. */
const char *sl_file_kind(const char *ext, const char *mime)
{
    static const char *const image[] = {"jpg", "jpeg", "png", "webp", "gif", "svg", NULL};
    static const char *const doc[] = {"txt", "markdown", "md", "mdx", "pdf", "html", "htm",
                                      "xlsx", "xls", "vtt", "properties", "doc", "docx", "csv",
                                      "eml", "msg", "pptx", "xml", "epub", "ppt", NULL};
    static const char *const audio[] = {"mp3", "m4a", "wav", "amr", "mpga", NULL};
    static const char *const video[] = {"mp4", "mov", "mpeg", "webm", NULL};
    const char *e = ext && *ext == '.' ? ext + 1 : ext;
    if (in_set(e, image))
        return "image";
    if (in_set(e, doc))
        return "document";
    if (in_set(e, audio))
        return "audio";
    if (in_set(e, video))
        return "video";
    if (!mime)
        return "custom";
    if (!strncmp(mime, "image/", 6))
        return "image";
    if (!strncmp(mime, "video/", 6))
        return "video";
    if (!strncmp(mime, "audio/", 6))
        return "audio";
    if (strstr(mime, "text") || strstr(mime, "pdf"))
        return "document";
    return "custom";
}

