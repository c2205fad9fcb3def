import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

/**
 * How long an idle connection stays open: kube-apiserver's 90 s, as long as Go's clients keep
 * one. Node's 5 s races a client that reuses a connection as the server closes it: on a loaded
 * machine the client's own timer runs late, and its next request meets a reset.
 */
export const IDLE_TIMEOUT_MS = 90_000;

const IN_FLIGHT = Symbol('jetlet.requests-in-flight');
type CountedSocket = Socket & { [IN_FLIGHT]?: number };

/**
 * Keeps idle connections open `idleMs`, but none past a shutdown. Node's `close()` closes the
 * connections idle at that moment, except one that never carried a request (a client's spare),
 * and leaves open one whose response ends later (a follow that the shutdown ends): either would
 * hold the process until the idle timeout. So `close()` also closes every connection with no
 * request in flight (an upgraded one is its stream's to end), a connection closes when its last response in flight ends (pipelined ones
 * included), and a request that still arrives is answered with `Connection: close`.
 */
export function keepIdleConnections(server: Server, idleMs = IDLE_TIMEOUT_MS): void {
  server.keepAliveTimeout = idleMs;
  const sockets = new Set<CountedSocket>();
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: CountedSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // First of the listeners, so a late request's answer says `Connection: close` before a handler writes its head.
  server.prependListener('request', (req, res) => {
    const socket = req.socket as CountedSocket;
    if (!server.listening) res.shouldKeepAlive = false;
    socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 0) + 1;
    res.once('finish', () => {
      const left = (socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 1) - 1);
      if (left === 0 && !server.listening) socket.end();
    });
  });
  // An upgraded connection (exec, attach, port-forward) belongs to its stream, which the API's shutdown ends.
  server.prependListener('upgrade', (_req, socket: CountedSocket) => {
    socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 0) + 1;
  });
  const close = server.close.bind(server);
  server.close = (callback?: (error?: Error) => void): Server => {
    for (const socket of sockets) if (!socket[IN_FLIGHT]) socket.destroy();
    return close(callback);
  };
}
