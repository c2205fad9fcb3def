import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry, talliedCounter } from '#observability';

const PROFILE = 'default-scheduler';

/** What the pending-pods gauge reads at scrape time: pods not bound yet, by queue. */
let pendingSource: () => { active: number; unschedulable: number } = () => ({ active: 0, unschedulable: 0 });

/** kube-scheduler's metrics, with its names, labels and buckets. */
export const schedulerMetrics = {
  /** Per attempt: counted through a tally (see CounterTally). */
  attempts: talliedCounter(
    'scheduler_schedule_attempts_total',
    'Number of attempts to schedule pods, by the result. unschedulable means a pod could not be scheduled, while error means an internal scheduler problem.',
    ['result', 'profile'],
  ),
  attemptDuration: new Histogram({
    name: 'scheduler_scheduling_attempt_duration_seconds',
    help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
    labelNames: ['result', 'profile'],
    buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384],
    registers: [metricsRegistry],
  }),
  /** Per binding: counted through a tally (see CounterTally). */
  phaseSeconds: talliedCounter(
    'jetlet_scheduler_phase_seconds_total',
    'Time spent in each part of scheduling: candidates (per-pass node table from the pods) and filter_score (picking a node) in CPU time; bind (a binding from PodScheduled written to PodAssigned stored) in wall time, pipelined, so it can exceed the wall time',
    ['phase'],
  ),
  /** client-go's leader-election gauge: 1 while this process holds the lease `name` (or elects none). */
  leader: new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ['name'],
    registers: [metricsRegistry],
  }),
  passes: new Counter({
    name: 'jetlet_scheduler_passes_total',
    help: 'Scheduling passes run: each compares every pod with the nodes and the node work sent; changes during one fold into one pass after it',
    registers: [metricsRegistry],
  }),
  pendingPods: new Gauge({
    name: 'scheduler_pending_pods',
    help: 'Number of pending pods, by the queue type. active means pods to be tried at the next pass; unschedulable means pods that fit no node at the last try.',
    labelNames: ['queue'],
    registers: [metricsRegistry],
    collect() {
      const { active, unschedulable } = pendingSource();
      this.set({ queue: 'active' }, active);
      this.set({ queue: 'unschedulable' }, unschedulable);
    },
  }),
};

/** Times one scheduling attempt; call the returned function with its result. */
export function startAttempt(): (result: 'scheduled' | 'unschedulable' | 'error') => void {
  const stop = schedulerMetrics.attemptDuration.startTimer();
  return (result) => {
    stop({ result, profile: PROFILE });
    schedulerMetrics.attempts.inc(result, PROFILE);
  };
}

/** Where the pending-pods gauge reads from (the scheduler's pod projection). */
export function setPendingSource(source: typeof pendingSource): void {
  pendingSource = source;
}

/**
 * Times one phase of scheduling; call the returned function when it ends. The synchronous
 * phases count the process's CPU time, so that they compare with its CPU use: on a loaded
 * machine their wall time also counts other processes' turns (and came out above the
 * process's whole CPU time). A binding waits on the bus, so it counts wall time.
 */
export function phaseTimer(phase: 'candidates' | 'filter_score' | 'bind'): () => void {
  if (phase === 'bind') {
    const start = performance.now();
    return () => schedulerMetrics.phaseSeconds.add((performance.now() - start) / 1000, phase);
  }
  const start = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(start);
    schedulerMetrics.phaseSeconds.add((used.user + used.system) / 1e6, phase);
  };
}
