import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS } from '#contracts';
import { Cluster } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { ROOT, waitFor } from '../harness/processes.js';

const fixture = (name: string): string => readFileSync(join(ROOT, 'test/fixtures/docs', name), 'utf8');
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const SECRET_VALUE = 'hunter2-' + randomBytes(6).toString('hex');

interface Obj {
  kind: string;
  metadata: { name: string; resourceVersion?: string; uid: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  type?: string;
}

/** ConfigMaps and Secrets through the API, with the real kubectl, and what the stream holds of them. */
describe('configmaps and secrets', () => {
  let sut: Cluster;
  let kubectl: Kubectl;

  before(async () => {
    sut = await Cluster.start({ SECRET_ENCRYPTION_KEY: `test1:${randomBytes(32).toString('base64')}` });
    kubectl = new Kubectl(sut.apiUrl);
  });

  after(async () => {
    kubectl?.dispose();
    await sut?.stop();
  });

  it('applies unmodified docs manifests and prints them as kubectl does', async () => {
    assert.match(await kubectl.ok(['apply', '-f', '-'], fixture('configmap-game-demo.yaml')), /configmap\/game-demo created/);
    assert.match(await kubectl.ok(['apply', '-f', '-'], fixture('secret-dotfile.yaml')), /secret\/dotfile-secret created/);
    assert.match(await kubectl.ok(['apply', '-f', '-'], fixture('secret-basic-auth.yaml')), /secret\/secret-basic-auth created/);
    const cm = JSON.parse(await kubectl.ok(['get', 'configmap', 'game-demo', '-o', 'json'])) as Obj;
    assert.equal(cm.data?.player_initial_lives, '3');
    assert.match(cm.data?.['game.properties'] ?? '', /enemy.types=aliens,monsters/);
    const table = await kubectl.ok(['get', 'cm']);
    assert.match(table, /^NAME\s+DATA\s+AGE\n/);
    assert.match(table, /game-demo\s+4\s+/);
    const secrets = await kubectl.ok(['get', 'secrets']);
    assert.match(secrets, /^NAME\s+TYPE\s+DATA\s+AGE\n/);
    assert.match(secrets, /secret-basic-auth\s+kubernetes.io\/basic-auth\s+2\s+/);
    assert.match(secrets, /dotfile-secret\s+Opaque\s+1\s+/);
    // stringData is write-only: merged into data as base64.
    const basic = JSON.parse(await kubectl.ok(['get', 'secret', 'secret-basic-auth', '-o', 'json'])) as Obj & { stringData?: unknown };
    assert.equal(basic.data?.password, b64('t0p-Secret'));
    assert.equal(basic.stringData, undefined);
    // Applied again unchanged, nothing changes; changed, the new value shows.
    assert.match(await kubectl.ok(['apply', '-f', '-'], fixture('configmap-game-demo.yaml')), /configmap\/game-demo unchanged/);
    assert.match(
      await kubectl.ok(['apply', '-f', '-'], fixture('configmap-game-demo.yaml').replace('player_initial_lives: "3"', 'player_initial_lives: "4"')),
      /configmap\/game-demo configured/,
    );
    assert.equal(await kubectl.ok(['get', 'cm', 'game-demo', '-o', 'jsonpath={.data.player_initial_lives}']), '4');
  });

  it('creates with kubectl create, selects by label and field, and refuses bad input naming the field', async () => {
    await kubectl.ok(['create', 'secret', 'generic', 'db', `--from-literal=password=${SECRET_VALUE}`]);
    await kubectl.ok(['create', 'configmap', 'app', '--from-literal=mode=fast', '--from-literal=level=3']);
    await kubectl.ok(['label', 'configmap', 'app', 'tier=backend']);
    assert.equal(await kubectl.ok(['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), b64(SECRET_VALUE));
    assert.equal((await kubectl.ok(['get', 'cm', '-l', 'tier=backend', '-o', 'name'])).trim(), 'configmap/app');
    assert.equal((await kubectl.ok(['get', 'secrets', '--field-selector', 'type=kubernetes.io/basic-auth', '-o', 'name'])).trim(), 'secret/secret-basic-auth');
    const badField = await kubectl.run(['get', 'secrets', '--field-selector', 'data=x']);
    assert.notEqual(badField.code, 0);
    assert.match(badField.stderr, /field label not supported: data/);

    const bad = await sut.request<{ code: number; details: { causes: Array<{ field: string }> } }>('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'bad' },
      data: { 'no/slash': 'x', ok: 'y' },
      binaryData: { ok: 'not base64!' },
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.details.causes.map((c) => c.field).sort(), ['binaryData', 'data']);
    const badSecret = await sut.request<{ message: string; details: { causes: Array<{ field: string }> } }>('POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'bad' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { other: b64(SECRET_VALUE) },
    });
    assert.equal(badSecret.status, 422);
    assert.deepEqual(badSecret.body.details.causes.map((c) => c.field), ['data[.dockerconfigjson]']);
    const notBase64 = await sut.request<{ message: string }>('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'bad' }, data: { k: SECRET_VALUE } });
    assert.equal(notBase64.status, 422);
    assert.doesNotMatch(notBase64.body.message, new RegExp(SECRET_VALUE), 'a refused value is not echoed');
    assert.equal((await sut.request('POST', '/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'x' } })).status, 404);
    assert.equal((await sut.request('GET', '/api/v1/namespaces/default/configmaps/bad')).status, 404);
  });

  it('writes nothing on dry run, keeps immutable data, and deletes', async () => {
    const dry = await kubectl.ok(['create', 'configmap', 'dry', '--from-literal=a=b', '--dry-run=server', '-o', 'json']);
    assert.equal((JSON.parse(dry) as Obj).metadata.resourceVersion, undefined);
    assert.equal((await sut.request('GET', '/api/v1/namespaces/default/configmaps/dry')).status, 404);
    const created = await sut.request<Obj>('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true });
    assert.equal(created.status, 201);
    const changed = await sut.request<{ details: { causes: Array<{ field: string; message: string }> } }>(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/frozen',
      { data: { a: '2' } },
      'application/merge-patch+json',
    );
    assert.equal(changed.status, 422);
    assert.deepEqual(changed.body.details.causes, [{ field: 'data', reason: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set' }]);
    const stale = await sut.request('PUT', '/api/v1/namespaces/default/configmaps/app', { metadata: { name: 'app', resourceVersion: '1' }, data: {} });
    assert.equal(stale.status, 409);
    assert.match(await kubectl.ok(['delete', 'configmap', 'frozen']), /configmap "frozen" deleted/);
    assert.equal((await sut.request('GET', '/api/v1/namespaces/default/configmaps/frozen')).status, 404);
    assert.match(await kubectl.ok(['delete', 'secret', 'dotfile-secret', '--dry-run=server']), /deleted \(server dry run\)/);
    assert.equal((await sut.request('GET', '/api/v1/namespaces/default/secrets/dotfile-secret')).status, 200);
    // A namespace takes its ConfigMaps and Secrets with it.
    await sut.ensureNamespace('doomed');
    await kubectl.ok(['-n', 'doomed', 'create', 'secret', 'generic', 's', '--from-literal=a=b']);
    await kubectl.ok(['delete', 'namespace', 'doomed', '--wait=false']);
    await waitFor('namespace doomed to go', async () => (await sut.request('GET', '/api/v1/namespaces/doomed')).status === 404, 30_000);
    assert.equal((await sut.request('GET', '/api/v1/namespaces/doomed/secrets/s')).status, 404);
  });

  it('watches changes from a resourceVersion, with selectors', async () => {
    const list = await sut.request<{ metadata: { resourceVersion: string } }>('GET', '/api/v1/namespaces/default/configmaps');
    const controller = new AbortController();
    const response = await fetch(
      `${sut.apiUrl}/api/v1/namespaces/default/configmaps?watch=true&labelSelector=tier%3Dbackend&resourceVersion=${list.body.metadata.resourceVersion}`,
      { signal: controller.signal },
    );
    let text = '';
    const read = (async () => {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString();
    })().catch(() => undefined);
    await kubectl.ok(['create', 'configmap', 'other', '--from-literal=x=y']);
    await sut.request('PATCH', '/api/v1/namespaces/default/configmaps/app', { data: { mode: 'slow' } }, 'application/merge-patch+json');
    await kubectl.ok(['delete', 'configmap', 'app']);
    await waitFor('the DELETED frame', () => text.includes('"DELETED"'), 20_000);
    controller.abort();
    await read;
    const frames = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Obj });
    assert.deepEqual(
      frames.map((f) => [f.type, f.object.metadata.name, f.object.data?.mode]),
      [
        ['MODIFIED', 'app', 'slow'],
        ['DELETED', 'app', 'slow'],
      ],
    );
  });

  it('seals secret values in the stream, logs none, and rebuilds them after an API restart', async () => {
    const nc = await connect({ servers: sut.nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const raw = await jsm.streams.getMessage(STREAMS.config, { last_by_subj: SUBJECTS.secret('default', 'db') });
      const stored = new TextDecoder().decode(raw!.data);
      assert.match(stored, /"sealed":"v1:test1:/);
      assert.ok(!stored.includes(SECRET_VALUE) && !stored.includes(b64(SECRET_VALUE)), 'the value is not in the stream');
      const basic = await jsm.streams.getMessage(STREAMS.config, { last_by_subj: SUBJECTS.secret('default', 'secret-basic-auth') });
      assert.ok(!new TextDecoder().decode(basic!.data).includes('t0p-Secret'), "kubectl's last-applied copy is sealed too");
    } finally {
      await nc.close();
    }
    await sut.restartApi();
    assert.equal(await kubectl.ok(['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), b64(SECRET_VALUE));
    assert.ok(!sut.logs().includes(SECRET_VALUE) && !sut.logs().includes(b64(SECRET_VALUE)), 'no log line holds the value');
    const metrics = await (await fetch(`${sut.apiUrl}/metrics`)).text();
    assert.ok(!metrics.includes(SECRET_VALUE) && !metrics.includes(b64(SECRET_VALUE)));
  });
});
