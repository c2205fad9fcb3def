import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from '../harness/processes.js';

/** `npm run bench` runs every benchmark through scripts/run-benches.sh. */
describe('scripts/run-benches.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-benches-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const bench = (name: string, body: string): string => {
    const file = join(dir, `${name}.bench.js`);
    writeFileSync(file, body);
    return file;
  };

  it('runs every benchmark after one fails, names the failure, and exits non-zero', () => {
    const ran = join(dir, 'ran');
    writeFileSync(ran, '');
    const files = [
      bench('first', `require('fs').appendFileSync(${JSON.stringify(ran)}, 'first\\n'); throw new Error('timed out');`),
      bench('second', `require('fs').appendFileSync(${JSON.stringify(ran)}, 'second\\n');`),
    ];
    const sut = spawnSync('bash', [join(ROOT, 'scripts/run-benches.sh'), ...files], { encoding: 'utf8' });
    assert.equal(readFileSync(ran, 'utf8'), 'first\nsecond\n', 'the second benchmark ran after the first failed');
    assert.match(sut.stderr, /timed out/, 'the failure is printed');
    assert.match(sut.stderr, /1 of 2 benchmark\(s\) failed:\n {2}first \(exit 1\)/);
    assert.equal(sut.status, 1);
  });

  it('exits zero when every benchmark passed', () => {
    const sut = spawnSync('bash', [join(ROOT, 'scripts/run-benches.sh'), bench('fine', '')], { encoding: 'utf8' });
    assert.equal(sut.status, 0, sut.stderr);
    assert.match(sut.stdout, /all 1 benchmark\(s\) ran/);
  });
});
