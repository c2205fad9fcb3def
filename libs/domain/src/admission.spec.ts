import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeObject, PodSpec } from '#contracts';
import { ADMISSION_REASONS, admissionFailure, rejectionMessage } from './admission.js';

/** A 2-cpu, 4Gi, 3-pod node labelled disk=ssd. */
function node(spec: NodeObject['spec'] = {}): NodeObject {
  return {
    metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', disk: 'ssd' } },
    spec,
    status: {
      capacity: { cpu: '2', memory: '4Gi', pods: '3' },
      allocatable: { cpu: '2', memory: '4Gi', pods: '3' },
      addresses: [],
      nodeInfo: { kubeletVersion: '', containerRuntimeVersion: '', operatingSystem: 'linux', architecture: 'amd64', kernelVersion: '', osImage: '' },
    },
  };
}

function pod(requests: Record<string, string> = {}, extra: Partial<PodSpec> = {}): PodSpec {
  return { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', ...(Object.keys(requests).length ? { resources: { requests } } : {}) }], ...extra };
}

describe('admissionFailure (the kubelet admitting a pod bound to its node)', () => {
  it('admits what fits beside the pods already admitted', () => {
    assert.equal(admissionFailure(pod({ cpu: '1', memory: '1Gi' }), node(), [pod({ cpu: '1', memory: '3Gi' })]), undefined);
    assert.equal(admissionFailure(pod(), node(), [pod(), pod()]), undefined);
  });

  it("refuses memory, cpu and pods beyond allocatable with the kubelet's reasons and numbers", () => {
    assert.deepEqual(admissionFailure(pod({ memory: '1000Gi' }), node(), []), {
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${1000 * 2 ** 30}, used: 0, capacity: ${4 * 2 ** 30}`,
    });
    assert.deepEqual(admissionFailure(pod({ cpu: '1500m' }), node(), [pod({ cpu: '1' })]), {
      reason: 'OutOfcpu',
      message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000",
    });
    assert.deepEqual(admissionFailure(pod(), node(), [pod(), pod(), pod()]), {
      reason: 'OutOfpods',
      message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
    assert.equal(rejectionMessage({ reason: 'OutOfpods', message: 'x' }), 'Pod was rejected: x');
  });

  it('refuses ephemeral-storage beyond allocatable with OutOfephemeral-storage, and checks none on a node that does not report it', () => {
    const withStorage = node();
    withStorage.status.allocatable['ephemeral-storage'] = '10Gi';
    assert.equal(admissionFailure(pod({ 'ephemeral-storage': '4Gi' }), withStorage, [pod({ 'ephemeral-storage': '6Gi' })]), undefined);
    assert.deepEqual(admissionFailure(pod({ 'ephemeral-storage': '5Gi' }), withStorage, [pod({ 'ephemeral-storage': '6Gi' }), pod()]), {
      reason: 'OutOfephemeral-storage',
      message: `Node didn't have enough resource: ephemeral-storage, requested: ${5 * 2 ** 30}, used: ${6 * 2 ** 30}, capacity: ${10 * 2 ** 30}`,
    });
    assert.ok(ADMISSION_REASONS.includes('OutOfephemeral-storage'));
    assert.equal(admissionFailure(pod({ 'ephemeral-storage': '1Ti' }), node(), []), undefined);
  });

  it('refuses a node selector the node does not match, an untolerated NoExecute taint and a host port in use', () => {
    assert.equal(admissionFailure(pod({}, { nodeSelector: { disk: 'hdd' } }), node(), [])?.reason, 'NodeAffinity');
    assert.equal(admissionFailure(pod({}, { nodeSelector: { disk: 'ssd' } }), node(), []), undefined);
    const tainted = node({ taints: [{ key: 'maintenance', value: 'now', effect: 'NoExecute' }] });
    assert.equal(admissionFailure(pod(), tainted, [])?.reason, 'Taint');
    assert.equal(admissionFailure(pod({}, { tolerations: [{ key: 'maintenance', operator: 'Exists' }] }), tainted, []), undefined);
    const web = (): PodSpec => ({ containers: [{ name: 'web', image: 'jetlet/busybox:1.35', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
    assert.equal(admissionFailure(web(), node(), [web()])?.reason, 'NodePorts');
  });

  it('is not stopped by a cordon or a NoSchedule taint: those keep only the scheduler away', () => {
    assert.equal(
      admissionFailure(pod(), node({ unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }), []),
      undefined,
    );
  });
});
