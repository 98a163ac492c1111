/*
 * odf — OpenDocument text (sl_extract_odt) and EPUB (sl_extract_epub),
 * both zips of XML read through extract/zip and extract/xml, rendered as
 * Dify renders them (docextract_research §3.10, §3.11):
 *
 * ODT as odfdo's Document.get_formatted_text(): each child of the body's
 * office:text in order, paragraphs and headings as their text and "\n\n",
 * lists as "- item" lines (nested items indented by two spaces), tables
 * as each cell's text and "\n" with "\n" after each row; a paragraph's
 * footnotes as "[citation]" in its text and "----\n[citation] body\n\n"
 * after the body child holding them, endnotes as "(citation)" and
 * "\n========\n(citation) body\n" at the very end; the whole stripped.
 *
 * EPUB as graphon's _extract_epub_text: META-INF/container.xml's first
 * rootfile names the package (OPF); its spine lists the chapters in order
 * by manifest id; each chapter's XHTML is cut into text elements the way
 * unstructured's partition_html does (one per block, whitespace collapsed)
 * and every element of every chapter is joined with "\n".  Chapters are
 * parsed with libxml2's HTML parser, loaded as extract/xml loads libxml2.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "extract/extract_int.h"
#include "extract/xml.h"
#include "extract/zip.h"

#define NS_OFFICE "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
#define NS_TEXT "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
#define NS_TABLE "urn:oasis:names:tc:opendocument:xmlns:table:1.0"

/* Python's str.isspace for the code point that starts at s (n bytes
 * left); its length in *w, 0 when it is not whitespace. */
static size_t space_at(const unsigned char *s, size_t n)
{
    if (!n)
        return 0;
    if (s[0] < 0x80)
        return (s[0] == ' ' || (s[0] >= 0x09 && s[0] <= 0x0d) || (s[0] >= 0x1c && s[0] <= 0x1f))
                   ? 1
                   : 0;
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
        return 2;
    if (n >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
        return 3;
    if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
        ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
        return 3;
    if (n >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
        return 3;
    if (n >= 3 && s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
        return 3;
    return 0;
}

/* Whether the n bytes ending at s+n end with a whitespace code point; its
 * length. */
static size_t space_before(const unsigned char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++)
        if (space_at(s + n - k, k) == k)
            return k;
    return 0;
}

/* Python's s.strip() on b[from..]. */
static void strip_from(sl_buf *b, size_t from)
{
    if (!b->data)
        return;
    const unsigned char *s = (const unsigned char *)b->data + from;
    size_t n = b->len - from, lead = 0, k;
    while (lead < n && (k = space_at(s + lead, n - lead)))
        lead += k;
    while (n > lead && (k = space_before(s, n)))
        n -= k;
    memmove(b->data + from, s + lead, n - lead);
    b->len = from + n - lead;
    b->data[b->len] = 0;
}

/* ------------------------------------------------------------------ ODT */

typedef struct {
    const sl_extract_limits *lim;
    sl_buf *out;       /* the document's text so far */
    size_t base;       /* where it started in out */
    sl_buf foot, annot, endn;
    size_t nfoot, nend;
    sl_err *err;
    int failed;
} odt;

static int fmt(odt *o, const xmlNode *n, sl_buf *b);

static bool too_big(odt *o, const sl_buf *b)
{
    if (o->failed)
        return true;
    if (b->len > o->lim->max_output || b->toobig || o->out->len - o->base > o->lim->max_output) {
        o->failed = sl_err_limit(o->err, SL_ELIMIT, "extract_max_output",
                                 "the ODT file's text is over %zu bytes", o->lim->max_output);
        return true;
    }
    return false;
}

static bool is_text(const xmlNode *n, const char *name)
{
    return sl_xml_is(n, NS_TEXT, name);
}

/* Every text node under n, in order (lxml's itertext). */
static void all_text(const xmlNode *n, sl_buf *b)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
            sl_buf_adds(b, (const char *)c->content);
        else if (c->type == XML_ELEMENT_NODE)
            all_text(c, b);
    }
}

/* odfdo's text_content: the text of each text:p under n, joined by "\n". */
static void text_content(const xmlNode *n, sl_buf *b, bool *first)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (is_text(c, "p")) {
            if (!*first)
                sl_buf_addc(b, '\n');
            *first = false;
            all_text(c, b);
        }
        if (c->type == XML_ELEMENT_NODE)
            text_content(c, b, first);
    }
}

/* A text:note: its marker into b, its body into the footnotes or
 * endnotes. */
static int note(odt *o, const xmlNode *n, sl_buf *b)
{
    const char *cls = sl_xml_attr(n, NS_TEXT, "note-class");
    bool foot;
    if (cls && !strcmp(cls, "footnote"))
        foot = true;
    else if (cls && !strcmp(cls, "endnote"))
        foot = false;
    else
        return o->failed = sl_err_set(o->err, SL_EPARSE,
                                      "content.xml: a text:note has note-class \"%s\"; "
                                      "\"footnote\" or \"endnote\" was expected",
                                      cls ? cls : "(none)");
    sl_buf cit;
    sl_buf_init(&cit, 0);
    sl_xml_text(sl_xml_child(n, NS_TEXT, "note-citation"), &cit);
    if (!cit.len)
        sl_buf_addf(&cit, "%zu", foot ? o->nfoot : o->nend);
    sl_buf *to = foot ? &o->foot : &o->endn;
    sl_buf_addf(b, foot ? "[%s]" : "(%s)", cit.data);
    sl_buf_addf(to, foot ? "[%s] " : "(%s) ", cit.data);
    bool first = true;
    const xmlNode *body = sl_xml_child(n, NS_TEXT, "note-body");
    if (body)
        text_content(body, to, &first);
    sl_buf_addc(to, '\n');
    *(foot ? &o->nfoot : &o->nend) += 1;
    sl_buf_release(&cit);
    return too_big(o, to) ? -1 : 0;
}

/* A paragraph's inline content (odfdo's _get_formatted_text). */
static int inline_text(odt *o, const xmlNode *n, sl_buf *b)
{
    for (const xmlNode *c = n->children; c && !o->failed; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                sl_buf_adds(b, (const char *)c->content);
        } else if (c->type != XML_ELEMENT_NODE) {
            continue; /* comments, entity references: never expanded */
        } else if (is_text(c, "a") || is_text(c, "p") || is_text(c, "span")) {
            inline_text(o, c, b);
        } else if (is_text(c, "note")) {
            note(o, c, b);
        } else if (sl_xml_is(c, NS_OFFICE, "annotation")) {
            sl_buf_adds(b, "[*]");
            sl_buf_adds(&o->annot, "[*] ");
            bool first = true;
            text_content(c, &o->annot, &first);
            sl_buf_addc(&o->annot, '\n');
        } else if (is_text(c, "tab")) {
            sl_buf_addc(b, '\t');
        } else if (is_text(c, "line-break")) {
            sl_buf_addc(b, '\n');
        } else if (is_text(c, "s")) {
            const char *cnt = sl_xml_attr(c, NS_TEXT, "c");
            long k = cnt ? strtol(cnt, NULL, 10) : 1;
            if (k < 1)
                k = 1; /* odfdo: at least one space */
            if ((unsigned long)k > o->lim->max_output) {
                too_big(o, b);
                o->failed = sl_err_limit(o->err, SL_ELIMIT, "extract_max_output",
                                         "content.xml: a text:s asks for %ld spaces, over the "
                                         "%zu bytes of text allowed",
                                         k, o->lim->max_output);
                return -1;
            }
            for (long i = 0; i < k; i++)
                sl_buf_addc(b, ' ');
        } else {
            fmt(o, c, b);
        }
        if (too_big(o, b))
            return -1;
    }
    return o->failed ? -1 : 0;
}

/* The first byte of b from `from` that is not whitespace. */
static char first_nonspace(const sl_buf *b, size_t from)
{
    for (size_t i = from; i < b->len; i++)
        if (!isspace((unsigned char)b->data[i]))
            return b->data[i];
    return 0;
}

/* odfdo's List.get_formatted_text. */
static int list(odt *o, const xmlNode *n, sl_buf *b)
{
    sl_buf res, item;
    sl_buf_init(&res, 0);
    sl_buf_init(&item, 0);
    int rc = 0;
    for (const xmlNode *li = sl_xml_child(n, NS_TEXT, "list-item"); li && !rc;
         li = sl_xml_next(li, NS_TEXT, "list-item")) {
        sl_buf_reset(&item);
        for (const xmlNode *c = li->children; c && !rc; c = c->next) {
            if (c->type != XML_ELEMENT_NODE)
                continue;
            size_t at = item.len;
            if (fmt(o, c, &item)) {
                rc = -1;
                break;
            }
            /* odfdo returns at once: a heading in a list item, or a
             * nested list whose text does not start with "-", is the
             * whole list's text */
            if (is_text(c, "h") || (is_text(c, "list") && first_nonspace(&item, at) != '-')) {
                sl_buf_add(b, item.data + at, item.len - at);
                goto done;
            }
        }
        if (rc)
            break;
        size_t s = 0, e = item.len;
        while (s < e && item.data[s] == '\n')
            s++;
        while (e > s && item.data[e - 1] == '\n')
            e--;
        sl_buf_adds(&res, "- ");
        for (size_t i = s; i < e; i++) {
            sl_buf_addc(&res, item.data[i]);
            if (item.data[i] == '\n')
                sl_buf_adds(&res, "  ");
        }
        sl_buf_addc(&res, '\n');
        if (too_big(o, &res))
            rc = -1;
    }
    if (!rc)
        sl_buf_add(b, res.data ? res.data : "", res.len);
done:
    sl_buf_release(&res);
    sl_buf_release(&item);
    return rc || o->failed ? -1 : 0;
}

/* A number-*-repeated attribute (1 when absent or bad). */
static unsigned long repeated(const xmlNode *n, const char *attr)
{
    const char *v = sl_xml_attr(n, NS_TABLE, attr);
    long k = v ? strtol(v, NULL, 10) : 1;
    return k < 1 ? 1 : (unsigned long)k;
}

/* Appends b[at..] k-1 more times, within the output limit. */
static int repeat(odt *o, sl_buf *b, size_t at, unsigned long k)
{
    if (k < 2 || b->len == at)
        return too_big(o, b) ? -1 : 0;
    size_t one = b->len - at;
    char *copy = malloc(one);
    if (!copy)
        abort();
    memcpy(copy, b->data + at, one);
    for (; k > 1 && !too_big(o, b); k--)
        sl_buf_add(b, copy, one);
    free(copy);
    return too_big(o, b) ? -1 : 0;
}

/* One cell's text: its typed value when it has one, else its children's
 * formatted text (odfdo's cell.get_value(try_get_text=False)). */
static int cell(odt *o, const xmlNode *c, sl_buf *b)
{
    const char *type = sl_xml_attr(c, NS_OFFICE, "value-type");
    const char *v = NULL;
    if (type && (!strcmp(type, "float") || !strcmp(type, "percentage") ||
                 !strcmp(type, "currency")))
        v = sl_xml_attr(c, NS_OFFICE, "value");
    else if (type && !strcmp(type, "date"))
        v = sl_xml_attr(c, NS_OFFICE, "date-value");
    else if (type && !strcmp(type, "time"))
        v = sl_xml_attr(c, NS_OFFICE, "time-value");
    else if (type && !strcmp(type, "boolean")) {
        const char *bv = sl_xml_attr(c, NS_OFFICE, "boolean-value");
        if (bv)
            v = !strcmp(bv, "true") || !strcmp(bv, "1") ? "True" : "False";
    } else if (type && !strcmp(type, "string"))
        v = sl_xml_attr(c, NS_OFFICE, "string-value");
    if (v)
        return sl_buf_adds(b, v), 0;
    for (const xmlNode *k = c->children; k; k = k->next)
        if (k->type == XML_ELEMENT_NODE && fmt(o, k, b))
            return -1;
    return 0;
}

/* The rows under n (through header rows, row groups), each cell and "\n",
 * "\n" after each row, repeats expanded. */
static int rows(odt *o, const xmlNode *n, sl_buf *b)
{
    for (const xmlNode *r = n->children; r; r = r->next) {
        if (sl_xml_is(r, NS_TABLE, "table-header-rows") || sl_xml_is(r, NS_TABLE, "table-rows") ||
            sl_xml_is(r, NS_TABLE, "table-row-group")) {
            if (rows(o, r, b))
                return -1;
            continue;
        }
        if (!sl_xml_is(r, NS_TABLE, "table-row"))
            continue;
        size_t row_at = b->len;
        for (const xmlNode *c = r->children; c; c = c->next) {
            if (!sl_xml_is(c, NS_TABLE, "table-cell") &&
                !sl_xml_is(c, NS_TABLE, "covered-table-cell"))
                continue;
            size_t at = b->len;
            if (cell(o, c, b))
                return -1;
            sl_buf_addc(b, '\n');
            if (repeat(o, b, at, repeated(c, "number-columns-repeated")))
                return -1;
            if (too_big(o, b))
                return -1;
        }
        sl_buf_addc(b, '\n');
        if (repeat(o, b, row_at, repeated(r, "number-rows-repeated")))
            return -1;
        if (too_big(o, b))
            return -1;
    }
    return 0;
}

/* An element's get_formatted_text: what odfdo renders, "" for the rest. */
static int fmt(odt *o, const xmlNode *n, sl_buf *b)
{
    if (o->failed)
        return -1;
    if (is_text(n, "p") || is_text(n, "h")) {
        if (inline_text(o, n, b))
            return -1;
        sl_buf_adds(b, "\n\n");
    } else if (is_text(n, "list")) {
        return list(o, n, b);
    } else if (sl_xml_is(n, NS_TABLE, "table")) {
        return rows(o, n, b);
    } else if (is_text(n, "section")) {
        for (const xmlNode *c = n->children; c; c = c->next)
            if (c->type == XML_ELEMENT_NODE && fmt(o, c, b))
                return -1;
    }
    return too_big(o, b) ? -1 : 0;
}

int sl_extract_odt(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    sl_zip *z = sl_zip_open(data, len, lim, err);
    if (!z)
        return -1;
    sl_buf xml;
    sl_buf_init(&xml, SIZE_MAX);
    size_t nodes = 0;
    xmlDoc *doc = NULL;
    int rc = -1;
    if (sl_zip_read(z, "content.xml", &xml, err)) {
        if (err && err->code == SL_ENOTFOUND)
            sl_err_set(err, SL_EPARSE,
                       "the file has no content.xml, so it is not an OpenDocument text");
        goto out;
    }
    doc = sl_xml_parse("content.xml", xml.data ? xml.data : "", xml.len, lim, 0, &nodes, err);
    if (!doc)
        goto out;
    const xmlNode *root = sl_xml_root(doc);
    const xmlNode *body = sl_xml_is(root, NS_OFFICE, "document-content")
                              ? sl_xml_child(root, NS_OFFICE, "body")
                              : NULL;
    const xmlNode *text = sl_xml_child(body, NS_OFFICE, "text");
    if (!text) {
        const xmlNode *kind = NULL;
        for (const xmlNode *c = body ? body->children : NULL; c && !kind; c = c->next)
            if (c->type == XML_ELEMENT_NODE)
                kind = c;
        sl_err_set(err, SL_EPARSE,
                   "content.xml has no office:body/office:text%s%s: not an OpenDocument text",
                   kind ? ", its body is " : "", kind ? (const char *)kind->name : "");
        goto out;
    }
    odt o = {.lim = lim, .out = out, .base = out->len, .err = err};
    sl_buf_init(&o.foot, 0);
    sl_buf_init(&o.annot, 0);
    sl_buf_init(&o.endn, 0);
    for (const xmlNode *c = text->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (fmt(&o, c, out))
            break;
        if (o.foot.len) {
            sl_buf_adds(out, "----\n");
            sl_buf_add(out, o.foot.data, o.foot.len);
            sl_buf_addc(out, '\n');
            sl_buf_reset(&o.foot);
            o.nfoot = 0; /* odfdo starts the next body child's list afresh */
        }
        if (o.annot.len) {
            sl_buf_adds(out, "----\n");
            sl_buf_add(out, o.annot.data, o.annot.len);
            sl_buf_reset(&o.annot);
        }
        if (too_big(&o, out))
            break;
    }
    if (!o.failed && o.endn.len) {
        sl_buf_adds(out, "\n========\n");
        sl_buf_add(out, o.endn.data, o.endn.len);
        too_big(&o, out);
    }
    sl_buf_release(&o.foot);
    sl_buf_release(&o.annot);
    sl_buf_release(&o.endn);
    if (!o.failed) {
        strip_from(out, o.base);
        rc = 0;
    }
out:
    sl_xml_free(doc);
    sl_buf_release(&xml);
    sl_zip_close(z);
    return rc;
}

/* ----------------------------------------------------------------- EPUB */

/* Percent-decoding as urllib.parse.unquote (an invalid %xx stays). */
static char *unquote(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1), *w = o;
    if (!o)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
            isxdigit((unsigned char)s[i + 2])) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            *w++ = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            *w++ = s[i];
        }
    }
    *w = 0;
    return o;
}

/* posixpath.normpath: "." and empty parts go, ".." drops the part before
 * it (or stays at the front of a relative path, goes at the root). */
static char *normpath(const char *p)
{
    size_t n = strlen(p);
    char *o = malloc(n + 2), *w = o;
    if (!o)
        abort();
    bool abs = p[0] == '/';
    if (abs)
        *w++ = '/';
    char *start = w;  /* after the root */
    size_t kept = 0;  /* parts in o that are not ".." */
    for (const char *r = p; *r;) {
        const char *e = strchr(r, '/');
        size_t k = e ? (size_t)(e - r) : strlen(r);
        if (k == 0 || (k == 1 && r[0] == '.')) {
        } else if (k == 2 && r[0] == '.' && r[1] == '.') {
            if (kept) {
                w--; /* the '/' after the last part */
                while (w > start && w[-1] != '/')
                    w--;
                kept--;
            } else if (!abs) {
                memcpy(w, "../", 3);
                w += 3;
            }
        } else {
            memcpy(w, r, k);
            w += k;
            *w++ = '/';
            kept++;
        }
        r += k + (e ? 1 : 0);
    }
    if (w > start && w[-1] == '/')
        w--;
    if (w == o)
        *w++ = '.';
    *w = 0;
    return o;
}

/* libxml2's HTML parser, opened on first use as extract/xml opens the
 * XML one. */
/* The text elements of the chapters, partition_html's way. */
typedef struct {
    const sl_extract_limits *lim;
    sl_buf *out;
    size_t base;
    size_t elements;    /* emitted so far, across chapters */
    size_t *nodes;
    sl_buf cur;         /* the element being gathered */
    bool space;         /* whitespace is pending in cur */
    int pre, table;     /* inside <pre>, <table> */
    const char *what;   /* the chapter, for errors */
    sl_err *err;
    int failed;
} html;

static bool in_set(const char *name, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(name, *set))
            return true;
    return false;
}

static const char *const drop_tags[] = {"head", "script", "style", "noscript", "template",
                                        "title", "svg", "math", "iframe", "object", NULL};
static const char *const block_tags[] = {
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd",
    "pre", "blockquote", "section", "article", "aside", "header", "footer", "nav", "main",
    "figure", "figcaption", "address", "hr", "body", "html", "td", "th", "tr", "caption",
    "form", "fieldset", "legend", "details", "summary", "center", NULL};

/* Ends the element being gathered: stripped, and when not empty, after a
 * "\n" when it is not the first. */
static void flush(html *h)
{
    strip_from(&h->cur, 0);
    h->space = false;
    if (!h->cur.len)
        return;
    if (h->elements++)
        sl_buf_addc(h->out, '\n');
    sl_buf_add(h->out, h->cur.data, h->cur.len);
    sl_buf_reset(&h->cur);
    if (!h->failed && (h->out->len - h->base > h->lim->max_output || h->out->toobig))
        h->failed = sl_err_limit(h->err, SL_ELIMIT, "extract_max_output",
                                 "the EPUB file's text is over %zu bytes", h->lim->max_output);
}

static void add_text(html *h, const unsigned char *s)
{
    if (h->pre) {
        sl_buf_adds(&h->cur, (const char *)s);
    } else {
        size_t n = strlen((const char *)s), k;
        for (size_t i = 0; i < n;) {
            if ((k = space_at(s + i, n - i))) {
                h->space = h->cur.len > 0;
                i += k;
                continue;
            }
            if (h->space)
                sl_buf_addc(&h->cur, ' ');
            h->space = false;
            sl_buf_addc(&h->cur, (char)s[i++]);
        }
    }
    if (!h->failed && (h->cur.len > h->lim->max_output || h->cur.toobig))
        h->failed = sl_err_limit(h->err, SL_ELIMIT, "extract_max_output",
                                 "the EPUB file's text is over %zu bytes", h->lim->max_output);
}

static void walk(html *h, const xmlNode *n, size_t depth)
{
    if (depth > h->lim->max_xml_depth) {
        h->failed = sl_err_limit(h->err, SL_ELIMIT, "extract_xml_depth",
                                 "%s: the HTML nests deeper than %zu elements (extract_xml_depth)",
                                 h->what, h->lim->max_xml_depth);
        return;
    }
    for (const xmlNode *c = n->children; c && !h->failed; c = c->next) {
        if (++*h->nodes > h->lim->max_xml_nodes) {
            h->failed = sl_err_limit(h->err, SL_ELIMIT, "extract_xml_nodes",
                                     "the document's XML has more than %zu nodes "
                                     "(extract_xml_nodes; stopped in %s)",
                                     h->lim->max_xml_nodes, h->what);
            return;
        }
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                add_text(h, c->content);
            continue;
        }
        if (c->type != XML_ELEMENT_NODE || !c->name)
            continue;
        char name[16];
        size_t k = 0;
        for (const xmlChar *p = c->name; *p && k + 1 < sizeof name; p++)
            name[k++] = (char)tolower(*p);
        name[k] = 0;
        if (in_set(name, drop_tags))
            continue;
        if (!strcmp(name, "br")) {
            if (h->table || h->pre)
                add_text(h, (const unsigned char *)(h->pre ? "\n" : " "));
            else
                flush(h);
        } else if (!strcmp(name, "table") && !h->table) {
            /* partition_html: one element, the cells' text joined by
             * single spaces */
            flush(h);
            h->table++;
            walk(h, c, depth + 1);
            h->table--;
            flush(h);
        } else if (h->table) {
            bool sep = in_set(name, block_tags) || !strcmp(name, "table");
            if (sep)
                h->space = h->cur.len > 0;
            walk(h, c, depth + 1);
            if (sep)
                h->space = h->cur.len > 0;
        } else if (in_set(name, block_tags)) {
            bool pre = !strcmp(name, "pre");
            flush(h);
            h->pre += pre;
            walk(h, c, depth + 1);
            flush(h);
            h->pre -= pre;
        } else {
            walk(h, c, depth + 1);
        }
    }
}

/* Whether the chapter says its own encoding (a BOM, an XML declaration's
 * encoding, a meta charset) in its first KiB; else it is read as UTF-8,
 * as EPUB requires, not as HTML's Latin-1 default. */
static bool says_encoding(const char *d, size_t n)
{
    if (n >= 2 && (((unsigned char)d[0] == 0xfe && (unsigned char)d[1] == 0xff) ||
                   ((unsigned char)d[0] == 0xff && (unsigned char)d[1] == 0xfe)))
        return true;
    if (n >= 3 && !memcmp(d, "\xef\xbb\xbf", 3))
        return false; /* UTF-8 either way */
    size_t m = n < 1024 ? n : 1024;
    for (size_t i = 0; i + 7 <= m; i++)
        if (!strncasecmp(d + i, "charset", 7) || (i + 8 <= m && !strncasecmp(d + i, "encoding", 8)))
            return true;
    return false;
}

static int chapter(html *h, const char *name, const sl_buf *b)
{
    if (b->len > INT_MAX)
        return h->failed = sl_err_set(h->err, SL_ELIMIT, "%s: %zu bytes of HTML is too big",
                                      name, b->len);
    if (!b->len)
        return 0;
    const char *enc = says_encoding(b->data, b->len) ? NULL : "UTF-8";
    xmlDoc *doc = sl_xml_parse_html(name, b->data, b->len, enc, h->err);
    if (!doc)
        return h->failed = -1;
    h->what = name;
    walk(h, (const xmlNode *)doc, 0);
    if (!h->failed)
        flush(h);
    sl_xml_free(doc);
    return h->failed ? -1 : 0;
}

/* A chapter's elements, rendered once however often the spine names it. */
typedef struct {
    size_t elements, len;
    char text[];
} seen_chapter;

static char pending; /* a chapter the spine names, not found yet */

/* Renders a chapter into its own seen_chapter (NULL with err). */
static seen_chapter *render(html *h, const char *name, const sl_buf *b)
{
    sl_buf text;
    sl_buf_init(&text, 0);
    html one = *h;
    one.out = &text;
    one.base = 0;
    one.elements = 0;
    sl_buf_init(&one.cur, 0);
    int rc = chapter(&one, name, b);
    sl_buf_release(&one.cur);
    h->failed = one.failed;
    seen_chapter *c = NULL;
    if (!rc) {
        c = malloc(sizeof *c + text.len + 1);
        if (!c)
            abort();
        c->elements = one.elements;
        c->len = text.len;
        memcpy(c->text, text.data ? text.data : "", text.len);
        c->text[text.len] = 0;
    }
    sl_buf_release(&text);
    return c;
}

/* The chapters `seen` names, read in one pass over the zip (sl_zip_each:
 * found one by one, a spine of n chapters would cost n*n/2 member
 * headers) and rendered. */
typedef struct {
    html *h;
    sl_map *seen;
} fetch;

static bool wanted(const char *name, void *ud)
{
    const fetch *f = ud;
    return sl_map_get(f->seen, name) != NULL;
}

static int rendered(const char *name, const sl_buf *b, void *ud)
{
    fetch *f = ud;
    seen_chapter *c = render(f->h, name, b);
    if (!c)
        return -1;
    void *old = sl_map_put(f->seen, name, c); /* the last of duplicates counts */
    if (old != &pending)
        free(old);
    return 0;
}

static int prefetch(html *h, sl_map *seen, sl_zip *z)
{
    fetch f = {h, seen};
    return sl_zip_each(z, wanted, rendered, &f, h->err) ? (h->failed = -1) : 0;
}

/* Appends a rendered chapter's elements after those before it. */
static int append(html *h, const seen_chapter *c)
{
    if (c->elements) {
        if (h->elements)
            sl_buf_addc(h->out, '\n');
        sl_buf_add(h->out, c->text, c->len);
        h->elements += c->elements;
    }
    if (h->out->len - h->base > h->lim->max_output || h->out->toobig)
        return h->failed = sl_err_limit(h->err, SL_ELIMIT, "extract_max_output",
                                        "the EPUB file's text is over %zu bytes",
                                        h->lim->max_output);
    return 0;
}

static const xmlNode *find(const xmlNode *n, const char *name, size_t depth)
{
    for (const xmlNode *c = n ? n->children : NULL; c && depth < 64; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (!strcmp((const char *)c->name, name))
            return c;
        const xmlNode *f = find(c, name, depth + 1);
        if (f)
            return f;
    }
    return NULL;
}

/* Reads the member; Python's KeyError message when it is absent. */
static int member(sl_zip *z, const char *name, sl_buf *b, sl_err *err)
{
    sl_buf_reset(b);
    if (!sl_zip_read(z, name, b, err))
        return 0;
    if (err && err->code == SL_ENOTFOUND)
        sl_err_set(err, SL_EPARSE, "\"There is no item named '%s' in the archive\"", name);
    return -1;
}

int sl_extract_epub(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    sl_zip *z = sl_zip_open(data, len, lim, err);
    if (!z)
        return -1;
    sl_buf b;
    sl_buf_init(&b, SIZE_MAX);
    size_t nodes = 0;
    xmlDoc *cont = NULL, *opf = NULL;
    char *opf_path = NULL;
    sl_map ids, seen;
    sl_map_init(&ids);
    sl_map_init(&seen);
    html h = {.lim = lim, .out = out, .base = out->len, .nodes = &nodes, .err = err};
    sl_buf_init(&h.cur, 0);
    int rc = -1;
    if (member(z, "META-INF/container.xml", &b, err))
        goto out;
    cont = sl_xml_parse("META-INF/container.xml", b.data ? b.data : "", b.len, lim, 0, &nodes,
                        err);
    if (!cont)
        goto out;
    const xmlNode *rootfile = find((const xmlNode *)cont, "rootfile", 0);
    const char *full = rootfile ? sl_xml_attr(rootfile, NULL, "full-path") : NULL;
    if (!full || !*full) {
        sl_err_set(err, SL_EPARSE, "EPUB package path is missing");
        goto out;
    }
    opf_path = unquote(full);
    char *p = opf_path;
    while (*p == '/')
        p++;
    memmove(opf_path, p, strlen(p) + 1);
    if (!*opf_path) {
        sl_err_set(err, SL_EPARSE, "EPUB package path is missing");
        goto out;
    }
    if (member(z, opf_path, &b, err))
        goto out;
    opf = sl_xml_parse(opf_path, b.data ? b.data : "", b.len, lim, 0, &nodes, err);
    if (!opf)
        goto out;
    const xmlNode *manifest = find((const xmlNode *)opf, "manifest", 0);
    for (const xmlNode *it = manifest ? manifest->children : NULL; it; it = it->next) {
        if (it->type != XML_ELEMENT_NODE || strcmp((const char *)it->name, "item"))
            continue;
        const char *id = sl_xml_attr(it, NULL, "id"), *href = sl_xml_attr(it, NULL, "href");
        if (id && href)
            sl_map_put(&ids, id, (void *)href);
    }
    const char *slash = strrchr(opf_path, '/');
    size_t dlen = slash ? (size_t)(slash - opf_path) : 0;
    const xmlNode *spine = find((const xmlNode *)opf, "spine", 0);
    sl_buf path;
    sl_buf_init(&path, 0);
    char **names = NULL;
    size_t n = 0, alloc = 0;
    for (const xmlNode *ref = spine ? spine->children : NULL; ref; ref = ref->next) {
        if (ref->type != XML_ELEMENT_NODE || strcmp((const char *)ref->name, "itemref"))
            continue;
        const char *idref = sl_xml_attr(ref, NULL, "idref");
        const char *href = idref ? sl_map_get(&ids, idref) : NULL;
        if (!href)
            continue; /* Dify skips an idref the manifest lacks */
        char *uq = unquote(href);
        sl_buf_reset(&path); /* posixpath.join(dirname(opf), href) */
        if (uq[0] != '/' && dlen) {
            sl_buf_add(&path, opf_path, dlen);
            sl_buf_addc(&path, '/');
        }
        sl_buf_adds(&path, uq);
        free(uq);
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            names = sl_xrealloc(names, alloc * sizeof *names);
        }
        names[n] = normpath(path.data ? path.data : "");
        if (!sl_map_get(&seen, names[n]))
            sl_map_put(&seen, names[n], &pending);
        n++;
    }
    sl_buf_release(&path);
    rc = n ? prefetch(&h, &seen, z) : 0;
    for (size_t i = 0; i < n && !rc; i++) {
        seen_chapter *c = sl_map_get(&seen, names[i]);
        if (c == (void *)&pending)
            rc = sl_err_set(err, SL_EPARSE, "\"There is no item named '%s' in the archive\"",
                            names[i]);
        else
            rc = append(&h, c);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
out:
    sl_buf_release(&h.cur);
    for (size_t i = 0; i < seen.cap; i++)
        if (seen.slots[i].key && seen.slots[i].val != &pending)
            free(seen.slots[i].val);
    sl_map_release(&seen);
    sl_map_release(&ids);
    free(opf_path);
    sl_xml_free(opf);
    sl_xml_free(cont);
    sl_buf_release(&b);
    sl_zip_close(z);
    return rc;
}
