import { HttpException } from '@nestjs/common';
import type { FieldCause } from '#contracts';

/** A Kubernetes metav1.Status describing a failure. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: { name?: string; kind?: string; causes?: Array<{ reason: string; message: string; field: string }> };
  code: number;
}

/** An HTTP error whose body is a Kubernetes Status. */
export class KubeStatusException extends HttpException {
  constructor(code: number, reason: string, message: string, details?: KubeStatus['details']) {
    const body: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
    super(body, code);
  }

  static notFound(kind: string, name: string): KubeStatusException {
    return new KubeStatusException(404, 'NotFound', `${kind} "${name}" not found`, { name, kind });
  }

  static alreadyExists(kind: string, name: string): KubeStatusException {
    return new KubeStatusException(409, 'AlreadyExists', `${kind} "${name}" already exists`, { name, kind });
  }

  static invalid(kind: string, name: string, causes: FieldCause[]): KubeStatusException {
    const list = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
    return new KubeStatusException(422, 'Invalid', `${kind.slice(0, -1).replace(/^./, (ch) => ch.toUpperCase())} "${name}" is invalid: [${list}]`, {
      name,
      kind,
      causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
    });
  }

  static badRequest(message: string): KubeStatusException {
    return new KubeStatusException(400, 'BadRequest', message);
  }
}
