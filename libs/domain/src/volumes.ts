import {
  VOLUME_SOURCES,
  type Container,
  type DownwardAPIVolumeFile,
  type FieldCause,
  type KeyToPath,
  type PodManifest,
  type Volume,
  type VolumeSourceKind,
} from '#contracts';
import type { ConfigRecord } from './config-table.js';
import { fieldPathCause } from './pod-defaults.js';
import { ContainerConfigError, formatMap, podFieldValue, resourceFieldValue, type ConfigRefs, type EnvContext } from './container-env.js';

/** The mode of a projected file when neither the item nor the volume says (0644). */
export const DEFAULT_FILE_MODE = 0o644;

/** The downward API fields a volume file may hold, as Kubernetes' `validVolumeDownwardAPIFieldPathExpressions`. */
export const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'] as const;

/** The one source a volume names; undefined when it names none. */
export function volumeKind(volume: Volume): VolumeSourceKind | undefined {
  return VOLUME_SOURCES.find((k) => volume[k] !== undefined);
}

/**
 * Problems of a path inside a volume (Kubernetes' `validateLocalDescendingPath`): relative,
 * no `..` component. Projected file paths may not start with `..` either (the writer's own names).
 */
export function localPathErrors(path: string, projected = false): string[] {
  const errors: string[] = [];
  if (path.startsWith('/')) errors.push('must be a relative path');
  if (path.split('/').includes('..')) errors.push("must not contain '..'");
  else if (projected && path.startsWith('..')) errors.push("must not start with '..'");
  if (path.includes('\0')) errors.push('must not contain a NUL character');
  return errors;
}

function pathCauses(path: string, field: string, causes: FieldCause[], projected = true): void {
  for (const why of localPathErrors(path, projected)) causes.push({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path)}: ${why}` });
}

function itemCauses(items: KeyToPath[] | undefined, at: string, paths: Set<string>, causes: FieldCause[]): void {
  (items ?? []).forEach((item, k) => {
    pathCauses(item.path, `${at}.items[${k}].path`, causes);
    if (paths.has(item.path)) causes.push({ field: `${at}.items[${k}].path`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(item.path)}: conflicting duplicate paths` });
    paths.add(item.path);
  });
}

function downwardCauses(items: DownwardAPIVolumeFile[] | undefined, at: string, containerNames: string[], paths: Set<string>, causes: FieldCause[]): void {
  (items ?? []).forEach((item, k) => {
    const field = `${at}.items[${k}]`;
    pathCauses(item.path, `${field}.path`, causes);
    if (paths.has(item.path)) causes.push({ field: `${field}.path`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(item.path)}: conflicting duplicate paths` });
    paths.add(item.path);
    if (item.fieldRef && item.resourceFieldRef) causes.push({ field, reason: 'FieldValueInvalid', message: 'Invalid value: "": fieldRef and resourceFieldRef can not be specified simultaneously' });
    if (!item.fieldRef && !item.resourceFieldRef) causes.push({ field, reason: 'FieldValueRequired', message: 'Required value: one of fieldRef and resourceFieldRef is required' });
    if (item.fieldRef) {
      const cause = fieldPathCause(item.fieldRef.fieldPath, `${field}.fieldRef.fieldPath`, VOLUME_FIELD_PATHS);
      if (cause) causes.push(cause);
    }
    const ref = item.resourceFieldRef;
    if (ref && ref.containerName === undefined) causes.push({ field: `${field}.resourceFieldRef.containerName`, reason: 'FieldValueRequired', message: 'Required value' });
    if (ref?.containerName !== undefined && !containerNames.includes(ref.containerName))
      causes.push({ field: `${field}.resourceFieldRef.containerName`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(ref.containerName)}: must be the name of a container in the pod` });
  });
}

function volumeCauses(volume: Volume, at: string, containerNames: string[], causes: FieldCause[]): void {
  const kinds = VOLUME_SOURCES.filter((k) => volume[k] !== undefined);
  if (kinds.length === 0) causes.push({ field: at, reason: 'FieldValueRequired', message: 'Required value: must specify a volume type' });
  for (const extra of kinds.slice(1)) causes.push({ field: `${at}.${extra}`, reason: 'FieldValueForbidden', message: 'Forbidden: may not specify more than 1 volume type' });
  if (volume.hostPath) {
    const path = volume.hostPath.path;
    if (!path.startsWith('/')) causes.push({ field: `${at}.hostPath.path`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path)}: must be an absolute path` });
    if (path.split('/').includes('..')) causes.push({ field: `${at}.hostPath.path`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path)}: must not contain '..'` });
  }
  if (volume.configMap) itemCauses(volume.configMap.items, `${at}.configMap`, new Set(), causes);
  if (volume.secret) itemCauses(volume.secret.items, `${at}.secret`, new Set(), causes);
  if (volume.downwardAPI) downwardCauses(volume.downwardAPI.items, `${at}.downwardAPI`, containerNames, new Set(), causes);
  if (volume.projected) {
    const paths = new Set<string>();
    (volume.projected.sources ?? []).forEach((source, j) => {
      const sat = `${at}.projected.sources[${j}]`;
      const present = (['configMap', 'secret', 'downwardAPI'] as const).filter((k) => source[k] !== undefined);
      if (present.length === 0) causes.push({ field: sat, reason: 'FieldValueRequired', message: 'Required value: must specify exactly 1 volume type' });
      for (const extra of present.slice(1)) causes.push({ field: `${sat}.${extra}`, reason: 'FieldValueForbidden', message: 'Forbidden: may not specify more than 1 volume type per source' });
      if (source.configMap) itemCauses(source.configMap.items, `${sat}.configMap`, paths, causes);
      if (source.secret) itemCauses(source.secret.items, `${sat}.secret`, paths, causes);
      if (source.downwardAPI) downwardCauses(source.downwardAPI.items, `${sat}.downwardAPI`, containerNames, paths, causes);
    });
  }
}

function mountCauses(c: Container, at: string, volumes: Set<string>, causes: FieldCause[]): void {
  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, j) => {
    const field = `${at}.volumeMounts[${j}]`;
    if (!volumes.has(m.name)) causes.push({ field: `${field}.name`, reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(m.name)}` });
    if (!m.mountPath.startsWith('/'))
      causes.push({ field: `${field}.mountPath`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(m.mountPath)}: jetlet supports only absolute mount paths` });
    const clean = m.mountPath.replace(/\/+$/, '') || '/';
    if (mountPaths.has(clean)) causes.push({ field: `${field}.mountPath`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(m.mountPath)}: must be unique` });
    mountPaths.add(clean);
    if (m.subPath) pathCauses(m.subPath, `${field}.subPath`, causes, false);
  });
}

/** Kubernetes' volume checks: unique names, exactly one source, safe paths, mounts naming existing volumes. */
export function podVolumeCauses(manifest: PodManifest): FieldCause[] {
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  const containerNames = [...(manifest.spec.initContainers ?? []), ...manifest.spec.containers].map((c) => c.name);
  (manifest.spec.volumes ?? []).forEach((v, i) => {
    const at = `spec.volumes[${i}]`;
    if (names.has(v.name)) causes.push({ field: `${at}.name`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(v.name)}` });
    names.add(v.name);
    volumeCauses(v, at, containerNames, causes);
  });
  (manifest.spec.initContainers ?? []).forEach((c, i) => mountCauses(c, `spec.initContainers[${i}]`, names, causes));
  manifest.spec.containers.forEach((c, i) => mountCauses(c, `spec.containers[${i}]`, names, causes));
  return causes;
}

/** Every ConfigMap and Secret the pod's volumes name. */
export function volumeConfigRefs(volumes: Volume[] | undefined, refs: ConfigRefs = { configMaps: new Set(), secrets: new Set() }): ConfigRefs {
  for (const v of volumes ?? []) {
    if (v.configMap) refs.configMaps.add(v.configMap.name);
    if (v.secret) refs.secrets.add(v.secret.secretName);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap) refs.configMaps.add(s.configMap.name);
      if (s.secret) refs.secrets.add(s.secret.name);
    }
  }
  return refs;
}

/** Whether a volume's files come from objects or the pod (written by the agent, updated at each sync). */
export function isProjectedKind(kind: VolumeSourceKind | undefined): kind is 'configMap' | 'secret' | 'downwardAPI' | 'projected' {
  return kind === 'configMap' || kind === 'secret' || kind === 'downwardAPI' || kind === 'projected';
}

/** One file of a volume: its bytes and mode. */
export interface VolumeFile {
  data: Buffer;
  mode: number;
}

/** What a projection reads: the pod (downward API) and the objects as read now. */
export type ProjectionContext = Pick<EnvContext, 'manifest' | 'uid' | 'nodeName' | 'hostIP' | 'podIP' | 'allocatable' | 'configMaps' | 'secrets'>;

/** An object's key → bytes (a Secret's and binaryData's values are base64). */
function objectBytes(record: ConfigRecord): Map<string, Buffer> {
  const bytes = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(record.data ?? {})) bytes.set(k, record.kind === 'Secret' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(record.binaryData ?? {})) bytes.set(k, Buffer.from(v, 'base64'));
  return bytes;
}

function projectObject(
  kind: 'ConfigMap' | 'Secret',
  name: string,
  items: KeyToPath[] | undefined,
  optional: boolean | undefined,
  mode: number,
  ctx: ProjectionContext,
  files: Map<string, VolumeFile>,
): void {
  const record = (kind === 'ConfigMap' ? ctx.configMaps : ctx.secrets).get(name);
  const namespace = ctx.manifest.metadata.namespace ?? 'default';
  if (record?.unreadable !== undefined) throw new ContainerConfigError(`couldn't open secret ${namespace}/${name}: ${record.unreadable}`);
  if (!record) {
    if (optional) return;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${name}" not found`);
  }
  const bytes = objectBytes(record);
  if (!items?.length) {
    for (const [key, data] of bytes) files.set(key, { data, mode });
    return;
  }
  for (const item of items) {
    const data = bytes.get(item.key);
    if (data === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(`${kind === 'ConfigMap' ? 'configmap' : 'secret'} references non-existent ${kind === 'ConfigMap' ? 'config' : 'secret'} key: ${item.key}`);
    }
    files.set(item.path, { data, mode: item.mode ?? mode });
  }
}

function projectDownward(items: DownwardAPIVolumeFile[] | undefined, mode: number, ctx: ProjectionContext, files: Map<string, VolumeFile>): void {
  const meta = ctx.manifest.metadata;
  for (const item of items ?? []) {
    let value: string;
    if (item.fieldRef?.fieldPath === 'metadata.labels') value = formatMap(meta.labels);
    else if (item.fieldRef?.fieldPath === 'metadata.annotations') value = formatMap(meta.annotations);
    else if (item.fieldRef) value = podFieldValue(item.fieldRef.fieldPath, ctx);
    else if (item.resourceFieldRef) value = resourceFieldValue(item.resourceFieldRef, ctx.manifest, item.resourceFieldRef.containerName ?? '', ctx.allocatable);
    else continue;
    files.set(item.path, { data: Buffer.from(value, 'utf8'), mode: item.mode ?? mode });
  }
}

/**
 * The files of a configMap, secret, downwardAPI or projected volume, by path relative to the
 * volume, as the kubelet's volume plugins make them. Throws ContainerConfigError with the
 * kubelet's message when a non-optional object or key is missing.
 */
export function projectVolume(volume: Volume, ctx: ProjectionContext): Map<string, VolumeFile> {
  const files = new Map<string, VolumeFile>();
  if (volume.configMap) {
    const s = volume.configMap;
    projectObject('ConfigMap', s.name, s.items, s.optional, s.defaultMode ?? DEFAULT_FILE_MODE, ctx, files);
  } else if (volume.secret) {
    const s = volume.secret;
    projectObject('Secret', s.secretName, s.items, s.optional, s.defaultMode ?? DEFAULT_FILE_MODE, ctx, files);
  } else if (volume.downwardAPI) {
    projectDownward(volume.downwardAPI.items, volume.downwardAPI.defaultMode ?? DEFAULT_FILE_MODE, ctx, files);
  } else if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_FILE_MODE;
    for (const s of volume.projected.sources ?? []) {
      if (s.configMap) projectObject('ConfigMap', s.configMap.name, s.configMap.items, s.configMap.optional, mode, ctx, files);
      if (s.secret) projectObject('Secret', s.secret.name, s.secret.items, s.secret.optional, mode, ctx, files);
      if (s.downwardAPI) projectDownward(s.downwardAPI.items, mode, ctx, files);
    }
  }
  return files;
}

/** Kubernetes' volume defaults: defaultMode 0644 on object and downward API volumes, hostPath type "", fieldRef apiVersion v1. */
export function defaultVolume(v: Volume): Volume {
  const mode = DEFAULT_FILE_MODE;
  const downward = <T extends { items?: DownwardAPIVolumeFile[] }>(d: T): T => ({
    ...d,
    ...(d.items ? { items: d.items.map((it) => (it.fieldRef ? { ...it, fieldRef: { apiVersion: 'v1', ...it.fieldRef } } : it)) } : {}),
  });
  if (v.configMap) return { ...v, configMap: { defaultMode: mode, ...v.configMap } };
  if (v.secret) return { ...v, secret: { defaultMode: mode, ...v.secret } };
  if (v.downwardAPI) return { ...v, downwardAPI: downward({ defaultMode: mode, ...v.downwardAPI }) };
  if (v.projected)
    return {
      ...v,
      projected: {
        defaultMode: mode,
        ...v.projected,
        ...(v.projected.sources ? { sources: v.projected.sources.map((s) => (s.downwardAPI ? { ...s, downwardAPI: downward(s.downwardAPI) } : s)) } : {}),
      },
    };
  if (v.hostPath) return { ...v, hostPath: { type: '', ...v.hostPath } };
  return v;
}
