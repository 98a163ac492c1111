/*
 * fuzz_extract_odf — libFuzzer target for the ODT and EPUB readers
 * (extract/odf through sl_extract_text): content.xml's formatted text,
 * container.xml, the OPF's manifest and spine, and the HTML walker on
 * libxml2's HTML parser.
 *
 * The first byte picks the reader (bit 0: ODT or EPUB) and how the rest
 * is used (bit 1).  Clear: the bytes are the file.  Set: they are a
 * recipe, NUL-separated name/content pairs written into a stored zip
 * first, so mutations reach the XML, the HTML and the path handling
 * instead of dying on a CRC.  Limits are small (1 MB a member, 4 MB in
 * all, 64 KB of text, depth 64, 100000 nodes) to keep runs fast and to
 * reach the limit paths.
 *
 * Checks besides memory errors: a success appends no more than the output
 * limit, and a failure appends nothing and says why.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const sl_extract_limits lim = {.max_output = 64 << 10,
                                      .max_member = 1 << 20,
                                      .max_unpacked = 4 << 20,
                                      .max_xml_depth = 64,
                                      .max_xml_nodes = 100000};

/* Writes the recipe as a stored zip into out (malloc'd); returns its
 * length or 0. */
static size_t build(const uint8_t *p, size_t n, char **out)
{
    size_t cap = n * 2 + 65536, used = 0;
    char *buf = malloc(cap);
    struct archive *a = archive_write_new();
    archive_write_set_format_zip(a);
    archive_write_set_options(a, "zip:compression=store");
    if (archive_write_open_memory(a, buf, cap, &used) != ARCHIVE_OK)
        goto fail;
    for (size_t i = 0; i < n;) {
        const uint8_t *name = p + i, *z = memchr(name, 0, n - i);
        if (!z)
            break;
        i = (size_t)(z - p) + 1;
        const uint8_t *body = p + i, *e = memchr(body, 0, n - i);
        size_t blen = e ? (size_t)(e - body) : n - i;
        i += blen + 1;
        char nm[512];
        size_t k = (size_t)(z - name) < sizeof nm - 1 ? (size_t)(z - name) : sizeof nm - 1;
        memcpy(nm, name, k);
        nm[k] = 0;
        if (!k)
            continue;
        struct archive_entry *ae = archive_entry_new();
        archive_entry_set_pathname(ae, nm);
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_perm(ae, 0644);
        archive_entry_set_size(ae, (la_int64_t)blen);
        archive_write_header(a, ae);
        archive_write_data(a, body, blen);
        archive_entry_free(ae);
    }
    if (archive_write_close(a) != ARCHIVE_OK)
        goto fail;
    archive_write_free(a);
    *out = buf;
    return used;
fail:
    archive_write_free(a);
    free(buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    sl_doc_kind kind = data[0] & 1 ? SL_DOC_EPUB : SL_DOC_ODT;
    const void *doc = data + 1;
    size_t len = size - 1;
    char *zip = NULL;
    if (data[0] & 2) {
        len = build(data + 1, size - 1, &zip);
        if (!len)
            return 0;
        doc = zip;
    }
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_buf_adds(&out, "x");
    sl_err err = {0};
    int rc = sl_extract_text(kind, doc, len, &lim, &out, &err);
    if (rc == 0 && out.len - 1 > lim.max_output)
        abort();
    if (rc != 0 && (out.len != 1 || !err.msg || !err.msg[0]))
        abort();
    sl_err_clear(&err);
    sl_buf_release(&out);
    free(zip);
    return 0;
}
