import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { dialFailure } from './dial-failure.js';

/** A loopback port with nothing listening: a server's, closed. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

describe('dialFailure', () => {
  it("words a refused connection as Go's dialer", async () => {
    const port = await closedPort();
    const socket = connect(port, '127.0.0.1');
    const [error] = (await once(socket, 'error').catch((e: unknown) => [e])) as [NodeJS.ErrnoException];
    assert.equal(dialFailure(error, `127.0.0.1:${port}`), `dial tcp 127.0.0.1:${port}: connect: connection refused`);
  });

  it('words an unreachable host, and keeps the message of any other error after the address', () => {
    const unreachable = Object.assign(new Error('connect EHOSTUNREACH 10.0.0.9:80'), { code: 'EHOSTUNREACH' });
    assert.equal(dialFailure(unreachable, '10.0.0.9:80'), 'dial tcp 10.0.0.9:80: connect: no route to host');
    const other = Object.assign(new Error('connect ETIMEDOUT 10.0.0.9:80'), { code: 'ETIMEDOUT' });
    assert.equal(dialFailure(other, '10.0.0.9:80'), 'dial tcp 10.0.0.9:80: connect ETIMEDOUT 10.0.0.9:80');
  });
});
