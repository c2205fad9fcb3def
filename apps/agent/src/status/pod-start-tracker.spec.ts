import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, PodStatus } from '#contracts';
import { PodStartTracker } from './pod-start-tracker.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const container = (name: string, state: ContainerStatus['state']): ContainerStatus => ({
  name,
  state,
  lastState: {},
  ready: true,
  restartCount: 0,
  image: 'i',
  imageID: '',
});
const running = (startedMs: number) => ({ running: { startedAt: new Date(startedMs).toISOString() } });
const status = (...containerStatuses: ContainerStatus[]): PodStatus => ({ phase: 'Running', containerStatuses });

describe('PodStartTracker', () => {
  it('records from the first sighting to every container running, once', () => {
    const observed: number[] = [];
    const sut = new PodStartTracker((s) => observed.push(s));
    sut.seen('u1', T0);
    sut.seen('u1', T0 + 500); // a later assignment (new generation) is not a sighting
    assert.equal(
      sut.statusComputed('u1', status(container('a', running(T0 + 100)), container('b', { waiting: { reason: 'ContainerCreating' } })), T0 + 800),
      undefined,
    );
    assert.equal(sut.statusComputed('u1', status(container('a', running(T0 + 100)), container('b', running(T0 + 1200))), T0 + 1500), 1.5);
    assert.equal(sut.statusComputed('u1', status(container('a', running(T0 + 100)), container('b', running(T0 + 1200))), T0 + 2500), undefined);
    sut.seen('u1', T0 + 3000);
    assert.equal(sut.statusComputed('u1', status(container('a', running(T0 + 100))), T0 + 4000), undefined);
    assert.deepEqual(observed, [1.5]);
  });

  it('does not record a pod it adopted already running, nor one it never saw assigned', () => {
    const observed: number[] = [];
    const sut = new PodStartTracker((s) => observed.push(s));
    sut.seen('adopted', T0);
    assert.equal(sut.statusComputed('adopted', status(container('a', running(T0 - 60_000))), T0 + 10), undefined);
    assert.equal(sut.statusComputed('unknown', status(container('a', running(T0))), T0 + 10), undefined);
    assert.deepEqual(observed, []);
  });

  it('counts a pod again once forgotten (a new assignment after removal)', () => {
    const observed: number[] = [];
    const sut = new PodStartTracker((s) => observed.push(s));
    sut.seen('u', T0);
    sut.statusComputed('u', status(container('a', running(T0 + 100))), T0 + 200);
    sut.forget('u');
    sut.seen('u', T0 + 1000);
    sut.statusComputed('u', status(container('a', running(T0 + 1100))), T0 + 1300);
    assert.deepEqual(observed, [0.2, 0.3]);
  });
});
