#!/usr/bin/env bash
# The PostgreSQL store (tests/unit/store_pg.c) against a cluster of its
# own (pg_lib.bash: Debian's postgresql, a unix socket only); the unit
# test gets its URI and the commands that stop and start it (for the
# restart checks), and its TAP goes through as it is.  The cluster is
# stopped and its folder removed on the way out, whatever happens.
#
#   tests/cli/store_pg.sh [BUILD]   (default: the folder of $SLUICE, as
#                                    tests/run.sh sets it, else build)
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/cli/pg_lib.bash
SLUICE=${SLUICE:-build/sluice}
BUILD=${1:-$(dirname "$SLUICE")}
if ! pg_have; then
    echo "1..0 # SKIP PostgreSQL is not installed (apt-get install postgresql)"
    exit 0
fi
if [ ! -x "$BUILD/tests/store_pg" ]; then
    echo "1..0 # SKIP $BUILD/tests/store_pg is not built"
    exit 0
fi
trap pg_stop EXIT
trap 'exit 1' INT TERM
if ! pg_start; then
    echo "not ok 1 - a PostgreSQL cluster of the test's own starts"
    tail -5 "$PG_DIR/initdb.log" "$PG_DIR/log" 2>/dev/null | sed 's/^/# /'
    echo "1..1"
    exit 1
fi
owner=
[ "$(id -u)" = 0 ] && owner="runuser -u nobody -- "
export SLUICE_TEST_PG=$PG_URL
export SLUICE_TEST_PG_STOP="${owner}$PG_BIN/pg_ctl -D $PG_DIR/data -m fast -w stop >/dev/null 2>&1"
export SLUICE_TEST_PG_START="${owner}$PG_BIN/pg_ctl -D $PG_DIR/data -o \"$PG_OPTS\" -l $PG_DIR/log -w -t 30 start >/dev/null 2>&1"
"$BUILD/tests/store_pg"
