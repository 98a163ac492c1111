/*
 * extract_odf — ODT and EPUB text as Dify's extractor gives it, on the
 * corpus tests/documents/gen_odf.py writes with hand-written expectations
 * (spine order, unknown idrefs, relative and percent-encoded hrefs,
 * nested lists, notes, tables, text:s and text:tab), and hostile packages
 * (entity bombs, XXE, deep nesting, zip bombs, a spine of 100000 items,
 * truncated and non-zip files) that must fail with a clear error or give
 * text with no entity expanded.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "extract/extract.h"
#include "tap.h"
#include "util.h"
#include "corpus.h"

/* Through sl_extract_text, Dify's prefix comes first. */
static void prefixes(void)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    CHECK(sl_extract_text(SL_DOC_ODT, "nope", 4, NULL, &out, &err) == -1 && err.msg &&
              !strncmp(err.msg, "Failed to extract text from ODT: ", 33),
          "an ODT failure has Dify's prefix: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_extract_text(SL_DOC_EPUB, "", 0, NULL, &out, &err) == -1 && err.msg &&
              !strncmp(err.msg, "Failed to extract text from EPUB: ", 34),
          "an empty EPUB fails with Dify's prefix: %s", err.msg);
    sl_err_clear(&err);
    CHECK(!out.len, "nothing was appended");
    sl_buf_release(&out);
}

int main(void)
{
    prefixes();
    size_t n = corpus_run("gen_odf.py", "a Python module gen_odf.py needs is missing");
    CHECK(n >= 29, "the corpus has %zu documents", n);
    return tap_done();
}
