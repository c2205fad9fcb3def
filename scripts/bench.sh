#!/usr/bin/env bash
# Benchmarks, each printed beside its baseline measured in the same run. Every benchmark
# runs even when one before it fails; the failures are listed at the end and the run exits
# non-zero. `bash scripts/bench.sh NAME...` runs only the named ones (e.g. nats-restart).
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/bench}"
source scripts/services.sh

prepare_run

benches=()
if [ "$#" -gt 0 ]; then
  for name in "$@"; do benches+=("dist/bench/${name%.bench.js}.bench.js"); done
else
  benches=(dist/bench/*.bench.js)
fi

# Not exec: the EXIT trap of prepare_run stops a Docker engine this run started.
bash scripts/run-benches.sh "${benches[@]}"
