/*
 * xml — the XML parts of a document (docx, xlsx, pptx, odt, epub) and
 * EPUB's HTML chapters, parsed with libxml2, loaded on first use (core/dl) as libcurl is,
 * so that sluice's start does not map it.
 *
 * The parts are hostile.  Parsing is from memory with XML_PARSE_NONET, no
 * DTD loading, no entity substitution and no "huge" mode, so an external
 * entity (XXE) is never fetched or read and an entity is never expanded;
 * with SL_XML_NO_DTD a document that declares a DTD at all is refused
 * (Office Open XML forbids them, ECMA-376 part 2).  Depth and node count
 * are bounded by sl_extract_limits while parsing (the parse stops at the
 * limit, SL_ELIMIT), the node count across every part of one document
 * through the caller's counter.
 *
 * The result is libxml2's own tree, walked through its node structs
 * (children, next, type, name, ns, content) with the helpers below; free
 * it with sl_xml_free.  Errors are SL_EPARSE with the part's name, line
 * and libxml2's message.
 */
#ifndef SL_EXTRACT_XML_H
#define SL_EXTRACT_XML_H

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "extract/extract.h"

enum { SL_XML_NO_DTD = 1 };

/* Parses data (the part called `what` in errors).  *nodes is the running
 * count of elements and text pieces (start it at 0 for a document), checked
 * against lim->max_xml_nodes.  NULL with err. */
xmlDoc *sl_xml_parse(const char *what, const void *data, size_t len, const sl_extract_limits *lim,
                     unsigned flags, size_t *nodes, sl_err *err);
void sl_xml_free(xmlDoc *doc);

/* Parses HTML as browsers do (libxml2's HTML parser: recovering, no
 * network, no implied elements), in `encoding` (NULL: what the document
 * declares).  Not bounded while parsing: callers bound the input and walk
 * the tree with their own depth bound.  NULL with err (SL_EPARSE). */
xmlDoc *sl_xml_parse_html(const char *what, const void *data, size_t len, const char *encoding,
                          sl_err *err);

/* The document's root element (NULL if none). */
xmlNode *sl_xml_root(const xmlDoc *doc);
/* Whether n is the element {ns}name (ns NULL: no namespace). */
bool sl_xml_is(const xmlNode *n, const char *ns, const char *name);
/* The first child element {ns}name of n, or NULL; and the next sibling
 * element after c with the same name. */
xmlNode *sl_xml_child(const xmlNode *n, const char *ns, const char *name);
xmlNode *sl_xml_next(const xmlNode *c, const char *ns, const char *name);
/* The value of n's attribute {ns}name (ns NULL: an unprefixed attribute),
 * or NULL when it is absent.  Points into the tree. */
const char *sl_xml_attr(const xmlNode *n, const char *ns, const char *name);
/* Appends the text of n's direct text children (not of its elements). */
void sl_xml_text(const xmlNode *n, sl_buf *out);

#endif
