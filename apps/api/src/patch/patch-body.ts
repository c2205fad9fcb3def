import { jsonPatch, JsonPatchError, mergePatch, strategicMergePatch, StrategicMergePatchError, type PatchMeta } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';

/** The PATCH media types the API understands, as Kubernetes names them. */
export const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** The media type of a PATCH request, or a 415 as Kubernetes answers an unknown one. */
export function patchType(contentType: string | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  const known = PATCH_TYPES.find((t) => t === type);
  if (known) return known;
  throw new KubeStatusException(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
  );
}

/**
 * Applies a PATCH body to the object as it is served: JSON patch (RFC 6902), JSON merge
 * patch (RFC 7386) or strategic merge patch with the kind's merge keys. A malformed patch is
 * a 400, one that cannot apply (a failed `test`) a 422, as in Kubernetes.
 */
export function applyPatchBody(current: object, type: PatchType, body: unknown, meta: PatchMeta): unknown {
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
