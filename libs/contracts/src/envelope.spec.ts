import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEnvelope, parseEnvelope, rememberVerified, reuseVerifiedEnvelopes } from './envelope.js';
import { MESSAGES, type MessageData, type MessageType } from './message-map.js';
import { ContractValidationError, type FieldCause } from './validation.js';
import type { PodManifest } from './pod/pod.model.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const TIME = '2024-05-01T10:00:00.000Z';

function manifest(nodeName?: string): PodManifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', uid: UID, creationTimestamp: TIME, labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'nginx', image: 'nginx:1.27', imagePullPolicy: 'IfNotPresent', ports: [{ containerPort: 80 }] }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      ...(nodeName ? { nodeName } : {}),
    },
  };
}

/** A valid payload for every message type; the compiler insists every type has one. */
const PAYLOADS: { [T in MessageType]: MessageData<T> } = {
  PodCreated: { pod: manifest() },
  PodScheduled: { uid: UID, nodeName: 'node-1' },
  PodUnschedulable: { uid: UID, message: "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector." },
  PodUpdated: { uid: UID, pod: { ...manifest('node-1'), metadata: { ...manifest().metadata, generation: 2 } } },
  PodDeletionRequested: { uid: UID, gracePeriodSeconds: 30, deletionTimestamp: TIME },
  PodAssigned: { pod: manifest('node-1') },
  PodUnassigned: { uid: UID, namespace: 'default', name: 'web-0', gracePeriodSeconds: 30 },
  PodStatusReported: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    status: { phase: 'Running', podIP: '172.17.0.5', conditions: [{ type: 'Ready', status: 'True' }] },
    removed: false,
  },
  ContainerEvent: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    containerName: 'nginx',
    containerID: 'docker://0123abcd',
    reason: 'Died',
    exitCode: 137,
    observedAt: TIME,
  },
  PodEvent: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    eventType: 'Warning',
    reason: 'BackOff',
    message: `Back-off restarting failed container nginx in pod web-0_default(${UID})`,
    fieldPath: 'spec.containers{nginx}',
    observedAt: TIME,
  },
  NodeRegistered: {
    nodeName: 'node-1',
    node: {
      metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1' } },
      spec: {},
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        addresses: [{ type: 'InternalIP', address: '10.0.0.11' }],
        nodeInfo: {
          kubeletVersion: 'jetlet/0.1.0',
          containerRuntimeVersion: 'docker://24.0.7',
          operatingSystem: 'linux',
          architecture: 'amd64',
          kernelVersion: '6.1.0',
          osImage: 'Debian GNU/Linux 12',
        },
      },
    },
  },
  NodeHeartbeat: { nodeName: 'node-1', renewTime: TIME, runningPods: 3 },
  NodeEvent: { nodeName: 'node-1', eventType: 'Warning', reason: 'FailedStaticPod', message: 'web.yaml: spec.containers: Required value', observedAt: TIME },
  MirrorPodUpdated: { pod: manifest() },
  NodeSpecChanged: { nodeName: 'node-1', unschedulable: true },
  BackoffRecorded: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    containerName: 'nginx',
    kind: 'CrashLoop',
    failedAt: TIME,
    recordedAt: TIME,
    delayMs: 20_000,
    baseMs: 10_000,
    capMs: 300_000,
    restartCount: 2,
  },
  ImagePullProgress: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    containerName: 'nginx',
    image: 'nginx:1.27',
    layers: 2,
    layersDone: 0,
    currentBytes: 1024,
    totalBytes: 4096,
    observedAt: TIME,
  },
  ProbeResultChanged: {
    uid: UID,
    namespace: 'default',
    name: 'web-0',
    nodeName: 'node-1',
    containerName: 'nginx',
    containerID: 'docker://0123abcd',
    probe: 'readiness',
    result: 'failure',
    observedAt: TIME,
  },
  PodEvicted: { uid: UID, gracePeriodSeconds: 30, deletionTimestamp: TIME, message: 'Taint manager: deleting due to NoExecute taint' },
  PodDeletionFinalized: { uid: UID, message: 'node node-1 does not exist' },
  NamespaceCreated: { name: 'team-a', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z' },
  NamespaceDeletionRequested: { uid: UID, deletionTimestamp: TIME },
  NamespaceRemoved: { uid: UID },
  ConfigMapWritten: { namespace: 'default', name: 'cfg', uid: UID, creationTimestamp: TIME, data: { 'a.txt': 'x' }, binaryData: { b: 'AAE=' } },
  ConfigMapDeleted: { uid: UID },
  SecretWritten: { namespace: 'default', name: 's', uid: UID, creationTimestamp: TIME, type: 'Opaque', data: { password: 'c2VjcmV0' } },
  SecretDeleted: { uid: UID },
  RequestAudited: {
    user: 'alice',
    userUid: '1001',
    groups: ['developers', 'system:authenticated'],
    verb: 'delete',
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    namespace: 'default',
    name: 'web',
    objectUid: UID,
    requestURI: '/api/v1/namespaces/default/pods/web',
    code: 200,
    dryRun: false,
  },
  LeaseRenewed: {
    name: 'kube-scheduler',
    holderIdentity: 'scheduler-1_4f2a9c1e',
    leaseDurationSeconds: 15,
    acquireTime: TIME,
    renewTime: TIME,
    leaseTransitions: 2,
  },
};

function envelopeOf(type: string, data: unknown, version = 1): Record<string, unknown> {
  return {
    id: `msg-${type}`,
    type,
    version,
    time: TIME,
    source: { component: 'api' },
    correlationId: UID,
    causationId: 'msg-previous',
    data,
  };
}

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

function causesOf(fn: () => unknown): FieldCause[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ContractValidationError, `expected a ContractValidationError, got ${String(error)}`);
    return error.causes;
  }
  assert.fail('the envelope was accepted');
}

describe('decodeEnvelope', () => {
  it('has a test payload for each message type', () => {
    assert.deepEqual(Object.keys(PAYLOADS).sort(), Object.keys(MESSAGES).sort());
  });

  for (const type of Object.keys(MESSAGES) as MessageType[]) {
    it(`round-trips ${type} through bytes unchanged, its payload an instance of its class`, () => {
      const envelope = envelopeOf(type, PAYLOADS[type], MESSAGES[type].version);

      const sut = decodeEnvelope(bytes(envelope));

      assert.deepEqual(JSON.parse(JSON.stringify(sut)), envelope);
      assert.equal(sut.type, type);
      assert.ok(sut.data instanceof MESSAGES[type].data);
    });
  }

  it('rejects bytes that are not JSON with a ContractValidationError', () => {
    const causes = causesOf(() => decodeEnvelope(new TextEncoder().encode('{"id": "x", ')));

    assert.deepEqual(causes, [{ field: '', reason: 'FieldValueInvalid', message: 'not JSON' }]);
  });

  it('rejects JSON that is not an object', () => {
    const causes = causesOf(() => decodeEnvelope(bytes([1, 2, 3])));

    assert.deepEqual(causes, [{ field: '', reason: 'FieldValueInvalid', message: 'must be an object' }]);
  });
});

describe('reusing envelopes validated at publish', () => {
  it('gives the first reader of the very same bytes the validated envelope, once, and validates anything else', (t) => {
    t.after(() => reuseVerifiedEnvelopes(0));
    reuseVerifiedEnvelopes(2);
    const envelope = envelopeOf('PodScheduled', PAYLOADS.PodScheduled, 1);
    const json = JSON.stringify(envelope);
    const validated = decodeEnvelope(new TextEncoder().encode(json));
    rememberVerified(json, validated);

    const first = decodeEnvelope(new TextEncoder().encode(json));
    const second = decodeEnvelope(new TextEncoder().encode(json));

    assert.equal(first, validated);
    assert.notEqual(second, validated);
    assert.deepEqual(second, validated);
  });

  it('gives the first reader of an envelope its writer validated the parsed text, once, then validates it as any other', (t) => {
    t.after(() => reuseVerifiedEnvelopes(0));
    reuseVerifiedEnvelopes(2);
    const envelope = envelopeOf('PodScheduled', PAYLOADS.PodScheduled, 1);
    const json = JSON.stringify(envelope);
    rememberVerified(json, null);

    const first = decodeEnvelope(new TextEncoder().encode(json));
    const second = decodeEnvelope(new TextEncoder().encode(json));

    assert.deepEqual(first, JSON.parse(json));
    assert.equal(Object.getPrototypeOf(first), Object.prototype);
    assert.notEqual(Object.getPrototypeOf(second), Object.prototype);
    assert.deepEqual(JSON.parse(JSON.stringify(second)), envelope);
  });

  it('never lets a remembered envelope stand for other bytes, and keeps no more than its capacity', (t) => {
    t.after(() => reuseVerifiedEnvelopes(0));
    reuseVerifiedEnvelopes(1);
    const valid = envelopeOf('PodScheduled', PAYLOADS.PodScheduled, 1);
    const json = JSON.stringify(valid);
    rememberVerified(json, decodeEnvelope(new TextEncoder().encode(json)));
    const other = JSON.stringify(envelopeOf('PodUnassigned', PAYLOADS.PodUnassigned, 1));
    rememberVerified(other, decodeEnvelope(new TextEncoder().encode(other)));

    const bad = causesOf(() => decodeEnvelope(bytes({ ...valid, data: { uid: 'not-a-uid', nodeName: 'node-1' } })));
    const evicted = decodeEnvelope(new TextEncoder().encode(json));

    assert.ok(bad.some((c) => c.field === 'data.uid'));
    assert.deepEqual(JSON.parse(JSON.stringify(evicted)), valid);
  });

  it('remembers nothing while off', () => {
    const json = JSON.stringify(envelopeOf('PodScheduled', PAYLOADS.PodScheduled, 1));
    const validated = decodeEnvelope(new TextEncoder().encode(json));
    rememberVerified(json, validated);

    assert.notEqual(decodeEnvelope(new TextEncoder().encode(json)), validated);
  });
});

describe('parseEnvelope', () => {
  it('names bad payload fields with a data. prefix and the message type as contract', () => {
    const envelope = envelopeOf('PodScheduled', { uid: 'not-a-uuid', nodeName: '' });

    const error = (() => {
      try {
        parseEnvelope(envelope);
      } catch (caught) {
        return caught;
      }
      return assert.fail('the envelope was accepted');
    })();

    assert.ok(error instanceof ContractValidationError);
    assert.equal(error.contract, 'PodScheduled');
    assert.deepEqual(
      error.causes.map((c) => [c.field, c.reason]),
      [
        ['data.uid', 'FieldValueInvalid'],
        ['data.nodeName', 'FieldValueRequired'],
      ],
    );
    assert.match(error.message, /^invalid PodScheduled: data\.uid: /);
  });

  it('reports a missing payload field as data.<field> FieldValueRequired', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('NodeHeartbeat', { nodeName: 'node-1', renewTime: TIME })));

    assert.deepEqual(causes, [{ field: 'data.runningPods', reason: 'FieldValueRequired', message: 'Required value' }]);
  });

  it('reports a bad field deep inside a pod payload with its full path', () => {
    const pod = manifest();
    pod.spec.containers[0].ports = [{ containerPort: 70000 }];

    const causes = causesOf(() => parseEnvelope(envelopeOf('PodCreated', { pod })));

    assert.deepEqual(
      causes.map((c) => c.field),
      ['data.pod.spec.containers[0].ports[0].containerPort'],
    );
  });

  it('rejects an unknown payload field as FieldValueNotSupported', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('PodScheduled', { uid: UID, nodeName: 'node-1', priority: 5 })));

    assert.deepEqual(causes, [{ field: 'data.priority', reason: 'FieldValueNotSupported', message: 'field is not supported by jetlet' }]);
  });

  it('rejects a status report whose phase is not a Kubernetes phase', () => {
    const data = { ...PAYLOADS.PodStatusReported, status: { phase: 'Exploded' } };

    const causes = causesOf(() => parseEnvelope(envelopeOf('PodStatusReported', data)));

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [['data.status', 'FieldValueInvalid']],
    );
  });

  it('accepts a PodEvent about the pod itself, without fieldPath', () => {
    const { fieldPath: _fieldPath, ...data } = PAYLOADS.PodEvent;

    const sut = parseEnvelope(envelopeOf('PodEvent', { ...data, eventType: 'Normal', reason: 'Scheduled' }));

    assert.ok(sut.type === 'PodEvent');
    assert.equal(sut.data.reason, 'Scheduled');
    assert.equal(sut.data.fieldPath, undefined);
  });

  it('rejects a PodEvent whose type is neither Normal nor Warning, and one without a reason', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('PodEvent', { ...PAYLOADS.PodEvent, eventType: 'Error', reason: '' })));

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['data.eventType', 'FieldValueNotSupported'],
        ['data.reason', 'FieldValueRequired'],
      ],
    );
  });

  it('rejects an unknown version with one cause on version', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('PodScheduled', PAYLOADS.PodScheduled, 2)));

    assert.deepEqual(causes, [{ field: 'version', reason: 'FieldValueNotSupported', message: 'PodScheduled has no version 2' }]);
  });

  it('rejects an unknown message type on type', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('PodExploded', { uid: UID })));

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [['type', 'FieldValueNotSupported']],
    );
  });

  it('lists every bad envelope field at once', () => {
    const envelope = {
      ...envelopeOf('PodScheduled', PAYLOADS.PodScheduled),
      id: '',
      version: 0,
      time: 'yesterday',
      source: { component: 'kubelet' },
      extra: 1,
    };

    const causes = causesOf(() => parseEnvelope(envelope));

    assert.deepEqual(causes.map((c) => [c.field, c.reason]).sort(), [
      ['extra', 'FieldValueNotSupported'],
      ['id', 'FieldValueRequired'],
      ['source.component', 'FieldValueNotSupported'],
      ['time', 'FieldValueInvalid'],
      ['version', 'FieldValueInvalid'],
    ]);
  });

  it('rejects an envelope without source as source FieldValueRequired', () => {
    const { source: _source, ...envelope } = envelopeOf('NodeHeartbeat', PAYLOADS.NodeHeartbeat);

    const causes = causesOf(() => parseEnvelope(envelope));

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [['source', 'FieldValueRequired']],
    );
  });

  for (const type of ['PodCreated', 'PodAssigned'] as const) {
    it(`rejects a ${type} whose data has no pod as data.pod FieldValueRequired`, () => {
      const causes = causesOf(() => parseEnvelope(envelopeOf(type, {})));

      assert.deepEqual(
        causes.map((c) => [c.field, c.reason]),
        [['data.pod', 'FieldValueRequired']],
      );
    });
  }

  it('requires data to be an object', () => {
    const causes = causesOf(() => parseEnvelope(envelopeOf('PodScheduled', 'node-1')));

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [['data', 'FieldValueInvalid']],
    );
  });
});
