#!/usr/bin/env bash
# Which init program a sandbox execs: the sluice-init installed beside
# sluice only when it checks out (owner, mode, size, first page with the
# build ID), else a memfd copy of the one built in.  strace shows which.
. "$(dirname "$0")/lib.bash"
init=$(dirname "$SLUICE")/sluice-init
if ! command -v strace >/dev/null; then
    skip "no strace on this host"
    echo "1..$n"; exit 0
fi
if [ ! -f "$init" ]; then
    skip "no sluice-init beside $SLUICE"
    echo "1..$n"; exit 0
fi
mkdir "$T/bin"
cp "$SLUICE" "$T/bin/sluice"
# trace SLUICE: runs `true` in a sandbox under strace; $T/trace has the
# memfd_create and execveat calls, rc the exit status
# (LeakSanitizer cannot work under ptrace: a sanitizer build checks no
# leaks here, or it would fail at exit whatever sluice did.)
trace() {
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        timeout -k 2 20 strace -f -o "$T/trace" -e trace=memfd_create,execveat \
        "$1" sandbox run --mem none -- sh -c 'exit 7' >"$T/out" 2>"$T/err"
    rc=$?
}
used_file() { grep -q 'execveat(.*"sluice-init"' "$T/trace" && ! grep -q memfd_create "$T/trace"; }
used_memfd() { grep -q 'memfd_create("sluice-init"' "$T/trace"; }

trace "$T/bin/sluice"
check "alone: the command's status (7, got $rc)" [ "$rc" = 7 ]
check "alone: init comes from a memfd" used_memfd

cp "$init" "$T/bin/sluice-init"
chmod 0755 "$T/bin/sluice-init"
trace "$T/bin/sluice"
check "beside it: the command's status (7, got $rc)" [ "$rc" = 7 ]
check "beside it: the installed init is exec'd, no memfd" used_file

chmod g+w "$T/bin/sluice-init"
trace "$T/bin/sluice"
check "group-writable: the status (7, got $rc)" [ "$rc" = 7 ]
check "group-writable: not used (memfd)" used_memfd

# same length, another program: the first page differs
chmod 0755 "$T/bin/sluice-init"
size=$(stat -c %s "$init")
head -c "$size" /bin/sh >"$T/bin/sluice-init" 2>/dev/null
truncate -s "$size" "$T/bin/sluice-init"
trace "$T/bin/sluice"
check "another program: the status (7, got $rc)" [ "$rc" = 7 ]
check "another program: not used (memfd)" used_memfd

# ours, one byte longer
cp "$init" "$T/bin/sluice-init"
printf x >>"$T/bin/sluice-init"
trace "$T/bin/sluice"
check "another length: not used (memfd)" used_memfd
echo "1..$n"
