/*
 * graph — a loaded, validated workflow: nodes, edges, containers.
 *
 * sl_graph_load() reads a Dify DSL file (YAML), checks the version and mode,
 * builds the node and edge tables and validates everything it can before a
 * run: unknown or unsupported node types, duplicate ids, dangling edges, a
 * missing start node, cycles, bad selectors and field types.  Every problem
 * goes into the caller's sl_diag (all of them, not just the first).
 *
 * The graph owns the parsed document; node and edge strings point into it.
 * A graph is immutable after loading and may be shared by concurrent runs.
 */
#ifndef SL_GRAPH_H
#define SL_GRAPH_H

#include "core/diag.h"
#include "core/err.h"
#include "core/map.h"
#include "dsl/dsl.h"
#include "dsl/yaml.h"
#include "engine/config.h"
#include "engine/node.h"

typedef struct sl_gnode {
    int idx;
    const char *id;
    const char *type;     /* data.type */
    const char *title;    /* data.title or the id */
    const sl_value *data; /* borrowed from the document */
    const sl_node_kind *kind;
    int parent;           /* index of the enclosing iteration/loop, or -1 */
    int inner_start;      /* for containers: index of the child start node */
    int *in, nin;         /* incoming edge indices */
    int *out, nout;       /* outgoing edge indices */
    sl_mark mark;
    /* From error_strategy and retry_config, read once at load. */
    enum { SL_ON_ERROR_FAIL, SL_ON_ERROR_BRANCH, SL_ON_ERROR_DEFAULT } on_error;
    int max_retries;
    int retry_interval_ms;
    void *state;          /* kind->prepare()'s result, freed by kind->release() */
} sl_gnode;

typedef struct {
    int src, dst;
    const char *handle;   /* sourceHandle, "source" when absent */
    const char *id;
} sl_gedge;

typedef struct sl_graph {
    sl_yaml_doc doc;
    const char *version;  /* "0.1.0" when the file has none */
    const char *mode;     /* "workflow" or "advanced-chat" */
    const char *name;
    sl_gnode *nodes;
    int nnodes;
    sl_gedge *edges;
    int nedges;
    sl_map index;         /* node id -> (idx + 1) */
    int start;            /* index of the root start node */
    const sl_value *env_vars;   /* workflow.environment_variables (array) */
    const sl_value *conv_vars;  /* workflow.conversation_variables (array) */
    const sl_value *inputs;     /* start node's data.variables (array) */
    /* sluice's own settings, under the top-level key `sluice` that Dify
     * ignores:
     *   sluice:
     *     runtime: sandboxed          # or classic (the default)
     *     sandbox:                    # the app's sandbox policy; unset
     *       provider: local           #   fields come from sluice.yml
     *       network: none | open | {allow: [pypi.org, "*.example.org"]}
     *       memory: 1G   disk: 1G   cpu_cores: 1.5   max_procs: 512
     *       command_timeout: 60      # seconds, per agent/command call
     *       packages: {pip: [requests], npm: [lodash]}
     *       template: base           # e2b template (image)
     */
    bool sandboxed;
    const sl_value *sandbox;    /* sluice.sandbox (borrowed) or NULL */
    /* Host folder holding the app's files (skills/ …): set by whoever
     * loaded the app (a bundle's extracted folder, --app-dir); NULL when
     * the app has none.  Owned by the graph (freed by release). */
    char *app_dir;
    char *app_tmp;              /* a private folder holding app_dir, removed by release */
    sl_value *manifest;         /* the bundle's manifest.json (loaded from a .zip) or NULL */
    /* The bundle's own tool bindings (tools/bindings.yml), found before the
     * settings' (tools/binding.h); NULL when it has none.  Owned. */
    struct sl_bindings *tools;
    /* What answer and end nodes show and when (engine/stream.h), made once
     * at load for every run; NULL when the graph has neither. */
    struct sl_stream_plan *stream_plan;
} sl_graph;

/* Loads and validates.  Each node's data.type is looked up in `kinds`
 * (borrowed; it must outlive the graph), e.g. &sl_nodes (nodes/registry.h).
 * config (borrowed for the load; NULL: nothing configured) holds the
 * settings nodes check this machine against, e.g. that a model's provider
 * is configured.  A file that is a .zip bundle (by its first bytes) is read
 * whole, its app files extracted to a private folder (app_dir).  Returns 0
 * when the graph can run; -1 when not, with every reason in diag (and a
 * summary in err).  Warnings (older minor versions, ignored keys) go to
 * diag too. */
int sl_graph_load_file(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                       const char *path, sl_diag *diag, sl_err *err);
/* sl_graph_load_file with more tool bindings, found after the bundle's
 * own (tools/bindings.yml) and before the settings': specs are JSON texts
 * of `tools` mappings as the server's store keeps them (a NULL entry is
 * none), later ones winning; wheres[i] names specs[i] in errors. */
int sl_graph_load_file_specs(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                             const char *const *specs, const char *const *wheres, size_t nspecs,
                             const char *path, sl_diag *diag, sl_err *err);
/* sl_graph_load_text with tool bindings of the app's own (the server's
 * store), found before the settings'; the graph takes tools (NULL: none). */
int sl_graph_load_text_tools(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                             struct sl_bindings *tools, const char *text, size_t len,
                             const char *path, sl_diag *diag, sl_err *err);
int sl_graph_load_text(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                       const char *text, size_t len, const char *path, sl_diag *diag,
                       sl_err *err);
void sl_graph_release(sl_graph *g);

int sl_graph_find(const sl_graph *g, const char *id); /* -1 when absent */

/* Export back to YAML: the document as loaded, as sl_dsl_export (dsl/dsl.h)
 * gives it. */
int sl_graph_export(const sl_graph *g, bool include_secrets, sl_buf *out, sl_err *err);

/* "file:line:col" for a mark, into out (64+ bytes). */
void sl_graph_where(const sl_graph *g, sl_mark m, char *out, size_t n);

#endif
