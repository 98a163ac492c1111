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
#include <limits.h>
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
    size_t nodes, max_nodes; /* past max_nodes the text cannot fit the limit */
    sink *k;
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
    /* every value after the first writes 3 bytes or more */
    if (++p->nodes > p->max_nodes)
        return sink_full(p->k);
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
    jparser p = {t->s, t->n, 0, err, 0, k->max / 3 + 1, k};
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
    sl_err local = {0};
    if (!err)
        err = &local;
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
    sl_err_clear(&local);
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

/* ---- YAML (§3.3) ------------------------------------------------------- */

/* PyYAML's yaml.dump_all(yaml.safe_load_all(text), allow_unicode=True,
 * sort_keys=False), for what documents commonly hold: libyaml parses, the
 * YAML 1.1 implicit types of a plain scalar are resolved as SafeLoader
 * resolves them (null, bool, int with 0x/0o/0b/octal/underscores, float,
 * .inf/.nan), and the result is written as PyYAML's emitter writes it:
 * block style, indent 2, sequences in mappings not indented, a string
 * plain when it reads back as a string and allows it, else single-quoted,
 * else double-quoted with PyYAML's escapes, plain and single-quoted text
 * folded at spaces past column 80, "---" before each document after the
 * first, "..." after an open-ended root scalar, and a collection met twice
 * written once with &id001 and then *id001.  Errors are laid out as
 * PyYAML's (the context, the problem, each place with its line and a
 * caret), in libyaml's words where they differ from PyYAML's; what
 * PyYAML's reader and scanner refuse and libyaml takes (control
 * characters, tabs between tokens) is refused first, in PyYAML's words.
 *
 * Timestamps are dates and datetimes written back as Python's isoformat
 * (aware datetimes that are the same instant in two zones stay two keys).
 * Not reproduced (the reader refuses them, naming them, rather than
 * writing other text): explicit tags other than the standard scalar ones,
 * and integers past 64 bits written in base 2, 8, 16 or 60.  Merge keys (<<) are
 * flattened as SafeLoader flattens them.  Scalars are repeated where an alias names them, as PyYAML
 * does; anchored collections are written once, so an alias bomb stays
 * small, and the number of nodes read is bounded. */

#include <yaml.h>

#define YAML_MAX_NODES 1000000
#define YAML_MAX_DEPTH 500
#define YAML_WIDTH 80

/* Y_MERGE ("<<") and Y_VALUE ("=") are keys only: a merge, and a string */
enum { Y_NULL, Y_BOOL, Y_INT, Y_FLOAT, Y_TIME, Y_MERGE, Y_VALUE, Y_STR, Y_SEQ, Y_MAP };

typedef struct ynode ynode;
struct ynode {
    int type;
    char *s;        /* Y_STR: text; Y_INT: decimal; Y_FLOAT/Y_BOOL: as printed */
    size_t n;
    ynode **kids;   /* Y_SEQ: items; Y_MAP: key, value, key, value... */
    size_t nk, cap;
    yaml_mark_t mark; /* where it starts, for errors */
    int refs;       /* times met while writing (aliases) */
    int id;         /* its &idNNN once given one */
    int marks;      /* times reached from the roots */
    size_t *hash, hcap; /* Y_MAP with many keys: slots of key index + 1 */
};

typedef struct {
    yaml_parser_t p;
    sl_err *err;
    const char *s;  /* the text, for the marks of errors */
    size_t n;
    size_t nodes;
    ynode **all;    /* every node, for freeing */
    size_t nall, call;
    struct {
        char *name;
        ynode *node;
    } *anchors;
    size_t nanch, canch;
} yloader;

static ynode *ynew(yloader *L, int type)
{
    ynode *y = sl_xcalloc(1, sizeof *y);
    y->type = type;
    if (L->nall == L->call) {
        L->call = L->call ? L->call * 2 : 64;
        L->all = sl_xrealloc(L->all, L->call * sizeof *L->all);
    }
    L->all[L->nall++] = y;
    return y;
}

/* A key as Python's dict compares it: true, 1 and 1.0 are one key.
 * Numbers are written out as integers when they are whole, else as their
 * repr; every .nan is PyYAML's one NaN object, so one key. */
static void ykey_canon(const ynode *k, char *o, size_t on, int *cls)
{
    *cls = k->type;
    if (k->type == Y_BOOL) {
        *cls = Y_INT;
        snprintf(o, on, "%s", k->s[0] == 't' ? "1" : "0");
    } else if (k->type == Y_FLOAT) {
        double d = strtod(k->s, NULL);
        if (!strcmp(k->s, ".inf") || !strcmp(k->s, "-.inf") || !strcmp(k->s, ".nan")) {
            snprintf(o, on, "%s", k->s);
        } else if (fabs(d) < 9e18 && d == (double)(long long)d) {
            *cls = Y_INT;
            snprintf(o, on, "%lld", (long long)d);
        } else {
            snprintf(o, on, "%s", k->s);
        }
    } else {
        o[0] = 0;
    }
}

static bool ykey_eq(const ynode *a, const ynode *b)
{
    if (a->type == Y_STR || b->type == Y_STR || a->type == Y_NULL || b->type == Y_NULL ||
        a->type == Y_TIME || b->type == Y_TIME)
        return a->type == b->type && a->n == b->n && (!a->n || !memcmp(a->s, b->s, a->n));
    char ca[64], cb[64];
    int ta, tb;
    ykey_canon(a, ca, sizeof ca, &ta);
    ykey_canon(b, cb, sizeof cb, &tb);
    if (ta == Y_INT && a->type == Y_INT)
        snprintf(ca, sizeof ca, "%s", a->s);
    if (tb == Y_INT && b->type == Y_INT)
        snprintf(cb, sizeof cb, "%s", b->s);
    return ta == tb && !strcmp(ca, cb);
}

static size_t ykey_hash(const ynode *k)
{
    if (k->type == Y_STR || k->type == Y_NULL || k->type == Y_TIME)
        return (size_t)(fnv(k->s ? k->s : "", k->n) ^ (uint64_t)k->type);
    char c[64];
    int t;
    ykey_canon(k, c, sizeof c, &t);
    if (t == Y_INT && k->type == Y_INT)
        snprintf(c, sizeof c, "%s", k->s);
    return (size_t)(fnv(c, strlen(c)) ^ (uint64_t)t);
}

/* The index in y->kids of the key equal to k, or y->nk. */
static size_t ykey_find(const ynode *y, const ynode *k)
{
    if (!y->hash) {
        for (size_t i = 0; i < y->nk; i += 2)
            if (ykey_eq(y->kids[i], k))
                return i;
        return y->nk;
    }
    for (size_t h = ykey_hash(k) & (y->hcap - 1); y->hash[h]; h = (h + 1) & (y->hcap - 1))
        if (ykey_eq(y->kids[y->hash[h] - 1], k))
            return y->hash[h] - 1;
    return y->nk;
}

static void ykey_slot(ynode *y, size_t i)
{
    size_t h = ykey_hash(y->kids[i]) & (y->hcap - 1);
    while (y->hash[h])
        h = (h + 1) & (y->hcap - 1);
    y->hash[h] = i + 1;
}

/* Past 16 keys a mapping is searched through a hash. */
static void ykey_index(ynode *y, size_t i)
{
    size_t keys = y->nk / 2;
    if (keys <= 16)
        return;
    if (!y->hash || keys * 2 > y->hcap) {
        free(y->hash);
        y->hcap = 64;
        while (y->hcap < keys * 4)
            y->hcap *= 2;
        y->hash = sl_xcalloc(y->hcap, sizeof *y->hash);
        for (size_t j = 0; j < y->nk; j += 2)
            ykey_slot(y, j);
        return;
    }
    ykey_slot(y, i);
}

static void ykid(ynode *y, ynode *k)
{
    if (y->nk == y->cap) {
        y->cap = y->cap ? y->cap * 2 : 4;
        y->kids = sl_xrealloc(y->kids, y->cap * sizeof *y->kids);
    }
    y->kids[y->nk++] = k;
}

/* The text as code points (libyaml's marks count them). */
static uint32_t *ycps(const char *s, size_t n, size_t *ncp)
{
    uint32_t *c = sl_xmalloc((cp_count(s, n) + 1) * sizeof *c);
    size_t k = 0;
    for (size_t i = 0; i < n;)
        c[k++] = next_cp(s, n, &i);
    *ncp = k;
    return c;
}

static bool ysnip_break(uint32_t c)
{
    return c == 0 || c == '\r' || c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

/* PyYAML's Mark: where, and the line with a caret under the place. */
static void ymark_fmt(sl_buf *b, const uint32_t *c, size_t n, const yaml_mark_t *m)
{
    sl_buf_addf(b, "  in \"<unicode string>\", line %zu, column %zu:\n", m->line + 1,
                m->column + 1);
    size_t ptr = m->index < n ? m->index : n;
    const char *head = "", *tail = "";
    size_t start = ptr, end = ptr;
    while (start > 0 && !ysnip_break(c[start - 1])) {
        start--;
        if (ptr - start > 36) {
            head = " ... ";
            start += 5;
            break;
        }
    }
    while (end < n && !ysnip_break(c[end])) {
        end++;
        if (end - ptr > 36) {
            tail = " ... ";
            end -= 5;
            break;
        }
    }
    sl_buf_addf(b, "    %s", head);
    for (size_t i = start; i < end; i++)
        sl_buf_add_utf8(b, c[i]);
    sl_buf_addf(b, "%s\n", tail);
    for (size_t i = 0; i < 4 + ptr - start + strlen(head); i++)
        sl_buf_addc(b, ' ');
    sl_buf_addc(b, '^');
}

/* A YAML error laid out as PyYAML's MarkedYAMLError: the context and its
 * mark (when not the problem's), the problem and its mark.  The words
 * are libyaml's, which differ from PyYAML's in places. */
static int yerr_marked(sl_err *err, const char *s, size_t n, const char *context,
                       const yaml_mark_t *cm, const char *problem, const yaml_mark_t *pm)
{
    size_t ncp;
    uint32_t *c = ycps(s, n, &ncp);
    sl_buf b;
    sl_buf_init(&b, 0);
    if (context) {
        sl_buf_adds(&b, context);
        if (cm && (!problem || !pm || cm->line != pm->line || cm->column != pm->column)) {
            sl_buf_addc(&b, '\n');
            ymark_fmt(&b, c, ncp, cm);
        }
    }
    if (problem) {
        if (b.len)
            sl_buf_addc(&b, '\n');
        sl_buf_adds(&b, problem);
    }
    if (pm) {
        sl_buf_addc(&b, '\n');
        ymark_fmt(&b, c, ncp, pm);
    }
    sl_err_set(err, SL_EPARSE, "%s", b.data ? b.data : "error");
    sl_buf_release(&b);
    free(c);
    return -1;
}

static int yerr_parser(yloader *L)
{
    yaml_parser_t *p = &L->p;
    /* where libyaml's words differ from PyYAML's */
    static const char *const words[][2] = {
        {"found incompatible YAML document",
         "found incompatible YAML document (version 1.* is required)"},
        {"mapping values are not allowed in this context", "mapping values are not allowed here"},
    };
    for (size_t i = 0; p->problem && i < sizeof words / sizeof *words; i++)
        if (!strcmp(p->problem, words[i][0]))
            return yerr_marked(L->err, L->s, L->n, p->context, &p->context_mark, words[i][1],
                               &p->problem_mark);
    return yerr_marked(L->err, L->s, L->n, p->context, &p->context_mark,
                       p->problem ? p->problem : "error", &p->problem_mark);
}

/* What PyYAML refuses before libyaml would: a character its reader does
 * not accept anywhere, and a tab outside quoted and block scalars and
 * comments (PyYAML's scanner takes only spaces between tokens). */
static int yprecheck(const char *s, size_t n, sl_err *err)
{
    size_t ncp;
    uint32_t *c = ycps(s, n, &ncp);
    for (size_t i = 0; i < ncp; i++) {
        uint32_t ch = c[i];
        if (ch == 0x09 || ch == 0x0A || ch == 0x0D || (ch >= 0x20 && ch <= 0x7E) || ch == 0x85 ||
            (ch >= 0xA0 && ch <= 0xD7FF) || (ch >= 0xE000 && ch <= 0xFFFD) || ch >= 0x10000)
            continue;
        free(c);
        return sl_err_set(err, SL_EPARSE,
                          "unacceptable character #x%04x: special characters are not allowed\n"
                          "  in \"<unicode string>\", position %zu",
                          ch, i);
    }
    if (!memchr(s, '\t', n)) {
        free(c);
        return 0;
    }
    /* the spans of quoted and block scalars, as far as libyaml scans */
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)s, n);
    size_t *sb = NULL, *se = NULL, ns = 0, cs = 0, limit = ncp;
    for (;;) {
        yaml_token_t t;
        if (!yaml_parser_scan(&p, &t)) {
            limit = p.problem_mark.index;
            break;
        }
        int type = t.type;
        if (type == YAML_SCALAR_TOKEN && t.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
            if (ns == cs) {
                cs = cs ? cs * 2 : 16;
                sb = sl_xrealloc(sb, cs * sizeof *sb);
                se = sl_xrealloc(se, cs * sizeof *se);
            }
            sb[ns] = t.start_mark.index;
            se[ns++] = t.end_mark.index;
        }
        yaml_token_delete(&t);
        if (type == YAML_STREAM_END_TOKEN)
            break;
    }
    yaml_parser_delete(&p);
    int rc = 0;
    bool comment = false;
    size_t span = 0, line = 0, col = 0;
    for (size_t i = 0; i < ncp && i < limit; i++) {
        if (span < ns && i == sb[span]) {
            /* keep line and column: walk the span */
            for (; i < se[span] && i < ncp; i++) {
                if (c[i] == '\n' || c[i] == 0x85 || c[i] == 0x2028 || c[i] == 0x2029 ||
                    (c[i] == '\r' && !(i + 1 < ncp && c[i + 1] == '\n'))) {
                    line++;
                    col = 0;
                } else if (c[i] != '\r') {
                    col++;
                }
            }
            span++;
            i--;
            continue;
        }
        uint32_t ch = c[i];
        if (ch == '\n' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 ||
            (ch == '\r' && !(i + 1 < ncp && c[i + 1] == '\n'))) {
            line++;
            col = 0;
            comment = false;
            continue;
        }
        if (ch == '#' && (i == 0 || c[i - 1] == ' ' || ysnip_break(c[i - 1]) || c[i - 1] == 0xFEFF))
            comment = true;
        if (ch == '\t' && !comment) {
            yaml_mark_t m = {i, line, col};
            rc = yerr_marked(err, s, n, NULL, NULL,
                             "while scanning for the next token\nfound character '\\t' that "
                             "cannot start any token",
                             &m);
            break;
        }
        if (ch != '\r')
            col++;
    }
    free(sb);
    free(se);
    free(c);
    return rc;
}

static bool yre_all(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]) || !s[i])
            return false;
    return true;
}

static bool yword(const char *s, size_t n, const char *const *w)
{
    for (; *w; w++)
        if (strlen(*w) == n && !memcmp(s, *w, n))
            return true;
    return false;
}

static size_t ydigits(const char *s, size_t n, size_t i, size_t max)
{
    size_t k = 0;
    while (i + k < n && k < max && is_digit(s[i + k]))
        k++;
    return k;
}

static int ynum(const char *s, size_t k)
{
    int v = 0;
    for (size_t i = 0; i < k; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* The timestamp resolver (YYYY-MM-DD, or a date with a time and a zone),
 * and PyYAML's date or datetime written back as isoformat(' ').  1 when
 * the text is not a timestamp; -1 with err for a date Python's datetime
 * refuses (PyYAML fails with its ValueError). */
static int ytimestamp(yloader *L, const char *s, size_t n, ynode *y, bool tagged)
{
    size_t i = 0, k;
    if (ydigits(s, n, 0, 4) != 4 || n < 8 || s[4] != '-')
        return 1;
    int year = ynum(s, 4), f[3] = {0}, tzs = 0, tzh = 0, tzm = 0;
    long us = 0;
    i = 5;
    size_t mk = ydigits(s, n, i, 2);
    if (!mk || i + mk >= n || s[i + mk] != '-')
        return 1;
    int month = ynum(s + i, mk);
    i += mk + 1;
    size_t dk = ydigits(s, n, i, 2);
    if (!dk)
        return 1;
    int day = ynum(s + i, dk);
    i += dk;
    bool date_only = i == n;
    /* the resolver wants YYYY-MM-DD; the constructor (an explicit tag)
     * takes one-digit months and days */
    if (date_only && !tagged && (mk != 2 || dk != 2))
        return 1;
    if (!date_only) {
        if (s[i] == 'T' || s[i] == 't') {
            i++;
        } else {
            size_t w = i;
            while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
            if (i == w)
                return 1;
        }
        for (int part = 0; part < 3; part++) {
            if (part && (i >= n || s[i++] != ':'))
                return 1;
            k = ydigits(s, n, i, 2);
            if (!k || (part && k != 2))
                return 1;
            f[part] = ynum(s + i, k);
            i += k;
        }
        if (i < n && s[i] == '.') {
            i++;
            k = ydigits(s, n, i, (size_t)-1);
            for (size_t q = 0; q < 6; q++)
                us = us * 10 + (q < k ? s[i + q] - '0' : 0);
            i += k;
        }
        size_t w = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i < n && s[i] == 'Z') {
            tzs = 2;
            i++;
        } else if (i < n && (s[i] == '-' || s[i] == '+')) {
            tzs = s[i] == '-' ? -1 : 1;
            i++;
            k = ydigits(s, n, i, 2);
            if (!k)
                return 1;
            tzh = ynum(s + i, k);
            i += k;
            if (i < n && s[i] == ':') {
                if (ydigits(s, n, i + 1, 2) != 2)
                    return 1;
                tzm = ynum(s + i + 1, 2);
                i += 3;
            }
        } else {
            i = w;
        }
        if (i != n)
            return 1;
    }
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const char *bad = year < 1                     ? "year 0 is out of range"
                      : month < 1 || month > 12    ? "month must be in 1..12"
                      : day < 1 || day > mdays[month - 1] + (month == 2 && leap)
                          ? "day is out of range for month"
                      : f[0] > 23 ? "hour must be in 0..23"
                      : f[1] > 59 ? "minute must be in 0..59"
                      : f[2] > 59 ? "second must be in 0..59"
                      : tzh * 60 + tzm >= 24 * 60
                          ? "offset must be a timedelta strictly between -timedelta(hours=24) "
                            "and timedelta(hours=24)"
                          : NULL;
    if (bad)
        return sl_err_set(L->err, SL_EPARSE, "%s", bad);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_addf(&b, "%04d-%02d-%02d", year, month, day);
    if (!date_only) {
        sl_buf_addf(&b, " %02d:%02d:%02d", f[0], f[1], f[2]);
        if (us)
            sl_buf_addf(&b, ".%06ld", us);
        if (tzs == 2) {
            sl_buf_adds(&b, "+00:00");
        } else if (tzs) {
            int off = tzh * 60 + tzm;
            sl_buf_addf(&b, "%c%02d:%02d", tzs < 0 && off ? '-' : '+', off / 60, off % 60);
        }
    }
    y->type = Y_TIME;
    y->s = b.data;
    y->n = b.len;
    return 0;
}

/* PyYAML's represent_float: repr, lower case, "1e+16" as "1.0e+16". */
static void yfloat(ynode *y, double d)
{
    char r[48];
    py_float_repr(d, r, sizeof r);
    char o[64];
    size_t w = 0;
    bool dot = strchr(r, '.') != NULL;
    for (char *c = r; *c; c++) {
        if (*c == 'e' && !dot) {
            memcpy(o + w, ".0", 2);
            w += 2;
        }
        o[w++] = *c == 'I' ? 'i' : *c == 'N' ? 'n' : *c;
    }
    o[w] = 0;
    if (isinf(d))
        snprintf(o, sizeof o, d < 0 ? "-.inf" : ".inf");
    y->type = Y_FLOAT;
    y->s = sl_xstrdup(o);
    y->n = strlen(o);
}

/* YAML 1.1's base 60: [1-9][0-9_]*(:[0-5]?[0-9])+ for an int (the first
 * part may start with 0 and a fraction may follow for a float).  The
 * parts' starts in at[] (at most 64), their count in *np; false when b is
 * not one. */
static bool ysexagesimal(const char *b, size_t bn, bool flt, size_t *at, size_t *np)
{
    size_t k = 0;
    if (!bn || !is_digit(b[0]) || (!flt && b[0] == '0'))
        return false;
    while (k < bn && (is_digit(b[k]) || b[k] == '_'))
        k++;
    size_t p = 0;
    at[p++] = 0;
    while (k < bn && b[k] == ':') {
        size_t d = digits_at(b, bn, k + 1);
        if (d == 2 && b[k + 1] > '5')
            return false;
        if (d < 1 || d > 2 || p == 64)
            return false;
        at[p++] = k + 1;
        k += 1 + d;
    }
    if (p < 2)
        return false;
    if (flt) {
        if (k >= bn || b[k] != '.')
            return false;
        k++;
        while (k < bn && (is_digit(b[k]) || b[k] == '_'))
            k++;
    }
    *np = p;
    return k == bn;
}

/* SafeLoader's implicit resolvers for a plain scalar: the type, and for
 * numbers the value as PyYAML prints it.  -1 with err for the types this
 * reader does not reproduce. */
static int yresolve(yloader *L, const char *s, size_t n, ynode *y)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                        "on",  "On",  "ON",  NULL};
    static const char *const falses[] = {"no",    "No",    "NO",  "false", "False",
                                         "FALSE", "off",   "Off", "OFF",   NULL};
    if (yword(s, n, nulls)) {
        y->type = Y_NULL;
        return 0;
    }
    if (yword(s, n, trues) || yword(s, n, falses)) {
        y->type = Y_BOOL;
        y->s = sl_xstrdup(yword(s, n, trues) ? "true" : "false");
        y->n = strlen(y->s);
        return 0;
    }
    if ((n == 2 && !memcmp(s, "<<", 2)) || (n == 1 && s[0] == '=')) {
        y->type = n == 2 ? Y_MERGE : Y_VALUE;
        y->s = memdup_(s, n);
        y->n = n;
        return 0;
    }
    size_t i = 0;
    bool neg = false;
    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    const char *b = s + i;
    size_t bn = n - i;
    /* int */
    int base = 0;
    size_t skip = 0;
    if (bn > 2 && b[0] == '0' && b[1] == 'b' && yre_all(b + 2, bn - 2, "01_"))
        base = 2, skip = 2;
    else if (bn > 2 && b[0] == '0' && b[1] == 'x' && yre_all(b + 2, bn - 2, "0123456789abcdefABCDEF_"))
        base = 16, skip = 2;
    else if (bn > 1 && b[0] == '0' && yre_all(b + 1, bn - 1, "01234567_"))
        base = 8, skip = 1;
    else if (bn == 1 && b[0] == '0')
        base = 10;
    else if (bn >= 1 && b[0] >= '1' && b[0] <= '9' && yre_all(b, bn, "0123456789_"))
        base = 10;
    if (base) {
        unsigned long long v = 0;
        bool any = false;
        for (size_t k = skip; k < bn; k++) {
            if (b[k] == '_')
                continue;
            int d = hexval((unsigned char)b[k]);
            if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base) {
                if (base != 10)
                    return sl_err_set(L->err, SL_EUNSUPPORTED,
                                      "sluice does not read YAML integers past 64 bits in base "
                                      "%d (%.*s)",
                                      base, (int)(n < 40 ? n : 40), s);
                /* decimal: the digits are the value */
                sl_buf t;
                sl_buf_init(&t, 0);
                if (neg)
                    sl_buf_addc(&t, '-');
                for (size_t q = 0; q < bn; q++)
                    if (b[q] != '_')
                        sl_buf_addc(&t, b[q]);
                size_t digits = t.len - neg;
                if (digits > PY_INT_MAX_DIGITS) {
                    sl_buf_release(&t);
                    return sl_err_set(L->err, SL_EPARSE,
                                      "Exceeds the limit (%d digits) for integer string "
                                      "conversion: value has %zu digits; use "
                                      "sys.set_int_max_str_digits() to increase the limit",
                                      PY_INT_MAX_DIGITS, digits);
                }
                y->type = Y_INT;
                y->s = t.data;
                y->n = t.len;
                return 0;
            }
            v = v * (unsigned)base + (unsigned)d;
            any = true;
        }
        if (!any && base != 10 && base != 8) {
            /* "0b_" is an int in the resolver but int() fails on it */
            return sl_err_set(L->err, SL_EPARSE, "invalid literal for int() with base %d: '%.*s'",
                              base, (int)(n < 40 ? n : 40), s);
        }
        y->type = Y_INT;
        y->s = sl_xasprintf("%s%llu", neg && v ? "-" : "", v);
        y->n = strlen(y->s);
        return 0;
    }
    size_t at[64], np;
    for (int flt = 0; flt < 2; flt++) {
        if (!ysexagesimal(b, bn, flt, at, &np))
            continue;
        /* construct_yaml_int/float: the parts from the last, times 60 */
        unsigned long long v = 0, mul = 1;
        double d = 0, dmul = 1;
        for (size_t q = np; q-- > 0;) {
            size_t e = q + 1 < np ? at[q + 1] - 1 : bn;
            char part[64];
            size_t m = 0;
            for (size_t z = at[q]; z < e && m < sizeof part - 1; z++)
                if (b[z] != '_')
                    part[m++] = b[z];
            part[m] = 0;
            if (flt) {
                d += strtod(part, NULL) * dmul;
                dmul *= 60;
                continue;
            }
            unsigned long long pv = strtoull(part, NULL, 10);
            if (m > 18 || (pv && mul > ULLONG_MAX / 60 / pv) || v > ULLONG_MAX / 2)
                return sl_err_set(L->err, SL_EUNSUPPORTED,
                                  "sluice does not read YAML integers past 64 bits (%.*s)",
                                  (int)(n < 40 ? n : 40), s);
            v += pv * mul;
            mul *= 60;
        }
        if (flt) {
            yfloat(y, neg ? -d : d);
        } else {
            y->type = Y_INT;
            y->s = sl_xasprintf("%s%llu", neg && v ? "-" : "", v);
            y->n = strlen(y->s);
        }
        return 0;
    }
    /* float: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)? with a digit
     * first or right after the dot; .inf; .nan */
    static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    if (yword(b, bn, infs)) {
        y->type = Y_FLOAT;
        y->s = sl_xstrdup(neg ? "-.inf" : ".inf");
        y->n = strlen(y->s);
        return 0;
    }
    if (i == 0 && yword(b, bn, nans)) {
        y->type = Y_FLOAT;
        y->s = sl_xstrdup(".nan");
        y->n = 4;
        return 0;
    }
    size_t k = 0;
    bool lead = bn && b[0] >= '0' && b[0] <= '9';
    while (k < bn && ((b[k] >= '0' && b[k] <= '9') || (lead && b[k] == '_')))
        k++;
    if (k < bn && b[k] == '.' && (lead || (k + 1 < bn && is_digit(b[k + 1]) && i == 0))) {
        k++;
        while (k < bn && ((b[k] >= '0' && b[k] <= '9') || b[k] == '_'))
            k++;
        if (k < bn && (b[k] == 'e' || b[k] == 'E') && k + 2 < bn &&
            (b[k + 1] == '-' || b[k + 1] == '+') && digits_at(b, bn, k + 2) == bn - k - 2)
            k = bn;
        if (k == bn) {
            char *t = sl_xmalloc(n + 1);
            size_t m = 0;
            for (size_t q = 0; q < n; q++)
                if (s[q] != '_')
                    t[m++] = s[q];
            t[m] = 0;
            double d = strtod(t, NULL);
            free(t);
            yfloat(y, d);
            return 0;
        }
    }
    int ts = ytimestamp(L, s, n, y, false);
    if (ts <= 0)
        return ts;
    y->type = Y_STR;
    y->s = memdup_(s, n);
    y->n = n;
    return 0;
}

static int yscalar(yloader *L, yaml_event_t *ev, ynode *y)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && strcmp(tag, "!")) {
        if (!strcmp(tag, YAML_STR_TAG)) {
            y->type = Y_STR;
            y->s = memdup_(s, n);
            y->n = n;
            return 0;
        }
        if (!strcmp(tag, YAML_TIMESTAMP_TAG)) {
            int ts = ytimestamp(L, s, n, y, true);
            if (ts <= 0)
                return ts;
            return sl_err_set(L->err, SL_EPARSE, "%.*s is not a YAML timestamp",
                              (int)(n < 40 ? n : 40), s);
        }
        if (!strcmp(tag, YAML_NULL_TAG) || !strcmp(tag, YAML_BOOL_TAG) ||
            !strcmp(tag, YAML_INT_TAG) || !strcmp(tag, YAML_FLOAT_TAG)) {
            if (yresolve(L, s, n, y))
                return -1;
            const char *want = y->type == Y_NULL   ? YAML_NULL_TAG
                               : y->type == Y_BOOL ? YAML_BOOL_TAG
                               : y->type == Y_INT  ? YAML_INT_TAG
                               : y->type == Y_FLOAT ? YAML_FLOAT_TAG
                                                    : "";
            if (!strcmp(tag, want))
                return 0;
        }
        return sl_err_set(L->err, SL_EUNSUPPORTED,
                          "sluice does not read the YAML tag %s in documents", tag);
    }
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || tag) {
        y->type = Y_STR;
        y->s = memdup_(s, n);
        y->n = n;
        return 0;
    }
    return yresolve(L, s, n, y);
}

static int yload(yloader *L, yaml_event_t *ev, ynode **out, int depth);

/* "<<" and "=" have no constructor outside a mapping's keys. */
static int yonly_key(yloader *L, const ynode *y)
{
    if (y->type != Y_MERGE && y->type != Y_VALUE)
        return 0;
    return yerr_marked(L->err, L->s, L->n, NULL, NULL,
                       y->type == Y_MERGE
                           ? "could not determine a constructor for the tag "
                             "'tag:yaml.org,2002:merge'"
                           : "could not determine a constructor for the tag "
                             "'tag:yaml.org,2002:value'",
                       &y->mark);
}

/* Puts k: v into the mapping as a dict does: a key met again keeps its
 * place and takes the value. */
static void yput(ynode *y, ynode *k, ynode *v)
{
    size_t at = ykey_find(y, k);
    if (at < y->nk) {
        y->kids[at + 1] = v;
        return;
    }
    ykid(y, k);
    ykid(y, v);
    ykey_index(y, y->nk - 2);
}

static const char *yid(const ynode *y)
{
    return y->type == Y_SEQ ? "sequence" : y->type == Y_MAP ? "mapping" : "scalar";
}

static void ymerge_add(ynode ***m, size_t *nm, const ynode *from)
{
    if (!from->nk)
        return;
    *m = sl_xrealloc(*m, (*nm + from->nk) * sizeof **m);
    memcpy(*m + *nm, from->kids, from->nk * sizeof **m);
    *nm += from->nk;
}

/* SafeLoader's flatten_mapping for one "<<" key: a mapping's pairs, or
 * those of a list of mappings, the last mapping's first. */
static int ymerge(yloader *L, yaml_event_t *ev, ynode *v, ynode ***m, size_t *nm)
{
    if (v->type == Y_MAP) {
        ymerge_add(m, nm, v);
        return 0;
    }
    char msg[96];
    if (v->type != Y_SEQ) {
        snprintf(msg, sizeof msg,
                 "expected a mapping or list of mappings for merging, but found %s", yid(v));
        free(*m);
        return yerr_marked(L->err, L->s, L->n, "while constructing a mapping", &ev->start_mark,
                           msg, &v->mark);
    }
    for (size_t i = 0; i < v->nk; i++)
        if (v->kids[i]->type != Y_MAP) {
            snprintf(msg, sizeof msg, "expected a mapping for merging, but found %s",
                     yid(v->kids[i]));
            free(*m);
            return yerr_marked(L->err, L->s, L->n, "while constructing a mapping",
                               &ev->start_mark, msg, &v->kids[i]->mark);
        }
    for (size_t i = v->nk; i-- > 0;)
        ymerge_add(m, nm, v->kids[i]);
    return 0;
}

static int ynext(yloader *L, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&L->p, ev))
        return yerr_parser(L);
    return 0;
}

static int yanchor(yloader *L, const yaml_char_t *a, ynode *y)
{
    if (!a)
        return 0;
    if (L->nanch == L->canch) {
        L->canch = L->canch ? L->canch * 2 : 16;
        L->anchors = sl_xrealloc(L->anchors, L->canch * sizeof *L->anchors);
    }
    L->anchors[L->nanch].name = sl_xstrdup((const char *)a);
    L->anchors[L->nanch++].node = y;
    return 0;
}

static int yload(yloader *L, yaml_event_t *ev, ynode **out, int depth)
{
    if (++L->nodes > YAML_MAX_NODES)
        return sl_err_limit(L->err, SL_ELIMIT, "extract_max_output",
                            "the YAML file has over %d nodes", YAML_MAX_NODES);
    if (depth > YAML_MAX_DEPTH)
        return sl_err_limit(L->err, SL_ELIMIT, "extract_max_output",
                            "the YAML file nests deeper than %d", YAML_MAX_DEPTH);
    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        const char *a = (const char *)ev->data.alias.anchor;
        for (size_t i = L->nanch; i-- > 0;)
            if (!strcmp(L->anchors[i].name, a)) {
                *out = L->anchors[i].node;
                return 0;
            }
        char *msg = sl_xasprintf("found undefined alias '%s'", a);
        yerr_marked(L->err, L->s, L->n, NULL, NULL, msg, &ev->start_mark);
        free(msg);
        return -1;
    }
    case YAML_SCALAR_EVENT: {
        ynode *y = ynew(L, Y_STR);
        y->mark = ev->start_mark;
        if (yscalar(L, ev, y))
            return -1;
        yanchor(L, ev->data.scalar.anchor, y);
        *out = y;
        return 0;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool map = ev->type == YAML_MAPPING_START_EVENT;
        const yaml_char_t *tag = map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
        if (tag && strcmp((const char *)tag, map ? YAML_MAP_TAG : YAML_SEQ_TAG) &&
            strcmp((const char *)tag, "!"))
            return sl_err_set(L->err, SL_EUNSUPPORTED,
                              "sluice does not read the YAML tag %s in documents",
                              (const char *)tag);
        ynode *y = ynew(L, map ? Y_MAP : Y_SEQ);
        y->mark = ev->start_mark;
        ynode **merge = NULL;
        size_t nmerge = 0;
        yanchor(L, map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor, y);
        for (;;) {
            yaml_event_t e;
            if (ynext(L, &e)) {
                free(merge);
                return -1;
            }
            if (e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&e);
                break;
            }
            ynode *k;
            yaml_mark_t kmark = e.start_mark;
            int rc = yload(L, &e, &k, depth + 1);
            yaml_event_delete(&e);
            if (rc) {
                free(merge);
                return -1;
            }
            if (!map) {
                if (yonly_key(L, k)) {
                    free(merge);
                    return -1;
                }
                ykid(y, k);
                continue;
            }
            if (k->type == Y_SEQ || k->type == Y_MAP) {
                free(merge);
                return yerr_marked(L->err, L->s, L->n, "while constructing a mapping",
                                   &ev->start_mark, "found unhashable key", &kmark);
            }
            ynode *v;
            if (ynext(L, &e)) {
                free(merge);
                return -1;
            }
            rc = yload(L, &e, &v, depth + 1);
            yaml_event_delete(&e);
            if (rc || yonly_key(L, v)) {
                free(merge);
                return -1;
            }
            if (k->type == Y_VALUE) {
                k->type = Y_STR; /* flatten_mapping's "=" key is a string */
            } else if (k->type == Y_MERGE) {
                if (ymerge(L, ev, v, &merge, &nmerge))
                    return -1;
                continue;
            }
            yput(y, k, v);
        }
        if (nmerge) {
            /* the merged pairs first, then the mapping's own: a dict */
            ynode **own = y->kids;
            size_t nown = y->nk;
            y->kids = NULL;
            y->nk = y->cap = 0;
            free(y->hash);
            y->hash = NULL;
            for (size_t i = 0; i < nmerge; i += 2)
                yput(y, merge[i], merge[i + 1]);
            for (size_t i = 0; i < nown; i += 2)
                yput(y, own[i], own[i + 1]);
            free(own);
        }
        free(merge);
        *out = y;
        return 0;
    }
    default:
        return sl_err_set(L->err, SL_EPARSE, "unexpected YAML event");
    }
}

/* ---- the emitter: PyYAML's, for block style ---- */

typedef struct {
    sink *k;
    long column;
    bool whitespace, indention, open_ended;
    long indent;            /* -1: None */
    long indents[YAML_MAX_DEPTH * 2 + 8];
    int ni;
    int next_id;
    bool root, seq_ctx, map_ctx, simple_key;
} yemit;

static int yw(yemit *E, const char *s, size_t n)
{
    E->column += (long)cp_count(s, n);
    return put(E->k, s, n);
}

static int yindicator(yemit *E, const char *ind, bool need_ws, bool ws, bool indention)
{
    if (!(E->whitespace || !need_ws) && yw(E, " ", 1))
        return -1;
    E->whitespace = ws;
    E->indention = E->indention && indention;
    E->open_ended = false;
    return yw(E, ind, strlen(ind));
}

static int ybreak(yemit *E, const char *br, size_t n)
{
    E->whitespace = true;
    E->indention = true;
    E->column = 0;
    return put(E->k, br ? br : "\n", br ? n : 1);
}

static int yindent(yemit *E)
{
    long ind = E->indent < 0 ? 0 : E->indent;
    if (!E->indention || E->column > ind || (E->column == ind && !E->whitespace))
        if (ybreak(E, NULL, 0))
            return -1;
    if (E->column < ind) {
        E->whitespace = true;
        long m = ind - E->column;
        E->column = ind;
        return put_spaces(E->k, (size_t)m);
    }
    return 0;
}

static void yinc(yemit *E, bool flow, bool indentless)
{
    E->indents[E->ni++] = E->indent;
    if (E->indent < 0)
        E->indent = flow ? 2 : 0;
    else if (!indentless)
        E->indent += 2;
}

static void ypop(yemit *E)
{
    E->indent = E->indents[--E->ni];
}

typedef struct {
    bool empty, multiline, flow_plain, block_plain, single, dbl;
} yanalysis;

static bool ybrk(uint32_t c)
{
    return c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static bool yws0(uint32_t c)
{
    return c == 0 || c == ' ' || c == '\t' || c == '\r' || ybrk(c);
}

/* PyYAML's Emitter.analyze_scalar. */
static void yanalyze(const char *s, size_t n, yanalysis *a)
{
    memset(a, 0, sizeof *a);
    if (!n) {
        a->empty = true;
        a->block_plain = a->single = a->dbl = true;
        return;
    }
    /* code points, for look-ahead */
    size_t cn = cp_count(s, n);
    uint32_t *c = sl_xmalloc((cn + 1) * sizeof *c);
    for (size_t i = 0, j = 0; i < n; j++)
        c[j] = next_cp(s, n, &i);
    bool block_ind = false, flow_ind = false, line_breaks = false, special = false;
    bool leading_space = false, leading_break = false, trailing_space = false,
         trailing_break = false, break_space = false, space_break = false;
    if (n >= 3 && (!memcmp(s, "---", 3) || !memcmp(s, "...", 3)))
        block_ind = flow_ind = true;
    bool preceded_ws = true, followed_ws = cn == 1 || yws0(c[1]);
    bool prev_space = false, prev_break = false;
    for (size_t i = 0; i < cn; i++) {
        uint32_t ch = c[i];
        if (i == 0) {
            if (ch < 0x80 && strchr("#,[]{}&*!|>'\"%@`", (int)ch) && ch)
                flow_ind = block_ind = true;
            if (ch == '?' || ch == ':') {
                flow_ind = true;
                if (followed_ws)
                    block_ind = true;
            }
            if (ch == '-' && followed_ws)
                flow_ind = block_ind = true;
        } else {
            if (ch < 0x80 && ch && strchr(",?[]{}", (int)ch))
                flow_ind = true;
            if (ch == ':') {
                flow_ind = true;
                if (followed_ws)
                    block_ind = true;
            }
            if (ch == '#' && preceded_ws)
                flow_ind = block_ind = true;
        }
        if (ybrk(ch))
            line_breaks = true;
        if (!(ch == '\n' || (ch >= 0x20 && ch <= 0x7E))) {
            if ((ch == 0x85 || (ch >= 0xA0 && ch <= 0xD7FF) || (ch >= 0xE000 && ch <= 0xFFFD) ||
                 (ch >= 0x10000 && ch < 0x10FFFF)) &&
                ch != 0xFEFF) {
                /* unicode, allowed */
            } else {
                special = true;
            }
        }
        if (ch == ' ') {
            if (i == 0)
                leading_space = true;
            if (i == cn - 1)
                trailing_space = true;
            if (prev_break)
                break_space = true;
            prev_space = true;
            prev_break = false;
        } else if (ybrk(ch)) {
            if (i == 0)
                leading_break = true;
            if (i == cn - 1)
                trailing_break = true;
            if (prev_space)
                space_break = true;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = prev_break = false;
        }
        preceded_ws = yws0(ch);
        followed_ws = i + 2 >= cn || yws0(c[i + 2]);
    }
    free(c);
    a->multiline = line_breaks;
    a->flow_plain = a->block_plain = a->single = a->dbl = true;
    if (leading_space || leading_break || trailing_space || trailing_break)
        a->flow_plain = a->block_plain = false;
    if (break_space)
        a->flow_plain = a->block_plain = a->single = false;
    if (space_break || special)
        a->flow_plain = a->block_plain = a->single = false;
    if (line_breaks)
        a->flow_plain = a->block_plain = false;
    if (flow_ind)
        a->flow_plain = false;
    if (block_ind)
        a->block_plain = false;
}

/* Would the plain text read back as a string? */
static bool yplain_is_str(const char *s, size_t n)
{
    ynode y = {0};
    yloader L = {0};
    sl_err e = {0};
    L.err = &e;
    int rc = yresolve(&L, s, n, &y);
    free(y.s);
    bool str = rc == 0 && y.type == Y_STR;
    sl_err_clear(&e);
    /* what the reader refuses would not resolve to a string either */
    return str;
}

static int yplain(yemit *E, const char *s, size_t n, bool split)
{
    if (E->root)
        E->open_ended = true;
    if (!n)
        return 0;
    if (!E->whitespace && yw(E, " ", 1))
        return -1;
    E->whitespace = E->indention = false;
    bool spaces = false;
    size_t start = 0;
    for (size_t end = 0; end <= n; end++) {
        char ch = end < n ? s[end] : 0;
        bool none = end == n;
        if (spaces) {
            if (none || ch != ' ') {
                if (start + 1 == end && E->column > YAML_WIDTH && split) {
                    if (yindent(E))
                        return -1;
                    E->whitespace = E->indention = false;
                } else if (yw(E, s + start, end - start)) {
                    return -1;
                }
                start = end;
            }
        } else if (none || ch == ' ') {
            if (yw(E, s + start, end - start))
                return -1;
            start = end;
        }
        if (!none)
            spaces = ch == ' ';
    }
    return 0;
}

static int ysingle(yemit *E, const char *s, size_t n, bool split)
{
    if (yindicator(E, "'", true, false, false))
        return -1;
    bool spaces = false, breaks = false;
    size_t start = 0;
    for (size_t end = 0; end <= n;) {
        bool none = end == n;
        size_t nx = end;
        uint32_t ch = none ? 0 : next_cp(s, n, &nx);
        if (spaces) {
            if (none || ch != ' ') {
                if (start + 1 == end && E->column > YAML_WIDTH && split && start != 0 &&
                    end != n) {
                    if (yindent(E))
                        return -1;
                } else if (yw(E, s + start, end - start)) {
                    return -1;
                }
                start = end;
            }
        } else if (breaks) {
            if (none || !ybrk(ch)) {
                if (s[start] == '\n' && ybreak(E, NULL, 0))
                    return -1;
                for (size_t q = start; q < end;) {
                    size_t q0 = q;
                    uint32_t br = next_cp(s, end, &q);
                    if (br == '\n' ? ybreak(E, NULL, 0) : ybreak(E, s + q0, q - q0))
                        return -1;
                }
                if (yindent(E))
                    return -1;
                start = end;
            }
        } else if (none || ch == ' ' || ybrk(ch) || ch == '\'') {
            if (start < end) {
                if (yw(E, s + start, end - start))
                    return -1;
                start = end;
            }
        }
        if (ch == '\'' && !none) {
            if (yw(E, "''", 2))
                return -1;
            start = nx;
        }
        if (!none) {
            spaces = ch == ' ';
            breaks = ybrk(ch);
        }
        end = none ? n + 1 : nx;
    }
    return yindicator(E, "'", false, false, false);
}

/* Writes the code points c[a..b). */
static int ywcp(yemit *E, const uint32_t *c, size_t a, size_t b)
{
    char u[4];
    for (size_t i = a; i < b; i++)
        if (put(E->k, u, put_utf8(u, c[i])))
            return -1;
    E->column += (long)(b - a);
    return 0;
}

static bool ydq_ok(uint32_t ch)
{
    return ch != '"' && ch != '\\' && ch != 0x85 && ch != 0x2028 && ch != 0x2029 &&
           ch != 0xFEFF &&
           ((ch >= 0x20 && ch <= 0x7E) || (ch >= 0xA0 && ch <= 0xD7FF) ||
            (ch >= 0xE000 && ch <= 0xFFFD));
}

/* PyYAML's write_double_quoted: its escapes, and a long line folded with
 * a backslash at a space or after an escape. */
static int ydouble_cps(yemit *E, const uint32_t *c, size_t cn, bool split)
{
    if (yindicator(E, "\"", true, false, false))
        return -1;
    size_t start = 0;
    for (size_t end = 0; end <= cn; end++) {
        bool none = end == cn;
        uint32_t ch = none ? 0 : c[end];
        if (none || !ydq_ok(ch)) {
            if (start < end && ywcp(E, c, start, end))
                return -1;
            start = end;
            if (!none) {
                char e[16];
                const char *rep;
                switch (ch) {
                case 0: rep = "\\0"; break;
                case 7: rep = "\\a"; break;
                case 8: rep = "\\b"; break;
                case 9: rep = "\\t"; break;
                case 10: rep = "\\n"; break;
                case 11: rep = "\\v"; break;
                case 12: rep = "\\f"; break;
                case 13: rep = "\\r"; break;
                case 27: rep = "\\e"; break;
                case '"': rep = "\\\""; break;
                case '\\': rep = "\\\\"; break;
                case 0x85: rep = "\\N"; break;
                case 0xA0: rep = "\\_"; break;
                case 0x2028: rep = "\\L"; break;
                case 0x2029: rep = "\\P"; break;
                default:
                    snprintf(e, sizeof e,
                             ch <= 0xFF     ? "\\x%02X"
                             : ch <= 0xFFFF ? "\\u%04X"
                                            : "\\U%08X",
                             ch);
                    rep = e;
                }
                if (yw(E, rep, strlen(rep)))
                    return -1;
                start = end + 1;
            }
        }
        if (end > 0 && end + 1 < cn && (ch == ' ' || start >= end) &&
            E->column + (long)end - (long)start > YAML_WIDTH && split) {
            if (start < end && ywcp(E, c, start, end))
                return -1;
            if (start < end)
                start = end;
            if (yw(E, "\\", 1) || yindent(E))
                return -1;
            E->whitespace = E->indention = false;
            if (c[start] == ' ' && yw(E, "\\", 1))
                return -1;
        }
    }
    return yindicator(E, "\"", false, false, false);
}

static int ydouble(yemit *E, const char *s, size_t n, bool split)
{
    size_t cn;
    uint32_t *c = ycps(s, n, &cn);
    int rc = ydouble_cps(E, c, cn, split);
    free(c);
    return rc;
}

static int ynode_out(yemit *E, ynode *y, bool root, bool seq, bool map, bool simple_key);

static bool ysimple_key(ynode *y)
{
    if (y->type == Y_SEQ || y->type == Y_MAP)
        return !y->nk && !y->id;
    if (y->type != Y_STR)
        return true;
    yanalysis a;
    yanalyze(y->s, y->n, &a);
    return cp_count(y->s, y->n) < 128 && !a.empty && !a.multiline;
}

static int yscalar_out(yemit *E, const char *s, size_t n, bool implicit)
{
    yinc(E, true, false);
    yanalysis a;
    yanalyze(s, n, &a);
    int rc;
    if (implicit && !(E->simple_key && (a.empty || a.multiline)) && a.block_plain)
        rc = yplain(E, s, n, !E->simple_key);
    else if (a.single && !(E->simple_key && a.multiline))
        rc = ysingle(E, s, n, !E->simple_key);
    else
        rc = ydouble(E, s, n, !E->simple_key);
    ypop(E);
    return rc;
}

static int ynode_out(yemit *E, ynode *y, bool root, bool seq, bool map, bool simple_key)
{
    E->root = root;
    E->seq_ctx = seq;
    E->map_ctx = map;
    E->simple_key = simple_key;
    if (y->type == Y_SEQ || y->type == Y_MAP) {
        if (y->id && y->refs++) {
            char a[24];
            snprintf(a, sizeof a, "*id%03d", y->id);
            return yindicator(E, a, true, false, false);
        }
        if (y->id) {
            char a[24];
            snprintf(a, sizeof a, "&id%03d", y->id);
            if (yindicator(E, a, true, false, false))
                return -1;
        }
    }
    switch (y->type) {
    case Y_NULL: return yscalar_out(E, "null", 4, true);
    case Y_BOOL:
    case Y_INT:
    case Y_FLOAT:
    case Y_TIME: return yscalar_out(E, y->s, y->n, true);
    case Y_STR: return yscalar_out(E, y->s, y->n, yplain_is_str(y->s, y->n));
    default: break;
    }
    if (!y->nk) {
        if (yindicator(E, y->type == Y_SEQ ? "[" : "{", true, true, false))
            return -1;
        return yindicator(E, y->type == Y_SEQ ? "]" : "}", false, false, false);
    }
    if (E->ni >= (int)(sizeof E->indents / sizeof *E->indents) - 2)
        return sl_err_limit(E->k->err, SL_ELIMIT, "extract_max_output",
                            "the YAML file nests too deep to write");
    if (y->type == Y_SEQ) {
        yinc(E, false, map && !E->indention);
        for (size_t i = 0; i < y->nk; i++) {
            if (yindent(E) || yindicator(E, "-", true, false, true))
                return -1;
            if (ynode_out(E, y->kids[i], false, true, false, false))
                return -1;
        }
        ypop(E);
        return 0;
    }
    yinc(E, false, false);
    for (size_t i = 0; i < y->nk; i += 2) {
        if (yindent(E))
            return -1;
        if (ysimple_key(y->kids[i])) {
            if (ynode_out(E, y->kids[i], false, false, true, true) ||
                yindicator(E, ":", false, false, false))
                return -1;
        } else {
            if (yindicator(E, "?", true, false, true) ||
                ynode_out(E, y->kids[i], false, false, true, false) || yindent(E) ||
                yindicator(E, ":", true, false, true))
                return -1;
        }
        if (ynode_out(E, y->kids[i + 1], false, false, true, false))
            return -1;
    }
    ypop(E);
    return 0;
}

/* The serializer's anchors: a collection reached twice gets an id, in the
 * order of a depth-first walk. */
static void ymark(ynode *y, int *next)
{
    if (y->type != Y_SEQ && y->type != Y_MAP)
        return;
    if (y->marks++) {
        if (!y->id)
            y->id = ++*next;
        return;
    }
    for (size_t i = 0; i < y->nk; i++)
        ymark(y->kids[i], next);
}

static void yloader_free(yloader *L)
{
    for (size_t i = 0; i < L->nall; i++) {
        free(L->all[i]->s);
        free(L->all[i]->kids);
        free(L->all[i]->hash);
        free(L->all[i]);
    }
    free(L->all);
    for (size_t i = 0; i < L->nanch; i++)
        free(L->anchors[i].name);
    free(L->anchors);
    yaml_parser_delete(&L->p);
}

int sl_extract_yaml(const void *data, size_t len, const sl_extract_limits *lim, sl_buf *out,
                    sl_err *err)
{
    sink k;
    sink_init(&k, out, lim, "YAML", err);
    text t;
    decode(data, len, false, &t);
    yloader L = {0};
    L.err = err;
    L.s = t.s;
    L.n = t.n;
    if (yprecheck(t.s, t.n, err)) {
        free(t.own);
        return -1;
    }
    yaml_parser_initialize(&L.p);
    yaml_parser_set_input_string(&L.p, (const unsigned char *)t.s, t.n);
    int rc = 0, docs = 0;
    yemit E = {0};
    E.k = &k;
    for (;;) {
        yaml_event_t ev;
        if ((rc = ynext(&L, &ev)))
            break;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (ev.type != YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        yaml_event_delete(&ev);
        if ((rc = ynext(&L, &ev)))
            break;
        ynode *root;
        rc = yload(&L, &ev, &root, 0);
        yaml_event_delete(&ev);
        if (rc || (rc = yonly_key(&L, root)) || (rc = ynext(&L, &ev)))
            break;
        yaml_event_delete(&ev); /* the document's end */
        /* anchors do not cross documents */
        for (size_t i = 0; i < L.nanch; i++)
            free(L.anchors[i].name);
        L.nanch = 0;
        int next = 0;
        ymark(root, &next);
        for (size_t i = 0; i < L.nall; i++)
            L.all[i]->refs = 0;
        E.indent = -1;
        E.ni = 0;
        if (docs++) {
            if ((rc = yindent(&E)) || (rc = yindicator(&E, "---", true, false, false)))
                break;
        } else {
            E.whitespace = E.indention = true;
        }
        if ((rc = ynode_out(&E, root, true, false, false, false)) || (rc = yindent(&E)))
            break;
        for (size_t i = 0; i < L.nall; i++)
            L.all[i]->marks = L.all[i]->id = 0;
    }
    if (!rc && E.open_ended) {
        rc = yindicator(&E, "...", true, false, false);
        if (!rc)
            rc = yindent(&E);
    }
    yloader_free(&L);
    free(t.own);
    return rc;
}
