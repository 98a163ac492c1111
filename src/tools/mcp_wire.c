/*
 * mcp_wire — see mcp_wire.h.
 */
#include "tools/mcp_wire.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const sl_mcp_versions[] = {SL_MCP_MODERN, "2025-11-25", "2025-06-18", "2025-03-26",
                                       "2024-11-05", NULL};

const char *sl_mcp_version_known(const char *v)
{
    for (size_t i = 0; v && sl_mcp_versions[i]; i++)
        if (!strcmp(v, sl_mcp_versions[i]))
            return sl_mcp_versions[i];
    return NULL;
}

/* ---- one message ---- */

static bool id_ok(const sl_value *id)
{
    return json_is_string(id) || json_is_integer(id);
}

static void invalid(sl_mcp_msg *m, const char *why)
{
    json_decref(m->msg);
    memset(m, 0, sizeof *m);
    m->kind = SL_MCP_INVALID;
    snprintf(m->why, sizeof m->why, "%s", why);
}

void sl_mcp_msg_read(const char *text, size_t len, sl_mcp_msg *m)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    sl_value *v = json_loadb(text ? text : "", len, JSON_DECODE_ANY, &je);
    if (!v) {
        char why[240];
        snprintf(why, sizeof why, "not JSON (%.100s at byte %d)", je.text, je.position);
        invalid(m, why);
        return;
    }
    m->msg = v;
    if (json_is_array(v))
        return invalid(m, "a JSON-RPC batch, which MCP does not use");
    if (!json_is_object(v))
        return invalid(m, "a JSON value that is not an object");
    const sl_value *rpc = json_object_get(v, "jsonrpc");
    if (rpc && !(json_is_string(rpc) && !strcmp(json_string_value(rpc), "2.0")))
        return invalid(m, "\"jsonrpc\" is not \"2.0\"");
    const sl_value *id = json_object_get(v, "id");
    const sl_value *method = json_object_get(v, "method");
    const sl_value *params = json_object_get(v, "params");
    if (method) {
        if (!json_is_string(method) || !json_string_length(method))
            return invalid(m, "\"method\" is not a name");
        if (params && !json_is_object(params) && !json_is_array(params))
            return invalid(m, "\"params\" is neither an object nor an array");
        m->method = json_string_value(method);
        m->params = params;
        if (!id) {
            m->kind = SL_MCP_NOTIFICATION;
            return;
        }
        if (!id_ok(id))
            return invalid(m, "a request whose id is neither a string nor an integer");
        m->kind = SL_MCP_REQUEST;
        m->id = id;
        return;
    }
    const sl_value *result = json_object_get(v, "result");
    const sl_value *error = json_object_get(v, "error");
    if (!result && !error)
        return invalid(m, "neither a request, a notification nor a response");
    if (result && error)
        return invalid(m, "a response with both a result and an error");
    if (!id || !(id_ok(id) || (error && json_is_null(id))))
        return invalid(m, "a response without a usable id");
    if (result && !json_is_object(result))
        return invalid(m, "a result that is not an object");
    if (error && !(json_is_object(error) && json_is_integer(json_object_get(error, "code"))))
        return invalid(m, "an error without an integer code");
    m->kind = SL_MCP_RESPONSE;
    m->id = id;
    m->result = result;
    m->error = error;
}

void sl_mcp_msg_release(sl_mcp_msg *m)
{
    json_decref(m->msg);
    memset(m, 0, sizeof *m);
}

bool sl_mcp_id_is(const sl_value *id, long long want)
{
    return json_is_integer(id) && json_integer_value(id) == want;
}

/* ---- errors ---- */

/* Case-insensitive substring search. */
static bool has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; s && *s; s++)
        if (!strncasecmp(s, w, n))
            return true;
    return false;
}

int sl_mcp_error(const sl_value *error, const char *where, const char *what, sl_err *err)
{
    long long code = json_integer_value(json_object_get(error, "code"));
    const char *msg = json_string_value(json_object_get(error, "message"));
    char shown[SL_MCP_MAX_SHOWN];
    sl_excerpt(msg && *msg ? msg : "no message", shown, sizeof shown);
    sl_errcode ec = SL_EIO;
    const char *hint = "; check the server's log";
    if (code == -32602 || code == -32601) {
        bool unknown = msg && (has_word(msg, "unknown tool") || has_word(msg, "tool not found") ||
                               has_word(msg, "no such tool") ||
                               (has_word(msg, "tool") && has_word(msg, "not found")));
        if (unknown) {
            ec = SL_ENOTFOUND;
            hint = "; list the server's tools for the names it has";
        } else if (code == -32602) {
            ec = SL_EINVAL;
            hint = "; check the arguments against the tool's input schema";
        } else {
            ec = SL_EUNSUPPORTED;
            hint = "; the server does not implement it";
        }
    } else if (code == -32022) {
        ec = SL_EUNSUPPORTED;
        hint = "; the server speaks no MCP version sluice knows";
    }
    return sl_err_set(err, ec, "MCP server %s: %s failed: %s (JSON-RPC error %lld)%s", where, what,
                      shown, code, hint);
}

bool sl_mcp_error_is_modern(const sl_value *error, const char **pick)
{
    if (pick)
        *pick = NULL;
    long long code = json_integer_value(json_object_get(error, "code"));
    if (code < -32022 || code > -32020)
        return false;
    if (code == -32022 && pick) {
        const sl_value *data = json_object_get(error, "data");
        *pick = sl_mcp_pick_version(json_object_get(data, "supported"));
    }
    return true;
}

const char *sl_mcp_pick_version(const sl_value *versions)
{
    for (size_t k = 0; sl_mcp_versions[k]; k++)
        for (size_t i = 0; i < json_array_size(versions); i++) {
            const char *v = json_string_value(json_array_get(versions, i));
            if (v && !strcmp(v, sl_mcp_versions[k]))
                return sl_mcp_versions[k];
        }
    return NULL;
}

/* ---- tools/list ---- */

/* A name fit to keep: valid UTF-8, no control characters, capped. */
static bool name_ok(const sl_value *v)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (!s || !n || n > SL_MCP_MAX_NAME || !sl_utf8_valid(s, n))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

/* s cut to at most cap bytes, never inside a UTF-8 sequence. */
static sl_value *capped_string(const char *s, size_t n, size_t cap)
{
    if (n > cap) {
        n = cap;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    return json_stringn(s, n);
}

int sl_mcp_tools_page(const sl_value *result, sl_value *tools, size_t max, const char **cursor,
                      size_t *skipped, sl_err *err)
{
    *cursor = NULL;
    const sl_value *list = json_object_get(result, "tools");
    if (!json_is_array(list))
        return sl_err_set(err, SL_EIO, "the tools/list answer has no \"tools\" array");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *t = json_array_get(list, i);
        const sl_value *name = json_object_get(t, "name");
        const sl_value *desc = json_object_get(t, "description");
        const sl_value *in = json_object_get(t, "inputSchema");
        const sl_value *out = json_object_get(t, "outputSchema");
        bool ok = json_is_object(t) && name_ok(name) && (!desc || json_is_string(desc) ||
                                                         json_is_null(desc)) &&
                  (!in || json_is_object(in)) && (!out || json_is_object(out) || json_is_null(out)) &&
                  sl_value_size(in, SL_MCP_MAX_SCHEMA) <= SL_MCP_MAX_SCHEMA &&
                  sl_value_size(out, SL_MCP_MAX_SCHEMA) <= SL_MCP_MAX_SCHEMA;
        for (size_t k = 0; ok && k < json_array_size(tools); k++)
            if (json_equal(json_object_get(json_array_get(tools, k), "name"), name))
                ok = false;  /* a second tool of one name: the first one stands */
        if (!ok) {
            if (skipped)
                (*skipped)++;
            continue;
        }
        if (json_array_size(tools) >= max)
            return sl_err_limit(err, SL_ELIMIT, NULL,
                                "the server lists more than %zu tools, more than sluice keeps "
                                "from one server",
                                max);
        sl_value *o = json_object();
        json_object_set_new(o, "name", json_copy((sl_value *)name));
        json_object_set_new(o, "description",
                            json_is_string(desc) ? capped_string(json_string_value(desc),
                                                                 json_string_length(desc),
                                                                 SL_MCP_MAX_DESC)
                                                 : json_string(""));
        json_object_set_new(o, "inputSchema",
                            in ? sl_value_deep_copy(in)
                               : json_pack("{s:s, s:{}}", "type", "object", "properties"));
        if (json_is_object(out))
            json_object_set_new(o, "outputSchema", sl_value_deep_copy(out));
        json_array_append_new(tools, o);
    }
    const sl_value *next = json_object_get(result, "nextCursor");
    if (json_is_string(next) && json_string_length(next)) {
        if (json_string_length(next) > 4096)
            return sl_err_set(err, SL_EIO, "the tools/list answer has a nextCursor of %zu bytes",
                              json_string_length(next));
        *cursor = json_string_value(next);
    }
    return 0;
}

/* ---- x-mcp-header ---- */

static bool tchar(int c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

typedef struct {
    sl_value *out;
    char *why;
    size_t n;
    size_t found;
} hdr_walk;

/* Annotated properties reached through `properties` chains only. */
static int walk_props(const sl_value *schema, sl_value *path, hdr_walk *w, int depth)
{
    const sl_value *props = json_object_get(schema, "properties");
    if (!json_is_object(props) || depth > 32)
        return 0;
    const char *k;
    const sl_value *p;
    json_object_foreach((sl_value *)props, k, p) {
        if (!json_is_object(p))
            continue;
        sl_value *sub = json_copy(path);
        json_array_append_new(sub, json_string(k));
        const sl_value *h = json_object_get(p, "x-mcp-header");
        if (h) {
            const char *hs = json_string_value(h);
            size_t hn = json_string_length(h);
            bool ok = hs && hn && hn <= 128;
            for (size_t i = 0; ok && i < hn; i++)
                ok = tchar((unsigned char)hs[i]);
            const char *type = json_string_value(json_object_get(p, "type"));
            if (!ok) {
                snprintf(w->why, w->n, "property '%s' has an x-mcp-header that is not a header name",
                         k);
            } else if (!type || (strcmp(type, "string") && strcmp(type, "integer") &&
                                 strcmp(type, "boolean"))) {
                ok = false;
                snprintf(w->why, w->n,
                         "property '%s' has an x-mcp-header but is not a string, integer or "
                         "boolean",
                         k);
            }
            for (size_t i = 0; ok && i < json_array_size(w->out); i++)
                if (!strcasecmp(json_string_value(json_object_get(json_array_get(w->out, i),
                                                                  "header")),
                                hs)) {
                    ok = false;
                    snprintf(w->why, w->n, "two properties share the x-mcp-header '%s'", hs);
                }
            if (!ok) {
                json_decref(sub);
                return -1;
            }
            json_array_append_new(w->out, json_pack("{s:O, s:s}", "path", sub, "header", hs));
            w->found++;
        }
        int rc = walk_props(p, sub, w, depth + 1);
        json_decref(sub);
        if (rc)
            return rc;
    }
    return 0;
}

/* Every x-mcp-header keyword anywhere in the schema (keys of `properties`
 * are names, not keywords; data keywords hold no schemas). */
static size_t count_all(const sl_value *v, int depth)
{
    size_t n = 0;
    if (depth > 64)
        return 1000000;  /* deeper than any sane schema: refuse it */
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            n += count_all(json_array_get(v, i), depth + 1);
        return n;
    }
    if (!json_is_object(v))
        return 0;
    const char *k;
    const sl_value *x;
    json_object_foreach((sl_value *)v, k, x) {
        if (!strcmp(k, "x-mcp-header"))
            n++;
        else if (!strcmp(k, "const") || !strcmp(k, "default") || !strcmp(k, "examples") ||
                 !strcmp(k, "enum"))
            continue;
        else if (!strcmp(k, "properties") && json_is_object(x)) {
            const char *pk;
            const sl_value *pv;
            json_object_foreach((sl_value *)x, pk, pv)
                n += count_all(pv, depth + 1);
        } else
            n += count_all(x, depth + 1);
    }
    return n;
}

sl_value *sl_mcp_param_headers(const sl_value *input_schema, char *why, size_t n)
{
    hdr_walk w = {json_array(), why, n, 0};
    sl_value *root = json_array();
    int rc = walk_props(input_schema, root, &w, 0);
    json_decref(root);
    if (!rc && count_all(input_schema, 0) != w.found) {
        snprintf(why, n, "an x-mcp-header sits outside a chain of properties");
        rc = -1;
    }
    if (rc) {
        json_decref(w.out);
        return NULL;
    }
    return w.out;
}

bool sl_mcp_param_value(const sl_value *args, const sl_value *path, sl_buf *out)
{
    const sl_value *v = args;
    for (size_t i = 0; v && i < json_array_size(path); i++)
        v = json_object_get(v, json_string_value(json_array_get(path, i)));
    if (json_is_string(v))
        return sl_buf_add(out, json_string_value(v), json_string_length(v)) == 0;
    if (json_is_integer(v))
        return sl_buf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)) == 0;
    if (json_is_boolean(v))
        return sl_buf_adds(out, json_is_true(v) ? "true" : "false") == 0;
    return false;
}

void sl_mcp_header_value(const char *s, size_t n, sl_buf *out)
{
    bool plain = n > 0 && s[0] != ' ' && s[n - 1] != ' ';
    for (size_t i = 0; plain && i < n; i++)
        plain = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f;
    if (plain && n >= 11 && !strncmp(s, "=?base64?", 9) && !strncmp(s + n - 2, "?=", 2))
        plain = false;
    if (plain) {
        sl_buf_add(out, s, n);
        return;
    }
    sl_buf_adds(out, "=?base64?");
    sl_base64_encode((const unsigned char *)s, n, out);
    sl_buf_adds(out, "?=");
}

/* ---- arguments ---- */

/* The length of the Python whitespace character (str.isspace) at p, or 0. */
static size_t space_at(const unsigned char *p, size_t n)
{
    if (n >= 1 && ((p[0] >= 0x09 && p[0] <= 0x0d) || (p[0] >= 0x1c && p[0] <= 0x20)))
        return 1;
    if (n >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0))
        return 2;
    if (n >= 3) {
        unsigned c = (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
        if (c == 0xE19A80 || (c >= 0xE28080 && c <= 0xE2808A) || c == 0xE280A8 ||
            c == 0xE280A9 || c == 0xE280AF || c == 0xE2819F || c == 0xE38080)
            return 3;
    }
    return 0;
}

/* s[*b..*e) without Python's leading and trailing whitespace. */
static void py_strip(const char *s, size_t n, size_t *b, size_t *e)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, k;
    while (i < n && (k = space_at(p + i, n - i)))
        i += k;
    size_t j = n;
    while (j > i) {
        size_t back = 0;
        for (size_t w = 1; w <= 3 && w <= j - i && !back; w++)
            if (space_at(p + j - w, w) == w)
                back = w;
        if (!back)
            break;
        j -= back;
    }
    *b = i;
    *e = j;
}

/* Whether the argument v is one Dify drops. */
static bool dropped(const sl_value *v)
{
    if (json_is_null(v))
        return true;
    if (!json_is_string(v))
        return false;
    size_t b, e;
    py_strip(json_string_value(v), json_string_length(v), &b, &e);
    return b == e;
}

sl_value *sl_mcp_clean_args(const sl_value *args)
{
    const char *k;
    const sl_value *v;
    bool clean = json_is_object(args);
    json_object_foreach((sl_value *)args, k, v) {
        if (dropped(v)) {
            clean = false;
            break;
        }
    }
    if (clean)
        return json_incref((sl_value *)args);  /* nothing to drop (the common case) */
    sl_value *out = json_object();
    json_object_foreach((sl_value *)args, k, v) {
        if (!dropped(v))
            json_object_set(out, k, (sl_value *)v);
    }
    return out;
}

/* ---- Python repr ---- */

static void repr_string(const char *s, size_t n, sl_buf *out)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    sl_buf_addc(out, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q) {
            sl_buf_addc(out, '\\');
            sl_buf_addc(out, (char)c);
        } else if (c == '\n') {
            sl_buf_adds(out, "\\n");
        } else if (c == '\r') {
            sl_buf_adds(out, "\\r");
        } else if (c == '\t') {
            sl_buf_adds(out, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            sl_buf_addf(out, "\\x%02x", c);
        } else if (c == 0xC2 && i + 1 < n &&
                   (((unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0xA0) ||
                    (unsigned char)s[i + 1] == 0xAD)) {
            /* C1 controls, no-break space and soft hyphen: not printable */
            sl_buf_addf(out, "\\x%02x", (unsigned char)s[i + 1]);
            i++;
        } else if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            sl_buf_addf(out, "\\u%04x", 0x2000 + ((unsigned char)s[i + 2] - 0x80));
            i += 2;
        } else {
            sl_buf_addc(out, (char)c);
        }
    }
    sl_buf_addc(out, q);
}

void sl_mcp_pyrepr(const sl_value *v, sl_buf *out)
{
    switch (json_typeof(v)) {
    case JSON_NULL: sl_buf_adds(out, "None"); break;
    case JSON_TRUE: sl_buf_adds(out, "True"); break;
    case JSON_FALSE: sl_buf_adds(out, "False"); break;
    case JSON_INTEGER: sl_buf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: {
        char d[32];
        sl_fmt_double(json_real_value(v), d);
        sl_buf_adds(out, d);
        break;
    }
    case JSON_STRING: repr_string(json_string_value(v), json_string_length(v), out); break;
    case JSON_ARRAY:
        sl_buf_addc(out, '[');
        for (size_t i = 0; i < json_array_size(v) && !out->toobig; i++) {
            if (i)
                sl_buf_adds(out, ", ");
            sl_mcp_pyrepr(json_array_get(v, i), out);
        }
        sl_buf_addc(out, ']');
        break;
    case JSON_OBJECT: {
        sl_buf_addc(out, '{');
        const char *k;
        const sl_value *x;
        bool first = true;
        json_object_foreach((sl_value *)v, k, x) {
            if (out->toobig)
                break;
            if (!first)
                sl_buf_adds(out, ", ");
            first = false;
            repr_string(k, strlen(k), out);
            sl_buf_adds(out, ": ");
            sl_mcp_pyrepr(x, out);
        }
        sl_buf_addc(out, '}');
        break;
    }
    }
}

/* ---- tools/call results ---- */

/* A MIME type fit to keep (type/subtype of token characters), else NULL. */
static const char *mime_ok(const sl_value *v)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v), slash = 0;
    if (!s || !n || n > 127)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && !slash && i > 0)
            slash = i;
        else if (s[i] == ';' && slash)
            break;  /* parameters (charset=...) are fine */
        else if (!tchar((unsigned char)s[i]) && !(slash && (s[i] == ' ' || s[i] == '=' ||
                                                             s[i] == '"')))
            return NULL;
    }
    return slash && slash + 1 < n ? s : NULL;
}

/* The last segment of a resource's URI, for a file's name ("" when none). */
static char *uri_name(const sl_value *uri)
{
    const char *s = json_string_value(uri);
    if (!s)
        return sl_xstrdup("");
    size_t end = strcspn(s, "?#");
    size_t b = end;
    while (b > 0 && s[b - 1] != '/' && s[b - 1] != ':')
        b--;
    size_t n = end - b;
    if (n > 128)
        n = 128;
    char *out = sl_xstrndup(s + b, n);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
            *p = '_';
    if (!sl_utf8_valid(out, strlen(out)))
        out[0] = 0;
    return out;
}

static int add_text(sl_tool_result *res, const sl_tool_ctx *ctx, const char *s, size_t n,
                    sl_err *err)
{
    if (sl_tool_result_charge(res, ctx, n, err))
        return -1;
    sl_buf_add(&res->text, s, n);
    return 0;
}

static int add_json(sl_tool_result *res, const sl_tool_ctx *ctx, const sl_value *v, sl_err *err)
{
    if (sl_tool_result_charge(res, ctx, sl_value_size(v, sl_tool_max_output(ctx)), err))
        return -1;
    json_array_append(res->json, (sl_value *)v);
    return 0;
}

/* Text content, as Dify's _process_text_content reads it. */
static int map_text(const sl_value *text, sl_tool_result *res, const sl_tool_ctx *ctx,
                    sl_err *err)
{
    const char *s = json_string_value(text);
    size_t n = json_string_length(text), b, e;
    py_strip(s, n, &b, &e);
    if (e > b && (s[b] == '{' || s[b] == '[') && (s[e - 1] == '}' || s[e - 1] == ']')) {
        json_error_t je;
        sl_value *j = json_loadb(s + b, e - b, 0, &je);
        if (json_is_object(j)) {
            int rc = add_json(res, ctx, j, err);
            json_decref(j);
            return rc;
        }
        if (json_is_array(j)) {
            bool all = true;
            for (size_t i = 0; all && i < json_array_size(j); i++)
                all = json_is_object(json_array_get(j, i));
            int rc = 0;
            if (all) {
                for (size_t i = 0; !rc && i < json_array_size(j); i++)
                    rc = add_json(res, ctx, json_array_get(j, i), err);
            } else {
                sl_buf r;
                sl_buf_init(&r, sl_tool_max_output(ctx) + 1);
                sl_mcp_pyrepr(j, &r);
                rc = r.toobig ? sl_tool_result_charge(res, ctx, r.cap, err)
                              : add_text(res, ctx, r.data, r.len, err);
                sl_buf_release(&r);
            }
            json_decref(j);
            return rc;
        }
        json_decref(j);
    }
    return add_text(res, ctx, s, n, err);
}

/* Base64 content (image, audio, a blob resource) as a file. */
static int map_blob(const sl_value *data, const sl_value *mime, const char *name,
                    sl_tool_result *res, const sl_tool_ctx *ctx, const char *kind, sl_err *err)
{
    if (!json_is_string(data))
        return sl_err_set(err, SL_EIO, "the tool's %s content has no base64 data", kind);
    size_t cap = sl_tool_max_output(ctx);
    size_t room = cap > res->bytes ? cap - res->bytes : 0;
    sl_buf b;
    sl_buf_init(&b, room + 1);
    int rc = sl_base64_decode(json_string_value(data), json_string_length(data), &b);
    if (rc && b.toobig)
        rc = sl_tool_result_charge(res, ctx, room + 1, err);
    else if (rc)
        rc = sl_err_set(err, SL_EIO, "the tool's %s content is not valid base64", kind);
    else if (!(rc = sl_tool_result_charge(res, ctx, b.len, err))) {
        const char *m = mime_ok(mime);
        sl_tool_result_file(res, name, m ? m : "application/octet-stream", b.data ? b.data : "",
                            b.len);
    }
    sl_buf_release(&b);
    return rc;
}

int sl_mcp_result_map(const sl_value *result, bool output_schema, const sl_tool_ctx *ctx,
                      sl_tool_result *res, sl_err *err)
{
    const char *rtype = json_string_value(json_object_get(result, "resultType"));
    if (rtype && !strcmp(rtype, "input_required"))
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "the tool asked for input (elicitation, sampling or roots) during the "
                          "call, which sluice cannot give; call a tool that needs none");
    if (rtype && strcmp(rtype, "complete")) {
        char shown[64];
        sl_excerpt(rtype, shown, sizeof shown);
        return sl_err_set(err, SL_EIO, "the tool's result is of an unknown kind ('%s')", shown);
    }
    const sl_value *content = json_object_get(result, "content");
    if (content && !json_is_array(content) && !json_is_null(content))
        return sl_err_set(err, SL_EIO, "the tool's result has a \"content\" that is not a list");
    res->is_error = json_is_true(json_object_get(result, "isError"));
    for (size_t i = 0; i < json_array_size(content); i++) {
        const sl_value *c = json_array_get(content, i);
        const char *type = json_string_value(json_object_get(c, "type"));
        int rc = 0;
        if (!type) {
            continue;
        } else if (!strcmp(type, "text")) {
            const sl_value *t = json_object_get(c, "text");
            if (!json_is_string(t))
                return sl_err_set(err, SL_EIO, "the tool's text content has no text");
            rc = map_text(t, res, ctx, err);
        } else if (!strcmp(type, "image") || !strcmp(type, "audio")) {
            rc = map_blob(json_object_get(c, "data"), json_object_get(c, "mimeType"), "", res, ctx,
                          type, err);
        } else if (!strcmp(type, "resource")) {
            const sl_value *r = json_object_get(c, "resource");
            const sl_value *t = json_object_get(r, "text"), *b = json_object_get(r, "blob");
            if (json_is_string(t)) {
                rc = add_text(res, ctx, json_string_value(t), json_string_length(t), err);
            } else if (json_is_string(b)) {
                char *name = uri_name(json_object_get(r, "uri"));
                rc = map_blob(b, json_object_get(r, "mimeType"), name, res, ctx, "resource", err);
                free(name);
            } else {
                return sl_err_set(err, SL_EIO,
                                  "the tool returned an embedded resource with neither text nor "
                                  "a blob");
            }
        }
        /* resource_link and kinds sluice does not know: dropped, as Dify does */
        if (rc)
            return -1;
    }
    const sl_value *sc = json_object_get(result, "structuredContent");
    if (output_schema && json_is_object(sc) && json_object_size(sc)) {
        const char *k;
        const sl_value *v;
        json_object_foreach((sl_value *)sc, k, v) {
            if (sl_tool_result_charge(res, ctx, strlen(k) + sl_value_size(v, sl_tool_max_output(ctx)),
                                      err))
                return -1;
            json_object_set(res->variables, k, (sl_value *)v);
        }
    }
    return 0;
}

/* ---- stdio lines ---- */

void sl_mcp_lines_init(sl_mcp_lines *l, size_t cap)
{
    sl_buf_init(&l->line, cap);
    l->failed = false;
}

void sl_mcp_lines_release(sl_mcp_lines *l)
{
    sl_buf_release(&l->line);
}

int sl_mcp_lines_feed(sl_mcp_lines *l, const char *p, size_t n,
                      int (*fn)(const char *line, size_t len, void *ud), void *ud)
{
    if (l->failed)
        return -1;
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (sl_buf_add(&l->line, p, take)) {
            l->failed = true;
            return -1;
        }
        if (!nl)
            return 0;
        p += take + 1;
        n -= take + 1;
        size_t len = l->line.len;
        if (len && l->line.data[len - 1] == '\r')
            len--;
        int rc = 0;
        if (len)
            rc = fn(l->line.data, len, ud);
        sl_buf_reset(&l->line);
        if (rc)
            return rc;
    }
    return 0;
}
