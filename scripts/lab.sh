#!/usr/bin/env bash
# The one-node lab: NATS (unless NATS_URL points at one), the API, the scheduler and one
# agent on this machine's Docker engine, left running in the background.
#   scripts/lab.sh up      install what is missing, build, start everything
#   scripts/lab.sh down    stop what `up` started and remove the lab node's containers
#   scripts/lab.sh status  what runs, and where its logs are
# The API is secured: HTTPS on API_PORT with a token file and an admin token made in
# $JETLET_STATE/auth, and $JETLET_STATE/kubeconfig for kubectl and jetctl. LAB_INSECURE=1 starts
# it unsecured on plain HTTP instead (anyone on this machine is cluster-admin).
# NATS is secured too: one nkey identity per component and per node, with the permissions
# `jetctl nats-config` generates ($JETLET_STATE/nats-auth). JETLET_INSECURE_NATS=1 runs it open.
# JETLET_NATS_TLS=1 makes the NATS it starts require TLS, with a CA and certificates made by
# `jetctl nats-tls` ($JETLET_STATE/nats-tls), and gives every app the CA; JETLET_NATS_TLS=verify
# also makes the server require the client certificate the apps are given (mutual TLS).
set -euo pipefail
cd "$(dirname "$0")/.."
export JETLET_STATE="${JETLET_STATE:-$PWD/.jetlet/lab}"
source scripts/services.sh

NODE_NAME="${NODE_NAME:-$(hostname | tr 'A-Z_' 'a-z-')}"
API_PORT="${API_PORT:-8001}"
NATS_PORT="${NATS_PORT:-4222}"

start_app() {
  local name="$1"; shift
  if [ -f "$JETLET_STATE/$name.pid" ] && kill -0 "$(cat "$JETLET_STATE/$name.pid")" 2>/dev/null; then
    log "$name already running (pid $(cat "$JETLET_STATE/$name.pid"))"
    return 0
  fi
  # The API's node flags, as test/harness/cluster.ts gives them (API_NODE_FLAGS).
  local flags=() entry="dist/apps/$name/src/main.js"
  [ "$name" = api ] && flags=(--max-semi-space-size=32)
  # The agent runs as one file (scripts/bundle.mjs), with its launch settings (AGENT_LAUNCH).
  local launch=()
  if [ "$name" = agent ]; then
    entry=dist/bundle/agent.mjs
    flags=(--v8-pool-size=1)
    launch=(MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072)
  fi
  env ${launch[@]+"${launch[@]}"} "$@" node ${flags[@]+"${flags[@]}"} "$entry" >"$JETLET_STATE/$name.log" 2>&1 &
  echo $! >"$JETLET_STATE/$name.pid"
}

wait_http() {
  local url="$1" what="$2"
  shift 2
  for _ in $(seq 1 100); do
    curl -fsS "$@" "$url" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  log "$what did not come up; see $JETLET_STATE"; return 1
}

up() {
  ensure_packages
  apt_install curl curl
  ensure_node_modules
  build
  ensure_docker
  ensure_images
  local nauth="$JETLET_STATE/nats-auth"
  local seed_api=() seed_scheduler=() seed_agent=()
  if [ "${JETLET_INSECURE_NATS:-}" = 1 ]; then
    log "JETLET_INSECURE_NATS=1: NATS runs WITHOUT identities; anyone on this machine can write any fact and read every reply"
    nauth=
  else
    seed_agent=(NATS_NKEY_SEED_FILE="$(ensure_nats_auth "$nauth" "$NODE_NAME" | awk -F'\t' -v id="node:$NODE_NAME" '$1 == id { print $3 }')")
    seed_api=(NATS_NKEY_SEED_FILE="$nauth/api.nk")
    seed_scheduler=(NATS_NKEY_SEED_FILE="$nauth/scheduler.nk")
  fi
  local ntls="" tls_env=()
  case "${JETLET_NATS_TLS:-}" in
    "" | 0) ;;
    1 | verify)
      ntls="$JETLET_STATE/nats-tls"
      ensure_nats_tls "$ntls" "$JETLET_NATS_TLS"
      tls_env=(NATS_TLS_CA_FILE="$ntls/ca.crt")
      [ "$JETLET_NATS_TLS" != verify ] || tls_env+=(NATS_TLS_CERT_FILE="$ntls/client.crt" NATS_TLS_KEY_FILE="$ntls/client.key")
      ;;
    *) log "JETLET_NATS_TLS must be 1 (TLS) or verify (TLS and client certificates)"; return 1 ;;
  esac
  if [ -z "${NATS_URL:-}" ]; then
    ensure_nats "$NATS_PORT" "$JETLET_STATE/nats-data" "$nauth" "$ntls"
    NATS_URL="nats://127.0.0.1:$NATS_PORT"
  fi
  local server curl_auth=()
  if [ "${LAB_INSECURE:-}" = 1 ]; then
    log "LAB_INSECURE=1: the API runs WITHOUT authentication; anyone on this machine is cluster-admin"
    server="http://127.0.0.1:$API_PORT"
    start_app api NATS_URL="$NATS_URL" "${seed_api[@]}" "${tls_env[@]}" API_PORT="$API_PORT" API_INSECURE=true
    node dist/apps/cli/src/main.js kubeconfig --server "$server" >"$JETLET_STATE/kubeconfig"
  else
    ensure_api_auth "$JETLET_STATE/auth"
    server="https://127.0.0.1:$API_PORT"
    start_app api NATS_URL="$NATS_URL" "${seed_api[@]}" "${tls_env[@]}" API_PORT="$API_PORT" API_TOKEN_AUTH_FILE="$JETLET_STATE/auth/tokens.csv" \
      API_AUTHORIZATION_FILE="$JETLET_STATE/auth/rbac.yaml" API_TLS_CERT_FILE="$JETLET_STATE/auth/tls.crt" API_TLS_PRIVATE_KEY_FILE="$JETLET_STATE/auth/tls.key" \
      API_CLIENT_CA_FILE="$JETLET_STATE/auth/client-ca.crt"
    node dist/apps/cli/src/main.js kubeconfig --server "$server" --token "$(admin_token "$JETLET_STATE/auth")" \
      --certificate-authority "$JETLET_STATE/auth/tls.crt" >"$JETLET_STATE/kubeconfig"
    chmod 600 "$JETLET_STATE/kubeconfig"
    curl_auth=(--cacert "$JETLET_STATE/auth/tls.crt" -H "Authorization: Bearer $(admin_token "$JETLET_STATE/auth")")
  fi
  start_app scheduler NATS_URL="$NATS_URL" "${seed_scheduler[@]}" "${tls_env[@]}"
  start_app agent NATS_URL="$NATS_URL" "${seed_agent[@]}" "${tls_env[@]}" NODE_NAME="$NODE_NAME" AGENT_ROOT_DIR="$JETLET_STATE/agent"
  wait_http "$server/version" "the API" "${curl_auth[@]}"
  for _ in $(seq 1 100); do
    curl -fsS "${curl_auth[@]}" "$server/api/v1/nodes/$NODE_NAME" 2>/dev/null | grep -q '"KubeletReady"' && break
    sleep 0.2
  done
  local nats_note="open to anyone on this machine (JETLET_INSECURE_NATS=1)"
  [ -z "$nauth" ] || nats_note="identities in $nauth; jetctl reads the streams with NATS_NKEY_SEED_FILE=$nauth/jetctl.nk"
  if [ -n "$ntls" ]; then
    local tls_kind="TLS"
    [ "$JETLET_NATS_TLS" != verify ] || tls_kind="mutual TLS"
    nats_note="$nats_note; $tls_kind with the CA $ntls/ca.crt (for jetctl: export ${tls_env[*]})"
  fi
  cat <<MSG
jetlet lab is up: node $NODE_NAME, API $server, NATS $NATS_URL
  logs:   $JETLET_STATE/{api,scheduler,agent}.log
  try:    export KUBECONFIG=$JETLET_STATE/kubeconfig; kubectl get nodes; node dist/apps/cli/src/main.js get nodes
  tokens: $JETLET_STATE/auth/tokens.csv (token,user,uid,"groups"), bindings: $JETLET_STATE/auth/rbac.yaml
  NATS:   $nats_note
  stop:   npm run lab:down
MSG
}

down() {
  stop_started agent
  stop_started scheduler
  stop_started api
  if docker_ready; then
    ids=$(docker ps -aq --filter "label=io.jetlet.node=$NODE_NAME")
    [ -z "$ids" ] || docker rm -f $ids >/dev/null
  fi
  stop_started "nats-$NATS_PORT"
  stop_started dockerd
  log "lab stopped"
}

status() {
  for name in api scheduler agent "nats-$NATS_PORT" dockerd; do
    if [ -f "$JETLET_STATE/$name.pid" ] && kill -0 "$(cat "$JETLET_STATE/$name.pid")" 2>/dev/null; then
      echo "$name: running (pid $(cat "$JETLET_STATE/$name.pid"))"
    else
      echo "$name: not started by the lab"
    fi
  done
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
