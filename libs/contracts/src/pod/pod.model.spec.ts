import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContractValidationError, parseContract, type FieldCause } from '../validation.js';
import { PodManifest } from './pod.model.js';

/** A manifest as `kubectl create -f` would send it, using every field jetlet supports. */
function realisticManifest(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-0',
      namespace: 'shop',
      labels: { app: 'web', 'app.kubernetes.io/part-of': 'shop' },
      annotations: { 'example.com/owner': 'team-a' },
    },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.27',
          command: ['nginx'],
          args: ['-g', 'daemon off;'],
          workingDir: '/usr/share/nginx',
          env: [{ name: 'NGINX_PORT', value: '8080' }, { name: 'EMPTY' }],
          ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
          resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } },
          imagePullPolicy: 'IfNotPresent',
        },
        {
          name: 'log-shipper',
          image: 'busybox:1.36',
          command: ['sh', '-c'],
          args: ['tail -F /var/log/nginx/access.log'],
          env: [{ name: 'TARGET', value: 'logs.example.com:514' }],
          ports: [{ containerPort: 514, protocol: 'UDP' }],
          resources: { requests: { cpu: '0.1', memory: '16Mi' }, limits: { cpu: '200m', memory: '1e8' } },
          imagePullPolicy: 'Always',
        },
      ],
      restartPolicy: 'OnFailure',
      nodeSelector: { 'kubernetes.io/os': 'linux', disk: 'ssd' },
      terminationGracePeriodSeconds: 45,
    },
  };
}

/** Parses a manifest that must be rejected and returns the causes. */
function causesOf(plain: unknown): FieldCause[] {
  try {
    parseContract(PodManifest, plain);
  } catch (error) {
    assert.ok(error instanceof ContractValidationError, `expected a ContractValidationError, got ${String(error)}`);
    return error.causes;
  }
  assert.fail('the manifest was accepted');
}

function causeAt(causes: FieldCause[], field: string): FieldCause {
  const cause = causes.find((c) => c.field === field);
  assert.ok(cause, `no cause for ${field}; causes: ${JSON.stringify(causes)}`);
  return cause;
}

/** The realistic manifest with every kind of mistake a user makes at once. */
function badManifest(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'Web_0', namespace: 'shop' },
    spec: {
      hostNetwork: true,
      restartPolicy: 'Sometimes',
      containers: [
        {
          name: 'nginx',
          image: '',
          ports: [{ containerPort: 70000 }],
          volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }],
        },
        { name: 'log-shipper', image: 'busybox:1.36', resources: { limits: { cpu: '12xyz' } } },
      ],
    },
  };
}

describe('PodManifest', () => {
  it('parses a realistic Kubernetes pod manifest unchanged', () => {
    const input = realisticManifest();

    const sut = parseContract(PodManifest, structuredClone(input));

    assert.ok(sut instanceof PodManifest);
    assert.deepEqual(JSON.parse(JSON.stringify(sut)), input);
  });

  it('accepts the minimal manifest: a name and one container', () => {
    const input = { metadata: { name: 'tiny' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

    const sut = parseContract(PodManifest, structuredClone(input));

    assert.deepEqual(JSON.parse(JSON.stringify(sut)), input);
  });

  it('accepts what `kubectl run` sends, defaults and nulls included', () => {
    const input = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'x', creationTimestamp: null, labels: { run: 'x' } },
      spec: {
        containers: [{ name: 'x', image: 'busybox:1.35', resources: {}, securityContext: {}, ports: [{ containerPort: 80, protocol: 'TCP' }] }],
        restartPolicy: 'Always',
        dnsPolicy: 'ClusterFirst',
        enableServiceLinks: true,
        schedulerName: 'default-scheduler',
        securityContext: {},
        serviceAccountName: 'default',
        serviceAccount: 'default',
        priority: 0,
        preemptionPolicy: 'PreemptLowerPriority',
      },
      status: {},
    };

    assert.doesNotThrow(() => parseContract(PodManifest, structuredClone(input)));
  });

  it('rejects defaults-shaped fields that would change behaviour jetlet cannot honour, naming each', () => {
    const causes = causesOf({
      metadata: { name: 'x' },
      spec: {
        containers: [{ name: 'x', image: 'y', securityContext: { procMount: 'Unmasked' } }],
        dnsPolicy: 'None',
        schedulerName: 'my-scheduler',
        securityContext: { seLinuxOptions: { level: 's0:c123,c456' } },
        serviceAccountName: 'robot',
        priority: 1000,
      },
    });

    assert.deepEqual(causes.map((c) => `${c.field}:${c.reason}`).sort(), [
      'spec.containers[0].securityContext.procMount:FieldValueNotSupported',
      'spec.dnsPolicy:FieldValueNotSupported',
      'spec.priority:FieldValueNotSupported',
      'spec.schedulerName:FieldValueNotSupported',
      'spec.securityContext.seLinuxOptions:FieldValueNotSupported',
      'spec.serviceAccountName:FieldValueNotSupported',
    ]);
  });

  it('lists every bad field of a manifest, with its path, not only the first', () => {
    const causes = causesOf(badManifest());

    assert.deepEqual(causes.map((c) => c.field).sort(), [
      'metadata.name',
      'spec.containers[0].image',
      'spec.containers[0].ports[0].containerPort',
      'spec.containers[0].volumeDevices',
      'spec.containers[1].resources.limits',
      'spec.hostNetwork',
      'spec.restartPolicy',
    ]);
  });

  it('rejects a name that is not an RFC 1123 subdomain as FieldValueInvalid', () => {
    const cause = causeAt(causesOf(badManifest()), 'metadata.name');

    assert.equal(cause.reason, 'FieldValueInvalid');
    assert.match(cause.message, /^Invalid value: "[^"]+": /);
    assert.match(cause.message, /RFC 1123/);
  });

  it('rejects port 70000 as FieldValueInvalid', () => {
    const cause = causeAt(causesOf(badManifest()), 'spec.containers[0].ports[0].containerPort');

    assert.equal(cause.reason, 'FieldValueInvalid');
    assert.match(cause.message, /65535/);
  });

  it('rejects a bad quantity in limits, naming the bad value', () => {
    const cause = causeAt(causesOf(badManifest()), 'spec.containers[1].resources.limits');

    assert.equal(cause.reason, 'FieldValueInvalid');
    assert.match(cause.message, /12xyz/);
  });

  it('rejects unknown fields with FieldValueNotSupported at any depth', () => {
    const causes = causesOf(badManifest());

    assert.equal(causeAt(causes, 'spec.hostNetwork').reason, 'FieldValueNotSupported');
    assert.equal(causeAt(causes, 'spec.containers[0].volumeDevices').reason, 'FieldValueNotSupported');
  });

  it('rejects a restart policy outside Always, OnFailure and Never, naming the allowed values', () => {
    const cause = causeAt(causesOf(badManifest()), 'spec.restartPolicy');

    assert.match(cause.message, /"Always", "OnFailure", "Never"/);
  });

  it('reports a restart policy outside the enum as FieldValueNotSupported, as Kubernetes does', () => {
    const cause = causeAt(causesOf(badManifest()), 'spec.restartPolicy');

    assert.equal(cause.reason, 'FieldValueNotSupported');
  });

  it('reports an empty image as FieldValueRequired, as Kubernetes does ("spec.containers[0].image: Required value")', () => {
    const cause = causeAt(causesOf(badManifest()), 'spec.containers[0].image');

    assert.equal(cause.reason, 'FieldValueRequired');
  });

  it('reports a missing spec.containers as FieldValueRequired', () => {
    const causes = causesOf({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: {} });

    assert.deepEqual(causes, [{ field: 'spec.containers', reason: 'FieldValueRequired', message: 'Required value' }]);
  });

  it('rejects an empty containers list as FieldValueInvalid', () => {
    const causes = causesOf({ metadata: { name: 'web' }, spec: { containers: [] } });

    assert.equal(causeAt(causes, 'spec.containers').reason, 'FieldValueInvalid');
    assert.match(causeAt(causes, 'spec.containers').message, /at least one container/);
  });

  it('reports missing metadata and spec as FieldValueRequired', () => {
    const causes = causesOf({ apiVersion: 'v1', kind: 'Pod' });

    assert.deepEqual(causes.map((c) => [c.field, c.reason]).sort(), [
      ['metadata', 'FieldValueRequired'],
      ['spec', 'FieldValueRequired'],
    ]);
  });

  it('rejects another apiVersion or kind', () => {
    const causes = causesOf({ ...realisticManifest(), apiVersion: 'apps/v1', kind: 'Deployment' });

    assert.deepEqual(causes.map((c) => [c.field, c.reason, c.message]).sort(), [
      ['apiVersion', 'FieldValueInvalid', 'Invalid value: "apps/v1": apiVersion must be v1'],
      ['kind', 'FieldValueInvalid', 'Invalid value: "Deployment": kind must be Pod'],
    ]);
  });

  it('rejects resources other than cpu, memory and ephemeral-storage', () => {
    const manifest = realisticManifest();
    const spec = manifest.spec as { containers: Array<Record<string, unknown>> };
    spec.containers[0].resources = { limits: { 'nvidia.com/gpu': '1' } };

    const causes = causesOf(manifest);

    assert.deepEqual(
      causes.map((c) => c.field),
      ['spec.containers[0].resources.limits'],
    );
    assert.match(causes[0]?.message ?? '', /supported resources: "cpu", "memory", "ephemeral-storage"/);
  });

  it('accepts ephemeral-storage requests and limits, and refuses a request above its limit', () => {
    const manifest = realisticManifest();
    const spec = manifest.spec as { containers: Array<Record<string, unknown>> };
    spec.containers[0].resources = { requests: { 'ephemeral-storage': '1Gi' }, limits: { 'ephemeral-storage': '2Gi' } };
    const parsed = parseContract(PodManifest, manifest);
    assert.equal(parsed.spec.containers[0]?.resources?.limits?.['ephemeral-storage'], '2Gi');

    spec.containers[0].resources = { requests: { 'ephemeral-storage': '3Gi' }, limits: { 'ephemeral-storage': '2Gi' } };
    assert.deepEqual(
      causesOf(manifest).map((c) => c.field),
      ['spec.containers[0].resources.requests'],
    );
  });

  it('rejects a bad environment variable name and an uppercase container name at their paths', () => {
    const causes = causesOf({
      metadata: { name: 'web' },
      spec: {
        containers: [
          {
            name: 'Web',
            image: 'nginx',
            env: [
              { name: 'GOOD', value: '1' },
              { name: 'BAD=NAME', value: '2' },
            ],
          },
        ],
      },
    });

    assert.deepEqual(causes.map((c) => c.field).sort(), ['spec.containers[0].env[1].name', 'spec.containers[0].name']);
  });

  it('names the contract and every cause in the error message', () => {
    assert.throws(
      () => parseContract(PodManifest, badManifest()),
      (error: unknown) =>
        error instanceof ContractValidationError &&
        error.contract === 'PodManifest' &&
        error.message.startsWith('invalid PodManifest: ') &&
        error.message.includes('spec.containers[0].ports[0].containerPort: ') &&
        error.message.includes('spec.hostNetwork: '),
    );
  });
});
