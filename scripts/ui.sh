#!/usr/bin/env bash
# Builds the web UI (ui/ → ui/dist) with the pinned npm dependencies:
# `npm ci` when node_modules does not match package-lock.json, then the
# type check + Vite build when any UI source is newer than ui/dist. Idempotent:
# a second run with nothing changed does nothing.
#   scripts/ui.sh          build if needed
#   scripts/ui.sh --force  always reinstall and rebuild
set -euo pipefail
cd "$(dirname "$0")/../ui"

force=0
[[ "${1:-}" == "--force" ]] && force=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1  # the e2e tests use Debian's chromium

if ! command -v npm >/dev/null; then
  echo "ui: npm is missing; run scripts/setup.sh" >&2
  exit 1
fi

# npm ci when the lockfile changed since the last install.
stamp=node_modules/.maestro-lock-stamp
if ((force)) || [[ ! -f $stamp ]] || ! cmp -s package-lock.json "$stamp"; then
  echo "ui: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi

# Rebuild when a source file is newer than the last build.
if ((force)) || [[ ! -f dist/index.html ]] ||
   [[ -n "$(find src public index.html vite.config.ts tsconfig.json package-lock.json -newer dist/index.html -print -quit)" ]]; then
  echo "ui: building ui/dist"
  npm run --silent build
else
  echo "ui: ui/dist is up to date"
fi
