import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { freemem, totalmem } from 'node:os';
import type { EvictionSignal, PressureCondition, SignalObservation, SignalObservations } from '#domain/eviction';
import { readCgroupLimits, type CgroupLimits } from './cgroup-limits.js';

/** A reading the agent could take, or why it could not. */
export type Reading<T = number> = { ok: true; value: T } | { ok: false; why: string };

/** Each eviction signal as read from the machine: what is available and the capacity. */
export type SignalReadings = Record<EvictionSignal, Reading<SignalObservation>>;

function read(fn: () => SignalObservation, what: string): Reading<SignalObservation> {
  try {
    const value = fn();
    return Number.isFinite(value.available) && Number.isFinite(value.capacity) ? { ok: true, value } : { ok: false, why: `${what} is not a number` };
  } catch (error) {
    return { ok: false, why: `${what}: ${(error as Error).message}` };
  }
}

const meminfo = (field: string, text: string): number | undefined => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return match?.[1] ? Number(match[1]) * 1024 : undefined;
};

/**
 * Reads the kubelet's eviction signals from the machine: memory from the cgroup (a limit) or
 * /proc/meminfo, the agent's and the image store's file systems with statfs, process ids from
 * /proc. A reading that fails says why; nothing is made up.
 */
export function takeReadings(rootDir: string, imagefsDir: string, limits: CgroupLimits = readCgroupLimits()): SignalReadings {
  const fs = (dir: string, what: 'bytes' | 'inodes') => (): SignalObservation => {
    const stat = statfsSync(dir);
    return what === 'bytes' ? { available: stat.bavail * stat.bsize, capacity: stat.blocks * stat.bsize } : { available: stat.ffree, capacity: stat.files };
  };
  return {
    'memory.available': read(() => {
      // As the kubelet's memory.available: a container's limit, not the host's free memory, is what a node in one has.
      if (limits.memoryBytes !== undefined && limits.memoryWorkingSetBytes !== undefined)
        return { available: limits.memoryBytes - limits.memoryWorkingSetBytes, capacity: limits.memoryBytes };
      let text = '';
      try {
        text = readFileSync('/proc/meminfo', 'utf8');
      } catch {
        // No /proc (macOS): the OS's figures are the nearest honest reading.
      }
      return { available: meminfo('MemAvailable', text) ?? freemem(), capacity: meminfo('MemTotal', text) ?? totalmem() };
    }, 'available memory'),
    'nodefs.available': read(fs(rootDir, 'bytes'), `free space of ${rootDir}`),
    'nodefs.inodesFree': read(fs(rootDir, 'inodes'), `free inodes of ${rootDir}`),
    'imagefs.available': read(fs(imagefsDir, 'bytes'), `free space of ${imagefsDir}`),
    'pid.available': read(() => {
      const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
      const used = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
      return { available: max - used, capacity: max };
    }, 'process ids'),
  };
}

/** The readings that could be taken, as the eviction thresholds read them. */
export function observationsOf(readings: SignalReadings): SignalObservations {
  return Object.fromEntries(Object.entries(readings).flatMap(([signal, r]) => (r.ok ? [[signal, r.value]] : [])));
}

type Condition = { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string };

/**
 * The kubelet's pressure conditions: True while the eviction manager holds the pressure, else
 * False; a reading that failed makes its condition Unknown (memory, the agent's file system,
 * process ids), never a guess.
 */
export function pressureConditions(pressure: ReadonlySet<PressureCondition>, readings: SignalReadings): Condition[] {
  const condition = (
    type: PressureCondition,
    reading: Reading<SignalObservation>,
    names: { ok: string; bad: string; okMessage: string; badMessage: string },
  ): Condition => {
    if (!reading.ok) return { type, status: 'Unknown', reason: 'NodeStatusUnknown', message: `cannot be determined: ${reading.why}` };
    return pressure.has(type)
      ? { type, status: 'True', reason: names.bad, message: names.badMessage }
      : { type, status: 'False', reason: names.ok, message: names.okMessage };
  };
  return [
    condition('MemoryPressure', readings['memory.available'], {
      ok: 'KubeletHasSufficientMemory',
      bad: 'KubeletHasInsufficientMemory',
      okMessage: 'kubelet has sufficient memory available',
      badMessage: 'kubelet has insufficient memory available',
    }),
    condition('DiskPressure', readings['nodefs.available'], {
      ok: 'KubeletHasNoDiskPressure',
      bad: 'KubeletHasDiskPressure',
      okMessage: 'kubelet has no disk pressure',
      badMessage: 'kubelet has disk pressure',
    }),
    condition('PIDPressure', readings['pid.available'], {
      ok: 'KubeletHasSufficientPID',
      bad: 'KubeletHasInsufficientPID',
      okMessage: 'kubelet has sufficient PID available',
      badMessage: 'kubelet has insufficient PID available',
    }),
  ];
}

/** The kubelet's own Ready condition: False with "container runtime is down" while the runtime has failed for longer than its grace, else True. */
export function readyCondition(runtimeDown: string | undefined): Condition {
  return runtimeDown === undefined
    ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
    : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: `container runtime is down: ${runtimeDown}` };
}

/** `k=v,k2=v2` (the kubelet's --node-labels). */
export function parseNodeLabels(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text
      .split(',')
      .filter(Boolean)
      .map((pair) => {
        const [key = '', value = ''] = pair.split('=', 2);
        return [key.trim(), value.trim()];
      }),
  );
}

export const NODE_LABELS_FORMAT = /^$|^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*)*$/;
export const TAINTS_FORMAT =
  /^$|^[A-Za-z0-9./_-]+(=[A-Za-z0-9._-]*)?:(NoSchedule|PreferNoSchedule|NoExecute)(,[A-Za-z0-9./_-]+(=[A-Za-z0-9._-]*)?:(NoSchedule|PreferNoSchedule|NoExecute))*$/;

/** `key=value:Effect,key:Effect` (the kubelet's --register-with-taints). */
export function parseTaints(text: string | undefined): Array<{ key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }> {
  if (!text) return [];
  return text
    .split(',')
    .filter(Boolean)
    .map((item) => {
      const colon = item.lastIndexOf(':');
      const [key = '', value] = item.slice(0, colon).split('=', 2);
      const effect = item.slice(colon + 1) as 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
      return { key, ...(value !== undefined && value !== '' ? { value } : {}), effect };
    });
}

export const RESERVED_FORMAT = /^$|^(cpu|memory|ephemeral-storage|pods)=[0-9.]+[a-zA-Z]*(,(cpu|memory|ephemeral-storage|pods)=[0-9.]+[a-zA-Z]*)*$/;

/**
 * allocatable = capacity − reserved (the kubelet's --system-reserved, `cpu=500m,memory=1Gi`),
 * never below zero, in Kubernetes' units: cpu in millicores when reserved, memory and
 * ephemeral-storage in Ki.
 */
export function allocatableFrom(capacity: Record<string, string>, reserved: string, parse: (q: string) => number): Record<string, string> {
  const minus = Object.fromEntries(
    reserved
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
  const allocatable = { ...capacity };
  if (minus.cpu !== undefined && capacity.cpu !== undefined) allocatable.cpu = `${Math.max(0, Math.round((parse(capacity.cpu) - parse(minus.cpu)) * 1000))}m`;
  if (minus.memory !== undefined && capacity.memory !== undefined)
    allocatable.memory = `${Math.max(0, Math.floor((parse(capacity.memory) - parse(minus.memory)) / 1024))}Ki`;
  const storage = capacity['ephemeral-storage'];
  if (minus['ephemeral-storage'] !== undefined && storage !== undefined)
    allocatable['ephemeral-storage'] = `${Math.max(0, Math.floor((parse(storage) - parse(minus['ephemeral-storage'])) / 1024))}Ki`;
  if (minus.pods !== undefined && capacity.pods !== undefined) allocatable.pods = String(Math.max(0, parse(capacity.pods) - parse(minus.pods)));
  return allocatable;
}
