/*
 * fuzz_datasets — libFuzzer target for the Knowledge API (server/datasets):
 * a request "METHOD PATH\nBODY" (in both, DS, DOC and SEG stand for
 * the ids of a knowledge base, a document and a segment made at start; a
 * first byte of 'M' sends the body as a multipart upload's data part with
 * a small text file) answered by sl_datasets_serve over an "economy"
 * knowledge base in a temporary store.  Checks besides memory errors:
 * every answer is a status 200–599; every answer but 204 has a JSON object
 * body, and every error body is Dify's envelope {code, message, status}
 * with the same status.  Deleting the knowledge base or its document is
 * not sent (it would leave nothing to reach).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knowledge/kb.h"
#include "server/datasets.h"
#include "store/store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sl_store *store;
static sl_kb *kb;
static char ds[80], doc[80], seg[80];

static const char *no_args(void *ud, const char *name)
{
    (void)ud, (void)name;
    return NULL;
}

static sl_value *serve(const char *method, const char *path, const char *body)
{
    sl_datasets_req r = {.method = method, .path = path, .body = body,
                         .body_len = body ? strlen(body) : 0, .arg = no_args};
    sl_value *out = NULL;
    sl_datasets_serve(kb, &r, &out);
    return out;
}

static void copy_id(char *dst, const sl_value *v)
{
    const char *s = json_string_value(json_object_get(v, "id"));
    if (!s)
        abort();
    snprintf(dst, 80, "%s", s);
}

static char dir[] = "/tmp/fuzz-datasets-XXXXXX";

/* The temporary store goes when the fuzzer exits. */
static void cleanup(void)
{
    sl_kb_close(kb);
    sl_store_close(store);
    char *cmd = sl_xasprintf("rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    free(cmd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    sl_err err = {0};
    int interrupted = 0;
    if (!mkdtemp(dir) || sl_store_open(dir, &store, &interrupted, &err))
        abort();
    sl_kb_env env = {.store = store};
    sl_kb_limits_default(&env.limits);
    if (!(kb = sl_kb_open(&env, &err)))
        abort();
    atexit(cleanup);
    sl_value *v = serve("POST", "/datasets", "{\"name\": \"fuzz\"}");
    copy_id(ds, v);
    json_decref(v);
    char path[256];
    snprintf(path, sizeof path, "/datasets/%s/document/create-by-text", ds);
    v = serve("POST", path, "{\"name\": \"d\", \"text\": \"one two three\\n\\nfour five\", "
                            "\"indexing_technique\": \"economy\"}");
    copy_id(doc, json_object_get(v, "document"));
    json_decref(v);
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments", ds, doc);
    v = serve("GET", path, NULL);
    copy_id(seg, json_array_get(json_object_get(v, "data"), 0));
    json_decref(v);
    snprintf(path, sizeof path, "/datasets/%s/metadata", ds);
    json_decref(serve("POST", path, "{\"type\": \"string\", \"name\": \"author\"}"));
    return 0;
}

/* The path with DS, DOC and SEG replaced by the ids. */
static void expand(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        const char *id = NULL;
        size_t skip = 0;
        if (n - i >= 3 && !memcmp(in + i, "DOC", 3))
            id = doc, skip = 3;
        else if (n - i >= 3 && !memcmp(in + i, "SEG", 3))
            id = seg, skip = 3;
        else if (n - i >= 2 && !memcmp(in + i, "DS", 2))
            id = ds, skip = 2;
        if (id) {
            size_t l = strlen(id);
            if (o + l + 1 >= cap)
                break;
            memcpy(out + o, id, l);
            o += l;
            i += skip;
        } else {
            out[o++] = in[i++];
        }
    }
    out[o] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    bool multipart = size && text[0] == 'M';
    char *line = text + multipart;
    char *nl = strchr(line, '\n');
    char *body = nl ? nl + 1 : NULL;
    size_t ln = nl ? (size_t)(nl - line) : strlen(line);
    char *sp = memchr(line, ' ', ln);
    if (!sp || sp == line || (size_t)(sp - line) > 8) {
        free(text);
        return 0;
    }
    char method[9];
    memcpy(method, line, (size_t)(sp - line));
    method[sp - line] = 0;
    char path[1024];
    expand(sp + 1, ln - (size_t)(sp - line) - 1, path, sizeof path);
    /* the knowledge base and its document stay */
    char keep[256], keep_doc[256];
    snprintf(keep, sizeof keep, "/datasets/%s", ds);
    snprintf(keep_doc, sizeof keep_doc, "/datasets/%s/documents/%s", ds, doc);
    bool gone = !strcmp(method, "DELETE") && (!strcmp(path, keep) || !strcmp(path, keep_doc));
    if (!strcmp(method, "PATCH") && strstr(path, "/documents/status/"))
        gone = true; /* archive would make the document immutable for the rest */
    if (gone) {
        free(text);
        return 0;
    }
    char *xbody = NULL;
    if (body) {
        size_t bn = strlen(body), cap = bn * 18 + 1;
        xbody = malloc(cap);
        expand(body, bn, xbody, cap);
        body = xbody;
    }
    sl_datasets_req r = {.method = method, .path = path, .body = multipart ? NULL : body,
                         .body_len = !multipart && body ? strlen(body) : 0,
                         .multipart = multipart, .file = multipart ? "some text" : NULL,
                         .file_len = multipart ? 9 : 0, .file_name = multipart ? "f.txt" : NULL,
                         .file_mime = "text/plain", .data = multipart ? body : NULL,
                         .arg = no_args};
    sl_value *out = NULL;
    unsigned st = sl_datasets_serve(kb, &r, &out);
    if (st < 200 || st > 599)
        abort();
    if (st == 204 ? out != NULL : !json_is_object(out))
        abort();
    if (st >= 400 && (json_integer_value(json_object_get(out, "status")) != st ||
                      !json_string_value(json_object_get(out, "code")) ||
                      !json_string_value(json_object_get(out, "message"))))
        abort();
    json_decref(out);
    free(xbody);
    free(text);
    return 0;
}
