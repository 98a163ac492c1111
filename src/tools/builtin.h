/*
 * builtin — the tools sluice runs itself, natively, for the Dify providers
 * public apps use most: time, json_process, webscraper.
 *
 * sl_builtins() is one process-wide set of bindings, made on first use
 * (pthread_once) and never freed.  Each provider is an in-process toolset
 * bound under its legacy id ("time") and its plugin id
 * ("langgenius/time/time"), so a DSL finds it either way; the tool node and
 * agents look here last (nodes/toolcall.c), after the bundle's and the
 * settings' bindings: a user's binding always wins.
 *
 * Each tool keeps the plugin's tool name, parameter names and output (the
 * text Dify's tool yields); its inputSchema comes from the plugin's yaml
 * parameters.  Where Dify answers a failure with text ("Invalid timezone:
 * X"), a built-in fails the call instead (SL_EINVAL), so a failure never
 * reads as a result (docs/tools.md, "Built-in tools").
 *
 * The provider files (builtin_time.c, …) fill an sl_builtin_tool table;
 * builtin.c turns a table into a toolset.  A tool function reads its
 * arguments with the sl_builtin_arg_* helpers (which accept what Dify's
 * parameter conversion accepts) and appends to res; it returns 0, or -1
 * with err.
 */
#ifndef SL_TOOLS_BUILTIN_H
#define SL_TOOLS_BUILTIN_H

#include <stdbool.h>

#include "tools/binding.h"
#include "tools/tool.h"

/* The built-in providers as bindings (borrowed; lives as long as the
 * process). */
const sl_bindings *sl_builtins(void);

/* Whether the binding b offers the DSL's tool `tool` when b is a built-in
 * provider (true for every other kind: their servers say at call time).
 * When it does not, *names is made: the tools it has ("a, b, c"). */
bool sl_builtin_provides(const sl_binding *b, const char *tool, char **names);

/* A provider's configuration, as a call sees it: its credential, the
 * vendor's API root and its other settings.  All borrowed for the call. */
typedef struct {
    const char *provider;      /* "tavily" */
    const char *api_key;       /* NULL: none given */
    const char *base_url;      /* the vendor's API root: the binding's, the
                                  environment's or the vendor's public URL;
                                  NULL for providers with no vendor */
    const sl_value *settings;  /* object: the provider's other settings (never NULL) */
    /* Where the key was to come from, for the error a call without one
     * gives: "set TAVILY_API_KEY …" or "the binding 'x' in …". */
    const char *key_from;
    /* Whether what the binding leaves out may come from the environment
     * (the registry's and sluice.yml's, never a bundle's), for a
     * provider's own variables (sl_builtin_setting). */
    bool from_env;
} sl_builtin_cfg;

typedef int (*sl_builtin_fn)(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                             const sl_value *args, sl_tool_result *res, sl_err *err);

typedef struct {
    const char *name;
    const char *description;
    const char *schema;   /* the inputSchema as JSON text */
    sl_builtin_fn call;
} sl_builtin_tool;

/* A provider: its names, tools and what configures it. */
typedef struct {
    const char *name;            /* the legacy id: "tavily" */
    const char *plugin_id;       /* "langgenius/tavily/tavily" */
    const sl_builtin_tool *tools;
    const size_t *n;
    const char *key_env;         /* the environment variable of its API key, or NULL
                                    when it takes none */
    bool key_required;           /* a call without a key fails (Jina's is optional) */
    const char *url_env;         /* the environment variable of its API root, or NULL */
    const char *default_url;     /* the vendor's public API root, or NULL (a
                                    provider with no default needs one given) */
    const char *const *settings; /* its other settings' names, NULL-terminated, or NULL */
} sl_builtin_provider;

/* The providers, in a table ending with a zeroed entry. */
extern const sl_builtin_provider sl_builtin_providers[];

/* The provider named name (legacy id, plugin id, or a plugin id's last
 * part), or NULL. */
const sl_builtin_provider *sl_builtin_provider_find(const char *name);
/* "time, json_process, …": the providers' names (new string). */
char *sl_builtin_provider_names(void);

/* A toolset over tools[0..n) (static tables) with no configuration;
 * kind "builtin". */
sl_toolset *sl_builtin_toolset(const char *where, const sl_builtin_tool *tools, size_t n);

/* Provider p's toolset configured by a binding: api_key and base_url may
 * be NULL, settings an object or NULL (all copied).  from_env: what the
 * binding leaves out is read from the environment at call time (p's
 * key_env and url_env), as for the registry's own; a bundle's bindings
 * never read it.  `where` names the binding in errors (copied). */
sl_toolset *sl_builtin_provider_toolset(const sl_builtin_provider *p, const char *api_key,
                                        const char *base_url, const sl_value *settings,
                                        bool from_env, const char *where);

/* The providers' tables. */
extern const sl_builtin_tool sl_builtin_time_tools[];
extern const size_t sl_builtin_time_n;
extern const sl_builtin_tool sl_builtin_json_tools[];
extern const size_t sl_builtin_json_n;
extern const sl_builtin_tool sl_builtin_web_tools[];
extern const size_t sl_builtin_web_n;
extern const sl_builtin_tool sl_builtin_tavily_tools[];
extern const size_t sl_builtin_tavily_n;
extern const sl_builtin_tool sl_builtin_jina_tools[];
extern const size_t sl_builtin_jina_n;
extern const char *const sl_builtin_jina_settings[];
extern const sl_builtin_tool sl_builtin_firecrawl_tools[];
extern const size_t sl_builtin_firecrawl_n;
extern const char *const sl_builtin_firecrawl_settings[];
extern const sl_builtin_tool sl_builtin_searxng_tools[];
extern const size_t sl_builtin_searxng_n;
extern const sl_builtin_tool sl_builtin_ddg_tools[];
extern const size_t sl_builtin_ddg_n;
extern const sl_builtin_tool sl_builtin_wikipedia_tools[];
extern const size_t sl_builtin_wikipedia_n;
extern const sl_builtin_tool sl_builtin_arxiv_tools[];
extern const size_t sl_builtin_arxiv_n;

/* ---- arguments ---- */

/* The string argument `name` (a number or boolean as its text), or def
 * when absent or null.  Borrowed from args or def; *tmp holds a made
 * string (free it). */
const char *sl_builtin_arg_str(const sl_value *args, const char *name, const char *def,
                               char **tmp);
/* The boolean argument: true/false, 0/1, "true"/"false" (any case), else def. */
bool sl_builtin_arg_bool(const sl_value *args, const char *name, bool def);
/* The number argument (a number, or text that reads as one): 1 with *out,
 * 0 when absent or null, -1 when it is not a number. */
int sl_builtin_arg_num(const sl_value *args, const char *name, double *out);

/* The provider's setting name as text: the binding's, else the
 * environment variable env when cfg->from_env, else def (borrowed). */
const char *sl_builtin_setting(const sl_builtin_cfg *cfg, const char *name, const char *env,
                               const char *def);

/* 0 when cfg has an API key, else -1 with err saying where to set one. */
int sl_builtin_need_key(const sl_builtin_cfg *cfg, sl_err *err);

/* ---- a vendor's HTTP API ---- */

/* The most of an API's answer read (the http-request node's cap). */
#define SL_BUILTIN_API_MAX ((size_t)10 << 20)

typedef struct {
    const char *vendor;          /* "Tavily": names it in errors */
    const char *method;          /* "GET" or "POST" */
    const char *url;
    const char *const *headers;  /* "Name: value" lines, NULL-terminated, or NULL */
    const char *body;            /* the request body (POST), or NULL */
    size_t body_len;
    size_t max_body;             /* 0: SL_BUILTIN_API_MAX, or the call's output cap
                                    when that is larger */
} sl_builtin_req;

/* Sends rq through net/http with its SSRF guard (this host's and private
 * addresses only with ctx->allow_private, every connection and redirect
 * hop checked; at most 10 hops, 303 and a POST's 301/302 continue as
 * GET, and an Authorization header does not follow a hop to another
 * origin, as with Python's requests), within the call's deadline and cancellation, the answer capped at
 * max_body.  0 with the last answer's *status, its body in body (an
 * initialised buffer) and *ctype (new, or NULL; ctype may be NULL); -1
 * with err naming the vendor when no answer came. */
int sl_builtin_fetch(const sl_tool_ctx *ctx, const sl_builtin_req *rq, long *status,
                     sl_buf *body, char **ctype, sl_err *err);
/* sl_builtin_fetch, and the answer must be a 2xx with a JSON body: *out
 * is the parsed body (new); a failure names the vendor, the status and
 * the vendor's message (the API key's setting for 401 and 403). */
int sl_builtin_fetch_json(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                          const sl_builtin_req *rq, sl_value **out, sl_err *err);
/* The error for an answer with status (not 2xx) and body: the vendor,
 * the status, the vendor's message and what to do (for 401 and 403, the
 * key's setting, unless cfg's provider takes no key).  Returns -1. */
int sl_builtin_status_error(const sl_builtin_cfg *cfg, const char *vendor, long status,
                            const char *body, size_t len, sl_err *err);

/* base (trailing slashes dropped) + path (new string). */
char *sl_builtin_url(const char *base, const char *path);

/* v as Python's str() shows it in an f-string: a string as it is, a
 * float as repr, True/False/None, a list or dict as JSON. */
void sl_builtin_pystr(const sl_value *v, sl_buf *out);

/* Adds v (stolen) to res's json messages, counted against the call's
 * output cap. */
int sl_builtin_json_out(sl_tool_result *res, const sl_tool_ctx *ctx, sl_value *v, sl_err *err);

/* HTML text with its character references decoded (numeric ones and the
 * common named ones; others stay as written), appended to b. */
void sl_builtin_html_decode(const char *s, size_t n, sl_buf *b);

/* What the web and search built-ins' HTML readers see of markup at a '<'. */
typedef struct {
    bool closing;                 /* </name> */
    bool self_closing;            /* <name ... /> */
    const char *name, *attrs;     /* in the text; the name as written */
    size_t name_n, attrs_n;
} sl_html_tag;
/* At p ('<', before end): a comment, <!...> or <?...> is skipped (returns
 * the byte after it, tag->name NULL); a tag is read into *tag, its quoted
 * attribute values passed over (returns the byte after its '>', or end).
 * NULL when the '<' opens nothing: it is text. */
const char *sl_builtin_html_tag(const char *p, const char *end, sl_html_tag *tag);
/* The value of attribute `name` (any case) in a tag's attribute text,
 * references decoded ("" for an attribute with no value), or NULL (new). */
char *sl_builtin_html_attr(const char *a, size_t n, const char *name);

/* Appends text to res, counted against the call's output cap. */
int sl_builtin_text(sl_tool_result *res, const sl_tool_ctx *ctx, const char *s, size_t n,
                    sl_err *err);
/* Cuts the UTF-8 text in b to its first `chars` characters, as Python's
 * s[:chars] on the decoded string. */
void sl_builtin_cut_chars(sl_buf *b, size_t chars);

/* ---- time (builtin_time.c), exposed for tests ---- */

/* t (Unix seconds) in zone tz ("" = the host's /etc/localtime) formatted
 * with a strftime format as Python's datetime.strftime reads it (%Z the
 * zone's abbreviation, %z +HHMM, %:z +HH:MM, %f microseconds from usec). */
int sl_builtin_time_format(long long t, int usec, const char *tz, const char *fmt, sl_buf *out,
                           sl_err *err);
/* A wall-clock time "Y-m-d H:M:S" in zone tz to Unix seconds, as Dify's
 * localize_datetime: an ambiguous time is its later instant, a time in a
 * gap moves forward by the gap. */
int sl_builtin_time_local(const char *local, const char *tz, long long *t, sl_err *err);

/* ---- json_process (builtin_json.c), exposed for tests ---- */

/* v as Python's json.dumps writes it (", " and ": ", ensure_ascii). */
void sl_builtin_py_json(const sl_value *v, bool ensure_ascii, sl_buf *out);

/* ---- vendors, exposed for tests and fuzzing ---- */

/* The plugin's markdown for a Tavily search's (or extract's) JSON answer
 * and the call's args, appended to out. */
void sl_builtin_tavily_text(bool extract, const sl_value *args, const sl_value *answer,
                            sl_buf *out);
/* A vendor's words for a failure from its error body: a message field of
 * JSON ({detail: {error: …}}, message, …), else the start of the text;
 * at most 300 bytes of UTF-8 on one line (new string). */
char *sl_builtin_vendor_message(const char *body, size_t len);
/* Jina's request_params (a JSON object as text) as a query string
 * "?k=v&…" appended to q, as Python's requests encodes a dict. */
int sl_builtin_jina_query(const char *params, sl_buf *q, sl_err *err);

/* ---- webscraper (builtin_web.c), exposed for tests ---- */

/* HTML as readable text: script, style and other invisible parts dropped,
 * entities decoded, whitespace collapsed, a line per block.  *title gets
 * the <title> text (new string) or NULL. */
void sl_builtin_html_text(const char *html, size_t n, sl_buf *out, char **title);

/* ---- the search providers, exposed for tests and fuzzing ---- */

/* Python's repr() of bytes (b'…'), appended to out (searxng's "No results
 * found" text shows the answer so). */
void sl_builtin_py_bytes_repr(const char *s, size_t n, sl_buf *out);

/* One page of DuckDuckGo's HTML results: appends {title, href, body} to
 * results (an array) until it holds max (0: no bound), skipping links in
 * seen (an object, updated).  *next gets the next page's form, urlencoded
 * (new), or NULL.  Returns 1 when the page says there are no results,
 * -1 when it has no result block either (not a page of results), else 0. */
int sl_builtin_ddg_page(const char *html, size_t n, sl_value *results, size_t max,
                        sl_value *seen, char **next);

/* The first max titles of a MediaWiki list=search answer (new array), or
 * NULL with err (the API's error, or an answer that is not one). */
sl_value *sl_builtin_wiki_titles(const sl_value *answer, size_t max, sl_err *err);
/* wikipedia_search's text for the search's titles from a
 * prop=extracts|pageprops answer (out initialised here); -1 with err. */
int sl_builtin_wiki_text(const sl_value *titles, const sl_value *answer, sl_buf *out,
                         sl_err *err);

/* arxiv_search's text for an arXiv API answer (Atom), out initialised
 * here; -1 with err when it is not an Atom feed or a date does not read. */
int sl_builtin_arxiv_text(const char *xml, size_t n, sl_buf *out, sl_err *err);

#endif
