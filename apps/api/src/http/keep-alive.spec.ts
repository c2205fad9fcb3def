import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { IDLE_TIMEOUT_MS, keepIdleConnections } from './keep-alive.js';

/** A server that writes the head and a first line of every response, and holds it open. */
async function holdingServer(idleMs: number): Promise<{ server: Server; port: number; held: ServerResponse[]; arrived: (count: number) => Promise<void> }> {
  const held: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first\n');
    held.push(res);
    server.emit('held');
  });
  keepIdleConnections(server, idleMs);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const arrived = async (count: number): Promise<void> => {
    while (held.length < count) await once(server, 'held');
  };
  return { server, port: (server.address() as AddressInfo).port, held, arrived };
}

/** Raw requests on one connection; resolves with all the connection received once the server ends it. */
function rawConnection(port: number): { send: (path: string) => void; ended: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const ended = once(socket, 'end').then(() => {
    socket.destroy();
    return received;
  });
  return { send: (path) => socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`), ended };
}

describe('keepIdleConnections', () => {
  it('says it keeps an idle connection 90 s', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    keepIdleConnections(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent({ keepAlive: true });
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent }, resolve).once('error', reject),
    );
    res.resume();
    assert.equal(IDLE_TIMEOUT_MS, 90_000);
    assert.equal(res.headers.connection, 'keep-alive');
    assert.equal(res.headers['keep-alive'], 'timeout=90');
    agent.destroy();
    server.close();
    await once(server, 'close');
  });

  // Without the helper each of these waits out a 10-minute idle timeout: the test's own timeout fails it.
  it('closes a connection whose response ends after close(), so the server stops at once', { timeout: 10_000 }, async () => {
    const { server, port, held, arrived } = await holdingServer(600_000);
    const client = rawConnection(port);
    client.send('/follow');
    await arrived(1);
    const closed = once(server, 'close');
    server.close();
    held[0].end('last\n');
    const text = await client.ended;
    await closed;
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /Connection: keep-alive\r\n/);
    assert.match(text, /first\n\r\n5\r\nlast\n\r\n0\r\n\r\n$/);
  });

  it('closes a connection that never carried a request', { timeout: 10_000 }, async () => {
    const { server, port } = await holdingServer(600_000);
    const accepted = once(server, 'connection');
    const spare = connect(port, '127.0.0.1');
    await accepted;
    const closed = once(server, 'close');
    server.close();
    await once(spare, 'close');
    await closed;
  });

  it('leaves an upgraded connection to its owner', { timeout: 10_000 }, async () => {
    const { server, port } = await holdingServer(600_000);
    const upgraded = once(server, 'upgrade') as Promise<[IncomingMessage, Socket]>;
    const client = connect(port, '127.0.0.1');
    client.write('GET /exec HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    const [, socket] = await upgraded;
    const closed = once(server, 'close');
    server.close();
    socket.write('still here\n');
    const [chunk] = (await once(client, 'data')) as [Buffer];
    assert.equal(chunk.toString(), 'still here\n');
    socket.end();
    await once(client, 'end');
    client.destroy();
    await closed;
  });

  it('answers every pipelined request before it closes the connection', { timeout: 10_000 }, async () => {
    const { server, port, held, arrived } = await holdingServer(600_000);
    const client = rawConnection(port);
    client.send('/one');
    client.send('/two');
    await arrived(2);
    const closed = once(server, 'close');
    server.close();
    held[0].end('one\n');
    await once(held[0], 'finish');
    held[1].end('two\n');
    const text = await client.ended;
    await closed;
    assert.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 2, text);
    assert.match(text, /one\n[\s\S]*two\n/);
  });

  it('answers a request that arrives after close() with Connection: close', { timeout: 10_000 }, async () => {
    const { server, port, held, arrived } = await holdingServer(600_000);
    const client = rawConnection(port);
    client.send('/first');
    await arrived(1);
    const closed = once(server, 'close');
    server.close();
    client.send('/late');
    await arrived(2);
    held[0].end('first done\n');
    held[1].end('late done\n');
    const text = await client.ended;
    await closed;
    const [, late] = text.split(/(?=HTTP\/1\.1 200 OK)/);
    assert.match(late, /Connection: close\r\n/);
    assert.match(late, /late done\n/);
  });
});
