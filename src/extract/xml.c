#include "extract/xml.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "core/dl.h"

/* libxml2 is opened on first use; only these names are called. */
#define XML_FNS(X)                                                                              \
    X(xmlInitParser) X(xmlCreateMemoryParserCtxt) X(xmlCtxtUseOptions) X(xmlParseDocument)     \
    X(xmlFreeParserCtxt) X(xmlFreeDoc) X(xmlStopParser) X(xmlSAX2StartElementNs)              \
    X(xmlSAX2EndElementNs) X(xmlSAX2Characters) X(xmlSAX2CDataBlock) X(htmlReadMemory)
#define XML_PTR(f) static __typeof__(&f) p_##f;
XML_FNS(XML_PTR)
#undef XML_PTR
#define XML_SYM(f) {#f, (void **)&p_##f},
static const sl_dl_sym xml_syms[] = {XML_FNS(XML_SYM){NULL, NULL}};
#undef XML_SYM
static const char *const xml_names[] = {"libxml2.so.2", "libxml2.so", NULL};
static sl_dl_lib xml_lib = {.what = "libxml2", .sonames = xml_names, .package = "libxml2",
                            .syms = xml_syms};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_xml(void)
{
    p_xmlInitParser();
}

typedef struct {
    const sl_extract_limits *lim;
    unsigned flags;
    size_t depth;
    size_t *nodes;
    enum { STOP_NONE, STOP_DEPTH, STOP_NODES, STOP_DTD } why; /* the parse was stopped */
    /* libxml2's own handlers, called through */
    startElementNsSAX2Func start;
    endElementNsSAX2Func end;
    charactersSAXFunc chars;
    cdataBlockSAXFunc cdata;
    internalSubsetSAXFunc subset;
} walk;

static walk *state(void *ctx)
{
    return ((xmlParserCtxtPtr)ctx)->_private;
}

static void stop(void *ctx, int why)
{
    walk *w = state(ctx);
    if (!w->why)
        w->why = why;
    p_xmlStopParser(ctx);
}

static bool count(void *ctx)
{
    walk *w = state(ctx);
    if (++*w->nodes > w->lim->max_xml_nodes) {
        stop(ctx, STOP_NODES);
        return false;
    }
    return true;
}

static void on_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int nns, const xmlChar **nss, int nattr, int ndef, const xmlChar **attrs)
{
    walk *w = state(ctx);
    if (w->why)
        return;
    if (++w->depth > w->lim->max_xml_depth) {
        stop(ctx, STOP_DEPTH);
        return;
    }
    if (count(ctx))
        w->start(ctx, local, prefix, uri, nns, nss, nattr, ndef, attrs);
}

static void on_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    walk *w = state(ctx);
    if (w->why)
        return;
    w->depth--;
    w->end(ctx, local, prefix, uri);
}

static void on_chars(void *ctx, const xmlChar *ch, int len)
{
    walk *w = state(ctx);
    if (!w->why && count(ctx))
        w->chars(ctx, ch, len);
}

static void on_cdata(void *ctx, const xmlChar *ch, int len)
{
    walk *w = state(ctx);
    if (!w->why && count(ctx))
        w->cdata(ctx, ch, len);
}

static void on_subset(void *ctx, const xmlChar *name, const xmlChar *ext, const xmlChar *sys)
{
    walk *w = state(ctx);
    if (w->flags & SL_XML_NO_DTD)
        stop(ctx, STOP_DTD);
    else if (w->subset)
        w->subset(ctx, name, ext, sys);
}

xmlDoc *sl_xml_parse(const char *what, const void *data, size_t len, const sl_extract_limits *lim,
                     unsigned flags, size_t *nodes, sl_err *err)
{
    if (sl_dl_load(&xml_lib, err))
        return NULL;
    pthread_once(&init_once, init_xml);
    if (len > INT_MAX) {
        sl_err_set(err, SL_ELIMIT, "%s: %zu bytes of XML is too big", what, len);
        return NULL;
    }
    xmlParserCtxtPtr ctxt = p_xmlCreateMemoryParserCtxt(data, (int)len);
    if (!ctxt) {
        sl_err_set(err, SL_EPARSE, "%s: the XML parser could not start (empty part?)", what);
        return NULL;
    }
    /* No XML_PARSE_NOENT (entities stay references), no DTDLOAD or
     * DTDATTR (no external subset), no HUGE (libxml2's own caps on text
     * and depth hold). */
    p_xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                  XML_PARSE_NOCDATA);
    walk w = {.lim = lim, .flags = flags, .nodes = nodes};
    w.start = ctxt->sax->startElementNs ? ctxt->sax->startElementNs : p_xmlSAX2StartElementNs;
    w.end = ctxt->sax->endElementNs ? ctxt->sax->endElementNs : p_xmlSAX2EndElementNs;
    w.chars = ctxt->sax->characters ? ctxt->sax->characters : p_xmlSAX2Characters;
    w.cdata = ctxt->sax->cdataBlock ? ctxt->sax->cdataBlock : p_xmlSAX2CDataBlock;
    w.subset = ctxt->sax->internalSubset;
    ctxt->sax->startElementNs = on_start;
    ctxt->sax->endElementNs = on_end;
    ctxt->sax->characters = on_chars;
    ctxt->sax->cdataBlock = on_cdata;
    ctxt->sax->internalSubset = on_subset;
    ctxt->_private = &w;
    p_xmlParseDocument(ctxt);
    xmlDoc *doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    if (w.why || !ctxt->wellFormed || !doc) {
        if (w.why == STOP_DEPTH)
            sl_err_limit(err, SL_ELIMIT, "extract_xml_depth",
                         "%s: the XML nests deeper than %zu elements (line %d; "
                         "extract_xml_depth)",
                         what, lim->max_xml_depth, ctxt->input ? ctxt->input->line : 0);
        else if (w.why == STOP_NODES)
            sl_err_limit(err, SL_ELIMIT, "extract_xml_nodes",
                         "the document's XML has more than %zu nodes (extract_xml_nodes; "
                         "stopped in %s)",
                         lim->max_xml_nodes, what);
        else if (w.why == STOP_DTD)
            sl_err_set(err, SL_EPARSE,
                       "%s: the XML declares a DTD (<!DOCTYPE>), which Office Open XML does not "
                       "allow; refused (entities are never expanded)",
                       what);
        else {
            const char *msg = ctxt->lastError.message ? ctxt->lastError.message : "not well-formed";
            size_t n = strlen(msg);
            while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                n--;
            sl_err_set(err, SL_EPARSE, "%s: bad XML at line %d: %.*s", what,
                       ctxt->lastError.line, (int)n, msg);
        }
        if (doc)
            p_xmlFreeDoc(doc);
        p_xmlFreeParserCtxt(ctxt);
        return NULL;
    }
    p_xmlFreeParserCtxt(ctxt);
    return doc;
}

xmlDoc *sl_xml_parse_html(const char *what, const void *data, size_t len, const char *encoding,
                          sl_err *err)
{
    if (sl_dl_load(&xml_lib, err))
        return NULL;
    pthread_once(&init_once, init_xml);
    if (len > INT_MAX) {
        sl_err_set(err, SL_ELIMIT, "%s: %zu bytes of HTML is too big", what, len);
        return NULL;
    }
    xmlDoc *doc = p_htmlReadMemory(data, (int)len, NULL, encoding,
                                   HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                       HTML_PARSE_RECOVER | HTML_PARSE_NOIMPLIED);
    if (!doc)
        sl_err_set(err, SL_EPARSE, "%s: the HTML parser read nothing", what);
    return doc;
}

void sl_xml_free(xmlDoc *doc)
{
    if (doc)
        p_xmlFreeDoc(doc);
}

xmlNode *sl_xml_root(const xmlDoc *doc)
{
    for (xmlNode *n = doc ? doc->children : NULL; n; n = n->next)
        if (n->type == XML_ELEMENT_NODE)
            return n;
    return NULL;
}

bool sl_xml_is(const xmlNode *n, const char *ns, const char *name)
{
    if (!n || n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, name))
        return false;
    if (!ns)
        return !n->ns || !n->ns->href;
    return n->ns && n->ns->href && !strcmp((const char *)n->ns->href, ns);
}

xmlNode *sl_xml_child(const xmlNode *n, const char *ns, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (sl_xml_is(c, ns, name))
            return c;
    return NULL;
}

xmlNode *sl_xml_next(const xmlNode *c, const char *ns, const char *name)
{
    for (c = c ? c->next : NULL; c; c = c->next)
        if (sl_xml_is(c, ns, name))
            return (xmlNode *)c;
    return NULL;
}

const char *sl_xml_attr(const xmlNode *n, const char *ns, const char *name)
{
    if (!n || n->type != XML_ELEMENT_NODE)
        return NULL;
    for (xmlAttr *a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name))
            continue;
        if (ns ? !(a->ns && a->ns->href && !strcmp((const char *)a->ns->href, ns)) : a->ns != NULL)
            continue;
        xmlNode *t = a->children;
        return t && t->type == XML_TEXT_NODE && t->content ? (const char *)t->content : "";
    }
    return NULL;
}

void sl_xml_text(const xmlNode *n, sl_buf *out)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
            sl_buf_adds(out, (const char *)c->content);
}
