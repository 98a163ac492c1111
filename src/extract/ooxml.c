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

#include "extract/extract_int.h"
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
            const tcell *up = NULL;
            for (size_t i = 0; i < nabove && !up; i++)
                if (above[i].off == off)
                    up = &above[i];
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
        for (size_t i = 0; i < n; i++)
            for (long s = 0; s < row[i].origin_span; s++) {
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
            sl_buf_adds(out, " |"); /* "| " + "" + " |" */
        sl_buf_addc(out, '\n');
        if (nrow++ == 0) {
            sl_buf_adds(out, "|");
            for (size_t i = 0; i < cells; i++)
                sl_buf_adds(out, " --- |");
            if (!cells)
                sl_buf_adds(out, " |");
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
