/*
 * fuzz_knowledge_split — libFuzzer target for Dify's cleaning and chunking
 * (knowledge/split.c).
 *
 * The first byte picks the mode and the clean rules, the next two the
 * chunk lengths and overlaps, the rest is the text (cleaned first when it
 * is valid UTF-8, as callers do).  Besides memory errors the target checks:
 *   - a call either succeeds or sets an error with a message;
 *   - cleaning as a byte stream gives what the code-point path gives;
 *   - every chunk is valid UTF-8, non-empty, without surrounding white
 *     space (but a full-doc parent, the text as it is), its `chars` its code points, and no longer than the chunk
 *     length (one more when the overlap equals it: the character level
 *     then carries a whole chunk);
 *   - every child is no longer than the child length, and parents and
 *     children agree with the chunk limit.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The characters of valid UTF-8 (anything else aborts). */
static size_t utf8_chars(const unsigned char *p, size_t n)
{
    if (!sl_utf8_valid((const char *)p, n))
        abort();
    return sl_utf8_chars((const char *)p, n);
}

static void check_chunk(const sl_split_chunk *c, size_t max, bool trimmed)
{
    if (!c->len || strlen(c->text) > c->len || utf8_chars((const unsigned char *)c->text, c->len) != c->chars)
        abort();
    if (c->chars > max)
        abort();
    unsigned char a = (unsigned char)c->text[0], z = (unsigned char)c->text[c->len - 1];
    if (trimmed && (a == ' ' || a == '\n' || a == '\t' || z == ' ' || z == '\n' || z == '\t'))
        abort();
}

static size_t bound(long max, long overlap)
{
    return (size_t)max + (overlap == max ? 1 : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *seps[] = {"\\n", "\\n\\n", "", "。", ". ", " ", "\\t", "x"};
    if (size < 3)
        return 0;
    unsigned mode = data[0], a = data[1], b = data[2];
    const char *text = (const char *)data + 3;
    size_t len = size - 3;
    sl_err err = {0};
    sl_buf clean;
    sl_buf_init(&clean, 1 << 20);
    sl_clean_rules rules = {.remove_extra_spaces = mode & 0x10, .remove_urls_emails = mode & 0x20};
    int crc = sl_clean(text, len, &rules, &clean, &err);
    if (crc && (!err.msg || !err.msg[0]))
        abort();
    sl_err_clear(&err);
    /* the byte stream and the code-point path agree, errors included */
    sl_clean_rules ref = rules;
    ref.by_code_points = true;
    sl_buf want;
    sl_buf_init(&want, 1 << 20);
    int rrc = sl_clean(text, len, &ref, &want, &err);
    sl_err_clear(&err);
    if (!crc != !rrc || (!crc && (want.len != clean.len ||
                                  (want.len && memcmp(want.data, clean.data, want.len)))))
        abort();
    sl_buf_release(&want);
    if (!crc) {
        text = clean.data ? clean.data : "";
        len = clean.len;
    }
    long max = 1 + a % 100, ov = (long)(b % (unsigned)(max + 1)), cmax = 1 + b % 60;
    size_t limit = mode & 0x40 ? 64 : 0;
    if ((mode & 3) != 3) {
        sl_split_opts o = {.mode = (mode & 3) == 0 ? SL_SPLIT_AUTOMATIC : SL_SPLIT_CUSTOM,
                           .separator = seps[((mode >> 2) & 3) | ((mode & 0x80) ? 4 : 0)],
                           .max_length = max, .overlap = ov, .max_chunks = limit};
        if (o.mode == SL_SPLIT_AUTOMATIC)
            max = SL_SPLIT_AUTO_LENGTH, ov = SL_SPLIT_AUTO_OVERLAP;
        sl_split_chunks c = {0};
        int rc = sl_split(text, len, &o, &c, &err);
        if (rc && (!err.msg || !err.msg[0]))
            abort();
        if (!rc && limit && c.n > limit)
            abort();
        for (size_t i = 0; !rc && i < c.n; i++)
            check_chunk(&c.v[i], bound(max, ov), true);
        sl_split_chunks_release(&c);
    } else {
        sl_split_pc_opts o = {
            .parent_mode = mode & 4 ? SL_SPLIT_PARENT_FULL_DOC : SL_SPLIT_PARENT_PARAGRAPH,
            .parent = {.separator = seps[(mode >> 3) & 7], .max_length = max, .overlap = ov},
            .child = {.separator = seps[a & 7], .max_length = cmax, .overlap = (long)(a % (cmax + 1))},
            .max_chunks = limit};
        sl_split_parents p = {0};
        int rc = sl_split_parent_child(text, len, &o, &p, &err);
        if (rc && (!err.msg || !err.msg[0]))
            abort();
        size_t total = 0;
        for (size_t i = 0; !rc && i < p.n; i++) {
            bool full = o.parent_mode == SL_SPLIT_PARENT_FULL_DOC;
            check_chunk(&p.v[i].parent, full ? (size_t)-1 : bound(max, ov), !full);
            total += 1 + p.v[i].children.n;
            for (size_t k = 0; k < p.v[i].children.n; k++) {
                check_chunk(&p.v[i].children.v[k], bound(cmax, o.child.overlap), true);
                if (p.v[i].children.v[k].chars > p.v[i].parent.chars)
                    abort();
            }
        }
        if (!rc && limit && total > limit)
            abort();
        sl_split_parents_release(&p);
    }
    sl_err_clear(&err);
    sl_buf_release(&clean);
    return 0;
}
