import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster } from '../harness/cluster.js';

interface Status {
  kind: string;
  reason: string;
  code: number;
  message: string;
  details?: { kind?: string; causes?: Array<{ field: string; reason: string; message: string }> };
}

interface List<T> {
  kind: string;
  metadata: { resourceVersion: string };
  items: T[];
}

const pod = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '60'] }], ...extra },
});

const names = (list: List<Pod>): string[] => list.items.map((p) => p.metadata.name).sort();

/** Reading the API as Kubernetes clients do: selectors, with no node at all (pods stay Pending). */
describe('the API for readers', () => {
  let sut: Cluster;

  before(async () => {
    sut = await Cluster.start();
    // Namespaces are objects in Kubernetes: make sure "other" exists where the API has them.
    await sut.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await sut.createPod('default', pod('web-1', { app: 'web', tier: 'front' }));
    await sut.createPod('default', pod('web-2', { app: 'web', tier: 'back' }, { restartPolicy: 'Never' }));
    await sut.createPod('default', pod('db-1', { app: 'db' }));
    await sut.createPod('other', pod('web-3', { app: 'web' }));
  });

  after(async () => {
    await sut?.stop();
  });

  it('lists only the pods a label selector chooses, equality- and set-based', async () => {
    const get = async (q: string): Promise<string[]> => names((await sut.request<List<Pod>>('GET', `/api/v1/namespaces/default/pods?${q}`)).body);
    assert.deepEqual(await get('labelSelector=app%3Dweb'), ['web-1', 'web-2']);
    assert.deepEqual(await get('labelSelector=app!%3Dweb'), ['db-1']);
    assert.deepEqual(await get(`labelSelector=${encodeURIComponent('app in (web,db),tier notin (back)')}`), ['db-1', 'web-1']);
    assert.deepEqual(await get('labelSelector=tier'), ['web-1', 'web-2']);
    assert.deepEqual(await get('labelSelector=!tier'), ['db-1']);
    assert.deepEqual(await get('labelSelector=app%3Dnone'), []);
    const all = await sut.request<List<Pod>>('GET', `/api/v1/pods?labelSelector=app%3Dweb`);
    assert.deepEqual(names(all.body), ['web-1', 'web-2', 'web-3']);
  });

  it('lists only the pods a field selector chooses', async () => {
    const get = async (q: string): Promise<string[]> =>
      names((await sut.request<List<Pod>>('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(q)}`)).body);
    assert.deepEqual(await get('metadata.name=web-1'), ['web-1']);
    assert.deepEqual(await get('metadata.namespace=other'), ['web-3']);
    assert.deepEqual(await get('spec.restartPolicy=Never'), ['web-2']);
    assert.deepEqual(await get('status.phase=Pending,metadata.namespace!=other'), ['db-1', 'web-1', 'web-2']);
    assert.deepEqual(await get('spec.nodeName='), ['db-1', 'web-1', 'web-2', 'web-3']);
    assert.deepEqual(await get('spec.schedulerName=default-scheduler,metadata.name=db-1'), ['db-1']);
    assert.deepEqual(await get('status.podIP=10.0.0.1'), []);
  });

  it('answers a bad selector with 400 BadRequest and the parser message, as Kubernetes', async () => {
    const cases: Array<[string, RegExp]> = [
      ['labelSelector=app%20in%20web', /^unable to parse requirement: found 'web' expected: '\('$/],
      ['labelSelector=-x%3Dy', /unable to parse requirement: key: Invalid value: "-x"/],
      ['fieldSelector=spec.foo%3Dbar', /^field label not supported: spec.foo$/],
      ['fieldSelector=metadata.name', /^invalid selector: 'metadata.name'; can't understand 'metadata.name'$/],
    ];
    for (const [query, message] of cases) {
      const { status, body } = await sut.request<Status>('GET', `/api/v1/namespaces/default/pods?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'BadRequest');
      assert.match(body.message, message);
    }
    const nodes = await sut.request<Status>('GET', '/api/v1/nodes?fieldSelector=status.phase%3DReady');
    assert.equal(nodes.status, 400);
    assert.equal(nodes.body.message, 'field label not supported: status.phase');
    const events = await sut.request<Status>('GET', '/api/v1/events?fieldSelector=involvedObject.color%3Dred');
    assert.equal(events.status, 400);
    assert.equal(events.body.message, 'field label not supported: involvedObject.color');
  });

  it('filters events by involvedObject, reason, type and source, and nodes by name', async () => {
    const events = await sut.request<List<unknown>>('GET', '/api/v1/events?fieldSelector=type%3DWarning,source%3Djetlet,involvedObject.kind%3DPod');
    assert.equal(events.status, 200);
    assert.equal(events.body.kind, 'EventList');
    const nodes = await sut.request<List<unknown>>('GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnone,spec.unschedulable%3Dfalse&labelSelector=a%3Db');
    assert.equal(nodes.status, 200);
    assert.deepEqual(nodes.body.items, []);
  });

  it('writes nothing on dryRun=All, yet validates, defaults and answers as if it wrote', async () => {
    const before = (await sut.request<List<Pod>>('GET', '/api/v1/pods')).body;
    const created = await sut.request<Pod>('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('dry', { app: 'dry' }));
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.name, 'dry');
    assert.match(created.body.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.body.spec.restartPolicy, 'Always');
    assert.equal(created.body.metadata.resourceVersion, undefined);
    const invalid = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=All', { metadata: { name: 'dry' }, spec: {} });
    assert.equal(invalid.status, 422);
    const exists = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('web-1', {}));
    assert.equal(exists.status, 409);

    const patched = await sut.request<Pod>(
      'PATCH',
      '/api/v1/namespaces/default/pods/web-1?dryRun=All',
      { metadata: { labels: { extra: 'yes' } } },
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.metadata.labels?.extra, 'yes');
    const current = (await sut.getPod('default', 'web-1')) as Pod;
    const replaced = await sut.request<Pod>('PUT', '/api/v1/namespaces/default/pods/web-1?dryRun=All', {
      ...current,
      metadata: { ...current.metadata, labels: { app: 'changed' } },
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.metadata.labels?.app, 'changed');
    const deleted = await sut.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/web-1?dryRun=All');
    assert.equal(deleted.status, 200);
    assert.ok(deleted.body.metadata.deletionTimestamp);
    // kubectl puts it in the DeleteOptions body.
    const deletedByBody = await sut.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/web-2', {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      dryRun: ['All'],
    });
    assert.equal(deletedByBody.status, 200);

    const afterwards = (await sut.request<List<Pod>>('GET', '/api/v1/pods')).body;
    assert.equal(afterwards.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was appended to the pods stream');
    assert.deepEqual(names(afterwards), names(before));
    const web1 = (await sut.getPod('default', 'web-1')) as Pod;
    assert.equal(web1.metadata.labels?.extra, undefined);
    assert.equal(web1.metadata.labels?.app, 'web');
    assert.equal(web1.metadata.deletionTimestamp, undefined);
    assert.equal((await sut.getPod('default', 'web-2'))?.metadata.deletionTimestamp, undefined);
  });

  it('answers an unknown dryRun value as Kubernetes: 422 on the verb options', async () => {
    const create = await sut.request<Status>('POST', '/api/v1/namespaces/default/pods?dryRun=Yes', pod('nope', {}));
    assert.equal(create.status, 422);
    assert.equal(create.body.message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All"');
    assert.equal(create.body.details?.causes?.[0]?.field, 'dryRun');
    const del = await sut.request<Status>('DELETE', '/api/v1/namespaces/default/pods/web-1?dryRun=maybe');
    assert.equal(del.status, 422);
    assert.match(del.body.message, /^DeleteOptions.meta.k8s.io/);
    assert.equal(await sut.getPod('default', 'nope'), undefined);
    assert.equal((await sut.getPod('default', 'web-1'))?.metadata.deletionTimestamp, undefined);
  });

  it('answers a PUT or PATCH carrying a stale resourceVersion with 409 Conflict', async () => {
    const current = (await sut.getPod('default', 'db-1')) as Pod;
    const stale = String(Number(current.metadata.resourceVersion) - 1);
    const expected =
      'Operation cannot be fulfilled on pods "db-1": the object has been modified; please apply your changes to the latest version and try again';
    const patch = await sut.request<Status>(
      'PATCH',
      '/api/v1/namespaces/default/pods/db-1',
      { metadata: { resourceVersion: stale, labels: { x: 'y' } } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(patch.status, 409);
    assert.equal(patch.body.reason, 'Conflict');
    assert.equal(patch.body.message, expected);
    const put = await sut.request<Status>('PUT', '/api/v1/namespaces/default/pods/db-1', {
      ...current,
      metadata: { ...current.metadata, resourceVersion: stale },
    });
    assert.equal(put.status, 409);
    assert.equal(put.body.message, expected);
    assert.equal((await sut.getPod('default', 'db-1'))?.metadata.labels?.x, undefined);
    const fresh = await sut.request<Pod>(
      'PATCH',
      '/api/v1/namespaces/default/pods/db-1',
      { metadata: { resourceVersion: current.metadata.resourceVersion, labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.metadata.labels?.x, 'y');
  });
});
