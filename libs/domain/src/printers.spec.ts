import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventRow, humanDuration, nodeRow, podRow, toTable } from './printers.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (seconds: number): string => new Date(NOW - seconds * 1000).toISOString();

const pod = (status: object, metadata: object = {}, spec: object = {}) => ({
  metadata: { name: 'web', creationTimestamp: ago(300), ...metadata },
  spec: { containers: [{}, {}], ...spec },
  status,
});

const running = { running: { startedAt: ago(60) } };

describe('humanDuration', () => {
  it('reads as kubectl prints ages', () => {
    assert.equal(humanDuration(45_000), '45s');
    assert.equal(humanDuration(119_000), '119s');
    assert.equal(humanDuration(200_000), '3m20s');
    assert.equal(humanDuration(600_000), '10m');
    assert.equal(humanDuration(5 * 3600_000), '5h');
    assert.equal(humanDuration(5.5 * 3600_000), '5h30m');
    assert.equal(humanDuration(30 * 3600_000), '30h');
    assert.equal(humanDuration(51 * 3600_000), '2d3h');
    assert.equal(humanDuration(400 * 86400_000), '400d');
    assert.equal(humanDuration(3 * 365 * 86400_000), '3y');
    assert.equal(humanDuration(-500), '0s');
  });
});

describe('podRow', () => {
  it('shows READY, Running and the AGE', () => {
    const row = podRow(
      pod({
        phase: 'Running',
        podIP: '10.1.2.3',
        containerStatuses: [
          { name: 'a', ready: true, state: running },
          { name: 'b', ready: false, state: running },
        ],
      }),
      NOW,
    );
    assert.deepEqual(row.cells.slice(0, 5), ['web', '1/2', 'Running', '0', '5m']);
    assert.deepEqual(row.cells.slice(5), ['10.1.2.3', '<none>', '<none>', '<none>']);
  });

  it('shows a waiting reason (CrashLoopBackOff, ErrImagePull) and restarts with when the last one was', () => {
    const crash = podRow(
      pod({
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: true, state: running },
          { name: 'b', restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: ago(20) } } },
        ],
      }),
      NOW,
    );
    assert.equal(crash.cells[2], 'CrashLoopBackOff');
    assert.equal(crash.cells[3], '3 (20s ago)');
    const pull = podRow(
      pod({ phase: 'Pending', containerStatuses: [{ name: 'a', state: { waiting: { reason: 'ErrImagePull' } } }] }, {}, { containers: [{}] }),
      NOW,
    );
    assert.deepEqual(pull.cells.slice(1, 3), ['0/1', 'ErrImagePull']);
  });

  it('shows Completed for a finished pod, and marks the row completed', () => {
    const row = podRow(
      pod({ phase: 'Succeeded', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, {}, { containers: [{}] }),
      NOW,
    );
    assert.equal(row.cells[2], 'Completed');
    assert.equal(row.conditions?.[0]?.type, 'Completed');
    const exit = podRow(pod({ phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 2 } } }] }, {}, { containers: [{}] }), NOW);
    assert.equal(exit.cells[2], 'ExitCode:2');
  });

  it('shows Terminating while a deleted pod is not finished, and ContainerCreating while waiting', () => {
    const row = podRow(pod({ phase: 'Running', containerStatuses: [{ name: 'a', ready: true, state: running }] }, { deletionTimestamp: ago(1) }), NOW);
    assert.equal(row.cells[2], 'Terminating');
    const creating = podRow(pod({ phase: 'Pending', containerStatuses: [{ name: 'a', state: { waiting: { reason: 'ContainerCreating' } } }] }), NOW);
    assert.equal(creating.cells[2], 'ContainerCreating');
    assert.equal(podRow(pod({ phase: 'Pending' }), NOW).cells[2], 'Pending');
  });
});

describe('nodeRow', () => {
  const node = (ready: string, unschedulable = false) => ({
    metadata: { name: 'n1', creationTimestamp: ago(90_000), labels: { 'node-role.kubernetes.io/worker': '', 'kubernetes.io/role': 'edge' } },
    spec: { unschedulable },
    status: {
      conditions: [{ type: 'Ready', status: ready }],
      addresses: [{ type: 'InternalIP', address: '192.168.1.5' }],
      nodeInfo: { kubeletVersion: 'v1.32.0-jetlet', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'docker://20.10.24' },
    },
  });

  it('shows Ready,SchedulingDisabled for a cordoned node, with roles, version and wide columns', () => {
    assert.deepEqual(nodeRow(node('True', true), NOW).cells, [
      'n1',
      'Ready,SchedulingDisabled',
      'edge,worker',
      '25h',
      'v1.32.0-jetlet',
      '192.168.1.5',
      '<none>',
      'Debian GNU/Linux 12',
      '6.1.0',
      'docker://20.10.24',
    ]);
    assert.equal(nodeRow(node('Unknown'), NOW).cells[1], 'NotReady');
  });
});

describe('eventRow and toTable', () => {
  it('prints an event as kubectl get events', () => {
    const row = eventRow(
      {
        metadata: { name: 'web.1a' },
        involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{main}' },
        reason: 'Started',
        message: 'Started container main ',
        type: 'Normal',
        source: { component: 'kubelet', host: 'n1' },
        firstTimestamp: ago(30),
        lastTimestamp: ago(10),
        count: 2,
      },
      NOW,
    );
    assert.deepEqual(row.cells, ['10s', 'Normal', 'Started', 'pod/web', 'spec.containers{main}', 'kubelet, n1', 'Started container main', '30s', 2, 'web.1a']);
  });

  it('builds a Table whose rows carry the metadata, the object, or nothing', () => {
    const p = pod({ phase: 'Pending' }, { namespace: 'default', labels: { a: 'b' } });
    const table = toTable('Pod', [p], { nowMs: NOW, includeObject: 'Metadata', resourceVersion: '7' }) as {
      kind: string;
      apiVersion: string;
      metadata: object;
      columnDefinitions: Array<{ name: string; priority: number }>;
      rows: Array<{ object?: { kind?: string } }>;
    };
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(table.metadata, { resourceVersion: '7' });
    assert.deepEqual(
      table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name),
      ['Name', 'Ready', 'Status', 'Restarts', 'Age'],
    );
    assert.equal(table.rows[0]?.object?.kind, 'PartialObjectMetadata');
    const bare = toTable('Pod', [p], { nowMs: NOW, includeObject: 'None' }) as { rows: Array<{ object?: object }> };
    assert.equal(bare.rows[0]?.object, undefined);
  });
});
