#!/usr/bin/python3
"""dify_text.py KIND FILE -- the text Dify's document extractor gives for FILE.

The algorithms of graphon's document_extractor node for the text formats
(plain text, json, yaml, csv, properties, vtt), run with Python's own json,
csv and PyYAML, so tests/unit/extract_text.c can compare sluice's readers
with them byte for byte.  Prints the text and exits 0, or prints the error
Dify reports and exits 3, or exits 4 when Python raises what Dify's reader
does not catch (a RecursionError on deep YAML, int("abc") for !!int abc).

Two deliberate departures, both sluice's documented choices:
  - decoding: valid UTF-8 as it is, else cp1252 (its undefined bytes as
    latin-1) instead of charset_normalizer's guess;
  - a lone surrogate (JSON "\\ud800") has no UTF-8: U+FFFD stands for it.
webvtt-py is not packaged for Debian 12 at 0.5, so its parsing (0.5.x
vtt.py, models.py, utils.py) is restated here with the same regular
expressions and strptime formats.
"""
import csv
import io
import json
import re
import sys
from datetime import datetime


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        out = []
        for b in data:
            try:
                out.append(bytes([b]).decode("cp1252"))
            except UnicodeDecodeError:
                out.append(chr(b))
        return "".join(out)


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class Failed(Exception):
    pass


class Other(Exception):
    """An exception Dify's reader does not catch (exit status 4)."""


def plain(data):
    return decode(data)


def json_text(data):
    def once(text):
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)

    try:
        return once(decode(data))
    except (ValueError, RecursionError) as e:
        first = e
    if not is_utf8(data):
        try:
            return once(data.decode("utf-8", errors="ignore"))
        except (ValueError, RecursionError):
            pass
    raise Failed(f"Failed to decode or parse JSON file: {first}")


def yaml_text(data):
    import yaml

    try:
        docs = yaml.safe_load_all(decode(data))
        return yaml.dump_all(docs, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError as e:
        raise Failed(f"Failed to decode or parse YAML file: {e}")
    except Exception as e:  # RecursionError, ValueError, AttributeError
        # not a YAMLError: it leaves Dify's reader and fails the node
        # with its own text; sluice refuses such input with its own error
        raise Other(str(e))


def csv_text(data):
    try:
        rows = list(csv.reader(io.StringIO(decode(data))))
    except csv.Error as e:
        raise Failed(f"Failed to extract text from CSV: {e}")
    if not rows:
        return ""

    def norm(c):
        return c.replace("\n", " ").replace("\r", "")

    out = "| " + " | ".join(norm(c) for c in rows[0]) + " |\n"
    out += "| " + " | ".join("-" * len(c) for c in rows[0]) + " |\n"
    for row in rows[1:]:
        out += "| " + " | ".join(norm(c) for c in row) + " |\n"
    return out


def properties(data):
    lines = []
    for line in decode(data).splitlines():
        s = line.strip()
        if not s or s.startswith("#") or s.startswith("!"):
            lines.append(s)
            continue
        if "=" in s:
            key, value = s.split("=", 1)
        elif ":" in s:
            key, value = s.split(":", 1)
        else:
            key, value = s, ""
        lines.append(f"{key.strip()}: {value.strip()}")
    return "\n".join(lines)


# webvtt-py 0.5, restated
CUE_TIMINGS = re.compile(r"\s*((?:\d+:)?\d{2}:\d{2}.\d{3})\s*-->\s*((?:\d+:)?\d{2}:\d{2}.\d{3})")
CUE_TEXT_TAGS = re.compile("<.*?>")
VOICE_SPAN = re.compile(r"<v(?:\.\w+)*\s+([^>]+)>")


class MalformedFileError(Exception):
    pass


def vtt_blocks(lines):
    block = []
    for line in lines:
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def cue_valid(lines):
    return bool(
        (len(lines) >= 2 and CUE_TIMINGS.match(lines[0]) and "-->" not in lines[1])
        or (len(lines) >= 3 and "-->" not in lines[0] and CUE_TIMINGS.match(lines[1])
            and "-->" not in lines[2]))


def parse_ts(value):
    fmt = "%H:%M:%S.%f" if len(value) >= 11 else "%M:%S.%f"
    try:
        return datetime.strptime(value, fmt).time()
    except ValueError:
        raise MalformedFileError(f"Invalid timestamp: {value}")


def vtt_captions(text):
    lines = [line.rstrip("\n\r") for line in text.splitlines()]
    if not (lines and lines[0].startswith("WEBVTT")):
        raise MalformedFileError("Invalid format")
    caps = []
    for block in vtt_blocks(lines):
        if not cue_valid(block):
            continue
        start = end = None
        payload = []
        for line in block:
            m = CUE_TIMINGS.match(line)
            if m:
                start, end = m.group(1), m.group(2)
            elif not start:
                pass
            else:
                payload.append(line)
        parse_ts(start)
        parse_ts(end)
        voice = None
        if payload:
            m = VOICE_SPAN.match(payload[0])
            if m:
                voice = m.group(1)
        caps.append((voice, CUE_TEXT_TAGS.sub("", "\n".join(payload))))
    return caps


def vtt(data):
    try:
        raw = vtt_captions(decode(data).lstrip("\ufeff"))
    except MalformedFileError as e:
        raise Failed(str(e))
    if not raw:
        return ""
    merged = []
    cur_spk, cur_txt = raw[0]
    for spk, txt in raw[1:]:
        if spk is None:
            merged.append((None, cur_txt))
            continue
        if spk == cur_spk:
            cur_txt += " " + txt
        else:
            merged.append((cur_spk, cur_txt))
            cur_spk, cur_txt = spk, txt
    merged.append((cur_spk, cur_txt))
    return "\n".join(f'{spk or ""} "{txt}"' for spk, txt in merged)


KINDS = {"text": plain, "json": json_text, "yaml": yaml_text, "csv": csv_text,
         "properties": properties, "vtt": vtt}


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = f.read()
    sys.setrecursionlimit(1000)
    try:
        out, rc = KINDS[kind](data), 0
    except Failed as e:
        out, rc = str(e), 3
    except Other as e:
        out, rc = str(e), 4
    out = re.sub("[\ud800-\udfff]", "\ufffd", out)
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.exit(rc)


if __name__ == "__main__":
    main()
