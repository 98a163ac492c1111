/*
 * http_request — Dify's http-request node, on net/http (the one HTTP client).
 * This file is the node (run, load-time checks); http_build.c builds the
 * request, http_response.c sends it and reads the answer, http_text.c
 * holds their text rules (nodes/http_request.h).
 *
 * The node renders its url, params, headers, API key and body (each may
 * hold {{#node.var#}} references), sends one request and publishes
 * status_code, body, headers and files the way Dify does:
 *
 *   - headers and params are "key:value" lines (Python's splitlines, split at
 *     the first colon, both sides stripped; a line without a colon is a key
 *     with an empty value).  Headers are rendered as a whole before they are
 *     split; params are split first and each key and value rendered after.
 *   - a non-2xx status is not a failure unless the node has an error
 *     strategy or retries enabled; then it fails with HTTPResponseCodeError so
 *     the engine can retry it or take the strategy.
 *   - a response is a file (body "", one entry in files) when
 *     Content-Disposition says attachment or names a file, or when its type is
 *     application/image/audio/video and not text-like; text bodies are
 *     decoded with their charset, bad bytes replaced by U+FFFD.
 *   - text responses over http_max_text_bytes and files over
 *     http_max_binary_bytes fail with ResponseSizeError; the download stops
 *     as soon as the larger cap is passed, so a hostile server cannot make us
 *     buffer more than that.
 *
 * Sluice has no file store, so a file this node produces carries its bytes
 * in a "content_base64" field beside Dify's file fields (related_id is
 * null).  Files sent in form-data or binary bodies are read from
 * content_base64, or fetched from their remote_url through the same guarded
 * client.
 *
 * Network policy (Dify delegates it to its ssrf_proxy; sluice enforces it
 * with net/http's guard): only http and https; proxies from the
 * environment are ignored so the guard sees the real peer; every
 * connection, redirects included, is checked on the address it connects
 * to (so a name that resolves differently later, DNS rebinding, gains
 * nothing), and again when a reused connection is picked up.  Special-
 * purpose ranges (loopback, private, link-local, documentation, ...), the
 * IPv6 forms that carry them, and this machine's own interface addresses
 * are refused unless http_allow_private is set (core/netaddr classifies
 * them, shared with the sandbox proxy).  Redirects are followed here rather than by
 * net/http so that httpx's rules apply (303, and POST after 301/302, become
 * GET without a body; Authorization is dropped when the origin changes) and
 * the count obeys http_max_redirects.
 *
 * Timeouts: connect, and read and write as "no bytes moved for N seconds",
 * are net/http's deadlines; its stop callback ends the transfer when the
 * run is cancelled or its time budget runs out.
 *
 * Errors go through sl_exec_fail() with Dify's error type names
 * (InvalidURLError, AuthorizationConfigError, RequestBodyError,
 * FileFetchError, ResponseSizeError, HttpRequestNodeError,
 * HTTPResponseCodeError; ToolSSRFError for refused addresses).
 */
#include "nodes/http_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"

void sl_hr_request_init(request *r, sl_node_exec *x)
{
    memset(r, 0, sizeof *r);
    r->x = x;
    r->lim = sl_exec_limits(x);
    r->etype = "HttpRequestNodeError";
    r->btype = -1;
    size_t cap = r->lim->http_max_binary_bytes;
    sl_buf_init(&r->url, cap);
    sl_buf_init(&r->payload, cap);
}

void sl_hr_request_release(request *r)
{
    sl_buf_release(&r->url);
    free(r->wire_url);
    sl_hr_kv_release(&r->params);
    sl_hr_kv_release(&r->headers);
    sl_hr_kv_release(&r->form);
    sl_buf_release(&r->payload);
    for (size_t i = 0; i < r->nparts; i++) {
        free(r->parts[i].key);
        free(r->parts[i].filename);
        free(r->parts[i].mime);
        sl_buf_release(&r->parts[i].data);
    }
    free(r->parts);
    free(r->auth_header);
}

void sl_hr_response_init(response *o, size_t cap)
{
    memset(o, 0, sizeof *o);
    o->headers = json_object();
    sl_buf_init(&o->body, cap);
}

void sl_hr_response_release(response *o)
{
    json_decref(o->headers);
    sl_buf_release(&o->body);
}


static int run(sl_node_exec *x)
{
    request r;
    sl_hr_request_init(&r, x);
    int rc = sl_hr_build_request(&r);
    if (rc == 0) {
        sl_err e = {0};
        sl_value *log = sl_hr_request_log(&r, &e);
        if (log)
            sl_exec_process(x, "request", log);
        else
            rc = sl_exec_fail(x, "HttpRequestNodeError", "%s", e.msg);
        sl_err_clear(&e);
    }
    if (rc == 0) {
        size_t cap = r.lim->http_max_text_bytes > r.lim->http_max_binary_bytes
                         ? r.lim->http_max_text_bytes
                         : r.lim->http_max_binary_bytes;
        response o;
        sl_hr_response_init(&o, cap);
        rc = sl_hr_perform(&r, &o);
        if (rc == 0)
            rc = sl_hr_publish(&r, &o);
        sl_hr_response_release(&o);
    }
    sl_hr_request_release(&r);
    return rc;
}

/* ---- load-time checks ---- */

static bool numeric_text(const char *s)
{
    char *end;
    if (!s || !*s)
        return false;
    strtod(s, &end);
    while (sl_hr_is_space((unsigned char)*end))
        end++;
    return !*end;
}

static int check_text(sl_check *c, const sl_gnode *n, const sl_value *at, const char *key,
                      const char *field)
{
    const sl_value *v = json_object_get(at, key);
    if (!v || json_is_null(v))
        return 0;
    return sl_check_text_refs(c, n, at, key, field);
}

static int check_auth(sl_check *c, const sl_gnode *n, const sl_value *d)
{
    const sl_value *a = json_object_get(d, "authorization");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_object(a)) {
        sl_check_error(c, n, d, "authorization", "authorization",
                       "must be a mapping {type: no-auth | api-key, config: ...}");
        return -1;
    }
    const char *t = json_string_value(json_object_get(a, "type"));
    if (!t || (strcmp(t, "no-auth") && strcmp(t, "api-key"))) {
        sl_check_error(c, n, a, json_object_get(a, "type") ? "type" : NULL, "authorization.type",
                       "is '%s'; use no-auth or api-key", t ? t : "(missing)");
        return -1;
    }
    if (!strcmp(t, "no-auth"))
        return 0;
    const sl_value *cfg = json_object_get(a, "config");
    if (!json_is_object(cfg)) {
        sl_check_error(c, n, a, cfg ? "config" : NULL, "authorization.config",
                       "is required for api-key authorization: {type: basic | bearer | custom, "
                       "api_key, header}");
        return -1;
    }
    int bad = 0;
    const char *ct = json_string_value(json_object_get(cfg, "type"));
    static const char *const ctypes[] = {"basic", "bearer", "custom", NULL};
    if (sl_hr_index_of(ct, ctypes, false) < 0) {
        sl_check_error(c, n, cfg, json_object_get(cfg, "type") ? "type" : NULL,
                       "authorization.config.type", "is '%s'; use basic, bearer or custom",
                       ct ? ct : "(missing)");
        bad = -1;
    }
    const sl_value *k = json_object_get(cfg, "api_key");
    if (!json_is_string(k)) {
        sl_check_error(c, n, cfg, k ? "api_key" : NULL, "authorization.config.api_key",
                       "is required for api-key authorization; give the key or a {{#env.…#}} "
                       "reference to it");
        bad = -1;
    } else if (sl_check_text_refs(c, n, cfg, "api_key", "authorization.config.api_key") < 0) {
        bad = -1;
    }
    const sl_value *hd = json_object_get(cfg, "header");
    if (hd && !json_is_null(hd) && !json_is_string(hd)) {
        sl_check_error(c, n, cfg, "header", "authorization.config.header",
                       "must be a header name such as X-Api-Key");
        bad = -1;
    }
    return bad;
}

static int check_body(sl_check *c, const sl_gnode *n, const sl_value *d)
{
    const sl_value *b = json_object_get(d, "body");
    if (!b || json_is_null(b))
        return 0;
    if (!json_is_object(b)) {
        sl_check_error(c, n, d, "body", "body", "must be a mapping {type, data}");
        return -1;
    }
    const char *t = json_string_value(json_object_get(b, "type"));
    int bt = sl_hr_index_of(t, sl_hr_body_types, false);
    if (bt < 0) {
        sl_check_error(c, n, b, json_object_get(b, "type") ? "type" : NULL, "body.type",
                       "is '%s'; use none, form-data, x-www-form-urlencoded, raw-text, json or "
                       "binary", t ? t : "(missing)");
        return -1;
    }
    if (bt == B_NONE)
        return 0;
    const sl_value *data = json_object_get(b, "data");
    size_t count = 0;
    int bad = 0;
    if (json_is_string(data)) {
        count = json_string_length(data) ? 1 : 0;
        if (bt == B_BINARY) {
            sl_check_error(c, n, b, "data", "body.data",
                           "a binary body needs an item {type: file, file: [node_id, var]}");
            return -1;
        }
        if (sl_check_text_refs(c, n, b, "data", "body.data") < 0)
            bad = -1;
    } else if (json_is_array(data)) {
        count = json_array_size(data);
        for (size_t i = 0; i < count; i++) {
            const sl_value *it = json_array_get(data, i);
            char f[64];
            snprintf(f, sizeof f, "body.data[%zu]", i);
            if (!json_is_object(it)) {
                sl_check_error(c, n, it, NULL, f, "must be a mapping {key, type, value, file}");
                bad = -1;
                continue;
            }
            const char *it_type = json_string_value(json_object_get(it, "type"));
            if (!it_type || (strcmp(it_type, "text") && strcmp(it_type, "file"))) {
                snprintf(f, sizeof f, "body.data[%zu].type", i);
                sl_check_error(c, n, it, json_object_get(it, "type") ? "type" : NULL, f,
                               "is '%s'; use text or file", it_type ? it_type : "(missing)");
                bad = -1;
                continue;
            }
            snprintf(f, sizeof f, "body.data[%zu].key", i);
            if (check_text(c, n, it, "key", f) < 0)
                bad = -1;
            bool file_item = !strcmp(it_type, "file");
            if (file_item && (bt == B_BINARY || bt == B_FORM_DATA)) {
                snprintf(f, sizeof f, "body.data[%zu].file", i);
                if (sl_check_selector(c, n, it, "file", f, bt == B_BINARY) < 0)
                    bad = -1;
            } else {
                snprintf(f, sizeof f, "body.data[%zu].value", i);
                if (check_text(c, n, it, "value", f) < 0)
                    bad = -1;
            }
        }
    } else if (data && !json_is_null(data)) {
        sl_check_error(c, n, b, "data", "body.data", "must be a list of {key, type, value, file}");
        return -1;
    }
    if ((bt == B_RAW || bt == B_JSON) && count == 0) {
        sl_check_warn(c, n, b, data ? "data" : NULL, "body.data",
                      "a %s body with no item is sent empty, as Dify does; add an item "
                      "{type: text, value: ...} to send something", t);
    } else if ((bt == B_RAW || bt == B_JSON || bt == B_BINARY) && count != 1) {
        sl_check_error(c, n, b, data ? "data" : NULL, "body.data",
                       "a %s body takes exactly one item, found %zu; keep one item %s", t,
                       count, bt == B_BINARY ? "{type: file, file: [node_id, var]}"
                                             : "{type: text, value: ...}");
        bad = -1;
    }
    return bad;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const sl_value *m = json_object_get(d, "method");
    if (sl_hr_index_of(json_string_value(m), sl_hr_methods, true) < 0) {
        sl_check_error(c, n, d, m ? "method" : NULL, "method",
                       "is '%s'; use get, post, put, patch, delete, head or options",
                       json_string_value(m) ? json_string_value(m) : "(missing)");
        bad = -1;
    }
    const sl_value *u = json_object_get(d, "url");
    const char *us = json_string_value(u);
    if (!us || !*us) {
        sl_check_error(c, n, d, u ? "url" : NULL, "url",
                       "is missing or empty; give the address to call, e.g. "
                       "https://api.example.com/items");
        bad = -1;
    } else if (sl_check_text_refs(c, n, d, "url", "url") < 0) {
        bad = -1;
    } else if (!strstr(us, "{{#") && strncmp(us, "http://", 7) && strncmp(us, "https://", 8)) {
        sl_check_error(c, n, d, "url", "url", "'%s' must start with http:// or https://", us);
        bad = -1;
    }
    if (check_text(c, n, d, "headers", "headers") < 0)
        bad = -1;
    if (check_text(c, n, d, "params", "params") < 0)
        bad = -1;
    if (check_auth(c, n, d) < 0)
        bad = -1;
    if (check_body(c, n, d) < 0)
        bad = -1;
    const sl_value *to = json_object_get(d, "timeout");
    if (to && !json_is_null(to) && !json_is_object(to)) {
        sl_check_error(c, n, d, "timeout", "timeout",
                       "must be a mapping {connect, read, write} of seconds");
        bad = -1;
    } else if (json_is_object(to)) {
        static const char *const keys[] = {"connect", "read", "write"};
        for (size_t i = 0; i < 3; i++) {
            const sl_value *v = json_object_get(to, keys[i]);
            bool ok = !v || json_is_null(v) || (json_is_number(v) && json_number_value(v) >= 0) ||
                      (json_is_string(v) && numeric_text(json_string_value(v)) &&
                       strtod(json_string_value(v), NULL) >= 0);
            if (!ok) {
                char f[32];
                snprintf(f, sizeof f, "timeout.%s", keys[i]);
                sl_check_error(c, n, to, keys[i], f,
                               "must be a number of seconds (0 or empty for the default)");
                bad = -1;
            }
        }
    }
    const sl_value *sv = json_object_get(d, "ssl_verify");
    if (sv && !json_is_null(sv) && !json_is_boolean(sv)) {
        sl_check_error(c, n, d, "ssl_verify", "ssl_verify", "must be true or false");
        bad = -1;
    }
    return bad;
}

const sl_node_kind sl_kind_http_request = {.type = "http-request", .check = check, .run = run};
