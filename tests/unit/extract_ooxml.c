/*
 * extract_ooxml — docx, xlsx and pptx text as Dify's extractor gives it,
 * on the corpus tests/documents/gen_office.py makes (with python-docx,
 * openpyxl and pandas computing the expected text by Dify's algorithm; the
 * pptx text, with no python-pptx on Debian, written by hand), and hostile
 * archives and XML (corrupt, truncated, encrypted, zip bombs, XXE, entity
 * bombs, deep nesting) that must fail with a clear error.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "extract/extract.h"
#include "extract/xml.h"
#include "extract/zip.h"
#include "tap.h"
#include "util.h"
#include "corpus.h"

/* Limits are checked where they bite: a small member limit stops a member
 * that is simply big, the node limit a part with many elements. */
static void limits(void)
{
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    sl_err err = {0};
    size_t nodes = 0;
    const char *xml = "<a><b/><b/><b/><b>t</b></a>";
    xmlDoc *d = sl_xml_parse("x.xml", xml, strlen(xml), &lim, 0, &nodes, &err);
    CHECK(d && nodes == 6, "a small XML part parses (%zu nodes counted)", nodes);
    CHECK(d && sl_xml_is(sl_xml_root(d), NULL, "a"), "its root is <a>");
    sl_xml_free(d);
    lim.max_xml_nodes = 5;
    nodes = 0;
    d = sl_xml_parse("x.xml", xml, strlen(xml), &lim, 0, &nodes, &err);
    CHECK(!d && err.code == SL_ELIMIT && strstr(err.msg, "more than 5 nodes (extract_xml_nodes"),
          "the node limit stops the parse: %s", err.msg);
    sl_err_clear(&err);
    sl_extract_limits_default(&lim);
    /* an internal entity is never expanded when a DTD is allowed */
    const char *ent = "<!DOCTYPE a [<!ENTITY e \"EXPANDED\">]><a>&e;</a>";
    nodes = 0;
    d = sl_xml_parse("e.xml", ent, strlen(ent), &lim, 0, &nodes, &err);
    sl_buf b;
    sl_buf_init(&b, 0);
    if (d)
        sl_xml_text(sl_xml_root(d), &b);
    CHECK(d && !strstr(b.data ? b.data : "", "EXPANDED"), "an entity stays unexpanded");
    sl_buf_release(&b);
    sl_xml_free(d);
    d = sl_xml_parse("e.xml", ent, strlen(ent), &lim, SL_XML_NO_DTD, &nodes, &err);
    CHECK(!d && err.code == SL_EPARSE && strstr(err.msg, "e.xml") && strstr(err.msg, "DTD"),
          "SL_XML_NO_DTD refuses a DTD: %s", err.msg);
    sl_err_clear(&err);
    d = sl_xml_parse("bad.xml", "<a><b></a>", 10, &lim, 0, &nodes, &err);
    CHECK(!d && err.code == SL_EPARSE && strstr(err.msg, "bad.xml: bad XML at line 1"),
          "bad XML names the part and the line: %s", err.msg);
    sl_err_clear(&err);

    /* a stored zip of two members, made by hand */
    static const unsigned char zip2[] = {
#include "../documents/office/two_members.inc"
    };
    sl_zip *z = sl_zip_open(zip2, sizeof zip2, &lim, &err);
    CHECK(z && sl_zip_count(z) == 2 && sl_zip_has(z, "a.txt") && sl_zip_has(z, "dir/b.txt"),
          "a zip's members are listed");
    sl_buf_init(&b, 0);
    CHECK(z && !sl_zip_read(z, "dir/b.txt", &b, &err) && b.len == 6 &&
              !memcmp(b.data, "world\n", 6),
          "a member reads back");
    sl_buf_release(&b);
    CHECK(z && sl_zip_read(z, "c.txt", &b, &err) == -1 && err.code == SL_ENOTFOUND,
          "a missing member is SL_ENOTFOUND: %s", err.msg);
    sl_err_clear(&err);
    sl_zip_close(z);
    lim.max_member = 3;
    z = sl_zip_open(zip2, sizeof zip2, &lim, &err);
    sl_buf_init(&b, 0);
    CHECK(z && sl_zip_read(z, "a.txt", &b, &err) == -1 && err.code == SL_ELIMIT && !b.len &&
              strstr(err.msg, "max_member"),
          "max_member stops a member: %s", err.msg);
    sl_err_clear(&err);
    sl_zip_close(z);
    lim.max_member = 100;
    lim.max_unpacked = 8;
    z = sl_zip_open(zip2, sizeof zip2, &lim, &err);
    CHECK(z && !sl_zip_read(z, "a.txt", &b, &err) &&
              sl_zip_read(z, "dir/b.txt", &b, &err) == -1 && err.code == SL_ELIMIT &&
              strstr(err.msg, "max_unpacked") && b.len == 6,
          "max_unpacked counts every member read: %s", err.msg);
    sl_err_clear(&err);
    sl_buf_release(&b);
    sl_zip_close(z);
}

int main(void)
{
    limits();
    size_t n = corpus_run("gen_office.py", "python3-docx, python3-openpyxl or python3-pandas is not installed");
    CHECK(n >= 12, "the corpus has %zu documents", n);
    return tap_done();
}
