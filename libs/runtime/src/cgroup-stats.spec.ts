import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parseFlatKeyed, readCgroupStats } from './cgroup-stats.js';

const ID = 'a'.repeat(64);
const NOW = 1_700_000_000_000;

function write(root: string, path: string, text: string): void {
  const file = join(root, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

describe('readCgroupStats', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'jetlet-cgroup-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads cgroup v1 (cgroupfs driver): usage, working set without inactive file cache, CPU nanoseconds', () => {
    write(root, `memory/docker/${ID}/memory.usage_in_bytes`, '10485760\n');
    write(root, `memory/docker/${ID}/memory.stat`, 'cache 4194304\ninactive_file 1\ntotal_inactive_file 2097152\n');
    write(root, `cpuacct/docker/${ID}/cpuacct.usage`, '123456789\n');
    assert.deepEqual(readCgroupStats(ID, root, NOW), {
      timeMs: NOW,
      cpuUsageNanoseconds: 123456789,
      memoryUsageBytes: 10485760,
      memoryWorkingSetBytes: 8388608,
    });
  });

  it('reads cgroup v2 under the systemd driver’s scope, CPU from usage_usec', () => {
    const dir = `system.slice/docker-${ID}.scope`;
    write(root, `${dir}/memory.current`, '5000\n');
    write(root, `${dir}/memory.stat`, 'anon 3000\ninactive_file 1000\n');
    write(root, `${dir}/cpu.stat`, 'usage_usec 42\nuser_usec 40\nsystem_usec 2\n');
    assert.deepEqual(readCgroupStats(ID, root, NOW), { timeMs: NOW, cpuUsageNanoseconds: 42_000, memoryUsageBytes: 5000, memoryWorkingSetBytes: 4000 });
  });

  it('says nothing when the files are not there, or for an id that is not a full container id', () => {
    assert.equal(readCgroupStats(ID, root, NOW), undefined);
    write(root, `memory/docker/${ID}/memory.usage_in_bytes`, '1\n');
    assert.equal(readCgroupStats(ID, root, NOW), undefined, 'a partial set of files');
    assert.equal(readCgroupStats('../../etc', root, NOW), undefined);
  });

  it('parses flat keyed files, skipping what is not a number', () => {
    assert.deepEqual(
      [...parseFlatKeyed('a 1\nb x\n\n c  3 \n')],
      [
        ['a', 1],
        ['c', 3],
      ],
    );
  });
});
