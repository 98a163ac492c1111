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


# ---- Outlook .msg: a Compound File Binary (version 3, 512-byte sectors)
# written from [MS-CFB]: FAT, mini FAT and mini stream, a directory whose
# siblings hang as a right-leaning chain (a valid, if unbalanced, tree).

END, FREE, FATSECT = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD


def cfb(tree):
    """tree: {name: bytes (a stream) or dict (a storage)} -> file bytes."""
    ents = []  # [name, type, data, children]

    def add(name, node, typ):
        i = len(ents)
        ents.append([name, typ, node if typ == 2 else b"", []])
        if typ != 2:
            for k in sorted(node, key=lambda n: (len(n), n.upper())):
                v = node[k]
                ents[i][3].append(add(k, v, 1 if isinstance(v, dict) else 2))
        return i

    add("Root Entry", tree, 5)
    mini, big = bytearray(), []
    start = {}
    for i, (name, typ, data, _) in enumerate(ents):
        if typ != 2:
            continue
        if len(data) < 4096:
            start[i] = ("mini", len(mini) // 64, len(data))
            mini += data + b"\0" * (-len(data) % 64)
        else:
            start[i] = ("big", len(big), len(data))
            big.append(data)
    nmini = len(mini) // 64
    minifat = [(k + 1 if k + 1 < nmini and not any(
        v[0] == "mini" and v[1] == k + 1 for v in start.values()) else END) for k in range(nmini)]
    nminifat_s = -(-len(minifat) * 4 // 512)
    ndir_s = -(-len(ents) // 4)
    nms_s = -(-len(mini) // 512)
    big_s = [-(-len(b) // 512) for b in big]
    rest = nminifat_s + ndir_s + nms_s + sum(big_s)
    nfat = 1
    while nfat * 128 < nfat + rest:
        nfat += 1
    fat = [FATSECT] * nfat
    secs = bytearray()

    def chain(count, data):
        first = len(fat)
        for k in range(count):
            fat.append(len(fat) + 1 if k + 1 < count else END)
        secs.extend(data + b"\0" * (count * 512 - len(data)))
        return first if count else END

    mf_first = chain(nminifat_s, b"".join(struct.pack("<I", v) for v in minifat))
    dir_at = len(fat)
    dir_bytes = bytearray()  # filled below; reserve the sectors now
    chain(ndir_s, b"")
    ms_first = chain(nms_s, bytes(mini))
    big_first = [chain(n, b) for n, b in zip(big_s, big)]
    fat += [FREE] * (nfat * 128 - len(fat))
    for i, (name, typ, data, kids) in enumerate(ents):
        nm = name.encode("utf-16-le") + b"\0\0"
        child = kids[0] if kids else FREE
        e = nm + b"\0" * (64 - len(nm)) + struct.pack("<HBB", len(nm), typ, 1)
        e += struct.pack("<III", FREE, FREE, child) + b"\0" * 36
        if typ == 5:
            st, size = (ms_first if mini else END), len(mini)
        elif typ == 2:
            kind, at, size = start[i]
            st = at if kind == "mini" else big_first[at]
        else:
            st, size = 0, 0
        e += struct.pack("<IQ", st, size)
        dir_bytes += e
    # siblings: each child's right sibling is the next one
    for name, typ, data, kids in ents:
        for a, b in zip(kids, kids[1:]):
            off = a * 128 + 0x48
            dir_bytes[off:off + 4] = struct.pack("<I", b)
    dir_bytes += b"\0" * (ndir_s * 512 - len(dir_bytes))
    for k in range(ndir_s):  # unused entries: type 0, no siblings
        pass
    for j in range(len(ents), ndir_s * 4):
        dir_bytes[j * 128 + 0x44:j * 128 + 0x50] = struct.pack("<III", FREE, FREE, FREE)
    off = (dir_at - nfat) * 512
    secs[off:off + len(dir_bytes)] = dir_bytes
    hdr = bytes([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) + b"\0" * 16
    hdr += struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\0" * 6
    hdr += struct.pack("<IIIIIIIII", 0, nfat, dir_at, 0, 4096, mf_first if nminifat_s else END,
                       nminifat_s, END, 0)
    hdr += b"".join(struct.pack("<I", k if k < nfat else FREE) for k in range(109))
    fatb = b"".join(struct.pack("<I", v) for v in fat)
    return hdr + fatb + bytes(secs)


def u16(s):
    return s.encode("utf-16-le")


def props(entries, header):
    """A __properties_version1.0 stream: header bytes then 16-byte entries."""
    out = b"\0" * header
    for tag, value in entries:
        out += struct.pack("<III", tag, 6, value) + b"\0" * 4
    return out


def attachment(name, mime, data):
    a = {"__properties_version1.0": props([(0x37050003, 1)], 8),
         "__substg1.0_37010102": data}
    if name:
        a["__substg1.0_3707001F"] = u16(name)
    if mime:
        a["__substg1.0_370E001F"] = u16(mime)
    return a


import struct  # noqa: E402

# HTML body in windows-1252 (PR_INTERNET_CPID 1252), big enough to leave
# the mini stream; a plain body too (not used); a text attachment and an
# image (skipped).
long_html = ("<html><body><p>\u201cHello\u201d from Outlook</p>" +
             "".join("<div>row %d</div>" % i for i in range(400)) + "</body></html>")
html_msg = {
    "__properties_version1.0": props([(0x3FDE0003, 1252)], 32),
    "__substg1.0_0037001F": u16("Subject here"),
    "__substg1.0_1000001F": u16("plain body, not used\r\n"),
    "__substg1.0_10130102": long_html.encode("cp1252"),
    "__attach_version1.0_#00000000": attachment("notes.txt", "text/plain",
                                                b"attached text\r\nsecond line\r\n"),
    "__attach_version1.0_#00000001": attachment("pic.png", "image/png", b"\x89PNG" * 1500),
    "__attach_version1.0_#00000002": attachment("", "text/html", b"<p>unnamed html</p>"),
}
write("html.msg", cfb(html_msg))

plain_msg = {
    "__properties_version1.0": props([], 32),
    "__substg1.0_1000001F": u16("Dear Bob,\r\n\r\nThe plain body of this message has words.\r\n"
                                "\r\nRegards,\r\nAnn\r\n"),
}
write("plain.msg", cfb(plain_msg))

string8_msg = {
    "__properties_version1.0": props([], 32),
    "__substg1.0_1000001E": "caf\u00e9 8-bit body\r\n".encode("cp1252"),
}
write("string8.msg", cfb(string8_msg))
