import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { Injectable } from '@nestjs/common';

const run = promisify(execFile);

/** mountinfo escapes space, tab, newline and backslash as octal. */
const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/**
 * The node's mount table, for the volumes the kubelet keeps in memory (Secrets and
 * `emptyDir.medium: Memory`): a tmpfs on the pod's volume directory, which Docker then
 * bind-mounts into each container, so all of them share it.
 */
@Injectable()
export class HostMounts {
  /** Mount points under `root` (deepest first), from this process's mount table. */
  async mountsUnder(root: string): Promise<string[]> {
    const base = resolve(root);
    const table = await readFile('/proc/self/mountinfo', 'utf8');
    return table
      .split('\n')
      .map((line) => line.split(' ')[4])
      .filter((p): p is string => p !== undefined)
      .map(unescape)
      .filter((p) => p === base || p.startsWith(base + sep))
      .sort((a, b) => b.length - a.length);
  }

  async isMountPoint(dir: string): Promise<boolean> {
    return (await this.mountsUnder(dir)).includes(resolve(dir));
  }

  /** A tmpfs at `dir` (which exists) with its root directory's mode, of `sizeBytes` when given (else the kernel's default, half the memory). */
  async mountTmpfs(dir: string, mode: number, sizeBytes?: number): Promise<void> {
    const options = [`mode=0${mode.toString(8)}`, ...(sizeBytes !== undefined ? [`size=${sizeBytes}`] : [])].join(',');
    await run('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  }

  /** Unmounts everything under `root`, deepest first, so it can be removed. */
  async unmountUnder(root: string): Promise<void> {
    for (const point of await this.mountsUnder(root)) await run('umount', [point]);
  }
}
