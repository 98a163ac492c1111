/*
 * ref — Dify's inline variable references in text: {{#node_id.var.path#}}.
 *
 * A reference is `{{#` + node id ([A-Za-z0-9_]{1,50}) + 1 to 10 parts
 * ([A-Za-z_][A-Za-z0-9_]{0,29}) joined by dots + `#}}`.  Anything else
 * (including near-misses) is plain text and is copied unchanged.
 *
 * Rendering writes each referenced value as sl_value_text() shows it; a
 * reference to a variable that does not exist renders as its dotted path
 * ("node.var"), exactly as Dify's convert_template does.
 */
#ifndef SL_REF_H
#define SL_REF_H

#include "core/buf.h"
#include "core/value.h"

#define SL_REF_MAX_PARTS 11

/* Returns a new reference, or NULL when the variable does not exist. */
typedef sl_value *(*sl_ref_resolve_fn)(void *ud, const char *const *parts, int nparts);
/* Called for each reference found; return non-zero to stop the scan. */
typedef int (*sl_ref_visit_fn)(void *ud, const char *const *parts, int nparts);

/* Appends the rendered text; -1 when `out` hit its cap. */
int sl_ref_render(const char *text, sl_ref_resolve_fn fn, void *ud, sl_buf *out);
/* The same, each value as Dify's Segment.markdown shows it: what answer
 * and end nodes show (sl_ref_markdown). */
int sl_ref_render_markdown(const char *text, sl_ref_resolve_fn fn, void *ud, sl_buf *out);
/* A value as Dify's Segment.markdown: a list as "- item" lines (each item
 * as Python's str() shows it), an object as JSON indented by 2; files,
 * lists of files and anything else as sl_value_text().  -1 when `out` hit
 * its cap. */
int sl_ref_markdown(const sl_value *v, sl_buf *out);
/* Visits every reference; returns what the visitor returned, or 0. */
int sl_ref_scan(const char *text, sl_ref_visit_fn fn, void *ud);

/* Called for each piece of a text in order: a run of plain text (parts NULL,
 * nparts 0) or a reference (lit NULL, len 0).  Return non-zero to stop. */
typedef int (*sl_ref_piece_fn)(void *ud, const char *lit, size_t len, const char *const *parts,
                               int nparts);
/* Splits text into plain runs and references (empty runs are left out);
 * returns what fn returned, or 0. */
int sl_ref_pieces(const char *text, sl_ref_piece_fn fn, void *ud);

#endif
