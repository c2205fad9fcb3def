/**
 * Reads the Namespace kubectl's typed client sends as `application/vnd.kubernetes.protobuf`
 * (`kubectl create namespace`): the `k8s\0` magic, a runtime.Unknown wrapping the
 * core/v1 Namespace message. Only what a Namespace create carries is read — ObjectMeta's
 * name (1), labels (11) and annotations (12) — other fields are skipped by wire type.
 */
export class ProtobufDecodeError extends Error {
  override readonly name = 'ProtobufDecodeError';
}

type Field = { number: number; bytes?: Buffer };

function* fields(buffer: Buffer): Generator<Field> {
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
        varint();
        yield { number };
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

function mapEntry(bytes: Buffer): [string, string] {
  let key = '';
  let value = '';
  for (const f of fields(bytes)) {
    if (f.number === 1 && f.bytes) key = f.bytes.toString('utf8');
    if (f.number === 2 && f.bytes) value = f.bytes.toString('utf8');
  }
  return [key, value];
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
