import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { isUnavailable, MessageTooLargeError } from '#bus';
import { ContractValidationError } from '#contracts';
import { KubeStatusException, type KubeStatus } from './kube-status.exception.js';

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  504: 'Timeout',
};

/** What the API server says for a path it does not serve. */
const NOT_FOUND_MESSAGE = 'the server could not find the requested resource';

function isClientError(e: unknown): e is { status: number; message: string } {
  const status = (e as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** Every error leaves the API as a Kubernetes Status object. */
@Catch()
export class KubeStatusFilter implements ExceptionFilter {
  private readonly logger = new Logger(KubeStatusFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    let body: KubeStatus;
    if (exception instanceof KubeStatusException) {
      body = exception.getResponse() as KubeStatus;
    } else if (exception instanceof MessageTooLargeError) {
      // The object passed validation but would not fit in one message on the bus.
      body = new KubeStatusException(413, 'RequestEntityTooLarge', `Request entity too large: ${exception.message}`).getResponse() as KubeStatus;
    } else if (exception instanceof ContractValidationError) {
      // The bus refused to publish what its readers would reject: the request, not the server, is at fault.
      this.logger.warn(`refused to publish: ${exception.message}`);
      const causes = exception.causes.map((c) => ({ ...c, field: c.field.replace(/^data\.(pod\.)?/, '') }));
      body = KubeStatusException.invalid(exception.contract.startsWith('Node') ? 'nodes' : 'pods', '', causes).getResponse() as KubeStatus;
    } else if (exception instanceof HttpException) {
      const code = exception.getStatus();
      body = new KubeStatusException(code, REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'), exception.message).getResponse() as KubeStatus;
    } else if (isUnavailable(exception)) {
      // NATS is down or JetStream not back yet: say so at once, as an API server without etcd does.
      response.setHeader('Retry-After', '1');
      body = new KubeStatusException(503, 'ServiceUnavailable', `the event store is unavailable: ${(exception as Error).message}`).getResponse() as KubeStatus;
    } else if (isClientError(exception)) {
      // body-parser's own errors (malformed JSON, too large) carry a 4xx status.
      body = new KubeStatusException(exception.status, REASONS[exception.status] ?? 'BadRequest', exception.message).getResponse() as KubeStatus;
    } else {
      this.logger.error(`unhandled: ${(exception as Error)?.stack ?? String(exception)}`);
      body = new KubeStatusException(500, 'InternalError', 'Internal error occurred').getResponse() as KubeStatus;
    }
    // Every 404 carries details, as the API server's do: clients read details.name unchecked.
    if (body.code === 404 && !body.details) body = { ...body, message: NOT_FOUND_MESSAGE, details: {} };
    response.status(body.code).json(body);
  }
}
