#!/usr/bin/env bash
# `cmake --install BUILD --prefix TMP`, then the installed binary: --version,
# and `maestro serve` started from an empty directory in demo mode finds the
# demo script at <prefix>/share/maestro (relative to the executable), and
# `maestro task list` against it answers from the installed binary.
#   install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
test -x "$prefix/bin/maestro"
test -x "$prefix/bin/maestro-fakellm"
test -f "$prefix/share/maestro/demo/demo-script.yaml"
version=$("$prefix/bin/maestro" --version)
[[ $version == "maestro "*" (schema "*")" ]] || { echo "bad --version: $version"; exit 1; }

mkdir "$tmp/cwd"
cd "$tmp/cwd"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env -u MAESTRO_LLM_BASE_URL MAESTRO_DATA_DIR="$tmp/data" MAESTRO_LISTEN="127.0.0.1:$port" \
  "$prefix/bin/maestro" serve >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
for _ in $(seq 1 300); do
  [[ -f $tmp/data/admin_token ]] && grep -q "listening on" "$tmp/serve.err" && break
  sleep 0.1
done
grep -q "script $prefix/share/maestro/demo/demo-script.yaml" "$tmp/serve.err" ||
  { echo "the installed demo script was not used:"; cat "$tmp/serve.err"; exit 1; }
out=$(MAESTRO_SERVER="http://127.0.0.1:$port" MAESTRO_DATA_DIR="$tmp/data" "$prefix/bin/maestro" task list)
[[ $out == "no tasks" ]] || { echo "task list said: $out"; exit 1; }
echo "install ok: $version"
