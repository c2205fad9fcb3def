import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { freemem } from 'node:os';
import { readCgroupLimits, type CgroupLimits } from './cgroup-limits.js';

/** A reading the agent could take, or why it could not. */
export type Reading = { ok: true; value: number } | { ok: false; why: string };

export interface NodeReadings {
  /** Bytes of memory available for new work: the cgroup's limit − working set where a limit is set, else MemAvailable (free memory where /proc is missing). */
  memoryAvailable: Reading;
  /** Fraction of the agent's file system that is free, 0–1. */
  diskFreeFraction: Reading;
  /** Fraction of process ids still free, 0–1 (Linux only). */
  pidFreeFraction: Reading;
}

/** The kubelet's default hard eviction thresholds: memory.available<100Mi, nodefs.available<10%; PIDs have none, 10 % here. */
export const THRESHOLDS = { memoryAvailableBytes: 100 * 2 ** 20, diskFreeFraction: 0.1, pidFreeFraction: 0.1 };

function read(fn: () => number, what: string): Reading {
  try {
    const value = fn();
    return Number.isFinite(value) ? { ok: true, value } : { ok: false, why: `${what} is not a number` };
  } catch (error) {
    return { ok: false, why: `${what}: ${(error as Error).message}` };
  }
}

/** Reads memory, disk and PID headroom from the machine: the cgroup and /proc where they exist, the OS otherwise. */
export function takeReadings(rootDir: string, limits: CgroupLimits = readCgroupLimits()): NodeReadings {
  return {
    memoryAvailable: read(() => {
      // As the kubelet's memory.available: a container's limit, not the host's free memory, is what a node in one has.
      if (limits.memoryBytes !== undefined && limits.memoryWorkingSetBytes !== undefined) return limits.memoryBytes - limits.memoryWorkingSetBytes;
      try {
        const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
        if (match?.[1]) return Number(match[1]) * 1024;
      } catch {
        // No /proc (macOS): the OS's free memory is the nearest honest reading.
      }
      return freemem();
    }, 'available memory'),
    diskFreeFraction: read(() => {
      const fs = statfsSync(rootDir);
      return fs.bavail / fs.blocks;
    }, `free space of ${rootDir}`),
    pidFreeFraction: read(() => {
      const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
      const used = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
      return 1 - used / max;
    }, 'process ids'),
  };
}

type Condition = { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string };

/** The kubelet's pressure conditions from readings; a reading that failed makes its condition Unknown, never a guess. */
export function pressureConditions(readings: NodeReadings): Condition[] {
  const condition = (
    type: string,
    reading: Reading,
    pressured: (v: number) => boolean,
    names: { ok: string; bad: string; okMessage: string; badMessage: string },
  ): Condition => {
    if (!reading.ok) return { type, status: 'Unknown', reason: 'NodeStatusUnknown', message: `cannot be determined: ${reading.why}` };
    return pressured(reading.value)
      ? { type, status: 'True', reason: names.bad, message: names.badMessage }
      : { type, status: 'False', reason: names.ok, message: names.okMessage };
  };
  return [
    condition('MemoryPressure', readings.memoryAvailable, (v) => v < THRESHOLDS.memoryAvailableBytes, {
      ok: 'KubeletHasSufficientMemory',
      bad: 'KubeletHasInsufficientMemory',
      okMessage: 'kubelet has sufficient memory available',
      badMessage: 'kubelet has insufficient memory available',
    }),
    condition('DiskPressure', readings.diskFreeFraction, (v) => v < THRESHOLDS.diskFreeFraction, {
      ok: 'KubeletHasNoDiskPressure',
      bad: 'KubeletHasDiskPressure',
      okMessage: 'kubelet has no disk pressure',
      badMessage: 'kubelet has disk pressure',
    }),
    condition('PIDPressure', readings.pidFreeFraction, (v) => v < THRESHOLDS.pidFreeFraction, {
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

export const RESERVED_FORMAT = /^$|^(cpu|memory|pods)=[0-9.]+[a-zA-Z]*(,(cpu|memory|pods)=[0-9.]+[a-zA-Z]*)*$/;

/**
 * allocatable = capacity − reserved (the kubelet's --system-reserved, `cpu=500m,memory=1Gi`),
 * never below zero, in Kubernetes' units: cpu in millicores when reserved, memory in Ki.
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
  if (minus.pods !== undefined && capacity.pods !== undefined) allocatable.pods = String(Math.max(0, parse(capacity.pods) - parse(minus.pods)));
  return allocatable;
}
