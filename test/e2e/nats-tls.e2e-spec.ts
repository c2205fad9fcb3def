import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { Bus } from '#bus';
import { credentialOptions } from '#bus/credentials';
import { STREAMS } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { HOLLOW_READY, spawnHollow } from '../harness/hollow.js';
import { waitFor, type ManagedProcess } from '../harness/processes.js';

type NodeBody = { metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } };

/** A pod that sleeps, on `nodeName` when given. */
function sleeper(name: string, nodeName?: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }],
    },
  };
}

/**
 * What a client that speaks plain NATS over TCP gets from the server: its INFO, and whether the
 * server answered the client's PING before closing the connection.
 */
async function plainTcpClient(url: string): Promise<{ info: { tls_required?: boolean }; ponged: boolean }> {
  const { hostname, port } = new URL(url);
  const socket = tcpConnect(Number(port), hostname);
  let received = '';
  let sent = false;
  return new Promise((resolve, reject) => {
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!sent && received.includes('\r\n')) {
        sent = true;
        socket.write('CONNECT {"verbose":false,"pedantic":false,"lang":"plain"}\r\nPING\r\n');
      }
    });
    socket.on('close', () => {
      const first = received.split('\r\n')[0] ?? '';
      if (!first.startsWith('INFO ')) return reject(new Error(`no INFO from the server: ${JSON.stringify(received)}`));
      resolve({ info: JSON.parse(first.slice(5)) as { tls_required?: boolean }, ponged: received.includes('PONG') });
    });
  });
}

/**
 * NATS with TLS from `jetctl nats-tls`, on a real nats-server: every component, jetctl and a
 * process of hollow nodes work over it with the CA (and their nkey identities); a client without
 * the CA, or in plain TCP, is refused; with `verify: true`, so is one without a client certificate.
 */
describe('NATS over TLS', () => {
  describe('server TLS with the lab CA, and nkey identities', () => {
    let cluster: Cluster;
    const node = uniqueName('tls-n1');
    let hollow: ManagedProcess | undefined;

    before(async () => {
      cluster = await Cluster.start({}, { secureNats: true, natsTls: 'tls' });
      await cluster.startAgent(node);
    });

    after(async () => {
      await hollow?.stop('SIGKILL');
      await cluster?.stop();
    });

    it('runs a pod end to end with every component connected over TLS, and jetctl reads the streams with the CA', async () => {
      assert.ok(
        cluster.nats.output.some((l) => /TLS required for client connections/.test(l)),
        cluster.nats.output.join('\n'),
      );
      const name = uniqueName('tls-pod');
      assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', sleeper(name))).status, 201);
      const pod = await cluster.withLogs(cluster.waitForRunning('default', name));
      assert.equal(pod.spec.nodeName, node);
      const events = await cluster.jetctl('events', '--nats', cluster.nats.url, '-o', 'json');
      assert.equal(events.code, 0, events.stderr);
      assert.ok(events.stdout.includes(name), events.stdout.slice(-2000));
      assert.equal((await cluster.request('DELETE', `/api/v1/namespaces/default/pods/${name}`)).status, 200);
      await cluster.waitForGone('default', name);
      // Nothing was refused: no handshake failed, no identity was turned away.
      for (const line of cluster.nats.output) assert.doesNotMatch(line, /TLS handshake error|Violation|Authorization Error/, line);
    });

    it('refuses a client that does not trust the CA, and one that speaks plain TCP', async () => {
      const admin = credentialOptions({ identity: { kind: 'admin' }, seedFile: cluster.seedFile({ kind: 'admin' }) }, { warn: () => undefined });
      // With the admin's seed but the system's CAs only: the server's certificate is not trusted.
      await assert.rejects(connect({ servers: cluster.nats.url, name: 'no-ca', maxReconnectAttempts: 0, ...admin }), (error: Error) =>
        /certificate/.test(error.message),
      );
      const mark = cluster.nats.output.length;
      const plain = await plainTcpClient(cluster.nats.url);
      assert.equal(plain.info.tls_required, true);
      assert.equal(plain.ponged, false);
      await waitFor('the server to log the failed handshake', () => cluster.nats.output.slice(mark).some((l) => /TLS handshake error/.test(l)));
    });

    it('runs hollow nodes over TLS on their process identity', async () => {
      const prefix = uniqueName('tls-h');
      const COUNT = 3;
      const names = Array.from({ length: COUNT }, (_, i) => `${prefix}-${i}`);
      const env = await cluster.hollowEnv(prefix, COUNT);
      assert.ok(env.NATS_TLS_CA_FILE);
      hollow = spawnHollow(cluster.nats.url, prefix, COUNT, { ...env, HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2' });
      const withLogs = <T>(work: Promise<T>): Promise<T> =>
        work.catch((error: Error) => {
          throw new Error(`${error.message}\n--- ${hollow?.name}\n${hollow?.tail(60)}\n${cluster.logs()}`, { cause: error });
        });
      await withLogs(hollow.waitForLine(HOLLOW_READY, 60_000));
      await withLogs(
        waitFor(`${COUNT} hollow nodes Ready`, async () => {
          const { body } = await cluster.request<{ items: NodeBody[] }>('GET', '/api/v1/nodes');
          const ours = body.items.filter((n) => names.includes(n.metadata.name));
          return ours.length === COUNT && ours.every((n) => n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        }),
      );
      const pod = names[0] ?? '';
      assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', sleeper(pod, pod))).status, 201);
      await withLogs(cluster.waitForRunning('default', pod));
    });
  });

  describe('mutual TLS (verify: true)', () => {
    let cluster: Cluster;
    const open: Array<{ close(): Promise<unknown> }> = [];

    before(async () => {
      // The API and the scheduler come up only if their client certificate is accepted.
      cluster = await Cluster.start({}, { natsTls: 'verify' });
    });

    after(async () => {
      await Promise.all(open.map((c) => c.close().catch(() => undefined)));
      await cluster?.stop();
    });

    it('takes writes from the API and reads from the bus adapter with the client certificate, also after the server restarts', async () => {
      const tls = cluster.nats.tls;
      assert.ok(tls?.clientCertFile && tls.clientKeyFile);
      const sut = await Bus.connect(
        {
          servers: cluster.nats.url,
          name: 'tls-client',
          source: { component: 'jetctl' },
          tls: { caFile: tls.caFile, certFile: tls.clientCertFile, keyFile: tls.clientKeyFile },
        },
        AbortSignal.timeout(10_000),
      );
      open.push(sut);
      const before = (await sut.jsm.streams.info(STREAMS.pods)).state.messages;
      assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', sleeper(uniqueName('mtls')))).status, 201);
      assert.ok((await sut.jsm.streams.info(STREAMS.pods)).state.messages > before);

      // The restarted server keeps its TLS; the API reconnects with its certificate and writes again.
      await cluster.nats.restart();
      await cluster.withLogs(
        waitFor(
          'the API to write again after the restart',
          async () => (await cluster.request('POST', '/api/v1/namespaces/default/pods', sleeper(uniqueName('mtls')))).status === 201,
        ),
      );
      assert.ok(cluster.nats.output.some((l) => /TLS required for client connections/.test(l)));
    });

    it('refuses a client that trusts the CA but shows no client certificate', async () => {
      const tls = cluster.nats.tls;
      assert.ok(tls);
      const mark = cluster.nats.output.length;
      // The server ends the handshake; the client sees its connection fail (bounded by `timeout`).
      await assert.rejects(connect({ servers: cluster.nats.url, name: 'no-client-cert', maxReconnectAttempts: 0, timeout: 5000, tls: { caFile: tls.caFile } }));
      await waitFor('the server to refuse the client without a certificate', () =>
        cluster.nats.output.slice(mark).some((l) => /TLS handshake error: tls: client didn't provide a certificate/.test(l)),
      );
    });
  });
});
