#!/usr/bin/env bash
# The compose lab: build the jetlet/lab image from this machine's node and nats-server
# binaries plus the compiled apps, then run docker-compose.
#   scripts/compose.sh build | up | down
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/compose}"
source scripts/services.sh

# copy_with_libs BINARY DEST: the binary and every shared library it loads, at their own paths.
copy_with_libs() {
  local bin="$1" rootfs="$2" lib
  install -D "$bin" "$rootfs$3"
  for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
    install -D "$lib" "$rootfs$lib"
  done
}

build_image() {
  ensure_packages
  apt_install docker-compose docker-compose
  ensure_node_modules
  build
  ensure_docker
  ensure_images
  local ctx rootfs
  ctx=$(mktemp -d)
  rootfs="$ctx/rootfs"
  copy_with_libs "$(command -v node)" "$rootfs" /usr/local/bin/node
  copy_with_libs "$(command -v nats-server)" "$rootfs" /usr/bin/nats-server
  install -D /usr/bin/busybox "$rootfs/bin/busybox"
  ln -s busybox "$rootfs/bin/sh"
  mkdir -p "$rootfs/tmp" "$rootfs/data" "$rootfs/app"
  chmod 1777 "$rootfs/tmp"
  cp -r package.json package-lock.json dist "$rootfs/app/"
  (cd "$rootfs/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
  cp images/lab/Dockerfile "$ctx/"
  log "building jetlet/lab:dev"
  DOCKER_BUILDKIT=0 docker build -q -t jetlet/lab:dev "$ctx" >/dev/null
  rm -rf "$ctx"
}

case "${1:-up}" in
  build) build_image ;;
  up) build_image; docker-compose up -d; log "compose lab up: API on http://127.0.0.1:8001; stop with: bash scripts/compose.sh down" ;;
  down)
    docker-compose down
    ids=$(docker ps -aq --filter "label=io.jetlet.node=compose-node-1")
    [ -z "$ids" ] || docker rm -f $ids >/dev/null
    ;;
  *) echo "usage: $0 build|up|down" >&2; exit 2 ;;
esac
