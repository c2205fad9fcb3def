import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Container, Probe } from '#contracts';
import { podContainers } from '#domain/init-containers';
import { containerSpecHash } from '#domain/pod-naming';
import { runningSandboxes } from '#domain/pod-status';
import { ProbeTracker, type ProbeType } from '#domain/probe-tracker';
import type { DesiredPod, ProbeResults } from '#domain/reconcile';
import { podRef } from '#observability';
import { LABELS, type RuntimeContainer } from '#runtime';
import { AgentMetrics } from '../agent.metrics.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { HandlerRunner } from '../lifecycle/handler-runner.js';

/** What the probes say of one container (see ProbeResults): the reconcile plan reads it. */
export type ProbeState = ProbeResults;

const TYPES: Array<{ type: ProbeType; field: 'startupProbe' | 'livenessProbe' | 'readinessProbe'; title: string }> = [
  { type: 'startup', field: 'startupProbe', title: 'Startup' },
  { type: 'liveness', field: 'livenessProbe', title: 'Liveness' },
  { type: 'readiness', field: 'readinessProbe', title: 'Readiness' },
];

/** One probe of one container, on its own timer, as the kubelet's prober worker. */
class ProbeWorker {
  private readonly tracker: ProbeTracker;
  private timer?: NodeJS.Timeout;
  stopped = false;

  constructor(
    private readonly prober: ProberService,
    readonly pod: DesiredPod,
    readonly spec: Container,
    readonly container: RuntimeContainer,
    readonly type: ProbeType,
    readonly title: string,
    readonly probe: Probe,
    readonly podIP: string | undefined,
  ) {
    this.tracker = new ProbeTracker(type, probe.successThreshold ?? 1, probe.failureThreshold ?? 3);
  }

  start(): void {
    const startedMs = this.container.startedAt ? Date.parse(this.container.startedAt) : Date.now();
    this.schedule(Math.max(0, startedMs + (this.probe.initialDelaySeconds ?? 0) * 1000 - Date.now()));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), delayMs);
  }

  private async run(): Promise<void> {
    const periodMs = (this.probe.periodSeconds ?? 10) * 1000;
    // A fixed ticker, as the kubelet's: the next probe is due a period after this one began.
    const began = Date.now();
    const next = (): void => this.schedule(Math.max(0, began + periodMs - Date.now()));
    // Liveness and readiness wait until the startup probe has succeeded.
    if (this.type !== 'startup' && this.spec.startupProbe && !this.prober.state(this.container.id).started) return next();
    const outcome = await this.prober.handlers.run(
      this.probe,
      { containerId: this.container.id, container: this.spec, ...(this.podIP ? { podIP: this.podIP } : {}) },
      (this.probe.timeoutSeconds ?? 1) * 1000,
    );
    if (this.stopped) return;
    this.prober.metrics.probes.inc({ probe_type: this.type, result: outcome.ok ? 'successful' : 'failed' });
    // The kubelet's prober words it so (an exec probe: the command's output alone); repeats aggregate into one Event.
    if (!outcome.ok) this.prober.events.warning(this.pod, 'Unhealthy', `${this.title} probe failed: ${outcome.output ?? outcome.message}`, this.spec.name);
    if (this.tracker.record(outcome.ok ? 'success' : 'failure')) {
      // A change is always to this outcome, never back to unknown.
      const keepGoing = this.prober.changed(this, outcome.ok ? 'success' : 'failure');
      if (!keepGoing) return this.stop();
    }
    next();
  }
}

/**
 * Runs every probe of every running container on its own timer. Readiness and startup
 * results feed the pod status. A liveness or startup failure past its threshold marks the
 * container unhealthy and asks for a pass: the prober never stops a container itself, the
 * pod's worker does (preStop first, within the probe's grace), in order with the rest of that
 * pod's work, and the restart policy does the rest.
 */
@Injectable()
export class ProberService implements OnModuleDestroy {
  private readonly logger = new Logger(ProberService.name);
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly states = new Map<string, ProbeState>();
  private onChange: () => void = () => undefined;

  constructor(
    readonly handlers: HandlerRunner,
    readonly events: EventRecorder,
    readonly metrics: AgentMetrics,
  ) {}

  onModuleDestroy(): void {
    for (const worker of this.workers.values()) worker.stop();
    this.workers.clear();
  }

  /** Called when a result changes the pod's status (a reconcile pass reports it). */
  onResult(listener: () => void): void {
    this.onChange = listener;
  }

  state(containerId: string): ProbeState {
    return this.states.get(containerId) ?? {};
  }

  /** Probe results by container id, for the status computation. */
  results(): Map<string, ProbeState> {
    return this.states;
  }

  /** Starts workers for running containers' probes and stops the workers of anything else. */
  sync(pods: DesiredPod[], byUid: Map<string, RuntimeContainer[]>): void {
    const wanted = new Set<string>();
    const running = new Set<string>();
    for (const pod of pods) {
      if (pod.terminating) continue;
      const observed = byUid.get(pod.uid) ?? [];
      const podIP = runningSandboxes(observed)[0]?.ip;
      for (const c of observed) {
        if (c.labels[LABELS.kind] !== 'container' || c.state !== 'running') continue;
        running.add(c.id);
        const spec = podContainers(pod.manifest.spec).find((s) => s.name === c.labels[LABELS.containerName]);
        // A container of an outdated spec is about to be replaced; its probes are the old spec's.
        if (!spec || c.labels[LABELS.specHash] !== containerSpecHash(spec)) continue;
        for (const { type, field, title } of TYPES) {
          const probe = spec[field];
          if (!probe) continue;
          const key = `${c.id}/${type}`;
          wanted.add(key);
          const state = this.state(c.id);
          // A container marked for killing is probed no more; its next run gets new workers.
          if (this.workers.has(key) || state.unhealthy || (type === 'startup' && state.started)) continue;
          const worker = new ProbeWorker(this, pod, spec, c, type, title, probe, podIP);
          this.workers.set(key, worker);
          worker.start();
        }
      }
    }
    for (const [key, worker] of this.workers) {
      if (wanted.has(key) && !worker.stopped) continue;
      worker.stop();
      this.workers.delete(key);
    }
    for (const id of this.states.keys()) if (!running.has(id)) this.states.delete(id);
  }

  /** A probe's result flipped. Returns whether its worker goes on probing. */
  changed(worker: ProbeWorker, result: 'success' | 'failure'): boolean {
    const id = worker.container.id;
    const state = { ...this.state(id) };
    const kills = result === 'failure' && (worker.type === 'liveness' || worker.type === 'startup');
    switch (worker.type) {
      case 'readiness':
        state.ready = result === 'success';
        break;
      case 'startup':
        if (result === 'success') state.started = true;
        break;
      case 'liveness':
        break;
    }
    if (kills) {
      state.unhealthy = worker.type === 'liveness' ? 'LivenessProbe' : 'StartupProbe';
      this.logger.log(`${podRef(worker.pod)} container ${worker.spec.name} failed its ${worker.type} probe; it will be killed`);
    }
    this.states.set(id, state);
    this.events.probeResult(worker.pod, {
      containerName: worker.spec.name,
      containerID: `docker://${id}`,
      probe: worker.type,
      result,
      observedAt: new Date().toISOString(),
    });
    this.onChange();
    return !kills && !(worker.type === 'startup' && result === 'success');
  }
}
