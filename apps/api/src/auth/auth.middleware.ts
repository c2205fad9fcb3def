import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { forbiddenMessage, isPublicPath, requestAttributes, type RequestAttributes, type UserInfo } from '#domain';
import type { KubeStatus } from '../errors/kube-status.exception.js';
import { AuditService } from './audit.service.js';
import { AuthService } from './auth.service.js';

/** What the authentication step leaves on a request for the handlers after it. */
export interface Authenticated {
  user: UserInfo;
  attributes: RequestAttributes;
}

/** The caller of a request that passed the middleware. */
export function callerOf(req: IncomingMessage): UserInfo | undefined {
  return (req as IncomingMessage & { auth?: Authenticated }).auth?.user;
}

const UNAUTHORIZED: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

function forbidden(user: UserInfo, attrs: RequestAttributes): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: forbiddenMessage(user.name, attrs),
    reason: 'Forbidden',
    details: { ...(attrs.name ? { name: attrs.name } : {}), ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}), kind: attrs.resource },
    code: 403,
  };
}

type Verdict = { ok: true; auth: Authenticated } | { ok: false; status: KubeStatus };

/**
 * Every request passes here before any route, watch or upgrade: 401 without valid
 * credentials (but for the health and version paths), 403 when RBAC does not allow what the
 * request asks for, with kube-apiserver's Status bodies. Mutating requests are audited.
 */
@Injectable()
export class AuthMiddleware {
  constructor(
    private readonly auth: AuthService,
    private readonly audit: AuditService,
  ) {}

  /** The decision on one request, from its method, URL and headers only. */
  decide(req: IncomingMessage): Verdict | undefined {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const attributes = requestAttributes(req.method ?? 'GET', url.pathname, Object.fromEntries(url.searchParams));
    const user = this.auth.authenticate(req);
    if (user === undefined || user === 'invalid') return isPublicPath(url.pathname) ? undefined : { ok: false, status: UNAUTHORIZED };
    const auth = { user, attributes };
    (req as IncomingMessage & { auth?: Authenticated }).auth = auth;
    if (isPublicPath(url.pathname) || this.auth.authorize(user, attributes).allowed) return { ok: true, auth };
    return { ok: false, status: forbidden(user, attributes) };
  }

  /** Express middleware for every HTTP request. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    const verdict = this.decide(req);
    if (verdict?.ok !== false) {
      if (verdict) this.audit.watch(req, res, verdict.auth);
      next();
      return;
    }
    const auth = (req as Request & { auth?: Authenticated }).auth;
    if (auth) this.audit.watch(req, res, auth);
    res.status(verdict.status.code).json(verdict.status);
  };

  /**
   * Puts the same check in front of every WebSocket or SPDY upgrade on `server`, whoever
   * listens for them: an upgrade that fails is answered on the socket and never reaches a
   * listener; one that passes carries its caller (`callerOf`).
   */
  guardUpgrades(server: Server): void {
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
    server.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
      if (event !== 'upgrade') return emit(event, ...args);
      const [req, socket] = args as [IncomingMessage, Duplex];
      const verdict = this.decide(req);
      if (verdict?.ok === false) {
        const body = JSON.stringify(verdict.status);
        const reason = verdict.status.code === 401 ? 'Unauthorized' : 'Forbidden';
        socket.end(
          `HTTP/1.1 ${verdict.status.code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return true;
      }
      return emit(event, ...args);
    }) as typeof server.emit;
  }
}
