import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { type Msg } from '@nats-io/transport-node';
import { inboxFor } from '../credentials.js';
import type { Bus } from '../bus.js';
import { BusUnavailableError } from '../bus.errors.js';

/** A payload as it goes on core NATS: bytes as they are (a stream's binary frames), anything else as JSON. */
export function corePayload(data: unknown): Uint8Array | string {
  return data instanceof Uint8Array ? data : JSON.stringify(data);
}

/**
 * The transport's client, for what is not a fact in a stream: `emit(subject, data)`
 * publishes on core NATS, `send(subject, data)` makes a request from a private inbox whose
 * replies (any number, until the caller unsubscribes) arrive as raw messages, and
 * `sendFrame(subject, bytes)` sends one frame of an open stream at once. Bytes go as they
 * are, anything else as JSON. A request nobody answers fails with BusUnavailableError.
 * Facts go through `Bus.publish`, which validates them.
 */
export class JetStreamClient extends ClientProxy {
  constructor(private readonly bus: Bus) {
    super();
  }

  async connect(): Promise<Bus> {
    return this.bus;
  }

  close(): void {
    // The connection belongs to the Bus, which drains it at shutdown.
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket<Msg>) => void): () => void {
    const subject = String(packet.pattern);
    const inbox = inboxFor(this.bus.nc);
    const subscription = this.bus.nc.subscribe(inbox, {
      callback: (error, msg) => {
        if (error) callback({ err: error, isDisposed: true });
        else if (msg.headers?.code === 503 && msg.data.length === 0) callback({ err: new BusUnavailableError(`no responder on ${subject}`), isDisposed: true });
        else callback({ response: msg });
      },
    });
    try {
      this.bus.nc.publish(subject, corePayload(packet.data), { reply: inbox });
    } catch (error) {
      subscription.unsubscribe();
      callback({ err: error, isDisposed: true });
    }
    return () => subscription.unsubscribe();
  }

  /**
   * One frame of a stream already open (stdin, an ack, a cancel), published before this
   * returns, so frames leave in the order they are sent. Throws when the connection is closed.
   */
  sendFrame(subject: string, frame: Uint8Array): void {
    this.bus.nc.publish(subject, frame);
  }

  protected async dispatchEvent<T = undefined>(packet: ReadPacket): Promise<T> {
    this.bus.nc.publish(String(packet.pattern), corePayload(packet.data));
    return undefined as T;
  }
}
