import { createHash } from 'node:crypto';
import type { Container } from '#contracts';

/** Deterministic container names: a restarted agent finds its own work by name, never starts a twin. */
export function sandboxName(pod: { namespace: string; name: string; uid: string }, attempt = 0): string {
  return `jetlet_POD_${pod.name}_${pod.namespace}_${pod.uid}_${attempt}`;
}

export function containerName(pod: { namespace: string; name: string; uid: string }, container: string, attempt: number): string {
  return `jetlet_${container}_${pod.name}_${pod.namespace}_${pod.uid}_${attempt}`;
}

/** JSON with every object's keys sorted, so the same spec always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Hashes already taken, by spec object: a desired pod's spec is never changed in place, and each pass asks again for every container. */
const specHashes = new WeakMap<Container, string>();

/** A short hash of a container's spec: a different hash means the running container is outdated. Key order does not matter. */
export function containerSpecHash(container: Container): string {
  let hash = specHashes.get(container);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonical(container)).digest('hex').slice(0, 12);
    specHashes.set(container, hash);
  }
  return hash;
}
