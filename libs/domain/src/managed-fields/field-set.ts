/**
 * Sets of field paths as structured-merge-diff keeps them, and their `FieldsV1` encoding.
 *
 * A path is a list of path elements, each in its serialized form: `f:name` (an object's
 * field or a map's key), `k:{"name":"main"}` (an associative list's item by its keys, the
 * keys sorted by name), `v:"x"` (a set's item by value), `i:3` (a list item by index). A set
 * is a tree of such elements; a node is a *member* when the path itself is in the set, and
 * may have children as well (FieldsV1 writes that as `".": {}`).
 */
export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  /** The node for one more element, made if missing. */
  child(element: string): FieldSet {
    let node = this.children.get(element);
    if (!node) {
      node = new FieldSet();
      this.children.set(element, node);
    }
    return node;
  }

  insert(path: readonly string[]): void {
    path.reduce<FieldSet>((node, element) => node.child(element), this).member = true;
  }

  has(path: readonly string[]): boolean {
    return this.at(path)?.member ?? false;
  }

  /** The subtree under a path, if any. */
  at(path: readonly string[]): FieldSet | undefined {
    return path.reduce<FieldSet | undefined>((node, element) => node?.children.get(element), this);
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const child of this.children.values()) if (!child.isEmpty()) return false;
    return true;
  }

  /** Every member path, parents before children. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.member && prefix.length > 0) out.push(prefix);
    for (const [element, child] of sorted(this.children)) out.push(...child.paths([...prefix, element]));
    return out;
  }

  clone(): FieldSet {
    const copy = new FieldSet();
    copy.member = this.member;
    for (const [element, child] of this.children) copy.children.set(element, child.clone());
    return copy;
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    out.member ||= other.member;
    for (const [element, child] of other.children) {
      const mine = out.children.get(element);
      out.children.set(element, mine ? mine.union(child) : child.clone());
    }
    return out.pruned();
  }

  /** Members of this set that are not members of `other` (member by member, as structured-merge-diff's Difference). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element);
      out.children.set(element, theirs ? child.difference(theirs) : child.clone());
    }
    return out.pruned();
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element);
      if (theirs) out.children.set(element, child.intersection(theirs));
    }
    return out.pruned();
  }

  /** This set without any path at or under a member of `other` (RecursiveDifference). */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    if (other.member) return out;
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element);
      out.children.set(element, theirs ? child.recursiveDifference(theirs) : child.clone());
    }
    return out.pruned();
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty();
  }

  /** Drops empty subtrees. */
  private pruned(): this {
    for (const [element, child] of this.children) if (child.isEmpty()) this.children.delete(element);
    return this;
  }

  /** The `fieldsV1` object of this set. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.member && this.children.size > 0) out['.'] = {};
    for (const [element, child] of sorted(this.children)) out[element] = child.toFieldsV1();
    return out;
  }

  /** Reads a `fieldsV1` object; throws a FieldSetError on anything else. */
  static fromFieldsV1(value: unknown, depth = 0): FieldSet {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldSetError('fieldsV1 must be an object of objects');
    if (depth > 64) throw new FieldSetError('fieldsV1 nests too deep');
    const set = new FieldSet();
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) set.member = true;
    for (const [element, child] of entries) {
      if (element === '.') {
        set.member = true;
        continue;
      }
      if (!/^[fkvi]:/.test(element)) throw new FieldSetError(`fieldsV1 has an unknown path element ${JSON.stringify(element.slice(0, 40))}`);
      set.children.set(element, FieldSet.fromFieldsV1(child, depth + 1));
    }
    return set;
  }
}

/** A managedFields entry that cannot be read. */
export class FieldSetError extends Error {
  override readonly name = 'FieldSetError';
}

/** Children in structured-merge-diff's order: fields, then keys, values and indexes, each sorted. */
function sorted(children: Map<string, FieldSet>): Array<[string, FieldSet]> {
  return [...children].sort(([a], [b]) => (a[0] === b[0] ? (a < b ? -1 : a > b ? 1 : 0) : 'fkvi'.indexOf(a[0]) - 'fkvi'.indexOf(b[0])));
}

/** A path as the API server prints it in a conflict: `.spec.containers[name="main"].image`. */
export function pathString(path: readonly string[]): string {
  return path
    .map((element) => {
      const body = element.slice(2);
      switch (element[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(keys)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
