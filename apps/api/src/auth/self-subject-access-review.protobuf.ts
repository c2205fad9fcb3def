import { fields, unwrap } from '../namespaces/namespace-protobuf.js';

/** authorization/v1 SelfSubjectAccessReviewSpec, as JSON. */
export interface SelfSubjectAccessReviewSpec {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
}

const RESOURCE_FIELDS = ['', 'namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'] as const;
const NON_RESOURCE_FIELDS = ['', 'path', 'verb'] as const;

/** The string fields of a message, named by field number (index 0 is unused). */
function strings(bytes: Buffer, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields(bytes)) {
    const name = names[f.number];
    if (name && f.bytes) out[name] = f.bytes.toString('utf8');
  }
  return out;
}

/**
 * Reads the SelfSubjectAccessReview kubectl's typed client posts as protobuf (`kubectl auth
 * can-i`): spec (2) → resourceAttributes (1: namespace, verb, group, version, resource,
 * subresource, name) or nonResourceAttributes (2: path, verb). Selectors are not read.
 */
export function decodeSelfSubjectAccessReview(body: Buffer): { spec: SelfSubjectAccessReviewSpec } {
  const { raw } = unwrap(body);
  const spec: SelfSubjectAccessReviewSpec = {};
  for (const f of fields(raw)) {
    if (f.number !== 2 || !f.bytes) continue;
    for (const s of fields(f.bytes)) {
      if (s.number === 1 && s.bytes) spec.resourceAttributes = strings(s.bytes, RESOURCE_FIELDS);
      if (s.number === 2 && s.bytes) spec.nonResourceAttributes = strings(s.bytes, NON_RESOURCE_FIELDS);
    }
  }
  return { spec };
}
