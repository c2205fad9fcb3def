#!/bin/sh
# A lab node, as kind makes one: its own Docker engine, then the jetlet agent driving it.
# Pods run inside this container, get this node's pod addresses (10.42.<n>.0/24) and die
# with it. On SIGTERM the agent stops, the pods are removed and the engine shuts down.
set -eu

# node-<n> from the compose replica number: Docker's DNS names this container's address
# `<project>_node_<n>.<network>` (compose v1) or `<project>-node-<n>.<network>` (v2).
if [ -z "${NODE_NAME:-}" ]; then
  NODE_NAME=$(nslookup "$(hostname -i)" 2>/dev/null | sed -n 's/.*name = \([^.]*\)\..*/\1/p' | sed -n 's/^.*[_-]\([0-9][0-9]*\)$/node-\1/p' | head -1)
  NODE_NAME="${NODE_NAME:-$(hostname)}"
fi
export NODE_NAME
# This node's NATS identity, when the lab has one for it (scripts/compose.sh, jetctl nats-config).
seed="/nats-auth/node-$(echo "$NODE_NAME" | tr . _).nk"
if [ -z "${NATS_NKEY_SEED_FILE:-}" ] && [ -f "$seed" ]; then export NATS_NKEY_SEED_FILE="$seed"; fi
number=$(echo "$NODE_NAME" | sed -n 's/^.*-\([0-9][0-9]*\)$/\1/p')
[ -n "$number" ] && [ "$number" -le 255 ] || number=0

# Pods belong under this container's own cgroup, so its memory and CPU limits hold them too.
cgroup=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p' /proc/self/cgroup)
[ -n "$cgroup" ] || cgroup=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
cgroup="${cgroup%/}/jetlet"

registry="${LAB_REGISTRY:-registry:5000}"
dockerd \
  --storage-driver="${NODE_STORAGE_DRIVER:-overlay2}" \
  --iptables=false --ip-masq=false \
  --bip="10.42.$number.1/24" \
  --cgroup-parent="$cgroup" \
  --registry-mirror="http://$registry" --insecure-registry="$registry" \
  --log-level=warn >/var/log/dockerd.log 2>&1 &
dockerd=$!

agent=
stopping=0
stop() {
  stopping=1
  [ -z "$agent" ] || { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
  pods=$(docker ps -aq 2>/dev/null || true)
  [ -z "$pods" ] || docker rm -f $pods >/dev/null 2>&1 || true
  kill -TERM "$dockerd" 2>/dev/null || true
  wait "$dockerd" 2>/dev/null || true
  exit 0
}
trap stop TERM INT

i=0
until docker version >/dev/null 2>&1; do
  kill -0 "$dockerd" 2>/dev/null || { echo "the node's Docker engine exited:" >&2; tail -20 /var/log/dockerd.log >&2; exit 1; }
  i=$((i + 1)); [ "$i" -lt 600 ] || { echo "the node's Docker engine did not start" >&2; exit 1; }
  sleep 0.1
done
echo "node $NODE_NAME: Docker engine up ($(docker version -f '{{.Server.Version}}') $(docker info -f '{{.Driver}}')), cgroup $cgroup"

# The agent is restarted on its own if it exits, as systemd restarts a kubelet: the pods keep running.
while [ "$stopping" = 0 ]; do
  # The agent's launch settings, as every launcher gives them (AGENT_LAUNCH in test/harness/cluster.ts).
  MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072 node --v8-pool-size=1 /app/dist/bundle/agent.mjs &
  agent=$!
  wait "$agent" || true
  [ "$stopping" = 0 ] || break
  echo "node $NODE_NAME: the agent exited; starting it again in 2 s" >&2
  sleep 2
done
