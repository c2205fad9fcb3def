import { AsyncLocalStorage } from 'node:async_hooks';
import { knownKubeFields } from '#contracts';
import { KubeStatusException } from './kube-status.exception.js';

/** How a write treats fields Kubernetes does not know, as `?fieldValidation=` asks. */
export type FieldValidationDirective = 'Strict' | 'Warn' | 'Ignore';

/** One request's directive, and the warnings its handlers add for the response. */
interface FieldValidationScope {
  directive: FieldValidationDirective;
  warnings: string[];
}

const scopes = new AsyncLocalStorage<FieldValidationScope>();

/** Runs `work` (and everything it starts) with the request's directive in scope; returns what it warned. */
export function withFieldValidation<T>(directive: FieldValidationDirective, work: (warnings: string[]) => T): T {
  const scope = { directive, warnings: [] };
  return scopes.run(scope, () => work(scope.warnings));
}

/**
 * Decodes a written object as kube-apiserver does under the request's `fieldValidation`
 * (Warn, its default, outside a request): a field Kubernetes does not know is a 400 strict
 * decoding error under Strict, dropped with a `unknown field "path"` warning under Warn, and
 * dropped silently under Ignore. Fields Kubernetes knows pass on, so one jetlet cannot honour
 * is still the validator's 422.
 */
export function decodeFields<T>(kind: string, type: string, body: T): T {
  const { known, unknown } = knownKubeFields(type, body);
  if (unknown.length === 0) return body;
  const scope = scopes.getStore();
  const directive = scope?.directive ?? 'Warn';
  if (directive === 'Strict') {
    throw KubeStatusException.badRequest(
      `${kind} in version "v1" cannot be handled as a ${kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`,
    );
  }
  if (directive === 'Warn') scope?.warnings.push(...unknown.map((f) => `unknown field "${f}"`));
  return known;
}
