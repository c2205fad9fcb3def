import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerMatches } from './agent-token.guard.js';

describe('bearerMatches', () => {
  it('accepts exactly the token as a bearer credential', () => {
    assert.equal(bearerMatches('Bearer s3cret', 's3cret'), true);
    assert.equal(bearerMatches('bearer s3cret', 's3cret'), true);
  });

  it('rejects a missing header, another scheme, another token and a prefix of it', () => {
    assert.equal(bearerMatches(undefined, 's3cret'), false);
    assert.equal(bearerMatches('Basic s3cret', 's3cret'), false);
    assert.equal(bearerMatches('Bearer wrong!', 's3cret'), false);
    assert.equal(bearerMatches('Bearer s3cre', 's3cret'), false);
    assert.equal(bearerMatches('Bearer ', 's3cret'), false);
  });
});
