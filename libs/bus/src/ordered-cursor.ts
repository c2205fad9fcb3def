import type { DeliverFrom } from './bus.js';

/**
 * Where to look for messages an ordered consumer skipped, when it delivers `seq` after
 * `lastSeq`, or undefined when nothing can be missing. nats-server 2.9 moves a consumer past
 * stored messages when a subject under its filter is purged (`STREAM.PURGE`; the project
 * deletes message by message instead, see `Bus.purgeSubject`, so this guards against an
 * operator's purge), and the next delivery sequence follows on, so the client's own ordering
 * check cannot notice.
 * A consumer replaying the last message per subject skips older ones by design; one
 * starting at new messages or at a time has no known start. Checked on whole-stream
 * consumers only (the projections): there a gap is rare (a purge), so the check costs one
 * read per purge; on a filtered consumer nearly every message follows a gap.
 */
export function gapStart(lastSeq: number, seq: number, from: DeliverFrom): number | undefined {
  if (from === 'last_per_subject' || seq <= lastSeq + 1) return undefined;
  if (lastSeq > 0) return lastSeq + 1;
  if (from === 'all') return 1;
  return typeof from === 'object' && 'startSeq' in from ? from.startSeq : undefined;
}

/** The sequence of the first message stored at or after `seq` on the consumer's filter, or undefined when there is none. */
export type StoredFrom = (seq: number) => Promise<number | undefined>;

/**
 * What to do with a delivered message: handle it, or open the consumer again at `missed`
 * first; `attempt` counts the opens in a row at that same message.
 */
export type GapVerdict = { kind: 'handle' } | { kind: 'reopen'; missed: number; attempt: number };

/**
 * An ordered consumer's position: where it opens again, and whether a delivered message
 * passed over stored ones. A gap opens the consumer again at the first message it passed
 * over. While purges of other subjects go on, nats-server 2.9 passes over the same message
 * again right after such an open: the consumer opens again at it as often
 * as it takes (the caller waits longer each time), and never goes on without it, as a
 * projection missing a fact would be wrong for good.
 */
export class OrderedCursor {
  private lastSeq = 0;
  private reopenedAt: number | undefined;
  private attempts = 0;

  constructor(
    private readonly from: DeliverFrom,
    /** Only a whole-stream consumer checks for gaps (see gapStart). */
    private readonly checksGaps: boolean,
  ) {}

  /** Where the consumer opens: `from` the first time, else after the last message it delivered (or at the message it passed over). */
  get openFrom(): DeliverFrom {
    return this.lastSeq > 0 ? { startSeq: this.lastSeq + 1 } : this.from;
  }

  /** Checks the delivered message `seq` against what the stream stores before it; on `handle`, counts it delivered. */
  async check(seq: number, storedFrom: StoredFrom): Promise<GapVerdict> {
    const start = this.checksGaps ? gapStart(this.lastSeq, seq, this.from) : undefined;
    if (start !== undefined) {
      const missed = await storedFrom(start);
      if (missed !== undefined && missed < seq) {
        this.attempts = missed === this.reopenedAt ? this.attempts + 1 : 1;
        this.reopenedAt = missed;
        this.lastSeq = missed - 1;
        return { kind: 'reopen', missed, attempt: this.attempts };
      }
    }
    this.lastSeq = Math.max(this.lastSeq, seq);
    return { kind: 'handle' };
  }
}

/** How long to wait before opening again at a message passed over `attempt` times in a row: at once, then 100 ms doubling to 2 s. */
export function reopenDelayMs(attempt: number): number {
  return attempt <= 1 ? 0 : Math.min(100 * 2 ** (attempt - 2), 2000);
}

/** What an ordered consumer's server reports of it, for `orderedDrained`. */
export interface OrderedState {
  /** Messages on the filter after the last one delivered, as the server counts them. */
  pending: number;
  /** The stream sequence of the last message delivered. */
  deliveredSeq: number;
}

/**
 * Whether an ordered consumer has nothing more for its process: every message it delivered
 * is handled (`through`: the last handled sequence, or where the server started it), and
 * nothing is pending after it. nats-server 2.9's count of pending messages can stay above
 * what is stored after purges and deletes; when it says some are pending, the stream itself
 * is asked whether anything on the filter is stored past `through`.
 */
export async function orderedDrained(state: OrderedState, through: number, storedFrom: StoredFrom): Promise<boolean> {
  if (state.deliveredSeq > through) return false;
  if (state.pending === 0) return true;
  return (await storedFrom(through + 1)) === undefined;
}
