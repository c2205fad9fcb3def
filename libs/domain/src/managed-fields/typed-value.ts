import { fieldSchema, type ApplySchema } from './apply-schema.js';
import { FieldSet } from './field-set.js';

/**
 * structured-merge-diff's operations on plain JSON values with an ApplySchema: the field set
 * a value sets, the comparison of two values, the merge of an applied configuration into a
 * live object, and the removal of a set of fields. `undefined` is an absent field; `null` is
 * a value.
 */

type Json = unknown;

/** Why an applied configuration cannot be read as the schema says (a duplicate or keyless item). */
export class ApplySchemaError extends Error {
  override readonly name = 'ApplySchemaError';
}

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The path element of a list item: its keys for an associative list, its value for a set, else its index. */
export function itemElement(item: Json, schema: ApplySchema, index: number, path: readonly string[]): string {
  if (schema.list === 'map' && schema.keys) {
    if (!isObject(item)) throw new ApplySchemaError(`${where(path)}: element ${index}: associative list with keys may only hold objects`);
    const keys: Record<string, Json> = {};
    for (const key of [...schema.keys].sort()) {
      const value = item[key] ?? schema.keyDefaults?.[key];
      if (value === undefined || value === null)
        throw new ApplySchemaError(`${where(path)}: element ${index}: associative list with keys has an element that omits key field "${key}"`);
      keys[key] = value;
    }
    return `k:${JSON.stringify(keys)}`;
  }
  if (schema.list === 'set') return `v:${JSON.stringify(item)}`;
  return `i:${index}`;
}

function where(path: readonly string[]): string {
  return path.map((e) => (e.startsWith('f:') ? `.${e.slice(2)}` : `[${e.slice(2)}]`)).join('') || '.';
}

/** A list's items by path element; a repeated element is an error. */
function indexItems(list: Json[], schema: ApplySchema, path: readonly string[]): Map<string, Json> {
  const items = new Map<string, Json>();
  list.forEach((item, i) => {
    const element = itemElement(item, schema, i, path);
    if (items.has(element)) throw new ApplySchemaError(`${where(path)}: duplicate entries for key ${element.slice(2)}`);
    items.set(element, item);
  });
  return items;
}

const isAtomicList = (schema: ApplySchema): boolean => schema.list !== 'map' && schema.list !== 'set';

/** The fields a value sets (ToFieldSet): scalars, atomic lists and objects, list items, and empty objects are members. */
export function toFieldSet(value: Json, schema: ApplySchema): FieldSet {
  const set = new FieldSet();
  walkFields(value, schema, set, []);
  return set;
}

function walkFields(value: Json, schema: ApplySchema, node: FieldSet, path: string[]): void {
  if (Array.isArray(value)) {
    if (isAtomicList(schema)) {
      node.member = true;
      return;
    }
    const items = indexItems(value, schema, path);
    for (const [element, item] of items) {
      const child = node.child(element);
      walkFields(item, schema.items ?? {}, child, [...path, element]);
      child.member = true;
    }
    return;
  }
  if (isObject(value)) {
    if (schema.atomic) {
      node.member = true;
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      if (child === undefined) continue;
      const element = `f:${key}`;
      const childNode = node.child(element);
      walkFields(child, fieldSchema(schema, key), childNode, [...path, element]);
      if (child === null || (isObject(child) && Object.keys(child).length === 0) || schema.fields?.[key] === undefined) childNode.member = true;
    }
    return;
  }
  node.member = true;
}

/** What changed from `lhs` to `rhs`, as structured-merge-diff's Compare. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

export function compare(lhs: Json, rhs: Json, schema: ApplySchema): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareAt(lhs, rhs, schema, [], out);
  return out;
}

function emptyLike(v: Json): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

function compareAt(lhs: Json, rhs: Json, schema: ApplySchema, path: string[], out: Comparison): void {
  const shape = Array.isArray(lhs) || Array.isArray(rhs) ? 'list' : isObject(lhs) || isObject(rhs) ? 'object' : 'scalar';
  // Two shapes (a list against an object) compare as leaves; null counts as an empty one of the other side's shape.
  const mixed = (Array.isArray(lhs) && isObject(rhs)) || (isObject(lhs) && Array.isArray(rhs));
  const leaf =
    shape === 'scalar' ||
    mixed ||
    (shape === 'list' && (isAtomicList(schema) || (emptyLike(lhs) && emptyLike(rhs)))) ||
    (shape === 'object' && (schema.atomic === true || (emptyLike(lhs) && emptyLike(rhs)))) ||
    (lhs !== undefined && lhs !== null && rhs !== undefined && rhs !== null && typeof lhs !== typeof rhs);
  if (leaf) {
    if (lhs === undefined) out.added.insert(path);
    else if (rhs === undefined) out.removed.insert(path);
    else if (!deepEqual(lhs, rhs)) out.modified.insert(path);
    return;
  }
  if (shape === 'object') {
    const l = isObject(lhs) ? lhs : {};
    const r = isObject(rhs) ? rhs : {};
    for (const key of new Set([...Object.keys(l), ...Object.keys(r)])) {
      if (l[key] === undefined && r[key] === undefined) continue;
      compareAt(l[key], r[key], fieldSchema(schema, key), [...path, `f:${key}`], out);
    }
  } else {
    const l = Array.isArray(lhs) ? indexItems(lhs, schema, path) : new Map<string, Json>();
    const r = Array.isArray(rhs) ? indexItems(rhs, schema, path) : new Map<string, Json>();
    for (const element of new Set([...l.keys(), ...r.keys()])) compareAt(l.get(element), r.get(element), schema.items ?? {}, [...path, element], out);
  }
  if (path.length === 0) return;
  if (lhs === undefined) out.added.insert(path);
  else if (rhs === undefined) out.removed.insert(path);
}

/**
 * The applied configuration merged into the live object (structured-merge-diff's Merge):
 * objects field by field, associative lists and sets item by item in the order the merge
 * gives them, anything else replaced. A null in the configuration removes the field.
 */
export function merge(live: Json, config: Json, schema: ApplySchema, path: string[] = []): Json {
  if (config === undefined) return live;
  if (config === null) return undefined;
  if (isObject(config) && isObject(live) && !schema.atomic) {
    const out: Record<string, Json> = { ...live };
    for (const [key, value] of Object.entries(config)) {
      const merged = merge(live[key], value, fieldSchema(schema, key), [...path, `f:${key}`]);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    }
    return out;
  }
  if (Array.isArray(config) && Array.isArray(live) && !isAtomicList(schema)) return mergeList(live, config, schema, path);
  return withoutNulls(config);
}

function withoutNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/** Items of both lists: shared ones in the configuration's order, the live list's others where they were. */
function mergeList(live: Json[], config: Json[], schema: ApplySchema, path: string[]): Json[] {
  const lhs = live.map((item, i) => ({ element: itemElement(item, schema, i, path), item }));
  const lhsByElement = new Map(lhs.map((e) => [e.element, e.item]));
  const rhs = [...indexItems(config, schema, path)].map(([element, item]) => ({ element, item }));
  const rhsElements = new Set(rhs.map((e) => e.element));
  const shared = rhs.filter((e) => lhsByElement.has(e.element)).map((e) => e.element);
  let nextShared = shared.shift();
  const done = new Set<string>();
  const out: Json[] = [];
  const itemSchema = schema.items ?? {};
  let li = 0;
  let ri = 0;
  while (li < lhs.length || ri < rhs.length) {
    if (li < lhs.length && ri < rhs.length) {
      const l = lhs[li];
      if (l.element === rhs[ri].element) {
        done.add(l.element);
        out.push(merge(l.item, rhs[ri].item, itemSchema, [...path, l.element]));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (rhsElements.has(l.element) && nextShared !== undefined && nextShared !== l.element) {
        li++;
        continue;
      }
    }
    if (li < lhs.length) {
      const l = lhs[li];
      if (!rhsElements.has(l.element)) {
        out.push(l.item);
        li++;
        continue;
      } else if (done.has(l.element)) li++;
    }
    if (ri < rhs.length) {
      const r = rhs[ri];
      done.add(r.element);
      out.push(merge(lhsByElement.get(r.element), r.item, itemSchema, [...path, r.element]));
      ri++;
      if (nextShared === r.element) nextShared = shared.shift();
    }
  }
  return out.filter((item) => item !== undefined);
}

/**
 * The value without the fields of `set` (RemoveItems). A member removes the field or item
 * with everything under it; a path with members below it is descended into. The key fields
 * of an item that stays are never removed, so the item keeps its identity.
 */
export function removeFields(value: Json, set: FieldSet, schema: ApplySchema, keep: readonly string[] = []): Json {
  if (Array.isArray(value) && !isAtomicList(schema)) {
    const out: Json[] = [];
    value.forEach((item, i) => {
      const element = itemElement(item, schema, i, []);
      const node = set.children.get(element);
      if (!node) return void out.push(item);
      if (node.member) return;
      out.push(removeFields(item, node, schema.items ?? {}, schema.keys ?? []));
    });
    return out.length === 0 && value.length > 0 ? undefined : out;
  }
  if (isObject(value) && !schema.atomic) {
    const out: Record<string, Json> = {};
    for (const [key, child] of Object.entries(value)) {
      const node = set.children.get(`f:${key}`);
      if (!node || keep.includes(key)) out[key] = child;
      else if (node.member) continue;
      else {
        const kept = removeFields(child, node, fieldSchema(schema, key));
        if (kept !== undefined) out[key] = kept;
      }
    }
    return Object.keys(out).length === 0 && Object.keys(value).length > 0 ? undefined : out;
  }
  return value;
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    return ak.length === bk.length && ak.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
