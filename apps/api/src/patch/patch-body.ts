import { parse as parseYaml } from 'yaml';
import { jsonPatch, JsonPatchError, mergePatch, strategicMergePatch, StrategicMergePatchError, type PatchMeta } from '#domain';
import { decodeApplyDuplicates, fieldValidationDirective } from '../errors/field-validation.context.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { jsonKeys, lineOf, yamlDuplicateKeys } from '../validation/duplicate-fields.js';
import { bodyShapeProblem } from '../validation/request-shape.js';

/** The PATCH media types the API understands, as Kubernetes names them. */
export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** A PATCH media type other than server-side apply. */
export type MergingPatchType = Exclude<PatchType, 'application/apply-patch+yaml'>;

/**
 * The media type of a PATCH request, or a 415 as Kubernetes answers an unknown one. Only
 * routes that implement server-side apply accept `application/apply-patch+yaml`.
 */
export function patchType(contentType: string | undefined): MergingPatchType;
export function patchType(contentType: string | undefined, options: { apply: true }): PatchType;
export function patchType(contentType: string | undefined, options?: { apply: true }): PatchType {
  const accepted = PATCH_TYPES.filter((t) => options?.apply || t !== 'application/apply-patch+yaml');
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  const known = accepted.find((t) => t === type);
  if (known) return known;
  throw new KubeStatusException(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/**
 * Applies a PATCH body to the object as it is served: JSON patch (RFC 6902), JSON merge
 * patch (RFC 7386) or strategic merge patch with the kind's merge keys. A malformed patch is
 * a 400, one that cannot apply (a failed `test`) a 422, as in Kubernetes.
 */
export function applyPatchBody(current: object, type: MergingPatchType, body: unknown, meta: PatchMeta): unknown {
  try {
    switch (type) {
      case 'application/json-patch+json':
        return jsonPatch(current, body);
      case 'application/merge-patch+json':
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw KubeStatusException.badRequest('a JSON merge patch must be a JSON object');
        return mergePatch(current, body);
      case 'application/strategic-merge-patch+json':
        return strategicMergePatch(current, body, meta);
    }
  } catch (error) {
    if (error instanceof JsonPatchError || error instanceof StrategicMergePatchError) {
      if (error.reason === 'BadRequest') throw KubeStatusException.badRequest(error.message);
      throw new KubeStatusException(422, 'Invalid', error.message);
    }
    throw error;
  }
}

/**
 * The configuration of a server-side apply (`application/apply-patch+yaml`): YAML, or JSON
 * as kubectl sends it, one object naming its apiVersion and kind. The same size and shape
 * limits as a JSON body; anything else is a 400.
 */
export function parseApplyConfiguration(body: unknown, apiVersion: string, kind: string): Record<string, unknown> {
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : undefined;
  if (text === undefined) throw KubeStatusException.badRequest('an apply patch must be a YAML or JSON object');
  let value: unknown;
  let json = true;
  try {
    value = JSON.parse(text);
  } catch {
    json = false;
    try {
      // Repeated keys are the field validation's to judge (below), as go-yaml's lenient decoder lets them through.
      value = parseYaml(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (error) {
      throw KubeStatusException.badRequest(`error decoding YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }
  const problem = bodyShapeProblem(value);
  if (problem) throw KubeStatusException.badRequest(problem);
  if (fieldValidationDirective() !== 'Ignore') {
    decodeApplyDuplicates(json ? jsonKeys(text).flatMap((k) => (k.duplicate ? [{ line: lineOf(text, k.offset), key: k.key }] : [])) : yamlDuplicateKeys(text));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw KubeStatusException.badRequest('an apply patch must be a YAML or JSON object');
  const object = value as Record<string, unknown>;
  if (object.apiVersion !== apiVersion || object.kind !== kind) {
    throw KubeStatusException.badRequest(
      `an apply patch must name apiVersion "${apiVersion}" and kind "${kind}", got ${JSON.stringify(object.apiVersion)} and ${JSON.stringify(object.kind)}`,
    );
  }
  const metadata = object.metadata as { managedFields?: unknown } | undefined;
  if (metadata?.managedFields !== undefined && metadata.managedFields !== null) {
    throw KubeStatusException.badRequest('metadata.managedFields must be nil in an apply patch');
  }
  return object;
}
