/*
 * oatree — see oatree.h.
 */
#include "tools/oatree.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "dsl/yaml.h"

#define BLOCK (256u << 10)
#define MAX_DEPTH 200
#define SMALL_OBJ 8      /* objects up to this many keys are searched in order */
#define MAX_KEY 1024     /* libyaml's longest simple key */
#define MAX_PROBES 64    /* a key's farthest place from its hash in an index */

typedef struct block {
    struct block *next;
    size_t used, cap;
    max_align_t mem[];
} block;

struct oat_tree {
    block *blocks;
    size_t first;        /* the first block's size: small for a small text */
    oat_node root;
    sl_value *src;       /* oat_from_value's value, kept */
};

void *oat_alloc(oat_tree *t, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    block *b = t->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = !b && t->first ? t->first : BLOCK;
        if (cap < n)
            cap = n;
        b = sl_xmalloc(sizeof *b + cap);
        b->cap = cap;
        b->used = 0;
        /* a big one-off goes behind the current block, which keeps filling */
        if (t->blocks && n > BLOCK) {
            b->next = t->blocks->next;
            t->blocks->next = b;
        } else {
            b->next = t->blocks;
            t->blocks = b;
        }
    }
    void *p = (char *)b->mem + b->used;
    b->used += n;
    return p;
}

char *oat_strdup(oat_tree *t, const char *s, size_t n)
{
    char *p = oat_alloc(t, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void oat_free(oat_tree *t)
{
    if (!t)
        return;
    for (block *b = t->blocks, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    json_decref(t->src);
    free(t);
}

const oat_node *oat_root(const oat_tree *t)
{
    return &t->root;
}

static bool key_eq(const oat_pair *a, const char *k, size_t kn)
{
    return a->kn == kn && !memcmp(a->k, k, kn);
}

static uint32_t key_hash(const char *k, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

/* A large object's hash table: 2^k slots (at least twice its entries) of
 * entry index + 1, 0 for none. */
static uint32_t slots_of(uint32_t n)
{
    uint32_t c = 16;
    while (c < 2 * n)
        c *= 2;
    return c;
}

/* Indexes a large object; false when two keys are equal, or when keys
 * crowd one place of the table (made to collide?): then the object has no
 * index (lookups go in order) and the readers decline it. */
static bool index_object(oat_tree *t, oat_node *n)
{
    if (n->n <= SMALL_OBJ) {
        for (uint32_t i = 1; i < n->n; i++)
            for (uint32_t j = 0; j < i; j++)
                if (key_eq(&n->u.o[j], n->u.o[i].k, n->u.o[i].kn))
                    return false;
        return true;
    }
    uint32_t cap = slots_of(n->n);
    n->ix = oat_alloc(t, cap * sizeof *n->ix);
    memset(n->ix, 0, cap * sizeof *n->ix);
    for (uint32_t i = 0; i < n->n; i++) {
        const oat_pair *p = &n->u.o[i];
        uint32_t h = key_hash(p->k, p->kn) & (cap - 1), probes = 0;
        while (n->ix[h]) {
            if (key_eq(&n->u.o[n->ix[h] - 1], p->k, p->kn) || ++probes > MAX_PROBES) {
                n->ix = NULL;
                return false;
            }
            h = (h + 1) & (cap - 1);
        }
        n->ix[h] = i + 1;
    }
    return true;
}

const oat_node *oat_get(const oat_node *obj, const char *key)
{
    if (!obj || obj->kind != OAT_OBJ)
        return NULL;
    if (!obj->ix) {
        for (uint32_t i = 0; i < obj->n; i++)
            if (obj->u.o[i].k[0] == key[0] && !strcmp(obj->u.o[i].k, key))
                return &obj->u.o[i].v;
        return NULL;
    }
    size_t kn = strlen(key);
    uint32_t cap = slots_of(obj->n), h = key_hash(key, kn) & (cap - 1);
    for (int probes = 0; obj->ix[h] && probes <= MAX_PROBES; probes++) {
        const oat_pair *p = &obj->u.o[obj->ix[h] - 1];
        if (key_eq(p, key, kn))
            return &p->v;
        h = (h + 1) & (cap - 1);
    }
    return NULL;
}

sl_value *oat_value(const oat_node *n)
{
    switch (n->kind) {
    case OAT_TRUE: return json_true();
    case OAT_FALSE: return json_false();
    case OAT_INT: return json_integer(n->u.i);
    case OAT_REAL: return json_real(n->u.r);
    case OAT_STR: return json_stringn_nocheck(n->u.s, n->n);
    case OAT_ARR: {
        sl_value *a = json_array();
        for (uint32_t i = 0; i < n->n; i++)
            json_array_append_new(a, oat_value(&n->u.a[i]));
        return a;
    }
    case OAT_OBJ: {
        sl_value *o = json_object();
        for (uint32_t i = 0; i < n->n; i++)
            json_object_setn_new_nocheck(o, n->u.o[i].k, n->u.o[i].kn, oat_value(&n->u.o[i].v));
        return o;
    }
    default: return json_null();
    }
}

/* ---- from a value ---- */

static void from_value(oat_tree *t, const sl_value *v, oat_node *out, int depth)
{
    memset(out, 0, sizeof *out);
    out->src = v;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        out->kind = OAT_OBJ;
        out->n = (uint32_t)json_object_size(v);
        out->u.o = oat_alloc(t, out->n * sizeof *out->u.o + 1);
        uint32_t i = 0;
        const char *k;
        sl_value *x;
        json_object_foreach((sl_value *)v, k, x) {
            if (i >= out->n)
                break;
            out->u.o[i].k = k;
            out->u.o[i].kn = (uint32_t)strlen(k);
            from_value(t, x, &out->u.o[i].v, depth + 1);
            i++;
        }
        out->n = i;
        index_object(t, out);
        break;
    }
    case JSON_ARRAY:
        out->kind = OAT_ARR;
        out->n = (uint32_t)json_array_size(v);
        out->u.a = oat_alloc(t, out->n * sizeof *out->u.a + 1);
        for (uint32_t i = 0; i < out->n; i++)
            from_value(t, json_array_get(v, i), &out->u.a[i], depth + 1);
        break;
    case JSON_STRING:
        out->kind = OAT_STR;
        out->u.s = json_string_value(v);
        out->n = (uint32_t)json_string_length(v);
        break;
    case JSON_INTEGER:
        out->kind = OAT_INT;
        out->u.i = json_integer_value(v);
        break;
    case JSON_REAL:
        out->kind = OAT_REAL;
        out->u.r = json_real_value(v);
        break;
    case JSON_TRUE: out->kind = OAT_TRUE; break;
    case JSON_FALSE: out->kind = OAT_FALSE; break;
    default: out->kind = OAT_NULL; break;
    }
}

oat_tree *oat_from_value(const sl_value *v)
{
    oat_tree *t = sl_xcalloc(1, sizeof *t);
    t->src = json_incref((sl_value *)v);
    from_value(t, v, &t->root, 0);
    return t;
}

/* ---- the readers' common parts ---- */

typedef struct {
    oat_tree *t;
    const char *s, *end;
    int depth;
    oat_node *vs;        /* values of the arrays being read */
    size_t nv, cv;
    oat_pair *ps;        /* entries of the objects being read */
    size_t np, cp;
    bool marker;         /* YAML: a document marker was met */
} rd;

static void push_value(rd *r, const oat_node *v)
{
    if (r->nv == r->cv) {
        r->cv = r->cv ? r->cv * 2 : 256;
        r->vs = sl_xrealloc(r->vs, r->cv * sizeof *r->vs);
    }
    r->vs[r->nv++] = *v;
}

static void push_pair(rd *r, const char *k, size_t kn, const oat_node *v)
{
    if (r->np == r->cp) {
        r->cp = r->cp ? r->cp * 2 : 256;
        r->ps = sl_xrealloc(r->ps, r->cp * sizeof *r->ps);
    }
    r->ps[r->np++] = (oat_pair){k, (uint32_t)kn, *v};
}

static void end_array(rd *r, size_t base, oat_node *out)
{
    memset(out, 0, sizeof *out);
    out->kind = OAT_ARR;
    out->n = (uint32_t)(r->nv - base);
    out->u.a = oat_alloc(r->t, out->n * sizeof *out->u.a + 1);
    if (out->n)
        memcpy(out->u.a, r->vs + base, out->n * sizeof *out->u.a);
    r->nv = base;
}

static bool end_object(rd *r, size_t base, oat_node *out)
{
    memset(out, 0, sizeof *out);
    out->kind = OAT_OBJ;
    out->n = (uint32_t)(r->np - base);
    out->u.o = oat_alloc(r->t, out->n * sizeof *out->u.o + 1);
    if (out->n)
        memcpy(out->u.o, r->ps + base, out->n * sizeof *out->u.o);
    r->np = base;
    return index_object(r->t, out);
}

static void text_node(rd *r, const char *s, size_t n, oat_node *out)
{
    memset(out, 0, sizeof *out);
    out->kind = OAT_STR;
    out->n = (uint32_t)n;
    out->u.s = oat_strdup(r->t, s, n);
}

static void add_utf8(char *o, size_t *k, uint32_t cp)
{
    if (cp < 0x80)
        o[(*k)++] = (char)cp;
    else if (cp < 0x800) {
        o[(*k)++] = (char)(0xc0 | (cp >> 6));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*k)++] = (char)(0xe0 | (cp >> 12));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*k)++] = (char)(0xf0 | (cp >> 18));
        o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static int hex4(const char *p, const char *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = sl_hex_digit((unsigned char)p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Valid UTF-8 throughout; `yaml`: also none of what YAML treats specially
 * or refuses (controls but '\n', tabs, CR, DEL, C1, NEL, LS, PS, BOM,
 * U+FFFE/FFFF), so the YAML reader never has to think about them. */
static bool text_ok(const unsigned char *p, const unsigned char *end, bool yaml)
{
    while (p < end) {
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            const uint64_t hi = 0x8080808080808080ULL, ones = 0x0101010101010101ULL,
                           low7 = 0x7f7f7f7f7f7f7f7fULL;
            uint64_t nl = w ^ (0x0aULL * ones), del = w ^ (0x7fULL * ones);
            uint64_t is_nl = ~(((nl & low7) + low7) | nl) & hi;
            uint64_t is_del = ~(((del & low7) + low7) | del) & hi;
            uint64_t is_ctl = ~(w + 0x60ULL * ones) & hi;
            if ((w & hi) == 0 && (!yaml || ((is_ctl & ~is_nl) == 0 && is_del == 0))) {
                p += 8;
                continue;
            }
        }
        unsigned c = *p;
        if (c < 0x80) {
            if (yaml && ((c < 0x20 && c != '\n') || c == 0x7f))
                return false;
            p++;
            continue;
        }
        uint32_t cp;
        int n;
        if (c >= 0xc2 && c <= 0xdf) {
            cp = c & 0x1f;
            n = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            cp = c & 0x0f;
            n = 2;
        } else if (c >= 0xf0 && c <= 0xf4) {
            cp = c & 0x07;
            n = 3;
        } else
            return false;
        if (end - p <= n)
            return false;
        for (int i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        if (yaml && ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
                     cp == 0xfeff || cp == 0xfffe || cp == 0xffff))
            return false;
        p += n + 1;
    }
    return true;
}

static oat_tree *finish(rd *r, bool ok)
{
    free(r->vs);
    free(r->ps);
    if (ok)
        return r->t;
    oat_free(r->t);
    return NULL;
}

/* ---- JSON, as jansson reads it (JSON_REJECT_DUPLICATES) ---- */

static void json_ws(rd *r)
{
    while (r->s < r->end && (*r->s == ' ' || *r->s == '\n' || *r->s == '\t' || *r->s == '\r'))
        r->s++;
}

/* A string at r->s (the opening quote) into the tree: its text and length. */
static bool json_text(rd *r, const char **out, size_t *outn)
{
    const char *p = ++r->s, *end = r->end;
    bool esc = false;
    const uint64_t ones = 0x0101010101010101ULL, hi = 0x8080808080808080ULL;
    while (end - p >= 8) {  /* eight bytes at a time while none is '"', '\\' or a control */
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t q = w ^ (0x22 * ones), b = w ^ (0x5c * ones);
        uint64_t stop = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - 0x20 * ones) & ~w);
        if (stop & hi)
            break;
        p += 8;
    }
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            esc = true;
            if (++p >= end)
                return false;
        }
        p++;
    }
    if (p >= end)
        return false;
    size_t n = (size_t)(p - r->s);
    if (!esc) {
        *out = oat_strdup(r->t, r->s, n);
        *outn = n;
        r->s = p + 1;
        return true;
    }
    char *o = oat_alloc(r->t, n + 1);
    size_t k = 0;
    for (const char *q = r->s; q < p; q++) {
        if (*q != '\\') {
            o[k++] = *q;
            continue;
        }
        q++;
        switch (*q) {
        case '"': case '\\': case '/': o[k++] = *q; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            int u = hex4(q + 1, p);
            if (u <= 0)  /* \u0000 is refused as jansson does without JSON_ALLOW_NUL */
                return false;
            q += 4;
            uint32_t cp = (uint32_t)u;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return false;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (p - q < 7 || q[1] != '\\' || q[2] != 'u')
                    return false;
                int lo = hex4(q + 3, p);
                if (lo < 0xdc00 || lo > 0xdfff)
                    return false;
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                q += 6;
            }
            add_utf8(o, &k, cp);
            break;
        }
        default: return false;
        }
    }
    o[k] = '\0';
    *out = o;
    *outn = k;
    r->s = p + 1;
    return true;
}

static bool json_number(rd *r, oat_node *out)
{
    const char *p = r->s, *end = r->end, *start = p;
    bool real = false;
    if (p < end && *p == '-')
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    if (*p == '0')
        p++;
    else
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    if (p < end && *p == '.') {
        real = true;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return false;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        real = true;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return false;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    char tmp[64];
    size_t n = (size_t)(p - start);
    if (n >= sizeof tmp)
        return false;  /* jansson reads it; so will the caller */
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    memset(out, 0, sizeof *out);
    errno = 0;
    if (real) {
        out->kind = OAT_REAL;
        out->u.r = strtod(tmp, NULL);
        if (errno == ERANGE && (out->u.r == HUGE_VAL || out->u.r == -HUGE_VAL))
            return false;
    } else {
        out->kind = OAT_INT;
        out->u.i = strtoll(tmp, NULL, 10);
        if (errno == ERANGE)
            return false;
    }
    r->s = p;
    return true;
}

static bool json_word(rd *r, const char *w, size_t n, int kind, oat_node *out)
{
    if ((size_t)(r->end - r->s) < n || memcmp(r->s, w, n))
        return false;
    r->s += n;
    memset(out, 0, sizeof *out);
    out->kind = (uint8_t)kind;
    return true;
}

static bool json_value(rd *r, oat_node *out)
{
    json_ws(r);
    if (r->s >= r->end)
        return false;
    switch (*r->s) {
    case '{': {
        if (++r->depth > MAX_DEPTH)
            return false;
        r->s++;
        size_t base = r->np;
        json_ws(r);
        if (r->s < r->end && *r->s == '}')
            r->s++;
        else
            for (;;) {
                json_ws(r);
                const char *k;
                size_t kn;
                if (r->s >= r->end || *r->s != '"' || !json_text(r, &k, &kn))
                    return false;
                json_ws(r);
                if (r->s >= r->end || *r->s != ':')
                    return false;
                r->s++;
                oat_node v;
                if (!json_value(r, &v))
                    return false;
                push_pair(r, k, kn, &v);
                json_ws(r);
                if (r->s < r->end && *r->s == ',') {
                    r->s++;
                    continue;
                }
                if (r->s < r->end && *r->s == '}') {
                    r->s++;
                    break;
                }
                return false;
            }
        r->depth--;
        return end_object(r, base, out);
    }
    case '[': {
        if (++r->depth > MAX_DEPTH)
            return false;
        r->s++;
        size_t base = r->nv;
        json_ws(r);
        if (r->s < r->end && *r->s == ']')
            r->s++;
        else
            for (;;) {
                oat_node v;
                if (!json_value(r, &v))
                    return false;
                push_value(r, &v);
                json_ws(r);
                if (r->s < r->end && *r->s == ',') {
                    r->s++;
                    continue;
                }
                if (r->s < r->end && *r->s == ']') {
                    r->s++;
                    break;
                }
                return false;
            }
        r->depth--;
        end_array(r, base, out);
        return true;
    }
    case '"': {
        const char *s;
        size_t n;
        if (!json_text(r, &s, &n))
            return false;
        memset(out, 0, sizeof *out);
        out->kind = OAT_STR;
        out->u.s = s;
        out->n = (uint32_t)n;
        return true;
    }
    case 't': return json_word(r, "true", 4, OAT_TRUE, out);
    case 'f': return json_word(r, "false", 5, OAT_FALSE, out);
    case 'n': return json_word(r, "null", 4, OAT_NULL, out);
    default: return json_number(r, out);
    }
}

static oat_tree *new_tree(size_t len)
{
    oat_tree *t = sl_xcalloc(1, sizeof *t);
    /* about what a text of len bytes needs, within one usual block */
    t->first = len < BLOCK / 8 ? len * 8 + 1024 : BLOCK;
    return t;
}

static oat_tree *parse_json(const char *text, size_t len, bool any)
{
    if (len >= UINT32_MAX || !text_ok((const unsigned char *)text,
                                      (const unsigned char *)text + len, false))
        return NULL;
    rd r = {.t = new_tree(len), .s = text, .end = text + len};
    json_ws(&r);
    bool ok = r.s < r.end && (any || *r.s == '{') && json_value(&r, &r.t->root);
    json_ws(&r);
    return finish(&r, ok && r.s == r.end);
}

oat_tree *oat_parse_json(const char *text, size_t len)
{
    return parse_json(text, len, false);
}

sl_value *oat_json_loads(const char *text, size_t len)
{
    oat_tree *t = parse_json(text, len, true);
    sl_value *v = t ? oat_value(&t->root) : json_loadb(text, len, JSON_DECODE_ANY, NULL);
    oat_free(t);
    return v;
}

/* ---- YAML, the subset (see oatree.h) ---- */

static const char *eol(const rd *r, const char *p)
{
    if (p >= r->end)
        return r->end;
    const char *q = memchr(p, '\n', (size_t)(r->end - p));
    return q ? q : r->end;
}

static const char *next_line(const rd *r, const char *p)
{
    const char *q = eol(r, p);
    return q < r->end ? q + 1 : r->end;
}

static int indent_of(const rd *r, const char *line)
{
    const char *p = line;
    while (p < r->end && *p == ' ')
        p++;
    return (int)(p - line);
}

/* The first line at or after `line` with content (blank lines and comment
 * lines skipped), its indent in *ind; NULL at the end. */
static const char *content_line(rd *r, const char *line, int *ind)
{
    while (line && line < r->end) {
        int i = indent_of(r, line);
        const char *c = line + i;
        if (c < r->end && *c != '\n' && *c != '#') {
            *ind = i;
            /* "---" or "..." at the start of a line mark documents: the
             * first one is skipped by the caller, any other declined */
            if (!i && r->end - c >= 3 && (!memcmp(c, "---", 3) || !memcmp(c, "...", 3)) &&
                (r->end - c == 3 || c[3] == ' ' || c[3] == '\n'))
                r->marker = true;
            return line;
        }
        line = next_line(r, line);
    }
    return NULL;
}

static bool at_end(const rd *r, const char *p)
{
    return p >= r->end || *p == '\n';
}

static bool is_dash(const rd *r, const char *p)
{
    return p < r->end && *p == '-' && (p + 1 >= r->end || p[1] == ' ' || p[1] == '\n');
}

/* Spaces, then the line's end or a comment: true with *p past the line. */
static bool rest_empty(const rd *r, const char *p)
{
    const char *s = p;
    while (p < r->end && *p == ' ')
        p++;
    return at_end(r, p) || (*p == '#' && p > s);
}

/* True when dsl/yaml reads this plain scalar as the same text, whatever
 * its resolver would make of it: what cannot be null, a bool or a number. */
static bool plain_is_text(const char *s, size_t n)
{
    static const char *const words[6][10] = {
        {NULL},
        {"~", NULL},
        {"on", "On", "ON", "no", "No", "NO", NULL},
        {"yes", "Yes", "YES", "off", "Off", "OFF", NULL},
        {"null", "Null", "NULL", "true", "True", "TRUE", NULL},
        {"false", "False", "FALSE", NULL},
    };
    if (!n)
        return false;
    switch (s[0]) {
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8':
    case '9': case '+': case '-': case '.':
        return false;
    case '~': case 'n': case 'N': case 't': case 'T': case 'f': case 'F': case 'y': case 'Y':
    case 'o': case 'O':
        if (n > 5)
            return true;
        for (const char *const *w = words[n]; *w; w++)
            if (!memcmp(*w, s, n))
                return false;
        return true;
    default:
        return true;
    }
}

static bool plain_node(rd *r, const char *s, size_t n, oat_node *out)
{
    if (plain_is_text(s, n)) {
        text_node(r, s, n, out);
        return true;
    }
    sl_value *v = sl_yaml_resolve_plain(s, n);
    bool ok = v != NULL;
    if (json_is_string(v))
        text_node(r, json_string_value(v), json_string_length(v), out);
    else if (ok) {
        memset(out, 0, sizeof *out);
        out->kind = json_is_integer(v) ? OAT_INT : json_is_real(v) ? OAT_REAL
                  : json_is_true(v) ? OAT_TRUE : json_is_false(v) ? OAT_FALSE : OAT_NULL;
        if (json_is_integer(v))
            out->u.i = json_integer_value(v);
        else if (json_is_real(v))
            out->u.r = json_real_value(v);
    }
    json_decref(v);
    return ok;
}

/* A plain key's text as dsl/yaml makes it: text, or a decimal integer
 * written the way it prints; anything else is declined. */
static bool plain_key(const char *s, size_t n)
{
    if (n == 2 && s[0] == '<' && s[1] == '<')
        return false;  /* a merge key */
    if (plain_is_text(s, n))
        return true;
    if (!n)
        return false;
    sl_value *v = sl_yaml_resolve_plain(s, n);
    bool text = json_is_string(v);
    json_decref(v);
    if (text)
        return true;
    if (n > 18 || (s[0] == '0' && n > 1))
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;  /* an int that prints as written */
}

/* Characters that start no plain scalar (1), and that end one in a flow
 * collection (2). */
static const unsigned char cls[256] = {
    [','] = 7, ['['] = 7, [']'] = 7, ['{'] = 7, ['}'] = 7, ['#'] = 5, ['&'] = 1, ['*'] = 1,
    ['!'] = 1, ['|'] = 1, ['>'] = 1, ['\''] = 1, ['"'] = 1, ['%'] = 1, ['@'] = 1, ['`'] = 1,
    [':'] = 4, ['?'] = 4, ['\n'] = 4,
};

static bool indicator(char c)
{
    return cls[(unsigned char)c] & 1;
}

static bool flow_end(char c)
{
    return cls[(unsigned char)c] & 2;
}

/* A quoted scalar at *pp on one line; *pp past the closing quote. */
static bool quoted(rd *r, const char **pp, const char **out, size_t *outn)
{
    const char *p = *pp, *le = eol(r, p);
    char q = *p++;
    const char *start = p;
    bool esc = false;
    while (p < le) {
        if (q == '\'' && *p == '\'') {
            if (p + 1 < le && p[1] == '\'') {
                esc = true;
                p += 2;
                continue;
            }
            break;
        }
        if (q == '"' && *p == '"')
            break;
        if (q == '"' && *p == '\\') {
            esc = true;
            if (p + 1 >= le)
                return false;  /* a line continued */
            p += 2;
            continue;
        }
        p++;
    }
    if (p >= le)
        return false;  /* not closed on its line: folded text, declined */
    size_t n = (size_t)(p - start);
    *pp = p + 1;
    if (!esc) {
        *out = oat_strdup(r->t, start, n);
        *outn = n;
        return true;
    }
    char *o = oat_alloc(r->t, n + 1);
    size_t k = 0;
    for (const char *s = start; s < p; s++) {
        if (q == '\'') {
            o[k++] = *s;
            if (*s == '\'')
                s++;
            continue;
        }
        if (*s != '\\') {
            o[k++] = *s;
            continue;
        }
        s++;
        switch (*s) {
        case '"': case '\\': case '/': o[k++] = *s; break;
        case ' ': o[k++] = ' '; break;
        case 'n': o[k++] = '\n'; break;
        case 't': o[k++] = '\t'; break;
        case 'r': o[k++] = '\r'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'u': {
            int cp = hex4(s + 1, p);
            if (cp <= 0 || (cp >= 0xd800 && cp <= 0xdfff))
                return false;
            s += 4;
            add_utf8(o, &k, (uint32_t)cp);
            break;
        }
        default: return false;  /* the rarer escapes: declined */
        }
    }
    o[k] = '\0';
    *out = o;
    *outn = k;
    return true;
}

static bool flow_value(rd *r, const char **pp, oat_node *out);

static void flow_ws(const char **pp, const char *le)
{
    while (*pp < le && **pp == ' ')
        (*pp)++;
}

/* A plain scalar in a flow collection: up to , [ ] { } or ": ". */
static bool flow_plain(rd *r, const char **pp, const char *le, const char **s, size_t *n)
{
    const char *p = *pp;
    if (p >= le || indicator(*p) || *p == '?' || *p == ':' ||
        (*p == '-' && (p + 1 >= le || p[1] == ' ' || flow_end(p[1]))))
        return false;
    const char *start = p;
    while (p < le && !flow_end(*p)) {
        if (!(cls[(unsigned char)*p] & 4)) {  /* nothing to look at */
            p++;
            continue;
        }
        if (*p == ':') {
            if (p + 1 < le && p[1] == ' ')
                break;
            return false;  /* "a:b" in a flow: libyaml's versions differ, declined */
        }
        if (*p == '?')
            return false;  /* an indicator in a flow, for some versions */
        if (*p == '#' && p[-1] == ' ')
            return false;
        p++;
    }
    const char *e = p;
    while (e > start && e[-1] == ' ')
        e--;
    *s = start;
    *n = (size_t)(e - start);
    *pp = p;
    (void)r;
    return *n > 0;
}

static bool flow_key(rd *r, const char **pp, const char *le, const char **k, size_t *kn)
{
    const char *p = *pp;
    if (p < le && (*p == '"' || *p == '\'')) {
        if (!quoted(r, &p, k, kn))
            return false;
    } else {
        const char *s;
        if (!flow_plain(r, &p, le, &s, kn) || !plain_key(s, *kn))
            return false;
        *k = oat_strdup(r->t, s, *kn);
    }
    if (p - *pp > MAX_KEY || p >= le || *p != ':' || p + 1 >= le || p[1] != ' ')
        return false;
    *pp = p + 2;
    return true;
}

static bool flow_value(rd *r, const char **pp, oat_node *out)
{
    const char *p = *pp, *le = eol(r, p);
    if (p >= le)
        return false;
    if (*p == '{' || *p == '[') {
        bool obj = *p == '{';
        char close = obj ? '}' : ']';
        if (++r->depth > MAX_DEPTH)
            return false;
        p++;
        size_t base = obj ? r->np : r->nv;
        flow_ws(&p, le);
        if (p < le && *p == close)
            p++;
        else
            for (;;) {
                flow_ws(&p, le);
                const char *k = NULL;
                size_t kn = 0;
                if (obj && !flow_key(r, &p, le, &k, &kn))
                    return false;
                flow_ws(&p, le);
                oat_node v;
                if (!flow_value(r, &p, &v))
                    return false;
                if (obj)
                    push_pair(r, k, kn, &v);
                else
                    push_value(r, &v);
                flow_ws(&p, le);
                if (p < le && *p == ',') {
                    p++;
                    flow_ws(&p, le);
                    if (p < le && *p == close)
                        return false;  /* a trailing comma: declined */
                    continue;
                }
                if (p < le && *p == close) {
                    p++;
                    break;
                }
                return false;
            }
        r->depth--;
        *pp = p;
        if (!obj) {
            end_array(r, base, out);
            return true;
        }
        return end_object(r, base, out);
    }
    if (*p == '"' || *p == '\'') {
        const char *s;
        size_t n;
        if (!quoted(r, &p, &s, &n))
            return false;
        memset(out, 0, sizeof *out);
        out->kind = OAT_STR;
        out->u.s = s;
        out->n = (uint32_t)n;
        *pp = p;
        return true;
    }
    const char *s;
    size_t n;
    if (!flow_plain(r, &p, le, &s, &n))
        return false;
    *pp = p;
    return plain_node(r, s, n, out);
}

static bool block_node(rd *r, const char *line, int col, const char **next, oat_node *out);

/* A block scalar (| or >, with - or nothing) whose header is at p; its
 * lines are indented past `parent`.  *next: the line after it. */
static bool block_scalar(rd *r, const char *p, int parent, const char **next, oat_node *out)
{
    bool folded = *p == '>';
    p++;
    bool strip = false;
    if (p < r->end && *p == '-') {
        strip = true;
        p++;
    }
    if (!rest_empty(r, p))
        return false;  /* keep (+), an indentation indicator: declined */
    const char *line = next_line(r, p);
    int ci = -1;
    sl_buf b;
    sl_buf_init(&b, 0);
    int empties = 0;
    bool any = false, broken = false;
    while (line < r->end) {
        int ind = indent_of(r, line);
        const char *c = line + ind, *le = eol(r, line);
        if (c >= le) {  /* an empty line */
            if (ci < 0 || ind > ci)
                goto decline;  /* leading empty lines, or spaces as content */
            empties++;
            line = next_line(r, line);
            continue;
        }
        if (ci < 0) {
            if (ind <= parent)
                break;
            ci = ind;
        }
        if (ind < ci)
            break;
        if (ind > ci && folded)
            goto decline;  /* more-indented lines keep their breaks: declined */
        if (any) {
            if (folded)
                for (int i = 0; i < (empties ? empties : 1); i++)
                    sl_buf_addc(&b, empties ? '\n' : ' ');
            else
                for (int i = 0; i <= empties; i++)
                    sl_buf_addc(&b, '\n');
        }
        empties = 0;
        sl_buf_add(&b, line + ci, (size_t)(le - line - ci));
        any = true;
        broken = le < r->end;  /* the clip keeps a line break that is there */
        line = next_line(r, line);
    }
    if (empties && line >= r->end)
        goto decline;  /* trailing empty lines at the end: libyaml's marks vary */
    if (any && !strip && broken)
        sl_buf_addc(&b, '\n');
    text_node(r, b.data ? b.data : "", b.len, out);
    sl_buf_release(&b);
    *next = line;
    return true;
decline:
    sl_buf_release(&b);
    return false;
}

/* A value after "key: " or "- " at p, in a block whose column is `col`. */
static bool inline_value(rd *r, const char *p, int col, const char **next, oat_node *out)
{
    const char *le = eol(r, p);
    if (*p == '{' || *p == '[' || *p == '"' || *p == '\'') {
        if (!flow_value(r, &p, out) || !rest_empty(r, p))
            return false;
        *next = next_line(r, p);
        return true;
    }
    if (*p == '|' || *p == '>')
        return block_scalar(r, p, col, next, out);
    if (indicator(*p) || *p == '?' || *p == ':' || is_dash(r, p))
        return false;
    const char *start = p, *e = p;
    for (; p < le; p++) {
        if (*p == '#' && p[-1] == ' ')
            break;
        if (*p == ':' && (p + 1 >= le || p[1] == ' '))
            return false;
        if (*p != ' ')
            e = p + 1;
    }
    *next = next_line(r, p);
    return plain_node(r, start, (size_t)(e - start), out);
}

/* A key at p ("key:" then a space or the line's end): its text, and *pp
 * past the colon.  False when the line holds no key. */
static bool block_key(rd *r, const char **pp, const char **k, size_t *kn)
{
    const char *p = *pp, *le = eol(r, p);
    if (*p == '"' || *p == '\'') {
        if (!quoted(r, &p, k, kn))
            return false;
    } else {
        if (indicator(*p) || *p == '?' || *p == ':' || is_dash(r, p))
            return false;
        const char *s = p;
        for (; p < le; p++) {
            if (*p == ':' && (p + 1 >= le || p[1] == ' '))
                break;
            if (*p == '#' && p[-1] == ' ')
                return false;
        }
        if (p >= le || p[-1] == ' ' || !plain_key(s, (size_t)(p - s)))
            return false;
        *k = oat_strdup(r->t, s, (size_t)(p - s));
        *kn = (size_t)(p - s);
    }
    if (p - *pp > MAX_KEY || p >= le || *p != ':' || (p + 1 < le && p[1] != ' '))
        return false;
    *pp = p + 1;
    return true;
}

/* A value after a key or a dash at p: inline, or on the lines below. */
static bool entry_value(rd *r, const char *p, int col, bool map, const char **next,
                        oat_node *out)
{
    while (p < r->end && *p == ' ')
        p++;
    if (!rest_empty(r, p))
        return inline_value(r, p, col, next, out);
    int ind;
    const char *nl = content_line(r, next_line(r, p), &ind);
    if (nl && (ind > col || (map && ind == col && is_dash(r, nl + ind))))
        return block_node(r, nl, ind, next, out);
    memset(out, 0, sizeof *out);
    out->kind = OAT_NULL;
    *next = nl ? nl : r->end;
    return true;
}

/* A block mapping whose first key is at line+col (later ones start their
 * lines at col). */
static bool block_map(rd *r, const char *line, int col, const char **next, oat_node *out)
{
    if (++r->depth > MAX_DEPTH)
        return false;
    size_t base = r->np;
    for (;;) {
        const char *p = line + col, *k;
        size_t kn;
        if (!block_key(r, &p, &k, &kn))
            return false;
        oat_node v;
        const char *after;
        if (!entry_value(r, p, col, true, &after, &v))
            return false;
        push_pair(r, k, kn, &v);
        int ind;
        line = content_line(r, after, &ind);
        if (!line || ind < col)
            break;
        if (ind > col)
            return false;
    }
    r->depth--;
    *next = line ? line : r->end;
    return end_object(r, base, out);
}

static bool block_seq(rd *r, const char *line, int col, const char **next, oat_node *out)
{
    if (++r->depth > MAX_DEPTH)
        return false;
    size_t base = r->nv;
    for (;;) {
        const char *p = line + col + 1;
        while (p < r->end && *p == ' ')
            p++;
        oat_node v;
        const char *after;
        const char *k;
        size_t kn;
        const char *kp = p;
        if (!rest_empty(r, p) && !is_dash(r, p) && block_key(r, &kp, &k, &kn)) {
            /* "- key: value": a mapping whose keys line up at p */
            if (!block_map(r, line, (int)(p - line), &after, &v))
                return false;
        } else if (!entry_value(r, p, col, false, &after, &v))
            return false;
        push_value(r, &v);
        int ind;
        line = content_line(r, after, &ind);
        if (!line || ind < col || (ind == col && !is_dash(r, line + ind)))
            break;
        if (ind > col)
            return false;
    }
    r->depth--;
    end_array(r, base, out);
    *next = line ? line : r->end;
    return true;
}

static bool block_node(rd *r, const char *line, int col, const char **next, oat_node *out)
{
    if (is_dash(r, line + col))
        return block_seq(r, line, col, next, out);
    return block_map(r, line, col, next, out);
}

oat_tree *oat_parse_yaml(const char *text, size_t len)
{
    if (len >= UINT32_MAX || !text_ok((const unsigned char *)text,
                                      (const unsigned char *)text + len, true))
        return NULL;
    rd r = {.t = new_tree(len), .s = text, .end = text + len};
    int ind;
    const char *line = content_line(&r, text, &ind);
    if (line && r.marker && line[0] == '-' && rest_empty(&r, line + 3)) {
        r.marker = false;
        line = content_line(&r, next_line(&r, line), &ind);
    }
    const char *next = NULL;
    bool ok = line && ind == 0 && *line != '%' && block_node(&r, line, 0, &next, &r.t->root) &&
              !content_line(&r, next, &ind);
    return finish(&r, ok && !r.marker);
}
