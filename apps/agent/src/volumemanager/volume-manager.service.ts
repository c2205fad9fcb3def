import { chmod, chown, lstat, mkdir, open, realpath, stat } from 'node:fs/promises';
import { dirname, relative, isAbsolute, resolve, sep } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { memoryBytes, type Container, type Volume, type VolumeSourceKind } from '#contracts';
import { ContainerConfigError } from '#domain/container-env';
import { pathUnder } from '#domain/path-under';
import type { DesiredPod, PodRef } from '#domain/reconcile';
import { isProjectedKind, projectVolume, volumeConfigRefs, volumeKind } from '#domain/volumes';
import { podRef } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { ConfigSource } from '../configmap/config-source.service.js';
import { NodeService } from '../node/node.service.js';
import { AtomicWriter } from './atomic-writer.js';
import { HostMounts } from './host-mounts.js';

/** A bind mount of a host path into a container. */
export interface HostMount {
  hostPath: string;
  containerPath: string;
  readOnly?: boolean;
}

/** Why a volume could not be set up: the kubelet's FailedMount. */
export class VolumeSetupError extends Error {
  override readonly name = 'VolumeSetupError';
  constructor(
    readonly volume: string,
    message: string,
  ) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${message}`);
  }
}

/** The kubelet's plugin directory names, so the layout under the root reads as the kubelet's. */
const PLUGIN_DIRS: Record<VolumeSourceKind, string> = {
  emptyDir: 'kubernetes.io~empty-dir',
  hostPath: 'kubernetes.io~host-path',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
};

/** Where the agent keeps a pod's emptyDir on the node; throws PathOutsideRootError for a name that is not one path component. */
export function emptyDirPath(rootDir: string, uid: string, name: string): string {
  return pathUnder(rootDir, 'pods', uid, 'volumes', PLUGIN_DIRS.emptyDir, name);
}

/** Whether `path` is `root` or inside it. */
function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Kubernetes' hostPath type check (`checkType` in the hostPath plugin), creating what the *OrCreate types ask for. */
async function checkHostPath(path: string, type: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
      if (!info) {
        await mkdir(path, { recursive: true, mode: 0o755 });
        return;
      }
      if (!info.isDirectory()) throw new Error(`hostPath type check failed: ${path} is not a directory`);
      return;
    case 'Directory':
      if (!info?.isDirectory()) throw new Error(`hostPath type check failed: ${path} is not a directory`);
      return;
    case 'FileOrCreate':
      if (!info) {
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        await (await open(path, 'a', 0o644)).close();
        return;
      }
      if (!info.isFile()) throw new Error(`hostPath type check failed: ${path} is not a file`);
      return;
    case 'File':
      if (!info?.isFile()) throw new Error(`hostPath type check failed: ${path} is not a file`);
      return;
    case 'Socket':
      if (!info?.isSocket()) throw new Error(`hostPath type check failed: ${path} is not a socket file`);
      return;
    case 'CharDevice':
      if (!info?.isCharacterDevice()) throw new Error(`hostPath type check failed: ${path} is not a character device`);
      return;
    case 'BlockDevice':
      if (!info?.isBlockDevice()) throw new Error(`hostPath type check failed: ${path} is not a block device`);
      return;
    default:
      throw new Error(`hostPath type check failed: unknown type ${JSON.stringify(type)}`);
  }
}

/**
 * The kubelet's volume manager: makes each pod's volumes under
 * `<root>/pods/<uid>/volumes/<plugin>/<name>` before its containers are made, rewrites the
 * ConfigMap, Secret and downward API ones at each resync (the atomic `..data` swap), and
 * unmounts them before the pod's directory is removed. Secrets and Memory emptyDirs are
 * tmpfs, so Secret values never reach the node's disk.
 */
@Injectable()
export class VolumeManager {
  private readonly logger = new Logger(VolumeManager.name);
  private resyncing = false;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    private readonly configSource: ConfigSource,
    private readonly node: NodeService,
    private readonly mounts: HostMounts,
  ) {}

  /** Throws PathOutsideRootError when the uid or the volume's name is not one plain path component. */
  private volumeDir(uid: string, kind: VolumeSourceKind, name: string): string {
    return pathUnder(this.config.AGENT_ROOT_DIR, 'pods', uid, 'volumes', PLUGIN_DIRS[kind], name);
  }

  /** Where the volume's content is on the node. */
  private source(pod: PodRef, volume: Volume, kind: VolumeSourceKind): string {
    return kind === 'hostPath' ? resolve(volume.hostPath?.path ?? '') : this.volumeDir(pod.uid, kind, volume.name);
  }

  /** Writes a projected volume's files; false when unchanged. */
  private async project(pod: DesiredPod, volume: Volume, dir: string, podIP?: string): Promise<boolean> {
    const refs = volumeConfigRefs([volume]);
    const objects = await this.configSource.readAll(pod.namespace, refs);
    let files;
    try {
      files = projectVolume(volume, {
        manifest: pod.manifest,
        uid: pod.uid,
        nodeName: this.config.NODE_NAME,
        hostIP: this.node.nodeIP,
        ...(podIP ? { podIP } : {}),
        allocatable: this.node.allocatable(),
        ...objects,
      });
    } catch (error) {
      if (error instanceof ContainerConfigError) throw new VolumeSetupError(volume.name, error.message);
      throw error;
    }
    return new AtomicWriter(dir, pod.manifest.spec.securityContext?.fsGroup).write(files);
  }

  /** Makes one volume ready on the node (idempotent). */
  private async setUpVolume(pod: DesiredPod, volume: Volume): Promise<void> {
    const kind = volumeKind(volume);
    if (!kind) return;
    const fsGroup = pod.manifest.spec.securityContext?.fsGroup;
    try {
      if (kind === 'hostPath') {
        await checkHostPath(this.source(pod, volume, kind), volume.hostPath?.type ?? '');
        return;
      }
      const dir = this.volumeDir(pod.uid, kind, volume.name);
      await mkdir(dir, { recursive: true, mode: 0o750 });
      const memory = kind === 'secret' || (kind === 'emptyDir' && volume.emptyDir?.medium === 'Memory');
      if (memory && !(await this.mounts.isMountPoint(dir))) {
        const size = kind === 'emptyDir' && volume.emptyDir?.sizeLimit ? memoryBytes(volume.emptyDir.sizeLimit) : undefined;
        await this.mounts.mountTmpfs(dir, kind === 'emptyDir' ? 0o777 : 0o755, size);
      }
      if (kind === 'emptyDir') {
        // Any user of any container may write a scratch volume; with an fsGroup the group owns it and new files inherit it.
        await chmod(dir, fsGroup !== undefined ? 0o2777 : 0o777);
        if (fsGroup !== undefined) await chown(dir, -1, fsGroup);
        return;
      }
      if (isProjectedKind(kind)) await this.project(pod, volume, dir);
    } catch (error) {
      if (error instanceof VolumeSetupError) throw error;
      throw new VolumeSetupError(volume.name, (error as Error).message);
    }
  }

  /** Sets up every volume of the pod; throws VolumeSetupError naming the first that fails. */
  async setUp(pod: DesiredPod): Promise<void> {
    for (const volume of pod.manifest.spec.volumes ?? []) await this.setUpVolume(pod, volume);
  }

  /**
   * The container's bind mounts. A subPath is resolved now (through `..data`), so it keeps
   * the file as it was when the container was made, as in Kubernetes; it must stay inside
   * its volume even through symlinks.
   */
  async containerMounts(pod: DesiredPod, container: Container): Promise<HostMount[]> {
    const volumes = new Map((pod.manifest.spec.volumes ?? []).map((v) => [v.name, v]));
    const out: HostMount[] = [];
    for (const m of container.volumeMounts ?? []) {
      const volume = volumes.get(m.name);
      const kind = volume && volumeKind(volume);
      if (!volume || !kind) throw new VolumeSetupError(m.name, 'no such volume in the pod');
      const base = this.source(pod, volume, kind);
      let hostPath = base;
      if (m.subPath) {
        const parts = m.subPath.split('/').filter((p) => p !== '');
        const wanted = parts.length > 0 ? pathUnder(base, ...parts) : base;
        // A missing subPath of a writable volume is made, as the kubelet does.
        if (!isProjectedKind(kind) && !(await lstat(wanted).catch(() => undefined))) await mkdir(wanted, { recursive: true, mode: 0o755 });
        const real = await realpath(wanted).catch(() => {
          throw new VolumeSetupError(m.name, `subPath ${JSON.stringify(m.subPath)} does not exist in the volume`);
        });
        if (!within(await realpath(base), real)) throw new VolumeSetupError(m.name, `subPath ${JSON.stringify(m.subPath)} resolves outside the volume`);
        hostPath = real;
      }
      // Object and downward API volumes are read-only in every container, as the kubelet mounts them.
      out.push({ hostPath, containerPath: m.mountPath, readOnly: m.readOnly === true || isProjectedKind(kind) });
    }
    return out;
  }

  /**
   * The sync period's refresh: every projected volume already on the node gets the objects'
   * current content (written only when it changed). A missing object keeps the last content,
   * as the kubelet does.
   */
  async resync(pods: DesiredPod[]): Promise<void> {
    if (this.resyncing) return;
    this.resyncing = true;
    try {
      for (const pod of pods) {
        if (pod.terminating) continue;
        for (const volume of pod.manifest.spec.volumes ?? []) {
          const kind = volumeKind(volume);
          if (!isProjectedKind(kind)) continue;
          try {
            const dir = this.volumeDir(pod.uid, kind, volume.name);
            if (!(await stat(dir).catch(() => undefined))) continue;
            if (await this.project(pod, volume, dir)) this.logger.log(`${podRef(pod)}: volume ${volume.name} updated`);
          } catch (error) {
            this.logger.warn(`${podRef(pod)}: volume ${volume.name} not updated: ${(error as Error).message}`);
          }
        }
      }
    } finally {
      this.resyncing = false;
    }
  }

  /** Unmounts the pod's in-memory volumes, so its directory can be removed. */
  async tearDown(uid: string): Promise<void> {
    let dir: string;
    try {
      dir = pathUnder(this.config.AGENT_ROOT_DIR, 'pods', uid, 'volumes');
    } catch {
      return;
    }
    await this.mounts.unmountUnder(dir);
  }
}
