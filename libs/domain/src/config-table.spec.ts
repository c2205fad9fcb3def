import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { AnyEnvelope } from '#contracts';
import { ConfigTable, configView } from './config-table.js';
import { summarize } from './history/summary.js';
import { SecretBox, SecretSealError } from './secret-box.js';

const UID = '5b1c2c3e-8a4f-4b8e-9d1a-0c2b3a4d5e6f';
const envelope = (type: string, data: object): AnyEnvelope =>
  ({ id: 'x', type, version: 1, time: '2026-05-01T10:00:00Z', source: { component: 'api' }, correlationId: UID, data }) as unknown as AnyEnvelope;

describe('SecretBox', () => {
  const sut = new SecretBox('k1', randomBytes(32));

  it('opens what it sealed, only under the same name and key', () => {
    const sealed = sut.seal({ data: { password: 'c2VjcmV0' } }, 'default/db');
    assert.match(sealed, /^v1:k1:/);
    assert.ok(!sealed.includes('c2VjcmV0'));
    assert.deepEqual(sut.open(sealed, 'default/db'), { data: { password: 'c2VjcmV0' } });
    assert.throws(() => sut.open(sealed, 'default/other'), SecretSealError);
    assert.throws(() => new SecretBox('k1', randomBytes(32)).open(sealed, 'default/db'), SecretSealError);
    assert.throws(() => new SecretBox('k2', randomBytes(32)).open(sealed, 'default/db'), /sealed with key k1/);
  });

  it('reads its configuration', () => {
    assert.equal(SecretBox.fromConfig(undefined), undefined);
    assert.equal(SecretBox.fromConfig(randomBytes(32).toString('base64'))?.keyId, 'k1');
    assert.equal(SecretBox.fromConfig(`prod-2:${randomBytes(32).toString('base64')}`)?.keyId, 'prod-2');
  });
});

describe('ConfigTable', () => {
  it('folds writes and deletions of its own kind, and opens sealed secrets', () => {
    const box = new SecretBox('k1', randomBytes(32));
    const sut = new ConfigTable('Secret', (sealed, name) => box.open(sealed, name));
    const sealed = box.seal({ data: { password: 'c2VjcmV0' }, annotations: { note: 'x' } }, 'default/db');
    assert.equal(sut.apply(envelope('ConfigMapWritten', { namespace: 'default', name: 'db', uid: UID, creationTimestamp: 'T' }), 1), undefined);
    const record = sut.apply(envelope('SecretWritten', { namespace: 'default', name: 'db', uid: UID, creationTimestamp: 'T', type: 'Opaque', sealed }), 2);
    assert.deepEqual(configView(record!), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'default', uid: UID, resourceVersion: '2', creationTimestamp: 'T', annotations: { note: 'x' } },
      data: { password: 'c2VjcmV0' },
      type: 'Opaque',
    });
    sut.apply(envelope('SecretDeleted', { uid: UID }), 3);
    assert.equal(sut.get('default', 'db'), undefined);
    assert.equal(sut.record('default', 'db')?.subjectSeq, 3);
  });

  it('marks a secret it cannot open unreadable instead of guessing', () => {
    const sut = new ConfigTable('Secret');
    const sealed = new SecretBox('k1', randomBytes(32)).seal({ data: {} }, 'default/db');
    const record = sut.apply(envelope('SecretWritten', { namespace: 'default', name: 'db', uid: UID, creationTimestamp: 'T', type: 'Opaque', sealed }), 1);
    assert.match(record?.unreadable ?? '', /no secret encryption key/);
  });

  it('summarises a secret without any value', () => {
    const line = summarize(envelope('SecretWritten', { namespace: 'default', name: 'db', uid: UID, creationTimestamp: 'T', type: 'Opaque', data: { password: 'c2VjcmV0' } }));
    assert.equal(line, 'secret default/db written (Opaque)');
  });
});
