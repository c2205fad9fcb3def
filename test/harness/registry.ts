import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { freePort, ManagedProcess, waitFor } from './processes.js';

/** A user of a registry started with htpasswd authentication. */
export interface RegistryUser {
  username: string;
  password: string;
}

/** Runs the docker CLI and throws, with its output, unless it exits 0. */
async function docker(env: Record<string, string>, ...args: string[]): Promise<string> {
  // The classic builder: it needs no buildx plugin and no base image from a public registry.
  const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DOCKER_BUILDKIT: '0', ...env } });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  if (code !== 0) throw new Error(`docker ${args.join(' ')} exited with ${code}:\n${output}`);
  return output;
}

/**
 * A real image registry (Debian's `docker-registry`, distribution v2) on a free loopback
 * port with its storage in a fresh directory. The engine treats 127.0.0.0/8 registries as
 * insecure by default, so it pulls from this one over plain HTTP.
 */
export class Registry {
  private constructor(
    /** `127.0.0.1:<port>`, the registry part of an image reference. */
    readonly host: string,
    private readonly process: ManagedProcess,
    private readonly dir: string,
    /** With htpasswd auth: the docker CLI's environment that logs it in for pushes. */
    private readonly cliEnv: Record<string, string>,
  ) {}

  /**
   * Starts the registry; with `user`, it asks for HTTP basic authentication against an
   * htpasswd file holding that user (bcrypt, the only hash distribution accepts).
   */
  static async start(options: { user?: RegistryUser } = {}): Promise<Registry> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'jetlet-registry-'));
    const config = join(dir, 'config.yml');
    const host = `127.0.0.1:${port}`;
    const { user } = options;
    const cliEnv: Record<string, string> = {};
    const authLines: string[] = [];
    if (user) {
      writeFileSync(join(dir, 'htpasswd'), `${user.username}:${bcrypt.hashSync(user.password, 8)}\n`);
      authLines.push('auth:', '  htpasswd:', '    realm: jetlet-test', `    path: ${join(dir, 'htpasswd')}`);
      // A docker CLI config of its own, so pushes log in without touching the user's.
      const cliConfig = join(dir, 'docker-cli');
      mkdirSync(cliConfig);
      const auth = Buffer.from(`${user.username}:${user.password}`).toString('base64');
      writeFileSync(join(cliConfig, 'config.json'), JSON.stringify({ auths: { [host]: { auth } } }));
      cliEnv['DOCKER_CONFIG'] = cliConfig;
    }
    writeFileSync(
      config,
      [
        'version: 0.1',
        'log:',
        '  level: info',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${join(dir, 'data')}`,
        'http:',
        `  addr: 127.0.0.1:${port}`,
        ...authLines,
        '',
      ].join('\n'),
    );
    const child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = new ManagedProcess('docker-registry', child);
    const headers: Record<string, string> = user ? { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` } : {};
    try {
      await waitFor(
        `the registry to answer GET http://${host}/v2/`,
        async () => {
          if (!proc.running) throw new Error(`docker-registry exited:\n${proc.tail()}`);
          return (await fetch(`http://${host}/v2/`, { headers })).status === 200;
        },
        30_000,
        200,
      );
    } catch (error) {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return new Registry(host, proc, dir, cliEnv);
  }

  /**
   * Pushes a local image as `<host>/<repository>` and removes that local tag again, so a
   * later use of the reference has to pull it from this registry. Returns the reference.
   */
  async push(localImage: string, repository: string): Promise<string> {
    const reference = `${this.host}/${repository}`;
    await docker({}, 'tag', localImage, reference);
    try {
      await docker(this.cliEnv, 'push', reference);
    } finally {
      await docker({}, 'rmi', reference);
    }
    return reference;
  }

  /**
   * Builds an image of `jetlet/busybox:1.35` plus one layer of `bytes` random bytes, pushes it
   * as `<host>/<repository>` and removes it from the engine, so a pull has to download that
   * layer (a pushed local image would find all its layers present). Returns the reference.
   */
  async pushFresh(repository: string, bytes: number): Promise<string> {
    const reference = `${this.host}/${repository}`;
    const context = mkdtempSync(join(tmpdir(), 'jetlet-image-'));
    try {
      writeFileSync(join(context, 'blob'), randomBytes(bytes));
      writeFileSync(join(context, 'Dockerfile'), 'FROM jetlet/busybox:1.35\nCOPY blob /blob\n');
      await docker({}, 'build', '-q', '-t', reference, context);
      try {
        await docker(this.cliEnv, 'push', reference);
      } finally {
        await docker({}, 'rmi', reference);
      }
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
    return reference;
  }

  /** Lines of the registry's log (access log included) that match `pattern`. */
  logLines(pattern: RegExp): string[] {
    return this.process.output.filter((line) => pattern.test(line));
  }

  tail(lines = 20): string {
    return this.process.tail(lines);
  }

  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
