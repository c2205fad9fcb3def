import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Container } from '#contracts';
import type { ContainerRuntime } from '#runtime';
import { AgentConfig } from '../agent.config.js';
import { HandlerRunner } from './handler-runner.js';

const container: Container = { name: 'web', image: 'web:1', ports: [{ name: 'http', containerPort: 0 }] };

/** A pod's web server on loopback: each path answers as its name says; /hang never answers. */
async function listen(requests: IncomingMessage[]): Promise<Server> {
  const server = createServer((req, res) => {
    requests.push(req);
    if (req.url === '/hang') return;
    if (req.url === '/moved') return void res.writeHead(302, { location: 'http://elsewhere.invalid/' }).end();
    if (req.url === '/broken') return void res.writeHead(500).end('broken');
    res.writeHead(200).end('x'.repeat(64 * 1024));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('HandlerRunner httpGet', () => {
  const requests: IncomingMessage[] = [];
  let server: Server;
  let port: number;
  const runner = new HandlerRunner({} as ContainerRuntime, new AgentConfig());
  const probe = (path: string, timeoutMs = 5000, headers: Array<{ name: string; value: string }> = []) =>
    runner.run({ httpGet: { path, port: 'http', httpHeaders: headers } }, { containerId: 'c1', podIP: '127.0.0.1', container: withPort(port) }, timeoutMs);
  const withPort = (p: number): Container => ({ ...container, ports: [{ name: 'http', containerPort: p }] });

  before(async () => {
    server = await listen(requests);
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('succeeds on a 2xx, reading the body to its end, on a connection closed after', async () => {
    assert.deepEqual(await probe('/healthz', 5000, [{ name: 'X-Probe', value: 'yes' }]), { ok: true, message: 'HTTP 200' });
    const seen = requests.at(-1);
    assert.equal(seen?.headers['x-probe'], 'yes');
    assert.equal(seen?.headers['user-agent'], 'jetlet-probe/0.1');
    assert.equal(seen?.headers.connection, 'close');
  });

  it('succeeds on a redirect without following it, and fails on a 5xx with its status code', async () => {
    const before = requests.length;
    assert.deepEqual(await probe('/moved'), { ok: true, message: 'HTTP 302' });
    assert.equal(requests.length, before + 1);
    assert.deepEqual(await probe('/broken'), { ok: false, message: 'HTTP probe failed with statuscode: 500' });
  });

  it("fails once the probe's timeout passes without an answer", async () => {
    const outcome = await probe('/hang', 50);
    assert.deepEqual(outcome, {
      ok: false,
      message: `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
  });

  it('fails with the address it could not reach when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const free = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await runner.run({ httpGet: { path: '/', port: free } }, { containerId: 'c1', podIP: '127.0.0.1', container }, 5000);
    assert.deepEqual(outcome, { ok: false, message: `Get "http://127.0.0.1:${free}/": dial tcp 127.0.0.1:${free}: connect: connection refused` });
  });
});
