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
