#!/usr/bin/env bash
# CLI: where the store is.  --data and --store are one option (given
# twice: refused); without it $SLUICE_STORE, then $SLUICE_DATA, then the
# settings' `store:` (sluice.yml), then ./sluice-data.
set -u
. "$(dirname "$0")/lib.bash"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
unset SLUICE_STORE SLUICE_DATA SLUICE_CONFIG
R=$(cd "$OLDPWD" && pwd)
S=$(cd "$OLDPWD" && realpath "$SLUICE")
app() { "$S" app "$@" >"$T/out" 2>"$T/err"; }

app import "$R/examples/triage.yml" --store "$T/a"
check "--store DIR: the app goes there" bash -c '[ -f "$0/a/sluice.db" ] && [ ! -e "$0/sluice-data" ]' "$T"
app list --data "$T/a"
check "… and --data DIR reads it" grep -q ticket-triage "$T/out"
app list --data "$T/a" --store "$T/b"
rc=$?
check "both given: exit 2, saying the store is given twice ($rc)" \
    bash -c '[ "$0" = 2 ] && grep -q "given twice" "$1" && [ ! -e "$2/b" ]' "$rc" "$T/err" "$T"
SLUICE_STORE="$T/c" SLUICE_DATA="$T/d" app import "$R/examples/triage.yml"
check "\$SLUICE_STORE comes before \$SLUICE_DATA" bash -c '[ -f "$0/c/sluice.db" ] && [ ! -e "$0/d" ]' "$T"
SLUICE_DATA="$T/d" app import "$R/examples/triage.yml"
check "\$SLUICE_DATA alone is used" test -f "$T/d/sluice.db"
printf 'store: %s/e\n' "$T" >"$T/sluice.yml"
app import "$R/examples/triage.yml"
check "sluice.yml's store: is used when nothing else names one" \
    bash -c '[ -f "$0/e/sluice.db" ] && [ ! -e "$0/sluice-data" ]' "$T"
SLUICE_STORE="$T/f" app import "$R/examples/triage.yml"
check "… and \$SLUICE_STORE comes before it" test -f "$T/f/sluice.db"
printf 'store: [x]\n' >"$T/sluice.yml"
app list
rc=$?
check "a store: that is no text: exit 2 naming the line ($rc)" \
    bash -c '[ "$0" = 2 ] && grep -Eq "sluice.yml:1:[0-9]+: .store." "$1"' "$rc" "$T/err"
rm -f "$T/sluice.yml"
app list --store "mongodb://u:secret@h/db"
rc=$?
check "an unknown kind of store: refused, without its password ($rc)" \
    bash -c '[ "$0" != 0 ] && grep -q "mongodb" "$1" && ! grep -q secret "$1"' "$rc" "$T/err"
# sluice store: the store on its own
"$S" store check --store "$T/a" >"$T/out" 2>"$T/err"
check "store check: where it is, its apps, ok" \
    bash -c 'grep -qx "store: $1/a" "$0" && grep -qx "apps: 1" "$0" && grep -qx ok "$0"' "$T/out" "$T"
"$S" store migrate --store "$T/new" >"$T/out" 2>"$T/err"
check "store migrate: a new store is made and up to date" \
    bash -c 'grep -q "up to date" "$0" && [ -f "$1/new/sluice.db" ]' "$T/out" "$T"
"$S" store admin-token --store "$T/a" >"$T/out" 2>"$T/err"
check "store admin-token: the token the admin API takes" \
    bash -c '[ "$(cat "$0")" = "$(cat "$1/a/admin-token")" ]' "$T/out" "$T"
"$S" store frob >"$T/out" 2>"$T/err"
rc=$?
check "store frob: exit 2 naming it ($rc)" bash -c '[ "$0" = 2 ] && grep -q "frob" "$1"' "$rc" "$T/err"
"$S" store check --store "mongodb://u:secret@h/db" >"$T/out" 2>"$T/err"
rc=$?
check "store check on a store that cannot be opened: exit 1, no password ($rc)" \
    bash -c '[ "$0" = 1 ] && ! grep -q secret "$1"' "$rc" "$T/err"
# runs are queued only on a store processes share: said before anything is made
"$S" worker --store "$T/w" >"$T/out" 2>"$T/err"
rc=$?
check "worker on a folder store: exit 2, saying to give postgres://, nothing made ($rc)" \
    bash -c '[ "$0" = 2 ] && grep -q "postgres://" "$1" && [ ! -e "$2/w" ]' "$rc" "$T/err" "$T"
"$S" serve --workers 0 --store "$T/w" >"$T/out" 2>"$T/err"
rc=$?
check "serve --workers 0 on a folder store: exit 2, naming --workers ($rc)" \
    bash -c '[ "$0" = 2 ] && grep -q -- "--workers" "$1" && [ ! -e "$2/w" ]' "$rc" "$T/err" "$T"
"$S" worker --workers 0 --store "postgres://nowhere/db" >"$T/out" 2>"$T/err"
rc=$?
check "worker --workers 0: exit 2, it would run nothing ($rc)" \
    bash -c '[ "$0" = 2 ] && grep -q "run nothing" "$1"' "$rc" "$T/err"
echo "1..$n"
