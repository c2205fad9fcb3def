import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, register, type Registry } from 'prom-client';

/** The process-wide registry every jetlet metric lives in; `/metrics` serves it. */
export const metricsRegistry: Registry = register;

function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [metricsRegistry] });
}

function gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge({ name, help, labelNames, registers: [metricsRegistry] });
}

/**
 * A counter bumped for every message, by one or two label values: the increments are summed
 * here, by value, and handed to prom-client when it is scraped. prom-client hashes the label
 * object on every `inc` (its keys sorted, joined), which cost more than the count itself
 * at thousands of messages a second; a lookup by the values costs a map access.
 */
export class CounterTally<L extends string> {
  private readonly cells = new Map<string, Map<string, { labels: Partial<Record<L, string>>; value: number }>>();

  constructor(
    readonly counter: Counter<L>,
    private readonly names: readonly [L] | readonly [L, L],
  ) {}

  /** Counts one for the label values `first` (and `second`), in the order of the names. */
  inc(first: string, second = ''): void {
    this.add(1, first, second);
  }

  /** Counts `amount` for the label values `first` (and `second`). */
  add(amount: number, first: string, second = ''): void {
    let byFirst = this.cells.get(first);
    if (!byFirst) this.cells.set(first, (byFirst = new Map<string, { labels: Partial<Record<L, string>>; value: number }>()));
    const cell = byFirst.get(second);
    if (cell) cell.value += amount;
    else {
      const [a, b] = this.names;
      const labels = { [a]: first, ...(b === undefined ? {} : { [b]: second }) } as Partial<Record<L, string>>;
      byFirst.set(second, { labels, value: amount });
    }
  }

  /** Adds what was counted since the last scrape to the counter. */
  flush(): void {
    for (const byFirst of this.cells.values())
      for (const cell of byFirst.values()) {
        if (cell.value === 0) continue;
        this.counter.inc(cell.labels, cell.value);
        cell.value = 0;
      }
  }
}

/** A counter whose increments go through a CounterTally, handed over whenever the registry collects it. */
export function talliedCounter<L extends string>(name: string, help: string, labelNames: readonly [L] | readonly [L, L]): CounterTally<L> {
  const existing = metricsRegistry.getSingleMetric(name) as Counter<L> | undefined;
  const metric: Counter<L> =
    existing ??
    new Counter({
      name,
      help,
      labelNames,
      registers: [metricsRegistry],
      collect: (): void => tally.flush(),
    });
  const tally: CounterTally<L> = new CounterTally(metric, labelNames);
  return tally;
}

/**
 * A gauge of one value per consumer, set on every delivery: each consumer keeps its own cell
 * and the gauge reads the cells when it is collected (see CounterTally for why).
 */
export class GaugeCells<L extends string> {
  private readonly cells = new Set<{ labels: Partial<Record<L, string>>; value?: number }>();

  constructor(readonly gauge: Gauge<L>) {}

  /** A cell for `labels`: the gauge shows the last value `set` from the next scrape on (nothing before the first); `drop` takes it away. */
  cell(labels: Partial<Record<L, string>>): { set: (value: number) => void; drop: () => void } {
    const entry: { labels: Partial<Record<L, string>>; value?: number } = { labels };
    this.cells.add(entry);
    return {
      set: (value) => void (entry.value = value),
      drop: () => void this.cells.delete(entry),
    };
  }

  /** Sets the gauge from every cell that has a value. */
  read(): void {
    for (const entry of this.cells) if (entry.value !== undefined) this.gauge.set(entry.labels, entry.value);
  }
}

/** Container-runtime traffic. */
export const runtimeMetrics = {
  dockerCalls: counter('jetlet_runtime_docker_calls_total', 'Docker Engine API calls made by the runtime adapter', ['call']),
};

/** Bus traffic, by message type (and stream for consumers). */
export const busMetrics = {
  /** Per message: counted through a tally (see CounterTally). */
  published: talliedCounter('jetlet_bus_messages_published_total', 'Messages published to JetStream', ['type']),
  consumed: talliedCounter('jetlet_bus_messages_consumed_total', 'Messages consumed and handled', ['stream', 'type']),
  terminated: counter('jetlet_bus_messages_terminated_total', 'Messages terminated (or skipped, on ordered consumers) because they failed validation', [
    'stream',
    'consumer',
  ]),
  consumerRecreated: counter('jetlet_bus_consumers_recreated_total', 'Durable consumers created again after they disappeared', ['stream', 'consumer']),
  orderedGaps: counter(
    'jetlet_bus_ordered_consumer_gaps_total',
    'Times an ordered consumer delivered past stored messages it never delivered, and was opened again at the first of them',
    ['stream'],
  ),
  handlerErrors: counter('jetlet_bus_handler_errors_total', 'Messages whose handler failed and were redelivered', ['stream', 'consumer']),
  permissionViolations: counter('jetlet_bus_permission_violations_total', 'Publishes and subscriptions the NATS server refused for this identity', [
    'operation',
  ]),
  outboxPending: gauge('jetlet_bus_outbox_pending', 'Messages waiting in the outbox for the bus to answer', []),
  outboxDropped: counter(
    'jetlet_bus_outbox_dropped_total',
    'Messages the outbox gave up on: overflow (the oldest went when it was full) or rejected (JetStream refused it)',
    ['type', 'reason'],
  ),
};

/** How far each durable or ordered consumer is behind its stream: messages not yet delivered to it; one cell per consumer, set on every delivery. */
export const consumerLag: GaugeCells<'stream' | 'consumer'> = (() => {
  const name = 'jetlet_bus_consumer_lag_messages';
  const existing = metricsRegistry.getSingleMetric(name) as Gauge<'stream' | 'consumer'> | undefined;
  const metric: Gauge<'stream' | 'consumer'> =
    existing ??
    new Gauge({
      name,
      help: 'Messages in the stream not yet delivered to this consumer, at its last delivery',
      labelNames: ['stream', 'consumer'],
      registers: [metricsRegistry],
      collect: (): void => cells.read(),
    });
  const cells: GaugeCells<'stream' | 'consumer'> = new GaugeCells(metric);
  return cells;
})();

let processMetrics = false;
/** prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC), once per process. */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/**
 * Serves `/metrics` (and `/healthz`) on a plain HTTP server, for apps with no HTTP server of
 * their own (the scheduler). Resolves once listening; the returned server is closed by its owner.
 */
export async function serveMetrics(port: number, address: string): Promise<Server> {
  enableProcessMetrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      metricsRegistry
        .metrics()
        .then((text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text))
        .catch((error: unknown) => res.writeHead(500).end(String(error)));
    } else if (req.method === 'GET' && path === '/healthz') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  return server;
}
