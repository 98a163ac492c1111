/*
 * kwindex — the keyword side of a knowledge base: sluice's own inverted
 * index and BM25 (it replaced an FTS5 table per knowledge base, whose
 * indexing alone ran at 14 MB of text a second on one core).
 *
 * Tokens: runs of letters and digits of any script, lower-cased, Latin
 * diacritics removed (é -> e, ø -> o); everything else separates.  Runs of
 * CJK characters (no spaces between words) become overlapping pairs of
 * characters ("知识库" -> "知识", "识库"; a lone one stays itself).
 * Documents and queries go through the same function.
 *
 * Each document is a segment of its own: for every term, its postings (the
 * document's chunks holding it, by position in the document, with the
 * term's count there and the chunk's length in tokens), varint-coded, in
 * position order.  A document's segment is built while its text is split,
 * off the store's writer, and written and dropped with its chunks.
 *
 * Scores are BM25 as FTS5 computes them (k1 1.2, b 0.75, idf
 * ln((N - df + 0.5) / (df + 0.5)), at least 1e-6), negated: lower is
 * better, so FTS5's callers read them unchanged.
 */
#ifndef SL_KNOWLEDGE_KWINDEX_H
#define SL_KNOWLEDGE_KWINDEX_H

#include <stddef.h>

#include "core/buf.h"
#include "store/store.h"

/* Longest token kept, in bytes (longer runs are cut there). */
#define SL_KW_TOKEN_MAX 128

/* Calls fn with each token of text (len bytes; tok is not NUL-terminated
 * and lives until fn returns).  Returns the number of tokens. */
size_t sl_kw_tokens(const char *text, size_t len, void (*fn)(const char *tok, size_t n, void *ud),
                    void *ud);

/* The distinct tokens of text in order of appearance, at most max, each a
 * NUL-terminated string (*out and each freed by sl_kw_words_free). */
size_t sl_kw_words(const char *text, char ***out, size_t max);
void sl_kw_words_free(char **w, size_t n);

/* ---- a document's segment ---- */
typedef struct sl_kw_doc sl_kw_doc;

sl_kw_doc *sl_kw_doc_new(void);
/* Adds the chunk at pos (0-based, increasing) with its text. */
void sl_kw_doc_add(sl_kw_doc *d, long long pos, const char *text);
/* The segment as the store takes it (terms in byte order); valid until
 * sl_kw_doc_free. */
const sl_store_kw *sl_kw_doc_done(sl_kw_doc *d);
void sl_kw_doc_free(sl_kw_doc *d);

/* ---- postings, as the store keeps and merges them ----
 * A term's postings: (position delta, count, chunk length) varint triples,
 * positions increasing; a chunk's number is base + position. */

/* The next posting of data[*at..size): 1 read (*pos moved on from the
 * previous position, -1 at first), 0 at the end, -1 damaged. */
int sl_kw_posting_next(const void *data, size_t size, size_t *at, long long *pos, long long *tf,
                       long long *dl);
/* Appends the posting at pos after prev (-1 at first; pos > prev). */
void sl_kw_posting_put(sl_buf *out, long long prev, long long pos, long long tf, long long dl);

/* ---- a segment's pages, as the store keeps them ----
 * Entries in term order: varint term length, the term, varint chunk
 * count, varint base, varint last position, varint postings length, the
 * postings. */
typedef struct {
    const char *term;   /* not NUL-terminated */
    size_t len;
    long long df, base, last;   /* last: its last posting's position */
    const unsigned char *data;
    size_t size;
} sl_kw_entry;

/* The entry at *at of a page: 1, 0 at its end, -1 damaged. */
int sl_kw_page_next(const void *page, size_t size, size_t *at, sl_kw_entry *e);
void sl_kw_page_put(sl_buf *page, const sl_kw_entry *e);
/* One term's entries from segments merged (in their order) as one: its
 * postings in out, its base, chunk count and last position in *e (term,
 * data and size left as they are): joined where chunk numbers grow from
 * entry to entry (copied, not decoded), else all decoded and sorted.
 * -1: damaged (or one chunk twice). */
int sl_kw_join(const sl_kw_entry *parts, size_t n, sl_buf *out, sl_kw_entry *e);

/* ---- scoring ---- */
typedef struct sl_kw_scorer sl_kw_scorer;

/* rows and tokens: the knowledge base's indexed chunks and their tokens. */
sl_kw_scorer *sl_kw_scorer_new(long long rows, long long tokens);
/* Chunks that no longer count (documents gone since their postings were
 * merged): n pairs [first, last] of chunk numbers, sorted, not
 * overlapping; kept by the scorer until it is freed. */
void sl_kw_scorer_skip(sl_kw_scorer *s, const long long *ranges, size_t n);
/* The postings of data that count (not skipped); -1: not postings. */
long long sl_kw_scorer_live(const sl_kw_scorer *s, long long base, const void *data, size_t size);
/* Scores the postings of one term whose df (chunks holding it across the
 * knowledge base) is given; base is the row number of position 0.  Call it
 * for every row of every term.  -1: the data is not postings. */
int sl_kw_scorer_add(sl_kw_scorer *s, long long df, long long base, const void *data, size_t size);
/* The best limit rows, best first: numbers and BM25 (negative); malloc'd. */
size_t sl_kw_scorer_top(sl_kw_scorer *s, size_t limit, long long **ns, double **bm25);
void sl_kw_scorer_free(sl_kw_scorer *s);

#endif
