/*
 * openapi — see openapi.h and docs/tools.md ("OpenAPI tools").
 */
#include "tools/openapi.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/mime.h"
#include "core/map.h"
#include "core/secret.h"
#include "dsl/yaml.h"
#include "net/http.h"
#include "tools/oatree.h"

/* How far $refs are followed: a chain of refs inside one schema, the
 * nodes all schemas of a document may expand to (a few refs used many
 * times over can blow a small document up), and the nesting kept. */
#define MAX_REF_DEPTH 32
#define MAX_EXPANDED 2000000
#define MAX_NESTING 64
#define MAX_SHOWN 2000
#define MAX_MERGE (1u << 22)  /* a $ref's siblings times its target's keys, in a view */
#define POOL_MAX 4
#define CONNECT_S 10.0

enum { BODY_NONE, BODY_JSON, BODY_FORM, BODY_MULTIPART };

typedef struct {
    const char *name;   /* in the document's tree */
    char in;            /* 'p'ath, 'q'uery, 'h'eader, 'c'ookie */
    bool required;
    char join;          /* an array query value: 0 repeats the name, else joins with it */
} param;

/* Names point into the document's tree, which the doc keeps. */
typedef struct {
    const char *name;   /* the tool's name */
    const char *method; /* "GET", ... (static) */
    const char *path;   /* the template, "/pets/{id}" */
    param *params;
    size_t n_params;
    int body;           /* BODY_* */
    bool body_whole;    /* the argument "body" is the whole body */
    const char **props; /* the body's properties taken from the arguments */
    char *kinds;        /* each one's: 't'ext, a 'f'ile, 'F'iles (multipart, format: binary) */
    size_t n_props;
    const char **required; /* arguments that must be given */
    size_t n_required;
    sl_value *tool;     /* its entry in the list, while making the list */
    size_t seq;         /* its place in the document: the first of a name is kept */
} op;

struct sl_openapi_doc {
    op *ops;            /* sorted by name */
    size_t n_ops;
    char *server;
    oat_tree *tree;     /* the document */
    pthread_mutex_t mu; /* making the tool list, once */
    sl_value *tools;    /* NULL until first asked for */
};

/* ---- reading ---- */

/*
 * The document is read twice at most.  Loading walks the whole tree once
 * without making a single value: every operation's parameters and body are
 * read into `op`, every schema is expanded in `count` mode (its $refs
 * followed and checked, its nodes counted against the budget) and nothing
 * is built.  The tool list, with its JSON Schemas, is made the first time
 * it is asked for, by the same walk in `build` mode, which cannot fail
 * then: it meets the same nodes, refs and counts.
 */
typedef struct {
    long count;         /* nodes the expansion counted */
    sl_value *v;        /* build mode: the expansion */
} memo;

typedef struct {
    const oat_node *root;
    oat_tree *tree;
    const sl_yaml_doc *marks;  /* NULL on the fast first pass */
    const char *where;
    bool swagger;              /* 2.0 */
    bool build;                /* make the schemas (else only count and check) */
    const char *refs[MAX_REF_DEPTH];
    int n_refs;
    long budget;
    long cuts;                 /* loops cut so far */
    sl_map memo;               /* ref -> memo */
    sl_err *err;
    bool failed;
} reader;

/* "where:line:col: at: what"; the first error wins. */
__attribute__((format(printf, 5, 6)))
static int bad(reader *r, const oat_node *obj, const char *key, const char *at,
               const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = true;
    sl_mark m = {0, 0};
    if (r->marks && obj && obj->src)
        m = key ? sl_yaml_key_mark(r->marks, obj->src, key) : sl_yaml_mark(r->marks, obj->src);
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (m.line)
        return sl_err_set(r->err, SL_EINVAL, "%s:%d:%d: %s%s%s", r->where, m.line, m.col,
                          at ? at : "", at ? ": " : "", what);
    return sl_err_set(r->err, SL_EINVAL, "%s: %s%s%s", r->where, at ? at : "", at ? ": " : "",
                      what);
}

static const char *str_of(const oat_node *obj, const char *key)
{
    return oat_str(oat_get(obj, key));
}

static bool is_true(const oat_node *n)
{
    return n && n->kind == OAT_TRUE;
}

/* The node a local JSON pointer ("#/components/schemas/Pet") names, or NULL. */
static const oat_node *pointer(const oat_node *root, const char *ref)
{
    if (strncmp(ref, "#/", 2))
        return NULL;
    const oat_node *v = root;
    const char *p = ref + 2;
    char tok[512];
    while (v && *p) {
        size_t n = 0;
        for (; *p && *p != '/'; p++) {
            char c = *p;
            if (c == '~' && (p[1] == '0' || p[1] == '1'))
                c = *++p == '0' ? '~' : '/';
            else if (c == '%' && sl_hex_digit(p[1]) >= 0 && sl_hex_digit(p[2]) >= 0) {
                c = (char)(sl_hex_digit(p[1]) * 16 + sl_hex_digit(p[2]));
                p += 2;
            }
            if (n + 1 >= sizeof tok)
                return NULL;
            tok[n++] = c;
        }
        tok[n] = '\0';
        if (*p == '/')
            p++;
        if (v->kind == OAT_OBJ)
            v = oat_get(v, tok);
        else if (v->kind == OAT_ARR) {
            char *end;
            unsigned long i = strtoul(tok, &end, 10);
            v = *tok && !*end && i < v->n ? &v->u.a[i] : NULL;
        } else
            v = NULL;
    }
    return v;
}

/* An object that is a $ref followed to what it names (parameters, request
 * bodies): a chain of at most MAX_REF_DEPTH, no loop.  NULL with the
 * error set. */
static const oat_node *deref(reader *r, const oat_node *v, const char *at)
{
    for (int i = 0; oat_is(v, OAT_OBJ) && oat_get(v, "$ref"); i++) {
        const char *ref = str_of(v, "$ref");
        if (!ref)
            return bad(r, v, "$ref", at, "$ref must be a string"), NULL;
        if (i >= MAX_REF_DEPTH)
            return bad(r, v, "$ref", at, "$ref chain longer than %d (a loop?)", MAX_REF_DEPTH),
                   NULL;
        const oat_node *t = pointer(r->root, ref);
        if (!t)
            return bad(r, v, "$ref", at, "$ref '%.200s' names nothing in this document; only "
                       "local references (#/components/..., #/definitions/...) are read", ref),
                   NULL;
        v = t;
    }
    return v;
}

static sl_value *none(const reader *r)
{
    return r->build ? json_object() : NULL;
}

static void too_big(reader *r)
{
    bad(r, NULL, NULL, NULL, "its schemas expand past %d nodes through $refs; simplify the "
        "document", MAX_EXPANDED);
}

/* A schema with every $ref replaced by what it names: in build mode a new
 * value, in count mode NULL (the refs are checked and the nodes counted
 * all the same).  A ref already being expanded (a recursive schema)
 * becomes {}: any value.  A ref's expansion is kept and shared by every
 * later use (unless a loop was cut inside it, which depends on the way
 * in); every use still counts its nodes against the budget, so what a
 * list of tools can grow to stays bounded.  Shared values are never
 * changed: callers that add a key copy the object first (json_copy). */
static sl_value *expand(reader *r, const oat_node *s, int depth)
{
    if (r->failed)
        return none(r);
    if (--r->budget < 0) {
        too_big(r);
        return none(r);
    }
    if (s->kind == OAT_ARR) {
        sl_value *a = r->build ? json_array() : NULL;
        for (uint32_t i = 0; i < s->n; i++) {
            sl_value *e = expand(r, &s->u.a[i], depth + 1);
            if (a)
                json_array_append_new(a, e);
        }
        return a;
    }
    if (s->kind != OAT_OBJ)
        return r->build ? oat_value(s) : NULL;
    if (depth > MAX_NESTING)
        return none(r);
    const char *ref = str_of(s, "$ref");
    sl_value *out = NULL;
    if (ref) {
        bool loop = r->n_refs >= MAX_REF_DEPTH;
        for (int i = 0; i < r->n_refs && !loop; i++)
            loop = !strcmp(r->refs[i], ref);
        memo *m = loop ? NULL : sl_map_get(&r->memo, ref);
        if (loop) {
            out = none(r);
            r->cuts++;
        } else if (m) {
            r->budget -= m->count;
            if (r->budget < 0) {
                too_big(r);
                return none(r);
            }
            out = r->build ? json_incref(m->v) : NULL;
        } else {
            const oat_node *t = pointer(r->root, ref);
            if (!t) {
                bad(r, s, "$ref", NULL, "$ref '%.200s' names nothing in this document; only "
                    "local references (#/components/..., #/definitions/...) are read", ref);
                return none(r);
            }
            long before = r->budget, cuts = r->cuts;
            r->refs[r->n_refs++] = ref;
            out = expand(r, t, depth + 1);
            r->n_refs--;
            if (r->cuts == cuts && t->kind == OAT_OBJ && !r->failed) {
                m = sl_xcalloc(1, sizeof *m);
                m->count = before - r->budget;
                m->v = json_incref(out);
                sl_map_put(&r->memo, ref, m);
            }
        }
        if (r->build && !json_is_object(out)) {
            json_decref(out);
            out = json_object();
        }
        if (s->n == 1)
            return out;
        if (r->build) {
            sl_value *own = json_copy(out);  /* shared: siblings go into a copy */
            json_decref(out);
            out = own;
        }
    } else if (r->build)
        out = json_object();
    for (uint32_t i = 0; i < s->n; i++) {
        const oat_pair *p = &s->u.o[i];
        if (ref && !strcmp(p->k, "$ref") && p->v.kind == OAT_STR)
            continue;
        sl_value *e = expand(r, &p->v, depth + 1);
        if (out)
            json_object_setn_new_nocheck(out, p->k, p->kn, e);
    }
    return out;
}

/*
 * What expand() would make of an object, its top level only, without
 * making it (count mode must know a body's properties and required list):
 * the entries in their order, each with the refs being expanded where it
 * sits (so a loop is cut where expand() cuts it).  As expand(): the
 * target's entries, then the $ref's siblings, which replace or follow.
 */
typedef struct {
    const char *k;
    const oat_node *v;
    int n_refs;              /* how many of view.refs were open where it sits */
} ventry;

typedef struct {
    ventry *e;               /* in `small` until it holds more */
    size_t n;
    const char *refs[MAX_REF_DEPTH];
    ventry small[16];
} view;

static void view_release(view *w)
{
    if (w->e != w->small)
        free(w->e);
}

static const oat_node *view_get(const view *w, const char *k, int *n_refs)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->e[i].k, k)) {
            if (n_refs)
                *n_refs = w->e[i].n_refs;
            return w->e[i].v;
        }
    return NULL;
}

static void view_of(reader *r, view *w, const oat_node *s, int n_refs, int depth)
{
    if (!oat_is(s, OAT_OBJ) || depth > MAX_NESTING)
        return;
    const char *ref = str_of(s, "$ref");
    if (ref) {
        bool loop = n_refs >= MAX_REF_DEPTH;
        for (int i = 0; i < n_refs && !loop; i++)
            loop = !strcmp(w->refs[i], ref);
        const oat_node *t = loop ? NULL : pointer(r->root, ref);
        if (t) {
            w->refs[n_refs] = ref;
            view_of(r, w, t, n_refs + 1, depth + 1);
        }
    }
    if (ref && (size_t)s->n * w->n > MAX_MERGE) {
        /* a $ref's siblings are a few keys; this many would take long to merge */
        bad(r, s, NULL, NULL, "a schema with $ref and %u more keys beside it, over %zu "
            "keys of what it names; simplify the document", s->n, w->n);
        return;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        const oat_pair *p = &s->u.o[i];
        if (ref && !strcmp(p->k, "$ref") && p->v.kind == OAT_STR)
            continue;
        size_t j = ref ? 0 : w->n;  /* only a $ref's siblings may replace */
        while (j < w->n && strcmp(w->e[j].k, p->k))
            j++;
        if (j == w->n) {
            if (!w->e)
                w->e = w->small;
            else if (w->n >= 16 && !(w->n & (w->n - 1))) {  /* full */
                ventry *e = sl_xmalloc(2 * w->n * sizeof *e);
                memcpy(e, w->e, w->n * sizeof *e);
                view_release(w);
                w->e = e;
            }
            w->n++;
        }
        w->e[j] = (ventry){p->k, &p->v, n_refs};
    }
}

/* Room for one more of n elements of `size` in a (arena memory, which the
 * doc frees with its tree): a new array of twice the size when full. */
static void *grow(reader *r, void *a, size_t n, size_t size)
{
    if (n && (n < 4 || (n & (n - 1))))
        return a;
    void *b = oat_alloc(r->tree, (n ? 2 * n : 4) * size);
    if (n)
        memcpy(b, a, n * size);
    return b;
}

/* Whether entry i of a body's properties is a file, as Dify sends it in a
 * multipart body: format: binary is one ('f'), an array of those several
 * ('F'); else text ('t'). */
static char binary_kind(reader *r, const view *props, size_t i)
{
    view pv = {0};
    memcpy(pv.refs, props->refs, sizeof pv.refs);
    view_of(r, &pv, props->e[i].v, props->e[i].n_refs, 2);
    char kind = 't';
    if (!strcmp(oat_str(view_get(&pv, "format", NULL)) ?: "", "binary"))
        kind = 'f';
    else if (!strcmp(oat_str(view_get(&pv, "type", NULL)) ?: "", "array")) {
        int at;
        const oat_node *items = view_get(&pv, "items", &at);
        view iv = {0};
        memcpy(iv.refs, pv.refs, sizeof iv.refs);
        view_of(r, &iv, items, at, 3);
        if (!strcmp(oat_str(view_get(&iv, "format", NULL)) ?: "", "binary"))
            kind = 'F';
        view_release(&iv);
    }
    view_release(&pv);
    return kind;
}

static bool has_name(const char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return true;
    return false;
}

static bool taken(const op *o, const char *name)
{
    for (size_t i = 0; i < o->n_params; i++)
        if (!strcmp(o->params[i].name, name))
            return true;
    return has_name(o->props, o->n_props, name);
}

static void add_required(reader *r, op *o, const char *name)
{
    if (has_name(o->required, o->n_required, name))
        return;
    o->required = grow(r, o->required, o->n_required, sizeof *o->required);
    o->required[o->n_required++] = name;
}

static void add_prop(reader *r, op *o, const char *name, char kind)
{
    o->props = grow(r, o->props, o->n_props, sizeof *o->props);
    o->kinds = grow(r, o->kinds, o->n_props, sizeof *o->kinds);
    o->kinds[o->n_props] = kind;
    o->props[o->n_props++] = name;
}

/* The schema of a property with the description its holder gives (NULL in
 * count mode). */
static sl_value *prop_schema(reader *r, const oat_node *schema, const oat_node *desc)
{
    sl_value *s = schema ? expand(r, schema, 0) : none(r);
    if (!r->build)
        return NULL;
    if (!json_is_object(s)) {
        json_decref(s);
        s = json_object();
    }
    if (oat_is(desc, OAT_STR) && !json_object_get(s, "description")) {
        sl_value *own = json_copy(s);  /* s may be shared */
        json_decref(s);
        s = own;
        json_object_set_new(s, "description", oat_value(desc));
    }
    return s;
}

static void set_prop(reader *r, sl_value *props, const char *name, sl_value *s)
{
    if (r->build)
        json_object_set_new(props, name, s);
}

/* Swagger 2.0 keeps a non-body parameter's schema on the parameter itself:
 * those keys as an object (in `pairs`, which the node points at). */
static void v2_schema(const oat_node *p, oat_node *out, oat_pair pairs[10])
{
    static const char *const keys[] = {"type", "format", "items", "enum", "default", "minimum",
                                       "maximum", "pattern", "minLength", "maxLength", NULL};
    memset(out, 0, sizeof *out);
    out->kind = OAT_OBJ;
    out->u.o = pairs;
    for (const char *const *k = keys; *k; k++) {
        const oat_node *v = oat_get(p, *k);
        if (!v)
            continue;
        pairs[out->n] = (oat_pair){*k, (uint32_t)strlen(*k), *v};
        if (!strcmp(*k, "type") && !strcmp(oat_str(v) ?: "", "file"))
            pairs[out->n].v = (oat_node){.kind = OAT_STR, .n = 6, .u.s = "string"};
        out->n++;
    }
}

/* Adds a body schema's properties (or, for a schema that is not an object,
 * one argument "body") to the operation. */
static void add_body(reader *r, op *o, sl_value *props, const oat_node *schema, bool required)
{
    if (r->build) {
        sl_value *s = schema ? expand(r, schema, 0) : json_object();
        sl_value *ps = json_object_get(s, "properties");
        const char *type = json_string_value(json_object_get(s, "type"));
        if (json_is_object(ps) && (!type || !strcmp(type, "object"))) {
            sl_value *req = json_object_get(s, "required");
            const char *k;
            sl_value *x;
            json_object_foreach(ps, k, x) {
                if (taken(o, k))
                    continue;
                add_prop(r, o, oat_strdup(r->tree, k, strlen(k)), 't');  /* k goes with s */
                json_object_set_new(props, k, json_is_object(x) ? json_incref(x) : json_object());
                size_t i;
                const sl_value *q;
                json_array_foreach(req, i, q) if (json_is_string(q) &&
                                                  !strcmp(json_string_value(q), k))
                    add_required(r, o, o->props[o->n_props - 1]);
            }
        } else if (!taken(o, "body")) {
            o->body_whole = true;
            json_object_set(props, "body", s);
            if (required)
                add_required(r, o, "body");
        }
        json_decref(s);
        return;
    }
    if (schema)
        expand(r, schema, 0);  /* checks its refs and counts it */
    if (r->failed)
        return;
    view sv = {0};
    view_of(r, &sv, schema, 0, 0);
    int at;
    const oat_node *ps = view_get(&sv, "properties", &at);
    const char *type = oat_str(view_get(&sv, "type", NULL));
    if (oat_is(ps, OAT_OBJ) && (!type || !strcmp(type, "object"))) {
        const oat_node *req = view_get(&sv, "required", NULL);
        view pv = {0};
        memcpy(pv.refs, sv.refs, sizeof pv.refs);
        view_of(r, &pv, ps, at, 1);
        for (size_t i = 0; i < pv.n; i++) {
            const char *k = pv.e[i].k;
            if (taken(o, k))
                continue;  /* a parameter of that name wins, as Dify's flat list keeps both */
            add_prop(r, o, k, o->body == BODY_MULTIPART ? binary_kind(r, &pv, i) : 't');
            for (uint32_t j = 0; oat_is(req, OAT_ARR) && j < req->n; j++)
                if (!strcmp(oat_str(&req->u.a[j]) ?: "\x01", k))
                    add_required(r, o, k);
        }
        view_release(&pv);
    } else if (!taken(o, "body")) {
        o->body_whole = true;
        if (required)
            add_required(r, o, "body");
    }
    view_release(&sv);
}

static const char *method_upper(const char *m)
{
    static const char *const all[] = {"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD",
                                      "PATCH", "TRACE"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcasecmp(all[i], m))
            return all[i];
    return NULL;
}

/* Dify's name for an operation without an operationId. */
static const char *dify_name(reader *r, const char *path, const char *method)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (const char *p = path[0] == '/' ? path + 1 : path; *p; p++)
        if (isalnum((unsigned char)*p) || *p == '_' || *p == '-')
            sl_buf_addc(&b, *p);
    if (!b.len)
        sl_buf_adds(&b, "root");  /* Dify draws a random UUID here; a name must stay put */
    sl_buf_addc(&b, '_');
    for (const char *p = method; *p; p++)
        sl_buf_addc(&b, (char)tolower((unsigned char)*p));
    const char *name = oat_strdup(r->tree, b.data, b.len);
    sl_buf_release(&b);
    return name;
}

static void op_release(op *o)
{
    json_decref(o->tool);  /* the rest is in the tree */
}

/* One parameter (already dereferenced) into o and props. */
static int read_param(reader *r, op *o, sl_value *props, const oat_node *p, const char *at,
                      const oat_node *consumes, int *form)
{
    const char *name = str_of(p, "name");
    const char *in = str_of(p, "in");
    if (!oat_is(p, OAT_OBJ) || !name || !*name || !in)
        return bad(r, p, NULL, at, "a parameter needs a name and an `in`");
    bool req = is_true(oat_get(p, "required"));
    const oat_node *desc = oat_get(p, "description");
    if (!strcmp(in, "body")) {  /* 2.0 */
        o->body = BODY_JSON;
        add_body(r, o, props, oat_get(p, "schema"), req);
        return 0;
    }
    if (!strcmp(in, "formData")) {  /* 2.0 */
        bool multi = !strcmp(str_of(p, "type") ?: "", "file");
        for (uint32_t i = 0; oat_is(consumes, OAT_ARR) && i < consumes->n; i++)
            multi |= !strcmp(oat_str(&consumes->u.a[i]) ?: "", "multipart/form-data");
        *form = multi || *form == BODY_MULTIPART ? BODY_MULTIPART : BODY_FORM;
        if (taken(o, name))
            return 0;
        add_prop(r, o, name, !strcmp(str_of(p, "type") ?: "", "file") ? 'f' : 't');
        oat_node s;
        oat_pair pairs[10];
        v2_schema(p, &s, pairs);
        set_prop(r, props, name, prop_schema(r, &s, desc));
        if (req)
            add_required(r, o, name);
        return 0;
    }
    char c = !strcmp(in, "path") ? 'p' : !strcmp(in, "query") ? 'q' : !strcmp(in, "header") ? 'h'
           : !strcmp(in, "cookie") ? 'c' : 0;
    if (!c)
        return bad(r, p, "in", at, "parameter '%.100s': `in` is path, query, header or cookie, "
                   "not '%.50s'", name, in);
    if (c == 'h' || c == 'c')
        for (const char *q = name; *q; q++)
            if (*q <= 32 || *q >= 127 || strchr(":;=,\"()<>@[]{}?/\\", *q))
                return bad(r, p, "name", at, "'%.100s' is not a valid %s name", name,
                           c == 'h' ? "header" : "cookie");
    if (taken(o, name))
        return 0;  /* the operation's own came first and wins over the path item's */
    o->params = grow(r, o->params, o->n_params, sizeof *o->params);
    /* arrays in the query: 3.x's default form style explodes (name=a&name=b),
     * explode: false joins with ","; 2.0's collectionFormat defaults to csv */
    char join = 0;
    if (r->swagger) {
        const char *cf = str_of(p, "collectionFormat");
        join = !cf || !strcmp(cf, "csv") ? ',' : !strcmp(cf, "ssv") ? ' ' : !strcmp(cf, "tsv")
             ? '\t' : !strcmp(cf, "pipes") ? '|' : 0;
    } else if (oat_is(oat_get(p, "explode"), OAT_FALSE)) {
        const char *st = str_of(p, "style");
        join = st && !strcmp(st, "spaceDelimited") ? ' '
             : st && !strcmp(st, "pipeDelimited") ? '|' : ',';
    }
    o->params[o->n_params++] = (param){name, c, req || c == 'p', join};
    const oat_node *schema = oat_get(p, "schema");
    const oat_node *content = oat_get(p, "content");
    if (!schema && oat_is(content, OAT_OBJ) && content->n)
        schema = oat_get(&content->u.o[0].v, "schema");
    oat_node own;
    oat_pair pairs[10];
    if (!schema && r->swagger) {
        v2_schema(p, &own, pairs);
        schema = &own;
    }
    set_prop(r, props, name, prop_schema(r, schema, desc));
    if (req || c == 'p')
        add_required(r, o, name);
    return 0;
}

static bool is_json_type(const char *t)
{
    size_t n = strcspn(t, ";");
    return (n == 16 && !strncasecmp(t, "application/json", 16)) ||
           (n > 5 && !strncasecmp(t + n - 5, "+json", 5)) || (n == 3 && !strncmp(t, "*/*", 3));
}

/* "paths.PATH.METHOD" (PATH cut at 200 bytes) into at[300]; snprintf
 * would do, at a cost a thousand operations notice. */
static void at_of(char *at, const char *path, const char *method)
{
    size_t n = strnlen(path, 200), m = method ? strlen(method) : 0;
    memcpy(at, "paths.", 6);
    memcpy(at + 6, path, n);
    if (method) {
        at[6 + n] = '.';
        memcpy(at + 7 + n, method, m + 1);
    } else
        at[6 + n] = '\0';
}

/* One operation. */
static int read_op(reader *r, op *o, const char *path, const char *method, const oat_node *item,
                   const oat_node *opv)
{
    char at[300];
    at_of(at, path, method);
    if (!oat_is(opv, OAT_OBJ))
        return bad(r, item, method, at, "an operation is a mapping");
    const char *id = str_of(opv, "operationId");
    o->name = id && *id ? id : dify_name(r, path, method);
    o->method = method_upper(method);
    o->path = path;
    sl_value *props = r->build ? json_object() : NULL;
    const oat_node *consumes = oat_get(opv, "consumes");
    if (!consumes)
        consumes = oat_get(r->root, "consumes");
    int form = BODY_NONE;
    const oat_node *lists[2] = {oat_get(opv, "parameters"), oat_get(item, "parameters")};
    for (int l = 0; l < 2; l++) {
        if (!lists[l])
            continue;
        if (!oat_is(lists[l], OAT_ARR)) {
            json_decref(props);
            return bad(r, l ? item : opv, "parameters", at, "parameters is a list");
        }
        for (uint32_t i = 0; i < lists[l]->n; i++) {
            const oat_node *d = deref(r, &lists[l]->u.a[i], at);
            if (!d || read_param(r, o, props, d, at, consumes, &form)) {
                json_decref(props);
                return -1;
            }
        }
    }
    if (form && o->body == BODY_NONE)
        o->body = form;
    const oat_node *rb = oat_get(opv, "requestBody");
    if (rb) {
        rb = deref(r, rb, at);
        if (!rb) {
            json_decref(props);
            return -1;
        }
        const oat_node *content = oat_get(rb, "content");
        const oat_node *pick[3] = {NULL, NULL, NULL};
        for (uint32_t i = 0; oat_is(content, OAT_OBJ) && i < content->n; i++) {
            const char *k = content->u.o[i].k;
            const oat_node *x = &content->u.o[i].v;
            if (is_json_type(k) && !pick[0])
                pick[0] = x;
            else if (!strncasecmp(k, "application/x-www-form-urlencoded", 33) && !pick[1])
                pick[1] = x;
            else if (!strncasecmp(k, "multipart/form-data", 19) && !pick[2])
                pick[2] = x;
        }
        for (int i = 0; i < 3; i++)
            if (pick[i]) {
                o->body = i == 0 ? BODY_JSON : i == 1 ? BODY_FORM : BODY_MULTIPART;
                add_body(r, o, props, oat_get(pick[i], "schema"), is_true(oat_get(rb, "required")));
                break;
            }
    }
    if (r->failed) {
        json_decref(props);
        return -1;
    }
    if (!r->build)
        return 0;
    const char *desc = str_of(opv, "description");
    if (!desc || !*desc)
        desc = str_of(opv, "summary");
    sl_value *req = json_array();
    for (size_t i = 0; i < o->n_required; i++)
        json_array_append_new(req, json_string(o->required[i]));
    sl_value *schema = json_pack("{s:s,s:o}", "type", "object", "properties", props);
    if (json_array_size(req))
        json_object_set(schema, "required", req);
    json_decref(req);
    sl_value *tool = json_pack("{s:s,s:s,s:o}", "name", o->name, "description", desc ? desc : "",
                               "inputSchema", schema);
    if (!tool)  /* a name or description that is not UTF-8 text */
        return bad(r, item, method, at, "the operation's name or description is not text");
    o->tool = tool;
    return 0;
}

static int op_cmp(const void *a, const void *b)
{
    const op *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->seq < y->seq ? -1 : 1;
}

static void free_ops(op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        op_release(&ops[i]);
    free(ops);
}

void sl_openapi_doc_free(sl_openapi_doc *d)
{
    if (!d)
        return;
    free_ops(d->ops, d->n_ops);
    free(d->server);
    json_decref(d->tools);
    oat_free(d->tree);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/* The origin ("https://h:1") of an absolute URL, its length; 0 if none. */
static size_t origin_len(const char *u)
{
    const char *s = strstr(u, "://");
    if (!s)
        return 0;
    return (size_t)(s + 3 - u) + strcspn(s + 3, "/?#");
}

static bool absolute(const char *u)
{
    return !strncasecmp(u, "http://", 7) || !strncasecmp(u, "https://", 8);
}

/* A server URL made absolute against base (NULL when it cannot be), with
 * no trailing "/". */
static char *resolve_url(const char *u, const char *base)
{
    char *out = NULL;
    if (absolute(u))
        out = sl_xstrdup(u);
    else if (base && absolute(base)) {
        if (!strncmp(u, "//", 2))
            out = sl_xasprintf("%.*s%s", (int)(strstr(base, "://") + 1 - base), base, u);
        else if (u[0] == '/')
            out = sl_xasprintf("%.*s%s", (int)origin_len(base), base, u);
        else {
            size_t o = origin_len(base), n = strcspn(base, "?#");
            const char *slash = base + n;
            while (slash > base + o && slash[-1] != '/')
                slash--;
            if (slash == base + o)
                out = sl_xasprintf("%.*s/%s", (int)o, base, u[0] == '.' && u[1] == '/' ? u + 2 : u);
            else
                out = sl_xasprintf("%.*s%s", (int)(slash - base), base,
                                   u[0] == '.' && u[1] == '/' ? u + 2 : u);
        }
    }
    size_t n = out ? strlen(out) : 0;
    while (n > origin_len(out ? out : "") && out[n - 1] == '/')
        out[--n] = '\0';
    return out;
}

/* servers[0].url with its variables' defaults, or 2.0's schemes, host and
 * basePath. */
static char *doc_server(reader *r, const char *base)
{
    const oat_node *root = r->root;
    sl_buf b;
    sl_buf_init(&b, 1u << 16);
    if (r->swagger) {
        const char *host = str_of(root, "host");
        const char *bp = str_of(root, "basePath");
        const oat_node *schemes = oat_get(root, "schemes");
        bool arr = oat_is(schemes, OAT_ARR);
        const char *scheme = arr && schemes->n ? oat_str(&schemes->u.a[0]) : NULL;
        if (host) {
            for (uint32_t i = 0; arr && i < schemes->n; i++)
                if (!strcmp(oat_str(&schemes->u.a[i]) ?: "", "https"))
                    scheme = "https";
            if (!scheme && base && !strncasecmp(base, "http://", 7))
                scheme = "http";
            sl_buf_addf(&b, "%s://%s", scheme ? scheme : "https", host);
        }
        sl_buf_adds(&b, bp ? bp : "");
        if (!b.len)
            sl_buf_adds(&b, "/");
    } else {
        const oat_node *servers = oat_get(root, "servers");
        const oat_node *s0 = oat_is(servers, OAT_ARR) && servers->n ? &servers->u.a[0] : NULL;
        const char *u = str_of(s0, "url");
        if (!u) {
            sl_buf_release(&b);
            return NULL;
        }
        const oat_node *vars = oat_get(s0, "variables");
        for (const char *p = u; *p; p++) {
            const char *q = *p == '{' ? strchr(p, '}') : NULL;
            if (!q) {
                sl_buf_addc(&b, *p);
                continue;
            }
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(q - p - 1), p + 1);
            const char *def = str_of(oat_get(vars, name), "default");
            if (def)
                sl_buf_adds(&b, def);
            else
                sl_buf_add(&b, p, (size_t)(q - p + 1));
            p = q;
        }
    }
    char *out = b.toobig ? NULL : resolve_url(b.data ? b.data : "", base);
    sl_buf_release(&b);
    return out;
}

/* Every operation into ops (in the document's order); the server into
 * *server unless NULL. */
static int read_doc(reader *r, op **ops, size_t *n_ops, const char *base, char **server)
{
    const oat_node *root = r->root;
    if (!oat_is(root, OAT_OBJ))
        return bad(r, NULL, NULL, NULL, "not an OpenAPI document: the top is not a mapping");
    const char *v3 = str_of(root, "openapi");
    const char *v2 = str_of(root, "swagger");
    if (!v3 && !v2)
        return bad(r, root, NULL, NULL, "not an OpenAPI document: it has neither `openapi: 3.x` "
                   "nor `swagger: \"2.0\"`");
    if (v3 && strncmp(v3, "3.", 2))
        return bad(r, root, "openapi", "openapi", "version '%.20s' is not read; sluice reads "
                   "OpenAPI 3.0 and 3.1 and Swagger 2.0", v3);
    if (!v3 && strcmp(v2, "2.0"))
        return bad(r, root, "swagger", "swagger", "version '%.20s' is not read; sluice reads "
                   "OpenAPI 3.0 and 3.1 and Swagger 2.0", v2);
    r->swagger = !v3;
    const oat_node *paths = oat_get(root, "paths");
    if (!oat_is(paths, OAT_OBJ) || !paths->n)
        return bad(r, root, "paths", "paths", "the document has no operations (paths is "
                   "missing or empty)");
    if (server)
        *server = doc_server(r, base);
    static const char *const methods[] = {"get", "post", "put", "delete", "patch", "head",
                                          "options", "trace"};
    size_t cap = 0;
    for (uint32_t pi = 0; pi < paths->n; pi++) {
        const char *path = paths->u.o[pi].k;
        char at[300];
        at_of(at, path, NULL);
        const oat_node *item = deref(r, &paths->u.o[pi].v, at);
        if (!item)
            return -1;
        if (!oat_is(item, OAT_OBJ))
            return bad(r, paths, path, at, "a path item is a mapping of methods to operations");
        const oat_node *found[8] = {0};
        for (uint32_t k = 0; k < item->n; k++)
            for (size_t m = 0; m < 8; m++)
                if (item->u.o[k].k[0] == methods[m][0] && !strcmp(item->u.o[k].k, methods[m]))
                    found[m] = &item->u.o[k].v;
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
            const oat_node *opv = found[m];
            if (!opv)
                continue;
            if (*n_ops >= SL_OPENAPI_MAX_OPS) {
                r->failed = true;
                return sl_err_limit(r->err, SL_ELIMIT, NULL, "%s: more than %d operations; "
                                    "split the document", r->where, SL_OPENAPI_MAX_OPS);
            }
            if (*n_ops == cap) {
                cap = cap ? cap * 2 : 64;
                *ops = sl_xrealloc(*ops, cap * sizeof **ops);
            }
            op *o = &(*ops)[(*n_ops)++];
            memset(o, 0, sizeof *o);
            o->seq = *n_ops;
            if (read_op(r, o, path, methods[m], item, opv))
                return -1;
            if (r->failed)
                return -1;
        }
    }
    if (!*n_ops)
        return bad(r, root, "paths", "paths", "the document has no operations (no path has a "
                   "get, post, put, delete, patch, head, options or trace)");
    return 0;
}

static void reader_init(reader *r, const oat_tree *t, const sl_yaml_doc *marks,
                        const char *where, bool build, sl_err *err)
{
    memset(r, 0, sizeof *r);
    r->root = oat_root(t);
    r->tree = (oat_tree *)t;
    r->marks = marks;
    r->where = where;
    r->build = build;
    r->budget = MAX_EXPANDED;
    r->err = err;
    sl_map_init(&r->memo);
}

static void reader_release(reader *r)
{
    for (size_t i = 0; i < r->memo.cap; i++)
        if (r->memo.slots[i].key) {
            memo *m = r->memo.slots[i].val;
            json_decref(m->v);
            free(m);
        }
    sl_map_release(&r->memo);
}

/* Loads a tree: count mode; the doc keeps the tree. */
static int build(oat_tree *t, const sl_yaml_doc *marks, const char *where, const char *base,
                 sl_openapi_doc **out, sl_err *err)
{
    reader r;
    reader_init(&r, t, marks, where, false, err);
    sl_openapi_doc *d = sl_xcalloc(1, sizeof *d);
    pthread_mutex_init(&d->mu, NULL);
    d->tree = t;
    int rc = read_doc(&r, &d->ops, &d->n_ops, base, &d->server);
    reader_release(&r);
    if (rc || r.failed) {
        d->tree = NULL;
        sl_openapi_doc_free(d);
        return -1;
    }
    qsort(d->ops, d->n_ops, sizeof *d->ops, op_cmp);
    size_t keep = 0;
    for (size_t i = 0; i < d->n_ops; i++) {
        if (keep && !strcmp(d->ops[keep - 1].name, d->ops[i].name)) {
            /* a second operation of one name: the document's first is kept */
            op_release(&d->ops[i]);
            continue;
        }
        d->ops[keep++] = d->ops[i];
    }
    d->n_ops = keep;
    *out = d;
    return 0;
}

int sl_openapi_parse(const char *text, size_t len, const char *where, const char *base_url,
                     sl_openapi_doc **out, sl_err *err)
{
    *out = NULL;
    if (len > SL_OPENAPI_MAX_SPEC)
        return sl_err_limit(err, SL_ELIMIT, NULL, "%s: the OpenAPI document is larger than "
                            "%u MiB", where, SL_OPENAPI_MAX_SPEC >> 20);
    /* The fast readers first (oatree.h), then jansson for JSON and dsl/yaml
     * for the rest; marks are read only to report an error. */
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    bool json = i < len && text[i] == '{';
    oat_tree *t = json ? oat_parse_json(text, len) : oat_parse_yaml(text, len);
    if (!t) {
        sl_value *root = json ? json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
        if (!root) {
            sl_yaml_doc y = {0};
            if (sl_yaml_parse_ex(text, len, where, &y, false, err))
                return sl_err_prefix(err, "the OpenAPI document");
            root = json_incref(y.root);
            sl_yaml_doc_release(&y);
        }
        t = oat_from_value(root);
        json_decref(root);
    }
    sl_err e = {0};
    int rc = build(t, NULL, where, base_url, out, &e);
    if (rc == 0)
        return 0;
    oat_free(t);
    if (e.code == SL_ELIMIT) {
        sl_err_move(err, &e);
        return -1;
    }
    /* again with marks, for path:line:col */
    sl_yaml_doc y;
    if (sl_yaml_parse_ex(text, len, where, &y, true, NULL) == 0) {
        oat_tree *mt = oat_from_value(y.root);
        sl_err e2 = {0};
        if (build(mt, &y, where, base_url, out, &e2)) {
            sl_err_move(&e, &e2);
            oat_free(mt);
        } else {
            sl_openapi_doc_free(*out);
            *out = NULL;
        }
        sl_err_clear(&e2);
        sl_yaml_doc_release(&y);
    }
    sl_err_move(err, &e);
    return -1;
}

/* The list, made on first use: the walk again, in build mode. */
static sl_value *make_tools(const sl_openapi_doc *d)
{
    sl_err err = {0};
    reader r;
    reader_init(&r, d->tree, NULL, "", true, &err);
    op *ops = NULL;
    size_t n = 0;
    int rc = read_doc(&r, &ops, &n, NULL, NULL);
    reader_release(&r);
    sl_value *tools = json_array();
    for (size_t i = 0; i < d->n_ops; i++) {
        size_t s = d->ops[i].seq - 1;
        if (rc == 0 && s < n && ops[s].tool)
            json_array_append(tools, ops[s].tool);
        else  /* cannot happen: loading walked the same tree */
            json_array_append_new(tools, json_pack("{s:s,s:s,s:{s:s,s:{}}}", "name",
                                                   d->ops[i].name, "description", "",
                                                   "inputSchema", "type", "object",
                                                   "properties"));
    }
    free_ops(ops, n);
    sl_err_clear(&err);
    return tools;
}

const sl_value *sl_openapi_tools(const sl_openapi_doc *d)
{
    sl_openapi_doc *m = (sl_openapi_doc *)d;
    sl_value *t = __atomic_load_n(&m->tools, __ATOMIC_ACQUIRE);
    if (t)
        return t;
    pthread_mutex_lock(&m->mu);
    if (!m->tools)
        __atomic_store_n(&m->tools, make_tools(d), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&m->mu);
    return m->tools;
}

const char *sl_openapi_server(const sl_openapi_doc *d)
{
    return d->server;
}

/* ---- one call's request ---- */

void sl_openapi_req_init(sl_openapi_req *r)
{
    memset(r, 0, sizeof *r);
    sl_buf_init(&r->url, 1u << 20);
    sl_buf_init(&r->headers, 1u << 20);
    sl_buf_init(&r->body, SL_OPENAPI_MAX_SPEC);
}

void sl_openapi_req_release(sl_openapi_req *r)
{
    sl_buf_release(&r->url);
    sl_buf_release(&r->headers);
    sl_buf_release(&r->body);
    json_decref(r->parts);
    memset(r, 0, sizeof *r);
}

static const op *find_op(const sl_openapi_doc *d, const char *name)
{
    size_t lo = 0, hi = d->n_ops;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(d->ops[mid].name, name);
        if (!c)
            return &d->ops[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A scalar as text: strings as they are, numbers as Python shows them,
 * true/false; arrays and objects as compact JSON. */
static void text_of(const sl_value *v, sl_buf *out)
{
    if (json_is_string(v))
        sl_buf_add(out, json_string_value(v), json_string_length(v));
    else if (json_is_true(v))
        sl_buf_adds(out, "true");
    else if (json_is_false(v))
        sl_buf_adds(out, "false");
    else if (json_is_array(v) || json_is_object(v)) {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        sl_buf_adds(out, s ? s : "");
        free(s);
    } else if (!json_is_null(v))
        sl_value_text(v, out);
}

/* s percent-encoded onto out: all but RFC 3986's unreserved characters. */
static void escape_to(sl_buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char tmp[256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (k + 3 > sizeof tmp) {
            sl_buf_add(out, tmp, k);
            k = 0;
        }
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
            tmp[k++] = (char)c;
        else {
            tmp[k++] = '%';
            tmp[k++] = hex[c >> 4];
            tmp[k++] = hex[c & 15];
        }
    }
    sl_buf_add(out, tmp, k);
}

static void add_escaped(sl_buf *out, const sl_value *v)
{
    if (json_is_string(v)) {
        escape_to(out, json_string_value(v), json_string_length(v));
        return;
    }
    sl_buf t;
    char mem[256];
    sl_buf_init_on(&t, 1u << 20, mem, sizeof mem);
    text_of(v, &t);
    escape_to(out, t.data ? t.data : "", t.len);
    sl_buf_release(&t);
}

/* A multipart body's parts, in the order of the operation's properties:
 * {name, text}, or {name, file} for each file of a format: binary one (a
 * Dify file value; the toolset reads its bytes when it sends them). */
static int multipart(const op *o, const char *tool, const sl_value *obj, sl_openapi_req *req,
                     sl_err *err)
{
    req->parts = json_array();
    for (size_t i = 0; i < o->n_props; i++) {
        const char *k = o->props[i];
        const sl_value *x = json_object_get(obj, k);
        if (!x)
            continue;
        if (o->kinds[i] == 't') {
            sl_buf t;
            sl_buf_init(&t, SL_OPENAPI_MAX_SPEC);
            text_of(x, &t);
            json_array_append_new(req->parts, json_pack("{s:s,s:s%}", "name", k, "text",
                                                        t.data ? t.data : "", t.len));
            sl_buf_release(&t);
            continue;
        }
        bool many = json_is_array(x);
        size_t n = many ? json_array_size(x) : 1;
        if ((many && o->kinds[i] == 'f') || n > SL_OPENAPI_MAX_PARTS)
            return sl_err_set(err, SL_EINVAL, "tool '%s': the argument '%s' is %s", tool, k,
                              many && o->kinds[i] == 'f' ? "one file (format: binary), not a list"
                                                         : "more files than 100");
        for (size_t j = 0; j < n; j++) {
            const sl_value *f = many ? json_array_get(x, j) : x;
            if (!sl_value_is_file(f))
                return sl_err_set(err, SL_EINVAL, "tool '%s': the argument '%s' is a file "
                                  "(format: binary): give a file value (a file input or a "
                                  "node's files), not %s", tool, k, sl_value_type_name(f));
            json_array_append_new(req->parts, json_pack("{s:s,s:O}", "name", k, "file", f));
        }
    }
    if (json_array_size(req->parts) > SL_OPENAPI_MAX_PARTS)
        return sl_err_set(err, SL_EINVAL, "tool '%s': more than %d parts in the body", tool,
                          SL_OPENAPI_MAX_PARTS);
    req->content_type = "multipart/form-data";
    return 0;
}

int sl_openapi_request(const sl_openapi_doc *d, const char *name, const sl_value *args,
                       const char *server, sl_openapi_req *req, sl_err *err)
{
    const op *o = find_op(d, name ? name : "");
    if (!o)
        return sl_err_set(err, SL_ENOTFOUND, "the OpenAPI document has no operation '%s'",
                          name ? name : "");
    for (size_t i = 0; i < o->n_required; i++) {
        const sl_value *v = json_object_get(args, o->required[i]);
        if (!v || json_is_null(v))
            return sl_err_set(err, SL_EINVAL, "tool '%s': the argument '%s' is required", name,
                              o->required[i]);
    }
    req->method = o->method;
    sl_buf_adds(&req->url, server);
    /* path parameters: each {name} filled, percent-encoded */
    for (const char *p = o->path; *p; p++) {
        const char *q = *p == '{' ? strchr(p, '}') : NULL;
        if (!q) {
            sl_buf_addc(&req->url, *p);
            continue;
        }
        char pn[256];
        snprintf(pn, sizeof pn, "%.*s", (int)(q - p - 1), p + 1);
        const sl_value *v = json_object_get(args, pn);
        if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                if (i)
                    sl_buf_addc(&req->url, ',');
                add_escaped(&req->url, json_array_get(v, i));
            }
        } else if (v)
            add_escaped(&req->url, v);
        p = q;
    }
    char sep = strchr(req->url.data, '?') ? '&' : '?';
    sl_buf cookies;
    sl_buf_init(&cookies, 1u << 20);
    for (size_t i = 0; i < o->n_params; i++) {
        const param *pa = &o->params[i];
        const sl_value *v = json_object_get(args, pa->name);
        if (!v || json_is_null(v))
            continue;
        if (pa->in == 'q' && json_is_array(v) && pa->join) {
            sl_buf_addc(&req->url, sep);
            escape_to(&req->url, pa->name, strlen(pa->name));
            sl_buf_addc(&req->url, '=');
            for (size_t k = 0; k < json_array_size(v); k++) {
                if (k)
                    escape_to(&req->url, &pa->join, 1);
                add_escaped(&req->url, json_array_get(v, k));
            }
            sep = '&';
        } else if (pa->in == 'q') {
            size_t n = json_is_array(v) ? json_array_size(v) : 1;
            for (size_t k = 0; k < n; k++) {
                sl_buf_addc(&req->url, sep);
                escape_to(&req->url, pa->name, strlen(pa->name));
                sl_buf_addc(&req->url, '=');
                add_escaped(&req->url, json_is_array(v) ? json_array_get(v, k) : v);
                sep = '&';
            }
        } else if (pa->in == 'h' || pa->in == 'c') {
            sl_buf t;
            sl_buf_init(&t, 1u << 20);
            if (json_is_array(v))
                for (size_t k = 0; k < json_array_size(v); k++) {
                    if (k)
                        sl_buf_addc(&t, ',');
                    text_of(json_array_get(v, k), &t);
                }
            else
                text_of(v, &t);
            const char *s = t.data ? t.data : "";
            if (strpbrk(s, "\r\n") || strlen(s) != t.len) {
                sl_buf_release(&t);
                sl_buf_release(&cookies);
                return sl_err_set(err, SL_EINVAL, "tool '%s': the %s '%s' may not hold a line "
                                  "break", name, pa->in == 'h' ? "header" : "cookie", pa->name);
            }
            if (pa->in == 'h') {
                /* headers that frame the request are the client's to set */
                static const char *const framing[] = {"Host", "Content-Length",
                                                      "Transfer-Encoding", "Connection",
                                                      "Expect", "Upgrade", "TE", NULL};
                bool skip = false;
                for (const char *const *f = framing; *f && !skip; f++)
                    skip = !strcasecmp(*f, pa->name);
                if (!skip)
                    sl_buf_addf(&req->headers, "%s: %s\n", pa->name, s);
            }
            else {
                char *e = sl_http_escape(s);
                sl_buf_addf(&cookies, "%s%s=%s", cookies.len ? "; " : "Cookie: ", pa->name, e);
                free(e);
            }
            sl_buf_release(&t);
        }
    }
    if (cookies.len)
        sl_buf_addf(&req->headers, "%s\n", cookies.data);
    sl_buf_release(&cookies);
    if (o->body != BODY_NONE) {
        sl_value *obj = NULL;
        if (o->body_whole)
            obj = json_incref(json_object_get(args, "body"));
        else {
            for (size_t i = 0; i < o->n_props; i++) {
                const sl_value *v = json_object_get(args, o->props[i]);
                if (!v || json_is_null(v))
                    continue;
                if (!obj)
                    obj = json_object();
                json_object_set(obj, o->props[i], (sl_value *)v);
            }
        }
        if (obj && o->body == BODY_JSON) {
            char *s = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
            sl_buf_adds(&req->body, s ? s : "null");
            free(s);
            req->content_type = "application/json";
        } else if (json_is_object(obj) && o->body == BODY_FORM) {
            const char *k;
            sl_value *x;
            json_object_foreach(obj, k, x) {
                char *e = sl_http_escape(k);
                sl_buf_addf(&req->body, "%s%s=", req->body.len ? "&" : "", e);
                free(e);
                add_escaped(&req->body, x);
            }
            req->content_type = "application/x-www-form-urlencoded";
        } else if (json_is_object(obj) && o->body == BODY_MULTIPART) {
            if (multipart(o, name, obj, req, err)) {
                json_decref(obj);
                return -1;
            }
        } else if (obj) {
            json_decref(obj);
            return sl_err_set(err, SL_EINVAL, "tool '%s': a form body is an object of fields",
                              name);
        }
        json_decref(obj);
    }
    if (req->url.toobig || req->headers.toobig || req->body.toobig)
        return sl_err_limit(err, SL_ELIMIT, NULL, "tool '%s': the request is too large", name);
    return 0;
}

/* ---- one answer as a result ---- */

static bool text_type(const char *t)
{
    size_t n = strcspn(t, ";");
    while (n && t[n - 1] == ' ')
        n--;
    if (!strncasecmp(t, "text/", 5))
        return true;
    static const char *const ends[] = {"json", "xml", "javascript", "yaml", "x-www-form-urlencoded",
                                       "graphql", "x-ndjson", NULL};
    for (const char *const *e = ends; *e; e++) {
        size_t k = strlen(*e);
        if (n >= k && !strncasecmp(t + n - k, *e, k))
            return true;
    }
    return false;
}

static bool utf8_ok(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned c = *p;
        size_t k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
                 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || (size_t)(end - p) <= k || (k == 1 && c < 0xC2) || (k == 3 && c > 0xF4))
            return false;
        for (size_t i = 1; i <= k; i++)
            if ((p[i] & 0xC0) != 0x80)
                return false;
        if (c == 0)
            return false;
        p += k + 1;
    }
    return true;
}

int sl_openapi_shape(const char *content_type, const char *filename, const char *body,
                     size_t len, const sl_tool_ctx *ctx, sl_tool_result *res, sl_err *err)
{
    const char *ct = content_type ? content_type : "";
    bool texty = *ct ? text_type(ct) : true;
    /* JSON that parses is UTF-8 already: jansson checks as it reads */
    sl_value *parsed = (is_json_type(ct) || !*ct) && texty
                           ? oat_json_loads(body, len) : NULL;
    if (texty && (parsed || utf8_ok(body, len))) {
        if (sl_tool_result_charge(res, ctx, len, err)) {
            json_decref(parsed);
            return -1;
        }
        sl_buf_add(&res->text, body, len);
        {
            sl_value *v = parsed;
            if (json_is_object(v))
                json_array_append(res->json, v);
            else if (json_is_array(v)) {
                size_t i;
                sl_value *x;
                json_array_foreach(v, i, x) if (json_is_object(x)) json_array_append(res->json, x);
            }
            json_decref(v);
        }
        return 0;
    }
    if (sl_tool_result_charge(res, ctx, len, err))
        return -1;
    char type[128];
    snprintf(type, sizeof type, "%.*s", (int)strcspn(ct, "; "), ct);
    char name[256];
    if (filename && *filename)
        snprintf(name, sizeof name, "%s", filename);
    else {
        const char *ext = sl_mime_ext_for(type);
        snprintf(name, sizeof name, "file%s", ext ? ext : "");
    }
    sl_tool_result_file(res, name, *type ? type : NULL, body, len);
    return 0;
}

/* ---- the toolset ---- */

typedef struct {
    sl_toolset base;
    sl_openapi_doc *doc;
    char *server;          /* absolute, no trailing "/" */
    char *where;           /* the server without user, password, query */
    char *auth_header;     /* "Name: value" or NULL */
    char *auth_query;      /* "name=value" (escaped) or NULL */
    char *secrets[4];      /* registered, NULL when untrusted */
    bool allow_private;
    pthread_mutex_t mu;
    sl_http *pool[POOL_MAX];
    size_t n_pool;
} oa;

/* A URL without user info, query or fragment: what errors may show. */
static char *shown_url(const char *u)
{
    const char *s = strstr(u, "://");
    const char *host = s ? s + 3 : u;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    const char *h = at && (!slash || at < slash) ? at + 1 : host;
    return sl_xasprintf("%.*s%.*s", (int)(host - u), u, (int)strcspn(h, "?#"), h);
}

static sl_http *take(oa *t, sl_err *err)
{
    sl_http *h = NULL;
    pthread_mutex_lock(&t->mu);
    if (t->n_pool)
        h = t->pool[--t->n_pool];
    pthread_mutex_unlock(&t->mu);
    if (!h)
        return sl_http_new(err);
    sl_http_reset(h);
    return h;
}

static void give(oa *t, sl_http *h)
{
    pthread_mutex_lock(&t->mu);
    if (t->n_pool < POOL_MAX) {
        t->pool[t->n_pool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&t->mu);
    sl_http_free(h);
}

typedef struct {
    const sl_tool_ctx *ctx;
    double until;
    sl_buf *body;
    char filename[256];
} xfer;

static int body_cb(const char *p, size_t n, void *ud)
{
    xfer *x = ud;
    return sl_buf_add(x->body, p, n) ? 1 : 0;
}

static bool stop_cb(void *ud)
{
    xfer *x = ud;
    return sl_tool_cancelled(x->ctx) || sl_clock_s() > x->until;
}

/* Content-Disposition's filename, kept for a file answer. */
static int header_cb(const char *line, size_t n, void *ud)
{
    xfer *x = ud;
    if (n > 20 && !strncasecmp(line, "content-disposition:", 20)) {
        char l[512];
        snprintf(l, sizeof l, "%.*s", (int)(n < sizeof l - 1 ? n : sizeof l - 1), line);
        const char *f = strstr(l, "filename=");
        if (f) {
            f += 9;
            bool q = *f == '"';
            f += q;
            size_t k = strcspn(f, q ? "\"" : ";\r\n ");
            snprintf(x->filename, sizeof x->filename, "%.*s", (int)k, f);
            /* a name, not a path */
            char *slash = strrchr(x->filename, '/');
            if (slash)
                memmove(x->filename, slash + 1, strlen(slash));
        }
    }
    return 0;
}

static int http_fail(const char *what, sl_http *h, sl_http_result rc, const xfer *x,
                     double timeout_s, size_t cap, sl_err *err)
{
    switch (rc) {
    case SL_HTTP_STOPPED:
        if (sl_tool_cancelled(x->ctx))
            return sl_err_set(err, SL_ECANCELED, "%s: the call was cancelled", what);
        /* fallthrough */
    case SL_HTTP_TIMEOUT:
        return sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                            "%s: no answer within %g s (tool_timeout_s); raise the limit or ask "
                            "the API's owner why it is slow", what, timeout_s);
    case SL_HTTP_CONNECT_TIMEOUT:
        return sl_err_limit(err, SL_ETIMEOUT, NULL, "%s: no connection within %g s; check that "
                            "the server is up and reachable", what, sl_http_opts_of(h)->connect_s);
    case SL_HTTP_REFUSED: {
        const char *kind = "";
        const char *addr = sl_http_refused(h, &kind);
        return sl_err_typed(err, SL_EIO, "ToolSSRFError",
                            "%s: sluice refused to connect to %s (%s): tools may not reach "
                            "loopback or private addresses; if the server is yours, set the "
                            "limit tool_allow_private=true (--limit, or "
                            "SLUICE_TOOL_ALLOW_PRIVATE=true)", what, addr ? addr : "?",
                            kind ? kind : "?");
    }
    case SL_HTTP_TOO_BIG:
    case SL_HTTP_HEADERS_TOO_BIG:
        return sl_err_limit(err, SL_ELIMIT, "tool_max_output",
                            "%s: the answer passed %zu bytes, more than sluice reads from an API "
                            "tool; ask the API for less (or raise tool_max_output, up to 10 MiB)",
                            what, cap);
    default:
        return sl_err_set(err, SL_EIO, "%s: %s", what, sl_http_why(h));
    }
}

/* A file value's bytes: the run's (ctx->file_bytes), else its own
 * content_base64.  At most cap; 0, or -1 with err naming the argument. */
static int file_bytes(const sl_tool_ctx *ctx, const char *what, const char *arg,
                      const sl_value *f, size_t cap, sl_buf *out, sl_err *err)
{
    int rc = 1;
    if (ctx && ctx->file_bytes)
        rc = ctx->file_bytes(ctx->ud, f, cap, out, err);
    else if (json_is_string(json_object_get(f, "content_base64"))) {
        const sl_value *b = json_object_get(f, "content_base64");
        rc = sl_base64_decode(json_string_value(b), json_string_length(b), out) ? -1 : 0;
        if (rc)
            sl_err_set(err, SL_EINVAL, "its content_base64 is not base64");
        else if (out->len > cap)
            rc = sl_err_set(err, SL_ELIMIT, "more than %zu bytes", cap);
    }
    if (rc == 1)
        return sl_err_set(err, SL_EINVAL, "%s: the file for '%s' holds no bytes here (a remote "
                          "URL?); sluice sends the files a run holds", what, arg);
    if (rc)
        return sl_err_prefix(err, "%s: the file for '%s'", what, arg);
    return 0;
}

/* The multipart body: text parts, and file parts with the file's name and
 * type, together at most SL_OPENAPI_MAX_UPLOAD bytes. */
static int add_parts(sl_http *h, const sl_value *parts, const sl_tool_ctx *ctx,
                     const char *what, sl_err *err)
{
    size_t total = 0, i;
    const sl_value *p;
    json_array_foreach(parts, i, p) {
        const char *name = json_string_value(json_object_get(p, "name"));
        const sl_value *text = json_object_get(p, "text");
        const sl_value *f = json_object_get(p, "file");
        if (text) {
            total += json_string_length(text);
            if (total > SL_OPENAPI_MAX_UPLOAD)
                break;
            sl_http_form_add(h, name, NULL, NULL, json_string_value(text),
                             json_string_length(text));
            continue;
        }
        sl_buf b;
        sl_buf_init(&b, 0);
        if (file_bytes(ctx, what, name, f, SL_OPENAPI_MAX_UPLOAD - total, &b, err)) {
            sl_buf_release(&b);
            return -1;
        }
        total += b.len;
        const char *fname = json_string_value(json_object_get(f, "filename"));
        const char *type = json_string_value(json_object_get(f, "mime_type"));
        sl_http_form_add(h, name, fname && *fname ? fname : "file",
                         type && *type ? type : "application/octet-stream",
                         b.data ? b.data : "", b.len);
        sl_buf_release(&b);
    }
    if (total > SL_OPENAPI_MAX_UPLOAD)
        return sl_err_limit(err, SL_ELIMIT, NULL, "%s: the multipart body passes %u MiB; send "
                            "smaller files", what, SL_OPENAPI_MAX_UPLOAD >> 20);
    return 0;
}

/* One exchange: the answer's status and body (capped). */
static int exchange(oa *t, const sl_openapi_req *rq, const sl_tool_ctx *ctx, const char *what,
                    sl_buf *body, long *status, char *ctype, size_t ctn, char *fname, size_t fnn,
                    sl_err *err)
{
    sl_http *h = take(t, err);
    if (!h)
        return -1;
    double timeout = sl_tool_timeout(ctx);
    xfer x = {ctx, sl_clock_s() + timeout, body, ""};
    size_t cap = sl_tool_max_output(ctx);
    if (cap > SL_OPENAPI_MAX_BODY)
        cap = SL_OPENAPI_MAX_BODY;
    sl_http_url(h, rq->url.data);
    bool with_body = rq->content_type && !rq->parts;
    sl_http_method(h, rq->method, rq->body.data, rq->body.len, rq->content_type != NULL);
    if (rq->parts && add_parts(h, rq->parts, ctx, what, err)) {
        give(t, h);
        return -1;
    }
    if (with_body) {
        sl_http_headerf(h, "Content-Type: %s", rq->content_type);
        sl_http_header(h, "Expect:");
    }
    sl_http_header(h, "Accept: application/json, */*;q=0.8");
    for (const char *p = rq->headers.data; p && *p;) {
        size_t n = strcspn(p, "\n");
        char line[8192];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        sl_http_header(h, line);
        p += n + (p[n] == '\n');
    }
    if (t->auth_header)
        sl_http_header(h, t->auth_header);
    sl_http_opts *o = sl_http_opts_of(h);
    o->guard = true;
    o->allow_private = t->allow_private;
    o->connect_s = timeout < CONNECT_S ? timeout : CONNECT_S;
    o->timeout_s = timeout + 1;  /* the stop callback says it first */
    o->max_body = cap;
    o->max_headers = 64u << 10;
    o->user_agent = "sluice";
    o->accept_encoding = "";
    o->stop = stop_cb;
    o->stop_ud = &x;
    o->on_header = header_cb;
    o->ud = &x;
    o->on_body = NULL;
    o->on_body = body_cb;
    body->cap = cap + 1;
    sl_http_result rc = sl_http_perform(h);
    int ret = 0;
    if (rc != SL_HTTP_OK)
        ret = http_fail(what, h, rc == SL_HTTP_CALLBACK ? SL_HTTP_TOO_BIG : rc, &x, timeout, cap,
                        err);
    else {
        *status = sl_http_status(h);
        const char *ct = sl_http_content_type(h);
        snprintf(ctype, ctn, "%s", ct ? ct : "");
        snprintf(fname, fnn, "%s", x.filename);
        const char *loc = *status >= 300 && *status < 400 ? sl_http_redirect(h) : NULL;
        if (loc) {
            char l[300];
            sl_excerpt(loc, l, sizeof l);
            ret = sl_err_set(err, SL_EIO, "%s: HTTP %ld, a redirect to %s; sluice does not "
                             "follow an API tool's redirects: if you trust that address, set "
                             "the binding's server to it", what, *status, l);
        }
    }
    give(t, h);
    return ret;
}

static int oa_list(sl_toolset *ts, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)ctx;
    (void)err;
    *out = json_deep_copy(sl_openapi_tools(((oa *)ts)->doc));
    return 0;
}

static int oa_call(sl_toolset *ts, const sl_tool_ctx *ctx, const char *name,
                   const sl_value *args, sl_tool_result *res, sl_err *err)
{
    oa *t = (oa *)ts;
    if (args && !json_is_object(args))
        return sl_err_set(err, SL_EINVAL, "tool '%s': the arguments are an object", name);
    if (sl_tool_cancelled(ctx))
        return sl_err_set(err, SL_ECANCELED, "tool '%s': the call was cancelled", name);
    sl_openapi_req rq;
    sl_openapi_req_init(&rq);
    int rc = sl_openapi_request(t->doc, name, args, t->server, &rq, err);
    if (rc == 0 && t->auth_query) {
        sl_buf_addc(&rq.url, strchr(rq.url.data, '?') ? '&' : '?');
        sl_buf_adds(&rq.url, t->auth_query);
    }
    const op *o = rc == 0 ? find_op(t->doc, name) : NULL;
    char what[700];
    if (o)
        snprintf(what, sizeof what, "API tool '%.100s' (%s %.300s%.200s)", name, o->method,
                 t->where, o->path);
    sl_buf body;
    sl_buf_init(&body, 0);
    long status = 0;
    char ctype[256] = "", fname[256] = "";
    if (rc == 0)
        rc = exchange(t, &rq, ctx, what, &body, &status, ctype, sizeof ctype, fname, sizeof fname,
                      err);
    sl_openapi_req_release(&rq);
    if (rc == 0 && status >= 400) {
        char shown[MAX_SHOWN + 8];
        sl_buf head;
        sl_buf_init(&head, 0);
        sl_buf_add(&head, body.data ? body.data : "", body.len < MAX_SHOWN ? body.len : MAX_SHOWN);
        sl_excerpt(head.len ? head.data : "no body", shown, sizeof shown);
        sl_buf_release(&head);
        const char *hint = status == 401 || status == 403
                               ? "; check the binding's auth (its key or token)"
                           : status == 404 ? "; check the server URL and the path" : "";
        rc = sl_err_set(err, SL_EIO, "%s: HTTP %ld%s: %s", what, status, hint, shown);
    } else if (rc == 0)
        rc = sl_openapi_shape(ctype, fname, body.data ? body.data : "", body.len, ctx, res, err);
    sl_buf_release(&body);
    return rc;
}

static const char *oa_where(sl_toolset *ts)
{
    return ((oa *)ts)->where;
}

static void oa_free(sl_toolset *ts)
{
    oa *t = (oa *)ts;
    if (!t)
        return;
    sl_openapi_doc_free(t->doc);
    for (size_t i = 0; i < t->n_pool; i++)
        sl_http_free(t->pool[i]);
    for (int i = 0; i < 4; i++)
        sl_secret_free(t->secrets[i]);
    if (t->auth_header)
        explicit_bzero(t->auth_header, strlen(t->auth_header));
    if (t->auth_query)
        explicit_bzero(t->auth_query, strlen(t->auth_query));
    free(t->auth_header);
    free(t->auth_query);
    free(t->server);
    free(t->where);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

static const sl_toolset_ops oa_ops = {
    .kind = "openapi",
    .list = oa_list,
    .call = oa_call,
    .where = oa_where,
    .free = oa_free,
};

/* The document's bytes from an http(s) URL, through the guard, no redirects. */
static int fetch_spec(const char *url, bool allow_private, sl_buf *out, sl_err *err)
{
    char *shown = shown_url(url);
    sl_http *h = sl_http_new(err);
    if (!h) {
        free(shown);
        return -1;
    }
    sl_http_url(h, url);
    sl_http_method(h, "GET", NULL, 0, false);
    sl_http_header(h, "Accept: application/json, application/yaml, text/yaml, */*;q=0.5");
    sl_http_opts *o = sl_http_opts_of(h);
    o->guard = true;
    o->allow_private = allow_private;
    o->connect_s = CONNECT_S;
    o->timeout_s = 30;
    o->max_body = SL_OPENAPI_MAX_SPEC;
    o->max_headers = 64u << 10;
    o->user_agent = "sluice";
    o->accept_encoding = "";
    xfer x = {NULL, sl_clock_s() + 30, out, ""};
    o->on_body = body_cb;
    o->ud = &x;
    out->cap = SL_OPENAPI_MAX_SPEC + 1;
    sl_http_result rc = sl_http_perform(h);
    char what[600];
    snprintf(what, sizeof what, "OpenAPI document %.500s", shown);
    int ret = 0;
    if (rc != SL_HTTP_OK)
        ret = http_fail(what, h, rc == SL_HTTP_CALLBACK ? SL_HTTP_TOO_BIG : rc, &x, 30,
                        SL_OPENAPI_MAX_SPEC, err);
    else if (sl_http_status(h) >= 300) {
        const char *loc = sl_http_redirect(h);
        char l[300] = "";
        if (loc)
            sl_excerpt(loc, l, sizeof l);
        ret = sl_err_set(err, SL_EIO, "%s: HTTP %ld%s%s%s", what, sl_http_status(h),
                         loc ? ", a redirect to " : "", l,
                         loc ? "; sluice does not follow redirects: bind that URL if you trust "
                               "it" : "");
    }
    sl_http_free(h);
    free(shown);
    return ret;
}

/* The document's bytes from a file; a bundle's must stay in its folder. */
static int read_spec(const sl_openapi_opts *o, sl_buf *out, char **where, sl_err *err)
{
    const char *p = o->spec;
    if (o->confine) {
        bool dots = false;
        for (const char *s = p; *s; s += strcspn(s, "/"), s += *s == '/')
            dots |= !strncmp(s, "..", 2) && (s[2] == '/' || !s[2]);
        if (p[0] == '/' || dots || !o->base_dir)
            return sl_err_set(err, SL_EINVAL, "OpenAPI document %s: an app bundle's spec is a "
                              "path inside its tools/ folder (no absolute path, no ..)", p);
    }
    char *full = p[0] == '/' || !o->base_dir ? sl_xstrdup(p)
                                             : sl_xasprintf("%s/%s", o->base_dir, p);
    *where = sl_xstrdup(p);
    char *real = realpath(full, NULL);
    if (!real) {
        int rc = sl_err_set(err, SL_ENOTFOUND, "OpenAPI document %s: cannot read %s: %m; check "
                            "the binding's spec path", p, full);
        free(full);
        return rc;
    }
    free(full);
    if (o->confine) {
        char *dir = realpath(o->base_dir, NULL);
        size_t n = dir ? strlen(dir) : 0;
        bool inside = dir && !strncmp(real, dir, n) && real[n] == '/';
        free(dir);
        if (!inside) {
            free(real);
            return sl_err_set(err, SL_EINVAL, "OpenAPI document %s: it leads out of the bundle's "
                              "tools/ folder (a symlink?); a bundle reads only its own files", p);
        }
    }
    FILE *fp = fopen(real, "rb");
    struct stat st;
    if (!fp || fstat(fileno(fp), &st) || !S_ISREG(st.st_mode)) {
        if (fp)
            fclose(fp);
        free(real);
        return sl_err_set(err, SL_EIO, "OpenAPI document %s: not a readable file", p);
    }
    free(real);
    out->cap = SL_OPENAPI_MAX_SPEC + 1;
    int rc = sl_buf_add_file(out, fp);
    fclose(fp);
    if (rc && !out->toobig)
        return sl_err_set(err, SL_EIO, "OpenAPI document %s: reading failed", p);
    return 0;
}

static void keep_secret(oa *t, int i, const char *s, bool untrusted)
{
    if (untrusted || !s || !*s)
        return;
    t->secrets[i] = sl_xstrdup(s);
    sl_secret_add(s);
}

static int set_auth(oa *t, const sl_openapi_auth *a, bool untrusted, sl_err *err)
{
    const char *type = a->type && *a->type ? a->type : "none";
    if (!strcmp(type, "none"))
        return 0;
    if (!strcmp(type, "bearer")) {
        if (!a->value || !*a->value)
            return sl_err_set(err, SL_EINVAL, "auth: bearer needs a token");
        if (strpbrk(a->value, "\r\n"))
            return sl_err_set(err, SL_EINVAL, "auth: the token may not hold a line break");
        t->auth_header = sl_xasprintf("Authorization: Bearer %s", a->value);
        keep_secret(t, 0, a->value, untrusted);
        return 0;
    }
    if (!strcmp(type, "basic")) {
        if (!a->username)
            return sl_err_set(err, SL_EINVAL, "auth: basic needs a username (and a password)");
        char *pair = sl_xasprintf("%s:%s", a->username, a->password ? a->password : "");
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_base64_encode((const unsigned char *)pair, strlen(pair), &b);
        explicit_bzero(pair, strlen(pair));
        free(pair);
        t->auth_header = sl_xasprintf("Authorization: Basic %s", b.data ? b.data : "");
        keep_secret(t, 0, b.data, untrusted);
        keep_secret(t, 1, a->password, untrusted);
        explicit_bzero(b.data, b.len);
        sl_buf_release(&b);
        return 0;
    }
    if (!strcmp(type, "api_key")) {
        if (!a->value || !*a->value)
            return sl_err_set(err, SL_EINVAL, "auth: api_key needs a value (the key)");
        if (strpbrk(a->value, "\r\n"))
            return sl_err_set(err, SL_EINVAL, "auth: the key may not hold a line break");
        const char *in = a->in && *a->in ? a->in : "header";
        if (!strcmp(in, "query")) {
            char *n = sl_http_escape(a->name && *a->name ? a->name : "key");
            char *v = sl_http_escape(a->value);
            t->auth_query = sl_xasprintf("%s=%s", n, v);
            free(n);
            explicit_bzero(v, strlen(v));
            free(v);
        } else if (!strcmp(in, "header")) {
            const char *name = a->name && *a->name ? a->name : "Authorization";
            for (const char *p = name; *p; p++)
                if (*p <= 32 || *p >= 127 || *p == ':')
                    return sl_err_set(err, SL_EINVAL, "auth: '%s' is not a header name", name);
            /* Dify's choices are basic, bearer and custom (the key alone) */
            const char *pre = a->prefix ? a->prefix : "";
            if (!strcasecmp(pre, "bearer"))
                pre = "Bearer";
            else if (!strcasecmp(pre, "basic"))
                pre = "Basic";
            else if (!strcasecmp(pre, "custom"))
                pre = "";
            if (strpbrk(pre, "\r\n"))
                return sl_err_set(err, SL_EINVAL, "auth: the prefix may not hold a line break");
            t->auth_header = sl_xasprintf("%s: %s%s%s", name, pre, *pre ? " " : "", a->value);
        } else
            return sl_err_set(err, SL_EINVAL, "auth: an api_key goes in a header or the query, "
                              "not '%s'", in);
        keep_secret(t, 0, a->value, untrusted);
        return 0;
    }
    return sl_err_set(err, SL_EINVAL, "auth: the type is none, api_key, bearer or basic, not "
                      "'%s'", type);
}

sl_toolset *sl_openapi_new(const sl_openapi_opts *o, sl_err *err)
{
    if (!o->spec || !*o->spec)
        return sl_err_set(err, SL_EINVAL, "an OpenAPI binding needs its spec"), NULL;
    sl_buf text;
    sl_buf_init(&text, 0);
    char *where = NULL;
    bool url = !o->document && absolute(o->spec);
    int rc = 0;
    if (o->document) {
        where = sl_xstrdup(o->spec);
        text.cap = SL_OPENAPI_MAX_SPEC + 1;
        sl_buf_adds(&text, o->document);
    } else if (url) {
        rc = fetch_spec(o->spec, o->allow_private, &text, err);
        where = shown_url(o->spec);
    } else
        rc = read_spec(o, &text, &where, err);
    if (rc == 0 && text.toobig)
        rc = sl_err_limit(err, SL_ELIMIT, NULL, "OpenAPI document %s: larger than %u MiB", where,
                          SL_OPENAPI_MAX_SPEC >> 20);
    sl_openapi_doc *doc = NULL;
    if (rc == 0)
        rc = sl_openapi_parse(text.data ? text.data : "", text.len, where,
                              url ? o->spec : NULL, &doc, err);
    sl_buf_release(&text);
    const char *server = o->server && *o->server ? o->server : doc ? doc->server : NULL;
    if (rc == 0 && !server)
        rc = sl_err_set(err, SL_EINVAL, "OpenAPI document %s: it names no server (or only a "
                        "relative one); set the binding's server: https://HOST/PATH", where);
    if (rc == 0 && !absolute(server))
        rc = sl_err_set(err, SL_EINVAL, "OpenAPI document %s: the server '%.200s' is not an "
                        "http(s) URL; set the binding's server", where, server);
    if (rc) {
        free(where);
        sl_openapi_doc_free(doc);
        return NULL;
    }
    oa *t = sl_xcalloc(1, sizeof *t);
    t->base.ops = &oa_ops;
    t->doc = doc;
    t->server = resolve_url(server, NULL);
    t->where = shown_url(t->server);
    t->allow_private = o->allow_private;
    pthread_mutex_init(&t->mu, NULL);
    free(where);
    if (set_auth(t, &o->auth, o->untrusted, err)) {
        oa_free(&t->base);
        return NULL;
    }
    return &t->base;
}
