#!/usr/bin/env python3
"""Generates Dify-shaped DSL workflows of N pass-through nodes for the
benchmarks in bench/ (see bench/run.sh).

The files look like what Dify 1.x exports (app/kind/version 0.6.0/workflow,
nodes with data/position/width/height, edges with handles and data, sorted
keys, block style as PyYAML's yaml.dump writes it), so the load benchmark
parses the same kind of text users feed sluice, not a minimal toy.  The
editor-only keys Dify also writes and no engine reads (positionAbsolute,
selected, sourcePosition/targetPosition, zIndex, desc) are left out: with
them the 10,000-node fan-out (two edges per node) would pass the 10 MB DSL
limit that Dify and sluice share.

N is the total node count of the workflow, start and end included, so the
benchmark divides by exactly the number of nodes the engine runs:

  chain:  start -> p1 -> p2 -> ... -> p(N-2) -> end
  fanout: start -> p1 .. p(N-3) in parallel -> join -> end

A pass-through node is a variable-aggregator with one variable, the
previous node's output (the first ones read the start input `q`); the
fan-out join reads the first branch, as the only branch Dify would need
to finish.  `--kind answer` writes answer nodes ("{{#prev.answer#}}")
instead, for engines without the aggregator; `--kind template-transform`
writes template-transform nodes rendering "{{ x }}" of the previous
output, to measure what a Jinja template costs per run.

With --json the same document is also written as JSON next to the YAML,
so the Python peer engine can read the graph without paying PyYAML's cost
for every size (the YAML peer measures that cost separately).

Usage: gen.py {chain|fanout} N OUT.yml [--kind variable-aggregator|answer|template-transform]
              [--json]
"""

import argparse
import json
import re
import sys

# Dify exports node ids as millisecond timestamps; numeric ids also make
# the emitter quote them, as Dify's files do.
ID_BASE = 1733000000000

# Plain scalars that YAML 1.1 would read as something other than a string.
_RESERVED = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO"
    r"|on|On|ON|off|Off|OFF|y|Y|n|N)$")
_PLAIN = re.compile("^[A-Za-z0-9_\u0080-\U0010FFFF][A-Za-z0-9 _./\u0080-\U0010FFFF-]*$")
_NUMBER = re.compile(r"^[-+]?[0-9_]*\.?[0-9_]*(?:[eE][-+]?[0-9]+)?$")


def scalar(v):
    """One scalar as PyYAML would write it (quoting only when needed)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if (_PLAIN.match(v) and not _RESERVED.match(v) and not _NUMBER.match(v)
            and not v.endswith(" ")):
        return v
    return "'" + v.replace("'", "''") + "'"


def block(v, ind, out):
    """Block-style YAML lines for a mapping or sequence, at indent `ind`.
    Sequences inside mappings are not indented, as PyYAML writes them."""
    if isinstance(v, dict):
        for k in sorted(v):
            val = v[k]
            if isinstance(val, (dict, list)) and val:
                out.append(f"{ind}{k}:")
                block(val, ind if isinstance(val, list) else ind + "  ", out)
            else:
                out.append(f"{ind}{k}: {flow_empty(val)}")
    else:
        for item in v:
            if isinstance(item, (dict, list)) and item:
                sub = []
                block(item, ind + "  ", sub)
                sub[0] = ind + "- " + sub[0][len(ind) + 2:]
                out.extend(sub)
            else:
                out.append(f"{ind}- {flow_empty(item)}")


def flow_empty(v):
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return scalar(v)


def to_yaml(doc):
    out = []
    block(doc, "", out)
    return "\n".join(out) + "\n"


def node(nid, data, x, y, height=54):
    return {
        "data": data,
        "height": height,
        "id": nid,
        "position": {"x": x, "y": y},
        "type": "custom",
        "width": 244,
    }


def edge(src, dst, src_type, dst_type):
    return {
        "data": {"isInIteration": False, "sourceType": src_type, "targetType": dst_type},
        "id": f"{src}-source-{dst}-target",
        "source": src,
        "sourceHandle": "source",
        "target": dst,
        "targetHandle": "target",
        "type": "custom",
    }


def pass_node(kind, nid, title, prev, prev_var, x, y):
    """One pass-through node reading [prev, prev_var]; returns (node, output var)."""
    if kind == "answer":
        data = {"type": "answer", "title": title,
                "answer": "{{#" + prev + "." + prev_var + "#}}", "variables": []}
        return node(nid, data, x, y, 104), "answer"
    if kind == "template-transform":
        data = {"type": "template-transform", "title": title, "template": "{{ x }}",
                "variables": [{"variable": "x", "value_selector": [prev, prev_var]}]}
        return node(nid, data, x, y, 54), "output"
    data = {"type": "variable-aggregator", "title": title, "output_type": "string",
            "variables": [[prev, prev_var]]}
    return node(nid, data, x, y, 130), "output"


def workflow(shape, n, kind):
    minimum = 3 if shape == "chain" else 4
    if n < minimum:
        raise SystemExit(f"gen.py: {shape} needs N >= {minimum}")
    ids = [str(ID_BASE + i) for i in range(n)]
    start_id, end_id = ids[0], ids[-1]
    nodes = [node(start_id, {
        "type": "start", "title": "Start",
        "variables": [{"label": "q", "max_length": 256, "options": [], "required": True,
                       "type": "text-input", "variable": "q"}],
    }, 30, 250, 90)]
    edges = []
    if shape == "chain":
        prev, prev_var, prev_type = start_id, "q", "start"
        for i in range(1, n - 1):
            nd, var = pass_node(kind, ids[i], f"Pass {i}", prev, prev_var, 30 + 304 * i, 250)
            nodes.append(nd)
            edges.append(edge(prev, ids[i], prev_type, nd["data"]["type"]))
            prev, prev_var, prev_type = ids[i], var, nd["data"]["type"]
        last, last_var, last_type = prev, prev_var, prev_type
        end_x = 30 + 304 * (n - 1)
    else:
        branch_var = None
        for i in range(1, n - 2):
            nd, branch_var = pass_node(kind, ids[i], f"Branch {i}", start_id, "q", 334,
                                       250 + 150 * (i - 1))
            nodes.append(nd)
            edges.append(edge(start_id, ids[i], "start", nd["data"]["type"]))
        join_id = ids[n - 2]
        nd, join_var = pass_node(kind, join_id, "Join", ids[1], branch_var, 638, 250)
        nodes.append(nd)
        for i in range(1, n - 2):
            edges.append(edge(ids[i], join_id, nodes[i]["data"]["type"], nd["data"]["type"]))
        last, last_var, last_type = join_id, join_var, nd["data"]["type"]
        end_x = 942
    nodes.append(node(end_id, {
        "type": "end", "title": "End",
        "outputs": [{"value_selector": [last, last_var], "variable": "result"}],
    }, end_x, 250, 90))
    edges.append(edge(last, end_id, last_type, "end"))
    return {
        "app": {"description": f"{shape} of {n} pass-through nodes (sluice bench/gen.py)",
                "icon": "\U0001F916", "icon_background": "#FFEAD5", "mode": "workflow",
                "name": f"bench_{shape}_{n}", "use_icon_as_answer_icon": False},
        "dependencies": [],
        "kind": "app",
        "version": "0.6.0",
        "workflow": {
            "conversation_variables": [],
            "environment_variables": [],
            "features": {
                "file_upload": {"enabled": False},
                "opening_statement": "",
                "retriever_resource": {"enabled": True},
                "sensitive_word_avoidance": {"enabled": False},
                "speech_to_text": {"enabled": False},
                "suggested_questions": [],
                "suggested_questions_after_answer": {"enabled": False},
                "text_to_speech": {"enabled": False, "language": "", "voice": ""},
            },
            "graph": {"edges": edges, "nodes": nodes,
                      "viewport": {"x": 0, "y": 0, "zoom": 0.7}},
            "rag_pipeline_variables": [],
        },
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", choices=["chain", "fanout"])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--kind", choices=["variable-aggregator", "answer", "template-transform"],
                    default="variable-aggregator")
    ap.add_argument("--json", action="store_true", help="also write OUT with .json")
    a = ap.parse_args(argv)
    doc = workflow(a.shape, a.n, a.kind)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(to_yaml(doc))
    if a.json:
        with open(re.sub(r"\.ya?ml$", "", a.out) + ".json", "w", encoding="utf-8") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main(sys.argv[1:])
