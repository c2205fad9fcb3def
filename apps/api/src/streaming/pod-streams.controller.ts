import { Controller, Get, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { PodStreamKind } from '#contracts';
import { podRef } from '#observability';
import { parseRemoteCommandQuery, PodStreamsService } from './pod-streams.service.js';
import { bridgeRemoteCommand, REMOTE_COMMAND_PROTOCOLS } from './remote-command.js';
import { acceptWebSocket, checkWebSocketRequest } from './upgrade.js';

/**
 * Kubernetes core/v1 `pods/exec` and `pods/attach` over WebSocket (the remote command
 * subprotocols kubectl speaks), relayed to the agent of the pod's node over NATS. GET is
 * the WebSocket handshake; POST is what SPDY clients send, answered with why not.
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
