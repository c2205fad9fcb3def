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

  apply(envelope: AnyEnvelope, seq: number): void {
    if (envelope.type === 'NodeEvent') {
      const e = envelope.data;
      this.push({
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
      return;
    }
    if (envelope.type !== 'PodEvent') return;
    const e = envelope.data;
    this.push({
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

  private push(event: KubeEvent): void {
    this.items.push(event);
    if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
  }

  /**
   * Events in stream order, optionally of one namespace and matching a field selector of
   * `key=value` pairs over involvedObject.{name,namespace,uid,kind}, reason and type.
   */
  list(namespace?: string, fieldSelector?: string): KubeEvent[] {
    const wanted = (fieldSelector ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const [key, value] = p.split(/==?/, 2);
        return [key ?? '', value ?? ''] as const;
      });
    const field = (e: KubeEvent, key: string): string | undefined => {
      switch (key) {
        case 'involvedObject.name':
          return e.involvedObject.name;
        case 'involvedObject.namespace':
          return e.involvedObject.namespace;
        case 'involvedObject.uid':
          return e.involvedObject.uid;
        case 'involvedObject.kind':
          return e.involvedObject.kind;
        case 'reason':
          return e.reason;
        case 'type':
          return e.type;
        case 'metadata.namespace':
          return e.metadata.namespace;
        default:
          return undefined;
      }
    };
    return this.items.filter((e) => (namespace === undefined || e.metadata.namespace === namespace) && wanted.every(([k, v]) => field(e, k) === v));
  }
}
