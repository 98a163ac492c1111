# Shared by the CLI test scripts (sourced, not run): a temp dir $T, TAP
# helpers and `sl` to run sluice with its output captured.
set -u
cd "$(dirname "$0")/../.." || exit 2
SLUICE=${SLUICE:-build/sluice}
case $SLUICE in /*) ;; *) SLUICE=$PWD/$SLUICE ;; esac
# The optional shared test material (the DSL samples in dsl-samples/):
# $SLUICE_SHARED, else ../shared beside the repository; made absolute, as
# scripts cd into $T.  A clone of the repository alone has none, and the
# checks that need it skip.
SHARED=${SLUICE_SHARED:-../shared}
case $SHARED in /*) ;; *) SHARED=$PWD/$SHARED ;; esac
T=$(mktemp -d)
# "Within a second" checks time whole processes (exit, drain, teardown):
# about 0.1 s here, so 1 s more leaves room for a loaded CI machine and
# still catches a run that does not stop (it hung for 30 s and more).
SLACK_MS=${SLACK_MS:-2000}
n=0
# A script may define on_exit (say, to kill a process it started).
lib_cleanup() {
    if declare -F on_exit >/dev/null; then on_exit; fi
    rm -rf "$T"
}
trap lib_cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
nok() {
    n=$((n + 1)); echo "not ok $n - $*"
    # awk ends every line, so a file without a final newline cannot glue
    # the next TAP line onto its last one (run.sh would not count it)
    awk '{print "#   stdout: " $0}' "$T/out" 2>/dev/null | head -8
    awk '{print "#   stderr: " $0}' "$T/err" 2>/dev/null | tail -8
}
# check DESCRIPTION TEST-COMMAND...: ok when the test command succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# sl ARGS...: runs sluice; stdout in $T/out, stderr in $T/err, status in $rc
sl() { timeout -k 2 20 "$SLUICE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
out_has() { grep -qF -- "$1" "$T/out"; }
err_has() { grep -qF -- "$1" "$T/err"; }

# ---- helpers for scripts that start servers and time processes ----
# free_port: a free TCP port on 127.0.0.1
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# ms_since T0: milliseconds since T0 (date +%s%N)
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# wait_for FILE TEXT [SECONDS]: until FILE has TEXT (default 10 s)
wait_for() {
    local i
    for ((i = 0; i < ${3:-10} * 20; i++)); do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
# start_silent_peer FILE: starts tests/cli/silent_peer.py (accepts, reads,
# never answers); its pid goes to $PEER (the script kills it on exit), its
# port to FILE's first line and $PEER_PORT
start_silent_peer() {
    /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/silent_peer.py" >"$1" &
    PEER=$!
    local i
    for ((i = 0; i < 50; i++)); do [ -s "$1" ] && break; sleep 0.1; done
    PEER_PORT=$(head -1 "$1")
}
# wait_pid PID [SECONDS]: until the process ended; rc its exit status, or
# "hung" (it is then killed) after SECONDS (default 10)
wait_pid() {
    local i
    for ((i = 0; i < ${2:-10} * 100; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.01
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        rc=hung
    else
        wait "$1" 2>/dev/null
        rc=$?
    fi
}
