import { createRequire } from 'node:module';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { PodManifest, referencedDefinitions } from '#contracts';
import { NAMESPACE_PATCH_META, NODE_PATCH_META, POD_PATCH_META, type PatchMeta } from '#domain';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema; $ref?: string; description?: string; type?: string };
type SchemaOptions = NonNullable<Parameters<typeof validationMetadatasToSchemas>[0]>;

/** class-transformer's @Type metadata, so nested contract classes become $refs (exported only by path). */
const { defaultMetadataStorage } = createRequire(import.meta.url)('class-transformer/cjs/storage') as {
  defaultMetadataStorage: SchemaOptions['classTransformerMetadataStorage'];
};

const CORE = 'io.k8s.api.core.v1.';
const COORDINATION = 'io.k8s.api.coordination.v1.';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
/** The contract classes' schema names as Kubernetes names its definitions. */
const RENAMED: Record<string, string> = { PodManifest: `${CORE}Pod`, ObjectMeta: `${META}ObjectMeta` };
const nameOf = (cls: string): string => RENAMED[cls] ?? `${CORE}${cls}`;

const gvk = (kind: string, group = '', version = 'v1') => [{ group, version, kind }];

const looseObject = (description: string, properties: Record<string, Schema> = {}): Schema => ({ type: 'object', description, properties });
const kindSchema = (kind: string, description: string, spec?: Schema, status?: Schema, group = ''): Schema => ({
  type: 'object',
  description,
  properties: {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
    metadata: { $ref: `#/definitions/${META}ObjectMeta`, description: "Standard object's metadata." },
    ...(spec ? { spec } : {}),
    ...(status ? { status } : {}),
  },
  'x-kubernetes-group-version-kind': gvk(kind, group),
});

/** Schemas of what jetlet serves but does not take from clients as a contract class. */
function handWrittenSchemas(): Record<string, Schema> {
  const taint = looseObject('The node this Taint is attached to has the "effect" on any pod that does not tolerate the Taint.', {
    key: { type: 'string' },
    value: { type: 'string' },
    effect: { type: 'string', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
    timeAdded: { type: 'string', format: 'date-time' },
  });
  const condition = looseObject('A condition of the object.', {
    type: { type: 'string' },
    status: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  });
  return {
    [`${CORE}PodStatus`]: looseObject('PodStatus represents information about the status of a pod, as its node reports it.', {
      phase: { type: 'string', enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] },
      conditions: { type: 'array', items: condition },
      hostIP: { type: 'string' },
      podIP: { type: 'string' },
      podIPs: { type: 'array', items: looseObject('An IP address of the pod.', { ip: { type: 'string' } }) },
      startTime: { type: 'string', format: 'date-time' },
      initContainerStatuses: { type: 'array', items: looseObject('The status of one init container (sidecars included).') },
      containerStatuses: { type: 'array', items: looseObject('The status of one container.') },
      ephemeralContainerStatuses: { type: 'array', items: looseObject('The status of one ephemeral container.') },
      qosClass: { type: 'string', enum: ['Guaranteed', 'Burstable', 'BestEffort'] },
      reason: { type: 'string' },
      message: { type: 'string' },
    }),
    [`${CORE}Node`]: kindSchema(
      'Node',
      'Node is a worker node, registered by its jetlet agent.',
      looseObject('NodeSpec describes the attributes that a node is created with.', {
        unschedulable: { type: 'boolean', description: 'Unschedulable controls node schedulability of new pods (kubectl cordon).' },
        taints: { type: 'array', items: taint },
      }),
      looseObject('NodeStatus is information about the current status of a node.', {
        capacity: { type: 'object', additionalProperties: { type: 'string' } },
        allocatable: { type: 'object', additionalProperties: { type: 'string' } },
        conditions: { type: 'array', items: condition },
        addresses: { type: 'array', items: looseObject('An address of the node.', { type: { type: 'string' }, address: { type: 'string' } }) },
        nodeInfo: looseObject('General information about the node.'),
      }),
    ),
    [`${CORE}ConfigMap`]: {
      ...kindSchema('ConfigMap', 'ConfigMap holds configuration data for pods to consume.'),
      properties: {
        ...(kindSchema('ConfigMap', '').properties as Record<string, Schema>),
        data: { type: 'object', additionalProperties: { type: 'string' }, description: 'Data contains the configuration data.' },
        binaryData: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'BinaryData contains the binary data.' },
        immutable: { type: 'boolean', description: 'Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated.' },
      },
    },
    [`${CORE}Secret`]: {
      ...kindSchema('Secret', 'Secret holds secret data of a certain type.'),
      properties: {
        ...(kindSchema('Secret', '').properties as Record<string, Schema>),
        data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'Data contains the secret data, base64 encoded.' },
        stringData: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'stringData allows specifying non-binary secret data in string form. Write-only.',
        },
        type: { type: 'string', description: 'Used to facilitate programmatic handling of secret data.' },
        immutable: { type: 'boolean', description: 'Immutable, if set to true, ensures that data stored in the Secret cannot be updated.' },
      },
    },
    [`${CORE}Namespace`]: kindSchema(
      'Namespace',
      'Namespace provides a scope for Names.',
      looseObject('NamespaceSpec describes the attributes on a Namespace.', { finalizers: { type: 'array', items: { type: 'string' } } }),
      looseObject('NamespaceStatus is information about the current status of a Namespace.', {
        phase: { type: 'string', enum: ['Active', 'Terminating'] },
        conditions: { type: 'array', items: condition },
      }),
    ),
    [`${CORE}Event`]: {
      ...kindSchema('Event', 'Event is a report of an event somewhere in the cluster.'),
      properties: {
        ...kindSchema('Event', '').properties,
        involvedObject: looseObject('The object this event is about.'),
        reason: { type: 'string' },
        message: { type: 'string' },
        type: { type: 'string' },
        count: { type: 'integer' },
        firstTimestamp: { type: 'string', format: 'date-time' },
        lastTimestamp: { type: 'string', format: 'date-time' },
        source: looseObject('The component reporting this event.'),
      },
    },
    [`${COORDINATION}Lease`]: kindSchema(
      'Lease',
      'Lease defines a lease concept: here, which scheduler leads.',
      { $ref: `#/definitions/${COORDINATION}LeaseSpec`, description: 'spec contains the specification of the Lease.' },
      undefined,
      'coordination.k8s.io',
    ),
    [`${COORDINATION}LeaseSpec`]: looseObject('LeaseSpec is a specification of a Lease.', {
      acquireTime: { $ref: `#/definitions/${META}MicroTime`, description: 'acquireTime is a time when the current lease was acquired.' },
      holderIdentity: { type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease; empty once it is released.' },
      leaseDurationSeconds: {
        type: 'integer',
        format: 'int32',
        description: 'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it, counted from its renewTime.',
      },
      leaseTransitions: { type: 'integer', format: 'int32', description: 'leaseTransitions is the number of transitions of a lease between holders.' },
      renewTime: { $ref: `#/definitions/${META}MicroTime`, description: 'renewTime is a time when the current holder of a lease has last updated the lease.' },
    }),
    [`${META}MicroTime`]: { type: 'string', format: 'date-time', description: 'MicroTime is version of Time with microsecond level precision.' },
    'io.k8s.api.policy.v1.Eviction': {
      ...kindSchema('Eviction', 'Eviction evicts a pod from its node subject to certain policies and safety constraints.', undefined, undefined, 'policy'),
      properties: {
        ...kindSchema('Eviction', '').properties,
        deleteOptions: looseObject('DeleteOptions may be provided', { gracePeriodSeconds: { type: 'integer' } }),
      },
    },
  };
}

/** Adds Kubernetes' strategic-merge-patch extensions to a schema tree, from the patch metadata table. */
function annotatePatchMeta(schema: Schema | undefined, meta: PatchMeta | undefined, all: Record<string, Schema>, seen = new Set<Schema>()): void {
  if (!schema || !meta || seen.has(schema)) return;
  seen.add(schema);
  const target = schema.$ref ? all[schema.$ref.replace('#/definitions/', '')] : schema;
  if (!target) return;
  if (meta.strategy) schema['x-kubernetes-patch-strategy'] = meta.strategy;
  if (meta.mergeKey) schema['x-kubernetes-patch-merge-key'] = meta.mergeKey;
  for (const [field, fieldMeta] of Object.entries(meta.fields ?? {})) annotatePatchMeta(target.properties?.[field], fieldMeta, all, seen);
  if (meta.items) annotatePatchMeta(target.items, meta.items, all, seen);
}

/**
 * Every definition jetlet serves, in OpenAPI v2 form (`#/definitions/...`): the pod's from the
 * contract classes' validation metadata (what the API accepts is what it describes), the rest
 * written here.
 */
export function definitions(): Record<string, Schema> {
  void PodManifest; // the classes register their metadata on import
  const generated = validationMetadatasToSchemas({ classTransformerMetadataStorage: defaultMetadataStorage, refPointerPrefix: '#/definitions/' }) as Record<
    string,
    Schema
  >;
  const wanted = ['PodManifest', 'ObjectMeta', 'PodSpec', 'Container', 'ContainerPort', 'EnvVar', 'ResourceRequirements', 'Probe', 'ProbeHandler', 'Lifecycle'];
  wanted.push('ExecAction', 'HTTPGetAction', 'HTTPHeader', 'TCPSocketAction', 'Toleration');
  wanted.push('EnvVarSource', 'ConfigMapKeySelector', 'SecretKeySelector', 'ObjectFieldSelector', 'ResourceFieldSelector');
  wanted.push('EnvFromSource', 'ConfigMapEnvSource', 'SecretEnvSource');
  const all: Record<string, Schema> = {};
  for (const cls of wanted) if (generated[cls]) all[nameOf(cls)] = generated[cls];
  const fix = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(fix);
    if (typeof node !== 'object' || node === null) return;
    const record = node as Schema;
    if (typeof record.$ref === 'string') {
      const cls = record.$ref.replace('#/definitions/', '');
      if (cls === 'Object') {
        delete record.$ref;
        record.type = 'object';
      } else record.$ref = `#/definitions/${nameOf(cls)}`;
    }
    Object.values(record).forEach(fix);
  };
  fix(all);
  Object.assign(all, handWrittenSchemas());
  const pod = all[`${CORE}Pod`];
  if (pod?.properties) {
    pod.description = 'Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.';
    pod.properties.status = { $ref: `#/definitions/${CORE}PodStatus` };
    pod.properties.apiVersion = { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
    pod.properties.kind = { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
    pod['x-kubernetes-group-version-kind'] = gvk('Pod');
  }
  const meta = all[`${META}ObjectMeta`];
  if (meta) meta.description = 'ObjectMeta is metadata that all persisted resources must have.';
  annotatePatchMeta({ $ref: `#/definitions/${CORE}Pod` }, POD_PATCH_META, all);
  annotatePatchMeta({ $ref: `#/definitions/${CORE}Node` }, NODE_PATCH_META, all);
  annotatePatchMeta({ $ref: `#/definitions/${CORE}Namespace` }, NAMESPACE_PATCH_META, all);
  return all;
}

interface Resource {
  /** The API group, '' for the core group. */
  group: '' | 'coordination.k8s.io';
  plural: string;
  kind: string;
  definition: string;
  namespaced: boolean;
  verbs: Array<'list' | 'create' | 'get' | 'update' | 'patch' | 'delete'>;
  /** False for a list that cannot be watched (the lease's). */
  watch?: false;
}

const ALL_VERBS: Resource['verbs'] = ['list', 'create', 'get', 'update', 'patch', 'delete'];
const core = (plural: string, kind: string, namespaced: boolean, verbs: Resource['verbs']): Resource => ({
  group: '',
  plural,
  kind,
  definition: `${CORE}${kind}`,
  namespaced,
  verbs,
});

/** The resources and verbs the API serves (as its discovery document lists them). */
export const RESOURCES: Resource[] = [
  core('pods', 'Pod', true, ALL_VERBS),
  core('nodes', 'Node', false, ['list', 'get', 'patch']),
  core('namespaces', 'Namespace', false, ['list', 'create', 'get', 'delete']),
  core('events', 'Event', true, ['list']),
  core('configmaps', 'ConfigMap', true, ALL_VERBS),
  core('secrets', 'Secret', true, ALL_VERBS),
  { group: 'coordination.k8s.io', plural: 'leases', kind: 'Lease', definition: `${COORDINATION}Lease`, namespaced: true, verbs: ['list', 'get'], watch: false },
];

/** The groups' versions the API serves, as their OpenAPI v3 documents are named: `api/v1`, `apis/<group>/v1`. */
export const GROUP_VERSIONS = [...new Set(RESOURCES.map((r) => groupVersionPath(r.group)))];

function groupVersionPath(group: string): string {
  return group === '' ? 'api/v1' : `apis/${group}/v1`;
}

/** Operation ids as kube-apiserver names them outside the core group: `listCoordinationV1NamespacedLease`. */
function operationInfix(group: string): string {
  if (group === '') return '';
  const parts = group.replace(/\.k8s\.io$/, '').split('.');
  return `${parts.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('')}V1`;
}

const param = (name: string, description: string, type = 'string', where: 'query' | 'path' = 'query') => ({
  name,
  in: where,
  description,
  ...(where === 'path' ? { required: true } : {}),
  type,
});
const WRITE_PARAMS = [
  param('dryRun', 'When present, indicates that modifications should not be persisted. Valid value: All.'),
  param('fieldManager', 'A name associated with the actor or entity that is making these changes.'),
  param('fieldValidation', 'How the server treats unknown fields in the object: Ignore, Warn (the default) or Strict.'),
];
const LIST_PARAMS = [
  param('labelSelector', 'A selector to restrict the list of returned objects by their labels.'),
  param('fieldSelector', 'A selector to restrict the list of returned objects by their fields.'),
  param('resourceVersion', 'Where a list or watch starts.'),
  param('watch', 'Watch for changes to the described resources.', 'boolean'),
];

/** The paths of every group's version, or of one (as `GROUP_VERSIONS` names it), in OpenAPI v2 form. */
function paths(groupVersion?: string): Record<string, Record<string, unknown>> {
  const result: Record<string, Record<string, unknown>> = {};
  for (const r of RESOURCES) {
    const prefix = groupVersionPath(r.group);
    if (groupVersion !== undefined && prefix !== groupVersion) continue;
    const extension = { 'x-kubernetes-group-version-kind': { group: r.group, version: 'v1', kind: r.kind } };
    const ref = { $ref: `#/definitions/${r.definition}` };
    const op = (action: string, verb: string, parameters: unknown[], body = false) => ({
      operationId: `${verb}${operationInfix(r.group)}${r.namespaced ? 'Namespaced' : ''}${r.kind}`,
      consumes: body
        ? [
            'application/json',
            ...(action === 'patch' ? ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] : []),
            ...(action === 'patch' && r.kind === 'Pod' ? ['application/apply-patch+yaml'] : []),
          ]
        : undefined,
      produces: ['application/json'],
      parameters: [...parameters, ...(body ? [{ name: 'body', in: 'body', required: true, schema: action === 'patch' ? { type: 'object' } : ref }] : [])],
      responses: { '200': { description: 'OK', schema: ref } },
      'x-kubernetes-action': action,
      ...extension,
    });
    const collection = r.namespaced ? `/${prefix}/namespaces/{namespace}/${r.plural}` : `/${prefix}/${r.plural}`;
    const ns = r.namespaced ? [param('namespace', 'object name and auth scope', 'string', 'path')] : [];
    const name = [...ns, param('name', `name of the ${r.kind}`, 'string', 'path')];
    const coll: Record<string, unknown> = {};
    if (r.verbs.includes('list')) coll.get = op('list', 'list', [...ns, ...LIST_PARAMS.filter((p) => r.watch !== false || p.name !== 'watch')]);
    if (r.verbs.includes('create')) coll.post = op('post', 'create', [...ns, ...WRITE_PARAMS], true);
    result[collection] = coll;
    const item: Record<string, unknown> = {};
    if (r.verbs.includes('get')) item.get = op('get', 'read', name);
    if (r.verbs.includes('update')) item.put = op('put', 'replace', [...name, ...WRITE_PARAMS], true);
    if (r.verbs.includes('patch')) item.patch = op('patch', 'patch', [...name, ...WRITE_PARAMS], true);
    if (r.verbs.includes('delete'))
      item.delete = op('delete', 'delete', [
        ...name,
        param('dryRun', 'Valid value: All.'),
        param('gracePeriodSeconds', 'Seconds before the object is deleted.', 'integer'),
      ]);
    if (Object.keys(item).length > 0) result[`${collection}/{name}`] = item;
  }
  return result;
}

const VERSION = 'v1.32.0';

/** OpenAPI v2 (Swagger 2.0) of everything the API serves. */
export function openApiV2(): object {
  return { swagger: '2.0', info: { title: 'jetlet', version: VERSION }, paths: paths(), definitions: definitions() };
}

/** OpenAPI v3 of one group's version (as `GROUP_VERSIONS` names it), as `/openapi/v3/<it>` serves it: its paths and the schemas they use. */
export function openApiV3(groupVersion: string): object {
  const v2Paths = paths(groupVersion);
  const v3Paths: Record<string, Record<string, unknown>> = {};
  for (const [path, ops] of Object.entries(v2Paths)) {
    v3Paths[path] = Object.fromEntries(
      Object.entries(ops).map(([method, raw]) => {
        const {
          consumes,
          produces: _produces,
          parameters,
          responses: _responses,
          ...rest
        } = raw as {
          consumes?: string[];
          produces: string[];
          parameters: Array<{ in: string; type?: string; schema?: unknown; name: string; required?: boolean; description?: string }>;
          responses: unknown;
        };
        const body = parameters.find((p) => p.in === 'body');
        return [
          method,
          {
            ...rest,
            parameters: parameters.filter((p) => p.in !== 'body').map(({ type, ...p }) => ({ ...p, schema: { type, uniqueItems: true } })),
            ...(body ? { requestBody: { required: true, content: Object.fromEntries((consumes ?? []).map((c) => [c, { schema: v3Ref(body.schema) }])) } } : {}),
            responses: {
              '200': {
                description: 'OK',
                content: { 'application/json': { schema: v3Ref((raw as { responses: { '200': { schema: unknown } } }).responses['200'].schema) } },
              },
            },
          },
        ];
      }),
    );
  }
  const all = definitions();
  const schemas = referencedDefinitions(Object.values(v2Paths), all);
  // What no group's paths reach (the eviction subresource's body) goes with the core group, as kube-apiserver serves pods/eviction there.
  if (groupVersion === 'api/v1') {
    const reached = new Set(GROUP_VERSIONS.flatMap((gv) => Object.keys(referencedDefinitions(Object.values(paths(gv)), all))));
    for (const [name, schema] of Object.entries(all)) if (!reached.has(name)) schemas[name] = schema;
  }
  return { openapi: '3.0.0', info: { title: 'jetlet', version: VERSION }, paths: v3Paths, components: { schemas: v3Ref(schemas) } };
}

/** A v2 schema tree with its references moved to `#/components/schemas/`, and `$ref` siblings wrapped in allOf as the API server does. */
function v3Ref<T>(node: T): T {
  if (Array.isArray(node)) return node.map(v3Ref) as T;
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node as Record<string, unknown>).map(([k, v]) => [k, v3Ref(v)] as const);
  const record = Object.fromEntries(entries) as Schema;
  if (typeof record.$ref === 'string') {
    const ref = record.$ref.replace('#/definitions/', '#/components/schemas/');
    const { $ref: _ref, ...rest } = record;
    return (Object.keys(rest).length === 0 ? { $ref: ref } : { ...rest, allOf: [{ $ref: ref }] }) as T;
  }
  return record as T;
}
