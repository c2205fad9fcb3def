import type { Pod } from '#contracts';
import { podRow } from '#domain';

/** kubectl's STATUS column: a waiting or terminated reason wins over the phase; Terminating while deleting. */
export function podStatusColumn(pod: Pod): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  // Init containers: kubectl's Init:N/M, Init:<reason> and PodInitializing.
  if (pod.spec.initContainers?.length) return String(podRow({ ...pod, metadata: { ...pod.metadata } }, Date.now()).cells[2]);
  for (const s of pod.status.containerStatuses ?? []) {
    if (s.state.waiting?.reason && s.state.waiting.reason !== 'ContainerCreating') return s.state.waiting.reason;
    if (s.state.terminated?.reason && pod.status.phase !== 'Succeeded') return s.state.terminated.reason;
  }
  if (pod.status.phase === 'Succeeded') return 'Completed';
  if (pod.status.phase === 'Pending' && pod.spec.nodeName) return 'ContainerCreating';
  return pod.status.phase;
}

export function podReadyColumn(pod: Pod): string {
  const statuses = pod.status.containerStatuses ?? [];
  const sidecars = (pod.status.initContainerStatuses ?? []).filter((s) =>
    pod.spec.initContainers?.some((c) => c.name === s.name && c.restartPolicy === 'Always'),
  );
  const total = pod.spec.containers.length + (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').length;
  return `${[...sidecars, ...statuses].filter((s) => s.ready).length}/${total}`;
}

export function podRestartsColumn(pod: Pod): string {
  return String((pod.status.containerStatuses ?? []).reduce((n, s) => n + s.restartCount, 0));
}
