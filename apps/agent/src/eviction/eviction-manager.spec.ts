import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Bus } from '#bus';
import type { PodManifest } from '#contracts';
import type { DesiredPod, PodStorageUsage } from '#domain';
import { AgentConfig } from '../agent.config.js';
import type { DesiredStateService } from '../config/desired-state.service.js';
import type { EventRecorder } from '../events/event-recorder.service.js';
import type { StatsCollector } from '../stats/stats-collector.service.js';
import type { ImageGcManager } from '../images/image-gc-manager.service.js';
import type { SignalReadings } from '../node/node-conditions.js';
import type { StatusReporter } from '../status/status-reporter.service.js';
import { EvictionManager } from './eviction-manager.service.js';
import type { PodStorageReader } from './eviction.constants.js';

const Mi = 1024 * 1024;

function pod(name: string, sizeLimit: string): DesiredPod {
  const uid = `uid-${name}`;
  const manifest: PodManifest = {
    metadata: { name, namespace: 'default', uid },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      volumes: [{ name: 'scratch', emptyDir: { sizeLimit } }],
    },
  };
  return { namespace: 'default', name, uid, manifest };
}

/** Storage readings a test sets; each look reads them afresh. */
class SetStorage implements PodStorageReader {
  usage = new Map<string, PodStorageUsage>();
  reads = 0;
  read(): Promise<Map<string, PodStorageUsage>> {
    this.reads += 1;
    return Promise.resolve(new Map(this.usage));
  }
}

describe('EvictionManager: local storage limits', () => {
  let storage: SetStorage;
  let warnings: Array<{ name: string; reason: string; message: string }>;
  let evictions: number;
  let sut: EvictionManager;
  const pods = [pod('over', '1Mi'), pod('within', '1Mi')];

  beforeEach(() => {
    mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 });
    storage = new SetStorage();
    warnings = [];
    evictions = 0;
    const config = Object.assign(new AgentConfig(), { NODE_NAME: 'node-1', EVICTION_MONITORING_INTERVAL_SECONDS: 10, EVICTION_HARD: '', EVICTION_SOFT: '' });
    const bus = { publishBuffered: () => undefined, lastMessage: () => Promise.resolve(undefined) } as unknown as Bus;
    const desired = { list: () => pods } as unknown as DesiredStateService;
    const status = { previous: () => undefined } as unknown as StatusReporter;
    const events = {
      warning: (p: DesiredPod, reason: string, message: string) => warnings.push({ name: p.name, reason, message }),
    } as unknown as EventRecorder;
    const stats = { summary: () => Promise.resolve({ pods: [] }) } as unknown as StatsCollector;
    const images = { enabled: false } as unknown as ImageGcManager;
    sut = new EvictionManager(config, bus, { read: () => ({}) as SignalReadings }, storage, desired, status, events, stats, images);
    sut.onEviction(() => (evictions += 1));
    sut.onApplicationBootstrap();
  });

  afterEach(() => {
    sut.onModuleDestroy();
    mock.timers.reset();
  });

  /** Fires the monitoring timer and lets the look it starts finish (every step of it resolves at once with these fakes). */
  const tick = async (ms: number): Promise<void> => {
    mock.timers.tick(ms);
    await new Promise<void>((resolve) => setImmediate(resolve));
  };

  it("evicts a pod over its emptyDir sizeLimit at the next monitoring look, with no grace and the kubelet's message", async () => {
    storage.usage.set('uid-over', { volumes: { scratch: 2 * Mi }, containers: [{ name: 'main', rootfsBytes: 0, logBytes: 0 }] });
    storage.usage.set('uid-within', { volumes: { scratch: Mi / 2 }, containers: [] });
    await tick(9_999);
    assert.equal(storage.reads, 0, 'nothing is measured before the monitoring interval');
    assert.equal(sut.evictionOf('uid-over'), undefined);

    await tick(1);
    assert.deepEqual(sut.evictionOf('uid-over'), { message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ', graceSeconds: 0 });
    assert.equal(sut.evictionOf('uid-within'), undefined);
    assert.deepEqual(warnings, [{ name: 'over', reason: 'Evicted', message: 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ' }]);
    assert.equal(evictions, 1, 'a reconcile pass is asked for');
  });

  it('evicts a pod once, and one that grows past its limit later at the look that sees it', async () => {
    storage.usage.set('uid-over', { volumes: { scratch: 2 * Mi }, containers: [] });
    await tick(10_000);
    storage.usage.set('uid-within', { volumes: { scratch: Mi / 2 }, containers: [] });
    await tick(10_000);
    assert.equal(warnings.length, 1, 'the evicted pod is not evicted again');
    assert.equal(sut.evictionOf('uid-within'), undefined);

    storage.usage.set('uid-within', { volumes: { scratch: Mi + 1 }, containers: [] });
    await tick(10_000);
    assert.equal(sut.evictionOf('uid-within')?.graceSeconds, 0);
    assert.deepEqual(
      warnings.map((w) => w.name),
      ['over', 'within'],
    );
  });
});
