import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, type Observable } from 'rxjs';
import { UNSUPPORTED_FIELD_MESSAGE } from '#contracts';
import { KubeStatusException, type KubeStatus } from './kube-status.exception.js';

const DIRECTIVES = ['Ignore', 'Warn', 'Strict'];

/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`, what kubectl sends). A
 * field jetlet does not know is either a Kubernetes field it cannot honour or a typo, and
 * dropping either would run something other than what was asked; so it is never ignored:
 * under Strict it is the API server's 400 strict decoding error naming each unknown field,
 * otherwise the 422 naming each field jetlet does not support.
 */
@Injectable()
export class FieldValidationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    const raw = request.query.fieldValidation;
    const directive = typeof raw === 'string' ? raw : undefined;
    if (directive !== undefined && directive !== '' && !DIRECTIVES.includes(directive)) {
      throw KubeStatusException.badRequest(`fieldValidation must be one of "Ignore", "Warn", "Strict", got "${directive}"`);
    }
    if (directive !== 'Strict') return next.handle();
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (!(error instanceof KubeStatusException) || error.getStatus() !== 422) throw error;
        const body = error.getResponse() as KubeStatus;
        const unknown = (body.details?.causes ?? []).filter((c) => c.reason === 'FieldValueNotSupported' && c.message === UNSUPPORTED_FIELD_MESSAGE);
        if (unknown.length === 0) throw error;
        const kind = body.details?.kind ?? 'Object';
        throw new KubeStatusException(
          400,
          'BadRequest',
          `${kind} in version "v1" cannot be handled as a ${kind}: strict decoding error: ${unknown.map((c) => `unknown field "${c.field}"`).join(', ')}`,
        );
      }),
    );
  }
}
