#!/usr/bin/env bash
# CLI: a sandbox's memory limit holds by every route, or is refused
# (issue #13 §6).  The measure: a `--mem 64M` sandbox cannot raise the
# host's memory use by more than 128 MiB, whether by private or shared
# anonymous memory, memfd, /dev/shm and tmpfs files, System V shared
# memory, pipe buffers filled from many processes, loopback socket buffers
# (thousands of TCP and unix socket pairs with unread data, UDP queues),
# netlink queues, or a fan-out to the process limit.  Each route is tried
# by tests/sandbox/memhog.c, which counts what it holds at once (bytes in
# memory and in kernel buffers, a lower bound of what the host pays) and
# aims for 256 MiB, so a route left open shows.  The host's MemAvailable
# drop is printed too, but other processes make it too noisy to assert.
#
# Where no memory cgroup can hold the limit (an unprivileged user without
# a delegated cgroup; tested as nobody when root), every memory limit is
# refused with exit 2 and how to get one, `sluice sandbox check` says so,
# and a workflow's code node fails with that message unless the run sets
# sandbox_memory_bytes=0.  Prints TAP.
. "$(dirname "$0")/lib.bash"

H=
on_exit() { [ -n "$H" ] && rm -rf "$H"; }
H=$(mktemp -d "${TMPDIR:-/tmp}/sluice-mem.XXXXXX")
chmod 755 "$H"
cp "$SLUICE" "$H/sluice"
if ! cc -O1 -w -o "$H/memhog" tests/sandbox/memhog.c 2>"$T/cc"; then
    echo "not ok - cannot build tests/sandbox/memhog.c:"; sed 's/^/# /' "$T/cc"
    exit 1
fi
chmod 755 "$H"/*
BOUND=$((128 << 20))
MIB=$((1 << 20))

# route NAME WORKERS [MIN]: memhog NAME under --mem 64M; ok when what it
# held at once stayed within BOUND, a limit stopped it before its 256 MiB,
# and it held at least MIN MiB first (a route that pins nothing proves
# nothing).  MIN 0: the route must be refused outright (stop=EPERM).
route() {
    local name=$1 workers=$2 min=${3:-16} t0 ms line peak at stop delta
    t0=$(date +%s%N)
    timeout -k 2 30 "$H/sluice" sandbox run --mem 64M --bind "$H:/tmp/t" -- \
        /tmp/t/memhog "$name" 256 "$workers" 3 </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    line=$(grep '^memhog ' "$T/out")
    peak=$(sed -n 's/.* peak=\([0-9]*\).*/\1/p' <<<"$line")
    stop=$(sed -n 's/.* stop=\([^ ]*\).*/\1/p' <<<"$line")
    delta=$(sed -n 's/.* host_delta=\([0-9-]*\).*/\1/p' <<<"$line")
    at=${peak:-0}
    if [ -z "$line" ]; then
        # The OOM killer took the first process, which ends the command:
        # the workers' running count is all there is (it can count memory
        # of a killed worker twice, so it errs high).
        at=$(awk '$1 == "at" && $2 > m { m = $2 } END { print m + 0 }' "$T/out")
        stop=$([ "$rc" -eq 137 ] && err_has "memory (64 MiB" && echo killed-all)
    fi
    echo "# $name: held $((at / MIB)) MiB at most, stopped by ${stop:-nothing} (exit $rc, ${ms} ms; host MemAvailable fell $((${delta:-0} / MIB)) MiB)"
    if [ "$min" -eq 0 ]; then
        check "--mem 64M, $name: refused outright (EPERM), nothing held" \
            [ "$stop" = EPERM -a "$at" -eq 0 ]
        return
    fi
    check "--mem 64M, $name: at most 128 MiB held ($((at / MIB)) MiB), stopped by a limit (${stop:-none}) after at least $min MiB" \
        [ -n "$stop" -a "$stop" != target -a "$at" -le "$BOUND" -a "$at" -ge $((min * MIB)) ]
}

# ---- as this user ----

timeout 20 "$H/sluice" sandbox check >"$T/check" 2>&1
if grep -q '^cgroups: cgroup' "$T/check"; then
    echo "# $(grep '^memory limit' "$T/check")"
    route anon 8
    route shared 8
    route memfd 1
    route shm 1
    route tmpfs 1
    route sysv 4
    route pipe 16
    route tcp 16
    route unix 8
    route udp 4 8
    route netlink 1 0
    route fork 1000 8
    # the socket watch names what it stopped
    timeout -k 2 30 "$H/sluice" sandbox run --mem 64M --bind "$H:/tmp/t" -- \
        /tmp/t/memhog tcp 256 16 3 </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    if grep -q '^memory limit: cgroup v1' "$T/check"; then
        check "--mem 64M, tcp on cgroup v1: ended by sluice's socket watch, exit 137, stderr names it" \
            eval '[ "$rc" -eq 137 ] && err_has "memory (64 MiB; socket buffers)"'
    else
        skip "--mem 64M, tcp: the socket watch is for cgroup v1 only (v2 counts sockets in memory.max)"
    fi
    # a limit that holds leaves ordinary work alone
    timeout -k 2 30 "$H/sluice" sandbox run --mem 64M -- python3 -c '
import socket, threading
a, b = socket.socketpair(); data = b"x" * (8 << 20)
t = threading.Thread(target=a.sendall, args=(data,)); t.start()
got = 0
while got < len(data): got += len(b.recv(1 << 16))
t.join(); s = bytearray(32 << 20); print("fine", got)' </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    check "--mem 64M: 32 MiB of memory and 8 MiB through a socket pair are fine" \
        eval '[ "$rc" -eq 0 ] && out_has "fine 8388608"'
else
    skip "the memory routes: no memory cgroup for this user ($(grep -m1 '^cgroups' "$T/check"))"
fi

# ---- without a memory cgroup ----

# refusals RUNAS...: the checks for a user who has no memory cgroup
refusals() {
    local who=$1
    shift
    timeout 20 "$@" "$H/sluice" sandbox check >"$T/out" 2>"$T/err"
    check "$who: sandbox check says memory limits cannot be enforced, and how to get them" \
        eval 'out_has "memory limit: CANNOT be enforced" && out_has "Delegate=yes" && out_has "sandbox: works"'
    timeout 20 "$@" "$H/sluice" sandbox run --mem 64M -- true </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    check "$who: --mem 64M is refused, exit 2, saying why and how to get delegation" \
        eval '[ "$rc" -eq 2 ] && err_has "memory limit (64 MiB) cannot be enforced here" &&
              err_has "systemd-run --user --scope -p Delegate=yes" && err_has "--mem none"'
    timeout 20 "$@" "$H/sluice" sandbox run -- true </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    check "$who: the default limit (1 GiB) is refused the same way, exit 2" \
        eval '[ "$rc" -eq 2 ] && err_has "memory limit (1 GiB) cannot be enforced here"'
    timeout 20 "$@" "$H/sluice" sandbox run --mem none -- sh -c 'echo ran' </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    check "$who: --mem none runs without a memory limit" eval '[ "$rc" -eq 0 ] && out_has ran'
    timeout 30 "$@" "$H/sluice" run "$H/code.yml" >"$T/out" 2>"$T/err"
    rc=$?
    check "$who: a workflow's code node fails with the refusal, not silently unlimited" \
        eval '[ "$rc" -ne 0 ] && grep -q "cannot be enforced" "$T/out" "$T/err" &&
              grep -q "sandbox_memory_bytes=0" "$T/out" "$T/err" && ! grep -qx "y: 42" "$T/out"'
    timeout 30 "$@" "$H/sluice" run "$H/code.yml" --limit sandbox_memory_bytes=0 >"$T/out" 2>"$T/err"
    rc=$?
    check "$who: with --limit sandbox_memory_bytes=0 the code node runs" \
        eval '[ "$rc" -eq 0 ] && grep -qx "y: 42" "$T/out"'
}

cat >"$H/code.yml" <<'EOF'
app: {mode: workflow, name: mem-refusal}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: calc
      data:
        type: code
        title: Calc
        code_language: python3
        variables: []
        code: |
          def main() -> dict:
              return {"y": 42}
        outputs:
          y: {type: number, children: null}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: y, value_selector: [calc, y]}
    edges:
    - {source: start, target: calc}
    - {source: calc, target: end}
EOF
chmod 644 "$H/code.yml"

if ! grep -q '^cgroups: cgroup' "$T/check"; then
    refusals "uid $(id -u)"
elif [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    timeout 20 "${AS_NOBODY[@]}" "$H/sluice" sandbox run --mem none -- true </dev/null \
        >"$T/out" 2>"$T/err"
    if [ $? -eq 125 ] && err_has namespaces; then
        skip "nobody: unprivileged user namespaces are unavailable"
    else
        refusals nobody "${AS_NOBODY[@]}"
    fi
else
    skip "the refusals without a cgroup: this user has one, and cannot become nobody"
fi
echo "1..$n"
