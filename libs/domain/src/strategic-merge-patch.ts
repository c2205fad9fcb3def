import { POD_PATCH_META, type PatchMeta } from './patch-meta.js';
import { ownField, putField } from './own-fields.js';

type JsonMap = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

/**
 * A patch the engine cannot apply. `BadRequest` for a malformed patch (Kubernetes answers
 * 400), `Invalid` for one that does not fit the object (422).
 */
export class StrategicMergePatchError extends Error {
  override readonly name = 'StrategicMergePatchError';
  constructor(
    readonly reason: 'BadRequest' | 'Invalid',
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string): StrategicMergePatchError => new StrategicMergePatchError('BadRequest', message);

function isMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value without its null map entries, as a patch value for a field the object does not have. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isMap(value)) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === null ? [] : [[k, withoutNulls(v)]])));
}

/**
 * Kubernetes' strategic merge patch (apimachinery `strategicpatch.StrategicMergePatch`) over
 * plain JSON, with the list merge keys and strategies of `meta`: lists with a merge key merge
 * element by element, `$patch: replace|delete` on maps and list elements, `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`; null deletes a field.
 * Returns a new object; its inputs are left untouched.
 */
export function strategicMergePatch(original: unknown, patch: unknown, meta: PatchMeta = POD_PATCH_META): unknown {
  if (!isMap(patch)) throw bad('a strategic merge patch must be a JSON object');
  return mergeMap(isMap(original) ? structuredClone(original) : {}, structuredClone(patch), meta);
}

function mergeMap(original: JsonMap, patch: JsonMap, meta: PatchMeta | undefined): JsonMap {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return withoutNulls(patch) as JsonMap;
    }
    if (directive === 'delete') return {};
    throw bad(`Unable to find the patch type ${JSON.stringify(directive)} for a map; use "replace" or "delete"`);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, meta);
  for (const [rawKey, patchValue] of Object.entries(patch)) {
    const isDeleteList = rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    const key = isDeleteList ? rawKey.slice(DELETE_FROM_PRIMITIVE_LIST.length) : rawKey;
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    const fieldMeta = meta?.fields && Object.hasOwn(meta.fields, key) ? meta.fields[key] : undefined;
    const current = ownField(original, key);
    if (current === undefined || current === null) {
      if (isDeleteList) continue;
      // A field the object lacks takes the patch's value, its own directives applied to nothing.
      if (isMap(patchValue)) putField(original, key, mergeMap({}, patchValue, fieldMeta));
      else if (Array.isArray(patchValue)) putField(original, key, mergeList([], patchValue, fieldMeta, false));
      else putField(original, key, patchValue);
      continue;
    }
    if (isMap(current) && isMap(patchValue)) {
      putField(original, key, mergeMap(current, patchValue, fieldMeta));
    } else if (Array.isArray(current) && Array.isArray(patchValue)) {
      putField(original, key, mergeList(current, patchValue, fieldMeta, isDeleteList));
    } else if (!isDeleteList) {
      putField(original, key, withoutNulls(patchValue));
    }
  }
  return original;
}

/** `$retainKeys`: the object keeps only the listed keys; the patch may name no other. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw bad('invalid patch format: $retainKeys must be a list of field names');
  const keep = new Set(retain);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(key)) throw bad(`invalid patch format: ${key} is in the patch but not in $retainKeys`);
  }
  for (const key of Object.keys(original)) if (!keep.has(key)) delete original[key];
}

/**
 * `$setElementOrder/<list>`: merges that list first, then orders it as the directive says,
 * with elements only the server has kept where they were relative to the others.
 */
function applySetElementOrder(original: JsonMap, patch: JsonMap, meta: PatchMeta | undefined): void {
  for (const [directiveKey, order] of Object.entries(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue;
    const key = directiveKey.slice(SET_ELEMENT_ORDER.length);
    if (!Array.isArray(order)) throw bad(`invalid patch format: ${directiveKey} must be a list`);
    const fieldMeta = meta?.fields?.[key];
    const mergeKey = fieldMeta?.mergeKey;
    const current = Array.isArray(original[key]) ? (original[key] as unknown[]) : undefined;
    const patchList = patch[key];
    if (patchList !== undefined && patchList !== null && !Array.isArray(patchList)) throw bad(`invalid patch format: ${key} must be a list`);
    delete patch[directiveKey];
    delete patch[key];
    let merged: unknown[];
    if (current && Array.isArray(patchList)) merged = mergeList(current, patchList, fieldMeta, false);
    else if (current) merged = current;
    else if (Array.isArray(patchList)) merged = mergeList([], patchList, fieldMeta, false);
    else continue;
    const inOrder = (item: unknown): boolean => indexIn(order, item, mergeKey) >= 0;
    const ordered = normalizeElementOrder(
      merged.filter(inOrder),
      merged.filter((item) => !inOrder(item)),
      order,
      current ?? [],
      mergeKey,
    );
    if (ordered.length === 0) delete original[key];
    else original[key] = ordered;
  }
}

function mergeList(original: unknown[], patch: unknown[], meta: PatchMeta | undefined, isDeleteList: boolean): unknown[] {
  const strategy = meta?.strategy ?? '';
  if (!strategy.split(',').includes('merge')) return withoutNulls(patch) as unknown[];
  if (original.length === 0 && patch.length === 0) return original;
  const sample = [...original, ...patch].find((v) => v !== null && v !== undefined);
  if (!isMap(sample)) {
    if (isDeleteList) return original.filter((v) => !patch.some((p) => p === v));
    const merged = [...new Set([...original, ...patch])];
    const inPatch = (v: unknown): boolean => patch.includes(v);
    return normalizeElementOrder(
      merged.filter(inPatch),
      merged.filter((v) => !inPatch(v)),
      patch,
      original,
      undefined,
    );
  }
  const mergeKey = meta?.mergeKey;
  if (!mergeKey) throw new StrategicMergePatchError('Invalid', 'cannot merge lists without merge key');
  let base = original;
  const plain: JsonMap[] = [];
  let replace = false;
  for (const item of patch) {
    if (!isMap(item)) throw bad(`invalid patch format: list elements of a merge list must be objects, got ${JSON.stringify(item)}`);
    if (!(DIRECTIVE in item)) {
      plain.push(item);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!(mergeKey in item)) throw bad(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
      base = base.filter((o) => !(isMap(o) && o[mergeKey] === item[mergeKey]));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw bad('merging lists cannot yet be specified in the patch');
    } else {
      throw bad(`Unable to find the patch type ${JSON.stringify(directive)} for a list element`);
    }
  }
  if (replace) return withoutNulls(plain) as unknown[];
  const merged = [...base];
  for (const item of plain) {
    if (!(mergeKey in item)) throw bad(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    const at = merged.findIndex((o) => isMap(o) && o[mergeKey] === item[mergeKey]);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, item, meta?.items);
    else merged.push(mergeMap({}, item, meta?.items));
  }
  const inPatch = (m: unknown): boolean => indexIn(plain, m, mergeKey) >= 0;
  return normalizeElementOrder(
    merged.filter(inPatch),
    merged.filter((m) => !inPatch(m)),
    plain,
    base,
    mergeKey,
  );
}

function indexIn(list: unknown[], item: unknown, mergeKey: string | undefined): number {
  if (mergeKey === undefined) return list.findIndex((v) => v === item);
  if (!isMap(item)) return -1;
  return list.findIndex((v) => isMap(v) && v[mergeKey] === item[mergeKey]);
}

/**
 * apimachinery's normalizeElementOrder: the patch's elements in the patch's (or
 * `$setElementOrder`'s) order, the server-only ones in the live order, interleaved so each
 * keeps its place relative to the live list where both are in it.
 */
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string | undefined,
): unknown[] {
  const byIndex = (order: unknown[]) => (a: unknown, b: unknown) => indexIn(order, a, mergeKey) - indexIn(order, b, mergeKey);
  const left = [...serverOnly].sort(byIndex(serverOrder));
  const right = [...patchItems].sort(byIndex(patchOrder));
  const result: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) result.push(right[j++]);
    else if (j >= right.length) result.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) result.push(left[i++]);
      else result.push(right[j++]);
    }
  }
  return result;
}
