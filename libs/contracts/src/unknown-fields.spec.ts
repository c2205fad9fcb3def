import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knownKubeFields } from './unknown-fields.js';

describe('knownKubeFields', () => {
  it('names each field Kubernetes does not know, by its path, and drops it from a copy', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', labels: { anything: 'goes' }, colour: 'red' },
      spec: {
        containers: [
          { name: 'main', image: 'x', imagee: 'y', ports: [{ containerPort: 80, protocl: 'TCP' }] },
          { name: 'side', image: 'x', resources: { limits: { memory: '1Gi' } } },
        ],
        restartPolicy: 'Always',
      },
      extra: 1,
    };
    const sut = knownKubeFields('V1Pod', pod);
    assert.deepEqual(sut.unknown, ['metadata.colour', 'spec.containers[0].imagee', 'spec.containers[0].ports[0].protocl', 'extra']);
    assert.deepEqual(sut.known, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', labels: { anything: 'goes' } },
      spec: {
        containers: [
          { name: 'main', image: 'x', ports: [{ containerPort: 80 }] },
          { name: 'side', image: 'x', resources: { limits: { memory: '1Gi' } } },
        ],
        restartPolicy: 'Always',
      },
    });
    assert.equal(pod.spec.containers[0]?.imagee, 'y', 'the input is not changed');
  });

  it('passes fields Kubernetes knows but jetlet may not run, and values of the wrong shape, to validation unchanged', () => {
    const pod = { metadata: { name: 'a' }, spec: { affinity: { nodeAffinity: {} }, containers: 'not a list', hostNetwork: true } };
    const sut = knownKubeFields('V1Pod', pod);
    assert.deepEqual(sut.unknown, []);
    assert.equal(sut.known, pod);
  });

  it('knows Namespaces, ConfigMaps and Secrets', () => {
    assert.deepEqual(knownKubeFields('V1Namespace', { metadata: { name: 'a' }, spec: { finalizers: [] }, spek: {} }).unknown, ['spek']);
    assert.deepEqual(knownKubeFields('V1ConfigMap', { data: {}, binaryData: {}, immutable: true, dat: {} }).unknown, ['dat']);
    assert.deepEqual(knownKubeFields('V1Secret', { data: {}, stringData: {}, type: 'Opaque', strinData: {} }).unknown, ['strinData']);
  });

  it("names Object's own property names in a body as unknown fields, never taking them for known ones", () => {
    const body = JSON.parse('{"metadata":{"name":"a","toString":0},"spec":{"containers":[]},"__proto__":{"x":1},"constructor":1}') as object;
    assert.deepEqual(knownKubeFields('V1Pod', body).unknown.sort(), ['__proto__', 'constructor', 'metadata.toString']);
  });
});
