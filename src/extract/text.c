/*
 * text — the text formats of the document extractor: plain text, JSON,
 * YAML, CSV, .properties and WebVTT, each giving the text Dify's graphon
 * node gives (docs/documents.md; /work notes §2, §3).
 *
 * Decoding.  Dify guesses the encoding with charset_normalizer; sluice
 * takes bytes that are valid UTF-8 as they are (a byte order mark is
 * kept, as Dify keeps it) and reads anything else as cp1252, its five
 * undefined bytes as latin-1, which is what charset_normalizer's latin_1
 * and cp1252 candidates amount to.  Exact parity with charset_normalizer
 * on other encodings (Shift-JIS, UTF-16 without a BOM) is not a goal.
 *
 * Every reader writes through a sink that stops at lim->max_output, so a
 * small hostile input (deep JSON, a YAML alias bomb) cannot grow the text
 * past the limit; nesting is bounded too.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract_int.h"

/* ---- decoding ---------------------------------------------------------- */

typedef struct {
    const char *s;
    size_t n;
    char *own;    /* s when the text was converted */
    bool utf8;    /* the bytes were valid UTF-8 */
} text;

/* The length of the valid UTF-8 sequence at p (Python's decoder: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    size_t k = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if (c == 0xE0 && p[1] < 0xA0)
        return 0;
    if (c == 0xED && p[1] > 0x9F)
        return 0;
    if (c == 0xF0 && p[1] < 0x90)
        return 0;
    if (c == 0xF4 && p[1] > 0x8F)
        return 0;
    return k;
}

static bool valid_utf8(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(p + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* cp1252's 0x80-0x9F; the five bytes it leaves undefined are latin-1. */
static const uint16_t cp1252_hi[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The text of the bytes: as they are when valid UTF-8, else cp1252 (or,
 * with drop, UTF-8 with the invalid bytes dropped: Python's
 * decode("utf-8", errors="ignore")). */
static void decode(const void *data, size_t len, bool drop, text *t)
{
    const unsigned char *p = data;
    memset(t, 0, sizeof *t);
    if (valid_utf8(p, len)) {
        t->s = data;
        t->n = len;
        t->utf8 = true;
        return;
    }
    char *o = sl_xmalloc(len * 3 + 1);
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(p + i, len - i);
        if (drop) {
            if (k) {
                memcpy(o + n, p + i, k);
                n += k;
                i += k;
            } else {
                i++;
            }
            continue;
        }
        unsigned c = p[i++];
        n += put_utf8(o + n, c >= 0x80 && c < 0xA0 ? cp1252_hi[c - 0x80] : c);
    }
    o[n] = 0;
    t->s = t->own = o;
    t->n = n;
}

/* The code point at s[*i] (the text is valid UTF-8), and *i past it. */
static uint32_t next_cp(const char *s, size_t n, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s + *i;
    size_t k = utf8_seq(p, n - *i);
    if (k <= 1) {
        (*i)++;
        return p[0];
    }
    uint32_t cp = p[0] & (0x7F >> k);
    for (size_t j = 1; j < k; j++)
        cp = cp << 6 | (p[j] & 0x3F);
    *i += k;
    return cp;
}

/* The code points of s[0..n). */
static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Python's str.isspace. */
static bool py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Python's str.splitlines boundaries (\r\n counts as one). */
static bool py_linebreak(uint32_t c)
{
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
           c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
}

/* The next line of str.splitlines() from *i: [*b, *e), *i past its break.
 * false at the end. */
static bool next_line(const char *s, size_t n, size_t *i, size_t *b, size_t *e)
{
    if (*i >= n)
        return false;
    *b = *i;
    while (*i < n) {
        size_t at = *i;
        uint32_t c = next_cp(s, n, i);
        if (py_linebreak(c)) {
            *e = at;
            if (c == '\r' && *i < n && s[*i] == '\n')
                (*i)++;
            return true;
        }
    }
    *e = n;
    return true;
}

/* str.strip(): [*b, *e) narrowed. */
static void py_strip(const char *s, size_t *b, size_t *e)
{
    while (*b < *e) {
        size_t j = *b;
        if (!py_space(next_cp(s, *e, &j)))
            break;
        *b = j;
    }
    while (*e > *b) {
        size_t j = *e - 1;
        while (j > *b && ((unsigned char)s[j] & 0xC0) == 0x80)
            j--;
        size_t k = j;
        if (!py_space(next_cp(s, *e, &k)))
            break;
        *e = j;
    }
}

/* ---- output ------------------------------------------------------------ */

typedef struct {
    sl_buf *out;
    size_t at, max;
    const char *what;
    sl_err *err;
} sink;

static void sink_init(sink *k, sl_buf *out, const sl_extract_limits *lim, const char *what,
                      sl_err *err)
{
    k->out = out;
    k->at = out->len;
    k->max = lim->max_output;
    k->what = what;
    k->err = err;
}

static int sink_full(sink *k)
{
    return sl_err_limit(k->err, SL_ELIMIT, "extract_max_output",
                        "the %s file's text is over %zu bytes; raise extract_max_output or "
                        "give a smaller file",
                        k->what, k->max);
}

static int put(sink *k, const void *p, size_t n)
{
    if (n > k->max - (k->out->len - k->at) || sl_buf_add(k->out, p, n))
        return sink_full(k);
    return 0;
}

static int puts_(sink *k, const char *s)
{
    return put(k, s, strlen(s));
}

static int putc_(sink *k, char c)
{
    return put(k, &c, 1);
}

static int put_spaces(sink *k, size_t n)
{
    static const char sp[] = "                                ";
    while (n) {
        size_t m = n < 32 ? n : 32;
        if (put(k, sp, m))
            return -1;
        n -= m;
    }
    return 0;
}

/* ---- plain text (§3.1) ------------------------------------------------- */

int sl_extract_plain(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                     sl_err *err)
{
    text t;
    decode(data, len, false, &t);
    sink k;
    sink_init(&k, out, lim, "plain text", err);
    int rc = put(&k, t.s, t.n);
    free(t.own);
    return rc;
}

/* ---- JSON (§3.2) ------------------------------------------------------- */

/* Python's json module: json.loads, then json.dumps(indent=2,
 * ensure_ascii=False).  A tree is kept because a duplicate key takes the
 * first key's place with the last value.  Integers and the text of floats
 * are kept as written; floats print as Python's repr. */

/* Python gives up near its recursion limit (1000 frames, some taken by the
 * caller); sluice stops at this depth with Python's message. */
#define JSON_MAX_DEPTH 900

enum { J_NULL, J_TRUE, J_FALSE, J_INT, J_FLOAT, J_STR, J_ARR, J_OBJ };

typedef struct jnode jnode;
typedef struct {
    char *key;
    size_t klen;
    jnode *val;
} jmember;

struct jnode {
    int type;
    char *s;     /* J_STR: the decoded text; J_INT/J_FLOAT: the number's text */
    size_t n;
    double d;    /* J_FLOAT */
    jmember *m;  /* J_ARR (key NULL) and J_OBJ, in order */
    size_t nm, cap;
    size_t *hash, hcap; /* J_OBJ with many keys: slots of m index + 1 */
};

typedef struct {
    const char *s;
    size_t n;
    int depth;
    sl_err *err;
} jparser;

static void jfree(jnode *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->nm; i++) {
        free(j->m[i].key);
        jfree(j->m[i].val);
    }
    free(j->m);
    free(j->hash);
    free(j->s);
    free(j);
}

/* Python's JSONDecodeError text: "msg: line L column C (char N)", the
 * positions in code points. */
static int jerr(jparser *p, const char *msg, size_t pos)
{
    size_t line = 1, lastnl = 0, chr = 0;
    bool nl = false;
    for (size_t i = 0; i < pos && i < p->n; i++) {
        if (((unsigned char)p->s[i] & 0xC0) == 0x80)
            continue;
        if (p->s[i] == '\n') {
            line++;
            lastnl = chr;
            nl = true;
        }
        chr++;
    }
    size_t col = nl ? chr - lastnl : chr + 1;
    return sl_err_set(p->err, SL_EPARSE, "%s: line %zu column %zu (char %zu)", msg, line, col,
                      chr);
}

static size_t jws(jparser *p, size_t i)
{
    while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t' || p->s[i] == '\n' || p->s[i] == '\r'))
        i++;
    return i;
}

static jnode *jnew(int type)
{
    jnode *j = sl_xcalloc(1, sizeof *j);
    j->type = type;
    return j;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Four hex digits at s[i..i+4), or -1. */
static long hex4(const char *s, size_t i)
{
    long v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = hexval((unsigned char)s[i + k]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* A string whose opening quote is at s[at]; *end past its closing quote. */
static int jstring(jparser *p, size_t at, size_t *end, char **out, size_t *outn)
{
    sl_buf b;
    sl_buf_init(&b, (size_t)-1);
    size_t i = at + 1;
    for (;;) {
        size_t j = i;
        while (j < p->n && p->s[j] != '"' && p->s[j] != '\\') {
            if ((unsigned char)p->s[j] <= 0x1F) {
                sl_buf_release(&b);
                return jerr(p, "Invalid control character at", j);
            }
            j++;
        }
        if (j >= p->n) {
            sl_buf_release(&b);
            return jerr(p, "Unterminated string starting at", at);
        }
        sl_buf_add(&b, p->s + i, j - i);
        if (p->s[j] == '"') {
            *end = j + 1;
            break;
        }
        j++; /* past the backslash */
        if (j >= p->n) {
            sl_buf_release(&b);
            return jerr(p, "Unterminated string starting at", at);
        }
        char c = p->s[j];
        if (c != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *f = strchr(from, c);
            if (!f || !c) {
                sl_buf_release(&b);
                return jerr(p, "Invalid \\escape", j - 1);
            }
            sl_buf_addc(&b, to[f - from]);
            i = j + 1;
            continue;
        }
        /* j at 'u' */
        size_t e = j + 5;
        long cp = e >= p->n ? -1 : hex4(p->s, j + 1);
        if (cp < 0) {
            sl_buf_release(&b);
            return jerr(p, "Invalid \\uXXXX escape", j);
        }
        if (cp >= 0xD800 && cp <= 0xDBFF && e + 6 < p->n && p->s[e] == '\\' &&
            p->s[e + 1] == 'u') {
            long c2 = hex4(p->s, e + 2);
            if (c2 < 0) {
                sl_buf_release(&b);
                return jerr(p, "Invalid \\uXXXX escape", e + 1);
            }
            if (c2 >= 0xDC00 && c2 <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (c2 - 0xDC00);
                e += 6;
            }
        }
        /* a lone surrogate is kept as its three bytes (valid UTF-8 never
         * has them), so "\ud800" and "\ud83d" stay two keys */
        char u[4];
        sl_buf_add(&b, u, put_utf8(u, (uint32_t)cp));
        i = e;
    }
    *outn = b.len;
    *out = b.data ? b.data : sl_xstrdup("");
    return 0;
}

static jmember *jobj_find(jnode *o, const char *k, size_t kn);
static void jobj_index(jnode *o, size_t idx);

static int jvalue(jparser *p, size_t i, size_t *end, jnode **out);

static int jcontainer(jparser *p, size_t i, size_t *end, jnode **out)
{
    bool obj = p->s[i] == '{';
    if (++p->depth > JSON_MAX_DEPTH)
        return sl_err_set(p->err, SL_EPARSE,
                          "maximum recursion depth exceeded while decoding a JSON %s from a "
                          "unicode string",
                          obj ? "object" : "array");
    jnode *j = jnew(obj ? J_OBJ : J_ARR);
    char close = obj ? '}' : ']';
    i = jws(p, i + 1);
    if (i >= p->n || p->s[i] != close) {
        for (;;) {
            char *key = NULL;
            size_t kn = 0;
            if (obj) {
                if (i >= p->n || p->s[i] != '"') {
                    jerr(p, "Expecting property name enclosed in double quotes", i);
                    goto fail;
                }
                if (jstring(p, i, &i, &key, &kn))
                    goto fail;
                i = jws(p, i);
                if (i >= p->n || p->s[i] != ':') {
                    free(key);
                    jerr(p, "Expecting ':' delimiter", i);
                    goto fail;
                }
                i = jws(p, i + 1);
            }
            jnode *v;
            if (jvalue(p, i, &i, &v)) {
                free(key);
                goto fail;
            }
            jmember *dup = obj ? jobj_find(j, key, kn) : NULL;
            if (dup) {
                jfree(dup->val);
                dup->val = v;
                free(key);
            } else {
                if (j->nm == j->cap) {
                    j->cap = j->cap ? j->cap * 2 : 4;
                    j->m = sl_xrealloc(j->m, j->cap * sizeof *j->m);
                }
                j->m[j->nm++] = (jmember){key, kn, v};
                if (obj)
                    jobj_index(j, j->nm - 1);
            }
            i = jws(p, i);
            if (i < p->n && p->s[i] == close)
                break;
            if (i >= p->n || p->s[i] != ',') {
                jerr(p, "Expecting ',' delimiter", i);
                goto fail;
            }
            i = jws(p, i + 1);
        }
    }
    *end = i + 1;
    *out = j;
    p->depth--;
    return 0;
fail:
    jfree(j);
    return -1;
}

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void jobj_rehash(jnode *o)
{
    free(o->hash);
    o->hcap = 64;
    while (o->hcap < o->nm * 2)
        o->hcap *= 2;
    o->hash = sl_xcalloc(o->hcap, sizeof *o->hash);
    for (size_t i = 0; i < o->nm; i++) {
        size_t h = (size_t)fnv(o->m[i].key, o->m[i].klen) & (o->hcap - 1);
        while (o->hash[h])
            h = (h + 1) & (o->hcap - 1);
        o->hash[h] = i + 1;
    }
}

/* Small objects are searched in order; past 16 keys through a hash. */
static void jobj_index(jnode *o, size_t idx)
{
    if (o->nm <= 16)
        return;
    if (!o->hash || o->nm * 2 > o->hcap) {
        jobj_rehash(o);
        return;
    }
    size_t h = (size_t)fnv(o->m[idx].key, o->m[idx].klen) & (o->hcap - 1);
    while (o->hash[h])
        h = (h + 1) & (o->hcap - 1);
    o->hash[h] = idx + 1;
}

static jmember *jobj_find(jnode *o, const char *k, size_t kn)
{
    if (!o->hash) {
        for (size_t i = 0; i < o->nm; i++)
            if (o->m[i].klen == kn && !memcmp(o->m[i].key, k, kn))
                return &o->m[i];
        return NULL;
    }
    for (size_t h = (size_t)fnv(k, kn) & (o->hcap - 1); o->hash[h];
         h = (h + 1) & (o->hcap - 1)) {
        jmember *m = &o->m[o->hash[h] - 1];
        if (m->klen == kn && !memcmp(m->key, k, kn))
            return m;
    }
    return NULL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Python's int() refuses more digits than this (sys.int_info). */
#define PY_INT_MAX_DIGITS 4300

static int jnumber(jparser *p, size_t start, size_t *end, jnode **out)
{
    const char *s = p->s;
    size_t i = start, n = p->n;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return jerr(p, "Expecting value", start);
    if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && is_digit(s[i]))
            i++;
    } else if (s[i] == '0') {
        i++;
    } else {
        return jerr(p, "Expecting value", start);
    }
    bool flt = false;
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
        flt = true;
        i += 2;
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i + 1 < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i++;
        if (i + 1 < n && (s[i] == '-' || s[i] == '+'))
            i++;
        while (i < n && is_digit(s[i]))
            i++;
        if (is_digit(s[i - 1]))
            flt = true;
        else
            i = e;
    }
    jnode *j = jnew(flt ? J_FLOAT : J_INT);
    if (flt) {
        char *t = sl_xstrndup(s + start, i - start);
        j->d = strtod(t, NULL);
        free(t);
    } else {
        size_t b = start + (s[start] == '-');
        if (i - b > PY_INT_MAX_DIGITS) {
            free(j);
            return sl_err_set(p->err, SL_EPARSE,
                              "Exceeds the limit (%d digits) for integer string conversion: "
                              "value has %zu digits; use sys.set_int_max_str_digits() to "
                              "increase the limit",
                              PY_INT_MAX_DIGITS, i - b);
        }
        if (i - b == 1 && s[b] == '0')
            j->s = sl_xstrdup("0"); /* -0 is 0 */
        else
            j->s = sl_xstrndup(s + start, i - start);
        j->n = strlen(j->s);
    }
    *end = i;
    *out = j;
    return 0;
}

static bool at_word(jparser *p, size_t i, const char *w)
{
    size_t n = strlen(w);
    return i + n <= p->n && !memcmp(p->s + i, w, n);
}

static int jvalue(jparser *p, size_t i, size_t *end, jnode **out)
{
    if (i >= p->n)
        return jerr(p, "Expecting value", i);
    static const struct {
        const char *w;
        int type;
        double d;
    } words[] = {
        {"null", J_NULL, 0},         {"true", J_TRUE, 0},          {"false", J_FALSE, 0},
        {"NaN", J_FLOAT, NAN},       {"Infinity", J_FLOAT, INFINITY},
        {"-Infinity", J_FLOAT, -INFINITY},
    };
    switch (p->s[i]) {
    case '"': {
        jnode *j = jnew(J_STR);
        if (jstring(p, i, end, &j->s, &j->n)) {
            free(j);
            return -1;
        }
        *out = j;
        return 0;
    }
    case '{':
    case '[':
        return jcontainer(p, i, end, out);
    default:
        break;
    }
    for (size_t w = 0; w < sizeof words / sizeof *words; w++)
        if (at_word(p, i, words[w].w)) {
            *out = jnew(words[w].type);
            (*out)->d = words[w].d;
            *end = i + strlen(words[w].w);
            return 0;
        }
    return jnumber(p, i, end, out);
}

/* Python's repr of a float: the shortest digits that read back the same,
 * in fixed notation when the decimal point falls within 16 digits. */
static void py_float_repr(double d, char *o, size_t on)
{
    if (isnan(d)) {
        snprintf(o, on, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(o, on, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* buf: [-]d[.ddd]e[+-]XX */
    char digits[24];
    size_t nd = 0;
    const char *q = buf;
    bool neg = *q == '-';
    if (neg)
        q++;
    for (; *q && *q != 'e'; q++)
        if (is_digit(*q))
            digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    int exp10 = atoi(q + 1);
    int decpt = exp10 + 1;
    char *w = o;
    char *lim = o + on - 1;
#define PUTC(c)                                                                            \
    do {                                                                                   \
        if (w < lim)                                                                       \
            *w++ = (c);                                                                    \
    } while (0)
    if (neg)
        PUTC('-');
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            PUTC('0');
            PUTC('.');
            for (int z = 0; z < -decpt; z++)
                PUTC('0');
            for (size_t k = 0; k < nd; k++)
                PUTC(digits[k]);
        } else if ((size_t)decpt >= nd) {
            for (size_t k = 0; k < nd; k++)
                PUTC(digits[k]);
            for (size_t z = nd; z < (size_t)decpt; z++)
                PUTC('0');
            PUTC('.');
            PUTC('0');
        } else {
            for (size_t k = 0; k < nd; k++) {
                if (k == (size_t)decpt)
                    PUTC('.');
                PUTC(digits[k]);
            }
        }
    } else {
        PUTC(digits[0]);
        if (nd > 1) {
            PUTC('.');
            for (size_t k = 1; k < nd; k++)
                PUTC(digits[k]);
        }
        int e = decpt - 1;
        PUTC('e');
        PUTC(e < 0 ? '-' : '+');
        char eb[16];
        snprintf(eb, sizeof eb, "%02d", e < 0 ? -e : e);
        for (char *c = eb; *c; c++)
            PUTC(*c);
    }
#undef PUTC
    *w = 0;
}

/* json.dumps's string: " \\ and the C0 controls escaped, all else raw.
 * A lone surrogate, which Python keeps but UTF-8 cannot hold, is written
 * as U+FFFD. */
static int jput_string(sink *k, const char *s, size_t n)
{
    if (putc_(k, '"'))
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xED && i + 2 < n && (unsigned char)s[i + 1] >= 0xA0) {
            if (put(k, s + run, i - run) || puts_(k, "\xEF\xBF\xBD"))
                return -1;
            i += 2;
            run = i + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (put(k, s + run, i - run))
            return -1;
        run = i + 1;
        char e[8];
        switch (c) {
        case '"': strcpy(e, "\\\""); break;
        case '\\': strcpy(e, "\\\\"); break;
        case '\n': strcpy(e, "\\n"); break;
        case '\r': strcpy(e, "\\r"); break;
        case '\t': strcpy(e, "\\t"); break;
        case '\b': strcpy(e, "\\b"); break;
        case '\f': strcpy(e, "\\f"); break;
        default: snprintf(e, sizeof e, "\\u%04x", c); break;
        }
        if (puts_(k, e))
            return -1;
    }
    if (put(k, s + run, n - run))
        return -1;
    return putc_(k, '"');
}

static int jprint(sink *k, const jnode *j, size_t level)
{
    switch (j->type) {
    case J_NULL: return puts_(k, "null");
    case J_TRUE: return puts_(k, "true");
    case J_FALSE: return puts_(k, "false");
    case J_INT: return put(k, j->s, j->n);
    case J_FLOAT: {
        char b[48];
        py_float_repr(j->d, b, sizeof b);
        return puts_(k, b);
    }
    case J_STR: return jput_string(k, j->s, j->n);
    default: break;
    }
    bool obj = j->type == J_OBJ;
    if (!j->nm)
        return puts_(k, obj ? "{}" : "[]");
    if (putc_(k, obj ? '{' : '['))
        return -1;
    for (size_t i = 0; i < j->nm; i++) {
        if (puts_(k, i ? ",\n" : "\n") || put_spaces(k, 2 * (level + 1)))
            return -1;
        if (obj && (jput_string(k, j->m[i].key, j->m[i].klen) || puts_(k, ": ")))
            return -1;
        if (jprint(k, j->m[i].val, level + 1))
            return -1;
    }
    if (putc_(k, '\n') || put_spaces(k, 2 * level))
        return -1;
    return putc_(k, obj ? '}' : ']');
}

static int json_text(const text *t, sink *k, sl_err *err)
{
    jparser p = {t->s, t->n, 0, err};
    if (t->n >= 3 && !memcmp(t->s, "\xEF\xBB\xBF", 3))
        return jerr(&p, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    jnode *root;
    size_t end;
    if (jvalue(&p, jws(&p, 0), &end, &root))
        return -1;
    end = jws(&p, end);
    if (end != p.n) {
        jfree(root);
        return jerr(&p, "Extra data", end);
    }
    int rc = jprint(k, root, 0);
    jfree(root);
    return rc;
}

int sl_extract_json(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    sink k;
    sink_init(&k, out, lim, "JSON", err);
    text t;
    decode(data, len, false, &t);
    int rc = json_text(&t, &k, err);
    free(t.own);
    if (rc && !t.utf8 && err->code != SL_ELIMIT) {
        /* Dify tries once more with the bytes as UTF-8, invalid ones
         * dropped; the first error is the one reported. */
        sl_err first = {0};
        sl_err_move(&first, err);
        out->len = k.at;
        decode(data, len, true, &t);
        rc = json_text(&t, &k, err);
        free(t.own);
        if (rc && err->code != SL_ELIMIT)
            sl_err_move(err, &first);
        sl_err_clear(&first);
    }
    return rc;
}

/* ---- CSV (§3.7) -------------------------------------------------------- */

/* Python's csv.reader, excel dialect, over io.StringIO(text): the lines
 * are split at \n alone, and a \r inside an unquoted field is an error
 * as in Python.  Each row is written as it is read. */

#define CSV_FIELD_LIMIT 131072 /* csv.field_size_limit() */

enum { C_START_RECORD, C_START_FIELD, C_IN_FIELD, C_IN_QUOTED, C_QUOTE_IN_QUOTED, C_EAT_CRNL };

typedef struct {
    sl_buf field;       /* the field being read */
    size_t field_cps;
    char **cells;       /* the row being read */
    size_t *cell_n, *cell_cps, ncells, cap;
    int state;
    size_t rows;
    sink *k;
    sl_err *err;
} csvr;

static void csv_save(csvr *c)
{
    if (c->ncells == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->cells = sl_xrealloc(c->cells, c->cap * sizeof *c->cells);
        c->cell_n = sl_xrealloc(c->cell_n, c->cap * sizeof *c->cell_n);
        c->cell_cps = sl_xrealloc(c->cell_cps, c->cap * sizeof *c->cell_cps);
    }
    c->cells[c->ncells] = sl_xstrndup(c->field.data ? c->field.data : "", c->field.len);
    c->cell_n[c->ncells] = c->field.len;
    c->cell_cps[c->ncells] = c->field_cps;
    c->ncells++;
    c->field.len = 0;
    c->field_cps = 0;
}

static int csv_add(csvr *c, const char *p, size_t n)
{
    if (c->field_cps >= CSV_FIELD_LIMIT)
        return sl_err_set(c->err, SL_EPARSE, "field larger than field limit (%d)",
                          CSV_FIELD_LIMIT);
    sl_buf_add(&c->field, p, n);
    c->field_cps++;
    return 0;
}

/* "| a | b |\n" with \n as a space and \r dropped. */
static int csv_put_row(csvr *c)
{
    sink *k = c->k;
    if (puts_(k, "| "))
        return -1;
    for (size_t i = 0; i < c->ncells; i++) {
        if (i && puts_(k, " | "))
            return -1;
        const char *s = c->cells[i];
        for (size_t j = 0; j < c->cell_n[i]; j++)
            if (s[j] == '\n' ? putc_(k, ' ') : s[j] == '\r' ? 0 : putc_(k, s[j]))
                return -1;
    }
    if (puts_(k, " |\n"))
        return -1;
    if (c->rows++)
        return 0;
    /* the header's rule: as many dashes as the raw cell has characters */
    if (puts_(k, "| "))
        return -1;
    for (size_t i = 0; i < c->ncells; i++) {
        if (i && puts_(k, " | "))
            return -1;
        for (size_t j = 0; j < c->cell_cps[i]; j++)
            if (putc_(k, '-'))
                return -1;
    }
    return puts_(k, " |\n");
}

static void csv_clear_row(csvr *c)
{
    for (size_t i = 0; i < c->ncells; i++)
        free(c->cells[i]);
    c->ncells = 0;
}

/* One character (ch is its code point's first byte; p/n its bytes), or
 * the end of a line (p NULL). */
static int csv_char(csvr *c, const char *p, size_t n)
{
    int ch = p ? (unsigned char)p[0] : -1;
    bool eol = !p, nl = ch == '\n' || ch == '\r';
    switch (c->state) {
    case C_START_RECORD:
        if (eol)
            return 0; /* an empty line: the row [] */
        if (nl) {
            c->state = C_EAT_CRNL;
            return 0;
        }
        c->state = C_START_FIELD;
        /* fall through */
    case C_START_FIELD:
        if (nl || eol) {
            csv_save(c);
            c->state = eol ? C_START_RECORD : C_EAT_CRNL;
        } else if (ch == '"') {
            c->state = C_IN_QUOTED;
        } else if (ch == ',') {
            csv_save(c);
        } else {
            if (csv_add(c, p, n))
                return -1;
            c->state = C_IN_FIELD;
        }
        return 0;
    case C_IN_FIELD:
        if (nl || eol) {
            csv_save(c);
            c->state = eol ? C_START_RECORD : C_EAT_CRNL;
        } else if (ch == ',') {
            csv_save(c);
            c->state = C_START_FIELD;
        } else if (csv_add(c, p, n)) {
            return -1;
        }
        return 0;
    case C_IN_QUOTED:
        if (eol)
            return 0;
        if (ch == '"') {
            c->state = C_QUOTE_IN_QUOTED;
            return 0;
        }
        return csv_add(c, p, n);
    case C_QUOTE_IN_QUOTED:
        if (ch == '"') {
            c->state = C_IN_QUOTED;
            return csv_add(c, p, n);
        }
        if (ch == ',') {
            csv_save(c);
            c->state = C_START_FIELD;
        } else if (nl || eol) {
            csv_save(c);
            c->state = eol ? C_START_RECORD : C_EAT_CRNL;
        } else {
            if (csv_add(c, p, n))
                return -1;
            c->state = C_IN_FIELD;
        }
        return 0;
    default: /* C_EAT_CRNL */
        if (nl)
            return 0;
        if (eol) {
            c->state = C_START_RECORD;
            return 0;
        }
        return sl_err_set(c->err, SL_EPARSE,
                          "new-line character seen in unquoted field - do you need to open the "
                          "file in universal-newline mode?");
    }
}

static int csv_text(const text *t, sink *k, sl_err *err)
{
    csvr c = {0};
    sl_buf_init(&c.field, (size_t)-1);
    c.k = k;
    c.err = err;
    c.state = C_START_RECORD;
    int rc = 0;
    size_t i = 0;
    while (i < t->n && !rc) {
        /* one line of StringIO, its \n included */
        const char *nl = memchr(t->s + i, '\n', t->n - i);
        size_t e = nl ? (size_t)(nl - t->s) + 1 : t->n;
        while (i < e && !rc) {
            size_t j = i;
            next_cp(t->s, e, &j);
            rc = csv_char(&c, t->s + i, j - i);
            i = j;
        }
        if (rc || (rc = csv_char(&c, NULL, 0)))
            break;
        if (c.state == C_START_RECORD) {
            rc = csv_put_row(&c);
            csv_clear_row(&c);
        }
    }
    /* the end in a quoted field (or with a field begun) ends the row */
    if (!rc && (c.field.len || c.state == C_IN_QUOTED)) {
        csv_save(&c);
        rc = csv_put_row(&c);
    }
    csv_clear_row(&c);
    free(c.cells);
    free(c.cell_n);
    free(c.cell_cps);
    sl_buf_release(&c.field);
    return rc;
}

int sl_extract_csv(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    sink k;
    sink_init(&k, out, lim, "CSV", err);
    text t;
    decode(data, len, false, &t);
    int rc = csv_text(&t, &k, err);
    free(t.own);
    return rc;
}

/* ---- .properties (§3.15) ----------------------------------------------- */

/* Not Java's rules: each stripped line is "key: value", split at the first
 * '=' anywhere, else the first ':'; blank lines and comments as they are. */
int sl_extract_properties(const void *data, size_t len, const sl_extract_limits *lim,
                          sl_buf *out, sl_err *err)
{
    sink k;
    sink_init(&k, out, lim, "properties", err);
    text t;
    decode(data, len, false, &t);
    const char *s = t.s;
    size_t i = 0, b, e;
    int rc = 0;
    for (bool first = true; !rc && next_line(s, t.n, &i, &b, &e); first = false) {
        if (!first && (rc = putc_(&k, '\n')))
            break;
        py_strip(s, &b, &e);
        if (b == e || s[b] == '#' || s[b] == '!') {
            rc = put(&k, s + b, e - b);
            continue;
        }
        const char *sep = memchr(s + b, '=', e - b);
        if (!sep)
            sep = memchr(s + b, ':', e - b);
        size_t kb = b, ke = sep ? (size_t)(sep - s) : e, vb = sep ? ke + 1 : e, ve = e;
        py_strip(s, &kb, &ke);
        py_strip(s, &vb, &ve);
        rc = put(&k, s + kb, ke - kb);
        if (!rc)
            rc = puts_(&k, ": ");
        if (!rc)
            rc = put(&k, s + vb, ve - vb);
    }
    free(t.own);
    return rc;
}

/* ---- WebVTT (§3.14) ---------------------------------------------------- */

/* webvtt-py 0.5's reading (webvtt.from_string), then Dify's merge of
 * consecutive cues by speaker.  Python's \d is any Unicode digit; here it
 * is 0-9.  \w (in the voice span's classes) is taken as a letter, digit,
 * '_' or any non-ASCII character that is not whitespace. */

typedef struct {
    char *voice; /* NULL: none */
    size_t vn;
    char *text;
    size_t tn;
} vcue;

static char *memdup_(const void *p, size_t n)
{
    char *d = sl_xmalloc(n + 1);
    memcpy(d, p, n);
    d[n] = 0;
    return d;
}

static bool is_word(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_' || (c >= 0x80 && !py_space(c));
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
    while (i < n) {
        size_t j = i;
        if (!py_space(next_cp(s, n, &j)))
            break;
        i = j;
    }
    return i;
}

static size_t digits_at(const char *s, size_t n, size_t i)
{
    size_t k = 0;
    while (i + k < n && is_digit(s[i + k]))
        k++;
    return k;
}

/* \d{2}:\d{2}.\d{3} at s[i]: its end, or 0. */
static size_t ts_core(const char *s, size_t n, size_t i)
{
    if (digits_at(s, n, i) < 2 || i + 2 >= n || s[i + 2] != ':' ||
        digits_at(s, n, i + 3) < 2 || i + 5 >= n || s[i + 5] == '\n')
        return 0;
    size_t j = i + 5;
    next_cp(s, n, &j);
    return digits_at(s, n, j) >= 3 ? j + 3 : 0;
}

/* (?:\d+:)?\d{2}:\d{2}.\d{3} at s[i], choice 0 with the hours, 1 without. */
static size_t ts_match(const char *s, size_t n, size_t i, int choice)
{
    if (choice == 1)
        return ts_core(s, n, i);
    size_t d = digits_at(s, n, i);
    if (!d || i + d >= n || s[i + d] != ':')
        return 0;
    return ts_core(s, n, i + d + 1);
}

/* The cue timings pattern matched at the start of the line: the two
 * timestamps' spans. */
static bool cue_timing(const char *s, size_t n, size_t *b1, size_t *e1, size_t *b2, size_t *e2)
{
    size_t a = skip_space(s, n, 0);
    for (int c1 = 0; c1 < 2; c1++) {
        size_t x = ts_match(s, n, a, c1);
        if (!x)
            continue;
        size_t y = skip_space(s, n, x);
        if (n - y < 3 || memcmp(s + y, "-->", 3))
            continue;
        y = skip_space(s, n, y + 3);
        for (int c2 = 0; c2 < 2; c2++) {
            size_t z = ts_match(s, n, y, c2);
            if (z) {
                *b1 = a;
                *e1 = x;
                *b2 = y;
                *e2 = z;
                return true;
            }
        }
    }
    return false;
}

static bool two(const char *s, int hi)
{
    return is_digit(s[0]) && is_digit(s[1]) && (s[0] - '0') * 10 + (s[1] - '0') <= hi;
}

/* datetime.strptime with "%H:%M:%S.%f" when the hours are given (the
 * value is 11 characters or more), else "%M:%S.%f". */
static bool ts_valid(const char *s, size_t n)
{
    const char *m = s;
    if (cp_count(s, n) >= 11) {
        const char *colon = memchr(s, ':', n);
        size_t h = (size_t)(colon - s);
        if (h > 2 || (h == 2 && !two(s, 23)))
            return false;
        m = colon + 1;
    }
    return two(m, 59) && m[2] == ':' && two(m + 3, 59) && m[5] == '.';
}

static bool str_has(const char *s, size_t n, const char *w)
{
    size_t wn = strlen(w);
    for (size_t i = 0; i + wn <= n; i++)
        if (!memcmp(s + i, w, wn))
            return true;
    return false;
}

/* The voice of <v(?:\.\w+)*\s+([^>]+)> at the start of the line, and
 * its length in *vn. */
static char *cue_voice(const char *s, size_t n, size_t *vn)
{
    if (n < 2 || memcmp(s, "<v", 2))
        return NULL;
    size_t i = 2;
    while (i < n && s[i] == '.') {
        size_t j = i + 1, w = 0;
        while (j < n) {
            size_t q = j;
            if (!is_word(next_cp(s, n, &q)))
                break;
            j = q;
            w++;
        }
        if (!w)
            break;
        i = j;
    }
    size_t ws_b = i, ws_e = skip_space(s, n, i);
    if (ws_e == ws_b)
        return NULL;
    const char *gt = memchr(s + ws_e, '>', n - ws_e);
    if (!gt)
        return NULL;
    size_t g = (size_t)(gt - s);
    if (g > ws_e) {
        *vn = g - ws_e;
        return memdup_(s + ws_e, g - ws_e);
    }
    /* [^>]+ takes the last whitespace character back from \s+ */
    size_t last = ws_e - 1;
    while (last > ws_b && ((unsigned char)s[last] & 0xC0) == 0x80)
        last--;
    if (last == ws_b)
        return NULL;
    *vn = ws_e - last;
    return memdup_(s + last, ws_e - last);
}

/* The payload lines joined by \n, every <...> within a line removed; its
 * length in *tn. */
static char *cue_text(const char *s, const size_t *lb, const size_t *le, size_t nl, size_t *tn)
{
    sl_buf b;
    sl_buf_init(&b, (size_t)-1);
    for (size_t l = 0; l < nl; l++) {
        if (l)
            sl_buf_addc(&b, '\n');
        size_t i = lb[l], e = le[l];
        while (i < e) {
            if (s[i] == '<') {
                const char *gt = memchr(s + i, '>', e - i);
                if (gt) {
                    i = (size_t)(gt - s) + 1;
                    continue;
                }
            }
            sl_buf_addc(&b, s[i++]);
        }
    }
    *tn = b.len;
    return b.data ? b.data : sl_xstrdup("");
}

typedef struct {
    vcue *v;
    size_t n, cap;
} vcues;

/* One block of lines: a cue when webvtt-py takes it as one. */
static int vtt_block(const char *s, const size_t *lb, const size_t *le, size_t nl, vcues *cs,
                     sl_err *err)
{
    size_t b1, e1, b2, e2;
#define LINE(i) (s + lb[i]), (le[i] - lb[i])
    bool cue = (nl >= 2 && cue_timing(LINE(0), &b1, &e1, &b2, &e2) &&
                !str_has(LINE(1), "-->")) ||
               (nl >= 3 && !str_has(LINE(0), "-->") && cue_timing(LINE(1), &b1, &e1, &b2, &e2) &&
                !str_has(LINE(2), "-->"));
    if (!cue)
        return 0;
    /* from_lines: the last timing line sets the times; lines before the
     * first are the identifier; the rest is the payload */
    size_t ts[4] = {0}, tl = 0;
    size_t *pb = sl_xmalloc(nl * sizeof *pb), *pe = sl_xmalloc(nl * sizeof *pe), np = 0;
    bool started = false;
    for (size_t i = 0; i < nl; i++) {
        if (cue_timing(LINE(i), &b1, &e1, &b2, &e2)) {
            tl = i;
            ts[0] = b1, ts[1] = e1, ts[2] = b2, ts[3] = e2;
            started = true;
        } else if (started) {
            pb[np] = lb[i];
            pe[np++] = le[i];
        }
    }
    const char *l = s + lb[tl];
    for (int w = 0; w < 2; w++) {
        const char *v = l + ts[2 * w];
        size_t vn = ts[2 * w + 1] - ts[2 * w];
        if (!ts_valid(v, vn)) {
            free(pb);
            free(pe);
            return sl_err_set(err, SL_EPARSE, "Invalid timestamp: %.*s", (int)vn, v);
        }
    }
#undef LINE
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 16;
        cs->v = sl_xrealloc(cs->v, cs->cap * sizeof *cs->v);
    }
    vcue *c = &cs->v[cs->n++];
    c->vn = 0;
    c->voice = np ? cue_voice(s + pb[0], pe[0] - pb[0], &c->vn) : NULL;
    c->text = cue_text(s, pb, pe, np, &c->tn);
    free(pb);
    free(pe);
    return 0;
}

static int vtt_put(sink *k, const vcue *voice, const sl_buf *txt)
{
    if ((voice && put(k, voice->voice, voice->vn)) || puts_(k, " \"") ||
        put(k, txt->data, txt->len))
        return -1;
    return putc_(k, '"');
}

int sl_extract_vtt(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                   sl_err *err)
{
    sink k;
    sink_init(&k, out, lim, "VTT", err);
    text t;
    decode(data, len, false, &t);
    const char *s = t.s;
    size_t n = t.n, i = 0;
    while (n - i >= 3 && !memcmp(s + i, "\xEF\xBB\xBF", 3))
        i += 3;
    size_t b, e;
    size_t at = i;
    if (!next_line(s, n, &at, &b, &e) || e - b < 6 || memcmp(s + b, "WEBVTT", 6)) {
        free(t.own);
        return sl_err_set(err, SL_EPARSE, "Invalid format");
    }
    vcues cs = {0};
    size_t *lb = NULL, *le = NULL, nl = 0, cap = 0;
    int rc = 0;
    for (;;) {
        bool more = next_line(s, n, &i, &b, &e);
        size_t sb = b, se = e;
        if (more)
            py_strip(s, &sb, &se);
        if (more && sb < se) {
            if (nl == cap) {
                cap = cap ? cap * 2 : 16;
                lb = sl_xrealloc(lb, cap * sizeof *lb);
                le = sl_xrealloc(le, cap * sizeof *le);
            }
            lb[nl] = b;
            le[nl++] = e;
            continue;
        }
        if (nl && (rc = vtt_block(s, lb, le, nl, &cs, err)))
            break;
        nl = 0;
        if (!more)
            break;
    }
    free(lb);
    free(le);
    if (!rc && cs.n) {
        /* Dify's merge, its quirk kept: a cue without a voice repeats the
         * text gathered so far and its own text is lost */
        const vcue *spk = cs.v[0].voice ? &cs.v[0] : NULL;
        sl_buf cur;
        sl_buf_init(&cur, (size_t)-1);
        sl_buf_add(&cur, cs.v[0].text, cs.v[0].tn);
        bool first = true;
        for (size_t c = 1; c < cs.n && !rc; c++) {
            const vcue *v = cs.v[c].voice ? &cs.v[c] : NULL;
            if (v && spk && v->vn == spk->vn && !memcmp(v->voice, spk->voice, v->vn)) {
                sl_buf_addc(&cur, ' ');
                sl_buf_add(&cur, v->text, v->tn);
                if (cur.len > k.max)
                    rc = sink_full(&k);
                continue;
            }
            if ((!first && putc_(&k, '\n')) || vtt_put(&k, v ? spk : NULL, &cur)) {
                rc = -1;
                break;
            }
            first = false;
            if (v) {
                spk = v;
                cur.len = 0;
                sl_buf_add(&cur, v->text, v->tn);
            }
        }
        if (!rc && ((!first && putc_(&k, '\n')) || vtt_put(&k, spk, &cur)))
            rc = -1;
        sl_buf_release(&cur);
    }
    for (size_t c = 0; c < cs.n; c++) {
        free(cs.v[c].voice);
        free(cs.v[c].text);
    }
    free(cs.v);
    free(t.own);
    return rc;
}
