#!/usr/bin/env bash
# CLI: `sluice validate` on good and broken files: exit status, OK lines,
# every problem with file:line:col, warnings, -q, standard input, and the
# real Dify exports in the shared samples ($SHARED/dsl-samples, skipped
# when absent).  Prints TAP.
. "$(dirname "$0")/lib.bash"

cd "$T" || exit 2

cat >good.yml <<'EOF'
app: {mode: workflow, name: good}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: x, label: X, type: text-input, required: true}]}}
    - {id: say, data: {type: answer, title: Say, answer: "got {{#start.x#}}"}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: y, value_selector: [say, answer]}]}}
    edges:
    - {source: start, target: say}
    - {source: say, target: end}
EOF

# Line numbers matter below: the checks name them.
cat >bad.yml <<'EOF'
app: {mode: workflow, name: bad}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start}}
    - id: odd
      data:
        type: bogus
        title: Odd One
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: y, value_selector: [nowhere, v]}
    edges:
    - {source: start, target: odd}
    - {source: odd, target: ghost}
    - {source: start, target: end}
EOF

cat >syntax.yml <<'EOF'
app: {mode: workflow, name: broken}
kind: app
workflow:
  graph:
    nodes: [
      {id: a
EOF

cat >warn.yml <<'EOF'
app: {mode: workflow, name: warn}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start}}
    - {id: end, data: {type: end, title: End, outputs: []}}
    - {id: lonely, data: {type: answer, title: Lonely, answer: "x"}}
    edges:
    - {source: start, target: end}
EOF

cat >newer.yml <<'EOF'
app: {mode: workflow, name: newer}
kind: app
version: 1.0.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start}}
    edges: []
EOF

cat >chat.yml <<'EOF'
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

sl validate good.yml
check "a good file: exit 0" [ $rc -eq 0 ]
check "a good file: 'good.yml: OK' with mode, version and node count" \
    grep -q '^good.yml: OK (workflow, DSL 0.6.0, 3 nodes)' "$T/out"

sl validate chat.yml
check "an advanced-chat file with conversation variables validates" \
    bash -c "[ $rc -eq 0 ] && grep -q 'OK (advanced-chat' '$T/out'"

sl validate bad.yml
check "a broken file: exit 1" [ $rc -eq 1 ]
check "unknown type reported at bad.yml:10:15 with node id and title" \
    grep -q "^error: bad.yml:10:15: node 'odd' (Odd One): field data.type: unknown node type 'bogus'" "$T/err"
check "bad selector reported at bad.yml:17 naming the field" \
    bash -c "grep -q \"^error: bad.yml:17:[0-9]*: node 'end' (End): field outputs\\[0\\].value_selector: .*'nowhere'\" '$T/err'"
check "dangling edge reported at bad.yml:20" grep -q "^error: bad.yml:20:[0-9]*: .*'ghost'" "$T/err"
check "all problems at once, then a summary line" \
    bash -c "[ \$(grep -c '^error: ' '$T/err') -ge 3 ] && grep -q 'bad.yml: [0-9]* errors; the workflow cannot run' '$T/err'"
check "a broken file prints no OK line" [ ! -s "$T/out" ]

sl validate syntax.yml
check "a YAML syntax error: exit 1" [ $rc -eq 1 ]
check "a YAML syntax error says syntax.yml:line:col" grep -Eq '^syntax.yml:[0-9]+:[0-9]+: YAML syntax error' "$T/err"

sl validate newer.yml
check "a too-new DSL version: exit 1 naming the version at newer.yml:3" \
    bash -c "[ $rc -eq 1 ] && grep -q 'newer.yml:3:[0-9]*: .*1.0.0' '$T/err'"

sl validate warn.yml
check "warnings alone: exit 0" [ $rc -eq 0 ]
check "an unreachable node is a warning with file:line:col" \
    grep -q "^warning: warn.yml:9:[0-9]*: node 'lonely' (Lonely): .*never run" "$T/err"
sl validate -q warn.yml
check "-q hides warnings and the OK line" bash -c "[ $rc -eq 0 ] && [ ! -s '$T/out' ] && [ ! -s '$T/err' ]"
sl validate -q bad.yml
check "-q still prints errors" bash -c "[ $rc -eq 1 ] && grep -q '^error: bad.yml:10:15' '$T/err'"

sl validate good.yml bad.yml warn.yml
check "several files: exit 1 when any is bad" [ $rc -eq 1 ]
check "several files: the good ones still say OK" \
    bash -c "grep -q '^good.yml: OK' '$T/out' && grep -q '^warn.yml: OK' '$T/out'"

sl validate missing.yml
check "a missing file: exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q 'missing.yml' '$T/err'"

timeout 20 "$SLUICE" validate - <good.yml >"$T/out" 2>"$T/err"
rc=$?
check "validate - reads standard input" bash -c "[ $rc -eq 0 ] && grep -q 'OK (workflow' '$T/out'"
timeout 20 "$SLUICE" validate - <bad.yml >"$T/out" 2>"$T/err"
rc=$?
check "validate - on a bad file names <stdin>:line:col" \
    bash -c "[ $rc -eq 1 ] && grep -q '<stdin>:10:15' '$T/err'"

printf -- '- just\n- a list\n' >list.yml
sl validate list.yml
check "a YAML file that is not a DSL: exit 1 with a clear message" \
    bash -c "[ $rc -eq 1 ] && grep -q 'not a Dify DSL file' '$T/err'"

# A model node whose provider is not configured: the file is fine, this
# machine is not — a warning from validate (an error with --strict), and
# `sluice run` refuses it; each at its line, with the setting to add.
cat >model.yml <<'EOF'
app: {mode: workflow, name: model}
kind: app
version: 0.6.0
workflow:
  graph:
    edges:
    - {source: s, target: l}
    nodes:
    - {id: s, data: {type: start, title: Start, variables: []}}
    - id: l
      data:
        type: llm
        title: Ask
        model: {provider: langgenius/deepseek/deepseek, name: deepseek-chat, mode: chat}
        prompt_template: [{role: user, text: hi}]
EOF
env -u SLUICE_LLM_BASE_URL -u DEEPSEEK_API_KEY -u SLUICE_CONFIG "$SLUICE" validate model.yml >"$T/out" 2>"$T/err"
rc=$?
check "an unconfigured model provider: a warning, exit 0, at its line, naming DEEPSEEK_API_KEY" \
    bash -c "[ $rc -eq 0 ] && grep -q '^warning: .*model.yml:14:.*model provider .deepseek. is not configured: set DEEPSEEK_API_KEY' '$T/err'"
env -u SLUICE_LLM_BASE_URL -u DEEPSEEK_API_KEY -u SLUICE_CONFIG "$SLUICE" validate --strict model.yml >"$T/out" 2>"$T/err"
rc=$?
check "validate --strict: an error, exit 1" \
    bash -c "[ $rc -eq 1 ] && grep -q '^error: .*model.yml:14:.*model provider .deepseek. is not configured' '$T/err'"
env -u SLUICE_LLM_BASE_URL -u DEEPSEEK_API_KEY -u SLUICE_CONFIG "$SLUICE" run model.yml >"$T/out" 2>"$T/err"
rc=$?
check "sluice run refuses it: exit 2, nothing run" \
    bash -c "[ $rc -eq 2 ] && grep -q '^error: .*model provider .deepseek. is not configured' '$T/err'"
sed 's|provider: langgenius/deepseek/deepseek|provider: ""|' model.yml >empty.yml
SLUICE_LLM_BASE_URL=http://127.0.0.1:9/v1 "$SLUICE" validate empty.yml >"$T/out" 2>"$T/err"
rc=$?
check "an empty provider: exit 1, naming the node and field" \
    bash -c "[ $rc -eq 1 ] && grep -q \"node 'l' (Ask): field model.provider: is empty\" '$T/err'"
SLUICE_LLM_BASE_URL=http://127.0.0.1:9/v1 "$SLUICE" validate model.yml >"$T/out" 2>"$T/err"
rc=$?
check "with a catch-all endpoint it validates" bash -c "[ $rc -eq 0 ]"

# The real exports: each validates, or every error names an unsupported type.
# Their model nodes need an endpoint to load (it is never called here).
export SLUICE_LLM_BASE_URL=http://127.0.0.1:9/v1
dir=$SHARED/dsl-samples
if [ -d "$dir" ]; then
    count=0
    for f in "$dir"/*.yml; do
        count=$((count + 1))
        name=$(basename "$f")
        sl validate "$f"
        if [ $rc -eq 0 ]; then
            check "$name validates" grep -q ': OK (' "$T/out"
        else
            others=$(grep '^error: ' "$T/err" | grep -v 'is not supported by sluice yet' | grep -vc 'is not available in sluice')
            errors=$(grep -c '^error: ' "$T/err")
            check "$name: refused only for unsupported node types or plugins ($errors errors, $others others)" \
                bash -c "[ $rc -eq 1 ] && [ $errors -gt 0 ] && [ $others -eq 0 ]"
        fi
    done
    check "12 samples validated (found $count)" [ "$count" -eq 12 ]
else
    skip "the shared Dify exports validate (no $dir; SLUICE_SHARED names the folder that holds dsl-samples/)"
fi

echo "1..$n"
