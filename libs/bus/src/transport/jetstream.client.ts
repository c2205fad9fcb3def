import { ClientProxy, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { type Msg } from '@nats-io/transport-node';
import { inboxFor } from '../credentials.js';
import type { Bus } from '../bus.js';
import { BusUnavailableError } from '../bus.errors.js';

/**
 * The transport's client, for what is not a fact in a stream: `emit(subject, data)`
 * publishes JSON on core NATS, `send(subject, data)` makes a request whose replies (any
 * number, until the caller unsubscribes) arrive as raw messages. A request nobody answers
 * fails with BusUnavailableError. Facts go through `Bus.publish`, which validates them.
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
      this.bus.nc.publish(subject, JSON.stringify(packet.data), { reply: inbox });
    } catch (error) {
      subscription.unsubscribe();
      callback({ err: error, isDisposed: true });
    }
    return () => subscription.unsubscribe();
  }

  protected async dispatchEvent<T = undefined>(packet: ReadPacket): Promise<T> {
    this.bus.nc.publish(String(packet.pattern), JSON.stringify(packet.data));
    return undefined as T;
  }
}
