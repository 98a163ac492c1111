#!/usr/bin/python3
"""Dify's chunking, transcribed from the behaviour described in the research
notes (docs/knowledge.md lists the Dify files), as a reference for
tests/unit/knowledge_split.c.  Not Dify's code; written from its described
algorithm, with sluice's deliberate differences (docs/knowledge.md):
words at the space level are joined with one space, only U+FFFE is deleted
by the default clean, and separators translate only \\n, \\t and \\\\.

    dify_split.py CASES.json      prints a JSON list, one result per case

A case is {"op": "split", "text": ..., "mode": "automatic"|"custom",
"separator": ..., "max": N, "overlap": N} or {"op": "parent_child", "text",
"parent_mode": "paragraph"|"full-doc", "separator", "max", "overlap",
"child_separator", "child_max", "child_overlap"} or {"op": "clean", "text",
"extra_spaces": bool, "urls_emails": bool}.  A result is a list of chunks,
a list of [parent, [children]], the cleaned text, or {"error": message}.
"""
import json
import re
import sys

SEPARATORS = ["\n\n", "\u3002", ". ", " ", ""]


class Splitter:
    def __init__(self, size, overlap, fixed=None, space_join=True):
        if overlap > size:
            raise ValueError(
                f"Got a larger chunk overlap ({overlap}) than chunk size ({size}), should be smaller.")
        self.size = size
        self.overlap = overlap
        self.fixed = fixed
        self.space_join = space_join

    # LangChain's _merge_splits: overlap by whole trailing pieces.
    def merge(self, splits, separator):
        sep_len = len(separator)
        docs, cur, total = [], [], 0
        for d in splits:
            n = len(d)
            if total + n + (sep_len if cur else 0) > self.size:
                if cur:
                    doc = separator.join(cur).strip()
                    if doc:
                        docs.append(doc)
                    while total > self.overlap or (
                            total + n + (sep_len if cur else 0) > self.size and total > 0):
                        total -= len(cur[0]) + (sep_len if len(cur) > 1 else 0)
                        cur = cur[1:]
            cur.append(d)
            total += n + (sep_len if len(cur) > 1 else 0)
        doc = separator.join(cur).strip()
        if doc:
            docs.append(doc)
        return docs

    # RecursiveCharacterTextSplitter._split_text: the separator is searched
    # as a regex, split on literally, and kept at the end of each piece.
    def split_base(self, text, separators):
        final = []
        separator = separators[-1]
        new = []
        for i, s in enumerate(separators):
            if s == "":
                separator = s
                break
            if re.search(s, text):
                separator = s
                new = separators[i + 1:]
                break
        if separator:
            parts = re.split("(" + re.escape(separator) + ")", text)
            splits = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2 == 1:
                splits.append(parts[-1])
        else:
            splits = list(text)
        splits = [s for s in splits if s not in ("", "\n")]
        good = []
        for s in splits:
            if len(s) < self.size:
                good.append(s)
            else:
                if good:
                    final.extend(self.merge(good, ""))
                    good = []
                if not new:
                    final.append(s)
                else:
                    final.extend(self.split_base(s, new))
        if good:
            final.extend(self.merge(good, ""))
        return final

    # FixedRecursiveCharacterTextSplitter.recursive_split_text.
    def split_recursive(self, text):
        final = []
        separator = SEPARATORS[-1]
        new = []
        for i, s in enumerate(SEPARATORS):
            if s == "":
                separator = s
                break
            if s in text:
                separator = s
                new = SEPARATORS[i + 1:]
                break
        join = ""
        if separator:
            if separator == " ":
                splits = re.split(r" +", text)
                join = " " if self.space_join else ""
            else:
                splits = text.split(separator)
                splits = [s + separator if i < len(splits) - 1 else s for i, s in enumerate(splits)]
        else:
            splits = list(text)
        if separator == "\n":
            splits = [s for s in splits if s != ""]
        else:
            splits = [s for s in splits if s not in ("", "\n")]
        if separator != "":
            good = []
            for s in splits:
                if len(s) < self.size:
                    good.append(s)
                else:
                    if good:
                        final.extend(self.merge(good, join))
                        good = []
                    if not new:
                        final.append(s)
                    else:
                        final.extend(self.split_base(s, new))
            if good:
                final.extend(self.merge(good, join))
        else:
            cur, ov = "", ""
            for c in splits:
                if len(cur) + len(c) <= self.size - self.overlap:
                    cur += c
                elif len(cur) + len(c) <= self.size:
                    cur += c
                    ov += c
                else:
                    final.append(cur)
                    cur = ov + c
                    ov = ""
            if cur:
                final.append(cur)
        return final

    def split_fixed(self, text):
        chunks = text.split(self.fixed) if self.fixed else [text]
        final = []
        for c in chunks:
            if len(c) > self.size:
                final.extend(self.split_recursive(c))
            else:
                final.append(c)
        return final


LEADING = re.compile(r'^[\u2000-\u206F\u2E00-\u2E7F\u3000-\u303F"#$%&\'()*+,./:;<=>?@^_`~]+')


def post_paragraph(chunks):
    out = []
    for c in chunks:
        if not c.strip():
            continue
        c = LEADING.sub("", c).strip()
        if c:
            out.append(c)
    return out


def post_parent_child(chunks):
    out = []
    for c in chunks:
        if not c.strip():
            continue
        if c.startswith(".") or c.startswith("\u3002"):
            c = c[1:]
        c = c.strip()
        if c:
            out.append(c)
    return out


def separator(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def check_length(n, lo=1):
    if n < lo or n > 4000:
        raise ValueError(f"Custom segment length should be between {lo} and 4000.")


def split_raw(text, mode, sep, size, overlap):
    if mode == "automatic":
        return Splitter(500, 50).split_base(text, SEPARATORS)
    check_length(size)
    return Splitter(size, overlap, separator(sep)).split_fixed(text)


def clean(text, extra_spaces, urls_emails):
    text = re.sub(r"<\|", "<", text)
    text = re.sub(r"\|>", ">", text)
    text = re.sub(r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F\uFFFE]", "", text)
    if extra_spaces:
        text = re.sub(r"\n{3,}", "\n\n", text)
        text = re.sub(r"[\t\f\r\x20\u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]{2,}", " ", text)
    if urls_emails:
        text = re.sub(r"([a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+)", "", text)
        urls = []

        def hold(m):
            urls.append(m.group(1))
            return f"![image](__MARKDOWN_IMAGE_URL_{len(urls) - 1}__)"
        text = re.sub(r"!\[.*?\]\((https?://[^\s)]+)\)", hold, text)
        text = re.sub(r"https?://[^\s)]+", "", text)
        for i, u in enumerate(urls):
            text = text.replace(f"__MARKDOWN_IMAGE_URL_{i}__", u)
    return text


def run(case):
    op = case["op"]
    text = case["text"]
    if op == "clean":
        return clean(text, case.get("extra_spaces", False), case.get("urls_emails", False))
    if op == "split":
        return post_paragraph(split_raw(text, case.get("mode", "custom"), case.get("separator", "\n"),
                                        case.get("max", 0), case.get("overlap", 0)))
    check_length(case["child_max"])
    if case["parent_mode"] == "full-doc":
        parents = [text] if text.strip() else []
    else:
        parents = post_parent_child(split_raw(text, "custom", case.get("separator", "\n"),
                                              case["max"], case.get("overlap", 0)))
    out = []
    for p in parents:
        kids = post_parent_child(split_raw(p, "custom", case.get("child_separator", "\n"),
                                           case["child_max"], case.get("child_overlap", 0)))
        out.append([p, kids])
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    res = []
    for c in cases:
        try:
            res.append(run(c))
        except ValueError as e:
            res.append({"error": str(e)})
    json.dump(res, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
