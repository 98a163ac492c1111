/*
 * split — Dify's CleanProcessor, FixedRecursiveCharacterTextSplitter and
 * RecursiveCharacterTextSplitter, over code points (docs/knowledge.md).
 *
 * The text is decoded once into an array of code points; pieces are views
 * into it, and the splitters feed them one at a time into a merger (the
 * LangChain-style _merge_splits), which keeps only the current window, so
 * a 5 MB text without a single separator costs a window, not a list of
 * five million pieces.  Every chunk made goes straight through the index
 * processor's post-processing into the caller's list, where the chunk
 * limit is checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/split.h"

/* ---- code points --------------------------------------------------------- */

typedef struct {
    uint32_t *p;
    size_t n, alloc;
} cps;

typedef struct {
    const uint32_t *p;
    size_t n;
} span;

static void cps_add(cps *s, uint32_t c)
{
    if (s->n == s->alloc) {
        s->alloc = s->alloc ? s->alloc * 2 : 64;
        s->p = sl_xrealloc(s->p, s->alloc * sizeof *s->p);
    }
    s->p[s->n++] = c;
}

static void cps_addn(cps *s, const uint32_t *p, size_t n)
{
    if (s->n + n > s->alloc) {
        while (s->n + n > s->alloc)
            s->alloc = s->alloc ? s->alloc * 2 : 64;
        s->p = sl_xrealloc(s->p, s->alloc * sizeof *s->p);
    }
    if (n)
        memcpy(s->p + s->n, p, n * sizeof *p);
    s->n += n;
}

/* Decodes strict UTF-8 (Python's decoder: no overlong forms, surrogates or
 * values past U+10FFFF) into out. */
static int decode(const char *text, size_t len, const char *what, cps *out, sl_err *err)
{
    const unsigned char *p = (const unsigned char *)text;
    out->alloc = len + 1;
    out->p = sl_xmalloc(out->alloc * sizeof *out->p);
    out->n = 0;
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        if (c < 0x80) {
            out->p[out->n++] = c;
            i++;
            continue;
        }
        uint32_t cp;
        bool ok;
        size_t k = sl_utf8_cp(p + i, len - i, &cp, &ok);
        if (!ok)
            return sl_err_set(err, SL_EINVAL,
                              "%s: invalid UTF-8 at byte offset %zu; extract the document's text "
                              "first (it comes out as UTF-8)",
                              what, i);
        out->p[out->n++] = cp;
        i += k;
    }
    return 0;
}

/* UTF-8 for code points, written a block at a time (one sl_buf_add per
 * code point was a tenth of a knowledge base's ingest).  Code points no
 * UTF-8 holds become U+FFFD (sl_utf8_put). */
static void encode(sl_buf *b, const uint32_t *p, size_t n)
{
    unsigned char u[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = p[i];
        if (k > sizeof u - 4) {
            sl_buf_add(b, u, k);
            k = 0;
        }
        if (c && c < 0x80) {
            u[k++] = (unsigned char)c;
            continue;
        }
        k += sl_utf8_put(c, (char *)u + k);
    }
    if (k)
        sl_buf_add(b, u, k);
}

/* Python's str.isspace(), which strip() and the regex \s use. */
static bool py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

static span strip(span s)
{
    while (s.n && py_space(s.p[0]))
        s.p++, s.n--;
    while (s.n && py_space(s.p[s.n - 1]))
        s.n--;
    return s;
}

static int check_input(size_t len, size_t max_input, sl_err *err)
{
    if (max_input && len > max_input)
        return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                            "the text to chunk is %zu bytes, more than knowledge_max_input (%zu); "
                            "raise the limit or split the document",
                            len, max_input);
    return 0;
}

/* ---- cleaning (CleanProcessor.clean) -------------------------------------- */

static bool email_local(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-';
}

static bool email_domain(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* The end of `[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+` matched at i, or 0. */
static size_t email_host_end(const cps *t, size_t i)
{
    size_t j = i;
    while (j < t->n && email_domain(t->p[j]))
        j++;
    if (j == i || j >= t->n || t->p[j] != '.')
        return 0;
    size_t k = j + 1;
    while (k < t->n && (email_domain(t->p[k]) || t->p[k] == '.'))
        k++;
    return k > j + 1 ? k : 0;
}

static bool has_at(const cps *t, size_t i, const char *lit)
{
    for (size_t k = 0; lit[k]; k++)
        if (i + k >= t->n || t->p[i + k] != (unsigned char)lit[k])
            return false;
    return true;
}

/* `https?://[^\s)]+` at i: its end, or 0. */
static size_t url_end(const cps *t, size_t i)
{
    size_t j;
    if (has_at(t, i, "https://"))
        j = i + 8;
    else if (has_at(t, i, "http://"))
        j = i + 7;
    else
        return 0;
    size_t k = j;
    while (k < t->n && !py_space(t->p[k]) && t->p[k] != ')')
        k++;
    return k > j ? k : 0;
}

#define IMG_MARK "__MARKDOWN_IMAGE_URL_"

/* remove_urls_emails: emails go, then markdown images are set aside as
 * "![image](__MARKDOWN_IMAGE_URL_i__)", the other URLs go, and the images'
 * URLs come back, which is what Dify's three regex passes do. */
static void remove_urls_emails(cps *t)
{
    cps a = {0};
    for (size_t i = 0; i < t->n;) {
        size_t j = i;
        while (j < t->n && email_local(t->p[j]))
            j++;
        size_t end = j > i && j < t->n && t->p[j] == '@' ? email_host_end(t, j + 1) : 0;
        if (end) {
            i = end;
            continue;
        }
        if (j == i)
            j = i + 1;
        cps_addn(&a, t->p + i, j - i);
        i = j;
    }
    /* images: `!\[.*?\]\((https?://[^\s)]+)\)`, "." not matching "\n".
     * Kept linear for hostile text ("![![![…", "](http://](http://…"):
     * a line where one "![" found no end is not searched again, and the
     * end of the URL run last measured is remembered, as positions only
     * grow. */
    cps b = {0};
    span *urls = NULL;
    size_t nurls = 0, urls_alloc = 0, hopeless = 0, rstart = 0, rend = 0;
    for (size_t i = 0; i < a.n;) {
        size_t found = 0, us = 0, ue = 0;
        if (i >= hopeless && a.p[i] == '!' && i + 1 < a.n && a.p[i + 1] == '[') {
            size_t k = i + 2;
            for (; k < a.n && a.p[k] != '\n'; k++) {
                if (a.p[k] != ']' || k + 1 >= a.n || a.p[k + 1] != '(')
                    continue;
                size_t j = has_at(&a, k + 2, "https://") ? k + 10 : has_at(&a, k + 2, "http://") ? k + 9 : 0;
                if (!j)
                    continue;
                if (j < rstart || j >= rend) {
                    rstart = rend = j;
                    while (rend < a.n && !py_space(a.p[rend]) && a.p[rend] != ')')
                        rend++;
                }
                if (rend > j && rend < a.n && a.p[rend] == ')') {
                    found = rend + 1, us = k + 2, ue = rend;
                    break;
                }
            }
            if (!found)
                hopeless = k;
        }
        if (!found) {
            cps_add(&b, a.p[i++]);
            continue;
        }
        if (nurls == urls_alloc) {
            urls_alloc = urls_alloc ? urls_alloc * 2 : 8;
            urls = sl_xrealloc(urls, urls_alloc * sizeof *urls);
        }
        urls[nurls] = (span){a.p + us, ue - us};
        char mark[64];
        int m = snprintf(mark, sizeof mark, "![image](" IMG_MARK "%zu__)", nurls++);
        for (int k = 0; k < m; k++)
            cps_add(&b, (unsigned char)mark[k]);
        i = found;
    }
    cps c = {0};
    for (size_t i = 0; i < b.n;) {
        size_t e = url_end(&b, i);
        if (e)
            i = e;
        else
            cps_add(&c, b.p[i++]);
    }
    /* the URLs back, in one pass */
    t->n = 0;
    size_t ml = strlen(IMG_MARK);
    for (size_t i = 0; i < c.n;) {
        if (has_at(&c, i, IMG_MARK)) {
            size_t k = i + ml, idx = 0, d = 0;
            while (k < c.n && c.p[k] >= '0' && c.p[k] <= '9' && d < 20)
                idx = idx * 10 + (c.p[k++] - '0'), d++;
            /* Python's f-string never writes a leading zero */
            bool canon = d == 1 || (d > 1 && c.p[i + ml] != '0');
            if (d && canon && idx < nurls && has_at(&c, k, "__")) {
                cps_addn(t, urls[idx].p, urls[idx].n);
                i = k + 2;
                continue;
            }
        }
        cps_add(t, c.p[i++]);
    }
    free(urls);
    free(a.p);
    free(b.p);
    free(c.p);
}

static bool extra_space(uint32_t c)
{
    return c == '\t' || c == '\f' || c == '\r' || c == ' ' || c == 0xA0 || c == 0x1680 || c == 0x180E ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* The same as the code-point path below (without remove_urls_emails), in
 * one pass over the bytes: each code point flows through the steps in
 * their order, each step holding back only what its pattern still needs
 * ("<|" and "|>" a character, runs of newlines and of spaces their
 * length).  Most text is ASCII, and ASCII never decodes. */
typedef struct {
    sl_buf *out;
    unsigned char stage[16384];   /* written to out in blocks */
    size_t staged;
    bool spaces;
    bool bar;                  /* "|>": a '|' held */
    size_t newlines;           /* "\n{3,}": newlines held */
    size_t nspace;             /* runs of spaces: how many held */
    unsigned char first[4];    /* the first of them (a run of one stays) */
    size_t firstn;
} fast_clean;

static void fc_flush(fast_clean *f)
{
    sl_buf_add(f->out, f->stage, f->staged);
    f->staged = 0;
}

static inline void fc_emit(fast_clean *f, const unsigned char *b, size_t n)
{
    if (f->staged + n > sizeof f->stage)
        fc_flush(f);
    memcpy(f->stage + f->staged, b, n);
    f->staged += n;
}

/* ASCII no step looks at: copied as it is while no step holds anything
 * (so is a lone space or newline between two of them) */
static const bool plain_ascii[256] = {
    ['!' ... ';'] = true, ['='] = true, ['?' ... '{'] = true, ['}'] = true, ['~'] = true,
};

static size_t plain_run(const unsigned char *p, size_t i, size_t len)
{
    size_t j = i;
    while (j < len) {
        if (plain_ascii[p[j]])
            j++;
        else if ((p[j] == ' ' || p[j] == '\n') && j + 1 < len && plain_ascii[p[j + 1]])
            j += 2;
        else
            break;
    }
    return j;
}

/* the run-of-spaces step */
static void fc_space(fast_clean *f, uint32_t c, const unsigned char *b, size_t n)
{
    if (f->spaces && extra_space(c)) {
        if (!f->nspace++) {
            memcpy(f->first, b, n);
            f->firstn = n;
        }
        return;
    }
    if (f->nspace) {
        if (f->nspace >= 2)
            fc_emit(f, (const unsigned char *)" ", 1);
        else
            fc_emit(f, f->first, f->firstn);
        f->nspace = 0;
    }
    if (n)
        fc_emit(f, b, n);
}

/* the newlines step */
static void fc_newline(fast_clean *f, uint32_t c, const unsigned char *b, size_t n)
{
    if (f->spaces && c == '\n' && n) {
        f->newlines++;
        return;
    }
    if (f->newlines) {
        size_t k = f->newlines >= 3 ? 2 : f->newlines;
        for (size_t i = 0; i < k; i++)
            fc_space(f, '\n', (const unsigned char *)"\n", 1);
        f->newlines = 0;
    }
    fc_space(f, c, b, n);
}

/* control characters, then the newlines step */
static void fc_control(fast_clean *f, uint32_t c, const unsigned char *b, size_t n)
{
    if (n && (c <= 0x08 || c == 0x0B || c == 0x0C || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
              c == 0xFFFE))
        return;
    fc_newline(f, c, b, n);
}

/* "|>" -> ">", then control characters; n 0 flushes */
static void fc_bar(fast_clean *f, uint32_t c, const unsigned char *b, size_t n)
{
    if (f->bar) {
        f->bar = false;
        if (c == '>' && n) {
            fc_control(f, '>', b, n);
            return;
        }
        fc_control(f, '|', (const unsigned char *)"|", 1);
    }
    if (c == '|' && n) {
        f->bar = true;
        return;
    }
    fc_control(f, c, b, n);
}

static int clean_bytes(const char *text, size_t len, const sl_clean_rules *rules, sl_buf *out,
                       sl_err *err)
{
    const unsigned char *p = (const unsigned char *)text;
    fast_clean f = {.out = out, .spaces = rules->remove_extra_spaces};
    size_t start = out->len;   /* a failure leaves out as it was */
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        if (!f.bar && !f.newlines && !f.nspace) {
            size_t j = plain_run(p, i, len);
            if (j > i) {
                fc_emit(&f, p + i, j - i);
                i = j;
                continue;
            }
        }
        if (c < 0x80) {
            /* "<|" -> "<" reads the input itself */
            if (c == '<' && i + 1 < len && p[i + 1] == '|') {
                fc_bar(&f, '<', p + i, 1);
                i += 2;
                continue;
            }
            fc_bar(&f, c, p + i, 1);
            i++;
            continue;
        }
        uint32_t cp;
        bool ok;
        size_t k = sl_utf8_cp(p + i, len - i, &cp, &ok);
        if (!ok) {
            out->len = start;
            return sl_err_set(err, SL_EINVAL,
                              "clean: invalid UTF-8 at byte offset %zu; extract the document's "
                              "text first (it comes out as UTF-8)",
                              i);
        }
        fc_bar(&f, cp, p + i, k);
        i += k;
    }
    fc_bar(&f, 0, NULL, 0);   /* flush every step */
    fc_flush(&f);
    if (out->toobig)
        return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                            "the cleaned text is larger than its buffer's cap (%zu bytes)", out->cap);
    return 0;
}

int sl_clean(const char *text, size_t len, const sl_clean_rules *rules, sl_buf *out, sl_err *err)
{
    if (check_input(len, rules->max_input, err))
        return -1;
    if (!rules->remove_urls_emails && !rules->by_code_points)
        return clean_bytes(text, len, rules, out, err);
    cps t = {0};
    if (decode(text, len, "clean", &t, err)) {
        free(t.p);
        return -1;
    }
    /* "<|" → "<" everywhere, then "|>" → ">" (two passes, as Dify's two
     * re.sub calls: "<||>" becomes "<>") */
    for (int pass = 0; pass < 2; pass++) {
        size_t w = 0;
        for (size_t i = 0; i < t.n; i++) {
            if (pass == 0 && t.p[i] == '<' && i + 1 < t.n && t.p[i + 1] == '|')
                t.p[w++] = '<', i++;
            else if (pass == 1 && t.p[i] == '|' && i + 1 < t.n && t.p[i + 1] == '>')
                t.p[w++] = '>', i++;
            else
                t.p[w++] = t.p[i];
        }
        t.n = w;
    }
    /* [\x00-\x08\x0B\x0C\x0E-\x1F\x7F] and U+FFFE (not ï, ¿ and ¾: Dify's
     * regex names the bytes of U+FFFE as three characters) */
    size_t w = 0;
    for (size_t i = 0; i < t.n; i++) {
        uint32_t c = t.p[i];
        if (c <= 0x08 || c == 0x0B || c == 0x0C || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0xFFFE)
            continue;
        t.p[w++] = c;
    }
    t.n = w;
    if (rules->remove_extra_spaces) {
        w = 0;
        for (size_t i = 0; i < t.n;) {
            size_t j = i;
            while (j < t.n && t.p[j] == '\n')
                j++;
            if (j - i >= 3) {
                t.p[w++] = '\n', t.p[w++] = '\n';
                i = j;
            } else if (j > i) {
                while (i < j)
                    t.p[w++] = t.p[i++];
            } else {
                t.p[w++] = t.p[i++];
            }
        }
        t.n = w;
        w = 0;
        for (size_t i = 0; i < t.n;) {
            size_t j = i;
            while (j < t.n && extra_space(t.p[j]))
                j++;
            if (j - i >= 2) {
                t.p[w++] = ' ';
                i = j;
            } else {
                t.p[w++] = t.p[i++];
            }
        }
        t.n = w;
    }
    if (rules->remove_urls_emails)
        remove_urls_emails(&t);
    encode(out, t.p, t.n);
    free(t.p);
    if (out->toobig)
        return sl_err_limit(err, SL_ELIMIT, "knowledge_max_input",
                            "the cleaned text is larger than its buffer's cap (%zu bytes)", out->cap);
    return 0;
}

/* ---- splitting ------------------------------------------------------------- */

/* The separators of _get_splitter: "\n\n", "。", ". ", " ", "". */
static const uint32_t SEP0[] = {'\n', '\n'}, SEP1[] = {0x3002}, SEP2[] = {'.', ' '}, SEP3[] = {' '};
static const span SEPS[] = {{SEP0, 2}, {SEP1, 1}, {SEP2, 2}, {SEP3, 1}, {NULL, 0}};
#define NSEPS 5

typedef enum { POST_PARAGRAPH, POST_PARENT_CHILD } post_kind;

typedef struct {
    size_t size, overlap;
    post_kind post;
    sl_split_chunks *out;
    size_t *made, max_chunks;
    cps scratch;
    sl_err *err;
    bool failed;
} splitter;

/* remove_leading_symbols' class:
 * [\u2000-\u206F\u2E00-\u2E7F\u3000-\u303F"#$%&'()*+,./:;<=>?@^_`~] */
static bool leading_symbol(uint32_t c)
{
    return (c >= 0x2000 && c <= 0x206F) || (c >= 0x2E00 && c <= 0x2E7F) || (c >= 0x3000 && c <= 0x303F) ||
           (c < 0x80 && c && strchr("\"#$%&'()*+,./:;<=>?@^_`~", (int)c));
}

static void chunks_push(sl_split_chunks *c, span s)
{
    if (c->n == c->alloc) {
        c->alloc = c->alloc ? c->alloc * 2 : 16;
        c->v = sl_xrealloc(c->v, c->alloc * sizeof *c->v);
    }
    sl_buf b;
    sl_buf_init(&b, (size_t)-1);
    encode(&b, s.p, s.n);
    sl_split_chunk *k = &c->v[c->n++];
    k->len = b.len;
    k->chars = s.n;
    k->text = b.data ? sl_buf_detach(&b) : sl_xstrdup("");
}

/* A chunk into the list, counted against the limit. */
static void push(splitter *sp, span s)
{
    if (sp->max_chunks && *sp->made >= sp->max_chunks) {
        sl_err_limit(sp->err, SL_ELIMIT, "knowledge_max_chunks",
                     "the text makes more than knowledge_max_chunks (%zu) chunks; raise the limit "
                     "or the chunk length",
                     sp->max_chunks);
        sp->failed = true;
        return;
    }
    (*sp->made)++;
    chunks_push(sp->out, s);
}

/* One chunk as the index processor stores it, or nothing when it is empty. */
static void emit(splitter *sp, span s)
{
    if (sp->failed || !strip(s).n)
        return;
    if (sp->post == POST_PARAGRAPH) {
        while (s.n && leading_symbol(s.p[0]))
            s.p++, s.n--;
    } else if (s.n && (s.p[0] == '.' || s.p[0] == 0x3002)) {
        s.p++, s.n--;
    }
    s = strip(s);
    if (s.n)
        push(sp, s);
}

/* _merge_splits, fed one piece at a time: the window is the current doc. */
typedef struct {
    splitter *sp;
    size_t sepl;          /* 1: pieces are joined with " ", 0: with "" */
    span *win;
    size_t lo, hi, alloc, total;
} merger;

static void merge_emit(merger *m)
{
    splitter *sp = m->sp;
    sp->scratch.n = 0;
    for (size_t i = m->lo; i < m->hi; i++) {
        if (i > m->lo && m->sepl)
            cps_add(&sp->scratch, ' ');
        cps_addn(&sp->scratch, m->win[i].p, m->win[i].n);
    }
    emit(sp, strip((span){sp->scratch.p, sp->scratch.n}));
}

static void merge_feed(merger *m, span d)
{
    splitter *sp = m->sp;
    size_t k = m->hi - m->lo;
    if (m->total + d.n + (k ? m->sepl : 0) > sp->size) {
        if (k) {
            merge_emit(m);
            while (m->total > sp->overlap ||
                   (m->total + d.n + (k ? m->sepl : 0) > sp->size && m->total > 0)) {
                m->total -= m->win[m->lo].n + (k > 1 ? m->sepl : 0);
                m->lo++;
                k--;
            }
        }
    }
    if (m->lo == m->hi)
        m->lo = m->hi = 0;
    if (m->hi == m->alloc) {
        if (m->lo > m->alloc / 2) {
            memmove(m->win, m->win + m->lo, (m->hi - m->lo) * sizeof *m->win);
            m->hi -= m->lo;
            m->lo = 0;
        } else {
            m->alloc = m->alloc ? m->alloc * 2 : 32;
            m->win = sl_xrealloc(m->win, m->alloc * sizeof *m->win);
        }
    }
    m->win[m->hi++] = d;
    m->total += d.n + (m->hi - m->lo > 1 ? m->sepl : 0);
}

static void merge_flush(merger *m)
{
    if (m->hi > m->lo)
        merge_emit(m);
    m->lo = m->hi = 0;
    m->total = 0;
}

static bool span_at(span t, size_t i, span s)
{
    /* the first code point decides almost every position: memcmp only then */
    return i + s.n <= t.n && (!s.n || t.p[i] == s.p[0]) &&
           (s.n <= 1 || !memcmp(t.p + i + 1, s.p + 1, (s.n - 1) * sizeof *s.p));
}

static bool contains(span t, span s)
{
    for (size_t i = 0; i + s.n <= t.n; i++)
        if (span_at(t, i, s))
            return true;
    return false;
}

/* re.search(sep, text) with sep as a regex: only ". " differs from a
 * substring test ("." is any character but "\n"). */
static bool regex_search(span t, int si)
{
    if (si != 2)
        return contains(t, SEPS[si]);
    for (size_t i = 1; i < t.n; i++)
        if (t.p[i] == ' ' && t.p[i - 1] != '\n')
            return true;
    return false;
}

static bool dropped(span s)
{
    return s.n == 0 || (s.n == 1 && s.p[0] == '\n');
}

/* RecursiveCharacterTextSplitter._split_text(text, SEPS[first..]). */
static void split_base(splitter *sp, span t, int first);

/* One piece of a recursive split: a small one waits to be merged with
 * its neighbours; a large one flushes them and is split with the next
 * separators, or kept whole when none is left. */
static void take(splitter *sp, merger *m, span piece, int next)
{
    if (dropped(piece))
        return;
    if (piece.n < sp->size) {
        merge_feed(m, piece);
        return;
    }
    merge_flush(m);
    if (next >= NSEPS)
        emit(sp, piece);
    else
        split_base(sp, piece, next);
}

static void split_base(splitter *sp, span t, int first)
{
    int si = NSEPS - 1, next = NSEPS;
    for (int i = first; i < NSEPS; i++) {
        if (!SEPS[i].n) {
            si = i;
            break;
        }
        if (regex_search(t, i)) {
            si = i, next = i + 1;
            break;
        }
    }
    span sep = SEPS[si];
    merger m = {.sp = sp};
    size_t start = 0;
    while (start < t.n && !sp->failed) {
        span piece;
        if (!sep.n) {
            piece = (span){t.p + start, 1};
        } else {
            size_t i = start;
            while (i + sep.n <= t.n && !span_at(t, i, sep))
                i++;
            size_t end = i + sep.n <= t.n ? i + sep.n : t.n;
            piece = (span){t.p + start, end - start};
        }
        start += piece.n;
        take(sp, &m, piece, next);
    }
    merge_flush(&m);
    free(m.win);
}

/* FixedRecursiveCharacterTextSplitter.recursive_split_text. */
static void split_recursive(splitter *sp, span t)
{
    int si = NSEPS - 1, next = NSEPS;
    for (int i = 0; i < NSEPS; i++) {
        if (!SEPS[i].n) {
            si = i;
            break;
        }
        if (contains(t, SEPS[i])) {
            si = i, next = i + 1;
            break;
        }
    }
    span sep = SEPS[si];
    if (!sep.n) {
        /* characters packed greedily; those past size - overlap are
         * carried into the next chunk */
        cps cur = {0}, ov = {0};
        for (size_t i = 0; i < t.n && !sp->failed; i++) {
            if (t.p[i] == '\n')
                continue;
            if (cur.n + 1 <= sp->size - sp->overlap) {
                cps_add(&cur, t.p[i]);
            } else if (cur.n + 1 <= sp->size) {
                cps_add(&cur, t.p[i]);
                cps_add(&ov, t.p[i]);
            } else {
                emit(sp, (span){cur.p, cur.n});
                cur.n = 0;
                cps_addn(&cur, ov.p, ov.n);
                cps_add(&cur, t.p[i]);
                ov.n = 0;
            }
        }
        if (cur.n)
            emit(sp, (span){cur.p, cur.n});
        free(cur.p);
        free(ov.p);
        return;
    }
    /* " " splits on runs of spaces and (a deliberate difference) joins the
     * words again with one space; Dify joins them with "" (#39403) */
    bool words = si == 3;
    merger m = {.sp = sp, .sepl = words};
    size_t start = 0;
    bool last = false;
    while (!last && !sp->failed) {
        span piece;
        size_t i = start;
        while (i + sep.n <= t.n && !span_at(t, i, sep))
            i++;
        if (i + sep.n > t.n) {
            piece = (span){t.p + start, t.n - start};
            last = true;
            start = t.n;
        } else if (words) {
            piece = (span){t.p + start, i - start};
            start = i;
            while (start < t.n && t.p[start] == ' ')
                start++;
        } else {
            piece = (span){t.p + start, i + sep.n - start};
            start = i + sep.n;
        }
        take(sp, &m, piece, next);
    }
    merge_flush(&m);
    free(m.win);
}

/* FixedRecursiveCharacterTextSplitter.split_text: the fixed separator
 * first; pieces that fit are kept as they are. */
static void split_fixed(splitter *sp, span t, span fixed)
{
    size_t start = 0;
    for (;;) {
        size_t i = start;
        if (fixed.n)
            while (i + fixed.n <= t.n && !span_at(t, i, fixed))
                i++;
        bool last = !fixed.n || i + fixed.n > t.n;
        span piece = {t.p + start, last ? t.n - start : i - start};
        if (piece.n > sp->size)
            split_recursive(sp, piece);
        else
            emit(sp, piece);
        if (last || sp->failed)
            break;
        start = i + fixed.n;
    }
}

/* The separator as typed: \n, \t and \\ escapes translated. */
static int separator(const char *s, cps *out, sl_err *err)
{
    if (!s)
        s = "\n";
    size_t n = strlen(s);
    if (n > SL_SPLIT_MAX_SEPARATOR)
        return sl_err_set(err, SL_EINVAL, "the chunk separator is %zu bytes, more than %d", n,
                          SL_SPLIT_MAX_SEPARATOR);
    cps raw = {0};
    if (decode(s, n, "the chunk separator", &raw, err)) {
        free(raw.p);
        return -1;
    }
    for (size_t i = 0; i < raw.n; i++) {
        uint32_t c = raw.p[i];
        if (c == '\\' && i + 1 < raw.n && (raw.p[i + 1] == 'n' || raw.p[i + 1] == 't' || raw.p[i + 1] == '\\')) {
            uint32_t e = raw.p[++i];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : '\\';
        }
        cps_add(out, c);
    }
    free(raw.p);
    return 0;
}

/* Dify refuses lengths under 50 when it builds a splitter from a process
 * rule (sl_split_rule_read does too); the splitter itself takes any length
 * from 1, which the tests' small vectors use. */
static int check_lengths(const sl_split_opts *o, long min, sl_err *err)
{
    if (o->max_length < min || o->max_length > SL_SPLIT_MAX_LENGTH)
        return sl_err_set(err, SL_EINVAL, "Custom segment length should be between %ld and %d.", min,
                          SL_SPLIT_MAX_LENGTH);
    if (o->overlap > o->max_length)
        return sl_err_set(err, SL_EINVAL,
                          "Got a larger chunk overlap (%ld) than chunk size (%ld), should be smaller.",
                          o->overlap, o->max_length);
    if (o->overlap < 0)
        return sl_err_set(err, SL_EINVAL, "the chunk overlap (%ld) is negative; use 0 or more",
                          o->overlap);
    return 0;
}

/* Splits t with o's mode into sp's list. */
static int split_one(splitter *sp, span t, const sl_split_opts *o, sl_err *err)
{
    if (o->mode == SL_SPLIT_AUTOMATIC) {
        sp->size = SL_SPLIT_AUTO_LENGTH;
        sp->overlap = SL_SPLIT_AUTO_OVERLAP;
        split_base(sp, t, 0);
        return sp->failed ? -1 : 0;
    }
    if (check_lengths(o, 1, err))
        return -1;
    cps fixed = {0};
    if (separator(o->separator, &fixed, err)) {
        free(fixed.p);
        return -1;
    }
    sp->size = (size_t)o->max_length;
    sp->overlap = (size_t)o->overlap;
    split_fixed(sp, t, (span){fixed.p, fixed.n});
    free(fixed.p);
    return sp->failed ? -1 : 0;
}

int sl_split(const char *text, size_t len, const sl_split_opts *o, sl_split_chunks *out, sl_err *err)
{
    if (o->mode == SL_SPLIT_CUSTOM && check_lengths(o, 1, err))
        return -1;
    if (check_input(len, o->max_input, err))
        return -1;
    cps t = {0};
    if (decode(text, len, "chunking", &t, err)) {
        free(t.p);
        return -1;
    }
    size_t made = 0;
    splitter sp = {.post = POST_PARAGRAPH, .out = out, .made = &made, .max_chunks = o->max_chunks,
                   .err = err};
    int rc = split_one(&sp, (span){t.p, t.n}, o, err);
    free(sp.scratch.p);
    free(t.p);
    return rc;
}

void sl_split_chunks_release(sl_split_chunks *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].text);
    free(c->v);
    c->v = NULL;
    c->n = c->alloc = 0;
}

void sl_split_parents_release(sl_split_parents *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].parent.text);
        sl_split_chunks_release(&p->v[i].children);
    }
    free(p->v);
    p->v = NULL;
    p->n = p->alloc = 0;
}

int sl_split_parent_child(const char *text, size_t len, const sl_split_pc_opts *o,
                          sl_split_parents *out, sl_err *err)
{
    sl_split_opts po = o->parent, co = o->child;
    po.mode = co.mode = SL_SPLIT_CUSTOM;
    if ((o->parent_mode == SL_SPLIT_PARENT_PARAGRAPH && check_lengths(&po, 1, err)) ||
        check_lengths(&co, 1, err))
        return -1;
    if (check_input(len, o->max_input, err))
        return -1;
    cps t = {0};
    if (decode(text, len, "chunking", &t, err)) {
        free(t.p);
        return -1;
    }
    size_t made = 0;
    sl_split_chunks parents = {0};
    splitter sp = {.post = POST_PARENT_CHILD, .out = &parents, .made = &made,
                   .max_chunks = o->max_chunks, .err = err};
    int rc = 0;
    if (o->parent_mode == SL_SPLIT_PARENT_FULL_DOC) {
        /* the whole text is the one parent, as it is (Dify's full-doc
         * joins the documents' text and keeps it) */
        if (strip((span){t.p, t.n}).n)
            push(&sp, (span){t.p, t.n});
        rc = sp.failed ? -1 : 0;
    } else {
        rc = split_one(&sp, (span){t.p, t.n}, &po, err);
    }
    for (size_t i = 0; i < parents.n; i++) {
        if (out->n == out->alloc) {
            out->alloc = out->alloc ? out->alloc * 2 : 16;
            out->v = sl_xrealloc(out->v, out->alloc * sizeof *out->v);
        }
        sl_split_parent *p = &out->v[out->n++];
        p->parent = parents.v[i];
        p->children = (sl_split_chunks){0};
        if (rc)
            continue;
        cps pt = {0};
        if (decode(p->parent.text, p->parent.len, "chunking", &pt, err)) {
            free(pt.p);
            rc = -1;
            continue;
        }
        sp.out = &p->children;
        rc = split_one(&sp, (span){pt.p, pt.n}, &co, err);
        free(pt.p);
    }
    free(parents.v);
    free(sp.scratch.p);
    free(t.p);
    return rc;
}

/* ---- process rules ------------------------------------------------------------ */

static int read_seg(const sl_value *seg, const char *where, sl_split_opts *o, sl_err *err)
{
    if (!json_is_object(seg))
        return sl_err_set(err, SL_EINVAL, "%s must be an object", where);
    o->mode = SL_SPLIT_CUSTOM;
    const sl_value *sep = json_object_get(seg, "separator");
    if (sep && !json_is_null(sep) && !json_is_string(sep))
        return sl_err_set(err, SL_EINVAL, "%s.separator must be a string", where);
    o->separator = json_is_string(sep) ? json_string_value(sep) : "\n";
    const sl_value *mx = json_object_get(seg, "max_tokens");
    if (!json_is_integer(mx))
        return sl_err_set(err, SL_EINVAL, "%s.max_tokens must be an integer (the chunk length)", where);
    json_int_t m = json_integer_value(mx);
    o->max_length = m < 0 ? -1 : m > 1000000 ? 1000000 : (long)m;
    const sl_value *ov = json_object_get(seg, "chunk_overlap");
    if (ov && !json_is_null(ov) && !json_is_integer(ov))
        return sl_err_set(err, SL_EINVAL, "%s.chunk_overlap must be an integer", where);
    json_int_t v = json_is_integer(ov) ? json_integer_value(ov) : 0;
    o->overlap = v < -1 ? -1 : v > 1000000 ? 1000000 : (long)v;
    return check_lengths(o, SL_SPLIT_MIN_LENGTH, err);
}

int sl_split_rule_read(const sl_value *pr, sl_split_rule *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(pr))
        return sl_err_set(err, SL_EINVAL, "No process rule found.");
    const char *mode = json_string_value(json_object_get(pr, "mode"));
    if (!mode)
        return sl_err_set(err, SL_EINVAL, "process_rule.mode must be \"automatic\", \"custom\" or "
                                          "\"hierarchical\"");
    if (!strcmp(mode, "automatic")) {
        /* AUTOMATIC_RULES: remove_extra_spaces on, urls/emails off */
        out->clean.remove_extra_spaces = true;
        out->split.mode = SL_SPLIT_AUTOMATIC;
        return 0;
    }
    if (strcmp(mode, "custom") && strcmp(mode, "hierarchical"))
        return sl_err_set(err, SL_EINVAL,
                          "process_rule.mode \"%.40s\" is not one of \"automatic\", \"custom\", "
                          "\"hierarchical\"",
                          mode);
    const sl_value *rules = json_object_get(pr, "rules");
    if (!json_is_object(rules))
        return sl_err_set(err, SL_EINVAL, "No rules found in process rule.");
    const sl_value *pre = json_object_get(rules, "pre_processing_rules");
    if (pre && !json_is_null(pre) && !json_is_array(pre))
        return sl_err_set(err, SL_EINVAL, "rules.pre_processing_rules must be a list");
    size_t i;
    const sl_value *r;
    json_array_foreach(pre, i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        bool on = json_is_true(json_object_get(r, "enabled"));
        if (!id)
            return sl_err_set(err, SL_EINVAL, "rules.pre_processing_rules[%zu].id must be a string", i);
        if (!strcmp(id, "remove_extra_spaces"))
            out->clean.remove_extra_spaces = on;
        else if (!strcmp(id, "remove_urls_emails"))
            out->clean.remove_urls_emails = on;
        /* remove_stopwords: listed by Dify, done by nothing */
    }
    const sl_value *seg = json_object_get(rules, "segmentation");
    if (!seg || json_is_null(seg))
        return sl_err_set(err, SL_EINVAL, "No segmentation found in rules.");
    if (!strcmp(mode, "custom"))
        return read_seg(seg, "rules.segmentation", &out->split, err);
    out->hierarchical = true;
    const char *pm = json_string_value(json_object_get(rules, "parent_mode"));
    if (pm && !strcmp(pm, "full-doc"))
        out->pc.parent_mode = SL_SPLIT_PARENT_FULL_DOC;
    else if (!pm || !strcmp(pm, "paragraph"))
        out->pc.parent_mode = SL_SPLIT_PARENT_PARAGRAPH;
    else
        return sl_err_set(err, SL_EINVAL,
                          "rules.parent_mode \"%.40s\" is not \"paragraph\" or \"full-doc\"", pm);
    if (read_seg(seg, "rules.segmentation", &out->pc.parent, err))
        return -1;
    const sl_value *sub = json_object_get(rules, "subchunk_segmentation");
    if (!sub || json_is_null(sub))
        return sl_err_set(err, SL_EINVAL, "No subchunk segmentation found in rules.");
    return read_seg(sub, "rules.subchunk_segmentation", &out->pc.child, err);
}
