/*
 * pdfobj — see pdfobj.h.
 */
#include "extract/pdfobj.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/dl.h"
#include "core/value.h"

/* Nesting of arrays and dictionaries, hops of a reference that names a
 * reference, sections of a /Prev chain. */
#define MAX_DEPTH 64
#define MAX_HOPS 8
#define MAX_SECTIONS 64

#define DECLINE(err, ...) sl_err_set(err, SL_EUNSUPPORTED, __VA_ARGS__)

/* ---- memory: two arenas, the document's and the scratch one ---- */

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
} chunk;

struct sl_pdf_arena {
    chunk *head;
    size_t *total, max; /* the document's bytes in both arenas, and their cap */
    bool over;
};

static void *arena_alloc(sl_pdf_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 60000 ? n : 65536 - sizeof(chunk);
        if (*a->total + cap > a->max) {
            a->over = true;
            return NULL;
        }
        chunk *c = malloc(sizeof *c + cap);
        if (!c) {
            a->over = true;
            return NULL;
        }
        *a->total += cap;
        c->next = a->head, c->used = 0, c->cap = cap;
        a->head = c;
    }
    void *m = a->head->mem + a->head->used;
    a->head->used += n;
    return m;
}

static void arena_free(sl_pdf_arena *a)
{
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        *a->total -= c->cap;
        free(c);
    }
    a->head = NULL;
}

/* ---- zlib, opened on first use ---- */

static int (*z_inflateInit_)(z_streamp, const char *, int);
static int (*z_inflate)(z_streamp, int);
static int (*z_inflateEnd)(z_streamp);
static const char *const z_names[] = {"libz.so.1", NULL};
static const sl_dl_sym z_syms[] = {{"inflateInit_", (void **)&z_inflateInit_},
                                   {"inflate", (void **)&z_inflate},
                                   {"inflateEnd", (void **)&z_inflateEnd},
                                   {NULL, NULL}};
static sl_dl_lib z_lib = {.what = "zlib", .sonames = z_names, .package = "zlib1g",
                          .syms = z_syms};

/* ---- the document ---- */

typedef struct {
    const unsigned char *data; /* decoded */
    size_t len, first;
    uint32_t n;
    uint32_t *num;   /* n object numbers */
    size_t *off;     /* n offsets from first */
} objstm;

typedef struct {
    uint8_t type;  /* 0 free or absent, 1 at an offset, 2 in an object stream */
    uint8_t state; /* 0 not read, 1 being read (a loop), 2 read */
    uint32_t gen;  /* type 1: its generation; type 2: its index in the stream */
    uint64_t where; /* type 1: the offset; type 2: the stream's number */
    sl_pdf_obj *obj;
    objstm *stm;   /* when this object is an object stream, read */
} xent;

struct sl_pdf {
    const unsigned char *d;
    size_t len;
    sl_extract_limits lim;
    size_t mem, unpacked;
    sl_pdf_arena doc, scratch;
    xent *x;
    uint32_t nx;
    sl_pdf_obj *trailer;
    int loading; /* objects being read, one inside another's reading */
};

static sl_pdf_obj null_obj = {.t = SL_PDF_NULL};

static int over(sl_pdf *p, sl_err *err)
{
    return sl_err_limit(err, SL_ELIMIT, "extract_max_unpacked",
                        "its objects need more than extract_max_unpacked (%zu bytes) of memory",
                        p->lim.max_unpacked);
}

/* ---- the lexer ---- */

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0;
}

static bool is_delim(unsigned char c)
{
    return c == '(' || c == ')' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' ||
           c == '}' || c == '/' || c == '%';
}

static void skip_ws(const unsigned char **s, const unsigned char *end)
{
    const unsigned char *p = *s;
    while (p < end) {
        if (is_ws(*p)) {
            p++;
        } else if (*p == '%') {
            while (p < end && *p != '\n' && *p != '\r')
                p++;
        } else {
            break;
        }
    }
    *s = p;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* Decimal digits at *s (before end), not past end; false when none or
 * more than 19. */
static bool digits(const unsigned char **s, const unsigned char *end, unsigned long long *v)
{
    const unsigned char *p = *s;
    unsigned long long n = 0;
    int k = 0;
    while (p < end && *p >= '0' && *p <= '9' && k < 19)
        n = n * 10 + (unsigned)(*p++ - '0'), k++;
    if (!k || (p < end && *p >= '0' && *p <= '9'))
        return false;
    *s = p, *v = n;
    return true;
}

static sl_pdf_obj *new_obj(sl_pdf_arena *a, sl_pdf_type t)
{
    sl_pdf_obj *o = arena_alloc(a, sizeof *o);
    if (o) {
        memset(o, 0, sizeof *o);
        o->t = t;
    }
    return o;
}

/* A literal string "(...)": escapes, balanced parentheses, line ends. */
static sl_pdf_obj *lex_string(sl_pdf_arena *a, const unsigned char **sp, const unsigned char *end)
{
    const unsigned char *s = *sp + 1;
    /* the decoded string is never longer than the source */
    size_t room = 0;
    int depth = 1;
    const unsigned char *q = s;
    while (q < end && depth) {
        if (*q == '\\') {
            q += 2;
            continue;
        }
        if (*q == '(')
            depth++;
        else if (*q == ')')
            depth--;
        q++;
    }
    if (depth)
        return NULL;
    room = (size_t)(q - s);
    char *out = arena_alloc(a, room + 1);
    sl_pdf_obj *o = out ? new_obj(a, SL_PDF_STRING) : NULL;
    if (!o)
        return NULL;
    size_t n = 0;
    depth = 1;
    while (s < end) {
        unsigned char c = *s++;
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (--depth == 0)
                break;
        } else if (c == '\\' && s < end) {
            c = *s++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case '\r':
                if (s < end && *s == '\n')
                    s++;
                continue;
            case '\n':
                continue;
            default:
                if (c >= '0' && c <= '7') {
                    int v = c - '0';
                    for (int k = 0; k < 2 && s < end && *s >= '0' && *s <= '7'; k++)
                        v = v * 8 + (*s++ - '0');
                    c = (unsigned char)v;
                }
                break;
            }
        } else if (c == '\r') {
            /* an end of line in a string is a "\n", whichever it was */
            if (s < end && *s == '\n')
                s++;
            c = '\n';
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    o->s.s = out, o->s.len = n;
    *sp = s;
    return o;
}

static sl_pdf_obj *lex_hex(sl_pdf_arena *a, const unsigned char **sp, const unsigned char *end)
{
    const unsigned char *s = *sp + 1, *close = memchr(s, '>', (size_t)(end - s));
    if (!close)
        return NULL;
    char *out = arena_alloc(a, (size_t)(close - s) / 2 + 2);
    sl_pdf_obj *o = out ? new_obj(a, SL_PDF_STRING) : NULL;
    if (!o)
        return NULL;
    size_t n = 0;
    int hi = -1;
    for (; s < close; s++) {
        int v = hexval(*s);
        if (v < 0) {
            if (is_ws(*s))
                continue;
            return NULL;
        }
        if (hi < 0) {
            hi = v;
        } else {
            out[n++] = (char)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        out[n++] = (char)(hi << 4);
    out[n] = '\0';
    o->s.s = out, o->s.len = n;
    *sp = close + 1;
    return o;
}

static sl_pdf_obj *lex_name(sl_pdf_arena *a, const unsigned char **sp, const unsigned char *end)
{
    const unsigned char *s = *sp + 1, *q = s;
    while (q < end && !is_ws(*q) && !is_delim(*q))
        q++;
    char *out = arena_alloc(a, (size_t)(q - s) + 1);
    sl_pdf_obj *o = out ? new_obj(a, SL_PDF_NAME) : NULL;
    if (!o)
        return NULL;
    size_t n = 0;
    for (; s < q; s++) {
        if (*s == '#' && q - s >= 3 && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
            out[n++] = (char)(hexval(s[1]) << 4 | hexval(s[2]));
            s += 2;
        } else {
            out[n++] = (char)*s;
        }
    }
    out[n] = '\0';
    o->s.s = out, o->s.len = n;
    *sp = q;
    return o;
}

/* A number or a keyword (true, false, null, an operator, R, obj ...). */
static sl_pdf_obj *lex_word(sl_pdf_arena *a, const unsigned char **sp, const unsigned char *end)
{
    const unsigned char *s = *sp, *q = s;
    while (q < end && !is_ws(*q) && !is_delim(*q))
        q++;
    size_t n = (size_t)(q - s);
    *sp = q;
    bool number = n > 0;
    int dots = 0, digits = 0;
    for (size_t i = 0; i < n && number; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.')
            dots++;
        else if (!((s[i] == '-' || s[i] == '+') && i == 0))
            number = false;
    }
    if (number && digits && dots <= 1) {
        char buf[64];
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        sl_pdf_obj *o = new_obj(a, dots ? SL_PDF_REAL : SL_PDF_INT);
        if (!o)
            return NULL;
        if (dots) {
            o->r = strtod(buf, NULL);
        } else {
            /* a huge integer is a real, as PDF readers take it */
            errno = 0;
            o->i = strtoll(buf, NULL, 10);
            if (errno) {
                o->t = SL_PDF_REAL;
                o->r = strtod(buf, NULL);
            }
        }
        return o;
    }
    if (n == 4 && !memcmp(s, "true", 4)) {
        sl_pdf_obj *o = new_obj(a, SL_PDF_BOOL);
        if (o)
            o->b = true;
        return o;
    }
    if (n == 5 && !memcmp(s, "false", 5))
        return new_obj(a, SL_PDF_BOOL);
    if (n == 4 && !memcmp(s, "null", 4))
        return new_obj(a, SL_PDF_NULL);
    char *out = arena_alloc(a, n + 1);
    sl_pdf_obj *o = out ? new_obj(a, SL_PDF_OP) : NULL;
    if (!o)
        return NULL;
    memcpy(out, s, n);
    out[n] = '\0';
    o->s.s = out, o->s.len = n;
    return o;
}

/* Markers the parser sees as operators. */
static bool is_op(const sl_pdf_obj *o, const char *w)
{
    return o && o->t == SL_PDF_OP && !strcmp(o->s.s, w);
}

typedef struct {
    sl_pdf_arena *a;
    const unsigned char *s, *end;
    bool refs; /* "1 0 R" is a reference (not in content streams) */
} parser;

static int parse_obj(parser *ps, sl_pdf_obj **out, int depth, sl_err *err);

/* One token: an object that is not a container, an operator, or the
 * markers "[", "]", "<<", ">>" as operators. 0 at the end. */
static int token(parser *ps, sl_pdf_obj **out, sl_err *err)
{
    skip_ws(&ps->s, ps->end);
    if (ps->s >= ps->end)
        return 0;
    const unsigned char *s = ps->s;
    sl_pdf_obj *o = NULL;
    if (*s == '(') {
        o = lex_string(ps->a, &ps->s, ps->end);
    } else if (*s == '<' && ps->end - s >= 2 && s[1] == '<') {
        ps->s += 2;
        o = new_obj(ps->a, SL_PDF_OP);
        if (o)
            o->s.s = "<<", o->s.len = 2;
    } else if (*s == '>' && ps->end - s >= 2 && s[1] == '>') {
        ps->s += 2;
        o = new_obj(ps->a, SL_PDF_OP);
        if (o)
            o->s.s = ">>", o->s.len = 2;
    } else if (*s == '<') {
        o = lex_hex(ps->a, &ps->s, ps->end);
    } else if (*s == '/') {
        o = lex_name(ps->a, &ps->s, ps->end);
    } else if (*s == '[' || *s == ']' || *s == '{' || *s == '}') {
        ps->s++;
        o = new_obj(ps->a, SL_PDF_OP);
        if (o)
            o->s.s = *s == '[' ? "[" : *s == ']' ? "]" : *s == '{' ? "{" : "}", o->s.len = 1;
    } else if (*s == ')' || *s == '>') {
        return DECLINE(err, "a stray '%c'", *s);
    } else {
        o = lex_word(ps->a, &ps->s, ps->end);
    }
    if (!o) {
        if (ps->a->over)
            return sl_err_limit(err, SL_ELIMIT, "extract_max_unpacked",
                                "its objects need more than extract_max_unpacked of memory");
        return DECLINE(err, "an unreadable string or name");
    }
    *out = o;
    return 1;
}

/* After an integer: "G R" makes it a reference. */
static void maybe_ref(parser *ps, sl_pdf_obj *o)
{
    const unsigned char *save = ps->s;
    skip_ws(&ps->s, ps->end);
    unsigned long long gen;
    if (digits(&ps->s, ps->end, &gen) && gen <= UINT32_MAX) {
        skip_ws(&ps->s, ps->end);
        if (ps->s < ps->end && *ps->s == 'R' &&
            (ps->s + 1 == ps->end || is_ws(ps->s[1]) || is_delim(ps->s[1])) && o->i >= 0 &&
            o->i <= UINT32_MAX) {
            uint32_t num = (uint32_t)o->i;
            o->t = SL_PDF_REF;
            o->ref.num = num;
            o->ref.gen = (uint32_t)gen;
            ps->s++;
            return;
        }
    }
    ps->s = save;
}

static int parse_container(parser *ps, sl_pdf_obj **out, bool dict, int depth, sl_err *err)
{
    if (depth > MAX_DEPTH)
        return DECLINE(err, "objects nested deeper than %d", MAX_DEPTH);
    size_t cap = 8, n = 0;
    sl_pdf_obj **v = malloc(cap * sizeof *v);
    if (!v)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    for (;;) {
        sl_pdf_obj *o;
        int r = parse_obj(ps, &o, depth + 1, err);
        if (r <= 0) {
            free(v);
            return r < 0 ? -1 : DECLINE(err, "an unterminated %s", dict ? "dictionary" : "array");
        }
        if (is_op(o, dict ? ">>" : "]"))
            break;
        if (o->t == SL_PDF_OP) {
            free(v);
            return DECLINE(err, "'%s' inside %s", o->s.s, dict ? "a dictionary" : "an array");
        }
        if (dict && n % 2 == 0 && o->t != SL_PDF_NAME) {
            free(v);
            return DECLINE(err, "a dictionary key that is not a name");
        }
        if (n == cap) {
            sl_pdf_obj **nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) {
                free(v);
                return sl_err_set(err, SL_ENOMEM, "out of memory");
            }
            v = nv, cap *= 2;
        }
        v[n++] = o;
    }
    if (dict && n % 2) {
        free(v);
        return DECLINE(err, "a dictionary key without a value");
    }
    sl_pdf_obj *c = new_obj(ps->a, dict ? SL_PDF_DICT : SL_PDF_ARRAY);
    sl_pdf_obj **items = c ? arena_alloc(ps->a, (n ? n : 1) * sizeof *items) : NULL;
    if (!items) {
        free(v);
        return sl_err_limit(err, SL_ELIMIT, "extract_max_unpacked",
                            "its objects need more than extract_max_unpacked of memory");
    }
    memcpy(items, v, n * sizeof *items);
    free(v);
    c->c.v = items, c->c.n = n;
    *out = c;
    return 1;
}

static int parse_obj(parser *ps, sl_pdf_obj **out, int depth, sl_err *err)
{
    sl_pdf_obj *o;
    int r = token(ps, &o, err);
    if (r <= 0)
        return r;
    if (is_op(o, "["))
        return parse_container(ps, out, false, depth, err);
    if (is_op(o, "<<"))
        return parse_container(ps, out, true, depth, err);
    if (o->t == SL_PDF_INT && ps->refs)
        maybe_ref(ps, o);
    *out = o;
    return 1;
}

void sl_pdf_lexer_init(sl_pdf_lexer *lx, sl_pdf *p, const unsigned char *s, size_t len)
{
    lx->p = p;
    lx->a = &p->scratch;
    lx->s = s;
    lx->end = s + len;
}

int sl_pdf_lex(sl_pdf_lexer *lx, sl_pdf_obj **o, sl_err *err)
{
    parser ps = {lx->a, lx->s, lx->end, false};
    int r = parse_obj(&ps, o, 0, err);
    lx->s = ps.s;
    return r;
}

void sl_pdf_scratch_reset(sl_pdf *p)
{
    /* keep the newest chunk, free the rest */
    chunk *keep = p->scratch.head;
    if (!keep)
        return;
    chunk *rest = keep->next;
    keep->next = NULL;
    keep->used = 0;
    for (chunk *c = rest, *next; c; c = next) {
        next = c->next;
        p->mem -= c->cap;
        free(c);
    }
}

void sl_pdf_lexer_skip_image(sl_pdf_lexer *lx)
{
    const unsigned char *s = lx->s;
    if (s < lx->end && is_ws(*s))
        s++;
    while (s + 1 < lx->end) {
        if (s[0] == 'E' && s[1] == 'I' && (s == lx->s || is_ws(s[-1])) &&
            (s + 2 == lx->end || is_ws(s[2]) || is_delim(s[2]))) {
            lx->s = s + 2;
            return;
        }
        s++;
    }
    lx->s = lx->end;
}

/* ---- helpers on objects ---- */

bool sl_pdf_is_name(const sl_pdf_obj *o, const char *name)
{
    return o && o->t == SL_PDF_NAME && !strcmp(o->s.s, name);
}

bool sl_pdf_num(const sl_pdf_obj *o, double *v)
{
    if (o && o->t == SL_PDF_INT) {
        *v = (double)o->i;
        return true;
    }
    if (o && o->t == SL_PDF_REAL) {
        *v = o->r;
        return true;
    }
    return false;
}

static const sl_pdf_obj *dict_raw(const sl_pdf_obj *d, const char *key)
{
    if (!d || (d->t != SL_PDF_DICT && d->t != SL_PDF_STREAM))
        return NULL;
    for (size_t i = 0; i + 1 < d->c.n; i += 2)
        if (!strcmp(d->c.v[i]->s.s, key))
            return d->c.v[i + 1];
    return NULL;
}

/* ---- objects by number ---- */

static int load(sl_pdf *p, uint32_t num, const sl_pdf_obj **out, sl_err *err);

int sl_pdf_resolve(sl_pdf *p, const sl_pdf_obj *o, const sl_pdf_obj **out, sl_err *err)
{
    for (int hop = 0; o && o->t == SL_PDF_REF; hop++) {
        if (hop == MAX_HOPS)
            return DECLINE(err, "a chain of references longer than %d", MAX_HOPS);
        if (load(p, o->ref.num, &o, err))
            return -1;
    }
    *out = o && o->t == SL_PDF_NULL ? NULL : o;
    return 0;
}

int sl_pdf_get(sl_pdf *p, const sl_pdf_obj *dict, const char *key, const sl_pdf_obj **out,
               sl_err *err)
{
    *out = NULL;
    return sl_pdf_resolve(p, dict_raw(dict, key), out, err);
}

const sl_pdf_obj *sl_pdf_trailer(const sl_pdf *p)
{
    return p->trailer;
}

/* "N G obj" at s; then the object, and its stream data after "stream". */
static int read_indirect(sl_pdf *p, const unsigned char *s, const unsigned char *end,
                         uint32_t num, sl_pdf_obj **out, bool check_num, sl_err *err)
{
    parser ps = {&p->doc, s, end, true};
    sl_pdf_obj *a, *b, *kw;
    if (token(&ps, &a, err) != 1 || token(&ps, &b, err) != 1 || token(&ps, &kw, err) != 1 ||
        a->t != SL_PDF_INT || b->t != SL_PDF_INT || !is_op(kw, "obj") ||
        (check_num && a->i != (long long)num))
        return DECLINE(err, "object %u is not where the cross-reference puts it", num);
    sl_pdf_obj *o;
    int r = parse_obj(&ps, &o, 0, err);
    if (r <= 0)
        return r < 0 ? -1 : DECLINE(err, "object %u is cut short", num);
    sl_pdf_obj *next;
    if (o->t == SL_PDF_DICT && token(&ps, &next, err) == 1 && is_op(next, "stream")) {
        const unsigned char *d = ps.s;
        if (d < end && *d == '\r')
            d++;
        if (d < end && *d == '\n')
            d++;
        const sl_pdf_obj *lo = dict_raw(o, "Length");
        if (lo && lo->t == SL_PDF_REF) {
            /* the stream's dictionary is complete: its length may be an
             * object of its own, read now (a loop back here is caught) */
            if (sl_pdf_resolve(p, lo, &lo, err))
                return -1;
        }
        if (!lo || lo->t != SL_PDF_INT || lo->i < 0 || (size_t)lo->i > (size_t)(p->d + p->len - d))
            return DECLINE(err, "stream %u has no usable /Length", num);
        const unsigned char *e = d + lo->i;
        skip_ws(&e, p->d + p->len);
        if ((size_t)(p->d + p->len - e) < 9 || memcmp(e, "endstream", 9))
            return DECLINE(err, "stream %u's /Length does not end at endstream", num);
        o->t = SL_PDF_STREAM;
        o->c.at = (size_t)(d - p->d);
        o->c.len = (size_t)lo->i;
    }
    *out = o;
    return 0;
}

static int read_objstm(sl_pdf *p, xent *e, uint32_t num, sl_err *err);

static int load_entry(sl_pdf *p, xent *e, uint32_t num, const sl_pdf_obj **out, sl_err *err);

static int load(sl_pdf *p, uint32_t num, const sl_pdf_obj **out, sl_err *err)
{
    if (num >= p->nx || p->x[num].type == 0) {
        *out = &null_obj;
        return 0;
    }
    xent *e = &p->x[num];
    if (e->state == 2) {
        *out = e->obj;
        return 0;
    }
    if (e->state == 1)
        return DECLINE(err, "object %u refers to itself", num);
    /* reading one object can need another first (a stream's /Length, an
     * object stream), and that one a third: a chain, bounded */
    if (p->loading == MAX_DEPTH)
        return DECLINE(err, "objects whose reading needs more than %d others first", MAX_DEPTH);
    p->loading++;
    int rc = load_entry(p, e, num, out, err);
    p->loading--;
    return rc;
}

static int load_entry(sl_pdf *p, xent *e, uint32_t num, const sl_pdf_obj **out, sl_err *err)
{
    e->state = 1;
    sl_pdf_obj *o = NULL;
    if (e->type == 1) {
        if (e->where >= p->len)
            return DECLINE(err, "object %u lies past the end of the file", num);
        if (read_indirect(p, p->d + e->where, p->d + p->len, num, &o, true, err))
            return -1;
    } else {
        uint32_t sn = (uint32_t)e->where;
        if (sn >= p->nx || p->x[sn].type != 1)
            return DECLINE(err, "object %u is in a missing object stream", num);
        if (!p->x[sn].stm && read_objstm(p, &p->x[sn], sn, err))
            return -1;
        objstm *st = p->x[sn].stm;
        if (e->gen >= st->n || st->num[e->gen] != num)
            return DECLINE(err, "object %u is not where its object stream says", num);
        size_t at = st->first + st->off[e->gen];
        if (at > st->len)
            return DECLINE(err, "object %u lies past its object stream", num);
        parser ps = {&p->doc, st->data + at, st->data + st->len, true};
        int r = parse_obj(&ps, &o, 0, err);
        if (r <= 0)
            return r < 0 ? -1 : DECLINE(err, "object %u is cut short", num);
    }
    e->obj = o;
    e->state = 2;
    *out = o;
    return 0;
}

static int read_objstm(sl_pdf *p, xent *e, uint32_t sn, sl_err *err)
{
    const sl_pdf_obj *s, *n, *first;
    if (load(p, sn, &s, err))
        return -1;
    if (!s || s->t != SL_PDF_STREAM)
        return DECLINE(err, "object stream %u is not a stream", sn);
    if (sl_pdf_get(p, s, "N", &n, err) || sl_pdf_get(p, s, "First", &first, err))
        return -1;
    if (!n || n->t != SL_PDF_INT || !first || first->t != SL_PDF_INT || n->i < 0 ||
        first->i < 0)
        return DECLINE(err, "object stream %u lacks /N or /First", sn);
    objstm *st = arena_alloc(&p->doc, sizeof *st);
    if (!st)
        return over(p, err);
    if (sl_pdf_stream(p, s, &st->data, &st->len, err))
        return -1;
    if ((size_t)n->i > st->len / 2 + 1 || (size_t)first->i > st->len)
        return DECLINE(err, "object stream %u's /N or /First does not fit it", sn);
    st->n = (uint32_t)n->i;
    st->first = (size_t)first->i;
    st->num = arena_alloc(&p->doc, (st->n ? st->n : 1) * sizeof *st->num);
    st->off = arena_alloc(&p->doc, (st->n ? st->n : 1) * sizeof *st->off);
    if (!st->num || !st->off)
        return over(p, err);
    parser ps = {&p->doc, st->data, st->data + st->first, false};
    for (uint32_t i = 0; i < st->n; i++) {
        sl_pdf_obj *a, *b;
        if (token(&ps, &a, err) != 1 || token(&ps, &b, err) != 1 || a->t != SL_PDF_INT ||
            b->t != SL_PDF_INT || a->i < 0 || a->i > UINT32_MAX || b->i < 0)
            return DECLINE(err, "object stream %u's header is damaged", sn);
        st->num[i] = (uint32_t)a->i;
        st->off[i] = (size_t)b->i;
    }
    e->stm = st;
    return 0;
}

/* ---- stream data ---- */

static int account(sl_pdf *p, size_t n, sl_err *err)
{
    if (n > p->lim.max_member)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_member",
                            "a stream decodes to more than extract_max_member (%zu bytes)",
                            p->lim.max_member);
    if (p->unpacked + n > p->lim.max_unpacked)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_unpacked",
                            "its streams decode to more than extract_max_unpacked (%zu bytes)",
                            p->lim.max_unpacked);
    return 0;
}

static int inflate_data(sl_pdf *p, const unsigned char *in, size_t n, unsigned char **out,
                        size_t *olen, sl_err *err)
{
    if (sl_dl_load(&z_lib, err))
        return -1;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (z_inflateInit_(&z, ZLIB_VERSION, (int)sizeof z) != Z_OK)
        return sl_err_set(err, SL_ENOMEM, "zlib could not start");
    size_t cap = n * 4 + 4096, len = 0;
    unsigned char *buf = malloc(cap);
    int rc = Z_OK;
    z.next_in = (unsigned char *)in;
    z.avail_in = n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
    while (buf) {
        if (len == cap) {
            if (account(p, cap, err)) {
                free(buf);
                z_inflateEnd(&z);
                return -1;
            }
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb, cap *= 2;
        }
        size_t room = cap - len;
        z.next_out = buf + len;
        z.avail_out = room > UINT32_MAX ? UINT32_MAX : (unsigned)room;
        rc = z_inflate(&z, Z_NO_FLUSH);
        len += (room > UINT32_MAX ? UINT32_MAX : room) - z.avail_out;
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK) {
            /* Z_BUF_ERROR with input left cannot happen; without: cut short */
            break;
        }
    }
    z_inflateEnd(&z);
    if (!buf)
        return sl_err_set(err, SL_ENOMEM, "out of memory decoding a stream");
    if (rc != Z_STREAM_END) {
        free(buf);
        return DECLINE(err, "a Flate stream is damaged or cut short");
    }
    if (account(p, len, err)) {
        free(buf);
        return -1;
    }
    *out = buf, *olen = len;
    return 0;
}

static int ahx(const unsigned char *in, size_t n, unsigned char **out, size_t *olen, sl_err *err)
{
    unsigned char *b = malloc(n / 2 + 2);
    if (!b)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    size_t len = 0;
    int hi = -1;
    for (size_t i = 0; i < n && in[i] != '>'; i++) {
        int v = hexval(in[i]);
        if (v < 0) {
            if (is_ws(in[i]))
                continue;
            free(b);
            return DECLINE(err, "an ASCIIHex stream holds '%c'", in[i]);
        }
        if (hi < 0) {
            hi = v;
        } else {
            b[len++] = (unsigned char)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        b[len++] = (unsigned char)(hi << 4);
    *out = b, *olen = len;
    return 0;
}

static int a85(const unsigned char *in, size_t n, unsigned char **out, size_t *olen, sl_err *err)
{
    unsigned char *b = malloc(n / 5 * 4 + n + 8);
    if (!b)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    size_t len = 0, i = 0;
    if (n >= 2 && in[0] == '<' && in[1] == '~')
        i = 2;
    uint32_t acc = 0;
    int k = 0;
    for (; i < n; i++) {
        unsigned char c = in[i];
        if (is_ws(c))
            continue;
        if (c == '~')
            break;
        if (c == 'z' && k == 0) {
            memset(b + len, 0, 4);
            len += 4;
            continue;
        }
        if (c < '!' || c > 'u') {
            free(b);
            return DECLINE(err, "an ASCII85 stream holds a byte outside it");
        }
        acc = acc * 85 + (uint32_t)(c - '!');
        if (++k == 5) {
            for (int j = 3; j >= 0; j--)
                b[len++] = (unsigned char)(acc >> (8 * j));
            acc = 0, k = 0;
        }
    }
    if (k == 1) {
        free(b);
        return DECLINE(err, "an ASCII85 stream ends in one character");
    }
    if (k) {
        for (int j = k; j < 5; j++)
            acc = acc * 85 + 84;
        for (int j = 0; j < k - 1; j++)
            b[len++] = (unsigned char)(acc >> (24 - 8 * j));
    }
    *out = b, *olen = len;
    return 0;
}

/* Grows a decoded stream's buffer to hold `need` more bytes, within the
 * limits. */
static int room_for(sl_pdf *p, unsigned char **b, size_t *cap, size_t len, size_t need,
                    sl_err *err)
{
    if (len + need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 4096;
    while (nc < len + need)
        nc *= 2;
    if (account(p, nc, err))
        return -1;
    unsigned char *nb = realloc(*b, nc);
    if (!nb)
        return sl_err_set(err, SL_ENOMEM, "out of memory decoding a stream");
    *b = nb, *cap = nc;
    return 0;
}

/* LZW (ISO 32000-1, 7.4.4): 9- to 12-bit codes, 256 clears the table,
 * 257 ends the data; with early change (the default) the code width
 * grows one code early. */
static int lzw(sl_pdf *p, const unsigned char *in, size_t n, bool early, unsigned char **out,
               size_t *olen, sl_err *err)
{
    /* 24 KB of tables: allocated per stream, not thread-local, so that
     * no thread (and no process start) pays for zeroing them */
    struct lzw_tables {
        uint16_t prefix[4096], slen[4096];
        unsigned char suffix[4096], first[4096];
    } *t = malloc(sizeof *t);
    if (!t)
        return sl_err_set(err, SL_ENOMEM, "out of memory decoding a stream");
    uint16_t *prefix = t->prefix, *slen = t->slen;
    unsigned char *suffix = t->suffix, *first = t->first;
    for (int c = 0; c < 256; c++)
        prefix[c] = 0, slen[c] = 1, suffix[c] = first[c] = (unsigned char)c;
    unsigned char *b = NULL, tmp[4096];
    size_t cap = 0, len = 0, at = 0;
    uint32_t acc = 0;
    int bits = 0, width = 9, next = 258, prev = -1;
    for (;;) {
        while (bits < width && at < n)
            acc = acc << 8 | in[at++], bits += 8;
        if (bits < width)
            break; /* the data ends without its end code, as some writers do */
        int code = (int)(acc >> (bits - width)) & ((1 << width) - 1);
        bits -= width;
        if (code == 256) {
            next = 258, width = 9, prev = -1;
            continue;
        }
        if (code == 257)
            break;
        int emit = code;
        if (prev >= 0 && code >= next) {
            if (code > next) {
                free(b), free(t);
                return DECLINE(err, "an LZW stream is damaged");
            }
            emit = prev; /* KwKwK: prev's string and its first byte */
        } else if (prev < 0 && code > 255) {
            free(b), free(t);
            return DECLINE(err, "an LZW stream is damaged");
        }
        size_t k = slen[emit];
        for (int c = emit, i = (int)k - 1; i >= 0; c = prefix[c], i--)
            tmp[i] = suffix[c];
        if (code == next && prev >= 0)
            tmp[k++] = first[prev];
        if (room_for(p, &b, &cap, len, k, err)) {
            free(b), free(t);
            return -1;
        }
        memcpy(b + len, tmp, k);
        len += k;
        if (prev >= 0 && next < 4096) {
            prefix[next] = (uint16_t)prev;
            suffix[next] = tmp[0]; /* the first byte of what this code gave */
            first[next] = first[prev];
            slen[next] = (uint16_t)(slen[prev] + 1);
            next++;
        }
        prev = code;
        if (next + (early ? 1 : 0) >= (1 << width) && width < 12)
            width++;
    }
    free(t);
    *out = b ? b : malloc(1), *olen = len;
    return *out ? 0 : sl_err_set(err, SL_ENOMEM, "out of memory");
}

/* RunLength (7.4.5): a length byte, then that many + 1 bytes, or one byte
 * repeated 257 - length times; 128 ends the data. */
static int runlength(sl_pdf *p, const unsigned char *in, size_t n, unsigned char **out,
                     size_t *olen, sl_err *err)
{
    unsigned char *b = NULL;
    size_t cap = 0, len = 0, at = 0;
    while (at < n && in[at] != 128) {
        unsigned l = in[at++];
        size_t k = l < 128 ? l + 1 : 257 - l;
        if (at + (l < 128 ? k : 1) > n) {
            free(b);
            return DECLINE(err, "a RunLength stream is cut short");
        }
        if (room_for(p, &b, &cap, len, k, err)) {
            free(b);
            return -1;
        }
        if (l < 128)
            memcpy(b + len, in + at, k), at += k;
        else
            memset(b + len, in[at++], k);
        len += k;
    }
    *out = b ? b : malloc(1), *olen = len;
    return *out ? 0 : sl_err_set(err, SL_ENOMEM, "out of memory");
}

/* PNG predictors (every row starts with its filter type). */
static int unpredict(const sl_pdf_obj *parms, sl_pdf *p, unsigned char **data, size_t *len,
                     sl_err *err)
{
    const sl_pdf_obj *pr, *co, *bp, *cols;
    if (sl_pdf_get(p, parms, "Predictor", &pr, err) || sl_pdf_get(p, parms, "Colors", &co, err) ||
        sl_pdf_get(p, parms, "BitsPerComponent", &bp, err) ||
        sl_pdf_get(p, parms, "Columns", &cols, err))
        return -1;
    long long pred = pr && pr->t == SL_PDF_INT ? pr->i : 1;
    if (pred == 1)
        return 0;
    if (pred < 10)
        return DECLINE(err, "a stream uses the TIFF predictor");
    long long colors = co && co->t == SL_PDF_INT ? co->i : 1,
              bpc = bp && bp->t == SL_PDF_INT ? bp->i : 8,
              columns = cols && cols->t == SL_PDF_INT ? cols->i : 1;
    if (colors < 1 || colors > 32 || (bpc != 1 && bpc != 2 && bpc != 4 && bpc != 8 && bpc != 16) ||
        columns < 1 || columns > (1 << 24))
        return DECLINE(err, "a stream's predictor parameters are out of range");
    size_t bpp = (size_t)((colors * bpc + 7) / 8), row = (size_t)((colors * bpc * columns + 7) / 8);
    size_t rows = *len / (row + 1);
    unsigned char *o = malloc(rows * row + 1), *prev = calloc(row + 1, 1);
    if (!o || !prev) {
        free(o), free(prev);
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    }
    const unsigned char *in = *data;
    for (size_t r = 0; r < rows; r++) {
        unsigned char t = in[r * (row + 1)];
        const unsigned char *src = in + r * (row + 1) + 1;
        unsigned char *dst = o + r * row;
        for (size_t i = 0; i < row; i++) {
            unsigned a = i >= bpp ? dst[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
            unsigned v = src[i];
            switch (t) {
            case 0: break;
            case 1: v += a; break;
            case 2: v += b; break;
            case 3: v += (a + b) / 2; break;
            case 4: {
                int pa = abs((int)b - (int)c), pb = abs((int)a - (int)c),
                    pc = abs((int)a + (int)b - 2 * (int)c);
                v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                break;
            }
            default:
                free(o), free(prev);
                return DECLINE(err, "a PNG predictor row of unknown type %u", t);
            }
            dst[i] = (unsigned char)v;
        }
        memcpy(prev, dst, row);
    }
    free(prev);
    free(*data);
    *data = o;
    *len = rows * row;
    return 0;
}

/* The stream's data through its filters: *in and *n, in *heap (to free)
 * or in the file (*heap NULL); counted against the limits. */
static int decode(sl_pdf *p, const sl_pdf_obj *stream, unsigned char **heap,
                  const unsigned char **data, size_t *len, sl_err *err)
{
    *heap = NULL;
    if (!stream || stream->t != SL_PDF_STREAM)
        return DECLINE(err, "a stream was expected");
    const sl_pdf_obj *f, *parms;
    if (sl_pdf_get(p, stream, "Filter", &f, err) ||
        sl_pdf_get(p, stream, "DecodeParms", &parms, err))
        return -1;
    const sl_pdf_obj *one[1] = {f};
    const sl_pdf_obj *const *filters = one;
    size_t nf = f ? 1 : 0;
    if (f && f->t == SL_PDF_ARRAY) {
        filters = (const sl_pdf_obj *const *)f->c.v;
        nf = f->c.n;
    }
    if (nf > 4)
        return DECLINE(err, "a stream with %zu filters", nf);
    unsigned char *cur = NULL;
    size_t n = stream->c.len;
    const unsigned char *in = p->d + stream->c.at;
    for (size_t i = 0; i < nf; i++) {
        const sl_pdf_obj *fi, *pi = NULL;
        if (sl_pdf_resolve(p, filters[i], &fi, err))
            goto fail;
        if (parms && parms->t == SL_PDF_ARRAY) {
            if (i < parms->c.n && sl_pdf_resolve(p, parms->c.v[i], &pi, err))
                goto fail;
        } else if (i == 0) {
            pi = parms;
        }
        unsigned char *o = NULL;
        size_t olen = 0;
        int rc;
        if (sl_pdf_is_name(fi, "FlateDecode") || sl_pdf_is_name(fi, "Fl")) {
            rc = inflate_data(p, in, n, &o, &olen, err);
            if (!rc && pi && pi->t == SL_PDF_DICT)
                rc = unpredict(pi, p, &o, &olen, err);
        } else if (sl_pdf_is_name(fi, "ASCIIHexDecode") || sl_pdf_is_name(fi, "AHx")) {
            rc = ahx(in, n, &o, &olen, err);
        } else if (sl_pdf_is_name(fi, "ASCII85Decode") || sl_pdf_is_name(fi, "A85")) {
            rc = a85(in, n, &o, &olen, err);
        } else if (sl_pdf_is_name(fi, "LZWDecode") || sl_pdf_is_name(fi, "LZW")) {
            const sl_pdf_obj *ec = NULL;
            if (pi && pi->t == SL_PDF_DICT && sl_pdf_get(p, pi, "EarlyChange", &ec, err))
                goto fail;
            rc = lzw(p, in, n, !(ec && ec->t == SL_PDF_INT && ec->i == 0), &o, &olen, err);
            if (!rc && pi && pi->t == SL_PDF_DICT)
                rc = unpredict(pi, p, &o, &olen, err);
        } else if (sl_pdf_is_name(fi, "RunLengthDecode") || sl_pdf_is_name(fi, "RL")) {
            rc = runlength(p, in, n, &o, &olen, err);
        } else {
            rc = DECLINE(err, "a stream uses the %s filter",
                         fi && fi->t == SL_PDF_NAME ? fi->s.s : "(unnamed)");
        }
        if (rc) {
            free(o);
            goto fail;
        }
        free(cur);
        cur = o, in = o, n = olen;
    }
    if (account(p, n, err))
        goto fail;
    p->unpacked += n;
    *heap = cur, *data = in, *len = n;
    return 0;
fail:
    free(cur);
    return -1;
}

int sl_pdf_stream(sl_pdf *p, const sl_pdf_obj *stream, const unsigned char **data, size_t *len,
                  sl_err *err)
{
    unsigned char *heap;
    const unsigned char *in;
    size_t n;
    if (decode(p, stream, &heap, &in, &n, err))
        return -1;
    /* the data lives as long as the document: in its arena */
    unsigned char *keep = arena_alloc(&p->doc, n + 1);
    if (!keep) {
        free(heap);
        return over(p, err);
    }
    memcpy(keep, in, n);
    keep[n] = '\0';
    free(heap);
    *data = keep, *len = n;
    return 0;
}

int sl_pdf_stream_append(sl_pdf *p, const sl_pdf_obj *stream, sl_buf *out, sl_err *err)
{
    unsigned char *heap;
    const unsigned char *in;
    size_t n;
    if (decode(p, stream, &heap, &in, &n, err))
        return -1;
    sl_buf_add(out, in, n);
    free(heap);
    return 0;
}

/* ---- the cross-reference ---- */

static int set_entry(sl_pdf *p, uint64_t num, uint8_t type, uint64_t where, uint32_t gen)
{
    if (num >= p->nx)
        return 0; /* past /Size: ignored, as readers do */
    xent *e = &p->x[num];
    if (e->state == 3 || e->type)
        return 0; /* a newer section set it */
    e->type = type, e->where = where, e->gen = gen;
    if (!type)
        e->state = 3; /* freed by a newer section: stays free */
    return 0;
}

static int size_table(sl_pdf *p, const sl_pdf_obj *trailer, sl_err *err)
{
    if (p->x)
        return 0;
    const sl_pdf_obj *sz = dict_raw(trailer, "Size");
    if (!sz || sz->t != SL_PDF_INT || sz->i < 1 || (size_t)sz->i > p->len + 16 ||
        sz->i > (1 << 23))
        return DECLINE(err, "the trailer's /Size is missing or does not fit the file");
    p->nx = (uint32_t)sz->i;
    p->x = calloc(p->nx, sizeof *p->x);
    if (!p->x)
        return sl_err_set(err, SL_ENOMEM, "out of memory");
    return 0;
}

static int read_table(sl_pdf *p, const unsigned char *s, const sl_pdf_obj **trailer, sl_err *err)
{
    const unsigned char *end = p->d + p->len;
    s += 4;
    /* the trailer comes after the entries; read it first for /Size */
    const unsigned char *t = memmem(s, (size_t)(end - s), "trailer", 7);
    if (!t)
        return DECLINE(err, "a cross-reference table without a trailer");
    parser ps = {&p->doc, t + 7, end, true};
    sl_pdf_obj *tr;
    int r = parse_obj(&ps, &tr, 0, err);
    if (r <= 0 || tr->t != SL_PDF_DICT)
        return r < 0 ? -1 : DECLINE(err, "the trailer is not a dictionary");
    if (size_table(p, tr, err))
        return -1;
    const unsigned char *q = s;
    while (q < t) {
        skip_ws(&q, t);
        if (q >= t)
            break;
        unsigned long long start, count;
        if (!digits(&q, t, &start) || (skip_ws(&q, t), !digits(&q, t, &count)) ||
            count > (size_t)(t - q) / 18 + 1)
            return DECLINE(err, "a damaged cross-reference table");
        for (unsigned long long i = 0; i < count; i++) {
            unsigned long long off, gen;
            skip_ws(&q, t);
            bool ok = digits(&q, t, &off);
            skip_ws(&q, t);
            ok = ok && digits(&q, t, &gen);
            const unsigned char *k = q;
            skip_ws(&k, t);
            if (!ok || k >= t || (*k != 'n' && *k != 'f'))
                return DECLINE(err, "a damaged cross-reference entry");
            if (*k == 'n' && off)
                set_entry(p, start + i, 1, off, (uint32_t)gen);
            else if (*k == 'f')
                set_entry(p, start + i, 0, 0, 0);
            q = k + 1;
        }
    }
    *trailer = tr;
    return 0;
}

static int read_xref_stream(sl_pdf *p, const unsigned char *s, const sl_pdf_obj **trailer,
                            sl_err *err)
{
    sl_pdf_obj *o;
    if (read_indirect(p, s, p->d + p->len, 0, &o, false, err))
        return -1;
    if (o->t != SL_PDF_STREAM || !sl_pdf_is_name(dict_raw(o, "Type"), "XRef"))
        return DECLINE(err, "startxref does not point at a cross-reference");
    if (size_table(p, o, err))
        return -1;
    const sl_pdf_obj *w = dict_raw(o, "W"), *index = dict_raw(o, "Index");
    if (!w || w->t != SL_PDF_ARRAY || w->c.n != 3)
        return DECLINE(err, "a cross-reference stream without /W");
    int wd[3];
    for (int i = 0; i < 3; i++) {
        if (w->c.v[i]->t != SL_PDF_INT || w->c.v[i]->i < 0 || w->c.v[i]->i > 8)
            return DECLINE(err, "a cross-reference stream's /W is out of range");
        wd[i] = (int)w->c.v[i]->i;
    }
    size_t rowlen = (size_t)(wd[0] + wd[1] + wd[2]);
    if (!rowlen)
        return DECLINE(err, "a cross-reference stream's /W is empty");
    const unsigned char *d;
    size_t n;
    /* /Filter and /DecodeParms of an xref stream are direct (7.5.8.2) */
    if (sl_pdf_stream(p, o, &d, &n, err))
        return -1;
    long long def[2] = {0, p->nx};
    const sl_pdf_obj *const *ix = NULL;
    size_t nix = 2;
    if (index && index->t == SL_PDF_ARRAY && index->c.n % 2 == 0) {
        ix = (const sl_pdf_obj *const *)index->c.v;
        nix = index->c.n;
    }
    size_t row = 0;
    for (size_t k = 0; k < nix; k += 2) {
        long long start = ix ? (ix[k]->t == SL_PDF_INT ? ix[k]->i : -1) : def[0];
        long long count = ix ? (ix[k + 1]->t == SL_PDF_INT ? ix[k + 1]->i : -1) : def[1];
        if (start < 0 || count < 0)
            return DECLINE(err, "a cross-reference stream's /Index is damaged");
        for (long long i = 0; i < count; i++, row++) {
            if ((row + 1) * rowlen > n)
                return DECLINE(err, "a cross-reference stream is shorter than its /Index");
            const unsigned char *r = d + row * rowlen;
            uint64_t f[3];
            for (int j = 0, at = 0; j < 3; at += wd[j], j++) {
                f[j] = 0;
                for (int b = 0; b < wd[j]; b++)
                    f[j] = f[j] << 8 | r[at + b];
            }
            if (!wd[0])
                f[0] = 1;
            if (f[0] == 1 && f[1])
                set_entry(p, (uint64_t)(start + i), 1, f[1], (uint32_t)f[2]);
            else if (f[0] == 2)
                set_entry(p, (uint64_t)(start + i), 2, f[1], (uint32_t)f[2]);
            else if (f[0] == 0)
                set_entry(p, (uint64_t)(start + i), 0, 0, 0);
        }
    }
    *trailer = o;
    return 0;
}

static int read_xref(sl_pdf *p, size_t off, sl_err *err)
{
    size_t seen[MAX_SECTIONS];
    int ns = 0;
    while (true) {
        for (int i = 0; i < ns; i++)
            if (seen[i] == off)
                return DECLINE(err, "the cross-reference sections form a loop");
        if (ns == MAX_SECTIONS)
            return DECLINE(err, "more than %d cross-reference sections", MAX_SECTIONS);
        seen[ns++] = off;
        if (off >= p->len)
            return DECLINE(err, "a cross-reference offset past the end of the file");
        const unsigned char *s = p->d + off;
        skip_ws(&s, p->d + p->len);
        const sl_pdf_obj *tr = NULL;
        if ((size_t)(p->d + p->len - s) >= 4 && !memcmp(s, "xref", 4)) {
            if (read_table(p, s, &tr, err))
                return -1;
            const sl_pdf_obj *xs = dict_raw(tr, "XRefStm");
            if (xs && xs->t == SL_PDF_INT && xs->i > 0 && (size_t)xs->i < p->len) {
                const sl_pdf_obj *ignored;
                if (read_xref_stream(p, p->d + xs->i, &ignored, err))
                    return -1;
            }
        } else if (read_xref_stream(p, s, &tr, err)) {
            return -1;
        }
        if (!p->trailer)
            p->trailer = (sl_pdf_obj *)tr;
        const sl_pdf_obj *prev = dict_raw(tr, "Prev");
        if (!prev || prev->t != SL_PDF_INT || prev->i < 0)
            break;
        off = (size_t)prev->i;
    }
    return 0;
}

sl_pdf *sl_pdf_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err)
{
    sl_pdf *p = calloc(1, sizeof *p);
    if (!p) {
        sl_err_set(err, SL_ENOMEM, "out of memory");
        return NULL;
    }
    p->d = data, p->len = len;
    if (lim)
        p->lim = *lim;
    else
        sl_extract_limits_default(&p->lim);
    p->doc = (sl_pdf_arena){NULL, &p->mem, p->lim.max_unpacked, false};
    p->scratch = (sl_pdf_arena){NULL, &p->mem, p->lim.max_unpacked, false};
    /* startxref, in the last 1024 bytes */
    size_t from = len > 1024 ? len - 1024 : 0;
    const unsigned char *sx = NULL;
    for (const unsigned char *q = p->d + from;
         (q = memmem(q, len - (size_t)(q - p->d), "startxref", 9)); q += 9)
        sx = q;
    if (!sx) {
        DECLINE(err, "no startxref at the end of the file");
        goto fail;
    }
    const unsigned char *q = sx + 9;
    skip_ws(&q, p->d + len);
    unsigned long long off;
    if (!digits(&q, p->d + len, &off) || off >= len) {
        DECLINE(err, "startxref does not give an offset in the file");
        goto fail;
    }
    if (read_xref(p, (size_t)off, err))
        goto fail;
    if (dict_raw(p->trailer, "Encrypt")) {
        DECLINE(err, "the document is encrypted");
        goto fail;
    }
    return p;
fail:
    sl_pdf_close(p);
    return NULL;
}

void sl_pdf_close(sl_pdf *p)
{
    if (!p)
        return;
    arena_free(&p->doc);
    arena_free(&p->scratch);
    free(p->x);
    free(p);
}
