import type { MessageData } from '#contracts';

type AuditRecord = MessageData<'RequestAudited'>;

const VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const FIELDS = new Set([
  'user',
  'userUid',
  'groups',
  'verb',
  'apiGroup',
  'resource',
  'subresource',
  'namespace',
  'name',
  'objectUid',
  'requestURI',
  'code',
  'reason',
  'dryRun',
]);

/** A string of at most `max` UTF-16 units: within class-validator's MaxLength, which counts a surrogate pair as one. */
const short = (v: unknown, max: number): boolean => typeof v === 'string' && v.length <= max;
const absentOr = (v: unknown, max: number): boolean => v === undefined || v === null || short(v, max);

/**
 * Whether the audit record the API built passes `RequestAuditedEvent` as it is, checked by
 * hand (a spec holds it to the class: it never says yes where the class says no). One that
 * passes is published `prevalidated`, so the classes do not run over a record per write; any
 * other takes the bus's full check, which names the field.
 */
export function auditRecordValid(record: AuditRecord): boolean {
  for (const key in record) if (!FIELDS.has(key)) return false;
  return (
    short(record.user, 253) &&
    short(record.userUid, 253) &&
    Array.isArray(record.groups) &&
    record.groups.every((g) => typeof g === 'string') &&
    VERBS.has(record.verb) &&
    short(record.apiGroup, 253) &&
    typeof record.resource === 'string' &&
    /^[a-z0-9.-]+$/.test(record.resource) &&
    short(record.subresource, 63) &&
    short(record.namespace, 63) &&
    short(record.name, 253) &&
    absentOr(record.objectUid, 64) &&
    short(record.requestURI, 1024) &&
    Number.isInteger(record.code) &&
    record.code >= 100 &&
    record.code <= 599 &&
    absentOr(record.reason, 64) &&
    typeof record.dryRun === 'boolean'
  );
}
