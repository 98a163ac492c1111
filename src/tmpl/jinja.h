/*
 * jinja — a Jinja2-compatible template engine (Dify's template-transform
 * node and jinja2 LLM prompts).
 *
 * Life cycle: compile once, render many times, free.
 *
 *   sl_jinja *t;
 *   if (sl_jinja_compile(text, len, "node tt", &t, &err) < 0) ... err.msg
 *   sl_jinja_render(t, ctx, NULL, &out, &err);   any number of times
 *   sl_jinja_free(t);
 *
 * A compiled template is immutable: several threads may render it at once
 * (each render keeps its own state; context values are only read, and
 * jansson's reference counts are atomic).
 *
 * Semantics follow Jinja2 3.1 with its default Environment: no autoescape,
 * trim_blocks and lstrip_blocks off, one trailing newline of the template
 * dropped, undefined variables render as "" (but reading an attribute of
 * one is an error), values print as Python's str() would.  The context is
 * an sl_value object (borrowed); its members are the template's variables.
 *
 * Errors: sl_jinja_compile() fails with SL_EPARSE and a message
 * "NAME:LINE:COL: what was found, what was expected"; sl_jinja_render()
 * fails with SL_EINVAL (a runtime error, naming the expression and its
 * line:col), SL_ELIMIT (a cap of sl_jinja_limits, naming the cap), or the
 * code the interrupt callback gave (SL_ECANCELED, SL_ETIMEOUT).
 * On failure `out` holds whatever was rendered before the error.
 *
 * Bounds: a render polls, about every millisecond of work (loop rounds,
 * items and bytes that filters handle, macro calls), the caller's
 * interrupt callback and its byte budget.  The budget counts the memory
 * held by the values the render makes (strings, lists, dicts, numbers)
 * and by text captured for macros and set blocks; it is measured at
 * jansson's allocator, which this module sets for the process (plain
 * malloc and free, counted only on a thread while it renders).
 */
#ifndef SL_JINJA_H
#define SL_JINJA_H

#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

typedef struct sl_jinja sl_jinja;

typedef struct {
    size_t max_output_chars;   /* characters of output (Dify: 400,000) */
    long max_loop_iterations;  /* iterations of all loops of one render */
    int max_depth;             /* macro/call nesting */
    const char *limit_name;    /* how users raise max_output_chars, for messages
                                  (e.g. "max_string_bytes"); NULL: "max_output_chars" */
    size_t max_bytes;          /* memory the values of one render may hold
                                  (SIZE_MAX: no limit) */
    const char *bytes_limit_name; /* how users raise max_bytes, for messages
                                  (e.g. "template_max_bytes"); NULL: "max_bytes" */
    /* Asked about every millisecond of work: 0 goes on; -1 with err set
     * (SL_ECANCELED, SL_ETIMEOUT and a message saying what to do) ends the
     * render with that error.  NULL: never asked. */
    int (*interrupt)(void *ud, sl_err *err);
    void *interrupt_ud;
} sl_jinja_limits;

#define SL_JINJA_MAX_OUTPUT_CHARS 400000
#define SL_JINJA_MAX_LOOP_ITERATIONS 1000000L
#define SL_JINJA_MAX_DEPTH 100
#define SL_JINJA_MAX_BYTES ((size_t)64 << 20)

/* The defaults above (used when a render gets lim == NULL). */
void sl_jinja_limits_default(sl_jinja_limits *lim);

/* Compiles text[0..len); `name` (copied; may be NULL) names the template
 * in messages.  On success *out is a new template the caller frees. */
int sl_jinja_compile(const char *text, size_t len, const char *name, sl_jinja **out, sl_err *err);

/* Appends the rendering to out; ctx is an object (or NULL for none). */
int sl_jinja_render(const sl_jinja *t, const sl_value *ctx, const sl_jinja_limits *lim,
                    sl_buf *out, sl_err *err);

void sl_jinja_free(sl_jinja *t);

/* Python's str() of a value, as a template prints it: strings as they
 * are, True/False/None, 1.0, lists and dicts as their repr. */
void sl_jinja_py_str(const sl_value *v, sl_buf *out);

#endif
