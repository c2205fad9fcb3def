import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Bus } from '#bus';
import type { ContainerRuntime, RuntimeContainer } from '#runtime';
import { AgentConfig } from '../agent.config.js';
import type { SignalReadings } from '../node/node-conditions.js';
import { ImageGcManager } from './image-gc-manager.service.js';

const GB = 1e9;

/** The engine as image GC sees it: images, the containers using them, and what was removed. */
class Engine {
  images = [
    { id: 'sha256:old', size: 3 * GB, tags: ['old:1'] },
    { id: 'sha256:newer', size: 3 * GB, tags: ['newer:1'] },
    { id: 'sha256:used', size: 5 * GB, tags: ['used:1'] },
    { id: 'sha256:pause', size: 1 * GB, tags: ['jetlet/pause:1.0'] },
  ];
  usedBy = new Set(['sha256:used']);
  removed: string[] = [];
  runtime = {
    listImages: () => Promise.resolve(this.images.filter((i) => !this.removed.includes(i.id))),
    listContainers: () => Promise.resolve([...this.usedBy].map((imageId) => ({ imageId }) as RuntimeContainer)),
    imageId: (image: string) => Promise.resolve(image === 'jetlet/pause:1.0' ? 'sha256:pause' : undefined),
    removeImage: (id: string) => {
      this.removed.push(id);
      return Promise.resolve();
    },
  } as unknown as ContainerRuntime;
}

describe('ImageGcManager', () => {
  let engine: Engine;
  let available: number;
  let nodeEvents: Array<{ reason: string; message: string }>;
  let sut: ImageGcManager;

  beforeEach(() => {
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    engine = new Engine();
    available = 10 * GB; // of 100: 90 % used, above the high threshold of 85
    nodeEvents = [];
    const config = Object.assign(new AgentConfig(), { NODE_NAME: 'node-1', POD_INFRA_IMAGE: 'jetlet/pause:1.0' });
    const bus = { publishBuffered: (_s: string, _t: string, data: { reason: string; message: string }) => nodeEvents.push(data) } as unknown as Bus;
    const reader = { read: () => ({ 'imagefs.available': { ok: true, value: { available, capacity: 100 * GB } } }) as unknown as SignalReadings };
    sut = new ImageGcManager(config, engine.runtime, bus, reader);
  });

  afterEach(() => mock.timers.reset());

  it('removes nothing younger than the minimum age, then the least recently used unused image down to the low threshold', async () => {
    assert.deepEqual((await sut.garbageCollect()).removed, [], 'every image was first seen just now');
    assert.equal(nodeEvents[0]?.reason, 'FreeDiskSpaceFailed');
    assert.equal(
      nodeEvents[0]?.message,
      'Failed to garbage collect required amount of images. Attempted to free 10000000000 bytes, but only found 0 bytes eligible to free.',
    );

    mock.timers.tick(60_000);
    engine.usedBy.add('sha256:newer'); // used a minute in, then no longer
    await sut.garbageCollect();
    engine.usedBy.delete('sha256:newer');
    mock.timers.tick(120_000);
    const result = await sut.garbageCollect();
    // 10 GB to free (90 % → 80 %): 'old' (never used) then 'newer' (used at 60 s); 'used' is in use, the pause image pinned.
    assert.deepEqual(result.removed, ['sha256:old', 'sha256:newer']);
    assert.equal(result.freedBytes, 6 * GB);
    assert.match(nodeEvents.at(-1)?.message ?? '', /Attempted to free 10000000000 bytes, but only found 6000000000 bytes/);
  });

  it('does nothing below the high threshold, and nothing at all when turned off', async () => {
    mock.timers.tick(600_000);
    available = 20 * GB;
    assert.deepEqual(await sut.garbageCollect(), { removed: [], freedBytes: 0 });
    const off = new ImageGcManager(Object.assign(new AgentConfig(), { IMAGE_GC_HIGH_THRESHOLD_PERCENT: 100 }), engine.runtime, {} as Bus, {
      read: () => ({}) as SignalReadings,
    });
    assert.equal(off.enabled, false);
    assert.deepEqual(await off.deleteUnusedImages(), { removed: [], freedBytes: 0 });
    assert.deepEqual(engine.removed, []);
  });

  it('removes every eligible unused image before a disk eviction, whatever the thresholds', async () => {
    await sut.garbageCollect();
    mock.timers.tick(121_000);
    available = 99 * GB;
    const result = await sut.deleteUnusedImages();
    assert.deepEqual(result.removed.sort(), ['sha256:newer', 'sha256:old']);
  });
});
