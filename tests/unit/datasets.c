/*
 * Unit tests: server/datasets — the Knowledge API's routes driven without a
 * socket, over an "economy" knowledge base (keywords only: no embedding
 * model, so no server is needed), with hostile requests: ids too long,
 * bodies of the wrong shape, lists over their caps, queries over 250
 * characters, methods a route does not take.  tests/cli/knowledge_api.sh
 * drives the same routes over HTTP with embeddings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knowledge/kb.h"
#include "server/datasets.h"
#include "store/store.h"
#include "tap.h"
#include "util.h"

static sl_kb *kb;

/* Query arguments: "k=v" pairs of the next call. */
static const char *args[8];

static const char *arg(void *ud, const char *name)
{
    (void)ud;
    size_t n = strlen(name);
    for (size_t i = 0; i < 8 && args[i]; i++)
        if (!strncmp(args[i], name, n) && args[i][n] == '=')
            return args[i] + n + 1;
    return NULL;
}

static sl_value *last;

/* One request; the answer in `last`, the status returned. */
static unsigned call(const char *method, const char *path, const char *body)
{
    json_decref(last);
    last = NULL;
    sl_datasets_req r = {.method = method, .path = path, .body = body,
                         .body_len = body ? strlen(body) : 0, .arg = arg};
    unsigned st = sl_datasets_serve(kb, &r, &last);
    memset(args, 0, sizeof args);
    return st;
}

static unsigned upload(const char *path, const char *name, const char *bytes, const char *data)
{
    json_decref(last);
    last = NULL;
    sl_datasets_req r = {.method = "POST", .path = path, .multipart = true, .file = bytes,
                         .file_len = bytes ? strlen(bytes) : 0, .file_name = name,
                         .file_mime = "text/plain", .data = data, .arg = arg};
    return sl_datasets_serve(kb, &r, &last);
}

static const char *str(const char *key)
{
    return json_string_value(json_object_get(last, key));
}

/* The error envelope: status, code and a message containing text. */
static bool err_is(unsigned st, unsigned want, const char *code, const char *text)
{
    const char *m = str("message");
    return st == want && json_integer_value(json_object_get(last, "status")) == want &&
           str("code") && !strcmp(str("code"), code) && m && strstr(m, text);
}

static char *repeat(const char *s, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++)
        sl_buf_adds(&b, s);
    return sl_buf_detach(&b);
}

int main(void)
{
    char tmpl[] = "/tmp/sluice-datasets-XXXXXX";
    char *dir = mkdtemp(tmpl);
    sl_store *s = NULL;
    sl_err err = {0};
    int interrupted = 0;
    if (!dir || sl_store_open(dir, &s, &interrupted, &err)) {
        printf("Bail out! no store: %s\n", err.msg ? err.msg : "mkdtemp");
        return 1;
    }
    sl_kb_env env = {.store = s};
    sl_kb_limits_default(&env.limits);
    kb = sl_kb_open(&env, &err);
    CHECK(kb != NULL, "sl_kb_open: %s", err.msg ? err.msg : "");
    if (!kb)
        return tap_done();
    char path[512];

    /* ---- paths ---- */
    CHECK(sl_datasets_path("/datasets") && sl_datasets_path("/datasets/x/documents") &&
              !sl_datasets_path("/datasetsx") && !sl_datasets_path("/workflows/run"),
          "sl_datasets_path: /datasets and below, nothing else");
    CHECK(sl_datasets_upload("POST", "/datasets/a/document/create-by-file") &&
              sl_datasets_upload("POST", "/datasets/a/documents/b/update_by_file") &&
              sl_datasets_upload("PATCH", "/datasets/a/documents/b") &&
              !sl_datasets_upload("PATCH", "/datasets/a/documents/status/enable") &&
              !sl_datasets_upload("POST", "/datasets/a/document/create-by-text"),
          "sl_datasets_upload: the file routes only");

    /* ---- a knowledge base ---- */
    unsigned st = call("POST", "/datasets", "{\"name\": \"Notes\"}");
    CHECK(st == 200 && str("id"), "POST /datasets: %u", st);
    char ds[80];
    snprintf(ds, sizeof ds, "%s", str("id") ? str("id") : "none");
    st = call("POST", "/datasets", "{\"name\": \"Notes\"}");
    CHECK(err_is(st, 409, "dataset_name_duplicate", "already exists"), "a taken name: 409");
    st = call("POST", "/datasets", "not json");
    CHECK(err_is(st, 400, "invalid_param", "not a JSON object"), "a body that is not JSON: 400");
    st = call("POST", "/datasets", "{\"name\": 5}");
    CHECK(err_is(st, 400, "invalid_param", "name must be a string"), "a name that is a number");
    args[0] = "limit=100000";
    args[1] = "page=-3";
    st = call("GET", "/datasets", NULL);
    CHECK(st == 200 && json_integer_value(json_object_get(last, "limit")) == 100 &&
              json_integer_value(json_object_get(last, "page")) == 1 &&
              json_integer_value(json_object_get(last, "total")) == 1,
          "limit held to 100, page to 1");
    args[0] = "limit=1e9";
    st = call("GET", "/datasets", NULL);
    CHECK(err_is(st, 400, "invalid_param", "limit must be an integer"), "limit=1e9: 400");

    /* ---- ids in paths ---- */
    char *longid = repeat("a", 200);
    snprintf(path, sizeof path, "/datasets/%s", longid);
    st = call("GET", path, NULL);
    CHECK(st == 404, "an id of 200 bytes: 404 (%u)", st);
    free(longid);
    st = call("GET", "/datasets/", NULL);
    CHECK(st == 404, "/datasets/ with no id: 404 (%u)", st);
    st = call("GET", "/datasets/nope", NULL);
    CHECK(err_is(st, 404, "not_found", "Dataset not found."), "an unknown dataset: 404");
    st = call("PUT", "/datasets/nope", NULL);
    CHECK(err_is(st, 405, "method_not_allowed", "PUT"), "PUT: 405");
    st = call("POST", "/datasets/nope/retrieve", "{\"query\": \"x\"}");
    CHECK(err_is(st, 404, "not_found", "Dataset not found."), "retrieve on an unknown dataset");

    /* ---- documents ---- */
    snprintf(path, sizeof path, "/datasets/%s/document/create-by-text", ds);
    st = call("POST", path,
              "{\"name\": \"tea\", \"text\": \"Green tea is brewed at eighty degrees.\\n\\nBlack "
              "tea wants boiling water.\", \"indexing_technique\": \"economy\", "
              "\"process_rule\": {\"mode\": \"automatic\"}}");
    const sl_value *doc = json_object_get(last, "document");
    CHECK(st == 200 && json_is_object(doc) && str("batch") && strlen(str("batch")) == 20,
          "create-by-text: 200 {document, batch} (%u)", st);
    char docid[80], batch[40];
    snprintf(docid, sizeof docid, "%s",
             json_string_value(json_object_get(doc, "id")) ? json_string_value(json_object_get(doc, "id")) : "none");
    snprintf(batch, sizeof batch, "%s", str("batch") ? str("batch") : "none");
    st = call("POST", path, "{\"name\": \"x\", \"text\": \"y\", \"process_rule\": "
                            "{\"mode\": \"custom\", \"rules\": {\"pre_processing_rules\": [{\"id\": "
                            "\"remove_extra_spaces\", \"enabled\": \"yes\"}]}}}");
    CHECK(err_is(st, 400, "invalid_param", "Process rule pre_processing_rules enabled is invalid"),
          "a pre-processing rule with enabled \"yes\": Dify's message");
    st = call("POST", path, "{\"name\": \"x\", \"text\": \"y\", \"process_rule\": {\"mode\": "
                            "\"custom\", \"rules\": {\"pre_processing_rules\": [], "
                            "\"segmentation\": {\"separator\": \"\\n\"}}}}");
    CHECK(err_is(st, 400, "invalid_param", "Process rule segmentation max_tokens is required"),
          "no max_tokens: Dify's message");
    st = call("POST", path, "{\"name\": \"x\", \"text\": \"y\", \"process_rule\": {}}");
    CHECK(err_is(st, 400, "invalid_param", "Process rule mode is required"), "no mode");
    st = call("POST", path, "{\"name\": \"x\", \"text\": [\"y\"]}");
    CHECK(err_is(st, 400, "invalid_param", "text must be a string"), "text that is a list");
    snprintf(path, sizeof path, "/datasets/%s/document/create_by_file", ds);
    st = upload(path, "coffee.txt", "Coffee is brewed at ninety degrees.", "{\"process_rule\": "
                                                                          "{\"mode\": \"automatic\"}}");
    CHECK(st == 200 && json_is_object(json_object_get(last, "document")),
          "create_by_file with a text file: 200 (%u)", st);
    st = upload(path, "coffee.txt", NULL, NULL);
    CHECK(err_is(st, 400, "no_file_uploaded", "Please upload your file."), "no file: 400");
    st = upload(path, "coffee.txt", "x", "[1]");
    CHECK(err_is(st, 400, "invalid_param", "data field"), "a data part that is a list: 400");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/indexing-status", ds, batch);
    st = call("GET", path, NULL);
    const sl_value *e0 = json_array_get(json_object_get(last, "data"), 0);
    CHECK(st == 200 && !strcmp(json_string_value(json_object_get(e0, "indexing_status")) ? json_string_value(json_object_get(e0, "indexing_status")) : "",
                               "completed") &&
              json_integer_value(json_object_get(e0, "total_segments")) >= 1,
          "indexing-status: completed");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s", ds, "nope");
    st = call("GET", path, NULL);
    CHECK(err_is(st, 404, "not_found", "Document Not Exists."), "an unknown document: 404");

    /* ---- lists over their caps ---- */
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "{\"document_ids\": [");
    for (int i = 0; i < 1001; i++)
        sl_buf_addf(&b, "%s\"%d\"", i ? "," : "", i);
    sl_buf_adds(&b, "]}");
    snprintf(path, sizeof path, "/datasets/%s/documents/status/disable", ds);
    st = call("PATCH", path, b.data);
    CHECK(err_is(st, 400, "invalid_param", "at most 1000"), "1001 document ids: 400");
    sl_buf_release(&b);
    st = call("PATCH", path, "{\"document_ids\": [5]}");
    CHECK(err_is(st, 400, "invalid_param", "must be a string"), "a document id that is a number");
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "{\"segments\": [");
    for (int i = 0; i < 1001; i++)
        sl_buf_addf(&b, "%s{\"content\": \"s%d\"}", i ? "," : "", i);
    sl_buf_adds(&b, "]}");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments", ds, docid);
    st = call("POST", path, b.data);
    CHECK(err_is(st, 400, "invalid_param", "Exceeded maximum segments limit of 1000."),
          "1001 segments: Dify's message");
    sl_buf_release(&b);
    st = call("POST", path, "{\"segments\": [\"just text\"]}");
    CHECK(err_is(st, 400, "invalid_param", "segments[0].content is required"),
          "a segment that is not an object");
    st = call("POST", path, "{\"segments\": [{\"content\": \"Oolong sits between green and black.\"}]}");
    CHECK(st == 200 && json_array_size(json_object_get(last, "data")) == 1 && str("doc_form"),
          "POST segments: {data, doc_form} (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments/nope", ds, docid);
    st = call("GET", path, NULL);
    CHECK(err_is(st, 404, "not_found", "Segment not found."), "an unknown segment: 404");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments/x/child_chunks", ds, docid);
    st = call("POST", path, "{\"content\": \"c\"}");
    CHECK(err_is(st, 501, "not_supported", "child_chunks"), "child chunks: 501 naming the route");

    /* ---- archived documents ---- */
    char *ab = sl_xasprintf("{\"document_ids\": [\"%s\"]}", docid);
    snprintf(path, sizeof path, "/datasets/%s/documents/status/archive", ds);
    st = call("PATCH", path, ab);
    CHECK(st == 200, "archive: 200 (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments", ds, docid);
    st = call("POST", path, "{\"segments\": [{\"content\": \"more\"}]}");
    CHECK(err_is(st, 403, "archived_document_immutable", "The archived document is not editable."),
          "a segment added to an archived document: 403");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s", ds, docid);
    st = call("DELETE", path, NULL);
    CHECK(st == 403, "an archived document is not deleted: 403 (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s/documents/status/un_archive", ds);
    st = call("PATCH", path, ab);
    CHECK(st == 200, "un_archive: 200 (%u)", st);
    free(ab);
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments", ds, docid);
    st = call("GET", path, NULL);
    const sl_value *s0 = json_array_get(json_object_get(last, "data"), 0);
    char seg0[80];
    snprintf(seg0, sizeof seg0, "%s", json_string_value(json_object_get(s0, "id")) ? json_string_value(json_object_get(s0, "id")) : "none");
    snprintf(path, sizeof path, "/datasets/%s/documents/%s/segments/%s/child_chunks", ds, docid, seg0);
    st = call("GET", path, NULL);
    CHECK(st == 200 && json_array_size(json_object_get(last, "data")) == 0 &&
              json_integer_value(json_object_get(last, "total")) == 0,
          "a general segment's child_chunks: an empty page (%u)", st);

    /* ---- retrieval ---- */
    snprintf(path, sizeof path, "/datasets/%s/retrieve", ds);
    st = call("POST", path, "{\"query\": \"green tea degrees\"}");
    const sl_value *rec = json_array_get(json_object_get(last, "records"), 0);
    const char *content =
        json_string_value(json_object_get(json_object_get(rec, "segment"), "content"));
    CHECK(st == 200 && content && strstr(content, "Green tea") &&
              json_is_number(json_object_get(rec, "score")) &&
              json_object_get(json_object_get(json_object_get(rec, "segment"), "document"),
                              "name"),
          "retrieve (keywords): the tea chunk first, with a score and its document (%u)", st);
    char *q = repeat("a", 251);
    char *qb = sl_xasprintf("{\"query\": \"%s\"}", q);
    st = call("POST", path, qb);
    CHECK(err_is(st, 400, "invalid_param", "Query cannot exceed 250 characters"), "251 chars");
    free(q);
    free(qb);
    q = repeat("\xc3\xa9", 250);
    qb = sl_xasprintf("{\"query\": \"%s\"}", q);
    st = call("POST", path, qb);
    CHECK(st == 200, "250 two-byte characters pass (%u)", st);
    free(q);
    free(qb);
    st = call("POST", path, "{\"query\": \"tea\", \"retrieval_model\": {\"top_k\": 0}}");
    CHECK(err_is(st, 400, "invalid_param", "top_k"), "top_k 0: 400");
    st = call("POST", path, "{\"query\": \"tea\", \"retrieval_model\": {\"score_threshold\": \"hi\"}}");
    CHECK(err_is(st, 400, "invalid_param", "score_threshold must be a number"),
          "a score_threshold that is text: 400");
    st = call("POST", path, "{\"query\": \"tea\", \"retrieval_model\": {\"metadata_filtering_conditions\": 3}}");
    CHECK(err_is(st, 400, "invalid_param", "metadata_filtering_conditions"), "conditions 3: 400");
    st = call("POST", path, "{\"query\": \"tea\", \"attachment_ids\": \"x\"}");
    CHECK(err_is(st, 400, "invalid_param", "Attachment_ids must be a list"), "attachment_ids text");

    /* ---- metadata ---- */
    snprintf(path, sizeof path, "/datasets/%s/metadata", ds);
    st = call("POST", path, "{\"type\": \"string\", \"name\": \"origin\"}");
    CHECK(st == 201 && str("id"), "POST metadata: 201 (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s/documents/metadata", ds);
    st = call("POST", path, "{\"operation_data\": [{\"document_id\": \"x\", \"metadata_list\": "
                            "[{\"name\": \"origin\", \"value\": {\"a\": 1}}]}]}");
    CHECK(err_is(st, 400, "invalid_metadata", "metadata_list[0]"), "an object as a value: 400");
    char *mb = sl_xasprintf("{\"operation_data\": [{\"document_id\": \"%s\", \"metadata_list\": "
                            "[{\"id\": \"i\", \"name\": \"origin\", \"value\": \"China\"}]}]}",
                            docid);
    st = call("POST", path, mb);
    free(mb);
    CHECK(st == 200 && str("result") && !strcmp(str("result"), "success"),
          "documents/metadata: success (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s/metadata/built-in/explode", ds);
    st = call("POST", path, NULL);
    CHECK(err_is(st, 400, "invalid_action", "Invalid action."), "built-in/explode: 400");

    /* ---- deletes ---- */
    snprintf(path, sizeof path, "/datasets/%s/documents/%s", ds, docid);
    st = call("DELETE", path, NULL);
    CHECK(st == 204 && !last, "DELETE a document: 204, no body (%u)", st);
    snprintf(path, sizeof path, "/datasets/%s", ds);
    st = call("DELETE", path, NULL);
    CHECK(st == 204 && !last, "DELETE the dataset: 204 (%u)", st);
    st = call("GET", path, NULL);
    CHECK(st == 404, "then it is gone (%u)", st);

    json_decref(last);
    sl_kb_close(kb);
    sl_store_close(s);
    char *cmd = sl_xasprintf("rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    free(cmd);
    sl_err_clear(&err);
    return tap_done();
}
