#!/usr/bin/python3
"""Makes the Office corpus for tests/unit/extract_ooxml.c in OUTDIR and,
beside each document, the text Dify's document extractor gives for it
(graphon's algorithm, run here on python-docx and pandas).

    gen_office.py OUTDIR

Writes OUTDIR/NAME.{docx,xlsx} and OUTDIR/NAME.expected, and OUTDIR/MANIFEST
with one line per document: "NAME.EXT exact" when the expected text is
byte-exact by the spec, "NAME.EXT ws" when only whitespace-normalised text
is compared, "NAME.EXT error CODE TEXT" when reading it must fail with
that code (sl_errcode_name) and a message containing TEXT.  The hostile
documents (corrupt, truncated, encrypted, zip bombs, XXE, entity bombs)
need only the standard library; when python-docx, openpyxl or pandas is
missing the rest is left out and the exit status is 3.

Debian's python-docx 0.8 omits hyperlink text and treats <w:br> unlike
the python-docx 1.2 Dify uses, so those documents' expectations are
written by hand.  Debian's pandas 1.5 has no DataFrame.map: applymap is
the same function.
"""
import datetime
import io
import os
import struct
import sys
import warnings
import zipfile
import zlib

warnings.simplefilter("ignore")  # openpyxl's notes on the hand-made workbooks
if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)
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


def zeros_zip64(members, big_name, big_mib, claim=None):
    """A zip of members (name, bytes) and big_name, big_mib MiB of zeros
    deflated, written by hand (Zip64) so that the zeros are compressed
    once: after a full flush a deflate block stands alone, so one MiB's
    block repeated is a valid stream of the whole.  claim: the size the
    headers give the zeros instead of theirs."""
    mib = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = 0
    for _ in range(big_mib):
        crc = zlib.crc32(mib, crc)
    entries = [(n.encode(), 8, zlib.crc32(d), zlib.compress(d)[2:-4], len(d)) for n, d in members]
    entries.append((big_name.encode(), 8, crc, None, big_mib << 20 if claim is None else claim))
    body = io.BytesIO()
    central = []
    for name, method, ecrc, data, usize in entries:
        csize = len(block) * big_mib + len(tail) if data is None else len(data)
        extra = struct.pack("<HHQQ", 1, 16, usize, csize)
        off = body.tell()
        body.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0, ecrc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra)) + name + extra)
        if data is None:
            for _ in range(big_mib):
                body.write(block)
            body.write(tail)
        else:
            body.write(data)
        cextra = struct.pack("<HHQQQ", 1, 24, usize, csize, off)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0,
                                   ecrc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(cextra), 0, 0,
                                   0, 0, 0xFFFFFFFF) + name + cextra)
    cd_off = body.tell()
    for e in central:
        body.write(e)
    cd_size = body.tell() - cd_off
    z64 = body.tell()
    n = len(central)
    body.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd_off))
    body.write(struct.pack("<IIQI", 0x07064B50, 0, z64, 1))
    body.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                           0xFFFFFFFF, 0))
    return body.getvalue()


def fail_bomb():
    data = zeros_zip64([("[Content_Types].xml", CT.encode()), ("_rels/.rels", RELS.encode())],
                       "word/document.xml", 1024)
    fail("bomb.docx", data, "limit", "zip bomb")


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
    fail_bomb()
    # 300 MB of zeros whose headers claim 1000 bytes: only the count of
    # what decompresses can stop it
    fail("lying_bomb.docx",
         zeros_zip64([("[Content_Types].xml", CT.encode()), ("_rels/.rels", RELS.encode())],
                     "word/document.xml", 300, claim=1000), "limit", "zip bomb")
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
    fail("legacy.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "parse", "compound file")
    fail("xls_in_docx.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "parse",
         "not a zip")
    # Evernote's backslashes: read on the second try, as Dify does
    ever = mini_docx(body('<w:p><w:r><w:t>evernote</w:t></w:r></w:p>'), sep="\\")
    with open(os.path.join(out, "evernote.docx"), "wb") as f:
        f.write(ever)
    with open(os.path.join(out, "evernote.docx.expected"), "w") as f:
        f.write("evernote")
    manifest.append("evernote.docx exact")


P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def sp(y, x, paras):
    body = "".join(f"<a:p>{p}</a:p>" for p in paras)
    return (f'<p:sp><p:spPr><a:xfrm><a:off x="{x}" y="{y}"/></a:xfrm></p:spPr>'
            f"<p:txBody>{body}</p:txBody></p:sp>")


def run(t):
    return f'<a:r><a:t xml:space="preserve">{t}</a:t></a:r>'


def slide_xml(shapes):
    return (f'<p:sld xmlns:p="{P_NS}" xmlns:a="{A_NS}" xmlns:r="{R_NS}"><p:cSld><p:spTree>'
            f"{shapes}</p:spTree></p:cSld></p:sld>")


def pptx():
    """unstructured and python-pptx are not packaged: the text is written
    out by hand from unstructured 0.27's rules (docextract_research §3.9)."""
    table = ('<p:graphicFrame><p:xfrm><a:off x="0" y="3000"/></p:xfrm><a:graphic><a:graphicData>'
             "<a:tbl><a:tr><a:tc><a:txBody><a:p>" + run("h1") + "</a:p></a:txBody></a:tc>"
             "<a:tc><a:txBody><a:p>" + run("h 2") + "</a:p></a:txBody></a:tc></a:tr><a:tr><a:tc>"
             "<a:txBody><a:p/></a:txBody></a:tc><a:tc><a:txBody><a:p>" + run("x  y\tz") +
             "</a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>")
    first = slide_xml(
        '<p:pic><p:spPr><a:xfrm><a:off x="0" y="0"/></a:xfrm></p:spPr></p:pic>'
        + sp(2000, 100, [run("Second line")])
        + table
        + sp(1000, 100, [run("Title"), "", run("  "), run("a") + "<a:br/>" + run("b"),
                         run("Slide ") + '<a:fld id="{1}" type="slidenum"><a:t>7</a:t></a:fld>']))
    second = slide_xml(
        "<p:grpSp>" + sp(500, 50, [run("grouped")]) + "</p:grpSp>"
        + sp(100, 50, [run("top")]) + sp(-100, 200, [run("hidden")]) + sp(-100, 0, [run("shown")]))
    third = slide_xml("")
    ct = ('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          '<Default Extension="xml" ContentType="application/xml"/></Types>')
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", ct)
        z.writestr("_rels/.rels", f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" '
                   f'Type="{R_NS}/officeDocument" Target="ppt/presentation.xml"/></Relationships>')
        z.writestr("ppt/presentation.xml",
                   f'<p:presentation xmlns:p="{P_NS}" xmlns:r="{R_NS}"><p:sldIdLst>'
                   '<p:sldId id="256" r:id="rId3"/><p:sldId id="257" r:id="rId2"/>'
                   '<p:sldId id="258" r:id="rId4"/></p:sldIdLst></p:presentation>')
        z.writestr("ppt/_rels/presentation.xml.rels",
                   f'<Relationships xmlns="{pkg}">'
                   f'<Relationship Id="rId2" Type="{R_NS}/slide" Target="slides/slide1.xml"/>'
                   f'<Relationship Id="rId3" Type="{R_NS}/slide" Target="slides/slide2.xml"/>'
                   f'<Relationship Id="rId4" Type="{R_NS}/slide" Target="/ppt/slides/slide3.xml"/>'
                   "</Relationships>")
        z.writestr("ppt/slides/slide1.xml", second)
        z.writestr("ppt/slides/slide2.xml", first)
        z.writestr("ppt/slides/slide3.xml", third)
    with open(os.path.join(out, "slides.pptx"), "wb") as f:
        f.write(b.getvalue())
    with open(os.path.join(out, "slides.pptx.expected"), "w", newline="") as f:
        f.write("Title\na\vb\nSlide 7\nSecond line\nh1 h 2 x y z\n\nshown\ntop\ngrouped\n")
    manifest.append("slides.pptx exact")
    fail("docx_as.pptx", mini_docx(body("<w:p/>")), "parse", "is not a presentation")


def docx_handmade():
    """Tables python-docx 0.8 reads unlike 1.2, with the text 1.2 gives."""
    def doc(name, inner, text):
        with open(os.path.join(out, name), "wb") as f:
            f.write(mini_docx(body(inner)))
        with open(os.path.join(out, name + ".expected"), "w", newline="") as f:
            f.write(text)
        manifest.append(f"{name} exact")

    cell = "<w:tc><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:tc>"
    # a first row without cells: "| " + "" + " |" for it and its separator
    doc("empty_row.docx", "<w:tbl><w:tr/><w:tr>" + cell.format("x") + "</w:tr></w:tbl>",
        "|  |\n|  |\n| x |\n")
    # a merge continued from above the first row raises: the table is skipped
    doc("bad_merge.docx", "<w:p><w:r><w:t>p1</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:tcPr>"
        "<w:vMerge/></w:tcPr><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
        "<w:p><w:r><w:t>p2</w:t></w:r></w:p>", "p1\np2")
    # a merge continued over two rows, under a cell spanning two columns;
    # gridBefore shifts a row's cells right on the grid
    doc("merge_span.docx",
        "<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"2\"/><w:vMerge w:val=\"restart\"/>"
        "</w:tcPr><w:p><w:r><w:t>AB</w:t></w:r></w:p></w:tc>" + cell.format("C") + "</w:tr>"
        "<w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"2\"/><w:vMerge/></w:tcPr><w:p/></w:tc>"
        + cell.format("c2") + "</w:tr><w:tr><w:trPr><w:gridBefore w:val=\"2\"/></w:trPr>"
        + cell.format("c3") + "</w:tr></w:tbl>",
        "| AB | AB | C |\n| --- | --- | --- |\n| AB | AB | c2 |\n| c3 |\n")


hostile()
docx_handmade()
pptx()
write_manifest()

try:
    import docx
    import openpyxl
    import pandas as pd
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


# ---- xlsx: graphon's _extract_text_from_excel ----

def dify_excel(data):
    xf = pd.ExcelFile(io.BytesIO(data))
    text = ""
    for sheet in xf.sheet_names:
        try:
            df = xf.parse(sheet_name=sheet)
            df.dropna(how="all", inplace=True)
            df = df.applymap(lambda x: " ".join(str(x).splitlines()) if isinstance(x, str) else x)
            df.columns = pd.Index([" ".join(str(c).splitlines()) for c in df.columns])
            lines = ["| " + " | ".join(df.columns) + " |",
                     "| " + " | ".join("-" * len(c) for c in df.columns) + " |"]
            for _, row in df.iterrows():
                lines.append("| " + " | ".join(map(str, row)) + " |")
            text += "\n".join(lines) + "\n\n"
        except (TypeError, ValueError):
            continue
    return text


def book(sheets):
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets:
        ws = wb.create_sheet(name)
        for r in rows:
            if isinstance(r, dict):
                for k, v in r.items():
                    ws[k] = v
            else:
                ws.append(r)
    b = io.BytesIO()
    wb.save(b)
    return b.getvalue()


def xlsx_cases():
    d = datetime.datetime
    cases = {
        "simple": [("Sheet1", [["name", "qty", "price"], ["apple", 3, 1.5], ["pear", 10, 2.25]])],
        "ints": [("S", [["a", "b"], [1, 2], [3, 4]])],
        "int_float": [("S", [["a", "b"], [1, 2.5], [3, 4]])],
        "blank_cells": [("S", [["a", "b", "c"], [1, None, "x"], [None, 2, "y"], [3, 4, None]])],
        "dup_headers": [("S", [["a", "a", None, "a", "b"], [1, 2, 3, 4, 5]])],
        "num_headers": [("S", [[2024, 2.5, "x"], ["p", "q", "r"]])],
        "dates": [("S", [["when", "n"], [d(2024, 1, 2), 1], [d(2024, 3, 4, 12, 30), 2]])],
        "bools": [("S", [["flag", "name"], [True, "a"], [False, "b"]])],
        "multiline": [("S", [["head\nline", "v"], ["one\ntwo\r\nthree", "w"]])],
        "blank_rows": [("S", [["h1", "h2"], [None, None], ["a", 1], [None, None], ["b", 2]])],
        "three_sheets": [("First", [["x"], [1]]), ("Empty", []), ("Third", [["y", "z"], ["p", "q"]])],
        "header_only": [("S", [["only", "header"]])],
        "floats": [("S", [["v"], [0.1], [1e16], [1.5e-05], [123.456], [-2.0]])],
        "mixed_object": [("S", [["m"], [1], ["text"], [2.5], [True]])],
        "inline_offset": [("S", [{"B2": "h", "C2": "i", "B3": 1, "C3": "z"}])],
        "numeric_strings": [("S", [["a", "b"], ["007", "007"], ["1", "x"], ["2.50", "y"]])],
        "bool_int": [("S", [["a", "b", "c"], [True, True, 1.5], [1, False, True]])],
        "leading_blank": [("S", [{"A3": "h", "A4": 1}]), ("T", [[None, None], [1, 2]])],
        "nat_times": [("S", [["a", "b", "c"], [d(2024, 1, 2), datetime.time(12, 30), 1],
                             [None, datetime.time(0, 0, 1), 2]])],
        "na_strings": [("S", [["a", "b", "nan"], ["NA", "x", 1], ["null", "N/A", 2]])],
        "all_nan_col": [("S", [["x", None, None], [1, None, None], [None, None, "z"]])],
        "pipes_unicode": [("S", [["ü|x", "中文"], ["a|b", "\u2028line\x85two"]])],
    }
    for name, sheets in cases.items():
        data = book(sheets)
        emit(f"{name}.xlsx", data, dify_excel(data))
    # a custom date format, and what openpyxl does not write: inline and
    # formula strings, booleans and errors as cell types, the 1904 epoch
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["when", "n"])
    ws.append([45000.25, 1])
    ws.append([45001, 2])
    ws["A2"].number_format = "yyyy/mm/dd hh:mm"
    ws["A3"].number_format = '[$-409]d"th of" mmmm'
    ws["B3"].number_format = '"days" 0'
    emit("custom_date.xlsx", save_wb(wb), dify_excel(save_wb(wb)))
    # elapsed-time formats read as dates and times (openpyxl 3.0)
    wb = openpyxl.Workbook()
    ws = wb.active
    for r in (["dur", "x"], [1.5, 1], [0.25, 2], [None, 3]):
        ws.append(r)
    ws["A2"].number_format = ws["A3"].number_format = "[h]:mm:ss"
    emit("elapsed.xlsx", save_wb(wb), dify_excel(save_wb(wb)))
    # a number that is not one: openpyxl raises ValueError, Dify skips the sheet
    raw = raw_xlsx('<sheetData><row r="1"><c r="A1"><v>12abc</v></c></row></sheetData>')
    emit("bad_number.xlsx", raw, dify_excel(raw))
    raw = raw_xlsx(
        '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>in</t></is></c>'
        '<c r="B1" t="str"><f>1</f><v>formula</v></c><c r="C1" t="s"><v>0</v></c></row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><r><t>ri</t></r><r><t>ch</t></r>'
        '<rPh sb="0" eb="1"><t>PH</t></rPh></is></c><c r="B2" t="b"><v>1</v></c><c r="C2" t="e"><v>#DIV/0!</v>'
        '</c></row><row r="3"><c r="A3" t="inlineStr"><is><t>x</t></is></c><c r="B3" t="b">'
        '<v>0</v></c><c r="C3" s="1"><v>1.5</v></c></row></sheetData>', date1904=True)
    emit("cell_types.xlsx", raw, dify_excel(raw))


def save_wb(wb):
    b = io.BytesIO()
    wb.save(b)
    return b.getvalue()


def raw_xlsx(sheet_data, date1904=False):
    s_ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    r_ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    ct_ns = "http://schemas.openxmlformats.org/package/2006/content-types"
    sml = "application/vnd.openxmlformats-officedocument.spreadsheetml."
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml",
                   f'<Types xmlns="{ct_ns}"><Default Extension="xml" ContentType="application/xml"/>'
                   f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
                   f'relationships+xml"/><Override PartName="/xl/workbook.xml" ContentType="{sml}'
                   f'sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType='
                   f'"{sml}worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType='
                   f'"{sml}sharedStrings+xml"/><Override PartName="/xl/styles.xml" ContentType='
                   f'"{sml}styles+xml"/></Types>')
        z.writestr("_rels/.rels", f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" '
                   f'Type="{rel}officeDocument" Target="xl/workbook.xml"/></Relationships>')
        z.writestr("xl/workbook.xml",
                   f'<workbook xmlns="{s_ns}" xmlns:r="{r_ns}"><workbookPr date1904='
                   f'"{1 if date1904 else 0}"/><sheets><sheet name="Raw" sheetId="1" r:id="rId1"/>'
                   f'</sheets></workbook>')
        z.writestr("xl/_rels/workbook.xml.rels",
                   f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}worksheet" '
                   f'Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{rel}'
                   f'sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" '
                   f'Type="{rel}styles" Target="/xl/styles.xml"/></Relationships>')
        z.writestr("xl/sharedStrings.xml", f'<sst xmlns="{s_ns}"><si><t>shared</t></si></sst>')
        z.writestr("xl/styles.xml", f'<styleSheet xmlns="{s_ns}"><cellXfs count="2"><xf numFmtId="0"/>'
                   f'<xf numFmtId="14"/></cellXfs></styleSheet>')
        z.writestr("xl/worksheets/sheet1.xml", f'<worksheet xmlns="{s_ns}">{sheet_data}</worksheet>')
    return b.getvalue()


docx_cases()
xlsx_cases()
write_manifest()
