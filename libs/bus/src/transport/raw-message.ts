import type { AnyEnvelope } from '#contracts';

/**
 * What a transport handler's payload is before the ContractPipe: the subject and the bytes
 * as they arrived. The pipe records the envelope it decoded, so the transport can count the
 * message by type.
 */
export class RawMessage {
  decoded?: AnyEnvelope;

  constructor(
    readonly subject: string,
    readonly data: Uint8Array,
  ) {}

  /** The payload as JSON; undefined when it is not JSON. */
  json(): unknown {
    try {
      return JSON.parse(new TextDecoder().decode(this.data)) as unknown;
    } catch {
      return undefined;
    }
  }
}
