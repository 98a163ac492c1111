/*
 * value — the one value type for workflow data.
 *
 * sl_value is jansson's json_t: a refcounted tree of null, bool, int64,
 * double, string, array and object.  Using the JSON library's node as the
 * workflow value means no conversion at the edges (DSL, events, HTTP bodies,
 * LLM wire formats all speak it) and one ownership rule everywhere.
 *
 * Files are objects tagged the way Dify serialises them:
 *   {"dify_model_identity": "__dify__file__", "type": "document", ...}
 * so a file survives JSON round trips and Dify clients recognise it.
 *
 * OWNERSHIP (the rule, stated once; every function of sluice follows it):
 *   - A `const sl_value *` parameter is borrowed: the callee neither keeps
 *     nor changes it (it takes its own reference if it keeps it).
 *   - A non-const `sl_value *` parameter is borrowed too, and the callee may
 *     change it (sl_model_call fills a request), unless the comment says
 *     "steals": then the callee owns it from the call on, also on failure.
 *     Setters that store a value steal it: sl_exec_output/_input/_process,
 *     sl_exec_event, sl_pool_set/_set_node/_assign, sl_rx_emit; jansson's
 *     own follow its convention (json_object_set_new steals, _set does not).
 *   - A returned `sl_value *` is a new reference the caller must
 *     json_decref(), unless the comment says "borrowed" (getters into a
 *     container, json_object_get, sl_run_outputs): valid while the
 *     container holds it.
 *   - Values shared between threads are never mutated after they are
 *     published (to the variable pool or an event); mutate a deep copy.
 *
 * The jansson names are used throughout (json_object_get, json_decref…):
 * sl_value is json_t, and a second set of names for the same calls would
 * only be two ways to read one thing.
 */
#ifndef SL_VALUE_H
#define SL_VALUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

typedef json_t sl_value;


/* Dify's names for value types: string, number, integer, boolean, object,
 * file, array[string], array[number], array[object], array[boolean],
 * array[file], array[any], none. */
const char *sl_value_type_name(const sl_value *v);

bool sl_value_is_file(const sl_value *v);
/* Whether id has the shape of a file id sluice issues (a lowercase UUID from
 * sl_rand_uuid; ids guard files, so a caller without one must fail):
 * anything else (a path, "../x", a URL) never names a stored file. */
bool sl_file_id_ok(const char *id);
bool sl_value_is_number(const sl_value *v);     /* int or double */
double sl_value_number(const sl_value *v);      /* int or double as double */

/* Python truthiness: None, False, 0, 0.0, "", [], {} are false. */
bool sl_value_truthy(const sl_value *v);

/* Python ==: 1 == 1.0, deep on arrays and objects. */
bool sl_value_equal(const sl_value *a, const sl_value *b);

/* The text a value shows inside a template ({{#node.var#}}), as Dify's
 * Segment.text: strings as they are, None as "", numbers as Python prints
 * them, true/false for booleans, arrays and objects as JSON
 * (ensure_ascii=False, Python's separators), an empty array as "". */
int sl_value_text(const sl_value *v, sl_buf *out);

/* JSON with Python json.dumps separators (", " and ": ") and no ASCII
 * escaping, as Dify shows values; `pretty` indents by 2. */
int sl_value_pyjson(const sl_value *v, sl_buf *out, bool pretty);

/* Compact JSON (events, --json output). */
int sl_value_json(const sl_value *v, sl_buf *out);

/* Python repr of a float: 1.0, 0.1, 1e+16, inf, nan. */
void sl_fmt_double(double d, char out[32]);

/* Approximate size in bytes of the value as JSON text, for size limits;
 * stops counting past `limit` and returns a value > limit. */
size_t sl_value_size(const sl_value *v, size_t limit);

/* Deep copy (new reference). */
sl_value *sl_value_deep_copy(const sl_value *v);

/* Parse a number written as text the way Python's int()/float() would
 * accept it; returns a new int or real, or NULL. */
sl_value *sl_value_number_from_text(const char *s);

/* Whether s[0..n) is valid UTF-8 (no overlongs, surrogates or code points
 * past U+10FFFF). */
bool sl_utf8_valid(const char *s, size_t n);
/* Length of the UTF-8 sequence at p (1 for a bad byte; *ok false then, or
 * the length of the valid prefix Python replaces with one U+FFFD). */
size_t sl_utf8_step(const unsigned char *p, size_t n, bool *ok);
/* sl_utf8_step that also decodes: *cp the code point, U+FFFD where the
 * sequence is bad (*ok false then; ok may be NULL). */
size_t sl_utf8_cp(const unsigned char *p, size_t n, uint32_t *cp, bool *ok);
/* cp as UTF-8 in out (1 to 4 bytes, the count returned); NUL, surrogates
 * and numbers past U+10FFFF become U+FFFD. */
size_t sl_utf8_put(uint32_t cp, char out[4]);
/* The number of characters in the UTF-8 text s[0..n) (continuation bytes
 * not counted), as Python's len() on the decoded string. */
size_t sl_utf8_chars(const char *s, size_t n);
/* Appends s to out with every invalid sequence replaced by U+FFFD, the
 * way Python's decode(errors="replace") does. */
void sl_utf8_clean(const char *s, size_t n, sl_buf *out);

/* Standard base64 with padding, appended to out. */
void sl_base64_encode(const unsigned char *p, size_t n, sl_buf *out);
/* Standard or URL-safe base64, whitespace ignored; -1 on a bad character
 * or when out hits its cap. */
int sl_base64_decode(const char *s, size_t n, sl_buf *out);

#endif
