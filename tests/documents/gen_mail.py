#!/usr/bin/python3
"""Writes the e-mail test files of tests/documents/mail/ (run with Debian's
/usr/bin/python3: its email package builds the MIME; the .msg files are
Compound File Binary written by hand below).  The expected texts live in
tests/unit/extract_mail.c, written from the spec, not from this script."""
import os
import sys
from email.message import EmailMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.mime.base import MIMEBase
from email import encoders
from email.header import Header

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mail")
os.makedirs(OUT, exist_ok=True)


def write(name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def head(m, subject):
    m["From"] = "Ann <ann@example.com>"
    m["To"] = "Bob <bob@example.com>"
    m["Subject"] = subject


# multipart/alternative: plain and HTML, quoted-printable and base64
alt = MIMEMultipart("alternative")
head(alt, "Alternative")
alt.attach(MIMEText("Plain version.\n", "plain", "utf-8"))
html = MIMEText("<html><head><title>T</title><style>p{}</style></head><body>"
                "<h1>Caf\u00e9  menu</h1><p>Soup &amp; bread</p>"
                "<ul><li>one</li><li>two</li></ul></body></html>", "html", "utf-8")
alt.attach(html)
write("alternative.eml", alt.as_bytes())

# nested: mixed > (alternative > plain, related > html, image) + attachments
mixed = MIMEMultipart("mixed")
head(mixed, Header("Gr\u00fc\u00dfe", "utf-8").encode())
inner = MIMEMultipart("alternative")
inner.attach(MIMEText("plain body\n", "plain", "us-ascii"))
rel = MIMEMultipart("related")
h = MIMEText("<div>Nested <b>HTML</b> body</div><div>second&nbsp;block</div>", "html",
             "iso-8859-1")
rel.attach(h)
img = MIMEBase("image", "png")
img.set_payload(b"\x89PNG\r\n\x1a\nnot really")
encoders.encode_base64(img)
rel.attach(img)
inner.attach(rel)
mixed.attach(inner)
att = MIMEText("Attached line one\nAttached line two\n", "plain", "utf-8")
att.add_header("Content-Disposition", "attachment", filename="notes.txt")
mixed.attach(att)
pdf = MIMEBase("application", "pdf")
pdf.set_payload(b"%PDF-1.4 fake")
encoders.encode_base64(pdf)
pdf.add_header("Content-Disposition", "attachment", filename="doc.pdf")
mixed.attach(pdf)
# an octet-stream whose RFC 2047-encoded name says it is text
oct_ = MIMEBase("application", "octet-stream")
oct_.set_payload("Na\u00efve text file\n".encode("utf-8"))
encoders.encode_base64(oct_)
oct_["Content-Disposition"] = 'attachment; filename="=?utf-8?q?r=C3=A9sum=C3=A9.txt?="'
mixed.attach(oct_)
write("nested.eml", mixed.as_bytes())

# plain text, windows-1252, quoted-printable, paragraphs and bullets
plain = EmailMessage()
head(plain, "Plain")
plain.set_content("First paragraph line one\nand its second line is here.\n\n"
                  "\u2022 bullet item\n\nShort\nlines\n\n\u201cQuoted\u201d end\n",
                  charset="windows-1252", cte="quoted-printable")
write("plain_cp1252.eml", plain.as_bytes())
