#!/usr/bin/env bash
# The repository stands on its own: a clone without the optional shared
# samples (../shared, or $SLUICE_SHARED) passes, the checks that need them
# skip, and the suite's summary counts skips apart; no file names a path of
# the machine it was written on; it has a licence, and every library it
# links has its licence written down.  Prints TAP.
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

# The checks on the shared Dify exports skip, with the folder they looked
# for, when it is not there; the rest of each test still runs and passes.
UNIT=$(dirname "$SLUICE")/tests
missing=$T/no-shared
for t in blockyaml graph; do
    SLUICE_SHARED=$missing "$UNIT/$t" >"$T/out" 2>"$T/err"; rc=$?
    check "$t without the shared samples: skips them, passes the rest (exit $rc)" \
        eval '[ "$rc" -eq 0 ] && ! grep -q "^not ok" "$T/out" &&
              grep -Eq "^ok [0-9]+ - .*# SKIP no $missing/dsl-samples" "$T/out" &&
              [ "$(grep -c "^ok" "$T/out")" -gt 1 ]'
done
SLUICE_SHARED=$missing bash tests/cli/validate.sh >"$T/out" 2>"$T/err"; rc=$?
check "cli/validate.sh without the shared samples: skips them, passes the rest (exit $rc)" \
    eval '[ "$rc" -eq 0 ] && ! grep -q "^not ok" "$T/out" &&
          grep -Eq "^ok [0-9]+ - .*no $missing/dsl-samples.*# SKIP" "$T/out"'

# ... and SLUICE_SHARED is where they are read from when it is there.
mkdir -p "$T/shared/dsl-samples"
printf 'app:\n  mode: workflow\n  name: one\nkind: app\n' >"$T/shared/dsl-samples/one.yml"
SLUICE_SHARED=$T/shared "$UNIT/blockyaml" >"$T/out" 2>"$T/err"; rc=$?
check "blockyaml reads the samples from \$SLUICE_SHARED/dsl-samples (exit $rc)" \
    eval '[ "$rc" -eq 0 ] && grep -q "^ok [0-9]* - $T/shared/dsl-samples/one.yml: the fast reader accepts it" "$T/out" &&
          ! grep -qi "# skip" "$T/out"'

# No file names a folder of the machine it was written on: a checkout in
# /work, root's home /root, a user's home under /home or /Users.  Not
# flagged: paths inside a sandbox (/home/sandbox, E2B's /home/user), /root
# itself as an attack target, and longer paths that only contain one
# (/proc/1/root/etc, /workspace).  The pattern never matches itself.
MACHINE_PATH='(?<![\w./-])/(?:work/|root/\w|home/(?!(?:user|sandbox)\b)\w|Users/\w)'
machine_paths() { # FILE... -> each offending line as file:line:text
    grep -nIHP -- "$MACHINE_PATH" "$@" 2>/dev/null
}

# The pattern itself: what it flags and what it leaves.
w=work; r=root; h=home
printf '%s\n' "see /$w/main/src" "cd /$r/sluice" "/$h/alice/x" "a:/$w/shared/b" >"$T/bad.txt"
printf '%s\n' "/proc/1/$r/etc/shadow" "list:/$r" "/$h/sandbox/ok" "/$h/user/proj" \
    "/${w}space/x" "build/$w/x" "/$h" >"$T/good.txt"
got=$(machine_paths "$T/bad.txt" | wc -l)
check "every machine path in a sample is flagged ($got of 4)" [ "$got" -eq 4 ]
machine_paths "$T/good.txt" >"$T/out"
check "sandbox paths and attack targets are not flagged" [ ! -s "$T/out" ]

# The repository's files: tracked ones, and new ones git does not ignore.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=()
    while IFS= read -r -d '' f; do
        [ -f "$f" ] && files+=("$f")
    done < <(git ls-files -z --cached --others --exclude-standard)
    machine_paths "${files[@]}" >"$T/found"
    check "no file of the repository names a path of a developer machine (${#files[@]} files): $(head -c 300 "$T/found" | tr '\n' ' ')" \
        eval '[ "${#files[@]}" -gt 100 ] && [ ! -s "$T/found" ]'
else
    skip "no file names a developer machine's path (not a git checkout: no file list)"
fi

# The suite's throwaway sshd (tests/tools/sshd.sh) stops only its own
# server: a pid file whose sshd has gone, its pid now another process's,
# leaves that process and its children alone.
mkdir -p "$T/sluice-sshd.stale"
sleep 300 & victim=$!
echo "$victim" >"$T/sluice-sshd.stale/sshd.pid"
bash tests/tools/sshd.sh stop "$T/sluice-sshd.stale" >"$T/out" 2>"$T/err"
check "sshd.sh stop with a stale pid file signals nobody" kill -0 "$victim"
kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null

# A licence, named in the README, and one for every library the Makefile
# links (PKGS, by pkg-config name) in docs/dependencies.md.
check "LICENSE is the MIT licence and README.md names it" \
    eval 'grep -q "^MIT License" LICENSE && grep -q "Permission is hereby granted" LICENSE &&
          grep -q "^## Licence" README.md && grep -q "LICENSE" README.md'
pkgs=$(sed -n 's/^PKGS *:= *//p' Makefile)
undocumented=
for p in $pkgs; do
    grep -qF "(\`$p\`) |" docs/dependencies.md || undocumented="$undocumented $p"
done
check "every library in the Makefile's PKGS ($(echo $pkgs)) has its licence in docs/dependencies.md (missing:${undocumented:- none})" \
    eval '[ -n "$pkgs" ] && [ -z "$undocumented" ]'

echo "1..$n"
