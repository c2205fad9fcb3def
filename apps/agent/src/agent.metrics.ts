import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsRegistry } from '#observability';

type Labels<L extends string> = Partial<Record<L, string>>;

/** What the agent does with a counter: prom-client's Counter, or one node's series of a process-wide one. */
export interface CounterOf<L extends string> {
  inc(labels: Labels<L>, value?: number): void;
}

/** What the agent does with a gauge. */
export interface GaugeOf<L extends string> {
  set(value: number): void;
  inc(labels: Labels<L>): void;
  dec(labels: Labels<L>): void;
}

/** What the agent does with a histogram. */
export interface HistogramOf {
  observe(value: number): void;
  startTimer(): () => number;
}

/**
 * The agent's metric families, the kubelet's names where the kubelet has one, jetlet_
 * otherwise, made in `registry` with `extraLabels` before each family's own labels.
 */
function families(registry: Registry, extraLabels: readonly string[]) {
  const labels = <L extends string>(own: readonly L[]): L[] => [...(extraLabels as L[]), ...own];
  const registers = [registry];
  return {
    runningPods: new Gauge({ name: 'kubelet_running_pods', help: 'Pods with a running sandbox', labelNames: labels([]), registers }),
    runningContainers: new Gauge({ name: 'kubelet_running_containers', help: 'Running app containers', labelNames: labels([]), registers }),
    reconcileDuration: new Histogram({
      name: 'jetlet_reconcile_duration_seconds',
      help: 'Duration of one reconcile pass (list, plan, dispatch, status)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      labelNames: labels([]),
      registers,
    }),
    probes: new Counter({
      name: 'jetlet_probe_results_total',
      help: 'Probe runs, by probe type and outcome',
      labelNames: labels(['probe_type', 'result']),
      registers,
    }),
    actions: new Counter({ name: 'jetlet_reconcile_actions_total', help: 'Reconcile actions dispatched, by kind', labelNames: labels(['kind']), registers }),
    // PLEG health and pod start, with the kubelet's names, help texts and (for pod start, plus two lower) buckets.
    podStartDuration: new Histogram({
      name: 'kubelet_pod_start_duration_seconds',
      help: 'Duration in seconds from the agent seeing a pod for the first time to every container of the pod running',
      buckets: [0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600],
      labelNames: labels([]),
      registers,
    }),
    plegRelistDuration: new Histogram({
      name: 'kubelet_pleg_relist_duration_seconds',
      help: 'Duration in seconds for relisting pods in PLEG (the list of a reconcile pass)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      labelNames: labels([]),
      registers,
    }),
    plegRelistInterval: new Histogram({
      name: 'kubelet_pleg_relist_interval_seconds',
      help: 'Interval in seconds between relisting in PLEG (start to start)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      labelNames: labels([]),
      registers,
    }),
    plegLastSeen: new Gauge({
      name: 'kubelet_pleg_last_seen_seconds',
      help: 'Timestamp in seconds when PLEG was last seen active',
      labelNames: labels([]),
      registers,
    }),
    eventStreamConnected: new Gauge({
      name: 'jetlet_runtime_event_stream_connected',
      help: '1 while the runtime event stream (the PLEG watch) is connected, 0 otherwise',
      labelNames: labels([]),
      registers,
    }),
    podStreams: new Gauge({
      name: 'jetlet_pod_streams',
      help: 'Exec, attach and port-forward streams being served, by kind',
      labelNames: labels(['kind']),
      registers,
    }),
    logStreams: new Gauge({ name: 'jetlet_log_streams', help: 'Container log streams being served, by transport', labelNames: labels(['via']), registers }),
  };
}

type Families = ReturnType<typeof families>;

/** The families hollow agents share, made once per process in the process's registry. */
let processFamilies: Families | undefined;

// One node's series of a process-wide family: a class, not closures, as a thousand nodes each hold a dozen.

class NodeCounter<L extends string> implements CounterOf<L> {
  constructor(
    private readonly family: Counter<string>,
    private readonly node: string,
  ) {}
  inc(labels: Labels<L>, value?: number): void {
    this.family.inc({ ...labels, node: this.node }, value);
  }
}

class NodeGauge<L extends string> implements GaugeOf<L> {
  private readonly own: { node: string };
  constructor(
    private readonly family: Gauge<string>,
    node: string,
  ) {
    this.own = { node };
  }
  set(value: number): void {
    this.family.set(this.own, value);
  }
  inc(labels: Labels<L>): void {
    this.family.inc({ ...labels, ...this.own });
  }
  dec(labels: Labels<L>): void {
    this.family.dec({ ...labels, ...this.own });
  }
}

class NodeHistogram implements HistogramOf {
  private readonly own: { node: string };
  constructor(
    private readonly family: Histogram<string>,
    node: string,
  ) {
    this.own = { node };
  }
  observe(value: number): void {
    this.family.observe(this.own, value);
  }
  startTimer(): () => number {
    return this.family.startTimer(this.own);
  }
}

/**
 * One agent's metrics. A node's agent keeps them in a registry of its own, with the kubelet's
 * names and labels; `/metrics` serves them beside the process's (bus, Node.js runtime).
 * Hollow agents (`AgentMetrics.ofHollowNode`) share one set of families per process, in the
 * process's registry, each series labelled with its node: a registry and a dozen metric
 * objects per node were most of what a thousand hollow nodes spent on metrics.
 */
export class AgentMetrics {
  /** Where this agent's series live: its own registry, or the process's for a hollow agent. */
  readonly registry: Registry;
  readonly runningPods: GaugeOf<never>;
  readonly runningContainers: GaugeOf<never>;
  readonly reconcileDuration: HistogramOf;
  readonly probes: CounterOf<'probe_type' | 'result'>;
  readonly actions: CounterOf<'kind'>;
  readonly podStartDuration: HistogramOf;
  readonly plegRelistDuration: HistogramOf;
  readonly plegRelistInterval: HistogramOf;
  readonly plegLastSeen: GaugeOf<never>;
  readonly eventStreamConnected: GaugeOf<never>;
  readonly podStreams: GaugeOf<'kind'>;
  readonly logStreams: GaugeOf<'via'>;

  /** `node`: a hollow agent's node, whose series it labels in the process's families; none: a registry of the agent's own. */
  constructor(private readonly node?: string) {
    if (node === undefined) {
      this.registry = new Registry();
      const own = families(this.registry, []);
      this.runningPods = own.runningPods;
      this.runningContainers = own.runningContainers;
      this.reconcileDuration = own.reconcileDuration;
      this.probes = own.probes;
      this.actions = own.actions;
      this.podStartDuration = own.podStartDuration;
      this.plegRelistDuration = own.plegRelistDuration;
      this.plegRelistInterval = own.plegRelistInterval;
      this.plegLastSeen = own.plegLastSeen;
      this.eventStreamConnected = own.eventStreamConnected;
      this.podStreams = own.podStreams;
      this.logStreams = own.logStreams;
      return;
    }
    this.registry = metricsRegistry;
    const shared = (processFamilies ??= families(metricsRegistry, ['node']));
    this.runningPods = new NodeGauge(shared.runningPods, node);
    this.runningContainers = new NodeGauge(shared.runningContainers, node);
    this.reconcileDuration = new NodeHistogram(shared.reconcileDuration, node);
    this.probes = new NodeCounter(shared.probes, node);
    this.actions = new NodeCounter(shared.actions, node);
    this.podStartDuration = new NodeHistogram(shared.podStartDuration, node);
    this.plegRelistDuration = new NodeHistogram(shared.plegRelistDuration, node);
    this.plegRelistInterval = new NodeHistogram(shared.plegRelistInterval, node);
    this.plegLastSeen = new NodeGauge(shared.plegLastSeen, node);
    this.eventStreamConnected = new NodeGauge(shared.eventStreamConnected, node);
    this.podStreams = new NodeGauge(shared.podStreams, node);
    this.logStreams = new NodeGauge(shared.logStreams, node);
    // Labelled families have no series until first set; a node's gauges start at 0, as its own registry's would.
    for (const gauge of [this.runningPods, this.runningContainers, this.plegLastSeen, this.eventStreamConnected]) gauge.set(0);
  }

  /** A hollow agent's metrics: its series, labelled node=`node`, in families the process's agents share. */
  static ofHollowNode(node: string): AgentMetrics {
    return new AgentMetrics(node);
  }

  /**
   * The process's metrics followed by this agent's, in the Prometheus text format. A hollow
   * agent's are in the process's registry, with every other hollow node's, each labelled by node.
   */
  async exposition(): Promise<string> {
    return this.node === undefined ? Registry.merge([metricsRegistry, this.registry]).metrics() : metricsRegistry.metrics();
  }
}
