import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, PodManifest } from '#contracts';
import type { ConfigRecord } from './config-table.js';
import { ContainerConfigError, containerEnv, envConfigRefs, expandCommand, expandVars, resourceFieldValue, type EnvContext } from './container-env.js';

const record = (kind: 'ConfigMap' | 'Secret', name: string, data: Record<string, string>): ConfigRecord => ({
  kind,
  namespace: 'team',
  name,
  uid: 'u',
  creationTimestamp: 'T',
  data,
  subjectSeq: 1,
  resourceVersion: 1,
  removed: false,
});

const container: Container = {
  name: 'app',
  image: 'jetlet/busybox:1.35',
  command: ['echo', '$(GREETING) $(MISSING) $$(ESCAPED)'],
  resources: { limits: { memory: '64Mi' }, requests: { cpu: '250m' } },
  envFrom: [{ configMapRef: { name: 'settings' } }, { prefix: 'S_', secretRef: { name: 'creds' } }],
  env: [
    { name: 'GREETING', value: 'hello $(mode)' },
    { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
    { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level' } } },
    { name: 'OPTIONAL', valueFrom: { configMapKeyRef: { name: 'absent', key: 'x', optional: true } } },
    { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.labels['team']" } } },
    { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
    { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
    { name: 'CPU_REQ_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
  ],
};

const manifest: PodManifest = { metadata: { name: 'web', namespace: 'team', labels: { team: 'blue' } }, spec: { containers: [container] } };

const ctx = (configMaps: ConfigRecord[], secrets: ConfigRecord[]): EnvContext => ({
  manifest,
  uid: 'pod-uid',
  nodeName: 'node-1',
  hostIP: '10.0.0.1',
  podIP: '172.17.0.9',
  allocatable: { cpu: '3', memory: '8Gi' },
  configMaps: new Map<string, ConfigRecord | undefined>([['absent', undefined], ...configMaps.map((r) => [r.name, r] as [string, ConfigRecord])]),
  secrets: new Map(secrets.map((r) => [r.name, r])),
});

describe('containerEnv', () => {
  const settings = record('ConfigMap', 'settings', { mode: 'fast', level: '3' });
  const creds = record('Secret', 'creds', { password: Buffer.from('s3cr3t').toString('base64'), user: Buffer.from('admin').toString('base64') });

  it('makes the environment as the kubelet does: envFrom, then env, downward API and resources', () => {
    const env = Object.fromEntries(containerEnv(container, ctx([settings], [creds])).map((e) => [e.name, e.value]));
    assert.deepEqual(env, {
      mode: 'fast',
      level: '3',
      S_password: 's3cr3t',
      S_user: 'admin',
      GREETING: 'hello fast',
      PASSWORD: 's3cr3t',
      LEVEL: '3',
      POD: 'web',
      TEAM: 'blue',
      IP: '172.17.0.9',
      MEM_MI: '64',
      CPU_LIMIT: '3',
      CPU_REQ_M: '250',
    });
    const expanded = expandCommand(container, containerEnv(container, ctx([settings], [creds])));
    assert.deepEqual(expanded.command, ['echo', 'hello fast $(MISSING) $(ESCAPED)']);
    assert.deepEqual([...envConfigRefs([container]).configMaps].sort(), ['absent', 'settings']);
  });

  it("fails with the kubelet's messages for what is missing and not optional", () => {
    assert.throws(() => containerEnv(container, ctx([], [creds])), new ContainerConfigError('configmap "settings" not found'));
    const noKey = record('ConfigMap', 'settings', { mode: 'fast' });
    assert.throws(() => containerEnv(container, ctx([noKey], [creds])), new ContainerConfigError("couldn't find key level in ConfigMap team/settings"));
    assert.throws(() => containerEnv(container, ctx([settings], [])), new ContainerConfigError('secret "creds" not found'));
  });

  it('expands $(VAR) as Kubernetes', () => {
    const vars = new Map([['A', 'x']]);
    assert.equal(
      expandVars('$(A)-$(B)-$$(A)-$A-$(', (n) => vars.get(n)),
      'x-$(B)-$(A)-$A-$(',
    );
  });
});

describe('resourceFieldValue', () => {
  it("reads the node's allocatable ephemeral-storage for an unset limit, and the container's own when set, as the kubelet does", () => {
    const pod = (limits: Record<string, string> = {}): PodManifest => ({
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x', resources: { limits } }] },
    });
    const allocatable = { cpu: '2', memory: '8Gi', 'ephemeral-storage': '20971520Ki' };

    assert.equal(resourceFieldValue({ resource: 'limits.ephemeral-storage', divisor: '1Gi' }, pod(), 'c', allocatable), '20');
    assert.equal(resourceFieldValue({ resource: 'limits.ephemeral-storage', divisor: '1Mi' }, pod({ 'ephemeral-storage': '512Mi' }), 'c', allocatable), '512');
    assert.equal(resourceFieldValue({ resource: 'requests.ephemeral-storage' }, pod({ 'ephemeral-storage': '1Ki' }), 'c', allocatable), '1024');
  });
});
