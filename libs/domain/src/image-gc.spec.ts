import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToFree, ImageRecords, type ImageGcPolicy } from './image-gc.js';

const policy: ImageGcPolicy = { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000 };
const none = new Set<string>();

describe('bytesToFree', () => {
  it('asks for nothing below the high threshold, and down to the low one at or above it', () => {
    assert.equal(bytesToFree(policy, 1000, 151), 0, '84.9 % used');
    assert.equal(bytesToFree(policy, 1000, 150), 50, '85 % used: free down to 80 %');
    assert.equal(bytesToFree(policy, 1000, 0), 200);
    assert.equal(bytesToFree({ ...policy, highThresholdPercent: 100 }, 1000, 0), 0, '100 turns collection off');
    assert.equal(bytesToFree(policy, 0, 0), 0, 'no reading, no collection');
  });
});

describe('ImageRecords', () => {
  it('removes unused images least recently used first, never-used before used, until enough is freed', () => {
    const sut = new ImageRecords();
    const images = [
      { id: 'a', size: 100 },
      { id: 'b', size: 100 },
      { id: 'c', size: 100 },
      { id: 'd', size: 100 },
    ];
    sut.detect(images, new Set(['a', 'b']), 10_000);
    sut.detect(images, new Set(['b']), 60_000);
    sut.detect(images, new Set(['d']), 300_000);
    // c never used; a last used at 10 s; b at 60 s; d in use now.
    const plan = sut.plan(150, new Set(['d']), none, 300_000, policy.minAgeMs);
    assert.deepEqual(
      plan.remove.map((r) => r.id),
      ['c', 'a'],
    );
    assert.equal(plan.freedBytes, 200);
    assert.equal(plan.shortfallBytes, 0);
  });

  it('spares images in use, pinned or younger than the minimum age, and says what it could not free', () => {
    const sut = new ImageRecords();
    sut.detect(
      [
        { id: 'old', size: 100 },
        { id: 'pause', size: 10 },
      ],
      none,
      0,
    );
    sut.detect(
      [
        { id: 'old', size: 100 },
        { id: 'pause', size: 10 },
        { id: 'young', size: 500 },
      ],
      none,
      100_000,
    );
    const plan = sut.plan(1000, none, new Set(['pause']), 130_000, policy.minAgeMs);
    assert.deepEqual(
      plan.remove.map((r) => r.id),
      ['old'],
    );
    assert.equal(plan.shortfallBytes, 900);
    assert.deepEqual(sut.plan(1000, new Set(['old']), new Set(['pause']), 130_000, policy.minAgeMs).remove, []);
  });

  it('forgets an image the engine no longer has, and starts its age again if it comes back', () => {
    const sut = new ImageRecords();
    sut.detect([{ id: 'x', size: 1 }], none, 0);
    sut.detect([], none, 200_000);
    assert.equal(sut.get('x'), undefined);
    sut.detect([{ id: 'x', size: 1 }], none, 250_000);
    assert.equal(sut.get('x')?.firstDetectedMs, 250_000);
    assert.deepEqual(sut.plan(1, none, none, 300_000, policy.minAgeMs).remove, []);
  });
});
