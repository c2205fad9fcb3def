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
