import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeStreamFrame, encodeStreamFrame, StreamFrameError } from './pod-stream.message.js';

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('stream frames', () => {
  it('carries data bytes unchanged with their kind and sequence', () => {
    const data = Buffer.from([0, 255, 1, 128, 10]);
    const frame = decodeStreamFrame(encodeStreamFrame('stderr', 70_000, data));
    assert.equal(frame.kind, 'stderr');
    assert.equal(frame.seq, 70_000);
    assert.ok('data' in frame);
    assert.deepEqual(Buffer.from(frame.data), data);
  });

  it('carries a validated JSON body on end, error and resize', () => {
    assert.deepEqual(plain(decodeStreamFrame(encodeStreamFrame('end', 3, { exitCode: 3 }))), { kind: 'end', seq: 3, body: { exitCode: 3 } });
    const resize = decodeStreamFrame(encodeStreamFrame('resize', 0, { width: 80, height: 24 }));
    assert.equal(resize.kind, 'resize');
    assert.deepEqual(resize.kind === 'resize' && { ...resize.body }, { width: 80, height: 24 });
    assert.deepEqual(decodeStreamFrame(encodeStreamFrame('cancel', 9)), { kind: 'cancel', seq: 9 });
  });

  it('rejects a frame that is not one, naming why', () => {
    assert.throws(() => decodeStreamFrame(Buffer.from([1, 0])), StreamFrameError);
    assert.throws(() => decodeStreamFrame(Buffer.from([99, 0, 0, 0, 1])), /unknown stream frame kind 99/);
    assert.throws(() => decodeStreamFrame(Buffer.concat([Buffer.from([18, 0, 0, 0, 0]), Buffer.from('{')])), /not JSON/);
    assert.throws(() => decodeStreamFrame(encodeStreamFrame('resize', 0, { width: -1, height: 'x' })), /width.*height|height.*width/s);
    assert.throws(() => decodeStreamFrame(encodeStreamFrame('end', 0, { exitCode: 1, extra: true })), /extra/);
  });
});
