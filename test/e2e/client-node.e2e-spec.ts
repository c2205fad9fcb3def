import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, makeInformer, Watch, type V1Pod } from '@kubernetes/client-node';
import { Cluster } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const manifest = (name: string, labels: Record<string, string>): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '60'] }] },
});

const relabel = (labels: Record<string, string>): object => ({ metadata: { labels } });

/**
 * @kubernetes/client-node (1.x, the newest that loads on Node 20) against the API: list,
 * Watch and an informer, with no node (pods stay Pending; an unbound pod is deleted at once).
 */
describe('@kubernetes/client-node', () => {
  let cluster: Cluster;
  let kc: KubeConfig;
  let api: CoreV1Api;

  before(async () => {
    cluster = await Cluster.start();
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'jetlet', server: cluster.apiUrl, skipTLSVerify: true }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'jetlet', cluster: 'jetlet', user: 'anonymous' }],
      currentContext: 'jetlet',
    });
    api = kc.makeApiClient(CoreV1Api);
    await cluster.createPod('default', manifest('cn-a', { app: 'cn', n: '1' }));
    await cluster.createPod('default', manifest('cn-b', { app: 'other' }));
  });

  after(async () => {
    await cluster?.stop();
  });

  it('lists pods with a label selector and reads nodes', async () => {
    const pods = await api.listNamespacedPod({ namespace: 'default', labelSelector: 'app=cn' });
    assert.deepEqual(
      pods.items.map((p) => p.metadata?.name),
      ['cn-a'],
    );
    assert.ok(Number(pods.metadata?.resourceVersion) > 0);
    const all = await api.listPodForAllNamespaces({ fieldSelector: 'metadata.name=cn-b' });
    assert.deepEqual(
      all.items.map((p) => p.metadata?.name),
      ['cn-b'],
    );
    const nodes = await api.listNode();
    assert.deepEqual(nodes.items, []);
  });

  it('receives ADDED, MODIFIED and DELETED through Watch', async () => {
    const seen: string[] = [];
    let ended: unknown = 'running';
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/default/pods',
      { labelSelector: 'app=cn', allowWatchBookmarks: true },
      (phase, pod: V1Pod) => seen.push(`${phase}:${pod.metadata?.name ?? ''}:${pod.metadata?.labels?.n ?? ''}`),
      (error: unknown) => {
        ended = error;
      },
    );
    try {
      await waitFor('the initial ADDED for cn-a', () => seen.includes('ADDED:cn-a:1'), 20_000);
      await cluster.createPod('default', manifest('cn-c', { app: 'cn', n: '1' }));
      await cluster.request('PATCH', '/api/v1/namespaces/default/pods/cn-c', relabel({ n: '2' }), 'application/merge-patch+json');
      await cluster.request('DELETE', '/api/v1/namespaces/default/pods/cn-c');
      await waitFor('DELETED cn-c', () => seen.some((s) => s.startsWith('DELETED:cn-c')), 20_000);
      const mine = seen.filter((s) => s.includes(':cn-c:'));
      assert.equal(mine[0], 'ADDED:cn-c:1');
      assert.ok(mine.includes('MODIFIED:cn-c:2'), mine.join(' '));
      assert.match(mine.at(-1) ?? '', /^DELETED:cn-c:/);
      assert.ok(!seen.some((s) => s.includes(':cn-b:')), 'the selector keeps other pods out');
      assert.equal(ended, 'running');
    } finally {
      controller.abort();
    }
  });

  it('keeps an informer in step: add, update, delete, without crashing the client', async () => {
    const labelSelector = 'app=inf';
    const informer = makeInformer(kc, '/api/v1/namespaces/default/pods', () => api.listNamespacedPod({ namespace: 'default', labelSelector }), labelSelector);
    const events: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (p) => events.push(`add:${p.metadata?.name ?? ''}`));
    informer.on('update', (p) => events.push(`update:${p.metadata?.name ?? ''}:${p.metadata?.labels?.n ?? ''}`));
    informer.on('delete', (p) => events.push(`delete:${p.metadata?.name ?? ''}`));
    informer.on('error', (e) => errors.push(e));
    await cluster.createPod('default', manifest('inf-1', { app: 'inf', n: '1' }));
    await informer.start();
    try {
      await waitFor('the informer to list inf-1', () => events.includes('add:inf-1'), 20_000);
      await cluster.createPod('default', manifest('inf-2', { app: 'inf', n: '1' }));
      await waitFor('add inf-2', () => events.includes('add:inf-2'), 20_000);
      await cluster.request('PATCH', '/api/v1/namespaces/default/pods/inf-2', relabel({ n: '2' }), 'application/merge-patch+json');
      await waitFor('update inf-2', () => events.includes('update:inf-2:2'), 20_000);
      await cluster.request('DELETE', '/api/v1/namespaces/default/pods/inf-1');
      await waitFor('delete inf-1', () => events.includes('delete:inf-1'), 20_000);
      assert.deepEqual(
        informer
          .list('default')
          .map((p) => p.metadata?.name)
          .sort(),
        ['inf-2'],
      );
      // A pod relabelled out of the selector leaves the informer's cache as a delete.
      await cluster.request('PATCH', '/api/v1/namespaces/default/pods/inf-2', relabel({ app: 'gone' }), 'application/merge-patch+json');
      await waitFor('delete inf-2', () => events.includes('delete:inf-2'), 20_000);
      assert.deepEqual(informer.list('default'), []);
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});
