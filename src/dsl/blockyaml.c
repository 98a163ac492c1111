#include "dsl/blockyaml.h"

#include "core/buf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/yaml.h"

#define MAX_DEPTH 200

/* Short texts repeat all over a Dify export ("custom", "source", "right",
 * "false"...); values are immutable once built, so one json_t per distinct
 * short text is shared instead of allocating each again. */
#define INTERN_SLOTS 4096
#define INTERN_MAX_LEN 32

typedef struct {
    const char *s, *end;
    int depth;
    sl_value **intern; /* INTERN_SLOTS entries, or NULL (sub-readers) */
    sl_value **ints;   /* SMALL_INTS entries, or NULL */
} rd;

#define SMALL_INTS 10000

static sl_value *text_value(const rd *r, const char *s, size_t n)
{
    if (!r->intern || n > INTERN_MAX_LEN)
        return json_stringn_nocheck(s, n);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    for (int probe = 0; probe < 8; probe++) {
        sl_value **slot = &r->intern[(h + (uint32_t)probe) & (INTERN_SLOTS - 1)];
        if (!*slot) {
            *slot = json_stringn_nocheck(s, n);
            return json_incref(*slot);
        }
        if (json_string_length(*slot) == n && memcmp(json_string_value(*slot), s, n) == 0)
            return json_incref(*slot);
    }
    return json_stringn_nocheck(s, n);
}

/* ---- lines ---- */

static const char *eol(const rd *r, const char *p)
{
    const char *q = memchr(p, '\n', (size_t)(r->end - p));
    return q ? q : r->end;
}

static const char *next_line(const rd *r, const char *p)
{
    const char *q = eol(r, p);
    return q < r->end ? q + 1 : r->end;
}

static int indent_of(const rd *r, const char *line)
{
    int i = 0;
    while (line + i < r->end && line[i] == ' ')
        i++;
    return i;
}

static bool at_eol(const rd *r, const char *p)
{
    return p >= r->end || *p == '\n';
}

/* The next line with content at or after `line` (blank lines and whole-line
 * comments skipped), or NULL at the end of the text. */
static const char *content_line(const rd *r, const char *line, int *indent)
{
    while (line < r->end) {
        int i = indent_of(r, line);
        const char *c = line + i;
        if (c < r->end && *c != '\n' && *c != '#') {
            *indent = i;
            return line;
        }
        line = next_line(r, line);
    }
    return NULL;
}

static bool is_dash(const rd *r, const char *p)
{
    return *p == '-' && (p + 1 >= r->end || p[1] == ' ' || p[1] == '\n');
}

/* ---- the whole text is in the subset's alphabet ---- */

/* Printable UTF-8 as libyaml accepts it, minus everything that makes YAML
 * treat a character specially (tabs, CR, NEL, LS, PS, BOM) so that the
 * fast path never has to think about them. */
static bool alphabet_ok(const unsigned char *p, const unsigned char *end)
{
    while (p < end) {
        /* Eight bytes at a time while they are printable ASCII or '\n':
         * no high bit, no byte below 0x20 but '\n', no 0x7f.  The zero-byte
         * test is the exact one (no borrow between bytes). */
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            const uint64_t hi = 0x8080808080808080ULL, low7 = 0x7f7f7f7f7f7f7f7fULL,
                           ones = 0x0101010101010101ULL;
            uint64_t nl = w ^ (0x0aULL * ones), del = w ^ (0x7fULL * ones);
            uint64_t is_nl = ~(((nl & low7) + low7) | nl) & hi;
            uint64_t is_del = ~(((del & low7) + low7) | del) & hi;
            uint64_t is_ctl = ~(w + 0x60ULL * ones) & hi;
            if ((w & hi) == 0 && (is_ctl & ~is_nl) == 0 && is_del == 0) {
                p += 8;
                continue;
            }
        }
        unsigned c = *p;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n') || c == 0x7f)
                return false;
            p++;
            continue;
        }
        uint32_t cp;
        int n;
        if (c >= 0xc2 && c <= 0xdf) {
            cp = c & 0x1f;
            n = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            cp = c & 0x0f;
            n = 2;
        } else if (c >= 0xf0 && c <= 0xf4) {
            cp = c & 0x07;
            n = 3;
        } else {
            return false;
        }
        if (end - p <= n)
            return false;
        for (int i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
            cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
            return false;
        p += n + 1;
    }
    return true;
}

/* ---- scalars ---- */

static void add_utf8(sl_buf *b, uint32_t cp)
{
    char u[4];
    if (cp < 0x80) {
        sl_buf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        sl_buf_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        sl_buf_add(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        sl_buf_add(b, u, 4);
    }
}

/* After a line break inside a quoted scalar: skips the leading spaces of
 * the following lines, counting the empty ones, and checks the next content
 * line is indented past the parent.  Returns the first content character,
 * or NULL to decline. */
static const char *fold_lines(const rd *r, const char *q, int parent, int *empty)
{
    *empty = 0;
    for (;;) {
        const char *s = q;
        while (q < r->end && *q == ' ')
            q++;
        if (q >= r->end)
            return NULL; /* unterminated */
        if (*q == '\n') {
            (*empty)++;
            q++;
            continue;
        }
        if (q - s <= parent)
            return NULL;
        return q;
    }
}

/* Rest of the line after a scalar must be empty. */
static bool line_done(const rd *r, const char *q, const char **next)
{
    while (q < r->end && *q == ' ')
        q++;
    if (!at_eol(r, q))
        return false;
    *next = q < r->end ? q + 1 : r->end;
    return true;
}

/* Spaces and line breaks inside a quoted scalar, q at ' ' or '\n': spaces
 * stay unless a break follows them; a break folds to one space, or to one
 * newline per empty line after it.  Returns where to go on, or NULL. */
static const char *quoted_blanks(const rd *r, const char *q, int parent, sl_buf *b)
{
    const char *s = q;
    while (q < r->end && *q == ' ')
        q++;
    if (q >= r->end)
        return NULL;
    if (*q != '\n') {
        sl_buf_add(b, s, (size_t)(q - s));
        return q;
    }
    int empty;
    q = fold_lines(r, q + 1, parent, &empty);
    if (!q)
        return NULL;
    if (empty == 0)
        sl_buf_addc(b, ' ');
    for (int i = 0; i < empty; i++)
        sl_buf_addc(b, '\n');
    return q;
}

/* The end of a quoted scalar at q (after the closing quote). */
static sl_value *quoted_done(const rd *r, sl_buf *b, const char *q, const char **next)
{
    sl_value *v = NULL;
    if (q && !b->toobig && line_done(r, q, next))
        v = text_value(r, b->data ? b->data : "", b->len);
    sl_buf_release(b);
    return v;
}

static sl_value *single_quoted(const rd *r, const char *p, int parent, const char **next)
{
    sl_buf b;
    sl_buf_init(&b, (size_t)(r->end - r->s) + 16); /* never longer than the text */
    const char *q = p + 1;
    while (q) {
        const char *run = q;
        while (q < r->end && *q != '\'' && *q != ' ' && *q != '\n')
            q++;
        sl_buf_add(&b, run, (size_t)(q - run));
        if (q >= r->end) {
            q = NULL;
        } else if (*q != '\'') {
            q = quoted_blanks(r, q, parent, &b);
        } else if (q + 1 < r->end && q[1] == '\'') {
            sl_buf_addc(&b, '\'');
            q += 2;
        } else {
            return quoted_done(r, &b, q + 1, next);
        }
    }
    return quoted_done(r, &b, NULL, next);
}

static sl_value *double_quoted(const rd *r, const char *p, int parent, const char **next)
{
    sl_buf b;
    sl_buf_init(&b, (size_t)(r->end - r->s) + 16); /* never longer than the text */
    const char *q = p + 1;
    while (q) {
        const char *run = q;
        while (q < r->end && *q != '"' && *q != '\\' && *q != ' ' && *q != '\n')
            q++;
        sl_buf_add(&b, run, (size_t)(q - run));
        if (q >= r->end)
            break;
        if (*q == '"')
            return quoted_done(r, &b, q + 1, next);
        if (*q != '\\') {
            q = quoted_blanks(r, q, parent, &b);
            continue;
        }
        if (q + 1 >= r->end)
            break;
        char e = q[1];
        q += 2;
        int digits = 0;
        switch (e) {
        case '\n': {
            /* An escaped line break joins the lines with nothing between;
             * empty lines after it still count as line breaks. */
            int empty;
            q = fold_lines(r, q, parent, &empty);
            for (int i = 0; q && i < empty; i++)
                sl_buf_addc(&b, '\n');
            continue;
        }
        case '0': sl_buf_addc(&b, '\0'); break;
        case 'a': sl_buf_addc(&b, '\a'); break;
        case 'b': sl_buf_addc(&b, '\b'); break;
        case 't': sl_buf_addc(&b, '\t'); break;
        case 'n': sl_buf_addc(&b, '\n'); break;
        case 'v': sl_buf_addc(&b, '\v'); break;
        case 'f': sl_buf_addc(&b, '\f'); break;
        case 'r': sl_buf_addc(&b, '\r'); break;
        case 'e': sl_buf_addc(&b, '\x1b'); break;
        case ' ': sl_buf_addc(&b, ' '); break;
        case '"': sl_buf_addc(&b, '"'); break;
        case '/': sl_buf_addc(&b, '/'); break;
        case '\\': sl_buf_addc(&b, '\\'); break;
        case 'N': add_utf8(&b, 0x85); break;
        case '_': add_utf8(&b, 0xa0); break;
        case 'L': add_utf8(&b, 0x2028); break;
        case 'P': add_utf8(&b, 0x2029); break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: q = NULL; continue;
        }
        uint32_t cp = 0;
        for (int i = 0; q && i < digits; i++) {
            int h = q < r->end ? sl_hex_digit(*q) : -1;
            if (h < 0)
                q = NULL;
            else
                cp = cp * 16 + (uint32_t)h, q++;
        }
        if (q && digits) {
            if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                q = NULL;
            else
                add_utf8(&b, cp);
        }
    }
    return quoted_done(r, &b, NULL, next);
}

/* One line of a plain scalar, [c, le): no ": ", no ":" at the end, no
 * " #"; returns the end with trailing spaces trimmed, or NULL. */
/* The first ':' that ends a key (followed by a space or the line end) and
 * the first '#' that starts a comment (after a space) in [p, le). */
static const char *key_colon(const char *p, const char *le)
{
    for (const char *q = p; (q = memchr(q, ':', (size_t)(le - q))) != NULL; q++)
        if (q + 1 == le || q[1] == ' ')
            return q;
    return NULL;
}

static const char *comment_at(const char *p, const char *le)
{
    for (const char *q = p; (q = memchr(q, '#', (size_t)(le - q))) != NULL; q++)
        if (q > p && q[-1] == ' ')
            return q;
    return NULL;
}

/* One line of a plain scalar, [c, le): no ": ", no ":" at the end, no
 * " #"; returns the end with trailing spaces trimmed, or NULL. */
static const char *plain_line(const char *c, const char *le)
{
    if (key_colon(c, le) || comment_at(c, le))
        return NULL;
    while (le > c && le[-1] == ' ')
        le--;
    return le;
}

static bool plain_start_ok(const rd *r, const char *p)
{
    switch (*p) {
    case ',': case '[': case ']': case '{': case '}': case '#': case '&': case '*':
    case '!': case '|': case '>': case '\'': case '"': case '%': case '@': case '`':
        return false;
    default:
        break;
    }
    if ((*p == '-' || *p == '?' || *p == ':') && (p + 1 >= r->end || p[1] == ' ' || p[1] == '\n'))
        return false;
    return true;
}

/* Widths, heights, counts and coordinates repeat too: plain decimal
 * integers below SMALL_INTS are shared like short texts. */
static sl_value *small_int(const rd *r, const char *p, size_t n)
{
    if (!r->ints || n == 0 || n > 4 || (p[0] == '0' && n > 1))
        return NULL;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return NULL;
        v = v * 10 + (p[i] - '0');
    }
    if (!r->ints[v])
        r->ints[v] = json_integer(v);
    return json_incref(r->ints[v]);
}

/* Whether a plain scalar might resolve to something other than text: it
 * starts like a number, or is one of YAML 1.1's null / bool words.  Most
 * scalars are not, and skip the resolver. */
static bool maybe_typed(const char *p, size_t kl)
{
#define W(s) {s, sizeof s - 1}
    static const struct {
        const char *w;
        size_t n;
    } words[] = {W("~"), W("null"), W("Null"), W("NULL"), W("yes"), W("Yes"), W("YES"),
                 W("true"), W("True"), W("TRUE"), W("on"), W("On"), W("ON"), W("no"), W("No"),
                 W("NO"), W("false"), W("False"), W("FALSE"), W("off"), W("Off"), W("OFF")};
#undef W
    char c = p[0];
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')
        return true;
    if (kl > 5)
        return false;
    switch (c) {
    case '~': case 'n': case 'N': case 't': case 'T': case 'f': case 'F':
    case 'y': case 'Y': case 'o': case 'O':
        break;
    default:
        return false;
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i].n == kl && memcmp(words[i].w, p, kl) == 0)
            return true;
    return false;
}

static bool plain_is_text(const char *p, size_t kl)
{
    if (!maybe_typed(p, kl))
        return true;
    sl_value *kv = sl_yaml_resolve_plain(p, kl);
    bool text = json_is_string(kv);
    json_decref(kv);
    return text;
}

static sl_value *plain(const rd *r, const char *p, int parent, const char **next)
{
    if (!plain_start_ok(r, p))
        return NULL;
    const char *le = eol(r, p);
    const char *te = plain_line(p, le);
    if (!te)
        return NULL;
    const char *ln = next_line(r, le);
    /* Does a more indented line follow (after any blank ones)?  If not,
     * the common one-line case needs no buffer. */
    bool continues = false;
    for (const char *l = ln; l < r->end;) {
        int i = indent_of(r, l);
        if (l + i >= r->end || l[i] == '\n') {
            l = next_line(r, l);
            continue;
        }
        continues = i > parent;
        break;
    }
    if (!continues) {
        *next = ln;
        size_t n = (size_t)(te - p);
        if (!maybe_typed(p, n))
            return text_value(r, p, n);
        sl_value *v = small_int(r, p, n);
        return v ? v : sl_yaml_resolve_plain(p, n);
    }
    sl_buf b;
    sl_buf_init(&b, (size_t)(r->end - r->s) + 16); /* never longer than the text */
    sl_buf_add(&b, p, (size_t)(te - p));
    int empty = 0;
    const char *after = ln;
    while (ln < r->end) {
        int i = indent_of(r, ln);
        const char *c = ln + i;
        if (c >= r->end || *c == '\n') {
            empty++;
            ln = next_line(r, ln);
            continue;
        }
        if (i <= parent)
            break;
        if (*c == '#')
            goto decline; /* a comment inside the scalar */
        const char *cle = eol(r, c);
        const char *cte = plain_line(c, cle);
        if (!cte)
            goto decline;
        if (empty == 0)
            sl_buf_addc(&b, ' ');
        for (int k = 0; k < empty; k++)
            sl_buf_addc(&b, '\n');
        sl_buf_add(&b, c, (size_t)(cte - c));
        empty = 0;
        ln = next_line(r, cle);
        after = ln;
    }
    if (b.toobig)
        goto decline;
    *next = after;
    /* A plain scalar over several lines is text unless it resolves as
     * something else, exactly like a one-line one. */
    sl_value *v = sl_yaml_resolve_plain(b.data, b.len);
    sl_buf_release(&b);
    return v;
decline:
    sl_buf_release(&b);
    return NULL;
}

/* A quoted scalar that closes on its own line with nothing to unescape
 * (most ids and titles) needs no buffer: its text is the bytes between the
 * quotes. */
static sl_value *quoted_simple(const rd *r, const char *p, const char **next)
{
    const char *le = eol(r, p);
    const char *q = memchr(p + 1, *p, (size_t)(le - p - 1));
    if (!q || (*p == '\'' && q + 1 < le && q[1] == '\'') ||
        (*p == '"' && memchr(p + 1, '\\', (size_t)(q - p - 1))))
        return NULL;
    const char *after;
    if (!line_done(r, q + 1, &after))
        return NULL;
    *next = after;
    return text_value(r, p + 1, (size_t)(q - p - 1));
}

static sl_value *scalar(const rd *r, const char *p, int parent, const char **next)
{
    if (*p == '\'' || *p == '"') {
        sl_value *v = quoted_simple(r, p, next);
        if (v)
            return v;
        return *p == '\'' ? single_quoted(r, p, parent, next) : double_quoted(r, p, parent, next);
    }
    if ((*p == '[' && p + 1 < r->end && p[1] == ']') || (*p == '{' && p + 1 < r->end && p[1] == '}')) {
        if (!line_done(r, p + 2, next))
            return NULL;
        return *p == '[' ? json_array() : json_object();
    }
    return plain(r, p, parent, next);
}

/* ---- collections ---- */

static sl_value *node(rd *r, const char *p, int col, int parent, const char **next);

/* A mapping key at p.  Returns the position after its ':' or NULL when p
 * does not start a simple key.  With `k` NULL it only looks; otherwise the
 * key text is k->s / k->len, pointing into the input for plain keys or to
 * k->own (heap, caller frees) for quoted ones. */
typedef struct {
    const char *s;
    size_t len;
    char *own;
} keytext;

static const char *key_at(const rd *r, const char *p, keytext *k)
{
    const char *le = eol(r, p);
    if (*p == '\'' || *p == '"') {
        const char *after;
        /* A quoted key must close on its line: parse it as a one-line
         * scalar over the key only. */
        const char *q = p + 1;
        if (*p == '\'') {
            while (q < le && !(*q == '\'' && (q + 1 >= le || q[1] != '\'')))
                q += *q == '\'' ? 2 : 1;
        } else {
            while (q < le && *q != '"')
                q += *q == '\\' ? 2 : 1;
        }
        if (q >= le || q + 1 >= le || q[1] != ':' ||
            !(q + 2 >= r->end || q[2] == ' ' || q[2] == '\n'))
            return NULL;
        if (!k)
            return q + 2;
        rd sub = {p, q + 1, 0, NULL, NULL};
        sl_value *kv = *p == '\'' ? single_quoted(&sub, p, -1, &after)
                                  : double_quoted(&sub, p, -1, &after);
        if (!kv)
            return NULL;
        if (strlen(json_string_value(kv)) != json_string_length(kv)) {
            json_decref(kv);
            return NULL;
        }
        k->own = sl_xstrdup(json_string_value(kv));
        k->s = k->own;
        k->len = json_string_length(kv);
        json_decref(kv);
        return q + 2;
    }
    if (!plain_start_ok(r, p))
        return NULL;
    const char *q = key_colon(p, le);
    if (!q || comment_at(p, q))
        return NULL;
    const char *ke = q;
    while (ke > p && ke[-1] == ' ')
        ke--;
    if (ke == p)
        return NULL;
    size_t kl = (size_t)(ke - p);
    if (kl == 2 && p[0] == '<' && p[1] == '<')
        return NULL; /* merge key: the full parser handles it */
    if (!plain_is_text(p, kl))
        return NULL; /* 1:, true:, null: keys are typed in YAML */
    if (k) {
        k->s = p;
        k->len = kl;
        k->own = NULL;
    }
    return q + 1;
}

static sl_value *mapping(rd *r, const char *p, int col, const char **next)
{
    sl_value *obj = json_object();
    for (;;) {
        keytext key;
        const char *ac = key_at(r, p, &key);
        if (!ac)
            goto decline;
        const char *v = ac;
        while (v < r->end && *v == ' ')
            v++;
        sl_value *val;
        const char *after;
        if (at_eol(r, v) || *v == '#') {
            int i = 0;
            const char *l = content_line(r, next_line(r, v), &i);
            if (l && (i > col || (i == col && is_dash(r, l + i)))) {
                val = node(r, l + i, i, col, &after);
            } else {
                val = json_null();
                after = l ? l : r->end;
            }
        } else {
            /* On the key's own line only a scalar may follow. */
            val = scalar(r, v, col, &after);
        }
        if (!val) {
            free(key.own);
            goto decline;
        }
        json_object_setn_new_nocheck(obj, key.s, key.len, val);
        free(key.own);
        int i = 0;
        const char *l = content_line(r, after, &i);
        if (!l) {
            *next = r->end;
            return obj;
        }
        if (i == col && !is_dash(r, l + i)) {
            p = l + i;
            continue;
        }
        if (i >= col)
            goto decline;
        *next = l;
        return obj;
    }
decline:
    json_decref(obj);
    return NULL;
}

static sl_value *sequence(rd *r, const char *p, int col, const char **next)
{
    sl_value *arr = json_array();
    for (;;) {
        const char *q = p + 1;
        while (q < r->end && *q == ' ')
            q++;
        sl_value *item;
        const char *after;
        if (q < r->end && *q == '#')
            goto decline;
        if (at_eol(r, q)) {
            int i = 0;
            const char *l = content_line(r, next_line(r, q), &i);
            if (l && i > col) {
                item = node(r, l + i, i, col, &after);
            } else {
                item = json_null();
                after = l ? l : r->end;
            }
        } else {
            item = node(r, q, col + (int)(q - p), col, &after);
        }
        if (!item)
            goto decline;
        json_array_append_new(arr, item);
        int i = 0;
        const char *l = content_line(r, after, &i);
        if (!l) {
            *next = r->end;
            return arr;
        }
        if (i == col && is_dash(r, l + i)) {
            p = l + i;
            continue;
        }
        if (i > col)
            goto decline;
        *next = l;
        return arr;
    }
decline:
    json_decref(arr);
    return NULL;
}

static sl_value *node(rd *r, const char *p, int col, int parent, const char **next)
{
    if (++r->depth > MAX_DEPTH)
        return NULL;
    sl_value *v;
    if (is_dash(r, p)) {
        v = sequence(r, p, col, next);
    } else if (key_at(r, p, NULL)) {
        v = mapping(r, p, col, next);
    } else {
        v = scalar(r, p, parent, next);
    }
    r->depth--;
    return v;
}

int sl_blockyaml_parse(const char *text, size_t len, sl_value **out)
{
    rd r = {text, text + len, 0, NULL, NULL};
    *out = NULL;
    if (!alphabet_ok((const unsigned char *)text, (const unsigned char *)text + len))
        return -1;
    /* Directives and document markers belong to the full parser. */
    for (const char *l = text; l < r.end; l = next_line(&r, l))
        if ((r.end - l >= 3 && (!strncmp(l, "---", 3) || !strncmp(l, "...", 3))) || *l == '%')
            return -1;
    int i = 0;
    const char *l = content_line(&r, text, &i);
    if (!l || i != 0 || is_dash(&r, l))
        return -1;
    const char *next;
    r.intern = sl_xcalloc(INTERN_SLOTS, sizeof *r.intern);
    r.ints = sl_xcalloc(SMALL_INTS, sizeof *r.ints);
    sl_value *root = mapping(&r, l, 0, &next);
    for (int k = 0; k < INTERN_SLOTS; k++)
        json_decref(r.intern[k]);
    for (int k = 0; k < SMALL_INTS; k++)
        json_decref(r.ints[k]);
    free(r.intern);
    free(r.ints);
    if (!root)
        return -1;
    if (content_line(&r, next, &i)) {
        json_decref(root);
        return -1;
    }
    *out = root;
    return 0;
}
