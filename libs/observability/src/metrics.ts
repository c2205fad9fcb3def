import { Counter, Gauge, register, type Registry } from 'prom-client';

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
  handlerErrors: counter('jetlet_bus_handler_errors_total', 'Messages whose handler failed and were redelivered', ['stream', 'consumer']),
  outboxPending: gauge('jetlet_bus_outbox_pending', 'Messages waiting in the outbox for the bus to answer', []),
  outboxDropped: counter(
    'jetlet_bus_outbox_dropped_total',
    'Messages the outbox gave up on: overflow (the oldest went when it was full) or rejected (JetStream refused it)',
    ['type', 'reason'],
  ),
};
