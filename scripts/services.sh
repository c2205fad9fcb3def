#!/usr/bin/env bash
# Shared set-up for the lab, the tests and the benchmarks: install what is missing,
# start a Docker engine and a NATS server when none is running, build local images.
# Every process started here records its pid under $JETLET_STATE so that it, and only
# it, is stopped again; an engine or server found already running is used and left alone.
set -euo pipefail

JETLET_ROOT="${JETLET_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
JETLET_STATE="${JETLET_STATE:-$JETLET_ROOT/.jetlet}"
mkdir -p "$JETLET_STATE"

log() { printf '[jetlet] %s\n' "$*" >&2; }

apt_updated=0
apt_install() {
  local missing=()
  local cmd pkg
  while [ $# -gt 0 ]; do
    cmd="$1" pkg="$2"; shift 2
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  if [ "$apt_updated" = 0 ]; then apt-get update -q >/dev/null; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}

ensure_packages() {
  apt_install dockerd docker.io nats-server nats-server busybox busybox-static \
    docker-registry docker-registry gcc gcc prometheus prometheus prometheus-alertmanager prometheus-alertmanager
  # A static pause binary needs the static C library.
  [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f /usr/lib/aarch64-linux-gnu/libc.a ] || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q libc6-dev >/dev/null
  }
}

ensure_node_modules() {
  if [ ! -d "$JETLET_ROOT/node_modules" ] || [ "$JETLET_ROOT/package-lock.json" -nt "$JETLET_ROOT/node_modules/.package-lock.json" ]; then
    log "installing npm dependencies"
    (cd "$JETLET_ROOT" && npm ci --no-audit --no-fund >/dev/null)
  fi
}

build() {
  log "compiling"
  (cd "$JETLET_ROOT" && npm run --silent build)
}

docker_ready() { docker version >/dev/null 2>&1; }

ensure_docker() {
  if docker_ready; then return 0; fi
  log "starting a Docker engine"
  dockerd >"$JETLET_STATE/dockerd.log" 2>&1 &
  echo $! >"$JETLET_STATE/dockerd.pid"
  for _ in $(seq 1 120); do
    docker_ready && return 0
    kill -0 "$(cat "$JETLET_STATE/dockerd.pid")" 2>/dev/null || break
    sleep 0.5
  done
  log "the Docker engine did not start; its log:"; tail -20 "$JETLET_STATE/dockerd.log" >&2
  return 1
}

# ensure_nats PORT DATA_DIR [AUTH_DIR] [TLS_DIR]: a JetStream-enabled server on 127.0.0.1:PORT, unless
# one answers there; with AUTH_DIR (from `jetctl nats-config`), it accepts only those identities;
# with TLS_DIR (from `jetctl nats-tls`), only TLS clients (and with its verify, client certificates).
ensure_nats() {
  local port="$1" dir="$2" auth="${3:-}" tls="${4:-}" args conf_dir
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    [ -z "$auth$tls" ] || log "a NATS server already answers on 127.0.0.1:$port; it keeps its own authorization and TLS (stop it to run secured)"
    return 0
  fi
  mkdir -p "$dir"
  args=(-js -sd "$dir" -a 127.0.0.1 -p "$port")
  conf_dir="${auth:-$tls}"
  if [ -n "$conf_dir" ]; then
    # Included relative to the including file, so the server's file sits beside auth.conf (or tls.conf).
    : >"$conf_dir/server.conf"
    [ -z "$auth" ] || printf 'include "auth.conf"\n' >>"$conf_dir/server.conf"
    [ -z "$tls" ] || printf 'include "%s/tls.conf"\n' "$(realpath --relative-to="$conf_dir" "$tls")" >>"$conf_dir/server.conf"
    args+=(-c "$conf_dir/server.conf")
  fi
  log "starting nats-server on 127.0.0.1:$port${auth:+ with the identities of $auth}${tls:+ with TLS from $tls}"
  nats-server "${args[@]}" >"$JETLET_STATE/nats-$port.log" 2>&1 &
  echo $! >"$JETLET_STATE/nats-$port.pid"
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  log "nats-server did not start; its log:"; tail -20 "$JETLET_STATE/nats-$port.log" >&2
  return 1
}

# image_current TAG DIGEST: the image exists and was built from the files with this digest.
image_current() {
  [ "$(docker image inspect -f '{{index .Config.Labels "io.jetlet.build"}}' "$1" 2>/dev/null)" = "$2" ]
}

# The images every pod needs: the pause sandbox and a busybox for workloads, built from local
# files, and rebuilt when those files change.
ensure_images() {
  local ctx pause_digest busybox_digest
  pause_digest=$(cat "$JETLET_ROOT/images/pause/pause.c" "$JETLET_ROOT/images/pause/Dockerfile" | sha256sum | cut -c1-16)
  busybox_digest=$(cat /usr/bin/busybox "$JETLET_ROOT/images/busybox/Dockerfile" | sha256sum | cut -c1-16)
  if ! image_current jetlet/pause:1.0 "$pause_digest"; then
    log "building jetlet/pause:1.0"
    ctx=$(mktemp -d)
    gcc -static -Os -o "$ctx/pause" "$JETLET_ROOT/images/pause/pause.c"
    cp "$JETLET_ROOT/images/pause/Dockerfile" "$ctx/"
    DOCKER_BUILDKIT=0 docker build -q --label "io.jetlet.build=$pause_digest" -t jetlet/pause:1.0 "$ctx" >/dev/null
    rm -rf "$ctx"
  fi
  if ! image_current jetlet/busybox:1.35 "$busybox_digest"; then
    log "building jetlet/busybox:1.35"
    ctx=$(mktemp -d)
    cp /usr/bin/busybox "$ctx/busybox"
    cp "$JETLET_ROOT/images/busybox/Dockerfile" "$ctx/"
    DOCKER_BUILDKIT=0 docker build -q --label "io.jetlet.build=$busybox_digest" -t jetlet/busybox:1.35 "$ctx" >/dev/null
    rm -rf "$ctx"
  fi
}

# stop_started NAME: stop a process this project started (by its recorded pid), wait for it.
stop_started() {
  local pidfile="$JETLET_STATE/$1.pid" pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# prepare_run: everything a test or benchmark run needs, from a fresh machine. A Docker engine
# this starts is stopped again when the calling script exits; one already running is left alone.
prepare_run() {
  ensure_packages
  ensure_node_modules
  build
  started_docker=0
  docker_ready || started_docker=1
  ensure_docker
  trap 'if [ "$started_docker" = 1 ]; then stop_started dockerd; fi' EXIT
  ensure_images
}

# ensure_api_auth DIR: what a secured API needs, made once and kept: tokens.csv with an admin
# token (group system:masters), a self-signed certificate for 127.0.0.1 and localhost
# (kubectl sends a token only over TLS), a token for Prometheus (group system:monitoring: /metrics
# only), an empty rbac.yaml to bind users in, and a client CA (client-ca.crt, the API's
# API_CLIENT_CA_FILE) with an admin client certificate (admin.crt, admin.key: CN=admin,
# O=system:masters) for kubectl --client-certificate/--client-key.
ensure_api_auth() {
  local dir="$1"
  mkdir -p "$dir"
  chmod 700 "$dir"
  if [ ! -s "$dir/tokens.csv" ]; then
    printf '%s,admin,0,"system:masters"\n' "$(openssl rand -hex 24)" >"$dir/tokens.csv"
    openssl rand -hex 24 >"$dir/prometheus.token"
    printf '%s,prometheus,1,"system:monitoring"\n' "$(cat "$dir/prometheus.token")" >>"$dir/tokens.csv"
    chmod 600 "$dir/tokens.csv"
    chmod 644 "$dir/prometheus.token"
  fi
  [ -f "$dir/rbac.yaml" ] || printf '# RoleBindings and ClusterRoleBindings of view, edit, cluster-admin, system:nodes\n' >"$dir/rbac.yaml"
  if [ ! -s "$dir/tls.crt" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 -subj /CN=jetlet-api \
      -addext 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:api' -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
    chmod 644 "$dir/tls.key"
  fi
  if [ ! -s "$dir/client-ca.crt" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 -subj /CN=jetlet-client-ca \
      -keyout "$dir/client-ca.key" -out "$dir/client-ca.crt" 2>/dev/null
    openssl req -x509 -CA "$dir/client-ca.crt" -CAkey "$dir/client-ca.key" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
      -nodes -days 365 -subj '/O=system:masters/CN=admin' -addext extendedKeyUsage=clientAuth \
      -addext basicConstraints=critical,CA:FALSE -keyout "$dir/admin.key" -out "$dir/admin.crt" 2>/dev/null
    chmod 600 "$dir/client-ca.key" "$dir/admin.key"
  fi
}

# ensure_nats_auth DIR NODE...: the NATS server's auth.conf and each component's and node's nkey
# seed (`jetctl nats-config`; existing seeds are kept). Prints identity, public key, seed file per line.
ensure_nats_auth() {
  local dir="$1"; shift
  local IFS=,
  node dist/apps/cli/src/main.js nats-config --nodes "$*" --out "$dir" | grep -v '^include '
}

# ensure_lab_nats_auth DIR NODE...: ensure_nats_auth, and DIR/server.conf for the servers: it
# includes auth.conf, unless JETLET_INSECURE_NATS=1 (then the servers take anyone).
ensure_lab_nats_auth() {
  local dir="$1"
  ensure_nats_auth "$@" >/dev/null
  if [ "${JETLET_INSECURE_NATS:-}" = 1 ]; then
    log "JETLET_INSECURE_NATS=1: NATS runs WITHOUT identities; anyone who reaches it can write any fact and read every reply"
    printf '# JETLET_INSECURE_NATS=1: no authorization\n' >"$dir/server.conf"
  else
    printf 'include "auth.conf"\n' >"$dir/server.conf"
  fi
}

# ensure_nats_tls DIR [verify]: `jetctl nats-tls`'s CA (kept once made), server certificate for
# 127.0.0.1 and localhost, and tls.conf; with `verify`, also a client certificate (client.crt,
# client.key) and a server that requires one.
ensure_nats_tls() {
  local dir="$1" verify=()
  [ "${2:-}" != verify ] || verify=(--verify)
  node dist/apps/cli/src/main.js nats-tls --out "$dir" "${verify[@]}" >/dev/null
}

# admin_token DIR: the admin token of ensure_api_auth's token file.
admin_token() { sed -n 's/^\([^,]*\),admin,.*/\1/p' "$1/tokens.csv" | head -1; }
