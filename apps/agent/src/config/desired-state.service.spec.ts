import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import type { Bus, Delivery, JetStreamServer } from '#bus';
import { ContractValidationError, parseEnvelope, SUBJECTS, type AnyEnvelope, type PodManifest } from '#contracts';
import type { DesiredPod } from '#domain';
import { AgentConfig } from '../agent.config.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { PodStartTracker } from '../status/pod-start-tracker.js';
import { DesiredStateService } from './desired-state.service.js';

const NODE = 'node-1';

function envelope(type: string, data: unknown, correlationId: string): AnyEnvelope {
  return parseEnvelope({ id: randomUUID(), type, version: 1, time: new Date(0).toISOString(), source: { component: 'scheduler' }, correlationId, data });
}

function manifest(uid: string, name: string, namespace = 'default', privileged = false): PodManifest {
  return {
    metadata: { name, namespace, uid, generation: 1 },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', ...(privileged ? { securityContext: { privileged: true } } : {}) }],
    },
  };
}

/** The bus as the service uses it: the namespace's last record, and the events it publishes. */
class FakeBus {
  readonly published: { subject: string; type: string; data: Record<string, unknown> }[] = [];
  readonly namespaceLabels = new Map<string, Record<string, string>>();
  readonly reads: string[] = [];

  lastMessage(_stream: string, subject: string): Promise<{ envelope: AnyEnvelope; seq: number } | undefined> {
    const name = subject.slice(subject.lastIndexOf('.') + 1);
    this.reads.push(name);
    const labels = this.namespaceLabels.get(name);
    if (!labels) return Promise.resolve(undefined);
    return Promise.resolve({
      envelope: envelope('NamespaceCreated', { name, uid: randomUUID(), creationTimestamp: new Date(0).toISOString(), labels }, name),
      seq: 1,
    });
  }

  publishBuffered(subject: string, type: string, data: Record<string, unknown>): void {
    this.published.push({ subject, type, data });
  }
}

describe('DesiredStateService', () => {
  let bus: FakeBus;
  let sut: DesiredStateService;
  let changes: number;
  let seq: number;

  const deliver = async (e: AnyEnvelope, uid: string, at = ++seq, pending = 0): Promise<void> => {
    const delivery: Delivery = { subject: SUBJECTS.assignment(NODE, uid), seq: at, pending };
    await sut.receive(e, delivery);
  };
  const assigned = (m: PodManifest): AnyEnvelope => envelope('PodAssigned', { pod: m }, m.metadata.uid ?? '');
  const unassigned = (uid: string, name: string): AnyEnvelope => envelope('PodUnassigned', { uid, namespace: 'default', name, gracePeriodSeconds: 7 }, uid);

  beforeEach(() => {
    bus = new FakeBus();
    seq = 0;
    changes = 0;
    const config = Object.assign(new AgentConfig(), { NODE_NAME: NODE });
    const transport = {} as JetStreamServer;
    sut = new DesiredStateService(
      config,
      transport,
      bus as unknown as Bus,
      new PodStartTracker(() => undefined),
      new EventRecorder(config, bus as unknown as Bus),
    );
    sut.onChange(() => changes++);
  });

  it('runs an assigned pod, turns it terminating with the tombstone’s grace, and forgets it once removed', async () => {
    const uid = randomUUID();
    await deliver(assigned(manifest(uid, 'web')), uid);
    assert.deepEqual(
      sut.list().map((p) => [p.name, p.terminating]),
      [['web', undefined]],
    );
    await deliver(unassigned(uid, 'web'), uid);
    assert.deepEqual(sut.list()[0]?.terminating, { graceSeconds: 7 });
    assert.equal(sut.list()[0]?.manifest.spec.containers[0]?.name, 'main', 'the tombstoned pod keeps its spec, to stop its containers');
    assert.equal(sut.runningCount(), 0);
    assert.equal(changes, 2);
    sut.forget(uid);
    assert.deepEqual(sut.list(), []);
  });

  it('reads each namespace once for assignments delivered back to back, and afresh for one on its own', async () => {
    const run = [randomUUID(), randomUUID(), randomUUID()];
    // A rebuild: two after the first, one after the second, none after the last.
    await deliver(assigned(manifest(run[0], 'a')), run[0], ++seq, 2);
    await deliver(assigned(manifest(run[1], 'b', 'team')), run[1], ++seq, 1);
    await deliver(assigned(manifest(run[2], 'c')), run[2], ++seq, 0);
    assert.deepEqual(bus.reads, ['default', 'team']);
    // The namespace turns privileged; the next assignment, on its own, sees it.
    bus.namespaceLabels.set('default', { 'pod-security.kubernetes.io/enforce': 'privileged' });
    const alone = randomUUID();
    await deliver(assigned(manifest(alone, 'root', 'default', true)), alone);
    assert.deepEqual(bus.reads, ['default', 'team', 'default']);
    assert.deepEqual(
      sut
        .list()
        .map((p) => p.name)
        .sort(),
      ['a', 'b', 'c', 'root'],
    );
  });

  it('never lets a redelivered older assignment bring back a tombstoned pod', async () => {
    const uid = randomUUID();
    await deliver(assigned(manifest(uid, 'web')), uid, 10);
    await deliver(unassigned(uid, 'web'), uid, 11);
    await deliver(assigned(manifest(uid, 'web')), uid, 10);
    assert.deepEqual(sut.list()[0]?.terminating, { graceSeconds: 7 });
    assert.equal(changes, 2, 'the stale message changed nothing');
  });

  it('refuses an assignment for another node or with a forged uid, naming the field, and runs nothing', async () => {
    const uid = randomUUID();
    const elsewhere = manifest(uid, 'web');
    elsewhere.spec.nodeName = 'node-2';
    await assert.rejects(deliver(assigned(elsewhere), uid), (error: unknown) => {
      assert.ok(error instanceof ContractValidationError);
      assert.ok(error.causes.some((c) => c.field === 'data.pod.spec.nodeName'));
      return true;
    });
    const other = randomUUID();
    await assert.rejects(deliver(assigned(manifest(uid, 'web')), other), ContractValidationError, 'the subject names another pod');
    assert.deepEqual(sut.list(), []);
    assert.equal(changes, 0);
  });

  it('refuses a privileged pod under the default baseline level with a FailedPodSecurity event, and runs it in a privileged namespace', async () => {
    const refused = randomUUID();
    await deliver(assigned(manifest(refused, 'root', 'default', true)), refused);
    assert.deepEqual(sut.list(), []);
    const event = bus.published.find((p) => p.type === 'PodEvent');
    assert.equal(event?.data['reason'], 'FailedPodSecurity');
    assert.match(String(event?.data['message']), /^pods "root" is forbidden: violates PodSecurity "baseline:latest": privileged/);

    bus.namespaceLabels.set('ops', { 'pod-security.kubernetes.io/enforce': 'privileged' });
    const admitted = randomUUID();
    await deliver(assigned(manifest(admitted, 'root', 'ops', true)), admitted);
    assert.deepEqual(
      sut.list().map((p) => p.uid),
      [admitted],
    );
  });

  it('turns a static pod that left its source terminating with its own grace, and replaces it when it comes back', () => {
    const uid = randomUUID();
    const m = manifest(uid, `static-${NODE}`);
    m.spec.terminationGracePeriodSeconds = 3;
    const pod: DesiredPod = { namespace: 'default', name: m.metadata.name, uid, manifest: m };
    sut.setStatic([pod]);
    sut.setStatic([pod]);
    assert.equal(changes, 1, 'an unchanged source changes nothing');
    sut.setStatic([]);
    assert.deepEqual(sut.list()[0]?.terminating, { graceSeconds: 3 });
    sut.setStatic([pod]);
    assert.equal(sut.list()[0]?.terminating, undefined);
    assert.equal(changes, 3);
  });
});
