import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PathOutsideRootError } from '#domain';
import { FakeRuntime, LABELS, type RuntimeContainer } from '#runtime';
import { AgentConfig } from '../agent.config.js';
import { TerminationMessages } from './termination-messages.js';

describe('TerminationMessages: paths from message data', () => {
  let outer: string;
  let root: string;
  let sut: TerminationMessages;

  beforeEach(() => {
    outer = mkdtempSync(join(tmpdir(), 'jetlet-messages-'));
    root = join(outer, 'root');
    mkdirSync(join(root, 'pods'), { recursive: true });
    writeFileSync(join(root, 'keep'), 'the agent root must survive');
    sut = new TerminationMessages(Object.assign(new AgentConfig(), { AGENT_ROOT_DIR: root }), new FakeRuntime());
  });

  afterEach(() => rmSync(outer, { recursive: true, force: true }));

  it('never removes the root or anything outside it for a pod uid of ".." or a path', async () => {
    for (const uid of ['..', '.', '', '../..', '../../x']) await sut.removePod(uid, []);
    assert.ok(existsSync(join(root, 'keep')), 'the root is intact');
    assert.ok(existsSync(outer));
  });

  it('refuses to prepare a file outside the pods directory', async () => {
    const pod = { namespace: 'default', name: 'web-0', uid: '..' };
    await assert.rejects(sut.prepare(pod, { name: 'main', image: 'jetlet/busybox:1.35' }, 0), PathOutsideRootError);
    await assert.rejects(sut.prepare({ ...pod, uid: 'ok' }, { name: '..', image: 'jetlet/busybox:1.35' }, 0), PathOutsideRootError);
    assert.deepEqual(readdirSync(root).sort(), ['keep', 'pods']);
    assert.deepEqual(readdirSync(join(root, 'pods')), []);
  });

  it('prepares and removes the files of a pod with a proper uid', async () => {
    const pod = { namespace: 'default', name: 'web-0', uid: '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f' };
    const mount = await sut.prepare(pod, { name: 'main', image: 'jetlet/busybox:1.35' }, 0);
    assert.equal(mount.hostPath, join(root, 'pods', pod.uid, 'containers', 'main', '0.termination-log'));
    await sut.removePod(pod.uid, []);
    assert.deepEqual(readdirSync(join(root, 'pods')), []);
  });

  it('does not take a missing file for an empty message, and reads the file once it is there', async () => {
    const pod = { namespace: 'default', name: 'web-0', uid: '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f' };
    const dead: RuntimeContainer = {
      id: 'c1',
      name: 'web-0_main',
      image: 'jetlet/busybox:1.35',
      imageId: 'sha256:1',
      labels: { [LABELS.podUid]: pod.uid, [LABELS.containerName]: 'main', [LABELS.restartCount]: '0' },
      state: 'exited',
      createdAt: new Date(0).toISOString(),
      exitCode: 0,
      oomKilled: false,
    };
    // A listing taken before the pod's files were removed: nothing is known, nothing is cached.
    assert.equal((await sut.collect(new Map(), [dead])).has('c1'), false);
    const mount = await sut.prepare(pod, { name: 'main', image: 'jetlet/busybox:1.35' }, 0);
    writeFileSync(mount.hostPath, 'prestop\nterm\n');
    assert.equal((await sut.collect(new Map(), [dead])).get('c1'), 'prestop\nterm\n');
  });
});
