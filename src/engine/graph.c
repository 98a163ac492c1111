#include "engine/graph.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/size.h"
#include "dsl/bundle.h"
#include "engine/stream.h"
#include "sandbox/sandbox.h"
#include "tmpl/ref.h"
#include "tools/binding.h"

/* The DSL version sluice writes and the newest it reads. */
#define DSL_CURRENT_MAJOR 0
#define DSL_CURRENT_MINOR 6

struct sl_check {
    const sl_graph *g;
    sl_diag *diag;
    const sl_node_kinds *kinds;
    const sl_config *config;  /* borrowed for the load; may be NULL */
};

void sl_graph_where(const sl_graph *g, sl_mark m, char *out, size_t n)
{
    if (m.line)
        snprintf(out, n, "%s:%d:%d", g->doc.path, m.line, m.col);
    else
        snprintf(out, n, "%s", g->doc.path);
}

static void vreport(sl_check *c, bool warn, const sl_gnode *n, const sl_value *at, const char *key,
                    const char *field, const char *fmt, va_list ap)
{
    char msg[1024], where[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    sl_mark m = {0, 0};
    if (at && key)
        m = sl_yaml_key_mark(&c->g->doc, at, key);
    else if (at)
        m = sl_yaml_mark(&c->g->doc, at);
    if (!m.line && n)
        m = n->mark;
    sl_graph_where(c->g, m, where, sizeof where);
    if (n)
        sl_diag_add(c->diag, warn, "%s: node '%s' (%s)%s%s: %s", where, n->id, n->title,
                    field ? ": field " : "", field ? field : "", msg);
    else
        sl_diag_add(c->diag, warn, "%s: %s%s%s", where, field ? field : "", field ? ": " : "", msg);
}

void sl_check_error(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                    const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, false, n, at, key, field, fmt, ap);
    va_end(ap);
}

void sl_check_warn(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                   const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, true, n, at, key, field, fmt, ap);
    va_end(ap);
}

void sl_check_config(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                     const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, sl_config_lenient(c->config), n, at, key, field, fmt, ap);
    va_end(ap);
}

const sl_graph *sl_check_graph(sl_check *c)
{
    return c->g;
}

const sl_config *sl_check_config_get(sl_check *c)
{
    return c->config;
}

int sl_graph_find(const sl_graph *g, const char *id)
{
    void *p = sl_map_get(&g->index, id);
    return p ? (int)((intptr_t)p - 1) : -1;
}

static bool named_in(const sl_value *arr, const char *name)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *nm = json_string_value(json_object_get(json_array_get(arr, i), "name"));
        if (nm && strcmp(nm, name) == 0)
            return true;
    }
    return false;
}

static const char *const sys_vars[] = {
    "query", "files", "conversation_id", "user_id", "dialogue_count", "app_id",
    "workflow_id", "workflow_run_id", "timestamp", "document_id", "batch", "dataset_id",
    "datasource_type", "datasource_info", "invoke_from", NULL};

/* Checks parts [first, second, ...] of a selector or reference; returns a
 * static message describing the problem or NULL. */
static const char *check_parts(const sl_graph *g, const sl_gnode *n, const char *const *parts,
                               int np, char *buf, size_t bufn)
{
    if (np < 2)
        return "a selector needs at least [node_id, variable]";
    const char *first = parts[0];
    if (strcmp(first, "sys") == 0) {
        for (const char *const *s = sys_vars; *s; s++)
            if (strcmp(*s, parts[1]) == 0)
                return NULL;
        snprintf(buf, bufn, "'sys.%s' is not a system variable (known: sys.query, sys.files, "
                 "sys.user_id, sys.conversation_id, sys.dialogue_count, sys.app_id, "
                 "sys.workflow_id, sys.workflow_run_id, sys.timestamp)", parts[1]);
        return buf;
    }
    if (strcmp(first, "env") == 0) {
        if (named_in(g->env_vars, parts[1]))
            return NULL;
        snprintf(buf, bufn, "'env.%s' is not declared in workflow.environment_variables; "
                 "declare it or fix the name", parts[1]);
        return buf;
    }
    if (strcmp(first, "conversation") == 0) {
        if (named_in(g->conv_vars, parts[1]))
            return NULL;
        snprintf(buf, bufn, "'conversation.%s' is not declared in "
                 "workflow.conversation_variables; declare it or fix the name", parts[1]);
        return buf;
    }
    int t = sl_graph_find(g, first);
    if (t < 0) {
        snprintf(buf, bufn, "refers to node '%s', which is not in the graph; pick an existing "
                 "node's variable", first);
        return buf;
    }
    /* A node inside a container may read the container's own item/index or
     * loop variables and its siblings; a node outside may not read inside. */
    const sl_gnode *tn = &g->nodes[t];
    if (tn->parent >= 0 && n) {
        int p = n->idx;
        while (p >= 0 && p != tn->parent)
            p = g->nodes[p].parent;
        if (p != tn->parent) {
            snprintf(buf, bufn, "refers to '%s', a node inside %s '%s'; outside the container, "
                     "use the container's output instead", first, g->nodes[tn->parent].type,
                     g->nodes[tn->parent].id);
            return buf;
        }
    }
    (void)n;
    return NULL;
}

int sl_check_selector(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                      const char *field, bool required)
{
    const sl_value *sel = key ? json_object_get(at, key) : at;
    if (!sel || json_is_null(sel) || (json_is_array(sel) && json_array_size(sel) == 0)) {
        if (!required)
            return 0;
        sl_check_error(c, n, at, key, field, "a variable selector is required; pick a variable");
        return -1;
    }
    if (!json_is_array(sel)) {
        sl_check_error(c, n, at, key, field, "a variable selector must be a list like "
                       "[node_id, variable], not %s", sl_value_type_name(sel));
        return -1;
    }
    const char *parts[16];
    size_t np = json_array_size(sel);
    if (np > 16) {
        sl_check_error(c, n, at, key, field, "a selector has at most 16 parts");
        return -1;
    }
    for (size_t i = 0; i < np; i++) {
        parts[i] = json_string_value(json_array_get(sel, i));
        if (!parts[i]) {
            sl_check_error(c, n, at, key, field, "selector part %zu must be text", i + 1);
            return -1;
        }
    }
    char buf[512];
    const char *problem = check_parts(c->g, n, parts, (int)np, buf, sizeof buf);
    if (problem) {
        sl_check_error(c, n, at, key, field, "%s", problem);
        return -1;
    }
    return 0;
}

int sl_check_selector_or_skip(sl_check *c, const sl_gnode *n, const sl_value *at,
                              const char *key, const char *field)
{
    const sl_value *sel = key ? json_object_get(at, key) : at;
    const char *first = json_string_value(json_array_get(sel, 0));
    if (json_is_array(sel) && json_array_size(sel) >= 2 && first && strcmp(first, "sys") &&
        strcmp(first, "env") && strcmp(first, "conversation") && sl_graph_find(c->g, first) < 0) {
        sl_check_warn(c, n, at, key, field, "refers to node '%s', which is not in the graph; "
                      "it is skipped (reads as empty), as Dify does", first);
        return 0;
    }
    return sl_check_selector(c, n, at, key, field, true);
}

typedef struct {
    sl_check *c;
    const sl_gnode *n;
    const sl_value *at;
    const char *key, *field;
    int bad;
} refcheck;

static int visit_ref(void *ud, const char *const *parts, int np)
{
    refcheck *rc = ud;
    char buf[512];
    const char *problem = check_parts(rc->c->g, rc->n, parts, np, buf, sizeof buf);
    if (problem) {
        sl_check_error(rc->c, rc->n, rc->at, rc->key, rc->field, "reference {{#%s.%s%s#}}: %s",
                       parts[0], parts[1], np > 2 ? ".…" : "", problem);
        rc->bad = 1;
    }
    return 0;
}

int sl_check_text_refs(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                       const char *field)
{
    const sl_value *v = key ? json_object_get(at, key) : at;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        sl_check_error(c, n, at, key, field, "must be text, not %s", sl_value_type_name(v));
        return -1;
    }
    refcheck rc = {c, n, at, key, field, 0};
    sl_ref_scan(json_string_value(v), visit_ref, &rc);
    return rc.bad ? -1 : 0;
}

/* ---- loading ---- */

/* A .zip bundle: the DSL inside it, the app's files extracted to a private
 * folder that the graph owns. */
static int load_text(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                     struct sl_bindings *tools, const char *text, size_t len, const char *path,
                     sl_diag *diag, sl_err *err);

/* A bundle's tools/bindings.yml: its bindings, read as untrusted data
 * (no environment variables).  *out stays NULL when there is none. */
static int bundle_tools(const char *files, const char *path, sl_bindings **out, sl_err *err)
{
    char *f = sl_xasprintf("%s/tools/bindings.yml", files);
    char *where = sl_xasprintf("%s:tools/bindings.yml", path);
    sl_bindings *b = sl_bindings_new();
    int rc = sl_bindings_load_file(b, f, where, false, err);
    free(f);
    free(where);
    if (rc) {
        sl_bindings_free(b);
        return rc < 0 ? -1 : 0;
    }
    *out = b;
    return 0;
}

/* Adds the bindings of specs (JSON texts of `tools` mappings, as the
 * server's store keeps them; wheres[i] names specs[i] in errors) after
 * those in *tools, which is made when NULL and left NULL when nothing is
 * bound. */
static int add_specs(sl_bindings **tools, const char *const *specs, const char *const *wheres,
                     size_t n, sl_err *err)
{
    if (!n)
        return 0;
    sl_bindings *b = *tools ? *tools : sl_bindings_new();
    for (size_t i = 0; i < n; i++)
        if (specs[i] && sl_bindings_parse_json(b, specs[i], wheres[i], err)) {
            if (b != *tools)
                sl_bindings_free(b);
            return -1;
        }
    if (b != *tools && sl_bindings_count(b))
        *tools = b;
    else if (b != *tools)
        sl_bindings_free(b);
    return 0;
}

static int load_bundle(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                       const char *const *specs, const char *const *wheres, size_t nspecs,
                       const char *path, sl_diag *diag, sl_err *err)
{
    sl_bundle bd;
    char *dir, *files;
    if (sl_bundle_read_file(path, &bd, err))
        return -1;
    if (sl_bundle_extract_tmp(&bd, path, &dir, &files, err)) {
        sl_bundle_release(&bd);
        return -1;
    }
    char *where = sl_xasprintf("%s:%s", path, bd.dsl_name);
    sl_bindings *tools = NULL;
    if (bundle_tools(files, path, &tools, err) || add_specs(&tools, specs, wheres, nspecs, err)) {
        sl_bindings_free(tools);
        free(where);
        sl_bundle_remove_dir(dir);
        free(dir);
        free(files);
        sl_bundle_release(&bd);
        return -1;
    }
    int rc = load_text(g, kinds, config, tools, bd.dsl, strlen(bd.dsl), where, diag, err);
    free(where);
    g->app_dir = files;
    g->app_tmp = dir;
    g->manifest = json_incref(bd.manifest);
    sl_bundle_release(&bd);
    return rc;
}

int sl_graph_load_file_specs(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                             const char *const *specs, const char *const *wheres, size_t nspecs,
                             const char *path, sl_diag *diag, sl_err *err)
{
    char *text;
    size_t len;
    memset(g, 0, sizeof *g);
    if (strcmp(path, "-") && sl_bundle_path_is_zip(path))
        return load_bundle(g, kinds, config, specs, wheres, nspecs, path, diag, err);
    sl_bindings *tools = NULL;
    if (add_specs(&tools, specs, wheres, nspecs, err))
        return -1;
    if (sl_dsl_read_file(path, &text, &len, err) < 0) {
        sl_bindings_free(tools);
        return -1;
    }
    int rc = load_text(g, kinds, config, tools, text, len,
                       strcmp(path, "-") == 0 ? "<stdin>" : path, diag, err);
    free(text);
    return rc;
}

int sl_graph_load_file(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                       const char *path, sl_diag *diag, sl_err *err)
{
    return sl_graph_load_file_specs(g, kinds, config, NULL, NULL, 0, path, diag, err);
}

/* "file:line:col" of item i of a list, for messages. */
static const char *item_where(const sl_graph *g, const sl_value *arr, size_t i, char *buf,
                              size_t n)
{
    sl_graph_where(g, sl_yaml_index_mark(&g->doc, arr, i), buf, n);
    return buf;
}

static int parse_version(const char *v, int *maj, int *min, int *patch)
{
    *maj = *min = *patch = 0;
    return sscanf(v, "%d.%d.%d", maj, min, patch) >= 2 ? 0 : -1;
}

static void add_edge_ref(int **arr, int *n, int e)
{
    *arr = sl_xrealloc(*arr, (size_t)(*n + 1) * sizeof **arr);
    (*arr)[(*n)++] = e;
}

/* Kahn's algorithm over one scope: nodes left with incoming edges after
 * peeling are on a cycle.  Loops repeat by running their child graph again,
 * never through back edges, so any cycle is an error. */
static void check_cycles(sl_graph *g, sl_check *c)
{
    int *indeg = sl_xcalloc((size_t)g->nnodes, sizeof *indeg);
    int *queue = sl_xmalloc((size_t)g->nnodes * sizeof *queue);
    int qh = 0, qt = 0;
    for (int e = 0; e < g->nedges; e++)
        indeg[g->edges[e].dst]++;
    for (int i = 0; i < g->nnodes; i++)
        if (indeg[i] == 0)
            queue[qt++] = i;
    while (qh < qt) {
        const sl_gnode *n = &g->nodes[queue[qh++]];
        for (int k = 0; k < n->nout; k++) {
            int d = g->edges[n->out[k]].dst;
            if (--indeg[d] == 0)
                queue[qt++] = d;
        }
    }
    int reported = 0;
    for (int i = 0; i < g->nnodes && reported < 5; i++) {
        if (indeg[i] > 0) {
            sl_check_error(c, &g->nodes[i], NULL, NULL, NULL,
                           "is on a cycle of edges; workflows must be acyclic (use a loop node "
                           "to repeat steps)");
            reported++;
        }
    }
    free(indeg);
    free(queue);
}

static void check_reachable(sl_graph *g, sl_check *c)
{
    char *seen = sl_xcalloc((size_t)g->nnodes, 1);
    int *stack = sl_xmalloc((size_t)g->nnodes * sizeof *stack);
    int sp = 0;
    stack[sp++] = g->start;
    seen[g->start] = 1;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind && (g->nodes[i].kind->flags & SL_KIND_INNER_START)) {
            stack[sp++] = i;
            seen[i] = 1;
        }
    while (sp) {
        const sl_gnode *n = &g->nodes[stack[--sp]];
        for (int k = 0; k < n->nout; k++) {
            int d = g->edges[n->out[k]].dst;
            if (!seen[d]) {
                seen[d] = 1;
                stack[sp++] = d;
            }
        }
        if (n->inner_start >= 0 && !seen[n->inner_start]) {
            seen[n->inner_start] = 1;
            stack[sp++] = n->inner_start;
        }
    }
    for (int i = 0; i < g->nnodes; i++)
        if (!seen[i])
            sl_check_warn(c, &g->nodes[i], NULL, NULL, NULL,
                          "cannot be reached from the start node and will never run");
    free(seen);
    free(stack);
}

/* The top-level `sluice` mapping (graph.h): checked here so a typo in a
 * policy is a load error with its line, not a surprise at run time. */
static void check_sluice(sl_check *c, const sl_value *sl)
{
    sl_graph *g = (sl_graph *)c->g;
    if (!sl || json_is_null(sl))
        return;
    const sl_value *root = g->doc.root;
    if (!json_is_object(sl)) {
        sl_check_error(c, NULL, root, "sluice", "sluice",
                       "must be a mapping {runtime, sandbox}");
        return;
    }
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)sl, k, v) {
        if (strcmp(k, "runtime") && strcmp(k, "sandbox"))
            sl_check_error(c, NULL, sl, k, "sluice", "unknown key '%s'; the keys are runtime "
                           "and sandbox", k);
    }
    v = json_object_get(sl, "runtime");
    const char *rt = json_string_value(v);
    if (v && (!rt || (strcmp(rt, "classic") && strcmp(rt, "sandboxed"))))
        sl_check_error(c, NULL, sl, "runtime", "sluice.runtime",
                       "must be classic or sandboxed");
    g->sandboxed = rt && !strcmp(rt, "sandboxed");
    const sl_value *sb = json_object_get(sl, "sandbox");
    if (!sb || json_is_null(sb))
        return;
    if (!json_is_object(sb)) {
        sl_check_error(c, NULL, sl, "sandbox", "sluice.sandbox", "must be a mapping");
        return;
    }
    g->sandbox = sb;
    static const char *const keys[] = {"provider", "network", "memory", "disk", "cpu_cores",
                                        "max_procs", "command_timeout", "packages",
                                        "template", NULL};
    json_object_foreach((sl_value *)sb, k, v) {
        bool known = false;
        for (const char *const *p = keys; *p && !known; p++)
            known = !strcmp(*p, k);
        if (!known)
            sl_check_error(c, NULL, sb, k, "sluice.sandbox",
                           "unknown key '%s'; the keys are provider, network, memory, disk, "
                           "cpu_cores, max_procs, command_timeout, packages and template", k);
    }
    const char *prov = json_string_value(v = json_object_get(sb, "provider"));
    if (v && (!prov || (strcmp(prov, "local") && strcmp(prov, "ssh") && strcmp(prov, "e2b"))))
        sl_check_error(c, NULL, sb, "provider", "sluice.sandbox.provider",
                       "must be local, ssh or e2b");
    v = json_object_get(sb, "network");
    if (v) {
        const char *net = json_string_value(v);
        const sl_value *allow = json_is_object(v) ? json_object_get(v, "allow") : NULL;
        bool ok = net ? !strcmp(net, "none") || !strcmp(net, "open")
                      : json_is_array(allow) && json_array_size(allow) > 0 &&
                            json_object_size(v) == 1;
        for (size_t i = 0; ok && allow && i < json_array_size(allow); i++) {
            const char *h = json_string_value(json_array_get(allow, i));
            ok = h && *h && !strpbrk(h, ", \t/");
        }
        if (!ok)
            sl_check_error(c, NULL, sb, "network", "sluice.sandbox.network",
                           "must be none, open, or {allow: [host, *.domain, IP, …]} with at "
                           "least one host (no commas, spaces or slashes)");
    }
    const char *sizes[] = {"memory", "disk"};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(sb, sizes[i]);
        uint64_t n;
        if (v && !(json_is_integer(v) && json_integer_value(v) > 0) &&
            !(json_is_string(v) && !sl_size_parse(json_string_value(v), &n) && n > 0))
            sl_check_error(c, NULL, sb, sizes[i], "sluice.sandbox",
                           "%s must be a size such as 512M or 2G", sizes[i]);
    }
    if ((v = json_object_get(sb, "cpu_cores")) && !(sl_value_is_number(v) && sl_value_number(v) > 0))
        sl_check_error(c, NULL, sb, "cpu_cores", "sluice.sandbox.cpu_cores",
                       "must be a positive number (1.5 = one and a half cores)");
    if ((v = json_object_get(sb, "max_procs")) &&
        !(json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 1000000))
        sl_check_error(c, NULL, sb, "max_procs", "sluice.sandbox.max_procs",
                       "must be a positive whole number");
    if ((v = json_object_get(sb, "command_timeout")) &&
        !(sl_value_is_number(v) && sl_value_number(v) > 0))
        sl_check_error(c, NULL, sb, "command_timeout", "sluice.sandbox.command_timeout",
                       "must be a positive number of seconds");
    if ((v = json_object_get(sb, "template")) && !json_is_string(v))
        sl_check_error(c, NULL, sb, "template", "sluice.sandbox.template", "must be text");
    const sl_value *pk = json_object_get(sb, "packages");
    if (pk) {
        bool ok = json_is_object(pk);
        json_object_foreach((sl_value *)(ok ? pk : NULL), k, v) {
            if (strcmp(k, "pip") && strcmp(k, "npm")) {
                ok = false;
                break;
            }
            for (size_t i = 0; ok && i < json_array_size(v); i++) {
                const char *p = json_string_value(json_array_get(v, i));
                /* one requirement each; shell metacharacters have no place */
                ok = p && *p && p[0] != '-' && !strpbrk(p, " \t\n;&|`$<>\\'\"(){}");
            }
            ok = ok && json_is_array(v);
        }
        if (!ok)
            sl_check_error(c, NULL, sb, "packages", "sluice.sandbox.packages",
                           "must be {pip: [name, …], npm: [name, …]} with one requirement "
                           "per entry (like numpy or pandas==2.2.2)");
    }
}

static int load(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                struct sl_bindings *tools, const char *text, size_t len, const char *path,
                bool marks, sl_diag *diag, sl_err *err)
{
    memset(g, 0, sizeof *g);
    g->tools = tools;
    sl_map_init(&g->index);
    g->start = -1;
    if (len > SL_DSL_MAX_BYTES)
        return sl_err_set(err, SL_ELIMIT, "%s: larger than 10 MB; Dify refuses such DSL files "
                          "too", path);
    if (sl_yaml_parse_ex(text, len, path, &g->doc, marks, err) < 0)
        return -1;
    sl_check chk = {g, diag, kinds, config};
    sl_check *c = &chk;
    size_t errors0 = diag->errors;
    const sl_value *root = g->doc.root;
    if (!json_is_object(root)) {
        sl_check_error(c, NULL, NULL, NULL, NULL,
                       "not a Dify DSL file: the top level must be a mapping with app, kind, "
                       "version and workflow");
        goto done;
    }
    const sl_value *ver = json_object_get(root, "version");
    g->version = json_is_string(ver) ? json_string_value(ver) : "0.1.0";
    int maj, min, pat;
    if (ver && !json_is_string(ver)) {
        sl_check_error(c, NULL, root, "version", "version",
                       "must be text such as '0.6.0' (quote it)");
    } else if (parse_version(g->version, &maj, &min, &pat) < 0) {
        sl_check_error(c, NULL, root, "version", "version",
                       "'%s' is not a DSL version like 0.6.0", g->version);
    } else if (maj != DSL_CURRENT_MAJOR || min > DSL_CURRENT_MINOR) {
        sl_check_error(c, NULL, root, "version", "version",
                       "DSL version %s is not supported: sluice reads 0.1.0 to %d.%d.x; "
                       "export the app again from a matching Dify version",
                       g->version, DSL_CURRENT_MAJOR, DSL_CURRENT_MINOR);
    }
    const sl_value *kind = json_object_get(root, "kind");
    if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "app") != 0))
        sl_check_error(c, NULL, root, "kind", "kind",
                       "must be 'app'; this is not a Dify app export");
    const sl_value *app = json_object_get(root, "app");
    if (!json_is_object(app)) {
        sl_check_error(c, NULL, root, app ? "app" : NULL, "app",
                       "missing or not a mapping; a Dify export has app: {name, mode, ...}");
        goto done;
    }
    g->name = json_string_value(json_object_get(app, "name"));
    if (!g->name)
        g->name = "";
    g->mode = json_string_value(json_object_get(app, "mode"));
    if (!g->mode) {
        sl_check_error(c, NULL, app, "mode", "app.mode", "missing; expected workflow or "
                       "advanced-chat");
        goto done;
    }
    if (strcmp(g->mode, "workflow") != 0 && strcmp(g->mode, "advanced-chat") != 0) {
        sl_check_error(c, NULL, app, "mode", "app.mode",
                       "'%s' apps have no workflow graph; sluice runs 'workflow' and "
                       "'advanced-chat' apps", g->mode);
        goto done;
    }
    const sl_value *wf = json_object_get(root, "workflow");
    const sl_value *graph = json_object_get(wf, "graph");
    const sl_value *nodes = json_object_get(graph, "nodes");
    const sl_value *edges = json_object_get(graph, "edges");
    if (!json_is_object(wf) || !json_is_object(graph) || !json_is_array(nodes)) {
        sl_check_error(c, NULL, json_is_object(graph) ? graph : json_is_object(wf) ? wf : root,
                       NULL, "workflow.graph.nodes",
                       "missing or not a list; the file has no workflow graph");
        goto done;
    }
    if (edges && !json_is_array(edges) && !json_is_null(edges)) {
        sl_check_error(c, NULL, graph, "edges", "workflow.graph.edges", "must be a list");
        goto done;
    }
    g->env_vars = json_object_get(wf, "environment_variables");
    g->conv_vars = json_object_get(wf, "conversation_variables");
    if (g->env_vars && !json_is_array(g->env_vars)) {
        sl_check_error(c, NULL, wf, "environment_variables", "workflow.environment_variables",
                       "must be a list of {name, value, value_type}");
        g->env_vars = NULL;
    }
    if (g->conv_vars && !json_is_array(g->conv_vars)) {
        sl_check_error(c, NULL, wf, "conversation_variables", "workflow.conversation_variables",
                       "must be a list of {name, value, value_type}");
        g->conv_vars = NULL;
    }

    check_sluice(c, json_object_get(root, "sluice"));

    /* Nodes. */
    size_t nn = json_array_size(nodes);
    g->nodes = sl_xcalloc(nn ? nn : 1, sizeof *g->nodes);
    for (size_t i = 0; i < nn; i++) {
        const sl_value *jn = json_array_get(nodes, i);
        /* Positions are looked up only for messages. */
        char where[512];
        if (!json_is_object(jn)) {
            sl_diag_add(diag, false, "%s: workflow.graph.nodes[%zu]: must be a mapping",
                item_where(g, nodes, i, where, sizeof where), i);
            continue;
        }
        const char *ntype = json_string_value(json_object_get(jn, "type"));
        if (ntype && strcmp(ntype, "custom-note") == 0)
            continue; /* canvas notes do not run */
        const sl_value *jid = json_object_get(jn, "id");
        const sl_value *data = json_object_get(jn, "data");
        if (!json_is_string(jid) || json_string_length(jid) == 0) {
            sl_diag_add(diag, false, "%s: workflow.graph.nodes[%zu]: field id: missing or not "
                        "text; every node needs a unique text id (quote numeric ids)",
                            item_where(g, nodes, i, where, sizeof where), i);
            continue;
        }
        const char *id = json_string_value(jid);
        if (!json_is_object(data)) {
            sl_diag_add(diag, false, "%s: node '%s': field data: missing or not a mapping; a node "
                        "needs data: {type, title, ...}",
                            item_where(g, nodes, i, where, sizeof where), id);
            continue;
        }
        sl_gnode *n = &g->nodes[g->nnodes];
        n->idx = g->nnodes;
        n->id = id;
        n->data = data;
        n->mark = sl_yaml_mark(&g->doc, jn);
        n->parent = -1;
        n->inner_start = -1;
        const char *title = json_string_value(json_object_get(data, "title"));
        n->title = title && *title ? title : id;
        n->type = json_string_value(json_object_get(data, "type"));
        if (!n->type) {
            sl_check_error(c, n, data, "type", "data.type", "missing or not text; the node "
                           "type says what the node does (start, end, if-else, ...)");
            n->type = "";
        }
        if (sl_graph_find(g, id) >= 0) {
            sl_check_error(c, n, jn, "id", "id", "duplicate node id '%s' (also at %s); give "
                           "each node a unique id", id,
                           (sl_graph_where(g, g->nodes[sl_graph_find(g, id)].mark, where,
                                           sizeof where), where));
            continue;
        }
        sl_map_put(&g->index, id, (void *)(intptr_t)(g->nnodes + 1));
        g->nnodes++;
    }
    /* Types and parents (second pass: parents may come later in the list). */
    for (int i = 0; i < g->nnodes; i++) {
        sl_gnode *n = &g->nodes[i];
        const sl_value *jn = json_array_get(nodes, 0);
        (void)jn;
        n->kind = kinds->find(n->type);
        if (!n->kind && *n->type) {
            if (kinds->known && kinds->known(n->type))
                sl_check_error(c, n, n->data, "type", "data.type",
                               "node type '%s' is not supported by sluice yet, so this "
                               "workflow cannot run; see `sluice --help` for the node types "
                               "it runs",
                               n->type);
            else
                sl_check_error(c, n, n->data, "type", "data.type",
                               "unknown node type '%s'; check the spelling or the Dify version "
                               "that exported the file", n->type);
        }
    }
    for (size_t i = 0; i < nn; i++) {
        const sl_value *jn = json_array_get(nodes, i);
        const char *id = json_string_value(json_object_get(jn, "id"));
        int idx = id ? sl_graph_find(g, id) : -1;
        if (idx < 0 || g->nodes[idx].data != json_object_get(jn, "data"))
            continue;
        sl_gnode *n = &g->nodes[idx];
        const sl_value *pid = json_object_get(jn, "parentId");
        const char *parent = json_string_value(pid);
        if (!parent)
            parent = json_string_value(json_object_get(n->data, "iteration_id"));
        if (!parent)
            parent = json_string_value(json_object_get(n->data, "loop_id"));
        if (parent && *parent) {
            int p = sl_graph_find(g, parent);
            if (p < 0)
                sl_check_error(c, n, jn, "parentId", "parentId", "names container '%s', which "
                               "is not in the graph", parent);
            else if (!g->nodes[p].kind || !(g->nodes[p].kind->flags & SL_KIND_CONTAINER))
                sl_check_error(c, n, jn, "parentId", "parentId", "names '%s', a %s node; only "
                               "iteration and loop nodes contain other nodes", parent,
                               g->nodes[p].type);
            else
                n->parent = p;
        }
    }
    /* Container nesting must end (no parent cycles) and respect max depth. */
    for (int i = 0; i < g->nnodes; i++) {
        int depth = 0;
        for (int p = g->nodes[i].parent; p >= 0; p = g->nodes[p].parent) {
            if (++depth > 16) {
                sl_check_error(c, &g->nodes[i], NULL, NULL, "parentId",
                               "containers are nested in a circle or deeper than 16 levels");
                g->nodes[i].parent = -1;
                break;
            }
        }
    }

    /* Edges. */
    size_t ne = json_array_size(edges);
    g->edges = sl_xcalloc(ne ? ne : 1, sizeof *g->edges);
    for (size_t i = 0; i < ne; i++) {
        const sl_value *je = json_array_get(edges, i);
        char where[512]; /* filled only for messages */
        if (!json_is_object(je)) {
            sl_diag_add(diag, false, "%s: workflow.graph.edges[%zu]: must be a mapping",
                item_where(g, edges, i, where, sizeof where), i);
            continue;
        }
        const char *eid = json_string_value(json_object_get(je, "id"));
        const char *src = json_string_value(json_object_get(je, "source"));
        const char *dst = json_string_value(json_object_get(je, "target"));
        const char *handle = json_string_value(json_object_get(je, "sourceHandle"));
        if (!src || !dst) {
            sl_diag_add(diag, false, "%s: edge '%s': source and target must be node ids (text)",
                        item_where(g, edges, i, where, sizeof where), eid ? eid : "?");
            continue;
        }
        int s = sl_graph_find(g, src), d = sl_graph_find(g, dst);
        if (s < 0 || d < 0) {
            /* Edges to canvas notes or removed nodes: Dify drops notes, and
             * a dangling edge is a broken export. */
            sl_diag_add(diag, false, "%s: edge '%s': %s '%s' is not a node in the graph; remove "
                        "the edge or restore the node",
                            item_where(g, edges, i, where, sizeof where), eid ? eid : "?",
                        s < 0 ? "source" : "target", s < 0 ? src : dst);
            continue;
        }
        if (g->nodes[s].parent != g->nodes[d].parent) {
            sl_diag_add(diag, false, "%s: edge '%s': connects '%s' and '%s', which are in "
                        "different containers; edges may not cross an iteration or loop "
                        "boundary", item_where(g, edges, i, where, sizeof where),
                        eid ? eid : "?", src, dst);
            continue;
        }
        if (s == d) {
            sl_diag_add(diag, false, "%s: edge '%s': connects node '%s' to itself",
                item_where(g, edges, i, where, sizeof where),
                        eid ? eid : "?", src);
            continue;
        }
        sl_gedge *e = &g->edges[g->nedges];
        e->src = s;
        e->dst = d;
        e->handle = handle && *handle ? handle : "source";
        e->id = eid ? eid : "";
        add_edge_ref(&g->nodes[s].out, &g->nodes[s].nout, g->nedges);
        add_edge_ref(&g->nodes[d].in, &g->nodes[d].nin, g->nedges);
        g->nedges++;
    }

    /* The start node and container start nodes. */
    for (int i = 0; i < g->nnodes; i++) {
        sl_gnode *n = &g->nodes[i];
        if (!n->kind)
            continue;
        if ((n->kind->flags & SL_KIND_ROOT_START) && n->parent < 0) {
            if (g->start >= 0)
                sl_check_error(c, n, NULL, NULL, NULL, "a second start node (the first is "
                               "'%s'); a workflow has exactly one", g->nodes[g->start].id);
            else
                g->start = i;
        }
        if (n->kind->flags & SL_KIND_CONTAINER) {
            const char *sid = json_string_value(json_object_get(n->data, "start_node_id"));
            int s = sid ? sl_graph_find(g, sid) : -1;
            if (s >= 0 && g->nodes[s].parent == i) {
                n->inner_start = s;
            } else {
                for (int k = 0; k < g->nnodes; k++)
                    if (g->nodes[k].parent == i && g->nodes[k].kind &&
                        (g->nodes[k].kind->flags & SL_KIND_INNER_START))
                        n->inner_start = k;
            }
            if (n->inner_start < 0)
                sl_check_error(c, n, n->data, "start_node_id", "start_node_id",
                               "the %s has no start node inside it; add the nodes it should "
                               "run", n->type);
        }
        if ((n->kind->flags & SL_KIND_INNER_START) && n->parent < 0)
            sl_check_error(c, n, NULL, NULL, NULL, "a %s node must sit inside its container "
                           "(parentId missing)", n->type);
    }
    if (g->start < 0 && g->nnodes > 0) {
        sl_check_error(c, NULL, graph, "nodes", "workflow.graph.nodes",
                       "no start node; a workflow begins at a node of type 'start'");
        goto done;
    }
    if (g->nnodes == 0) {
        sl_check_error(c, NULL, graph, "nodes", "workflow.graph.nodes", "the graph has no nodes");
        goto done;
    }
    g->inputs = json_object_get(g->nodes[g->start].data, "variables");

    check_cycles(g, c);
    if (diag->errors == errors0)
        check_reachable(g, c);
    for (int i = 0; i < g->nnodes; i++) {
        sl_gnode *n = &g->nodes[i];
        if (n->kind && n->kind->check)
            n->kind->check(c, n);
        if (n->kind && n->kind->prepare)
            n->kind->prepare(c, n, &n->state);
    }
    /* Every node may carry retry_config and error_strategy. */
    for (int i = 0; i < g->nnodes; i++) {
        sl_gnode *n = &g->nodes[i];
        const sl_value *es = json_object_get(n->data, "error_strategy");
        if (es && !json_is_null(es)) {
            const char *s = json_string_value(es);
            if (!s || (strcmp(s, "fail-branch") && strcmp(s, "default-value") && strcmp(s, "none")))
                sl_check_error(c, n, n->data, "error_strategy", "error_strategy",
                               "must be fail-branch or default-value");
            else if (!strcmp(s, "fail-branch"))
                n->on_error = SL_ON_ERROR_BRANCH;
            else if (!strcmp(s, "default-value"))
                n->on_error = SL_ON_ERROR_DEFAULT;
        }
        const sl_value *rc = json_object_get(n->data, "retry_config");
        if (rc && !json_is_null(rc)) {
            if (!json_is_object(rc))
                sl_check_error(c, n, n->data, "retry_config", "retry_config",
                               "must be {retry_enabled, max_retries, retry_interval}");
            else {
                const sl_value *mr = json_object_get(rc, "max_retries");
                const sl_value *ri = json_object_get(rc, "retry_interval");
                /* Dify's editor offers 0..10 retries, 0..5000 ms apart; its
                 * engine takes any count.  Larger values run, clamped to the
                 * editor's range (the run's max_time_s bounds them anyway). */
                json_int_t retries = json_integer_value(mr), wait = json_integer_value(ri);
                if (mr && (!json_is_integer(mr) || retries < 0))
                    sl_check_error(c, n, rc, "max_retries", "retry_config.max_retries",
                                   "must be a whole number (0 to 10)");
                else if (retries > 10)
                    sl_check_warn(c, n, rc, "max_retries", "retry_config.max_retries",
                                  "is %lld; clamped to 10, the most Dify's editor offers",
                                  (long long)retries);
                if (ri && (!json_is_integer(ri) || wait < 0))
                    sl_check_error(c, n, rc, "retry_interval", "retry_config.retry_interval",
                                   "must be milliseconds (0 to 5000)");
                else if (wait > 5000)
                    sl_check_warn(c, n, rc, "retry_interval", "retry_config.retry_interval",
                                  "is %lld ms; clamped to 5000 ms, the most Dify's editor offers",
                                  (long long)wait);
                if (json_is_true(json_object_get(rc, "retry_enabled"))) {
                    n->max_retries = (int)(retries < 0 ? 0 : retries > 10 ? 10 : retries);
                    n->retry_interval_ms = (int)(wait < 0 ? 0 : wait > 5000 ? 5000 : wait);
                }
            }
        }
    }
done:
    if (diag->errors > errors0) {
        sl_err_set(err, SL_EVALIDATE, "%s: %zu error%s; the workflow cannot run", path,
                   diag->errors - errors0, diag->errors - errors0 == 1 ? "" : "s");
        return -1;
    }
    g->stream_plan = sl_stream_plan_new(g);
    return 0;
}

/* sl_graph_load_text, with a bundle's bindings (given to the graph). */
static int load_text(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                     struct sl_bindings *tools, const char *text, size_t len, const char *path,
                     sl_diag *diag, sl_err *err)
{
    /* Recording where every value sits costs a third of the load time and
     * only matters for messages: load without positions first, and again
     * with them when there is anything to report. */
    sl_diag quick;
    sl_diag_init(&quick);
    int rc = load(g, kinds, config, tools, text, len, path, false, &quick, err);
    size_t said = quick.n;
    sl_diag_release(&quick);
    if (said == 0)
        return rc;
    g->tools = NULL;  /* kept for the second load */
    sl_graph_release(g);
    sl_err_clear(err);
    return load(g, kinds, config, tools, text, len, path, true, diag, err);
}

int sl_graph_load_text_tools(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                             struct sl_bindings *tools, const char *text, size_t len,
                             const char *path, sl_diag *diag, sl_err *err)
{
    return load_text(g, kinds, config, tools, text, len, path, diag, err);
}

int sl_graph_load_text(sl_graph *g, const sl_node_kinds *kinds, const sl_config *config,
                       const char *text, size_t len, const char *path, sl_diag *diag,
                       sl_err *err)
{
    return load_text(g, kinds, config, NULL, text, len, path, diag, err);
}

void sl_graph_release(sl_graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        sl_gnode *n = &g->nodes[i];
        if (n->state && n->kind->release)
            n->kind->release(n->state);
        free(n->in);
        free(n->out);
    }
    free(g->nodes);
    free(g->edges);
    sl_map_release(&g->index);
    sl_yaml_doc_release(&g->doc);
    free(g->app_dir);
    sl_bundle_remove_dir(g->app_tmp);
    free(g->app_tmp);
    json_decref(g->manifest);
    sl_bindings_free(g->tools);
    sl_stream_plan_free(g->stream_plan);
    memset(g, 0, sizeof *g);
}

int sl_graph_export(const sl_graph *g, bool include_secrets, sl_buf *out, sl_err *err)
{
    return sl_dsl_export(g->doc.root, include_secrets, out, err);
}
