# Sourced by .ci/run (and by developers: `source .ci/postgres.sh && make test`): starts a local
# PostgreSQL server, makes the agboss role and database, and exports AGBOSS_TEST_POSTGRES_URL so
# that the store tests run on PostgreSQL too. If no server can be started, it says so and the
# PostgreSQL tests are skipped; the SQLite ones still run.

agboss_postgres_up() {
  if ! command -v pg_lsclusters >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) \
        >/dev/null 2>&1 || return 1
    else
      return 1
    fi
  fi
  local version
  version=$(pg_lsclusters -h 2>/dev/null | awk 'NR == 1 { print $1 }')
  if [ -z "$version" ]; then
    version=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
    [ -n "$version" ] || return 1
    pg_createcluster "$version" main >/dev/null 2>&1 || return 1
  fi
  pg_ctlcluster "$version" main start >/dev/null 2>&1 || true
  local port
  port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
  for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.5
  done
  pg_isready -q -h 127.0.0.1 -p "$port" || return 1
  su postgres -c "psql -q -p $port -c \"CREATE ROLE agboss LOGIN PASSWORD 'agboss'\"" \
    >/dev/null 2>&1 || true
  su postgres -c "psql -q -p $port -c \"CREATE DATABASE agboss OWNER agboss\"" \
    >/dev/null 2>&1 || true
  export AGBOSS_TEST_POSTGRES_URL="postgresql://agboss:agboss@127.0.0.1:$port/agboss"
}

if agboss_postgres_up; then
  echo "PostgreSQL is up: the store tests run on SQLite and on PostgreSQL"
else
  echo "PostgreSQL could not be started here: its tests are skipped, SQLite's still run"
fi
