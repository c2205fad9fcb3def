import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SUBJECTS, type AnyEnvelope, type PodManifest, type PodStatus } from '#contracts';
import { PodProjection, podView } from './pod-projection.js';

const UID_A = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const UID_B = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';
const UID_C = 'c3d4e5f6-a7b8-4c9d-8e0f-112233445566';
const CREATED = '2024-05-01T10:00:00Z';
const DELETED = '2024-05-01T10:05:00Z';

function manifest(name: string, namespace: string, uid: string, nodeName?: string): PodManifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid, creationTimestamp: CREATED, labels: { app: name } },
    spec: {
      containers: [{ name: 'app', image: 'nginx:1.27', imagePullPolicy: 'IfNotPresent' }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      ...(nodeName ? { nodeName } : {}),
    },
  };
}

const meta = (id: string, uid: string, component: 'api' | 'scheduler' | 'agent') => ({
  id,
  version: 1,
  time: CREATED,
  source: { component },
  correlationId: uid,
});

function created(uid: string, name = 'web-0', namespace = 'default', nodeName?: string): AnyEnvelope {
  return { ...meta(`created-${uid}`, uid, 'api'), type: 'PodCreated', data: { pod: manifest(name, namespace, uid, nodeName) } };
}

function scheduled(uid: string, nodeName = 'node-1'): AnyEnvelope {
  return { ...meta(`scheduled-${uid}`, uid, 'scheduler'), type: 'PodScheduled', data: { uid, nodeName } };
}

const NO_ROOM = '0/3 nodes are available: 3 Too many pods.';

function unschedulable(uid: string, message = NO_ROOM): AnyEnvelope {
  return { ...meta(`unschedulable-${uid}-${message.length}`, uid, 'scheduler'), type: 'PodUnschedulable', data: { uid, message } };
}

function deletionRequested(uid: string, gracePeriodSeconds = 30): AnyEnvelope {
  return { ...meta(`deleted-${uid}`, uid, 'api'), type: 'PodDeletionRequested', data: { uid, gracePeriodSeconds, deletionTimestamp: DELETED } };
}

function running(): PodStatus {
  return {
    phase: 'Running',
    podIP: '172.17.0.5',
    hostIP: '10.0.0.11',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
      { type: 'Ready', status: 'True' },
    ],
  };
}

function statusReported(uid: string, status: PodStatus, removed = false, name = 'web-0', namespace = 'default'): AnyEnvelope {
  return {
    ...meta(`status-${uid}-${status.phase}-${String(removed)}`, uid, 'agent'),
    type: 'PodStatusReported',
    data: { uid, namespace, name, nodeName: 'node-1', status, removed },
  };
}

/** Applies envelopes with sequences 1, 2, 3, ... */
function projectionOf(...envelopes: AnyEnvelope[]): PodProjection {
  const sut = new PodProjection();
  envelopes.forEach((e, i) => sut.apply(e, i + 1));
  return sut;
}

describe('PodProjection', () => {
  it('shows a created pod under its namespace and name', () => {
    const sut = projectionOf(created(UID_A));

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.uid, UID_A);
    assert.equal(pod?.resourceVersion, 1);
    assert.equal(pod?.subjectSeq, 1);
    assert.equal(pod?.nodeName, undefined);
    assert.equal(pod?.removed, false);
    assert.deepEqual(pod?.manifest, manifest('web-0', 'default', UID_A));
    assert.equal(sut.byUid(UID_A), pod);
  });

  it('does not show a pod under another namespace', () => {
    const sut = projectionOf(created(UID_A, 'web-0', 'shop'));

    assert.equal(sut.get('default', 'web-0'), undefined);
    assert.equal(sut.get('shop', 'web-0')?.uid, UID_A);
  });

  it('takes the uid from the correlation id and the namespace "default" when the manifest has neither', () => {
    const pod = manifest('web-0', 'default', UID_A);
    delete pod.metadata.uid;
    delete pod.metadata.namespace;

    const sut = projectionOf({ ...meta('m1', UID_B, 'api'), type: 'PodCreated', data: { pod } });

    assert.equal(sut.get('default', 'web-0')?.uid, UID_B);
  });

  it('binds a pod to the node its PodScheduled names', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A, 'node-2'));

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.nodeName, 'node-2');
    assert.equal(pod?.subjectSeq, 2);
    assert.equal(pod?.resourceVersion, 2);
  });

  it("records why no node fits, moving the pod's subject sequence and resourceVersion", () => {
    const sut = projectionOf(created(UID_A), unschedulable(UID_A));

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.unschedulable, NO_ROOM);
    assert.equal(pod?.nodeName, undefined);
    assert.equal(pod?.subjectSeq, 2);
    assert.equal(pod?.resourceVersion, 2);
  });

  it('forgets why the pod was unschedulable once it is bound', () => {
    const sut = projectionOf(created(UID_A), unschedulable(UID_A), scheduled(UID_A, 'node-4'));

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.unschedulable, undefined);
    assert.equal(pod?.nodeName, 'node-4');
    assert.equal(pod?.subjectSeq, 3);
  });

  it('ignores an unschedulable message about an earlier pod of the same name', () => {
    const sut = projectionOf(created(UID_A), deletionRequested(UID_A), created(UID_B), unschedulable(UID_A));

    assert.equal(sut.get('default', 'web-0')?.uid, UID_B);
    assert.equal(sut.get('default', 'web-0')?.unschedulable, undefined);
  });

  it('takes the node of a pod created with spec.nodeName', () => {
    const sut = projectionOf(created(UID_A, 'web-0', 'default', 'node-3'));

    assert.equal(sut.get('default', 'web-0')?.nodeName, 'node-3');
  });

  it('removes a pod deleted before any node took it at once', () => {
    const sut = projectionOf(created(UID_A), deletionRequested(UID_A));

    assert.equal(sut.get('default', 'web-0'), undefined);
    assert.deepEqual(sut.list(), []);
    assert.equal(sut.record('default', 'web-0')?.removed, true);
    assert.equal(sut.record('default', 'web-0')?.subjectSeq, 2);
  });

  it('keeps a deleted bound pod, with its deletion time and grace, until its node reports it removed', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), statusReported(UID_A, running()), deletionRequested(UID_A, 10));

    const pod = sut.get('default', 'web-0');
    assert.ok(pod);
    assert.deepEqual(pod.deletion, { timestamp: DELETED, gracePeriodSeconds: 10 });
    const view = podView(pod);
    assert.equal(view.metadata.deletionTimestamp, DELETED);
    assert.equal(view.metadata.deletionGracePeriodSeconds, 10);
  });

  it('gives a pod evicted through the Eviction API the DisruptionTarget condition, as Kubernetes does; a plain delete none', () => {
    const evicted: AnyEnvelope = { ...deletionRequested(UID_A, 10), data: { uid: UID_A, gracePeriodSeconds: 10, deletionTimestamp: DELETED, disruption: 'EvictionByEvictionAPI' } } as AnyEnvelope;
    const sut = projectionOf(created(UID_A), scheduled(UID_A), statusReported(UID_A, running()), evicted);

    const conditions = podView(sut.get('default', 'web-0')!).status.conditions ?? [];
    assert.deepEqual(
      conditions.find((c) => c.type === 'DisruptionTarget'),
      { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: DELETED },
    );
    const plain = projectionOf(created(UID_A), scheduled(UID_A), statusReported(UID_A, running()), deletionRequested(UID_A, 10));
    assert.equal((podView(plain.get('default', 'web-0')!).status.conditions ?? []).find((c) => c.type === 'DisruptionTarget'), undefined);
  });

  it('keeps a deleted bound pod through status reports that are not removal', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), deletionRequested(UID_A), statusReported(UID_A, { phase: 'Running' }));

    assert.equal(sut.get('default', 'web-0')?.status?.phase, 'Running');
  });

  it('removes a deleted bound pod once its node reports removed: true', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), deletionRequested(UID_A), statusReported(UID_A, { phase: 'Succeeded' }, true));

    assert.equal(sut.get('default', 'web-0'), undefined);
    assert.deepEqual(sut.list(), []);
  });

  it('ignores status reports once a pod is removed', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), statusReported(UID_A, { phase: 'Succeeded' }, true));

    const result = sut.apply(statusReported(UID_A, running()), 4);

    assert.equal(result, undefined);
    assert.equal(sut.record('default', 'web-0')?.status?.phase, 'Succeeded');
    assert.equal(sut.record('default', 'web-0')?.resourceVersion, 3);
  });

  it('shows a pod re-created after removal as a new incarnation with a new uid', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), deletionRequested(UID_A), statusReported(UID_A, running(), true), created(UID_B));

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.uid, UID_B);
    assert.equal(pod?.nodeName, undefined);
    assert.equal(pod?.deletion, undefined);
    assert.equal(pod?.status, undefined);
    assert.equal(pod?.resourceVersion, 5);
    assert.equal(sut.byUid(UID_B), pod);
  });

  it('does not let a late report about the previous incarnation touch the re-created pod', () => {
    const sut = projectionOf(created(UID_A), scheduled(UID_A), deletionRequested(UID_A), statusReported(UID_A, running(), true), created(UID_B));

    sut.apply(statusReported(UID_A, { phase: 'Succeeded' }, true), 6);

    assert.equal(sut.get('default', 'web-0')?.uid, UID_B, 'the re-created pod vanished');
    assert.equal(sut.get('default', 'web-0')?.status, undefined);
    assert.equal(sut.byUid(UID_A), undefined);
  });

  it('gives each pod the sequence of its newest fact as resourceVersion, status reports included', () => {
    const sut = new PodProjection();
    sut.apply(created(UID_A), 3);
    sut.apply(created(UID_B, 'api-0'), 4);
    sut.apply(scheduled(UID_A), 8);
    sut.apply(statusReported(UID_A, running()), 12);

    assert.equal(sut.get('default', 'web-0')?.resourceVersion, 12);
    assert.equal(sut.get('default', 'web-0')?.subjectSeq, 8);
    assert.equal(sut.get('default', 'api-0')?.resourceVersion, 4);
    assert.equal(sut.lastSeq, 12);
    assert.equal(podView(sut.get('default', 'web-0') ?? assert.fail('no pod')).metadata.resourceVersion, '12');
  });

  it('lists existing pods by namespace then name, optionally in one namespace', () => {
    const sut = projectionOf(
      created(UID_A, 'web-0', 'shop'),
      created(UID_B, 'api-0', 'default'),
      created(UID_C, 'db-0', 'shop'),
      created('d4e5f6a7-b8c9-4d0e-8f10-223344556677', 'gone', 'default'),
      deletionRequested('d4e5f6a7-b8c9-4d0e-8f10-223344556677'),
    );

    assert.deepEqual(
      sut.list().map((p) => `${p.namespace}/${p.name}`),
      ['default/api-0', 'shop/db-0', 'shop/web-0'],
    );
    assert.deepEqual(
      sut.list('shop').map((p) => p.name),
      ['db-0', 'web-0'],
    );
    assert.deepEqual(sut.list('kube-system'), []);
  });

  it('ignores facts about a uid it never saw', () => {
    const sut = projectionOf(created(UID_A));

    assert.equal(sut.apply(statusReported(UID_C, running()), 2), undefined);
    assert.equal(sut.apply(scheduled(UID_C), 3), undefined);
    assert.equal(sut.apply(deletionRequested(UID_C), 4), undefined);

    const pod = sut.get('default', 'web-0');
    assert.equal(pod?.status, undefined);
    assert.equal(pod?.nodeName, undefined);
    assert.equal(pod?.deletion, undefined);
    assert.equal(pod?.resourceVersion, 1);
  });

  it('ignores message types that are not about pods, but still advances lastSeq', () => {
    const sut = projectionOf(created(UID_A));

    const result = sut.apply({ ...meta('hb', 'node-1', 'agent'), type: 'NodeHeartbeat', data: { nodeName: 'node-1', renewTime: CREATED, runningPods: 1 } }, 9);

    assert.equal(result, undefined);
    assert.equal(sut.lastSeq, 9);
    assert.equal(sut.get('default', 'web-0')?.resourceVersion, 1);
  });

  it('rebuilds the same state from the same messages', () => {
    const log = [
      created(UID_A),
      created(UID_B, 'api-0', 'shop'),
      scheduled(UID_A),
      statusReported(UID_A, running()),
      deletionRequested(UID_B),
      created(UID_C, 'api-0', 'shop'),
      scheduled(UID_C, 'node-2'),
      deletionRequested(UID_A, 5),
    ];

    const first = projectionOf(...log);
    const second = projectionOf(...structuredClone(log));

    assert.deepEqual(second.list(), first.list());
    assert.deepEqual(second.list().map(podView), first.list().map(podView));
    assert.equal(second.lastSeq, first.lastSeq);
  });
});

describe('podView', () => {
  it('shows a pending pod with PodScheduled False while no node has it', () => {
    const sut = podView(projectionOf(created(UID_A)).get('default', 'web-0') ?? assert.fail('no pod'));

    assert.deepEqual(sut.status, {
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'no nodes available to schedule pods', lastTransitionTime: CREATED },
      ],
    });
    assert.equal(sut.spec.nodeName, undefined);
  });

  it("shows the scheduler's reason in PodScheduled False/Unschedulable, the pod still Pending", () => {
    const sut = podView(projectionOf(created(UID_A), unschedulable(UID_A, 'first'), unschedulable(UID_A)).get('default', 'web-0') ?? assert.fail('no pod'));

    assert.deepEqual(sut.status, {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: NO_ROOM, lastTransitionTime: CREATED }],
    });
    assert.equal(sut.metadata.resourceVersion, '3');
  });

  it('shows the Kubernetes Pod of a bound, running pod: PodScheduled True first, then the reported conditions', () => {
    const record = projectionOf(created(UID_A), scheduled(UID_A, 'node-1'), statusReported(UID_A, running())).get('default', 'web-0');

    const sut = podView(record ?? assert.fail('no pod'));

    assert.equal(sut.apiVersion, 'v1');
    assert.equal(sut.kind, 'Pod');
    assert.deepEqual(sut.metadata, {
      name: 'web-0',
      namespace: 'default',
      uid: UID_A,
      creationTimestamp: CREATED,
      labels: { app: 'web-0' },
      resourceVersion: '3',
    });
    assert.equal(sut.spec.nodeName, 'node-1');
    assert.equal(sut.status.phase, 'Running');
    assert.equal(sut.status.podIP, '172.17.0.5');
    assert.deepEqual(
      sut.status.conditions?.map((c) => [c.type, c.status]),
      [
        ['PodScheduled', 'True'],
        ['Initialized', 'True'],
        ['ContainersReady', 'True'],
        ['Ready', 'True'],
      ],
    );
  });

  it('keeps one PodScheduled condition even when the agent reported one', () => {
    const status: PodStatus = {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    };
    const record = projectionOf(created(UID_A), scheduled(UID_A), statusReported(UID_A, status)).get('default', 'web-0');

    const sut = podView(record ?? assert.fail('no pod'));

    assert.deepEqual(
      sut.status.conditions?.map((c) => [c.type, c.status]),
      [
        ['PodScheduled', 'True'],
        ['Ready', 'True'],
      ],
    );
  });

  it('stamps each condition with its last transition: kept while the status holds, moved when it changes', () => {
    const ready = (status: 'True' | 'False'): PodStatus => ({ phase: 'Running', conditions: [{ type: 'Ready', status }] });
    const at = (envelope: AnyEnvelope, time: string): AnyEnvelope => ({ ...envelope, time });
    const projection = projectionOf(
      created(UID_A),
      at(scheduled(UID_A), '2024-05-01T10:00:05.000Z'),
      at(statusReported(UID_A, ready('False')), '2024-05-01T10:00:06.000Z'),
      at(statusReported(UID_A, ready('True')), '2024-05-01T10:00:09.000Z'),
      at(statusReported(UID_A, ready('True')), '2024-05-01T10:00:30.000Z'),
    );

    const sut = podView(projection.get('default', 'web-0') ?? assert.fail('no pod'));

    assert.deepEqual(
      sut.status.conditions?.map((c) => [c.type, c.lastTransitionTime]),
      [
        ['PodScheduled', '2024-05-01T10:00:05Z'],
        ['Ready', '2024-05-01T10:00:09Z'],
      ],
    );
  });

  it('removes a deleted pod whose deletion the scheduler finalised without its node, and ignores a late report from that node', () => {
    const sut = new PodProjection();
    sut.apply(created(UID_A), 1);
    sut.apply(scheduled(UID_A, 'node-1'), 2);
    sut.apply(deletionRequested(UID_A), 3);
    const finalised: AnyEnvelope = {
      ...meta(`finalised-${UID_A}`, UID_A, 'scheduler'),
      type: 'PodDeletionFinalized',
      data: { uid: UID_A, message: 'node node-1 does not exist' },
    };
    assert.equal(sut.apply(finalised, 4)?.removed, true);
    assert.equal(sut.get('default', 'web-0'), undefined);
    assert.equal(sut.record('default', 'web-0')?.subjectSeq, 4, 'a re-create expects the finalising fact');
    assert.equal(sut.apply(statusReported(UID_A, running()), 5), undefined);
  });

  it('does not finalise a pod that was never deleted', () => {
    const sut = new PodProjection();
    sut.apply(created(UID_A), 1);
    const finalised: AnyEnvelope = { ...meta(`finalised-${UID_A}`, UID_A, 'scheduler'), type: 'PodDeletionFinalized', data: { uid: UID_A, message: 'x' } };
    assert.equal(sut.apply(finalised, 2), undefined);
    assert.ok(sut.get('default', 'web-0'));
  });

  describe('subject sequences', () => {
    it('counts a skipped message on an empty name, so a create expects it', () => {
      const sut = new PodProjection();

      sut.skip(SUBJECTS.pod('default', 'web-0'), 4);

      assert.equal(sut.subjectSeq('default', 'web-0'), 4);
      assert.equal(sut.lastSeq, 4);
      assert.equal(sut.get('default', 'web-0'), undefined);
    });

    it('counts a skipped message on an existing pod, so its next write expects it', () => {
      const sut = new PodProjection();
      sut.apply(created(UID_A), 1, SUBJECTS.pod('default', 'web-0'));

      sut.skip(SUBJECTS.pod('default', 'web-0'), 7);

      assert.equal(sut.record('default', 'web-0')?.subjectSeq, 7);
      assert.equal(sut.subjectSeq('default', 'web-0'), 7);
    });

    it('counts a valid fact the fold ignores (a late one about an earlier pod of the name)', () => {
      const sut = new PodProjection();
      const subject = SUBJECTS.pod('default', 'web-0');
      sut.apply(created(UID_A), 1, subject);
      sut.apply(deletionRequested(UID_A), 2, subject);
      sut.apply(created(UID_B), 3, subject);

      sut.apply(scheduled(UID_A), 4, subject);

      assert.equal(sut.get('default', 'web-0')?.uid, UID_B);
      assert.equal(sut.subjectSeq('default', 'web-0'), 4);
    });

    it('ignores subjects that are not pod aggregates', () => {
      const sut = new PodProjection();

      sut.skip(SUBJECTS.podStatus('node-1', UID_A), 9);

      assert.equal(sut.lastSeq, 9);
      assert.equal(sut.subjectSeq('default', 'web-0'), 0);
    });
  });
});
