import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  ContractValidationError,
  MAX_TIMER_SECONDS,
  MESSAGES,
  parseEnvelope,
  SUBJECTS,
  subjectNodeMismatch,
  type AnyEnvelope,
  type MessageType,
} from '#contracts';
import { PodProjection, type PodRecord } from '#domain';
import { fixturePods, manifest, name } from '../../../../test/fixtures/pod-manifests.js';
import { schedulerMessages, type SchedulerMessage } from './scheduler-messages.js';

const UID = '6f1d3c3e-4b0a-4a51-9d7e-2f2f4f5b6c7d';

/** A message as the scheduler reads it from the stream: through the full contract check (which throws what it refuses). */
function read(plain: unknown): AnyEnvelope {
  return parseEnvelope(JSON.parse(JSON.stringify(plain)));
}

/**
 * The pod the scheduler's cache holds after reading `body`'s PodCreated (and a deletion, with
 * `gracePeriodSeconds`), or undefined when the contract refuses what it would have read.
 */
function cached(body: unknown, uid: string, gracePeriodSeconds?: number): PodRecord | undefined {
  const fold = new PodProjection();
  const pod = body as { metadata?: Record<string, unknown> };
  const facts = [
    { id: 'created-1', type: 'PodCreated', data: { pod: { ...pod, metadata: { ...pod.metadata, namespace: 'default', uid, generation: 1 } } } },
    ...(gracePeriodSeconds === undefined
      ? []
      : [{ id: 'deleted-1', type: 'PodDeletionRequested', data: { uid, gracePeriodSeconds, deletionTimestamp: '2026-01-02T03:05:00.000Z' } }]),
  ];
  let record: PodRecord | undefined;
  for (const [i, fact] of facts.entries()) {
    const plain = { ...fact, version: 1, time: '2026-01-02T03:04:05.000Z', source: { component: 'api' }, correlationId: uid || 'c' };
    let envelope: AnyEnvelope;
    try {
      envelope = read(plain);
    } catch (error) {
      if (error instanceof ContractValidationError) return undefined;
      throw error;
    }
    record = fold.apply(envelope, i + 1, SUBJECTS.pod('default', 'p')) ?? record;
  }
  return record;
}

/** The envelope the bus stores for `message`, read back as every consumer reads it; throws ContractValidationError as the bus's full check would. */
function readBack<T extends MessageType>(message: SchedulerMessage<T>): AnyEnvelope {
  const { subject, type, data, options } = message;
  const stored = {
    id: options.id ?? 'm-1',
    type,
    version: MESSAGES[type].version,
    time: '2026-01-02T03:04:06.000Z',
    source: { component: 'scheduler' },
    correlationId: options.correlationId,
    ...(options.causationId ? { causationId: options.causationId } : {}),
    data,
  };
  const envelope = read(stored);
  const mismatch = subjectNodeMismatch(subject, envelope);
  if (mismatch) throw new ContractValidationError(type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
  assert.deepEqual(JSON.parse(JSON.stringify(envelope)), JSON.parse(JSON.stringify(stored)), 'the contract keeps every field the scheduler wrote');
  return envelope;
}

/** Every message the scheduler builds for one pod and node. */
function built(pod: PodRecord, node: string, reason: string): SchedulerMessage<MessageType>[] {
  return [
    schedulerMessages.podScheduled(pod, node),
    schedulerMessages.podAssigned(pod, node),
    schedulerMessages.podUnschedulable(pod, reason),
    schedulerMessages.podUnassigned(pod, node),
  ];
}

/** Checks the builder's promise on one pod: whatever it marks prevalidated, the full check takes as it is. */
function prevalidatedAreValid(pod: PodRecord, node: string, reason: string): number {
  let prevalidated = 0;
  for (const message of built(pod, node, reason)) {
    if (!message.options.prevalidated) continue;
    readBack(message);
    prevalidated++;
  }
  return prevalidated;
}

/** Node names as registrations carry them: any subject token, DNS-1123 subdomains most of all. */
const nodeName = fc.oneof(
  { weight: 3, arbitrary: name.map((n) => ({ node: n, dns: true })) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z0-9]{1,5}){1,2}$/).map((n) => ({ node: n, dns: true })) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/).map((n) => ({ node: n, dns: false })) },
);
/** Pod uids as a PodCreated may carry them: the API's UUIDs, or any string its contract takes. */
const uid = fc.oneof(
  { weight: 4, arbitrary: fc.uuid().map((u) => ({ uid: u, api: true })) },
  { weight: 1, arbitrary: fc.constantFrom('', 'not-a-uuid', UID.toUpperCase()).map((u) => ({ uid: u, api: false })) },
);
const reason = fc.oneof(fc.constant('0/3 nodes are available: 3 Insufficient cpu.'), fc.string({ maxLength: 40 }));

describe('schedulerMessages', () => {
  it('builds every message for every documented pod valid by construction, and marks it so', () => {
    const pods = fixturePods()
      .map((body) => cached(body, UID))
      .filter((p) => p !== undefined);
    assert.ok(pods.length >= 5, `fixture pods the contract takes: ${pods.length}`);
    for (const pod of pods) {
      const deleting = { ...pod, deletion: { timestamp: '2026-01-02T03:05:00.000Z', gracePeriodSeconds: 0 } };
      assert.equal(prevalidatedAreValid(deleting, 'node-1.example.com', 'no nodes available to schedule pods'), 4, 'all four are prevalidated');
    }
  });

  it('marks prevalidated only what the full contract check takes as it is, for whatever pod, node and reason the scheduler holds', () => {
    let checked = 0;
    fc.assert(
      fc.property(
        fc.oneof(manifest, fc.constantFrom(...fixturePods())),
        uid,
        fc.option(fc.integer({ min: 0, max: MAX_TIMER_SECONDS })),
        nodeName,
        reason,
        (body, podUid, grace, node, why) => {
          const pod = cached(body, podUid.uid, grace ?? undefined);
          fc.pre(pod !== undefined);
          const prevalidated = prevalidatedAreValid(pod, node.node, why);
          // What the scheduler nearly always holds (an API's uid, a DNS node name) skips the second check.
          if (podUid.api && node.dns && why.length > 0) assert.equal(prevalidated, 4);
          checked++;
        },
      ),
      { numRuns: 300 },
    );
    assert.ok(checked > 100, `pods checked: ${checked}`);
  });

  it('leaves a node name no pod may carry to the full check, which refuses it naming the field', () => {
    const pod = cached({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } }, UID);
    assert.ok(pod);
    const scheduled = schedulerMessages.podScheduled(pod, 'Node_1');
    const assigned = schedulerMessages.podAssigned(pod, 'Node_1');

    assert.equal(scheduled.options.prevalidated, false);
    assert.equal(assigned.options.prevalidated, false);
    const names = (field: string) => (error: unknown) => error instanceof ContractValidationError && error.causes.some((c) => c.field === field);
    assert.throws(() => readBack(scheduled), names('data.nodeName'));
    assert.throws(() => readBack(assigned), names('data.pod.spec.nodeName'));
  });

  it('leaves a pod uid that is not a UUID to the full check, which refuses it where the contract asks for one', () => {
    const pod = cached({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } }, 'not-a-uuid');
    assert.ok(pod);
    const scheduled = schedulerMessages.podScheduled(pod, 'node-1');

    assert.equal(scheduled.options.prevalidated, false);
    assert.equal(schedulerMessages.podAssigned(pod, 'node-1').options.prevalidated, true, 'PodAssigned carries the uid only where any string is taken');
    assert.throws(
      () => readBack(scheduled),
      (error: unknown) => error instanceof ContractValidationError && error.causes.some((c) => c.field === 'data.uid'),
    );
  });
});
