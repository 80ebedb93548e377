#!/usr/bin/env bash
# The OS seam check (issue "One seam to the OS"): outside src/core/ no module
# opens, writes, renames or removes files, or starts processes, except through
# the Env (src/core/env.h) it was handed — so a FaultInjectionEnv reaches every
# durable write and every child process. Reading through std::ifstream and
# std::filesystem queries (exists, status, directory_iterator) stay allowed:
# they cannot lose data.
set -euo pipefail
cd "$(dirname "$0")/.."

fs='(std::filesystem|fs)::(create_directory|create_directories|remove|remove_all|rename|copy|copy_file|resize_file|permissions|create_symlink|create_directory_symlink|create_hard_link|last_write_time)\('
# fopen only in a writing mode ("w", "a", "r+"): reading cannot lose data.
pattern='std::ofstream|std::fstream|\bfopen\([^;]*"(w|a|r\+)|\bpopen\(|\bfork\(|\bvfork\(|\bexec(l|lp|le|v|vp|vpe)\(|posix_spawnp?\(|(^|[^.>a-zA-Z_])(::)?open\(|\bcreat\(|\bmkdir\(|\bmkdtemp\(|\bunlink\(|\brename\(|\bftruncate\(|\bsymlink\(|\bchmod\(|\bfchmod\('"|$fs"

hits=$(git ls-files 'src/*.cc' 'src/*.h' | grep -v '^src/core/' | xargs grep -nE "$pattern" || true)
if [[ -n "$hits" ]]; then
  echo "OS calls outside src/core/ (go through the Env instead):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "os seam: no direct OS file/process calls outside src/core/"
