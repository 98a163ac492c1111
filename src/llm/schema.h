/*
 * schema — checks a value against the JSON Schema subset that structured
 * outputs and parameter extraction use: type (string, number, integer,
 * boolean, object, array, null, or a list of them), properties, required,
 * additionalProperties: false, items, enum, const, minItems/maxItems,
 * minLength/maxLength, minimum/maximum.  Unknown keywords are ignored.
 */
#ifndef SL_LLM_SCHEMA_H
#define SL_LLM_SCHEMA_H

#include <stddef.h>

#include "core/err.h"
#include "core/value.h"

/* 0 when v fits; -1 with err (SL_EINVAL) naming the path ("$.items[2].name"). */
int sl_schema_check(const sl_value *schema, const sl_value *v, sl_err *err);

/* The JSON object in a model's answer: the whole text, or the text inside
 * a ```json fence, or from the first '{' to the last '}'.  New reference
 * or NULL. */
sl_value *sl_json_in_text(const char *text, size_t len);

#endif
