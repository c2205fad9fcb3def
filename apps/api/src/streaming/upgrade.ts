import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { Duplex as DuplexStream, type Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { KubeStatusException } from '../errors/kube-status.exception.js';

const HEAD = Symbol('jetlet.upgrade-head');
const PROTOCOL = Symbol('jetlet.subprotocol');
type UpgradeRequest = IncomingMessage & { [HEAD]?: Buffer; [PROTOCOL]?: string };

/**
 * Hands every HTTP upgrade request (a WebSocket or SPDY client's) to the same request
 * handler as any other request, with a response bound to the connection: middleware,
 * guards (authentication, authorisation), routing and the Status error filter apply to an
 * upgrade exactly as to a GET. A route that accepts the upgrade takes the connection with
 * `acceptWebSocket`; any other answer is an ordinary HTTP response, after which the
 * connection closes. This is the only place upgrades enter the API.
 */
export function routeUpgrades(server: Server, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('upgrade', (req: UpgradeRequest, socket: Duplex, head: Buffer) => {
    req[HEAD] = head;
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
    res.on('finish', () => {
      res.detachSocket(socket as Parameters<ServerResponse['detachSocket']>[0]);
      socket.end();
    });
    handle(req, res);
  });
}

/** True for a WebSocket opening handshake. */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** The first of `supported` the client offers in Sec-WebSocket-Protocol, or undefined. */
export function chooseSubprotocol(req: IncomingMessage, supported: readonly string[]): string | undefined {
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  return supported.find((p) => offered.includes(p));
}

/**
 * Refuses, as a Status before any stream is opened, what cannot become a WebSocket with one
 * of `supported`: a plain request, a SPDY upgrade (jetlet speaks WebSocket only; kubectl
 * tries WebSocket first), or a client offering none of the subprotocols.
 */
export function checkWebSocketRequest(req: IncomingMessage, supported: readonly string[], what: string): string {
  if (!req.headers.upgrade) throw KubeStatusException.badRequest(`Upgrade request required: ${what} is served over WebSocket (${supported.join(', ')})`);
  if (!isWebSocketRequest(req)) {
    throw KubeStatusException.badRequest(`${what} is served over WebSocket (${supported.join(', ')}), not ${req.headers.upgrade} (${req.method ?? ''})`);
  }
  const protocol = chooseSubprotocol(req, supported);
  if (!protocol) {
    throw KubeStatusException.badRequest(
      `requested protocol(s) are not supported: [${req.headers['sec-websocket-protocol'] ?? ''}]; supports [${supported.join(' ')}]`,
    );
  }
  return protocol;
}

const server = new WebSocketServer({
  noServer: true,
  clientTracking: false,
  perMessageDeflate: false,
  // A frame of stdin is at most what a client buffers; 16 MiB bounds a hostile one.
  maxPayload: 16 * 1024 * 1024,
  handleProtocols: (_offered, req: UpgradeRequest) => req[PROTOCOL] ?? false,
});

/** Completes the WebSocket handshake of a request that came through `routeUpgrades` (checked with `checkWebSocketRequest`). */
export function acceptWebSocket(req: IncomingMessage, protocol: string): Promise<WebSocket> {
  const head = (req as UpgradeRequest)[HEAD];
  if (head === undefined) return Promise.reject(KubeStatusException.badRequest('the connection cannot be upgraded'));
  return new Promise((resolve, reject) => {
    const socket = req.socket;
    const closed = (): void => reject(new Error('the client went away during the WebSocket handshake'));
    socket.once('close', closed);
    (req as UpgradeRequest)[PROTOCOL] = protocol;
    // ws refuses subprotocol names that are not RFC 7230 tokens, and kubectl's port-forward
    // tunnel (`SPDY/3.1+portforward.k8s.io`) has a '/'. The protocol was chosen already
    // (checkWebSocketRequest); ws only needs an offer to answer it with.
    req.headers['sec-websocket-protocol'] = 'chosen';
    server.handleUpgrade(req, socket, head, (ws) => {
      socket.off('close', closed);
      resolve(ws);
    });
  });
}

/** True for a SPDY/3.1 upgrade (what kubectl's fallback dialer sends). */
export function isSpdyRequest(req: IncomingMessage): boolean {
  return (req.headers.connection ?? '').toLowerCase().includes('upgrade') && (req.headers.upgrade ?? '').toLowerCase().includes('spdy/3.1');
}

/**
 * Completes a SPDY/3.1 upgrade of a request that came through `routeUpgrades`, as the
 * kubelet's upgrader answers it (101, the negotiated `X-Stream-Protocol-Version`), and hands
 * back the connection, with any bytes the client sent early put back in front.
 */
export function acceptSpdy(req: IncomingMessage, protocol: string): Duplex {
  const head = (req as UpgradeRequest)[HEAD];
  if (head === undefined) throw KubeStatusException.badRequest('the connection cannot be upgraded');
  const socket = req.socket;
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
  if (head.length > 0) socket.unshift(head);
  return socket;
}

/**
 * A WebSocket as a byte stream: each write is one binary message, every message's bytes are
 * read in order whatever their boundaries, and the end closes the WebSocket normally
 * (1000, which a Go client reads as the end of the stream). Reading is paused while the
 * reader is full.
 */
export function webSocketByteStream(ws: WebSocket): Duplex {
  const stream = new PassThroughWebSocket(ws);
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (!stream.push(bytes)) ws.pause();
  });
  ws.once('close', () => {
    stream.push(null);
    stream.destroy();
  });
  ws.on('error', () => stream.destroy());
  return stream;
}

class PassThroughWebSocket extends DuplexStream {
  constructor(private readonly ws: WebSocket) {
    super({ allowHalfOpen: false });
  }

  override _read(): void {
    this.ws.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.ws.readyState !== this.ws.OPEN) {
      callback();
      return;
    }
    this.ws.send(chunk, { binary: true }, (error) => callback(error ?? null));
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.ws.close(1000);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
    callback(error);
  }
}
