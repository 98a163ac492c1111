/*
 * pdftext — see pdftext.h.
 */
#include "extract/pdftext.h"

#include <stdlib.h>
#include <string.h>

#include "extract/pdfdata.h"
#include "extract/pdfobj.h"

#define DECLINE(err, ...) sl_err_set(err, SL_EUNSUPPORTED, __VA_ARGS__)

#define MAX_OPERANDS 64
#define MAX_GSTATES 64
#define MAX_FORM_DEPTH 8
#define MAX_TREE_DEPTH 64

/* Word and line breaks as pdftotext -raw makes them, in units of font
 * size: a gap wider than this is a space ... */
#define WORD_GAP 0.1
/* ... and going back by more than this (less is an accent placed over
 * the letter before it, or a bold font's overprint) ... */
#define BACK_GAP 1.0
/* ... and a baseline this far from the last starts a new line. */
#define LINE_DELTA 0.5

/* ---- fonts ---- */

typedef struct {
    uint32_t lo, hi; /* codes */
    uint32_t cp;     /* Unicode of lo (hi maps to cp + hi - lo); 0: see text */
    uint32_t text;   /* offset of a UTF-8 text in the font's pool, for one code */
    uint16_t tlen;
} umap;

typedef struct {
    uint32_t lo, hi;
    double w;
} wrange;

typedef struct font {
    const sl_pdf_obj *dict;
    bool two_byte;   /* Identity-H: 2-byte codes */
    /* simple fonts */
    uint32_t enc[256]; /* Unicode by code; 0 none */
    double width[256];
    bool has_width[256];
    /* ToUnicode */
    umap *map;
    size_t nmap;
    sl_buf pool;
    /* composite fonts */
    wrange *w;
    size_t nw;
    double dw;
    struct font *next;
} font;

static void font_free(font *f)
{
    while (f) {
        font *n = f->next;
        free(f->map);
        free(f->w);
        sl_buf_release(&f->pool);
        free(f);
        f = n;
    }
}


/* A glyph name's Unicode value: the Adobe Glyph List, uniXXXX, uXXXX[XX];
 * 0 when unknown ... */
static uint32_t glyph_unicode_1(const char *name);

/* ... and of a variant: "A.sc", "one.oldstyle" are A and one. */
static uint32_t glyph_unicode(const char *name)
{
    uint32_t cp = glyph_unicode_1(name);
    const char *dot = strchr(name, '.');
    if (cp || !dot || dot == name || dot - name > 31)
        return cp;
    char base[32];
    memcpy(base, name, (size_t)(dot - name));
    base[dot - name] = '\0';
    return glyph_unicode_1(base);
}

static uint32_t glyph_unicode_1(const char *name)
{
    size_t lo = 0, hi = sl_pdf_n_glyphs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, sl_pdf_glyph_names + sl_pdf_glyph_at[mid]);
        if (!c)
            return sl_pdf_glyph_cp[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t n = strlen(name);
    const char *hex = NULL;
    if (n == 7 && !strncmp(name, "uni", 3))
        hex = name + 3;
    else if ((n == 5 || n == 6 || n == 7) && name[0] == 'u')
        hex = name + 1;
    if (!hex)
        return 0;
    uint32_t v = 0;
    for (const char *p = hex; *p; p++) {
        int d = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;
        if (d < 0)
            return 0;
        v = v * 16 + (uint32_t)d;
    }
    return v > 0x10ffff || (v >= 0xd800 && v < 0xe000) ? 0 : v;
}

static const uint16_t *encoding_named(const char *n)
{
    if (!strcmp(n, "WinAnsiEncoding"))
        return sl_pdf_enc_win;
    if (!strcmp(n, "MacRomanEncoding"))
        return sl_pdf_enc_mac;
    if (!strcmp(n, "StandardEncoding"))
        return sl_pdf_enc_std;
    if (!strcmp(n, "PDFDocEncoding"))
        return sl_pdf_enc_pdfdoc;
    return NULL;
}

/* The standard 14 fonts (a subset tag "ABCDEF+" aside): which table of
 * widths, -1 for Courier (600 each), -2 for Symbol and ZapfDingbats (whose
 * glyphs sluice does not know), -3 not a standard font. */
static int std_font(const char *base)
{
    if (strlen(base) > 7 && base[6] == '+')
        base += 7;
    if (!strncmp(base, "Courier", 7))
        return -1;
    if (!strcmp(base, "Symbol") || !strcmp(base, "ZapfDingbats"))
        return -2;
    for (size_t i = 0; i < sl_pdf_n_std_fonts; i++)
        if (!strcmp(base, sl_pdf_std_fonts[i].name))
            return (int)i;
    return -3;
}

static double std_width(int which, uint32_t cp)
{
    if (which == -1)
        return 600;
    size_t lo = 0, hi = sizeof sl_pdf_std_cps / sizeof *sl_pdf_std_cps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sl_pdf_std_cps[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sizeof sl_pdf_std_cps / sizeof *sl_pdf_std_cps && sl_pdf_std_cps[lo] == cp &&
        sl_pdf_std_fonts[which].w[lo])
        return sl_pdf_std_fonts[which].w[lo];
    return 500;
}

/* ---- ToUnicode CMaps ---- */

static uint32_t code_of(const sl_pdf_obj *o, size_t *bytes)
{
    uint32_t v = 0;
    for (size_t i = 0; i < o->s.len && i < 4; i++)
        v = v << 8 | (unsigned char)o->s.s[i];
    *bytes = o->s.len;
    return v;
}

/* A UTF-16BE destination as UTF-8 in the pool; false if not valid. */
static bool add_utf16(sl_buf *pool, const sl_pdf_obj *o, uint32_t *first)
{
    const unsigned char *s = (const unsigned char *)o->s.s;
    size_t n = o->s.len;
    if (n % 2 || !n || n > 64)
        return false;
    *first = 0;
    for (size_t i = 0; i < n; i += 2) {
        uint32_t c = (uint32_t)s[i] << 8 | s[i + 1];
        if (c >= 0xd800 && c < 0xdc00 && i + 3 < n) {
            uint32_t c2 = (uint32_t)s[i + 2] << 8 | s[i + 3];
            if (c2 >= 0xdc00 && c2 < 0xe000) {
                c = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00);
                i += 2;
            }
        }
        if (c >= 0xd800 && c < 0xe000)
            c = 0xfffd;
        if (!*first)
            *first = c;
        sl_buf_add_utf8(pool, c);
    }
    return true;
}

/* v (n items of size bytes, room for *cap) with room for one more:
 * doubled when full; NULL when out of memory (v is then unchanged). */
static void *room(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t nc = *cap ? *cap * 2 : 64;
    void *nv = realloc(v, nc * size);
    if (nv)
        *cap = nc;
    return nv;
}

static int push_map(font *f, size_t *cap, umap m, sl_err *err)
{
    if (f->nmap == (1u << 20))
        return DECLINE(err, "a ToUnicode map with more than a million entries");
    umap *n = room(f->map, f->nmap, cap, sizeof *n);
    if (!n)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    f->map = n;
    f->map[f->nmap++] = m;
    return 0;
}

static int map_cmp(const void *a, const void *b)
{
    const umap *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int read_tounicode(sl_pdf *p, font *f, const sl_pdf_obj *stream, sl_err *err)
{
    const unsigned char *d;
    size_t n;
    if (sl_pdf_stream(p, stream, &d, &n, err))
        return -1;
    sl_pdf_lexer lx;
    sl_pdf_lexer_init(&lx, p, d, n);
    size_t cap = 0, want_bytes = f->two_byte ? 2 : 1;
    enum { NONE, CHAR, RANGE } mode = NONE;
    sl_pdf_obj *o;
    sl_pdf_obj *arg[3];
    int na = 0;
    int r;
    while ((r = sl_pdf_lex(&lx, &o, err)) == 1) {
        if (o->t == SL_PDF_OP) {
            const char *w = o->s.s;
            if (!strcmp(w, "beginbfchar"))
                mode = CHAR;
            else if (!strcmp(w, "beginbfrange"))
                mode = RANGE;
            else if (!strcmp(w, "endbfchar") || !strcmp(w, "endbfrange"))
                mode = NONE;
            else if (!strcmp(w, "begincidrange") || !strcmp(w, "usecmap"))
                return DECLINE(err, "a ToUnicode map that uses another CMap");
            na = 0;
            continue;
        }
        if (mode == NONE) {
            na = 0;
            continue;
        }
        arg[na++] = o;
        if (mode == CHAR && na == 2) {
            na = 0;
            size_t bytes;
            if (arg[0]->t != SL_PDF_STRING)
                return DECLINE(err, "a ToUnicode map entry is not a code");
            uint32_t code = code_of(arg[0], &bytes);
            if (bytes != want_bytes)
                return DECLINE(err, "a ToUnicode map with %zu-byte codes", bytes);
            umap m = {code, code, 0, (uint32_t)f->pool.len, 0};
            if (arg[1]->t == SL_PDF_STRING) {
                uint32_t first;
                if (!add_utf16(&f->pool, arg[1], &first))
                    return DECLINE(err, "a ToUnicode map entry is not UTF-16");
            } else if (arg[1]->t == SL_PDF_NAME) {
                uint32_t cp = glyph_unicode(arg[1]->s.s);
                if (!cp)
                    return DECLINE(err, "a ToUnicode map names glyph /%s", arg[1]->s.s);
                sl_buf_add_utf8(&f->pool, cp);
            } else {
                return DECLINE(err, "a ToUnicode map entry is not text");
            }
            m.tlen = (uint16_t)(f->pool.len - m.text);
            if (push_map(f, &cap, m, err))
                return -1;
        } else if (mode == RANGE && na == 3) {
            na = 0;
            size_t b1, b2;
            if (arg[0]->t != SL_PDF_STRING || arg[1]->t != SL_PDF_STRING)
                return DECLINE(err, "a ToUnicode map range is not codes");
            uint32_t lo = code_of(arg[0], &b1), hi = code_of(arg[1], &b2);
            if (b1 != want_bytes || b2 != want_bytes || hi < lo)
                return DECLINE(err, "a ToUnicode map range is out of order or size");
            if (arg[2]->t == SL_PDF_STRING) {
                uint32_t first;
                sl_buf scratch;
                sl_buf_init(&scratch, 0);
                bool ok = add_utf16(&scratch, arg[2], &first);
                sl_buf_release(&scratch);
                if (!ok)
                    return DECLINE(err, "a ToUnicode map range is not UTF-16");
                if (arg[2]->s.len == 2 || (arg[2]->s.len == 4 && first >= 0x10000)) {
                    if (push_map(f, &cap, (umap){lo, hi, first, 0, 0}, err))
                        return -1;
                } else {
                    /* several code points: the last one counts up */
                    if (hi - lo > 255)
                        return DECLINE(err, "a long ToUnicode range of several characters");
                    for (uint32_t c = lo; c <= hi; c++) {
                        umap m = {c, c, 0, (uint32_t)f->pool.len, 0};
                        sl_pdf_obj t = *arg[2];
                        char buf[64];
                        memcpy(buf, t.s.s, t.s.len);
                        unsigned v = ((unsigned char)buf[t.s.len - 2] << 8 |
                                      (unsigned char)buf[t.s.len - 1]) + (c - lo);
                        buf[t.s.len - 2] = (char)(v >> 8), buf[t.s.len - 1] = (char)v;
                        t.s.s = buf;
                        add_utf16(&f->pool, &t, &first);
                        m.tlen = (uint16_t)(f->pool.len - m.text);
                        if (push_map(f, &cap, m, err))
                            return -1;
                    }
                }
            } else if (arg[2]->t == SL_PDF_ARRAY) {
                if (arg[2]->c.n < (size_t)(hi - lo) + 1)
                    return DECLINE(err, "a ToUnicode map range's array is short");
                for (uint32_t c = lo; c <= hi; c++) {
                    const sl_pdf_obj *t = arg[2]->c.v[c - lo];
                    uint32_t first;
                    umap m = {c, c, 0, (uint32_t)f->pool.len, 0};
                    if (t->t != SL_PDF_STRING || !add_utf16(&f->pool, t, &first))
                        return DECLINE(err, "a ToUnicode map range's array is not text");
                    m.tlen = (uint16_t)(f->pool.len - m.text);
                    if (push_map(f, &cap, m, err))
                        return -1;
                }
            } else {
                return DECLINE(err, "a ToUnicode map range maps to neither text nor an array");
            }
        }
        if (na == 3)
            na = 0;
    }
    if (r < 0)
        return -1;
    if (f->nmap)
        qsort(f->map, f->nmap, sizeof *f->map, map_cmp);
    return 0;
}

/* The entry of the ToUnicode map that holds code, or NULL. */
static const umap *lookup_map(const font *f, uint32_t code)
{
    size_t lo = 0, hi = f->nmap;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->map[mid].lo <= code)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* the last entry starting at or before code; ranges may overlap, so
     * look back a little */
    for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++)
        if (f->map[i - 1].lo <= code && code <= f->map[i - 1].hi)
            return &f->map[i - 1];
    return NULL;
}

/* ---- loading a font ---- */

/* A Type1 font program's own encoding, from its clear-text part ("dup 65
 * /A put" ..., or StandardEncoding): what a font without /Encoding uses.
 * *found is false when the font has no such program or it gives none. */
static int type1_encoding(sl_pdf *p, const sl_pdf_obj *desc, uint32_t enc[256], bool *found,
                          sl_err *err)
{
    const sl_pdf_obj *ff;
    *found = false;
    if (!desc || sl_pdf_get(p, desc, "FontFile", &ff, err))
        return desc ? -1 : 0;
    if (!ff || ff->t != SL_PDF_STREAM)
        return 0;
    const unsigned char *d;
    size_t n;
    if (sl_pdf_stream(p, ff, &d, &n, err))
        return -1;
    const unsigned char *ee = memmem(d, n, "eexec", 5);
    size_t clear = ee ? (size_t)(ee - d) : n;
    const unsigned char *e = memmem(d, clear, "/Encoding", 9);
    if (!e)
        return 0;
    sl_pdf_lexer lx;
    sl_pdf_lexer_init(&lx, p, e + 9, clear - (size_t)(e + 9 - d));
    sl_pdf_obj *o, *w[3] = {NULL, NULL, NULL};
    int r;
    while ((r = sl_pdf_lex(&lx, &o, err)) == 1) {
        if (o->t == SL_PDF_OP && !strcmp(o->s.s, "StandardEncoding")) {
            for (int c = 0; c < 256; c++)
                enc[c] = sl_pdf_enc_std[c];
            *found = true;
            return 0;
        }
        if (o->t == SL_PDF_OP && (!strcmp(o->s.s, "readonly") || !strcmp(o->s.s, "def")))
            break;
        if (o->t == SL_PDF_OP && !strcmp(o->s.s, "put") && w[0] && w[0]->t == SL_PDF_OP &&
            !strcmp(w[0]->s.s, "dup") && w[1]->t == SL_PDF_INT && w[2]->t == SL_PDF_NAME &&
            w[1]->i >= 0 && w[1]->i < 256) {
            enc[w[1]->i] = glyph_unicode(w[2]->s.s);
            *found = true;
        }
        w[0] = w[1], w[1] = w[2], w[2] = o;
    }
    return r < 0 ? -1 : 0;
}

static int simple_font(sl_pdf *p, font *f, const sl_pdf_obj *d, bool has_tu, sl_err *err)
{
    const sl_pdf_obj *base, *enc, *first, *widths, *desc, *flags = NULL;
    if (sl_pdf_get(p, d, "BaseFont", &base, err) || sl_pdf_get(p, d, "Encoding", &enc, err) ||
        sl_pdf_get(p, d, "FirstChar", &first, err) || sl_pdf_get(p, d, "Widths", &widths, err) ||
        sl_pdf_get(p, d, "FontDescriptor", &desc, err) ||
        (desc && sl_pdf_get(p, desc, "Flags", &flags, err)))
        return -1;
    int std = base && base->t == SL_PDF_NAME ? std_font(base->s.s) : -3;
    const uint16_t *table = NULL;
    const sl_pdf_obj *diffs = NULL;
    if (enc && enc->t == SL_PDF_NAME) {
        table = encoding_named(enc->s.s);
        if (!table)
            return DECLINE(err, "a font with encoding /%s", enc->s.s);
    } else if (enc && enc->t == SL_PDF_DICT) {
        const sl_pdf_obj *be;
        if (sl_pdf_get(p, enc, "BaseEncoding", &be, err) ||
            sl_pdf_get(p, enc, "Differences", &diffs, err))
            return -1;
        if (be && be->t == SL_PDF_NAME && !(table = encoding_named(be->s.s)))
            return DECLINE(err, "a font with base encoding /%s", be->s.s);
    } else if (enc) {
        return DECLINE(err, "a font whose /Encoding is neither a name nor a dictionary");
    }
    bool symbolic = flags && flags->t == SL_PDF_INT && (flags->i & 4);
    if (!table) {
        /* no base encoding: the font's own, known only for the standard
         * Latin fonts and non-symbolic fonts (StandardEncoding); in a
         * symbolic font only the codes its ToUnicode map or /Differences
         * name are known (the others decline when shown) */
        bool own = std == -2 || (std == -3 && (symbolic || !flags));
        bool program = false;
        if (own && type1_encoding(p, desc, f->enc, &program, err))
            return -1;
        if (own && !program && !has_tu && !diffs)
            return DECLINE(err, "a font with an encoding of its own");
        table = own ? NULL : sl_pdf_enc_std;
    }
    if (table)
        for (int c = 0; c < 256; c++)
            f->enc[c] = table[c];
    if (diffs) {
        if (diffs->t != SL_PDF_ARRAY)
            return DECLINE(err, "a font's /Differences is not an array");
        long long code = -1;
        for (size_t i = 0; i < diffs->c.n; i++) {
            const sl_pdf_obj *o = diffs->c.v[i];
            if (o->t == SL_PDF_INT) {
                code = o->i;
            } else if (o->t == SL_PDF_NAME) {
                if (code >= 0 && code < 256)
                    f->enc[code] = glyph_unicode(o->s.s); /* 0: unknown, declined if shown */
                code++;
            } else {
                return DECLINE(err, "a font's /Differences holds something else");
            }
        }
    }
    if (widths && widths->t == SL_PDF_ARRAY && first && first->t == SL_PDF_INT && first->i >= 0) {
        for (size_t i = 0; i < widths->c.n && first->i + (long long)i < 256; i++) {
            const sl_pdf_obj *w;
            double v;
            if (sl_pdf_resolve(p, widths->c.v[i], &w, err))
                return -1;
            if (sl_pdf_num(w, &v)) {
                f->width[first->i + (long long)i] = v;
                f->has_width[first->i + (long long)i] = true;
            }
        }
    } else if (std >= -1) {
        for (int c = 0; c < 256; c++) {
            f->width[c] = std_width(std, f->enc[c] ? f->enc[c] : (uint32_t)c);
            f->has_width[c] = true;
        }
    } else {
        return DECLINE(err, "a font without widths");
    }
    /* codes without a width: the descriptor's /MissingWidth, else 0 */
    double missing = 0;
    const sl_pdf_obj *mw;
    if (desc && (sl_pdf_get(p, desc, "MissingWidth", &mw, err) || (sl_pdf_num(mw, &missing), 0)))
        return -1;
    for (int c = 0; c < 256; c++)
        if (!f->has_width[c])
            f->width[c] = missing;
    return 0;
}

static int push_w(font *f, size_t *cap, wrange w, sl_err *err)
{
    if (f->nw == (1u << 17))
        return DECLINE(err, "a composite font's /W is too long");
    wrange *n = room(f->w, f->nw, cap, sizeof *n);
    if (!n)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    f->w = n;
    f->w[f->nw++] = w;
    return 0;
}

static int composite_font(sl_pdf *p, font *f, const sl_pdf_obj *d, sl_err *err)
{
    const sl_pdf_obj *enc, *desc, *df, *w, *dw;
    if (sl_pdf_get(p, d, "Encoding", &enc, err) || sl_pdf_get(p, d, "DescendantFonts", &desc, err))
        return -1;
    if (!sl_pdf_is_name(enc, "Identity-H"))
        return DECLINE(err, "a composite font with encoding %s",
                       enc && enc->t == SL_PDF_NAME ? enc->s.s : "other than /Identity-H");
    if (!desc || desc->t != SL_PDF_ARRAY || desc->c.n != 1)
        return DECLINE(err, "a composite font without one descendant font");
    if (sl_pdf_resolve(p, desc->c.v[0], &df, err) || sl_pdf_get(p, df, "W", &w, err) ||
        sl_pdf_get(p, df, "DW", &dw, err))
        return -1;
    f->two_byte = true;
    f->dw = 1000;
    sl_pdf_num(dw, &f->dw);
    if (!w)
        return 0;
    if (w->t != SL_PDF_ARRAY)
        return DECLINE(err, "a composite font's /W is not an array");
    size_t cap = 0;
    for (size_t i = 0; i < w->c.n;) {
        const sl_pdf_obj *a, *b, *c;
        if (sl_pdf_resolve(p, w->c.v[i], &a, err) ||
            (i + 1 < w->c.n && sl_pdf_resolve(p, w->c.v[i + 1], &b, err)))
            return -1;
        if (i + 1 >= w->c.n || !a || a->t != SL_PDF_INT || a->i < 0 || a->i > 0xffff || !b)
            return DECLINE(err, "a composite font's /W is damaged");
        if (b->t == SL_PDF_ARRAY) {
            for (size_t k = 0; k < b->c.n; k++) {
                double v;
                if (sl_pdf_resolve(p, b->c.v[k], &c, err))
                    return -1;
                if (!sl_pdf_num(c, &v) || a->i + (long long)k > 0xffff)
                    return DECLINE(err, "a composite font's /W is damaged");
                uint32_t code = (uint32_t)(a->i + (long long)k);
                if (push_w(f, &cap, (wrange){code, code, v}, err))
                    return -1;
            }
            i += 2;
        } else {
            double v;
            if (i + 2 >= w->c.n || b->t != SL_PDF_INT || b->i < a->i || b->i > 0xffff ||
                sl_pdf_resolve(p, w->c.v[i + 2], &c, err) || !sl_pdf_num(c, &v))
                return DECLINE(err, "a composite font's /W is damaged");
            if (push_w(f, &cap, (wrange){(uint32_t)a->i, (uint32_t)b->i, v}, err))
                return -1;
            i += 3;
        }
    }
    return 0;
}

static double cid_width(const font *f, uint32_t code)
{
    for (size_t i = f->nw; i > 0; i--)
        if (f->w[i - 1].lo <= code && code <= f->w[i - 1].hi)
            return f->w[i - 1].w;
    return f->dw;
}

static int load_font(sl_pdf *p, font **fonts, const sl_pdf_obj *d, font **out, sl_err *err)
{
    for (font *f = *fonts; f; f = f->next)
        if (f->dict == d) {
            *out = f;
            return 0;
        }
    const sl_pdf_obj *sub, *tu;
    if (!d || d->t != SL_PDF_DICT)
        return DECLINE(err, "a font that is not a dictionary");
    if (sl_pdf_get(p, d, "Subtype", &sub, err) || sl_pdf_get(p, d, "ToUnicode", &tu, err))
        return -1;
    font *f = calloc(1, sizeof *f);
    if (!f)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    f->dict = d;
    sl_buf_init(&f->pool, 0);
    f->next = *fonts;
    *fonts = f;
    int rc;
    if (sl_pdf_is_name(sub, "Type0")) {
        if (!tu || tu->t != SL_PDF_STREAM)
            return DECLINE(err, "a composite font without a ToUnicode map");
        rc = composite_font(p, f, d, err);
    } else if (sl_pdf_is_name(sub, "Type1") || sl_pdf_is_name(sub, "TrueType") ||
               sl_pdf_is_name(sub, "MMType1")) {
        rc = simple_font(p, f, d, tu && tu->t == SL_PDF_STREAM, err);
    } else {
        return DECLINE(err, "a font of type %s",
                       sub && sub->t == SL_PDF_NAME ? sub->s.s : "(none)");
    }
    if (!rc && tu && tu->t == SL_PDF_STREAM)
        rc = read_tounicode(p, f, tu, err);
    if (rc)
        return -1;
    *out = f;
    return 0;
}

/* ---- the page's text ---- */

static double dabs(double v)
{
    return v < 0 ? -v : v;
}

typedef struct {
    double a, b, c, d, e, f;
} mat;

static mat mul(mat x, mat y)
{
    return (mat){x.a * y.a + x.b * y.c,         x.a * y.b + x.b * y.d,
                 x.c * y.a + x.d * y.c,         x.c * y.b + x.d * y.d,
                 x.e * y.a + x.f * y.c + y.e,   x.e * y.b + x.f * y.d + y.f};
}

static const mat identity = {1, 0, 0, 1, 0, 0};

typedef struct {
    mat ctm;
    double tc, tw, th, tl, fs, rise;
    font *font;
} gstate;

typedef struct {
    sl_pdf *p;
    const sl_extract_limits *lim;
    font *fonts;
    sl_buf *out;       /* the document's text */
    gstate gs[MAX_GSTATES];
    int ngs;
    mat tm, tlm;
    /* the last glyph shown on this page */
    bool any;
    double last_x, last_y, last_size;
    bool space; /* a space glyph or a word gap since */
    size_t work, max_work; /* content bytes interpreted, and the cap */
    /* Marked content: its depth, and the span (from `actual`, its depth)
     * whose /ActualText stands for the glyphs it draws, as pdftotext
     * reads it: the glyphs are placed, not written, and the text goes
     * where the first of them was. */
    int marked, actual;
    sl_buf actual_text;
    bool actual_seen;
    double actual_x, actual_y, actual_size;
} interp;

static int emit_cp(interp *it, uint32_t cp, sl_err *err)
{
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
        return 0;
    if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
        cp = 0xfffd;
    sl_buf_add_utf8(it->out, cp);
    if (it->out->len > it->lim->max_output)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                            "its text is larger than extract_max_output (%zu bytes); raise "
                            "extract_max_output to read it",
                            it->lim->max_output);
    return 0;
}

/* Where the next glyph goes: a new line, a space, or nothing between it
 * and the last one. */
static void place(interp *it, double x, double y, double size)
{
    if (it->any) {
        double ref = it->last_size > size ? it->last_size : size;
        if (dabs(y - it->last_y) > LINE_DELTA * ref) {
            sl_buf_addc(it->out, '\n');
        } else if (it->space || x - it->last_x > WORD_GAP * ref ||
                   x - it->last_x < -BACK_GAP * ref) {
            sl_buf_addc(it->out, ' ');
        }
    }
    it->space = false;
}

static int show(interp *it, const sl_pdf_obj *s, sl_err *err)
{
    gstate *g = &it->gs[it->ngs];
    font *f = g->font;
    if (!f)
        return DECLINE(err, "text shown before a font is set");
    /* The string's glyphs move along the text line only: one matrix for
     * them all, each glyph at x0 + adv * m.a (adv in text space). */
    mat m = mul(it->tm, g->ctm);
    /* text that is not upright on the page is pdftotext's to order */
    if (m.a <= 0 || m.d <= 0 || dabs(m.b) > 1e-3 * dabs(m.a) || dabs(m.c) > 1e-3 * dabs(m.d))
        return DECLINE(err, "rotated, mirrored or skewed text");
    double x0 = m.e + g->rise * m.c, y = m.f + g->rise * m.d, size = dabs(g->fs) * m.d;
    double adv = 0, scale = g->fs / 1000;
    const unsigned char *b = (const unsigned char *)s->s.s;
    size_t n = s->s.len, step = f->two_byte ? 2 : 1;
    for (size_t i = 0; i + step <= n; i += step) {
        uint32_t code = f->two_byte ? (uint32_t)b[i] << 8 | b[i + 1] : b[i];
        /* the glyph's text */
        const umap *um = f->nmap ? lookup_map(f, code) : NULL;
        uint32_t cp = 0;
        const char *text = NULL;
        size_t tlen = 0;
        if (um && um->cp) {
            cp = um->cp + (code - um->lo);
        } else if (um) {
            text = f->pool.data + um->text;
            tlen = um->tlen;
        } else if (!f->two_byte) {
            cp = f->enc[code];
        }
        /* code 0 is the missing glyph (.notdef: a character the font
         * lacks, drawn as a box), text in no reader's output */
        if (!cp && !text && code && !it->actual)
            return DECLINE(err, "a glyph (code %u) with no Unicode value", code);
        bool is_space = cp == 0x20 || (text && tlen == 1 && text[0] == ' ');
        if (it->actual) {
            /* drawn for an /ActualText span: where it starts is kept */
            if (!it->actual_seen) {
                it->actual_seen = true;
                it->actual_x = x0 + adv * m.a, it->actual_y = y, it->actual_size = size;
            }
        } else if (!cp && !text) {
            /* nothing to place */
        } else if (is_space) {
            it->space = true;
        } else {
            place(it, x0 + adv * m.a, y, size);
            if (text) {
                sl_buf_add(it->out, text, tlen);
                if (it->out->len > it->lim->max_output)
                    return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                                        "its text is larger than extract_max_output");
            } else if (emit_cp(it, cp, err)) {
                return -1;
            }
            it->any = true;
        }
        double w0 = f->two_byte ? cid_width(f, code) : f->width[code];
        adv += (w0 * scale + g->tc + (!f->two_byte && code == 32 ? g->tw : 0)) * g->th;
        if (it->actual || (!is_space && (cp || text))) {
            it->last_x = x0 + adv * m.a;
            it->last_y = y;
            it->last_size = size;
        }
    }
    it->tm.e += adv * it->tm.a;
    it->tm.f += adv * it->tm.b;
    return 0;
}

/* A text string's characters (UTF-16BE after a byte order mark, else
 * PDFDocEncoding) appended as UTF-8. */
static void text_string(const sl_pdf_obj *o, sl_buf *out)
{
    const unsigned char *s = (const unsigned char *)o->s.s;
    size_t n = o->s.len;
    if (n >= 2 && s[0] == 0xfe && s[1] == 0xff) {
        for (size_t i = 2; i + 1 < n; i += 2) {
            uint32_t c = (uint32_t)s[i] << 8 | s[i + 1];
            if (c >= 0xd800 && c < 0xdc00 && i + 3 < n) {
                uint32_t c2 = (uint32_t)s[i + 2] << 8 | s[i + 3];
                if (c2 >= 0xdc00 && c2 < 0xe000) {
                    c = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00);
                    i += 2;
                }
            }
            sl_buf_add_utf8(out, c >= 0xd800 && c < 0xe000 ? 0xfffd : c);
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        sl_buf_add_utf8(out, sl_pdf_enc_pdfdoc[s[i]] ? sl_pdf_enc_pdfdoc[s[i]] : s[i]);
}

/* BMC / BDC: a marked-content span opens; an /ActualText one (when none
 * is open) stands for what it draws. */
static int begin_marked(interp *it, sl_pdf_obj **arg, int na, bool bdc, const sl_pdf_obj *res,
                        sl_err *err)
{
    it->marked++;
    if (!bdc || na < 2 || it->actual)
        return 0;
    const sl_pdf_obj *props = arg[na - 1], *at = NULL;
    if (props->t == SL_PDF_NAME) {
        const sl_pdf_obj *all;
        if (sl_pdf_get(it->p, res, "Properties", &all, err) ||
            sl_pdf_get(it->p, all, props->s.s, &props, err))
            return -1;
    }
    if (props && props->t == SL_PDF_DICT && sl_pdf_get(it->p, props, "ActualText", &at, err))
        return -1;
    if (!at || at->t != SL_PDF_STRING)
        return 0;
    it->actual = it->marked;
    it->actual_seen = false;
    sl_buf_reset(&it->actual_text);
    text_string(at, &it->actual_text);
    return 0;
}

static int end_marked(interp *it, sl_err *err)
{
    if (it->marked == 0)
        return 0;
    if (it->actual == it->marked--) {
        it->actual = 0;
        if (it->actual_seen && it->actual_text.len) {
            place(it, it->actual_x, it->actual_y, it->actual_size);
            sl_buf_add(it->out, it->actual_text.data, it->actual_text.len);
            it->any = true;
            if (it->out->len > it->lim->max_output)
                return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                                    "its text is larger than extract_max_output");
        }
    }
    return 0;
}

static void tj_move(interp *it, double n)
{
    gstate *g = &it->gs[it->ngs];
    double tx = -n / 1000 * g->fs * g->th;
    it->tm.e += tx * it->tm.a;
    it->tm.f += tx * it->tm.b;
}

static void td(interp *it, double tx, double ty)
{
    mat t = {1, 0, 0, 1, tx, ty};
    it->tlm = mul(t, it->tlm);
    it->tm = it->tlm;
}

static bool nums(sl_pdf_obj **arg, int na, int want, double *v)
{
    if (na < want)
        return false;
    for (int i = 0; i < want; i++)
        if (!sl_pdf_num(arg[na - want + i], &v[i]))
            return false;
    return true;
}

static int run(interp *it, const unsigned char *d, size_t n, const sl_pdf_obj *res, int depth,
               sl_err *err);

static int do_xobject(interp *it, const sl_pdf_obj *name, const sl_pdf_obj *res, int depth,
                      sl_err *err)
{
    const sl_pdf_obj *xo, *x, *sub, *m, *xres;
    if (sl_pdf_get(it->p, res, "XObject", &xo, err) || sl_pdf_get(it->p, xo, name->s.s, &x, err))
        return -1;
    if (!x || x->t != SL_PDF_STREAM)
        return 0; /* a missing XObject draws nothing */
    if (sl_pdf_get(it->p, x, "Subtype", &sub, err))
        return -1;
    if (!sl_pdf_is_name(sub, "Form"))
        return 0; /* images have no text */
    if (depth >= MAX_FORM_DEPTH)
        return DECLINE(err, "form XObjects nested deeper than %d", MAX_FORM_DEPTH);
    if (sl_pdf_get(it->p, x, "Matrix", &m, err) || sl_pdf_get(it->p, x, "Resources", &xres, err))
        return -1;
    if (it->ngs + 1 >= MAX_GSTATES)
        return DECLINE(err, "graphics states nested deeper than %d", MAX_GSTATES);
    it->gs[it->ngs + 1] = it->gs[it->ngs];
    it->ngs++;
    if (m && m->t == SL_PDF_ARRAY && m->c.n == 6) {
        double v[6];
        for (int i = 0; i < 6; i++)
            if (!sl_pdf_num(m->c.v[i], &v[i]))
                return DECLINE(err, "a form's /Matrix is not six numbers");
        it->gs[it->ngs].ctm = mul((mat){v[0], v[1], v[2], v[3], v[4], v[5]}, it->gs[it->ngs].ctm);
    }
    const unsigned char *d;
    size_t len;
    mat tm = it->tm, tlm = it->tlm;
    int saved = it->ngs;
    if (sl_pdf_stream(it->p, x, &d, &len, err) ||
        run(it, d, len, xres ? xres : res, depth + 1, err))
        return -1;
    it->ngs = saved - 1;
    it->tm = tm, it->tlm = tlm;
    return 0;
}

static int run(interp *it, const unsigned char *d, size_t n, const sl_pdf_obj *res, int depth,
               sl_err *err)
{
    it->work += n;
    if (it->work > it->max_work)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_unpacked",
                            "its pages draw more than extract_max_unpacked (%zu bytes) of "
                            "content (forms drawn over and over)",
                            it->lim->max_unpacked);
    sl_pdf_lexer lx;
    sl_pdf_lexer_init(&lx, it->p, d, n);
    sl_pdf_obj *arg[MAX_OPERANDS], *o;
    int na = 0, r;
    int base = it->ngs;
    while ((r = sl_pdf_lex(&lx, &o, err)) == 1) {
        if (o->t != SL_PDF_OP) {
            if (na == MAX_OPERANDS) {
                memmove(arg, arg + 1, (MAX_OPERANDS - 1) * sizeof *arg);
                na--;
            }
            arg[na++] = o;
            continue;
        }
        const char *op = o->s.s;
        gstate *g = &it->gs[it->ngs];
        double v[6];
        switch (op[0]) {
        case 'q':
            if (!op[1]) {
                if (it->ngs + 1 >= MAX_GSTATES)
                    return DECLINE(err, "graphics states nested deeper than %d", MAX_GSTATES);
                it->gs[it->ngs + 1] = *g;
                it->ngs++;
            }
            break;
        case 'Q':
            if (!op[1] && it->ngs > base)
                it->ngs--;
            break;
        case 'c':
            if (!strcmp(op, "cm") && nums(arg, na, 6, v))
                g->ctm = mul((mat){v[0], v[1], v[2], v[3], v[4], v[5]}, g->ctm);
            break;
        case 'B':
            if (!strcmp(op, "BT")) {
                it->tm = it->tlm = identity;
            } else if (!strcmp(op, "BMC") || !strcmp(op, "BDC")) {
                if (begin_marked(it, arg, na, op[2] == 'C' && op[1] == 'D', res, err))
                    return -1;
            } else if (!strcmp(op, "BI")) {
                /* an inline image: its dictionary, then data up to EI */
                sl_pdf_obj *k;
                while ((r = sl_pdf_lex(&lx, &k, err)) == 1 &&
                       !(k->t == SL_PDF_OP && !strcmp(k->s.s, "ID")))
                    ;
                if (r < 0)
                    return -1;
                sl_pdf_lexer_skip_image(&lx);
            }
            break;
        case 'T':
            if (!op[1] || op[2])
                break;
            switch (op[1]) {
            case 'f':
                if (na >= 2 && arg[na - 2]->t == SL_PDF_NAME && sl_pdf_num(arg[na - 1], &v[0])) {
                    const sl_pdf_obj *fd, *fo;
                    if (sl_pdf_get(it->p, res, "Font", &fd, err) ||
                        sl_pdf_get(it->p, fd, arg[na - 2]->s.s, &fo, err))
                        return -1;
                    if (!fo)
                        return DECLINE(err, "font /%s is not in the page's resources",
                                       arg[na - 2]->s.s);
                    if (load_font(it->p, &it->fonts, fo, &g->font, err))
                        return -1;
                    g->fs = v[0];
                }
                break;
            case 'd':
                if (nums(arg, na, 2, v))
                    td(it, v[0], v[1]);
                break;
            case 'D':
                if (nums(arg, na, 2, v)) {
                    g->tl = -v[1];
                    td(it, v[0], v[1]);
                }
                break;
            case 'm':
                if (nums(arg, na, 6, v))
                    it->tm = it->tlm = (mat){v[0], v[1], v[2], v[3], v[4], v[5]};
                break;
            case '*':
                td(it, 0, -g->tl);
                break;
            case 'L':
                if (nums(arg, na, 1, v))
                    g->tl = v[0];
                break;
            case 'c':
                if (nums(arg, na, 1, v))
                    g->tc = v[0];
                break;
            case 'w':
                if (nums(arg, na, 1, v))
                    g->tw = v[0];
                break;
            case 'z':
                if (nums(arg, na, 1, v))
                    g->th = v[0] / 100;
                break;
            case 's':
                if (nums(arg, na, 1, v))
                    g->rise = v[0];
                break;
            case 'j':
                if (na >= 1 && arg[na - 1]->t == SL_PDF_STRING && show(it, arg[na - 1], err))
                    return -1;
                break;
            case 'J':
                if (na >= 1 && arg[na - 1]->t == SL_PDF_ARRAY) {
                    const sl_pdf_obj *a = arg[na - 1];
                    for (size_t i = 0; i < a->c.n; i++) {
                        if (a->c.v[i]->t == SL_PDF_STRING) {
                            if (show(it, a->c.v[i], err))
                                return -1;
                        } else if (sl_pdf_num(a->c.v[i], &v[0])) {
                            tj_move(it, v[0]);
                        }
                    }
                }
                break;
            }
            break;
        case '\'':
            if (!op[1]) {
                td(it, 0, -g->tl);
                if (na >= 1 && arg[na - 1]->t == SL_PDF_STRING && show(it, arg[na - 1], err))
                    return -1;
            }
            break;
        case '"':
            if (!op[1] && na >= 3 && arg[na - 1]->t == SL_PDF_STRING && nums(arg, na - 1, 2, v)) {
                g->tw = v[0], g->tc = v[1];
                td(it, 0, -g->tl);
                if (show(it, arg[na - 1], err))
                    return -1;
            }
            break;
        case 'E':
            if (!strcmp(op, "EMC") && end_marked(it, err))
                return -1;
            break;
        case 'D':
            if (!strcmp(op, "Do") && na >= 1 && arg[na - 1]->t == SL_PDF_NAME &&
                do_xobject(it, arg[na - 1], res, depth, err))
                return -1;
            break;
        default:
            break;
        }
        na = 0;
        sl_pdf_scratch_reset(it->p);
    }
    it->ngs = base;
    return r;
}

/* One page: its content streams joined, run from a fresh state. */
static int page(interp *it, const sl_pdf_obj *pg, const sl_pdf_obj *res, sl_err *err)
{
    const sl_pdf_obj *c;
    if (sl_pdf_get(it->p, pg, "Contents", &c, err))
        return -1;
    sl_buf all;
    sl_buf_init(&all, 0);
    const sl_pdf_obj *one[1] = {c};
    const sl_pdf_obj *const *list = one;
    size_t n = c ? 1 : 0;
    if (c && c->t == SL_PDF_ARRAY) {
        list = (const sl_pdf_obj *const *)c->c.v;
        n = c->c.n;
    }
    for (size_t i = 0; i < n; i++) {
        const sl_pdf_obj *s = NULL;
        if (sl_pdf_resolve(it->p, list[i], &s, err) || !s ||
            sl_pdf_stream_append(it->p, s, &all, err)) {
            sl_buf_release(&all);
            return s || err->code ? -1 : DECLINE(err, "a page's contents are missing");
        }
        sl_buf_addc(&all, '\n');
    }
    it->ngs = 0;
    it->gs[0] = (gstate){identity, 0, 0, 1, 0, 0, 0, NULL};
    it->tm = it->tlm = identity;
    it->any = false;
    it->space = false;
    it->marked = it->actual = 0;
    int rc = run(it, (const unsigned char *)(all.data ? all.data : ""), all.len, res, 0, err);
    sl_buf_release(&all);
    return rc < 0 ? -1 : 0;
}

static int walk(interp *it, const sl_pdf_obj *node, const sl_pdf_obj *res, int depth,
                unsigned *visits, sl_err *err)
{
    if (depth > MAX_TREE_DEPTH)
        return DECLINE(err, "a page tree deeper than %d", MAX_TREE_DEPTH);
    if (++*visits > 1000000)
        return DECLINE(err, "a page tree of more than a million nodes");
    const sl_pdf_obj *type, *kids, *r;
    if (!node || node->t != SL_PDF_DICT)
        return DECLINE(err, "a page-tree node that is not a dictionary");
    if (sl_pdf_get(it->p, node, "Type", &type, err) ||
        sl_pdf_get(it->p, node, "Kids", &kids, err) ||
        sl_pdf_get(it->p, node, "Resources", &r, err))
        return -1;
    if (r)
        res = r;
    if (sl_pdf_is_name(type, "Pages") || (!type && kids)) {
        if (!kids || kids->t != SL_PDF_ARRAY)
            return DECLINE(err, "a page-tree node without /Kids");
        for (size_t i = 0; i < kids->c.n; i++) {
            const sl_pdf_obj *k;
            if (kids->c.v[i]->t != SL_PDF_REF)
                return DECLINE(err, "a page-tree kid that is not a reference");
            if (sl_pdf_resolve(it->p, kids->c.v[i], &k, err) ||
                walk(it, k, res, depth + 1, visits, err))
                return -1;
        }
        return 0;
    }
    return page(it, node, res, err);
}

int sl_pdf_text(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                sl_err *err)
{
    sl_extract_limits dflt;
    if (!lim) {
        sl_extract_limits_default(&dflt);
        lim = &dflt;
    }
    sl_pdf *p = sl_pdf_open(data, len, lim, err);
    if (!p)
        return -1;
    size_t at = out->len;
    interp *it = calloc(1, sizeof *it);
    if (!it) {
        sl_pdf_close(p);
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    }
    it->p = p;
    sl_buf_init(&it->actual_text, 0);
    it->lim = lim;
    it->out = out;
    it->max_work = lim->max_unpacked;
    /* the output's limit counts this document's text only */
    sl_extract_limits mine = *lim;
    mine.max_output = lim->max_output + at < lim->max_output ? SIZE_MAX : lim->max_output + at;
    it->lim = &mine;
    const sl_pdf_obj *root, *pages;
    unsigned visits = 0;
    int rc = sl_pdf_get(p, sl_pdf_trailer(p), "Root", &root, err);
    if (!rc)
        rc = sl_pdf_get(p, root, "Pages", &pages, err);
    if (!rc && !pages)
        rc = DECLINE(err, "no page tree");
    if (!rc)
        rc = walk(it, pages, NULL, 0, &visits, err);
    font_free(it->fonts);
    sl_buf_release(&it->actual_text);
    free(it);
    sl_pdf_close(p);
    if (rc) {
        out->len = at;
        if (out->data)
            out->data[at] = '\0';
        if (err->code == SL_ELIMIT && err->setting && !strcmp(err->setting, "extract_max_output"))
            sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                         "its text is larger than extract_max_output (%zu bytes); raise "
                         "extract_max_output to read it",
                         lim->max_output);
        return -1;
    }
    return 0;
}
