#!/usr/bin/env bash
# The deploy tests (scripts/test.sh runs them last): builds the image from
# this checkout's release build (scripts/image.sh --prebuilt) and the
# PostgreSQL image, then starts them for real — `podman run` of the image,
# deploy/compose.yaml under podman-compose, deploy/k8s under podman kube
# play — and checks the systemd unit. Skipped, saying why, only where podman
# cannot run containers at all.
set -euo pipefail
cd "$(dirname "$0")/../.."

export CONTAINERS_CONF=$PWD/tests/deploy/containers.conf
if ! why=$(podman info 2>&1 >/dev/null); then
  echo "deploy tests SKIPPED: podman cannot run containers here: $why" >&2
  exit 0
fi
./scripts/npm_pinned.sh tests/deploy
# Each run rebuilds the images under the same names: the previous ones become
# dangling layers. Pruned when the run ends, so a machine that runs CI again
# and again does not fill its disk with them.
trap 'podman image prune -f >/dev/null 2>&1 || true' EXIT
./scripts/image.sh --prebuilt --postgres
node --test --test-concurrency=1 --test-reporter=spec tests/deploy/
