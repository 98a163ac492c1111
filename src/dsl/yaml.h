/*
 * yaml — YAML text to sl_value and back, with source positions.
 *
 * Parsing follows the YAML 1.1 resolution rules PyYAML's safe_load uses
 * (Dify loads DSL files with it): plain `yes`/`on`/`true` are booleans,
 * `~`/`null`/empty are null, ints (decimal, 0x, 0b, legacy 0-octal,
 * sexagesimal 1:30) and floats with a dot; `<<` merge keys are merged;
 * quoted scalars are always strings.
 *
 * The document owns its root value and a side table of marks: for every
 * object key and array element the line and column (1-based) where its
 * value starts, so errors can say file:line:col.  Marks are looked up by
 * (container, key) so shared singletons (true/false/null) never collide.
 *
 * Limits: input size (caller checks), nesting depth 256, and an alias
 * expansion budget so "billion laughs" documents are refused.
 */
#ifndef SL_YAML_H
#define SL_YAML_H

#include "core/err.h"
#include "core/map.h"
#include "core/value.h"

typedef struct {
    int line, col; /* 1-based; 0 when unknown */
} sl_mark;

typedef struct {
    sl_value *root;   /* owned */
    char *path;       /* for messages */
    struct sl_marks *marks; /* (container, key) -> mark */
} sl_yaml_doc;

/* On failure the document is already released (nothing to free). */
int sl_yaml_parse(const char *text, size_t len, const char *path, sl_yaml_doc *doc, sl_err *err);
/* Without marks (faster; lookups then find nothing).  The graph loader
 * parses this way first and again with marks only when it has something
 * to report, so valid files load at full speed. */
int sl_yaml_parse_ex(const char *text, size_t len, const char *path, sl_yaml_doc *doc,
                     bool marks, sl_err *err);
void sl_yaml_doc_release(sl_yaml_doc *doc);

/* Where the value under `key` of object `obj` starts (obj's own mark if the
 * key was not in the file).  sl_yaml_index_mark does the same for arrays. */
sl_mark sl_yaml_key_mark(const sl_yaml_doc *doc, const sl_value *obj, const char *key);
sl_mark sl_yaml_index_mark(const sl_yaml_doc *doc, const sl_value *arr, size_t i);
sl_mark sl_yaml_mark(const sl_yaml_doc *doc, const sl_value *container);

/* A plain (unquoted) scalar as YAML 1.1 / PyYAML resolves it: null, bool,
 * int, float or text (new reference). */
sl_value *sl_yaml_resolve_plain(const char *s, size_t len);

/* Block-style YAML that reads back to an equal value: strings that would
 * resolve to something else (as PyYAML would read them) are quoted, floats
 * always carry a dot, and multi-line text is written double-quoted. */
int sl_yaml_emit(const sl_value *v, sl_buf *out, sl_err *err);

#endif
