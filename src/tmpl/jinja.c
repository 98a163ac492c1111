/*
 * jinja — compiling: the parser builds the tree of jinja_int.h from the
 * lexer's tokens (jinja_lex.c), and the API of jinja.h lives here.
 * Filters and tests are looked up while parsing, so an unknown one is a
 * compile error, as in Jinja2.  Rendering is jinja_eval.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl/jinja_lex.h"

/* ---- arena ---- */

struct arena {
    struct arena *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

void *sl_jx_amalloc(sl_jinja *t, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena *a = t->arena;
    if (!a || a->used + n > a->cap) {
        size_t cap = n > 8192 ? n : 8192;
        a = sl_xmalloc(sizeof *a + cap);
        a->next = t->arena;
        a->used = 0;
        a->cap = cap;
        t->arena = a;
    }
    void *p = a->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *sl_jx_astrndup(sl_jinja *t, const char *s, size_t n)
{
    char *p = sl_jx_amalloc(t, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* ---- errors ---- */

static void line_col(const sl_jinja *t, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < t->srclen; i++) {
        if (t->src[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)t->src[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

void *sl_jx_perr(P *p, size_t off, const char *fmt, ...)
{
    if (p->failed)
        return NULL;
    p->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line, col;
    line_col(p->t, off, &line, &col);
    sl_err_set(p->err, SL_EPARSE, "%s:%d:%d: %s", p->t->name, line, col, msg);
    return NULL;
}

/* ---- parser ---- */

static void defer_err(P *p, size_t off, const char *what, const char *name)
{
    if (p->soft || p->pend)
        return;
    p->pend = true;
    p->pend_off = off;
    snprintf(p->pend_msg, sizeof p->pend_msg, "no %s named '%s'", what, name);
}

static tok *cur(P *p)
{
    return &p->toks[p->pos];
}

static bool is_op(P *p, const char *op)
{
    tok *k = cur(p);
    return k->type == T_OP && !strcmp(k->s, op);
}

static bool is_name(P *p, const char *name)
{
    tok *k = cur(p);
    return k->type == T_NAME && !strcmp(k->s, name);
}

static const char *tok_desc(tok *k, char *buf, size_t n)
{
    switch (k->type) {
    case T_EOF: return "end of template";
    case T_VE: return "end of print statement '}}'";
    case T_BE: return "end of statement block '%}'";
    case T_VB: return "'{{'";
    case T_BB: return "'{%'";
    case T_TEXT: return "template text";
    case T_STR: return "a string";
    case T_INT: return "an integer";
    case T_FLOAT: return "a float";
    default: snprintf(buf, n, "'%s'", k->s); return buf;
    }
}

static bool expect_op(P *p, const char *op, const char *what)
{
    if (is_op(p, op)) {
        p->pos++;
        return true;
    }
    char b[80];
    sl_jx_perr(p, cur(p)->off, "expected '%s'%s%s, found %s", op, what ? " " : "", what ? what : "",
               tok_desc(cur(p), b, sizeof b));
    return false;
}

static bool expect(P *p, int type, const char *what)
{
    if (cur(p)->type == type) {
        p->pos++;
        return true;
    }
    char b[80];
    sl_jx_perr(p, cur(p)->off, "expected %s, found %s", what, tok_desc(cur(p), b, sizeof b));
    return false;
}

static jnode *nn(P *p, int type, size_t off)
{
    jnode *e = sl_jx_amalloc(p->t, sizeof *e);
    e->type = (uint8_t)type;
    e->off = (uint32_t)off;
    return e;
}

static void end_span(P *p, jnode *e)
{
    if (!e || !p->pos)
        return;
    tok *last = &p->toks[p->pos - 1];
    if (last->off + last->len > e->off)
        e->len = last->off + last->len - e->off;
}

typedef struct {
    jnode **v;
    int n, cap;
} vec;

static void vpush(vec *v, jnode *e)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->v = sl_xrealloc(v->v, (size_t)v->cap * sizeof *v->v);
    }
    v->v[v->n++] = e;
}

/* moves a vector into the arena */
static jnode **vdone(P *p, vec *v, int *n)
{
    *n = v->n;
    jnode **a = NULL;
    if (v->n) {
        a = sl_jx_amalloc(p->t, (size_t)v->n * sizeof *a);
        memcpy(a, v->v, (size_t)v->n * sizeof *a);
    }
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
    return a;
}

static jnode *konst(P *p, size_t off, json_t *c)
{
    sl_jinja *t = p->t;
    if (!c) {
        sl_jx_perr(p, off, "a number that is not finite");
        return NULL;
    }
    if (t->nconsts == t->aconsts) {
        t->aconsts = t->aconsts ? t->aconsts * 2 : 16;
        t->consts = sl_xrealloc(t->consts, t->aconsts * sizeof *t->consts);
    }
    t->consts[t->nconsts++] = c;
    jnode *e = nn(p, E_CONST, off);
    e->c = c;
    return e;
}

static jnode *parse_expr(P *p);
static jnode *parse_or(P *p);
static jnode *parse_unary(P *p, bool with_filter);
static jnode *parse_filter_tail(P *p, jnode *e);

#define DEEP(p)                                                                                    \
    do {                                                                                           \
        if (++(p)->depth > 200) {                                                                  \
            (p)->depth--;                                                                          \
            return sl_jx_perr((p), cur(p)->off, "expression nested too deeply");                   \
        }                                                                                          \
    } while (0)

static bool starts_expr(P *p)
{
    tok *k = cur(p);
    if (k->type == T_NAME || k->type == T_INT || k->type == T_FLOAT || k->type == T_STR)
        return true;
    return k->type == T_OP && strchr("([{-+", k->s[0]) && k->slen == 1;
}

/* call arguments after '(' up to ')' into e->v / e->kwn,kwv */
static bool parse_args(P *p, jnode *e)
{
    vec pos = {0}, kw = {0};
    const char *names[64];
    int nn_ = 0;
    while (!is_op(p, ")")) {
        if (pos.n || kw.n)
            if (!expect_op(p, ",", "between arguments"))
                goto fail;
        if (is_op(p, ")"))
            break;
        if (cur(p)->type == T_NAME && p->toks[p->pos + 1].type == T_OP &&
            !strcmp(p->toks[p->pos + 1].s, "=")) {
            if (nn_ == 64) {
                sl_jx_perr(p, cur(p)->off, "too many keyword arguments");
                goto fail;
            }
            names[nn_++] = cur(p)->s;
            p->pos += 2;
            jnode *v = parse_expr(p);
            if (!v)
                goto fail;
            vpush(&kw, v);
        } else {
            if (kw.n) {
                sl_jx_perr(p, cur(p)->off, "a positional argument follows keyword arguments");
                goto fail;
            }
            jnode *v = parse_expr(p);
            if (!v)
                goto fail;
            vpush(&pos, v);
        }
    }
    p->pos++;
    e->v = vdone(p, &pos, &e->nv);
    e->kwv = vdone(p, &kw, &e->nkw);
    if (nn_) {
        e->kwn = sl_jx_amalloc(p->t, (size_t)nn_ * sizeof *e->kwn);
        memcpy(e->kwn, names, (size_t)nn_ * sizeof *names);
    }
    return true;
fail:
    free(pos.v);
    free(kw.v);
    return false;
}

static jnode *parse_primary(P *p)
{
    tok *k = cur(p);
    size_t off = k->off;
    jnode *e;
    switch (k->type) {
    case T_NAME:
        p->pos++;
        if (!strcmp(k->s, "true") || !strcmp(k->s, "True"))
            return konst(p, off, json_true());
        if (!strcmp(k->s, "false") || !strcmp(k->s, "False"))
            return konst(p, off, json_false());
        if (!strcmp(k->s, "none") || !strcmp(k->s, "None"))
            return konst(p, off, json_null());
        e = nn(p, E_NAME, off);
        e->s = k->s;
        e->slen = k->slen;
        end_span(p, e);
        return e;
    case T_STR: {
        /* adjacent literals concatenate */
        size_t total = 0, q = p->pos;
        while (p->toks[q].type == T_STR)
            total += p->toks[q++].slen;
        char *buf = sl_jx_amalloc(p->t, total + 1), *o = buf;
        while (cur(p)->type == T_STR) {
            memcpy(o, cur(p)->s, cur(p)->slen);
            o += cur(p)->slen;
            p->pos++;
        }
        e = konst(p, off, json_stringn_nocheck(buf, total));
        end_span(p, e);
        return e;
    }
    case T_INT:
        p->pos++;
        return konst(p, off, json_integer(k->i));
    case T_FLOAT:
        p->pos++;
        return konst(p, off, isfinite(k->f) ? json_real(k->f) : NULL);
    case T_OP:
        if (!strcmp(k->s, "(")) {
            p->pos++;
            if (is_op(p, ")")) {
                p->pos++;
                e = nn(p, E_TUPLE, off);
                end_span(p, e);
                return e;
            }
            jnode *first = parse_expr(p);
            if (!first)
                return NULL;
            if (is_op(p, ",")) {
                vec v = {0};
                vpush(&v, first);
                while (is_op(p, ",")) {
                    p->pos++;
                    if (is_op(p, ")"))
                        break;
                    jnode *x = parse_expr(p);
                    if (!x) {
                        free(v.v);
                        return NULL;
                    }
                    vpush(&v, x);
                }
                e = nn(p, E_TUPLE, off);
                e->v = vdone(p, &v, &e->nv);
                first = e;
            }
            if (!expect_op(p, ")", "to close '('"))
                return NULL;
            return first;
        }
        if (!strcmp(k->s, "[")) {
            p->pos++;
            vec v = {0};
            while (!is_op(p, "]")) {
                if (v.n && !expect_op(p, ",", "between list items"))
                    goto lfail;
                if (is_op(p, "]"))
                    break;
                jnode *x = parse_expr(p);
                if (!x)
                    goto lfail;
                vpush(&v, x);
            }
            p->pos++;
            e = nn(p, E_LIST, off);
            e->v = vdone(p, &v, &e->nv);
            end_span(p, e);
            return e;
        lfail:
            free(v.v);
            return NULL;
        }
        if (!strcmp(k->s, "{")) {
            p->pos++;
            vec v = {0};
            while (!is_op(p, "}")) {
                if (v.n && !expect_op(p, ",", "between dict items"))
                    goto dfail;
                if (is_op(p, "}"))
                    break;
                jnode *key = parse_expr(p);
                if (!key || !expect_op(p, ":", "after a dict key"))
                    goto dfail;
                jnode *val = parse_expr(p);
                if (!val)
                    goto dfail;
                vpush(&v, key);
                vpush(&v, val);
            }
            p->pos++;
            e = nn(p, E_DICT, off);
            e->v = vdone(p, &v, &e->nv);
            end_span(p, e);
            return e;
        dfail:
            free(v.v);
            return NULL;
        }
        break;
    default:
        break;
    }
    char b[80];
    return sl_jx_perr(p, off, "expected an expression, found %s", tok_desc(k, b, sizeof b));
}

static jnode *parse_postfix(P *p, jnode *e)
{
    while (e) {
        size_t off = e->off;
        if (is_op(p, ".")) {
            p->pos++;
            tok *k = cur(p);
            if (k->type == T_NAME) {
                p->pos++;
                jnode *a = nn(p, E_ATTR, off);
                a->a = e;
                a->s = k->s;
                a->slen = k->slen;
                e = a;
            } else if (k->type == T_INT) {
                p->pos++;
                jnode *a = nn(p, E_ITEM, off);
                a->a = e;
                a->b = konst(p, k->off, json_integer(k->i));
                e = a;
            } else {
                char b[80];
                return sl_jx_perr(p, k->off, "expected an attribute name after '.', found %s",
                                  tok_desc(k, b, sizeof b));
            }
        } else if (is_op(p, "[")) {
            p->pos++;
            jnode *parts[3] = {NULL, NULL, NULL};
            int np = 0;
            bool slice = false;
            for (;;) {
                if (is_op(p, ":")) {
                    slice = true;
                    p->pos++;
                    np++;
                    if (np > 2)
                        return sl_jx_perr(p, cur(p)->off, "too many ':' in a slice");
                    continue;
                }
                if (is_op(p, "]"))
                    break;
                if (parts[np])
                    return sl_jx_perr(p, cur(p)->off, "expected ']' or ':'");
                parts[np] = parse_expr(p);
                if (!parts[np])
                    return NULL;
            }
            p->pos++;
            if (!slice && !parts[0])
                return sl_jx_perr(p, off, "empty subscript []");
            jnode *a = nn(p, slice ? E_SLICE : E_ITEM, off);
            a->a = e;
            a->b = parts[0];
            a->x = parts[1];
            a->cond = parts[2];
            e = a;
        } else if (is_op(p, "(")) {
            p->pos++;
            jnode *c = nn(p, E_CALL, off);
            c->a = e;
            if (!parse_args(p, c))
                return NULL;
            e = c;
        } else {
            break;
        }
        end_span(p, e);
    }
    return e;
}

static jnode *parse_filter(P *p, jnode *e)
{
    size_t off = e ? e->off : cur(p)->off;
    tok *k = cur(p);
    if (k->type != T_NAME) {
        char b[80];
        return sl_jx_perr(p, k->off, "expected a filter name after '|', found %s",
                          tok_desc(k, b, sizeof b));
    }
    p->pos++;
    jnode *f = nn(p, E_FILTER, off);
    f->a = e;
    f->s = k->s;
    f->fn = sl_jx_find_filter(k->s);
    if (!f->fn)
        defer_err(p, k->off, "filter", k->s);
    if (is_op(p, "(")) {
        p->pos++;
        if (!parse_args(p, f))
            return NULL;
    }
    end_span(p, f);
    return f;
}

static jnode *parse_filter_tail(P *p, jnode *e)
{
    while (e) {
        if (is_op(p, "|")) {
            p->pos++;
            e = parse_filter(p, e);
        } else if (is_name(p, "is")) {
            p->pos++;
            jnode *t = nn(p, E_TEST, e->off);
            t->a = e;
            if (is_name(p, "not")) {
                t->neg = true;
                p->pos++;
            }
            tok *k = cur(p);
            const char *name = NULL;
            if (k->type == T_NAME) {
                name = k->s;
            } else {
                char b[80];
                return sl_jx_perr(p, k->off, "expected a test name after 'is', found %s",
                                  tok_desc(k, b, sizeof b));
            }
            p->pos++;
            t->s = name;
            t->fn = sl_jx_find_test(name);
            if (!t->fn)
                defer_err(p, k->off, "test", name);
            if (is_op(p, "(")) {
                p->pos++;
                if (!parse_args(p, t))
                    return NULL;
            } else {
                tok *c = cur(p);
                bool arg = c->type == T_NAME || c->type == T_STR || c->type == T_INT ||
                           c->type == T_FLOAT ||
                           (c->type == T_OP && (!strcmp(c->s, "[") || !strcmp(c->s, "{")));
                if (arg && c->type == T_NAME &&
                    (!strcmp(c->s, "else") || !strcmp(c->s, "or") || !strcmp(c->s, "and") ||
                     !strcmp(c->s, "if") || !strcmp(c->s, "is") || !strcmp(c->s, "in") ||
                     !strcmp(c->s, "not")))
                    arg = false;
                if (arg) {
                    jnode *x = parse_postfix(p, parse_primary(p));
                    if (!x)
                        return NULL;
                    t->v = sl_jx_amalloc(p->t, sizeof *t->v);
                    t->v[0] = x;
                    t->nv = 1;
                }
            }
            end_span(p, t);
            e = t;
        } else {
            break;
        }
    }
    return e;
}

static jnode *parse_unary(P *p, bool with_filter)
{
    DEEP(p);
    jnode *e;
    size_t off = cur(p)->off;
    if (is_op(p, "-") || is_op(p, "+")) {
        bool neg = is_op(p, "-");
        p->pos++;
        jnode *x = parse_unary(p, false);
        if (!x) {
            p->depth--;
            return NULL;
        }
        e = nn(p, neg ? E_NEG : E_POS, off);
        e->a = x;
        end_span(p, e);
    } else {
        e = parse_postfix(p, parse_primary(p));
    }
    if (with_filter)
        e = parse_filter_tail(p, e);
    p->depth--;
    return e;
}

static jnode *bin(P *p, int op, jnode *l, jnode *r)
{
    if (!l || !r)
        return NULL;
    jnode *e = nn(p, E_BIN, l->off);
    e->op = (uint8_t)op;
    e->a = l;
    e->b = r;
    end_span(p, e);
    return e;
}

static jnode *parse_pow(P *p)
{
    jnode *e = parse_unary(p, true);
    while (e && is_op(p, "**")) {
        p->pos++;
        e = bin(p, OP_POW, e, parse_unary(p, true));
    }
    return e;
}

static jnode *parse_math2(P *p)
{
    jnode *e = parse_pow(p);
    while (e) {
        int op = is_op(p, "*") ? OP_MUL : is_op(p, "/") ? OP_DIV : is_op(p, "//") ? OP_FDIV
                 : is_op(p, "%") ? OP_MOD : 0;
        if (!op)
            break;
        p->pos++;
        e = bin(p, op, e, parse_pow(p));
    }
    return e;
}

static jnode *parse_concat(P *p)
{
    jnode *e = parse_math2(p);
    while (e && is_op(p, "~")) {
        p->pos++;
        e = bin(p, OP_CAT, e, parse_math2(p));
    }
    return e;
}

static jnode *parse_math1(P *p)
{
    jnode *e = parse_concat(p);
    while (e && (is_op(p, "+") || is_op(p, "-"))) {
        int op = is_op(p, "+") ? OP_ADD : OP_SUB;
        p->pos++;
        e = bin(p, op, e, parse_concat(p));
    }
    return e;
}

static int cmp_op(P *p)
{
    static const char *const o[] = {"==", "!=", "<", "<=", ">", ">="};
    static const int c[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
    for (int i = 0; i < 6; i++)
        if (is_op(p, o[i]))
            return c[i];
    if (is_name(p, "in"))
        return OP_IN;
    if (is_name(p, "not") && p->toks[p->pos + 1].type == T_NAME &&
        !strcmp(p->toks[p->pos + 1].s, "in"))
        return OP_NOTIN;
    return 0;
}

static jnode *parse_compare(P *p)
{
    jnode *e = parse_math1(p);
    if (!e || !cmp_op(p))
        return e;
    vec v = {0};
    char ops[64];
    int nops = 0;
    vpush(&v, e);
    int op;
    while ((op = cmp_op(p))) {
        p->pos += op == OP_NOTIN ? 2 : 1;
        jnode *r = parse_math1(p);
        if (!r || nops == 64) {
            free(v.v);
            return r ? sl_jx_perr(p, cur(p)->off, "too many comparisons in a chain") : NULL;
        }
        ops[nops++] = (char)op;
        vpush(&v, r);
    }
    jnode *c = nn(p, E_CMP, e->off);
    c->v = vdone(p, &v, &c->nv);
    c->s = sl_jx_astrndup(p->t, ops, (size_t)nops);
    c->slen = (size_t)nops;
    end_span(p, c);
    return c;
}

static jnode *parse_not(P *p)
{
    if (is_name(p, "not")) {
        DEEP(p);
        size_t off = cur(p)->off;
        p->pos++;
        jnode *x = parse_not(p);
        p->depth--;
        if (!x)
            return NULL;
        jnode *e = nn(p, E_NOT, off);
        e->a = x;
        end_span(p, e);
        return e;
    }
    return parse_compare(p);
}

static jnode *parse_and(P *p)
{
    jnode *e = parse_not(p);
    while (e && is_name(p, "and")) {
        p->pos++;
        jnode *r = parse_not(p);
        if (!r)
            return NULL;
        jnode *a = nn(p, E_AND, e->off);
        a->a = e;
        a->b = r;
        end_span(p, a);
        e = a;
    }
    return e;
}

static jnode *parse_or(P *p)
{
    jnode *e = parse_and(p);
    while (e && is_name(p, "or")) {
        p->pos++;
        jnode *r = parse_and(p);
        if (!r)
            return NULL;
        jnode *a = nn(p, E_OR, e->off);
        a->a = e;
        a->b = r;
        end_span(p, a);
        e = a;
    }
    return e;
}

static jnode *parse_expr(P *p)
{
    DEEP(p);
    /* the value part of `a if c else b` is read before the `if` is seen:
     * an unknown filter there is forgiven once the `if` shows up */
    bool pend = p->pend;
    jnode *e = parse_or(p);
    if (e && is_name(p, "if") && !pend)
        p->pend = false;
    while (e && is_name(p, "if")) {
        p->pos++;
        jnode *c = nn(p, E_COND, e->off);
        c->a = e;
        p->soft++;
        c->cond = parse_or(p);
        p->soft--;
        if (!c->cond) {
            e = NULL;
            break;
        }
        if (is_name(p, "else")) {
            p->pos++;
            p->soft++;
            c->b = parse_expr(p);
            p->soft--;
            if (!c->b) {
                e = NULL;
                break;
            }
        }
        end_span(p, c);
        e = c;
    }
    p->depth--;
    return e;
}

/* expr or an implicit tuple `a, b` */
static jnode *parse_tuple(P *p)
{
    jnode *e = parse_expr(p);
    if (!e || !is_op(p, ","))
        return e;
    vec v = {0};
    vpush(&v, e);
    while (is_op(p, ",")) {
        p->pos++;
        if (!starts_expr(p))
            break;
        jnode *x = parse_expr(p);
        if (!x) {
            free(v.v);
            return NULL;
        }
        vpush(&v, x);
    }
    jnode *t = nn(p, E_TUPLE, e->off);
    t->v = vdone(p, &v, &t->nv);
    end_span(p, t);
    return t;
}

/* ---- statements ---- */

static jnode *parse_body(P *p, const char *const *ends, const char *block, size_t block_off);

static bool end_tag(P *p)
{
    return expect(p, T_BE, "end of statement block '%}'");
}

static const char *expect_name(P *p, const char *what)
{
    tok *k = cur(p);
    if (k->type != T_NAME) {
        char b[80];
        sl_jx_perr(p, k->off, "expected %s, found %s", what, tok_desc(k, b, sizeof b));
        return NULL;
    }
    p->pos++;
    return k->s;
}

/* names separated by commas, optionally in parentheses: for/set targets */
static bool parse_targets(P *p, jnode *s)
{
    const char *names[32];
    int n = 0;
    bool paren = is_op(p, "(");
    if (paren)
        p->pos++;
    do {
        if (n && is_op(p, ","))
            p->pos++;
        if (n && !paren && (is_name(p, "in") || is_op(p, "=")))
            break;
        if (n == 32)
            return sl_jx_perr(p, cur(p)->off, "too many names to unpack"), false;
        const char *nm = expect_name(p, "a variable name");
        if (!nm)
            return false;
        names[n++] = nm;
    } while (is_op(p, ","));
    if (paren && !expect_op(p, ")", "to close the names"))
        return false;
    s->names = sl_jx_amalloc(p->t, (size_t)n * sizeof *names);
    memcpy(s->names, names, (size_t)n * sizeof *names);
    s->nnames = n;
    if (n > 1)
        s->op = 1; /* unpack */
    return true;
}

/* after the tag name: a macro's or caller's parameter list "(a, b=1)" */
static bool parse_params(P *p, jnode *m)
{
    if (!expect_op(p, "(", "to open the parameter list"))
        return false;
    const char *names[64];
    jnode *defs[64];
    int n = 0;
    while (!is_op(p, ")")) {
        if (n && !expect_op(p, ",", "between parameters"))
            return false;
        if (is_op(p, ")"))
            break;
        if (n == 64)
            return sl_jx_perr(p, cur(p)->off, "too many parameters"), false;
        const char *nm = expect_name(p, "a parameter name");
        if (!nm)
            return false;
        defs[n] = NULL;
        if (is_op(p, "=")) {
            p->pos++;
            if (!(defs[n] = parse_expr(p)))
                return false;
        } else if (n && defs[n - 1]) {
            return sl_jx_perr(p, cur(p)->off,
                              "parameter '%s' without a default follows one with a default", nm),
                   false;
        }
        names[n++] = nm;
    }
    p->pos++;
    m->nkw = n;
    m->kwn = sl_jx_amalloc(p->t, ((size_t)n + 1) * sizeof *m->kwn);
    m->kwv = sl_jx_amalloc(p->t, ((size_t)n + 1) * sizeof *m->kwv);
    memcpy(m->kwn, names, (size_t)n * sizeof *names);
    memcpy(m->kwv, defs, (size_t)n * sizeof *defs);
    return true;
}

/* consumes `{% name %}` (the closing tag of a block) */
static bool close_tag(P *p, const char *name)
{
    if (!expect(p, T_BB, "'{%'"))
        return false;
    if (!is_name(p, name)) {
        char b[80];
        sl_jx_perr(p, cur(p)->off, "expected '%s', found %s", name, tok_desc(cur(p), b, sizeof b));
        return false;
    }
    p->pos++;
    if (!strcmp(name, "endblock") && cur(p)->type == T_NAME)
        p->pos++;
    return end_tag(p);
}

static jnode *parse_if(P *p, size_t off)
{
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    jnode *s = nn(p, N_IF, off);
    p->soft++;
    s->a = parse_tuple(p);
    if (s->a && end_tag(p))
        s->b = parse_body(p, ends, "if", off);
    p->soft--;
    if (!s->a || !s->b)
        return NULL;
    /* at {% elif|else|endif */
    p->pos++;
    tok *k = cur(p);
    p->pos++;
    if (!strcmp(k->s, "elif")) {
        s->x = parse_if(p, k->off);
        return s->x ? s : NULL;
    }
    if (!strcmp(k->s, "else")) {
        static const char *const e2[] = {"endif", NULL};
        if (!end_tag(p))
            return NULL;
        p->soft++;
        s->x = parse_body(p, e2, "if", off);
        p->soft--;
        if (!s->x)
            return NULL;
        return close_tag(p, "endif") ? s : NULL;
    }
    return end_tag(p) ? s : NULL;
}

static jnode *parse_stmt_tag(P *p);

/* Tags nest at most 100 deep (Python itself refuses more than 20 nested
 * blocks in the code Jinja2 compiles a template to). */
static jnode *parse_stmt(P *p)
{
    if (++p->blocks > 100) {
        p->blocks--;
        return sl_jx_perr(p, cur(p)->off, "tags nested too deeply (more than 100)");
    }
    jnode *s = parse_stmt_tag(p);
    p->blocks--;
    return s;
}

static jnode *parse_stmt_tag(P *p)
{
    size_t off = cur(p)->off;
    p->pos++; /* {% */
    tok *k = cur(p);
    if (k->type != T_NAME) {
        char b[80];
        return sl_jx_perr(p, k->off, "expected a tag name after '{%%', found %s",
                          tok_desc(k, b, sizeof b));
    }
    const char *tag = k->s;
    p->pos++;
    if (!strcmp(tag, "if"))
        return parse_if(p, off);
    if (!strcmp(tag, "for")) {
        static const char *const ends[] = {"else", "endfor", NULL};
        static const char *const e2[] = {"endfor", NULL};
        jnode *s = nn(p, N_FOR, off);
        if (!parse_targets(p, s))
            return NULL;
        if (!is_name(p, "in")) {
            char b[80];
            return sl_jx_perr(p, cur(p)->off, "expected 'in' in the for tag, found %s",
                              tok_desc(cur(p), b, sizeof b));
        }
        p->pos++;
        /* the iterable: a tuple without inline if (that is the loop filter) */
        jnode *it = parse_or(p);
        if (it && is_op(p, ",")) {
            vec v = {0};
            vpush(&v, it);
            while (it && is_op(p, ",")) {
                p->pos++;
                if (!starts_expr(p))
                    break;
                it = parse_or(p);
                if (it)
                    vpush(&v, it);
            }
            if (!it) {
                free(v.v);
                return NULL;
            }
            jnode *t = nn(p, E_TUPLE, v.v[0]->off);
            t->v = vdone(p, &v, &t->nv);
            it = t;
        }
        if (!it)
            return NULL;
        s->a = it;
        if (is_name(p, "if")) {
            p->pos++;
            if (!(s->cond = parse_expr(p)))
                return NULL;
        }
        if (is_name(p, "recursive")) {
            p->pos++;
            s->neg = true; /* N_FOR: recursive */
        }
        int soft = p->soft;
        p->soft = 0; /* a loop's body is a frame of its own */
        if (!end_tag(p) || !(s->b = parse_body(p, ends, "for", off))) {
            p->soft = soft;
            return NULL;
        }
        p->soft = soft;
        p->pos++;
        if (is_name(p, "else")) {
            p->pos++;
            if (!end_tag(p) || !(s->x = parse_body(p, e2, "for", off)))
                return NULL;
            p->pos++;
        }
        p->pos++; /* endfor */
        return end_tag(p) ? s : NULL;
    }
    if (!strcmp(tag, "set")) {
        static const char *const ends[] = {"endset", NULL};
        jnode *s = nn(p, N_SET, off);
        if (cur(p)->type == T_NAME && p->toks[p->pos + 1].type == T_OP &&
            !strcmp(p->toks[p->pos + 1].s, ".")) {
            /* namespace attribute */
            s->names = sl_jx_amalloc(p->t, sizeof *s->names);
            s->names[0] = cur(p)->s;
            s->nnames = 1;
            p->pos += 2;
            if (!(s->s2 = expect_name(p, "an attribute name")))
                return NULL;
            s->neg = true;
        } else if (!parse_targets(p, s)) {
            return NULL;
        }
        if (is_op(p, "=")) {
            p->pos++;
            if (!(s->a = parse_tuple(p)) || !end_tag(p))
                return NULL;
            return s;
        }
        if (s->nnames != 1 || s->neg)
            return sl_jx_perr(p, cur(p)->off, "expected '=' in the set tag");
        s->type = N_SETBLOCK;
        jnode *chain = NULL;
        while (is_op(p, "|")) {
            p->pos++;
            if (!(chain = parse_filter(p, chain)))
                return NULL;
        }
        s->x = chain;
        if (!end_tag(p) || !(s->b = parse_body(p, ends, "set", off)))
            return NULL;
        return close_tag(p, "endset") ? s : NULL;
    }
    if (!strcmp(tag, "macro")) {
        static const char *const ends[] = {"endmacro", NULL};
        jnode *s = nn(p, N_MACRO, off);
        if (!(s->s = expect_name(p, "the macro's name")) || !parse_params(p, s) || !end_tag(p))
            return NULL;
        int soft = p->soft;
        p->soft = 0;
        s->b = parse_body(p, ends, "macro", off);
        p->soft = soft;
        if (!s->b)
            return NULL;
        return close_tag(p, "endmacro") ? s : NULL;
    }
    if (!strcmp(tag, "call")) {
        static const char *const ends[] = {"endcall", NULL};
        jnode *s = nn(p, N_CALLBLOCK, off);
        if (is_op(p, "(") && !parse_params(p, s))
            return NULL;
        jnode *c = parse_expr(p);
        if (!c)
            return NULL;
        if (c->type != E_CALL)
            return sl_jx_perr(p, c->off, "expected a macro call in the call tag");
        s->a = c;
        if (!end_tag(p) || !(s->b = parse_body(p, ends, "call", off)))
            return NULL;
        return close_tag(p, "endcall") ? s : NULL;
    }
    if (!strcmp(tag, "filter")) {
        static const char *const ends[] = {"endfilter", NULL};
        jnode *s = nn(p, N_FILTERBLOCK, off);
        jnode *chain = parse_filter(p, NULL);
        while (chain && is_op(p, "|")) {
            p->pos++;
            chain = parse_filter(p, chain);
        }
        if (!chain)
            return NULL;
        s->x = chain;
        if (!end_tag(p) || !(s->b = parse_body(p, ends, "filter", off)))
            return NULL;
        return close_tag(p, "endfilter") ? s : NULL;
    }
    if (!strcmp(tag, "with")) {
        static const char *const ends[] = {"endwith", NULL};
        jnode *s = nn(p, N_WITH, off);
        const char *names[64];
        jnode *vals[64];
        int n = 0;
        while (cur(p)->type != T_BE) {
            if (n && !expect_op(p, ",", "between assignments"))
                return NULL;
            if (n == 64)
                return sl_jx_perr(p, cur(p)->off, "too many assignments");
            if (!(names[n] = expect_name(p, "a variable name")) || !expect_op(p, "=", NULL) ||
                !(vals[n] = parse_expr(p)))
                return NULL;
            n++;
        }
        s->nkw = n;
        s->kwn = sl_jx_amalloc(p->t, ((size_t)n + 1) * sizeof *s->kwn);
        s->kwv = sl_jx_amalloc(p->t, ((size_t)n + 1) * sizeof *s->kwv);
        memcpy(s->kwn, names, (size_t)n * sizeof *names);
        memcpy(s->kwv, vals, (size_t)n * sizeof *vals);
        if (!end_tag(p) || !(s->b = parse_body(p, ends, "with", off)))
            return NULL;
        return close_tag(p, "endwith") ? s : NULL;
    }
    if (!strcmp(tag, "block")) {
        static const char *const ends[] = {"endblock", NULL};
        if (!expect_name(p, "the block's name"))
            return NULL;
        if (is_name(p, "scoped") || is_name(p, "required"))
            p->pos++;
        jnode *b;
        if (!end_tag(p) || !(b = parse_body(p, ends, "block", off)))
            return NULL;
        return close_tag(p, "endblock") ? b : NULL;
    }
    if (!strcmp(tag, "include") || !strcmp(tag, "import") || !strcmp(tag, "from") ||
        !strcmp(tag, "extends"))
        return sl_jx_perr(p, k->off, "'%s' needs other templates; a sluice template stands alone",
                          tag);
    return sl_jx_perr(p, k->off, "unknown tag '%s'", tag);
}

static jnode *parse_body(P *p, const char *const *ends, const char *block, size_t block_off)
{
    vec v = {0};
    jnode *body = nn(p, N_BODY, cur(p)->off);
    for (;;) {
        tok *k = cur(p);
        if (k->type == T_EOF) {
            if (ends) {
                int line, col;
                line_col(p->t, block_off, &line, &col);
                char want[128] = "";
                for (int i = 0; ends[i]; i++)
                    snprintf(want + strlen(want), sizeof want - strlen(want), "%s'%s'",
                             i ? " or " : "", ends[i]);
                sl_jx_perr(p, k->off,
                           "unexpected end of template: expected %s to close the '%s' "
                           "block opened at line %d",
                           want, block, line);
                goto fail;
            }
            break;
        }
        if (k->type == T_TEXT) {
            jnode *t = nn(p, N_TEXT, k->off);
            t->s = k->s;
            t->slen = k->slen;
            t->len = k->len;
            vpush(&v, t);
            p->pos++;
        } else if (k->type == T_VB) {
            p->pos++;
            jnode *o = nn(p, N_OUT, k->off);
            if (!(o->a = parse_tuple(p)) || !expect(p, T_VE, "end of print statement '}}'"))
                goto fail;
            vpush(&v, o);
            if (p->pend) {
                sl_jx_perr(p, p->pend_off, "%s", p->pend_msg);
                goto fail;
            }
        } else if (k->type == T_BB) {
            tok *nm = &p->toks[p->pos + 1];
            if (nm->type == T_NAME) {
                if (ends)
                    for (int i = 0; ends[i]; i++)
                        if (!strcmp(nm->s, ends[i]))
                            goto done;
                static const char *const closers[] = {"endif", "endfor", "else", "elif", "endset",
                                                      "endmacro", "endcall", "endfilter", "endwith",
                                                      "endblock", "endraw", NULL};
                for (int i = 0; closers[i]; i++)
                    if (!strcmp(nm->s, closers[i])) {
                        sl_jx_perr(p, nm->off, "unexpected '%s'%s%s%s", nm->s,
                                   block ? " in the '" : " outside any block", block ? block : "",
                                   block ? "' block" : "");
                        goto fail;
                    }
            }
            jnode *s = parse_stmt(p);
            if (!s)
                goto fail;
            vpush(&v, s);
            if (p->pend) {
                sl_jx_perr(p, p->pend_off, "%s", p->pend_msg);
                goto fail;
            }
        } else {
            char b[80];
            sl_jx_perr(p, k->off, "unexpected %s", tok_desc(k, b, sizeof b));
            goto fail;
        }
    }
done:
    body->v = vdone(p, &v, &body->nv);
    return body;
fail:
    free(v.v);
    return NULL;
}

/* ---- the API ---- */

void sl_jinja_free(sl_jinja *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nconsts; i++)
        json_decref(t->consts[i]);
    free(t->consts);
    while (t->arena) {
        struct arena *a = t->arena;
        t->arena = a->next;
        free(a);
    }
    free(t->src);
    free(t->name);
    free(t);
}

/* One walk of the finished tree: does the template call a method that
 * changes a list or dict in place (the render then works on a copy of its
 * context), and which macros read `varargs` / `kwargs` (those accept extra
 * arguments; others refuse them, as Jinja2's do).  `macro` is the
 * innermost macro around e. */
static bool scan(jnode *e, jnode *macro)
{
    static const char *const mutators[] = {"append", "extend", "insert", "pop", "remove", "clear",
                                           "reverse", "sort", "update", "setdefault", "popitem",
                                           NULL};
    if (!e)
        return false;
    bool m = false;
    if (e->type == N_MACRO || e->type == N_CALLBLOCK)
        macro = e;
    if (e->type == E_NAME && macro) {
        if (!strcmp(e->s, "varargs"))
            macro->op |= 1;
        else if (!strcmp(e->s, "kwargs"))
            macro->op |= 2;
    }
    if (e->type == E_ATTR)
        e->neg = sl_jx_dict_method(e->s) != NULL;
    if (e->type == E_FILTER && e->fn)
        e->neg = !sl_jx_filter_args_ok(e->fn, e->nv, e->kwn, e->nkw);
    if (e->type == E_CALL && e->a && e->a->type == E_ATTR)
        for (int i = 0; mutators[i]; i++)
            if (!strcmp(e->a->s, mutators[i]))
                m = true;
    m |= scan(e->a, macro);
    m |= scan(e->b, macro);
    m |= scan(e->x, macro);
    m |= scan(e->cond, macro);
    for (int i = 0; i < e->nv; i++)
        m |= scan(e->v[i], macro);
    for (int i = 0; i < e->nkw; i++)
        m |= scan(e->kwv[i], macro);
    return m;
}

int sl_jinja_compile(const char *text, size_t len, const char *name, sl_jinja **out, sl_err *err)
{
    *out = NULL;
    if (len > UINT32_MAX / 2)
        return sl_err_set(err, SL_ELIMIT, "%s: the template is too large", name ? name : "template");
    sl_jinja *t = sl_xcalloc(1, sizeof *t);
    t->name = sl_xstrdup(name ? name : "template");
    /* Jinja2 reads \r\n and \r as \n and drops one trailing newline */
    t->src = sl_xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\r') {
            t->src[n++] = '\n';
            if (i + 1 < len && text[i + 1] == '\n')
                i++;
        } else {
            t->src[n++] = text[i];
        }
    }
    if (n && t->src[n - 1] == '\n')
        n--;
    t->src[n] = 0;
    t->srclen = n;
    P p = {.t = t, .err = err};
    if (sl_jx_lex(&p) == 0)
        t->root = parse_body(&p, NULL, NULL, 0);
    free(p.toks);
    if (!t->root || p.failed) {
        if (!p.failed)
            sl_err_set(err, SL_EPARSE, "%s: could not parse the template", t->name);
        sl_jinja_free(t);
        return -1;
    }
    t->mutates = scan(t->root, NULL);
    *out = t;
    return 0;
}

void sl_jx_line_col(const sl_jinja *t, size_t off, int *line, int *col)
{
    line_col(t, off, line, col);
}
