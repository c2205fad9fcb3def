import { MAX_ARRAY_ELEMENTS, MAX_BODY_DEPTH } from '#contracts';

/**
 * Why a parsed JSON body is too deep or too wide to handle, or undefined. Walks the value
 * without recursion, so no input can exhaust the stack here; everything after this check
 * (patches, validation, encoding) may then recurse safely.
 */
export function bodyShapeProblem(body: unknown, maxDepth = MAX_BODY_DEPTH, maxArray = MAX_ARRAY_ELEMENTS): string | undefined {
  const stack: Array<[unknown, number]> = [[body, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) return `the request body nests deeper than ${maxDepth} levels`;
    if (Array.isArray(value)) {
      if (value.length > maxArray) return `the request body holds an array of ${value.length} elements; at most ${maxArray} are allowed`;
      for (const item of value) stack.push([item, depth + 1]);
    } else {
      for (const item of Object.values(value)) stack.push([item, depth + 1]);
    }
  }
  return undefined;
}
