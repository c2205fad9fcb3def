import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { subjectSequenceRaces } from './bus.js';

describe('subjectSequenceRaces', () => {
  it('names the nats-server versions whose replicated streams may store two writes expecting one subject sequence', () => {
    for (const racing of ['2.9.10', '2.9.20', '2.8.4', '1.4.1']) assert.equal(subjectSequenceRaces(racing), true, racing);
    for (const fixed of ['2.9.21', '2.10.0', '2.11.3', '3.0.0-beta.1', '']) assert.equal(subjectSequenceRaces(fixed), false, fixed);
  });
});
