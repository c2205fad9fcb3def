/**
 * Kubernetes-style authorization as plain data and functions: what a request asks for
 * (kube-apiserver's RequestInfo / authorizer.Attributes), the built-in roles, bindings of
 * roles to users and groups, and the decision with the API server's Forbidden wording.
 */

/** An authenticated user, as kube-apiserver's user.Info. */
export interface UserInfo {
  name: string;
  uid: string;
  groups: string[];
}

/** What a request asks to do, as kube-apiserver's authorizer.Attributes. */
export interface RequestAttributes {
  /** Lowercase Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection; or the HTTP method for non-resource paths. */
  verb: string;
  isResourceRequest: boolean;
  /** The URL path, for non-resource requests (`/healthz`, `/metrics`). */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** One rule of a role: everything listed is allowed, `*` matching anything. */
export interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  /** Paths such as `/healthz` or prefixes such as `/apis/*`. */
  nonResourceURLs?: readonly string[];
}

/** A role bound to users and groups, cluster-wide or (a RoleBinding) in one namespace. */
export interface RoleBinding {
  role: string;
  users: readonly string[];
  groups: readonly string[];
  /** Only in this namespace; undefined = cluster-wide (a ClusterRoleBinding). */
  namespace?: string;
}

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const ANONYMOUS_USER = 'system:anonymous';

const READ = ['get', 'list', 'watch'] as const;
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'] as const;
/** Pod subresources that open a stream into a container (kubectl exec, attach, port-forward). */
const POD_CONNECT = ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'] as const;

/**
 * The built-in roles, cut down from Kubernetes' bootstrap policy to what jetlet serves.
 * As in Kubernetes, `view` cannot read secrets and neither `view` nor `edit` reaches nodes
 * (they are cluster-scoped); `system:nodes` is what a node may read.
 */
export const BUILT_IN_ROLES: Readonly<Record<string, readonly PolicyRule[]>> = {
  'cluster-admin': [
    { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    { verbs: ['*'], nonResourceURLs: ['*'] },
  ],
  edit: [
    { verbs: [...READ, ...WRITE], apiGroups: [''], resources: ['pods', 'configmaps', 'secrets'] },
    { verbs: [...READ, ...WRITE], apiGroups: [''], resources: [...POD_CONNECT] },
    // As Kubernetes' edit role: whoever may exec into a pod may debug it.
    { verbs: ['patch', 'update'], apiGroups: [''], resources: ['pods/ephemeralcontainers'] },
    { verbs: ['create'], apiGroups: ['', 'policy'], resources: ['pods/eviction'] },
    { verbs: [...READ], apiGroups: [''], resources: ['pods/log', 'pods/status', 'events', 'namespaces', 'namespaces/status'] },
    { verbs: [...READ], apiGroups: ['metrics.k8s.io'], resources: ['pods'] },
  ],
  view: [
    { verbs: [...READ], apiGroups: [''], resources: ['pods', 'pods/log', 'pods/status', 'configmaps', 'events', 'namespaces', 'namespaces/status'] },
    { verbs: [...READ], apiGroups: ['metrics.k8s.io'], resources: ['pods'] },
  ],
  'system:nodes': [
    { verbs: [...READ], apiGroups: [''], resources: ['nodes', 'nodes/status', 'pods', 'pods/status', 'namespaces', 'configmaps', 'secrets', 'events'] },
    { verbs: ['create', 'patch', 'update'], apiGroups: [''], resources: ['events', 'nodes/status', 'pods/status'] },
  ],
  // Prometheus: the metrics, nothing else (Kubernetes' system:monitoring).
  'system:monitoring': [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/healthz', '/livez', '/livez/*', '/readyz', '/readyz/*'] }],
  // What every authenticated user gets (system:discovery, system:public-info-viewer, system:basic-user).
  'system:basic-user': [
    { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'] },
    { verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/', '/healthz', '/livez', '/livez/*', '/readyz', '/readyz/*'] },
  ],
};

/** Bindings every cluster has, as Kubernetes' bootstrap ClusterRoleBindings. */
export const BUILT_IN_BINDINGS: readonly RoleBinding[] = [
  { role: 'cluster-admin', users: [], groups: ['system:masters'] },
  { role: 'system:nodes', users: [], groups: ['system:nodes'] },
  { role: 'system:monitoring', users: [], groups: ['system:monitoring'] },
  { role: 'system:basic-user', users: [], groups: [AUTHENTICATED_GROUP] },
];

/** Paths anyone may read without credentials, as kube-apiserver's anonymous health and version endpoints. */
export function isPublicPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/.*)?$/.test(path) || path === '/version' || path === '/version/';
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** True for verbs that change state (what audit records). */
export function isMutatingVerb(verb: string): boolean {
  return MUTATING.has(verb);
}

/** Subresources that open a stream into a container; every method on them is a `create`, as Kubernetes 1.32 authorizes a WebSocket upgrade. */
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy']);

/**
 * What a request asks for, as kube-apiserver's RequestInfoFactory reads the URL:
 * `/api/v1/...` is the core group, `/apis/<group>/<version>/...` any other; `watch` from the
 * query or the deprecated `/watch/` prefix; a GET without a name is `list`, a DELETE without
 * one `deletecollection`. Anything else is a non-resource request with the method as verb.
 */
export function requestAttributes(method: string, path: string, query: Record<string, unknown> = {}): RequestAttributes {
  const httpVerb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const nonResource: RequestAttributes = {
    verb: httpVerb,
    isResourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
  const parts = path.split('/').filter(Boolean);
  let rest: string[];
  let apiGroup: string;
  let apiVersion: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    apiGroup = '';
    apiVersion = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1] ?? '';
    apiVersion = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  const watchPath = rest[0] === 'watch';
  if (watchPath) rest = rest.slice(1);
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    // A namespace object (and its status) is in its own namespace, as Kubernetes reads it.
    namespace = rest[1] ?? '';
    if (rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = ''] = rest;
  if (resource === '') return nonResource;
  const watch = watchPath || query.watch === 'true' || query.watch === '1';
  let verb: string;
  if (CONNECT_SUBRESOURCES.has(subresource)) verb = 'create';
  else if (watch) verb = 'watch';
  else
    switch (httpVerb) {
      case 'get':
        verb = name ? 'get' : 'list';
        break;
      case 'post':
        verb = 'create';
        break;
      case 'put':
        verb = 'update';
        break;
      case 'patch':
        verb = 'patch';
        break;
      case 'delete':
        verb = name ? 'delete' : 'deletecollection';
        break;
      default:
        verb = httpVerb;
    }
  return { verb, isResourceRequest: true, path, apiGroup, apiVersion, resource, subresource, namespace, name };
}

function has(list: readonly string[] | undefined, value: string): boolean {
  return list !== undefined && (list.includes('*') || list.includes(value));
}

function urlMatches(patterns: readonly string[] | undefined, path: string): boolean {
  return (patterns ?? []).some((p) => p === '*' || p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1))));
}

/** True when `rule` allows the request (RBAC's RuleAllows). */
export function ruleAllows(rule: PolicyRule, attrs: RequestAttributes): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (!attrs.isResourceRequest) return urlMatches(rule.nonResourceURLs, attrs.path);
  if (!has(rule.apiGroups, attrs.apiGroup)) return false;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return has(rule.resources, resource);
}

function boundTo(binding: RoleBinding, user: UserInfo): boolean {
  return binding.users.includes(user.name) || binding.groups.some((g) => user.groups.includes(g));
}

export interface Decision {
  allowed: boolean;
  /** Which binding allowed it, for SelfSubjectAccessReview's `reason`. */
  reason: string;
}

/**
 * RBAC's decision: allowed when any role bound to the user (cluster-wide, or in the request's
 * namespace) has a rule that allows the request. A RoleBinding never grants cluster-scoped
 * resources or non-resource paths.
 */
export function authorize(user: UserInfo, attrs: RequestAttributes, bindings: readonly RoleBinding[], roles = BUILT_IN_ROLES): Decision {
  for (const binding of [...BUILT_IN_BINDINGS, ...bindings]) {
    if (!boundTo(binding, user)) continue;
    if (binding.namespace !== undefined && (!attrs.isResourceRequest || binding.namespace !== attrs.namespace || attrs.namespace === '')) continue;
    const rules = roles[binding.role] ?? [];
    if (rules.some((rule) => ruleAllows(rule, attrs))) {
      const kind = binding.namespace === undefined ? 'ClusterRoleBinding' : `RoleBinding in namespace "${binding.namespace}"`;
      return { allowed: true, reason: `RBAC: allowed by ${kind} of role "${binding.role}" to ${describeSubject(binding, user)}` };
    }
  }
  return { allowed: false, reason: '' };
}

function describeSubject(binding: RoleBinding, user: UserInfo): string {
  if (binding.users.includes(user.name)) return `User "${user.name}"`;
  return `Group "${binding.groups.find((g) => user.groups.includes(g)) ?? ''}"`;
}

/** The message of kube-apiserver's 403 (responsewriters.forbiddenMessage). */
export function forbiddenMessage(user: string, attrs: RequestAttributes): string {
  if (!attrs.isResourceRequest) return `forbidden: User "${user}" cannot ${attrs.verb} path "${attrs.path}"`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const why = attrs.namespace
    ? `User "${user}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" in the namespace "${attrs.namespace}"`
    : `User "${user}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" at the cluster scope`;
  // errors.NewForbidden: `<resource>.<group> "<name>" is forbidden: why` (no subresource), without the name when there is none.
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  return attrs.name ? `${qualified} "${attrs.name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
}
