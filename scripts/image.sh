#!/usr/bin/env bash
# Builds maestro's container image with podman from deploy/Containerfile.
#
#   scripts/image.sh              the full multi-stage build: compiles maestro
#                                 and the web UI inside the build stage
#   scripts/image.sh --prebuilt   the runtime stage from this checkout's own
#                                 release build (build/release, built here
#                                 when missing) and ui/dist — what CI does, so
#                                 it does not compile maestro twice
#   --postgres                    also builds localhost/maestro-postgres:15
#                                 (deploy/postgres: PostgreSQL from Debian's
#                                 package) for machines without a registry
#
# Tags localhost/maestro:<version> and localhost/maestro:latest and prints
# the image's size. The base, debian:12-slim, is pulled when a registry
# answers; otherwise it is made from Debian's packages with mmdebstrap and
# imported under the same name, so the Containerfile is the same either way.
# Podman runs with the runc runtime (crun refuses hosts with hybrid cgroups).
set -euo pipefail
cd "$(dirname "$0")/.."

prebuilt=0
postgres=0
for arg in "$@"; do
  case $arg in
    --prebuilt) prebuilt=1 ;;
    --postgres) postgres=1 ;;
    *) echo "image: unknown option $arg (--prebuilt, --postgres)" >&2; exit 2 ;;
  esac
done
base=docker.io/library/debian:12-slim
image=localhost/maestro
version=$(sed -n 's/^project(maestro VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

for tool in podman mmdebstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "image: $tool is missing; run scripts/setup.sh --for-containers" >&2
    exit 1
  fi
done

if ! podman image exists "$base"; then
  if ! timeout 60 podman pull -q "$base" >/dev/null 2>&1; then
    echo "image: no registry answers; making $base from Debian's packages (mmdebstrap)"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # minbase: dpkg, apt and the essential set, as debian:12-slim has.
    mmdebstrap --quiet --variant=minbase --include=ca-certificates \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
      bookworm "$tmp/rootfs.tar"
    podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["bash"]' "$tmp/rootfs.tar" "$base" >/dev/null
  fi
fi

args=(--format docker --runtime runc --build-arg "VERSION=$version" --build-arg "REVISION=$revision"
  --ulimit nofile=16384:16384 --ulimit nproc=16384:16384 -f deploy/Containerfile
  -t "$image:$version" -t "$image:latest")
if ((prebuilt)); then
  if [[ ! -x build/release/src/cli/maestro ]]; then
    cmake --preset release >/dev/null
  fi
  cmake --build --preset release --target maestro maestro-fakellm
  ./scripts/ui.sh
  rm -rf build/image-root
  cmake --install build/release --prefix "$PWD/build/image-root/opt/maestro" --strip >/dev/null
  # The tree is copied into the image: the install paths must be /opt/maestro.
  args+=(--target runtime-prebuilt)
fi
if ((!prebuilt)) && compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  # The CAs this host adds (a TLS-inspecting proxy's, say), for the build
  # stage's npm install only (deploy/Containerfile).
  args+=(-v /usr/local/share/ca-certificates:/run/host-ca:ro)
fi
podman build "${args[@]}" .
size=$(podman image inspect "$image:$version" --format '{{.Size}}')
echo "image: $image:$version ($((size / 1000000)) MB)"
if ((postgres)); then
  podman build --format docker --runtime runc --ulimit nofile=16384:16384 --ulimit nproc=16384:16384 \
    -t localhost/maestro-postgres:15 deploy/postgres
  echo "image: localhost/maestro-postgres:15"
fi
