#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing, starts a Docker
# engine if none runs (and stops it again afterwards), builds the test images, compiles,
# and runs every unit, integration and end-to-end test. Each suite starts its own NATS
# server on a free loopback port.
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/test}"
source scripts/services.sh

prepare_run

mapfile -t specs < <(find dist/libs dist/apps dist/test -name '*spec.js' 2>/dev/null | sort)
[ ${#specs[@]} -gt 0 ] || { log "no tests found"; exit 1; }
node --test --test-concurrency=1 --test-reporter=spec "${specs[@]}"
