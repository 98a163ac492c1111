/*
 * jinja_filters — Jinja2's built-in filters and tests, the Python string,
 * list and dict methods templates call, and Python's str()/repr()/%
 * formatting of values.  Semantics are Jinja2 3.1's documented ones.
 */
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wctype.h>

#include <errno.h>

#include "tmpl/jinja_ev.h"

static long long d2ll(double d);

/* ---- text helpers ---- */

static locale_t utf8_loc;
static pthread_once_t loc_once = PTHREAD_ONCE_INIT;
static void loc_init(void)
{
    utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static unsigned long dec(const char *s, size_t n, size_t *len)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned long c = p[0];
    size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (l > n || c < 0xC0) {
        *len = 1;
        return c;
    }
    c &= l == 2 ? 0x1F : l == 3 ? 0x0F : 0x07;
    for (size_t i = 1; i < l; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *len = 1;
            return p[0];
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *len = l;
    return c;
}

static void enc(unsigned long cp, sl_buf *b)
{
    char t[4];
    int n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    sl_buf_add(b, t, (size_t)n);
}

static unsigned long cp_case(unsigned long c, int upper)
{
    if (c == 0xDF && upper == 1)
        return 0x1E9E0053; /* marker: "SS" (enc_case writes it) */
    if (c < 0x80)
        return upper ? (unsigned long)toupper((int)c) : (unsigned long)tolower((int)c);
    pthread_once(&loc_once, loc_init);
    if (!utf8_loc)
        return c;
    return upper ? (unsigned long)towupper_l((wint_t)c, utf8_loc)
                 : (unsigned long)towlower_l((wint_t)c, utf8_loc);
}

static bool cp_alpha(unsigned long c)
{
    if (c < 0x80)
        return isalpha((int)c);
    pthread_once(&loc_once, loc_init);
    return utf8_loc ? iswalpha_l((wint_t)c, utf8_loc) : true;
}

static bool cp_space(unsigned long c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
           c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* ASCII case tables: lower and upper of every byte below 0x80 */
static unsigned char lo_tab[128], up_tab[128];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;
static void tab_init(void)
{
    for (int c = 0; c < 128; c++) {
        lo_tab[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        up_tab[c] = (unsigned char)(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
}

/* mode: 0 lower, 1 upper, 2 capitalize, 3 Python str.title, 4 Jinja2 title.
 * Writes straight into out's memory: this is a hot path of templates
 * (non-ASCII text can grow by a byte or so per character; that is
 * appended the slow way). */
static void case_map(const char *s, size_t n, int mode, sl_buf *out)
{
    pthread_once(&tab_once, tab_init);
    bool start = true;
    for (size_t i = 0; i < n;) {
        /* a run of ASCII */
        size_t j = i;
        while (j < n && (unsigned char)s[j] < 0x80)
            j++;
        if (j > i) {
            size_t at = out->len;
            if (sl_buf_add(out, s + i, j - i) < 0)
                return;
            unsigned char *d = (unsigned char *)out->data + at;
            size_t m = j - i;
            if (mode <= 2) {
                /* eight bytes at a time: flip bit 5 of the bytes in A..Z
                 * (lower) or a..z (upper); all bytes here are < 0x80 */
                unsigned char lo = mode == 1 ? 'a' : 'A', hi = mode == 1 ? 'z' : 'Z';
                uint64_t ones = 0x0101010101010101ULL;
                uint64_t ge = ones * (unsigned)(0x80 - lo), gt = ones * (unsigned)(0x80 - hi - 1);
                size_t k = 0;
                for (; k + 8 <= m; k += 8) {
                    uint64_t w;
                    memcpy(&w, d + k, 8);
                    uint64_t in = ((w + ge) ^ (w + gt)) & (ones * 0x80);
                    w ^= in >> 2;
                    memcpy(d + k, &w, 8);
                }
                const unsigned char *tab = mode == 1 ? up_tab : lo_tab;
                for (; k < m; k++)
                    d[k] = tab[d[k]];
                if (mode == 2 && i == 0)
                    d[0] = up_tab[d[0]];
            } else {
                for (size_t k = 0; k < m; k++) {
                    unsigned char b = d[k];
                    bool up, sep;
                    if (mode == 3) {
                        sep = !((b | 32) >= 'a' && (b | 32) <= 'z');
                        up = start;
                    } else {
                        sep = b == ' ' || (b >= 9 && b <= 13) || b == '-' || b == '(' ||
                              b == '{' || b == '[' || b == '<';
                        up = start && !sep;
                    }
                    start = sep;
                    d[k] = up ? up_tab[b] : lo_tab[b];
                }
            }
            i = j;
            continue;
        }
        size_t l;
        unsigned long c = dec(s + i, n - i, &l);
        unsigned long o;
        if (mode <= 1) {
            o = cp_case(c, mode);
        } else if (mode == 2) {
            o = cp_case(c, i == 0);
        } else if (mode == 3) {
            bool a = cp_alpha(c);
            o = a ? cp_case(c, start) : c;
            start = !a;
        } else {
            bool sep = cp_space(c);
            o = sep ? c : cp_case(c, start);
            start = sep;
        }
        if (o == c)
            sl_buf_add(out, s + i, l);
        else if (o == 0x1E9E0053)
            sl_buf_add(out, "SS", 2); /* Python: 'ß'.upper() == 'SS' */
        else
            enc(o, out);
        i += l;
    }
}

/* characters (code points) in s[0..n): bytes that are not continuations */
static size_t ulen(const char *s, size_t n)
{
    size_t c = n, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* continuation bytes are 10xxxxxx: bit 7 set and bit 6 clear */
        uint64_t cont = (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;
        c -= (size_t)((cont * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; i++)
        c -= ((unsigned char)s[i] & 0xC0) == 0x80;
    return c;
}

/* byte offset of codepoint k (or n) */
static size_t uoff(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    while (k && i < n) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        k--;
    }
    return i;
}

static jv jstr(const char *s, size_t n)
{
    return sl_jx_json(json_stringn_nocheck(s ? s : "", n));
}

static jv jbuf(sl_buf *b)
{
    jv v = jstr(b->data, b->len);
    sl_buf_release(b);
    return v;
}

/* the value as text: strings as they are, others through str() */
typedef struct {
    const char *s;
    size_t n;
    sl_buf b;
    char mem[64];
} text;

static void text_of(const jv *v, text *t)
{
    sl_buf_init_on(&t->b, 0, t->mem, sizeof t->mem);
    if (v->k == K_JSON && json_is_string(v->j)) {
        t->s = json_string_value(v->j);
        t->n = json_string_length(v->j);
        return;
    }
    sl_jx_str(v, &t->b);
    t->s = t->b.data ? t->b.data : "";
    t->n = t->b.len;
}

static void text_done(text *t)
{
    sl_buf_release(&t->b);
}

/* ---- str() and repr() ---- */

/* [key, value] (json_pack would refuse a key that is not valid UTF-8,
 * and a template's strings need not be) */
static json_t *kv_pair(const char *k, size_t kl, json_t *v)
{
    json_t *p = json_array();
    json_array_append_new(p, json_stringn_nocheck(k, kl));
    json_array_append(p, v);
    return p;
}

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
        unsigned long c = dec(s + i, n - i, &l);
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

void sl_jx_py_repr(const json_t *j, sl_buf *out)
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
    default: sl_jx_py_repr(j, out);
    }
}

void sl_jx_str(const jv *v, sl_buf *out)
{
    switch (v->k) {
    case K_JSON: sl_jx_py_str(v->j, out); return;
    case K_NS:
        sl_buf_adds(out, "<Namespace ");
        sl_jx_py_repr(v->j, out);
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
            unsigned long c = dec(s + i, n - i, &l);
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
    double fl = floor(sc), fr = sc - fl;
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
            sl_jx_py_repr(v->j, &b);
        else if (ty == 0 && t == 2 && f->prec >= 0) {
            sl_buf_addf(&b, "%.*g", f->prec, d);
            numeric = true;
        } else
            sl_jx_str(v, &b);
        if (f->prec >= 0 && ty != 0) {
            size_t cut = uoff(b.data ? b.data : "", b.len, (size_t)f->prec);
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
                enc((unsigned long)i, &b);
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
            size_t dl = ulen(b.data ? b.data : "", b.len);
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
    size_t l = ulen(b.data ? b.data : "", b.len);
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
static int py_format(jrender *r, const jnode *e, const char *s, jargs *a, jv *out)
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

/* ---- helpers for filters ---- */

static bool is_str(const jv *v)
{
    return v && v->k == K_JSON && json_is_string(v->j);
}

/* a double as long long, clamped (C leaves out-of-range conversions undefined) */
static long long d2ll(double d)
{
    if (!(d == d))
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (long long)d;
}

static long long int_arg(jv *v, long long def)
{
    long long i;
    double d;
    int t = v ? sl_jx_num_of(v, &i, &d) : 0;
    return t == 1 ? i : t == 2 ? d2ll(d) : def;
}

/* an integer parameter: its value, def when absent or None, or -1 with
 * the error Python would raise for another type */
static int int_param(jrender *r, const jnode *e, jv *v, const char *name, long long def,
                     long long *out)
{
    long long i;
    double d;
    if (!v || (v->k == K_JSON && json_is_null(v->j))) {
        *out = def;
        return 0;
    }
    int t = sl_jx_num_of(v, &i, &d);
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "%s must be an integer, not '%s'", name,
                         sl_jx_py_type(v));
    *out = t == 1 ? i : d2ll(d);
    return 0;
}

static bool bool_arg(jv *v, bool def)
{
    return v && v->k != K_UNDEF ? sl_jx_truthy(v) : def;
}

/* item.a.b (dots; integer parts index lists); borrowed or NULL */
static json_t *path_get(json_t *x, const char *path)
{
    char part[256];
    while (x && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof part)
            return NULL;
        memcpy(part, path, n);
        part[n] = 0;
        if (json_is_object(x)) {
            x = json_object_get(x, part);
        } else if (json_is_array(x) && isdigit((unsigned char)part[0])) {
            x = json_array_get(x, (size_t)atoll(part));
        } else {
            return NULL;
        }
        path = dot ? dot + 1 : path + n;
    }
    return x;
}

static json_t *attr_of(json_t *x, jv *attribute)
{
    if (!attribute || attribute->k != K_JSON || json_is_null(attribute->j))
        return x;
    if (json_is_integer(attribute->j))
        return json_is_array(x) ? json_array_get(x, (size_t)json_integer_value(attribute->j)) : NULL;
    if (!json_is_string(attribute->j))
        return NULL;
    const char *path = json_string_value(attribute->j);
    if (json_is_object(x) && !memchr(path, '.', json_string_length(attribute->j)))
        return json_object_get(x, path);
    return path_get(x, path);
}

/* sort key: lower-cased strings unless case sensitive */
static json_t *sort_key(json_t *x, bool cs)
{
    if (!cs && json_is_string(x)) {
        const unsigned char *p = (const unsigned char *)json_string_value(x);
        size_t n = json_string_length(x), i = 0;
        while (i < n && p[i] < 0x80 && !(p[i] >= 'A' && p[i] <= 'Z'))
            i++;
        if (i == n)
            return json_incref(x);
        STACKBUF(b, 0);
        case_map(json_string_value(x), json_string_length(x), 0, &b);
        json_t *k = json_stringn_nocheck(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return k;
    }
    return json_incref(x);
}

typedef struct {
    json_t *key, *item;
} kv;

static _Thread_local bool sort_bad; /* renders run on many threads */

static int kv_cmp(const kv *a, const kv *b)
{
    int c = a->key && b->key ? sl_jx_py_cmp(a->key, b->key) : -2;
    if (c == -2) {
        sort_bad = true;
        return 0;
    }
    return c;
}

/* keys all of one kind compare without sl_jx_py_cmp: 1 ints, 2 numbers that
 * doubles hold exactly, 3 strings; 0 mixed */
static int key_kind(const kv *v, size_t n)
{
    int kind = -1;
    for (size_t i = 0; i < n; i++) {
        const json_t *k = v[i].key;
        int t = json_is_integer(k) ? (llabs((long long)json_integer_value(k)) < (1LL << 53) ? 1 : 0)
                : json_is_real(k)  ? 2
                : json_is_string(k) ? 3 : 0;
        if (!t)
            return 0;
        if (kind < 0)
            kind = t;
        else if (kind != t)
            kind = kind == 3 || t == 3 ? 0 : 2;
        if (!kind)
            return 0;
    }
    return kind < 0 ? 0 : kind;
}

static int kind_cmp(int kind, const json_t *a, const json_t *b)
{
    if (kind == 1) {
        long long x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    if (kind == 2) {
        double x = json_is_integer(a) ? (double)json_integer_value(a) : json_real_value(a);
        double y = json_is_integer(b) ? (double)json_integer_value(b) : json_real_value(b);
        return x < y ? -1 : x > y;
    }
    size_t la = json_string_length(a), lb = json_string_length(b);
    int c = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
    return c ? (c < 0 ? -1 : 1) : la < lb ? -1 : la > lb;
}

/* stable merge sort of items by key: 0, -1 when keys do not order, -2
 * when the render was ended meanwhile (its error is set) */
static int sort_items(jrender *r, const jnode *e, kv *v, size_t n, bool reverse)
{
    kv *tmp = sl_xmalloc((n ? n : 1) * sizeof *tmp);
    bool bad = false;
    int kind = key_kind(v, n);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int c;
                if (kind) {
                    c = kind_cmp(kind, v[j].key, v[i].key);
                } else {
                    sort_bad = false;
                    c = kv_cmp(&v[j], &v[i]);
                    bad |= sort_bad;
                }
                if (reverse ? c > 0 : c < 0)
                    tmp[k++] = v[j++];
                else
                    tmp[k++] = v[i++];
            }
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
            if (jwork(r, e, (long)(hi - lo)) < 0) {
                free(tmp);
                return -2;
            }
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
    return bad ? -1 : 0;
}

/* (filters read their items through here: walking them is charged as work) */
static int items_of(jrender *r, const jnode *e, jv *x, json_t **items)
{
    if (sl_jx_items(r, e, x, items) < 0)
        return -1;
    r->work -= (long)json_array_size(*items);
    return 0;
}

/* ---- filters ---- */

#define FILTER(name) static int f_##name(jrender *r, const jnode *e, jv *x, jargs *a, jv *out)

FILTER(abs)
{
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    (void)a;
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "bad operand type for abs(): '%s'", sl_jx_py_type(x));
    if (t == 1 && i != INT64_MIN)
        *out = sl_jx_json(sl_jx_int(i < 0 ? -i : i));
    else
        *out = sl_jx_json(json_real(fabs(d)));
    return 0;
}

FILTER(attr)
{
    jv *n = sl_jx_arg(a, 0, "name");
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    *out = sl_jx_undef(is_str(n) ? NULL : "?");
    if (is_str(n))
        out->j = json_incref(n->j); /* the name, kept alive with the value */
    return 0;
}

static int str_case(jrender *r, jv *x, int mode, jv *out)
{
    (void)r;
    text t;
    text_of(x, &t);
    STACKBUF(b, 0);
    case_map(t.s, t.n, mode, &b);
    text_done(&t);
    *out = jbuf(&b);
    return 0;
}

FILTER(lower) { (void)e, (void)a; return str_case(r, x, 0, out); }
FILTER(upper) { (void)e, (void)a; return str_case(r, x, 1, out); }
FILTER(capitalize)
{
    (void)e, (void)a;
    text t;
    text_of(x, &t);
    STACKBUF(c, 0);
    case_map(t.s, t.n, 2, &c);
    text_done(&t);
    (void)r;
    *out = jbuf(&c);
    return 0;
}
FILTER(title) { (void)e, (void)a; return str_case(r, x, 4, out); }

FILTER(center)
{
    jv *wv = sl_jx_arg(a, 0, "width"), *fc = sl_jx_arg(a, 1, "fillchar");
    long long w = 80;
    if (wv && sl_jx_num_of(wv, &w, &(double){0}) != 1)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' object cannot be interpreted as an integer",
                         sl_jx_py_type(wv));
    const char *fill = " ";
    size_t fl = 1;
    if (fc) {
        if (!is_str(fc) || ulen(json_string_value(fc->j), json_string_length(fc->j)) != 1)
            return sl_jx_err(r, e, SL_EINVAL,
                             "The fill character must be exactly one character long");
        fill = json_string_value(fc->j);
        fl = json_string_length(fc->j);
    }
    text t;
    text_of(x, &t);
    long long l = (long long)ulen(t.s, t.n);
    STACKBUF(b, 0);
    if (w > l && w < 1000000) {
        long long marg = w - l, left = marg / 2 + (marg & w & 1);
        for (long long i = 0; i < left; i++)
            sl_buf_add(&b, fill, fl);
        sl_buf_add(&b, t.s, t.n);
        for (long long i = left; i < marg; i++)
            sl_buf_add(&b, fill, fl);
    } else {
        sl_buf_add(&b, t.s, t.n);
    }
    text_done(&t);
    *out = jbuf(&b);
    return 0;
}

FILTER(default)
{
    (void)r, (void)e;
    jv *d = sl_jx_arg(a, 0, "default_value");
    bool boolean = bool_arg(sl_jx_arg(a, 1, "boolean"), false);
    if (x->k == K_UNDEF || (boolean && !sl_jx_truthy(x)))
        *out = d ? sl_jx_copy(d) : jstr("", 0);
    else
        *out = sl_jx_copy(x);
    return 0;
}

static void html_escape(const char *s, size_t n, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': sl_buf_adds(b, "&amp;"); break;
        case '<': sl_buf_adds(b, "&lt;"); break;
        case '>': sl_buf_adds(b, "&gt;"); break;
        case '"': sl_buf_adds(b, "&#34;"); break;
        case '\'': sl_buf_adds(b, "&#39;"); break;
        default: sl_buf_addc(b, s[i]);
        }
    }
}

FILTER(escape)
{
    (void)r, (void)e, (void)a;
    text t;
    text_of(x, &t);
    STACKBUF(b, 0);
    html_escape(t.s, t.n, &b);
    text_done(&t);
    *out = jbuf(&b);
    return 0;
}

FILTER(safe)
{
    (void)r, (void)e, (void)a;
    *out = sl_jx_copy(x);
    return 0;
}

FILTER(first)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    *out = json_array_size(items) ? sl_jx_json(json_incref(json_array_get(items, 0)))
                                  : sl_jx_undef("first");
    jdecref(items);
    return 0;
}

FILTER(last)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    *out = n ? sl_jx_json(json_incref(json_array_get(items, n - 1))) : sl_jx_undef("last");
    jdecref(items);
    return 0;
}

FILTER(float)
{
    jv *d = sl_jx_arg(a, 0, "default");
    long long i;
    double v;
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    int t = sl_jx_num_of(x, &i, &v);
    if (t)
        return sl_jx_float(r, e, v, out);
    if (is_str(x)) {
        const char *s = json_string_value(x->j);
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        /* Python's float(): decimal, or nan / inf / infinity with a sign;
         * no hex (strtod would read 0x1p3) */
        const char *q = s + (*s == '+' || *s == '-');
        bool hex = q[0] == '0' && (q[1] | 32) == 'x';
        v = hex ? 0 : strtod(s, &end);
        if (hex)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end) {
            if (!isfinite(v))
                return sl_jx_err(r, e, SL_EINVAL,
                                 "'%s' is not a finite number, and sluice's values "
                                 "are JSON numbers (no nan or inf)",
                                 json_string_value(x->j));
            *out = sl_jx_json(json_real(v));
            return 0;
        }
    }
    *out = d ? sl_jx_copy(d) : sl_jx_json(json_real(0.0));
    return 0;
}

FILTER(int)
{
    (void)r, (void)e;
    jv *d = sl_jx_arg(a, 0, "default");
    long long base = int_arg(sl_jx_arg(a, 1, "base"), 10);
    long long i;
    double v;
    if (a->n > 2)
        return sl_jx_err(r, e, SL_EINVAL, "int takes at most 2 arguments (%d given)", a->n);
    if (x->k == K_UNDEF)
        return sl_jx_undef_err(r, e, x);
    int t = sl_jx_num_of(x, &i, &v);
    if (t == 1) {
        *out = sl_jx_json(sl_jx_int(i));
        return 0;
    }
    if (t == 2 && fabs(v) < 9.2e18) {
        *out = sl_jx_json(sl_jx_int((long long)v));
        return 0;
    }
    if (is_str(x)) {
        /* Python's int(s, base): digits with single underscores between
         * them; a 0x/0o/0b prefix only when it matches the base */
        char buf[128];
        const char *s0 = json_string_value(x->j);
        size_t k = 0;
        while (isspace((unsigned char)*s0))
            s0++;
        bool ok = true;
        for (const char *q = s0; *q && k < sizeof buf - 1; q++) {
            if (*q == '_') {
                ok &= q > s0 && isalnum((unsigned char)q[-1]) && isalnum((unsigned char)q[1]);
                continue;
            }
            buf[k++] = *q;
        }
        buf[k] = 0;
        const char *s = buf;
        int b = (int)(base >= 2 && base <= 36 ? base : 10);
        size_t sg = buf[0] == '-' || buf[0] == '+';
        if (s[sg] == '0' && s[sg + 1] && strchr("xXoObB", s[sg + 1])) {
            char pc = (char)(s[sg + 1] | 32);
            if ((b == 16 && pc == 'x') || (b == 8 && pc == 'o') || (b == 2 && pc == 'b'))
                memmove(buf + sg, buf + sg + 2, strlen(buf + sg + 2) + 1); /* drop 0x */
            else if (b != 16 || pc != 'b')
                ok = false;
        }
        char *end;
        errno = 0;
        long long n = ok ? strtoll(s, &end, b) : 0;
        if (!ok)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end && !errno) {
            *out = sl_jx_json(sl_jx_int(n));
            return 0;
        }
        v = ok && !strchr(s, 'x') && !strchr(s, 'X') ? strtod(s, &end) : 0;
        if (!ok)
            end = (char *)s;
        while (end != s && isspace((unsigned char)*end))
            end++;
        if (end != s && !*end && isfinite(v) && fabs(v) < 9.2e18) {
            *out = sl_jx_json(sl_jx_int((long long)v));
            return 0;
        }
        if (end != s && !*end && isfinite(v)) {
            /* beyond 64 bits: sluice's ints stop there, so the nearest float */
            *out = sl_jx_json(json_real(trunc(v)));
            return 0;
        }
    }
    *out = d ? sl_jx_copy(d) : sl_jx_json(sl_jx_int(0));
    return 0;
}

FILTER(join)
{
    jv *d = sl_jx_arg(a, 0, "d");
    jv *at = sl_jx_arg(a, 1, "attribute");
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    text sep;
    if (d) {
        text_of(d, &sep);
    } else {
        sep.s = "";
        sep.n = 0;
        sl_buf_init(&sep.b, 0);
    }
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    for (size_t i = 0; i < json_array_size(items); i++) {
        if (i)
            sl_buf_add(&b, sep.s, sep.n);
        json_t *it = attr_of(json_array_get(items, i), at);
        if (it)
            sl_jx_py_str(it, &b);
    }
    text_done(&sep);
    jdecref(items);
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the joined text is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

FILTER(length)
{
    (void)a;
    if (x->k == K_UNDEF) {
        *out = sl_jx_json(sl_jx_int(0));
        return 0;
    }
    json_t *j = x->k == K_JSON || x->k == K_NS ? x->j : NULL;
    if (json_is_string(j)) {
        r->work -= (long)(json_string_length(j) >> 6);
        *out = sl_jx_json(sl_jx_int((long long)ulen(json_string_value(j), json_string_length(j))));
    } else if (json_is_array(j))
        *out = sl_jx_json(sl_jx_int((long long)json_array_size(j)));
    else if (json_is_object(j))
        *out = sl_jx_json(sl_jx_int((long long)json_object_size(j)));
    else if (x->k == K_LOOP)
        *out = sl_jx_json(sl_jx_int((long long)((const loopst *)x->p)->n));
    else
        return sl_jx_err(r, e, SL_EINVAL, "object of type '%s' has no len()", sl_jx_py_type(x));
    return 0;
}

FILTER(list)
{
    (void)a;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    *out = sl_jx_json(json_copy(items));
    jdecref(items);
    return 0;
}

FILTER(string)
{
    (void)r, (void)e, (void)a;
    STACKBUF(b, 0);
    sl_jx_str(x, &b);
    *out = jbuf(&b);
    return 0;
}

FILTER(replace)
{
    jv *o = sl_jx_arg(a, 0, "old"), *n = sl_jx_arg(a, 1, "new");
    jv *c = sl_jx_arg(a, 2, "count");
    if (!o || !n)
        return sl_jx_err(r, e, SL_EINVAL, "replace() needs the old and new text");
    text s, ot, nt;
    text_of(x, &s);
    text_of(o, &ot);
    text_of(n, &nt);
    r->work -= (long)(s.n >> 6); /* the text is searched whole; what it makes may be small */
    long long count = c && c->k == K_JSON && !json_is_null(c->j) ? int_arg(c, -1) : -1;
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    size_t i = 0;
    long long done = 0;
    if (ot.n == 0) {
        for (;;) {
            if (count < 0 || done < count) {
                sl_buf_add(&b, nt.s, nt.n);
                done++;
            }
            if (i >= s.n)
                break;
            size_t l = 1;
            while (i + l < s.n && ((unsigned char)s.s[i + l] & 0xC0) == 0x80)
                l++;
            sl_buf_add(&b, s.s + i, l);
            i += l;
        }
    } else {
        while (i < s.n) {
            const char *h = (count < 0 || done < count) ? memmem(s.s + i, s.n - i, ot.s, ot.n) : NULL;
            if (!h) {
                sl_buf_add(&b, s.s + i, s.n - i);
                break;
            }
            sl_buf_add(&b, s.s + i, (size_t)(h - (s.s + i)));
            sl_buf_add(&b, nt.s, nt.n);
            i = (size_t)(h - s.s) + ot.n;
            done++;
        }
    }
    text_done(&s);
    text_done(&ot);
    text_done(&nt);
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the replaced text is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

FILTER(reverse)
{
    (void)a;
    if (is_str(x)) {
        const char *s = json_string_value(x->j);
        size_t n = json_string_length(x->j);
        char *o = sl_xmalloc(n + 1);
        size_t w = n;
        for (size_t i = 0; i < n;) {
            size_t l = 1;
            while (i + l < n && ((unsigned char)s[i + l] & 0xC0) == 0x80)
                l++;
            w -= l;
            memcpy(o + w, s + i, l);
            i += l;
        }
        *out = jstr(o, n);
        free(o);
        return 0;
    }
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    json_t *res = json_array();
    for (size_t i = json_array_size(items); i > 0; i--)
        json_array_append(res, json_array_get(items, i - 1));
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

static double py_round(double v, long long p)
{
    if (!isfinite(v))
        return v;
    if (p >= 0 && p < 300) {
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", (int)p, v);
        return strtod(buf, NULL);
    }
    double m = pow(10, (double)-p);
    double q = v / m, fl = floor(q), diff = q - fl;
    double rq = diff > 0.5 ? fl + 1 : diff < 0.5 ? fl : (fmod(fl, 2) == 0 ? fl : fl + 1);
    return rq * m;
}

FILTER(round)
{
    long long p = int_arg(sl_jx_arg(a, 0, "precision"), 0);
    jv *m = sl_jx_arg(a, 1, "method");
    const char *method = is_str(m) ? json_string_value(m->j) : "common";
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "round needs a number, not '%s'", sl_jx_py_type(x));
    if (t == 1 && !(x->k == K_JSON && json_is_boolean(x->j)) && p >= 0 &&
        !strcmp(method, "common")) {
        /* Python's round() of an int keeps the int */
        *out = sl_jx_json(sl_jx_int(i));
        return 0;
    }
    if (!strcmp(method, "common"))
        return sl_jx_float(r, e, py_round(d, p), out);
    if (strcmp(method, "ceil") && strcmp(method, "floor"))
        return sl_jx_err(r, e, SL_EINVAL, "method must be common, ceil or floor");
    double mul = pow(10, (double)p);
    double v = method[0] == 'c' ? ceil(d * mul) / mul : floor(d * mul) / mul;
    return sl_jx_float(r, e, v, out);
}

static const jtest *test_arg(jrender *r, const jnode *e, jv *name)
{
    if (!is_str(name)) {
        sl_jx_err(r, e, SL_EINVAL, "expected a test name");
        return NULL;
    }
    const jtest *t = sl_jx_find_test(json_string_value(name->j));
    if (!t)
        sl_jx_err(r, e, SL_EINVAL, "no test named '%s'", json_string_value(name->j));
    return t;
}

/* select/reject (attr: false) and selectattr/rejectattr (attr: true) */
static int do_select(jrender *r, const jnode *e, jv *x, jargs *a, bool attr, bool keep, jv *out)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    int first = attr ? 1 : 0;
    jv *an = attr ? sl_jx_arg(a, 0, NULL) : NULL;
    const jtest *t = NULL;
    if (a->n > first && !(t = test_arg(r, e, &a->pos[first]))) {
        jdecref(items);
        return -1;
    }
    jargs rest = *a;
    rest.n = a->n > first + 1 ? a->n - first - 1 : 0;
    rest.pos = a->pos + (a->n > first + 1 ? first + 1 : 0);
    json_t *res = json_array();
    int rc = 0;
    for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
        json_t *it = json_array_get(items, i);
        json_t *v = attr ? attr_of(it, an) : it;
        jv jx = v ? sl_jx_json(json_incref(v))
                  : sl_jx_undef(an && is_str(an) ? json_string_value(an->j) : NULL);
        bool ok;
        if (t)
            rc = t->fn(r, e, &jx, &rest, &ok);
        else
            ok = sl_jx_truthy(&jx);
        if (!rc && ok == keep)
            json_array_append(res, it);
        sl_jx_free(&jx);
        if (!rc)
            rc = jwork(r, e, 1);
    }
    jdecref(items);
    if (rc) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(select) { return do_select(r, e, x, a, false, true, out); }
FILTER(reject) { return do_select(r, e, x, a, false, false, out); }
FILTER(selectattr) { return do_select(r, e, x, a, true, true, out); }
FILTER(rejectattr) { return do_select(r, e, x, a, true, false, out); }

FILTER(map)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    jv *at = sl_jx_arg(a, -1, "attribute");
    json_t *res = json_array();
    int rc = 0;
    if (at) {
        jv *def = sl_jx_arg(a, -1, "default");
        for (size_t i = 0; i < json_array_size(items); i++) {
            json_t *v = attr_of(json_array_get(items, i), at);
            json_array_append_new(res, v ? json_incref(v) : def ? sl_jx_to_json(def) : json_null());
        }
    } else if (a->n >= 1 && is_str(&a->pos[0])) {
        const jfilter *fl = sl_jx_find_filter(json_string_value(a->pos[0].j));
        if (!fl) {
            rc = sl_jx_err(r, e, SL_EINVAL, "no filter named '%s'", json_string_value(a->pos[0].j));
        } else {
            jargs rest = *a;
            rest.n = a->n - 1;
            rest.pos = a->pos + 1;
            for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
                jv it = sl_jx_json(json_incref(json_array_get(items, i))), o;
                rc = fl->fn(r, e, &it, &rest, &o);
                if (!rc) {
                    json_array_append_new(res, sl_jx_to_json(&o));
                    sl_jx_free(&o);
                    rc = jwork(r, e, 1);
                }
                sl_jx_free(&it);
            }
        }
    } else {
        json_array_extend(res, items);
    }
    jdecref(items);
    if (rc) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

/* min/max/sort/unique share: items with keys */
static kv *keyed(json_t *items, jv *at, bool cs, size_t *n)
{
    *n = json_array_size(items);
    kv *v = sl_xmalloc((*n ? *n : 1) * sizeof *v);
    /* sort(attribute='a,b.c'): the key is the list of those attributes */
    const char *multi = is_str(at) && strchr(json_string_value(at->j), ',')
                            ? json_string_value(at->j) : NULL;
    for (size_t i = 0; i < *n; i++) {
        v[i].item = json_array_get(items, i);
        if (multi) {
            json_t *key = json_array();
            for (const char *p = multi; key;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                char part[256];
                json_t *k = NULL;
                if (l < sizeof part) {
                    memcpy(part, p, l);
                    part[l] = 0;
                    k = path_get(v[i].item, part);
                }
                if (!k) {
                    jdecref(key);
                    key = NULL;
                    break;
                }
                json_array_append_new(key, sort_key(k, cs));
                if (!c)
                    break;
                p = c + 1;
            }
            v[i].key = key;
            continue;
        }
        json_t *k = attr_of(v[i].item, at);
        v[i].key = k ? sort_key(k, cs) : NULL;
    }
    return v;
}

static void keyed_free(kv *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jdecref(v[i].key);
    free(v);
}

static int minmax(jrender *r, const jnode *e, jv *x, jargs *a, bool max, jv *out)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = keyed(items, sl_jx_arg(a, 1, "attribute"),
                  bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false), &n);
    size_t best = 0;
    int rc = 0;
    for (size_t i = 1; i < n; i++) {
        sort_bad = false;
        int c = kv_cmp(&v[i], &v[best]);
        if (sort_bad) {
            rc = sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
            break;
        }
        if (max ? c > 0 : c < 0)
            best = i;
    }
    if (!rc)
        *out = n ? sl_jx_json(json_incref(v[best].item)) : sl_jx_undef(max ? "max" : "min");
    keyed_free(v, n);
    jdecref(items);
    return rc;
}

FILTER(max) { return minmax(r, e, x, a, true, out); }
FILTER(min) { return minmax(r, e, x, a, false, out); }

FILTER(sort)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = keyed(items, sl_jx_arg(a, 2, "attribute"),
                  bool_arg(sl_jx_arg(a, 1, "case_sensitive"), false), &n);
    int rc = sort_items(r, e, v, n, bool_arg(sl_jx_arg(a, 0, "reverse"), false));
    if (rc == -2) {
        rc = -1;
    } else if (rc < 0 && sl_jx_too_deep) {
        rc = 0; /* sl_jx_eval_filter reports it */
        *out = sl_jx_json(json_array());
    } else if (rc < 0) {
        rc = sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
    } else {
        json_t *res = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append(res, v[i].item);
        *out = sl_jx_json(res);
    }
    keyed_free(v, n);
    jdecref(items);
    return rc;
}

FILTER(unique)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n;
    kv *v = keyed(items, sl_jx_arg(a, 1, "attribute"),
                  bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false), &n);
    json_t *res = json_array();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = v[k].key && v[i].key ? sl_jx_py_eq(v[k].key, v[i].key) : v[k].key == v[i].key;
        if (!seen)
            json_array_append(res, v[i].item);
        rc = jwork(r, e, (long)i + 1); /* each item is compared with those before it */
    }
    keyed_free(v, n);
    jdecref(items);
    if (rc < 0) {
        jdecref(res);
        return -1;
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(dictsort)
{
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "dictsort needs a dict, not '%s'", sl_jx_py_type(x));
    bool cs = bool_arg(sl_jx_arg(a, 0, "case_sensitive"), false);
    jv *by = sl_jx_arg(a, 1, "by");
    bool byval = is_str(by) && !strcmp(json_string_value(by->j), "value");
    size_t n = json_object_size(x->j), i = 0;
    r->work -= (long)n;
    kv *v = sl_xmalloc((n ? n : 1) * sizeof *v);
    const char *k;
    json_t *val;
    json_object_foreach(x->j, k, val) {
        json_t *pair = kv_pair(k, strlen(k), val);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        v[i].item = pair;
        v[i].key = sort_key(byval ? val : json_array_get(pair, 0), cs);
        i++;
    }
    int rc = sort_items(r, e, v, n, bool_arg(sl_jx_arg(a, 2, "reverse"), false));
    json_t *res = json_array();
    for (i = 0; i < n; i++) {
        json_array_append_new(res, v[i].item);
        jdecref(v[i].key);
    }
    free(v);
    if (rc < 0) {
        jdecref(res);
        return rc == -2 ? -1 : sl_jx_err(r, e, SL_EINVAL, "the values do not compare");
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(items)
{
    (void)a;
    if (x->k == K_UNDEF) {
        *out = sl_jx_json(json_array());
        return 0;
    }
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "can only get item pairs from a mapping, not '%s'",
                         sl_jx_py_type(x));
    json_t *res = json_array();
    const char *k;
    json_t *val;
    json_object_foreach(x->j, k, val) {
        json_t *pair = kv_pair(k, strlen(k), val);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        json_array_append_new(res, pair);
    }
    *out = sl_jx_json(res);
    return 0;
}

FILTER(sum)
{
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    jv *at = sl_jx_arg(a, 0, "attribute");
    jv *st = sl_jx_arg(a, 1, "start");
    /* the running sum stays a C number (int until a float or an overflow,
     * as Python's would) and becomes a value once, at the end */
    long long ia = 0;
    double da = 0;
    int ta = 1;
    if (st && !(ta = sl_jx_num_of(st, &ia, &da))) {
        jdecref(items);
        return sl_jx_err(r, e, SL_EINVAL, "unsupported operand type(s) for +: '%s' and '%s'",
                         sl_jx_py_type(st), "int");
    }
    int rc = 0;
    for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
        json_t *it = attr_of(json_array_get(items, i), at);
        long long ib;
        double db;
        jv iv = {.k = K_JSON, .j = it};
        int tb = it ? sl_jx_num_of(&iv, &ib, &db) : 0;
        if (!tb) {
            rc = sl_jx_err(r, e, SL_EINVAL, "unsupported operand type(s) for +: '%s' and '%s'",
                           ta == 1 ? "int" : "float", it ? sl_jx_py_type(&iv) : "Undefined");
            break;
        }
        long long s;
        if (ta == 1 && tb == 1 && !__builtin_add_overflow(ia, ib, &s)) {
            ia = s;
            da = (double)s;
        } else {
            da = (ta == 1 ? (double)ia : da) + db;
            ta = 2;
            if (!isfinite(da))
                rc = sl_jx_err(r, e, SL_EINVAL, "the result is not a finite number");
        }
    }
    bool none = json_array_size(items) == 0;
    jdecref(items);
    if (rc)
        return -1;
    if (none && st)
        *out = sl_jx_copy(st);
    else
        *out = sl_jx_json(ta == 1 ? sl_jx_int(ia) : json_real(da));
    return 0;
}

/* a set of code points (strip's chars): a table for ASCII, the rest
 * sorted, so stripping is not the text's length times the set's */
typedef struct {
    bool ascii[128];
    unsigned long *cp;
    size_t n;
} cpset;

static int ul_cmp(const void *x, const void *y)
{
    unsigned long a = *(const unsigned long *)x, b = *(const unsigned long *)y;
    return a < b ? -1 : a > b;
}

static void cpset_init(cpset *cs, const char *s, size_t n)
{
    memset(cs->ascii, 0, sizeof cs->ascii);
    cs->cp = NULL;
    cs->n = 0;
    for (size_t i = 0; i < n;) {
        size_t l;
        unsigned long c = dec(s + i, n - i, &l);
        if (c < 128) {
            cs->ascii[c] = true;
        } else {
            if (!cs->cp)
                cs->cp = sl_xmalloc(n * sizeof *cs->cp);
            cs->cp[cs->n++] = c;
        }
        i += l;
    }
    if (cs->n)
        qsort(cs->cp, cs->n, sizeof *cs->cp, ul_cmp);
}

static bool cpset_has(const cpset *cs, unsigned long c)
{
    if (c < 128)
        return cs->ascii[c];
    return cs->n && bsearch(&c, cs->cp, cs->n, sizeof *cs->cp, ul_cmp);
}

static void strip(const char *s, size_t n, const char *chars, size_t cn, int where, size_t *b,
                  size_t *en)
{
    cpset cs;
    if (chars)
        cpset_init(&cs, chars, cn);
    size_t i = 0, j = n;
    if (where & 1)
        while (i < j) {
            size_t l;
            unsigned long c = dec(s + i, j - i, &l);
            if (chars ? !cpset_has(&cs, c) : !cp_space(c))
                break;
            i += l;
        }
    if (where & 2)
        while (j > i) {
            size_t k = j - 1;
            while (k > i && ((unsigned char)s[k] & 0xC0) == 0x80)
                k--;
            size_t l;
            unsigned long c = dec(s + k, j - k, &l);
            if (chars ? !cpset_has(&cs, c) : !cp_space(c))
                break;
            j = k;
        }
    if (chars)
        free(cs.cp);
    *b = i;
    *en = j;
}

FILTER(trim)
{
    (void)r, (void)e;
    jv *c = sl_jx_arg(a, 0, "chars");
    text t, ct;
    text_of(x, &t);
    bool have = c && c->k == K_JSON && !json_is_null(c->j);
    if (have)
        text_of(c, &ct);
    size_t b, en;
    strip(t.s, t.n, have ? ct.s : NULL, have ? ct.n : 0, 3, &b, &en);
    *out = jstr(t.s + b, en - b);
    text_done(&t);
    if (have)
        text_done(&ct);
    return 0;
}

FILTER(truncate)
{
    long long length;
    if (int_param(r, e, sl_jx_arg(a, 0, "length"), "length", 255, &length) < 0)
        return -1;
    bool kill = bool_arg(sl_jx_arg(a, 1, "killwords"), false);
    jv *endv = sl_jx_arg(a, 2, "end");
    jv *lw = sl_jx_arg(a, 3, "leeway");
    long long leeway = lw && lw->k == K_JSON && !json_is_null(lw->j) ? int_arg(lw, 5) : 5;
    text t, et;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6); /* counted whole, kept in part */
    if (endv) {
        text_of(endv, &et);
    } else {
        et.s = "...";
        et.n = 3;
        sl_buf_init(&et.b, 0);
    }
    long long elen = (long long)ulen(et.s, et.n), tlen = (long long)ulen(t.s, t.n);
    int rc = 0;
    if (length < elen || leeway < 0) {
        rc = sl_jx_err(r, e, SL_EINVAL, "expected length >= %lld and leeway >= 0", elen);
    } else if (tlen <= length || tlen - length <= leeway) {
        *out = x->k == K_JSON && json_is_string(x->j) ? sl_jx_copy(x) : jstr(t.s, t.n);
    } else {
        size_t cut = uoff(t.s, t.n, (size_t)(length - elen));
        STACKBUF(b, 0);
        if (kill) {
            sl_buf_add(&b, t.s, cut);
        } else {
            size_t k = cut;
            while (k > 0 && t.s[k - 1] != ' ')
                k--;
            sl_buf_add(&b, t.s, k ? k - 1 : cut);
        }
        sl_buf_add(&b, et.s, et.n);
        *out = jbuf(&b);
    }
    text_done(&t);
    text_done(&et);
    return rc;
}

FILTER(wordcount)
{
    (void)e, (void)a;
    text t;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6);
    long long n = 0;
    bool in = false;
    for (size_t i = 0; i < t.n;) {
        size_t l;
        unsigned long c = dec(t.s + i, t.n - i, &l);
        bool w = c < 0x80 ? (isalnum((int)c) || c == '_') : (cp_alpha(c) || !cp_space(c));
        if (w && !in)
            n++;
        in = w;
        i += l;
    }
    text_done(&t);
    *out = sl_jx_json(sl_jx_int(n));
    return 0;
}

FILTER(tojson)
{
    if (x->k == K_UNDEF)
        return sl_jx_err(r, e, SL_EINVAL, "Object of type Undefined is not JSON serializable");
    (void)r, (void)e;
    jv *ind = sl_jx_arg(a, 0, "indent");
    int indent = ind && ind->k == K_JSON && json_is_integer(ind->j) ? (int)int_arg(ind, -1) : -1;
    if (indent > 100)
        indent = 100;
    json_t *j = sl_jx_to_json(x);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    tojson_rec(j, indent, 0, &b);
    jdecref(j);
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the JSON is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

static void url_quote(const char *s, size_t n, const char *safe, bool plus, sl_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~' || (c && strchr(safe, c)))
            sl_buf_addc(b, (char)c);
        else if (c == ' ' && plus)
            sl_buf_addc(b, '+');
        else
            sl_buf_addf(b, "%%%02X", c);
    }
}

FILTER(urlencode)
{
    (void)r, (void)e, (void)a;
    STACKBUF(b, 0);
    if (x->k == K_JSON && (json_is_object(x->j) || json_is_array(x->j))) {
        bool first = true;
        if (json_is_object(x->j)) {
            const char *k;
            json_t *v;
            json_object_foreach(x->j, k, v) {
                if (!first)
                    sl_buf_addc(&b, '&');
                first = false;
                url_quote(k, strlen(k), "", true, &b);
                sl_buf_addc(&b, '=');
                STACKBUF(s, 0);
                sl_jx_py_str(v, &s);
                url_quote(s.data ? s.data : "", s.len, "", true, &b);
                sl_buf_release(&s);
            }
        } else {
            for (size_t i = 0; i < json_array_size(x->j); i++) {
                json_t *p = json_array_get(x->j, i);
                if (!first)
                    sl_buf_addc(&b, '&');
                first = false;
                for (int k = 0; k < 2; k++) {
                    if (k)
                        sl_buf_addc(&b, '=');
                    STACKBUF(s, 0);
                    sl_jx_py_str(json_array_get(p, (size_t)k) ? json_array_get(p, (size_t)k)
                                                              : json_null(),
                                 &s);
                    url_quote(s.data ? s.data : "", s.len, "", true, &b);
                    sl_buf_release(&s);
                }
            }
        }
    } else {
        text t;
        text_of(x, &t);
        url_quote(t.s, t.n, "/", false, &b);
        text_done(&t);
    }
    *out = jbuf(&b);
    return 0;
}

FILTER(striptags)
{
    (void)e, (void)a;
    text t;
    text_of(x, &t);
    r->work -= (long)(t.n >> 6);
    STACKBUF(b, 0);
    /* once a search for the end of a comment or tag failed, it fails from
     * every later place too: not searching again keeps this linear */
    bool no_cend = false, no_gt = false;
    for (size_t i = 0; i < t.n;) {
        if (!no_cend && i + 3 < t.n && !memcmp(t.s + i, "<!--", 4)) {
            const char *q = memmem(t.s + i + 4, t.n - i - 4, "-->", 3);
            if (q) {
                i = (size_t)(q - t.s) + 3;
                continue;
            }
            no_cend = true;
        }
        if (!no_gt && t.s[i] == '<') {
            const char *q = memchr(t.s + i + 1, '>', t.n - i - 1);
            if (q) {
                i = (size_t)(q - t.s) + 1;
                continue;
            }
            no_gt = true;
        }
        sl_buf_addc(&b, t.s[i++]);
    }
    text_done(&t);
    /* collapse whitespace, then unescape the common entities */
    STACKBUF(c, 0);
    const char *s = b.data ? b.data : "";
    for (size_t i = 0; i < b.len;) {
        if (isspace((unsigned char)s[i])) {
            while (i < b.len && isspace((unsigned char)s[i]))
                i++;
            if (c.len && i < b.len)
                sl_buf_addc(&c, ' ');
            continue;
        }
        static const char *const ent[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
                                             {"&quot;", "\""}, {"&#39;", "'"}, {"&#34;", "\""},
                                             {"&nbsp;", "\xc2\xa0"}};
        bool hit = false;
        for (size_t k = 0; k < sizeof ent / sizeof ent[0] && !hit; k++) {
            size_t l = strlen(ent[k][0]);
            if (i + l <= b.len && !memcmp(s + i, ent[k][0], l)) {
                sl_buf_adds(&c, ent[k][1]);
                i += l;
                hit = true;
            }
        }
        if (!hit)
            sl_buf_addc(&c, s[i++]);
    }
    sl_buf_release(&b);
    *out = jbuf(&c);
    return 0;
}

FILTER(indent)
{
    (void)r, (void)e;
    jv *w = sl_jx_arg(a, 0, "width");
    bool first = bool_arg(sl_jx_arg(a, 1, "first"), false),
         blank = bool_arg(sl_jx_arg(a, 2, "blank"), false);
    STACKBUF(ind, 0);
    if (is_str(w)) {
        sl_buf_add(&ind, json_string_value(w->j), json_string_length(w->j));
    } else {
        long long n = int_arg(w, 4);
        for (long long i = 0; i < n && i < 10000; i++)
            sl_buf_addc(&ind, ' ');
    }
    const char *is = ind.data ? ind.data : "";
    text t0;
    text_of(x, &t0);
    /* Jinja2 splits s + "\n" into lines (str.splitlines) */
    STACKBUF(tb, r->lim.max_output_chars * 4 + 16);
    sl_buf_add(&tb, t0.s, t0.n);
    sl_buf_addc(&tb, '\n');
    text_done(&t0);
    text t = {.s = tb.data, .n = tb.len};
    sl_buf_init(&t.b, 0);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    if (first)
        sl_buf_add(&b, is, ind.len);
    size_t i = 0;
    bool firstline = true;
    while (i < t.n) {
        size_t j = i;
        while (j < t.n && !strchr("\n\r\v\f\x1c\x1d\x1e", t.s[j]))
            j++;
        if (!firstline) {
            sl_buf_addc(&b, '\n');
            if (j > i || blank)
                sl_buf_add(&b, is, ind.len);
        }
        sl_buf_add(&b, t.s + i, j - i);
        firstline = false;
        if (j < t.n && t.s[j] == '\r' && j + 1 < t.n && t.s[j + 1] == '\n')
            j++;
        i = j + 1;
    }
    text_done(&t);
    sl_buf_release(&tb);
    sl_buf_release(&ind);
    *out = jbuf(&b);
    return 0;
}

FILTER(format)
{
    text t;
    text_of(x, &t);
    int rc;
    if (!a->nkw && a->n == 1 &&
        !(a->pos[0].k == K_JSON && (json_is_array(a->pos[0].j) || json_is_object(a->pos[0].j)))) {
        /* s % (x,) is s % x for a single value that is not a list or dict */
        rc = sl_jx_py_percent(r, e, t.s, &a->pos[0], out);
    } else if (a->nkw) {
        json_t *o = json_object();
        for (int k = 0; k < a->nkw; k++)
            json_object_set_new(o, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        jv d = sl_jx_json(o);
        rc = sl_jx_py_percent(r, e, t.s, &d, out);
        sl_jx_free(&d);
    } else {
        json_t *l = json_array();
        for (int i = 0; i < a->n; i++)
            json_array_append_new(l, sl_jx_to_json(&a->pos[i]));
        jv d = sl_jx_json(l);
        rc = sl_jx_py_percent(r, e, t.s, &d, out);
        sl_jx_free(&d);
    }
    text_done(&t);
    return rc;
}

static int chunks(jrender *r, const jnode *e, jv *x, jargs *a, bool batch, jv *out)
{
    long long n = int_arg(sl_jx_arg(a, 0, batch ? "linecount" : "slices"), 0);
    jv *fill = sl_jx_arg(a, 1, "fill_with");
    if (fill && fill->k == K_JSON && json_is_null(fill->j))
        fill = NULL;
    if (n <= 0)
        return sl_jx_err(r, e, SL_EINVAL, "%s needs a positive count", batch ? "batch" : "slice");
    if (batch && fill && n > JINJA_MAX_ITEMS)
        return sl_jx_err(r, e, SL_ELIMIT,
                         "batch(%lld) with a fill value would make lists of more "
                         "than %d items (sluice's cap on lists a template builds)",
                         n, JINJA_MAX_ITEMS);
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t len = json_array_size(items);
    json_t *res = json_array();
    if (batch) {
        json_t *cur = NULL;
        for (size_t i = 0; i < len; i++) {
            if (!cur)
                cur = json_array();
            json_array_append(cur, json_array_get(items, i));
            if ((long long)json_array_size(cur) == n) {
                json_array_append_new(res, cur);
                cur = NULL;
            }
        }
        if (cur) {
            while (fill && (long long)json_array_size(cur) < n)
                json_array_append_new(cur, sl_jx_to_json(fill));
            json_array_append_new(res, cur);
        }
    } else if (n <= 100000) {
        size_t per = len / (size_t)n, extra = len % (size_t)n, offset = 0;
        for (size_t s = 0; s < (size_t)n; s++) {
            size_t start = offset + s * per;
            if (s < extra)
                offset++;
            size_t end = offset + (s + 1) * per;
            json_t *cur = json_array();
            for (size_t i = start; i < end && i < len; i++)
                json_array_append(cur, json_array_get(items, i));
            if (fill && s >= extra)
                json_array_append_new(cur, sl_jx_to_json(fill));
            json_array_append_new(res, cur);
        }
    }
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

FILTER(batch) { return chunks(r, e, x, a, true, out); }
FILTER(slice) { return chunks(r, e, x, a, false, out); }

/* groupby(attribute, default=None, case_sensitive=False): (grouper, list)
 * tuples sorted by the grouper */
FILTER(groupby)
{
    jv *at = sl_jx_arg(a, 0, "attribute"), *dflt = sl_jx_arg(a, 1, "default");
    bool cs = bool_arg(sl_jx_arg(a, 2, "case_sensitive"), false);
    if (!at)
        return sl_jx_err(r, e, SL_EINVAL, "groupby needs the attribute to group by");
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    kv *v = sl_xmalloc((n ? n : 1) * sizeof *v);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        v[i].item = json_array_get(items, i);
        json_t *k = attr_of(v[i].item, at);
        if (!k && dflt)
            k = sl_jx_to_json(dflt), json_decref(k); /* borrowed from the argument */
        if (!k) {
            for (size_t j = 0; j < i; j++)
                jdecref(v[j].key);
            free(v);
            jdecref(items);
            return sl_jx_err(r, e, SL_EINVAL, "an item has no attribute '%s' to group by",
                             is_str(at) ? json_string_value(at->j) : "?");
        }
        v[i].key = sort_key(k, cs);
    }
    rc = sort_items(r, e, v, n, false);
    if (rc < 0) {
        keyed_free(v, n);
        jdecref(items);
        if (rc == -2)
            return -1;
        if (sl_jx_too_deep) {
            *out = sl_jx_json(json_array());
            return 0;
        }
        return sl_jx_err(r, e, SL_EINVAL, "the group keys do not compare");
    }
    json_t *res = json_array();
    for (size_t i = 0; i < n;) {
        size_t j = i;
        json_t *list = json_array();
        while (j < n && sl_jx_py_eq(v[j].key, v[i].key))
            json_array_append(list, v[j++].item);
        json_t *g = attr_of(v[i].item, at);
        json_t *grp = json_array();
        json_array_append(grp, cs || !g ? v[i].key : g);
        json_array_append_new(grp, list);
        sl_jx_mark_tuple(r, grp, TUP_GROUP);
        json_array_append_new(res, grp);
        i = j;
    }
    keyed_free(v, n);
    jdecref(items);
    *out = sl_jx_json(res);
    return 0;
}

/* filesizeformat(value, binary=False) */
FILTER(filesizeformat)
{
    long long i;
    double d;
    int t = sl_jx_num_of(x, &i, &d);
    if (!t && is_str(x)) {
        char *end;
        d = strtod(json_string_value(x->j), &end);
        t = *end ? 0 : 2;
    }
    if (!t)
        return sl_jx_err(r, e, SL_EINVAL, "filesizeformat needs a number, not '%s'",
                         sl_jx_py_type(x));
    if (!isfinite(d) || fabs(d) >= 9e18)
        return sl_jx_err(r, e, SL_EINVAL, "filesizeformat: %g bytes is out of range", d);
    bool binary = bool_arg(sl_jx_arg(a, 0, "binary"), false);
    double base = binary ? 1024 : 1000;
    static const char *const dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    char buf[64];
    if (d == 1) {
        snprintf(buf, sizeof buf, "1 Byte");
    } else if (d < base) {
        snprintf(buf, sizeof buf, "%lld Bytes", (long long)d);
    } else {
        int k = 0;
        double unit = base * base;
        for (k = 0; k < 7 && d >= unit; k++)
            unit *= base;
        snprintf(buf, sizeof buf, "%.1f %s", base * d / unit, binary ? bin[k] : dec[k]);
    }
    *out = jstr(buf, strlen(buf));
    return 0;
}

/* wordwrap(width=79, break_long_words=True, wrapstring=None,
 * break_on_hyphens=True): Python's textwrap.wrap on each line of the text
 * (expand_tabs and replace_whitespace off, as Jinja2 calls it), lines
 * joined by the wrapstring */
typedef struct {
    const char *s;
    size_t n, len; /* bytes, characters */
    bool space;
} chunk;

/* textwrap's character classes on code points: \w, letters ([^\d\W]) and
 * the punctuation its em-dash rule accepts */
static bool ww_space(unsigned long c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
static bool ww_letter(unsigned long c)
{
    return c < 0x80 ? (isalpha((int)c) || c == '_') : cp_alpha(c);
}
static bool ww_word(unsigned long c) { return ww_letter(c) || (c < 0x80 && isdigit((int)c)); }
static bool ww_punct(unsigned long c) { return ww_word(c) || (c && c < 0x80 && strchr("!\"'&.,?", (int)c)); }

/* the code point at byte i (0 past the end), and where the one before i starts */
static unsigned long ww_at(const char *s, size_t n, size_t i)
{
    size_t l;
    return i < n ? dec(s + i, n - i, &l) : 0;
}
static size_t ww_prev(const char *s, size_t i)
{
    while (i > 0 && ((unsigned char)s[--i] & 0xC0) == 0x80)
        ;
    return i;
}
static size_t ww_next(const char *s, size_t n, size_t i)
{
    size_t l;
    if (i >= n)
        return n;
    dec(s + i, n - i, &l);
    return i + l;
}

/* The end (byte) of the chunk starting at i: textwrap's wordsep_re
 * (hyphenated words split after the hyphen, em-dashes apart) or, without
 * break_on_hyphens, runs of space and of the rest. */
static size_t ww_chunk_end(const char *s, size_t n, size_t i, bool hyph)
{
    size_t j = i;
    if (ww_space(ww_at(s, n, i))) {
        while (j < n && ww_space(ww_at(s, n, j)))
            j = ww_next(s, n, j);
        return j;
    }
    if (!hyph) {
        while (j < n && !ww_space(ww_at(s, n, j)))
            j = ww_next(s, n, j);
        return j;
    }
    /* an em-dash between words: (?<=wp) -{2,} (?=\w) */
    if (s[i] == '-' && i + 1 < n && s[i + 1] == '-' && i > 0 &&
        ww_punct(ww_at(s, n, ww_prev(s, i)))) {
        size_t k = i;
        while (k < n && s[k] == '-')
            k++;
        if (k < n && ww_word(ww_at(s, n, k)))
            return k;
    }
    /* a word: the shortest run of non-space that ends at a hyphen between
     * letters, before space or the end, or before an em-dash */
    for (j = ww_next(s, n, i);; j = ww_next(s, n, j)) {
        if (j >= n || ww_space(ww_at(s, n, j)))
            return j;
        if (s[j] == '-') {
            size_t p1 = ww_prev(s, j), p2 = p1 > 0 ? ww_prev(s, p1) : 0,
                   p3 = p2 > 0 ? ww_prev(s, p2) : 0;
            bool before = (p1 > 0 && ww_letter(ww_at(s, n, p1)) && ww_letter(ww_at(s, n, p2))) ||
                          (p2 > 0 && ww_letter(ww_at(s, n, p1)) && s[p2] == '-' &&
                           ww_letter(ww_at(s, n, p3)));
            size_t a1 = j + 1, a2 = ww_next(s, n, a1), a3 = ww_next(s, n, a2);
            bool after = ww_letter(ww_at(s, n, a1)) &&
                         (ww_letter(ww_at(s, n, a2)) ||
                          (a2 < n && s[a2] == '-' && ww_letter(ww_at(s, n, a3))));
            if (before && after)
                return j + 1;
            if (j + 1 < n && s[j + 1] == '-' && ww_punct(ww_at(s, n, p1))) {
                size_t k = j;
                while (k < n && s[k] == '-')
                    k++;
                if (k < n && ww_word(ww_at(s, n, k)))
                    return j;
            }
        }
    }
}

/* textwrap.TextWrapper(width, expand_tabs=False, replace_whitespace=False,
 * break_long_words, break_on_hyphens).wrap(line), lines joined by sep */
static void wrap_line(const char *s, size_t n, size_t width, bool brk, bool hyph, const text *sep,
                      sl_buf *b)
{
    size_t nc = 0, ac = 16;
    chunk *c = sl_xmalloc(ac * sizeof *c);
    for (size_t i = 0; i < n;) {
        size_t j = ww_chunk_end(s, n, i, hyph);
        if (nc == ac) {
            ac *= 2;
            c = sl_xrealloc(c, ac * sizeof *c);
        }
        c[nc++] = (chunk){.s = s + i, .n = j - i, .len = ulen(s + i, j - i),
                          .space = ww_space(ww_at(s, n, i))};
        i = j;
    }
    /* one output line at a time: pieces are (pointer, bytes, characters) */
    size_t ap = 16, np;
    chunk *line = sl_xmalloc(ap * sizeof *line);
    size_t k = 0;
    bool lines = false;
    while (k < nc) {
        np = 0;
        size_t cur = 0;
        if (c[k].space && lines)
            k++;
        while (k < nc && cur + c[k].len <= width) {
            if (np == ap) {
                ap *= 2;
                line = sl_xrealloc(line, ap * sizeof *line);
            }
            line[np++] = c[k];
            cur += c[k++].len;
        }
        if (k < nc && c[k].len > width) {
            /* a chunk too long for any line */
            size_t left = width - cur; /* may be 0 */
            if (brk) {
                size_t end = left;
                if (hyph && c[k].len > left) {
                    /* rfind('-', 0, left), counted in characters */
                    size_t lim = uoff(c[k].s, c[k].n, left), h = lim;
                    while (h > 0 && c[k].s[h - 1] != '-')
                        h--;
                    if (h > 0) {
                        size_t hpos = h - 1; /* byte index of the hyphen */
                        bool other = false;
                        for (size_t q = 0; q < hpos; q++)
                            other |= c[k].s[q] != '-';
                        if (hpos > 0 && other)
                            end = ulen(c[k].s, hpos) + 1;
                    }
                }
                size_t off = uoff(c[k].s, c[k].n, end);
                if (np == ap) {
                    ap *= 2;
                    line = sl_xrealloc(line, ap * sizeof *line);
                }
                line[np++] = (chunk){.s = c[k].s, .n = off, .len = end, .space = c[k].space};
                c[k].s += off;
                c[k].n -= off;
                c[k].len -= end;
            } else if (!np) {
                line[np++] = c[k++];
            }
        }
        /* a last piece that is whitespace (or empty) is dropped */
        if (np && (line[np - 1].space || !line[np - 1].n))
            np--;
        if (np) {
            if (lines)
                sl_buf_add(b, sep->s, sep->n);
            for (size_t q = 0; q < np; q++)
                sl_buf_add(b, line[q].s, line[q].n);
            lines = true;
        }
    }
    free(line);
    free(c);
}

FILTER(wordwrap)
{
    long long width;
    if (int_param(r, e, sl_jx_arg(a, 0, "width"), "width", 79, &width) < 0)
        return -1;
    bool brk = bool_arg(sl_jx_arg(a, 1, "break_long_words"), true);
    jv *ws = sl_jx_arg(a, 2, "wrapstring");
    bool hyph = bool_arg(sl_jx_arg(a, 3, "break_on_hyphens"), true);
    if (width <= 0)
        return sl_jx_err(r, e, SL_EINVAL, "invalid width %lld (must be > 0)", width);
    text t, sep;
    text_of(x, &t);
    if (ws && !(ws->k == K_JSON && json_is_null(ws->j))) {
        text_of(ws, &sep);
    } else {
        sep.s = "\n";
        sep.n = 1;
        sl_buf_init(&sep.b, 0);
    }
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    /* str.splitlines: a final line break ends the last line, it does not
     * start another */
    bool firstline = true;
    for (size_t i = 0; i < t.n;) {
        size_t j = i;
        while (j < t.n && !strchr("\n\r\v\f\x1c\x1d\x1e", t.s[j]))
            j++;
        if (!firstline)
            sl_buf_add(&b, sep.s, sep.n);
        firstline = false;
        wrap_line(t.s + i, j - i, (size_t)width, brk, hyph, &sep, &b);
        if (j < t.n && t.s[j] == '\r' && j + 1 < t.n && t.s[j + 1] == '\n')
            j++;
        i = j + 1;
    }
    text_done(&t);
    text_done(&sep);
    *out = jbuf(&b);
    return 0;
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
                sl_jx_py_repr(ks, out);
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

FILTER(pprint)
{
    (void)a;
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    if (x->k == K_JSON)
        pformat(r, x->j, 0, &b, 0);
    else
        sl_jx_str(x, &b);
    if (r->halted) {
        sl_buf_release(&b);
        return -1;
    }
    if (b.toobig && !sl_jx_too_deep) {
        sl_buf_release(&b);
        return sl_jx_err(r, e, SL_ELIMIT, "the printed value is longer than the output cap");
    }
    *out = jbuf(&b);
    return 0;
}

/* xmlattr(d, autospace=True): ' key="value"' for each item that is not
 * None or undefined; keys with spaces, /, >, = are refused (Jinja2 3.1.3+
 * refuses those too; 3.1.2 let them through unescaped) */
FILTER(xmlattr)
{
    if (x->k != K_JSON || !json_is_object(x->j))
        return sl_jx_err(r, e, SL_EINVAL, "xmlattr needs a dict, not '%s'", sl_jx_py_type(x));
    bool autospace = bool_arg(sl_jx_arg(a, 0, "autospace"), true);
    STACKBUF(b, r->lim.max_output_chars * 4 + 16);
    const char *k;
    json_t *v;
    bool first = true;
    json_object_foreach(x->j, k, v) {
        if (json_is_null(v))
            continue;
        if (strpbrk(k, " /\t\n\f>=")) {
            sl_buf_release(&b);
            return sl_jx_err(r, e, SL_EINVAL, "invalid character in attribute name: '%s'", k);
        }
        if (!first || autospace)
            sl_buf_addc(&b, ' ');
        first = false;
        html_escape(k, strlen(k), &b);
        sl_buf_adds(&b, "=\"");
        STACKBUF(t, 0);
        sl_jx_py_str(v, &t);
        html_escape(t.data ? t.data : "", t.len, &b);
        sl_buf_release(&t);
        sl_buf_addc(&b, '"');
    }
    *out = jbuf(&b);
    return 0;
}

/* random(seq): one item, or undefined when there is none (Jinja2) */
FILTER(random)
{
    (void)a;
    static _Thread_local uint64_t state;
    if (!state)
        state = ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)&state ^ 0x9E3779B97F4A7C15ULL;
    state ^= state << 13; /* xorshift64 */
    state ^= state >> 7;
    state ^= state << 17;
    json_t *items;
    if (items_of(r, e, x, &items) < 0)
        return -1;
    size_t n = json_array_size(items);
    *out = n ? sl_jx_json(json_incref(json_array_get(items, (size_t)(state % n))))
             : sl_jx_undef("random");
    jdecref(items);
    return 0;
}

/* Each filter with the parameters Jinja2 3.1 gives it after the value
 * ("*": any); sl_jx_eval_filter refuses other keyword arguments and extra
 * positional ones, as Python's call would. */
static const jfilter filters[] = {
    {"abs", f_abs, ""},
    {"attr", f_attr, "name"},
    {"batch", f_batch, "linecount,fill_with"},
    {"capitalize", f_capitalize, ""},
    {"center", f_center, "width"},
    {"count", f_length, ""},
    {"d", f_default, "default_value,boolean"},
    {"default", f_default, "default_value,boolean"},
    {"dictsort", f_dictsort, "case_sensitive,by,reverse"},
    {"e", f_escape, ""},
    {"escape", f_escape, ""},
    {"filesizeformat", f_filesizeformat, "binary"},
    {"first", f_first, ""},
    {"float", f_float, "default"},
    {"forceescape", f_escape, ""},
    {"format", f_format, "*"},
    {"groupby", f_groupby, "attribute,default,case_sensitive"},
    {"indent", f_indent, "width,first,blank"},
    {"int", f_int, "default,base"},
    {"items", f_items, ""},
    {"join", f_join, "d,attribute"},
    {"last", f_last, ""},
    {"length", f_length, ""},
    {"list", f_list, ""},
    {"lower", f_lower, ""},
    {"map", f_map, "*"},
    {"max", f_max, "case_sensitive,attribute"},
    {"min", f_min, "case_sensitive,attribute"},
    {"pprint", f_pprint, ""},
    {"random", f_random, ""},
    {"reject", f_reject, "*"},
    {"rejectattr", f_rejectattr, "*"},
    {"replace", f_replace, "old,new,count"},
    {"reverse", f_reverse, ""},
    {"round", f_round, "precision,method"},
    {"safe", f_safe, ""},
    {"select", f_select, "*"},
    {"selectattr", f_selectattr, "*"},
    {"slice", f_slice, "slices,fill_with"},
    {"sort", f_sort, "reverse,case_sensitive,attribute"},
    {"string", f_string, ""},
    {"striptags", f_striptags, ""},
    {"sum", f_sum, "attribute,start"},
    {"title", f_title, ""},
    {"tojson", f_tojson, "indent"},
    {"trim", f_trim, "chars"},
    {"truncate", f_truncate, "length,killwords,end,leeway"},
    {"unique", f_unique, "case_sensitive,attribute"},
    {"upper", f_upper, ""},
    {"urlencode", f_urlencode, ""},
    {"wordcount", f_wordcount, ""},
    {"wordwrap", f_wordwrap, "width,break_long_words,wrapstring,break_on_hyphens"},
    {"xmlattr", f_xmlattr, "autospace"},
};

bool sl_jx_filter_args_ok(const jfilter *fl, int n, const char *const *kwn, int nkw)
{
    jargs a = {.n = n, .nkw = nkw, .kwn = (const char **)kwn};
    return sl_jx_check_filter_args(NULL, NULL, fl, &a) == 0;
}

/* -1 with an error when the call does not fit the filter's parameters
 * (r NULL: only say whether) */
int sl_jx_check_filter_args(jrender *r, const jnode *e, const jfilter *fl, const jargs *a)
{
    const char *ps = fl->params;
    if (!ps || !strcmp(ps, "*") || (!a->nkw && !a->n))
        return 0;
    int np = *ps ? 1 : 0;
    for (const char *q = ps; *q; q++)
        np += *q == ',';
    if (a->n > np)
        return !r ? -1
                  : sl_jx_err(r, e, SL_EINVAL,
                              "%s() takes at most %d argument%s after the value (%d given)",
                              fl->name, np, np == 1 ? "" : "s", a->n);
    for (int k = 0; k < a->nkw; k++) {
        const char *kw = a->kwn[k];
        size_t kl = strlen(kw);
        int idx = 0;
        const char *q = ps;
        bool found = false;
        while (*q) {
            const char *c = strchr(q, ',');
            size_t l = c ? (size_t)(c - q) : strlen(q);
            if (l == kl && !memcmp(q, kw, l)) {
                found = true;
                break;
            }
            idx++;
            if (!c)
                break;
            q = c + 1;
        }
        if (!found)
            return !r ? -1
                      : sl_jx_err(r, e, SL_EINVAL,
                                  "%s() got an unexpected keyword argument '%s' (it takes %s)",
                                  fl->name, kw, *ps ? ps : "no arguments");
        if (idx < a->n)
            return !r ? -1
                      : sl_jx_err(r, e, SL_EINVAL, "%s() got multiple values for argument '%s'",
                                  fl->name, kw);
    }
    return 0;
}

const jfilter *sl_jx_find_filter(const char *name)
{
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
        if (!strcmp(filters[i].name, name))
            return &filters[i];
    return NULL;
}

/* ---- tests ---- */

#define TEST(name) static int t_##name(jrender *r, const jnode *e, jv *x, jargs *a, bool *res)
#define JT(x) ((x)->k == K_JSON ? json_typeof((x)->j) : (json_type)-1)

TEST(defined) { (void)r, (void)e, (void)a; *res = x->k != K_UNDEF; return 0; }
TEST(undefined) { (void)r, (void)e, (void)a; *res = x->k == K_UNDEF; return 0; }
TEST(none) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_NULL; return 0; }
TEST(boolean) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_TRUE || JT(x) == JSON_FALSE; return 0; }
TEST(true) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_TRUE; return 0; }
TEST(false) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_FALSE; return 0; }
TEST(integer) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_INTEGER; return 0; }
TEST(float) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_REAL; return 0; }
TEST(number)
{
    (void)r, (void)e, (void)a;
    long long i;
    double d;
    *res = sl_jx_num_of(x, &i, &d) != 0;
    return 0;
}
TEST(string) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_STRING; return 0; }
TEST(mapping) { (void)r, (void)e, (void)a; *res = JT(x) == JSON_OBJECT || x->k == K_NS; return 0; }
TEST(iterable)
{
    (void)r, (void)e, (void)a;
    *res = JT(x) == JSON_ARRAY || JT(x) == JSON_OBJECT || JT(x) == JSON_STRING || x->k == K_UNDEF;
    return 0;
}
TEST(sequence)
{
    (void)r, (void)e, (void)a;
    *res = JT(x) == JSON_ARRAY || JT(x) == JSON_OBJECT || JT(x) == JSON_STRING;
    return 0;
}
TEST(callable)
{
    (void)r, (void)e, (void)a;
    *res = x->k == K_MACRO || x->k == K_CALLER || x->k == K_BUILTIN || x->k == K_JOINER ||
           x->k == K_LOOP;
    return 0;
}
TEST(filter)
{
    (void)r, (void)e, (void)a;
    *res = is_str(x) && sl_jx_find_filter(json_string_value(x->j));
    return 0;
}
TEST(test)
{
    (void)r, (void)e, (void)a;
    *res = is_str(x) && sl_jx_find_test(json_string_value(x->j));
    return 0;
}

static int int_test(jrender *r, const jnode *e, jv *x, long long *v)
{
    double d;
    int t = sl_jx_num_of(x, v, &d);
    if (t == 2) {
        *v = d2ll(d);
        return d == floor(d) ? 0 : 1;
    }
    if (!t)
        return x->k == K_UNDEF ? sl_jx_undef_err(r, e, x)
                               : sl_jx_err(r, e, SL_EINVAL, "the test needs a number, not '%s'",
                                           sl_jx_py_type(x));
    return 0;
}
TEST(even)
{
    (void)a;
    long long v;
    int rc = int_test(r, e, x, &v);
    *res = rc == 0 && v % 2 == 0;
    return rc < 0 ? -1 : 0;
}
TEST(odd)
{
    (void)a;
    long long v;
    int rc = int_test(r, e, x, &v);
    *res = rc == 0 && v % 2 != 0;
    return rc < 0 ? -1 : 0;
}
TEST(divisibleby)
{
    long long v, n = int_arg(sl_jx_arg(a, 0, "num"), 0);
    if (int_test(r, e, x, &v) < 0)
        return -1;
    if (n == 0)
        return sl_jx_err(r, e, SL_EINVAL, "divisibleby 0: division by zero");
    *res = v % n == 0;
    return 0;
}
TEST(sameas)
{
    (void)r, (void)e;
    jv *o = sl_jx_arg(a, 0, "other");
    if (!o) {
        *res = false;
        return 0;
    }
    /* identity: singletons and the same object */
    if (x->k == K_JSON && o->k == K_JSON &&
        (json_is_null(x->j) || json_is_boolean(x->j) || json_is_null(o->j) || json_is_boolean(o->j)))
        *res = json_typeof(x->j) == json_typeof(o->j);
    else
        *res = x->k == o->k && x->j == o->j && x->p == o->p;
    return 0;
}
TEST(in)
{
    jv *o = sl_jx_arg(a, 0, "seq");
    if (!o)
        return sl_jx_err(r, e, SL_EINVAL, "the in test needs a sequence");
    return sl_jx_contains(r, e, x, o, res);
}
TEST(eq)
{
    (void)r, (void)e;
    jv *o = sl_jx_arg(a, 0, "b");
    jv u = sl_jx_undef(NULL);
    *res = sl_jx_eq(x, o ? o : &u);
    return 0;
}
TEST(ne)
{
    int rc = t_eq(r, e, x, a, res);
    *res = !*res;
    return rc;
}
static int ord_test(jrender *r, const jnode *e, jv *x, jargs *a, int want, bool *res)
{
    jv *o = sl_jx_arg(a, 0, "b");
    if (!o || x->k != K_JSON || o->k != K_JSON)
        return sl_jx_err(r, e, SL_EINVAL, "the comparison needs two values");
    int c = sl_jx_py_cmp(x->j, o->j);
    if (c == -2)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' and '%s' do not compare", sl_jx_py_type(x),
                         sl_jx_py_type(o));
    *res = want == 0 ? c < 0 : want == 1 ? c <= 0 : want == 2 ? c > 0 : c >= 0;
    return 0;
}
TEST(lt) { return ord_test(r, e, x, a, 0, res); }
TEST(le) { return ord_test(r, e, x, a, 1, res); }
TEST(gt) { return ord_test(r, e, x, a, 2, res); }
TEST(ge) { return ord_test(r, e, x, a, 3, res); }

static bool cased(jv *x, bool upper)
{
    if (JT(x) != JSON_STRING)
        return false;
    const char *s = json_string_value(x->j);
    size_t n = json_string_length(x->j);
    bool any = false;
    for (size_t i = 0; i < n;) {
        size_t l;
        unsigned long c = dec(s + i, n - i, &l);
        unsigned long lo = cp_case(c, 0), up = cp_case(c, 1);
        if (lo != up) {
            any = true;
            if (upper ? c != up : c != lo)
                return false;
        }
        i += l;
    }
    return any;
}
TEST(lower) { (void)r, (void)e, (void)a; *res = cased(x, false); return 0; }
TEST(upper) { (void)r, (void)e, (void)a; *res = cased(x, true); return 0; }
TEST(escaped) { (void)r, (void)e, (void)a, (void)x; *res = false; return 0; }

static const jtest tests[] = {
    {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none},
    {"boolean", t_boolean}, {"true", t_true}, {"false", t_false}, {"integer", t_integer},
    {"float", t_float}, {"number", t_number}, {"string", t_string}, {"mapping", t_mapping},
    {"iterable", t_iterable}, {"sequence", t_sequence}, {"callable", t_callable},
    {"filter", t_filter}, {"test", t_test},
    {"even", t_even}, {"odd", t_odd}, {"divisibleby", t_divisibleby}, {"sameas", t_sameas},
    {"in", t_in}, {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
    {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
    {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
    {"lower", t_lower}, {"upper", t_upper}, {"escaped", t_escaped},
};

const jtest *sl_jx_find_test(const char *name)
{
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (!strcmp(tests[i].name, name))
            return &tests[i];
    return NULL;
}

/* ---- methods of str, list and dict ---- */

/* a new array with j's items in reverse order (steals j) */
static json_t *reversed(json_t *j)
{
    json_t *res = json_array();
    for (size_t i = json_array_size(j); i-- > 0;)
        json_array_append(res, json_array_get(j, i));
    jdecref(j);
    return res;
}

/* s[0..n) back to front (heap) */
static char *reversed_text(const char *s, size_t n)
{
    char *r = sl_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        r[i] = s[n - 1 - i];
    r[n] = 0;
    return r;
}

/* the last place p[0..l) occurs in s[0..n), or NULL: memmem on the
 * reversed texts (a memcmp at each place from the end was n * l) */
static const char *last_of(const char *s, size_t n, const char *p, size_t l)
{
    if (l > n)
        return NULL;
    if (!l)
        return s + n;
    char *rs = reversed_text(s, n), *rp = reversed_text(p, l);
    const char *h = memmem(rs, n, rp, l);
    const char *at = h ? s + (n - (size_t)(h - rs) - l) : NULL;
    free(rs);
    free(rp);
    return at;
}

static int split(jrender *r, const jnode *e, const char *s, size_t n, jargs *a, bool right, jv *out)
{
    (void)r, (void)e;
    jv *sepv = sl_jx_arg(a, 0, "sep");
    long long max = int_arg(sl_jx_arg(a, 1, "maxsplit"), -1);
    json_t *res = json_array();
    if (!sepv || (sepv->k == K_JSON && json_is_null(sepv->j))) {
        /* runs of whitespace; no empty strings */
        size_t i = 0, j = n;
        long long cnt = 0;
        if (!right) {
            while (i < n) {
                while (i < n && isspace((unsigned char)s[i]))
                    i++;
                if (i >= n)
                    break;
                if (max >= 0 && cnt >= max) { /* the rest as it is (Python) */
                    json_array_append_new(res, json_stringn_nocheck(s + i, n - i));
                    break;
                }
                size_t b = i;
                while (i < n && !isspace((unsigned char)s[i]))
                    i++;
                json_array_append_new(res, json_stringn_nocheck(s + b, i - b));
                cnt++;
            }
        } else {
            while (j > 0) {
                while (j > 0 && isspace((unsigned char)s[j - 1]))
                    j--;
                if (!j)
                    break;
                if (max >= 0 && cnt >= max) {
                    json_array_append_new(res, json_stringn_nocheck(s, j));
                    break;
                }
                size_t en = j;
                while (j > 0 && !isspace((unsigned char)s[j - 1]))
                    j--;
                json_array_append_new(res, json_stringn_nocheck(s + j, en - j));
                cnt++;
            }
            res = reversed(res);
        }
        *out = sl_jx_json(res);
        return 0;
    }
    text sp;
    text_of(sepv, &sp);
    if (!sp.n) {
        text_done(&sp);
        jdecref(res);
        return sl_jx_err(r, e, SL_EINVAL, "empty separator");
    }
    long long cnt = 0;
    if (!right) {
        size_t i = 0;
        for (;;) {
            const char *h = (max < 0 || cnt < max) ? memmem(s + i, n - i, sp.s, sp.n) : NULL;
            if (!h) {
                json_array_append_new(res, json_stringn_nocheck(s + i, n - i));
                break;
            }
            json_array_append_new(res, json_stringn_nocheck(s + i, (size_t)(h - s) - i));
            i = (size_t)(h - s) + sp.n;
            cnt++;
        }
    } else {
        /* from the right: a forward search of the reversed separator in
         * the reversed text (rs[i..q) is s[n-q..n-i)) */
        char *rs = reversed_text(s, n), *rp = reversed_text(sp.s, sp.n);
        size_t i = 0;
        for (;;) {
            const char *h = (max < 0 || cnt < max) ? memmem(rs + i, n - i, rp, sp.n) : NULL;
            if (!h) {
                json_array_append_new(res, json_stringn_nocheck(s, n - i));
                break;
            }
            size_t q = (size_t)(h - rs);
            json_array_append_new(res, json_stringn_nocheck(s + n - q, q - i));
            i = q + sp.n;
            cnt++;
        }
        free(rs);
        free(rp);
        res = reversed(res);
    }
    text_done(&sp);
    *out = sl_jx_json(res);
    return 0;
}

static bool affix(const char *s, size_t n, jv *p, bool end)
{
    json_t *j = p && p->k == K_JSON ? p->j : NULL;
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            jv x = {.k = K_JSON, .j = json_array_get(j, i)};
            if (affix(s, n, &x, end))
                return true;
        }
        return false;
    }
    if (!json_is_string(j))
        return false;
    size_t l = json_string_length(j);
    return l <= n && !memcmp(end ? s + n - l : s, json_string_value(j), l);
}

/* positional arguments Python's str methods take (min, max) */
static const struct {
    const char *name;
    int lo, hi;
} str_arity[] = {
    {"strip", 0, 1}, {"lstrip", 0, 1}, {"rstrip", 0, 1}, {"split", 0, 2}, {"rsplit", 0, 2},
    {"startswith", 1, 3}, {"endswith", 1, 3}, {"replace", 2, 3}, {"upper", 0, 0},
    {"lower", 0, 0}, {"casefold", 0, 0}, {"title", 0, 0}, {"capitalize", 0, 0},
    {"center", 1, 2}, {"find", 1, 3}, {"index", 1, 3}, {"rfind", 1, 3}, {"count", 1, 3},
    {"join", 1, 1}, {"splitlines", 0, 1}, {"zfill", 1, 1}, {"ljust", 1, 2}, {"rjust", 1, 2},
    {"partition", 1, 1}, {"rpartition", 1, 1}, {"swapcase", 0, 0}, {"isdigit", 0, 0},
    {"isdecimal", 0, 0}, {"isnumeric", 0, 0}, {"isalpha", 0, 0}, {"isalnum", 0, 0},
    {"isspace", 0, 0}, {"islower", 0, 0}, {"isupper", 0, 0},
};

static int str_method(jrender *r, const jnode *e, jv *self, const char *m, jargs *a, jv *out)
{
    const char *s = json_string_value(self->j);
    size_t n = json_string_length(self->j);
    r->work -= (long)(n >> 6); /* every method reads the string */
    for (size_t i = 0; i < sizeof str_arity / sizeof *str_arity; i++)
        if (!strcmp(m, str_arity[i].name)) {
            int lo = str_arity[i].lo, hi = str_arity[i].hi, got = a->n + a->nkw;
            if (got < lo || got > hi)
                return sl_jx_err(r, e, SL_EINVAL, "str.%s() takes %s %d argument%s (%d given)", m,
                                 lo == hi   ? "exactly"
                                 : got < lo ? "at least"
                                            : "at most",
                                 got < lo ? lo : hi, (got < lo ? lo : hi) == 1 ? "" : "s", got);
            break;
        }
    if (!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip")) {
        jv *c = sl_jx_arg(a, 0, "chars");
        bool have = c && is_str(c);
        size_t b, en;
        strip(s, n, have ? json_string_value(c->j) : NULL, have ? json_string_length(c->j) : 0,
              m[0] == 's' ? 3 : m[0] == 'l' ? 1 : 2, &b, &en);
        *out = jstr(s + b, en - b);
        return 0;
    }
    if (!strcmp(m, "split"))
        return split(r, e, s, n, a, false, out);
    if (!strcmp(m, "rsplit"))
        return split(r, e, s, n, a, true, out);
    if (!strcmp(m, "startswith") || !strcmp(m, "endswith")) {
        *out = sl_jx_json(json_boolean(affix(s, n, sl_jx_arg(a, 0, NULL), m[0] == 'e')));
        return 0;
    }
    if (!strcmp(m, "replace"))
        return f_replace(r, e, self, a, out);
    if (!strcmp(m, "upper"))
        return str_case(r, self, 1, out);
    if (!strcmp(m, "lower") || !strcmp(m, "casefold"))
        return str_case(r, self, 0, out);
    if (!strcmp(m, "title"))
        return str_case(r, self, 3, out);
    if (!strcmp(m, "capitalize"))
        return f_capitalize(r, e, self, a, out);
    if (!strcmp(m, "center"))
        return f_center(r, e, self, a, out);
    if (!strcmp(m, "find") || !strcmp(m, "index") || !strcmp(m, "rfind") || !strcmp(m, "count")) {
        jv *sub = sl_jx_arg(a, 0, NULL);
        if (!is_str(sub))
            return sl_jx_err(r, e, SL_EINVAL, "%s() needs a string argument", m);
        const char *p = json_string_value(sub->j);
        size_t l = json_string_length(sub->j);
        if (!strcmp(m, "count")) {
            long long c = 0;
            if (!l) {
                c = (long long)ulen(s, n) + 1;
            } else {
                for (size_t i = 0; i + l <= n;) {
                    const char *h = memmem(s + i, n - i, p, l);
                    if (!h)
                        break;
                    c++;
                    i = (size_t)(h - s) + l;
                }
            }
            *out = sl_jx_json(sl_jx_int(c));
            return 0;
        }
        const char *h = m[0] == 'r' ? last_of(s, n, p, l) : memmem(s, n, p, l);
        if (!h && m[0] == 'i')
            return sl_jx_err(r, e, SL_EINVAL, "substring not found");
        *out = sl_jx_json(sl_jx_int(h ? (long long)ulen(s, (size_t)(h - s)) : -1));
        return 0;
    }
    if (!strcmp(m, "join")) {
        jv *it = sl_jx_arg(a, 0, NULL);
        if (!it)
            return sl_jx_err(r, e, SL_EINVAL, "join() needs an iterable");
        json_t *items;
        if (sl_jx_items(r, e, it, &items) < 0)
            return -1;
        STACKBUF(b, r->lim.max_output_chars * 4 + 16);
        int rc = 0;
        for (size_t i = 0; i < json_array_size(items); i++) {
            json_t *x = json_array_get(items, i);
            if (!json_is_string(x)) {
                rc = sl_jx_err(r, e, SL_EINVAL, "sequence item %zu: expected str instance", i);
                break;
            }
            if (i)
                sl_buf_add(&b, s, n);
            sl_buf_add(&b, json_string_value(x), json_string_length(x));
        }
        jdecref(items);
        if (rc) {
            sl_buf_release(&b);
            return -1;
        }
        *out = jbuf(&b);
        return 0;
    }
    if (!strcmp(m, "format"))
        return py_format(r, e, s, a, out);
    if (!strcmp(m, "splitlines")) {
        json_t *res = json_array();
        size_t i = 0;
        while (i < n) {
            size_t j = i;
            while (j < n && s[j] != '\n' && s[j] != '\r')
                j++;
            json_array_append_new(res, json_stringn_nocheck(s + i, j - i));
            if (j < n && s[j] == '\r' && j + 1 < n && s[j + 1] == '\n')
                j++;
            i = j + 1;
        }
        *out = sl_jx_json(res);
        return 0;
    }
    if (!strncmp(m, "is", 2)) {
        bool ok = n > 0;
        for (size_t i = 0; i < n && ok;) {
            size_t l;
            unsigned long c = dec(s + i, n - i, &l);
            if (!strcmp(m, "isdigit") || !strcmp(m, "isdecimal") || !strcmp(m, "isnumeric"))
                ok = c >= '0' && c <= '9';
            else if (!strcmp(m, "isalpha"))
                ok = cp_alpha(c);
            else if (!strcmp(m, "isalnum"))
                ok = cp_alpha(c) || (c >= '0' && c <= '9');
            else if (!strcmp(m, "isspace"))
                ok = cp_space(c);
            else if (!strcmp(m, "islower") || !strcmp(m, "isupper"))
                break;
            else
                return sl_jx_err(r, e, SL_EINVAL, "'str' object has no attribute '%s'", m);
            i += l;
        }
        if (!strcmp(m, "islower") || !strcmp(m, "isupper"))
            ok = cased(self, m[2] == 'u');
        *out = sl_jx_json(json_boolean(ok));
        return 0;
    }
    if (!strcmp(m, "zfill") || !strcmp(m, "ljust") || !strcmp(m, "rjust")) {
        long long w = int_arg(sl_jx_arg(a, 0, "width"), 0);
        jv *fc = sl_jx_arg(a, 1, "fillchar");
        const char *fill = is_str(fc) ? json_string_value(fc->j) : m[0] == 'z' ? "0" : " ";
        long long l = (long long)ulen(s, n);
        STACKBUF(b, 0);
        long long pad = w > l && w < 1000000 ? w - l : 0;
        size_t pre = 0;
        if (m[0] == 'z' && n && (s[0] == '-' || s[0] == '+')) {
            sl_buf_addc(&b, s[0]);
            pre = 1;
        }
        if (m[0] == 'l')
            sl_buf_add(&b, s, n);
        for (long long i = 0; i < pad; i++)
            sl_buf_adds(&b, fill);
        if (m[0] != 'l')
            sl_buf_add(&b, s + pre, n - pre);
        *out = jbuf(&b);
        return 0;
    }
    if (!strcmp(m, "partition") || !strcmp(m, "rpartition")) {
        jv *sep = sl_jx_arg(a, 0, NULL);
        if (!is_str(sep) || !json_string_length(sep->j))
            return sl_jx_err(r, e, SL_EINVAL, "partition() needs a non-empty separator");
        const char *p = json_string_value(sep->j);
        size_t l = json_string_length(sep->j);
        const char *h = m[0] == 'r' ? last_of(s, n, p, l) : memmem(s, n, p, l);
        json_t *res = json_array();
        if (!h) {
            json_array_append_new(res, m[0] == 'r' ? json_string("") : json_stringn_nocheck(s, n));
            json_array_append_new(res, json_string(""));
            json_array_append_new(res, m[0] == 'r' ? json_stringn_nocheck(s, n) : json_string(""));
        } else {
            size_t k = (size_t)(h - s);
            json_array_append_new(res, json_stringn_nocheck(s, k));
            json_array_append_new(res, json_stringn_nocheck(p, l));
            json_array_append_new(res, json_stringn_nocheck(s + k + l, n - k - l));
        }
        sl_jx_mark_tuple(r, res, TUP_PLAIN); /* Python's partition gives a tuple */
        *out = sl_jx_json(res);
        return 0;
    }
    if (!strcmp(m, "swapcase")) {
        STACKBUF(b, 0);
        for (size_t i = 0; i < n;) {
            size_t l;
            unsigned long c = dec(s + i, n - i, &l);
            unsigned long lo = cp_case(c, 0), up = cp_case(c, 1);
            enc(c == lo ? up : lo, &b);
            i += l;
        }
        *out = jbuf(&b);
        return 0;
    }
    return sl_jx_err(r, e, SL_EINVAL, "'str' object has no attribute '%s'", m);
}

/* Python's index rules for insert/pop: negative from the end */
static long long py_index(long long i, long long n, bool clamp)
{
    if (i < 0)
        i += n;
    if (clamp)
        i = i < 0 ? 0 : i > n ? n : i;
    return i;
}

static int nargs(jrender *r, const jnode *e, const char *m, jargs *a, int lo, int hi)
{
    if (a->nkw)
        return sl_jx_err(r, e, SL_EINVAL, "%s() takes no keyword arguments", m);
    if (a->n < lo || a->n > hi)
        return sl_jx_err(r, e, SL_EINVAL, "%s() takes %s %d argument%s (%d given)", m,
                         lo == hi    ? "exactly"
                         : a->n < lo ? "at least"
                                     : "at most",
                         a->n < lo ? lo : hi, (a->n < lo ? lo : hi) == 1 ? "" : "s", a->n);
    return 0;
}


/* list and dict methods that change the value in place (the template's
 * render works on a copy of its context: see t->mutates) */
static int mutate(jrender *r, const jnode *e, json_t *j, const char *m, jargs *a, jv *out)
{
    *out = sl_jx_json(json_null());
    if (json_is_array(j)) {
        long long n = (long long)json_array_size(j);
        if (strcmp(m, "append") && strcmp(m, "pop"))
            r->work -= (long)n; /* the rest walk or move every item */
        else if (!strcmp(m, "pop") && a->n)
            r->work -= (long)(n >> 3); /* pop(i) moves the items after i */
        if ((!strcmp(m, "append") || !strcmp(m, "insert")) && n >= JINJA_MAX_ITEMS)
            return sl_jx_err(r, e, SL_ELIMIT,
                             "the list would have more than %d items (sluice's cap on "
                             "lists a template builds)",
                             JINJA_MAX_ITEMS);
        if (!strcmp(m, "append")) {
            if (nargs(r, e, m, a, 1, 1) < 0 || sl_jx_check_insert(r, e, j, &a->pos[0]) < 0)
                return -1;
            json_array_append_new(j, sl_jx_to_json(&a->pos[0]));
            return 0;
        }
        if (!strcmp(m, "extend")) {
            json_t *items;
            if (nargs(r, e, m, a, 1, 1) < 0 || sl_jx_items(r, e, &a->pos[0], &items) < 0)
                return -1;
            if ((size_t)n + json_array_size(items) > JINJA_MAX_ITEMS) {
                jdecref(items);
                return sl_jx_err(r, e, SL_ELIMIT,
                                 "the list would have more than %d items (sluice's "
                                 "cap on lists a template builds)",
                                 JINJA_MAX_ITEMS);
            }
            for (size_t i = 0; i < json_array_size(items); i++) {
                jv x = {.k = K_JSON, .j = json_array_get(items, i)};
                if (sl_jx_check_insert(r, e, j, &x) < 0) {
                    jdecref(items);
                    return -1;
                }
            }
            if (items == j) { /* xs.extend(xs) */
                json_t *c = json_copy(items);
                jdecref(items);
                items = c;
            }
            json_array_extend(j, items);
            jdecref(items);
            return 0;
        }
        if (!strcmp(m, "insert")) {
            long long i;
            if (nargs(r, e, m, a, 2, 2) < 0)
                return -1;
            if (sl_jx_num_of(&a->pos[0], &i, &(double){0}) != 1)
                return sl_jx_err(r, e, SL_EINVAL, "insert() needs an integer index");
            if (sl_jx_check_insert(r, e, j, &a->pos[1]) < 0)
                return -1;
            json_array_insert_new(j, (size_t)py_index(i, n, true), sl_jx_to_json(&a->pos[1]));
            return 0;
        }
        if (!strcmp(m, "pop")) {
            long long i = -1;
            if (nargs(r, e, m, a, 0, 1) < 0)
                return -1;
            if (a->n && sl_jx_num_of(&a->pos[0], &i, &(double){0}) != 1)
                return sl_jx_err(r, e, SL_EINVAL, "pop() needs an integer index");
            if (!n)
                return sl_jx_err(r, e, SL_EINVAL, "pop from empty list");
            i = py_index(i, n, false);
            if (i < 0 || i >= n)
                return sl_jx_err(r, e, SL_EINVAL, "pop index out of range");
            json_t *x = json_incref(json_array_get(j, (size_t)i));
            json_array_remove(j, (size_t)i);
            *out = sl_jx_json(x);
            return 0;
        }
        if (!strcmp(m, "remove")) {
            if (nargs(r, e, m, a, 1, 1) < 0)
                return -1;
            for (long long i = 0; i < n; i++) {
                jv it = {.k = K_JSON, .j = json_array_get(j, (size_t)i)};
                if (sl_jx_eq(&it, &a->pos[0])) {
                    json_t *x = json_incref(it.j);
                    json_array_remove(j, (size_t)i);
                    jdecref(x);
                    return 0;
                }
            }
            return sl_jx_err(r, e, SL_EINVAL, "list.remove(x): x not in list");
        }
        if (!strcmp(m, "clear") || !strcmp(m, "reverse") || !strcmp(m, "sort")) {
            bool rev = false;
            if (m[1] == 'o') {
                if (a->n)
                    return sl_jx_err(r, e, SL_EINVAL, "sort() takes no positional arguments");
                for (int k = 0; k < a->nkw; k++)
                    if (strcmp(a->kwn[k], "reverse"))
                        return sl_jx_err(r, e, SL_EINVAL,
                                         "sort() takes only reverse= in templates "
                                         "(no key functions)");
                rev = bool_arg(sl_jx_arg(a, -1, "reverse"), false);
            } else if (nargs(r, e, m, a, 0, 0) < 0) {
                return -1;
            }
            json_t *old = json_copy(j); /* holds every item while j is emptied */
            while (json_array_size(j))
                json_array_remove(j, json_array_size(j) - 1);
            if (m[0] == 'r') {
                for (size_t i = json_array_size(old); i-- > 0;)
                    json_array_append(j, json_array_get(old, i));
            } else if (m[1] == 'o') {
                size_t k;
                kv *v = keyed(old, NULL, true, &k);
                int rc = sort_items(r, e, v, k, rev);
                for (size_t i = 0; i < k; i++)
                    json_array_append(j, rc < 0 ? json_array_get(old, i) : v[i].item);
                keyed_free(v, k);
                if (rc < 0) {
                    jdecref(old);
                    return rc == -2 ? -1
                           : sl_jx_too_deep
                               ? 0
                               : sl_jx_err(r, e, SL_EINVAL, "the items do not compare");
                }
            }
            jdecref(old);
            return 0;
        }
        if (!strcmp(m, "copy")) {
            if (nargs(r, e, m, a, 0, 0) < 0)
                return -1;
            *out = sl_jx_json(json_copy(j));
            return 0;
        }
        return 1;
    }
    if (!strcmp(m, "update")) {
        json_t *src = NULL;
        if (a->n > 1)
            return sl_jx_err(r, e, SL_EINVAL, "update expected at most 1 argument, got %d", a->n);
        if (a->n == 1 && !(a->pos[0].k == K_JSON && (json_is_object(a->pos[0].j) ||
                                                     json_is_array(a->pos[0].j))))
            return sl_jx_err(r, e, SL_EINVAL, "update() needs a dict or a list of pairs");
        if (a->n == 1)
            src = a->pos[0].j;
        jv whole = {.k = K_JSON, .j = src};
        if (src && sl_jx_check_insert(r, e, j, &whole) < 0)
            return -1;
        for (int k = 0; k < a->nkw; k++)
            if (sl_jx_check_insert(r, e, j, &a->kwv[k]) < 0)
                return -1;
        if (json_is_object(src)) {
            const char *k;
            json_t *v;
            json_object_foreach(src, k, v) sl_jx_obj_set(j, k, json_incref(v));
        } else if (src) {
            for (size_t i = 0; i < json_array_size(src); i++) {
                json_t *pair = json_array_get(src, i);
                if (!json_is_array(pair) || json_array_size(pair) != 2 ||
                    !json_is_string(json_array_get(pair, 0)))
                    return sl_jx_err(r, e, SL_EINVAL,
                                     "update() needs pairs of a string key and a value");
                const json_t *ks = json_array_get(pair, 0);
                if (memchr(json_string_value(ks), 0, json_string_length(ks)))
                    return sl_jx_err(r, e, SL_EINVAL,
                                     "sluice's dict keys cannot hold NUL characters");
                sl_jx_obj_set(j, json_string_value(ks), json_incref(json_array_get(pair, 1)));
            }
        }
        for (int k = 0; k < a->nkw; k++)
            sl_jx_obj_set(j, a->kwn[k], sl_jx_to_json(&a->kwv[k]));
        return 0;
    }
    if (!strcmp(m, "pop") || !strcmp(m, "setdefault")) {
        if (nargs(r, e, m, a, 1, 2) < 0)
            return -1;
        if (!is_str(&a->pos[0]))
            return sl_jx_err(r, e, SL_EINVAL, "sluice's dict keys are strings");
        const char *k = json_string_value(a->pos[0].j);
        size_t kl = json_string_length(a->pos[0].j);
        if (memchr(k, 0, kl))
            return sl_jx_err(r, e, SL_EINVAL, "sluice's dict keys cannot hold NUL characters");
        json_t *v = json_object_getn(j, k, kl);
        if (m[0] == 'p') {
            if (!v && a->n < 2)
                return sl_jx_err(r, e, SL_EINVAL, "KeyError: '%s'", k);
            if (!v) {
                *out = sl_jx_copy(&a->pos[1]);
                return 0;
            }
            json_incref(v);
            json_object_deln(j, k, kl);
            sl_jx_free(out);
            *out = sl_jx_json(v);
            return 0;
        }
        if (v) {
            *out = sl_jx_json(json_incref(v));
            return 0;
        }
        jv none = sl_jx_json(json_null());
        jv *d = a->n > 1 ? &a->pos[1] : &none;
        if (sl_jx_check_insert(r, e, j, d) < 0)
            return -1;
        json_object_setn_new(j, k, kl, sl_jx_to_json(d));
        *out = sl_jx_copy(d);
        return 0;
    }
    if (!strcmp(m, "popitem")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        const char *last = NULL;
        size_t ll = 0;
        void *it = json_object_iter(j);
        for (; it; it = json_object_iter_next(j, it)) {
            last = json_object_iter_key(it);
            ll = json_object_iter_key_len(it);
        }
        if (!last)
            return sl_jx_err(r, e, SL_EINVAL, "popitem(): dictionary is empty");
        json_t *v = json_incref(json_object_getn(j, last, ll));
        json_t *pair = kv_pair(last, ll, v);
        sl_jx_mark_tuple(r, pair, TUP_PLAIN);
        json_object_deln(j, last, ll);
        jdecref(v);
        *out = sl_jx_json(pair);
        return 0;
    }
    if (!strcmp(m, "clear")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        json_t *old = json_copy(j);
        json_object_clear(j);
        jdecref(old);
        return 0;
    }
    if (!strcmp(m, "copy")) {
        if (nargs(r, e, m, a, 0, 0) < 0)
            return -1;
        *out = sl_jx_json(json_copy(j));
        return 0;
    }
    return 1;
}

int sl_jx_call_method(jrender *r, const jnode *e, jv *self, const char *m, jargs *a, jv *out)
{
    json_t *j = self->k == K_JSON || self->k == K_NS ? self->j : NULL;
    if (self->k == K_JSON && json_is_string(j))
        return str_method(r, e, self, m, a, out);
    if (self->k == K_JSON && (json_is_array(j) || json_is_object(j))) {
        int rc = mutate(r, e, j, m, a, out);
        if (rc <= 0)
            return rc;
        sl_jx_free(out);
    }
    if (json_is_object(j)) {
        if (!strcmp(m, "items")) {
            if (f_items(r, e, self, a, out) < 0)
                return -1;
            sl_jx_mark_tuple(r, out->j, VIEW_ITEMS);
            return 0;
        }
        if (!strcmp(m, "keys") || !strcmp(m, "values")) {
            json_t *res = json_array();
            const char *k;
            json_t *v;
            json_object_foreach(j, k, v)
                json_array_append_new(res, m[0] == 'k' ? json_string_nocheck(k) : json_incref(v));
            sl_jx_mark_tuple(r, res, m[0] == 'k' ? VIEW_KEYS : VIEW_VALUES);
            *out = sl_jx_json(res);
            return 0;
        }
        if (!strcmp(m, "get")) {
            jv *k = sl_jx_arg(a, 0, NULL), *d = sl_jx_arg(a, 1, "default");
            json_t *v = is_str(k) ? json_object_get(j, json_string_value(k->j)) : NULL;
            *out = v ? sl_jx_json(json_incref(v)) : d ? sl_jx_copy(d) : sl_jx_json(json_null());
            return 0;
        }
        json_t *f = json_object_get(j, m);
        if (f)
            return sl_jx_err(r, e, SL_EINVAL, "'%s' object is not callable",
                             json_is_string(f) ? "str" : "value");
        return sl_jx_err(r, e, SL_EINVAL, "'dict object' has no attribute '%s'", m);
    }
    if (json_is_array(j)) {
        if (!strcmp(m, "count") || !strcmp(m, "index")) {
            jv *x = sl_jx_arg(a, 0, NULL);
            long long c = 0, at = -1;
            r->work -= (long)json_array_size(j);
            for (size_t i = 0; x && i < json_array_size(j); i++) {
                jv it = {.k = K_JSON, .j = json_array_get(j, i)};
                if (sl_jx_eq(&it, x)) {
                    c++;
                    if (at < 0)
                        at = (long long)i;
                }
            }
            if (m[0] == 'i' && at < 0)
                return sl_jx_err(r, e, SL_EINVAL, "value is not in list");
            *out = sl_jx_json(sl_jx_int(m[0] == 'c' ? c : at));
            return 0;
        }
        return sl_jx_err(r, e, SL_EINVAL, "'list object' has no attribute '%s'", m);
    }
    return sl_jx_err(r, e, SL_EINVAL, "'%s object' has no attribute '%s'", sl_jx_py_type(self), m);
}
