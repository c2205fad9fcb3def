import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { dns1123LabelErrors, dns1123SubdomainErrors, MAX_OBJECT_BYTES, type FieldCause } from '#contracts';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { bodyShapeProblem } from './request-shape.js';

/** How each URL parameter is checked, and which field of the object it stands for. */
const PARAMS: Record<string, { errors: (value: string) => string[]; field: string }> = {
  namespace: { errors: dns1123LabelErrors, field: 'metadata.namespace' },
  name: { errors: dns1123SubdomainErrors, field: 'metadata.name' },
  node: { errors: dns1123SubdomainErrors, field: 'metadata.name' },
  container: { errors: dns1123LabelErrors, field: 'container' },
};

/** The resource a path names: the segment before `:name`, or the last plural one (`pods`, `nodes`). */
function resourceOf(path: string): string {
  const segments = path.split('/').filter((s) => s && !s.startsWith(':'));
  return segments.reverse().find((s) => s.endsWith('s') && s !== 'namespaces') ?? 'namespaces';
}

/**
 * Every request passes here before any handler runs: URL parameters must be names
 * Kubernetes allows (so none can reach a subject token or a log it would break), and the
 * body must be neither too large for the log nor too deep or wide to handle.
 */
@Injectable()
export class KubeInputGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<Request>();
    this.checkParams(request);
    this.checkBody(request);
    return true;
  }

  private checkParams(request: Request): void {
    const causes: FieldCause[] = [];
    let shown = '';
    for (const [param, value] of Object.entries(request.params ?? {})) {
      const rule = PARAMS[param];
      if (!rule || typeof value !== 'string') continue;
      const errors = rule.errors(value);
      if (errors.length === 0) continue;
      if (param === 'name' || param === 'node') shown = value;
      causes.push({ field: rule.field, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${errors.join('; ')}` });
    }
    // The resource is named only in a refusal: a valid request does not work it out.
    if (causes.length === 0) return;
    const kind = resourceOf((request.route as { path?: string } | undefined)?.path ?? request.path);
    const bodyName = (request.body as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
    if (!shown && typeof bodyName === 'string') shown = bodyName;
    // Nothing by such a name can exist: reads and changes find nothing; creates and replaces are invalid.
    if (request.method === 'POST' || request.method === 'PUT') throw KubeStatusException.invalid(kind, shown, causes);
    const message = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
    throw new KubeStatusException(404, 'NotFound', `${kind} "${shown}" not found: ${message}`, {
      name: shown,
      kind,
      causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
    });
  }

  private checkBody(request: Request): void {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > MAX_OBJECT_BYTES) {
      throw new KubeStatusException(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_OBJECT_BYTES} bytes per object`);
    }
    const problem = request.body === undefined ? undefined : bodyShapeProblem(request.body);
    if (problem) throw KubeStatusException.badRequest(problem);
  }
}
