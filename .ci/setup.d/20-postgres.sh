#!/usr/bin/env bash
# PostgreSQL server binaries for plugins/checkpoint-postgres (tests and benchmark). The tests
# start their own throwaway cluster (initdb + pg_ctl on a private port) and stop it after, so
# this only makes sure the binaries and a `postgres` system user exist (initdb refuses root).
# Idempotent and instant when both are present; never starts a server.
set -euo pipefail

# shellcheck source=../setup-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../setup-lib.sh"

if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  # Only the binaries are wanted: keep the Debian package from creating and starting its own
  # "main" cluster on port 5432.
  as_root mkdir -p /etc/postgresql-common
  if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | as_root tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  apt_install postgresql
fi

if [ "$(id -u)" = 0 ] && ! id -u postgres >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi

initdb=$(compgen -G "/usr/lib/postgresql/*/bin/initdb" | sort -V | tail -1)
echo "postgres server binaries ready in $(dirname "$initdb")"
