import type { Container, PodSpec, RestartPolicy } from '#contracts';

/** An init container with `restartPolicy: Always` (Kubernetes 1.29+): started in order, then kept running beside the containers. */
export function isSidecar(c: Pick<Container, 'restartPolicy'>): boolean {
  return c.restartPolicy === 'Always';
}

/** Every container of the pod, init containers first, as the kubelet looks a name up. Names are unique across both. */
export function podContainers(spec: Pick<PodSpec, 'containers' | 'initContainers'>): Container[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}

/** The pod's sidecars, in spec order. */
export function sidecarsOf(spec: Pick<PodSpec, 'initContainers'>): Container[] {
  return (spec.initContainers ?? []).filter(isSidecar);
}

/**
 * The restart policy a container lives by: a sidecar always restarts; an ordinary init container
 * is run again after a failure unless the pod's policy is Never; a container follows the pod.
 */
export function containerRestartPolicy(podPolicy: RestartPolicy, c: Container, init: boolean): RestartPolicy {
  if (!init) return podPolicy;
  if (isSidecar(c)) return 'Always';
  return podPolicy === 'Never' ? 'Never' : 'OnFailure';
}
