import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodManifest } from '#contracts';
import { applyPodDefaults, defaultPullPolicy, podSpecCauses } from './pod-defaults.js';

function manifest(containers: PodManifest['spec']['containers'], spec: Partial<PodManifest['spec']> = {}): PodManifest {
  return { metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' } }, spec: { containers, ...spec } };
}

describe('defaultPullPolicy', () => {
  for (const [image, policy] of [
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['library/nginx', 'Always'],
    ['docker.io/library/nginx:latest', 'Always'],
    ['nginx:1.35', 'IfNotPresent'],
    ['registry.k8s.io/pause:3.9', 'IfNotPresent'],
    ['nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31', 'IfNotPresent'],
    ['127.0.0.1:5000/x', 'Always'],
    ['127.0.0.1:5000/x:1', 'IfNotPresent'],
    ['127.0.0.1:5000/team/x:latest', 'Always'],
    ['localhost:5000/x@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31', 'IfNotPresent'],
  ] as const) {
    it(`is ${policy} for ${image}`, () => {
      assert.equal(defaultPullPolicy(image), policy);
    });
  }
});

describe('applyPodDefaults', () => {
  it('fills in apiVersion, kind, the pod-level defaults Kubernetes shows and each container pull policy', () => {
    const input = manifest([
      { name: 'app', image: 'nginx' },
      { name: 'side', image: 'busybox:1.36' },
    ]);

    const sut = applyPodDefaults(input);

    assert.deepEqual(sut, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'nginx',
            resources: {},
            imagePullPolicy: 'Always',
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
          {
            name: 'side',
            image: 'busybox:1.36',
            resources: {},
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        enableServiceLinks: true,
        schedulerName: 'default-scheduler',
        securityContext: {},
        serviceAccountName: 'default',
        serviceAccount: 'default',
        priority: 0,
        preemptionPolicy: 'PreemptLowerPriority',
      },
    });
  });

  it('defaults each port protocol to TCP and keeps a given one', () => {
    const sut = applyPodDefaults(manifest([{ name: 'app', image: 'x:1', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }]));

    assert.deepEqual(sut.spec.containers[0]?.ports, [
      { containerPort: 80, protocol: 'TCP' },
      { containerPort: 53, protocol: 'UDP' },
    ]);
  });

  it('keeps the DNS policy, service links and service account the client sent', () => {
    const sut = applyPodDefaults(manifest([{ name: 'app', image: 'x:1' }], { dnsPolicy: 'Default', enableServiceLinks: false, serviceAccount: 'default' }));

    assert.equal(sut.spec.dnsPolicy, 'Default');
    assert.equal(sut.spec.enableServiceLinks, false);
    assert.equal(sut.spec.serviceAccountName, 'default');
  });

  it('keeps what the user set, a zero grace period included', () => {
    const input = manifest([{ name: 'app', image: 'nginx', imagePullPolicy: 'Never' }], {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      nodeSelector: { disk: 'ssd' },
    });

    const sut = applyPodDefaults(input);

    assert.equal(sut.spec.containers[0].imagePullPolicy, 'Never');
    assert.equal(sut.spec.restartPolicy, 'Never');
    assert.equal(sut.spec.terminationGracePeriodSeconds, 0);
    assert.deepEqual(sut.spec.nodeSelector, { disk: 'ssd' });
  });

  it('leaves its input untouched', () => {
    const input = manifest([{ name: 'app', image: 'nginx' }]);
    const before = structuredClone(input);

    applyPodDefaults(input);

    assert.deepEqual(input, before);
  });

  it('is idempotent', () => {
    const once = applyPodDefaults(manifest([{ name: 'app', image: 'nginx:1.27' }], { restartPolicy: 'OnFailure' }));

    assert.deepEqual(applyPodDefaults(once), once);
  });
});

describe('podSpecCauses', () => {
  it('finds nothing wrong with distinct container names', () => {
    assert.deepEqual(
      podSpecCauses(
        manifest([
          { name: 'a', image: 'x' },
          { name: 'b', image: 'x' },
        ]),
      ),
      [],
    );
  });

  it('reports each repeated container name at its index as FieldValueDuplicate', () => {
    const sut = podSpecCauses(
      manifest([
        { name: 'app', image: 'x' },
        { name: 'side', image: 'x' },
        { name: 'app', image: 'y' },
        { name: 'app', image: 'z' },
      ]),
    );

    assert.deepEqual(sut, [
      { field: 'spec.containers[2].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "app"' },
      { field: 'spec.containers[3].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "app"' },
    ]);
  });
});

describe('probe defaults and checks', () => {
  const withProbe = (container: Record<string, unknown>): PodManifest => ({
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'busybox:1', ...container }] },
  });

  it('applies Kubernetes probe defaults and the termination message defaults', () => {
    const sut = applyPodDefaults(withProbe({ livenessProbe: { httpGet: { port: 8080 } } })).spec.containers[0];
    assert.deepEqual(sut?.livenessProbe, {
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      initialDelaySeconds: 0,
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.equal(sut?.terminationMessagePath, '/dev/termination-log');
    assert.equal(sut?.terminationMessagePolicy, 'File');
    assert.equal(sut?.readinessProbe, undefined);
  });

  it('names a probe without a handler, one with two, a liveness successThreshold other than 1, and an unknown named port', () => {
    const sut = podSpecCauses(
      withProbe({
        ports: [{ containerPort: 80, name: 'http' }],
        livenessProbe: { successThreshold: 2, exec: { command: ['true'] } },
        readinessProbe: {},
        startupProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } },
        lifecycle: { preStop: { httpGet: { port: 'nope' } } },
      }),
    );
    assert.deepEqual(
      sut.map((c) => `${c.field}:${c.reason}`),
      [
        'spec.containers[0].readinessProbe:FieldValueRequired',
        'spec.containers[0].startupProbe.tcpSocket:FieldValueForbidden',
        'spec.containers[0].livenessProbe.successThreshold:FieldValueInvalid',
        'spec.containers[0].lifecycle.preStop.httpGet.port:FieldValueInvalid',
      ],
    );
  });
});
