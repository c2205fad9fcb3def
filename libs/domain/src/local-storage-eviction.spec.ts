import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, PodSpec } from '#contracts';
import { canonicalBytes, hasLocalStorageLimits, localStorageViolation, podEphemeralStorageLimit, type PodStorageUsage } from './local-storage-eviction.js';

const Mi = 1024 * 1024;
const container = (name: string, limit?: string): Container => ({
  name,
  image: 'busybox',
  ...(limit ? { resources: { limits: { 'ephemeral-storage': limit } } } : {}),
});
const usage = (volumes: Record<string, number>, containers: Array<[string, number, number]> = []): PodStorageUsage => ({
  volumes,
  containers: containers.map(([name, rootfsBytes, logBytes]) => ({ name, rootfsBytes, logBytes })),
});

describe('localStorageViolation', () => {
  it("finds an emptyDir above its sizeLimit, with the kubelet's message", () => {
    const spec = { containers: [container('main')], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Mi' } }] } as PodSpec;
    assert.equal(localStorageViolation(spec, usage({ scratch: Mi })), undefined, 'at the limit is within it');
    assert.deepEqual(localStorageViolation(spec, usage({ scratch: Mi + 4096 })), {
      signal: 'emptyDirFsLimit',
      message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
    });
  });

  it('sums writable layers, logs and disk emptyDirs against the pod limit before any container limit', () => {
    const spec = {
      containers: [container('a', '1Mi'), container('b', '2Mi')],
      volumes: [
        { name: 'disk', emptyDir: {} },
        { name: 'ram', emptyDir: { medium: 'Memory' } },
      ],
    } as PodSpec;
    assert.equal(
      localStorageViolation(
        spec,
        usage({ disk: Mi, ram: 10 * Mi }, [
          ['a', Mi / 2, 0],
          ['b', Mi, 0],
        ]),
      ),
      undefined,
      'a tmpfs is not on the disk',
    );
    assert.deepEqual(
      localStorageViolation(
        spec,
        usage({ disk: 2 * Mi }, [
          ['a', Mi / 2, 0],
          ['b', Mi, 0],
        ]),
      ),
      {
        signal: 'ephemeralPodFsLimit',
        message: 'Pod ephemeral local storage usage exceeds the total limit of containers 3Mi. ',
      },
    );
    assert.deepEqual(
      localStorageViolation(
        spec,
        usage({ disk: 0 }, [
          ['a', Mi, 4096],
          ['b', 0, 0],
        ]),
      ),
      {
        signal: 'ephemeralContainerFsLimit',
        message: 'Container a exceeded its local ephemeral storage limit "1Mi". ',
      },
    );
  });

  it("names a lone container's limit as written, and checks nothing without limits", () => {
    const spec = { containers: [container('main', '500Ki'), container('free')] } as PodSpec;
    assert.match(
      localStorageViolation(
        spec,
        usage({}, [
          ['main', 0, 0],
          ['free', Mi, 0],
        ]),
      )?.message ?? '',
      /total limit of containers 500Ki\. $/,
    );
    assert.equal(localStorageViolation({ containers: [container('main')] }, usage({}, [['main', 100 * Mi, Mi]])), undefined);
    assert.equal(hasLocalStorageLimits({ containers: [container('main')] }), false);
    assert.equal(hasLocalStorageLimits({ containers: [container('main')], volumes: [{ name: 'v', emptyDir: { sizeLimit: '1Mi' } }] }), true);
    assert.equal(hasLocalStorageLimits({ containers: [container('main', '1Gi')] }), true);
  });

  it("takes the larger of the containers' sum and an init container's limit, sidecars counted in the sum", () => {
    const sidecar = { ...container('log', '1Mi'), restartPolicy: 'Always' } as Container;
    const spec = { containers: [container('main', '1Mi')], initContainers: [container('setup', '8Mi'), sidecar] } as PodSpec;
    assert.deepEqual(podEphemeralStorageLimit(spec), { bytes: 8 * Mi, text: '8Mi' });
    assert.deepEqual(podEphemeralStorageLimit({ containers: [container('main', '1Mi')], initContainers: [sidecar] }), { bytes: 2 * Mi, text: '2Mi' });
  });
});

describe('canonicalBytes', () => {
  it('prints bytes as Kubernetes prints a binary quantity', () => {
    assert.equal(canonicalBytes(0), '0');
    assert.equal(canonicalBytes(1000), '1000');
    assert.equal(canonicalBytes(1536 * 1024), '1536Ki');
    assert.equal(canonicalBytes(3 * Mi), '3Mi');
    assert.equal(canonicalBytes(1024 * 1024 * 1024), '1Gi');
  });
});
