import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ManagedProcess } from './processes.js';

/** Three real nats-servers with JetStream, routed to each other on loopback: streams can have three replicas. */
export class NatsCluster {
  private constructor(
    readonly urls: string[],
    private readonly processes: ManagedProcess[],
    private readonly dir: string,
  ) {}

  static async start(): Promise<NatsCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'jetlet-nats-cluster-'));
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    const routes = await Promise.all([0, 1, 2].map(() => freePort()));
    const processes: ManagedProcess[] = [];
    try {
      for (const [i, port] of ports.entries()) {
        const config = join(dir, `server-${i}.conf`);
        writeFileSync(
          config,
          [
            `listen: "127.0.0.1:${port}"`,
            `server_name: jetlet-test-${i}`,
            `jetstream { store_dir: ${JSON.stringify(join(dir, `data-${i}`))} }`,
            `cluster { name: jetlet-test, listen: "127.0.0.1:${routes[i]}", routes: [${routes.map((r) => `"nats://127.0.0.1:${r}"`).join(', ')}] }`,
          ].join('\n'),
        );
        processes.push(new ManagedProcess(`nats-server ${i}`, spawn('nats-server', ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] })));
      }
      // Each server has found the JetStream leader of the cluster's metadata (streams may still
      // be refused a moment longer, until every server's resources are known, so a test retries its first stream).
      await Promise.all(processes.map((p) => p.waitForLine(/JetStream cluster new (remote )?metadata leader|Self is new JetStream cluster metadata leader/)));
      return new NatsCluster(
        ports.map((p) => `nats://127.0.0.1:${p}`),
        processes,
        dir,
      );
    } catch (error) {
      await Promise.all(processes.map((p) => p.stop()));
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
