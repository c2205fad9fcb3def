import type { Container, FieldCause, PodManifest, PullPolicy } from '#contracts';

/** Kubernetes' default pull policy: Always for `:latest` or no tag, IfNotPresent otherwise (digests included). */
export function defaultPullPolicy(image: string): PullPolicy {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  if (colon === -1) return 'Always';
  return lastSegment.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

/** Fills in what Kubernetes defaults on create: restart policy, grace period, pull policies. */
export function applyPodDefaults(manifest: PodManifest): PodManifest {
  const containers: Container[] = manifest.spec.containers.map((c) => ({
    ...c,
    imagePullPolicy: c.imagePullPolicy ?? defaultPullPolicy(c.image),
  }));
  return {
    ...manifest,
    apiVersion: 'v1',
    kind: 'Pod',
    spec: {
      ...manifest.spec,
      containers,
      restartPolicy: manifest.spec.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: manifest.spec.terminationGracePeriodSeconds ?? 30,
    },
  };
}

/** Spec-level checks class-validator cannot express: unique container names. */
export function podSpecCauses(manifest: PodManifest): FieldCause[] {
  const causes: FieldCause[] = [];
  const seen = new Set<string>();
  manifest.spec.containers.forEach((c, i) => {
    if (seen.has(c.name)) causes.push({ field: `spec.containers[${i}].name`, reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"` });
    seen.add(c.name);
  });
  return causes;
}

/**
 * What Kubernetes allows to change on an existing pod's spec: the containers' images
 * (and nothing jetlet supports beyond that). Returns the forbidden change, if any.
 */
export function forbiddenSpecChange(before: PodManifest['spec'], after: PodManifest['spec']): string | undefined {
  const keys = Object.keys({ ...flatKeys(before), ...flatKeys(after) }).sort();
  const withoutImages = (spec: PodManifest['spec']): string => JSON.stringify({ ...spec, containers: spec.containers.map((c) => ({ ...c, image: '' })) }, keys);
  if (withoutImages(before) === withoutImages(after)) return undefined;
  return 'pod updates may not change fields other than `spec.containers[*].image`';
}

/** Every key used anywhere in a JSON value, so JSON.stringify can sort them all. */
function flatKeys(value: unknown, keys: Record<string, true> = {}): Record<string, true> {
  if (Array.isArray(value)) value.forEach((v) => flatKeys(v, keys));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      keys[k] = true;
      flatKeys(v, keys);
    }
  }
  return keys;
}
