import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AgentMetrics } from '../agent.metrics.js';
import { PlegHealth, plegProblem, RUNTIME_DOWN_GRACE_MS, runtimeDownReason, type PlegState } from './pleg-health.js';

const T0 = 1_700_000_000_000;

function state(overrides: Partial<PlegState> = {}): PlegState {
  return { startedMs: T0, lastRelistMs: T0, eventStream: { connected: true, sinceMs: T0 }, ...overrides };
}

describe('plegProblem', () => {
  it('is healthy with a recent relist and a connected event stream', () => {
    assert.equal(plegProblem(state(), T0 + 179_000), undefined);
  });

  it('reports a relist older than three minutes in the kubelet words', () => {
    assert.equal(plegProblem(state(), T0 + 190_000), 'pleg was last seen active 3m10s ago; threshold is 3m0s');
  });

  it('counts from the start until the first relist', () => {
    assert.equal(plegProblem(state({ lastRelistMs: undefined }), T0 + 60_000), undefined);
    assert.match(plegProblem(state({ lastRelistMs: undefined }), T0 + 200_000) ?? '', /last seen active 3m20s ago/);
  });

  it('tolerates a short event stream outage and reports a longer one with its cause and the relist failure', () => {
    const down = state({ relistError: 'connect ENOENT /x.sock', eventStream: { connected: false, sinceMs: T0, error: 'socket hang up' } });
    assert.equal(plegProblem(down, T0 + 4_000), undefined);
    assert.equal(plegProblem(down, T0 + 6_000), 'runtime event stream disconnected for 6s: socket hang up; last relist failed: connect ENOENT /x.sock');
  });
});

describe('PlegHealth', () => {
  it('records relists and event stream changes on its clock', async () => {
    let now = T0;
    const sut = new PlegHealth(new AgentMetrics(), () => now);
    now += 1000;
    assert.equal(await sut.relist(async () => 'listed'), 'listed');
    assert.equal(sut.snapshot().lastRelistMs, T0 + 1000);

    now += 1000;
    await assert.rejects(
      sut.relist(async () => Promise.reject(new Error('engine gone'))),
      /engine gone/,
    );
    assert.equal(sut.snapshot().relistError, 'engine gone');
    assert.equal(sut.snapshot().lastRelistMs, T0 + 1000, 'a failed relist is no sign of life');

    sut.eventStreamUp();
    now += 1000;
    sut.eventStreamDown('first');
    now += 1000;
    sut.eventStreamDown('second');
    assert.deepEqual(sut.snapshot().eventStream, { connected: false, sinceMs: T0 + 3000, error: 'second' }, 'down since the first failure');
    now += 10_000;
    assert.match(sut.problem() ?? '', /^runtime event stream disconnected for 11s: second; last relist failed: engine gone$/);
    await sut.relist(async () => undefined);
    sut.eventStreamUp();
    assert.equal(sut.problem(), undefined);
  });

  it('keeps the health and metrics of two agents in one process apart', async () => {
    let now = T0;
    const [metricsA, metricsB] = [new AgentMetrics(), new AgentMetrics()];
    const [a, b] = [new PlegHealth(metricsA, () => now), new PlegHealth(metricsB, () => now)];
    a.eventStreamUp();
    b.eventStreamDown('socket hang up');
    now += 1000;
    await a.relist(async () => undefined);
    now += 10_000;

    assert.equal(a.problem(), undefined);
    assert.match(b.problem() ?? '', /^runtime event stream disconnected for 11s: socket hang up$/);
    assert.equal(b.snapshot().lastRelistMs, undefined, "a's relist is not b's");
    const value = async (metrics: AgentMetrics, name: string): Promise<number | undefined> =>
      (await metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value;
    assert.equal(await value(metricsA, 'jetlet_runtime_event_stream_connected'), 1);
    assert.equal(await value(metricsB, 'jetlet_runtime_event_stream_connected'), 0);
    assert.equal(await value(metricsA, 'kubelet_pleg_last_seen_seconds'), (T0 + 1000) / 1000);
    assert.equal(await value(metricsB, 'kubelet_pleg_last_seen_seconds'), 0);
  });
});

describe('runtimeDownReason', () => {
  it('is undefined while the runtime answers, and through a short outage', () => {
    assert.equal(runtimeDownReason(state(), T0 + 1000), undefined);
    const broken = state({ eventStream: { connected: false, sinceMs: T0, error: 'connect ENOENT' }, relistError: 'connect ENOENT' });
    assert.equal(runtimeDownReason(broken, T0 + RUNTIME_DOWN_GRACE_MS), undefined);
  });

  it('says why once the event stream has been down for longer than the grace', () => {
    const broken = state({ eventStream: { connected: false, sinceMs: T0, error: 'connect ENOENT /run/docker.sock' } });
    assert.equal(runtimeDownReason(broken, T0 + RUNTIME_DOWN_GRACE_MS + 1), 'connect ENOENT /run/docker.sock');
  });

  it('says why once every relist has failed for longer than the grace', () => {
    assert.equal(runtimeDownReason(state({ relistError: 'list failed' }), T0 + RUNTIME_DOWN_GRACE_MS + 1), 'list failed');
  });
});
