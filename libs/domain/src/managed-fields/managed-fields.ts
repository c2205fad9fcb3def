import type { ApplySchema } from './apply-schema.js';
import { FieldSet, FieldSetError, pathString } from './field-set.js';
import { compare, merge, removeFields, toFieldSet } from './typed-value.js';

/** One entry of `metadata.managedFields`, as Kubernetes writes it. */
export interface ManagedFieldsEntryView {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** A manager's fields, keyed by manager and operation (an applier and an updater of one name are two managers). */
export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
}

export type Managers = Map<string, Manager>;

/** The identity of a manager: name, operation and subresource (never the time or, for appliers, the version). */
export function managerKey(manager: string, operation: 'Apply' | 'Update', subresource = ''): string {
  return JSON.stringify([manager, operation, subresource]);
}

/** Fields never owned by anyone: type and identity meta the server sets (the API server's stripMeta). */
const STRIPPED = (() => {
  const set = new FieldSet();
  for (const path of [
    ['f:apiVersion'],
    ['f:kind'],
    ['f:metadata'],
    ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['f:metadata', `f:${f}`]),
  ])
    set.insert(path);
  return set;
})();

/** Fields the main resource's writers never own: the status is the node's (the API server's reset fields). */
const IGNORED = (() => {
  const set = new FieldSet();
  set.insert(['f:status']);
  // Written by the server alone in jetlet: the binding and a deletion's marks.
  set.insert(['f:spec', 'f:nodeName']);
  set.insert(['f:metadata', 'f:deletionTimestamp']);
  set.insert(['f:metadata', 'f:deletionGracePeriodSeconds']);
  return set;
})();

const owned = (set: FieldSet): FieldSet => set.recursiveDifference(IGNORED).difference(STRIPPED);

/**
 * Reads `metadata.managedFields`. Throws a FieldSetError naming the first entry it cannot
 * read; an entry with no fields is dropped, as the API server drops it.
 */
export function decodeManagedFields(entries: unknown): Managers {
  const managers: Managers = new Map();
  if (entries === undefined || entries === null) return managers;
  if (!Array.isArray(entries)) throw new FieldSetError('metadata.managedFields must be a list');
  entries.forEach((raw: unknown, i) => {
    const at = `metadata.managedFields[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw new FieldSetError(`${at} must be an object`);
    const e = raw as Partial<Record<keyof ManagedFieldsEntryView, unknown>>;
    if (typeof e.manager !== 'string') throw new FieldSetError(`${at}.manager must be a string`);
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new FieldSetError(`${at}.operation must be Apply or Update`);
    if (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1') throw new FieldSetError(`${at}.fieldsType must be FieldsV1`);
    const set = e.fieldsV1 === undefined ? new FieldSet() : FieldSet.fromFieldsV1(e.fieldsV1);
    const subresource = typeof e.subresource === 'string' && e.subresource !== '' ? e.subresource : undefined;
    const key = managerKey(e.manager, e.operation, subresource);
    if (managers.has(key)) throw new FieldSetError(`${at} repeats manager ${JSON.stringify(e.manager)} with operation ${e.operation}`);
    if (set.isEmpty()) return;
    managers.set(key, {
      manager: e.manager,
      operation: e.operation,
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : 'v1',
      ...(typeof e.time === 'string' ? { time: e.time } : {}),
      ...(subresource ? { subresource } : {}),
      set,
    });
  });
  return managers;
}

/** Writes `metadata.managedFields` in the API server's order: appliers first, then by time, then by name. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntryView[] | undefined {
  const entries = [...managers.values()].filter((m) => !m.set.isEmpty());
  if (entries.length === 0) return undefined;
  entries.sort(
    (p, q) =>
      (p.operation === q.operation ? 0 : p.operation < q.operation ? -1 : 1) ||
      seconds(p.time) - seconds(q.time) ||
      (p.manager < q.manager ? -1 : p.manager > q.manager ? 1 : 0) ||
      ((p.subresource ?? '') < (q.subresource ?? '') ? -1 : 0),
  );
  return entries.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time ? { time: m.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: m.set.toFieldsV1(),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  }));
}

const seconds = (time: string | undefined): number => (time ? Math.floor(Date.parse(time) / 1000) || 0 : 0);

/** One conflicting field: the manager that owns it and its path as the API server prints it. */
export interface FieldConflict {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  path: string;
}

/** An apply that would change fields other managers own, without force. */
export class ApplyConflictError extends Error {
  override readonly name = 'ApplyConflictError';
  constructor(readonly conflicts: FieldConflict[]) {
    super(conflictMessage(conflicts));
  }
}

/** How the API server names a manager in a conflict (from its identity, which holds no time). */
export function describeManager(c: Pick<FieldConflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let text = JSON.stringify(c.manager);
  if (c.subresource) text += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') text += ` using ${c.apiVersion}`;
  return text;
}

function conflictMessage(conflicts: FieldConflict[]): string {
  if (conflicts.length === 1) return `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0])}: ${conflicts[0].path}`;
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(describeManager(c), [...(byManager.get(describeManager(c)) ?? []), c.path]);
  const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${m}:`, ...(byManager.get(m) ?? []).map((p) => `- ${p}`)]);
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * Hands fields that changed from `live` to `next` away from the other managers
 * (structured-merge-diff's update): an owner of a changed or added field is a conflict
 * unless `force`, and then loses it; nobody keeps a removed field.
 */
function transfer(live: unknown, next: unknown, schema: ApplySchema, managers: Managers, self: string, force: boolean) {
  const raw = compare(live, next, schema);
  const comparison = {
    added: raw.added.recursiveDifference(IGNORED),
    modified: raw.modified.recursiveDifference(IGNORED),
    removed: raw.removed.recursiveDifference(IGNORED),
  };
  const changed = comparison.modified.union(comparison.added);
  const conflicts: FieldConflict[] = [];
  const out: Managers = new Map();
  for (const [key, m] of managers) {
    if (key === self) {
      out.set(key, m);
      continue;
    }
    const lost = m.set.intersection(changed);
    if (!lost.isEmpty())
      for (const path of lost.paths())
        conflicts.push({
          manager: m.manager,
          operation: m.operation,
          apiVersion: m.apiVersion,
          ...(m.time ? { time: m.time } : {}),
          ...(m.subresource ? { subresource: m.subresource } : {}),
          path: pathString(path),
        });
    const kept = m.set.difference(lost).difference(comparison.removed);
    if (!kept.isEmpty()) out.set(key, { ...m, set: kept });
  }
  if (!force && conflicts.length > 0) throw new ApplyConflictError(conflicts);
  return { managers: out, comparison };
}

/**
 * Managed fields after a write that is not an apply (create, replace, patch): the writer
 * takes every field it changed or added, others lose them, nobody keeps a removed one.
 */
export function updateManagedFields(
  live: unknown,
  next: unknown,
  schema: ApplySchema,
  managers: Managers,
  manager: string,
  now: string,
  apiVersion = 'v1',
): Managers {
  const self = managerKey(manager, 'Update');
  const { managers: out, comparison } = transfer(live, next, schema, managers, self, true);
  const before = out.get(self);
  const set = owned((before?.set ?? new FieldSet()).difference(comparison.removed).union(comparison.modified).union(comparison.added));
  if (set.isEmpty()) out.delete(self);
  else out.set(self, { manager, operation: 'Update', apiVersion, time: before && before.set.equals(set) ? before.time : now, set });
  return out;
}

/**
 * Server-side apply: the configuration merged into the live object; fields this manager
 * applied before and now omits are removed unless another manager owns them; fields it
 * changes that others own are conflicts unless `force`. Returns the new object and managers.
 */
export function applyManagedFields(
  live: unknown,
  config: unknown,
  schema: ApplySchema,
  managers: Managers,
  manager: string,
  force: boolean,
  now: string,
  apiVersion = 'v1',
): { object: unknown; managers: Managers } {
  const self = managerKey(manager, 'Apply');
  const applied = owned(toFieldSet(config, schema));
  const last = managers.get(self)?.set;
  const withApplied: Managers = new Map(managers);
  withApplied.set(self, { manager, operation: 'Apply', apiVersion, time: now, set: applied });
  let object = merge(live, config, schema);
  if (last) object = prune(object, last, withApplied, schema);
  const { managers: out } = transfer(live, object, schema, withApplied, self, force);
  const previous = managers.get(self);
  if (previous && previous.set.equals(applied) && previous.time) out.set(self, { ...previous, set: applied });
  if (applied.isEmpty()) out.delete(self);
  return { object, managers: out };
}

/** Removes what the applier owned before and no longer applies, unless someone (the applier included) still owns it. */
function prune(object: unknown, last: FieldSet, managers: Managers, schema: ApplySchema): unknown {
  let keep = new FieldSet();
  for (const m of managers.values()) keep = keep.union(m.set);
  const toRemove = last.difference(keep);
  // A field with owned fields below it stays; only its unowned parts go.
  for (const path of toRemove.paths()) {
    const below = keep.at(path);
    if (below && below.children.size > 0 && !below.isEmpty()) {
      const node = toRemove.at(path);
      if (node) node.member = false;
    }
  }
  return toRemove.isEmpty() ? object : (removeFields(object, toRemove, schema) ?? {});
}
