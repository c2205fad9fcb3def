import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { NatsTlsFiles } from '../../apps/cli/src/nats-tls.js';

export const ROOT = resolve(import.meta.dirname, '../../..');

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`);
    await sleep(intervalMs);
  }
}

/** A child process whose output is kept for assertions and failure reports. */
export class ManagedProcess {
  readonly output: string[] = [];
  private exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer): void => void this.output.push(...chunk.toString().split('\n').filter(Boolean));
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Stops the process with `signal` and waits for it to exit (SIGKILL after 10 s). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  async waitForLine(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    return waitFor(
      `${this.name} to print ${pattern}`,
      () => {
        if (!this.running && this.child.exitCode !== null) throw new Error(`${this.name} exited with ${this.child.exitCode}:\n${this.tail()}`);
        return this.output.find((l) => pattern.test(l));
      },
      timeoutMs,
    ).catch((error: unknown) => {
      // What the process printed is what tells why the line never came.
      throw new Error(`${(error as Error).message}; its last lines:\n${this.tail()}`, { cause: error });
    });
  }

  tail(lines = 40): string {
    return this.output.slice(-lines).join('\n');
  }
}

export interface NatsServerOptions {
  /** `jetctl nats-config`'s directory: the server accepts only its identities. */
  authDir?: string;
  /** `jetctl nats-tls`'s files: the server requires TLS (and, with its `verify`, client certificates); kept across restarts. */
  tls?: NatsTlsFiles;
}

/** A real nats-server with JetStream, on a free loopback port and a fresh data directory. */
export class NatsServer {
  private constructor(
    readonly url: string,
    private process: ManagedProcess,
    private readonly dataDir: string,
    private readonly options: NatsServerOptions,
  ) {}

  /** The server's process id (a bench reads its CPU time). */
  get pid(): number | undefined {
    return this.process.child.pid;
  }

  /** The directory of `jetctl nats-config`'s files when the server runs secured (authorization from its auth.conf). */
  get authDir(): string | undefined {
    return this.options.authDir;
  }

  /** The files of `jetctl nats-tls` when the server requires TLS (its tls.conf included). */
  get tls(): NatsTlsFiles | undefined {
    return this.options.tls;
  }

  private static async run(port: number, dataDir: string, options: NatsServerOptions): Promise<ManagedProcess> {
    let args = ['-js', '-sd', dataDir, '-a', '127.0.0.1', '-p', String(port)];
    const configDir = options.authDir ?? (options.tls && dirname(options.tls.confFile));
    if (configDir) {
      // nats-server includes files relative to the including one, so the config sits beside auth.conf (or tls.conf).
      const config = join(configDir, 'server.conf');
      const includes = [...(options.authDir ? ['auth.conf'] : []), ...(options.tls ? [relative(configDir, options.tls.confFile)] : [])].map(
        (file) => `include ${JSON.stringify(file)}\n`,
      );
      writeFileSync(config, `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(dataDir)} }\n${includes.join('')}`);
      args = ['-c', config];
    }
    const child = spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = new ManagedProcess('nats-server', child);
    try {
      await proc.waitForLine(/Server is ready/);
    } catch (error) {
      await proc.stop();
      throw error;
    }
    return proc;
  }

  /**
   * A fresh server; with `authDir` (written by `jetctl nats-config`) it accepts only those
   * identities, each with its permissions; with `tls` (written by `jetctl nats-tls`) only TLS clients.
   */
  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'jetlet-nats-'));
    try {
      return new NatsServer(`nats://127.0.0.1:${port}`, await NatsServer.run(port, dataDir, options), dataDir, options);
    } catch (error) {
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Reloads the configuration (SIGHUP), as after `jetctl node credentials`; resolves once the server says it did. */
  async reload(): Promise<void> {
    const before = this.process.output.filter((l) => /Reloaded server configuration/.test(l)).length;
    this.process.child.kill('SIGHUP');
    await waitFor('nats-server to reload its configuration', () => this.process.output.filter((l) => /Reloaded server configuration/.test(l)).length > before);
  }

  /** The server's log lines (permission violations are logged there). */
  get output(): readonly string[] {
    return this.process.output;
  }

  /** Kills the server with SIGKILL (no clean shutdown, as a crash or an OOM kill), keeping its data. */
  async kill(): Promise<void> {
    await this.process.stop('SIGKILL');
  }

  /** Starts the server again on the same port and data directory; resolves once it is ready. */
  async restart(): Promise<void> {
    await this.process.stop();
    this.process = await NatsServer.run(Number(new URL(this.url).port), this.dataDir, this.options);
  }

  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
