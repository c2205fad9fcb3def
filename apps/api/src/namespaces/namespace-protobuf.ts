/**
 * Reads the Namespace kubectl's typed client sends as `application/vnd.kubernetes.protobuf`
 * (`kubectl create namespace`): the `k8s\0` magic, a runtime.Unknown wrapping the
 * core/v1 Namespace message. Only what a Namespace create carries is read — ObjectMeta's
 * name (1), labels (11) and annotations (12) — other fields are skipped by wire type.
 */
export class ProtobufDecodeError extends Error {
  override readonly name = 'ProtobufDecodeError';
}

export type Field = { number: number; bytes?: Buffer; value?: number };

export function* fields(buffer: Buffer): Generator<Field> {
  let offset = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (offset >= buffer.length) throw new ProtobufDecodeError('truncated varint');
      const byte = buffer[offset++];
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new ProtobufDecodeError('varint too long');
    }
  };
  while (offset < buffer.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        yield { number, value: varint() };
        break;
      case 1:
        offset += 8;
        yield { number };
        break;
      case 2: {
        const length = varint();
        if (offset + length > buffer.length) throw new ProtobufDecodeError('truncated field');
        yield { number, bytes: buffer.subarray(offset, offset + length) };
        offset += length;
        break;
      }
      case 5:
        offset += 4;
        yield { number };
        break;
      default:
        throw new ProtobufDecodeError(`unsupported wire type ${key & 7}`);
    }
  }
}

function mapEntry(bytes: Buffer, encoding: 'utf8' | 'base64' = 'utf8'): [string, string] {
  let key = '';
  let value = '';
  for (const f of fields(bytes)) {
    if (f.number === 1 && f.bytes) key = f.bytes.toString('utf8');
    if (f.number === 2 && f.bytes) value = f.bytes.toString(encoding);
  }
  return [key, value];
}

/** The runtime.Unknown's type and raw object of a Kubernetes protobuf body. */
export function unwrap(body: Buffer): { apiVersion: string; kind: string; raw: Buffer } {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw new ProtobufDecodeError('missing the k8s protobuf magic');
  let kind = '';
  let apiVersion = '';
  let raw: Buffer | undefined;
  for (const f of fields(body.subarray(4))) {
    if (f.number === 1 && f.bytes) {
      for (const t of fields(f.bytes)) {
        if (t.number === 1 && t.bytes) apiVersion = t.bytes.toString('utf8');
        if (t.number === 2 && t.bytes) kind = t.bytes.toString('utf8');
      }
    }
    if (f.number === 2 && f.bytes) raw = f.bytes;
  }
  return { apiVersion, kind, raw: raw ?? Buffer.alloc(0) };
}

type Meta = { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };

/** ObjectMeta's name (1), namespace (3), labels (11) and annotations (12). */
function objectMeta(bytes: Buffer): Meta {
  const metadata: Meta = {};
  for (const m of fields(bytes)) {
    if (!m.bytes) continue;
    if (m.number === 1) metadata.name = m.bytes.toString('utf8');
    if (m.number === 3 && m.bytes.length > 0) metadata.namespace = m.bytes.toString('utf8');
    if (m.number === 11) metadata.labels = { ...metadata.labels, ...Object.fromEntries([mapEntry(m.bytes)]) };
    if (m.number === 12) metadata.annotations = { ...metadata.annotations, ...Object.fromEntries([mapEntry(m.bytes)]) };
  }
  return metadata;
}

/**
 * The JSON shape of a core/v1 ConfigMap (metadata 1, data 2, binaryData 3, immutable 4) or
 * Secret (metadata 1, data 2 as bytes, type 3, stringData 4, immutable 5) in a protobuf body,
 * as `kubectl create configmap|secret` sends them.
 */
export function decodeConfigObject(body: Buffer, kind: 'ConfigMap' | 'Secret'): Record<string, unknown> {
  const { apiVersion, kind: sentKind, raw } = unwrap(body);
  const object: Record<string, unknown> = { apiVersion, kind: sentKind || kind };
  const maps: Record<string, Record<string, string>> = {};
  const put = (field: string, entry: [string, string]): void => {
    maps[field] = { ...maps[field], [entry[0]]: entry[1] };
  };
  for (const f of fields(raw)) {
    if (f.number === 1 && f.bytes) object.metadata = objectMeta(f.bytes);
    else if (f.number === 2 && f.bytes) put('data', mapEntry(f.bytes, kind === 'Secret' ? 'base64' : 'utf8'));
    else if (kind === 'ConfigMap' && f.number === 3 && f.bytes) put('binaryData', mapEntry(f.bytes, 'base64'));
    else if (kind === 'ConfigMap' && f.number === 4) object.immutable = f.value === 1;
    else if (kind === 'Secret' && f.number === 3 && f.bytes) object.type = f.bytes.toString('utf8');
    else if (kind === 'Secret' && f.number === 4 && f.bytes) put('stringData', mapEntry(f.bytes));
    else if (kind === 'Secret' && f.number === 5) object.immutable = f.value === 1;
  }
  return { ...object, ...maps, metadata: object.metadata ?? {} };
}

/** The JSON shape of the Namespace in a Kubernetes protobuf body. */
export function decodeNamespace(body: Buffer): {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw new ProtobufDecodeError('missing the k8s protobuf magic');
  let kind = '';
  let apiVersion = '';
  let raw: Buffer | undefined;
  for (const f of fields(body.subarray(4))) {
    if (f.number === 1 && f.bytes) {
      for (const t of fields(f.bytes)) {
        if (t.number === 1 && t.bytes) apiVersion = t.bytes.toString('utf8');
        if (t.number === 2 && t.bytes) kind = t.bytes.toString('utf8');
      }
    }
    if (f.number === 2 && f.bytes) raw = f.bytes;
  }
  const metadata: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } = {};
  for (const f of fields(raw ?? Buffer.alloc(0))) {
    if (f.number !== 1 || !f.bytes) continue;
    for (const m of fields(f.bytes)) {
      if (!m.bytes) continue;
      if (m.number === 1) metadata.name = m.bytes.toString('utf8');
      if (m.number === 11) metadata.labels = { ...metadata.labels, ...Object.fromEntries([mapEntry(m.bytes)]) };
      if (m.number === 12) metadata.annotations = { ...metadata.annotations, ...Object.fromEntries([mapEntry(m.bytes)]) };
    }
  }
  return { apiVersion, kind, metadata };
}
