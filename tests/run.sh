#!/usr/bin/env bash
# Runs the whole suite: unit tests, data-driven cases, CLI checks.
# Prints TAP lines and ends with "N passed, N failed", after a line
# "K skipped".  A TAP `ok N - ... # SKIP reason` line (a check that cannot
# run here, say without the optional shared samples) counts as skipped, not
# passed; so does a whole test that says `1..0 # SKIP reason`.
#
#   tests/run.sh [BUILD]          the suite against BUILD (default build)
#   tests/run.sh --count TAP...   only those two summary lines for TAP files
set -u
pass=0; fail=0; skip=0

# TAP's SKIP directive ("#", blanks, SKIP in any case) on a check, or on
# the plan of a test that ran no check at all.
SKIP_RE='^ok\b.*#[[:space:]]*skip\b'
PLAN_SKIP_RE='^1\.\.0\b.*#[[:space:]]*skip\b'
count() { # file with TAP output
  local p f s
  p=$(grep -c '^ok ' "$1"); f=$(grep -c '^not ok ' "$1"); s=$(grep -Eic "$SKIP_RE" "$1")
  pass=$((pass + p - s)); fail=$((fail + f))
  skip=$((skip + s + $(grep -Eic "$PLAN_SKIP_RE" "$1")))
  grep '^not ok ' "$1" | head -50
}

summary() {
  echo "$skip skipped"
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

if [ "${1:-}" = --count ]; then
  shift
  for f in "$@"; do count "$f" >/dev/null; done
  summary
  exit
fi

BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
export SLUICE="$BUILD/sluice"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

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

# One binary per tests/unit/*.c (the build folder also holds -MMD's .d files).
for src in tests/unit/*.c; do
  name=$(basename "$src" .c)
  [ "$name" = cases ] && continue
  run_tap "$name" "$BUILD/tests/$name"
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
# Run as root, the sandboxes kept roots, network namespaces and cgroups
# for the next ones (docs/sandbox.md): leave none behind that no sandbox
# holds.
"$BUILD/sluice" sandbox clean >/dev/null 2>&1 || true

summary
