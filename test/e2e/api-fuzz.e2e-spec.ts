import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { ContractValidationError, decodeEnvelope, STREAMS, SUBJECTS } from '#contracts';
import { Cluster } from '../harness/cluster.js';

/** Cases per property: enough to find the classes of bad input, few enough for CI. */
const RUNS = 40;
/** A request that takes longer than this is a hang, and fails the property. */
const HANG_MS = 15_000;

interface Answer {
  status: number;
  body: { kind?: string; metadata?: { name?: string } } | undefined;
}

const weirdNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e300, -1, 0, 0.5, 2 ** 31, 2 ** 53, 3_000_000, 2_147_483, 2_147_484),
);
const weirdString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.constantFrom('', '>', '*', 'a b', 'REL', 'rel_x', 'rel.x', 'a/b', '\0', '1', '6Mi', '1e400', '/tmp', '../x', 'x'.repeat(300)),
);
const weird = fc.oneof(
  weirdNumber,
  weirdString,
  fc.boolean(),
  fc.constant(null),
  fc.array(weirdString, { maxLength: 3 }),
  fc.dictionary(weirdString, weirdString, { maxKeys: 3 }),
);
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 2 });

/** A pod manifest that starts valid, with any field possibly replaced by something odd. */
const manifest = fc.record({
  name: fc.oneof(fc.constant(undefined), weirdString),
  labels: maybe(fc.oneof(fc.dictionary(weirdString, weird, { maxKeys: 3 }), weird)),
  annotations: maybe(fc.oneof(fc.dictionary(weirdString, weird, { maxKeys: 3 }), weird)),
  grace: maybe(weird),
  nodeName: maybe(weirdString),
  image: maybe(fc.oneof(weirdString, fc.constantFrom('jetlet/busybox:1.35', '127.0.0.1:5000/a/b:c', 'busybox@sha256:' + 'a'.repeat(64)))),
  containerName: maybe(weirdString),
  memory: maybe(weird),
  cpu: maybe(weird),
  period: maybe(weird),
  threshold: maybe(weird),
  workingDir: maybe(weirdString),
  command: maybe(fc.oneof(fc.array(weird, { maxLength: 3 }), weird)),
  containers: maybe(fc.integer({ min: 0, max: 80 })),
});

type Manifest = typeof manifest extends fc.Arbitrary<infer T> ? T : never;

function podOf(m: Manifest, fallbackName: string): Record<string, unknown> {
  const container: Record<string, unknown> = {
    name: m.containerName ?? 'main',
    image: m.image ?? 'jetlet/busybox:1.35',
    command: m.command ?? ['sleep', '60'],
    ...(m.workingDir !== undefined ? { workingDir: m.workingDir } : {}),
    ...(m.memory !== undefined || m.cpu !== undefined
      ? { resources: { limits: { ...(m.memory !== undefined ? { memory: m.memory } : {}), ...(m.cpu !== undefined ? { cpu: m.cpu } : {}) } } }
      : {}),
    ...(m.period !== undefined || m.threshold !== undefined
      ? { livenessProbe: { exec: { command: ['true'] }, periodSeconds: m.period ?? 10, failureThreshold: m.threshold ?? 3 } }
      : {}),
  };
  const containers = m.containers === undefined ? [container] : Array.from({ length: m.containers }, (_, i) => ({ ...container, name: `c${i}` }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: m.name ?? fallbackName,
      ...(m.labels !== undefined ? { labels: m.labels } : {}),
      ...(m.annotations !== undefined ? { annotations: m.annotations } : {}),
    },
    spec: {
      containers,
      ...(m.grace !== undefined ? { terminationGracePeriodSeconds: m.grace } : {}),
      ...(m.nodeName !== undefined ? { nodeName: m.nodeName } : {}),
    },
  };
}

/**
 * Generated manifests, URL parameters, patches and bus envelopes against the real API on a
 * real NATS server: each is accepted and valid, or a 4xx Status, or a message readers
 * skip — never a 5xx, a hang, a dead name or a crash.
 */
describe('fuzzing the API and the consumers', () => {
  let sut: Cluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let counter = 0;

  async function send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
    const response = await fetch(`${sut.apiUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': contentType },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      signal: AbortSignal.timeout(HANG_MS),
    });
    const text = await response.text();
    let parsed: Answer['body'];
    try {
      parsed = text ? (JSON.parse(text) as Answer['body']) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  }

  /** No 5xx, and every error is a Kubernetes Status. */
  function assertAnswered(what: string, answer: Answer): void {
    assert.ok(answer.status < 500, `${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
    if (answer.status >= 400) assert.equal(answer.body?.kind, 'Status', `${what}: ${JSON.stringify(answer.body)}`);
  }

  /** The name can be used: a valid pod of that name is created, then deleted. */
  async function assertUsable(namespace: string, name: string): Promise<void> {
    const valid = { metadata: { name }, spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }] } };
    const created = await send('POST', `/api/v1/namespaces/${namespace}/pods`, valid);
    assert.equal(created.status, 201, `${namespace}/${name} is unusable: ${JSON.stringify(created.body)}`);
    const deleted = await send('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`);
    assert.equal(deleted.status, 200, `${namespace}/${name} cannot be deleted: ${JSON.stringify(deleted.body)}`);
    await sut.waitForGone(namespace, name, 20_000);
  }

  const lastOn = async (subject: string): Promise<number> => (await jsm.streams.getMessage(STREAMS.pods, { last_by_subj: subject }))?.seq ?? 0;

  before(async () => {
    // A generated pod may name a node that does not exist (spec.nodeName "1e400"): its deletion is
    // finalised after the node grace, as Kubernetes' pod garbage collector does, 40 s by default.
    // Short here, so such a pod leaves within the wait below.
    sut = await Cluster.start({ NODE_GRACE_SECONDS: '2' });
    // Pods live only in namespaces that exist.
    await sut.ensureNamespace('fuzz');
    nc = await connect({ servers: sut.nats.url });
    jsm = await jetstreamManager(nc);
  });

  after(async () => {
    await nc?.close();
    await sut?.stop();
  });

  it('answers any URL parameter with a 4xx Status or an answer, on every route', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(weirdString, weirdString, async (namespace, name) => {
        const ns = encodeURIComponent(namespace);
        const n = encodeURIComponent(name);
        if (!ns || !n) return;
        const valid = { metadata: { name }, spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }] } };
        const routes: Array<[string, string, unknown?, string?]> = [
          ['GET', `/api/v1/namespaces/${ns}/pods`],
          ['POST', `/api/v1/namespaces/${ns}/pods`, valid],
          ['GET', `/api/v1/namespaces/${ns}/pods/${n}`],
          ['PATCH', `/api/v1/namespaces/${ns}/pods/${n}`, { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json'],
          ['PUT', `/api/v1/namespaces/${ns}/pods/${n}`, valid],
          ['DELETE', `/api/v1/namespaces/${ns}/pods/${n}`],
          ['GET', `/api/v1/nodes/${n}`],
          ['PATCH', `/api/v1/nodes/${n}`, { spec: { unschedulable: true } }, 'application/merge-patch+json'],
        ];
        for (const [method, path, body, type] of routes) assertAnswered(`${method} ${path}`, await send(method, path, body, type));
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts a generated manifest only when it is valid, writes nothing otherwise, and never kills its name', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(manifest, async (m) => {
        const fallback = `fz-${++counter}`;
        const pod = podOf(m, fallback);
        const name = (pod.metadata as { name: unknown }).name;
        const answer = await send('POST', '/api/v1/namespaces/fuzz/pods', pod);
        assertAnswered('create', answer);
        if (answer.status === 201) {
          assert.equal(typeof name, 'string');
          const stored = await send('GET', `/api/v1/namespaces/fuzz/pods/${encodeURIComponent(name as string)}`);
          assert.equal(stored.status, 200);
          const deleted = await send('DELETE', `/api/v1/namespaces/fuzz/pods/${encodeURIComponent(name as string)}`);
          assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
          await sut.waitForGone('fuzz', name as string, 20_000);
          await assertUsable('fuzz', name as string);
        } else if (typeof name === 'string') {
          assert.equal(await lastOn(SUBJECTS.pod('fuzz', name)), 0, `a refused create of ${JSON.stringify(name)} wrote to the log`);
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('answers any patch with the patched pod or a 4xx Status, and the pod stays readable', { timeout: 300_000 }, async () => {
    const target = { metadata: { name: 'patched', labels: { app: 'a' } }, spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }] } };
    assert.equal((await send('POST', '/api/v1/namespaces/fuzz/pods', target)).status, 201);
    const patch = fc.oneof(
      fc.record(
        {
          metadata: fc.record({ labels: fc.oneof(fc.dictionary(weirdString, weird, { maxKeys: 3 }), weird), annotations: weird }, { requiredKeys: [] }),
          spec: fc.record(
            {
              containers: fc.oneof(fc.array(fc.record({ name: fc.oneof(fc.constant('main'), weirdString), image: weirdString }), { maxLength: 2 }), weird),
              terminationGracePeriodSeconds: weird,
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
      fc.json({ maxDepth: 3 }),
    );
    const types = fc.constantFrom('application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json', 'text/plain');
    await fc.assert(
      fc.asyncProperty(patch, types, async (p, type) => {
        assertAnswered(`PATCH ${type}`, await send('PATCH', '/api/v1/namespaces/fuzz/pods/patched', p, type));
        const after = await send('GET', '/api/v1/namespaces/fuzz/pods/patched');
        assert.equal(after.status, 200);
      }),
      { numRuns: RUNS },
    );
  });

  it('stores only messages every reader accepts', async () => {
    const info = await jsm.streams.info(STREAMS.pods);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(STREAMS.pods, { seq }).catch(() => undefined);
      if (message) assert.doesNotThrow(() => decodeEnvelope(message.data), `seq ${seq} on ${message.subject}`);
    }
  });

  const envelope = fc.record(
    {
      id: weird,
      type: fc.oneof(fc.constantFrom('PodCreated', 'PodUpdated', 'PodDeletionRequested', 'PodScheduled', 'PodStatusReported'), weirdString),
      version: fc.oneof(fc.constant(1), weird),
      time: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), weird),
      source: fc.oneof(fc.constant({ component: 'api' }), weird),
      correlationId: weird,
      data: fc.oneof(fc.constant({ pod: { metadata: { name: 'x' }, spec: { containers: [] } } }), fc.dictionary(weirdString, weird, { maxKeys: 4 }), weird),
    },
    { requiredKeys: [] },
  );

  it('lets consumers reject any envelope with a validation error, never another failure', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          envelope.map((e) => JSON.stringify(e)),
          fc.string(),
        ),
        (text) => {
          try {
            decodeEnvelope(new TextEncoder().encode(text));
          } catch (error) {
            assert.ok(error instanceof ContractValidationError, String(error));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps every name usable after any bytes land on its subject', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          envelope.map((e) => JSON.stringify(e)),
          fc.string(),
        ),
        async (text) => {
          const name = `bus-${++counter}`;
          nc.publish(SUBJECTS.pod('fuzz', name), text);
          await nc.flush();
          await assertUsable('fuzz', name);
        },
      ),
      { numRuns: RUNS },
    );
    const list = await send('GET', '/api/v1/pods');
    assert.equal(list.status, 200);
  });
});
