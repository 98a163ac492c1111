/*
 * binding — how a DSL's tool reference finds a real tool.
 *
 * Dify exports name a tool by provider_type (builtin, plugin, api,
 * workflow, mcp), provider_id ("time", "langgenius/jina/jina", a UUID, an
 * MCP server id), provider_name and tool_name, but carry neither the MCP
 * server's URL nor an OpenAPI document.  sluice binds each provider to a
 * toolset in its settings, never in the DSL (a file is data, not a
 * capability):
 *
 *   tools:                          # sluice.yml, or tools/bindings.yml in a bundle
 *                                   # (a bundle's are found first)
 *     time:                         # a provider_id (or provider_name) as the DSL names it
 *       mcp: http://127.0.0.1:8931/mcp
 *     langgenius/jina/jina:
 *       mcp:
 *         url: https://mcp.example.com/sse
 *         transport: sse            # auto (default: by the URL's end, as Dify), streamable, sse
 *         headers:
 *           Authorization: {env: JINA_AUTH}   # a value, or {env: NAME}
 *       names:                      # the DSL's tool_name -> the server's tool name
 *         jina_reader: read_url
 *       timeout: 30                 # seconds per call (tool_timeout_s caps it)
 *     files:
 *       mcp:
 *         command: [node, server.js]   # a stdio server: always run in a sandbox
 *         env: {LOG_LEVEL: warn}
 *     3f1c…:                        # a workflow tool's provider_id (a UUID)
 *       workflow: apps/summarize.yml   # an app run as a tool (nodes/wftool.h)
 *     weather:                      # an api (custom) tool: an OpenAPI document
 *       openapi:
 *         spec: specs/weather.yaml  # relative to this file's folder, or an http(s) URL
 *         server: https://api.example.com/v1   # optional override
 *         auth: {type: api_key, in: header, name: X-API-Key, value: {env: WEATHER_KEY}}
 *     tavily:                       # one of sluice's own providers (tools/builtin.h)
 *       builtin:                    # or builtin: NAME for a binding id that is not its name
 *         api_key: {env: TAVILY_API_KEY}   # left out: read from the environment per call
 *         base_url: https://api.tavily.com  # the vendor's API root
 *
 * A binding is found by provider_id, then provider_name, then the last
 * part of a plugin's provider_id ("langgenius/jina/jina" -> "jina").  Any
 * builtin or plugin tool may be bound to an MCP server this way.
 *
 * The set is read-only once loaded and shared by every run; each binding
 * makes its toolset on first use (and keeps it, with its connections) under
 * its own lock.  Header values are credentials: registered with
 * core/secret and never shown.
 */
#ifndef SL_TOOLS_BINDING_H
#define SL_TOOLS_BINDING_H

#include <stdbool.h>

#include "core/err.h"
#include "core/value.h"
#include "dsl/yaml.h"
#include "tools/tool.h"

typedef struct sl_bindings sl_bindings;
typedef struct sl_binding sl_binding;

sl_bindings *sl_bindings_new(void);
void sl_bindings_free(sl_bindings *b);

/* Adds the bindings of a `tools` mapping read from `path` (d gives the
 * marks for path:line:col in errors).  A later binding with the same id
 * replaces an earlier one.  `trusted`: the machine's own settings; a
 * bundle's are not, and may not read the environment ({env: NAME}), which
 * would hand this host's secrets to whatever server the bundle names. */
int sl_bindings_parse(sl_bindings *b, const sl_yaml_doc *d, const sl_value *section,
                      const char *path, bool trusted, sl_err *err);

/* Binds id to a toolset made in this process (tools sluice runs itself,
 * tests, benches); the binding owns ts, for both values of allow_private.
 * `where` says what it is (copied).  Replaces a binding with that id. */
void sl_bindings_add_toolset(sl_bindings *b, const char *id, sl_toolset *ts, const char *where);

/* The binding for a DSL tool reference (either name may be NULL), or NULL. */
const sl_binding *sl_bindings_find(const sl_bindings *b, const char *provider_id,
                                   const char *provider_name);
/* The binding named exactly id, or NULL. */
const sl_binding *sl_bindings_get(const sl_bindings *b, const char *id);
size_t sl_bindings_count(const sl_bindings *b);
const sl_binding *sl_bindings_at(const sl_bindings *b, size_t i);

const char *sl_binding_id(const sl_binding *t);
const char *sl_binding_kind(const sl_binding *t);   /* "mcp", "openapi", or the toolset's kind */
/* Where it points, without credentials: the URL or the command line. */
const char *sl_binding_where(const sl_binding *t);
/* The server's name for the DSL's tool name. */
const char *sl_binding_tool_name(const sl_binding *t, const char *dsl_name);
/* The DSL's name for the server's tool name (names read backwards). */
const char *sl_binding_dsl_name(const sl_binding *t, const char *server_name);
/* Its own per-call timeout (0: none set). */
double sl_binding_timeout(const sl_binding *t);

/* workflow: the app's DSL file or bundle (a path made absolute from the
 * bindings' folder), or NULL for other kinds.  The toolset that runs it
 * is made above the engine (nodes/wftool.h) and kept on the binding with
 * sl_binding_keep_toolset; until then sl_binding_toolset fails. */
const char *sl_binding_workflow_path(const sl_binding *t);
/* workflow: {app: ID}: the id of an app of `sluice serve`'s store, or
 * NULL (then sl_binding_workflow_path names a file). */
const char *sl_binding_workflow_app(const sl_binding *t);
/* Keeps ts as the binding's toolset (for both values of allow_private)
 * unless it has one already, in which case ts is freed; returns the kept
 * one (borrowed).  Thread-safe. */
sl_toolset *sl_binding_keep_toolset(const sl_binding *t, sl_toolset *ts);

/* The binding's toolset, made on first use and kept; thread-safe.
 * allow_private: whether its URL may reach this host's and private
 * addresses (the tool_allow_private limit).  Borrowed. */
sl_toolset *sl_binding_toolset(const sl_binding *t, bool allow_private, sl_err *err);

/* The tools the binding's server offers, [{name, description,
 * inputSchema, outputSchema?}] (new reference): listed on first use and
 * kept; `refresh` lists them again (a tool the list lacked). */
int sl_binding_list(const sl_binding *t, bool allow_private, const sl_tool_ctx *ctx,
                    bool refresh, sl_value **out, sl_err *err);
/* The entry of `list` named name, or NULL (borrowed). */
const sl_value *sl_binding_find_tool(const sl_value *list, const char *name);

/* Adds the bindings of a file holding a `tools` mapping (with or without
 * the `tools:` key), as a bundle's tools/bindings.yml; `where` names it in
 * errors.  1 when there is no such file (nothing added). */
int sl_bindings_load_file(sl_bindings *b, const char *file, const char *where, bool trusted,
                          sl_err *err);
/* The same for the file's text. */
int sl_bindings_parse_text(sl_bindings *b, const char *text, size_t len, const char *where,
                           bool trusted, sl_err *err);

/* ---- bindings kept as JSON text (the server's store) ---- */

/* Adds the bindings of spec, the JSON text of a `tools` mapping; `where`
 * names it in errors.  Trusted: an admin set it. */
int sl_bindings_parse_json(sl_bindings *b, const char *spec, const char *where, sl_err *err);
/* *spec (JSON text of a `tools` mapping, or NULL for none) with binding id
 * set to `binding` (a binding's mapping; NULL removes it), checked by
 * parsing the result.  The new text replaces *spec (NULL when empty). */
int sl_bindings_spec_set(char **spec, const char *id, const sl_value *binding, sl_err *err);
/* spec as a value to show: every header and env value masked (new). */
sl_value *sl_bindings_spec_show(const char *spec);

/* The `tools:` lines a user adds to bind a provider, for messages: an
 * OpenAPI document for an api tool, an app for a workflow tool, else an MCP
 * server (provider_type may be NULL).  New string. */
char *sl_bindings_hint(const char *provider_id, const char *provider_type);

#endif
