import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, SetMetadata, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

const PUBLIC_ROUTE = 'jetlet:public-route';
const OPEN_WITHOUT_TOKEN = 'jetlet:open-without-token';

/** Marks a handler that answers without the bearer token (/healthz, as the kubelet's). */
export const Public = (): MethodDecorator => SetMetadata(PUBLIC_ROUTE, true);

/** Marks a handler that answers anyone while no AGENT_TOKEN is set (/metrics: counts, no pod data). */
export const OpenWithoutToken = (): MethodDecorator => SetMetadata(OPEN_WITHOUT_TOKEN, true);

/** True when `header` is `Bearer <token>` with exactly this token; compared in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+)$/i.exec(header?.trim() ?? '');
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Every route but the public ones wants `Authorization: Bearer <AGENT_TOKEN>`; 401 otherwise.
 * Without AGENT_TOKEN the routes that show pods (specs with their env, logs) answer nobody.
 */
@Injectable()
export class AgentTokenGuard implements CanActivate {
  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const token = this.config.AGENT_TOKEN;
    if (this.reflector.get<boolean | undefined>(PUBLIC_ROUTE, context.getHandler())) return true;
    if (token === undefined || token === '') {
      if (this.reflector.get<boolean | undefined>(OPEN_WITHOUT_TOKEN, context.getHandler())) return true;
      throw new UnauthorizedException('no AGENT_TOKEN is set: this endpoint answers nobody');
    }
    if (bearerMatches(context.switchToHttp().getRequest<Request>().headers.authorization, token)) return true;
    throw new UnauthorizedException();
  }
}
