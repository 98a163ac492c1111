/*
 * server/datasets — Dify's Knowledge API: the Service API's /v1/datasets
 * routes, answered from the server's knowledge bases (knowledge/kb.h).
 *
 * server.c checks the dataset key on a request's headers, reads its body
 * (JSON, or a multipart upload's `file` and `data` parts) and hands it
 * here on a worker thread.  This module knows nothing of connections: it
 * returns the HTTP status and the JSON body to send, Dify's objects and
 * Dify's error envelope {code, message, status}, so every route can be
 * driven without a socket.  docs/knowledge.md ("Knowledge API") lists the
 * routes and where sluice differs (indexing is synchronous).
 */
#ifndef SL_SERVER_DATASETS_H
#define SL_SERVER_DATASETS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/value.h"
#include "knowledge/kb.h"

typedef struct {
    const char *method;     /* "GET", "POST", "PATCH", "DELETE" */
    const char *path;       /* after /v1, without the query: "/datasets/ID/documents" */
    const char *body;       /* a JSON request's body (NULL or empty: none) */
    size_t body_len;
    /* a multipart upload (create-by-file, update-by-file): the `file`
     * part's bytes (NULL when none came), its name and type (told from its
     * bytes and name), and the `data` part (a JSON object as a string) */
    bool multipart;
    const void *file;
    size_t file_len;
    const char *file_name;
    const char *file_mime;
    const char *data;
    /* a query argument by name, NULL when absent */
    const char *(*arg)(void *ud, const char *name);
    void *ud;
} sl_datasets_req;

/* Whether a path (after /v1) belongs to the Knowledge API: "/datasets" and
 * everything under it, and the models a dataset key may list
 * ("/workspaces/current/models/model-types/…"). */
bool sl_datasets_path(const char *path);

/* Whether a request is a multipart upload of a document (its file part is
 * streamed to a blob by the server, as /files/upload's is). */
bool sl_datasets_upload(const char *method, const char *path);

/* Answers one request: the HTTP status, and *body the JSON to send (a new
 * reference; NULL with 204, an empty body). */
unsigned sl_datasets_serve(sl_kb *kb, const sl_datasets_req *r, sl_value **body);

/* Dify's error body {code, message, status} (a new reference). */
sl_value *sl_datasets_error(unsigned status, const char *code, const char *message);

#endif
