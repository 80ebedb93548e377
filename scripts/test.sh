#!/usr/bin/env bash
# The test command: installs dependencies (Debian packages, the pinned npm MCP
# servers and A2A SDK client), checks the C++ formatting and the OS seam (no
# direct file/process calls outside src/core/), builds the sanitizer (ASan+UBSan) debug
# build with warnings as errors, and runs the whole test suite with ctest; then
# the thread checks: the clang -Wthread-safety check (the GUARDED_BY/REQUIRES
# annotations, every source compiled -fsyntax-only) and the ThreadSanitizer build running the tests of the
# multi-threaded modules (ctest label tsan); then builds the web UI (type check
# + Vite) and runs its end-to-end tests in headless Chromium against the debug
# binaries (screenshots: build/ui-e2e-artifacts/); last, the deploy tests:
# the container image from the release build, deploy/compose.yaml and
# deploy/k8s started for real with podman (tests/deploy/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --for-tests  # with the test-only packages (an sshd for the RunRemote tests)
./scripts/check_format.sh  # first: a formatting slip fails in seconds, not after the build
./scripts/check_os_seam.sh  # no file or process calls outside src/core/ (the Env seam)
# setup installed PostgreSQL: the store conformance suite must really run on it
# (not MAESTRO_-prefixed: maestro warns about MAESTRO_* variables it does not know).
export TEST_REQUIRE_POSTGRES=1
./scripts/mcp_servers.sh  # the real MCP servers the MCP tests start
./scripts/npm_pinned.sh tests/a2a  # the A2A SDK client the A2A test drives
./scripts/npm_pinned.sh tests/push  # http_ece: decrypts what maestro pushes (push test)
./scripts/npm_pinned.sh tests/oidc  # oidc-provider: the real identity provider of the OIDC tests
./scripts/npm_pinned.sh tests/llm-sdks  # @anthropic-ai/sdk, @google/genai: check the provider fakes (issue 50)
cmake --preset debug
cmake --build --preset debug
ctest --preset debug
./scripts/check_thread_safety.sh  # clang -Wthread-safety over every source (syntax-only)
cmake --preset tsan
cmake --build --preset tsan
ctest --preset tsan
./scripts/ui.sh
(cd ui && MAESTRO_BIN="$PWD/../build/debug/src/cli/maestro" \
  MAESTRO_FAKELLM_BIN="$PWD/../build/debug/src/fakellm/maestro-fakellm" npm run --silent e2e)
./tests/deploy/run.sh  # the image, compose and Kubernetes topologies, the systemd unit
