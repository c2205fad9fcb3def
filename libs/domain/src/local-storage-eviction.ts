import { parseQuantity, type Container, type PodSpec } from '#contracts';
import { isSidecar } from './init-containers.js';

/** What a pod uses of the node's disk, as the eviction manager measured it. */
export interface PodStorageUsage {
  /** Bytes used in each of the pod's on-disk emptyDir volumes, by volume name. */
  volumes: Record<string, number>;
  /** Per container: bytes of its writable layer and of its log. */
  containers: Array<{ name: string; rootfsBytes: number; logBytes: number }>;
}

/** Which check of the kubelet's localStorageEviction a pod failed, and its message. */
export interface LocalStorageViolation {
  signal: 'emptyDirFsLimit' | 'ephemeralPodFsLimit' | 'ephemeralContainerFsLimit';
  message: string;
}

const EPHEMERAL = 'ephemeral-storage';

/** Kubernetes' canonical form of a byte count: the largest binary suffix that divides it. */
export function canonicalBytes(bytes: number): string {
  const suffixes = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let value = Math.round(bytes);
  let suffix = '';
  for (const next of suffixes) {
    if (value === 0 || value % 1024 !== 0) break;
    value /= 1024;
    suffix = next;
  }
  return `${value}${suffix}`;
}

const limitOf = (c: Container): string | undefined => c.resources?.limits?.[EPHEMERAL];

/**
 * The pod's ephemeral-storage limit as the kubelet's PodLimits computes it: the containers'
 * (and sidecars') sum, or an init container's if larger; undefined when no container sets one.
 */
export function podEphemeralStorageLimit(spec: Pick<PodSpec, 'containers' | 'initContainers'>): { bytes: number; text: string } | undefined {
  const regular = [...spec.containers, ...(spec.initContainers ?? []).filter(isSidecar)];
  const limited = regular.filter((c) => limitOf(c) !== undefined);
  let bytes = limited.reduce((sum, c) => sum + parseQuantity(limitOf(c) ?? '0'), 0);
  let text = limited.length === 1 ? limitOf(limited[0]) : undefined;
  let found = limited.length > 0;
  for (const init of (spec.initContainers ?? []).filter((c) => !isSidecar(c))) {
    const limit = limitOf(init);
    if (limit === undefined) continue;
    found = true;
    if (parseQuantity(limit) > bytes) {
      bytes = parseQuantity(limit);
      text = limit;
    }
  }
  return found ? { bytes, text: text ?? canonicalBytes(bytes) } : undefined;
}

/** True when the pod has something localStorageEviction checks, so measuring it is worth the cost. */
export function hasLocalStorageLimits(spec: Pick<PodSpec, 'containers' | 'initContainers' | 'volumes'>): boolean {
  return (
    (spec.volumes ?? []).some((v) => v.emptyDir?.sizeLimit !== undefined) ||
    [...spec.containers, ...(spec.initContainers ?? [])].some((c) => limitOf(c) !== undefined)
  );
}

/**
 * The kubelet's localStorageEviction for one pod (pkg/kubelet/eviction/eviction_manager.go), in
 * its order: an emptyDir above its `sizeLimit`; then the pod's writable layers, logs and
 * emptyDirs above the pod's ephemeral-storage limit; then one container's writable layer and log
 * above its own limit. Undefined when the pod is within every limit.
 */
export function localStorageViolation(
  spec: Pick<PodSpec, 'containers' | 'initContainers' | 'volumes'>,
  usage: PodStorageUsage,
): LocalStorageViolation | undefined {
  for (const volume of spec.volumes ?? []) {
    const limit = volume.emptyDir?.sizeLimit;
    const used = usage.volumes[volume.name];
    if (limit === undefined || used === undefined) continue;
    const bytes = parseQuantity(limit);
    if (bytes > 0 && used > bytes) return { signal: 'emptyDirFsLimit', message: `Usage of EmptyDir volume "${volume.name}" exceeds the limit "${limit}". ` };
  }
  const podLimit = podEphemeralStorageLimit(spec);
  if (podLimit) {
    const total =
      usage.containers.reduce((sum, c) => sum + c.rootfsBytes + c.logBytes, 0) +
      (spec.volumes ?? []).filter((v) => v.emptyDir && v.emptyDir.medium !== 'Memory').reduce((sum, v) => sum + (usage.volumes[v.name] ?? 0), 0);
    if (total > podLimit.bytes)
      return { signal: 'ephemeralPodFsLimit', message: `Pod ephemeral local storage usage exceeds the total limit of containers ${podLimit.text}. ` };
  }
  for (const container of usage.containers) {
    const limit = spec.containers.find((c) => c.name === container.name)?.resources?.limits?.[EPHEMERAL];
    if (limit === undefined || parseQuantity(limit) === 0) continue;
    if (container.rootfsBytes + container.logBytes > parseQuantity(limit))
      return { signal: 'ephemeralContainerFsLimit', message: `Container ${container.name} exceeded its local ephemeral storage limit "${limit}". ` };
  }
  return undefined;
}
