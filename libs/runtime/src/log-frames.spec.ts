import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LogFrameDemuxer } from './log-frames.js';

function frame(stream: 1 | 2, payload: string | Buffer): Buffer {
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(bytes.length, 4);
  return Buffer.concat([header, bytes]);
}

/** Feeds `data` cut at every given offset and returns what came out of each push, plus the end. */
function feed(data: Buffer, cuts: number[]): string[] {
  const sut = new LogFrameDemuxer();
  const out: string[] = [];
  let from = 0;
  for (const cut of [...cuts, data.length]) {
    out.push(sut.push(data.subarray(from, cut)));
    from = cut;
  }
  out.push(sut.end());
  return out;
}

describe('LogFrameDemuxer', () => {
  it('decodes whole frames of both streams in order', () => {
    const data = Buffer.concat([frame(1, 'hi\n'), frame(2, 'oops\n'), frame(1, 'bye\n')]);
    assert.deepEqual(feed(data, []), ['hi\noops\nbye\n', '']);
  });

  it('gives the same text whatever byte the transport cuts at', () => {
    const data = Buffer.concat([frame(1, 'Hello World\n'), frame(2, 'grüße\n'), frame(1, ''), frame(1, 'end')]);
    for (let cut = 1; cut < data.length; cut++) {
      assert.equal(feed(data, [cut]).join(''), 'Hello World\ngrüße\nend', `cut at ${cut}`);
    }
    const everyByte = Array.from({ length: data.length - 1 }, (_, i) => i + 1);
    assert.equal(feed(data, everyByte).join(''), 'Hello World\ngrüße\nend');
  });

  it('returns nothing for a header alone and the payload once it comes', () => {
    const data = frame(1, 'abc');
    assert.deepEqual(feed(data, [5, 8, 9]), ['', '', 'a', 'bc', '']);
  });

  it('keeps a character cut between two frames of one stream whole, across a frame of the other', () => {
    const u = Buffer.from('ü', 'utf8');
    const data = Buffer.concat([
      frame(1, Buffer.concat([Buffer.from('a'), u.subarray(0, 1)])),
      frame(2, 'E'),
      frame(1, Buffer.concat([u.subarray(1), Buffer.from('b')])),
    ]);
    assert.equal(feed(data, []).join(''), 'aEüb');
  });
});
