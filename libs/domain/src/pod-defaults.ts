import { defaultVolume, podVolumeCauses } from './volumes.js';
import { securityContextCauses } from './security-context.js';
import {
  configKeyErrors,
  DEFAULT_SCHEDULER_NAME,
  ENV_VAR_NAME,
  type Container,
  type EphemeralContainer,
  type EnvVar,
  type FieldCause,
  type PodManifest,
  type Probe,
  type ProbeHandler,
  type PullPolicy,
} from '#contracts';

/** Kubernetes' default pull policy: Always for `:latest` or no tag, IfNotPresent otherwise (digests included). */
export function defaultPullPolicy(image: string): PullPolicy {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  if (colon === -1) return 'Always';
  return lastSegment.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(probe: Probe | undefined): Probe | undefined {
  if (!probe) return undefined;
  return {
    ...probe,
    ...(probe.httpGet ? { httpGet: { ...probe.httpGet, path: probe.httpGet.path ?? '/', scheme: probe.httpGet.scheme ?? 'HTTP' } } : {}),
    initialDelaySeconds: probe.initialDelaySeconds ?? 0,
    periodSeconds: probe.periodSeconds ?? 10,
    timeoutSeconds: probe.timeoutSeconds ?? 1,
    successThreshold: probe.successThreshold ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

/**
 * Fills in what Kubernetes defaults on create (its API defaulting and admission): restart
 * policy, grace period, DNS policy, scheduler, service account, priority, empty security
 * context and resources, port protocols, pull policies, probes, termination message.
 */
export function applyPodDefaults(manifest: PodManifest): PodManifest {
  const defaulted = (c: Container): Container => {
    const probes = { livenessProbe: defaultProbe(c.livenessProbe), readinessProbe: defaultProbe(c.readinessProbe), startupProbe: defaultProbe(c.startupProbe) };
    return {
      ...c,
      ...(c.ports ? { ports: c.ports.map((p) => ({ ...p, protocol: p.protocol ?? 'TCP' })) } : {}),
      resources: c.resources ?? {},
      imagePullPolicy: c.imagePullPolicy ?? defaultPullPolicy(c.image),
      ...Object.fromEntries(Object.entries(probes).filter(([, p]) => p !== undefined)),
      ...(c.env ? { env: c.env.map(defaultEnvVar) } : {}),
      terminationMessagePath: c.terminationMessagePath ?? '/dev/termination-log',
      terminationMessagePolicy: c.terminationMessagePolicy ?? 'File',
    };
  };
  const containers = manifest.spec.containers.map(defaulted);
  return {
    ...manifest,
    apiVersion: 'v1',
    kind: 'Pod',
    spec: {
      ...manifest.spec,
      containers,
      ...(manifest.spec.initContainers ? { initContainers: manifest.spec.initContainers.map(defaulted) } : {}),
      ...(manifest.spec.ephemeralContainers ? { ephemeralContainers: manifest.spec.ephemeralContainers.map(defaulted) } : {}),
      restartPolicy: manifest.spec.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: manifest.spec.terminationGracePeriodSeconds ?? 30,
      dnsPolicy: manifest.spec.dnsPolicy ?? 'ClusterFirst',
      enableServiceLinks: manifest.spec.enableServiceLinks ?? true,
      schedulerName: manifest.spec.schedulerName ?? DEFAULT_SCHEDULER_NAME,
      securityContext: manifest.spec.securityContext ?? {},
      serviceAccountName: manifest.spec.serviceAccountName ?? manifest.spec.serviceAccount ?? 'default',
      serviceAccount: manifest.spec.serviceAccount ?? manifest.spec.serviceAccountName ?? 'default',
      priority: manifest.spec.priority ?? 0,
      preemptionPolicy: manifest.spec.preemptionPolicy ?? 'PreemptLowerPriority',
      ...(manifest.spec.volumes ? { volumes: manifest.spec.volumes.map(defaultVolume) } : {}),
    },
  };
}

/** Kubernetes' env defaults: a fieldRef's apiVersion v1, a resourceFieldRef's divisor "0" (meaning 1). */
function defaultEnvVar(e: EnvVar): EnvVar {
  const from = e.valueFrom;
  if (!from?.fieldRef && !from?.resourceFieldRef) return e;
  return {
    ...e,
    valueFrom: {
      ...from,
      ...(from.fieldRef ? { fieldRef: { apiVersion: 'v1', ...from.fieldRef } } : {}),
      ...(from.resourceFieldRef ? { resourceFieldRef: { ...from.resourceFieldRef, divisor: from.resourceFieldRef.divisor ?? '0' } } : {}),
    },
  };
}

/** The downward API fields an env var may name, as Kubernetes' `validEnvDownwardAPIFieldPathExpressions`. */
export const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
] as const;
const SUBSCRIPTED_FIELD = /^metadata\.(labels|annotations)\['([^']+)'\]$/;

/** Problems of a downward API field path (env: also metadata.labels/annotations with a subscript). */
export function fieldPathCause(path: string, field: string, allowed: readonly string[]): FieldCause | undefined {
  if (allowed.includes(path) || SUBSCRIPTED_FIELD.test(path)) return undefined;
  const supported = [...allowed, "metadata.annotations['<KEY>']", "metadata.labels['<KEY>']"].sort();
  return {
    field,
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(path)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}`,
  };
}

function envCauses(c: Container, at: string, containerNames: string[], causes: FieldCause[]): void {
  (c.env ?? []).forEach((e, j) => {
    const field = `${at}.env[${j}].valueFrom`;
    const from = e.valueFrom;
    if (!from) return;
    if (e.value) causes.push({ field, reason: 'FieldValueInvalid', message: 'Invalid value: "": may not be specified when `value` is not empty' });
    const sources = (['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'] as const).filter((k) => from[k] !== undefined);
    if (sources.length === 0)
      causes.push({
        field,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      });
    if (sources.length > 1)
      causes.push({ field, reason: 'FieldValueInvalid', message: 'Invalid value: "": may not have more than one field specified at a time' });
    for (const ref of ['configMapKeyRef', 'secretKeyRef'] as const) {
      const key = from[ref]?.key;
      if (key !== undefined)
        for (const why of configKeyErrors(key))
          causes.push({ field: `${field}.${ref}.key`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(key)}: ${why}` });
    }
    if (from.fieldRef) {
      const cause = fieldPathCause(from.fieldRef.fieldPath, `${field}.fieldRef.fieldPath`, ENV_FIELD_PATHS);
      if (cause) causes.push(cause);
    }
    const target = from.resourceFieldRef?.containerName;
    if (target !== undefined && !containerNames.includes(target))
      causes.push({
        field: `${field}.resourceFieldRef.containerName`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(target)}: must be the name of a container in the pod`,
      });
  });
  (c.envFrom ?? []).forEach((e, j) => {
    const field = `${at}.envFrom[${j}]`;
    const sources = [e.configMapRef, e.secretRef].filter((r) => r !== undefined).length;
    if (sources === 0) causes.push({ field, reason: 'FieldValueInvalid', message: 'Invalid value: "": must specify one of: `configMapRef` or `secretRef`' });
    if (sources > 1) causes.push({ field, reason: 'FieldValueInvalid', message: 'Invalid value: "": may not have more than one field specified at a time' });
    if (e.prefix && !ENV_VAR_NAME.test(e.prefix))
      causes.push({
        field: `${field}.prefix`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(e.prefix)}: a valid environment variable name must consist only of printable ASCII characters other than '='`,
      });
  });
}

function handlerCauses(handler: ProbeHandler | undefined, field: string, causes: FieldCause[]): void {
  if (!handler) return;
  const kinds = (['exec', 'httpGet', 'tcpSocket'] as const).filter((k) => handler[k] !== undefined);
  if (kinds.length === 0) causes.push({ field, reason: 'FieldValueRequired', message: 'must specify a handler type' });
  if (kinds.length > 1)
    causes.push({ field: `${field}.${kinds[1] ?? ''}`, reason: 'FieldValueForbidden', message: 'may not specify more than 1 handler type' });
}

/** A named probe or hook port must name one of the container's ports. */
function portCauses(handler: ProbeHandler | undefined, field: string, container: Container, causes: FieldCause[]): void {
  for (const kind of ['httpGet', 'tcpSocket'] as const) {
    const port = handler?.[kind]?.port;
    if (typeof port === 'string' && !(container.ports ?? []).some((p) => p.name === port)) {
      causes.push({
        field: `${field}.${kind}.port`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${port}": must be a port number or the name of one of the container's ports`,
      });
    }
  }
}

/** Spec-level checks class-validator cannot express: unique container names, one handler per probe, thresholds, init container rules. */
export function podSpecCauses(manifest: PodManifest): FieldCause[] {
  const causes: FieldCause[] = [];
  const seen = new Set<string>();
  const names = [...(manifest.spec.initContainers ?? []), ...manifest.spec.containers].map((x) => x.name);
  const check = (c: Container, at: string, init: boolean): void => {
    if (seen.has(c.name)) causes.push({ field: `${at}.name`, reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"` });
    seen.add(c.name);
    if (!init && c.restartPolicy !== undefined)
      causes.push({ field: `${at}.restartPolicy`, reason: 'FieldValueForbidden', message: 'Forbidden: may not be set for non-init containers' });
    // Only a sidecar runs beside the containers, so only a sidecar may have hooks and probes (Kubernetes' validateInitContainers).
    if (init && c.restartPolicy !== 'Always') {
      for (const field of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        if (c[field] !== undefined)
          causes.push({
            field: `${at}.${field}`,
            reason: 'FieldValueForbidden',
            message: 'Forbidden: may not be set for init containers without restartPolicy=Always',
          });
      }
    }
    for (const kind of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      handlerCauses(c[kind], `${at}.${kind}`, causes);
      portCauses(c[kind], `${at}.${kind}`, c, causes);
    }
    for (const kind of ['livenessProbe', 'startupProbe'] as const) {
      const threshold = c[kind]?.successThreshold;
      if (threshold !== undefined && threshold !== 1)
        causes.push({ field: `${at}.${kind}.successThreshold`, reason: 'FieldValueInvalid', message: `Invalid value: ${threshold}: must be 1` });
    }
    for (const hook of ['postStart', 'preStop'] as const) {
      handlerCauses(c.lifecycle?.[hook], `${at}.lifecycle.${hook}`, causes);
      portCauses(c.lifecycle?.[hook], `${at}.lifecycle.${hook}`, c, causes);
    }
    envCauses(c, at, names, causes);
  };
  (manifest.spec.initContainers ?? []).forEach((c, i) => check(c, `spec.initContainers[${i}]`, true));
  manifest.spec.containers.forEach((c, i) => check(c, `spec.containers[${i}]`, false));
  (manifest.spec.ephemeralContainers ?? []).forEach((c, i) => {
    const at = `spec.ephemeralContainers[${i}]`;
    if (seen.has(c.name)) causes.push({ field: `${at}.name`, reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"` });
    seen.add(c.name);
    causes.push(...ephemeralContainerCauses(c, at, names));
    envCauses(c, at, names, causes);
  });
  causes.push(...podVolumeCauses(manifest), ...securityContextCauses(manifest));
  return causes;
}

/** Fields an ephemeral container may not set, as Kubernetes' allow list leaves them out: it must not become part of how the pod serves. */
const EPHEMERAL_FORBIDDEN = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources', 'restartPolicy'] as const;

/** Kubernetes' validateEphemeralContainers for one container: no ports, probes, hooks or resources; a target that is one of the pod's containers. */
function ephemeralContainerCauses(c: EphemeralContainer, at: string, podContainers: string[]): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const field of EPHEMERAL_FORBIDDEN) {
    const value = c[field];
    // An empty value is the zero value, which Kubernetes allows (kubectl debug sends `resources: {}`).
    const empty = value === undefined || (Array.isArray(value) && value.length === 0) || (field === 'resources' && isEmptyResources(c.resources));
    if (!empty) causes.push({ field: `${at}.${field}`, reason: 'FieldValueForbidden', message: 'Forbidden: cannot be set for an Ephemeral Container' });
  }
  const target = c.targetContainerName;
  if (target !== undefined && !podContainers.includes(target))
    causes.push({ field: `${at}.targetContainerName`, reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(target)}` });
  return causes;
}

function isEmptyResources(resources: Container['resources']): boolean {
  return Object.keys(resources?.limits ?? {}).length === 0 && Object.keys(resources?.requests ?? {}).length === 0;
}

/**
 * What changed in a pod's ephemeral containers that Kubernetes forbids: an existing one
 * removed or changed (compared with defaults applied on both sides). Empty when only new
 * ones were added.
 */
export function ephemeralContainerChanges(before: EphemeralContainer[], after: EphemeralContainer[]): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const old of before) {
    const index = after.findIndex((c) => c.name === old.name);
    if (index < 0)
      causes.push({
        field: 'spec.ephemeralContainers',
        reason: 'FieldValueForbidden',
        message: `Forbidden: existing ephemeral containers "${old.name}" may not be removed`,
      });
    else if (JSON.stringify(old, Object.keys(flatKeys(old)).sort()) !== JSON.stringify(after[index], Object.keys(flatKeys(after[index])).sort()))
      causes.push({
        field: `spec.ephemeralContainers[${index}]`,
        reason: 'FieldValueForbidden',
        message: `Forbidden: existing ephemeral containers "${old.name}" may not be changed`,
      });
  }
  return causes;
}

/**
 * What Kubernetes allows to change on an existing pod's spec: the containers' images
 * (and nothing jetlet supports beyond that). Returns the forbidden change, if any.
 */
export function forbiddenSpecChange(before: PodManifest['spec'], after: PodManifest['spec']): string | undefined {
  const keys = Object.keys({ ...flatKeys(before), ...flatKeys(after) }).sort();
  const withoutImages = (spec: PodManifest['spec']): string => JSON.stringify({ ...spec, containers: spec.containers.map((c) => ({ ...c, image: '' })) }, keys);
  if (withoutImages(before) === withoutImages(after)) return undefined;
  return 'pod updates may not change fields other than `spec.containers[*].image`';
}

/** Every key used anywhere in a JSON value, so JSON.stringify can sort them all. */
function flatKeys(value: unknown, keys: Record<string, true> = {}): Record<string, true> {
  if (Array.isArray(value)) value.forEach((v) => flatKeys(v, keys));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      keys[k] = true;
      flatKeys(v, keys);
    }
  }
  return keys;
}
