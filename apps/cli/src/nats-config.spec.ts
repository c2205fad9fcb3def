import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addHollowCredentials, addNodeCredentials, AUTH_FILE, writeNatsConfig } from './nats-config.js';

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'jetlet-nats-config-'));
}

describe('jetctl nats-config', () => {
  it('writes one seed per identity, readable only by its owner, and the server file with their public keys', () => {
    const dir = scratch();
    try {
      const written = writeNatsConfig(join(dir, 'creds'), ['node-1', 'a.b']);
      assert.deepEqual(written.map((c) => c.identity).sort(), ['admin', 'alerter', 'api', 'jetctl', 'node:a.b', 'node:node-1', 'scheduler']);
      const auth = readFileSync(join(dir, 'creds', AUTH_FILE), 'utf8');
      for (const c of written) {
        assert.equal(statSync(c.seedFile).mode & 0o777, 0o600, c.seedFile);
        assert.match(readFileSync(c.seedFile, 'utf8'), /^SU[A-Z2-7]+\n$/);
        assert.ok(auth.includes(`nkey: "${c.nkey}"`), c.identity);
      }
      assert.ok(auth.includes('"jetlet.nodes.a_b.heartbeat"'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps existing seeds when run again, and adds a node to the server file', () => {
    const dir = scratch();
    try {
      const first = writeNatsConfig(dir, ['node-1']);
      const again = writeNatsConfig(dir, ['node-1']);
      assert.deepEqual(again, first);
      const added = addNodeCredentials(dir, 'node-2');
      const auth = readFileSync(join(dir, AUTH_FILE), 'utf8');
      assert.ok(auth.includes(`nkey: "${added.nkey}"`));
      assert.ok(auth.includes('"jetlet.nodes.node-2.heartbeat"'));
      for (const c of first) assert.ok(auth.includes(`nkey: "${c.nkey}"`), c.identity);
      assert.throws(() => addNodeCredentials(join(dir, 'missing'), 'node-3'), /run jetctl nats-config first/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adds a hollow process as one identity over its nodes, kept when the file is written again', () => {
    const dir = scratch();
    try {
      writeNatsConfig(dir, []);
      const added = addHollowCredentials(dir, 'h.x', 0, 2);
      assert.equal(added.identity, 'hollow:h.x-0..1');
      assert.match(added.seedFile, /hollow-h_x-0-2\.nk$/);
      const again = writeNatsConfig(dir, ['node-1']);
      assert.ok(again.some((c) => c.identity === 'hollow:h.x-0..1' && c.nkey === added.nkey));
      const auth = readFileSync(join(dir, AUTH_FILE), 'utf8');
      assert.ok(auth.includes('"jetlet.nodes.h_x-0.heartbeat"') && auth.includes('"jetlet.nodes.h_x-1.heartbeat"'));
      assert.ok(!auth.includes('"jetlet.nodes.h_x-2.heartbeat"'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
