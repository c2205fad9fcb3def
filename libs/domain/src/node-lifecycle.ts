import type { PodSpec, Taint } from '#contracts';

/** The taint the node lifecycle controller puts on a node that stopped heartbeating. */
export const UNREACHABLE_TAINT_KEY = 'node.kubernetes.io/unreachable';

/** The taints of a node that has not been heard from since `sinceMs`. */
export function unreachableTaints(sinceMs: number): Taint[] {
  const timeAdded = new Date(sinceMs).toISOString().replace(/\.\d+Z$/, 'Z');
  return [
    { key: UNREACHABLE_TAINT_KEY, effect: 'NoSchedule', timeAdded },
    { key: UNREACHABLE_TAINT_KEY, effect: 'NoExecute', timeAdded },
  ];
}

/**
 * When a pod on an unreachable node is evicted: the taint's time plus how long the pod
 * tolerates the unreachable NoExecute taint — its own toleration's seconds, or the default
 * that Kubernetes' DefaultTolerationSeconds admission gives every pod (300 s). Undefined when
 * the pod tolerates it for ever.
 */
export function evictionTimeMs(spec: PodSpec, taintedSinceMs: number, defaultTolerationSeconds: number): number | undefined {
  const toleration = (spec.tolerations ?? []).find(
    (t) =>
      (t.effect === undefined || t.effect === 'NoExecute') &&
      (t.operator === 'Exists'
        ? t.key === undefined || t.key === '' || t.key === UNREACHABLE_TAINT_KEY
        : t.key === UNREACHABLE_TAINT_KEY && (t.value ?? '') === ''),
  );
  if (!toleration) return taintedSinceMs + defaultTolerationSeconds * 1000;
  if (toleration.tolerationSeconds === undefined) return undefined;
  return taintedSinceMs + Math.max(0, toleration.tolerationSeconds) * 1000;
}

/**
 * When a deleted pod's deletion is finalised without its node, as Kubernetes' pod garbage
 * collector force-deletes the pods of nodes that are gone: once the node grace has passed
 * since the deletion and since the node was last heard from. A node that never registered
 * was never heard from. Undefined while the node is Ready (a live node stops its pods
 * itself), and for an eviction from a node that exists: the taint manager evicts because the
 * node is unreachable, and the node stops the pod when it returns.
 */
export function deletionFinalizeTimeMs(
  deletionMs: number,
  node: { ready: boolean; lastHeartbeatMs: number } | undefined,
  graceMs: number,
  evicted: boolean,
): number | undefined {
  if (node?.ready || (node && evicted)) return undefined;
  return Math.max(deletionMs, node?.lastHeartbeatMs ?? 0) + graceMs;
}

/** kube-controller-manager's --unhealthy-zone-threshold and --large-cluster-size-threshold defaults. */
const UNHEALTHY_ZONE_THRESHOLD = 0.55;
const LARGE_CLUSTER_SIZE_THRESHOLD = 50;

/** A node's zone as the node lifecycle controller groups nodes: its region and zone labels. */
function zoneOf(labels: Record<string, string> | undefined): string {
  return `${labels?.['topology.kubernetes.io/region'] ?? ''}:\0:${labels?.['topology.kubernetes.io/zone'] ?? ''}`;
}

/**
 * Where the node lifecycle controller holds evictions, as kube-controller-manager does when
 * nodes go NotReady together: the likelier cause is then the control plane's own reach (here,
 * a JetStream outage that no node's heartbeat got through), not that the nodes died.
 * - `all`: every zone is fully disrupted (no node Ready) — "master disruption mode": no pod
 *   anywhere is evicted. Kubernetes enters it with a single node too; a one-node cluster here
 *   keeps evicting, so that the death of its only agent still ends its pods.
 * - `zones`: zones in partial disruption (more than two nodes NotReady, at least 55% of the
 *   zone) of at most 50 nodes, whose eviction rate Kubernetes sets to zero.
 */
export function heldEvictions(nodes: ReadonlyArray<{ labels?: Record<string, string>; ready: boolean }>): { all: boolean; zones: Set<string> } {
  const counts = new Map<string, { ready: number; notReady: number }>();
  for (const node of nodes) {
    const zone = zoneOf(node.labels);
    const count = counts.get(zone) ?? { ready: 0, notReady: 0 };
    if (node.ready) count.ready++;
    else count.notReady++;
    counts.set(zone, count);
  }
  const zones = new Set<string>();
  let fullyDisrupted = 0;
  for (const [zone, { ready, notReady }] of counts) {
    if (ready === 0) fullyDisrupted++;
    else if (notReady > 2 && notReady / (ready + notReady) >= UNHEALTHY_ZONE_THRESHOLD && ready + notReady <= LARGE_CLUSTER_SIZE_THRESHOLD) zones.add(zone);
  }
  return { all: nodes.length > 1 && fullyDisrupted === counts.size, zones };
}

/** Whether a node's zone is among `heldEvictions(...).zones`. */
export const inZone = (zones: Set<string>, labels: Record<string, string> | undefined): boolean => zones.has(zoneOf(labels));
