#!/usr/bin/env bash
# Benchmarks, each printed beside its baseline measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/bench}"
source scripts/services.sh

prepare_run

for bench in dist/bench/*.bench.js; do
  node "$bench"
done
