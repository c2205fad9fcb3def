import type { NodeObject, PodSpec } from '#contracts';
import { cpuMillis, memoryBytes } from './quantity.js';
import { podEphemeralStorageRequest, podHostPorts, podRequests, toleratesTaint } from './scheduling.js';

/** Why the kubelet refuses a pod it was given: the reason and message its status carries. */
export interface AdmissionFailure {
  reason: string;
  message: string;
}

/** The reasons a rejected pod's status carries, as the kubelet names them. */
export const ADMISSION_REASONS = ['NodeAffinity', 'Taint', 'NodePorts', 'OutOfcpu', 'OutOfmemory', 'OutOfephemeral-storage', 'OutOfpods'] as const;

/** The status message of a rejected pod, as the kubelet writes it. */
export function rejectionMessage(failure: AdmissionFailure): string {
  return `Pod was rejected: ${failure.message}`;
}

/**
 * The kubelet's admission of a pod bound to this node (its predicate admit handler): node
 * affinity, NoExecute taints, host ports, then cpu, memory, ephemeral-storage and pod count against what the
 * pods already admitted take. The scheduler checked all this for the pods it placed; a pod
 * created with `spec.nodeName` reaches the node unchecked, and this is where it is refused.
 * A cordon does not stop it, as in Kubernetes: it only keeps the scheduler away.
 */
export function admissionFailure(spec: PodSpec, node: NodeObject, admitted: PodSpec[]): AdmissionFailure | undefined {
  const labels = node.metadata.labels ?? {};
  if (spec.nodeSelector && !Object.entries(spec.nodeSelector).every(([k, v]) => labels[k] === v)) {
    return { reason: 'NodeAffinity', message: 'Predicate NodeAffinity failed' };
  }
  const noExecute = (node.spec.taints ?? []).filter((t) => t.effect === 'NoExecute');
  if (noExecute.some((taint) => !(spec.tolerations ?? []).some((t) => toleratesTaint(t, taint)))) {
    return { reason: 'Taint', message: 'Predicate TaintToleration failed' };
  }
  const used = new Set(admitted.flatMap(podHostPorts));
  if (podHostPorts(spec).some((p) => used.has(p))) return { reason: 'NodePorts', message: 'Predicate NodePorts failed' };

  const allocatable = node.status.allocatable;
  const requested = podRequests(spec);
  const taken = admitted
    .map(podRequests)
    .reduce((sum, r) => ({ milliCPU: sum.milliCPU + r.milliCPU, memory: sum.memory + r.memory }), { milliCPU: 0, memory: 0 });
  const checks: Array<[resource: string, request: number, used: number, capacity: number | undefined]> = [
    ['cpu', requested.milliCPU, taken.milliCPU, allocatable.cpu === undefined ? undefined : cpuMillis(allocatable.cpu)],
    ['memory', requested.memory, taken.memory, allocatable.memory === undefined ? undefined : memoryBytes(allocatable.memory)],
    [
      'ephemeral-storage',
      podEphemeralStorageRequest(spec),
      admitted.reduce((sum, p) => sum + podEphemeralStorageRequest(p), 0),
      allocatable['ephemeral-storage'] === undefined ? undefined : memoryBytes(allocatable['ephemeral-storage']),
    ],
    ['pods', 1, admitted.length, allocatable.pods === undefined ? undefined : Number(allocatable.pods)],
  ];
  for (const [resource, request, inUse, capacity] of checks) {
    if (capacity === undefined || request === 0 || request + inUse <= capacity) continue;
    return {
      reason: `OutOf${resource}`,
      message: `Node didn't have enough resource: ${resource}, requested: ${request}, used: ${inUse}, capacity: ${capacity}`,
    };
  }
  return undefined;
}
