import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodeObject } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';

/** What an agent registers about its node: capacity from the machine, labels, taints and conditions. */
describe('node registration', () => {
  let cluster: Cluster;
  const node = uniqueName('reg-node');
  // A root dir that does not exist yet: the agent makes it at start, as the kubelet does.
  const parent = mkdtempSync(join(tmpdir(), 'jetlet-reg-'));
  const rootDir = join(parent, 'var', 'lib', 'jetlet');

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node, {
      NODE_LABELS: 'disk=ssd,topology.kubernetes.io/zone=lab-1',
      REGISTER_WITH_TAINTS: 'dedicated=batch:NoSchedule',
      MAX_PODS: '42',
      SYSTEM_RESERVED: 'cpu=500m,memory=1Gi,ephemeral-storage=1Gi',
      AGENT_ROOT_DIR: rootDir,
    });
  });

  after(async () => {
    await cluster?.stop();
    rmSync(parent, { recursive: true, force: true });
  });

  it("reports the machine's own CPU count and memory as capacity, and allocatable pods from MAX_PODS", async () => {
    const { status, body } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    assert.equal(status, 200);
    assert.equal(body.status.capacity.cpu, String(cpus().length));
    const memTotalKi = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
    // os.totalmem() and /proc/meminfo agree to the kibibyte on Linux.
    assert.equal(body.status.capacity.memory, `${memTotalKi}Ki`);
    assert.equal(body.status.capacity.pods, '42');
    assert.equal(body.status.allocatable.pods, '42');
    // allocatable = capacity − SYSTEM_RESERVED
    assert.equal(body.status.allocatable.cpu, `${cpus().length * 1000 - 500}m`);
    assert.equal(body.status.allocatable.memory, `${Number(memTotalKi) - 1024 * 1024}Ki`);
  });

  it("makes the agent's root dir and reports the size of its file system as ephemeral-storage, less SYSTEM_RESERVED", async () => {
    const { body } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    assert.ok(existsSync(rootDir), 'the agent made its root dir');
    const stat = statfsSync(rootDir);
    const sizeKi = (stat.blocks * stat.bsize) / 1024;
    assert.equal(body.status.capacity['ephemeral-storage'], `${sizeKi}Ki`);
    assert.equal(body.status.allocatable['ephemeral-storage'], `${Math.max(0, sizeKi - 1024 * 1024)}Ki`);
  });

  it('carries the configured labels next to the well-known ones, and the configured taints', async () => {
    const { body } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    assert.equal(body.metadata.labels['disk'], 'ssd');
    assert.equal(body.metadata.labels['topology.kubernetes.io/zone'], 'lab-1');
    assert.equal(body.metadata.labels['kubernetes.io/hostname'], node);
    assert.deepEqual(body.spec.taints, [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }]);
  });

  it('reports Ready and the pressure conditions from real readings', async () => {
    const { body } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    const conditions = Object.fromEntries((body.status.conditions ?? []).map((c) => [c.type, c.status]));
    assert.deepEqual(conditions, { MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False', Ready: 'True' });
  });

  it('keeps pods off the node while they do not tolerate its NoSchedule taint, and places one that does', async () => {
    const pod = (name: string, extra: Record<string, unknown> = {}): object => ({
      metadata: { name },
      spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }], ...extra },
    });
    await cluster.createPod('default', pod('intolerant'));
    await cluster.createPod('default', pod('tolerant', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }] }));
    await cluster.waitForRunning('default', 'tolerant');
    const intolerant = await cluster.waitForPod('default', 'intolerant', 'unschedulable', (p) =>
      (p.status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable' && c.message?.includes('untolerated taint')),
    );
    const scheduled = intolerant.status.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(scheduled?.message, '0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: batch}.');
    assert.equal(intolerant.spec.nodeName, undefined);
    assert.equal(intolerant.status.phase, 'Pending');
  });

  it('cordons and uncordons the node from jetctl: no new pods while cordoned, the running ones stay', async () => {
    const running = await cluster.waitForRunning('default', 'tolerant');
    const cordoned = await cluster.jetctl('cordon', node);
    assert.equal(cordoned.code, 0, cordoned.stderr);
    assert.match(cordoned.stdout, new RegExp(`node/${node} cordoned`));
    const listed = await cluster.jetctl('get', 'nodes');
    assert.match(listed.stdout, new RegExp(`${node}\\s+Ready,SchedulingDisabled`));
    await cluster.createPod('default', {
      metadata: { name: 'while-cordoned' },
      spec: {
        terminationGracePeriodSeconds: 2,
        tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
        containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }],
      },
    });
    const waiting = await cluster.waitForPod('default', 'while-cordoned', 'unschedulable', (p) =>
      (p.status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.message === '0/1 nodes are available: 1 node(s) were unschedulable.'),
    );
    assert.equal(waiting.spec.nodeName, undefined);
    assert.equal((await cluster.getPod('default', 'tolerant'))?.status.containerStatuses?.[0]?.containerID, running.status.containerStatuses?.[0]?.containerID);
    const uncordoned = await cluster.jetctl('uncordon', node);
    assert.equal(uncordoned.code, 0, uncordoned.stderr);
    await cluster.waitForRunning('default', 'while-cordoned');
    const forbidden = await cluster.request('PATCH', `/api/v1/nodes/${node}`, { metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json');
    assert.equal(forbidden.status, 422);
  });
});
