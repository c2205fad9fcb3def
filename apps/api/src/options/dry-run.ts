import { KubeStatusException } from '../errors/kube-status.exception.js';

/** Which options object Kubernetes validates for each verb (it names it in the error). */
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function values(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (Array.isArray(raw)) return raw.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return [typeof raw === 'string' ? raw : JSON.stringify(raw)];
}

/**
 * The `dryRun` of a write, from the query (and, for a delete, from its DeleteOptions body,
 * where kubectl puts it). `All` is the only value Kubernetes knows; any other is the
 * API server's 422 on the verb's options.
 */
export function parseDryRun(kind: WriteOptionsKind, query: Record<string, unknown>, body?: unknown): boolean {
  const fromBody = kind === 'DeleteOptions' ? (body as { dryRun?: unknown } | null | undefined)?.dryRun : undefined;
  const requested = [...values(query.dryRun), ...values(fromBody)];
  const unknown = requested.filter((v) => v !== 'All');
  if (unknown.length > 0) {
    const goList = `[]string{${requested.map((v) => JSON.stringify(v)).join(', ')}}`;
    const message = `Unsupported value: ${goList}: supported values: "All"`;
    throw new KubeStatusException(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: dryRun: ${message}`, {
      kind,
      name: '',
      causes: [{ reason: 'FieldValueNotSupported', message, field: 'dryRun' }],
    });
  }
  return requested.length > 0;
}
