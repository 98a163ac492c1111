/*
 * cond — Dify's condition evaluator, shared by if-else, loop break
 * conditions and (for its helpers) the list-operator.
 *
 * A condition is the DSL mapping
 *     {variable_selector, comparison_operator, value, sub_variable_condition}
 * and a condition list is joined by a logical operator, "and" or "or", with
 * short-circuit evaluation as in Dify: "and" stops at the first false
 * condition, "or" at the first true one.
 *
 * The semantics follow graphon's condition processor (the engine inside
 * Dify) operator by operator; cond.c says, above each one, what Dify does
 * and why sluice does the same.  The points that surprise people:
 *   - a variable that does not exist fails the evaluation ("Variable [..]
 *     not found"); a variable that exists with the value None is fine and
 *     is what `null` / `empty` test for;
 *   - `empty` is Python falsiness: "", [], {}, 0, false and None are empty;
 *   - `is` / `is not` are false when the value is None, and an error for
 *     values that are neither text nor boolean;
 *   - numbers compare with the expected value converted from text the way
 *     Python's int()/float() would ("3" == 3, "3.5" > 3);
 *   - `in` / `not in` need a list as the expected value;
 *   - `contains` / `not contains` / `all of` on an array of files evaluate
 *     the `sub_variable_condition` on file attributes (name, size, type,
 *     extension, mime_type, transfer_method, url, related_id).
 * Condition `value` text may hold {{#node.var#}} references; they are
 * rendered before comparing.  Sluice accepts a plain number as `value`
 * (hand-written YAML says `value: 5`) and reads it as its text, "5".
 *
 * Errors come back as an sl_err (SL_EINVAL): its type is a Python-style
 * class name (ValueError, TypeError — what Dify reports as the node's
 * error_type), its message says which condition, what was wrong and what
 * to do.  The caller releases it with sl_err_clear().
 *
 * Ownership: inputs are borrowed; outcomes own their arrays and are
 * released with sl_cond_outcome_release().
 */
#ifndef SL_COND_H
#define SL_COND_H

#include <stdbool.h>

#include "engine/node.h"

/* True for every comparison_operator Dify knows: contains, not contains,
 * start with, end with, is, is not, empty, not empty, in, not in, all of,
 * =, ≠, >, <, ≥, ≤, null, not null, exists, not exists. */
bool sl_cond_op_known(const char *op);

/* Evaluates one comparison of `actual` (NULL or JSON null = None) against
 * `expected` (already rendered; NULL = None).  Returns 0 with *out set, or
 * -1 with err filled (the message names the operator and the values, the
 * caller adds which condition it was). */
int sl_cond_eval_one(const char *op, const sl_value *actual, const sl_value *expected,
                     bool *out, sl_err *err);

/* What evaluating a condition list produced, for node inputs and
 * process_data (Dify records the same). */
typedef struct {
    bool result;
    /* [{actual_value, expected_value, comparison_operator}] for each
     * evaluated condition except exists/not exists and file
     * sub-conditions (Dify records those nowhere either). */
    sl_value *inputs;
    /* [bool] for each evaluated condition, up to the short-circuit. */
    sl_value *results;
} sl_cond_outcome;

void sl_cond_outcome_release(sl_cond_outcome *o);

/* How a condition list reads variables and renders {{#…#}} in values.
 * sl_cond_eval_list() builds one from an sl_node_exec; a loop node that
 * must see its round's variables can pass its own.  `get` returns a new
 * reference or NULL when the variable does not exist; `render` appends to
 * out and returns -1 when out hit its cap. */
typedef struct {
    sl_value *(*get)(void *ud, const sl_value *selector);
    int (*render)(void *ud, const char *text, sl_buf *out);
    void *ud;
    size_t text_cap; /* cap for one rendered value; 0 = SL_BUF_DEFAULT_CAP */
} sl_cond_env;

/*
 * Evaluates `conditions` (a DSL list of conditions; NULL or empty = no
 * conditions) joined by `logical_operator` ("and" or "or"; NULL = "and").
 *
 * With no conditions the result is what Python's all([]) / any([]) give:
 * true for "and", false for "or".
 *
 * Returns 0 with *out filled (release it), or -1 with err filled and *out
 * left empty.  The error message starts with "condition N (selector):".
 * Used by if-else (once per case) and by loop nodes for break_conditions:
 *
 *     sl_cond_outcome o;
 *     sl_err e = {0};
 *     if (sl_cond_eval_list(x, break_conditions, logical_operator, &o, &e) < 0) {
 *         int rc = sl_exec_fail(x, e.type, "break conditions: %s", e.msg);
 *         sl_err_clear(&e);
 *         return rc;
 *     }
 *     bool stop = o.result;
 *     sl_cond_outcome_release(&o);
 */
int sl_cond_eval_list(sl_node_exec *x, const sl_value *conditions, const char *logical_operator,
                      sl_cond_outcome *out, sl_err *err);
int sl_cond_eval_list_env(const sl_cond_env *env, const sl_value *conditions,
                          const char *logical_operator, sl_cond_outcome *out, sl_err *err);

/* ---- load-time checks ---- */

/* Validates holder[key] as a condition list: a list (missing or null
 * passes when !required), each item a mapping with a valid
 * variable_selector, a known comparison_operator, a value of the right
 * shape (text, number, boolean, list of text or booleans, or null) whose
 * {{#…#}} references resolve, and a well-formed sub_variable_condition.
 * `field` names the list in messages, e.g. "cases[0].conditions".
 * Reports every problem; returns -1 when there was any. */
int sl_cond_check_list(sl_check *c, const struct sl_gnode *n, const sl_value *holder,
                       const char *key, const char *field, bool required);

/* Validates holder[key] as a logical operator ("and" / "or"); missing or
 * null passes when !required. */
int sl_cond_check_logical(sl_check *c, const struct sl_gnode *n, const sl_value *holder,
                          const char *key, const char *field, bool required);

/* ---- helpers shared with the list-operator ---- */

/* A file attribute as Dify's file manager reads it: name (filename), size,
 * type, extension, mime_type, transfer_method, url (url, else remote_url),
 * related_id.  New reference; NULL when the file lacks it (None).  *known
 * is set false for a key that is not a file attribute. */
sl_value *sl_cond_file_attr(const sl_value *file, const char *key, bool *known);

/* Python ==: numbers by value (1 == 1.0, True == 1), deep on lists and
 * dicts, None == None. */
bool sl_cond_py_equal(const sl_value *a, const sl_value *b);

/* Python's int(text) / float(text): surrounding whitespace, a sign, digit
 * groups joined by single underscores; float also takes inf, infinity and
 * nan.  Return 0, or -1 when Python would raise ValueError (or the integer
 * does not fit in 64 bits). */
int sl_cond_py_int(const char *s, json_int_t *out);
int sl_cond_py_float(const char *s, double *out);

/* Python's str(v) for messages and for `contains` with a non-text expected
 * value: None, True/False, repr of lists ("['a', 'b']"). */
int sl_cond_py_str(const sl_value *v, sl_buf *out);

#endif
