/*
 * mime — file extensions, MIME types and Dify's file kinds (mime.h).
 */
#include "core/mime.h"

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
    {".ogg", "audio/ogg"}, {".flac", "audio/flac"}, {".amr", "audio/amr"},
    {".mp4", "video/mp4"},
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


/* ---- sniffing ---- */

static bool starts(const unsigned char *h, size_t n, size_t at, const char *magic, size_t m)
{
    return n >= at + m && !memcmp(h + at, magic, m);
}

/* Markup a browser would run, after a BOM and white space: the HTML
 * openings browsers sniff (WHATWG MIME Sniffing, "HTML"), SVG, XML. */
static const char *sniff_markup(const unsigned char *h, size_t n)
{
    size_t i = starts(h, n, 0, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r' || h[i] == '\f'))
        i++;
    if (i >= n || h[i] != '<')
        return NULL;
    static const char *const html[] = {"!doctype html", "html", "head", "script", "iframe", "h1",
                                       "div", "font", "table", "a", "style", "title", "b",
                                       "body", "br", "p", "!--", NULL};
    for (int k = 0; html[k]; k++) {
        size_t m = strlen(html[k]);
        if (i + 1 + m < n && !strncasecmp((const char *)h + i + 1, html[k], m) &&
            (h[i + 1 + m] == ' ' || h[i + 1 + m] == '>' || !strcmp(html[k], "!--")))
            return "text/html";
    }
    if (n - i > 4 && !strncasecmp((const char *)h + i, "<svg", 4))
        return "image/svg+xml";
    if (n - i > 5 && !strncmp((const char *)h + i, "<?xml", 5)) {
        for (size_t j = i; j + 4 <= n; j++)
            if (!strncasecmp((const char *)h + j, "<svg", 4))
                return "image/svg+xml";
        return "text/xml";
    }
    return NULL;
}

const char *sl_mime_sniff(const void *head, size_t n)
{
    const unsigned char *h = head;
    if (n > 512)
        n = 512;
    if (starts(h, n, 0, "\x89PNG\r\n\x1a\n", 8))
        return "image/png";
    if (starts(h, n, 0, "\xFF\xD8\xFF", 3))
        return "image/jpeg";
    if (starts(h, n, 0, "GIF87a", 6) || starts(h, n, 0, "GIF89a", 6))
        return "image/gif";
    if (starts(h, n, 0, "RIFF", 4) && starts(h, n, 8, "WEBP", 4))
        return "image/webp";
    if (starts(h, n, 0, "RIFF", 4) && starts(h, n, 8, "WAVE", 4))
        return "audio/wav";
    if (starts(h, n, 0, "%PDF-", 5))
        return "application/pdf";
    if (starts(h, n, 0, "PK\x03\x04", 4))
        return "application/zip";
    if (starts(h, n, 0, "\x1F\x8B", 2))
        return "application/gzip";
    if (starts(h, n, 0, "ID3", 3) ||
        (n >= 2 && h[0] == 0xFF && (h[1] == 0xFB || h[1] == 0xF3 || h[1] == 0xF2)))
        return "audio/mpeg";
    if (starts(h, n, 0, "OggS", 4))
        return "audio/ogg";
    if (starts(h, n, 0, "fLaC", 4))
        return "audio/flac";
    if (starts(h, n, 4, "ftyp", 4))
        return starts(h, n, 8, "qt  ", 4) ? "video/quicktime"
               : starts(h, n, 8, "M4A ", 4) ? "audio/mp4"
                                            : "video/mp4";
    if (starts(h, n, 0, "\x1A\x45\xDF\xA3", 4))
        return "video/webm";
    return sniff_markup(h, n);
}

const char *sl_mime_of_file(const char *name, const void *head, size_t n)
{
    const char *by_ext = sl_mime_for_ext(sl_file_ext(name));
    const char *sniffed = sl_mime_sniff(head, n);
    /* Office files and EPUB are ZIPs: their extension says which */
    static const char *const zips[] = {".docx", ".xlsx", ".pptx", ".epub", NULL};
    if (sniffed && !strcmp(sniffed, "application/zip") && in_set(sl_file_ext(name), zips))
        return by_ext;
    if (sniffed)
        return sniffed;
    return by_ext ? by_ext : "application/octet-stream";
}

bool sl_mime_inline_safe(const char *mime)
{
    static const char *const safe[] = {
        "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp",
        "image/vnd.microsoft.icon", "image/tiff", "application/pdf", "text/plain", "text/csv",
        "text/markdown", "application/json", NULL};
    if (!mime)
        return false;
    if (in_set(mime, safe))
        return true;
    return !strncasecmp(mime, "audio/", 6) || !strncasecmp(mime, "video/", 6);
}
