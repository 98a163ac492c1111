/*
 * fuzz_search — libFuzzer target for the readers of the search built-ins
 * (tools/builtin.h), which read what a vendor's server sends: DuckDuckGo's
 * results page (HTML), arXiv's Atom feed, MediaWiki's search and pages
 * answers (JSON), and the bytes searxng shows as Python's repr.
 *
 * The first byte picks the reader; for wikipedia the rest is split at the
 * first NUL into the search answer and the pages answer.  Checks besides
 * memory errors:
 *   - DuckDuckGo: every result is {title, href, body} of strings, no link
 *     twice, at most max of them; the next form, if any, is non-empty;
 *   - arXiv and wikipedia: text that is valid UTF-8 and at most 4000
 *     characters, or a failure with a message, never both;
 *   - repr: starts b' or b", is printable ASCII, ends with its quote.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/value.h"
#include "tools/builtin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ddg(uint8_t knob, const char *p, size_t n)
{
    sl_value *results = json_array(), *seen = json_object();
    char *next = NULL;
    size_t max = knob & 7;
    int rc = sl_builtin_ddg_page(p, n, results, max, seen, &next);
    if (rc < -1 || rc > 1 || (rc && json_array_size(results)) ||
        (max && json_array_size(results) > max) || (next && !*next))
        abort();
    size_t i;
    sl_value *r;
    json_array_foreach(results, i, r) {
        if (json_object_size(r) != 3 || !json_is_string(json_object_get(r, "title")) ||
            !json_is_string(json_object_get(r, "href")) ||
            !json_is_string(json_object_get(r, "body")))
            abort();
    }
    if (json_object_size(seen) < json_array_size(results))
        abort();
    free(next);
    json_decref(results);
    json_decref(seen);
}

static void check_text(int rc, sl_buf *out, sl_err *err)
{
    if ((rc == 0) == (err->msg != NULL))
        abort();
    if (!rc && (!out->data || !sl_utf8_valid(out->data, out->len) ||
                sl_utf8_chars(out->data, out->len) > 4000))
        abort();
    sl_buf_release(out);
    sl_err_clear(err);
}

static void arxiv(const char *p, size_t n)
{
    sl_buf out;
    sl_err err = {0};
    int rc = sl_builtin_arxiv_text(p, n, &out, &err);
    check_text(rc, &out, &err);
}

static void wiki(const char *p, size_t n)
{
    const char *nul = memchr(p, '\0', n);
    size_t an = nul ? (size_t)(nul - p) : n;
    sl_value *found = json_loadb(p, an, 0, NULL);
    sl_value *pages = nul ? json_loadb(nul + 1, n - an - 1, 0, NULL) : NULL;
    sl_err err = {0};
    sl_value *titles = found ? sl_builtin_wiki_titles(found, 3, &err) : NULL;
    if (found && !titles == !err.msg)
        abort();
    sl_err_clear(&err);
    if (titles && json_array_size(titles) > 3)
        abort();
    if (titles && pages) {
        sl_buf out;
        int rc = sl_builtin_wiki_text(titles, pages, &out, &err);
        check_text(rc, &out, &err);
    }
    json_decref(found);
    json_decref(pages);
    json_decref(titles);
}

static void repr(const char *p, size_t n)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_builtin_py_bytes_repr(p, n, &out);
    if (out.len < 3 || out.data[0] != 'b' || (out.data[1] != '\'' && out.data[1] != '"') ||
        out.data[out.len - 1] != out.data[1])
        abort();
    for (size_t i = 0; i < out.len; i++)
        if ((unsigned char)out.data[i] < 0x20 || (unsigned char)out.data[i] > 0x7e)
            abort();
    sl_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 17))
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] >> 6) {
    case 0: ddg(data[0], p, n); break;
    case 1: arxiv(p, n); break;
    case 2: wiki(p, n); break;
    default: repr(p, n); break;
    }
    return 0;
}
