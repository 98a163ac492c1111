/*
 * builtin — the tools sluice runs itself, natively, for the Dify providers
 * public apps use most: time, json_process, webscraper.
 *
 * sl_builtins() is one process-wide set of bindings, made on first use
 * (pthread_once) and never freed.  Each provider is an in-process toolset
 * bound under its legacy id ("time") and its plugin id
 * ("langgenius/time/time"), so a DSL finds it either way; the tool node and
 * agents look here last (nodes/toolcall.c), after the bundle's and the
 * settings' bindings: a user's binding always wins.
 *
 * Each tool keeps the plugin's tool name, parameter names and output (the
 * text Dify's tool yields); its inputSchema comes from the plugin's yaml
 * parameters.  Where Dify answers a failure with text ("Invalid timezone:
 * X"), a built-in fails the call instead (SL_EINVAL), so a failure never
 * reads as a result (docs/tools.md, "Built-in tools").
 *
 * The provider files (builtin_time.c, …) fill an sl_builtin_tool table;
 * builtin.c turns a table into a toolset.  A tool function reads its
 * arguments with the sl_builtin_arg_* helpers (which accept what Dify's
 * parameter conversion accepts) and appends to res; it returns 0, or -1
 * with err.
 */
#ifndef SL_TOOLS_BUILTIN_H
#define SL_TOOLS_BUILTIN_H

#include <stdbool.h>

#include "tools/binding.h"
#include "tools/tool.h"

/* The built-in providers as bindings (borrowed; lives as long as the
 * process). */
const sl_bindings *sl_builtins(void);

typedef int (*sl_builtin_fn)(const sl_tool_ctx *ctx, const sl_value *args,
                             sl_tool_result *res, sl_err *err);

typedef struct {
    const char *name;
    const char *description;
    const char *schema;   /* the inputSchema as JSON text */
    sl_builtin_fn call;
} sl_builtin_tool;

/* A toolset over tools[0..n) (static tables); kind "builtin". */
sl_toolset *sl_builtin_toolset(const char *where, const sl_builtin_tool *tools, size_t n);

/* The providers' tables. */
extern const sl_builtin_tool sl_builtin_time_tools[];
extern const size_t sl_builtin_time_n;
extern const sl_builtin_tool sl_builtin_json_tools[];
extern const size_t sl_builtin_json_n;
extern const sl_builtin_tool sl_builtin_web_tools[];
extern const size_t sl_builtin_web_n;

/* ---- arguments ---- */

/* The string argument `name` (a number or boolean as its text), or def
 * when absent or null.  Borrowed from args or def; *tmp holds a made
 * string (free it). */
const char *sl_builtin_arg_str(const sl_value *args, const char *name, const char *def,
                               char **tmp);
/* The boolean argument: true/false, 0/1, "true"/"false" (any case), else def. */
bool sl_builtin_arg_bool(const sl_value *args, const char *name, bool def);
/* The number argument (a number, or text that reads as one): 1 with *out,
 * 0 when absent or null, -1 when it is not a number. */
int sl_builtin_arg_num(const sl_value *args, const char *name, double *out);

/* Appends text to res, counted against the call's output cap. */
int sl_builtin_text(sl_tool_result *res, const sl_tool_ctx *ctx, const char *s, size_t n,
                    sl_err *err);

/* ---- time (builtin_time.c), exposed for tests ---- */

/* t (Unix seconds) in zone tz ("" = the host's /etc/localtime) formatted
 * with a strftime format as Python's datetime.strftime reads it (%Z the
 * zone's abbreviation, %z +HHMM, %:z +HH:MM, %f microseconds from usec). */
int sl_builtin_time_format(long long t, int usec, const char *tz, const char *fmt, sl_buf *out,
                           sl_err *err);
/* A wall-clock time "Y-m-d H:M:S" in zone tz to Unix seconds, as Dify's
 * localize_datetime: an ambiguous time is its later instant, a time in a
 * gap moves forward by the gap. */
int sl_builtin_time_local(const char *local, const char *tz, long long *t, sl_err *err);

/* ---- json_process (builtin_json.c), exposed for tests ---- */

/* v as Python's json.dumps writes it (", " and ": ", ensure_ascii). */
void sl_builtin_py_json(const sl_value *v, bool ensure_ascii, sl_buf *out);

/* ---- webscraper (builtin_web.c), exposed for tests ---- */

/* HTML as readable text: script, style and other invisible parts dropped,
 * entities decoded, whitespace collapsed, a line per block.  *title gets
 * the <title> text (new string) or NULL. */
void sl_builtin_html_text(const char *html, size_t n, sl_buf *out, char **title);

#endif
