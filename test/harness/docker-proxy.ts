import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Relay } from './relay.js';

/**
 * A Unix-socket relay in front of the Docker engine's socket, for an agent started with
 * DOCKER_HOST=`dockerHost`. `break()` cuts every connection through it and refuses new
 * ones, which is what an agent sees when its engine connection fails, without touching
 * the engine; `restore()` lets connections through again.
 */
export class DockerProxy extends Relay {
  private constructor(
    private readonly dir: string,
    target: string,
  ) {
    super({ path: join(dir, 'docker.sock') }, { path: target });
  }

  static async start(target = '/var/run/docker.sock'): Promise<DockerProxy> {
    const proxy = new DockerProxy(mkdtempSync(join(tmpdir(), 'jetlet-docker-proxy-')), target);
    await proxy.restore();
    return proxy;
  }

  get dockerHost(): string {
    return `unix://${join(this.dir, 'docker.sock')}`;
  }

  async stop(): Promise<void> {
    await this.break();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
