/*
 * fuzz_request — libFuzzer target for the JSON input path of `sluice
 * serve`: a request body, parsed as the server parses it, checked by
 * sl_server_check_request against an app with every kind of start input
 * (text with a length cap, paragraph, select, number, checkbox, json
 * object, file, file list), as a workflow and as a chatflow request.
 * Checks besides memory errors: an accepted request yields an inputs
 * object holding exactly the declared variables it was given, and a
 * refused one always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "nodes/registry.h"
#include "server/server.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sl_graph g;

static const char app[] =
    "app: {mode: workflow, name: f}\n"
    "kind: app\n"
    "version: 0.1.5\n"
    "workflow:\n"
    "  graph:\n"
    "    edges: [{source: s, target: e}]\n"
    "    nodes:\n"
    "    - id: s\n"
    "      data:\n"
    "        type: start\n"
    "        title: Start\n"
    "        variables:\n"
    "        - {variable: t, type: text-input, label: t, required: true, max_length: 48}\n"
    "        - {variable: p, type: paragraph, label: p, required: false}\n"
    "        - {variable: s, type: select, label: s, required: false, options: [a, b]}\n"
    "        - {variable: n, type: number, label: n, required: false}\n"
    "        - {variable: c, type: checkbox, label: c, required: false}\n"
    "        - {variable: j, type: json_object, label: j, required: false}\n"
    "        - {variable: f, type: file, label: f, required: false}\n"
    "        - {variable: fl, type: file-list, label: fl, required: false}\n"
    "    - {id: e, data: {type: end, title: End, outputs: []}}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    if (sl_graph_load_text(&g, &sl_nodes, NULL, app, strlen(app), "f.yml", &d, &err))
        abort();
    sl_diag_release(&d);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 100000)
        return 0;
    bool chat = data[0] & 1;
    sl_value *body = json_loadb((const char *)data + 1, size - 1, 0, NULL);
    if (!json_is_object(body)) {
        json_decref(body);
        return 0;
    }
    sl_value *inputs = NULL;
    bool streaming = false;
    sl_err why = {0};
    int rc = sl_server_check_request(&g, body, chat, &inputs, &streaming, &why);
    if (rc == 0) {
        if (!json_is_object(inputs))
            abort();
        const char *k;
        sl_value *v;
        json_object_foreach(inputs, k, v) {
            /* only declared variables come out */
            if (strcmp(k, "t") && strcmp(k, "p") && strcmp(k, "s") && strcmp(k, "n") &&
                strcmp(k, "c") && strcmp(k, "j") && strcmp(k, "f") && strcmp(k, "fl"))
                abort();
        }
    } else if (!why.msg || !why.msg[0] || why.code != SL_EINVAL || inputs) {
        abort();
    }
    sl_err_clear(&why);
    json_decref(inputs);
    json_decref(body);
    return 0;
}
