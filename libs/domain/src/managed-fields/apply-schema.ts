/**
 * How server-side apply sees each part of an object: Kubernetes' `x-kubernetes-list-type`,
 * `x-kubernetes-list-map-keys` and `x-kubernetes-map-type` of core/v1, for the objects jetlet
 * serves. A list not named here is atomic (owned and replaced as a whole), as in Kubernetes'
 * schemas; an object not named here is granular (each field owned on its own).
 */
export interface ApplySchema {
  /** `map`: items identified by `keys`; `set`: scalar items identified by value; `atomic`: one leaf. */
  list?: 'atomic' | 'set' | 'map';
  /** Key fields of a `map` list, and the value each takes when an item omits it (`+default` on the key). */
  keys?: string[];
  keyDefaults?: Record<string, string | number>;
  /** An object owned as a whole (`x-kubernetes-map-type: atomic`). */
  atomic?: boolean;
  /** The object's known fields. */
  fields?: Record<string, ApplySchema>;
  /** A list's items, or a map's values. */
  items?: ApplySchema;
}

const listMap = (keys: string[], items?: ApplySchema, keyDefaults?: Record<string, string | number>): ApplySchema => ({
  list: 'map',
  keys,
  ...(items ? { items } : {}),
  ...(keyDefaults ? { keyDefaults } : {}),
});

const OBJECT_META: ApplySchema = {
  fields: { finalizers: { list: 'set' }, ownerReferences: listMap(['uid']) },
};

const RESOURCES: ApplySchema = { fields: { claims: listMap(['name']) } };

const CONTAINER: ApplySchema = {
  fields: {
    // Kubernetes keys ports by port and protocol; protocol defaults to TCP for the key.
    ports: listMap(['containerPort', 'protocol'], undefined, { protocol: 'TCP' }),
    env: listMap(['name']),
    volumeMounts: listMap(['mountPath']),
    volumeDevices: listMap(['devicePath']),
    resources: RESOURCES,
  },
};

/** core/v1 Pod. */
export const POD_APPLY_SCHEMA: ApplySchema = {
  fields: {
    metadata: OBJECT_META,
    spec: {
      fields: {
        containers: listMap(['name'], CONTAINER),
        initContainers: listMap(['name'], CONTAINER),
        ephemeralContainers: listMap(['name'], CONTAINER),
        volumes: listMap(['name']),
        imagePullSecrets: listMap(['name']),
        hostAliases: listMap(['ip']),
        topologySpreadConstraints: listMap(['topologyKey', 'whenUnsatisfiable']),
        schedulingGates: listMap(['name']),
        resourceClaims: listMap(['name']),
      },
    },
    status: {
      fields: { conditions: listMap(['type']), podIPs: listMap(['ip']), hostIPs: listMap(['ip']) },
    },
  },
};

/** The schema of an object's field, or of a map's value. */
export function fieldSchema(schema: ApplySchema, key: string): ApplySchema {
  return schema.fields?.[key] ?? schema.items ?? {};
}
