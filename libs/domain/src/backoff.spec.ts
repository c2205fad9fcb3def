import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BackoffBook, KUBERNETES_BACKOFF, crashKey, goDuration, pullKey } from './backoff.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const KEY = crashKey(UID, 'web');
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Small numbers, so the boundaries read at a glance: 2 × cap = 800 ms. */
const SMALL = { baseMs: 100, capMs: 400 };

describe('KUBERNETES_BACKOFF', () => {
  it('is the kubelet crash back-off: 10 s doubling to 5 min', () => {
    assert.deepEqual(KUBERNETES_BACKOFF, { baseMs: 10_000, capMs: 300_000 });
  });
});

describe('BackoffBook.next', () => {
  it('gives the base delay the first time a key fails', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);

    assert.equal(sut.next(KEY, T0), 10 * SECOND);
  });

  it('doubles the delay on each failure and holds it at the cap', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);

    const delays = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => sut.next(KEY, T0 + i * MINUTE));

    assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });

  it('follows a custom base and cap', () => {
    const sut = new BackoffBook(SMALL);

    assert.deepEqual(
      [0, 1, 2, 3].map((i) => sut.next(KEY, T0 + i)),
      [100, 200, 400, 400],
    );
  });

  it('starts again from the base when the entry was untouched for more than twice the cap', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0);
    sut.next(KEY, T0 + MINUTE);
    sut.next(KEY, T0 + 2 * MINUTE);

    assert.equal(sut.next(KEY, T0 + 2 * MINUTE + 10 * MINUTE + 1), 10_000);
  });

  it('keeps doubling when the entry was untouched for exactly twice the cap', () => {
    const sut = new BackoffBook(SMALL);
    sut.next(KEY, T0);

    assert.equal(sut.next(KEY, T0 + 800), 200);
  });

  it('keeps one entry per key', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(crashKey(UID, 'web'), T0);
    sut.next(crashKey(UID, 'web'), T0 + SECOND);

    assert.equal(sut.next(crashKey(UID, 'sidecar'), T0 + 2 * SECOND), 10_000);
    assert.equal(sut.delay(crashKey(UID, 'web')), 20_000);
  });
});

describe('BackoffBook.inBackoffSince', () => {
  it('is false for a key the book has never seen, so the first restart is immediate', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);

    assert.equal(sut.inBackoffSince(KEY, T0, T0), false);
  });

  it('is true from the event until just before the delay has passed, false from then on', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0);
    const died = T0 + 30 * SECOND;

    assert.deepEqual(
      [0, 1, 9_999, 10_000, 10_001].map((after) => sut.inBackoffSince(KEY, died, died + after)),
      [true, true, true, false, false],
    );
  });

  it('measures the current delay from the event it is given', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0);
    sut.next(KEY, T0 + SECOND);
    const died = T0 + MINUTE;

    assert.equal(sut.inBackoffSince(KEY, died, died + 19_999), true);
    assert.equal(sut.inBackoffSince(KEY, died, died + 20_000), false);
  });

  it('is false once the entry has expired by the event time', () => {
    const sut = new BackoffBook(SMALL);
    sut.next(KEY, 0);
    sut.next(KEY, 0);
    sut.next(KEY, 0);

    assert.equal(sut.inBackoffSince(KEY, 801, 802), false);
  });

  it('judges expiry by the event time, not by now, as client-go hasExpired(eventTime, lastUpdate) does', () => {
    const sut = new BackoffBook(SMALL);
    sut.next(KEY, 0);
    sut.next(KEY, 0);
    sut.next(KEY, 0);

    // The failure at 700 is within 2 × cap of the last update, and 200 ms ago with a 400 ms delay.
    assert.equal(sut.inBackoffSince(KEY, 700, 900), true);
  });
});

describe('BackoffBook.inBackoffSinceUpdate', () => {
  it('measures from the last recorded failure', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0, T0);

    assert.deepEqual(
      [T0, T0 + 9_999, T0 + 10_000].map((now) => sut.inBackoffSinceUpdate(KEY, now)),
      [true, true, false],
    );
  });

  it('is false for an unknown key', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);

    assert.equal(sut.inBackoffSinceUpdate(KEY, T0), false);
  });
});

describe('BackoffBook.delay and until', () => {
  it('give 0 and the event time itself for an unknown key', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);

    assert.equal(sut.delay(KEY), 0);
    assert.equal(sut.until(KEY, T0), T0);
  });

  it('give the delay in force and when the back-off from an event ends', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0);
    sut.next(KEY, T0 + SECOND);

    assert.equal(sut.delay(KEY), 20_000);
    assert.equal(sut.until(KEY, T0 + MINUTE), T0 + MINUTE + 20_000);
  });
});

describe('BackoffBook.reset and forget', () => {
  it('reset drops one key, so its next failure starts from the base', () => {
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    sut.next(KEY, T0);
    sut.next(KEY, T0 + SECOND);
    sut.next(crashKey(UID, 'sidecar'), T0);

    sut.reset(KEY);

    assert.equal(sut.delay(KEY), 0);
    assert.equal(sut.inBackoffSince(KEY, T0 + SECOND, T0 + 2 * SECOND), false);
    assert.equal(sut.delay(crashKey(UID, 'sidecar')), 10_000);
    assert.equal(sut.next(KEY, T0 + 2 * SECOND), 10_000);
  });

  it('forget drops every key with the prefix, the crash and pull keys of one pod, and no other', () => {
    const other = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';
    const sut = new BackoffBook(KUBERNETES_BACKOFF);
    for (const key of [crashKey(UID, 'web'), crashKey(UID, 'sidecar'), pullKey(UID, 'example/web:1.0'), crashKey(other, 'web')]) sut.next(key, T0);

    sut.forget(`${UID}/`);

    assert.deepEqual(
      [crashKey(UID, 'web'), crashKey(UID, 'sidecar'), pullKey(UID, 'example/web:1.0'), crashKey(other, 'web')].map((key) => sut.delay(key)),
      [0, 0, 0, 10_000],
    );
  });
});

describe('BackoffBook.gc', () => {
  it('drops entries untouched for more than twice the cap and keeps the others', () => {
    const sut = new BackoffBook(SMALL);
    sut.next('old', 0);
    sut.next('edge', 100);
    sut.next('fresh', 500);

    sut.gc(900);

    assert.deepEqual(
      ['old', 'edge', 'fresh'].map((key) => sut.delay(key)),
      [0, 100, 100],
    );
  });
});

describe('crashKey and pullKey', () => {
  it('key a crash by pod uid and container, a pull by pod uid and image, without colliding', () => {
    assert.equal(crashKey(UID, 'web'), `${UID}/web`);
    assert.equal(pullKey(UID, 'busybox:1.36'), `${UID}/image:busybox:1.36`);
    assert.notEqual(crashKey(UID, 'web'), pullKey(UID, 'web'));
  });
});

describe('goDuration', () => {
  for (const [ms, text] of [
    [0, '0s'],
    [10_000, '10s'],
    [59_000, '59s'],
    [60_000, '1m0s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
  ] as const) {
    it(`prints ${ms} ms as Go prints a time.Duration: ${text}`, () => {
      assert.equal(goDuration(ms), text);
    });
  }
});
