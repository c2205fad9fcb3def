import { DeliverPolicy, JetStreamApiError, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ContractValidationError, decodeEnvelope, parseIdentity, subjectNodeMismatch } from '#contracts';
import { busTls, credentialOptions, tlsOptions, type BusCredentials, type BusTls } from '#bus/credentials';
import { compareRecorded, type RecordedMessage } from '#domain/history';

/** Headers an imported message carries: where it sat in the cluster it was exported from. */
export const ORIGIN_HEADERS = { seq: 'Jetlet-Origin-Seq', storedMs: 'Jetlet-Origin-Stored-Ms' } as const;

/** What to read of one stream. */
export interface StreamQuery {
  stream: string;
  /** One subject filter (nats-server 2.9 takes one per consumer); all when absent. */
  filter?: string;
  /** Stop after this sequence. */
  untilSeq?: number;
  /** Stop after messages stored later than this (ms since the epoch). */
  untilMs?: number;
  /** Skip messages stored before this (ms since the epoch). */
  sinceMs?: number;
  /** Keep each message's bytes (for an export). */
  raw?: boolean;
}

/** A failure to reach or read the streams, said for a person. */
export class StreamReadError extends Error {
  override readonly name = 'StreamReadError';
}

/** Decodes one stored message; an invalid one is kept, marked with why a consumer would terminate it. */
export function toRecorded(stream: string, subject: string, seq: number, storedMs: number, data: Uint8Array): RecordedMessage {
  try {
    const envelope = decodeEnvelope(data);
    const mismatch = subjectNodeMismatch(subject, envelope);
    if (mismatch) return { stream, subject, seq, storedMs, invalid: mismatch };
    return { stream, subject, seq, storedMs, envelope };
  } catch (error) {
    return { stream, subject, seq, storedMs, invalid: error instanceof ContractValidationError ? error.message : String(error) };
  }
}

/** jetctl's NATS identity from the environment: `$NATS_NKEY_SEED_FILE`, as `$NATS_IDENTITY` (jetctl by default). */
export function cliCredentials(): ReturnType<typeof credentialOptions> {
  const seedFile = process.env.NATS_NKEY_SEED_FILE;
  if (!seedFile) return {};
  const identity = parseIdentity(process.env.NATS_IDENTITY ?? 'jetctl');
  if (!identity) throw new StreamReadError(`NATS_IDENTITY "${process.env.NATS_IDENTITY}" is not an identity (api, scheduler, alerter, jetctl, admin, node:NAME)`);
  return credentialOptions({ identity, seedFile }, console);
}

/** The same identity, as a Bus option (jetctl events reads through the bus adapter). */
export function cliBusCredentials(): { credentials?: BusCredentials } {
  const seedFile = process.env.NATS_NKEY_SEED_FILE;
  const identity = parseIdentity(process.env.NATS_IDENTITY ?? 'jetctl');
  return seedFile && identity ? { credentials: { identity, seedFile } } : {};
}

/** jetctl's TLS to NATS from the environment, as every component reads it: `$NATS_TLS_CA_FILE`, and `$NATS_TLS_CERT_FILE`/`$NATS_TLS_KEY_FILE` for mutual TLS. */
export function cliBusTls(): { tls?: BusTls } {
  const tls = busTls(process.env);
  if (tls && (tls.certFile === undefined) !== (tls.keyFile === undefined)) throw new StreamReadError('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together');
  return tls ? { tls } : {};
}

/**
 * jetctl's read-only view of the streams: ordered (ack-less, server-side ephemeral)
 * consumers, nothing created that outlives a read, nothing published.
 */
export class StreamReader {
  /** Keep every message's bytes (for an export). */
  keepRaw = false;

  private constructor(
    readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
  ) {}

  static async connect(url: string): Promise<StreamReader> {
    let nc: NatsConnection;
    try {
      nc = await connect({ servers: url.split(','), name: 'jetctl', maxReconnectAttempts: 0, ...cliCredentials(), ...tlsOptions(cliBusTls().tls) });
    } catch (error) {
      throw new StreamReadError(`cannot reach NATS at ${url}: ${(error as Error).message}`, { cause: error });
    }
    return new StreamReader(nc, jetstream(nc), await jetstreamManager(nc));
  }

  /** Stream names and message counts that exist on the server. */
  async streams(): Promise<Map<string, { messages: number; firstSeq: number; lastSeq: number }>> {
    const out = new Map<string, { messages: number; firstSeq: number; lastSeq: number }>();
    for await (const s of this.jsm.streams.list())
      out.set(s.config.name, { messages: s.state.messages, firstSeq: s.state.first_seq, lastSeq: s.state.last_seq });
    return out;
  }

  /** Every message of one query, in stream order. A stream that does not exist reads as empty. */
  async read(query: StreamQuery): Promise<RecordedMessage[]> {
    const out: RecordedMessage[] = [];
    let consumer;
    try {
      consumer = await this.js.consumers.get(query.stream, {
        filter_subjects: query.filter ?? '>',
        ...(query.sinceMs === undefined
          ? { deliver_policy: DeliverPolicy.All }
          : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(query.sinceMs).toISOString() }),
      });
      const info = await consumer.info(true);
      if (info.num_pending === 0) return out;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.status === 404) return out;
      if (error instanceof Error && /stream not found/i.test(error.message)) return out;
      throw error;
    }
    const messages = await consumer.consume({ max_messages: 1024 });
    try {
      for await (const m of messages) {
        const recorded = this.recorded(query.stream, m);
        if ((query.untilSeq !== undefined && recorded.seq > query.untilSeq) || (query.untilMs !== undefined && recorded.storedMs > query.untilMs)) break;
        if (query.sinceMs === undefined || recorded.storedMs >= query.sinceMs)
          out.push((query.raw ?? this.keepRaw) ? { ...recorded, raw: new TextDecoder().decode(m.data) } : recorded);
        if (m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
    return out;
  }

  /** Several queries, merged into the log's one order (duplicates from overlapping filters dropped). */
  async readAll(queries: StreamQuery[]): Promise<RecordedMessage[]> {
    const parts = await Promise.all(queries.map((q) => this.read(q)));
    const seen = new Set<string>();
    const merged: RecordedMessage[] = [];
    for (const m of parts.flat()) {
      const key = `${m.stream}/${m.seq}`;
      if (seen.has(key)) continue;
      seen.add(key);
      merged.push(m);
    }
    return merged.sort(compareRecorded);
  }

  /**
   * Delivers every message of `query` from `fromSeq` (the start when absent) and then each new
   * one as it is stored, until the returned stop is called.
   */
  async follow(query: { stream: string; filter: string; fromSeq?: number }, onMessage: (m: RecordedMessage) => void): Promise<() => Promise<void>> {
    const consumer = await this.js.consumers.get(query.stream, {
      filter_subjects: query.filter,
      ...(query.fromSeq === undefined ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: query.fromSeq }),
    });
    const messages = await consumer.consume();
    const done = (async () => {
      for await (const m of messages) onMessage(this.recorded(query.stream, m));
    })();
    return async () => {
      await messages.close();
      await done;
    };
  }

  private recorded(stream: string, m: JsMsg): RecordedMessage {
    // An imported message keeps the sequence and time it had where it was exported from.
    const originSeq = m.headers?.get(ORIGIN_HEADERS.seq);
    const originMs = m.headers?.get(ORIGIN_HEADERS.storedMs);
    const seq = originSeq ? Number(originSeq) : m.seq;
    const storedMs = originMs ? Number(originMs) : Math.floor(m.info.timestampNanos / 1e6);
    return toRecorded(stream, m.subject, seq, storedMs, m.data);
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.close();
  }
}
