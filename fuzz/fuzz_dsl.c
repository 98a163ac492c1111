/*
 * fuzz_dsl — libFuzzer target for the DSL loader: YAML parser, graph
 * builder and every node type's load-time checks (sl_graph_load_text).
 *
 * Loading must never crash, leak or read outside the input, whatever the
 * bytes.  When a file loads, it is also exported (sl_graph_export, into a
 * capped buffer as the CLI does), with secrets masked and without, and the
 * exports are loaded again: `sluice export` promises a file that Dify and
 * sluice read back, so an export that does not load, or that changes when
 * exported a second time, is a bug and aborts the run.
 *
 * The input is handed over without a NUL terminator, exactly as long as
 * libFuzzer made it: the loader takes a length, so AddressSanitizer should
 * catch any read past it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/blockyaml.h"
#include "engine/graph.h"
#include "nodes/registry.h"

/* Exports bigger than this are skipped, not compared: fuzz inputs are small
 * but YAML aliases can expand them (within the parser's alias budget). */
#define EXPORT_CAP ((size_t)4 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* A fixed hash seed makes object key order, and so every run, repeat. */
    json_object_seed(1);
    return 0;
}

/* The settings loads check against: the environment's, as `sluice
 * validate` sees them (made once, kept for the process). */
static const sl_config *config(void)
{
    static sl_config *c;
    if (!c)
        c = sl_config_default();
    return c;
}

static void dump_diag(const char *what, const sl_diag *d, const sl_err *e)
{
    fprintf(stderr, "%s: %s\n", what, e->msg ? e->msg : "");
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "  %s\n", d->v[i].msg);
}

/* Exports g into out; false when it did not fit the cap. */
static bool export_graph(const sl_graph *g, bool secrets, sl_buf *out)
{
    sl_err err = {0};
    sl_buf_init(out, EXPORT_CAP);
    int rc = sl_graph_export(g, secrets, out, &err);
    if (rc < 0 && !out->toobig) {
        fprintf(stderr, "export of a loaded graph failed: %s\n", err.msg ? err.msg : "");
        abort();
    }
    sl_err_clear(&err);
    return rc == 0;
}

/* Loads an export into g2 or aborts: what sluice exports must import. */
static void reload(const sl_buf *text, sl_graph *g2, const char *what)
{
    sl_diag diag;
    sl_err err = {0};
    sl_diag_init(&diag);
    if (sl_graph_load_text(g2, &sl_nodes, config(), text->data ? text->data : "", text->len,
                           "<export>", &diag, &err) < 0) {
        fprintf(stderr, "----- export -----\n%s\n------------------\n",
                text->data ? text->data : "");
        dump_diag(what, &diag, &err);
        abort();
    }
    sl_diag_release(&diag);
    sl_err_clear(&err);
}

static void round_trip(const sl_graph *g)
{
    sl_buf first, second, masked;
    sl_graph g2;
    /* `sluice export` masks secrets by default; that file must load too. */
    if (export_graph(g, false, &masked)) {
        reload(&masked, &g2, "the export (secrets masked) of a loadable graph does not load");
        sl_graph_release(&g2);
    }
    sl_buf_release(&masked);
    if (!export_graph(g, true, &first)) {
        sl_buf_release(&first);
        return;
    }
    reload(&first, &g2, "the export of a loadable graph does not load");
    if (export_graph(&g2, true, &second) &&
        (first.len != second.len || memcmp(first.data, second.data, first.len) != 0)) {
        fprintf(stderr, "----- first export -----\n%s\n----- second export -----\n%s\n",
                first.data ? first.data : "", second.data ? second.data : "");
        fprintf(stderr, "exporting the reloaded export gives different text\n");
        abort();
    }
    sl_buf_release(&second);
    sl_graph_release(&g2);
    sl_buf_release(&first);
}

/* The fast block-YAML reader must give exactly what libyaml gives whenever
 * it accepts an input (it declines everything else). */
static void fast_reader_agrees(const char *text, size_t size)
{
    sl_value *fast = NULL;
    if (sl_blockyaml_parse(text, size, &fast) < 0)
        return;
    sl_yaml_doc doc;
    sl_err err = {0};
    if (sl_yaml_parse(text, size, "<fuzz>", &doc, &err) < 0) {
        fprintf(stderr, "fast reader accepted what libyaml refuses: %s\n", err.msg);
        abort();
    }
    if (!json_equal(fast, doc.root)) {
        fprintf(stderr, "fast reader and libyaml disagree\n");
        abort();
    }
    json_decref(fast);
    sl_yaml_doc_release(&doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fast_reader_agrees((const char *)data, size);
    sl_graph g;
    sl_diag diag;
    sl_err err = {0};
    sl_diag_init(&diag);
    if (sl_graph_load_text(&g, &sl_nodes, config(), (const char *)data, size, "<fuzz>", &diag,
                           &err) == 0)
        round_trip(&g);
    sl_graph_release(&g);
    sl_diag_release(&diag);
    sl_err_clear(&err);
    return 0;
}
