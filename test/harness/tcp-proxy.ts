import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './processes.js';

/**
 * A loopback TCP relay in front of a server (NATS), so a test can cut one client's link
 * without touching the server: `break()` drops every connection and refuses new ones,
 * `restore()` relays again on the same port.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), targetPort);
    await proxy.restore();
    return proxy;
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect({ host: '127.0.0.1', port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async break(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
