/*
 * openapi — an OpenAPI document as an sl_toolset (tools/tool.h): Dify's
 * "custom" (api) tool provider.  Each operation of an OpenAPI 3.0/3.1 or
 * Swagger 2.0 document, JSON or YAML, is one tool, named by its
 * operationId (or, without one, as Dify names it: the path without its
 * leading "/" and every character outside [A-Za-z0-9_-], then "_" and the
 * lowercase method).  Its path, query, header and cookie parameters and a
 * JSON or form request body become one JSON Schema for the arguments; local
 * $refs (#/components/..., #/definitions/...) are resolved, a recursive
 * schema cut at its repeat.
 *
 * Two layers:
 *   the reader  sl_openapi_parse() turns the document's text into a
 *               sl_openapi_doc (operations, their schemas, the server);
 *               sl_openapi_request() maps one call's arguments to an HTTP
 *               request and sl_openapi_shape() an answer to a tool result.
 *               Pure functions: the fuzzer and the bench drive them.
 *   the toolset sl_openapi_new() reads the document (a file, or an http(s)
 *               URL fetched once through the SSRF guard) and calls
 *               operations through net/http with the guard on, its auth
 *               added to every request.
 *
 * Credentials (an API key, a token, a password) are copied into the
 * toolset and, unless `untrusted`, registered with core/secret while it
 * lives; they never appear in where(), an error or a log line.  Errors
 * name the document (path:line:col for a bad document) or the operation
 * and the server, and say what to do.
 */
#ifndef SL_TOOLS_OPENAPI_H
#define SL_TOOLS_OPENAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"
#include "tools/tool.h"

/* The largest document read, and the most operations kept. */
#define SL_OPENAPI_MAX_SPEC (8u << 20)
#define SL_OPENAPI_MAX_OPS 4096
/* The response body read: the http-request node's binary cap (or the
 * call's output cap, when smaller). */
#define SL_OPENAPI_MAX_BODY (10u << 20)
/* A multipart body's files and fields together (Dify's default upload
 * limit), and its parts. */
#define SL_OPENAPI_MAX_UPLOAD (15u << 20)
#define SL_OPENAPI_MAX_PARTS 100

/* ---- the reader ---- */

typedef struct sl_openapi_doc sl_openapi_doc;

/* Reads a document (JSON or YAML, at most SL_OPENAPI_MAX_SPEC bytes);
 * `where` names it in errors ("spec.yaml:12:5: paths./pets.get: ...").
 * base_url: the URL the document came from (NULL for a file), against
 * which a relative server URL is resolved.  0, or -1 with err (SL_EPARSE
 * for text that is not YAML, SL_EINVAL for a document that is not an API
 * description, SL_ELIMIT past a cap). */
int sl_openapi_parse(const char *text, size_t len, const char *where, const char *base_url,
                     sl_openapi_doc **out, sl_err *err);
void sl_openapi_doc_free(sl_openapi_doc *d);

/* [{name, description, inputSchema}] (borrowed). */
const sl_value *sl_openapi_tools(const sl_openapi_doc *d);
/* The server URL the document gives (absolute, no trailing "/"), or NULL
 * when it gives none or only a relative one with nothing to resolve it
 * against. */
const char *sl_openapi_server(const sl_openapi_doc *d);

/* One request, as sl_openapi_request() builds it. */
typedef struct {
    const char *method;        /* "GET", ... (static) */
    sl_buf url;                /* server + path, path parameters filled, query added */
    sl_buf headers;            /* "Name: value\n" lines */
    const char *content_type;  /* the body's type; NULL: no body */
    sl_buf body;               /* JSON or urlencoded text */
    sl_value *parts;           /* multipart/form-data: [{name, text} or {name, file}, ...]
                                  (file: a Dify file value, a format: binary argument);
                                  NULL otherwise */
} sl_openapi_req;

void sl_openapi_req_init(sl_openapi_req *r);
void sl_openapi_req_release(sl_openapi_req *r);

/* The request for a call of tool `name` with `args` (an object; NULL reads
 * as {}) against `server` (an absolute URL without trailing "/").  -1 with
 * err: SL_ENOTFOUND for an unknown tool, SL_EINVAL for a required
 * argument missing or a header value with a line break. */
int sl_openapi_request(const sl_openapi_doc *d, const char *name, const sl_value *args,
                       const char *server, sl_openapi_req *req, sl_err *err);

/* A successful answer as a tool result: JSON (application/json, +json)
 * becomes json entries (an object one, an array one per object in it) and
 * the text; other text stays text; anything else is a file named
 * `filename` (or "file" + the type's extension).  Counted against ctx's
 * output cap (SL_ELIMIT past it). */
int sl_openapi_shape(const char *content_type, const char *filename, const char *body,
                     size_t len, const sl_tool_ctx *ctx, sl_tool_result *res, sl_err *err);

/* ---- the toolset ---- */

typedef struct {
    const char *type;      /* NULL or "none", "api_key", "bearer", "basic" */
    const char *in;        /* api_key: "header" (default) or "query" */
    const char *name;      /* api_key: the header (Authorization) or query parameter (key) */
    const char *prefix;    /* api_key in a header: NULL/"" for none, "Bearer", "Basic", any */
    const char *value;     /* api_key's key, bearer's token */
    const char *username;  /* basic */
    const char *password;  /* basic */
} sl_openapi_auth;

typedef struct {
    const char *spec;          /* a file path, or an http(s) URL; with document: its name */
    const char *document;      /* the document's text itself (a binding kept in a store),
                                  NUL-terminated; NULL: read spec */
    const char *base_dir;      /* a relative path's folder; NULL: the working directory */
    bool confine;              /* the spec file must stay inside base_dir (a bundle's):
                                  no absolute path, no "..", no symlink out */
    const char *server;        /* overrides the document's server; NULL: the document's */
    sl_openapi_auth auth;
    bool allow_private;        /* tool_allow_private: loopback and private addresses */
    bool untrusted;            /* a bundle's: credentials are not registered as secrets */
} sl_openapi_opts;

/* Reads the document (fetching a URL now) and makes the toolset.  NULL
 * with err for a document that cannot be read or used, a server that is
 * missing or not http(s), or an auth setting that cannot work. */
sl_toolset *sl_openapi_new(const sl_openapi_opts *o, sl_err *err);

#endif
