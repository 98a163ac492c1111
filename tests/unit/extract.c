/*
 * extract — the format of a document is chosen as Dify's extractor
 * chooses it, and each format's failures read as Dify's do.
 */
#include <string.h>

#include "extract/extract.h"
#include "tap.h"

int main(void)
{
    sl_err err = {0};
    static const struct {
        const char *ext, *mime;
        sl_doc_kind want;
    } ok[] = {
        {".txt", NULL, SL_DOC_TEXT},
        {".md", "application/pdf", SL_DOC_TEXT},  /* the extension wins */
        {".html", NULL, SL_DOC_TEXT},
        {".c++", NULL, SL_DOC_TEXT},
        {".vtt", "text/vtt", SL_DOC_TEXT},        /* a .vtt file is plain text */
        {".json", NULL, SL_DOC_JSON},
        {".yml", NULL, SL_DOC_YAML},
        {".pdf", NULL, SL_DOC_PDF},
        {".docx", NULL, SL_DOC_DOCX},
        {".xls", NULL, SL_DOC_EXCEL},
        {".xlsx", NULL, SL_DOC_EXCEL},
        {".properties", NULL, SL_DOC_PROPERTIES},
        {NULL, "text/vtt", SL_DOC_VTT},           /* only the MIME type reaches it */
        {"", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         SL_DOC_DOCX},
        {NULL, "message/rfc822", SL_DOC_EML},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        sl_doc_kind k = sl_extract_kind(ok[i].ext, ok[i].mime, &err);
        CHECK(k == ok[i].want, "%s / %s is %s", ok[i].ext ? ok[i].ext : "(none)",
              ok[i].mime ? ok[i].mime : "(none)", sl_extract_kind_id(ok[i].want));
    }
    static const struct {
        const char *ext, *mime, *msg;
    } bad[] = {
        {".xyz", "application/pdf", "Unsupported Extension Type: .xyz"},
        {".PDF", NULL, "Unsupported Extension Type: .PDF"},  /* exact, as Dify */
        {NULL, "image/png", "Unsupported MIME type: image/png"},
        {NULL, NULL, "Unable to determine file type: MIME type or file extension is missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sl_doc_kind k = sl_extract_kind(bad[i].ext, bad[i].mime, &err);
        CHECK(k == SL_DOC_UNKNOWN && err.code == SL_EUNSUPPORTED && !strcmp(err.msg, bad[i].msg),
              "refused: %s", bad[i].msg);
        sl_err_clear(&err);
    }
    for (int k = SL_DOC_UNKNOWN + 1; k < SL_DOC_KINDS; k++)
        CHECK((int)sl_extract_kind_by_id(sl_extract_kind_id((sl_doc_kind)k)) == k,
              "the id %s names its format", sl_extract_kind_id((sl_doc_kind)k));
    sl_buf out;
    sl_buf_init(&out, 0);
    CHECK(sl_extract_text(SL_DOC_DOC, "x", 1, NULL, &out, &err) == -1 &&
              err.code == SL_EUNSUPPORTED &&
              !strcmp(err.msg, "Unstructured API URL is not configured for DOC file processing."),
          "a .doc is refused with Dify's message when no Unstructured API is set");
    sl_err_clear(&err);
    sl_buf_release(&out);
    return tap_done();
}
