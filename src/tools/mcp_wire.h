/*
 * mcp_wire — the Model Context Protocol's messages, apart from any
 * transport: reading one JSON-RPC message, turning a server's error into
 * an sl_err, reading a tools/list page, shaping a tools/call result the way
 * Dify's MCP tool does, and the small encodings the HTTP transport needs.
 * Everything here is a pure function of its input (no I/O, no state), so
 * the fuzzer (fuzz/fuzz_mcp.c) and the unit tests drive it directly; the
 * transports live in mcp.c.
 *
 * Everything a server sends is untrusted: every string kept is capped,
 * shown only through sl_excerpt(), and a message that is not what the
 * protocol says is reported, never half-used.
 */
#ifndef SL_TOOLS_MCP_WIRE_H
#define SL_TOOLS_MCP_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"
#include "tools/tool.h"

/* The revisions sluice speaks, newest first.  The first is stateless
 * ("modern": no initialize, _meta on every request); the others open with
 * initialize; the last is the HTTP+SSE transport's. */
#define SL_MCP_MODERN "2026-07-28"
extern const char *const sl_mcp_versions[];  /* NULL-terminated */
/* The version string of sl_mcp_versions equal to v, or NULL. */
const char *sl_mcp_version_known(const char *v);

/* Bounds on what one server can make sluice keep. */
#define SL_MCP_MAX_TOOLS 1000        /* tools in one list, all pages together */
#define SL_MCP_MAX_PAGES 100         /* pages of one tools/list */
#define SL_MCP_MAX_NAME 256          /* bytes of a tool's name */
#define SL_MCP_MAX_DESC 8192         /* bytes of a description kept (cut past it) */
#define SL_MCP_MAX_SCHEMA 65536      /* bytes of an input or output schema */
#define SL_MCP_MAX_SHOWN 400         /* bytes of a server's words in a message */

typedef enum {
    SL_MCP_INVALID,       /* not a JSON-RPC message (why says what is wrong) */
    SL_MCP_RESPONSE,      /* a result or an error for `id` */
    SL_MCP_REQUEST,       /* the server asks something (id and method) */
    SL_MCP_NOTIFICATION,  /* method, no id */
} sl_mcp_kind;

typedef struct {
    sl_mcp_kind kind;
    sl_value *msg;            /* the message (owned), NULL when INVALID */
    const sl_value *id;       /* RESPONSE (may be JSON null), REQUEST */
    const char *method;       /* REQUEST, NOTIFICATION */
    const sl_value *params;   /* REQUEST, NOTIFICATION; may be NULL */
    const sl_value *result;   /* RESPONSE: an object, or NULL when error is set */
    const sl_value *error;    /* RESPONSE: {code, message, data?} */
    char why[160];            /* INVALID */
} sl_mcp_msg;

/* Reads one message (a JSON body, an SSE event's data, a stdio line).
 * Never fails: anything that is not one JSON-RPC 2.0 message (a batch,
 * bad JSON, a response with both or neither of result and error, a
 * result that is not an object) comes back INVALID. */
void sl_mcp_msg_read(const char *text, size_t len, sl_mcp_msg *m);
void sl_mcp_msg_release(sl_mcp_msg *m);
/* Whether a message id is the integer `want` (sluice's ids are). */
bool sl_mcp_id_is(const sl_value *id, long long want);

/* A JSON-RPC error object as an error for the caller: -1 with err saying
 * what failed (`what`, e.g. "tools/call 'search'"), at which server
 * (`where`), the server's own words (sanitised, capped) and what to do.
 * Codes: invalid params -> SL_EINVAL ("unknown tool" -> SL_ENOTFOUND),
 * method not found -> SL_EUNSUPPORTED, anything else -> SL_EIO. */
int sl_mcp_error(const sl_value *error, const char *where, const char *what, sl_err *err);
/* Whether a JSON-RPC error is one only a 2026-07-28 server sends (header
 * mismatch, missing capability, unsupported version: -32020..-32022), so
 * the server is modern.  For an unsupported version, *pick (when not NULL)
 * is the newest of its `supported` list that sluice speaks, or NULL. */
bool sl_mcp_error_is_modern(const sl_value *error, const char **pick);
/* The newest version sluice speaks among an array of version strings (a
 * server/discover result's supportedVersions), or NULL. */
const char *sl_mcp_pick_version(const sl_value *versions);

/* One page of tools/list: appends its tools to `tools` (an array) as
 * {name, description, inputSchema, outputSchema?}, each string capped
 * (SL_MCP_MAX_*), and sets *cursor to the next page's cursor (borrowed
 * from result; NULL on the last page).  A tool entry of the wrong shape is
 * skipped and counted in *skipped (the others still work).  -1 with err
 * (SL_EIO) when the result has no tools array, SL_ELIMIT when `tools`
 * would pass `max`. */
int sl_mcp_tools_page(const sl_value *result, sl_value *tools, size_t max, const char **cursor,
                      size_t *skipped, sl_err *err);

/* The parameters of an input schema a 2026-07-28 HTTP client must mirror
 * into Mcp-Param-NAME headers (x-mcp-header), as [{"path": [keys...],
 * "header": NAME}] (new reference; [] when none).  NULL with why filled
 * when an annotation breaks the spec's rules (the tool must then be left
 * out of the list). */
sl_value *sl_mcp_param_headers(const sl_value *input_schema, char *why, size_t n);
/* The value at `path` (an array of keys) in args as a header's text
 * (strings as they are, integers in decimal, booleans as true/false),
 * appended to out; false when there is none or it is of another type. */
bool sl_mcp_param_value(const sl_value *args, const sl_value *path, sl_buf *out);

/* The arguments to send: args without the entries that are null or
 * blank strings (Dify drops them before every MCP call).  A new reference
 * (to args itself when nothing is dropped: not to be changed); NULL args
 * read as {}. */
sl_value *sl_mcp_clean_args(const sl_value *args);

/* Appends s[0..n) as an MCP header value: as it is when it is printable
 * ASCII without leading or trailing blanks, else "=?base64?...?=" (the
 * 2026-07-28 encoding, also used for a plain value that looks encoded). */
void sl_mcp_header_value(const char *s, size_t n, sl_buf *out);

/* A tools/call result shaped as Dify's MCP tool shapes it (docs/tools.md):
 * text content whose trimmed text is a JSON object becomes a json entry,
 * a JSON list of objects one entry each (a list holding anything else is
 * kept as its Python repr, as Dify's str() shows it), other text stays
 * text (messages concatenated, as Dify's tool node does); image and audio
 * content and blob resources become files, text resources text;
 * resource_link and unknown types are dropped; structuredContent becomes
 * variables only when the tool declared an output schema; isError sets
 * res->is_error.  Every byte is charged against ctx's output cap.  -1 with
 * err: SL_ELIMIT past the cap, SL_EIO for a result that is not one (bad
 * base64, an embedded resource of no known kind, a result asking for
 * input sluice cannot give). */
int sl_mcp_result_map(const sl_value *result, bool output_schema, const sl_tool_ctx *ctx,
                      sl_tool_result *res, sl_err *err);

/* Python's repr() of a JSON value (None, True, 'text', [1, 2], {'k': 1}),
 * appended to out. */
void sl_mcp_pyrepr(const sl_value *v, sl_buf *out);

/* Lines of a stdio stream: bytes go in as they arrive; each complete line
 * (without its "\n" or "\r\n"; blank lines skipped) comes out through fn,
 * which returns 0 to go on.  A line longer than cap fails the reader for
 * good (-1). */
typedef struct {
    sl_buf line;
    bool failed;
} sl_mcp_lines;
void sl_mcp_lines_init(sl_mcp_lines *l, size_t cap);
void sl_mcp_lines_release(sl_mcp_lines *l);
int sl_mcp_lines_feed(sl_mcp_lines *l, const char *p, size_t n,
                      int (*fn)(const char *line, size_t len, void *ud), void *ud);

#endif
