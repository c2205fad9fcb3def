import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { Container } from '#contracts';
import type { PodRef } from '#domain';
import { LABELS, type ContainerRuntime, type RuntimeContainer } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** The kubelet's limits: 4096 bytes of message, or the last 80 lines / 2048 bytes of log. */
const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

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

  private podDir(uid: string): string {
    return join(this.config.AGENT_ROOT_DIR, 'pods', uid);
  }

  private file(uid: string, container: string, attempt: string | number): string {
    return join(this.podDir(uid), 'containers', container, `${attempt}.termination-log`);
  }

  /** Creates the empty file for a new container attempt and returns its mount. */
  async prepare(pod: PodRef, container: Container, attempt: number): Promise<{ hostPath: string; containerPath: string }> {
    const hostPath = this.file(pod.uid, container.name, attempt);
    await mkdir(join(this.podDir(pod.uid), 'containers', container.name), { recursive: true });
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
          let message = await readFile(this.file(uid, name, c.labels[LABELS.restartCount] ?? '0'))
            .then((b) => b.subarray(0, MAX_MESSAGE_BYTES).toString('utf8'))
            .catch(() => '');
          if (!message && spec?.terminationMessagePolicy === 'FallbackToLogsOnError' && (c.exitCode ?? 0) !== 0) {
            const log = await this.runtime.logs(c.id, { tailLines: FALLBACK_LOG_LINES }).catch(() => '');
            message = Buffer.from(log).subarray(-FALLBACK_LOG_BYTES).toString('utf8');
          }
          this.messages.set(c.id, message);
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
    await rm(this.file(c.labels[LABELS.podUid] ?? '', c.labels[LABELS.containerName] ?? '', c.labels[LABELS.restartCount] ?? '0'), { force: true });
  }

  /** Removes everything kept for a pod that is gone. */
  async removePod(uid: string, ids: string[]): Promise<void> {
    for (const id of ids) this.messages.delete(id);
    await rm(this.podDir(uid), { recursive: true, force: true });
  }
}
