/**
 * Pod Security Standards as the pod-security-admission plugin checks them, over a pod spec in
 * Kubernetes' own field names (plain JSON, so the checks hold whatever the contract classes
 * accept). Each failing check gives the plugin's reason and detail, in the plugin's order.
 */

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export const POD_SECURITY_LEVELS: readonly PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];

/** The namespace label that sets the level a namespace enforces. */
export const ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

export interface PodSecurityViolation {
  reason: string;
  detail: string;
}

type Json = Record<string, unknown>;

interface SecurityContext {
  privileged?: unknown;
  allowPrivilegeEscalation?: unknown;
  runAsNonRoot?: unknown;
  runAsUser?: unknown;
  procMount?: unknown;
  capabilities?: { add?: unknown; drop?: unknown };
  seccompProfile?: { type?: unknown };
  sysctls?: unknown;
}

interface Container {
  name?: unknown;
  securityContext?: SecurityContext;
  ports?: Array<{ hostPort?: unknown }>;
}

const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : String(v));

const pluralize = (one: string, many: string, n: number): string => (n === 1 ? one : many);
const joinQuote = (items: readonly string[]): string => items.map((i) => JSON.stringify(i)).join(', ');
const sorted = (items: Iterable<string>): string[] => [...new Set(items)].sort();

/** Init containers, containers and ephemeral containers, in that order (visitContainers). */
function containers(spec: Json): Container[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)].map((c) => obj(c) as Container);
}

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/** Volume sources the restricted level allows. */
const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);

type Check = (spec: Json) => PodSecurityViolation | undefined;

function badContainers(spec: Json, bad: (c: Container) => boolean): string[] {
  return containers(spec)
    .filter(bad)
    .map((c) => str(c.name));
}

const capabilitiesBaseline: Check = (spec) => {
  const added: string[] = [];
  const names = badContainers(spec, (c) => {
    const extra = arr(c.securityContext?.capabilities?.add)
      .map(str)
      .filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    added.push(...extra);
    return extra.length > 0;
  });
  if (names.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must not include ${joinQuote(sorted(added))} in securityContext.capabilities.add`,
  };
};

const hostNamespaces: Check = (spec) => {
  const set = ['hostIPC', 'hostNetwork', 'hostPID'].filter((k) => spec[k] === true);
  if (set.length === 0) return undefined;
  return { reason: 'host namespaces', detail: set.map((k) => `${k}=true`).join(', ') };
};

const hostPathVolumes: Check = (spec) => {
  const names = arr(spec.volumes)
    .map(obj)
    .filter((v) => v.hostPath !== undefined && v.hostPath !== null)
    .map((v) => str(v.name));
  if (names.length === 0) return undefined;
  return { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}` };
};

const hostPorts: Check = (spec) => {
  const ports: string[] = [];
  const names = badContainers(spec, (c) => {
    const used = arr(c.ports)
      .map((p) => obj(p).hostPort)
      .filter((p) => p !== undefined && p !== null && p !== 0);
    ports.push(...used.map(str));
    return used.length > 0;
  });
  if (names.length === 0) return undefined;
  const unique = sorted(ports);
  return {
    reason: 'hostPort',
    detail: `${pluralize('container', 'containers', names.length)} ${joinQuote(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
};

const privileged: Check = (spec) => {
  const names = badContainers(spec, (c) => c.securityContext?.privileged === true);
  if (names.length === 0) return undefined;
  return { reason: 'privileged', detail: `${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must not set securityContext.privileged=true` };
};

const procMount: Check = (spec) => {
  const names = badContainers(spec, (c) => c.securityContext?.procMount !== undefined && c.securityContext.procMount !== 'Default');
  if (names.length === 0) return undefined;
  return { reason: 'procMount', detail: `${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must not set securityContext.procMount to "Unmasked"` };
};

const seccompBaseline: Check = (spec) => {
  const parts: string[] = [];
  if (obj(obj(spec.securityContext).seccompProfile).type === 'Unconfined') parts.push('pod must not set securityContext.seccompProfile.type to "Unconfined"');
  const names = badContainers(spec, (c) => c.securityContext?.seccompProfile?.type === 'Unconfined');
  if (names.length > 0)
    parts.push(`${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must not set securityContext.seccompProfile.type to "Unconfined"`);
  return parts.length === 0 ? undefined : { reason: 'seccompProfile', detail: parts.join(' and ') };
};

const sysctls: Check = (spec) => {
  const bad = arr(obj(spec.securityContext).sysctls)
    .map((s) => str(obj(s).name))
    .filter((n) => !SAFE_SYSCTLS.has(n));
  return bad.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: bad.join(', ') };
};

const allowPrivilegeEscalation: Check = (spec) => {
  const names = badContainers(spec, (c) => c.securityContext?.allowPrivilegeEscalation !== false);
  if (names.length === 0) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

const capabilitiesRestricted: Check = (spec) => {
  const notDropped = badContainers(spec, (c) => !arr(c.securityContext?.capabilities?.drop).includes('ALL'));
  const added: string[] = [];
  const adding = badContainers(spec, (c) => {
    const extra = arr(c.securityContext?.capabilities?.add)
      .map(str)
      .filter((cap) => cap !== 'NET_BIND_SERVICE');
    added.push(...extra);
    return extra.length > 0;
  });
  const parts: string[] = [];
  if (notDropped.length > 0)
    parts.push(`${pluralize('container', 'containers', notDropped.length)} ${joinQuote(notDropped)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length > 0)
    parts.push(`${pluralize('container', 'containers', adding.length)} ${joinQuote(adding)} must not include ${joinQuote(sorted(added))} in securityContext.capabilities.add`);
  return parts.length === 0 ? undefined : { reason: 'unrestricted capabilities', detail: parts.join('; ') };
};

const restrictedVolumes: Check = (spec) => {
  const bad = arr(spec.volumes)
    .map(obj)
    .map((v) => ({ name: str(v.name), source: Object.keys(v).find((k) => k !== 'name') }))
    .filter((v): v is { name: string; source: string } => v.source !== undefined && !RESTRICTED_VOLUME_SOURCES.has(v.source));
  if (bad.length === 0) return undefined;
  const types = sorted(bad.map((v) => v.source));
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad.map((v) => v.name))} ${pluralize('uses', 'use', bad.length)} restricted volume ${pluralize('type', 'types', types.length)} ${joinQuote(types)}`,
  };
};

const runAsNonRoot: Check = (spec) => {
  const podSet = obj(spec.securityContext).runAsNonRoot === true;
  const explicitFalse = obj(spec.securityContext).runAsNonRoot === false;
  const names = badContainers(spec, (c) => c.securityContext?.runAsNonRoot === false || (!podSet && c.securityContext?.runAsNonRoot !== true));
  if (names.length === 0 && !explicitFalse) return undefined;
  const parts: string[] = [];
  if (explicitFalse) parts.push('pod must not set securityContext.runAsNonRoot=false');
  if (names.length > 0) parts.push(`pod or ${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must set securityContext.runAsNonRoot=true`);
  return { reason: 'runAsNonRoot != true', detail: parts.join(' or ') };
};

const runAsUser: Check = (spec) => {
  const parts: string[] = [];
  if (obj(spec.securityContext).runAsUser === 0) parts.push('pod must not set runAsUser=0');
  const names = badContainers(spec, (c) => c.securityContext?.runAsUser === 0);
  if (names.length > 0) parts.push(`${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must not set runAsUser=0`);
  return parts.length === 0 ? undefined : { reason: 'runAsUser=0', detail: parts.join('; ') };
};

const seccompRestricted: Check = (spec) => {
  const allowed = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';
  const podType = obj(obj(spec.securityContext).seccompProfile).type;
  const names = badContainers(spec, (c) => {
    const t = c.securityContext?.seccompProfile?.type;
    return t === undefined ? !allowed(podType) : !allowed(t);
  });
  if (names.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `pod or ${pluralize('container', 'containers', names.length)} ${joinQuote(names)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
};

/** The checks of each level in the plugin's order (its check files, alphabetically); restricted includes baseline. */
const CHECKS: Record<PodSecurityLevel, Array<{ id: string; check: Check }>> = {
  privileged: [],
  baseline: [
    { id: 'capabilities_baseline', check: capabilitiesBaseline },
    { id: 'hostNamespaces', check: hostNamespaces },
    { id: 'hostPathVolumes', check: hostPathVolumes },
    { id: 'hostPorts', check: hostPorts },
    { id: 'privileged', check: privileged },
    { id: 'procMount', check: procMount },
    { id: 'seccompProfile_baseline', check: seccompBaseline },
    { id: 'sysctls', check: sysctls },
  ],
  restricted: [
    { id: 'allowPrivilegeEscalation', check: allowPrivilegeEscalation },
    // capabilities_restricted overrides capabilities_baseline; restrictedVolumes overrides hostPathVolumes.
    { id: 'capabilities_restricted', check: capabilitiesRestricted },
    { id: 'hostNamespaces', check: hostNamespaces },
    { id: 'hostPorts', check: hostPorts },
    { id: 'privileged', check: privileged },
    { id: 'procMount', check: procMount },
    { id: 'restrictedVolumes', check: restrictedVolumes },
    { id: 'runAsNonRoot', check: runAsNonRoot },
    { id: 'runAsUser', check: runAsUser },
    { id: 'seccompProfile_restricted', check: seccompRestricted },
    { id: 'sysctls', check: sysctls },
  ],
};

/** Every way the pod spec (Kubernetes JSON) breaks the level; empty when it is allowed. */
export function checkPodSecurity(level: PodSecurityLevel, spec: unknown): PodSecurityViolation[] {
  const s = obj(spec);
  return CHECKS[level].map(({ check }) => check(s)).filter((v): v is PodSecurityViolation => v !== undefined);
}

/** `violates PodSecurity "baseline:latest": privileged (container "c" must not set ...), ...`, as the plugin words it. */
export function podSecurityMessage(level: PodSecurityLevel, violations: readonly PodSecurityViolation[]): string {
  const detail = violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
  return `violates PodSecurity "${level}:latest": ${detail}`;
}

/** The level a namespace's labels enforce: its `pod-security.kubernetes.io/enforce` label, else `fallback`. Undefined for a label that names no level. */
export function enforcedLevel(labels: Readonly<Record<string, string>> | undefined, fallback: PodSecurityLevel): PodSecurityLevel | undefined {
  const value = labels?.[ENFORCE_LABEL];
  if (value === undefined) return fallback;
  return (POD_SECURITY_LEVELS as readonly string[]).includes(value) ? (value as PodSecurityLevel) : undefined;
}
