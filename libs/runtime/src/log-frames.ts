import { StringDecoder } from 'node:string_decoder';

const HEADER_BYTES = 8;

/**
 * Docker's multiplexed log stream of a non-TTY container, decoded as it arrives. Each frame
 * is an 8-byte header ([stream, 0, 0, 0, size as uint32 BE]) and its payload, and the
 * transport may cut anywhere: inside a header, inside a payload, inside a multi-byte UTF-8
 * character. The demuxer keeps what it has not finished and returns only whole characters;
 * stdout and stderr get a decoder each, so a character cut by a frame of the other stream
 * still comes out whole.
 */
export class LogFrameDemuxer {
  private header = Buffer.alloc(0);
  /** Payload bytes of the current frame still to come. */
  private remaining = 0;
  private stream = 1;
  private readonly decoders = new Map<number, StringDecoder>();

  /** Feeds one chunk; returns the text of the payload bytes it completes (maybe ''). */
  push(chunk: Buffer): string {
    let text = '';
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining > 0) {
        const end = Math.min(chunk.length, offset + this.remaining);
        text += this.decoder(this.stream).write(chunk.subarray(offset, end));
        this.remaining -= end - offset;
        offset = end;
        continue;
      }
      const end = Math.min(chunk.length, offset + HEADER_BYTES - this.header.length);
      this.header = Buffer.concat([this.header, chunk.subarray(offset, end)]);
      offset = end;
      if (this.header.length === HEADER_BYTES) {
        this.stream = this.header.readUInt8(0);
        this.remaining = this.header.readUInt32BE(4);
        this.header = Buffer.alloc(0);
      }
    }
    return text;
  }

  /** At the end of the stream: whatever the decoders still hold (a character cut short). */
  end(): string {
    let text = '';
    for (const decoder of this.decoders.values()) text += decoder.end();
    return text;
  }

  private decoder(stream: number): StringDecoder {
    let decoder = this.decoders.get(stream);
    if (!decoder) {
      decoder = new StringDecoder('utf8');
      this.decoders.set(stream, decoder);
    }
    return decoder;
  }
}
