import { NAMESPACED_SYSCTL, type Container, type FieldCause, type PodManifest, type SecurityContext } from '#contracts';
import { ContainerConfigError } from './container-env.js';

/** The settings a container runs with: its own securityContext over the pod's (the kubelet's `DetermineEffectiveSecurityContext`). */
export function effectiveSecurityContext(manifest: PodManifest, container: Container): SecurityContext {
  const pod = manifest.spec.securityContext ?? {};
  const own = container.securityContext ?? {};
  const pick = <K extends 'runAsUser' | 'runAsGroup' | 'runAsNonRoot'>(k: K): SecurityContext[K] => own[k] ?? pod[k];
  const runAsUser = pick('runAsUser');
  const runAsGroup = pick('runAsGroup');
  const runAsNonRoot = pick('runAsNonRoot');
  return {
    ...own,
    ...(runAsUser !== undefined ? { runAsUser } : {}),
    ...(runAsGroup !== undefined ? { runAsGroup } : {}),
    ...(runAsNonRoot !== undefined ? { runAsNonRoot } : {}),
  };
}

/** An image's USER as the runtime reports it: a numeric uid, or a name (the kubelet's `getImageUser`). */
export function imageUser(user: string): { uid?: number; name?: string } {
  const part = user.split(':')[0] ?? '';
  // No USER in the image: the process runs as root, and the kubelet reads it as uid 0.
  if (part === '') return { uid: 0 };
  return /^\d+$/.test(part) ? { uid: Number(part) } : { name: part };
}

/** The kubelet's `format.Pod`: `name_namespace(uid)`. */
function formatPod(manifest: PodManifest, uid: string): string {
  return `${manifest.metadata.name}_${manifest.metadata.namespace ?? 'default'}(${uid})`;
}

/**
 * The kubelet's `verifyRunAsNonRoot`: with runAsNonRoot, a container that would run as uid 0
 * (or as a user name it cannot check) is refused with CreateContainerConfigError.
 */
export function verifyRunAsNonRoot(manifest: PodManifest, uid: string, container: Container, imageUserSpec: string): void {
  const sc = effectiveSecurityContext(manifest, container);
  if (sc.runAsNonRoot !== true) return;
  const pod = JSON.stringify(formatPod(manifest, uid));
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0) throw new ContainerConfigError(`container's runAsUser breaks non-root policy (pod: ${pod}, container: ${container.name})`);
    return;
  }
  const user = imageUser(imageUserSpec);
  if (user.uid === 0) throw new ContainerConfigError(`container has runAsNonRoot and image will run as root (pod: ${pod}, container: ${container.name})`);
  if (user.name !== undefined)
    throw new ContainerConfigError(`container has runAsNonRoot and image has non-numeric user (${user.name}), cannot verify user is non-root (pod: ${pod}, container: ${container.name})`);
}

/** What the engine is told for a container's security settings. */
export interface ContainerSecurity {
  /** Docker's `User`: `uid[:gid]` (or the image's user with the asked-for gid). */
  user?: string;
  /** Extra groups: fsGroup and supplementalGroups. */
  groupAdd?: string[];
  readOnlyRootFilesystem?: boolean;
  capAdd?: string[];
  capDrop?: string[];
  privileged?: boolean;
  /** no_new_privs: allowPrivilegeEscalation is false. */
  noNewPrivileges?: boolean;
  /** The pod's IPC sysctls, set in the container's own IPC namespace. */
  sysctls?: Record<string, string>;
}

/** The pod's sysctls split by where they can be set: the network ones on the sandbox, which owns the network namespace. */
export function podSysctls(manifest: PodManifest): { sandbox: Record<string, string>; container: Record<string, string> } {
  const sandbox: Record<string, string> = {};
  const container: Record<string, string> = {};
  for (const s of manifest.spec.securityContext?.sysctls ?? []) {
    if (!NAMESPACED_SYSCTL.test(s.name)) continue;
    (s.name.startsWith('net.') ? sandbox : container)[s.name] = s.value;
  }
  return { sandbox, container };
}

/** The engine settings of a container's effective security context (the kubelet's `convertToRuntimeSecurityContext`). */
export function containerSecurity(manifest: PodManifest, container: Container, imageUserSpec: string): ContainerSecurity {
  const sc = effectiveSecurityContext(manifest, container);
  const pod = manifest.spec.securityContext ?? {};
  const out: ContainerSecurity = {};
  if (sc.runAsUser !== undefined || sc.runAsGroup !== undefined) {
    const userPart = sc.runAsUser !== undefined ? String(sc.runAsUser) : imageUserSpec.split(':')[0] || '0';
    out.user = sc.runAsGroup !== undefined ? `${userPart}:${sc.runAsGroup}` : userPart;
  }
  const groups = [...(pod.fsGroup !== undefined ? [pod.fsGroup] : []), ...(pod.supplementalGroups ?? [])];
  if (groups.length > 0) out.groupAdd = [...new Set(groups)].map(String);
  if (sc.readOnlyRootFilesystem) out.readOnlyRootFilesystem = true;
  if (sc.capabilities?.add?.length) out.capAdd = [...sc.capabilities.add];
  if (sc.capabilities?.drop?.length) out.capDrop = [...sc.capabilities.drop];
  if (sc.privileged) out.privileged = true;
  if (sc.allowPrivilegeEscalation === false) out.noNewPrivileges = true;
  const sysctls = podSysctls(manifest).container;
  if (Object.keys(sysctls).length > 0) out.sysctls = sysctls;
  return out;
}

/** Kubernetes' cross-field checks of security contexts. */
export function securityContextCauses(manifest: PodManifest): FieldCause[] {
  const causes: FieldCause[] = [];
  const check = (c: Container, at: string): void => {
    const sc = c.securityContext;
    if (sc?.allowPrivilegeEscalation !== false) return;
    if (sc.privileged)
      causes.push({ field: `${at}.securityContext`, reason: 'FieldValueInvalid', message: 'Invalid value: "": cannot set `allowPrivilegeEscalation` to false and `privileged` to true' });
    if ((sc.capabilities?.add ?? []).some((cap) => cap.replace(/^CAP_/, '') === 'SYS_ADMIN'))
      causes.push({ field: `${at}.securityContext`, reason: 'FieldValueInvalid', message: 'Invalid value: "": cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN' });
  };
  (manifest.spec.initContainers ?? []).forEach((c, i) => check(c, `spec.initContainers[${i}]`));
  manifest.spec.containers.forEach((c, i) => check(c, `spec.containers[${i}]`));
  const seen = new Set<string>();
  (manifest.spec.securityContext?.sysctls ?? []).forEach((s, i) => {
    if (seen.has(s.name)) causes.push({ field: `spec.securityContext.sysctls[${i}].name`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(s.name)}` });
    seen.add(s.name);
  });
  return causes;
}
