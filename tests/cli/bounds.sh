#!/usr/bin/env bash
# CLI: every bound holds for templates too.  A template-transform node that
# would loop for hours ends at the run's deadline (max_time_s) with an error
# naming it, and within a second of SIGINT or SIGTERM (exit 130); one that
# grows its values ends at template_max_bytes with the process's memory
# bounded; a jinja2 LLM prompt obeys the deadline too; `sluice render` takes
# both limits.  Prints TAP.
. "$(dirname "$0")/lib.bash"
on_exit() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; }
pid=

# tt TEMPLATE: a workflow whose one template-transform node (id tt, title
# Spin) renders TEMPLATE (one line, YAML double-quoted)
tt() {
    cat <<EOF
app: {mode: workflow, name: bounds}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: tt
      data: {type: template-transform, title: Spin, variables: [], template: "$1"}
    - {id: end, data: {type: end, title: End, outputs: [{variable: out, value_selector: [tt, output]}]}}
    edges:
    - {source: start, target: tt}
    - {source: tt, target: end}
EOF
}

# Hours of work within the loop cap: a million rounds, each replacing in a
# 100 KB string.
SPIN="{% set s = 'x' * 100000 %}{% for i in range(1000000) %}{% set t = s|replace('x', 'yy') %}{% endfor %}done"
tt "$SPIN" >"$T/spin.yml"
# 3,000 appends of 300 KB: 889 MB before the budget
tt "{% set s = 'x' * 300000 %}{% set l = [] %}{% for i in range(3000) %}{% set _ = l.append(s ~ i) %}{% endfor %}{{ l|length }}" >"$T/grow.yml"
# 40 appends of 300 KB: 12 MB, fine by default
tt "{% set s = 'x' * 300000 %}{% set l = [] %}{% for i in range(40) %}{% set _ = l.append(s ~ i) %}{% endfor %}{{ l|length }}" >"$T/some.yml"


# ---- the limit ----
sl limits
check "sluice limits lists template_max_bytes (64 MiB)" \
    grep -Eq '^ *template_max_bytes +67108864 ' "$T/out"

# ---- the deadline ----
t0=$(date +%s%N)
sl run "$T/spin.yml" --limit max_time_s=2
ms=$(ms_since "$t0")
check "max_time_s=2: the template ends the run with exit 1 (got $rc)" [ "$rc" = 1 ]
check "… within 3 s (${ms} ms)" [ "$ms" -lt 3000 ]
check "… saying the node, the limit and how to raise it" \
    grep -q "node 'tt' (Spin) failed: template:1:[0-9]*: the run took longer than max_time_s (2 s); raise it with --limit max_time_s=N" "$T/err"
sl run "$T/spin.yml" --limit max_time_s=1 --json
check "… and with --json: status failed, the error names max_time_s" \
    python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["status"] == "failed" and "max_time_s" in d["error"]))' "$T/out"

# ---- SIGINT, SIGTERM ----
# stop SIGNAL: starts the spinning run, waits until the template node runs,
# sends SIGNAL; rc is the exit status ("hung" after 10 s), ms the time the
# process took to end after the signal.
stop() {
    : >"$T/out"; : >"$T/err"
    "$SLUICE" run "$T/spin.yml" >"$T/out" 2>"$T/err" &
    pid=$!
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q '> Spin (template-transform)' "$T/err" 2>/dev/null && break
        sleep 0.1
    done
    sleep 0.5
    local t0
    t0=$(date +%s%N)
    kill "-$1" "$pid" 2>/dev/null
    for ((i = 0; i < 1000; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    ms=$(ms_since "$t0")
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        rc=hung
    else
        wait "$pid"
        rc=$?
    fi
    pid=
}
for sig in INT TERM; do
    stop "$sig"
    check "SIG$sig in a template node: exit 130 (got $rc)" [ "$rc" = 130 ]
    check "… within a second (${ms} ms)" [ "$ms" -lt "$SLACK_MS" ]
    check "… the node and the run say stopped" \
        bash -c 'grep -q "Spin (template-transform) stopped" "$0" && grep -q "workflow stopped" "$0"' "$T/err"
done

# ---- memory ----
# peak COMMAND...: runs it; its exit status in rc, its peak resident memory
# (KB) in kb
peak() {
    read -r rc kb < <(python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[3:], stdout=open(sys.argv[1], "w"), stderr=open(sys.argv[2], "w"))
_, st, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(st), ru.ru_maxrss)' "$T/out" "$T/err" "$@")
}
peak "$SLUICE" run "$T/grow.yml"
check "3,000 appends of 300 KB: the run fails (exit $rc)" [ "$rc" = 1 ]
check "… at the budget, naming template_max_bytes and how to raise it" \
    grep -q "template:1:[0-9]*: the values this template made take more than 67108864 bytes of memory (its budget); raise the limit template_max_bytes (--limit template_max_bytes=N)" "$T/err"
check "… with the process's peak memory bounded (${kb} KB < 200 MB)" [ "$kb" -lt 204800 ]
sl run "$T/some.yml"
check "40 appends of 300 KB are fine by default" out_has 40
sl run "$T/some.yml" --limit template_max_bytes=4m
check "… and refused with --limit template_max_bytes=4m" err_has "more than 4194304 bytes"
SLUICE_TEMPLATE_MAX_BYTES=4m sl run "$T/some.yml"
check "… and with SLUICE_TEMPLATE_MAX_BYTES=4m" err_has "more than 4194304 bytes"
sl run "$T/some.yml" --limit template_max_bytes=lots
check "a bad template_max_bytes is a usage error (exit $rc)" \
    bash -c '[ "$0" = 2 ] && grep -q "template_max_bytes" "$1"' "$rc" "$T/err"

# ---- a jinja2 LLM prompt: rendered before any model call ----
cat >"$T/prompt.yml" <<EOF
app: {mode: workflow, name: prompt}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: llm
      data:
        type: llm
        title: Ask
        model: {provider: openai, name: gpt-4o, mode: chat, completion_params: {}}
        prompt_template:
        - {role: user, edition_type: jinja2, text: '', jinja2_text: "$SPIN"}
        prompt_config: {jinja2_variables: []}
        context: {enabled: false, variable_selector: []}
        vision: {enabled: false}
    - {id: end, data: {type: end, title: End, outputs: [{variable: t, value_selector: [llm, text]}]}}
    edges:
    - {source: start, target: llm}
    - {source: llm, target: end}
EOF
t0=$(date +%s%N)
OPENAI_API_KEY=sk-unused OPENAI_BASE_URL=http://127.0.0.1:9/v1 sl run "$T/prompt.yml" --limit max_time_s=1
ms=$(ms_since "$t0")
check "a jinja2 prompt under max_time_s=1 ends the run (exit $rc, ${ms} ms)" \
    [ "$rc" = 1 -a "$ms" -lt $((1000 + SLACK_MS)) ]
check "… naming max_time_s" grep -q "node 'llm' (Ask) failed: jinja2_text:1:[0-9]*: the run took longer than max_time_s" "$T/err"

# ---- sluice render ----
printf '%s' "$SPIN" >"$T/spin.j2"
t0=$(date +%s%N)
sl render "$T/spin.j2" --limit max_time_s=1
ms=$(ms_since "$t0")
check "sluice render --limit max_time_s=1 ends (exit $rc) within 1 s and slack (${ms} ms)" \
    [ "$rc" = 1 -a "$ms" -lt $((1000 + SLACK_MS)) ]
check "… saying so" err_has "took longer than max_time_s (1 s); raise it with --limit max_time_s=N"
printf '%s' "{% set l = [] %}{% for i in range(100) %}{% set _ = l.append('x' * 100000 ~ i) %}{% endfor %}{{ l|length }}" >"$T/grow.j2"
sl render "$T/grow.j2"
check "sluice render: 10 MB of values are fine by default" out_has 100
sl render "$T/grow.j2" --limit template_max_bytes=1m
check "… refused with --limit template_max_bytes=1m (exit $rc)" \
    bash -c '[ "$0" = 1 ] && grep -q "more than 1048576 bytes of memory (its budget); raise the limit template_max_bytes (sluice render --limit template_max_bytes=N)" "$1"' "$rc" "$T/err"
SLUICE_TEMPLATE_MAX_BYTES=1m sl render "$T/grow.j2"
check "… and with SLUICE_TEMPLATE_MAX_BYTES=1m" err_has "more than 1048576 bytes"
sl render "$T/grow.j2" --limit max_time_s=soon
check "… a bad max_time_s is a usage error (exit $rc)" [ "$rc" = 2 ]

echo "1..$n"
