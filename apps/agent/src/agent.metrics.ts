import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsRegistry } from '#observability';

/**
 * One agent's metrics, the kubelet's names where the kubelet has one, jetlet_ otherwise, in
 * a registry of that agent's own: hollow nodes run many agents in one process, and each
 * agent's gauges and histograms are its own. `/metrics` serves them beside the process's
 * (bus, Node.js runtime).
 */
export class AgentMetrics {
  readonly registry = new Registry();

  readonly runningPods = new Gauge({ name: 'kubelet_running_pods', help: 'Pods with a running sandbox', registers: [this.registry] });
  readonly runningContainers = new Gauge({ name: 'kubelet_running_containers', help: 'Running app containers', registers: [this.registry] });
  readonly reconcileDuration = new Histogram({
    name: 'jetlet_reconcile_duration_seconds',
    help: 'Duration of one reconcile pass (list, plan, dispatch, status)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly probes = new Counter({
    name: 'jetlet_probe_results_total',
    help: 'Probe runs, by probe type and outcome',
    labelNames: ['probe_type', 'result'],
    registers: [this.registry],
  });
  readonly actions = new Counter({
    name: 'jetlet_reconcile_actions_total',
    help: 'Reconcile actions dispatched, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  // PLEG health and pod start, with the kubelet's names, help texts and (for pod start, plus two lower) buckets.
  readonly podStartDuration = new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: 'Duration in seconds from the agent seeing a pod for the first time to every container of the pod running',
    buckets: [0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600],
    registers: [this.registry],
  });
  readonly plegRelistDuration = new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG (the list of a reconcile pass)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly plegRelistInterval = new Histogram({
    name: 'kubelet_pleg_relist_interval_seconds',
    help: 'Interval in seconds between relisting in PLEG (start to start)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly plegLastSeen = new Gauge({
    name: 'kubelet_pleg_last_seen_seconds',
    help: 'Timestamp in seconds when PLEG was last seen active',
    registers: [this.registry],
  });
  readonly eventStreamConnected = new Gauge({
    name: 'jetlet_runtime_event_stream_connected',
    help: '1 while the runtime event stream (the PLEG watch) is connected, 0 otherwise',
    registers: [this.registry],
  });
  readonly podStreams = new Gauge({
    name: 'jetlet_pod_streams',
    help: 'Exec, attach and port-forward streams being served, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly logStreams = new Gauge({
    name: 'jetlet_log_streams',
    help: 'Container log streams being served, by transport',
    labelNames: ['via'],
    registers: [this.registry],
  });

  /** The process's metrics followed by this agent's, in the Prometheus text format. */
  async exposition(): Promise<string> {
    return Registry.merge([metricsRegistry, this.registry]).metrics();
  }
}
