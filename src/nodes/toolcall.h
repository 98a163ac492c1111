/*
 * toolcall — a configured tool as nodes call it (the tool node, agents).
 *
 * Finds the binding a DSL's tool reference names (tools/binding.h), lists
 * the bound server's tools, and calls one, bounded by the run: the
 * tool_timeout_s limit (and the binding's own timeout, the smaller wins),
 * tool_max_output, the run's deadline and cancellation; tool_allow_private
 * says whether a bound URL may reach this host.  A stdio server runs in the
 * run's sandbox.  With --record/--replay the list and every call go on the
 * run's tape beside model calls, so an app with tools runs offline and
 * deterministically.
 */
#ifndef SL_NODES_TOOLCALL_H
#define SL_NODES_TOOLCALL_H

#include <stdbool.h>

#include "engine/node.h"
#include "tools/binding.h"
#include "tools/tool.h"

/* The binding for a DSL tool reference: the app bundle's own (g->tools),
 * else the settings', or NULL. */
const sl_binding *sl_toolcall_binding(const struct sl_graph *g, const struct sl_config *cfg,
                                      const char *provider_id, const char *provider_name);

/* The definition of the binding's tool `name` (the server's name):
 * {name, description, inputSchema, outputSchema?} (new reference), or
 * NULL with err (SL_ENOTFOUND naming the tools it has). */
sl_value *sl_toolcall_def(sl_node_exec *x, const sl_binding *b, const char *name, sl_err *err);

/* Arguments made to fit the tool's inputSchema as Dify converts a tool's
 * parameters: numbers and booleans given as text or 0/1 become what the
 * schema says, null entries are dropped.  Changes args in place. */
void sl_toolcall_coerce(const sl_value *def, sl_value *args);

/* Calls tool `name` of binding b with args. */
int sl_toolcall(sl_node_exec *x, const sl_binding *b, const char *name, const sl_value *args,
                sl_tool_result *res, sl_err *err);

/* The same for a toolset the node made itself (an mcp_agent node's
 * servers): `id` names it on the tape; ts may be NULL while a tape is
 * replayed (nothing is contacted then). */
int sl_toolcall_list_set(sl_node_exec *x, const char *id, sl_toolset *ts, sl_value **out,
                         sl_err *err);
int sl_toolcall_set(sl_node_exec *x, const char *id, sl_toolset *ts, const char *name,
                    const sl_value *args, sl_tool_result *res, sl_err *err);
/* Whether the run replays a tape (no tool server is contacted). */
bool sl_toolcall_replaying(sl_node_exec *x);

/* The result as text for a model: its text, each json value as
 * "tool response: …", each file as "file: NAME (TYPE, N bytes)". */
void sl_toolcall_text(const sl_tool_result *res, sl_buf *out);

/* The result's files stored as files of the run (Dify file values, new
 * array), or NULL with err. */
sl_value *sl_toolcall_files(sl_node_exec *x, const sl_tool_result *res, sl_err *err);

#endif
