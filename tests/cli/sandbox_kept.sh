#!/usr/bin/env bash
# Kept namespaces (src/sandbox/local/kept.h): run as root, sluice keeps the
# sandbox root it builds and empty network namespaces between processes.
# What one sandbox does must not reach the next, what is kept is checked
# before use, and a folder that is not root's alone is not used.
. "$(dirname "$0")/lib.bash"
K=$T/kept
export SLUICE_SANDBOX_KEPT=$K
on_exit() { SLUICE_SANDBOX_KEPT=$K "$SLUICE" sandbox clean >/dev/null 2>&1; }
if [ "$(id -u)" != 0 ]; then
    skip "kept namespaces are root's: not root here"
    echo "1..$n"
    exit 0
fi
run() { sl sandbox run --mem none "$@"; }

run -- sh -c 'id -u; hostname; cat /etc/hostname'
check "a first sandbox runs (exit $rc; $(head -c 200 "$T/err"))" [ "$rc" = 0 ]
check "its user is 1000 and its host name sandbox" \
    bash -c "[ \"\$(tr '\n' ' ' <'$T/out')\" = '1000 sandbox sandbox ' ]"
check "the folder is made root's, mode 0700" \
    bash -c "[ \"\$(stat -c '%u %a' '$K')\" = '0 700' ]"
roots=$(ls "$K" | grep -c '^root-')
check "one root kept (got $roots)" [ "$roots" = 1 ]
check "a network namespace kept" [ -e "$K/net-0" ]
check "the pins are namespaces (nsfs)" \
    bash -c "[ \"\$(stat -f -c %T '$K'/root-*)\" = nsfs ] && [ \"\$(stat -f -c %T '$K/net-0')\" = nsfs ]"

# Each sandbox has an IPC namespace of its own (an early init makes it
# while it waits for its plan): System V objects reach neither the host
# nor the next sandbox.
host_ipc=$(readlink /proc/self/ns/ipc)
run -- sh -c 'readlink /proc/self/ns/ipc; ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcs -m -q | grep -c "^0x"'
first=$(head -1 "$T/out")
check "a sandbox's IPC namespace is its own (exit $rc; $(tr '\n' ' ' <"$T/out"))" \
    bash -c "[ $rc = 0 ] && [ -n '$first' ] && [ '$first' != '$host_ipc' ] && [ \"\$(sed -n 2p '$T/out')\" = 2 ]"
run -- sh -c 'readlink /proc/self/ns/ipc; ipcs -m -q | grep -c "^0x"; exit 0'
check "the next sandbox sees none of its objects ($(tr '\n' ' ' <"$T/out"))" \
    bash -c "[ $rc = 0 ] && [ \"\$(sed -n 2p '$T/out')\" = 0 ]"

# The kept root's device nodes are its own (made once, not bound per
# sandbox): they work, and the sandbox can change none of them.
run -- sh -c 'echo x >/dev/null && head -c 3 /dev/zero | od -An -tx1 && stat -c "%a %F" /dev/null /dev/urandom && chmod 600 /dev/null; mknod /dev/sda b 8 0; rm -f /dev/zero; test -c /dev/zero && echo kept'
check "kept /dev: null, zero, urandom work and stay (exit $rc; $(tr '\n' ' ' <"$T/out"))" \
    bash -c "[ \"\$(tr '\n' ' ' <'$T/out')\" = ' 00 00 00 666 character special file 666 character special file kept ' ]"
check "kept /dev: no mount per device node" \
    bash -c "! '$SLUICE' sandbox run --mem none -- cat /proc/self/mountinfo | grep -q ' /dev/null '"

# One-shot: the command goes to init with the set-up and init ends with
# it; its limits still hold, and nothing of it stays behind.
start=$(date +%s%N)
run --timeout 1 -- sh -c 'sleep 31.4159 & sleep 20'
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "one shot: --timeout still kills (exit $rc, ${ms} ms)" \
    bash -c "[ $rc = 124 ] && [ $ms -lt $((3000 + ${SLACK_MS:-0})) ]"
run --output 100 -- yes
check "one shot: --output still caps (exit $rc, $(wc -c <"$T/out") bytes)" \
    bash -c "[ $rc = 137 ] && [ \"\$(wc -c <'$T/out')\" = 100 ]"
run -- sh -c 'printf in:; cat; exit 3' <<<"data"
check "one shot: stdin in, stdout out, the exit code (exit $rc, $(cat "$T/out"))" \
    bash -c "[ $rc = 3 ] && [ \"\$(cat '$T/out')\" = in:data ]"
sleep 0.2
check "one shot: what the command left running is gone" \
    bash -c "! pgrep -f 'sleep 31[.]4159' >/dev/null"

# What a sandbox does stays in it.
run -- sh -c 'echo left >/workspace/mark; echo left >/tmp/mark; /usr/bin/python3 -c "import socket; socket.sethostname(\"evil\")" 2>&1; touch /etc/x 2>&1; exit 0'
check "a sandbox cannot rename the kept host name" grep -q 'Operation not permitted' "$T/out"
check "a sandbox cannot write the kept root" grep -qi 'read-only' "$T/out"
run -- sh -c 'ls /workspace /tmp; hostname; ls /etc/x 2>&1'
check "the next sandbox has an empty workspace and /tmp (got: $(tr '\n' ' ' <"$T/out"))" \
    bash -c "! grep -q mark '$T/out'"
check "the next sandbox is still called sandbox" grep -qx sandbox "$T/out"
check "the same root served both" [ "$(ls "$K" | grep -c '^root-')" = 1 ]
if [ -d /sys/fs/cgroup/pids/sluice ] || [ -d /sys/fs/cgroup/sluice ]; then
    check "a cgroup is kept too, with its slot's lock" \
        bash -c "ls -d /sys/fs/cgroup/*/sluice/kept-* /sys/fs/cgroup/sluice/kept-* 2>/dev/null | grep -q kept && ls '$K' | grep -q '^cg-'"
else
    skip "no cgroup hierarchy of sluice's here"
fi

# A port a sandbox listened on is free for the next one in the same namespace.
py='import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 8765)); s.listen(); print("bound")'
run -- /usr/bin/python3 -c "$py"
first=$rc
run -- /usr/bin/python3 -c "$py"
check "two sandboxes in turn each bind 127.0.0.1:8765 (exit $first, $rc)" \
    bash -c "[ $first = 0 ] && [ $rc = 0 ]"
run -- /usr/bin/python3 -c 'import fcntl, socket, struct; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); f = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0)))[1]; print("up" if f & 1 else "down"); fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", f & ~1))'
check "loopback is up in a kept network namespace" grep -qx up "$T/out"
check "and a sandbox cannot take it down ($(tail -c 120 "$T/err"))" grep -qi 'not permitted' "$T/err"
run -- /usr/bin/python3 -c "$py"
check "so the next sandbox still has it (exit $rc)" [ "$rc" = 0 ]

# Concurrent sandboxes get network namespaces of their own.
"$SLUICE" sandbox run --mem none -- /usr/bin/python3 -c "$py; import time; time.sleep(2)" >"$T/a" 2>&1 &
a=$!
sleep 0.7
run -- /usr/bin/python3 -c "$py"
wait "$a"
check "a second sandbox binds the port the first holds (exit $rc)" [ "$rc" = 0 ]
check "each used its own slot" [ -e "$K/net-1" ]

# Checked before use: a pin that is not a namespace is replaced.
root=$(ls "$K" | grep '^root-' | head -1)
umount "$K/$root" && rm -f "$K/$root" && echo junk >"$K/$root"
run -- cat /etc/hostname
check "a root pin that is a plain file is rebuilt (exit $rc)" [ "$rc" = 0 ]
check "and is a namespace again" bash -c "[ \"\$(stat -f -c %T '$K/$root')\" = nsfs ]"

# Roots of other builds pile up: past 32 the others are let go.
for i in $(seq 40); do : >"$K/root-$(printf %016x "$i")"; : >"$K/uts-$(printf %016x "$i")"; done
umount "$K/$root" "$K/uts-${root#root-}" && rm -f "$K/$root" "$K/uts-${root#root-}"
run -- true
check "past 32 kept roots, the others are let go (exit $rc, $(ls "$K" | grep -c '^root-') left)" \
    bash -c "[ $rc = 0 ] && [ \"\$(ls '$K' | grep -c '^root-')\" = 1 ] && [ \"\$(ls '$K' | grep -c '^uts-')\" = 1 ]"

# A folder others may write is refused: the sandbox is built in place.
sl sandbox clean
check "clean removes what is kept ($(cat "$T/out"))" \
    bash -c "grep -q 'removed 1 kept root' '$T/out' && [ -z \"\$(ls '$K' | grep -v lock)\" ]"
check "and the cgroups kept for new sandboxes" grep -q 'kept cgroups' "$T/out"
chmod 0755 "$K"
SLUICE_SANDBOX_KEPT=$K sl sandbox check
check "sandbox check says a folder open to others is not used" grep -q "must be a folder owned by root with mode 0700" "$T/out"
run -- true
check "a sandbox still runs (exit $rc)" [ "$rc" = 0 ]
check "and nothing was kept there" bash -c "[ -z \"\$(ls '$K' | grep -v lock)\" ]"
chmod 0700 "$K"
mkdir -m 0777 "$T/open"
SLUICE_SANDBOX_KEPT=$T/open/kept sl sandbox check
check "a folder inside one anybody may change is not used" grep -q "may be changed by users other than root" "$T/out"
SLUICE_SANDBOX_KEPT=off sl sandbox run --mem none -- id -u
check "SLUICE_SANDBOX_KEPT=off: the sandbox is built in place (exit $rc)" \
    bash -c "[ $rc = 0 ] && grep -qx 1000 '$T/out'"
echo "1..$n"
