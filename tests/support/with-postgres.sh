#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster: `tests/support/with-postgres.sh CMD [ARGS...]`.
#
# PG_DURABLE=1 starts the cluster with fsync and synchronous_commit on (for benchmarks).
#
# If TEST_DATABASE_URL is already set, CMD runs against that server unchanged. Otherwise this
# initialises a cluster in a temporary directory (as the unprivileged `postgres` user when run
# as root, since PostgreSQL refuses to run as root), starts it on a free local port with trust
# authentication, runs CMD with these variables exported, and always stops the cluster and
# removes the directory afterwards, exiting with CMD's status. Members of the role
# `password_login` (none at first) must give their password (scram-sha-256) even so, so that a
# test can create such a role and check what a wrong password does.
#
#   TEST_DATABASE_URL   postgres://postgres@127.0.0.1:PORT/postgres (superuser, may CREATE DATABASE)
#   TEST_PG_STOP_CMD    shell command stopping the cluster at once (as a crash would)
#   TEST_PG_START_CMD   shell command starting it again on the same port, waiting until it is up
#   TEST_PSQL           the psql client matching the server
#   PG_CTL, PGDATA_DIR  the pg_ctl binary and the cluster's data directory
set -euo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 2
fi

if [[ -n "${TEST_DATABASE_URL:-}" ]]; then
    exec "$@"
fi

find_bindir() {
    local initdb
    # Resolve symlinks: the real directory also holds the matching psql and postgres.
    if initdb=$(command -v initdb 2>/dev/null) && initdb=$(readlink -f "$initdb") \
        && [[ -x "$(dirname "$initdb")/pg_ctl" ]]; then
        dirname "$initdb"
        return 0
    fi
    # Debian/Ubuntu keep the server binaries off PATH; take the newest installed version.
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

if ! BINDIR=$(find_bindir); then
    echo "PostgreSQL server binaries not found; install them with: apt-get install -y postgresql" >&2
    exit 1
fi

free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local port
    for _ in $(seq 1 100); do
        port=$((20000 + RANDOM % 20000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "no free port found" >&2
    return 1
}

# PostgreSQL will not run as root: run the cluster as `postgres` then, in a directory it owns.
RUN_AS=()
if [[ $(id -u) -eq 0 ]]; then
    if ! id postgres >/dev/null 2>&1; then
        echo "running as root, but there is no 'postgres' user to run the cluster as" >&2
        exit 1
    fi
    if command -v runuser >/dev/null 2>&1; then
        RUN_AS=(runuser -u postgres --)
    else
        RUN_AS=(su postgres -s /bin/sh -c '"$0" "$@"')
    fi
fi

WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/petstore-pg.XXXXXX")
PGDATA_DIR="$WORKDIR/data"
SOCKDIR="$WORKDIR/sock"
LOGFILE="$WORKDIR/server.log"
mkdir -p "$SOCKDIR"
if [[ ${#RUN_AS[@]} -gt 0 ]]; then
    chown -R postgres: "$WORKDIR"
fi

PG_CTL="$BINDIR/pg_ctl"
PORT=$(free_port)

cleanup() {
    local status=$?
    "${RUN_AS[@]}" "$PG_CTL" -D "$PGDATA_DIR" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$WORKDIR"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! "${RUN_AS[@]}" "$BINDIR/initdb" -D "$PGDATA_DIR" -U postgres -A trust -E UTF8 \
    --locale=C --no-sync >"$WORKDIR/initdb.log" 2>&1; then
    echo "initdb failed:" >&2
    cat "$WORKDIR/initdb.log" >&2
    exit 1
fi

# The first rule wins: members of `password_login` give a password, everyone else is trusted.
# (A group that does not exist yet matches no one; it is created once the server is up.)
{
    echo "host all +password_login 127.0.0.1/32 scram-sha-256"
    cat "$PGDATA_DIR/pg_hba.conf"
} >"$WORKDIR/pg_hba.conf"
cp "$WORKDIR/pg_hba.conf" "$PGDATA_DIR/pg_hba.conf"

# fsync off: the cluster is thrown away, and tests run much faster without it. Benchmarks set
# PG_DURABLE=1 for production's settings (fsync and synchronous_commit on), so a commit costs
# what it costs in production.
if [[ "${PG_DURABLE:-0}" == 1 ]]; then
    DURABILITY="-c fsync=on -c synchronous_commit=on"
else
    DURABILITY="-c fsync=off"
fi
SERVER_OPTIONS="-p $PORT -k $SOCKDIR -c listen_addresses=127.0.0.1 $DURABILITY -c max_connections=300"
quote() { printf '%q ' "$@"; }
START_CMD="$(quote "${RUN_AS[@]}" "$PG_CTL" -D "$PGDATA_DIR" -l "$LOGFILE" -o "$SERVER_OPTIONS" -w -t 60 start)"
STOP_CMD="$(quote "${RUN_AS[@]}" "$PG_CTL" -D "$PGDATA_DIR" -m immediate -w stop)"

if ! eval "$START_CMD" >/dev/null; then
    echo "PostgreSQL did not start; its log:" >&2
    cat "$LOGFILE" >&2 || true
    exit 1
fi

PSQL="$BINDIR/psql"
[[ -x "$PSQL" ]] || PSQL=psql
"$PSQL" -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c "CREATE ROLE password_login NOLOGIN" >/dev/null

export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/postgres"
export TEST_PG_STOP_CMD="$STOP_CMD"
export TEST_PG_START_CMD="$START_CMD"
export TEST_PSQL="$PSQL"
export PG_CTL PGDATA_DIR
echo "with-postgres: PostgreSQL $("$BINDIR/postgres" --version | awk '{print $3}') at $TEST_DATABASE_URL" >&2

# Not exec: the EXIT trap has to run after CMD to stop the cluster.
set +e
"$@"
status=$?
set -e
exit "$status"
