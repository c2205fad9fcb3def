import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ContractValidationError, MESSAGES, parseContract, type MessageData } from '#contracts';
import { auditRecordValid } from './audit-record.js';

type AuditRecord = MessageData<'RequestAudited'>;

/** Whether the contract class takes the record, as the bus's full check and every reader do. */
function classAccepts(record: unknown): boolean {
  try {
    parseContract(MESSAGES.RequestAudited.data, JSON.parse(JSON.stringify(record)) as unknown, 'RequestAudited');
    return true;
  } catch (error) {
    if (error instanceof ContractValidationError) return false;
    throw error;
  }
}

const typical: AuditRecord = {
  user: 'system:anonymous',
  userUid: '',
  groups: ['system:unauthenticated'],
  verb: 'create',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'web',
  objectUid: '6f1d3c3e-4b0a-4a51-9d7e-2f2f4f5b6c7d',
  requestURI: '/api/v1/namespaces/default/pods',
  code: 201,
  dryRun: false,
};

/** Strings around each limit, with characters a length check can miscount (surrogate pairs). */
const text = (max: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.string({ minLength: max - 2, maxLength: max + 2 }),
    fc.string({ unit: 'grapheme', minLength: Math.max(0, max - 3), maxLength: max + 1 }),
  );
const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined | null> => fc.oneof(arb, fc.constant(undefined), fc.constant(null));
const anything = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant({}), fc.constant([]));

const fields = {
  user: fc.oneof(text(253), anything),
  userUid: fc.oneof(text(253), anything),
  groups: fc.oneof(fc.array(fc.string()), fc.array(fc.oneof(fc.string(), fc.integer())), anything),
  verb: fc.oneof(fc.constantFrom('create', 'update', 'patch', 'delete', 'deletecollection', 'get', 'Create', ''), anything),
  apiGroup: fc.oneof(text(253), anything),
  resource: fc.oneof(fc.stringMatching(/^[a-z0-9.-]{0,12}$/), fc.constantFrom('Pods', 'pods/x', 'pods\n', ''), anything),
  subresource: fc.oneof(text(63), anything),
  namespace: fc.oneof(text(63), anything),
  name: fc.oneof(text(253), anything),
  objectUid: optional(text(64)),
  requestURI: fc.oneof(text(1024), anything),
  code: fc.oneof(fc.integer({ min: 90, max: 610 }), fc.double(), anything),
  reason: optional(text(64)),
  dryRun: fc.oneof(fc.boolean(), anything),
  extra: fc.string(),
};
const record = fc.record(fields, { requiredKeys: [] });
/** One field of a record, changed (or added, for `extra`). */
const oneField = fc
  .constantFrom(...(Object.keys(fields) as Array<keyof typeof fields>))
  .chain((key) => fields[key].map((value: unknown) => ({ [key]: value })));

describe('auditRecordValid', () => {
  it('takes the records the API writes', () => {
    assert.ok(auditRecordValid(typical));
    assert.ok(classAccepts(typical));
    const refused = { ...typical, objectUid: undefined, code: 403, reason: 'Forbidden', verb: 'delete', namespace: '', name: '' };
    assert.ok(auditRecordValid(refused));
  });

  it('never takes a record the contract class refuses', () => {
    fc.assert(
      fc.property(record, (r) => {
        if (auditRecordValid(r as AuditRecord)) assert.ok(classAccepts(r), `the class refuses ${JSON.stringify(r)}`);
      }),
      { numRuns: 3000 },
    );
  });

  it('never takes a record the class refuses, one field changed from a valid one', () => {
    fc.assert(
      fc.property(oneField, (change) => {
        const r = { ...typical, ...change };
        if (auditRecordValid(r)) assert.ok(classAccepts(r), `the class refuses ${JSON.stringify(r)}`);
      }),
      { numRuns: 3000 },
    );
  });
});
