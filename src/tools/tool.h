/*
 * tool — the one interface every configured tool goes through: the tool
 * node, agents (both runtimes) and `sluice tools` call tools only here.
 *
 * A *toolset* is one bound provider: an MCP server today, an OpenAPI
 * document, a workflow or a built-in next.  It lists its tools (name,
 * description, a JSON Schema for the arguments, optionally one for the
 * structured output) and calls one by name with an arguments object.
 * A call is bounded by the caller's sl_tool_ctx: a deadline, cancellation
 * (asked at least every SL_HTTP_POLL_MS while waiting) and an output cap;
 * past a bound it fails with the `sluice limits` setting to raise.
 *
 * A call's result is already shaped as Dify shapes a tool's messages:
 *   text       the text messages, joined (a link adds "Link: URL")
 *   json       an array of JSON values (Dify's json messages)
 *   files      the files the tool made: name, MIME type and bytes; the
 *              caller stores them in the run's file table
 *   variables  an object of named outputs (variable messages, or an MCP
 *              tool's structuredContent when it declares an output schema)
 *   is_error   the tool answered, but says the call failed (MCP isError):
 *              the text says why; the caller decides (docs/tools.md)
 * A transport or protocol failure is not a result: call() returns -1 with
 * err (SL_EIO, SL_ETIMEOUT, SL_ECANCELED, SL_ELIMIT, SL_ENOTFOUND for an
 * unknown tool, SL_EINVAL for arguments the server refused).
 *
 * Toolsets are shared: one may serve many runs on many threads at once,
 * and keeps its connections (and an MCP session) between calls.
 * Credentials (headers, tokens) live in the toolset and are never part of
 * a message, an event, a log line or an error.
 */
#ifndef SL_TOOLS_TOOL_H
#define SL_TOOLS_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

struct sl_sandbox;

typedef struct {
    char *name;       /* the file's name as the tool gave it ("" when none) */
    char *mime_type;  /* "application/octet-stream" when the tool gave none */
    sl_buf data;
} sl_tool_file;

typedef struct {
    sl_buf text;
    sl_value *json;        /* array, never NULL after sl_tool_result_init */
    sl_value *variables;   /* object, never NULL after sl_tool_result_init */
    sl_tool_file *files;
    size_t n_files;
    bool is_error;
    size_t bytes;          /* output bytes counted against the cap */
} sl_tool_result;

void sl_tool_result_init(sl_tool_result *r);
void sl_tool_result_release(sl_tool_result *r);
/* Adds a file (copies name, type and bytes). */
void sl_tool_result_file(sl_tool_result *r, const char *name, const char *mime_type,
                         const void *data, size_t len);
/* Counts n more output bytes against ctx->max_output: 0, or -1 with err
 * (SL_ELIMIT, setting tool_max_output) once past it. */
struct sl_tool_ctx;
int sl_tool_result_charge(sl_tool_result *r, const struct sl_tool_ctx *ctx, size_t n,
                          sl_err *err);

/* What bounds one call, and the run it belongs to. */
typedef struct sl_tool_ctx {
    double timeout_s;        /* the whole call; 0 = tool_timeout_s's default */
    size_t max_output;       /* bytes of text, json and files together; 0 = default */
    bool (*cancelled)(void *ud);
    void *ud;
    /* For toolsets that run a program (an MCP stdio server): the sandbox
     * to run it in, made on first use; NULL when there is none. */
    struct sl_sandbox *(*sandbox)(void *ud, sl_err *err);
    /* For toolsets that fetch URLs they are given (built-ins): whether
     * this host's and private addresses may be reached (tool_allow_private). */
    bool allow_private;
    /* The node calling (nodes/toolcall.c: its sl_node_exec), for toolsets
     * that run a workflow as a nested run (nodes/wftool.h); NULL elsewhere. */
    void *caller;
    /* For toolsets that send files they are given (an OpenAPI multipart
     * body): the bytes of a Dify file value, at most cap, appended to out
     * (the run's file store or its content_base64): 0, -1 with err, or 1
     * when the value holds no bytes here (a remote URL).  NULL outside a
     * run; ud is passed. */
    int (*file_bytes)(void *ud, const sl_value *file, size_t cap, sl_buf *out, sl_err *err);
} sl_tool_ctx;

/* Dify's and sluice's defaults for a tool call's bounds (`sluice limits`:
 * tool_timeout_s, tool_max_output). */
#define SL_TOOL_TIMEOUT_S 60.0
#define SL_TOOL_MAX_OUTPUT (8u << 20)

typedef struct sl_toolset sl_toolset;

typedef struct sl_toolset_ops {
    const char *kind;  /* "mcp", ... */
    /* The tools, as [{name, description, inputSchema, outputSchema?}]
     * (new reference), every page of a paginated list. */
    int (*list)(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err);
    /* Calls tool `name` with `args` (an object; NULL reads as {}). */
    int (*call)(sl_toolset *t, const sl_tool_ctx *ctx, const char *name, const sl_value *args,
                sl_tool_result *res, sl_err *err);
    /* Where it is, for `sluice tools list` (no credentials): a URL, a
     * command line.  Static or owned by t. */
    const char *(*where)(sl_toolset *t);
    void (*free)(sl_toolset *t);
} sl_toolset_ops;

struct sl_toolset {
    const sl_toolset_ops *ops;
};

int sl_toolset_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err);
int sl_toolset_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name,
                    const sl_value *args, sl_tool_result *res, sl_err *err);
const char *sl_toolset_where(sl_toolset *t);
void sl_toolset_free(sl_toolset *t);

/* The bound timeout and cap of ctx (its own, else the defaults). */
double sl_tool_timeout(const sl_tool_ctx *ctx);
size_t sl_tool_max_output(const sl_tool_ctx *ctx);
bool sl_tool_cancelled(const sl_tool_ctx *ctx);

#endif
