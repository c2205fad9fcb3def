import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeNode, fileSystemBytes, sharedFor } from './node-info.js';

describe('sharedFor', () => {
  it('reads once per period however many nodes ask, and afresh once the period has passed', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    let reads = 0;
    const sut = sharedFor(500, () => ++reads);

    const burst = Array.from({ length: 250 }, () => sut());
    t.mock.timers.tick(499);
    const stillShared = sut();
    t.mock.timers.tick(1);
    const fresh = sut();

    assert.deepEqual(new Set(burst), new Set([1]));
    assert.equal(stillShared, 1);
    assert.equal(fresh, 2);
    assert.equal(reads, 2);
  });

  it('reads afresh when the clock goes back', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    let reads = 0;
    const sut = sharedFor(500, () => ++reads);

    sut();
    t.mock.timers.setTime(900_000);

    assert.equal(sut(), 2);
  });
});

describe('ephemeral-storage capacity', () => {
  const runtime = { name: 'docker', version: '1', apiVersion: '1', os: 'linux', kernelVersion: '1' };

  it("is the size of the root dir's file system, in Ki, and absent when it cannot be read", (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'jetlet-fs-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const stat = statfsSync(dir);

    const sut = fileSystemBytes(dir);

    assert.equal(sut, stat.blocks * stat.bsize);
    assert.equal(fileSystemBytes(join(dir, 'missing')), undefined);
    const node = describeNode('n', '192.0.2.1', 110, runtime, '0', {}, sut);
    assert.equal(node.status.capacity['ephemeral-storage'], `${Math.floor((sut ?? 0) / 1024)}Ki`);
    assert.equal(describeNode('n', '192.0.2.1', 110, runtime, '0', {}).status.capacity['ephemeral-storage'], undefined);
  });
});
