#!/usr/bin/env bash
# Installs the pinned npm packages of one test package directory (its
# package-lock.json) into its node_modules: `npm ci` only when the lockfile
# changed since the last install, so the tests need no network.
#   scripts/npm_pinned.sh tests/a2a
# (tests/mcp goes through scripts/mcp_servers.sh, which calls this.)
set -euo pipefail
if [[ $# -ne 1 || ! -f $1/package-lock.json ]]; then
  echo "usage: scripts/npm_pinned.sh DIR  (DIR holds package.json + package-lock.json)" >&2
  exit 2
fi
cd "$1"

if ! command -v npm >/dev/null; then
  echo "npm_pinned: npm is missing; run scripts/setup.sh" >&2
  exit 1
fi
stamp=node_modules/.maestro-lock-stamp
if [[ ! -f $stamp ]] || ! cmp -s package-lock.json "$stamp"; then
  echo "npm_pinned: npm ci in $1"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
