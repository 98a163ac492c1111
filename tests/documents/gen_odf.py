#!/usr/bin/python3
"""Makes the ODT and EPUB corpus for tests/unit/extract_odf.c in OUTDIR.

    gen_odf.py OUTDIR

Writes OUTDIR/NAME.{odt,epub}, beside each OUTDIR/NAME.EXT.expected, and
OUTDIR/MANIFEST with one line per document: "NAME.EXT exact" when the text
must be byte-exact, "NAME.EXT error CODE TEXT" when reading must fail with
that code (sl_errcode_name) and a message containing TEXT, "NAME.EXT
small error CODE TEXT" for the same under the test's small limits (1 MiB a
member, depth 64).  Standard library only: the XML is written by hand and
the expected text too, from the spec (odfdo's get_formatted_text for ODT,
graphon's _extract_epub_text and partition_html's elements for EPUB;
docextract_research §3.10, §3.11), never computed by a reader.
"""
import os
import sys
import zipfile

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
manifest = []


def package(name, mimetype, members, compress=zipfile.ZIP_DEFLATED):
    """A zip with the mimetype stored first, as ODF and OCF require."""
    path = os.path.join(out, name)
    with zipfile.ZipFile(path, "w") as z:
        if mimetype is not None:
            z.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        for member, data in members:
            z.writestr(member, data, compress_type=compress)
    return path


def expect(name, text):
    with open(os.path.join(out, name + ".expected"), "w", encoding="utf-8") as f:
        f.write(text)
    manifest.append(name + " exact")


def error(name, code, text, small=False):
    manifest.append(name + (" small" if small else "") + " error " + code + " " + text)


# ------------------------------------------------------------------ ODT

ODT_MIME = "application/vnd.oasis.opendocument.text"
ODT_MANIFEST = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>
"""
NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:dc="http://purl.org/dc/elements/1.1/"')


def content(body, prolog=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + prolog +
            '<office:document-content ' + NS + ' office:version="1.2">'
            '<office:automatic-styles/><office:body><office:text>'
            '<text:sequence-decls><text:sequence-decl text:display-outline-level="0" '
            'text:name="Table"/></text:sequence-decls>' + body +
            '</office:text></office:body></office:document-content>')


def odt(name, body, prolog="", **kw):
    return package(name, ODT_MIME, [("content.xml", content(body, prolog)),
                                    ("META-INF/manifest.xml", ODT_MANIFEST)], **kw)


odt("basic.odt",
    '<text:h text:outline-level="1">Title  here</text:h>'
    '<text:p>Two<text:s/>spaces, five<text:s text:c="4"/>spaces.</text:p>'
    '<text:p>tab<text:tab/>stop and a<text:line-break/>break</text:p>'
    '<text:p><text:span text:style-name="T1">span</text:span> and '
    '<text:a xlink:href="http://x" xmlns:xlink="http://www.w3.org/1999/xlink">link</text:a>'
    ' &amp; &lt;entities&gt; caf\u00e9</text:p>'
    '<text:p/>'
    '<text:soft-page-break/>'
    '<text:p>  last  </text:p>')
# text:h and text:p render alike ("text\n\n"), text:s is c spaces, the
# empty paragraph adds "\n\n", the soft page break nothing; the result is
# stripped at the ends only.
expect("basic.odt",
       "Title  here\n\nTwo spaces, five    spaces.\n\ntab\tstop and a\nbreak\n\n"
       "span and link & <entities> caf\u00e9\n\n\n\n  last")

odt("lists.odt",
    '<text:p>Before</text:p>'
    '<text:list><text:list-item><text:p>one</text:p></text:list-item>'
    '<text:list-item><text:p>two</text:p>'
    '<text:list><text:list-item><text:p>two.a</text:p></text:list-item>'
    '<text:list-item><text:p>two.b</text:p></text:list-item></text:list>'
    '</text:list-item>'
    '<text:list-item><text:p>three</text:p></text:list-item></text:list>'
    '<text:p>After</text:p>')
# List: "- " + item text stripped of "\n" with every "\n" indented by two
# spaces, then "\n"; item two is "two\n\n" + "- two.a\n- two.b\n".
expect("lists.odt",
       "Before\n\n- one\n- two\n  \n  - two.a\n  - two.b\n- three\nAfter")

odt("notes.odt",
    '<text:p>Claim<text:note text:id="ftn1" text:note-class="footnote">'
    '<text:note-citation>1</text:note-citation><text:note-body>'
    '<text:p>First source.</text:p></text:note-body></text:note> and more'
    '<text:note text:id="ftn2" text:note-class="footnote">'
    '<text:note-citation>2</text:note-citation><text:note-body>'
    '<text:p>Second, <text:span>spanned</text:span>.</text:p><text:p>Its second line.</text:p>'
    '</text:note-body></text:note>.</text:p>'
    '<text:p>Plain<text:note text:id="edn1" text:note-class="endnote">'
    '<text:note-citation>i</text:note-citation><text:note-body>'
    '<text:p>An endnote.</text:p></text:note-body></text:note> text.</text:p>'
    '<text:p>End<text:note text:note-class="footnote"><text:note-citation/><text:note-body>'
    '<text:p>uncited</text:p></text:note-body></text:note>.</text:p>')
# A note with no citation is numbered by the notes before it in the same
# body child (odfdo: len(container); the footnotes start afresh after each).
expect("notes.odt",
       "Claim[1] and more[2].\n\n----\n[1] First source.\n[2] Second, spanned.\nIts second line.\n\n"
       "Plain(i) text.\n\nEnd[0].\n\n----\n[0] uncited\n\n\n========\n(i) An endnote.")

odt("table.odt",
    '<text:p>Table:</text:p>'
    '<table:table table:name="T"><table:table-column table:number-columns-repeated="3"/>'
    '<table:table-header-rows><table:table-row>'
    '<table:table-cell office:value-type="string"><text:p>Name</text:p></table:table-cell>'
    '<table:table-cell office:value-type="string"><text:p>Qty</text:p></table:table-cell>'
    '<table:table-cell/></table:table-row></table:table-header-rows>'
    '<table:table-row>'
    '<table:table-cell office:value-type="string"><text:p>apple</text:p></table:table-cell>'
    '<table:table-cell office:value-type="float" office:value="3"><text:p>3.00</text:p></table:table-cell>'
    '<table:table-cell table:number-columns-repeated="2"/>'
    '</table:table-row></table:table>'
    '<text:p>after</text:p>')
# Each cell: its value (office:value for a float) or its paragraphs'
# formatted text ("Name\n\n"), then "\n"; "\n" after each row.
expect("table.odt",
       "Table:\n\nName\n\n\nQty\n\n\n\n\napple\n\n\n3\n\n\n\nafter")

# Hostile content.xml.
lol = ('<!DOCTYPE office:document-content [\n<!ENTITY lol "lol">\n' +
       "".join('<!ENTITY lol%d "%s">\n' % (i, ("&lol%d;" % (i - 1) if i > 1 else "&lol;") * 10)
               for i in range(1, 10)) + ']>\n')
odt("laughs.odt", '<text:p>before &lol9; after</text:p>', prolog=lol)
error("laughs.odt", "parse", "entity reference loop")  # libxml2's own guard
xxe = '<!DOCTYPE office:document-content [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>\n'
odt("xxe.odt", '<text:p>x&xxe;y</text:p>', prolog=xxe)
expect("xxe.odt", "xy")
odt("deep.odt", '<text:p>' + '<text:span>' * 5000 + 'deep' + '</text:span>' * 5000 + '</text:p>')
error("deep.odt", "limit", "nests deeper than")
odt("bomb.odt", '<text:p>' + ' ' * (40 << 20) + '</text:p>')
error("bomb.odt", "limit", "", small=True)
odt("spaces.odt", '<text:p>a<text:s text:c="999999999999"/>b</text:p>')
error("spaces.odt", "limit", "text:s")
odt("repeat.odt", '<table:table><table:table-row table:number-rows-repeated="1048576">'
    '<table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table>')
error("repeat.odt", "limit", "text is over", small=True)
package("nocontent.odt", ODT_MIME, [("META-INF/manifest.xml", ODT_MANIFEST)])
error("nocontent.odt", "parse", "no content.xml")
package("spreadsheet.odt", ODT_MIME, [("content.xml", '<office:document-content ' + NS +
                                       '><office:body><office:spreadsheet/></office:body>'
                                       '</office:document-content>')])
error("spreadsheet.odt", "parse", "its body is spreadsheet")
odt("badnote.odt", '<text:p>x<text:note><text:note-citation>1</text:note-citation></text:note></text:p>')
error("badnote.odt", "parse", "note-class")
odt("badxml.odt", '<text:p>unclosed')
error("badxml.odt", "parse", "content.xml: bad XML")
with open(os.path.join(out, "basic.odt"), "rb") as f:
    whole = f.read()
with open(os.path.join(out, "truncated.odt"), "wb") as f:
    f.write(whole[: len(whole) // 2])
error("truncated.odt", "parse", "")
with open(os.path.join(out, "notzip.odt"), "wb") as f:
    f.write(b"This is not a zip at all.\n" * 10)
error("notzip.odt", "parse", "")

# ----------------------------------------------------------------- EPUB

EPUB_MIME = "application/epub+zip"


def container(full_path):
    rootfile = ('<rootfile full-path="%s" media-type="application/oebps-package+xml"/>' % full_path
                if full_path is not None else "")
    return ('<?xml version="1.0"?>\n<container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles>' + rootfile + '</rootfiles></container>')


def opf(items, spine):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title></metadata>'
            '<manifest>' +
            "".join('<item id="%s" href="%s" media-type="application/xhtml+xml"/>' % i for i in items) +
            '</manifest><spine>' + "".join('<itemref idref="%s"/>' % s for s in spine) +
            '</spine></package>')


def xhtml(body, title="Chapter"):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>' + title + '</title>'
            '<style>p { color: red }</style></head><body>' + body + '</body></html>')


ch1 = xhtml('<h1>Chapter  One</h1>\n<p>First   paragraph,\n  wrapped.</p>'
            '<div>Loose text <span>in a div</span><p>inner para</p>tail text</div>'
            '<script>var hidden = 1;</script>'
            '<p>Caf&#233; &amp; cr&#xE8;me &#8212; done</p>'
            '<p>line one<br/>line two</p>')
ch2 = xhtml('<h2>Two</h2><ul><li>alpha</li><li>beta<ul><li>beta.1</li></ul></li></ul>'
            '<table><tr><th>Name</th><th>Qty</th></tr><tr><td>apple</td><td> 3 </td></tr></table>'
            '<blockquote>quoted <em>words</em></blockquote><pre>keep   this</pre><p>   </p>')
ch3 = xhtml('<p>Appendix</p>')
package("basic.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("OEBPS/content.opf")),
    ("OEBPS/content.opf", opf([("c1", "text/chapter%20one.xhtml"), ("c2", "../OEBPS/text/./ch2.xhtml"),
                               ("c3", "text/ch3.xhtml"), ("css", "style.css")],
                              ["c2", "nosuchid", "c1", "c3"])),
    ("OEBPS/text/chapter one.xhtml", ch1),
    ("OEBPS/text/ch2.xhtml", ch2),
    ("OEBPS/text/ch3.xhtml", ch3),
])
# Spine order (c2, c1, c3), the unknown idref skipped; one element per
# block, whitespace collapsed, head/script/style dropped, <br> a break, a
# table one element of its cells joined by spaces.
expect("basic.epub",
       "Two\nalpha\nbeta\nbeta.1\nName Qty apple 3\nquoted words\nkeep   this\n"
       "Chapter One\nFirst paragraph, wrapped.\nLoose text in a div\ninner para\ntail text\n"
       "Caf\u00e9 & cr\u00e8me \u2014 done\nline one\nline two\n"
       "Appendix")

# The package path percent-encoded and with a leading "/", the OPF at the
# root (no folder to join).
package("rootopf.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("/my%20book.opf")),
    ("my book.opf", opf([("a", "a.html")], ["a"])),
    ("a.html", "<html><body><p>Root level</p><p>second</p></body></html>"),
])
expect("rootopf.epub", "Root level\nsecond")

package("nocontainer.epub", EPUB_MIME, [("OEBPS/content.opf", opf([], []))])
error("nocontainer.epub", "parse", "There is no item named 'META-INF/container.xml' in the archive")
package("norootfile.epub", EPUB_MIME, [("META-INF/container.xml", container(None))])
error("norootfile.epub", "parse", "EPUB package path is missing")
package("noopf.epub", EPUB_MIME, [("META-INF/container.xml", container("OEBPS/missing.opf"))])
error("noopf.epub", "parse", "There is no item named 'OEBPS/missing.opf' in the archive")
package("nochapter.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("a", "gone.xhtml")], ["a"]))])
error("nochapter.epub", "parse", "There is no item named 'gone.xhtml' in the archive")
package("empty.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("a", "a.xhtml")], [])),
    ("a.xhtml", xhtml("<p>not in the spine</p>"))])
expect("empty.epub", "")

# A spine of 100000 items, each the same one-line chapter.
package("longspine.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("a", "a.xhtml")], ["a"] * 100000)),
    ("a.xhtml", "<p>x</p>")])
expect("longspine.epub", "\n".join(["x"] * 100000))

# 5000 chapters, the spine in reverse: read in one pass over the zip, put
# in spine order.
package("manychapters.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("i%d" % i, "c%d.html" % i) for i in range(5000)],
                        ["i%d" % i for i in reversed(range(5000))]))] +
    [("c%d.html" % i, "<p>%d</p>" % i) for i in range(5000)])
expect("manychapters.epub", "\n".join(str(i) for i in reversed(range(5000))))

# A chapter named twice, an empty one between: its elements again, one
# "\n" between elements whatever chapter they come from.
package("repeat.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("a", "a.xhtml"), ("e", "e.xhtml"), ("b", "b.html")],
                        ["e", "a", "e", "b", "a", "e"])),
    ("a.xhtml", "<h1>a1</h1><p>a2</p>"), ("e.xhtml", "<p> </p>"),
    ("b.html", "<html><body>b <b>bold</b> text</body></html>")])
expect("repeat.epub", "a1\na2\nb bold text\na1\na2")

# A chapter with no encoding of its own is UTF-8 (EPUB's), not HTML's
# Latin-1 default; one that declares Latin-1 is read as Latin-1.
package("encoding.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("content.opf")),
    ("content.opf", opf([("u", "u.html"), ("l", "l.html")], ["u", "l"])),
    ("u.html", "<p>caf\u00e9 \u2014 na\u00efve</p>".encode("utf-8")),
    ("l.html", '<html><head><meta charset="iso-8859-1"></head><body><p>cr\u00e8me</p></body></html>'
     .encode("latin-1"))])
expect("encoding.epub", "caf\u00e9 \u2014 na\u00efve\ncr\u00e8me")

package("xxe.epub", EPUB_MIME, [
    ("META-INF/container.xml",
     '<?xml version="1.0"?>\n<!DOCTYPE c [<!ENTITY xxe SYSTEM "file:///etc/hostname">]>\n'
     '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>&xxe;'
     '<rootfile full-path="c.opf"/></rootfiles></container>'),
    ("c.opf", opf([("a", "a.xhtml")], ["a"])), ("a.xhtml", "<p>ok</p>")])
# the external entity is never read (nor needed)
expect("xxe.epub", "ok")
package("laughs.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("c.opf")),
    ("c.opf", lol.replace("office:document-content", "package") +
     opf([("a", "a.xhtml")], ["a"]).split("\n", 1)[1].replace("<dc:title>T", "<dc:title>&lol9;")),
    ("a.xhtml", "<p>fine</p>")])
error("laughs.epub", "parse", "entity reference loop")
package("deep.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("c.opf")),
    ("c.opf", opf([("a", "a.xhtml")], ["a"])),
    ("a.xhtml", "<html><body>" + "<div>" * 20000 + "deep" + "</div>" * 20000 + "</body></html>")])
error("deep.epub", "limit", "nests deeper than")
package("bomb.epub", EPUB_MIME, [
    ("META-INF/container.xml", container("c.opf")),
    ("c.opf", opf([("a", "a.xhtml")], ["a"])),
    ("a.xhtml", "<p>" + " " * (40 << 20) + "</p>")])
error("bomb.epub", "limit", "", small=True)
with open(os.path.join(out, "basic.epub"), "rb") as f:
    whole = f.read()
with open(os.path.join(out, "truncated.epub"), "wb") as f:
    f.write(whole[: len(whole) * 2 // 3])
error("truncated.epub", "parse", "")

with open(os.path.join(out, "MANIFEST"), "w") as f:
    f.write("\n".join(manifest) + "\n")
