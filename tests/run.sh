#!/usr/bin/env bash
# Runs the whole suite: unit tests, data-driven cases, CLI checks.
# Prints TAP lines and ends with "N passed, N failed".
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
export SLUICE="$BUILD/sluice"
pass=0; fail=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

count() { # file with TAP output
  local p f
  p=$(grep -c '^ok ' "$1"); f=$(grep -c '^not ok ' "$1")
  pass=$((pass + p)); fail=$((fail + f))
  grep '^not ok ' "$1" | head -50
}

run_tap() { # name, command...
  local name=$1; shift
  echo "# $name"
  "$@" >"$out/$name.tap" 2>"$out/$name.err"
  local rc=$?
  count "$out/$name.tap"
  if ! grep -q '^1\.\.' "$out/$name.tap"; then
    echo "not ok - $name crashed or ended early (exit $rc)"; tail -5 "$out/$name.err"
    fail=$((fail + 1))
  elif [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out/$name.tap"; then
    # Every check passed but the program failed on the way out: a
    # sanitizer report (leak, UB) or a crash at exit.
    echo "not ok - $name exited with status $rc after its checks"; tail -15 "$out/$name.err"
    fail=$((fail + 1))
  fi
}

for t in "$BUILD"/tests/*; do
  name=$(basename "$t")
  [ "$name" = cases ] && continue
  run_tap "$name" "$t"
done
run_tap cases "$BUILD/tests/cases" tests/cases
run_tap llm-llmd bash tests/llm/test_llmd.sh
# The agent cases again on the other sandbox providers.
run_tap agent-on-e2b env BUILD="$BUILD" bash tests/agent/on_provider.sh e2b
run_tap agent-on-ssh env BUILD="$BUILD" bash tests/agent/on_provider.sh ssh
for s in tests/cli/*.sh; do
  [ -e "$s" ] || continue
  run_tap "cli-$(basename "$s" .sh)" bash "$s"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
