import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { STREAMS, SUBJECTS, type Pod } from '#contracts';
import { Cluster } from '../harness/cluster.js';

interface Status {
  kind: string;
  reason: string;
  code: number;
  message: string;
  details?: { causes?: Array<{ field: string; reason: string; message: string }> };
}

const pod = (
  name: string,
  container: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...metadata },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '60'], ...container }], ...spec },
});

/** Sends a request and gives up after `ms`: a hang is a failure, not a stuck suite. */
async function send(
  sut: Cluster,
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
  ms = 20_000,
): Promise<{ status: number; body: Status }> {
  const response = await fetch(`${sut.apiUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(ms),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Status };
}

const fields = (status: Status): string[] => (status.details?.causes ?? []).map((c) => c.field).sort();

/**
 * Nothing enters the log that a reader will reject: URL parameters, bounds, labels, sizes
 * and depths are checked before anything is published, and a message readers skip never
 * makes a name unusable.
 */
describe('the API refuses what no reader would accept', () => {
  let sut: Cluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const messages = async (): Promise<number> => (await jsm.streams.info(STREAMS.pods)).state.messages;

  before(async () => {
    sut = await Cluster.start({ WRITE_TIMEOUT_SECONDS: '60' });
    nc = await connect({ servers: sut.nats.url });
    jsm = await jetstreamManager(nc);
  });

  after(async () => {
    await nc?.close();
    await sut?.stop();
  });

  it('answers a 4xx Status for every bad namespace, pod or node name in the URL, on every route, and writes nothing', { timeout: 120_000 }, async () => {
    const before = await messages();
    const badNamespaces = ['>', '*', 'a b', 'REL', 'rel_x', 'rel.x', 'a/b', 'x'.repeat(300), '\0', '-a', 'a-'];
    const badNames = ['>', '*', 'a b', 'Bad_Name', 'a/b', 'x'.repeat(254), '\0', '.a', 'a..b'];
    const valid = JSON.stringify(pod('fine'));
    const patch = JSON.stringify({ metadata: { labels: { a: 'b' } } });
    const routes: Array<[string, string, string | undefined, string?]> = [];
    for (const ns of badNamespaces) {
      const at = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`;
      routes.push(['POST', at, valid], ['GET', at, undefined], ['GET', `${at}/fine`, undefined], ['DELETE', `${at}/fine`, undefined]);
      routes.push(['PUT', `${at}/fine`, valid], ['PATCH', `${at}/fine`, patch, 'application/merge-patch+json'], ['GET', `${at}/fine/log`, undefined]);
    }
    for (const name of badNames) {
      const at = `/api/v1/namespaces/default/pods/${encodeURIComponent(name)}`;
      routes.push(['GET', at, undefined], ['DELETE', at, undefined], ['PUT', at, valid], ['PATCH', at, patch, 'application/merge-patch+json']);
      routes.push(['GET', `${at}/log`, undefined], ['GET', `/api/v1/nodes/${encodeURIComponent(name)}`, undefined]);
      routes.push(['PATCH', `/api/v1/nodes/${encodeURIComponent(name)}`, JSON.stringify({ spec: { unschedulable: true } }), 'application/merge-patch+json']);
    }
    for (const [method, path, body, type] of routes) {
      const { status, body: answer } = await send(sut, method, path, body, type);
      assert.ok(status === 400 || status === 404 || status === 422, `${method} ${path}: ${status} ${JSON.stringify(answer)}`);
      assert.equal(answer.kind, 'Status', `${method} ${path}`);
    }
    const namespaceAnswer = await send(sut, 'POST', '/api/v1/namespaces/rel_x/pods', valid);
    assert.equal(namespaceAnswer.status, 422);
    assert.deepEqual(fields(namespaceAnswer.body), ['metadata.namespace']);
    assert.equal(await messages(), before);
  });

  it('keeps rel.x and rel-x pods apart from each other and from any other name', async () => {
    for (const name of ['rel.x', 'rel-x', 'rel']) {
      const created = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod(name)));
      assert.equal(created.status, 201, `${name}: ${JSON.stringify(created.body)}`);
    }
    const subjects = new Set(['rel.x', 'rel-x', 'rel'].map((name) => SUBJECTS.pod('default', name)));
    assert.equal(subjects.size, 3);
  });

  it('rejects a number JSON cannot hold instead of storing it as null', async () => {
    const body = JSON.stringify(pod('huge-memory')).replace('"command"', '"resources":{"limits":{"memory":1e400}},"command"');
    const { status, body: answer } = await send(sut, 'POST', '/api/v1/namespaces/default/pods', body);
    assert.equal(status, 422, JSON.stringify(answer));
    assert.deepEqual(fields(answer), ['spec.containers[0].resources.limits']);
  });

  it('bounds grace periods, probe timings, quantities and the container count as Kubernetes and Docker can honour them', async () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['grace', pod('grace', {}, { terminationGracePeriodSeconds: 1e300 }), ['spec.terminationGracePeriodSeconds']],
      [
        'period',
        pod('period', { livenessProbe: { exec: { command: ['true'] }, periodSeconds: 3_000_000 } }),
        ['spec.containers[0].livenessProbe.periodSeconds'],
      ],
      [
        'probe-numbers',
        pod('probe-numbers', {
          readinessProbe: {
            tcpSocket: { port: 80 },
            timeoutSeconds: 3_000_000,
            initialDelaySeconds: 3_000_000,
            failureThreshold: 2 ** 31,
            successThreshold: 2 ** 31,
          },
        }),
        [
          'spec.containers[0].readinessProbe.failureThreshold',
          'spec.containers[0].readinessProbe.initialDelaySeconds',
          'spec.containers[0].readinessProbe.successThreshold',
          'spec.containers[0].readinessProbe.timeoutSeconds',
        ],
      ],
      ['tiny-memory', pod('tiny-memory', { resources: { limits: { memory: '1' } } }), ['spec.containers[0].resources.limits']],
      ['tiny-cpu', pod('tiny-cpu', { resources: { limits: { cpu: '1m' } } }), ['spec.containers[0].resources.limits']],
      [
        'request-over-limit',
        pod('request-over-limit', { resources: { requests: { memory: '128Mi' }, limits: { memory: '64Mi' } } }),
        ['spec.containers[0].resources.requests'],
      ],
      [
        'many',
        { ...pod('many'), spec: { containers: Array.from({ length: 1000 }, (_, i) => ({ name: `c${i}`, image: 'jetlet/busybox:1.35' })) } },
        ['spec.containers'],
      ],
    ];
    const before = await messages();
    for (const [name, manifest, expected] of cases) {
      const { status, body } = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(manifest));
      assert.equal(status, 422, `${name}: ${JSON.stringify(body)}`);
      assert.deepEqual(fields(body), expected, name);
    }
    const tiny = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(cases[3]?.[1]));
    assert.match(tiny.body.message, /6Mi/);
    assert.equal(await messages(), before);
  });

  it('bounds the grace period of a deletion, in the query and in the body', async () => {
    const created = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('graceful')));
    assert.equal(created.status, 201);
    const query = await send(sut, 'DELETE', '/api/v1/namespaces/default/pods/graceful?gracePeriodSeconds=1e300');
    assert.equal(query.status, 422, JSON.stringify(query.body));
    const body = await send(sut, 'DELETE', '/api/v1/namespaces/default/pods/graceful', JSON.stringify({ gracePeriodSeconds: 99_999_999 }));
    assert.equal(body.status, 422, JSON.stringify(body.body));
    assert.deepEqual(fields(body.body), ['gracePeriodSeconds']);
    const ok = await send(sut, 'DELETE', '/api/v1/namespaces/default/pods/graceful', JSON.stringify({ gracePeriodSeconds: 5 }));
    assert.equal(ok.status, 200);
  });

  it('checks labels, annotations, paths and images as Kubernetes and Docker do', async () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['label-object', pod('l1', {}, {}, { labels: { app: { nested: true } } }), ['metadata.labels']],
      ['label-number', pod('l2', {}, {}, { labels: { app: 7 } }), ['metadata.labels']],
      ['label-long', pod('l3', {}, {}, { labels: { app: 'v'.repeat(64) } }), ['metadata.labels']],
      ['label-control', pod('l4', {}, {}, { labels: { app: 'a\u0007b' } }), ['metadata.labels']],
      ['label-key', pod('l5', {}, {}, { labels: { 'bad key': 'x' } }), ['metadata.labels']],
      ['annotation-bool', pod('a1', {}, {}, { annotations: { note: true } }), ['metadata.annotations']],
      ['annotation-size', pod('a2', {}, {}, { annotations: { note: 'x'.repeat(300 * 1024) } }), ['metadata.annotations']],
      ['selector', pod('s1', {}, { nodeSelector: { 'x/y/z': 'a' } }), ['spec.nodeSelector']],
      ['node-name', pod('n1', {}, { nodeName: 'Not A Node' }), ['spec.nodeName']],
      ['working-dir', pod('w1', { workingDir: 'relative/dir' }), ['spec.containers[0].workingDir']],
      ['working-dir-unclean', pod('w2', { workingDir: '/a/../b' }), ['spec.containers[0].workingDir']],
      ['termination-path', pod('t1', { terminationMessagePath: '/dev/../etc/passwd' }), ['spec.containers[0].terminationMessagePath']],
      ['image', pod('i1', { image: 'Not/An:Image:Ref' }), ['spec.containers[0].image']],
      ['image-space', pod('i2', { image: ' jetlet/busybox:1.35' }), ['spec.containers[0].image']],
    ];
    const before = await messages();
    for (const [name, manifest, expected] of cases) {
      const { status, body } = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(manifest));
      assert.equal(status, 422, `${name}: ${JSON.stringify(body)}`);
      assert.deepEqual(fields(body), expected, name);
    }
    assert.equal(await messages(), before);
    const fine = pod('labelled', { workingDir: '/tmp' }, {}, { labels: { 'app.kubernetes.io/name': 'web', tier: '' }, annotations: { note: 'multi\nline' } });
    const created = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(fine));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const patched = await send(
      sut,
      'PATCH',
      '/api/v1/namespaces/default/pods/labelled',
      JSON.stringify({ metadata: { labels: { tier: { a: 1 } } } }),
      'application/merge-patch+json',
    );
    assert.equal(patched.status, 422, JSON.stringify(patched.body));
  });

  it('answers 413 for a body too big for the log, and 4xx for deep or huge input, never a 500', { timeout: 60_000 }, async () => {
    const before = await messages();
    // Valid, and under Kubernetes' 1.5 MiB, but over NATS's 1 MiB message limit.
    const overBus = JSON.stringify(pod('big', { env: [{ name: 'BLOB', value: 'x'.repeat(1_100_000) }] }));
    const tooBigForBus = await send(sut, 'POST', '/api/v1/namespaces/default/pods', overBus);
    assert.equal(tooBigForBus.status, 413, JSON.stringify(tooBigForBus.body));
    assert.equal(tooBigForBus.body.reason, 'RequestEntityTooLarge');
    const overObject = JSON.stringify(pod('bigger', { env: [{ name: 'BLOB', value: 'x'.repeat(2_000_000) }] }));
    const tooBig = await send(sut, 'POST', '/api/v1/namespaces/default/pods', overObject);
    assert.equal(tooBig.status, 413, JSON.stringify(tooBig.body));
    assert.equal(tooBig.body.reason, 'RequestEntityTooLarge');
    const huge = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify({ ...pod('huge'), pad: 'x'.repeat(4 * 1024 * 1024) }));
    assert.equal(huge.status, 413);
    assert.equal(huge.body.kind, 'Status');

    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const deepCreate = await send(
      sut,
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify(pod('deep')).replace('"kind":"Pod"', `"kind":"Pod","status":${deep}`),
    );
    assert.equal(deepCreate.status, 400, JSON.stringify(deepCreate.body));
    const wide = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('wide', { args: Array.from({ length: 100_000 }, () => 'a') })));
    assert.ok(wide.status === 400 || wide.status === 422, JSON.stringify(wide.body));
    const manyContainers = await send(
      sut,
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify({ ...pod('wide2'), spec: { containers: Array.from({ length: 100_000 }, () => 1) } }),
    );
    assert.ok(manyContainers.status === 400 || manyContainers.status === 422, JSON.stringify(manyContainers.body).slice(0, 300));
    assert.equal(await messages(), before);

    assert.equal((await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('patched')))).status, 201);
    const deepPatch = await send(sut, 'PATCH', '/api/v1/namespaces/default/pods/patched', `{"metadata":{"labels":${deep}}}`, 'application/merge-patch+json');
    assert.equal(deepPatch.status, 400, JSON.stringify(deepPatch.body));
    const deepStrategic = await send(sut, 'PATCH', '/api/v1/namespaces/default/pods/patched', `{"spec":${deep}}`, 'application/strategic-merge-patch+json');
    assert.equal(deepStrategic.status, 400, JSON.stringify(deepStrategic.body));
  });

  it('keeps a name usable when a message readers reject sits on its subject', { timeout: 120_000 }, async () => {
    // A message no reader accepts, as an old or foreign writer might have left it.
    nc.publish(SUBJECTS.pod('default', 'haunted'), JSON.stringify({ type: 'PodCreated', data: { pod: { memory: null } } }));
    await nc.flush();
    const created = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('haunted')), 'application/json', 60_000);
    assert.equal(created.status, 201, JSON.stringify(created.body));

    nc.publish(SUBJECTS.pod('default', 'haunted'), 'not json at all');
    await nc.flush();
    const deleted = await send(sut, 'DELETE', '/api/v1/namespaces/default/pods/haunted', undefined, 'application/json', 60_000);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    await sut.waitForGone('default', 'haunted', 20_000);
    const again = await send(sut, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('haunted')), 'application/json', 60_000);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    const got = await sut.request<Pod>('GET', '/api/v1/namespaces/default/pods/haunted');
    assert.equal(got.status, 200);
  });
});
