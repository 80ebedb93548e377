#!/usr/bin/env bash
# Installs the real MCP servers and the MCP TypeScript SDK the tests run
# against (tests/mcp: @modelcontextprotocol/server-everything, -filesystem,
# -memory, -sdk), pinned by tests/mcp/package-lock.json. `npm ci` only when
# the lockfile changed since the last install, so the tests need no network.
set -euo pipefail
cd "$(dirname "$0")/../tests/mcp"

if ! command -v npm >/dev/null; then
  echo "mcp_servers: npm is missing; run scripts/setup.sh" >&2
  exit 1
fi
stamp=node_modules/.maestro-lock-stamp
if [[ ! -f $stamp ]] || ! cmp -s package-lock.json "$stamp"; then
  echo "mcp_servers: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
