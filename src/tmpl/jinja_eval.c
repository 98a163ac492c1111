/*
 * jinja_eval — rendering: walks the tree of jinja_int.h against a context.
 *
 * Every render has its own state (jrender, frames on the C stack), so one
 * compiled template renders on many threads at once.  Values are jansson
 * nodes wrapped in a `jv` that adds what JSON lacks: undefined (with the
 * name that was missing, for messages), macros, callers, the loop object
 * and namespaces.  Python's semantics are kept where a template can see
 * them: truthiness, and/or returning operands, int vs float arithmetic,
 * str() and repr() of values.  What values do (arithmetic, comparisons,
 * lookups) is in jinja_value.c; filters, tests and methods are in the
 * files jinja_ev.h lists.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl/jinja_ev.h"

/* the render running on this thread (tuples are looked up through it,
 * allocations are counted to it) */
_Thread_local jrender *sl_jx_cur_render;

/* ---- the byte budget and polling ---- */

/* Every value a render makes is a jansson value, so jansson's allocator is
 * where a render's memory is counted, whatever filter or operator made it.
 * A block allocated on a thread while it renders carries an 8-byte header
 * with its size and is handed out 8 bytes past a 16-byte boundary; every
 * other block is 16-byte aligned.  A free tells the two apart by address
 * alone, and takes off exactly what the allocation added (the size plus
 * 16 for malloc's own cost) from the render running then, if any.  jansson
 * needs no more than 8-byte alignment.  Blocks may be freed on any thread;
 * memory jansson hands out to be free()d by the caller (json_dumps) must
 * not be made while rendering. */
#define COUNTED 8

/* malloc gave an address 8 past a 16-byte boundary (not glibc's malloc):
 * the same size again, 16-byte aligned */
static __attribute__((noinline, cold)) void *realign(void *p, size_t n)
{
    free(p);
    return posix_memalign(&p, 16, n ? n : 1) ? NULL : p;
}

static void *alloc_plain(size_t n)
{
    void *p = malloc(n);
    if (__builtin_expect(((uintptr_t)p & COUNTED) != 0, 0))
        p = realign(p, n);
    return p;
}

static void *count_alloc(size_t n)
{
    if (!sl_jx_cur_render)
        return alloc_plain(n);
    if (n > SIZE_MAX / 2)
        return NULL;
    size_t *b = alloc_plain(n + 8);
    if (!b)
        return NULL;
    jrender *r = sl_jx_cur_render;
    b[0] = n + 16; /* what the render is charged: the block and malloc's cost */
    r->bytes += (long long)(n + 16);
    r->work -= (long)(n >> 6); /* making a value is work: copying it */
    return b + 1;
}

static void count_free(void *p)
{
    if (!((uintptr_t)p & COUNTED)) {
        free(p);
        return;
    }
    size_t *b = (size_t *)p - 1;
    jrender *r = sl_jx_cur_render;
    if (r)
        r->bytes -= (long long)b[0];
    free(b);
}

/* before main: no value exists yet, and no other thread reads the functions */
__attribute__((constructor)) static void count_init(void)
{
    json_set_alloc_funcs(count_alloc, count_free);
}

void sl_jx_charge(long units)
{
    jrender *r = sl_jx_cur_render;
    if (r)
        r->work -= units;
}

int sl_jx_poll(jrender *r, const jnode *e)
{
    r->work = JINJA_POLL_UNITS;
    if (r->halted) {
        /* the error that ended the render stands (a caller may have
         * dropped it; then say it again) */
        if (!r->err || r->err->code != r->halted)
            sl_jx_err(r, e, r->halted,
                      "the render was ended (stopped, out of time or over its "
                      "memory budget)");
        return -1;
    }
    if (r->bytes > 0 && (size_t)r->bytes > r->lim.max_bytes) {
        r->halted = SL_ELIMIT;
        return sl_jx_err(r, e, SL_ELIMIT,
                         "the values this template made take more than %zu bytes of "
                         "memory (its budget); raise the limit %s if this is meant, or build "
                         "smaller values",
                         r->lim.max_bytes,
                         r->lim.bytes_limit_name ? r->lim.bytes_limit_name : "max_bytes");
    }
    if (r->lim.interrupt) {
        sl_err why = {0};
        sl_jx_cur_render = NULL; /* the callback's own values are not the template's */
        int stop = r->lim.interrupt(r->lim.interrupt_ud, &why);
        sl_jx_cur_render = r;
        if (stop < 0) {
            r->halted = why.code ? why.code : SL_ECANCELED;
            sl_jx_err(r, e, r->halted, "%s", why.msg ? why.msg : "the render was stopped");
            sl_err_clear(&why);
            return -1;
        }
    }
    return 0;
}

/* The lowest stack address rendering may reach on this thread, with room
 * left for libc below it: deep templates (recursive macros and loops
 * around nested expressions) end with an error, not a stack overflow.
 * Threads differ (the server streams runs on 1 MB stacks). */
static _Thread_local uintptr_t stack_floor;

static void stack_floor_init(void)
{
    if (stack_floor)
        return;
    pthread_attr_t at;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        if (pthread_attr_getstack(&at, &addr, &size) != 0)
            addr = NULL;
        pthread_attr_destroy(&at);
    }
    uintptr_t here = (uintptr_t)&at;
    if (addr && size && here > (uintptr_t)addr && here - (uintptr_t)addr <= size) {
        size_t margin = size / 4 < 256 * 1024 ? size / 4 : 256 * 1024;
        stack_floor = (uintptr_t)addr + margin;
    } else {
        stack_floor = here > 768 * 1024 ? here - 768 * 1024 : 1; /* unknown: assume 1 MB */
    }
}

static int stack_err(jrender *r, const jnode *e)
{
    return sl_jx_err(r, e, SL_ELIMIT,
                     "the template nests too deeply for this thread's stack "
                     "(recursive macros or loops around deeply nested expressions); lower "
                     "the nesting");
}

#define STACK_CHECK(r, e)                                                                    \
    do {                                                                                     \
        char probe_;                                                                         \
        if ((uintptr_t)&probe_ < stack_floor)                                                \
            return stack_err((r), (e));                                                      \
    } while (0)

/* ---- errors ---- */

int sl_jx_err(jrender *r, const jnode *e, sl_errcode code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!e)
        return sl_err_set(r->err, code, "%s: %s", r->t->name, msg);
    int line, col;
    sl_jx_line_col(r->t, e->off, &line, &col);
    int len = (int)(e->len > 120 ? 120 : e->len);
    if (len > 0 && e->type >= E_CONST)
        return sl_err_set(r->err, code, "%s:%d:%d: %s (in '%.*s')", r->t->name, line, col, msg,
                          len, r->t->src + e->off);
    return sl_err_set(r->err, code, "%s:%d:%d: %s", r->t->name, line, col, msg);
}

/* ---- frames ---- */

static void frame_release(frame *f)
{
    for (int i = 0; i < f->n; i++)
        sl_jx_free(&f->vals[i]);
    free(f->names);
    free(f->vals);
}

/* steals v */
static void frame_set(frame *f, const char *name, jv v)
{
    for (int i = 0; i < f->n; i++)
        if (f->names[i] == name || (f->names[i][0] == name[0] && !strcmp(f->names[i], name))) {
            sl_jx_free(&f->vals[i]);
            f->vals[i] = v;
            return;
        }
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->names = sl_xrealloc(f->names, (size_t)f->cap * sizeof *f->names);
        f->vals = sl_xrealloc(f->vals, (size_t)f->cap * sizeof *f->vals);
    }
    f->names[f->n] = name;
    f->vals[f->n++] = v;
}

static const jv *frame_get(const frame *f, const char *name)
{
    for (; f; f = f->parent)
        for (int i = f->n - 1; i >= 0; i--)
            if (f->names[i] == name || (f->names[i][0] == name[0] && !strcmp(f->names[i], name)))
                return &f->vals[i];
    return NULL;
}

/* a variable: the frames, then the context, then the builtins */
static jv lookup(jrender *r, frame *f, const char *name)
{
    const jv *v = frame_get(f, name);
    if (v)
        return sl_jx_copy(v);
    json_t *j = r->ctx ? json_object_get(r->ctx, name) : NULL;
    if (j)
        return sl_jx_json(json_incref((json_t *)j));
    static const char *const builtins[] = {"range", "dict", "namespace", "cycler", "joiner", NULL};
    for (int i = 0; builtins[i]; i++)
        if (!strcmp(name, builtins[i])) {
            jv b = {.k = K_BUILTIN, .name = builtins[i]};
            return b;
        }
    return sl_jx_undef(name);
}

/* ---- output ---- */

static int cap_err(jrender *r)
{
    if (sl_jx_too_deep)
        return sl_jx_deep_err(r, NULL);
    return sl_jx_err(r, NULL, SL_ELIMIT,
                     "the template's output is longer than %zu characters (the output cap); raise "
                     "the limit %s if this is meant",
                     r->lim.max_output_chars,
                     r->lim.limit_name ? r->lim.limit_name : "max_output_chars");
}

/* characters in out; for the render's own output only what was added
 * since the last call is counted (recounting all of a large output at
 * every emit was quadratic); scratch buffers are counted whole */
static size_t out_chars(jrender *r, const sl_buf *out)
{
    if (out != r->cnt_buf)
        return 0; /* a scratch buffer: its byte cap (4 per character) bounds it, and
                     its text is counted here when it reaches the output */
    if (out->len < r->cnt_len)
        r->cnt_len = r->cnt_chars = 0;
    r->cnt_chars += sl_jx_ulen(out->data + r->cnt_len, out->len - r->cnt_len);
    r->cnt_len = out->len;
    return r->cnt_chars;
}

static int emit(jrender *r, sl_buf *out, const char *s, size_t n)
{
    if (sl_buf_add(out, s, n) < 0)
        return cap_err(r);
    /* a character is at most 4 bytes: more bytes than that is over the cap
     * even when they are stray UTF-8 continuation bytes that count as none */
    if (out->len > r->lim.max_output_chars &&
        (out->len / 4 > r->lim.max_output_chars || out_chars(r, out) > r->lim.max_output_chars))
        return cap_err(r);
    return 0;
}

/* a scratch buffer for captured output (macros, set blocks, filters) */
static void scratch_init(jrender *r, sl_buf *b)
{
    sl_buf_init(b, r->lim.max_output_chars * 4 + 16);
}

/* Text captured for a macro, a recursive loop or a set block is memory
 * the render holds while it renders deeper: the text of every enclosing
 * capture counts to the byte budget until the capture inside it ends
 * (the innermost one is bounded by the output cap).  Returns the
 * enclosing capture, for capture_end. */
static sl_buf *capture_begin(jrender *r, sl_buf *b, size_t *held)
{
    sl_buf *outer = r->capture;
    *held = outer ? outer->len : 0;
    r->bytes += (long long)*held;
    r->capture = b;
    return outer;
}

static void capture_end(jrender *r, sl_buf *outer, size_t held)
{
    r->capture = outer;
    r->bytes -= (long long)held;
}

/* ---- calls ---- */

static int eval(jrender *r, const jnode *e, frame *f, jv *out);
static int render_body(jrender *r, const jnode *body, frame *f, sl_buf *out);

static int eval_args(jrender *r, const jnode *e, frame *f, jargs *a)
{
    a->n = e->nv;
    a->nkw = e->nkw;
    a->kwn = e->kwn;
    a->pos = e->nv <= 8 ? a->pos_s : sl_xmalloc((size_t)e->nv * sizeof *a->pos);
    a->kwv = e->nkw <= 8 ? a->kwv_s : sl_xmalloc((size_t)e->nkw * sizeof *a->kwv);
    /* eval() clears each slot first, so a failure leaves them releasable */
    for (int i = 0; i < e->nv; i++)
        a->pos[i].j = NULL;
    for (int i = 0; i < e->nkw; i++)
        a->kwv[i].j = NULL;
    for (int i = 0; i < e->nv; i++)
        if (eval(r, e->v[i], f, &a->pos[i]) < 0)
            return -1;
    for (int i = 0; i < e->nkw; i++)
        if (eval(r, e->kwv[i], f, &a->kwv[i]) < 0)
            return -1;
    return 0;
}

static void args_release(jargs *a)
{
    for (int i = 0; i < a->n; i++)
        sl_jx_free(&a->pos[i]);
    for (int i = 0; i < a->nkw; i++)
        sl_jx_free(&a->kwv[i]);
    if (a->pos != a->pos_s)
        free(a->pos);
    if (a->kwv != a->kwv_s)
        free(a->kwv);
}

jv *sl_jx_arg(jargs *a, int i, const char *name)
{
    if (i >= 0 && i < a->n)
        return &a->pos[i];
    for (int k = 0; k < a->nkw; k++)
        if (name && !strcmp(a->kwn[k], name))
            return &a->kwv[k];
    return NULL;
}

/* a macro (m: N_MACRO) or a caller (m: N_CALLBLOCK) */
static int call_macro(jrender *r, const jnode *e, const jv *fn, jargs *a, const jv *caller,
                      jv *out)
{
    const jnode *m = fn->p;
    if (r->depth >= r->lim.max_depth)
        return sl_jx_err(r, e, SL_ELIMIT, "macro calls nest deeper than %d (the recursion cap)",
                         r->lim.max_depth);
    if (jwork(r, e, 1) < 0) /* macros calling themselves twice run 2^depth calls */
        return -1;
    const char *mname = fn->k == K_CALLER ? "caller" : m->s;
    bool uses_var = m->op & 1, uses_kw = m->op & 2;
    if (m->nkw > 64)
        return sl_jx_err(r, e, SL_EINVAL, "macro '%s' has more than 64 parameters", mname);
    if (a->n > m->nkw && !uses_var)
        return sl_jx_err(r, e, SL_EINVAL, "macro '%s' takes not more than %d argument(s)", mname,
                         m->nkw);
    for (int k = 0; k < a->nkw; k++) {
        int i = 0;
        while (i < m->nkw && strcmp(m->kwn[i], a->kwn[k]))
            i++;
        if (i == m->nkw && !uses_kw && strcmp(a->kwn[k], "caller"))
            return sl_jx_err(r, e, SL_EINVAL, "macro '%s' takes no keyword argument '%s'", mname,
                             a->kwn[k]);
        if (i < m->nkw && i < a->n)
            return sl_jx_err(r, e, SL_EINVAL, "macro '%s' got multiple values for argument '%s'",
                             mname, a->kwn[k]);
    }
    frame f = {.parent = fn->k == K_CALLER ? (frame *)fn->p2 : r->root};
    json_t *varargs = json_array(), *kwargs = json_object();
    if (uses_var)
        sl_jx_mark_tuple(r, varargs, TUP_PLAIN);
    bool bound[64] = {false};
    for (int i = 0; i < a->n; i++) {
        if (i < m->nkw) {
            frame_set(&f, m->kwn[i], sl_jx_copy(&a->pos[i]));
            bound[i] = true;
        } else {
            json_array_append_new(varargs, sl_jx_to_json(&a->pos[i]));
        }
    }
    for (int k = 0; k < a->nkw; k++) {
        int i;
        for (i = 0; i < m->nkw; i++)
            if (!strcmp(m->kwn[i], a->kwn[k]))
                break;
        if (i < m->nkw) {
            frame_set(&f, m->kwn[i], sl_jx_copy(&a->kwv[k]));
            bound[i] = true;
        } else if (strcmp(a->kwn[k], "caller")) {
            json_object_set_new(kwargs, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        }
    }
    int rc = 0;
    for (int i = 0; i < m->nkw && !rc; i++) {
        if (bound[i])
            continue;
        jv d = sl_jx_undef(m->kwn[i]);
        if (m->kwv[i])
            rc = eval(r, m->kwv[i], &f, &d);
        if (!rc)
            frame_set(&f, m->kwn[i], d);
    }
    frame_set(&f, "varargs", sl_jx_json(varargs));
    frame_set(&f, "kwargs", sl_jx_json(kwargs));
    if (caller)
        frame_set(&f, "caller", sl_jx_copy(caller));
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    size_t held;
    sl_buf *outer = capture_begin(r, &b, &held);
    r->depth++;
    if (!rc)
        rc = render_body(r, m->b, &f, &b);
    r->depth--;
    capture_end(r, outer, held);
    if (!rc)
        *out = sl_jx_json(json_stringn_nocheck(b.data ? b.data : "", b.len));
    sl_buf_release(&b);
    frame_release(&f);
    return rc;
}

static int builtin_call(jrender *r, const jnode *e, const char *name, jargs *a, jv *out)
{
    if (!strcmp(name, "range")) {
        long long v[3] = {0, 0, 1};
        if (a->n < 1 || a->n > 3)
            return sl_jx_err(r, e, SL_EINVAL, "range expected 1 to 3 arguments, got %d", a->n);
        for (int i = 0; i < a->n; i++) {
            double d;
            if (sl_jx_num_of(&a->pos[i], &v[i], &d) != 1)
                return sl_jx_err(r, e, SL_EINVAL, "range() takes integers, not '%s'",
                                 sl_jx_py_type(&a->pos[i]));
        }
        long long start = a->n == 1 ? 0 : v[0], stop = a->n == 1 ? v[0] : v[1],
                  step = a->n == 3 ? v[2] : 1;
        if (step == 0)
            return sl_jx_err(r, e, SL_EINVAL, "range() arg 3 must not be zero");
        long long cnt = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                                 : (start > stop ? (start - stop - step - 1) / -step : 0);
        if (cnt > r->lim.max_loop_iterations)
            return sl_jx_err(r, e, SL_ELIMIT, "range() of %lld items is over the loop cap of %ld",
                             cnt, r->lim.max_loop_iterations);
        json_t *res = json_array();
        for (long long i = 0; i < cnt; i++) {
            if ((i & 1023) == 1023 && jwork(r, e, 1024)) {  /* a million items take a while */
                jdecref(res);
                return -1;
            }
            json_array_append_new(res, sl_jx_int(start + i * step));
        }
        *out = sl_jx_json(res);
        return 0;
    }
    if (!strcmp(name, "dict") || !strcmp(name, "namespace")) {
        json_t *o = json_object();
        if (a->n >= 1 && a->pos[0].k == K_JSON && json_is_object(a->pos[0].j))
            json_object_update(o, a->pos[0].j);
        for (int k = 0; k < a->nkw; k++)
            json_object_set_new(o, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        *out = sl_jx_json(o);
        if (name[0] == 'n')
            out->k = K_NS;
        return 0;
    }
    if (!strcmp(name, "cycler") || !strcmp(name, "joiner")) {
        jobj *o = calloc(1, sizeof *o);
        if (!o)
            abort();
        o->items = json_array();
        if (name[0] == 'c') {
            if (!a->n) {
                jdecref(o->items);
                free(o);
                return sl_jx_err(r, e, SL_EINVAL, "a cycler needs at least one item");
            }
            for (int i = 0; i < a->n; i++)
                json_array_append_new(o->items, sl_jx_to_json(&a->pos[i]));
        } else {
            jv *sep = sl_jx_arg(a, 0, "sep");
            json_array_append_new(o->items, sep ? sl_jx_to_json(sep) : json_string(", "));
        }
        o->next = r->objs;
        r->objs = o;
        jv v = {.k = name[0] == 'c' ? K_CYCLER : K_JOINER, .p = o, .name = name};
        *out = v;
        return 0;
    }
    return -2;
}

/* the items of a recursive loop's new level, rendered to a string */
static int run_loop(jrender *r, const jnode *s, frame *f, const jv *it, int depth, sl_buf *out);

static int call_loop(jrender *r, const jnode *e, const jv *lv, jargs *a, jv *out)
{
    const loopst *l = lv->p;
    if (!l->node->neg)
        return sl_jx_err(r, e, SL_EINVAL,
                         "the loop is not recursive: it can be called only in a "
                         "`for ... recursive` loop");
    if (a->n != 1 || a->nkw)
        return sl_jx_err(r, e, SL_EINVAL, "loop() takes exactly one argument, the items");
    if (r->depth >= r->lim.max_depth)
        return sl_jx_err(r, e, SL_ELIMIT, "recursive loops nest deeper than %d (the recursion cap)",
                         r->lim.max_depth);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    size_t held;
    sl_buf *outer = capture_begin(r, &b, &held);
    r->depth++;
    int rc = run_loop(r, l->node, l->outer, &a->pos[0], l->depth + 1, &b);
    r->depth--;
    capture_end(r, outer, held);
    if (!rc)
        *out = sl_jx_json(json_stringn_nocheck(b.data ? b.data : "", b.len));
    sl_buf_release(&b);
    return rc;
}

static int eval_call(jrender *r, const jnode *e, frame *f, const jv *caller, jv *out)
{
    const jnode *fe = e->a;
    int rc;
    jargs a;
    if (fe->type == E_ATTR) {
        jv self;
        if (eval(r, fe->a, f, &self) < 0)
            return -1;
        if (self.k == K_UNDEF) {
            rc = sl_jx_undef_err(r, fe, &self);
            sl_jx_free(&self);
            return rc;
        }
        rc = eval_args(r, e, f, &a);
        if (!rc) {
            if (self.k == K_LOOP && !strcmp(fe->s, "cycle")) {
                const loopst *l = self.p;
                if (!a.n)
                    rc = sl_jx_err(r, e, SL_EINVAL, "no items for cycling given");
                else
                    *out = sl_jx_copy(&a.pos[l->i % (size_t)a.n]);
            } else if (self.k == K_LOOP && !strcmp(fe->s, "changed")) {
                /* True when the arguments differ from the last call's */
                loopst *l = (loopst *)self.p;
                json_t *now = json_array();
                for (int i = 0; i < a.n; i++)
                    json_array_append_new(now, sl_jx_to_json(&a.pos[i]));
                bool same = l->changed && sl_jx_py_eq(l->changed, now);
                jdecref(l->changed);
                l->changed = now;
                *out = sl_jx_json(json_boolean(!same));
            } else if (self.k == K_CYCLER && (!strcmp(fe->s, "next") || !strcmp(fe->s, "reset"))) {
                jobj *c = (jobj *)self.p;
                if (fe->s[0] == 'n') {
                    *out = sl_jx_json(json_incref(json_array_get(c->items, c->pos)));
                    c->pos = (c->pos + 1) % json_array_size(c->items);
                } else {
                    c->pos = 0;
                    *out = sl_jx_json(json_null());
                }
            } else {
                rc = sl_jx_call_method(r, e, &self, fe->s, &a, out);
            }
            if (!rc && jwork(r, e, 0) < 0) {
                sl_jx_free(out);
                rc = -1;
            }
        }
        args_release(&a);
        sl_jx_free(&self);
        return rc;
    }
    jv fn;
    if (eval(r, fe, f, &fn) < 0)
        return -1;
    rc = eval_args(r, e, f, &a);
    if (!rc) {
        if (fn.k == K_MACRO || fn.k == K_CALLER) {
            rc = call_macro(r, e, &fn, &a, caller, out);
        } else if (fn.k == K_BUILTIN && fn.owner) {
            rc = sl_jx_err(r, e, SL_EINVAL,
                           "call the method where it is read (d.%s(...)); sluice "
                           "does not keep bound methods in variables",
                           fn.name);
        } else if (fn.k == K_BUILTIN) {
            rc = builtin_call(r, e, fn.name, &a, out);
        } else if (fn.k == K_LOOP) {
            rc = call_loop(r, e, &fn, &a, out);
        } else if (fn.k == K_JOINER) {
            jobj *o = (jobj *)fn.p;
            *out = o->pos++ ? sl_jx_json(json_incref(json_array_get(o->items, 0)))
                            : sl_jx_json(json_stringn_nocheck("", 0));
        } else if (fn.k == K_UNDEF) {
            rc = sl_jx_undef_err(r, fe, &fn);
        } else {
            rc = sl_jx_err(r, e, SL_EINVAL, "'%s' object is not callable", sl_jx_py_type(&fn));
        }
    }
    args_release(&a);
    sl_jx_free(&fn);
    return rc;
}

/* ---- expressions ---- */

static int eval_filter(jrender *r, const jnode *e, frame *f, const jv *in, jv *out)
{
    jv x;
    int rc = 0;
    if (!e->fn) /* unknown, inside an if: an error once it runs */
        return sl_jx_err(r, e, SL_EINVAL, "no filter named '%s'", e->s);
    if (!e->a)
        x = sl_jx_copy(in);
    else if (e->a->type == E_FILTER)
        rc = eval_filter(r, e->a, f, in, &x);
    else
        rc = eval(r, e->a, f, &x);
    if (e->a && rc < 0)
        return -1;
    jargs a;
    rc = eval_args(r, e, f, &a);
    if (!rc) {
        const jfilter *fl = e->fn;
        if (e->neg) /* the arguments do not fit: say how */
            rc = sl_jx_check_filter_args(r, e, fl, &a);
        if (!rc)
            rc = fl->fn(r, e, &x, &a, out);
        if (!rc && sl_jx_too_deep) {
            sl_jx_free(out);
            rc = sl_jx_deep_err(r, e);
        }
        if (!rc && jwork(r, e, 0) < 0) {
            sl_jx_free(out);
            rc = -1;
        }
    }
    args_release(&a);
    sl_jx_free(&x);
    return rc;
}

static int eval(jrender *r, const jnode *e, frame *f, jv *out)
{
    memset(out, 0, sizeof *out);
    STACK_CHECK(r, e);
    int rc = 0;
    jv a, b;
    switch (e->type) {
    case E_CONST: *out = sl_jx_json(json_incref(e->c)); return 0;
    case E_NAME:
        *out = lookup(r, f, e->s);
        return 0;
    case E_LIST:
    case E_TUPLE: {
        json_t *l = json_array();
        for (int i = 0; i < e->nv; i++) {
            if (eval(r, e->v[i], f, &a) < 0) {
                jdecref(l);
                return -1;
            }
            json_array_append_new(l, sl_jx_to_json(&a));
            sl_jx_free(&a);
        }
        if (e->type == E_TUPLE)
            sl_jx_mark_tuple(r, l, TUP_PLAIN);
        *out = sl_jx_json(l);
        return 0;
    }
    case E_DICT: {
        json_t *d = json_object();
        for (int i = 0; i + 1 < e->nv; i += 2) {
            if (eval(r, e->v[i], f, &a) < 0) {
                jdecref(d);
                return -1;
            }
            if (eval(r, e->v[i + 1], f, &b) < 0) {
                sl_jx_free(&a);
                jdecref(d);
                return -1;
            }
            STACKBUF(k, 0);
            sl_jx_str(&a, &k);
            if (k.len && memchr(k.data, 0, k.len)) {
                /* jansson would keep it, but every C-string lookup would miss it */
                sl_buf_release(&k);
                sl_jx_free(&a);
                sl_jx_free(&b);
                jdecref(d);
                return sl_jx_err(r, e, SL_EINVAL, "sluice's dict keys cannot hold NUL characters");
            }
            json_object_setn_new_nocheck(d, k.data ? k.data : "", k.len, sl_jx_to_json(&b));
            sl_buf_release(&k);
            sl_jx_free(&a);
            sl_jx_free(&b);
        }
        *out = sl_jx_json(d);
        return 0;
    }
    case E_ATTR:
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        rc = sl_jx_get_attr(r, e, &a, e->s, out);
        sl_jx_free(&a);
        return rc;
    case E_ITEM:
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        if (eval(r, e->b, f, &b) < 0) {
            sl_jx_free(&a);
            return -1;
        }
        rc = sl_jx_get_item(r, e, &a, &b, out);
        sl_jx_free(&a);
        sl_jx_free(&b);
        return rc;
    case E_SLICE: {
        jv p[3] = {{0}, {0}, {0}};
        const jnode *pn[3] = {e->b, e->x, e->cond};
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        for (int i = 0; i < 3 && !rc; i++)
            if (pn[i])
                rc = eval(r, pn[i], f, &p[i]);
        if (!rc)
            rc = sl_jx_slice(r, e, &a, p[0].k == K_JSON ? p[0].j : NULL,
                             p[1].k == K_JSON ? p[1].j : NULL, p[2].k == K_JSON ? p[2].j : NULL,
                             out);
        for (int i = 0; i < 3; i++)
            sl_jx_free(&p[i]);
        sl_jx_free(&a);
        return rc;
    }
    case E_BIN:
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        if (eval(r, e->b, f, &b) < 0) {
            sl_jx_free(&a);
            return -1;
        }
        if (e->op == OP_CAT) {
            STACKBUF(s, r->lim.max_output_chars * 4 + 16);
            sl_jx_str(&a, &s);
            sl_jx_str(&b, &s);
            if (s.toobig)
                rc = cap_err(r);
            else
                *out = sl_jx_json(json_stringn_nocheck(s.data ? s.data : "", s.len));
            sl_buf_release(&s);
        } else {
            rc = sl_jx_arith(r, e, e->op, &a, &b, out);
        }
        sl_jx_free(&a);
        sl_jx_free(&b);
        return rc;
    case E_NEG:
    case E_POS: {
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        long long i;
        double d;
        int t = sl_jx_num_of(&a, &i, &d);
        if (!t)
            rc = a.k == K_UNDEF ? sl_jx_undef_err(r, e, &a)
                                : sl_jx_err(r, e, SL_EINVAL, "bad operand type for unary %c: '%s'",
                                            e->type == E_NEG ? '-' : '+', sl_jx_py_type(&a));
        else if (e->type == E_POS)
            *out = t == 1 ? sl_jx_json(sl_jx_int(i)) : sl_jx_json(json_real(d));
        else if (t == 1 && i != INT64_MIN)
            *out = sl_jx_json(sl_jx_int(-i));
        else
            *out = sl_jx_json(json_real(-d));
        sl_jx_free(&a);
        return rc;
    }
    case E_NOT:
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        *out = sl_jx_json(json_boolean(!sl_jx_truthy(&a)));
        sl_jx_free(&a);
        return 0;
    case E_AND:
    case E_OR:
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        if (sl_jx_truthy(&a) == (e->type == E_OR)) {
            *out = a;
            return 0;
        }
        sl_jx_free(&a);
        return eval(r, e->b, f, out);
    case E_CMP: {
        if (eval(r, e->v[0], f, &a) < 0)
            return -1;
        bool res = true;
        for (int i = 1; i < e->nv && res; i++) {
            if (eval(r, e->v[i], f, &b) < 0) {
                sl_jx_free(&a);
                return -1;
            }
            rc = sl_jx_compare(r, e, (unsigned char)e->s[i - 1], &a, &b, &res);
            sl_jx_free(&a);
            a = b;
            if (rc)
                break;
        }
        sl_jx_free(&a);
        if (!rc)
            *out = sl_jx_json(json_boolean(res));
        return rc;
    }
    case E_COND:
        if (eval(r, e->cond, f, &a) < 0)
            return -1;
        {
            bool t = sl_jx_truthy(&a);
            sl_jx_free(&a);
            if (t)
                return eval(r, e->a, f, out);
            if (e->b)
                return eval(r, e->b, f, out);
            *out = sl_jx_undef(NULL);
            return 0;
        }
    case E_FILTER: return eval_filter(r, e, f, NULL, out);
    case E_TEST: {
        if (!e->fn)
            return sl_jx_err(r, e, SL_EINVAL, "no test named '%s'", e->s);
        if (eval(r, e->a, f, &a) < 0)
            return -1;
        jargs ar;
        bool res = false;
        rc = eval_args(r, e, f, &ar);
        if (!rc) {
            const jtest *t = e->fn;
            rc = t->fn(r, e, &a, &ar, &res);
        }
        args_release(&ar);
        sl_jx_free(&a);
        if (!rc)
            *out = sl_jx_json(json_boolean(res != e->neg));
        return rc;
    }
    case E_CALL:
        return eval_call(r, e, f, NULL, out);
    }
    return sl_jx_err(r, e, SL_EINVAL, "cannot evaluate this expression");
}

/* ---- statements ---- */

static int assign_targets(jrender *r, const jnode *s, frame *f, const jv *v)
{
    if (s->nnames == 1 && !s->op) {
        frame_set(f, s->names[0], sl_jx_copy(v));
        return 0;
    }
    json_t *items;
    if (sl_jx_items(r, s, v, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    if (n != (size_t)s->nnames) {
        jdecref(items);
        return sl_jx_err(r, s, SL_EINVAL, "%s values to unpack (expected %d, got %zu)",
                         n < (size_t)s->nnames ? "not enough" : "too many", s->nnames, n);
    }
    for (int i = 0; i < s->nnames; i++)
        frame_set(f, s->names[i], sl_jx_json(json_incref(json_array_get(items, (size_t)i))));
    jdecref(items);
    return 0;
}

static int run_loop(jrender *r, const jnode *s, frame *f, const jv *it, int depth, sl_buf *out)
{
    json_t *items;
    int rc = sl_jx_items(r, s->a, it, &items);
    if (rc < 0)
        return -1;
    /* When the template changes lists in place, a loop walks the list as it
     * is at each step, as Python's does: items appended while looping are
     * visited (the worklist idiom), removed ones are not. */
    bool live = r->t->mutates && !s->cond;
    frame lf = {.parent = f};
    if (s->cond) {
        json_t *keep = json_array();
        for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
            jv x = sl_jx_json(json_incref(json_array_get(items, i))), c;
            if (++r->iters > r->lim.max_loop_iterations)
                rc = sl_jx_err(r, s, SL_ELIMIT, "loops ran more than %ld iterations (the loop cap)",
                               r->lim.max_loop_iterations);
            else
                rc = jwork(r, s, 1);
            if (!rc)
                rc = assign_targets(r, s, &lf, &x);
            if (!rc)
                rc = eval(r, s->cond, &lf, &c);
            if (!rc && sl_jx_truthy(&c))
                json_array_append(keep, x.j);
            if (!rc)
                sl_jx_free(&c);
            sl_jx_free(&x);
        }
        jdecref(items);
        items = keep;
    }
    loopst ls = {.items = items, .n = json_array_size(items), .node = s, .outer = f, .depth = depth};
    for (size_t i = 0; i < (live ? (ls.n = json_array_size(items)) : ls.n) && !rc; i++) {
        ls.i = i;
        if (++r->iters > r->lim.max_loop_iterations) {
            rc = sl_jx_err(r, s, SL_ELIMIT, "loops ran more than %ld iterations (the loop cap)",
                           r->lim.max_loop_iterations);
            break;
        }
        if ((rc = jwork(r, s, 1)) < 0)
            break;
        jv x = {.k = K_JSON, .j = json_array_get(items, i)};
        rc = assign_targets(r, s, &lf, &x);
        if (!rc) {
            jv lv = {.k = K_LOOP, .p = &ls};
            frame_set(&lf, "loop", lv);
            rc = render_body(r, s->b, &lf, out);
        }
    }
    if (!rc && ls.n == 0 && s->x)
        rc = render_body(r, s->x, f, out);
    frame_release(&lf);
    jdecref(ls.changed);
    jdecref(items);
    return rc;
}

static int run_for(jrender *r, const jnode *s, frame *f, sl_buf *out)
{
    jv it;
    if (eval(r, s->a, f, &it) < 0)
        return -1;
    int rc = run_loop(r, s, f, &it, 0, out);
    sl_jx_free(&it);
    return rc;
}

static int run_stmt(jrender *r, const jnode *s, frame *f, sl_buf *out)
{
    STACK_CHECK(r, s);
    jv v;
    int rc = 0;
    switch (s->type) {
    case N_TEXT: return emit(r, out, s->s, s->slen);
    case N_OUT:
        if (eval(r, s->a, f, &v) < 0)
            return -1;
        if (v.k == K_JSON && json_is_string(v.j)) {
            rc = emit(r, out, json_string_value(v.j), json_string_length(v.j));
        } else if (v.k == K_JSON && json_is_integer(v.j)) {
            char num[24];
            rc = emit(r, out, num, sl_jx_fmt_i64((long long)json_integer_value(v.j), num));
        } else if (v.k != K_UNDEF) {
            STACKBUF(b, r->lim.max_output_chars * 4 + 16);
            sl_jx_str(&v, &b);
            rc = b.toobig ? cap_err(r) : emit(r, out, b.data ? b.data : "", b.len);
            sl_buf_release(&b);
        }
        sl_jx_free(&v);
        return rc;
    case N_IF:
        for (; s; s = s->x) {
            if (s->type != N_IF)
                return render_body(r, s, f, out);
            if (eval(r, s->a, f, &v) < 0)
                return -1;
            bool t = sl_jx_truthy(&v);
            sl_jx_free(&v);
            if (t)
                return render_body(r, s->b, f, out);
        }
        return 0;
    case N_FOR:
        return run_for(r, s, f, out);
    case N_SET:
        if (eval(r, s->a, f, &v) < 0)
            return -1;
        if (s->neg) {
            const jv *ns = frame_get(f, s->names[0]);
            if (!ns || ns->k != K_NS)
                rc = sl_jx_err(r, s, SL_EINVAL,
                               "cannot assign attribute '%s' on '%s': it is not a namespace()",
                               s->s2, s->names[0]);
            else if (r->ns_escaped && (rc = sl_jx_check_insert(r, s, ns->j, &v)) < 0)
                ;
            else
                sl_jx_obj_set(ns->j, s->s2, sl_jx_to_json(&v));
        } else {
            rc = assign_targets(r, s, f, &v);
        }
        sl_jx_free(&v);
        return rc;
    case N_SETBLOCK:
    case N_FILTERBLOCK: {
        sl_buf b;
        scratch_init(r, &b);
        size_t held;
        sl_buf *outer = capture_begin(r, &b, &held);
        rc = render_body(r, s->b, f, &b);
        capture_end(r, outer, held);
        if (!rc) {
            jv in = sl_jx_json(json_stringn_nocheck(b.data ? b.data : "", b.len));
            if (s->x) {
                rc = eval_filter(r, s->x, f, &in, &v);
                sl_jx_free(&in);
            } else {
                v = in;
            }
            if (!rc && s->type == N_SETBLOCK) {
                frame_set(f, s->names[0], v);
            } else if (!rc) {
                sl_buf t;
                scratch_init(r, &t);
                sl_jx_str(&v, &t);
                rc = emit(r, out, t.data ? t.data : "", t.len);
                sl_buf_release(&t);
                sl_jx_free(&v);
            }
        }
        sl_buf_release(&b);
        return rc;
    }
    case N_MACRO: {
        jv m = {.k = K_MACRO, .p = s, .name = s->s};
        frame_set(f, s->s, m);
        return 0;
    }
    case N_CALLBLOCK: {
        jv caller = {.k = K_CALLER, .p = s, .p2 = f, .name = "caller"};
        if (eval_call(r, s->a, f, &caller, &v) < 0)
            return -1;
        sl_buf t;
        scratch_init(r, &t);
        sl_jx_str(&v, &t);
        rc = emit(r, out, t.data ? t.data : "", t.len);
        sl_buf_release(&t);
        sl_jx_free(&v);
        return rc;
    }
    case N_WITH: {
        frame wf = {.parent = f};
        for (int i = 0; i < s->nkw && !rc; i++) {
            rc = eval(r, s->kwv[i], &wf, &v);
            if (!rc)
                frame_set(&wf, s->kwn[i], v);
        }
        if (!rc)
            rc = render_body(r, s->b, &wf, out);
        frame_release(&wf);
        return rc;
    }
    case N_BODY:
        return render_body(r, s, f, out);
    }
    return sl_jx_err(r, s, SL_EINVAL, "cannot run this statement");
}

static int render_body(jrender *r, const jnode *body, frame *f, sl_buf *out)
{
    if (!body)
        return 0;
    for (int i = 0; i < body->nv; i++) {
        if (run_stmt(r, body->v[i], f, out) < 0)
            return -1;
        if (sl_jx_too_deep)
            return sl_jx_deep_err(r, body->v[i]);
        if (jwork(r, body->v[i], 0) < 0) /* a check only: what ran charged its work */
            return -1;
    }
    return 0;
}

void sl_jinja_limits_default(sl_jinja_limits *lim)
{
    lim->max_output_chars = SL_JINJA_MAX_OUTPUT_CHARS;
    lim->max_loop_iterations = SL_JINJA_MAX_LOOP_ITERATIONS;
    lim->max_depth = SL_JINJA_MAX_DEPTH;
    lim->limit_name = NULL;
    lim->max_bytes = SL_JINJA_MAX_BYTES;
    lim->bytes_limit_name = NULL;
    lim->interrupt = NULL;
    lim->interrupt_ud = NULL;
}

int sl_jinja_render(const sl_jinja *t, const sl_value *ctx, const sl_jinja_limits *lim,
                    sl_buf *out, sl_err *err)
{
    jrender r = {.t = t, .ctx = json_is_object(ctx) ? ctx : NULL, .err = err};
    if (lim)
        r.lim = *lim;
    else
        sl_jinja_limits_default(&r.lim);
    if (!r.lim.max_output_chars)
        r.lim.max_output_chars = SL_JINJA_MAX_OUTPUT_CHARS;
    if (!r.lim.max_loop_iterations)
        r.lim.max_loop_iterations = SL_JINJA_MAX_LOOP_ITERATIONS;
    if (!r.lim.max_depth)
        r.lim.max_depth = SL_JINJA_MAX_DEPTH;
    if (!r.lim.max_bytes)
        r.lim.max_bytes = SL_JINJA_MAX_BYTES;
    frame root = {0};
    r.root = &root;
    r.walk = 10000000;
    r.work = JINJA_POLL_UNITS;
    r.cnt_buf = out;
    sl_jx_too_deep = false;
    if (t->mutates && r.ctx) {
        /* list.append() and friends change values in place: never the
         * caller's (Dify's sandbox gets a copy of the inputs too) */
        r.own_ctx = json_deep_copy(r.ctx);
        r.ctx = r.own_ctx;
    }
    /* counting starts after the copy: the render did not make the context */
    jrender *prev = sl_jx_cur_render;
    sl_jx_cur_render = &r;
    stack_floor_init();
    size_t start = out->len;
    int rc = render_body(&r, t->root, &root, out);
    frame_release(&root);
    sl_jx_too_deep = false;
    sl_jx_cur_render = prev;
    for (size_t i = 0; i < r.atup; i++)
        jdecref(r.tup[i]);
    free(r.tup);
    free(r.tupk);
    while (r.objs) {
        jobj *o = r.objs;
        r.objs = o->next;
        jdecref(o->items);
        free(o);
    }
    jdecref(r.own_ctx);
    (void)start;
    return rc;
}
