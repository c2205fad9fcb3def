import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Bus } from '#bus';
import type { Container, PodManifest } from '#contracts';
import { containerSpecHash, type DesiredPod } from '#domain';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { AgentConfig } from '../agent.config.js';
import { AgentMetrics } from '../agent.metrics.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import type { HandlerRunner } from '../lifecycle/handler-runner.js';
import { ProberService } from './prober.service.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function pod(container: Container): DesiredPod {
  const manifest: PodManifest = { metadata: { name: 'web-0', namespace: 'default', uid: UID }, spec: { nodeName: 'node-1', containers: [container] } };
  return { namespace: 'default', name: 'web-0', uid: UID, manifest };
}

function running(container: Container, id = 'c1'): RuntimeContainer {
  return {
    id,
    name: `web-0_${container.name}`,
    image: container.image,
    imageId: 'sha256:x',
    labels: { [LABELS.podUid]: UID, [LABELS.kind]: 'container', [LABELS.containerName]: container.name, [LABELS.specHash]: containerSpecHash(container) },
    state: 'running',
    createdAt: new Date(T0).toISOString(),
    startedAt: new Date(T0).toISOString(),
    oomKilled: false,
  };
}

describe('ProberService', () => {
  let outcomes: boolean[];
  let calls: number;
  let results: number;
  let published: { type: string; data: Record<string, unknown> }[];
  let sut: ProberService;

  /** Fires the timers due in `ms` and lets the probes they ran finish. */
  const advance = async (ms: number): Promise<void> => {
    mock.timers.tick(ms);
    for (let i = 0; i < 5; i++) await turn();
  };

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
    outcomes = [];
    calls = 0;
    results = 0;
    published = [];
    const handlers = {
      run: () => {
        const ok = outcomes[calls++] ?? outcomes.at(-1) ?? true;
        return Promise.resolve(ok ? { ok: true } : { ok: false, message: 'connection refused' });
      },
    } as unknown as HandlerRunner;
    const bus = { publishBuffered: (_subject: string, type: string, data: Record<string, unknown>) => published.push({ type, data }) } as unknown as Bus;
    const config = Object.assign(new AgentConfig(), { NODE_NAME: 'node-1' });
    sut = new ProberService(handlers, new EventRecorder(config, bus), new AgentMetrics());
    sut.onResult(() => results++);
  });

  afterEach(() => {
    sut.onModuleDestroy();
    mock.timers.reset();
  });

  it('marks a container unhealthy after failureThreshold liveness failures, asks for a pass, and probes it no more', async () => {
    const spec: Container = {
      name: 'web',
      image: 'web:1',
      livenessProbe: { exec: { command: ['check'] }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 3 },
    };
    const c = running(spec);
    outcomes = [false];
    sut.sync([pod(spec)], new Map([[UID, [c]]]));

    await advance(1999);
    assert.equal(calls, 0, 'not before the initial delay');
    await advance(1);
    await advance(1000);
    assert.equal(calls, 2);
    assert.equal(sut.state(c.id).unhealthy, undefined, 'two failures are below the threshold');
    await advance(1000);
    assert.equal(calls, 3);
    assert.deepEqual(sut.state(c.id), { unhealthy: 'LivenessProbe' });
    assert.equal(results, 1);
    const change = published.find((p) => p.type === 'ProbeResultChanged');
    assert.deepEqual([change?.data['probe'], change?.data['result']], ['liveness', 'failure']);
    assert.equal(published.find((p) => p.type === 'PodEvent')?.data['message'], 'Liveness probe failed: connection refused');

    // The pod's worker kills it; until then, passes sync the prober with it still running.
    for (let pass = 0; pass < 3; pass++) {
      sut.sync([pod(spec)], new Map([[UID, [c]]]));
      await advance(5_000);
    }
    assert.equal(calls, 3, 'no probe runs against a container marked for killing');

    // Its next run is probed afresh, and the dead one's state goes.
    const next = running(spec, 'c2');
    sut.sync([pod(spec)], new Map([[UID, [next]]]));
    assert.deepEqual(sut.state(c.id), {});
    await advance(2000);
    assert.equal(calls, 4);
  });

  it('marks a container unhealthy when its startup probe fails failureThreshold times in a row', async () => {
    const spec: Container = { name: 'web', image: 'web:1', startupProbe: { exec: { command: ['started'] }, periodSeconds: 1, failureThreshold: 2 } };
    const c = running(spec);
    outcomes = [false];
    sut.sync([pod(spec)], new Map([[UID, [c]]]));

    await advance(0);
    assert.deepEqual(sut.state(c.id), {}, 'one failure is below the threshold');
    await advance(1000);
    assert.deepEqual(sut.state(c.id), { unhealthy: 'StartupProbe' });
    assert.equal(results, 1);
    await advance(5000);
    assert.equal(calls, 2, 'its worker stopped');
  });

  it('holds liveness and readiness until the startup probe passes, then reports ready', async () => {
    const spec: Container = {
      name: 'web',
      image: 'web:1',
      startupProbe: { exec: { command: ['started'] }, periodSeconds: 1, failureThreshold: 10 },
      readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 1 },
    };
    const c = running(spec);
    outcomes = [false, true];
    sut.sync([pod(spec)], new Map([[UID, [c]]]));

    await advance(0);
    assert.equal(calls, 1, 'only the startup probe ran');
    assert.equal(sut.state(c.id).started, undefined);
    await advance(1000);
    assert.equal(sut.state(c.id).started, true);
    await advance(1000);
    assert.deepEqual(sut.state(c.id), { started: true, ready: true });
    assert.equal(results, 2);
  });
});
