import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { formatCpu, readCgroupLimits } from './cgroup-limits.js';

const roots: string[] = [];
after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A cgroup file system in a temporary directory: `files` maps paths under the root to contents. */
function fakeCgroupFs(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const V1_SELF = '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/docker/abc\n';
const UNLIMITED_V1 = '9223372036854771712';

describe('readCgroupLimits', () => {
  it('reads a container’s memory limit, working set and CPU quota under cgroup v1 (host hierarchy mounted)', () => {
    const root = fakeCgroupFs({
      'memory/memory.limit_in_bytes': UNLIMITED_V1,
      'memory/docker/memory.limit_in_bytes': UNLIMITED_V1,
      'memory/docker/abc/memory.limit_in_bytes': String(2 ** 30),
      'memory/docker/abc/memory.usage_in_bytes': String(300 * 2 ** 20),
      'memory/docker/abc/memory.stat': `cache 1\ntotal_inactive_file ${100 * 2 ** 20}\n`,
      'cpu,cpuacct/cpu.cfs_quota_us': '-1',
      'cpu,cpuacct/cpu.cfs_period_us': '100000',
      'cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '150000',
      'cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000',
    });
    const sut = readCgroupLimits({ root, selfCgroup: V1_SELF });
    assert.deepEqual(sut, { memoryBytes: 2 ** 30, memoryWorkingSetBytes: 200 * 2 ** 20, cpuCores: 1.5 });
  });

  it('takes the tightest limit of the cgroup and its ancestors, and finds a hierarchy under a single controller name', () => {
    const root = fakeCgroupFs({
      'memory/docker/memory.limit_in_bytes': String(512 * 2 ** 20),
      'memory/docker/abc/memory.limit_in_bytes': UNLIMITED_V1,
      'memory/docker/abc/memory.usage_in_bytes': '0',
      'cpu/docker/abc/cpu.cfs_quota_us': '-1',
      'cpu/docker/abc/cpu.cfs_period_us': '100000',
    });
    const sut = readCgroupLimits({ root, selfCgroup: V1_SELF });
    assert.equal(sut.memoryBytes, 512 * 2 ** 20);
    assert.equal(sut.cpuCores, undefined);
  });

  it('reads a container’s own cgroup v2 mount (cgroup namespace: its path is /)', () => {
    const root = fakeCgroupFs({
      'cgroup.controllers': 'cpu memory pids',
      'memory.max': String(3 * 2 ** 30),
      'memory.current': String(2 ** 30),
      'memory.stat': `anon 1\ninactive_file ${2 ** 29}\n`,
      'cpu.max': '200000 100000',
    });
    const sut = readCgroupLimits({ root, selfCgroup: '0::/\n' });
    assert.deepEqual(sut, { memoryBytes: 3 * 2 ** 30, memoryWorkingSetBytes: 2 ** 29, cpuCores: 2 });
  });

  it('reads nothing where no limit is set (cgroup v2 "max") or no cgroup file system exists', () => {
    const root = fakeCgroupFs({ 'cgroup.controllers': 'cpu memory', 'user.slice/memory.max': 'max', 'user.slice/cpu.max': 'max 100000', 'memory.max': 'max' });
    assert.deepEqual(readCgroupLimits({ root, selfCgroup: '0::/user.slice\n' }), { memoryBytes: undefined, cpuCores: undefined });
    assert.deepEqual(readCgroupLimits({ root: join(root, 'missing'), selfCgroup: '' }), {});
  });
});

describe('formatCpu', () => {
  it('writes whole cores as a count and fractions in millicores, as Kubernetes does', () => {
    assert.equal(formatCpu(2), '2');
    assert.equal(formatCpu(1.5), '1500m');
    assert.equal(formatCpu(0.25), '250m');
  });
});
