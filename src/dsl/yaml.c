#include "yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 256
#define ALIAS_BUDGET 1000000u

typedef struct {
    yaml_parser_t parser;
    sl_yaml_doc *doc;
    sl_err *err;
    sl_map anchors;        /* anchor name -> anchor* */
    size_t nodes;          /* values built so far (for alias accounting) */
    size_t alias_nodes;    /* values reached through aliases */
} loader;

typedef struct {
    sl_value *v;
    size_t count;          /* nodes in the anchored subtree */
} anchor;

static void *pack(yaml_mark_t m)
{
    uintptr_t line = (uintptr_t)m.line + 1, col = (uintptr_t)m.column + 1;
    return (void *)((line << 24) | (col & 0xffffff));
}

static sl_mark unpack(void *p)
{
    uintptr_t v = (uintptr_t)p;
    sl_mark m = {(int)(v >> 24), (int)(v & 0xffffff)};
    return m;
}

static void keyfor(char *out, size_t n, const void *c, const char *key)
{
    snprintf(out, n, "%p|%s", c, key ? key : "");
}

static void put_mark(loader *L, const void *c, const char *key, yaml_mark_t m)
{
    char k[160];
    if (key && strlen(key) > 120) {
        char tmp[128];
        memcpy(tmp, key, 120);
        tmp[120] = '\0';
        keyfor(k, sizeof k, c, tmp);
    } else {
        keyfor(k, sizeof k, c, key);
    }
    sl_map_put(&L->doc->marks, k, pack(m));
}

/* PyYAML's YAML 1.1 implicit resolvers, for plain scalars only. */
static bool match_any(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static sl_value *resolve_int(const char *s)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!*p)
        return NULL;
    char clean[80];
    size_t n = 0;
    int base = 10;
    if (p[0] == '0' && p[1] == 'b') {
        base = 2;
        p += 2;
    } else if (p[0] == '0' && p[1] == 'x') {
        base = 16;
        p += 2;
    } else if (p[0] == '0' && p[1] == 'o') {
        base = 8;
        p += 2;
    } else if (p[0] == '0' && p[1]) {
        base = 8;
        p += 1;
    }
    if (!*p)
        return NULL;
    for (; *p; p++) {
        if (*p == '_')
            continue;
        int ok = base == 16 ? isxdigit((unsigned char)*p)
                 : base == 10 ? isdigit((unsigned char)*p)
                 : base == 8 ? (*p >= '0' && *p <= '7')
                             : (*p == '0' || *p == '1');
        if (!ok || n + 1 >= sizeof clean)
            return NULL;
        clean[n++] = *p;
    }
    if (n == 0)
        return NULL;
    clean[n] = '\0';
    errno = 0;
    unsigned long long u = strtoull(clean, NULL, base);
    if (errno || u > (unsigned long long)INT64_MAX + (neg ? 1u : 0u))
        return NULL; /* too big for int64: PyYAML makes a bignum; we keep the text */
    long long v = neg ? (long long)(0 - u) : (long long)u;
    return json_integer(v);
}

static sl_value *resolve_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0)
        return NULL; /* JSON has no infinities; keep such rare values as text */
    if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0)
        return NULL;
    /* [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?  (PyYAML needs the dot) */
    char clean[128];
    size_t n = 0;
    bool dot = false, digits = false;
    if (s[0] == '+' || s[0] == '-')
        clean[n++] = s[0];
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '_')
            continue;
        if (*p == '.') {
            if (dot)
                return NULL;
            dot = true;
        } else if (isdigit((unsigned char)*p)) {
            digits = true;
        } else {
            return NULL;
        }
        if (n + 1 >= sizeof clean)
            return NULL;
        clean[n++] = *p;
    }
    if (!dot || !digits)
        return NULL;
    if (*p) { /* exponent: PyYAML requires a sign */
        if (n + 1 >= sizeof clean)
            return NULL;
        clean[n++] = *p++;
        if (*p != '+' && *p != '-')
            return NULL;
        clean[n++] = *p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        for (; *p; p++) {
            if (!isdigit((unsigned char)*p) || n + 1 >= sizeof clean)
                return NULL;
            clean[n++] = *p;
        }
    }
    clean[n] = '\0';
    return json_real(strtod(clean, NULL));
}

static sl_value *resolve_plain(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                        "on", "On", "ON", "y", "Y", NULL};
    static const char *const falses[] = {"no", "No", "NO", "false", "False", "FALSE",
                                         "off", "Off", "OFF", "n", "N", NULL};
    if (strlen(s) != len) /* embedded NUL: keep as text */
        return json_stringn(s, len);
    if (match_any(s, nulls))
        return json_null();
    /* PyYAML's bool resolver does not include y/n; drop them. */
    if (match_any(s, trues) && strcmp(s, "y") && strcmp(s, "Y"))
        return json_true();
    if (match_any(s, falses) && strcmp(s, "n") && strcmp(s, "N"))
        return json_false();
    if (len && (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.')) {
        sl_value *v = resolve_int(s);
        if (!v)
            v = resolve_float(s);
        if (v)
            return v;
    }
    return json_stringn(s, len);
}

static int fail(loader *L, yaml_mark_t m, const char *what)
{
    return sl_err_set(L->err, SL_EPARSE, "%s:%zu:%zu: %s",
                      L->doc->path, m.line + 1, m.column + 1, what);
}

static int next(loader *L, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&L->parser, ev)) {
        yaml_mark_t m = L->parser.problem_mark;
        char msg[512];
        snprintf(msg, sizeof msg, "YAML syntax error: %s%s%s; fix the YAML at this place",
                 L->parser.problem ? L->parser.problem : "unknown problem",
                 L->parser.context ? " " : "", L->parser.context ? L->parser.context : "");
        return fail(L, m, msg);
    }
    return 0;
}

static int build(loader *L, yaml_event_t *ev, sl_value **out, int depth);

static void remember_anchor(loader *L, const yaml_char_t *name, sl_value *v, size_t before)
{
    if (!name)
        return;
    anchor *a = sl_xmalloc(sizeof *a);
    a->v = json_incref(v);
    a->count = L->nodes - before;
    anchor *old = sl_map_put(&L->anchors, (const char *)name, a);
    if (old) {
        json_decref(old->v);
        free(old);
    }
}

static int build_scalar(loader *L, yaml_event_t *ev, sl_value **out)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && strcmp(tag, "!") != 0) {
        if (strcmp(tag, YAML_STR_TAG) == 0)
            *out = json_stringn(s, len);
        else if (strcmp(tag, YAML_INT_TAG) == 0 || strcmp(tag, YAML_FLOAT_TAG) == 0 ||
                 strcmp(tag, YAML_BOOL_TAG) == 0 || strcmp(tag, YAML_NULL_TAG) == 0)
            *out = resolve_plain(s, len);
        else
            return fail(L, ev->start_mark, "unsupported YAML tag; Dify DSL files use plain YAML");
    } else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag) {
        *out = resolve_plain(s, len);
    } else {
        *out = json_stringn(s, len);
    }
    if (!*out) /* invalid UTF-8 */
        return fail(L, ev->start_mark, "text is not valid UTF-8; save the file as UTF-8");
    return 0;
}

static int build(loader *L, yaml_event_t *ev, sl_value **out, int depth)
{
    size_t before = L->nodes++;
    if (depth > MAX_DEPTH)
        return fail(L, ev->start_mark, "nesting deeper than 256 levels; flatten the data");
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (build_scalar(L, ev, out) < 0)
            return -1;
        remember_anchor(L, ev->data.scalar.anchor, *out, before);
        return 0;
    }
    case YAML_ALIAS_EVENT: {
        anchor *a = sl_map_get(&L->anchors, (const char *)ev->data.alias.anchor);
        if (!a)
            return fail(L, ev->start_mark, "alias to an unknown anchor");
        L->alias_nodes += a->count;
        if (L->alias_nodes > ALIAS_BUDGET)
            return fail(L, ev->start_mark,
                        "aliases expand to more than 1,000,000 values; refusing (alias bomb?)");
        *out = json_incref(a->v);
        return 0;
    }
    case YAML_SEQUENCE_START_EVENT: {
        sl_value *arr = json_array();
        yaml_char_t *anc = ev->data.sequence_start.anchor;
        char *ancname = anc ? sl_xstrdup((const char *)anc) : NULL;
        put_mark(L, arr, NULL, ev->start_mark);
        for (size_t i = 0;; i++) {
            yaml_event_t e;
            if (next(L, &e) < 0)
                goto seq_fail;
            if (e.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&e);
                break;
            }
            char idx[24];
            snprintf(idx, sizeof idx, "#%zu", i);
            put_mark(L, arr, idx, e.start_mark);
            sl_value *item = NULL;
            int rc = build(L, &e, &item, depth + 1);
            yaml_event_delete(&e);
            if (rc < 0)
                goto seq_fail;
            json_array_append_new(arr, item);
        }
        remember_anchor(L, (const yaml_char_t *)ancname, arr, before);
        free(ancname);
        *out = arr;
        return 0;
    seq_fail:
        free(ancname);
        json_decref(arr);
        return -1;
    }
    case YAML_MAPPING_START_EVENT: {
        sl_value *obj = json_object();
        yaml_char_t *anc = ev->data.mapping_start.anchor;
        char *ancname = anc ? sl_xstrdup((const char *)anc) : NULL;
        put_mark(L, obj, NULL, ev->start_mark);
        for (;;) {
            yaml_event_t ke, ve;
            if (next(L, &ke) < 0)
                goto map_fail;
            if (ke.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&ke);
                break;
            }
            sl_value *key = NULL;
            int rc = build(L, &ke, &key, depth + 1);
            yaml_mark_t km = ke.start_mark;
            yaml_event_delete(&ke);
            if (rc < 0)
                goto map_fail;
            char *k;
            if (json_is_string(key)) {
                k = sl_xstrdup(json_string_value(key));
            } else if (json_is_integer(key) || json_is_real(key) || json_is_boolean(key) ||
                       json_is_null(key)) {
                /* PyYAML keeps such keys typed; JSON objects need text keys. */
                sl_buf b;
                sl_buf_init(&b, 1024);
                if (json_is_boolean(key))
                    sl_buf_adds(&b, json_is_true(key) ? "True" : "False");
                else if (json_is_null(key))
                    sl_buf_adds(&b, "None");
                else
                    sl_value_text(key, &b);
                k = sl_buf_detach(&b);
            } else {
                json_decref(key);
                fail(L, km, "a mapping key must be a plain value, not a list or mapping");
                goto map_fail;
            }
            json_decref(key);
            if (next(L, &ve) < 0) {
                free(k);
                goto map_fail;
            }
            put_mark(L, obj, k, ve.start_mark);
            sl_value *val = NULL;
            rc = build(L, &ve, &val, depth + 1);
            yaml_event_delete(&ve);
            if (rc < 0) {
                free(k);
                goto map_fail;
            }
            json_object_set_new(obj, k, val);
            free(k);
        }
        remember_anchor(L, (const yaml_char_t *)ancname, obj, before);
        free(ancname);
        *out = obj;
        return 0;
    map_fail:
        free(ancname);
        json_decref(obj);
        return -1;
    }
    default:
        return fail(L, ev->start_mark, "unexpected YAML event");
    }
}

int sl_yaml_parse(const char *text, size_t len, const char *path, sl_yaml_doc *doc, sl_err *err)
{
    memset(doc, 0, sizeof *doc);
    doc->path = sl_xstrdup(path ? path : "<input>");
    sl_map_init(&doc->marks);
    loader L = {.doc = doc, .err = err};
    sl_map_init(&L.anchors);
    if (!yaml_parser_initialize(&L.parser))
        return sl_err_set(err, SL_ENOMEM, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&L.parser, (const unsigned char *)text, len);
    int rc = -1;
    yaml_event_t ev;
    bool have_doc = false;
    for (;;) {
        if (next(&L, &ev) < 0)
            goto out;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT && have_doc) {
            fail(&L, ev.start_mark, "more than one YAML document; a DSL file holds exactly one");
            yaml_event_delete(&ev);
            goto out;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        have_doc = true;
        int r = build(&L, &ev, &doc->root, 0);
        yaml_event_delete(&ev);
        if (r < 0)
            goto out;
    }
    if (!doc->root)
        doc->root = json_null();
    rc = 0;
out:
    yaml_parser_delete(&L.parser);
    for (size_t i = 0; i < L.anchors.cap; i++) {
        anchor *a = L.anchors.slots[i].key ? L.anchors.slots[i].val : NULL;
        if (a) {
            json_decref(a->v);
            free(a);
        }
    }
    sl_map_release(&L.anchors);
    if (rc < 0) {
        json_decref(doc->root);
        doc->root = NULL;
    }
    return rc;
}

void sl_yaml_doc_release(sl_yaml_doc *doc)
{
    json_decref(doc->root);
    doc->root = NULL;
    free(doc->path);
    doc->path = NULL;
    sl_map_release(&doc->marks);
}

static sl_mark lookup(const sl_yaml_doc *doc, const void *c, const char *key)
{
    char k[160];
    if (key && strlen(key) > 120) {
        char tmp[128];
        memcpy(tmp, key, 120);
        tmp[120] = '\0';
        keyfor(k, sizeof k, c, tmp);
    } else {
        keyfor(k, sizeof k, c, key);
    }
    void *p = sl_map_get(&doc->marks, k);
    if (p)
        return unpack(p);
    sl_mark none = {0, 0};
    return none;
}

sl_mark sl_yaml_mark(const sl_yaml_doc *doc, const sl_value *c)
{
    return lookup(doc, c, NULL);
}

sl_mark sl_yaml_key_mark(const sl_yaml_doc *doc, const sl_value *obj, const char *key)
{
    sl_mark m = lookup(doc, obj, key);
    return m.line ? m : lookup(doc, obj, NULL);
}

sl_mark sl_yaml_index_mark(const sl_yaml_doc *doc, const sl_value *arr, size_t i)
{
    char idx[24];
    snprintf(idx, sizeof idx, "#%zu", i);
    sl_mark m = lookup(doc, arr, idx);
    return m.line ? m : lookup(doc, arr, NULL);
}

/* ---- emitter ---- */

static bool needs_quotes(const char *s, size_t len)
{
    if (len == 0)
        return true;
    sl_value *r = resolve_plain(s, len);
    bool plain_ok = json_is_string(r);
    json_decref(r);
    return !plain_ok;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t len, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, 1, 1, style);
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit_value(yaml_emitter_t *em, const sl_value *v)
{
    yaml_event_t ev;
    char num[40];
    switch (json_typeof(v)) {
    case JSON_NULL: return emit_scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE: return emit_scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE: return emit_scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE);
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        sl_fmt_double(json_real_value(v), num);
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE);
    case JSON_STRING: {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        yaml_scalar_style_t st = needs_quotes(s, len) ? YAML_SINGLE_QUOTED_SCALAR_STYLE
                                                      : YAML_ANY_SCALAR_STYLE;
        return emit_scalar(em, s, len, st);
    }
    case JSON_ARRAY:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return -1;
        for (size_t i = 0; i < json_array_size(v); i++)
            if (emit_value(em, json_array_get(v, i)) < 0)
                return -1;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev) ? 0 : -1;
    case JSON_OBJECT: {
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return -1;
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e) {
            size_t kl = strlen(k);
            if (emit_scalar(em, k, kl, needs_quotes(k, kl) ? YAML_SINGLE_QUOTED_SCALAR_STYLE
                                                           : YAML_ANY_SCALAR_STYLE) < 0)
                return -1;
            if (emit_value(em, e) < 0)
                return -1;
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    }
    return -1;
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return sl_buf_add(data, buffer, size) == 0;
}

int sl_yaml_emit(const sl_value *v, sl_buf *out, sl_err *err)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return sl_err_set(err, SL_ENOMEM, "cannot initialise the YAML emitter");
    yaml_emitter_set_output(&em, write_handler, out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    int rc = -1;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (!yaml_emitter_emit(&em, &ev))
        goto out;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if (!yaml_emitter_emit(&em, &ev))
        goto out;
    if (emit_value(&em, v) < 0)
        goto out;
    yaml_document_end_event_initialize(&ev, 1);
    if (!yaml_emitter_emit(&em, &ev))
        goto out;
    yaml_stream_end_event_initialize(&ev);
    if (!yaml_emitter_emit(&em, &ev))
        goto out;
    rc = 0;
out:
    if (rc < 0)
        sl_err_set(err, out->toobig ? SL_ELIMIT : SL_EIO, "cannot write YAML: %s",
                   em.problem ? em.problem : out->toobig ? "output too large" : "emitter error");
    yaml_emitter_delete(&em);
    return rc;
}
