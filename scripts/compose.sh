#!/usr/bin/env bash
# The compose lab (docker-compose.yml): build the one jetlet/lab image from this machine's own
# binaries and the compiled apps, then run docker-compose.
#   scripts/compose.sh build        build jetlet/lab:dev unless it is current
#   scripts/compose.sh up [ARGS]    build, then docker-compose up -d ARGS, wait for the nodes, write a kubeconfig
#   scripts/compose.sh down         docker-compose down -v: no container, network or volume left
# The image is rebuilt only when what goes into it changed (its io.jetlet.build label holds
# the digest of its inputs), so a second run, or CI on the same engine, reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/compose}"
source scripts/services.sh

LAB_IMAGE=jetlet/lab:dev
# Binaries of the image, each with the shared libraries it loads.
LAB_BINARIES=(node nats-server docker-registry dockerd docker-proxy containerd containerd-shim-runc-v2 runc docker prometheus prometheus-alertmanager)

# copy_with_libs BINARY ROOTFS DEST: the binary at DEST and every library it loads at its own path.
copy_with_libs() {
  local bin="$1" rootfs="$2" lib
  install -D "$bin" "$rootfs$3"
  for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
    [ -e "$rootfs$lib" ] || install -D "$lib" "$rootfs$lib"
  done
}

# lab_digest: a digest of everything the image is made of.
lab_digest() {
  local bin
  {
    for bin in "${LAB_BINARIES[@]}"; do sha256sum "$(command -v "$bin")"; done
    sha256sum /usr/bin/busybox /usr/share/prometheus/alertmanager/*.tmpl package-lock.json package.json scripts/compose.sh images/lab/*
    find dist -type f \( -name '*.js' -o -name '*.mjs' -o -name '*.cjs' \) ! -name '*spec.js' ! -path 'dist/bench/*' | LC_ALL=C sort | xargs sha256sum
    find deploy -type f | LC_ALL=C sort | xargs sha256sum
    docker image inspect -f '{{.Id}}' jetlet/pause:1.0 jetlet/busybox:1.35
  } | sha256sum | cut -c1-16
}

# production_modules DIR: node_modules without dev dependencies, cached by the lock file's digest.
production_modules() {
  local cache
  cache="$JETLET_STATE/modules-$(cat package.json package-lock.json | sha256sum | cut -c1-16)"
  if [ ! -d "$cache/node_modules" ]; then
    log "installing production npm dependencies for the image"
    rm -rf "$JETLET_STATE"/modules-*
    mkdir -p "$cache"
    cp package.json package-lock.json "$cache/"
    (cd "$cache" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  cp -a "$cache/node_modules/." "$1/"
}

# seeded_registry DIR: a registry's storage holding the lab's images, cached by their ids.
seeded_registry() {
  local cache port config pid image
  cache="$JETLET_STATE/registry-$(docker image inspect -f '{{.Id}}' jetlet/pause:1.0 jetlet/busybox:1.35 | sha256sum | cut -c1-16)"
  if [ ! -d "$cache/data" ]; then
    log "seeding the lab registry with jetlet/pause:1.0 and jetlet/busybox:1.35"
    rm -rf "$JETLET_STATE"/registry-*
    mkdir -p "$cache"
    port=$(free_port)
    config="$cache/config.yml"
    printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' "$cache/data" "$port" >"$config"
    docker-registry serve "$config" >"$cache/registry.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
    for image in jetlet/pause:1.0 jetlet/busybox:1.35; do
      docker tag "$image" "127.0.0.1:$port/$image"
      docker push -q "127.0.0.1:$port/$image" >/dev/null
      docker rmi "127.0.0.1:$port/$image" >/dev/null
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
  fi
  cp -a "$cache/data/." "$1/"
}

# free_port: a TCP port on loopback that nothing listens on.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

build_image() {
  ensure_packages
  apt_install docker-compose docker-compose curl curl
  ensure_node_modules
  # The test suite compiles once before it starts; it sets JETLET_COMPILED=1.
  [ "${JETLET_COMPILED:-}" = 1 ] || build
  ensure_docker
  ensure_images
  local digest ctx rootfs bin
  digest=$(lab_digest)
  if image_current "$LAB_IMAGE" "$digest"; then return 0; fi
  log "building $LAB_IMAGE"
  ctx=$(mktemp -d)
  rootfs="$ctx/rootfs"
  mkdir -p "$rootfs"/{bin,tmp,run,data,lab,etc,var/lib/registry,var/lib/jetlet,var/log} "$ctx"/{registry,modules,app}
  for bin in "${LAB_BINARIES[@]}"; do copy_with_libs "$(command -v "$bin")" "$rootfs" "/usr/bin/$bin"; done
  install -D /usr/bin/busybox "$rootfs/bin/busybox"
  /usr/bin/busybox --install -s "$rootfs/bin"
  # busybox --install links to the host's path of busybox; point them at the image's.
  find "$rootfs/bin" -type l -exec ln -sf /bin/busybox {} \;
  chmod 1777 "$rootfs/tmp"
  ln -s ../run "$rootfs/var/run"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\ndocker:x:999:\n' >"$rootfs/etc/group"
  cp images/lab/registry.yml images/lab/node-entrypoint.sh images/lab/prometheus.yml images/lab/alertmanager.yml "$rootfs/lab/"
  cp images/lab/nsswitch.conf "$rootfs/etc/nsswitch.conf"
  # Alertmanager will not start without its notification templates (and serves its UI from here).
  mkdir -p "$rootfs/usr/share/prometheus"
  cp -rL /usr/share/prometheus/alertmanager "$rootfs/usr/share/prometheus/"
  seeded_registry "$ctx/registry"
  production_modules "$ctx/modules"
  cp -r package.json dist deploy "$ctx/app/"
  # An agent's code cache is kept for its file's size and modification time, which the copy changes: each node keeps its own.
  find "$ctx/app/dist/bundle" -name '*.cache' -delete
  cp images/lab/Dockerfile "$ctx/"
  DOCKER_BUILDKIT=0 docker build -q --label "io.jetlet.build=$digest" -t "$LAB_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

# wait_ready: until every node replica is Ready in the API; then a kubeconfig for the lab.
wait_ready() {
  local port server want
  port=$(docker-compose port api 8001 | sed 's/.*://')
  server="https://127.0.0.1:$port"
  want=$(docker-compose ps -q node | wc -l)
  node dist/apps/cli/src/main.js kubeconfig --server "$server" --token "$(admin_token "$JETLET_STATE/auth")" \
    --certificate-authority "$JETLET_STATE/auth/tls.crt" >"$JETLET_STATE/kubeconfig"
  chmod 600 "$JETLET_STATE/kubeconfig"
  log "waiting for $want nodes to be Ready at $server"
  KUBECONFIG="$JETLET_STATE/kubeconfig" node -e '
    const [want] = process.argv.slice(1);
    const { execFileSync } = require("node:child_process");
    const deadline = Date.now() + 300_000;
    (async function poll() {
      try {
        const { items } = JSON.parse(execFileSync(process.execPath, ["dist/apps/cli/src/main.js", "get", "nodes", "-o", "json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
        const ready = items.filter((n) => /^node-\d+$/.test(n.metadata.name) && n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
        if (ready.length >= Number(want)) return;
      } catch {}
      if (Date.now() > deadline) { console.error("nodes not Ready after 5 minutes; see docker-compose logs node"); process.exit(1); }
      setTimeout(poll, 500);
    })();' "$want"
  cat <<MSG
jetlet lab is up: $want nodes, API $server, NATS on 127.0.0.1:$(docker-compose port nats-1 4222 | sed 's/.*://') (and nats-2, nats-3)
  point kubectl and jetctl at it:  export KUBECONFIG=$JETLET_STATE/kubeconfig
  try:     kubectl get nodes -o wide; jetctl apply -f test/fixtures/web-pod.yaml
  drills:  jetctl lab help
  stop:    docker-compose down -v
MSG
}

case "${1:-up}" in
  build) build_image ;;
  up)
    shift || true
    build_image
    # The API is secured: a token file with an admin token and a certificate, mounted into it.
    ensure_api_auth "$JETLET_STATE/auth"
    # So is NATS: an identity per component and per node, the servers' permissions generated.
    ensure_lab_nats_auth "$JETLET_STATE/nats-auth" $(seq -f 'node-%g' 1 "${LAB_NODES:-3}")
    # And the hollow profile's process: one identity for its nodes hollow-0.., and no other.
    node dist/apps/cli/src/main.js hollow credentials hollow --count "${HOLLOW_NODES:-200}" --dir "$JETLET_STATE/nats-auth" >/dev/null
    # Servers already running read a new node's identity on SIGHUP.
    docker-compose kill -s HUP nats-1 nats-2 nats-3 >/dev/null 2>&1 || true
    if [ "${LAB_INSECURE:-}" = 1 ]; then
      log "LAB_INSECURE=1: the API runs WITHOUT authentication; anyone on this machine is cluster-admin"
      export LAB_INSECURE_API=true
    fi
    docker-compose up -d "$@"
    wait_ready
    ;;
  down) docker-compose down -v --remove-orphans ;;
  *) echo "usage: $0 build|up|down" >&2; exit 2 ;;
esac
