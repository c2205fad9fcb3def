import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

/** The words of the SPDY/3 header compression dictionary, each prefixed by its length as uint32. */
const DICTIONARY_WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive',
  'origin',
]; // prettier-ignore

/** The dictionary's tail, after the words: status codes, reason phrases, dates and common values, unprefixed. */
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The zlib dictionary of SPDY/3 header blocks (1423 bytes; its Adler-32, 0xe3c6a7c2, is in every compressed block's zlib header). */
export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.flatMap((word) => {
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(word.length, 0);
    return [length, Buffer.from(word, 'latin1')];
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/**
 * One direction of SPDY header compression: a single zlib stream with the SPDY dictionary
 * for the whole session, each header block ending in a sync flush. Blocks pass through in
 * the order given, one at a time.
 */
export class SpdyHeaderCodec {
  private chain: Promise<unknown> = Promise.resolve();
  private failure?: Error;

  private constructor(private readonly zlib: Deflate | Inflate) {
    zlib.on('error', (error: Error) => (this.failure ??= error));
  }

  /** Compresses the header blocks this side sends. */
  static compressor(): SpdyHeaderCodec {
    return new SpdyHeaderCodec(createDeflate({ dictionary: SPDY3_DICTIONARY, flush: constants.Z_SYNC_FLUSH }));
  }

  /** Decompresses the header blocks the peer sends. */
  static decompressor(): SpdyHeaderCodec {
    return new SpdyHeaderCodec(createInflate({ dictionary: SPDY3_DICTIONARY, flush: constants.Z_SYNC_FLUSH }));
  }

  /** The block, compressed or decompressed; rejects once the zlib stream has failed (the session cannot go on). */
  transform(block: Buffer): Promise<Buffer> {
    const result = this.chain.then(() => this.run(block));
    this.chain = result.catch(() => undefined);
    return result;
  }

  close(): void {
    this.zlib.destroy();
  }

  private run(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      const out: Buffer[] = [];
      const onData = (chunk: Buffer): void => void out.push(chunk);
      this.zlib.on('data', onData);
      // The write's callback runs after the output of the flushed write has been pushed.
      this.zlib.write(block, (error) => {
        this.zlib.off('data', onData);
        const failure = error ?? this.failure;
        if (failure) reject(failure);
        else resolve(Buffer.concat(out));
      });
    });
  }
}
