#!/usr/bin/env bash
# Runs the agent workflow cases (tests/cases/agent) on another sandbox
# provider: `ssh` (a real OpenSSH sshd on loopback, tests/tools/sshd.sh) or
# `e2b` (the E2B stand-in, tests/tools/e2bd.py).  The same workflows, the
# same scripted model, the same expectations as on the local sandbox; only
# sluice.yml's sandbox section differs.  Prints the cases' TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
provider=${1:?usage: on_provider.sh ssh|e2b}
BUILD=${BUILD:-build}
T=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -n "${SSHD_STOP:-}" ] && eval "$SSHD_STOP" >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT

case $provider in
e2b)
    python3 tests/tools/e2bd.py --port 0 --port-file "$T/port" >"$T/e2bd.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 200); do [ -s "$T/port" ] && break; sleep 0.05; done
    port=$(cat "$T/port")
    cat >"$T/sluice.yml" <<EOF
sandbox:
  provider: e2b
  e2b: {api_key: e2b-test-key, api_url: "http://127.0.0.1:$port", envd_url: "http://127.0.0.1:$port"}
EOF
    ;;
ssh)
    [ -x /usr/sbin/sshd ] || { echo "ok 1 - # SKIP no sshd (apt-get install openssh-server)"; echo "1..1"; exit 0; }
    bash tests/tools/sshd.sh start >"$T/sshd.env" 2>"$T/sshd.err" || {
        echo "not ok 1 - sshd could not start: $(tail -3 "$T/sshd.err")"; echo "1..1"; exit 1; }
    DIR= PORT= USER= USER_KEY= FINGERPRINT=
    while IFS='=' read -r k v; do
        case $k in DIR|PORT|USER|USER_KEY|FINGERPRINT) printf -v "$k" '%s' "$v" ;; esac
    done <"$T/sshd.env"
    SSHD_STOP="bash tests/tools/sshd.sh stop '$DIR'"
    cat >"$T/sluice.yml" <<EOF
sandbox:
  provider: ssh
  ssh: {host: 127.0.0.1, port: $PORT, user: "$USER", private_key_file: "$USER_KEY",
        host_key_sha256: "$FINGERPRINT", base_path: "$T/boxes", vm_enforces_network: true}
EOF
    ;;
*)
    echo "on_provider.sh: unknown provider '$provider' (ssh or e2b)" >&2
    exit 2
    ;;
esac
SLUICE_CONFIG="$T/sluice.yml" "$BUILD/tests/cases" tests/cases/agent
