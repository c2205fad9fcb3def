import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { ownField, putField } from './own-fields.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else putField(result, key, mergePatch(ownField(result, key), value));
  }
  return result;
}

/** Why a JSON patch could not be applied: `BadRequest` for a malformed patch, `Invalid` for a failed `test` or a path the object lacks. */
export class JsonPatchError extends Error {
  override readonly name = 'JsonPatchError';
  constructor(
    readonly reason: 'BadRequest' | 'Invalid',
    message: string,
  ) {
    super(message);
  }
}

const MALFORMED = new Set([
  'SEQUENCE_NOT_AN_ARRAY',
  'OPERATION_NOT_AN_OBJECT',
  'OPERATION_OP_INVALID',
  'OPERATION_PATH_INVALID',
  'OPERATION_FROM_REQUIRED',
  'OPERATION_VALUE_REQUIRED',
  'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED',
]);

/** RFC 6902 JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`), all or nothing; inputs untouched. */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new JsonPatchError('BadRequest', 'a JSON patch must be a list of operations');
  try {
    return fastJsonPatch.applyPatch(structuredClone(target), operations as Operation[], true, false, true).newDocument;
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    const message = (error as Error).message.split('\n')[0] ?? 'invalid JSON patch';
    if (name === 'TEST_OPERATION_FAILED') {
      const op = (error as { operation?: { path?: string } }).operation;
      throw new JsonPatchError('Invalid', `the server rejected our request due to an error in our request: testing value ${op?.path ?? ''} failed`);
    }
    throw new JsonPatchError(MALFORMED.has(name) ? 'BadRequest' : 'Invalid', message);
  }
}

export { strategicMergePatch, StrategicMergePatchError } from './strategic-merge-patch.js';
