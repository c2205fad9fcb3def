import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster } from '../harness/cluster.js';

interface Status {
  kind: string;
  status: string;
  reason: string;
  code: number;
  message: string;
  details?: { causes?: Array<{ field: string; reason: string; message: string }> };
}

const pod = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '60'] }], ...extra },
});

/** The Kubernetes-shaped API: validation, conflicts and Status errors, with no node at all. */
describe('the API', () => {
  let sut: Cluster;

  before(async () => {
    sut = await Cluster.start();
  });

  after(async () => {
    await sut?.stop();
  });

  it('creates a pod with defaults, a uid and a resourceVersion, and it stays Pending without nodes', async () => {
    const { status, body } = await sut.request<Pod>('POST', '/api/v1/namespaces/default/pods', pod('lonely'));
    assert.equal(status, 201);
    assert.match(body.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(Number(body.metadata.resourceVersion) > 0);
    assert.equal(body.spec.restartPolicy, 'Always');
    assert.equal(body.spec.terminationGracePeriodSeconds, 30);
    assert.equal(body.spec.containers[0]?.imagePullPolicy, 'IfNotPresent');
    assert.equal(body.status.phase, 'Pending');
    assert.equal(body.status.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'False');
  });

  it('answers 409 AlreadyExists for a second pod of the same name', async () => {
    await sut.request('POST', '/api/v1/namespaces/default/pods', pod('twice'));
    const { status, body } = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', pod('twice'));
    assert.equal(status, 409);
    assert.equal(body.kind, 'Status');
    assert.equal(body.reason, 'AlreadyExists');
  });

  it('lets exactly one of many concurrent creates of one name win', async () => {
    await sut.ensureNamespace('race');
    const results = await Promise.all(Array.from({ length: 8 }, () => sut.request('POST', '/api/v1/namespaces/race/pods', pod('contested'))));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('answers 422 naming every invalid or unsupported field, and writes nothing', async () => {
    const bad = {
      metadata: { name: 'Bad_Name' },
      spec: {
        restartPolicy: 'Sometimes',
        hostNetwork: true,
        containers: [
          { name: 'a', image: '' },
          { name: 'b', image: 'x', ports: [{ containerPort: 70000 }], resources: { limits: { memory: '12xyz' } } },
        ],
      },
    };
    const { status, body } = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', bad);
    assert.equal(status, 422);
    assert.equal(body.reason, 'Invalid');
    const fields = (body.details?.causes ?? []).map((c) => `${c.field}:${c.reason}`).sort();
    assert.deepEqual(fields, [
      'metadata.name:FieldValueInvalid',
      'spec.containers[0].image:FieldValueRequired',
      'spec.containers[1].ports[0].containerPort:FieldValueInvalid',
      'spec.containers[1].resources.limits:FieldValueInvalid',
      'spec.hostNetwork:FieldValueNotSupported',
      'spec.restartPolicy:FieldValueNotSupported',
    ]);
    const list = await sut.request<{ items: Pod[] }>('GET', '/api/v1/pods');
    assert.ok(!list.body.items.some((p) => p.metadata.name === 'Bad_Name'));
  });

  it('answers 422 for a missing container list and duplicate container names', async () => {
    const missing = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'empty' }, spec: {} });
    assert.equal(missing.status, 422);
    assert.deepEqual(
      missing.body.details?.causes?.map((c) => c.field),
      ['spec.containers'],
    );
    const dup = pod('dup');
    (dup.spec as { containers: unknown[] }).containers.push({ name: 'main', image: 'jetlet/busybox:1.35' });
    const duplicate = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', dup);
    assert.equal(duplicate.status, 422);
    assert.deepEqual(
      duplicate.body.details?.causes?.map((c) => `${c.field}:${c.reason}`),
      ['spec.containers[1].name:FieldValueDuplicate'],
    );
  });

  it('answers 400 for malformed JSON and for a namespace that contradicts the URL', async () => {
    const malformed = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', '{"metadata":');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.kind, 'Status');
    const other = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods', {
      ...pod('elsewhere'),
      metadata: { name: 'elsewhere', namespace: 'other' },
    });
    assert.equal(other.status, 400);
  });

  it('answers 404 NotFound for a missing pod and node', async () => {
    for (const path of ['/api/v1/namespaces/default/pods/nope', '/api/v1/nodes/nope']) {
      const { status, body } = await sut.request<Status>('GET', path);
      assert.equal(status, 404);
      assert.equal(body.reason, 'NotFound');
    }
    const deleted = await sut.request<Status>('DELETE', '/api/v1/namespaces/default/pods/nope');
    assert.equal(deleted.status, 404);
  });

  it('removes an unscheduled pod at once on DELETE, and the name can be used again', async () => {
    await sut.request('POST', '/api/v1/namespaces/default/pods', pod('short-lived'));
    const deleted = await sut.request('DELETE', '/api/v1/namespaces/default/pods/short-lived');
    assert.equal(deleted.status, 200);
    await sut.waitForGone('default', 'short-lived', 5000);
    const again = await sut.request<Pod>('POST', '/api/v1/namespaces/default/pods', pod('short-lived'));
    assert.equal(again.status, 201);
  });

  it('rebuilds the same pods from the log after a restart', async () => {
    const before = await sut.request<{ items: Pod[] }>('GET', '/api/v1/pods');
    await sut.restartApi();
    const after = await sut.request<{ items: Pod[] }>('GET', '/api/v1/pods');
    assert.deepEqual(after.body, before.body);
  });
});
