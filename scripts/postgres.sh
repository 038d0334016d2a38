#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server for the checkpointer tests.
#
#   scripts/postgres.sh start   # prints the URL; export it as AGENTS_TEST_POSTGRES_URL
#   scripts/postgres.sh url     # prints the URL of the running server
#   eval "$(scripts/postgres.sh env)"   # starts it if needed and exports AGENTS_TEST_POSTGRES_URL
#   scripts/postgres.sh stop    # stops the server and deletes its data
#
# Uses Debian's `postgresql` package binaries (/usr/lib/postgresql/<v>/bin). The cluster lives in
# a temp dir, listens only on 127.0.0.1 at a free port, trusts local connections (test only) and
# runs as the `postgres` user when started by root. State: $AGENTS_PG_STATE (default
# /tmp/agents-test-postgres.env).
set -euo pipefail

STATE_FILE="${AGENTS_PG_STATE:-/tmp/agents-test-postgres.env}"
DB_NAME="agents_test"

find_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [[ -z "$dir" || ! -x "$dir/pg_ctl" ]]; then
    echo "postgres.sh: PostgreSQL binaries not found under /usr/lib/postgresql/*/bin; install the Debian 'postgresql' package." >&2
    exit 1
  fi
  echo "$dir"
}

# Runs a command as the cluster owner (postgres when we are root: initdb refuses root).
as_owner() {
  if [[ "$(id -u)" == "0" ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close();});'
}

start() {
  if [[ -f "$STATE_FILE" ]]; then
    # shellcheck disable=SC1090
    source "$STATE_FILE"
    if as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
      echo "$PG_URL"
      return 0
    fi
    rm -rf "$PG_DIR" "$STATE_FILE"
  fi
  local bin dir port
  bin="$(find_bin_dir)"
  dir="$(mktemp -d /tmp/agents-pg.XXXXXX)"
  chmod 755 "$dir"
  if [[ "$(id -u)" == "0" ]]; then chown postgres:postgres "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-instructions >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  port="$(free_port)"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" start >/dev/null || {
    cat "$dir/server.log" >&2
    exit 1
  }
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$DB_NAME"
  local url="postgres://postgres@127.0.0.1:$port/$DB_NAME"
  cat >"$STATE_FILE" <<STATE
PG_BIN=$bin
PG_DIR=$dir
PG_DATA=$dir/data
PG_URL=$url
STATE
  echo "$url"
}

stop() {
  [[ -f "$STATE_FILE" ]] || return 0
  # shellcheck disable=SC1090
  source "$STATE_FILE"
  as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR" "$STATE_FILE"
}

url() {
  [[ -f "$STATE_FILE" ]] || { echo "postgres.sh: no server started; run: scripts/postgres.sh start" >&2; exit 1; }
  # shellcheck disable=SC1090
  source "$STATE_FILE"
  echo "$PG_URL"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  env) echo "export AGENTS_TEST_POSTGRES_URL='$(start)'" ;;
  *) echo "usage: scripts/postgres.sh start|stop|url|env" >&2; exit 2 ;;
esac
