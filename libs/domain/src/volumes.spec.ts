import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseContract, PodManifest } from '#contracts';
import type { ConfigRecord } from './config-table.js';
import { ContainerConfigError } from './container-env.js';
import { applyPodDefaults, podSpecCauses } from './pod-defaults.js';
import { localPathErrors, projectVolume, volumeConfigRefs, type ProjectionContext } from './volumes.js';

const record = (kind: 'ConfigMap' | 'Secret', name: string, data: Record<string, string>, binaryData?: Record<string, string>): ConfigRecord => ({
  kind,
  namespace: 'team',
  name,
  uid: 'u',
  creationTimestamp: 'T',
  data,
  ...(binaryData ? { binaryData } : {}),
  subjectSeq: 1,
  resourceVersion: 1,
  removed: false,
});

const manifest = (spec: object): PodManifest => parseContract(PodManifest, { metadata: { name: 'web', namespace: 'team', labels: { b: '2', a: '1' } }, spec });
const main = (volumeMounts: object[] = []): object => ({ name: 'main', image: 'jetlet/busybox:1.35', volumeMounts, resources: { limits: { memory: '64Mi' } } });
const fields = (spec: object): string[] =>
  podSpecCauses(manifest(spec))
    .map((c) => `${c.field} ${c.reason}`)
    .sort();

describe('volume validation', () => {
  it('accepts every source with its mounts', () => {
    const spec = {
      containers: [main([{ name: 'scratch', mountPath: '/scratch' }, { name: 'cfg', mountPath: '/etc/app', readOnly: true }, { name: 'cfg', mountPath: '/etc/one', subPath: 'a/b' }])],
      volumes: [
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
        { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
        { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'k', path: 'a/b', mode: 0o600 }], defaultMode: 0o644, optional: true } },
        { name: 'sec', secret: { secretName: 'creds' } },
        { name: 'down', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        { name: 'all', projected: { sources: [{ configMap: { name: 'x' } }, { secret: { name: 'y' } }] } },
      ],
    };
    assert.deepEqual(fields(spec), []);
  });

  it('names each bad field as Kubernetes does', () => {
    const spec = {
      containers: [
        main([
          { name: 'nope', mountPath: '/a' },
          { name: 'one', mountPath: '/a' },
          { name: 'one', mountPath: '/b', subPath: '../etc' },
        ]),
      ],
      volumes: [
        { name: 'one', emptyDir: {} },
        { name: 'one', emptyDir: {} },
        { name: 'none' },
        { name: 'two', emptyDir: {}, hostPath: { path: '/tmp' } },
        { name: 'cfg', configMap: { name: 'c', items: [{ key: 'k', path: '/abs' }, { key: 'j', path: '..x' }] } },
        { name: 'down', downwardAPI: { items: [{ path: 'p', fieldRef: { fieldPath: 'spec.nodeName' } }, { path: 'q', resourceFieldRef: { resource: 'limits.cpu' } }] } },
        { name: 'proj', projected: { sources: [{ configMap: { name: 'x', items: [{ key: 'k', path: 'same' }] } }, { secret: { name: 'y', items: [{ key: 'k', path: 'same' }] } }, {}] } },
      ],
    };
    assert.deepEqual(fields(spec), [
      'spec.containers[0].volumeMounts[0].name FieldValueNotFound',
      'spec.containers[0].volumeMounts[1].mountPath FieldValueInvalid',
      'spec.containers[0].volumeMounts[2].subPath FieldValueInvalid',
      'spec.volumes[1].name FieldValueDuplicate',
      'spec.volumes[2] FieldValueRequired',
      'spec.volumes[3].hostPath FieldValueForbidden',
      'spec.volumes[4].configMap.items[0].path FieldValueInvalid',
      'spec.volumes[4].configMap.items[1].path FieldValueInvalid',
      'spec.volumes[5].downwardAPI.items[0].fieldRef.fieldPath FieldValueNotSupported',
      'spec.volumes[5].downwardAPI.items[1].resourceFieldRef.containerName FieldValueRequired',
      'spec.volumes[6].projected.sources[1].secret.items[0].path FieldValueInvalid',
      'spec.volumes[6].projected.sources[2] FieldValueRequired',
    ]);
  });

  it('refuses a bad mode and an unknown medium or hostPath type in the contract', () => {
    assert.throws(
      () => manifest({ containers: [main()], volumes: [{ name: 'a', configMap: { name: 'c', defaultMode: 0o1777 } }, { name: 'b', emptyDir: { medium: 'Disk' } }, { name: 'c', hostPath: { path: '/x', type: 'Fifo' } }] }),
      (error: Error & { causes: Array<{ field: string }> }) => {
        assert.deepEqual(error.causes.map((c) => c.field).sort(), ['volumes[0].configMap.defaultMode', 'volumes[1].emptyDir.medium', 'volumes[2].hostPath.type'].map((f) => `spec.${f}`));
        return true;
      },
    );
  });

  it('defaults modes and types as Kubernetes does', () => {
    const defaulted = applyPodDefaults(manifest({ containers: [main()], volumes: [{ name: 'c', configMap: { name: 'x' } }, { name: 'h', hostPath: { path: '/x' } }] }));
    assert.deepEqual(defaulted.spec.volumes, [
      { name: 'c', configMap: { name: 'x', defaultMode: 420 } },
      { name: 'h', hostPath: { path: '/x', type: '' } },
    ]);
  });

  it('keeps a path inside its volume', () => {
    assert.deepEqual(localPathErrors('a/b'), []);
    assert.deepEqual(localPathErrors('/etc/passwd'), ['must be a relative path']);
    assert.deepEqual(localPathErrors('a/../../b'), ["must not contain '..'"]);
    assert.deepEqual(localPathErrors('..data', true), ["must not start with '..'"]);
  });
});

describe('projectVolume', () => {
  const ctx = (objects: Partial<Pick<ProjectionContext, 'configMaps' | 'secrets'>> = {}): ProjectionContext => ({
    manifest: manifest({ containers: [main()] }),
    uid: 'uid-1',
    nodeName: 'node-1',
    allocatable: { cpu: '2', memory: '4Gi' },
    configMaps: objects.configMaps ?? new Map<string, ConfigRecord | undefined>(),
    secrets: objects.secrets ?? new Map<string, ConfigRecord | undefined>(),
  });
  const text = (files: Map<string, { data: Buffer; mode: number }>): Record<string, [string, string]> =>
    Object.fromEntries([...files].map(([p, f]) => [p, [f.data.toString('utf8'), f.mode.toString(8)]]));

  it('writes every key of a ConfigMap, binaryData included, with the default mode', () => {
    const configMaps = new Map([['settings', record('ConfigMap', 'settings', { mode: 'fast' }, { blob: Buffer.from('bin').toString('base64') })]]);
    assert.deepEqual(text(projectVolume({ name: 'v', configMap: { name: 'settings' } }, ctx({ configMaps }))), { mode: ['fast', '644'], blob: ['bin', '644'] });
  });

  it('writes only the items of a Secret, decoded, at their paths and modes', () => {
    const secrets = new Map([['creds', record('Secret', 'creds', { password: Buffer.from('s3cret').toString('base64'), user: Buffer.from('me').toString('base64') })]]);
    const files = projectVolume({ name: 'v', secret: { secretName: 'creds', defaultMode: 0o400, items: [{ key: 'password', path: 'db/pw' }, { key: 'user', path: 'u', mode: 0o440 }] } }, ctx({ secrets }));
    assert.deepEqual(text(files), { 'db/pw': ['s3cret', '400'], u: ['me', '440'] });
  });

  it("fails with the kubelet's message for a missing object or key, and not when optional", () => {
    assert.throws(() => projectVolume({ name: 'v', configMap: { name: 'gone' } }, ctx()), new ContainerConfigError('configmap "gone" not found'));
    assert.throws(() => projectVolume({ name: 'v', secret: { secretName: 'gone' } }, ctx()), new ContainerConfigError('secret "gone" not found'));
    const configMaps = new Map([['settings', record('ConfigMap', 'settings', {})]]);
    assert.throws(
      () => projectVolume({ name: 'v', configMap: { name: 'settings', items: [{ key: 'k', path: 'k' }] } }, ctx({ configMaps })),
      new ContainerConfigError('configmap references non-existent config key: k'),
    );
    assert.equal(projectVolume({ name: 'v', configMap: { name: 'gone', optional: true } }, ctx()).size, 0);
  });

  it('writes the downward API: labels sorted, names and resources', () => {
    const files = projectVolume(
      {
        name: 'v',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
            { path: 'mem', resourceFieldRef: { containerName: 'main', resource: 'limits.memory', divisor: '1Mi' } },
          ],
        },
      },
      ctx(),
    );
    assert.deepEqual(text(files), { labels: ['a="1"\nb="2"', '644'], name: ['web', '644'], mem: ['64', '644'] });
  });

  it('merges the sources of a projected volume under its defaultMode', () => {
    const configMaps = new Map([['settings', record('ConfigMap', 'settings', { mode: 'fast' })]]);
    const secrets = new Map([['creds', record('Secret', 'creds', { pw: Buffer.from('x').toString('base64') })]]);
    const files = projectVolume(
      { name: 'v', projected: { defaultMode: 0o440, sources: [{ configMap: { name: 'settings' } }, { secret: { name: 'creds' } }, { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } }] } },
      ctx({ configMaps, secrets }),
    );
    assert.deepEqual(text(files), { mode: ['fast', '440'], pw: ['x', '440'], ns: ['team', '440'] });
  });

  it('lists the objects volumes read', () => {
    const refs = volumeConfigRefs([
      { name: 'a', configMap: { name: 'c1' } },
      { name: 'b', secret: { secretName: 's1' } },
      { name: 'c', projected: { sources: [{ configMap: { name: 'c2' } }, { secret: { name: 's2' } }] } },
    ]);
    assert.deepEqual([[...refs.configMaps], [...refs.secrets]], [['c1', 'c2'], ['s1', 's2']]);
  });
});
