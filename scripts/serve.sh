#!/usr/bin/env bash
# The run command: installs dependencies, builds the release binary and starts
# `maestro serve` with its SQLite database under ./data, listening on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake --preset release
cmake --build --preset release --target maestro
export MAESTRO_DATA_DIR="${MAESTRO_DATA_DIR:-$PWD/data}"
exec ./build/release/src/cli/maestro serve "$@"
