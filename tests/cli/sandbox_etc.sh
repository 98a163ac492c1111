#!/usr/bin/env bash
# The local sandbox shows nothing of the host it does not need: no
# pip.conf / npmrc / gitconfig / wgetrc (they can hold index tokens and
# passwords) unless sluice.yml lists them in sandbox.local.host_etc, and no
# host path of sluice's own in /proc/self/mountinfo.
. "$(dirname "$0")/lib.bash"
made=()
on_exit() { local f; for f in "${made[@]}"; do rm -f "$f"; done; }
# A host pip.conf with a token, made for the test when the host has none
# (and only then: a host's own is never touched).
if [ ! -e /etc/pip.conf ] && [ -w /etc ]; then
    printf '[global]\nindex-url = https://user:PIPTOKEN-4711@pypi.example/simple\n' >/etc/pip.conf
    made+=(/etc/pip.conf)
fi
sl sandbox run --mem none -- sh -c 'cat /etc/pip.conf 2>&1; echo; cat /proc/self/mountinfo'
check "sandbox run: exit 0 (got $rc)" [ "$rc" = 0 ]
if [ -e /etc/pip.conf ]; then
    check "the host's /etc/pip.conf is not in the sandbox" grep -q 'pip.conf: No such file' "$T/out"
else
    skip "no /etc/pip.conf on this host and /etc is not writable"
fi
check "mountinfo names no folder of sluice's (no sluice-etc-*, no TMPDIR path)" \
    bash -c "! grep -Eq 'sluice-etc|/tmp/sluice|${TMPDIR:-/tmp}/tmp' '$T/out'"
check "mountinfo names no folder of this checkout" bash -c "! grep -qF '$PWD' '$T/out'"
check "the sandbox's /etc is its own (hostname sandbox)" \
    bash -c "$SLUICE sandbox run --mem none -- cat /etc/hostname | grep -qx sandbox"

# sluice.yml opts in: sandbox.local.host_etc
cat >"$T/sluice.yml" <<'EOF'
sandbox:
  local: {host_etc: [pip.conf]}
EOF
cat >"$T/cmd.yml" <<'EOF'
app: {mode: workflow, name: etc}
kind: app
version: 0.6.0
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: cmd, data: {type: command, title: Cat, command: "cat /etc/pip.conf 2>/dev/null || echo none"}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: out, value_selector: [cmd, stdout]}]}}
    edges:
    - {source: start, target: cmd}
    - {source: cmd, target: end}
EOF
sl run "$T/cmd.yml" -q --limit sandbox_memory_bytes=0
check "a command node sees no pip.conf by default" bash -c "[ $rc = 0 ] && grep -q 'none' '$T/out'"
if [ -e /etc/pip.conf ]; then
    sl run "$T/cmd.yml" -q --limit sandbox_memory_bytes=0 --config "$T/sluice.yml"
    last=$(grep -v '^[[:space:]]*$' /etc/pip.conf | tail -1)
    check "with sandbox.local.host_etc: [pip.conf] it does" bash -c "[ $rc = 0 ] && grep -qF -- '$last' '$T/out'"
else
    skip "no /etc/pip.conf on this host"
fi
printf 'sandbox:\n  local: {host_etc: [shadow]}\n' >"$T/bad.yml"
sl run "$T/cmd.yml" -q --limit sandbox_memory_bytes=0 --config "$T/bad.yml"
check "host_etc refuses files outside its list (shadow), naming it" \
    bash -c "[ $rc != 0 ] && grep -q \"'shadow' is not one of pip.conf, npmrc, gitconfig, wgetrc\" '$T/err'"
# A limit hit names the option that raises it (decided by the limit's kind)
sl sandbox run --mem none --cpu-seconds 1 -- sh -c 'while :; do :; done'
check "a CPU limit names --cpu-seconds" \
    bash -c "[ $rc = 137 ] && grep -qF 'CPU time (1 s) limit (--cpu-seconds)' '$T/err'"
sl sandbox run --mem none --output 100 -- sh -c 'yes'
check "an output limit names --output" \
    bash -c "[ $rc = 137 ] && grep -qF 'output (100 bytes) limit (--output)' '$T/err'"
echo "1..$n"
