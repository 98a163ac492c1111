# A PostgreSQL cluster of the test's own (Debian's postgresql), in a
# temp folder, reached over a unix socket only: nothing on the network,
# nothing left behind.
#
#   . tests/cli/pg_lib.bash
#   pg_start || skip…          # sets PG_URL (postgresql:///postgres?host=…)
#   pg_stop                    # also done by pg_cleanup, for traps
#
# As root the server runs as `nobody` (PostgreSQL refuses root); its
# folder, directly under /tmp so that nobody can reach it, is made theirs.
# pg_have says whether the binaries are there.

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PG_DIR=
PG_URL=
PG_OPTS=

pg_have() { [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; }

# as the cluster's owner
pg_as() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

pg_start() {
    pg_have || return 1
    PG_DIR=$(mktemp -d /tmp/sluice-pg.XXXXXX) || return 1
    [ "$(id -u)" = 0 ] && chown nobody "$PG_DIR"
    chmod 700 "$PG_DIR"
    pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U sluice --no-sync -E UTF8 \
        --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 || return 1
    PG_OPTS="-c listen_addresses='' -c unix_socket_directories=$PG_DIR -c max_connections=200"
    pg_up || return 1
    PG_URL="postgresql:///postgres?host=$PG_DIR&user=sluice"
}

# Stops the server and removes its folder (safe to call twice).
pg_stop() {
    [ -n "$PG_DIR" ] || return 0
    pg_down
    rm -rf "$PG_DIR"
    PG_DIR=
}

# The server stopped, or started, on the cluster's data (pg_start and
# pg_stop use them; a test stops and starts it under its clients, as a
# fault).
pg_down() { pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1; }
pg_up() {
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 -o "$PG_OPTS" \
        start >/dev/null 2>&1
}

# A fresh database in the cluster for one test: prints its URL.
pg_new_db() {
    local name=$1
    pg_as "$PG_BIN/psql" -q -h "$PG_DIR" -U sluice -d postgres -c "CREATE DATABASE \"$name\"" \
        >/dev/null 2>&1 || return 1
    echo "postgresql:///$name?host=$PG_DIR&user=sluice"
}
