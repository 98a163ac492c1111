#!/usr/bin/python3
"""Makes the .xls corpus for tests/unit/extract_xls.c in OUTDIR and,
beside each workbook, the text Dify's document extractor gives for it
(graphon's _extract_text_from_excel, run here on pandas over xlrd).

    gen_xls.py OUTDIR

Writes OUTDIR/NAME.xls and OUTDIR/NAME.xls.expected, and OUTDIR/MANIFEST
with one line per workbook: "NAME.xls exact" when the expected text is
byte-exact, "NAME.xls error CODE TEXT" when reading it must fail with
that code (sl_errcode_name) and a message containing TEXT.  Workbooks
come from xlwt, and from BIFF8 records written here into a compound file
written here (formula results, CONTINUE splits, hostile counts and
offsets).  The hostile ones need only the standard library; when xlwt,
xlrd or pandas is missing the rest is left out and the exit status is 3.

Debian has pandas 1.5 and xlrd 1.2 where Dify runs pandas 2 and xlrd 2:
pandas 1.5 refuses xlrd before 2.0.1, so the check is lifted (xlrd 2
only dropped xlsx), DataFrame.map is applymap, and workbooks stay clear
of what the versions read differently ("None" is missing only in pandas
2; a NaN number is kept by pandas 2 but raises in 1.5).
"""
import datetime
import io
import os
import struct
import sys
import warnings

warnings.simplefilter("ignore")
if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
manifest = []


def write_manifest():
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")


# ---- BIFF8 records and a compound file around them (standard library) ----

def rec(rtype, data=b""):
    return struct.pack("<HH", rtype, len(data)) + data


def ustr(s, lenlen=2, wide=None):
    """An XLUnicodeString (lenlen 2) or ShortXLUnicodeString (lenlen 1)."""
    if wide is None:
        wide = any(ord(c) > 255 for c in s)
    body = s.encode("utf-16-le") if wide else s.encode("latin-1")
    return struct.pack("<B" if lenlen == 1 else "<H", len(s)) + bytes([1 if wide else 0]) + body


BOF_GLOBALS = rec(0x0809, struct.pack("<HHHHII", 0x0600, 0x0005, 0x0DBB, 0x07CC, 0, 0x0600))
BOF_SHEET = rec(0x0809, struct.pack("<HHHHII", 0x0600, 0x0010, 0x0DBB, 0x07CC, 0, 0x0600))
EOF = rec(0x000A)


def xf(fmt):
    return rec(0x00E0, struct.pack("<HHHBBBBIIH", 0, fmt, 0xFFF5 if fmt == 0 else 1, 0x20, 0,
                                   0, 0, 0, 0, 0x20C0))


def fmt_rec(key, code):
    return rec(0x041E, struct.pack("<H", key) + ustr(code))


def workbook(sheets, globals_extra=b"", sst=b"", xfs=None, offsets=None, bof=BOF_GLOBALS):
    """A Workbook stream: sheets is [(name, records bytes)]; xf 0 General,
    xf 1 a date (built-in 14) unless xfs is given."""
    xfs = xfs if xfs is not None else [0] * 15 + [0, 14, 22, 20]
    head = bof + globals_extra + b"".join(xf(f) for f in xfs)
    names = [ustr(n, 1) for n, _ in sheets]
    bs_len = sum(4 + 6 + len(n) for n in names)
    pos = len(head) + bs_len + len(sst) + len(EOF)
    bounds = b""
    for i, ((name, body), n) in enumerate(zip(sheets, names)):
        off = offsets[i] if offsets else pos
        bounds += rec(0x0085, struct.pack("<IBB", off, 0, 0) + n)
        pos += len(BOF_SHEET) + len(body) + len(EOF)
    stream = head + bounds + sst + EOF
    for _, body in sheets:
        stream += BOF_SHEET + body + EOF
    return stream


def cfb(stream, name="Workbook"):
    """A version 3 compound file holding one stream (padded past the
    mini-stream cutoff so that it lives in regular sectors)."""
    pad = max(0, 4096 - len(stream))
    stream = stream + b"\0" * (pad + (-pad) % 4)  # whole empty records
    size = len(stream)
    nsec = (size + 511) // 512
    data = stream + b"\0" * (nsec * 512 - size)
    dir_sec = nsec
    nfat = 1
    while (nsec + 1 + nfat) > nfat * 128:
        nfat += 1
    fat = list(range(1, nsec)) + [0xFFFFFFFE] + [0xFFFFFFFE] + [0xFFFFFFFD] * nfat
    fat += [0xFFFFFFFF] * (nfat * 128 - len(fat))

    def entry(nm, typ, child, start, sz):
        n = nm.encode("utf-16-le") + b"\0\0"
        return (n + b"\0" * (64 - len(n)) + struct.pack("<HBB", len(n), typ, 1) +
                struct.pack("<III", 0xFFFFFFFF, 0xFFFFFFFF, child) + b"\0" * 16 +
                struct.pack("<I", 0) + b"\0" * 16 + struct.pack("<IQ", start, sz))
    empty = b"\0" * 64 + struct.pack("<HBB", 0, 0, 0) + struct.pack("<III", 0xFFFFFFFF,
                                                                    0xFFFFFFFF, 0xFFFFFFFF) \
        + b"\0" * 36 + struct.pack("<IQ", 0, 0)
    dirs = entry("Root Entry", 5, 1, 0xFFFFFFFE, 0) + entry(name, 2, 0xFFFFFFFF, 0, size) \
        + empty + empty
    difat = list(range(nsec + 1, nsec + 1 + nfat)) + [0xFFFFFFFF] * (109 - nfat)
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16 +
              struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\0" * 6 +
              struct.pack("<IIIIIIIII", 0, nfat, dir_sec, 0, 4096, 0xFFFFFFFE, 0, 0xFFFFFFFE, 0) +
              struct.pack("<109I", *difat))
    return header + data + dirs + struct.pack(f"<{len(fat)}I", *fat)


def sst_rec(strings_bytes, count):
    return rec(0x00FC, struct.pack("<II", count, count) + strings_bytes)


def labelsst(r, c, i, x=15):
    return rec(0x00FD, struct.pack("<HHHI", r, c, x, i))


def number(r, c, v, x=15):
    return rec(0x0203, struct.pack("<HHHd", r, c, x, v))


def label(r, c, s, x=15):
    return rec(0x0204, struct.pack("<HHH", r, c, x) + ustr(s))


def fail(name, data, code, text):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    manifest.append(f"{name} error {code} {text}")


def hostile():
    one = [("S", label(0, 0, "a") + number(1, 0, 1))]
    fail("sst_count_2g.xls", cfb(workbook(one, sst=sst_rec(ustr("x"), 0x80000000))), "parse",
         "says it holds 2147483648 strings, more than its")
    # a string of 100 characters with 10 in the SST and no CONTINUE
    cut = struct.pack("<HB", 100, 0) + b"x" * 10
    fail("continue_past_end.xls", cfb(workbook(one, sst=sst_rec(cut, 1))), "parse",
         "its records end in string 0")
    # ... and with a CONTINUE that still falls short
    chain = sst_rec(cut, 1) + rec(0x003C, b"\0" + b"y" * 20)
    fail("continue_short.xls", cfb(workbook(one, sst=chain)), "parse",
         "its records end in string 0")
    fail("sheet_offset_outside.xls", cfb(workbook(one, offsets=[1 << 30])), "parse",
         "past the end of the workbook stream")
    fail("sheet_offset_globals.xls", cfb(workbook(one, offsets=[0])), "parse",
         "inside the workbook globals")
    two = [("S", label(0, 0, "a")), ("T", label(0, 0, "b"))]
    wb = workbook(two)
    first = wb.index(BOF_SHEET)
    fail("sheet_cycle.xls", cfb(workbook(two, offsets=[first, first])), "parse",
         "both start at offset")
    filepass = rec(0x002F, struct.pack("<HHH", 1, 1, 1) + b"\0" * 48)
    fail("filepass.xls", cfb(workbook(one, globals_extra=filepass)), "unsupported",
         "Workbook is encrypted")
    biff5 = rec(0x0809, struct.pack("<HHHH", 0x0500, 0x0005, 0x0DBB, 0x07CC))
    fail("biff5.xls", cfb(workbook(one, bof=biff5), name="Book"), "unsupported",
         "BIFF5 (Excel 5.0 or 95)")
    fail("biff4.xls", rec(0x0409, struct.pack("<HHH", 0, 0x10, 0)) + EOF, "unsupported",
         "BIFF2 to BIFF4")
    wb = workbook(one)
    fail("record_past_end.xls", cfb(wb[:-len(EOF)] + struct.pack("<HH", 0x0204, 5000)), "parse",
         "says it has 5000 bytes")
    fail("column_300.xls", cfb(workbook([("S", label(0, 300, "a"))])), "parse",
         "column 301, past BIFF8's last column")
    fail("sst_index.xls", cfb(workbook([("S", labelsst(0, 0, 7))], sst=sst_rec(ustr("x"), 1))),
         "parse", "names shared string 7, but the workbook has 1")
    mulrk = rec(0x00BD, struct.pack("<HHHIHIH", 0, 0, 15, 2, 15, 6, 5))
    fail("mulrk_span.xls", cfb(workbook([("S", mulrk)])), "parse", "holds 2 values")
    noeof = workbook(one)
    fail("sheet_no_eof.xls", cfb(noeof[:-len(EOF)]), "parse", "ends without an EOF record")
    fail("no_workbook.xls", cfb(workbook(one), name="Other"), "parse",
         "Can't find workbook in OLE2 compound document")
    fail("lone_surrogate.xls", cfb(workbook([("S", rec(0x0204, struct.pack("<HHHHB", 0, 0, 15, 1,
                                                                          1) + b"\x00\xd8"))])),
         "parse", "not valid UTF-16")
    fail("bad_xf.xls", cfb(workbook([("S", number(0, 0, 1.5, x=200))])), "parse",
         "uses cell format 200, but the workbook has 19")


hostile()
write_manifest()

try:
    import pandas as pd
    import pandas.compat._optional as optional
    import xlrd  # noqa: F401
    import xlwt
except ImportError as e:  # the C test counts this as a skip
    print(f"gen_xls: {e}", file=sys.stderr)
    sys.exit(3)
optional.VERSIONS["xlrd"] = "1.0.0"  # xlrd 1.2 reads .xls as 2.0 does


def dify_excel(data):
    xf_ = pd.ExcelFile(io.BytesIO(data))
    text = ""
    for sheet in xf_.sheet_names:
        try:
            df = xf_.parse(sheet_name=sheet)
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


def emit(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    with open(os.path.join(out, name + ".expected"), "w", encoding="utf-8", newline="") as f:
        f.write(dify_excel(data))
    manifest.append(f"{name} exact")


def save(wb):
    b = io.BytesIO()
    wb.save(b)
    return b.getvalue()


def xlwt_cases():
    date = xlwt.easyxf(num_format_str="yyyy-mm-dd")
    dt = xlwt.easyxf(num_format_str="yyyy-mm-dd hh:mm:ss")
    tm = xlwt.easyxf(num_format_str="hh:mm:ss")
    money = xlwt.easyxf(num_format_str='"$"#,##0.00')

    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("Numbers")
    for c, h in enumerate(["int", "float", "big", "neg", "rk", "mixed", "money"]):
        ws.write(0, c, h)
    rows = [(1, 2.5, 12345678901234, -7, 100, 1, 3.25),
            (2, 0.1, 1e15, -0.5, 0.01, "x", 1e-7),
            (3, 1 / 3, 9007199254740993, -123456.789, 536870911, 2.5, 1234567.5)]
    for r, vals in enumerate(rows, 1):
        for c, v in enumerate(vals):
            ws.write(r, c, v, money if c == 6 else xlwt.Style.default_style)
    ws = wb.add_sheet("Dates")
    ws.write(0, 0, "date")
    ws.write(0, 1, "datetime")
    ws.write(0, 2, "time")
    ws.write(0, 3, "mixed")
    ws.write(1, 0, datetime.date(2024, 1, 2), date)
    ws.write(2, 0, datetime.date(1900, 1, 1), date)
    ws.write(3, 0, datetime.date(1999, 12, 31), date)
    ws.write(1, 1, datetime.datetime(2024, 2, 29, 13, 45, 30), dt)
    ws.write(2, 1, datetime.datetime(2000, 1, 1, 0, 0, 1), dt)
    ws.write(1, 2, datetime.time(12, 30), tm)
    ws.write(2, 2, datetime.time(23, 59, 59), tm)
    ws.write(1, 3, datetime.date(2020, 5, 6), date)
    ws.write(2, 3, "text")
    ws.write(3, 3, 44000, date)
    ws.write(3, 2, 0.5, tm)
    ws = wb.add_sheet("Text")
    ws.write(0, 0, "name")
    ws.write(0, 1, "name")
    ws.write(0, 3, "name")
    ws.write(0, 4, 2024)
    ws.write(0, 5, 2.5)
    ws.write(1, 0, "héllo wörld ✓ 日本語")
    ws.write(1, 1, "line1\nline2\r\nline3")
    ws.write(2, 0, "NA")
    ws.write(2, 3, "a | pipe")
    ws.write(3, 1, True)
    ws.write(4, 1, False)
    ws.write(5, 4, "")
    ws.write(6, 0, "€ sign and emoji 😀")
    ws.row(7).set_cell_error(2, "#DIV/0!")
    ws.row(8).set_cell_error(5, 0x2A)
    ws.write(8, 0, "after errors")
    wb.add_sheet("Empty")
    ws = wb.add_sheet("Blanks")
    ws.write(2, 2, "c3")
    ws.write(4, 0, 1)
    ws.write(4, 4, 5)
    ws.write_merge(6, 6, 1, 2, "merged")
    ws.write(7, 3, None, date)  # a BLANK record
    ws = wb.add_sheet("Formulas")
    ws.write(0, 0, "f")
    ws.write(1, 0, xlwt.Formula("1+2"))
    ws.write(2, 0, 5)
    ws = wb.add_sheet("Hidden")
    ws.write(0, 0, "h")
    ws.write(1, 0, 1)
    ws.visibility = 1
    ws = wb.add_sheet("Bools")
    ws.write(0, 0, "b")
    ws.write(0, 1, "n")
    ws.write(1, 0, True)
    ws.write(1, 1, 1)
    ws.write(2, 0, False)
    ws.write(2, 1, 2)
    emit("mixed.xls", save(wb))

    # shared strings past 8224 bytes: CONTINUE records, strings split in them
    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("Long")
    ws.write(0, 0, "k")
    ws.write(0, 1, "v")
    for r in range(1, 400):
        ws.write(r, 0, f"key {r} " + "ä" * (r % 50))
        ws.write(r, 1, ("long-" + str(r) + "-") * (r % 7 + 1) + ("Ω" * 30 if r % 3 == 0 else ""))
    ws.write(400, 0, "z" * 9000)
    ws.write(401, 0, "ж" * 5000)
    emit("long_sst.xls", save(wb))

    wb = xlwt.Workbook()
    wb.dates_1904 = True
    ws = wb.add_sheet("1904")
    ws.write(0, 0, "d")
    ws.write(1, 0, datetime.date(2024, 1, 2), date)
    ws.write(2, 0, datetime.datetime(1904, 1, 1, 6, 0), dt)
    ws.write(3, 0, datetime.date(1904, 1, 2), date)
    emit("date1904.xls", save(wb))

    wb = xlwt.Workbook()
    ws = wb.add_sheet("only ints")
    ws.write(0, 0, "a")
    ws.write(0, 1, "b")
    ws.write(1, 0, 1)
    ws.write(1, 1, 2)
    ws.write(3, 0, 3)
    ws.write(3, 1, 4.5)
    ws = wb.add_sheet("int and gap")
    ws.write(0, 0, "a")
    ws.write(1, 0, 1)
    ws.write(3, 0, 2)
    ws = wb.add_sheet("bool gap")
    ws.write(0, 0, "b")
    ws.write(0, 1, "s")
    ws.write(1, 0, True)
    ws.write(2, 0, False)
    ws.write(3, 1, "x")
    ws.write(4, 0, True)
    ws.write(4, 1, "y")
    emit("upcast.xls", save(wb))


def raw_cases():
    """Records xlwt does not write: cached formula results, a string split
    across a CONTINUE with the flags changing, rich and phonetic strings,
    RK forms, a chart sheet, LABEL, RSTRING, custom date formats."""
    def formula(r, c, result, x=15):
        return rec(0x0006, struct.pack("<HHH", r, c, x) + result + struct.pack("<HI", 0, 0) +
                   struct.pack("<H", 3) + b"\x1e\x01\x00")

    def special(kind, val=0):
        return struct.pack("<BBBBHH", kind, 0, val, 0, 0, 0xFFFF)

    def rk(r, c, v, x=15):
        return rec(0x027E, struct.pack("<HHHI", r, c, x, v))

    def string(s):
        return rec(0x0207, ustr(s))
    cells = (label(0, 0, "num") + label(0, 1, "str") + label(0, 2, "bool") + label(0, 3, "err") +
             label(0, 4, "empty") + label(0, 5, "rk") + label(0, 6, "date") +
             formula(1, 0, struct.pack("<d", 42.0)) +
             formula(1, 1, special(0)) + rec(0x04BC, b"\0" * 10) + string("from formula") +
             formula(1, 2, special(1, 1)) + formula(1, 3, special(2, 7)) +
             formula(1, 4, special(3)) +
             rk(1, 5, (1234 << 2) | 2) + rk(2, 5, (-5 << 2 & 0xFFFFFFFF) | 3) +
             rk(3, 5, struct.unpack("<I", struct.pack("<d", 2.5)[4:])[0]) +
             rk(4, 5, struct.unpack("<I", struct.pack("<d", 314.0)[4:])[0] | 1) +
             formula(1, 6, struct.pack("<d", 45000.25), x=17) +
             number(2, 6, 45000.75, x=16) + number(3, 6, 0.75, x=18) +
             number(2, 0, 1.5) + formula(3, 1, special(0)) + string("") +
             formula(2, 1, special(0)) + string("wide ✓ text") +
             rec(0x00D6, struct.pack("<HHH", 4, 1, 15) + ustr("rich label") +
                 struct.pack("<HHH", 1, 0, 0)) +
             rec(0x0205, struct.pack("<HHHBB", 2, 2, 15, 0, 0)) +
             rec(0x0205, struct.pack("<HHHBB", 3, 2, 15, 1, 0)) +
             rec(0x0205, struct.pack("<HHHBB", 4, 2, 15, 0, 0)) +
             rec(0x0205, struct.pack("<HHHBB", 3, 3, 15, 0x2A, 1)) +
             rec(0x00BE, struct.pack("<HHHHHH", 5, 0, 15, 15, 15, 2)) +
             rec(0x0201, struct.pack("<HHH", 6, 0, 15)))
    # a string split over a CONTINUE, narrow then wide; a rich string whose
    # runs and a phonetic string whose data fall in the next CONTINUE
    s0 = struct.pack("<HB", 10, 0) + b"abcde"
    c1 = b"\x01" + "fghi✓".encode("utf-16-le") + struct.pack("<HBH", 4, 0x08, 2) + b"rich"
    c2 = b"\0" * 8 + struct.pack("<HBI", 5, 0x04, 6) + b"phone" + b"\0" * 6 + \
        struct.pack("<HB", 2, 0) + b"ok"
    sst = rec(0x00FC, struct.pack("<II", 4, 4) + s0) + rec(0x003C, c1) + rec(0x003C, c2)
    shared = (label(0, 0, "split") + labelsst(1, 0, 0) + labelsst(2, 0, 1) + labelsst(3, 0, 2) +
              labelsst(4, 0, 3))
    chart_bof = rec(0x0809, struct.pack("<HHHHII", 0x0600, 0x0020, 0x0DBB, 0x07CC, 0, 0x0600))
    with_chart = label(0, 0, "c") + number(1, 0, 7) + chart_bof + number(5, 5, 99) + EOF + \
        number(2, 0, 8)
    fmts = fmt_rec(164, 'yyyy\\-mm\\-dd "at" hh:mm') + fmt_rec(165, '0.00 "days"') + \
        fmt_rec(166, "[Red]General")
    xfs = [0] * 15 + [0, 14, 164, 20, 165, 166]
    fmt_cells = (label(0, 0, "custom") + label(0, 1, "days") + label(0, 2, "red") +
                 number(1, 0, 45001.5, x=17) + number(1, 1, 3.0, x=19) + number(1, 2, 4.0, x=20) +
                 # dates past Python's datetime stay floats (fuzz_extract_xls found the first)
                 number(2, 0, 387637489.0, x=17) + number(3, 0, -1e7, x=16) +
                 number(4, 0, 2958465.9999, x=16) + number(5, 0, -0.25, x=16))
    stream = workbook([("Formulas", cells), ("Shared", shared), ("Chart", with_chart),
                       ("Formats", fmt_cells)], globals_extra=fmts, sst=sst, xfs=xfs)
    # a chart sheet in BOUNDSHEET: not among pandas' sheet names
    i = stream.index(rec(0x0085, b"")[:2])
    stream = stream[:i] + rec(0x0085, struct.pack("<IBB", 0, 0, 2) + ustr("ChartSheet", 1)) + \
        stream[i:]
    # the inserted record moved every sheet: rebuild the offsets
    pos = 0
    out_ = b""
    sheets_at = []
    while pos < len(stream):
        t, n = struct.unpack("<HH", stream[pos:pos + 4])
        if t == 0x0809 and struct.unpack("<H", stream[pos + 6:pos + 8])[0] == 0x0010:
            sheets_at.append(pos)
        pos += 4 + n
    k = 0
    pos = 0
    while pos < len(stream):
        t, n = struct.unpack("<HH", stream[pos:pos + 4])
        d = stream[pos + 4:pos + 4 + n]
        if t == 0x0085 and d[5] == 0:
            d = struct.pack("<I", sheets_at[k]) + d[4:]
            k += 1
        out_ += struct.pack("<HH", t, n) + d
        pos += 4 + n
    emit("records.xls", cfb(out_))


xlwt_cases()
raw_cases()
write_manifest()
