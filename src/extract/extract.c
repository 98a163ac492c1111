#include "extract/extract.h"

#include <string.h>

#include "extract/extract_int.h"
#include "extract/pdftext.h"

/* Dify's plain-text extensions (graphon _EXTENSION_PLAIN_TEXT_TYPES):
 * returned as decoded, tags kept.  ".vtt" is among them: a WebVTT file
 * with its extension is plain text; the speaker-merging reader is for the
 * text/vtt MIME type alone. */
static const char *const plain_ext[] = {
    ".txt", ".markdown", ".md", ".mdx", ".html", ".htm", ".xml", ".c", ".h", ".cpp",
    ".hpp", ".cc", ".cxx", ".c++", ".py", ".js", ".ts", ".jsx", ".tsx", ".java",
    ".php", ".rb", ".go", ".rs", ".swift", ".kt", ".scala", ".sh", ".bash", ".bat",
    ".ps1", ".sql", ".r", ".m", ".pl", ".lua", ".vim", ".asm", ".s", ".css",
    ".scss", ".less", ".sass", ".ini", ".cfg", ".conf", ".toml", ".env", ".log", ".vtt",
};

static const struct {
    const char *ext;
    sl_doc_kind kind;
} by_ext[] = {
    {".json", SL_DOC_JSON},   {".yaml", SL_DOC_YAML},   {".yml", SL_DOC_YAML},
    {".pdf", SL_DOC_PDF},     {".doc", SL_DOC_DOC},     {".docx", SL_DOC_DOCX},
    {".csv", SL_DOC_CSV},     {".xls", SL_DOC_EXCEL},   {".xlsx", SL_DOC_EXCEL},
    {".ppt", SL_DOC_PPT},     {".pptx", SL_DOC_PPTX},   {".epub", SL_DOC_EPUB},
    {".odt", SL_DOC_ODT},     {".eml", SL_DOC_EML},     {".msg", SL_DOC_MSG},
    {".properties", SL_DOC_PROPERTIES},
};

static const struct {
    const char *mime;
    sl_doc_kind kind;
} by_mime[] = {
    {"text/plain", SL_DOC_TEXT},
    {"text/html", SL_DOC_TEXT},
    {"text/htm", SL_DOC_TEXT},
    {"text/markdown", SL_DOC_TEXT},
    {"text/xml", SL_DOC_TEXT},
    {"application/json", SL_DOC_JSON},
    {"application/x-yaml", SL_DOC_YAML},
    {"text/yaml", SL_DOC_YAML},
    {"application/pdf", SL_DOC_PDF},
    {"application/msword", SL_DOC_DOC},
    {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", SL_DOC_DOCX},
    {"text/csv", SL_DOC_CSV},
    {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", SL_DOC_EXCEL},
    {"application/vnd.ms-excel", SL_DOC_EXCEL},
    {"application/vnd.ms-powerpoint", SL_DOC_PPT},
    {"application/vnd.openxmlformats-officedocument.presentationml.presentation", SL_DOC_PPTX},
    {"application/epub+zip", SL_DOC_EPUB},
    {"application/vnd.oasis.opendocument.text", SL_DOC_ODT},
    {"message/rfc822", SL_DOC_EML},
    {"application/vnd.ms-outlook", SL_DOC_MSG},
    {"text/vtt", SL_DOC_VTT},
    {"text/properties", SL_DOC_PROPERTIES},
};

/* Each format: its id, its name, the start of Dify's message when its
 * reader fails (NULL: the reader's message alone), and its reader (NULL:
 * refused, with why). */
static const struct {
    const char *id, *name, *fail;
    sl_extract_fn read;
    const char *refused;
} kinds[SL_DOC_KINDS] = {
    [SL_DOC_UNKNOWN] = {"unknown", "unknown", NULL, NULL, "the file's type is not known"},
    [SL_DOC_TEXT] = {"text", "plain text", "Failed to decode plain text file",
                     sl_extract_plain, NULL},
    [SL_DOC_JSON] = {"json", "JSON", "Failed to decode or parse JSON file",
                     sl_extract_json, NULL},
    [SL_DOC_YAML] = {"yaml", "YAML", "Failed to decode or parse YAML file",
                     sl_extract_yaml, NULL},
    /* sluice's own reader; sl_extract_isolated gives pdftotext, in a
     * sandbox, what it declines */
    [SL_DOC_PDF] = {"pdf", "PDF", "Failed to extract text from PDF", sl_pdf_text, NULL},
    /* Dify reads .doc and .ppt only through its Unstructured API service,
     * and fails with this when none is configured; sluice has none. */
    [SL_DOC_DOC] = {"doc", "DOC", "Failed to extract text from DOC", NULL,
                    "Unstructured API URL is not configured for DOC file processing."},
    [SL_DOC_DOCX] = {"docx", "DOCX", "Failed to extract text from DOCX", sl_extract_docx, NULL},
    [SL_DOC_CSV] = {"csv", "CSV", "Failed to extract text from CSV", sl_extract_csv,
                    NULL},
    [SL_DOC_EXCEL] = {"excel", "Excel", "Failed to extract text from Excel file",
                      sl_extract_xlsx, NULL},
    [SL_DOC_PPT] = {"ppt", "PPT", "Failed to extract text from PPT", NULL,
                    "Failed to extract text from PPT: Dify reads legacy .ppt files through its "
                    "Unstructured API service or LibreOffice, neither of which sluice uses; save "
                    "the file as .pptx"},
    [SL_DOC_PPTX] = {"pptx", "PPTX", "Failed to extract text from PPTX", sl_extract_pptx, NULL},
    [SL_DOC_EPUB] = {"epub", "EPUB", "Failed to extract text from EPUB", sl_extract_epub, NULL},
    [SL_DOC_ODT] = {"odt", "ODT", "Failed to extract text from ODT", sl_extract_odt, NULL},
    [SL_DOC_EML] = {"eml", "EML", "Failed to extract text from EML", sl_extract_eml, NULL},
    [SL_DOC_MSG] = {"msg", "MSG", "Failed to extract text from MSG", sl_extract_msg, NULL},
    [SL_DOC_VTT] = {"vtt", "VTT", NULL, sl_extract_vtt, NULL},
    [SL_DOC_PROPERTIES] = {"properties", "properties", "Failed to extract text from properties file",
                           sl_extract_properties, NULL},
};

void sl_extract_limits_default(sl_extract_limits *lim)
{
    lim->max_output = (size_t)64 << 20;
    lim->max_member = (size_t)256 << 20;
    lim->max_unpacked = (size_t)512 << 20;
    lim->max_xml_depth = 256;
    lim->max_xml_nodes = 20u * 1000 * 1000;
}

sl_doc_kind sl_extract_kind(const char *extension, const char *mime, sl_err *err)
{
    if (extension && *extension) {
        for (size_t i = 0; i < sizeof plain_ext / sizeof *plain_ext; i++)
            if (!strcmp(extension, plain_ext[i]))
                return SL_DOC_TEXT;
        for (size_t i = 0; i < sizeof by_ext / sizeof *by_ext; i++)
            if (!strcmp(extension, by_ext[i].ext))
                return by_ext[i].kind;
        sl_err_set(err, SL_EUNSUPPORTED, "Unsupported Extension Type: %s", extension);
        return SL_DOC_UNKNOWN;
    }
    if (mime && *mime) {
        for (size_t i = 0; i < sizeof by_mime / sizeof *by_mime; i++)
            if (!strcmp(mime, by_mime[i].mime))
                return by_mime[i].kind;
        sl_err_set(err, SL_EUNSUPPORTED, "Unsupported MIME type: %s", mime);
        return SL_DOC_UNKNOWN;
    }
    sl_err_set(err, SL_EUNSUPPORTED,
               "Unable to determine file type: MIME type or file extension is missing");
    return SL_DOC_UNKNOWN;
}

const char *sl_extract_kind_name(sl_doc_kind kind)
{
    return kind > SL_DOC_UNKNOWN && kind < SL_DOC_KINDS ? kinds[kind].name : "unknown";
}

const char *sl_extract_kind_id(sl_doc_kind kind)
{
    return kind > SL_DOC_UNKNOWN && kind < SL_DOC_KINDS ? kinds[kind].id : "unknown";
}

sl_doc_kind sl_extract_kind_by_id(const char *id)
{
    for (int k = SL_DOC_UNKNOWN + 1; id && k < SL_DOC_KINDS; k++)
        if (!strcmp(kinds[k].id, id))
            return (sl_doc_kind)k;
    return SL_DOC_UNKNOWN;
}

const char *sl_extract_refusal(sl_doc_kind kind)
{
    if (kind <= SL_DOC_UNKNOWN || kind >= SL_DOC_KINDS)
        return kinds[SL_DOC_UNKNOWN].refused;
    return kinds[kind].read ? NULL : kinds[kind].refused;
}

int sl_extract_text(sl_doc_kind kind, const void *data, size_t len, const sl_extract_limits *lim,
                    sl_buf *out, sl_err *err)
{
    if (kind <= SL_DOC_UNKNOWN || kind >= SL_DOC_KINDS)
        return sl_err_set(err, SL_EUNSUPPORTED, "%s", kinds[SL_DOC_UNKNOWN].refused);
    if (!kinds[kind].read)
        return sl_err_set(err, SL_EUNSUPPORTED, "%s", kinds[kind].refused);
    sl_extract_limits def;
    if (!lim) {
        sl_extract_limits_default(&def);
        lim = &def;
    }
    size_t at = out->len;
    if (kinds[kind].read(data ? data : "", data ? len : 0, lim, out, err)) {
        out->len = at;
        if (out->data)
            out->data[at] = 0;
        if (err && err->code != SL_ELIMIT && kinds[kind].fail)
            sl_err_prefix(err, "%s", kinds[kind].fail);
        return -1;
    }
    if (out->len - at > lim->max_output) {
        out->len = at;
        if (out->data)
            out->data[at] = 0;
        return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                            "the %s file's text is over %zu bytes", kinds[kind].name,
                            lim->max_output);
    }
    return 0;
}
