#!/usr/bin/env bash
# CLI: sluice serve on PostgreSQL.  Starts a cluster of its own
# (pg_lib.bash) and runs the server tests that take SLUICE_TEST_STORE
# against a fresh database each, their checks named "[postgres] …".
# Skips (counted) without Debian's postgresql.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/pg_lib.bash"
if ! pg_have; then
    echo "1..0 # SKIP PostgreSQL is not installed (Debian's postgresql)"
    exit 0
fi
trap 'pg_stop; rm -rf "$T"' EXIT
if ! pg_start; then
    nok "a PostgreSQL cluster of the test's own starts"
    echo "1..$n"
    exit 1
fi
here=$(dirname "$0")
for t in admin_runs serve console; do
    url=$(pg_new_db "$t") || { nok "a database for $t"; continue; }
    # the test's checks, renumbered into this test's plan
    while IFS= read -r line; do
        case $line in
        "ok "*) n=$((n + 1)); echo "ok $n - [postgres] ${line#ok * - }" ;;
        "not ok "*) n=$((n + 1)); echo "not ok $n - [postgres] ${line#not ok * - }" ;;
        "1.."* | *" passed, "*" failed") ;;
        *) echo "$line" ;;
        esac
    done < <(SLUICE_TEST_STORE=$url SLUICE_RUN_LEASE_S=2 bash "$here/$t.sh" "$@" 2>&1)
done
echo "1..$n"
