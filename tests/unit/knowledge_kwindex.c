/*
 * knowledge_kwindex — sluice's own keyword index (knowledge/kwindex.h):
 * the tokens of text in several scripts, a document's segment, and BM25
 * scores against numbers worked out by hand.  tests/cli/kb_bm25.sh checks
 * the scores against SQLite's FTS5 on the same texts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/kwindex.h"
#include "tap.h"

static void join(const char *tok, size_t n, void *ud)
{
    char *out = ud;
    if (*out)
        strcat(out, "|");
    strncat(out, tok, n);
}

static void tokens_are(const char *text, const char *want)
{
    char got[2048] = "";
    sl_kw_tokens(text, strlen(text), join, got);
    CHECK(!strcmp(got, want), "tokens of \"%s\": %s (want %s)", text, got, want);
}

static void tokens(void)
{
    tokens_are("Hello, World! 42 times_two", "hello|world|42|times|two");
    tokens_are("  --  ", "");
    tokens_are("Café NAÏVE Ørsted łódź", "cafe|naive|orsted|lodz");
    tokens_are("Привет МИР", "привет|мир");
    tokens_are("Straße", "straße");
    tokens_are("e\xCC\x81te", "ete");   /* e + combining acute: one word, the mark dropped */
    tokens_are("知识库", "知识|识库");
    tokens_are("中", "中");
    tokens_are("abc中文def", "abc|中文|def");
    tokens_are("中 文", "中|文");
    tokens_are("한국어 텍스트", "한국|국어|텍스|스트");
    tokens_are("a\xFF" "b\xE3\x80", "a|b");   /* malformed bytes separate */
    tokens_are("x\xC0\xAFy", "x|y");          /* an overlong '/' is no letter */
    char longw[400];
    memset(longw, 'A', 300);
    longw[300] = 0;
    char got[2048] = "";
    size_t n = sl_kw_tokens(longw, 300, join, got);
    CHECK(n == 1 && strlen(got) == SL_KW_TOKEN_MAX && got[0] == 'a',
          "a 300-letter run is one token, cut at %d bytes", SL_KW_TOKEN_MAX);

    char **w;
    size_t nw = sl_kw_words("The cat and THE hat; the end", &w, 64);
    CHECK(nw == 5 && !strcmp(w[0], "the") && !strcmp(w[4], "end"),
          "words: each once, in order of appearance (%zu)", nw);
    sl_kw_words_free(w, nw);
    nw = sl_kw_words("a b c d e f", &w, 3);
    CHECK(nw == 3, "words: at most max");
    sl_kw_words_free(w, nw);
}

/* BM25 as FTS5: idf = ln((N - df + 0.5) / (df + 0.5)), at least 1e-6;
 * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl)). */
static double bm25_term(double n, double df, double tf, double dl, double avgdl)
{
    double idf = log((n - df + 0.5) / (df + 0.5));
    if (idf <= 0)
        idf = 1e-6;
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl));
}

static const sl_store_term *term_of(const sl_store_kw *kw, const char *t)
{
    for (size_t i = 0; i < kw->n; i++)
        if (!strcmp(kw->terms[i].term, t))
            return &kw->terms[i];
    return NULL;
}

static void segment(void)
{
    /* positions 0, 2, 5 indexed (1, 3 and 4 are chunks that are not) */
    sl_kw_doc *d = sl_kw_doc_new();
    sl_kw_doc_add(d, 0, "red apple red pear");
    sl_kw_doc_add(d, 2, "green apple");
    sl_kw_doc_add(d, 5, "a red, red, red barn");
    const sl_store_kw *kw = sl_kw_doc_done(d);
    CHECK(kw->rows == 3 && kw->tokens == 11, "3 chunks of 11 tokens (%lld, %lld)", kw->rows,
          kw->tokens);
    bool sorted = true;
    for (size_t i = 1; i < kw->n; i++)
        sorted = sorted && strcmp(kw->terms[i - 1].term, kw->terms[i].term) < 0;
    CHECK(kw->n == 6 && sorted, "6 terms, in byte order, each once");
    const sl_store_term *red = term_of(kw, "red"), *apple = term_of(kw, "apple");
    CHECK(red && red->df == 2 && apple && apple->df == 2, "df: red in 2 chunks, apple in 2");

    /* the knowledge base: this document (rows from 100) and 7 more chunks
     * without these words: N 10, 30 tokens */
    double n = 10, avgdl = 3.0;
    sl_kw_scorer *s = sl_kw_scorer_new(10, 30);
    CHECK(sl_kw_scorer_add(s, red->df, 100, red->data, red->size) == 0, "red's postings decode");
    long long *ns;
    double *bm;
    size_t got = sl_kw_scorer_top(s, 10, &ns, &bm);
    double want0 = bm25_term(n, 2, 3, 5, avgdl), want1 = bm25_term(n, 2, 2, 4, avgdl);
    CHECK(got == 2 && ns[0] == 105 && ns[1] == 100, "red: the barn (3 of 5) before the apple row");
    CHECK(got == 2 && fabs(bm[0] + want0) < 1e-12 && fabs(bm[1] + want1) < 1e-12,
          "BM25 as FTS5 (negated): %.9f %.9f (want %.9f %.9f)", got ? bm[0] : 0, got > 1 ? bm[1] : 0,
          -want0, -want1);
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);

    /* two terms add up; the best limit come first */
    s = sl_kw_scorer_new(10, 30);
    sl_kw_scorer_add(s, red->df, 100, red->data, red->size);
    sl_kw_scorer_add(s, apple->df, 100, apple->data, apple->size);
    got = sl_kw_scorer_top(s, 1, &ns, &bm);
    double w0 = bm25_term(n, 2, 2, 4, avgdl) + bm25_term(n, 2, 1, 4, avgdl);
    CHECK(got == 1 && ns[0] == 100 && fabs(bm[0] + w0) < 1e-12,
          "red OR apple: the row with both, its score the sum");
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);

    /* a word in most chunks weighs 1e-6, as FTS5's clamp */
    s = sl_kw_scorer_new(3, 11);
    sl_kw_scorer_add(s, red->df, 0, red->data, red->size);
    got = sl_kw_scorer_top(s, 5, &ns, &bm);
    CHECK(got == 2 && bm[0] > -1e-5 && bm[0] < 0, "idf <= 0 is clamped to 1e-6");
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);

    /* damaged postings are refused, not read past */
    s = sl_kw_scorer_new(10, 30);
    static const unsigned char cut[] = {0x01, 0x02}, zero[] = {0x00, 0x01, 0x01},
                               runaway[] = {0x81, 0x81, 0x81};
    CHECK(sl_kw_scorer_add(s, 1, 0, cut, sizeof cut) == -1, "a posting cut short is refused");
    CHECK(sl_kw_scorer_add(s, 1, 0, zero, sizeof zero) == -1, "a zero step is refused");
    CHECK(sl_kw_scorer_add(s, 1, 0, runaway, sizeof runaway) == -1,
          "a varint running past the end is refused");
    CHECK(sl_kw_scorer_add(s, 40, 0, red->data, red->size) == 0,
          "a df past the rows (a damaged count) still scores");
    sl_kw_scorer_free(s);
    sl_kw_doc_free(d);

    /* a big segment: many chunks, many terms, the scorer's table grows */
    d = sl_kw_doc_new();
    char text[64];
    for (int i = 0; i < 5000; i++) {
        snprintf(text, sizeof text, "common w%d w%d", i, i % 7);
        sl_kw_doc_add(d, i, text);
    }
    kw = sl_kw_doc_done(d);
    const sl_store_term *common = term_of(kw, "common");
    s = sl_kw_scorer_new(5000, 15000);
    CHECK(common && common->df == 5000 && sl_kw_scorer_add(s, 5000, 0, common->data, common->size) == 0,
          "5,000 postings of one term decode");
    got = sl_kw_scorer_top(s, 3, &ns, &bm);
    CHECK(got == 3 && ns[0] == 0 && ns[1] == 1 && ns[2] == 2, "ties: the lower row first");
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);
    sl_kw_doc_free(d);
}

/* Pages and joining, as the store merges segments. */
static void pages(void)
{
    sl_kw_doc *a = sl_kw_doc_new(), *b = sl_kw_doc_new();
    sl_kw_doc_add(a, 0, "apple pear");
    sl_kw_doc_add(a, 1, "apple");
    sl_kw_doc_add(b, 0, "apple fig");
    const sl_store_kw *ka = sl_kw_doc_done(a), *kb = sl_kw_doc_done(b);
    sl_buf page;
    sl_buf_init(&page, 0);
    for (size_t i = 0; i < ka->n; i++) {
        const sl_store_term *t = &ka->terms[i];
        sl_kw_entry w = {t->term, strlen(t->term), t->df, 10, t->last, t->data, t->size};
        sl_kw_page_put(&page, &w);
    }
    size_t at = 0, n = 0;
    sl_kw_entry e;
    bool same = true;
    while (sl_kw_page_next(page.data, page.len, &at, &e) == 1) {
        same = same && e.len == strlen(ka->terms[n].term) &&
               !memcmp(e.term, ka->terms[n].term, e.len) && e.base == 10 &&
               e.df == ka->terms[n].df && e.last == ka->terms[n].last;
        n++;
    }
    CHECK(same && n == ka->n && at == page.len, "a page gives back its entries");
    at = 1;
    CHECK(sl_kw_page_next(page.data, page.len - 1, &at, &e) == -1 ||
              sl_kw_page_next(page.data, page.len - 1, &at, &e) == -1,
          "a page cut short is refused");
    sl_buf_release(&page);

    /* apple: rows 10, 11 (document a, base 10), row 20 (document b) */
    const sl_store_term *ta = term_of(ka, "apple"), *tb = term_of(kb, "apple");
    sl_kw_entry parts[2] = {{"apple", 5, ta->df, 10, ta->last, ta->data, ta->size},
                            {"apple", 5, tb->df, 20, tb->last, tb->data, tb->size}};
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_kw_entry j;
    sl_kw_scorer *s = sl_kw_scorer_new(3, 6);
    CHECK(sl_kw_join(parts, 2, &out, &j) == 0 && j.df == 3 && j.base == 10 && j.last == 10,
          "joined: 3 chunks, the first's base, the last at 20 (10 past it)");
    sl_kw_scorer_add(s, 3, j.base, out.data, out.len);
    long long *ns;
    double *bm;
    size_t got = sl_kw_scorer_top(s, 5, &ns, &bm);
    CHECK(got == 3 && ns[0] + ns[1] + ns[2] == 41, "... rows 10, 11 and 20");
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);
    /* out of order (b's rows first): decoded and sorted instead */
    sl_kw_entry rev[2] = {parts[1], parts[0]};
    s = sl_kw_scorer_new(3, 6);
    CHECK(sl_kw_join(rev, 2, &out, &j) == 0 && j.df == 3 && j.base == 0 && j.last == 20,
          "out of order: sorted, base 0");
    sl_kw_scorer_add(s, 3, j.base, out.data, out.len);
    got = sl_kw_scorer_top(s, 5, &ns, &bm);
    CHECK(got == 3 && ns[0] + ns[1] + ns[2] == 41, "... the same rows");
    free(ns);
    free(bm);
    sl_kw_scorer_free(s);
    /* the same chunk twice: refused */
    sl_kw_entry twice[2] = {parts[0], parts[0]};
    CHECK(sl_kw_join(twice, 2, &out, &j) == -1, "one chunk twice is refused");
    sl_kw_entry lying[2] = {parts[0], parts[1]};
    lying[1].last = -5;
    CHECK(sl_kw_join(lying, 2, &out, &j) == -1, "a last position before the first is refused");
    sl_buf_release(&out);
    sl_kw_doc_free(a);
    sl_kw_doc_free(b);
}

int main(void)
{
    tokens();
    segment();
    pages();
    return tap_done();
}
