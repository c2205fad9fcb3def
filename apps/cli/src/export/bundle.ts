import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { RecordedMessage } from '#domain/history';

/** One line of a bundle: a message with its stream, subject, sequence and store time, its bytes as text. */
export interface BundleLine {
  stream: string;
  subject: string;
  seq: number;
  storedMs: number;
  data: string;
}

export const BUNDLE_HEADER = { jetlet: 'bundle', version: 1 } as const;

export class BundleError extends Error {
  override readonly name = 'BundleError';
}

/** Writes the header and one JSON line per message. */
export async function writeBundle(path: string, lines: BundleLine[], meta: Record<string, unknown>): Promise<void> {
  const out = path === '-' ? process.stdout : createWriteStream(path);
  const write = async (line: string): Promise<void> => {
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  };
  await write(JSON.stringify({ ...BUNDLE_HEADER, ...meta }));
  for (const line of lines) await write(JSON.stringify(line));
  if (out !== process.stdout) {
    out.end();
    await once(out, 'finish');
  }
}

/** Reads a bundle, checking its header and every line's shape. */
export function readBundle(path: string): BundleLine[] {
  const text = readFileSync(path === '-' ? 0 : path, 'utf8');
  const [head, ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  let header: { jetlet?: unknown; version?: unknown };
  try {
    header = JSON.parse(head ?? '') as typeof header;
  } catch {
    throw new BundleError(`${path}: not a jetlet bundle (the first line is not JSON)`);
  }
  if (header.jetlet !== 'bundle' || header.version !== 1) throw new BundleError(`${path}: not a jetlet bundle of version 1`);
  return rest.map((l, i) => {
    let line: Partial<BundleLine>;
    try {
      line = JSON.parse(l) as Partial<BundleLine>;
    } catch {
      throw new BundleError(`${path}:${i + 2}: not JSON`);
    }
    if (
      typeof line.stream !== 'string' ||
      typeof line.subject !== 'string' ||
      typeof line.seq !== 'number' ||
      typeof line.storedMs !== 'number' ||
      typeof line.data !== 'string'
    )
      throw new BundleError(`${path}:${i + 2}: a line needs stream, subject, seq, storedMs and data`);
    return line as BundleLine;
  });
}

/** A recorded message read with its bytes kept. */
export function bundleLine(m: RecordedMessage): BundleLine {
  if (m.raw === undefined) throw new BundleError(`${m.stream}/${m.seq} was read without its bytes`);
  return { stream: m.stream, subject: m.subject, seq: m.seq, storedMs: m.storedMs, data: m.raw };
}
