/*
 * apps — apps as the store keeps them, for `sluice app …` and the admin
 * API alike: the DSL text in SQLite and, for apps with files (a .zip
 * bundle's skills, scripts, data), those files on disk under
 * DATA/apps/ID/files.  Import takes a DSL or a bundle, checks that it
 * loads, then records it; export gives back YAML, or a bundle when the app
 * has files or runs in the sandboxed runtime.  Errors: -1 and sl_err (the
 * load problems also in diag).
 */
#ifndef SL_SERVER_APPS_H
#define SL_SERVER_APPS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/err.h"
#include "engine/graph.h"
#include "store/store.h"

/* Imports a DSL file's bytes or a .zip bundle's (told apart by their first
 * bytes).  `origin` names it in messages; the app is checked against
 * config (borrowed; see sl_graph_load_text).  *id: the new app's id
 * (heap); *info (may be NULL): {id, name, mode, version, files} (new
 * reference). */
int sl_apps_import(sl_store *s, const void *data, size_t len, const char *origin,
                   const sl_config *config, char **id, sl_value **info, sl_diag *diag,
                   sl_err *err);
/* A new version of app `app_id` from a DSL or a bundle (a bundle's files
 * replace the app's; a DSL keeps them).  *info as for import. */
int sl_apps_update(sl_store *s, const char *app_id, const void *data, size_t len,
                   const char *origin, const sl_config *config, sl_value **info, sl_diag *diag,
                   sl_err *err);
/* The tool bindings app `id` runs with beside the settings' (found
 * first, later ones winning): its bundle's tools/bindings.yml in `files`
 * (may be NULL), the server's defaults from the store, the app's own from
 * the store.  *out NULL when there are none. */
struct sl_bindings;
int sl_apps_tools(sl_store *s, const char *id, const char *files, struct sl_bindings **out,
                  sl_err *err);
/* Loads app `id`'s current version into g (its files folder, when it has
 * one, as app_dir), checked against config and its tool bindings
 * (sl_apps_tools); *version (may be NULL) gets its number. */
int sl_apps_load(sl_store *s, const char *id, const sl_config *config, sl_graph *g, int *version,
                 sl_err *err);
/* Lets bindings `workflow: {app: ID}` run the apps of store s as tools
 * (nodes/wftool.h): each loads as sl_apps_load loads it.  Once per process,
 * before apps are loaded or imported. */
void sl_apps_serve_workflows(sl_store *s);
/* The app as YAML (*zip false) or as a bundle (*zip true), appended to
 * out; the app must load against config. */
int sl_apps_export(sl_store *s, const char *id, const sl_config *config, sl_buf *out, bool *zip,
                   sl_err *err);
/* The graph of a DSL text as the web console draws it: {name, mode,
 * nodes: [{id, type, title, x, y, width, height, parent_id}], edges:
 * [{id, source, target, source_handle}]}, positions as the DSL has them
 * (Dify's child positions are relative to their container).  Nothing is
 * checked beyond the shape: a node without a position is at 0,0.  NULL
 * and err when the text is not YAML with workflow.graph.nodes. */
sl_value *sl_apps_graph(const char *dsl, size_t len, sl_err *err);
/* Deletes the app and its files. */
int sl_apps_delete(sl_store *s, const char *id, sl_err *err);

#endif
