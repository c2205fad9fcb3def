import { AsyncLocalStorage } from 'node:async_hooks';
import { knownKubeFields } from '#contracts';
import { jsonKeys, type YamlDuplicateKey } from '../validation/duplicate-fields.js';
import { KubeStatusException } from './kube-status.exception.js';

/** How a write treats fields Kubernetes does not know, as `?fieldValidation=` asks. */
export type FieldValidationDirective = 'Strict' | 'Warn' | 'Ignore';

/** One request's directive, and the warnings its handlers add for the response. */
interface FieldValidationScope {
  directive: FieldValidationDirective;
  warnings: string[];
  /** The request's JSON body as sent (a create, replace or merge patch), where repeated keys still show. */
  rawJson?: string;
}

const scopes = new AsyncLocalStorage<FieldValidationScope>();

/** Runs `work` (and everything it starts) with the request's directive in scope; returns what it warned. */
export function withFieldValidation<T>(directive: FieldValidationDirective, work: (warnings: string[]) => T, rawJson?: string): T {
  const scope: FieldValidationScope = { directive, warnings: [], rawJson };
  return scopes.run(scope, () => work(scope.warnings));
}

/** The directive of the request in scope (Warn, kube-apiserver's default, outside a request). */
export function fieldValidationDirective(): FieldValidationDirective {
  return scopes.getStore()?.directive ?? 'Warn';
}

/**
 * The strict decoding errors of a body, in document order as sigs.k8s.io/json reports them:
 * each unknown field where it first appears, each repeated key where it repeats. A key
 * that is unknown is reported as unknown only, and nothing under it, as for Kubernetes'
 * typed objects.
 */
function strictErrors(unknown: string[], rawJson: string | undefined): string[] {
  const keys = rawJson === undefined ? [] : jsonKeys(rawJson);
  const duplicates = keys.filter((k) => k.duplicate);
  if (duplicates.length === 0) return unknown.map((f) => `unknown field "${f}"`);
  const unknownSet = new Set(unknown);
  const underUnknown = (path: string): boolean => unknown.some((u) => path === u || path.startsWith(`${u}.`) || path.startsWith(`${u}[`));
  const firstSeen = new Map<string, number>();
  for (const k of keys) if (!firstSeen.has(k.path)) firstSeen.set(k.path, k.offset);
  const errors: Array<{ at: number; text: string }> = [
    ...unknown.map((f) => ({ at: firstSeen.get(f) ?? Number.MAX_SAFE_INTEGER, text: `unknown field "${f}"` })),
    ...duplicates.filter((d) => !unknownSet.has(d.path) && !underUnknown(d.path)).map((d) => ({ at: d.offset, text: `duplicate field "${d.path}"` })),
  ];
  return errors.sort((a, b) => a.at - b.at).map((e) => e.text);
}

/**
 * Decodes a written object as kube-apiserver does under the request's `fieldValidation`
 * (Warn, its default, outside a request): a field Kubernetes does not know, or a key the
 * JSON body repeats, is a 400 strict decoding error under Strict; under Warn each becomes a
 * warning (`unknown field "path"`, `duplicate field "path"`) and unknown fields are dropped;
 * under Ignore they are dropped silently and the last of repeated keys wins, as JSON
 * decoding keeps it. Fields Kubernetes knows pass on, so one jetlet cannot honour is still
 * the validator's 422.
 */
export function decodeFields<T>(kind: string, type: string, body: T): T {
  const { known, unknown } = knownKubeFields(type, body);
  const scope = scopes.getStore();
  const directive = scope?.directive ?? 'Warn';
  if (directive === 'Ignore') return known;
  const errors = strictErrors(unknown, scope?.rawJson);
  if (errors.length === 0) return body;
  if (directive === 'Strict') {
    throw KubeStatusException.badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: strict decoding error: ${errors.join(', ')}`);
  }
  scope?.warnings.push(...errors);
  return known;
}

/**
 * What a server-side apply's configuration repeats, judged as kube-apiserver's apply patcher
 * does with go-yaml's strict decoder: a 400 `error strict decoding YAML` listing each line
 * under Strict, one warning per line under Warn, nothing under Ignore.
 */
export function decodeApplyDuplicates(duplicates: YamlDuplicateKey[]): void {
  if (duplicates.length === 0) return;
  const scope = scopes.getStore();
  const directive = scope?.directive ?? 'Warn';
  const lines = duplicates.map((d) => `line ${d.line}: key ${JSON.stringify(d.key)} already set in map`);
  if (directive === 'Strict') {
    throw KubeStatusException.badRequest(
      `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n${lines.map((l) => `  ${l}`).join('\n')}`,
    );
  }
  if (directive === 'Warn') scope?.warnings.push(...lines);
}
