import { createHash } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { ContractValidationError, parseContract, PodManifest, type FieldCause } from '#contracts';
import { applyPodDefaults, podSpecCauses } from '#domain/pod-defaults';
import type { DesiredPod } from '#domain/reconcile';

/** Where a static pod came from, as the kubelet's kubernetes.io/config.source annotation says it. */
export type StaticSource = 'file' | 'http';

export type ParsedManifest = { ok: true; pod: DesiredPod } | { ok: false; causes: FieldCause[] };

/** A UUID-shaped id from a digest: the same node, source and content always give the same uid. */
function uidFrom(digest: string): string {
  return `${digest.slice(0, 8)}-${digest.slice(8, 12)}-4${digest.slice(13, 16)}-8${digest.slice(17, 20)}-${digest.slice(20, 32)}`;
}

/**
 * Turns one static manifest (YAML or JSON, one pod) into the pod this node runs: named
 * `<name>-<node>`, bound to the node, with the kubelet's config annotations. A changed
 * manifest is a new pod (a new hash, a new uid), so a change replaces the pod.
 */
export function parseStaticManifest(text: string, origin: string, source: StaticSource, node: string): ParsedManifest {
  let plain: unknown;
  try {
    const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
    const errors = docs.flatMap((d) => d.errors);
    if (errors.length > 0) return { ok: false, causes: [{ field: '', reason: 'FieldValueInvalid', message: errors[0]?.message ?? 'not YAML' }] };
    if (docs.length !== 1)
      return { ok: false, causes: [{ field: '', reason: 'FieldValueInvalid', message: `expected one pod, found ${docs.length} documents` }] };
    plain = docs[0]?.toJS();
  } catch (error) {
    return { ok: false, causes: [{ field: '', reason: 'FieldValueInvalid', message: (error as Error).message }] };
  }
  let manifest: PodManifest;
  try {
    manifest = parseContract(PodManifest, plain, 'Pod');
  } catch (error) {
    if (error instanceof ContractValidationError) return { ok: false, causes: error.causes };
    throw error;
  }
  const causes = podSpecCauses(manifest);
  if (causes.length > 0) return { ok: false, causes };
  const hash = createHash('sha256').update(`${node}\n${source}\n${origin}\n${text}`).digest('hex');
  const uid = uidFrom(hash);
  const namespace = manifest.metadata.namespace ?? 'default';
  const name = `${manifest.metadata.name}-${node}`.slice(0, 253);
  const { status: _ignored, ...defaulted } = applyPodDefaults(manifest);
  const configHash = hash.slice(0, 32);
  const pod: PodManifest = {
    ...defaulted,
    metadata: {
      ...manifest.metadata,
      name,
      namespace,
      uid,
      generation: 1,
      annotations: {
        ...manifest.metadata.annotations,
        'kubernetes.io/config.source': source,
        'kubernetes.io/config.hash': configHash,
        'kubernetes.io/config.mirror': configHash,
      },
    },
    spec: { ...defaulted.spec, nodeName: node },
  };
  return { ok: true, pod: { namespace, name, uid, manifest: pod } };
}
