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

/** Container-runtime traffic. */
export const runtimeMetrics = {
  dockerCalls: counter('jetlet_runtime_docker_calls_total', 'Docker Engine API calls made by the runtime adapter', ['call']),
};

/** Bus traffic, by message type (and stream for consumers). */
export const busMetrics = {
  published: counter('jetlet_bus_messages_published_total', 'Messages published to JetStream', ['type']),
  consumed: counter('jetlet_bus_messages_consumed_total', 'Messages consumed and handled', ['stream', 'type']),
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

/** How far each durable or ordered consumer is behind its stream: messages not yet delivered to it. */
export const consumerLag = gauge('jetlet_bus_consumer_lag_messages', 'Messages in the stream not yet delivered to this consumer, at its last delivery', [
  'stream',
  'consumer',
]);

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
