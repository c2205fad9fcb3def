import { parseAllDocuments } from 'yaml';
import { BUILT_IN_ROLES, type RoleBinding } from '#domain';

/** A bindings file that names an unknown role, kind or subject. */
export class RoleBindingsError extends Error {
  override readonly name = 'RoleBindingsError';
}

interface BindingObject {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  roleRef?: { kind?: unknown; name?: unknown };
  subjects?: Array<{ kind?: unknown; name?: unknown }>;
}

/**
 * Reads `rbac.authorization.k8s.io/v1` ClusterRoleBindings and RoleBindings (YAML, several
 * documents or a `List`) that bind the built-in roles to users and groups. A RoleBinding
 * (with `metadata.namespace`) grants its role in that namespace only. Every problem is
 * listed, with the document it is in.
 */
export function parseRoleBindings(text: string): RoleBinding[] {
  const problems: string[] = [];
  const bindings: RoleBinding[] = [];
  const objects: Array<{ doc: number; value: BindingObject }> = [];
  parseAllDocuments(text).forEach((document, i) => {
    if ('errors' in document && document.errors.length > 0) {
      problems.push(`document ${i + 1}: ${document.errors.map((e) => e.message).join('; ')}`);
      return;
    }
    const value = document.toJS() as (BindingObject & { items?: BindingObject[] }) | null;
    if (value === null) return;
    if (value.kind === 'List') for (const item of value.items ?? []) objects.push({ doc: i + 1, value: item });
    else objects.push({ doc: i + 1, value });
  });
  for (const { doc, value } of objects) {
    const where = `document ${doc} (${typeof value.metadata?.name === 'string' ? value.metadata.name : 'unnamed'})`;
    if (value.kind !== 'ClusterRoleBinding' && value.kind !== 'RoleBinding') {
      problems.push(`${where}: kind must be ClusterRoleBinding or RoleBinding`);
      continue;
    }
    const role = value.roleRef?.name;
    if (typeof role !== 'string' || !(role in BUILT_IN_ROLES)) {
      problems.push(`${where}: roleRef.name must be one of ${Object.keys(BUILT_IN_ROLES).join(', ')}`);
      continue;
    }
    const namespace = value.metadata?.namespace;
    if (value.kind === 'RoleBinding' && (typeof namespace !== 'string' || namespace === '')) {
      problems.push(`${where}: a RoleBinding needs metadata.namespace`);
      continue;
    }
    const users: string[] = [];
    const groups: string[] = [];
    for (const subject of value.subjects ?? []) {
      if (typeof subject.name !== 'string' || subject.name === '') problems.push(`${where}: every subject needs a name`);
      else if (subject.kind === 'User') users.push(subject.name);
      else if (subject.kind === 'Group') groups.push(subject.name);
      else problems.push(`${where}: subject kind must be User or Group, not ${String(subject.kind)}`);
    }
    bindings.push({ role, users, groups, ...(value.kind === 'RoleBinding' ? { namespace: namespace as string } : {}) });
  }
  if (problems.length > 0) throw new RoleBindingsError(`role bindings:\n  ${problems.join('\n  ')}`);
  return bindings;
}
