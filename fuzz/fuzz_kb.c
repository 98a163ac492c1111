/*
 * fuzz_kb — libFuzzer target for what the knowledge side makes of hostile
 * text and JSON: Dify's metadata conditions against a document's values
 * (sl_kb_conditions_match), and the keyword index (knowledge/kwindex.h):
 * tokens of any bytes, a document's segment built from them, and scoring
 * of postings that may be anything.
 *
 * The input is a NUL-separated triple: conditions JSON, metadata JSON,
 * text (any bytes).  Besides memory errors the target checks:
 *   - every token is non-empty, at most SL_KW_TOKEN_MAX bytes plus one
 *     character, valid UTF-8, and holds no ASCII upper case, space or
 *     punctuation;
 *   - a segment built from the text's lines scores every posting it holds
 *     (its own postings always decode), goes into a page and comes back
 *     the same, and joins with a copy of itself;
 *   - the text read as postings, or as a page whose entries are joined,
 *     is read within its bytes or refused, and what a join makes of sound
 *     entries decodes;
 *   - the same conditions and metadata give the same answer twice.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/kb.h"
#include "knowledge/kwindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const char *tok, size_t n, void *ud)
{
    (void)ud;
    if (!n || n > SL_KW_TOKEN_MAX + 4)
        abort();
    if (!sl_utf8_valid(tok, n))
        abort();
    for (size_t i = 0; i < n; i++) {  /* ASCII in a token: lower-case letters and digits */
        unsigned char c = (unsigned char)tok[i];
        if (c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 3);
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = buf[size + 2] = 0;
    const char *conds = buf;
    const char *meta = conds + strlen(conds) + 1;
    if (meta > buf + size)
        meta = buf + size + 1;
    const char *text = meta + strlen(meta) + 1;
    if (text > buf + size)
        text = buf + size + 2;

    sl_value *c = json_loads(conds, JSON_DECODE_ANY, NULL);
    sl_value *m = json_loads(meta, JSON_DECODE_ANY, NULL);
    bool a = sl_kb_conditions_match(c, m), b = sl_kb_conditions_match(c, m);
    if (a != b)
        abort();
    json_decref(c);
    json_decref(m);

    sl_kw_tokens(text, strlen(text), check_token, NULL);

    /* a segment of the text's lines, one chunk each */
    sl_kw_doc *d = sl_kw_doc_new();
    char *copy = strdup(text), *save = NULL;
    long long pos = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        sl_kw_doc_add(d, pos++, line);
    const sl_store_kw *kw = sl_kw_doc_done(d);
    sl_kw_scorer *sc = sl_kw_scorer_new(kw->rows, kw->tokens);
    for (size_t i = 0; i < kw->n; i++) {
        if (i && strcmp(kw->terms[i - 1].term, kw->terms[i].term) >= 0)
            abort();   /* in byte order, each once */
        if (sl_kw_scorer_add(sc, kw->terms[i].df, 100, kw->terms[i].data, kw->terms[i].size))
            abort();
    }
    /* the segment as pages and back: the same entries */
    sl_buf page;
    sl_buf_init(&page, 0);
    for (size_t i = 0; i < kw->n; i++) {
        const sl_store_term *t = &kw->terms[i];
        sl_kw_entry w = {t->term, strlen(t->term), t->df, 7, t->last, t->data, t->size};
        sl_kw_page_put(&page, &w);
    }
    size_t at = 0, seen = 0;
    sl_kw_entry e;
    while (sl_kw_page_next(page.data, page.len, &at, &e) == 1) {
        const sl_store_term *t = &kw->terms[seen++];
        if (e.len != strlen(t->term) || memcmp(e.term, t->term, e.len) || e.df != t->df ||
            e.base != 7 || e.last != t->last || e.size != t->size ||
            (e.size && memcmp(e.data, t->data, e.size)))
            abort();
    }
    if (seen != kw->n || at != page.len)
        abort();
    /* two copies of the segment one after the other join in order */
    if (kw->n) {
        const sl_store_term *t = &kw->terms[0];
        sl_kw_entry two[2] = {{t->term, strlen(t->term), t->df, 0, t->last, t->data, t->size},
                              {t->term, strlen(t->term), t->df, 1000000, t->last, t->data,
                               t->size}};
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_kw_entry j;
        if (sl_kw_join(two, 2, &out, &j) || j.df != 2 * t->df || j.last != 1000000 + t->last ||
            sl_kw_scorer_live(sc, j.base, out.data, out.len) != j.df)
            abort();
        sl_buf_release(&out);
    }
    sl_buf_release(&page);
    /* hostile pages: entries read within their bytes, joined or refused */
    sl_kw_entry parts[16];
    size_t np = 0;
    at = 0;
    while (np < 16 && sl_kw_page_next(text, strlen(text), &at, &parts[np]) == 1)
        np++;
    if (np) {
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_kw_entry j;
        /* parts that decode, each with its true last position, join into
         * postings that decode (a part's bytes past its first posting are
         * copied, not read: damage there is found when searching) */
        bool sound = true;
        for (size_t i = 0; i < np && sound; i++) {
            size_t pat = 0;
            long long ppos = -1, ptf, pdl;
            int pr;
            while ((pr = sl_kw_posting_next(parts[i].data, parts[i].size, &pat, &ppos, &ptf,
                                            &pdl)) == 1) {
            }
            sound = pr == 0 && ppos == parts[i].last;
        }
        if (!sl_kw_join(parts, np, &out, &j) && sound &&
            sl_kw_scorer_live(sc, j.base, out.data, out.len) < 0)
            abort();
        sl_buf_release(&out);
    }
    /* hostile postings: refused or scored, never read past their end */
    sl_kw_scorer_add(sc, 3, 0, text, strlen(text));
    long long *ns;
    double *bm;
    size_t got = sl_kw_scorer_top(sc, 10, &ns, &bm);
    for (size_t i = 1; i < got; i++)
        if (bm[i - 1] > bm[i])
            abort();   /* best (lowest) first */
    free(ns);
    free(bm);
    sl_kw_scorer_free(sc);
    sl_kw_doc_free(d);
    free(copy);
    free(buf);
    return 0;
}
