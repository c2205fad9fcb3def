import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ContractValidationError, parseContract } from '../validation.js';
import { LogRequest, LogStreamControl, LogStreamMessage } from './log-stream.message.js';
import { parsePodLogQuery, PodLogQueryError, podLogQueryString } from './pod-log-options.model.js';

describe('parsePodLogQuery', () => {
  it('reads every parameter with Kubernetes conversions', () => {
    const sut = parsePodLogQuery({ container: 'main', follow: 'true', previous: '1', timestamps: 'True', tailLines: '10', sinceSeconds: '60' });
    assert.deepEqual({ ...sut }, { container: 'main', follow: true, previous: true, timestamps: true, tailLines: 10, sinceSeconds: 60 });
  });

  it('takes a bare flag as true and only "0" and "false" as false', () => {
    assert.equal(parsePodLogQuery({ follow: '' }).follow, true);
    assert.equal(parsePodLogQuery({ follow: 'yes' }).follow, true);
    assert.equal(parsePodLogQuery({ follow: 'FALSE' }).follow, false);
    assert.equal(parsePodLogQuery({ follow: '0' }).follow, false);
    assert.equal(parsePodLogQuery({}).follow, undefined);
  });

  it('uses the first of repeated parameters and ignores unknown ones', () => {
    const sut = parsePodLogQuery({ tailLines: ['2', '5'], limitBytes: '10', pretty: 'true' });
    assert.deepEqual({ ...sut }, { tailLines: 2 });
  });

  it('rejects an integer that does not parse as a bad request', () => {
    assert.throws(
      () => parsePodLogQuery({ tailLines: 'ten' }),
      (err: unknown) => err instanceof PodLogQueryError && err.message === 'tailLines: strconv.ParseInt: parsing "ten": invalid syntax',
    );
    assert.throws(() => parsePodLogQuery({ sinceSeconds: '1.5' }), PodLogQueryError);
  });

  it('lists every value out of range', () => {
    assert.throws(
      () => parsePodLogQuery({ tailLines: '-1', sinceSeconds: '0', container: 'Bad_Name' }),
      (err: unknown) => {
        assert.ok(err instanceof ContractValidationError);
        assert.deepEqual(err.causes.map((c) => `${c.field}: ${c.message}`).sort(), [
          'container: Invalid value: "Bad_Name": must be a container name (an RFC 1123 label)',
          'sinceSeconds: Invalid value: 0: must be greater than 0',
          'tailLines: Invalid value: -1: must be greater than or equal to 0',
        ]);
        return true;
      },
    );
  });

  it('round-trips through the query string', () => {
    const options = parsePodLogQuery({ container: 'c', follow: 'true', tailLines: '3' });
    const query = podLogQueryString(options);
    assert.equal(query, '?container=c&follow=true&tailLines=3');
    assert.deepEqual({ ...parsePodLogQuery(Object.fromEntries(new URLSearchParams(query))) }, { ...options });
    assert.equal(podLogQueryString({}), '');
  });
});

describe('the log protocol messages', () => {
  const streamId = randomUUID();

  it('accepts a request and rejects unknown fields and a bad version, listing both', () => {
    const sut = parseContract(LogRequest, { version: 1, streamId, namespace: 'default', name: 'web', container: 'main', follow: true, tailLines: 5 });
    assert.equal(sut.tailLines, 5);
    assert.throws(
      () => parseContract(LogRequest, { version: 2, streamId, namespace: 'default', name: 'web', extra: 1 }),
      (err: unknown) =>
        err instanceof ContractValidationError &&
        err.causes
          .map((c) => c.field)
          .sort()
          .join() === 'extra,version',
    );
    assert.throws(() => parseContract(LogRequest, { version: 1, streamId: 'x', namespace: 'default', name: 'web', tailLines: -1 }), ContractValidationError);
  });

  it('validates stream messages with a nested error and control messages', () => {
    const error = parseContract(LogStreamMessage, { version: 1, streamId, seq: 0, kind: 'error', error: { code: 400, reason: 'BadRequest', message: 'no' } });
    assert.equal(error.error?.code, 400);
    assert.throws(() => parseContract(LogStreamMessage, { version: 1, streamId, seq: 0, kind: 'error', error: { code: 'x' } }), ContractValidationError);
    assert.throws(() => parseContract(LogStreamMessage, { version: 1, streamId, seq: -1, kind: 'data', data: 'x' }), ContractValidationError);
    assert.equal(parseContract(LogStreamControl, { version: 1, streamId, kind: 'cancel', delivered: 3 }).kind, 'cancel');
    assert.throws(() => parseContract(LogStreamControl, { version: 1, streamId, kind: 'stop', delivered: 3 }), ContractValidationError);
  });
});
