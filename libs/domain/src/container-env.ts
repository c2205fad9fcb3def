import { cpuMillis, ENV_VAR_NAME, memoryBytes, parseQuantity, type Container, type PodManifest } from '#contracts';
import type { ConfigRecord } from './config-table.js';

/**
 * Why a container's configuration cannot be made (`CreateContainerConfigError`), in the
 * kubelet's words. The message names objects and keys, never a value.
 */
export class ContainerConfigError extends Error {
  override readonly name = 'ContainerConfigError';
}

/** The ConfigMaps and Secrets (by name, in the pod's namespace) that the pod's containers and volumes read. */
export interface ConfigRefs {
  configMaps: Set<string>;
  secrets: Set<string>;
}

/** What the kubelet knows of the pod when it makes a container's environment. */
export interface EnvContext {
  manifest: PodManifest;
  uid: string;
  nodeName: string;
  hostIP?: string;
  podIP?: string;
  /** The node's allocatable resources: a resourceFieldRef to an unset limit reads them, as the kubelet does. */
  allocatable: Record<string, string>;
  /** The objects as read now; undefined = not found. */
  configMaps: Map<string, ConfigRecord | undefined>;
  secrets: Map<string, ConfigRecord | undefined>;
}

/** Every ConfigMap and Secret the containers' env and envFrom name. */
export function envConfigRefs(containers: Container[], refs: ConfigRefs = { configMaps: new Set(), secrets: new Set() }): ConfigRefs {
  for (const c of containers) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.configMapKeyRef) refs.configMaps.add(e.valueFrom.configMapKeyRef.name);
      if (e.valueFrom?.secretKeyRef) refs.secrets.add(e.valueFrom.secretKeyRef.name);
    }
    for (const e of c.envFrom ?? []) {
      if (e.configMapRef) refs.configMaps.add(e.configMapRef.name);
      if (e.secretRef) refs.secrets.add(e.secretRef.name);
    }
  }
  return refs;
}

/**
 * Kubernetes' `$(VAR)` expansion (`third_party/forked/golang/expansion`): `$(NAME)` becomes the
 * variable's value when it is defined and stays as written otherwise; `$$` is a literal `$`.
 */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const end = input.indexOf(')', i + 2);
      if (end === -1) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, end);
      const value = lookup(name);
      out += value ?? `$(${name})`;
      i = end;
    } else {
      out += ch;
    }
  }
  return out;
}

const decode = (base64: string): string => Buffer.from(base64, 'base64').toString('utf8');

/** A downward API field of the pod, as the kubelet's `podFieldSelectorRuntimeValue`. */
export function podFieldValue(path: string, ctx: Pick<EnvContext, 'manifest' | 'uid' | 'nodeName' | 'hostIP' | 'podIP'>): string {
  const meta = ctx.manifest.metadata;
  const subscript = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(path);
  if (subscript) return (subscript[1] === 'labels' ? meta.labels : meta.annotations)?.[subscript[2] ?? ''] ?? '';
  switch (path) {
    case 'metadata.name':
      return meta.name;
    case 'metadata.namespace':
      return meta.namespace ?? 'default';
    case 'metadata.uid':
      return ctx.uid;
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'spec.nodeName':
      return ctx.nodeName;
    case 'spec.serviceAccountName':
      return ctx.manifest.spec.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP ?? '';
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP ?? '';
    default:
      throw new ContainerConfigError(`unsupported fieldPath: ${path}`);
  }
}

/** The downward API's `key="value"` lines, sorted by key, as the kubelet writes labels and annotations. */
export function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map?.[k] ?? '')}`)
    .join('\n');
}

/** A container resource in units of `divisor`, rounded up, as `ExtractContainerResourceValue`. */
export function resourceFieldValue(
  ref: { containerName?: string; resource: string; divisor?: string },
  manifest: PodManifest,
  self: string,
  allocatable: Record<string, string>,
): string {
  const container = manifest.spec.containers.find((c) => c.name === (ref.containerName ?? self));
  if (!container) throw new ContainerConfigError(`container ${ref.containerName ?? self} not found in the pod`);
  const [kind, resource] = ref.resource.split('.') as ['limits' | 'requests', string];
  const limit = container.resources?.limits?.[resource];
  const request = container.resources?.requests?.[resource];
  const raw = kind === 'limits' ? (limit ?? allocatable[resource]) : (request ?? limit ?? '0');
  const divisor = ref.divisor === undefined || ref.divisor === '0' ? '1' : ref.divisor;
  if (resource === 'cpu') return String(Math.ceil(cpuMillis(raw ?? '0') / cpuMillis(divisor)));
  const bytes = resource === 'memory' ? memoryBytes(raw ?? '0') : parseQuantity(raw ?? '0');
  return String(Math.ceil(bytes / parseQuantity(divisor)));
}

/**
 * A container's environment as the kubelet makes it (`makeEnvironmentVariables`): envFrom in
 * order (keys that are not valid names skipped), then env, each later one winning; literal
 * values expand `$(VAR)` from what is defined so far. Throws ContainerConfigError with the
 * kubelet's message for a missing non-optional ConfigMap, Secret or key.
 */
export function containerEnv(container: Container, ctx: EnvContext): Array<{ name: string; value: string }> {
  const namespace = ctx.manifest.metadata.namespace ?? 'default';
  const values = new Map<string, string>();
  const lookupObject = (kind: 'ConfigMap' | 'Secret', name: string, optional: boolean | undefined): ConfigRecord | undefined => {
    const record = (kind === 'ConfigMap' ? ctx.configMaps : ctx.secrets).get(name);
    if (record?.unreadable !== undefined) throw new ContainerConfigError(`couldn't open secret ${namespace}/${name}: ${record.unreadable}`);
    if (!record && !optional) throw new ContainerConfigError(`${kind.toLowerCase()} "${name}" not found`);
    return record;
  };
  for (const from of container.envFrom ?? []) {
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const record = lookupObject(kind, ref.name, ref.optional);
    for (const [key, value] of Object.entries(record?.data ?? {})) {
      const name = `${from.prefix ?? ''}${key}`;
      if (!ENV_VAR_NAME.test(name)) continue;
      values.set(name, kind === 'Secret' ? decode(value) : value);
    }
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      values.set(e.name, expandVars(e.value ?? '', (n) => values.get(n)));
      continue;
    }
    if (from.configMapKeyRef || from.secretKeyRef) {
      const kind = from.configMapKeyRef ? 'ConfigMap' : 'Secret';
      const ref = (from.configMapKeyRef ?? from.secretKeyRef)!;
      const record = lookupObject(kind, ref.name, ref.optional);
      if (!record) continue;
      const value = record.data?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind} ${namespace}/${ref.name}`);
      }
      values.set(e.name, kind === 'Secret' ? decode(value) : value);
    } else if (from.fieldRef) {
      values.set(e.name, podFieldValue(from.fieldRef.fieldPath, ctx));
    } else if (from.resourceFieldRef) {
      values.set(e.name, resourceFieldValue(from.resourceFieldRef, ctx.manifest, container.name, ctx.allocatable));
    }
  }
  return [...values].map(([name, value]) => ({ name, value }));
}

/** The container's command and args with `$(VAR)` expanded from its environment, as the kubelet does. */
export function expandCommand(container: Container, env: Array<{ name: string; value: string }>): { command?: string[]; args?: string[] } {
  const byName = new Map(env.map((e) => [e.name, e.value]));
  const expand = (list: string[] | undefined): string[] | undefined => list?.map((s) => expandVars(s, (n) => byName.get(n)));
  const command = expand(container.command);
  const args = expand(container.args);
  return { ...(command ? { command } : {}), ...(args ? { args } : {}) };
}
