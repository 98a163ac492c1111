/*
 * mime — the type an upload is kept as (its bytes first, then its name,
 * never the client's claim) and which types may be shown inline.
 */
#include <string.h>

#include "core/mime.h"
#include "tap.h"

static const struct {
    const char *name, *bytes;
    size_t n;
    const char *want;
} files[] = {
    {"a.png", "\x89PNG\r\n\x1a\n\0\0", 10, "image/png"},
    {"a.txt", "\x89PNG\r\n\x1a\n\0\0", 10, "image/png"},
    {"a.jpg", "\xFF\xD8\xFF\xE0", 4, "image/jpeg"},
    {"a", "GIF89a....", 10, "image/gif"},
    {"a.bin", "RIFF\0\0\0\0WEBPVP8 ", 16, "image/webp"},
    {"a.bin", "RIFF\0\0\0\0WAVEfmt ", 16, "audio/wav"},
    {"a.pdf", "%PDF-1.7\n", 9, "application/pdf"},
    {"a.zip", "PK\x03\x04", 4, "application/zip"},
    {"report.docx", "PK\x03\x04", 4,
     "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {"a.mp3", "ID3\x04", 4, "audio/mpeg"},
    {"a", "\0\0\0\x18" "ftypisom", 12, "video/mp4"},
    {"a", "\0\0\0\x14" "ftypqt  ", 12, "video/quicktime"},
    {"a", "\x1A\x45\xDF\xA3", 4, "video/webm"},
    {"a.txt", "  <!DOCTYPE html><p>", 20, "text/html"},
    {"a.txt", "\xEF\xBB\xBF<script>alert(1)</script>", 28, "text/html"},
    {"a.png", "<svg xmlns='http://www.w3.org/2000/svg'/>", 41, "image/svg+xml"},
    {"a.xml", "<?xml version='1.0'?><svg/>", 27, "image/svg+xml"},
    {"a.xml", "<?xml version='1.0'?><doc/>", 27, "text/xml"},
    {"a.txt", "<bold> is not a tag browsers sniff", 34, "text/plain"},
    {"a.txt", "hello", 5, "text/plain"},
    {"a.js", "alert(1)", 8, "text/javascript"},
    {"a.html", "hello", 5, "text/html"},
    {"noext", "hello", 5, "application/octet-stream"},
    {"a.weird", "", 0, "application/octet-stream"},
};

int main(void)
{
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const char *got = sl_mime_of_file(files[i].name, files[i].bytes, files[i].n);
        CHECK(!strcmp(got, files[i].want), "%s with %zu bytes is kept as %s (got %s)",
              files[i].name, files[i].n, files[i].want, got);
    }
    static const char *const inline_ok[] = {"image/png", "image/jpeg", "application/pdf",
                                            "text/plain", "audio/mpeg", "video/mp4",
                                            "application/json", NULL};
    static const char *const attach[] = {"text/html", "image/svg+xml", "text/xml",
                                         "application/xml", "text/javascript",
                                         "application/octet-stream", "application/xhtml+xml",
                                         "", NULL};
    for (int i = 0; inline_ok[i]; i++)
        CHECK(sl_mime_inline_safe(inline_ok[i]), "%s may be shown inline", inline_ok[i]);
    for (int i = 0; attach[i]; i++)
        CHECK(!sl_mime_inline_safe(attach[i]), "'%s' is served as an attachment", attach[i]);
    CHECK(!sl_mime_inline_safe(NULL), "no type is served as an attachment");
    return tap_done();
}
