#include "dsl/yaml.h"
#include "dsl/blockyaml.h"

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
    const char *text;      /* the input, to place reader errors */
} loader;

typedef struct {
    sl_value *v;
    size_t count;          /* nodes in the anchored subtree */
} anchor;

/* The mark table: open addressing on a 64-bit hash of (container, key).
 * Two different keys of one container colliding in 64 bits would only
 * misplace an error message, so keys themselves are not stored; this keeps
 * loading a 1,000-node file to a few milliseconds. */
typedef struct {
    uint64_t h; /* 0 = empty */
    int line, col;
} mark_slot;

struct sl_marks {
    mark_slot *slots;
    size_t n, cap;
};

static uint64_t mark_hash(const void *c, const char *key)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)c;
    h *= 1099511628211ULL;
    if (key)
        for (const unsigned char *p = (const unsigned char *)key; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h ? h : 1;
}

static void marks_put(struct sl_marks *t, uint64_t h, int line, int col)
{
    if ((t->n + 1) * 4 > t->cap * 3) {
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        mark_slot *ns = sl_xcalloc(ncap, sizeof *ns);
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].h)
                continue;
            size_t j = t->slots[i].h & (ncap - 1);
            while (ns[j].h)
                j = (j + 1) & (ncap - 1);
            ns[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = ns;
        t->cap = ncap;
    }
    size_t j = h & (t->cap - 1);
    while (t->slots[j].h && t->slots[j].h != h)
        j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].h)
        t->n++;
    t->slots[j].h = h;
    t->slots[j].line = line;
    t->slots[j].col = col;
}

static const mark_slot *marks_get(const struct sl_marks *t, uint64_t h)
{
    if (!t || !t->cap)
        return NULL;
    size_t j = h & (t->cap - 1);
    while (t->slots[j].h) {
        if (t->slots[j].h == h)
            return &t->slots[j];
        j = (j + 1) & (t->cap - 1);
    }
    return NULL;
}

static void put_mark(loader *L, const void *c, const char *key, yaml_mark_t m)
{
    if (!L->doc->marks)
        return;
    marks_put(L->doc->marks, mark_hash(c, key), (int)m.line + 1, (int)m.column + 1);
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
    } else if (strchr(p, ':')) {
        /* YAML 1.1 sexagesimal: 190:20:30 is 190*3600 + 20*60 + 30. */
        if (p[0] == '0')
            return NULL;
        unsigned long long acc = 0;
        const char *q = p;
        bool first = true;
        while (*q) {
            unsigned long long part = 0;
            int digits = 0;
            for (; *q && *q != ':'; q++) {
                if (*q == '_' && first)
                    continue;
                if (!isdigit((unsigned char)*q))
                    return NULL;
                part = part * 10 + (unsigned long long)(*q - '0');
                digits++;
                if (part > (1ULL << 40))
                    return NULL;
            }
            if (!digits || (!first && (digits > 2 || part > 59)))
                return NULL;
            if (acc > (1ULL << 40))
                return NULL;
            acc = acc * 60 + part;
            first = false;
            if (*q == ':')
                q++;
            else
                break;
        }
        if (p[strlen(p) - 1] == ':' || !isdigit((unsigned char)p[0]))
            return NULL;
        return json_integer(neg ? -(json_int_t)acc : (json_int_t)acc);
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
    /* PyYAML's float resolver:
     *   [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
     *   \.[0-9][0-9_]*([eE][-+][0-9]+)?          (no sign allowed)
     *   [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*  (sexagesimal)
     *   [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN): JSON has no such numbers,
     *   so they stay text here. */
    const char *p = s;
    bool neg = false, sign = false;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        sign = true;
        p++;
    }
    /* The cleaned text is never longer than the scalar. */
    char small[128];
    size_t slen = strlen(s);
    char *clean = slen + 2 <= sizeof small ? small : sl_xmalloc(slen + 2);
    sl_value *res = NULL;
    size_t n = 0;
    if (neg)
        clean[n++] = '-';
    if (*p == '.') {
        if (sign || !isdigit((unsigned char)p[1]))
            goto out;
    } else if (!isdigit((unsigned char)*p)) {
        goto out;
    }
    /* integer part, possibly sexagesimal */
    double sexa = 0;
    bool is_sexa = false;
    const char *ip = p;
    for (; *p && *p != '.'; p++) {
        if (*p == ':') {
            is_sexa = true;
            continue;
        }
        if (*p != '_' && !isdigit((unsigned char)*p))
            goto out;
    }
    if (*p != '.')
        goto out;
    if (is_sexa) {
        const char *q = ip;
        bool first = true;
        while (q < p) {
            double part = 0;
            int digits = 0;
            for (; q < p && *q != ':'; q++) {
                if (*q == '_')
                    continue;
                part = part * 10 + (*q - '0');
                digits++;
            }
            if (!digits || (!first && (digits > 2 || part > 59)))
                goto out;
            sexa = sexa * 60 + part;
            first = false;
            if (q < p)
                q++;
        }
    } else {
        for (const char *q = ip; q < p; q++)
            if (*q != '_')
                clean[n++] = *q;
    }
    /* fraction */
    clean[n++] = *p++;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '_')
            continue;
        if (!isdigit((unsigned char)*p))
            goto out;
        clean[n++] = *p;
    }
    if (*p) { /* exponent: PyYAML requires a sign */
        if (is_sexa)
            goto out;
        clean[n++] = *p++;
        if (*p != '+' && *p != '-')
            goto out;
        clean[n++] = *p++;
        if (!isdigit((unsigned char)*p))
            goto out;
        for (; *p; p++) {
            if (!isdigit((unsigned char)*p))
                goto out;
            clean[n++] = *p;
        }
    }
    clean[n] = '\0';
    if (is_sexa) {
        double frac = strtod(clean + (neg ? 1 : 0), NULL); /* ".xyz" */
        double v = sexa + frac;
        res = json_real(neg ? -v : v);
        goto out;
    }
    res = json_real(strtod(clean, NULL));
out:
    if (clean != small)
        free(clean);
    return res;
}

/* True when a plain scalar is text whatever the resolver says: quoted, or
 * plain but unable to start a null, bool or number. */
static bool text_only(const char *s, size_t len)
{
    return len && (len > 5 || !strchr("~nNtTfFyYoO", s[0])) && !strchr("0123456789+-.", s[0]);
}

static sl_value *resolve_plain(const char *s, size_t len)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                        "on", "On", "ON", NULL};
    static const char *const falses[] = {"no", "No", "NO", "false", "False", "FALSE",
                                         "off", "Off", "OFF", NULL};
    if (strlen(s) != len) /* embedded NUL: keep as text */
        return json_stringn_nocheck(s, len);
    if (len == 0)
        return json_null();
    if (text_only(s, len))
        return json_stringn_nocheck(s, len);
    if (len <= 5 && !isdigit((unsigned char)s[0])) {
        if (match_any(s, nulls))
            return json_null();
        if (match_any(s, trues))
            return json_true();
        if (match_any(s, falses))
            return json_false();
    }
    if (len && (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' || s[0] == '.')) {
        sl_value *v = resolve_int(s);
        if (!v)
            v = resolve_float(s);
        if (v)
            return v;
    }
    return json_stringn(s, len);
}

sl_value *sl_yaml_resolve_plain(const char *s, size_t len)
{
    /* The resolver wants a terminated string; callers pass slices. */
    char small[256];
    if (memchr(s, '\0', len))
        return json_stringn_nocheck(s, len);
    char *t = len < sizeof small ? small : sl_xmalloc(len + 1);
    memcpy(t, s, len);
    t[len] = '\0';
    sl_value *v = resolve_plain(t, len);
    if (t != small)
        free(t);
    return v;
}

/* True when a scalar event is text whatever the resolver says: quoted, or
 * plain but unable to start a null, bool or number.  libyaml has already
 * checked the input is valid UTF-8, so values skip jansson's check. */
static bool plain_text(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (strlen(s) != len || len == 0)
        return false;
    return ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || text_only(s, len);
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
        if (L->parser.error == YAML_READER_ERROR) {
            /* Encoding errors come with a byte offset, not a mark. */
            memset(&m, 0, sizeof m);
            for (size_t i = 0; i < L->parser.problem_offset && L->text[i]; i++) {
                if (L->text[i] == '\n') {
                    m.line++;
                    m.column = 0;
                } else {
                    m.column++;
                }
            }
        }
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
        *out = json_stringn_nocheck(s, len);
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
        /* Count what the alias stands for as if it were written out, so an
         * anchor built from aliases is as big as its expansion. */
        L->alias_nodes += a->count;
        L->nodes += a->count;
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
            if (L->doc->marks) {
                char idx[24];
                snprintf(idx, sizeof idx, "#%zu", i);
                put_mark(L, arr, idx, e.start_mark);
            }
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
        sl_value *merges = NULL;
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
            char *k;
            yaml_mark_t km = ke.start_mark;
            int rc;
            bool merge = ke.type == YAML_SCALAR_EVENT &&
                         ke.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                         ke.data.scalar.length == 2 &&
                         !strcmp((const char *)ke.data.scalar.value, "<<");
            if (ke.type == YAML_SCALAR_EVENT && !ke.data.scalar.anchor && !ke.data.scalar.tag &&
                plain_text(&ke)) {
                /* The common case, a text key: take libyaml's buffer as is
                 * instead of building a value and copying it twice. */
                k = (char *)ke.data.scalar.value;
                ke.data.scalar.value = NULL;
                L->nodes++;
                yaml_event_delete(&ke);
            } else {
                sl_value *key = NULL;
                rc = build(L, &ke, &key, depth + 1);
                yaml_event_delete(&ke);
                if (rc < 0)
                    goto map_fail;
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
            }
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
            if (merge && (json_is_object(val) || json_is_array(val))) {
                if (!merges)
                    merges = json_array();
                json_array_append_new(merges, val);
            } else {
                json_object_set_new_nocheck(obj, k, val);
            }
            free(k);
        }
        /* YAML 1.1 merge keys (`<<: *base`), as safe_load applies them:
         * keys written in the mapping win, then earlier merges win. */
        for (size_t m = 0; m < json_array_size(merges); m++) {
            sl_value *src = json_array_get(merges, m);
            size_t parts = json_is_array(src) ? json_array_size(src) : 1;
            for (size_t j = 0; j < parts; j++) {
                sl_value *one = json_is_array(src) ? json_array_get(src, j) : src;
                const char *mk;
                sl_value *mv;
                json_object_foreach(one, mk, mv) {
                    if (!json_object_get(obj, mk))
                        json_object_set(obj, mk, mv);
                }
            }
        }
        json_decref(merges);
        remember_anchor(L, (const yaml_char_t *)ancname, obj, before);
        free(ancname);
        *out = obj;
        return 0;
    map_fail:
        json_decref(merges);
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
    return sl_yaml_parse_ex(text, len, path, doc, true, err);
}

int sl_yaml_parse_ex(const char *text, size_t len, const char *path, sl_yaml_doc *doc,
                     bool marks, sl_err *err)
{
    memset(doc, 0, sizeof *doc);
    doc->path = sl_xstrdup(path ? path : "<input>");
    doc->marks = marks ? sl_xcalloc(1, sizeof *doc->marks) : NULL;
    /* Without marks, Dify's own block style takes the fast reader; it
     * declines anything unusual and libyaml below does the rest. */
    if (!marks && sl_blockyaml_parse(text, len, &doc->root) == 0)
        return 0;
    loader L = {.doc = doc, .err = err, .text = text};
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
    if (rc < 0) /* a failed parse leaves nothing to release */
        sl_yaml_doc_release(doc);
    return rc;
}

void sl_yaml_doc_release(sl_yaml_doc *doc)
{
    json_decref(doc->root);
    doc->root = NULL;
    free(doc->path);
    doc->path = NULL;
    if (doc->marks)
        free(doc->marks->slots);
    free(doc->marks);
    doc->marks = NULL;
}

static sl_mark lookup(const sl_yaml_doc *doc, const void *c, const char *key)
{
    const mark_slot *s = marks_get(doc->marks, mark_hash(c, key));
    sl_mark m = {s ? s->line : 0, s ? s->col : 0};
    return m;
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
    /* PyYAML reads these as floats; sluice keeps them as text, so quote
     * them to mean text for both. */
    const char *p = s + (s[0] == '-' || s[0] == '+');
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") || !strcmp(s, ".nan") ||
        !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
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
    case JSON_REAL: {
        sl_fmt_double(json_real_value(v), num);
        /* YAML 1.1 floats need a dot: 1e+16 would read back as text, so
         * write 1.0e+16 as PyYAML does. */
        char *e = strchr(num, 'e');
        if (e && !strchr(num, '.')) {
            memmove(e + 2, e, strlen(e) + 1);
            e[0] = '.';
            e[1] = '0';
        }
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE);
    }
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
