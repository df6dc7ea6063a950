#!/usr/bin/env bash
# Runs the whole test suite: unit and integration tests (Maven), then the end-to-end suites that drive
# the server and envd with the unmodified npm `e2b` SDK (Node's built-in test runner).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

if [[ $EUID -eq 0 ]]; then scripts/setup-host.sh; export AENV_REQUIRE_HOST_TESTS=1; else echo "not root: host setup skipped, tests tagged host will be skipped"; fi
# the PostgreSQL store's tests and the local cluster start servers of their own from Debian's PostgreSQL 15
source scripts/lib/postgres.sh
if [[ $EUID -eq 0 ]]; then ensure_postgres; fi
mvn -B -ntp verify

( cd e2e && { [ -d node_modules/e2b ] && npm ls --silent >/dev/null 2>&1 || npm ci --no-audit --no-fund; } )
# the console's browser suite drives Debian's Chromium (never a browser download)
if [[ $EUID -eq 0 && ! -x /usr/bin/chromium ]]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
shopt -s nullglob
suites=(e2e/tests/*.test.mjs)
if (( ${#suites[@]} )); then
  node --test --test-concurrency=1 "${suites[@]}"
fi
# The container SDK suites a second time, unchanged, through a gateway of a local cluster (three nodes, each in a
# network namespace of its own: e2e/lib/container-suite.mjs, cluster-harness.mjs); a suite that cannot apply there is
# skipped with its reason (GATEWAY_SKIPS in container-suite.mjs)
gateway_suites=(e2e/tests/sdk-container*.test.mjs)
if [[ $EUID -eq 0 ]] && (( ${#gateway_suites[@]} )); then
  AENV_E2E_THROUGH_GATEWAY=1 node --test --test-concurrency=1 "${gateway_suites[@]}"
fi
