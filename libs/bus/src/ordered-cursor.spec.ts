import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gapStart } from './bus.js';

describe('gapStart: where an ordered consumer may have skipped stored messages', () => {
  it('sees nothing missing when the next sequence follows the last one', () => {
    assert.equal(gapStart(4, 5, 'all'), undefined);
    assert.equal(gapStart(0, 1, 'all'), undefined);
  });

  it('looks right after the last handled message when sequences jump', () => {
    assert.equal(gapStart(4, 19, 'all'), 5);
    assert.equal(gapStart(4, 19, { startSeq: 2 }), 5);
    assert.equal(gapStart(4, 19, 'new'), 5);
  });

  it('looks from the start of the stream for a replay from the first message', () => {
    assert.equal(gapStart(0, 7, 'all'), 1);
    assert.equal(gapStart(0, 7, { startSeq: 3 }), 3);
  });

  it('has no known start for new messages, a start time, or the last message per subject', () => {
    assert.equal(gapStart(0, 7, 'new'), undefined);
    assert.equal(gapStart(0, 7, { startTime: '2026-01-01T00:00:00Z' }), undefined);
    assert.equal(gapStart(4, 19, 'last_per_subject'), undefined);
  });
});
