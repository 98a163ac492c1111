#!/usr/bin/python3
"""Writes the PDFs the PDF extractor's tests and benchmark read.

    gen_pdf.py OUTDIR [--bench]

Made with reportlab (Debian's python3-reportlab); each readable document
gets NAME.expected beside it: what pypdf (python3-pypdf, Dify's fallback
reader) finds on each page, whitespace collapsed per page, the pages
joined with "" as Dify joins them.  Dify's own text comes from PDFium,
which is not in Debian; pypdf is the independent reference here.

Readable: one (one page), multi (five pages), unicode (non-Latin text in
an embedded DejaVu Sans when fonts-dejavu-core is there, else Latin-1
text), emptypage (a page with nothing on it between two with text),
pages300 (300 pages of forty lines).
Hand-made (sluice's own reader, extract/pdftext): features (TJ, ', ",
Tz, several content streams, a form, an inline image, WinAnsi and
/Differences), xrefstm (the same in object streams with a cross-reference
stream), type0 (Identity-H with a ToUnicode map), incremental (an update
replacing a stream), builtin (a font program's own encoding), actualtext
(marked content's /ActualText), lzw and runlength (the older filters); rotated, unmapped, type3 (left to pdftotext);
loop_prev, loop_tree, loop_length, deep, chain (damaged structure).
Hostile: truncated (a PDF cut short), garbage (random bytes after a
%PDF- header), encrypted (a user password), bomb_mem (one string of
768 MiB behind 1 MB of deflate), bomb_text (lots of text from little input).

--bench writes only multi and pages300.  Exits 3 naming what is missing
when reportlab or pypdf cannot be imported.
"""
import os
import random
import sys
import zlib

try:
    from reportlab.pdfgen import canvas
    from reportlab.lib import pdfencrypt
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    import pypdf
except ImportError as e:
    print("gen_pdf: missing %s (Debian packages python3-reportlab and python3-pypdf)" % e.name,
          file=sys.stderr)
    sys.exit(3)

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu").split()
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def line_of(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make(path, pages, font="Helvetica", size=11):
    """pages: a list of lists of lines; an empty list is an empty page."""
    c = canvas.Canvas(path, pageCompression=1)
    for lines in pages:
        c.setFont(font, size)
        y = 800
        for line in lines:
            c.drawString(50, y, line)
            y -= size + 7
        c.showPage()
    c.save()


def expect(path):
    reader = pypdf.PdfReader(path)
    text = "".join(" ".join((p.extract_text() or "").split()) for p in reader.pages)
    with open(path[:-4] + ".expected", "w", encoding="utf-8") as f:
        f.write(text)


def raw_pdf(path, content, pages=1):
    """A PDF of `pages` pages that all draw one deflated content stream,
    offsets computed."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content +
            b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    objs += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
             b"/Resources << /Font << /F1 4 0 R >> >> /Contents 3 0 R >>"] * pages
    out = bytearray(b"%PDF-1.4\n")
    offs = []
    for i, o in enumerate(objs):
        offs.append(len(out))
        out += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offs:
        out += b"%010d 00000 n \n" % o
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1,
                                                                                xref)
    with open(path, "wb") as f:
        f.write(out)


def build(path, objs, root=1, xref_stream=False, in_objstm=(), prev=None, trailer_extra=b""):
    """A PDF of the given objects (numbered from 1; an object is bytes, or
    (dict_bytes, stream_bytes) for a stream, deflated when the dict says
    /FlateDecode).  xref_stream: a cross-reference stream (PNG Up
    predictor) instead of a table; in_objstm: numbers of objects that go
    into one object stream instead.  prev=(bytes, xref offset): this is an
    incremental update appended to those bytes."""
    out = bytearray(prev[0] if prev else b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offs = {}
    n = len(objs)
    packed = [i + 1 for i in range(n) if i + 1 in in_objstm]
    def body(o):
        if isinstance(o, tuple):
            d, data = o
            if b"/FlateDecode" in d:
                data = zlib.compress(data)
            end = d.rindex(b">>")
            return d[:end] + b" /Length %d " % len(data) + d[end:] + b"\nstream\n" + \
                data + b"\nendstream"
        return o
    for i, o in enumerate(objs):
        num = i + 1
        if num in in_objstm or o is None:
            continue
        offs[num] = len(out)
        out += b"%d 0 obj\n" % num + body(o) + b"\nendobj\n"
    stm_num = None
    if packed:
        stm_num = n + 1
        head, data = b"", b""
        for num in packed:
            head += b"%d %d " % (num, len(data))
            data += objs[num - 1] + b"\n"
        content = head + data
        offs[stm_num] = len(out)
        z = zlib.compress(content)
        out += (b"%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>"
                b"\nstream\n" % (stm_num, len(packed), len(head), len(z)) + z +
                b"\nendstream\nendobj\n")
    size = max([n] + list(offs)) + 1
    extra = trailer_extra + (b" /Prev %d" % prev[1] if prev else b"")
    if xref_stream:
        xnum = size
        size += 1
        xoff = len(out)
        rows = []
        for num in range(size):
            if num == xnum:
                rows.append((1, xoff, 0))
            elif num in offs:
                rows.append((1, offs[num], 0))
            elif num in packed:
                rows.append((2, stm_num, packed.index(num)))
            else:
                rows.append((0, 0, 0))
        raw, last = b"", bytes(4)
        for t, a, b in rows:
            row = bytes([t]) + a.to_bytes(2, "big") + bytes([b])
            raw += b"\x02" + bytes((x - y) & 255 for x, y in zip(row, last))
            last = row
        z = zlib.compress(raw)
        out += (b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 2 1] /Root %d 0 R /Filter /FlateDecode "
                b"/DecodeParms << /Predictor 12 /Columns 4 >> /Length %d%s >>\nstream\n"
                % (xnum, size, root, len(z), extra) + z + b"\nendstream\nendobj\n")
    else:
        xoff = len(out)
        nums = sorted(offs)
        out += b"xref\n0 1\n0000000000 65535 f \n"
        for num in nums:
            out += b"%d 1\n%010d 00000 n \n" % (num, offs[num])
        out += b"trailer\n<< /Size %d /Root %d 0 R%s >>\n" % (size, root, extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xoff
    with open(path, "wb") as f:
        f.write(out)
    return bytes(out), xoff


PAGE = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s "
        b"/Contents %s >>")
CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
HELV = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

# What sluice's own reader must get right: TJ kerning and word gaps, the
# ' and " operators, Tz/Tc/Tw, several content streams, a form XObject,
# an inline image whose data holds "EI", nested q/Q, a second word placed
# on the same line, WinAnsi bytes, a /Differences encoding.
FEATURES_1 = (b"q 1 0 0 1 0 0 cm BT /F1 12 Tf 72 720 Td [(Hel) 20 (lo) -600 (World)] TJ ET Q\n"
              b"BT /F1 12 Tf 14 TL 72 700 Td (First line) Tj (Second line) ' 2 0.5 (Third line) \" ET\n"
              b"BT /F1 12 Tf 72 650 Td (Left) Tj 120 0 Td (Right) Tj ET\n"
              b"BI /W 4 /H 1 /BPC 8 /CS /G ID \x00EI\x01\xff EI\n")
FEATURES_2 = (b"BT /F1 12 Tf 72 600 Td 150 Tz (Wide words) Tj 100 Tz ET\n"
              b"BT /F1 12 Tf 72 580 Td (Caf\351 \223quoted\224 \200 5) Tj ET\n"
              b"BT /F2 12 Tf 72 560 Td (\001\002 Differences) Tj ET\n"
              b"q 1 0 0 1 72 500 cm /X1 Do Q\n")
FORM = (b"<< /Type /XObject /Subtype /Form /BBox [0 0 300 50] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Filter /FlateDecode >>", b"BT /F1 10 Tf 0 10 Td (Text inside a form) Tj ET")
DIFFS = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding << /Type /Encoding "
         b"/BaseEncoding /WinAnsiEncoding /Differences [1 /quoteright /fi] >> >>")


def features(path, **kw):
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R /F2 5 0 R >> /XObject << /X1 6 0 R >> >>",
                    b"[7 0 R 8 0 R]"),
            HELV, DIFFS, FORM,
            (b"<< /Filter /FlateDecode >>", FEATURES_1), (b"<< >>", FEATURES_2)]
    return build(path, objs, **kw)


TOUNICODE = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /T def "
             b"1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
             b"2 beginbfrange <0001> <001A> <0061> <0020> <0020> <0020> endbfrange\n"
             b"2 beginbfchar <0030> <00660066> <0031> <03A9> endbfchar\n"
             b"endcmap CMapName currentdict /CMap defineresource pop end end")


def type0(path):
    """Identity-H: 2-byte codes mapped by ToUnicode (a range for a-z, a
    ligature to two letters, Greek)."""
    text = lambda s: b"".join(b"\x00" + bytes([c]) for c in s)
    words = text(bytes([8, 5, 12, 12, 15, 0x20, 0x30, 9, 3, 5, 0x20, 0x31]))
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R >> >>", b"6 0 R"),
            b"<< /Type /Font /Subtype /Type0 /BaseFont /Helvetica /Encoding /Identity-H "
            b"/DescendantFonts [5 0 R] /ToUnicode 7 0 R >>",
            b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Helvetica /CIDSystemInfo "
            b"<< /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 500 "
            b"/W [1 [556 556 500] 4 26 556 32 [278] 48 49 600] >>",
            (b"<< /Filter /FlateDecode >>", b"BT /F1 14 Tf 72 700 Td <" + words.hex().encode() +
             b"> Tj ET"),
            (b"<< /Filter /FlateDecode >>", TOUNICODE)]
    build(path, objs)


def builtin(path):
    """A symbolic Type1 font without /Encoding: its program's own encoding
    (here codes 65 and 66 swapped, and 1 a ligature) is the one to use."""
    program = (b"%!PS-AdobeFont-1.0: Swapped 001.000\n/FontName /Swapped def\n"
               b"/Encoding 256 array 0 1 255 {1 index exch /.notdef put} for\n"
               b"dup 65 /B put dup 66 /A put dup 1 /fi put dup 32 /space put\n"
               b"dup 67 /C.sc put dup 110 /n put dup 100 /d put readonly def\ncurrentdict end\n"
               b"currentfile eexec\n")
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R >> >>", b"7 0 R"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Swapped /FirstChar 1 /LastChar 67 "
            b"/Widths [556" + b" 0" * 30 + b" 278" + b" 0" * 32 + b" 600 600 600] "
            b"/FontDescriptor 5 0 R >>",
            b"<< /Type /FontDescriptor /FontName /Swapped /Flags 4 /FontBBox [0 0 1000 1000] "
            b"/ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 "
            b"/FontFile 6 0 R >>",
            (b"<< /Length1 %d /Length2 0 /Length3 0 >>" % len(program), program),
            (b"<< /Filter /FlateDecode >>", b"BT /F1 12 Tf 72 700 Td (BAC \001nd) Tj ET")]
    build(path, objs)


def actualtext(path):
    """Marked content whose /ActualText stands for the glyphs drawn (an
    inline property list, and a named one in /Properties), around a
    missing glyph (code 0) as Chrome writes for a character no font has."""
    content = (b"BT /F1 12 Tf 72 700 Td (Word ) Tj /Span << /ActualText <FEFF4E2D6587> >> BDC "
               b"<00> Tj EMC ( and ) Tj /Span /P1 BDC (XY) Tj EMC ( end) Tj ET")
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R >> /Properties << /P1 << /ActualText (fi) >> >> >>",
                    b"5 0 R"), HELV,
            (b"<< /Filter /FlateDecode >>", content)]
    build(path, objs)


def lzw_encode(data, early=True):
    """PDF's LZW (ISO 32000-1, 7.4.4): 9-12 bit codes, MSB first, a clear
    code first, the table restarted when full."""
    out, acc, nbits = bytearray(), 0, 0
    def put(code, width):
        nonlocal acc, nbits
        acc = acc << width | code
        nbits += width
        while nbits >= 8:
            out.append((acc >> (nbits - 8)) & 255)
            nbits -= 8
    table = {bytes([i]): i for i in range(256)}
    nxt, width = 258, 9
    put(256, width)
    w = b""
    for c in data:
        wc = w + bytes([c])
        if wc in table:
            w = wc
            continue
        put(table[w], width)
        table[wc] = nxt
        nxt += 1
        if nxt + (1 if early else 0) > (1 << width) and width < 12:
            width += 1
        if nxt >= 4094:
            put(256, width)
            table = {bytes([i]): i for i in range(256)}
            nxt, width = 258, 9
        w = bytes([c])
    if w:
        put(table[w], width)
    put(257, width)
    if nbits:
        out.append((acc << (8 - nbits)) & 255)
    return bytes(out)


def runlength_encode(data):
    out, i = bytearray(), 0
    while i < len(data):
        j = i
        while j < len(data) and j - i < 128 and data[j] == data[i]:
            j += 1
        if j - i >= 3:
            out += bytes([257 - (j - i), data[i]])
            i = j
            continue
        j = i
        while j < len(data) and j - i < 128 and not (j + 2 < len(data) and
                                                      data[j] == data[j + 1] == data[j + 2]):
            j += 1
        out += bytes([j - i - 1]) + data[i:j]
        i = j
    return bytes(out + b"\x80")


def old_filters(path, kind):
    """Content in the older filters: LZW (early change, long enough for
    12-bit codes and a table reset) or RunLength."""
    rng = random.Random(5)
    lines = b"".join(b"(%s) Tj T* " % line_of(rng, 9).encode() for _ in range(400))
    content = b"BT /F1 9 Tf 11 TL 40 780 Td " + lines + b"ET"
    if kind == "lzw":
        stream = (b"<< /Filter /LZWDecode >>", lzw_encode(content))
    else:
        stream = (b"<< /Filter /RunLengthDecode >>", runlength_encode(content))
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R >> >>", b"5 0 R"), HELV, stream]
    build(path, objs)


def declined(path, kind):
    """PDFs sluice's reader leaves to pdftotext."""
    content, font = b"BT /F1 12 Tf 72 700 Td (Read by pdftotext) Tj ET", HELV
    if kind == "rotated":
        content = b"BT /F1 12 Tf 0 1 -1 0 300 300 Tm (Rotated text) Tj ET"
    elif kind == "unmapped":
        font = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Differences "
                b"[65 /g123] >> >>")
        content = b"BT /F1 12 Tf 72 700 Td (ABA) Tj ET"
    elif kind == "type3":
        font = (b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [0.001 0 0 0.001 0 0] "
                b"/CharProcs << >> /Encoding << /Differences [65 /A] >> /FirstChar 65 /LastChar 65 "
                b"/Widths [500] >>")
        content = b"BT /F1 12 Tf 72 700 Td (AAA) Tj ET"
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< /Font << /F1 4 0 R >> >>", b"5 0 R"), font,
            (b"<< /Filter /FlateDecode >>", content)]
    build(path, objs)


def hostile(out):
    """Damaged structure sluice's reader must decline, not loop on."""
    def write(name, data):
        with open(os.path.join(out, name + ".pdf"), "wb") as f:
            f.write(data)
    # /Prev pointing at its own section
    head = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    x = len(head)
    write("loop_prev", head + b"xref\n0 2\n0000000000 65535 f \n0000000009 00000 n \n"
          b"trailer\n<< /Size 2 /Root 1 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (x, x))
    # a page tree whose kid is its parent
    objs = [CATALOG, b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"]
    build(os.path.join(out, "loop_tree.pdf"), objs)
    # a stream whose /Length is itself
    body = b"%PDF-1.4\n1 0 obj\n<< /Length 1 0 R >>\nstream\nxx\nendstream\nendobj\n"
    x = len(body)
    write("loop_length", body + b"xref\n0 2\n0000000000 65535 f \n0000000009 00000 n \n"
          b"trailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % x)
    # page content whose /Length is a stream whose /Length is another ...
    # 5000 deep: each read needs the next one first
    n = 5000
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            PAGE % (b"<< >>", b"4 0 R")]
    for i in range(n):
        objs.append(b"<< /Length %d 0 R >>\nstream\nx\nendstream" % (5 + i))
    objs.append(b"1")
    build(os.path.join(out, "chain.pdf"), objs)
    # arrays nested 100000 deep
    objs = [CATALOG, b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Deep " + b"[" * 100000 +
            b"]" * 100000 + b" >>", PAGE % (b"<< >>", b"[]")]
    build(os.path.join(out, "deep.pdf"), objs)


def deflate_repeat(head, unit, count, tail):
    z = zlib.compressobj(9)
    parts = [z.compress(head)]
    block = unit * max(1, (1 << 20) // len(unit))
    done = 0
    while done < count:
        n = min(len(block) // len(unit), count - done)
        parts.append(z.compress(block if n * len(unit) == len(block) else unit * n))
        done += n
    parts.append(z.compress(tail))
    parts.append(z.flush())
    return b"".join(parts)


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    bench = "--bench" in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(17)
    p = lambda name: os.path.join(out, name + ".pdf")

    make(p("multi"), [["Page %d of five" % (i + 1)] + [line_of(rng, 9) for _ in range(30)]
                      for i in range(5)])
    expect(p("multi"))
    make(p("pages300"), [["Page %d" % (i + 1)] + [line_of(rng, 11) for _ in range(40)]
                         for i in range(300)])
    expect(p("pages300"))
    if bench:
        return

    make(p("one"), [["Hello from a one-page PDF.", "A second line, with punctuation: (a) [b] {c}.",
                     "Numbers 12,345.67 and 100%."]])
    expect(p("one"))
    make(p("emptypage"), [["Before the empty page"], [], ["After the empty page"]])
    expect(p("emptypage"))
    if os.path.exists(DEJAVU):
        pdfmetrics.registerFont(TTFont("DejaVu", DEJAVU))
        make(p("unicode"), [["Grüße aus Zürich, naïve café – “quotes” €5",
                             "Ελληνικά κείμενο και кириллица тоже",
                             "Ünïcödé ÆØÅ æøå ß łódź"],
                            ["Second page: ∑ ∞ ≈ ≠ √ π"]], font="DejaVu")
    else:
        make(p("unicode"), [["Grüße aus Zürich, naïve café €5", "Ünïcödé ÆØÅ æøå ß"]])
    expect(p("unicode"))

    features(p("features"))
    expect(p("features"))
    features(p("xrefstm"), xref_stream=True, in_objstm=(1, 2, 3, 4, 5))
    expect(p("xrefstm"))
    type0(p("type0"))
    expect(p("type0"))
    # an incremental update that replaces the page's contents
    first, xoff = features(p("incremental"))
    objs = [None] * 7 + [(b"<< >>", b"BT /F1 12 Tf 72 300 Td (Updated second stream) Tj ET")]
    build(p("incremental"), objs, prev=(first, xoff), trailer_extra=b"")
    expect(p("incremental"))
    builtin(p("builtin"))
    for kind in ("lzw", "runlength"):
        old_filters(p(kind), kind)
    expect(p("lzw"))
    # pypdf 3.4 has no RunLength decoder: the same content's text
    with open(p("lzw")[:-4] + ".expected", "rb") as f:
        same = f.read()
    with open(p("runlength")[:-4] + ".expected", "wb") as f:
        f.write(same)
    actualtext(p("actualtext"))
    for kind in ("rotated", "unmapped", "type3"):
        declined(p(kind), kind)
    hostile(out)

    with open(p("one"), "rb") as f:
        whole = f.read()
    with open(p("truncated"), "wb") as f:
        f.write(whole[:600])
    with open(p("garbage"), "wb") as f:
        f.write(b"%PDF-1.7\n" + bytes(rng.getrandbits(8) for _ in range(4000)))
    c = canvas.Canvas(p("encrypted"), encrypt=pdfencrypt.StandardEncryption("secret"))
    c.drawString(50, 800, "nobody reads this without the password")
    c.showPage()
    c.save()
    # A string literal of 768 MiB: a reader that keeps the string whole
    # needs all of it; the file is under 1 MB.
    raw_pdf(p("bomb_mem"), deflate_repeat(b"BT /F1 12 Tf 50 700 Td (", b"A" * 64,
                                          (768 << 20) // 64, b") Tj ET"))
    # 200 pages that all draw one stream of 350 lines of 250 characters:
    # about 17 MB of text from about 30 KB.
    raw_pdf(p("bomb_text"), deflate_repeat(b"BT /F1 2 Tf 2.2 TL 10 785 Td ", b"(" +
                                           b"bomb text " * 25 + b") '\n", 350, b"ET"),
            pages=200)

if __name__ == "__main__":
    main()
