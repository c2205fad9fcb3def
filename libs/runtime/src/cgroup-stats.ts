import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerStats } from './container-runtime.port.js';

/** One `key value` per line (memory.stat, cpu.stat), as numbers. */
export function parseFlatKeyed(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) values.set(key, Number(value));
  }
  return values;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** cgroup v1 with Docker's cgroupfs driver: `<root>/memory/docker/<id>` and `<root>/cpuacct/docker/<id>`. */
function v1(root: string, id: string, nowMs: number): ContainerStats | undefined {
  const memory = join(root, 'memory', 'docker', id);
  const usage = read(join(memory, 'memory.usage_in_bytes'));
  const stat = read(join(memory, 'memory.stat'));
  const cpu = read(join(root, 'cpuacct', 'docker', id, 'cpuacct.usage'));
  if (usage === undefined || stat === undefined || cpu === undefined) return undefined;
  const usageBytes = Number(usage.trim());
  const inactiveFile = parseFlatKeyed(stat).get('total_inactive_file') ?? 0;
  return {
    timeMs: nowMs,
    cpuUsageNanoseconds: Number(cpu.trim()),
    memoryUsageBytes: usageBytes,
    memoryWorkingSetBytes: Math.max(0, usageBytes - inactiveFile),
  };
}

/** cgroup v2, with the cgroupfs (`<root>/docker/<id>`) or the systemd driver (`<root>/system.slice/docker-<id>.scope`). */
function v2(root: string, id: string, nowMs: number): ContainerStats | undefined {
  for (const dir of [join(root, 'docker', id), join(root, 'system.slice', `docker-${id}.scope`)]) {
    const usage = read(join(dir, 'memory.current'));
    const stat = read(join(dir, 'memory.stat'));
    const cpu = read(join(dir, 'cpu.stat'));
    if (usage === undefined || stat === undefined || cpu === undefined) continue;
    const usageBytes = Number(usage.trim());
    const inactiveFile = parseFlatKeyed(stat).get('inactive_file') ?? 0;
    const usageUsec = parseFlatKeyed(cpu).get('usage_usec') ?? 0;
    return {
      timeMs: nowMs,
      cpuUsageNanoseconds: usageUsec * 1000,
      memoryUsageBytes: usageBytes,
      memoryWorkingSetBytes: Math.max(0, usageBytes - inactiveFile),
    };
  }
  return undefined;
}

/**
 * A container's CPU and memory read from its cgroup files, as cAdvisor reads them: no engine
 * call. Undefined when the files are not where Docker's default cgroup layouts put them (a
 * custom cgroup parent, an engine on another host, a container already gone); the caller
 * then asks the engine.
 */
export function readCgroupStats(id: string, root = '/sys/fs/cgroup', nowMs = Date.now()): ContainerStats | undefined {
  if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
  return v1(root, id, nowMs) ?? v2(root, id, nowMs);
}
