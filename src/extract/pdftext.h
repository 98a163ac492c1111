/*
 * pdftext — sluice's own reader of a PDF's text, for the PDFs most
 * producers write: pages in a page tree, content streams (and form
 * XObjects) showing text in simple fonts with a known encoding or a
 * ToUnicode map, or in Identity-H composite fonts with a ToUnicode map.
 *
 * The text is the one pdftotext -raw gives (extract/pdf.h): each page's
 * text in the order the page draws it, a new line where the baseline
 * moves, a space where a word gap or a space glyph is; pages joined with
 * nothing between them, as Dify joins them.
 *
 * It declines (SL_EUNSUPPORTED, with the reason) whatever it does not
 * read as well as pdftotext: encryption, Type3 fonts, a code or glyph
 * name it cannot map to Unicode, a font without widths, rotated or
 * vertical text, anything damaged (pdfobj.h).  The caller then runs
 * pdftotext.  SL_ELIMIT: the text is over max_output, or the document
 * needs more memory or work than the limits allow.
 *
 * Runs inside the confined extraction process (extract/isolate.h): the
 * file is hostile and everything is bounded.
 */
#ifndef SL_PDFTEXT_H
#define SL_PDFTEXT_H

#include "extract/extract.h"

/* Appends the document's text to out; on failure out is as it was. */
int sl_pdf_text(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                sl_err *err);

#endif
