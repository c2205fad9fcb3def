/**
 * The definitions `root` refers to by `#/definitions/<name>`, and those they refer to in turn,
 * added by name to `into`: what a JSON Schema or OpenAPI document must carry beside `root`.
 */
export function referencedDefinitions<S extends object>(root: unknown, all: Record<string, S>, into: Record<string, S> = {}): Record<string, S> {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      const name = ref.replace('#/definitions/', '');
      const target = all[name];
      if (target && !into[name]) {
        into[name] = target;
        walk(target);
      }
    }
    Object.values(node).forEach(walk);
  };
  walk(root);
  return into;
}
