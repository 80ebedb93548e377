#!/bin/sh
# First start: initdb with the password from POSTGRES_PASSWORD(_FILE), the
# database POSTGRES_DB owned by POSTGRES_USER, password (scram) logins from
# any address; then postgres in the foreground (SIGINT: fast shutdown).
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE"); fi
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "postgres: POSTGRES_PASSWORD (or POSTGRES_PASSWORD_FILE) is required" >&2
  exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --no-instructions >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE DATABASE "$POSTGRES_DB" OWNER "$POSTGRES_USER";
SQL
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
