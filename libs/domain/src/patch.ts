function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The list merge keys of Kubernetes' strategic merge patch for the pod fields jetlet
 * supports: a patch list merges into the current one element by element on its key.
 */
const MERGE_KEYS: Record<string, string> = { containers: 'name', env: 'name', ports: 'containerPort' };

/** Kubernetes' strategic merge patch for pods (the list merge keys above; `$patch: delete` removes an element). */
export function strategicMergePatch(target: unknown, patch: unknown, field = ''): unknown {
  const mergeKey = MERGE_KEYS[field];
  if (mergeKey && Array.isArray(patch) && Array.isArray(target)) {
    const result: unknown[] = [...(target as unknown[])];
    for (const item of patch) {
      if (!isObject(item)) return patch;
      const index = result.findIndex((t) => isObject(t) && t[mergeKey] === item[mergeKey]);
      if (item['$patch'] === 'delete') {
        if (index >= 0) result.splice(index, 1);
      } else if (index >= 0) result[index] = strategicMergePatch(result[index], item);
      else result.push(item);
    }
    return result;
  }
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch') continue;
    if (value === null) delete result[key];
    else result[key] = strategicMergePatch(result[key], value, key);
  }
  return result;
}
