import type { ContainerStatus } from '#contracts';

/** A decision about a log request: what to read, or why nothing can be (Kubernetes' message, a 400). */
export type LogChoice<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * The container a log request means, as the API server decides it: the one named, which
 * must be in the spec (init and ephemeral containers included); else the pod's only container; else the
 * request must name one.
 */
export function logContainerName(
  podName: string,
  containers: string[],
  requested?: string,
  initContainers: string[] = [],
  ephemeralContainers: string[] = [],
): LogChoice<string> {
  if (requested !== undefined) {
    return containers.includes(requested) || initContainers.includes(requested) || ephemeralContainers.includes(requested)
      ? { ok: true, value: requested }
      : { ok: false, message: `container ${requested} is not valid for pod ${podName}` };
  }
  const [only] = containers;
  if (containers.length === 1 && only !== undefined) return { ok: true, value: only };
  if (containers.length === 0) return { ok: false, message: `a container name must be specified for pod ${podName}` };
  const inits = initContainers.length > 0 ? ` or one of the init containers: [${initContainers.join(' ')}]` : '';
  const ephemerals = ephemeralContainers.length > 0 ? ` or one of the ephemeral containers: [${ephemeralContainers.join(' ')}]` : '';
  return { ok: false, message: `a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]${inits}${ephemerals}` };
}

/** The runtime's id out of a status' `docker://<id>`. */
function runtimeId(containerID: string | undefined): string | undefined {
  if (!containerID) return undefined;
  const at = containerID.indexOf('://');
  return at < 0 ? containerID : containerID.slice(at + 3);
}

/**
 * Which run of a container holds the log asked for: the kubelet's
 * validateContainerLogStatus over the container's last computed status. `previous` is the
 * last terminated run (lastState); otherwise the running one, or the terminated one, or the
 * last terminated run while the container waits to restart. A container that never ran has
 * no log: the error says what it waits for. `status` undefined = not seen by a pass yet.
 */
export function logContainerId(podName: string, containerName: string, status: ContainerStatus | undefined, previous: boolean): LogChoice<string> {
  const waitingToStart = (what: string): LogChoice<string> => ({
    ok: false,
    message: `container "${containerName}" in pod "${podName}" is waiting to start: ${what}`,
  });
  const terminatedWithoutId: LogChoice<string> = { ok: false, message: `container "${containerName}" in pod "${podName}" is terminated` };
  const found = (containerID: string | undefined): LogChoice<string> | undefined => {
    const id = runtimeId(containerID);
    return id === undefined ? undefined : { ok: true, value: id };
  };
  const lastTerminated = status?.lastState.terminated;
  if (previous) {
    return found(lastTerminated?.containerID) ?? { ok: false, message: `previous terminated container "${containerName}" in pod "${podName}" not found` };
  }
  if (status === undefined) return waitingToStart('ContainerCreating');
  const { running, terminated, waiting } = status.state;
  if (running) return found(status.containerID) ?? waitingToStart('ContainerCreating');
  if (terminated) return found(terminated.containerID) ?? found(lastTerminated?.containerID) ?? terminatedWithoutId;
  if (lastTerminated) return found(lastTerminated.containerID) ?? terminatedWithoutId;
  if (waiting) {
    switch (waiting.reason) {
      case 'ErrImagePull':
        return waitingToStart("image can't be pulled");
      case 'ImagePullBackOff':
        return waitingToStart('trying and failing to pull image');
      default:
        return waitingToStart(waiting.reason ?? 'ContainerCreating');
    }
  }
  return { ok: false, message: `container "${containerName}" in pod "${podName}" is waiting to start - no logs yet` };
}
