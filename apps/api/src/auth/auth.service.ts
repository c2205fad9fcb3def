import { readFileSync } from 'node:fs';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ConfigError } from '#contracts';
import { authorize, type Decision, type RequestAttributes, type RoleBinding, type UserInfo } from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { parseRoleBindings } from './role-bindings.js';
import { clientCertificateUser } from './client-certificate.js';
import { TokenAuthenticator } from './token-file.js';

/** The WebSocket subprotocol that carries a bearer token where a browser cannot set headers (base64url of the token). */
const WEBSOCKET_TOKEN_PROTOCOL = 'base64url.bearer.authorization.k8s.io.';

/** Who an unsecured API (API_INSECURE=true) takes every caller to be: anyone, with every right. */
const UNSECURED_USER: UserInfo = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated', 'system:masters'] };

/** The bearer token of a request: the Authorization header, else the WebSocket subprotocol kube-apiserver also reads. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  if (match) return match[1];
  const protocols = String(headers['sec-websocket-protocol'] ?? '').split(',');
  const encoded = protocols.map((p) => p.trim()).find((p) => p.startsWith(WEBSOCKET_TOKEN_PROTOCOL));
  return encoded ? Buffer.from(encoded.slice(WEBSOCKET_TOKEN_PROTOCOL.length), 'base64url').toString('utf8') : undefined;
}

/**
 * Authentication and authorization as kube-apiserver does them, from two files read at start:
 * bearer tokens (`API_TOKEN_AUTH_FILE`) and role bindings (`API_AUTHORIZATION_FILE`). Without a
 * token file the API refuses to start, unless `API_INSECURE=true` says it may serve everyone.
 */
@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);
  private readonly tokens?: TokenAuthenticator;
  private readonly bindings: RoleBinding[];
  private readonly clientCertificates: boolean;
  readonly insecure: boolean;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    this.insecure = config.API_INSECURE === 'true';
    const problems: string[] = [];
    const read = (variable: string, path: string): string | undefined => {
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        problems.push(`  ${variable}: ${(error as Error).message}`);
        return undefined;
      }
    };
    const tokenText = config.API_TOKEN_AUTH_FILE ? read('API_TOKEN_AUTH_FILE', config.API_TOKEN_AUTH_FILE) : undefined;
    const bindingText = config.API_AUTHORIZATION_FILE ? read('API_AUTHORIZATION_FILE', config.API_AUTHORIZATION_FILE) : undefined;
    try {
      if (tokenText !== undefined) this.tokens = TokenAuthenticator.parse(tokenText);
    } catch (error) {
      problems.push(`  API_TOKEN_AUTH_FILE: ${(error as Error).message}`);
    }
    this.bindings = [];
    try {
      if (bindingText !== undefined) this.bindings = parseRoleBindings(bindingText);
    } catch (error) {
      problems.push(`  API_AUTHORIZATION_FILE: ${(error as Error).message}`);
    }
    this.clientCertificates = config.API_CLIENT_CA_FILE !== undefined;
    if (this.clientCertificates && !(config.API_TLS_CERT_FILE && config.API_TLS_PRIVATE_KEY_FILE))
      problems.push('  API_CLIENT_CA_FILE: client certificates need HTTPS (API_TLS_CERT_FILE and API_TLS_PRIVATE_KEY_FILE)');
    if (!this.insecure && !config.API_TOKEN_AUTH_FILE)
      problems.push('  API_TOKEN_AUTH_FILE: required (a token file), unless API_INSECURE=true serves everyone without authentication');
    if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
    if (this.insecure) {
      const banner = '*'.repeat(100);
      this.logger.warn(banner);
      this.logger.warn('API_INSECURE=true: the API serves EVERY request WITHOUT authentication, with cluster-admin rights.');
      this.logger.warn('Anyone who can reach this port can run any container on every node. Never use this outside a lab.');
      this.logger.warn(banner);
    } else {
      const certificates = this.clientCertificates ? ' and client certificates' : '';
      this.logger.log(`authentication: ${this.tokens?.size ?? 0} bearer token(s)${certificates}; authorization: RBAC with ${this.bindings.length} binding(s)`);
    }
  }

  /**
   * The caller, undefined without credentials, or 'invalid' for credentials that name nobody.
   * As kube-apiserver's union of authenticators: a client certificate the client CA signed
   * comes first, then a bearer token; a certificate of another CA fails only when no token
   * succeeds.
   */
  authenticate(req: IncomingMessage): UserInfo | 'invalid' | undefined {
    const certificate = this.clientCertificates ? clientCertificateUser(req.socket) : undefined;
    if (certificate !== undefined && certificate !== 'invalid') return certificate;
    const token = bearerToken(req.headers);
    let user: UserInfo | 'invalid' | undefined = token === undefined ? undefined : (this.tokens?.authenticate(token) ?? 'invalid');
    if (user === undefined && certificate === 'invalid') user = 'invalid';
    if (this.insecure) return user === undefined || user === 'invalid' ? UNSECURED_USER : user;
    return user;
  }

  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    return authorize(user, attrs, this.bindings);
  }
}
