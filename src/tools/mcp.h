/*
 * mcp — a Model Context Protocol server as an sl_toolset (tools/tool.h):
 * its tools/list and tools/call, over every transport and revision a Dify
 * app may meet (docs/tools.md, "MCP").
 *
 *   HTTP    Streamable HTTP at revision 2026-07-28 (stateless: every
 *           request carries its version and capabilities in _meta and the
 *           MCP-Protocol-Version / Mcp-Method / Mcp-Name headers), falling
 *           back to 2025-11-25 / 06-18 / 03-26 (initialize, Mcp-Session-Id)
 *           and to 2024-11-05's HTTP+SSE transport (GET an event stream,
 *           POST to its `endpoint`).  A URL ending in /mcp is Streamable
 *           HTTP, one ending in /sse the old transport, any other tries
 *           Streamable HTTP then the old one.  What a server speaks is found
 *           on first use and kept for the toolset's life (found again when
 *           the server loses the session or changes its mind).
 *   stdio   a command from the configuration, run inside the caller's
 *           sandbox (ctx->sandbox), newline-delimited JSON-RPC on its
 *           stdin/stdout; one request at a time.
 *
 * A toolset is shared by any number of threads: it keeps a few HTTP
 * handles (connections) and one session, re-initialised when lost.  Every
 * URL passes net/http's SSRF guard; the old transport's endpoint must be
 * on the URL's own origin.  Headers are credentials: they are registered
 * with core/secret (so an echo of one is masked everywhere) and never
 * appear in an error, a log line or where().
 *
 * Errors name the server (its URL without credentials or query, or the
 * command's argv[0]), what failed and what to do.
 */
#ifndef SL_TOOLS_MCP_H
#define SL_TOOLS_MCP_H

#include <stdbool.h>

#include "core/err.h"
#include "tools/tool.h"

typedef struct {
    const char *url;               /* http(s)://...; NULL for a stdio server */
    const char *transport;         /* NULL or "auto", "streamable", "sse" */
    const char *const *headers;    /* NULL-terminated "Name: value" lines (credentials) */
    const char *const *command;    /* stdio: NULL-terminated argv, run in ctx->sandbox */
    const char *const *env;        /* stdio: extra NULL-terminated "KEY=VALUE" */
    bool allow_private;            /* the URL may reach loopback and private addresses */
    double connect_s;              /* connection (and handshake) deadline; 0: 10 s */
    const char *client_name;       /* clientInfo.name; NULL: "sluice" */
    bool untrusted;                /* the URL and headers are data (a DSL's, a bundle's): their
                                      parts are not registered as secrets, which would let them
                                      mask any words in every run */
} sl_mcp_opts;

/* A toolset for the server o describes; nothing is contacted until the
 * first list or call.  Copies everything it keeps.  NULL with err
 * (SL_EINVAL) for options that cannot work: neither or both of url and
 * command, a URL that is not http(s), an unknown transport, a header
 * that is not "Name: value". */
sl_toolset *sl_mcp_new(const sl_mcp_opts *o, sl_err *err);

/* What the toolset settled on, for `sluice tools` and tests: the protocol
 * version ("2026-07-28", ...) and transport ("streamable", "sse",
 * "stdio"), or NULL before the first exchange.  Static strings. */
const char *sl_mcp_version(sl_toolset *t);
const char *sl_mcp_transport(sl_toolset *t);

#endif
