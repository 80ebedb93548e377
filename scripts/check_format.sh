#!/usr/bin/env bash
# The format check CI runs first: every tracked C++ file (*.cc, *.h) must be
# exactly what clang-format-14 makes of it with the root .clang-format. Prints
# the offending lines and exits non-zero otherwise; fix with
#   git ls-files '*.cc' '*.h' | xargs clang-format-14 -i
# Installs nothing: clang-format-14 comes from scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

git ls-files -z '*.cc' '*.h' | xargs -0 clang-format-14 --dry-run --Werror
