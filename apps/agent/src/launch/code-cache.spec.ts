import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadWithCodeCache } from './code-cache.js';

describe('loadWithCodeCache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'program.cjs');
  const caches = (): string[] => readdirSync(dir).filter((name) => name.endsWith('.cache') || name.endsWith('.partial'));
  const write = (source: string, mtime: number): void => {
    writeFileSync(file, source);
    utimesSync(file, mtime, mtime);
  };

  it('runs a CommonJS file with require, module and __filename, and keeps its code once asked', () => {
    write("const { join } = require('node:path');\nmodule.exports = { answer: () => 42, file: __filename, joined: join('a', 'b') };\n", 1_000);
    const first = loadWithCodeCache(file);
    const exported = first.exports as { answer: () => number; file: string; joined: string };
    assert.equal(exported.answer(), 42);
    assert.equal(exported.file, file);
    assert.equal(exported.joined, join('a', 'b'));
    assert.equal(first.cacheUsed, false);
    assert.deepEqual(caches(), []);
    assert.equal(first.saveCache(), true);
    assert.equal(caches().length, 1);

    const second = loadWithCodeCache(file);
    assert.equal(second.cacheUsed, true);
    assert.equal((second.exports as { answer: () => number }).answer(), 42);
    assert.equal(second.saveCache(), false, 'a used cache is not written again');
  });

  it('never runs the code of another build, even of the same length, and drops its cache and leftovers', () => {
    write("module.exports = { answer: () => 42, file: 'same-length-1' };\n", 2_000);
    assert.equal(loadWithCodeCache(file).saveCache(), true);
    const [before] = caches();
    writeFileSync(join(dir, 'program.cjs.1-2.cache.killed-while-writing.partial'), 'half');
    write("module.exports = { answer: () => 43, file: 'same-length-2' };\n", 3_000);
    const rebuilt = loadWithCodeCache(file);
    assert.equal(rebuilt.cacheUsed, false);
    assert.equal((rebuilt.exports as { answer: () => number }).answer(), 43);
    assert.equal(rebuilt.saveCache(), true);
    assert.equal(caches().length, 1);
    assert.notEqual(caches()[0], before);
  });

  it('runs import() no differently from a cache another process kept than on a first start', async () => {
    write("module.exports = () => import('node:path').then(() => 'imported', (error) => error.code);\n", 3_200);
    // A start of the agent: its own process, which loads the file, runs its import() and keeps the cache.
    const start = async (): Promise<{ cacheUsed: boolean; imported: string }> => {
      const script = `
        const { loadWithCodeCache } = await import(${JSON.stringify(new URL('./code-cache.js', import.meta.url).href)});
        const loaded = loadWithCodeCache(${JSON.stringify(file)});
        const imported = await loaded.exports();
        loaded.saveCache();
        process.stdout.write(JSON.stringify({ cacheUsed: loaded.cacheUsed, imported }));`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
      return JSON.parse(stdout) as { cacheUsed: boolean; imported: string };
    };
    const first = await start();
    const next = await start();
    assert.deepEqual([first.cacheUsed, next.cacheUsed], [false, true]);
    assert.equal(next.imported, first.imported);
  });

  it('reads a file that is not ASCII as UTF-8', () => {
    write("module.exports = { unit: 'µs', matches: /^(ns|µs)$/.test('µs') };\n", 3_500);
    assert.deepEqual(loadWithCodeCache(file).exports, { unit: 'µs', matches: true });
  });

  it('keeps lines in stack traces as in the file', () => {
    write("module.exports = () => {\n  throw new Error('where');\n};\n", 4_000);
    const thrower = loadWithCodeCache(file).exports as () => void;
    assert.throws(thrower, (error: Error) => error.stack!.includes(`${file}:2:`));
  });

  it('loads the plain way, keeping nothing, when source maps are on', (t) => {
    write('module.exports = { loaded: true };\n', 4_500);
    process.setSourceMapsEnabled(true);
    t.after(() => process.setSourceMapsEnabled(false));
    const before = caches();
    const loaded = loadWithCodeCache(file);
    assert.deepEqual(loaded.exports, { loaded: true });
    assert.equal(loaded.saveCache(), false);
    assert.deepEqual(caches(), before);
  });

  it('reports nothing written when the directory cannot take the cache', () => {
    write('module.exports = 1;\n', 5_000);
    const loaded = loadWithCodeCache(file);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(loaded.saveCache(), false);
  });
});
