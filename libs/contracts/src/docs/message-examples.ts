import type { Envelope } from '../envelope.js';
import type { MessageData, MessageType } from '../message-map.js';
import type { PodManifest } from '../pod/pod.model.js';
import { SUBJECTS } from '../subjects.js';
import { WRITERS, writerOf } from '../writers.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const TIME = '2026-05-01T10:00:00.000Z';
const NODE = 'node-1';

function pod(nodeName?: string): PodManifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z', generation: 1, labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'server',
          image: 'jetlet/busybox:1.35',
          command: ['httpd', '-f', '-p', '8080'],
          imagePullPolicy: 'IfNotPresent',
          resources: { requests: { cpu: '100m', memory: '16Mi' }, limits: { memory: '64Mi' } },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      ...(nodeName ? { nodeName } : {}),
    },
  };
}

/** One example of each message type: the subject it is published on and its payload. */
export const MESSAGE_EXAMPLES: { [T in MessageType]: { subject: string; data: MessageData<T> } } = {
  PodCreated: { subject: SUBJECTS.pod('default', 'web'), data: { pod: pod() } },
  PodScheduled: { subject: SUBJECTS.pod('default', 'web'), data: { uid: UID, nodeName: NODE } },
  PodUnschedulable: { subject: SUBJECTS.pod('default', 'web'), data: { uid: UID, message: '0/2 nodes are available: 2 Insufficient memory.' } },
  PodUpdated: { subject: SUBJECTS.pod('default', 'web'), data: { uid: UID, pod: { ...pod(), metadata: { ...pod().metadata, generation: 2 } } } },
  PodDeletionRequested: { subject: SUBJECTS.pod('default', 'web'), data: { uid: UID, gracePeriodSeconds: 30, deletionTimestamp: TIME } },
  PodDeletionFinalized: {
    subject: SUBJECTS.pod('default', 'web'),
    data: { uid: UID, message: `node ${NODE} has not been heard from for the node grace period since the deletion` },
  },
  PodEvicted: {
    subject: SUBJECTS.pod('default', 'web'),
    data: {
      uid: UID,
      gracePeriodSeconds: 30,
      deletionTimestamp: TIME,
      message: `Taint manager: deleting due to NoExecute taint node.kubernetes.io/unreachable on node ${NODE}`,
    },
  },
  PodAssigned: { subject: SUBJECTS.assignment(NODE, UID), data: { pod: pod(NODE) } },
  PodUnassigned: { subject: SUBJECTS.assignment(NODE, UID), data: { uid: UID, namespace: 'default', name: 'web', gracePeriodSeconds: 30 } },
  PodStatusReported: {
    subject: SUBJECTS.podStatus(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      removed: false,
      status: {
        phase: 'Running',
        podIP: '172.17.0.5',
        startTime: TIME,
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: TIME }],
        containerStatuses: [
          {
            name: 'server',
            state: { running: { startedAt: TIME } },
            lastState: {},
            ready: true,
            restartCount: 0,
            image: 'jetlet/busybox:1.35',
            imageID: 'docker://sha256:0d1e',
            containerID: 'docker://4f3c',
            started: true,
          },
        ],
      },
    },
  },
  ContainerEvent: {
    subject: SUBJECTS.containerEvents(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      containerName: 'server',
      containerID: 'docker://4f3c',
      reason: 'Died',
      exitCode: 137,
      exitReason: 'OOMKilled',
      observedAt: TIME,
    },
  },
  BackoffRecorded: {
    subject: SUBJECTS.containerEvents(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      containerName: 'server',
      kind: 'CrashLoop',
      failedAt: TIME,
      recordedAt: TIME,
      delayMs: 20000,
      baseMs: 10000,
      capMs: 300000,
      restartCount: 2,
    },
  },
  ImagePullProgress: {
    subject: SUBJECTS.containerEvents(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      containerName: 'server',
      image: 'registry.local:5000/web:1.4',
      layers: 3,
      layersDone: 1,
      currentBytes: 12582912,
      totalBytes: 31457280,
      observedAt: TIME,
    },
  },
  ProbeResultChanged: {
    subject: SUBJECTS.containerEvents(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      containerName: 'server',
      containerID: 'docker://4f3c',
      probe: 'liveness',
      result: 'failure',
      observedAt: TIME,
    },
  },
  PodEvent: {
    subject: SUBJECTS.containerEvents(NODE, UID),
    data: {
      uid: UID,
      namespace: 'default',
      name: 'web',
      nodeName: NODE,
      eventType: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container server in pod web_default(6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f)',
      fieldPath: 'spec.containers{server}',
      observedAt: TIME,
    },
  },
  NodeRegistered: {
    subject: SUBJECTS.nodeRegistration(NODE),
    data: {
      nodeName: NODE,
      node: {
        metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } },
        spec: {},
        status: {
          capacity: { cpu: '2', memory: '24Gi', pods: '110' },
          allocatable: { cpu: '2', memory: '24Gi', pods: '110' },
          addresses: [{ type: 'InternalIP', address: '192.0.2.10' }],
          nodeInfo: {
            kubeletVersion: 'jetlet-0.1.0',
            containerRuntimeVersion: 'docker://20.10.24',
            operatingSystem: 'linux',
            architecture: 'amd64',
            kernelVersion: '6.1.0',
            osImage: 'Debian GNU/Linux 12 (bookworm)',
          },
          conditions: [{ type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' }],
        },
      },
    },
  },
  NodeHeartbeat: { subject: SUBJECTS.nodeHeartbeat(NODE), data: { nodeName: NODE, renewTime: TIME, runningPods: 3 } },
  NodeEvent: {
    subject: SUBJECTS.nodeLifecycleEvents(NODE),
    data: { nodeName: NODE, eventType: 'Warning', reason: 'NodeNotReady', message: `Node ${NODE} status is now: NodeNotReady`, observedAt: TIME },
  },
  NodeSpecChanged: { subject: SUBJECTS.nodeSpec(NODE), data: { nodeName: NODE, unschedulable: true } },
  MirrorPodUpdated: {
    subject: SUBJECTS.mirrorPod(NODE, UID),
    data: {
      pod: {
        ...pod(NODE),
        metadata: { ...pod().metadata, name: `web-${NODE}`, annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.mirror': 'a1b2' } },
      },
    },
  },
  NamespaceCreated: {
    subject: SUBJECTS.namespace('team-a'),
    data: { name: 'team-a', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z', labels: { team: 'a' } },
  },
  NamespaceDeletionRequested: { subject: SUBJECTS.namespace('team-a'), data: { uid: UID, deletionTimestamp: '2026-05-01T10:05:00Z' } },
  NamespaceRemoved: { subject: SUBJECTS.namespace('team-a'), data: { uid: UID } },
  ConfigMapWritten: {
    subject: SUBJECTS.configMap('default', 'web-config'),
    data: { namespace: 'default', name: 'web-config', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z', data: { 'index.html': '<h1>hello</h1>' } },
  },
  ConfigMapDeleted: { subject: SUBJECTS.configMap('default', 'web-config'), data: { uid: UID } },
  SecretWritten: {
    subject: SUBJECTS.secret('default', 'db-password'),
    data: {
      namespace: 'default',
      name: 'db-password',
      uid: UID,
      creationTimestamp: '2026-05-01T10:00:00Z',
      type: 'Opaque',
      sealed: 'v1:k1:bm9uY2Vub25jZW5vbmNl:c2VhbGVkIGRhdGEgYW5kIHRhZw==',
    },
  },
  SecretDeleted: { subject: SUBJECTS.secret('default', 'db-password'), data: { uid: UID } },
  RequestAudited: {
    subject: SUBJECTS.audit('pods', 'default', 'web'),
    data: {
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
  },
  LeaseRenewed: {
    subject: SUBJECTS.lease('kube-scheduler'),
    data: { name: 'kube-scheduler', holderIdentity: 'scheduler-1_4f2a9c1e', leaseDurationSeconds: 15, acquireTime: TIME, renewTime: TIME, leaseTransitions: 2 },
  },
};

/** The whole envelope of the example of `type`, as it is stored. */
export function exampleEnvelope<T extends MessageType>(type: T, version: number): Envelope<T> {
  const example = MESSAGE_EXAMPLES[type];
  const writer = writerOf(type, example.subject, NODE) ?? WRITERS[type];
  const data = example.data as MessageData<T> & { uid?: string; nodeName?: string; pod?: PodManifest };
  return {
    id: '0b9c1f3e-4a6d-4e2b-8c1a-5d7e9f0a1b2c',
    type,
    version,
    time: TIME,
    source: writer === 'agent' ? { component: 'agent', node: NODE } : { component: writer },
    correlationId: data.uid ?? data.pod?.metadata.uid ?? data.nodeName ?? NODE,
    data,
  };
}
