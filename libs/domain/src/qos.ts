import type { Container, PodQOSClass, PodSpec } from '#contracts';
import { cpuMillis, memoryBytes } from './quantity.js';

const QOS_RESOURCES = { cpu: cpuMillis, memory: memoryBytes } as const;
type QosResource = keyof typeof QOS_RESOURCES;

/** A container's positive cpu and memory amounts of one kind, in millicores and bytes. */
function amounts(c: Container, kind: 'requests' | 'limits'): Map<QosResource, number> {
  // Kubernetes defaults a missing request to its limit before anything reads it.
  const values = kind === 'requests' ? { ...c.resources?.limits, ...c.resources?.requests } : (c.resources?.limits ?? {});
  const found = new Map<QosResource, number>();
  for (const name of Object.keys(QOS_RESOURCES) as QosResource[]) {
    const quantity = values[name];
    if (quantity === undefined) continue;
    const amount = QOS_RESOURCES[name](quantity);
    if (amount > 0) found.set(name, amount);
  }
  return found;
}

/**
 * Kubernetes' quality of service class (`ComputePodQOS`), over containers and init containers:
 * BestEffort without any cpu or memory request or limit; Guaranteed when every container
 * limits both and the pod's summed requests equal its summed limits; Burstable otherwise.
 */
export function qosClass(spec: Pick<PodSpec, 'containers' | 'initContainers'>): PodQOSClass {
  const requests = new Map<QosResource, number>();
  const limits = new Map<QosResource, number>();
  let guaranteed = true;
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    for (const [name, amount] of amounts(c, 'requests')) requests.set(name, (requests.get(name) ?? 0) + amount);
    const own = amounts(c, 'limits');
    for (const [name, amount] of own) limits.set(name, (limits.get(name) ?? 0) + amount);
    if (!own.has('cpu') || !own.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && requests.size === limits.size && [...requests].every(([name, amount]) => limits.get(name) === amount)) return 'Guaranteed';
  return 'Burstable';
}
