#!/usr/bin/env bash
# bench/peers: maestro against LangGraph.js, the OpenAI Agents SDK, the Vercel
# AI SDK and Mastra on the same task and fake LLM (README.md beside this file).
#   bench/peers/run.sh [run.mjs options, e.g. --runs 5 --scenarios bench-1-4000,bench-50-4000]
# Needs the release build of maestro and maestro-fakellm:
#   cmake --preset release && cmake --build --preset release --target maestro maestro-fakellm
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
"$repo/scripts/npm_pinned.sh" "$here" >&2
exec node "$here/run.mjs" "$@"
