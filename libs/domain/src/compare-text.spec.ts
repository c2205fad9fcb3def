import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareText } from './compare-text.js';

describe('compareText', () => {
  it('orders by code unit, as the API server orders keys, not by a language', () => {
    assert.deepEqual(['b', 'a-2', 'B', 'a10', 'a-1', 'a1'].sort(compareText), ['B', 'a-1', 'a-2', 'a1', 'a10', 'b']);
    assert.equal(compareText('web', 'web'), 0);
  });
});
