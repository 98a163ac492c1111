/*
 * dsl — a Dify DSL file as text: reading one, capped as Dify caps it, and
 * writing a document back out (export).  Parsing is dsl/yaml.h, .zip app
 * bundles are dsl/bundle.h, and checking a document as a workflow is
 * engine/graph.h.  Errors: 0, or -1 with an sl_err for a user.
 */
#ifndef SL_DSL_H
#define SL_DSL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

/* Largest DSL file accepted (Dify refuses files over 10 MB). */
#define SL_DSL_MAX_BYTES ((size_t)10 << 20)

/* Reads the DSL file at path ("-": standard input) whole: *text (heap,
 * NUL-terminated) and *len.  A file over SL_DSL_MAX_BYTES is refused
 * (SL_ELIMIT). */
int sl_dsl_read_file(const char *path, char **text, size_t *len, sl_err *err);

/* Export back to YAML: a parsed document (it need not validate: a
 * workflow with node types sluice does not run can still be exported)
 * without sluice's test entries (sluice_test) and canvas notes, secret
 * environment variables emptied unless include_secrets.  Appends to out. */
int sl_dsl_export(const sl_value *doc, bool include_secrets, sl_buf *out, sl_err *err);

#endif
