import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import type { KubeEvent } from '#domain';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { freePort, waitFor } from '../harness/processes.js';

const manifest = (name: string, command: string[]): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: { tier: static }
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: jetlet/busybox:1.35
      command: ${JSON.stringify(command)}
`;

/** Static pods from a manifest directory and a manifest URL, shown as read-only mirror pods. */
describe('static pods', () => {
  let cluster: Cluster;
  let dir: string;
  let server: Server;
  let served = manifest('from-url', ['sleep', '600']);
  const node = uniqueName('static-node');
  const mirror = (name: string): string => `${name}-${node}`;
  const running = (p: Pod): boolean => p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((s) => s.state.running !== undefined);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jetlet-static-'));
    const port = await freePort();
    server = createServer((_req, res) => res.end(served));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    cluster = await Cluster.start();
    await cluster.startAgent(node, {
      STATIC_POD_PATH: dir,
      FILE_CHECK_FREQUENCY_SECONDS: '2',
      MANIFEST_URL: `http://127.0.0.1:${port}/pod.yaml`,
      HTTP_CHECK_FREQUENCY_SECONDS: '2',
    });
  });

  after(async () => {
    await cluster?.stop();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a pod from a new file, shown as a mirror pod with the config annotations', async () => {
    writeFileSync(join(dir, 'web.yaml'), manifest('web', ['sleep', '600']));
    const pod = await cluster.waitForPod('default', mirror('web'), 'Running', running, 60_000);
    assert.equal(pod.spec.nodeName, node);
    assert.equal(pod.metadata.labels?.tier, 'static');
    const annotations = pod.metadata.annotations ?? {};
    assert.equal(annotations['kubernetes.io/config.source'], 'file');
    assert.match(annotations['kubernetes.io/config.hash'] ?? '', /^[0-9a-f]{32}$/);
    assert.equal(annotations['kubernetes.io/config.mirror'], annotations['kubernetes.io/config.hash']);
    assert.equal((await cluster.podContainers(node, pod.metadata.uid ?? '')).length, 2);
  });

  it('runs the pod served at the manifest URL', async () => {
    const pod = await cluster.waitForPod('default', mirror('from-url'), 'Running', running, 60_000);
    assert.equal(pod.metadata.annotations?.['kubernetes.io/config.source'], 'http');
    served = manifest('from-url', ['sleep', '700']);
    await cluster.waitForPod('default', mirror('from-url'), 'replaced after the URL changed', (p) => p.metadata.uid !== pod.metadata.uid && running(p), 60_000);
  });

  it('keeps the pod running when its mirror is deleted, and the mirror comes back', async () => {
    const before = await cluster.waitForPod('default', mirror('web'), 'Running', running);
    const deleted = await cluster.request<Pod>('DELETE', `/api/v1/namespaces/default/pods/${mirror('web')}`);
    assert.equal(deleted.status, 200);
    const deletedAt = Number(deleted.body.metadata.resourceVersion);
    assert.ok(deletedAt > Number(before.metadata.resourceVersion), 'the deletion was written');
    // Back means announced again by the agent, after the deletion.
    const back = await cluster.waitForPod('default', mirror('web'), 'back', (p) => Number(p.metadata.resourceVersion) > deletedAt && running(p), 30_000);
    assert.equal(back.metadata.uid, before.metadata.uid);
    assert.equal(back.status.containerStatuses?.[0]?.containerID, before.status.containerStatuses?.[0]?.containerID, 'the same container runs on');
    const patched = await cluster.request(
      'PATCH',
      `/api/v1/namespaces/default/pods/${mirror('web')}`,
      { metadata: { labels: { x: 'y' } } },
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 403);
  });

  it('replaces the pod when its file changes', async () => {
    const before = await cluster.waitForPod('default', mirror('web'), 'Running', running);
    writeFileSync(join(dir, 'web.yaml'), manifest('web', ['sleep', '900']));
    const after = await cluster.waitForPod('default', mirror('web'), 'replaced', (p) => p.metadata.uid !== before.metadata.uid && running(p), 60_000);
    assert.deepEqual(after.spec.containers[0]?.command, ['sleep', '900']);
    await waitFor("the old pod's containers to go", async () => (await cluster.podContainers(node, before.metadata.uid ?? '')).length === 0, 30_000);
  });

  it('reports a broken file with its name and bad field, skips it, and keeps working', async () => {
    writeFileSync(join(dir, 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers: []\n');
    const event = await waitFor(
      'a FailedStaticPod event',
      async () => {
        const { body } = await cluster.request<{ items: KubeEvent[] }>('GET', '/api/v1/events?fieldSelector=reason=FailedStaticPod');
        return body.items.find((e) => e.message.includes('broken.yaml'));
      },
      30_000,
    );
    assert.equal(event.involvedObject.kind, 'Node');
    assert.equal(event.involvedObject.name, node);
    assert.match(event.message, /spec\.containers/);
    assert.match(cluster.agentLog(node, 200), /invalid static pod manifest .*broken\.yaml/);
    writeFileSync(join(dir, 'second.yaml'), manifest('second', ['sleep', '600']));
    await cluster.waitForPod('default', mirror('second'), 'Running', running, 60_000);
    assert.equal(await cluster.getPod('default', mirror('broken')), undefined);
  });

  it('stops the pod when its file is removed, and its mirror leaves the API', async () => {
    const pod = await cluster.waitForPod('default', mirror('second'), 'Running', running);
    unlinkSync(join(dir, 'second.yaml'));
    await cluster.waitForGone('default', mirror('second'), 60_000);
    await waitFor('its containers removed', async () => (await cluster.podContainers(node, pod.metadata.uid ?? '')).length === 0);
  });
});
