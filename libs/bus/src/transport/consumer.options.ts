import { token } from '#contracts';
import type { DeliverFrom } from '../bus.js';

/**
 * Stands for the node this process runs for, in a pattern's subjects and durable names:
 * `SUBJECTS.nodeAssignments(THIS_NODE)`, `agent-{node}`. The transport puts the configured
 * node name in its place, so a handler never builds its own node's filter.
 */
export const THIS_NODE = '{node}';

/** What a deliver policy may depend on: the time the consumer opens and the app's configuration. */
export interface DeliverEnv {
  nowMs: number;
  config: Readonly<Record<string, unknown>>;
}

/**
 * A JetStream handler's delivery contract, given as the `extras` of `@EventPattern`. The
 * pattern is the filter subject unless `filter` says otherwise. Without `durable` the consumer is ordered (no acks, kept
 * in memory, for projections); with it, durable with explicit acks.
 */
export interface StreamConsumerExtras {
  stream: string;
  /** The filter subject, when the pattern is a name rather than the subject (two consumers on `>` of different streams). */
  filter?: string;
  /** Where delivery starts: `all`, `last_per_subject`, `new`, a sequence or a time, or a function of the env. */
  deliver: DeliverFrom | ((env: DeliverEnv) => DeliverFrom);
  durable?: string;
  /** Delete the durable at start, so delivery begins again at `deliver` (rebuild from the log). */
  recreate?: boolean;
  /** ms a delivery may stay unacknowledged before it is redelivered (30 s). */
  ackWaitMs?: number;
  /** Deliveries before JetStream gives up on a message (-1, the default: no limit). */
  maxDeliver?: number;
}

/** True for the extras of a JetStream consumer (anything else is a core NATS subscription). */
export function isStreamConsumer(extras: Record<string, unknown> | undefined): extras is Record<string, unknown> & StreamConsumerExtras {
  return typeof extras?.stream === 'string';
}

/** The pattern of the handler told about messages its consumer skipped or terminated (an ordered projection still counts their sequence). */
export function skippedOf(pattern: string): string {
  return `${pattern}#skipped`;
}

/** A pattern or durable name with THIS_NODE (as written, or escaped by a subject builder) replaced by `node`'s token. */
export function resolveNode(text: string, node: string | undefined): string {
  const escaped = token(THIS_NODE);
  if (!text.includes(escaped) && !text.includes(THIS_NODE)) return text;
  if (node === undefined) throw new Error(`"${text}" names this node, but the transport has no node`);
  return text.split(escaped).join(token(node)).split(THIS_NODE).join(token(node));
}
