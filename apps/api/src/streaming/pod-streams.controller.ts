import { Controller, Get, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { PodStreamKind } from '#contracts';
import { podRef } from '#observability';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { parseRemoteCommandQuery, PodStreamsService } from './pod-streams.service.js';
import { bridgeRemoteCommand, REMOTE_COMMAND_PROTOCOLS } from './remote-command.js';
import { PORT_FORWARD_PROTOCOL, PORT_FORWARD_TUNNEL_PROTOCOL, PortForwardConnection } from './port-forward.js';
import { acceptSpdy, acceptWebSocket, checkWebSocketRequest, isSpdyRequest, isWebSocketRequest, webSocketByteStream } from './upgrade.js';

/**
 * Kubernetes core/v1 `pods/exec` and `pods/attach` over WebSocket (the remote command
 * subprotocols kubectl speaks), and `pods/portforward` over SPDY/3.1 (plain, or tunnelled in
 * a WebSocket), relayed to the agent of the pod's node over NATS. GET is the WebSocket
 * handshake; POST is what SPDY clients send: answered with why not for exec and attach.
 */
@Controller('api/v1/namespaces/:namespace/pods/:name')
export class PodStreamsController {
  private readonly logger = new Logger(PodStreamsController.name);

  constructor(private readonly streams: PodStreamsService) {}

  @Get('exec')
  execByGet(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.remoteCommand('exec', namespace, name, query, req, res);
  }

  @Post('exec')
  execByPost(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.remoteCommand('exec', namespace, name, query, req, res);
  }

  @Get('attach')
  attachByGet(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.remoteCommand('attach', namespace, name, query, req, res);
  }

  @Post('attach')
  attachByPost(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.remoteCommand('attach', namespace, name, query, req, res);
  }

  @Get('portforward')
  portForwardByGet(@Param('namespace') namespace: string, @Param('name') name: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.portForward(namespace, name, req, res);
  }

  @Post('portforward')
  portForwardByPost(@Param('namespace') namespace: string, @Param('name') name: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.portForward(namespace, name, req, res);
  }

  /**
   * kubectl 1.32 first asks for a WebSocket with the subprotocol `SPDY/3.1+portforward.k8s.io`
   * and falls back to a SPDY/3.1 upgrade; both carry the same SPDY session.
   */
  private async portForward(namespace: string, name: string, req: Request, res: Response): Promise<void> {
    const target = this.streams.checkPortForward(namespace, name);
    let socket;
    if (isWebSocketRequest(req)) {
      const protocol = checkWebSocketRequest(req, [PORT_FORWARD_TUNNEL_PROTOCOL], 'pods/portforward');
      try {
        socket = webSocketByteStream(await acceptWebSocket(req, protocol));
      } catch (error) {
        this.logger.debug(`portforward to ${podRef({ namespace, name })}: ${(error as Error).message}`);
        if (!res.headersSent && !res.destroyed) res.destroy();
        return;
      }
    } else if (isSpdyRequest(req)) {
      const offered = String(req.headers['x-stream-protocol-version'] ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      if (offered.length === 0) throw KubeStatusException.badRequest('unable to upgrade: X-Stream-Protocol-Version is required');
      if (!offered.includes(PORT_FORWARD_PROTOCOL)) {
        res.setHeader('X-Accepted-Stream-Protocol-Versions', PORT_FORWARD_PROTOCOL);
        throw new KubeStatusException(
          403,
          'Forbidden',
          `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${PORT_FORWARD_PROTOCOL}]`,
        );
      }
      socket = acceptSpdy(req, PORT_FORWARD_PROTOCOL);
    } else {
      throw KubeStatusException.badRequest(`Upgrade request required: pods/portforward is served over SPDY/3.1 or WebSocket (${PORT_FORWARD_TUNNEL_PROTOCOL})`);
    }
    const connection = new PortForwardConnection(
      socket,
      isWebSocketRequest(req) ? 'websocket' : 'spdy',
      (port) => this.streams.openStream(target.node, target.request(port)),
      `${namespace}/${name}, uid ${target.uid}`,
    );
    this.streams.track(connection);
    this.logger.debug(`portforward to ${podRef({ namespace, name })} over ${req.headers.upgrade ?? ''} ended: ${await connection.closed()}`);
  }

  private async remoteCommand(
    kind: Extract<PodStreamKind, 'exec' | 'attach'>,
    namespace: string,
    name: string,
    query: Record<string, unknown>,
    req: Request,
    res: Response,
  ): Promise<void> {
    const { node, request } = this.streams.checkRemoteCommand(namespace, name, kind, parseRemoteCommandQuery(query));
    const protocol = checkWebSocketRequest(req, REMOTE_COMMAND_PROTOCOLS, `pods/${kind}`);
    const stream = await this.streams.openStream(node, request);
    let ws;
    try {
      ws = await acceptWebSocket(req, protocol);
    } catch (error) {
      stream.cancel();
      this.logger.debug(`${kind} in ${podRef({ namespace, name })}: ${(error as Error).message}`);
      if (!res.headersSent && !res.destroyed) res.destroy();
      return;
    }
    const outcome = await bridgeRemoteCommand(ws, stream);
    if (outcome.kind === 'failed')
      this.logger.warn(`${kind} in ${podRef({ namespace, name })} container ${request.container ?? ''} broke off: ${outcome.message}`);
  }
}
