#!/usr/bin/python3
"""Generate tests/jinja/cases.jsonl from tests/jinja/cases.src.py with Jinja2.

    python3 tests/jinja/gen.py            rewrite cases.jsonl
    python3 tests/jinja/gen.py --check    exit 1 if cases.jsonl is out of date
    python3 tests/jinja/gen.py --stats    also print the case count per group

Every case is rendered with jinja2.Environment(autoescape=False) and no other
settings (Dify's: trim_blocks, lstrip_blocks and keep_trailing_newline off,
undefined=jinja2.Undefined, no extensions, no loader). The reference is
Debian's python3-jinja2 3.1.2 at /usr/bin/python3; when another interpreter
with another Jinja2 runs this script it re-executes itself under
/usr/bin/python3 (set SLUICE_JINJA_ANY=1 to use whatever Jinja2 is imported).
"""
import copy
import json
import os
import runpy
import sys

PINNED = "3.1.2"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "cases.src.py")
OUT = os.path.join(HERE, "cases.jsonl")


def _pin_interpreter():
    try:
        import jinja2
        version = jinja2.__version__
    except ImportError:
        version = None
    if version == PINNED or os.environ.get("SLUICE_JINJA_ANY"):
        return
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and os.path.exists(debian):
        os.execv(debian, [debian, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write("gen.py: warning: Jinja2 %s, not the reference %s\n" % (version, PINNED))


_pin_interpreter()

import jinja2  # noqa: E402
from jinja2 import exceptions  # noqa: E402


def error_kind(exc):
    # TemplateAssertionError (unknown filter or test) is a TemplateSyntaxError.
    if isinstance(exc, exceptions.TemplateSyntaxError):
        return "syntax"
    if isinstance(exc, exceptions.UndefinedError):
        return "undefined"
    if isinstance(exc, TypeError):
        return "type"
    return "other"


# Output that depends on the process (object addresses) or is not a string
# value a second engine could reproduce.
_UNSTABLE = (" at 0x", "<generator object", "<function ", "<bound method", "<built-in")


def render(name, template, context):
    env = jinja2.Environment(autoescape=False)
    try:
        out = env.from_string(template).render(context)
    except Exception as exc:  # noqa: BLE001 - every failure is data here
        return {"error": True, "error_kind": error_kind(exc)}, exc
    for bad in _UNSTABLE:
        if bad in out:
            raise SystemExit("gen.py: case %s renders unstable output %r" % (name, out))
    return {"expected": out}, None


def load_cases():
    cases = runpy.run_path(SRC)["CASES"]
    seen = set()
    rows = []
    for item in cases:
        if len(item) == 2:
            name, template = item
            context = {}
        else:
            name, template, context = item
        if not isinstance(name, str) or not isinstance(template, str) or not isinstance(context, dict):
            raise SystemExit("gen.py: malformed case %r" % (item,))
        if name in seen:
            raise SystemExit("gen.py: duplicate case name %s" % name)
        seen.add(name)
        text = json.dumps(context, ensure_ascii=False)
        # Render with exactly what a reader of the JSON file gets (lists,
        # not tuples; JSON key order kept as written).
        ctx = json.loads(text)
        if json.dumps(ctx, ensure_ascii=False) != text or ctx != context:
            raise SystemExit("gen.py: case %s has a context that is not plain JSON" % name)
        rows.append((name, template, ctx))
    return rows


def generate(verbose=False):
    lines = []
    for name, template, ctx in load_cases():
        # a copy: templates may change lists and dicts in place, and the
        # context recorded must be the one given
        result, exc = render(name, template, copy.deepcopy(ctx))
        if verbose and exc is not None:
            sys.stderr.write("%-45s %s: %s\n" % (name, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""))
        if name.startswith("error/") and exc is None:
            raise SystemExit("gen.py: case %s is under error/ but renders %r" % (name, result["expected"]))
        obj = {"context": ctx}
        obj.update(result)
        obj["name"] = name
        obj["template"] = template
        # Top-level keys sorted; the context keeps its key order, which
        # matters for loops over mappings.
        obj = {k: obj[k] for k in sorted(obj)}
        lines.append(json.dumps(obj, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def stats(text):
    groups = {}
    for line in text.splitlines():
        name = json.loads(line)["name"]
        parts = name.split("/")
        group = "/".join(parts[:2] if len(parts) > 2 else parts[:1])
        groups[group] = groups.get(group, 0) + 1
    for group in sorted(groups):
        print("%5d  %s" % (groups[group], group))
    print("%5d  total" % sum(groups.values()))


def main(argv):
    check = "--check" in argv
    verbose = "-v" in argv or "--verbose" in argv
    text = generate(verbose)
    if "--stats" in argv:
        stats(text)
    if check:
        try:
            with open(OUT, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        if old != text:
            old_lines, new_lines = old.splitlines(), text.splitlines()
            changed = [json.loads(l)["name"] for l in set(new_lines) - set(old_lines)]
            sys.stderr.write("gen.py: %s is out of date (%d lines differ, e.g. %s); run python3 tests/jinja/gen.py\n"
                             % (os.path.relpath(OUT), len(set(new_lines) ^ set(old_lines)), ", ".join(sorted(changed)[:5])))
            return 1
        print("cases.jsonl up to date: %d cases, Jinja2 %s" % (text.count("\n"), jinja2.__version__))
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s: %d cases, Jinja2 %s" % (os.path.relpath(OUT), text.count("\n"), jinja2.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
