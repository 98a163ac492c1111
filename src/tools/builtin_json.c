/*
 * builtin_json — the json_process plugin (langgenius/json_process):
 * parse, json_insert, json_replace, json_delete.
 *
 * The plugin reads its queries with jsonpath_ng; sluice implements the
 * subset those tools are used with, with jsonpath_ng's meaning:
 *   $            the document (optional: "a.b" reads as "$.a.b")
 *   .name  ['name']  ["name"]    a member of an object
 *   .*           every member of an object, in order
 *   [n]          an array's item (n < 0 counts from the end)
 *   [*]  [a:b]  [a:b:c]          an array's items, Python's slice; [*] on
 *                a value that is not an array is that value
 *   ..name  ..*  ..[n]           the step at this level and every level
 *                below it (pre-order: a node's own matches first)
 * Outputs are text as the plugin writes them: Python's json.dumps (", "
 * and ": ", ensure_ascii by default) and str() for a single scalar.
 * Caps: the query's length and steps, the number of matches; the output
 * counts against tool_max_output.
 */
#include "tools/builtin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_MAX 4096
#define STEPS_MAX 64
#define MATCHES_MAX 100000
#define CONTENT_MAX ((size_t)64 << 20)

/* ---- Python's json.dumps ---- */

static void dump_str(const char *s, size_t n, bool ascii, sl_buf *out)
{
    sl_buf_addc(out, '"');
    for (size_t i = 0; i < n && !out->toobig;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            sl_buf_addc(out, '\\');
            sl_buf_addc(out, (char)c);
            i++;
        } else if (c < 0x20) {
            const char *e = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                          : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (e)
                sl_buf_adds(out, e);
            else
                sl_buf_addf(out, "\\u%04x", c);
            i++;
        } else if (c < 0x80 || !ascii) {
            sl_buf_addc(out, (char)c);
            i++;
        } else {
            /* UTF-8 (jansson checked it) to \uXXXX, surrogate pairs above the BMP */
            int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
            for (int k = 1; k < len && i + (size_t)k < n; k++)
                cp = cp << 6 | ((unsigned char)s[i + (size_t)k] & 0x3F);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                sl_buf_addf(out, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
            } else {
                sl_buf_addf(out, "\\u%04x", cp);
            }
            i += (size_t)len;
        }
    }
    sl_buf_addc(out, '"');
}

void sl_builtin_py_json(const sl_value *v, bool ensure_ascii, sl_buf *out)
{
    char num[32];
    if (out->toobig)
        return;
    switch (json_typeof(v)) {
    case JSON_NULL: sl_buf_adds(out, "null"); return;
    case JSON_TRUE: sl_buf_adds(out, "true"); return;
    case JSON_FALSE: sl_buf_adds(out, "false"); return;
    case JSON_INTEGER: sl_buf_addf(out, "%lld", (long long)json_integer_value(v)); return;
    case JSON_REAL:
        sl_fmt_double(json_real_value(v), num);
        sl_buf_adds(out, num);
        return;
    case JSON_STRING:
        dump_str(json_string_value(v), json_string_length(v), ensure_ascii, out);
        return;
    case JSON_ARRAY:
        sl_buf_addc(out, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sl_buf_adds(out, ", ");
            sl_builtin_py_json(json_array_get(v, i), ensure_ascii, out);
        }
        sl_buf_addc(out, ']');
        return;
    case JSON_OBJECT: {
        const char *k;
        const sl_value *e;
        bool first = true;
        sl_buf_addc(out, '{');
        json_object_foreach((sl_value *)v, k, e) {
            if (!first)
                sl_buf_adds(out, ", ");
            first = false;
            dump_str(k, strlen(k), ensure_ascii, out);
            sl_buf_adds(out, ": ");
            sl_builtin_py_json(e, ensure_ascii, out);
        }
        sl_buf_addc(out, '}');
        return;
    }
    }
}

/* Python's str() of a value the plugin prints. */
static void py_str(const sl_value *v, bool ascii, sl_buf *out)
{
    switch (json_typeof(v)) {
    case JSON_STRING: sl_buf_add(out, json_string_value(v), json_string_length(v)); return;
    case JSON_NULL: sl_buf_adds(out, "None"); return;
    case JSON_TRUE: sl_buf_adds(out, "True"); return;
    case JSON_FALSE: sl_buf_adds(out, "False"); return;
    default: sl_builtin_py_json(v, ascii, out);
    }
}

/* ---- paths ---- */

typedef enum { ST_FIELD, ST_ALL, ST_INDEX, ST_SLICE } st_kind;

typedef struct {
    st_kind kind;
    bool desc;       /* ".." before it */
    char *name;      /* ST_FIELD */
    long long idx;   /* ST_INDEX */
    bool has_a, has_b;
    long long a, b, step;  /* ST_SLICE; [*] is a slice with neither bound */
} step;

typedef struct {
    step v[STEPS_MAX];
    size_t n;
} path;

static void path_free(path *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].name);
    p->n = 0;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '@' || (unsigned char)c >= 0x80;
}

static const char *ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static const char *parse_int(const char *s, long long *out)
{
    s = ws(s);
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s)
        return NULL;
    *out = v;
    return ws(end);
}

/* One bracket: ['name'], [n], [*], [a:b:c]. */
static const char *parse_bracket(const char *s, step *st, sl_err *err, const char *q)
{
    s = ws(s + 1);
    if (*s == '\'' || *s == '"') {
        char quote = *s++;
        const char *e = strchr(s, quote);
        if (!e)
            goto bad;
        st->kind = ST_FIELD;
        st->name = sl_xstrndup(s, (size_t)(e - s));
        s = ws(e + 1);
    } else if (*s == '*') {
        st->kind = ST_SLICE;
        s = ws(s + 1);
    } else {
        long long v;
        const char *p = parse_int(s, &v);
        if (p && *p == ']') {
            st->kind = ST_INDEX;
            st->idx = v;
            s = p;
        } else {
            st->kind = ST_SLICE;
            st->step = 1;
            if (p) {
                st->has_a = true;
                st->a = v;
                s = p;
            }
            if (*s != ':')
                goto bad;
            s = ws(s + 1);
            if ((p = parse_int(s, &v))) {
                st->has_b = true;
                st->b = v;
                s = p;
            }
            if (*s == ':') {
                s = ws(s + 1);
                if ((p = parse_int(s, &v))) {
                    if (v == 0)
                        goto bad;
                    st->step = v;
                    s = p;
                }
            }
        }
    }
    if (*s != ']')
        goto bad;
    return s + 1;
bad:
    free(st->name);
    st->name = NULL;
    sl_err_set(err, SL_EINVAL, "the JSONPath '%s' has a bracket sluice does not read; use "
               "['name'], [n], [*] or [a:b]", q);
    return NULL;
}

static int parse_path(const char *q, path *p, sl_err *err)
{
    memset(p, 0, sizeof *p);
    if (strlen(q) > QUERY_MAX)
        return sl_err_set(err, SL_EINVAL, "the JSONPath is longer than %d bytes", QUERY_MAX);
    const char *s = ws(q);
    bool bare = *s != '$';  /* "a.b" is "$.a.b" */
    if (!bare)
        s++;
    while (*(s = ws(s))) {
        if (p->n == STEPS_MAX) {
            path_free(p);
            return sl_err_set(err, SL_EINVAL, "the JSONPath has more than %d steps", STEPS_MAX);
        }
        step *st = &p->v[p->n];
        memset(st, 0, sizeof *st);
        if (bare) {
            bare = false;
            if (*s == '[' || *s == '.')
                continue;
        } else if (s[0] == '.' && s[1] == '.') {
            st->desc = true;
            s += 2;
        } else if (*s == '.') {
            s++;
        } else if (*s != '[') {
            goto bad;
        }
        if (*s == '[') {
            if (!(s = parse_bracket(s, st, err, q)))
                goto fail;
        } else if (*s == '*') {
            st->kind = ST_ALL;
            s++;
        } else if (*s == '\'' || *s == '"' || *s == '`') {
            char quote = *s++;
            const char *e = strchr(s, quote);
            if (!e)
                goto bad;
            st->kind = ST_FIELD;
            st->name = sl_xstrndup(s, (size_t)(e - s));
            s = e + 1;
        } else {
            const char *b = s;
            while (name_char(*s))
                s++;
            if (s == b)
                goto bad;
            st->kind = ST_FIELD;
            st->name = sl_xstrndup(b, (size_t)(s - b));
        }
        p->n++;
    }
    return 0;
bad:
    sl_err_set(err, SL_EINVAL, "the JSONPath '%s' cannot be read at '%.20s'; sluice reads $, "
               ".name, ['name'], .*, [n], [*], [a:b] and ..name", q, s);
fail:
    path_free(p);
    return -1;
}

/* A match: the value, and where it sits (parent NULL: the document). */
typedef struct {
    sl_value *v, *parent;
    char *key;       /* parent is an object */
    size_t idx;      /* parent is an array */
} match;

typedef struct {
    match *v;
    size_t n, alloc;
    bool toobig;
} matches;

static void add_match(matches *m, sl_value *v, sl_value *parent, const char *key, size_t idx)
{
    if (m->n == MATCHES_MAX) {
        m->toobig = true;
        return;
    }
    if (m->n == m->alloc) {
        m->alloc = m->alloc ? m->alloc * 2 : 16;
        m->v = sl_xrealloc(m->v, m->alloc * sizeof *m->v);
    }
    /* held: an edit may drop a value from the document while others point into it */
    m->v[m->n++] = (match){json_incref(v), json_incref(parent), key ? sl_xstrdup(key) : NULL,
                           idx};
}

static void matches_free(matches *m)
{
    for (size_t i = 0; i < m->n; i++) {
        json_decref(m->v[i].v);
        json_decref(m->v[i].parent);
        free(m->v[i].key);
    }
    free(m->v);
    memset(m, 0, sizeof *m);
}

static void apply_step(const step *st, const match *at, matches *out)
{
    sl_value *v = at->v;
    switch (st->kind) {
    case ST_FIELD: {
        sl_value *e = json_is_object(v) ? json_object_get(v, st->name) : NULL;
        if (e)
            add_match(out, e, v, st->name, 0);
        return;
    }
    case ST_ALL: {
        const char *k;
        sl_value *e;
        if (json_is_object(v))
            json_object_foreach(v, k, e) add_match(out, e, v, k, 0);
        return;
    }
    case ST_INDEX: {
        if (!json_is_array(v))
            return;
        long long n = (long long)json_array_size(v), i = st->idx < 0 ? st->idx + n : st->idx;
        if (i >= 0 && i < n)
            add_match(out, json_array_get(v, (size_t)i), v, NULL, (size_t)i);
        return;
    }
    case ST_SLICE: {
        if (!json_is_array(v)) {
            if (!st->has_a && !st->has_b)  /* jsonpath_ng: [*] of a non-list is itself */
                add_match(out, v, at->parent, at->key, at->idx);
            return;
        }
        long long n = (long long)json_array_size(v), step_ = st->step ? st->step : 1;
        long long a, b;
        if (step_ > 0) {
            a = st->has_a ? (st->a < 0 ? st->a + n : st->a) : 0;
            b = st->has_b ? (st->b < 0 ? st->b + n : st->b) : n;
            a = a < 0 ? 0 : a > n ? n : a;
            b = b < 0 ? 0 : b > n ? n : b;
            for (long long i = a; i < b; i += step_)
                add_match(out, json_array_get(v, (size_t)i), v, NULL, (size_t)i);
        } else {
            a = st->has_a ? (st->a < 0 ? st->a + n : st->a) : n - 1;
            b = st->has_b ? (st->b < 0 ? st->b + n : st->b) : -1;
            a = a < -1 ? -1 : a > n - 1 ? n - 1 : a;
            b = b < -1 ? -1 : b > n - 1 ? n - 1 : b;
            for (long long i = a; i > b; i += step_)
                add_match(out, json_array_get(v, (size_t)i), v, NULL, (size_t)i);
        }
        return;
    }
    }
}

static void descend(const step *st, const match *at, matches *out, int depth)
{
    if (out->toobig || depth > 4096)
        return;
    apply_step(st, at, out);
    sl_value *v = at->v;
    if (json_is_object(v)) {
        const char *k;
        sl_value *e;
        json_object_foreach(v, k, e) {
            match child = {e, v, (char *)k, 0};
            descend(st, &child, out, depth + 1);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            match child = {json_array_get(v, i), v, NULL, i};
            descend(st, &child, out, depth + 1);
        }
    }
}

static int find(const path *p, sl_value *doc, matches *out, sl_err *err)
{
    matches cur = {0};
    add_match(&cur, doc, NULL, NULL, 0);
    for (size_t s = 0; s < p->n; s++) {
        matches next = {0};
        for (size_t i = 0; i < cur.n && !next.toobig; i++) {
            if (p->v[s].desc)
                descend(&p->v[s], &cur.v[i], &next, 0);
            else
                apply_step(&p->v[s], &cur.v[i], &next);
        }
        matches_free(&cur);
        cur = next;
        if (cur.toobig) {
            matches_free(&cur);
            return sl_err_set(err, SL_ELIMIT, "the JSONPath matches more than %d values",
                              MATCHES_MAX);
        }
    }
    *out = cur;
    return 0;
}

/* Sets the value at m's place; the document itself when m is the root. */
static void set_at(sl_value **doc, const match *m, sl_value *nv)
{
    if (!m->parent) {
        json_decref(*doc);
        *doc = json_incref(nv);
    } else if (json_is_object(m->parent)) {
        json_object_set(m->parent, m->key, nv);
    } else if (json_is_array(m->parent) && m->idx < json_array_size(m->parent)) {
        json_array_set(m->parent, m->idx, nv);
    }
}

/* ---- the tools ---- */

typedef struct {
    sl_value *doc;
    path p;
    matches m;
    bool ascii;
    char *tmp[8];
    int ntmp;
} job;

static const char *arg(job *j, const sl_value *args, const char *name, const char *def)
{
    return sl_builtin_arg_str(args, name, def, &j->tmp[j->ntmp++]);
}

static void job_free(job *j)
{
    json_decref(j->doc);
    path_free(&j->p);
    matches_free(&j->m);
    for (int i = 0; i < j->ntmp; i++)
        free(j->tmp[i]);
}

/* Reads content and the query, and finds its matches. */
static int job_start(job *j, const char *tool, const sl_value *args, const char *qname,
                     bool delete_form, sl_err *err)
{
    memset(j, 0, sizeof *j);
    j->ascii = sl_builtin_arg_bool(args, "ensure_ascii", true);
    const char *content = arg(j, args, "content", "");
    const char *q = arg(j, args, qname, "");
    if (!*content)
        return sl_err_set(err, SL_EINVAL, "%s: content is empty; give the JSON text", tool);
    if (!*q)
        return sl_err_set(err, SL_EINVAL, "%s: %s is empty; give a JSONPath such as $.a.b",
                          tool, qname);
    size_t len = strlen(content);
    if (len > CONTENT_MAX)
        return sl_err_set(err, SL_ELIMIT, "%s: content is larger than %zu bytes", tool,
                          CONTENT_MAX);
    json_error_t je;
    j->doc = json_loadb(content, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!j->doc)
        return sl_err_set(err, SL_EINVAL, "%s: content is not JSON: %s (line %d, column %d)",
                          tool, je.text, je.line, je.column);
    char *dq = NULL;
    if (delete_form) {  /* the plugin's own "$." + query.lstrip("$.") */
        while (*q == '$' || *q == '.')
            q++;
        q = dq = sl_xasprintf("$.%s", q);
    }
    int rc = parse_path(q, &j->p, err);
    free(dq);
    if (rc || find(&j->p, j->doc, &j->m, err))
        return sl_err_prefix(err, "%s", tool);
    return 0;
}

static int job_out(job *j, const sl_tool_ctx *ctx, sl_tool_result *res, sl_err *err)
{
    sl_buf b;
    sl_buf_init(&b, sl_tool_max_output(ctx) + 1);
    sl_builtin_py_json(j->doc, j->ascii, &b);
    int rc = b.toobig ? sl_err_limit(err, SL_ELIMIT, "tool_max_output", "the tool's output "
                                     "passed %zu bytes (tool_max_output)", sl_tool_max_output(ctx))
                      : sl_builtin_text(res, ctx, b.data ? b.data : "", b.len, err);
    sl_buf_release(&b);
    return rc;
}

static int jp_parse(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                    const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    job j;
    int rc = job_start(&j, "parse", args, "json_filter", false, err);
    if (!rc) {
        sl_buf b;
        sl_buf_init(&b, sl_tool_max_output(ctx) + 1);
        if (j.m.n == 1) {
            py_str(j.m.v[0].v, j.ascii, &b);
        } else if (j.m.n > 1) {
            sl_value *list = json_array();
            for (size_t i = 0; i < j.m.n; i++)
                json_array_append(list, j.m.v[i].v);
            sl_builtin_py_json(list, j.ascii, &b);
            json_decref(list);
        }
        rc = b.toobig ? sl_err_limit(err, SL_ELIMIT, "tool_max_output", "the tool's output "
                                     "passed %zu bytes (tool_max_output)", sl_tool_max_output(ctx))
                      : sl_builtin_text(res, ctx, b.data ? b.data : "", b.len, err);
        sl_buf_release(&b);
    }
    job_free(&j);
    return rc;
}

/* new_value as the plugin takes it: the text, or its JSON when value_decode. */
static sl_value *new_value(const char *text, bool decode, const char *what, sl_err *err)
{
    if (!decode)
        return json_string(text);
    sl_value *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        sl_err_set(err, SL_EINVAL, "Cannot decode %s value to json object", what);
    return v;
}

/* The plugin's create_path: the query's dotted parts made as objects
 * (name[n] as an array padded with {}), the value set at the last. */
static int create_path(job *j, const char *q, sl_value *nv, sl_err *err)
{
    while (*q == '$')
        q++;
    while (*q == '.')
        q++;
    char *parts = sl_xstrdup(q), *save = NULL;
    sl_value *cur = j->doc;
    int rc = 0;
    char *part = strtok_r(parts, ".", &save);
    while (part && !rc) {
        char *next = strtok_r(NULL, ".", &save);
        if (!json_is_object(cur)) {
            rc = sl_err_set(err, SL_EINVAL, "json_insert: cannot create '%s' inside a value "
                            "that is not an object", part);
            break;
        }
        char *br = strchr(part, '[');
        if (br && strchr(br, ']')) {
            *br = '\0';
            long long idx = strtoll(br + 1, NULL, 10);
            if (idx < 0 || idx > 10000) {
                rc = sl_err_set(err, SL_EINVAL, "json_insert: index %lld cannot be created "
                                "(0 to 10000)", idx);
                break;
            }
            sl_value *arr = json_object_get(cur, part);
            if (!json_is_array(arr)) {
                arr = json_array();
                if (json_object_set_new(cur, part, arr)) {
                    rc = sl_err_set(err, SL_EINVAL, "json_insert: '%s' is not a usable name",
                                    part);
                    break;
                }
            }
            while (json_array_size(arr) <= (size_t)idx)
                json_array_append_new(arr, json_object());
            if (!next)
                json_array_set(arr, (size_t)idx, nv);
            cur = json_array_get(arr, (size_t)idx);
        } else if (!next) {
            if (json_object_set(cur, part, nv))
                rc = sl_err_set(err, SL_EINVAL, "json_insert: '%s' is not a usable name", part);
        } else {
            if (!json_object_get(cur, part))
                json_object_set_new(cur, part, json_object());
            cur = json_object_get(cur, part);
        }
        part = next;
    }
    free(parts);
    return rc;
}

static int jp_insert(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                     const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    job j;
    int rc = job_start(&j, "json_insert", args, "query", false, err);
    sl_value *nv = NULL;
    if (!rc) {
        const char *text = arg(&j, args, "new_value", "");
        if (!*text)
            rc = sl_err_set(err, SL_EINVAL, "json_insert: new_value is empty");
        else
            rc = (nv = new_value(text, sl_builtin_arg_bool(args, "value_decode", false), "new",
                                 err)) ? 0 : -1;
    }
    double index = 0;
    int has_index = rc ? 0 : sl_builtin_arg_num(args, "index", &index);
    if (!rc && has_index < 0 && *arg(&j, args, "index", ""))
        rc = sl_err_set(err, SL_EINVAL, "json_insert: index is not a number");
    if (!rc && !j.m.n && sl_builtin_arg_bool(args, "create_path", false)) {
        rc = create_path(&j, arg(&j, args, "query", ""), nv, err);
    } else if (!rc) {
        for (size_t i = 0; i < j.m.n && !rc; i++) {
            sl_value *v = j.m.v[i].v;
            if (json_is_object(v)) {
                if (json_is_object(nv))
                    json_object_update(v, nv);
                else
                    rc = sl_err_set(err, SL_EINVAL, "json_insert: Cannot insert non-dict value "
                                    "into dict (set value_decode to insert an object)");
            } else if (json_is_array(v)) {
                long long n = (long long)json_array_size(v);
                if (has_index <= 0) {
                    json_array_append(v, nv);
                } else {  /* Python's list.insert */
                    long long at = (long long)index;
                    at = at < 0 ? (at + n < 0 ? 0 : at + n) : (at > n ? n : at);
                    json_array_insert(v, (size_t)at, nv);
                }
            } else {
                set_at(&j.doc, &j.m.v[i], nv);
            }
        }
    }
    if (!rc)
        rc = job_out(&j, ctx, res, err);
    json_decref(nv);
    job_free(&j);
    return rc;
}

static int jp_replace(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                      const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    job j;
    int rc = job_start(&j, "json_replace", args, "query", false, err);
    const char *model = rc ? "" : arg(&j, args, "replace_model", "pattern");
    const char *value = rc ? "" : arg(&j, args, "replace_value", "");
    bool decode = sl_builtin_arg_bool(args, "value_decode", false);
    if (!rc && !*value)
        rc = sl_err_set(err, SL_EINVAL, "json_replace: replace_value is empty");
    if (!rc && !strcmp(model, "pattern")) {
        const char *pat = arg(&j, args, "replace_pattern", "");
        size_t pl = strlen(pat), vl = strlen(value);
        if (!pl)
            rc = sl_err_set(err, SL_EINVAL, "json_replace: replace_pattern is empty; give the "
                            "text to replace");
        for (size_t i = 0; i < j.m.n && !rc; i++) {
            const sl_value *v = j.m.v[i].v;
            if (!json_is_string(v)) {
                rc = sl_err_set(err, SL_EINVAL, "json_replace: a value the query matches is "
                                "not a string; replace string works on strings");
                break;
            }
            sl_buf b;
            sl_buf_init(&b, sl_tool_max_output(ctx) + 1);
            const char *s = json_string_value(v), *end = s + json_string_length(v), *hit;
            while ((hit = memmem(s, (size_t)(end - s), pat, pl))) {
                sl_buf_add(&b, s, (size_t)(hit - s));
                sl_buf_add(&b, value, vl);
                s = hit + pl;
            }
            sl_buf_add(&b, s, (size_t)(end - s));
            sl_value *nv = NULL;
            if (b.toobig)
                rc = sl_err_limit(err, SL_ELIMIT, "tool_max_output", "json_replace: the "
                                  "replaced text passed tool_max_output");
            else if (!(nv = new_value(b.data ? b.data : "", decode, "replace", err)))
                rc = -1;
            else
                set_at(&j.doc, &j.m.v[i], nv);
            json_decref(nv);
            sl_buf_release(&b);
        }
    } else if (!rc && !strcmp(model, "key")) {
        for (size_t i = 0; i < j.m.n && !rc; i++) {
            const match *m = &j.m.v[i];
            if (!json_is_object(m->parent) || !m->key) {
                rc = sl_err_set(err, SL_EINVAL, "json_replace: replace key needs a query that "
                                "ends in a member name ($.a.b)");
                break;
            }
            sl_value *v = json_object_get(m->parent, m->key);
            if (v) {  /* moved to the end, as Python's pop and set */
                json_incref(v);
                json_object_del(m->parent, m->key);
                if (json_object_set_new(m->parent, value, v))
                    rc = sl_err_set(err, SL_EINVAL, "json_replace: '%s' is not a usable key",
                                    value);
            }
        }
    } else if (!rc && !strcmp(model, "value")) {
        sl_value *nv = new_value(value, decode, "replace", err);
        if (!nv)
            rc = -1;
        for (size_t i = 0; i < j.m.n && !rc; i++)
            set_at(&j.doc, &j.m.v[i], nv);
        json_decref(nv);
    } else if (!rc) {
        rc = sl_err_set(err, SL_EINVAL, "json_replace: replace_model '%s' is not key, value or "
                        "pattern", model);
    }
    if (!rc)
        rc = job_out(&j, ctx, res, err);
    job_free(&j);
    return rc;
}

static int jp_delete(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                     const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    job j;
    int rc = job_start(&j, "json_delete", args, "query", true, err);
    for (size_t i = 0; i < j.m.n && !rc; i++) {
        const match *m = &j.m.v[i];
        if (json_is_object(m->parent)) {
            json_object_del(m->parent, m->key);
        } else if (json_is_array(m->parent)) {
            for (size_t k = 0; k < json_array_size(m->parent); k++)
                if (json_array_get(m->parent, k) == m->v) {
                    json_array_remove(m->parent, k);
                    break;
                }
        } else {
            rc = sl_err_set(err, SL_EINVAL, "json_delete: Delete operation failed: the query "
                            "matches the whole document");
        }
    }
    if (!rc)
        rc = job_out(&j, ctx, res, err);
    job_free(&j);
    return rc;
}

#define P_CONTENT(d) "\"content\": {\"type\": \"string\", \"description\": \"" d "\"}"
#define P_ASCII                                                                              \
    "\"ensure_ascii\": {\"type\": \"boolean\", \"description\": \"Ensure the JSON output is " \
    "ASCII encoded\", \"default\": true}"
#define P_DECODE                                                                             \
    "\"value_decode\": {\"type\": \"boolean\", \"description\": \"Whether to decode the value " \
    "to a JSON object\", \"default\": false}"

const sl_builtin_tool sl_builtin_json_tools[] = {
    {"parse", "A tool for extracting JSON objects",
     "{\"type\": \"object\", \"properties\": {" P_CONTENT("JSON data to be processed") ", "
     "\"json_filter\": {\"type\": \"string\", \"description\": \"JSON fields to be parsed\"}, "
     P_ASCII "}, \"required\": [\"content\", \"json_filter\"]}",
     jp_parse},
    {"json_insert", "A tool for inserting JSON content",
     "{\"type\": \"object\", \"properties\": {" P_CONTENT("JSON content to be processed") ", "
     "\"query\": {\"type\": \"string\", \"description\": \"JSONPath query to locate the element "
     "to insert\"}, "
     "\"new_value\": {\"type\": \"string\", \"description\": \"New Value to insert\"}, "
     P_DECODE ", "
     "\"create_path\": {\"type\": \"string\", \"description\": \"Whether to create a path when "
     "the path does not exist\", \"enum\": [\"True\", \"False\"], \"default\": \"False\"}, "
     P_ASCII "}, \"required\": [\"content\", \"query\", \"new_value\", \"create_path\"]}",
     jp_insert},
    {"json_replace", "A tool for replacing JSON content",
     "{\"type\": \"object\", \"properties\": {" P_CONTENT("JSON content to be processed") ", "
     "\"query\": {\"type\": \"string\", \"description\": \"JSONPath query to locate the element "
     "to replace\"}, "
     "\"replace_pattern\": {\"type\": \"string\", \"description\": \"String to be replaced\"}, "
     "\"replace_value\": {\"type\": \"string\", \"description\": \"New Value to replace\"}, "
     P_DECODE ", "
     "\"replace_model\": {\"type\": \"string\", \"description\": \"Replace Model\", \"enum\": "
     "[\"key\", \"value\", \"pattern\"], \"default\": \"pattern\"}, "
     P_ASCII "}, \"required\": [\"content\", \"query\", \"replace_value\", \"replace_model\"]}",
     jp_replace},
    {"json_delete", "A tool for deleting JSON content",
     "{\"type\": \"object\", \"properties\": {" P_CONTENT("JSON content to be processed") ", "
     "\"query\": {\"type\": \"string\", \"description\": \"JSONPath query to locate the element "
     "to delete\"}, "
     P_ASCII "}, \"required\": [\"content\", \"query\"]}",
     jp_delete},
};
const size_t sl_builtin_json_n = sizeof sl_builtin_json_tools / sizeof sl_builtin_json_tools[0];
