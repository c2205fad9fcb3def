import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestUser } from './auth.js';

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The real kubectl binary (on PATH) pointed at one API with `--server`, with a home, kubeconfig
 * and discovery cache of its own so nothing of the machine's configuration leaks in.
 */
export class Kubectl {
  private readonly home = mkdtempSync(join(tmpdir(), 'jetlet-kubectl-'));

  /** `server` alone: an unsecured API; with `kubeconfig`, its server and credentials are used instead. */
  constructor(
    private readonly server: string,
    kubeconfig?: string,
  ) {
    writeFileSync(join(this.home, 'config'), kubeconfig ?? 'apiVersion: v1\nkind: Config\n');
    this.serverArgs = kubeconfig ? [] : ['--server', server];
  }

  private readonly serverArgs: string[];

  /** kubectl as `user` of a harness cluster: on its HTTPS address with that user's token when it is secured. */
  static as(cluster: { apiUrl: string; kubeconfig(user?: TestUser): string; credentials?: unknown }, user: TestUser = 'admin'): Kubectl {
    return cluster.credentials ? new Kubectl(cluster.apiUrl, cluster.kubeconfig(user)) : new Kubectl(cluster.apiUrl);
  }

  /** Runs `kubectl ARGS`, with `stdin` piped in when given; never throws for a non-zero exit. */
  run(args: string[], stdin?: string): Promise<KubectlResult> {
    const child = spawn('kubectl', [...this.serverArgs, '--cache-dir', join(this.home, 'cache'), '--request-timeout=60s', ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.home, KUBECONFIG: join(this.home, 'config') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(stdin ?? '');
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Runs kubectl and fails with its output unless it exits 0. */
  async ok(args: string[], stdin?: string): Promise<string> {
    const result = await this.run(args, stdin);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
    return result.stdout;
  }

  dispose(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}
