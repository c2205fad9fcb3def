import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from '#observability';

/** The agent's metrics: the kubelet's names where the kubelet has one, jetlet_ otherwise. */
export const agentMetrics = {
  runningPods: new Gauge({ name: 'kubelet_running_pods', help: 'Pods with a running sandbox', registers: [metricsRegistry] }),
  runningContainers: new Gauge({ name: 'kubelet_running_containers', help: 'Running app containers', registers: [metricsRegistry] }),
  reconcileDuration: new Histogram({
    name: 'jetlet_reconcile_duration_seconds',
    help: 'Duration of one reconcile pass (list, plan, dispatch, status)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metricsRegistry],
  }),
  actions: new Counter({
    name: 'jetlet_reconcile_actions_total',
    help: 'Reconcile actions dispatched, by kind',
    labelNames: ['kind'],
    registers: [metricsRegistry],
  }),
};
