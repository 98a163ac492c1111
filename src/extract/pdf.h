/*
 * pdf — the text of a PDF, as Dify's document-extractor gives it: each
 * page's text, the pages joined with nothing between them (graphon joins
 * PDFium's per-page text with "").
 *
 * PDFium is not in Debian; sluice reads most PDFs itself (extract/pdftext.h)
 * and gives the rest to poppler's pdftotext
 * (Debian package poppler-utils).  pdftotext is GPL and a large parser of
 * hostile input, so it is never linked and never run on the host: each
 * call starts a fresh local sandbox (no network, 512 MiB of memory, a few
 * processes, a wall time), hands it the PDF on stdin and reads the text
 * from stdout, capped at the limits' max_output.  Where no sandbox can be
 * made here, the call fails with the sandbox's error; pdftotext is never
 * run unsandboxed.
 *
 * pdftotext ends every line, the last of a page too, with "\n", and every
 * page with "\f"; sl_extract_pdf drops a page's trailing line breaks and the
 * "\f" so that pages touch as PDFium's do.  It runs in raw mode: the text
 * in the order the page's content draws it, as PDFium and pypdf read it,
 * not poppler's guess at columns.  Inside a page, lines end with "\n"
 * (PDFium writes "\r\n"), and the spacing of words is poppler's: the same
 * words as Dify's, not always the same whitespace.
 */
#ifndef SL_EXTRACT_PDF_H
#define SL_EXTRACT_PDF_H

#include <stdbool.h>

#include "extract/extract.h"

/* Appends the PDF's text to out.  lim NULL: the defaults; timeout_s <= 0:
 * SL_EXTRACT_PDF_TIMEOUT.  -1 with err, every message beginning with
 * Dify's "Failed to extract text from PDF: ":
 *   SL_EPARSE        not a PDF, damaged or truncated (pdftotext's own
 *                    words), encrypted with a password, or pdftotext crashed;
 *   SL_ETIMEOUT      pdftotext ran out of time (wall or CPU);
 *   SL_ELIMIT        the text is over lim->max_output (setting
 *                    extract_max_output), or pdftotext over its memory;
 *   SL_EUNSUPPORTED  pdftotext is not installed (poppler-utils);
 *   or the sandbox's own error when none could be made.
 * The program is "pdftotext" on the sandbox's PATH; the environment
 * variable SLUICE_PDFTOTEXT names another (an absolute path inside the
 * sandbox, which sees the host's /usr read-only). */
int sl_extract_pdf(const void *data, size_t len, const sl_extract_limits *lim, double timeout_s,
                   sl_buf *out, sl_err *err);

/* sl_extract_pdf that also ends pdftotext when stop(ud) turns true (polled
 * about every 50 ms; the run was stopped): SL_ECANCELED. */
int sl_extract_pdf_until(const void *data, size_t len, const sl_extract_limits *lim,
                         double timeout_s, bool (*stop)(void *ud), void *ud, sl_buf *out,
                         sl_err *err);

#define SL_EXTRACT_PDF_TIMEOUT 60.0           /* seconds */
#define SL_EXTRACT_PDF_MEMORY (512ull << 20)  /* bytes, everything in the sandbox */

#endif
