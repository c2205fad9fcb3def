import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { annotationMapErrors, cleanAbsolutePathErrors, dns1123LabelErrors, dns1123SubdomainErrors, labelMapErrors, qualifiedNameErrors } from './names.js';
import { parseContract, ContractValidationError } from './validation.js';
import { PodManifest } from './pod/pod.model.js';

describe('Kubernetes names', () => {
  it('takes DNS-1123 labels and subdomains as Kubernetes does', () => {
    for (const ok of ['a', 'rel', 'a-b', '0', 'x'.repeat(63)]) assert.deepEqual(dns1123LabelErrors(ok), [], ok);
    for (const bad of ['', '>', '*', 'a b', 'REL', 'rel_x', 'rel.x', 'a/b', '\0', '-a', 'a-', 'x'.repeat(64)])
      assert.notDeepEqual(dns1123LabelErrors(bad), [], bad);
    for (const ok of ['a', 'rel.x', 'a-b.c-d', `${'x'.repeat(63)}.${'y'.repeat(63)}`]) assert.deepEqual(dns1123SubdomainErrors(ok), [], ok);
    for (const bad of ['', '.a', 'a.', 'a..b', 'Bad_Name', 'x'.repeat(254)]) assert.notDeepEqual(dns1123SubdomainErrors(bad), [], bad);
  });

  it('takes qualified-name keys with an optional DNS prefix', () => {
    for (const ok of ['app', 'app.kubernetes.io/name', 'MyName', 'my_name', 'a.b-c']) assert.deepEqual(qualifiedNameErrors(ok), [], ok);
    for (const bad of ['', '/a', 'a/', 'a/b/c', 'Example.com/a', '_a', 'a b', 'x'.repeat(64)]) assert.notDeepEqual(qualifiedNameErrors(bad), [], bad);
  });

  it('takes string label values of at most 63 characters, and no control characters', () => {
    assert.deepEqual(labelMapErrors({ app: 'web', tier: '', v: 'A_b.c-1' }), []);
    for (const bad of [{ app: { a: 1 } }, { app: 7 }, { app: true }, { app: null }, { app: 'x'.repeat(64) }, { app: 'a\u0007b' }, { app: 'a b' }, []]) {
      assert.notDeepEqual(labelMapErrors(bad), [], JSON.stringify(bad));
    }
  });

  it('takes any string annotation up to 256 KiB in all', () => {
    assert.deepEqual(annotationMapErrors({ note: 'multi\nline { "json": true }' }), []);
    assert.deepEqual(annotationMapErrors({ a: 'x'.repeat(128 * 1024), b: 'y'.repeat(128 * 1024 - 2) }), []);
    assert.match(annotationMapErrors({ a: 'x'.repeat(128 * 1024), b: 'y'.repeat(128 * 1024) }).join(), /at most 262144 bytes/);
    assert.notDeepEqual(annotationMapErrors({ a: false }), []);
  });

  it('takes absolute, clean paths only', () => {
    for (const ok of ['/', '/tmp', '/dev/termination-log', '/a/b.c']) assert.deepEqual(cleanAbsolutePathErrors(ok), [], ok);
    for (const bad of ['', 'tmp', './a', '/a/../b', '/a/./b', '//a', '/a/', '/a\nb']) assert.notDeepEqual(cleanAbsolutePathErrors(bad), [], bad);
  });
});

describe('bounds in the pod contract', () => {
  const causes = (container: Record<string, unknown>, spec: Record<string, unknown> = {}): string[] => {
    try {
      parseContract(PodManifest, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...container }], ...spec } });
      return [];
    } catch (error) {
      assert.ok(error instanceof ContractValidationError);
      return error.causes.map((c) => c.field);
    }
  };

  it('accepts the largest values a Node timer and Docker can honour', () => {
    assert.deepEqual(
      causes(
        { livenessProbe: { exec: { command: ['true'] }, periodSeconds: 2_147_483, failureThreshold: 2 ** 31 - 1 } },
        { terminationGracePeriodSeconds: 2_147_483 },
      ),
      [],
    );
    assert.deepEqual(causes({ resources: { limits: { memory: '6Mi', cpu: '10m' }, requests: { memory: '6Mi', cpu: '10m' } } }), []);
    assert.deepEqual(causes({ resources: { limits: { memory: 0 } } }), []);
  });

  it('rejects one more, and quantities Docker refuses or JSON cannot hold', () => {
    assert.deepEqual(causes({ livenessProbe: { exec: { command: ['true'] }, periodSeconds: 2_147_484 } }), ['spec.containers[0].livenessProbe.periodSeconds']);
    assert.deepEqual(causes({}, { terminationGracePeriodSeconds: 2_147_484 }), ['spec.terminationGracePeriodSeconds']);
    for (const limits of [{ memory: '6291455' }, { memory: Infinity }, { memory: -1 }, { memory: '1e400' }, { cpu: '9m' }]) {
      assert.deepEqual(causes({ resources: { limits } }), ['spec.containers[0].resources.limits'], JSON.stringify(limits));
    }
    assert.deepEqual(causes({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }), ['spec.containers[0].resources.requests']);
  });
});
