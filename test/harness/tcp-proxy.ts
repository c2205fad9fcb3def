import { freePort } from './processes.js';
import { Relay } from './relay.js';

/** A loopback TCP relay in front of a server (NATS), on a port of its own. */
export class TcpProxy extends Relay {
  private constructor(
    readonly port: number,
    targetPort: number,
  ) {
    super({ host: '127.0.0.1', port }, { host: '127.0.0.1', port: targetPort });
  }

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), targetPort);
    await proxy.restore();
    return proxy;
  }
}
