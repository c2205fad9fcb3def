import { KUBE_TYPES } from './kube-schema/kube-schema.generated.js';

/** A Kubernetes object with the fields Kubernetes does not know taken out, and where they were. */
export interface KnownFields<T> {
  /** A copy without the unknown fields (the same value when there are none). */
  known: T;
  /** Each unknown field's path as kube-apiserver names it: `spec.containers[0].imagee`. */
  unknown: string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(type: string, value: unknown, path: string, unknown: string[]): unknown {
  if (type.endsWith('[]')) {
    if (!Array.isArray(value)) return value;
    const item = type.slice(0, -2);
    return value.map((v, i) => walk(item, v, `${path}[${i}]`, unknown));
  }
  if (type.startsWith('{}')) {
    if (!isObject(value)) return value;
    const item = type.slice(2);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(item, v, `${path}[${k}]`, unknown)]));
  }
  const fields = Object.hasOwn(KUBE_TYPES, type) ? KUBE_TYPES[type] : undefined;
  if (!fields || !isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    // Own fields only: `toString` or `__proto__` in a body is an unknown field, not Object's.
    if (!Object.hasOwn(fields, key)) unknown.push(at);
    else {
      const nested = fields[key];
      out[key] = nested === null ? v : walk(nested, v, at, unknown);
    }
  }
  return out;
}

/**
 * Splits the fields of `value` (a `type` of Kubernetes' core/v1 API, e.g. `V1Pod`) into those
 * Kubernetes knows and those it does not, as kube-apiserver's decoder does for
 * `fieldValidation`. Values of the wrong shape are left for validation to name. Pure.
 */
export function knownKubeFields<T>(type: string, value: T): KnownFields<T> {
  const unknown: string[] = [];
  const known = walk(type, value, '', unknown) as T;
  return { known: unknown.length > 0 ? known : value, unknown };
}
