import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OutputFrameDemuxer } from './docker-process-stream.js';

const frame = (stream: number, payload: Buffer): Buffer => {
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

describe('OutputFrameDemuxer', () => {
  it('keeps bytes and their stream however the transport cuts the frames', () => {
    const binary = Buffer.from([0, 1, 2, 0xff, 0xfe, 10]);
    const wire = Buffer.concat([frame(1, binary), frame(2, Buffer.from('err')), frame(1, Buffer.from('out'))]);
    for (let cut = 1; cut < wire.length; cut++) {
      const sut = new OutputFrameDemuxer();
      const pieces = [...sut.push(wire.subarray(0, cut)), ...sut.push(wire.subarray(cut))];
      const joined = (channel: number): Buffer => Buffer.concat(pieces.filter((p) => p.channel === channel).map((p) => p.data));
      assert.deepEqual(joined(1), Buffer.concat([binary, Buffer.from('out')]), `cut at ${cut}`);
      assert.equal(joined(2).toString(), 'err', `cut at ${cut}`);
    }
  });
});
