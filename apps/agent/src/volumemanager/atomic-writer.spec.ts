import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AtomicWriter, DATA_DIR, UnsafeVolumePathError } from './atomic-writer.js';

const payload = (entries: Record<string, string>, mode = 0o644): Map<string, { data: Buffer; mode: number }> =>
  new Map(Object.entries(entries).map(([k, v]) => [k, { data: Buffer.from(v), mode }]));

describe('AtomicWriter', () => {
  let dir: string;
  let sut: AtomicWriter;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'jetlet-atomic-'));
    sut = new AtomicWriter(join(dir, 'vol'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const vol = (...p: string[]): string => join(dir, 'vol', ...p);

  it('lays files out as the kubelet does: a timestamped directory, ..data and links through it', async () => {
    assert.equal(await sut.write(payload({ mode: 'fast', 'nested/deep/key': 'v' }, 0o600)), true);
    const ts = readlinkSync(vol(DATA_DIR));
    assert.match(ts, /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.[0-9a-f]+$/);
    assert.equal(readlinkSync(vol('mode')), '..data/mode');
    assert.equal(readlinkSync(vol('nested')), '..data/nested');
    assert.equal(readFileSync(vol('nested', 'deep', 'key'), 'utf8'), 'v');
    assert.equal(statSync(vol('mode')).mode & 0o777, 0o600);
  });

  it('swaps the whole set on an update, drops names that went and the old directory', async () => {
    await sut.write(payload({ a: '1', b: '2' }));
    const first = readlinkSync(vol(DATA_DIR));
    assert.equal(await sut.write(payload({ a: '1b', c: '3' })), true);
    const second = readlinkSync(vol(DATA_DIR));
    assert.notEqual(second, first);
    assert.equal(readFileSync(vol('a'), 'utf8'), '1b');
    assert.equal(readFileSync(vol('c'), 'utf8'), '3');
    assert.throws(() => lstatSync(vol('b')));
    assert.deepEqual(readdirSync(vol()).sort(), [second, DATA_DIR, 'a', 'c'].sort());
  });

  it('writes nothing when the content and modes are the same', async () => {
    await sut.write(payload({ a: '1' }));
    const first = readlinkSync(vol(DATA_DIR));
    assert.equal(await sut.write(payload({ a: '1' })), false);
    assert.equal(readlinkSync(vol(DATA_DIR)), first);
    assert.equal(await sut.write(payload({ a: '1' }, 0o400)), true);
  });

  it('refuses paths that would leave the volume or clash with its own names', async () => {
    for (const bad of ['../escape', 'a/../../escape', '..data', '/abs/../..']) {
      await assert.rejects(sut.write(payload({ [bad]: 'x' })), UnsafeVolumePathError, bad);
    }
    assert.deepEqual(readdirSync(dir), [], 'nothing written');
  });

  it('leaves a file the user made in the volume directory alone', async () => {
    await sut.write(payload({ a: '1' }));
    symlinkSync('/etc', vol('mine'));
    await sut.write(payload({ b: '2' }));
    assert.equal(readlinkSync(vol('mine')), '/etc');
  });
});
