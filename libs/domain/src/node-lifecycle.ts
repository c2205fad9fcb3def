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
