#!/usr/bin/env bash
# Installs every Debian package maestro needs to build, test and run. Idempotent:
# packages already present are skipped, so a second run costs only a dpkg query.
# `--for-tests` (scripts/test.sh) adds what only the tests use: an SSH server
# the RunRemote tests start on 127.0.0.1 (on a systemd machine the package
# also starts the system's sshd, which a machine that only runs maestro does
# not want), and the container tools below.
# `--for-containers` (scripts/image.sh, the deploy tests) adds podman with the
# runc runtime, its networking (netavark, aardvark-dns), podman-compose and
# mmdebstrap, which makes the debian:12-slim base when no registry answers.
set -euo pipefail

FOR_TESTS=0
FOR_CONTAINERS=0
for arg in "$@"; do
  case $arg in
    --for-tests) FOR_TESTS=1 FOR_CONTAINERS=1 ;;
    --for-containers) FOR_CONTAINERS=1 ;;
    *) echo "setup: unknown option $arg (--for-tests, --for-containers)" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  clang-14 clang-format-14  # the thread-safety build and the format check (scripts/test.sh)
  libsqlite3-dev sqlite3
  libpq-dev postgresql
  libcurl4-openssl-dev libssl-dev
  libcpp-httplib-dev
  libboost1.81-dev
  libyaml-cpp-dev
  nlohmann-json3-dev
  libspdlog-dev libfmt-dev
  libcli11-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libgit2-dev
  libcjose-dev  # OIDC sign-in: JWK import and JWS verification of ID tokens (src/identity)
  libhowardhinnant-date-dev tzdata  # schedules: cron in IANA time zones (date/tz over /usr/share/zoneinfo)
  bubblewrap
  curl
  ccache
  chromium
  socat  # BrowseWeb: the bridge from Chromium's network namespace to the filtering proxy
  openssh-client  # RunRemote's ssh
)
if ((FOR_TESTS)); then
  PACKAGES+=(openssh-server)  # the RunRemote tests' own sshd on 127.0.0.1
  PACKAGES+=(iproute2)  # tests/integration/multihost: network namespaces and veths (ip netns)
fi
if ((FOR_CONTAINERS)); then
  # runc: crun refuses hosts with hybrid cgroups; catatonit: the pods' infra
  # process (podman kube play); iptables: netavark's firewall rules.
  PACKAGES+=(podman runc conmon catatonit netavark aardvark-dns iptables uidmap
    containernetworking-plugins podman-compose mmdebstrap
    systemd)  # systemd-analyze verify: the unit in deploy/systemd
fi
# Node.js + npm build the web UI; Debian's are used only when no node is
# installed (any Node >= 18 works).
if ! command -v node >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi
