/*
 * xls — legacy Excel workbooks: BIFF8 records in the Workbook stream of
 * an OLE2 compound file (extract/cfb), read as Dify reads them: pandas'
 * ExcelFile picks xlrd for the compound file's signature, and each
 * worksheet's DataFrame is printed as extract/sheet prints it
 * (docextract_research §3.8, [MS-XLS]).
 *
 * What xlrd gives pandas, and so what this gives extract/sheet: the
 * worksheets of BOUNDSHEET8 in order (chart, macro and VBA sheets are
 * not among pandas' sheet names); text from the shared strings (SST and
 * its CONTINUE records), LABEL and RSTRING; numbers from NUMBER, RK and
 * MULRK, made dates when their cell format (XF, FORMAT, the built-in
 * formats) is a date format by xlrd's rules; bools and errors from
 * BOOLERR (an error is NaN to pandas); a FORMULA's cached value; BLANK
 * and MULBLANK nothing.  xlrd counts every cell it keeps in the sheet's
 * rows and columns, an empty string too, so pandas sees that many.
 *
 * The stream is hostile: every record must fit in the stream, every
 * string in its record (an SST string in its CONTINUE chain), every
 * count in the bytes that hold it; a sheet must start at a BOF past the
 * workbook globals, and no two sheets at one place; columns stop at
 * BIFF8's 256 and cells at a budget from extract_max_output.  BIFF8's
 * narrow strings are Latin-1 whatever the CODEPAGE says (xlrd reads them
 * so); BIFF5 and older workbooks, whose strings are in the CODEPAGE, are
 * refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "extract/cfb.h"
#include "extract/extract_int.h"
#include "extract/sheet.h"

enum {
    R_FORMULA = 0x0006,
    R_STRING_B2 = 0x0007,
    R_EOF = 0x000A,
    R_ARRAY2 = 0x0021,
    R_DATEMODE = 0x0022,
    R_FILEPASS = 0x002F,
    R_TABLEOP_B2 = 0x0036,
    R_TABLEOP2 = 0x0037,
    R_CONTINUE = 0x003C,
    R_BOUNDSHEET = 0x0085,
    R_MULRK = 0x00BD,
    R_RSTRING = 0x00D6,
    R_XF = 0x00E0,
    R_SST = 0x00FC,
    R_LABELSST = 0x00FD,
    R_FORMULA3 = 0x0206,
    R_NUMBER = 0x0203,
    R_LABEL = 0x0204,
    R_BOOLERR = 0x0205,
    R_STRING = 0x0207,
    R_ARRAY = 0x0221,
    R_TABLEOP = 0x0236,
    R_RK = 0x027E,
    R_FORMULA4 = 0x0406,
    R_FORMAT = 0x041E,
    R_SHRFMLA = 0x04BC,
    R_BOF = 0x0809,
};

#define MAX_COLS 256 /* BIFF8's IV */

typedef struct {
    uint16_t type;
    size_t at;              /* the record's offset in the stream */
    const unsigned char *d; /* its data */
    size_t n;
} rec;

typedef struct {
    uint32_t pos;
    char *name;
} wsheet;

typedef struct {
    const unsigned char *p;
    size_t len;
    size_t globals_end; /* past the globals' EOF */
    const sl_extract_limits *lim;
    sl_sheet_strs sst;
    uint8_t *fmt;       /* per format key: 0 none, 1 not a date, 2 a date */
    bool std_done;      /* the built-in formats are in fmt */
    bool *xf_date;      /* per XF index: numbers in it are dates */
    size_t nxf, axf;
    bool date1904;
    wsheet *sheets;
    size_t nsheets;
    size_t cells, max_cells;
    const char *sheet;  /* the sheet being read, for messages */
} xbook;

static unsigned u16(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double f64(const unsigned char *p)
{
    uint64_t b = 0;
    for (int i = 7; i >= 0; i--)
        b = b << 8 | p[i];
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The record at *pos: 1 and *pos past it, 0 at the stream's end, -1
 * with err when its header or data runs past the end. */
static int next_rec(const xbook *b, size_t *pos, rec *r, sl_err *err)
{
    if (*pos >= b->len)
        return 0;
    if (b->len - *pos < 4)
        return sl_err_set(err, SL_EPARSE,
                          "the workbook stream ends in the middle of a record header at offset %zu",
                          *pos);
    r->type = (uint16_t)u16(b->p + *pos);
    r->n = u16(b->p + *pos + 2);
    r->at = *pos;
    if (r->n > b->len - *pos - 4)
        return sl_err_set(err, SL_EPARSE,
                          "a record (type 0x%04X at offset %zu) says it has %zu bytes, but the "
                          "workbook stream ends %zu bytes after its header",
                          r->type, *pos, r->n, b->len - *pos - 4);
    r->d = b->p + *pos + 4;
    *pos += 4 + r->n;
    return 1;
}

/* Appends n characters at p, UTF-16LE (wide) or Latin-1, as UTF-8; -1
 * for a lone surrogate, which Python's strict utf_16_le refuses. */
static int add_chars(sl_buf *o, const unsigned char *p, size_t n, bool wide)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = wide ? u16(p + 2 * i) : p[i];
        if (wide && c >= 0xD800 && c <= 0xDFFF) {
            uint32_t lo = i + 1 < n ? u16(p + 2 * (i + 1)) : 0;
            if (c >= 0xDC00 || lo < 0xDC00 || lo > 0xDFFF)
                return -1;
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
            i++;
        }
        if (c < 0x80)
            sl_buf_addc(o, (char)c);
        else if (c < 0x800) {
            sl_buf_addc(o, (char)(0xC0 | c >> 6));
            sl_buf_addc(o, (char)(0x80 | (c & 0x3F)));
        } else if (c < 0x10000) {
            sl_buf_addc(o, (char)(0xE0 | c >> 12));
            sl_buf_addc(o, (char)(0x80 | (c >> 6 & 0x3F)));
            sl_buf_addc(o, (char)(0x80 | (c & 0x3F)));
        } else {
            sl_buf_addc(o, (char)(0xF0 | c >> 18));
            sl_buf_addc(o, (char)(0x80 | (c >> 12 & 0x3F)));
            sl_buf_addc(o, (char)(0x80 | (c >> 6 & 0x3F)));
            sl_buf_addc(o, (char)(0x80 | (c & 0x3F)));
        }
    }
    return 0;
}

/* An XLUnicodeString (lenlen 2) or ShortXLUnicodeString (lenlen 1) at
 * d[at..n): its text, malloc'd; NULL with err. */
static char *uni_str(const unsigned char *d, size_t n, size_t at, size_t lenlen, const char *what,
                     sl_err *err)
{
    if (at + lenlen > n) {
        sl_err_set(err, SL_EPARSE, "%s has no room for its string's length", what);
        return NULL;
    }
    size_t cch = lenlen == 1 ? d[at] : u16(d + at);
    at += lenlen;
    if (!cch)
        return sl_xstrdup(""); /* a 0-length string may have no flags byte */
    if (at >= n) {
        sl_err_set(err, SL_EPARSE, "%s has no room for its string's flags", what);
        return NULL;
    }
    unsigned flags = d[at++];
    at += (flags & 0x08 ? 2 : 0) + (flags & 0x04 ? 4 : 0);
    size_t need = cch * (flags & 1 ? 2 : 1);
    if (at > n || need > n - at) {
        sl_err_set(err, SL_EPARSE, "%s's string of %zu characters runs past its record", what,
                   cch);
        return NULL;
    }
    sl_buf o;
    sl_buf_init(&o, SIZE_MAX);
    if (add_chars(&o, d + at, cch, flags & 1)) {
        sl_buf_release(&o);
        sl_err_set(err, SL_EPARSE, "%s's string is not valid UTF-16 (a lone surrogate)", what);
        return NULL;
    }
    return o.data ? sl_buf_detach(&o) : sl_xstrdup("");
}

/* The shared strings: the SST record and its CONTINUE records as chunks.
 * A string's characters may go on in the next chunk, which then starts
 * with a fresh flags byte (narrow or wide); its rich-text runs and
 * phonetic data are skipped wherever they fall. */
typedef struct {
    const rec *c;
    size_t n, i, pos;
} chunks;

static bool chunk_next(chunks *k)
{
    if (k->i + 1 >= k->n)
        return false;
    k->i++;
    k->pos = 0;
    return true;
}

static int skip_bytes(chunks *k, uint64_t n)
{
    while (n) {
        if (k->pos == k->c[k->i].n && !chunk_next(k))
            return -1;
        size_t take = k->c[k->i].n - k->pos < n ? k->c[k->i].n - k->pos : (size_t)n;
        k->pos += take;
        n -= take;
    }
    return 0;
}

static int read_sst(xbook *b, const rec *c, size_t nc, sl_err *err)
{
    if (c[0].n < 8)
        return sl_err_set(err, SL_EPARSE, "the shared string table (SST) record is %zu bytes, "
                                          "too short for its counts",
                          c[0].n);
    uint32_t count = u32(c[0].d + 4);
    size_t total = 0;
    for (size_t i = 0; i < nc; i++)
        total += c[i].n;
    /* each string takes 3 bytes at least */
    if (count > total / 3)
        return sl_err_set(err, SL_EPARSE,
                          "the shared string table says it holds %u strings, more than its %zu "
                          "bytes can",
                          count, total);
    chunks k = {.c = c, .n = nc, .pos = 8};
    sl_buf o;
    sl_buf_init(&o, SIZE_MAX);
    for (uint32_t s = 0; s < count; s++) {
        if (k.pos == k.c[k.i].n && !chunk_next(&k))
            goto short_;
        const unsigned char *d = k.c[k.i].d;
        size_t n = k.c[k.i].n;
        if (n - k.pos < 3)
            return sl_err_set(err, SL_EPARSE,
                              "shared string %u's header is split by a record boundary (at "
                              "offset %zu)",
                              s, k.c[k.i].at);
        size_t cch = u16(d + k.pos);
        unsigned flags = d[k.pos + 2];
        k.pos += 3;
        size_t runs = 0;
        uint64_t ext = 0;
        if (flags & 0x08) {
            if (n - k.pos < 2)
                goto split;
            runs = u16(d + k.pos);
            k.pos += 2;
        }
        if (flags & 0x04) {
            if (n - k.pos < 4)
                goto split;
            ext = u32(d + k.pos);
            k.pos += 4;
        }
        sl_buf_reset(&o);
        size_t got = 0;
        for (;;) {
            bool wide = flags & 1;
            size_t room = k.c[k.i].n - k.pos, avail = wide ? room / 2 : room;
            size_t take = avail < cch - got ? avail : cch - got;
            if (add_chars(&o, k.c[k.i].d + k.pos, take, wide)) {
                sl_buf_release(&o);
                return sl_err_set(err, SL_EPARSE,
                                  "shared string %u is not valid UTF-16 (a lone surrogate)", s);
            }
            k.pos += take * (wide ? 2 : 1);
            got += take;
            if (got == cch)
                break;
            /* the characters go on in a CONTINUE, after a new flags byte */
            if (!chunk_next(&k) || !k.c[k.i].n)
                goto short_;
            flags = k.c[k.i].d[0];
            k.pos = 1;
        }
        if (skip_bytes(&k, (uint64_t)runs * 4 + ext))
            goto short_;
        sl_sheet_strs_add(&b->sst, o.data ? sl_buf_detach(&o) : sl_xstrdup(""));
        sl_buf_init(&o, SIZE_MAX);
        continue;
    split:
        sl_buf_release(&o);
        return sl_err_set(err, SL_EPARSE,
                          "shared string %u's header is split by a record boundary (at offset "
                          "%zu)",
                          s, k.c[k.i].at);
    short_:
        sl_buf_release(&o);
        return sl_err_set(err, SL_EPARSE,
                          "the shared string table says it holds %u strings, but its records "
                          "end in string %u",
                          count, s);
    }
    sl_buf_release(&o);
    return 0;
}

/* xlrd's is_date_format_string: with quoted text, escaped characters
 * (after \ _ *), the characters $-+/(): and space, and [bracketed] parts
 * left out, a format is a date when it has more of y m d h s than of
 * 0 # ? (each counted alike); General, @ and the two scientific formats
 * never are. */
static bool date_format(const char *s)
{
    sl_buf r;
    sl_buf_init(&r, SIZE_MAX);
    int state = 0;
    for (const char *c = s; *c; c++) {
        if (state == 1) {
            if (*c == '"')
                state = 0;
        } else if (state == 2)
            state = 0;
        else if (*c == '"')
            state = 1;
        else if (strchr("\\_*", *c))
            state = 2;
        else if (!strchr("$-+/(): ", *c))
            sl_buf_addc(&r, *c);
    }
    /* drop [...] (an unclosed [ stays) */
    sl_buf t;
    sl_buf_init(&t, SIZE_MAX);
    const char *p = r.data ? r.data : "";
    while (*p) {
        const char *e = *p == '[' ? strchr(p, ']') : NULL;
        if (e)
            p = e + 1;
        else
            sl_buf_addc(&t, *p++);
    }
    const char *u = t.data ? t.data : "";
    bool date = false;
    if (strcmp(u, "0.00E+00") && strcmp(u, "##0.0E+0") && strcmp(u, "General") &&
        strcmp(u, "GENERAL") && strcmp(u, "general") && strcmp(u, "@")) {
        size_t dates = 0, nums = 0;
        for (; *u; u++) {
            if (strchr("ymdhsYMDHS", *u))
                dates++;
            else if (strchr("0#?", *u))
                nums++;
        }
        date = dates > nums;
    }
    sl_buf_release(&r);
    sl_buf_release(&t);
    return date;
}

/* xlrd's built-in date formats, where no FORMAT record gives the key. */
static void std_formats(xbook *b)
{
    static const unsigned short ranges[][2] = {{14, 22}, {27, 36}, {45, 47}, {50, 58}, {71, 81}};
    static const unsigned short others[][2] = {{0, 13}, {37, 44}, {48, 49}, {59, 62}, {67, 70}};
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        for (unsigned k = ranges[i][0]; k <= ranges[i][1]; k++)
            if (!b->fmt[k])
                b->fmt[k] = 2;
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        for (unsigned k = others[i][0]; k <= others[i][1]; k++)
            if (!b->fmt[k])
                b->fmt[k] = 1;
    b->std_done = true;
}

static int read_globals(xbook *b, sl_err *err)
{
    size_t pos = 0;
    rec r;
    int got = next_rec(b, &pos, &r, err);
    if (got < 0)
        return -1;
    if (!got || r.type != R_BOF || r.n < 4)
        return sl_err_set(err, SL_EPARSE,
                          "the workbook stream does not start with a BOF record (it starts "
                          "with record type 0x%04X)",
                          got ? r.type : 0);
    unsigned version = u16(r.d), dt = u16(r.d + 2);
    if (version != 0x0600)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "this workbook is in %s, which sluice does not read (only BIFF8, Excel "
                          "97 to 2003); open it in a spreadsheet program and save it as .xlsx",
                          version == 0x0500 ? "BIFF5 (Excel 5.0 or 95)" : "an older BIFF version");
    if (dt != 0x0005)
        return sl_err_set(err, SL_EPARSE,
                          "the workbook stream starts with a BOF of type 0x%04X, not the "
                          "workbook globals (0x0005)",
                          dt);
    for (;;) {
        got = next_rec(b, &pos, &r, err);
        if (got < 0)
            return -1;
        if (!got)
            return sl_err_set(err, SL_EPARSE,
                              "the workbook globals end without an EOF record");
        switch (r.type) {
        case R_EOF:
            b->globals_end = pos;
            return 0;
        case R_FILEPASS:
            return sl_err_set(err, SL_EUNSUPPORTED,
                              "Workbook is encrypted: it has a password to open, and sluice "
                              "does not decrypt workbooks; save it without a password");
        case R_DATEMODE:
            if (r.n >= 2)
                b->date1904 = u16(r.d) != 0;
            break;
        case R_FORMAT: {
            if (r.n < 2)
                return sl_err_set(err, SL_EPARSE, "a FORMAT record at offset %zu is too short",
                                  r.at);
            char *s = uni_str(r.d, r.n, 2, 2, "a FORMAT record", err);
            if (!s)
                return -1;
            b->fmt[u16(r.d)] = date_format(s) ? 2 : 1;
            free(s);
            break;
        }
        case R_XF:
            if (r.n < 4)
                return sl_err_set(err, SL_EPARSE, "an XF record at offset %zu is too short",
                                  r.at);
            if (!b->std_done)
                std_formats(b);
            if (b->nxf == b->axf) {
                b->axf = b->axf ? b->axf * 2 : 64;
                b->xf_date = sl_xrealloc(b->xf_date, b->axf * sizeof *b->xf_date);
            }
            b->xf_date[b->nxf++] = b->fmt[u16(r.d + 2)] == 2;
            break;
        case R_BOUNDSHEET: {
            if (r.n < 6)
                return sl_err_set(err, SL_EPARSE,
                                  "a BOUNDSHEET record at offset %zu is too short", r.at);
            if (r.d[5] != 0) /* a chart, macro or VBA sheet */
                break;
            char *name = uni_str(r.d, r.n, 6, 1, "a BOUNDSHEET record", err);
            if (!name)
                return -1;
            if ((b->nsheets & (b->nsheets - 1)) == 0)
                b->sheets = sl_xrealloc(b->sheets, (b->nsheets ? b->nsheets * 2 : 1) *
                                                       sizeof *b->sheets);
            b->sheets[b->nsheets++] = (wsheet){.pos = u32(r.d), .name = name};
            break;
        }
        case R_SST: {
            if (b->sst.n)
                return sl_err_set(err, SL_EPARSE,
                                  "the workbook has a second shared string table at offset %zu",
                                  r.at);
            rec *c = NULL;
            size_t nc = 0;
            for (;;) {
                if ((nc & (nc - 1)) == 0)
                    c = sl_xrealloc(c, (nc ? nc * 2 : 1) * sizeof *c);
                c[nc++] = r;
                size_t at = pos;
                rec nx;
                int g = next_rec(b, &at, &nx, err);
                if (g < 0) {
                    free(c);
                    return -1;
                }
                if (!g || nx.type != R_CONTINUE)
                    break;
                r = nx;
                pos = at;
            }
            int rc = read_sst(b, c, nc, err);
            free(c);
            if (rc)
                return -1;
            break;
        }
        default:
            break;
        }
    }
}

/* ------------------------------------------------------------------ */
/* cells                                                              */

/* xlrd's xldate_as_datetime and pandas' reading of it: days from the
 * epoch (1904-01-01; 1899-12-31 under 60, 1899-12-30 from 60, for
 * Excel's 1900-02-29) truncated, the fraction rounded to the
 * millisecond; on the epoch's first day (1899-12-31 or 1904-01-01) a
 * time of day.  1 when Python overflows (outside years 1 to 9999):
 * pandas keeps the number as a float; -1 for NaN (Python's ValueError:
 * Dify skips the sheet). */
static int xl_date(double v, bool d1904, sl_sheet_cell *c)
{
    if (v != v)
        return -1;
    if (!(v > -3e6 && v < 3e6)) /* 8000 years from 1900: past Python's range */
        return 1;
    int64_t epoch = d1904      ? sl_sheet_days(1904, 1, 1)
                    : v < 60.0 ? sl_sheet_days(1899, 12, 31)
                               : sl_sheet_days(1899, 12, 30);
    double days = v < 0 ? -sl_floor(-v) : sl_floor(v);
    double x = (v - days) * 86400000.0, ms = sl_floor(x);
    /* Python's round(): halves to even */
    if (x - ms > 0.5 || (x - ms == 0.5 && sl_fmod(ms, 2) != 0))
        ms += 1;
    int64_t us = (epoch + (int64_t)days) * SL_SHEET_US_DAY + (int64_t)ms * 1000;
    if (us < sl_sheet_days(1, 1, 1) * SL_SHEET_US_DAY ||
        us >= sl_sheet_days(10000, 1, 1) * SL_SHEET_US_DAY)
        return 1;
    int64_t first = d1904 ? sl_sheet_days(1904, 1, 1) : sl_sheet_days(1899, 12, 31);
    int64_t day =
        us >= 0 ? us / SL_SHEET_US_DAY : -((-us + SL_SHEET_US_DAY - 1) / SL_SHEET_US_DAY);
    if (day == first) {
        c->kind = SL_CELL_TIME;
        c->us = us - day * SL_SHEET_US_DAY;
    } else {
        c->kind = SL_CELL_DATE;
        c->us = us;
    }
    return 0;
}

static int put(xbook *b, sl_sheet *sh, unsigned row, unsigned col, sl_sheet_cell *c, sl_err *err)
{
    if (col >= MAX_COLS)
        return sl_err_set(err, SL_EPARSE,
                          "a cell of sheet \"%s\" is in column %u, past BIFF8's last column "
                          "(256, IV)",
                          b->sheet, col + 1);
    if (++b->cells > b->max_cells)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                            "the workbook has more than %zu cells, more than its text can hold "
                            "under %zu bytes",
                            b->max_cells, b->lim->max_output);
    if (row + 1 > sh->nrows)
        sh->nrows = row + 1;
    if (col + 1 > sh->ncols)
        sh->ncols = col + 1;
    c->row = row + 1;
    c->col = col + 1;
    if (c->kind == SL_CELL_STR && !*c->s)
        c->kind = SL_CELL_EMPTY; /* "" is missing to pandas */
    /* a later empty cell still replaces an earlier value */
    sl_sheet_add(sh, c);
    return 0;
}

/* A number in cell format xf: a date, or pandas' int or float. */
static int put_num(xbook *b, sl_sheet *sh, unsigned row, unsigned col, unsigned xf, double v,
                   sl_err *err)
{
    if (xf >= b->nxf && !(xf == 0 && !b->nxf))
        return sl_err_set(err, SL_EPARSE,
                          "a cell of sheet \"%s\" (row %u, column %u) uses cell format %u, but "
                          "the workbook has %zu",
                          b->sheet, row + 1, col + 1, xf, b->nxf);
    sl_sheet_cell c = {.kind = SL_CELL_NUM, .num = v};
    if (xf < b->nxf && b->xf_date[xf]) {
        int rc = xl_date(v, b->date1904, &c);
        if (rc < 0)
            sh->bad = true;
        if (rc)
            c = (sl_sheet_cell){.kind = SL_CELL_NUM, .num = v};
    } else if (v != v)
        c.kind = SL_CELL_ERR;
    else
        c.integral = sl_sheet_as_int(v);
    return put(b, sh, row, col, &c, err);
}

static double rk(const unsigned char *p)
{
    uint32_t v = u32(p);
    double d;
    if (v & 2) {
        int32_t i = (int32_t)(v & ~UINT32_C(3));
        d = (double)(i / 4);
    } else {
        unsigned char raw[8] = {0, 0, 0, 0, (unsigned char)(p[0] & 0xFC), p[1], p[2], p[3]};
        d = f64(raw);
    }
    return v & 1 ? d / 100.0 : d;
}

/* A STRING record (a formula's text) and its CONTINUE records: the
 * characters of each piece after its flags byte. */
static char *string_rec(xbook *b, const rec *r, size_t *pos, sl_err *err)
{
    if (r->n < 2) {
        sl_err_set(err, SL_EPARSE, "a STRING record at offset %zu is too short", r->at);
        return NULL;
    }
    size_t want = u16(r->d), got = 0, at = 2;
    sl_buf o;
    sl_buf_init(&o, SIZE_MAX);
    rec cur = *r;
    while (got < want) {
        if (at >= cur.n)
            goto cut;
        bool wide = cur.d[at++] & 1;
        size_t avail = wide ? (cur.n - at) / 2 : cur.n - at;
        size_t take = avail < want - got ? avail : want - got;
        if (add_chars(&o, cur.d + at, take, wide)) {
            sl_buf_release(&o);
            sl_err_set(err, SL_EPARSE,
                       "a formula's text (STRING at offset %zu) is not valid UTF-16", r->at);
            return NULL;
        }
        got += take;
        if (got == want)
            break;
        if (next_rec(b, pos, &cur, err) <= 0 || cur.type != R_CONTINUE)
            goto cut;
        at = 0;
    }
    return o.data ? sl_buf_detach(&o) : sl_xstrdup("");
cut:
    sl_buf_release(&o);
    if (!err || !err->code)
        sl_err_set(err, SL_EPARSE,
                   "a formula's text (STRING at offset %zu) has %zu characters, but its records "
                   "end before them",
                   r->at, want);
    return NULL;
}

static int formula(xbook *b, sl_sheet *sh, const rec *r, size_t *pos, sl_err *err)
{
    if (r->n < 16)
        return sl_err_set(err, SL_EPARSE, "a FORMULA record at offset %zu is too short", r->at);
    unsigned row = u16(r->d), col = u16(r->d + 2), xf = u16(r->d + 4);
    const unsigned char *res = r->d + 6;
    if (res[6] != 0xFF || res[7] != 0xFF)
        return put_num(b, sh, row, col, xf, f64(res), err);
    sl_sheet_cell c = {0};
    switch (res[0]) {
    case 0: {
        /* the text is in a STRING record after it, maybe after the
         * formula's shared, array or table record */
        rec s;
        int g = next_rec(b, pos, &s, err);
        if (g > 0 && (s.type == R_SHRFMLA || s.type == R_ARRAY || s.type == R_ARRAY2 ||
                      s.type == R_TABLEOP || s.type == R_TABLEOP2 || s.type == R_TABLEOP_B2))
            g = next_rec(b, pos, &s, err);
        if (g < 0)
            return -1;
        if (!g || (s.type != R_STRING && s.type != R_STRING_B2))
            return sl_err_set(err, SL_EPARSE,
                              "a formula's text result (FORMULA at offset %zu) is not followed "
                              "by its STRING record",
                              r->at);
        char *t = string_rec(b, &s, pos, err);
        if (!t)
            return -1;
        sl_sheet_strs_add(&sh->pool, t);
        c.kind = SL_CELL_STR;
        c.s = t;
        break;
    }
    case 1:
        c.kind = SL_CELL_BOOL;
        c.num = res[2] != 0;
        break;
    case 2:
        c.kind = SL_CELL_ERR;
        break;
    case 3:
        c.kind = SL_CELL_STR;
        c.s = "";
        break;
    default:
        return sl_err_set(err, SL_EPARSE,
                          "a FORMULA record at offset %zu has a result of unknown type 0x%02X",
                          r->at, res[0]);
    }
    return put(b, sh, row, col, &c, err);
}

static int too_short(const rec *r, const char *what, sl_err *err)
{
    return sl_err_set(err, SL_EPARSE, "a %s record at offset %zu is too short (%zu bytes)", what,
                      r->at, r->n);
}

static int read_sheet(xbook *b, const wsheet *ws, sl_sheet *sh, sl_err *err)
{
    size_t pos = ws->pos;
    rec r;
    int got = next_rec(b, &pos, &r, err);
    if (got < 0)
        return -1;
    if (!got || r.type != R_BOF)
        return sl_err_set(err, SL_EPARSE,
                          "the sheet \"%s\" should start with a BOF record at offset %u, but "
                          "there is %s",
                          ws->name, ws->pos, got ? "another record" : "nothing");
    for (;;) {
        got = next_rec(b, &pos, &r, err);
        if (got < 0)
            return -1;
        if (!got)
            return sl_err_set(err, SL_EPARSE, "the sheet \"%s\" ends without an EOF record",
                              ws->name);
        const unsigned char *d = r.d;
        sl_sheet_cell c = {0};
        int rc = 0;
        switch (r.type) {
        case R_EOF:
            return 0;
        case R_NUMBER:
            if (r.n < 14)
                return too_short(&r, "NUMBER", err);
            rc = put_num(b, sh, u16(d), u16(d + 2), u16(d + 4), f64(d + 6), err);
            break;
        case R_RK:
            if (r.n < 10)
                return too_short(&r, "RK", err);
            rc = put_num(b, sh, u16(d), u16(d + 2), u16(d + 4), rk(d + 6), err);
            break;
        case R_MULRK: {
            if (r.n < 6 || (r.n - 6) % 6)
                return too_short(&r, "MULRK", err);
            unsigned first = u16(d + 2), last = u16(d + r.n - 2);
            size_t n = (r.n - 6) / 6;
            if (last < first || last - first + 1 != n)
                return sl_err_set(err, SL_EPARSE,
                                  "a MULRK record at offset %zu spans columns %u to %u but holds "
                                  "%zu values",
                                  r.at, first + 1, last + 1, n);
            for (size_t i = 0; i < n && !rc; i++)
                rc = put_num(b, sh, u16(d), first + (unsigned)i, u16(d + 4 + 6 * i),
                             rk(d + 6 + 6 * i), err);
            break;
        }
        case R_LABELSST: {
            if (r.n < 10)
                return too_short(&r, "LABELSST", err);
            uint32_t i = u32(d + 6);
            if (i >= b->sst.n)
                return sl_err_set(err, SL_EPARSE,
                                  "a cell of sheet \"%s\" (row %u, column %u) names shared "
                                  "string %u, but the workbook has %zu",
                                  ws->name, u16(d) + 1, u16(d + 2) + 1, i, b->sst.n);
            c.kind = SL_CELL_STR;
            c.s = b->sst.v[i];
            rc = put(b, sh, u16(d), u16(d + 2), &c, err);
            break;
        }
        case R_LABEL:
        case R_RSTRING: {
            if (r.n < 6)
                return too_short(&r, r.type == R_LABEL ? "LABEL" : "RSTRING", err);
            const char *what = r.type == R_LABEL ? "a LABEL record" : "an RSTRING record";
            char *s = uni_str(d, r.n, 6, 2, what, err);
            if (!s)
                return -1;
            sl_sheet_strs_add(&sh->pool, s);
            c.kind = SL_CELL_STR;
            c.s = s;
            rc = put(b, sh, u16(d), u16(d + 2), &c, err);
            break;
        }
        case R_BOOLERR:
            if (r.n < 8)
                return too_short(&r, "BOOLERR", err);
            c.kind = d[7] ? SL_CELL_ERR : SL_CELL_BOOL;
            c.num = d[6] != 0;
            rc = put(b, sh, u16(d), u16(d + 2), &c, err);
            break;
        case R_FORMULA:
        case R_FORMULA3:
        case R_FORMULA4:
            rc = formula(b, sh, &r, &pos, err);
            break;
        case R_BOF: {
            /* an embedded chart: its records up to its EOF are not cells */
            do
                got = next_rec(b, &pos, &r, err);
            while (got > 0 && r.type != R_EOF);
            if (got < 0)
                return -1;
            if (!got)
                return sl_err_set(err, SL_EPARSE,
                                  "a chart in sheet \"%s\" ends without an EOF record", ws->name);
            break;
        }
        default:
            break;
        }
        if (rc)
            return -1;
    }
}

/* ------------------------------------------------------------------ */

/* Bare BIFF2 to BIFF4 files (no compound file) pandas also sends to
 * xlrd: their BOF records. */
static bool old_biff(const unsigned char *p, size_t len)
{
    return len >= 4 && (p[0] == 0x09 && (p[1] == 0x00 || p[1] == 0x02 || p[1] == 0x04)) &&
           (u16(p + 2) == 4 || u16(p + 2) == 6);
}

bool sl_extract_xls_is(const void *data, size_t len)
{
    return sl_cfb_is(data, len) || old_biff(data, len);
}

static int read_book(xbook *b, sl_buf *out, sl_err *err)
{
    if (read_globals(b, err))
        return -1;
    for (size_t i = 0; i < b->nsheets; i++) {
        const wsheet *ws = &b->sheets[i];
        if (ws->pos < b->globals_end || ws->pos >= b->len)
            return sl_err_set(err, SL_EPARSE,
                              "the sheet \"%s\" starts at offset %u, %s", ws->name, ws->pos,
                              ws->pos >= b->len ? "past the end of the workbook stream"
                                                : "inside the workbook globals");
        for (size_t j = 0; j < i; j++)
            if (b->sheets[j].pos == ws->pos)
                return sl_err_set(err, SL_EPARSE,
                                  "the sheets \"%s\" and \"%s\" both start at offset %u",
                                  b->sheets[j].name, ws->name, ws->pos);
    }
    for (size_t i = 0; i < b->nsheets && !out->toobig; i++) {
        sl_sheet sh = {0};
        b->sheet = b->sheets[i].name;
        int rc = read_sheet(b, &b->sheets[i], &sh, err);
        if (!rc) {
            sl_sheet_sort(&sh);
            /* cells pandas sees as missing only widen the table */
            size_t w = 0;
            for (size_t k = 0; k < sh.n; k++)
                if (sh.v[k].kind != SL_CELL_EMPTY)
                    sh.v[w++] = sh.v[k];
            sh.n = w;
            if (!sh.bad)
                sl_sheet_render(&sh, out);
        }
        sl_sheet_release(&sh);
        if (rc)
            return -1;
    }
    return 0;
}

int sl_extract_xls(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    if (!sl_cfb_is(data, len)) {
        if (old_biff(data, len))
            return sl_err_set(err, SL_EUNSUPPORTED,
                              "this is an Excel 2.x to 4.0 worksheet (BIFF2 to BIFF4), which "
                              "sluice does not read; open it in a spreadsheet program and save "
                              "it as .xlsx");
        return sl_err_set(err, SL_EPARSE, "this is not an .xls workbook (no OLE2 signature)");
    }
    sl_cfb *f = sl_cfb_open(data, len, lim, err);
    if (!f)
        return -1;
    int i = sl_cfb_find(f, SL_CFB_ROOT_ENTRY, "Workbook");
    if (i < 0 || sl_cfb_type(f, i) != SL_CFB_STREAM)
        i = sl_cfb_find(f, SL_CFB_ROOT_ENTRY, "Book");
    if (i < 0 || sl_cfb_type(f, i) != SL_CFB_STREAM) {
        sl_cfb_free(f);
        return sl_err_set(err, SL_EPARSE,
                          "Can't find workbook in OLE2 compound document: this compound file "
                          "has no Workbook stream (is it an Excel file?)");
    }
    sl_buf stream;
    sl_buf_init(&stream, SIZE_MAX);
    if (sl_cfb_read(f, i, &stream, err)) {
        sl_buf_release(&stream);
        sl_cfb_free(f);
        return -1;
    }
    sl_cfb_free(f);
    xbook b = {.p = (const unsigned char *)(stream.data ? stream.data : ""),
               .len = stream.len,
               .lim = lim,
               .fmt = sl_xcalloc(65536, 1),
               .max_cells = lim->max_output / 8 > 64 ? lim->max_output / 8 : 64};
    sl_buf text;
    sl_buf_init(&text, lim->max_output < SIZE_MAX - 1 ? lim->max_output + 1 : SIZE_MAX);
    int rc = read_book(&b, &text, err);
    for (size_t k = 0; k < b.nsheets; k++)
        free(b.sheets[k].name);
    free(b.sheets);
    free(b.xf_date);
    free(b.fmt);
    sl_sheet_strs_free(&b.sst);
    sl_buf_release(&stream);
    if (!rc && text.toobig)
        rc = sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                          "the Excel file's text is over %zu bytes", lim->max_output);
    else if (!rc && sl_buf_add(out, text.data ? text.data : "", text.len))
        rc = sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                          "the Excel file's text is too big for its buffer");
    sl_buf_release(&text);
    return rc;
}
