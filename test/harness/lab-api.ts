import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Identity } from '#contracts';
import { credentialOptions } from '#bus/credentials';
import { seedFileName } from '../../apps/cli/src/nats-config.js';
import { ROOT } from './processes.js';

/**
 * The compose lab's API as its admin: HTTPS with the lab's certificate and the admin token
 * that `ensure_api_auth` (scripts/services.sh) writes into `<JETLET_STATE>/auth`, as
 * `npm run lab:compose` does before `docker-compose up`.
 */
export class LabApi {
  private constructor(
    readonly url: string,
    readonly authDir: string,
    readonly adminToken: string,
  ) {}

  /** Makes the lab's credentials under `state` (the JETLET_STATE docker-compose is given) for the API on `port`. */
  static async create(state: string, port: number): Promise<LabApi> {
    const authDir = join(state, 'auth');
    await promisify(execFile)('bash', ['-c', 'source scripts/services.sh && ensure_api_auth "$0"', authDir], { cwd: ROOT });
    // The NATS servers' identities, as scripts/compose.sh makes them for node-1..3.
    await promisify(execFile)('bash', ['-c', 'source scripts/services.sh && ensure_lab_nats_auth "$0" node-1 node-2 node-3', join(state, 'nats-auth')], { cwd: ROOT });
    const token = /^([^,]+),admin,/m.exec(readFileSync(join(authDir, 'tokens.csv'), 'utf8'))?.[1];
    if (!token) throw new Error(`no admin token in ${authDir}/tokens.csv`);
    return new LabApi(`https://127.0.0.1:${port}`, authDir, token);
  }

  /** Connection options that authenticate to the lab's NATS servers as `identity` (admin by default). */
  natsOptions(identity: Identity = { kind: 'admin' }): ReturnType<typeof credentialOptions> {
    return credentialOptions({ identity, seedFile: join(this.authDir, '..', 'nats-auth', seedFileName(identity)) }, { warn: () => undefined });
  }

  get certificate(): string {
    return join(this.authDir, 'tls.crt');
  }

  /** One call; the body parsed as JSON (undefined when empty). */
  request<T>(method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<{ status: number; body: T }> {
    return new Promise((resolve, reject) => {
      const call = httpsRequest(
        `${this.url}${path}`,
        {
          method,
          ca: readFileSync(this.certificate),
          timeout: timeoutMs,
          headers: { authorization: `Bearer ${this.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            try {
              resolve({ status: response.statusCode ?? 0, body: (text ? JSON.parse(text) : undefined) as T });
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      call.on('timeout', () => call.destroy(new Error(`${method} ${path} timed out`)));
      call.on('error', reject);
      call.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }
}
