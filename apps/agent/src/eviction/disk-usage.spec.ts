import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { diskUsage } from './disk-usage.js';

describe('diskUsage', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'jetlet-du-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the blocks of a tree once per file, hard links once, without following symlinks', async () => {
    const empty = await diskUsage(dir);
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a'), Buffer.alloc(1024 * 1024, 1));
    const one = await diskUsage(dir);
    assert.ok(one - empty >= 1024 * 1024, `a 1 MiB file adds at least 1 MiB: ${one - empty}`);
    linkSync(join(dir, 'sub', 'a'), join(dir, 'b'));
    symlinkSync('/usr', join(dir, 'elsewhere'));
    const linked = await diskUsage(dir);
    assert.ok(linked - one < 64 * 1024, `a hard link and a symlink add no data: ${linked - one}`);
  });

  it('counts nothing for a tree that is not there', async () => {
    assert.equal(await diskUsage(join(dir, 'gone')), 0);
  });
});
