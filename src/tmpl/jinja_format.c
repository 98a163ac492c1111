/*
 * jinja_format — values as Python prints them: str(), repr(), and the
 * pprint and tojson forms; and Python's formatting, "fmt" % args and
 * str.format (one format spec serves both).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/math.h"
#include "tmpl/jinja_ev.h"

/* ---- str(), repr(), tojson and pprint ---- */

/* o[key] for a key read from o itself; never NULL (the engine refuses
 * keys with NUL bytes, which C-string lookups would not find) */
static const json_t *obj_val(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v ? v : json_null();
}

/* str.isprintable() for a code point above U+00A0: false for separators
 * (Zs, Zl, Zp), format characters (Cf) and private use (Co); unassigned
 * code points (Cn) are not known here and print as they are */
static bool py_printable(unsigned long c)
{
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
        (c >= 0x205f && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) || c == 0x3000 ||
        (c >= 0x600 && c <= 0x605) || c == 0x61c || c == 0x6dd || c == 0x70f || c == 0x8e2 ||
        c == 0x180e || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || c == 0x110bd ||
        c == 0x110cd || (c >= 0x13430 && c <= 0x1343f) || (c >= 0x1bca0 && c <= 0x1bca3) ||
        (c >= 0x1d173 && c <= 0x1d17a) || c == 0xe0001 || (c >= 0xe0020 && c <= 0xe007f) ||
        (c >= 0xe000 && c <= 0xf8ff) || c >= 0xf0000 || (c >= 0xd800 && c <= 0xdfff))
        return false;
    return true;
}

static void repr_str(const char *s, size_t n, sl_buf *out)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    sl_buf_addc(out, q);
    for (size_t i = 0; i < n;) {
        size_t l;
        unsigned long c = utf8_dec(s + i, n - i, &l);
        if (c == (unsigned long)q || c == '\\')
            sl_buf_addf(out, "\\%c", (char)c);
        else if (c == '\n')
            sl_buf_adds(out, "\\n");
        else if (c == '\r')
            sl_buf_adds(out, "\\r");
        else if (c == '\t')
            sl_buf_adds(out, "\\t");
        else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0xa0) || c == 0xad)
            sl_buf_addf(out, "\\x%02lx", c);
        else if (!py_printable(c))
            sl_buf_addf(out, c < 0x10000 ? "\\u%04lx" : "\\U%08lx", c);
        else
            sl_buf_add(out, s + i, l);
        i += l;
    }
    sl_buf_addc(out, q);
}

static void py_num(const json_t *j, sl_buf *out)
{
    if (json_is_integer(j)) {
        char d[24];
        sl_buf_add(out, d, sl_jx_fmt_i64((long long)json_integer_value(j), d));
    } else {
        char d[32];
        sl_fmt_double(json_real_value(j), d);
        sl_buf_adds(out, d);
    }
}

static int key_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* sorted: dict keys in order (pprint) */
static void repr_rec(const json_t *j, sl_buf *out, int depth, bool sorted)
{
    if (depth > JINJA_MAX_NEST) {
        sl_jx_too_deep = true;
        out->toobig = true;
        return;
    }
    switch (json_typeof(j)) {
    case JSON_STRING: repr_str(json_string_value(j), json_string_length(j), out); return;
    case JSON_ARRAY: {
        int kind = sl_jx_tuple_kind(j);
        bool tup = kind == TUP_PLAIN || kind == TUP_GROUP;
        size_t n = json_array_size(j);
        if (kind >= VIEW_KEYS)
            sl_buf_adds(out, kind == VIEW_KEYS ? "dict_keys(" : kind == VIEW_VALUES ? "dict_values("
                                                                                    : "dict_items(");
        sl_buf_addc(out, tup ? '(' : '[');
        for (size_t i = 0; i < n && !out->toobig; i++) {
            if (i)
                sl_buf_adds(out, ", ");
            repr_rec(json_array_get(j, i), out, depth + 1, sorted);
        }
        if (tup && n == 1)
            sl_buf_addc(out, ',');
        sl_buf_addc(out, tup ? ')' : ']');
        if (kind >= VIEW_KEYS)
            sl_buf_addc(out, ')');
        return;
    }
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        bool first = true;
        sl_buf_addc(out, '{');
        if (sorted) {
            size_t n = json_object_size(j), m = 0;
            const char **keys = sl_xmalloc((n ? n : 1) * sizeof *keys);
            json_object_foreach((json_t *)j, k, x) keys[m++] = k;
            qsort(keys, m, sizeof *keys, key_cmp);
            for (size_t i = 0; i < m && !out->toobig; i++) {
                if (i)
                    sl_buf_adds(out, ", ");
                repr_str(keys[i], strlen(keys[i]), out);
                sl_buf_adds(out, ": ");
                repr_rec(obj_val(j, keys[i]), out, depth + 1, sorted);
            }
            free(keys);
            sl_buf_addc(out, '}');
            return;
        }
        json_object_foreach((json_t *)j, k, x) {
            if (out->toobig)
                break;
            if (!first)
                sl_buf_adds(out, ", ");
            first = false;
            repr_str(k, strlen(k), out);
            sl_buf_adds(out, ": ");
            repr_rec(x, out, depth + 1, sorted);
        }
        sl_buf_addc(out, '}');
        return;
    }
    default: sl_jx_py_str(j, out);
    }
}

static void py_repr(const json_t *j, sl_buf *out)
{
    repr_rec(j, out, 0, false);
}

void sl_jx_py_str(const json_t *j, sl_buf *out)
{
    switch (json_typeof(j)) {
    case JSON_STRING: sl_buf_add(out, json_string_value(j), json_string_length(j)); return;
    case JSON_INTEGER:
    case JSON_REAL: py_num(j, out); return;
    case JSON_TRUE: sl_buf_adds(out, "True"); return;
    case JSON_FALSE: sl_buf_adds(out, "False"); return;
    case JSON_NULL: sl_buf_adds(out, "None"); return;
    default: py_repr(j, out);
    }
}

void sl_jinja_py_str(const sl_value *v, sl_buf *out)
{
    sl_jx_py_str(v, out);
}

void sl_jx_str(const jv *v, sl_buf *out)
{
    switch (v->k) {
    case K_JSON: sl_jx_py_str(v->j, out); return;
    case K_NS:
        sl_buf_adds(out, "<Namespace ");
        py_repr(v->j, out);
        sl_buf_adds(out, ">");
        return;
    case K_MACRO: sl_buf_addf(out, "<Macro '%s'>", v->name ? v->name : ""); return;
    case K_CALLER: sl_buf_adds(out, "<Macro 'caller'>"); return;
    case K_LOOP: sl_buf_adds(out, "<LoopContext>"); return;
    case K_BUILTIN:
        if (v->owner) {
            sl_buf_addf(out, "<built-in method %s of %s>", v->name, v->owner);
            return;
        }
        sl_buf_addf(out, "<class '%s%s'>",
                    !strcmp(v->name, "range") || !strcmp(v->name, "dict") ? "" : "jinja2.utils.",
                    !strcmp(v->name, "namespace") ? "Namespace"
                    : !strcmp(v->name, "cycler")  ? "Cycler"
                    : !strcmp(v->name, "joiner")  ? "Joiner" : v->name);
        return;
    case K_CYCLER: sl_buf_adds(out, "<jinja2.utils.Cycler object>"); return;
    case K_JOINER: sl_buf_adds(out, "<jinja2.utils.Joiner object>"); return;
    default: return;
    }
}

/* json.dumps(sort_keys=True) then Jinja2's HTML-safe escapes */
static void tojson_rec(const json_t *j, int indent, int level, sl_buf *out)
{
    if (level > JINJA_MAX_NEST) {
        sl_jx_too_deep = true;
        out->toobig = true;
        return;
    }
    switch (json_typeof(j)) {
    case JSON_STRING: {
        const char *s = json_string_value(j);
        size_t n = json_string_length(j);
        sl_buf_addc(out, '"');
        for (size_t i = 0; i < n;) {
            size_t l;
            unsigned long c = utf8_dec(s + i, n - i, &l);
            i += l;
            if (c == '"')
                sl_buf_adds(out, "\\\"");
            else if (c == '\\')
                sl_buf_adds(out, "\\\\");
            else if (c == '\n')
                sl_buf_adds(out, "\\n");
            else if (c == '\r')
                sl_buf_adds(out, "\\r");
            else if (c == '\t')
                sl_buf_adds(out, "\\t");
            else if (c == '\b')
                sl_buf_adds(out, "\\b");
            else if (c == '\f')
                sl_buf_adds(out, "\\f");
            else if (c == '<' || c == '>' || c == '&' || c == '\'' || c < 0x20 || c > 0x7e) {
                if (c >= 0x10000) {
                    c -= 0x10000;
                    sl_buf_addf(out, "\\u%04lx\\u%04lx", 0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF));
                } else {
                    sl_buf_addf(out, "\\u%04lx", c);
                }
            } else {
                sl_buf_addc(out, (char)c);
            }
        }
        sl_buf_addc(out, '"');
        return;
    }
    case JSON_INTEGER:
    case JSON_REAL: py_num(j, out); return;
    case JSON_TRUE: sl_buf_adds(out, "true"); return;
    case JSON_FALSE: sl_buf_adds(out, "false"); return;
    case JSON_NULL: sl_buf_adds(out, "null"); return;
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        if (!n) {
            sl_buf_adds(out, "[]");
            return;
        }
        sl_buf_addc(out, '[');
        for (size_t i = 0; i < n && !out->toobig; i++) {
            if (i)
                sl_buf_adds(out, indent >= 0 ? "," : ", ");
            if (indent >= 0)
                sl_buf_addf(out, "\n%*s", indent * (level + 1), "");
            tojson_rec(json_array_get(j, i), indent, level + 1, out);
        }
        if (indent >= 0)
            sl_buf_addf(out, "\n%*s", indent * level, "");
        sl_buf_addc(out, ']');
        return;
    }
    case JSON_OBJECT: {
        size_t n = json_object_size(j);
        if (!n) {
            sl_buf_adds(out, "{}");
            return;
        }
        const char **keys = sl_xmalloc(n * sizeof *keys);
        size_t k = 0;
        const char *key;
        json_t *x;
        json_object_foreach((json_t *)j, key, x) keys[k++] = key;
        qsort(keys, k, sizeof *keys, key_cmp); /* an insertion sort was quadratic */
        sl_buf_addc(out, '{');
        for (size_t i = 0; i < k && !out->toobig; i++) {
            if (i)
                sl_buf_adds(out, indent >= 0 ? "," : ", ");
            if (indent >= 0)
                sl_buf_addf(out, "\n%*s", indent * (level + 1), "");
            json_t *ks = json_string_nocheck(keys[i]);
            tojson_rec(ks, indent, level + 1, out);
            jdecref(ks);
            sl_buf_adds(out, ": ");
            tojson_rec(obj_val(j, keys[i]), indent, level + 1, out);
        }
        if (indent >= 0)
            sl_buf_addf(out, "\n%*s", indent * level, "");
        sl_buf_addc(out, '}');
        free(keys);
        return;
    }
    }
}

/* pprint: Python's pprint.pformat (width 80, dict keys sorted) */
static void pformat(jrender *r, const json_t *j, size_t indent, sl_buf *out, int depth)
{
    if (out->toobig)
        return;
    STACKBUF(one, 0);
    repr_rec(j, &one, depth, true);
    /* each level prints its value whole first: charged, as deep values
     * print many times */
    if (jwork(r, NULL, (long)(one.len >> 6)) < 0) {
        sl_buf_release(&one);
        out->toobig = true;
        return;
    }
    bool dict = json_is_object(j), list = json_is_array(j);
    if (dict && json_object_size(j)) {
        size_t n = json_object_size(j), k = 0;
        const char **keys = sl_xmalloc(n * sizeof *keys);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v) keys[k++] = key;
        qsort(keys, k, sizeof *keys, key_cmp); /* an insertion sort was quadratic */
        if (indent + one.len <= 80 || depth > JINJA_MAX_NEST) {
            sl_buf_add(out, one.data, one.len);
        } else {
            sl_buf_addc(out, '{');
            for (size_t x = 0; x < k; x++) {
                if (x) {
                    sl_buf_adds(out, ",\n");
                    for (size_t s2 = 0; s2 <= indent; s2++)
                        sl_buf_addc(out, ' ');
                }
                json_t *ks = json_string_nocheck(keys[x]);
                size_t before = out->len;
                py_repr(ks, out);
                jdecref(ks);
                sl_buf_adds(out, ": ");
                pformat(r, obj_val(j, keys[x]), indent + 1 + (out->len - before), out,
                        depth + 1);
            }
            sl_buf_addc(out, '}');
        }
        free(keys);
        sl_buf_release(&one);
        return;
    }
    if (!list || indent + one.len <= 80 || !json_array_size(j) || depth > JINJA_MAX_NEST) {
        sl_buf_add(out, one.data ? one.data : "", one.len);
        sl_buf_release(&one);
        return;
    }
    int kind = sl_jx_tuple_kind(j);
    bool tup = kind == TUP_PLAIN || kind == TUP_GROUP;
    sl_buf_addc(out, tup ? '(' : '[');
    for (size_t i = 0; i < json_array_size(j); i++) {
        if (i) {
            sl_buf_adds(out, ",\n");
            for (size_t s2 = 0; s2 <= indent; s2++)
                sl_buf_addc(out, ' ');
        }
        pformat(r, json_array_get(j, i), indent + 1, out, depth + 1);
    }
    if (tup && json_array_size(j) == 1)
        sl_buf_addc(out, ',');
    sl_buf_addc(out, tup ? ')' : ']');
    sl_buf_release(&one);
}

void sl_jx_tojson(const json_t *j, int indent, sl_buf *out)
{
    tojson_rec(j, indent, 0, out);
}

void sl_jx_pformat(jrender *r, const json_t *j, sl_buf *out)
{
    pformat(r, j, 0, out, 0);
}

/* ---- Python formatting: one spec, used by % and str.format ---- */

typedef struct {
    char fill, align, sign, type;
    bool alt, zero, comma;
    int width, prec;
} fspec;

/* a >= 0 with p decimals, as printf's %.*f would round it, when that is
 * certain from binary arithmetic (the scaled value is far from a .5 tie);
 * false: let printf do it. */
static bool fixed_fast(double a, int p, sl_buf *b)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (p < 0 || p > 9 || !(a >= 0))
        return false;
    double sc = a * pow10[p];
    if (!(sc < 4e9))
        return false;
    double fl = sl_floor(sc), fr = sc - fl;
    if (fabs(fr - 0.5) < 1e-4)
        return false;
    unsigned long long v = (unsigned long long)fl + (fr > 0.5);
    char dg[24];
    size_t n = sl_jx_fmt_u64(v, dg);
    char t[40];
    size_t k = 0;
    if (n <= (size_t)p) {
        t[k++] = '0';
        if (p) {
            t[k++] = '.';
            for (size_t i = n; i < (size_t)p; i++)
                t[k++] = '0';
            memcpy(t + k, dg, n);
            k += n;
        }
    } else {
        memcpy(t, dg, n - (size_t)p);
        k = n - (size_t)p;
        if (p) {
            t[k++] = '.';
            memcpy(t + k, dg + n - (size_t)p, (size_t)p);
            k += (size_t)p;
        }
    }
    sl_buf_add(b, t, k);
    return true;
}

static int fmt_value(jrender *r, const jnode *e, const jv *v, fspec *f, sl_buf *out)
{
    STACKBUF(b, 0);
    char s_mem[256];
    long long i;
    double d;
    int t = sl_jx_num_of(v, &i, &d);
    char ty = f->type;
    bool numeric = false;
    if (ty && !strchr("sdifFeEgGxXoc%r", ty)) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_EINVAL, "unknown format code '%c' for a value of type '%s'",
                         ty > 32 && ty < 127 ? ty : '?', sl_jx_py_type(v));
    }
    if (ty == 's' || ty == 0 || ty == 'r') {
        if (ty == 'r' && v->k == K_JSON)
            py_repr(v->j, &b);
        else if (ty == 0 && t == 2 && f->prec >= 0) {
            sl_buf_addf(&b, "%.*g", f->prec, d);
            numeric = true;
        } else
            sl_jx_str(v, &b);
        if (f->prec >= 0 && ty != 0) {
            size_t cut = sl_jx_uoff(b.data ? b.data : "", b.len, (size_t)f->prec);
            b.len = cut;
        }
        numeric = numeric || (ty == 0 && t && !(v->k == K_JSON && json_is_boolean(v->j)));
    } else {
        if (!t) {
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "format %%%c needs a number, not '%s'", ty,
                             sl_jx_py_type(v));
        }
        numeric = true;
        bool neg = false;
        if (strchr("dixXoc", ty)) {
            if (t == 2) {
                if (ty != 'd' && ty != 'i') {
                    sl_buf_release(&b);
                    return sl_jx_err(r, e, SL_EINVAL, "format %%%c needs an integer", ty);
                }
                i = d2ll(d);
            }
            if (ty == 'c') {
                sl_jx_utf8_enc((unsigned long)i, &b);
                numeric = false;
            } else {
                neg = i < 0;
                unsigned long long u = neg ? 0ULL - (unsigned long long)i : (unsigned long long)i;
                if (ty == 'x' || ty == 'X' || ty == 'o') {
                    if (f->alt)
                        sl_buf_adds(&b, ty == 'o' ? "0o" : ty == 'x' ? "0x" : "0X");
                    sl_buf_addf(&b, ty == 'x' ? "%llx" : ty == 'X' ? "%llX" : "%llo", u);
                } else if (f->comma) {
                    char dg[32];
                    int n = (int)sl_jx_fmt_u64(u, dg);
                    for (int k = 0; k < n; k++) {
                        if (k && (n - k) % 3 == 0)
                            sl_buf_addc(&b, ',');
                        sl_buf_addc(&b, dg[k]);
                    }
                } else {
                    char dg[24];
                    sl_buf_add(&b, dg, sl_jx_fmt_u64(u, dg));
                }
            }
        } else {
            neg = signbit(d);
            double a = fabs(d);
            int p = f->prec < 0 ? 6 : f->prec;
            char spec[16];
            char c = ty == 'F' ? 'f' : ty;
            if (c == '%') {
                a *= 100;
                c = 'f';
            }
            if (c != 'f' || f->alt || !fixed_fast(a, p, &b)) {
                snprintf(spec, sizeof spec, "%%%s.*%c", f->alt ? "#" : "", c);
                sl_buf_addf(&b, spec, p, a);
            }
            if (f->comma) {
                sl_buf g; /* outlives this block as b: on the heap */
                sl_buf_init(&g, 0);
                size_t ip = 0;
                while (ip < b.len && isdigit((unsigned char)b.data[ip]))
                    ip++;
                for (size_t k = 0; k < ip; k++) {
                    if (k && (ip - k) % 3 == 0)
                        sl_buf_addc(&g, ',');
                    sl_buf_addc(&g, b.data[k]);
                }
                sl_buf_add(&g, b.data + ip, b.len - ip);
                sl_buf_release(&b);
                b = g;
            }
            if (ty == '%')
                sl_buf_addc(&b, '%');
        }
        if (numeric) {
            sl_buf s;  /* becomes b: its memory is this function's */
            sl_buf_init_on(&s, 0, s_mem, sizeof s_mem);
            if (neg)
                sl_buf_addc(&s, '-');
            else if (f->sign == '+' || f->sign == ' ')
                sl_buf_addc(&s, f->sign);
            /* zero padding goes between sign and digits */
            size_t dl = sl_jx_ulen(b.data ? b.data : "", b.len);
            if (f->zero && f->width > 0 && (size_t)f->width > dl + s.len) {
                size_t padn = (size_t)f->width - dl - s.len;
                for (size_t k = 0; k < padn; k++)
                    sl_buf_addc(&s, '0');
            }
            sl_buf_add(&s, b.data ? b.data : "", b.len);
            sl_buf_release(&b);
            b = s;
        }
    }
    size_t l = sl_jx_ulen(b.data ? b.data : "", b.len);
    char align = f->align ? f->align : numeric ? '>' : '<';
    size_t pad = f->width > 0 && (size_t)f->width > l ? (size_t)f->width - l : 0;
    if ((size_t)f->width > 100000)
        pad = 0;
    size_t left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
    char fill = f->fill ? f->fill : ' ';
    for (size_t k = 0; k < left; k++)
        sl_buf_addc(out, fill);
    sl_buf_add(out, b.data ? b.data : "", b.len);
    for (size_t k = left; k < pad; k++)
        sl_buf_addc(out, fill);
    sl_buf_release(&b);
    return 0;
}

/* "fmt" % args: args is a tuple/list, a dict (for %(name)s) or one value */
int sl_jx_py_percent(jrender *r, const jnode *e, const char *fmt, const jv *args, jv *out)
{
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    size_t ai = 0;
    bool multi = args->k == K_JSON && json_is_array(args->j);
    bool single_used = false;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            sl_buf_addc(&b, *p);
            continue;
        }
        p++;
        if (*p == '%') {
            sl_buf_addc(&b, '%');
            continue;
        }
        fspec f = {.prec = -1};
        jv item = {0};
        bool have = false;
        if (*p == '(') {
            const char *q = strchr(p, ')');
            if (!q || args->k != K_JSON || !json_is_object(args->j)) {
                sl_buf_release(&b);
                return sl_jx_err(r, e, SL_EINVAL, "format requires a mapping");
            }
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(q - p - 1), p + 1);
            json_t *x = json_object_get(args->j, key);
            if (!x) {
                sl_buf_release(&b);
                return sl_jx_err(r, e, SL_EINVAL, "KeyError: '%s'", key);
            }
            item = sl_jx_json(json_incref(x));
            have = true;
            p = q + 1;
        }
        for (;; p++) {
            if (*p == '-')
                f.align = '<';
            else if (*p == '+')
                f.sign = '+';
            else if (*p == ' ')
                f.sign = f.sign ? f.sign : ' ';
            else if (*p == '0')
                f.zero = true;
            else if (*p == '#')
                f.alt = true;
            else
                break;
        }
        while (isdigit((unsigned char)*p) && f.width < 100000)
            f.width = f.width * 10 + (*p++ - '0');
        if (*p == '.') {
            p++;
            f.prec = 0;
            while (isdigit((unsigned char)*p) && f.prec < 1000)
                f.prec = f.prec * 10 + (*p++ - '0');
        }
        while (*p == 'l' || *p == 'h' || *p == 'L')
            p++;
        if (!*p || !strchr("sdiuxXofFeEgGrca", *p)) {
            sl_jx_free(&item);
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "unsupported format character '%c'", *p ? *p : '?');
        }
        f.type = *p == 'u' ? 'd' : *p == 'a' ? 'r' : *p;
        if (f.align == '<')
            f.zero = false;
        if (f.zero && f.type == 's')
            f.zero = false;
        if (f.type == 's' || f.type == 'r')
            f.align = f.align ? f.align : '>';
        if (!have) {
            if (multi) {
                if (ai >= json_array_size(args->j)) {
                    sl_buf_release(&b);
                    return sl_jx_err(r, e, SL_EINVAL, "not enough arguments for format string");
                }
                item = sl_jx_json(json_incref(json_array_get(args->j, ai++)));
            } else {
                if (single_used) {
                    sl_buf_release(&b);
                    return sl_jx_err(r, e, SL_EINVAL, "not enough arguments for format string");
                }
                single_used = true;
                item = sl_jx_copy(args);
            }
        }
        int rc = fmt_value(r, e, &item, &f, &b);
        sl_jx_free(&item);
        if (rc < 0) {
            sl_buf_release(&b);
            return -1;
        }
    }
    if (multi && ai < json_array_size(args->j)) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_EINVAL, "not all arguments converted during string formatting");
    }
    *out = jbuf(&b);
    return 0;
}

/* str.format */
int sl_jx_py_format(jrender *r, const jnode *e, const char *s, jargs *a, jv *out)
{
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    int auto_i = 0;
    for (const char *p = s; *p; p++) {
        if ((*p == '{' && p[1] == '{') || (*p == '}' && p[1] == '}')) {
            sl_buf_addc(&b, *p++);
            continue;
        }
        if (*p != '{') {
            sl_buf_addc(&b, *p);
            continue;
        }
        const char *q = strchr(p, '}');
        if (!q) {
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "single '{' encountered in format string");
        }
        char field[256];
        snprintf(field, sizeof field, "%.*s", (int)(q - p - 1), p + 1);
        char *spec = strchr(field, ':');
        if (spec)
            *spec++ = 0;
        char *conv = strchr(field, '!');
        if (conv)
            *conv++ = 0;
        jv *v = NULL;
        if (!field[0])
            v = sl_jx_arg(a, auto_i++, NULL);
        else if (isdigit((unsigned char)field[0]))
            v = sl_jx_arg(a, atoi(field), NULL);
        else
            v = sl_jx_arg(a, -1, field);
        if (!v) {
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "format: no argument for '{%s}'", field);
        }
        fspec f = {.prec = -1};
        if (conv && *conv == 'r')
            f.type = 'r';
        const char *sp = spec ? spec : "";
        if (sp[0] && sp[1] && strchr("<>^=", sp[1])) {
            f.fill = sp[0];
            f.align = sp[1];
            sp += 2;
        } else if (sp[0] && strchr("<>^=", sp[0])) {
            f.align = *sp++;
        }
        if (f.align == '=')
            f.align = '>';
        if (*sp == '+' || *sp == '-' || *sp == ' ')
            f.sign = *sp++;
        if (*sp == '#') {
            f.alt = true;
            sp++;
        }
        if (*sp == '0') {
            f.zero = true;
            sp++;
        }
        while (isdigit((unsigned char)*sp) && f.width < 100000)
            f.width = f.width * 10 + (*sp++ - '0');
        if (*sp == ',') {
            f.comma = true;
            sp++;
        }
        if (*sp == '.') {
            sp++;
            f.prec = 0;
            while (isdigit((unsigned char)*sp) && f.prec < 1000)
                f.prec = f.prec * 10 + (*sp++ - '0');
        }
        if (*sp)
            f.type = *sp == 'n' ? 'd' : *sp;
        if (fmt_value(r, e, v, &f, &b) < 0) {
            sl_buf_release(&b);
            return -1;
        }
        p = q;
    }
    *out = jbuf(&b);
    return 0;
}
