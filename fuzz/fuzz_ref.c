/*
 * fuzz_ref — libFuzzer target for {{#node.var#}} references (tmpl/ref):
 * sl_ref_scan, sl_ref_render and sl_ref_pieces over arbitrary text.
 *
 * The resolver answers from a fixed table chosen by a hash of the parts, so
 * every value shape (text, numbers, null, arrays, objects, files, missing)
 * goes through sl_value_text.  Besides memory errors the target checks the
 * parser's contract from ref.h:
 *   - every reference has a node id of 1-50 [A-Za-z0-9_] and 1-10 parts of
 *     [A-Za-z_][A-Za-z0-9_]{0,29};
 *   - render and scan agree on which references a text holds;
 *   - text without references renders to itself;
 *   - render fails (-1) only when the output buffer hit its cap;
 *   - the pieces give back the text: plain runs (never empty) and each
 *     reference written as {{#parts#}}, in order, are the input, with as
 *     many references as scan saw.
 * The first input byte picks the output cap, so the cap path is fuzzed too.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "tmpl/ref.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NVALUES 12
static sl_value *values[NVALUES]; /* NULL entries stand for missing variables */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_object_seed(1);
    values[0] = json_string("plain text");
    values[1] = json_string("{{#start.q#}} looks like a ref \xe4\xbd\xa0\xe5\xa5\xbd");
    values[2] = json_integer(-9007199254740993LL);
    values[3] = json_real(0.1);
    values[4] = json_real(1e16);
    values[5] = json_null();
    values[6] = json_array();
    values[7] = json_pack("[s,i,f,b,n,{s:[]}]", "a\"b", 1, 2.5, 1, "k");
    values[8] = json_pack("{s:s,s:{s:[i,i]},s:s}", "x", "\xc3\xa9\n\t", "nested", "v", 1, 2,
                          "u", "\xe2\x80\xa8");
    values[9] = json_pack("{s:s,s:s,s:s,s:s}", "dify_model_identity", "__dify__file__",
                          "type", "document", "filename", "a.pdf", "url", "https://x/a.pdf");
    values[10] = json_true();
    values[11] = NULL;
    return 0;
}

static bool ref_part_ok(const char *p, size_t maxlen, bool first)
{
    size_t n = strlen(p);
    if (n == 0 || n > maxlen)
        return false;
    if (!first && !(isalpha((unsigned char)p[0]) || p[0] == '_'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)p[i]) || p[i] == '_'))
            return false;
    return true;
}

static void check_ref(const char *const *parts, int nparts)
{
    if (nparts < 2 || nparts > SL_REF_MAX_PARTS) {
        fprintf(stderr, "reference with %d parts\n", nparts);
        abort();
    }
    for (int i = 0; i < nparts; i++)
        if (!ref_part_ok(parts[i], i == 0 ? 50 : 30, i == 0)) {
            fprintf(stderr, "bad reference part %d: '%s'\n", i, parts[i]);
            abort();
        }
}

typedef struct {
    int count;
} counter;

static int visit(void *ud, const char *const *parts, int nparts)
{
    check_ref(parts, nparts);
    ((counter *)ud)->count++;
    return 0;
}

static sl_value *resolve(void *ud, const char *const *parts, int nparts)
{
    check_ref(parts, nparts);
    ((counter *)ud)->count++;
    unsigned h = 5381;
    for (int i = 0; i < nparts; i++)
        for (const char *p = parts[i]; *p; p++)
            h = h * 33 + (unsigned char)*p;
    sl_value *v = values[h % NVALUES];
    return v ? json_incref(v) : NULL;
}

typedef struct {
    sl_buf text;
    int refs;
} rebuilt;

static int piece(void *ud, const char *lit, size_t len, const char *const *parts, int nparts)
{
    rebuilt *b = ud;
    if (lit) {
        if (!len || parts || nparts) {
            fprintf(stderr, "a plain piece of %zu bytes with %d parts\n", len, nparts);
            abort();
        }
        sl_buf_add(&b->text, lit, len);
        return 0;
    }
    check_ref(parts, nparts);
    b->refs++;
    sl_buf_adds(&b->text, "{{#");
    for (int i = 0; i < nparts; i++) {
        if (i)
            sl_buf_addc(&b->text, '.');
        sl_buf_adds(&b->text, parts[i]);
    }
    sl_buf_adds(&b->text, "#}}");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const size_t caps[] = {1, 7, 64, 300, 4096};
    size_t cap = data[0] < 40 ? caps[data[0] % 5] : (size_t)1 << 20;
    char *text = sl_xstrndup((const char *)data + 1, size - 1);

    counter scanned = {0}, rendered = {0};
    sl_ref_scan(text, visit, &scanned);
    sl_buf out;
    sl_buf_init(&out, cap);
    int rc = sl_ref_render(text, resolve, &rendered, &out);
    if (rc < 0 && !out.toobig) {
        fprintf(stderr, "render failed without hitting the cap\n");
        abort();
    }
    if (rc == 0 && scanned.count != rendered.count) {
        fprintf(stderr, "scan saw %d references, render %d\n", scanned.count, rendered.count);
        abort();
    }
    if (rc == 0 && scanned.count == 0 && strcmp(out.data ? out.data : "", text) != 0) {
        fprintf(stderr, "text without references changed when rendered\n");
        abort();
    }
    sl_buf_release(&out);
    rebuilt b = {.refs = 0};
    sl_buf_init(&b.text, 0);
    sl_ref_pieces(text, piece, &b);
    if (strcmp(b.text.data ? b.text.data : "", text) != 0 || b.refs != scanned.count) {
        fprintf(stderr, "the pieces (%d references) do not give back the text (%d)\n", b.refs,
                scanned.count);
        abort();
    }
    sl_buf_release(&b.text);
    free(text);
    return 0;
}
