import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jserrors } from '@nats-io/jetstream/internal';
import { errors as natsErrors } from '@nats-io/transport-node';
import { BusUnavailableError } from './bus.errors.js';
import { isUnavailable, subjectSequenceRaces } from './bus.js';

describe('subjectSequenceRaces', () => {
  it('names the nats-server versions whose replicated streams may store two writes expecting one subject sequence', () => {
    for (const racing of ['2.9.10', '2.9.20', '2.8.4', '1.4.1']) assert.equal(subjectSequenceRaces(racing), true, racing);
    for (const fixed of ['2.9.21', '2.10.0', '2.11.3', '3.0.0-beta.1', '']) assert.equal(subjectSequenceRaces(fixed), false, fixed);
  });
});

describe('isUnavailable', () => {
  it('counts a bus that is not there, JetStream not answering included, and not a refusal', () => {
    assert.equal(isUnavailable(new BusUnavailableError('down')), true);
    assert.equal(isUnavailable(new natsErrors.TimeoutError()), true);
    assert.equal(isUnavailable(new jserrors.JetStreamNotEnabled('jetstream is not enabled')), true);
    assert.equal(isUnavailable(new Error('wrong last sequence')), false);
    assert.equal(isUnavailable(new jserrors.JetStreamApiError({ code: 400, err_code: 10071, description: 'wrong last sequence: 3' })), false);
  });
});
