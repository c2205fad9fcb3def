import type { AnyEnvelope } from '#contracts';

/** A Kubernetes core/v1 Event, as the API serves the agents' PodEvents. */
export interface KubeEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; creationTimestamp: string };
  involvedObject: { apiVersion: 'v1'; kind: 'Pod' | 'Node'; namespace: string; name: string; uid: string; fieldPath?: string };
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  source: { component: string; host: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

/**
 * The newest `capacity` events, folded from the events stream. A PodEvent of a series (the
 * agent's aggregated repeats) updates the series' Event in place, as the kubelet's recorder
 * patches its Event: count, lastTimestamp, message and resourceVersion move, name, uid and
 * firstTimestamp stay those of the series' first message seen. Pure.
 */
export class EventLog {
  /** By series (`<uid>/<series>`) or, for a one-off, by sequence; in the order first added. */
  private readonly items = new Map<string, KubeEvent>();

  constructor(private readonly capacity: number) {}

  /** Folds one message; returns the event it added or changed and the oldest ones it pushed out. */
  apply(envelope: AnyEnvelope, seq: number): { added?: KubeEvent; evicted: KubeEvent[] } {
    if (envelope.type === 'NodeEvent') {
      const e = envelope.data;
      return this.push(`#${seq}`, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          name: `${e.nodeName}.${seq.toString(16)}`,
          namespace: 'default',
          uid: envelope.id,
          resourceVersion: String(seq),
          creationTimestamp: e.observedAt,
        },
        involvedObject: { apiVersion: 'v1', kind: 'Node', namespace: '', name: e.nodeName, uid: e.nodeName },
        reason: e.reason,
        message: e.message,
        type: e.eventType,
        source: { component: 'jetlet', host: e.nodeName },
        firstTimestamp: e.observedAt,
        lastTimestamp: e.observedAt,
        count: 1,
      });
    }
    if (envelope.type !== 'PodEvent') return { evicted: [] };
    const e = envelope.data;
    const key = e.series === undefined ? `#${seq}` : `${e.uid}/${e.series}`;
    const known = this.items.get(key);
    if (known) {
      // A message of a series older than what is shown (a redelivery) changes nothing.
      if ((e.count ?? 1) < known.count) return { evicted: [] };
      const updated: KubeEvent = {
        ...known,
        metadata: { ...known.metadata, resourceVersion: String(seq) },
        message: e.message,
        lastTimestamp: e.observedAt,
        count: e.count ?? 1,
      };
      this.items.set(key, updated);
      return { added: updated, evicted: [] };
    }
    return this.push(key, {
      apiVersion: 'v1',
      kind: 'Event',
      // Kubernetes names events <object>.<unique hex>; the sequence makes it unique here.
      metadata: {
        name: `${e.name}.${seq.toString(16)}`,
        namespace: e.namespace,
        uid: envelope.id,
        resourceVersion: String(seq),
        creationTimestamp: e.firstObservedAt ?? e.observedAt,
      },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: e.namespace, name: e.name, uid: e.uid, ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}) },
      reason: e.reason,
      message: e.message,
      type: e.eventType,
      source: { component: 'jetlet', host: e.nodeName },
      firstTimestamp: e.firstObservedAt ?? e.observedAt,
      lastTimestamp: e.observedAt,
      count: e.count ?? 1,
    });
  }

  private push(key: string, event: KubeEvent): { added: KubeEvent; evicted: KubeEvent[] } {
    this.items.set(key, event);
    const evicted: KubeEvent[] = [];
    for (const [oldest, e] of this.items) {
      if (this.items.size <= this.capacity) break;
      this.items.delete(oldest);
      evicted.push(e);
    }
    return { added: event, evicted };
  }

  /** Events in the order first added, optionally of one namespace; selectors filter them in the API. */
  list(namespace?: string): KubeEvent[] {
    const all = [...this.items.values()];
    return namespace === undefined ? all : all.filter((e) => e.metadata.namespace === namespace);
  }
}
