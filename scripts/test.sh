#!/usr/bin/env bash
# The test command: installs dependencies, builds the sanitizer (ASan+UBSan) debug
# build with warnings as errors, and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake --preset debug
cmake --build --preset debug
ctest --preset debug
