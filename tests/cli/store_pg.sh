#!/usr/bin/env bash
# The PostgreSQL store (tests/unit/store_pg.c) against a server of its own:
# a temp cluster of Debian's postgresql, on a unix socket only, run as
# `nobody` when we are root (PostgreSQL refuses root); the unit test gets
# its URI and the commands that stop and start it (for the restart
# checks), and its TAP goes through as it is.  The cluster is stopped and
# its folder removed on the way out, whatever happens.
#
#   tests/cli/store_pg.sh [BUILD]   (default: the folder of $SLUICE, as
#                                    tests/run.sh sets it, else build)
set -u
cd "$(dirname "$0")/../.." || exit 2
SLUICE=${SLUICE:-build/sluice}
BUILD=${1:-$(dirname "$SLUICE")}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "1..0 # SKIP PostgreSQL is not installed (apt-get install postgresql)"
    exit 0
fi
if [ ! -x "$BUILD/tests/store_pg" ]; then
    echo "1..0 # SKIP $BUILD/tests/store_pg is not built"
    exit 0
fi

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

# directly under /tmp, so `nobody` reaches it
T=$(mktemp -d /tmp/sluice-store-pg.XXXXXX) || exit 2
[ "$(id -u)" = 0 ] && chown nobody "$T"
chmod 700 "$T"
OPTS="-c listen_addresses='' -c unix_socket_directories=$T"
stop() {
    as_owner "$PG_BIN/pg_ctl" -D "$T/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$T"
}
trap stop EXIT
trap 'exit 1' INT TERM

if ! as_owner "$PG_BIN/initdb" -D "$T/data" -A trust -U sluice --no-sync -E UTF8 \
        --locale=C.UTF-8 >"$T/initdb.log" 2>&1 ||
   ! as_owner "$PG_BIN/pg_ctl" -D "$T/data" -o "$OPTS" -l "$T/log" -w -t 30 start \
        >/dev/null 2>&1; then
    echo "not ok 1 - a PostgreSQL cluster of the test's own starts"
    tail -5 "$T/initdb.log" "$T/log" 2>/dev/null | sed 's/^/# /'
    echo "1..1"
    exit 1
fi

owner=
[ "$(id -u)" = 0 ] && owner="runuser -u nobody -- "
export SLUICE_TEST_PG="postgresql:///postgres?host=$T&user=sluice"
export SLUICE_TEST_PG_STOP="${owner}$PG_BIN/pg_ctl -D $T/data -m fast -w stop >/dev/null 2>&1"
export SLUICE_TEST_PG_START="${owner}$PG_BIN/pg_ctl -D $T/data -o \"$OPTS\" -l $T/log -w -t 30 start >/dev/null 2>&1"
"$BUILD/tests/store_pg"
