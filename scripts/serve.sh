#!/usr/bin/env bash
# The run command: installs dependencies, builds the release binary and the web
# UI and starts `maestro serve` with its SQLite database under ./data, listening
# on 127.0.0.1 (open http://127.0.0.1:8080/). Without MAESTRO_LLM_BASE_URL it
# answers with the bundled demo model (maestro-fakellm + demo/demo-script.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake --preset release
cmake --build --preset release --target maestro maestro-fakellm
./scripts/ui.sh
export MAESTRO_DATA_DIR="${MAESTRO_DATA_DIR:-$PWD/data}"
exec ./build/release/src/cli/maestro serve "$@"
