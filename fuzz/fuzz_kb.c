/*
 * fuzz_kb — libFuzzer target for what knowledge/kb.c makes of hostile
 * text and JSON: Dify's metadata conditions against a document's values
 * (sl_kb_conditions_match), the full-text index's text for a chunk
 * (sl_kb_index_text) and the FTS5 query for a user's words (sl_kb_match).
 *
 * The input is a NUL-separated triple: conditions JSON, metadata JSON,
 * text (any bytes).  Besides memory errors the target checks:
 *   - the query is quoted words joined by " OR ": an even number of '"',
 *     none inside a word, so no user text is FTS5 syntax;
 *   - the index text of ASCII text is the text itself;
 *   - the same conditions and metadata give the same answer twice.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/kb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

    char *q = sl_kb_match(text);
    if (q) {
        size_t quotes = 0;
        for (const char *p = q; *p; p++)
            quotes += *p == '"';
        if (quotes % 2 || quotes == 0)
            abort();
        /* between the quotes of a word there is no quote: "w" OR "w" … */
        for (const char *p = q; *p;) {
            if (*p != '"')
                abort();
            const char *end = strchr(p + 1, '"');
            if (!end || end == p + 1)
                abort();
            p = end + 1;
            if (*p && strncmp(p, " OR ", 4))
                abort();
            if (*p)
                p += 4;
        }
    }
    free(q);

    char *t = sl_kb_index_text(text);
    bool ascii = true;
    for (const char *p = text; *p; p++)
        ascii = ascii && (unsigned char)*p < 0x80;
    if (!t || (ascii && strcmp(t, text)))
        abort();
    free(t);
    free(buf);
    return 0;
}
