/*
 * http_build — the http-request node's request, built from its data in
 * the order Dify's Executor does, and the request text Dify logs for it.
 */
#include "nodes/http_request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/rand.h"
#include "engine/pool.h"
#include "net/url.h"

const char *const sl_hr_body_types[] = {"none", "form-data", "x-www-form-urlencoded",
                                       "raw-text", "json", "binary", NULL};
const char *const sl_hr_methods[] = {"get", "post", "put", "patch", "delete", "head",
                                    "options", NULL};
/* Content-Type Dify adds for a body type when the user gave none. */
static const char *const body_ctype[] = {NULL, "multipart/form-data",
                                         "application/x-www-form-urlencoded", "text/plain",
                                         "application/json", NULL};

/* ---- building the request from the node's data ---- */

static int render(request *r, const char *what, const char *text, sl_buf *out)
{
    if (sl_exec_render(r->x, text ? text : "", out) < 0)
        return sl_exec_fail(r->x, "HttpRequestNodeError",
                            "%s is larger than %zu bytes once its {{#…#}} references are filled "
                            "in; raise http_max_binary_bytes (--limit http_max_binary_bytes=N) "
                            "or send less", what, r->lim->http_max_binary_bytes);
    return 0;
}

static bool header_name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return false;
    return true;
}

/* The bytes of a file value: content_base64 (files this node made), or a
 * download of its remote_url through the guarded client. */
static int file_bytes(request *r, const sl_value *f, sl_buf *out)
{
    const char *name = json_string_value(json_object_get(f, "filename"));
    const char *remote = json_string_value(json_object_get(f, "remote_url"));
    if (!remote || !*remote)
        remote = json_string_value(json_object_get(f, "url"));
    size_t cap = r->lim->http_max_binary_bytes;
    sl_err e = {0};
    int got = sl_exec_file_bytes(r->x, f, cap, out, &e);
    if (got <= 0) {
        if (got < 0)
            sl_exec_fail(r->x, "FileFetchError", "file '%s' cannot be sent: %s (limit "
                         "http_max_binary_bytes=%zu)", name ? name : "?", e.msg, cap);
        sl_err_clear(&e);
        return got;
    }
    if (remote && (!strncmp(remote, "http://", 7) || !strncmp(remote, "https://", 8))) {
        sl_hr_fetch fetch = {r->x, "FileFetchError", "http_max_binary_bytes", "", cap,
                             r->connect_s, r->read_s, r->write_s, r->ssl_verify, NULL, 0};
        return sl_hr_fetch_file(&fetch, remote, name, out);
    }
    return sl_exec_fail(r->x, "FileFetchError",
                        "file '%s' has no content sluice can read: a file must carry its bytes "
                        "in content_base64 (as files from http-request nodes do) or have an "
                        "http(s) remote_url", name ? name : "?");
}

static void add_part(request *r, const char *key, const sl_value *f, sl_buf *data)
{
    r->parts = sl_xrealloc(r->parts, (r->nparts + 1) * sizeof *r->parts);
    part *p = &r->parts[r->nparts++];
    const char *fn = json_string_value(json_object_get(f, "filename"));
    const char *mt = json_string_value(json_object_get(f, "mime_type"));
    p->key = sl_xstrdup(key);
    p->filename = sl_xstrdup(fn ? fn : "");
    /* a file value's mime_type is data: one with a control character
     * (CR/LF would add part headers) is sent as octet-stream */
    for (const char *c = mt; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            mt = NULL;
            break;
        }
    p->mime = sl_xstrdup(mt && *mt ? mt : "application/octet-stream");
    p->data = *data;
    sl_buf_init(data, r->lim->http_max_binary_bytes);
}

/* Lines "key:value" of an old DSL's string body data, which Dify 0.6
 * parsed as form fields. */
static int legacy_form_lines(request *r, const char *text, kvlist *into)
{
    const char *pos = text, *end = text + strlen(text), *line;
    size_t len;
    while (sl_hr_next_line(&pos, end, &line, &len)) {
        sl_hr_strip(&line, &len);
        if (!len)
            continue;
        const char *colon = memchr(line, ':', len);
        const char *k = line, *v = colon ? colon + 1 : line + len;
        size_t kn = colon ? (size_t)(colon - line) : len, vn = colon ? len - kn - 1 : 0;
        sl_hr_strip(&k, &kn);
        sl_hr_strip(&v, &vn);
        char *kt = sl_xstrndup(k, kn), *vt = sl_xstrndup(v, vn);
        sl_buf kb, vb;
        sl_buf_init(&kb, r->lim->http_max_binary_bytes);
        sl_buf_init(&vb, r->lim->http_max_binary_bytes);
        int rc = render(r, "a body field", kt, &kb);
        if (rc == 0)
            rc = render(r, "a body field", vt, &vb);
        if (rc == 0)
            sl_hr_kv_put(into, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "", vb.len);
        free(kt);
        free(vt);
        sl_buf_release(&kb);
        sl_buf_release(&vb);
        if (rc)
            return rc;
    }
    return 0;
}

/* Removes trailing commas and escapes raw control characters inside
 * strings: the two slips a rendered template makes most (a multi-line
 * variable pasted into "…", a list built with a comma too many), which
 * Dify's json_repair and json.loads(strict=False) accept. */
static void json_relax(const char *s, size_t n, sl_buf *out)
{
    bool in_str = false, esc = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            else if (c < 0x20) {
                static const char *const named[] = {[8] = "\\b", [9] = "\\t", [10] = "\\n",
                                                    [12] = "\\f", [13] = "\\r"};
                if (c < sizeof named / sizeof named[0] && named[c])
                    sl_buf_adds(out, named[c]);
                else
                    sl_buf_addf(out, "\\u%04x", c);
                continue;
            }
            sl_buf_addc(out, (char)c);
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == ',') {
            size_t j = i + 1;
            while (j < n && sl_hr_is_space((unsigned char)s[j]))
                j++;
            if (j < n && (s[j] == '}' || s[j] == ']'))
                continue;
        }
        sl_buf_addc(out, (char)c);
    }
}

/* Parses the rendered JSON body into the payload, written as httpx sends
 * json=; JSON null sends no body, as json=None does. */
static int build_json(request *r, const char *text, size_t n)
{
    sl_buf fixed;
    sl_buf_init(&fixed, n * 6 + 16); /* a control character grows to \u00XX */
    json_relax(text, n, &fixed);
    json_error_t jerr;
    sl_value *v = json_loadb(fixed.data ? fixed.data : "", fixed.len,
                             JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    sl_buf_release(&fixed);
    if (!v) {
        return sl_exec_fail(r->x, "RequestBodyError",
                            "Failed to parse JSON: %.*s%s (%s at line %d, column %d); fix the "
                            "JSON in the node's body",
                            (int)(n > QUOTE_MAX ? sl_hr_utf8_cut(text, QUOTE_MAX) : n), text,
                            n > QUOTE_MAX ? "…" : "",
                            jerr.text, jerr.line, jerr.column);
    }
    if (!json_is_null(v)) {
        /* httpx sends json= as json.dumps(obj): ", " and ": " separators,
         * non-ASCII escaped. */
        sl_buf py;
        sl_buf_init(&py, r->lim->http_max_binary_bytes);
        sl_value_pyjson(v, &py, false);
        sl_hr_ascii_escape(py.data ? py.data : "", py.len, &r->payload);
        if (py.toobig)
            r->payload.toobig = true;
        sl_buf_release(&py);
        r->send = true;
    }
    json_decref(v);
    if (r->payload.toobig)
        return sl_exec_fail(r->x, "RequestBodyError",
                            "the JSON body is larger than http_max_binary_bytes=%zu; raise it "
                            "(--limit http_max_binary_bytes=N) or send less",
                            r->lim->http_max_binary_bytes);
    return 0;
}

static int build_body(request *r, const sl_value *body)
{
    const char *bt = json_string_value(json_object_get(body, "type"));
    r->btype = sl_hr_index_of(bt, sl_hr_body_types, false);
    if (r->btype < 0)
        return sl_exec_fail(r->x, "RequestBodyError",
                            "body.type '%s' is not one of none, form-data, "
                            "x-www-form-urlencoded, raw-text, json, binary", bt ? bt : "");
    if (r->btype == B_NONE)
        return 0;
    const sl_value *data = json_object_get(body, "data");
    const char *legacy = json_is_string(data) && json_string_length(data) ? json_string_value(data)
                                                                          : NULL;
    size_t nitems = legacy ? 1 : json_is_array(data) ? json_array_size(data) : 0;
    const sl_value *item = json_is_array(data) ? json_array_get(data, 0) : NULL;
    size_t cap = r->lim->http_max_binary_bytes;

    if ((r->btype == B_RAW || r->btype == B_JSON) && nitems == 0)
        return 0;  /* sent empty, as Dify does (a load warning said so) */
    if (r->btype == B_RAW || r->btype == B_JSON || r->btype == B_BINARY) {
        if (nitems != 1)
            return sl_exec_fail(r->x, "RequestBodyError", "%s body type should have exactly one "
                                "item (found %zu); fix body.data in the node", bt, nitems);
    }
    if (r->btype == B_RAW || r->btype == B_JSON) {
        const char *tmpl = legacy ? legacy : json_string_value(json_object_get(item, "value"));
        r->raw_template = tmpl ? tmpl : "";
        if (r->btype == B_RAW) {
            if (render(r, "the body", r->raw_template, &r->payload))
                return -1;
            r->send = true;
            return 0;
        }
        sl_buf text;
        sl_buf_init(&text, cap);
        int rc = render(r, "the JSON body", r->raw_template, &text);
        if (rc == 0)
            rc = build_json(r, text.data ? text.data : "", text.len);
        sl_buf_release(&text);
        return rc;
    }
    if (r->btype == B_BINARY) {
        const sl_value *sel = json_object_get(item, "file");
        sl_value *f = sl_exec_get(r->x, sel);
        /* A one-file list is accepted too: that is what file-list inputs
         * and this node's own files output hold. */
        if (json_is_array(f) && json_array_size(f) == 1) {
            sl_value *one = json_incref(json_array_get(f, 0));
            json_decref(f);
            f = one;
        }
        if (!sl_value_is_file(f)) {
            char st[256];
            sl_pool_selector_text(sel, st, sizeof st);
            const char *why = f ? "it is not a file" : "no such variable";
            json_decref(f);
            return sl_exec_fail(r->x, "FileFetchError",
                                "cannot fetch file with selector %s: %s; pick a file variable "
                                "for the binary body", st, why);
        }
        int rc = file_bytes(r, f, &r->payload);
        json_decref(f);
        r->send = rc == 0;
        return rc;
    }

    /* Form bodies: x-www-form-urlencoded takes every item's key and value;
     * form-data takes text items as fields and file items as files. */
    kvlist fields = {0};
    kvlist file_keys = {0}; /* rendered key -> index of the item */
    int rc = 0;
    if (legacy) {
        rc = legacy_form_lines(r, legacy, &fields);
    } else {
        for (size_t i = 0; rc == 0 && i < nitems; i++) {
            const sl_value *it = json_array_get(data, i);
            const char *type = json_string_value(json_object_get(it, "type"));
            bool is_file = type && !strcmp(type, "file");
            sl_buf kb, vb;
            sl_buf_init(&kb, cap);
            sl_buf_init(&vb, cap);
            rc = render(r, "a body field name", json_string_value(json_object_get(it, "key")), &kb);
            if (rc == 0 && r->btype == B_FORM_DATA && is_file) {
                char idx[32];
                snprintf(idx, sizeof idx, "%zu", i);
                sl_hr_kv_put(&file_keys, kb.data ? kb.data : "", kb.len, idx, strlen(idx));
            } else if (rc == 0) {
                rc = render(r, "a body field", json_string_value(json_object_get(it, "value")),
                            &vb);
                if (rc == 0)
                    sl_hr_kv_put(&fields, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "",
                           vb.len);
            }
            sl_buf_release(&kb);
            sl_buf_release(&vb);
        }
    }
    if (rc == 0 && r->btype == B_URLENCODED) {
        sl_hr_urlencode(&r->payload, &fields);
        r->send = true;
        if (r->payload.toobig)
            rc = sl_exec_fail(r->x, "RequestBodyError",
                              "the form body is larger than http_max_binary_bytes=%zu; raise it "
                              "(--limit http_max_binary_bytes=N) or send less", cap);
    }
    if (rc == 0 && r->btype == B_FORM_DATA) {
        sl_hr_kv_copy(&r->form, &fields);
        r->send = true;
        for (size_t i = 0; rc == 0 && i < file_keys.n; i++) {
            const sl_value *it = json_array_get(data, (size_t)atoi(file_keys.a[i].v));
            sl_value *v = sl_exec_get(r->x, json_object_get(it, "file"));
            /* Like Dify, anything but a file or a list of files adds nothing. */
            size_t nf = sl_value_is_file(v) ? 1 : json_is_array(v) ? json_array_size(v) : 0;
            for (size_t k = 0; rc == 0 && k < nf; k++) {
                const sl_value *f = sl_value_is_file(v) ? v : json_array_get(v, k);
                if (!sl_value_is_file(f))
                    continue;
                sl_buf bytes;
                sl_buf_init(&bytes, cap);
                rc = file_bytes(r, f, &bytes);
                if (rc == 0)
                    add_part(r, file_keys.a[i].k, f, &bytes);
                sl_buf_release(&bytes);
            }
            json_decref(v);
        }
    }
    sl_hr_kv_release(&fields);
    sl_hr_kv_release(&file_keys);
    return rc;
}

static double timeout_value(const sl_value *t, const char *key, double max)
{
    const sl_value *v = json_object_get(t, key);
    double s = 0;
    if (json_is_number(v))
        s = json_number_value(v);
    else if (json_is_string(v))
        s = strtod(json_string_value(v), NULL);
    /* 0 or absent means the default, which is also the ceiling; a limit
     * of 0 means no ceiling (and no timeout unless the node sets one). */
    if (max <= 0)
        return s > 0 ? s : 0;
    return s > 0 && s < max ? s : max;
}

/* Renders params ("key:value" lines, split first and each side rendered
 * after, repeats kept). */
static int build_params(request *r, const char *text)
{
    const char *pos = text ? text : "", *end = pos + strlen(pos), *line;
    size_t len, cap = r->lim->http_max_binary_bytes;
    int rc = 0;
    while (rc == 0 && sl_hr_next_line(&pos, end, &line, &len)) {
        sl_hr_strip(&line, &len);
        const char *colon = memchr(line, ':', len);
        const char *k = line, *v = colon ? colon + 1 : line + len;
        size_t kn = colon ? (size_t)(colon - line) : len, vn = colon ? len - kn - 1 : 0;
        sl_hr_strip(&k, &kn);
        sl_hr_strip(&v, &vn);
        if (!kn)
            continue;
        char *kt = sl_xstrndup(k, kn), *vt = sl_xstrndup(v, vn);
        sl_buf kb, vb;
        sl_buf_init(&kb, cap);
        sl_buf_init(&vb, cap);
        rc = render(r, "a query parameter", kt, &kb);
        if (rc == 0)
            rc = render(r, "a query parameter", vt, &vb);
        if (rc == 0)
            sl_hr_kv_add(&r->params, kb.data ? kb.data : "", kb.len, vb.data ? vb.data : "", vb.len);
        free(kt);
        free(vt);
        sl_buf_release(&kb);
        sl_buf_release(&vb);
    }
    return rc;
}

/* A character that must not reach a header: a control character (CR, LF,
 * NUL, …; horizontal tab is allowed) or DEL.  Returns its position, or
 * -1 when there is none. */
static long header_bad_char(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return (long)i;
    }
    return -1;
}

static const char *char_name(unsigned char c)
{
    return c == '\r' ? "a carriage return (CR)" : c == '\n' ? "a line feed (LF)"
           : c == 0 ? "a NUL byte" : "a control character";
}

/* Splits the headers text into "key:value" lines (dict semantics: a
 * repeated key keeps the last value) and renders each line.  A value
 * that still holds a line break or another control character once its
 * {{#…#}} references are filled in is refused: it would otherwise become
 * headers of its own (Dify splits the rendered text into lines, so a
 * variable could add any header). */
static int build_headers(request *r, const char *text)
{
    const char *tpos = text ? text : "", *tend = tpos + strlen(tpos), *tline;
    size_t tlen;
    int rc = 0;
    while (rc == 0 && sl_hr_next_line(&tpos, tend, &tline, &tlen)) {
        char *tmpl = sl_xstrndup(tline, tlen);
        sl_buf h;
        sl_buf_init(&h, r->lim->http_max_binary_bytes);
        rc = render(r, "the headers", tmpl, &h);
        free(tmpl);
        const char *line = h.data ? h.data : "";
        const char *colon = memchr(line, ':', h.len);
        const char *k = line, *v = colon ? colon + 1 : line + h.len;
        size_t kn = colon ? (size_t)(colon - line) : h.len, vn = colon ? h.len - kn - 1 : 0;
        sl_hr_strip(&k, &kn);
        sl_hr_strip(&v, &vn);
        char *name = rc == 0 && (kn || vn) ? sl_xstrndup(k, kn) : NULL;
        long bad = name ? header_bad_char(v, vn) : -1;
        if (!name)
            ;
        else if (bad >= 0 || header_bad_char(k, kn) >= 0)
            rc = sl_exec_fail(r->x, "HttpRequestNodeError",
                              "header '%s': its %s holds %s once its {{#…#}} references are "
                              "filled in; a header is one line, so sluice does not send it "
                              "(it would add headers of its own): clean the variable, e.g. "
                              "with a template or code node",
                              header_name_ok(name) ? name : "(a line)",
                              bad >= 0 ? "value" : "name",
                              char_name((unsigned char)(bad >= 0 ? v[bad]
                                                                 : k[header_bad_char(k, kn)])));
        else if (header_name_ok(name))
            sl_hr_kv_put(&r->headers, k, kn, v, vn);
        else
            rc = sl_exec_fail(r->x, "HttpRequestNodeError",
                              "header name '%s' is not a valid HTTP header name (letters, digits "
                              "and !#$%%&'*+-.^_`|~ only); fix the node's headers", name);
        free(name);
        sl_buf_release(&h);
    }
    return rc;
}

/* The Authorization header (or config.header) of api-key authorization.
 * `k` is the rendered API key, stripped, already checked to hold no
 * control character. */
static void add_auth_header(request *r, const sl_value *cfg, const char *k)
{
    size_t kn = strlen(k);
    const char *ctype = json_string_value(json_object_get(cfg, "type"));
    const char *hname = json_string_value(json_object_get(cfg, "header"));
    if (!hname || !*hname)
        hname = "Authorization";
    r->auth_header = sl_xstrdup(hname);
    sl_buf val;
    sl_buf_init(&val, kn / 3 * 4 + 64);
    if (ctype && !strcmp(ctype, "bearer")) {
        sl_buf_adds(&val, "Bearer ");
        sl_buf_add(&val, k, kn);
    } else if (ctype && !strcmp(ctype, "basic")) {
        /* "user:pass" is encoded; anything else is taken as already
         * encoded credentials. */
        sl_buf_adds(&val, "Basic ");
        if (memchr(k, ':', kn))
            sl_base64_encode((const unsigned char *)k, kn, &val);
        else
            sl_buf_add(&val, k, kn);
    } else if (ctype && !strcmp(ctype, "custom")) {
        sl_buf_add(&val, k, kn);
    }
    if (val.len)
        sl_hr_kv_puts(&r->headers, hname, val.data);
    /* the key, the credentials as encoded and a basic password alone are
     * masked wherever they would show (errors, events, logs) */
    sl_exec_secret(r->x, k);
    if (ctype && !strcmp(ctype, "basic") && val.len > 6) {
        sl_exec_secret(r->x, val.data + 6);
        if (strchr(k, ':'))
            sl_exec_secret(r->x, strchr(k, ':') + 1);
    }
    sl_buf_release(&val);
}

/* An InvalidURLError for `url` (or the error that libcurl is missing). */
static int url_error(request *r, const char *url, sl_err *e)
{
    char u[512];
    sl_hr_url_for_msg(url, u, sizeof u);
    int rc = e->code == SL_EINVAL
                 ? sl_exec_fail(r->x, "InvalidURLError",
                                "url '%s' is not a valid URL: %s; fix the node's url", u, e->msg)
                 : sl_exec_fail(r->x, "HttpRequestNodeError", "%s", e->msg);
    sl_err_clear(e);
    return rc;
}

/* The URL as sent: cut by libcurl's URL API, path and query escaped where
 * needed, params merged. */
static int build_wire_url(request *r, const char *url)
{
    char *src = sl_hr_url_controls(url);
    sl_url_parts up;
    sl_err e = {0};
    if (sl_url_split(src, &up, &e)) {
        free(src);
        return url_error(r, url, &e);
    }
    sl_buf w, q;
    sl_buf_init(&w, 0);
    sl_buf_init(&q, 0);
    sl_buf_add(&w, up.scheme, up.scheme_n);
    sl_buf_adds(&w, "://");
    sl_buf_add(&w, up.netloc, up.netloc_n);
    /* a password in the URL (user:pass@host) is a secret like any other */
    const char *at = up.netloc_n ? memrchr(up.netloc, '@', up.netloc_n) : NULL;
    const char *colon = at ? memchr(up.netloc, ':', (size_t)(at - up.netloc)) : NULL;
    if (colon && at - colon > 1) {
        char *pw = sl_xstrndup(colon + 1, (size_t)(at - colon - 1));
        sl_exec_secret(r->x, pw);
        free(pw);
    }
    sl_hr_url_fix(&w, up.path, up.path_n);
    if (r->params.n)
        sl_hr_merge_query(&q, up.query ? up.query : "", up.query_n, &r->params);
    else if (up.has_query)
        sl_hr_url_fix(&q, up.query, up.query_n);
    if (q.len || up.has_query) {
        sl_buf_addc(&w, '?');
        sl_buf_add(&w, q.data ? q.data : "", q.len);
    }
    sl_buf_release(&q);
    free(src);
    r->wire_url = sl_buf_detach(&w);
    if (sl_url_check(r->wire_url, &e) == 0)
        return 0;
    return url_error(r, url, &e);
}

/* Everything Dify's Executor does before sending, in its order: API key,
 * url, params, headers, body, then the auth and Content-Type headers. */
int sl_hr_build_request(request *r)
{
    const sl_value *d = sl_exec_data(r->x);
    const sl_limits *L = r->lim;
    sl_buf key;
    sl_buf_init(&key, L->http_max_binary_bytes);
    char *key_text = NULL; /* the key, stripped */
    int rc = -1;

    const char *m = json_string_value(json_object_get(d, "method"));
    if (sl_hr_index_of(m, sl_hr_methods, true) < 0) {
        sl_exec_fail(r->x, "InvalidHttpMethodError", "Invalid http method %s; use get, post, "
                     "put, patch, delete, head or options", m ? m : "(none)");
        goto done;
    }
    for (size_t i = 0; i < sizeof r->method - 1 && m[i]; i++)
        r->method[i] = (char)toupper((unsigned char)m[i]);

    const sl_value *auth = json_object_get(d, "authorization");
    const char *atype = json_string_value(json_object_get(auth, "type"));
    const sl_value *cfg = json_object_get(auth, "config");
    bool api_key = atype && !strcmp(atype, "api-key");
    if (api_key) {
        if (!json_is_object(cfg)) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "authorization config is required for api-key authorization; give "
                         "authorization.config {type, api_key, header}");
            goto done;
        }
        if (render(r, "the API key", json_string_value(json_object_get(cfg, "api_key")), &key))
            goto done;
        const char *kt = key.data ? key.data : "";
        size_t key_n = key.len;
        sl_hr_strip(&kt, &key_n);
        key_text = sl_xstrndup(kt, key_n);
        if (!key_n) {
            sl_exec_fail(r->x, "AuthorizationConfigError", "API key is required for "
                         "authorization but was empty. Please provide a valid API key.");
            goto done;
        }
        long bad = header_bad_char(key_text, key_n);
        if (bad >= 0) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "the API key holds %s once its {{#…#}} references are filled in; it "
                         "goes into a header, which is one line, so sluice does not send it: "
                         "clean the key's variable", char_name((unsigned char)key_text[bad]));
            goto done;
        }
        const char *hname = json_string_value(json_object_get(cfg, "header"));
        if (hname && *hname && !header_name_ok(hname)) {
            sl_exec_fail(r->x, "AuthorizationConfigError",
                         "authorization.config.header '%s' is not a valid HTTP header name "
                         "(letters, digits and !#$%%&'*+-.^_`|~ only); fix it", hname);
            goto done;
        }
    }

    if (render(r, "the url", json_string_value(json_object_get(d, "url")), &r->url))
        goto done;
    const char *url = r->url.data ? r->url.data : "";
    if (!*url) {
        sl_exec_fail(r->x, "InvalidURLError",
                     "url is required; its references may have rendered to nothing");
        goto done;
    }
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        char u[512];
        sl_hr_url_for_msg(url, u, sizeof u);
        sl_exec_fail(r->x, "InvalidURLError",
                     "url should start with http:// or https:// (got '%s')", u);
        goto done;
    }
    if (build_params(r, json_string_value(json_object_get(d, "params"))) ||
        build_headers(r, json_string_value(json_object_get(d, "headers"))))
        goto done;
    const sl_value *body = json_object_get(d, "body");
    if (json_is_object(body) && build_body(r, body))
        goto done;
    if (api_key)
        add_auth_header(r, cfg, key_text);
    if (r->btype == B_FORM_DATA)
        sl_hr_kv_drop_ci(&r->headers, "content-type"); /* the multipart boundary must win */
    else if (r->btype >= 0 && body_ctype[r->btype] && !sl_hr_kv_find_ci(&r->headers, "content-type"))
        sl_hr_kv_puts(&r->headers, "Content-Type", body_ctype[r->btype]);
    if (build_wire_url(r, url))
        goto done;

    const sl_value *to = json_object_get(d, "timeout");
    r->connect_s = timeout_value(to, "connect", L->http_connect_timeout_s);
    r->read_s = timeout_value(to, "read", L->http_read_timeout_s);
    r->write_s = timeout_value(to, "write", L->http_write_timeout_s);
    const sl_value *sv = json_object_get(d, "ssl_verify");
    r->ssl_verify = json_is_boolean(sv) ? json_is_true(sv) : L->http_ssl_verify;
    rc = 0;
done:
    sl_buf_release(&key);
    free(key_text);
    return rc;
}

/* Dify's process_data.request: the request as raw HTTP text, the API key
 * masked, binary content summarised.  NULL and err when the kernel gives no
 * randomness for the multipart boundary shown. */
sl_value *sl_hr_request_log(const request *r, sl_err *err)
{
    char boundary[40] = "----WebKitFormBoundary";
    unsigned char rnd[16];
    if (sl_rand_bytes(rnd, sizeof rnd, err))
        return NULL;
    for (size_t i = 0; i < sizeof rnd; i++)
        boundary[22 + i] = (char)('a' + rnd[i] % 26);
    boundary[38] = 0;

    /* build_wire_url split the same text; it cannot fail here */
    char *url = sl_hr_url_controls(r->url.data ? r->url.data : "");
    sl_url_parts up;
    sl_err e = {0};
    if (sl_url_split(url, &up, &e))
        SL_BUG("a URL that was sent no longer parses");
    sl_buf s;
    sl_buf_init(&s, 0);
    sl_buf_addf(&s, "%s ", r->method);
    if (up.path_n)
        sl_buf_add(&s, up.path, up.path_n);
    else
        sl_buf_addc(&s, '/');
    if (r->params.n) {
        sl_buf_addc(&s, '?');
        sl_hr_urlencode(&s, &r->params);
    } else if (up.query_n) {
        sl_buf_addc(&s, '?');
        sl_buf_add(&s, up.query, up.query_n);
    }
    /* The Host line as sent: without user:password@, which goes out as an
     * Authorization header and must not show in events. */
    sl_buf_adds(&s, " HTTP/1.1\r\nHost: ");
    const char *at = memchr(up.netloc, '@', up.netloc_n);
    const char *host = at ? at + 1 : up.netloc;
    sl_buf_add(&s, host, up.netloc_n - (size_t)(host - up.netloc));
    sl_buf_adds(&s, "\r\n");

    kvlist h = {0};
    sl_hr_kv_copy(&h, &r->headers);
    if (r->btype == B_FORM_DATA) {
        char ct[80];
        snprintf(ct, sizeof ct, "multipart/form-data; boundary=%s", boundary);
        sl_hr_kv_puts(&h, "Content-Type", ct);
    }
    for (size_t i = 0; i < h.n; i++) {
        sl_buf_addf(&s, "%s: ", h.a[i].k);
        if (r->auth_header && !strcasecmp(h.a[i].k, r->auth_header))
            for (size_t k = sl_utf8_chars(h.a[i].v, strlen(h.a[i].v)); k; k--)
                sl_buf_addc(&s, '*');
        else
            sl_buf_adds(&s, h.a[i].v);
        sl_buf_adds(&s, "\r\n");
    }
    sl_hr_kv_release(&h);

    sl_buf b;
    sl_buf_init(&b, 0);
    if (r->btype == B_FORM_DATA && (r->form.n || r->nparts)) {
        for (size_t i = 0; i < r->form.n; i++)
            sl_buf_addf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n",
                        boundary, r->form.a[i].k, r->form.a[i].v);
        for (size_t i = 0; i < r->nparts; i++)
            sl_buf_addf(&b, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n"
                        "<file_content_binary: '%s', type='%s', size=%zu bytes>\r\n",
                        boundary, r->parts[i].key, *r->parts[i].filename ? r->parts[i].filename
                        : "unknown", r->parts[i].mime, r->parts[i].data.len);
        sl_buf_addf(&b, "--%s--\r\n", boundary);
    } else if (r->btype == B_BINARY && r->payload.len) {
        sl_buf_addf(&b, "<binary_content: size=%zu bytes>", r->payload.len);
    } else if (r->btype == B_RAW) {
        if (r->payload.len)
            sl_utf8_clean(r->payload.data, r->payload.len, &b);
        else
            sl_buf_adds(&b, r->raw_template ? r->raw_template : "");
    } else if ((r->btype == B_URLENCODED || r->btype == B_JSON) && r->payload.len) {
        /* Python logs falsy JSON ({}, [], 0, "") as no body at all. */
        const char *p = r->payload.data;
        bool falsy = r->btype == B_JSON && (!strcmp(p, "{}") || !strcmp(p, "[]") ||
                                            !strcmp(p, "0") || !strcmp(p, "0.0") ||
                                            !strcmp(p, "\"\"") || !strcmp(p, "false"));
        if (!falsy)
            sl_buf_add(&b, p, r->payload.len);
    }
    if (b.len)
        sl_buf_addf(&s, "Content-Length: %zu\r\n", sl_utf8_chars(b.data, b.len));
    sl_buf_adds(&s, "\r\n");
    sl_buf_add(&s, b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(s.data ? s.data : "", s.len, &clean);
    sl_value *v = json_stringn_nocheck(clean.data ? clean.data : "", clean.len);
    sl_buf_release(&clean);
    sl_buf_release(&s);
    free(url);
    return v;
}

int sl_hr_fetch_file(const sl_hr_fetch *f, const char *url, const char *name, sl_buf *out)
{
    request d;
    sl_hr_request_init(&d, f->x);
    d.etype = f->etype;
    snprintf(d.method, sizeof d.method, "GET");
    d.wire_url = sl_xstrdup(url);
    d.connect_s = f->connect_s;
    d.read_s = f->read_s;
    d.write_s = f->write_s;
    d.ssl_verify = f->ssl_verify;
    response o;
    sl_hr_response_init(&o, f->cap);
    int rc = sl_hr_perform(&d, &o);
    char u[512];
    sl_hr_url_for_msg(url, u, sizeof u);
    if (rc == 0 && o.over)
        rc = sl_exec_fail(f->x, f->etype,
                          "%sfile '%s' from %s is larger than %s=%zu; raise it (--limit %s=N)",
                          f->prefix, name ? name : "?", u, f->cap_name, f->cap, f->cap_name);
    else if (rc == 0 && (o.status < 200 || o.status > 299))
        rc = sl_exec_fail(f->x, f->etype,
                          "%sdownloading file '%s' from %s failed with status code %ld",
                          f->prefix, name ? name : "?", u, o.status);
    if (rc == 0)
        sl_buf_add(out, o.body.data ? o.body.data : "", o.body.len);
    if (rc == 0 && f->ctype && f->ctype_n) {
        const char *ct = json_string_value(json_object_get(o.headers, "content-type"));
        sl_hr_header_main(ct ? ct : "", f->ctype, f->ctype_n);
    }
    sl_hr_response_release(&o);
    sl_hr_request_release(&d);
    return rc;
}
