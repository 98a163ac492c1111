#!/usr/bin/env bash
# The processors a sandboxed command may run on: init keeps each new
# command on its own processor until it execs (init.c, pin_to_this_cpu),
# so the command, its children and init itself must all end up with the
# set sluice was started with, never with the one processor.
. "$(dirname "$0")/lib.bash"
if ! "$SLUICE" sandbox run --mem none -- true >"$T/out" 2>"$T/err"; then
    skip "no local sandbox here: $(head -c 200 "$T/err")"
    echo "1..$n"; exit 0
fi
cpus() { awk '/^Cpus_allowed_list/ {print $2}' "$1"; }
host=$(cpus /proc/self/status)

sl sandbox run --mem none -- sh -c \
    'grep Cpus_allowed_list /proc/self/status; sh -c "grep Cpus_allowed_list /proc/self/status"; grep Cpus_allowed_list /proc/1/status'
check "runs (rc $rc)" [ "$rc" = 0 ]
mapfile -t got < <(awk '{print $2}' "$T/out")
check "the command may run on every processor sluice may ($host, got ${got[0]:-none})" \
    [ "${got[0]:-}" = "$host" ]
check "so may its children (got ${got[1]:-none})" [ "${got[1]:-}" = "$host" ]
check "and init, once the command runs (got ${got[2]:-none})" [ "${got[2]:-}" = "$host" ]

# a narrower set given to sluice is the sandbox's too
if command -v taskset >/dev/null && [ "$(nproc --all)" -gt 1 ]; then
    one=$(awk -F'[-,]' '{print $NF}' <<<"$host")
    timeout -k 2 20 taskset -c "$one" "$SLUICE" sandbox run --mem none -- \
        grep Cpus_allowed_list /proc/self/status >"$T/out" 2>"$T/err"
    rc=$?
    got=$(awk '{print $2}' "$T/out")
    check "taskset -c $one: the command gets processor $one (rc $rc, got ${got:-none})" \
        [ "$rc" = 0 ] && [ "$got" = "$one" ]
else
    skip "taskset: needs taskset and two processors"
fi

# many commands in a row: none is left on one processor
bad=0
for i in 1 2 3 4 5 6; do
    "$SLUICE" sandbox run --mem none -- grep Cpus_allowed_list /proc/self/status >"$T/out" 2>"$T/err" || bad=1
    [ "$(awk '{print $2}' "$T/out")" = "$host" ] || bad=1
done
check "six runs: every command has every processor" [ "$bad" = 0 ]
echo "1..$n"
