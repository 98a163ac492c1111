/*
 * ooxml — the Office Open XML formats: docx (sl_extract_docx), xlsx
 * (sl_extract_xlsx) and pptx (sl_extract_pptx), each a zip of XML parts
 * (extract/zip, extract/xml), rendered as Dify renders them through
 * python-docx, pandas and unstructured (docs/documents.md,
 * docextract_research §3.6, §3.8, §3.9).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "extract/extract_int.h"
#include "extract/sheet.h"
#include "extract/xml.h"
#include "extract/zip.h"

#define NS_W "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#define NS_PKG_REL "http://schemas.openxmlformats.org/package/2006/relationships"
#define NS_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define REL_OFFICE_DOC NS_REL "/officeDocument"

/* One document being read: its zip, limits and running XML node count. */
typedef struct {
    sl_zip *zip;
    const sl_extract_limits *lim;
    size_t nodes;
} pkg;

/* Reads and parses the part `name`; NULL with err. */
static xmlDoc *part(pkg *p, const char *name, sl_err *err)
{
    sl_buf b;
    sl_buf_init(&b, SIZE_MAX);
    if (sl_zip_read(p->zip, name, &b, err)) {
        sl_buf_release(&b);
        return NULL;
    }
    xmlDoc *d = sl_xml_parse(name, b.data ? b.data : "", b.len, p->lim, SL_XML_NO_DTD, &p->nodes,
                             err);
    sl_buf_release(&b);
    return d;
}

/* The zip member a relationship's Target names, seen from the part
 * `source` ("" for the package's own _rels/.rels): absolute targets drop
 * their "/", relative ones join the source's folder, "." and ".." are
 * resolved. */
static char *resolve(const char *source, const char *target)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    if (target[0] != '/') {
        const char *slash = strrchr(source, '/');
        if (slash)
            sl_buf_add(&b, source, (size_t)(slash - source + 1));
    }
    sl_buf_adds(&b, target[0] == '/' ? target + 1 : target);
    /* collapse "x/../" and "./" */
    char *s = b.data ? b.data : sl_xstrdup("");
    if (!b.data)
        return s;
    char *w = s;
    for (char *r = s; *r;) {
        char *e = strchr(r, '/');
        size_t n = e ? (size_t)(e - r) : strlen(r);
        if (n == 1 && r[0] == '.') {
        } else if (n == 2 && r[0] == '.' && r[1] == '.') {
            if (w > s) {
                w--;
                while (w > s && w[-1] != '/')
                    w--;
            }
        } else {
            memmove(w, r, n);
            w += n;
            if (e)
                *w++ = '/';
        }
        r += n + (e ? 1 : 0);
    }
    *w = 0;
    return s;
}

/* The target of the first relationship of type `type` in the rels part
 * `rels` for the part `source`; NULL (err set) when there is none. */
static char *rel_target(pkg *p, const char *rels, const char *source, const char *type,
                        sl_err *err)
{
    xmlDoc *d = part(p, rels, err);
    if (!d)
        return NULL;
    char *found = NULL;
    xmlNode *root = sl_xml_root(d);
    for (xmlNode *r = sl_xml_child(root, NS_PKG_REL, "Relationship"); r && !found;
         r = sl_xml_next(r, NS_PKG_REL, "Relationship")) {
        const char *t = sl_xml_attr(r, NULL, "Type"), *target = sl_xml_attr(r, NULL, "Target");
        if (t && target && !strcmp(t, type))
            found = resolve(source, target);
    }
    sl_xml_free(d);
    if (!found)
        sl_err_set(err, SL_EPARSE, "%s names no part of type %s", rels, type);
    return found;
}

/* The package's main part (the officeDocument relationship's target). */
static char *main_part(pkg *p, sl_err *err)
{
    if (!sl_zip_has(p->zip, "[Content_Types].xml"))
        return sl_err_set(err, SL_EPARSE,
                          "There is no item named '[Content_Types].xml' in the archive (not an "
                          "Office Open XML package)"),
               NULL;
    return rel_target(p, "_rels/.rels", "", REL_OFFICE_DOC, err);
}

/* Python's str.isspace for the code point at s (UTF-8), with its length. */
static bool py_space(const unsigned char *s, size_t n, size_t *len)
{
    *len = 1;
    if (s[0] == ' ' || (s[0] >= 0x09 && s[0] <= 0x0d) || (s[0] >= 0x1c && s[0] <= 0x1f))
        return true;
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0)) {
        *len = 2;
        return true;
    }
    if (n >= 3) {
        uint32_t cp = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
        if ((s[0] & 0xf0) == 0xe0 &&
            (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
             cp == 0x202f || cp == 0x205f || cp == 0x3000)) {
            *len = 3;
            return true;
        }
    }
    return false;
}

static bool py_blank(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0, k; i < n; i += k)
        if (!py_space(p + i, n - i, &k))
            return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* docx                                                               */

/* python-docx 1.2's run text: w:t, w:tab and w:ptab as a tab, a line
 * break (w:br of type textWrapping, the default) and w:cr as a newline,
 * a page or column break as nothing, w:noBreakHyphen as "-". */
static void run_text(const xmlNode *r, sl_buf *out)
{
    for (xmlNode *c = r->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || !sl_xml_is(c, NS_W, (const char *)c->name))
            continue;
        const char *n = (const char *)c->name;
        if (!strcmp(n, "t"))
            sl_xml_text(c, out);
        else if (!strcmp(n, "tab") || !strcmp(n, "ptab"))
            sl_buf_addc(out, '\t');
        else if (!strcmp(n, "cr"))
            sl_buf_addc(out, '\n');
        else if (!strcmp(n, "noBreakHyphen"))
            sl_buf_addc(out, '-');
        else if (!strcmp(n, "br")) {
            const char *type = sl_xml_attr(c, NS_W, "type");
            if (!type || !strcmp(type, "textWrapping"))
                sl_buf_addc(out, '\n');
        }
    }
}

/* Paragraph.text: the direct runs and the runs of direct hyperlinks. */
static void para_text(const xmlNode *p, sl_buf *out)
{
    for (xmlNode *c = p->children; c; c = c->next) {
        if (sl_xml_is(c, NS_W, "r"))
            run_text(c, out);
        else if (sl_xml_is(c, NS_W, "hyperlink"))
            for (xmlNode *r = sl_xml_child(c, NS_W, "r"); r; r = sl_xml_next(r, NS_W, "r"))
                run_text(r, out);
    }
}

/* An integer attribute w:val of tcPr's child `what`, or def. */
static long tc_prop(const xmlNode *tc, const char *what, long def, bool *present)
{
    xmlNode *pr = sl_xml_child(tc, NS_W, "tcPr");
    xmlNode *e = sl_xml_child(pr, NS_W, what);
    if (present)
        *present = e != NULL;
    const char *v = sl_xml_attr(e, NS_W, "val");
    if (!e || !v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || end == v ? def : n;
}

/* The widest a grid span may be: python-docx repeats a cell that many
 * times; beyond this a table is broken, and skipped as Dify skips a table
 * that raises. */
#define MAX_SPAN 1000

/* One w:tc of a row: where it starts on the grid, its span and the cell
 * whose text it shows (itself, or for vMerge="continue" the first cell of
 * its vertical span). */
typedef struct {
    size_t off;
    long span;
    const xmlNode *origin;
    long origin_span;
} tcell;

static void cell_text(const xmlNode *tc, sl_buf *out)
{
    bool first = true;
    for (xmlNode *p = sl_xml_child(tc, NS_W, "p"); p; p = sl_xml_next(p, NS_W, "p")) {
        if (!first)
            sl_buf_addc(out, '\n');
        first = false;
        para_text(p, out);
    }
}

/* Lays out one w:tr against the row above; -1 when python-docx would
 * raise (a continued merge with nothing above it at its grid offset). */
static int lay_row(const xmlNode *tr, const tcell *above, size_t nabove, tcell **row, size_t *n)
{
    xmlNode *pr = sl_xml_child(tr, NS_W, "trPr");
    xmlNode *gb = sl_xml_child(pr, NS_W, "gridBefore");
    const char *gbv = sl_xml_attr(gb, NS_W, "val");
    long before = gbv ? strtol(gbv, NULL, 10) : 0;
    if (before < 0 || before > MAX_SPAN)
        return -1;
    size_t off = (size_t)before, k = 0, alloc = 0;
    tcell *v = NULL;
    for (xmlNode *tc = sl_xml_child(tr, NS_W, "tc"); tc; tc = sl_xml_next(tc, NS_W, "tc")) {
        long span = tc_prop(tc, "gridSpan", 1, NULL);
        if (span > MAX_SPAN || span < 0) {
            free(v);
            return -1;
        }
        bool merged;
        xmlNode *tcpr = sl_xml_child(tc, NS_W, "tcPr");
        const char *vm = sl_xml_attr(sl_xml_child(tcpr, NS_W, "vMerge"), NS_W, "val");
        merged = sl_xml_child(tcpr, NS_W, "vMerge") && (!vm || !strcmp(vm, "continue"));
        if (k == alloc) {
            alloc = alloc ? alloc * 2 : 8;
            v = sl_xrealloc(v, alloc * sizeof *v);
        }
        tcell *c = &v[k++];
        c->off = off;
        c->span = span;
        c->origin = tc;
        c->origin_span = span;
        if (merged) {
            /* the first cell above that starts at this offset (offsets
             * never decrease along a row) */
            size_t lo = 0, hi = nabove;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (above[mid].off < off)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            const tcell *up = lo < nabove && above[lo].off == off ? &above[lo] : NULL;
            if (!up) {
                free(v);
                return -1;
            }
            c->origin = up->origin;
            c->origin_span = up->origin_span;
        }
        off += (size_t)(span > 0 ? span : 0);
    }
    *row = v;
    *n = k;
    return 0;
}

/* The cells' text with "\n" as "<br>". */
static void add_cell(sl_buf *out, const xmlNode *tc)
{
    sl_buf t;
    sl_buf_init(&t, 0);
    cell_text(tc, &t);
    for (size_t i = 0; i < t.len; i++) {
        if (t.data[i] == '\n')
            sl_buf_adds(out, "<br>");
        else
            sl_buf_addc(out, t.data[i]);
    }
    sl_buf_release(&t);
}

/* A w:tbl as Dify's markdown table (each line ending in "\n"); 1 when
 * the table is skipped (every cell blank, or python-docx would raise). */
static int table_md(const xmlNode *tbl, sl_buf *out)
{
    size_t at = out->len, nrow = 0, nabove = 0;
    tcell *above = NULL;
    bool any = false;
    int rc = 0;
    sl_buf t;
    sl_buf_init(&t, 0);
    for (xmlNode *tr = sl_xml_child(tbl, NS_W, "tr"); tr; tr = sl_xml_next(tr, NS_W, "tr")) {
        tcell *row;
        size_t n;
        if (lay_row(tr, above, nabove, &row, &n)) {
            rc = 1;
            break;
        }
        size_t cells = 0;
        sl_buf_adds(out, "|");
        for (size_t i = 0; i < n && !out->toobig; i++)
            for (long s = 0; s < row[i].origin_span && !out->toobig; s++) {
                sl_buf_adds(out, " ");
                add_cell(out, row[i].origin);
                sl_buf_adds(out, " |");
                cells++;
                if (!any) {
                    sl_buf_reset(&t);
                    cell_text(row[i].origin, &t);
                    any = !py_blank(t.data ? t.data : "", t.len);
                }
            }
        if (!cells)
            sl_buf_adds(out, "  |"); /* "| " + "" + " |" */
        sl_buf_addc(out, '\n');
        if (nrow++ == 0) {
            sl_buf_adds(out, "|");
            for (size_t i = 0; i < cells; i++)
                sl_buf_adds(out, " --- |");
            if (!cells)
                sl_buf_adds(out, "  |");
            sl_buf_addc(out, '\n');
        }
        free(above);
        above = row;
        nabove = n;
        if (out->toobig)
            break;
    }
    free(above);
    sl_buf_release(&t);
    if (rc || !any || !nrow) {
        out->len = at;
        if (out->data)
            out->data[at] = 0;
        return 1;
    }
    return 0;
}

static int docx_body(pkg *p, const char *main, sl_buf *out, sl_err *err)
{
    xmlDoc *d = part(p, main, err);
    if (!d)
        return -1;
    xmlNode *root = sl_xml_root(d);
    xmlNode *body = sl_xml_is(root, NS_W, "document") ? sl_xml_child(root, NS_W, "body") : NULL;
    if (!body) {
        sl_xml_free(d);
        return sl_err_set(err, SL_EPARSE, "%s is not a Word document (no w:document/w:body)", main);
    }
    bool first = true;
    for (xmlNode *c = body->children; c && !out->toobig; c = c->next) {
        bool para = sl_xml_is(c, NS_W, "p");
        if (!para && !sl_xml_is(c, NS_W, "tbl"))
            continue;
        size_t at = out->len;
        if (!first)
            sl_buf_addc(out, '\n');
        if (para)
            para_text(c, out);
        else if (table_md(c, out)) {
            out->len = at; /* a skipped table adds no item */
            if (out->data)
                out->data[at] = 0;
            continue;
        }
        first = false;
    }
    sl_xml_free(d);
    return 0;
}

static int docx_try(pkg *p, sl_buf *out, sl_err *err)
{
    char *main = main_part(p, err);
    if (!main)
        return -1;
    int rc = docx_body(p, main, out, err);
    free(main);
    return rc;
}

/* Dify's docx output is built in a buffer capped just past max_output, so
 * a table of huge spans stops early; sl_extract_text reports the limit. */
static void out_init(sl_buf *b, const sl_extract_limits *lim)
{
    sl_buf_init(b, lim->max_output < SIZE_MAX - 1 ? lim->max_output + 1 : SIZE_MAX);
}

static int out_done(sl_buf *b, const char *kind, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    int rc = 0;
    if (b->toobig)
        rc = sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                          "the %s file's text is over %zu bytes", kind, lim->max_output);
    else if (sl_buf_add(out, b->data ? b->data : "", b->len))
        rc = sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                          "the %s file's text is too big for its buffer", kind);
    sl_buf_release(b);
    return rc;
}

int sl_extract_docx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    pkg p = {.lim = lim};
    p.zip = sl_zip_open(data, len, lim, err);
    if (!p.zip)
        return -1;
    sl_buf b;
    out_init(&b, lim);
    int rc = docx_try(&p, &b, err);
    if (rc && err && err->code != SL_ELIMIT && err->code != SL_EUNSUPPORTED) {
        /* Evernote writes "word\document.xml": Dify retries once with
         * every backslash of the names made a slash. */
        bool slashes = false;
        for (size_t i = 0; i < sl_zip_count(p.zip) && !slashes; i++)
            slashes = strchr(sl_zip_name(p.zip, i), '\\') != NULL;
        if (slashes) {
            sl_buf_reset(&b);
            sl_zip_backslashes(p.zip);
            sl_err retry = {0};
            if (!docx_try(&p, &b, &retry)) {
                sl_err_clear(err);
                rc = 0;
            } else
                sl_err_move(err, &retry);
            sl_err_clear(&retry);
        }
    }
    sl_zip_close(p.zip);
    if (rc) {
        sl_buf_release(&b);
        return -1;
    }
    return out_done(&b, "DOCX", lim, out, err);
}

/* ------------------------------------------------------------------ */
/* xlsx                                                               */

/* Dify reads a workbook with pandas (openpyxl underneath) and prints each
 * sheet's DataFrame row by row; what follows is that pipeline's visible
 * behaviour: openpyxl's cell values, pandas' header, column types and
 * missing values, and Python's str() of each value. */

#define NS_S "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define MAX_COLS 16384 /* XFD, Excel's last column */

typedef struct {
    pkg p;
    sl_sheet_strs sst;        /* shared strings */
    bool *xf_date;     /* per cellXfs index: a date format */
    size_t nxf;
    bool date1904;
} book;

/* The text of an <si> or <is>: its <t>, and the <t> of each rich run
 * (<r>); phonetic runs (<rPh>) are not text. */
static char *rich_text(const xmlNode *si)
{
    sl_buf b;
    sl_buf_init(&b, SIZE_MAX);
    for (xmlNode *c = si->children; c; c = c->next) {
        if (sl_xml_is(c, NS_S, "t"))
            sl_xml_text(c, &b);
        else if (sl_xml_is(c, NS_S, "r"))
            for (xmlNode *t = sl_xml_child(c, NS_S, "t"); t; t = sl_xml_next(t, NS_S, "t"))
                sl_xml_text(t, &b);
    }
    return b.data ? sl_buf_detach(&b) : sl_xstrdup("");
}

static int load_sst(book *bk, const char *name, sl_err *err)
{
    xmlDoc *d = part(&bk->p, name, err);
    if (!d)
        return -1;
    xmlNode *root = sl_xml_root(d);
    for (xmlNode *si = sl_xml_child(root, NS_S, "si"); si; si = sl_xml_next(si, NS_S, "si"))
        sl_sheet_strs_add(&bk->sst, rich_text(si));
    sl_xml_free(d);
    return 0;
}

/* openpyxl's is_date_format: the first section of the code, without
 * quoted text, escapes and bracketed parts other than [h] [m] [s], has a
 * d, m, y, h or s. */
static bool date_code(const char *code)
{
    for (const char *c = code; *c && *c != ';'; c++) {
        if (*c == '"') {
            const char *e = strchr(c + 1, '"');
            if (!e)
                return false;
            c = e;
        } else if (*c == '\\' || *c == '_' || *c == '*') {
            if (!c[1])
                break;
            c++;
        } else if (*c == '[') {
            const char *e = strchr(c, ']');
            if (!e)
                return false;
            size_t n = (size_t)(e - c - 1);
            bool elapsed = n >= 1 && n <= 2 && strchr("hHmMsS", c[1]) && (n == 1 || c[2] == c[1]);
            if (elapsed)
                return true;
            c = e;
        } else if (strchr("dmyhsDMYHS", *c))
            return true;
    }
    return false;
}

/* openpyxl's built-in date formats: 14-22 and 45-47. */
static bool builtin_date(long id)
{
    return (id >= 14 && id <= 22) || (id >= 45 && id <= 47);
}

static int load_styles(book *bk, const char *name, sl_err *err)
{
    xmlDoc *d = part(&bk->p, name, err);
    if (!d)
        return -1;
    xmlNode *root = sl_xml_root(d);
    xmlNode *fmts = sl_xml_child(root, NS_S, "numFmts");
    xmlNode *xfs = sl_xml_child(root, NS_S, "cellXfs");
    size_t n = 0;
    for (xmlNode *x = sl_xml_child(xfs, NS_S, "xf"); x; x = sl_xml_next(x, NS_S, "xf"))
        n++;
    bk->xf_date = sl_xcalloc(n ? n : 1, sizeof *bk->xf_date);
    bk->nxf = n;
    size_t i = 0;
    for (xmlNode *x = sl_xml_child(xfs, NS_S, "xf"); x; x = sl_xml_next(x, NS_S, "xf"), i++) {
        const char *v = sl_xml_attr(x, NULL, "numFmtId");
        long id = v ? strtol(v, NULL, 10) : 0;
        bool date = builtin_date(id);
        for (xmlNode *f = sl_xml_child(fmts, NS_S, "numFmt"); f;
             f = sl_xml_next(f, NS_S, "numFmt")) {
            const char *fid = sl_xml_attr(f, NULL, "numFmtId");
            const char *code = sl_xml_attr(f, NULL, "formatCode");
            if (fid && code && strtol(fid, NULL, 10) == id) {
                date = date_code(code);
                break;
            }
        }
        bk->xf_date[i] = date;
    }
    sl_xml_free(d);
    return 0;
}

/* openpyxl's from_excel: whole days from the epoch (1899-12-30, or
 * 1904-01-01), the fraction rounded to the millisecond; under 1 a time
 * of day; 1 to 60 shifted a day for Excel's 1900-02-29.  -1 when Python
 * would overflow (outside years 1-9999). */
static int excel_date(double v, bool date1904, sl_sheet_cell *c)
{
    if (!(v > -3e6 && v < 3e6))
        return -1;
    double day = sl_floor(v);
    /* Python's round(): halves to even */
    double x = (v - day) * 86400000.0, ms = sl_floor(x);
    if (x - ms > 0.5 || (x - ms == 0.5 && sl_fmod(ms, 2) != 0))
        ms += 1;
    if (!date1904 && v >= 0 && v < 1 && ms < 86400000.0) {
        c->kind = SL_CELL_TIME;
        c->us = (int64_t)ms * 1000;
        return 0;
    }
    if (!date1904 && v > 0 && v < 60)
        day += 1;
    int64_t epoch = date1904 ? sl_sheet_days(1904, 1, 1) : sl_sheet_days(1899, 12, 30);
    int64_t us = (epoch + (int64_t)day) * SL_SHEET_US_DAY + (int64_t)ms * 1000;
    if (us < sl_sheet_days(1, 1, 1) * SL_SHEET_US_DAY ||
        us >= sl_sheet_days(10000, 1, 1) * SL_SHEET_US_DAY)
        return -1;
    c->kind = SL_CELL_DATE;
    c->us = us;
    return 0;
}

static uint32_t col_of(const char *ref, uint32_t *row)
{
    uint32_t col = 0;
    const char *p = ref;
    while (*p >= 'A' && *p <= 'Z' && col <= MAX_COLS)
        col = col * 26 + (uint32_t)(*p++ - 'A' + 1);
    uint32_t r = 0;
    while (*p >= '0' && *p <= '9' && r < 100000000)
        r = r * 10 + (uint32_t)(*p++ - '0');
    if (row)
        *row = r;
    return col;
}

/* One <c>: openpyxl's value, as pandas receives it. */
static int read_cell(book *bk, sl_sheet *sh, const xmlNode *c, sl_sheet_cell *x, sl_err *err)
{
    const char *t = sl_xml_attr(c, NULL, "t");
    xmlNode *vn = sl_xml_child(c, NS_S, "v");
    sl_buf b;
    sl_buf_init(&b, SIZE_MAX);
    if (vn)
        sl_xml_text(vn, &b);
    const char *v = vn ? (b.data ? b.data : "") : NULL;
    int rc = 0;
    x->kind = SL_CELL_EMPTY;
    if (t && !strcmp(t, "inlineStr")) {
        xmlNode *is = sl_xml_child(c, NS_S, "is");
        if (is) {
            char *s = rich_text(is);
            sl_sheet_strs_add(&sh->pool, s);
            x->kind = SL_CELL_STR;
            x->s = s;
        }
    } else if (!v) {
    } else if (t && !strcmp(t, "s")) {
        char *end;
        unsigned long i = strtoul(v, &end, 10);
        if (*end || end == v || i >= bk->sst.n)
            rc = sl_err_set(err, SL_EPARSE, "a cell names shared string %s, which does not exist",
                            v);
        else {
            x->kind = SL_CELL_STR;
            x->s = bk->sst.v[i];
        }
    } else if (t && (!strcmp(t, "str") || !strcmp(t, "d"))) {
        /* a formula's text, or an ISO 8601 date kept as text when it does
         * not read as one */
        int y, mo, d, h = 0, mi = 0, s = 0;
        if (!strcmp(t, "d") && sscanf(v, "%4d-%2d-%2d", &y, &mo, &d) == 3 && mo >= 1 && mo <= 12 &&
            d >= 1 && d <= 31 && y >= 1) {
            const char *tt = strchr(v, 'T');
            if (tt)
                sscanf(tt + 1, "%2d:%2d:%2d", &h, &mi, &s);
            x->kind = SL_CELL_DATE;
            int64_t secs = sl_sheet_days(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
                           mi * 60 + s;
            x->us = secs * INT64_C(1000000);
        } else if (!strcmp(t, "d"))
            sh->bad = true;
        else {
            char *s2 = sl_xstrdup(v);
            sl_sheet_strs_add(&sh->pool, s2);
            x->kind = SL_CELL_STR;
            x->s = s2;
        }
    } else if (t && !strcmp(t, "b")) {
        x->kind = SL_CELL_BOOL;
        x->num = strtol(v, NULL, 10) != 0;
    } else if (t && !strcmp(t, "e")) {
        x->kind = SL_CELL_ERR;
    } else if (!*v) {
    } else {
        /* openpyxl: an int unless the text has "." or "E"; pandas then
         * makes an integral float an int */
        char *end;
        double d = strtod(v, &end);
        if (*end || end == v) {
            sh->bad = true;
        } else {
            const char *sidx = sl_xml_attr(c, NULL, "s");
            unsigned long si = sidx ? strtoul(sidx, NULL, 10) : 0;
            if (si < bk->nxf && bk->xf_date[si]) {
                if (excel_date(d, bk->date1904, x))
                    sh->bad = true;
            } else {
                x->kind = SL_CELL_NUM;
                x->num = d;
                x->integral = sl_sheet_as_int(d);
            }
        }
    }
    sl_buf_release(&b);
    return rc;
}

static int read_sheet(book *bk, const char *name, sl_sheet *sh, sl_err *err)
{
    xmlDoc *d = part(&bk->p, name, err);
    if (!d)
        return -1;
    xmlNode *data = sl_xml_child(sl_xml_root(d), NS_S, "sheetData");
    uint32_t row = 0;
    int rc = 0;
    for (xmlNode *r = sl_xml_child(data, NS_S, "row"); r && !rc; r = sl_xml_next(r, NS_S, "row")) {
        const char *rv = sl_xml_attr(r, NULL, "r");
        uint32_t rn = rv ? (uint32_t)strtoul(rv, NULL, 10) : row + 1;
        if (rn < 1 || rn > 1048576) {
            sh->bad = true;
            break;
        }
        row = rn;
        uint32_t col = 0;
        for (xmlNode *c = sl_xml_child(r, NS_S, "c"); c && !rc; c = sl_xml_next(c, NS_S, "c")) {
            const char *ref = sl_xml_attr(c, NULL, "r");
            col = ref ? col_of(ref, NULL) : col + 1;
            if (col < 1 || col > MAX_COLS) {
                sh->bad = true;
                break;
            }
            sl_sheet_cell x = {.row = row, .col = col};
            rc = read_cell(bk, sh, c, &x, err);
            if (rc || x.kind == SL_CELL_EMPTY || (x.kind == SL_CELL_STR && !*x.s))
                continue; /* None and "" are the same to pandas */
            sl_sheet_add(sh, &x);
        }
    }
    sl_xml_free(d);
    if (rc)
        return -1;
    sl_sheet_sort(sh);
    return 0;
}

/* The workbook's worksheets in order, each as its part name. */
static int xlsx_read(book *bk, sl_buf *out, sl_err *err)
{
    char *main = main_part(&bk->p, err);
    if (!main)
        return -1;
    int rc = -1;
    xmlDoc *wb = NULL, *rels = NULL;
    sl_buf relname;
    sl_buf_init(&relname, 0);
    const char *slash = strrchr(main, '/');
    if (slash)
        sl_buf_add(&relname, main, (size_t)(slash - main + 1));
    sl_buf_addf(&relname, "_rels/%s.rels", slash ? slash + 1 : main);
    wb = part(&bk->p, main, err);
    if (!wb)
        goto done;
    xmlNode *root = sl_xml_root(wb);
    if (!sl_xml_is(root, NS_S, "workbook")) {
        sl_err_set(err, SL_EPARSE, "%s is not a workbook (no <workbook>)", main);
        goto done;
    }
    const char *d1904 = sl_xml_attr(sl_xml_child(root, NS_S, "workbookPr"), NULL, "date1904");
    bk->date1904 = d1904 && (!strcmp(d1904, "1") || !strcmp(d1904, "true"));
    rels = part(&bk->p, relname.data, err);
    if (!rels)
        goto done;
    xmlNode *rroot = sl_xml_root(rels);
    for (xmlNode *r = sl_xml_child(rroot, NS_PKG_REL, "Relationship"); r;
         r = sl_xml_next(r, NS_PKG_REL, "Relationship")) {
        const char *type = sl_xml_attr(r, NULL, "Type"), *target = sl_xml_attr(r, NULL, "Target");
        if (!type || !target)
            continue;
        char *name = resolve(main, target);
        int lrc = 0;
        if (!strcmp(type, NS_REL "/sharedStrings") && !bk->sst.n)
            lrc = load_sst(bk, name, err);
        else if (!strcmp(type, NS_REL "/styles") && !bk->xf_date)
            lrc = load_styles(bk, name, err);
        free(name);
        if (lrc)
            goto done;
    }
    for (xmlNode *s = sl_xml_child(sl_xml_child(root, NS_S, "sheets"), NS_S, "sheet"); s;
         s = sl_xml_next(s, NS_S, "sheet")) {
        const char *id = sl_xml_attr(s, NS_REL, "id");
        const char *target = NULL;
        bool worksheet = false;
        for (xmlNode *r = sl_xml_child(rroot, NS_PKG_REL, "Relationship"); r && id && !target;
             r = sl_xml_next(r, NS_PKG_REL, "Relationship")) {
            const char *rid = sl_xml_attr(r, NULL, "Id"), *type = sl_xml_attr(r, NULL, "Type");
            if (rid && !strcmp(rid, id)) {
                target = sl_xml_attr(r, NULL, "Target");
                worksheet = type && !strcmp(type, NS_REL "/worksheet");
            }
        }
        if (!target) {
            const char *nm = sl_xml_attr(s, NULL, "name");
            sl_err_set(err, SL_EPARSE, "the sheet \"%s\" has no part (relationship %s)",
                       nm ? nm : "?", id ? id : "missing");
            goto done;
        }
        if (!worksheet) /* chart sheets are not among pandas' sheet names */
            continue;
        char *name = resolve(main, target);
        sl_sheet sh = {0};
        int src = read_sheet(bk, name, &sh, err);
        free(name);
        if (!src && !sh.bad)
            sl_sheet_render(&sh, out);
        sl_sheet_release(&sh);
        if (src)
            goto done;
        if (out->toobig)
            break;
    }
    rc = 0;
done:
    sl_xml_free(wb);
    sl_xml_free(rels);
    sl_buf_release(&relname);
    free(main);
    return rc;
}

int sl_extract_xlsx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    /* pandas picks its engine by the bytes: xlrd for a compound file */
    if (sl_extract_xls_is(data, len))
        return sl_extract_xls(data, len, lim, out, err);
    book bk = {.p = {.lim = lim}};
    bk.p.zip = sl_zip_open(data, len, lim, err);
    if (!bk.p.zip)
        return -1;
    sl_buf b;
    out_init(&b, lim);
    int rc = xlsx_read(&bk, &b, err);
    sl_zip_close(bk.p.zip);
    sl_sheet_strs_free(&bk.sst);
    free(bk.xf_date);
    if (rc) {
        sl_buf_release(&b);
        return -1;
    }
    return out_done(&b, "Excel", lim, out, err);
}

/* ------------------------------------------------------------------ */
/* pptx                                                               */

/* Dify reads a pptx with unstructured's partition_pptx (no API
 * configured) and joins its elements' text with "\n": slides in order,
 * an empty page break between slides, each slide's shapes (groups
 * flattened) sorted by top then left, off-slide ones left out, a text
 * frame's non-blank paragraphs one element each, a table one element of
 * its words joined by spaces, pictures and charts nothing, notes not
 * read.  unstructured's version decides the finer points; this follows
 * 0.27 (docextract_research §3.9). */

#define NS_P "http://schemas.openxmlformats.org/presentationml/2006/main"
#define NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"

typedef struct {
    long long top, left;
    size_t order;
    const xmlNode *shape;
} pshape;

typedef struct {
    pshape *v;
    size_t n, alloc;
} pshapes;

static long long off_attr(const xmlNode *xfrm, const char *name)
{
    const char *v = sl_xml_attr(sl_xml_child(xfrm, NS_A, "off"), NULL, name);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* The shapes of a tree, groups flattened into their members (python-
 * pptx's top and left of a member are its own, in the group's space). */
static void collect_shapes(const xmlNode *tree, pshapes *out, int depth)
{
    for (xmlNode *c = tree->children; c; c = c->next) {
        if (sl_xml_is(c, NS_P, "grpSp")) {
            if (depth < 64)
                collect_shapes(c, out, depth + 1);
            continue;
        }
        const xmlNode *xfrm = NULL;
        if (sl_xml_is(c, NS_P, "sp") || sl_xml_is(c, NS_P, "pic") || sl_xml_is(c, NS_P, "cxnSp"))
            xfrm = sl_xml_child(sl_xml_child(c, NS_P, "spPr"), NS_A, "xfrm");
        else if (sl_xml_is(c, NS_P, "graphicFrame"))
            xfrm = sl_xml_child(c, NS_P, "xfrm");
        else
            continue;
        if (out->n == out->alloc) {
            out->alloc = out->alloc ? out->alloc * 2 : 16;
            out->v = sl_xrealloc(out->v, out->alloc * sizeof *out->v);
        }
        out->v[out->n] = (pshape){.top = off_attr(xfrm, "y"), .left = off_attr(xfrm, "x"),
                                  .order = out->n, .shape = c};
        out->n++;
    }
}

static int cmp_shape(const void *a, const void *b)
{
    const pshape *x = a, *y = b;
    if (x->top != y->top)
        return x->top < y->top ? -1 : 1;
    if (x->left != y->left)
        return x->left < y->left ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* python-pptx's paragraph text: runs and fields, a line break as "\v". */
static void pptx_para(const xmlNode *p, sl_buf *out)
{
    for (xmlNode *c = p->children; c; c = c->next) {
        if (sl_xml_is(c, NS_A, "r") || sl_xml_is(c, NS_A, "fld"))
            sl_xml_text(sl_xml_child(c, NS_A, "t"), out);
        else if (sl_xml_is(c, NS_A, "br"))
            sl_buf_addc(out, '\v');
    }
}

/* Adds one element's text, "\n" before all but the first. */
static void pptx_element(sl_buf *out, bool *first, const char *s, size_t n)
{
    if (!*first)
        sl_buf_addc(out, '\n');
    *first = false;
    sl_buf_add(out, s, n);
}

/* Every a:t under n, in order, into words. */
static void table_words(const xmlNode *n, sl_buf *words)
{
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (sl_xml_is(c, NS_A, "t")) {
            sl_buf t;
            sl_buf_init(&t, 0);
            sl_xml_text(c, &t);
            const unsigned char *s = (const unsigned char *)(t.data ? t.data : "");
            for (size_t i = 0, k; i < t.len;) {
                if (py_space(s + i, t.len - i, &k)) {
                    i += k;
                    continue;
                }
                size_t start = i;
                while (i < t.len && !py_space(s + i, t.len - i, &k))
                    i++;
                if (words->len)
                    sl_buf_addc(words, ' ');
                sl_buf_add(words, s + start, i - start);
            }
            sl_buf_release(&t);
        } else
            table_words(c, words);
    }
}

static void pptx_slide(const xmlNode *root, sl_buf *out, bool *first)
{
    xmlNode *tree = sl_xml_child(sl_xml_child(root, NS_P, "cSld"), NS_P, "spTree");
    if (!tree)
        return;
    pshapes sh = {0};
    collect_shapes(tree, &sh, 0);
    if (sh.n)
        qsort(sh.v, sh.n, sizeof *sh.v, cmp_shape);
    sl_buf t;
    sl_buf_init(&t, 0);
    for (size_t i = 0; i < sh.n && !out->toobig; i++) {
        const pshape *s = &sh.v[i];
        if (s->top && s->left && (s->top < 0 || s->left < 0))
            continue; /* off the slide */
        if (sl_xml_is(s->shape, NS_P, "sp")) {
            xmlNode *body = sl_xml_child(s->shape, NS_P, "txBody");
            for (xmlNode *p = sl_xml_child(body, NS_A, "p"); p; p = sl_xml_next(p, NS_A, "p")) {
                sl_buf_reset(&t);
                pptx_para(p, &t);
                if (!py_blank(t.data ? t.data : "", t.len))
                    pptx_element(out, first, t.data, t.len);
            }
        } else if (sl_xml_is(s->shape, NS_P, "graphicFrame")) {
            xmlNode *data = sl_xml_child(sl_xml_child(s->shape, NS_A, "graphic"), NS_A,
                                         "graphicData");
            xmlNode *tbl = sl_xml_child(data, NS_A, "tbl");
            if (!tbl)
                continue;
            sl_buf_reset(&t);
            table_words(tbl, &t);
            if (t.len)
                pptx_element(out, first, t.data, t.len);
        }
    }
    sl_buf_release(&t);
    free(sh.v);
}

static int pptx_read(pkg *p, sl_buf *out, sl_err *err)
{
    char *main = main_part(p, err);
    if (!main)
        return -1;
    int rc = -1;
    xmlDoc *pres = NULL, *rels = NULL;
    sl_buf relname;
    sl_buf_init(&relname, 0);
    const char *slash = strrchr(main, '/');
    if (slash)
        sl_buf_add(&relname, main, (size_t)(slash - main + 1));
    sl_buf_addf(&relname, "_rels/%s.rels", slash ? slash + 1 : main);
    pres = part(p, main, err);
    if (!pres)
        goto done;
    xmlNode *root = sl_xml_root(pres);
    if (!sl_xml_is(root, NS_P, "presentation")) {
        sl_err_set(err, SL_EPARSE, "%s is not a presentation (no <p:presentation>)", main);
        goto done;
    }
    rels = part(p, relname.data, err);
    if (!rels)
        goto done;
    xmlNode *rroot = sl_xml_root(rels);
    bool first = true;
    size_t nslide = 0;
    for (xmlNode *s = sl_xml_child(sl_xml_child(root, NS_P, "sldIdLst"), NS_P, "sldId"); s;
         s = sl_xml_next(s, NS_P, "sldId")) {
        const char *id = sl_xml_attr(s, NS_REL, "id");
        const char *target = NULL;
        for (xmlNode *r = sl_xml_child(rroot, NS_PKG_REL, "Relationship"); r && id && !target;
             r = sl_xml_next(r, NS_PKG_REL, "Relationship")) {
            const char *rid = sl_xml_attr(r, NULL, "Id");
            if (rid && !strcmp(rid, id))
                target = sl_xml_attr(r, NULL, "Target");
        }
        if (!target) {
            sl_err_set(err, SL_EPARSE, "slide %zu has no part (relationship %s)", nslide + 1,
                       id ? id : "missing");
            goto done;
        }
        char *name = resolve(main, target);
        xmlDoc *slide = part(p, name, err);
        free(name);
        if (!slide)
            goto done;
        if (nslide++)
            pptx_element(out, &first, "", 0); /* the page break */
        pptx_slide(sl_xml_root(slide), out, &first);
        sl_xml_free(slide);
        if (out->toobig)
            break;
    }
    rc = 0;
done:
    sl_xml_free(pres);
    sl_xml_free(rels);
    sl_buf_release(&relname);
    free(main);
    return rc;
}

int sl_extract_pptx(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    pkg p = {.lim = lim};
    p.zip = sl_zip_open(data, len, lim, err);
    if (!p.zip)
        return -1;
    sl_buf b;
    out_init(&b, lim);
    int rc = pptx_read(&p, &b, err);
    sl_zip_close(p.zip);
    if (rc) {
        sl_buf_release(&b);
        return -1;
    }
    return out_done(&b, "PPTX", lim, out, err);
}
