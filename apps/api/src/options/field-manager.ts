import { KubeStatusException } from '../errors/kube-status.exception.js';
import type { WriteOptionsKind } from './dry-run.js';

/** Who a write is recorded for in `managedFields`, and for an apply whether it may take fields from others. */
export interface FieldManagement {
  manager: string;
  force: boolean;
}

function invalid(kind: WriteOptionsKind, field: string, reason: string, message: string): KubeStatusException {
  return new KubeStatusException(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: ${field}: ${message}`, {
    kind,
    name: '',
    causes: [{ reason, message, field }],
  });
}

const one = (raw: unknown): string | undefined => (Array.isArray(raw) ? one(raw[0]) : typeof raw === 'string' ? raw : undefined);

/**
 * The field manager of a write, as the API server picks it: `fieldManager` from the query
 * (at most 128 printable characters), else the client's user agent up to its first `/`
 * (kubectl's `kubectl/v1.32.0 (linux/amd64) ...` is `kubectl`). An apply must name one;
 * `force` is for applies only.
 */
export function parseFieldManagement(kind: WriteOptionsKind, query: Record<string, unknown>, userAgent: string | undefined, apply = false): FieldManagement {
  const given = one(query.fieldManager);
  if (given !== undefined && (given.length > 128 || !/^[\x20-\x7e]*$/.test(given))) {
    throw invalid(kind, 'fieldManager', 'FieldValueInvalid', `Invalid value: ${JSON.stringify(given.slice(0, 140))}: must be at most 128 printable characters`);
  }
  if (apply && !given) throw invalid(kind, 'fieldManager', 'FieldValueRequired', 'Required value: is required for apply patch');
  const rawForce = one(query.force);
  if (rawForce !== undefined && rawForce !== 'true' && rawForce !== 'false')
    throw KubeStatusException.badRequest(`force must be true or false, got "${rawForce}"`);
  const force = rawForce === 'true';
  if (rawForce !== undefined && !apply) throw invalid(kind, 'force', 'FieldValueForbidden', 'Forbidden: may not be specified for non-apply patch');
  const fromAgent = (userAgent ?? '')
    .split('/')[0]
    .replace(/[^\x20-\x7e]/g, '')
    .slice(0, 128);
  return { manager: given || fromAgent || 'unknown', force };
}
