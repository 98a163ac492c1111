/*
 * jinja_str — Python's str for templates: UTF-8 text (decoding, case
 * mapping as Python does it, counting code points), the str operations
 * that are also filters (lower, upper, title, capitalize, center, replace,
 * strip, islower/isupper), and the methods of str ('a,b'.split(',')).
 */
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "tmpl/jinja_ev.h"

/* ---- UTF-8 text ---- */

static locale_t utf8_loc;
static pthread_once_t loc_once = PTHREAD_ONCE_INIT;
static void loc_init(void)
{
    utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

void sl_jx_utf8_enc(unsigned long cp, sl_buf *b)
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

/* Python's lower (upper 0) or upper (1) of one code point (ß's upper,
 * "SS", comes back as the marker UPPER_SS) */
#define UPPER_SS 0x1E9E0053UL
static unsigned long cp_case(unsigned long c, int upper)
{
    if (c == 0xDF && upper == 1)
        return UPPER_SS; /* "SS": sl_jx_case_map writes it */
    if (c < 0x80)
        return upper ? (unsigned long)toupper((int)c) : (unsigned long)tolower((int)c);
    pthread_once(&loc_once, loc_init);
    if (!utf8_loc)
        return c;
    return upper ? (unsigned long)towupper_l((wint_t)c, utf8_loc)
                 : (unsigned long)towlower_l((wint_t)c, utf8_loc);
}

bool sl_jx_cp_alpha(unsigned long c)
{
    if (c < 0x80)
        return isalpha((int)c);
    pthread_once(&loc_once, loc_init);
    return utf8_loc ? iswalpha_l((wint_t)c, utf8_loc) : true;
}

bool sl_jx_cp_space(unsigned long c)
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
void sl_jx_case_map(const char *s, size_t n, int mode, sl_buf *out)
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
        unsigned long c = utf8_dec(s + i, n - i, &l);
        unsigned long o;
        if (mode <= 1) {
            o = cp_case(c, mode);
        } else if (mode == 2) {
            o = cp_case(c, i == 0);
        } else if (mode == 3) {
            bool a = sl_jx_cp_alpha(c);
            o = a ? cp_case(c, start) : c;
            start = !a;
        } else {
            bool sep = sl_jx_cp_space(c);
            o = sep ? c : cp_case(c, start);
            start = sep;
        }
        if (o == c)
            sl_buf_add(out, s + i, l);
        else if (o == UPPER_SS)
            sl_buf_add(out, "SS", 2); /* Python: 'ß'.upper() == 'SS' */
        else
            sl_jx_utf8_enc(o, out);
        i += l;
    }
}

/* characters (code points) in s[0..n): bytes that are not continuations */
size_t sl_jx_ulen(const char *s, size_t n)
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
size_t sl_jx_uoff(const char *s, size_t n, size_t k)
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

/* ---- str operations that are also filters ---- */

int sl_jx_str_case(jrender *r, jv *x, int mode, jv *out)
{
    (void)r;
    text t;
    text_of(x, &t);
    STACKBUF(b, 0);
    sl_jx_case_map(t.s, t.n, mode, &b);
    text_done(&t);
    *out = jbuf(&b);
    return 0;
}

int sl_jx_str_center(jrender *r, const jnode *e, jv *x, jargs *a, jv *out)
{
    jv *wv = sl_jx_arg(a, 0, "width"), *fc = sl_jx_arg(a, 1, "fillchar");
    long long w = 80;
    if (wv && sl_jx_num_of(wv, &w, &(double){0}) != 1)
        return sl_jx_err(r, e, SL_EINVAL, "'%s' object cannot be interpreted as an integer",
                         sl_jx_py_type(wv));
    const char *fill = " ";
    size_t fl = 1;
    if (fc) {
        if (!is_str(fc) || sl_jx_ulen(json_string_value(fc->j), json_string_length(fc->j)) != 1)
            return sl_jx_err(r, e, SL_EINVAL,
                             "The fill character must be exactly one character long");
        fill = json_string_value(fc->j);
        fl = json_string_length(fc->j);
    }
    text t;
    text_of(x, &t);
    long long l = (long long)sl_jx_ulen(t.s, t.n);
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

int sl_jx_str_replace(jrender *r, const jnode *e, jv *x, jargs *a, jv *out)
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
        unsigned long c = utf8_dec(s + i, n - i, &l);
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

void sl_jx_strip(const char *s, size_t n, const char *chars, size_t cn, int where, size_t *b,
                  size_t *en)
{
    cpset cs;
    if (chars)
        cpset_init(&cs, chars, cn);
    size_t i = 0, j = n;
    if (where & 1)
        while (i < j) {
            size_t l;
            unsigned long c = utf8_dec(s + i, j - i, &l);
            if (chars ? !cpset_has(&cs, c) : !sl_jx_cp_space(c))
                break;
            i += l;
        }
    if (where & 2)
        while (j > i) {
            size_t k = j - 1;
            while (k > i && ((unsigned char)s[k] & 0xC0) == 0x80)
                k--;
            size_t l;
            unsigned long c = utf8_dec(s + k, j - k, &l);
            if (chars ? !cpset_has(&cs, c) : !sl_jx_cp_space(c))
                break;
            j = k;
        }
    if (chars)
        free(cs.cp);
    *b = i;
    *en = j;
}

bool sl_jx_str_cased(jv *x, bool upper)
{
    if (!is_str(x))
        return false;
    const char *s = json_string_value(x->j);
    size_t n = json_string_length(x->j);
    bool any = false;
    for (size_t i = 0; i < n;) {
        size_t l;
        unsigned long c = utf8_dec(s + i, n - i, &l);
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

/* ---- methods of str ---- */

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

int sl_jx_str_method(jrender *r, const jnode *e, jv *self, const char *m, jargs *a, jv *out)
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
        sl_jx_strip(s, n, have ? json_string_value(c->j) : NULL, have ? json_string_length(c->j) : 0,
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
        return sl_jx_str_replace(r, e, self, a, out);
    if (!strcmp(m, "upper"))
        return sl_jx_str_case(r, self, 1, out);
    if (!strcmp(m, "lower") || !strcmp(m, "casefold"))
        return sl_jx_str_case(r, self, 0, out);
    if (!strcmp(m, "title"))
        return sl_jx_str_case(r, self, 3, out);
    if (!strcmp(m, "capitalize"))
        return sl_jx_str_case(r, self, 2, out);
    if (!strcmp(m, "center"))
        return sl_jx_str_center(r, e, self, a, out);
    if (!strcmp(m, "find") || !strcmp(m, "index") || !strcmp(m, "rfind") || !strcmp(m, "count")) {
        jv *sub = sl_jx_arg(a, 0, NULL);
        if (!is_str(sub))
            return sl_jx_err(r, e, SL_EINVAL, "%s() needs a string argument", m);
        const char *p = json_string_value(sub->j);
        size_t l = json_string_length(sub->j);
        if (!strcmp(m, "count")) {
            long long c = 0;
            if (!l) {
                c = (long long)sl_jx_ulen(s, n) + 1;
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
        *out = sl_jx_json(sl_jx_int(h ? (long long)sl_jx_ulen(s, (size_t)(h - s)) : -1));
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
        return sl_jx_py_format(r, e, s, a, out);
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
            unsigned long c = utf8_dec(s + i, n - i, &l);
            if (!strcmp(m, "isdigit") || !strcmp(m, "isdecimal") || !strcmp(m, "isnumeric"))
                ok = c >= '0' && c <= '9';
            else if (!strcmp(m, "isalpha"))
                ok = sl_jx_cp_alpha(c);
            else if (!strcmp(m, "isalnum"))
                ok = sl_jx_cp_alpha(c) || (c >= '0' && c <= '9');
            else if (!strcmp(m, "isspace"))
                ok = sl_jx_cp_space(c);
            else if (!strcmp(m, "islower") || !strcmp(m, "isupper"))
                break;
            else
                return sl_jx_err(r, e, SL_EINVAL, "'str' object has no attribute '%s'", m);
            i += l;
        }
        if (!strcmp(m, "islower") || !strcmp(m, "isupper"))
            ok = sl_jx_str_cased(self, m[2] == 'u');
        *out = sl_jx_json(json_boolean(ok));
        return 0;
    }
    if (!strcmp(m, "zfill") || !strcmp(m, "ljust") || !strcmp(m, "rjust")) {
        long long w = int_arg(sl_jx_arg(a, 0, "width"), 0);
        jv *fc = sl_jx_arg(a, 1, "fillchar");
        const char *fill = is_str(fc) ? json_string_value(fc->j) : m[0] == 'z' ? "0" : " ";
        long long l = (long long)sl_jx_ulen(s, n);
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
            unsigned long c = utf8_dec(s + i, n - i, &l);
            unsigned long lo = cp_case(c, 0), up = cp_case(c, 1);
            sl_jx_utf8_enc(c == lo ? up : lo, &b);
            i += l;
        }
        *out = jbuf(&b);
        return 0;
    }
    return sl_jx_err(r, e, SL_EINVAL, "'str' object has no attribute '%s'", m);
}
