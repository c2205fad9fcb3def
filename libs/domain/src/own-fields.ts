/**
 * Sets an own, enumerable property, whatever the key: `__proto__` or `toString` from a request
 * body is a field like any other, never Object's.
 */
export function putField(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An own property's value, or undefined: never one inherited from Object. */
export function ownField(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
