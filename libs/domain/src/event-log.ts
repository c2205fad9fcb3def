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

/** The newest `capacity` pod events, folded from the events stream. Pure. */
export class EventLog {
  private readonly items: KubeEvent[] = [];

  constructor(private readonly capacity: number) {}

  /** Folds one message; returns the event it added and the oldest ones it pushed out. */
  apply(envelope: AnyEnvelope, seq: number): { added?: KubeEvent; evicted: KubeEvent[] } {
    if (envelope.type === 'NodeEvent') {
      const e = envelope.data;
      return this.push({
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
    return this.push({
      apiVersion: 'v1',
      kind: 'Event',
      // Kubernetes names events <object>.<unique hex>; the sequence makes it unique here.
      metadata: {
        name: `${e.name}.${seq.toString(16)}`,
        namespace: e.namespace,
        uid: envelope.id,
        resourceVersion: String(seq),
        creationTimestamp: e.observedAt,
      },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: e.namespace, name: e.name, uid: e.uid, ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}) },
      reason: e.reason,
      message: e.message,
      type: e.eventType,
      source: { component: 'jetlet', host: e.nodeName },
      firstTimestamp: e.observedAt,
      lastTimestamp: e.observedAt,
      count: 1,
    });
  }

  private push(event: KubeEvent): { added: KubeEvent; evicted: KubeEvent[] } {
    this.items.push(event);
    const evicted = this.items.length > this.capacity ? this.items.splice(0, this.items.length - this.capacity) : [];
    return { added: event, evicted };
  }

  /** Events in stream order, optionally of one namespace; selectors filter them in the API. */
  list(namespace?: string): KubeEvent[] {
    return namespace === undefined ? [...this.items] : this.items.filter((e) => e.metadata.namespace === namespace);
  }
}
