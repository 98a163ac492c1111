/*
 * wftool — an app run as a tool (Dify's "workflow" tool provider).
 *
 * A binding with `workflow: PATH` (tools/binding.h) names an app's DSL
 * file or bundle.  tools/ sits below the engine and cannot run it, so the
 * toolset is made here, on first use, and kept on the binding
 * (sl_binding_keep_toolset): the app's graph is loaded once and shared by
 * every run that calls it.
 *
 * The toolset has one tool: its input schema is the app's start
 * variables (text-input, paragraph and select are strings, number a
 * number, checkbox a boolean, json_object an object; file inputs are left
 * out); any name calls it, since the DSL's tool_name is the user's word.
 * A call runs the app as a nested run of the caller's (the sl_node_exec in
 * sl_tool_ctx.caller): its limits, settings and tape, the time the call
 * has left, its cancellation.  The result is Dify's: text the outputs as
 * JSON, json [outputs], the file values among the outputs as files.  The
 * nested run's node_started and node_finished go out as agent_log events
 * of the calling node.  Nested workflow tools stop at tool_workflow_depth
 * (SL_ELIMIT); an app that reaches itself through its workflow tools is
 * refused at load.
 */
#ifndef SL_NODES_WFTOOL_H
#define SL_NODES_WFTOOL_H

#include "engine/config.h"
#include "engine/node.h"
#include "tools/binding.h"

/* The toolset of workflow binding b, made (its app loaded against cfg)
 * and kept on b on first use; borrowed.  `from` is the file of the app
 * that names b (NULL: none known): loading an app that is already being
 * loaded on this thread, through workflow tools from `from`, is an error
 * naming the chain.  NULL with err when the app does not load. */
sl_toolset *sl_wftool_get(const sl_binding *b, const sl_config *cfg, const char *from,
                          sl_err *err);

/* Under `sluice serve`: the store's bindings (JSON texts of `tools`
 * mappings, the server's then the app's own; a NULL entry is none, at
 * most 4) that the apps named as workflow tools by the app being loaded on
 * this thread find after their bundle's own and before the settings', as
 * a top-level run of them finds them.  The texts must outlive the load;
 * n = 0 ends it.  Such an app bound in the settings (shared by every app)
 * is then kept with the loading app's own bindings, not on the binding. */
void sl_wftool_inherit(const char *const *specs, const char *const *wheres, size_t n);

/* Under `sluice serve`: how a binding `workflow: {app: ID}` finds its app.
 * fn loads app id of the store into g, with the bindings a top-level run
 * of it finds (its bundle's, the server's, its own); 0, or -1 and err.
 * Set once by the server (server/apps.c); without it such a binding fails
 * the load, saying it needs the server. */
typedef int (*sl_wftool_app_fn)(void *ud, const char *id, const sl_config *cfg, struct sl_graph *g,
                                sl_err *err);
void sl_wftool_set_app_loader(sl_wftool_app_fn fn, void *ud);

/* For a node's check(): reports an error on node n (at `key` of `at`,
 * named `field`) when workflow binding b's app does not load or closes a
 * cycle. */
int sl_wftool_check(sl_check *c, const struct sl_gnode *n, const sl_value *at, const char *key,
                    const char *field, const sl_binding *b);

#endif
