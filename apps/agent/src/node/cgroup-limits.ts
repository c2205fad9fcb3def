import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What this process's cgroup allows, where a limit is set. */
export interface CgroupLimits {
  /** Memory limit, bytes. */
  memoryBytes?: number;
  /** CPU quota in cores (quota / period), e.g. 1.5. */
  cpuCores?: number;
  /** Memory in use that cannot be reclaimed (usage − inactive file cache), bytes; set with `memoryBytes`. */
  memoryWorkingSetBytes?: number;
}

/** Where the cgroup file system is and which cgroups this process is in (`/proc/self/cgroup`). */
export interface CgroupSource {
  root: string;
  selfCgroup: string;
}

/** v1 reports "unlimited" as a page-aligned 2^63 − 1; anything this large is no limit. */
const UNLIMITED = 2 ** 60;

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * The directories to read for one hierarchy: the process's own cgroup and every ancestor up
 * to the mount's root. Inside a container the mount may be the host's (the path resolves
 * under it) or the container's own (its root is the process's cgroup); both are covered.
 */
function cgroupDirs(mount: string, path: string): string[] {
  const dirs: string[] = [];
  let dir = join(mount, path).replace(/(.)\/+$/, '$1');
  while (dir.startsWith(mount)) {
    if (existsSync(dir)) dirs.push(dir);
    if (dir === mount) break;
    dir = dirname(dir);
  }
  if (!dirs.includes(mount)) dirs.push(mount);
  return dirs;
}

function smallest(values: Array<number | undefined>): number | undefined {
  const set = values.filter((v): v is number => v !== undefined && Number.isFinite(v) && v > 0 && v < UNLIMITED);
  return set.length > 0 ? Math.min(...set) : undefined;
}

function statField(stat: string | undefined, field: string): number {
  const match = new RegExp(`^${field} (\\d+)$`, 'm').exec(stat ?? '');
  return match ? Number(match[1]) : 0;
}

/**
 * Reads the memory limit and CPU quota that apply to this process (the tightest of its
 * cgroup and its ancestors), under cgroup v1 or v2. A lab node's agent reports these as the
 * node's capacity, so `mem_limit` and `cpus` on a node container make nodes of different sizes.
 */
export function readCgroupLimits(source: CgroupSource = { root: '/sys/fs/cgroup', selfCgroup: readText('/proc/self/cgroup') ?? '' }): CgroupLimits {
  const lines = source.selfCgroup
    .split('\n')
    .map((line) => /^(\d+):([^:]*):(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null);
  const v1 = (controller: string): { mounts: string[]; path: string } | undefined => {
    const line = lines.find((m) => m[2].split(',').includes(controller));
    if (!line) return undefined;
    // A hierarchy is mounted under its joined name ("cpu,cpuacct") and usually each name alone.
    const mounts = [line[2], ...line[2].split(',')].map((name) => join(source.root, name)).filter((m) => existsSync(m));
    return { mounts, path: line[3] };
  };

  const memory = v1('memory');
  if (memory && memory.mounts.length > 0) {
    const dirs = cgroupDirs(memory.mounts[0], memory.path);
    const limits: CgroupLimits = {};
    limits.memoryBytes = smallest(dirs.map((d) => Number(readText(join(d, 'memory.limit_in_bytes')))));
    if (limits.memoryBytes !== undefined) {
      const own = dirs[0];
      const usage = Number(readText(join(own, 'memory.usage_in_bytes')) ?? 0);
      limits.memoryWorkingSetBytes = Math.max(0, usage - statField(readText(join(own, 'memory.stat')), 'total_inactive_file'));
    }
    const cpu = v1('cpu');
    if (cpu && cpu.mounts.length > 0) {
      limits.cpuCores = smallest(
        cgroupDirs(cpu.mounts[0], cpu.path).map((d) => {
          const quota = Number(readText(join(d, 'cpu.cfs_quota_us')));
          const period = Number(readText(join(d, 'cpu.cfs_period_us')));
          return quota > 0 && period > 0 ? quota / period : undefined;
        }),
      );
    }
    return limits;
  }

  const unified = lines.find((m) => m[1] === '0' && m[2] === '');
  if (!unified || !existsSync(join(source.root, 'cgroup.controllers'))) return {};
  const dirs = cgroupDirs(source.root, unified[3]);
  const limits: CgroupLimits = {};
  limits.memoryBytes = smallest(dirs.map((d) => Number(readText(join(d, 'memory.max')))));
  if (limits.memoryBytes !== undefined) {
    const own = dirs[0];
    const usage = Number(readText(join(own, 'memory.current')) ?? 0);
    limits.memoryWorkingSetBytes = Math.max(0, usage - statField(readText(join(own, 'memory.stat')), 'inactive_file'));
  }
  limits.cpuCores = smallest(
    dirs.map((d) => {
      const [quota, period] = (readText(join(d, 'cpu.max')) ?? 'max').split(' ').map(Number);
      return quota > 0 && period > 0 ? quota / period : undefined;
    }),
  );
  return limits;
}

/** Kubernetes' form of a CPU count: whole cores as "2", fractions in millicores ("1500m"). */
export function formatCpu(cores: number): string {
  return Number.isInteger(cores) ? String(cores) : `${Math.round(cores * 1000)}m`;
}
