#!/usr/bin/env bash
# Benchmarks, each printed beside its baseline measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/bench}"
source scripts/services.sh

ensure_packages
ensure_node_modules
build
started_docker=0
docker_ready || started_docker=1
ensure_docker
cleanup() { [ "$started_docker" = 1 ] && stop_started dockerd; return 0; }
trap cleanup EXIT
ensure_images

for bench in dist/bench/*.bench.js; do
  node "$bench"
done
