/*
 * extract — the text of a document, as Dify's document-extractor node
 * gives it (docs/documents.md; graphon's nodes/document_extractor).
 *
 * The format is chosen as Dify chooses it: by the file's extension, exact
 * and with its dot (".pdf"), and by its MIME type only when it has no
 * extension.  Each format's text is Dify's: plain text as decoded, JSON
 * re-serialised with indent 2, CSV and spreadsheets as markdown tables,
 * docx paragraphs and tables in body order, and so on.
 *
 * Documents are hostile input.  sl_extract_text parses in this process and
 * is what the isolated parser (extract/isolate.h) runs, and what tests and
 * fuzzers call; nothing that serves users calls it directly.  Every parser
 * is bounded by sl_extract_limits: output bytes, an archive member's and
 * all members' unpacked bytes (zip bombs), XML depth and nodes.
 */
#ifndef SL_EXTRACT_H
#define SL_EXTRACT_H

#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"

typedef enum {
    SL_DOC_UNKNOWN = 0,
    SL_DOC_TEXT,        /* plain text and ~50 code and markup extensions */
    SL_DOC_JSON,
    SL_DOC_YAML,
    SL_DOC_PDF,
    SL_DOC_DOC,         /* legacy Word: Dify needs its Unstructured API */
    SL_DOC_DOCX,
    SL_DOC_CSV,
    SL_DOC_EXCEL,       /* xlsx and xls */
    SL_DOC_PPT,         /* legacy PowerPoint: Dify needs its Unstructured API */
    SL_DOC_PPTX,
    SL_DOC_EPUB,
    SL_DOC_ODT,
    SL_DOC_EML,
    SL_DOC_MSG,
    SL_DOC_VTT,
    SL_DOC_PROPERTIES,
    SL_DOC_KINDS
} sl_doc_kind;

typedef struct {
    size_t max_output;     /* bytes of text (extract_max_output) */
    size_t max_member;     /* unpacked bytes of one archive member */
    size_t max_unpacked;   /* unpacked bytes of all members read */
    size_t max_xml_depth;  /* nesting of an XML document */
    size_t max_xml_nodes;  /* elements and text nodes of all XML read */
} sl_extract_limits;

/* The defaults: 64 MiB of text, 256 MiB per member and 512 MiB in all,
 * depth 256, 20 million nodes. */
void sl_extract_limits_default(sl_extract_limits *lim);

/* The format for a file, Dify's way: `extension` (".pdf"; NULL or "" when
 * the file has none) first, then `mime`.  SL_DOC_UNKNOWN with Dify's error
 * ("Unsupported Extension Type: .xyz", "Unsupported MIME type: ...",
 * "Unable to determine file type: MIME type or file extension is
 * missing"). */
sl_doc_kind sl_extract_kind(const char *extension, const char *mime, sl_err *err);

/* The format's name ("DOCX", "Excel"). */
const char *sl_extract_kind_name(sl_doc_kind kind);
/* The format's short id ("docx"), and back (SL_DOC_UNKNOWN if none). */
const char *sl_extract_kind_id(sl_doc_kind kind);
sl_doc_kind sl_extract_kind_by_id(const char *id);

/* Why sluice does not read this format in-process (Dify's message for
 * .doc; PDF: read by sl_extract_isolated), or NULL when it does. */
const char *sl_extract_refusal(sl_doc_kind kind);

/* Appends the document's text to out.  -1 with err (SL_EPARSE, Dify's
 * message: "Failed to extract text from DOCX: ..."; SL_ELIMIT when a limit
 * stopped it; SL_EUNSUPPORTED for a format sluice does not read, with why). */
int sl_extract_text(sl_doc_kind kind, const void *data, size_t len, const sl_extract_limits *lim,
                    sl_buf *out, sl_err *err);

#endif
