/*
 * pdfobj — the object layer of sluice's own PDF reader (ISO 32000-1,
 * chapter 7): the lexer, objects, the cross-reference table or stream
 * (with /Prev updates and object streams), and stream data through the
 * filters text needs (Flate and LZW with PNG predictors, RunLength,
 * ASCIIHex, ASCII85).
 *
 * It reads the PDFs most producers write and nothing more: anything else
 * (encryption, a broken or missing cross-reference, a filter it lacks, a
 * reference it cannot resolve) makes it decline, and pdftotext reads the
 * file instead (extract/pdf.h).  Declining is SL_EUNSUPPORTED with the
 * reason; SL_ELIMIT is a document over a limit (max_member for one
 * stream's data, max_unpacked for all of them, memory for the objects).
 *
 * The file is hostile: every offset is checked against its size, object
 * nesting and reference chains are bounded, a /Prev chain or a reference
 * that loops is caught, and decoding stops at the limits.  All memory
 * belongs to the sl_pdf and goes with sl_pdf_close.  `data` must outlive
 * it.
 */
#ifndef SL_PDFOBJ_H
#define SL_PDFOBJ_H

#include <stdbool.h>
#include <stdint.h>

#include "extract/extract.h"

typedef enum {
    SL_PDF_NULL,
    SL_PDF_BOOL,
    SL_PDF_INT,
    SL_PDF_REAL,
    SL_PDF_STRING,
    SL_PDF_NAME,
    SL_PDF_ARRAY,
    SL_PDF_DICT,
    SL_PDF_REF,
    SL_PDF_STREAM, /* a dictionary (kv, n) with data in the file */
    SL_PDF_OP      /* a content-stream operator (s) */
} sl_pdf_type;

typedef struct sl_pdf_obj sl_pdf_obj;
struct sl_pdf_obj {
    sl_pdf_type t;
    union {
        bool b;
        long long i;
        double r;
        struct {
            const char *s; /* NUL-terminated; a string may hold NULs too */
            size_t len;
        } s;
        struct {
            sl_pdf_obj **v; /* arrays: items; dicts: key, value, key, value ... */
            size_t n;       /* arrays: items; dicts: 2 x entries */
            size_t at;      /* streams: offset of the raw data in the file */
            size_t len;     /* streams: its length */
        } c;
        struct {
            uint32_t num, gen;
        } ref;
    };
};

typedef struct sl_pdf sl_pdf;

/* Opens the document: its cross-reference sections and trailer.  NULL with
 * err (SL_EUNSUPPORTED: sluice's reader declines it) otherwise. */
sl_pdf *sl_pdf_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err);
void sl_pdf_close(sl_pdf *p);

/* The trailer dictionary. */
const sl_pdf_obj *sl_pdf_trailer(const sl_pdf *p);

/* o itself, or the object a reference names (NULL for a free or missing
 * object: the null object).  -1 with err when resolving fails. */
int sl_pdf_resolve(sl_pdf *p, const sl_pdf_obj *o, const sl_pdf_obj **out, sl_err *err);

/* A dictionary's (or stream's) value for key (no leading '/'), resolved;
 * NULL when absent or o is not a dictionary. -1 with err on failure. */
int sl_pdf_get(sl_pdf *p, const sl_pdf_obj *dict, const char *key, const sl_pdf_obj **out,
               sl_err *err);

/* Name, number helpers on resolved objects. */
bool sl_pdf_is_name(const sl_pdf_obj *o, const char *name);
bool sl_pdf_num(const sl_pdf_obj *o, double *v);

/* A stream's data, decoded; owned by p (valid until sl_pdf_close).  -1
 * with err: a filter sluice lacks (SL_EUNSUPPORTED), a limit (SL_ELIMIT),
 * damaged data. */
int sl_pdf_stream(sl_pdf *p, const sl_pdf_obj *stream, const unsigned char **data, size_t *len,
                  sl_err *err);

/* The same, appended to out and not kept: a page's contents, read once.
 * Still counted against max_unpacked (all the document decodes). */
int sl_pdf_stream_append(sl_pdf *p, const sl_pdf_obj *stream, sl_buf *out, sl_err *err);

/* A lexer over a content stream (or any PDF syntax): each call gives the
 * next object or operator; 0 at the end, 1 with *o, -1 with err. */
typedef struct sl_pdf_arena sl_pdf_arena;
typedef struct {
    sl_pdf *p;
    sl_pdf_arena *a; /* where its objects live: the scratch arena */
    const unsigned char *s, *end;
} sl_pdf_lexer;

/* A content stream's objects live in a scratch arena that is emptied
 * after each operator (sl_pdf_scratch_reset), so a long stream needs no
 * more memory than its largest operator. */
void sl_pdf_lexer_init(sl_pdf_lexer *lx, sl_pdf *p, const unsigned char *s, size_t len);
int sl_pdf_lex(sl_pdf_lexer *lx, sl_pdf_obj **o, sl_err *err);
void sl_pdf_scratch_reset(sl_pdf *p);

/* Skips an inline image's data: after "ID", up to and past "EI". */
void sl_pdf_lexer_skip_image(sl_pdf_lexer *lx);

#endif
