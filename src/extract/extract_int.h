/*
 * extract_int — what the format files of extract/ share (not for callers
 * outside extract/).  Each reader appends its text to out and returns 0,
 * or -1 with err; sl_extract_text puts Dify's "Failed to extract text
 * from <format>: " before a reader's message.
 */
#ifndef SL_EXTRACT_INT_H
#define SL_EXTRACT_INT_H

#include <stdbool.h>

#include "extract/extract.h"

typedef int (*sl_extract_fn)(const void *data, size_t len, const sl_extract_limits *lim,
                             sl_buf *out, sl_err *err);

/* text.c */
int sl_extract_plain(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                     sl_err *err);
int sl_extract_json(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);
int sl_extract_yaml(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);
int sl_extract_csv(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);
int sl_extract_properties(const void *data, size_t len, const sl_extract_limits *lim,
                          sl_buf *out, sl_err *err);
int sl_extract_vtt(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);

/* ooxml.c */
int sl_extract_docx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);
int sl_extract_xlsx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);
int sl_extract_pptx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);

/* xls.c: a legacy .xls workbook; sl_extract_xls_is says whether the bytes
 * are one (an OLE2 compound file, or a bare BIFF2-4 worksheet), as
 * pandas tells xls from xlsx by the signature. */
bool sl_extract_xls_is(const void *data, size_t len);
int sl_extract_xls(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);

/* mail.c */
int sl_extract_eml(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);
int sl_extract_msg(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);

/* odf.c */
int sl_extract_odt(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err);
int sl_extract_epub(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err);

#endif
