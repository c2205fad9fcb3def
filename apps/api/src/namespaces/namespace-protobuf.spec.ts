import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeNamespace, ProtobufDecodeError } from './namespace-protobuf.js';

/** A length-delimited protobuf field (all the fields here are shorter than 128 bytes). */
const field = (number: number, value: Buffer | string): Buffer => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);
};

describe('decodeNamespace', () => {
  it('reads the name, labels and annotations of the Namespace kubectl create namespace sends', () => {
    const objectMeta = Buffer.concat([
      field(1, 'team-a'),
      field(11, Buffer.concat([field(1, 'team'), field(2, 'a')])),
      field(11, Buffer.concat([field(1, 'tier'), field(2, 'x')])),
      field(12, Buffer.concat([field(1, 'note'), field(2, 'hi')])),
    ]);
    const namespace = Buffer.concat([field(1, objectMeta), field(2, Buffer.alloc(0))]);
    const unknown = Buffer.concat([field(1, Buffer.concat([field(1, 'v1'), field(2, 'Namespace')])), field(2, namespace)]);

    const sut = decodeNamespace(Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]));

    assert.deepEqual(sut, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a', tier: 'x' }, annotations: { note: 'hi' } } });
  });

  it('rejects a body without the magic or with a truncated field', () => {
    assert.throws(() => decodeNamespace(Buffer.from('{"a":1}')), ProtobufDecodeError);
    assert.throws(() => decodeNamespace(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, 0x40, 0x01])])), ProtobufDecodeError);
  });
});
