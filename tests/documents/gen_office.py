#!/usr/bin/python3
"""Makes the Office corpus for tests/unit/extract_ooxml.c in OUTDIR and,
beside each document, the text Dify's document extractor gives for it
(graphon's algorithm, run here on python-docx and pandas).

    gen_office.py OUTDIR

Writes OUTDIR/NAME.docx and OUTDIR/NAME.expected, and OUTDIR/MANIFEST
with one line per document: "NAME.EXT exact" when the expected text is
byte-exact by the spec, "NAME.EXT ws" when only whitespace-normalised text
is compared, "NAME.EXT error CODE TEXT" when reading it must fail with
that code (sl_errcode_name) and a message containing TEXT.  The hostile
documents (corrupt, truncated, encrypted, zip bombs, XXE, entity bombs)
need only the standard library; when python-docx is
missing the rest is left out and the exit status is 3.

Debian's python-docx 0.8 omits hyperlink text and treats <w:br> unlike
the python-docx 1.2 Dify uses, so those documents' expectations are
written by hand.
"""
import io
import os
import struct
import sys
import zipfile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
manifest = []


def write_manifest():
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")


# ---- hostile documents (standard library only) ----

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
      'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/>'
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
      'officedocument.wordprocessingml.document.main+xml"/></Types>')
RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats'
        '.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
        'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="word/document.xml"/></Relationships>')


def body(inner, prolog=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>{prolog}<w:document xmlns:w="{W_NS}">'
            f"<w:body>{inner}</w:body></w:document>")


def mini_docx(document, sep="/", extra=()):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CT)
        z.writestr(f"_rels{sep}.rels", RELS)
        z.writestr(f"word{sep}document.xml", document)
        for name, data in extra:
            z.writestr(name, data)
    return b.getvalue()


def fail(name, data, code, text):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    manifest.append(f"{name} error {code} {text}")


def hostile():
    good = mini_docx(body('<w:p><w:r><w:t>hello</w:t></w:r></w:p>'))
    fail("truncated.docx", good[: len(good) // 2], "parse", "Failed to extract text from DOCX")
    fail("corrupt.docx", b"PK\x03\x04" + bytes(range(256)) * 8, "parse",
         "Failed to extract text from DOCX")
    fail("notzip.docx", b"hello, not a zip", "parse", "not a zip")
    fail("empty.docx", b"", "parse", "not a zip")
    # bit 0 of the flags in both headers: the member is encrypted
    enc = bytearray(good)
    i = enc.find(b"PK\x03\x04")
    while i >= 0:
        enc[i + 6] |= 1
        i = enc.find(b"PK\x03\x04", i + 4)
    i = enc.find(b"PK\x01\x02")
    while i >= 0:
        enc[i + 8] |= 1
        i = enc.find(b"PK\x01\x02", i + 4)
    fail("encrypted.docx", bytes(enc), "unsupported", "encrypted")
    # a gigabyte of zeros in about a megabyte
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CT)
        z.writestr("_rels/.rels", RELS)
        with z.open("word/document.xml", "w", force_zip64=True) as m:
            chunk = bytes(1 << 20)
            for _ in range(1024):
                m.write(chunk)
    fail("bomb.docx", b.getvalue(), "limit", "zip bomb")
    # 300 MB of zeros whose headers claim 1000 bytes: only the count of
    # what decompresses can stop it
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CT)
        z.writestr("_rels/.rels", RELS)
        with z.open("word/document.xml", "w") as m:
            chunk = bytes(1 << 20)
            for _ in range(300):
                m.write(chunk)
    lie = bytearray(b.getvalue())
    for sig, at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        i = lie.find(sig)
        while i >= 0:
            if struct.unpack_from("<I", lie, i + at)[0] == 300 << 20:
                struct.pack_into("<I", lie, i + at, 1000)
            i = lie.find(sig, i + 4)
    fail("lying_bomb.docx", bytes(lie), "limit", "zip bomb")
    secret = os.path.join(out, "secret.txt")
    with open(secret, "w") as f:
        f.write("TOP-SECRET-XXE")
    xxe = body("<w:p><w:r><w:t>&xxe;</w:t></w:r></w:p>",
               f'<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file://{secret}">]>')
    fail("xxe.docx", mini_docx(xxe), "parse", "DTD")
    lol = "".join(f'<!ENTITY l{i} "{("&l%d;" % (i - 1)) * 10 if i else "lol"}">' for i in range(10))
    laughs = body("<w:p><w:r><w:t>&l9;</w:t></w:r></w:p>", f"<!DOCTYPE w:document [{lol}]>")
    fail("laughs.docx", mini_docx(laughs), "parse", "DTD")
    fail("deep.docx", mini_docx(body("<w:p>" + "<w:r>" * 300 + "</w:r>" * 300 + "</w:p>")),
         "limit", "deeper than")
    fail("badxml.docx", mini_docx(body("<w:p><w:r><w:t>x</w:r></w:p>")), "parse", "bad XML")
    fail("nobody.docx", mini_docx('<?xml version="1.0"?><x/>'), "parse", "no w:document")
    fail("xls_in_docx.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "parse",
         "not a zip")
    # Evernote's backslashes: read on the second try, as Dify does
    ever = mini_docx(body('<w:p><w:r><w:t>evernote</w:t></w:r></w:p>'), sep="\\")
    with open(os.path.join(out, "evernote.docx"), "wb") as f:
        f.write(ever)
    with open(os.path.join(out, "evernote.docx.expected"), "w") as f:
        f.write("evernote")
    manifest.append("evernote.docx exact")


hostile()
write_manifest()

try:
    import docx
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph
except ImportError as e:  # the C test counts this as a skip
    print(f"gen_office: {e}", file=sys.stderr)
    sys.exit(3)


def emit(name, data, expected, exact=True):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    with open(os.path.join(out, name + ".expected"), "w", encoding="utf-8", newline="") as f:
        f.write(expected)
    manifest.append(f"{name} {'exact' if exact else 'ws'}")


# ---- docx: graphon's _extract_text_from_docx ----

def table_to_markdown(table):
    rows = table.rows
    lines = []
    for i, row in enumerate(rows):
        cells = [c.text.replace("\n", "<br>") for c in row.cells]
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("| " + " | ".join(["---"] * len(row.cells)) + " |")
    return "\n".join(lines) + "\n"


def dify_docx(data):
    doc = docx.Document(io.BytesIO(data))
    items = []
    for el in doc.element.body.iterchildren():
        if el.tag == qn("w:p"):
            items.append(Paragraph(el, doc).text)
        elif el.tag == qn("w:tbl"):
            t = Table(el, doc)
            try:
                if all(not c.text.strip() for r in t.rows for c in r.cells):
                    continue
                items.append(table_to_markdown(t))
            except Exception:
                continue
    return "\n".join(items)


def save(doc):
    b = io.BytesIO()
    doc.save(b)
    return b.getvalue()


def docx_cases():
    d = docx.Document()
    d.add_paragraph("Intro")
    t = d.add_table(rows=2, cols=2)
    for (r, c), v in {(0, 0): "Name", (0, 1): "Value", (1, 0): "Color", (1, 1): "Blue"}.items():
        t.cell(r, c).text = v
    d.add_paragraph("Outro")
    data = save(d)
    # graphon's own test pins this string
    assert dify_docx(data) == "Intro\n| Name | Value |\n| --- | --- |\n| Color | Blue |\n\nOutro"
    emit("intro_table.docx", data, dify_docx(data))

    d = docx.Document()
    d.add_heading("Heading one", level=1)
    p = d.add_paragraph("plain ")
    p.add_run("bold").bold = True
    p.add_run(" and\ttab")
    d.add_paragraph("")
    d.add_paragraph("Ünïcødé — 中文 ✓")
    d.add_paragraph("  spaced  ")
    emit("paragraphs.docx", save(d), dify_docx(save(d)))

    d = docx.Document()
    d.add_paragraph("before")
    t = d.add_table(rows=4, cols=3)
    for r in range(4):
        for c in range(3):
            t.cell(r, c).text = f"r{r}c{c}"
    t.cell(0, 0).merge(t.cell(0, 1))          # gridSpan 2
    t.cell(1, 2).merge(t.cell(3, 2))          # vMerge restart/continue
    t.cell(2, 0).text = "two\nlines"
    t.cell(3, 0).add_paragraph("second para")
    d.add_paragraph("after")
    emit("merged.docx", save(d), dify_docx(save(d)))

    d = docx.Document()
    d.add_paragraph("a")
    d.add_table(rows=2, cols=2)                 # all blank: skipped
    t = d.add_table(rows=1, cols=2)
    t.cell(0, 0).text = "   "                   # blank after strip: skipped
    d.add_paragraph("b")
    t = d.add_table(rows=1, cols=1)
    t.cell(0, 0).text = "only | pipe"
    emit("empty_tables.docx", save(d), dify_docx(save(d)))

    # Hyperlink text and line breaks: python-docx 0.8 drops the first and
    # reads the second differently, so the text is written out here.
    d = docx.Document()
    p = d.add_paragraph("see ")
    rel = p.part.relate_to("https://example.com/", docx.opc.constants.RELATIONSHIP_TYPE.HYPERLINK,
                           is_external=True)
    h = p._p.makeelement(qn("w:hyperlink"), {qn("r:id"): rel})
    for txt in ("the ", "site"):
        r = h.makeelement(qn("w:r"), {})
        t = r.makeelement(qn("w:t"), {})
        t.text = txt
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        r.append(t)
        h.append(r)
    p._p.append(h)
    p.add_run(" now")
    p2 = d.add_paragraph()
    r = p2.add_run("line1")
    r.add_break()                                          # textWrapping: "\n"
    r.add_text("line2")
    r.add_break(docx.enum.text.WD_BREAK.PAGE)              # page: ""
    r.add_text("line3")
    p2.add_run("x")._r.append(p2._p.makeelement(qn("w:noBreakHyphen"), {}))
    emit("hyperlink.docx", save(d), "see the site now\nline1\nline2line3x-")


docx_cases()
write_manifest()
