import { HttpException } from '@nestjs/common';
import type { FieldCause } from '#contracts';

/** A Kubernetes metav1.Status describing a failure. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  /** Empty, but for a 410 on a list page: the token to continue from the newest state. */
  metadata: { continue?: string };
  status: 'Failure';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: Array<{ reason: string; message: string; field: string }> };
  code: number;
}

/** The kind of each resource the API serves, for Status details that name a kind. */
const KIND_OF_RESOURCE: Record<string, string> = {
  pods: 'Pod',
  nodes: 'Node',
  namespaces: 'Namespace',
  events: 'Event',
  configmaps: 'ConfigMap',
  secrets: 'Secret',
};

/** An HTTP error whose body is a Kubernetes Status. */
export class KubeStatusException extends HttpException {
  constructor(code: number, reason: string, message: string, details?: KubeStatus['details'], metadata: KubeStatus['metadata'] = {}) {
    const body: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
    super(body, code);
  }

  static notFound(kind: string, name: string): KubeStatusException {
    return new KubeStatusException(404, 'NotFound', `${kind} "${name}" not found`, { name, kind });
  }

  static alreadyExists(kind: string, name: string): KubeStatusException {
    return new KubeStatusException(409, 'AlreadyExists', `${kind} "${name}" already exists`, { name, kind });
  }

  /**
   * 422 Invalid as the API server words it: details.kind is the kind (`Pod`), the message
   * lists each cause as `field: message` (one cause bare, several in brackets).
   */
  static invalid(resource: string, name: string, causes: FieldCause[]): KubeStatusException {
    const kind = KIND_OF_RESOURCE[resource] ?? resource;
    const list = causes.map((c) => `${c.field}: ${c.message}`);
    const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return new KubeStatusException(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
      name,
      kind,
      causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
    });
  }

  /** 403 Forbidden, as the API server words it (`pods "x" is forbidden: why`). */
  static forbidden(resource: string, name: string, why: string): KubeStatusException {
    return new KubeStatusException(403, 'Forbidden', `${resource} "${name}" is forbidden: ${why}`, { name, kind: resource });
  }

  static badRequest(message: string): KubeStatusException {
    return new KubeStatusException(400, 'BadRequest', message);
  }

  /** 409 Conflict for a write that named a resourceVersion other than the one stored. */
  static conflict(resource: string, name: string): KubeStatusException {
    return new KubeStatusException(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, kind: resource },
    );
  }

  /**
   * A PUT or PATCH whose object names a resourceVersion makes it a precondition, as in Kubernetes:
   * any other version than the stored one is a 409.
   */
  static checkResourceVersion(resource: string, name: string, proposed: unknown, stored: string | undefined): void {
    const expected = (proposed as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
    if (expected === undefined || expected === null) return;
    if ((typeof expected === 'string' ? expected : JSON.stringify(expected)) !== stored) throw KubeStatusException.conflict(resource, name);
  }
}
