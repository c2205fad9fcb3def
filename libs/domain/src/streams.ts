import type { ContainerStatus } from '#contracts';
import type { LogChoice } from './logs.js';

/**
 * The running run of a container, for exec and attach: only a running container has a
 * process to join. `status` undefined = not seen by a pass yet.
 */
export function runningContainerId(podName: string, containerName: string, status: ContainerStatus | undefined): LogChoice<string> {
  const running = status?.state.running !== undefined ? status.containerID : undefined;
  const at = running?.indexOf('://') ?? -1;
  const id = running === undefined ? undefined : at < 0 ? running : running.slice(at + 3);
  if (id) return { ok: true, value: id };
  const waiting = status?.state.waiting?.reason;
  const why = status?.state.terminated ? 'terminated' : `waiting to start: ${waiting ?? 'ContainerCreating'}`;
  return { ok: false, message: `container "${containerName}" in pod "${podName}" is not running: ${why}` };
}
