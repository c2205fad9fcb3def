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
  probes: new Counter({
    name: 'jetlet_probe_results_total',
    help: 'Probe runs, by probe type and outcome',
    labelNames: ['probe_type', 'result'],
    registers: [metricsRegistry],
  }),
  actions: new Counter({
    name: 'jetlet_reconcile_actions_total',
    help: 'Reconcile actions dispatched, by kind',
    labelNames: ['kind'],
    registers: [metricsRegistry],
  }),
  // PLEG health and pod start, with the kubelet's names, help texts and (for pod start, plus two lower) buckets.
  podStartDuration: new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: 'Duration in seconds from the agent seeing a pod for the first time to every container of the pod running',
    buckets: [0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600],
    registers: [metricsRegistry],
  }),
  plegRelistDuration: new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG (the list of a reconcile pass)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [metricsRegistry],
  }),
  plegRelistInterval: new Histogram({
    name: 'kubelet_pleg_relist_interval_seconds',
    help: 'Interval in seconds between relisting in PLEG (start to start)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [metricsRegistry],
  }),
  plegLastSeen: new Gauge({
    name: 'kubelet_pleg_last_seen_seconds',
    help: 'Timestamp in seconds when PLEG was last seen active',
    registers: [metricsRegistry],
  }),
  eventStreamConnected: new Gauge({
    name: 'jetlet_runtime_event_stream_connected',
    help: '1 while the runtime event stream (the PLEG watch) is connected, 0 otherwise',
    registers: [metricsRegistry],
  }),
  podStreams: new Gauge({
    name: 'jetlet_pod_streams',
    help: 'Exec, attach and port-forward streams being served, by kind',
    labelNames: ['kind'],
    registers: [metricsRegistry],
  }),
  logStreams: new Gauge({
    name: 'jetlet_log_streams',
    help: 'Container log streams being served, by transport',
    labelNames: ['via'],
    registers: [metricsRegistry],
  }),
};
