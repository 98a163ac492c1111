/*
 * graph — loading real Dify exports and writing them back.
 *
 * The acceptance criterion for the DSL loader: every file in the shared
 * samples (dsl-samples/, real Dify exports) parses; each then validates, or is refused with
 * errors that only name node types sluice does not run yet, one for every
 * such node.  Export round trip: load -> export -> parse gives the same
 * document minus canvas notes, with secrets masked, and loading the export
 * gives the same graph (or the same refusal).  Error messages carry
 * file:line:col that point at the right place.
 *
 * Run from the repository root; the samples are in ../shared/dsl-samples
 * ($SLUICE_SHARED/dsl-samples when set).  They are optional: without them
 * those checks skip.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/run.h"
#include "engine/config.h"
#include "nodes/registry.h"
#include "tap.h"
#include "util.h"

#define UNSUPPORTED "is not supported by sluice yet"

/* First place where a and b differ, as a path, into out. */
static bool first_diff(const sl_value *a, const sl_value *b, char *path, size_t n)
{
    if (sl_value_equal(a, b))
        return false;
    size_t len = strlen(path);
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        sl_value *v;
        json_object_foreach((sl_value *)a, k, v) {
            snprintf(path + len, n - len, ".%s", k);
            if (first_diff(v, json_object_get(b, k), path, n))
                return true;
        }
        json_object_foreach((sl_value *)b, k, v) {
            if (!json_object_get(a, k)) {
                snprintf(path + len, n - len, ".%s (only in export)", k);
                return true;
            }
        }
        path[len] = '\0';
        return true;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(path + len, n - len, "[%zu]", i);
            if (first_diff(json_array_get(a, i), json_array_get(b, i), path, n))
                return true;
        }
        path[len] = '\0';
        return true;
    }
    char *sa = show(a), *sb = show(b);
    snprintf(path + len, n - len, " (%.60s vs %.60s)", sa, sb);
    free(sa);
    free(sb);
    return true;
}

/* "path:LINE:COL: " at the start of msg; returns LINE or 0. */
static int msg_line(const char *msg, const char *path)
{
    size_t pl = strlen(path);
    if (strncmp(msg, path, pl) != 0 || msg[pl] != ':')
        return 0;
    int line = 0, col = 0;
    char sep = 0;
    if (sscanf(msg + pl, ":%d:%d%c", &line, &col, &sep) != 3 || sep != ':' || line <= 0 || col <= 0)
        return 0;
    return line;
}

/* What loading should give: the document minus canvas notes and sluice_test,
 * secrets emptied unless include_secrets. */
static sl_value *expected_export(const sl_value *root, bool include_secrets)
{
    sl_value *r = json_deep_copy(root);
    json_object_del(r, "sluice_test");
    sl_value *wf = json_object_get(r, "workflow");
    sl_value *nodes = json_object_get(json_object_get(wf, "graph"), "nodes");
    for (size_t i = 0; i < json_array_size(nodes);) {
        const char *t = json_string_value(json_object_get(json_array_get(nodes, i), "type"));
        if (t && !strcmp(t, "custom-note"))
            json_array_remove(nodes, i);
        else
            i++;
    }
    if (!include_secrets) {
        sl_value *env = json_object_get(wf, "environment_variables");
        for (size_t i = 0; i < json_array_size(env); i++) {
            sl_value *e = json_array_get(env, i);
            const char *t = json_string_value(json_object_get(e, "value_type"));
            if (t && !strcmp(t, "secret"))
                json_object_set_new(e, "value", json_string(""));
        }
    }
    return r;
}

/* Messages without their "file:line:col: " prefix, sorted, joined. */
static char *diag_bodies(const sl_diag *d)
{
    char **v = malloc((d->n + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++) {
        const char *m = d->v[i].msg;
        const char *p = m;
        for (int colons = 0; *p && colons < 3; p++)
            if (*p == ':')
                colons++;
        while (*p == ' ')
            p++;
        v[n++] = sl_xasprintf("%s%s", d->v[i].warning ? "W " : "E ", *p ? p : m);
    }
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(v[i], v[j]) > 0) {
                char *t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    sl_buf b;
    sl_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++) {
        sl_buf_adds(&b, v[i]);
        sl_buf_adds(&b, "\n");
        free(v[i]);
    }
    free(v);
    return sl_buf_detach(&b);
}

/* The settings every load here checks against (see main). */
static sl_config *config;

static void check_sample(const char *path, const char *name)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) {
        CHECK(0, "%s: cannot read", name);
        return;
    }
    sl_yaml_doc doc;
    sl_err err = {0};
    int prc = sl_yaml_parse(text, len, path, &doc, &err);
    CHECK(prc == 0, "%s: parses as YAML (%s)", name, err.msg ? err.msg : "ok");
    sl_err_clear(&err);
    if (prc < 0) {
        free(text);
        return;
    }

    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    int rc = sl_graph_load_file(&g, &sl_nodes, config, path, &d, &err);

    /* Errors may only be about node types sluice does not run yet, about
     * plugins it does not have (an agent's strategy plugin), or about tools
     * this machine has not bound (docs/tools.md). */
    int other = 0, plugins = 0;
    const char *first_other = NULL;
    for (size_t i = 0; i < d.n; i++) {
        if (d.v[i].warning || strstr(d.v[i].msg, UNSUPPORTED))
            continue;
        if (strstr(d.v[i].msg, "is not available in sluice") ||
            strstr(d.v[i].msg, "is not bound to a real tool")) {
            plugins++;
            continue;
        }
        other++;
        if (!first_other)
            first_other = d.v[i].msg;
    }
    CHECK(other == 0, "%s: every load error names an unsupported node type or plugin (%d others; "
          "first: %s)", name, other, first_other ? first_other : "-");

    /* Every node whose type sluice lacks is named, at its data.type. */
    const sl_value *nodes =
        json_object_get(json_object_get(json_object_get(doc.root, "workflow"), "graph"), "nodes");
    int lacking = 0, unnamed = 0, misplaced = 0;
    char missing[512] = "";
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const sl_value *jn = json_array_get(nodes, i);
        const char *canvas = json_string_value(json_object_get(jn, "type"));
        if (canvas && !strcmp(canvas, "custom-note"))
            continue;
        const char *id = json_string_value(json_object_get(jn, "id"));
        const sl_value *data = json_object_get(jn, "data");
        const char *type = json_string_value(json_object_get(data, "type"));
        if (!id || !type || sl_nodes.find(type))
            continue;
        lacking++;
        char want_node[128], want_type[96];
        snprintf(want_node, sizeof want_node, "node '%s' (", id);
        snprintf(want_type, sizeof want_type, "'%s' " UNSUPPORTED, type);
        sl_mark tm = sl_yaml_key_mark(&doc, data, "type");
        const char *found = NULL;
        for (size_t k = 0; k < d.n && !found; k++)
            if (!d.v[k].warning && strstr(d.v[k].msg, want_node) && strstr(d.v[k].msg, want_type))
                found = d.v[k].msg;
        if (!found) {
            unnamed++;
            size_t ml = strlen(missing);
            snprintf(missing + ml, sizeof missing - ml, "%s%s (%s)", ml ? ", " : "", id, type);
        } else if (msg_line(found, path) != tm.line) {
            misplaced++;
        }
    }
    CHECK(unnamed == 0, "%s: each of the %d nodes of a type sluice lacks is named in an error "
          "(missing: %s)", name, lacking, unnamed ? missing : "none");
    CHECK(misplaced == 0, "%s: those errors point at the line of data.type (%d elsewhere)", name,
          misplaced);
    lacking += plugins;
    CHECK(lacking ? rc == -1 : rc == 0, "%s: %s (rc %d, %zu errors; %s)", name,
          lacking ? "refused, since it uses node types or plugins sluice lacks" : "validates",
          rc, d.errors, lacking ? "" : (d.n ? d.v[0].msg : "no messages"));
    if (rc < 0)
        CHECK(err.msg && strstr(err.msg, path), "%s: the summary error names the file (%s)", name,
              err.msg ? err.msg : "none");

    int unplaced = 0;
    for (size_t i = 0; i < d.n; i++)
        if (!msg_line(d.v[i].msg, path))
            unplaced++;
    CHECK(unplaced == 0, "%s: every message (errors and warnings) starts with file:line:col "
          "(%d do not)", name, unplaced);

    /* Export round trip. */
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err eerr = {0};
    int xrc = sl_graph_export(&g, false, &out, &eerr);
    CHECK(xrc == 0 && out.len > 0, "%s: exports (%s)", name, eerr.msg ? eerr.msg : "ok");
    sl_err_clear(&eerr);
    sl_yaml_doc back;
    int brc = xrc == 0 ? sl_yaml_parse(out.data, out.len, "export.yml", &back, &eerr) : -1;
    CHECK(brc == 0, "%s: the export parses (%s)", name, eerr.msg ? eerr.msg : "ok");
    sl_err_clear(&eerr);
    if (brc == 0) {
        sl_value *want = expected_export(doc.root, false);
        char where[512] = "";
        bool differs = first_diff(want, back.root, where, sizeof where);
        CHECK(!differs, "%s: export reads back as the same document minus notes, secrets masked "
              "(first difference at %s)", name, differs ? where : "-");
        CHECK(!strstr(out.data, "custom-note"), "%s: no canvas notes in the export", name);

        /* nodes: ids, types, titles, data; edges */
        const sl_value *wn = json_object_get(
            json_object_get(json_object_get(want, "workflow"), "graph"), "nodes");
        const sl_value *bn = json_object_get(
            json_object_get(json_object_get(back.root, "workflow"), "graph"), "nodes");
        int node_bad = json_array_size(wn) == json_array_size(bn) ? 0 : 1;
        for (size_t i = 0; i < json_array_size(wn) && i < json_array_size(bn); i++) {
            const sl_value *a = json_array_get(wn, i), *b = json_array_get(bn, i);
            const sl_value *ad = json_object_get(a, "data"), *bd = json_object_get(b, "data");
            if (!sl_value_equal(json_object_get(a, "id"), json_object_get(b, "id")) ||
                !sl_value_equal(json_object_get(ad, "type"), json_object_get(bd, "type")) ||
                !sl_value_equal(json_object_get(ad, "title"), json_object_get(bd, "title")) ||
                !sl_value_equal(ad, bd))
                node_bad++;
        }
        CHECK(node_bad == 0, "%s: %zu nodes come back with the same ids, types, titles and data "
              "(%d differ)", name, json_array_size(wn), node_bad);
        const sl_value *we = json_object_get(
            json_object_get(json_object_get(want, "workflow"), "graph"), "edges");
        const sl_value *be = json_object_get(
            json_object_get(json_object_get(back.root, "workflow"), "graph"), "edges");
        CHECK(sl_value_equal(we, be), "%s: %zu edges come back the same", name,
              json_array_size(we));
        json_decref(want);
        sl_yaml_doc_release(&back);

        /* Importing the export gives the same graph, or the same refusal. */
        sl_graph g2;
        sl_diag d2;
        sl_diag_init(&d2);
        int rc2 = sl_graph_load_text(&g2, &sl_nodes, config, out.data, out.len, "export.yml", &d2,
                                     &eerr);
        char *m1 = diag_bodies(&d), *m2 = diag_bodies(&d2);
        CHECK(rc2 == rc && !strcmp(m1, m2), "%s: loading the export gives the same result "
              "(rc %d vs %d; same messages: %s)", name, rc, rc2, strcmp(m1, m2) ? "no" : "yes");
        free(m1);
        free(m2);
        if (rc == 0 && rc2 == 0) {
            bool same = g.nnodes == g2.nnodes && g.nedges == g2.nedges &&
                        !strcmp(g.mode, g2.mode) && !strcmp(g.version, g2.version);
            for (int i = 0; same && i < g.nnodes; i++)
                same = !strcmp(g.nodes[i].id, g2.nodes[i].id) &&
                       !strcmp(g.nodes[i].type, g2.nodes[i].type) &&
                       !strcmp(g.nodes[i].title, g2.nodes[i].title) &&
                       g.nodes[i].parent == g2.nodes[i].parent;
            for (int i = 0; same && i < g.nedges; i++)
                same = g.edges[i].src == g2.edges[i].src && g.edges[i].dst == g2.edges[i].dst &&
                       !strcmp(g.edges[i].handle, g2.edges[i].handle);
            CHECK(same, "%s: the re-imported graph has the same nodes, parents and edges", name);
        }
        sl_err_clear(&eerr);
        sl_diag_release(&d2);
        sl_graph_release(&g2);
    }
    sl_buf_release(&out);
    sl_err_clear(&err);
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_yaml_doc_release(&doc);
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_samples(void)
{
    char *dir = shared_path("dsl-samples");
    DIR *dh = opendir(dir);
    if (!dh) {
        SKIP("the shared Dify exports load, validate and export", "no %s (%s); SLUICE_SHARED "
             "names the folder that holds dsl-samples/", dir, strerror(errno));
        free(dir);
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL && n < 64) {
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".yml"))
            names[n++] = sl_xstrdup(de->d_name);
    }
    closedir(dh);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    CHECK(n == 12, "12 sample files in %s (found %d)", dir, n);
    for (int i = 0; i < n; i++) {
        char *p = sl_xasprintf("%s/%s", dir, names[i]);
        check_sample(p, names[i]);
        free(p);
        free(names[i]);
    }
    free(dir);
}

/* ---- synthetic files ---- */

static const char secret_doc[] =
    "app: {mode: workflow, name: secrets}\n"
    "kind: app\n"
    "version: 0.1.5\n"
    "workflow:\n"
    "  environment_variables:\n"
    "  - {name: api_key, value: s3cr3t-XYZ-123, value_type: secret, id: a}\n"
    "  - {name: region, value: eu-west-1, value_type: string, id: b}\n"
    "  - {name: retries, value: 3, value_type: number, id: c}\n"
    "  graph:\n"
    "    nodes:\n"
    "    - id: s\n"
    "      data: {type: start, title: Start, variables: []}\n"
    "    - id: note1\n"
    "      type: custom-note\n"
    "      data: {type: '', text: 'canvas note'}\n"
    "    - id: e\n"
    "      data:\n"
    "        type: end\n"
    "        title: End\n"
    "        outputs:\n"
    "        - {variable: r, value_selector: [env, region]}\n"
    "    edges:\n"
    "    - {id: s-e, source: s, target: e, sourceHandle: source}\n"
    "sluice_test:\n"
    "- name: ignored\n";

static bool str_is(const sl_value *v, const char *want)
{
    return json_is_string(v) && !strcmp(json_string_value(v), want);
}

static void test_secrets(void)
{
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_text(&g, &sl_nodes, config, secret_doc, strlen(secret_doc),
                                "secrets.yml", &d, &err);
    CHECK(rc == 0, "secrets.yml loads (%s)", d.n ? d.v[0].msg : err.msg ? err.msg : "ok");
    CHECK(g.nnodes == 2 && sl_graph_find(&g, "note1") < 0, "canvas notes are not nodes");
    sl_buf out;
    sl_buf_init(&out, 0);
    CHECK(sl_graph_export(&g, false, &out, &err) == 0, "export without secrets");
    CHECK(out.data && !strstr(out.data, "s3cr3t-XYZ-123"), "the secret value is not in the export");
    CHECK(out.data && strstr(out.data, "eu-west-1"), "plain env values are kept");
    CHECK(out.data && !strstr(out.data, "sluice_test"), "the test block is not exported");
    CHECK(out.data && !strstr(out.data, "canvas note"), "the canvas note is dropped");
    sl_yaml_doc back;
    if (out.data && sl_yaml_parse(out.data, out.len, "x.yml", &back, &err) == 0) {
        const sl_value *env =
            json_object_get(json_object_get(back.root, "workflow"), "environment_variables");
        const sl_value *e0 = json_array_get(env, 0), *e2 = json_array_get(env, 2);
        CHECK(json_array_size(env) == 3 &&
                  str_is(json_object_get(e0, "value"), "") &&
                  str_is(json_object_get(e0, "value_type"), "secret") &&
                  str_is(json_object_get(e0, "name"), "api_key"),
              "the secret variable stays declared, with an empty value");
        CHECK(json_is_integer(json_object_get(e2, "value")) &&
                  json_integer_value(json_object_get(e2, "value")) == 3,
              "a number env value stays a number");
        sl_yaml_doc_release(&back);
    } else {
        CHECK(0, "the export parses (%s)", err.msg ? err.msg : "?");
    }
    sl_buf_reset(&out);
    CHECK(sl_graph_export(&g, true, &out, &err) == 0 && out.data &&
              strstr(out.data, "s3cr3t-XYZ-123"),
          "--include-secrets keeps the secret");
    sl_buf_release(&out);
    /* export into a tiny buffer fails cleanly */
    sl_buf_init(&out, 64);
    sl_err_clear(&err);
    CHECK(sl_graph_export(&g, false, &out, &err) < 0 && err.msg,
          "export past the buffer cap fails with a message");
    sl_buf_release(&out);
    sl_err_clear(&err);
    sl_diag_release(&d);
    sl_graph_release(&g);
}

/* Every message that contains `needle` must start with "t.yml:LINE:COL:". */
static void where_is(const sl_diag *d, const char *needle, int line, int col)
{
    const char *m = NULL;
    for (size_t i = 0; i < d->n && !m; i++)
        if (strstr(d->v[i].msg, needle))
            m = d->v[i].msg;
    int l = 0, c = 0;
    if (m)
        sscanf(m, "t.yml:%d:%d:", &l, &c);
    CHECK(m && l == line && (col == 0 || c == col), "the error about %s is at t.yml:%d:%d (got %s)",
          needle, line, col, m ? m : "no such message");
}

static void test_locations(void)
{
    const char *text = "app: {mode: workflow, name: t}\n"              /* 1 */
                       "kind: app\n"                                   /* 2 */
                       "version: 0.1.5\n"                              /* 3 */
                       "workflow:\n"                                   /* 4 */
                       "  graph:\n"                                    /* 5 */
                       "    nodes:\n"                                  /* 6 */
                       "    - id: s\n"                                 /* 7 */
                       "      data: {type: start, title: Start}\n"     /* 8 */
                       "    - id: n2\n"                                /* 9 */
                       "      data:\n"                                 /* 10 */
                       "        type: bogus\n"                         /* 11 */
                       "        title: Weird\n"                        /* 12 */
                       "    - id: e\n"                                 /* 13 */
                       "      data:\n"                                 /* 14 */
                       "        type: end\n"                           /* 15 */
                       "        title: End\n"                          /* 16 */
                       "        outputs:\n"                            /* 17 */
                       "        - variable: x\n"                       /* 18 */
                       "          value_selector: [nope, y]\n"         /* 19 */
                       "    - id: k\n"                                 /* 20 */
                       "      data: {type: human-input, title: Calc}\n" /* 21 */
                       "    edges:\n"                                  /* 22 */
                       "    - {id: e1, source: s, target: n2}\n"       /* 23 */
                       "    - {id: e2, source: n2, target: ghost}\n"   /* 24 */
                       "    - {id: e3, source: s, target: e}\n";       /* 25 */
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_text(&g, &sl_nodes, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == -1 && err.code == SL_EVALIDATE, "a broken workflow is refused (rc %d)", rc);
    where_is(&d, "unknown node type 'bogus'", 11, 15);
    where_is(&d, "node 'n2' (Weird)", 11, 15);
    where_is(&d, "'human-input' " UNSUPPORTED, 21, 20);
    where_is(&d, "'nope'", 19, 27);
    where_is(&d, "ghost", 24, 7);
    CHECK(d.errors >= 4, "all problems are reported at once (%zu errors)", d.errors);
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    /* YAML syntax errors: file:line:col from the loader */
    const char *bad = "app: {mode: workflow, name: t}\nkind: app\nworkflow:\n  graph: [1, 2\n";
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &sl_nodes, config, bad, strlen(bad), "t.yml", &d, &err);
    int l = 0, c = 0;
    CHECK(rc == -1 && err.msg && sscanf(err.msg, "t.yml:%d:%d:", &l, &c) == 2 && l >= 4,
          "a YAML syntax error says t.yml:line:col (got %s)", err.msg ? err.msg : "none");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    /* a version that is too new is refused at the version line */
    const char *newer = "app: {mode: workflow, name: t}\n"
                        "kind: app\n"
                        "version: 9.0.0\n"
                        "workflow:\n"
                        "  graph:\n"
                        "    nodes:\n"
                        "    - {id: s, data: {type: start, title: S}}\n"
                        "    edges: []\n";
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &sl_nodes, config, newer, strlen(newer), "t.yml", &d, &err);
    CHECK(rc == -1, "DSL version 9.0.0 is refused");
    where_is(&d, "9.0.0", 3, 10);
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    /* a missing file */
    sl_diag_init(&d);
    rc = sl_graph_load_file(&g, &sl_nodes, config, "no/such/file.yml", &d, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "no/such/file.yml") && err.code == SL_EIO,
          "a missing file is refused naming it (%s)", err.msg ? err.msg : "none");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    /* a valid file gives no errors and a usable graph */
    const char *ok = "app: {mode: workflow, name: t}\n"
                     "kind: app\n"
                     "version: 0.1.5\n"
                     "workflow:\n"
                     "  graph:\n"
                     "    nodes:\n"
                     "    - {id: s, data: {type: start, title: S, variables: []}}\n"
                     "    - {id: e, data: {type: end, title: E, outputs: []}}\n"
                     "    edges:\n"
                     "    - {id: x, source: s, target: e}\n";
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &sl_nodes, config, ok, strlen(ok), "t.yml", &d, &err);
    CHECK(rc == 0 && d.errors == 0 && g.nnodes == 2 && g.nedges == 1 &&
              g.start == sl_graph_find(&g, "s") && !strcmp(g.edges[0].handle, "source") &&
              !strcmp(g.mode, "workflow") && !strcmp(g.version, "0.1.5"),
          "a minimal workflow loads: 2 nodes, 1 edge, default handle 'source' (%s)",
          d.n ? d.v[0].msg : "ok");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);
}

/* The engine runs the node types the caller's table gives it, none other:
 * a table of its own (one kind, `ping`) makes `ping` load and `end`
 * unknown; its `known` only changes the message. */
static int ping_checks;
static int ping_check(sl_check *c, const sl_gnode *n)
{
    (void)c;
    (void)n;
    ping_checks++;
    return 0;
}
static int ping_run(sl_node_exec *x)
{
    (void)x;
    return 0;
}
static const sl_node_kind ping_kind = {.type = "ping", .check = ping_check, .run = ping_run};
static const sl_node_kind *ping_find(const char *type)
{
    if (!strcmp(type, "ping"))
        return &ping_kind;
    return !strcmp(type, "start") ? sl_nodes.find(type) : NULL;
}
static bool ping_known(const char *type)
{
    return !strcmp(type, "end");
}

static void test_kinds_table(void)
{
    const char *text = "app: {mode: workflow, name: t}\n"
                       "kind: app\n"
                       "version: 0.1.5\n"
                       "workflow:\n"
                       "  graph:\n"
                       "    nodes:\n"
                       "    - {id: s, data: {type: start, title: S, variables: []}}\n"
                       "    - {id: p, data: {type: ping, title: P}}\n"
                       "    - {id: e, data: {type: end, title: E, outputs: []}}\n"
                       "    edges:\n"
                       "    - {id: x, source: s, target: p}\n"
                       "    - {id: y, source: p, target: e}\n";
    sl_node_kinds only_ping = {ping_find, NULL};
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_text(&g, &only_ping, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == -1 && ping_checks > 0 && d.n == 1 && strstr(d.v[0].msg, "unknown node type 'end'"),
          "a caller's kinds table: its own type loads and is checked, 'end' is unknown (%s)",
          d.n ? d.v[0].msg : "no error");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    only_ping.known = ping_known;
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &only_ping, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == -1 && d.n == 1 && strstr(d.v[0].msg, "'end' " UNSUPPORTED),
          "the table's `known` makes it 'not supported yet' (%s)", d.n ? d.v[0].msg : "none");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);

    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &sl_nodes, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == -1 && d.n == 1 && strstr(d.v[0].msg, "unknown node type 'ping'"),
          "sluice's own table does not know 'ping' (%s)", d.n ? d.v[0].msg : "none");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);
}

/* prepare/release: a kind's compile step runs once per node at load, its
 * errors are load errors naming the node and field, runs read its state,
 * and the graph releases it (also when the load failed). */
static int word_prepares, word_releases, word_live;
static int word_prepare(sl_check *c, const sl_gnode *n, void **state)
{
    word_prepares++;
    const char *w = json_string_value(json_object_get(n->data, "word"));
    if (w && !strcmp(w, "bad")) {
        sl_check_error(c, n, n->data, "word", "word", "'bad' does not compile");
        return -1;
    }
    *state = sl_xstrdup(w ? w : "");
    word_live++;
    return 0;
}
static void word_release(void *state)
{
    word_releases++;
    word_live--;
    free(state);
}
static int word_run(sl_node_exec *x)
{
    if (!strcmp(sl_exec_state(x), "fail"))
        return sl_exec_fail(x, "WordError", "the word is 'fail'");
    sl_exec_output(x, "word", json_string(sl_exec_state(x)));
    sl_exec_usage(x, 5, 0, NULL);
    return 0;
}

/* sl_run_tokens while the run runs: read when the word node finishes. */
static sl_run *tokens_run;
static long long tokens_seen = -1;
static void tokens_event(const char *event, const sl_value *data, void *ud)
{
    (void)ud;
    if (!strcmp(event, "node_finished") &&
        !strcmp(json_string_value(json_object_get(data, "node_id")), "w"))
        tokens_seen = sl_run_tokens(tokens_run);
}
static const sl_node_kind word_kind = {
    .type = "word", .run = word_run, .prepare = word_prepare, .release = word_release};
static const sl_node_kind *word_find(const char *type)
{
    return !strcmp(type, "word") ? &word_kind : sl_nodes.find(type);
}

static void test_prepare(void)
{
    const sl_node_kinds kinds = {word_find, NULL};
    const char *fmt = "app: {mode: workflow, name: t}\n"
                      "kind: app\n"
                      "version: 0.1.5\n"
                      "workflow:\n"
                      "  graph:\n"
                      "    nodes:\n"
                      "    - {id: s, data: {type: start, title: S, variables: []}}\n"
                      "    - {id: w, data: {type: word, title: W, word: %s}}\n"
                      "    - id: e\n"
                      "      data: {type: end, title: E, outputs: [{variable: o, "
                      "value_selector: [w, word]}]}\n"
                      "    edges:\n"
                      "    - {id: x, source: s, target: w}\n"
                      "    - {id: y, source: w, target: e}\n";
    char text[1024];
    snprintf(text, sizeof text, fmt, "hello");
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = sl_graph_load_text(&g, &kinds, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == 0 && word_prepares == 1 && word_releases == 0,
          "prepare runs once per node at load (rc %d, %d prepares, %d releases)", rc,
          word_prepares, word_releases);
    for (int i = 0; rc == 0 && i < 2; i++) {
        sl_run_opts o;
        sl_run_opts_init(&o);
        sl_value *in = json_object();
        o.inputs = in;
        o.on_event = tokens_event;
        sl_run *r = tokens_run = sl_run_new(&g, &o);
        tokens_seen = -1;
        sl_run_exec(r, &err);
        CHECK(tokens_seen == 5 && sl_run_tokens(r) == 5,
              "sl_run_tokens: the tokens used so far while it runs (%lld), and at its end (%lld)",
              tokens_seen, sl_run_tokens(r));
        sl_value *want = json_pack("{s:s}", "o", "hello");
        CHECK(sl_run_status_of(r) == SL_RUN_SUCCEEDED &&
                  sl_value_equal(want, sl_run_outputs(r)) && word_prepares == 1,
              "run %d reads what prepare made, without preparing again (%s)", i + 1,
              sl_run_error(r) ? sl_run_error(r) : "ok");
        json_decref(want);
        json_decref(in);
        sl_run_free(r);
        sl_err_clear(&err);
    }
    sl_diag_release(&d);
    sl_graph_release(&g);
    CHECK(word_releases == 1, "the graph releases the state with itself (%d)", word_releases);

    snprintf(text, sizeof text, fmt, "bad");
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &kinds, config, text, strlen(text), "t.yml", &d, &err);
    CHECK(rc == -1 && d.n == 1 && strstr(d.v[0].msg, "t.yml:8:") &&
              strstr(d.v[0].msg, "node 'w' (W): field word: 'bad' does not compile"),
          "a prepare error is a load error with file:line, node and field (%s)",
          d.n ? d.v[0].msg : "none");
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);
    CHECK(word_live == 0, "a load that prepare failed leaves nothing behind (%d)", word_live);

    /* sl_run_exec: 0 on success; -1 with the run's error, its kind, Dify's
     * error_type and the limit to raise when it failed or was stopped */
    struct {
        const char *word;
        int max_steps;
        bool cancel;
        sl_errcode code;
        const char *type, *setting;
    } ends[] = {
        {"hello", 100, false, SL_OK, NULL, NULL},
        {"fail", 100, false, SL_ENODE, "WordError", NULL},
        {"hello", 1, false, SL_ELIMIT, "MaxStepsExceeded", "max_steps"},
        {"hello", 100, true, SL_ECANCELED, "Stopped", NULL},
    };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        snprintf(text, sizeof text, fmt, ends[i].word);
        sl_diag_init(&d);
        rc = sl_graph_load_text(&g, &kinds, config, text, strlen(text), "t.yml", &d, &err);
        sl_run_opts o;
        sl_run_opts_init(&o);
        sl_value *in = json_object();
        o.inputs = in;
        o.limits.max_steps = ends[i].max_steps;
        sl_run *r = sl_run_new(&g, &o);
        if (ends[i].cancel)
            sl_run_cancel(r);
        int xrc = sl_run_exec(r, &err);
        bool same_msg = ends[i].code ? err.msg && sl_run_error(r) && !strcmp(err.msg,
                                                                             sl_run_error(r))
                                     : !err.msg && !sl_run_error(r);
        CHECK(rc == 0 && xrc == (ends[i].code ? -1 : 0) && err.code == ends[i].code &&
                  same_msg && !strcmp(sl_err_type(&err, "-"), ends[i].type ? ends[i].type : "-") &&
                  (ends[i].setting ? err.setting && !strcmp(err.setting, ends[i].setting)
                                   : !err.setting),
              "sl_run_exec ends %s: rc %d, code %s, type %s, setting %s (%s)",
              sl_run_status_name(sl_run_status_of(r)), xrc, sl_errcode_name(err.code),
              sl_err_type(&err, "none"), err.setting ? err.setting : "none",
              err.msg ? err.msg : "no message");
        sl_run_free(r);
        json_decref(in);
        sl_err_clear(&err);
        sl_diag_release(&d);
        sl_graph_release(&g);
    }

    /* a load that fails elsewhere (end reads a node that does not exist) */
    char broken[1024];
    snprintf(broken, sizeof broken, fmt, "hello");
    char *at = strstr(broken, "[w, word]");
    memcpy(at, "[v, word]", 9);
    sl_diag_init(&d);
    rc = sl_graph_load_text(&g, &kinds, config, broken, strlen(broken), "t.yml", &d, &err);
    int live = word_live;
    sl_diag_release(&d);
    sl_graph_release(&g);
    sl_err_clear(&err);
    CHECK(rc == -1 && live == 1 && word_live == 0,
          "a failed load keeps one state until released (rc %d, %d, then %d)", rc, live,
          word_live);
}

/* sl_nodes_nth lists each kind find() runs, once (sluice --help shows it). */
static void test_registry_list(void)
{
    size_t n = 0, found = 0, twice = 0;
    for (; sl_nodes_nth(n); n++) {
        const sl_node_kind *k = sl_nodes_nth(n);
        found += sl_nodes.find(k->type) == k;
        for (size_t j = 0; j < n; j++)
            twice += !strcmp(sl_nodes_nth(j)->type, k->type);
    }
    CHECK(n >= 20 && found == n && !twice,
          "the registry lists %zu types, each once (%zu twice), found by its name", n, twice);
    CHECK(!sl_nodes.find("human-input") && sl_nodes.find("tool") && sl_nodes.find("loop-end"),
          "human-input is not run, tool and loop-end are");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep TAP lines if a sanitizer ends the run */
    test_registry_list();
    /* The samples' model nodes need a provider to load: one catch-all
     * endpoint (never called here). */
    setenv("SLUICE_LLM_BASE_URL", "http://127.0.0.1:9/v1", 1);
    sl_err cerr = {0};
    if (sl_config_load(NULL, &config, &cerr))
        sl_err_clear(&cerr);
    test_samples();
    test_secrets();
    test_locations();
    test_kinds_table();
    test_prepare();
    sl_config_free(config);
    return tap_done();
}
