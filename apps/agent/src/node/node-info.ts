import { readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, networkInterfaces, platform, release, totalmem } from 'node:os';
import type { NodeObject } from '#contracts';
import type { RuntimeInfo } from '#runtime';
import { formatCpu, readCgroupLimits, type CgroupLimits } from './cgroup-limits.js';

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/** The first non-internal IPv4 address that is not a container bridge. */
export function detectNodeIP(): string {
  for (const [name, addresses] of Object.entries(networkInterfaces())) {
    if (/^(docker|br-|veth|lo)/.test(name)) continue;
    const v4 = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (v4) return v4.address;
  }
  return '127.0.0.1';
}

function osImage(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return match?.[1] ?? platform();
  } catch {
    return platform();
  }
}

/**
 * `read`, taken at most once per `ttlMs` in this process: a process of hollow nodes shares one
 * machine, so its nodes share one reading instead of each re-reading /proc and the cgroup
 * files at every heartbeat. An agent alone (one beat per HEARTBEAT_SECONDS) reads afresh each time.
 */
export function sharedFor<T>(ttlMs: number, read: () => T): () => T {
  let last: { atMs: number; value: T } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.atMs >= ttlMs || now < last.atMs) last = { atMs: now, value: read() };
    return last.value;
  };
}

const cpuCount = sharedFor(500, () => cpus().length);

/** Host identity that does not change while the process runs (the kubelet reads it once at start too). */
let identity: { osImage: string; machineID: string; systemUUID: string; bootID: string } | undefined;

function hostIdentity(): NonNullable<typeof identity> {
  identity ??= {
    osImage: osImage(),
    machineID: hostFile('/etc/machine-id', '/var/lib/dbus/machine-id'),
    systemUUID: hostFile('/sys/class/dmi/id/product_uuid').toLowerCase(),
    bootID: hostFile('/proc/sys/kernel/random/boot_id'),
  };
  return identity;
}

/** The first line of a host file, or '' when it cannot be read (the kubelet reports what it finds). */
function hostFile(...paths: string[]): string {
  for (const path of paths) {
    try {
      const value = readFileSync(path, 'utf8').trim();
      if (value) return value;
    } catch {
      // try the next one
    }
  }
  return '';
}

/**
 * The size in bytes of the file system holding `dir` (statfs), as the kubelet reads its root
 * dir's for the node's ephemeral-storage capacity; undefined when it cannot be read.
 */
export function fileSystemBytes(dir: string): number | undefined {
  try {
    const stat = statfsSync(dir);
    const bytes = stat.blocks * stat.bsize;
    return Number.isFinite(bytes) && bytes > 0 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Node object this agent registers, from the machine's own readings. Capacity is what the
 * agent's cgroup allows where it sets a limit (a lab node's `mem_limit`, `cpus`), else the machine;
 * ephemeral-storage is the size of the agent's root dir's file system, when it could be read.
 */
export function describeNode(
  name: string,
  nodeIP: string,
  maxPods: number,
  runtime: RuntimeInfo,
  version: string,
  limits: CgroupLimits = readCgroupLimits(),
  ephemeralStorageBytes?: number,
): NodeObject {
  const os = platform();
  const memory = Math.min(totalmem(), limits.memoryBytes ?? Infinity);
  const capacity: Record<string, string> = {
    cpu: formatCpu(Math.min(cpuCount(), limits.cpuCores ?? Infinity)),
    memory: `${Math.floor(memory / 1024)}Ki`,
    ...(ephemeralStorageBytes === undefined ? {} : { 'ephemeral-storage': `${Math.floor(ephemeralStorageBytes / 1024)}Ki` }),
    pods: String(maxPods),
  };
  return {
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': os, 'kubernetes.io/arch': ARCH[arch()] ?? arch() },
    },
    spec: {},
    status: {
      capacity,
      allocatable: { ...capacity },
      addresses: [
        { type: 'InternalIP', address: nodeIP },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        kubeletVersion: `jetlet/${version}`,
        containerRuntimeVersion: `${runtime.name}://${runtime.version}`,
        operatingSystem: os,
        architecture: ARCH[arch()] ?? arch(),
        kernelVersion: release(),
        ...hostIdentity(),
      },
    },
  };
}
