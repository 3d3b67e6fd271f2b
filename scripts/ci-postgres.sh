#!/usr/bin/env bash
# PostgreSQL for the store contract suites and the replica tests (CI runs as root on Debian): start the
# packaged cluster when it is down, and make sure the `ivoai_ci` role the tests connect as exists.
# Tests take IVOAI_TEST_PG_URL instead when it is set; then this does nothing.
set -euo pipefail
[ -z "${IVOAI_TEST_PG_URL:-}" ] || exit 0
cluster=$(pg_lsclusters --no-header | awk 'NR == 1 { print $1 " " $2 }')
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -1)
  pg_createcluster "$version" main
  cluster="$version main"
fi
# shellcheck disable=SC2086 # "version name" are two arguments
pg_ctlcluster $cluster start 2>/dev/null || pg_ctlcluster $cluster status >/dev/null
port=$(pg_lsclusters --no-header | awk -v c="$cluster" '$1 " " $2 == c { print $3 }')
runuser -u postgres -- psql -p "$port" -qX -v ON_ERROR_STOP=1 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ivoai_ci') THEN
    CREATE ROLE ivoai_ci LOGIN CREATEDB;
  END IF;
END $$;
ALTER ROLE ivoai_ci PASSWORD 'ivoai-ci-pw';
-- DROP DATABASE ... WITH (FORCE) ends the autovacuum worker too, which runs as no role: only members of
-- pg_signal_backend may (the test databases are dropped that way).
GRANT pg_signal_backend TO ivoai_ci;
SQL
if [ "$port" != 5432 ]; then
  echo "ci-postgres: the cluster listens on $port; set IVOAI_TEST_PG_URL=postgres://ivoai_ci:ivoai-ci-pw@127.0.0.1:$port/postgres" >&2
  exit 1
fi
