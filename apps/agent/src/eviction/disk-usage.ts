import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Bytes a directory tree takes on its filesystem, as `du` counts them (allocated blocks, each
 * hard-linked file once, symlinks not followed): the kubelet's fs.DiskUsage for a volume.
 * A tree that is gone, or goes while it is walked, counts what was found.
 */
export async function diskUsage(dir: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const walk = async (path: string): Promise<void> => {
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) return;
    const inode = `${stats.dev}:${stats.ino}`;
    if (seen.has(inode)) return;
    seen.add(inode);
    total += stats.blocks * 512;
    if (!stats.isDirectory()) return;
    const entries = await readdir(path).catch(() => [] as string[]);
    for (const entry of entries) await walk(join(path, entry));
  };
  await walk(dir);
  return total;
}
