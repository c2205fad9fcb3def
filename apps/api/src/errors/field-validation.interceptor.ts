import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable, tap } from 'rxjs';
import { KubeStatusException } from './kube-status.exception.js';
import { isJsonBody, mediaType } from '../validation/json-body.js';
import { withFieldValidation, type FieldValidationDirective } from './field-validation.context.js';

const DIRECTIVES: FieldValidationDirective[] = ['Ignore', 'Warn', 'Strict'];

/** Bodies decoded as a whole object, where kube-apiserver's strict decoder sees repeated keys (a JSON patch is a list of operations). */
const OBJECT_BODIES = new Set(['application/json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);

/** The body as sent when it is the JSON of an object write (the parser keeps it, see main.ts). */
function rawJson(request: Request & { rawBody?: Buffer }): string | undefined {
  if (!isJsonBody(request) || !Buffer.isBuffer(request.rawBody)) return undefined;
  return OBJECT_BODIES.has(mediaType(request) ?? 'application/json') ? request.rawBody.toString('utf8') : undefined;
}

/** A warning header's value as kube-apiserver writes it: code 299, agent `-`, the text quoted. */
function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`; kubectl sends Strict
 * with `--validate=strict`, its default, Warn with `--validate=warn`, Ignore with
 * `--validate=false`; absent means Warn, as in kube-apiserver). The directive is put in scope
 * for the handler, which decodes what it writes with `decodeFields`; what that warned goes
 * out as `Warning` headers, which kubectl prints.
 */
@Injectable()
export class FieldValidationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    const raw = request.query.fieldValidation;
    const given = typeof raw === 'string' && raw !== '' ? raw : undefined;
    if (given !== undefined && !DIRECTIVES.includes(given as FieldValidationDirective)) {
      throw KubeStatusException.badRequest(`fieldValidation must be one of "Ignore", "Warn", "Strict", got "${given}"`);
    }
    const directive = (given as FieldValidationDirective | undefined) ?? 'Warn';
    const response = context.switchToHttp().getResponse<Response>();
    return new Observable((subscriber) =>
      withFieldValidation(
        directive,
        (warnings) =>
          next
            .handle()
            .pipe(
              tap(() => {
                if (warnings.length > 0 && !response.headersSent) response.appendHeader('Warning', [...new Set(warnings)].map(warningHeader));
              }),
            )
            .subscribe(subscriber),
        directive === 'Ignore' ? undefined : rawJson(request),
      ),
    );
  }
}
