import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RawMessage } from '#bus';
import { ContractValidationError, encodeStreamFrame, SUBJECTS } from '#contracts';
import { StreamInputPipe } from './stream-input.pipe.js';

const streamId = '6f1c1c7e-93a4-4c5e-9a57-0f3f3c1c2b10';
const subject = SUBJECTS.streamInput('node-1', streamId);

describe('StreamInputPipe', () => {
  const sut = new StreamInputPipe();

  it('reads the stream id from the subject and the frame from the bytes', () => {
    const input = sut.transform(new RawMessage(subject, encodeStreamFrame('stdin', 3, Buffer.from('hi'))));
    assert.equal(input.streamId, streamId);
    assert.equal(input.frame.kind, 'stdin');
    assert.equal(input.frame.seq, 3);
    assert.equal(input.frame.kind === 'stdin' && Buffer.from(input.frame.data).toString(), 'hi');
    const resize = sut.transform(new RawMessage(subject, encodeStreamFrame('resize', 0, { width: 80, height: 24 })));
    assert.deepEqual(resize.frame.kind === 'resize' && { ...resize.frame.body }, { width: 80, height: 24 });
  });

  it('refuses what is not a frame as invalid, so the transport drops and counts it', () => {
    for (const bytes of [Buffer.from('no'), Buffer.from([0xff, 0, 0, 0, 1]), encodeStreamFrame('resize', 0, { width: 'wide' })]) {
      assert.throws(() => sut.transform(new RawMessage(subject, bytes)), ContractValidationError);
    }
  });
});
