#!/usr/bin/env bash
# Installs the real MCP servers and the MCP TypeScript SDK the tests run
# against (tests/mcp: @modelcontextprotocol/server-everything, -filesystem,
# -memory, -sdk), pinned by tests/mcp/package-lock.json (scripts/npm_pinned.sh:
# `npm ci` only when the lockfile changed, so the tests need no network).
set -euo pipefail
cd "$(dirname "$0")/.."
exec ./scripts/npm_pinned.sh tests/mcp
