/*
 * toolcall — a configured tool as nodes call it (the tool node, agents).
 *
 * Finds the binding a DSL's tool reference names (tools/binding.h), lists
 * the bound server's tools, and calls one, bounded by the run: the
 * tool_timeout_s limit (and the binding's own timeout, the smaller wins),
 * tool_max_output, the run's deadline and cancellation; tool_allow_private
 * says whether a bound URL may reach this host.  A stdio server runs in the
 * run's sandbox.
 *
 * With --record / --replay the lists and every call go on the run's tape
 * beside model calls, keyed by the names the DSL uses (its provider and
 * tool name, never a binding's or a server's), so a tape replays on a
 * machine with other bindings or none: while a tape is replayed an unbound
 * tool is no error and nothing is contacted.
 */
#ifndef SL_NODES_TOOLCALL_H
#define SL_NODES_TOOLCALL_H

#include <stdbool.h>

#include "engine/node.h"
#include "tools/binding.h"
#include "tools/tool.h"

/* Where a node's tool comes from. */
typedef struct {
    const sl_binding *binding;  /* bound in the settings or the bundle, or */
    sl_toolset *ts;             /* a toolset the node made (an mcp_agent's server); */
                                /* both NULL: replayed from the tape only */
    const char *provider;       /* as the DSL names it: the tape's key */
} sl_tool_src;

/* The binding for a DSL tool reference: the app bundle's own (g->tools),
 * else the settings', else a built-in (tools/builtin.h), or NULL. */
const sl_binding *sl_toolcall_binding(const struct sl_graph *g, const struct sl_config *cfg,
                                      const char *provider_id, const char *provider_name);

/* Whether an unbound tool may load: the settings are for replaying a tape. */
bool sl_toolcall_unbound_ok(const struct sl_config *cfg);

/* The tools of src, [{name, description, inputSchema, outputSchema?}]
 * (new reference; names as the DSL calls them: a binding's `names` map
 * the server's back). */
int sl_toolcall_list(sl_node_exec *x, const sl_tool_src *src, sl_value **out, sl_err *err);

/* The definition of tool `name` (the DSL's name) of src (new reference),
 * or NULL with err (SL_ENOTFOUND naming the tools it has). */
sl_value *sl_toolcall_def(sl_node_exec *x, const sl_tool_src *src, const char *name,
                          sl_err *err);

/* A {type, value} input as Dify resolves one: variable, the value at the
 * selector (its type kept); mixed or constant text, rendered ({{#…#}}); any
 * other constant, itself; NULL for a null value.  Anything that is not
 * {type, value} is a plain value (old exports).  New reference or NULL. */
sl_value *sl_toolcall_input(sl_node_exec *x, const sl_value *in);

/* Arguments made to fit the tool's inputSchema as Dify converts a tool's
 * parameters: numbers and booleans given as text or 0/1 become what the
 * schema says, null entries are dropped.  Changes args in place. */
void sl_toolcall_coerce(const sl_value *def, sl_value *args);

/* Calls tool `name` (the DSL's name) of src with args. */
int sl_toolcall(sl_node_exec *x, const sl_tool_src *src, const char *name, const sl_value *args,
                sl_tool_result *res, sl_err *err);

/* Whether the run replays a tape (no tool server is contacted). */
bool sl_toolcall_replaying(sl_node_exec *x);

/* The result as text for a model: its text, each json value as
 * "tool response: …", variables, each file as "file: NAME (TYPE, N bytes)". */
void sl_toolcall_text(const sl_tool_result *res, sl_buf *out);

/* The result's files stored as files of the run (Dify file values, new
 * array), or NULL with err. */
sl_value *sl_toolcall_files(sl_node_exec *x, const sl_tool_result *res, sl_err *err);

#endif
