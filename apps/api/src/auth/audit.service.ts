import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type MessageData } from '#contracts';
import { isMutatingVerb } from '#domain';
import type { Authenticated } from './auth.middleware.js';
import { auditRecordValid } from './audit-record.js';

/** The object a JSON answer describes: a Pod, a Namespace, or a Status naming one. */
interface Answer {
  kind?: unknown;
  reason?: unknown;
  metadata?: { name?: unknown; uid?: unknown };
  details?: { name?: unknown; uid?: unknown };
}

const arrayOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** Whether the query asks for `dryRun=All` (a request without a query, most writes, is not parsed). */
const queryDryRun = (url: string): boolean => url.includes('?') && new URL(url, 'http://localhost').searchParams.getAll('dryRun').includes('All');
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Records every mutating request as a `RequestAudited` fact once its answer is sent: who,
 * which verb on which object, and the answer's code. Audit never holds up or fails a request:
 * the fact goes through the bus's outbox.
 */
@Injectable()
export class AuditService {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** Follows one request to its answer (no-op for reads). */
  watch(req: IncomingMessage, res: ServerResponse & { json?: (body: unknown) => unknown }, auth: Authenticated): void {
    if (!isMutatingVerb(auth.attributes.verb)) return;
    let answer: Answer | undefined;
    const json = res.json?.bind(res);
    if (json) {
      res.json = (body: unknown): unknown => {
        answer = body as Answer;
        return json(body);
      };
    }
    res.once('finish', () => this.record(req, res.statusCode, auth, answer));
  }

  record(req: IncomingMessage, code: number, auth: Authenticated, answer?: Answer): void {
    const { user, attributes: a } = auth;
    const isStatus = answer?.kind === 'Status';
    const name = a.name || (isStatus ? text(answer?.details?.name) : text(answer?.metadata?.name)) || '';
    const objectUid = isStatus ? text(answer?.details?.uid) : text(answer?.metadata?.uid);
    const requestURI = req.url ?? '/';
    const data: MessageData<'RequestAudited'> = {
      user: user.name,
      userUid: user.uid,
      groups: user.groups,
      verb: a.verb,
      apiGroup: a.apiGroup,
      resource: a.resource,
      subresource: a.subresource,
      namespace: a.namespace,
      name,
      ...(objectUid ? { objectUid } : {}),
      requestURI: requestURI.slice(0, 1024),
      code,
      ...(code >= 400 && text(answer?.reason) ? { reason: text(answer?.reason) } : {}),
      // kubectl sends a delete's dryRun in the DeleteOptions body.
      dryRun: queryDryRun(requestURI) || arrayOf((req as { body?: { dryRun?: unknown } }).body?.dryRun).includes('All'),
    };
    // A namespace is its own object: it is audited under its name alone, as pods are under theirs.
    const namespace = a.resource === 'namespaces' ? '' : a.namespace;
    this.bus.publishBuffered(SUBJECTS.audit(a.resource, namespace, name), 'RequestAudited', data, {
      correlationId: objectUid ?? `${a.resource}/${a.namespace}/${name}`,
      // Built here from the request's checked attributes: see auditRecordValid.
      prevalidated: auditRecordValid(data),
    });
  }
}
