/*
 * blockyaml — a fast reader for the block-style YAML that Dify writes.
 *
 * Dify exports DSL files with PyYAML's dumper: block mappings and
 * sequences, plain / single-quoted / double-quoted scalars (folded over
 * several lines when long), and `[]` / `{}` for empty collections.  Reading
 * that subset directly, without libyaml's token and event machinery, is
 * about three times faster, which is what makes large workflows load in a
 * few milliseconds.
 *
 * It is strictly a fast path: anything outside the subset (flow
 * collections, anchors, tags, block scalars, comments after values, tabs,
 * CR line ends, control characters, merge keys, non-text keys, documents
 * markers...) makes it decline, and the caller parses with libyaml, which
 * also produces the error messages.  When it accepts, the result is the
 * value libyaml-based parsing gives for the same text (tests/unit/yaml.c
 * and fuzz/fuzz_dsl.c check this on every input they see).
 */
#ifndef SL_BLOCKYAML_H
#define SL_BLOCKYAML_H

#include <stddef.h>

#include "core/value.h"

/* 0 with *out (a new reference) when the text is in the subset, -1 when the
 * caller must use the full parser. */
int sl_blockyaml_parse(const char *text, size_t len, sl_value **out);

#endif
