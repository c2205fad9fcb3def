import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Container } from '#contracts';
import { pathUnder, PathOutsideRootError } from '#domain/path-under';
import type { PodRef } from '#domain/reconcile';
import { LABELS, type ContainerRuntime, type RuntimeContainer } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** The kubelet's limits: 4096 bytes of message, or the last 80 lines / 2048 bytes of log. */
const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

/** The path `build` makes, or undefined when it would not be inside the agent's root (labels or messages naming no plain component). */
function inside(build: () => string): string | undefined {
  try {
    return build();
  } catch (error) {
    if (error instanceof PathOutsideRootError) return undefined;
    throw error;
  }
}

/**
 * Termination messages, as the kubelet keeps them: a host file per container attempt,
 * bind-mounted at the container's terminationMessagePath, read once the container is dead.
 */
@Injectable()
export class TerminationMessages {
  /** Messages read so far, by container id; dead containers do not change. */
  private readonly messages = new Map<string, string>();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
  ) {}

  /** Throws PathOutsideRootError when the uid is not one plain path component. */
  private podDir(uid: string): string {
    return pathUnder(this.config.AGENT_ROOT_DIR, 'pods', uid);
  }

  private containerDir(uid: string, container: string): string {
    return pathUnder(this.config.AGENT_ROOT_DIR, 'pods', uid, 'containers', container);
  }

  private file(uid: string, container: string, attempt: string | number): string {
    return pathUnder(this.config.AGENT_ROOT_DIR, 'pods', uid, 'containers', container, `${attempt}.termination-log`);
  }

  /** Creates the empty file for a new container attempt and returns its mount. */
  async prepare(pod: PodRef, container: Container, attempt: number): Promise<{ hostPath: string; containerPath: string }> {
    const hostPath = this.file(pod.uid, container.name, attempt);
    await mkdir(this.containerDir(pod.uid, container.name), { recursive: true });
    // Created once per attempt: preparing the same attempt again must not wipe what it wrote.
    await writeFile(hostPath, '', { mode: 0o666, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return { hostPath, containerPath: container.terminationMessagePath ?? '/dev/termination-log' };
  }

  /**
   * Reads the messages of dead containers not read yet; with FallbackToLogsOnError an
   * empty message of a failed container becomes the tail of its log.
   */
  async collect(specs: Map<string, Container>, dead: RuntimeContainer[]): Promise<Map<string, string>> {
    await Promise.all(
      dead
        .filter((c) => !this.messages.has(c.id))
        .map(async (c) => {
          const uid = c.labels[LABELS.podUid] ?? '';
          const name = c.labels[LABELS.containerName] ?? '';
          const spec = specs.get(`${uid}/${name}`);
          const file = inside(() => this.file(uid, name, c.labels[LABELS.restartCount] ?? '0'));
          // Undefined when there is no file: the pod's files are already gone (a listing taken
          // before its removal), and an empty message must not stand in for the real one.
          let message = await (file ? readFile(file) : Promise.reject(new Error('no file')))
            .then((b) => b.subarray(0, MAX_MESSAGE_BYTES).toString('utf8'))
            .catch(() => undefined);
          if (!message && spec?.terminationMessagePolicy === 'FallbackToLogsOnError' && (c.exitCode ?? 0) !== 0) {
            const log = await this.runtime.logs(c.id, { tailLines: FALLBACK_LOG_LINES }).catch(() => '');
            message = Buffer.from(log).subarray(-FALLBACK_LOG_BYTES).toString('utf8');
          }
          if (message !== undefined) this.messages.set(c.id, message);
        }),
    );
    return this.messages;
  }

  /** Every message read so far, by container id. */
  known(): Map<string, string> {
    return this.messages;
  }

  /** Forgets a removed container's message and file. */
  async removeContainer(c: RuntimeContainer | undefined, id: string): Promise<void> {
    this.messages.delete(id);
    if (!c) return;
    const file = inside(() => this.file(c.labels[LABELS.podUid] ?? '', c.labels[LABELS.containerName] ?? '', c.labels[LABELS.restartCount] ?? '0'));
    if (file) await rm(file, { force: true });
  }

  /** Removes everything kept for a pod that is gone. */
  async removePod(uid: string, ids: string[]): Promise<void> {
    for (const id of ids) this.messages.delete(id);
    // Never the root, nor anything outside it: a uid that is no path component never had a directory.
    const dir = inside(() => this.podDir(uid));
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
