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
# PostgreSQL stopped under a running server: requests get a clear 503
# (never a 401 for a key that is fine, never a run whose result is lost),
# and once it is back the server works again on its own
. "$here/serve_lib.bash"
D=$(pg_new_db restart)
APP=$("$SLUICE" app import examples/triage.yml --store "$D" 2>/dev/null)
K=$("$SLUICE" app key create "$APP" --store "$D" 2>/dev/null)
AT=$("$SLUICE" store admin-token --store "$D" 2>/dev/null)
BODY="{\"inputs\":{\"tickets\":$(jq -c . examples/tickets.json | jq -Rs .)},\"response_mode\":\"blocking\",\"user\":\"u\"}"
if serve_start "$T/serve.err"; then
    trap 'kill -KILL "$SPID" 2>/dev/null; wait; pg_stop; rm -rf "$T"' EXIT
    req "$K" POST /v1/workflows/run -H 'Content-Type: application/json' --data-binary "$BODY"
    check "[postgres, restart] a run before: 200 ($code)" is 200 '.data.status == "succeeded"'
    pg_down
    req "$K" POST /v1/workflows/run -H 'Content-Type: application/json' --data-binary "$BODY"
    check "[postgres, restart] PostgreSQL down: a run is 503 store_unavailable, not run ($code)" \
        is 503 '.code == "store_unavailable" and (.message | test("not started"))'
    req "app-nosuchkey" POST /v1/workflows/run -H 'Content-Type: application/json' --data-binary "$BODY"
    check "[postgres, restart] … an unknown key: 503 too, not 401 ($code)" is 503 '.code == "store_unavailable"'
    req "$AT" GET /admin/runs
    check "[postgres, restart] … the admin API: 503 ($code)" is 503
    pg_up
    # a failed connect holds new ones off for a second (store/pg.c)
    for ((i = 0; i < 30; i++)); do
        req "$K" POST /v1/workflows/run -H 'Content-Type: application/json' --data-binary "$BODY"
        [ "$code" = 503 ] || break
        sleep 0.1
    done
    check "[postgres, restart] PostgreSQL back: runs work again within seconds ($code)" is 200 '.data.status == "succeeded"'
    req "$AT" GET "/admin/runs?app=$APP"
    check "[postgres, restart] … two runs stored, none left running" is 200 \
        '(.data | length) == 2 and all(.data[]; .status == "succeeded")'
    req "app-nosuchkey" GET /v1/parameters
    check "[postgres, restart] … and an unknown key is 401 again ($code)" is 401
    kill -TERM "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
else
    nok "[postgres, restart] sluice serve starts on PostgreSQL"
fi
echo "1..$n"
