/*
 * kwindex — see kwindex.h.
 *
 * The tokenizer reads UTF-8 once, a byte at a time for ASCII, and folds
 * case with the C.UTF-8 locale's tables (towlower_l) beyond it.  A
 * document's segment is built in one hash table of its terms: each chunk's
 * tokens bump their term's count, and at the chunk's end every term it
 * touched appends one posting (position delta, count, chunk length).
 */
#include "knowledge/kwindex.h"

#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "core/err.h"
#include "core/math.h"
#include "core/value.h"

/* ---- tokens ---- */

/* Base letters of the Latin letters with diacritics ('.': none), from
 * Unicode's canonical decompositions of their lower-case forms, plus the
 * letters with strokes (ø đ ł ħ ŧ ...) that decompose to nothing. */
/* U+00C0..U+024F */
static const char latin1[400] =
    "aaaaaa.ceeeeiiii.nooooo.ouuuuy..aaaaaa.ceeeeiiii.nooooo.ouuuuy.y"
    "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiii....jjkk.llllll."
    ".llnnnnnn...oooooo..rrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz."
    "b......................i..l.....oo.............uu....zz........."
    ".............aaiioouuuuuuuuuu.aaaa....ggkkoooo..j...gg..nnaa...."
    "aaaaeeeeiiiioooorrrruuuusstt..hh......aaeeooooooooyy.......ccl.."
    "...b..eejj..rryy";
/* U+1E00..U+1EFF */
static const char latin_add[256] =
    "aabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmm"
    "mmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvv"
    "wwwwwwwwwwxxxxyyzzzzzzhtwy......aaaaaaaaaaaaaaaaaaaaaaaaeeeeeeee"
    "eeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy......";

static locale_t utf8_loc;
static pthread_once_t loc_once = PTHREAD_ONCE_INIT;

static void loc_init(void)
{
    utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static bool cjk(unsigned cp)
{
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

enum { SEP, WORD, MARK, IDEO };

/* What a code point beyond ASCII is, and (WORD) its folded form. */
static int classify(unsigned cp, unsigned *folded)
{
    if (cp >= 0x300 && cp <= 0x36F)
        return MARK;   /* combining diacritics: dropped, the word goes on */
    if (cjk(cp))
        return IDEO;
    if (cp == 0xFFFD || !utf8_loc || !iswalnum_l((wint_t)cp, utf8_loc))
        return SEP;
    unsigned l = (unsigned)towlower_l((wint_t)cp, utf8_loc);
    char b = l >= 0xC0 && l < 0x250 ? latin1[l - 0xC0]
             : l >= 0x1E00 && l < 0x1F00 ? latin_add[l - 0x1E00]
                                          : '.';
    *folded = b != '.' ? (unsigned)(unsigned char)b : l;
    return WORD;
}

static uint32_t fnv_add(uint32_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

#define FNV0 2166136261u

/* ASCII: the folded letter or digit, 0 for a separator. */
static const unsigned char ascii_word[128] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5', ['6'] = '6',
    ['7'] = '7', ['8'] = '8', ['9'] = '9',
    ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g',
    ['h'] = 'h', ['i'] = 'i', ['j'] = 'j', ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n',
    ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u',
    ['v'] = 'v', ['w'] = 'w', ['x'] = 'x', ['y'] = 'y', ['z'] = 'z',
    ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f', ['G'] = 'g',
    ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l', ['M'] = 'm', ['N'] = 'n',
    ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's', ['T'] = 't', ['U'] = 'u',
    ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
};

typedef void sink_fn(const char *tok, size_t n, uint32_t hash, void *ud);

/* The tokenizer, inlined into each of its two callers so the sink is a
 * direct call: each token with its FNV-1a hash (computed as it is made). */
static inline __attribute__((always_inline)) size_t tokenize(const char *text, size_t len,
                                                             sink_fn *fn, void *ud)
{
    const unsigned char *s = (const unsigned char *)text;
    char tok[SL_KW_TOKEN_MAX + 8];
    size_t t = 0, count = 0, i = 0;
    uint32_t h = FNV0;
    /* the previous character of a CJK run (its bytes), and whether the run
     * has made a pair yet */
    char prev[4];
    size_t prevn = 0;
    bool paired = false;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80 && !prevn) {
            unsigned char f = ascii_word[c];
            if (f) {
                if (t < SL_KW_TOKEN_MAX) {
                    tok[t++] = (char)f;
                    h = (h ^ f) * 16777619u;
                }
            } else if (t) {
                fn(tok, t, h, ud);
                count++;
                t = 0;
                h = FNV0;
            }
            i++;
            continue;
        }
        unsigned cp = c, folded = 0;
        size_t step = 1;
        int kind;
        if (c < 0x80) {
            kind = ascii_word[c] ? WORD : SEP;
            folded = ascii_word[c];
        } else {
            pthread_once(&loc_once, loc_init);
            step = sl_utf8_cp(s + i, len - i, &cp, NULL);
            kind = classify(cp, &folded);
        }
        i += step;
        if (kind == MARK)
            continue;
        if (kind != IDEO && prevn) {
            /* a CJK run ends: a lone character is a token of its own */
            if (!paired) {
                fn(prev, prevn, fnv_add(FNV0, prev, prevn), ud);
                count++;
            }
            prevn = 0;
            paired = false;
        }
        if (kind != WORD && t) {
            fn(tok, t, h, ud);
            count++;
            t = 0;
            h = FNV0;
        }
        if (kind == WORD) {
            if (t + 4 <= SL_KW_TOKEN_MAX) {
                size_t n = sl_utf8_put(folded, tok + t);
                h = fnv_add(h, tok + t, n);
                t += n;
            }
        } else if (kind == IDEO) {
            char cur[4];
            size_t cn = sl_utf8_put(cp, cur);
            if (prevn) {
                char pair[8];
                memcpy(pair, prev, prevn);
                memcpy(pair + prevn, cur, cn);
                fn(pair, prevn + cn, fnv_add(FNV0, pair, prevn + cn), ud);
                count++;
                paired = true;
            }
            memcpy(prev, cur, cn);
            prevn = cn;
        }
    }
    if (prevn && !paired) {
        fn(prev, prevn, fnv_add(FNV0, prev, prevn), ud);
        count++;
    }
    if (t) {
        fn(tok, t, h, ud);
        count++;
    }
    return count;
}

typedef struct {
    void (*fn)(const char *tok, size_t n, void *ud);
    void *ud;
} plain_sink;

static void plain_token(const char *tok, size_t n, uint32_t hash, void *ud)
{
    plain_sink *p = ud;
    (void)hash;
    p->fn(tok, n, p->ud);
}

size_t sl_kw_tokens(const char *text, size_t len, void (*fn)(const char *tok, size_t n, void *ud),
                    void *ud)
{
    plain_sink p = {fn, ud};
    return tokenize(text, len, plain_token, &p);
}

typedef struct {
    char **w;
    size_t n, max;
} words_ctx;

static void word_put(const char *tok, size_t n, void *ud)
{
    words_ctx *c = ud;
    if (c->n >= c->max)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (!strncmp(c->w[i], tok, n) && !c->w[i][n])
            return;
    c->w = sl_xrealloc(c->w, (c->n + 1) * sizeof *c->w);
    c->w[c->n++] = sl_xstrndup(tok, n);
}

size_t sl_kw_words(const char *text, char ***out, size_t max)
{
    words_ctx c = {NULL, 0, max};
    sl_kw_tokens(text, strlen(text), word_put, &c);
    *out = c.w;
    return c.n;
}

void sl_kw_words_free(char **w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(w[i]);
    free(w);
}

/* ---- varints ---- */

typedef struct {
    unsigned char *p;
    size_t n, cap;
} bytes;

/* A varint of p[*at..n); -1 past the end or longer than 64 bits. */
static int get_varint(const unsigned char *p, size_t n, size_t *at, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*at >= n)
            return -1;
        unsigned char c = p[(*at)++];
        x |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int sl_kw_posting_next(const void *data, size_t size, size_t *at, long long *pos, long long *tf,
                       long long *dl)
{
    if (*at >= size)
        return 0;
    uint64_t delta, t, l;
    const unsigned char *p = data;
    if (get_varint(p, size, at, &delta) || get_varint(p, size, at, &t) ||
        get_varint(p, size, at, &l) || delta == 0 || delta > (uint64_t)1 << 40 || !t ||
        t > (uint64_t)1 << 40 || l > (uint64_t)1 << 40)
        return -1;
    *pos += (long long)delta;
    if (*pos > (long long)1 << 50)
        return -1;
    *tf = (long long)t;
    *dl = (long long)l;
    return 1;
}

void sl_kw_posting_put(sl_buf *out, long long prev, long long pos, long long tf, long long dl)
{
    unsigned char b[30];
    size_t n = 0;
    uint64_t v[3] = {(uint64_t)(pos - prev), (uint64_t)tf, (uint64_t)dl};
    for (int k = 0; k < 3; k++) {
        uint64_t x = v[k];
        while (x >= 0x80) {
            b[n++] = (unsigned char)(x | 0x80);
            x >>= 7;
        }
        b[n++] = (unsigned char)x;
    }
    sl_buf_add(out, b, n);
}

/* ---- pages of a segment ---- */

int sl_kw_page_next(const void *page, size_t n, size_t *at, sl_kw_entry *e)
{
    const unsigned char *p = page;
    if (*at >= n)
        return 0;
    uint64_t len, df, base, last, size;
    if (get_varint(p, n, at, &len) || len == 0 || len > n - *at)
        return -1;
    e->term = (const char *)p + *at;
    e->len = (size_t)len;
    *at += (size_t)len;
    if (get_varint(p, n, at, &df) || get_varint(p, n, at, &base) ||
        get_varint(p, n, at, &last) || get_varint(p, n, at, &size) || size > n - *at ||
        base > (uint64_t)1 << 50 || df > (uint64_t)1 << 40 || last > (uint64_t)1 << 50)
        return -1;
    e->df = (long long)df;
    e->base = (long long)base;
    e->last = (long long)last;
    e->data = p + *at;
    e->size = (size_t)size;
    *at += (size_t)size;
    return 1;
}

static void buf_varint(sl_buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (unsigned char)v;
    sl_buf_add(b, t, n);
}

static inline size_t put_varint(unsigned char *t, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (unsigned char)v;
    return n;
}

/* The entry's head (its term and four numbers) is made on the stack and
 * added with its postings in two calls: seven calls an entry were a
 * fifth of the store's writing of a segment. */
void sl_kw_page_put(sl_buf *page, const sl_kw_entry *e)
{
    if (e->len > SL_KW_TOKEN_MAX + 8) {  /* not a term of ours: the long way */
        buf_varint(page, e->len);
        sl_buf_add(page, e->term, e->len);
        buf_varint(page, (uint64_t)e->df);
        buf_varint(page, (uint64_t)e->base);
        buf_varint(page, (uint64_t)(e->last > 0 ? e->last : 0));
        buf_varint(page, e->size);
        sl_buf_add(page, e->data, e->size);
        return;
    }
    unsigned char head[SL_KW_TOKEN_MAX + 8 + 50];
    size_t n = put_varint(head, e->len);
    memcpy(head + n, e->term, e->len);
    n += e->len;
    n += put_varint(head + n, (uint64_t)e->df);
    n += put_varint(head + n, (uint64_t)e->base);
    n += put_varint(head + n, (uint64_t)(e->last > 0 ? e->last : 0));
    n += put_varint(head + n, e->size);
    sl_buf_add(page, head, n);
    sl_buf_add(page, e->data, e->size);
}

typedef struct {
    long long n, tf, dl;
} merged_posting;

static int cmp_posting(const void *a, const void *b)
{
    const merged_posting *x = a, *y = b;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* One term's entries of the merged segments (in their order) as one: the
 * first kept as it is, each next one joined on with its first posting's
 * step made from the previous one's last chunk (chunk numbers grow from
 * segment to segment), or, should they not, all decoded and sorted. */
int sl_kw_join(const sl_kw_entry *p, size_t n, sl_buf *out, sl_kw_entry *e)
{
    sl_buf_reset(out);
    e->base = p[0].base;
    e->df = 0;
    long long last = -1;   /* relative to e->base */
    bool ordered = true;
    for (size_t i = 0; i < n && ordered; i++) {
        e->df += p[i].df;
        size_t at = 0;
        long long pos = -1, tf, dl;
        int r = sl_kw_posting_next(p[i].data, p[i].size, &at, &pos, &tf, &dl);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        long long first = p[i].base + pos - e->base, lp = p[i].base + p[i].last - e->base;
        if (first <= last) {
            ordered = false;
            break;
        }
        /* a step or position the reader would refuse: not an index of ours */
        if (first - last > (long long)1 << 40 || lp < first || lp > (long long)1 << 50)
            return -1;
        sl_kw_posting_put(out, last, first, tf, dl);
        sl_buf_add(out, p[i].data + at, p[i].size - at);
        last = lp;
    }
    if (ordered) {
        e->last = last;
        return 0;
    }
    /* chunks out of order (documents indexed again out of order): all of
     * them by number */
    merged_posting *ps = NULL;
    size_t np = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = 0;
        long long pos = -1, tf, dl;
        int r;
        while ((r = sl_kw_posting_next(p[i].data, p[i].size, &at, &pos, &tf, &dl)) == 1) {
            if (np == cap) {
                cap = cap ? cap * 2 : 256;
                ps = sl_xrealloc(ps, cap * sizeof *ps);
            }
            ps[np++] = (merged_posting){p[i].base + pos, tf, dl};
        }
        if (r < 0) {
            free(ps);
            return -1;
        }
    }
    qsort(ps, np, sizeof *ps, cmp_posting);
    sl_buf_reset(out);
    e->base = 0;
    long long prev = -1;
    for (size_t i = 0; i < np; i++) {
        if (ps[i].n == prev || ps[i].n - prev > (long long)1 << 40 ||
            ps[i].n > (long long)1 << 50) {
            free(ps);
            return -1;   /* one chunk twice, or out of reach: not an index sluice wrote */
        }
        sl_kw_posting_put(out, prev, ps[i].n, ps[i].tf, ps[i].dl);
        prev = ps[i].n;
    }
    e->df = (long long)np;
    e->last = prev;
    free(ps);
    return 0;
}

/* ---- a document's segment ---- */

/* The postings' bytes of a document: regions cut from blocks, a term's
 * moved to one twice its size when full (the old left behind), all freed
 * at once: no allocation per term. */
typedef struct pool_block {
    struct pool_block *next;
    size_t used, cap;
    unsigned char mem[];
} pool_block;

static unsigned char *pool_get(pool_block **head, size_t n)
{
    pool_block *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = sl_xmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        /* a big one goes behind the current block, which keeps filling */
        if (*head && n > 65536) {
            b->next = (*head)->next;
            (*head)->next = b;
        } else {
            b->next = *head;
            *head = b;
        }
    }
    unsigned char *p = b->mem + b->used;
    b->used += n;
    return p;
}

static inline void put_varint_pool(pool_block **pool, bytes *b, uint64_t v)
{
    if (__builtin_expect(b->n + 10 > b->cap, 0)) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        unsigned char *p = pool_get(pool, cap);
        if (b->n)
            memcpy(p, b->p, b->n);
        b->p = p;
        b->cap = cap;
    }
    while (v >= 0x80) {
        b->p[b->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (unsigned char)v;
}

typedef struct {
    uint32_t off, len;         /* the term's bytes in the arena */
    long long last;            /* position of its last posting, -1: none */
    long long df;
    bytes post;
} term;

/* A slot of the table: the term's first bytes and length packed in a word
 * (a token of up to 7 bytes compares there alone), its hash, its index. */
typedef struct {
    uint64_t key;
    uint32_t hash, idx;        /* idx + 1, 0: empty */
} slot;

struct sl_kw_doc {
    term *t;
    uint32_t *tf;              /* per term, in the current chunk */
    size_t nt, cap;
    slot *slot;
    size_t nslot;
    char *arena;
    size_t arena_n, arena_cap;
    uint32_t *touched;         /* terms of the current chunk */
    size_t ntouched, touched_cap;
    long long pos, rows, tokens, chunk_tokens;
    sl_store_term *out;
    sl_store_kw kw;
    pool_block *pool;
};

static inline uint64_t key_of(const char *tok, size_t n)
{
    uint64_t k = 0;
    memcpy(&k, tok, n < 7 ? n : 7);
    return k | (uint64_t)(n < 7 ? n : 0xFF) << 56;
}

sl_kw_doc *sl_kw_doc_new(void)
{
    sl_kw_doc *d = sl_xcalloc(1, sizeof *d);
    d->nslot = 1024;
    d->slot = sl_xcalloc(d->nslot, sizeof *d->slot);
    d->pos = -1;
    return d;
}

static void grow_slots(sl_kw_doc *d)
{
    slot *old = d->slot;
    size_t on = d->nslot;
    d->nslot *= 2;
    d->slot = sl_xcalloc(d->nslot, sizeof *d->slot);
    for (size_t i = 0; i < on; i++) {
        if (!old[i].idx)
            continue;
        size_t at = old[i].hash & (d->nslot - 1);
        while (d->slot[at].idx)
            at = (at + 1) & (d->nslot - 1);
        d->slot[at] = old[i];
    }
    free(old);
}

/* memcmp for the short strings tokens are, without a call */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return false;
        a += 8, b += 8, n -= 8;
    }
    while (n--)
        if (*a++ != *b++)
            return false;
    return true;
}

static uint32_t new_term(sl_kw_doc *d, const char *tok, size_t n)
{
    if (d->arena_n + n + 1 > d->arena_cap) {
        d->arena_cap = (d->arena_cap + n + 1) * 2;
        d->arena = sl_xrealloc(d->arena, d->arena_cap);
    }
    memcpy(d->arena + d->arena_n, tok, n);
    d->arena[d->arena_n + n] = 0;
    if (d->nt == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 256;
        d->t = sl_xrealloc(d->t, d->cap * sizeof *d->t);
        d->tf = sl_xrealloc(d->tf, d->cap * sizeof *d->tf);
    }
    d->t[d->nt] = (term){.off = (uint32_t)d->arena_n, .len = (uint32_t)n, .last = -1};
    d->tf[d->nt] = 0;
    d->arena_n += n + 1;
    return (uint32_t)d->nt++;
}

static inline void doc_token(const char *tok, size_t n, uint32_t h, void *ud)
{
    sl_kw_doc *d = ud;
    uint64_t key = key_of(tok, n);
    size_t at = h & (d->nslot - 1);
    uint32_t x;
    for (;;) {
        const slot *sl = &d->slot[at];
        if (!sl->idx) {
            if ((d->nt + 1) * 2 > d->nslot) {
                grow_slots(d);
                at = h & (d->nslot - 1);
                while (d->slot[at].idx)
                    at = (at + 1) & (d->nslot - 1);
            }
            x = new_term(d, tok, n);
            d->slot[at] = (slot){key, h, x + 1};
            break;
        }
        if (sl->hash == h && sl->key == key &&
            (n < 7 || (d->t[sl->idx - 1].len == n &&
                       same_bytes(d->arena + d->t[sl->idx - 1].off, tok, n)))) {
            x = sl->idx - 1;
            break;
        }
        at = (at + 1) & (d->nslot - 1);
    }
    if (!d->tf[x]++) {
        if (d->ntouched == d->touched_cap) {
            d->touched_cap = d->touched_cap ? d->touched_cap * 2 : 256;
            d->touched = sl_xrealloc(d->touched, d->touched_cap * sizeof *d->touched);
        }
        d->touched[d->ntouched++] = x;
    }
    d->chunk_tokens++;
}

void sl_kw_doc_add(sl_kw_doc *d, long long pos, const char *text)
{
    if (pos <= d->pos)
        SL_BUG("kwindex: chunk positions must increase");
    d->pos = pos;
    d->chunk_tokens = 0;
    d->ntouched = 0;
    tokenize(text, strlen(text), doc_token, d);
    for (size_t i = 0; i < d->ntouched; i++) {
        uint32_t ix = d->touched[i];
        term *x = &d->t[ix];
        put_varint_pool(&d->pool, &x->post, (uint64_t)(pos - x->last));
        put_varint_pool(&d->pool, &x->post, d->tf[ix]);
        put_varint_pool(&d->pool, &x->post, (uint64_t)d->chunk_tokens);
        x->last = pos;
        d->tf[ix] = 0;
        x->df++;
    }
    d->rows++;
    d->tokens += d->chunk_tokens;
}

/* A term for sorting: its first 8 bytes as a big-endian number (byte
 * order is then number order), the rest compared only on a tie. */
typedef struct {
    uint64_t prefix;
    const char *term;
    uint32_t idx;
} sort_key;

/* LSD radix sort on the prefixes (a byte all of them share is passed
 * over), then ties of long terms by strcmp: qsort's calls were most of a
 * small document's segment. */
static void sort_keys(sort_key *k, size_t n)
{
    if (n < 2)
        return;
    sort_key *tmp = sl_xcalloc(n, sizeof *tmp), *a = k, *b = tmp;
    for (int byte = 0; byte < 8; byte++) {
        int shift = byte * 8;
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[(a[i].prefix >> shift & 0xFF) + 1]++;
        if (count[(a[0].prefix >> shift & 0xFF) + 1] == n)
            continue;   /* every key has the same byte here */
        for (int c = 0; c < 256; c++)
            count[c + 1] += count[c];
        for (size_t i = 0; i < n; i++)
            b[count[a[i].prefix >> shift & 0xFF]++] = a[i];
        sort_key *t = a;
        a = b;
        b = t;
    }
    if (a != k)
        memcpy(k, a, n * sizeof *k);
    free(tmp);
    /* equal prefixes: terms of more than 8 bytes, in order by the rest */
    for (size_t i = 1; i < n; i++) {
        sort_key x = k[i];
        size_t j = i;
        while (j > 0 && k[j - 1].prefix == x.prefix && strcmp(k[j - 1].term, x.term) > 0) {
            k[j] = k[j - 1];
            j--;
        }
        k[j] = x;
    }
}

const sl_store_kw *sl_kw_doc_done(sl_kw_doc *d)
{
    free(d->out);
    d->out = sl_xcalloc(d->nt + 1, sizeof *d->out);
    sort_key *k = sl_xcalloc(d->nt + 1, sizeof *k);
    for (size_t i = 0; i < d->nt; i++) {
        const unsigned char *t = (const unsigned char *)d->arena + d->t[i].off;
        uint64_t v = 0;
        for (size_t j = 0; j < 8; j++)
            v = v << 8 | (j < d->t[i].len ? t[j] : 0);
        k[i] = (sort_key){v, (const char *)t, (uint32_t)i};
    }
    sort_keys(k, d->nt);
    for (size_t i = 0; i < d->nt; i++) {
        const term *x = &d->t[k[i].idx];
        d->out[i] = (sl_store_term){.term = k[i].term, .df = x->df, .last = x->last,
                                    .data = x->post.p, .size = x->post.n};
    }
    free(k);
    d->kw = (sl_store_kw){.terms = d->out, .n = d->nt, .rows = d->rows, .tokens = d->tokens};
    return &d->kw;
}

void sl_kw_doc_free(sl_kw_doc *d)
{
    if (!d)
        return;
    for (pool_block *b = d->pool, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(d->t);
    free(d->tf);
    free(d->slot);
    free(d->arena);
    free(d->touched);
    free(d->out);
    free(d);
}

/* ---- scoring ---- */

typedef struct {
    long long n;   /* -1: empty */
    double score;
} acc;

struct sl_kw_scorer {
    double avgdl;
    long long rows;
    const long long *skip;    /* [first, last] pairs, sorted */
    size_t nskip;
    acc *a;
    size_t na, cap;   /* cap a power of two */
};

sl_kw_scorer *sl_kw_scorer_new(long long rows, long long tokens)
{
    sl_kw_scorer *s = sl_xcalloc(1, sizeof *s);
    s->rows = rows > 0 ? rows : 0;
    s->avgdl = rows > 0 && tokens > 0 ? (double)tokens / (double)rows : 1.0;
    s->cap = 256;
    s->a = sl_xcalloc(s->cap, sizeof *s->a);
    for (size_t i = 0; i < s->cap; i++)
        s->a[i].n = -1;
    return s;
}

static acc *acc_at(sl_kw_scorer *s, long long n)
{
    if ((s->na + 1) * 2 > s->cap) {
        acc *old = s->a;
        size_t oc = s->cap;
        s->cap *= 2;
        s->a = sl_xcalloc(s->cap, sizeof *s->a);
        for (size_t i = 0; i < s->cap; i++)
            s->a[i].n = -1;
        for (size_t i = 0; i < oc; i++)
            if (old[i].n >= 0) {
                size_t at = (size_t)((uint64_t)old[i].n * 0x9E3779B97F4A7C15ULL >> 40) & (s->cap - 1);
                while (s->a[at].n >= 0)
                    at = (at + 1) & (s->cap - 1);
                s->a[at] = old[i];
            }
        free(old);
    }
    size_t at = (size_t)((uint64_t)n * 0x9E3779B97F4A7C15ULL >> 40) & (s->cap - 1);
    while (s->a[at].n >= 0 && s->a[at].n != n)
        at = (at + 1) & (s->cap - 1);
    if (s->a[at].n < 0) {
        s->a[at] = (acc){n, 0};
        s->na++;
    }
    return &s->a[at];
}

void sl_kw_scorer_skip(sl_kw_scorer *s, const long long *ranges, size_t n)
{
    s->skip = ranges;
    s->nskip = n;
}

static bool skipped(const sl_kw_scorer *s, long long n)
{
    size_t lo = 0, hi = s->nskip;
    while (lo < hi) {   /* the last range starting at or before n */
        size_t mid = (lo + hi) / 2;
        if (s->skip[2 * mid] <= n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && n <= s->skip[2 * (lo - 1) + 1];
}

long long sl_kw_scorer_live(const sl_kw_scorer *s, long long base, const void *data, size_t size)
{
    size_t at = 0;
    long long pos = -1, tf, dl, live = 0;
    int r;
    while ((r = sl_kw_posting_next(data, size, &at, &pos, &tf, &dl)) == 1)
        live += !s->nskip || !skipped(s, base + pos);
    return r < 0 ? -1 : live;
}

int sl_kw_scorer_add(sl_kw_scorer *s, long long df, long long base, const void *data, size_t size)
{
    const double k1 = 1.2, b = 0.75;
    double idf = sl_ln(((double)s->rows - (double)df + 0.5) / ((double)df + 0.5));
    if (!(idf > 0))   /* also NaN: a df past the rows counted (a damaged index) */
        idf = 1e-6;
    size_t at = 0;
    long long pos = -1, tf, dl;
    int r;
    while ((r = sl_kw_posting_next(data, size, &at, &pos, &tf, &dl)) == 1) {
        if (s->nskip && skipped(s, base + pos))
            continue;
        double f = (double)tf;
        double score = idf * f * (k1 + 1) / (f + k1 * (1 - b + b * (double)dl / s->avgdl));
        acc_at(s, base + pos)->score -= score;
    }
    if (r < 0)
        return -1;
    return 0;
}

/* worse: a higher score, ties by the higher number (a stable order) */
static bool worse(const acc *x, const acc *y)
{
    return x->score > y->score || (x->score == y->score && x->n > y->n);
}

static void sift_down(acc *h, size_t k, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < k && worse(&h[l], &h[w]))
            w = l;
        if (r < k && worse(&h[r], &h[w]))
            w = r;
        if (w == i)
            return;
        acc t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

size_t sl_kw_scorer_top(sl_kw_scorer *s, size_t limit, long long **ns, double **bm25)
{
    /* a heap of the best limit so far, the worst of them on top */
    acc *h = sl_xcalloc(limit + 1, sizeof *h);
    size_t k = 0;
    for (size_t i = 0; i < s->cap && limit; i++) {
        const acc *x = &s->a[i];
        if (x->n < 0)
            continue;
        if (k < limit) {
            size_t j = k++;
            h[j] = *x;
            while (j && worse(&h[j], &h[(j - 1) / 2])) {
                acc t = h[j];
                h[j] = h[(j - 1) / 2];
                h[(j - 1) / 2] = t;
                j = (j - 1) / 2;
            }
        } else if (worse(&h[0], x)) {
            h[0] = *x;
            sift_down(h, k, 0);
        }
    }
    *ns = sl_xcalloc(k + 1, sizeof **ns);
    *bm25 = sl_xcalloc(k + 1, sizeof **bm25);
    for (size_t m = k; m > 0; m--) {   /* the worst comes off first */
        (*ns)[m - 1] = h[0].n;
        (*bm25)[m - 1] = h[0].score;
        h[0] = h[m - 1];
        sift_down(h, m - 1, 0);
    }
    free(h);
    return k;
}

void sl_kw_scorer_free(sl_kw_scorer *s)
{
    if (!s)
        return;
    free(s->a);
    free(s);
}
