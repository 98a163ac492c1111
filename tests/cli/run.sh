#!/usr/bin/env bash
# CLI: `sluice run` as a user runs it: inputs (--input, --inputs JSON and
# @file, NAME=@PATH files), --json, --events, --quiet, --env, --limit and
# SLUICE_* variables, --query/--conversation for chatflows, refused inputs
# (exit 2, nothing run), exit codes 0/1/3, secrets masked in events, and
# if-else/variable-aggregator once `sluice validate` accepts them.
# Prints TAP; needs python3 for JSON checks.
. "$(dirname "$0")/lib.bash"
# json EXPR: evaluates a Python expression over the JSON document on stdout (d)
json() {
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$T/out" "$1" 2>>"$T/err"
}
# events EXPR: the same over the list of event lines (ev), each must be JSON
events() {
    python3 -c 'import json,sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
names = [e["event"] for e in ev]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$T/out" "$1" 2>>"$T/err"
}

W=$T/wf
mkdir -p "$W"

cat >"$W/greet.yml" <<'EOF'
app: {mode: workflow, name: greet}
kind: app
version: 0.6.0
workflow:
  environment_variables:
  - {name: api_key, value: S3CRET-VALUE-4242, value_type: secret, id: e1}
  - {name: region, value: eu, value_type: string, id: e2}
  graph:
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables:
        - {variable: name, label: Name, type: text-input, required: true, max_length: 20}
        - {variable: n, label: N, type: number, required: false}
    - {id: say, data: {type: answer, title: Say, answer: "Hello {{#start.name#}} from {{#env.region#}}"}}
    - {id: leak, data: {type: answer, title: Leak, answer: "key={{#env.api_key#}}"}}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: greeting, value_selector: [say, answer]}
        - {variable: n, value_selector: [start, n]}
        - {variable: key, value_selector: [leak, answer]}
    edges:
    - {source: start, target: say}
    - {source: say, target: leak}
    - {source: leak, target: end}
EOF

# ---- inputs and output formats ----
sl run "$W/greet.yml" --input name=Bob --input n=5
check "run: exit 0 on success" [ $rc -eq 0 ]
check "run: outputs printed as 'name: value'" \
    bash -c "grep -qx 'greeting: Hello Bob from eu' '$T/out' && grep -qx 'n: 5' '$T/out'"
check "run: a number input given as text becomes a number" grep -qx 'n: 5' "$T/out"
check "run: progress on stderr names nodes and the result" \
    bash -c "grep -q 'Start (start)' '$T/err' && grep -q 'workflow succeeded' '$T/err'"

sl run "$W/greet.yml" --input name=Bob -q
check "run -q: nothing on stderr" bash -c "[ $rc -eq 0 ] && [ ! -s '$T/err' ]"
sl run "$W/greet.yml" --input name=Bob --quiet
check "run --quiet: nothing on stderr" bash -c "[ $rc -eq 0 ] && [ ! -s '$T/err' ]"

sl run "$W/greet.yml" --inputs '{"name": "Al", "n": 2.5}' -q
check "run --inputs JSON" bash -c "[ $rc -eq 0 ] && grep -qx 'greeting: Hello Al from eu' '$T/out' && grep -qx 'n: 2.5' '$T/out'"
printf '{"name": "Fi", "n": 7}' >"$T/in.json"
sl run "$W/greet.yml" --inputs "@$T/in.json" -q
check "run --inputs @file" bash -c "[ $rc -eq 0 ] && grep -qx 'greeting: Hello Fi from eu' '$T/out' && grep -qx 'n: 7' '$T/out'"
printf 'Twelve chars' >"$T/name.txt"
sl run "$W/greet.yml" --input "name=@$T/name.txt" --input n=1 -q
check "run --input NAME=@FILE reads the input's text from the file" grep -qx 'greeting: Hello Twelve chars from eu' "$T/out"
sl run "$W/greet.yml" --input "name=@$T/name.txt" --input n=1 --limit input_file_bytes=11
check "… and a file over input_file_bytes is refused, naming the setting (exit $rc)" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'larger than input_file_bytes (raise it with --limit input_file_bytes=N)' '$T/err'"
sl run "$W/greet.yml" --input 'name=Zoë ✓' -q
check "run --input with non-ASCII text" grep -qx 'greeting: Hello Zoë ✓ from eu' "$T/out"
sl run "$W/greet.yml" --input 'name=a=b' -q
check "run --input splits at the first '='" grep -qx 'greeting: Hello a=b from eu' "$T/out"

timeout 20 "$SLUICE" run - --input name=Stdin -q <"$W/greet.yml" >"$T/out" 2>"$T/err"
rc=$?
check "run - reads the workflow from standard input" \
    bash -c "[ $rc -eq 0 ] && grep -qx 'greeting: Hello Stdin from eu' '$T/out'"

sl run "$W/greet.yml" --input name=Bob --json -q
check "run --json: exit 0" [ $rc -eq 0 ]
check "run --json: one JSON object with status, outputs, steps and run id" \
    json 'd["status"] == "succeeded" and d["outputs"]["greeting"] == "Hello Bob from eu" and d["outputs"]["n"] is None and d["total_steps"] == 4 and len(d["workflow_run_id"]) > 0 and d["error"] is None and d["elapsed_time"] >= 0'

check "run --json: Dify's blocking-response fields (task_id, total_tokens, created_at, finished_at)" \
    json 'd["task_id"] == d["workflow_run_id"] == d["id"] and d["total_tokens"] == 0 and isinstance(d["created_at"], int) and d["created_at"] > 1700000000 and d["created_at"] <= d["finished_at"]'
timeout 20 "$SLUICE" run examples/summarize.yml --input text=@examples/article.txt \
    --replay examples/summarize.tape.jsonl --json -q >"$T/out" 2>"$T/err"
check "run --json: total_tokens counts the model's tokens" json 'd["status"] == "succeeded" and d["total_tokens"] > 0'

# An empty string is a value: a required text input given as "" runs, as in
# Dify; only a missing one is refused.
sl run "$W/greet.yml" --input name= -q
check "run: a required text input given as \"\" runs (exit $rc)" \
    bash -c "[ $rc -eq 0 ] && grep -qx 'greeting: Hello  from eu' '$T/out'"
sl run "$W/greet.yml" --inputs '{"name": ""}' -q
check "run: the same through --inputs JSON (exit $rc)" [ $rc -eq 0 ]
sl run "$W/greet.yml" -q
check "run: a missing required input is still refused (exit $rc)" \
    bash -c "[ $rc -eq 2 ] && grep -q \"input 'name' (Name) is required\" '$T/err'"
check "run: … and says how to give it on the command line" \
    grep -qx "error: input 'name' (Name) is required; pass it with --input name=VALUE" "$T/err"

sl run "$W/greet.yml" --input name=Bob --events -q
check "run --events: exit 0" [ $rc -eq 0 ]
check "run --events: every line is a JSON event" events 'len(ev) > 0 and all("event" in e and "data" in e for e in ev)'
check "run --events: workflow_started first, workflow_finished last" \
    events 'names[0] == "workflow_started" and names[-1] == "workflow_finished" and ev[-1]["data"]["status"] == "succeeded"'
check "run --events: node_started/node_finished for each of 4 nodes, in order" \
    events '[e["data"]["node_id"] for e in ev if e["event"] == "node_finished"] == ["start", "say", "leak", "end"] and names.count("node_started") == 4'
check "run --events: answers stream as text_chunk" \
    events 'any(e["event"] == "text_chunk" and e["data"]["text"] == "Hello Bob from eu" for e in ev)'
check "run --events: workflow_started carries the inputs" \
    events 'ev[0]["data"]["inputs"]["name"] == "Bob"'
check "run --events: the secret env value is not in any event" bash -c "! grep -q 'S3CRET-VALUE-4242' '$T/out' && ! grep -q 'VALUE-42' '$T/out'"
check "run --events: no outputs listing besides events" bash -c "! grep -q '^greeting:' '$T/out'"

sl run "$W/greet.yml" --input name=Bob --events -q --env api_key=OVERRIDDEN-SECRET-9999
check "run --env: an overridden secret is masked in events too" \
    bash -c "[ $rc -eq 0 ] && ! grep -q 'OVERRIDDEN-SECRET-9999' '$T/out' && ! grep -q 'SECRET-99' '$T/out'"
sl run "$W/greet.yml" --input name=Bob -q --env region=us
check "run --env overrides an environment variable" grep -qx 'greeting: Hello Bob from us' "$T/out"
sl run "$W/greet.yml" --input name=Bob -q --env region
check "run --env without '=': exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'NAME=VALUE' '$T/err'"

# ---- refused inputs: exit 2, nothing runs ----
sl run "$W/greet.yml"
check "missing required input: exit 2" [ $rc -eq 2 ]
check "missing required input: the message names it and says how to pass it" \
    bash -c "grep -q \"input 'name'\" '$T/err' && grep -q -- '--input name=' '$T/err'"
check "missing required input: nothing was run" \
    bash -c "grep -q 'nothing was run' '$T/err' && ! grep -q 'Start (start)' '$T/err' && [ ! -s '$T/out' ]"
sl run "$W/greet.yml" --events
check "missing required input with --events: no events at all" bash -c "[ $rc -eq 2 ] && [ ! -s '$T/out' ]"
sl run "$W/greet.yml" --input name=Bob --input n=abc
check "a number input that is not a number: exit 2 naming it" \
    bash -c "[ $rc -eq 2 ] && grep -q \"'n'\" '$T/err' && [ ! -s '$T/out' ]"
sl run "$W/greet.yml" --input name=ABCDEFGHIJKLMNOPQRSTU
check "an input over max_length: exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'name' '$T/err'"
sl run "$W/greet.yml" --inputs '[1, 2]'
check "--inputs that is not an object: exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'JSON object' '$T/err'"
sl run "$W/greet.yml" --inputs '{"name": '
check "--inputs that is not JSON: exit 2" [ $rc -eq 2 ]
sl run "$W/greet.yml" --inputs "@$T/no-such.json"
check "--inputs @missing-file: exit 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q 'no-such.json' '$T/err'"
sl run "$W/greet.yml" --input =x
check "--input without a name: exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'NAME=VALUE' '$T/err'"

# ---- limits ----
sl run "$W/greet.yml" --input name=Bob --limit max_steps=2 -q
check "--limit max_steps=2: the run fails (exit 1) naming the limit" \
    bash -c "[ $rc -eq 1 ] && grep -q 'max_steps' '$T/err'"
SLUICE_MAX_STEPS=2 timeout 20 "$SLUICE" run "$W/greet.yml" --input name=Bob --json -q >"$T/out" 2>"$T/err"
rc=$?
check "SLUICE_MAX_STEPS=2 works like --limit" bash -c "[ $rc -eq 1 ]"
check "--json on a failed run: status failed with the error" \
    json 'd["status"] == "failed" and "max_steps" in d["error"]'
SLUICE_MAX_STEPS=2 timeout 20 "$SLUICE" run "$W/greet.yml" --input name=Bob --limit max_steps=100 -q >"$T/out" 2>"$T/err"
rc=$?
check "--limit overrides SLUICE_MAX_STEPS" [ $rc -eq 0 ]

# ---- exit codes 1 and 3; iteration and loop ----
cat >"$W/containers.yml" <<'EOF'
app: {mode: workflow, name: containers}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: items, label: Items, type: json_object, required: true}]}}
    - id: it
      data: {type: iteration, title: Each, iterator_selector: [start, items, list], output_selector: [inner, answer], is_parallel: false}
    - {id: its, parentId: it, data: {type: iteration-start, title: in, isInIteration: true}}
    - {id: inner, parentId: it, data: {type: answer, title: Inner, answer: "{{#it.index#}}:{{#it.item#}}", isInIteration: true, iteration_id: it}}
    - {id: lp, data: {type: loop, title: Rounds, loop_count: 3, break_conditions: [], logical_operator: and, loop_variables: []}}
    - {id: lps, parentId: lp, data: {type: loop-start, title: in, isInLoop: true}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: seq, value_selector: [it, output]}]}}
    edges:
    - {source: start, target: it}
    - {source: its, target: inner}
    - {source: it, target: lp}
    - {source: lp, target: end}
EOF
sl run "$W/containers.yml" --inputs '{"items": {"list": ["a", "b", 3]}}' --json -q
check "iteration and loop: exit 0 and the iteration's output" \
    bash -c "[ $rc -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d[\"outputs\"][\"seq\"] != [\"0:a\", \"1:b\", \"2:3\"])' '$T/out'"
sl run "$W/containers.yml" --inputs '{"items": {"list": ["x"]}}' -q
check "an array output prints as indented JSON under its name" \
    bash -c "[ $rc -eq 0 ] && grep -qx 'seq:' '$T/out' && grep -q '\"0:x\"' '$T/out'"
sl run "$W/containers.yml" --inputs '{"items": {"list": "not a list"}}' -q
check "a node failing without an error strategy: exit 1" [ $rc -eq 1 ]
check "the failure names the node on stderr" grep -q "'it' (Each)" "$T/err"
sl run "$W/containers.yml" --inputs '{"items": {"list": "not a list"}}' --events -q
check "a failed run's events end in workflow_finished with status failed" \
    events 'names[-1] == "workflow_finished" and ev[-1]["data"]["status"] == "failed" and any(e["event"] == "node_finished" and e["data"]["status"] == "failed" for e in ev)'
sl run "$W/containers.yml" --inputs '{"items": {"list": [1, 2]}}' --limit max_loop_count=2 -q
check "loop_count above --limit max_loop_count: exit 1 naming the limit" \
    bash -c "[ $rc -eq 1 ] && grep -q 'max_loop_count' '$T/err'"
sl run "$W/containers.yml" --inputs '{"items": {"list": [1, 2, 3]}}' --limit max_iterations=2 -q
check "more items than --limit max_iterations: exit 1 naming the limit" \
    bash -c "[ $rc -eq 1 ] && grep -q 'max_iterations' '$T/err'"

cat >"$W/partial.yml" <<'EOF'
app: {mode: workflow, name: partial}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: s, label: S, type: text-input}]}}
    - id: fb
      data: {type: iteration, title: Fails to branch, iterator_selector: [start, s], output_selector: [fbs, x], error_strategy: fail-branch}
    - {id: fbs, parentId: fb, data: {type: iteration-start, title: in}}
    - {id: ok, data: {type: answer, title: OK path, answer: "ok"}}
    - {id: bad, data: {type: answer, title: Fail path, answer: "failed: {{#fb.error_type#}}"}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: bad, value_selector: [bad, answer]}]}}
    edges:
    - {source: start, target: fb}
    - {source: fb, target: ok, sourceHandle: source}
    - {source: fb, target: bad, sourceHandle: fail-branch}
    - {source: ok, target: end}
    - {source: bad, target: end}
EOF
sl run "$W/partial.yml" --input s=nope -q
check "a node ending in exception (fail-branch): exit 3" [ $rc -eq 3 ]
check "the fail branch ran" grep -qx 'bad: failed: IteratorVariableNotArrayError' "$T/out"
sl run "$W/partial.yml" --input s=nope --json -q
check "--json says partial-succeeded" json 'd["status"] == "partial-succeeded"'
sl run "$W/partial.yml" --input s=nope
check "progress marks the exception" bash -c "grep -q 'exception' '$T/err' && grep -q 'workflow partial-succeeded' '$T/err'"

# ---- files as inputs ----
cat >"$W/file.yml" <<'EOF'
app: {mode: workflow, name: file}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: doc, label: Doc, type: file, required: true, allowed_file_types: [document], allowed_file_upload_methods: [local_file]}]}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: f, value_selector: [start, doc]}]}}
    edges:
    - {source: start, target: end}
EOF
printf 'hello file\n' >"$T/notes.txt"
sl run "$W/file.yml" --input "doc=@$T/notes.txt" --json -q
check "NAME=@PATH passes a local file as a Dify file value" \
    json 'd["status"] == "succeeded" and d["outputs"]["f"]["dify_model_identity"] == "__dify__file__" and d["outputs"]["f"]["filename"] == "notes.txt" and d["outputs"]["f"]["size"] == 11 and d["outputs"]["f"]["transfer_method"] == "local_file" and d["outputs"]["f"]["extension"] == ".txt"'
sl run "$W/file.yml" --input "doc=@$T/absent.txt" -q
check "NAME=@PATH with a missing file: exit 2 naming it" \
    bash -c "[ $rc -eq 2 ] && grep -q 'absent.txt' '$T/err'"

# ---- chatflow ----
cat >"$W/chat.yml" <<'EOF'
app: {mode: advanced-chat, name: chat}
kind: app
version: 0.1.5
workflow:
  conversation_variables:
  - {id: c1, name: count, value: 0, value_type: number}
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: reply, data: {type: answer, title: Reply, answer: "you said {{#sys.query#}} ({{#conversation.count#}})"}}
    edges:
    - {source: start, target: reply}
EOF
sl run "$W/chat.yml" --query 'hi there' -q
check "advanced-chat: --query and the streamed answer on stdout" \
    bash -c "[ $rc -eq 0 ] && grep -qx 'you said hi there (0)' '$T/out'"
sl run "$W/chat.yml" --query hi --conversation '{"count": 5}' -q
check "advanced-chat: --conversation sets conversation variables" grep -qx 'you said hi (5)' "$T/out"
sl run "$W/chat.yml" --query hi --conversation 'nope' -q
check "--conversation that is not JSON: exit 2" [ $rc -eq 2 ]

# ---- if-else and variable-aggregator, once validate accepts them ----
cat >"$W/branch.yml" <<'EOF'
app: {mode: workflow, name: branch}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: score, label: Score, type: number, required: true}]}}
    - id: check
      data:
        type: if-else
        title: Check
        cases:
        - case_id: 'true'
          logical_operator: and
          conditions:
          - {id: c1, varType: number, variable_selector: [start, score], comparison_operator: '≥', value: '50'}
    - {id: pass, data: {type: answer, title: Pass, answer: "pass {{#start.score#}}"}}
    - {id: fail, data: {type: answer, title: Fail, answer: "fail {{#start.score#}}"}}
    - {id: join, data: {type: variable-aggregator, title: Join, output_type: string, variables: [[pass, answer], [fail, answer]]}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: verdict, value_selector: [join, output]}]}}
    edges:
    - {source: start, target: check}
    - {source: check, target: pass, sourceHandle: 'true'}
    - {source: check, target: fail, sourceHandle: 'false'}
    - {source: pass, target: join}
    - {source: fail, target: join}
    - {source: join, target: end}
EOF
sl validate "$W/branch.yml"
if [ $rc -eq 0 ]; then
    sl run "$W/branch.yml" --input score=75 --json -q
    check "if-else true branch, joined by the aggregator" \
        json 'd["status"] == "succeeded" and d["outputs"]["verdict"] == "pass 75"'
    sl run "$W/branch.yml" --input score=10 --events -q
    check "if-else false branch; the other branch is not run" \
        events 'ev[-1]["data"]["outputs"]["verdict"] == "fail 10" and "pass" not in [e["data"].get("node_id") for e in ev if e["event"] == "node_started"]'
    sl run "$W/branch.yml" --input score=50 -q
    check "if-else ≥ is inclusive" grep -qx 'verdict: pass 50' "$T/out"
else
    skip "if-else true branch (sluice validate does not accept if-else yet)"
    skip "if-else false branch"
    skip "if-else ≥ is inclusive"
fi

# An input the start node does not declare is passed through with a warning.
sl run tests/cases/engine/chat.yml --query hi --input bogus=1
check "an undeclared input warns and names it" \
    bash -c "[ $rc -eq 0 ] && grep -q \"input 'bogus' is not declared by the start node\" '$T/err'"
check "a chatflow answer streams to stdout" bash -c "grep -q 'you said: hi' '$T/out'"

# Terminal control sequences in what a workflow produced (a sandboxed
# program's output, an error it raised) are escaped on a terminal, and
# kept byte for byte on a pipe.
cat >"$W/esc.yml" <<'EOF'
app: {mode: workflow, name: esc}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: how, label: How, type: text-input, required: true}]}}
    - id: code
      data:
        type: code
        title: Escapes
        code_language: python3
        variables: [{variable: how, value_selector: [start, how]}]
        code: |
          def main(how: str) -> dict:
              evil = "A\x1b]52;c;ZXZpbA==\x07B\x1b[2JC\x9bD"
              if how == "raise":
                  raise ValueError(evil)
              return {"out": evil}
        outputs: {out: {type: string, children: null}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: out, value_selector: [code, out]}]}}
    edges:
    - {source: start, target: code}
    - {source: code, target: end}
EOF
if command -v script >/dev/null; then
    SLUICE="$SLUICE" W="$W" timeout 20 script -qec '"$SLUICE" run "$W/esc.yml" --input how=out' /dev/null >"$T/tty" 2>&1
    check "on a terminal, control sequences in outputs are shown escaped" \
        bash -c "grep -qF 'A\\x1b]52;c;ZXZpbA==\\x07B\\x1b[2JC\\x9bD' '$T/tty' && ! grep -q \$'\\x1b' '$T/tty'"
    SLUICE="$SLUICE" W="$W" timeout 20 script -qec '"$SLUICE" run "$W/esc.yml" --input how=raise' /dev/null >"$T/tty" 2>&1
    check "… and in errors on stderr" \
        bash -c "grep -qF 'A\\x1b]52;c;ZXZpbA==\\x07B' '$T/tty' && ! grep -q \$'\\x1b' '$T/tty'"
else
    skip "script(1) is not installed: no terminal to test on"
    skip "script(1) is not installed: no terminal to test on"
fi
sl run "$W/esc.yml" --input how=out -q
check "on a pipe, outputs are exact bytes" grep -q $'A\x1b]52;c;ZXZpbA==\x07B\x1b\\[2JC' "$T/out"

echo "1..$n"
