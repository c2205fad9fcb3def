import { createHash } from 'node:crypto';
import type { Container } from '#contracts';

/** Deterministic container names: a restarted agent finds its own work by name, never starts a twin. */
export function sandboxName(pod: { namespace: string; name: string; uid: string }): string {
  return `jetlet_POD_${pod.name}_${pod.namespace}_${pod.uid}_0`;
}

export function containerName(pod: { namespace: string; name: string; uid: string }, container: string, attempt: number): string {
  return `jetlet_${container}_${pod.name}_${pod.namespace}_${pod.uid}_${attempt}`;
}

/** A short hash of a container's spec: a different hash means the running container is outdated. */
export function containerSpecHash(container: Container): string {
  return createHash('sha256').update(JSON.stringify(container)).digest('hex').slice(0, 12);
}
