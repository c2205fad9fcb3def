import { connect, createServer, type ListenOptions, type NetConnectOpts, type Server, type Socket } from 'node:net';

/**
 * A byte relay in front of a server (a TCP port or a Unix socket), so a test can cut one
 * client's link without touching the server: `break()` drops every connection and refuses
 * new ones, `restore()` relays again at the same address.
 */
export class Relay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly listenOn: ListenOptions,
    private readonly target: NetConnectOpts,
  ) {}

  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target);
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
      server.listen(this.listenOn, () => resolve());
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
