/*
 * apps — import, load, export and delete apps with their files (apps.h).
 */
#include "server/apps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsl/bundle.h"
#include "nodes/registry.h"
#include "nodes/wftool.h"
#include "tools/binding.h"

/* A path in the folder the store keeps for app id's files (leaf NULL: the
 * folder itself), or NULL when the store has none for that id. */
static char *app_path(sl_store *s, const char *id, const char *leaf)
{
    char *dir = sl_store_app_dir(s, id, NULL);
    if (!dir || !leaf)
        return dir;
    char *p = sl_xasprintf("%s/%s", dir, leaf);
    free(dir);
    return p;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return p && !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int write_file(const char *path, const char *data, size_t len, sl_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    ssize_t w = fd >= 0 ? write(fd, data, len) : -1;
    if (fd < 0 || w != (ssize_t)len || close(fd)) {
        if (fd >= 0 && w != (ssize_t)len)
            close(fd);
        return sl_err_set(err, SL_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Puts a bundle's files (and manifest) in place as app id's files,
 * replacing what was there only once the new ones are complete. */
static int keep_files(sl_store *s, const char *id, const sl_bundle *b, sl_err *err)
{
    char *dir = sl_store_app_dir(s, id, err);
    if (!dir)
        return -1;
    char *tmp = sl_xasprintf("%s/files.tmp", dir), *files = sl_xasprintf("%s/files", dir);
    char *old = sl_xasprintf("%s/files.old", dir), *man = sl_xasprintf("%s/manifest.json", dir);
    sl_bundle_remove_dir(tmp);
    sl_bundle_remove_dir(old);
    char *mj = json_dumps(b->manifest, JSON_COMPACT);
    int rc = 0;
    if ((mkdir(dir, 0700) && errno != EEXIST) || sl_bundle_extract(b, tmp, err) ||
        (mj && write_file(man, mj, strlen(mj), err)) ||
        (is_dir(files) && rename(files, old)) || rename(tmp, files)) {
        if (!err->msg)
            sl_err_set(err, SL_EIO, "cannot keep the app's files in %s: %s", dir,
                       strerror(errno));
        sl_bundle_remove_dir(tmp);
        if (is_dir(old) && !is_dir(files))
            rename(old, files);
        rc = -1;
    }
    sl_bundle_remove_dir(old);
    free(mj);
    free(dir);
    free(tmp);
    free(files);
    free(old);
    free(man);
    return rc;
}

/* A small file's bytes (NUL-terminated), NULL when it cannot be read or
 * passes 1 MiB (the parse then says nothing is there; the cap is the
 * parser's too). */
static char *slurp_small(const char *path, size_t *len)
{
    FILE *f = path ? fopen(path, "rb") : NULL;  /* NULL: a store with no folder for it */
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, (1u << 20) + 1);
    sl_buf_add_file(&b, f);
    fclose(f);
    *len = b.len;
    sl_buf_addc(&b, 0);
    return sl_buf_detach(&b);
}

/* The store's bindings an app loads with, as text: the server's, then the
 * app's own; the apps it runs as workflow tools inherit them
 * (nodes/wftool.h). */
typedef struct {
    char *spec[2];
    char *where[2];
} store_specs;

static void specs_release(store_specs *ss)
{
    for (int i = 0; i < 2; i++) {
        free(ss->spec[i]);
        free(ss->where[i]);
    }
}

/* Loads with the store's bindings handed down to the apps it names as
 * workflow tools. */
static int load_inheriting(sl_graph *g, const sl_config *config, sl_bindings *tools,
                           const store_specs *ss, const char *text, size_t len,
                           const char *origin, sl_diag *diag, sl_err *err)
{
    sl_wftool_inherit((const char *const *)ss->spec, (const char *const *)ss->where, 2);
    int rc = sl_graph_load_text_tools(g, &sl_nodes, config, tools, text, len, origin, diag, err);
    sl_wftool_inherit(NULL, NULL, 0);
    return rc;
}

/* The bindings: the bundle's (text, may be NULL), the server's, app id's
 * (id NULL: a new app, none yet); ss (may be NULL) keeps the store's
 * texts. */
static int tools_for(sl_store *s, const char *id, const char *text, size_t len,
                     sl_bindings **out, store_specs *ss, sl_err *err)
{
    *out = NULL;
    sl_bindings *b = sl_bindings_new();
    int rc = text ? sl_bindings_parse_text(b, text, len, "the app's tools/bindings.yml", false,
                                           err)
                  : 0;
    const char *scopes[] = {"", id};
    for (int i = 0; !rc && i < (id ? 2 : 1); i++) {
        char *spec = NULL;
        rc = sl_store_tools_get(s, scopes[i], &spec, err);
        if (!rc && spec) {
            char *where = i ? sl_xasprintf("app %s's tool bindings", id)
                            : sl_xstrdup("the server's tool bindings");
            rc = sl_bindings_parse_json(b, spec, where, err);
            if (ss && !rc) {
                ss->spec[i] = spec;
                ss->where[i] = where;
                spec = where = NULL;
            }
            free(where);
        }
        free(spec);
    }
    if (rc || !sl_bindings_count(b)) {
        sl_bindings_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* Import (update == NULL) or a new version of app `update`. */
static int import(sl_store *s, const char *update, const void *data, size_t len,
                  const char *origin, const sl_config *config, char **id, sl_value **info,
                  sl_diag *diag, sl_err *err)
{
    *id = NULL;
    if (info)
        *info = NULL;
    sl_bundle b = {0};
    bool zip = sl_bundle_is_zip(data, len);
    const char *dsl = data;
    size_t dsl_len = len;
    if (zip) {
        if (sl_bundle_read(data, len, NULL, &b, err))
            return sl_err_set(err, err->code ? err->code : SL_EPARSE, "%s: %s", origin,
                              err->msg ? err->msg : "not a valid app bundle");
        dsl = b.dsl;
        dsl_len = b.dsl_len;
    }
    sl_graph g;
    memset(&g, 0, sizeof g);
    char *text = sl_xstrndup(dsl, dsl_len);
    int version = 1;
    const sl_bundle_file *bf = NULL;
    for (size_t i = 0; i < b.nfiles && !bf; i++)
        if (!strcmp(b.files[i].path, "tools/bindings.yml"))
            bf = &b.files[i];
    /* a new version in plain YAML keeps the app's files, and their bindings */
    char *kept = NULL;
    size_t kept_len = 0;
    if (!zip && update) {
        char *f = app_path(s, update, "files/tools/bindings.yml");
        kept = slurp_small(f, &kept_len);
        free(f);
    }
    sl_bindings *tools = NULL;
    store_specs ss = {0};
    int rc = bf ? tools_for(s, update, (const char *)bf->data, bf->len, &tools, &ss, err)
                : tools_for(s, update, kept, kept_len, &tools, &ss, err);
    free(kept);
    if (!rc)
        rc = load_inheriting(&g, config, tools, &ss, text, dsl_len, origin, diag, err);
    specs_release(&ss);
    if (!rc && update) {
        rc = sl_store_app_update(s, update, g.name ? g.name : "app", g.mode, text, &version, err);
        if (!rc)
            *id = sl_xstrdup(update);
    } else if (!rc) {
        rc = sl_store_app_add(s, g.name ? g.name : "app", g.mode, text, id, err);
    }
    if (!rc && zip && b.nfiles && keep_files(s, *id, &b, err)) {
        if (!update) {  /* a new app without its files is no app */
            char *dir = app_path(s, *id, NULL);
            sl_bundle_remove_dir(dir);
            free(dir);
            sl_err e2 = {0};
            sl_store_app_delete(s, *id, &e2);
            sl_err_clear(&e2);
        }
        free(*id);
        *id = NULL;
        rc = -1;
    }
    if (!rc && info)
        *info = json_pack("{s:s,s:s,s:s,s:i,s:i}", "id", *id, "name", g.name ? g.name : "app",
                          "mode", g.mode, "version", version, "files", (int)b.nfiles);
    sl_graph_release(&g);
    free(text);
    sl_bundle_release(&b);
    return rc;
}

int sl_apps_import(sl_store *s, const void *data, size_t len, const char *origin,
                   const sl_config *config, char **id, sl_value **info, sl_diag *diag,
                   sl_err *err)
{
    return import(s, NULL, data, len, origin, config, id, info, diag, err);
}

int sl_apps_update(sl_store *s, const char *app_id, const void *data, size_t len,
                   const char *origin, const sl_config *config, sl_value **info, sl_diag *diag,
                   sl_err *err)
{
    char *id = NULL;
    int rc = import(s, app_id, data, len, origin, config, &id, info, diag, err);
    free(id);
    return rc;
}

/* sl_apps_tools, and the store's texts in ss (may be NULL). */
static int app_tools(sl_store *s, const char *id, const char *files, sl_bindings **out,
                     store_specs *ss, sl_err *err)
{
    char *f = files ? sl_xasprintf("%s/tools/bindings.yml", files) : NULL;
    size_t len = 0;
    char *text = f ? slurp_small(f, &len) : NULL;
    free(f);
    int rc = tools_for(s, id, text, len, out, ss, err);
    free(text);
    return rc;
}

int sl_apps_tools(sl_store *s, const char *id, const char *files, sl_bindings **out, sl_err *err)
{
    return app_tools(s, id, files, out, NULL, err);
}

int sl_apps_load(sl_store *s, const char *id, const sl_config *config, sl_graph *g, int *version,
                 sl_err *err)
{
    char *dsl = NULL;
    sl_value *info = NULL;
    memset(g, 0, sizeof *g);
    if (sl_store_app_get(s, id, &dsl, &info, err))
        return -1;
    if (version)
        *version = (int)json_integer_value(json_object_get(info, "version"));
    json_decref(info);
    char *files = app_path(s, id, "files");
    sl_bindings *tools = NULL;
    store_specs ss = {0};
    if (app_tools(s, id, files, &tools, &ss, err)) {
        specs_release(&ss);
        free(dsl);
        free(files);
        return -1;
    }
    sl_diag d;
    sl_diag_init(&d);
    int rc = load_inheriting(g, config, tools, &ss, dsl, strlen(dsl), id, &d, err);
    /* the first error says why (the count alone says little) */
    for (size_t i = 0; rc && i < d.n; i++)
        if (!d.v[i].warning) {
            sl_errcode code = err->code;
            sl_err_clear(err);
            sl_err_set(err, code, "%s", d.v[i].msg);
            break;
        }
    specs_release(&ss);
    sl_diag_release(&d);
    free(dsl);
    if (!rc && is_dir(files)) {
        g->app_dir = files;
        files = NULL;
    }
    free(files);
    return rc;
}

static int load_for_tool(void *ud, const char *id, const sl_config *cfg, sl_graph *g,
                         sl_err *err)
{
    return sl_apps_load(ud, id, cfg, g, NULL, err);
}

void sl_apps_serve_workflows(sl_store *s)
{
    sl_wftool_set_app_loader(load_for_tool, s);
}

int sl_apps_export(sl_store *s, const char *id, const sl_config *config, sl_buf *out, bool *zip,
                   sl_err *err)
{
    *zip = false;
    sl_graph g;
    char *dsl = NULL;
    if (sl_apps_load(s, id, config, &g, NULL, err) || sl_store_app_get(s, id, &dsl, NULL, err)) {
        sl_graph_release(&g);
        return -1;
    }
    int rc = 0;
    if (g.app_dir || g.sandboxed) {  /* the DSL as imported, with the files */
        *zip = true;
        char *man = app_path(s, id, "manifest.json");
        sl_value *refs = man ? json_load_file(man, 0, NULL) : NULL;
        const char *tmp = getenv("TMPDIR");
        char *tmpl = sl_xasprintf("%s/sluice-export-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(tmpl);
        if (fd < 0) {
            rc = sl_err_set(err, SL_EIO, "cannot make a temporary file: %s", strerror(errno));
        } else {
            close(fd);
            rc = sl_bundle_write(tmpl, g.name ? g.name : "app", dsl, strlen(dsl), g.app_dir, refs,
                                 err);
            FILE *f = rc ? NULL : fopen(tmpl, "rb");
            if (f) {
                sl_buf_add_file(out, f);
                fclose(f);
            }
            unlink(tmpl);
        }
        free(tmpl);
        json_decref(refs);
        free(man);
    } else {
        sl_buf_adds(out, dsl);
    }
    free(dsl);
    sl_graph_release(&g);
    return rc;
}

int sl_apps_delete(sl_store *s, const char *id, sl_err *err)
{
    if (sl_store_app_delete(s, id, err))
        return -1;
    char *dir = app_path(s, id, NULL);
    sl_bundle_remove_dir(dir);
    free(dir);
    return 0;
}

static double num_at(const sl_value *obj, const char *k)
{
    const sl_value *v = json_object_get(obj, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static sl_value *str_or_null(const sl_value *v)
{
    return json_is_string(v) ? json_incref((sl_value *)v) : json_null();
}

sl_value *sl_apps_graph(const char *dsl, size_t len, sl_err *err)
{
    sl_yaml_doc doc;
    if (sl_yaml_parse_ex(dsl, len, "app", &doc, false, err))
        return NULL;
    const sl_value *app = json_object_get(doc.root, "app");
    const sl_value *graph = json_object_get(json_object_get(doc.root, "workflow"), "graph");
    const sl_value *nodes = json_object_get(graph, "nodes");
    const sl_value *edges = json_object_get(graph, "edges");
    if (!json_is_array(nodes)) {
        sl_yaml_doc_release(&doc);
        sl_err_set(err, SL_EINVAL, "the app's DSL has no workflow.graph.nodes");
        return NULL;
    }
    sl_value *out_nodes = json_array(), *out_edges = json_array();
    size_t i;
    const sl_value *n;
    json_array_foreach(nodes, i, n) {
        const sl_value *data = json_object_get(n, "data");
        const sl_value *pos = json_object_get(n, "position");
        /* canvas notes (type custom-note) are no nodes of the graph */
        if (!json_is_string(json_object_get(n, "id")) ||
            !strcmp(json_string_value(json_object_get(n, "type")) ?: "", "custom-note"))
            continue;
        const sl_value *title = json_object_get(data, "title");
        json_array_append_new(
            out_nodes,
            json_pack("{s:O, s:o, s:O, s:f, s:f, s:f, s:f, s:o}", "id", json_object_get(n, "id"),
                      "type", str_or_null(json_object_get(data, "type")), "title",
                      json_is_string(title) ? title : json_object_get(n, "id"), "x",
                      num_at(pos, "x"), "y", num_at(pos, "y"), "width", num_at(n, "width"),
                      "height", num_at(n, "height"), "parent_id",
                      str_or_null(json_object_get(n, "parentId"))));
    }
    const sl_value *e;
    json_array_foreach(edges, i, e) {
        const sl_value *src = json_object_get(e, "source"), *dst = json_object_get(e, "target");
        if (!json_is_string(src) || !json_is_string(dst))
            continue;
        const sl_value *h = json_object_get(e, "sourceHandle");
        json_array_append_new(out_edges,
                              json_pack("{s:o, s:O, s:O, s:o}", "id",
                                        str_or_null(json_object_get(e, "id")), "source", src,
                                        "target", dst, "source_handle",
                                        json_is_string(h) ? json_incref((sl_value *)h)
                                                          : json_string("source")));
    }
    sl_value *out = json_pack("{s:o, s:o, s:o, s:o}", "name", str_or_null(json_object_get(app, "name")),
                              "mode", str_or_null(json_object_get(app, "mode")), "nodes",
                              out_nodes, "edges", out_edges);
    sl_yaml_doc_release(&doc);
    return out;
}
