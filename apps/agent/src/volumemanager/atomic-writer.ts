import { randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, readFile, readlink, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathUnder } from '#domain/path-under';
import type { VolumeFile } from '#domain/volumes';

/** The link that names the current timestamped directory, as the kubelet's AtomicWriter calls it. */
export const DATA_DIR = '..data';
const DATA_DIR_TMP = '..data_tmp';

/** A file path of a payload that would not stay inside its volume. */
export class UnsafeVolumePathError extends Error {
  override readonly name = 'UnsafeVolumePathError';
}

/** The path's components; each must be plain, and the first may not start with `..` (the writer's own names). */
function components(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0 || parts.some((p) => p === '.' || p === '..' || p.includes('\0')) || (parts[0] ?? '').startsWith('..'))
    throw new UnsafeVolumePathError(`volume file path ${JSON.stringify(path)} must be relative, without '..'`);
  return parts;
}

/** `2026_12_01_04_10_00.` plus random letters, the kubelet's shape for the timestamped directory. */
function timestampedName(now: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${stamp}.${randomBytes(6).toString('hex')}`;
}

/** Every regular file under `dir`, by path relative to it. */
async function listFiles(dir: string, prefix = ''): Promise<Map<string, { path: string; mode: number }>> {
  const out = new Map<string, { path: string; mode: number }>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) for (const [k, v] of await listFiles(full, rel)) out.set(k, v);
    else if (entry.isFile()) out.set(rel, { path: full, mode: (await stat(full)).mode & 0o7777 });
  }
  return out;
}

/**
 * The kubelet's AtomicWriter: a volume's files live in a timestamped directory, `..data`
 * links to it, and each top-level name links through `..data`. An update writes a new
 * directory and swaps `..data` with one rename, so a reader sees the old set or the new,
 * never a mix. Every path is checked to stay under the volume's directory.
 */
export class AtomicWriter {
  constructor(
    /** The volume's directory (already checked to be under the agent's root). */
    private readonly dir: string,
    /** Group owning the files (the pod's fsGroup), when set. */
    private readonly gid?: number,
  ) {}

  /** Whether the files now in place are exactly `files` (content and mode). */
  private async unchanged(files: Map<string, VolumeFile>): Promise<boolean> {
    let current: string;
    try {
      current = await readlink(join(this.dir, DATA_DIR));
    } catch {
      return false;
    }
    const old = await listFiles(pathUnder(this.dir, current)).catch(() => undefined);
    if (!old || old.size !== files.size) return false;
    for (const [path, file] of files) {
      const existing = old.get(path);
      if (!existing || existing.mode !== file.mode || !(await readFile(existing.path)).equals(file.data)) return false;
    }
    return true;
  }

  /** Writes the payload when it differs from what is there; true when it wrote. */
  async write(files: Map<string, VolumeFile>): Promise<boolean> {
    const tops = new Set<string>();
    for (const path of files.keys()) tops.add(components(path)[0] ?? '');
    await mkdir(this.dir, { recursive: true });
    if (await this.unchanged(files)) return false;

    const previous = await readlink(join(this.dir, DATA_DIR)).catch(() => undefined);
    const name = timestampedName(new Date());
    const tsDir = pathUnder(this.dir, name);
    await mkdir(tsDir, { mode: 0o755 });
    for (const [path, file] of files) {
      const target = pathUnder(tsDir, ...components(path));
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      await writeFile(target, file.data, { mode: file.mode });
      // The process umask would narrow the mode asked for.
      await chmod(target, file.mode);
      if (this.gid !== undefined) await chown(target, -1, this.gid);
    }
    if (this.gid !== undefined) await chown(tsDir, -1, this.gid);

    const tmpLink = pathUnder(this.dir, DATA_DIR_TMP);
    await rm(tmpLink, { force: true });
    await symlink(name, tmpLink);
    await rename(tmpLink, pathUnder(this.dir, DATA_DIR));

    for (const top of tops) {
      const link = pathUnder(this.dir, top);
      const existing = await lstat(link).catch(() => undefined);
      if (existing?.isSymbolicLink()) continue;
      if (existing) await rm(link, { recursive: true, force: true });
      await symlink(join(DATA_DIR, top), link);
    }
    // Names the new payload no longer has: only the writer's own links are removed.
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      if (entry.name.startsWith('..') || tops.has(entry.name) || !entry.isSymbolicLink()) continue;
      const target = await readlink(join(this.dir, entry.name));
      if (target.startsWith(`${DATA_DIR}/`)) await unlink(join(this.dir, entry.name));
    }
    if (previous && previous !== name && previous.startsWith('..') && !previous.includes('/'))
      await rm(pathUnder(this.dir, previous), { recursive: true, force: true });
    return true;
  }
}
