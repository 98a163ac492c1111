#!/usr/bin/env python3
"""Builds the zip archives tests/unit/bundle.c reads: a Dify-style app
bundle and hostile variants of it, one per refusal sluice must make.

    tests/tools/mkzip.py KIND OUT.zip        e.g. mkzip.py symlink /tmp/x.zip
    tests/tools/mkzip.py --list              the kinds
    tests/tools/mkzip.py --check-dify B.zip  reads B.zip the way Dify's import
                                             does; prints "ok" or fails

Every kind starts from the same small bundle (app "Doc Helper", one skill)
laid out the way Dify's export writes it with `zip -r`: the DSL, the
manifest (pydantic's indent=2 JSON) and the folder with an entry for each
directory.  Names with a NUL byte, and sizes that lie, cannot be made with
zipfile, so those kinds patch the bytes afterwards.
"""
import io
import json
import sys
import warnings
import zipfile

# the "duplicate" kind writes a name twice on purpose
warnings.filterwarnings("ignore", "Duplicate name")

APP = "Doc Helper"
DSL = b"""app:
  mode: workflow
  name: Doc Helper
kind: app
version: 0.6.0
workflow:
  graph:
    edges: []
    nodes:
    - data:
        type: start
        title: Start
        variables: []
      id: '1'
    - data:
        type: end
        title: End
        outputs: []
      id: '2'
"""
SKILL = b"""---
name: pdf
description: Reads PDF files and pulls out their text. Use it for any PDF.
---
# PDF

Run `scripts/extract.sh FILE`.
"""
SCRIPT = b"#!/bin/sh\npdftotext \"$1\" -\n"
CSV = b"name,value\nalpha,1\nbeta,2\n"

# The asset tree Dify keeps (adjacency list), as AppAssetFileTree dumps it.
NODES = [
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d01", "folder", "skills", None),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d02", "folder", "pdf", "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d01"),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d03", "file", "SKILL.md", "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d02"),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d04", "folder", "scripts", "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d02"),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d05", "file", "extract.sh", "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d04"),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d06", "folder", "data", None),
    ("6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d07", "file", "table.csv", "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d06"),
]
CONTENT = {"SKILL.md": SKILL, "extract.sh": SCRIPT, "table.csv": CSV}


def tree_path(node_id):
    by_id = {n[0]: n for n in NODES}
    parts = []
    while node_id:
        n = by_id[node_id]
        parts.append(n[2])
        node_id = n[3]
    return "/".join(reversed(parts))


def manifest():
    import hashlib
    nodes = []
    order = {}
    for nid, kind, name, parent in NODES:
        data = CONTENT.get(name, b"")
        nodes.append({
            "id": nid, "node_type": kind, "name": name, "parent_id": parent,
            "order": order.setdefault(parent, 0),
            "extension": name.rsplit(".", 1)[-1] if kind == "file" and "." in name else "",
            "size": len(data) if kind == "file" else 0,
            "checksum": hashlib.sha256(data).hexdigest() if kind == "file" else "",
        })
        order[parent] += 1
    files = [{"node_id": n[0], "path": tree_path(n[0])} for n in NODES if n[1] == "file"]
    return {
        "schema_version": "1.0",
        "generated_at": "2025-06-01T08:30:15.123456Z",
        "dsl_filename": APP + ".yml",
        "app_assets": {"tree": {"nodes": nodes}},
        "files": files,
        "integrity": {"file_count": len(files)},
    }


def entries():
    """(name, bytes or None for a folder, unix mode) in zip -r order."""
    out = [(APP + ".yml", DSL, 0o644), ("manifest.json", None, 0), (APP + "/", None, 0o755)]
    for nid, kind, name, parent in NODES:
        path = APP + "/" + tree_path(nid)
        if kind == "folder":
            out.append((path + "/", None, 0o755))
        else:
            out.append((path, CONTENT[name], 0o755 if name.endswith(".sh") else 0o644))
    return out


def write(ents, man, extra=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in list(ents) + list(extra):
            if name == "manifest.json" and data is None:
                data = man if isinstance(man, bytes) else json.dumps(man, indent=2).encode()
                mode = 0o644
            info = zipfile.ZipInfo(name, date_time=(2025, 6, 1, 8, 30, 14))
            info.create_system = 3
            if data is None:
                info.external_attr = (0o040000 | mode) << 16 | 0x10
                zf.writestr(info, b"")
            else:
                info.external_attr = (mode if mode > 0o7777 else 0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
    return buf.getvalue()


# CRC-32 of N MiB of zero bytes, worked out once (zlib.crc32 over 1 GiB
# takes a second the tests should not spend).
ZERO_CRC = {1024: 0x5B64C2B0, 200: 0x534F0861}


def raw_zip(members):
    """A zip from (name, method, payload, crc, usize) built by hand, so a
    payload can be deflate data made without inflating anything."""
    import struct
    out, cd = bytearray(), bytearray()
    for name, method, payload, crc, usize in members:
        n = name.encode()
        off = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, method, 0, 0x21,
                           crc, len(payload), usize, len(n), 0) + n + payload
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x314, 20, 0x800, method, 0, 0x21,
                          crc, len(payload), usize, len(n), 0, 0, 0, 0, 0o100644 << 16, off) + n
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(cd),
                      len(out), 0)
    return bytes(out + cd + end)


def bomb(mib, lie):
    """A bundle whose one data file inflates to `mib` MiB of zeros (about
    1 KB of deflate per MiB); with `lie` the headers claim 1000 bytes."""
    import zlib
    man = manifest()
    man["files"] = [{"node_id": NODES[2][0], "path": "zeros.bin"}]
    man["integrity"]["file_count"] = 1
    man["app_assets"]["tree"]["nodes"] = [dict(id=NODES[2][0], node_type="file", name="zeros.bin")]
    mtext = json.dumps(man, indent=2).encode()
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    # after a full flush the history is empty, so every 1 MiB block of
    # zeros compresses to the same bytes
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    payload = block * mib + c.flush()
    return raw_zip([
        (APP + ".yml", 0, DSL, zlib.crc32(DSL), len(DSL)),
        ("manifest.json", 0, mtext, zlib.crc32(mtext), len(mtext)),
        (APP + "/zeros.bin", 8, payload, ZERO_CRC[mib], 1000 if lie else mib << 20),
    ])


def kind_zip(kind):
    ents, man = entries(), manifest()
    if kind == "dify":
        return write(ents, man)
    if kind == "empty-app":  # an app with no files: just the DSL and manifest
        m = dict(man, files=[], integrity={"file_count": 0}, app_assets={"tree": {"nodes": []}})
        return write(ents[:2], m)
    if kind == "yaml-ext":  # Dify's pattern allows .yaml too
        m = dict(man, dsl_filename=APP + ".yaml")
        return write([(APP + ".yaml", DSL, 0o644)] + ents[1:], m)
    if kind == "no-manifest":
        return write([e for e in ents if e[0] != "manifest.json"], man)
    if kind == "bad-json":
        return write(ents, b"{\"schema_version\": \"1.0\",")
    if kind == "schema":
        return write(ents, dict(man, schema_version="2.0"))
    if kind == "dsl-mismatch":
        return write(ents, dict(man, dsl_filename="Other App.yml"))
    if kind == "count":
        return write(ents, dict(man, integrity={"file_count": 5}))
    if kind == "files-missing":
        files = [dict(f) for f in man["files"]]
        files[2]["path"] = "data/missing.csv"
        return write(ents, dict(man, files=files))
    if kind == "outside":
        return write(ents, man, [("notes.txt", b"hello", 0o644)])
    if kind == "macosx":
        return write(ents, man, [("__MACOSX/._Doc Helper.yml", b"x", 0o644)])
    if kind == "traversal":
        return write(ents, man, [(APP + "/../../evil.sh", b"x", 0o755)])
    if kind == "absolute":
        return write(ents, man, [("/etc/cron.d/evil", b"x", 0o644)])
    if kind == "backslash":
        return write(ents, man, [(APP + "\\..\\evil.txt", b"x", 0o644)])
    if kind == "control":
        return write(ents, man, [(APP + "/a\nb.txt", b"x", 0o644)])
    if kind == "nul":
        z = write(ents, man, [(APP + "/safeXname.txt", b"x", 0o644)])
        return z.replace(b"safeXname", b"safe\x00name")
    if kind == "symlink":
        return write(ents, man, [(APP + "/link", b"/etc/passwd", 0o120777)])
    if kind == "device":
        return write(ents, man, [(APP + "/dev", b"", 0o020644)])
    if kind == "fifo":
        return write(ents, man, [(APP + "/fifo", b"", 0o010644)])
    if kind == "duplicate":
        return write(ents, man, [(APP + "/data/table.csv", b"other", 0o644)])
    if kind == "under-file":
        return write(ents, man, [(APP + "/data/table.csv/inner.txt", b"x", 0o644)])
    if kind == "bomb":
        return bomb(1024, False)
    if kind == "bomb-lying":
        return bomb(200, True)
    raise SystemExit("unknown kind %r (see --list)" % kind)


KINDS = ["dify", "empty-app", "yaml-ext", "no-manifest", "bad-json", "schema", "dsl-mismatch",
         "count", "files-missing", "outside", "macosx", "traversal", "absolute", "backslash",
         "control", "nul", "symlink", "device", "fifo", "duplicate", "under-file", "bomb",
         "bomb-lying"]

def check_dify(path):
    """What Dify's AppBundleService.import_bundle needs of a bundle: the
    manifest model (extra keys forbidden), the DSL under dsl_filename, each
    files[] entry under the assets prefix, and a tree whose file paths are
    the files[] paths."""
    import datetime
    import hashlib
    import re
    z = zipfile.ZipFile(path)
    assert z.testzip() is None, "bad CRC"
    m = json.loads(z.read("manifest.json"))
    assert set(m) <= {"schema_version", "generated_at", "dsl_filename", "app_assets", "files",
                      "integrity"}, sorted(m)
    assert m["schema_version"] == "1.0"
    datetime.datetime.fromisoformat(m["generated_at"].replace("Z", "+00:00"))
    assert re.match(r"^[^/]+\.ya?ml$", m["dsl_filename"])
    z.read(m["dsl_filename"]).decode("utf-8")
    assert set(m["app_assets"]) == {"tree"} and set(m["integrity"]) == {"file_count"}
    fields = {"id", "node_type", "name", "parent_id", "order", "extension", "size", "checksum"}
    nodes = {n["id"]: n for n in m["app_assets"]["tree"]["nodes"]}
    for n in nodes.values():
        assert set(n) <= fields and n["node_type"] in ("file", "folder"), n

    def get_path(nid):
        parts = []
        while nid:
            parts.append(nodes[nid]["name"])
            nid = nodes[nid]["parent_id"]
        return "/".join(reversed(parts))

    prefix = m["dsl_filename"].rsplit(".", 1)[0]
    want = [{"node_id": i, "path": get_path(i)} for i, n in nodes.items() if n["node_type"] == "file"]
    assert sorted(want, key=str) == sorted(m["files"], key=str), (want, m["files"])
    assert m["integrity"]["file_count"] == len(m["files"])
    for f in m["files"]:
        assert set(f) == {"node_id", "path"}
        data = z.read(prefix + "/" + f["path"])
        n = nodes[f["node_id"]]
        assert n["size"] == len(data) and n["checksum"] == hashlib.sha256(data).hexdigest()
    print("ok")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-dify":
        check_dify(sys.argv[2])
        sys.exit(0)
    if sys.argv[1:] == ["--list"]:
        print("\n".join(KINDS))
        sys.exit(0)
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[2], "wb") as f:
        f.write(kind_zip(sys.argv[1]))
