import type { Pod } from '#contracts';

/** kubectl's STATUS column: a waiting or terminated reason wins over the phase; Terminating while deleting. */
export function podStatusColumn(pod: Pod): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
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
  return `${statuses.filter((s) => s.ready).length}/${pod.spec.containers.length}`;
}

export function podRestartsColumn(pod: Pod): string {
  return String((pod.status.containerStatuses ?? []).reduce((n, s) => n + s.restartCount, 0));
}
