import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const KEEPERS = 4;
const UPDATES = 3;
const ROUNDS = 3;
const CHURN = 8;

/**
 * The pods stream holds what rebuilds need, not history: a pod's status subject keeps its
 * newest report, and a pod that is gone leaves the stream. An agent on the in-memory runtime
 * (no Docker) reports the statuses; the API rebuilt from the bounded stream shows the same pods.
 */
describe('bounded pods stream', () => {
  let cluster: Cluster;
  const node = uniqueName('history');

  before(async () => {
    cluster = await Cluster.start({ HISTORY_RETENTION_SECONDS: '1' });
    await cluster.startAgent(node, { RUNTIME: 'fake' });
  });

  after(async () => {
    await cluster?.stop();
  });

  const pod = (name: string, image = 'jetlet/busybox:1.35'): object => ({
    metadata: { name },
    spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image, command: ['sleep', '600'] }] },
  });
  const list = async (): Promise<Pod[]> => (await cluster.request<{ items: Pod[] }>('GET', '/api/v1/namespaces/default/pods')).body.items;
  const subjects = async (): Promise<{ messages: number; bySubject: Record<string, number> }> => {
    const nc = await connect({ servers: cluster.nats.url });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(STREAMS.pods, { subjects_filter: '>' });
      return { messages: info.state.messages, bySubject: info.state.subjects ?? {} };
    } finally {
      await nc.close();
    }
  };

  /** Messages on pod subjects (aggregates and statuses); the namespaces' facts share the stream. */
  const podMessages = (s: { bySubject: Record<string, number> }): number =>
    Object.entries(s.bySubject)
      .filter(([subject]) => subject.startsWith('jetlet.pods.') || subject.startsWith('jetlet.podstatus.'))
      .reduce((sum, [, n]) => sum + n, 0);

  it('keeps one status per pod, drops the pods that are gone, and rebuilds the same projection', { timeout: 240_000 }, async () => {
    for (let k = 0; k < KEEPERS; k++) await cluster.createPod('default', pod(`keeper-${k}`));
    for (let k = 0; k < KEEPERS; k++) await cluster.waitForRunning('default', `keeper-${k}`);
    // Many status reports: every image change restarts the container and reports again.
    for (let u = 1; u <= UPDATES; u++) {
      for (let k = 0; k < KEEPERS; k++) {
        const patched = await cluster.request(
          'PATCH',
          `/api/v1/namespaces/default/pods/keeper-${k}`,
          { spec: { containers: [{ name: 'main', image: `jetlet/busybox:1.${35 + u}` }] } },
          'application/strategic-merge-patch+json',
        );
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
      }
      for (let k = 0; k < KEEPERS; k++)
        await cluster.waitForPod(
          'default',
          `keeper-${k}`,
          `running image ${u}`,
          (p) => p.status.containerStatuses?.[0]?.image === `jetlet/busybox:1.${35 + u}` && p.status.phase === 'Running',
        );
    }
    // Pods that come and go.
    for (let r = 0; r < ROUNDS; r++) {
      for (let c = 0; c < CHURN; c++) await cluster.createPod('default', pod(`churn-${c}`));
      for (let c = 0; c < CHURN; c++) await cluster.waitForRunning('default', `churn-${c}`);
      for (let c = 0; c < CHURN; c++) assert.equal((await cluster.request('DELETE', `/api/v1/namespaces/default/pods/churn-${c}`)).status, 200);
      for (let c = 0; c < CHURN; c++) await cluster.waitForGone('default', `churn-${c}`);
    }

    // Each keeper: PodCreated and its PodUpdated facts, plus one status. Nothing of the churn.
    const bound = KEEPERS * (1 + UPDATES) + KEEPERS;
    const state = await waitFor(
      'the pods stream to shrink to the live pods',
      async () => {
        const s = await subjects();
        const churn = Object.keys(s.bySubject).filter((subject) => subject.includes('churn'));
        const statuses = Object.entries(s.bySubject).filter(([subject]) => subject.startsWith('jetlet.podstatus.'));
        return churn.length === 0 && statuses.length === KEEPERS && statuses.every(([, n]) => n === 1) && podMessages(s) <= bound ? s : undefined;
      },
      60_000,
      500,
    ).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\n${JSON.stringify(await subjects())}`, { cause: error });
    });
    assert.ok(podMessages(state) <= bound, `${podMessages(state)} pod messages for ${KEEPERS} live pods`);
    // The stream's other live objects, the namespaces, hold one fact each.
    const namespaceCounts = Object.entries(state.bySubject).filter(([subject]) => subject.startsWith('jetlet.namespaces.'));
    assert.ok(namespaceCounts.every(([, n]) => n === 1), JSON.stringify(namespaceCounts));

    const view = (pods: Pod[]): unknown => pods.map((p) => ({ name: p.metadata.name, uid: p.metadata.uid, rv: p.metadata.resourceVersion, status: p.status }));
    const before = await list();
    assert.equal(before.length, KEEPERS);
    await cluster.restartApi();
    assert.deepEqual(view(await list()), view(before), 'the API rebuilt from the bounded stream shows the same pods');

    // A name whose history was purged can be used again.
    await cluster.createPod('default', pod('churn-0'));
    await cluster.waitForRunning('default', 'churn-0');
  });
});
