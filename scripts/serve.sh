#!/usr/bin/env bash
# The run command: installs dependencies, builds the release binary and the web
# UI and starts `maestro serve` with its SQLite database under ./data, listening
# on 127.0.0.1 (open http://127.0.0.1:8080/). Without MAESTRO_LLM_BASE_URL it
# answers with the bundled demo model (maestro-fakellm + demo/demo-script.yaml).
# The build's output goes to build/serve-build.log (its tail is shown when it
# fails); a short banner says where everything is before serving.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
mkdir -p build
log=build/serve-build.log
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "serve: '$*' failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}
: >"$log"
echo "serve: building (log: $log)"
quietly cmake --preset release
quietly cmake --build --preset release --target maestro maestro-fakellm
quietly ./scripts/ui.sh
export MAESTRO_DATA_DIR="${MAESTRO_DATA_DIR:-$PWD/data}"
bin="$PWD/build/release/src/cli/maestro"
listen="${MAESTRO_LISTEN:-127.0.0.1:8080}"
token_file="$MAESTRO_DATA_DIR/admin_token"
client_env="MAESTRO_DATA_DIR=$MAESTRO_DATA_DIR"
[[ $listen == 127.0.0.1:8080 ]] || client_env+=" MAESTRO_SERVER=http://$listen"
cat <<BANNER

  maestro is starting
    URL:     http://$listen/
    token:   $token_file$([[ -f $token_file ]] && echo " ($(head -n1 "$token_file"))" || echo " (created now; printed below once)")
    binary:  $bin   (install: cmake --install build/release --prefix ~/.local)
    CLI:     $client_env $bin task list
             (talks to this server, token from the file above; docs/cli.md)
    stop:    Ctrl-C (or kill -TERM the maestro process)

BANNER
exec "$bin" serve "$@"
