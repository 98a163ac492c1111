/*
 * extract_mail — e-mail text as Dify's partition_email gives it: the HTML
 * body preferred, blocks and paragraphs as elements joined by "\n",
 * text attachments after the body; malformed messages fail with a
 * message that says what is wrong.  Expectations are written from the
 * spec (research notes §3.12, §3.13), not produced by sluice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"
#include "tap.h"
#include "util.h"

static char errmsg[1024];
static sl_errcode errcode;

/* The text of a message, or NULL with errmsg/errcode. */
static char *text_of(sl_doc_kind kind, const char *data, size_t len,
                     const sl_extract_limits *lim)
{
    sl_err err = {0};
    sl_buf out;
    sl_buf_init(&out, 0);
    errmsg[0] = 0;
    errcode = SL_OK;
    if (sl_extract_text(kind, data, len, lim, &out, &err)) {
        snprintf(errmsg, sizeof errmsg, "%s", err.msg);
        errcode = err.code;
        sl_err_clear(&err);
        sl_buf_release(&out);
        return NULL;
    }
    if (!out.data)
        return sl_xstrdup("");
    return sl_buf_detach(&out);
}

static char *eml(const char *s)
{
    return text_of(SL_DOC_EML, s, strlen(s), NULL);
}

static void expect(const char *what, const char *msg, const char *want)
{
    char *got = eml(msg);
    CHECK(got && !strcmp(got, want), "%s: %s", what, got ? esc(got) : errmsg);
    free(got);
}

static void expect_err(const char *what, const char *msg, size_t len, const char *want_sub,
                       sl_errcode code)
{
    char *got = text_of(SL_DOC_EML, msg, len, NULL);
    CHECK(!got && errcode == code && strstr(errmsg, want_sub), "%s: %s", what,
          got ? esc(got) : esc(errmsg));
    free(got);
}

static void expect_file(const char *path, sl_doc_kind kind, const char *want)
{
    size_t n;
    char *data = slurp(path, &n);
    if (!data) {
        CHECK(0, "%s is there (run tests/documents/gen_mail.py)", path);
        return;
    }
    char *got = text_of(kind, data, n, NULL);
    CHECK(got && !strcmp(got, want), "%s: %s", path, got ? esc(got) : esc(errmsg));
    free(got);
    free(data);
}

static void test_eml(void)
{
    expect("a plain body, a line per element",
           "From: a@b\r\nSubject: hi\r\n\r\nHello there\r\n  second line  \r\n", "Hello there\nsecond line");
    expect("headers are not text; no Content-Type is text/plain",
           "Subject: x\n\nbody", "body");
    expect("folded headers are unfolded (boundary on a continuation line)",
           "Content-Type: multipart/mixed;\n\tboundary=\"XX\"\n\npreamble\n--XX\n\none\n--XX--\nepilogue\n",
           "one");
    expect("multipart/alternative prefers the HTML part",
           "Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\n"
           "plain words\n--b\nContent-Type: text/html\n\n<p>html <i>words</i></p><p>two</p>\n--b--\n",
           "html words\ntwo");
    expect("an HTML part after a plain one in multipart/mixed still wins",
           "Content-Type: multipart/mixed; boundary=b\n\n--b\n\nplain\n--b\nContent-Type: TEXT/HTML\n\n"
           "<div>x</div>\n--b--\n",
           "x");
    expect("quoted-printable with soft breaks and a utf-8 charset",
           "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
           "caf=C3=A9 au lait, a long=\n line\n",
           "caf\xc3\xa9 au lait, a long line");
    expect("base64 with line breaks",
           "Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\nSGVsbG8g\nd29ybGQ=\n",
           "Hello world");
    expect("ISO-8859-1 and windows-1252 decoded",
           "Content-Type: text/plain; charset=\"windows-1252\"\n\n\x93hi\x94 \xe9t\xe9\n",
           "\xe2\x80\x9chi\xe2\x80\x9d \xc3\xa9t\xc3\xa9");
    expect("UTF-16 with its BOM",
           "Content-Type: text/plain; charset=utf-16\nContent-Transfer-Encoding: base64\n\n//5oAGkA\n",
           "hi");
    expect("an unknown charset is read as UTF-8 without its invalid bytes",
           "Content-Type: text/plain; charset=koi8-r\n\nab\xff" "c\n", "abc");
    expect("blank-line paragraphs join their long lines, keep short lines apart",
           "Subject: p\n\nThis paragraph has many words on\nmore than one line here.\n\n"
           "tiny\nlines\n\n- a bullet point\n",
           "This paragraph has many words on more than one line here.\ntiny\nlines\na bullet point");
    expect("HTML: script and style dropped, entities decoded, whitespace collapsed",
           "Content-Type: text/html\n\n<html><head><style>p{}</style></head><body>"
           "<script>var x=1;</script><h2>A&nbsp;&amp;  B</h2>text<br>after&#33;"
           "<table><tr><td>c1</td><td>c2</td></tr></table></body></html>",
           "A & B\ntext\nafter!\nc1\nc2");
    expect("nested multiparts and a text/plain attachment after the body",
           "Content-Type: multipart/mixed; boundary=o\n\n--o\nContent-Type: multipart/alternative; "
           "boundary=i\n\n--i\nContent-Type: text/plain\n\nbody\n--i--\n\n--o\nContent-Type: "
           "image/png\nContent-Disposition: attachment; filename=a.png\n\nxx\n--o\nContent-Type: "
           "text/plain\nContent-Disposition: attachment; filename=\"a.txt\"\n\nattached\n--o--\n",
           "body\nattached");
    expect("an octet-stream attachment with an encoded-word .txt name is read",
           "Content-Type: multipart/mixed; boundary=o\n\n--o\n\nbody\n--o\nContent-Type: "
           "application/octet-stream\nContent-Disposition: attachment; "
           "filename=\"=?UTF-8?B?bm90ZXM=?= =?UTF-8?Q?=2Etxt?=\"\n\nfrom the file\n--o--\n",
           "body\nfrom the file");
    expect("an octet-stream attachment with another name is skipped",
           "Content-Type: multipart/mixed; boundary=o\n\n--o\n\nbody\n--o\nContent-Type: "
           "application/octet-stream\nContent-Disposition: attachment; filename=x.bin\n\nbin\n--o--\n",
           "body");
    expect("a message with headers only has no text", "Subject: nothing\n", "");
    sl_buf many;
    sl_buf_init(&many, 0);
    sl_buf_adds(&many, "Content-Type: multipart/mixed; boundary=m\n\n");
    for (int i = 0; i < 40; i++)
        sl_buf_addf(&many, "--m\nContent-Disposition: attachment; filename=f%d.txt\n\np%d\n", i, i);
    sl_buf_adds(&many, "--m--\n");
    char *got40 = eml(many.data);
    CHECK(got40 && !strncmp(got40, "p0\np1\np2\n", 9) && strstr(got40, "\np39") &&
              strlen(got40) == 10 * 2 + 30 * 3 + 39,
          "40 parts, each a text attachment, in order: %s", got40 ? esc(got40) : errmsg);
    free(got40);
    sl_buf_release(&many);

    expect_err("not a message", "just some words\nand more", 24, "not a MIME message",
               SL_EPARSE);
    expect_err("empty input", "", 0, "not a MIME message", SL_EPARSE);
    expect_err("multipart without a boundary",
               "Content-Type: multipart/mixed\n\n--x\n\nhi\n--x--\n", 45,
               "has no boundary parameter", SL_EPARSE);
    const char *unclosed = "Content-Type: multipart/mixed; boundary=x\n\n--x\n\nhi\n--x\n\ncut";
    expect_err("a boundary never closed (truncated)", unclosed, strlen(unclosed),
               "closing boundary \"--x--\" never comes", SL_EPARSE);
    const char *never = "Content-Type: multipart/mixed; boundary=x\n\nno parts at all\n";
    expect_err("a boundary never there", never, strlen(never), "boundary \"x\" never appears",
               SL_EPARSE);
    const char *badb64 = "Content-Transfer-Encoding: base64\n\nSGVs*bG8=\n";
    expect_err("bad base64", badb64, strlen(badb64), "not valid base64: a byte outside", SL_EPARSE);
    char *e = eml("Content-Transfer-Encoding: base64\n\nSGVs*bG8=\n");
    CHECK(!e && !strncmp(errmsg, "Failed to extract text from EML: ", 33),
          "Dify's prefix comes first: %s", esc(errmsg));
    free(e);

    /* bounds */
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_xml_depth = 3;
    const char *deep = "Content-Type: multipart/mixed; boundary=a\n\n--a\nContent-Type: "
                       "multipart/mixed; boundary=b\n\n--b\nContent-Type: multipart/mixed; "
                       "boundary=c\n\n--c\nContent-Type: multipart/mixed; boundary=d\n\n--d\n\nx\n"
                       "--d--\n--c--\n--b--\n--a--\n";
    char *got = text_of(SL_DOC_EML, deep, strlen(deep), &lim);
    CHECK(!got && errcode == SL_ELIMIT && strstr(errmsg, "deeper than 3"),
          "nesting is bounded: %s", esc(errmsg));
    free(got);
    lim.max_xml_depth = 256;
    got = text_of(SL_DOC_EML, deep, strlen(deep), &lim);
    CHECK(got && !strcmp(got, "x"), "the same nesting under the default depth: %s",
          got ? esc(got) : errmsg);
    free(got);
    lim.max_xml_nodes = 3;
    got = text_of(SL_DOC_EML, deep, strlen(deep), &lim);
    CHECK(!got && errcode == SL_ELIMIT && strstr(errmsg, "more than 3 MIME parts"),
          "parts are counted: %s", esc(errmsg));
    free(got);
    sl_extract_limits_default(&lim);
    lim.max_member = 4;
    got = text_of(SL_DOC_EML, "Subject: s\n\nhello\n", 18, &lim);
    CHECK(!got && errcode == SL_ELIMIT && strstr(errmsg, "more than 4 bytes"),
          "a part's decoded bytes are bounded: %s", esc(errmsg));
    free(got);
    sl_extract_limits_default(&lim);
    lim.max_output = 8;
    got = text_of(SL_DOC_EML, "Subject: s\n\nhello\nworld\nagain\n", 30, &lim);
    CHECK(!got && errcode == SL_ELIMIT, "the text is bounded: %s", esc(errmsg));
    free(got);

    expect_file("tests/documents/mail/alternative.eml", SL_DOC_EML,
                "Caf\xc3\xa9 menu\nSoup & bread\none\ntwo");
    expect_file("tests/documents/mail/nested.eml", SL_DOC_EML,
                "Nested HTML body\nsecond block\nAttached line one\nAttached line two\n"
                "Na\xc3\xafve text file");
    expect_file("tests/documents/mail/plain_cp1252.eml", SL_DOC_EML,
                "First paragraph line one and its second line is here.\nbullet item\nShort\n"
                "lines\n\xe2\x80\x9cQuoted\xe2\x80\x9d end");
}

static uint32_t rd32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void wr32(char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (char)(v >> (8 * i));
}

/* A broken copy of a good .msg gives err containing want. */
static void expect_msg_err(const char *what, const char *data, size_t n, const char *want,
                           sl_errcode code)
{
    char *got = text_of(SL_DOC_MSG, data, n, NULL);
    CHECK(!got && errcode == code && strstr(errmsg, want) &&
              !strncmp(errmsg, "Failed to extract text from MSG: ", 33),
          "%s: %s", what, got ? esc(got) : esc(errmsg));
    free(got);
}

static void test_msg(void)
{
    sl_buf want;
    sl_buf_init(&want, 0);
    sl_buf_adds(&want, "\xe2\x80\x9cHello\xe2\x80\x9d from Outlook");
    for (int i = 0; i < 400; i++)
        sl_buf_addf(&want, "\nrow %d", i);
    sl_buf_adds(&want, "\nattached text\nsecond line\nunnamed html");
    expect_file("tests/documents/mail/html.msg", SL_DOC_MSG, want.data);
    sl_buf_release(&want);
    expect_file("tests/documents/mail/plain.msg", SL_DOC_MSG,
                "Dear Bob,\nThe plain body of this message has words.\nRegards,\nAnn");
    expect_file("tests/documents/mail/string8.msg", SL_DOC_MSG, "caf\xc3\xa9 8-bit body");

    char *got = text_of(SL_DOC_MSG, "From: a@b\n\nhi\n", 14, NULL);
    CHECK(!got && strstr(errmsg, "not an Outlook message"), "an .eml is not a .msg: %s",
          esc(errmsg));
    free(got);

    size_t n;
    char *good = slurp("tests/documents/mail/plain.msg", &n);
    if (!good || n < 1024) {
        CHECK(0, "tests/documents/mail/plain.msg is there");
        free(good);
        return;
    }
    char *bad = sl_xmalloc(n);
    uint32_t fat = rd32(good + 0x4C), dir = rd32(good + 0x30);
    size_t fat_at = ((size_t)fat + 1) * 512, dir_at = ((size_t)dir + 1) * 512;

    memcpy(bad, good, n);
    wr32(bad + fat_at + 4 * dir, dir); /* the directory's sector is its own next */
    expect_msg_err("a FAT chain that loops", bad, n, "FAT chain of its directory loops",
                   SL_EPARSE);

    memcpy(bad, good, n);
    wr32(bad + 0x2C, 0x7FFFFFFF); /* FAT sectors */
    expect_msg_err("a huge FAT sector count", bad, n, "counts 2147483647 FAT", SL_EPARSE);

    memcpy(bad, good, n);
    wr32(bad + 0x30, 0x00FFFFFF); /* the directory past the end */
    expect_msg_err("a directory past the end", bad, n, "past the file's", SL_EPARSE);

    memcpy(bad, good, n);
    uint32_t child = rd32(good + dir_at + 0x4C); /* the root's first child */
    wr32(bad + dir_at + child * 128 + 0x48, child); /* is its own right sibling */
    expect_msg_err("a directory tree that loops", bad, n, "directory tree loops", SL_EPARSE);

    expect_msg_err("a file cut short", good, 600, "truncated", SL_EPARSE);
    expect_msg_err("a header alone", good, 100, "shorter than its 512-byte header", SL_EPARSE);

    /* a stream's size over the limit */
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_member = 16;
    got = text_of(SL_DOC_MSG, good, n, &lim);
    CHECK(!got && errcode == SL_ELIMIT && strstr(errmsg, "over 16"),
          "a stream's size is bounded: %s", esc(errmsg));
    free(got);
    free(bad);
    free(good);

    /* a big stream whose chain loops (html.msg's HTML body is past the
     * mini stream's cutoff) */
    good = slurp("tests/documents/mail/html.msg", &n);
    if (good) {
        bad = sl_xmalloc(n);
        memcpy(bad, good, n);
        fat = rd32(good + 0x4C);
        fat_at = ((size_t)fat + 1) * 512;
        /* every sector after the directory's that chains on points back to
         * itself: the first big stream then loops at once */
        dir = rd32(good + 0x30);
        for (uint32_t s = dir + 1; (size_t)(s + 2) * 512 <= n && s < 128; s++)
            if (rd32(good + fat_at + 4 * s) < 0xFFFFFFFA)
                wr32(bad + fat_at + 4 * s, s);
        expect_msg_err("a stream whose FAT chain loops", bad, n, "loops", SL_EPARSE);
        free(bad);
        free(good);
    }
}

int main(void)
{
    test_eml();
    test_msg();
    return tap_done();
}
