#!/usr/bin/env bash
# The repository stands on its own: the suite's summary counts skipped
# checks apart.  Prints TAP.
. "$(dirname "$0")/lib.bash"

# tests/run.sh --count: skips (a check's `# SKIP`, any case, or a plan
# `1..0 # SKIP`) are counted apart from passes; the last line stays
# "N passed, N failed" and a failure still fails.
cat >"$T/a.tap" <<'TAP'
ok 1 - plain
ok 2 - a check that cannot run here # SKIP no such tool
ok 3 - # skip lower case, no description
ok 4 - # no x: skipped (a description, not a directive)
not ok 5 - broken
ok 6 - tight #SKIP
1..6
TAP
printf '1..0 # SKIP nothing to run here\n' >"$T/b.tap"
tests/run.sh --count "$T/a.tap" "$T/b.tap" >"$T/out" 2>"$T/err"; rc=$?
check "run.sh counts skips apart: '$(tr '\n' '|' <"$T/out")' (exit $rc)" \
    eval '[ "$rc" -eq 1 ] && [ "$(cat "$T/out")" = "$(printf "4 skipped\n2 passed, 1 failed")" ]'
printf 'ok 1 - fine\nok 2 - later # SKIP why\n1..2\n' >"$T/c.tap"
tests/run.sh --count "$T/c.tap" >"$T/out" 2>"$T/err"; rc=$?
check "a skip is not a failure: '$(tail -n 1 "$T/out")' (exit $rc)" \
    eval '[ "$rc" -eq 0 ] && [ "$(tail -n 1 "$T/out")" = "1 passed, 0 failed" ]'

echo "1..$n"
