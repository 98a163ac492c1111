/*
 * jinja_lex — the lexer: cuts a template's source into text and tag
 * tokens (Jinja2's rules: whitespace control with '-', raw blocks,
 * comments, end delimiters only count outside brackets; string literals
 * decoded as Python does).  The parser is jinja.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl/jinja_lex.h"

static tok *push(P *p, int type, size_t off, size_t len)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->toks = sl_xrealloc(p->toks, p->cap * sizeof *p->toks);
    }
    tok *k = &p->toks[p->n++];
    memset(k, 0, sizeof *k);
    k->type = (uint8_t)type;
    k->off = (uint32_t)off;
    k->len = (uint32_t)len;
    return k;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void put_utf8(char **o, unsigned long cp)
{
    unsigned char *q = (unsigned char *)*o;
    if (cp < 0x80) {
        *q++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *q++ = (unsigned char)(0xC0 | (cp >> 6));
        *q++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *q++ = (unsigned char)(0xE0 | (cp >> 12));
        *q++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *q++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *q++ = (unsigned char)(0xF0 | (cp >> 18));
        *q++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *q++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *q++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *o = (char *)q;
}

/* A string literal's escapes, as Python's unicode-escape decodes them. */
static void decode_string(P *p, tok *k, const char *s, size_t n)
{
    char *o = sl_jx_amalloc(p->t, n + 1), *start = o;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            *o++ = s[i];
            continue;
        }
        char e = s[++i];
        int hex = 0;
        switch (e) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'a': *o++ = '\a'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'v': *o++ = '\v'; break;
        case '\\': *o++ = '\\'; break;
        case '\'': *o++ = '\''; break;
        case '"': *o++ = '"'; break;
        case '\n': break;
        case 'x': hex = 2; break;
        case 'u': hex = 4; break;
        case 'U': hex = 8; break;
        default:
            if (e >= '0' && e <= '7') {
                unsigned long cp = 0;
                int d = 0;
                while (d < 3 && i < n && s[i] >= '0' && s[i] <= '7') {
                    cp = cp * 8 + (unsigned long)(s[i] - '0');
                    i++;
                    d++;
                }
                i--;
                put_utf8(&o, cp);
            } else {
                *o++ = '\\';
                *o++ = e;
            }
        }
        if (hex) {
            unsigned long cp = 0;
            int d = 0;
            while (d < hex && i + 1 < n && isxdigit((unsigned char)s[i + 1])) {
                char h = s[++i];
                cp = cp * 16 + (unsigned long)(isdigit((unsigned char)h) ? h - '0'
                                                                         : (tolower(h) - 'a' + 10));
                d++;
            }
            if (d < hex || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                sl_jx_perr(p, k->off, "bad escape \\%c in a string literal", e);
                return;
            }
            put_utf8(&o, cp);
        }
    }
    *o = 0;
    k->s = start;
    k->slen = (size_t)(o - start);
}

static const char *const ops3[] = {"//", "**", "==", "!=", ">=", "<=", NULL};

/* Tokens of one {{ }} or {% %} tag from s[j]; returns the position after
 * the end delimiter, or 0 on error.  *strip: the tag ended with '-'. */
static size_t lex_tag(P *p, char kind, size_t start, size_t j, bool *strip)
{
    const char *s = p->t->src;
    size_t n = p->t->srclen;
    char close = kind == '{' ? '}' : '%';
    int depth = 0;
    for (;;) {
        while (j < n && is_ws(s[j]))
            j++;
        if (j >= n) {
            sl_jx_perr(p, start,
                       "unexpected end of template: the tag opened here has no closing '%s'",
                       kind == '{' ? "}}" : "%}");
            return 0;
        }
        if (depth == 0) {
            if (s[j] == '-' && j + 2 < n && s[j + 1] == close && s[j + 2] == '}') {
                push(p, kind == '{' ? T_VE : T_BE, j, 3);
                *strip = true;
                return j + 3;
            }
            if (s[j] == close && j + 1 < n && s[j + 1] == '}') {
                push(p, kind == '{' ? T_VE : T_BE, j, 2);
                return j + 2;
            }
        }
        char c = s[j];
        if (isalpha((unsigned char)c) || c == '_') {
            size_t b = j;
            while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
                j++;
            tok *k = push(p, T_NAME, b, j - b);
            k->s = sl_jx_astrndup(p->t, s + b, j - b);
            k->slen = j - b;
        } else if (c == '0' && j + 2 < n && strchr("xXoObB", s[j + 1]) &&
                   isxdigit((unsigned char)s[j + 2])) {
            /* 0x1F, 0o17, 0b101 (underscores between digits allowed) */
            int base = (s[j + 1] | 32) == 'x' ? 16 : (s[j + 1] | 32) == 'o' ? 8 : 2;
            size_t b = j;
            j += 2;
            unsigned long long v = 0;
            double dv = 0; /* the value once it no longer fits */
            bool over = false, bad = false;
            while (j < n && (isalnum((unsigned char)s[j]) || (s[j] == '_' && j + 1 < n &&
                                                             isalnum((unsigned char)s[j + 1])))) {
                if (s[j] != '_') {
                    int d = isdigit((unsigned char)s[j]) ? s[j] - '0'
                                                         : ((s[j] | 32) >= 'a' && (s[j] | 32) <= 'f')
                                                               ? (s[j] | 32) - 'a' + 10 : 99;
                    if (d >= base)
                        bad = true;
                    if (v > (unsigned long long)INT64_MAX / (unsigned)base)
                        over = true;
                    dv = dv * base + (d < base ? d : 0);
                    if (!over)
                        v = v * (unsigned)base + (unsigned)(d < base ? d : 0);
                }
                j++;
            }
            if (bad) {
                sl_jx_perr(p, b, "invalid digit in the number literal '%.*s'", (int)(j - b), s + b);
                return 0;
            }
            tok *k = push(p, T_INT, b, j - b);
            if (over || v > (unsigned long long)INT64_MAX) {
                k->type = T_FLOAT;
                k->f = dv;
            } else {
                k->i = (long long)v;
            }
        } else if (isdigit((unsigned char)c)) {
            size_t b = j;
            bool after_dot = p->n && p->toks[p->n - 1].type == T_OP &&
                             !strcmp(p->toks[p->n - 1].s, ".");
            bool isf = false;
            while (j < n && (isdigit((unsigned char)s[j]) ||
                             (s[j] == '_' && j + 1 < n && isdigit((unsigned char)s[j + 1]))))
                j++;
            if (!after_dot && j + 1 < n && s[j] == '.' && isdigit((unsigned char)s[j + 1])) {
                isf = true;
                j++;
                while (j < n && (isdigit((unsigned char)s[j]) ||
                                 (s[j] == '_' && j + 1 < n && isdigit((unsigned char)s[j + 1]))))
                    j++;
            }
            if (!after_dot && j < n && (s[j] == 'e' || s[j] == 'E')) {
                size_t e = j + 1;
                if (e < n && (s[e] == '+' || s[e] == '-'))
                    e++;
                if (e < n && isdigit((unsigned char)s[e])) {
                    isf = true;
                    j = e;
                    while (j < n && isdigit((unsigned char)s[j]))
                        j++;
                }
            }
            char buf[128];
            size_t m = 0;
            for (size_t i = b; i < j && m < sizeof buf - 1; i++)
                if (s[i] != '_')
                    buf[m++] = s[i];
            buf[m] = 0;
            tok *k = push(p, isf ? T_FLOAT : T_INT, b, j - b);
            if (isf) {
                k->f = strtod(buf, NULL);
            } else {
                errno = 0;
                long long v = strtoll(buf, NULL, 10);
                if (errno == ERANGE) {
                    k->type = T_FLOAT;
                    k->f = strtod(buf, NULL);
                } else {
                    k->i = v;
                }
            }
        } else if (c == '\'' || c == '"') {
            size_t b = j++;
            while (j < n && s[j] != c) {
                if (s[j] == '\\')
                    j++;
                j++;
            }
            if (j >= n) {
                sl_jx_perr(p, b, "unterminated string literal");
                return 0;
            }
            j++;
            tok *k = push(p, T_STR, b, j - b);
            decode_string(p, k, s + b + 1, j - b - 2);
            if (p->failed)
                return 0;
        } else {
            const char *op = NULL;
            for (int i = 0; ops3[i]; i++)
                if (j + 1 < n && s[j] == ops3[i][0] && s[j + 1] == ops3[i][1])
                    op = ops3[i];
            size_t len = 2;
            if (!op) {
                static const char single[] = "+-/*%~[](){}><=.:|,";
                const char *q = strchr(single, c);
                if (!q || !c) {
                    sl_jx_perr(p, j, "unexpected character '%c' in a tag",
                               isprint((unsigned char)c) ? c : '?');
                    return 0;
                }
                static const char *const names[] = {"+", "-", "/", "*", "%", "~", "[", "]", "(",
                                                    ")", "{", "}", ">", "<", "=", ".", ":", "|", ","};
                op = names[q - single];
                len = 1;
            }
            if (strchr("([{", op[0]) && len == 1) {
                depth++;
            } else if (strchr(")]}", op[0]) && len == 1) {
                if (depth == 0) {
                    sl_jx_perr(p, j, "unexpected '%s'", op);
                    return 0;
                }
                depth--;
            }
            tok *k = push(p, T_OP, j, len);
            k->s = op;
            k->slen = len;
            j += len;
        }
    }
}

/* `{% raw %}` at s[i]: returns the end of its opening tag or 0 */
static size_t raw_open(const char *s, size_t n, size_t i, const char *word, bool *dash_end)
{
    size_t j = i + 2;
    if (j < n && (s[j] == '-' || s[j] == '+'))
        j++;
    while (j < n && is_ws(s[j]))
        j++;
    size_t wl = strlen(word);
    if (j + wl > n || memcmp(s + j, word, wl))
        return 0;
    j += wl;
    if (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
        return 0;
    while (j < n && is_ws(s[j]))
        j++;
    *dash_end = false;
    if (j + 2 < n && s[j] == '-' && s[j + 1] == '%' && s[j + 2] == '}') {
        *dash_end = true;
        return j + 3;
    }
    if (j + 1 < n && s[j] == '%' && s[j + 1] == '}')
        return j + 2;
    return 0;
}

int sl_jx_lex(P *p)
{
    const char *s = p->t->src;
    size_t n = p->t->srclen, pos = 0;
    bool strip_next = false;
    while (pos < n) {
        size_t i = pos;
        while (i + 1 < n && !(s[i] == '{' && (s[i + 1] == '{' || s[i + 1] == '%' || s[i + 1] == '#')))
            i++;
        if (i + 1 >= n)
            i = n;
        size_t ts = pos, te = i;
        if (strip_next)
            while (ts < te && is_ws(s[ts]))
                ts++;
        strip_next = false;
        if (i < n && i + 2 < n && s[i + 2] == '-')
            while (te > ts && is_ws(s[te - 1]))
                te--;
        if (te > ts) {
            tok *k = push(p, T_TEXT, ts, te - ts);
            k->s = s + ts;
            k->slen = te - ts;
        }
        if (i >= n)
            break;
        char kind = s[i + 1];
        size_t j = i + 2;
        if (j < n && (s[j] == '-' || s[j] == '+'))
            j++;
        if (kind == '#') {
            const char *e = NULL;
            for (size_t q = j; q + 1 < n; q++)
                if (s[q] == '#' && s[q + 1] == '}') {
                    e = s + q;
                    break;
                }
            if (!e) {
                sl_jx_perr(p, i, "missing end of comment tag '#}'");
                return -1;
            }
            size_t q = (size_t)(e - s);
            strip_next = q > j && s[q - 1] == '-';
            pos = q + 2;
            continue;
        }
        bool dash;
        size_t ro;
        if (kind == '%' && (ro = raw_open(s, n, i, "raw", &dash))) {
            size_t q = ro, ce = 0;
            bool edash = false;
            for (; q + 1 < n; q++)
                if (s[q] == '{' && s[q + 1] == '%' && (ce = raw_open(s, n, q, "endraw", &edash)))
                    break;
            if (!ce) {
                sl_jx_perr(p, i, "missing {%% endraw %%} for the raw block opened here");
                return -1;
            }
            size_t cs = ro, cend = q;
            if (dash)
                while (cs < cend && is_ws(s[cs]))
                    cs++;
            if (q + 2 < n && s[q + 2] == '-')
                while (cend > cs && is_ws(s[cend - 1]))
                    cend--;
            if (cend > cs) {
                tok *k = push(p, T_TEXT, cs, cend - cs);
                k->s = s + cs;
                k->slen = cend - cs;
            }
            strip_next = edash;
            pos = ce;
            continue;
        }
        push(p, kind == '{' ? T_VB : T_BB, i, (size_t)(j - i));
        bool strip = false;
        pos = lex_tag(p, kind, i, j, &strip);
        if (!pos)
            return -1;
        strip_next = strip;
    }
    push(p, T_EOF, n, 0);
    return 0;
}
