import { hasLocalStorageLimits, type PodStorageUsage } from '#domain/local-storage-eviction';
import type { DesiredPod } from '#domain/reconcile';
import { LABELS, type ContainerRuntime } from '#runtime';
import type { PodStorageReader } from './eviction.constants.js';
import { emptyDirPath } from '../volumemanager/volume-manager.service.js';
import { diskUsage } from './disk-usage.js';

/**
 * Measures what pods with a local-storage limit hold on the node's disk, as the kubelet's
 * stats provider does for localStorageEviction: each container's writable layer and log from
 * the engine (the newest attempt of each), and a du of each on-disk emptyDir. Pods without a
 * limit are not measured, since sizing a writable layer costs the engine a walk of it.
 */
export class EnginePodStorageReader implements PodStorageReader {
  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly nodeName: string,
    private readonly rootDir: string,
  ) {}

  async read(pods: DesiredPod[]): Promise<Map<string, PodStorageUsage>> {
    const limited = pods.filter((p) => hasLocalStorageLimits(p.manifest.spec));
    const result = new Map<string, PodStorageUsage>();
    if (limited.length === 0) return result;
    const containers = await this.runtime.listContainers({ [LABELS.node]: this.nodeName, [LABELS.kind]: 'container' });
    for (const pod of limited) {
      // The newest attempt of each container: older dead ones are the engine's to drop.
      const newest = new Map<string, { id: string; attempt: number }>();
      for (const c of containers) {
        if (c.labels[LABELS.podUid] !== pod.uid) continue;
        const name = c.labels[LABELS.containerName] ?? '';
        const attempt = Number(c.labels[LABELS.restartCount] ?? 0);
        const known = newest.get(name);
        if (!known || attempt > known.attempt) newest.set(name, { id: c.id, attempt });
      }
      const measured = await Promise.all(
        [...newest].map(async ([name, { id }]) => {
          const usage = await this.runtime.containerDiskUsage(id);
          return usage ? [{ name, ...usage }] : [];
        }),
      );
      const volumes: Record<string, number> = {};
      for (const volume of pod.manifest.spec.volumes ?? []) {
        if (!volume.emptyDir) continue;
        volumes[volume.name] = await diskUsage(emptyDirPath(this.rootDir, pod.uid, volume.name));
      }
      result.set(pod.uid, { volumes, containers: measured.flat() });
    }
    return result;
  }
}
