/**
 * The strategic-merge-patch metadata of Kubernetes' core/v1 types (the `patchStrategy` and
 * `patchMergeKey` struct tags of k8s.io/api/core/v1), for the objects jetlet serves. The
 * patch engine and the OpenAPI documents read the same table.
 */
export interface PatchMeta {
  /** `merge`: a list merges element by element (on mergeKey, or by value for primitives). `retainKeys`: a map clears the keys a patch's `$retainKeys` omits. */
  strategy?: 'merge' | 'retainKeys' | 'merge,retainKeys';
  /** The field identifying a list element (lists of objects under `merge`). */
  mergeKey?: string;
  /** Metadata of an object's fields. */
  fields?: Record<string, PatchMeta>;
  /** Metadata of a list's elements. */
  items?: PatchMeta;
}

const mergeList = (mergeKey: string, items?: PatchMeta): PatchMeta => ({ strategy: 'merge', mergeKey, ...(items ? { items } : {}) });
const primitiveSet: PatchMeta = { strategy: 'merge' };

const OBJECT_META: PatchMeta = {
  fields: { finalizers: primitiveSet, ownerReferences: mergeList('uid') },
};

const CONTAINER: PatchMeta = {
  fields: {
    ports: mergeList('containerPort'),
    env: mergeList('name'),
    volumeMounts: mergeList('mountPath'),
    volumeDevices: mergeList('devicePath'),
  },
};

/** core/v1 Pod. */
export const POD_PATCH_META: PatchMeta = {
  fields: {
    metadata: OBJECT_META,
    spec: {
      fields: {
        containers: mergeList('name', CONTAINER),
        initContainers: mergeList('name', CONTAINER),
        ephemeralContainers: mergeList('name', CONTAINER),
        volumes: { strategy: 'merge,retainKeys', mergeKey: 'name', items: { strategy: 'retainKeys' } },
        imagePullSecrets: mergeList('name'),
        hostAliases: mergeList('ip'),
        topologySpreadConstraints: mergeList('topologyKey'),
        schedulingGates: mergeList('name'),
        resourceClaims: { strategy: 'merge,retainKeys', mergeKey: 'name' },
      },
    },
    status: {
      fields: { conditions: mergeList('type'), podIPs: mergeList('ip'), hostIPs: mergeList('ip') },
    },
  },
};

/** core/v1 Node. */
export const NODE_PATCH_META: PatchMeta = {
  fields: {
    metadata: OBJECT_META,
    spec: { fields: { podCIDRs: primitiveSet } },
    status: { fields: { conditions: mergeList('type'), addresses: mergeList('type') } },
  },
};

/** core/v1 Namespace. */
export const NAMESPACE_PATCH_META: PatchMeta = {
  fields: { metadata: OBJECT_META, status: { fields: { conditions: mergeList('type') } } },
};

/** core/v1 ConfigMap and Secret: maps only, so only the metadata's lists have merge keys. */
export const CONFIG_PATCH_META: PatchMeta = { fields: { metadata: OBJECT_META } };
