import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

/** Loads `specifier` in a fresh Node.js process and returns the CommonJS modules it loaded. */
function loadedBy(specifier: string): string[] {
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(specifier)});
    process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

describe('#domain', () => {
  it('loads no container engine client (dockerode)', () => {
    const loaded = loadedBy('#domain');
    // The check sees CommonJS dependencies at all: the contracts' class-validator is one.
    assert.ok(
      loaded.some((m) => m.includes('/node_modules/class-validator/')),
      'class-validator is among the loaded modules',
    );
    assert.deepEqual(
      loaded.filter((m) => /\/node_modules\/(dockerode|docker-modem)\//.test(m)),
      [],
    );
  });
});
