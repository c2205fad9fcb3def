import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A Unix-socket relay in front of the Docker engine's socket, for an agent started with
 * DOCKER_HOST=`dockerHost`. `break()` cuts every connection through it and refuses new
 * ones, which is what an agent sees when its engine connection fails, without touching
 * the engine; `restore()` lets connections through again.
 */
export class DockerProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly dir: string,
    private readonly target: string,
  ) {}

  static async start(target = '/var/run/docker.sock'): Promise<DockerProxy> {
    const proxy = new DockerProxy(mkdtempSync(join(tmpdir(), 'jetlet-docker-proxy-')), target);
    await proxy.restore();
    return proxy;
  }

  get dockerHost(): string {
    return `unix://${this.path}`;
  }

  private get path(): string {
    return join(this.dir, 'docker.sock');
  }

  /** Accepts connections again and relays them to the engine. */
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
      server.listen(this.path, () => resolve());
    });
    this.server = server;
  }

  /** Cuts every open connection and refuses new ones (the socket file goes away). */
  async break(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async stop(): Promise<void> {
    await this.break();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
